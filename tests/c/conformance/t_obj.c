/* t_obj.c - PZ, LMR, RMR, EVD, CNO, EP (unconnected), PSP, RSP, SRQ, CR handle checks */
#include "dct.h"

#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ================= PZ ================= */

static tres pz_success(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_PZ_HANDLE pz1, pz2;
    OK(dat_pz_create(f.ia, &pz1));
    OK(dat_pz_create(f.ia, &pz2));
    CHECK(pz1 && pz2 && pz1 != pz2, "PZ handles %p %p", pz1, pz2);
    DAT_PZ_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_pz_query(pz1, DAT_PZ_FIELD_ALL, &p));
    CHECK(p.ia_handle == f.ia, "pz_query ia_handle %p, expected %p", p.ia_handle, f.ia);
    OK(dat_pz_free(pz1));
    OK(dat_pz_free(pz2));
    EXPECT_ERR(dat_pz_free(pz1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
    return fx_close(&f);
}

static tres pz_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_PZ_HANDLE stale, pz;
    OK(dat_pz_create(f.ia, &stale));
    OK(dat_pz_free(stale));
    DAT_IA_HANDLE stale_ia;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale_ia, &a));
    OK(dat_ia_close(stale_ia, DAT_CLOSE_ABRUPT_FLAG));
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H, dat_pz_create(H, &pz), DAT_INVALID_HANDLE_IA);
    EXPECT_ERR(dat_pz_create(f.ia, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_pz_free(H), DAT_INVALID_HANDLE_PZ);
    DAT_PZ_PARAM p;
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_pz_query(H, DAT_PZ_FIELD_ALL, &p), DAT_INVALID_HANDLE_PZ);
    EXPECT_ERR(dat_pz_query(f.pz, DAT_PZ_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_pz_query(f.pz, (DAT_PZ_PARAM_MASK)0x100, &p));
    /* in use by EP and LMR */
    EXPECT_ERR(dat_pz_free(f.pz), DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE, ANYSUB);
    OK(dat_ep_free(f.ep));
    EXPECT_ERR(dat_pz_free(f.pz), DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE, ANYSUB);
    OK(dat_lmr_free(f.lmr));
    OK(dat_pz_free(f.pz));
    return fx_close(&f);
}

/* ================= LMR ================= */

