/*
 * datlat.c - a quick DAT latency / bandwidth measurement to set beside perftest
 * (ib_send_lat, ib_write_bw) in the soft-RDMA guests; see tests/vm/measure.sh.
 *
 *   server: datlat -s [-P ia] [-q qual] [-n iters] [-m msg_bytes] [-b bw_bytes] [-N bw_iters] [-p]
 *   client: datlat -h host [same options] [-d depth]
 *
 * 1. send/recv ping-pong of -n messages of -m bytes (default 8), payload checked: prints the
 *    one-way latency (round trip / 2) as typical (median) and average, like ib_send_lat, plus
 *    the process's context switches per round trip (getrusage) and its thread count.
 *    -p: poll with dat_evd_dequeue; default: dat_evd_wait (spins DAT_EVD_SPIN_US, then sleeps).
 * 2. -N RDMA writes of -b bytes (default 200 x 1 MiB) with up to -d (default 128) in flight,
 *    into the server's buffer: prints MB/s (10^6 bytes/s, as ib_write_bw's BW average); the
 *    server checks the written pattern.
 * Sends are signaled (-c N: every Nth only, the others DAT_COMPLETION_SUPPRESS_FLAG, as
 * ib_send_lat signals every 100th); a completion is taken without waiting when it is there.
 */
#define _GNU_SOURCE
#include <dat/udat.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define WAIT_US (20u * 1000u * 1000u)
#define SLOT 256           /* message slots: 2 receive, 1 send, in the first 1 KiB */
#define MAX_UNREAPED 32    /* send completions left in the EVD before we wait for one */

static int poll_mode;
static int signal_every = 1;

static void check(DAT_RETURN r, const char *what)
{
    if (r != DAT_SUCCESS) {
        fprintf(stderr, "datlat: %s failed: 0x%08x\n", what, (unsigned)r);
        exit(1);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Round-trip stamps: the TSC where there is one (as perftest), calibrated against the clock
 * over the whole run; a guest whose clock source is the HPET pays microseconds per
 * clock_gettime, which would be counted in every round trip. */
static uint64_t stamp_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return (uint64_t)(now() * 1e9);
#endif
}

static DAT_EVENT next_event(DAT_EVD_HANDLE evd, const char *what)
{
    DAT_EVENT ev;
    DAT_COUNT more;
    if (poll_mode) {
        /* the clock is read once per 4096 empty polls: in an emulated guest a clock read
         * (HPET) costs microseconds, more than a poll */
        double deadline = 0;
        DAT_RETURN r;
        for (unsigned misses = 0; (r = dat_evd_dequeue(evd, &ev)) != DAT_SUCCESS; misses++) {
            if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
                check(r, what);
            if (misses % 4096 == 0) {
                double t = now();
                if (deadline == 0)
                    deadline = t + WAIT_US / 1e6;
                else if (t > deadline)
                    check(r, what);
            }
        }
    } else {
        check(dat_evd_wait(evd, WAIT_US, 1, &ev, &more), what);
    }
    return ev;
}

static uint64_t dto_done(DAT_EVD_HANDLE evd, const char *what)
{
    DAT_EVENT ev = next_event(evd, what);
    if (ev.event_number != DAT_DTO_COMPLETION_EVENT || ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
        fprintf(stderr, "datlat: %s: event 0x%x status %d\n", what, (unsigned)ev.event_number,
                (int)ev.event_data.dto_completion_event_data.status);
        exit(1);
    }
    return ev.event_data.dto_completion_event_data.user_cookie.as_64;
}

struct side {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd, req_evd, recv_evd, conn_evd, cr_evd;
    DAT_PZ_HANDLE pz;
    DAT_EP_HANDLE ep;
    DAT_PSP_HANDLE psp;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lkey;
    DAT_RMR_CONTEXT rkey;
    char *buf;
    int unreaped; /* signaled sends whose completion we have not taken yet */
};

static DAT_LMR_TRIPLET seg(struct side *s, size_t off, DAT_VLEN len)
{
    DAT_LMR_TRIPLET t;
    memset(&t, 0, sizeof t);
    t.lmr_context = s->lkey;
    t.virtual_address = (DAT_VADDR)(uintptr_t)(s->buf + off);
    t.segment_length = len;
    return t;
}

static DAT_DTO_COOKIE ck(uint64_t v)
{
    DAT_DTO_COOKIE k;
    k.as_64 = v;
    return k;
}

static void post_recv(struct side *s, uint64_t k, DAT_VLEN len)
{
    DAT_LMR_TRIPLET t = seg(s, (k & 1) * SLOT, len);
    check(dat_ep_post_recv(s->ep, 1, &t, ck(k), DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
}

/* Takes the send completions already there; waits for one when too many are left. */
static void reap_sends(struct side *s)
{
    DAT_EVENT ev;
    while (s->unreaped > 0 && dat_evd_dequeue(s->req_evd, &ev) == DAT_SUCCESS)
        s->unreaped--;
    if (s->unreaped > MAX_UNREAPED) {
        dto_done(s->req_evd, "send completion");
        s->unreaped--;
    }
}

/* Posts a send; only every signal_every-th (and every control message) completes. */
static void post_send(struct side *s, uint64_t k, DAT_VLEN len, int control)
{
    DAT_LMR_TRIPLET t = seg(s, 2 * SLOT, len);
    int signaled = control || (k + 1) % (uint64_t)signal_every == 0;
    check(dat_ep_post_send(s->ep, 1, &t, ck(k), signaled ? DAT_COMPLETION_DEFAULT_FLAG : DAT_COMPLETION_SUPPRESS_FLAG),
          "dat_ep_post_send");
    s->unreaped += signaled;
}

static void fill(char *p, size_t n, uint64_t seq)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)(seq * 131 + i);
}

static void expect(const char *p, size_t n, uint64_t seq, const char *who)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (char)(seq * 131 + i)) {
            fprintf(stderr, "datlat: %s: payload of message %llu is wrong\n", who, (unsigned long long)seq);
            exit(1);
        }
}

