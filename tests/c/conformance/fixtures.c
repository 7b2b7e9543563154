/* fixtures.c - object set-up helpers shared by the conformance cases */
#include "dct.h"

#include <unistd.h>

DAT_RETURN open_ia(DAT_IA_HANDLE *ia, DAT_EVD_HANDLE *async_evd)
{
    *async_evd = DAT_HANDLE_NULL; /* ask the provider to create the async EVD */
    *ia = DAT_HANDLE_NULL;
    return dat_ia_open(g_ia_name, 8, async_evd, ia);
}

DAT_RETURN make_evd(DAT_IA_HANDLE ia, DAT_EVD_FLAGS flags, DAT_COUNT qlen, DAT_EVD_HANDLE *evd)
{
    return dat_evd_create(ia, qlen, DAT_HANDLE_NULL, flags, evd);
}

DAT_RETURN make_lmr(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, void *buf, DAT_VLEN len,
                    DAT_MEM_PRIV_FLAGS priv, DAT_LMR_HANDLE *lmr, DAT_LMR_CONTEXT *lctx,
                    DAT_RMR_CONTEXT *rctx)
{
    DAT_REGION_DESCRIPTION rd;
    DAT_VLEN rlen = 0;
    DAT_VADDR raddr = 0;
    memset(&rd, 0, sizeof rd);
    rd.for_va = buf;
    return lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, len, pz, priv, lmr, lctx, rctx, &rlen,
                          &raddr);
}

tres fx_open(struct fx *f)
{
    memset(f, 0, sizeof *f);
    OK(open_ia(&f->ia, &f->async_evd));
    CHECK(f->ia != DAT_HANDLE_NULL, "dat_ia_open returned a NULL IA handle");
    return T_PASS;
}

tres fx_full(struct fx *f)
{
    TRY(fx_open(f));
    OK(dat_pz_create(f->ia, &f->pz));
    OK(make_evd(f->ia, DAT_EVD_DTO_FLAG, 64, &f->dto_evd));
    OK(make_evd(f->ia, DAT_EVD_CONNECTION_FLAG, 16, &f->conn_evd));
    OK(make_evd(f->ia, DAT_EVD_CR_FLAG, 16, &f->cr_evd));
    OK(dat_ep_create(f->ia, f->pz, f->dto_evd, f->dto_evd, f->conn_evd, NULL, &f->ep));
    f->buflen = 8192;
    f->buf = aligned_alloc(4096, f->buflen);
    CHECK(f->buf != NULL, "out of memory");
    memset(f->buf, 0, f->buflen);
    DAT_REGION_DESCRIPTION rd;
    memset(&rd, 0, sizeof rd);
    rd.for_va = f->buf;
    OK(lmr_create(f->ia, DAT_MEM_TYPE_VIRTUAL, rd, f->buflen, f->pz, DAT_MEM_PRIV_ALL_FLAG,
                      &f->lmr, &f->lmr_ctx, &f->rmr_ctx, &f->reg_len, &f->reg_addr));
    return T_PASS;
}

tres fx_close(struct fx *f)
{
    if (f->ia)
        OK(dat_ia_close(f->ia, DAT_CLOSE_ABRUPT_FLAG));
    free(f->buf);
    memset(f, 0, sizeof *f);
    return T_PASS;
}

DAT_RETURN wait_ev(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_EVENT *ev)
{
    DAT_COUNT nmore = 0;
    memset(ev, 0, sizeof *ev);
    return dat_evd_wait(evd, us, 1, ev, &nmore);
}

const char *evname(DAT_EVENT_NUMBER n)
{
    static char b[32];
    switch (n) {
    case DAT_DTO_COMPLETION_EVENT: return "DTO_COMPLETION";
    case DAT_RMR_BIND_COMPLETION_EVENT: return "RMR_BIND_COMPLETION";
    case DAT_CONNECTION_REQUEST_EVENT: return "CONNECTION_REQUEST";
    case DAT_CONNECTION_EVENT_ESTABLISHED: return "CONNECTION_EVENT_ESTABLISHED";
    case DAT_CONNECTION_EVENT_PEER_REJECTED: return "CONNECTION_EVENT_PEER_REJECTED";
    case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "CONNECTION_EVENT_NON_PEER_REJECTED";
    case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: return "CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR";
    case DAT_CONNECTION_EVENT_DISCONNECTED: return "CONNECTION_EVENT_DISCONNECTED";
    case DAT_CONNECTION_EVENT_BROKEN: return "CONNECTION_EVENT_BROKEN";
    case DAT_CONNECTION_EVENT_TIMED_OUT: return "CONNECTION_EVENT_TIMED_OUT";
    case DAT_CONNECTION_EVENT_UNREACHABLE: return "CONNECTION_EVENT_UNREACHABLE";
    case DAT_ASYNC_ERROR_EVD_OVERFLOW: return "ASYNC_ERROR_EVD_OVERFLOW";
    case DAT_ASYNC_ERROR_IA_CATASTROPHIC: return "ASYNC_ERROR_IA_CATASTROPHIC";
    case DAT_ASYNC_ERROR_EP_BROKEN: return "ASYNC_ERROR_EP_BROKEN";
    case DAT_ASYNC_ERROR_TIMED_OUT: return "ASYNC_ERROR_TIMED_OUT";
    case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR: return "ASYNC_ERROR_PROVIDER_INTERNAL_ERROR";
    case DAT_SOFTWARE_EVENT: return "SOFTWARE_EVENT";
    default:
        snprintf(b, sizeof b, "event 0x%x", (unsigned)n);
        return b;
    }
}

