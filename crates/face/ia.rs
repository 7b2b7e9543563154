//! IA open/close/query, handle helpers, consumer contexts and `dat_strerror`.

use crate::abi::*;
use crate::convert::seg_len;
use crate::ffi::{h, out};
use datcore::codes::{DAT_INVALID_HANDLE1, DAT_INVALID_HANDLE_IA, DAT_INVALID_PARAMETER, DAT_SUCCESS};
use datcore::handle;
use datcore::ia::{self as core_ia, InterfaceAdapter};
use datcore::{DatError, DatResult};
use std::ffi::CStr;
use std::sync::Arc;

/// The IA behind a handle, or `DAT_INVALID_HANDLE_IA`.
pub fn ia_of(p: DAT_IA_HANDLE) -> DatResult<Arc<InterfaceAdapter>> {
    handle::get_ptr::<InterfaceAdapter>(p, DAT_INVALID_HANDLE_IA).map(|ia| ia.arc())
}

/// Opens an IA by name. Errors: `DAT_INVALID_PARAMETER|ARG1` (name NULL or too long),
/// `DAT_INVALID_HANDLE|IA` (ia_handle NULL), `DAT_INVALID_PARAMETER|ARG3`,
/// `DAT_PROVIDER_NOT_FOUND|DAT_NAME_NOT_REGISTERED` (no IA of that name, API version and
/// thread safety), and whatever the provider reports when the device cannot be opened.
#[no_mangle]
pub unsafe extern "C" fn dat_ia_openv(
    name: DAT_NAME_PTR,
    async_event_qlen: DAT_COUNT,
    async_event_handle: *mut DAT_EVD_HANDLE,
    ia_handle: *mut DAT_IA_HANDLE,
    dapl_major: DAT_UINT32,
    dapl_minor: DAT_UINT32,
    thread_safety: DAT_BOOLEAN,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ia_openv", || -> DatResult<()> {
        datcore::log::init(); // the other exports' successful calls leave it to this one
        if name.is_null() {
            return Err(DatError::invalid_arg(1));
        }
        // SAFETY: non-NULL; the consumer passes a NUL-terminated string. We read at most
        // DAT_NAME_MAX_LENGTH bytes looking for the terminator.
        let len = unsafe { libc::strnlen(name, DAT_NAME_MAX_LENGTH) };
        if len >= DAT_NAME_MAX_LENGTH {
            return Err(DatError::invalid_arg(1));
        }
        // SAFETY: a terminator lies within `len + 1` bytes.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        if ia_handle.is_null() {
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_IA));
        }
        // SAFETY: checked non-NULL; the consumer passes a writable handle.
        let ia_out = unsafe { out(ia_handle, 4)? };
        // SAFETY: the consumer passes a readable and writable EVD handle slot.
        let evd_slot = unsafe { out(async_event_handle, 3)? };
        crate::open::open_ia(&name, async_event_qlen, evd_slot, ia_out, dapl_major, dapl_minor, thread_safety != 0)
    })
}

/// Closes an IA. Graceful (`DAT_CLOSE_GRACEFUL_FLAG`) fails with
/// `DAT_INVALID_STATE|DAT_INVALID_STATE_IA_IN_USE` while objects exist; abrupt frees them.
/// Errors: `DAT_INVALID_HANDLE|IA`, `DAT_INVALID_PARAMETER|ARG2` (unknown flag).
#[no_mangle]
pub unsafe extern "C" fn dat_ia_close(ia_handle: DAT_IA_HANDLE, ia_flags: DAT_CLOSE_FLAGS) -> DAT_RETURN {
    crate::ffi::boundary("dat_ia_close", || -> DatResult<()> {
        if crate::open::is_library_ia(ia_handle) {
            return crate::open::close_library_ia(ia_handle, ia_flags);
        }
        let abrupt = match ia_flags {
            DAT_CLOSE_ABRUPT_FLAG => true,
            DAT_CLOSE_GRACEFUL_FLAG => false,
            _ => return Err(DatError::invalid_arg(2)),
        };
        core_ia::close(h(ia_handle), abrupt)
    })
}

/// Copies a Rust string into a fixed C char array, NUL-terminated and truncated.
fn fill_name(dst: &mut [libc::c_char], s: &str) {
    let n = s.len().min(dst.len().saturating_sub(1));
    for (d, b) in dst.iter_mut().zip(s.as_bytes()[..n].iter()) {
        *d = *b as libc::c_char;
    }
    if let Some(d) = dst.get_mut(n) {
        *d = 0;
    }
}

