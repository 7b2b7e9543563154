//! The C types, constants and layouts the DAT 1.2 (`include/dat`) and DAT 2.0 (`include/dat2`)
//! ABIs share word for word. Compiled into each face's `abi` module, which re-exports it, so a
//! face names these as `abi::X` like its own face-specific definitions; what the two ABIs define
//! differently (error numbering, events, triplets, attribute structures, the provider table)
//! stays in each face's `abi.rs`, and this module reads those through `super`.
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code)]

use super::*;
use libc::{c_char, c_int, c_ulonglong, c_void};

// ---------------------------------------------------------------------------
// dat_platform_specific.h
// ---------------------------------------------------------------------------

pub type DAT_UINT32 = u32;
pub type DAT_UINT64 = u64;
pub type DAT_UVERYLONG = c_ulonglong;
pub type DAT_PVOID = *mut c_void;
pub type DAT_COUNT = c_int;
pub type DAT_SOCK_ADDR = libc::sockaddr;
pub type DAT_SOCK_ADDR6 = libc::sockaddr_in6;

// ---------------------------------------------------------------------------
// dat_error.h
// ---------------------------------------------------------------------------

pub type DAT_RETURN = DAT_UINT32;

/// `DAT_IS_WARNING(status)`: the warning class bit of a return code.
pub const fn DAT_IS_WARNING(status: DAT_RETURN) -> DAT_RETURN {
    status & DAT_CLASS_WARNING
}

/// `DAT_GET_TYPE(status)`: bits 29..16 of a return code.
pub const fn DAT_GET_TYPE(status: DAT_RETURN) -> DAT_RETURN {
    status & DAT_TYPE_MASK
}

/// `DAT_GET_SUBTYPE(status)`: bits 15..0 of a return code.
pub const fn DAT_GET_SUBTYPE(status: DAT_RETURN) -> DAT_RETURN {
    status & DAT_SUBTYPE_MASK
}

/// `DAT_ERROR(type, subtype)` as libdat and providers build it (not part of
/// the consumer headers): `DAT_CLASS_ERROR | type | subtype`.
pub const fn DAT_ERROR(type_: DAT_RETURN_TYPE, subtype: DAT_RETURN_SUBTYPE) -> DAT_RETURN {
    DAT_CLASS_ERROR | type_ | subtype
}

// ---------------------------------------------------------------------------
// dat.h / udat.h: scalar types and handles
// ---------------------------------------------------------------------------

pub type DAT_VLEN = DAT_UINT64;
pub type DAT_VADDR = DAT_UINT64;
pub type DAT_LMR_CONTEXT = DAT_UINT32;
pub type DAT_RMR_CONTEXT = DAT_UINT32;
pub type DAT_TIMEOUT = DAT_UINT32;
pub type DAT_CONN_QUAL = DAT_UINT64;
pub type DAT_PORT_QUAL = DAT_UINT64;
pub type DAT_IA_ADDRESS_PTR = *mut DAT_SOCK_ADDR;
pub type DAT_NAME_PTR = *mut c_char;

pub type DAT_HANDLE = DAT_PVOID;
pub type DAT_CR_HANDLE = DAT_HANDLE;
pub type DAT_EP_HANDLE = DAT_HANDLE;
pub type DAT_EVD_HANDLE = DAT_HANDLE;
pub type DAT_IA_HANDLE = DAT_HANDLE;
pub type DAT_LMR_HANDLE = DAT_HANDLE;
pub type DAT_PSP_HANDLE = DAT_HANDLE;
pub type DAT_PZ_HANDLE = DAT_HANDLE;
pub type DAT_RMR_HANDLE = DAT_HANDLE;
pub type DAT_RSP_HANDLE = DAT_HANDLE;
pub type DAT_SRQ_HANDLE = DAT_HANDLE;
pub type DAT_CNO_HANDLE = DAT_HANDLE;

/// `DAT_HANDLE_NULL`.
pub const DAT_HANDLE_NULL: DAT_HANDLE = core::ptr::null_mut();

pub type DAT_DTO_COOKIE = DAT_CONTEXT;
pub type DAT_RMR_COOKIE = DAT_CONTEXT;

/// 64-bit attribute / parameter masks (the other masks are enumerated types).
pub type DAT_EP_PARAM_MASK = DAT_UINT64;
pub type DAT_IA_ATTR_MASK = DAT_UINT64;
pub type DAT_PROVIDER_ATTR_MASK = DAT_UINT64;

/// `typedef char (*DAT_LMR_COOKIE)[DAT_LMR_COOKIE_SIZE]`.
pub type DAT_LMR_COOKIE = *mut [c_char; DAT_LMR_COOKIE_SIZE];

/// CNO upcall: `void (*)(DAT_PVOID instance_data, DAT_EVD_HANDLE evd)`.
pub type DAT_AGENT_FUNC = Option<unsafe extern "C" fn(instance_data: DAT_PVOID, evd_handle: DAT_EVD_HANDLE)>;

/// `DAT_OS_WAIT_PROXY_AGENT_NULL`.
pub const DAT_OS_WAIT_PROXY_AGENT_NULL: DAT_OS_WAIT_PROXY_AGENT =
    DAT_OS_WAIT_PROXY_AGENT { instance_data: core::ptr::null_mut(), proxy_agent_func: None };

// ---------------------------------------------------------------------------
// Enumerated types (4-byte C enums; all values non-negative, so unsigned)
// ---------------------------------------------------------------------------

pub type DAT_MEM_TYPE = u32;
pub type DAT_HANDLE_TYPE = u32;
pub type DAT_EVD_STATE = u32;
pub type DAT_EVD_PARAM_MASK = u32;
pub type DAT_RETURN_TYPE = u32;
pub type DAT_RETURN_SUBTYPE = u32;
pub type DAT_BOOLEAN = u32;
pub type DAT_COMPLETION_FLAGS = u32;
pub type DAT_QOS = u32;
pub type DAT_CONNECT_FLAGS = u32;
pub type DAT_CLOSE_FLAGS = u32;
pub type DAT_EVD_FLAGS = u32;
pub type DAT_PSP_FLAGS = u32;
pub type DAT_MEM_PRIV_FLAGS = u32;
pub type DAT_LMR_PARAM_MASK = u32;
pub type DAT_RMR_PARAM_MASK = u32;
pub type DAT_IOV_OWNERSHIP = u32;
pub type DAT_EP_CREATOR_FOR_PSP = u32;
pub type DAT_SERVICE_TYPE = u32;
pub type DAT_EP_STATE = u32;
pub type DAT_SRQ_STATE = u32;
pub type DAT_SRQ_PARAM_MASK = u32;
pub type DAT_PZ_PARAM_MASK = u32;
pub type DAT_PSP_PARAM_MASK = u32;
pub type DAT_RSP_PARAM_MASK = u32;
pub type DAT_CR_PARAM_MASK = u32;
pub type DAT_DTO_COMPLETION_STATUS = u32;
pub type DAT_IA_ASYNC_ERROR_REASON = u32;
pub type DAT_EP_ASYNC_ERROR_REASON = u32;
pub type DAT_EVD_ASYNC_ERROR_REASON = u32;
pub type DAT_SRQ_ASYNC_ERROR_REASON = u32;
pub type DAT_LMR_ASYNC_ERROR_REASON = u32;
pub type DAT_RMR_ASYNC_ERROR_REASON = u32;
pub type DAT_PZ_ASYNC_ERROR_REASON = u32;
pub type DAT_EVENT_NUMBER = u32;
pub type DAT_CNO_PARAM_MASK = u32;
pub type DAT_PZ_SUPPORT = u32;

// ---------------------------------------------------------------------------
// Constants (values of the "1.2 OFED compat-dapl" column of constants.md).
// Solaris differences: DAT_NOT_IMPLEMENTED 0x0fff0000, DAT_PZ_SAME 1 /
// DAT_PZ_SHAREABLE 2, plus DAT_MEM_TYPE_SO_VIRTUAL 3,
// DAT_MEM_PRIV_RO_DISABLE_FLAG 0x100 and subtype DAT_INVALID_RO_COOKIE 0x66.
// ---------------------------------------------------------------------------

