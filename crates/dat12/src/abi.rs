//! Rust mirrors of the DAT 1.2 C types in `include/dat` (OFED compat-dapl ABI,
//! Linux x86_64).
//!
//! Names are the C names verbatim.  C enumerated types are `u32` aliases plus
//! constants (never Rust enums: C callers may pass any value).  Structures and
//! unions are `#[repr(C)]`; their layout is checked against the reference dump
//! by the generated tests in `abi_layout_tests.rs` (`tests/abi/gen_checks.py`).
//! Function-pointer types are `Option<unsafe extern "C" fn ...>` so that a NULL
//! slot is representable.
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code)]

use libc::{c_char, c_int};

// The definitions both ABIs share (crates/face/abi_common.rs).
#[path = "../../face/abi_common.rs"]
mod common;
pub use common::*;

// ---------------------------------------------------------------------------
// Constants (values of the "1.2 OFED compat-dapl" column of constants.md).
// Solaris differences: DAT_NOT_IMPLEMENTED 0x0fff0000, DAT_PZ_SAME 1 /
// DAT_PZ_SHAREABLE 2, plus DAT_MEM_TYPE_SO_VIRTUAL 3,
// DAT_MEM_PRIV_RO_DISABLE_FLAG 0x100 and subtype DAT_INVALID_RO_COOKIE 0x66.
// ---------------------------------------------------------------------------

pub const DAT_NOT_IMPLEMENTED: DAT_RETURN_TYPE = 0xffff0000;

