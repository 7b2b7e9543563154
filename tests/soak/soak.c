/*
 * soak.c - a long randomized run of many DAT 2.0 processes against one another
 * (<dat2/udat.h>, libdat2.so.2), with every completion and every byte checked.
 *
 *   soak [-P ia] [-h address] [-n processes] [-d seconds] [-s seed] [-q base_qual]
 *        [-w wait_seconds] [-k kill_every_seconds] [-p pace_us] [-W warmup_seconds]
 *
 * A supervisor (this process, which never calls DAT) forks N workers and respawns any that
 * die. Each worker has two threads on two IAs of its own:
 *   - a passive thread: a PSP on qualifier base+index, accepting up to 2N+2 connections on
 *     one EVD (DTO, connection and CR events), echoing checked replies, serving RDMA into a
 *     region per connection, and now and then closing its IA with DAT_CLOSE_ABRUPT_FLAG under
 *     its live connections (then opening it again);
 *   - an active thread: connects to a random other worker and runs a random mix of steps on
 *     the connection: bursts of sends (each answered), RDMA writes verified by the passive
 *     side, RDMA reads checked here, graceful and abrupt disconnects, and dat_ia_close with
 *     DAT_CLOSE_ABRUPT_FLAG with work outstanding.
 * The supervisor kill -9s a random worker now and then (workers 0 .. N/4-1 are spared, so
 * that some processes live the whole run for the resource trend below).
 *
 * Checked:
 *   - every completion arrives exactly once and in posting order per queue (cookies carry
 *     the connection tag and a per-queue sequence number);
 *   - every message carries (connection id, sequence number) in order and a payload derived
 *     from them; every RDMA write is verified by the target, every RDMA read against what was
 *     written;
 *   - a connection ends only when this side ended it, or when the peer was killed, closed its
 *     IA abruptly or disconnected (the supervisor and the workers bump the peer's "mark" in
 *     shared memory before doing so); a DTO error other than FLUSHED needs the same excuse;
 *   - after a connection ends, every outstanding operation completes (FLUSHED or done) within
 *     the wait bound;
 *   - no wait hangs: every dat_evd_wait is bounded (-w, default 30 s); a thread that makes no
 *     progress for longer (a call that does not return) is reported by the supervisor;
 *   - file descriptors, threads and RSS of each process that lived long enough stay flat
 *     after the warm-up: the minimum over the first window after warm-up against the minimum
 *     over the last window (margins below); each worker first fills the library's quarantine
 *     of freed handles (fill_handle_quarantine), whose RSS is bounded and not a leak.
 * Prints the seed first, a line per failure, and a summary table; exit status 0 when nothing
 * failed. The seed fixes every random choice (the kill schedule, each worker generation's
 * steps); what the calls return depends on timing, so two runs of one seed make the same
 * choices but need not meet the same events.
 */
#define _GNU_SOURCE
#include <dat2/udat.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_WORKERS 32
#define MAX_SAMPLES 4096
#define RECV_DEPTH 16
#define QDEPTH 32
#define WINDOW 8
#define MSG_MAX 4096
#define RDMA_SIZE 65536
#define PD_MAGIC 0x50414b53u /* "SKAP" */

/* resource margins: growth of the windowed minimum beyond these fails the run */
#define FD_MARGIN 8
#define THREAD_MARGIN 2
#define RSS_MARGIN_KB 8192
#define RSS_MARGIN_PCT 25

/* ------------------------------------------------------------------ shared state */

struct sample {
    int32_t fds, threads;
    int64_t rss_kb;
};

struct wstate {
    /* the worker's mark: bumped before anything that ends its peers' connections */
    _Atomic uint64_t deaths, passive_epoch, active_epoch;
    _Atomic int ready;       /* its PSP listens */
    _Atomic int active_done; /* its active thread finished (stop phase 1) */
    _Atomic uint64_t beat_active, beat_passive; /* monotonic ms of each thread's last progress */
    _Atomic uint64_t connects, connect_fail, rejects, msgs, bytes, rdma_writes, rdma_reads;
    _Atomic uint64_t ia_abrupt_active, ia_abrupt_passive, ep_abrupt, ends_seen, flushed, errors, async;
    _Atomic uint64_t rejects_sent; /* connection requests its passive side rejected (no slot) */
    pid_t pid;
    uint32_t gen;
    uint64_t born_ms;
    _Atomic int nsamples;
    struct sample s[MAX_SAMPLES];
};

struct shared {
    _Atomic int stop; /* 1: active threads finish, 2: passive threads finish */
    _Atomic int refusal_told; /* refused_report ran */
    _Atomic int kernel_told;  /* kernel_report calls */
    uint64_t seed;
    int n;
    struct wstate w[MAX_WORKERS];
};

static struct shared *sh;

/* ------------------------------------------------------------------ configuration */

static char *ia_name = "shm";
static const char *host = "127.0.0.1";
static int nworkers = 8;
static int duration = 3600;
static uint64_t seed;
static unsigned base_qual; /* -q; by default one of 512 ranges picked by the pid, so that runs side by side do not meet */
static int wait_s = 30;
static int kill_every = 15;
static int pace_us = 4000;
static int warmup_s = -1;
static int sample_every = 1;

static struct sockaddr_in server_addr;

/* ------------------------------------------------------------------ helpers */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct rng {
    uint64_t s;
};

static uint64_t next(struct rng *r)
{
    r->s += 0x9e3779b97f4a7c15ull;
    return mix(r->s);
}

/* uniform in [lo, hi] */
static uint64_t range(struct rng *r, uint64_t lo, uint64_t hi)
{
    return lo + next(r) % (hi - lo + 1);
}

/* The byte at position p of the pattern of `key`. */
static unsigned char pat(uint64_t key, size_t p)
{
    return (unsigned char) (mix(key + (p >> 3)) >> ((p & 7) * 8));
}

static void fill(unsigned char *b, size_t off, size_t len, uint64_t key)
{
    for (size_t p = off; p < off + len; p++)
        b[p] = pat(key, p);
}

/* The first position in [off, off+len) that differs from the pattern, or -1. */
static long check_pat(const unsigned char *b, size_t off, size_t len, uint64_t key)
{
    for (size_t p = off; p < off + len; p++)
        if (b[p] != pat(key, p))
            return (long) p;
    return -1;
}

static void backtraces(pid_t p);
static void refused_report(int peer);
static void kernel_report(void);

static int self = -1;
static uint32_t my_gen;
static const char *thread_role = "supervisor";
static __thread const char *role_tls;