fn fill_ia_attr(ia: &InterfaceAdapter, a: &mut DAT_IA_ATTR) {
    // SAFETY: DAT_IA_ATTR is plain old data; all-zero is a valid value (fields this face's
    // struct has beyond the common ones are set by `convert::fill_ia_attr_face`).
    *a = unsafe { std::mem::zeroed() };
    let d = ia.device.attr();
    let c = |v: u32| v.min(i32::MAX as u32) as DAT_COUNT;
    fill_name(&mut a.adapter_name, &d.adapter_name);
    fill_name(&mut a.vendor_name, &d.vendor_name);
    a.hardware_version_major = d.hardware_version_major;
    a.hardware_version_minor = d.hardware_version_minor;
    a.firmware_version_major = d.firmware_version_major;
    a.firmware_version_minor = d.firmware_version_minor;
    a.ia_address_ptr = ia.address_ptr() as DAT_IA_ADDRESS_PTR;
    a.max_eps = c(d.max_qp);
    a.max_dto_per_ep = c(d.max_qp_wr);
    a.max_rdma_read_per_ep_in = c(d.max_rdma_read_in);
    a.max_rdma_read_per_ep_out = c(d.max_rdma_read_out);
    a.max_evds = c(d.max_cq);
    a.max_evd_qlen = c(d.max_cqe);
    a.max_iov_segments_per_dto = c(d.max_sge);
    a.max_lmrs = c(d.max_mr);
    a.max_lmr_block_size = seg_len(d.max_mr_size);
    a.max_lmr_virtual_address = u64::MAX;
    a.max_pzs = c(d.max_pd);
    a.max_message_size = seg_len(d.max_message_size);
    a.max_rdma_size = seg_len(d.max_rdma_size);
    a.max_rmrs = c(d.max_mw);
    a.max_rmr_target_address = u64::MAX;
    a.max_srqs = c(d.max_srq);
    a.max_ep_per_srq = c(d.max_qp);
    a.max_recv_per_srq = c(d.max_srq_wr);
    a.max_iov_segments_per_rdma_read = c(d.max_sge);
    a.max_iov_segments_per_rdma_write = c(d.max_sge);
    a.max_rdma_read_in = c(d.max_rdma_read_in);
    a.max_rdma_read_out = c(d.max_rdma_read_out);
    a.max_rdma_read_per_ep_in_guaranteed = DAT_TRUE as _;
    a.max_rdma_read_per_ep_out_guaranteed = DAT_TRUE as _;
    a.num_transport_attr = 0;
    a.transport_attr = std::ptr::null_mut();
    a.num_vendor_attr = 0;
    a.vendor_attr = std::ptr::null_mut();
    crate::convert::fill_ia_attr_face(ia, a);
}

fn fill_provider_attr(ia: &InterfaceAdapter, p: &mut DAT_PROVIDER_ATTR) {
    // SAFETY: plain old data, as in fill_ia_attr.
    *p = unsafe { std::mem::zeroed() };
    fill_name(&mut p.provider_name, ia.provider_name);
    p.provider_version_major = env!("CARGO_PKG_VERSION_MAJOR").parse().unwrap_or(0);
    p.provider_version_minor = env!("CARGO_PKG_VERSION_MINOR").parse().unwrap_or(0);
    p.dapl_version_major = DAT_VERSION_MAJOR;
    p.dapl_version_minor = DAT_VERSION_MINOR;
    p.lmr_mem_types_supported = (DAT_MEM_TYPE_VIRTUAL | DAT_MEM_TYPE_LMR) as _;
    p.iov_ownership_on_return = DAT_IOV_CONSUMER as _;
    p.dat_qos_supported = DAT_QOS_BEST_EFFORT as _;
    p.completion_flags_supported = (DAT_COMPLETION_SUPPRESS_FLAG
        | DAT_COMPLETION_SOLICITED_WAIT_FLAG
        | DAT_COMPLETION_UNSIGNALLED_FLAG
        | DAT_COMPLETION_BARRIER_FENCE_FLAG) as _;
    p.is_thread_safe = DAT_TRUE as _;
    p.max_private_data_size = ia.device.attr().max_private_data as DAT_COUNT;
    p.supports_multipath = DAT_FALSE as _;
    p.ep_creator = DAT_PSP_CREATES_EP_NEVER as _;
    p.pz_support = DAT_PZ_UNIQUE as _;
    p.optimal_buffer_alignment = 64;
    p.evd_stream_merging_supported = [[DAT_TRUE as _; 6]; 6];
    p.srq_supported = DAT_TRUE as _;
    p.srq_watermarks_supported = DAT_TRUE as _;
    p.srq_ep_pz_difference_supported = DAT_FALSE as _;
    p.srq_info_supported = 0;
    p.ep_recv_info_supported = DAT_TRUE as _;
    p.lmr_sync_req = DAT_FALSE as _;
    p.dto_async_return_guaranteed = DAT_FALSE as _;
    p.rdma_write_for_rdma_read_req = DAT_FALSE as _;
    p.num_provider_specific_attr = 0;
    p.provider_specific_attr = std::ptr::null_mut();
    crate::convert::fill_provider_attr_face(ia, p);
}