pub const DAT_INVALID_HANDLE1: DAT_RETURN_SUBTYPE = 0x1a;
pub const DAT_INVALID_HANDLE2: DAT_RETURN_SUBTYPE = 0x1b;
pub const DAT_INVALID_HANDLE3: DAT_RETURN_SUBTYPE = 0x1c;
pub const DAT_INVALID_HANDLE4: DAT_RETURN_SUBTYPE = 0x1d;
pub const DAT_INVALID_HANDLE5: DAT_RETURN_SUBTYPE = 0x1e;
pub const DAT_INVALID_HANDLE6: DAT_RETURN_SUBTYPE = 0x1f;
pub const DAT_INVALID_HANDLE7: DAT_RETURN_SUBTYPE = 0x20;
pub const DAT_INVALID_HANDLE8: DAT_RETURN_SUBTYPE = 0x21;
pub const DAT_INVALID_HANDLE9: DAT_RETURN_SUBTYPE = 0x22;
pub const DAT_INVALID_HANDLE10: DAT_RETURN_SUBTYPE = 0x23;
pub const DAT_INVALID_ARG1: DAT_RETURN_SUBTYPE = 0x24;
pub const DAT_INVALID_ARG2: DAT_RETURN_SUBTYPE = 0x25;
pub const DAT_INVALID_ARG3: DAT_RETURN_SUBTYPE = 0x26;
pub const DAT_INVALID_ARG4: DAT_RETURN_SUBTYPE = 0x27;
pub const DAT_INVALID_ARG5: DAT_RETURN_SUBTYPE = 0x28;
pub const DAT_INVALID_ARG6: DAT_RETURN_SUBTYPE = 0x29;
pub const DAT_INVALID_ARG7: DAT_RETURN_SUBTYPE = 0x2a;
pub const DAT_INVALID_ARG8: DAT_RETURN_SUBTYPE = 0x2b;
pub const DAT_INVALID_ARG9: DAT_RETURN_SUBTYPE = 0x2c;
pub const DAT_INVALID_ARG10: DAT_RETURN_SUBTYPE = 0x2d;
pub const DAT_INVALID_STATE_EP_UNCONNECTED: DAT_RETURN_SUBTYPE = 0x2e;
pub const DAT_INVALID_STATE_EP_ACTCONNPENDING: DAT_RETURN_SUBTYPE = 0x2f;
pub const DAT_INVALID_STATE_EP_PASSCONNPENDING: DAT_RETURN_SUBTYPE = 0x30;
pub const DAT_INVALID_STATE_EP_TENTCONNPENDING: DAT_RETURN_SUBTYPE = 0x31;
pub const DAT_INVALID_STATE_EP_CONNECTED: DAT_RETURN_SUBTYPE = 0x32;
pub const DAT_INVALID_STATE_EP_DISCONNECTED: DAT_RETURN_SUBTYPE = 0x33;
pub const DAT_INVALID_STATE_EP_RESERVED: DAT_RETURN_SUBTYPE = 0x34;
pub const DAT_INVALID_STATE_EP_COMPLPENDING: DAT_RETURN_SUBTYPE = 0x35;
pub const DAT_INVALID_STATE_EP_DISCPENDING: DAT_RETURN_SUBTYPE = 0x36;
pub const DAT_INVALID_STATE_EP_PROVIDERCONTROL: DAT_RETURN_SUBTYPE = 0x37;
pub const DAT_INVALID_STATE_EP_NOTREADY: DAT_RETURN_SUBTYPE = 0x38;
pub const DAT_INVALID_STATE_EP_RECV_WATERMARK: DAT_RETURN_SUBTYPE = 0x39;
pub const DAT_INVALID_STATE_EP_PZ: DAT_RETURN_SUBTYPE = 0x3a;
pub const DAT_INVALID_STATE_EP_EVD_REQUEST: DAT_RETURN_SUBTYPE = 0x3b;
pub const DAT_INVALID_STATE_EP_EVD_RECV: DAT_RETURN_SUBTYPE = 0x3c;
pub const DAT_INVALID_STATE_EP_EVD_CONNECT: DAT_RETURN_SUBTYPE = 0x3d;
pub const DAT_INVALID_STATE_EP_UNCONFIGURED: DAT_RETURN_SUBTYPE = 0x3e;
pub const DAT_INVALID_STATE_EP_UNCONFRESERVED: DAT_RETURN_SUBTYPE = 0x3f;
pub const DAT_INVALID_STATE_EP_UNCONFPASSIVE: DAT_RETURN_SUBTYPE = 0x40;
pub const DAT_INVALID_STATE_EP_UNCONFTENTATIVE: DAT_RETURN_SUBTYPE = 0x41;
pub const DAT_INVALID_STATE_CNO_IN_USE: DAT_RETURN_SUBTYPE = 0x42;
pub const DAT_INVALID_STATE_CNO_DEAD: DAT_RETURN_SUBTYPE = 0x43;
pub const DAT_INVALID_STATE_EVD_OPEN: DAT_RETURN_SUBTYPE = 0x44;
pub const DAT_INVALID_STATE_EVD_ENABLED: DAT_RETURN_SUBTYPE = 0x45;
pub const DAT_INVALID_STATE_EVD_DISABLED: DAT_RETURN_SUBTYPE = 0x46;
pub const DAT_INVALID_STATE_EVD_WAITABLE: DAT_RETURN_SUBTYPE = 0x47;
pub const DAT_INVALID_STATE_EVD_UNWAITABLE: DAT_RETURN_SUBTYPE = 0x48;
pub const DAT_INVALID_STATE_EVD_IN_USE: DAT_RETURN_SUBTYPE = 0x49;
pub const DAT_INVALID_STATE_EVD_CONFIG_NOTIFY: DAT_RETURN_SUBTYPE = 0x4a;
pub const DAT_INVALID_STATE_EVD_CONFIG_SOLICITED: DAT_RETURN_SUBTYPE = 0x4b;
pub const DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD: DAT_RETURN_SUBTYPE = 0x4c;
pub const DAT_INVALID_STATE_EVD_WAITER: DAT_RETURN_SUBTYPE = 0x4d;
pub const DAT_INVALID_STATE_EVD_ASYNC: DAT_RETURN_SUBTYPE = 0x4e;
pub const DAT_INVALID_STATE_IA_IN_USE: DAT_RETURN_SUBTYPE = 0x4f;
pub const DAT_INVALID_STATE_LMR_IN_USE: DAT_RETURN_SUBTYPE = 0x50;
pub const DAT_INVALID_STATE_LMR_FREE: DAT_RETURN_SUBTYPE = 0x51;
pub const DAT_INVALID_STATE_PZ_IN_USE: DAT_RETURN_SUBTYPE = 0x52;
pub const DAT_INVALID_STATE_PZ_FREE: DAT_RETURN_SUBTYPE = 0x53;
pub const DAT_INVALID_STATE_SRQ_OPERATIONAL: DAT_RETURN_SUBTYPE = 0x54;
pub const DAT_INVALID_STATE_SRQ_ERROR: DAT_RETURN_SUBTYPE = 0x55;
pub const DAT_INVALID_STATE_SRQ_IN_USE: DAT_RETURN_SUBTYPE = 0x56;
pub const DAT_PRIVILEGES_READ: DAT_RETURN_SUBTYPE = 0x57;
pub const DAT_PRIVILEGES_WRITE: DAT_RETURN_SUBTYPE = 0x58;
pub const DAT_PRIVILEGES_RDMA_READ: DAT_RETURN_SUBTYPE = 0x59;
pub const DAT_PRIVILEGES_RDMA_WRITE: DAT_RETURN_SUBTYPE = 0x5a;
pub const DAT_PROTECTION_READ: DAT_RETURN_SUBTYPE = 0x5b;
pub const DAT_PROTECTION_WRITE: DAT_RETURN_SUBTYPE = 0x5c;
pub const DAT_PROTECTION_RDMA_READ: DAT_RETURN_SUBTYPE = 0x5d;
pub const DAT_PROTECTION_RDMA_WRITE: DAT_RETURN_SUBTYPE = 0x5e;
pub const DAT_INVALID_ADDRESS_UNSUPPORTED: DAT_RETURN_SUBTYPE = 0x5f;
pub const DAT_INVALID_ADDRESS_UNREACHABLE: DAT_RETURN_SUBTYPE = 0x60;
pub const DAT_INVALID_ADDRESS_MALFORMED: DAT_RETURN_SUBTYPE = 0x61;
pub const DAT_NAME_NOT_REGISTERED: DAT_RETURN_SUBTYPE = 0x62;
pub const DAT_MAJOR_NOT_FOUND: DAT_RETURN_SUBTYPE = 0x63;
pub const DAT_MINOR_NOT_FOUND: DAT_RETURN_SUBTYPE = 0x64;
pub const DAT_THREAD_SAFETY_NOT_FOUND: DAT_RETURN_SUBTYPE = 0x65;

