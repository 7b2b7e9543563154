/* tools/baselines/fi_rma_bw.c -- RDMA write bandwidth straight on libfabric, the baseline of
 * `make bench`'s ofi rows (libfabric-bin ships fi_pingpong but no RMA bandwidth test).
 *
 *   fi_rma_bw [-P provider] [-p port] [-s bytes] [-n writes] [-w window]          (server)
 *   fi_rma_bw [-P provider] [-p port] [-s bytes] [-n writes] [-w window] HOST     (client)
 *
 * One FI_EP_MSG connection (as the ofi provider drives tcp): the server registers a buffer for
 * remote writes and hands its address and key over in fi_accept's private data; the client
 * keeps `window` fi_write calls of `bytes` outstanding until `writes` have completed, polling
 * its CQ in one thread (as `datperf -t write_bw -p` does on DAT), then sends one message; the
 * server waits in fi_cq_sread (which drives the provider's progress) until that message arrives. The client
 * prints "fi_rma_bw size=S iters=N bw_MBps=B" (10^6 bytes per second).
 */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (int)(call);                                                                     \
        if (rc_ < 0) {                                                                             \
            fprintf(stderr, "fi_rma_bw: %s: %s\n", #call, fi_strerror(-rc_));                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* What the server's fi_accept carries to the client. */
struct target {
    uint64_t addr;
    uint64_t key;
};

static struct fi_info *hints_for(const char *provider)
{
    struct fi_info *hints = fi_allocinfo();
    if (!hints)
        exit(1);
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_RMA;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->fabric_attr->prov_name = strdup(provider);
    return hints;
}

/* The next CM event of `eq`, which must be `want`; its private data (if any) into `data`. */
static void expect_event(struct fid_eq *eq, uint32_t want, struct fi_info **info, void *data, size_t len)
{
    struct {
        struct fi_eq_cm_entry entry;
        uint8_t data[256];
    } ev;
    uint32_t event;
    ssize_t n = fi_eq_sread(eq, &event, &ev, sizeof ev, -1, 0);
    if (n < 0) {
        struct fi_eq_err_entry err = {0};
        fi_eq_readerr(eq, &err, 0);
        fprintf(stderr, "fi_rma_bw: CM event: %s\n", fi_strerror(err.err ? err.err : (int)-n));
        exit(1);
    }
    if (event != want) {
        fprintf(stderr, "fi_rma_bw: CM event %u, expected %u\n", event, want);
        exit(1);
    }
    if (info)
        *info = ev.entry.info;
    if (data) {
        if ((size_t)n < sizeof ev.entry + len) {
            fprintf(stderr, "fi_rma_bw: CM event without the expected %zu bytes of private data (%zd)\n", len, n);
            exit(1);
        }
        memcpy(data, ev.data, len);
    }
}

/* Up to `max` completions of `cq` (0 if none yet); exits on a completion error. */
static long reap(struct fid_cq *cq, long max)
{
    struct fi_cq_entry done[16];
    ssize_t n = fi_cq_read(cq, done, max < 16 ? max : 16);
    if (n == -FI_EAGAIN)
        return 0;
    if (n < 0) {
        struct fi_cq_err_entry err = {0};
        fi_cq_readerr(cq, &err, 0);
        fprintf(stderr, "fi_rma_bw: completion error: %s (%s)\n", fi_strerror(err.err),
                fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
        exit(1);
    }
    return n;
}

/* Polls `cq` until `count` completions have been read. */
static void take(struct fid_cq *cq, long count)
{
    while (count > 0)
        count -= reap(cq, count);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    const char *provider = "tcp", *port = "47593";
    size_t size = 1 << 20;
    long iters = 1000, window = 16;
    int opt;
    while ((opt = getopt(argc, argv, "P:p:s:n:w:")) != -1) {
        switch (opt) {
        case 'P': provider = optarg; break;
        case 'p': port = optarg; break;
        case 's': size = strtoul(optarg, NULL, 0); break;
        case 'n': iters = strtol(optarg, NULL, 0); break;
        case 'w': window = strtol(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: fi_rma_bw [-P provider] [-p port] [-s bytes] [-n writes] [-w window] [host]\n");
            return 2;
        }
    }
    const char *host = optind < argc ? argv[optind] : NULL;
    if (size == 0 || iters <= 0 || window <= 0)
        return 2;

    struct fi_info *hints = hints_for(provider), *info;
    CHECK(fi_getinfo(FI_VERSION(1, 17), host, port, host ? 0 : FI_SOURCE, hints, &info));
    struct fid_fabric *fabric;
    struct fid_eq *eq;
    struct fi_eq_attr eq_attr = {.wait_obj = FI_WAIT_UNSPEC};
    CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK(fi_eq_open(fabric, &eq_attr, &eq, NULL));

    struct fi_info *conn_info = info;
    if (!host) { /* server: listen, take one request */
        struct fid_pep *pep;
        CHECK(fi_passive_ep(fabric, info, &pep, NULL));
        CHECK(fi_pep_bind(pep, &eq->fid, 0));
        CHECK(fi_listen(pep));
        expect_event(eq, FI_CONNREQ, &conn_info, NULL, 0);
    }
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_cq *cq;
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_CONTEXT, .size = (size_t)window * 2 + 16};
    if (!host) /* the server sleeps in fi_cq_sread (which drives the provider's progress) */
        cq_attr.wait_obj = FI_WAIT_UNSPEC;
    CHECK(fi_domain(fabric, conn_info, &domain, NULL));
    CHECK(fi_endpoint(domain, conn_info, &ep, NULL));
    CHECK(fi_cq_open(domain, &cq_attr, &cq, NULL));
    CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_ep_bind(ep, &eq->fid, 0));
    CHECK(fi_enable(ep));

    char *buf = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    char note[8];
    struct fid_mr *mr, *note_mr;
    if (!buf)
        return 1;
    memset(buf, host ? 'c' : 's', size);
    uint64_t access = host ? FI_WRITE | FI_SEND : FI_REMOTE_WRITE | FI_RECV;
    CHECK(fi_mr_reg(domain, buf, size, access, 0, 1, 0, &mr, NULL));
    CHECK(fi_mr_reg(domain, note, sizeof note, FI_SEND | FI_RECV, 0, 2, 0, &note_mr, NULL));

    if (!host) { /* server: accept with the target, then poll until the client's note */
        /* without FI_MR_VIRT_ADDR a target address is an offset into the region */
        uint64_t base = conn_info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uintptr_t)buf : 0;
        struct target t = {.addr = base, .key = fi_mr_key(mr)};
        CHECK(fi_recv(ep, note, sizeof note, fi_mr_desc(note_mr), 0, NULL));
        CHECK(fi_accept(ep, &t, sizeof t));
        expect_event(eq, FI_CONNECTED, NULL, NULL, 0);
        struct fi_cq_entry c;
        ssize_t n;
        while ((n = fi_cq_sread(cq, &c, 1, NULL, -1)) == -FI_EAGAIN)
            ;
        CHECK(n);
        return 0;
    }
    struct target t;
    CHECK(fi_connect(ep, info->dest_addr, NULL, 0));
    expect_event(eq, FI_CONNECTED, NULL, &t, sizeof t);

    long warm = iters / 10 < 100 ? iters / 10 : 100;
    double start = 0;
    for (int pass = 0; pass < 2; pass++) {
        long total = pass ? iters : warm, posted = 0, done = 0;
        if (pass)
            start = now();
        while (done < total) {
            while (posted < total && posted - done < window) {
                ssize_t rc = fi_write(ep, buf, size, fi_mr_desc(mr), 0, t.addr, t.key, NULL);
                if (rc == -FI_EAGAIN)
                    break;
                CHECK(rc);
                posted++;
            }
            done += reap(cq, 16);
        }
    }
    double secs = now() - start;
    CHECK(fi_send(ep, note, sizeof note, fi_mr_desc(note_mr), 0, NULL));
    take(cq, 1);
    printf("fi_rma_bw size=%zu iters=%ld window=%ld bw_MBps=%.1f\n", size, iters, window, size * (double)iters / secs / 1e6);
    return 0;
}