static void say(const char *fmt, ...)
{
    char line[1536];
    va_list ap;
    int k = snprintf(line, sizeof line, "soak: ");
    if (self >= 0)
        k += snprintf(line + k, sizeof line - (size_t) k, "worker %d gen %u %s: ", self, my_gen,
                      role_tls ? role_tls : thread_role);
    va_start(ap, fmt);
    vsnprintf(line + k, sizeof line - (size_t) k, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}

/* A failed check in a worker: counted, told, and the worker exits (its peers' connections
 * to it then end, which its mark excuses). */
static _Noreturn void die(int code, const char *fmt, ...)
{
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (self >= 0) {
        atomic_fetch_add(&sh->w[self].deaths, 1);
        atomic_store(&sh->w[self].ready, 0);
        atomic_fetch_add(&sh->w[self].errors, 1);
    }
    say("FAIL %s", msg);
    fflush(stderr);
    if (code == 3) {
        backtraces(getpid()); /* a hang: where the library's threads are */
        /* and TCP sockets holding data nobody read (an iWARP device's, in a guest) */
        if (system("ss -tn 2>/dev/null | awk 'NR > 1 && $2 > 0' | sed 's/^/  ss, unread data: /' >&2") != 0)
            say("ss failed");
    }
    _exit(code);
}

static void check_ok(DAT_RETURN r, const char *what)
{
    if (r != DAT_SUCCESS) {
        const char *major = "", *minor = "";
        dat_strerror(r, &major, &minor);
        die(1, "%s: 0x%08x %s %s", what, (unsigned) r, major, minor);
    }
}
#define OK(call) check_ok((call), #call)

static const char *status_name(int s)
{
    static const char *names[] = {"SUCCESS", "FLUSHED", "LOCAL_LENGTH", "LOCAL_EP", "LOCAL_PROTECTION",
                                  "BAD_RESPONSE", "REMOTE_ACCESS", "REMOTE_RESPONDER", "TRANSPORT",
                                  "RECEIVER_NOT_READY", "PARTIAL_PACKET", "RMR_BIND", "LOCAL_MM_ERROR"};
    return s >= 0 && s < (int) (sizeof names / sizeof names[0]) ? names[s] : "?";
}

static const char *event_name(DAT_EVENT_NUMBER e)
{
    switch (e) {
    case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
    case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
    case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
    case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: return "ACCEPT_COMPLETION_ERROR";
    case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
    case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
    case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
    case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
    case DAT_DTO_COMPLETION_EVENT: return "DTO_COMPLETION";
    case DAT_CONNECTION_REQUEST_EVENT: return "CONNECTION_REQUEST";
    default: return "other";
    }
}

/* A peer's mark: changes whenever it did (or had done to it) something that may end its
 * connections without a graceful disconnect. */
static uint64_t passive_mark(int w)
{
    return atomic_load(&sh->w[w].deaths) + atomic_load(&sh->w[w].passive_epoch);
}

static uint64_t active_mark(int w)
{
    return atomic_load(&sh->w[w].deaths) + atomic_load(&sh->w[w].active_epoch);
}

/* ------------------------------------------------------------------ wire format */

/* The client speaks first (OPEN), as iWARP requires of a connection's initiator: siw fails a
 * connection whose responder sends before the initiator's first message arrives. The server
 * answers OPEN with HELLO, naming its RDMA region, and every DATA or VERIFY with a REPLY. */
enum { M_HELLO = 1, M_DATA, M_VERIFY, M_REPLY, M_OPEN };

struct hdr {
    uint64_t conn_id;
    uint64_t seq;
    uint32_t type;
    uint32_t len; /* whole message, header included */
    uint32_t off, rlen; /* VERIFY: range written; HELLO: rlen = region size */
    uint64_t key;       /* VERIFY: pattern key of the write */
    uint64_t rva;       /* HELLO: the region's address */
    uint32_t rctx;      /* HELLO: its RMR context */
    uint32_t pad;
};

struct cpd { /* connect private data */
    uint32_t magic, client;
    uint64_t conn_id;
    uint64_t mark; /* the client's own mark when it connected */
};

static uint64_t payload_key(uint64_t conn_id, uint64_t seq, int from_server)
{
    return mix(conn_id * 0x100000001b3ull ^ seq ^ (from_server ? 0x5e5e5e5e00000000ull : 0));
}

/* ------------------------------------------------------------------ per-connection tracking */

/* cookie: tag (20 bits) | queue (4 bits) | sequence (40 bits) */
enum { Q_RECV = 1, Q_REQ = 2 };
enum { K_SEND = 1, K_WRITE, K_READ };

static DAT_DTO_COOKIE mk_cookie(uint32_t tag, int q, uint64_t seq)
{
    DAT_DTO_COOKIE c;
    c.as_64 = ((uint64_t) (tag & 0xfffff) << 44) | ((uint64_t) q << 40) | (seq & 0xffffffffffull);
    return c;
}

struct req_info {
    int kind;
    uint32_t len, off;
    uint64_t key;
};

struct track {
    uint32_t tag;
    uint64_t conn_id;
    int peer;            /* worker index of the other side */
    uint64_t peer_mark;  /* its mark when the connection began */
    uint64_t req_posted, req_done, recv_posted, recv_done;
    uint64_t tx_seq, rx_seq; /* message sequence numbers */
    struct req_info req[QDEPTH];
    int established, ended, self_end, flushing, bad_status;
    DAT_EVENT_NUMBER end_event;
    uint64_t end_ms;
    /* the last events of the connection, told when a check fails: queue << 60 | status << 48 | seq,
     * connection events as 0xc << 60 | event number */
    uint64_t hist[24];
    unsigned nhist;
};

static void note(struct track *t, uint64_t v)
{
    t->hist[t->nhist++ % 24] = v;
}

/* The connection's last events, for a failure report. */
static const char *history(const struct track *t)
{
    static char buf[24 * 24];
    size_t k = 0;
    unsigned from = t->nhist > 24 ? t->nhist - 24 : 0;
    buf[0] = 0;
    for (unsigned i = from; i < t->nhist && k < sizeof buf - 32; i++) {
        uint64_t v = t->hist[i % 24];
        if (v >> 60 == 0xc)
            k += (size_t) snprintf(buf + k, sizeof buf - k, " %s", event_name((DAT_EVENT_NUMBER) (v & 0xffffff)));
        else
            k += (size_t) snprintf(buf + k, sizeof buf - k, " %s%" PRIu64 ":%s", v >> 60 == Q_RECV ? "r" : "q",
                                   (uint64_t) (v & 0xffffffffffull), status_name((int) ((v >> 48) & 0xfff)));
    }
    return buf;
}

static uint32_t cookie_tag(DAT_DTO_COOKIE c)
{
    return (uint32_t) (c.as_64 >> 44);
}

/* Tags of EPs freed before their connection was established, with work posted: a completion
 * of theirs that comes back after all is let pass (not counted); any other unknown tag fails. */
#define STALE 16
struct stale {
    uint32_t tag[STALE];
    unsigned next;
};

static void stale_add(struct stale *st, uint32_t tag)
{
    st->tag[st->next++ % STALE] = tag | 0x80000000u;
}

static int stale_has(const struct stale *st, uint32_t tag)
{
    for (int i = 0; i < STALE; i++)
        if (st->tag[i] == (tag | 0x80000000u))
            return 1;
    return 0;
}

static int outstanding(const struct track *t)
{
    return t->req_posted != t->req_done || t->recv_posted != t->recv_done;
}

/* Whether the connection's end (or error) is excused: we ended it, or the peer's mark moved. */
static int excused(const struct track *t, int passive_side)
{
    if (t->self_end)
        return 1;
    return (passive_side ? active_mark(t->peer) : passive_mark(t->peer)) != t->peer_mark;
}

/* The bookkeeping of one DTO completion of `t`: order, exactly once, status. Returns the
 * request info for a request completion (NULL for a receive) and sets *q. */
static struct req_info *account(struct track *t, const DAT_DTO_COMPLETION_EVENT_DATA *d, int *q, int passive_side)
{
    uint64_t c = d->user_cookie.as_64;
    uint64_t seq = c & 0xffffffffffull;
    *q = (int) ((c >> 40) & 0xf);
    uint64_t *done = *q == Q_RECV ? &t->recv_done : &t->req_done;
    note(t, ((uint64_t) *q << 60) | ((uint64_t) (d->status & 0xfff) << 48) | seq);
    uint64_t posted = *q == Q_RECV ? t->recv_posted : t->req_posted;
    if ((*q != Q_RECV && *q != Q_REQ) || seq != (*done & 0xffffffffffull) || *done >= posted)
        die(1, "connection %#" PRIx64 ": completion %s of queue %d seq %" PRIu64 " out of order or duplicate "
               "(expected seq %" PRIu64 ", %" PRIu64 " posted); last events:%s",
            t->conn_id, status_name(d->status), *q, seq, *done, posted, history(t));
    (*done)++;
    if (d->status == DAT_DTO_ERR_FLUSHED) {
        t->flushing = 1;
        atomic_fetch_add(&sh->w[self].flushed, 1);
    } else if (d->status != DAT_DTO_SUCCESS) {
        if (!excused(t, passive_side)) {
            kernel_report();
            die(1, "connection %#" PRIx64 " (peer %d alive): completion status %s on queue %d seq %" PRIu64
                   "; last events:%s",
                t->conn_id, t->peer, status_name(d->status), *q, seq, history(t));
        }
        t->bad_status = 1;
    }
    return *q == Q_REQ ? &t->req[seq % QDEPTH] : NULL;
}

static void connection_ended(struct track *t, DAT_EVENT_NUMBER e, int passive_side)
{
    if (t->ended)
        die(1, "connection %#" PRIx64 ": a second end event %s after %s", t->conn_id, event_name(e),
            event_name(t->end_event));
    t->ended = 1;
    t->end_event = e;
    t->end_ms = now_ms();
    note(t, (0xcull << 60) | (uint64_t) e);
    atomic_fetch_add(&sh->w[self].ends_seen, 1);
    /* the passive side is told of graceful disconnects as DISCONNECTED: nothing to excuse */
    if (passive_side && e == DAT_CONNECTION_EVENT_DISCONNECTED)
        return;
    if (!excused(t, passive_side))
        die(1, "connection %#" PRIx64 " to worker %d ended (%s) though neither side ended it", t->conn_id, t->peer,
            event_name(e));
}

/* Checks a received message: header, order, payload. */
static void check_msg(struct track *t, const unsigned char *b, DAT_SEG_LENGTH got, int from_server,
                      struct hdr *out)
{
    struct hdr h;
    if (got < sizeof h)
        die(1, "connection %#" PRIx64 ": message of %u bytes", t->conn_id, (unsigned) got);
    memcpy(&h, b, sizeof h);
    if (h.conn_id != t->conn_id || h.seq != t->rx_seq || h.len != got)
        die(1, "connection %#" PRIx64 ": message conn %#" PRIx64 " seq %" PRIu64 " len %u, expected seq %" PRIu64
               " len %u",
            t->conn_id, h.conn_id, h.seq, h.len, t->rx_seq, (unsigned) got);
    long bad = check_pat(b, sizeof h, got - sizeof h, payload_key(h.conn_id, h.seq, from_server));
    if (bad >= 0)
        die(1, "connection %#" PRIx64 ": message seq %" PRIu64 " payload differs at byte %ld", t->conn_id, h.seq,
            bad);
    t->rx_seq++;
    atomic_fetch_add(&sh->w[self].msgs, 1);
    atomic_fetch_add(&sh->w[self].bytes, got);
    *out = h;
}

/* Builds a message of `len` bytes in `b`. */
static void build_msg(struct track *t, unsigned char *b, uint32_t len, uint32_t type, int from_server,
                      const struct hdr *extra)
{
    struct hdr h;
    memset(&h, 0, sizeof h);
    if (extra)
        h = *extra;
    h.conn_id = t->conn_id;
    h.seq = t->tx_seq++;
    h.type = type;
    h.len = len;
    memcpy(b, &h, sizeof h);
    fill(b, sizeof h, len - sizeof h, payload_key(h.conn_id, h.seq, from_server));
}

static DAT_EP_ATTR ep_attr(void)
{
    DAT_EP_ATTR a;
    memset(&a, 0, sizeof a);
    a.service_type = DAT_SERVICE_TYPE_RC;
    a.max_message_size = MSG_MAX;
    a.max_rdma_size = RDMA_SIZE;
    a.qos = DAT_QOS_BEST_EFFORT;
    a.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    a.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    a.max_recv_dtos = RECV_DEPTH;
    a.max_request_dtos = QDEPTH;
    a.max_recv_iov = 1;
    a.max_request_iov = 1;
    a.max_rdma_read_in = 4;
    a.max_rdma_read_out = 4;
    a.max_rdma_read_iov = 1;
    a.max_rdma_write_iov = 1;
    return a;
}

static void drain_async(DAT_EVD_HANDLE async)
{
    static __thread unsigned told;
    DAT_EVENT ev;
    while (dat_evd_dequeue(async, &ev) == DAT_SUCCESS) {
        atomic_fetch_add(&sh->w[self].async, 1);
        /* counted, not failed (a peer's abrupt end may raise one); the first few are told */
        if (told++ < 8)
            say("async event %s (%#x)", event_name(ev.event_number), (unsigned) ev.event_number);
    }
}

/* ------------------------------------------------------------------ resource samples */

static void sample_resources(void)
{
    struct wstate *w = &sh->w[self];
    struct sample s = {0, 0, 0};
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (e->d_name[0] != '.')
                s.fds++;
        closedir(d);
        s.fds--; /* the directory's own descriptor */
    }
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "Threads:", 8))
                s.threads = atoi(line + 8);
            else if (!strncmp(line, "VmRSS:", 6))
                s.rss_kb = atoll(line + 6);
        }
        fclose(f);
    }
    int k = atomic_load(&w->nsamples);
    if (k < MAX_SAMPLES) {
        w->s[k] = s;
        atomic_store(&w->nsamples, k + 1);
    }
}

