//! A hand-written minimal binding of libfabric (`libfabric.so.1`), loaded with `dlopen`.
//!
//! libfabric exports few functions (`fi_getinfo`, `fi_freeinfo`, `fi_dupinfo`, `fi_fabric`,
//! `fi_strerror`, `fi_version`); every other `fi_*` call is a `static inline` function of its
//! headers that calls through the operation tables of the objects (`fid_ep.msg->send`,
//! `fid_cq.ops->read`, ...). Those tables and the structures around them are declared here by
//! hand, with the layout of the API version we ask for in `fi_getinfo` ([`API_VERSION`], 1.17,
//! Debian bookworm's libfabric1): a library of a later version keeps these layouts for a
//! caller that asks for 1.17 (it only appends to the tables, and an appended member is never
//! read here). The [`FiOps`] methods do what the header's inline functions do.
//! `layout_check.c` beside this file prints the real headers' sizes and offsets; the unit test
//! `layouts_match_the_headers` compiles it where libfabric's headers are installed
//! (`libfabric-dev`) and compares them with these declarations.

#![allow(non_camel_case_types, dead_code)]

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// `FI_VERSION(1, 17)`: the API we are written against.
pub const API_VERSION: u32 = (1 << 16) | 17;

// ---- constants -------------------------------------------------------------------------------

pub const FI_MSG: u64 = 1 << 1;
pub const FI_RMA: u64 = 1 << 2;
pub const FI_ATOMIC: u64 = 1 << 4;
pub const FI_READ: u64 = 1 << 8;
pub const FI_WRITE: u64 = 1 << 9;
pub const FI_RECV: u64 = 1 << 10;
pub const FI_SEND: u64 = 1 << 11;
pub const FI_TRANSMIT: u64 = FI_SEND;
pub const FI_REMOTE_READ: u64 = 1 << 12;
pub const FI_REMOTE_WRITE: u64 = 1 << 13;
pub const FI_REMOTE_CQ_DATA: u64 = 1 << 17;
pub const FI_FENCE: u64 = 1 << 21;
pub const FI_COMPLETION: u64 = 1 << 24;
pub const FI_DELIVERY_COMPLETE: u64 = 1 << 28;
pub const FI_LOCAL_COMM: u64 = 1 << 51;
pub const FI_REMOTE_COMM: u64 = 1 << 52;

pub const FI_MR_LOCAL: c_int = 1 << 2;
pub const FI_MR_VIRT_ADDR: c_int = 1 << 4;
pub const FI_MR_ALLOCATED: c_int = 1 << 5;
pub const FI_MR_PROV_KEY: c_int = 1 << 6;
pub const FI_MR_ENDPOINT: c_int = 1 << 9;

/// `enum fi_ep_type`
pub const FI_EP_MSG: c_int = 1;
pub const FI_EP_RDM: c_int = 3;

/// `enum fi_addr_format`
pub const FI_SOCKADDR_IN: u32 = 2;
pub const FI_SOCKADDR_IN6: u32 = 3;
pub const FI_ADDR_STR: u32 = 9;

/// `fi_addr_t` of no particular peer (a receive from anyone).
pub const FI_ADDR_UNSPEC: u64 = u64::MAX;

// enum fi_av_type
pub const FI_AV_UNSPEC: c_int = 0;

/// `msg_order`: sends are delivered in the order they were posted.
pub const FI_ORDER_SAS: u64 = 1 << 8;

/// `enum fi_threading`
pub const FI_THREAD_SAFE: c_int = 1;

/// `enum fi_wait_obj`
pub const FI_WAIT_NONE: c_int = 0;
pub const FI_WAIT_FD: c_int = 3;

/// `enum fi_cq_format`
pub const FI_CQ_FORMAT_DATA: c_int = 3;

/// `fi_control` commands.
pub const FI_GETWAIT: c_int = 5;
pub const FI_ENABLE: c_int = 6;

/// EQ event numbers.
pub const FI_CONNREQ: u32 = 1;
pub const FI_CONNECTED: u32 = 2;
pub const FI_SHUTDOWN: u32 = 3;

