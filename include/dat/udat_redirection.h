/*
 * dat/udat_redirection.h - dispatch of the user-level (uDAT) calls through a
 * provider table, and the table itself.
 *
 * Provider side only, like dat_redirection.h (which it includes): the calls
 * that exist only at user level (CNOs, EVD creation, waiting and enabling,
 * LMR creation from user memory) and struct dat_provider, the DAT 1.2
 * dispatch table shared by libdat and provider libraries.
 */
#ifndef _UDAT_REDIRECTION_H_
#define _UDAT_REDIRECTION_H_

#include <dat/dat_redirection.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Dispatch macros                                                     */
/* ------------------------------------------------------------------ */

#define DAT_CNO_CREATE(ia_handle, agent, cno_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->cno_create_func)((ia_handle), (agent), (cno_handle))

#define DAT_CNO_FREE(cno_handle) \
    (*DAT_HANDLE_TO_PROVIDER(cno_handle)->cno_free_func)((cno_handle))

#define DAT_CNO_MODIFY_AGENT(cno_handle, agent) \
    (*DAT_HANDLE_TO_PROVIDER(cno_handle)->cno_modify_agent_func)((cno_handle), (agent))

#define DAT_CNO_QUERY(cno_handle, cno_param_mask, cno_param) \
    (*DAT_HANDLE_TO_PROVIDER(cno_handle)->cno_query_func)( \
        (cno_handle), (cno_param_mask), (cno_param))

#define DAT_CNO_WAIT(cno_handle, timeout, evd_handle) \
    (*DAT_HANDLE_TO_PROVIDER(cno_handle)->cno_wait_func)((cno_handle), (timeout), (evd_handle))

#define DAT_EVD_CLEAR_UNWAITABLE(evd_handle) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_clear_unwaitable_func)((evd_handle))

#define DAT_EVD_CREATE(ia_handle, evd_min_qlen, cno_handle, evd_flags, evd_handle) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->evd_create_func)( \
        (ia_handle), (evd_min_qlen), (cno_handle), (evd_flags), (evd_handle))

#define DAT_EVD_DISABLE(evd_handle) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_disable_func)((evd_handle))

#define DAT_EVD_ENABLE(evd_handle) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_enable_func)((evd_handle))

#define DAT_EVD_MODIFY_CNO(evd_handle, cno_handle) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_modify_cno_func)((evd_handle), (cno_handle))

#define DAT_EVD_SET_UNWAITABLE(evd_handle) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_set_unwaitable_func)((evd_handle))

#define DAT_EVD_WAIT(evd_handle, Timeout, Threshold, event, n_more_events) \
    (*DAT_HANDLE_TO_PROVIDER(evd_handle)->evd_wait_func)( \
        (evd_handle), (Timeout), (Threshold), (event), (n_more_events))

#define DAT_LMR_CREATE(ia_handle, mem_type, region_description, length, pz_handle, privileges, lmr_handle, lmr_context, rmr_context, registered_length, registered_address) \
    (*DAT_HANDLE_TO_PROVIDER(ia_handle)->lmr_create_func)( \
        (ia_handle), (mem_type), (region_description), (length), (pz_handle), (privileges), (lmr_handle), (lmr_context), (rmr_context), (registered_length), (registered_address))

/* ------------------------------------------------------------------ */
/* Provider entry-point types                                          */
/* ------------------------------------------------------------------ */

typedef DAT_RETURN (*DAT_CNO_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_OS_WAIT_PROXY_AGENT,
    DAT_CNO_HANDLE *);

typedef DAT_RETURN (*DAT_CNO_MODIFY_AGENT_FUNC)(
    DAT_CNO_HANDLE,
    DAT_OS_WAIT_PROXY_AGENT);

typedef DAT_RETURN (*DAT_CNO_QUERY_FUNC)(
    DAT_CNO_HANDLE,
    DAT_CNO_PARAM_MASK,
    DAT_CNO_PARAM *);

typedef DAT_RETURN (*DAT_CNO_FREE_FUNC)(
    DAT_CNO_HANDLE);

typedef DAT_RETURN (*DAT_CNO_WAIT_FUNC)(
    DAT_CNO_HANDLE,
    DAT_TIMEOUT,
    DAT_EVD_HANDLE *);