/* ------------------------------------------------------------------ passive side */

struct pslot {
    int used;
    DAT_EP_HANDLE ep;
    struct track t;
    unsigned char *mem; /* receive buffers | send buffers | RDMA region */
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lctx;
    DAT_RMR_CONTEXT rctx;
    uint32_t serial;
    int hello_due; /* OPEN arrived before ESTABLISHED: HELLO goes with ESTABLISHED */
    uint64_t accept_ms; /* when dat_cr_accept returned */
    uint64_t hello_seq; /* the HELLO's request number + 1 (0: not posted yet) */
    DAT_RETURN hello_ret; /* what dat_ep_post_send answered for it */
};

#define SLOT_RECV(s, k) ((s)->mem + (size_t) (k) * MSG_MAX)
#define SLOT_SEND(s, k) ((s)->mem + (size_t) (RECV_DEPTH + (k)) * MSG_MAX)
#define SLOT_REGION(s) ((s)->mem + (size_t) (RECV_DEPTH + QDEPTH) * MSG_MAX)
#define SLOT_BYTES ((size_t) (RECV_DEPTH + QDEPTH) * MSG_MAX + RDMA_SIZE)

struct passive {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async, evd;
    DAT_PZ_HANDLE pz;
    DAT_PSP_HANDLE psp;
    int nslots;
    struct pslot *slot;
    struct stale stale;
    struct rng rng;
};

static void lmr_over(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, void *p, size_t len, DAT_LMR_HANDLE *lmr,
                     DAT_LMR_CONTEXT *lctx, DAT_RMR_CONTEXT *rctx)
{
    DAT_REGION_DESCRIPTION region;
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    region.for_va = p;
    OK(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, len, pz, DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, lmr, lctx,
                      rctx, &reg_len, &reg_addr));
}

static void passive_open(struct passive *ps)
{
    struct wstate *w = &sh->w[self];
    DAT_RETURN r;
    ps->async = DAT_HANDLE_NULL;
    OK(dat_ia_open(ia_name, 64, &ps->async, &ps->ia));
    OK(dat_pz_create(ps->ia, &ps->pz));
    OK(dat_evd_create(ps->ia, ps->nslots * (RECV_DEPTH + QDEPTH + 4) + 64, DAT_HANDLE_NULL,
                      DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG | DAT_EVD_CR_FLAG, &ps->evd));
    for (int i = 0; i < ps->nslots; i++) {
        struct pslot *s = &ps->slot[i];
        s->used = 0;
        lmr_over(ps->ia, ps->pz, s->mem, SLOT_BYTES, &s->lmr, &s->lctx, &s->rctx);
    }
    /* a respawned worker's qualifier may still be held by its predecessor a moment */
    uint64_t t0 = now_ms();
    while ((r = dat_psp_create(ps->ia, base_qual + (unsigned) self, ps->evd, DAT_PSP_CONSUMER_FLAG, &ps->psp)) !=
           DAT_SUCCESS) {
        if (DAT_GET_TYPE(r) != DAT_CONN_QUAL_IN_USE || now_ms() - t0 > (uint64_t) wait_s * 1000)
            check_ok(r, "dat_psp_create");
        usleep(50000);
    }
    atomic_store(&w->ready, 1);
}

static void passive_post_recv(struct pslot *s)
{
    struct track *t = &s->t;
    DAT_LMR_TRIPLET iov = {(DAT_VADDR) (uintptr_t) SLOT_RECV(s, t->recv_posted % RECV_DEPTH), MSG_MAX, s->lctx};
    OK(dat_ep_post_recv(s->ep, 1, &iov, mk_cookie(t->tag, Q_RECV, t->recv_posted), DAT_COMPLETION_DEFAULT_FLAG));
    t->recv_posted++;
}

static DAT_RETURN passive_send(struct passive *ps, struct pslot *s, uint32_t type, const struct hdr *extra)
{
    struct track *t = &s->t;
    uint32_t len = type == M_HELLO ? sizeof(struct hdr) : (uint32_t) range(&ps->rng, sizeof(struct hdr), MSG_MAX);
    unsigned k = (unsigned) (t->req_posted % QDEPTH);
    if (t->req_posted - t->req_done >= QDEPTH)
        die(1, "connection %#" PRIx64 ": passive request queue full", t->conn_id);
    build_msg(t, SLOT_SEND(s, k), len, type, 1, extra);
    t->req[k] = (struct req_info){K_SEND, len, 0, 0};
    DAT_LMR_TRIPLET iov = {(DAT_VADDR) (uintptr_t) SLOT_SEND(s, k), len, s->lctx};
    DAT_RETURN r = dat_ep_post_send(s->ep, 1, &iov, mk_cookie(t->tag, Q_REQ, t->req_posted), DAT_COMPLETION_DEFAULT_FLAG);
    if (r != DAT_SUCCESS) {
        /* the connection may have ended under us; its end event is on its way */
        if (DAT_GET_TYPE(r) == DAT_INVALID_STATE)
            return r;
        check_ok(r, "dat_ep_post_send (passive)");
    }
    t->req_posted++;
    return r;
}

/* Answers the client's OPEN: the region's address, length and RMR context. */
static void passive_hello(struct passive *ps, struct pslot *s)
{
    struct hdr extra;
    memset(&extra, 0, sizeof extra);
    extra.rva = (uint64_t) (uintptr_t) SLOT_REGION(s);
    extra.rctx = s->rctx;
    extra.rlen = RDMA_SIZE;
    s->hello_seq = s->t.req_posted + 1;
    s->hello_ret = passive_send(ps, s, M_HELLO, &extra);
}

static struct pslot *slot_of_ep(struct passive *ps, DAT_EP_HANDLE ep)
{
    for (int i = 0; i < ps->nslots; i++)
        if (ps->slot[i].used && ps->slot[i].ep == ep)
            return &ps->slot[i];
    return NULL;
}