/// Errors (positive; libfabric returns them negated).
pub const FI_EAGAIN: i32 = libc::EAGAIN;
pub const FI_EAVAIL: i32 = 259;
pub const FI_ETRUNC: i32 = 265;

// ---- structures ------------------------------------------------------------------------------

pub type fid_t = *mut fid;

#[repr(C)]
pub struct fi_ops {
    pub size: usize,
    pub close: unsafe extern "C" fn(*mut fid) -> c_int,
    pub bind: unsafe extern "C" fn(*mut fid, *mut fid, u64) -> c_int,
    pub control: unsafe extern "C" fn(*mut fid, c_int, *mut c_void) -> c_int,
    pub ops_open: usize,
    pub tostr: usize,
    pub ops_set: usize,
}

#[repr(C)]
pub struct fid {
    pub fclass: usize,
    pub context: *mut c_void,
    pub ops: *mut fi_ops,
}

#[repr(C)]
pub struct fi_tx_attr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub inject_size: usize,
    pub size: usize,
    pub iov_limit: usize,
    pub rma_iov_limit: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct fi_rx_attr {
    pub caps: u64,
    pub mode: u64,
    pub op_flags: u64,
    pub msg_order: u64,
    pub comp_order: u64,
    pub total_buffered_recv: usize,
    pub size: usize,
    pub iov_limit: usize,
}

#[repr(C)]
pub struct fi_ep_attr {
    pub type_: c_int,
    pub protocol: u32,
    pub protocol_version: u32,
    pub max_msg_size: usize,
    pub msg_prefix_size: usize,
    pub max_order_raw_size: usize,
    pub max_order_war_size: usize,
    pub max_order_waw_size: usize,
    pub mem_tag_format: u64,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub auth_key_size: usize,
    pub auth_key: *mut u8,
}

#[repr(C)]
pub struct fi_domain_attr {
    pub domain: *mut fid_domain,
    pub name: *mut c_char,
    pub threading: c_int,
    pub control_progress: c_int,
    pub data_progress: c_int,
    pub resource_mgmt: c_int,
    pub av_type: c_int,
    pub mr_mode: c_int,
    pub mr_key_size: usize,
    pub cq_data_size: usize,
    pub cq_cnt: usize,
    pub ep_cnt: usize,
    pub tx_ctx_cnt: usize,
    pub rx_ctx_cnt: usize,
    pub max_ep_tx_ctx: usize,
    pub max_ep_rx_ctx: usize,
    pub max_ep_stx_ctx: usize,
    pub max_ep_srx_ctx: usize,
    pub cntr_cnt: usize,
    pub mr_iov_limit: usize,
    pub caps: u64,
    pub mode: u64,
    pub auth_key: *mut u8,
    pub auth_key_size: usize,
    pub max_err_data: usize,
    pub mr_cnt: usize,
    pub tclass: u32,
}

#[repr(C)]
pub struct fi_fabric_attr {
    pub fabric: *mut fid_fabric,
    pub name: *mut c_char,
    pub prov_name: *mut c_char,
    pub prov_version: u32,
    pub api_version: u32,
}

#[repr(C)]
pub struct fi_info {
    pub next: *mut fi_info,
    pub caps: u64,
    pub mode: u64,
    pub addr_format: u32,
    pub src_addrlen: usize,
    pub dest_addrlen: usize,
    pub src_addr: *mut c_void,
    pub dest_addr: *mut c_void,
    pub handle: fid_t,
    pub tx_attr: *mut fi_tx_attr,
    pub rx_attr: *mut fi_rx_attr,
    pub ep_attr: *mut fi_ep_attr,
    pub domain_attr: *mut fi_domain_attr,
    pub fabric_attr: *mut fi_fabric_attr,
    pub nic: *mut c_void,
}