static tres lmr_success(void)
{
    struct fx f;
    TRY(fx_full(&f));
    CHECK(f.reg_len >= f.buflen, "registered_length %llu < %llu", (unsigned long long)f.reg_len,
          (unsigned long long)f.buflen);
    CHECK(f.reg_addr <= (DAT_VADDR)(uintptr_t)f.buf &&
              f.reg_addr + f.reg_len >= (DAT_VADDR)(uintptr_t)f.buf + f.buflen,
          "registered region does not cover the buffer");
    DAT_LMR_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_lmr_query(f.lmr, DAT_LMR_FIELD_ALL, &p));
    CHECK(p.ia_handle == f.ia, "lmr_query ia_handle");
    CHECK(p.pz_handle == f.pz, "lmr_query pz_handle");
    CHECK(p.mem_type == DAT_MEM_TYPE_VIRTUAL, "lmr_query mem_type %d", (int)p.mem_type);
    CHECK(p.region_desc.for_va == f.buf, "lmr_query region_desc.for_va %p, expected %p",
          p.region_desc.for_va, (void *)f.buf);
    CHECK(p.length == f.buflen, "lmr_query length %llu", (unsigned long long)p.length);
    CHECK(p.mem_priv == DAT_MEM_PRIV_ALL_FLAG, "lmr_query mem_priv 0x%x", (unsigned)p.mem_priv);
    CHECK(p.lmr_context == f.lmr_ctx, "lmr_query lmr_context 0x%x vs 0x%x", p.lmr_context, f.lmr_ctx);
    CHECK(p.rmr_context == f.rmr_ctx, "lmr_query rmr_context 0x%x vs 0x%x", p.rmr_context, f.rmr_ctx);
    CHECK(p.registered_size == f.reg_len && p.registered_address == f.reg_addr,
          "lmr_query registered size/address mismatch");
    /* partial mask */
    DAT_LMR_PARAM q;
    memset(&q, 0, sizeof q);
    OK(dat_lmr_query(f.lmr, DAT_LMR_FIELD_LENGTH, &q));
    CHECK(q.length == f.buflen, "lmr_query(LENGTH) length");
    /* second registration of the same memory, different privileges */
    DAT_LMR_HANDLE l2;
    DAT_LMR_CONTEXT c2;
    DAT_RMR_CONTEXT r2;
    OK(make_lmr(f.ia, f.pz, f.buf, 100, DAT_MEM_PRIV_LOCAL_READ_FLAG, &l2, &c2, &r2));
    CHECK(l2 != f.lmr, "same handle for two LMRs");
    OK(dat_lmr_free(l2));
    OK(dat_lmr_free(f.lmr));
    EXPECT_ERR(dat_lmr_query(f.lmr, DAT_LMR_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
    return fx_close(&f);
}

static tres lmr_create_from_lmr(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_REGION_DESCRIPTION rd;
    memset(&rd, 0, sizeof rd);
    rd.for_lmr_handle = f.lmr;
    DAT_LMR_HANDLE l2;
    DAT_LMR_CONTEXT lc;
    DAT_RMR_CONTEXT rc;
    DAT_VLEN rl;
    DAT_VADDR ra;
    DAT_RETURN r = lmr_create(f.ia, DAT_MEM_TYPE_LMR, rd, f.buflen, f.pz, DAT_MEM_PRIV_ALL_FLAG,
                                  &l2, &lc, &rc, &rl, &ra);
    if (is_not_impl(r) || DAT_GET_TYPE(r) == DAT_MODEL_NOT_SUPPORTED)
        return t_skip("DAT_MEM_TYPE_LMR not supported by the provider: %s", rs(r));
    CHECK(r == DAT_SUCCESS, "lmr_create(DAT_MEM_TYPE_LMR) -> %s", rs(r));
    OK(dat_lmr_free(l2));
    return fx_close(&f);
}

static tres lmr_create_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_REGION_DESCRIPTION rd;
    memset(&rd, 0, sizeof rd);
    rd.for_va = f.buf;
    DAT_LMR_HANDLE l;
    DAT_LMR_CONTEXT lc;
    DAT_RMR_CONTEXT rc;
    DAT_VLEN rl;
    DAT_VADDR ra;
    DAT_IA_HANDLE stale_ia;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale_ia, &a));
    OK(dat_ia_close(stale_ia, DAT_CLOSE_ABRUPT_FLAG));
    DAT_PZ_HANDLE stale_pz;
    OK(dat_pz_create(f.ia, &stale_pz));
    OK(dat_pz_free(stale_pz));
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H,
                       lmr_create(H, DAT_MEM_TYPE_VIRTUAL, rd, 4096, f.pz, DAT_MEM_PRIV_ALL_FLAG,
                                      &l, &lc, &rc, &rl, &ra),
                       DAT_INVALID_HANDLE_IA);
    EXPECT_BAD_HANDLES(f.ia, stale_pz, H,
                       lmr_create(f.ia, DAT_MEM_TYPE_VIRTUAL, rd, 4096, H, DAT_MEM_PRIV_ALL_FLAG,
                                      &l, &lc, &rc, &rl, &ra),
                       DAT_INVALID_HANDLE_PZ);
    EXPECT_ERR(lmr_create(f.ia, DAT_MEM_TYPE_VIRTUAL, rd, 4096, f.pz, DAT_MEM_PRIV_ALL_FLAG, NULL,
                              &lc, &rc, &rl, &ra),
               DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR2(lmr_create(f.ia, (DAT_MEM_TYPE)0x77, rd, 4096, f.pz, DAT_MEM_PRIV_ALL_FLAG, &l, &lc,
                               &rc, &rl, &ra),
                DAT_INVALID_PARAMETER, DAT_MODEL_NOT_SUPPORTED);
    EXPECT_ERR(lmr_create(f.ia, DAT_MEM_TYPE_VIRTUAL, rd, 4096, f.pz, (DAT_MEM_PRIV_FLAGS)0x4000, &l,
                              &lc, &rc, &rl, &ra),
               DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR2(lmr_create(f.ia, DAT_MEM_TYPE_VIRTUAL, rd, 0, f.pz, DAT_MEM_PRIV_ALL_FLAG, &l, &lc,
                               &rc, &rl, &ra),
                DAT_INVALID_PARAMETER, DAT_LENGTH_ERROR);
    /* DAT_MEM_TYPE_LMR with a handle that is not an LMR */
    DAT_REGION_DESCRIPTION bad;
    memset(&bad, 0, sizeof bad);
    bad.for_lmr_handle = f.ep;
    DAT_RETURN r = lmr_create(f.ia, DAT_MEM_TYPE_LMR, bad, 4096, f.pz, DAT_MEM_PRIV_ALL_FLAG, &l,
                                  &lc, &rc, &rl, &ra);
    CHECK((r & DAT_CLASS_ERROR) &&
              (DAT_GET_TYPE(r) == DAT_INVALID_HANDLE || DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER ||
               DAT_GET_TYPE(r) == DAT_MODEL_NOT_SUPPORTED || is_not_impl(r)),
          "lmr_create(DAT_MEM_TYPE_LMR, EP handle) -> %s", rs(r));
    return fx_close(&f);
}

/* Registration checks the range: unmapped or inaccessible (PROT_NONE) memory, or read-only
 * memory asked to be writable, is refused at dat_lmr_create with DAT_INVALID_PARAMETER|DAT_INVALID_ARG3 (verbs: the kernel
 * cannot pin it, EFAULT; shm: the process's mappings say so), never accepted and left to fault
 * in a later transfer. */
static tres lmr_create_unmapped(void)
{
    struct fx f;
    TRY(fx_full(&f));
    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    memset(m, 1, 4 * pg);
    CHECK(munmap(m + pg, pg) == 0, "munmap");
    CHECK(mprotect(m + 2 * pg, pg, PROT_READ) == 0, "mprotect");
    CHECK(mprotect(m + 3 * pg, pg, PROT_NONE) == 0, "mprotect");
    DAT_LMR_HANDLE l;
    DAT_LMR_CONTEXT lc;
    DAT_RMR_CONTEXT rc;
    const DAT_MEM_PRIV_FLAGS rw = DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG;
    /* a low address nothing maps */
    EXPECT_ERR(make_lmr(f.ia, f.pz, (void *)(uintptr_t)0x1000, 4096, rw, &l, &lc, &rc), DAT_INVALID_PARAMETER,
               DAT_INVALID_ARG3);
    /* the hole, and ranges running into it from either side */
    EXPECT_ERR(make_lmr(f.ia, f.pz, m + pg, pg, rw, &l, &lc, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    EXPECT_ERR(make_lmr(f.ia, f.pz, m, 2 * pg, rw, &l, &lc, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    EXPECT_ERR(make_lmr(f.ia, f.pz, m + pg / 2, 2 * pg, DAT_MEM_PRIV_LOCAL_READ_FLAG, &l, &lc, &rc),
               DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    /* read-only page: readable registrations work, writable ones do not */
    EXPECT_ERR(make_lmr(f.ia, f.pz, m + 2 * pg, pg, rw, &l, &lc, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    EXPECT_ERR(make_lmr(f.ia, f.pz, m + 2 * pg, pg, DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
                        &l, &lc, &rc),
               DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    OK(make_lmr(f.ia, f.pz, m + 2 * pg, pg, DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG, &l, &lc,
                &rc));
    OK(dat_lmr_free(l));
    /* a PROT_NONE page, and a range running from the read-only page into it */
    EXPECT_ERR(make_lmr(f.ia, f.pz, m + 3 * pg, pg, DAT_MEM_PRIV_LOCAL_READ_FLAG, &l, &lc, &rc), DAT_INVALID_PARAMETER,
               DAT_INVALID_ARG3);
    EXPECT_ERR(make_lmr(f.ia, f.pz, m + 2 * pg, 2 * pg, DAT_MEM_PRIV_LOCAL_READ_FLAG, &l, &lc, &rc),
               DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    /* the mapped page itself still registers */
    OK(make_lmr(f.ia, f.pz, m, pg, rw, &l, &lc, &rc));
    OK(dat_lmr_free(l));
    munmap(m, pg);
    munmap(m + 2 * pg, 2 * pg);
    return fx_close(&f);
}

static tres lmr_query_free_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_LMR_HANDLE stale;
    DAT_LMR_CONTEXT c;
    DAT_RMR_CONTEXT r;
    OK(make_lmr(f.ia, f.pz, f.buf, 64, DAT_MEM_PRIV_ALL_FLAG, &stale, &c, &r));
    OK(dat_lmr_free(stale));
    DAT_LMR_PARAM p;
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_lmr_query(H, DAT_LMR_FIELD_ALL, &p), DAT_INVALID_HANDLE_LMR);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_lmr_free(H), DAT_INVALID_HANDLE_LMR);
    EXPECT_ERR(dat_lmr_query(f.lmr, DAT_LMR_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_lmr_query(f.lmr, (DAT_LMR_PARAM_MASK)0x10000, &p));
    return fx_close(&f);
}

static tres lmr_sync(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_LMR_TRIPLET t[2];
    t[0] = trip(f.lmr_ctx, f.buf, 128);
    t[1] = trip(f.lmr_ctx, f.buf + 4096, 4096);
    OK(dat_lmr_sync_rdma_read(f.ia, t, 2));
    OK(dat_lmr_sync_rdma_write(f.ia, t, 2));
    DAT_IA_HANDLE stale;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale, &a));
    OK(dat_ia_close(stale, DAT_CLOSE_ABRUPT_FLAG));
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_lmr_sync_rdma_read(H, t, 2), DAT_INVALID_HANDLE_IA);
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_lmr_sync_rdma_write(H, t, 2), DAT_INVALID_HANDLE_IA);
    /* segment outside its LMR -> DAT_INVALID_PARAMETER (man page) */
    DAT_LMR_TRIPLET out = trip(f.lmr_ctx, f.buf + f.buflen - 16, 64);
    EXPECT_ERR(dat_lmr_sync_rdma_read(f.ia, &out, 1), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_lmr_sync_rdma_write(f.ia, &out, 1), DAT_INVALID_PARAMETER, ANYSUB);
    DAT_LMR_TRIPLET badctx = trip(f.lmr_ctx ^ 0x5a5a5a5a, f.buf, 16);
    EXPECT_ERR(dat_lmr_sync_rdma_write(f.ia, &badctx, 1), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_lmr_sync_rdma_read(f.ia, NULL, 1), DAT_INVALID_PARAMETER, ANYSUB);
    return fx_close(&f);
}

/* ================= RMR ================= */

static tres rmr_success(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_RMR_HANDLE rmr;
    OK(dat_rmr_create(f.pz, &rmr));
    DAT_RMR_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &p));
    CHECK(p.ia_handle == f.ia, "rmr_query ia_handle %p, expected %p", p.ia_handle, f.ia);
    CHECK(p.pz_handle == f.pz, "rmr_query pz_handle");
    OK(dat_rmr_query(rmr, DAT_RMR_FIELD_PZ_HANDLE, &p));
    /* PZ is in use by the RMR */
    OK(dat_ep_free(f.ep));
    OK(dat_lmr_free(f.lmr));
    EXPECT_ERR(dat_pz_free(f.pz), DAT_INVALID_STATE, ANYSUB);
    OK(dat_rmr_free(rmr));
    OK(dat_pz_free(f.pz));
    return fx_close(&f);
}

static tres rmr_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_RMR_HANDLE stale, rmr;
    OK(dat_rmr_create(f.pz, &stale));
    OK(dat_rmr_free(stale));
    DAT_PZ_HANDLE stale_pz;
    OK(dat_pz_create(f.ia, &stale_pz));
    OK(dat_pz_free(stale_pz));
    EXPECT_BAD_HANDLES(f.ia, stale_pz, H, dat_rmr_create(H, &rmr), DAT_INVALID_HANDLE_PZ);
    EXPECT_ERR(dat_rmr_create(f.pz, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    OK(dat_rmr_create(f.pz, &rmr));
    DAT_RMR_PARAM p;
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_rmr_query(H, DAT_RMR_FIELD_ALL, &p), DAT_INVALID_HANDLE_RMR);
    EXPECT_ERR(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_rmr_query(rmr, (DAT_RMR_PARAM_MASK)0x4000, &p));
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_rmr_free(H), DAT_INVALID_HANDLE_RMR);
    DAT_LMR_TRIPLET t = trip(f.lmr_ctx, f.buf, 256);
    DAT_RMR_COOKIE ck;
    ck.as_64 = 1;
    DAT_RMR_CONTEXT rc;
    EXPECT_BAD_HANDLES(f.lmr, stale, H,
                       rmr_bind(H, f.lmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.ep, ck,
                                    DAT_COMPLETION_DEFAULT_FLAG, &rc),
                       DAT_INVALID_HANDLE_RMR);
    /* bind on an unconnected EP: invalid state (or bad EP handle checks) */
    EXPECT_ERR(rmr_bind(rmr, f.lmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.ep, ck, DAT_COMPLETION_DEFAULT_FLAG,
                            &rc),
               DAT_INVALID_STATE, ANYSUB);
    EXPECT_ERR(rmr_bind(rmr, f.lmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.pz, ck, DAT_COMPLETION_DEFAULT_FLAG,
                            &rc),
               DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
    EXPECT_ERR(rmr_bind(rmr, f.lmr, NULL, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.ep, ck, DAT_COMPLETION_DEFAULT_FLAG,
                            &rc),
               DAT_INVALID_PARAMETER, ANYSUB);
    return fx_close(&f);
}

/* ================= EVD ================= */

static tres evd_create_query(void)
{
    struct fx f;
    TRY(fx_open(&f));
    static const DAT_EVD_FLAGS flags[] = {
        DAT_EVD_SOFTWARE_FLAG, DAT_EVD_CR_FLAG, DAT_EVD_DTO_FLAG, DAT_EVD_CONNECTION_FLAG,
        DAT_EVD_RMR_BIND_FLAG, DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
        DAT_EVD_CONNECTION_FLAG | DAT_EVD_CR_FLAG, DAT_EVD_SOFTWARE_FLAG | DAT_EVD_DTO_FLAG};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        DAT_EVD_HANDLE evd;
        DAT_RETURN r = make_evd(f.ia, flags[i], 10, &evd);
        CHECK(r == DAT_SUCCESS, "dat_evd_create(flags 0x%x) -> %s", (unsigned)flags[i], rs(r));
        DAT_EVD_PARAM p;
        memset(&p, 0, sizeof p);
        OK(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &p));
        CHECK(p.ia_handle == f.ia, "evd_query ia_handle");
        CHECK(p.evd_qlen >= 10, "evd_query evd_qlen %d < 10", p.evd_qlen);
        CHECK(p.evd_flags == flags[i], "evd_query flags 0x%x, expected 0x%x", (unsigned)p.evd_flags,
              (unsigned)flags[i]);
        CHECK(p.cno_handle == DAT_HANDLE_NULL, "evd_query cno_handle %p", p.cno_handle);
        CHECK((p.evd_state & DAT_EVD_STATE_ENABLED) != 0, "new EVD not ENABLED (state 0x%x)",
              (unsigned)p.evd_state);
        OK(dat_evd_free(evd));
    }
    /* the async EVD */
    DAT_EVD_PARAM p;
    OK(dat_evd_query(f.async_evd, DAT_EVD_FIELD_ALL, &p));
    CHECK(p.evd_flags & DAT_EVD_ASYNC_FLAG, "async EVD flags 0x%x lack DAT_EVD_ASYNC_FLAG",
          (unsigned)p.evd_flags);
    return fx_close(&f);
}

