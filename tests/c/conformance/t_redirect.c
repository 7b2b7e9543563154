/*
 * t_redirect.c - the provider table behind every handle (dat_redirection.h).
 *
 * A handle is a pointer whose first word is the provider's DAT_PROVIDER table, and the
 * DAT_<CALL> macros call through it: (*(DAT_PROVIDER **)h)-><call>_func(h, ...).  Binaries
 * compiled that way (Intel MPI 2018 after dats_get_ia_handle) must get from each slot what the
 * dat_* function gives.  These cases check the table (every handle type points at the same one,
 * every slot filled) and run a connection, data transfer in both directions, memory windows, a
 * CNO, an SRQ and the teardown with every call made through the macros; freed handles still
 * reach the table and get DAT_INVALID_HANDLE.
 */
#include "dct.h"
#include <unistd.h>
#if DAT_VERSION_MAJOR >= 2
#include <dat2/dat_registry.h>
#include <dat2/dat_ib_extensions.h>
#else
#include <dat/dat_registry.h>
#endif

#if DAT_VERSION_MAJOR >= 2
#define R_LMR_CREATE(ia, rd, len, pz, priv, lmr, lc, rc, rl, ra) \
    DAT_LMR_CREATE(ia, DAT_MEM_TYPE_VIRTUAL, rd, len, pz, priv, DAT_VA_TYPE_VA, lmr, lc, rc, rl, ra)
#define R_RMR_BIND(rmr, lmr, t, priv, ep, ck, fl, ctx) DAT_RMR_BIND(rmr, lmr, t, priv, DAT_VA_TYPE_VA, ep, ck, fl, ctx)
#define R_CR_REJECT(cr) DAT_CR_REJECT(cr, 0, NULL)
#else
#define R_LMR_CREATE(ia, rd, len, pz, priv, lmr, lc, rc, rl, ra) \
    DAT_LMR_CREATE(ia, DAT_MEM_TYPE_VIRTUAL, rd, len, pz, priv, lmr, lc, rc, rl, ra)
#define R_RMR_BIND(rmr, lmr, t, priv, ep, ck, fl, ctx) DAT_RMR_BIND(rmr, t, priv, ep, ck, fl, ctx)
#define R_CR_REJECT(cr) DAT_CR_REJECT(cr)
#endif

#define PROVIDER_OF(h) (*(DAT_PROVIDER **)(h))
#define IA_CLOSE(ia, flags) (PROVIDER_OF(ia)->ia_close_func((ia), (flags)))

/* The IA handle the macros start from: dats_get_ia_handle's in DAT 2.0 (as Intel MPI does). */
static DAT_RETURN provider_ia(DAT_IA_HANDLE ia, DAT_IA_HANDLE *out)
{
#if DAT_VERSION_MAJOR >= 2
    return dats_get_ia_handle(ia, out);
#else
    *out = ia;
    return DAT_SUCCESS;
#endif
}

#if DAT_VERSION_MAJOR >= 2
/* DAT_HANDLE_EXTENDEDOP takes the va_list of a variadic caller, as dat_extension_op builds it. */
static DAT_RETURN extended_op(DAT_HANDLE h, DAT_EXTENDED_OP op, ...)
{
    va_list ap;
    va_start(ap, op);
    DAT_RETURN r = DAT_HANDLE_EXTENDEDOP(h, op, ap);
    va_end(ap);
    return r;
}

/* All IA counters through the table's extended operation (dat_ib_query_counters' arguments):
 * every entry of `out` is written. */
static tres query_counters_va(DAT_IA_HANDLE ia, DAT_UINT64 *out)
{
    memset(out, 0xab, DCNT_IA_ALL_COUNTERS * sizeof *out);
    OK(extended_op(ia, DAT_IB_QUERY_COUNTERS_OP, (int)DCNT_IA_ALL_COUNTERS, out, 0));
    for (int i = 0; i < DCNT_IA_ALL_COUNTERS; i++)
        CHECK(out[i] != 0xababababababababull, "DAT_HANDLE_EXTENDEDOP: counter %d not written", i);
    return T_PASS;
}
#endif