const char *dtostat(DAT_DTO_COMPLETION_STATUS s)
{
    static char b[32];
    switch (s) {
    case DAT_DTO_SUCCESS: return "DAT_DTO_SUCCESS";
    case DAT_DTO_ERR_FLUSHED: return "DAT_DTO_ERR_FLUSHED";
    case DAT_DTO_ERR_LOCAL_LENGTH: return "DAT_DTO_ERR_LOCAL_LENGTH";
    case DAT_DTO_ERR_LOCAL_EP: return "DAT_DTO_ERR_LOCAL_EP";
    case DAT_DTO_ERR_LOCAL_PROTECTION: return "DAT_DTO_ERR_LOCAL_PROTECTION";
    case DAT_DTO_ERR_BAD_RESPONSE: return "DAT_DTO_ERR_BAD_RESPONSE";
    case DAT_DTO_ERR_REMOTE_ACCESS: return "DAT_DTO_ERR_REMOTE_ACCESS";
    case DAT_DTO_ERR_REMOTE_RESPONDER: return "DAT_DTO_ERR_REMOTE_RESPONDER";
    case DAT_DTO_ERR_TRANSPORT: return "DAT_DTO_ERR_TRANSPORT";
    case DAT_DTO_ERR_RECEIVER_NOT_READY: return "DAT_DTO_ERR_RECEIVER_NOT_READY";
    case DAT_DTO_ERR_PARTIAL_PACKET: return "DAT_DTO_ERR_PARTIAL_PACKET";
    case DAT_RMR_OPERATION_FAILED: return "DAT_RMR_OPERATION_FAILED";
    default:
        snprintf(b, sizeof b, "status %d", (int)s);
        return b;
    }
}

void set_loopback_addr(struct sockaddr_in *sin)
{
    memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin->sin_port = 0;
}

/* A connection qualifier unique to this process: 10000 + (pid % 5000) * 10 + k, k < 10. */
DAT_CONN_QUAL fresh_qual(unsigned k)
{
    /* two-host mode: both hosts derive the same qualifier from the case index */
    if (g_role != ROLE_NONE)
        return (DAT_CONN_QUAL)(30000u + (unsigned)g_case_index * 10u + (k % 10u));
    return (DAT_CONN_QUAL)(10000u + ((unsigned)getpid() % 5000u) * 10u + (k % 10u));
}

DAT_DTO_COOKIE cookie(DAT_UINT64 v)
{
    DAT_DTO_COOKIE c;
    c.as_64 = v;
    return c;
}

DAT_LMR_TRIPLET trip(DAT_LMR_CONTEXT ctx, const void *addr, DAT_VLEN len)
{
    DAT_LMR_TRIPLET t;
    memset(&t, 0, sizeof t);
    t.lmr_context = ctx;
    t.virtual_address = (DAT_VADDR)(uintptr_t)addr;
    t.segment_length = len;
    return t;
}

tres expect_dto(DAT_EVD_HANDLE evd, DAT_TIMEOUT us, DAT_UINT64 cookie,
                DAT_DTO_COMPLETION_STATUS st, DAT_VLEN len, DAT_EVENT *out)
{
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(evd, us, &ev);
    CHECK(r == DAT_SUCCESS, "waiting for DTO completion (cookie %llu): %s",
          (unsigned long long)cookie, rs(r));
    CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT, "expected DTO_COMPLETION, got %s",
          evname(ev.event_number));
    const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
    CHECK(d->user_cookie.as_64 == cookie, "DTO cookie %llu, expected %llu",
          (unsigned long long)d->user_cookie.as_64, (unsigned long long)cookie);
    CHECK(d->status == st, "DTO (cookie %llu) status %s, expected %s",
          (unsigned long long)cookie, dtostat(d->status), dtostat(st));
    if (st == DAT_DTO_SUCCESS && len != (DAT_VLEN)-1)
        CHECK(d->transfered_length == len, "DTO (cookie %llu) transfered_length %llu, expected %llu",
              (unsigned long long)cookie, (unsigned long long)d->transfered_length,
              (unsigned long long)len);
    if (out)
        *out = ev;
    return T_PASS;
}

/*
 * In-process loopback up to a pending connection request: one IA, a PSP on fresh_qual(k), a
 * client EP (cep, c_dto, c_conn) connecting to it; *cr is the request the PSP delivered.
 */
/* The watermark events (dat_srq_set_lw, dat_ep_set_watermark) come on the IA's async EVD as
 * DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR naming the SRQ or EP and the watermark reason (the
 * headers define reasons for them but no event number of their own). Waits up to us. */
