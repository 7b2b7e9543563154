//! Rust mirrors of the DAT 2.0 C types in `include/dat2` (OFED dapl 2.x ABI,
//! Linux x86_64), including `dat_ib_extensions.h`.
//!
//! Names are the C names verbatim.  C enumerated types are `u32` aliases plus
//! constants (never Rust enums: C callers may pass any value).  Structures and
//! unions are `#[repr(C)]`; their layout is checked against the reference dump
//! by the generated tests in `abi_layout_tests.rs` (`tests/abi/gen_checks.py`).
//! Function-pointer types are `Option<unsafe extern "C" fn ...>` so that a NULL
//! slot is representable.
#![allow(non_upper_case_globals, non_camel_case_types, non_snake_case, dead_code)]

use libc::{c_char, c_int, c_void};

// The definitions both ABIs share (crates/face/abi_common.rs).
#[path = "../../face/abi_common.rs"]
mod common;
pub use common::*;

// ---------------------------------------------------------------------------
// dat.h / udat.h: scalar types and handles
// ---------------------------------------------------------------------------

pub type DAT_SEG_LENGTH = DAT_UINT32;
pub type DAT_FD = c_int;
pub type DAT_HA_LB = DAT_UINT32;
pub type DAT_CSP_HANDLE = DAT_HANDLE;

// ---------------------------------------------------------------------------
// Enumerated types (4-byte C enums; all values non-negative, so unsigned)
// ---------------------------------------------------------------------------

pub type DAT_DTOS = u32;
pub type DAT_VA_TYPE = u32;
pub type DAT_RMR_SCOPE = u32;
pub type DAT_EXTENSION = u32;
pub type DAT_CSP_PARAM_MASK = u32;
pub type DAT_PROXY_TYPE = u32;
pub type DAT_IB_EVENT_NUMBER = u32;
pub type DAT_IB_OP = u32;
pub type DAT_IB_EXT_TYPE = u32;
pub type DAT_IB_STATUS = u32;
pub type DAT_IB_RETURN = u32;
pub type DAT_IB_DTOS = u32;
pub type DAT_IB_HANDLE_TYPE = u32;
pub type DAT_IB_EVD_EXTENSION_FLAGS = u32;
pub type DAT_IB_MEM_PRIV_FLAGS = u32;
pub type DAT_IB_SERVICE_TYPE = u32;
pub type DAT_IA_COUNTERS = u32;
pub type DAT_EP_COUNTERS = u32;
pub type DAT_EVD_COUNTERS = u32;
pub type DAT_IA_COUNTER_TYPE = u32;
pub type DAT_IB_COLLECTIVE_DATA_TYPE = u32;
pub type DAT_IB_COLLECTIVE_REDUCE_DATA_OP = u32;

// ---------------------------------------------------------------------------
// Constants (values of the "2.0 OFED" column of constants.md and its IB
// extension enums). Error subtypes are DAT 2.0 numbers: shared face code takes
// error codes from `datcore::codes` (DAT 1.2 numbering) and the boundary
// translates them (`crate::convert::code_out`).
// ---------------------------------------------------------------------------

pub const DAT_HANDLE_TYPE_CSP: DAT_HANDLE_TYPE = 0xb;
pub const DAT_HANDLE_TYPE_EXTENSION_BASE: DAT_HANDLE_TYPE = 0xc;

pub const DAT_NOT_IMPLEMENTED: DAT_RETURN_TYPE = 0x3fff0000;
pub const DAT_RESERVED_LMR: DAT_RETURN_TYPE = 0x150000;
pub const DAT_PORT_IN_USE: DAT_RETURN_TYPE = 0x160000;
pub const DAT_COMM_NOT_SUPPORTED: DAT_RETURN_TYPE = 0x170000;
pub const DAT_EXTENSION_BASE: DAT_RETURN_TYPE = 0x10000000;