typedef DAT_RETURN (*DAT_EVD_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_COUNT,
    DAT_CNO_HANDLE,
    DAT_EVD_FLAGS,
    DAT_EVD_HANDLE *);

typedef DAT_RETURN (*DAT_EVD_MODIFY_CNO_FUNC)(
    DAT_EVD_HANDLE,
    DAT_CNO_HANDLE);

typedef DAT_RETURN (*DAT_EVD_ENABLE_FUNC)(
    DAT_EVD_HANDLE);

typedef DAT_RETURN (*DAT_EVD_DISABLE_FUNC)(
    DAT_EVD_HANDLE);

typedef DAT_RETURN (*DAT_EVD_WAIT_FUNC)(
    DAT_EVD_HANDLE,
    DAT_TIMEOUT,
    DAT_COUNT,
    DAT_EVENT *,
    DAT_COUNT *);

typedef DAT_RETURN (*DAT_LMR_CREATE_FUNC)(
    DAT_IA_HANDLE,
    DAT_MEM_TYPE,
    DAT_REGION_DESCRIPTION,
    DAT_VLEN,
    DAT_PZ_HANDLE,
    DAT_MEM_PRIV_FLAGS,
    DAT_LMR_HANDLE *,
    DAT_LMR_CONTEXT *,
    DAT_RMR_CONTEXT *,
    DAT_VLEN *,
    DAT_VADDR *);

typedef DAT_RETURN (*DAT_EVD_SET_UNWAITABLE_FUNC)(
    DAT_EVD_HANDLE);

typedef DAT_RETURN (*DAT_EVD_CLEAR_UNWAITABLE_FUNC)(
    DAT_EVD_HANDLE);

struct dat_provider
{
    const char *                    device_name;    /*   0 */
    DAT_PVOID                       extension;      /*   8 */

    /* interface adapter and handle helpers */
    DAT_IA_OPEN_FUNC                ia_open_func;               /*  16 */
    DAT_IA_QUERY_FUNC               ia_query_func;              /*  24 */
    DAT_IA_CLOSE_FUNC               ia_close_func;              /*  32 */
    DAT_SET_CONSUMER_CONTEXT_FUNC   set_consumer_context_func;  /*  40 */
    DAT_GET_CONSUMER_CONTEXT_FUNC   get_consumer_context_func;  /*  48 */
    DAT_GET_HANDLE_TYPE_FUNC        get_handle_type_func;       /*  56 */

    /* consumer notification objects (user level only) */
    DAT_CNO_CREATE_FUNC             cno_create_func;            /*  64 */
    DAT_CNO_MODIFY_AGENT_FUNC       cno_modify_agent_func;      /*  72 */
    DAT_CNO_QUERY_FUNC              cno_query_func;             /*  80 */
    DAT_CNO_FREE_FUNC               cno_free_func;              /*  88 */
    DAT_CNO_WAIT_FUNC               cno_wait_func;              /*  96 */

    /* connection requests */
    DAT_CR_QUERY_FUNC               cr_query_func;              /* 104 */
    DAT_CR_ACCEPT_FUNC              cr_accept_func;             /* 112 */
    DAT_CR_REJECT_FUNC              cr_reject_func;             /* 120 */
    DAT_CR_HANDOFF_FUNC             cr_handoff_func;            /* 128 */

    /* event dispatchers (modify_cno, enable, disable, wait: user level only) */
    DAT_EVD_CREATE_FUNC             evd_create_func;            /* 136 */
    DAT_EVD_QUERY_FUNC              evd_query_func;             /* 144 */
    DAT_EVD_MODIFY_CNO_FUNC         evd_modify_cno_func;        /* 152 */
    DAT_EVD_ENABLE_FUNC             evd_enable_func;            /* 160 */
    DAT_EVD_DISABLE_FUNC            evd_disable_func;           /* 168 */
    DAT_EVD_WAIT_FUNC               evd_wait_func;              /* 176 */
    DAT_EVD_RESIZE_FUNC             evd_resize_func;            /* 184 */
    DAT_EVD_POST_SE_FUNC            evd_post_se_func;           /* 192 */
    DAT_EVD_DEQUEUE_FUNC            evd_dequeue_func;           /* 200 */
    DAT_EVD_FREE_FUNC               evd_free_func;              /* 208 */