/// `DAT_MEM_TYPE` values.
pub const DAT_MEM_TYPE_VIRTUAL: DAT_MEM_TYPE = 0x0;
pub const DAT_MEM_TYPE_LMR: DAT_MEM_TYPE = 0x1;
pub const DAT_MEM_TYPE_SHARED_VIRTUAL: DAT_MEM_TYPE = 0x2;

/// `DAT_HANDLE_TYPE` values.
pub const DAT_HANDLE_TYPE_CR: DAT_HANDLE_TYPE = 0x0;
pub const DAT_HANDLE_TYPE_EP: DAT_HANDLE_TYPE = 0x1;
pub const DAT_HANDLE_TYPE_EVD: DAT_HANDLE_TYPE = 0x2;
pub const DAT_HANDLE_TYPE_IA: DAT_HANDLE_TYPE = 0x3;
pub const DAT_HANDLE_TYPE_LMR: DAT_HANDLE_TYPE = 0x4;
pub const DAT_HANDLE_TYPE_PSP: DAT_HANDLE_TYPE = 0x5;
pub const DAT_HANDLE_TYPE_PZ: DAT_HANDLE_TYPE = 0x6;
pub const DAT_HANDLE_TYPE_RMR: DAT_HANDLE_TYPE = 0x7;
pub const DAT_HANDLE_TYPE_RSP: DAT_HANDLE_TYPE = 0x8;
pub const DAT_HANDLE_TYPE_CNO: DAT_HANDLE_TYPE = 0x9;
pub const DAT_HANDLE_TYPE_SRQ: DAT_HANDLE_TYPE = 0xa;

/// `DAT_EVD_STATE` values.
pub const DAT_EVD_STATE_ENABLED: DAT_EVD_STATE = 0x1;
pub const DAT_EVD_STATE_DISABLED: DAT_EVD_STATE = 0x2;
pub const DAT_EVD_STATE_WAITABLE: DAT_EVD_STATE = 0x4;
pub const DAT_EVD_STATE_UNWAITABLE: DAT_EVD_STATE = 0x8;
pub const DAT_EVD_STATE_CONFIG_NOTIFY: DAT_EVD_STATE = 0x10;
pub const DAT_EVD_STATE_CONFIG_SOLICITED: DAT_EVD_STATE = 0x20;
pub const DAT_EVD_STATE_CONFIG_THRESHOLD: DAT_EVD_STATE = 0x30;

/// `DAT_EVD_PARAM_MASK` values.
pub const DAT_EVD_FIELD_IA_HANDLE: DAT_EVD_PARAM_MASK = 0x1;
pub const DAT_EVD_FIELD_EVD_QLEN: DAT_EVD_PARAM_MASK = 0x2;
pub const DAT_EVD_FIELD_EVD_STATE: DAT_EVD_PARAM_MASK = 0x4;
pub const DAT_EVD_FIELD_CNO: DAT_EVD_PARAM_MASK = 0x8;
pub const DAT_EVD_FIELD_EVD_FLAGS: DAT_EVD_PARAM_MASK = 0x10;
pub const DAT_EVD_FIELD_ALL: DAT_EVD_PARAM_MASK = 0x1f;

/// `DAT_RETURN_TYPE` values.
pub const DAT_SUCCESS: DAT_RETURN_TYPE = 0x0;
pub const DAT_ABORT: DAT_RETURN_TYPE = 0x10000;
pub const DAT_CONN_QUAL_IN_USE: DAT_RETURN_TYPE = 0x20000;
pub const DAT_INSUFFICIENT_RESOURCES: DAT_RETURN_TYPE = 0x30000;
pub const DAT_INTERNAL_ERROR: DAT_RETURN_TYPE = 0x40000;
pub const DAT_INVALID_HANDLE: DAT_RETURN_TYPE = 0x50000;
pub const DAT_INVALID_PARAMETER: DAT_RETURN_TYPE = 0x60000;
pub const DAT_INVALID_STATE: DAT_RETURN_TYPE = 0x70000;
pub const DAT_LENGTH_ERROR: DAT_RETURN_TYPE = 0x80000;
pub const DAT_MODEL_NOT_SUPPORTED: DAT_RETURN_TYPE = 0x90000;
pub const DAT_PROVIDER_NOT_FOUND: DAT_RETURN_TYPE = 0xa0000;
pub const DAT_PRIVILEGES_VIOLATION: DAT_RETURN_TYPE = 0xb0000;
pub const DAT_PROTECTION_VIOLATION: DAT_RETURN_TYPE = 0xc0000;
pub const DAT_QUEUE_EMPTY: DAT_RETURN_TYPE = 0xd0000;
pub const DAT_QUEUE_FULL: DAT_RETURN_TYPE = 0xe0000;
pub const DAT_TIMEOUT_EXPIRED: DAT_RETURN_TYPE = 0xf0000;
pub const DAT_PROVIDER_ALREADY_REGISTERED: DAT_RETURN_TYPE = 0x100000;
pub const DAT_PROVIDER_IN_USE: DAT_RETURN_TYPE = 0x110000;
pub const DAT_INVALID_ADDRESS: DAT_RETURN_TYPE = 0x120000;
pub const DAT_INTERRUPTED_CALL: DAT_RETURN_TYPE = 0x130000;
pub const DAT_CONN_QUAL_UNAVAILABLE: DAT_RETURN_TYPE = 0x140000;
/// `DAT_RETURN_SUBTYPE` values.
pub const DAT_NO_SUBTYPE: DAT_RETURN_SUBTYPE = 0x0;
pub const DAT_SUB_INTERRUPTED: DAT_RETURN_SUBTYPE = 0x1;
pub const DAT_RESOURCE_MEMORY: DAT_RETURN_SUBTYPE = 0x2;
pub const DAT_RESOURCE_DEVICE: DAT_RETURN_SUBTYPE = 0x3;
pub const DAT_RESOURCE_TEP: DAT_RETURN_SUBTYPE = 0x4;
pub const DAT_RESOURCE_TEVD: DAT_RETURN_SUBTYPE = 0x5;
pub const DAT_RESOURCE_PROTECTION_DOMAIN: DAT_RETURN_SUBTYPE = 0x6;
pub const DAT_RESOURCE_MEMORY_REGION: DAT_RETURN_SUBTYPE = 0x7;
pub const DAT_RESOURCE_ERROR_HANDLER: DAT_RETURN_SUBTYPE = 0x8;
pub const DAT_RESOURCE_CREDITS: DAT_RETURN_SUBTYPE = 0x9;
pub const DAT_RESOURCE_SRQ: DAT_RETURN_SUBTYPE = 0xa;
pub const DAT_INVALID_HANDLE_IA: DAT_RETURN_SUBTYPE = 0xb;
pub const DAT_INVALID_HANDLE_EP: DAT_RETURN_SUBTYPE = 0xc;
pub const DAT_INVALID_HANDLE_LMR: DAT_RETURN_SUBTYPE = 0xd;
pub const DAT_INVALID_HANDLE_RMR: DAT_RETURN_SUBTYPE = 0xe;
pub const DAT_INVALID_HANDLE_PZ: DAT_RETURN_SUBTYPE = 0xf;
pub const DAT_INVALID_HANDLE_PSP: DAT_RETURN_SUBTYPE = 0x10;
pub const DAT_INVALID_HANDLE_RSP: DAT_RETURN_SUBTYPE = 0x11;
pub const DAT_INVALID_HANDLE_CR: DAT_RETURN_SUBTYPE = 0x12;
pub const DAT_INVALID_HANDLE_CNO: DAT_RETURN_SUBTYPE = 0x13;
pub const DAT_INVALID_HANDLE_EVD_CR: DAT_RETURN_SUBTYPE = 0x14;
pub const DAT_INVALID_HANDLE_EVD_REQUEST: DAT_RETURN_SUBTYPE = 0x15;
pub const DAT_INVALID_HANDLE_EVD_RECV: DAT_RETURN_SUBTYPE = 0x16;
pub const DAT_INVALID_HANDLE_EVD_CONN: DAT_RETURN_SUBTYPE = 0x17;
pub const DAT_INVALID_HANDLE_EVD_ASYNC: DAT_RETURN_SUBTYPE = 0x18;
pub const DAT_INVALID_HANDLE_SRQ: DAT_RETURN_SUBTYPE = 0x19;
/// `DAT_BOOLEAN` values.
pub const DAT_FALSE: DAT_BOOLEAN = 0x0;
pub const DAT_TRUE: DAT_BOOLEAN = 0x1;