pub const DAT_INVALID_HANDLE1: DAT_RETURN_SUBTYPE = 0x1b;
pub const DAT_INVALID_HANDLE2: DAT_RETURN_SUBTYPE = 0x1c;
pub const DAT_INVALID_HANDLE3: DAT_RETURN_SUBTYPE = 0x1d;
pub const DAT_INVALID_HANDLE4: DAT_RETURN_SUBTYPE = 0x1e;
pub const DAT_INVALID_HANDLE5: DAT_RETURN_SUBTYPE = 0x1f;
pub const DAT_INVALID_HANDLE6: DAT_RETURN_SUBTYPE = 0x20;
pub const DAT_INVALID_HANDLE7: DAT_RETURN_SUBTYPE = 0x21;
pub const DAT_INVALID_HANDLE8: DAT_RETURN_SUBTYPE = 0x22;
pub const DAT_INVALID_HANDLE9: DAT_RETURN_SUBTYPE = 0x23;
pub const DAT_INVALID_HANDLE10: DAT_RETURN_SUBTYPE = 0x24;
pub const DAT_INVALID_ARG1: DAT_RETURN_SUBTYPE = 0x25;
pub const DAT_INVALID_ARG2: DAT_RETURN_SUBTYPE = 0x26;
pub const DAT_INVALID_ARG3: DAT_RETURN_SUBTYPE = 0x27;
pub const DAT_INVALID_ARG4: DAT_RETURN_SUBTYPE = 0x28;
pub const DAT_INVALID_ARG5: DAT_RETURN_SUBTYPE = 0x29;
pub const DAT_INVALID_ARG6: DAT_RETURN_SUBTYPE = 0x2a;
pub const DAT_INVALID_ARG7: DAT_RETURN_SUBTYPE = 0x2b;
pub const DAT_INVALID_ARG8: DAT_RETURN_SUBTYPE = 0x2c;
pub const DAT_INVALID_ARG9: DAT_RETURN_SUBTYPE = 0x2d;
pub const DAT_INVALID_ARG10: DAT_RETURN_SUBTYPE = 0x2e;
pub const DAT_INVALID_STATE_EP_UNCONNECTED: DAT_RETURN_SUBTYPE = 0x2f;
pub const DAT_INVALID_STATE_EP_ACTCONNPENDING: DAT_RETURN_SUBTYPE = 0x30;
pub const DAT_INVALID_STATE_EP_PASSCONNPENDING: DAT_RETURN_SUBTYPE = 0x31;
pub const DAT_INVALID_STATE_EP_TENTCONNPENDING: DAT_RETURN_SUBTYPE = 0x32;
pub const DAT_INVALID_STATE_EP_CONNECTED: DAT_RETURN_SUBTYPE = 0x33;
pub const DAT_INVALID_STATE_EP_DISCONNECTED: DAT_RETURN_SUBTYPE = 0x34;
pub const DAT_INVALID_STATE_EP_RESERVED: DAT_RETURN_SUBTYPE = 0x35;
pub const DAT_INVALID_STATE_EP_COMPLPENDING: DAT_RETURN_SUBTYPE = 0x36;
pub const DAT_INVALID_STATE_EP_DISCPENDING: DAT_RETURN_SUBTYPE = 0x37;
pub const DAT_INVALID_STATE_EP_PROVIDERCONTROL: DAT_RETURN_SUBTYPE = 0x38;
pub const DAT_INVALID_STATE_EP_NOTREADY: DAT_RETURN_SUBTYPE = 0x39;
pub const DAT_INVALID_STATE_EP_RECV_WATERMARK: DAT_RETURN_SUBTYPE = 0x3a;
pub const DAT_INVALID_STATE_EP_PZ: DAT_RETURN_SUBTYPE = 0x3b;
pub const DAT_INVALID_STATE_EP_EVD_REQUEST: DAT_RETURN_SUBTYPE = 0x3c;
pub const DAT_INVALID_STATE_EP_EVD_RECV: DAT_RETURN_SUBTYPE = 0x3d;
pub const DAT_INVALID_STATE_EP_EVD_CONNECT: DAT_RETURN_SUBTYPE = 0x3e;
pub const DAT_INVALID_STATE_EP_UNCONFIGURED: DAT_RETURN_SUBTYPE = 0x3f;
pub const DAT_INVALID_STATE_EP_UNCONFRESERVED: DAT_RETURN_SUBTYPE = 0x40;
pub const DAT_INVALID_STATE_EP_UNCONFPASSIVE: DAT_RETURN_SUBTYPE = 0x41;
pub const DAT_INVALID_STATE_EP_UNCONFTENTATIVE: DAT_RETURN_SUBTYPE = 0x42;
pub const DAT_INVALID_STATE_CNO_IN_USE: DAT_RETURN_SUBTYPE = 0x43;
pub const DAT_INVALID_STATE_CNO_DEAD: DAT_RETURN_SUBTYPE = 0x44;
pub const DAT_INVALID_STATE_EVD_OPEN: DAT_RETURN_SUBTYPE = 0x45;
pub const DAT_INVALID_STATE_EVD_ENABLED: DAT_RETURN_SUBTYPE = 0x46;
pub const DAT_INVALID_STATE_EVD_DISABLED: DAT_RETURN_SUBTYPE = 0x47;
pub const DAT_INVALID_STATE_EVD_WAITABLE: DAT_RETURN_SUBTYPE = 0x48;
pub const DAT_INVALID_STATE_EVD_UNWAITABLE: DAT_RETURN_SUBTYPE = 0x49;
pub const DAT_INVALID_STATE_EVD_IN_USE: DAT_RETURN_SUBTYPE = 0x4a;
pub const DAT_INVALID_STATE_EVD_CONFIG_NOTIFY: DAT_RETURN_SUBTYPE = 0x4b;
pub const DAT_INVALID_STATE_EVD_CONFIG_SOLICITED: DAT_RETURN_SUBTYPE = 0x4c;
pub const DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD: DAT_RETURN_SUBTYPE = 0x4d;
pub const DAT_INVALID_STATE_EVD_WAITER: DAT_RETURN_SUBTYPE = 0x4e;
pub const DAT_INVALID_STATE_EVD_ASYNC: DAT_RETURN_SUBTYPE = 0x4f;
pub const DAT_INVALID_STATE_IA_IN_USE: DAT_RETURN_SUBTYPE = 0x50;
pub const DAT_INVALID_STATE_LMR_IN_USE: DAT_RETURN_SUBTYPE = 0x51;
pub const DAT_INVALID_STATE_LMR_FREE: DAT_RETURN_SUBTYPE = 0x52;
pub const DAT_INVALID_STATE_PZ_IN_USE: DAT_RETURN_SUBTYPE = 0x53;
pub const DAT_INVALID_STATE_PZ_FREE: DAT_RETURN_SUBTYPE = 0x54;
pub const DAT_INVALID_STATE_SRQ_OPERATIONAL: DAT_RETURN_SUBTYPE = 0x55;
pub const DAT_INVALID_STATE_SRQ_ERROR: DAT_RETURN_SUBTYPE = 0x56;
pub const DAT_INVALID_STATE_SRQ_IN_USE: DAT_RETURN_SUBTYPE = 0x57;
pub const DAT_PRIVILEGES_READ: DAT_RETURN_SUBTYPE = 0x59;
pub const DAT_PRIVILEGES_WRITE: DAT_RETURN_SUBTYPE = 0x5a;
pub const DAT_PRIVILEGES_RDMA_READ: DAT_RETURN_SUBTYPE = 0x5b;
pub const DAT_PRIVILEGES_RDMA_WRITE: DAT_RETURN_SUBTYPE = 0x5c;
pub const DAT_PROTECTION_READ: DAT_RETURN_SUBTYPE = 0x5d;
pub const DAT_PROTECTION_WRITE: DAT_RETURN_SUBTYPE = 0x5e;
pub const DAT_PROTECTION_RDMA_READ: DAT_RETURN_SUBTYPE = 0x5f;
pub const DAT_PROTECTION_RDMA_WRITE: DAT_RETURN_SUBTYPE = 0x60;
pub const DAT_INVALID_ADDRESS_UNSUPPORTED: DAT_RETURN_SUBTYPE = 0x61;
pub const DAT_INVALID_ADDRESS_UNREACHABLE: DAT_RETURN_SUBTYPE = 0x62;
pub const DAT_INVALID_ADDRESS_MALFORMED: DAT_RETURN_SUBTYPE = 0x63;
pub const DAT_NAME_NOT_REGISTERED: DAT_RETURN_SUBTYPE = 0x64;
pub const DAT_MAJOR_NOT_FOUND: DAT_RETURN_SUBTYPE = 0x65;
pub const DAT_MINOR_NOT_FOUND: DAT_RETURN_SUBTYPE = 0x66;
pub const DAT_THREAD_SAFETY_NOT_FOUND: DAT_RETURN_SUBTYPE = 0x67;
pub const DAT_INVALID_HANDLE_CSP: DAT_RETURN_SUBTYPE = 0x1a;
pub const DAT_INVALID_STATE_SRQ_SHUTDOWN: DAT_RETURN_SUBTYPE = 0x58;

pub const DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG: DAT_COMPLETION_FLAGS = 0x20;

pub const DAT_CONNECT_MULTIPATH_REQUIRED_FLAG: DAT_CONNECT_FLAGS = 0x2;

pub const DAT_EVD_EXTENSION_BASE: DAT_EVD_FLAGS = 0x200;

pub const DAT_MEM_PRIV_EXTENSION_BASE: DAT_MEM_PRIV_FLAGS = 0x40;

pub const DAT_LMR_FIELD_LMR_CONTEXT: DAT_LMR_PARAM_MASK = 0x80;
pub const DAT_LMR_FIELD_RMR_CONTEXT: DAT_LMR_PARAM_MASK = 0x100;
pub const DAT_LMR_FIELD_REGISTERED_SIZE: DAT_LMR_PARAM_MASK = 0x200;
pub const DAT_LMR_FIELD_REGISTERED_ADDRESS: DAT_LMR_PARAM_MASK = 0x400;
pub const DAT_LMR_FIELD_ALL: DAT_LMR_PARAM_MASK = 0x7ff;
pub const DAT_LMR_FIELD_VA_TYPE: DAT_LMR_PARAM_MASK = 0x40;

pub const DAT_RMR_FIELD_ALL: DAT_RMR_PARAM_MASK = 0x7f;
pub const DAT_RMR_FIELD_RMR_SCOPE: DAT_RMR_PARAM_MASK = 0x20;
pub const DAT_RMR_FIELD_VA_TYPE: DAT_RMR_PARAM_MASK = 0x40;

pub const DAT_SERVICE_TYPE_EXTENSION_BASE: DAT_SERVICE_TYPE = 0x1;

pub const DAT_EP_STATE_CONNECTED_SINGLE_PATH: DAT_EP_STATE = 0xd;
pub const DAT_EP_STATE_CONNECTED_MULTI_PATH: DAT_EP_STATE = 0xe;

/// `DAT_SRQ_STATE` values.
pub const DAT_SRQ_STATE_OPERATIONAL: DAT_SRQ_STATE = 0x1;
pub const DAT_SRQ_STATE_ERROR: DAT_SRQ_STATE = 0x0;
pub const DAT_SRQ_STATE_SHUTDOWN: DAT_SRQ_STATE = 0x2;

pub const DAT_DTO_ERR_LOCAL_MM_ERROR: DAT_DTO_COMPLETION_STATUS = 0xc;

