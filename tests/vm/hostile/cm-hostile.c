/* tests/vm/hostile/cm-hostile.c -- a hostile plain rdma_cm / verbs peer of a DAT server.
 *
 *   cm-hostile IP PORT ROUNDS SEED [iwarp]
 *
 * First opens one well-behaved connection to the server at IP:PORT (dat-victim.c). Then, for
 * ROUNDS rounds, picks one misbehaviour at random (seeded, reproducible):
 *   pdata     connect with random private data of random length (0-56 bytes), then disconnect
 *   vanish    connect, then destroy the queue pair and the id without a disconnect
 *   garbage   connect, send 1-8 messages of random bytes and random lengths (1-4096; the
 *             server's receives are 256 bytes), then disconnect
 *   rdma      connect, RDMA-write and RDMA-read with random remote keys and addresses (the
 *             server grants no remote access), then disconnect; with "iwarp" a write's own
 *             success is not counted (iWARP completes it once sent), its read's is
 *   half      send a connection request and destroy the id without waiting for the reply
 *   idle      connect and leave the connection open until the end
 * and after every round checks that the good connection still answers a ping. At the end it
 * sends "stop" on the good connection. Exit status 0 when every ping was answered and no
 * RDMA with a forged key succeeded.
 * Build: cc -O2 cm-hostile.c -lrdmacm -libverbs */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF 8192
#define MAX_IDLE 8

static struct sockaddr_in server;
static struct rdma_event_channel *ch;
static unsigned seed;
static int iwarp; /* RDMA writes complete at the initiator once sent */

static unsigned rnd(void) { return (unsigned)rand_r(&seed); }

struct peer {
    struct rdma_cm_id *id;
    struct ibv_mr *mr;
    char *buf;
};

/* The next CM event, within timeout_ms; NULL on timeout. */
static struct rdma_cm_event *cm_event(int timeout_ms)
{
    struct pollfd p = {.fd = ch->fd, .events = POLLIN};
    if (poll(&p, 1, timeout_ms) <= 0)
        return NULL;
    struct rdma_cm_event *ev;
    return rdma_get_cm_event(ch, &ev) ? NULL : ev;
}

/* Waits for `want` on `id` (events of other ids are acknowledged and dropped); 0 when seen. */
static int expect(struct rdma_cm_id *id, enum rdma_cm_event_type want, int timeout_ms)
{
    for (;;) {
        struct rdma_cm_event *ev = cm_event(timeout_ms);
        if (!ev)
            return -1;
        int mine = ev->id == id, type = ev->event;
        rdma_ack_cm_event(ev);
        if (mine && type == (int)want)
            return 0;
        if (mine && (type == RDMA_CM_EVENT_REJECTED || type == RDMA_CM_EVENT_UNREACHABLE ||
                     type == RDMA_CM_EVENT_CONNECT_ERROR || type == RDMA_CM_EVENT_ADDR_ERROR ||
                     type == RDMA_CM_EVENT_ROUTE_ERROR))
            return -1;
    }
}

static void destroy(struct peer *p)
{
    if (p->id && p->id->qp)
        rdma_destroy_qp(p->id);
    if (p->mr)
        ibv_dereg_mr(p->mr);
    if (p->id)
        rdma_destroy_id(p->id);
    free(p->buf);
    memset(p, 0, sizeof *p);
}

/* Resolves, makes a QP and a registered buffer, and sends a connection request carrying
 * `pdata`. With `wait`, waits for ESTABLISHED; 0 on success. */
