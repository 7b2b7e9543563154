/*
 * datperf - latency and bandwidth of a DAT IA, perftest style, through the public DAT API only.
 *
 *   server:  datperf -P <ia> [-q qual]
 *   client:  datperf -P <ia> -h <server> [-q qual] [-t test] [-s size | -a] [-n iters] [-w window]
 *                    [-W warmup] [-p | -b | -C] [-c] [-m] [-M heap|shm]
 *   both:    datperf -P <ia> -l [-h <address>] [-q qual] [-t send_lat|write_lat|send_bw] [options]
 *   local:   datperf -P <ia> -t lmr_reg [-s size] [-n iters] [-W warmup] [-m] [-M heap|shm]
 *
 * The client chooses everything and sends its choice to the server in the connection request's
 * private data; the server answers with its buffer's RMR context and addresses in the accept's
 * private data. One connection runs every size of one test, then the client disconnects.
 *
 * Tests (-t):
 *   send_lat   send/recv ping-pong; one-way latency = round trip / 2 (like ib_send_lat)
 *   write_lat  RDMA-write ping-pong: each side spins on the last byte of its buffer for the
 *              peer's write (like ib_write_lat); -b only changes how the own write's
 *              completion is reaped, the arrival is always seen by spinning on memory
 *   write_bw   RDMA writes, -w outstanding (like ib_write_bw)
 *   read_bw    RDMA reads, -w outstanding (like ib_read_bw)
 *   send_bw    sends, -w outstanding; the receiver hands out credits so a send never finds no
 *              receive posted (iWARP has no receiver-not-ready retry)
 *   lmr_reg    no connection: dat_lmr_create + dat_lmr_free of one -s byte buffer in a loop, the
 *              pairs per second (what an MPI that registers per message pays; ibv_reg_mr +
 *              ibv_dereg_mr is its verbs floor, rawperf reg_mr)
 * Bandwidth tests also report the message rate.
 *
 * Completions: -p (default) spins on dat_evd_dequeue; -b sleeps in dat_evd_wait; -C is -b but
 * for the receive EVD, which has a CNO attached: a receive is waited for by sleeping in
 * dat_cno_wait until the CNO fires, then taken with dat_evd_dequeue (what a consumer of several
 * EVDs does), so -C against -b is the cost of the CNO's wake-up.
 * Loopback (-l): one process holds both ends, each with its own IA, and one thread spins through
 * both ends' steps (latency tests and send_bw, -p only): the polling latency and message rate
 * without a second spinning process, which on one CPU would take turns at the scheduler's tick.
 * Memory (-M, both sides): heap (default: posix_memalign, DAT_MEM_TYPE_VIRTUAL LMRs) or shm (a
 * memfd sealed against shrinking, mapped MAP_SHARED, DAT_MEM_TYPE_SHARED_VIRTUAL LMRs: memory
 * a peer process can map, so that shm's RDMA can copy straight into it).
 * Round trips are stamped with the TSC on x86 (see ticks()), like perftest.
 * Each result carries the CPU time (getrusage user+system) and the voluntary and involuntary
 * context switches per operation of both sides, both processes' thread counts (from
 * /proc/self/status), and the context switches per operation of every thread but datperf's own
 * (the library's background threads, from /proc/self/task/<tid>/status): a message handed to
 * another thread wakes that thread, so that figure is about 1 or more per message where one is,
 * and near 0 where the caller's thread does all the work.
 * -c checks every payload (costs time: do not combine with timing runs). -m prints one
 * "key=value ..." line per result (for scripts) instead of the table.
 * Any DAT error prints dat_strerror's names and exits 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dat_compat.h"

#define EVENT_TIMEOUT_S 30        /* give up waiting for any single event after this */
#define CTRL_LEN 64               /* control messages (start, ready, credit, done, stats) */
#define CTRL_AREA 4096            /* [0,64) control message, [64,128) credit message */
#define RING_BYTES_CAP (32u << 20) /* receive ring memory above which slots alias (without -c) */
#define MAX_WINDOW 120            /* receive queue 2*window+4 must fit the default 256 */
#define MAX_SIZE (4u << 20)
#define PD_MAGIC 0x44505246u      /* "DPRF" */

enum test { T_SEND_LAT, T_WRITE_LAT, T_WRITE_BW, T_READ_BW, T_SEND_BW, T_LMR_REG, T_COUNT };
static const char *const test_names[T_COUNT] = {"send_lat", "write_lat", "write_bw", "read_bw", "send_bw", "lmr_reg"};
static int is_latency_test(int t) { return t == T_SEND_LAT || t == T_WRITE_LAT; }
/* tests of one process without a connection */
static int is_local_test(int t) { return t == T_LMR_REG; }

enum ctrl_type { C_START = 1, C_READY, C_CREDIT, C_DONE, C_STATS };

/* What the client asks for (connection request private data, with its RMR part). */
struct config {
    uint32_t test, flags, min_size, max_size, iters, warmup, window;
    uint32_t signal_every; /* send_lat: only every Nth send asks for a completion (-u) */
};
#define F_VERIFY 1u
#define F_BLOCK 2u
#define F_SHM_MEM 4u /* -M shm */
#define F_LOOPBACK 8u /* -l */
#define F_CNO 16u /* -C (with F_BLOCK) */

/* Where a side's RDMA areas are, for the peer. */
struct remote {
    uint32_t rmr_context;
    uint64_t src, dst;
};

/* getrusage and thread figures of one side over one round */
struct usage {
    double cpu_s;
    long vcsw, ivcsw;
    long threads;
    long other_cs; /* context switches (both kinds) of the process's other threads */
};

struct side {
    struct config cfg;
    int server, poll;
    int patient; /* blocking waits outlast EVENT_TIMEOUT_S while the connection stands */
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd, req_evd, rcv_evd, conn_evd, cr_evd;
    DAT_CNO_HANDLE cno; /* -C: attached to rcv_evd */
    DAT_PZ_HANDLE pz;
    DAT_EP_HANDLE ep;
    DAT_PSP_HANDLE psp;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lmr_ctx;
    DAT_RMR_CONTEXT rmr_ctx;
    /* one registered buffer: control area, receive ring, RDMA source, RDMA destination */
    char *buf, *ring, *src, *dst;
    size_t buflen, slot_len;
    unsigned ring_slots, rq_depth;
    uint64_t req_posted, req_done, rcv_posted, rcv_done; /* cookies are these counters */
    struct remote peer;
    struct usage mark; /* usage at the start of the measured part */
};

/* ------------------------------------------------------------------ errors and clocks */

static void check(DAT_RETURN r, const char *what)
{
    if (r == DAT_SUCCESS)
        return;
    const char *maj = "?", *min = "";
    dat_strerror(r, &maj, &min);
    fprintf(stderr, "datperf: %s failed: 0x%08x %s %s\n", what, (unsigned)r, maj, min ? min : "");
    exit(1);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "datperf: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Round-trip stamps. On x86 the time-stamp counter (as perftest's get_cycles), converted to
 * seconds with its rate measured against CLOCK_MONOTONIC over the whole run: in an emulated
 * guest CLOCK_MONOTONIC reads the HPET, a system call of microseconds that would otherwise be
 * counted in every round trip. Elsewhere the clock itself, in nanoseconds. */
static uint64_t ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return (uint64_t)(now() * 1e9);
#endif
}

/* A run's tick rate: start before the first stamp, then ticks_to_seconds on the samples. */
struct tick_rate {
    double clock0;
    uint64_t ticks0;
};

static struct tick_rate tick_rate_start(void)
{
    struct tick_rate r = {now(), ticks()};
    return r;
}

static void ticks_to_seconds(const struct tick_rate *r, double *samples, uint64_t n)
{
    double secs = now() - r->clock0;
    uint64_t dt = ticks() - r->ticks0;
    double per_tick = dt ? secs / (double)dt : 0;
    for (uint64_t i = 0; i < n; i++)
        samples[i] *= per_tick;
}

static long thread_count(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long n = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %ld", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* The voluntary plus involuntary context switches of every thread of this process but the
 * calling one (datperf is single-threaded: these are the library's threads). */
static long other_threads_cs(void)
{
    long self = (long)syscall(SYS_gettid), total = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        char path[64], line[256];
        long tid = atol(e->d_name), n;
        if (tid <= 0 || tid == self)
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread ended meanwhile */
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1 ||
                sscanf(line, "nonvoluntary_ctxt_switches: %ld", &n) == 1)
                total += n;
        fclose(f);
    }
    closedir(d);
    return total;
}