pub const DAT_HA_DOWN_TO_1: DAT_EVENT_NUMBER = 0x8101;
pub const DAT_HA_UP_TO_MULTI_PATH: DAT_EVENT_NUMBER = 0x8102;
pub const DAT_EXTENSION_EVENT: DAT_EVENT_NUMBER = 0x20000;
pub const DAT_IB_EXTENSION_RANGE_BASE: DAT_EVENT_NUMBER = 0x40000;
pub const DAT_IW_EXTENSION_RANGE_BASE: DAT_EVENT_NUMBER = 0x80000;

pub const DAT_CNO_FIELD_ALL: DAT_CNO_PARAM_MASK = 0x4;
pub const DAT_CNO_FIELD_PROXY_TYPE: DAT_CNO_PARAM_MASK = 0x2;
pub const DAT_CNO_FIELD_PROXY: DAT_CNO_PARAM_MASK = 0x3;

/// `DAT_DTOS` values.
pub const DAT_DTO_SEND: DAT_DTOS = 0x0;
pub const DAT_DTO_RDMA_WRITE: DAT_DTOS = 0x1;
pub const DAT_DTO_RDMA_READ: DAT_DTOS = 0x2;
pub const DAT_DTO_RECEIVE: DAT_DTOS = 0x3;
pub const DAT_DTO_RECEIVE_WITH_INVALIDATE: DAT_DTOS = 0x4;
pub const DAT_DTO_BIND_MW: DAT_DTOS = 0x5;
pub const DAT_DTO_LMR_FMR: DAT_DTOS = 0x6;
pub const DAT_DTO_LMR_INVALIDATE: DAT_DTOS = 0x7;
pub const DAT_DTO_EXTENSION_BASE: DAT_DTOS = 0x8;

/// `DAT_VA_TYPE` values.
pub const DAT_VA_TYPE_VA: DAT_VA_TYPE = 0x0;
pub const DAT_VA_TYPE_ZB: DAT_VA_TYPE = 0x1;

/// `DAT_RMR_SCOPE` values.
pub const DAT_RMR_SCOPE_EP: DAT_RMR_SCOPE = 0x0;
pub const DAT_RMR_SCOPE_PZ: DAT_RMR_SCOPE = 0x1;
pub const DAT_RMR_SCOPE_ANY: DAT_RMR_SCOPE = 0x2;

/// `DAT_EXTENSION` values.
pub const DAT_EXTENSION_NONE: DAT_EXTENSION = 0x0;
pub const DAT_EXTENSION_IB: DAT_EXTENSION = 0x1;
pub const DAT_EXTENSION_IW: DAT_EXTENSION = 0x2;

/// `DAT_CSP_PARAM_MASK` values.
pub const DAT_CSP_FIELD_IA_HANDLE: DAT_CSP_PARAM_MASK = 0x1;
pub const DAT_CSP_FIELD_COMM: DAT_CSP_PARAM_MASK = 0x2;
pub const DAT_CSP_FIELD_IA_ADDRESS: DAT_CSP_PARAM_MASK = 0x4;
pub const DAT_CSP_FIELD_EVD_HANDLE: DAT_CSP_PARAM_MASK = 0x8;
pub const DAT_CSP_FIELD_ALL: DAT_CSP_PARAM_MASK = 0xf;

/// `DAT_PROXY_TYPE` values.
pub const DAT_PROXY_TYPE_NONE: DAT_PROXY_TYPE = 0x0;
pub const DAT_PROXY_TYPE_AGENT: DAT_PROXY_TYPE = 0x1;
pub const DAT_PROXY_TYPE_FD: DAT_PROXY_TYPE = 0x2;

// Integer #defines.
pub const DAT_AF_INET: c_int = 0x2;
pub const DAT_AF_INET6: c_int = 0xa;
pub const DAT_EP_FIELD_ALL: DAT_EP_PARAM_MASK = 0x7fffffff;
pub const DAT_EP_FIELD_CONNECT_EVD_HANDLE: DAT_EP_PARAM_MASK = 0x400;
pub const DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR: DAT_EP_PARAM_MASK = 0x8;
pub const DAT_EP_FIELD_LOCAL_PORT_QUAL: DAT_EP_PARAM_MASK = 0x10;
pub const DAT_EP_FIELD_PZ_HANDLE: DAT_EP_PARAM_MASK = 0x80;
pub const DAT_EP_FIELD_RECV_EVD_HANDLE: DAT_EP_PARAM_MASK = 0x100;
pub const DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR: DAT_EP_PARAM_MASK = 0x20;
pub const DAT_EP_FIELD_REMOTE_PORT_QUAL: DAT_EP_PARAM_MASK = 0x40;
pub const DAT_EP_FIELD_REQUEST_EVD_HANDLE: DAT_EP_PARAM_MASK = 0x200;
pub const DAT_EP_FIELD_SRQ_HANDLE: DAT_EP_PARAM_MASK = 0x800;
pub const DAT_EVD_ASYNC_EXISTS: DAT_EVD_HANDLE = 1 as DAT_EVD_HANDLE;
pub const DAT_EVD_OUT_OF_SCOPE: DAT_EVD_HANDLE = 2 as DAT_EVD_HANDLE;
pub const DAT_IA_ALL: DAT_IA_ATTR_MASK = 0x3fffffffff;
pub const DAT_IA_FIELD_ALL: DAT_IA_ATTR_MASK = 0x3fffffffff;
pub const DAT_IA_FIELD_IA_NUM_TRANSPORT_ATTR: DAT_IA_ATTR_MASK = 0x400000000;
pub const DAT_IA_FIELD_IA_NUM_VENDOR_ATTR: DAT_IA_ATTR_MASK = 0x1000000000;
pub const DAT_IA_FIELD_IA_TRANSPORT_ATTR: DAT_IA_ATTR_MASK = 0x800000000;
pub const DAT_IA_FIELD_IA_VENDOR_ATTR: DAT_IA_ATTR_MASK = 0x2000000000;
pub const DAT_PROVIDER_FIELD_ALL: DAT_PROVIDER_ATTR_MASK = 0x7fffffff;
pub const DAT_PROVIDER_FIELD_NUM_PROVIDER_SPECIFIC_ATTR: DAT_PROVIDER_ATTR_MASK = 0x20000000;
pub const DAT_PROVIDER_FIELD_PROVIDER_SPECIFIC_ATTR: DAT_PROVIDER_ATTR_MASK = 0x40000000;
pub const DAT_VERSION_MAJOR: DAT_UINT32 = 0x2;
pub const DAT_VERSION_MINOR: DAT_UINT32 = 0x0;
pub const DAT_CLOSE_EXTENSION_BASE: DAT_COUNT = 0x2000;
pub const DAT_CONNECT_MULTIPATH_REQUESTED_FLAG: DAT_CONNECT_FLAGS = 0x1;
pub const DAT_EP_FIELD_COMM: DAT_EP_PARAM_MASK = 0x4;
pub const DAT_EXTENSIONS: DAT_COUNT = 0x1;
pub const DAT_HA_LB_INTERCOMM: DAT_HA_LB = 0x1;
pub const DAT_HA_LB_INTRACOMM: DAT_HA_LB = 0x2;
pub const DAT_HA_LB_NONE: DAT_HA_LB = 0x0;
pub const DAT_IA_FIELD_IA_EXTENSION: DAT_IA_ATTR_MASK = 0x100000000;
pub const DAT_IA_FIELD_IA_EXTENSIONS_SUPPORTED: DAT_IA_ATTR_MASK = 0x100000000;
pub const DAT_IA_FIELD_IA_EXTENSION_VERSION: DAT_IA_ATTR_MASK = 0x200000000;
pub const DAT_IA_FIELD_IA_ZB_SUPPORTED: DAT_IA_ATTR_MASK = 0x80000000;
pub const DAT_IB_EXTENSION: DAT_EXTENSION = 0x1;
pub const DAT_IW_EXTENSION: DAT_EXTENSION = 0x2;
pub const DAT_OPEN_EXTENSION_BASE: DAT_COUNT = 0x1000;
pub const DAT_PROVIDER_FIELD_HA_LB: DAT_PROVIDER_ATTR_MASK = 0x10000000;
pub const DAT_PROVIDER_FIELD_HA_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x8000000;
pub const DAT_PROVIDER_FIELD_IS_SIGNAL_SAFE: DAT_PROVIDER_ATTR_MASK = 0x4000000;
pub const DAT_PROVIDER_FIELD_RDMA_READ_LMR_RMR_CONTEXT_EXPOSURE: DAT_PROVIDER_ATTR_MASK = 0x1000000;
pub const DAT_PROVIDER_FIELD_RMR_SCOPE_SUPPORTED: DAT_PROVIDER_ATTR_MASK = 0x2000000;