#[repr(C)]
pub struct fi_ops_fabric {
    pub size: usize,
    pub domain: unsafe extern "C" fn(*mut fid_fabric, *mut fi_info, *mut *mut fid_domain, *mut c_void) -> c_int,
    pub passive_ep: unsafe extern "C" fn(*mut fid_fabric, *mut fi_info, *mut *mut fid_pep, *mut c_void) -> c_int,
    pub eq_open: unsafe extern "C" fn(*mut fid_fabric, *mut fi_eq_attr, *mut *mut fid_eq, *mut c_void) -> c_int,
    pub wait_open: usize,
    pub trywait: unsafe extern "C" fn(*mut fid_fabric, *mut *mut fid, c_int) -> c_int,
}

#[repr(C)]
pub struct fid_fabric {
    pub fid: fid,
    pub ops: *mut fi_ops_fabric,
    pub api_version: u32,
}

#[repr(C)]
pub struct fi_ops_domain {
    pub size: usize,
    pub av_open: unsafe extern "C" fn(*mut fid_domain, *mut fi_av_attr, *mut *mut fid_av, *mut c_void) -> c_int,
    pub cq_open: unsafe extern "C" fn(*mut fid_domain, *mut fi_cq_attr, *mut *mut fid_cq, *mut c_void) -> c_int,
    pub endpoint: unsafe extern "C" fn(*mut fid_domain, *mut fi_info, *mut *mut fid_ep, *mut c_void) -> c_int,
    pub scalable_ep: usize,
    pub cntr_open: unsafe extern "C" fn(*mut fid_domain, *mut fi_cntr_attr, *mut *mut fid_cntr, *mut c_void) -> c_int,
}

#[repr(C)]
pub struct fi_cntr_attr {
    pub events: c_int,
    pub wait_obj: c_int,
    pub wait_set: *mut c_void,
    pub flags: u64,
}

#[repr(C)]
pub struct fi_ops_cntr {
    pub size: usize,
    pub read: unsafe extern "C" fn(*mut fid_cntr) -> u64,
    pub readerr: unsafe extern "C" fn(*mut fid_cntr) -> u64,
}

#[repr(C)]
pub struct fid_cntr {
    pub fid: fid,
    pub ops: *mut fi_ops_cntr,
}

#[repr(C)]
pub struct fi_av_attr {
    pub type_: c_int,
    pub rx_ctx_bits: c_int,
    pub count: usize,
    pub ep_per_node: usize,
    pub name: *const c_char,
    pub map_addr: *mut c_void,
    pub flags: u64,
}

#[repr(C)]
pub struct fi_ops_av {
    pub size: usize,
    pub insert: unsafe extern "C" fn(*mut fid_av, *const c_void, usize, *mut u64, u64, *mut c_void) -> c_int,
    pub insertsvc: usize,
    pub insertsym: usize,
    pub remove: unsafe extern "C" fn(*mut fid_av, *mut u64, usize, u64) -> c_int,
}

#[repr(C)]
pub struct fid_av {
    pub fid: fid,
    pub ops: *mut fi_ops_av,
}

#[repr(C)]
pub struct fi_ops_mr {
    pub size: usize,
    pub reg: unsafe extern "C" fn(
        *mut fid,
        *const c_void,
        usize,
        u64,
        u64,
        u64,
        u64,
        *mut *mut fid_mr,
        *mut c_void,
    ) -> c_int,
}

#[repr(C)]
pub struct fid_domain {
    pub fid: fid,
    pub ops: *mut fi_ops_domain,
    pub mr: *mut fi_ops_mr,
}

#[repr(C)]
pub struct fid_mr {
    pub fid: fid,
    pub mem_desc: *mut c_void,
    pub key: u64,
}

#[repr(C)]
pub struct fi_eq_attr {
    pub size: usize,
    pub flags: u64,
    pub wait_obj: c_int,
    pub signaling_vector: c_int,
    pub wait_set: *mut c_void,
}

#[repr(C)]
pub struct fi_eq_err_entry {
    pub fid: fid_t,
    pub context: *mut c_void,
    pub data: u64,
    pub err: c_int,
    pub prov_errno: c_int,
    pub err_data: *mut c_void,
    pub err_data_size: usize,
}

/// `struct fi_eq_cm_entry` without its flexible `data` member (which follows it).
#[repr(C)]
pub struct fi_eq_cm_entry {
    pub fid: fid_t,
    pub info: *mut fi_info,
}