static struct usage usage_now(void)
{
    struct rusage ru;
    struct usage u;
    getrusage(RUSAGE_SELF, &ru);
    u.cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
              (double)ru.ru_stime.tv_usec / 1e6;
    u.vcsw = ru.ru_nvcsw;
    u.ivcsw = ru.ru_nivcsw;
    u.threads = thread_count();
    u.other_cs = other_threads_cs();
    return u;
}

static struct usage usage_since(const struct usage *start)
{
    struct usage u = usage_now();
    u.cpu_s -= start->cpu_s;
    u.vcsw -= start->vcsw;
    u.ivcsw -= start->ivcsw;
    u.other_cs -= start->other_cs;
    return u;
}

/* ------------------------------------------------------------------ wire encoding */

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#define REMOTE_LEN 20
static void put_remote(unsigned char *p, const struct remote *r)
{
    put32(p, r->rmr_context);
    put64(p + 4, r->src);
    put64(p + 12, r->dst);
}
static struct remote get_remote(const unsigned char *p)
{
    struct remote r = {get32(p), get64(p + 4), get64(p + 12)};
    return r;
}

/* connection request private data: magic, config (test and flags share a word), the client's
 * remote areas: 48 bytes, within the 56 an InfiniBand connection request carries for the
 * consumer (through rdma_cm, and through OFED's uDAPL) */
#define REQ_PD_LEN (4 + 6 * 4 + REMOTE_LEN)
static void put_request(unsigned char *p, const struct config *c, const struct remote *r)
{
    /* test (8 bits), flags (8 bits), signal_every (16 bits) share the first word */
    const uint32_t v[6] = {c->test | c->flags << 8 | c->signal_every << 16,
                           c->min_size, c->max_size, c->iters, c->warmup, c->window};
    put32(p, PD_MAGIC);
    for (int i = 0; i < 6; i++)
        put32(p + 4 + 4 * i, v[i]);
    put_remote(p + 28, r);
}
static int get_request(const unsigned char *p, struct config *c, struct remote *r)
{
    if (get32(p) != PD_MAGIC)
        return 0;
    uint32_t v[6];
    for (int i = 0; i < 6; i++)
        v[i] = get32(p + 4 + 4 * i);
    c->test = v[0] & 0xff, c->flags = (v[0] >> 8) & 0xff, c->signal_every = v[0] >> 16;
    c->min_size = v[1], c->max_size = v[2];
    c->iters = v[3], c->warmup = v[4], c->window = v[5];
    *r = get_remote(p + 28);
    return 1;
}

/* Control message: type, round, then up to 6 64-bit values. */
struct ctrl {
    uint32_t type, round;
    uint64_t v[6];
};
static void put_ctrl(unsigned char *p, const struct ctrl *m)
{
    memset(p, 0, CTRL_LEN);
    put32(p, m->type);
    put32(p + 4, m->round);
    for (int i = 0; i < 6; i++)
        put64(p + 8 + 8 * i, m->v[i]);
}
static struct ctrl get_ctrl(const unsigned char *p)
{
    struct ctrl m;
    m.type = get32(p);
    m.round = get32(p + 4);
    for (int i = 0; i < 6; i++)
        m.v[i] = get64(p + 8 + 8 * i);
    return m;
}

/* ------------------------------------------------------------------ payload patterns */

static unsigned char pattern_byte(uint64_t seed, size_t i) { return (unsigned char)(seed * 131u + i * 7u + 1u); }

static void fill_pattern(char *p, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (char)pattern_byte(seed, i);
}

static int pattern_ok(const volatile char *p, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)p[i] != pattern_byte(seed, i))
            return 0;
    return 1;
}

/* write_lat: the last byte of iteration i's message, never 0 and never equal to i-1's */
static char write_tag(uint64_t i) { return (char)(1 + i % 255); }

/* ------------------------------------------------------------------ events */

/* One event from evd without blocking: 1 if there was one. */
static int try_event(DAT_EVD_HANDLE evd, DAT_EVENT *ev, const char *what)
{
    DAT_RETURN r = dat_evd_dequeue(evd, ev);
    if (r == DAT_SUCCESS)
        return 1;
    if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
        check(r, what);
    return 0;
}

/* The next event on evd, which has the side's CNO attached (-C): dat_evd_dequeue, and while
 * there is nothing, dat_cno_wait for the CNO to fire (on any of its EVDs; a wake-up that brings
 * nothing for evd is followed by another wait). */
static DAT_EVENT next_event_cno(const struct side *s, DAT_EVD_HANDLE evd, const char *what)
{
    DAT_EVENT ev;
    while (!try_event(evd, &ev, what)) {
        DAT_EVD_HANDLE fired = DAT_HANDLE_NULL;
        DAT_RETURN r = dat_cno_wait(s->cno, EVENT_TIMEOUT_S * 1000000u, &fired);
        if (r == DAT_SUCCESS)
            continue;
        if (DAT_GET_TYPE(r) != DAT_TIMEOUT_EXPIRED || !s->patient)
            check(r, what);
        DAT_EVENT cev;
        if (try_event(s->conn_evd, &cev, "connection events"))
            fail("%s: connection event 0x%x instead", what, (unsigned)cev.event_number);
    }
    return ev;
}

/* Next event on evd: spinning on dat_evd_dequeue (poll mode) or in dat_evd_wait, or for the
 * receive EVD of -C, in dat_cno_wait. */
static DAT_EVENT next_event(const struct side *s, DAT_EVD_HANDLE evd, const char *what)
{
    DAT_EVENT ev;
    if (s->cno && evd == s->rcv_evd)
        return next_event_cno(s, evd, what);
    if (s->poll) {
        double deadline = 0;
        for (unsigned spins = 0; !try_event(evd, &ev, what); spins++) {
            if ((spins & 1023) != 1023)
                continue;
            if (deadline == 0)
                deadline = now() + EVENT_TIMEOUT_S;
            else if (now() > deadline)
                fail("%s: no event within %d s", what, EVENT_TIMEOUT_S);
        }
    } else {
        DAT_COUNT nmore;
        DAT_RETURN r;
        while ((r = dat_evd_wait(evd, EVENT_TIMEOUT_S * 1000000u, 1, &ev, &nmore)) != DAT_SUCCESS &&
               DAT_GET_TYPE(r) == DAT_TIMEOUT_EXPIRED && s->patient) {
            DAT_EVENT cev;
            if (try_event(s->conn_evd, &cev, "connection events"))
                fail("%s: connection event 0x%x instead", what, (unsigned)cev.event_number);
        }
        check(r, what);
    }
    return ev;
}

static DAT_EVENT expect_event(const struct side *s, DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, const char *what)
{
    DAT_EVENT ev = next_event(s, evd, what);
    if (ev.event_number != want)
        fail("%s: expected event 0x%x, got 0x%x", what, (unsigned)want, (unsigned)ev.event_number);
    return ev;
}

/* A DTO completion must be successful and carry the next cookie of its queue. */
static void check_dto(const DAT_EVENT *ev, uint64_t *done, const char *what)
{
    if (ev->event_number != DAT_DTO_COMPLETION_EVENT)
        fail("%s: expected a DTO completion, got event 0x%x", what, (unsigned)ev->event_number);
    const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev->event_data.dto_completion_event_data;
    if (d->status != DAT_DTO_SUCCESS)
        fail("%s: completion status %d", what, (int)d->status);
    if (d->user_cookie.as_64 != *done)
        fail("%s: completion cookie %llu, expected %llu", what, (unsigned long long)d->user_cookie.as_64,
             (unsigned long long)*done);
    (*done)++;
}

/* Reap one request (send/RDMA) completion, blocking or spinning. */
static void reap_request(struct side *s)
{
    DAT_EVENT ev = next_event(s, s->req_evd, "request completion");
    check_dto(&ev, &s->req_done, "request completion");
}

/* Reap a request completion if one is there. */
static int try_reap_request(struct side *s)
{
    DAT_EVENT ev;
    if (!try_event(s->req_evd, &ev, "request completion"))
        return 0;
    check_dto(&ev, &s->req_done, "request completion");
    return 1;
}

/* ------------------------------------------------------------------ posting */

static DAT_DTO_COOKIE cookie(uint64_t v)
{
    DAT_DTO_COOKIE k;
    k.as_64 = v;
    return k;
}

static char *ring_slot(const struct side *s, uint64_t seq) { return s->ring + (seq % s->ring_slots) * s->slot_len; }

