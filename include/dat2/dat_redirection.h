/*
 * dat2/dat_redirection.h - dispatch of the DAT calls through a provider table
 * (the parts shared by the user- and kernel-level APIs).
 *
 * Provider side only: libdat and provider libraries use it; consumers call the
 * dat_* functions of dat.h / udat.h instead.  It is brought in by
 * <dat2/dat_registry.h> (through <dat2/udat_redirection.h>), and may also be
 * included on its own.
 *
 * Every object handle a provider gives out points at memory whose first word
 * is that provider's DAT_PROVIDER *; DAT_HANDLE_TO_PROVIDER reads it.  Each
 * uppercase DAT_<CALL>(handle, ...) macro calls the <call>_func slot of the
 * table behind its first argument with all of its arguments.  The slot types
 * (DAT_<CALL>_FUNC) are declared here and in udat_redirection.h; the table
 * itself (struct dat_provider) is in udat_redirection.h.
 */
#ifndef _DAT_REDIRECTION_H_
#define _DAT_REDIRECTION_H_

#include <stdarg.h>
#include <dat2/udat.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dat_provider DAT_PROVIDER;

/* The provider table behind any object handle. */
#define DAT_HANDLE_TO_PROVIDER(handle) (*(DAT_PROVIDER **)(handle))

/* ------------------------------------------------------------------ */
/* Dispatch macros                                                     */
/* ------------------------------------------------------------------ */

#define DAT_CR_ACCEPT(cr_handle, ep_handle, private_data_size, private_data) \
    (*DAT_HANDLE_TO_PROVIDER(cr_handle)->cr_accept_func)( \
        (cr_handle), (ep_handle), (private_data_size), (private_data))

#define DAT_CR_HANDOFF(cr_handle, handoff) \
    (*DAT_HANDLE_TO_PROVIDER(cr_handle)->cr_handoff_func)((cr_handle), (handoff))

#define DAT_CR_QUERY(cr_handle, cr_param_mask, cr_param) \
    (*DAT_HANDLE_TO_PROVIDER(cr_handle)->cr_query_func)((cr_handle), (cr_param_mask), (cr_param))

#define DAT_CR_REJECT(cr_handle, private_data_size, private_data) \
    (*DAT_HANDLE_TO_PROVIDER(cr_handle)->cr_reject_func)( \
        (cr_handle), (private_data_size), (private_data))

#define DAT_CSP_CREATE(ia_handle, comm, address, evd_handle, csp_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->csp_create_func)( \
        (ia_handle), (comm), (address), (evd_handle), (csp_handle))

#define DAT_CSP_FREE(csp_handle) \
    (*DAT_HANDLE_TO_PROVIDER(csp_handle)->csp_free_func)((csp_handle))

#define DAT_CSP_QUERY(csp_handle, csp_param_mask, csp_param) \
    (*DAT_HANDLE_TO_PROVIDER(csp_handle)->csp_query_func)( \
        (csp_handle), (csp_param_mask), (csp_param))

#define DAT_EP_COMMON_CONNECT(ep_handle, remote_ia_address, timeout, private_data_size, private_data) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_common_connect_func)( \
        (ep_handle), (remote_ia_address), (timeout), (private_data_size), (private_data))

#define DAT_EP_CONNECT(ep_handle, remote_ia_address, remote_conn_qual, timeout, private_data_size, private_data, quality_of_service, connect_flags) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_connect_func)( \
        (ep_handle), (remote_ia_address), (remote_conn_qual), (timeout), (private_data_size), (private_data), (quality_of_service), (connect_flags))

#define DAT_EP_CREATE(ia_handle, pz_handle, recv_completion_evd_handle, request_completion_evd_handle, connect_evd_handle, ep_attributes, ep_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->ep_create_func)( \
        (ia_handle), (pz_handle), (recv_completion_evd_handle), (request_completion_evd_handle), (connect_evd_handle), (ep_attributes), (ep_handle))

#define DAT_EP_CREATE_WITH_SRQ(ia_handle, pz_handle, recv_evd_handle, request_evd_handle, connect_evd_handle, srq_handle, ep_attributes, ep_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->ep_create_with_srq_func)( \
        (ia_handle), (pz_handle), (recv_evd_handle), (request_evd_handle), (connect_evd_handle), (srq_handle), (ep_attributes), (ep_handle))

