//! A hand-written minimal binding of libibverbs and librdmacm, loaded with `dlopen`.
//!
//! Only the structures we touch are declared, and only up to the last field we touch (the
//! library allocates them; we never create one by value except the request structs, which are
//! declared in full). Offsets match rdma-core's `<infiniband/verbs.h>` / `<rdma/rdma_cma.h>`
//! (x86_64, aarch64 and other LP64 targets); `layout_check.c` beside this file prints them
//! from the real headers for comparison. These structures belong to libibverbs' frozen
//! `IBVERBS_1.1` ABI: new members are only ever appended or placed in `verbs_context` in front
//! of `ibv_context`.
//!
//! The "inline" verbs of `verbs.h` (post_send, post_recv, poll_cq, req_notify_cq,
//! post_srq_recv, alloc_mw, bind_mw, dealloc_mw) are calls through `ibv_context.ops`; the
//! [`Ops`] helpers do exactly what the header's inline functions do.

#![allow(non_camel_case_types, dead_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

// ---- constants -------------------------------------------------------------------------------

pub const IBV_WR_RDMA_WRITE: u32 = 0;
pub const IBV_WR_RDMA_WRITE_WITH_IMM: u32 = 1;
pub const IBV_WR_SEND: u32 = 2;
pub const IBV_WR_RDMA_READ: u32 = 4;
pub const IBV_WR_ATOMIC_CMP_AND_SWP: u32 = 5;
pub const IBV_WR_ATOMIC_FETCH_AND_ADD: u32 = 6;
pub const IBV_WR_BIND_MW: u32 = 8;

pub const IBV_SEND_FENCE: u32 = 1;
pub const IBV_SEND_SIGNALED: u32 = 2;
pub const IBV_SEND_SOLICITED: u32 = 4;
pub const IBV_SEND_INLINE: u32 = 8;

pub const IBV_WC_SUCCESS: u32 = 0;
pub const IBV_WC_LOC_LEN_ERR: u32 = 1;
pub const IBV_WC_LOC_QP_OP_ERR: u32 = 2;
pub const IBV_WC_LOC_PROT_ERR: u32 = 4;
pub const IBV_WC_WR_FLUSH_ERR: u32 = 5;
pub const IBV_WC_MW_BIND_ERR: u32 = 6;
pub const IBV_WC_BAD_RESP_ERR: u32 = 7;
pub const IBV_WC_LOC_ACCESS_ERR: u32 = 8;
pub const IBV_WC_REM_INV_REQ_ERR: u32 = 9;
pub const IBV_WC_REM_ACCESS_ERR: u32 = 10;
pub const IBV_WC_REM_OP_ERR: u32 = 11;
pub const IBV_WC_RETRY_EXC_ERR: u32 = 12;
pub const IBV_WC_RNR_RETRY_EXC_ERR: u32 = 13;

/// `ibv_wc.opcode` of a receive consumed by an RDMA write with immediate data.
pub const IBV_WC_RECV_RDMA_WITH_IMM: u32 = 129;
/// `ibv_wc.wc_flags`: `imm_data` is valid.
pub const IBV_WC_WITH_IMM: u32 = 2;
/// `ibv_device_attr.atomic_cap`: no atomic operations.
pub const IBV_ATOMIC_NONE: c_int = 0;

pub const IBV_ACCESS_LOCAL_WRITE: c_int = 1;
pub const IBV_ACCESS_REMOTE_WRITE: c_int = 2;
pub const IBV_ACCESS_REMOTE_READ: c_int = 4;
pub const IBV_ACCESS_REMOTE_ATOMIC: c_int = 8;
pub const IBV_ACCESS_MW_BIND: c_int = 16;

pub const IBV_QPS_ERR: u32 = 6;
pub const IBV_QP_STATE: c_int = 1;
pub const IBV_QPT_RC: u32 = 2;
pub const IBV_SRQ_MAX_WR: c_int = 1;
pub const IBV_SRQ_LIMIT: c_int = 2;