/// `DAT_COMPLETION_FLAGS` values.
pub const DAT_COMPLETION_DEFAULT_FLAG: DAT_COMPLETION_FLAGS = 0x0;
pub const DAT_COMPLETION_SUPPRESS_FLAG: DAT_COMPLETION_FLAGS = 0x1;
pub const DAT_COMPLETION_SOLICITED_WAIT_FLAG: DAT_COMPLETION_FLAGS = 0x2;
pub const DAT_COMPLETION_UNSIGNALLED_FLAG: DAT_COMPLETION_FLAGS = 0x4;
pub const DAT_COMPLETION_BARRIER_FENCE_FLAG: DAT_COMPLETION_FLAGS = 0x8;
pub const DAT_COMPLETION_EVD_THRESHOLD_FLAG: DAT_COMPLETION_FLAGS = 0x10;

/// `DAT_QOS` values.
pub const DAT_QOS_BEST_EFFORT: DAT_QOS = 0x0;
pub const DAT_QOS_HIGH_THROUGHPUT: DAT_QOS = 0x1;
pub const DAT_QOS_LOW_LATENCY: DAT_QOS = 0x2;
pub const DAT_QOS_ECONOMY: DAT_QOS = 0x4;
pub const DAT_QOS_PREMIUM: DAT_QOS = 0x8;

/// `DAT_CONNECT_FLAGS` values.
pub const DAT_CONNECT_DEFAULT_FLAG: DAT_CONNECT_FLAGS = 0x0;
pub const DAT_CONNECT_MULTIPATH_FLAG: DAT_CONNECT_FLAGS = 0x1;

/// `DAT_CLOSE_FLAGS` values.
pub const DAT_CLOSE_ABRUPT_FLAG: DAT_CLOSE_FLAGS = 0x0;
pub const DAT_CLOSE_GRACEFUL_FLAG: DAT_CLOSE_FLAGS = 0x1;

/// `DAT_EVD_FLAGS` values.
pub const DAT_EVD_SOFTWARE_FLAG: DAT_EVD_FLAGS = 0x1;
pub const DAT_EVD_CR_FLAG: DAT_EVD_FLAGS = 0x10;
pub const DAT_EVD_DTO_FLAG: DAT_EVD_FLAGS = 0x20;
pub const DAT_EVD_CONNECTION_FLAG: DAT_EVD_FLAGS = 0x40;
pub const DAT_EVD_RMR_BIND_FLAG: DAT_EVD_FLAGS = 0x80;
pub const DAT_EVD_ASYNC_FLAG: DAT_EVD_FLAGS = 0x100;
pub const DAT_EVD_DEFAULT_FLAG: DAT_EVD_FLAGS = 0x1f0;

/// `DAT_PSP_FLAGS` values.
pub const DAT_PSP_CONSUMER_FLAG: DAT_PSP_FLAGS = 0x0;
pub const DAT_PSP_PROVIDER_FLAG: DAT_PSP_FLAGS = 0x1;

/// `DAT_MEM_PRIV_FLAGS` values.
pub const DAT_MEM_PRIV_NONE_FLAG: DAT_MEM_PRIV_FLAGS = 0x0;
pub const DAT_MEM_PRIV_LOCAL_READ_FLAG: DAT_MEM_PRIV_FLAGS = 0x1;
pub const DAT_MEM_PRIV_REMOTE_READ_FLAG: DAT_MEM_PRIV_FLAGS = 0x2;
pub const DAT_MEM_PRIV_LOCAL_WRITE_FLAG: DAT_MEM_PRIV_FLAGS = 0x10;
pub const DAT_MEM_PRIV_REMOTE_WRITE_FLAG: DAT_MEM_PRIV_FLAGS = 0x20;
pub const DAT_MEM_PRIV_ALL_FLAG: DAT_MEM_PRIV_FLAGS = 0x33;

/// `DAT_LMR_PARAM_MASK` values.
pub const DAT_LMR_FIELD_IA_HANDLE: DAT_LMR_PARAM_MASK = 0x1;
pub const DAT_LMR_FIELD_MEM_TYPE: DAT_LMR_PARAM_MASK = 0x2;
pub const DAT_LMR_FIELD_REGION_DESC: DAT_LMR_PARAM_MASK = 0x4;
pub const DAT_LMR_FIELD_LENGTH: DAT_LMR_PARAM_MASK = 0x8;
pub const DAT_LMR_FIELD_PZ_HANDLE: DAT_LMR_PARAM_MASK = 0x10;
pub const DAT_LMR_FIELD_MEM_PRIV: DAT_LMR_PARAM_MASK = 0x20;
/// `DAT_RMR_PARAM_MASK` values.
pub const DAT_RMR_FIELD_IA_HANDLE: DAT_RMR_PARAM_MASK = 0x1;
pub const DAT_RMR_FIELD_PZ_HANDLE: DAT_RMR_PARAM_MASK = 0x2;
pub const DAT_RMR_FIELD_LMR_TRIPLET: DAT_RMR_PARAM_MASK = 0x4;
pub const DAT_RMR_FIELD_MEM_PRIV: DAT_RMR_PARAM_MASK = 0x8;
pub const DAT_RMR_FIELD_RMR_CONTEXT: DAT_RMR_PARAM_MASK = 0x10;
/// `DAT_IOV_OWNERSHIP` values.
pub const DAT_IOV_CONSUMER: DAT_IOV_OWNERSHIP = 0x0;
pub const DAT_IOV_PROVIDER_NOMOD: DAT_IOV_OWNERSHIP = 0x1;
pub const DAT_IOV_PROVIDER_MOD: DAT_IOV_OWNERSHIP = 0x2;

/// `DAT_EP_CREATOR_FOR_PSP` values.
pub const DAT_PSP_CREATES_EP_NEVER: DAT_EP_CREATOR_FOR_PSP = 0x0;
pub const DAT_PSP_CREATES_EP_IFASKED: DAT_EP_CREATOR_FOR_PSP = 0x1;
pub const DAT_PSP_CREATES_EP_ALWAYS: DAT_EP_CREATOR_FOR_PSP = 0x2;

/// `DAT_SERVICE_TYPE` values.
pub const DAT_SERVICE_TYPE_RC: DAT_SERVICE_TYPE = 0x0;

/// `DAT_EP_STATE` values.
pub const DAT_EP_STATE_UNCONNECTED: DAT_EP_STATE = 0x0;
pub const DAT_EP_STATE_UNCONFIGURED_UNCONNECTED: DAT_EP_STATE = 0x1;
pub const DAT_EP_STATE_RESERVED: DAT_EP_STATE = 0x2;
pub const DAT_EP_STATE_UNCONFIGURED_RESERVED: DAT_EP_STATE = 0x3;
pub const DAT_EP_STATE_PASSIVE_CONNECTION_PENDING: DAT_EP_STATE = 0x4;
pub const DAT_EP_STATE_UNCONFIGURED_PASSIVE: DAT_EP_STATE = 0x5;
pub const DAT_EP_STATE_ACTIVE_CONNECTION_PENDING: DAT_EP_STATE = 0x6;
pub const DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING: DAT_EP_STATE = 0x7;
pub const DAT_EP_STATE_UNCONFIGURED_TENTATIVE: DAT_EP_STATE = 0x8;
pub const DAT_EP_STATE_CONNECTED: DAT_EP_STATE = 0x9;
pub const DAT_EP_STATE_DISCONNECT_PENDING: DAT_EP_STATE = 0xa;
pub const DAT_EP_STATE_DISCONNECTED: DAT_EP_STATE = 0xb;
pub const DAT_EP_STATE_COMPLETION_PENDING: DAT_EP_STATE = 0xc;