static tres evd_create_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EVD_HANDLE evd;
    DAT_IA_HANDLE stale;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale, &a));
    OK(dat_ia_close(stale, DAT_CLOSE_ABRUPT_FLAG));
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_evd_create(H, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd),
                       DAT_INVALID_HANDLE_IA);
    EXPECT_ERR(dat_evd_create(f.ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, NULL), DAT_INVALID_PARAMETER,
               ANYSUB);
    EXPECT_ERR(dat_evd_create(f.ia, 0, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd), DAT_INVALID_PARAMETER,
               ANYSUB);
    EXPECT_ERR(dat_evd_create(f.ia, -5, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd), DAT_INVALID_PARAMETER,
               ANYSUB);
    EXPECT_ERR(dat_evd_create(f.ia, 8, DAT_HANDLE_NULL, (DAT_EVD_FLAGS)0x8000, &evd),
               DAT_INVALID_PARAMETER, ANYSUB);
    DAT_IA_ATTR attr;
    OK(dat_ia_query(f.ia, NULL, DAT_IA_FIELD_IA_MAX_EVD_QLEN, &attr, 0, NULL));
    if (attr.max_evd_qlen > 0 && attr.max_evd_qlen < 0x7ffffff0)
        EXPECT_ERR2(dat_evd_create(f.ia, attr.max_evd_qlen + 1, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd),
                    DAT_INVALID_PARAMETER, DAT_INSUFFICIENT_RESOURCES);
    DAT_CNO_HANDLE stale_cno;
    OK(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &stale_cno));
    OK(dat_cno_free(stale_cno));
    /* bad CNO handles (NULL is allowed, so skip it) */
    int si = 0;
    DAT_HANDLE bads[] = {(DAT_HANDLE)(uintptr_t)0x1234, &si, f.pz, stale_cno};
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++)
        EXPECT_ERR(dat_evd_create(f.ia, 8, bads[i], DAT_EVD_DTO_FLAG, &evd), DAT_INVALID_HANDLE,
                   DAT_INVALID_HANDLE_CNO);
    return fx_close(&f);
}

static tres evd_bad_handles(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EVD_HANDLE stale;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 4, &stale));
    OK(dat_evd_free(stale));
    DAT_EVENT ev;
    DAT_COUNT n;
    DAT_EVD_PARAM p;
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_evd_free(H), SUB_EVD);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_evd_query(H, DAT_EVD_FIELD_ALL, &p), SUB_EVD);
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_evd_dequeue(H, &ev), SUB_EVD);
    EXPECT_BAD_HANDLES(f.ia, stale, H, dat_evd_wait(H, 1000, 1, &ev, &n), SUB_EVD);
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_evd_post_se(H, &ev), SUB_EVD);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_evd_enable(H), SUB_EVD);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_evd_disable(H), SUB_EVD);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_evd_set_unwaitable(H), SUB_EVD);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_evd_clear_unwaitable(H), SUB_EVD);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_evd_resize(H, 16), SUB_EVD);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_evd_modify_cno(H, DAT_HANDLE_NULL), SUB_EVD);
    return fx_close(&f);
}

static tres evd_post_se_dequeue(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 8, &evd));
    DAT_EVENT ev;
    EXPECT_ERR(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    int marks[3];
    for (int i = 0; i < 3; i++) {
        memset(&ev, 0, sizeof ev);
        ev.event_number = DAT_SOFTWARE_EVENT;
        ev.event_data.software_event_data.pointer = &marks[i];
        OK(dat_evd_post_se(evd, &ev));
    }
    for (int i = 0; i < 3; i++) {
        memset(&ev, 0, sizeof ev);
        OK(dat_evd_dequeue(evd, &ev));
        CHECK(ev.event_number == DAT_SOFTWARE_EVENT, "dequeued %s", evname(ev.event_number));
        CHECK(ev.evd_handle == evd, "event evd_handle %p, expected %p", ev.evd_handle, evd);
        CHECK(ev.event_data.software_event_data.pointer == &marks[i],
              "software event %d out of order / wrong pointer", i);
    }
    EXPECT_ERR(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    EXPECT_ERR(dat_evd_dequeue(evd, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_evd_post_se(evd, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_DTO_COMPLETION_EVENT;
    EXPECT_ERR(dat_evd_post_se(evd, &ev), DAT_INVALID_PARAMETER, ANYSUB);
    /* EVD without the software flag */
    DAT_EVD_HANDLE dto;
    OK(make_evd(f.ia, DAT_EVD_DTO_FLAG, 8, &dto));
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    EXPECT_ERR2(dat_evd_post_se(dto, &ev), DAT_INVALID_PARAMETER, DAT_INVALID_HANDLE);
    OK(dat_evd_free(dto));
    OK(dat_evd_free(evd));
    return fx_close(&f);
}

static tres evd_queue_full(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 4, &evd));
    DAT_EVD_PARAM p;
    OK(dat_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &p));
    CHECK(p.evd_qlen >= 4 && p.evd_qlen < 100000, "evd_qlen %d", p.evd_qlen);
    DAT_EVENT ev;
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    for (int i = 0; i < p.evd_qlen; i++) {
        DAT_RETURN r = dat_evd_post_se(evd, &ev);
        CHECK(r == DAT_SUCCESS, "post_se #%d of qlen %d -> %s", i + 1, p.evd_qlen, rs(r));
    }
    EXPECT_ERR(dat_evd_post_se(evd, &ev), DAT_QUEUE_FULL, ANYSUB);
    /* resize below the number of queued events fails */
    EXPECT_ERR2(dat_evd_resize(evd, 1), DAT_INVALID_STATE, DAT_INVALID_PARAMETER);
    OK(dat_evd_dequeue(evd, &ev));
    OK(dat_evd_post_se(evd, &ev));
    return fx_close(&f);
}

static tres evd_wait_timeout(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 8, &evd));
    DAT_EVENT ev;
    DAT_COUNT n = -1;
    double t0 = now_s();
    EXPECT_ERR(dat_evd_wait(evd, 200000, 1, &ev, &n), DAT_TIMEOUT_EXPIRED, ANYSUB);
    double dt = now_s() - t0;
    CHECK(dt >= 0.15 && dt < 5.0, "dat_evd_wait(200 ms) returned after %.3f s", dt);
    t0 = now_s();
    EXPECT_ERR(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_TIMEOUT_EXPIRED, ANYSUB);
    CHECK(now_s() - t0 < 1.0, "dat_evd_wait(0) blocked");
    return fx_close(&f);
}

static tres evd_wait_threshold(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 8, &evd));
    DAT_EVENT ev;
    DAT_COUNT n = -1;
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    OK(dat_evd_post_se(evd, &ev));
    OK(dat_evd_post_se(evd, &ev));
    /* threshold 3 not reached by 2 events -> timeout, events stay queued */
    EXPECT_ERR(dat_evd_wait(evd, 100000, 3, &ev, &n), DAT_TIMEOUT_EXPIRED, ANYSUB);
    OK(dat_evd_post_se(evd, &ev));
    OK(dat_evd_wait(evd, 1000000, 3, &ev, &n));
    CHECK(ev.event_number == DAT_SOFTWARE_EVENT, "got %s", evname(ev.event_number));
    CHECK(n == 2, "n_more_events %d after dequeuing 1 of 3", n);
    OK(dat_evd_wait(evd, 1000000, 1, &ev, &n));
    CHECK(n == 1, "n_more_events %d, expected 1", n);
    OK(dat_evd_dequeue(evd, &ev));
    /* bad thresholds / parameters */
    EXPECT_ERR(dat_evd_wait(evd, 1000, 0, &ev, &n), DAT_INVALID_PARAMETER, ANYSUB);
    DAT_EVD_PARAM p;
    OK(dat_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &p));
    EXPECT_ERR(dat_evd_wait(evd, 1000, p.evd_qlen + 1, &ev, &n), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_evd_wait(evd, 1000, 1, NULL, &n), DAT_INVALID_PARAMETER, ANYSUB);
    return fx_close(&f);
}

struct poster {
    DAT_EVD_HANDLE evd;
    unsigned delay_us;
    DAT_RETURN r;
};

static void *poster_thread(void *arg)
{
    struct poster *p = arg;
    usleep(p->delay_us);
    DAT_EVENT ev;
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    ev.event_data.software_event_data.pointer = p;
    p->r = dat_evd_post_se(p->evd, &ev);
    return NULL;
}

static tres evd_wait_wakeup(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 8, &evd));
    struct poster p = {evd, 150000, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, poster_thread, &p) == 0, "pthread_create");
    DAT_EVENT ev;
    DAT_COUNT n;
    DAT_RETURN r = dat_evd_wait(evd, DAT_TIMEOUT_INFINITE, 1, &ev, &n);
    pthread_join(th, NULL);
    CHECK(p.r == DAT_SUCCESS, "post_se from thread -> %s", rs(p.r));
    CHECK(r == DAT_SUCCESS, "dat_evd_wait(INFINITE) woken by post_se -> %s", rs(r));
    CHECK(ev.event_number == DAT_SOFTWARE_EVENT && ev.event_data.software_event_data.pointer == &p,
          "wrong event %s", evname(ev.event_number));
    return fx_close(&f);
}

static tres evd_unwaitable(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 8, &evd));
    OK(dat_evd_set_unwaitable(evd));
    DAT_EVD_PARAM p;
    OK(dat_evd_query(evd, DAT_EVD_FIELD_EVD_STATE, &p));
    vlog("unwaitable EVD state 0x%x", (unsigned)p.evd_state);
    DAT_EVENT ev;
    DAT_COUNT n;
    EXPECT_ERR(dat_evd_wait(evd, 1000, 1, &ev, &n), DAT_INVALID_STATE, ANYSUB);
    /* dequeue still works */
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    OK(dat_evd_post_se(evd, &ev));
    OK(dat_evd_dequeue(evd, &ev));
    OK(dat_evd_clear_unwaitable(evd));
    OK(dat_evd_post_se(evd, &ev));
    OK(dat_evd_wait(evd, 1000000, 1, &ev, &n));
    /* a waiter blocked in dat_evd_wait is released by set_unwaitable */
    return fx_close(&f);
}