static void passive_cr(struct passive *ps, const DAT_CR_ARRIVAL_EVENT_DATA *cr)
{
    DAT_CR_PARAM p;
    struct cpd pd;
    OK(dat_cr_query(cr->cr_handle, DAT_CR_FIELD_ALL, &p));
    if (p.private_data_size < (DAT_COUNT) sizeof pd)
        die(1, "connection request with %d bytes of private data", (int) p.private_data_size);
    memcpy(&pd, p.private_data, sizeof pd);
    if (pd.magic != PD_MAGIC || pd.client >= (uint32_t) nworkers)
        die(1, "connection request with foreign private data");
    struct pslot *s = NULL;
    for (int i = 0; i < ps->nslots && !s; i++)
        if (!ps->slot[i].used)
            s = &ps->slot[i];
    if (!s) {
        atomic_fetch_add(&sh->w[self].rejects_sent, 1);
        OK(dat_cr_reject(cr->cr_handle, 0, NULL));
        return;
    }
    DAT_EP_ATTR a = ep_attr();
    OK(dat_ep_create(ps->ia, ps->pz, ps->evd, ps->evd, ps->evd, &a, &s->ep));
    memset(&s->t, 0, sizeof s->t);
    s->hello_due = 0;
    s->hello_seq = 0;
    s->hello_ret = DAT_SUCCESS;
    s->used = 1;
    s->serial++;
    s->t.tag = (uint32_t) ((s - ps->slot) << 12) | (s->serial & 0xfff);
    s->t.conn_id = pd.conn_id;
    s->t.peer = (int) pd.client;
    s->t.peer_mark = pd.mark;
    for (int i = 0; i < RECV_DEPTH; i++)
        passive_post_recv(s);
    DAT_RETURN r = dat_cr_accept(cr->cr_handle, s->ep, 0, NULL);
    if (r != DAT_SUCCESS) {
        /* the client may be gone already */
        if (!excused(&s->t, 1))
            check_ok(r, "dat_cr_accept");
        s->t.ended = 1;
        s->t.end_ms = now_ms();
    }
    s->accept_ms = now_ms();
}

static uint32_t slot_tag_index(uint32_t tag)
{
    return tag >> 12;
}

static void passive_dto(struct passive *ps, const DAT_DTO_COMPLETION_EVENT_DATA *d)
{
    uint32_t tag = cookie_tag(d->user_cookie);
    uint32_t i = slot_tag_index(tag);
    if (i >= (uint32_t) ps->nslots || !ps->slot[i].used || ps->slot[i].t.tag != tag) {
        if (stale_has(&ps->stale, tag))
            return;
        die(1, "completion (%s) with a cookie of no live connection (tag %#x)", status_name(d->status), tag);
    }
    struct pslot *s = &ps->slot[i];
    struct track *t = &s->t;
    if (d->ep_handle != s->ep)
        die(1, "completion names another EP than its cookie's connection");
    uint64_t seq = d->user_cookie.as_64 & 0xffffffffffull;
    int q;
    account(t, d, &q, 1);
    if (d->status != DAT_DTO_SUCCESS || q == Q_REQ)
        return;
    if (d->operation != DAT_DTO_RECEIVE)
        die(1, "receive completion with operation %d", (int) d->operation);
    struct hdr h;
    const unsigned char *b = SLOT_RECV(s, seq % RECV_DEPTH);
    check_msg(t, b, d->transfered_length, 0, &h);
    if (h.type == M_VERIFY) {
        if ((uint64_t) h.off + h.rlen > RDMA_SIZE)
            die(1, "connection %#" PRIx64 ": VERIFY of [%u, +%u) beyond the region", t->conn_id, h.off, h.rlen);
        long bad = check_pat(SLOT_REGION(s), h.off, h.rlen, h.key);
        if (bad >= 0)
            die(1, "connection %#" PRIx64 ": RDMA write of [%u, +%u) differs at byte %ld", t->conn_id, h.off,
                h.rlen, bad);
        atomic_fetch_add(&sh->w[self].bytes, h.rlen);
    } else if (h.type != M_DATA && h.type != M_OPEN) {
        die(1, "connection %#" PRIx64 ": message type %u from the client", t->conn_id, h.type);
    }
    if (t->ended || t->flushing)
        return;
    passive_post_recv(s);
    if (h.type == M_OPEN) {
        /* A receive may complete before the accepting side's ESTABLISHED (the EP cannot send yet). */
        if (t->established)
            passive_hello(ps, s);
        else
            s->hello_due = 1;
        return;
    }
    passive_send(ps, s, M_REPLY, NULL);
}

static void passive_conn(struct passive *ps, const DAT_EVENT *ev)
{
    struct pslot *s = slot_of_ep(ps, ev->event_data.connect_event_data.ep_handle);
    if (!s)
        die(1, "connection event %s for an EP of no slot", event_name(ev->event_number));
    if (ev->event_number == DAT_CONNECTION_EVENT_ESTABLISHED) {
        if (s->t.established || s->t.ended)
            die(1, "connection %#" PRIx64 ": ESTABLISHED twice or after its end", s->t.conn_id);
        s->t.established = 1;
        if (s->hello_due)
            passive_hello(ps, s);
        return;
    }
    if (ev->event_number == DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR && !s->t.established) {
        s->t.ended = 1;
        s->t.end_ms = now_ms();
        return;
    }
    connection_ended(&s->t, ev->event_number, 1);
}

/* Frees the EPs of ended connections once all their work came back; a connection whose work
 * does not come back within the bound is a hang. */
static void passive_reap(struct passive *ps)
{
    for (int i = 0; i < ps->nslots; i++) {
        struct pslot *s = &ps->slot[i];
        /* two thirds of the bound: told before the client's own wait for the HELLO gives up */
        if (s->used && !s->t.ended && now_ms() - s->accept_ms > (uint64_t) wait_s * 667) {
            const struct track *t = &s->t;
            if (!t->established)
                die(3, "HANG: connection %#" PRIx64 " accepted %d s ago and never ESTABLISHED (%" PRIu64
                       " receives done, OPEN %s,%s)",
                    t->conn_id, wait_s * 2 / 3, t->recv_done, s->hello_due ? "in" : "not in", history(t));
            if (s->hello_seq == 0 || s->hello_ret != DAT_SUCCESS || t->req_done < s->hello_seq)
                die(3, "HANG: connection %#" PRIx64 " accepted %d s ago: its HELLO %s (%" PRIu64 "/%" PRIu64
                       " requests, %" PRIu64 "/%" PRIu64 " receives done, %s)",
                    t->conn_id, wait_s * 2 / 3,
                    s->hello_seq == 0                ? "never posted"
                    : s->hello_ret != DAT_SUCCESS    ? "refused by dat_ep_post_send"
                                                     : "posted and not completed",
                    t->req_done, t->req_posted, t->recv_done, t->recv_posted, history(t));
        }
        if (!s->used || !s->t.ended)
            continue;
        if (outstanding(&s->t) && s->t.established) {
            if (now_ms() - s->t.end_ms > (uint64_t) wait_s * 1000)
                die(3, "HANG: connection %#" PRIx64 " ended (%s) %d s ago with %" PRIu64 " requests and %" PRIu64
                       " receives never completed",
                    s->t.conn_id, event_name(s->t.end_event), wait_s, s->t.req_posted - s->t.req_done,
                    s->t.recv_posted - s->t.recv_done);
            continue;
        }
        if (outstanding(&s->t))
            stale_add(&ps->stale, s->t.tag);
        OK(dat_ep_free(s->ep));
        s->used = 0;
    }
}

static void passive_close(struct passive *ps, int abrupt)
{
    if (abrupt) {
        atomic_fetch_add(&sh->w[self].passive_epoch, 1);
        atomic_store(&sh->w[self].ready, 0);
        atomic_fetch_add(&sh->w[self].ia_abrupt_passive, 1);
        OK(dat_ia_close(ps->ia, DAT_CLOSE_ABRUPT_FLAG));
        return;
    }
    atomic_store(&sh->w[self].ready, 0);
    OK(dat_psp_free(ps->psp));
    for (int i = 0; i < ps->nslots; i++) {
        if (ps->slot[i].used)
            OK(dat_ep_free(ps->slot[i].ep));
        OK(dat_lmr_free(ps->slot[i].lmr));
    }
    OK(dat_evd_free(ps->evd));
    OK(dat_pz_free(ps->pz));
    OK(dat_ia_close(ps->ia, DAT_CLOSE_GRACEFUL_FLAG));
}

static void *passive_main(void *arg)
{
    struct passive *ps = arg;
    struct wstate *w = &sh->w[self];
    uint64_t last_sample = 0;
    int abrupt_every = duration / 3 > 90 ? 90 : duration / 3 + 1; /* seconds, on average */
    role_tls = "passive";
    passive_open(ps);
    for (;;) {
        DAT_EVENT ev;
        DAT_COUNT nmore;
        uint64_t t = now_ms();
        atomic_store(&w->beat_passive, t);
        if (t - last_sample >= (uint64_t) sample_every * 1000) {
            last_sample = t;
            if (atomic_load(&sh->stop) == 0) /* the steady state only, not the shutdown */
                sample_resources();
            drain_async(ps->async);
            /* now and then: close the IA abruptly under live connections */
            if (atomic_load(&sh->stop) == 0 && range(&ps->rng, 1, (uint64_t) abrupt_every) == 1) {
                passive_close(ps, 1);
                passive_open(ps);
                continue;
            }
        }
        passive_reap(ps);
        if (atomic_load(&sh->stop) >= 2)
            break;
        DAT_RETURN r = dat_evd_wait(ps->evd, 200000, 1, &ev, &nmore);
        if (DAT_GET_TYPE(r) == DAT_TIMEOUT_EXPIRED)
            continue;
        check_ok(r, "dat_evd_wait (passive)");
        switch (ev.event_number) {
        case DAT_CONNECTION_REQUEST_EVENT: passive_cr(ps, &ev.event_data.cr_arrival_event_data); break;
        case DAT_DTO_COMPLETION_EVENT: passive_dto(ps, &ev.event_data.dto_completion_event_data); break;
        default: passive_conn(ps, &ev); break;
        }
    }
    /* stop phase 2: no active side connects any more; ended connections are reaped above,
     * the rest are freed with the IA */
    passive_close(ps, 0);
    return NULL;
}

