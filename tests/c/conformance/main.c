/*
 * dat_conformance - DAT 1.2 (uDAPL) conformance suite for libdat; built with -DDCT_DAT2 it is
 * dat2_conformance, the same cases on the DAT 2.0 face (libdat2.so.2) plus the 2.0-only ones.
 *
 *   dat_conformance -P <ia_name> [-v] [-k <filter>]... [-l] [-n] [-t <secs>]
 *
 *   -P  IA name to open (e.g. "shm")
 *   -v  verbose: print progress of each case on stderr
 *   -k  run only cases whose name contains <filter> (may be repeated; any match runs)
 *   -l  list case names and exit
 *   -n  no fork: run every case in this process (debugging; a crash stops the suite)
 *   -t  default per-case watchdog in seconds (default 30)
 *
 * Two-host mode:
 *   --role server|client   run only the e2e cases, and of each pair case only this side (no
 *                          fork of a peer), in table order; case i uses the connection
 *                          qualifiers 30000 + 10 * i + k, so both hosts agree without talking.
 *                          Before each case the client waits (up to 60 s) until the server's
 *                          side is listening; cases that need both processes on one host are
 *                          skipped with a reason.  The other (non-e2e) cases are not run.
 *   --peer <IPv4>          client: the server host's address (server: accepted, unused)
 *
 * Output: one line per case ("PASS name", "FAIL name: reason", "SKIP name: reason") and a
 * final line "N passed, M failed[, K skipped] (DAT x.y face, IA <ia_name>)".  Exit status 1 if any
 * case failed.
 */
#include "dct.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

char *g_ia_name = "shm";
int g_verbose = 0;
unsigned g_tscale = 1;
int g_role = ROLE_NONE;
struct in_addr g_peer_addr;
int g_case_index = -1;
static char reason_local[T_REASON_MAX];
char *t_reason = reason_local;

static tres t_set(tres r, const char *fmt, va_list ap)
{
    vsnprintf(t_reason, T_REASON_MAX, fmt, ap);
    /* keep it one line */
    for (char *p = t_reason; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return r;
}

tres t_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tres r = t_set(T_FAIL, fmt, ap);
    va_end(ap);
    return r;
}

tres t_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tres r = t_set(T_SKIP, fmt, ap);
    va_end(ap);
    return r;
}

