/*
 * dat_compat.h - the few places where a DAT 1.2 and a DAT 2.0 consumer differ, for datperf.
 *
 * datperf builds against our DAT 1.2 headers (<dat/udat.h>, the default) or, with
 * -DDATPERF_DAT2, against a DAT 2.0 header set (<dat2/udat.h>, OFED's libdapl-dev). What differs:
 *   - dat_ia_open: a macro in both, passing the header's own DAT_VERSION_MAJOR/MINOR to
 *     dat_ia_openv, so the same call opens a 1.2 or a 2.0 IA; nothing to do here.
 *   - DAT_LMR_TRIPLET: 1.2 is {lmr_context, pad, virtual_address, segment_length}, 2.0 is
 *     {virtual_address, segment_length, lmr_context}. The field names are the same: always set
 *     fields by name (DP_LMR_TRIPLET below), never by position.
 *   - DAT_RMR_TRIPLET: the remote address is target_address in 1.2, virtual_address in 2.0.
 *   - dat_lmr_create: 2.0 adds a DAT_VA_TYPE argument after the privileges.
 *   - dat_cr_reject: 2.0 adds private data (none here).
 */
#ifndef DATPERF_DAT_COMPAT_H
#define DATPERF_DAT_COMPAT_H

#ifdef DATPERF_DAT2
#include <dat2/udat.h>
#else
#include <dat/udat.h>
#endif

#if DAT_VERSION_MAJOR >= 2
#define DP_RMR_TARGET_ADDRESS virtual_address
#define DP_CR_REJECT(cr) dat_cr_reject((cr), 0, NULL)
#define DP_LMR_CREATE(ia, type, region, len, pz, privileges, lmr, lmr_ctx, rmr_ctx, reg_len, reg_addr)            \
    dat_lmr_create((ia), (type), (region), (len), (pz), (privileges), DAT_VA_TYPE_VA, (lmr), (lmr_ctx), (rmr_ctx),      \
                   (reg_len), (reg_addr))
#else
#define DP_RMR_TARGET_ADDRESS target_address
#define DP_CR_REJECT(cr) dat_cr_reject(cr)
#define DP_LMR_CREATE(ia, type, region, len, pz, privileges, lmr, lmr_ctx, rmr_ctx, reg_len, reg_addr)            \
    dat_lmr_create((ia), (type), (region), (len), (pz), (privileges), (lmr), (lmr_ctx), (rmr_ctx), (reg_len),         \
                   (reg_addr))
#endif

/* One local segment, fields set by name so both layouts work. */
static inline DAT_LMR_TRIPLET dp_lmr_triplet(DAT_LMR_CONTEXT ctx, const void *addr, DAT_VLEN len)
{
    DAT_LMR_TRIPLET t;
    memset(&t, 0, sizeof t);
    t.lmr_context = ctx;
    t.virtual_address = (DAT_VADDR)(uintptr_t)addr;
    t.segment_length = len;
    return t;
}

/* One remote segment. */
static inline DAT_RMR_TRIPLET dp_rmr_triplet(DAT_RMR_CONTEXT ctx, uint64_t addr, DAT_VLEN len)
{
    DAT_RMR_TRIPLET t;
    memset(&t, 0, sizeof t);
    t.rmr_context = ctx;
    t.DP_RMR_TARGET_ADDRESS = addr;
    t.segment_length = len;
    return t;
}

#endif
