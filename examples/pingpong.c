/*
 * pingpong.c - a small, complete uDAPL (DAT 1.2) program.
 *
 *   server:  pingpong -s [-P ia_name] [-q conn_qual] [-n iterations] [-b rdma_bytes]
 *   client:  pingpong -h 127.0.0.1 [-P ia_name] [-q conn_qual] [-n iterations] [-b rdma_bytes]
 *
 * Default IA name is "shm" (processes of one user on one host).  What it does:
 *   1. both sides open the IA and create a protection zone, event dispatchers (EVDs),
 *      an endpoint and a registered memory region (LMR);
 *   2. the server listens on a connection qualifier (PSP); the client connects to
 *      <host>:<qualifier> sending private data; the server checks it and accepts with its
 *      own private data, which the client checks in the ESTABLISHED event;
 *   3. send/recv ping-pong of N messages, each checked, and the average round trip;
 *   4. the server sends the client an RMR triplet (rmr_context, address, length) of its
 *      buffer; the client RDMA-writes a pattern into it, RDMA-reads it back, checks it and
 *      prints the bandwidth of both; the server verifies the written data too;
 *   5. the client disconnects, both sides free everything and close the IA.
 *
 * Build: cc -std=c99 -Wall -I<include> pingpong.c -L<lib> -ldat
 */
#define _POSIX_C_SOURCE 200809L
#include <dat/udat.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MSG_SIZE 64                 /* every send/recv message is 64 bytes */
#define WAIT_US (15u * 1000u * 1000u) /* give up waiting for any single event after 15 s */

/* message types exchanged with send/recv */
enum { MSG_PING = 1, MSG_PONG, MSG_RMR, MSG_DONE, MSG_OK };

struct msg {
    uint32_t type;
    uint32_t seq;
    uint64_t addr;   /* MSG_RMR: target address; MSG_DONE: checksum */
    uint64_t len;    /* MSG_RMR: target length */
    uint32_t rmr_context;
    unsigned char payload[MSG_SIZE - 28];
};

static const char CLIENT_PD[] = "pingpong-client-hello";
static const char SERVER_PD[] = "pingpong-server-welcome";

/* everything one side owns */
struct ctx {
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd, dto_evd, recv_evd, conn_evd, cr_evd; /* dto_evd: sends/RDMA */
    DAT_PZ_HANDLE pz;
    DAT_EP_HANDLE ep;
    DAT_PSP_HANDLE psp;
    /* one buffer: [0,4096) messages, [4096, 4096+2*rdma) RDMA source/target + read-back */
    char *buf;
    DAT_VLEN buflen;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lmr_ctx;
    DAT_RMR_CONTEXT rmr_ctx;
};

static int verbose_step = 1;

