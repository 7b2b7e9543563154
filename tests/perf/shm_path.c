/*
 * shm_path.c - the shm provider's data path next to the machine's floor, measured side by side.
 * Not a test (no thresholds); see tests/perf/run-shm-path.sh and README ("shm provider").
 *
 *   shm_path [-r rounds] [-n pingpongs] [-k rdma_reps] [-P ia_name] [-q conn_qual]
 *
 * Forks: the parent is the client, the child the server.  Every round runs, in this order:
 *   floor  8-byte-free ping-pong of the two processes spinning on one shared cache line;
 *   floor  one process_vm_writev of 1 MiB into the child (-k times);
 *   dat    8-byte send/recv ping-pong, both sides polling with dat_evd_dequeue;
 *   dat    the same, both sides in dat_evd_wait (DAT_EVD_SPIN_US applies);
 *   dat    1 MiB RDMA write, then 1 MiB RDMA read (-k times each, post + dat_evd_wait).
 * and prints medians over the rounds: one-way latency (round trip / 2), bandwidth, and
 * context switches per round trip of the client process (getrusage, all its threads).
 */
#define _GNU_SOURCE
#include <dat/udat.h>

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1u << 20)
#define WAIT_US (20u * 1000u * 1000u)
#define MAXR 64

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void check(DAT_RETURN r, const char *what)
{
    if (r == DAT_SUCCESS)
        return;
    const char *maj = "?", *min = "";
    dat_strerror(r, &maj, &min);
    fprintf(stderr, "shm_path: %s: 0x%08x %s %s\n", what, (unsigned)r, maj, min ? min : "");
    exit(1);
}

static long ctx_switches(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw + u.ru_nivcsw;
}

struct side {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd, cr_evd, conn, dto, rdto;
    DAT_PZ_HANDLE pz;
    DAT_EP_HANDLE ep;
    DAT_PSP_HANDLE psp;
    char *buf; /* [0, 4096) messages, then 1 MiB RDMA area, then 1 MiB read-back */
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lctx;
    DAT_RMR_CONTEXT rctx;
};

struct rmr_msg {
    DAT_RMR_CONTEXT ctx;
    DAT_UINT64 addr;
};

static DAT_DTO_COOKIE ck(DAT_UINT64 v)
{
    DAT_DTO_COOKIE c;
    c.as_64 = v;
    return c;
}

static DAT_LMR_TRIPLET trip(struct side *s, void *p, DAT_VLEN len)
{
    DAT_LMR_TRIPLET t;
    t.lmr_context = s->lctx;
    t.pad = 0;
    t.virtual_address = (DAT_VADDR)(uintptr_t)p;
    t.segment_length = len;
    return t;
}

static void open_side(struct side *s, char *ia_name)
{
    memset(s, 0, sizeof *s);
    check(dat_ia_open(ia_name, 8, &s->async_evd, &s->ia), "dat_ia_open");
    check(dat_pz_create(s->ia, &s->pz), "dat_pz_create");
    check(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr_evd), "evd cr");
    check(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn), "evd conn");
    check(dat_evd_create(s->ia, 256, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->dto), "evd dto");
    check(dat_evd_create(s->ia, 256, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->rdto), "evd rdto");
    check(dat_ep_create(s->ia, s->pz, s->rdto, s->dto, s->conn, NULL, &s->ep), "dat_ep_create");
    size_t len = 4096 + 2 * (size_t)MIB;
    s->buf = aligned_alloc(4096, len);
    memset(s->buf, 1, len);
    DAT_REGION_DESCRIPTION rd;
    rd.for_va = s->buf;
    DAT_VLEN rl;
    DAT_VADDR ra;
    check(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, rd, len, s->pz, DAT_MEM_PRIV_ALL_FLAG, &s->lmr, &s->lctx,
                         &s->rctx, &rl, &ra),
          "dat_lmr_create");
}

static DAT_EVENT next_event(DAT_EVD_HANDLE evd, int poll)
{
    DAT_EVENT ev;
    DAT_COUNT n;
    if (poll) {
        DAT_RETURN r;
        while ((r = dat_evd_dequeue(evd, &ev)) != DAT_SUCCESS)
            if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
                check(r, "dat_evd_dequeue");
    } else {
        check(dat_evd_wait(evd, WAIT_US, 1, &ev, &n), "dat_evd_wait");
    }
    if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
        ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
        fprintf(stderr, "shm_path: unexpected event 0x%x\n", (unsigned)ev.event_number);
        exit(1);
    }
    return ev;
}

