//! `dat_extension_op`: the DAT 2.0 extension interface.
//!
//! The C shim `extension_op.c` reads the variadic arguments of each `DAT_IB_*` operation of
//! `dat_ib_extensions.h` into an [`ExtArgs`] and calls [`dat20_extension_call`]; here they are
//! decoded into an [`Operation`] and handed to [`dispatch`], the one place that runs them.
//! A third-party provider's handle goes to its own `handle_extendedop_func` instead
//! ([`dat20_extension_foreign`], called by the shim with the `va_list`).
//!
//! Implemented: RDMA write with immediate data, fetch-and-add and compare-and-swap, posted
//! through the core's endpoint (`Endpoint::post_request` with the extension `SendOp`s) where
//! the IA's device carries them out (`InterfaceAdapter::extension`; elsewhere
//! `DAT_NOT_IMPLEMENTED`). Their completions become `DAT_IB_DTO_EVENT`s in
//! `convert::event`. Errors name the arguments of the `dat_ib_post_*` macros (ep 1, then
//! in order: e.g. NULL local buffer `DAT_INVALID_PARAMETER|ARG3`, NULL remote triplet `|ARG5`).
//! `dat_ib_open_query` / `dat_ib_close_query` open and query an IA, and close it, through
//! this face's own `dat_ia_openv` / `dat_ia_query` / `dat_ia_close`.
//! UD endpoints: `dat_ib_post_send_ud` sends one datagram to the address handle of a
//! `DAT_IB_ADDR_HANDLE` (its `ah`, a handle of ours, and `qpn`); `dat_ib_ud_ah_free` and
//! `dat_ib_ud_cm_free` free an AH and check a connect exchange's handle ([`datcore::ud`]).
//! The counters operations are in [`crate::extension_counters`]. The collectives return
//! `DAT_NOT_IMPLEMENTED`. A bad handle gets its `DAT_INVALID_HANDLE`
//! code first; an unknown operation code is `DAT_INVALID_PARAMETER|DAT_INVALID_ARG2`.

use crate::abi::*;
use datcore::codes::DAT_INVALID_HANDLE_IA;
use datcore::handle::{self, Handle};
use datcore::ia::InterfaceAdapter;
use datcore::provider::{AtomicOp, SendOp};
use datcore::{DatError, DatResult};
use std::ffi::{c_char, c_int, c_void};

/// The arguments the C shim read (`struct ext_args` in extension_op.c, same layout).
#[repr(C)]
pub struct ExtArgs {
    pub op: i32,
    /// 1 when the operation's arguments were read (a known, non-collective operation).
    pub read: i32,
    pub value1: u64,
    pub value2: u64,
    pub count: i32,
    pub immed: u32,
    pub local: *const DAT_LMR_TRIPLET,
    pub remote: *const DAT_RMR_TRIPLET,
    pub ah: *const c_void,
    pub cookie: u64,
    pub flags: u32,
    pub counter: i32,
    pub reset: i32,
    pub counters_out: *mut u64,
    pub name: *const c_char,
    pub ia_out: *mut DAT_HANDLE,
    pub ia_mask: u64,
    pub ia_attr: *mut DAT_IA_ATTR,
    pub provider_mask: u64,
    pub provider_attr: *mut DAT_PROVIDER_ATTR,
}

// The shim checks the same size (extension_op.c).
const _: () = assert!(std::mem::size_of::<ExtArgs>() == 136);

/// `DAT_IB_ADDR_HANDLE` of dat_ib_extensions.h: the address handle, the remote queue pair
/// number, the remote IA address.
#[repr(C)]
pub struct IbAddrHandle {
    pub ah: *const c_void,
    pub qpn: u32,
    pub ia_addr: DAT_SOCK_ADDR6,
}

const _: () = assert!(std::mem::size_of::<IbAddrHandle>() == 40);