/// `DAT_IB_EVENT_NUMBER` values.
pub const DAT_IB_DTO_EVENT: DAT_IB_EVENT_NUMBER = 0x40000;
pub const DAT_IB_UD_CONNECTION_REQUEST_EVENT: DAT_IB_EVENT_NUMBER = 0x40001;
pub const DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED: DAT_IB_EVENT_NUMBER = 0x40002;
pub const DAT_IB_UD_CONNECTION_REJECT_EVENT: DAT_IB_EVENT_NUMBER = 0x40003;
pub const DAT_IB_UD_CONNECTION_ERROR_EVENT: DAT_IB_EVENT_NUMBER = 0x40004;
pub const DAT_IB_COLLECTIVE_EVENT: DAT_IB_EVENT_NUMBER = 0x40005;

/// `DAT_IB_OP` values.
pub const DAT_IB_FETCH_AND_ADD_OP: DAT_IB_OP = 0x0;
pub const DAT_IB_CMP_AND_SWAP_OP: DAT_IB_OP = 0x1;
pub const DAT_IB_RDMA_WRITE_IMMED_OP: DAT_IB_OP = 0x2;
pub const DAT_IB_UD_SEND_OP: DAT_IB_OP = 0x3;
pub const DAT_IB_QUERY_COUNTERS_OP: DAT_IB_OP = 0x4;
pub const DAT_IB_PRINT_COUNTERS_OP: DAT_IB_OP = 0x5;
pub const DAT_IB_COLLECTIVE_CREATE_MEMBER_OP: DAT_IB_OP = 0x6;
pub const DAT_IB_COLLECTIVE_FREE_MEMBER_OP: DAT_IB_OP = 0x7;
pub const DAT_IB_COLLECTIVE_CREATE_GROUP_OP: DAT_IB_OP = 0x8;
pub const DAT_IB_COLLECTIVE_FREE_GROUP_OP: DAT_IB_OP = 0x9;
pub const DAT_IB_COLLECTIVE_SET_CLOCK_OP: DAT_IB_OP = 0xa;
pub const DAT_IB_COLLECTIVE_READ_CLOCK_OP: DAT_IB_OP = 0xb;
pub const DAT_IB_COLLECTIVE_SCATTER_OP: DAT_IB_OP = 0xc;
pub const DAT_IB_COLLECTIVE_SCATTERV_OP: DAT_IB_OP = 0xd;
pub const DAT_IB_COLLECTIVE_GATHER_OP: DAT_IB_OP = 0xe;
pub const DAT_IB_COLLECTIVE_GATHERV_OP: DAT_IB_OP = 0xf;
pub const DAT_IB_COLLECTIVE_ALLGATHER_OP: DAT_IB_OP = 0x10;
pub const DAT_IB_COLLECTIVE_ALLGATHERV_OP: DAT_IB_OP = 0x11;
pub const DAT_IB_COLLECTIVE_ALLTOALL_OP: DAT_IB_OP = 0x12;
pub const DAT_IB_COLLECTIVE_ALLTOALLV_OP: DAT_IB_OP = 0x13;
pub const DAT_IB_COLLECTIVE_REDUCE_OP: DAT_IB_OP = 0x14;
pub const DAT_IB_COLLECTIVE_ALLREDUCE_OP: DAT_IB_OP = 0x15;
pub const DAT_IB_COLLECTIVE_REDUCE_SCATTER_OP: DAT_IB_OP = 0x16;
pub const DAT_IB_COLLECTIVE_SCAN_OP: DAT_IB_OP = 0x17;
pub const DAT_IB_COLLECTIVE_BROADCAST_OP: DAT_IB_OP = 0x18;
pub const DAT_IB_COLLECTIVE_BARRIER_OP: DAT_IB_OP = 0x19;
pub const DAT_IB_START_COUNTERS_OP: DAT_IB_OP = 0x1a;
pub const DAT_IB_STOP_COUNTERS_OP: DAT_IB_OP = 0x1b;
pub const DAT_IB_UD_CM_FREE_OP: DAT_IB_OP = 0x1c;
pub const DAT_IB_UD_AH_FREE_OP: DAT_IB_OP = 0x1d;
pub const DAT_IB_OPEN_QUERY_OP: DAT_IB_OP = 0x1000;
pub const DAT_IB_CLOSE_QUERY_OP: DAT_IB_OP = 0x2000;

/// `DAT_IB_EXT_TYPE` values.
pub const DAT_IB_FETCH_AND_ADD: DAT_IB_EXT_TYPE = 0x0;
pub const DAT_IB_CMP_AND_SWAP: DAT_IB_EXT_TYPE = 0x1;
pub const DAT_IB_RDMA_WRITE_IMMED: DAT_IB_EXT_TYPE = 0x2;
pub const DAT_IB_RDMA_WRITE_IMMED_DATA: DAT_IB_EXT_TYPE = 0x3;
pub const DAT_IB_RECV_IMMED_DATA: DAT_IB_EXT_TYPE = 0x4;
pub const DAT_IB_UD_CONNECT_REQUEST: DAT_IB_EXT_TYPE = 0x5;
pub const DAT_IB_UD_REMOTE_AH: DAT_IB_EXT_TYPE = 0x6;
pub const DAT_IB_UD_PASSIVE_REMOTE_AH: DAT_IB_EXT_TYPE = 0x7;
pub const DAT_IB_UD_SEND: DAT_IB_EXT_TYPE = 0x8;
pub const DAT_IB_UD_RECV: DAT_IB_EXT_TYPE = 0x9;
pub const DAT_IB_UD_CONNECT_REJECT: DAT_IB_EXT_TYPE = 0xa;
pub const DAT_IB_UD_CONNECT_ERROR: DAT_IB_EXT_TYPE = 0xb;
pub const DAT_IB_COLLECTIVE_CREATE_STATUS: DAT_IB_EXT_TYPE = 0xc;
pub const DAT_IB_COLLECTIVE_CREATE_DATA: DAT_IB_EXT_TYPE = 0xd;
pub const DAT_IB_COLLECTIVE_CLOCK_SET_STATUS: DAT_IB_EXT_TYPE = 0xe;
pub const DAT_IB_COLLECTIVE_SCATTER_STATUS: DAT_IB_EXT_TYPE = 0xf;
pub const DAT_IB_COLLECTIVE_SCATTERV_STATUS: DAT_IB_EXT_TYPE = 0x10;
pub const DAT_IB_COLLECTIVE_GATHER_STATUS: DAT_IB_EXT_TYPE = 0x11;
pub const DAT_IB_COLLECTIVE_GATHERV_STATUS: DAT_IB_EXT_TYPE = 0x12;
pub const DAT_IB_COLLECTIVE_ALLGATHER_STATUS: DAT_IB_EXT_TYPE = 0x13;
pub const DAT_IB_COLLECTIVE_ALLGATHERV_STATUS: DAT_IB_EXT_TYPE = 0x14;
pub const DAT_IB_COLLECTIVE_ALLTOALL_STATUS: DAT_IB_EXT_TYPE = 0x15;
pub const DAT_IB_COLLECTIVE_ALLTOALLV_STATUS: DAT_IB_EXT_TYPE = 0x16;
pub const DAT_IB_COLLECTIVE_REDUCE_STATUS: DAT_IB_EXT_TYPE = 0x17;
pub const DAT_IB_COLLECTIVE_ALLREDUCE_STATUS: DAT_IB_EXT_TYPE = 0x18;
pub const DAT_IB_COLLECTIVE_REDUCE_SCATTER_STATUS: DAT_IB_EXT_TYPE = 0x19;
pub const DAT_IB_COLLECTIVE_SCAN_STATUS: DAT_IB_EXT_TYPE = 0x1a;
pub const DAT_IB_COLLECTIVE_BROADCAST_STATUS: DAT_IB_EXT_TYPE = 0x1b;
pub const DAT_IB_COLLECTIVE_BARRIER_STATUS: DAT_IB_EXT_TYPE = 0x1c;