/* 8-byte messages from buf[0..8) (send) into buf[64..72) (receive); sends are unsignaled */
static void post_recv8(struct side *s)
{
    DAT_LMR_TRIPLET t = trip(s, s->buf + 64, 8);
    check(dat_ep_post_recv(s->ep, 1, &t, ck(1), DAT_COMPLETION_DEFAULT_FLAG), "post_recv");
}

static void send8(struct side *s, uint64_t v)
{
    memcpy(s->buf, &v, 8);
    DAT_LMR_TRIPLET t = trip(s, s->buf, 8);
    check(dat_ep_post_send(s->ep, 1, &t, ck(2), DAT_COMPLETION_SUPPRESS_FLAG), "post_send");
}

static uint64_t recv8(struct side *s, int poll)
{
    next_event(s->rdto, poll);
    uint64_t v;
    memcpy(&v, s->buf + 64, 8);
    post_recv8(s);
    return v;
}

static void echo(struct side *s, int n, int poll)
{
    for (int i = 0; i < n; i++)
        send8(s, recv8(s, poll));
}

/* returns one-way microseconds; *cs gets context switches per round trip */
static double pingpong(struct side *s, int n, int poll, double *cs)
{
    long c0 = ctx_switches();
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        send8(s, (uint64_t)i);
        if (recv8(s, poll) != (uint64_t)i) {
            fprintf(stderr, "shm_path: ping-pong payload mismatch\n");
            exit(1);
        }
    }
    double t = (now_us() - t0) / n / 2;
    *cs = (double)(ctx_switches() - c0) / n;
    return t;
}