tres expect_async_event(DAT_EVD_HANDLE async_evd, DAT_TIMEOUT us, DAT_EVENT_NUMBER number, DAT_HANDLE h,
                        DAT_COUNT reason)
{
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(async_evd, us, &ev);
    CHECK(r == DAT_SUCCESS, "no %s on the async EVD: %s", evname(number), rs(r));
    CHECK(ev.event_number == number, "async event %s, expected %s", evname(ev.event_number), evname(number));
    const DAT_ASYNCH_ERROR_EVENT_DATA *d = &ev.event_data.asynch_error_event_data;
    CHECK(d->dat_handle == h, "%s names handle %p, expected %p", evname(number), (void *)d->dat_handle, (void *)h);
    CHECK(d->reason == reason, "%s reason %d, expected %d", evname(number), (int)d->reason, (int)reason);
    return T_PASS;
}

tres expect_watermark_event(DAT_EVD_HANDLE async_evd, DAT_TIMEOUT us, DAT_HANDLE h, DAT_COUNT reason)
{
    return expect_async_event(async_evd, us, DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR, h, reason);
}

tres conn_request(struct conn *c, unsigned k, DAT_CR_HANDLE *cr)
{
    memset(c, 0, sizeof *c);
    OK(open_ia(&c->ia, &c->async_evd));
    OK(dat_pz_create(c->ia, &c->pz));
    OK(make_evd(c->ia, DAT_EVD_CR_FLAG, 4, &c->cr_evd));
    OK(make_evd(c->ia, DAT_EVD_CONNECTION_FLAG, 4, &c->c_conn));
    OK(make_evd(c->ia, DAT_EVD_DTO_FLAG, 8, &c->c_dto));
    OK(dat_ep_create(c->ia, c->pz, c->c_dto, c->c_dto, c->c_conn, NULL, &c->cep));
    c->qual = fresh_qual(k);
    OK(dat_psp_create(c->ia, c->qual, c->cr_evd, DAT_PSP_CONSUMER_FLAG, &c->psp));
    struct sockaddr_in sin;
    set_loopback_addr(&sin);
    OK(dat_ep_connect(c->cep, (DAT_IA_ADDRESS_PTR)&sin, c->qual, 5000000, 0, NULL, DAT_QOS_BEST_EFFORT,
                      DAT_CONNECT_DEFAULT_FLAG));
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(c->cr_evd, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_REQUEST_EVENT, "no CR: %s", rs(r));
    *cr = ev.event_data.cr_arrival_event_data.cr_handle;
    return T_PASS;
}

/*
 * In-process loopback connection: one IA, a PSP on a fresh qualifier, a client EP that
 * connects to 127.0.0.1 and a server EP that accepts.  Both sides see ESTABLISHED.
 */
tres conn_setup(struct conn *c)
{
    memset(c, 0, sizeof *c);
    OK(open_ia(&c->ia, &c->async_evd));
    OK(dat_pz_create(c->ia, &c->pz));
    OK(make_evd(c->ia, DAT_EVD_CR_FLAG, 8, &c->cr_evd));
    OK(make_evd(c->ia, DAT_EVD_DTO_FLAG, 256, &c->c_dto));
    OK(make_evd(c->ia, DAT_EVD_CONNECTION_FLAG, 8, &c->c_conn));
    OK(make_evd(c->ia, DAT_EVD_DTO_FLAG, 256, &c->s_dto));
    OK(make_evd(c->ia, DAT_EVD_CONNECTION_FLAG, 8, &c->s_conn));
    OK(dat_ep_create(c->ia, c->pz, c->c_dto, c->c_dto, c->c_conn, NULL, &c->cep));
    OK(dat_ep_create(c->ia, c->pz, c->s_dto, c->s_dto, c->s_conn, NULL, &c->sep));
    c->qual = fresh_qual(7);
    OK(dat_psp_create(c->ia, c->qual, c->cr_evd, DAT_PSP_CONSUMER_FLAG, &c->psp));
    c->buflen = 65536;
    c->buf = aligned_alloc(4096, c->buflen);
    CHECK(c->buf != NULL, "out of memory");
    memset(c->buf, 0, c->buflen);
    OK(make_lmr(c->ia, c->pz, c->buf, c->buflen, DAT_MEM_PRIV_ALL_FLAG, &c->lmr, &c->lctx,
                &c->rctx));

    struct sockaddr_in sin;
    set_loopback_addr(&sin);
    OK(dat_ep_connect(c->cep, (DAT_IA_ADDRESS_PTR)&sin, c->qual, 5000000, 0, NULL,
                      DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(c->cr_evd, 5000000, &ev);
    CHECK(r == DAT_SUCCESS, "loopback: no connection request: %s", rs(r));
    CHECK(ev.event_number == DAT_CONNECTION_REQUEST_EVENT, "loopback: expected CR, got %s",
          evname(ev.event_number));
    OK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, c->sep, 0, NULL));
    r = wait_ev(c->s_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED,
          "loopback server: expected ESTABLISHED: %s %s", rs(r), evname(ev.event_number));
    r = wait_ev(c->c_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED,
          "loopback client: expected ESTABLISHED: %s %s", rs(r), evname(ev.event_number));
    return T_PASS;
}