pub const IBV_MW_TYPE_1: u32 = 1;
pub const IBV_MW_TYPE_2: u32 = 2;
pub const IBV_DEVICE_MEM_WINDOW: u32 = 1 << 17;
pub const IBV_DEVICE_MEM_WINDOW_TYPE_2A: u32 = 1 << 23;
pub const IBV_DEVICE_MEM_WINDOW_TYPE_2B: u32 = 1 << 24;

pub const IBV_TRANSPORT_IB: c_int = 0;
pub const IBV_TRANSPORT_IWARP: c_int = 1;
pub const IBV_LINK_LAYER_ETHERNET: u8 = 2;
pub const IBV_PORT_ACTIVE: u32 = 4;

pub const IBV_EVENT_CQ_ERR: u32 = 0;
pub const IBV_EVENT_QP_FATAL: u32 = 1;
pub const IBV_EVENT_QP_REQ_ERR: u32 = 2;
pub const IBV_EVENT_QP_ACCESS_ERR: u32 = 3;
/// A queue pair received a message before its connection was reported established.
pub const IBV_EVENT_COMM_EST: u32 = 4;
pub const IBV_EVENT_DEVICE_FATAL: u32 = 8;
pub const IBV_EVENT_PORT_ERR: u32 = 10;
pub const IBV_EVENT_SRQ_ERR: u32 = 14;
pub const IBV_EVENT_SRQ_LIMIT_REACHED: u32 = 15;
pub const IBV_EVENT_QP_LAST_WQE_REACHED: u32 = 16;

pub const RDMA_PS_TCP: c_int = 0x0106;
/// rdma_cm's UDP port space: ids of unreliable datagram queue pairs (SIDR exchanges on IB/RoCE).
pub const RDMA_PS_UDP: c_int = 0x0111;
pub const IBV_QPT_UD: u32 = 4;

pub const RDMA_CM_EVENT_ADDR_RESOLVED: u32 = 0;
pub const RDMA_CM_EVENT_ADDR_ERROR: u32 = 1;
pub const RDMA_CM_EVENT_ROUTE_RESOLVED: u32 = 2;
pub const RDMA_CM_EVENT_ROUTE_ERROR: u32 = 3;
pub const RDMA_CM_EVENT_CONNECT_REQUEST: u32 = 4;
pub const RDMA_CM_EVENT_CONNECT_RESPONSE: u32 = 5;
pub const RDMA_CM_EVENT_CONNECT_ERROR: u32 = 6;
pub const RDMA_CM_EVENT_UNREACHABLE: u32 = 7;
pub const RDMA_CM_EVENT_REJECTED: u32 = 8;
pub const RDMA_CM_EVENT_ESTABLISHED: u32 = 9;
pub const RDMA_CM_EVENT_DISCONNECTED: u32 = 10;
pub const RDMA_CM_EVENT_DEVICE_REMOVAL: u32 = 11;
pub const RDMA_CM_EVENT_ADDR_CHANGE: u32 = 14;
pub const RDMA_CM_EVENT_TIMEWAIT_EXIT: u32 = 15;

// ---- structures ------------------------------------------------------------------------------

/// `struct ibv_context_ops` (32 function pointers); only the slots we call are typed.
#[repr(C)]
pub struct ibv_context_ops {
    _compat0: [usize; 7],
    pub alloc_mw: Option<unsafe extern "C" fn(*mut ibv_pd, u32) -> *mut ibv_mw>,
    pub bind_mw: Option<unsafe extern "C" fn(*mut ibv_qp, *mut ibv_mw, *mut ibv_mw_bind) -> c_int>,
    pub dealloc_mw: Option<unsafe extern "C" fn(*mut ibv_mw) -> c_int>,
    _compat1: usize,
    pub poll_cq: Option<unsafe extern "C" fn(*mut ibv_cq, c_int, *mut ibv_wc) -> c_int>,
    pub req_notify_cq: Option<unsafe extern "C" fn(*mut ibv_cq, c_int) -> c_int>,
    _compat2: [usize; 7],
    pub post_srq_recv: Option<unsafe extern "C" fn(*mut ibv_srq, *mut ibv_recv_wr, *mut *mut ibv_recv_wr) -> c_int>,
    _compat3: [usize; 4],
    pub post_send: Option<PostSendFn>,
    pub post_recv: Option<PostRecvFn>,
    _compat4: [usize; 5],
}