/// `DAT_IB_STATUS` values.
pub const DAT_OP_SUCCESS: DAT_IB_STATUS = 0x0;
pub const DAT_IB_OP_ERR: DAT_IB_STATUS = 0x1;
pub const DAT_IB_COLL_COMP_ERR: DAT_IB_STATUS = 0x2;

/// `DAT_IB_RETURN` values.
pub const DAT_IB_ERR: DAT_IB_RETURN = 0x10000000;
pub const DAT_IB_COLLECTIVE_ERR: DAT_IB_RETURN = 0x10000001;

/// `DAT_IB_DTOS` values.
pub const DAT_IB_DTO_RDMA_WRITE_IMMED: DAT_IB_DTOS = 0x8;
pub const DAT_IB_DTO_RECV_IMMED: DAT_IB_DTOS = 0x9;
pub const DAT_IB_DTO_FETCH_ADD: DAT_IB_DTOS = 0xa;
pub const DAT_IB_DTO_CMP_SWAP: DAT_IB_DTOS = 0xb;
pub const DAT_IB_DTO_RECV_MSG_IMMED: DAT_IB_DTOS = 0xc;
pub const DAT_IB_DTO_SEND_UD: DAT_IB_DTOS = 0xd;
pub const DAT_IB_DTO_RECV_UD: DAT_IB_DTOS = 0xe;
pub const DAT_IB_DTO_RECV_UD_IMMED: DAT_IB_DTOS = 0xf;
pub const DAT_IB_DTO_COLLECTIVES: DAT_IB_DTOS = 0x10;

/// `DAT_IB_HANDLE_TYPE` values.
pub const DAT_IB_HANDLE_TYPE_EXT: DAT_IB_HANDLE_TYPE = 0xc;
pub const DAT_IB_HANDLE_TYPE_COLLECTIVE: DAT_IB_HANDLE_TYPE = 0xd;

/// `DAT_IB_EVD_EXTENSION_FLAGS` values.
pub const DAT_IB_EVD_EXTENSION_FLAG: DAT_IB_EVD_EXTENSION_FLAGS = 0x200;

/// `DAT_IB_MEM_PRIV_FLAGS` values.
pub const DAT_IB_MEM_PRIV_REMOTE_ATOMIC: DAT_IB_MEM_PRIV_FLAGS = 0x40;

/// `DAT_IB_SERVICE_TYPE` values.
pub const DAT_IB_SERVICE_TYPE_UD: DAT_IB_SERVICE_TYPE = 0x1;