static void step(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void step(const char *fmt, ...)
{
    if (!verbose_step)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* Print a DAT error with its symbolic names and exit. */
static void check(DAT_RETURN r, const char *what)
{
    if (r == DAT_SUCCESS)
        return;
    const char *maj = "?", *min = "";
    dat_strerror(r, &maj, &min);
    fprintf(stderr, "pingpong: %s failed: 0x%08x %s %s\n", what, (unsigned)r, maj, min ? min : "");
    exit(1);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pingpong: ");
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

/* -p: poll with dat_evd_dequeue instead of sleeping in dat_evd_wait (lower latency, one
 * busy CPU per process; what perftest's latency tests do). */
static int poll_mode;

/* Wait for one event on evd and insist on its type. */
static DAT_EVENT wait_for(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, const char *what)
{
    DAT_EVENT ev;
    DAT_COUNT nmore;
    if (poll_mode) {
        double deadline = now() + WAIT_US / 1e6;
        DAT_RETURN r;
        while ((r = dat_evd_dequeue(evd, &ev)) != DAT_SUCCESS) {
            if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY || now() > deadline)
                check(r, what);
        }
    } else {
        check(dat_evd_wait(evd, WAIT_US, 1, &ev, &nmore), what);
    }
    if (ev.event_number != want)
        fail("%s: expected event 0x%x, got 0x%x", what, (unsigned)want, (unsigned)ev.event_number);
    return ev;
}

/* Wait for the DTO completion with this cookie; it must be successful. */
static DAT_DTO_COMPLETION_EVENT_DATA wait_dto_on(DAT_EVD_HANDLE evd, uint64_t cookie, const char *what)
{
    DAT_EVENT ev = wait_for(evd, DAT_DTO_COMPLETION_EVENT, what);
    DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
    if (d.status != DAT_DTO_SUCCESS)
        fail("%s: completion status %d", what, (int)d.status);
    if (d.user_cookie.as_64 != cookie)
        fail("%s: completion cookie %llu, expected %llu", what, (unsigned long long)d.user_cookie.as_64,
             (unsigned long long)cookie);
    return d;
}

/* completion of a send / RDMA operation */
static DAT_DTO_COMPLETION_EVENT_DATA wait_dto(struct ctx *c, uint64_t cookie, const char *what)
{
    return wait_dto_on(c->dto_evd, cookie, what);
}

/* completion of a receive */
static DAT_DTO_COMPLETION_EVENT_DATA wait_recv(struct ctx *c, uint64_t cookie, const char *what)
{
    return wait_dto_on(c->recv_evd, cookie, what);
}

static DAT_LMR_TRIPLET seg(struct ctx *c, size_t off, DAT_VLEN len)
{
    DAT_LMR_TRIPLET t;
    memset(&t, 0, sizeof t);
    t.lmr_context = c->lmr_ctx;
    t.virtual_address = (DAT_VADDR)(uintptr_t)(c->buf + off);
    t.segment_length = len;
    return t;
}

static DAT_DTO_COOKIE cookie(uint64_t v)
{
    DAT_DTO_COOKIE k;
    k.as_64 = v;
    return k;
}

/* Message slots in the first 4 KiB of the buffer. Receive k lands in slot k % 2, so the next
 * receive can be posted before the current one is read: a message must never arrive with no
 * receive posted (iWARP has no receiver-not-ready retry; it breaks the connection). */
#define RECV_SLOT(k) (((k) & 1) * 512)
#define SEND_SLOT 1024
static struct msg *recv_msg(struct ctx *c, uint64_t ck) { return (struct msg *)(c->buf + RECV_SLOT(ck)); }
static struct msg *send_msg(struct ctx *c) { return (struct msg *)(c->buf + SEND_SLOT); }

static void post_recv(struct ctx *c, uint64_t ck)
{
    DAT_LMR_TRIPLET t = seg(c, RECV_SLOT(ck), MSG_SIZE);
    check(dat_ep_post_recv(c->ep, 1, &t, cookie(ck), DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
}

/* Send the message in the send slot and wait until the send completed. */
static void send_and_wait(struct ctx *c, uint64_t ck)
{
    DAT_LMR_TRIPLET t = seg(c, SEND_SLOT, MSG_SIZE);
    check(dat_ep_post_send(c->ep, 1, &t, cookie(ck), DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_send");
    wait_dto(c, ck, "send completion");
}

static void fill_payload(struct msg *m, uint32_t seq)
{
    for (size_t i = 0; i < sizeof m->payload; i++)
        m->payload[i] = (unsigned char)(seq * 31u + i);
}

static int payload_ok(const struct msg *m, uint32_t seq)
{
    for (size_t i = 0; i < sizeof m->payload; i++)
        if (m->payload[i] != (unsigned char)(seq * 31u + i))
            return 0;
    return 1;
}

/* Steps common to both sides: IA, PZ, EVDs, endpoint, memory registration. */
static void setup(struct ctx *c, char *ia_name, DAT_VLEN rdma_bytes)
{
    memset(c, 0, sizeof *c);
    /* dat_ia_open is a macro for dat_ia_openv(..., DAT_VERSION_MAJOR, DAT_VERSION_MINOR, ...).
     * async_evd = DAT_HANDLE_NULL asks the provider to create the asynchronous-event EVD. */
    c->async_evd = DAT_HANDLE_NULL;
    check(dat_ia_open(ia_name, 8, &c->async_evd, &c->ia), "dat_ia_open");
    step("opened IA \"%s\"", ia_name);

    DAT_PROVIDER_ATTR pattr;
    check(dat_ia_query(c->ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_PROVIDER_NAME, &pattr), "dat_ia_query");
    step("provider: %s", pattr.provider_name);

    check(dat_pz_create(c->ia, &c->pz), "dat_pz_create");
    /* EVDs for data transfer completions and one for connection events */
    check(dat_evd_create(c->ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &c->dto_evd), "dat_evd_create(DTO)");
    /* receives complete on their own EVD, so a receive that overtakes the completion of our
     * own previous send does not confuse the strictly ordered waits below */
    check(dat_evd_create(c->ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &c->recv_evd), "dat_evd_create(recv)");
    check(dat_evd_create(c->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &c->conn_evd),
          "dat_evd_create(CONNECTION)");
    /* NULL attributes = provider defaults */
    check(dat_ep_create(c->ia, c->pz, c->recv_evd, c->dto_evd, c->conn_evd, NULL, &c->ep), "dat_ep_create");

    /* register the whole buffer once, with local and remote read/write rights */
    c->buflen = 4096 + 2 * rdma_bytes;
    void *mem = NULL;
    if (posix_memalign(&mem, 4096, c->buflen) != 0)
        fail("out of memory");
    c->buf = mem;
    memset(c->buf, 0, c->buflen);
    DAT_REGION_DESCRIPTION region;
    memset(&region, 0, sizeof region);
    region.for_va = c->buf;
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    check(dat_lmr_create(c->ia, DAT_MEM_TYPE_VIRTUAL, region, c->buflen, c->pz, DAT_MEM_PRIV_ALL_FLAG, &c->lmr,
                         &c->lmr_ctx, &c->rmr_ctx, &reg_len, &reg_addr),
          "dat_lmr_create");
    step("registered %llu bytes (lmr_context 0x%x, rmr_context 0x%x)", (unsigned long long)c->buflen,
         c->lmr_ctx, c->rmr_ctx);
}

/* Free in reverse order, then a graceful IA close (which fails if anything was left over). */
static void teardown(struct ctx *c)
{
    check(dat_ep_free(c->ep), "dat_ep_free");
    if (c->psp)
        check(dat_psp_free(c->psp), "dat_psp_free");
    check(dat_lmr_free(c->lmr), "dat_lmr_free");
    check(dat_evd_free(c->dto_evd), "dat_evd_free(DTO)");
    check(dat_evd_free(c->recv_evd), "dat_evd_free(recv)");
    check(dat_evd_free(c->conn_evd), "dat_evd_free(CONNECTION)");
    if (c->cr_evd)
        check(dat_evd_free(c->cr_evd), "dat_evd_free(CR)");
    check(dat_pz_free(c->pz), "dat_pz_free");
    check(dat_ia_close(c->ia, DAT_CLOSE_GRACEFUL_FLAG), "dat_ia_close");
    free(c->buf);
    step("closed the IA");
}

static int run_server(char *ia_name, DAT_CONN_QUAL qual, int iters, DAT_VLEN rdma_bytes)
{
    struct ctx c;
    setup(&c, ia_name, rdma_bytes);

    /* listen: a PSP delivers connection requests on a CR EVD */
    check(dat_evd_create(c.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &c.cr_evd), "dat_evd_create(CR)");
    check(dat_psp_create(c.ia, qual, c.cr_evd, DAT_PSP_CONSUMER_FLAG, &c.psp), "dat_psp_create");
    /* a receive must be posted before the first message can arrive */
    post_recv(&c, 0);
    step("server: listening on connection qualifier %llu", (unsigned long long)qual);

    DAT_EVENT ev = wait_for(c.cr_evd, DAT_CONNECTION_REQUEST_EVENT, "waiting for a connection request");
    DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
    DAT_CR_PARAM crp;
    check(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp), "dat_cr_query");
    if (crp.private_data_size < (DAT_COUNT)sizeof CLIENT_PD || memcmp(crp.private_data, CLIENT_PD, sizeof CLIENT_PD))
        fail("server: unexpected private data in the connection request");
    step("server: connection request with private data \"%s\"", (const char *)crp.private_data);
    check(dat_cr_accept(cr, c.ep, sizeof SERVER_PD, (DAT_PVOID)SERVER_PD), "dat_cr_accept");
    wait_for(c.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, "waiting for ESTABLISHED");
    step("server: connection established");

    /* ping-pong: answer every PING with a PONG carrying the same sequence number */
    for (int i = 0; i < iters; i++) {
        wait_recv(&c, (uint64_t)i, "receive PING");
        struct msg *m = recv_msg(&c, (uint64_t)i);
        if (m->type != MSG_PING || m->seq != (uint32_t)i || !payload_ok(m, (uint32_t)i))
            fail("server: bad PING %d", i);
        post_recv(&c, (uint64_t)i + 1);
        struct msg *r = send_msg(&c);
        memset(r, 0, sizeof *r);
        r->type = MSG_PONG;
        r->seq = (uint32_t)i;
        fill_payload(r, (uint32_t)i + 1);
        send_and_wait(&c, 1000000 + (uint64_t)i);
    }
    step("server: answered %d pings", iters);

    /* give the client an RMR triplet of the RDMA target area */
    char *target = c.buf + 4096;
    struct msg *r = send_msg(&c);
    memset(r, 0, sizeof *r);
    r->type = MSG_RMR;
    r->rmr_context = c.rmr_ctx;
    r->addr = (uint64_t)(uintptr_t)target;
    r->len = rdma_bytes;
    send_and_wait(&c, 2000000);
    step("server: sent RMR triplet (context 0x%x, %llu bytes)", c.rmr_ctx, (unsigned long long)rdma_bytes);

    /* the client writes, reads back and then tells us it is done */
    wait_recv(&c, (uint64_t)iters, "receive DONE");
    struct msg *d = recv_msg(&c, (uint64_t)iters);
    if (d->type != MSG_DONE)
        fail("server: expected DONE");
    DAT_LMR_TRIPLET t = seg(&c, 4096, rdma_bytes);
    check(dat_lmr_sync_rdma_write(c.ia, &t, 1), "dat_lmr_sync_rdma_write");
    uint64_t sum = 0;
    for (DAT_VLEN i = 0; i < rdma_bytes; i++)
        sum += (unsigned char)target[i] * (i + 1);
    if (sum != d->addr)
        fail("server: RDMA-written data checksum mismatch");
    step("server: RDMA-written data verified");
    post_recv(&c, (uint64_t)iters + 1);
    r = send_msg(&c);
    memset(r, 0, sizeof *r);
    r->type = MSG_OK;
    send_and_wait(&c, 2000001);

    /* the client disconnects; the still-posted receive is flushed */
    wait_for(c.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, "waiting for DISCONNECTED");
    step("server: peer disconnected");
    ev = wait_for(c.recv_evd, DAT_DTO_COMPLETION_EVENT, "flushed receive");
    if (ev.event_data.dto_completion_event_data.status != DAT_DTO_ERR_FLUSHED)
        fail("server: leftover receive not flushed");
    teardown(&c);
    step("server: done");
    return 0;
}

static int run_client(char *ia_name, const char *host, DAT_CONN_QUAL qual, int iters, DAT_VLEN rdma_bytes)
{
    struct ctx c;
    setup(&c, ia_name, rdma_bytes);

    /* resolve the server address; DAT addresses are sockaddrs, the qualifier is separate */
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
        struct addrinfo hints, *res;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_INET;
        if (getaddrinfo(host, NULL, &hints, &res) != 0)
            fail("cannot resolve %s", host);
        sin.sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
        freeaddrinfo(res);
    }

    post_recv(&c, 0);
    step("client: connecting to %s qualifier %llu", host, (unsigned long long)qual);
    check(dat_ep_connect(c.ep, (DAT_IA_ADDRESS_PTR)&sin, qual, WAIT_US, sizeof CLIENT_PD, (DAT_PVOID)CLIENT_PD,
                         DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
          "dat_ep_connect");
    DAT_EVENT ev = wait_for(c.conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, "waiting for ESTABLISHED");
    const DAT_CONNECTION_EVENT_DATA *cd = &ev.event_data.connect_event_data;
    if (cd->private_data_size < (DAT_COUNT)sizeof SERVER_PD || memcmp(cd->private_data, SERVER_PD, sizeof SERVER_PD))
        fail("client: unexpected accept private data");
    step("client: connection established, server said \"%s\"", (const char *)cd->private_data);

    /* ping-pong with latency measurement */
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        struct msg *m = send_msg(&c);
        memset(m, 0, sizeof *m);
        m->type = MSG_PING;
        m->seq = (uint32_t)i;
        fill_payload(m, (uint32_t)i);
        post_recv(&c, (uint64_t)i + 1); /* for the message after the PONG (the last: RMR) */
        send_and_wait(&c, 1000000 + (uint64_t)i);
        wait_recv(&c, (uint64_t)i, "receive PONG");
        struct msg *r = recv_msg(&c, (uint64_t)i);
        if (r->type != MSG_PONG || r->seq != (uint32_t)i || !payload_ok(r, (uint32_t)i + 1))
            fail("client: bad PONG %d", i);
    }
    double dt = now() - t0;
    step("client: %d ping-pongs of %d bytes, data checked", iters, MSG_SIZE);
    printf("average round-trip latency: %.2f us\n", dt * 1e6 / iters);

    /* RMR triplet of the server's buffer */
    wait_recv(&c, (uint64_t)iters, "receive RMR triplet");
    struct msg *rm = recv_msg(&c, (uint64_t)iters);
    if (rm->type != MSG_RMR || rm->len < rdma_bytes)
        fail("client: bad RMR message");
    DAT_RMR_TRIPLET remote;
    memset(&remote, 0, sizeof remote);
    remote.rmr_context = rm->rmr_context;
    remote.target_address = rm->addr;
    remote.segment_length = rdma_bytes;
    post_recv(&c, (uint64_t)iters + 1);

    /* RDMA write a pattern from the first half of our RDMA area */
    char *src = c.buf + 4096, *back = c.buf + 4096 + rdma_bytes;
    uint64_t sum = 0;
    for (DAT_VLEN i = 0; i < rdma_bytes; i++) {
        src[i] = (char)((i * 7 + 13) & 0xff);
        sum += (unsigned char)src[i] * (i + 1);
    }
    DAT_LMR_TRIPLET local = seg(&c, 4096, rdma_bytes);
    t0 = now();
    check(dat_ep_post_rdma_write(c.ep, 1, &local, cookie(3000000), &remote, DAT_COMPLETION_DEFAULT_FLAG),
          "dat_ep_post_rdma_write");
    wait_dto(&c, 3000000, "RDMA write completion");
    dt = now() - t0;
    printf("RDMA write: %llu bytes in %.1f us = %.1f MB/s\n", (unsigned long long)rdma_bytes, dt * 1e6,
           (double)rdma_bytes / dt / 1e6);

    /* RDMA read it back into the second half and compare */
    memset(back, 0, rdma_bytes);
    DAT_LMR_TRIPLET rb = seg(&c, 4096 + rdma_bytes, rdma_bytes);
    t0 = now();
    check(dat_ep_post_rdma_read(c.ep, 1, &rb, cookie(3000001), &remote, DAT_COMPLETION_DEFAULT_FLAG),
          "dat_ep_post_rdma_read");
    wait_dto(&c, 3000001, "RDMA read completion");
    dt = now() - t0;
    check(dat_lmr_sync_rdma_read(c.ia, &rb, 1), "dat_lmr_sync_rdma_read");
    if (memcmp(src, back, rdma_bytes) != 0)
        fail("client: RDMA read-back data differs from what was written");
    printf("RDMA read:  %llu bytes in %.1f us = %.1f MB/s (data checked)\n", (unsigned long long)rdma_bytes,
           dt * 1e6, (double)rdma_bytes / dt / 1e6);

    /* tell the server to verify, wait for its OK */
    struct msg *d = send_msg(&c);
    memset(d, 0, sizeof *d);
    d->type = MSG_DONE;
    d->addr = sum;
    send_and_wait(&c, 2000000);
    wait_recv(&c, (uint64_t)iters + 1, "receive OK");
    if (recv_msg(&c, (uint64_t)iters + 1)->type != MSG_OK)
        fail("client: expected OK");
    step("client: server verified the RDMA data");

    /* graceful disconnect: DISCONNECTED on both sides */
    check(dat_ep_disconnect(c.ep, DAT_CLOSE_GRACEFUL_FLAG), "dat_ep_disconnect");
    wait_for(c.conn_evd, DAT_CONNECTION_EVENT_DISCONNECTED, "waiting for DISCONNECTED");
    step("client: disconnected");
    teardown(&c);
    step("client: done");
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: pingpong -s [-P ia] [-q qual] [-n iters] [-b rdma_bytes] [-p]\n"
                    "       pingpong -h <server-ip> [-P ia] [-q qual] [-n iters] [-b rdma_bytes] [-p]\n"
                    "  -p  poll with dat_evd_dequeue instead of waiting in dat_evd_wait\n");
    exit(2);
}

int main(int argc, char **argv)
{
    char *ia_name = "shm";
    const char *host = NULL;
    int server = 0, iters = 1000, opt;
    DAT_CONN_QUAL qual = 18515;
    DAT_VLEN rdma_bytes = 1 << 20;

    while ((opt = getopt(argc, argv, "sh:P:q:n:b:p")) != -1) {
        switch (opt) {
        case 's': server = 1; break;
        case 'h': host = optarg; break;
        case 'P': ia_name = optarg; break;
        case 'q': qual = strtoull(optarg, NULL, 0); break;
        case 'n': iters = atoi(optarg); break;
        case 'b': rdma_bytes = strtoull(optarg, NULL, 0); break;
        case 'p': poll_mode = 1; break;
        default: usage();
        }
    }
    if (server == (host != NULL) || iters <= 0 || rdma_bytes == 0)
        usage();
    alarm(120); /* never hang forever */
    return server ? run_server(ia_name, qual, iters, rdma_bytes)
                  : run_client(ia_name, host, qual, iters, rdma_bytes);
}
