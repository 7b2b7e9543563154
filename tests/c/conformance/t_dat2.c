/*
 * t_dat2.c - cases only the DAT 2.0 face has (dat2_conformance): private data on
 * dat_cr_reject, the DTO event's operation, the 2.0 numbers of error codes, dat_ep_recv_query /
 * dat_ep_set_watermark, dat_lmr_create's va_type, dat_extension_op's checks, dat_ia_query's
 * 2.0 attributes.  In the DAT 1.2 build the table is empty.
 */
#include "dct.h"

#if DAT_VERSION_MAJOR >= 2

#include <dat2/dat_ib_extensions.h>

/* ---------------- dat_cr_reject with private data ---------------- */

/* The passive side rejects with private data; the active side's PEER_REJECTED event carries it.
 * Bad private-data arguments are refused and leave the request pending (nothing lost). */
static tres cr_reject_private_data(void)
{
    struct conn c;
    DAT_CR_HANDLE cr;
    TRY(conn_request(&c, 4, &cr));
    DAT_PROVIDER_ATTR pattr;
    OK(dat_ia_query(c.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE, &pattr));

    static char why[] = "dat2 reject: queue full, try later";
    DAT_COUNT too_big = pattr.max_private_data_size + 1;
    char *big = calloc(1, (size_t)too_big);
    CHECK(big != NULL, "out of memory");
    EXPECT_ERR(dat_cr_reject(cr, -1, why), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_cr_reject(cr, (DAT_COUNT)sizeof why, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_cr_reject(cr, too_big, big), DAT_INVALID_PARAMETER, ANYSUB);
    free(big);
    EXPECT_BAD_HANDLES(c.cep, DAT_HANDLE_NULL, H, dat_cr_reject(H, (DAT_COUNT)sizeof why, why), DAT_INVALID_HANDLE_CR);

    OK(dat_cr_reject(cr, (DAT_COUNT)sizeof why, why));
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(c.c_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_PEER_REJECTED, "client after reject: %s %s",
          rs(r), evname(ev.event_number));
    const DAT_CONNECTION_EVENT_DATA *cd = &ev.event_data.connect_event_data;
    CHECK(cd->ep_handle == c.cep, "PEER_REJECTED ep_handle %p, expected %p", cd->ep_handle, c.cep);
    CHECK(cd->private_data_size >= (DAT_COUNT)sizeof why && cd->private_data != NULL &&
              memcmp(cd->private_data, why, sizeof why) == 0,
          "reject private data not delivered to the active side (size %d)", cd->private_data_size);
    EXPECT_ERR(dat_cr_reject(cr, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

/* ---------------- DTO events' operation ---------------- */

static tres expect_operation(DAT_EVD_HANDLE evd, DAT_UINT64 ck, DAT_DTOS op, const char *what)
{
    DAT_EVENT ev;
    TRY(expect_dto(evd, 3000000, ck, DAT_DTO_SUCCESS, (DAT_VLEN)-1, &ev));
    DAT_DTOS got = ev.event_data.dto_completion_event_data.operation;
    CHECK(got == op, "%s completion: operation %d, expected %d", what, (int)got, (int)op);
    return T_PASS;
}

static tres dto_operation(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    char *src = c.buf, *rcv = c.buf + 4096, *dst = c.buf + 8192, *back = c.buf + 12288;
    memset(src, 0x6b, 1024);
    DAT_LMR_TRIPLET r = trip(c.lctx, rcv, 1024), s = trip(c.lctx, src, 1024), b = trip(c.lctx, back, 1024);
    OK(dat_ep_post_recv(c.sep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
    OK(dat_ep_post_send(c.cep, 1, &s, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_operation(c.c_dto, 2, DAT_DTO_SEND, "send"));
    TRY(expect_operation(c.s_dto, 1, DAT_DTO_RECEIVE, "receive"));
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = c.rctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)dst;
    rt.segment_length = 1024;
    OK(dat_ep_post_rdma_write(c.cep, 1, &s, cookie(3), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_operation(c.c_dto, 3, DAT_DTO_RDMA_WRITE, "RDMA write"));
    OK(dat_ep_post_rdma_read(c.cep, 1, &b, cookie(4), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_operation(c.c_dto, 4, DAT_DTO_RDMA_READ, "RDMA read"));
    CHECK(memcmp(rcv, src, 1024) == 0 && memcmp(back, src, 1024) == 0, "data mismatch");
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

/* ---------------- 2.0 numbers of error codes ---------------- */

/* The whole returned code, as a 2.0 binary compares it.  1.2's numbers differ from the
 * DAT_INVALID_HANDLE1 subtype on (2.0 inserted DAT_INVALID_HANDLE_CSP before it); a face that
 * returned 1.2 numbers would fail here with the 1.2 value named. */
static tres code_is(const char *call, DAT_RETURN got, DAT_RETURN want, DAT_RETURN dat12_value)
{
    if (got == want)
        return T_PASS;
    return t_fail("%s -> %s, expected 0x%08x%s", call, rs(got), (unsigned)want,
                  got == dat12_value ? " (this is the DAT 1.2 number)" : "");
}

static tres error_numbering(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_LMR_TRIPLET t = trip(f.lmr_ctx, f.buf, 64);
    TRY(code_is("dat_ep_post_send(NULL EP)",
                dat_ep_post_send(DAT_HANDLE_NULL, 1, &t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), 0x8005000cu,
                0x8005000cu));
    DAT_PZ_HANDLE pz;
    TRY(code_is("dat_pz_create(NULL IA)", dat_pz_create(DAT_HANDLE_NULL, &pz), 0x8005000bu, 0x8005000bu));
    DAT_COUNT n = 0;
    TRY(code_is("dat_registry_list_providers(0, &n, NULL)", dat_registry_list_providers(0, &n, NULL), 0x80060025u,
                0x80060024u));
    DAT_LMR_HANDLE l;
    DAT_LMR_CONTEXT lc;
    DAT_RMR_CONTEXT rc;
    TRY(code_is("dat_lmr_create(unmapped address)",
                make_lmr(f.ia, f.pz, (void *)(uintptr_t)0x1000, 4096, DAT_MEM_PRIV_LOCAL_READ_FLAG, &l, &lc, &rc),
                0x80060027u, 0x80060026u));
    /* the generic handle functions: DAT_INVALID_HANDLE1 is 0x1b in 2.0 (0x1a is HANDLE_CSP) */
    DAT_HANDLE_TYPE ht;
    DAT_RETURN r = dat_get_handle_type(DAT_HANDLE_NULL, &ht);
    CHECK(r == 0x8005001bu || r == 0x80050000u, "dat_get_handle_type(NULL) -> %s, expected 0x8005001b%s", rs(r),
          r == 0x8005001au ? " (this is the DAT 1.2 number of DAT_INVALID_HANDLE1)" : "");

    static const struct {
        DAT_RETURN code;
        const char *min;
    } names[] = {
        {0x80060025u, "DAT_INVALID_ARG1"},
        {0x8005001bu, "DAT_INVALID_HANDLE1"},
        {0x8007002fu, "DAT_INVALID_STATE_EP_UNCONNECTED"},
        {0x800a0064u, "DAT_NAME_NOT_REGISTERED"},
        {0x800b005cu, "DAT_PRIVILEGES_RDMA_WRITE"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *maj = NULL, *min = NULL;
        r = dat_strerror(names[i].code, &maj, &min);
        CHECK(r == DAT_SUCCESS && min && strcmp(min, names[i].min) == 0,
              "dat_strerror(0x%08x) -> 0x%08x, minor \"%s\", expected \"%s\"", (unsigned)names[i].code, (unsigned)r,
              min ? min : "(null)", names[i].min);
    }
    /* the 2.0-only subtypes (DAT_INVALID_HANDLE_CSP 0x1a, DAT_INVALID_STATE_SRQ_SHUTDOWN 0x58) may
     * have placeholder text, but never the name 1.2 gives their numbers */
    const char *maj = NULL, *min = NULL;
    dat_strerror(0x8005001au, &maj, &min);
    CHECK(min == NULL || strcmp(min, "DAT_INVALID_HANDLE1") != 0, "dat_strerror(0x8005001a) reads it as 1.2's DAT_INVALID_HANDLE1");
    dat_strerror(0x80070058u, &maj, &min);
    CHECK(min == NULL || strcmp(min, "DAT_PRIVILEGES_WRITE") != 0,
          "dat_strerror(0x80070058) reads it as 1.2's DAT_PRIVILEGES_WRITE");
    r = dat_strerror(0x3fff0000u, &maj, &min);
    CHECK(r == DAT_SUCCESS && maj && strcmp(maj, "DAT_NOT_IMPLEMENTED") == 0,
          "dat_strerror(0x3fff0000, the 2.0 DAT_NOT_IMPLEMENTED) -> 0x%08x \"%s\"", (unsigned)r, maj ? maj : "(null)");
    return fx_close(&f);
}

/* ---------------- dat_ep_recv_query / dat_ep_set_watermark ---------------- */

/* an EP handle of f's IA that was freed (stale) */
static DAT_RETURN freed_ep(struct fx *f, DAT_EP_HANDLE *ep)
{
    DAT_RETURN r = dat_ep_create(f->ia, f->pz, f->dto_evd, f->dto_evd, f->conn_evd, NULL, ep);
    return r == DAT_SUCCESS ? dat_ep_free(*ep) : r;
}

static tres ep_recv_query(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EP_HANDLE stale;
    OK(freed_ep(&f, &stale));
    DAT_COUNT nb = -1, span = -1;
    OK(dat_ep_recv_query(f.ep, &nb, &span));
    CHECK(nb == 0, "dat_ep_recv_query of a fresh EP: nbufs_allocated %d, expected 0", nb);
    /* receives may be posted before connecting */
    for (int i = 0; i < 3; i++) {
        DAT_LMR_TRIPLET t = trip(f.lmr_ctx, f.buf + i * 256, 256);
        OK(dat_ep_post_recv(f.ep, 1, &t, cookie((DAT_UINT64)i), DAT_COMPLETION_DEFAULT_FLAG));
    }
    OK(dat_ep_recv_query(f.ep, &nb, &span));
    CHECK(nb == 3, "dat_ep_recv_query after 3 receives: nbufs_allocated %d", nb);
    vlog("recv_query: nbufs_allocated %d bufs_alloc_span %d", nb, span);
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_ep_recv_query(H, &nb, &span), DAT_INVALID_HANDLE_EP);
    return fx_close(&f);
}

static tres ep_set_watermark(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EP_HANDLE stale;
    OK(freed_ep(&f, &stale));
    /* "no watermark" is the default and always accepted */
    OK(dat_ep_set_watermark(f.ep, DAT_WATERMARK_INFINITE, DAT_WATERMARK_INFINITE));
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_ep_set_watermark(H, DAT_WATERMARK_INFINITE, DAT_WATERMARK_INFINITE),
                       DAT_INVALID_HANDLE_EP);
    return fx_close(&f);
}

/* Posts `n` receives of 256 bytes on `ep` (cookies from `first`). */
static tres post_recvs(struct conn *c, DAT_EP_HANDLE ep, int first, int n)
{
    for (int i = first; i < first + n; i++) {
        DAT_LMR_TRIPLET t = trip(c->lctx, c->buf + i * 256, 256);
        OK(dat_ep_post_recv(ep, 1, &t, cookie((DAT_UINT64)i), DAT_COMPLETION_DEFAULT_FLAG));
    }
    return T_PASS;
}

/* `ep`'s connection broken by its hard high watermark: BROKEN on its connect EVD, the EP
 * disconnected, and the peer's connection ended too (its connect EVD `peer_conn`). */
static tres expect_broken(DAT_EP_HANDLE ep, DAT_EVD_HANDLE conn, DAT_EVD_HANDLE peer_conn)
{
    DAT_EVENT ev;
    DAT_RETURN r = wait_ev(conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_BROKEN,
          "above the hard high watermark: %s %s, expected DAT_CONNECTION_EVENT_BROKEN", rs(r),
          r == DAT_SUCCESS ? evname(ev.event_number) : "");
    DAT_EP_STATE st;
    OK(dat_ep_get_status(ep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_DISCONNECTED, "EP state %d after its connection broke", (int)st);
    r = wait_ev(peer_conn, 5000000, &ev);
    if (r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED) /* broken as it was made */
        r = wait_ev(peer_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && (ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
                               ev.event_number == DAT_CONNECTION_EVENT_BROKEN),
          "the peer of a broken connection: %s %s", rs(r), r == DAT_SUCCESS ? evname(ev.event_number) : "");
    return T_PASS;
}

/* dat_ep_set_watermark's hard high watermark: once more receives than it are in progress at a
 * connected EP, its connection is broken; at a post that takes the count above it, at once
 * when it is set below the count, or when the connection is established. At the watermark
 * nothing happens; INFINITE disarms it. */
static tres ep_hard_watermark(void)
{
    struct conn c;
    DAT_EVENT ev;
    TRY(conn_setup(&c));
    TRY(post_recvs(&c, c.sep, 0, 2));
    OK(dat_ep_set_watermark(c.sep, DAT_WATERMARK_INFINITE, 2));
    EXPECT_ERR(dat_evd_dequeue(c.s_conn, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    /* disarmed: a third receive is fine; armed again at 3, the fourth breaks the connection */
    OK(dat_ep_set_watermark(c.sep, DAT_WATERMARK_INFINITE, DAT_WATERMARK_INFINITE));
    TRY(post_recvs(&c, c.sep, 2, 1));
    OK(dat_ep_set_watermark(c.sep, DAT_WATERMARK_INFINITE, 3));
    EXPECT_ERR(dat_evd_dequeue(c.s_conn, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    TRY(post_recvs(&c, c.sep, 3, 1));
    TRY(expect_broken(c.sep, c.s_conn, c.c_conn));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    free(c.buf);

    /* set below the count of a connected EP: broken at once (here the client's) */
    TRY(conn_setup(&c));
    TRY(post_recvs(&c, c.cep, 0, 2));
    OK(dat_ep_set_watermark(c.cep, DAT_WATERMARK_INFINITE, 1));
    TRY(expect_broken(c.cep, c.c_conn, c.s_conn));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    free(c.buf);

    /* set on an unconnected EP holding more receives: nothing until its connection is
     * established, which it then breaks (here the accepting EP's) */
    DAT_CR_HANDLE cr;
    TRY(conn_request(&c, 9, &cr));
    c.buf = aligned_alloc(4096, 65536);
    CHECK(c.buf != NULL, "out of memory");
    OK(make_lmr(c.ia, c.pz, c.buf, 65536, DAT_MEM_PRIV_ALL_FLAG, &c.lmr, &c.lctx, &c.rctx));
    OK(make_evd(c.ia, DAT_EVD_CONNECTION_FLAG, 4, &c.s_conn));
    OK(make_evd(c.ia, DAT_EVD_DTO_FLAG, 8, &c.s_dto));
    OK(dat_ep_create(c.ia, c.pz, c.s_dto, c.s_dto, c.s_conn, NULL, &c.sep));
    TRY(post_recvs(&c, c.sep, 0, 2));
    OK(dat_ep_set_watermark(c.sep, DAT_WATERMARK_INFINITE, 1));
    EXPECT_ERR(dat_evd_dequeue(c.s_conn, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    OK(dat_cr_accept(cr, c.sep, 0, NULL));
    DAT_RETURN r = wait_ev(c.s_conn, 5000000, &ev);
    CHECK(r == DAT_SUCCESS && ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED, "accepted: %s %s", rs(r),
          r == DAT_SUCCESS ? evname(ev.event_number) : "");
    TRY(expect_broken(c.sep, c.s_conn, c.c_conn));
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    free(c.buf);
    return T_PASS;
}

/* ---------------- dat_lmr_create's va_type ---------------- */

static tres lmr_va_type(void)
{
    struct conn c;
    TRY(conn_setup(&c));
    DAT_IA_ATTR ia_attr;
    OK(dat_ia_query(c.ia, NULL, DAT_IA_FIELD_IA_ZB_SUPPORTED, &ia_attr, 0, NULL));
    char *win = c.buf + 32768;
    DAT_REGION_DESCRIPTION rd;
    memset(&rd, 0, sizeof rd);
    rd.for_va = win;
    DAT_LMR_HANDLE l;
    DAT_LMR_CONTEXT lc;
    DAT_RMR_CONTEXT rc;
    DAT_VLEN rl;
    DAT_VADDR ra;
    EXPECT_ERR(dat_lmr_create(c.ia, DAT_MEM_TYPE_VIRTUAL, rd, 4096, c.pz, DAT_MEM_PRIV_ALL_FLAG, (DAT_VA_TYPE)7, &l,
                              &lc, &rc, &rl, &ra),
               DAT_INVALID_PARAMETER, ANYSUB);
    /* VA: the registered address is the buffer's, and the LMR says so */
    OK(dat_lmr_create(c.ia, DAT_MEM_TYPE_VIRTUAL, rd, 4096, c.pz, DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &l, &lc, &rc,
                      &rl, &ra));
    CHECK(ra <= (DAT_VADDR)(uintptr_t)win && ra + rl >= (DAT_VADDR)(uintptr_t)win + 4096,
          "VA LMR registered [0x%llx, +%llu) does not cover the buffer", (unsigned long long)ra,
          (unsigned long long)rl);
    DAT_LMR_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_lmr_query(l, DAT_LMR_FIELD_VA_TYPE, &p));
    CHECK(p.va_type == DAT_VA_TYPE_VA, "lmr_query va_type %d, expected DAT_VA_TYPE_VA", (int)p.va_type);
    OK(dat_lmr_free(l));

    DAT_RETURN r = dat_lmr_create(c.ia, DAT_MEM_TYPE_VIRTUAL, rd, 4096, c.pz, DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_ZB, &l,
                                  &lc, &rc, &rl, &ra);
    if (!ia_attr.zb_supported) {
        CHECK((r & DAT_CLASS_ERROR) &&
                  (DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER || DAT_GET_TYPE(r) == DAT_MODEL_NOT_SUPPORTED),
              "DAT_VA_TYPE_ZB with zb_supported FALSE -> %s", rs(r));
        OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
        return t_skip("zero-based addressing: the IA says zb_supported FALSE and refuses it (%s)", rs(r));
    }
    /* ZB: remote addresses are offsets into the region, starting at 0 */
    CHECK(r == DAT_SUCCESS, "DAT_VA_TYPE_ZB with zb_supported TRUE -> %s", rs(r));
    CHECK(ra == 0, "ZB LMR registered_address 0x%llx, expected 0", (unsigned long long)ra);
    OK(dat_lmr_query(l, DAT_LMR_FIELD_VA_TYPE, &p));
    CHECK(p.va_type == DAT_VA_TYPE_ZB, "lmr_query va_type %d, expected DAT_VA_TYPE_ZB", (int)p.va_type);
    memset(c.buf, 0x2e, 256);
    DAT_LMR_TRIPLET s = trip(c.lctx, c.buf, 256);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = rc;
    rt.RMR_ADDR = 1024;
    rt.segment_length = 256;
    OK(dat_ep_post_rdma_write(c.cep, 1, &s, cookie(1), &rt, DAT_COMPLETION_DEFAULT_FLAG));
    TRY(expect_dto(c.c_dto, 3000000, 1, DAT_DTO_SUCCESS, (DAT_VLEN)-1, NULL));
    CHECK(win[1024] == 0x2e && win[1279] == 0x2e && win[1023] == 0 && win[1280] == 0,
          "RDMA write to ZB offset 1024 did not land at win + 1024");
    OK(dat_ia_close(c.ia, DAT_CLOSE_ABRUPT_FLAG));
    return T_PASS;
}

/* ---------------- dat_extension_op ---------------- */

static tres extension_op_checks(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EP_HANDLE stale;
    OK(freed_ep(&f, &stale));
    /* a bad handle is refused before the operation's arguments are read */
    EXPECT_BAD_HANDLES(DAT_HANDLE_NULL, stale, H, dat_extension_op(H, DAT_IB_RDMA_WRITE_IMMED_OP), ANYSUB);
    /* an operation no extension defines: an error, never success or a crash */
    DAT_HANDLE hs[] = {f.ia, f.ep, f.dto_evd};
    const char *ns[] = {"IA", "EP", "EVD"};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
        DAT_RETURN r = dat_extension_op(hs[i], (DAT_EXTENDED_OP)0x7777);
        CHECK((r & DAT_CLASS_ERROR) && (DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER || is_not_impl(r)),
              "dat_extension_op(%s, unknown op 0x7777) -> %s, expected DAT_INVALID_PARAMETER or "
              "DAT_NOT_IMPLEMENTED",
              ns[i], rs(r));
    }
    return fx_close(&f);
}

/* ---------------- dat_ia_query's 2.0 attributes ---------------- */

static tres ia_query_dat2_fields(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_IA_ATTR a;
    DAT_PROVIDER_ATTR p;
    memset(&a, 0x5a, sizeof a);
    memset(&p, 0x5a, sizeof p);
    OK(dat_ia_query(f.ia, NULL, DAT_IA_FIELD_ALL, &a, DAT_PROVIDER_FIELD_ALL, &p));
    CHECK(a.zb_supported == DAT_TRUE || a.zb_supported == DAT_FALSE, "zb_supported %d", (int)a.zb_supported);
    CHECK(a.extension_supported == DAT_EXTENSION_NONE || a.extension_supported == DAT_EXTENSION_IB ||
              a.extension_supported == DAT_EXTENSION_IW,
          "extension_supported %d", (int)a.extension_supported);
    if (a.extension_supported == DAT_EXTENSION_IB)
        CHECK(a.extension_version == DAT_IB_EXTENSION_VERSION, "IB extension_version %d, expected %d",
              a.extension_version, DAT_IB_EXTENSION_VERSION);
    CHECK(a.max_rdma_read_per_ep_in_guaranteed == DAT_TRUE || a.max_rdma_read_per_ep_in_guaranteed == DAT_FALSE,
          "max_rdma_read_per_ep_in_guaranteed %d", (int)a.max_rdma_read_per_ep_in_guaranteed);
    CHECK(a.num_transport_attr >= 0 && (a.num_transport_attr == 0 || a.transport_attr != NULL), "transport_attr");
    CHECK(a.num_vendor_attr >= 0 && (a.num_vendor_attr == 0 || a.vendor_attr != NULL), "vendor_attr");
    CHECK(p.dapl_version_major == 2 && p.dapl_version_minor == 0, "provider dapl_version %u.%u, expected 2.0",
          p.dapl_version_major, p.dapl_version_minor);
    CHECK(p.rmr_scope_supported == DAT_RMR_SCOPE_EP || p.rmr_scope_supported == DAT_RMR_SCOPE_PZ ||
              p.rmr_scope_supported == DAT_RMR_SCOPE_ANY,
          "rmr_scope_supported %d", (int)p.rmr_scope_supported);
    CHECK(p.is_signal_safe == DAT_TRUE || p.is_signal_safe == DAT_FALSE, "is_signal_safe %d", (int)p.is_signal_safe);
    CHECK(p.ha_supported == DAT_TRUE || p.ha_supported == DAT_FALSE, "ha_supported %d", (int)p.ha_supported);
    CHECK(p.ha_loadbalancing == DAT_HA_LB_NONE || p.ha_loadbalancing == DAT_HA_LB_INTERCOMM ||
              p.ha_loadbalancing == DAT_HA_LB_INTRACOMM,
          "ha_loadbalancing %d", (int)p.ha_loadbalancing);
    CHECK(p.num_provider_specific_attr >= 0 &&
              (p.num_provider_specific_attr == 0 || p.provider_specific_attr != NULL),
          "provider_specific_attr");
    for (DAT_COUNT i = 0; i < p.num_provider_specific_attr; i++)
        vlog("provider attr %s = %s", p.provider_specific_attr[i].name, p.provider_specific_attr[i].value);
    vlog("zb_supported %d extension_supported %d version %d rmr_scope %d", (int)a.zb_supported,
         (int)a.extension_supported, a.extension_version, (int)p.rmr_scope_supported);
    /* the 2.0 mask bits alone fill their fields */
    DAT_IA_ATTR b;
    memset(&b, 0x5a, sizeof b);
    OK(dat_ia_query(f.ia, NULL, DAT_IA_FIELD_IA_EXTENSION | DAT_IA_FIELD_IA_EXTENSION_VERSION, &b, 0, NULL));
    CHECK(b.extension_supported == a.extension_supported && b.extension_version == a.extension_version,
          "extension fields differ between DAT_IA_FIELD_ALL and their own mask bits");
    return fx_close(&f);
}

const struct tcase dat2_cases[] = {
    {"dat2.cr_reject_private_data", cr_reject_private_data, 0},
    {"dat2.dto_operation", dto_operation, 0},
    {"dat2.error_numbering", error_numbering, 0},
    {"dat2.ep_recv_query", ep_recv_query, 0},
    {"dat2.ep_set_watermark", ep_set_watermark, 0},
    {"dat2.ep_hard_watermark", ep_hard_watermark, 0},
    {"dat2.lmr_va_type", lmr_va_type, 0},
    {"dat2.extension_op_checks", extension_op_checks, 0},
    {"dat2.ia_query_fields", ia_query_dat2_fields, 0},
    {NULL, NULL, 0},
};

#else

const struct tcase dat2_cases[] = {
    {NULL, NULL, 0},
};

#endif