/* Waits up to 5 s for one event through DAT_EVD_WAIT. */
static tres r_wait(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, DAT_EVENT *ev)
{
    DAT_COUNT more = 0;
    DAT_RETURN r = DAT_EVD_WAIT(evd, 5000000, 1, ev, &more);
    CHECK(r == DAT_SUCCESS, "DAT_EVD_WAIT for %s: %s", evname(want), rs(r));
    CHECK(ev->event_number == want, "DAT_EVD_WAIT: %s, expected %s", evname(ev->event_number), evname(want));
    return T_PASS;
}

/* Polls through DAT_EVD_DEQUEUE (up to 5 s) for a successful DTO completion with `cookie`. */
static tres r_dequeue_dto(DAT_EVD_HANDLE evd, DAT_UINT64 cookie, DAT_VLEN len)
{
    DAT_EVENT ev;
    DAT_RETURN r;
    for (long i = 0; i < 5000000; i++) {
        r = DAT_EVD_DEQUEUE(evd, &ev);
        if (r == DAT_SUCCESS)
            break;
        CHECK(DAT_GET_TYPE(r) == DAT_QUEUE_EMPTY, "DAT_EVD_DEQUEUE: %s", rs(r));
        if (i % 64 == 63)
            usleep(1);
    }
    CHECK(r == DAT_SUCCESS, "DAT_EVD_DEQUEUE: no completion for cookie %llu", (unsigned long long)cookie);
    CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT, "DAT_EVD_DEQUEUE: %s", evname(ev.event_number));
    const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
    CHECK(d->user_cookie.as_64 == cookie && d->status == DAT_DTO_SUCCESS && d->transfered_length == len,
          "DTO cookie %llu status %s length %llu, expected %llu, success, %llu",
          (unsigned long long)d->user_cookie.as_64, dtostat(d->status), (unsigned long long)d->transfered_length,
          (unsigned long long)cookie, (unsigned long long)len);
    return T_PASS;
}

/* Every handle of every type points at the IA's table; the table names its device and fills
 * every slot. */