#[repr(C)]
pub struct ibv_context {
    pub device: *mut ibv_device,
    pub ops: ibv_context_ops,
    pub cmd_fd: c_int,
    pub async_fd: c_int,
    pub num_comp_vectors: c_int,
}

#[repr(C)]
pub struct ibv_device {
    _ops: [usize; 2],
    pub node_type: c_int,
    pub transport_type: c_int,
    pub name: [c_char; 64],
}

#[repr(C)]
pub struct ibv_pd {
    pub context: *mut ibv_context,
    pub handle: u32,
}

#[repr(C)]
pub struct ibv_mr {
    pub context: *mut ibv_context,
    pub pd: *mut ibv_pd,
    pub addr: *mut c_void,
    pub length: usize,
    pub handle: u32,
    pub lkey: u32,
    pub rkey: u32,
}

#[repr(C)]
pub struct ibv_mw {
    pub context: *mut ibv_context,
    pub pd: *mut ibv_pd,
    pub rkey: u32,
    pub handle: u32,
    pub mw_type: u32,
}

#[repr(C)]
pub struct ibv_cq {
    pub context: *mut ibv_context,
    pub channel: *mut c_void,
    pub cq_context: *mut c_void,
    pub handle: u32,
    pub cqe: c_int,
}

#[repr(C)]
pub struct ibv_srq {
    pub context: *mut ibv_context,
    pub srq_context: *mut c_void,
    pub pd: *mut ibv_pd,
    pub handle: u32,
}

#[repr(C)]
pub struct ibv_qp {
    pub context: *mut ibv_context,
    pub qp_context: *mut c_void,
    pub pd: *mut ibv_pd,
    pub send_cq: *mut ibv_cq,
    pub recv_cq: *mut ibv_cq,
    pub srq: *mut ibv_srq,
    pub handle: u32,
    pub qp_num: u32,
    pub state: u32,
    pub qp_type: u32,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_wc {
    pub wr_id: u64,
    pub status: u32,
    pub opcode: u32,
    pub vendor_err: u32,
    pub byte_len: u32,
    pub imm_data: u32,
    pub qp_num: u32,
    pub src_qp: u32,
    pub wc_flags: u32,
    pub pkey_index: u16,
    pub slid: u16,
    pub sl: u8,
    pub dlid_path_bits: u8,
}

/// `struct ibv_sge` (addr, length, lkey) is the core's scatter/gather element: the provider
/// hands the consumer's list to the device as it is.
pub use crate::provider::Sge as ibv_sge;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_mw_bind_info {
    pub mr: *mut ibv_mr,
    pub addr: u64,
    pub length: u64,
    pub mw_access_flags: u32,
}

/// `wr.rdma` of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_rdma_wr {
    pub remote_addr: u64,
    pub rkey: u32,
}

/// `wr.atomic` of `struct ibv_send_wr`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_atomic_wr {
    pub remote_addr: u64,
    pub compare_add: u64,
    pub swap: u64,
    pub rkey: u32,
}

/// The `ud` member of the `wr` union: where a datagram goes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ibv_ud_wr {
    pub ah: *mut ibv_ah,
    pub remote_qpn: u32,
    pub remote_qkey: u32,
}

/// The `wr` union of `struct ibv_send_wr` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub union ibv_send_wr_wr {
    pub rdma: ibv_rdma_wr,
    pub atomic: ibv_atomic_wr,
    pub ud: ibv_ud_wr,
    _size: [u64; 4],
}

/// `struct ibv_send_wr` (128 bytes). `bind_*` is the `bind_mw` member of the trailing union.
/// A device's `ibv_post_send` (what the inline `ibv_post_send` of `verbs.h` calls).
pub type PostSendFn = unsafe extern "C" fn(*mut ibv_qp, *mut ibv_send_wr, *mut *mut ibv_send_wr) -> c_int;
/// A device's `ibv_post_recv`.
pub type PostRecvFn = unsafe extern "C" fn(*mut ibv_qp, *mut ibv_recv_wr, *mut *mut ibv_recv_wr) -> c_int;