#[repr(C)]
pub struct fi_ops_eq {
    pub size: usize,
    pub read: unsafe extern "C" fn(*mut fid_eq, *mut u32, *mut c_void, usize, u64) -> isize,
    pub readerr: unsafe extern "C" fn(*mut fid_eq, *mut fi_eq_err_entry, u64) -> isize,
    pub write: usize,
    pub sread: usize,
    pub strerror: unsafe extern "C" fn(*mut fid_eq, c_int, *const c_void, *mut c_char, usize) -> *const c_char,
}

#[repr(C)]
pub struct fid_eq {
    pub fid: fid,
    pub ops: *mut fi_ops_eq,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct fi_cq_data_entry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
    pub buf: *mut c_void,
    pub data: u64,
}

#[repr(C)]
pub struct fi_cq_err_entry {
    pub op_context: *mut c_void,
    pub flags: u64,
    pub len: usize,
    pub buf: *mut c_void,
    pub data: u64,
    pub tag: u64,
    pub olen: usize,
    pub err: c_int,
    pub prov_errno: c_int,
    pub err_data: *mut c_void,
    pub err_data_size: usize,
}

#[repr(C)]
pub struct fi_cq_attr {
    pub size: usize,
    pub flags: u64,
    pub format: c_int,
    pub wait_obj: c_int,
    pub signaling_vector: c_int,
    pub wait_cond: c_int,
    pub wait_set: *mut c_void,
}

#[repr(C)]
pub struct fi_ops_cq {
    pub size: usize,
    pub read: unsafe extern "C" fn(*mut fid_cq, *mut c_void, usize) -> isize,
    pub readfrom: usize,
    pub readerr: unsafe extern "C" fn(*mut fid_cq, *mut fi_cq_err_entry, u64) -> isize,
    pub sread: usize,
    pub sreadfrom: usize,
    pub signal: usize,
    pub strerror: unsafe extern "C" fn(*mut fid_cq, c_int, *const c_void, *mut c_char, usize) -> *const c_char,
}

#[repr(C)]
pub struct fid_cq {
    pub fid: fid,
    pub ops: *mut fi_ops_cq,
}

#[repr(C)]
pub struct fi_ops_cm {
    pub size: usize,
    pub setname: usize,
    pub getname: unsafe extern "C" fn(fid_t, *mut c_void, *mut usize) -> c_int,
    pub getpeer: unsafe extern "C" fn(*mut fid_ep, *mut c_void, *mut usize) -> c_int,
    pub connect: unsafe extern "C" fn(*mut fid_ep, *const c_void, *const c_void, usize) -> c_int,
    pub listen: unsafe extern "C" fn(*mut fid_pep) -> c_int,
    pub accept: unsafe extern "C" fn(*mut fid_ep, *const c_void, usize) -> c_int,
    pub reject: unsafe extern "C" fn(*mut fid_pep, fid_t, *const c_void, usize) -> c_int,
    pub shutdown: unsafe extern "C" fn(*mut fid_ep, u64) -> c_int,
}

#[repr(C)]
pub struct iovec {
    pub iov_base: *mut c_void,
    pub iov_len: usize,
}

#[repr(C)]
pub struct fi_msg {
    pub msg_iov: *const iovec,
    pub desc: *mut *mut c_void,
    pub iov_count: usize,
    pub addr: u64,
    pub context: *mut c_void,
    pub data: u64,
}

#[repr(C)]
pub struct fi_ops_msg {
    pub size: usize,
    pub recv: unsafe extern "C" fn(*mut fid_ep, *mut c_void, usize, *mut c_void, u64, *mut c_void) -> isize,
    pub recvv: unsafe extern "C" fn(*mut fid_ep, *const iovec, *mut *mut c_void, usize, u64, *mut c_void) -> isize,
    pub recvmsg: unsafe extern "C" fn(*mut fid_ep, *const fi_msg, u64) -> isize,
    pub send: unsafe extern "C" fn(*mut fid_ep, *const c_void, usize, *mut c_void, u64, *mut c_void) -> isize,
    pub sendv: unsafe extern "C" fn(*mut fid_ep, *const iovec, *mut *mut c_void, usize, u64, *mut c_void) -> isize,
    pub sendmsg: unsafe extern "C" fn(*mut fid_ep, *const fi_msg, u64) -> isize,
}