/// A DAT 2.0 IB extension operation with its arguments.
#[derive(Debug)]
pub enum Operation {
    FetchAndAdd {
        ep: DAT_EP_HANDLE,
        add: u64,
        local: *const DAT_LMR_TRIPLET,
        cookie: u64,
        remote: *const DAT_RMR_TRIPLET,
        flags: u32,
    },
    CmpAndSwap {
        ep: DAT_EP_HANDLE,
        compare: u64,
        swap: u64,
        local: *const DAT_LMR_TRIPLET,
        cookie: u64,
        remote: *const DAT_RMR_TRIPLET,
        flags: u32,
    },
    RdmaWriteImmed {
        ep: DAT_EP_HANDLE,
        segments: i32,
        local: *const DAT_LMR_TRIPLET,
        cookie: u64,
        remote: *const DAT_RMR_TRIPLET,
        immed: u32,
        flags: u32,
    },
    UdSend {
        ep: DAT_EP_HANDLE,
        segments: i32,
        local: *const DAT_LMR_TRIPLET,
        ah: *const IbAddrHandle,
        cookie: u64,
        flags: u32,
    },
    QueryCounters {
        handle: DAT_HANDLE,
        counter: i32,
        out: *mut u64,
        reset: bool,
    },
    PrintCounters {
        handle: DAT_HANDLE,
        counter: i32,
        reset: bool,
    },
    StartCounter {
        handle: DAT_HANDLE,
        counter: i32,
    },
    StopCounter {
        handle: DAT_HANDLE,
        counter: i32,
    },
    UdCmFree {
        ep: DAT_EP_HANDLE,
        cm: u64,
    },
    UdAhFree {
        ep: DAT_EP_HANDLE,
        ah: *const IbAddrHandle,
    },
    OpenQuery {
        name: *const c_char,
        ia_out: *mut DAT_HANDLE,
        ia_mask: u64,
        ia_attr: *mut DAT_IA_ATTR,
        provider_mask: u64,
        provider_attr: *mut DAT_PROVIDER_ATTR,
    },
    CloseQuery {
        ia: DAT_IA_HANDLE,
    },
    /// One of the `DAT_IB_COLLECTIVE_*_OP`s (collectives are not offered).
    Collective {
        op: u32,
    },
}

/// Decodes what the shim read; `DAT_INVALID_PARAMETER|ARG2` for an unknown operation code.
pub fn decode(handle: DAT_HANDLE, a: &ExtArgs) -> DatResult<Operation> {
    let op = a.op as u32;
    if (DAT_IB_COLLECTIVE_CREATE_MEMBER_OP..=DAT_IB_COLLECTIVE_BARRIER_OP).contains(&op) {
        return Ok(Operation::Collective { op });
    }
    if a.read == 0 {
        return Err(DatError::invalid_arg(2));
    }
    Ok(match op {
        DAT_IB_FETCH_AND_ADD_OP => Operation::FetchAndAdd {
            ep: handle,
            add: a.value1,
            local: a.local,
            cookie: a.cookie,
            remote: a.remote,
            flags: a.flags,
        },
        DAT_IB_CMP_AND_SWAP_OP => Operation::CmpAndSwap {
            ep: handle,
            compare: a.value1,
            swap: a.value2,
            local: a.local,
            cookie: a.cookie,
            remote: a.remote,
            flags: a.flags,
        },
        DAT_IB_RDMA_WRITE_IMMED_OP => Operation::RdmaWriteImmed {
            ep: handle,
            segments: a.count,
            local: a.local,
            cookie: a.cookie,
            remote: a.remote,
            immed: a.immed,
            flags: a.flags,
        },
        DAT_IB_UD_SEND_OP => Operation::UdSend {
            ep: handle,
            segments: a.count,
            local: a.local,
            ah: a.ah as *const IbAddrHandle,
            cookie: a.cookie,
            flags: a.flags,
        },
        DAT_IB_QUERY_COUNTERS_OP => {
            Operation::QueryCounters { handle, counter: a.counter, out: a.counters_out, reset: a.reset != 0 }
        }
        DAT_IB_PRINT_COUNTERS_OP => Operation::PrintCounters { handle, counter: a.counter, reset: a.reset != 0 },
        DAT_IB_START_COUNTERS_OP => Operation::StartCounter { handle, counter: a.counter },
        DAT_IB_STOP_COUNTERS_OP => Operation::StopCounter { handle, counter: a.counter },
        DAT_IB_UD_CM_FREE_OP => Operation::UdCmFree { ep: handle, cm: a.cookie },
        DAT_IB_UD_AH_FREE_OP => Operation::UdAhFree { ep: handle, ah: a.ah as *const IbAddrHandle },
        DAT_IB_OPEN_QUERY_OP => Operation::OpenQuery {
            name: a.name,
            ia_out: a.ia_out,
            ia_mask: a.ia_mask,
            ia_attr: a.ia_attr,
            provider_mask: a.provider_mask,
            provider_attr: a.provider_attr,
        },
        DAT_IB_CLOSE_QUERY_OP => Operation::CloseQuery { ia: handle },
        _ => return Err(DatError::invalid_arg(2)),
    })
}

fn interface_adapter(ia: DAT_IA_HANDLE) -> DatResult<()> {
    handle::get_ptr::<InterfaceAdapter>(ia, DAT_INVALID_HANDLE_IA).map(drop)
}