static tres table_behind_every_handle(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_IA_HANDLE pia;
    OK(provider_ia(f.ia, &pia));
    DAT_PROVIDER *table = PROVIDER_OF(pia);
    CHECK(table != NULL, "the IA handle's first word is NULL");
    CHECK(table->device_name != NULL && table->device_name[0] != '\0', "the table has no device_name");
    /* every slot after device_name and extension is a function */
    void (**slot)(void) = (void (**)(void))((char *)table + offsetof(DAT_PROVIDER, ia_open_func));
    size_t nslots = (sizeof(DAT_PROVIDER) - offsetof(DAT_PROVIDER, ia_open_func)) / sizeof(void (*)(void));
    for (size_t i = 0; i < nslots; i++)
        CHECK(slot[i] != NULL, "provider table slot %zu (of %zu) is NULL", i + 2, nslots + 2);

    DAT_CNO_HANDLE cno;
    DAT_RMR_HANDLE rmr;
    DAT_PSP_HANDLE psp;
    DAT_RSP_HANDLE rsp;
    DAT_EP_HANDLE rsp_ep;
    OK(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
    OK(dat_rmr_create(f.pz, &rmr));
    OK(dat_psp_create(f.ia, fresh_qual(40), f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    OK(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, NULL, &rsp_ep));
    OK(dat_rsp_create(f.ia, fresh_qual(41), rsp_ep, f.cr_evd, &rsp));
    DAT_HANDLE hs[] = {f.ia, f.async_evd, f.pz, f.dto_evd, f.ep, f.lmr, cno, rmr, psp, rsp};
    const char *ns[] = {"IA", "async EVD", "PZ", "EVD", "EP", "LMR", "CNO", "RMR", "PSP", "RSP"};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
        CHECK(PROVIDER_OF(hs[i]) == table, "the %s handle's first word %p is not the IA's table %p", ns[i],
              (void *)PROVIDER_OF(hs[i]), (void *)table);
    /* and a CR's, from a loopback connection request */
    struct conn c;
    DAT_CR_HANDLE cr;
    TRY(conn_request(&c, 42, &cr));
    CHECK(PROVIDER_OF(cr) == PROVIDER_OF(c.ia), "the CR handle's first word is not the IA's table");
    OK(R_CR_REJECT(cr));
    OK(IA_CLOSE(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return fx_close(&f);
}

/* A loopback connection, sends both ways, RDMA write and read, an RMR bind, a CNO, an SRQ,
 * contexts, queries and the teardown: every call through the macros. */
static tres calls_through_the_table(void)
{
    DAT_IA_HANDLE ia0, ia;
    DAT_EVD_HANDLE aevd = DAT_HANDLE_NULL;
    OK(open_ia(&ia0, &aevd));
    OK(provider_ia(ia0, &ia));

    DAT_IA_ATTR ia_attr;
    DAT_PROVIDER_ATTR pr_attr;
    DAT_EVD_HANDLE qevd;
    OK(DAT_IA_QUERY(ia, &qevd, DAT_IA_ALL, &ia_attr, DAT_PROVIDER_FIELD_ALL, &pr_attr));
    DAT_PZ_HANDLE pz;
    OK(DAT_PZ_CREATE(ia, &pz));
    DAT_PZ_PARAM pz_param;
    OK(DAT_PZ_QUERY(pz, DAT_PZ_FIELD_ALL, &pz_param));
    CHECK(pz_param.ia_handle == ia0, "DAT_PZ_QUERY: ia_handle %p, expected %p", (void *)pz_param.ia_handle, (void *)ia0);

    DAT_CNO_HANDLE cno;
    OK(DAT_CNO_CREATE(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
    DAT_CNO_PARAM cno_param;
    OK(DAT_CNO_QUERY(cno, DAT_CNO_FIELD_ALL, &cno_param));
    OK(DAT_CNO_MODIFY_AGENT(cno, DAT_OS_WAIT_PROXY_AGENT_NULL));

    DAT_EVD_HANDLE cr_evd, c_dto, c_conn, s_dto, s_conn;
    OK(DAT_EVD_CREATE(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd));
    OK(DAT_EVD_CREATE(ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &c_dto));
    OK(DAT_EVD_CREATE(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &c_conn));
    OK(DAT_EVD_CREATE(ia, 64, cno, DAT_EVD_DTO_FLAG, &s_dto));
    OK(DAT_EVD_CREATE(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s_conn));
    DAT_EVD_PARAM evd_param;
    OK(DAT_EVD_QUERY(s_dto, DAT_EVD_FIELD_ALL, &evd_param));
    CHECK(evd_param.cno_handle == cno, "DAT_EVD_QUERY: the CNO is %p, expected %p", (void *)evd_param.cno_handle,
          (void *)cno);
    /* shrinking: siw cannot resize a CQ, and a smaller size fits the one it has */
    OK(DAT_EVD_RESIZE(c_dto, 32));
    OK(DAT_EVD_DISABLE(c_conn));
    OK(DAT_EVD_ENABLE(c_conn));
    OK(DAT_EVD_SET_UNWAITABLE(c_dto));
    OK(DAT_EVD_CLEAR_UNWAITABLE(c_dto));

    DAT_EP_HANDLE cep, sep;
    OK(DAT_EP_CREATE(ia, pz, c_dto, c_dto, c_conn, NULL, &cep));
    OK(DAT_EP_CREATE(ia, pz, s_dto, s_dto, s_conn, NULL, &sep));
    OK(DAT_SET_CONSUMER_CONTEXT(cep, (DAT_CONTEXT)(DAT_UINT64)0x1234));
    DAT_CONTEXT ctx;
    OK(DAT_GET_CONSUMER_CONTEXT(cep, &ctx));
    CHECK(ctx.as_64 == 0x1234, "DAT_GET_CONSUMER_CONTEXT: %#llx", (unsigned long long)ctx.as_64);
    DAT_HANDLE_TYPE ht;
    OK(DAT_GET_HANDLE_TYPE(cep, &ht));
    CHECK(ht == DAT_HANDLE_TYPE_EP, "DAT_GET_HANDLE_TYPE(EP) = %d", (int)ht);
    DAT_EP_PARAM ep_param;
    OK(DAT_EP_QUERY(cep, DAT_EP_FIELD_ALL, &ep_param));
    OK(DAT_EP_MODIFY(sep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &ep_param));

    enum { LEN = 8192 };
    char *buf = aligned_alloc(4096, LEN);
    CHECK(buf != NULL, "out of memory");
    memset(buf, 0, LEN);
    DAT_REGION_DESCRIPTION rd;
    rd.for_va = buf;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lctx;
    DAT_RMR_CONTEXT rctx;
    DAT_VLEN reg_len;
    DAT_VADDR reg_addr;
    OK(R_LMR_CREATE(ia, rd, LEN, pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lctx, &rctx, &reg_len, &reg_addr));
    DAT_LMR_PARAM lmr_param;
    OK(DAT_LMR_QUERY(lmr, DAT_LMR_FIELD_ALL, &lmr_param));

    DAT_PSP_HANDLE psp;
    DAT_CONN_QUAL qual = fresh_qual(43);
    OK(DAT_PSP_CREATE(ia, qual, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    DAT_PSP_PARAM psp_param;
    OK(DAT_PSP_QUERY(psp, DAT_PSP_FIELD_ALL, &psp_param));
    struct sockaddr_in sin;
    set_loopback_addr(&sin);
    OK(DAT_EP_CONNECT(cep, (DAT_IA_ADDRESS_PTR)&sin, qual, 5000000, 0, NULL, DAT_QOS_BEST_EFFORT,
                      DAT_CONNECT_DEFAULT_FLAG));
    DAT_EVENT ev;
    TRY(r_wait(cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev));
    DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
    DAT_CR_PARAM cr_param;
    OK(DAT_CR_QUERY(cr, DAT_CR_FIELD_ALL, &cr_param));
    OK(DAT_CR_ACCEPT(cr, sep, 0, NULL));
    TRY(r_wait(s_conn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev));
    TRY(r_wait(c_conn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev));
    DAT_EP_STATE st;
    DAT_BOOLEAN ri, qi;
    OK(DAT_EP_GET_STATUS(cep, &st, &ri, &qi));
    CHECK(st == DAT_EP_STATE_CONNECTED, "DAT_EP_GET_STATUS: state %d", (int)st);

    /* a send each way: the server's receive completes on the CNO's EVD, found by DAT_CNO_WAIT */
    DAT_LMR_TRIPLET t = {0};
    t.lmr_context = lctx;
    t.segment_length = 64;
    t.virtual_address = (DAT_VADDR)(uintptr_t)(buf + 1024);
    OK(DAT_EP_POST_RECV(sep, 1, &t, (DAT_DTO_COOKIE)(DAT_UINT64)1, DAT_COMPLETION_DEFAULT_FLAG));
    t.virtual_address = (DAT_VADDR)(uintptr_t)buf;
    memcpy(buf, "through the table", 18);
    t.segment_length = 18;
    OK(DAT_EP_POST_SEND(cep, 1, &t, (DAT_DTO_COOKIE)(DAT_UINT64)2, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(r_dequeue_dto(c_dto, 2, 18));
    DAT_EVD_HANDLE woke = DAT_HANDLE_NULL;
    DAT_RETURN r = DAT_CNO_WAIT(cno, 5000000, &woke);
    CHECK(r == DAT_SUCCESS && woke == s_dto, "DAT_CNO_WAIT: %s, EVD %p (expected %p)", rs(r), (void *)woke,
          (void *)s_dto);
    TRY(r_dequeue_dto(s_dto, 1, 18));
    CHECK(memcmp(buf + 1024, "through the table", 18) == 0, "the send's payload differs");

    /* RDMA write then read into the peer's buffer, and a memory window over it */
    memset(buf + 2048, 0x5a, 256);
    DAT_RMR_TRIPLET rt = {0};
    rt.rmr_context = rctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)(buf + 4096);
    rt.segment_length = 256;
    t.virtual_address = (DAT_VADDR)(uintptr_t)(buf + 2048);
    t.segment_length = 256;
    OK(DAT_EP_POST_RDMA_WRITE(cep, 1, &t, (DAT_DTO_COOKIE)(DAT_UINT64)3, &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(r_dequeue_dto(c_dto, 3, 256));
    t.virtual_address = (DAT_VADDR)(uintptr_t)(buf + 6144);
    OK(DAT_EP_POST_RDMA_READ(cep, 1, &t, (DAT_DTO_COOKIE)(DAT_UINT64)4, &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(r_dequeue_dto(c_dto, 4, 256));
    /* Only now is the write known to be placed: where a write completes once sent (iWARP,
     * libfabric's tcp) the read served behind it is what shows it there. */
    CHECK(memcmp(buf + 4096, buf + 2048, 256) == 0, "the RDMA write's data differs");
    CHECK(memcmp(buf + 6144, buf + 2048, 256) == 0, "the RDMA read's data differs");
    DAT_LMR_TRIPLET sync = {0};
    sync.lmr_context = lctx;
    sync.virtual_address = (DAT_VADDR)(uintptr_t)(buf + 6144);
    sync.segment_length = 256;
    OK(DAT_LMR_SYNC_RDMA_READ(ia, &sync, 1));
    OK(DAT_LMR_SYNC_RDMA_WRITE(ia, &sync, 1));

    DAT_RMR_HANDLE rmr;
    OK(DAT_RMR_CREATE(pz, &rmr));
    DAT_RMR_CONTEXT window;
    t.virtual_address = (DAT_VADDR)(uintptr_t)buf;
    t.segment_length = 512;
    r = R_RMR_BIND(rmr, lmr, &t, DAT_MEM_PRIV_ALL_FLAG, sep, (DAT_RMR_COOKIE)(DAT_UINT64)5,
                   DAT_COMPLETION_DEFAULT_FLAG, &window);
    if (r == DAT_SUCCESS) {
        DAT_EVENT bev;
        TRY(r_wait(s_dto, DAT_RMR_BIND_COMPLETION_EVENT, &bev));
    } else {
        CHECK(is_not_impl(r), "DAT_RMR_BIND: %s", rs(r));
    }
    DAT_RMR_PARAM rmr_param;
    OK(DAT_RMR_QUERY(rmr, DAT_RMR_FIELD_ALL, &rmr_param));
    OK(DAT_RMR_FREE(rmr));

    /* an SRQ and an EP on it */
    DAT_SRQ_ATTR srq_attr = {0};
    srq_attr.max_recv_dtos = 8;
    srq_attr.max_recv_iov = 1;
    DAT_SRQ_HANDLE srq;
    r = DAT_SRQ_CREATE(ia, pz, &srq_attr, &srq);
    if (r == DAT_SUCCESS) {
        DAT_SRQ_PARAM srq_param;
        OK(DAT_SRQ_QUERY(srq, DAT_SRQ_FIELD_ALL, &srq_param));
        t.segment_length = 64;
        OK(DAT_SRQ_POST_RECV(srq, 1, &t, (DAT_DTO_COOKIE)(DAT_UINT64)6));
        OK(DAT_SRQ_RESIZE(srq, 16));
        OK(DAT_SRQ_SET_LW(srq, 2));
        DAT_EP_HANDLE srq_ep;
        OK(DAT_EP_CREATE_WITH_SRQ(ia, pz, s_dto, s_dto, s_conn, srq, NULL, &srq_ep));
        OK(DAT_EP_FREE(srq_ep));
        OK(DAT_SRQ_FREE(srq));
    } else {
        CHECK(is_not_impl(r), "DAT_SRQ_CREATE: %s", rs(r));
    }
    DAT_COUNT nbufs, span;
    r = DAT_EP_RECV_QUERY(cep, &nbufs, &span);
    CHECK(r == DAT_SUCCESS || is_not_impl(r), "DAT_EP_RECV_QUERY: %s", rs(r));

#if DAT_VERSION_MAJOR >= 2
    /* the extended operation with a va_list: the counters as dat_ib_query_counters reads them */
    DAT_UINT64 counters[DCNT_IA_ALL_COUNTERS];
    TRY(query_counters_va(ia, counters));
    /* the calls DAT 2.0 defines only as macros: not implemented, after the handle check */
    DAT_BOOLEAN related;
    r = DAT_IA_HA_RELATED(ia, (DAT_NAME_PTR)g_ia_name, &related);
    CHECK(is_not_impl(r), "DAT_IA_HA_RELATED: %s", rs(r));
    r = DAT_EP_COMMON_CONNECT(cep, (DAT_IA_ADDRESS_PTR)&sin, 1000, 0, NULL);
    CHECK(is_not_impl(r), "DAT_EP_COMMON_CONNECT: %s", rs(r));
    EXPECT_ERR(DAT_EP_COMMON_CONNECT(pz, (DAT_IA_ADDRESS_PTR)&sin, 1000, 0, NULL), DAT_INVALID_HANDLE,
               DAT_INVALID_HANDLE_EP);
#endif

    OK(DAT_EP_DISCONNECT(cep, DAT_CLOSE_ABRUPT_FLAG));
    TRY(r_wait(c_conn, DAT_CONNECTION_EVENT_DISCONNECTED, &ev));
    OK(DAT_EP_RESET(cep));
    OK(DAT_EP_FREE(cep));
    OK(DAT_EP_FREE(sep));
    OK(DAT_PSP_FREE(psp));
    OK(DAT_LMR_FREE(lmr));
    OK(DAT_EVD_MODIFY_CNO(s_dto, DAT_HANDLE_NULL));
    OK(DAT_CNO_FREE(cno));
    DAT_EVD_HANDLE evds[] = {cr_evd, c_dto, c_conn, s_dto, s_conn};
    for (size_t i = 0; i < sizeof evds / sizeof evds[0]; i++)
        OK(DAT_EVD_FREE(evds[i]));
    OK(DAT_PZ_FREE(pz));
    OK(IA_CLOSE(ia, DAT_CLOSE_GRACEFUL_FLAG));
    free(buf);
    return T_PASS;
}

/* A freed handle of each type still leads to the table, which refuses it. */
static tres freed_handles_reach_the_table(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_PROVIDER *table = PROVIDER_OF(f.ia);
    DAT_PZ_HANDLE pz;
    DAT_EVD_HANDLE evd;
    DAT_EP_HANDLE ep;
    DAT_CNO_HANDLE cno;
    OK(DAT_PZ_CREATE(f.ia, &pz));
    OK(DAT_EVD_CREATE(f.ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd));
    OK(DAT_EP_CREATE(f.ia, f.pz, evd, evd, f.conn_evd, NULL, &ep));
    OK(DAT_CNO_CREATE(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
    OK(DAT_EP_FREE(ep));
    OK(DAT_EVD_FREE(evd));
    OK(DAT_PZ_FREE(pz));
    OK(DAT_CNO_FREE(cno));
    CHECK(PROVIDER_OF(ep) == table && PROVIDER_OF(evd) == table && PROVIDER_OF(pz) == table &&
              PROVIDER_OF(cno) == table,
          "a freed handle's first word is no longer the table");
    EXPECT_ERR(DAT_EP_FREE(ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
    DAT_LMR_TRIPLET t = {0};
    EXPECT_ERR(DAT_EP_POST_SEND(ep, 0, &t, (DAT_DTO_COOKIE)(DAT_UINT64)0, DAT_COMPLETION_DEFAULT_FLAG),
               DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
    DAT_EVENT ev;
    EXPECT_ERR(DAT_EVD_DEQUEUE(evd, &ev), DAT_INVALID_HANDLE, SUB_EVD);
    EXPECT_ERR(DAT_PZ_FREE(pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
    DAT_EVD_HANDLE woke;
    EXPECT_ERR(DAT_CNO_WAIT(cno, 0, &woke), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
    /* a freed handle used as another type */
    EXPECT_ERR(DAT_EP_POST_SEND(pz, 0, &t, (DAT_DTO_COOKIE)(DAT_UINT64)0, DAT_COMPLETION_DEFAULT_FLAG),
               DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
    DAT_IA_HANDLE ia = f.ia;
    TRY(fx_close(&f));
    /* the closed IA too */
    DAT_IA_ATTR a;
    EXPECT_ERR(DAT_IA_QUERY(ia, NULL, DAT_IA_ALL, &a, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    EXPECT_ERR(IA_CLOSE(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
    return T_PASS;
}

const struct tcase redirect_cases[] = {
    {"redirect.table_behind_every_handle", table_behind_every_handle, 0},
    {"redirect.calls_through_the_table", calls_through_the_table, 0},
    {"redirect.freed_handles_reach_the_table", freed_handles_reach_the_table, 0},
    {NULL, NULL, 0},
};