#define DAT_EP_DISCONNECT(ep_handle, close_flags) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_disconnect_func)((ep_handle), (close_flags))

#define DAT_EP_DUP_CONNECT(ep_handle, ep_dup_handle, timeout, private_data_size, private_data, quality_of_service) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_dup_connect_func)( \
        (ep_handle), (ep_dup_handle), (timeout), (private_data_size), (private_data), (quality_of_service))

#define DAT_EP_FREE(ep_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_free_func)((ep_handle))

#define DAT_EP_GET_STATUS(ep_handle, ep_state, recv_idle, request_idle) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_get_status_func)( \
        (ep_handle), (ep_state), (recv_idle), (request_idle))

#define DAT_EP_MODIFY(ep_handle, ep_param_mask, ep_param) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_modify_func)((ep_handle), (ep_param_mask), (ep_param))

#define DAT_EP_POST_RDMA_READ(ep_handle, num_segments, local_iov, user_cookie, remote_iov, completion_flags) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_post_rdma_read_func)( \
        (ep_handle), (num_segments), (local_iov), (user_cookie), (remote_iov), (completion_flags))

#define DAT_EP_POST_RDMA_READ_TO_RMR(ep_handle, local_iov, user_cookie, remote_iov, completion_flags) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_post_rdma_read_to_rmr_func)( \
        (ep_handle), (local_iov), (user_cookie), (remote_iov), (completion_flags))

#define DAT_EP_POST_RDMA_WRITE(ep_handle, num_segments, local_iov, user_cookie, remote_iov, completion_flags) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_post_rdma_write_func)( \
        (ep_handle), (num_segments), (local_iov), (user_cookie), (remote_iov), (completion_flags))

#define DAT_EP_POST_RECV(ep_handle, num_segments, local_iov, user_cookie, completion_flags) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_post_recv_func)( \
        (ep_handle), (num_segments), (local_iov), (user_cookie), (completion_flags))

#define DAT_EP_POST_SEND(ep_handle, num_segments, local_iov, user_cookie, completion_flags) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_post_send_func)( \
        (ep_handle), (num_segments), (local_iov), (user_cookie), (completion_flags))

#define DAT_EP_POST_SEND_WITH_INVALIDATE(ep_handle, num_segments, local_iov, user_cookie, completion_flags, invalidate_flag, rmr_context) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_post_send_with_invalidate_func)( \
        (ep_handle), (num_segments), (local_iov), (user_cookie), (completion_flags), (invalidate_flag), (rmr_context))

#define DAT_EP_QUERY(ep_handle, ep_param_mask, ep_param) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_query_func)((ep_handle), (ep_param_mask), (ep_param))

#define DAT_EP_RECV_QUERY(ep_handle, nbufs_allocated, bufs_alloc_span) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_recv_query_func)( \
        (ep_handle), (nbufs_allocated), (bufs_alloc_span))

#define DAT_EP_RESET(ep_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_reset_func)((ep_handle))

#define DAT_EP_SET_WATERMARK(ep_handle, soft_high_watermark, hard_high_watermark) \
    (*DAT_HANDLE_TO_PROVIDER(ep_handle)->ep_set_watermark_func)( \
        (ep_handle), (soft_high_watermark), (hard_high_watermark))

#define DAT_EVD_DEQUEUE(evd_handle, event) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_dequeue_func)((evd_handle), (event))

#define DAT_EVD_FREE(evd_handle) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_free_func)((evd_handle))

#define DAT_EVD_POST_SE(evd_handle, event) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_post_se_func)((evd_handle), (event))

#define DAT_EVD_QUERY(evd_handle, evd_param_mask, evd_param) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_query_func)( \
        (evd_handle), (evd_param_mask), (evd_param))

#define DAT_EVD_RESIZE(evd_handle, evd_min_qlen) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_resize_func)((evd_handle), (evd_min_qlen))

#define DAT_GET_CONSUMER_CONTEXT(dat_handle, context) \
    (*DAT_HANDLE_TO_PROVIDER(dat_handle)->get_consumer_context_func)((dat_handle), (context))

#define DAT_GET_HANDLE_TYPE(dat_handle, type) \
    (*DAT_HANDLE_TO_PROVIDER(dat_handle)->get_handle_type_func)((dat_handle), (type))

