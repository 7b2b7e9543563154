/*
 * t_dto.c - data transfer, connection state and CR cases over an in-process loopback
 * connection (client EP and server EP in the same IA, connected through 127.0.0.1).
 */
#include "dct.h"

#include <sys/mman.h>
#include <unistd.h>

/* A post that the man pages let fail immediately (with one of the listed types) or succeed
 * and then complete with an error status.  Passes in both cases. */
static tres post_must_fail(const char *what, DAT_RETURN r, DAT_EVD_HANDLE evd, DAT_UINT64 ck,
                           const DAT_UINT32 *types, int ntypes)
{
    if (r != DAT_SUCCESS) {
        for (int i = 0; i < ntypes; i++)
            if ((r & DAT_CLASS_ERROR) && DAT_GET_TYPE(r) == types[i]) {
                vlog("%s: immediate %s", what, rs(r));
                return T_PASS;
            }
        return t_fail("%s: returned %s (not one of the documented errors)", what, rs(r));
    }
    DAT_EVENT ev;
    DAT_RETURN w = wait_ev(evd, 3000000, &ev);
    CHECK(w == DAT_SUCCESS, "%s: post succeeded but no completion arrived: %s", what, rs(w));
    CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT, "%s: got %s", what, evname(ev.event_number));
    CHECK(ev.event_data.dto_completion_event_data.user_cookie.as_64 == ck, "%s: cookie mismatch", what);
    CHECK(ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS,
          "%s: post succeeded and completed with DAT_DTO_SUCCESS", what);
    vlog("%s: completion status %s", what, dtostat(ev.event_data.dto_completion_event_data.status));
    return T_PASS;
}

/* A remote access violation: reported like post_must_fail, or, as iWARP does (an RDMA write
 * completes at the initiator once sent; the responder's error then terminates the connection),
 * by a successful completion followed by DISCONNECTED or BROKEN on the initiator's conn EVD. */
static tres remote_must_fail(const char *what, DAT_RETURN r, DAT_EVD_HANDLE evd, DAT_EVD_HANDLE conn,
                             DAT_UINT64 ck, const DAT_UINT32 *types, int ntypes)
{
    DAT_EVENT ev;
    if (r == DAT_SUCCESS && wait_ev(evd, 3000000, &ev) == DAT_SUCCESS &&
        ev.event_number == DAT_DTO_COMPLETION_EVENT &&
        ev.event_data.dto_completion_event_data.user_cookie.as_64 == ck &&
        ev.event_data.dto_completion_event_data.status == DAT_DTO_SUCCESS) {
        DAT_RETURN w = wait_ev(conn, 5000000, &ev);
        CHECK(w == DAT_SUCCESS && (ev.event_number == DAT_CONNECTION_EVENT_BROKEN ||
                                   ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED),
              "%s: completed with DAT_DTO_SUCCESS and the connection stayed up (%s)", what, rs(w));
        vlog("%s: reported by breaking the connection (%s)", what, evname(ev.event_number));
        return T_PASS;
    }
    if (r == DAT_SUCCESS) {
        /* the completion was consumed above: judge it here */
        CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT &&
                  ev.event_data.dto_completion_event_data.user_cookie.as_64 == ck,
              "%s: no matching completion", what);
        vlog("%s: completion status %s", what, dtostat(ev.event_data.dto_completion_event_data.status));
        return T_PASS;
    }
    return post_must_fail(what, r, evd, ck, types, ntypes);
}

static const DAT_UINT32 local_errs[] = {DAT_INVALID_PARAMETER, DAT_LENGTH_ERROR, DAT_PROTECTION_VIOLATION,
                                        DAT_PRIVILEGES_VIOLATION};

