/*
 * dct_compat.h - the places where a DAT 1.2 and a DAT 2.0 consumer differ, for the conformance
 * suite.  One source builds both faces:
 *   default        <dat/udat.h>,  linked with -ldat  (libdat.so.1, DAT 1.2)
 *   -DDCT_DAT2     <dat2/udat.h>, linked with -ldat2 (libdat2.so.2, DAT 2.0)
 * Everything else the suite needs already has the same name in both header sets, and the
 * numbers behind the names (renumbered error subtypes, moved mask bits, the 16-byte triplets,
 * the 120-byte DAT_EVENT) come from the header the build uses.  What differs in the source:
 *   - dat_lmr_create: 2.0 adds a DAT_VA_TYPE argument after the privileges (lmr_create below
 *     passes DAT_VA_TYPE_VA, the 1.2 meaning);
 *   - dat_rmr_bind: 2.0 adds the LMR handle of the triplet and a DAT_VA_TYPE (rmr_bind below);
 *   - dat_cr_reject: 2.0 adds private data (cr_reject_pd below; 1.2 drops it, and
 *     DCT_REJECT_PRIVATE_DATA says whether the active side can see it);
 *   - DAT_RMR_TRIPLET: the remote address is target_address in 1.2, virtual_address in 2.0
 *     (RMR_ADDR names the field);
 *   - DAT_CNO_PARAM: 1.2's agent field is 2.0's proxy.agent, DAT_CNO_FIELD_AGENT is
 *     DAT_CNO_FIELD_PROXY;
 *   - the few numbers the cases spell out (DAT_NAME_NOT_REGISTERED as a whole code, the first
 *     error type past the last one defined).
 */
#ifndef DCT_COMPAT_H
#define DCT_COMPAT_H

#ifdef DCT_DAT2
#include <dat2/udat.h>
#else
#include <dat/udat.h>
#endif

/* "DAT 1.2" or "DAT 2.0", for messages */
#define DCT_FACE (DAT_VERSION_MAJOR >= 2 ? "DAT 2.0" : "DAT 1.2")

#if DAT_VERSION_MAJOR >= 2

#define RMR_ADDR virtual_address
#define CNO_AGENT(p) ((p).proxy.agent)
#define DCT_CNO_FIELD_AGENT DAT_CNO_FIELD_PROXY
/* dat_ia_open of an unknown name, as OFED's libdat2.so.2 returns it */
#define DCT_NAME_NOT_REGISTERED_CODE 0x800a0064u
/* an error type no 2.0 header defines */
#define DCT_UNKNOWN_TYPE (DAT_COMM_NOT_SUPPORTED + 0x10000u)
/* a version this face does not serve */
#define DCT_OTHER_MAJOR 1
#define DCT_OTHER_MINOR 2

static inline DAT_RETURN lmr_create(DAT_IA_HANDLE ia, DAT_MEM_TYPE type, DAT_REGION_DESCRIPTION rd, DAT_VLEN len,
                                    DAT_PZ_HANDLE pz, DAT_MEM_PRIV_FLAGS priv, DAT_LMR_HANDLE *lmr,
                                    DAT_LMR_CONTEXT *lctx, DAT_RMR_CONTEXT *rctx, DAT_VLEN *reg_len,
                                    DAT_VADDR *reg_addr)
{
    return dat_lmr_create(ia, type, rd, len, pz, priv, DAT_VA_TYPE_VA, lmr, lctx, rctx, reg_len, reg_addr);
}

static inline DAT_RETURN rmr_bind(DAT_RMR_HANDLE rmr, DAT_LMR_HANDLE lmr, const DAT_LMR_TRIPLET *t,
                                  DAT_MEM_PRIV_FLAGS priv, DAT_EP_HANDLE ep, DAT_RMR_COOKIE ck,
                                  DAT_COMPLETION_FLAGS flags, DAT_RMR_CONTEXT *ctx)
{
    return dat_rmr_bind(rmr, lmr, t, priv, DAT_VA_TYPE_VA, ep, ck, flags, ctx);
}

#define DCT_REJECT_PRIVATE_DATA 1
static inline DAT_RETURN cr_reject_pd(DAT_CR_HANDLE cr, DAT_COUNT size, const void *data)
{
    return dat_cr_reject(cr, size, (DAT_PVOID)data);
}

#else

#define RMR_ADDR target_address
#define CNO_AGENT(p) ((p).agent)
#define DCT_CNO_FIELD_AGENT DAT_CNO_FIELD_AGENT
#define DCT_NAME_NOT_REGISTERED_CODE 0x800a0062u
#define DCT_UNKNOWN_TYPE (DAT_CONN_QUAL_UNAVAILABLE + 0x10000u)
#define DCT_OTHER_MAJOR 2
#define DCT_OTHER_MINOR 0

static inline DAT_RETURN lmr_create(DAT_IA_HANDLE ia, DAT_MEM_TYPE type, DAT_REGION_DESCRIPTION rd, DAT_VLEN len,
                                    DAT_PZ_HANDLE pz, DAT_MEM_PRIV_FLAGS priv, DAT_LMR_HANDLE *lmr,
                                    DAT_LMR_CONTEXT *lctx, DAT_RMR_CONTEXT *rctx, DAT_VLEN *reg_len,
                                    DAT_VADDR *reg_addr)
{
    return dat_lmr_create(ia, type, rd, len, pz, priv, lmr, lctx, rctx, reg_len, reg_addr);
}

/* the LMR handle is a 2.0 argument; 1.2 finds the LMR from the triplet's context */
static inline DAT_RETURN rmr_bind(DAT_RMR_HANDLE rmr, DAT_LMR_HANDLE lmr, const DAT_LMR_TRIPLET *t,
                                  DAT_MEM_PRIV_FLAGS priv, DAT_EP_HANDLE ep, DAT_RMR_COOKIE ck,
                                  DAT_COMPLETION_FLAGS flags, DAT_RMR_CONTEXT *ctx)
{
    (void)lmr;
    return dat_rmr_bind(rmr, t, priv, ep, ck, flags, ctx);
}

#define DCT_REJECT_PRIVATE_DATA 0
static inline DAT_RETURN cr_reject_pd(DAT_CR_HANDLE cr, DAT_COUNT size, const void *data)
{
    (void)size;
    (void)data;
    return dat_cr_reject(cr);
}

#endif

static inline DAT_RETURN cr_reject(DAT_CR_HANDLE cr)
{
    return cr_reject_pd(cr, 0, NULL);
}

#endif