/* ------------------------------------------------------------------ active side */

#define A_RECV(a, k) ((a)->mem + (size_t) (k) * MSG_MAX)
#define A_SEND(a, k) ((a)->mem + (size_t) (RECV_DEPTH + (k)) * MSG_MAX)
#define A_SRC(a) ((a)->mem + (size_t) (RECV_DEPTH + QDEPTH) * MSG_MAX)
#define A_DST(a) (A_SRC(a) + RDMA_SIZE)
#define A_BYTES ((size_t) (RECV_DEPTH + QDEPTH) * MSG_MAX + 2 * RDMA_SIZE)

struct active {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async, evd;
    DAT_PZ_HANDLE pz;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lctx;
    unsigned char *mem;
    DAT_EP_HANDLE ep;
    struct track t;
    struct stale stale;
    uint32_t serial;
    uint64_t counter;
    DAT_RMR_TRIPLET remote;
    int have_remote;
    uint64_t replies_expected, replies_got;
    uint32_t w_off, w_len; /* the last RDMA write */
    uint64_t w_key, w_serial;
    struct rng rng;
};

static void active_open(struct active *a)
{
    DAT_RMR_CONTEXT rctx;
    a->async = DAT_HANDLE_NULL;
    OK(dat_ia_open(ia_name, 64, &a->async, &a->ia));
    OK(dat_pz_create(a->ia, &a->pz));
    OK(dat_evd_create(a->ia, RECV_DEPTH + QDEPTH + 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG,
                      &a->evd));
    lmr_over(a->ia, a->pz, a->mem, A_BYTES, &a->lmr, &a->lctx, &rctx);
    a->ep = DAT_HANDLE_NULL;
}

static void active_close(struct active *a)
{
    OK(dat_lmr_free(a->lmr));
    OK(dat_evd_free(a->evd));
    OK(dat_pz_free(a->pz));
    OK(dat_ia_close(a->ia, DAT_CLOSE_GRACEFUL_FLAG));
}

static void active_post_recv(struct active *a)
{
    struct track *t = &a->t;
    DAT_LMR_TRIPLET iov = {(DAT_VADDR) (uintptr_t) A_RECV(a, t->recv_posted % RECV_DEPTH), MSG_MAX, a->lctx};
    OK(dat_ep_post_recv(a->ep, 1, &iov, mk_cookie(t->tag, Q_RECV, t->recv_posted), DAT_COMPLETION_DEFAULT_FLAG));
    t->recv_posted++;
}

/* Posts a request; returns 0 when the connection is found ended (the post refused). */
static int active_post(struct active *a, int kind, uint32_t len, uint32_t off, uint64_t key, uint32_t type,
                       const struct hdr *extra)
{
    struct track *t = &a->t;
    unsigned k = (unsigned) (t->req_posted % QDEPTH);
    DAT_DTO_COOKIE c = mk_cookie(t->tag, Q_REQ, t->req_posted);
    DAT_RETURN r;
    if (t->req_posted - t->req_done >= QDEPTH)
        die(1, "active request queue full");
    t->req[k] = (struct req_info){kind, len, off, key};
    if (kind == K_SEND) {
        build_msg(t, A_SEND(a, k), len, type, 0, extra);
        DAT_LMR_TRIPLET iov = {(DAT_VADDR) (uintptr_t) A_SEND(a, k), len, a->lctx};
        r = dat_ep_post_send(a->ep, 1, &iov, c, DAT_COMPLETION_DEFAULT_FLAG);
    } else {
        DAT_RMR_TRIPLET rem = a->remote;
        rem.virtual_address += off;
        rem.segment_length = len;
        DAT_LMR_TRIPLET iov = {(DAT_VADDR) (uintptr_t) ((kind == K_WRITE ? A_SRC(a) : A_DST(a)) + off), len, a->lctx};
        r = kind == K_WRITE ? dat_ep_post_rdma_write(a->ep, 1, &iov, c, &rem, DAT_COMPLETION_DEFAULT_FLAG)
                            : dat_ep_post_rdma_read(a->ep, 1, &iov, c, &rem, DAT_COMPLETION_DEFAULT_FLAG);
    }
    if (r != DAT_SUCCESS) {
        if (DAT_GET_TYPE(r) == DAT_INVALID_STATE && (t->flushing || t->ended || excused(t, 0)))
            return 0;
        check_ok(r, kind == K_SEND ? "dat_ep_post_send" : kind == K_WRITE ? "dat_ep_post_rdma_write"
                                                                           : "dat_ep_post_rdma_read");
    }
    t->req_posted++;
    return 1;
}

/* An RDMA read's data differ from what the server holds: tells which bytes, whether they are
 * still the zeros the buffer was cleared to, and whether they come right a moment later (placed
 * after the completion was reported). */
static void read_differs(struct active *a, const struct req_info *ri, long bad)
{
    const unsigned char *b = A_DST(a);
    unsigned nbad = 0, nzero = 0;
    char got[3 * 48 + 1] = "", want[3 * 48 + 1] = "";
    for (size_t p = ri->off; p < (size_t) ri->off + ri->len; p++) {
        if (b[p] != pat(ri->key, p)) {
            nbad++;
            nzero += b[p] == 0;
        }
        if (p - ri->off < 48) {
            snprintf(got + 3 * (p - ri->off), 4, " %02x", b[p]);
            snprintf(want + 3 * (p - ri->off), 4, " %02x", pat(ri->key, p));
        }
    }
    usleep(200000);
    long later = check_pat(b, ri->off, ri->len, ri->key);
    die(1, "connection %#" PRIx64 ": RDMA read of [%u, +%u) differs at byte %ld (+%ld, at %#lx in its page): %u "
           "bytes differ, %u of them zero; 200 ms later %s; got%s; want%s",
        a->t.conn_id, ri->off, ri->len, bad, bad - (long) ri->off, (unsigned long) ((uintptr_t) (b + bad) & 4095),
        nbad, nzero,
        later < 0 ? "right" : "still wrong", got, want);
}

/* Handles one event of the active EVD. */
static void active_event(struct active *a, const DAT_EVENT *ev)
{
    struct track *t = &a->t;
    if (ev->event_number == DAT_DTO_COMPLETION_EVENT) {
        const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev->event_data.dto_completion_event_data;
        if (cookie_tag(d->user_cookie) != t->tag) {
            if (stale_has(&a->stale, cookie_tag(d->user_cookie)))
                return;
            die(1, "completion (%s) with a cookie of no live connection (tag %#x)", status_name(d->status),
                cookie_tag(d->user_cookie));
        }
        uint64_t seq = d->user_cookie.as_64 & 0xffffffffffull;
        int q;
        struct req_info *ri = account(t, d, &q, 0);
        if (d->status != DAT_DTO_SUCCESS)
            return;
        if (q == Q_RECV) {
            struct hdr h;
            check_msg(t, A_RECV(a, seq % RECV_DEPTH), d->transfered_length, 1, &h);
            if (h.type == M_HELLO) {
                if (a->have_remote || h.rlen != RDMA_SIZE)
                    die(1, "connection %#" PRIx64 ": unexpected HELLO", t->conn_id);
                a->remote.virtual_address = h.rva;
                a->remote.segment_length = h.rlen;
                a->remote.rmr_context = h.rctx;
                a->have_remote = 1;
            } else if (h.type == M_REPLY) {
                a->replies_got++;
            } else {
                die(1, "connection %#" PRIx64 ": message type %u from the server", t->conn_id, h.type);
            }
            if (!t->ended && !t->flushing)
                active_post_recv(a);
            return;
        }
        if (d->transfered_length != ri->len)
            die(1, "connection %#" PRIx64 ": request of %u bytes completed with %u", t->conn_id, ri->len,
                (unsigned) d->transfered_length);
        if (ri->kind == K_WRITE)
            atomic_fetch_add(&sh->w[self].rdma_writes, 1);
        if (ri->kind == K_READ) {
            long bad = check_pat(A_DST(a), ri->off, ri->len, ri->key);
            if (bad >= 0)
                read_differs(a, ri, bad);
            atomic_fetch_add(&sh->w[self].rdma_reads, 1);
            atomic_fetch_add(&sh->w[self].bytes, ri->len);
        }
        return;
    }
    const DAT_CONNECTION_EVENT_DATA *c = &ev->event_data.connect_event_data;
    if (c->ep_handle != a->ep)
        die(1, "connection event %s for another EP", event_name(ev->event_number));
    if (ev->event_number == DAT_CONNECTION_EVENT_ESTABLISHED) {
        if (t->established || t->ended)
            die(1, "connection %#" PRIx64 ": ESTABLISHED twice or after its end", t->conn_id);
        t->established = 1;
        return;
    }
    if (!t->established) {
        /* the connect failed: a peer being respawned, closing abruptly, or full */
        t->ended = 1;
        t->end_event = ev->event_number;
        return;
    }
    connection_ended(t, ev->event_number, 0);
}