static tres loopback_connect(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_EP_STATE st;
    OK(dat_ep_get_status(c.cep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_CONNECTED, "client EP state %d, expected CONNECTED", (int)st);
    OK(dat_ep_get_status(c.sep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_CONNECTED, "server EP state %d, expected CONNECTED", (int)st);
    DAT_EP_PARAM p;
    OK(dat_ep_query(c.cep, DAT_EP_FIELD_ALL, &p));
    CHECK(p.remote_ia_address_ptr != NULL, "connected EP has no remote address");
    CHECK(p.remote_port_qual == c.qual, "client remote_port_qual %llu, expected %llu",
          (unsigned long long)p.remote_port_qual, (unsigned long long)c.qual);
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres cr_query_accept(void)
{
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE a, cr_evd, cc, sc, dto;
    DAT_PZ_HANDLE pz;
    DAT_EP_HANDLE cep, sep;
    DAT_PSP_HANDLE psp;
    OK(open_ia(&ia, &a));
    OK(dat_pz_create(ia, &pz));
    OK(make_evd(ia, DAT_EVD_CR_FLAG, 4, &cr_evd));
    OK(make_evd(ia, DAT_EVD_CONNECTION_FLAG, 4, &cc));
    OK(make_evd(ia, DAT_EVD_CONNECTION_FLAG, 4, &sc));
    OK(make_evd(ia, DAT_EVD_DTO_FLAG, 16, &dto));
    OK(dat_ep_create(ia, pz, dto, dto, cc, NULL, &cep));
    OK(dat_ep_create(ia, pz, dto, dto, sc, NULL, &sep));
    DAT_CONN_QUAL q = fresh_qual(2);
    OK(dat_psp_create(ia, q, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    struct sockaddr_in sin;
    set_loopback_addr(&sin);
    char pd[48];
    for (int i = 0; i < 48; i++)
        pd[i] = (char)(0xA0 + i);
    OK(dat_ep_connect(cep, (DAT_IA_ADDRESS_PTR)&sin, q, 5000000, sizeof pd, pd, DAT_QOS_BEST_EFFORT,
                      DAT_CONNECT_DEFAULT_FLAG));
    DAT_EP_STATE st;
    OK(dat_ep_get_status(cep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING || st == DAT_EP_STATE_CONNECTED,
          "client state %d after dat_ep_connect", (int)st);
    /* connect again while pending: invalid state */
    EXPECT_ERR(dat_ep_connect(cep, (DAT_IA_ADDRESS_PTR)&sin, q, 5000000, 0, NULL, DAT_QOS_BEST_EFFORT,
                              DAT_CONNECT_DEFAULT_FLAG),
               DAT_INVALID_STATE, ANYSUB);
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(cr_evd, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_REQUEST_EVENT, "no CR: %s %s", rs(r),
          evname(ev.event_number));
    const DAT_CR_ARRIVAL_EVENT_DATA *cra = &ev.event_data.cr_arrival_event_data;
    CHECK(cra->sp_handle.psp_handle == psp, "CR sp_handle %p, expected PSP %p", cra->sp_handle.psp_handle, psp);
    CHECK(cra->conn_qual == q, "CR conn_qual %llu", (unsigned long long)cra->conn_qual);
    DAT_CR_HANDLE cr = cra->cr_handle;
    DAT_HANDLE_TYPE t;
    OK(dat_get_handle_type(cr, &t));
    CHECK(t == DAT_HANDLE_TYPE_CR, "CR handle type %d", (int)t);
    DAT_CONTEXT ctx, g;
    ctx.as_64 = 77;
    OK(dat_set_consumer_context(cr, ctx));
    OK(dat_get_consumer_context(cr, &g));
    CHECK(g.as_64 == 77, "CR consumer context");
    DAT_CR_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &p));
    CHECK(p.private_data_size >= (DAT_COUNT)sizeof pd, "CR private_data_size %d < %zu", p.private_data_size,
          sizeof pd);
    CHECK(p.private_data && memcmp(p.private_data, pd, sizeof pd) == 0, "CR private data mismatch");
    CHECK(p.remote_ia_address_ptr != NULL, "CR remote address NULL");
    CHECK(p.local_ep_handle == DAT_HANDLE_NULL, "PSP CR local_ep_handle %p, expected NULL", p.local_ep_handle);
    EXPECT_ERR(dat_cr_query(cr, DAT_CR_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_cr_query(cr, (DAT_CR_PARAM_MASK)0x1000, &p));
    /* accept errors: bad EP, EP with no connect EVD? bad private data */
    EXPECT_ERR(dat_cr_accept(cr, (DAT_EP_HANDLE)(uintptr_t)0x1234, 0, NULL), DAT_INVALID_HANDLE,
               DAT_INVALID_HANDLE_EP);
    EXPECT_ERR(dat_cr_accept(cr, pz, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
    EXPECT_ERR(dat_cr_accept(cr, sep, -1, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_cr_accept(cr, sep, 8, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    /* accepting on the (pending) client EP: wrong state */
    EXPECT_ERR2(dat_cr_accept(cr, cep, 0, NULL), DAT_INVALID_STATE, DAT_INVALID_PARAMETER);
    char apd[16] = "accept-pd-12345";
    OK(dat_cr_accept(cr, sep, sizeof apd, apd));
    r = wait_ev(sc, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED, "server: %s %s", rs(r),
          evname(ev.event_number));
    r = wait_ev(cc, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED, "client: %s %s", rs(r),
          evname(ev.event_number));
    const DAT_CONNECTION_EVENT_DATA *cd = &ev.event_data.connect_event_data;
    CHECK(cd->ep_handle == cep, "ESTABLISHED ep_handle %p, expected %p", cd->ep_handle, cep);
    CHECK(cd->private_data_size >= (DAT_COUNT)sizeof apd && cd->private_data &&
              memcmp(cd->private_data, apd, sizeof apd) == 0,
          "accept private data not delivered to the client (size %d)", cd->private_data_size);
    /* the CR is consumed by accept */
    EXPECT_ERR(dat_cr_query(cr, DAT_CR_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
    EXPECT_ERR(cr_reject(cr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
    /* connect on a connected EP */
    EXPECT_ERR(dat_ep_connect(cep, (DAT_IA_ADDRESS_PTR)&sin, q, 5000000, 0, NULL, DAT_QOS_BEST_EFFORT,
                              DAT_CONNECT_DEFAULT_FLAG),
               DAT_INVALID_STATE, DAT_INVALID_STATE_EP_CONNECTED, ANYSUB);
    /* modify of a connected EP's EVDs is not allowed */
    DAT_EP_PARAM ep_p;
    memset(&ep_p, 0, sizeof ep_p);
    ep_p.recv_evd_handle = dto;
    r = dat_ep_modify(cep, DAT_EP_FIELD_RECV_EVD_HANDLE, &ep_p);
    CHECK(is_not_impl(r) || ((r & DAT_CLASS_ERROR) && (DAT_GET_TYPE(r) == DAT_INVALID_STATE ||
                                                       DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER)),
          "dat_ep_modify(connected EP, RECV_EVD) -> %s", rs(r));
    OK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres send_recv_multiseg(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    char *sb = c.buf, *rb = c.buf + 32768;
    for (int i = 0; i < 3000; i++)
        sb[i] = (char)(i * 7 + 3);
    /* server receive: 3 segments 1000 + 500 + 2000 (room for 3500) */
    DAT_LMR_TRIPLET r3[3] = {trip(c.lctx, rb, 1000), trip(c.lctx, rb + 4096, 500), trip(c.lctx, rb + 8192, 2000)};
    OK(dat_ep_post_recv(c.sep, 3, r3, cookie(11), DAT_COMPLETION_DEFAULT_FLAG));
    /* client send: 2 segments 1200 + 1800 = 3000 */
    DAT_LMR_TRIPLET s2[2] = {trip(c.lctx, sb, 1200), trip(c.lctx, sb + 1200, 1800)};
    OK(dat_ep_post_send(c.cep, 2, s2, cookie(22), DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 22, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    DAT_EVENT ev;
    TRY(expect_dto(c.s_dto, 3000000, 11, DAT_DTO_SUCCESS, 3000, &ev));
    CHECK(ev.event_data.dto_completion_event_data.ep_handle == c.sep, "recv completion ep_handle");
    /* scatter check: front segments filled completely, in order */
    CHECK(memcmp(rb, sb, 1000) == 0, "segment 1 data mismatch");
    CHECK(memcmp(rb + 4096, sb + 1000, 500) == 0, "segment 2 data mismatch");
    CHECK(memcmp(rb + 8192, sb + 1500, 1500) == 0, "segment 3 data mismatch");
    /* zero-length send (num_segments 0, NULL iov) */
    OK(dat_ep_post_recv(c.sep, 1, r3, cookie(12), DAT_COMPLETION_DEFAULT_FLAG));
    OK(dat_ep_post_send(c.cep, 0, NULL, cookie(23), DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 23, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    TRY(expect_dto(c.s_dto, 3000000, 12, DAT_DTO_SUCCESS, 0, NULL));
    /* and the other direction */
    OK(dat_ep_post_recv(c.cep, 3, r3, cookie(13), DAT_COMPLETION_DEFAULT_FLAG));
    OK(dat_ep_post_send(c.sep, 1, s2, cookie(24), DAT_COMPLETION_DEFAULT_FLAG)); /* 1200 bytes */
    TRY(expect_dto(c.s_dto, 3000000, 24, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    TRY(expect_dto(c.c_dto, 3000000, 13, DAT_DTO_SUCCESS, 1200, NULL));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres send_flags(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET t = trip(c.lctx, c.buf, 64);
    DAT_LMR_TRIPLET r = trip(c.lctx, c.buf + 1024, 64);
    OK(dat_ep_post_recv(c.sep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
    OK(dat_ep_post_recv(c.sep, 1, &r, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
    /* suppressed successful completion: only the second send is reported */
    OK(dat_ep_post_send(c.cep, 1, &t, cookie(100), DAT_COMPLETION_SUPPRESS_FLAG));
    OK(dat_ep_post_send(c.cep, 1, &t, cookie(101), DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 101, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    TRY(expect_dto(c.s_dto, 3000000, 1, DAT_DTO_SUCCESS, 64, NULL));
    TRY(expect_dto(c.s_dto, 3000000, 2, DAT_DTO_SUCCESS, 64, NULL));
    /* UNSIGNALLED is only valid if the EP was created with it (man page) */
    EXPECT_ERR(dat_ep_post_send(c.cep, 1, &t, cookie(102), DAT_COMPLETION_UNSIGNALLED_FLAG),
               DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_ep_post_send(c.cep, 1, &t, cookie(103), (DAT_COMPLETION_FLAGS)0x4000),
               DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_ep_post_send(c.cep, -1, &t, cookie(104), DAT_COMPLETION_DEFAULT_FLAG),
               DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_ep_post_send(c.cep, 1, NULL, cookie(105), DAT_COMPLETION_DEFAULT_FLAG),
               DAT_INVALID_PARAMETER, ANYSUB);
    DAT_EVENT ev;
    EXPECT_ERR(dat_evd_dequeue(c.c_dto, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres send_iov_outside_lmr(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET r = trip(c.lctx, c.buf, 256);
    OK(dat_ep_post_recv(c.sep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
    DAT_LMR_TRIPLET t = trip(c.lctx, c.buf + c.buflen - 32, 64); /* 32 bytes past the end */
    TRY(post_must_fail("post_send with IOV past its LMR",
                       dat_ep_post_send(c.cep, 1, &t, cookie(5), DAT_COMPLETION_DEFAULT_FLAG), c.c_dto, 5,
                       local_errs, 4));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres send_bad_lmr_context(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET t = trip(c.lctx ^ 0x00ff00ffu, c.buf, 64);
    TRY(post_must_fail("post_send with an unknown lmr_context",
                       dat_ep_post_send(c.cep, 1, &t, cookie(5), DAT_COMPLETION_DEFAULT_FLAG), c.c_dto, 5,
                       local_errs, 4));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres recv_iov_outside_lmr(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET t = trip(c.lctx, c.buf - 16, 64); /* starts before the LMR */
    DAT_RETURN r = dat_ep_post_recv(c.sep, 1, &t, cookie(9), DAT_COMPLETION_DEFAULT_FLAG);
    if (r == DAT_SUCCESS) {
        /* must fail once data arrives */
        DAT_LMR_TRIPLET s = trip(c.lctx, c.buf + 1024, 32);
        OK(dat_ep_post_send(c.cep, 1, &s, cookie(10), DAT_COMPLETION_DEFAULT_FLAG));
    }
    TRY(post_must_fail("post_recv with IOV before its LMR", r, c.s_dto, 9, local_errs, 4));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres recv_no_local_write(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_HANDLE ro;
    DAT_LMR_CONTEXT roc;
    DAT_RMR_CONTEXT rrc;
    char *rbuf = aligned_alloc(4096, 4096);
    OK(make_lmr(c.ia, c.pz, rbuf, 4096, DAT_MEM_PRIV_LOCAL_READ_FLAG, &ro, &roc, &rrc));
    DAT_LMR_TRIPLET t = trip(roc, rbuf, 64);
    DAT_RETURN r = dat_ep_post_recv(c.sep, 1, &t, cookie(9), DAT_COMPLETION_DEFAULT_FLAG);
    if (r == DAT_SUCCESS) {
        DAT_LMR_TRIPLET s = trip(c.lctx, c.buf, 32);
        OK(dat_ep_post_send(c.cep, 1, &s, cookie(10), DAT_COMPLETION_DEFAULT_FLAG));
    }
    TRY(post_must_fail("post_recv into an LMR without LOCAL_WRITE", r, c.s_dto, 9, local_errs, 4));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    free(rbuf);
    return T_PASS;
}

static tres recv_too_small(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET r = trip(c.lctx, c.buf, 16);
    OK(dat_ep_post_recv(c.sep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
    DAT_LMR_TRIPLET s = trip(c.lctx, c.buf + 4096, 100);
    OK(dat_ep_post_send(c.cep, 1, &s, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
    DAT_EVENT ev;
    DAT_RETURN w = wait_ev(c.s_dto, 3000000, &ev);
    CHECK(w == DAT_SUCCESS && ev.event_number == DAT_DTO_COMPLETION_EVENT, "no recv completion: %s", rs(w));
    CHECK(ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS,
          "100-byte send into a 16-byte receive completed with DAT_DTO_SUCCESS");
    vlog("short receive status %s", dtostat(ev.event_data.dto_completion_event_data.status));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres rdma_write_read(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    char *src = c.buf, *dst = c.buf + 16384, *back = c.buf + 32768;
    for (int i = 0; i < 8192; i++)
        src[i] = (char)(i ^ 0x5a);
    DAT_LMR_TRIPLET s[2] = {trip(c.lctx, src, 5000), trip(c.lctx, src + 5000, 3192)};
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = c.rctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)dst;
    rt.segment_length = 8192;
    OK(dat_ep_post_rdma_write(c.cep, 2, s, cookie(1), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 1, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    DAT_LMR_TRIPLET b[3] = {trip(c.lctx, back, 100), trip(c.lctx, back + 100, 4000),
                            trip(c.lctx, back + 4100, 4092)};
    OK(dat_ep_post_rdma_read(c.cep, 3, b, cookie(2), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 2, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    /* Only now is the write known to be placed: on iWARP it completes once sent, and the target
     * serves the read after it (rdma_beyond_triplet_length). */
    DAT_LMR_TRIPLET placed = trip(c.lctx, dst, 8192);
    OK(dat_lmr_sync_rdma_write(c.ia, &placed, 1));
    CHECK(memcmp(dst, src, 8192) == 0, "RDMA write data mismatch");
    OK(dat_lmr_sync_rdma_read(c.ia, b, 3));
    CHECK(memcmp(back, src, 8192) == 0, "RDMA read data mismatch");
    /* the server EP saw no completions for one-sided operations */
    DAT_EVENT ev;
    EXPECT_ERR(dat_evd_dequeue(c.s_dto, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres rdma_remote_errors(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET s = trip(c.lctx, c.buf, 64);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = c.rctx ^ 0x77777777u;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)c.buf + 4096;
    rt.segment_length = 64;
    static const DAT_UINT32 errs[] = {DAT_PROTECTION_VIOLATION, DAT_PRIVILEGES_VIOLATION, DAT_INVALID_PARAMETER,
                                      DAT_LENGTH_ERROR};
    TRY(remote_must_fail("rdma_write with a bad rmr_context",
                       dat_ep_post_rdma_write(c.cep, 1, &s, cookie(1), &rt, DAT_COMPLETION_DEFAULT_FLAG),
                       c.c_dto, c.c_conn, 1, errs, 4));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres rdma_out_of_bounds(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET s = trip(c.lctx, c.buf, 256);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = c.rctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)c.buf + c.buflen - 128; /* 128 bytes past the end */
    rt.segment_length = 256;
    static const DAT_UINT32 errs[] = {DAT_PROTECTION_VIOLATION, DAT_LENGTH_ERROR, DAT_INVALID_PARAMETER,
                                      DAT_PRIVILEGES_VIOLATION};
    TRY(remote_must_fail("rdma_read beyond the remote region",
                       dat_ep_post_rdma_read(c.cep, 1, &s, cookie(3), &rt, DAT_COMPLETION_DEFAULT_FLAG),
                       c.c_dto, c.c_conn, 3, errs, 4));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres rdma_no_remote_priv(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    char *rbuf = aligned_alloc(4096, 4096);
    DAT_LMR_HANDLE l;
    DAT_LMR_CONTEXT lc;
    DAT_RMR_CONTEXT rc;
    OK(make_lmr(c.ia, c.pz, rbuf, 4096, DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG, &l, &lc,
                &rc));
    DAT_LMR_TRIPLET s = trip(c.lctx, c.buf, 64);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = rc;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)rbuf;
    rt.segment_length = 64;
    static const DAT_UINT32 errs[] = {DAT_PRIVILEGES_VIOLATION, DAT_PROTECTION_VIOLATION, DAT_INVALID_PARAMETER,
                                      DAT_LENGTH_ERROR};
    TRY(remote_must_fail("rdma_write to memory without REMOTE_WRITE",
                       dat_ep_post_rdma_write(c.cep, 1, &s, cookie(4), &rt, DAT_COMPLETION_DEFAULT_FLAG),
                       c.c_dto, c.c_conn, 4, errs, 4));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    free(rbuf);
    return T_PASS;
}

/* A target region of its own, registered for remote access: `len` bytes at the start of a
 * page-aligned allocation of len + 4096 (the tail is ordinary, unregistered memory). */
struct target {
    char *buf;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lctx;
    DAT_RMR_CONTEXT rctx;
};

static tres target_setup(struct conn *c, struct target *t, DAT_VLEN len)
{
    t->buf = aligned_alloc(4096, len + 4096);
    CHECK(t->buf != NULL, "out of memory");
    memset(t->buf, 0, len + 4096);
    OK(make_lmr(c->ia, c->pz, t->buf, len, DAT_MEM_PRIV_ALL_FLAG, &t->lmr, &t->lctx, &t->rctx));
    return T_PASS;
}

/* RDMA longer than the remote triplet's segment_length but inside the registered region: OFED
 * checks no remote length at post (the target's region and rkey bound the access) and shipped
 * programs advertise a short triplet, then move a larger buffer into the same region. */
static tres rdma_beyond_triplet_length(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    struct target t;
    TRY(target_setup(&c, &t, 16384));
    char *src = c.buf, *back = c.buf + 16384;
    for (int i = 0; i < 8192; i++)
        src[i] = (char)(i * 7 + 1);
    DAT_LMR_TRIPLET s = trip(c.lctx, src, 8192);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = t.rctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)t.buf + 4096;
    rt.segment_length = 64; /* advertised: 64 bytes; moved: 8192 */
    OK(dat_ep_post_rdma_write(c.cep, 1, &s, cookie(1), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 1, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    DAT_LMR_TRIPLET b = trip(c.lctx, back, 8192);
    rt.segment_length = 1;
    OK(dat_ep_post_rdma_read(c.cep, 1, &b, cookie(2), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 2, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    /* The target's memory is checked only now: on iWARP a write completes once sent (siw: handed
     * to TCP), possibly before the target placed it (seen once on siw); the target serves the
     * read after the write, so the read's completion means the write is placed. */
    DAT_LMR_TRIPLET placed = trip(t.lctx, t.buf + 4096, 8192);
    OK(dat_lmr_sync_rdma_write(c.ia, &placed, 1));
    CHECK(memcmp(t.buf + 4096, src, 8192) == 0, "RDMA write beyond the triplet length: data mismatch");
    OK(dat_lmr_sync_rdma_read(c.ia, &b, 1));
    CHECK(memcmp(back, src, 8192) == 0, "RDMA read beyond the triplet length: data mismatch");
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    free(t.buf);
    return T_PASS;
}

/* An RDMA operation that runs past the end of the target's registered region (its triplet's
 * segment_length covers it, so nothing can be caught at post): the post succeeds and the
 * target refuses the access, completing it with DAT_DTO_ERR_REMOTE_ACCESS.  iWARP reports a
 * refused access by terminating the connection instead: a write completes successfully once
 * sent, a read is flushed (siw), and the connection breaks. */
static tres rdma_outside_region(int write)
{
    struct conn c;
    TRY(conn_setup(&c));
    struct target t;
    TRY(target_setup(&c, &t, 4096));
    DAT_LMR_TRIPLET s = trip(c.lctx, c.buf, 256);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = t.rctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)t.buf + 4096 - 128; /* last 128 bytes + 128 past */
    rt.segment_length = 256;
    DAT_RETURN r = write ? dat_ep_post_rdma_write(c.cep, 1, &s, cookie(9), &rt, DAT_COMPLETION_DEFAULT_FLAG)
                         : dat_ep_post_rdma_read(c.cep, 1, &s, cookie(9), &rt, DAT_COMPLETION_DEFAULT_FLAG);
    CHECK(r == DAT_SUCCESS, "post of an RDMA %s past the remote region: %s (expected DAT_SUCCESS: the target "
          "enforces its region)", write ? "write" : "read", rs(r));
    DAT_EVENT ev;
    r = wait_ev(c.c_dto, 3000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_DTO_COMPLETION_EVENT, "no completion: %s", rs(r));
    const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
    CHECK(d->user_cookie.as_64 == 9, "completion cookie %llu", (unsigned long long)d->user_cookie.as_64);
    if ((write && d->status == DAT_DTO_SUCCESS) || (!write && d->status == DAT_DTO_ERR_FLUSHED)) {
        DAT_DTO_COMPLETION_STATUS st = d->status;
        r = wait_ev(c.c_conn, 5000000, &ev);
        CHECK(r == DAT_SUCCESS && (ev.event_number == DAT_CONNECTION_EVENT_BROKEN ||
                                   ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED),
              "RDMA %s past the remote region completed with %s and the connection stayed up",
              write ? "write" : "read", dtostat(st));
        vlog("refused %s reported by breaking the connection (%s)", write ? "write" : "read",
             evname(ev.event_number));
    } else {
        CHECK(d->status == DAT_DTO_ERR_REMOTE_ACCESS, "RDMA %s past the remote region completed with %s, expected "
              "DAT_DTO_ERR_REMOTE_ACCESS", write ? "write" : "read", dtostat(d->status));
    }
    for (int i = 0; i < 128; i++)
        CHECK(t.buf[4096 + i] == 0, "RDMA write past the region changed the byte after it (+%d)", i);
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    free(t.buf);
    return T_PASS;
}

static tres rdma_write_outside_region(void)
{
    return rdma_outside_region(1);
}

static tres rdma_read_outside_region(void)
{
    return rdma_outside_region(0);
}

static tres rmr_bind_rdma(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_RMR_HANDLE rmr;
    OK(dat_rmr_create(c.pz, &rmr));
    char *win = c.buf + 8192;
    DAT_LMR_TRIPLET lt = trip(c.lctx, win, 4096);
    DAT_RMR_COOKIE rck;
    rck.as_64 = 0xB1D;
    DAT_RMR_CONTEXT rctx = 0;
    /* the bind goes through the server EP's request EVD */
    EXPECT_ERR(rmr_bind(rmr, c.lmr, &lt, (DAT_MEM_PRIV_FLAGS)0x4000, c.sep, rck, DAT_COMPLETION_DEFAULT_FLAG, &rctx),
               DAT_INVALID_PARAMETER, ANYSUB);
    OK(rmr_bind(rmr, c.lmr, &lt, DAT_MEM_PRIV_REMOTE_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG, c.sep, rck,
                    DAT_COMPLETION_DEFAULT_FLAG, &rctx));
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(c.s_dto, 3000000, &ev);
    CHECK(r == DAT_SUCCESS, "no RMR bind completion: %s", rs(r));
    CHECK(ev.event_number == DAT_RMR_BIND_COMPLETION_EVENT, "expected RMR_BIND_COMPLETION, got %s",
          evname(ev.event_number));
    CHECK(ev.event_data.rmr_completion_event_data.rmr_handle == rmr, "bind event rmr_handle");
    CHECK(ev.event_data.rmr_completion_event_data.user_cookie.as_64 == 0xB1D, "bind event cookie");
    CHECK(ev.event_data.rmr_completion_event_data.status == DAT_RMR_BIND_SUCCESS, "bind status %d",
          (int)ev.event_data.rmr_completion_event_data.status);
    DAT_RMR_PARAM p;
    OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &p));
    CHECK(p.rmr_context == rctx, "rmr_query context 0x%x vs bind 0x%x", p.rmr_context, rctx);
    CHECK(p.lmr_triplet.virtual_address == lt.virtual_address && p.lmr_triplet.segment_length == 4096,
          "rmr_query triplet");
    /* LMR is in use by the bound RMR */
    EXPECT_ERR(dat_lmr_free(c.lmr), DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE, ANYSUB);
    /* RDMA write through the window */
    char *src = c.buf;
    memset(src, 0x3c, 512);
    DAT_LMR_TRIPLET s = trip(c.lctx, src, 512);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = rctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)win + 1024;
    rt.segment_length = 512;
    OK(dat_ep_post_rdma_write(c.cep, 1, &s, cookie(1), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 1, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    CHECK(win[1024] == 0x3c && win[1535] == 0x3c, "RDMA write through bound RMR not visible");
    /* beyond the window */
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)win + 4096 - 100;
    static const DAT_UINT32 errs[] = {DAT_PROTECTION_VIOLATION, DAT_LENGTH_ERROR, DAT_INVALID_PARAMETER,
                                      DAT_PRIVILEGES_VIOLATION};
    TRY(post_must_fail("rdma_write past the bound RMR window",
                       dat_ep_post_rdma_write(c.cep, 1, &s, cookie(2), &rt, DAT_COMPLETION_DEFAULT_FLAG),
                       c.c_dto, 2, errs, 4));
    /* unbind (zero-length triplet): the old rmr_context stops working */
    DAT_LMR_TRIPLET none = trip(c.lctx, win, 0);
    DAT_RMR_CONTEXT after = 1;
    rck.as_64 = 0xB1E;
    OK(rmr_bind(rmr, c.lmr, &none, DAT_MEM_PRIV_NONE_FLAG, c.sep, rck, DAT_COMPLETION_DEFAULT_FLAG, &after));
    r = wait_ev(c.s_dto, 3000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_RMR_BIND_COMPLETION_EVENT &&
              ev.event_data.rmr_completion_event_data.user_cookie.as_64 == 0xB1E,
          "no unbind completion: %s %s", rs(r), evname(ev.event_number));
    OK(dat_lmr_sync_rdma_write(c.ia, &lt, 1)); /* the LMR is no longer in use */
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)win + 1024;
    TRY(post_must_fail("rdma_write through an unbound RMR",
                       dat_ep_post_rdma_write(c.cep, 1, &s, cookie(3), &rt, DAT_COMPLETION_DEFAULT_FLAG),
                       c.c_dto, 3, errs, 4));
    OK(dat_rmr_free(rmr));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres disconnect_flush(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    for (int i = 0; i < 4; i++) {
        DAT_LMR_TRIPLET r = trip(c.lctx, c.buf + i * 256, 256);
        OK(dat_ep_post_recv(c.sep, 1, &r, cookie(100 + (DAT_UINT64)i), DAT_COMPLETION_DEFAULT_FLAG));
        OK(dat_ep_post_recv(c.cep, 1, &r, cookie(200 + (DAT_UINT64)i), DAT_COMPLETION_DEFAULT_FLAG));
    }
    OK(dat_ep_disconnect(c.cep, DAT_CLOSE_GRACEFUL_FLAG));
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(c.c_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED,
          "client: expected DISCONNECTED: %s %s", rs(r), evname(ev.event_number));
    /* No private data: size 0 and still a readable pointer (README: looser than OFED's NULL). */
    CHECK(ev.event_data.connect_event_data.private_data_size == 0 &&
              ev.event_data.connect_event_data.private_data != NULL &&
              ((const unsigned char *)ev.event_data.connect_event_data.private_data)[0] == 0,
          "client: DISCONNECTED's private data: size %d, pointer %p",
          (int)ev.event_data.connect_event_data.private_data_size,
          ev.event_data.connect_event_data.private_data);
    r = wait_ev(c.s_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && (ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
                               ev.event_number == DAT_CONNECTION_EVENT_BROKEN),
          "server: expected DISCONNECTED: %s %s", rs(r), evname(ev.event_number));
    for (int i = 0; i < 4; i++) {
        TRY(expect_dto(c.s_dto, 3000000, 100 + (DAT_UINT64)i, DAT_DTO_ERR_FLUSHED, 0, NULL));
        TRY(expect_dto(c.c_dto, 3000000, 200 + (DAT_UINT64)i, DAT_DTO_ERR_FLUSHED, 0, NULL));
    }
    DAT_EP_STATE st;
    DAT_BOOLEAN ri, qi;
    OK(dat_ep_get_status(c.cep, &st, &ri, &qi));
    CHECK(st == DAT_EP_STATE_DISCONNECTED, "client state %d after disconnect", (int)st);
    CHECK(ri == DAT_TRUE, "recv_idle FALSE after flush");
    /* ep_state may be NULL (OFED's library allows it; Debian's dtestx asks only for the flags) */
    ri = qi = 7;
    OK(dat_ep_get_status(c.cep, NULL, &ri, &qi));
    CHECK(ri == DAT_TRUE && qi == DAT_TRUE, "idle flags %d %d with a NULL ep_state", (int)ri, (int)qi);
    /* posting on a DISCONNECTED EP: success + immediate flush (man page) */
    DAT_LMR_TRIPLET t = trip(c.lctx, c.buf, 32);
    char deferred[300] = "";
    r = dat_ep_post_send(c.cep, 1, &t, cookie(300), DAT_COMPLETION_DEFAULT_FLAG);
    if (r == DAT_SUCCESS)
        TRY(expect_dto(c.c_dto, 3000000, 300, DAT_DTO_ERR_FLUSHED, 0, NULL));
    else
        snprintf(deferred, sizeof deferred,
                 "post_send on a DISCONNECTED EP -> %s; the man page says it is valid in that state "
                 "and the DTO is flushed", rs(r));
    /* second disconnect: no-op success or invalid state */
    r = dat_ep_disconnect(c.cep, DAT_CLOSE_ABRUPT_FLAG);
    CHECK(r == DAT_SUCCESS || match_err(r, DAT_INVALID_STATE, (const unsigned[]){ANYSUB, ENDSUB}),
          "second dat_ep_disconnect -> %s", rs(r));
    /* reset -> UNCONNECTED -> reconnect works */
    OK(dat_ep_reset(c.cep));
    OK(dat_ep_get_status(c.cep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_UNCONNECTED, "state %d after dat_ep_reset", (int)st);
    OK(dat_ep_reset(c.sep));
    struct sockaddr_in sin;
    set_loopback_addr(&sin);
    OK(dat_ep_connect(c.cep, (DAT_IA_ADDRESS_PTR)&sin, c.qual, 5000000, 0, NULL, DAT_QOS_BEST_EFFORT,
                      DAT_CONNECT_DEFAULT_FLAG));
    r = wait_ev(c.cr_evd, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_REQUEST_EVENT, "reconnect: no CR: %s", rs(r));
    OK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, c.sep, 0, NULL));
    r = wait_ev(c.c_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED,
          "reconnect after reset: %s %s", rs(r), evname(ev.event_number));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    if (deferred[0])
        return t_fail("%s", deferred);
    return T_PASS;
}

/* A receive posted on an EP whose connection just ended is flushed at once, and completes
 * after the receives posted before the end, which the provider flushed at the end: the
 * completions of one queue come out in posting order, whoever made them. */
static tres flush_order_after_disconnect(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    for (int i = 0; i < 4; i++) {
        DAT_LMR_TRIPLET r = trip(c.lctx, c.buf + i * 256, 256);
        OK(dat_ep_post_recv(c.sep, 1, &r, cookie(100 + (DAT_UINT64)i), DAT_COMPLETION_DEFAULT_FLAG));
    }
    OK(dat_ep_disconnect(c.cep, DAT_CLOSE_GRACEFUL_FLAG));
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(c.s_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && (ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
                               ev.event_number == DAT_CONNECTION_EVENT_BROKEN),
          "server: expected DISCONNECTED: %s %s", rs(r), evname(ev.event_number));
    /* nothing taken from the server's DTO EVD yet: the four flushed receives wait there */
    DAT_LMR_TRIPLET t = trip(c.lctx, c.buf + 4 * 256, 256);
    OK(dat_ep_post_recv(c.sep, 1, &t, cookie(104), DAT_COMPLETION_DEFAULT_FLAG));
    for (int i = 0; i < 5; i++)
        TRY(expect_dto(c.s_dto, 3000000, 100 + (DAT_UINT64)i, DAT_DTO_ERR_FLUSHED, 0, NULL));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres abrupt_disconnect_and_free(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET r = trip(c.lctx, c.buf, 256);
    OK(dat_ep_post_recv(c.sep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
    /* freeing a connected EP is allowed: the peer sees the connection go away */
    OK(dat_ep_free(c.cep));
    DAT_EVENT ev;
    DAT_RETURN w = wait_ev(c.s_conn, 5000000, &ev);
    CHECK(w == DAT_SUCCESS && (ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
                               ev.event_number == DAT_CONNECTION_EVENT_BROKEN),
          "server after peer EP freed: %s %s", rs(w), evname(ev.event_number));
    TRY(expect_dto(c.s_dto, 3000000, 1, DAT_DTO_ERR_FLUSHED, 0, NULL));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres cr_reject_loopback(void)
{
    struct conn c;
    DAT_CR_HANDLE cr;
    TRY(conn_request(&c, 3, &cr));
    OK(cr_reject(cr));
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(c.c_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_PEER_REJECTED,
          "client after reject: %s %s", rs(r), evname(ev.event_number));
    EXPECT_ERR(cr_reject(cr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
    EXPECT_ERR(dat_cr_accept(cr, c.cep, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

static tres evd_threshold_dto(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_LMR_TRIPLET r = trip(c.lctx, c.buf, 64);
    for (int i = 0; i < 3; i++)
        OK(dat_ep_post_recv(c.sep, 1, &r, cookie((DAT_UINT64)i), DAT_COMPLETION_DEFAULT_FLAG));
    DAT_LMR_TRIPLET s = trip(c.lctx, c.buf + 1024, 64);
    for (int i = 0; i < 3; i++)
        OK(dat_ep_post_send(c.cep, 1, &s, cookie(10 + (DAT_UINT64)i), DAT_COMPLETION_DEFAULT_FLAG));
    DAT_EVENT ev;
    DAT_COUNT n = -1;
    OK(dat_evd_wait(c.s_dto, 3000000, 3, &ev, &n));
    CHECK(n == 2, "threshold 3 on recv EVD: n_more_events %d", n);
    CHECK(ev.event_data.dto_completion_event_data.user_cookie.as_64 == 0, "receives completed out of order");
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

/*
 * A count of segments past the EP's (or SRQ's) limit is refused before the triplets are read:
 * the consumer's array holds one triplet, at the end of a page followed by an inaccessible one,
 * and the count is 1 << 20. Reading the triplets first would fault in the library.
 */
static tres segment_count_past_limit(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    CHECK(mprotect(m + pg, (size_t)pg, PROT_NONE) == 0, "mprotect");
    DAT_LMR_TRIPLET *t = (DAT_LMR_TRIPLET *)(m + pg) - 1;
    *t = trip(c.lctx, c.buf, 64);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = c.rctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)c.buf;
    rt.segment_length = 64;
    const DAT_COUNT n = 1 << 20;
    for (int i = 0; i < 2; i++) {
        DAT_EP_HANDLE ep = i ? c.sep : c.cep;
        EXPECT_ERR(dat_ep_post_send(ep, n, t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER,
                   DAT_INVALID_ARG2);
        EXPECT_ERR(dat_ep_post_recv(ep, n, t, cookie(2), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER,
                   DAT_INVALID_ARG2);
        EXPECT_ERR(dat_ep_post_rdma_write(ep, n, t, cookie(3), &rt, DAT_COMPLETION_DEFAULT_FLAG),
                   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
        EXPECT_ERR(dat_ep_post_rdma_read(ep, n, t, cookie(4), &rt, DAT_COMPLETION_DEFAULT_FLAG),
                   DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
    }
    DAT_SRQ_ATTR sa = {8, 1, 0};
    DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;
    DAT_RETURN r = dat_srq_create(c.ia, c.pz, &sa, &srq);
    if (r == DAT_SUCCESS)
        EXPECT_ERR(dat_srq_post_recv(srq, n, t, cookie(5)), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
    else
        CHECK(is_not_impl(r), "dat_srq_create: %s", rs(r));
    munmap(m, 2 * (size_t)pg);
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    free(c.buf);
    return T_PASS;
}

const struct tcase dto_cases[] = {
    {"loopback.connect", loopback_connect, 0},
    {"cr.query_accept_private_data", cr_query_accept, 0},
    {"cr.reject", cr_reject_loopback, 0},
    {"dto.send_recv_multiseg", send_recv_multiseg, 0},
    {"dto.segment_count_past_limit", segment_count_past_limit, 0},
    {"dto.completion_flags", send_flags, 0},
    {"dto.send_iov_outside_lmr", send_iov_outside_lmr, 0},
    {"dto.send_bad_lmr_context", send_bad_lmr_context, 0},
    {"dto.recv_iov_outside_lmr", recv_iov_outside_lmr, 0},
    {"dto.recv_without_local_write", recv_no_local_write, 0},
    {"dto.recv_too_small", recv_too_small, 0},
    {"dto.rdma_write_read", rdma_write_read, 0},
    {"dto.rdma_bad_rmr_context", rdma_remote_errors, 0},
    {"dto.rdma_out_of_bounds", rdma_out_of_bounds, 0},
    {"dto.rdma_without_remote_write", rdma_no_remote_priv, 0},
    {"dto.rdma_beyond_triplet_length", rdma_beyond_triplet_length, 0},
    {"dto.rdma_write_outside_region", rdma_write_outside_region, 0},
    {"dto.rdma_read_outside_region", rdma_read_outside_region, 0},
    {"dto.rmr_bind_rdma", rmr_bind_rdma, 0},
    {"dto.evd_threshold", evd_threshold_dto, 0},
    {"conn.disconnect_flush_reset", disconnect_flush, 0},
    {"conn.flush_order_after_disconnect", flush_order_after_disconnect, 0},
    {"conn.free_connected_ep", abrupt_disconnect_and_free, 0},
    {NULL, NULL, 0},
};