/// Stands in for a device without `post_send`: fails with `ENOSYS`.
pub unsafe extern "C" fn no_post_send(_: *mut ibv_qp, _: *mut ibv_send_wr, _: *mut *mut ibv_send_wr) -> c_int {
    libc::ENOSYS
}

/// Stands in for a device without `post_recv`: fails with `ENOSYS`.
pub unsafe extern "C" fn no_post_recv(_: *mut ibv_qp, _: *mut ibv_recv_wr, _: *mut *mut ibv_recv_wr) -> c_int {
    libc::ENOSYS
}

#[repr(C)]
pub struct ibv_send_wr {
    pub wr_id: u64,
    pub next: *mut ibv_send_wr,
    pub sg_list: *mut ibv_sge,
    pub num_sge: c_int,
    pub opcode: u32,
    pub send_flags: u32,
    pub imm_data: u32,
    pub wr: ibv_send_wr_wr,
    _qp_type: [u32; 2],
    pub bind_mw: *mut ibv_mw,
    pub bind_rkey: u32,
    pub bind_info: ibv_mw_bind_info,
}

const _: () = assert!(std::mem::size_of::<ibv_send_wr>() == 128);
const _: () = assert!(std::mem::offset_of!(ibv_send_wr, wr) == 40);
const _: () = assert!(std::mem::offset_of!(ibv_send_wr, bind_mw) == 80);
const _: () = assert!(std::mem::size_of::<ibv_sge>() == 16);
const _: () = assert!(std::mem::offset_of!(ibv_sge, length) == 8);
const _: () = assert!(std::mem::offset_of!(ibv_sge, lkey) == 12);

#[repr(C)]
pub struct ibv_recv_wr {
    pub wr_id: u64,
    pub next: *mut ibv_recv_wr,
    pub sg_list: *mut ibv_sge,
    pub num_sge: c_int,
}

