/*
 * dat2/udat.h - DAT 2.0 user-level API (uDAPL 2.0).  Consumers include this
 * file.
 *
 * Part of the libdat reimplementation of the DAT 2.0 ABI (OFED dapl 2.x
 * flavour, Linux).  Programs built with it link with -ldat2 (libdat2.so.2;
 * not built yet by this project: only the headers exist so far).
 *
 * Include order: configuration, platform types, the transport-independent
 * API (dat.h, which brings in dat_error.h), then vendor additions.
 */
#ifndef _UDAT_H_
#define _UDAT_H_

#include <dat2/udat_config.h>
#include <dat2/dat_platform_specific.h>
#include <dat2/dat.h>
#include <dat2/udat_vendor_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Special EVD handle values.  Pass DAT_EVD_ASYNC_EXISTS in *async_evd_handle
 * to dat_ia_open() to share an existing asynchronous EVD; dat_ia_query()
 * reports DAT_EVD_OUT_OF_SCOPE when the async EVD is not visible to the
 * caller.
 */
#define DAT_EVD_ASYNC_EXISTS    ((DAT_EVD_HANDLE) 0x1)
#define DAT_EVD_OUT_OF_SCOPE    ((DAT_EVD_HANDLE) 0x2)

/* ------------------------------------------------------------------ */
/* Memory registration                                                 */
/* ------------------------------------------------------------------ */

typedef enum dat_mem_type
{
    DAT_MEM_TYPE_VIRTUAL        = 0x00,
    DAT_MEM_TYPE_LMR            = 0x01,
    DAT_MEM_TYPE_SHARED_VIRTUAL = 0x02
} DAT_MEM_TYPE;

/* Identifies shared memory: a pointer to a 40-byte cookie. */
#define DAT_LMR_COOKIE_SIZE     40
typedef char (*DAT_LMR_COOKIE)[DAT_LMR_COOKIE_SIZE];

typedef struct dat_shared_memory
{
    DAT_PVOID               virtual_address;
    DAT_LMR_COOKIE          shared_memory_id;
} DAT_SHARED_MEMORY;

/* What dat_lmr_create() registers (16 bytes, passed by value). */
typedef union dat_region_description
{
    DAT_PVOID               for_va;
    DAT_LMR_HANDLE          for_lmr_handle;
    DAT_SHARED_MEMORY       for_shared_memory;
} DAT_REGION_DESCRIPTION;

struct dat_lmr_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_MEM_TYPE            mem_type;
    DAT_REGION_DESCRIPTION  region_desc;
    DAT_VLEN                length;
    DAT_PZ_HANDLE           pz_handle;
    DAT_MEM_PRIV_FLAGS      mem_priv;
    DAT_VA_TYPE             va_type;
    DAT_LMR_CONTEXT         lmr_context;
    DAT_RMR_CONTEXT         rmr_context;
    DAT_VLEN                registered_size;
    DAT_VADDR               registered_address;
};

/* ------------------------------------------------------------------ */
/* Event dispatchers and consumer notification objects                 */
/* ------------------------------------------------------------------ */

struct dat_evd_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_COUNT               evd_qlen;
    DAT_EVD_STATE           evd_state;
    DAT_CNO_HANDLE          cno_handle;
    DAT_EVD_FLAGS           evd_flags;
};

/* Upcall made when a CNO triggers: (instance_data, evd that fired). */
typedef void (*DAT_AGENT_FUNC)(DAT_PVOID, DAT_EVD_HANDLE);

/* An OS wait proxy agent (16 bytes, passed by value). */
typedef struct dat_os_wait_proxy_agent
{
    DAT_PVOID               instance_data;
    DAT_AGENT_FUNC          proxy_agent_func;
} DAT_OS_WAIT_PROXY_AGENT;

/* "No agent". */
#ifdef __cplusplus
#define DAT_OS_WAIT_PROXY_AGENT_NULL (DAT_OS_WAIT_PROXY_AGENT{NULL, NULL})
#else
#define DAT_OS_WAIT_PROXY_AGENT_NULL ((DAT_OS_WAIT_PROXY_AGENT){NULL, NULL})
#endif

/* How a CNO notifies: not at all, through an agent, or on a file descriptor. */
typedef enum dat_proxy_type
{
    DAT_PROXY_TYPE_NONE  = 0x00,
    DAT_PROXY_TYPE_AGENT = 0x01,
    DAT_PROXY_TYPE_FD    = 0x02
} DAT_PROXY_TYPE;