/* Waits for events until `done(a)`; every wait is bounded. */
static void active_wait(struct active *a, int (*done)(struct active *), const char *what)
{
    while (!done(a)) {
        DAT_EVENT ev;
        DAT_COUNT nmore;
        DAT_RETURN r = dat_evd_wait(a->evd, (DAT_TIMEOUT) wait_s * 1000000u, 1, &ev, &nmore);
        if (DAT_GET_TYPE(r) == DAT_TIMEOUT_EXPIRED)
            die(3, "HANG: connection %#" PRIx64 " to worker %d: no event in %d s while waiting for %s "
                   "(%" PRIu64 "/%" PRIu64 " requests, %" PRIu64 "/%" PRIu64 " receives done, %s)",
                a->t.conn_id, a->t.peer, wait_s, what, a->t.req_done, a->t.req_posted, a->t.recv_done,
                a->t.recv_posted, a->t.ended ? event_name(a->t.end_event) : "connected");
        check_ok(r, "dat_evd_wait (active)");
        active_event(a, &ev);
        atomic_store(&sh->w[self].beat_active, now_ms());
    }
}

static int conn_decided(struct active *a)
{
    return a->t.established || a->t.ended;
}
static int hello_or_end(struct active *a)
{
    return a->have_remote || a->t.ended || a->t.flushing;
}
static int step_done(struct active *a)
{
    return a->t.ended || a->t.flushing ||
           (a->t.req_done == a->t.req_posted && a->replies_got >= a->replies_expected);
}
static int ended(struct active *a)
{
    return a->t.ended;
}
static int drained(struct active *a)
{
    return !outstanding(&a->t);
}