static int connect_peer(struct peer *p, const void *pdata, unsigned char plen, int wait)
{
    memset(p, 0, sizeof *p);
    if (rdma_create_id(ch, &p->id, NULL, RDMA_PS_TCP))
        return -1;
    if (rdma_resolve_addr(p->id, NULL, (struct sockaddr *)&server, 2000) ||
        expect(p->id, RDMA_CM_EVENT_ADDR_RESOLVED, 5000) || rdma_resolve_route(p->id, 2000) ||
        expect(p->id, RDMA_CM_EVENT_ROUTE_RESOLVED, 5000))
        return -1;
    struct ibv_qp_init_attr qpa = {.qp_type = IBV_QPT_RC,
                                   .cap = {.max_send_wr = 16, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
    if (rdma_create_qp(p->id, NULL, &qpa))
        return -1;
    p->buf = calloc(1, BUF);
    p->mr = ibv_reg_mr(p->id->qp->pd, p->buf, BUF, IBV_ACCESS_LOCAL_WRITE);
    if (!p->buf || !p->mr)
        return -1;
    struct rdma_conn_param cp = {.private_data = pdata, .private_data_len = plen, .responder_resources = 1,
                                 .initiator_depth = 1, .retry_count = 7, .rnr_retry_count = 7};
    if (rdma_connect(p->id, &cp))
        return -1;
    return wait ? expect(p->id, RDMA_CM_EVENT_ESTABLISHED, 10000) : 0;
}

static int post(struct peer *p, enum ibv_wr_opcode op, size_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t)(p->buf + off), .length = len, .lkey = p->mr->lkey};
    struct ibv_send_wr wr = {.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op, .send_flags = IBV_SEND_SIGNALED};
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    struct ibv_send_wr *bad;
    return ibv_post_send(p->id->qp, &wr, &bad);
}

static int post_recv(struct peer *p, size_t off)
{
    struct ibv_sge sge = {.addr = (uintptr_t)(p->buf + off), .length = 256, .lkey = p->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *bad;
    return ibv_post_recv(p->id->qp, &wr, &bad);
}

/* One completion of `cq` within timeout_ms; 0 when one came (in *wc). */
static int completion(struct ibv_cq *cq, struct ibv_wc *wc, int timeout_ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (ibv_poll_cq(cq, 1, wc) == 1)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms)
            return -1;
        usleep(100);
    }
}