/// Queries IA and provider attributes; any out-pointer may be NULL when its mask is 0.
/// Errors: `DAT_INVALID_HANDLE|IA`, `DAT_INVALID_PARAMETER|ARG4/ARG6` (mask set, pointer NULL).
#[no_mangle]
pub unsafe extern "C" fn dat_ia_query(
    ia_handle: DAT_IA_HANDLE,
    async_evd_handle: *mut DAT_EVD_HANDLE,
    ia_attr_mask: DAT_IA_ATTR_MASK,
    ia_attr: *mut DAT_IA_ATTR,
    provider_attr_mask: DAT_PROVIDER_ATTR_MASK,
    provider_attr: *mut DAT_PROVIDER_ATTR,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ia_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ia_handle,
            ia_query_func,
            (ia_handle, async_evd_handle, ia_attr_mask, ia_attr, provider_attr_mask, provider_attr)
        ) {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        if ia_attr_mask != 0 {
            // SAFETY: the consumer passes a writable DAT_IA_ATTR when the mask is non-zero.
            fill_ia_attr(&ia, unsafe { out(ia_attr, 4)? });
        }
        if provider_attr_mask != 0 {
            // SAFETY: as above for DAT_PROVIDER_ATTR.
            fill_provider_attr(&ia, unsafe { out(provider_attr, 6)? });
        }
        if !async_evd_handle.is_null() {
            let v = ia.async_evd().map_or(DAT_EVD_OUT_OF_SCOPE, |e| e.handle().as_ptr());
            // SAFETY: non-NULL writable out-pointer from the consumer.
            unsafe { async_evd_handle.write(v) };
        }
        Ok(())
    })
}

/// The type of any live handle. Errors: `DAT_INVALID_HANDLE|DAT_INVALID_HANDLE1`
/// (not a live handle), `DAT_INVALID_PARAMETER|ARG2` (type NULL).
#[no_mangle]
pub unsafe extern "C" fn dat_get_handle_type(dat_handle: DAT_HANDLE, type_: *mut DAT_HANDLE_TYPE) -> DAT_RETURN {
    crate::ffi::boundary("dat_get_handle_type", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(dat_handle, get_handle_type_func, (dat_handle, type_)) {
            return crate::registry::ret(r);
        }
        let ty = handle::type_of(h(dat_handle)).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE1))?;
        // SAFETY: writable out-pointer from the consumer.
        *unsafe { out(type_, 2)? } = ty as u32 as DAT_HANDLE_TYPE;
        Ok(())
    })
}

/// Stores a consumer context on any live handle. Errors: `DAT_INVALID_HANDLE|DAT_INVALID_HANDLE1`.
#[no_mangle]
pub unsafe extern "C" fn dat_set_consumer_context(dat_handle: DAT_HANDLE, context: DAT_CONTEXT) -> DAT_RETURN {
    crate::ffi::boundary("dat_set_consumer_context", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(dat_handle, set_consumer_context_func, (dat_handle, context)) {
            return crate::registry::ret(r);
        }
        // SAFETY: every member of the 8-byte union is plain data; as_64 covers all of it.
        let v = unsafe { context.as_64 };
        if handle::set_context(h(dat_handle), v) {
            Ok(())
        } else {
            Err(DatError::invalid_handle(DAT_INVALID_HANDLE1))
        }
    })
}

/// Reads the consumer context of any live handle (0 if never set).
/// Errors: `DAT_INVALID_HANDLE|DAT_INVALID_HANDLE1`, `DAT_INVALID_PARAMETER|ARG2`.
#[no_mangle]
pub unsafe extern "C" fn dat_get_consumer_context(dat_handle: DAT_HANDLE, context: *mut DAT_CONTEXT) -> DAT_RETURN {
    crate::ffi::boundary("dat_get_consumer_context", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(dat_handle, get_consumer_context_func, (dat_handle, context)) {
            return crate::registry::ret(r);
        }
        let v = handle::context(h(dat_handle)).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE1))?;
        // SAFETY: writable out-pointer from the consumer.
        *unsafe { out(context, 2)? } = DAT_CONTEXT { as_64: v };
        Ok(())
    })
}

/// `dat_strerror`: static strings naming the type and subtype of `value` (a code in the face's
/// numbering; `convert::code_in` turns it into the core's numbering the names are kept in).
///
/// A NULL major pointer returns `DAT_INVALID_PARAMETER|DAT_INVALID_ARG2` (the minor is still
/// written); a NULL minor pointer asks for the major only, as in the reference.  An unknown type,
/// or an unknown subtype when the minor was asked for, returns `DAT_INVALID_PARAMETER`
/// (0x00060000, without the class bit, as the reference does) with placeholder text for the
/// unknown part: the messages are written whatever the result.
#[no_mangle]
pub unsafe extern "C" fn dat_strerror(
    value: DAT_RETURN,
    major_message: *mut *const libc::c_char,
    minor_message: *mut *const libc::c_char,
) -> DAT_RETURN {
    let r = std::panic::catch_unwind(|| {
        let messages = crate::strerror::messages(crate::convert::code_in(value));
        // SAFETY: optional out-pointers from the consumer; the strings are static.
        unsafe {
            crate::ffi::write_opt(major_message, messages.major.as_ptr());
            crate::ffi::write_opt(minor_message, messages.minor.as_ptr());
        }
        let code = if major_message.is_null() {
            DatError::invalid_arg(2).0
        } else if messages.known(!minor_message.is_null()) {
            DAT_SUCCESS
        } else {
            DAT_INVALID_PARAMETER
        };
        crate::convert::code_out(code)
    });
    r.unwrap_or(crate::convert::code_out(DatError::INTERNAL.0))
}
