/* tests/vm/hostile/dat-victim.c -- a DAT 1.2 server that a hostile rdma_cm peer attacks.
 *
 *   dat-victim -P IA -q PORT [-t SECONDS]
 *
 * Listens on PORT (a PSP) and accepts every connection request (up to MAXC at once, the rest
 * rejected), each with its own endpoint and four 256-byte receives in one LMR registered for
 * local access only (no remote rights: every RDMA the peer tries must fail at its own end).
 * A receive that starts with "ping" is answered with "pong" on the same connection, "stop"
 * ends the run; any other completion, successful or not, is counted and the receive reposted
 * while the connection lasts. A disconnect or a broken connection frees that endpoint.
 *
 * Exit status 0 when every DAT call this program makes on its own objects succeeded, every
 * event was one it can expect, and the run ended by "stop" (not by the time limit); it then
 * prints its counts. The peer (cm-hostile.c) checks that pings kept being answered.
 * Build: cc -O2 -I<include> dat-victim.c -L<lib> -ldat */
#define _DEFAULT_SOURCE 1
#include <dat/udat.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXC 32
#define RECVS 4
#define RBUF 256
#define SLOT_BYTES (RECVS * RBUF + RBUF) /* receives, then the send buffer */

struct conn {
    DAT_EP_HANDLE ep; /* NULL: slot free */
    int established;
    int pong_due; /* a ping arrived before ESTABLISHED (the peer may send as soon as it is) */
};

static struct conn conns[MAXC];
static char *buf;
static DAT_LMR_CONTEXT lmr_ctx;
static unsigned long n_requests, n_rejected, n_established, n_closed, n_recv_ok, n_recv_err, n_send_err, n_pings,
    n_other, n_async, n_accept_failed;

static void die(DAT_RETURN r, const char *what)
{
    const char *maj = "?", *min = "";
    dat_strerror(r, &maj, &min);
    fprintf(stderr, "dat-victim: %s failed: 0x%08x %s %s\n", what, (unsigned)r, maj, min ? min : "");
    exit(1);
}
#define CHECK(call, what)                                                                                  \
    do {                                                                                                   \
        DAT_RETURN r_ = (call);                                                                            \
        if (r_ != DAT_SUCCESS)                                                                             \
            die(r_, what);                                                                                 \
    } while (0)

static DAT_LMR_TRIPLET seg(int slot, int off, DAT_VLEN len)
{
    DAT_LMR_TRIPLET t;
    memset(&t, 0, sizeof t);
    t.lmr_context = lmr_ctx;
    t.virtual_address = (DAT_VADDR)(uintptr_t)(buf + slot * SLOT_BYTES + off);
    t.segment_length = len;
    return t;
}

static DAT_DTO_COOKIE cookie(int slot, int k)
{
    DAT_DTO_COOKIE c;
    c.as_64 = (uint64_t)slot << 8 | (uint64_t)k;
    return c;
}

static int slot_of(DAT_EP_HANDLE ep)
{
    for (int i = 0; i < MAXC; i++)
        if (conns[i].ep == ep)
            return i;
    return -1;
}

/* A receive of a live connection goes back; failure means the connection is going down. */
static void repost(int slot, int k)
{
    DAT_LMR_TRIPLET t = seg(slot, k * RBUF, RBUF);
    (void)dat_ep_post_recv(conns[slot].ep, 1, &t, cookie(slot, k), DAT_COMPLETION_DEFAULT_FLAG);
}

/* Answers the ping in the slot's send buffer (the send may fail if the connection is going). */
static void send_pong(int slot)
{
    DAT_LMR_TRIPLET t = seg(slot, RECVS * RBUF, 8);
    if (dat_ep_post_send(conns[slot].ep, 1, &t, cookie(slot, RECVS), DAT_COMPLETION_DEFAULT_FLAG) == DAT_SUCCESS)
        n_pings++;
}

static void close_slot(int slot)
{
    CHECK(dat_ep_free(conns[slot].ep), "dat_ep_free");
    conns[slot].ep = NULL;
    conns[slot].established = 0;
    conns[slot].pong_due = 0;
    n_closed++;
}