#if defined(DAT_EXTENSIONS)
/* args: the va_list of the variadic dat_extension_op() */
#define DAT_HANDLE_EXTENDEDOP(handle, op, args) \
    (*DAT_HANDLE_TO_PROVIDER(handle)->handle_extendedop_func)((handle), (op), (args))
#endif

#define DAT_IA_HA_RELATED(ia_handle, ia_name, related) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->ia_ha_related_func)((ia_handle), (ia_name), (related))

#define DAT_IA_QUERY(ia_handle, async_evd_handle, ia_attr_mask, ia_attr, provider_attr_mask, provider_attr) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->ia_query_func)( \
        (ia_handle), (async_evd_handle), (ia_attr_mask), (ia_attr), (provider_attr_mask), (provider_attr))

#define DAT_LMR_FREE(lmr_handle) \
    (*DAT_HANDLE_TO_PROVIDER(lmr_handle)->lmr_free_func)((lmr_handle))

#define DAT_LMR_QUERY(lmr_handle, lmv_param_mask, lmr_param) \
    (*DAT_HANDLE_TO_PROVIDER(lmr_handle)->lmr_query_func)( \
        (lmr_handle), (lmv_param_mask), (lmr_param))

#define DAT_LMR_SYNC_RDMA_READ(ia_handle, local_segments, num_segments) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->lmr_sync_rdma_read_func)( \
        (ia_handle), (local_segments), (num_segments))

#define DAT_LMR_SYNC_RDMA_WRITE(ia_handle, local_segments, num_segments) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->lmr_sync_rdma_write_func)( \
        (ia_handle), (local_segments), (num_segments))

#define DAT_PSP_CREATE(ia_handle, conn_qual, evd_handle, psp_flags, psp_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->psp_create_func)( \
        (ia_handle), (conn_qual), (evd_handle), (psp_flags), (psp_handle))

#define DAT_PSP_CREATE_ANY(ia_handle, conn_qual, evd_handle, psp_flags, psp_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->psp_create_any_func)( \
        (ia_handle), (conn_qual), (evd_handle), (psp_flags), (psp_handle))

#define DAT_PSP_FREE(psp_handle) \
    (*DAT_HANDLE_TO_PROVIDER(psp_handle)->psp_free_func)((psp_handle))

#define DAT_PSP_QUERY(psp_handle, psp_param_mask, psp_param) \
    (*DAT_HANDLE_TO_PROVIDER(psp_handle)->psp_query_func)( \
        (psp_handle), (psp_param_mask), (psp_param))

#define DAT_PZ_CREATE(ia_handle, pz_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->pz_create_func)((ia_handle), (pz_handle))

#define DAT_PZ_FREE(pz_handle) \
    (*DAT_HANDLE_TO_PROVIDER(pz_handle)->pz_free_func)((pz_handle))

#define DAT_PZ_QUERY(pz_handle, pz_param_mask, pz_param) \
    (*DAT_HANDLE_TO_PROVIDER(pz_handle)->pz_query_func)((pz_handle), (pz_param_mask), (pz_param))

#define DAT_RMR_BIND(rmr_handle, lmr_handle, lmr_triplet, mem_priv, va_type, ep_handle, user_cookie, completion_flags, context) \
    (*DAT_HANDLE_TO_PROVIDER(rmr_handle)->rmr_bind_func)( \
        (rmr_handle), (lmr_handle), (lmr_triplet), (mem_priv), (va_type), (ep_handle), (user_cookie), \
        (completion_flags), (context))

#define DAT_RMR_CREATE(pz_handle, rmr_handle) \
    (*DAT_HANDLE_TO_PROVIDER(pz_handle)->rmr_create_func)((pz_handle), (rmr_handle))

#define DAT_RMR_CREATE_FOR_EP(pz_handle, rmr_handle) \
    (*DAT_HANDLE_TO_PROVIDER(pz_handle)->rmr_create_for_ep_func)((pz_handle), (rmr_handle))

#define DAT_RMR_FREE(rmr_handle) \
    (*DAT_HANDLE_TO_PROVIDER(rmr_handle)->rmr_free_func)((rmr_handle))