#[repr(C)]
pub struct fi_rma_iov {
    pub addr: u64,
    pub len: usize,
    pub key: u64,
}

#[repr(C)]
pub struct fi_msg_rma {
    pub msg_iov: *const iovec,
    pub desc: *mut *mut c_void,
    pub iov_count: usize,
    pub addr: u64,
    pub rma_iov: *const fi_rma_iov,
    pub rma_iov_count: usize,
    pub context: *mut c_void,
    pub data: u64,
}

#[repr(C)]
pub struct fi_ops_rma {
    pub size: usize,
    pub read: usize,
    pub readv:
        unsafe extern "C" fn(*mut fid_ep, *const iovec, *mut *mut c_void, usize, u64, u64, u64, *mut c_void) -> isize,
    pub readmsg: unsafe extern "C" fn(*mut fid_ep, *const fi_msg_rma, u64) -> isize,
    pub write: usize,
    pub writev:
        unsafe extern "C" fn(*mut fid_ep, *const iovec, *mut *mut c_void, usize, u64, u64, u64, *mut c_void) -> isize,
    pub writemsg: unsafe extern "C" fn(*mut fid_ep, *const fi_msg_rma, u64) -> isize,
}

/// The first entries of `struct fi_ops_ep`: `fi_cancel`.
#[repr(C)]
pub struct fi_ops_ep {
    pub size: usize,
    pub cancel: unsafe extern "C" fn(*mut fid, *mut c_void) -> isize,
}

#[repr(C)]
pub struct fid_ep {
    pub fid: fid,
    pub ops: *mut fi_ops_ep,
    pub cm: *mut fi_ops_cm,
    pub msg: *mut fi_ops_msg,
    pub rma: *mut fi_ops_rma,
    pub tagged: *mut c_void,
    pub atomic: *mut c_void,
    pub collective: *mut c_void,
}

#[repr(C)]
pub struct fid_pep {
    pub fid: fid,
    pub ops: *mut c_void,
    pub cm: *mut fi_ops_cm,
}

// ---- the header's inline calls ---------------------------------------------------------------

/// The operations every fid has (`fi_close`, `fi_bind`, `fi_control`), as the header's inline
/// functions call them.
pub trait FiOps {
    fn fid(&self) -> *mut fid;

    /// `fi_close`.
    ///
    /// # Safety
    /// A live object, closed once.
    unsafe fn close(&self) -> c_int {
        let f = self.fid();
        // SAFETY: the caller's object is live; `ops` is filled by the provider.
        unsafe { ((*(*f).ops).close)(f) }
    }

    /// `fi_ep_bind` / `fi_pep_bind` / `fi_domain_bind`.
    ///
    /// # Safety
    /// Both objects live.
    unsafe fn bind(&self, to: *mut fid, flags: u64) -> c_int {
        let f = self.fid();
        // SAFETY: as above.
        unsafe { ((*(*f).ops).bind)(f, to, flags) }
    }

    /// `fi_control`.
    ///
    /// # Safety
    /// A live object; `arg` what `command` expects.
    unsafe fn control(&self, command: c_int, arg: *mut c_void) -> c_int {
        let f = self.fid();
        // SAFETY: as above.
        unsafe { ((*(*f).ops).control)(f, command, arg) }
    }
}

macro_rules! fid_of {
    ($($t:ty),*) => {$(
        impl FiOps for *mut $t {
            fn fid(&self) -> *mut fid {
                // `fid` is every object's first member.
                self.cast::<fid>()
            }
        }
    )*};
}
fid_of!(fid_fabric, fid_domain, fid_ep, fid_pep, fid_eq, fid_cq, fid_mr, fid_av, fid_cntr);

// ---- the library -----------------------------------------------------------------------------