#[repr(C)]
pub struct ibv_mw_bind {
    pub wr_id: u64,
    pub send_flags: u32,
    pub bind_info: ibv_mw_bind_info,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct ibv_qp_cap {
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
    pub max_send_sge: u32,
    pub max_recv_sge: u32,
    pub max_inline_data: u32,
}

#[repr(C)]
pub struct ibv_qp_init_attr {
    pub qp_context: *mut c_void,
    pub send_cq: *mut ibv_cq,
    pub recv_cq: *mut ibv_cq,
    pub srq: *mut ibv_srq,
    pub cap: ibv_qp_cap,
    pub qp_type: u32,
    pub sq_sig_all: c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct ibv_srq_attr {
    pub max_wr: u32,
    pub max_sge: u32,
    pub srq_limit: u32,
}

#[repr(C)]
pub struct ibv_srq_init_attr {
    pub srq_context: *mut c_void,
    pub attr: ibv_srq_attr,
}

/// `struct ibv_qp_attr` (144 bytes); we only set `qp_state`.
#[repr(C, align(8))]
pub struct ibv_qp_attr {
    pub qp_state: u32,
    _rest: [u8; 140],
}

impl ibv_qp_attr {
    pub fn state(s: u32) -> ibv_qp_attr {
        ibv_qp_attr { qp_state: s, _rest: [0; 140] }
    }
}

/// `struct ibv_device_attr` (232 bytes).
#[repr(C)]
pub struct ibv_device_attr {
    pub fw_ver: [c_char; 64],
    pub node_guid: u64,
    pub sys_image_guid: u64,
    pub max_mr_size: u64,
    pub page_size_cap: u64,
    pub vendor_id: u32,
    pub vendor_part_id: u32,
    pub hw_ver: u32,
    pub max_qp: c_int,
    pub max_qp_wr: c_int,
    pub device_cap_flags: u32,
    pub max_sge: c_int,
    pub max_sge_rd: c_int,
    pub max_cq: c_int,
    pub max_cqe: c_int,
    pub max_mr: c_int,
    pub max_pd: c_int,
    pub max_qp_rd_atom: c_int,
    pub max_ee_rd_atom: c_int,
    pub max_res_rd_atom: c_int,
    pub max_qp_init_rd_atom: c_int,
    pub max_ee_init_rd_atom: c_int,
    pub atomic_cap: c_int,
    pub max_ee: c_int,
    pub max_rdd: c_int,
    pub max_mw: c_int,
    pub max_raw_ipv6_qp: c_int,
    pub max_raw_ethy_qp: c_int,
    pub max_mcast_grp: c_int,
    pub max_mcast_qp_attach: c_int,
    pub max_total_mcast_qp_attach: c_int,
    pub max_ah: c_int,
    pub max_fmr: c_int,
    pub max_map_per_fmr: c_int,
    pub max_srq: c_int,
    pub max_srq_wr: c_int,
    pub max_srq_sge: c_int,
    pub max_pkeys: u16,
    pub local_ca_ack_delay: u8,
    pub phys_port_cnt: u8,
    _pad: u32,
}

/// `struct ibv_port_attr`, oversized: the exported `ibv_query_port` fills the compat prefix.
#[repr(C, align(8))]
pub struct ibv_port_attr {
    pub state: u32,
    pub max_mtu: u32,
    pub active_mtu: u32,
    pub gid_tbl_len: c_int,
    pub port_cap_flags: u32,
    pub max_msg_sz: u32,
    _mid: [u8; 22],
    pub link_layer: u8,
    _rest: [u8; 201],
}

#[repr(C)]
pub struct ibv_comp_channel {
    pub context: *mut ibv_context,
    pub fd: c_int,
    pub refcnt: c_int,
}

#[repr(C)]
pub struct ibv_async_event {
    pub element: *mut c_void,
    pub event_type: u32,
}

#[repr(C)]
pub struct rdma_event_channel {
    pub fd: c_int,
}

/// `struct rdma_cm_id`, up to `port_num`; `route.addr.src_addr` at 32, `dst_addr` at 160.
#[repr(C)]
pub struct rdma_cm_id {
    pub verbs: *mut ibv_context,
    pub channel: *mut rdma_event_channel,
    pub context: *mut c_void,
    pub qp: *mut ibv_qp,
    pub src_addr: libc::sockaddr_storage,
    pub dst_addr: libc::sockaddr_storage,
    /// `route.addr.addr.ibaddr`: this side's and the peer's GIDs (IB/RoCE).
    pub ib_sgid: [u8; 16],
    pub ib_dgid: [u8; 16],
    _pkey: [u8; 8],
    /// `route.path_rec` (an array of `route.num_paths` `ibv_sa_path_rec`; `dlid` at 32).
    pub path_rec: *const u8,
    pub num_paths: c_int,
    _pad: u32,
    pub ps: c_int,
    pub port_num: u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct rdma_conn_param {
    pub private_data: *const c_void,
    pub private_data_len: u8,
    pub responder_resources: u8,
    pub initiator_depth: u8,
    pub flow_control: u8,
    pub retry_count: u8,
    pub rnr_retry_count: u8,
    pub srq: u8,
    pub qp_num: u32,
}

/// `struct ibv_ah_attr` (32 bytes), passed through from rdma_cm to `ibv_create_ah` as is;
/// [`ibv_ah_attr::global`] builds one from GIDs.
#[repr(C, align(8))]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ibv_ah_attr(pub [u8; 32]);

impl ibv_ah_attr {
    /// A global-route AH to `dgid` from local GID table entry `sgid_index` on `port`, to
    /// `dlid` (IB; 0 on RoCE), hop limit 64.
    pub fn global(dgid: [u8; 16], sgid_index: u8, dlid: u16, port: u8) -> ibv_ah_attr {
        let mut a = [0u8; 32];
        a[..16].copy_from_slice(&dgid); // grh.dgid
        a[20] = sgid_index; // grh.sgid_index
        a[21] = 64; // grh.hop_limit
        a[24..26].copy_from_slice(&dlid.to_ne_bytes());
        a[29] = 1; // is_global
        a[30] = port;
        ibv_ah_attr(a)
    }
}

/// An address handle (opaque here).
#[repr(C)]
pub struct ibv_ah {
    _opaque: [u8; 0],
}

/// `param.ud` of an rdma_cm event (the datagram variant of `param`, 56 bytes at offset 24).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rdma_ud_param {
    pub private_data: *const c_void,
    pub private_data_len: u8,
    pub ah_attr: ibv_ah_attr,
    pub qp_num: u32,
    pub qkey: u32,
}

const _: () = assert!(std::mem::size_of::<rdma_ud_param>() == 56);
const _: () = assert!(std::mem::offset_of!(rdma_ud_param, ah_attr) == 16);
const _: () = assert!(std::mem::offset_of!(rdma_ud_param, qp_num) == 48);
const _: () = assert!(std::mem::offset_of!(ibv_send_wr, wr) == 40);

#[repr(C)]
pub struct rdma_cm_event {
    pub id: *mut rdma_cm_id,
    pub listen_id: *mut rdma_cm_id,
    pub event: u32,
    pub status: c_int,
    /// `param.conn` (the UD variant is not used).
    pub conn: rdma_conn_param,
    _rest: [u8; 80 - 48],
}

const _: () = assert!(std::mem::offset_of!(rdma_cm_id, ib_sgid) == 288);
const _: () = assert!(std::mem::offset_of!(rdma_cm_id, path_rec) == 328);
const _: () = assert!(std::mem::offset_of!(rdma_cm_id, ps) == 344);

impl rdma_cm_event {
    /// `param.ud`: the event's parameters read as a datagram exchange's (meaningful on ids of
    /// [`RDMA_PS_UDP`]).
    pub fn ud(&self) -> rdma_ud_param {
        // SAFETY: `conn` starts the 56-byte `param` union (conn + _rest), which rdma_ud_param
        // spans exactly; every bit pattern is a valid rdma_ud_param.
        unsafe { std::ptr::read_unaligned(&self.conn as *const rdma_conn_param as *const rdma_ud_param) }
    }
}

const _: () = assert!(std::mem::offset_of!(rdma_cm_event, conn) == 24);
const _: () = assert!(std::mem::size_of::<rdma_cm_event>() == 80);

// ---- the dynamically loaded library ---------------------------------------------------------

macro_rules! lib {
    ($($name:ident : fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// Entry points of libibverbs and librdmacm, resolved with dlsym.
        pub struct Lib {
            $(pub $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }
        impl Lib {
            /// # Safety
            /// `ibv` / `cm` must be live dlopen handles.
            unsafe fn resolve(ibv: *mut c_void, cm: *mut c_void) -> Result<Lib, String> {
                Ok(Lib { $($name: {
                    let n = concat!(stringify!($name), "\0");
                    // SAFETY: both handles are live; the name is NUL-terminated.
                    let mut p = unsafe { libc::dlsym(ibv, n.as_ptr() as *const c_char) };
                    if p.is_null() {
                        // SAFETY: as above.
                        p = unsafe { libc::dlsym(cm, n.as_ptr() as *const c_char) };
                    }
                    if p.is_null() {
                        return Err(format!("symbol {} missing", stringify!($name)));
                    }
                    // SAFETY: the symbol has this C signature in rdma-core's headers.
                    unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> $ret>(p) }
                },)* })
            }
        }
    };
}

lib! {
    ibv_fork_init: fn() -> c_int;
    ibv_get_device_list: fn(*mut c_int) -> *mut *mut ibv_device;
    ibv_free_device_list: fn(*mut *mut ibv_device) -> ();
    ibv_open_device: fn(*mut ibv_device) -> *mut ibv_context;
    ibv_close_device: fn(*mut ibv_context) -> c_int;
    ibv_query_device: fn(*mut ibv_context, *mut ibv_device_attr) -> c_int;
    ibv_query_port: fn(*mut ibv_context, u8, *mut ibv_port_attr) -> c_int;
    ibv_alloc_pd: fn(*mut ibv_context) -> *mut ibv_pd;
    ibv_dealloc_pd: fn(*mut ibv_pd) -> c_int;
    ibv_reg_mr: fn(*mut ibv_pd, *mut c_void, usize, c_int) -> *mut ibv_mr;
    ibv_dereg_mr: fn(*mut ibv_mr) -> c_int;
    ibv_create_comp_channel: fn(*mut ibv_context) -> *mut ibv_comp_channel;
    ibv_destroy_comp_channel: fn(*mut ibv_comp_channel) -> c_int;
    ibv_create_cq: fn(*mut ibv_context, c_int, *mut c_void, *mut ibv_comp_channel, c_int) -> *mut ibv_cq;
    ibv_resize_cq: fn(*mut ibv_cq, c_int) -> c_int;
    ibv_destroy_cq: fn(*mut ibv_cq) -> c_int;
    ibv_get_cq_event: fn(*mut ibv_comp_channel, *mut *mut ibv_cq, *mut *mut c_void) -> c_int;
    ibv_ack_cq_events: fn(*mut ibv_cq, u32) -> ();
    ibv_create_srq: fn(*mut ibv_pd, *mut ibv_srq_init_attr) -> *mut ibv_srq;
    ibv_modify_srq: fn(*mut ibv_srq, *mut ibv_srq_attr, c_int) -> c_int;
    ibv_destroy_srq: fn(*mut ibv_srq) -> c_int;
    ibv_modify_qp: fn(*mut ibv_qp, *mut ibv_qp_attr, c_int) -> c_int;
    ibv_get_async_event: fn(*mut ibv_context, *mut ibv_async_event) -> c_int;
    ibv_ack_async_event: fn(*mut ibv_async_event) -> ();
    ibv_create_ah: fn(*mut ibv_pd, *mut ibv_ah_attr) -> *mut ibv_ah;
    ibv_destroy_ah: fn(*mut ibv_ah) -> c_int;
    ibv_query_gid: fn(*mut ibv_context, u8, c_int, *mut [u8; 16]) -> c_int;
    rdma_create_event_channel: fn() -> *mut rdma_event_channel;
    rdma_destroy_event_channel: fn(*mut rdma_event_channel) -> ();
    rdma_create_id: fn(*mut rdma_event_channel, *mut *mut rdma_cm_id, *mut c_void, c_int) -> c_int;
    rdma_destroy_id: fn(*mut rdma_cm_id) -> c_int;
    rdma_bind_addr: fn(*mut rdma_cm_id, *mut libc::sockaddr) -> c_int;
    rdma_resolve_addr: fn(*mut rdma_cm_id, *mut libc::sockaddr, *mut libc::sockaddr, c_int) -> c_int;
    rdma_resolve_route: fn(*mut rdma_cm_id, c_int) -> c_int;
    rdma_create_qp: fn(*mut rdma_cm_id, *mut ibv_pd, *mut ibv_qp_init_attr) -> c_int;
    rdma_destroy_qp: fn(*mut rdma_cm_id) -> ();
    rdma_connect: fn(*mut rdma_cm_id, *mut rdma_conn_param) -> c_int;
    rdma_listen: fn(*mut rdma_cm_id, c_int) -> c_int;
    rdma_accept: fn(*mut rdma_cm_id, *mut rdma_conn_param) -> c_int;
    rdma_reject: fn(*mut rdma_cm_id, *const c_void, u8) -> c_int;
    rdma_disconnect: fn(*mut rdma_cm_id) -> c_int;
    rdma_notify: fn(*mut rdma_cm_id, c_int) -> c_int;
    rdma_get_cm_event: fn(*mut rdma_event_channel, *mut *mut rdma_cm_event) -> c_int;
    rdma_ack_cm_event: fn(*mut rdma_cm_event) -> c_int;
    rdma_event_str: fn(u32) -> *const c_char;
}

// SAFETY: the table holds plain function pointers into libraries that are never unloaded.
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

static LIB: OnceLock<Option<Lib>> = OnceLock::new();

fn dlerror() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated thread-local string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated.
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn load() -> Result<Lib, String> {
    let open = |name: &CStr| {
        // SAFETY: dlopen with a NUL-terminated name; the handle is kept for the process life.
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if h.is_null() {
            Err(format!("{}: {}", name.to_string_lossy(), dlerror()))
        } else {
            Ok(h)
        }
    };
    let ibv = open(c"libibverbs.so.1")?;
    let cm = open(c"librdmacm.so.1")?;
    // SAFETY: both handles are live and never closed.
    let lib = unsafe { Lib::resolve(ibv, cm)? };
    fork_init(&lib, ibv);
    Ok(lib)
}

/// `enum ibv_fork_status`'s IBV_FORK_UNNEEDED: the kernel copies pinned pages on fork.
const IBV_FORK_UNNEEDED: c_int = 2;

/// Fork safety: `ibv_fork_init()` runs once, right after loading and before any other verb,
/// so registered memory is marked MADV_DONTFORK and a forked child cannot corrupt it; skipped
/// where the kernel copies pinned pages on fork (`ibv_is_fork_initialized()` says
/// IBV_FORK_UNNEEDED, Linux 5.13+): rdma-core's `ibv_fork_init` does not check that itself and
/// would cost two madvise calls per registration and deregistration. `RDMAV_FORK_SAFE=0`
/// skips it too. `ibv` is libibverbs' live dlopen handle.
fn fork_init(lib: &Lib, ibv: *mut c_void) {
    if std::env::var("RDMAV_FORK_SAFE").is_ok_and(|v| v == "0") {
        tracing::debug!("verbs: RDMAV_FORK_SAFE=0, ibv_fork_init skipped");
        return;
    }
    // SAFETY: live handle, NUL-terminated name; the symbol is absent before rdma-core v32.
    let status = unsafe { libc::dlsym(ibv, c"ibv_is_fork_initialized".as_ptr()) };
    if !status.is_null() {
        // SAFETY: `enum ibv_fork_status ibv_is_fork_initialized(void)` in rdma-core's verbs.h.
        let status = unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(status) };
        // SAFETY: no arguments; reads the kernel's capability only.
        if unsafe { status() } == IBV_FORK_UNNEEDED {
            tracing::debug!("verbs: the kernel copies pinned pages on fork; ibv_fork_init not needed");
            return;
        }
    }
    // SAFETY: no verbs resource exists yet; ibv_fork_init takes no arguments.
    let r = unsafe { (lib.ibv_fork_init)() };
    if r != 0 {
        tracing::warn!("verbs: ibv_fork_init failed ({}); fork() after registering memory is unsafe", errno_str(r));
    }
}

/// The loaded libraries, or None (logged once at debug level) without rdma-core.
pub fn lib() -> Option<&'static Lib> {
    LIB.get_or_init(|| match load() {
        Ok(l) => Some(l),
        Err(e) => {
            tracing::debug!("verbs: rdma-core not usable, provider has no devices: {e}");
            None
        }
    })
    .as_ref()
}

pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Sets errno to 0 before a verbs call whose failure is read from errno: some rdma-core paths
/// (providers' create calls among them) fail without setting it, and a value left by an
/// earlier call (EAGAIN of a non-blocking read, say) would otherwise be reported as the cause.
pub fn clear_errno() {
    // SAFETY: errno is this thread's own variable.
    unsafe { *libc::__errno_location() = 0 };
}

pub fn errno_str(e: i32) -> String {
    std::io::Error::from_raw_os_error(e.abs()).to_string()
}

/// The error of a verbs call that returned `r`: a positive errno, or -1 with errno set.
pub fn err_of(r: c_int) -> i32 {
    if r > 0 {
        r
    } else {
        errno()
    }
}

/// C string of a fixed char array.
pub fn cstr(a: &[c_char]) -> String {
    let bytes: Vec<u8> = a.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub fn event_str(lib: &Lib, ev: u32) -> String {
    // SAFETY: rdma_event_str returns a static string for any value.
    let p = unsafe { (lib.rdma_event_str)(ev) };
    if p.is_null() {
        return format!("event {ev}");
    }
    // SAFETY: static NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}
