/*
 * opcost.c - what one DAT data-path operation costs in instructions, for `make bench-callgrind`.
 *
 *   opcost [-P ia] [-h address] [-q qual] [-n ops]
 *
 * One process, two endpoints connected to each other over the IA (default shm; -h: the IPv4
 * address the client connects to, default 127.0.0.1, a verbs IA's own address), so no second
 * process's timing changes what is counted. After a warm-up it runs, each in its own function
 * so that valgrind --tool=callgrind --toggle-collect=<function> counts it alone:
 *   empty_polls     -n dat_evd_dequeue calls on an EVD with nothing to deliver
 *   message_cycles  -n cycles of: post a receive, post an 8-byte send, dequeue the receive's
 *                   completion and the send's (both sides' work for one message)
 * Instructions per operation = the function's inclusive count / ops. Not a timing: no clock.
 * Built against <dat/udat.h> and -ldat (the DAT 1.2 face), or with -DDATPERF_DAT2 against
 * <dat2/udat.h> and -ldat2 (the DAT 2.0 face; datperf's dat_compat.h holds the differences).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../datperf/dat_compat.h"

static void check(DAT_RETURN r, const char *what)
{
    if (r != DAT_SUCCESS) {
        fprintf(stderr, "opcost: %s failed: 0x%x\n", what, (unsigned)r);
        exit(1);
    }
}

static DAT_EVD_HANDLE evd(DAT_IA_HANDLE ia, DAT_EVD_FLAGS flags)
{
    DAT_EVD_HANDLE e;
    check(dat_evd_create(ia, 64, DAT_HANDLE_NULL, flags, &e), "dat_evd_create");
    return e;
}

static DAT_EVENT wait_event(DAT_EVD_HANDLE e, DAT_EVENT_NUMBER want, const char *what)
{
    DAT_EVENT ev;
    DAT_COUNT more;
    check(dat_evd_wait(e, 10 * 1000 * 1000, 1, &ev, &more), what);
    if (ev.event_number != want) {
        fprintf(stderr, "opcost: %s: event 0x%x\n", what, (unsigned)ev.event_number);
        exit(1);
    }
    return ev;
}

/* Exits unless ev is a successful DTO completion. */
static void check_completion(DAT_EVENT ev)
{
    if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
        ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
        fprintf(stderr, "opcost: unexpected event 0x%x\n", (unsigned)ev.event_number);
        exit(1);
    }
}

/* Spins on dat_evd_dequeue until a successful DTO completion arrives. */
static void reap(DAT_EVD_HANDLE e)
{
    DAT_EVENT ev;
    while (dat_evd_dequeue(e, &ev) != DAT_SUCCESS)
        ;
    check_completion(ev);
}

struct pair {
    DAT_EP_HANDLE client, server;
    DAT_EVD_HANDLE client_dto, server_dto;
    DAT_LMR_TRIPLET send, recv;
};

__attribute__((noinline)) static void empty_polls(DAT_EVD_HANDLE e, long n)
{
    DAT_EVENT ev;
    for (long i = 0; i < n; i++) {
        DAT_RETURN r = dat_evd_dequeue(e, &ev);
        if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY) {
            fprintf(stderr, "opcost: an idle EVD returned 0x%x\n", (unsigned)r);
            exit(1);
        }
    }
}

/* Takes a successful DTO completion with dat_evd_wait (threshold 1). */
static void reap_waiting(DAT_EVD_HANDLE e)
{
    DAT_EVENT ev;
    DAT_COUNT more;
    check(dat_evd_wait(e, 10 * 1000 * 1000, 1, &ev, &more), "dat_evd_wait");
    check_completion(ev);
}