void vlog(const char *fmt, ...)
{
    if (!g_verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "    [%d] ", (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *rs(DAT_RETURN r)
{
    static char bufs[8][160];
    static int idx;
    char *b = bufs[idx++ & 7];
    const char *maj = NULL, *min = NULL;
    if (dat_strerror(r, &maj, &min) != DAT_SUCCESS || maj == NULL)
        maj = "?";
    if (min == NULL)
        min = "";
    snprintf(b, sizeof bufs[0], "0x%08x (%s%s%s)", (unsigned)r, maj, *min ? "/" : "", min);
    return b;
}

const char *subname(unsigned sub)
{
    static char bufs[4][64];
    static int idx;
    if (sub == ANYSUB)
        return "*";
    const char *maj = NULL, *min = NULL;
    if (dat_strerror(MKERR(DAT_INVALID_PARAMETER, sub), &maj, &min) == DAT_SUCCESS && min && *min)
        return min;
    char *b = bufs[idx++ & 3];
    snprintf(b, sizeof bufs[0], "0x%x", sub);
    return b;
}

const char *subs_str(const unsigned *subs)
{
    static char b[2][400];
    static int idx;
    char *o = b[idx++ & 1];
    o[0] = 0;
    for (int i = 0; subs[i] != ENDSUB; i++) {
        if (i)
            strncat(o, " or ", 399 - strlen(o));
        strncat(o, subname(subs[i]), 399 - strlen(o));
    }
    return o;
}

/* DAT_NOT_IMPLEMENTED, or DAT_MODEL_NOT_SUPPORTED (the provider's device lacks the feature,
 * e.g. soft-iWARP has no memory windows): the case is skipped, not failed. */
int is_not_impl(DAT_RETURN r)
{
    return (r & DAT_CLASS_ERROR) && (DAT_GET_TYPE(r) == DAT_GET_TYPE(DAT_NOT_IMPLEMENTED) ||
                                     DAT_GET_TYPE(r) == DAT_MODEL_NOT_SUPPORTED);
}

/* DAT_CONFORMANCE_XFAIL="case,case,...": known deviations of a device (each documented where the
 * list is set); such a case that fails is reported as XFAIL and counted as skipped. */
static int expected_failure(const char *name)
{
    const char *l = getenv("DAT_CONFORMANCE_XFAIL");
    size_t n = strlen(name);
    while (l && *l) {
        const char *e = strchr(l, ',');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        if (len == n && strncmp(l, name, n) == 0)
            return 1;
        l = e ? e + 1 : NULL;
    }
    return 0;
}

int match_err(DAT_RETURN r, DAT_UINT32 t, const unsigned *subs)
{
    if ((r & DAT_CLASS_ERROR) == 0)
        return 0;
    if (DAT_GET_TYPE(r) != DAT_GET_TYPE(t))
        return 0;
    for (int i = 0; subs[i] != ENDSUB; i++)
        if (subs[i] == ANYSUB || subs[i] == DAT_GET_SUBTYPE(r))
            return 1;
    return 0;
}

int make_bad_handles(struct badh *out, DAT_HANDLE wrong_type, DAT_HANDLE stale, int *stack_int)
{
    static unsigned char *heap;
    int n = 0;
    if (!heap) {
        heap = malloc(256);
        if (heap)
            memset(heap, 0xff, 256);
    }
    out[n].h = DAT_HANDLE_NULL;
    out[n++].what = "NULL";
    out[n].h = (DAT_HANDLE)(uintptr_t)0x1234;
    out[n++].what = "garbage (0x1234)";
    out[n].h = (DAT_HANDLE)stack_int;
    out[n++].what = "pointer-to-stack-int";
    if (heap) {
        out[n].h = (DAT_HANDLE)heap;
        out[n++].what = "pointer-to-heap-0xff";
    }
    out[n].h = (DAT_HANDLE)(uintptr_t)0xdeadbeefcafef00dULL;
    out[n++].what = "garbage (0xdeadbeefcafef00d)";
    out[n].h = (DAT_HANDLE)(uintptr_t)&make_bad_handles;
    out[n++].what = "pointer-to-text";
    if (wrong_type) {
        out[n].h = (DAT_HANDLE)((char *)wrong_type + sizeof(void *));
        out[n++].what = "one word into a real handle";
        out[n].h = wrong_type;
        out[n++].what = "wrong-type";
    }
    if (stale) {
        out[n].h = stale;
        out[n++].what = "freed (stale)";
        out[n].h = (DAT_HANDLE)((char *)stale + sizeof(void *));
        out[n++].what = "one word into a freed handle";
    }
    return n;
}

/* ------------------------------------------------------------------------------------ */

static const struct tcase *const tables[] = {api_cases, reg_cases, obj_cases, dto_cases, e2e_cases, dat2_cases,
                                             redirect_cases};

static int name_selected(const char *name, const char **filters, int nfilters)
{
    if (nfilters == 0)
        return 1;
    for (int i = 0; i < nfilters; i++)
        if (strstr(name, filters[i]))
            return 1;
    return 0;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s -P <ia_name> [-v] [-k <filter>]... [-l] [-n] [-t <secs>]\n"
            "       [--role server|client] [--peer <IPv4>]\n", argv0);
    exit(2);
}

static tres run_forked(const struct tcase *tc, unsigned timeout)
{
    /* shared page for the reason string, so grandchildren may not hold any pipe */
    char *shared = mmap(NULL, T_REASON_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                        -1, 0);
    if (shared == MAP_FAILED) {
        snprintf(reason_local, sizeof reason_local, "mmap: %s", strerror(errno));
        return T_FAIL;
    }
    shared[0] = 0;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(reason_local, sizeof reason_local, "fork: %s", strerror(errno));
        munmap(shared, T_REASON_MAX);
        return T_FAIL;
    }
    if (pid == 0) {
        setpgid(0, 0);
        t_reason = shared;
        signal(SIGALRM, SIG_DFL);
        alarm(timeout);
        tres r = tc->fn();
        alarm(0);
        fflush(stdout);
        fflush(stderr);
        exit((int)r);
    }
    setpgid(pid, pid);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    /* kill any peer processes the case left behind */
    kill(-pid, SIGKILL);
    tres r;
    if (WIFEXITED(st)) {
        int code = WEXITSTATUS(st);
        if (code == T_PASS) {
            r = T_PASS;
        } else if (code == T_SKIP) {
            r = T_SKIP;
            snprintf(reason_local, sizeof reason_local, "%s", shared);
        } else if (code == T_FAIL) {
            r = T_FAIL;
            snprintf(reason_local, sizeof reason_local, "%s",
                     shared[0] ? shared : "failed (no reason; valgrind error exit?)");
        } else {
            r = T_FAIL;
            snprintf(reason_local, sizeof reason_local, "case process exited with status %d%s%s",
                     code, shared[0] ? ": " : "", shared);
        }
    } else if (WIFSIGNALED(st)) {
        r = T_FAIL;
        if (WTERMSIG(st) == SIGALRM)
            snprintf(reason_local, sizeof reason_local, "watchdog: no result after %u s (hang)%s%s",
                     timeout, shared[0] ? "; last reason: " : "", shared);
        else
            snprintf(reason_local, sizeof reason_local, "case process killed by signal %d (%s)",
                     WTERMSIG(st), strsignal(WTERMSIG(st)));
    } else {
        r = T_FAIL;
        snprintf(reason_local, sizeof reason_local, "unexpected wait status 0x%x", st);
    }
    munmap(shared, T_REASON_MAX);
    return r;
}

int main(int argc, char **argv)
{
    const char *filters[64];
    int nfilters = 0, list = 0, nofork = 0, opt;
    unsigned deftimeout = 30;

    setvbuf(stdout, NULL, _IOLBF, 0);
    static const struct option longopts[] = {
        {"role", required_argument, NULL, 'R'},
        {"peer", required_argument, NULL, 'A'},
        {NULL, 0, NULL, 0},
    };
    const char *peer = NULL;
    while ((opt = getopt_long(argc, argv, "P:vk:lnt:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'R':
            if (strcmp(optarg, "server") == 0)
                g_role = ROLE_SERVER;
            else if (strcmp(optarg, "client") == 0)
                g_role = ROLE_CLIENT;
            else
                usage(argv[0]);
            break;
        case 'A':
            peer = optarg;
            break;
        case 'P':
            g_ia_name = optarg;
            break;
        case 'v':
            g_verbose = 1;
            break;
        case 'k':
            if (nfilters < 64)
                filters[nfilters++] = optarg;
            break;
        case 'l':
            list = 1;
            break;
        case 'n':
            nofork = 1;
            break;
        case 't':
            deftimeout = (unsigned)atoi(optarg);
            if (deftimeout == 0)
                deftimeout = 30;
            break;
        default:
            usage(argv[0]);
        }
    }
    if (optind != argc)
        usage(argv[0]);
    if (peer && inet_pton(AF_INET, peer, &g_peer_addr) != 1) {
        fprintf(stderr, "%s: --peer: not an IPv4 address: %s\n", argv[0], peer);
        exit(2);
    }
    if (g_role == ROLE_CLIENT && !peer) {
        fprintf(stderr, "%s: --role client needs --peer <server address>\n", argv[0]);
        exit(2);
    }
    const char *sc = getenv("DAT_CONFORMANCE_TIMEOUT_SCALE");
    if (sc && atoi(sc) > 0)
        g_tscale = (unsigned)atoi(sc);

    int npass = 0, nfail = 0, nskip = 0, nother = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        for (const struct tcase *tc = tables[t]; tc->name; tc++) {
            if (!name_selected(tc->name, filters, nfilters))
                continue;
            if (g_role != ROLE_NONE) {
                if (tables[t] != e2e_cases) {
                    nother++; /* single-host cases: not part of a two-host run */
                    continue;
                }
                g_case_index = (int)(tc - e2e_cases);
            }
            if (list) {
                printf("%s\n", tc->name);
                continue;
            }
            unsigned timeout = (tc->timeout ? tc->timeout : deftimeout) * g_tscale;
            if (g_role != ROLE_NONE)
                timeout += 150 * g_tscale; /* the other host may still be booting */
            reason_local[0] = 0;
            vlog("=== %s", tc->name);
            tres r;
            if (nofork) {
                t_reason = reason_local;
                alarm(timeout);
                r = tc->fn();
                alarm(0);
            } else {
                r = run_forked(tc, timeout);
            }
            switch (r) {
            case T_PASS:
                npass++;
                printf("PASS %s\n", tc->name);
                break;
            case T_SKIP:
                nskip++;
                printf("SKIP %s: %s\n", tc->name, reason_local);
                break;
            default:
                if (expected_failure(tc->name)) {
                    nskip++;
                    printf("XFAIL %s: %s\n", tc->name, reason_local);
                    break;
                }
                nfail++;
                printf("FAIL %s: %s\n", tc->name, reason_local);
                break;
            }
        }
    }
    if (list)
        return 0;
    if (nother)
        printf("(%s role: %d non-e2e cases not run; they run in single-host mode)\n",
               g_role == ROLE_SERVER ? "server" : "client", nother);
    if (nskip)
        printf("%d passed, %d failed, %d skipped (%s face, IA %s)\n", npass, nfail, nskip, DCT_FACE, g_ia_name);
    else
        printf("%d passed, %d failed (%s face, IA %s)\n", npass, nfail, DCT_FACE, g_ia_name);
    return nfail ? 1 : 0;
}