static double rdma(struct side *s, struct rmr_msg *m, int reps, int write)
{
    double best[MAXR * 4];
    for (int k = 0; k < reps; k++) {
        DAT_LMR_TRIPLET l = trip(s, s->buf + 4096 + (write ? 0 : MIB), MIB);
        DAT_RMR_TRIPLET r;
        r.rmr_context = m->ctx;
        r.pad = 0;
        r.target_address = m->addr;
        r.segment_length = MIB;
        double t0 = now_us();
        if (write)
            check(dat_ep_post_rdma_write(s->ep, 1, &l, ck(3), &r, DAT_COMPLETION_DEFAULT_FLAG), "rdma_write");
        else
            check(dat_ep_post_rdma_read(s->ep, 1, &l, ck(4), &r, DAT_COMPLETION_DEFAULT_FLAG), "rdma_read");
        next_event(s->dto, 0);
        best[k] = now_us() - t0;
    }
    /* median */
    for (int i = 1; i < reps; i++)
        for (int j = i; j > 0 && best[j] < best[j - 1]; j--) {
            double x = best[j];
            best[j] = best[j - 1];
            best[j - 1] = x;
        }
    return best[reps / 2];
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int rounds = 5, n = 20000, reps = 20, opt;
    char *ia_name = "shm";
    DAT_CONN_QUAL qual = 40000 + (DAT_CONN_QUAL)(getpid() % 20000);
    while ((opt = getopt(argc, argv, "r:n:k:P:q:")) != -1) {
        switch (opt) {
        case 'r': rounds = atoi(optarg); break;
        case 'n': n = atoi(optarg); break;
        case 'k': reps = atoi(optarg); break;
        case 'P': ia_name = optarg; break;
        case 'q': qual = strtoull(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: %s [-r rounds] [-n pingpongs] [-k rdma_reps] [-P ia] [-q qual]\n", argv[0]);
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAXR || reps < 1 || reps > MAXR * 4 || n < 1)
        return 2;
    _Atomic long *line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *floor_dst = malloc(MIB), *floor_src = malloc(MIB);
    memset(floor_dst, 0, MIB);
    memset(floor_src, 2, MIB);
    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        struct side s;
        open_side(&s, ia_name);
        check(dat_psp_create(s.ia, qual, s.cr_evd, DAT_PSP_CONSUMER_FLAG, &s.psp), "dat_psp_create");
        post_recv8(&s);
        if (write(ready[1], "R", 1) != 1)
            return 1;
        DAT_EVENT ev;
        DAT_COUNT nm;
        check(dat_evd_wait(s.cr_evd, WAIT_US, 1, &ev, &nm), "wait cr");
        check(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep, 0, NULL), "dat_cr_accept");
        check(dat_evd_wait(s.conn, WAIT_US, 1, &ev, &nm), "wait established");
        struct rmr_msg m = {s.rctx, (DAT_UINT64)(uintptr_t)(s.buf + 4096)};
        memcpy(s.buf + 128, &m, sizeof m);
        DAT_LMR_TRIPLET t = trip(&s, s.buf + 128, sizeof m);
        check(dat_ep_post_send(s.ep, 1, &t, ck(9), DAT_COMPLETION_SUPPRESS_FLAG), "send rmr");
        for (int r = 0; r < rounds; r++) {
            for (long i = 1; i <= n; i++) {
                while (atomic_load_explicit(line, memory_order_acquire) != 2 * (r * (long)n + i) - 1) {
                }
                atomic_store_explicit(line, 2 * (r * (long)n + i), memory_order_release);
            }
            echo(&s, n, 1);
            echo(&s, n, 0);
            recv8(&s, 0); /* end of the round's RDMA part */
        }
        dat_ep_disconnect(s.ep, DAT_CLOSE_GRACEFUL_FLAG);
        dat_evd_wait(s.conn, WAIT_US, 1, &ev, &nm);
        dat_ia_close(s.ia, DAT_CLOSE_ABRUPT_FLAG);
        _exit(0);
    }
    char c;
    if (read(ready[0], &c, 1) != 1)
        return 1;
    struct side s;
    open_side(&s, ia_name);
    DAT_LMR_TRIPLET rt = trip(&s, s.buf + 128, sizeof(struct rmr_msg));
    check(dat_ep_post_recv(s.ep, 1, &rt, ck(8), DAT_COMPLETION_DEFAULT_FLAG), "post_recv rmr");
    post_recv8(&s);
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    check(dat_ep_connect(s.ep, (DAT_IA_ADDRESS_PTR)&sin, qual, WAIT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
                         DAT_CONNECT_DEFAULT_FLAG),
          "dat_ep_connect");
    DAT_EVENT ev;
    DAT_COUNT nm;
    check(dat_evd_wait(s.conn, WAIT_US, 1, &ev, &nm), "wait established");
    /* the RMR message lands in the first receive posted */
    ev = next_event(s.rdto, 0);
    struct rmr_msg m;
    memcpy(&m, s.buf + 128, sizeof m);
    double fl[MAXR], pvw[MAXR], pp[MAXR], ppc[MAXR], wt[MAXR], wtc[MAXR], wr[MAXR], rd[MAXR];
    for (int r = 0; r < rounds; r++) {
        double t0 = now_us();
        for (long i = 1; i <= n; i++) {
            atomic_store_explicit(line, 2 * (r * (long)n + i) - 1, memory_order_release);
            while (atomic_load_explicit(line, memory_order_acquire) != 2 * (r * (long)n + i)) {
            }
        }
        fl[r] = (now_us() - t0) / n / 2;
        double v[MAXR * 4];
        for (int k = 0; k < reps; k++) {
            struct iovec l = {floor_src, MIB}, rv = {floor_dst, MIB};
            double a = now_us();
            if (process_vm_writev(child, &l, 1, &rv, 1, 0) != (ssize_t)MIB) {
                perror("process_vm_writev");
                return 1;
            }
            v[k] = now_us() - a;
        }
        pvw[r] = median(v, reps);
        pp[r] = pingpong(&s, n, 1, &ppc[r]);
        wt[r] = pingpong(&s, n, 0, &wtc[r]);
        wr[r] = rdma(&s, &m, reps, 1);
        rd[r] = rdma(&s, &m, reps, 0);
        send8(&s, 0);
    }
    printf("medians of %d rounds (%d ping-pongs, %d x 1 MiB per round)\n", rounds, n, reps);
    double f = median(fl, rounds), p = median(pp, rounds), w = median(wt, rounds);
    double x = median(pvw, rounds), a = median(wr, rounds), b = median(rd, rounds);
    printf("floor: spin ping-pong one-way          %8.3f us\n", f);
    printf("dat:   send/recv one-way, dequeue poll %8.3f us  (%.2fx floor, %.3f ctx switches/round trip)\n", p,
           p / f, median(ppc, rounds));
    printf("dat:   send/recv one-way, evd_wait     %8.3f us  (%.2fx floor, %.3f ctx switches/round trip)\n", w,
           w / f, median(wtc, rounds));
    printf("floor: process_vm_writev 1 MiB         %8.1f us  %7.0f MB/s\n", x, MIB / x);
    printf("dat:   RDMA write 1 MiB                %8.1f us  %7.0f MB/s  (%.2fx floor)\n", a, MIB / a, x / a);
    printf("dat:   RDMA read 1 MiB                 %8.1f us  %7.0f MB/s  (%.2fx floor)\n", b, MIB / b, x / b);
    dat_evd_wait(s.conn, WAIT_US, 1, &ev, &nm);
    dat_ia_close(s.ia, DAT_CLOSE_ABRUPT_FLAG);
    int st;
    waitpid(child, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