static void post_recv(struct side *s)
{
    DAT_LMR_TRIPLET t = dp_lmr_triplet(s->lmr_ctx, ring_slot(s, s->rcv_posted), s->slot_len);
    check(dat_ep_post_recv(s->ep, 1, &t, cookie(s->rcv_posted), DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
    s->rcv_posted++;
}

/* Take the next receive completion if there is one (or wait for it when block): its slot, and
 * post a replacement receive at once (the queue stays rq_depth deep). NULL if none yet. */
static char *take_recv(struct side *s, int block, const char *what)
{
    DAT_EVENT ev;
    if (block)
        ev = next_event(s, s->rcv_evd, what);
    else if (!try_event(s->rcv_evd, &ev, what))
        return NULL;
    uint64_t seq = s->rcv_done;
    check_dto(&ev, &s->rcv_done, what);
    return ring_slot(s, seq);
}

static void post_send(struct side *s, const void *addr, DAT_VLEN len)
{
    DAT_LMR_TRIPLET t = dp_lmr_triplet(s->lmr_ctx, addr, len);
    check(dat_ep_post_send(s->ep, 1, &t, cookie(s->req_posted), DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_send");
    s->req_posted++;
}

/* A send_lat message. With -u N only every Nth asks for a completion, the others carry
 * DAT_COMPLETION_SUPPRESS_FLAG (as ib_send_lat signals one send in N); a suppressed send counts
 * as done at once (every earlier one is reaped before the next message is posted). */
static void post_ping(struct side *s, const void *addr, DAT_VLEN len)
{
    uint32_t n = s->cfg.signal_every;
    int suppress = n > 1 && (s->req_posted + 1) % n != 0;
    DAT_LMR_TRIPLET t = dp_lmr_triplet(s->lmr_ctx, addr, len);
    check(dat_ep_post_send(s->ep, 1, &t, cookie(s->req_posted),
                           suppress ? DAT_COMPLETION_SUPPRESS_FLAG : DAT_COMPLETION_DEFAULT_FLAG),
          "dat_ep_post_send");
    s->req_posted++;
    s->req_done += (uint64_t)suppress;
}

static void post_rdma(struct side *s, int write, void *local, uint64_t remote, DAT_VLEN len)
{
    DAT_LMR_TRIPLET l = dp_lmr_triplet(s->lmr_ctx, local, len);
    DAT_RMR_TRIPLET r = dp_rmr_triplet(s->peer.rmr_context, remote, len);
    if (write)
        check(dat_ep_post_rdma_write(s->ep, 1, &l, cookie(s->req_posted), &r, DAT_COMPLETION_DEFAULT_FLAG),
              "dat_ep_post_rdma_write");
    else
        check(dat_ep_post_rdma_read(s->ep, 1, &l, cookie(s->req_posted), &r, DAT_COMPLETION_DEFAULT_FLAG),
              "dat_ep_post_rdma_read");
    s->req_posted++;
}

/* Send a control message and wait for its completion (nothing else is outstanding then). */
static void send_ctrl(struct side *s, uint32_t type, uint32_t round, const uint64_t *v, int nv)
{
    struct ctrl m;
    memset(&m, 0, sizeof m);
    m.type = type;
    m.round = round;
    for (int i = 0; i < nv; i++)
        m.v[i] = v[i];
    put_ctrl((unsigned char *)s->buf, &m);
    post_send(s, s->buf, CTRL_LEN);
    while (s->req_done < s->req_posted)
        reap_request(s);
}

/* Wait for a control message of this type; credits still in flight from a send_bw round are
 * consumed on the way. */
static struct ctrl wait_ctrl(struct side *s, uint32_t type, const char *what)
{
    for (;;) {
        char *slot = take_recv(s, 1, what);
        struct ctrl m = get_ctrl((unsigned char *)slot);
        post_recv(s);
        if (m.type == C_CREDIT && type != C_CREDIT)
            continue;
        if (m.type != type)
            fail("%s: expected control message %u, got %u", what, type, m.type);
        return m;
    }
}

/* ------------------------------------------------------------------ set-up */

static void open_ia(struct side *s, char *ia_name)
{
    s->async_evd = DAT_HANDLE_NULL;
    check(dat_ia_open(ia_name, 8, &s->async_evd, &s->ia), "dat_ia_open");
    check(dat_pz_create(s->ia, &s->pz), "dat_pz_create");
    DAT_COUNT qlen = 2 * MAX_WINDOW + 16;
    check(dat_evd_create(s->ia, qlen, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->req_evd), "dat_evd_create(requests)");
    check(dat_evd_create(s->ia, qlen, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->rcv_evd), "dat_evd_create(receives)");
    check(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn_evd),
          "dat_evd_create(connection)");
}

/* -C: a CNO attached to the receive EVD (both sides, once the configuration is known). */
static void attach_cno(struct side *s)
{
    if (!(s->cfg.flags & F_CNO))
        return;
    check(dat_cno_create(s->ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &s->cno), "dat_cno_create");
    check(dat_evd_modify_cno(s->rcv_evd, s->cno), "dat_evd_modify_cno");
}

/* The endpoint, with queues deep enough for the window: the provider's default attributes
 * (read from a probe endpoint), but max_recv_dtos and max_request_dtos ours (providers' defaults
 * differ: OFED's uDAPL takes fewer receives than datperf keeps posted). */
static void create_ep(struct side *s)
{
    DAT_EP_HANDLE probe;
    DAT_EP_PARAM param;
    check(dat_ep_create(s->ia, s->pz, s->rcv_evd, s->req_evd, s->conn_evd, NULL, &probe), "dat_ep_create");
    check(dat_ep_query(probe, DAT_EP_FIELD_ALL, &param), "dat_ep_query");
    check(dat_ep_free(probe), "dat_ep_free");
    DAT_EP_ATTR attr = param.ep_attr;
    attr.max_recv_dtos = (DAT_COUNT)s->rq_depth;
    /* the window (or the unsignaled sends of -u, which hold send-queue slots until the next
     * signaled one completes), plus credits (at most 8 outstanding) or control messages */
    uint32_t depth = s->cfg.window > 8 ? s->cfg.window : 8;
    if (s->cfg.signal_every > depth)
        depth = s->cfg.signal_every;
    attr.max_request_dtos = (DAT_COUNT)depth + 4;
    check(dat_ep_create(s->ia, s->pz, s->rcv_evd, s->req_evd, s->conn_evd, &attr, &s->ep), "dat_ep_create");
}

/* len zeroed bytes, page aligned: from the heap, or (shm) in a memfd mapped MAP_SHARED, which
 * the memfd's descriptor, closed here, does not outlive: the mapping keeps the file. The file
 * is sealed against shrinking: shm's peers map only memory nobody can shrink under them. */
static void *alloc_buffer(size_t len, int shm)
{
    void *mem = NULL;
    if (!shm) {
        if (posix_memalign(&mem, 4096, len) != 0)
            fail("out of memory (%zu bytes)", len);
        memset(mem, 0, len);
        return mem;
    }
    int fd = memfd_create("datperf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0)
        fail("memfd of %zu bytes: %s", len, strerror(errno));
    mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED)
        fail("mmap of the memfd: %s", strerror(errno));
    return mem;
}

static void free_buffer(struct side *s)
{
    if (s->cfg.flags & F_SHM_MEM)
        munmap(s->buf, s->buflen);
    else
        free(s->buf);
}

/* s->lmr: len bytes at buf (from alloc_buffer with -M's choice), every privilege. */
static void create_lmr(struct side *s, char *buf, size_t len)
{
    DAT_REGION_DESCRIPTION region;
    memset(&region, 0, sizeof region);
    DAT_MEM_TYPE type = DAT_MEM_TYPE_VIRTUAL;
    static char shm_id[DAT_LMR_COOKIE_SIZE] = "datperf";
    if (s->cfg.flags & F_SHM_MEM) {
        type = DAT_MEM_TYPE_SHARED_VIRTUAL;
        region.for_shared_memory.virtual_address = buf;
        region.for_shared_memory.shared_memory_id = &shm_id;
    } else {
        region.for_va = buf;
    }
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    check(DP_LMR_CREATE(s->ia, type, region, len, s->pz, DAT_MEM_PRIV_ALL_FLAG, &s->lmr, &s->lmr_ctx, &s->rmr_ctx,
                        &reg_len, &reg_addr),
          "dat_lmr_create");
}

/* The registered buffer, sized by the configuration (both sides know it by then). */
static void register_buffer(struct side *s)
{
    const struct config *c = &s->cfg;
    s->rq_depth = 2 * c->window + 4;
    s->slot_len = c->max_size > CTRL_LEN ? c->max_size : CTRL_LEN;
    s->ring_slots = s->rq_depth;
    if (!(c->flags & F_VERIFY) && (size_t)s->ring_slots * s->slot_len > RING_BYTES_CAP) {
        s->ring_slots = (unsigned)(RING_BYTES_CAP / s->slot_len);
        if (s->ring_slots < 2)
            s->ring_slots = 2;
    }
    size_t ring_bytes = (size_t)s->ring_slots * s->slot_len;
    size_t area = ((size_t)c->max_size + 4095) & ~(size_t)4095;
    s->buflen = CTRL_AREA + ring_bytes + 2 * area;
    void *mem = alloc_buffer(s->buflen, c->flags & F_SHM_MEM);
    s->buf = mem;
    s->ring = s->buf + CTRL_AREA;
    s->src = s->ring + ring_bytes;
    s->dst = s->src + area;
    struct ctrl credit = {C_CREDIT, 0, {0}};
    put_ctrl((unsigned char *)s->buf + CTRL_LEN, &credit);
    create_lmr(s, s->buf, s->buflen);
}

static struct remote my_remote(const struct side *s)
{
    struct remote r = {s->rmr_ctx, (uint64_t)(uintptr_t)s->src, (uint64_t)(uintptr_t)s->dst};
    return r;
}

static void teardown(struct side *s)
{
    check(dat_ep_free(s->ep), "dat_ep_free");
    if (s->cno) {
        check(dat_evd_modify_cno(s->rcv_evd, DAT_HANDLE_NULL), "dat_evd_modify_cno(none)");
        check(dat_cno_free(s->cno), "dat_cno_free");
    }
    if (s->psp)
        check(dat_psp_free(s->psp), "dat_psp_free");
    check(dat_lmr_free(s->lmr), "dat_lmr_free");
    check(dat_evd_free(s->req_evd), "dat_evd_free(requests)");
    check(dat_evd_free(s->rcv_evd), "dat_evd_free(receives)");
    check(dat_evd_free(s->conn_evd), "dat_evd_free(connection)");
    if (s->cr_evd)
        check(dat_evd_free(s->cr_evd), "dat_evd_free(CR)");
    check(dat_pz_free(s->pz), "dat_pz_free");
    check(dat_ia_close(s->ia, DAT_CLOSE_GRACEFUL_FLAG), "dat_ia_close");
    free_buffer(s);
}

/* Wait for DISCONNECTED, skipping nothing else. */
static void wait_disconnected(struct side *s)
{
    expect_event(s, s->conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, "waiting for DISCONNECTED");
}

/* ------------------------------------------------------------------ the tests */

/* What one round measured on the client. */
struct result {
    double *rtt;  /* latency tests: round trip of each measured iteration, seconds */
    double secs;  /* bandwidth tests: first post to last completion; lmr_reg: the measured pairs */
    uint64_t ops; /* measured operations */
    struct usage mine, peer;
};

/* send_lat's server step for ping i: take it (checked with -c), repost its receive, answer. */
static void answer_ping(struct side *s, uint32_t size, uint64_t i)
{
    char *ping = take_recv(s, 1, "receive ping");
    if (s->cfg.flags & F_VERIFY) {
        if (!pattern_ok(ping, size, i))
            fail("send_lat: ping %llu has wrong data", (unsigned long long)i);
        memset(ping, 0, size);
        fill_pattern(s->src, size, ~i);
    }
    post_recv(s);
    post_ping(s, s->src, size);
}

/* send_lat's client step after pong i: check it (-c), repost its receive. */
static void finish_pong(struct side *s, char *pong, uint32_t size, uint64_t i)
{
    if (s->cfg.flags & F_VERIFY) {
        if (!pattern_ok(pong, size, ~i))
            fail("send_lat: pong %llu has wrong data", (unsigned long long)i);
        memset(pong, 0, size);
    }
    post_recv(s);
}

/* Poll mode spins on two EVDs at once; blocking mode waits for them in turn. */
static void send_lat_client(struct side *s, uint32_t size, struct result *res)
{
    const struct config *c = &s->cfg;
    int verify = c->flags & F_VERIFY;
    uint64_t total = (uint64_t)c->iters + c->warmup;
    struct tick_rate rate = tick_rate_start();
    for (uint64_t i = 0; i < total; i++) {
        if (i == c->warmup)
            s->mark = usage_now();
        if (verify)
            fill_pattern(s->src, size, i);
        uint64_t t0 = ticks();
        post_ping(s, s->src, size);
        char *pong = NULL;
        if (s->poll) {
            while (s->req_done < s->req_posted || !pong) {
                if (s->req_done < s->req_posted)
                    try_reap_request(s);
                if (!pong)
                    pong = take_recv(s, 0, "receive pong");
            }
        } else {
            if (s->req_done < s->req_posted)
                reap_request(s);
            pong = take_recv(s, 1, "receive pong");
        }
        uint64_t t1 = ticks();
        finish_pong(s, pong, size, i);
        if (i >= c->warmup)
            res->rtt[i - c->warmup] = (double)(t1 - t0);
    }
    res->mine = usage_since(&s->mark);
    ticks_to_seconds(&rate, res->rtt, c->iters);
}

static void send_lat_server(struct side *s, uint32_t size)
{
    const struct config *c = &s->cfg;
    uint64_t total = (uint64_t)c->iters + c->warmup;
    for (uint64_t i = 0; i < total; i++) {
        if (i == c->warmup)
            s->mark = usage_now();
        answer_ping(s, size, i);
        if (s->req_done < s->req_posted)
            reap_request(s);
    }
}

/* Spin until the peer's write of iteration i has landed in dst (and, with -c, all of it). */
static void wait_written(struct side *s, uint32_t size, uint64_t i, int reap_own)
{
    volatile char *last = s->dst + size - 1;
    double deadline = now() + EVENT_TIMEOUT_S;
    for (unsigned spins = 0; *last != write_tag(i); spins++) {
        if (reap_own && s->req_done < s->req_posted && s->poll)
            try_reap_request(s);
        if ((spins & 1023) == 1023 && now() > deadline)
            fail("write_lat: peer's write %llu did not arrive within %d s", (unsigned long long)i, EVENT_TIMEOUT_S);
    }
    DAT_LMR_TRIPLET t = dp_lmr_triplet(s->lmr_ctx, s->dst, size);
    check(dat_lmr_sync_rdma_write(s->ia, &t, 1), "dat_lmr_sync_rdma_write");
    if (s->cfg.flags & F_VERIFY) {
        /* bytes of one write may land in any order: wait for the rest, bounded */
        while (!pattern_ok(s->dst, size - 1, i))
            if (now() > deadline)
                fail("write_lat: write %llu has wrong data", (unsigned long long)i);
    }
}

static void write_one(struct side *s, uint32_t size, uint64_t i)
{
    if (s->cfg.flags & F_VERIFY)
        fill_pattern(s->src, size - 1, i);
    s->src[size - 1] = write_tag(i);
    post_rdma(s, 1, s->src, s->peer.dst, size);
}

static void write_lat_side(struct side *s, uint32_t size, struct result *res)
{
    const struct config *c = &s->cfg;
    uint64_t total = (uint64_t)c->iters + c->warmup;
    struct tick_rate rate = tick_rate_start();
    for (uint64_t i = 0; i < total; i++) {
        if (i == c->warmup)
            s->mark = usage_now();
        if (s->server) {
            wait_written(s, size, i, 0);
            write_one(s, size, i);
            while (s->req_done < s->req_posted)
                reap_request(s);
            continue;
        }
        uint64_t t0 = ticks();
        write_one(s, size, i);
        wait_written(s, size, i, 1);
        while (s->req_done < s->req_posted)
            reap_request(s);
        uint64_t t1 = ticks();
        if (i >= c->warmup)
            res->rtt[i - c->warmup] = (double)(t1 - t0);
    }
    if (res) {
        res->mine = usage_since(&s->mark);
        ticks_to_seconds(&rate, res->rtt, c->iters);
    }
}

/* Reap request completions: all that are there, and at least one when must_wait. */
static void reap_some(struct side *s, int must_wait)
{
    if (must_wait)
        reap_request(s);
    while (s->req_done < s->req_posted && try_reap_request(s))
        ;
}

/* write_bw / read_bw on the client: window outstanding RDMA operations. */
static void rdma_bw_client(struct side *s, uint32_t size, int write, struct result *res)
{
    const struct config *c = &s->cfg;
    uint64_t n = c->iters, base = s->req_posted;
    s->mark = usage_now();
    double t0 = now();
    while (s->req_done - base < n) {
        while (s->req_posted - base < n && s->req_posted - s->req_done < c->window)
            post_rdma(s, write, write ? s->src : s->dst, write ? s->peer.dst : s->peer.src, size);
        reap_some(s, 1);
    }
    res->secs = now() - t0;
    res->mine = usage_since(&s->mark);
}

/* A credit message, if one has come (or wait for it when block): 1 if taken. */
static int take_credit(struct side *s, int block)
{
    char *m = take_recv(s, block, "receive credit");
    if (!m)
        return 0;
    if (get_ctrl((unsigned char *)m).type != C_CREDIT)
        fail("send_bw: expected a credit message");
    post_recv(s);
    return 1;
}

/* send_bw on the client: window outstanding sends, and no more than the receiver's credits
 * (2 windows at the start, one more window per credit message). In blocking mode it sleeps
 * for a send completion while sends are outstanding, else (out of credit) for a credit. */
static void send_bw_client(struct side *s, uint32_t size, struct result *res)
{
    const struct config *c = &s->cfg;
    uint64_t n = c->iters, base = s->req_posted, credit = 2 * (uint64_t)c->window;
    s->mark = usage_now();
    double t0 = now();
    while (s->req_done - base < n) {
        while (s->req_posted - base < n && s->req_posted - s->req_done < c->window && s->req_posted - base < credit)
            post_send(s, s->src, size);
        int progressed = 0;
        while (s->req_done < s->req_posted && try_reap_request(s))
            progressed = 1;
        while (take_credit(s, 0)) {
            credit += c->window;
            progressed = 1;
        }
        if (s->poll || progressed)
            continue;
        if (s->req_done < s->req_posted) {
            reap_request(s);
        } else { /* nothing outstanding and not done: out of credit */
            take_credit(s, 1);
            credit += c->window;
        }
    }
    res->secs = now() - t0;
    res->mine = usage_since(&s->mark);
}

static void send_bw_server(struct side *s, uint32_t size, uint32_t round)
{
    const struct config *c = &s->cfg;
    for (uint64_t k = 0; k < c->iters; k++) {
        char *m = take_recv(s, 1, "receive data");
        if (c->flags & F_VERIFY) {
            if (!pattern_ok(m, size, round))
                fail("send_bw: message %llu has wrong data", (unsigned long long)k);
            memset(m, 0, size);
        }
        post_recv(s);
        if ((k + 1) % c->window == 0) {
            while (s->req_posted - s->req_done >= 8)
                reap_request(s);
            post_send(s, s->buf + CTRL_LEN, CTRL_LEN);
            while (s->req_done < s->req_posted && try_reap_request(s))
                ;
        }
    }
    while (s->req_done < s->req_posted)
        reap_request(s);
}

/* Prepare the data areas for one round (before the START/READY handshake). */
static void prepare_round(struct side *s, uint32_t size, uint32_t round)
{
    int test = (int)s->cfg.test;
    memset(s->dst, 0, size);
    if (test == T_WRITE_BW || test == T_READ_BW || test == T_SEND_BW)
        fill_pattern(s->src, size, round);
    else
        memset(s->src, 0, size);
}

static void server_round(struct side *s, uint32_t size, uint32_t round)
{
    int test = (int)s->cfg.test;
    prepare_round(s, size, round);
    struct ctrl start = wait_ctrl(s, C_START, "receive START");
    if (start.round != round || start.v[0] != size)
        fail("round %u: client is at round %u size %llu", round, start.round, (unsigned long long)start.v[0]);
    s->mark = usage_now();
    send_ctrl(s, C_READY, round, NULL, 0);
    uint64_t verified = 1;
    switch (test) {
    case T_SEND_LAT: send_lat_server(s, size); break;
    case T_WRITE_LAT: write_lat_side(s, size, NULL); break;
    case T_SEND_BW: send_bw_server(s, size, round); break;
    default: break; /* RDMA bandwidth: the server only waits for DONE */
    }
    if (!is_latency_test(test)) {
        /* in the RDMA tests the server only waits (like perftest's passive side): it sleeps,
         * leaving the CPUs to the transfer, as long as the transfer takes (minutes for -n 200
         * of 1 MiB in an emulated guest) while the connection stands */
        int poll = s->poll;
        s->poll = test == T_SEND_BW ? poll : 0;
        s->patient = 1;
        wait_ctrl(s, C_DONE, "receive DONE");
        s->patient = 0;
        s->poll = poll;
    }
    struct usage u = usage_since(&s->mark);
    if (test == T_WRITE_BW && (s->cfg.flags & F_VERIFY)) {
        DAT_LMR_TRIPLET t = dp_lmr_triplet(s->lmr_ctx, s->dst, size);
        check(dat_lmr_sync_rdma_write(s->ia, &t, 1), "dat_lmr_sync_rdma_write");
        verified = (uint64_t)pattern_ok(s->dst, size, round);
    }
    uint64_t v[6] = {(uint64_t)(u.cpu_s * 1e9), (uint64_t)u.vcsw,    (uint64_t)u.ivcsw,
                     (uint64_t)u.threads,      verified, (uint64_t)u.other_cs};
    send_ctrl(s, C_STATS, round, v, 6);
}

static void client_round(struct side *s, uint32_t size, uint32_t round, struct result *res)
{
    int test = (int)s->cfg.test;
    prepare_round(s, size, round);
    uint64_t v[1] = {size};
    send_ctrl(s, C_START, round, v, 1);
    wait_ctrl(s, C_READY, "receive READY");
    switch (test) {
    case T_SEND_LAT: send_lat_client(s, size, res); break;
    case T_WRITE_LAT: write_lat_side(s, size, res); break;
    case T_WRITE_BW: rdma_bw_client(s, size, 1, res); break;
    case T_READ_BW: rdma_bw_client(s, size, 0, res); break;
    case T_SEND_BW: send_bw_client(s, size, res); break;
    default: break;
    }
    res->ops = s->cfg.iters;
    if (!is_latency_test(test))
        send_ctrl(s, C_DONE, round, NULL, 0);
    struct ctrl st = wait_ctrl(s, C_STATS, "receive STATS");
    res->peer.cpu_s = (double)st.v[0] / 1e9;
    res->peer.vcsw = (long)st.v[1];
    res->peer.ivcsw = (long)st.v[2];
    res->peer.threads = (long)st.v[3];
    res->peer.other_cs = (long)st.v[5];
    if (!st.v[4])
        fail("%s size %u: the server found wrong data in its buffer", test_names[test], size);
    if (test == T_READ_BW && (s->cfg.flags & F_VERIFY)) {
        DAT_LMR_TRIPLET t = dp_lmr_triplet(s->lmr_ctx, s->dst, size);
        check(dat_lmr_sync_rdma_read(s->ia, &t, 1), "dat_lmr_sync_rdma_read");
        if (!pattern_ok(s->dst, size, round))
            fail("read_bw size %u: data read differs from the server's buffer", size);
    }
}

/* -l send_bw: send_bw_client's and send_bw_server's steps taken in turn by one thread, every
 * take a try (nothing waits): the client end posts what its window and credit allow and reaps
 * its completions and credits; the server end takes the messages that arrived, reposts their
 * receives and sends a credit after each window. Timed from the first post until the client's
 * last send completed and the server end has every message; the credits still in flight are
 * then taken, untimed. */
static void loopback_send_bw(struct side *c, struct side *s, uint32_t size, uint32_t round, struct result *res)
{
    const struct config *cfg = &c->cfg;
    uint64_t n = cfg->iters, base = c->req_posted, credit = 2 * (uint64_t)cfg->window, received = 0;
    c->mark = usage_now();
    double t0 = now();
    while (c->req_done - base < n || received < n) {
        while (c->req_posted - base < n && c->req_posted - c->req_done < cfg->window && c->req_posted - base < credit)
            post_send(c, c->src, size);
        char *m;
        while (received < n && (m = take_recv(s, 0, "receive data"))) {
            if (cfg->flags & F_VERIFY) {
                if (!pattern_ok(m, size, round))
                    fail("send_bw: message %llu has wrong data", (unsigned long long)received);
                memset(m, 0, size);
            }
            post_recv(s);
            if (++received % cfg->window == 0)
                post_send(s, s->buf + CTRL_LEN, CTRL_LEN);
        }
        reap_some(s, 0);
        reap_some(c, 0);
        while (take_credit(c, 0))
            credit += cfg->window;
    }
    res->secs = now() - t0;
    res->mine = usage_since(&c->mark);
    /* the credits of the last windows: the server end's sends complete once taken (shm) */
    while (s->req_done < s->req_posted) {
        try_reap_request(s);
        take_credit(c, 0);
    }
}

/* -l: both ends in this process, driven by this one thread, spinning (see run_loopback). One
 * latency iteration is the two-process one's client and server steps in the order the message
 * takes: the client's post, the server end's receive and answer, the client's receive. */
static void loopback_round(struct side *c, struct side *s, uint32_t size, uint32_t round, struct result *res)
{
    int test = (int)c->cfg.test, verify = c->cfg.flags & F_VERIFY;
    uint64_t total = (uint64_t)c->cfg.iters + c->cfg.warmup;
    prepare_round(c, size, round);
    prepare_round(s, size, round);
    res->ops = c->cfg.iters;
    memset(&res->peer, 0, sizeof res->peer);
    if (test == T_SEND_BW) {
        loopback_send_bw(c, s, size, round, res);
        return;
    }
    struct tick_rate rate = tick_rate_start();
    for (uint64_t i = 0; i < total; i++) {
        if (i == c->cfg.warmup)
            c->mark = usage_now();
        if (test == T_SEND_LAT && verify)
            fill_pattern(c->src, size, i);
        uint64_t t0 = ticks();
        char *pong = NULL;
        if (test == T_WRITE_LAT) {
            write_one(c, size, i);
            wait_written(s, size, i, 0);
            write_one(s, size, i);
            while (s->req_done < s->req_posted)
                reap_request(s);
            wait_written(c, size, i, 1);
            while (c->req_done < c->req_posted)
                reap_request(c);
        } else {
            post_ping(c, c->src, size);
            answer_ping(s, size, i);
            /* a send may complete only once its receiver has taken it (shm): poll all three */
            while (!pong || c->req_done < c->req_posted || s->req_done < s->req_posted) {
                if (s->req_done < s->req_posted)
                    try_reap_request(s);
                if (c->req_done < c->req_posted)
                    try_reap_request(c);
                if (!pong)
                    pong = take_recv(c, 0, "receive pong");
            }
        }
        uint64_t t1 = ticks();
        if (pong)
            finish_pong(c, pong, size, i);
        if (i >= c->cfg.warmup)
            res->rtt[i - c->cfg.warmup] = (double)(t1 - t0);
    }
    res->mine = usage_since(&c->mark);
    ticks_to_seconds(&rate, res->rtt, c->cfg.iters);
}

/* ------------------------------------------------------------------ reporting */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *sorted, uint64_t n, double p)
{
    uint64_t k = (uint64_t)(p * (double)(n - 1) + 0.5);
    return sorted[k < n ? k : n - 1];
}

static void report(const struct side *s, const char *ia, uint32_t size, struct result *r, int machine, int first)
{
    int test = (int)s->cfg.test;
    double ops = (double)r->ops;
    double cpu = r->mine.cpu_s * 1e6 / ops, srv_cpu = r->peer.cpu_s * 1e6 / ops;
    double vcsw = (double)r->mine.vcsw / ops, ivcsw = (double)r->mine.ivcsw / ops;
    double srv_vcsw = (double)r->peer.vcsw / ops, srv_ivcsw = (double)r->peer.ivcsw / ops;
    double other_cs = (double)r->mine.other_cs / ops, srv_other_cs = (double)r->peer.other_cs / ops;
    const char *mode = s->cno ? "cno" : s->poll ? "poll" : "block";
    double lat[5] = {0}; /* one-way: min, median, p99, max, average, microseconds */
    double bw = 0, rate = 0;
    if (is_latency_test(test)) {
        double sum = 0;
        for (uint64_t i = 0; i < r->ops; i++)
            sum += r->rtt[i];
        qsort(r->rtt, r->ops, sizeof *r->rtt, cmp_double);
        lat[0] = r->rtt[0];
        lat[1] = percentile(r->rtt, r->ops, 0.5);
        lat[2] = percentile(r->rtt, r->ops, 0.99);
        lat[3] = r->rtt[r->ops - 1];
        lat[4] = sum / ops;
        for (int i = 0; i < 5; i++)
            lat[i] *= 1e6 / 2;
    } else {
        bw = ops * size / r->secs / 1e6;
        rate = ops / r->secs / 1e6;
    }
    if (machine) {
        printf("datperf test=%s ia=%s mode=%s mem=%s size=%u iters=%llu", test_names[test], ia, mode,
               s->cfg.flags & F_SHM_MEM ? "shm" : "heap", size, (unsigned long long)r->ops);
        if (test == T_SEND_LAT && s->cfg.signal_every > 1)
            printf(" signal_every=%u", s->cfg.signal_every);
        if (s->cfg.flags & F_LOOPBACK)
            printf(" loopback=1");
        if (is_latency_test(test))
            printf(" lat_min_us=%.3f lat_median_us=%.3f lat_p99_us=%.3f lat_max_us=%.3f lat_avg_us=%.3f", lat[0],
                   lat[1], lat[2], lat[3], lat[4]);
        else if (test == T_LMR_REG)
            printf(" reg_per_s=%.1f reg_us=%.3f", rate * 1e6, 1 / rate);
        else
            printf(" window=%u bw_MBps=%.3f msg_rate_Mps=%.6f", s->cfg.window, bw, rate);
        printf(" cpu_us_per_op=%.3f vcsw_per_op=%.3f ivcsw_per_op=%.3f threads=%ld"
               " srv_cpu_us_per_op=%.3f srv_vcsw_per_op=%.3f srv_ivcsw_per_op=%.3f srv_threads=%ld"
               " other_cs_per_op=%.3f srv_other_cs_per_op=%.3f\n",
               cpu, vcsw, ivcsw, r->mine.threads, srv_cpu, srv_vcsw, srv_ivcsw, r->peer.threads, other_cs,
               srv_other_cs);
        fflush(stdout);
        return;
    }
    if (first) {
        if (test == T_LMR_REG)
            printf("# datperf %s on IA %s, %u iterations", test_names[test], ia, s->cfg.iters);
        else
            printf("# datperf %s on IA %s, %s completions (%s), %u iterations%s", test_names[test], ia, mode,
                   s->cno    ? "dat_cno_wait then dat_evd_dequeue for receives, dat_evd_wait for the rest"
                   : s->poll ? "dat_evd_dequeue spin"
                             : "dat_evd_wait",
                   s->cfg.iters, (s->cfg.flags & F_VERIFY) ? ", payloads checked" : "");
        if (test == T_SEND_LAT && s->cfg.signal_every > 1)
            printf(", every %uth send signaled", s->cfg.signal_every);
        if (s->cfg.flags & F_LOOPBACK)
            printf(", both ends in this thread (server figures 0)");
        if (test == T_LMR_REG)
            printf(", %s memory, dat_lmr_create + dat_lmr_free pairs in one process (server figures 0)",
                   s->cfg.flags & F_SHM_MEM ? "shm" : "heap");
        printf("\n");
        printf("# one-way latency = round trip / 2; cpu = user+sys us per op; cs = voluntary/involuntary "
               "context switches per op; thr = threads; oth = context switches of the library's other "
               "threads per op; c = client, s = server\n");
        if (is_latency_test(test))
            printf("%9s %8s %9s %9s %9s %9s %9s", "#bytes", "#iters", "t_min[us]", "t_med[us]", "t_p99[us]",
                   "t_max[us]", "t_avg[us]");
        else if (test == T_LMR_REG)
            printf("%9s %8s %12s %10s", "#bytes", "#iters", "LMR/s", "t_avg[us]");
        else
            printf("%9s %8s %6s %12s %10s", "#bytes", "#iters", "window", "BW[MB/s]", "Mmsg/s");
        printf(" %8s %11s %4s %6s %8s %11s %4s %6s\n", "c_cpu", "c_cs(v/i)", "c_thr", "c_oth", "s_cpu", "s_cs(v/i)",
               "s_thr", "s_oth");
    }
    if (is_latency_test(test))
        printf("%9u %8llu %9.2f %9.2f %9.2f %9.2f %9.2f", size, (unsigned long long)r->ops, lat[0], lat[1], lat[2],
               lat[3], lat[4]);
    else if (test == T_LMR_REG)
        printf("%9u %8llu %12.0f %10.3f", size, (unsigned long long)r->ops, rate * 1e6, 1 / rate);
    else
        printf("%9u %8llu %6u %12.1f %10.4f", size, (unsigned long long)r->ops, s->cfg.window, bw, rate);
    printf(" %8.2f %5.2f/%5.2f %4ld %6.3f %8.2f %5.2f/%5.2f %4ld %6.3f\n", cpu, vcsw, ivcsw, r->mine.threads, other_cs,
           srv_cpu, srv_vcsw, srv_ivcsw, r->peer.threads, srv_other_cs);
    fflush(stdout);
}

/* ------------------------------------------------------------------ the two roles */

static uint32_t next_size(uint32_t size) { return size * 2; }

/* Listen for one connection request on qual. */
static void listen_on(struct side *s, const char *ia, DAT_CONN_QUAL qual)
{
    check(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr_evd), "dat_evd_create(CR)");
    check(dat_psp_create(s->ia, qual, s->cr_evd, DAT_PSP_CONSUMER_FLAG, &s->psp), "dat_psp_create");
    printf("datperf: server listening on IA %s qualifier %llu\n", ia, (unsigned long long)qual);
    fflush(stdout);
}

/* Take the client's connection request: its configuration, then our buffer and endpoint, the
 * receives, and the accept with our buffer's description; returns once ESTABLISHED. */
static void accept_client(struct side *s)
{
    /* the connection request can take its time: always block here */
    DAT_EVENT ev;
    DAT_COUNT nmore;
    check(dat_evd_wait(s->cr_evd, DAT_TIMEOUT_INFINITE, 1, &ev, &nmore), "waiting for a connection request");
    if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
        fail("expected a connection request, got event 0x%x", (unsigned)ev.event_number);
    DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
    DAT_CR_PARAM crp;
    check(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp), "dat_cr_query");
    if (crp.private_data_size < REQ_PD_LEN || !get_request(crp.private_data, &s->cfg, &s->peer)) {
        check(DP_CR_REJECT(cr), "dat_cr_reject");
        fail("connection request is not from a datperf client");
    }
    const struct config *c = &s->cfg;
    if (c->test >= T_COUNT || is_local_test((int)c->test) || c->window == 0 || c->window > MAX_WINDOW || c->signal_every > MAX_WINDOW ||
        c->min_size == 0 || c->max_size > MAX_SIZE || c->min_size > c->max_size || c->iters == 0) {
        check(DP_CR_REJECT(cr), "dat_cr_reject");
        fail("connection request carries an invalid configuration");
    }
    s->poll = !(c->flags & F_BLOCK);
    register_buffer(s);
    attach_cno(s);
    create_ep(s);
    for (unsigned i = 0; i < s->rq_depth; i++)
        post_recv(s);
    unsigned char pd[REMOTE_LEN];
    struct remote me = my_remote(s);
    put_remote(pd, &me);
    check(dat_cr_accept(cr, s->ep, sizeof pd, pd), "dat_cr_accept");
    expect_event(s, s->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, "waiting for ESTABLISHED");
}