pub const DAT_LMR_FIELD_LMR_CONTEXT: DAT_LMR_PARAM_MASK = 0x40;
pub const DAT_LMR_FIELD_RMR_CONTEXT: DAT_LMR_PARAM_MASK = 0x80;
pub const DAT_LMR_FIELD_REGISTERED_SIZE: DAT_LMR_PARAM_MASK = 0x100;
pub const DAT_LMR_FIELD_REGISTERED_ADDRESS: DAT_LMR_PARAM_MASK = 0x200;
pub const DAT_LMR_FIELD_ALL: DAT_LMR_PARAM_MASK = 0x3ff;

pub const DAT_RMR_FIELD_ALL: DAT_RMR_PARAM_MASK = 0x1f;

/// `DAT_SRQ_STATE` values.
pub const DAT_SRQ_STATE_OPERATIONAL: DAT_SRQ_STATE = 0x0;
pub const DAT_SRQ_STATE_ERROR: DAT_SRQ_STATE = 0x1;

pub const DAT_CNO_FIELD_AGENT: DAT_CNO_PARAM_MASK = 0x2;
pub const DAT_CNO_FIELD_ALL: DAT_CNO_PARAM_MASK = 0x3;

// Integer #define constants.
pub const DAT_AF_INET: c_int = libc::AF_INET;
pub const DAT_AF_INET6: c_int = libc::AF_INET6;
pub const DAT_EP_FIELD_ALL: DAT_EP_PARAM_MASK = 0x7ffff7ff;
pub const DAT_EP_FIELD_CONNECT_EVD_HANDLE: DAT_EP_PARAM_MASK = 0x200;
pub const DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR: DAT_EP_PARAM_MASK = 0x4;
pub const DAT_EP_FIELD_LOCAL_PORT_QUAL: DAT_EP_PARAM_MASK = 0x8;
pub const DAT_EP_FIELD_PZ_HANDLE: DAT_EP_PARAM_MASK = 0x40;
pub const DAT_EP_FIELD_RECV_EVD_HANDLE: DAT_EP_PARAM_MASK = 0x80;
pub const DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR: DAT_EP_PARAM_MASK = 0x10;
pub const DAT_EP_FIELD_REMOTE_PORT_QUAL: DAT_EP_PARAM_MASK = 0x20;
pub const DAT_EP_FIELD_REQUEST_EVD_HANDLE: DAT_EP_PARAM_MASK = 0x100;
pub const DAT_EP_FIELD_SRQ_HANDLE: DAT_EP_PARAM_MASK = 0x400;
pub const DAT_EVD_ASYNC_EXISTS: DAT_EVD_HANDLE = 0x1 as DAT_EVD_HANDLE;
pub const DAT_EVD_OUT_OF_SCOPE: DAT_EVD_HANDLE = 0x2 as DAT_EVD_HANDLE;
pub const DAT_IA_ALL: DAT_IA_ATTR_MASK = 0x7ffffffff;
pub const DAT_IA_FIELD_ALL: DAT_IA_ATTR_MASK = 0x7ffffffff;
pub const DAT_IA_FIELD_IA_NUM_TRANSPORT_ATTR: DAT_IA_ATTR_MASK = 0x80000000;
pub const DAT_IA_FIELD_IA_NUM_VENDOR_ATTR: DAT_IA_ATTR_MASK = 0x200000000;
pub const DAT_IA_FIELD_IA_TRANSPORT_ATTR: DAT_IA_ATTR_MASK = 0x100000000;
pub const DAT_IA_FIELD_IA_VENDOR_ATTR: DAT_IA_ATTR_MASK = 0x400000000;
pub const DAT_PROVIDER_FIELD_ALL: DAT_PROVIDER_ATTR_MASK = 0x3ffffff;
pub const DAT_PROVIDER_FIELD_NUM_PROVIDER_SPECIFIC_ATTR: DAT_PROVIDER_ATTR_MASK = 0x1000000;
pub const DAT_PROVIDER_FIELD_PROVIDER_SPECIFIC_ATTR: DAT_PROVIDER_ATTR_MASK = 0x2000000;
pub const DAT_VERSION_MAJOR: DAT_UINT32 = 0x1;
pub const DAT_VERSION_MINOR: DAT_UINT32 = 0x2;