macro_rules! lib {
    ($($name:ident : fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// libfabric's exported entry points, resolved with dlsym.
        pub struct Lib {
            $(pub $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }
        impl Lib {
            /// # Safety
            /// `h` must be a live dlopen handle.
            unsafe fn resolve(h: *mut c_void) -> Result<Lib, String> {
                Ok(Lib { $($name: {
                    let n = concat!(stringify!($name), "\0");
                    // SAFETY: a live handle; the name is NUL-terminated.
                    let p = unsafe { libc::dlsym(h, n.as_ptr() as *const c_char) };
                    if p.is_null() {
                        return Err(format!("symbol {} missing", stringify!($name)));
                    }
                    // SAFETY: the symbol has this C signature in libfabric's headers.
                    unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> $ret>(p) }
                },)* })
            }
        }
    };
}

lib! {
    fi_version: fn() -> u32;
    fi_getinfo: fn(u32, *const c_char, *const c_char, u64, *const fi_info, *mut *mut fi_info) -> c_int;
    fi_freeinfo: fn(*mut fi_info) -> ();
    fi_dupinfo: fn(*const fi_info) -> *mut fi_info;
    fi_fabric: fn(*mut fi_fabric_attr, *mut *mut fid_fabric, *mut c_void) -> c_int;
    fi_strerror: fn(c_int) -> *const c_char;
}

// SAFETY: plain function pointers into a library that is never unloaded.
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();

fn load() -> Result<Lib, String> {
    // SAFETY: dlopen with a NUL-terminated name; the handle is kept for the process life.
    let h = unsafe { libc::dlopen(c"libfabric.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if h.is_null() {
        // SAFETY: dlerror returns NULL or a NUL-terminated thread-local string.
        let e = unsafe { libc::dlerror() };
        let why = if e.is_null() {
            "unknown error".into()
        } else {
            // SAFETY: non-null, NUL-terminated.
            unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
        };
        return Err(format!("libfabric.so.1: {why}"));
    }
    // SAFETY: a live handle, never closed.
    let lib = unsafe { Lib::resolve(h)? };
    // SAFETY: no arguments.
    let v = unsafe { (lib.fi_version)() };
    if v < API_VERSION {
        return Err(format!("libfabric {}.{} is older than 1.17", v >> 16, v & 0xffff));
    }
    Ok(lib)
}

/// The loaded library, or why it is not usable (logged once at debug level).
pub fn lib() -> Result<&'static Lib, &'static str> {
    LIB.get_or_init(|| {
        let r = load();
        if let Err(e) = &r {
            tracing::debug!("ofi: libfabric not usable, provider has no IA names: {e}");
        }
        r
    })
    .as_ref()
    .map_err(|e| e.as_str())
}

/// `fi_strerror` of a (positive or negated) libfabric error.
pub fn strerror(lib: &Lib, e: isize) -> String {
    // SAFETY: fi_strerror returns a static string for any value.
    let p = unsafe { (lib.fi_strerror)(e.unsigned_abs() as c_int) };
    if p.is_null() {
        return format!("error {e}");
    }
    // SAFETY: static NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// A C string field, or "" when NULL.
///
/// # Safety
/// `p` is NULL or a live NUL-terminated string.
pub unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: per the contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// Our declarations' sizes and offsets, in the order `layout_check.c` prints them.
    fn ours() -> Vec<(&'static str, usize)> {
        vec![
            ("fi_info", size_of::<fi_info>()),
            ("fi_info.domain_attr", offset_of!(fi_info, domain_attr)),
            ("fi_info.nic", offset_of!(fi_info, nic)),
            ("fi_tx_attr", size_of::<fi_tx_attr>()),
            ("fi_rx_attr", size_of::<fi_rx_attr>()),
            ("fi_ep_attr", size_of::<fi_ep_attr>()),
            ("fi_domain_attr", size_of::<fi_domain_attr>()),
            ("fi_domain_attr.mr_mode", offset_of!(fi_domain_attr, mr_mode)),
            ("fi_domain_attr.mr_cnt", offset_of!(fi_domain_attr, mr_cnt)),
            ("fi_fabric_attr", size_of::<fi_fabric_attr>()),
            ("fid", size_of::<fid>()),
            ("fi_ops.control", offset_of!(fi_ops, control)),
            ("fi_ops_fabric.trywait", offset_of!(fi_ops_fabric, trywait)),
            ("fid_fabric.ops", offset_of!(fid_fabric, ops)),
            ("fi_ops_domain.endpoint", offset_of!(fi_ops_domain, endpoint)),
            ("fi_ops_domain.cntr_open", offset_of!(fi_ops_domain, cntr_open)),
            ("fi_cntr_attr", size_of::<fi_cntr_attr>()),
            ("fid_cntr.ops", offset_of!(fid_cntr, ops)),
            ("fi_av_attr", size_of::<fi_av_attr>()),
            ("fi_ops_av.remove", offset_of!(fi_ops_av, remove)),
            ("fid_av.ops", offset_of!(fid_av, ops)),
            ("FI_ADDR_STR", FI_ADDR_STR as usize),
            ("fid_domain.mr", offset_of!(fid_domain, mr)),
            ("fid_mr.key", offset_of!(fid_mr, key)),
            ("fi_eq_attr", size_of::<fi_eq_attr>()),
            ("fi_eq_err_entry", size_of::<fi_eq_err_entry>()),
            ("fi_eq_cm_entry", size_of::<fi_eq_cm_entry>()),
            ("fi_ops_eq.strerror", offset_of!(fi_ops_eq, strerror)),
            ("fi_cq_data_entry", size_of::<fi_cq_data_entry>()),
            ("fi_cq_err_entry", size_of::<fi_cq_err_entry>()),
            ("fi_cq_err_entry.err", offset_of!(fi_cq_err_entry, err)),
            ("fi_cq_attr", size_of::<fi_cq_attr>()),
            ("fi_ops_cq.readerr", offset_of!(fi_ops_cq, readerr)),
            ("fi_ops_cq.strerror", offset_of!(fi_ops_cq, strerror)),
            ("fi_ops_cm.shutdown", offset_of!(fi_ops_cm, shutdown)),
            ("fi_msg", size_of::<fi_msg>()),
            ("fi_ops_msg.sendmsg", offset_of!(fi_ops_msg, sendmsg)),
            ("fi_rma_iov", size_of::<fi_rma_iov>()),
            ("fi_msg_rma", size_of::<fi_msg_rma>()),
            ("fi_ops_rma.writemsg", offset_of!(fi_ops_rma, writemsg)),
            ("fi_ops_ep.cancel", offset_of!(fi_ops_ep, cancel)),
            ("fid_ep.ops", offset_of!(fid_ep, ops)),
            ("fid_ep.msg", offset_of!(fid_ep, msg)),
            ("fid_ep.rma", offset_of!(fid_ep, rma)),
            ("fid_pep.cm", offset_of!(fid_pep, cm)),
        ]
    }

    /// Compiles `layout_check.c` against the installed headers and compares every line; skipped
    /// (with a message) where libfabric's headers or a C compiler are missing.
    #[test]
    fn layouts_match_the_headers() {
        if !std::path::Path::new("/usr/include/rdma/fabric.h").exists() {
            eprintln!("skipped: libfabric's headers (libfabric-dev) are not installed");
            return;
        }
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src/provider/ofi/layout_check.c");
        let dir = std::env::temp_dir().join(format!("ofi-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join("layout_check");
        let cc = std::process::Command::new("cc").arg("-o").arg(&exe).arg(src).status();
        match cc {
            Ok(s) if s.success() => {}
            Ok(s) => panic!("layout_check.c does not compile ({s})"),
            Err(e) => {
                eprintln!("skipped: no C compiler ({e})");
                return;
            }
        }
        let out = std::process::Command::new(&exe).output().expect("run layout_check");
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8(out.stdout).unwrap();
        let theirs: Vec<(String, usize)> = text
            .lines()
            .map(|l| {
                let (k, v) = l.split_once(' ').expect("name value");
                (k.to_string(), v.trim().parse().expect("number"))
            })
            .collect();
        let ours: Vec<(String, usize)> = ours().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        assert_eq!(ours, theirs, "the binding's layouts differ from libfabric's headers");
    }
}