/// `DAT_SRQ_PARAM_MASK` values.
pub const DAT_SRQ_FIELD_IA_HANDLE: DAT_SRQ_PARAM_MASK = 0x1;
pub const DAT_SRQ_FIELD_SRQ_STATE: DAT_SRQ_PARAM_MASK = 0x2;
pub const DAT_SRQ_FIELD_PZ_HANDLE: DAT_SRQ_PARAM_MASK = 0x4;
pub const DAT_SRQ_FIELD_MAX_RECV_DTO: DAT_SRQ_PARAM_MASK = 0x8;
pub const DAT_SRQ_FIELD_MAX_RECV_IOV: DAT_SRQ_PARAM_MASK = 0x10;
pub const DAT_SRQ_FIELD_LOW_WATERMARK: DAT_SRQ_PARAM_MASK = 0x20;
pub const DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT: DAT_SRQ_PARAM_MASK = 0x40;
pub const DAT_SRQ_FIELD_OUTSTANDING_DTO_COUNT: DAT_SRQ_PARAM_MASK = 0x80;
pub const DAT_SRQ_FIELD_ALL: DAT_SRQ_PARAM_MASK = 0xff;

/// `DAT_PZ_PARAM_MASK` values.
pub const DAT_PZ_FIELD_IA_HANDLE: DAT_PZ_PARAM_MASK = 0x1;
pub const DAT_PZ_FIELD_ALL: DAT_PZ_PARAM_MASK = 0x1;

/// `DAT_PSP_PARAM_MASK` values.
pub const DAT_PSP_FIELD_IA_HANDLE: DAT_PSP_PARAM_MASK = 0x1;
pub const DAT_PSP_FIELD_CONN_QUAL: DAT_PSP_PARAM_MASK = 0x2;
pub const DAT_PSP_FIELD_EVD_HANDLE: DAT_PSP_PARAM_MASK = 0x4;
pub const DAT_PSP_FIELD_PSP_FLAGS: DAT_PSP_PARAM_MASK = 0x8;
pub const DAT_PSP_FIELD_ALL: DAT_PSP_PARAM_MASK = 0xf;

/// `DAT_RSP_PARAM_MASK` values.
pub const DAT_RSP_FIELD_IA_HANDLE: DAT_RSP_PARAM_MASK = 0x1;
pub const DAT_RSP_FIELD_CONN_QUAL: DAT_RSP_PARAM_MASK = 0x2;
pub const DAT_RSP_FIELD_EVD_HANDLE: DAT_RSP_PARAM_MASK = 0x4;
pub const DAT_RSP_FIELD_EP_HANDLE: DAT_RSP_PARAM_MASK = 0x8;
pub const DAT_RSP_FIELD_ALL: DAT_RSP_PARAM_MASK = 0xf;

/// `DAT_CR_PARAM_MASK` values.
pub const DAT_CR_FIELD_REMOTE_IA_ADDRESS_PTR: DAT_CR_PARAM_MASK = 0x1;
pub const DAT_CR_FIELD_REMOTE_PORT_QUAL: DAT_CR_PARAM_MASK = 0x2;
pub const DAT_CR_FIELD_PRIVATE_DATA_SIZE: DAT_CR_PARAM_MASK = 0x4;
pub const DAT_CR_FIELD_PRIVATE_DATA: DAT_CR_PARAM_MASK = 0x8;
pub const DAT_CR_FIELD_LOCAL_EP_HANDLE: DAT_CR_PARAM_MASK = 0x10;
pub const DAT_CR_FIELD_ALL: DAT_CR_PARAM_MASK = 0x1f;

/// `DAT_DTO_COMPLETION_STATUS` values.
pub const DAT_DTO_SUCCESS: DAT_DTO_COMPLETION_STATUS = 0x0;
pub const DAT_DTO_ERR_FLUSHED: DAT_DTO_COMPLETION_STATUS = 0x1;
pub const DAT_DTO_ERR_LOCAL_LENGTH: DAT_DTO_COMPLETION_STATUS = 0x2;
pub const DAT_DTO_ERR_LOCAL_EP: DAT_DTO_COMPLETION_STATUS = 0x3;
pub const DAT_DTO_ERR_LOCAL_PROTECTION: DAT_DTO_COMPLETION_STATUS = 0x4;
pub const DAT_DTO_ERR_BAD_RESPONSE: DAT_DTO_COMPLETION_STATUS = 0x5;
pub const DAT_DTO_ERR_REMOTE_ACCESS: DAT_DTO_COMPLETION_STATUS = 0x6;
pub const DAT_DTO_ERR_REMOTE_RESPONDER: DAT_DTO_COMPLETION_STATUS = 0x7;
pub const DAT_DTO_ERR_TRANSPORT: DAT_DTO_COMPLETION_STATUS = 0x8;
pub const DAT_DTO_ERR_RECEIVER_NOT_READY: DAT_DTO_COMPLETION_STATUS = 0x9;
pub const DAT_DTO_ERR_PARTIAL_PACKET: DAT_DTO_COMPLETION_STATUS = 0xa;
pub const DAT_RMR_OPERATION_FAILED: DAT_DTO_COMPLETION_STATUS = 0xb;

/// `DAT_IA_ASYNC_ERROR_REASON` values.
pub const DAT_IA_CATASTROPHIC_ERROR: DAT_IA_ASYNC_ERROR_REASON = 0x0;
pub const DAT_IA_OTHER_ERROR: DAT_IA_ASYNC_ERROR_REASON = 0x1;

/// `DAT_EP_ASYNC_ERROR_REASON` values.
pub const DAT_EP_TRANSFER_TO_ERROR: DAT_EP_ASYNC_ERROR_REASON = 0x0;
pub const DAT_EP_OTHER_ERROR: DAT_EP_ASYNC_ERROR_REASON = 0x1;
pub const DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT: DAT_EP_ASYNC_ERROR_REASON = 0x2;

/// `DAT_EVD_ASYNC_ERROR_REASON` values.
pub const DAT_EVD_OVERFLOW_ERROR: DAT_EVD_ASYNC_ERROR_REASON = 0x0;
pub const DAT_EVD_OTHER_ERROR: DAT_EVD_ASYNC_ERROR_REASON = 0x1;

/// `DAT_SRQ_ASYNC_ERROR_REASON` values.
pub const DAT_SRQ_TRANSFER_TO_ERROR: DAT_SRQ_ASYNC_ERROR_REASON = 0x0;
pub const DAT_SRQ_OTHER_ERROR: DAT_SRQ_ASYNC_ERROR_REASON = 0x1;
pub const DAT_SRQ_LOW_WATERMARK_EVENT: DAT_SRQ_ASYNC_ERROR_REASON = 0x2;

/// `DAT_LMR_ASYNC_ERROR_REASON` values.
pub const DAT_LMR_OTHER_ERROR: DAT_LMR_ASYNC_ERROR_REASON = 0x0;

/// `DAT_RMR_ASYNC_ERROR_REASON` values.
pub const DAT_RMR_OTHER_ERROR: DAT_RMR_ASYNC_ERROR_REASON = 0x0;

/// `DAT_PZ_ASYNC_ERROR_REASON` values.
pub const DAT_PZ_OTHER_ERROR: DAT_PZ_ASYNC_ERROR_REASON = 0x0;