// ---------------------------------------------------------------------------
// Structures and unions (field order and types as in the C headers)
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy)]
pub union DAT_SP_HANDLE {
    pub rsp_handle: DAT_RSP_HANDLE,
    pub psp_handle: DAT_PSP_HANDLE,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_DTO_COMPLETION_EVENT_DATA {
    pub ep_handle: DAT_EP_HANDLE,
    pub user_cookie: DAT_CONTEXT,
    pub status: DAT_DTO_COMPLETION_STATUS,
    pub transfered_length: DAT_VLEN,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_CR_ARRIVAL_EVENT_DATA {
    pub sp_handle: DAT_SP_HANDLE,
    pub local_ia_address_ptr: DAT_IA_ADDRESS_PTR,
    pub conn_qual: DAT_CONN_QUAL,
    pub cr_handle: DAT_CR_HANDLE,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_EVENT {
    pub event_number: DAT_EVENT_NUMBER,
    pub evd_handle: DAT_EVD_HANDLE,
    pub event_data: DAT_EVENT_DATA,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_LMR_TRIPLET {
    pub lmr_context: DAT_LMR_CONTEXT,
    pub pad: DAT_UINT32,
    pub virtual_address: DAT_VADDR,
    pub segment_length: DAT_VLEN,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_RMR_TRIPLET {
    pub rmr_context: DAT_RMR_CONTEXT,
    pub pad: DAT_UINT32,
    pub target_address: DAT_VADDR,
    pub segment_length: DAT_VLEN,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_EP_ATTR {
    pub service_type: DAT_SERVICE_TYPE,
    pub max_message_size: DAT_VLEN,
    pub max_rdma_size: DAT_VLEN,
    pub qos: DAT_QOS,
    pub recv_completion_flags: DAT_COMPLETION_FLAGS,
    pub request_completion_flags: DAT_COMPLETION_FLAGS,
    pub max_recv_dtos: DAT_COUNT,
    pub max_request_dtos: DAT_COUNT,
    pub max_recv_iov: DAT_COUNT,
    pub max_request_iov: DAT_COUNT,
    pub max_rdma_read_in: DAT_COUNT,
    pub max_rdma_read_out: DAT_COUNT,
    pub srq_soft_hw: DAT_COUNT,
    pub max_rdma_read_iov: DAT_COUNT,
    pub max_rdma_write_iov: DAT_COUNT,
    pub ep_transport_specific_count: DAT_COUNT,
    pub ep_transport_specific: *mut DAT_NAMED_ATTR,
    pub ep_provider_specific_count: DAT_COUNT,
    pub ep_provider_specific: *mut DAT_NAMED_ATTR,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_EP_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub ep_state: DAT_EP_STATE,
    pub local_ia_address_ptr: DAT_IA_ADDRESS_PTR,
    pub local_port_qual: DAT_PORT_QUAL,
    pub remote_ia_address_ptr: DAT_IA_ADDRESS_PTR,
    pub remote_port_qual: DAT_PORT_QUAL,
    pub pz_handle: DAT_PZ_HANDLE,
    pub recv_evd_handle: DAT_EVD_HANDLE,
    pub request_evd_handle: DAT_EVD_HANDLE,
    pub connect_evd_handle: DAT_EVD_HANDLE,
    pub srq_handle: DAT_SRQ_HANDLE,
    pub ep_attr: DAT_EP_ATTR,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_IA_ATTR {
    pub adapter_name: [c_char; 256],
    pub vendor_name: [c_char; 256],
    pub hardware_version_major: DAT_UINT32,
    pub hardware_version_minor: DAT_UINT32,
    pub firmware_version_major: DAT_UINT32,
    pub firmware_version_minor: DAT_UINT32,
    pub ia_address_ptr: DAT_IA_ADDRESS_PTR,
    pub max_eps: DAT_COUNT,
    pub max_dto_per_ep: DAT_COUNT,
    pub max_rdma_read_per_ep_in: DAT_COUNT,
    pub max_rdma_read_per_ep_out: DAT_COUNT,
    pub max_evds: DAT_COUNT,
    pub max_evd_qlen: DAT_COUNT,
    pub max_iov_segments_per_dto: DAT_COUNT,
    pub max_lmrs: DAT_COUNT,
    pub max_lmr_block_size: DAT_VLEN,
    pub max_lmr_virtual_address: DAT_VADDR,
    pub max_pzs: DAT_COUNT,
    pub max_message_size: DAT_VLEN,
    pub max_rdma_size: DAT_VLEN,
    pub max_rmrs: DAT_COUNT,
    pub max_rmr_target_address: DAT_VADDR,
    pub max_srqs: DAT_COUNT,
    pub max_ep_per_srq: DAT_COUNT,
    pub max_recv_per_srq: DAT_COUNT,
    pub max_iov_segments_per_rdma_read: DAT_COUNT,
    pub max_iov_segments_per_rdma_write: DAT_COUNT,
    pub max_rdma_read_in: DAT_COUNT,
    pub max_rdma_read_out: DAT_COUNT,
    pub max_rdma_read_per_ep_in_guaranteed: DAT_BOOLEAN,
    pub max_rdma_read_per_ep_out_guaranteed: DAT_BOOLEAN,
    pub num_transport_attr: DAT_COUNT,
    pub transport_attr: *mut DAT_NAMED_ATTR,
    pub num_vendor_attr: DAT_COUNT,
    pub vendor_attr: *mut DAT_NAMED_ATTR,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_PROVIDER_ATTR {
    pub provider_name: [c_char; 256],
    pub provider_version_major: DAT_UINT32,
    pub provider_version_minor: DAT_UINT32,
    pub dapl_version_major: DAT_UINT32,
    pub dapl_version_minor: DAT_UINT32,
    pub lmr_mem_types_supported: DAT_MEM_TYPE,
    pub iov_ownership_on_return: DAT_IOV_OWNERSHIP,
    pub dat_qos_supported: DAT_QOS,
    pub completion_flags_supported: DAT_COMPLETION_FLAGS,
    pub is_thread_safe: DAT_BOOLEAN,
    pub max_private_data_size: DAT_COUNT,
    pub supports_multipath: DAT_BOOLEAN,
    pub ep_creator: DAT_EP_CREATOR_FOR_PSP,
    pub pz_support: DAT_PZ_SUPPORT,
    pub optimal_buffer_alignment: DAT_UINT32,
    pub evd_stream_merging_supported: [[DAT_BOOLEAN; 6]; 6],
    pub srq_supported: DAT_BOOLEAN,
    pub srq_watermarks_supported: DAT_COUNT,
    pub srq_ep_pz_difference_supported: DAT_BOOLEAN,
    pub srq_info_supported: DAT_COUNT,
    pub ep_recv_info_supported: DAT_COUNT,
    pub lmr_sync_req: DAT_BOOLEAN,
    pub dto_async_return_guaranteed: DAT_BOOLEAN,
    pub rdma_write_for_rdma_read_req: DAT_BOOLEAN,
    pub num_provider_specific_attr: DAT_COUNT,
    pub provider_specific_attr: *mut DAT_NAMED_ATTR,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_LMR_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub mem_type: DAT_MEM_TYPE,
    pub region_desc: DAT_REGION_DESCRIPTION,
    pub length: DAT_VLEN,
    pub pz_handle: DAT_PZ_HANDLE,
    pub mem_priv: DAT_MEM_PRIV_FLAGS,
    pub lmr_context: DAT_LMR_CONTEXT,
    pub rmr_context: DAT_RMR_CONTEXT,
    pub registered_size: DAT_VLEN,
    pub registered_address: DAT_VADDR,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_RMR_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub pz_handle: DAT_PZ_HANDLE,
    pub lmr_triplet: DAT_LMR_TRIPLET,
    pub mem_priv: DAT_MEM_PRIV_FLAGS,
    pub rmr_context: DAT_RMR_CONTEXT,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_CNO_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub agent: DAT_OS_WAIT_PROXY_AGENT,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_PROVIDER {
    pub device_name: *const c_char,
    pub extension: DAT_PVOID,
    pub ia_open_func: DAT_IA_OPEN_FUNC,
    pub ia_query_func: DAT_IA_QUERY_FUNC,
    pub ia_close_func: DAT_IA_CLOSE_FUNC,
    pub set_consumer_context_func: DAT_SET_CONSUMER_CONTEXT_FUNC,
    pub get_consumer_context_func: DAT_GET_CONSUMER_CONTEXT_FUNC,
    pub get_handle_type_func: DAT_GET_HANDLE_TYPE_FUNC,
    pub cno_create_func: DAT_CNO_CREATE_FUNC,
    pub cno_modify_agent_func: DAT_CNO_MODIFY_AGENT_FUNC,
    pub cno_query_func: DAT_CNO_QUERY_FUNC,
    pub cno_free_func: DAT_CNO_FREE_FUNC,
    pub cno_wait_func: DAT_CNO_WAIT_FUNC,
    pub cr_query_func: DAT_CR_QUERY_FUNC,
    pub cr_accept_func: DAT_CR_ACCEPT_FUNC,
    pub cr_reject_func: DAT_CR_REJECT_FUNC,
    pub cr_handoff_func: DAT_CR_HANDOFF_FUNC,
    pub evd_create_func: DAT_EVD_CREATE_FUNC,
    pub evd_query_func: DAT_EVD_QUERY_FUNC,
    pub evd_modify_cno_func: DAT_EVD_MODIFY_CNO_FUNC,
    pub evd_enable_func: DAT_EVD_ENABLE_FUNC,
    pub evd_disable_func: DAT_EVD_DISABLE_FUNC,
    pub evd_wait_func: DAT_EVD_WAIT_FUNC,
    pub evd_resize_func: DAT_EVD_RESIZE_FUNC,
    pub evd_post_se_func: DAT_EVD_POST_SE_FUNC,
    pub evd_dequeue_func: DAT_EVD_DEQUEUE_FUNC,
    pub evd_free_func: DAT_EVD_FREE_FUNC,
    pub ep_create_func: DAT_EP_CREATE_FUNC,
    pub ep_query_func: DAT_EP_QUERY_FUNC,
    pub ep_modify_func: DAT_EP_MODIFY_FUNC,
    pub ep_connect_func: DAT_EP_CONNECT_FUNC,
    pub ep_dup_connect_func: DAT_EP_DUP_CONNECT_FUNC,
    pub ep_disconnect_func: DAT_EP_DISCONNECT_FUNC,
    pub ep_post_send_func: DAT_EP_POST_SEND_FUNC,
    pub ep_post_recv_func: DAT_EP_POST_RECV_FUNC,
    pub ep_post_rdma_read_func: DAT_EP_POST_RDMA_READ_FUNC,
    pub ep_post_rdma_write_func: DAT_EP_POST_RDMA_WRITE_FUNC,
    pub ep_get_status_func: DAT_EP_GET_STATUS_FUNC,
    pub ep_free_func: DAT_EP_FREE_FUNC,
    pub lmr_create_func: DAT_LMR_CREATE_FUNC,
    pub lmr_query_func: DAT_LMR_QUERY_FUNC,
    pub lmr_free_func: DAT_LMR_FREE_FUNC,
    pub rmr_create_func: DAT_RMR_CREATE_FUNC,
    pub rmr_query_func: DAT_RMR_QUERY_FUNC,
    pub rmr_bind_func: DAT_RMR_BIND_FUNC,
    pub rmr_free_func: DAT_RMR_FREE_FUNC,
    pub psp_create_func: DAT_PSP_CREATE_FUNC,
    pub psp_query_func: DAT_PSP_QUERY_FUNC,
    pub psp_free_func: DAT_PSP_FREE_FUNC,
    pub rsp_create_func: DAT_RSP_CREATE_FUNC,
    pub rsp_query_func: DAT_RSP_QUERY_FUNC,
    pub rsp_free_func: DAT_RSP_FREE_FUNC,
    pub pz_create_func: DAT_PZ_CREATE_FUNC,
    pub pz_query_func: DAT_PZ_QUERY_FUNC,
    pub pz_free_func: DAT_PZ_FREE_FUNC,
    pub psp_create_any_func: DAT_PSP_CREATE_ANY_FUNC,
    pub ep_reset_func: DAT_EP_RESET_FUNC,
    pub evd_set_unwaitable_func: DAT_EVD_SET_UNWAITABLE_FUNC,
    pub evd_clear_unwaitable_func: DAT_EVD_CLEAR_UNWAITABLE_FUNC,
    pub lmr_sync_rdma_read_func: DAT_LMR_SYNC_RDMA_READ_FUNC,
    pub lmr_sync_rdma_write_func: DAT_LMR_SYNC_RDMA_WRITE_FUNC,
    pub ep_create_with_srq_func: DAT_EP_CREATE_WITH_SRQ_FUNC,
    pub ep_recv_query_func: DAT_EP_RECV_QUERY_FUNC,
    pub ep_set_watermark_func: DAT_EP_SET_WATERMARK_FUNC,
    pub srq_create_func: DAT_SRQ_CREATE_FUNC,
    pub srq_free_func: DAT_SRQ_FREE_FUNC,
    pub srq_post_recv_func: DAT_SRQ_POST_RECV_FUNC,
    pub srq_query_func: DAT_SRQ_QUERY_FUNC,
    pub srq_resize_func: DAT_SRQ_RESIZE_FUNC,
    pub srq_set_lw_func: DAT_SRQ_SET_LW_FUNC,
}

// ---------------------------------------------------------------------------
// dat_registry.h: provider dispatch-table slot types (signatures of the
// corresponding dat_* calls; the IA open slot takes only the IA name part)
// ---------------------------------------------------------------------------

pub type DAT_CR_REJECT_FUNC = Option<unsafe extern "C" fn(cr_handle: DAT_CR_HANDLE) -> DAT_RETURN>;
pub type DAT_LMR_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        mem_type: DAT_MEM_TYPE,
        region_description: DAT_REGION_DESCRIPTION,
        length: DAT_VLEN,
        pz_handle: DAT_PZ_HANDLE,
        privileges: DAT_MEM_PRIV_FLAGS,
        lmr_handle: *mut DAT_LMR_HANDLE,
        lmr_context: *mut DAT_LMR_CONTEXT,
        rmr_context: *mut DAT_RMR_CONTEXT,
        registered_length: *mut DAT_VLEN,
        registered_address: *mut DAT_VADDR,
    ) -> DAT_RETURN,
>;
pub type DAT_RMR_BIND_FUNC = Option<
    unsafe extern "C" fn(
        rmr_handle: DAT_RMR_HANDLE,
        lmr_triplet: *const DAT_LMR_TRIPLET,
        mem_priv: DAT_MEM_PRIV_FLAGS,
        ep_handle: DAT_EP_HANDLE,
        user_cookie: DAT_RMR_COOKIE,
        completion_flags: DAT_COMPLETION_FLAGS,
        context: *mut DAT_RMR_CONTEXT,
    ) -> DAT_RETURN,
>;
// Generated by tests/abi/gen_checks.py and compared byte for byte by `make -C tests/abi
// regen-check`, so rustfmt leaves it as generated.
#[cfg(test)]
#[rustfmt::skip]
#[path = "abi_layout_tests.rs"]
mod layout_tests;