static void setup(struct side *s, char *ia, size_t buflen)
{
    memset(s, 0, sizeof *s);
    check(dat_ia_open(ia, 8, &s->async_evd, &s->ia), "dat_ia_open");
    check(dat_pz_create(s->ia, &s->pz), "dat_pz_create");
    check(dat_evd_create(s->ia, 256, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->req_evd), "dat_evd_create");
    check(dat_evd_create(s->ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->recv_evd), "dat_evd_create");
    check(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn_evd), "dat_evd_create");
    check(dat_ep_create(s->ia, s->pz, s->recv_evd, s->req_evd, s->conn_evd, NULL, &s->ep), "dat_ep_create");
    void *mem;
    if (posix_memalign(&mem, 4096, buflen))
        exit(1);
    s->buf = mem;
    memset(s->buf, 0, buflen);
    DAT_REGION_DESCRIPTION r;
    memset(&r, 0, sizeof r);
    r.for_va = s->buf;
    DAT_VLEN rl;
    DAT_VADDR ra;
    check(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, r, buflen, s->pz, DAT_MEM_PRIV_ALL_FLAG, &s->lmr, &s->lkey,
                         &s->rkey, &rl, &ra),
          "dat_lmr_create");
}

static int threads(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static long csw(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The bandwidth phase's control messages: the server's buffer, then "done". */
struct ctl {
    uint64_t addr, len;
    uint32_t rkey;
};

int main(int argc, char **argv)
{
    char *ia = "ofa-v2-rdma0", *host = NULL;
    int server = 0, iters = 1000, depth = 128, bw_iters = 200, opt;
    DAT_CONN_QUAL qual = 18515;
    size_t msg = 8, bw = 1 << 20;
    while ((opt = getopt(argc, argv, "sh:P:q:n:m:b:N:d:pc:")) != -1) {
        switch (opt) {
        case 's': server = 1; break;
        case 'h': host = optarg; break;
        case 'P': ia = optarg; break;
        case 'q': qual = strtoull(optarg, NULL, 0); break;
        case 'n': iters = atoi(optarg); break;
        case 'm': msg = strtoul(optarg, NULL, 0); break;
        case 'b': bw = strtoul(optarg, NULL, 0); break;
        case 'N': bw_iters = atoi(optarg); break;
        case 'd': depth = atoi(optarg); break;
        case 'p': poll_mode = 1; break;
        case 'c': signal_every = atoi(optarg); break;
        default: fprintf(stderr, "usage: see the comment at the top of datlat.c\n"); return 2;
        }
    }
    if ((!server && !host) || msg < 1 || msg > SLOT || iters < 1 || depth < 1 || bw_iters < 1 || signal_every < 1)
        return 2;
    struct side s;
    setup(&s, ia, 4096 + bw);
    post_recv(&s, 0, SLOT);
    post_recv(&s, 1, SLOT);
    DAT_EVENT ev;
    if (server) {
        check(dat_evd_create(s.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s.cr_evd), "dat_evd_create");
        check(dat_psp_create(s.ia, qual, s.cr_evd, DAT_PSP_CONSUMER_FLAG, &s.psp), "dat_psp_create");
        printf("listening\n");
        fflush(stdout);
        ev = next_event(s.cr_evd, "connection request");
        check(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep, 0, NULL), "dat_cr_accept");
    } else {
        struct sockaddr_in sin;
        memset(&sin, 0, sizeof sin);
        sin.sin_family = AF_INET;
        if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
            return 2;
        check(dat_ep_connect(s.ep, (DAT_IA_ADDRESS_PTR)&sin, qual, WAIT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
                             DAT_CONNECT_DEFAULT_FLAG),
              "dat_ep_connect");
    }
    ev = next_event(s.conn_evd, "connection");
    if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED) {
        fprintf(stderr, "datlat: connection event 0x%x\n", (unsigned)ev.event_number);
        return 1;
    }

    /* 1. ping-pong: receive k lands in slot k % 2; the next receive is posted before replying */
    uint64_t *stamp = calloc((size_t)iters + 1, sizeof *stamp);
    long csw0 = csw();
    double t_start = now();
    for (uint64_t k = 0; k < (uint64_t)iters; k++) {
        stamp[k] = stamp_now();
        if (!server) {
            fill(s.buf + 2 * SLOT, msg, k);
            post_send(&s, k, msg, 0);
        }
        if (dto_done(s.recv_evd, "receive") != k)
            return 1;
        expect(s.buf + (k & 1) * SLOT, msg, k, server ? "server" : "client");
        post_recv(&s, k + 2, SLOT);
        if (server) {
            memcpy(s.buf + 2 * SLOT, s.buf + (k & 1) * SLOT, msg);
            post_send(&s, k, msg, 0);
        }
        reap_sends(&s);
    }
    stamp[iters] = stamp_now();
    double t_all = now() - t_start;
    double sec_per_tick = t_all / (double)(stamp[iters] - stamp[0]);
    double *rtt = calloc((size_t)iters, sizeof *rtt);
    for (int i = 0; i < iters; i++)
        rtt[i] = (double)(stamp[i + 1] - stamp[i]) * sec_per_tick;
    long switches = csw() - csw0;
    int nthreads = threads();
    if (!server) {
        qsort(rtt, (size_t)iters, sizeof *rtt, cmp_double);
        const char *spin = getenv("DAT_EVD_SPIN_US");
        char mode[64];
        snprintf(mode, sizeof mode, poll_mode ? "poll (dat_evd_dequeue)" : "wait (dat_evd_wait, spin %s us)",
                 spin ? spin : "default");
        printf("datlat %s %zu B x %d, every %d%s send signaled: one-way typical %.2f us, average %.2f us; %.2f "
               "context switches per round trip; %d threads\n",
               mode, msg, iters, signal_every,
               signal_every == 1 ? "" : "th", rtt[iters / 2] * 1e6 / 2,
               t_all * 1e6 / iters / 2, (double)switches / iters, nthreads);
    }

    /* 2. RDMA write bandwidth into the server's buffer at offset 4096 */
    uint64_t k = (uint64_t)iters;
    struct ctl *c = (struct ctl *)(s.buf + 2 * SLOT);
    if (server) {
        poll_mode = 0; /* idle until the client is done: leave the CPUs to the transfer */
        while (s.unreaped > 0) {
            dto_done(s.req_evd, "send completion");
            s.unreaped--;
        }
        c->addr = (uint64_t)(uintptr_t)(s.buf + 4096);
        c->len = bw;
        c->rkey = s.rkey;
        post_send(&s, k, sizeof *c, 1);
        if (dto_done(s.recv_evd, "done message") != k)
            return 1;
        DAT_LMR_TRIPLET t = seg(&s, 4096, bw);
        check(dat_lmr_sync_rdma_write(s.ia, &t, 1), "dat_lmr_sync_rdma_write");
        expect(s.buf + 4096, bw, 7, "server: RDMA-written data");
        dto_done(s.req_evd, "send completion");
        ev = next_event(s.conn_evd, "disconnect");
    } else {
        if (dto_done(s.recv_evd, "buffer message") != k)
            return 1;
        struct ctl remote = *(struct ctl *)(s.buf + (k & 1) * SLOT);
        DAT_RMR_TRIPLET r;
        memset(&r, 0, sizeof r);
        r.rmr_context = remote.rkey;
        r.target_address = remote.addr;
        r.segment_length = bw;
        while (s.unreaped > 0) {
            dto_done(s.req_evd, "send completion");
            s.unreaped--;
        }
        fill(s.buf + 4096, bw, 7);
        DAT_LMR_TRIPLET t = seg(&s, 4096, bw);
        int inflight = 0;
        double t0 = now();
        for (int i = 0; i < bw_iters; i++) {
            if (inflight == depth) {
                dto_done(s.req_evd, "RDMA write");
                inflight--;
            }
            check(dat_ep_post_rdma_write(s.ep, 1, &t, ck(i), &r, DAT_COMPLETION_DEFAULT_FLAG),
                  "dat_ep_post_rdma_write");
            inflight++;
        }
        while (inflight > 0) {
            dto_done(s.req_evd, "RDMA write");
            inflight--;
        }
        double dt = now() - t0;
        printf("datlat RDMA write %zu B x %d, %d in flight: %.2f MB/s\n", bw, bw_iters, depth,
               (double)bw * bw_iters / dt / 1e6);
        post_send(&s, k, 8, 1);
        dto_done(s.req_evd, "send completion");
        check(dat_ep_disconnect(s.ep, DAT_CLOSE_GRACEFUL_FLAG), "dat_ep_disconnect");
        ev = next_event(s.conn_evd, "disconnect");
    }
    return 0;
}