/* ping on the good connection; 0 when the matching pong came back */
static int ping(struct peer *good, uint32_t n)
{
    struct ibv_wc wc;
    memcpy(good->buf, "ping", 4);
    memcpy(good->buf + 4, &n, 4);
    if (post_recv(good, 1024) || post(good, IBV_WR_SEND, 0, 8, 0, 0))
        return -1;
    int sent = 0, got = 0;
    while (!(sent && got)) {
        struct ibv_cq *cq = sent ? good->id->recv_cq : good->id->send_cq;
        if (completion(cq, &wc, 20000) || wc.status != IBV_WC_SUCCESS)
            return -1;
        if (!sent)
            sent = 1;
        else
            got = 1;
    }
    return memcmp(good->buf + 1024, "pong", 4) || memcmp(good->buf + 1028, &n, 4) ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 6 || inet_pton(AF_INET, argv[1], &server.sin_addr) != 1) {
        fprintf(stderr, "usage: cm-hostile IP PORT ROUNDS SEED [iwarp]\n");
        return 2;
    }
    iwarp = argc == 6 && !strcmp(argv[5], "iwarp");
    server.sin_family = AF_INET;
    server.sin_port = htons((unsigned short)atoi(argv[2]));
    int rounds = atoi(argv[3]);
    seed = (unsigned)strtoul(argv[4], NULL, 0);
    printf("cm-hostile: seed %u, %d rounds against %s:%s\n", seed, rounds, argv[1], argv[2]);
    ch = rdma_create_event_channel();
    if (!ch)
        return 1;
    struct peer good, idle[MAX_IDLE];
    int n_idle = 0, failed = 0;
    static const char hello[] = "cm-hostile good";
    if (connect_peer(&good, hello, sizeof hello, 1)) {
        fprintf(stderr, "cm-hostile: the good connection could not be made\n");
        return 1;
    }
    if (ping(&good, 0)) {
        fprintf(stderr, "cm-hostile: no pong on the fresh good connection\n");
        return 1;
    }
    static const char *names[] = {"pdata", "vanish", "garbage", "rdma", "half", "idle"};
    int counts[6] = {0};
    for (int r = 1; r <= rounds; r++) {
        struct peer p;
        unsigned char pd[56];
        unsigned char plen = (unsigned char)(rnd() % (sizeof pd + 1));
        for (unsigned i = 0; i < plen; i++)
            pd[i] = (unsigned char)rnd();
        int kind = (int)(rnd() % 6);
        if (kind == 5 && n_idle == MAX_IDLE)
            kind = 0;
        counts[kind]++;
        int up = connect_peer(&p, pd, plen, kind != 4) == 0;
        struct ibv_wc wc;
        switch (kind) {
        case 0: /* pdata */
            if (up)
                rdma_disconnect(p.id);
            break;
        case 1: /* vanish: destroy() below, no disconnect */
            break;
        case 2: /* garbage */
            for (int i = 0, n = 1 + (int)(rnd() % 8); up && i < n; i++) {
                uint32_t len = 1 + rnd() % 4096;
                for (uint32_t b = 0; b < len; b++)
                    p.buf[b] = (char)rnd();
                if (!memcmp(p.buf, "stop", 4) || !memcmp(p.buf, "ping", 4))
                    p.buf[0] = 'x';
                if (post(&p, IBV_WR_SEND, 0, len, 0, 0) || completion(p.id->send_cq, &wc, 5000))
                    break;
            }
            if (up)
                rdma_disconnect(p.id);
            break;
        case 3: /* rdma with forged keys: a write, then a read (on iWARP a write completes at the
                 * initiator once sent, and the target's refusal ends the connection, so there
                 * only the read's completion tells) */
            for (int i = 0; up && i < 2; i++) {
                uint64_t raddr = (uint64_t)rnd() << 32 | rnd();
                uint32_t rkey = rnd();
                if (post(&p, i ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, 0, 1 + rnd() % 4096, raddr, rkey) ||
                    completion(p.id->send_cq, &wc, 10000))
                    break;
                if (wc.status != IBV_WC_SUCCESS)
                    break; /* refused; the QP is in error now */
                if (i == 1 || !iwarp) {
                    fprintf(stderr, "cm-hostile: round %d: an RDMA %s with rkey 0x%x at 0x%llx succeeded\n", r,
                            i ? "read" : "write", rkey, (unsigned long long)raddr);
                    failed = 1;
                    break;
                }
            }
            if (up)
                rdma_disconnect(p.id);
            break;
        case 4: /* half: destroy() below, right after the request */
            break;
        case 5: /* idle */
            if (up) {
                idle[n_idle++] = p;
                p.id = NULL;
            }
            break;
        }
        if (p.id)
            destroy(&p);
        if (ping(&good, (uint32_t)r)) {
            fprintf(stderr, "cm-hostile: round %d (%s): the good connection stopped answering\n", r, names[kind]);
            return 1;
        }
    }
    memcpy(good.buf, "stop", 4);
    struct ibv_wc wc;
    if (post(&good, IBV_WR_SEND, 0, 4, 0, 0) || completion(good.id->send_cq, &wc, 10000) ||
        wc.status != IBV_WC_SUCCESS) {
        fprintf(stderr, "cm-hostile: the stop message was not sent\n");
        failed = 1;
    }
    for (int i = 0; i < n_idle; i++) {
        rdma_disconnect(idle[i].id);
        destroy(&idle[i]);
    }
    rdma_disconnect(good.id);
    destroy(&good);
    printf("cm-hostile: %d rounds:", rounds);
    for (int k = 0; k < 6; k++)
        printf(" %s %d", names[k], counts[k]);
    printf("; every ping answered%s\n", failed ? "; FAILED (see above)" : "");
    return failed;
}