/*
 * Note the values: DAT_CNO_FIELD_PROXY (3) is not a single bit and
 * DAT_CNO_FIELD_ALL (4) is not the union of the others (as in OFED's
 * headers); DAT 1.2's DAT_CNO_FIELD_AGENT is gone.
 */
typedef enum dat_cno_param_mask
{
    DAT_CNO_FIELD_IA_HANDLE  = 0x01,
    DAT_CNO_FIELD_PROXY_TYPE = 0x02,
    DAT_CNO_FIELD_PROXY      = 0x03,
    DAT_CNO_FIELD_ALL        = 0x04
} DAT_CNO_PARAM_MASK;

typedef struct dat_cno_param
{
    DAT_IA_HANDLE           ia_handle;
    DAT_PROXY_TYPE          proxy_type;
    union                               /* selected by proxy_type */
    {
        DAT_OS_WAIT_PROXY_AGENT agent;
        DAT_FD              fd;
        DAT_PVOID           none;
    } proxy;
} DAT_CNO_PARAM;

/* ------------------------------------------------------------------ */
/* Interface adapter and provider attributes                           */
/* ------------------------------------------------------------------ */

/* 688 bytes on LP64. */
struct dat_ia_attr
{
    char                    adapter_name[DAT_NAME_MAX_LENGTH];
    char                    vendor_name[DAT_NAME_MAX_LENGTH];
    DAT_UINT32              hardware_version_major;
    DAT_UINT32              hardware_version_minor;
    DAT_UINT32              firmware_version_major;
    DAT_UINT32              firmware_version_minor;
    DAT_IA_ADDRESS_PTR      ia_address_ptr;
    DAT_COUNT               max_eps;
    DAT_COUNT               max_dto_per_ep;
    DAT_COUNT               max_rdma_read_per_ep_in;
    DAT_COUNT               max_rdma_read_per_ep_out;
    DAT_COUNT               max_evds;
    DAT_COUNT               max_evd_qlen;
    DAT_COUNT               max_iov_segments_per_dto;
    DAT_COUNT               max_lmrs;
    DAT_SEG_LENGTH          max_lmr_block_size;
    DAT_VADDR               max_lmr_virtual_address;
    DAT_COUNT               max_pzs;
    DAT_SEG_LENGTH          max_message_size;
    DAT_SEG_LENGTH          max_rdma_size;
    DAT_COUNT               max_rmrs;
    DAT_VADDR               max_rmr_target_address;
    DAT_COUNT               max_srqs;
    DAT_COUNT               max_ep_per_srq;
    DAT_COUNT               max_recv_per_srq;
    DAT_COUNT               max_iov_segments_per_rdma_read;
    DAT_COUNT               max_iov_segments_per_rdma_write;
    DAT_COUNT               max_rdma_read_in;
    DAT_COUNT               max_rdma_read_out;
    DAT_BOOLEAN             max_rdma_read_per_ep_in_guaranteed;
    DAT_BOOLEAN             max_rdma_read_per_ep_out_guaranteed;
    DAT_BOOLEAN             zb_supported;
    DAT_EXTENSION           extension_supported;
    DAT_COUNT               extension_version;
    DAT_COUNT               num_transport_attr;
    DAT_NAMED_ATTR *        transport_attr;
    DAT_COUNT               num_vendor_attr;
    DAT_NAMED_ATTR *        vendor_attr;
};

/* 520 bytes on LP64. */
struct dat_provider_attr
{
    char                    provider_name[DAT_NAME_MAX_LENGTH];
    DAT_UINT32              provider_version_major;
    DAT_UINT32              provider_version_minor;
    DAT_UINT32              dapl_version_major;
    DAT_UINT32              dapl_version_minor;
    DAT_MEM_TYPE            lmr_mem_types_supported;
    DAT_IOV_OWNERSHIP       iov_ownership_on_return;
    DAT_QOS                 dat_qos_supported;
    DAT_COMPLETION_FLAGS    completion_flags_supported;
    DAT_BOOLEAN             is_thread_safe;
    DAT_COUNT               max_private_data_size;
    DAT_BOOLEAN             supports_multipath;
    DAT_EP_CREATOR_FOR_PSP  ep_creator;
    DAT_PZ_SUPPORT          pz_support;
    DAT_UINT32              optimal_buffer_alignment;
    /*
     * const in C, as in the reference headers.  C++ drops the qualifier
     * (same layout) because a const member would delete the implicit
     * default constructor and make "DAT_PROVIDER_ATTR attr;" ill-formed.
     */
#ifdef __cplusplus
    DAT_BOOLEAN             evd_stream_merging_supported[6][6];
#else
    const DAT_BOOLEAN       evd_stream_merging_supported[6][6];
#endif
    DAT_BOOLEAN             srq_supported;
    DAT_COUNT               srq_watermarks_supported;
    DAT_BOOLEAN             srq_ep_pz_difference_supported;
    DAT_COUNT               srq_info_supported;
    DAT_COUNT               ep_recv_info_supported;
    DAT_BOOLEAN             lmr_sync_req;
    DAT_BOOLEAN             dto_async_return_guaranteed;
    DAT_BOOLEAN             rdma_write_for_rdma_read_req;
    DAT_BOOLEAN             rdma_read_lmr_rmr_context_exposure;
    DAT_RMR_SCOPE           rmr_scope_supported;
    DAT_BOOLEAN             is_signal_safe;
    DAT_BOOLEAN             ha_supported;
    DAT_HA_LB               ha_loadbalancing;
    DAT_COUNT               num_provider_specific_attr;
    DAT_NAMED_ATTR *        provider_specific_attr;
};

