/* tools/bench/qp-trace.c -- what a verbs consumer asks of the device, seen from the device's side:
 * an LD_PRELOAD library for comparing two uDAPL libraries (ours and OFED's) running one program.
 *
 *   cc -shared -fPIC -O2 -o qp-trace.so tools/bench/qp-trace.c -libverbs -ldl
 *   LD_PRELOAD=./qp-trace.so datperf2 ...      (lines "qp-trace: ..." on stderr)
 *
 * It wraps ibv_open_device (librdmacm opens its devices with it, whichever library drives
 * librdmacm) and puts itself in front of the context's post_send, the function every
 * ibv_post_send reaches. For each QP's first posted request it prints the QP's attributes as
 * the device reports them (ibv_query_qp: queue sizes, inline size, reads in flight both ways,
 * retry counts, CQ sizes); at exit a table of the requests posted, by opcode, flags and length.
 * One device per process (the guest has one): a second context's post_send must be the same
 * function. Measurement tool only: the wrapper takes a lock per post. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

typedef int (*post_send_fn)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);

static post_send_fn device_post_send;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

enum { MAX_QPS = 64, MAX_KINDS = 64 };
static uint32_t seen_qps[MAX_QPS];
static int n_seen;

/* one row of the exit table: requests of one opcode, flags and total length */
struct kind {
    int opcode;
    unsigned flags;
    uint64_t length;
    int num_sge;
    uint64_t count;
};
static struct kind kinds[MAX_KINDS];
static int n_kinds;

static void print_qp(struct ibv_qp *qp)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr init;
    int mask = IBV_QP_STATE | IBV_QP_CAP | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_TIMEOUT |
               IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MTU;
    if (ibv_query_qp(qp, &a, mask, &init) != 0) {
        fprintf(stderr, "qp-trace: qp %u: ibv_query_qp failed\n", qp->qp_num);
        return;
    }
    fprintf(stderr,
            "qp-trace: qp %u type %d: max_send_wr %u max_recv_wr %u max_send_sge %u max_recv_sge %u "
            "max_inline_data %u sq_sig_all %d srq %s send_cq.cqe %d recv_cq.cqe %d "
            "max_rd_atomic %u max_dest_rd_atomic %u timeout %u retry_cnt %u rnr_retry %u min_rnr_timer %u "
            "path_mtu %d\n",
            qp->qp_num, qp->qp_type, init.cap.max_send_wr, init.cap.max_recv_wr, init.cap.max_send_sge,
            init.cap.max_recv_sge, init.cap.max_inline_data, init.sq_sig_all, qp->srq ? "yes" : "no",
            qp->send_cq ? qp->send_cq->cqe : -1, qp->recv_cq ? qp->recv_cq->cqe : -1, a.max_rd_atomic,
            a.max_dest_rd_atomic, a.timeout, a.retry_cnt, a.rnr_retry, a.min_rnr_timer, a.path_mtu);
}

static void count(const struct ibv_send_wr *w)
{
    uint64_t length = 0;
    for (int i = 0; i < w->num_sge; i++)
        length += w->sg_list[i].length;
    for (int i = 0; i < n_kinds; i++) {
        struct kind *k = &kinds[i];
        if (k->opcode == (int)w->opcode && k->flags == w->send_flags && k->length == length &&
            k->num_sge == w->num_sge) {
            k->count++;
            return;
        }
    }
    if (n_kinds < MAX_KINDS)
        kinds[n_kinds++] = (struct kind){ (int)w->opcode, w->send_flags, length, w->num_sge, 1 };
}

static int traced_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    pthread_mutex_lock(&lock);
    int seen = 0;
    for (int i = 0; i < n_seen; i++)
        seen |= seen_qps[i] == qp->qp_num;
    if (!seen && n_seen < MAX_QPS) {
        seen_qps[n_seen++] = qp->qp_num;
        print_qp(qp);
    }
    for (const struct ibv_send_wr *w = wr; w; w = w->next)
        count(w);
    pthread_mutex_unlock(&lock);
    return device_post_send(qp, wr, bad);
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    struct ibv_context *(*open)(struct ibv_device *) =
        (struct ibv_context * (*)(struct ibv_device *)) dlsym(RTLD_NEXT, "ibv_open_device");
    struct ibv_context *ctx = open ? open(device) : NULL;
    if (ctx && ctx->ops.post_send && ctx->ops.post_send != traced_post_send) {
        device_post_send = ctx->ops.post_send;
        ctx->ops.post_send = traced_post_send;
    }
    return ctx;
}

__attribute__((destructor)) static void print_requests(void)
{
    for (int i = 0; i < n_kinds; i++)
        fprintf(stderr, "qp-trace: posted opcode %d flags 0x%x num_sge %d length %llu: %llu\n", kinds[i].opcode,
                kinds[i].flags, kinds[i].num_sge, (unsigned long long)kinds[i].length,
                (unsigned long long)kinds[i].count);
}
