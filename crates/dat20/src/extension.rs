//! `dat_extension_op`: the DAT 2.0 extension interface.
//!
//! The C shim `extension_op.c` reads the variadic arguments of each `DAT_IB_*` operation of
//! `dat_ib_extensions.h` into an [`ExtArgs`] and calls [`dat20_extension_call`]; here they are
//! decoded into an [`Operation`] and handed to [`dispatch`], the one place that runs them.
//! A third-party provider's handle goes to its own `handle_extendedop_func` instead
//! ([`dat20_extension_foreign`], called by the shim with the `va_list`).
//!
//! No IB extension is implemented yet: `DAT_IA_ATTR.extension_supported` says
//! `DAT_EXTENSION_NONE` (from `InterfaceAdapter::extension`), and every known operation on a
//! valid handle returns `DAT_NOT_IMPLEMENTED`. A bad handle gets its `DAT_INVALID_HANDLE`
//! code first; an unknown operation code is `DAT_INVALID_PARAMETER|DAT_INVALID_ARG2`.

use crate::abi::*;
use crate::ffi::h;
use datcore::codes::{DAT_INVALID_HANDLE1, DAT_INVALID_HANDLE_EP, DAT_INVALID_HANDLE_IA};
use datcore::endpoint::Endpoint;
use datcore::handle::{self, HandleType};
use datcore::ia::InterfaceAdapter;
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
        ah: *const c_void,
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
        ah: *const c_void,
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
            ah: a.ah,
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
        DAT_IB_UD_AH_FREE_OP => Operation::UdAhFree { ep: handle, ah: a.ah },
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

fn endpoint(ep: DAT_EP_HANDLE) -> DatResult<()> {
    handle::get_ptr::<Endpoint>(ep, DAT_INVALID_HANDLE_EP).map(drop)
}

fn interface_adapter(ia: DAT_IA_HANDLE) -> DatResult<()> {
    handle::get_ptr::<InterfaceAdapter>(ia, DAT_INVALID_HANDLE_IA).map(drop)
}

/// Counters belong to an IA, an EP or an EVD.
fn counter_owner(handle: DAT_HANDLE) -> DatResult<()> {
    match handle::type_of(h(handle)) {
        Some(HandleType::Ia | HandleType::Ep | HandleType::Evd) => Ok(()),
        _ => Err(DatError::invalid_handle(DAT_INVALID_HANDLE1)),
    }
}

/// Runs one extension operation: the single dispatch point the IB extensions plug into (one
/// arm per operation). None is implemented yet: each checks its handle, then answers
/// `DAT_NOT_IMPLEMENTED`.
pub fn dispatch(op: Operation) -> DatResult<()> {
    match op {
        Operation::FetchAndAdd { ep, .. }
        | Operation::CmpAndSwap { ep, .. }
        | Operation::RdmaWriteImmed { ep, .. }
        | Operation::UdSend { ep, .. }
        | Operation::UdCmFree { ep, .. }
        | Operation::UdAhFree { ep, .. } => endpoint(ep)?,
        Operation::QueryCounters { handle, .. }
        | Operation::PrintCounters { handle, .. }
        | Operation::StartCounter { handle, .. }
        | Operation::StopCounter { handle, .. } => counter_owner(handle)?,
        Operation::OpenQuery { name, .. } => {
            if name.is_null() {
                return Err(DatError::invalid_arg(3));
            }
        }
        Operation::CloseQuery { ia } => interface_adapter(ia)?,
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