/* One message: post a receive, post an 8-byte send, take both completions (with `take`). */
static inline void cycle_taking(struct pair *p, void (*take)(DAT_EVD_HANDLE))
{
    DAT_DTO_COOKIE cookie = {.as_64 = 0};
    check(dat_ep_post_recv(p->server, 1, &p->recv, cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
    check(dat_ep_post_send(p->client, 1, &p->send, cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_send");
    take(p->server_dto);
    take(p->client_dto);
}

/* One message, its completions dequeued. */
static inline void cycle(struct pair *p)
{
    cycle_taking(p, reap);
}

/* 1000 cycles, not counted: a function of its own (and not identical to message_cycles, so the
 * compiler cannot fold the two), so that only message_cycles' calls are collected. */
__attribute__((noinline)) static void warm_up(struct pair *p)
{
    for (int i = 0; i < 1000; i++)
        cycle(p);
}

__attribute__((noinline)) static void message_cycles(struct pair *p, long n)
{
    for (long i = 0; i < n; i++)
        cycle(p);
}

/* One message each, its completions taken with dat_evd_wait (each already there when waited for,
 * as the shm provider completes a send in the post). */
__attribute__((noinline)) static void waited_cycles(struct pair *p, long n)
{
    for (long i = 0; i < n; i++)
        cycle_taking(p, reap_waiting);
}

int main(int argc, char **argv)
{
    char *ia_name = "shm", *host = "127.0.0.1";
    DAT_CONN_QUAL qual = 18600 + (DAT_CONN_QUAL)(getpid() % 1000);
    long n = 10000;
    int opt;
    while ((opt = getopt(argc, argv, "P:h:q:n:")) != -1) {
        switch (opt) {
        case 'P': ia_name = optarg; break;
        case 'h': host = optarg; break;
        case 'q': qual = strtoull(optarg, NULL, 0); break;
        case 'n': n = strtol(optarg, NULL, 0); break;
        default: fprintf(stderr, "usage: opcost [-P ia] [-h address] [-q qual] [-n ops]\n"); return 2;
        }
    }
    if (n <= 0)
        n = 10000;

    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
    DAT_PZ_HANDLE pz;
    check(dat_ia_open(ia_name, 8, &async_evd, &ia), "dat_ia_open");
    check(dat_pz_create(ia, &pz), "dat_pz_create");
    struct pair p;
    DAT_EVD_HANDLE cr_evd = evd(ia, DAT_EVD_CR_FLAG);
    DAT_EVD_HANDLE client_conn = evd(ia, DAT_EVD_CONNECTION_FLAG), server_conn = evd(ia, DAT_EVD_CONNECTION_FLAG);
    p.client_dto = evd(ia, DAT_EVD_DTO_FLAG);
    p.server_dto = evd(ia, DAT_EVD_DTO_FLAG);
    check(dat_ep_create(ia, pz, p.client_dto, p.client_dto, client_conn, NULL, &p.client), "dat_ep_create");
    check(dat_ep_create(ia, pz, p.server_dto, p.server_dto, server_conn, NULL, &p.server), "dat_ep_create");

    static char buf[4096];
    DAT_REGION_DESCRIPTION region;
    region.for_va = buf;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lmr_ctx;
    DAT_RMR_CONTEXT rmr_ctx;
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    check(DP_LMR_CREATE(ia, DAT_MEM_TYPE_VIRTUAL, region, sizeof buf, pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lmr_ctx,
                        &rmr_ctx, &reg_len, &reg_addr),
          "dat_lmr_create");
    p.send = dp_lmr_triplet(lmr_ctx, buf, 8);
    p.recv = dp_lmr_triplet(lmr_ctx, buf + 2048, 8);

    DAT_PSP_HANDLE psp;
    check(dat_psp_create(ia, qual, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp), "dat_psp_create");
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
        fprintf(stderr, "opcost: -h %s is not an IPv4 address\n", host);
        return 2;
    }
    check(dat_ep_connect(p.client, (DAT_IA_ADDRESS_PTR)&sin, qual, 10 * 1000 * 1000, 0, NULL, DAT_QOS_BEST_EFFORT,
                         DAT_CONNECT_DEFAULT_FLAG),
          "dat_ep_connect");
    DAT_EVENT ev = wait_event(cr_evd, DAT_CONNECTION_REQUEST_EVENT, "waiting for the connection request");
    check(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, p.server, 0, NULL), "dat_cr_accept");
    wait_event(server_conn, DAT_CONNECTION_EVENT_ESTABLISHED, "server: waiting for ESTABLISHED");
    wait_event(client_conn, DAT_CONNECTION_EVENT_ESTABLISHED, "client: waiting for ESTABLISHED");

    warm_up(&p);
    empty_polls(p.client_dto, n);
    message_cycles(&p, n);
    waited_cycles(&p, n);
    printf("opcost ia=%s ops=%ld\n", ia_name, n);

    check(dat_ep_disconnect(p.client, DAT_CLOSE_ABRUPT_FLAG), "dat_ep_disconnect");
    check(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), "dat_ia_close");
    return 0;
}
