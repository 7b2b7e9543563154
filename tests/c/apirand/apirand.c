/*
 * apirand - random sequences of DAT calls, with random valid and invalid arguments.
 *
 *   dat_apirand  -P IA [-s SEED] [-n STEPS] [-d SECONDS] [-t THREADS] [-w HANG_SECONDS] [-v]
 *   dat2_apirand (the same source built with -DDCT_DAT2 against <dat2/udat.h> and libdat2.so.2)
 *
 * A pool holds handles of every type (IA, PZ, EVD, CNO, LMR, RMR, EP, PSP, RSP, CR, SRQ), shared
 * by THREADS threads. Each step picks an export and fills its arguments from the pool and from
 * garbage: NULL, small integers, stack and heap pointers, a heap block that starts like a handle,
 * non-canonical values, a PROT_NONE page, an unmapped page, freed handles, handles of the wrong
 * type; NULL output pointers, bad flags and masks, huge counts and lengths, LMR triplets inside
 * and outside registered memory. Threads free handles the others are using.
 *
 * What is checked: every call returns a DAT code (DAT_SUCCESS, or DAT_CLASS_ERROR with an error
 * type and a subtype the face's header defines, which dat_strerror describes); DAT_INTERNAL_ERROR
 * (a panic caught at the library's boundary) counts as a failure too. A crash prints the calls
 * each thread was making; no progress of a thread for HANG_SECONDS (default 20) is a hang, reported
 * the same way (APIRAND_GDB=1 adds the backtraces of every thread; APIRAND_GDB=vgdb under valgrind). Exit status 0 when every call
 * returned a valid code, 1 on an invalid one, 3 on a hang; a crash ends with its signal.
 *
 * Reproducible from the seed: every choice of a thread comes from its own generator seeded with
 * (SEED, thread index), and the number of draws never depends on what a call returned. One
 * thread: the same seed makes the same calls with the same arguments (what they return can differ
 * where it depends on timing: connection events, completions; and the connection and traffic
 * steps post on the EPs dat_ep_get_status finds connected). Several threads: each makes the
 * same choices step by step; which object a pool slot holds depends on the others.
 * -v prints each call as "thread.step call(args) -> code", arguments by their pool slot
 * ("EP[3]", "stale LMR", "NULL"), not by address, so two traces of one seed compare with diff.
 */
#define _GNU_SOURCE 1
#include "../conformance/dct_compat.h"
#if DAT_VERSION_MAJOR >= 2
#include <dat2/dat_ib_extensions.h>
#include <dat2/dat_registry.h>
#define LAST_TYPE DAT_COMM_NOT_SUPPORTED
#else
#include <dat/dat_registry.h>
#define LAST_TYPE DAT_CONN_QUAL_UNAVAILABLE
#endif

#include <arpa/inet.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Options and shared state                                            */
/* ------------------------------------------------------------------ */

static const char *g_ia = "shm";
static const char *g_prog; /* argv[0], for gdb */
static uint64_t g_seed;
static uint64_t g_steps = 2000;
static unsigned g_secs;     /* 0: no time limit */
static unsigned g_nthreads = 1;
static unsigned g_hang = 20;
static int g_verbose;
static volatile int g_stop; /* time limit reached */
static DAT_CONN_QUAL g_qbase;

enum kind { K_IA, K_PZ, K_EVD, K_CNO, K_LMR, K_RMR, K_EP, K_PSP, K_RSP, K_CR, K_SRQ, NKIND };
static const char *const kind_name[NKIND] = {"IA", "PZ", "EVD", "CNO", "LMR", "RMR",
                                             "EP", "PSP", "RSP", "CR", "SRQ"};
#define SLOTS 6
#define IA_SLOTS 2
#define NSTALE 4
static DAT_HANDLE pool[NKIND][SLOTS];
static unsigned pool_aux[NKIND][SLOTS]; /* EVD: its flags; PSP: its qualifier's index */
static DAT_HANDLE stale[NKIND][NSTALE];
static unsigned stale_next[NKIND];

static unsigned nslots(int kind)
{
    return kind == K_IA ? IA_SLOTS : SLOTS;
}