#define DAT_RMR_QUERY(rmr_handle, rmr_param_mask, rmr_param) \
    (*DAT_HANDLE_TO_PROVIDER(rmr_handle)->rmr_query_func)( \
        (rmr_handle), (rmr_param_mask), (rmr_param))

#define DAT_RSP_CREATE(ia_handle, conn_qual, ep_handle, evd_handle, rsp_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->rsp_create_func)( \
        (ia_handle), (conn_qual), (ep_handle), (evd_handle), (rsp_handle))

#define DAT_RSP_FREE(rsp_handle) \
    (*DAT_HANDLE_TO_PROVIDER(rsp_handle)->rsp_free_func)((rsp_handle))

#define DAT_RSP_QUERY(rsp_handle, rsp_param_mask, rsp_param) \
    (*DAT_HANDLE_TO_PROVIDER(rsp_handle)->rsp_query_func)( \
        (rsp_handle), (rsp_param_mask), (rsp_param))

#define DAT_SET_CONSUMER_CONTEXT(dat_handle, context) \
    (*DAT_HANDLE_TO_PROVIDER(dat_handle)->set_consumer_context_func)((dat_handle), (context))

#define DAT_SRQ_CREATE(ia_handle, pz_handle, srq_attr, srq_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->srq_create_func)( \
        (ia_handle), (pz_handle), (srq_attr), (srq_handle))

#define DAT_SRQ_FREE(srq_handle) \
    (*DAT_HANDLE_TO_PROVIDER(srq_handle)->srq_free_func)((srq_handle))

#define DAT_SRQ_POST_RECV(srq_handle, num_segments, local_iov, user_cookie) \
    (*DAT_HANDLE_TO_PROVIDER(srq_handle)->srq_post_recv_func)( \
        (srq_handle), (num_segments), (local_iov), (user_cookie))

#define DAT_SRQ_QUERY(srq_handle, srq_param_mask, srq_param) \
    (*DAT_HANDLE_TO_PROVIDER(srq_handle)->srq_query_func)( \
        (srq_handle), (srq_param_mask), (srq_param))

#define DAT_SRQ_RESIZE(srq_handle, srq_max_recv_dto) \
    (*DAT_HANDLE_TO_PROVIDER(srq_handle)->srq_resize_func)((srq_handle), (srq_max_recv_dto))

#define DAT_SRQ_SET_LW(srq_handle, low_watermark) \
    (*DAT_HANDLE_TO_PROVIDER(srq_handle)->srq_set_lw_func)((srq_handle), (low_watermark))

/* ------------------------------------------------------------------ */
/* Provider entry-point types                                          */
/* ------------------------------------------------------------------ */

/*
 * Opening an IA.  The registry calls the provider with the IA name only;
 * version and thread-safety were already matched against the registry.
 */
typedef DAT_RETURN (*DAT_IA_OPEN_FUNC)(
    const DAT_NAME_PTR,
    DAT_COUNT,
    DAT_EVD_HANDLE *,
    DAT_IA_HANDLE *);

/* The same with the version arguments of dat_ia_openv(). */
typedef DAT_RETURN (*DAT_IA_OPENV_FUNC)(
    const DAT_NAME_PTR,
    DAT_COUNT,
    DAT_EVD_HANDLE *,
    DAT_IA_HANDLE *,
    DAT_UINT32,
    DAT_UINT32,
    DAT_BOOLEAN);

typedef DAT_RETURN (*DAT_IA_QUERY_FUNC)(
    DAT_IA_HANDLE,
    DAT_EVD_HANDLE *,
    DAT_IA_ATTR_MASK,
    DAT_IA_ATTR *,
    DAT_PROVIDER_ATTR_MASK,
    DAT_PROVIDER_ATTR *);

typedef DAT_RETURN (*DAT_IA_CLOSE_FUNC)(
    DAT_IA_HANDLE,
    DAT_CLOSE_FLAGS);

typedef DAT_RETURN (*DAT_SET_CONSUMER_CONTEXT_FUNC)(
    DAT_HANDLE,
    DAT_CONTEXT);

typedef DAT_RETURN (*DAT_GET_CONSUMER_CONTEXT_FUNC)(
    DAT_HANDLE,
    DAT_CONTEXT *);

