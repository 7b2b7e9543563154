/*
 * datscale - what a DAT IA costs at scale, through the public DAT 2.0 API only.
 *
 *   datscale [-P ia] [-e 100,1000,10000] [-l 1000,10000,100000] [-c 10,100,1000] [-n pings]
 *            [-d dequeues] [-q qual]
 *
 * One process (the client) forks a second one (the server) and connects to it once: the base
 * connection. Then, for each count:
 *   eps     N unconnected EPs created in the client (on the base connection's EVDs): create
 *           time per EP and resident memory per EP, then freed;
 *   lmrs    N LMRs of one 4 KiB page created in the client: create time and memory per LMR;
 *   conns   M more connections to the server (dtestcm style: the client connects all, the
 *           server accepts each, both wait for all to be established, then one ping on each):
 *           setup rate, memory per connection on each side; then disconnected and freed.
 * With the objects of each count still present, the client times a send/recv ping-pong on the
 * base connection (round trip, both processes spinning on dat_evd_dequeue) and dat_evd_dequeue
 * on its empty DTO EVD, the one every EP above completes on: whether the data path's cost
 * grows with the count.
 * Resident memory is /proc/self/statm's, before and after; the server's comes over a pipe.
 * Prints a markdown table. Any DAT error prints its names and exits 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dat2/udat.h>

#define WAIT_US (60u * 1000000u) /* give up on any one event after this */
#define SEND_BIT (1ull << 63)    /* in a cookie: a send's completion, else a receive's */
#define MSG_LEN 64
#define MAX_COUNTS 8

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "datscale[%d]: ", (int)getpid());
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void check(DAT_RETURN r, const char *what)
{
    if (r == DAT_SUCCESS)
        return;
    const char *major = "?", *minor = "?";
    dat_strerror(r, &major, &minor);
    fail("%s: %s %s (0x%x)", what, major, minor, (unsigned)r);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Resident set in KiB, after the heap gave back what it could (so that memory freed by an
 * earlier count is not counted as reused by the next). */
static long rss_kib(void)
{
    malloc_trim(0);
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (!f || fscanf(f, "%ld %ld", &size, &res) != 2)
        fail("/proc/self/statm unreadable");
    fclose(f);
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* One side: an IA with one PZ, one DTO EVD for sends and receives of every EP, one
 * connection EVD, one registered buffer of a message slot per EP. */
struct side {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd, dto_evd, conn_evd, cr_evd;
    DAT_PZ_HANDLE pz;
    DAT_PSP_HANDLE psp;
    DAT_EP_HANDLE *eps;
    unsigned neps;
    char *buf;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lmr_ctx;
};

static unsigned max_conns; /* EP slots (and buffer slots) of a side */

static void open_side(struct side *s, char *ia_name, int server)
{
    memset(s, 0, sizeof *s);
    s->async_evd = DAT_HANDLE_NULL;
    check(dat_ia_open(ia_name, 8, &s->async_evd, &s->ia), "dat_ia_open");
    check(dat_pz_create(s->ia, &s->pz), "dat_pz_create");
    DAT_COUNT qlen = (DAT_COUNT)(2 * max_conns + 64);
    check(dat_evd_create(s->ia, qlen, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->dto_evd), "dat_evd_create(dto)");
    check(dat_evd_create(s->ia, qlen, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn_evd),
          "dat_evd_create(connection)");
    if (server)
        check(dat_evd_create(s->ia, qlen, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr_evd), "dat_evd_create(cr)");
    s->eps = calloc(max_conns, sizeof *s->eps);
    s->buf = calloc(max_conns, MSG_LEN);
    if (!s->eps || !s->buf)
        fail("out of memory");
    DAT_REGION_DESCRIPTION region;
    memset(&region, 0, sizeof region);
    region.for_va = s->buf;
    DAT_RMR_CONTEXT rmr_ctx;
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    check(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, region, (DAT_VLEN)max_conns * MSG_LEN, s->pz,
                         DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &s->lmr, &s->lmr_ctx, &rmr_ctx, &reg_len, &reg_addr),
          "dat_lmr_create(buffer)");
}

static DAT_LMR_TRIPLET slot(struct side *s, unsigned i)
{
    DAT_LMR_TRIPLET t;
    memset(&t, 0, sizeof t);
    t.lmr_context = s->lmr_ctx;
    t.virtual_address = (DAT_VADDR)(uintptr_t)(s->buf + (size_t)i * MSG_LEN);
    t.segment_length = MSG_LEN;
    return t;
}

static void post_recv(struct side *s, unsigned i)
{
    DAT_LMR_TRIPLET t = slot(s, i);
    DAT_DTO_COOKIE c = {.as_64 = i};
    check(dat_ep_post_recv(s->eps[i], 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
}

static void post_send(struct side *s, unsigned i)
{
    DAT_LMR_TRIPLET t = slot(s, i);
    DAT_DTO_COOKIE c = {.as_64 = i | SEND_BIT};
    check(dat_ep_post_send(s->eps[i], 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_send");
}

/* Spins on the DTO EVD until a receive completes: its EP index (send completions are taken
 * on the way). */
static unsigned next_recv(struct side *s)
{
    DAT_EVENT ev;
    double give_up = now_us() + WAIT_US;
    for (;;) {
        DAT_RETURN r = dat_evd_dequeue(s->dto_evd, &ev);
        if (DAT_GET_TYPE(r) == DAT_QUEUE_EMPTY) {
            if (now_us() > give_up)
                fail("no receive completion in %u s", WAIT_US / 1000000);
            continue;
        }
        check(r, "dat_evd_dequeue(dto)");
        if (ev.event_number != DAT_DTO_COMPLETION_EVENT)
            fail("unexpected event 0x%x on the DTO EVD", ev.event_number);
        const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
        if (d->status != DAT_DTO_SUCCESS)
            fail("DTO completion status %d", d->status);
        if (!(d->user_cookie.as_64 & SEND_BIT))
            return (unsigned)d->user_cookie.as_64;
    }
}

static void wait_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, DAT_EVENT *ev, const char *what)
{
    DAT_COUNT nmore;
    check(dat_evd_wait(evd, WAIT_US, 1, ev, &nmore), what);
    if (ev->event_number != want)
        fail("%s: event 0x%x, expected 0x%x", what, ev->event_number, want);
}

static void create_ep(struct side *s, unsigned i)
{
    check(dat_ep_create(s->ia, s->pz, s->dto_evd, s->dto_evd, s->conn_evd, NULL, &s->eps[i]), "dat_ep_create");
}

/* ------------------------------------------------------------------ server */

static void reply(int fd, long v)
{
    if (write(fd, &v, sizeof v) != sizeof v)
        fail("pipe write: %s", strerror(errno));
}

static long request(int fd, char *cmd)
{
    long v;
    ssize_t n = read(fd, &v, sizeof v);
    if (n == 0)
        return -1;
    if (n != sizeof v)
        fail("pipe read: %s", strerror(errno));
    if (read(fd, cmd, 1) != 1)
        fail("pipe read: %s", strerror(errno));
    return v;
}

/* Commands: 'A' k accept k connections (reply: RSS once all are established), 'E' k echo k
 * messages, 'D' k wait for the last k connections' DISCONNECTED and free their EPs (reply:
 * RSS), 'Q' quit. */
static void server(char *ia_name, DAT_CONN_QUAL qual, int in, int out)
{
    struct side s;
    open_side(&s, ia_name, 1);
    check(dat_psp_create(s.ia, qual, s.cr_evd, DAT_PSP_CONSUMER_FLAG, &s.psp), "dat_psp_create");
    reply(out, 0);
    char cmd;
    long k;
    DAT_EVENT ev;
    while ((k = request(in, &cmd)) >= 0) {
        switch (cmd) {
        case 'A':
            for (long j = 0; j < k; j++) {
                wait_event(s.cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev, "server: connection request");
                unsigned i = s.neps++;
                create_ep(&s, i);
                post_recv(&s, i);
                check(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.eps[i], 0, NULL),
                      "dat_cr_accept");
            }
            for (long j = 0; j < k; j++)
                wait_event(s.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, "server: established");
            reply(out, rss_kib());
            break;
        case 'E':
            for (long j = 0; j < k; j++) {
                unsigned i = next_recv(&s);
                post_recv(&s, i);
                post_send(&s, i);
            }
            reply(out, 0);
            break;
        case 'D':
            for (long j = 0; j < k; j++)
                wait_event(s.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev, "server: disconnected");
            for (long j = 0; j < k; j++)
                check(dat_ep_free(s.eps[--s.neps]), "server: dat_ep_free");
            {
                /* the flushed receives of the freed EPs */
                DAT_RETURN r;
                while ((r = dat_evd_dequeue(s.dto_evd, &ev)) == DAT_SUCCESS)
                    ;
            }
            reply(out, rss_kib());
            break;
        default:
            exit(0);
        }
    }
    exit(0);
}

/* ------------------------------------------------------------------ client */

struct link {
    int to, from;
};

static long ask(struct link *l, char cmd, long k)
{
    if (write(l->to, &k, sizeof k) != sizeof k || write(l->to, &cmd, 1) != 1)
        fail("pipe write: %s", strerror(errno));
    long v;
    if (read(l->from, &v, sizeof v) != sizeof v)
        fail("the server process ended");
    return v;
}

static struct sockaddr_in server_addr;

/* Connects EPs [first, first+k) (each with a receive posted) and waits until all are
 * established on both sides; returns the server's RSS then. */
static long connect_all(struct side *s, struct link *l, unsigned first, unsigned k, DAT_CONN_QUAL qual)
{
    if (write(l->to, &(long){k}, sizeof(long)) != sizeof(long) || write(l->to, "A", 1) != 1)
        fail("pipe write: %s", strerror(errno));
    DAT_EVENT ev;
    for (unsigned i = first; i < first + k; i++) {
        create_ep(s, i);
        post_recv(s, i);
        check(dat_ep_connect(s->eps[i], (DAT_IA_ADDRESS_PTR)&server_addr, qual, WAIT_US, 0, NULL,
                             DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
              "dat_ep_connect");
    }
    for (unsigned i = 0; i < k; i++)
        wait_event(s->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, "client: established");
    long v;
    if (read(l->from, &v, sizeof v) != sizeof v)
        fail("the server process ended");
    s->neps = first + k;
    return v;
}

/* Round trip of a send/recv ping-pong on the base connection (EP 0), µs. */
static double pingpong(struct side *s, struct link *l, unsigned n)
{
    if (write(l->to, &(long){n}, sizeof(long)) != sizeof(long) || write(l->to, "E", 1) != 1)
        fail("pipe write: %s", strerror(errno));
    double t0 = now_us();
    for (unsigned j = 0; j < n; j++) {
        post_send(s, 0);
        if (next_recv(s) != 0)
            fail("a receive on another connection");
        post_recv(s, 0);
    }
    double t = (now_us() - t0) / n;
    long v;
    if (read(l->from, &v, sizeof v) != sizeof v)
        fail("the server process ended");
    /* the last send's completion */
    DAT_EVENT ev;
    while (dat_evd_dequeue(s->dto_evd, &ev) == DAT_SUCCESS)
        ;
    return t;
}

/* dat_evd_dequeue on the empty DTO EVD, ns per call. */
static double dequeue_ns(struct side *s, unsigned n)
{
    DAT_EVENT ev;
    double t0 = now_us();
    for (unsigned j = 0; j < n; j++)
        if (DAT_GET_TYPE(dat_evd_dequeue(s->dto_evd, &ev)) != DAT_QUEUE_EMPTY)
            fail("the DTO EVD is not empty");
    return (now_us() - t0) * 1000.0 / n;
}

struct row {
    const char *what;
    unsigned count;
    double create_us;     /* per object */
    double rate;          /* objects (connections) per second */
    double kib_client;    /* per object */
    double kib_server;    /* per connection, or < 0 */
    double rtt_us, deq_ns;
};

static struct row rows[3 * MAX_COUNTS + 1];
static unsigned nrows;

static void print_table(void)
{
    printf("| objects | count | create, µs each | per second | RSS per object, KiB | server RSS per connection, KiB "
           "| send/recv round trip, µs | dat_evd_dequeue (empty), ns |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (unsigned i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        char server[32] = "-";
        if (r->kib_server >= 0)
            snprintf(server, sizeof server, "%.1f", r->kib_server);
        printf("| %s | %u | %.1f | %.0f | %.1f | %s | %.2f | %.0f |\n", r->what, r->count, r->create_us, r->rate,
               r->kib_client, server, r->rtt_us, r->deq_ns);
    }
}

static unsigned parse_counts(const char *arg, unsigned *out)
{
    unsigned n = 0;
    char *copy = strdup(arg), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == MAX_COUNTS)
            fail("at most %d counts", MAX_COUNTS);
        out[n++] = (unsigned)strtoul(t, NULL, 10);
    }
    free(copy);
    return n;
}

int main(int argc, char **argv)
{
    char *ia_name = "shm";
    unsigned ep_counts[MAX_COUNTS] = {100, 1000, 10000}, n_ep = 3;
    unsigned lmr_counts[MAX_COUNTS] = {1000, 10000, 100000}, n_lmr = 3;
    unsigned conn_counts[MAX_COUNTS] = {10, 100, 1000}, n_conn = 3;
    unsigned pings = 20000, dequeues = 200000;
    DAT_CONN_QUAL qual = 0x5ca1e000u + (unsigned)getpid() % 4096;
    int opt;
    while ((opt = getopt(argc, argv, "P:e:l:c:n:d:q:")) != -1) {
        switch (opt) {
        case 'P': ia_name = optarg; break;
        case 'e': n_ep = parse_counts(optarg, ep_counts); break;
        case 'l': n_lmr = parse_counts(optarg, lmr_counts); break;
        case 'c': n_conn = parse_counts(optarg, conn_counts); break;
        case 'n': pings = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'd': dequeues = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'q': qual = strtoull(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: %s [-P ia] [-e counts] [-l counts] [-c counts] [-n pings] [-d dequeues] [-q qual]\n",
                    argv[0]);
            return 2;
        }
    }
    if (pings == 0 || dequeues == 0)
        fail("-n and -d must be positive");
    max_conns = 1;
    for (unsigned i = 0; i < n_conn; i++)
        if (conn_counts[i] + 1 > max_conns)
            max_conns = conn_counts[i] + 1;
    for (unsigned i = 0; i < n_ep; i++)
        if (ep_counts[i] + 1 > max_conns)
            max_conns = ep_counts[i] + 1;
    /* a socket per connection on each side */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    memset(&server_addr, 0, sizeof server_addr);
    server_addr.sin_family = AF_INET;
    server_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0)
        fail("pipe: %s", strerror(errno));
    pid_t child = fork();
    if (child < 0)
        fail("fork: %s", strerror(errno));
    if (child == 0) {
        close(down[1]);
        close(up[0]);
        server(ia_name, qual, down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    struct link l = {down[1], up[0]};
    long v;
    if (read(l.from, &v, sizeof v) != sizeof v)
        fail("the server process did not start");

    struct side s;
    open_side(&s, ia_name, 0);
    connect_all(&s, &l, 0, 1, qual);
    pingpong(&s, &l, pings / 10); /* warm-up */
    rows[nrows++] = (struct row){"none (base connection only)", 0, 0, 0, 0, -1, pingpong(&s, &l, pings),
                                 dequeue_ns(&s, dequeues)};

    for (unsigned c = 0; c < n_ep; c++) {
        unsigned n = ep_counts[c];
        long before = rss_kib();
        double t0 = now_us();
        for (unsigned i = 1; i <= n; i++)
            create_ep(&s, i);
        double dt = now_us() - t0;
        long after = rss_kib();
        struct row r = {"unconnected EPs", n, dt / n, n / dt * 1e6, (double)(after - before) / n, -1, 0, 0};
        r.rtt_us = pingpong(&s, &l, pings);
        r.deq_ns = dequeue_ns(&s, dequeues);
        for (unsigned i = 1; i <= n; i++)
            check(dat_ep_free(s.eps[i]), "dat_ep_free");
        rows[nrows++] = r;
    }

    for (unsigned c = 0; c < n_lmr; c++) {
        unsigned n = lmr_counts[c];
        DAT_LMR_HANDLE *lmrs = calloc(n, sizeof *lmrs);
        char *page = aligned_alloc(4096, 4096);
        if (!lmrs || !page)
            fail("out of memory");
        memset(page, 0, 4096);
        DAT_REGION_DESCRIPTION region;
        memset(&region, 0, sizeof region);
        region.for_va = page;
        long before = rss_kib();
        double t0 = now_us();
        for (unsigned i = 0; i < n; i++) {
            DAT_LMR_CONTEXT lc;
            DAT_RMR_CONTEXT rc;
            DAT_VLEN reg_len;
            DAT_VADDR reg_addr;
            check(dat_lmr_create(s.ia, DAT_MEM_TYPE_VIRTUAL, region, 4096, s.pz, DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA,
                                 &lmrs[i], &lc, &rc, &reg_len, &reg_addr),
                  "dat_lmr_create");
        }
        double dt = now_us() - t0;
        long after = rss_kib();
        struct row r = {"LMRs (4 KiB each)", n, dt / n, n / dt * 1e6, (double)(after - before) / n, -1, 0, 0};
        r.rtt_us = pingpong(&s, &l, pings);
        r.deq_ns = dequeue_ns(&s, dequeues);
        for (unsigned i = 0; i < n; i++)
            check(dat_lmr_free(lmrs[i]), "dat_lmr_free");
        free(lmrs);
        free(page);
        rows[nrows++] = r;
    }

    for (unsigned c = 0; c < n_conn; c++) {
        unsigned m = conn_counts[c];
        long server_before = ask(&l, 'D', 0);
        long before = rss_kib();
        double t0 = now_us();
        long server_after = connect_all(&s, &l, 1, m, qual);
        double dt = now_us() - t0;
        long after = rss_kib();
        /* one ping on each */
        if (write(l.to, &(long){m}, sizeof(long)) != sizeof(long) || write(l.to, "E", 1) != 1)
            fail("pipe write: %s", strerror(errno));
        for (unsigned i = 1; i <= m; i++)
            post_send(&s, i);
        for (unsigned i = 1; i <= m; i++)
            post_recv(&s, next_recv(&s));
        if (read(l.from, &v, sizeof v) != sizeof v)
            fail("the server process ended");
        DAT_EVENT ev;
        while (dat_evd_dequeue(s.dto_evd, &ev) == DAT_SUCCESS)
            ;
        struct row r = {"connections", m, dt / m, m / dt * 1e6, (double)(after - before) / m,
                        (double)(server_after - server_before) / m, 0, 0};
        r.rtt_us = pingpong(&s, &l, pings);
        r.deq_ns = dequeue_ns(&s, dequeues);
        if (write(l.to, &(long){m}, sizeof(long)) != sizeof(long) || write(l.to, "D", 1) != 1)
            fail("pipe write: %s", strerror(errno));
        for (unsigned i = 1; i <= m; i++)
            check(dat_ep_disconnect(s.eps[i], DAT_CLOSE_ABRUPT_FLAG), "dat_ep_disconnect");
        for (unsigned i = 1; i <= m; i++)
            wait_event(s.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev, "client: disconnected");
        for (unsigned i = 1; i <= m; i++)
            check(dat_ep_free(s.eps[i]), "dat_ep_free");
        while (dat_evd_dequeue(s.dto_evd, &ev) == DAT_SUCCESS)
            ;
        if (read(l.from, &v, sizeof v) != sizeof v)
            fail("the server process ended");
        s.neps = 1;
        rows[nrows++] = r;
    }

    if (write(l.to, &(long){0}, sizeof(long)) != sizeof(long) || write(l.to, "Q", 1) != 1)
        fail("pipe write: %s", strerror(errno));
    print_table();
    int status;
    waitpid(child, &status, 0);
    return 0;
}