/// `DAT_IA_COUNTERS` values.
pub const DCNT_IA_PZ_CREATE: DAT_IA_COUNTERS = 0x0;
pub const DCNT_IA_PZ_FREE: DAT_IA_COUNTERS = 0x1;
pub const DCNT_IA_LMR_CREATE: DAT_IA_COUNTERS = 0x2;
pub const DCNT_IA_LMR_FREE: DAT_IA_COUNTERS = 0x3;
pub const DCNT_IA_RMR_CREATE: DAT_IA_COUNTERS = 0x4;
pub const DCNT_IA_RMR_FREE: DAT_IA_COUNTERS = 0x5;
pub const DCNT_IA_PSP_CREATE: DAT_IA_COUNTERS = 0x6;
pub const DCNT_IA_PSP_CREATE_ANY: DAT_IA_COUNTERS = 0x7;
pub const DCNT_IA_PSP_FREE: DAT_IA_COUNTERS = 0x8;
pub const DCNT_IA_RSP_CREATE: DAT_IA_COUNTERS = 0x9;
pub const DCNT_IA_RSP_FREE: DAT_IA_COUNTERS = 0xa;
pub const DCNT_IA_EVD_CREATE: DAT_IA_COUNTERS = 0xb;
pub const DCNT_IA_EVD_FREE: DAT_IA_COUNTERS = 0xc;
pub const DCNT_IA_EP_CREATE: DAT_IA_COUNTERS = 0xd;
pub const DCNT_IA_EP_FREE: DAT_IA_COUNTERS = 0xe;
pub const DCNT_IA_SRQ_CREATE: DAT_IA_COUNTERS = 0xf;
pub const DCNT_IA_SRQ_FREE: DAT_IA_COUNTERS = 0x10;
pub const DCNT_IA_SP_CR: DAT_IA_COUNTERS = 0x11;
pub const DCNT_IA_SP_CR_ACCEPTED: DAT_IA_COUNTERS = 0x12;
pub const DCNT_IA_SP_CR_REJECTED: DAT_IA_COUNTERS = 0x13;
pub const DCNT_IA_MEM_ALLOC: DAT_IA_COUNTERS = 0x14;
pub const DCNT_IA_MEM_ALLOC_DATA: DAT_IA_COUNTERS = 0x15;
pub const DCNT_IA_MEM_FREE: DAT_IA_COUNTERS = 0x16;
pub const DCNT_IA_ASYNC_ERROR: DAT_IA_COUNTERS = 0x17;
pub const DCNT_IA_ASYNC_QP_ERROR: DAT_IA_COUNTERS = 0x18;
pub const DCNT_IA_ASYNC_CQ_ERROR: DAT_IA_COUNTERS = 0x19;
pub const DCNT_IA_CM_LISTEN: DAT_IA_COUNTERS = 0x1a;
pub const DCNT_IA_CM_REQ_TX: DAT_IA_COUNTERS = 0x1b;
pub const DCNT_IA_CM_REQ_RX: DAT_IA_COUNTERS = 0x1c;
pub const DCNT_IA_CM_REP_TX: DAT_IA_COUNTERS = 0x1d;
pub const DCNT_IA_CM_REP_RX: DAT_IA_COUNTERS = 0x1e;
pub const DCNT_IA_CM_RTU_TX: DAT_IA_COUNTERS = 0x1f;
pub const DCNT_IA_CM_RTU_RX: DAT_IA_COUNTERS = 0x20;
pub const DCNT_IA_CM_USER_REJ_TX: DAT_IA_COUNTERS = 0x21;
pub const DCNT_IA_CM_USER_REJ_RX: DAT_IA_COUNTERS = 0x22;
pub const DCNT_IA_CM_ACTIVE_EST: DAT_IA_COUNTERS = 0x23;
pub const DCNT_IA_CM_PASSIVE_EST: DAT_IA_COUNTERS = 0x24;
pub const DCNT_IA_CM_AH_REQ_TX: DAT_IA_COUNTERS = 0x25;
pub const DCNT_IA_CM_AH_REQ_RX: DAT_IA_COUNTERS = 0x26;
pub const DCNT_IA_CM_AH_RESOLVED: DAT_IA_COUNTERS = 0x27;
pub const DCNT_IA_CM_DREQ_TX: DAT_IA_COUNTERS = 0x28;
pub const DCNT_IA_CM_DREQ_RX: DAT_IA_COUNTERS = 0x29;
pub const DCNT_IA_CM_DREP_TX: DAT_IA_COUNTERS = 0x2a;
pub const DCNT_IA_CM_DREP_RX: DAT_IA_COUNTERS = 0x2b;
pub const DCNT_IA_CM_MRA_TX: DAT_IA_COUNTERS = 0x2c;
pub const DCNT_IA_CM_MRA_RX: DAT_IA_COUNTERS = 0x2d;
pub const DCNT_IA_CM_REQ_FULLQ_POLL: DAT_IA_COUNTERS = 0x2e;
pub const DCNT_IA_CM_ERR: DAT_IA_COUNTERS = 0x2f;
pub const DCNT_IA_CM_ERR_REQ_FULLQ: DAT_IA_COUNTERS = 0x30;
pub const DCNT_IA_CM_ERR_REQ_DUP: DAT_IA_COUNTERS = 0x31;
pub const DCNT_IA_CM_ERR_REQ_RETRY: DAT_IA_COUNTERS = 0x32;
pub const DCNT_IA_CM_ERR_REP_DUP: DAT_IA_COUNTERS = 0x33;
pub const DCNT_IA_CM_ERR_REP_RETRY: DAT_IA_COUNTERS = 0x34;
pub const DCNT_IA_CM_ERR_RTU_DUP: DAT_IA_COUNTERS = 0x35;
pub const DCNT_IA_CM_ERR_RTU_RETRY: DAT_IA_COUNTERS = 0x36;
pub const DCNT_IA_CM_ERR_REFUSED: DAT_IA_COUNTERS = 0x37;
pub const DCNT_IA_CM_ERR_RESET: DAT_IA_COUNTERS = 0x38;
pub const DCNT_IA_CM_ERR_TIMEOUT: DAT_IA_COUNTERS = 0x39;
pub const DCNT_IA_CM_ERR_REJ_TX: DAT_IA_COUNTERS = 0x3a;
pub const DCNT_IA_CM_ERR_REJ_RX: DAT_IA_COUNTERS = 0x3b;
pub const DCNT_IA_CM_ERR_DREQ_DUP: DAT_IA_COUNTERS = 0x3c;
pub const DCNT_IA_CM_ERR_DREQ_RETRY: DAT_IA_COUNTERS = 0x3d;
pub const DCNT_IA_CM_ERR_DREP_DUP: DAT_IA_COUNTERS = 0x3e;
pub const DCNT_IA_CM_ERR_DREP_RETRY: DAT_IA_COUNTERS = 0x3f;
pub const DCNT_IA_CM_ERR_MRA_DUP: DAT_IA_COUNTERS = 0x40;
pub const DCNT_IA_CM_ERR_MRA_RETRY: DAT_IA_COUNTERS = 0x41;
pub const DCNT_IA_CM_ERR_UNEXPECTED: DAT_IA_COUNTERS = 0x42;
pub const DCNT_IA_LNK_ERR_RCV: DAT_IA_COUNTERS = 0x43;
pub const DCNT_IA_LNK_ERR_RCV_REM_PHYS: DAT_IA_COUNTERS = 0x44;
pub const DCNT_IA_LNK_ERR_RCV_CONSTRAINT: DAT_IA_COUNTERS = 0x45;
pub const DCNT_IA_LNK_ERR_XMT_DISCARDS: DAT_IA_COUNTERS = 0x46;
pub const DCNT_IA_LNK_ERR_XMT_CONTRAINT: DAT_IA_COUNTERS = 0x47;
pub const DCNT_IA_LNK_ERR_INTEGRITY: DAT_IA_COUNTERS = 0x48;
pub const DCNT_IA_LNK_ERR_EXC_BUF_OVERRUN: DAT_IA_COUNTERS = 0x49;
pub const DCNT_IA_LNK_WARN_RCV_SW_RELAY: DAT_IA_COUNTERS = 0x4a;
pub const DCNT_IA_LNK_WARN_XMT_WAIT: DAT_IA_COUNTERS = 0x4b;
pub const DCNT_IA_DIAG_ERR_RQ_RAE: DAT_IA_COUNTERS = 0x4c;
pub const DCNT_IA_DIAG_ERR_RQ_OOS: DAT_IA_COUNTERS = 0x4d;
pub const DCNT_IA_DIAG_ERR_RQ_RIRE: DAT_IA_COUNTERS = 0x4e;
pub const DCNT_IA_DIAG_ERR_RQ_UDSDPRD: DAT_IA_COUNTERS = 0x4f;
pub const DCNT_IA_DIAG_ERR_SQ_RAE: DAT_IA_COUNTERS = 0x50;
pub const DCNT_IA_DIAG_ERR_SQ_OOS: DAT_IA_COUNTERS = 0x51;
pub const DCNT_IA_DIAG_ERR_SQ_RIRE: DAT_IA_COUNTERS = 0x52;
pub const DCNT_IA_DIAG_ERR_SQ_RREE: DAT_IA_COUNTERS = 0x53;
pub const DCNT_IA_DIAG_ERR_SQ_TREE: DAT_IA_COUNTERS = 0x54;
pub const DCNT_IA_ALL_COUNTERS: DAT_IA_COUNTERS = 0x55;

/// `DAT_EP_COUNTERS` values.
pub const DCNT_EP_CONNECT: DAT_EP_COUNTERS = 0x0;
pub const DCNT_EP_DISCONNECT: DAT_EP_COUNTERS = 0x1;
pub const DCNT_EP_POST_SEND: DAT_EP_COUNTERS = 0x2;
pub const DCNT_EP_POST_SEND_DATA: DAT_EP_COUNTERS = 0x3;
pub const DCNT_EP_POST_SEND_UD: DAT_EP_COUNTERS = 0x4;
pub const DCNT_EP_POST_SEND_UD_DATA: DAT_EP_COUNTERS = 0x5;
pub const DCNT_EP_POST_RECV: DAT_EP_COUNTERS = 0x6;
pub const DCNT_EP_POST_RECV_DATA: DAT_EP_COUNTERS = 0x7;
pub const DCNT_EP_POST_WRITE: DAT_EP_COUNTERS = 0x8;
pub const DCNT_EP_POST_WRITE_DATA: DAT_EP_COUNTERS = 0x9;
pub const DCNT_EP_POST_WRITE_IMM: DAT_EP_COUNTERS = 0xa;
pub const DCNT_EP_POST_WRITE_IMM_DATA: DAT_EP_COUNTERS = 0xb;
pub const DCNT_EP_POST_READ: DAT_EP_COUNTERS = 0xc;
pub const DCNT_EP_POST_READ_DATA: DAT_EP_COUNTERS = 0xd;
pub const DCNT_EP_POST_CMP_SWAP: DAT_EP_COUNTERS = 0xe;
pub const DCNT_EP_POST_FETCH_ADD: DAT_EP_COUNTERS = 0xf;
pub const DCNT_EP_RECV: DAT_EP_COUNTERS = 0x10;
pub const DCNT_EP_RECV_DATA: DAT_EP_COUNTERS = 0x11;
pub const DCNT_EP_RECV_UD: DAT_EP_COUNTERS = 0x12;
pub const DCNT_EP_RECV_UD_DATA: DAT_EP_COUNTERS = 0x13;
pub const DCNT_EP_RECV_IMM: DAT_EP_COUNTERS = 0x14;
pub const DCNT_EP_RECV_IMM_DATA: DAT_EP_COUNTERS = 0x15;
pub const DCNT_EP_RECV_RDMA_IMM: DAT_EP_COUNTERS = 0x16;
pub const DCNT_EP_RECV_RDMA_IMM_DATA: DAT_EP_COUNTERS = 0x17;
pub const DCNT_EP_ALL_COUNTERS: DAT_EP_COUNTERS = 0x18;