struct unw {
    DAT_EVD_HANDLE evd;
    DAT_RETURN r;
};
static void *unw_thread(void *arg)
{
    struct unw *u = arg;
    usleep(150000);
    u->r = dat_evd_set_unwaitable(u->evd);
    return NULL;
}

static tres evd_unwaitable_releases_waiter(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 8, &evd));
    struct unw u = {evd, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, unw_thread, &u) == 0, "pthread_create");
    DAT_EVENT ev;
    DAT_COUNT n;
    DAT_RETURN r = dat_evd_wait(evd, 5000000, 1, &ev, &n);
    pthread_join(th, NULL);
    CHECK(u.r == DAT_SUCCESS, "set_unwaitable -> %s", rs(u.r));
    CHECK(match_err(r, DAT_INVALID_STATE, (const unsigned[]){ANYSUB, ENDSUB}),
          "waiter released by dat_evd_set_unwaitable returned %s, expected DAT_INVALID_STATE", rs(r));
    return fx_close(&f);
}

static tres evd_enable_disable(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 8, &evd));
    DAT_EVD_PARAM p;
    OK(dat_evd_disable(evd));
    OK(dat_evd_query(evd, DAT_EVD_FIELD_EVD_STATE, &p));
    CHECK((p.evd_state & DAT_EVD_STATE_DISABLED) && !(p.evd_state & DAT_EVD_STATE_ENABLED),
          "after disable, state 0x%x", (unsigned)p.evd_state);
    OK(dat_evd_disable(evd)); /* idempotent */
    OK(dat_evd_enable(evd));
    OK(dat_evd_query(evd, DAT_EVD_FIELD_EVD_STATE, &p));
    CHECK((p.evd_state & DAT_EVD_STATE_ENABLED) && !(p.evd_state & DAT_EVD_STATE_DISABLED),
          "after enable, state 0x%x", (unsigned)p.evd_state);
    OK(dat_evd_enable(evd));
    return fx_close(&f);
}

static tres evd_resize(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_EVD_HANDLE evd;
    OK(make_evd(f.ia, DAT_EVD_SOFTWARE_FLAG, 4, &evd));
    DAT_EVENT ev;
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    int m[3];
    for (int i = 0; i < 3; i++) {
        ev.event_data.software_event_data.pointer = &m[i];
        OK(dat_evd_post_se(evd, &ev));
    }
    OK(dat_evd_resize(evd, 64));
    DAT_EVD_PARAM p;
    OK(dat_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &p));
    CHECK(p.evd_qlen >= 64, "after resize(64) evd_qlen %d", p.evd_qlen);
    /* queued events survive, in order */
    for (int i = 0; i < 3; i++) {
        OK(dat_evd_dequeue(evd, &ev));
        CHECK(ev.event_data.software_event_data.pointer == &m[i], "event %d lost/reordered by resize", i);
    }
    OK(dat_evd_resize(evd, 8));
    EXPECT_ERR(dat_evd_resize(evd, 0), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_evd_resize(evd, -1), DAT_INVALID_PARAMETER, ANYSUB);
    return fx_close(&f);
}

static tres evd_free_in_use(void)
{
    struct fx f;
    TRY(fx_full(&f));
    EXPECT_ERR(dat_evd_free(f.dto_evd), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE, ANYSUB);
    EXPECT_ERR(dat_evd_free(f.conn_evd), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE, ANYSUB);
    DAT_PSP_HANDLE psp;
    OK(dat_psp_create(f.ia, fresh_qual(0), f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    EXPECT_ERR(dat_evd_free(f.cr_evd), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE, ANYSUB);
    OK(dat_psp_free(psp));
    OK(dat_evd_free(f.cr_evd));
    OK(dat_ep_free(f.ep));
    OK(dat_evd_free(f.dto_evd));
    OK(dat_evd_free(f.conn_evd));
    return fx_close(&f);
}

static tres evd_query_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EVD_PARAM p;
    EXPECT_ERR(dat_evd_query(f.dto_evd, DAT_EVD_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_evd_query(f.dto_evd, (DAT_EVD_PARAM_MASK)0x1000, &p));
    return fx_close(&f);
}

/* ================= CNO ================= */

static void agent_fn(DAT_PVOID inst, DAT_EVD_HANDLE evd)
{
    (void)inst;
    (void)evd;
}

static tres cno_success(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_CNO_HANDLE cno;
    static int inst;
    DAT_OS_WAIT_PROXY_AGENT ag = {&inst, agent_fn};
    OK(dat_cno_create(f.ia, ag, &cno));
    DAT_CNO_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &p));
    CHECK(p.ia_handle == f.ia, "cno_query ia_handle");
    CHECK(CNO_AGENT(p).instance_data == &inst && CNO_AGENT(p).proxy_agent_func == agent_fn,
          "cno_query agent mismatch");
    OK(dat_cno_modify_agent(cno, DAT_OS_WAIT_PROXY_AGENT_NULL));
    OK(dat_cno_query(cno, DCT_CNO_FIELD_AGENT, &p));
    CHECK(CNO_AGENT(p).instance_data == NULL && CNO_AGENT(p).proxy_agent_func == NULL,
          "agent not cleared by dat_cno_modify_agent");
    OK(dat_cno_free(cno));
    EXPECT_ERR(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
    return fx_close(&f);
}

static tres cno_wait(void)
{
    struct fx f;
    TRY(fx_open(&f));
    DAT_CNO_HANDLE cno;
    OK(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
    DAT_EVD_HANDLE evd, got = DAT_HANDLE_NULL;
    OK(dat_evd_create(f.ia, 8, cno, DAT_EVD_SOFTWARE_FLAG, &evd));
    DAT_EVD_PARAM p;
    OK(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &p));
    CHECK(p.cno_handle == cno, "evd_query cno_handle %p, expected %p", p.cno_handle, cno);
    double t0 = now_s();
    EXPECT_ERR(dat_cno_wait(cno, 100000, &got), DAT_TIMEOUT_EXPIRED, ANYSUB);
    CHECK(now_s() - t0 >= 0.07, "dat_cno_wait(100 ms) returned too early");
    DAT_EVENT ev;
    memset(&ev, 0, sizeof ev);
    ev.event_number = DAT_SOFTWARE_EVENT;
    OK(dat_evd_post_se(evd, &ev));
    OK(dat_cno_wait(cno, 2000000, &got));
    CHECK(got == evd, "dat_cno_wait returned EVD %p, expected %p", got, evd);
    OK(dat_evd_dequeue(evd, &ev));
    EXPECT_ERR(dat_cno_wait(cno, 1000, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    /* CNO in use by the EVD */
    EXPECT_ERR(dat_cno_free(cno), DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_IN_USE, ANYSUB);
    /* detach with dat_evd_modify_cno(NULL), then free works */
    OK(dat_evd_modify_cno(evd, DAT_HANDLE_NULL));
    OK(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &p));
    CHECK(p.cno_handle == DAT_HANDLE_NULL, "CNO not detached");
    OK(dat_evd_modify_cno(evd, cno));
    OK(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &p));
    CHECK(p.cno_handle == cno, "CNO not re-attached by dat_evd_modify_cno");
    /* attached again to the same CNO: still attached (in use), and still triggering it */
    OK(dat_evd_modify_cno(evd, cno));
    EXPECT_ERR(dat_cno_free(cno), DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_IN_USE, ANYSUB);
    OK(dat_evd_post_se(evd, &ev));
    OK(dat_cno_wait(cno, 2000000, &got));
    CHECK(got == evd, "dat_cno_wait returned EVD %p after a second attach, expected %p", got, evd);
    OK(dat_evd_dequeue(evd, &ev));
    OK(dat_evd_modify_cno(evd, DAT_HANDLE_NULL));
    OK(dat_cno_free(cno));
    /* modify_cno with bad CNO handles */
    int si;
    DAT_HANDLE bads[] = {(DAT_HANDLE)(uintptr_t)0x1234, &si, f.ia, cno};
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++)
        EXPECT_ERR(dat_evd_modify_cno(evd, bads[i]), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
    return fx_close(&f);
}

static tres cno_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_CNO_HANDLE stale, cno;
    OK(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &stale));
    OK(dat_cno_free(stale));
    DAT_IA_HANDLE stale_ia;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale_ia, &a));
    OK(dat_ia_close(stale_ia, DAT_CLOSE_ABRUPT_FLAG));
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H, dat_cno_create(H, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno),
                       DAT_INVALID_HANDLE_IA);
    EXPECT_ERR(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    OK(dat_cno_create(f.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
    DAT_CNO_PARAM p;
    DAT_EVD_HANDLE e;
    EXPECT_BAD_HANDLES(f.dto_evd, stale, H, dat_cno_free(H), DAT_INVALID_HANDLE_CNO);
    EXPECT_BAD_HANDLES(f.dto_evd, stale, H, dat_cno_query(H, DAT_CNO_FIELD_ALL, &p), DAT_INVALID_HANDLE_CNO);
    EXPECT_BAD_HANDLES(f.ia, stale, H, dat_cno_wait(H, 1000, &e), DAT_INVALID_HANDLE_CNO);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_cno_modify_agent(H, DAT_OS_WAIT_PROXY_AGENT_NULL),
                       DAT_INVALID_HANDLE_CNO);
    EXPECT_ERR(dat_cno_query(cno, DAT_CNO_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_cno_query(cno, (DAT_CNO_PARAM_MASK)0x100, &p));
    return fx_close(&f);
}

/* ================= EP (unconnected) ================= */

static tres ep_create_query(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EP_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_ep_query(f.ep, DAT_EP_FIELD_ALL, &p));
    CHECK(p.ia_handle == f.ia, "ep_query ia_handle");
    CHECK(p.ep_state == DAT_EP_STATE_UNCONNECTED, "new EP state %d", (int)p.ep_state);
    CHECK(p.pz_handle == f.pz, "ep_query pz_handle");
    CHECK(p.recv_evd_handle == f.dto_evd && p.request_evd_handle == f.dto_evd,
          "ep_query DTO EVDs");
    CHECK(p.connect_evd_handle == f.conn_evd, "ep_query connect EVD");
    CHECK(p.srq_handle == DAT_HANDLE_NULL, "ep_query srq_handle %p", p.srq_handle);
    CHECK(p.ep_attr.service_type == DAT_SERVICE_TYPE_RC, "service_type %d", (int)p.ep_attr.service_type);
    CHECK(p.ep_attr.max_recv_dtos > 0 && p.ep_attr.max_request_dtos > 0, "max dtos %d/%d",
          p.ep_attr.max_recv_dtos, p.ep_attr.max_request_dtos);
    CHECK(p.ep_attr.max_recv_iov > 0 && p.ep_attr.max_request_iov > 0, "max iov %d/%d",
          p.ep_attr.max_recv_iov, p.ep_attr.max_request_iov);
    CHECK(p.ep_attr.max_message_size > 0, "max_message_size 0");
    /* create with explicit attributes */
    DAT_EP_ATTR attr = p.ep_attr;
    attr.max_recv_dtos = 4;
    attr.max_request_dtos = 4;
    attr.max_recv_iov = 2;
    attr.max_request_iov = 2;
    attr.ep_transport_specific_count = 0;
    attr.ep_transport_specific = NULL;
    attr.ep_provider_specific_count = 0;
    attr.ep_provider_specific = NULL;
    DAT_EP_HANDLE ep2;
    OK(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, &attr, &ep2));
    DAT_EP_PARAM p2;
    OK(dat_ep_query(ep2, DAT_EP_FIELD_EP_ATTR_ALL, &p2));
    CHECK(p2.ep_attr.max_recv_dtos >= 4 && p2.ep_attr.max_recv_iov >= 2, "explicit attrs not honoured");
    /* NULL EVDs are allowed */
    DAT_EP_HANDLE ep3;
    OK(dat_ep_create(f.ia, f.pz, DAT_HANDLE_NULL, DAT_HANDLE_NULL, DAT_HANDLE_NULL, NULL, &ep3));
    OK(dat_ep_free(ep3));
    OK(dat_ep_free(ep2));
    DAT_EP_STATE st;
    DAT_BOOLEAN ri = DAT_FALSE, qi = DAT_FALSE;
    OK(dat_ep_get_status(f.ep, &st, &ri, &qi));
    CHECK(st == DAT_EP_STATE_UNCONNECTED, "get_status state %d", (int)st);
    CHECK(ri == DAT_TRUE && qi == DAT_TRUE, "idle flags %d/%d on a fresh EP", (int)ri, (int)qi);
    return fx_close(&f);
}