typedef DAT_RETURN (*DAT_GET_HANDLE_TYPE_FUNC)(
    DAT_HANDLE,
    DAT_HANDLE_TYPE *);

typedef DAT_RETURN (*DAT_CR_QUERY_FUNC)(
    DAT_CR_HANDLE,
    DAT_CR_PARAM_MASK,
    DAT_CR_PARAM *);

typedef DAT_RETURN (*DAT_CR_ACCEPT_FUNC)(
    DAT_CR_HANDLE,
    DAT_EP_HANDLE,
    DAT_COUNT,
    const DAT_PVOID);

typedef DAT_RETURN (*DAT_CR_REJECT_FUNC)(
    DAT_CR_HANDLE,
    DAT_COUNT,
    const DAT_PVOID);

typedef DAT_RETURN (*DAT_CR_HANDOFF_FUNC)(
    DAT_CR_HANDLE,
    DAT_CONN_QUAL);

typedef DAT_RETURN (*DAT_EVD_QUERY_FUNC)(
    DAT_EVD_HANDLE,
    DAT_EVD_PARAM_MASK,
    DAT_EVD_PARAM *);

typedef DAT_RETURN (*DAT_EVD_RESIZE_FUNC)(
    DAT_EVD_HANDLE,
    DAT_COUNT);

typedef DAT_RETURN (*DAT_EVD_POST_SE_FUNC)(
    DAT_EVD_HANDLE,
    const DAT_EVENT *);

typedef DAT_RETURN (*DAT_EVD_DEQUEUE_FUNC)(
    DAT_EVD_HANDLE,
    DAT_EVENT *);

typedef DAT_RETURN (*DAT_EVD_FREE_FUNC)(
    DAT_EVD_HANDLE);

typedef DAT_RETURN (*DAT_EP_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_PZ_HANDLE,
    DAT_EVD_HANDLE,
    DAT_EVD_HANDLE,
    DAT_EVD_HANDLE,
    const DAT_EP_ATTR *,
    DAT_EP_HANDLE *);

typedef DAT_RETURN (*DAT_EP_QUERY_FUNC)(
    DAT_EP_HANDLE,
    DAT_EP_PARAM_MASK,
    DAT_EP_PARAM *);

typedef DAT_RETURN (*DAT_EP_MODIFY_FUNC)(
    DAT_EP_HANDLE,
    DAT_EP_PARAM_MASK,
    const DAT_EP_PARAM *);

typedef DAT_RETURN (*DAT_EP_CONNECT_FUNC)(
    DAT_EP_HANDLE,
    DAT_IA_ADDRESS_PTR,
    DAT_CONN_QUAL,
    DAT_TIMEOUT,
    DAT_COUNT,
    const DAT_PVOID,
    DAT_QOS,
    DAT_CONNECT_FLAGS);

typedef DAT_RETURN (*DAT_EP_DUP_CONNECT_FUNC)(
    DAT_EP_HANDLE,
    DAT_EP_HANDLE,
    DAT_TIMEOUT,
    DAT_COUNT,
    const DAT_PVOID,
    DAT_QOS);

typedef DAT_RETURN (*DAT_EP_DISCONNECT_FUNC)(
    DAT_EP_HANDLE,
    DAT_CLOSE_FLAGS);

typedef DAT_RETURN (*DAT_EP_POST_SEND_FUNC)(
    DAT_EP_HANDLE,
    DAT_COUNT,
    DAT_LMR_TRIPLET *,
    DAT_DTO_COOKIE,
    DAT_COMPLETION_FLAGS);

typedef DAT_RETURN (*DAT_EP_POST_RECV_FUNC)(
    DAT_EP_HANDLE,
    DAT_COUNT,
    DAT_LMR_TRIPLET *,
    DAT_DTO_COOKIE,
    DAT_COMPLETION_FLAGS);

typedef DAT_RETURN (*DAT_EP_POST_RDMA_READ_FUNC)(
    DAT_EP_HANDLE,
    DAT_COUNT,
    DAT_LMR_TRIPLET *,
    DAT_DTO_COOKIE,
    const DAT_RMR_TRIPLET *,
    DAT_COMPLETION_FLAGS);