static int run_server(char *ia, DAT_CONN_QUAL qual)
{
    struct side s;
    memset(&s, 0, sizeof s);
    s.server = 1;
    open_ia(&s, ia);
    listen_on(&s, ia, qual);
    accept_client(&s);

    uint32_t round = 1;
    for (uint32_t size = s.cfg.min_size; size <= s.cfg.max_size; size = next_size(size), round++)
        server_round(&s, size, round);

    wait_disconnected(&s);
    teardown(&s);
    return 0;
}

static void resolve(const char *host, struct sockaddr_in *sin)
{
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    if (inet_pton(AF_INET, host, &sin->sin_addr) == 1)
        return;
    struct addrinfo hints, *res;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_INET;
    if (getaddrinfo(host, NULL, &hints, &res) != 0)
        fail("cannot resolve %s", host);
    sin->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
}

/* A new endpoint and a connection request to addr carrying our configuration and buffer. */
static void start_connect(struct side *s, DAT_IA_ADDRESS_PTR addr, DAT_CONN_QUAL qual)
{
    unsigned char pd[REQ_PD_LEN];
    struct remote me = my_remote(s);
    put_request(pd, &s->cfg, &me);
    create_ep(s);
    check(dat_ep_connect(s->ep, addr, qual, EVENT_TIMEOUT_S * 1000000u, sizeof pd, pd, DAT_QOS_BEST_EFFORT,
                         DAT_CONNECT_DEFAULT_FLAG),
          "dat_ep_connect");
}