static tres ep_create_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EP_HANDLE ep;
    DAT_IA_HANDLE stale_ia;
    DAT_EVD_HANDLE a, stale_evd;
    OK(open_ia(&stale_ia, &a));
    OK(dat_ia_close(stale_ia, DAT_CLOSE_ABRUPT_FLAG));
    OK(make_evd(f.ia, DAT_EVD_DTO_FLAG, 4, &stale_evd));
    OK(dat_evd_free(stale_evd));
    DAT_PZ_HANDLE stale_pz;
    OK(dat_pz_create(f.ia, &stale_pz));
    OK(dat_pz_free(stale_pz));
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H,
                       dat_ep_create(H, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, NULL, &ep),
                       DAT_INVALID_HANDLE_IA);
    /* NULL PZ may be allowed; test garbage only for PZ and EVDs (NULL EVD is legal) */
    int si;
    DAT_HANDLE bad_pz[] = {(DAT_HANDLE)(uintptr_t)0x1234, &si, f.dto_evd, stale_pz};
    for (size_t i = 0; i < 4; i++)
        EXPECT_ERR(dat_ep_create(f.ia, bad_pz[i], f.dto_evd, f.dto_evd, f.conn_evd, NULL, &ep),
                   DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
    DAT_HANDLE bad_evd[] = {(DAT_HANDLE)(uintptr_t)0x1234, &si, f.pz, stale_evd};
    for (size_t i = 0; i < 4; i++) {
        EXPECT_ERR(dat_ep_create(f.ia, f.pz, bad_evd[i], f.dto_evd, f.conn_evd, NULL, &ep),
                   DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_RECV, DAT_INVALID_HANDLE1,
                   DAT_INVALID_HANDLE2);
        EXPECT_ERR(dat_ep_create(f.ia, f.pz, f.dto_evd, bad_evd[i], f.conn_evd, NULL, &ep),
                   DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_REQUEST, DAT_INVALID_HANDLE1,
                   DAT_INVALID_HANDLE2);
        EXPECT_ERR(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, bad_evd[i], NULL, &ep),
                   DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CONN, DAT_INVALID_HANDLE1,
                   DAT_INVALID_HANDLE2);
    }
    EXPECT_ERR(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, NULL, NULL),
               DAT_INVALID_PARAMETER, ANYSUB);
    DAT_EP_PARAM p;
    OK(dat_ep_query(f.ep, DAT_EP_FIELD_EP_ATTR_ALL, &p));
    DAT_EP_ATTR attr = p.ep_attr;
    attr.service_type = (DAT_SERVICE_TYPE)0x55;
    EXPECT_ERR2(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, &attr, &ep),
                DAT_INVALID_PARAMETER, DAT_MODEL_NOT_SUPPORTED);
    attr = p.ep_attr;
    attr.max_recv_dtos = -3;
    EXPECT_ERR2(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, &attr, &ep),
                DAT_INVALID_PARAMETER, DAT_INSUFFICIENT_RESOURCES);
    DAT_IA_ATTR ia_attr;
    OK(dat_ia_query(f.ia, NULL, DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_DTO, &ia_attr, 0, NULL));
    attr = p.ep_attr;
    attr.max_recv_iov = ia_attr.max_iov_segments_per_dto + 1;
    EXPECT_ERR2(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, &attr, &ep),
                DAT_INVALID_PARAMETER, DAT_INSUFFICIENT_RESOURCES);
    return fx_close(&f);
}