/// Posts an IB extension operation on `ep`: `segments` local triplets, the remote triplet
/// (`None`: an RDMA write with immediate data of no segments, whose remote OFED ignores).
///
/// # Safety
/// `local` points at `segments` readable triplets and `remote` at a readable triplet, or they
/// are NULL (checked).
unsafe fn post(
    ep: DAT_EP_HANDLE,
    segments: i32,
    local: *const DAT_LMR_TRIPLET,
    cookie: u64,
    remote: *const DAT_RMR_TRIPLET,
    op: impl FnOnce(u64, u32) -> SendOp,
    flags: u32,
) -> DatResult<()> {
    let ep = crate::ep::ep_of(ep)?;
    let (remote_addr, rkey) =
        // SAFETY: the caller's contract.
        if segments == 0 && remote.is_null() { (0, 0) } else { unsafe { crate::ep::remote(remote)? } };
    let op = op(remote_addr, rkey);
    ep.check_segment_count(datcore::endpoint::PostKind::of(&op), segments)?;
    // SAFETY: the caller's contract.
    let iov = unsafe { crate::ffi::slice(local, segments as i64, 3, 2)? };
    crate::convert::with_sges(iov, |sges| ep.post_request(op, sges, cookie, flags))
}

/// `dat_ib_post_send_ud`: one datagram of `segments` local triplets to the address handle
/// `*ah` (NULL: `DAT_INVALID_PARAMETER|ARG4`).
///
/// # Safety
/// `local` points at `segments` readable triplets and `ah` at a readable `DAT_IB_ADDR_HANDLE`,
/// or they are NULL (checked).
unsafe fn post_send_ud(
    ep: DAT_EP_HANDLE,
    segments: i32,
    local: *const DAT_LMR_TRIPLET,
    ah: *const IbAddrHandle,
    cookie: u64,
    flags: u32,
) -> DatResult<()> {
    let ep = crate::ep::ep_of(ep)?;
    // SAFETY: the caller's contract.
    let ah = unsafe { crate::ffi::input(ah, 4)? };
    let peer = datcore::ud::destination(&ep, Handle::from_ptr(ah.ah), ah.qpn)?;
    ep.check_segment_count(datcore::endpoint::PostKind::Send, segments)?;
    // SAFETY: the caller's contract.
    let iov = unsafe { crate::ffi::slice(local, segments as i64, 3, 2)? };
    crate::convert::with_sges(iov, |sges| ep.post_send_ud(sges, peer, cookie, flags))
}

/// `dat_ib_open_query`: opens the IA `name` (DAT 2.0, no async EVD of the consumer's) and
/// queries it; `dat_ib_close_query` closes it again. A failed query closes the IA.
///
/// # Safety
/// `name` is NULL or a C string; `ia_out` NULL or writable; the attribute pointers as for
/// `dat_ia_query`.
unsafe fn open_query(
    name: *const std::ffi::c_char,
    ia_out: *mut DAT_HANDLE,
    (ia_mask, ia_attr): (u64, *mut DAT_IA_ATTR),
    (provider_mask, provider_attr): (u64, *mut DAT_PROVIDER_ATTR),
) -> DatResult<()> {
    if name.is_null() {
        return Err(DatError::invalid_arg(3));
    }
    if ia_out.is_null() {
        return Err(DatError::invalid_arg(4));
    }
    let mut async_evd: DAT_EVD_HANDLE = std::ptr::null_mut();
    use crate::ia::{dat_ia_close, dat_ia_openv, dat_ia_query};
    // SAFETY: checked C string and out-pointer; our own EVD slot.
    crate::registry::ret(unsafe {
        dat_ia_openv(name as DAT_NAME_PTR, 8, &mut async_evd, ia_out, DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_FALSE)
    })?;
    // SAFETY: the IA just opened; the consumer's attribute pointers.
    let ia = unsafe { *ia_out };
    // SAFETY: as above.
    let r = crate::registry::ret(unsafe {
        dat_ia_query(ia, std::ptr::null_mut(), ia_mask, ia_attr, provider_mask, provider_attr)
    });
    if r.is_err() {
        // SAFETY: the IA we opened.
        unsafe { dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG) };
    }
    r
}