/// `DAT_EVD_COUNTERS` values.
pub const DCNT_EVD_WAIT: DAT_EVD_COUNTERS = 0x0;
pub const DCNT_EVD_WAIT_BLOCKED: DAT_EVD_COUNTERS = 0x1;
pub const DCNT_EVD_WAIT_NOTIFY: DAT_EVD_COUNTERS = 0x2;
pub const DCNT_EVD_DEQUEUE: DAT_EVD_COUNTERS = 0x3;
pub const DCNT_EVD_DEQUEUE_FOUND: DAT_EVD_COUNTERS = 0x4;
pub const DCNT_EVD_DEQUEUE_NOT_FOUND: DAT_EVD_COUNTERS = 0x5;
pub const DCNT_EVD_DEQUEUE_POLL: DAT_EVD_COUNTERS = 0x6;
pub const DCNT_EVD_DEQUEUE_POLL_FOUND: DAT_EVD_COUNTERS = 0x7;
pub const DCNT_EVD_CONN_CALLBACK: DAT_EVD_COUNTERS = 0x8;
pub const DCNT_EVD_DTO_CALLBACK: DAT_EVD_COUNTERS = 0x9;
pub const DCNT_EVD_ALL_COUNTERS: DAT_EVD_COUNTERS = 0xa;

/// `DAT_IA_COUNTER_TYPE` values.
pub const DCNT_IA_CM: DAT_IA_COUNTER_TYPE = 0x0;
pub const DCNT_IA_LNK: DAT_IA_COUNTER_TYPE = 0x1;
pub const DCNT_IA_DIAG: DAT_IA_COUNTER_TYPE = 0x2;

/// `DAT_IB_COLLECTIVE_DATA_TYPE` values.
pub const DAT_IB_COLLECTIVE_TYPE_INT8: DAT_IB_COLLECTIVE_DATA_TYPE = 0x0;
pub const DAT_IB_COLLECTIVE_TYPE_UINT8: DAT_IB_COLLECTIVE_DATA_TYPE = 0x1;
pub const DAT_IB_COLLECTIVE_TYPE_INT16: DAT_IB_COLLECTIVE_DATA_TYPE = 0x2;
pub const DAT_IB_COLLECTIVE_TYPE_UINT16: DAT_IB_COLLECTIVE_DATA_TYPE = 0x3;
pub const DAT_IB_COLLECTIVE_TYPE_INT32: DAT_IB_COLLECTIVE_DATA_TYPE = 0x4;
pub const DAT_IB_COLLECTIVE_TYPE_UINT32: DAT_IB_COLLECTIVE_DATA_TYPE = 0x5;
pub const DAT_IB_COLLECTIVE_TYPE_INT64: DAT_IB_COLLECTIVE_DATA_TYPE = 0x6;
pub const DAT_IB_COLLECTIVE_TYPE_UINT64: DAT_IB_COLLECTIVE_DATA_TYPE = 0x7;
pub const DAT_IB_COLLECTIVE_TYPE_FLOAT: DAT_IB_COLLECTIVE_DATA_TYPE = 0x8;
pub const DAT_IB_COLLECTIVE_TYPE_DOUBLE: DAT_IB_COLLECTIVE_DATA_TYPE = 0x9;
pub const DAT_IB_COLLECTIVE_TYPE_LONG_DOUBLE: DAT_IB_COLLECTIVE_DATA_TYPE = 0xa;
pub const DAT_IB_COLLECTIVE_TYPE_SHORT_INT: DAT_IB_COLLECTIVE_DATA_TYPE = 0xb;
pub const DAT_IB_COLLECTIVE_TYPE_2INT: DAT_IB_COLLECTIVE_DATA_TYPE = 0xc;
pub const DAT_IB_COLLECTIVE_TYPE_FLOAT_INT: DAT_IB_COLLECTIVE_DATA_TYPE = 0xd;
pub const DAT_IB_COLLECTIVE_TYPE_LONG_INT: DAT_IB_COLLECTIVE_DATA_TYPE = 0xe;
pub const DAT_IB_COLLECTIVE_TYPE_DOUBLE_INT: DAT_IB_COLLECTIVE_DATA_TYPE = 0xf;

/// `DAT_IB_COLLECTIVE_REDUCE_DATA_OP` values.
pub const DAT_IB_COLLECTIVE_REDUCE_OP_MAX: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x0;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_MIN: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x1;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_SUM: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x2;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_PROD: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x3;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_LAND: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x4;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_BAND: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x5;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_LOR: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x6;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_BOR: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x7;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_LXOR: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x8;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_BXOR: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0x9;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_MAXLOC: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0xa;
pub const DAT_IB_COLLECTIVE_REDUCE_OP_MINLOC: DAT_IB_COLLECTIVE_REDUCE_DATA_OP = 0xb;

// ---------------------------------------------------------------------------
// Structures and unions (field order and types as in the C headers)
// ---------------------------------------------------------------------------