/// `DAT_EVENT_NUMBER` values.
pub const DAT_DTO_COMPLETION_EVENT: DAT_EVENT_NUMBER = 0x1;
pub const DAT_RMR_BIND_COMPLETION_EVENT: DAT_EVENT_NUMBER = 0x1001;
pub const DAT_CONNECTION_REQUEST_EVENT: DAT_EVENT_NUMBER = 0x2001;
pub const DAT_CONNECTION_EVENT_ESTABLISHED: DAT_EVENT_NUMBER = 0x4001;
pub const DAT_CONNECTION_EVENT_PEER_REJECTED: DAT_EVENT_NUMBER = 0x4002;
pub const DAT_CONNECTION_EVENT_NON_PEER_REJECTED: DAT_EVENT_NUMBER = 0x4003;
pub const DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: DAT_EVENT_NUMBER = 0x4004;
pub const DAT_CONNECTION_EVENT_DISCONNECTED: DAT_EVENT_NUMBER = 0x4005;
pub const DAT_CONNECTION_EVENT_BROKEN: DAT_EVENT_NUMBER = 0x4006;
pub const DAT_CONNECTION_EVENT_TIMED_OUT: DAT_EVENT_NUMBER = 0x4007;
pub const DAT_CONNECTION_EVENT_UNREACHABLE: DAT_EVENT_NUMBER = 0x4008;
pub const DAT_ASYNC_ERROR_EVD_OVERFLOW: DAT_EVENT_NUMBER = 0x8001;
pub const DAT_ASYNC_ERROR_IA_CATASTROPHIC: DAT_EVENT_NUMBER = 0x8002;
pub const DAT_ASYNC_ERROR_EP_BROKEN: DAT_EVENT_NUMBER = 0x8003;
pub const DAT_ASYNC_ERROR_TIMED_OUT: DAT_EVENT_NUMBER = 0x8004;
pub const DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR: DAT_EVENT_NUMBER = 0x8005;
pub const DAT_SOFTWARE_EVENT: DAT_EVENT_NUMBER = 0x10001;

/// `DAT_CNO_PARAM_MASK` values.
pub const DAT_CNO_FIELD_IA_HANDLE: DAT_CNO_PARAM_MASK = 0x1;
/// `DAT_PZ_SUPPORT` values.
pub const DAT_PZ_UNIQUE: DAT_PZ_SUPPORT = 0x0;
pub const DAT_PZ_SHAREABLE: DAT_PZ_SUPPORT = 0x1;

pub const DAT_CLASS_ERROR: DAT_RETURN = 0x80000000;
pub const DAT_CLASS_SUCCESS: DAT_RETURN = 0x0;
pub const DAT_CLASS_WARNING: DAT_RETURN = 0x40000000;
pub const DAT_CLOSE_DEFAULT: DAT_CLOSE_FLAGS = 0x0;
pub const DAT_DTO_FAILURE: DAT_DTO_COMPLETION_STATUS = 0x1;
pub const DAT_DTO_LENGTH_ERROR: DAT_DTO_COMPLETION_STATUS = 0x2;
pub const DAT_EP_FIELD_EP_ATTR_ALL: DAT_EP_PARAM_MASK = 0x7ffff000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE: DAT_EP_PARAM_MASK = 0x2000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN: DAT_EP_PARAM_MASK = 0x400000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV: DAT_EP_PARAM_MASK = 0x2000000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT: DAT_EP_PARAM_MASK = 0x800000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE: DAT_EP_PARAM_MASK = 0x4000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV: DAT_EP_PARAM_MASK = 0x4000000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS: DAT_EP_PARAM_MASK = 0x40000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV: DAT_EP_PARAM_MASK = 0x100000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS: DAT_EP_PARAM_MASK = 0x80000;
pub const DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV: DAT_EP_PARAM_MASK = 0x200000;
pub const DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR: DAT_EP_PARAM_MASK = 0x20000000;
pub const DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR: DAT_EP_PARAM_MASK = 0x8000000;
pub const DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR: DAT_EP_PARAM_MASK = 0x40000000;
pub const DAT_EP_FIELD_EP_ATTR_QOS: DAT_EP_PARAM_MASK = 0x8000;
pub const DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS: DAT_EP_PARAM_MASK = 0x10000;
pub const DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS: DAT_EP_PARAM_MASK = 0x20000;
pub const DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE: DAT_EP_PARAM_MASK = 0x1000;
pub const DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW: DAT_EP_PARAM_MASK = 0x1000000;
pub const DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR: DAT_EP_PARAM_MASK = 0x10000000;
pub const DAT_EP_FIELD_EP_STATE: DAT_EP_PARAM_MASK = 0x2;
pub const DAT_EP_FIELD_IA_HANDLE: DAT_EP_PARAM_MASK = 0x1;
pub const DAT_EP_STATE_ERROR: DAT_EP_STATE = 0xb;
pub const DAT_HW_DEFAULT: DAT_COUNT = -1;
pub const DAT_IA_FIELD_IA_ADAPTER_NAME: DAT_IA_ATTR_MASK = 0x1;
pub const DAT_IA_FIELD_IA_ADDRESS_PTR: DAT_IA_ATTR_MASK = 0x40;
pub const DAT_IA_FIELD_IA_FIRMWARE_MAJOR_VERSION: DAT_IA_ATTR_MASK = 0x10;
pub const DAT_IA_FIELD_IA_FIRMWARE_MINOR_VERSION: DAT_IA_ATTR_MASK = 0x20;
pub const DAT_IA_FIELD_IA_HARDWARE_MAJOR_VERSION: DAT_IA_ATTR_MASK = 0x4;
pub const DAT_IA_FIELD_IA_HARDWARE_MINOR_VERSION: DAT_IA_ATTR_MASK = 0x8;
pub const DAT_IA_FIELD_IA_MAX_DTO_PER_EP: DAT_IA_ATTR_MASK = 0x100;
pub const DAT_IA_FIELD_IA_MAX_EPS: DAT_IA_ATTR_MASK = 0x80;
pub const DAT_IA_FIELD_IA_MAX_EP_PER_SRQ: DAT_IA_ATTR_MASK = 0x800000;
pub const DAT_IA_FIELD_IA_MAX_EVDS: DAT_IA_ATTR_MASK = 0x800;
pub const DAT_IA_FIELD_IA_MAX_EVD_QLEN: DAT_IA_ATTR_MASK = 0x1000;
pub const DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_DTO: DAT_IA_ATTR_MASK = 0x2000;
pub const DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_READ: DAT_IA_ATTR_MASK = 0x2000000;
pub const DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_WRITE: DAT_IA_ATTR_MASK = 0x4000000;
pub const DAT_IA_FIELD_IA_MAX_LMRS: DAT_IA_ATTR_MASK = 0x4000;
pub const DAT_IA_FIELD_IA_MAX_LMR_BLOCK_SIZE: DAT_IA_ATTR_MASK = 0x8000;
pub const DAT_IA_FIELD_IA_MAX_LMR_VIRTUAL_ADDRESS: DAT_IA_ATTR_MASK = 0x10000;
pub const DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE: DAT_IA_ATTR_MASK = 0x40000;
pub const DAT_IA_FIELD_IA_MAX_MTU_SIZE: DAT_IA_ATTR_MASK = 0x40000;
pub const DAT_IA_FIELD_IA_MAX_PZS: DAT_IA_ATTR_MASK = 0x20000;
pub const DAT_IA_FIELD_IA_MAX_RDMA_READ_IN: DAT_IA_ATTR_MASK = 0x8000000;
pub const DAT_IA_FIELD_IA_MAX_RDMA_READ_OUT: DAT_IA_ATTR_MASK = 0x10000000;
pub const DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN: DAT_IA_ATTR_MASK = 0x200;
pub const DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN_GUARANTEED: DAT_IA_ATTR_MASK = 0x20000000;
pub const DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT: DAT_IA_ATTR_MASK = 0x400;
pub const DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT_GUARANTEED: DAT_IA_ATTR_MASK = 0x40000000;
pub const DAT_IA_FIELD_IA_MAX_RDMA_SIZE: DAT_IA_ATTR_MASK = 0x80000;
pub const DAT_IA_FIELD_IA_MAX_RECV_PER_SRQ: DAT_IA_ATTR_MASK = 0x1000000;
pub const DAT_IA_FIELD_IA_MAX_RMRS: DAT_IA_ATTR_MASK = 0x100000;
pub const DAT_IA_FIELD_IA_MAX_RMR_TARGET_ADDRESS: DAT_IA_ATTR_MASK = 0x200000;
pub const DAT_IA_FIELD_IA_MAX_SRQS: DAT_IA_ATTR_MASK = 0x400000;
pub const DAT_IA_FIELD_IA_VENDOR_NAME: DAT_IA_ATTR_MASK = 0x2;
pub const DAT_IA_FIELD_NONE: DAT_IA_ATTR_MASK = 0x0;
pub const DAT_LMR_COOKIE_SIZE: usize = 40;
pub const DAT_MEM_PRIV_READ_FLAG: DAT_MEM_PRIV_FLAGS = 0x3;
pub const DAT_MEM_PRIV_WRITE_FLAG: DAT_MEM_PRIV_FLAGS = 0x30;
pub const DAT_NAME_MAX_LENGTH: usize = 256;
pub const DAT_NAME_NOT_FOUND: DAT_RETURN_TYPE = 0xa0000;
pub const DAT_OPTIMAL_ALIGNMENT: usize = 256;
pub const DAT_PROVIDER_FIELD_COMPLETION_FLAGS_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x100;
pub const DAT_PROVIDER_FIELD_DAPL_VERSION_MAJOR: DAT_PROVIDER_ATTR_MASK = 0x8;
pub const DAT_PROVIDER_FIELD_DAPL_VERSION_MINOR: DAT_PROVIDER_ATTR_MASK = 0x10;
pub const DAT_PROVIDER_FIELD_DAT_QOS_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x80;
pub const DAT_PROVIDER_FIELD_DTO_ASYNC_RETURN_GUARANTEED: DAT_PROVIDER_ATTR_MASK = 0x400000;
pub const DAT_PROVIDER_FIELD_EP_CREATOR: DAT_PROVIDER_ATTR_MASK = 0x1000;
pub const DAT_PROVIDER_FIELD_EP_RECV_INFO_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x100000;
pub const DAT_PROVIDER_FIELD_EVD_STREAM_MERGING_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x8000;
pub const DAT_PROVIDER_FIELD_IOV_OWNERSHIP: DAT_PROVIDER_ATTR_MASK = 0x40;
pub const DAT_PROVIDER_FIELD_IS_THREAD_SAFE: DAT_PROVIDER_ATTR_MASK = 0x200;
pub const DAT_PROVIDER_FIELD_LMR_MEM_TYPE_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x20;
pub const DAT_PROVIDER_FIELD_LMR_SYNC_REQ: DAT_PROVIDER_ATTR_MASK = 0x200000;
pub const DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE: DAT_PROVIDER_ATTR_MASK = 0x400;
pub const DAT_PROVIDER_FIELD_NONE: DAT_PROVIDER_ATTR_MASK = 0x0;
pub const DAT_PROVIDER_FIELD_OPTIMAL_BUFFER_ALIGNMENT: DAT_PROVIDER_ATTR_MASK = 0x4000;
pub const DAT_PROVIDER_FIELD_PROVIDER_NAME: DAT_PROVIDER_ATTR_MASK = 0x1;
pub const DAT_PROVIDER_FIELD_PROVIDER_VERSION_MAJOR: DAT_PROVIDER_ATTR_MASK = 0x2;
pub const DAT_PROVIDER_FIELD_PROVIDER_VERSION_MINOR: DAT_PROVIDER_ATTR_MASK = 0x4;
pub const DAT_PROVIDER_FIELD_PZ_SUPPORT: DAT_PROVIDER_ATTR_MASK = 0x2000;
pub const DAT_PROVIDER_FIELD_RDMA_WRITE_FOR_RDMA_READ_REQ: DAT_PROVIDER_ATTR_MASK = 0x800000;
pub const DAT_PROVIDER_FIELD_SRQ_EP_PZ_DIFFERENCE_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x40000;
pub const DAT_PROVIDER_FIELD_SRQ_INFO_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x80000;
pub const DAT_PROVIDER_FIELD_SRQ_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x10000;
pub const DAT_PROVIDER_FIELD_SRQ_WATERMARKS_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x20000;
pub const DAT_PROVIDER_FIELD_SUPPORTS_MULTIPATH: DAT_PROVIDER_ATTR_MASK = 0x800;
pub const DAT_RMR_BIND_FAILURE: DAT_DTO_COMPLETION_STATUS = 0x1;
pub const DAT_RMR_BIND_SUCCESS: DAT_DTO_COMPLETION_STATUS = 0x0;
pub const DAT_SRQ_LW_DEFAULT: DAT_COUNT = 0x0;
pub const DAT_SUBTYPE_MASK: DAT_RETURN = 0xffff;
pub const DAT_THREADSAFE: DAT_BOOLEAN = 0x0;
pub const DAT_TIMEOUT_INFINITE: DAT_TIMEOUT = 0xffffffff;
pub const DAT_TYPE_MASK: DAT_RETURN = 0x3fff0000;
pub const DAT_VALUE_UNKNOWN: DAT_COUNT = -2;
pub const DAT_WATERMARK_INFINITE: DAT_COUNT = -1;