    /* endpoints */
    DAT_EP_CREATE_FUNC              ep_create_func;             /* 216 */
    DAT_EP_QUERY_FUNC               ep_query_func;              /* 224 */
    DAT_EP_MODIFY_FUNC              ep_modify_func;             /* 232 */
    DAT_EP_CONNECT_FUNC             ep_connect_func;            /* 240 */
    DAT_EP_DUP_CONNECT_FUNC         ep_dup_connect_func;        /* 248 */
    DAT_EP_DISCONNECT_FUNC          ep_disconnect_func;         /* 256 */
    DAT_EP_POST_SEND_FUNC           ep_post_send_func;          /* 264 */
    DAT_EP_POST_RECV_FUNC           ep_post_recv_func;          /* 272 */
    DAT_EP_POST_RDMA_READ_FUNC      ep_post_rdma_read_func;     /* 280 */
    DAT_EP_POST_RDMA_WRITE_FUNC     ep_post_rdma_write_func;    /* 288 */
    DAT_EP_GET_STATUS_FUNC          ep_get_status_func;         /* 296 */
    DAT_EP_FREE_FUNC                ep_free_func;               /* 304 */

    /* memory regions, service points, protection zones */
    DAT_LMR_CREATE_FUNC             lmr_create_func;            /* 312 */
    DAT_LMR_QUERY_FUNC              lmr_query_func;             /* 320 */
    DAT_LMR_FREE_FUNC               lmr_free_func;              /* 328 */
    DAT_RMR_CREATE_FUNC             rmr_create_func;            /* 336 */
    DAT_RMR_QUERY_FUNC              rmr_query_func;             /* 344 */
    DAT_RMR_BIND_FUNC               rmr_bind_func;              /* 352 */
    DAT_RMR_FREE_FUNC               rmr_free_func;              /* 360 */
    DAT_PSP_CREATE_FUNC             psp_create_func;            /* 368 */
    DAT_PSP_QUERY_FUNC              psp_query_func;             /* 376 */
    DAT_PSP_FREE_FUNC               psp_free_func;              /* 384 */
    DAT_RSP_CREATE_FUNC             rsp_create_func;            /* 392 */
    DAT_RSP_QUERY_FUNC              rsp_query_func;             /* 400 */
    DAT_RSP_FREE_FUNC               rsp_free_func;              /* 408 */
    DAT_PZ_CREATE_FUNC              pz_create_func;             /* 416 */
    DAT_PZ_QUERY_FUNC               pz_query_func;              /* 424 */
    DAT_PZ_FREE_FUNC                pz_free_func;               /* 432 */

    /* added in DAT 1.1 */
    DAT_PSP_CREATE_ANY_FUNC         psp_create_any_func;        /* 440 */
    DAT_EP_RESET_FUNC               ep_reset_func;              /* 448 */

    /* added in uDAT 1.1 */
    DAT_EVD_SET_UNWAITABLE_FUNC     evd_set_unwaitable_func;    /* 456 */
    DAT_EVD_CLEAR_UNWAITABLE_FUNC   evd_clear_unwaitable_func;  /* 464 */

    /* added in DAT 1.2 */
    DAT_LMR_SYNC_RDMA_READ_FUNC     lmr_sync_rdma_read_func;    /* 472 */
    DAT_LMR_SYNC_RDMA_WRITE_FUNC    lmr_sync_rdma_write_func;   /* 480 */
    DAT_EP_CREATE_WITH_SRQ_FUNC     ep_create_with_srq_func;    /* 488 */
    DAT_EP_RECV_QUERY_FUNC          ep_recv_query_func;         /* 496 */
    DAT_EP_SET_WATERMARK_FUNC       ep_set_watermark_func;      /* 504 */
    DAT_SRQ_CREATE_FUNC             srq_create_func;            /* 512 */
    DAT_SRQ_FREE_FUNC               srq_free_func;              /* 520 */
    DAT_SRQ_POST_RECV_FUNC          srq_post_recv_func;         /* 528 */
    DAT_SRQ_QUERY_FUNC              srq_query_func;             /* 536 */
    DAT_SRQ_RESIZE_FUNC             srq_resize_func;            /* 544 */
    DAT_SRQ_SET_LW_FUNC             srq_set_lw_func;            /* 552 */
};

#ifdef __cplusplus
}
#endif

#endif /* _UDAT_REDIRECTION_H_ */