typedef DAT_RETURN (*DAT_EP_POST_RDMA_WRITE_FUNC)(
    DAT_EP_HANDLE,
    DAT_COUNT,
    DAT_LMR_TRIPLET *,
    DAT_DTO_COOKIE,
    const DAT_RMR_TRIPLET *,
    DAT_COMPLETION_FLAGS);

typedef DAT_RETURN (*DAT_EP_GET_STATUS_FUNC)(
    DAT_EP_HANDLE,
    DAT_EP_STATE *,
    DAT_BOOLEAN *,
    DAT_BOOLEAN *);

typedef DAT_RETURN (*DAT_EP_FREE_FUNC)(
    DAT_EP_HANDLE);

typedef DAT_RETURN (*DAT_LMR_QUERY_FUNC)(
    DAT_LMR_HANDLE,
    DAT_LMR_PARAM_MASK,
    DAT_LMR_PARAM *);

typedef DAT_RETURN (*DAT_LMR_FREE_FUNC)(
    DAT_LMR_HANDLE);

typedef DAT_RETURN (*DAT_RMR_CREATE_FUNC)(
    DAT_PZ_HANDLE,
    DAT_RMR_HANDLE *);

typedef DAT_RETURN (*DAT_RMR_QUERY_FUNC)(
    DAT_RMR_HANDLE,
    DAT_RMR_PARAM_MASK,
    DAT_RMR_PARAM *);

typedef DAT_RETURN (*DAT_RMR_BIND_FUNC)(
    DAT_RMR_HANDLE,
    DAT_LMR_HANDLE,
    const DAT_LMR_TRIPLET *,
    DAT_MEM_PRIV_FLAGS,
    DAT_VA_TYPE,
    DAT_EP_HANDLE,
    DAT_RMR_COOKIE,
    DAT_COMPLETION_FLAGS,
    DAT_RMR_CONTEXT *);

typedef DAT_RETURN (*DAT_RMR_FREE_FUNC)(
    DAT_RMR_HANDLE);

typedef DAT_RETURN (*DAT_PSP_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_CONN_QUAL,
    DAT_EVD_HANDLE,
    DAT_PSP_FLAGS,
    DAT_PSP_HANDLE *);

typedef DAT_RETURN (*DAT_PSP_QUERY_FUNC)(
    DAT_PSP_HANDLE,
    DAT_PSP_PARAM_MASK,
    DAT_PSP_PARAM *);

typedef DAT_RETURN (*DAT_PSP_FREE_FUNC)(
    DAT_PSP_HANDLE);

typedef DAT_RETURN (*DAT_RSP_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_CONN_QUAL,
    DAT_EP_HANDLE,
    DAT_EVD_HANDLE,
    DAT_RSP_HANDLE *);

typedef DAT_RETURN (*DAT_RSP_QUERY_FUNC)(
    DAT_RSP_HANDLE,
    DAT_RSP_PARAM_MASK,
    DAT_RSP_PARAM *);

typedef DAT_RETURN (*DAT_RSP_FREE_FUNC)(
    DAT_RSP_HANDLE);

typedef DAT_RETURN (*DAT_PZ_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_PZ_HANDLE *);

typedef DAT_RETURN (*DAT_PZ_QUERY_FUNC)(
    DAT_PZ_HANDLE,
    DAT_PZ_PARAM_MASK,
    DAT_PZ_PARAM *);

typedef DAT_RETURN (*DAT_PZ_FREE_FUNC)(
    DAT_PZ_HANDLE);

typedef DAT_RETURN (*DAT_PSP_CREATE_ANY_FUNC)(
    DAT_IA_HANDLE,
    DAT_CONN_QUAL *,
    DAT_EVD_HANDLE,
    DAT_PSP_FLAGS,
    DAT_PSP_HANDLE *);

typedef DAT_RETURN (*DAT_EP_RESET_FUNC)(
    DAT_EP_HANDLE);

typedef DAT_RETURN (*DAT_LMR_SYNC_RDMA_READ_FUNC)(
    DAT_IA_HANDLE,
    const DAT_LMR_TRIPLET *,
    DAT_VLEN);

typedef DAT_RETURN (*DAT_LMR_SYNC_RDMA_WRITE_FUNC)(
    DAT_IA_HANDLE,
    const DAT_LMR_TRIPLET *,
    DAT_VLEN);