#[repr(C)]
#[derive(Clone, Copy)]
pub union DAT_SP_HANDLE {
    pub rsp_handle: DAT_RSP_HANDLE,
    pub psp_handle: DAT_PSP_HANDLE,
    pub csp_handle: DAT_CSP_HANDLE,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_DTO_COMPLETION_EVENT_DATA {
    pub ep_handle: DAT_EP_HANDLE,
    pub user_cookie: DAT_CONTEXT,
    pub status: DAT_DTO_COMPLETION_STATUS,
    pub transfered_length: DAT_SEG_LENGTH,
    pub operation: DAT_DTOS,
    pub rmr_context: DAT_RMR_CONTEXT,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_CR_ARRIVAL_EVENT_DATA {
    pub sp_handle: DAT_SP_HANDLE,
    pub local_ia_address_ptr: DAT_IA_ADDRESS_PTR,
    pub conn_qual: DAT_CONN_QUAL,
    pub cr_handle: DAT_CR_HANDLE,
    pub truncate_flag: DAT_BOOLEAN,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_EVENT {
    pub event_number: DAT_EVENT_NUMBER,
    pub evd_handle: DAT_EVD_HANDLE,
    pub event_data: DAT_EVENT_DATA,
    pub event_extension_data: [DAT_UINT64; 8],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_LMR_TRIPLET {
    pub virtual_address: DAT_VADDR,
    pub segment_length: DAT_SEG_LENGTH,
    pub lmr_context: DAT_LMR_CONTEXT,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_RMR_TRIPLET {
    pub virtual_address: DAT_VADDR,
    pub segment_length: DAT_SEG_LENGTH,
    pub rmr_context: DAT_RMR_CONTEXT,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_EP_ATTR {
    pub service_type: DAT_SERVICE_TYPE,
    pub max_message_size: DAT_SEG_LENGTH,
    pub max_rdma_size: DAT_SEG_LENGTH,
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
pub struct DAT_COMM {
    pub domain: c_int,
    pub r#type: c_int,
    pub protocol: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_EP_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub ep_state: DAT_EP_STATE,
    pub comm: DAT_COMM,
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
    pub max_lmr_block_size: DAT_SEG_LENGTH,
    pub max_lmr_virtual_address: DAT_VADDR,
    pub max_pzs: DAT_COUNT,
    pub max_message_size: DAT_SEG_LENGTH,
    pub max_rdma_size: DAT_SEG_LENGTH,
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
    pub zb_supported: DAT_BOOLEAN,
    pub extension_supported: DAT_EXTENSION,
    pub extension_version: DAT_COUNT,
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
    pub rdma_read_lmr_rmr_context_exposure: DAT_BOOLEAN,
    pub rmr_scope_supported: DAT_RMR_SCOPE,
    pub is_signal_safe: DAT_BOOLEAN,
    pub ha_supported: DAT_BOOLEAN,
    pub ha_loadbalancing: DAT_HA_LB,
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
    pub va_type: DAT_VA_TYPE,
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
    pub rmr_scope: DAT_RMR_SCOPE,
    pub va_type: DAT_VA_TYPE,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union DAT_CNO_PARAM_PROXY {
    pub agent: DAT_OS_WAIT_PROXY_AGENT,
    pub fd: DAT_FD,
    pub none: DAT_PVOID,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_CNO_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub proxy_type: DAT_PROXY_TYPE,
    pub proxy: DAT_CNO_PARAM_PROXY,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DAT_CSP_PARAM {
    pub ia_handle: DAT_IA_HANDLE,
    pub comm: *mut DAT_COMM,
    pub address_ptr: DAT_IA_ADDRESS_PTR,
    pub evd_handle: DAT_EVD_HANDLE,
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
    pub csp_create_func: DAT_CSP_CREATE_FUNC,
    pub csp_query_func: DAT_CSP_QUERY_FUNC,
    pub csp_free_func: DAT_CSP_FREE_FUNC,
    pub ep_common_connect_func: DAT_EP_COMMON_CONNECT_FUNC,
    pub rmr_create_for_ep_func: DAT_RMR_CREATE_FOR_EP_FUNC,
    pub ep_post_send_with_invalidate_func: DAT_EP_POST_SEND_WITH_INVALIDATE_FUNC,
    pub ep_post_rdma_read_to_rmr_func: DAT_EP_POST_RDMA_READ_TO_RMR_FUNC,
    pub cno_fd_create_func: DAT_CNO_FD_CREATE_FUNC,
    pub cno_trigger_func: DAT_CNO_TRIGGER_FUNC,
    pub ia_ha_related_func: DAT_IA_HA_RELATED_FUNC,
    pub handle_extendedop_func: DAT_HANDLE_EXTENDEDOP_FUNC,
}

// ---------------------------------------------------------------------------
// dat_registry.h: provider dispatch-table slot types (signatures of the
// corresponding dat_* calls; the IA open slot takes only the IA name part)
// ---------------------------------------------------------------------------

pub type DAT_CR_REJECT_FUNC = Option<
    unsafe extern "C" fn(cr_handle: DAT_CR_HANDLE, private_data_size: DAT_COUNT, private_data: DAT_PVOID) -> DAT_RETURN,
>;
pub type DAT_LMR_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        mem_type: DAT_MEM_TYPE,
        region_description: DAT_REGION_DESCRIPTION,
        length: DAT_VLEN,
        pz_handle: DAT_PZ_HANDLE,
        privileges: DAT_MEM_PRIV_FLAGS,
        va_type: DAT_VA_TYPE,
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
        lmr_handle: DAT_LMR_HANDLE,
        lmr_triplet: *const DAT_LMR_TRIPLET,
        mem_priv: DAT_MEM_PRIV_FLAGS,
        va_type: DAT_VA_TYPE,
        ep_handle: DAT_EP_HANDLE,
        user_cookie: DAT_RMR_COOKIE,
        completion_flags: DAT_COMPLETION_FLAGS,
        context: *mut DAT_RMR_CONTEXT,
    ) -> DAT_RETURN,
>;
// Generated by tests/abi/gen_checks.py and compared byte for byte by `make -C tests/abi
// regen-check`, so rustfmt leaves it as generated.
// DAT 2.0 additions to the provider table (slots 70-80).
pub type DAT_CSP_CREATE_FUNC = Option<
    unsafe extern "C" fn(
        ia_handle: DAT_IA_HANDLE,
        comm: *mut DAT_COMM,
        address: DAT_IA_ADDRESS_PTR,
        evd_handle: DAT_EVD_HANDLE,
        csp_handle: *mut DAT_CSP_HANDLE,
    ) -> DAT_RETURN,
>;
pub type DAT_CSP_QUERY_FUNC = Option<
    unsafe extern "C" fn(csp_handle: DAT_CSP_HANDLE, mask: DAT_CSP_PARAM_MASK, param: *mut DAT_CSP_PARAM) -> DAT_RETURN,
>;
pub type DAT_CSP_FREE_FUNC = Option<unsafe extern "C" fn(csp_handle: DAT_CSP_HANDLE) -> DAT_RETURN>;
pub type DAT_EP_COMMON_CONNECT_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        remote_address: DAT_IA_ADDRESS_PTR,
        timeout: DAT_TIMEOUT,
        private_data_size: DAT_COUNT,
        private_data: DAT_PVOID,
    ) -> DAT_RETURN,
>;
pub type DAT_RMR_CREATE_FOR_EP_FUNC =
    Option<unsafe extern "C" fn(pz_handle: DAT_PZ_HANDLE, rmr_handle: *mut DAT_RMR_HANDLE) -> DAT_RETURN>;
pub type DAT_EP_POST_SEND_WITH_INVALIDATE_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        num_segments: DAT_COUNT,
        local_iov: *mut DAT_LMR_TRIPLET,
        user_cookie: DAT_DTO_COOKIE,
        completion_flags: DAT_COMPLETION_FLAGS,
        invalidate_flag: DAT_BOOLEAN,
        rmr_context: DAT_RMR_CONTEXT,
    ) -> DAT_RETURN,
>;
pub type DAT_EP_POST_RDMA_READ_TO_RMR_FUNC = Option<
    unsafe extern "C" fn(
        ep_handle: DAT_EP_HANDLE,
        local: *const DAT_RMR_TRIPLET,
        user_cookie: DAT_DTO_COOKIE,
        remote: *const DAT_RMR_TRIPLET,
        completion_flags: DAT_COMPLETION_FLAGS,
    ) -> DAT_RETURN,
>;
pub type DAT_CNO_FD_CREATE_FUNC = Option<
    unsafe extern "C" fn(ia_handle: DAT_IA_HANDLE, fd: *mut DAT_FD, cno_handle: *mut DAT_CNO_HANDLE) -> DAT_RETURN,
>;
pub type DAT_CNO_TRIGGER_FUNC =
    Option<unsafe extern "C" fn(cno_handle: DAT_CNO_HANDLE, evd_handle: *mut DAT_EVD_HANDLE) -> DAT_RETURN>;
pub type DAT_IA_HA_RELATED_FUNC =
    Option<unsafe extern "C" fn(ia_handle: DAT_IA_HANDLE, name: DAT_NAME_PTR, answer: *mut DAT_BOOLEAN) -> DAT_RETURN>;
pub type DAT_EXTENDED_OP = c_int;
/// The last argument is a C `va_list`, which x86_64 passes as a pointer to its state.
pub type DAT_HANDLE_EXTENDEDOP_FUNC =
    Option<unsafe extern "C" fn(handle: DAT_HANDLE, op: DAT_EXTENDED_OP, args: *mut c_void) -> DAT_RETURN>;

#[cfg(test)]
#[rustfmt::skip]
#[path = "abi_layout_tests.rs"]
mod layout_tests;