/* Connects to a random other worker; returns 1 when connected and the HELLO is in. */
static int active_connect(struct active *a)
{
    struct track *t = &a->t;
    int peer;
    do
        peer = (int) range(&a->rng, 0, (uint64_t) nworkers - 1);
    while (peer == self);
    int ready_before = atomic_load(&sh->w[peer].ready);
    uint64_t rejects_before = atomic_load(&sh->w[peer].rejects_sent);
    DAT_EP_ATTR at = ep_attr();
    OK(dat_ep_create(a->ia, a->pz, a->evd, a->evd, a->evd, &at, &a->ep));
    memset(t, 0, sizeof *t);
    a->serial++;
    t->tag = a->serial & 0xfffff;
    t->conn_id = ((uint64_t) self << 56) | ((uint64_t) (my_gen & 0xffffff) << 32) | ++a->counter;
    t->peer = peer;
    t->peer_mark = passive_mark(peer);
    a->have_remote = 0;
    a->replies_expected = a->replies_got = 0;
    a->w_len = 0;
    for (int i = 0; i < RECV_DEPTH; i++)
        active_post_recv(a);
    struct cpd pd = {PD_MAGIC, (uint32_t) self, t->conn_id, active_mark(self)};
    struct sockaddr_in sin = server_addr;
    /* the connect's own timeout (half the bound) ends it with an event before our wait gives up */
    OK(dat_ep_connect(a->ep, (DAT_IA_ADDRESS_PTR) &sin, base_qual + (unsigned) peer, (DAT_TIMEOUT) wait_s * 500000u,
                      sizeof pd, &pd, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
    active_wait(a, conn_decided, "the connection to be established or refused");
    if (!t->established) {
        int excuse = !ready_before || !atomic_load(&sh->w[peer].ready) || passive_mark(peer) != t->peer_mark;
        if (t->end_event == DAT_CONNECTION_EVENT_PEER_REJECTED &&
            atomic_load(&sh->w[peer].rejects_sent) != rejects_before)
            atomic_fetch_add(&sh->w[self].rejects, 1); /* it had no slot free */
        else if (excuse)
            atomic_fetch_add(&sh->w[self].connect_fail, 1);
        else {
            if (t->end_event == DAT_CONNECTION_EVENT_NON_PEER_REJECTED)
                refused_report(peer);
            die(1, "connect to worker %d failed (%s) though it listened throughout", peer, event_name(t->end_event));
        }
        if (outstanding(t))
            stale_add(&a->stale, t->tag);
        OK(dat_ep_free(a->ep));
        a->ep = DAT_HANDLE_NULL;
        return 0;
    }
    atomic_fetch_add(&sh->w[self].connects, 1);
    active_post(a, K_SEND, sizeof(struct hdr), 0, 0, M_OPEN, NULL);
    active_wait(a, hello_or_end, "the server's HELLO");
    return a->have_remote && !a->t.ended && !a->t.flushing;
}

/* After the connection ended (or failed): every outstanding operation must come back. */
static void active_finish(struct active *a)
{
    active_wait(a, ended, "the connection's end event");
    active_wait(a, drained, "the flush of outstanding work");
    OK(dat_ep_free(a->ep));
    a->ep = DAT_HANDLE_NULL;
    drain_async(a->async);
}

static void step_sends(struct active *a)
{
    int k = (int) range(&a->rng, 1, WINDOW);
    for (int i = 0; i < k; i++) {
        uint32_t len = (uint32_t) range(&a->rng, sizeof(struct hdr), MSG_MAX);
        if (!active_post(a, K_SEND, len, 0, 0, M_DATA, NULL))
            return;
        a->replies_expected++;
    }
    active_wait(a, step_done, "send completions and replies");
}

static void step_write(struct active *a)
{
    uint32_t len = (uint32_t) range(&a->rng, 1, RDMA_SIZE);
    uint32_t off = (uint32_t) range(&a->rng, 0, RDMA_SIZE - len);
    uint64_t key = mix(a->t.conn_id ^ (++a->w_serial << 20));
    fill(A_SRC(a), off, len, key);
    if (!active_post(a, K_WRITE, len, off, key, 0, NULL))
        return;
    struct hdr extra;
    memset(&extra, 0, sizeof extra);
    extra.off = off;
    extra.rlen = len;
    extra.key = key;
    if (!active_post(a, K_SEND, sizeof(struct hdr), 0, 0, M_VERIFY, &extra))
        return;
    a->replies_expected++;
    active_wait(a, step_done, "an RDMA write and its verification");
    if (!a->t.ended && !a->t.flushing) {
        a->w_off = off;
        a->w_len = len;
        a->w_key = key;
    }
}

static void step_read(struct active *a)
{
    if (a->w_len == 0)
        return step_write(a);
    uint32_t len = (uint32_t) range(&a->rng, 1, a->w_len);
    uint32_t off = a->w_off + (uint32_t) range(&a->rng, 0, a->w_len - len);
    memset(A_DST(a) + off, 0, len);
    if (!active_post(a, K_READ, len, off, a->w_key, 0, NULL))
        return;
    active_wait(a, step_done, "an RDMA read");
}

static void step_disconnect(struct active *a, int abrupt)
{
    if (abrupt) {
        atomic_fetch_add(&sh->w[self].active_epoch, 1);
        atomic_fetch_add(&sh->w[self].ep_abrupt, 1);
    }
    a->t.self_end = 1;
    DAT_RETURN r = dat_ep_disconnect(a->ep, abrupt ? DAT_CLOSE_ABRUPT_FLAG : DAT_CLOSE_GRACEFUL_FLAG);
    if (r != DAT_SUCCESS && !(a->t.ended || excused(&a->t, 0)))
        check_ok(r, "dat_ep_disconnect");
}

/* dat_ia_close(ABRUPT) with work posted and not waited for, then a fresh IA. */
static void step_ia_abrupt(struct active *a)
{
    int k = (int) range(&a->rng, 0, WINDOW);
    for (int i = 0; i < k; i++)
        if (!active_post(a, K_SEND, (uint32_t) range(&a->rng, sizeof(struct hdr), MSG_MAX), 0, 0, M_DATA, NULL))
            break;
    atomic_fetch_add(&sh->w[self].active_epoch, 1);
    atomic_fetch_add(&sh->w[self].ia_abrupt_active, 1);
    OK(dat_ia_close(a->ia, DAT_CLOSE_ABRUPT_FLAG));
    a->ep = DAT_HANDLE_NULL;
    active_open(a);
}

static void pace(struct active *a)
{
    if (pace_us > 0)
        usleep((useconds_t) range(&a->rng, 0, (uint64_t) pace_us));
}

static void active_run(struct active *a)
{
    role_tls = "active";
    active_open(a);
    while (atomic_load(&sh->stop) == 0) {
        atomic_store(&sh->w[self].beat_active, now_ms());
        pace(a);
        if (!active_connect(a)) {
            if (a->ep != DAT_HANDLE_NULL)
                active_finish(a);
            continue;
        }
        for (;;) {
            if (a->t.ended || a->t.flushing) {
                active_finish(a);
                break;
            }
            if (atomic_load(&sh->stop) != 0) {
                step_disconnect(a, 0);
                active_finish(a);
                break;
            }
            pace(a);
            uint64_t pick = range(&a->rng, 1, 100);
            if (pick <= 45)
                step_sends(a);
            else if (pick <= 70)
                step_write(a);
            else if (pick <= 90)
                step_read(a);
            else if (pick <= 97) {
                step_disconnect(a, 0);
                active_finish(a);
                break;
            } else if (pick <= 99) {
                step_disconnect(a, 1);
                active_finish(a);
                break;
            } else {
                step_ia_abrupt(a);
                break;
            }
        }
    }
    active_close(a);
}

/* Creates and frees enough objects to fill the library's quarantine of freed handles (a freed
 * handle's slot waits for 2^20 creations before reuse): the RSS it costs, about 41 MiB, grows
 * over a process's first million or so objects and then stays flat. Done first, so that the
 * RSS check after the warm-up sees any other growth. The objects are software-only EVDs, which
 * no provider is asked for (a PZ is a protection domain in the kernel on verbs: a million of
 * those would take minutes in an emulated guest). */
#define QUARANTINE_FILL 1250000
static void fill_handle_quarantine(void)
{
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
    OK(dat_ia_open(ia_name, 8, &async, &ia));
    for (int i = 0; i < QUARANTINE_FILL; i++) {
        DAT_EVD_HANDLE evd;
        OK(dat_evd_create(ia, 1, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, &evd));
        OK(dat_evd_free(evd));
    }
    OK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

static _Noreturn void worker_main(int idx, uint32_t gen)
{
    struct active a;
    struct passive ps;
    pthread_t pt;
    self = idx;
    my_gen = gen;
    thread_role = "";
    memset(&a, 0, sizeof a);
    memset(&ps, 0, sizeof ps);
    a.rng.s = mix(seed ^ mix(((uint64_t) idx << 32) | gen) ^ 1);
    ps.rng.s = mix(seed ^ mix(((uint64_t) idx << 32) | gen) ^ 2);
    ps.nslots = 2 * nworkers + 2;
    ps.slot = calloc((size_t) ps.nslots, sizeof *ps.slot);
    for (int i = 0; i < ps.nslots; i++)
        if (posix_memalign((void **) &ps.slot[i].mem, 4096, SLOT_BYTES))
            die(1, "out of memory");
    if (posix_memalign((void **) &a.mem, 4096, A_BYTES) || !ps.slot)
        die(1, "out of memory");
    memset(a.mem, 0, A_BYTES);
    for (int i = 0; i < ps.nslots; i++)
        memset(ps.slot[i].mem, 0, SLOT_BYTES);
    fill_handle_quarantine();
    if (pthread_create(&pt, NULL, passive_main, &ps))
        die(1, "pthread_create");
    active_run(&a);
    atomic_store(&sh->w[self].active_done, 1);
    pthread_join(pt, NULL);
    fflush(stderr);
    _exit(0);
}

/* ------------------------------------------------------------------ supervisor */

struct verdict {
    int idx;
    uint32_t gen;
    int life_s, evaluated;
    struct sample first, last, min1, min2;
    int ok;
    struct verdict *next;
};
static struct verdict *verdicts;
static int evaluated_ok = 1, too_short;

static struct sample window_min(const struct sample *s, int from, int to)
{
    struct sample m = s[from];
    for (int i = from + 1; i < to; i++) {
        if (s[i].fds < m.fds)
            m.fds = s[i].fds;
        if (s[i].threads < m.threads)
            m.threads = s[i].threads;
        if (s[i].rss_kb < m.rss_kb)
            m.rss_kb = s[i].rss_kb;
    }
    return m;
}

/* A generation ended: its resource trend, when it lived long enough after the warm-up. */
static void evaluate(int idx)
{
    struct wstate *w = &sh->w[idx];
    int n = atomic_load(&w->nsamples);
    int warm = warmup_s / sample_every, win = (warmup_s / 2 > 10 ? warmup_s / 2 : 10) / sample_every;
    struct verdict *v = calloc(1, sizeof *v);
    v->idx = idx;
    v->gen = w->gen;
    v->life_s = (int) ((now_ms() - w->born_ms) / 1000);
    if (n < warm + 2 * win) {
        too_short++;
        free(v);
        return;
    }
    v->evaluated = 1;
    v->first = w->s[warm];
    v->last = w->s[n - 1];
    v->min1 = window_min(w->s, warm, warm + win);
    v->min2 = window_min(w->s, n - win, n);
    int64_t rss_margin = v->min1.rss_kb * RSS_MARGIN_PCT / 100;
    if (rss_margin < RSS_MARGIN_KB)
        rss_margin = RSS_MARGIN_KB;
    v->ok = v->min2.fds <= v->min1.fds + FD_MARGIN && v->min2.threads <= v->min1.threads + THREAD_MARGIN &&
            v->min2.rss_kb <= v->min1.rss_kb + rss_margin;
    if (!v->ok) {
        evaluated_ok = 0;
        say("FAIL worker %d gen %u: resources grew after the warm-up: fds %d -> %d, threads %d -> %d, "
            "RSS %" PRId64 " -> %" PRId64 " KiB (window minima)",
            idx, v->gen, v->min1.fds, v->min2.fds, v->min1.threads, v->min2.threads, v->min1.rss_kb, v->min2.rss_kb);
    }
    v->next = verdicts;
    verdicts = v;
}

static uint32_t generations;

static void spawn(int idx)
{
    struct wstate *w = &sh->w[idx];
    w->gen = generations++;
    w->born_ms = now_ms();
    atomic_store(&w->nsamples, 0);
    atomic_store(&w->active_done, 0);
    atomic_store(&w->beat_active, now_ms());
    atomic_store(&w->beat_passive, now_ms());
    fflush(NULL);
    pid_t p = fork();
    if (p < 0) {
        perror("fork");
        exit(2);
    }
    if (p == 0)
        worker_main(idx, w->gen);
    w->pid = p;
}

static uint64_t total(size_t off)
{
    uint64_t s = 0;
    for (int i = 0; i < nworkers; i++)
        s += atomic_load((_Atomic uint64_t *) ((char *) &sh->w[i] + off));
    return s;
}
#define TOTAL(field) total(offsetof(struct wstate, field))

static int failures;
static uint64_t kills;

static int index_of_pid(pid_t p)
{
    for (int i = 0; i < nworkers; i++)
        if (sh->w[i].pid == p || sh->w[i].pid == -p)
            return i;
    return -1;
}

/* Reaps exited workers; `respawn` while the run goes on. */
static void reap(int respawn, int *alive)
{
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
        int i = index_of_pid(p);
        if (i < 0)
            continue;
        (*alive)--;
        int killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && sh->w[i].pid == -p;
        if (!killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            failures++;
            say("FAIL worker %d gen %u (pid %d) %s %d", i, sh->w[i].gen, (int) p,
                WIFEXITED(st) ? "exited with status" : "died of signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        }
        evaluate(i);
        sh->w[i].pid = 0;
        if (respawn) {
            spawn(i);
            (*alive)++;
        }
    }
}

/* Every thread's backtrace of process `p`, with SOAK_GDB set (gdb attaches). */
static void backtraces(pid_t p)
{
    char cmd[128];
    if (!getenv("SOAK_GDB"))
        return;
    snprintf(cmd, sizeof cmd, "gdb -p %d -batch -ex 'thread apply all bt' 2>/dev/null | sed 's/^/  gdb: /' >&2",
             (int) p);
    if (system(cmd) != 0)
        say("gdb failed");
}

/* A connect refused as if nobody listened, by a worker that did listen: the kernel's rdma_cm
 * ids of that worker (is its listener there, in which state) and where each of its threads is
 * in the kernel (is the library's connection-management thread reading its events), once per
 * run. */
static void refused_report(int peer)
{
    pid_t p = sh->w[peer].pid;
    if (p <= 0 || atomic_exchange(&sh->refusal_told, 1))
        return;
    char cmd[640];
    snprintf(cmd, sizeof cmd,
             "rdma res show cm_id 2>/dev/null | grep -E 'pid %d ' | sed 's/^/  cm_id: /' >&2; "
             "for t in /proc/%d/task/*; do echo \"  thread $(cat $t/comm) in $(cat $t/wchan), "
             "$(grep '^State' $t/status)\"; sed 's/^/    /' $t/stack 2>/dev/null; done >&2",
             (int) p, (int) p);
    if (system(cmd) != 0)
        say("the report on worker %d failed", peer);
    backtraces(p);
}

/* The soft RDMA device's latest kernel messages of errors and closing connections (in a guest;
 * tests/vm/soak-guest.sh can switch on siw's debug messages, whose routine lines of every
 * request are left out), for the first three failed completions of a run. */
static void kernel_report(void)
{
    if (atomic_fetch_add(&sh->kernel_told, 1) >= 3)
        return;
    if (system("dmesg 2>/dev/null | grep -E 'siw|rxe' | grep -iE 'fail|err|term|close|reset|abort|drop|-[0-9]+' "
               "| tail -60 | sed 's/^/  dmesg: /' >&2") != 0)
        say("dmesg failed");
}

/* A thread that did not come back from a call for long: reported, its process killed. */
static void watchdog(void)
{
    uint64_t limit = (uint64_t) (2 * wait_s + 30) * 1000;
    for (int i = 0; i < nworkers; i++) {
        struct wstate *w = &sh->w[i];
        if (w->pid <= 0)
            continue;
        uint64_t ba = atomic_load(&w->beat_active), bp = atomic_load(&w->beat_passive);
        uint64_t t = now_ms(); /* read after the beats: never before one of them */
        int active_stuck = !atomic_load(&w->active_done) && t - ba > limit;
        if (active_stuck || t - bp > limit) {
            failures++;
            say("FAIL HANG: worker %d gen %u: its %s thread made no progress for %" PRIu64 " s (a call that does "
                "not return)",
                i, w->gen, active_stuck ? "active" : "passive", (t - (active_stuck ? ba : bp)) / 1000);
            backtraces(w->pid);
            atomic_fetch_add(&w->deaths, 1);
            atomic_store(&w->ready, 0);
            kill(w->pid, SIGKILL);
            w->pid = -w->pid;
        }
    }
}

static void summary(int secs)
{
    printf("\nsoak summary (IA %s, seed %" PRIu64 ")\n\n", ia_name, seed);
    printf("| measure | value |\n|---|---|\n");
    printf("| processes | %d (%u generations) |\n", nworkers, generations);
    printf("| duration | %d s |\n", secs);
    printf("| connections made | %" PRIu64 " |\n", TOTAL(connects));
    printf("| connects refused (peer being killed or closing) / rejected (no slot free) | %" PRIu64 " / %" PRIu64 " |\n",
           TOTAL(connect_fail), TOTAL(rejects));
    printf("| messages checked | %" PRIu64 " |\n", TOTAL(msgs));
    printf("| bytes checked | %" PRIu64 " |\n", TOTAL(bytes));
    printf("| RDMA ops (writes / reads) | %" PRIu64 " (%" PRIu64 " / %" PRIu64 ") |\n",
           TOTAL(rdma_writes) + TOTAL(rdma_reads), TOTAL(rdma_writes), TOTAL(rdma_reads));
    printf("| kills (-9) | %" PRIu64 " |\n", kills);
    printf("| abrupt dat_ia_close (active / passive) | %" PRIu64 " / %" PRIu64 " |\n", TOTAL(ia_abrupt_active),
           TOTAL(ia_abrupt_passive));
    printf("| abrupt dat_ep_disconnect | %" PRIu64 " |\n", TOTAL(ep_abrupt));
    printf("| connection ends seen / flushed completions | %" PRIu64 " / %" PRIu64 " |\n", TOTAL(ends_seen),
           TOTAL(flushed));
    printf("| async events | %" PRIu64 " |\n", TOTAL(async));
    printf("| errors | %" PRIu64 " in workers, %d in all |\n", TOTAL(errors), failures + !evaluated_ok);
    printf("\nresources after the warm-up (%d s), per process that lived long enough (%d did not):\n\n", warmup_s,
           too_short);
    printf("| worker | gen | lived | fds first -> last | threads first -> last | RSS KiB first -> last | "
           "window minima fds, threads, RSS KiB | verdict |\n|---|---|---|---|---|---|---|---|\n");
    for (struct verdict *v = verdicts; v; v = v->next)
        printf("| %d | %u | %d s | %d -> %d | %d -> %d | %" PRId64 " -> %" PRId64 " | %d -> %d, %d -> %d, %" PRId64
               " -> %" PRId64 " | %s |\n",
               v->idx, v->gen, v->life_s, v->first.fds, v->last.fds, v->first.threads, v->last.threads,
               v->first.rss_kb, v->last.rss_kb, v->min1.fds, v->min2.fds, v->min1.threads, v->min2.threads,
               v->min1.rss_kb, v->min2.rss_kb, v->ok ? "flat" : "GREW");
}

static void usage(void)
{
    fprintf(stderr, "usage: soak [-P ia] [-h address] [-n processes] [-d seconds] [-s seed] [-q base_qual] "
                    "[-w wait_seconds] [-k kill_every_seconds] [-p pace_us] [-W warmup_seconds]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int opt;
    seed = (uint64_t) time(NULL) ^ ((uint64_t) getpid() << 32);
    base_qual = 41000 + (unsigned) (getpid() % 512) * MAX_WORKERS;
    while ((opt = getopt(argc, argv, "P:h:n:d:s:q:w:k:p:W:")) != -1) {
        switch (opt) {
        case 'P': ia_name = optarg; break;
        case 'h': host = optarg; break;
        case 'n': nworkers = atoi(optarg); break;
        case 'd': duration = atoi(optarg); break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        case 'q': base_qual = (unsigned) atoi(optarg); break;
        case 'w': wait_s = atoi(optarg); break;
        case 'k': kill_every = atoi(optarg); break;
        case 'p': pace_us = atoi(optarg); break;
        case 'W': warmup_s = atoi(optarg); break;
        default: usage();
        }
    }
    if (nworkers < 2 || nworkers > MAX_WORKERS || duration < 1 || wait_s < 1 || kill_every < 0)
        usage();
    if (warmup_s < 0)
        warmup_s = duration / 5 < 60 ? duration / 5 : 60;
    sample_every = duration / 3000 + 1;
    memset(&server_addr, 0, sizeof server_addr);
    server_addr.sin_family = AF_INET;
    if (inet_pton(AF_INET, host, &server_addr.sin_addr) != 1) {
        fprintf(stderr, "soak: -h wants an IPv4 address\n");
        return 2;
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    sh->seed = seed;
    sh->n = nworkers;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("soak: seed %" PRIu64 " (repeat with -s %" PRIu64 "): IA %s, %d processes, %d s, kill -9 every ~%d s, "
           "waits bounded at %d s, qualifiers from %u\n",
           seed, seed, ia_name, nworkers, duration, kill_every, wait_s, base_qual);

    struct rng r = {mix(seed ^ 0x5eed)};
    int alive = 0, spared = nworkers / 4 > 0 ? nworkers / 4 : 1;
    for (int i = 0; i < nworkers; i++) {
        spawn(i);
        alive++;
    }
    uint64_t start = now_ms(), end = start + (uint64_t) duration * 1000, next_kill = 0, last_report = start;
    if (kill_every > 0)
        next_kill = start + range(&r, 1000, 2000 * (uint64_t) kill_every);
    while (now_ms() < end && failures < 20) {
        usleep(100000);
        reap(1, &alive);
        watchdog();
        uint64_t t = now_ms();
        if (kill_every > 0 && t >= next_kill && nworkers > spared) {
            int victim = (int) range(&r, (uint64_t) spared, (uint64_t) nworkers - 1);
            struct wstate *w = &sh->w[victim];
            if (w->pid > 0) {
                atomic_fetch_add(&w->deaths, 1);
                atomic_store(&w->ready, 0);
                kill(w->pid, SIGKILL);
                w->pid = -w->pid; /* reap() tells our kill from a crash by this */
                kills++;
            }
            next_kill = t + range(&r, 1000, 2000 * (uint64_t) kill_every);
        }
        if (t - last_report >= 60000) {
            last_report = t;
            printf("soak: %" PRIu64 " s: %" PRIu64 " connections, %" PRIu64 " messages, %" PRIu64 " RDMA ops, %" PRIu64
                   " kills, %d failures\n",
                   (t - start) / 1000, TOTAL(connects), TOTAL(msgs), TOTAL(rdma_writes) + TOTAL(rdma_reads), kills,
                   failures);
        }
    }
    /* stop phase 1: the active threads disconnect and close; phase 2 once all are done */
    atomic_store(&sh->stop, 1);
    uint64_t t1 = now_ms();
    for (;;) {
        int all = 1;
        reap(0, &alive);
        watchdog();
        for (int i = 0; i < nworkers; i++)
            if (sh->w[i].pid > 0 && !atomic_load(&sh->w[i].active_done))
                all = 0;
        if (all)
            break;
        if (now_ms() - t1 > (uint64_t) (2 * wait_s + 30) * 1000) {
            failures++;
            say("FAIL HANG: active threads did not finish within %d s of the stop", 2 * wait_s + 30);
            break;
        }
        usleep(100000);
    }
    atomic_store(&sh->stop, 2);
    t1 = now_ms();
    while (alive > 0) {
        reap(0, &alive);
        if (now_ms() - t1 > (uint64_t) (2 * wait_s + 30) * 1000) {
            failures++;
            say("FAIL HANG: %d workers did not exit within %d s of the stop", alive, 2 * wait_s + 30);
            for (int i = 0; i < nworkers; i++)
                if (sh->w[i].pid > 0) {
                    backtraces(sh->w[i].pid);
                    kill(sh->w[i].pid, SIGKILL);
                    sh->w[i].pid = -sh->w[i].pid;
                }
            t1 = now_ms();
        }
        usleep(100000);
    }
    summary((int) ((now_ms() - start) / 1000));
    int bad = failures > 0 || !evaluated_ok || TOTAL(errors) > 0;
    printf("\nsoak: %s (seed %" PRIu64 ")\n", bad ? "FAILED" : "passed", seed);
    return bad ? 1 : 0;
}