#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* Stores h in a free slot of its kind; 0 when every slot is taken. */
static int put(int kind, DAT_HANDLE h, unsigned aux)
{
    for (unsigned i = 0; i < nslots(kind); i++) {
        DAT_HANDLE expect = NULL;
        if (__atomic_compare_exchange_n(&pool[kind][i], &expect, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            ST(&pool_aux[kind][i], aux);
            return 1;
        }
    }
    return 0;
}

/* h was freed (or found dead): out of its slot, into the stale ones. */
static void drop(int kind, DAT_HANDLE h)
{
    if (h == NULL)
        return;
    for (unsigned i = 0; i < nslots(kind); i++) {
        DAT_HANDLE expect = h;
        __atomic_compare_exchange_n(&pool[kind][i], &expect, NULL, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    }
    unsigned s = __atomic_fetch_add(&stale_next[kind], 1, __ATOMIC_RELAXED) % NSTALE;
    ST(&stale[kind][s], h);
}

/* Registered memory seen so far (contexts stay after the free: stale contexts are test values). */
struct region {
    DAT_LMR_CONTEXT lctx;
    DAT_RMR_CONTEXT rctx;
    uintptr_t addr;
    uint64_t len;
};
#define NREGS 32
static struct region lmrs[NREGS], rmrs[NREGS];
static unsigned lmr_next, rmr_next;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

static void record(struct region *tab, unsigned *next, DAT_LMR_CONTEXT l, DAT_RMR_CONTEXT r, uintptr_t a,
                   uint64_t len)
{
    pthread_mutex_lock(&reg_lock);
    struct region *e = &tab[(*next)++ % NREGS];
    e->lctx = l;
    e->rctx = r;
    e->addr = a;
    e->len = len;
    pthread_mutex_unlock(&reg_lock);
}

static struct region region_at(struct region *tab, unsigned i)
{
    pthread_mutex_lock(&reg_lock);
    struct region e = tab[i % NREGS];
    pthread_mutex_unlock(&reg_lock);
    return e;
}

/* Memory: an arena of ARENA_REGIONS blocks between PROT_NONE guard pages (registrations that run
 * past it end in a guard, never in the driver's heap), a PROT_NONE page and an unmapped page. */
#define PAGE 4096u
#define BLOCK 65536u
#define ARENA_REGIONS 8u
#define ARENA_LEN (BLOCK * ARENA_REGIONS)
static char *arena;
static char *noaccess_page;
static char *unmapped_page;

/* Garbage handles: a heap block of 0xff bytes, a heap block that starts with the provider table
 * word of a real handle, a small static object. */
static unsigned char *heap_ff;
static unsigned char *heap_fake;
static char private_data[BLOCK]; /* any private_data_size up to 64 KiB stays readable */
static const char long_name[] =
    "apirand-a-name-longer-than-any-ia-name-apirand-a-name-longer-than-any-ia-name-apirand-a-name-longer-"
    "than-any-ia-name-apirand-a-name-longer-than-any-ia-name-apirand-a-name-longer-than-any-ia-name-";
static struct sockaddr_in addr_lo, addr_testnet, addr_badfam;
static struct sockaddr_in6 addr_lo6;
static unsigned long agent_calls;

static void agent_fn(DAT_PVOID data, DAT_EVD_HANDLE evd)
{
    (void)data;
    (void)evd;
    __atomic_fetch_add(&agent_calls, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Threads, trace, checks                                              */
/* ------------------------------------------------------------------ */

enum { EV_CR, EV_ESTABLISHED, EV_DTO_OK, EV_DTO_ERR, EV_OTHER, EV_N };
#define RING 16
#define LINE 400
#define NIOV 256
struct th {
    unsigned id;
    uint64_t rng;
    uint64_t step;
    uint64_t progress; /* bumped after every call (watchdog) */
    uint64_t since;    /* time the current call began, seconds */
    int done;
    int clean;        /* this step passes only live handles of the right types */
    unsigned ia_slot; /* the IA slot this step named (ANY_IA: none) */
    int *stack_int;
    const char *call; /* the export being called */
    char cur[LINE];   /* the call being made: "dat_x(args" */
    size_t curlen;
    char ring[RING][LINE + 16];
    unsigned ring_n;
    uint64_t calls, ok, by_type[64], events[EV_N];
    DAT_LMR_TRIPLET lt[NIOV];
    DAT_RMR_TRIPLET rt[2];
};
static struct th *threads;

static uint64_t rnd(struct th *t)
{
    /* splitmix64 */
    uint64_t z = (t->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned below(struct th *t, unsigned n)
{
    return (unsigned)(rnd(t) % n);
}

static uint64_t now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec;
}

static void arg(struct th *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void arg(struct th *t, const char *fmt, ...)
{
    if (t->curlen + 2 >= LINE)
        return;
    if (t->cur[t->curlen - 1] != '(')
        t->cur[t->curlen++] = ',';
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->cur + t->curlen, LINE - t->curlen, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->curlen += (size_t)n < LINE - t->curlen ? (size_t)n : LINE - t->curlen - 1;
}

static void begin(struct th *t, const char *call)
{
    t->call = call;
    int n = snprintf(t->cur, LINE, "%u.%llu %s(", t->id, (unsigned long long)t->step, call);
    t->curlen = n > 0 && n < LINE ? (size_t)n : LINE - 1;
    ST(&t->since, now_s());
}

static void print_ring(FILE *f, struct th *t)
{
    unsigned n = t->ring_n < RING ? t->ring_n : RING;
    for (unsigned i = t->ring_n - n; i < t->ring_n; i++)
        fprintf(f, "    %s\n", t->ring[i % RING]);
}

static void fail_exit(struct th *t, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail_exit(struct th *t, int status, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "apirand FAIL (%s, IA %s, seed %llu, %u threads): ", DCT_FACE, g_ia,
            (unsigned long long)g_seed, g_nthreads);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  last calls of thread %u:\n", t->id);
    print_ring(stderr, t);
    fflush(stderr);
    fflush(stdout);
    _exit(status);
}

static int valid_code(const char *call, DAT_RETURN r)
{
    if (r == DAT_SUCCESS || r == (DAT_RETURN)DAT_NOT_IMPLEMENTED)
        return 1;
    /* dat_strerror of a code it does not know: DAT_INVALID_PARAMETER without the class bit, as
     * the reference implementation returns it (documented at the export) */
    if (r == DAT_INVALID_PARAMETER && strcmp(call, "dat_strerror") == 0)
        return 1;
    if ((r & (DAT_CLASS_ERROR | DAT_CLASS_WARNING)) != DAT_CLASS_ERROR)
        return 0;
    /* DAT_NOT_IMPLEMENTED's type bits with the error class is what a provider returns for "not
     * implemented" (DAT_ERROR(DAT_NOT_IMPLEMENTED, 0)) */
    DAT_UINT32 type = DAT_GET_TYPE(r);
    if ((type < DAT_ABORT || type > LAST_TYPE) && type != DAT_GET_TYPE(DAT_NOT_IMPLEMENTED))
        return 0;
    if (DAT_GET_SUBTYPE(r) > DAT_THREAD_SAFETY_NOT_FOUND)
        return 0;
    const char *maj = NULL, *min = NULL;
    return dat_strerror(r, &maj, &min) == DAT_SUCCESS && maj != NULL;
}

/* The call returned r: check it, record it. */
static DAT_RETURN end(struct th *t, DAT_RETURN r)
{
    if (t->curlen + 1 < LINE)
        t->cur[t->curlen++] = ')';
    t->cur[t->curlen] = 0;
    char *line = t->ring[t->ring_n % RING];
    snprintf(line, LINE + 16, "%s -> 0x%08x", t->cur, (unsigned)r);
    t->ring_n++;
    t->calls++;
    __atomic_fetch_add(&t->progress, 1, __ATOMIC_RELEASE);
    if (g_verbose)
        printf("%s\n", line);
    if (!valid_code(t->call, r))
        fail_exit(t, 1, "%s returned 0x%08x, not a DAT code", t->cur, (unsigned)r);
    if (r != DAT_SUCCESS && DAT_GET_TYPE(r) == DAT_INTERNAL_ERROR)
        fail_exit(t, 1, "%s returned DAT_INTERNAL_ERROR 0x%08x (a panic caught in the library?)", t->cur,
                  (unsigned)r);
    if (r == DAT_SUCCESS)
        t->ok++;
    else if (!(r & DAT_CLASS_ERROR))
        t->by_type[0]++;
    else
        t->by_type[(DAT_GET_TYPE(r) >> 16) & 63]++;
    return r;
}

static int is_err(DAT_RETURN r, DAT_UINT32 type)
{
    return r != DAT_SUCCESS && DAT_GET_TYPE(r) == type;
}

/* ------------------------------------------------------------------ */
/* Argument makers: each draws from the thread's generator and names  */
/* its choice in the trace                                             */
/* ------------------------------------------------------------------ */

/* A slot of `kind` from slot i on: the first one holding a handle (with an EVD, one whose flags
 * include `want`, if any), else slot i. */
#define IA_TAG(aux) ((aux) >> 24)
#define ANY_IA 0xffu
static unsigned live_slot_of(int kind, unsigned i, unsigned want, unsigned ia)
{
    for (unsigned n = 0; n < nslots(kind); n++) {
        unsigned j = (i + n) % nslots(kind);
        unsigned aux = LD(&pool_aux[kind][j]);
        if (LD(&pool[kind][j]) != NULL && (aux & want) == want && (ia == ANY_IA || IA_TAG(aux) == ia))
            return j;
    }
    if (ia != ANY_IA)
        return live_slot_of(kind, i, want, ANY_IA);
    return want ? live_slot_of(kind, i, 0, ANY_IA) : i % nslots(kind);
}

static unsigned live_slot(int kind, unsigned i, unsigned want)
{
    return live_slot_of(kind, i, want, ANY_IA);
}

/* A handle argument of `kind`. In a clean step (half of them) a live handle of that kind (an EVD
 * with the flags `want`, where there is one); otherwise a slot of that kind (68%), a freed handle,
 * a slot of another kind, or garbage. */
static DAT_HANDLE HW(struct th *t, int kind, unsigned want)
{
    unsigned x = t->clean ? 0 : below(t, 100);
    unsigned i = below(t, SLOTS);
    unsigned g = t->clean ? 0 : below(t, 12);
    if (t->clean) {
        /* objects of the IA this step already named */
        i = kind == K_IA ? live_slot(kind, i, 0) : live_slot_of(kind, i, kind == K_EVD ? want : 0, t->ia_slot);
        if (kind == K_IA)
            t->ia_slot = i;
        arg(t, "%s[%u]", kind_name[kind], i);
        return LD(&pool[kind][i]);
    }
    if (x < 68) {
        i = x < 60 ? live_slot(kind, i, kind == K_EVD ? want : 0) : i % nslots(kind);
        if (kind == K_IA)
            t->ia_slot = i;
        arg(t, "%s[%u]", kind_name[kind], i);
        return LD(&pool[kind][i]);
    }
    if (x < 76) {
        arg(t, "stale %s", kind_name[kind]);
        return LD(&stale[kind][i % NSTALE]);
    }
    if (x < 84) {
        int k = (int)(g % NKIND);
        i %= nslots(k);
        arg(t, "%s[%u]", kind_name[k], i);
        return LD(&pool[k][i]);
    }
    switch (g) {
    case 0: arg(t, "NULL"); return NULL;
    case 1: arg(t, "int %u", i + 1); return (DAT_HANDLE)(uintptr_t)(i * 97 + 1);
    case 2: arg(t, "stack"); return (DAT_HANDLE)t->stack_int;
    case 3: arg(t, "heap 0xff"); return (DAT_HANDLE)heap_ff;
    case 4: arg(t, "fake"); return (DAT_HANDLE)heap_fake;
    case 5: arg(t, "noncanonical"); return (DAT_HANDLE)(uintptr_t)0xdead00000000beefULL;
    case 6: arg(t, "text"); return (DAT_HANDLE)(uintptr_t)&agent_fn;
    case 7: arg(t, "noaccess"); return (DAT_HANDLE)noaccess_page;
    case 8: arg(t, "unmapped"); return (DAT_HANDLE)unmapped_page;
    case 9: {
        DAT_HANDLE h = LD(&pool[kind][i % nslots(kind)]);
        arg(t, "%s[%u]+8", kind_name[kind], i % nslots(kind));
        return h ? (DAT_HANDLE)((char *)h + 8) : NULL;
    }
    case 10: arg(t, "static"); return (DAT_HANDLE)&addr_lo;
    default: arg(t, "-1"); return (DAT_HANDLE)(uintptr_t)-1;
    }
}

static DAT_HANDLE H(struct th *t, int kind)
{
    return HW(t, kind, 0);
}

/* An output pointer: p, or NULL now and then. */
static void *O(struct th *t, void *p)
{
    if (!t->clean && below(t, 100) < 7) {
        arg(t, "NULL");
        return NULL;
    }
    arg(t, "&");
    return p;
}

static DAT_COUNT count(struct th *t)
{
    static const DAT_COUNT v[] = {0, 1, 1, 2, 3, 4, 8, 16, 64, 256, -1, 1000, 1 << 20, 0x7fffffff};
    DAT_COUNT c = v[below(t, t->clean ? 6 : sizeof v / sizeof v[0])];
    arg(t, "%d", (int)c);
    return c;
}

static uint64_t length(struct th *t, uint64_t fit)
{
    unsigned x = below(t, t->clean ? 6 : 10);
    uint64_t r = rnd(t);
    uint64_t v;
    if (x < 6)
        v = fit ? r % (fit + 1) : 0;
    else if (x == 6)
        v = 0;
    else if (x == 7)
        v = fit + 1 + (r & 0xfff);
    else if (x == 8)
        v = 1ULL << (32 + r % 31);
    else
        v = ~0ULL - (r & 7);
    arg(t, "len %llu", (unsigned long long)v);
    return v;
}

/* Mostly one of the valid flag values, sometimes two of them, sometimes any bits. */
static uint64_t flags(struct th *t, const uint64_t *valid, unsigned n)
{
    unsigned x = below(t, t->clean ? 7 : 10);
    uint64_t a = valid[below(t, n)], b = valid[below(t, n)], r = rnd(t);
    uint64_t v = x < 7 ? a : x < 9 ? (a | b) : (r & 0xffffffffu);
    arg(t, "0x%llx", (unsigned long long)v);
    return v;
}

static uint64_t mask(struct th *t, uint64_t all)
{
    unsigned x = below(t, t->clean ? 6 : 10);
    uint64_t r = rnd(t);
    uint64_t v = x < 6 ? all : x < 8 ? (1ULL << (r % 64)) & all : x < 9 ? 0 : r;
    arg(t, "mask 0x%llx", (unsigned long long)v);
    return v;
}

static DAT_TIMEOUT short_timeout(struct th *t)
{
    static const DAT_TIMEOUT v[] = {0, 0, 1, 100, 1000, 5000};
    DAT_TIMEOUT x = v[below(t, sizeof v / sizeof v[0])];
    arg(t, "%uus", (unsigned)x);
    return x;
}

static DAT_CONN_QUAL qual(struct th *t, unsigned *index)
{
    unsigned x = below(t, t->clean ? 8 : 10), k = below(t, 8);
    uint64_t r = rnd(t);
    *index = x < 8 ? k : 0xffff;
    DAT_CONN_QUAL q = x < 8 ? g_qbase + k : x == 8 ? (DAT_CONN_QUAL)0 : (DAT_CONN_QUAL)r;
    arg(t, "qual %s%u", x < 8 ? "base+" : "", x < 8 ? k : (unsigned)(q & 0xffff));
    return q;
}

static DAT_IA_ADDRESS_PTR ia_addr(struct th *t)
{
    unsigned x = below(t, t->clean ? 6 : 10);
    if (x < 6) {
        arg(t, "127.0.0.1");
        return (DAT_IA_ADDRESS_PTR)&addr_lo;
    }
    switch (x) {
    case 6: arg(t, "192.0.2.1"); return (DAT_IA_ADDRESS_PTR)&addr_testnet;
    case 7: arg(t, "::1"); return (DAT_IA_ADDRESS_PTR)&addr_lo6;
    case 8: arg(t, "family 0xff"); return (DAT_IA_ADDRESS_PTR)&addr_badfam;
    default: arg(t, "NULL"); return NULL;
    }
}

static DAT_COUNT pd_size(struct th *t)
{
    static const DAT_COUNT v[] = {0, 0, 1, 16, 48, 64, 92, 196, 200, 1024, BLOCK, -1};
    DAT_COUNT c = v[below(t, t->clean ? 6 : sizeof v / sizeof v[0])];
    arg(t, "pd %d", (int)c);
    return c;
}

/* An address: inside region e, just past it, elsewhere in the arena, or bad. */
static uintptr_t address(struct th *t, const struct region *e)
{
    unsigned x = t->clean ? 7 + below(t, 13) : below(t, 20);
    uint64_t r = rnd(t);
    switch (x) {
    case 0: return 0;
    case 1: return (uintptr_t)noaccess_page;
    case 2: return (uintptr_t)unmapped_page;
    case 3: return (uintptr_t)r;
    case 4: case 5: return (uintptr_t)arena + r % ARENA_LEN;
    case 6: return e->addr + e->len - (r & 15);
    default: return e->addr + (e->len ? r % e->len : 0);
    }
}

/* n local triplets over registered memory (mostly), unregistered memory and bad contexts. */
static DAT_LMR_TRIPLET *ltrips(struct th *t, DAT_COUNT n)
{
    unsigned x = below(t, 50);
    unsigned fill = n < 0 ? 0 : n > NIOV ? NIOV : (unsigned)n;
    memset(t->lt, 0, sizeof t->lt);
    for (unsigned i = 0; i < fill && i < 8; i++) {
        /* a clean step: the latest registrations, their contexts, lengths that fit */
        unsigned pick = t->clean ? below(t, 2) : below(t, NREGS), y = below(t, t->clean ? 8 : 10);
        struct region e = region_at(lmrs, LD(&lmr_next) - 1 - pick % 4 - (pick >= 16 ? pick : 0));
        uint64_t r = rnd(t);
        t->lt[i].lmr_context = y < 8 ? e.lctx : y == 8 ? (DAT_LMR_CONTEXT)r : 0;
        uintptr_t a = address(t, &e);
        t->lt[i].virtual_address = (DAT_VADDR)a;
        uint64_t room = a >= e.addr && a < e.addr + e.len ? e.addr + e.len - a : 64;
        unsigned z = below(t, t->clean ? 7 : 10);
        t->lt[i].segment_length = z < 7 ? (room ? rnd(t) % (room + 1) : 0) : z < 8 ? room + 1 : z < 9 ? 0 : rnd(t);
    }
    for (unsigned i = 8; i < fill; i++)
        t->lt[i] = t->lt[i % 8];
    if (x == 0) {
        arg(t, "iov NULL");
        return NULL;
    }
    arg(t, "iov");
    return t->lt;
}

static DAT_RMR_TRIPLET *rtrip(struct th *t)
{
    unsigned x = below(t, 40), pick = t->clean ? below(t, 2) : below(t, NREGS), y = below(t, t->clean ? 5 : 10);
    struct region e = region_at(y < 5 ? rmrs : lmrs, LD(y < 5 ? &rmr_next : &lmr_next) - 1 - pick % 4 -
                                                         (pick >= 16 ? pick : 0));
    uint64_t r = rnd(t);
    memset(t->rt, 0, sizeof t->rt);
    t->rt[0].rmr_context = y < 9 ? e.rctx : (DAT_RMR_CONTEXT)r;
    uintptr_t a = address(t, &e);
    t->rt[0].RMR_ADDR = (DAT_VADDR)a;
    uint64_t room = a >= e.addr && a < e.addr + e.len ? e.addr + e.len - a : 64;
    unsigned z = below(t, t->clean ? 7 : 10);
    t->rt[0].segment_length = z < 7 ? (room ? rnd(t) % (room + 1) : 0) : z < 9 ? room + 1 : rnd(t);
    if (x == 0) {
        arg(t, "riov NULL");
        return NULL;
    }
    arg(t, "riov");
    return t->rt;
}

static DAT_DTO_COOKIE ck(struct th *t)
{
    DAT_DTO_COOKIE c;
    c.as_64 = rnd(t);
    return c;
}

static const uint64_t completion_flags[] = {
    DAT_COMPLETION_DEFAULT_FLAG,        DAT_COMPLETION_DEFAULT_FLAG,       DAT_COMPLETION_SUPPRESS_FLAG,
    DAT_COMPLETION_SOLICITED_WAIT_FLAG, DAT_COMPLETION_UNSIGNALLED_FLAG,   DAT_COMPLETION_BARRIER_FENCE_FLAG,
    DAT_COMPLETION_EVD_THRESHOLD_FLAG,
};
#define COMPLETION(t) ((DAT_COMPLETION_FLAGS)flags(t, completion_flags, 7))

static const uint64_t mem_privs[] = {
    DAT_MEM_PRIV_ALL_FLAG,        DAT_MEM_PRIV_ALL_FLAG,          DAT_MEM_PRIV_LOCAL_READ_FLAG,
    DAT_MEM_PRIV_LOCAL_WRITE_FLAG, DAT_MEM_PRIV_REMOTE_READ_FLAG, DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
    DAT_MEM_PRIV_NONE_FLAG,
};
#define PRIV(t) ((DAT_MEM_PRIV_FLAGS)flags(t, mem_privs, 7))

static const uint64_t evd_flag_values[] = {
    DAT_EVD_DTO_FLAG,  DAT_EVD_DTO_FLAG,        DAT_EVD_CONNECTION_FLAG, DAT_EVD_CR_FLAG,
    DAT_EVD_SOFTWARE_FLAG, DAT_EVD_RMR_BIND_FLAG, DAT_EVD_ASYNC_FLAG,     DAT_EVD_DEFAULT_FLAG,
    DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
};

static const uint64_t close_flags[] = {DAT_CLOSE_ABRUPT_FLAG, DAT_CLOSE_ABRUPT_FLAG, DAT_CLOSE_GRACEFUL_FLAG};

/* A DAT_EP_ATTR with chosen numbers (or NULL: the provider's defaults). */
static DAT_EP_ATTR *ep_attr(struct th *t, DAT_EP_ATTR *a)
{
    unsigned x = below(t, 10);
    memset(a, 0, sizeof *a);
    a->service_type = below(t, 8) ? DAT_SERVICE_TYPE_RC : (DAT_SERVICE_TYPE)rnd(t);
    uint64_t r1 = rnd(t), r2 = rnd(t);
    unsigned s1 = below(t, 64), s2 = below(t, 64);
    a->max_message_size = below(t, 2) ? 4096 : r1 >> s1;
    a->max_rdma_size = below(t, 2) ? 65536 : r2 >> s2;
    a->qos = DAT_QOS_BEST_EFFORT;
    a->recv_completion_flags = below(t, 4) ? DAT_COMPLETION_DEFAULT_FLAG : (DAT_COMPLETION_FLAGS)rnd(t);
    a->request_completion_flags = below(t, 4) ? DAT_COMPLETION_DEFAULT_FLAG : (DAT_COMPLETION_FLAGS)rnd(t);
    static const DAT_COUNT n[] = {0, 1, 2, 4, 8, 16, 64, -1, 1 << 20};
    a->max_recv_dtos = n[below(t, 9)];
    a->max_request_dtos = n[below(t, 9)];
    a->max_recv_iov = n[below(t, 9)];
    a->max_request_iov = n[below(t, 9)];
    a->max_rdma_read_in = n[below(t, 9)];
    a->max_rdma_read_out = n[below(t, 9)];
    a->srq_soft_hw = n[below(t, 9)];
    a->max_rdma_read_iov = n[below(t, 9)];
    a->max_rdma_write_iov = n[below(t, 9)];
    a->ep_transport_specific_count = below(t, 8) ? 0 : 2; /* with a NULL array */
    a->ep_provider_specific_count = below(t, 8) ? 0 : 3;
    if (x < 5) {
        arg(t, "attr NULL");
        return NULL;
    }
    arg(t, "attr");
    return a;
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

/* What an event hands over: a connection request's CR. */
static void take_event(struct th *t, const DAT_EVENT *ev)
{
    if (g_verbose)
        printf("    event 0x%x%s%d\n", (unsigned)ev->event_number,
               ev->event_number == DAT_DTO_COMPLETION_EVENT ? " status " : "",
               ev->event_number == DAT_DTO_COMPLETION_EVENT ? (int)ev->event_data.dto_completion_event_data.status : 0);
    switch (ev->event_number) {
    case DAT_DTO_COMPLETION_EVENT:
        t->events[ev->event_data.dto_completion_event_data.status == DAT_DTO_SUCCESS ? EV_DTO_OK : EV_DTO_ERR]++;
        break;
    case DAT_CONNECTION_EVENT_ESTABLISHED: t->events[EV_ESTABLISHED]++; break;
    case DAT_CONNECTION_REQUEST_EVENT: t->events[EV_CR]++; break;
    default: t->events[EV_OTHER]++; break;
    }
    if (ev->event_number != DAT_CONNECTION_REQUEST_EVENT)
        return;
    DAT_CR_HANDLE cr = ev->event_data.cr_arrival_event_data.cr_handle;
    if (cr != NULL && !put(K_CR, cr, 0)) {
        begin(t, "dat_cr_reject");
        arg(t, "new CR");
        if (end(t, cr_reject(cr)) == DAT_SUCCESS)
            drop(K_CR, cr);
    }
}

/* ------------------------------------------------------------------ */
/* Operations                                                          */
/* ------------------------------------------------------------------ */

/* A created handle goes into a free slot; with none free it is freed at once. */
typedef DAT_RETURN (*free_fn)(DAT_HANDLE);
static void keep(struct th *t, int kind, DAT_HANDLE h, unsigned aux, free_fn fr, const char *frname)
{
    if (h == NULL || put(kind, h, (aux & 0xffffffu) | (t->ia_slot << 24)))
        return;
    begin(t, frname);
    arg(t, "new %s", kind_name[kind]);
    end(t, fr(h));
}

/* Frees h; success or an invalid handle takes it out of the pool. */
static void freed(int kind, DAT_HANDLE h, DAT_RETURN r)
{
    if (r == DAT_SUCCESS || is_err(r, DAT_INVALID_HANDLE))
        drop(kind, h);
}

static void op_ia_open(struct th *t)
{
    static const char *const names[] = {NULL, "", "nonexistent", long_name};
    unsigned x = t->clean ? 0 : below(t, 10);
    const char *name = x < 6 ? g_ia : names[x - 6];
    DAT_EVD_HANDLE async = NULL, *asyncp = &async;
    DAT_IA_HANDLE ia = NULL;
    begin(t, "dat_ia_openv");
    arg(t, "%s", name == g_ia ? "IA" : name == NULL ? "NULL" : name == long_name ? "long" : name);
    DAT_COUNT qlen = count(t);
    if (!t->clean && below(t, 10) == 0)
        async = H(t, K_EVD);
    else
        arg(t, "async NULL");
    if (!t->clean && below(t, 20) == 0) {
        asyncp = NULL;
        arg(t, "NULL");
    }
    DAT_IA_HANDLE *iap = O(t, &ia);
    unsigned major = DAT_VERSION_MAJOR, minor = DAT_VERSION_MINOR;
    if (!t->clean && below(t, 10) == 0) {
        major = below(t, 4);
        minor = below(t, 4);
    }
    DAT_BOOLEAN safe = below(t, 10) ? DAT_THREADSAFE : DAT_FALSE;
    arg(t, "%u.%u", major, minor);
    DAT_RETURN r = end(t, dat_ia_openv((const DAT_NAME_PTR)name, qlen, asyncp, iap, major, minor, safe));
    if (r == DAT_SUCCESS && ia != NULL) {
        if (put(K_IA, ia, 0)) {
            if (async != NULL)
                put(K_EVD, async, DAT_EVD_ASYNC_FLAG);
        } else {
            begin(t, "dat_ia_close");
            arg(t, "new IA");
            end(t, dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
        }
    }
}

/* After an IA closed: the handles its close freed leave the pool (dat_get_handle_type tells). */
static void sweep(struct th *t)
{
    DAT_HANDLE_TYPE ht;
    for (int k = 0; k < NKIND; k++) {
        for (unsigned i = 0; i < nslots(k); i++) {
            DAT_HANDLE h = LD(&pool[k][i]);
            if (h == NULL)
                continue;
            begin(t, "dat_get_handle_type");
            arg(t, "%s[%u]", kind_name[k], i);
            if (is_err(end(t, dat_get_handle_type(h, &ht)), DAT_INVALID_HANDLE))
                drop(k, h);
        }
    }
}

static void op_ia_close(struct th *t)
{
    static const uint64_t ia_close_flags[] = {DAT_CLOSE_ABRUPT_FLAG, DAT_CLOSE_GRACEFUL_FLAG,
                                              DAT_CLOSE_GRACEFUL_FLAG, DAT_CLOSE_GRACEFUL_FLAG};
    begin(t, "dat_ia_close");
    DAT_IA_HANDLE ia = H(t, K_IA);
    DAT_CLOSE_FLAGS f = (DAT_CLOSE_FLAGS)flags(t, ia_close_flags, 4);
    DAT_RETURN r = end(t, dat_ia_close(ia, f));
    freed(K_IA, ia, r);
    if (r == DAT_SUCCESS)
        sweep(t);
}

static void op_ia_query(struct th *t)
{
    DAT_EVD_HANDLE async;
    DAT_IA_ATTR ia_attr;
    DAT_PROVIDER_ATTR pattr;
    begin(t, "dat_ia_query");
    DAT_IA_HANDLE ia = H(t, K_IA);
    DAT_EVD_HANDLE *ap = O(t, &async);
    DAT_IA_ATTR_MASK m1 = mask(t, DAT_IA_FIELD_ALL);
    DAT_IA_ATTR *iap = O(t, &ia_attr);
    DAT_PROVIDER_ATTR_MASK m2 = mask(t, DAT_PROVIDER_FIELD_ALL);
    DAT_PROVIDER_ATTR *pp = O(t, &pattr);
    end(t, dat_ia_query(ia, ap, m1, iap, m2, pp));
}

static void op_pz(struct th *t)
{
    unsigned x = below(t, 3);
    DAT_PZ_HANDLE pz = NULL;
    DAT_PZ_PARAM p;
    if (x == 0) {
        begin(t, "dat_pz_create");
        DAT_IA_HANDLE ia = H(t, K_IA);
        if (end(t, dat_pz_create(ia, O(t, &pz))) == DAT_SUCCESS)
            keep(t, K_PZ, pz, 0, (free_fn)dat_pz_free, "dat_pz_free");
    } else if (x == 1) {
        begin(t, "dat_pz_query");
        pz = H(t, K_PZ);
        DAT_PZ_PARAM_MASK m = (DAT_PZ_PARAM_MASK)mask(t, DAT_PZ_FIELD_ALL);
        end(t, dat_pz_query(pz, m, O(t, &p)));
    } else {
        begin(t, "dat_pz_free");
        pz = H(t, K_PZ);
        freed(K_PZ, pz, end(t, dat_pz_free(pz)));
    }
}

static void op_evd(struct th *t)
{
    unsigned x = below(t, 14);
    DAT_EVD_HANDLE evd = NULL;
    DAT_EVD_PARAM p;
    DAT_EVENT ev;
    DAT_COUNT nmore;
    memset(&ev, 0, sizeof ev);
    switch (x) {
    case 0: case 1: {
        begin(t, "dat_evd_create");
        DAT_IA_HANDLE ia = H(t, K_IA);
        DAT_COUNT qlen = count(t);
        DAT_CNO_HANDLE cno = below(t, 3) ? (arg(t, "no CNO"), NULL) : H(t, K_CNO);
        DAT_EVD_FLAGS f = (DAT_EVD_FLAGS)flags(t, evd_flag_values, 9);
        if (end(t, dat_evd_create(ia, qlen, cno, f, O(t, &evd))) == DAT_SUCCESS)
            keep(t, K_EVD, evd, f, (free_fn)dat_evd_free, "dat_evd_free");
        break;
    }
    case 2:
        begin(t, "dat_evd_query");
        evd = H(t, K_EVD);
        {
            DAT_EVD_PARAM_MASK m = (DAT_EVD_PARAM_MASK)mask(t, DAT_EVD_FIELD_ALL);
            end(t, dat_evd_query(evd, m, O(t, &p)));
        }
        break;
    case 3: {
        begin(t, "dat_evd_modify_cno");
        evd = H(t, K_EVD);
        DAT_CNO_HANDLE cno = below(t, 3) ? H(t, K_CNO) : (arg(t, "NULL"), NULL);
        end(t, dat_evd_modify_cno(evd, cno));
        break;
    }
    case 4:
        begin(t, "dat_evd_enable");
        evd = H(t, K_EVD);
        end(t, dat_evd_enable(evd));
        break;
    case 5:
        begin(t, "dat_evd_disable");
        evd = H(t, K_EVD);
        end(t, dat_evd_disable(evd));
        break;
    case 6:
        if (below(t, 2)) {
            begin(t, "dat_evd_set_unwaitable");
            evd = H(t, K_EVD);
            end(t, dat_evd_set_unwaitable(evd));
        } else {
            begin(t, "dat_evd_clear_unwaitable");
            evd = H(t, K_EVD);
            end(t, dat_evd_clear_unwaitable(evd));
        }
        break;
    case 7: {
        begin(t, "dat_evd_resize");
        evd = H(t, K_EVD);
        DAT_COUNT q = count(t);
        end(t, dat_evd_resize(evd, q));
        break;
    }
    case 8: {
        begin(t, "dat_evd_post_se");
        evd = H(t, K_EVD);
        ev.event_number = below(t, 5) ? DAT_SOFTWARE_EVENT : (DAT_EVENT_NUMBER)rnd(t);
        ev.event_data.software_event_data.pointer = (DAT_PVOID)(uintptr_t)rnd(t);
        arg(t, "event 0x%x", (unsigned)ev.event_number);
        end(t, dat_evd_post_se(evd, below(t, 15) ? &ev : NULL));
        break;
    }
    case 9: case 10:
        begin(t, "dat_evd_dequeue");
        evd = H(t, K_EVD);
        if (end(t, dat_evd_dequeue(evd, O(t, &ev))) == DAT_SUCCESS)
            take_event(t, &ev);
        break;
    case 11: case 12: {
        begin(t, "dat_evd_wait");
        evd = H(t, K_EVD);
        DAT_TIMEOUT to = short_timeout(t);
        static const DAT_COUNT thr[] = {1, 1, 1, 2, 4, 0, -1, 1 << 20};
        DAT_COUNT th = thr[below(t, 8)];
        arg(t, "threshold %d", (int)th);
        DAT_EVENT *evp = O(t, &ev);
        if (end(t, dat_evd_wait(evd, to, th, evp, O(t, &nmore))) == DAT_SUCCESS)
            take_event(t, &ev);
        break;
    }
    default:
        begin(t, "dat_evd_free");
        evd = H(t, K_EVD);
        freed(K_EVD, evd, end(t, dat_evd_free(evd)));
        break;
    }
}

static void op_cno(struct th *t)
{
    unsigned x = below(t, 5);
    DAT_CNO_HANDLE cno = NULL;
    DAT_CNO_PARAM p;
    DAT_EVD_HANDLE evd;
    DAT_OS_WAIT_PROXY_AGENT agent;
    agent.instance_data = NULL;
    agent.proxy_agent_func = below(t, 2) ? agent_fn : NULL;
    switch (x) {
    case 0:
        begin(t, "dat_cno_create");
        {
            DAT_IA_HANDLE ia = H(t, K_IA);
            arg(t, "agent %s", agent.proxy_agent_func ? "fn" : "NULL");
            if (end(t, dat_cno_create(ia, agent, O(t, &cno))) == DAT_SUCCESS)
                keep(t, K_CNO, cno, 0, (free_fn)dat_cno_free, "dat_cno_free");
        }
        break;
    case 1:
        begin(t, "dat_cno_modify_agent");
        cno = H(t, K_CNO);
        arg(t, "agent %s", agent.proxy_agent_func ? "fn" : "NULL");
        end(t, dat_cno_modify_agent(cno, agent));
        break;
    case 2:
        begin(t, "dat_cno_query");
        cno = H(t, K_CNO);
        {
            DAT_CNO_PARAM_MASK m = (DAT_CNO_PARAM_MASK)mask(t, DAT_CNO_FIELD_ALL);
            end(t, dat_cno_query(cno, m, O(t, &p)));
        }
        break;
    case 3:
        begin(t, "dat_cno_wait");
        cno = H(t, K_CNO);
        {
            DAT_TIMEOUT to = short_timeout(t);
            end(t, dat_cno_wait(cno, to, O(t, &evd)));
        }
        break;
    default:
        begin(t, "dat_cno_free");
        cno = H(t, K_CNO);
        freed(K_CNO, cno, end(t, dat_cno_free(cno)));
        break;
    }
}

static void op_lmr_create(struct th *t)
{
    DAT_LMR_HANDLE lmr = NULL;
    DAT_LMR_CONTEXT lctx = 0;
    DAT_RMR_CONTEXT rctx = 0;
    DAT_VLEN rlen = 0;
    DAT_VADDR raddr = 0;
    DAT_REGION_DESCRIPTION rd;
    static char cookie[DAT_LMR_COOKIE_SIZE];
    memset(&rd, 0, sizeof rd);
    begin(t, "dat_lmr_create");
    DAT_IA_HANDLE ia = H(t, K_IA);
    unsigned x = below(t, 20), blk = below(t, ARENA_REGIONS);
    DAT_MEM_TYPE type = x < 16 ? DAT_MEM_TYPE_VIRTUAL : x < 18 ? DAT_MEM_TYPE_LMR
                        : x < 19 ? DAT_MEM_TYPE_SHARED_VIRTUAL : (DAT_MEM_TYPE)rnd(t);
    arg(t, "type 0x%x", (unsigned)type);
    struct region in = {0, 0, (uintptr_t)arena + blk * BLOCK, BLOCK};
    uintptr_t a = address(t, &in);
    if (below(t, 2))
        a &= ~(uintptr_t)(PAGE - 1);
    arg(t, "addr %s", a >= (uintptr_t)arena && a < (uintptr_t)arena + ARENA_LEN ? "arena" : "other");
    if (type == DAT_MEM_TYPE_LMR)
        rd.for_lmr_handle = H(t, K_LMR);
    else if (type == DAT_MEM_TYPE_SHARED_VIRTUAL) {
        rd.for_shared_memory.virtual_address = (DAT_PVOID)a;
        rd.for_shared_memory.shared_memory_id = below(t, 2) ? &cookie : NULL;
    } else
        rd.for_va = (DAT_PVOID)a;
    uint64_t room = a >= (uintptr_t)arena && a < (uintptr_t)arena + ARENA_LEN ? (uintptr_t)arena + ARENA_LEN - a : 0;
    DAT_VLEN len = (DAT_VLEN)length(t, room < BLOCK ? room : BLOCK);
    DAT_PZ_HANDLE pz = H(t, K_PZ);
    DAT_MEM_PRIV_FLAGS priv = PRIV(t);
    DAT_LMR_HANDLE *lp = O(t, &lmr);
    DAT_LMR_CONTEXT *lcp = O(t, &lctx);
    DAT_RMR_CONTEXT *rcp = O(t, &rctx);
    DAT_VLEN *rlp = O(t, &rlen);
    DAT_VADDR *rap = O(t, &raddr);
#if DAT_VERSION_MAJOR >= 2
    DAT_VA_TYPE va = below(t, 10) ? DAT_VA_TYPE_VA : (DAT_VA_TYPE)below(t, 4);
    arg(t, "va %u", (unsigned)va);
    DAT_RETURN r = end(t, dat_lmr_create(ia, type, rd, len, pz, priv, va, lp, lcp, rcp, rlp, rap));
#else
    DAT_RETURN r = end(t, dat_lmr_create(ia, type, rd, len, pz, priv, lp, lcp, rcp, rlp, rap));
#endif
    if (r == DAT_SUCCESS && lmr != NULL) {
        if (type == DAT_MEM_TYPE_VIRTUAL || type == DAT_MEM_TYPE_SHARED_VIRTUAL)
            record(lmrs, &lmr_next, lctx, rctx, a, len);
        keep(t, K_LMR, lmr, 0, (free_fn)dat_lmr_free, "dat_lmr_free");
    }
}

static void op_lmr(struct th *t)
{
    unsigned x = below(t, 6);
    DAT_LMR_PARAM p;
    if (x < 2) {
        op_lmr_create(t);
    } else if (x == 2) {
        begin(t, "dat_lmr_query");
        DAT_LMR_HANDLE lmr = H(t, K_LMR);
        DAT_LMR_PARAM_MASK m = (DAT_LMR_PARAM_MASK)mask(t, DAT_LMR_FIELD_ALL);
        end(t, dat_lmr_query(lmr, m, O(t, &p)));
    } else if (x == 3) {
        unsigned rd = below(t, 2);
        begin(t, rd ? "dat_lmr_sync_rdma_read" : "dat_lmr_sync_rdma_write");
        DAT_IA_HANDLE ia = H(t, K_IA);
        /* no maximum applies here: the count is the array's length (at most NIOV) */
        DAT_COUNT n = count(t);
        if (n < 0 || n > NIOV)
            n = NIOV;
        DAT_LMR_TRIPLET *iov = ltrips(t, n);
        DAT_VLEN vn = (DAT_VLEN)n;
        end(t, rd ? dat_lmr_sync_rdma_read(ia, iov, vn) : dat_lmr_sync_rdma_write(ia, iov, vn));
    } else {
        begin(t, "dat_lmr_free");
        DAT_LMR_HANDLE lmr = H(t, K_LMR);
        freed(K_LMR, lmr, end(t, dat_lmr_free(lmr)));
    }
}

static void op_rmr(struct th *t)
{
    unsigned x = below(t, 6);
    DAT_RMR_HANDLE rmr = NULL;
    DAT_RMR_PARAM p;
    DAT_RMR_CONTEXT ctx = 0;
    if (x == 0) {
        begin(t, "dat_rmr_create");
        DAT_PZ_HANDLE pz = H(t, K_PZ);
        if (end(t, dat_rmr_create(pz, O(t, &rmr))) == DAT_SUCCESS)
            keep(t, K_RMR, rmr, 0, (free_fn)dat_rmr_free, "dat_rmr_free");
    } else if (x == 1) {
        begin(t, "dat_rmr_query");
        rmr = H(t, K_RMR);
        DAT_RMR_PARAM_MASK m = (DAT_RMR_PARAM_MASK)mask(t, DAT_RMR_FIELD_ALL);
        end(t, dat_rmr_query(rmr, m, O(t, &p)));
    } else if (x < 5) {
        begin(t, "dat_rmr_bind");
        rmr = H(t, K_RMR);
        DAT_LMR_HANDLE lmr = H(t, K_LMR);
        DAT_LMR_TRIPLET *trip = ltrips(t, 1);
        DAT_MEM_PRIV_FLAGS priv = PRIV(t);
        DAT_EP_HANDLE ep = H(t, K_EP);
        DAT_RMR_COOKIE c;
        c.as_64 = rnd(t);
        DAT_COMPLETION_FLAGS f = COMPLETION(t);
        DAT_RMR_CONTEXT *cp = O(t, &ctx);
        DAT_LMR_TRIPLET tcopy = trip ? *trip : t->lt[0];
#if DAT_VERSION_MAJOR >= 2
        DAT_VA_TYPE va = below(t, 10) ? DAT_VA_TYPE_VA : (DAT_VA_TYPE)below(t, 4);
        arg(t, "va %u", (unsigned)va);
        DAT_RETURN r = end(t, dat_rmr_bind(rmr, lmr, trip, priv, va, ep, c, f, cp));
#else
        (void)lmr;
        DAT_RETURN r = end(t, dat_rmr_bind(rmr, trip, priv, ep, c, f, cp));
#endif
        if (r == DAT_SUCCESS && cp != NULL)
            record(rmrs, &rmr_next, tcopy.lmr_context, ctx, (uintptr_t)tcopy.virtual_address,
                   tcopy.segment_length);
    } else {
        begin(t, "dat_rmr_free");
        rmr = H(t, K_RMR);
        freed(K_RMR, rmr, end(t, dat_rmr_free(rmr)));
    }
}

static void op_psp(struct th *t)
{
    static const uint64_t psp_flags[] = {DAT_PSP_CONSUMER_FLAG, DAT_PSP_CONSUMER_FLAG, DAT_PSP_PROVIDER_FLAG};
    unsigned x = below(t, 6);
    DAT_PSP_HANDLE psp = NULL;
    DAT_PSP_PARAM p;
    unsigned qi;
    if (x < 2) {
        begin(t, "dat_psp_create");
        DAT_IA_HANDLE ia = H(t, K_IA);
        DAT_CONN_QUAL q = qual(t, &qi);
        DAT_EVD_HANDLE evd = HW(t, K_EVD, DAT_EVD_CR_FLAG);
        DAT_PSP_FLAGS f = (DAT_PSP_FLAGS)flags(t, psp_flags, 3);
        if (end(t, dat_psp_create(ia, q, evd, f, O(t, &psp))) == DAT_SUCCESS)
            keep(t, K_PSP, psp, qi, (free_fn)dat_psp_free, "dat_psp_free");
    } else if (x == 2) {
        DAT_CONN_QUAL q = 0;
        begin(t, "dat_psp_create_any");
        DAT_IA_HANDLE ia = H(t, K_IA);
        DAT_CONN_QUAL *qp = O(t, &q);
        DAT_EVD_HANDLE evd = HW(t, K_EVD, DAT_EVD_CR_FLAG);
        DAT_PSP_FLAGS f = (DAT_PSP_FLAGS)flags(t, psp_flags, 3);
        if (end(t, dat_psp_create_any(ia, qp, evd, f, O(t, &psp))) == DAT_SUCCESS)
            keep(t, K_PSP, psp, 0xffff, (free_fn)dat_psp_free, "dat_psp_free");
    } else if (x == 3) {
        begin(t, "dat_psp_query");
        psp = H(t, K_PSP);
        DAT_PSP_PARAM_MASK m = (DAT_PSP_PARAM_MASK)mask(t, DAT_PSP_FIELD_ALL);
        end(t, dat_psp_query(psp, m, O(t, &p)));
    } else {
        begin(t, "dat_psp_free");
        psp = H(t, K_PSP);
        freed(K_PSP, psp, end(t, dat_psp_free(psp)));
    }
}

static void op_rsp(struct th *t)
{
    unsigned x = below(t, 4);
    DAT_RSP_HANDLE rsp = NULL;
    DAT_RSP_PARAM p;
    unsigned qi;
    if (x < 2) {
        begin(t, "dat_rsp_create");
        DAT_IA_HANDLE ia = H(t, K_IA);
        DAT_CONN_QUAL q = qual(t, &qi);
        DAT_EP_HANDLE ep = H(t, K_EP);
        DAT_EVD_HANDLE evd = HW(t, K_EVD, DAT_EVD_CR_FLAG);
        if (end(t, dat_rsp_create(ia, q, ep, evd, O(t, &rsp))) == DAT_SUCCESS)
            keep(t, K_RSP, rsp, qi, (free_fn)dat_rsp_free, "dat_rsp_free");
    } else if (x == 2) {
        begin(t, "dat_rsp_query");
        rsp = H(t, K_RSP);
        DAT_RSP_PARAM_MASK m = (DAT_RSP_PARAM_MASK)mask(t, DAT_RSP_FIELD_ALL);
        end(t, dat_rsp_query(rsp, m, O(t, &p)));
    } else {
        begin(t, "dat_rsp_free");
        rsp = H(t, K_RSP);
        freed(K_RSP, rsp, end(t, dat_rsp_free(rsp)));
    }
}

static void op_cr(struct th *t)
{
    unsigned x = below(t, 5);
    DAT_CR_PARAM p;
    DAT_CR_HANDLE cr;
    unsigned qi;
    if (x == 0) {
        begin(t, "dat_cr_query");
        cr = H(t, K_CR);
        DAT_CR_PARAM_MASK m = (DAT_CR_PARAM_MASK)mask(t, DAT_CR_FIELD_ALL);
        end(t, dat_cr_query(cr, m, O(t, &p)));
    } else if (x < 3) {
        begin(t, "dat_cr_accept");
        cr = H(t, K_CR);
        DAT_EP_HANDLE ep = H(t, K_EP);
        DAT_COUNT n = pd_size(t);
        const void *pd = below(t, 10) ? private_data : NULL;
        DAT_RETURN r = end(t, dat_cr_accept(cr, ep, n, (DAT_PVOID)pd));
        if (r == DAT_SUCCESS || is_err(r, DAT_INVALID_HANDLE))
            drop(K_CR, cr);
    } else if (x == 3) {
        begin(t, "dat_cr_reject");
        cr = H(t, K_CR);
        DAT_COUNT n = pd_size(t);
        const void *pd = below(t, 10) ? private_data : NULL;
        freed(K_CR, cr, end(t, cr_reject_pd(cr, n, pd)));
    } else {
        begin(t, "dat_cr_handoff");
        cr = H(t, K_CR);
        DAT_CONN_QUAL q = qual(t, &qi);
        freed(K_CR, cr, end(t, dat_cr_handoff(cr, q)));
    }
}

static void op_ep_create(struct th *t)
{
    DAT_EP_HANDLE ep = NULL;
    DAT_EP_ATTR a;
    unsigned srq = below(t, 4) == 0;
    begin(t, srq ? "dat_ep_create_with_srq" : "dat_ep_create");
    DAT_IA_HANDLE ia = H(t, K_IA);
    DAT_PZ_HANDLE pz = H(t, K_PZ);
    DAT_EVD_HANDLE recv = HW(t, K_EVD, DAT_EVD_DTO_FLAG), req = HW(t, K_EVD, DAT_EVD_DTO_FLAG);
    DAT_EVD_HANDLE conn = below(t, 8) ? HW(t, K_EVD, DAT_EVD_CONNECTION_FLAG) : (arg(t, "NULL"), NULL);
    DAT_SRQ_HANDLE s = srq ? H(t, K_SRQ) : NULL;
    DAT_EP_ATTR *ap = ep_attr(t, &a);
    DAT_EP_HANDLE *ep_out = O(t, &ep);
    DAT_RETURN r = end(t, srq ? dat_ep_create_with_srq(ia, pz, recv, req, conn, s, ap, ep_out)
                              : dat_ep_create(ia, pz, recv, req, conn, ap, ep_out));
    if (r == DAT_SUCCESS)
        keep(t, K_EP, ep, 0, (free_fn)dat_ep_free, "dat_ep_free");
}

static void op_ep_post(struct th *t)
{
    unsigned x = below(t, 4);
    static const char *const names[] = {"dat_ep_post_send", "dat_ep_post_recv", "dat_ep_post_rdma_read",
                                        "dat_ep_post_rdma_write"};
    begin(t, names[x]);
    DAT_EP_HANDLE ep = H(t, K_EP);
    DAT_COUNT n = count(t);
    DAT_LMR_TRIPLET *iov = ltrips(t, n);
    DAT_DTO_COOKIE c = ck(t);
    DAT_RMR_TRIPLET *riov = x >= 2 ? rtrip(t) : NULL;
    DAT_COMPLETION_FLAGS f = COMPLETION(t);
    switch (x) {
    case 0: end(t, dat_ep_post_send(ep, n, iov, c, f)); break;
    case 1: end(t, dat_ep_post_recv(ep, n, iov, c, f)); break;
    case 2: end(t, dat_ep_post_rdma_read(ep, n, iov, c, riov, f)); break;
    default: end(t, dat_ep_post_rdma_write(ep, n, iov, c, riov, f)); break;
    }
}

static void op_ep_connect(struct th *t)
{
    unsigned x = below(t, 6), qi;
    static const DAT_TIMEOUT tos[] = {2000000, 2000000, 0, 1, DAT_TIMEOUT_INFINITE};
    if (x < 5) {
        begin(t, "dat_ep_connect");
        DAT_EP_HANDLE ep = H(t, K_EP);
        DAT_IA_ADDRESS_PTR a = ia_addr(t);
        DAT_CONN_QUAL q = qual(t, &qi);
        DAT_TIMEOUT to = tos[below(t, 5)];
        arg(t, "timeout %u", (unsigned)to);
        DAT_COUNT n = pd_size(t);
        const void *pd = below(t, 10) ? private_data : NULL;
        DAT_QOS qos = below(t, 8) ? DAT_QOS_BEST_EFFORT : (DAT_QOS)rnd(t);
        DAT_CONNECT_FLAGS f = below(t, 8) ? DAT_CONNECT_DEFAULT_FLAG : (DAT_CONNECT_FLAGS)rnd(t);
        end(t, dat_ep_connect(ep, a, q, to, n, (DAT_PVOID)pd, qos, f));
    } else {
        begin(t, "dat_ep_dup_connect");
        DAT_EP_HANDLE ep = H(t, K_EP), dup = H(t, K_EP);
        DAT_TIMEOUT to = tos[below(t, 5)];
        DAT_COUNT n = pd_size(t);
        const void *pd = below(t, 10) ? private_data : NULL;
        end(t, dat_ep_dup_connect(ep, dup, to, n, (DAT_PVOID)pd, DAT_QOS_BEST_EFFORT));
    }
}

static void op_ep_misc(struct th *t)
{
    unsigned x = below(t, 9);
    DAT_EP_PARAM p;
    DAT_EP_STATE st;
    DAT_BOOLEAN ri, qi;
    DAT_COUNT a, b;
    DAT_EP_HANDLE ep;
    switch (x) {
    case 0: {
        begin(t, "dat_ep_query");
        ep = H(t, K_EP);
        DAT_EP_PARAM_MASK m = (DAT_EP_PARAM_MASK)mask(t, DAT_EP_FIELD_ALL);
        end(t, dat_ep_query(ep, m, O(t, &p)));
        break;
    }
    case 1: {
        begin(t, "dat_ep_modify");
        ep = H(t, K_EP);
        DAT_EP_PARAM_MASK m = (DAT_EP_PARAM_MASK)mask(t, DAT_EP_FIELD_ALL);
        memset(&p, 0, sizeof p);
        DAT_EP_ATTR attr;
        DAT_EP_ATTR *ap = ep_attr(t, &attr);
        if (ap)
            p.ep_attr = attr;
        p.pz_handle = H(t, K_PZ);
        p.recv_evd_handle = H(t, K_EVD);
        p.request_evd_handle = H(t, K_EVD);
        p.connect_evd_handle = H(t, K_EVD);
        end(t, dat_ep_modify(ep, m, below(t, 15) ? &p : NULL));
        break;
    }
    case 2: {
        begin(t, "dat_ep_disconnect");
        ep = H(t, K_EP);
        DAT_CLOSE_FLAGS f = (DAT_CLOSE_FLAGS)flags(t, close_flags, 3);
        end(t, dat_ep_disconnect(ep, f));
        break;
    }
    case 3: {
        begin(t, "dat_ep_get_status");
        ep = H(t, K_EP);
        DAT_EP_STATE *sp = O(t, &st);
        DAT_BOOLEAN *rp = O(t, &ri);
        end(t, dat_ep_get_status(ep, sp, rp, O(t, &qi)));
        break;
    }
    case 4:
        begin(t, "dat_ep_reset");
        ep = H(t, K_EP);
        end(t, dat_ep_reset(ep));
        break;
    case 5: {
        begin(t, "dat_ep_recv_query");
        ep = H(t, K_EP);
        DAT_COUNT *ap = O(t, &a);
        end(t, dat_ep_recv_query(ep, ap, O(t, &b)));
        break;
    }
    case 6: {
        begin(t, "dat_ep_set_watermark");
        ep = H(t, K_EP);
        DAT_COUNT s = count(t);
        end(t, dat_ep_set_watermark(ep, s, count(t)));
        break;
    }
    default:
        begin(t, "dat_ep_free");
        ep = H(t, K_EP);
        freed(K_EP, ep, end(t, dat_ep_free(ep)));
        break;
    }
}

static void op_srq(struct th *t)
{
    unsigned x = below(t, 7);
    DAT_SRQ_HANDLE srq = NULL;
    DAT_SRQ_PARAM p;
    DAT_SRQ_ATTR a;
    static const DAT_COUNT n[] = {0, 1, 4, 16, 64, -1, 1 << 20};
    switch (x) {
    case 0: case 1: {
        begin(t, "dat_srq_create");
        DAT_IA_HANDLE ia = H(t, K_IA);
        DAT_PZ_HANDLE pz = H(t, K_PZ);
        a.max_recv_dtos = n[below(t, 7)];
        a.max_recv_iov = n[below(t, 7)];
        a.low_watermark = n[below(t, 7)];
        arg(t, "attr %d/%d/%d", (int)a.max_recv_dtos, (int)a.max_recv_iov, (int)a.low_watermark);
        DAT_SRQ_ATTR *ap = below(t, 15) ? &a : NULL;
        if (end(t, dat_srq_create(ia, pz, ap, O(t, &srq))) == DAT_SUCCESS)
            keep(t, K_SRQ, srq, 0, (free_fn)dat_srq_free, "dat_srq_free");
        break;
    }
    case 2: {
        begin(t, "dat_srq_post_recv");
        srq = H(t, K_SRQ);
        DAT_COUNT c = count(t);
        DAT_LMR_TRIPLET *iov = ltrips(t, c);
        end(t, dat_srq_post_recv(srq, c, iov, ck(t)));
        break;
    }
    case 3: {
        begin(t, "dat_srq_query");
        srq = H(t, K_SRQ);
        DAT_SRQ_PARAM_MASK m = (DAT_SRQ_PARAM_MASK)mask(t, DAT_SRQ_FIELD_ALL);
        end(t, dat_srq_query(srq, m, O(t, &p)));
        break;
    }
    case 4:
        begin(t, "dat_srq_resize");
        srq = H(t, K_SRQ);
        end(t, dat_srq_resize(srq, count(t)));
        break;
    case 5:
        begin(t, "dat_srq_set_lw");
        srq = H(t, K_SRQ);
        end(t, dat_srq_set_lw(srq, count(t)));
        break;
    default:
        begin(t, "dat_srq_free");
        srq = H(t, K_SRQ);
        freed(K_SRQ, srq, end(t, dat_srq_free(srq)));
        break;
    }
}

static void op_misc(struct th *t)
{
    unsigned x = below(t, 6);
    const char *maj, *min;
    DAT_CONTEXT ctx;
    DAT_HANDLE_TYPE ht;
    DAT_COUNT nret;
    DAT_PROVIDER_INFO infos[16], *list[16];
    for (unsigned i = 0; i < 16; i++)
        list[i] = &infos[i];
    switch (x) {
    case 0: {
        begin(t, "dat_strerror");
        uint64_t r = rnd(t);
        DAT_RETURN code = below(t, 2) ? (DAT_RETURN)r : (DAT_RETURN)(DAT_CLASS_ERROR | (r & 0x3fff00ff));
        arg(t, "0x%08x", (unsigned)code);
        const char **mp = O(t, &maj);
        end(t, dat_strerror(code, mp, O(t, &min)));
        break;
    }
    case 1: {
        begin(t, "dat_registry_list_providers");
        static const DAT_COUNT maxes[] = {0, 1, 2, 16, -1};
        DAT_COUNT m = maxes[below(t, 5)];
        arg(t, "%d", (int)m);
        DAT_COUNT *np = O(t, &nret);
        end(t, dat_registry_list_providers(m, np, below(t, 15) ? list : NULL));
        break;
    }
    case 2: {
        int kind = (int)below(t, NKIND);
        begin(t, "dat_set_consumer_context");
        DAT_HANDLE h = H(t, kind);
        ctx.as_64 = rnd(t);
        end(t, dat_set_consumer_context(h, ctx));
        break;
    }
    case 3: {
        int kind = (int)below(t, NKIND);
        begin(t, "dat_get_consumer_context");
        DAT_HANDLE h = H(t, kind);
        end(t, dat_get_consumer_context(h, O(t, &ctx)));
        break;
    }
    case 4: {
        int kind = (int)below(t, NKIND);
        begin(t, "dat_get_handle_type");
        DAT_HANDLE h = H(t, kind);
        end(t, dat_get_handle_type(h, O(t, &ht)));
        break;
    }
    default: {
#if DAT_VERSION_MAJOR >= 2
        int kind = (int)below(t, NKIND);
        DAT_IA_HANDLE ia;
        begin(t, "dats_get_ia_handle");
        DAT_HANDLE h = H(t, kind);
        end(t, dats_get_ia_handle(h, O(t, &ia)));
#else
        begin(t, "dat_strerror");
        arg(t, "DAT_NOT_IMPLEMENTED");
        end(t, dat_strerror((DAT_RETURN)DAT_NOT_IMPLEMENTED, &maj, &min));
#endif
        break;
    }
    }
}

#if DAT_VERSION_MAJOR >= 2
/* dat_extension_op with each operation's own argument list (the provider reads them by the
 * operation code), and with operation codes no provider knows. */
static void op_ext(struct th *t)
{
    static DAT_UINT64 counters[256];
    unsigned x = below(t, 6);
    begin(t, "dat_extension_op");
    DAT_HANDLE h = H(t, x < 3 ? K_EP : below(t, 2) ? K_IA : K_EVD);
    DAT_DTO_COOKIE c = ck(t);
    switch (x) {
    case 0: {
        arg(t, "FETCH_AND_ADD");
        DAT_LMR_TRIPLET *l = ltrips(t, 1);
        DAT_RMR_TRIPLET *r = rtrip(t);
        uint64_t add = rnd(t);
        DAT_COMPLETION_FLAGS f = COMPLETION(t);
        end(t, dat_ib_post_fetch_and_add(h, add, l, c, r, f));
        break;
    }
    case 1: {
        arg(t, "CMP_AND_SWAP");
        DAT_LMR_TRIPLET *l = ltrips(t, 1);
        DAT_RMR_TRIPLET *r = rtrip(t);
        uint64_t a = rnd(t), b = rnd(t);
        DAT_COMPLETION_FLAGS f = COMPLETION(t);
        end(t, dat_ib_post_cmp_and_swap(h, a, b, l, c, r, f));
        break;
    }
    case 2: {
        arg(t, "RDMA_WRITE_IMMED");
        DAT_COUNT n = count(t);
        DAT_LMR_TRIPLET *l = ltrips(t, n);
        DAT_RMR_TRIPLET *r = rtrip(t);
        DAT_UINT32 imm = (DAT_UINT32)rnd(t);
        DAT_COMPLETION_FLAGS f = COMPLETION(t);
        end(t, dat_ib_post_rdma_write_immed(h, n, l, c, r, imm, f));
        break;
    }
    case 3: {
        arg(t, "QUERY_COUNTERS");
        static const int cntr[] = {0, 1, DCNT_IA_ALL_COUNTERS, DCNT_EP_ALL_COUNTERS, DCNT_EVD_ALL_COUNTERS, -1, 1000};
        int n = cntr[below(t, 7)];
        arg(t, "%d", n);
        DAT_UINT64 *out = below(t, 10) ? counters : NULL;
        int reset = (int)below(t, 2);
        end(t, dat_ib_query_counters(h, n, out, reset));
        break;
    }
    default: {
        /* past the IB operations (0x00-0x1d), below DAT_IB_OPEN_QUERY_OP (0x1000) */
        DAT_EXTENDED_OP op = (DAT_EXTENDED_OP)(0x100 + below(t, 0xe00));
        arg(t, "op 0x%x", (unsigned)op);
        end(t, dat_extension_op(h, op));
        break;
    }
    }
}
#endif

/* The first EP slot from `start` on (other than `skip`) whose EP is in `state`, asked with
 * dat_ep_get_status; -1 if none. */
static int ep_in_state(struct th *t, unsigned start, DAT_EP_STATE state, int skip)
{
    for (unsigned n = 0; n < SLOTS; n++) {
        unsigned i = (start + n) % SLOTS;
        DAT_EP_HANDLE ep = LD(&pool[K_EP][i]);
        DAT_EP_STATE st;
        if (ep == NULL || (int)i == skip)
            continue;
        begin(t, "dat_ep_get_status");
        arg(t, "EP[%u]", i);
        if (end(t, dat_ep_get_status(ep, &st, NULL, NULL)) == DAT_SUCCESS && st == state)
            return (int)i;
    }
    return -1;
}

/* A connection on purpose: connect an EP to a PSP's qualifier, look for the request on every
 * CR EVD, accept it with another EP. Every choice is drawn before the first call. */
static void op_connect_pair(struct th *t)
{
    unsigned pi = live_slot(K_PSP, below(t, SLOTS), 0), c0 = below(t, SLOTS), s0 = below(t, SLOTS);
    DAT_PSP_HANDLE psp = LD(&pool[K_PSP][pi]);
    unsigned k = LD(&pool_aux[K_PSP][pi]) & 0xffffffu;
    DAT_EVENT ev;
    if (psp == NULL || k == 0xffff)
        return;
    int ci = ep_in_state(t, c0, DAT_EP_STATE_UNCONNECTED, -1);
    int si = ci < 0 ? -1 : ep_in_state(t, s0, DAT_EP_STATE_UNCONNECTED, ci);
    if (si < 0)
        return;
    DAT_EP_HANDLE cep = LD(&pool[K_EP][ci]);
    begin(t, "dat_ep_connect");
    arg(t, "EP[%d],127.0.0.1,PSP[%u] qual base+%u,2s", ci, pi, k);
    DAT_RETURN r = end(t, dat_ep_connect(cep, (DAT_IA_ADDRESS_PTR)&addr_lo, g_qbase + k, 2000000, 8, private_data,
                                         DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
    if (r != DAT_SUCCESS)
        return;
    for (unsigned i = 0; i < SLOTS; i++) {
        DAT_EVD_HANDLE evd = LD(&pool[K_EVD][i]);
        if (evd == NULL || !(LD(&pool_aux[K_EVD][i]) & DAT_EVD_CR_FLAG))
            continue;
        DAT_COUNT nmore;
        begin(t, "dat_evd_wait");
        arg(t, "EVD[%u],20ms,1", i);
        if (end(t, dat_evd_wait(evd, 20000, 1, &ev, &nmore)) != DAT_SUCCESS)
            continue;
        if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT) {
            take_event(t, &ev);
            continue;
        }
        t->events[EV_CR]++;
        DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
        DAT_EP_HANDLE sep = LD(&pool[K_EP][si]);
        begin(t, "dat_cr_accept");
        arg(t, "new CR,EP[%d]", si);
        if (end(t, dat_cr_accept(cr, sep, 0, NULL)) != DAT_SUCCESS) {
            begin(t, "dat_cr_reject");
            arg(t, "new CR");
            end(t, cr_reject(cr));
            break;
        }
        /* both sides' connection events (ESTABLISHED), on every connection EVD */
        for (unsigned j = 0; j < SLOTS; j++) {
            DAT_EVD_HANDLE cevd = LD(&pool[K_EVD][j]);
            if (cevd == NULL || !(LD(&pool_aux[K_EVD][j]) & DAT_EVD_CONNECTION_FLAG))
                continue;
            begin(t, "dat_evd_wait");
            arg(t, "EVD[%u],20ms,1", j);
            if (end(t, dat_evd_wait(cevd, 20000, 1, &ev, &nmore)) == DAT_SUCCESS)
                take_event(t, &ev);
        }
        break;
    }
}

/* Traffic on purpose: a receive on every connected EP, a send and an RDMA write on one of them,
 * over the latest registrations; then one event from every DTO EVD. */
static void op_traffic(struct th *t)
{
    unsigned s0 = below(t, SLOTS);
    DAT_LMR_TRIPLET recv_iov[SLOTS], send_iov, write_iov;
    DAT_RMR_TRIPLET write_riov;
    DAT_DTO_COOKIE ck_recv = ck(t), ck_send = ck(t), ck_write = ck(t);
    DAT_EVENT ev;
    t->clean = 1;
    begin(t, "(choices of a traffic step)"); /* names the triplets drawn, should they crash */
    for (unsigned i = 0; i < SLOTS; i++) {
        ltrips(t, 1);
        recv_iov[i] = t->lt[0];
    }
    ltrips(t, 1);
    send_iov = t->lt[0];
    ltrips(t, 1);
    write_iov = t->lt[0];
    rtrip(t);
    write_riov = t->rt[0];
    /* every choice drawn: from here on, what the pool holds decides */
    int si = -1;
    for (unsigned n = 0; n < SLOTS; n++) {
        unsigned i = (s0 + n) % SLOTS;
        DAT_EP_HANDLE ep = LD(&pool[K_EP][i]);
        DAT_EP_STATE st;
        if (ep == NULL)
            continue;
        begin(t, "dat_ep_get_status");
        arg(t, "EP[%u]", i);
        if (end(t, dat_ep_get_status(ep, &st, NULL, NULL)) != DAT_SUCCESS || st != DAT_EP_STATE_CONNECTED)
            continue;
        if (si < 0)
            si = (int)i;
        begin(t, "dat_ep_post_recv");
        arg(t, "EP[%u],1", i);
        end(t, dat_ep_post_recv(ep, 1, &recv_iov[i], ck_recv, DAT_COMPLETION_DEFAULT_FLAG));
    }
    if (si >= 0) {
        DAT_EP_HANDLE sep = LD(&pool[K_EP][si]);
        begin(t, "dat_ep_post_send");
        arg(t, "EP[%d],1", si);
        end(t, dat_ep_post_send(sep, 1, &send_iov, ck_send, DAT_COMPLETION_DEFAULT_FLAG));
        begin(t, "dat_ep_post_rdma_write");
        arg(t, "EP[%d],1", si);
        end(t, dat_ep_post_rdma_write(sep, 1, &write_iov, ck_write, &write_riov, DAT_COMPLETION_DEFAULT_FLAG));
    }
    for (unsigned i = 0; i < SLOTS; i++) {
        DAT_EVD_HANDLE evd = LD(&pool[K_EVD][i]);
        if (evd == NULL || !(LD(&pool_aux[K_EVD][i]) & DAT_EVD_DTO_FLAG))
            continue;
        begin(t, "dat_evd_dequeue");
        arg(t, "EVD[%u]", i);
        if (end(t, dat_evd_dequeue(evd, &ev)) == DAT_SUCCESS)
            take_event(t, &ev);
    }
}

/* The live handle of `kind` (with flags `want`) of IA slot `ia`, creating one with `create` when
 * there is none; NULL when that fails. */
static DAT_HANDLE need(struct th *t, int kind, unsigned want, unsigned ia,
                       DAT_RETURN (*create)(DAT_IA_HANDLE, unsigned, DAT_HANDLE *), free_fn fr, const char *what,
                       const char *frname)
{
    unsigned i = live_slot_of(kind, 0, want, ia);
    DAT_HANDLE h = LD(&pool[kind][i]);
    if (h != NULL && IA_TAG(LD(&pool_aux[kind][i])) == ia && (LD(&pool_aux[kind][i]) & want) == want)
        return h;
    h = NULL;
    begin(t, what);
    arg(t, "IA[%u],0x%x", ia, want);
    if (end(t, create(LD(&pool[K_IA][ia]), want, &h)) != DAT_SUCCESS || h == NULL)
        return NULL;
    t->ia_slot = ia;
    keep(t, kind, h, want, fr, frname);
    /* with every slot taken keep freed it: an older one of that kind serves */
    i = live_slot_of(kind, 0, want, ia);
    return LD(&pool[kind][i]);
}

static DAT_RETURN create_pz(DAT_IA_HANDLE ia, unsigned want, DAT_HANDLE *h)
{
    (void)want;
    return dat_pz_create(ia, h);
}

static DAT_RETURN create_evd(DAT_IA_HANDLE ia, unsigned want, DAT_HANDLE *h)
{
    return dat_evd_create(ia, 64, NULL, (DAT_EVD_FLAGS)want, h);
}

/* Objects to work on, made with valid arguments: at the start, and now and then later, since the
 * random steps free and close what they find. On a live IA (one is opened when none is): a PZ,
 * EVDs for completions, connections and requests, two EPs, an LMR over an arena block and a PSP
 * on one of the qualifiers the connecting steps use. Takes no random draws: what it does depends
 * on the pool only. */
static void populate(struct th *t, int first)
{
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async = NULL;
    unsigned slot = live_slot(K_IA, 0, 0);
    ia = LD(&pool[K_IA][slot]);
    if (ia == NULL) {
        begin(t, "dat_ia_open");
        arg(t, "IA");
        if (end(t, dat_ia_open((const DAT_NAME_PTR)g_ia, 16, &async, &ia)) != DAT_SUCCESS) {
            if (first)
                fail_exit(t, 2, "cannot open IA %s", g_ia);
            return;
        }
        if (!put(K_IA, ia, 0)) {
            begin(t, "dat_ia_close");
            arg(t, "new IA");
            end(t, dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
            return;
        }
        slot = live_slot(K_IA, 0, 0);
        for (unsigned i = 0; i < IA_SLOTS; i++)
            if (LD(&pool[K_IA][i]) == ia)
                slot = i;
        put(K_EVD, async, DAT_EVD_ASYNC_FLAG | (slot << 24));
    }
    t->ia_slot = slot;
    DAT_PZ_HANDLE pz = need(t, K_PZ, 0, slot, create_pz, (free_fn)dat_pz_free, "dat_pz_create", "dat_pz_free");
    DAT_EVD_HANDLE req = need(t, K_EVD, DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG, slot, create_evd,
                              (free_fn)dat_evd_free, "dat_evd_create", "dat_evd_free");
    DAT_EVD_HANDLE recv = need(t, K_EVD, DAT_EVD_DTO_FLAG, slot, create_evd, (free_fn)dat_evd_free,
                               "dat_evd_create", "dat_evd_free");
    DAT_EVD_HANDLE conn = need(t, K_EVD, DAT_EVD_CONNECTION_FLAG, slot, create_evd, (free_fn)dat_evd_free,
                               "dat_evd_create", "dat_evd_free");
    DAT_EVD_HANDLE cr = need(t, K_EVD, DAT_EVD_CR_FLAG, slot, create_evd, (free_fn)dat_evd_free,
                             "dat_evd_create", "dat_evd_free");
    for (unsigned i = 0; i < 2; i++) {
        DAT_EP_HANDLE ep = NULL;
        begin(t, "dat_ep_create");
        arg(t, "IA[%u],its PZ and EVDs", slot);
        if (end(t, dat_ep_create(ia, pz, recv, req, conn, NULL, &ep)) == DAT_SUCCESS)
            keep(t, K_EP, ep, 0, (free_fn)dat_ep_free, "dat_ep_free");
    }
    DAT_REGION_DESCRIPTION rd;
    DAT_LMR_HANDLE lmr = NULL;
    DAT_LMR_CONTEXT lctx;
    DAT_RMR_CONTEXT rctx;
    DAT_VLEN rlen;
    DAT_VADDR raddr;
    unsigned blk = (unsigned)(t->step % ARENA_REGIONS);
    memset(&rd, 0, sizeof rd);
    rd.for_va = arena + blk * BLOCK;
    begin(t, "dat_lmr_create");
    arg(t, "IA[%u],arena block %u", slot, blk);
    if (end(t, lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, BLOCK, pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lctx, &rctx, &rlen,
                          &raddr)) == DAT_SUCCESS) {
        record(lmrs, &lmr_next, lctx, rctx, (uintptr_t)rd.for_va, BLOCK);
        keep(t, K_LMR, lmr, 0, (free_fn)dat_lmr_free, "dat_lmr_free");
    }
    unsigned k = (unsigned)(t->step % 8);
    DAT_PSP_HANDLE psp = NULL;
    begin(t, "dat_psp_create");
    arg(t, "IA[%u],qual base+%u", slot, k);
    if (end(t, dat_psp_create(ia, g_qbase + k, cr, DAT_PSP_CONSUMER_FLAG, &psp)) == DAT_SUCCESS)
        keep(t, K_PSP, psp, k, (free_fn)dat_psp_free, "dat_psp_free");
}

static void op_populate(struct th *t)
{
    populate(t, 0);
}

struct op {
    void (*fn)(struct th *);
    unsigned weight;
};
static const struct op ops[] = {
    {op_ia_open, 3},      {op_ia_close, 1},   {op_ia_query, 3}, {op_pz, 6},           {op_evd, 16},
    {op_cno, 4},          {op_lmr, 8},        {op_rmr, 6},      {op_psp, 5},          {op_rsp, 3},
    {op_cr, 5},           {op_ep_create, 8},  {op_ep_post, 14}, {op_ep_connect, 5},   {op_ep_misc, 10},
    {op_srq, 5},          {op_misc, 4},       {op_connect_pair, 6}, {op_traffic, 6}, {op_populate, 2},
#if DAT_VERSION_MAJOR >= 2
    {op_ext, 3},
#endif
};
#define NOPS (sizeof ops / sizeof ops[0])

static void *worker(void *p)
{
    struct th *t = p;
    int stack_int = 0x5a5a5a5a;
    t->stack_int = &stack_int;
    unsigned total = 0;
    for (unsigned i = 0; i < NOPS; i++)
        total += ops[i].weight;
    for (t->step = 0; t->step < g_steps && !g_stop; t->step++) {
        t->clean = below(t, 2);
        t->ia_slot = ANY_IA;
        unsigned w = below(t, total), i = 0;
        while (w >= ops[i].weight)
            w -= ops[i++].weight;
        ops[i].fn(t);
    }
    ST(&t->done, 1);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Watchdog, crash report                                              */
/* ------------------------------------------------------------------ */

static void wr(const char *s)
{
    ssize_t n = write(2, s, strlen(s));
    (void)n;
}

static void on_crash(int sig)
{
    char b[160];
    snprintf(b, sizeof b, "\napirand CRASH (%s, IA %s, seed %llu, %u threads): signal %d; calls in progress:\n",
             DCT_FACE, g_ia, (unsigned long long)g_seed, g_nthreads, sig);
    wr(b);
    for (unsigned i = 0; i < g_nthreads; i++) {
        wr("    ");
        wr(threads[i].cur);
        wr("\n");
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void *watchdog(void *p)
{
    (void)p;
    static uint64_t last[64], seen[64]; /* per thread (at most 64) */
    uint64_t start = now_s();
    for (unsigned i = 0; i < g_nthreads; i++)
        seen[i] = start; /* a thread not yet at its first call has made none for 0 s */
    for (;;) {
        sleep(1);
        uint64_t now = now_s();
        if (g_secs && now - start >= g_secs)
            g_stop = 1;
        for (unsigned i = 0; i < g_nthreads; i++) {
            struct th *t = &threads[i];
            uint64_t pr = LD(&t->progress);
            if (LD(&t->done) || pr != last[i]) {
                last[i] = pr;
                seen[i] = now;
                continue;
            }
            if (now - seen[i] < g_hang)
                continue;
            fprintf(stderr, "apirand HANG (%s, IA %s, seed %llu, %u threads): thread %u made no call for %u s, in\n"
                            "    %s)\n  calls in progress in the other threads:\n",
                    DCT_FACE, g_ia, (unsigned long long)g_seed, g_nthreads, i, g_hang, t->cur);
            for (unsigned j = 0; j < g_nthreads; j++)
                if (j != i && !LD(&threads[j].done))
                    fprintf(stderr, "    %s\n", threads[j].cur);
            fprintf(stderr, "  last calls of thread %u:\n", i);
            print_ring(stderr, t);
            fflush(stderr);
            const char *gdb = getenv("APIRAND_GDB");
            if (gdb) {
                /* APIRAND_GDB=vgdb: the process runs under valgrind, whose gdbserver answers */
                char cmd[PATH_MAX + 160];
                if (strcmp(gdb, "vgdb") == 0)
                    snprintf(cmd, sizeof cmd, "gdb -batch -ex 'target remote | vgdb --pid=%d' -ex 'thread apply all bt' %s >&2",
                             (int)getpid(), g_prog);
                else
                    snprintf(cmd, sizeof cmd, "gdb -batch -p %d -ex 'thread apply all bt' >&2", (int)getpid());
                if (system(cmd) != 0)
                    fprintf(stderr, "(gdb failed)\n");
            }
            _exit(3);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ */

static void setup_memory(void)
{
    char *m = mmap(NULL, ARENA_LEN + 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *g = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || g == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    mprotect(m, PAGE, PROT_NONE);
    mprotect(m + PAGE + ARENA_LEN, PAGE, PROT_NONE);
    arena = m + PAGE;
    memset(arena, 0x11, ARENA_LEN);
    noaccess_page = g;
    mprotect(noaccess_page, PAGE, PROT_NONE);
    unmapped_page = g + PAGE;
    munmap(unmapped_page, PAGE);
    heap_ff = malloc(256);
    heap_fake = malloc(256);
    memset(heap_ff, 0xff, 256);
    memset(heap_fake, 0xa5, 256);
    for (unsigned i = 0; i < sizeof private_data; i++)
        private_data[i] = (char)(i * 7);
    memset(&addr_lo, 0, sizeof addr_lo);
    addr_lo.sin_family = AF_INET;
    addr_lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr_testnet = addr_lo;
    addr_testnet.sin_addr.s_addr = htonl(0xc0000201u);
    addr_badfam = addr_lo;
    addr_badfam.sin_family = 0xff;
    memset(&addr_lo6, 0, sizeof addr_lo6);
    addr_lo6.sin6_family = AF_INET6;
    addr_lo6.sin6_addr = in6addr_loopback;
}

/* The fake handle's first word is a real handle's (the provider table pointer), from an IA that
 * is closed again: a library that trusted that word alone would take the fake for a handle. */
static void setup_fake_handle(void)
{
    DAT_IA_HANDLE ia = NULL;
    DAT_EVD_HANDLE async = NULL;
    if (dat_ia_open((const DAT_NAME_PTR)g_ia, 8, &async, &ia) != DAT_SUCCESS || ia == NULL) {
        fprintf(stderr, "apirand: cannot open IA %s\n", g_ia);
        exit(2);
    }
    memcpy(heap_fake, (void *)ia, sizeof(void *));
    dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
}

static void usage(const char *argv0)
{
    fprintf(stderr, "usage: %s -P IA [-s SEED] [-n STEPS] [-d SECONDS] [-t THREADS] [-w HANG_SECONDS] [-v]\n", argv0);
    exit(2);
}

int main(int argc, char **argv)
{
    int c;
    int seeded = 0;
    g_prog = argv[0];
    while ((c = getopt(argc, argv, "P:s:n:d:t:w:v")) != -1) {
        switch (c) {
        case 'P': g_ia = optarg; break;
        case 's': g_seed = strtoull(optarg, NULL, 0); seeded = 1; break;
        case 'n': g_steps = strtoull(optarg, NULL, 0); break;
        case 'd': g_secs = (unsigned)strtoul(optarg, NULL, 0); break;
        case 't': g_nthreads = (unsigned)strtoul(optarg, NULL, 0); break;
        case 'w': g_hang = (unsigned)strtoul(optarg, NULL, 0); break;
        case 'v': g_verbose = 1; break;
        default: usage(argv[0]);
        }
    }
    if (g_nthreads < 1 || g_nthreads > 64 || g_hang < 1)
        usage(argv[0]);
    if (!seeded) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        g_seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
    }
    g_qbase = 40000 + (DAT_CONN_QUAL)(getpid() % 2000) * 8;
    printf("apirand: %s, IA %s, seed %llu, %u thread%s, %llu steps each%s\n", DCT_FACE, g_ia,
           (unsigned long long)g_seed, g_nthreads, g_nthreads == 1 ? "" : "s", (unsigned long long)g_steps,
           g_secs ? " (or the time limit)" : "");
    fflush(stdout);
    setup_memory();
    setup_fake_handle();
    threads = calloc(g_nthreads, sizeof *threads);
    for (unsigned i = 0; i < g_nthreads; i++) {
        threads[i].id = i;
        threads[i].rng = g_seed * 0x100000001b3ULL + i;
        strcpy(threads[i].cur, "(none)");
    }
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], on_crash);
    populate(&threads[0], 1);
    pthread_t wd, *tid = calloc(g_nthreads, sizeof *tid);
    pthread_create(&wd, NULL, watchdog, NULL);
    for (unsigned i = 0; i < g_nthreads; i++)
        pthread_create(&tid[i], NULL, worker, &threads[i]);
    for (unsigned i = 0; i < g_nthreads; i++)
        pthread_join(tid[i], NULL);

    /* Close what is left: every other object goes with its IA. */
    for (unsigned i = 0; i < IA_SLOTS; i++) {
        DAT_IA_HANDLE ia = LD(&pool[K_IA][i]);
        if (ia == NULL)
            continue;
        begin(&threads[0], "dat_ia_close");
        arg(&threads[0], "IA[%u],abrupt", i);
        end(&threads[0], dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
    }

    uint64_t calls = 0, ok = 0, steps = 0, by_type[64] = {0}, events[EV_N] = {0};
    for (unsigned i = 0; i < g_nthreads; i++) {
        calls += threads[i].calls;
        ok += threads[i].ok;
        steps += threads[i].step;
        for (unsigned k = 0; k < 64; k++)
            by_type[k] += threads[i].by_type[k];
        for (unsigned k = 0; k < EV_N; k++)
            events[k] += threads[i].events[k];
    }
    printf("apirand: PASS %s, seed %llu, %u thread%s: %llu steps, %llu calls, %llu DAT_SUCCESS; errors by type:",
           DCT_FACE, (unsigned long long)g_seed, g_nthreads, g_nthreads == 1 ? "" : "s", (unsigned long long)steps,
           (unsigned long long)calls, (unsigned long long)ok);
    for (unsigned k = 0; k < 64; k++) {
        if (by_type[k] == 0)
            continue;
        const char *maj = NULL, *min = NULL;
        dat_strerror((DAT_RETURN)(DAT_CLASS_ERROR | (k << 16)), &maj, &min);
        printf(" %s %llu", k == 0 ? "DAT_INVALID_PARAMETER(no class bit, dat_strerror)" : k == 63 ? "DAT_NOT_IMPLEMENTED" : maj ? maj : "?",
               (unsigned long long)by_type[k]);
    }
    printf("\napirand: events taken: %llu connection requests, %llu established, %llu DTO completions"
           " (%llu with an error status), %llu others; %lu CNO agent calls\n",
           (unsigned long long)events[EV_CR], (unsigned long long)events[EV_ESTABLISHED],
           (unsigned long long)(events[EV_DTO_OK] + events[EV_DTO_ERR]), (unsigned long long)events[EV_DTO_ERR],
           (unsigned long long)events[EV_OTHER], LD(&agent_calls));
    /* threads stays: the watchdog reads it until the process ends */
    free(tid);
    return 0;
}