/* The connection's outcome: 1 when ESTABLISHED (the server's buffer is then known), else 0 and
 * the event in *ev. */
static int connect_done(struct side *s, DAT_EVENT *ev)
{
    DAT_COUNT nmore;
    check(dat_evd_wait(s->conn_evd, EVENT_TIMEOUT_S * 1000000u, 1, ev, &nmore), "waiting for ESTABLISHED");
    if (ev->event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
        return 0;
    const DAT_CONNECTION_EVENT_DATA *cd = &ev->event_data.connect_event_data;
    if (cd->private_data_size < REMOTE_LEN)
        fail("the server's accept carries no buffer description");
    s->peer = get_remote(cd->private_data);
    return 1;
}

/* Connect, retrying with a fresh endpoint for a while if the server is not listening yet. */
static void connect_to_server(struct side *s, const char *host, DAT_CONN_QUAL qual)
{
    struct sockaddr_in sin;
    resolve(host, &sin);
    double deadline = now() + EVENT_TIMEOUT_S;
    for (;;) {
        DAT_EVENT ev;
        start_connect(s, (DAT_IA_ADDRESS_PTR)&sin, qual);
        if (connect_done(s, &ev))
            return;
        if (now() > deadline)
            fail("no connection to %s qualifier %llu (last event 0x%x)", host, (unsigned long long)qual,
                 (unsigned)ev.event_number);
        check(dat_ep_free(s->ep), "dat_ep_free");
        usleep(100000);
    }
}

/* Every size of the client's configuration, one result each: through the server at the other
 * end of the connection, or (-l) with the server end srv in this thread too. */
static void run_sizes(struct side *c, struct side *srv, const char *ia, int machine)
{
    struct result res;
    memset(&res, 0, sizeof res);
    res.rtt = calloc(c->cfg.iters, sizeof *res.rtt);
    if (!res.rtt)
        fail("out of memory");
    uint32_t round = 1;
    for (uint32_t size = c->cfg.min_size; size <= c->cfg.max_size; size = next_size(size), round++) {
        if (srv)
            loopback_round(c, srv, size, round, &res);
        else
            client_round(c, size, round, &res);
        report(c, ia, size, &res, machine, round == 1);
    }
    free(res.rtt);
}

static int run_client(char *ia, const char *host, DAT_CONN_QUAL qual, const struct config *cfg, int machine)
{
    struct side s;
    memset(&s, 0, sizeof s);
    s.cfg = *cfg;
    s.poll = !(cfg->flags & F_BLOCK);
    open_ia(&s, ia);
    register_buffer(&s);
    attach_cno(&s);
    connect_to_server(&s, host, qual);
    /* the server sends nothing before our START: the receives can follow the connection */
    for (unsigned i = 0; i < s.rq_depth; i++)
        post_recv(&s);
    run_sizes(&s, NULL, ia, machine);
    check(dat_ep_disconnect(s.ep, DAT_CLOSE_GRACEFUL_FLAG), "dat_ep_disconnect");
    wait_disconnected(&s);
    teardown(&s);
    return 0;
}

/* -l: the server end and the client end in this process, each with its own IA, connected to
 * each other through the IA's own address (or -h), and one thread spinning through both ends'
 * steps. Where two spinning processes would share one CPU (a one-vCPU guest), they take turns
 * at the scheduler's tick and time that; here nothing waits for another thread, so a round trip
 * costs what the two ends' library calls and the transport under them cost. */
static int run_loopback(char *ia, const char *host, DAT_CONN_QUAL qual, const struct config *cfg, int machine)
{
    struct side srv, cli;
    memset(&srv, 0, sizeof srv);
    memset(&cli, 0, sizeof cli);
    srv.server = 1;
    open_ia(&srv, ia);
    listen_on(&srv, ia, qual);
    cli.cfg = *cfg;
    cli.poll = 1;
    open_ia(&cli, ia);
    register_buffer(&cli);

    struct sockaddr_in sin;
    DAT_IA_ADDRESS_PTR addr = (DAT_IA_ADDRESS_PTR)&sin;
    if (host) {
        resolve(host, &sin);
    } else {
        DAT_EVD_HANDLE async_evd;
        DAT_IA_ATTR ia_attr;
        check(dat_ia_query(srv.ia, &async_evd, DAT_IA_FIELD_IA_ADDRESS_PTR, &ia_attr, 0, NULL), "dat_ia_query");
        addr = ia_attr.ia_address_ptr;
    }
    start_connect(&cli, addr, qual);
    accept_client(&srv);
    DAT_EVENT ev;
    if (!connect_done(&cli, &ev))
        fail("loopback connection: event 0x%x instead of ESTABLISHED", (unsigned)ev.event_number);
    for (unsigned i = 0; i < cli.rq_depth; i++)
        post_recv(&cli);
    run_sizes(&cli, &srv, ia, machine);
    check(dat_ep_disconnect(cli.ep, DAT_CLOSE_GRACEFUL_FLAG), "dat_ep_disconnect");
    wait_disconnected(&cli);
    wait_disconnected(&srv);
    teardown(&cli);
    teardown(&srv);
    return 0;
}

/* -t lmr_reg: dat_lmr_create + dat_lmr_free of one buffer, warm-up pairs first, then the
 * measured ones, for every size; one IA, no connection. The buffer (of the largest size, from
 * the heap or with -M shm a memfd) is the same every time, as an MPI's message buffers are
 * registered again and again. */
static int run_lmr_reg(char *ia, const struct config *cfg, int machine)
{
    struct side s;
    memset(&s, 0, sizeof s);
    s.cfg = *cfg;
    s.poll = 1;
    s.async_evd = DAT_HANDLE_NULL;
    check(dat_ia_open(ia, 8, &s.async_evd, &s.ia), "dat_ia_open");
    check(dat_pz_create(s.ia, &s.pz), "dat_pz_create");
    s.buflen = ((size_t)cfg->max_size + 4095) & ~(size_t)4095;
    s.buf = alloc_buffer(s.buflen, cfg->flags & F_SHM_MEM);
    memset(s.buf, 1, s.buflen);
    uint32_t round = 1;
    for (uint32_t size = cfg->min_size; size <= cfg->max_size; size = next_size(size), round++) {
        struct result res;
        memset(&res, 0, sizeof res);
        double t0 = 0;
        for (uint64_t i = 0; i < (uint64_t)cfg->iters + cfg->warmup; i++) {
            if (i == cfg->warmup) {
                s.mark = usage_now();
                t0 = now();
            }
            create_lmr(&s, s.buf, size);
            check(dat_lmr_free(s.lmr), "dat_lmr_free");
        }
        res.secs = now() - t0;
        res.mine = usage_since(&s.mark);
        res.ops = cfg->iters;
        report(&s, ia, size, &res, machine, round == 1);
    }
    free_buffer(&s);
    check(dat_pz_free(s.pz), "dat_pz_free");
    check(dat_ia_close(s.ia, DAT_CLOSE_GRACEFUL_FLAG), "dat_ia_close");
    return 0;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: datperf -P ia [-q qual]                    (server)\n"
            "       datperf -P ia -h server [-q qual] [options] (client)\n"
            "       datperf -P ia -l [-h address] [-q qual] [options] (both ends, one thread)\n"
            "       datperf -P ia -t lmr_reg [-s bytes | -a] [-n iters] [-W iters] [-m] [-M mem] (one process)\n"
            "  -t test     send_lat (default), write_lat, write_bw, read_bw, send_bw; lmr_reg (no connection:\n"
            "              dat_lmr_create + dat_lmr_free of one buffer in a loop, pairs per second)\n"
            "  -s bytes    message size (default 8; 2 B to 4 MiB)\n"
            "  -a          all sizes, powers of two from 2 B to 4 MiB (to -s if given)\n"
            "  -n iters    measured iterations (default 1000 latency, 5000 bandwidth)\n"
            "  -W iters    warm-up iterations before measuring, latency tests and lmr_reg (default min(100, n/10))\n"
            "  -w ops      outstanding operations, bandwidth tests (default 32, at most %d)\n"
            "  -u n        send_lat: only every nth send is signaled (default 1; ib_send_lat: 100), at most %d\n"
            "  -p / -b     completions by spinning on dat_evd_dequeue (default) / sleeping in dat_evd_wait\n"
            "  -C          as -b, but receives by sleeping in dat_cno_wait on a CNO attached to the receive\n"
            "              EVD, then dat_evd_dequeue\n"
            "  -c          check every payload\n"
            "  -m          machine-readable output: one key=value line per result\n"
            "  -M mem      buffers of both sides: heap (default) or shm (memfd, MAP_SHARED, SHARED_VIRTUAL LMR)\n"
            "  -q qual     connection qualifier (default 18517)\n"
            "  -l          loopback: server and client ends in this process, one thread spinning through\n"
            "              both (send_lat, write_lat, send_bw; -p only); -h, if given, is the address to\n"
            "              connect to, else the IA's own\n",
            MAX_WINDOW, MAX_WINDOW);
    exit(2);
}