// ---------------------------------------------------------------------------
// Structures and unions (field order and types as in the C headers)
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy)]
pub union DAT_CONTEXT {
    pub as_ptr: DAT_PVOID,
    pub as_64: DAT_UINT64,
    pub as_index: DAT_UVERYLONG,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_RMR_BIND_COMPLETION_EVENT_DATA {
    pub rmr_handle: DAT_RMR_HANDLE,
    pub user_cookie: DAT_CONTEXT,
    pub status: DAT_DTO_COMPLETION_STATUS,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_CONNECTION_EVENT_DATA {
    pub ep_handle: DAT_EP_HANDLE,
    pub private_data_size: DAT_COUNT,
    pub private_data: DAT_PVOID,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_ASYNCH_ERROR_EVENT_DATA {
    pub dat_handle: DAT_HANDLE,
    pub reason: DAT_COUNT,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_SOFTWARE_EVENT_DATA {
    pub pointer: DAT_PVOID,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union DAT_EVENT_DATA {
    pub dto_completion_event_data: DAT_DTO_COMPLETION_EVENT_DATA,
    pub rmr_completion_event_data: DAT_RMR_BIND_COMPLETION_EVENT_DATA,
    pub cr_arrival_event_data: DAT_CR_ARRIVAL_EVENT_DATA,
    pub connect_event_data: DAT_CONNECTION_EVENT_DATA,
    pub asynch_error_event_data: DAT_ASYNCH_ERROR_EVENT_DATA,
    pub software_event_data: DAT_SOFTWARE_EVENT_DATA,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_NAMED_ATTR {
    pub name: *const c_char,
    pub value: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_EVD_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub evd_qlen: DAT_COUNT,
    pub evd_state: DAT_EVD_STATE,
    pub cno_handle: DAT_CNO_HANDLE,
    pub evd_flags: DAT_EVD_FLAGS,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_PROVIDER_INFO {
    pub ia_name: [c_char; 256],
    pub dapl_version_major: DAT_UINT32,
    pub dapl_version_minor: DAT_UINT32,
    pub is_thread_safe: DAT_BOOLEAN,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_SHARED_MEMORY {
    pub virtual_address: DAT_PVOID,
    pub shared_memory_id: DAT_LMR_COOKIE,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union DAT_REGION_DESCRIPTION {
    pub for_va: DAT_PVOID,
    pub for_lmr_handle: DAT_LMR_HANDLE,
    pub for_shared_memory: DAT_SHARED_MEMORY,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_OS_WAIT_PROXY_AGENT {
    pub instance_data: DAT_PVOID,
    pub proxy_agent_func: DAT_AGENT_FUNC,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_SRQ_ATTR {
    pub max_recv_dtos: DAT_COUNT,
    pub max_recv_iov: DAT_COUNT,
    pub low_watermark: DAT_COUNT,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_SRQ_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub srq_state: DAT_SRQ_STATE,
    pub pz_handle: DAT_PZ_HANDLE,
    pub max_recv_dtos: DAT_COUNT,
    pub max_recv_iov: DAT_COUNT,
    pub low_watermark: DAT_COUNT,
    pub available_dto_count: DAT_COUNT,
    pub outstanding_dto_count: DAT_COUNT,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_PZ_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_PSP_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub conn_qual: DAT_CONN_QUAL,
    pub evd_handle: DAT_EVD_HANDLE,
    pub psp_flags: DAT_PSP_FLAGS,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_RSP_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub conn_qual: DAT_CONN_QUAL,
    pub evd_handle: DAT_EVD_HANDLE,
    pub ep_handle: DAT_EP_HANDLE,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_CR_PARAM {
    pub remote_ia_address_ptr: DAT_IA_ADDRESS_PTR,
    pub remote_port_qual: DAT_PORT_QUAL,
    pub private_data_size: DAT_COUNT,
    pub private_data: DAT_PVOID,
    pub local_ep_handle: DAT_EP_HANDLE,
}

// ---------------------------------------------------------------------------
// dat_registry.h: provider dispatch-table slot types (signatures of the
// corresponding dat_* calls; the IA open slot takes only the IA name part)
// ---------------------------------------------------------------------------

pub type DAT_IA_OPEN_FUNC = Option<
    unsafe extern "C" fn(
        name: DAT_NAME_PTR,
        async_event_qlen: DAT_COUNT,
        async_event_handle: *mut DAT_EVD_HANDLE,
        ia_handle: *mut DAT_IA_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_IA_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        async_evd_handle: *mut DAT_EVD_HANDLE,
        ia_attr_mask: DAT_IA_ATTR_MASK,
        ia_attr: *mut DAT_IA_ATTR,
        provider_attr_mask: DAT_PROVIDER_ATTR_MASK,
        provider_attr: *mut DAT_PROVIDER_ATTR,
    ) -> DAT_RETURN,
>;
pub type DAT_IA_CLOSE_FUNC =
    Option<unsafe extern "C" fn(ia_handle: DAT_IA_HANDLE, ia_flags: DAT_CLOSE_FLAGS) -> DAT_RETURN>;
pub type DAT_SET_CONSUMER_CONTEXT_FUNC =
    Option<unsafe extern "C" fn(dat_handle: DAT_HANDLE, context: DAT_CONTEXT) -> DAT_RETURN>;
pub type DAT_GET_CONSUMER_CONTEXT_FUNC =
    Option<unsafe extern "C" fn(dat_handle: DAT_HANDLE, context: *mut DAT_CONTEXT) -> DAT_RETURN>;
pub type DAT_GET_HANDLE_TYPE_FUNC =
    Option<unsafe extern "C" fn(dat_handle: DAT_HANDLE, type_: *mut DAT_HANDLE_TYPE) -> DAT_RETURN>;
pub type DAT_CNO_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        agent: DAT_OS_WAIT_PROXY_AGENT,
        cno_handle: *mut DAT_CNO_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_CNO_MODIFY_AGENT_FUNC =
    Option<unsafe extern "C" fn(cno_handle: DAT_CNO_HANDLE, agent: DAT_OS_WAIT_PROXY_AGENT) -> DAT_RETURN>;
pub type DAT_CNO_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        cno_handle: DAT_CNO_HANDLE,
        cno_param_mask: DAT_CNO_PARAM_MASK,
        cno_param: *mut DAT_CNO_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_CNO_FREE_FUNC = Option<unsafe extern "C" fn(cno_handle: DAT_CNO_HANDLE) -> DAT_RETURN>;
pub type DAT_CNO_WAIT_FUNC = Option<
    unsafe extern "C" fn(
        cno_handle: DAT_CNO_HANDLE,
        timeout: DAT_TIMEOUT,
        evd_handle: *mut DAT_EVD_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_CR_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        cr_handle: DAT_CR_HANDLE,
        cr_param_mask: DAT_CR_PARAM_MASK,
        cr_param: *mut DAT_CR_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_CR_ACCEPT_FUNC = Option<
    unsafe extern "C" fn(
        cr_handle: DAT_CR_HANDLE,
        ep_handle: DAT_EP_HANDLE,
        private_data_size: DAT_COUNT,
        private_data: DAT_PVOID,
    ) -> DAT_RETURN,
>;
pub type DAT_CR_HANDOFF_FUNC =
    Option<unsafe extern "C" fn(cr_handle: DAT_CR_HANDLE, handoff: DAT_CONN_QUAL) -> DAT_RETURN>;
pub type DAT_EVD_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        evd_min_qlen: DAT_COUNT,
        cno_handle: DAT_CNO_HANDLE,
        evd_flags: DAT_EVD_FLAGS,
        evd_handle: *mut DAT_EVD_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_EVD_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        evd_handle: DAT_EVD_HANDLE,
        evd_param_mask: DAT_EVD_PARAM_MASK,
        evd_param: *mut DAT_EVD_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_EVD_MODIFY_CNO_FUNC =
    Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE, cno_handle: DAT_CNO_HANDLE) -> DAT_RETURN>;
pub type DAT_EVD_ENABLE_FUNC = Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN>;
pub type DAT_EVD_DISABLE_FUNC = Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN>;
pub type DAT_EVD_WAIT_FUNC = Option<
    unsafe extern "C" fn(
        evd_handle: DAT_EVD_HANDLE,
        Timeout: DAT_TIMEOUT,
        Threshold: DAT_COUNT,
        event: *mut DAT_EVENT,
        n_more_events: *mut DAT_COUNT,
    ) -> DAT_RETURN,
>;
pub type DAT_EVD_RESIZE_FUNC =
    Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE, evd_min_qlen: DAT_COUNT) -> DAT_RETURN>;
pub type DAT_EVD_POST_SE_FUNC =
    Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE, event: *const DAT_EVENT) -> DAT_RETURN>;
pub type DAT_EVD_DEQUEUE_FUNC =
    Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE, event: *mut DAT_EVENT) -> DAT_RETURN>;
pub type DAT_EVD_FREE_FUNC = Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN>;
pub type DAT_EP_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        pz_handle: DAT_PZ_HANDLE,
        recv_completion_evd_handle: DAT_EVD_HANDLE,
        request_completion_evd_handle: DAT_EVD_HANDLE,
        connect_evd_handle: DAT_EVD_HANDLE,
        ep_attributes: *const DAT_EP_ATTR,
        ep_handle: *mut DAT_EP_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        ep_param_mask: DAT_EP_PARAM_MASK,
        ep_param: *mut DAT_EP_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_MODIFY_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        ep_param_mask: DAT_EP_PARAM_MASK,
        ep_param: *const DAT_EP_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_CONNECT_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        remote_ia_address: DAT_IA_ADDRESS_PTR,
        remote_conn_qual: DAT_CONN_QUAL,
        timeout: DAT_TIMEOUT,
        private_data_size: DAT_COUNT,
        private_data: DAT_PVOID,
        quality_of_service: DAT_QOS,
        connect_flags: DAT_CONNECT_FLAGS,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_DUP_CONNECT_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        ep_dup_handle: DAT_EP_HANDLE,
        timeout: DAT_TIMEOUT,
        private_data_size: DAT_COUNT,
        private_data: DAT_PVOID,
        quality_of_service: DAT_QOS,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_DISCONNECT_FUNC =
    Option<unsafe extern "C" fn(ep_handle: DAT_EP_HANDLE, close_flags: DAT_CLOSE_FLAGS) -> DAT_RETURN>;
pub type DAT_EP_POST_SEND_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        num_segments: DAT_COUNT,
        local_iov: *mut DAT_LMR_TRIPLET,
        user_cookie: DAT_DTO_COOKIE,
        completion_flags: DAT_COMPLETION_FLAGS,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_POST_RECV_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        num_segments: DAT_COUNT,
        local_iov: *mut DAT_LMR_TRIPLET,
        user_cookie: DAT_DTO_COOKIE,
        completion_flags: DAT_COMPLETION_FLAGS,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_POST_RDMA_READ_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        num_segments: DAT_COUNT,
        local_iov: *mut DAT_LMR_TRIPLET,
        user_cookie: DAT_DTO_COOKIE,
        remote_iov: *const DAT_RMR_TRIPLET,
        completion_flags: DAT_COMPLETION_FLAGS,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_POST_RDMA_WRITE_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        num_segments: DAT_COUNT,
        local_iov: *mut DAT_LMR_TRIPLET,
        user_cookie: DAT_DTO_COOKIE,
        remote_iov: *const DAT_RMR_TRIPLET,
        completion_flags: DAT_COMPLETION_FLAGS,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_GET_STATUS_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        ep_state: *mut DAT_EP_STATE,
        recv_idle: *mut DAT_BOOLEAN,
        request_idle: *mut DAT_BOOLEAN,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_FREE_FUNC = Option<unsafe extern "C" fn(ep_handle: DAT_EP_HANDLE) -> DAT_RETURN>;
pub type DAT_LMR_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        lmr_handle: DAT_LMR_HANDLE,
        lmv_param_mask: DAT_LMR_PARAM_MASK,
        lmr_param: *mut DAT_LMR_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_LMR_FREE_FUNC = Option<unsafe extern "C" fn(lmr_handle: DAT_LMR_HANDLE) -> DAT_RETURN>;
pub type DAT_RMR_CREATE_FUNC =
    Option<unsafe extern "C" fn(pz_handle: DAT_PZ_HANDLE, rmr_handle: *mut DAT_RMR_HANDLE) -> DAT_RETURN>;
pub type DAT_RMR_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        rmr_handle: DAT_RMR_HANDLE,
        rmr_param_mask: DAT_RMR_PARAM_MASK,
        rmr_param: *mut DAT_RMR_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_RMR_FREE_FUNC = Option<unsafe extern "C" fn(rmr_handle: DAT_RMR_HANDLE) -> DAT_RETURN>;
pub type DAT_PSP_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        conn_qual: DAT_CONN_QUAL,
        evd_handle: DAT_EVD_HANDLE,
        psp_flags: DAT_PSP_FLAGS,
        psp_handle: *mut DAT_PSP_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_PSP_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        psp_handle: DAT_PSP_HANDLE,
        psp_param_mask: DAT_PSP_PARAM_MASK,
        psp_param: *mut DAT_PSP_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_PSP_FREE_FUNC = Option<unsafe extern "C" fn(psp_handle: DAT_PSP_HANDLE) -> DAT_RETURN>;
pub type DAT_RSP_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        conn_qual: DAT_CONN_QUAL,
        ep_handle: DAT_EP_HANDLE,
        evd_handle: DAT_EVD_HANDLE,
        rsp_handle: *mut DAT_RSP_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_RSP_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        rsp_handle: DAT_RSP_HANDLE,
        rsp_param_mask: DAT_RSP_PARAM_MASK,
        rsp_param: *mut DAT_RSP_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_RSP_FREE_FUNC = Option<unsafe extern "C" fn(rsp_handle: DAT_RSP_HANDLE) -> DAT_RETURN>;
pub type DAT_PZ_CREATE_FUNC =
    Option<unsafe extern "C" fn(ia_handle: DAT_IA_HANDLE, pz_handle: *mut DAT_PZ_HANDLE) -> DAT_RETURN>;
pub type DAT_PZ_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        pz_handle: DAT_PZ_HANDLE,
        pz_param_mask: DAT_PZ_PARAM_MASK,
        pz_param: *mut DAT_PZ_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_PZ_FREE_FUNC = Option<unsafe extern "C" fn(pz_handle: DAT_PZ_HANDLE) -> DAT_RETURN>;
pub type DAT_PSP_CREATE_ANY_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        conn_qual: *mut DAT_CONN_QUAL,
        evd_handle: DAT_EVD_HANDLE,
        psp_flags: DAT_PSP_FLAGS,
        psp_handle: *mut DAT_PSP_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_RESET_FUNC = Option<unsafe extern "C" fn(ep_handle: DAT_EP_HANDLE) -> DAT_RETURN>;
pub type DAT_EVD_SET_UNWAITABLE_FUNC = Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN>;
pub type DAT_EVD_CLEAR_UNWAITABLE_FUNC = Option<unsafe extern "C" fn(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN>;
pub type DAT_LMR_SYNC_RDMA_READ_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        local_segments: *const DAT_LMR_TRIPLET,
        num_segments: DAT_VLEN,
    ) -> DAT_RETURN,
>;
pub type DAT_LMR_SYNC_RDMA_WRITE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        local_segments: *const DAT_LMR_TRIPLET,
        num_segments: DAT_VLEN,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_CREATE_WITH_SRQ_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        pz_handle: DAT_PZ_HANDLE,
        recv_evd_handle: DAT_EVD_HANDLE,
        request_evd_handle: DAT_EVD_HANDLE,
        connect_evd_handle: DAT_EVD_HANDLE,
        srq_handle: DAT_SRQ_HANDLE,
        ep_attributes: *const DAT_EP_ATTR,
        ep_handle: *mut DAT_EP_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_RECV_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        nbufs_allocated: *mut DAT_COUNT,
        bufs_alloc_span: *mut DAT_COUNT,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_SET_WATERMARK_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        soft_high_watermark: DAT_COUNT,
        hard_high_watermark: DAT_COUNT,
    ) -> DAT_RETURN,
>;
pub type DAT_SRQ_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        pz_handle: DAT_PZ_HANDLE,
        srq_attr: *mut DAT_SRQ_ATTR,
        srq_handle: *mut DAT_SRQ_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_SRQ_FREE_FUNC = Option<unsafe extern "C" fn(srq_handle: DAT_SRQ_HANDLE) -> DAT_RETURN>;
pub type DAT_SRQ_POST_RECV_FUNC = Option<
    unsafe extern "C" fn(
        srq_handle: DAT_SRQ_HANDLE,
        num_segments: DAT_COUNT,
        local_iov: *mut DAT_LMR_TRIPLET,
        user_cookie: DAT_DTO_COOKIE,
    ) -> DAT_RETURN,
>;
pub type DAT_SRQ_QUERY_FUNC = Option<
    unsafe extern "C" fn(
        srq_handle: DAT_SRQ_HANDLE,
        srq_param_mask: DAT_SRQ_PARAM_MASK,
        srq_param: *mut DAT_SRQ_PARAM,
    ) -> DAT_RETURN,
>;
pub type DAT_SRQ_RESIZE_FUNC =
    Option<unsafe extern "C" fn(srq_handle: DAT_SRQ_HANDLE, srq_max_recv_dto: DAT_COUNT) -> DAT_RETURN>;
pub type DAT_SRQ_SET_LW_FUNC =
    Option<unsafe extern "C" fn(srq_handle: DAT_SRQ_HANDLE, low_watermark: DAT_COUNT) -> DAT_RETURN>;

/// `void dat_provider_init(const DAT_PROVIDER_INFO *, const char *instance_data)`.
pub type DAT_PROVIDER_INIT_FUNC =
    Option<unsafe extern "C" fn(provider_info: *const DAT_PROVIDER_INFO, instance_data: *const c_char)>;
/// `void dat_provider_fini(const DAT_PROVIDER_INFO *)`.
pub type DAT_PROVIDER_FINI_FUNC = Option<unsafe extern "C" fn(provider_info: *const DAT_PROVIDER_INFO)>;

/// Symbol names looked up in a provider library (NUL-terminated).
pub const DAT_PROVIDER_INIT_FUNC_STR: &core::ffi::CStr = c"dat_provider_init";
pub const DAT_PROVIDER_FINI_FUNC_STR: &core::ffi::CStr = c"dat_provider_fini";