int main(int argc, char **argv)
{
    char *ia_name = NULL;
    DAT_CONN_QUAL port = 0;
    int seconds = 300, opt;
    while ((opt = getopt(argc, argv, "P:q:t:")) != -1) {
        switch (opt) {
        case 'P': ia_name = optarg; break;
        case 'q': port = strtoull(optarg, NULL, 0); break;
        case 't': seconds = atoi(optarg); break;
        default: fprintf(stderr, "usage: dat-victim -P IA -q PORT [-t SECONDS]\n"); return 2;
        }
    }
    if (!ia_name || !port) {
        fprintf(stderr, "usage: dat-victim -P IA -q PORT [-t SECONDS]\n");
        return 2;
    }
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL, cr_evd, conn_evd, dto_evd;
    DAT_PZ_HANDLE pz;
    DAT_PSP_HANDLE psp;
    DAT_LMR_HANDLE lmr;
    DAT_RMR_CONTEXT rmr_ctx;
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    CHECK(dat_ia_open(ia_name, 8, &async_evd, &ia), "dat_ia_open");
    CHECK(dat_pz_create(ia, &pz), "dat_pz_create");
    CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd), "dat_evd_create cr");
    CHECK(dat_evd_create(ia, 4 * MAXC, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn_evd), "dat_evd_create conn");
    CHECK(dat_evd_create(ia, 2 * MAXC * (RECVS + 2), DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto_evd),
          "dat_evd_create dto");
    buf = calloc(MAXC, SLOT_BYTES);
    if (!buf)
        return 1;
    DAT_REGION_DESCRIPTION region;
    region.for_va = buf;
    CHECK(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, (DAT_VLEN)MAXC * SLOT_BYTES, pz,
                         DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG, &lmr, &lmr_ctx, &rmr_ctx,
                         &reg_len, &reg_addr),
          "dat_lmr_create");
    CHECK(dat_psp_create(ia, port, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp), "dat_psp_create");
    printf("dat-victim: listening on %s port %llu\n", ia_name, (unsigned long long)port);
    fflush(stdout);

    time_t deadline = time(NULL) + seconds;
    int stop = 0;
    while (!stop && time(NULL) < deadline) {
        DAT_EVENT ev;
        int idle = 1;
        if (dat_evd_dequeue(async_evd, &ev) == DAT_SUCCESS) {
            idle = 0;
            n_async++;
        }
        if (dat_evd_dequeue(cr_evd, &ev) == DAT_SUCCESS) {
            idle = 0;
            if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT) {
                n_other++;
                continue;
            }
            DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
            n_requests++;
            int slot = slot_of(NULL);
            if (slot < 0) {
                CHECK(dat_cr_reject(cr), "dat_cr_reject");
                n_rejected++;
                continue;
            }
            CHECK(dat_ep_create(ia, pz, dto_evd, dto_evd, conn_evd, NULL, &conns[slot].ep), "dat_ep_create");
            for (int k = 0; k < RECVS; k++) {
                DAT_LMR_TRIPLET t = seg(slot, k * RBUF, RBUF);
                CHECK(dat_ep_post_recv(conns[slot].ep, 1, &t, cookie(slot, k), DAT_COMPLETION_DEFAULT_FLAG),
                      "dat_ep_post_recv");
            }
            /* The peer may have gone already: the connection then breaks (BROKEN). Should the
             * accept fail instead, the request is still ours to refuse. */
            if (dat_cr_accept(cr, conns[slot].ep, 0, NULL) != DAT_SUCCESS) {
                n_accept_failed++;
                (void)dat_cr_reject(cr);
                close_slot(slot);
            }
        }
        if (dat_evd_dequeue(conn_evd, &ev) == DAT_SUCCESS) {
            idle = 0;
            DAT_EP_HANDLE ep = ev.event_data.connect_event_data.ep_handle;
            int slot = slot_of(ep);
            if (slot < 0 || ep == NULL) {
                n_other++;
                continue;
            }
            switch (ev.event_number) {
            case DAT_CONNECTION_EVENT_ESTABLISHED:
                conns[slot].established = 1;
                n_established++;
                if (conns[slot].pong_due) {
                    conns[slot].pong_due = 0;
                    send_pong(slot);
                }
                break;
            case DAT_CONNECTION_EVENT_DISCONNECTED:
            case DAT_CONNECTION_EVENT_BROKEN:
            case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR:
            case DAT_CONNECTION_EVENT_TIMED_OUT:
            case DAT_CONNECTION_EVENT_PEER_REJECTED:
            case DAT_CONNECTION_EVENT_UNREACHABLE:
            case DAT_CONNECTION_EVENT_NON_PEER_REJECTED:
                close_slot(slot);
                break;
            default:
                fprintf(stderr, "dat-victim: unexpected connection event 0x%x\n", (unsigned)ev.event_number);
                return 1;
            }
        }
        if (dat_evd_dequeue(dto_evd, &ev) == DAT_SUCCESS) {
            idle = 0;
            if (ev.event_number != DAT_DTO_COMPLETION_EVENT) {
                fprintf(stderr, "dat-victim: unexpected DTO event 0x%x\n", (unsigned)ev.event_number);
                return 1;
            }
            DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
            int slot = (int)(d->user_cookie.as_64 >> 8), k = (int)(d->user_cookie.as_64 & 0xff);
            if (slot < 0 || slot >= MAXC || conns[slot].ep != d->ep_handle)
                continue; /* a completion of an endpoint freed meanwhile */
            if (k == RECVS) { /* our pong */
                if (d->status != DAT_DTO_SUCCESS)
                    n_send_err++;
                continue;
            }
            if (d->status != DAT_DTO_SUCCESS) {
                n_recv_err++;
                continue;
            }
            n_recv_ok++;
            const char *m = buf + slot * SLOT_BYTES + k * RBUF;
            if (d->transfered_length >= 4 && !memcmp(m, "stop", 4)) {
                stop = 1;
            } else if (d->transfered_length >= 4 && !memcmp(m, "ping", 4)) {
                char *out = buf + slot * SLOT_BYTES + RECVS * RBUF;
                memcpy(out, "pong", 4);
                memcpy(out + 4, m + 4, d->transfered_length >= 8 ? 4 : 0);
                /* a receive can complete before this side's ESTABLISHED event; sends wait for it */
                if (conns[slot].established)
                    send_pong(slot);
                else
                    conns[slot].pong_due = 1;
            }
            repost(slot, k);
        }
        if (idle)
            usleep(200);
    }
    printf("dat-victim: %lu requests (%lu rejected, %lu accepts failed), %lu established, %lu closed, receives %lu ok %lu failed, "
           "%lu pongs sent (%lu failed), %lu asynchronous errors, %lu other events; %s\n",
           n_requests, n_rejected, n_accept_failed, n_established, n_closed, n_recv_ok, n_recv_err, n_pings, n_send_err, n_async, n_other,
           stop ? "stopped by the peer" : "time limit reached");
    for (int i = 0; i < MAXC; i++) {
        if (conns[i].ep) {
            DAT_EVENT ev;
            DAT_COUNT nmore;
            if (dat_ep_disconnect(conns[i].ep, DAT_CLOSE_ABRUPT_FLAG) == DAT_SUCCESS)
                while (dat_evd_wait(conn_evd, 2000000, 1, &ev, &nmore) == DAT_SUCCESS &&
                       ev.event_data.connect_event_data.ep_handle != conns[i].ep)
                    ;
            close_slot(i);
        }
    }
    CHECK(dat_psp_free(psp), "dat_psp_free");
    CHECK(dat_lmr_free(lmr), "dat_lmr_free");
    CHECK(dat_evd_free(dto_evd), "dat_evd_free dto");
    CHECK(dat_evd_free(conn_evd), "dat_evd_free conn");
    CHECK(dat_evd_free(cr_evd), "dat_evd_free cr");
    CHECK(dat_pz_free(pz), "dat_pz_free");
    CHECK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), "dat_ia_close");
    free(buf);
    return stop ? 0 : 1;
}