static uint32_t parse_size(const char *arg)
{
    char *end;
    unsigned long long v = strtoull(arg, &end, 0);
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end || v < 2 || v > MAX_SIZE) {
        fprintf(stderr, "datperf: size %s is not between 2 and %u\n", arg, MAX_SIZE);
        exit(2);
    }
    return (uint32_t)v;
}

int main(int argc, char **argv)
{
    char *ia = "shm";
    const char *host = NULL;
    DAT_CONN_QUAL qual = 18517;
    struct config cfg = {T_SEND_LAT, 0, 8, 8, 0, UINT32_MAX, 32, 1};
    int all = 0, machine = 0, opt;
    while ((opt = getopt(argc, argv, "P:h:q:t:s:an:W:w:u:pbCcmM:l")) != -1) {
        switch (opt) {
        case 'P': ia = optarg; break;
        case 'h': host = optarg; break;
        case 'q': qual = strtoull(optarg, NULL, 0); break;
        case 't': {
            int t;
            for (t = 0; t < T_COUNT && strcmp(optarg, test_names[t]) != 0; t++)
                ;
            if (t == T_COUNT)
                usage();
            cfg.test = (uint32_t)t;
            break;
        }
        case 's': cfg.min_size = cfg.max_size = parse_size(optarg); break;
        case 'a': all = 1; break;
        case 'n': cfg.iters = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'W': cfg.warmup = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'w': cfg.window = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'u': cfg.signal_every = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'p': cfg.flags &= ~(F_BLOCK | F_CNO); break;
        case 'b': cfg.flags = (cfg.flags & ~F_CNO) | F_BLOCK; break;
        case 'C': cfg.flags |= F_BLOCK | F_CNO; break;
        case 'c': cfg.flags |= F_VERIFY; break;
        case 'm': machine = 1; break;
        case 'l': cfg.flags |= F_LOOPBACK; break;
        case 'M':
            if (strcmp(optarg, "shm") == 0)
                cfg.flags |= F_SHM_MEM;
            else if (strcmp(optarg, "heap") == 0)
                cfg.flags &= ~F_SHM_MEM;
            else
                usage();
            break;
        default: usage();
        }
    }
    if (optind != argc)
        usage();
    if (all) {
        cfg.min_size = 2;
        if (cfg.max_size == 8)
            cfg.max_size = MAX_SIZE;
    }
    if (cfg.iters == 0)
        cfg.iters = is_latency_test((int)cfg.test) ? 1000 : 5000;
    if (cfg.warmup == UINT32_MAX)
        cfg.warmup = cfg.iters / 10 < 100 ? cfg.iters / 10 : 100;
    if (!is_latency_test((int)cfg.test) && !is_local_test((int)cfg.test))
        cfg.warmup = 0;
    if (cfg.window == 0 || cfg.window > MAX_WINDOW || cfg.signal_every == 0 || cfg.signal_every > MAX_WINDOW)
        usage();
    if (is_local_test((int)cfg.test)) {
        if (host || (cfg.flags & F_LOOPBACK))
            usage();
        return run_lmr_reg(ia, &cfg, machine);
    }
    if (cfg.flags & F_LOOPBACK) {
        if ((!is_latency_test((int)cfg.test) && cfg.test != T_SEND_BW) || (cfg.flags & F_BLOCK))
            usage();
        return run_loopback(ia, host, qual, &cfg, machine);
    }
    if (!host)
        return run_server(ia, qual);
    return run_client(ia, host, qual, &cfg, machine);
}