static tres ep_bad_handles(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EP_HANDLE stale;
    OK(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, NULL, &stale));
    OK(dat_ep_free(stale));
    DAT_EP_PARAM p;
    DAT_EP_STATE st;
    DAT_BOOLEAN b1, b2;
    DAT_COUNT n1, n2;
    DAT_LMR_TRIPLET t = trip(f.lmr_ctx, f.buf, 64);
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    DAT_DTO_COOKIE ck;
    ck.as_64 = 1;
    struct sockaddr_in sin;
    set_loopback_addr(&sin);
    EXPECT_BAD_HANDLES(f.dto_evd, stale, H, dat_ep_free(H), DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_ep_query(H, DAT_EP_FIELD_ALL, &p), DAT_INVALID_HANDLE_EP);
    OK(dat_ep_query(f.ep, DAT_EP_FIELD_ALL, &p));
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_ep_modify(H, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &p),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_ep_get_status(H, &st, &b1, &b2), DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_ep_reset(H), DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.ia, stale, H,
                       dat_ep_connect(H, (DAT_IA_ADDRESS_PTR)&sin, 1234, 1000000, 0, NULL,
                                      DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.dto_evd, stale, H, dat_ep_disconnect(H, DAT_CLOSE_ABRUPT_FLAG),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.dto_evd, stale, H, dat_ep_dup_connect(H, f.ep, 1000000, 0, NULL,
                                                               DAT_QOS_BEST_EFFORT),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_ep_post_send(H, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.lmr, stale, H, dat_ep_post_recv(H, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.lmr, stale, H,
                       dat_ep_post_rdma_read(H, 1, &t, ck, &rt, DAT_COMPLETION_DEFAULT_FLAG),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.lmr, stale, H,
                       dat_ep_post_rdma_write(H, 1, &t, ck, &rt, DAT_COMPLETION_DEFAULT_FLAG),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_ep_recv_query(H, &n1, &n2), DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.pz, stale, H, dat_ep_set_watermark(H, 4, 8), DAT_INVALID_HANDLE_EP);
    return fx_close(&f);
}

static tres ep_query_modify(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_EP_PARAM p;
    EXPECT_ERR(dat_ep_query(f.ep, DAT_EP_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_ep_query(f.ep, (DAT_EP_PARAM_MASK)1 << 40, &p));
    OK(dat_ep_query(f.ep, DAT_EP_FIELD_ALL, &p));
    DAT_RETURN mr = dat_ep_modify(f.ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &p);
    if (is_not_impl(mr))
        return t_skip("not implemented: dat_ep_modify (query error checks passed)");
    /* modify the recv EVD and max_recv_dtos of an unconnected EP */
    DAT_EVD_HANDLE e2;
    OK(make_evd(f.ia, DAT_EVD_DTO_FLAG, 16, &e2));
    memset(&p, 0, sizeof p);
    p.recv_evd_handle = e2;
    DAT_RETURN er = dat_ep_modify(f.ep, DAT_EP_FIELD_RECV_EVD_HANDLE, &p);
    DAT_EP_PARAM q;
    if (is_not_impl(er)) {
        vlog("note: dat_ep_modify(RECV_EVD_HANDLE) not implemented");
    } else {
        CHECK(er == DAT_SUCCESS, "dat_ep_modify(RECV_EVD_HANDLE) -> %s", rs(er));
        OK(dat_ep_query(f.ep, DAT_EP_FIELD_ALL, &q));
        CHECK(q.recv_evd_handle == e2, "dat_ep_modify(RECV_EVD) not applied");
    }
    OK(dat_ep_query(f.ep, DAT_EP_FIELD_ALL, &q));
    q.ep_attr.max_recv_dtos = 3;
    OK(dat_ep_modify(f.ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &q));
    OK(dat_ep_query(f.ep, DAT_EP_FIELD_EP_ATTR_ALL, &q));
    CHECK(q.ep_attr.max_recv_dtos >= 3, "max_recv_dtos %d after modify(3)", q.ep_attr.max_recv_dtos);
    EXPECT_ERR(dat_ep_modify(f.ep, DAT_EP_FIELD_RECV_EVD_HANDLE, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    /* non-modifiable fields */
    OK(dat_ep_query(f.ep, DAT_EP_FIELD_ALL, &q));
    EXPECT_ERR(dat_ep_modify(f.ep, DAT_EP_FIELD_IA_HANDLE, &q), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_ep_modify(f.ep, DAT_EP_FIELD_EP_STATE, &q), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_ep_modify(f.ep, (DAT_EP_PARAM_MASK)1 << 40, &q), DAT_INVALID_PARAMETER, ANYSUB);
    /* modify with a bad EVD handle */
    q.recv_evd_handle = (DAT_EVD_HANDLE)(uintptr_t)0x1234;
    if (!is_not_impl(er))
        EXPECT_ERR2(dat_ep_modify(f.ep, DAT_EP_FIELD_RECV_EVD_HANDLE, &q), DAT_INVALID_HANDLE,
                DAT_INVALID_PARAMETER);
    return fx_close(&f);
}

static tres ep_unconnected_ops(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_LMR_TRIPLET t = trip(f.lmr_ctx, f.buf, 64);
    DAT_DTO_COOKIE ck;
    ck.as_64 = 7;
    DAT_RMR_TRIPLET rt;
    memset(&rt, 0, sizeof rt);
    rt.rmr_context = f.rmr_ctx;
    rt.RMR_ADDR = (DAT_VADDR)(uintptr_t)f.buf;
    rt.segment_length = 64;
    /* man pages: send / rdma valid only in CONNECTED or DISCONNECTED */
    EXPECT_ERR(dat_ep_post_send(f.ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE, ANYSUB);
    EXPECT_ERR(dat_ep_post_rdma_write(f.ep, 1, &t, ck, &rt, DAT_COMPLETION_DEFAULT_FLAG),
               DAT_INVALID_STATE, ANYSUB);
    EXPECT_ERR(dat_ep_post_rdma_read(f.ep, 1, &t, ck, &rt, DAT_COMPLETION_DEFAULT_FLAG),
               DAT_INVALID_STATE, ANYSUB);
    /* receives may be pre-posted before connecting */
    OK(dat_ep_post_recv(f.ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
    DAT_EP_STATE st;
    DAT_BOOLEAN ri, qi;
    OK(dat_ep_get_status(f.ep, &st, &ri, &qi));
    CHECK(ri == DAT_FALSE, "recv_idle TRUE with a posted receive");
    /* a receive posted to the EP's own queue is allocated to it until it completes */
    DAT_COUNT nb = -1, span = -1;
    OK(dat_ep_recv_query(f.ep, &nb, &span));
    CHECK(nb == 1 && span == 1, "dat_ep_recv_query with 1 receive posted: nbufs %d span %d", nb, span);
    /* recv errors that need no connection */
    EXPECT_ERR(dat_ep_post_recv(f.ep, -1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER,
               ANYSUB);
    EXPECT_ERR(dat_ep_post_recv(f.ep, 1, NULL, ck, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER,
               ANYSUB);
    EXPECT_ERR(dat_ep_post_recv(f.ep, 1, &t, ck, (DAT_COMPLETION_FLAGS)0x4000), DAT_INVALID_PARAMETER,
               ANYSUB);
    DAT_EP_PARAM p;
    OK(dat_ep_query(f.ep, DAT_EP_FIELD_EP_ATTR_ALL, &p));
    int nseg = p.ep_attr.max_recv_iov + 1;
    DAT_LMR_TRIPLET *many = calloc((size_t)nseg, sizeof *many);
    for (int i = 0; i < nseg; i++)
        many[i] = trip(f.lmr_ctx, f.buf + i * 8, 8);
    EXPECT_ERR2(dat_ep_post_recv(f.ep, nseg, many, ck, DAT_COMPLETION_DEFAULT_FLAG),
                DAT_INVALID_PARAMETER, DAT_LENGTH_ERROR);
    free(many);
    /* connect-parameter errors */
    struct sockaddr_in sin;
    set_loopback_addr(&sin);
    EXPECT_ERR2(dat_ep_connect(f.ep, NULL, 1234, 1000000, 0, NULL, DAT_QOS_BEST_EFFORT,
                               DAT_CONNECT_DEFAULT_FLAG),
                DAT_INVALID_PARAMETER, DAT_INVALID_ADDRESS);
    DAT_PROVIDER_ATTR pa;
    OK(dat_ia_query(f.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE, &pa));
    char *big = calloc(1, (size_t)pa.max_private_data_size + 16);
    EXPECT_ERR(dat_ep_connect(f.ep, (DAT_IA_ADDRESS_PTR)&sin, 1234, 1000000, pa.max_private_data_size + 1,
                              big, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
               DAT_INVALID_PARAMETER, ANYSUB);
    free(big);
    EXPECT_ERR(dat_ep_connect(f.ep, (DAT_IA_ADDRESS_PTR)&sin, 1234, 1000000, -1, NULL, DAT_QOS_BEST_EFFORT,
                              DAT_CONNECT_DEFAULT_FLAG),
               DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_ep_connect(f.ep, (DAT_IA_ADDRESS_PTR)&sin, 1234, 1000000, 16, NULL, DAT_QOS_BEST_EFFORT,
                              DAT_CONNECT_DEFAULT_FLAG),
               DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR2(dat_ep_connect(f.ep, (DAT_IA_ADDRESS_PTR)&sin, 1234, 1000000, 0, NULL, DAT_QOS_BEST_EFFORT,
                               (DAT_CONNECT_FLAGS)0x40),
                DAT_INVALID_PARAMETER, DAT_MODEL_NOT_SUPPORTED);
    /* the failed connects left the EP unconnected */
    OK(dat_ep_get_status(f.ep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_UNCONNECTED, "state %d after rejected connect calls", (int)st);
    EXPECT_ERR(dat_ep_disconnect(f.ep, (DAT_CLOSE_FLAGS)0x77), DAT_INVALID_PARAMETER, ANYSUB);
    /* dup_connect needs a connected dup EP */
    DAT_RETURN r = dat_ep_dup_connect(f.ep, f.ep, 1000000, 0, NULL, DAT_QOS_BEST_EFFORT);
    if (!is_not_impl(r))
        CHECK((r & DAT_CLASS_ERROR) &&
                  (DAT_GET_TYPE(r) == DAT_INVALID_STATE || DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER),
              "dat_ep_dup_connect(ep, unconnected dup) -> %s", rs(r));
    /* free an EP with a posted receive: fine */
    OK(dat_ep_free(f.ep));
    f.ep = DAT_HANDLE_NULL;
    return fx_close(&f);
}

static tres ep_reset_watermark(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_RETURN r = dat_ep_reset(f.ep);
    CHECK(r == DAT_SUCCESS || match_err(r, DAT_INVALID_STATE, (const unsigned[]){ANYSUB, ENDSUB}),
          "dat_ep_reset(unconnected) -> %s", rs(r));
    DAT_EP_STATE st;
    OK(dat_ep_get_status(f.ep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_UNCONNECTED, "state %d after reset", (int)st);
    /* a reset EP takes a soft high watermark */
    OK(dat_ep_set_watermark(f.ep, 2, DAT_WATERMARK_INFINITE));
    EXPECT_ERR(dat_evd_dequeue(f.async_evd, &(DAT_EVENT){0}), DAT_QUEUE_EMPTY, ANYSUB);
    return fx_close(&f);
}

/* dat_ep_recv_query's counts and dat_ep_set_watermark's soft high watermark on an EP's own
 * receive queue: the event comes once, when a post takes the count above the watermark (or at
 * once when it is above already), and not again until the watermark is set again. */
static tres ep_recv_watermark(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_COUNT nb = -1, span = -1;
    OK(dat_ep_recv_query(f.ep, &nb, &span));
    CHECK(nb == 0 && span == 0, "dat_ep_recv_query of a fresh EP: nbufs %d span %d", nb, span);
    /* either output may be NULL */
    OK(dat_ep_recv_query(f.ep, NULL, NULL));
    OK(dat_ep_recv_query(f.ep, &nb, NULL));
    OK(dat_ep_recv_query(f.ep, NULL, &span));
    EXPECT_ERR(dat_ep_set_watermark(f.ep, -2, DAT_WATERMARK_INFINITE), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
    EXPECT_ERR(dat_ep_set_watermark(f.ep, 2, -2), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
    OK(dat_ep_set_watermark(f.ep, 2, 4)); /* a hard one too (it needs a connection to act) */
    OK(dat_ep_set_watermark(f.ep, 2, DAT_WATERMARK_INFINITE));
    DAT_EVENT ev;
    for (int i = 0; i < 4; i++) {
        DAT_LMR_TRIPLET t = trip(f.lmr_ctx, f.buf + i * 256, 256);
        OK(dat_ep_post_recv(f.ep, 1, &t, cookie((DAT_UINT64)i), DAT_COMPLETION_DEFAULT_FLAG));
        if (i == 2) /* the third receive takes the count above 2 */
            TRY(expect_watermark_event(f.async_evd, 0, f.ep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT));
        else
            EXPECT_ERR(dat_evd_dequeue(f.async_evd, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    }
    OK(dat_ep_recv_query(f.ep, &nb, &span));
    CHECK(nb == 4 && span == 4, "dat_ep_recv_query with 4 receives posted: nbufs %d span %d", nb, span);
    /* set again below the count: the event comes at once; INFINITE disarms */
    OK(dat_ep_set_watermark(f.ep, 3, DAT_WATERMARK_INFINITE));
    TRY(expect_watermark_event(f.async_evd, 0, f.ep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT));
    OK(dat_ep_set_watermark(f.ep, 4, DAT_WATERMARK_INFINITE));
    OK(dat_ep_set_watermark(f.ep, DAT_WATERMARK_INFINITE, DAT_WATERMARK_INFINITE));
    DAT_LMR_TRIPLET t = trip(f.lmr_ctx, f.buf + 4 * 256, 256);
    OK(dat_ep_post_recv(f.ep, 1, &t, cookie(4), DAT_COMPLETION_DEFAULT_FLAG));
    EXPECT_ERR(dat_evd_dequeue(f.async_evd, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    return fx_close(&f);
}

/* ================= PSP / RSP ================= */

static tres psp_success(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_PSP_HANDLE psp;
    DAT_CONN_QUAL q = fresh_qual(0);
    OK(dat_psp_create(f.ia, q, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    DAT_PSP_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_psp_query(psp, DAT_PSP_FIELD_ALL, &p));
    CHECK(p.ia_handle == f.ia && p.conn_qual == q && p.evd_handle == f.cr_evd &&
              p.psp_flags == DAT_PSP_CONSUMER_FLAG,
          "psp_query mismatch (ia %p qual %llu evd %p flags %d)", p.ia_handle,
          (unsigned long long)p.conn_qual, p.evd_handle, (int)p.psp_flags);
    DAT_PSP_HANDLE dup;
    EXPECT_ERR(dat_psp_create(f.ia, q, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE, ANYSUB);
    /* also from a second IA */
    DAT_IA_HANDLE ia2;
    DAT_EVD_HANDLE a2, cr2;
    OK(open_ia(&ia2, &a2));
    OK(make_evd(ia2, DAT_EVD_CR_FLAG, 4, &cr2));
    EXPECT_ERR(dat_psp_create(ia2, q, cr2, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE, ANYSUB);
    OK(dat_psp_free(psp));
    OK(dat_psp_create(ia2, q, cr2, DAT_PSP_CONSUMER_FLAG, &dup));
    OK(dat_psp_free(dup));
    OK(dat_ia_close(ia2, DAT_CLOSE_ABRUPT_FLAG));
    /* create_any */
    DAT_CONN_QUAL any = 0;
    OK(dat_psp_create_any(f.ia, &any, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    OK(dat_psp_query(psp, DAT_PSP_FIELD_CONN_QUAL, &p));
    CHECK(p.conn_qual == any, "create_any qual %llu, query says %llu", (unsigned long long)any,
          (unsigned long long)p.conn_qual);
    EXPECT_ERR(dat_psp_create(f.ia, any, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE, ANYSUB);
    DAT_CONN_QUAL any2 = 0;
    DAT_PSP_HANDLE psp2;
    OK(dat_psp_create_any(f.ia, &any2, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp2));
    CHECK(any2 != any, "create_any returned the same qualifier twice");
    OK(dat_psp_free(psp2));
    OK(dat_psp_free(psp));
    /* provider-created EPs */
    DAT_RETURN r = dat_psp_create(f.ia, fresh_qual(1), f.cr_evd, DAT_PSP_PROVIDER_FLAG, &psp);
    if (r == DAT_SUCCESS)
        OK(dat_psp_free(psp));
    else
        CHECK(is_not_impl(r) || DAT_GET_TYPE(r) == DAT_MODEL_NOT_SUPPORTED,
              "dat_psp_create(DAT_PSP_PROVIDER_FLAG) -> %s", rs(r));
    return fx_close(&f);
}

static tres psp_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_PSP_HANDLE stale, psp;
    OK(dat_psp_create(f.ia, fresh_qual(0), f.cr_evd, DAT_PSP_CONSUMER_FLAG, &stale));
    OK(dat_psp_free(stale));
    DAT_IA_HANDLE stale_ia;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale_ia, &a));
    OK(dat_ia_close(stale_ia, DAT_CLOSE_ABRUPT_FLAG));
    DAT_CONN_QUAL q = fresh_qual(1), cq;
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H, dat_psp_create(H, q, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp),
                       DAT_INVALID_HANDLE_IA);
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H, dat_psp_create_any(H, &cq, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp),
                       DAT_INVALID_HANDLE_IA);
    EXPECT_BAD_HANDLES(f.ep, DAT_HANDLE_NULL, H, dat_psp_create(f.ia, q, H, DAT_PSP_CONSUMER_FLAG, &psp),
                       DAT_INVALID_HANDLE_EVD_CR, DAT_INVALID_HANDLE1, DAT_INVALID_HANDLE3);
    /* an EVD without DAT_EVD_CR_FLAG */
    EXPECT_ERR2(dat_psp_create(f.ia, q, f.dto_evd, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE,
                DAT_INVALID_PARAMETER);
    EXPECT_ERR(dat_psp_create(f.ia, q, f.cr_evd, (DAT_PSP_FLAGS)0x7, &psp), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_psp_create(f.ia, q, f.cr_evd, DAT_PSP_CONSUMER_FLAG, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_psp_create_any(f.ia, NULL, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_PARAMETER,
               ANYSUB);
    EXPECT_ERR(dat_psp_create_any(f.ia, &cq, f.cr_evd, DAT_PSP_CONSUMER_FLAG, NULL), DAT_INVALID_PARAMETER,
               ANYSUB);
    OK(dat_psp_create(f.ia, q, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp));
    DAT_PSP_PARAM p;
    EXPECT_BAD_HANDLES(f.cr_evd, stale, H, dat_psp_query(H, DAT_PSP_FIELD_ALL, &p), DAT_INVALID_HANDLE_PSP);
    EXPECT_BAD_HANDLES(f.cr_evd, stale, H, dat_psp_free(H), DAT_INVALID_HANDLE_PSP);
    EXPECT_ERR(dat_psp_query(psp, DAT_PSP_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_psp_query(psp, (DAT_PSP_PARAM_MASK)0x100, &p));
    return fx_close(&f);
}

static tres rsp_success(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_RSP_HANDLE rsp;
    DAT_CONN_QUAL q = fresh_qual(0);
    OK(dat_rsp_create(f.ia, q, f.ep, f.cr_evd, &rsp));
    DAT_RSP_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &p));
    CHECK(p.ia_handle == f.ia && p.conn_qual == q && p.evd_handle == f.cr_evd && p.ep_handle == f.ep,
          "rsp_query mismatch");
    DAT_EP_STATE st;
    OK(dat_ep_get_status(f.ep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_RESERVED, "EP state %d after dat_rsp_create, expected RESERVED", (int)st);
    DAT_RSP_HANDLE dup;
    DAT_EP_HANDLE ep2;
    OK(dat_ep_create(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, NULL, &ep2));
    EXPECT_ERR(dat_rsp_create(f.ia, q, ep2, f.cr_evd, &dup), DAT_CONN_QUAL_IN_USE, ANYSUB);
    DAT_PSP_HANDLE psp;
    EXPECT_ERR(dat_psp_create(f.ia, q, f.cr_evd, DAT_PSP_CONSUMER_FLAG, &psp), DAT_CONN_QUAL_IN_USE, ANYSUB);
    /* EP already reserved by an RSP */
    EXPECT_ERR(dat_rsp_create(f.ia, fresh_qual(1), f.ep, f.cr_evd, &dup), DAT_INVALID_STATE, ANYSUB);
    OK(dat_rsp_free(rsp));
    OK(dat_ep_get_status(f.ep, &st, NULL, NULL));
    CHECK(st == DAT_EP_STATE_UNCONNECTED, "EP state %d after dat_rsp_free, expected UNCONNECTED", (int)st);
    return fx_close(&f);
}

static tres rsp_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_RSP_HANDLE stale, rsp;
    DAT_RETURN r = dat_rsp_create(f.ia, fresh_qual(0), f.ep, f.cr_evd, &stale);
    if (is_not_impl(r))
        return t_skip("dat_rsp_create not implemented");
    CHECK(r == DAT_SUCCESS, "dat_rsp_create -> %s", rs(r));
    OK(dat_rsp_free(stale));
    DAT_IA_HANDLE stale_ia;
    DAT_EVD_HANDLE a;
    OK(open_ia(&stale_ia, &a));
    OK(dat_ia_close(stale_ia, DAT_CLOSE_ABRUPT_FLAG));
    DAT_CONN_QUAL q = fresh_qual(1);
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H, dat_rsp_create(H, q, f.ep, f.cr_evd, &rsp), DAT_INVALID_HANDLE_IA);
    EXPECT_BAD_HANDLES(f.pz, DAT_HANDLE_NULL, H, dat_rsp_create(f.ia, q, H, f.cr_evd, &rsp),
                       DAT_INVALID_HANDLE_EP);
    EXPECT_BAD_HANDLES(f.ep, DAT_HANDLE_NULL, H, dat_rsp_create(f.ia, q, f.ep, H, &rsp),
                       DAT_INVALID_HANDLE_EVD_CR, DAT_INVALID_HANDLE1, DAT_INVALID_HANDLE4);
    EXPECT_ERR(dat_rsp_create(f.ia, q, f.ep, f.cr_evd, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    OK(dat_rsp_create(f.ia, q, f.ep, f.cr_evd, &rsp));
    DAT_RSP_PARAM p;
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_rsp_query(H, DAT_RSP_FIELD_ALL, &p), DAT_INVALID_HANDLE_RSP);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_rsp_free(H), DAT_INVALID_HANDLE_RSP);
    EXPECT_ERR(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_rsp_query(rsp, (DAT_RSP_PARAM_MASK)0x100, &p));
    return fx_close(&f);
}

/* ================= SRQ ================= */

static tres srq_success(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_SRQ_ATTR a = {.max_recv_dtos = 16, .max_recv_iov = 2, .low_watermark = DAT_SRQ_LW_DEFAULT};
    DAT_SRQ_HANDLE srq;
    OK(dat_srq_create(f.ia, f.pz, &a, &srq));
    DAT_SRQ_PARAM p;
    memset(&p, 0, sizeof p);
    OK(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p));
    CHECK(p.ia_handle == f.ia && p.pz_handle == f.pz, "srq_query ia/pz mismatch");
    CHECK(p.max_recv_dtos >= 16 && p.max_recv_iov >= 2, "srq_query max_recv_dtos %d iov %d",
          p.max_recv_dtos, p.max_recv_iov);
    CHECK(p.srq_state == DAT_SRQ_STATE_OPERATIONAL, "srq_state %d", (int)p.srq_state);
    DAT_LMR_TRIPLET t[2] = {trip(f.lmr_ctx, f.buf, 100), trip(f.lmr_ctx, f.buf + 200, 100)};
    DAT_DTO_COOKIE ck;
    for (int i = 0; i < 4; i++) {
        ck.as_64 = (DAT_UINT64)i;
        OK(dat_srq_post_recv(srq, 2, t, ck));
    }
    OK(dat_srq_resize(srq, 32));
    OK(dat_srq_query(srq, DAT_SRQ_FIELD_MAX_RECV_DTO, &p));
    CHECK(p.max_recv_dtos >= 32, "after srq_resize(32) max_recv_dtos %d", p.max_recv_dtos);
    /* the low watermark: 4 receives are not below 2 (no event); above max_recv_dtos is refused;
     * 5 is above the 4 posted, so its event comes at once, and only once */
    OK(dat_srq_set_lw(srq, 2));
    DAT_EVENT ev;
    EXPECT_ERR(dat_evd_dequeue(f.async_evd, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    EXPECT_ERR(dat_srq_set_lw(srq, p.max_recv_dtos + 1), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_srq_set_lw(srq, -1), DAT_INVALID_PARAMETER, ANYSUB);
    OK(dat_srq_set_lw(srq, 5));
    TRY(expect_watermark_event(f.async_evd, 0, srq, DAT_SRQ_LOW_WATERMARK_EVENT));
    EXPECT_ERR(dat_evd_dequeue(f.async_evd, &ev), DAT_QUEUE_EMPTY, ANYSUB);
    OK(dat_srq_query(srq, DAT_SRQ_FIELD_LOW_WATERMARK, &p));
    CHECK(p.low_watermark == 5, "srq_query low_watermark %d after dat_srq_set_lw(5)", p.low_watermark);
    /* EP bound to the SRQ */
    DAT_EP_HANDLE ep;
    OK(dat_ep_create_with_srq(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, srq, NULL, &ep));
    DAT_EP_PARAM ep_p;
    OK(dat_ep_query(ep, DAT_EP_FIELD_SRQ_HANDLE, &ep_p));
    CHECK(ep_p.srq_handle == srq, "ep_query srq_handle %p, expected %p", ep_p.srq_handle, srq);
    EXPECT_ERR(dat_srq_free(srq), DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_IN_USE, ANYSUB);
    /* resizing below the posted count fails */
    EXPECT_ERR2(dat_srq_resize(srq, 2), DAT_INVALID_STATE, DAT_INVALID_PARAMETER);
    OK(dat_ep_free(ep));
    OK(dat_srq_free(srq));
    return fx_close(&f);
}

static tres srq_errors(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_SRQ_ATTR a = {.max_recv_dtos = 8, .max_recv_iov = 1, .low_watermark = 0};
    DAT_SRQ_HANDLE stale, srq;
    DAT_RETURN r = dat_srq_create(f.ia, f.pz, &a, &stale);
    if (is_not_impl(r))
        return t_skip("dat_srq_create not implemented");
    CHECK(r == DAT_SUCCESS, "dat_srq_create -> %s", rs(r));
    OK(dat_srq_free(stale));
    DAT_IA_HANDLE stale_ia;
    DAT_EVD_HANDLE ae;
    OK(open_ia(&stale_ia, &ae));
    OK(dat_ia_close(stale_ia, DAT_CLOSE_ABRUPT_FLAG));
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H, dat_srq_create(H, f.pz, &a, &srq), DAT_INVALID_HANDLE_IA);
    EXPECT_BAD_HANDLES(f.ia, DAT_HANDLE_NULL, H, dat_srq_create(f.ia, H, &a, &srq), DAT_INVALID_HANDLE_PZ);
    EXPECT_ERR(dat_srq_create(f.ia, f.pz, NULL, &srq), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_srq_create(f.ia, f.pz, &a, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    DAT_SRQ_ATTR z = {.max_recv_dtos = 0, .max_recv_iov = 1, .low_watermark = 0};
    EXPECT_ERR(dat_srq_create(f.ia, f.pz, &z, &srq), DAT_INVALID_PARAMETER, ANYSUB);
    OK(dat_srq_create(f.ia, f.pz, &a, &srq));
    DAT_SRQ_PARAM p;
    DAT_LMR_TRIPLET t = trip(f.lmr_ctx, f.buf, 64);
    DAT_DTO_COOKIE ck;
    ck.as_64 = 1;
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_srq_free(H), DAT_INVALID_HANDLE_SRQ);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_srq_query(H, DAT_SRQ_FIELD_ALL, &p), DAT_INVALID_HANDLE_SRQ);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_srq_post_recv(H, 1, &t, ck), DAT_INVALID_HANDLE_SRQ);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_srq_resize(H, 16), DAT_INVALID_HANDLE_SRQ);
    EXPECT_BAD_HANDLES(f.ep, stale, H, dat_srq_set_lw(H, 1), DAT_INVALID_HANDLE_SRQ);
    DAT_EP_HANDLE ep;
    EXPECT_BAD_HANDLES(f.pz, stale_ia, H,
                       dat_ep_create_with_srq(H, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, srq, NULL, &ep),
                       DAT_INVALID_HANDLE_IA);
    int si;
    DAT_HANDLE bad_srq[] = {(DAT_HANDLE)(uintptr_t)0x1234, &si, f.pz, stale};
    for (size_t i = 0; i < 4; i++)
        EXPECT_ERR(dat_ep_create_with_srq(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, bad_srq[i], NULL, &ep),
                   DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
    EXPECT_ERR(dat_ep_create_with_srq(f.ia, f.pz, f.dto_evd, f.dto_evd, f.conn_evd, srq, NULL, NULL),
               DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_QUERY_BADMASK(dat_srq_query(srq, (DAT_SRQ_PARAM_MASK)0x1000, &p));
    EXPECT_ERR(dat_srq_resize(srq, 0), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_srq_post_recv(srq, 1, NULL, ck), DAT_INVALID_PARAMETER, ANYSUB);
    EXPECT_ERR(dat_srq_post_recv(srq, -1, &t, ck), DAT_INVALID_PARAMETER, ANYSUB);
    DAT_LMR_TRIPLET out = trip(f.lmr_ctx, f.buf + f.buflen - 8, 64);
    r = dat_srq_post_recv(srq, 1, &out, ck);
    CHECK(r == DAT_SUCCESS || DAT_GET_TYPE(r) == DAT_INVALID_PARAMETER ||
              DAT_GET_TYPE(r) == DAT_LENGTH_ERROR || DAT_GET_TYPE(r) == DAT_PROTECTION_VIOLATION,
          "dat_srq_post_recv(IOV outside LMR) -> %s", rs(r));
    return fx_close(&f);
}

/* ================= CR (handle checks; success paths are in dto/e2e) ================= */

static tres cr_bad_handles(void)
{
    struct fx f;
    TRY(fx_full(&f));
    DAT_CR_PARAM p;
    EXPECT_BAD_HANDLES(f.ep, DAT_HANDLE_NULL, H, dat_cr_query(H, DAT_CR_FIELD_ALL, &p), DAT_INVALID_HANDLE_CR);
    EXPECT_BAD_HANDLES(f.ep, DAT_HANDLE_NULL, H, dat_cr_accept(H, f.ep, 0, NULL), DAT_INVALID_HANDLE_CR);
    EXPECT_BAD_HANDLES(f.ep, DAT_HANDLE_NULL, H, cr_reject(H), DAT_INVALID_HANDLE_CR);
    EXPECT_BAD_HANDLES(f.ep, DAT_HANDLE_NULL, H, dat_cr_handoff(H, fresh_qual(0)), DAT_INVALID_HANDLE_CR);
    return fx_close(&f);
}

const struct tcase obj_cases[] = {
    {"pz.create_query_free", pz_success, 0},
    {"pz.errors", pz_errors, 0},
    {"lmr.create_query_free", lmr_success, 0},
    {"lmr.create_from_lmr", lmr_create_from_lmr, 0},
    {"lmr.create_errors", lmr_create_errors, 0},
    {"lmr.create_unmapped", lmr_create_unmapped, 0},
    {"lmr.query_free_errors", lmr_query_free_errors, 0},
    {"lmr.sync_rdma_read_write", lmr_sync, 0},
    {"rmr.create_query_free", rmr_success, 0},
    {"rmr.errors", rmr_errors, 0},
    {"evd.create_query", evd_create_query, 0},
    {"evd.create_errors", evd_create_errors, 0},
    {"evd.bad_handles", evd_bad_handles, 0},
    {"evd.post_se_dequeue", evd_post_se_dequeue, 0},
    {"evd.queue_full", evd_queue_full, 0},
    {"evd.wait_timeout", evd_wait_timeout, 0},
    {"evd.wait_threshold", evd_wait_threshold, 0},
    {"evd.wait_wakeup_from_thread", evd_wait_wakeup, 0},
    {"evd.unwaitable", evd_unwaitable, 0},
    {"evd.unwaitable_releases_waiter", evd_unwaitable_releases_waiter, 0},
    {"evd.enable_disable", evd_enable_disable, 0},
    {"evd.resize", evd_resize, 0},
    {"evd.free_in_use", evd_free_in_use, 0},
    {"evd.query_errors", evd_query_errors, 0},
    {"cno.create_query_modify_free", cno_success, 0},
    {"cno.wait_and_modify_cno", cno_wait, 0},
    {"cno.errors", cno_errors, 0},
    {"ep.create_query_status", ep_create_query, 0},
    {"ep.create_errors", ep_create_errors, 0},
    {"ep.bad_handles", ep_bad_handles, 0},
    {"ep.query_modify", ep_query_modify, 0},
    {"ep.unconnected_ops", ep_unconnected_ops, 0},
    {"ep.reset_watermark", ep_reset_watermark, 0},
    {"ep.recv_watermark", ep_recv_watermark, 0},
    {"psp.create_query_free", psp_success, 0},
    {"psp.errors", psp_errors, 0},
    {"rsp.create_query_free", rsp_success, 0},
    {"rsp.errors", rsp_errors, 0},
    {"srq.create_post_resize_free", srq_success, 0},
    {"srq.errors", srq_errors, 0},
    {"cr.bad_handles", cr_bad_handles, 0},
    {NULL, NULL, 0},
};