/* ------------------------------------------------------------------ */
/* User-level calls                                                    */
/* ------------------------------------------------------------------ */

/* Local memory regions */
DAT_EXPORT DAT_RETURN dat_lmr_create(
    DAT_IA_HANDLE ia_handle,
    DAT_MEM_TYPE mem_type,
    DAT_REGION_DESCRIPTION region_description,
    DAT_VLEN length,
    DAT_PZ_HANDLE pz_handle,
    DAT_MEM_PRIV_FLAGS privileges,
    DAT_VA_TYPE va_type,
    DAT_LMR_HANDLE *lmr_handle,
    DAT_LMR_CONTEXT *lmr_context,
    DAT_RMR_CONTEXT *rmr_context,
    DAT_VLEN *registered_length,
    DAT_VADDR *registered_address);

/* Event dispatchers */
DAT_EXPORT DAT_RETURN dat_evd_create(
    DAT_IA_HANDLE ia_handle,
    DAT_COUNT evd_min_qlen,
    DAT_CNO_HANDLE cno_handle,
    DAT_EVD_FLAGS evd_flags,
    DAT_EVD_HANDLE *evd_handle);

DAT_EXPORT DAT_RETURN dat_evd_modify_cno(
    DAT_EVD_HANDLE evd_handle,
    DAT_CNO_HANDLE cno_handle);

DAT_EXPORT DAT_RETURN dat_evd_enable(
    DAT_EVD_HANDLE evd_handle);

DAT_EXPORT DAT_RETURN dat_evd_disable(
    DAT_EVD_HANDLE evd_handle);

DAT_EXPORT DAT_RETURN dat_evd_wait(
    DAT_EVD_HANDLE evd_handle,
    DAT_TIMEOUT Timeout,
    DAT_COUNT Threshold,
    DAT_EVENT *event,
    DAT_COUNT *n_more_events);

DAT_EXPORT DAT_RETURN dat_evd_set_unwaitable(
    DAT_EVD_HANDLE evd_handle);

DAT_EXPORT DAT_RETURN dat_evd_clear_unwaitable(
    DAT_EVD_HANDLE evd_handle);

/* Consumer notification objects */
DAT_EXPORT DAT_RETURN dat_cno_create(
    DAT_IA_HANDLE ia_handle,
    DAT_OS_WAIT_PROXY_AGENT agent,
    DAT_CNO_HANDLE *cno_handle);

DAT_EXPORT DAT_RETURN dat_cno_modify_agent(
    DAT_CNO_HANDLE cno_handle,
    DAT_OS_WAIT_PROXY_AGENT agent);

DAT_EXPORT DAT_RETURN dat_cno_query(
    DAT_CNO_HANDLE cno_handle,
    DAT_CNO_PARAM_MASK cno_param_mask,
    DAT_CNO_PARAM *cno_param);

DAT_EXPORT DAT_RETURN dat_cno_free(
    DAT_CNO_HANDLE cno_handle);

DAT_EXPORT DAT_RETURN dat_cno_wait(
    DAT_CNO_HANDLE cno_handle,
    DAT_TIMEOUT timeout,
    DAT_EVD_HANDLE *evd_handle);

DAT_EXPORT DAT_RETURN dat_cno_fd_create(
    DAT_IA_HANDLE ia_handle,
    DAT_FD *fd,
    DAT_CNO_HANDLE *cno_handle);

DAT_EXPORT DAT_RETURN dat_cno_trigger(
    DAT_CNO_HANDLE cno_handle,
    DAT_EVD_HANDLE *evd_handle);
#ifdef __cplusplus
}
#endif

#endif /* _UDAT_H_ */