typedef DAT_RETURN (*DAT_EP_CREATE_WITH_SRQ_FUNC)(
    DAT_IA_HANDLE,
    DAT_PZ_HANDLE,
    DAT_EVD_HANDLE,
    DAT_EVD_HANDLE,
    DAT_EVD_HANDLE,
    DAT_SRQ_HANDLE,
    const DAT_EP_ATTR *,
    DAT_EP_HANDLE *);

typedef DAT_RETURN (*DAT_EP_RECV_QUERY_FUNC)(
    DAT_EP_HANDLE,
    DAT_COUNT *,
    DAT_COUNT *);

typedef DAT_RETURN (*DAT_EP_SET_WATERMARK_FUNC)(
    DAT_EP_HANDLE,
    DAT_COUNT,
    DAT_COUNT);

typedef DAT_RETURN (*DAT_SRQ_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_PZ_HANDLE,
    DAT_SRQ_ATTR *,
    DAT_SRQ_HANDLE *);

typedef DAT_RETURN (*DAT_SRQ_FREE_FUNC)(
    DAT_SRQ_HANDLE);

typedef DAT_RETURN (*DAT_SRQ_POST_RECV_FUNC)(
    DAT_SRQ_HANDLE,
    DAT_COUNT,
    DAT_LMR_TRIPLET *,
    DAT_DTO_COOKIE);

typedef DAT_RETURN (*DAT_SRQ_QUERY_FUNC)(
    DAT_SRQ_HANDLE,
    DAT_SRQ_PARAM_MASK,
    DAT_SRQ_PARAM *);

typedef DAT_RETURN (*DAT_SRQ_RESIZE_FUNC)(
    DAT_SRQ_HANDLE,
    DAT_COUNT);

typedef DAT_RETURN (*DAT_SRQ_SET_LW_FUNC)(
    DAT_SRQ_HANDLE,
    DAT_COUNT);

/* added in DAT 2.0 */
typedef DAT_RETURN (*DAT_CSP_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_COMM *,
    DAT_IA_ADDRESS_PTR,
    DAT_EVD_HANDLE,
    DAT_CSP_HANDLE *);

typedef DAT_RETURN (*DAT_CSP_QUERY_FUNC)(
    DAT_CSP_HANDLE,
    DAT_CSP_PARAM_MASK,
    DAT_CSP_PARAM *);

typedef DAT_RETURN (*DAT_CSP_FREE_FUNC)(
    DAT_CSP_HANDLE);

typedef DAT_RETURN (*DAT_EP_COMMON_CONNECT_FUNC)(
    DAT_EP_HANDLE,
    DAT_IA_ADDRESS_PTR,
    DAT_TIMEOUT,
    DAT_COUNT,
    const DAT_PVOID);

typedef DAT_RETURN (*DAT_RMR_CREATE_FOR_EP_FUNC)(
    DAT_PZ_HANDLE,
    DAT_RMR_HANDLE *);

typedef DAT_RETURN (*DAT_EP_POST_SEND_WITH_INVALIDATE_FUNC)(
    DAT_EP_HANDLE,
    DAT_COUNT,
    DAT_LMR_TRIPLET *,
    DAT_DTO_COOKIE,
    DAT_COMPLETION_FLAGS,
    DAT_BOOLEAN,
    DAT_RMR_CONTEXT);

typedef DAT_RETURN (*DAT_EP_POST_RDMA_READ_TO_RMR_FUNC)(
    DAT_EP_HANDLE,
    const DAT_RMR_TRIPLET *,
    DAT_DTO_COOKIE,
    const DAT_RMR_TRIPLET *,
    DAT_COMPLETION_FLAGS);

/* Is the IA related (high availability) to the IA of that name? */
typedef DAT_RETURN (*DAT_IA_HA_RELATED_FUNC)(
    DAT_IA_HANDLE,
    const DAT_NAME_PTR,
    DAT_BOOLEAN *);

#if defined(DAT_EXTENSIONS)
/* An extension operation: handle, operation code, its remaining arguments. */
typedef DAT_RETURN (*DAT_HANDLE_EXTENDEDOP_FUNC)(
    DAT_HANDLE,
    DAT_EXTENDED_OP,
    va_list);
#endif

#ifdef __cplusplus
}
#endif

#endif /* _DAT_REDIRECTION_H_ */