/// Runs one extension operation: the single dispatch point the IB extensions plug into (one
/// arm per operation).
pub fn dispatch(op: Operation) -> DatResult<()> {
    match op {
        Operation::RdmaWriteImmed { ep, segments, local, cookie, remote, immed, flags } => {
            let op = |remote_addr, rkey| SendOp::RdmaWriteImmed { remote_addr, rkey, immed };
            // SAFETY: pointers from the consumer's dat_extension_op call, checked inside.
            return unsafe { post(ep, segments, local, cookie, remote, op, flags) };
        }
        Operation::FetchAndAdd { ep, add, local, cookie, remote, flags } => {
            let op = |remote_addr, rkey| SendOp::Atomic { remote_addr, rkey, op: AtomicOp::FetchAdd { add } };
            // SAFETY: as above; an atomic's local buffer is one triplet.
            return unsafe { post(ep, 1, local, cookie, remote, op, flags) };
        }
        Operation::CmpAndSwap { ep, compare, swap, local, cookie, remote, flags } => {
            let op = |remote_addr, rkey| SendOp::Atomic { remote_addr, rkey, op: AtomicOp::CmpSwap { compare, swap } };
            // SAFETY: as above.
            return unsafe { post(ep, 1, local, cookie, remote, op, flags) };
        }
        Operation::UdSend { ep, segments, local, ah, cookie, flags } => {
            // SAFETY: pointers from the consumer's dat_extension_op call, checked inside.
            return unsafe { post_send_ud(ep, segments, local, ah, cookie, flags) };
        }
        Operation::UdCmFree { ep, cm } => return datcore::ud::free_cm(&*crate::ep::ep_of(ep)?, Handle(cm)),
        Operation::UdAhFree { ep, ah } => {
            let ep = crate::ep::ep_of(ep)?;
            // SAFETY: the consumer's DAT_IB_ADDR_HANDLE pointer, checked for NULL.
            let ah = unsafe { crate::ffi::input(ah, 3)? };
            return datcore::ud::free(&ep, Handle::from_ptr(ah.ah));
        }
        Operation::QueryCounters { handle, counter, out, reset } => {
            return crate::extension_counters::query(handle, counter, out, reset)
        }
        Operation::PrintCounters { handle, counter, reset } => {
            return crate::extension_counters::print(handle, counter, reset)
        }
        Operation::StartCounter { handle, counter } => {
            return crate::extension_counters::start_or_stop(handle, counter, true)
        }
        Operation::StopCounter { handle, counter } => {
            return crate::extension_counters::start_or_stop(handle, counter, false)
        }
        Operation::OpenQuery { name, ia_out, ia_mask, ia_attr, provider_mask, provider_attr } => {
            // SAFETY: pointers from the consumer's dat_extension_op call, checked inside.
            return unsafe { open_query(name, ia_out, (ia_mask, ia_attr), (provider_mask, provider_attr)) };
        }
        Operation::CloseQuery { ia } => {
            interface_adapter(ia)?;
            // SAFETY: a live IA handle.
            return crate::registry::ret(unsafe { crate::ia::dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG) });
        }
        Operation::Collective { .. } => {}
    }
    Err(DatError::NOT_IMPLEMENTED)
}

/// Called by the C shim with the arguments it read.
///
/// # Safety
/// `args` points to the shim's `struct ext_args`.
#[no_mangle]
pub unsafe extern "C" fn dat20_extension_call(handle: DAT_HANDLE, args: *const ExtArgs) -> DAT_RETURN {
    crate::ffi::boundary("dat_extension_op", || -> DatResult<()> {
        // SAFETY: the shim passes its own struct.
        let args = unsafe { crate::ffi::input(args, 2)? };
        dispatch(decode(handle, args)?)
    })
}

/// Whether `handle` belongs to a registered third-party provider; if so `*func` is its
/// `handle_extendedop_func` (NULL when it has none).
///
/// # Safety
/// `func` is writable (the shim passes its own variable).
#[no_mangle]
pub unsafe extern "C" fn dat20_extension_foreign(handle: DAT_HANDLE, func: *mut DAT_HANDLE_EXTENDEDOP_FUNC) -> c_int {
    std::panic::catch_unwind(|| {
        // SAFETY: foreign_provider reads the first word without faulting; the table is used
        // within this call.
        match unsafe { crate::registry::foreign_provider(handle) } {
            Some(p) => {
                // SAFETY: the shim's own variable.
                unsafe { func.write(p.handle_extendedop_func) };
                1
            }
            None => 0,
        }
    })
    .unwrap_or(0)
}

/// `DAT_NOT_IMPLEMENTED` in DAT 2.0 numbering, for a provider without `handle_extendedop_func`.
#[no_mangle]
pub extern "C" fn dat20_extension_not_implemented() -> DAT_RETURN {
    crate::registry::NOT_IMPLEMENTED_RETURN
}
