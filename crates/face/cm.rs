//! Connection management exports: PSP, RSP and CR. (`dat_cr_reject` has a face-specific C
//! signature: each face's `face_specific` module exports it.)

use crate::abi::*;
use crate::ffi::{h, out, slice};
use crate::ia::ia_of;
use datcore::codes::{DAT_INVALID_HANDLE_CR, DAT_INVALID_HANDLE_PSP, DAT_INVALID_HANDLE_RSP};
use datcore::handle;
use datcore::service_point::{self as sp, ConnectionRequest, PublicServicePoint, ReservedServicePoint};
use datcore::DatResult;

/// Listens on a connection qualifier. Errors: `DAT_INVALID_HANDLE|IA`, `|EVD_CR` (not a CR
/// EVD), `DAT_INVALID_PARAMETER|ARG4` (flags), `|ARG5` (psp_handle NULL),
/// `DAT_CONN_QUAL_IN_USE`. With `DAT_PSP_PROVIDER_FLAG` each request comes with a
/// provider-created EP (no PZ, no EVDs, tentative) named by `dat_cr_query`'s `local_ep_handle`.
#[no_mangle]
pub unsafe extern "C" fn dat_psp_create(
    ia_handle: DAT_IA_HANDLE,
    conn_qual: DAT_CONN_QUAL,
    evd_handle: DAT_EVD_HANDLE,
    psp_flags: DAT_PSP_FLAGS,
    psp_handle: *mut DAT_PSP_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_psp_create", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(ia_handle, psp_create_func, (ia_handle, conn_qual, evd_handle, psp_flags, psp_handle))
        {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(psp_handle, 5)? };
        *slot = sp::create_psp(&ia, conn_qual, h(evd_handle), psp_flags)?.as_ptr();
        Ok(())
    })
}

/// Listens on a free qualifier and returns it. Errors as `dat_psp_create` (qualifier
/// pointer is ARG2), plus `DAT_CONN_QUAL_UNAVAILABLE`.
#[no_mangle]
pub unsafe extern "C" fn dat_psp_create_any(
    ia_handle: DAT_IA_HANDLE,
    conn_qual: *mut DAT_CONN_QUAL,
    evd_handle: DAT_EVD_HANDLE,
    psp_flags: DAT_PSP_FLAGS,
    psp_handle: *mut DAT_PSP_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_psp_create_any", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ia_handle,
            psp_create_any_func,
            (ia_handle, conn_qual, evd_handle, psp_flags, psp_handle)
        ) {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        // SAFETY: writable out-pointers from the consumer.
        let (q_slot, slot) = unsafe { (out(conn_qual, 2)?, out(psp_handle, 5)?) };
        let (q, ph) = sp::create_psp_any(&ia, h(evd_handle), psp_flags)?;
        *q_slot = q;
        *slot = ph.as_ptr();
        Ok(())
    })
}

/// Queries a PSP. Errors: `DAT_INVALID_HANDLE|PSP`, `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_psp_query(
    psp_handle: DAT_PSP_HANDLE,
    psp_param_mask: DAT_PSP_PARAM_MASK,
    psp_param: *mut DAT_PSP_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_psp_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(psp_handle, psp_query_func, (psp_handle, psp_param_mask, psp_param)) {
            return crate::registry::ret(r);
        }
        let _ = psp_param_mask;
        let p = handle::get_ptr::<PublicServicePoint>(psp_handle, DAT_INVALID_HANDLE_PSP)?;
        // SAFETY: writable out-pointer from the consumer.
        let o = unsafe { out(psp_param, 3)? };
        o.ia_handle = p.0.ia.handle().as_ptr();
        o.conn_qual = p.0.conn_qual;
        o.evd_handle = p.0.evd_handle.as_ptr();
        o.psp_flags = p.0.psp_flags as _;
        Ok(())
    })
}

/// Stops listening. Errors: `DAT_INVALID_HANDLE|PSP`.
#[no_mangle]
pub unsafe extern "C" fn dat_psp_free(psp_handle: DAT_PSP_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_psp_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(psp_handle, psp_free_func, (psp_handle)) {
            return crate::registry::ret(r);
        }
        sp::free_psp(h(psp_handle))
    })
}

/// Reserves an unconnected EP for connections on a qualifier. Errors:
/// `DAT_INVALID_HANDLE|IA`, `|EP`, `|EVD_CR`, `DAT_INVALID_PARAMETER|ARG5`,
/// `DAT_INVALID_STATE` (EP not unconnected), `DAT_CONN_QUAL_IN_USE`.
#[no_mangle]
pub unsafe extern "C" fn dat_rsp_create(
    ia_handle: DAT_IA_HANDLE,
    conn_qual: DAT_CONN_QUAL,
    ep_handle: DAT_EP_HANDLE,
    evd_handle: DAT_EVD_HANDLE,
    rsp_handle: *mut DAT_RSP_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_rsp_create", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(ia_handle, rsp_create_func, (ia_handle, conn_qual, ep_handle, evd_handle, rsp_handle))
        {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(rsp_handle, 5)? };
        *slot = sp::create_rsp(&ia, conn_qual, h(ep_handle), h(evd_handle))?.as_ptr();
        Ok(())
    })
}

/// Queries an RSP. Errors: `DAT_INVALID_HANDLE|RSP`, `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_rsp_query(
    rsp_handle: DAT_RSP_HANDLE,
    rsp_param_mask: DAT_RSP_PARAM_MASK,
    rsp_param: *mut DAT_RSP_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_rsp_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(rsp_handle, rsp_query_func, (rsp_handle, rsp_param_mask, rsp_param)) {
            return crate::registry::ret(r);
        }
        let _ = rsp_param_mask;
        let r = handle::get_ptr::<ReservedServicePoint>(rsp_handle, DAT_INVALID_HANDLE_RSP)?;
        // SAFETY: writable out-pointer from the consumer.
        let o = unsafe { out(rsp_param, 3)? };
        o.ia_handle = r.0.ia.handle().as_ptr();
        o.conn_qual = r.0.conn_qual;
        o.evd_handle = r.0.evd_handle.as_ptr();
        o.ep_handle = r.0.reserved_ep.as_ref().map_or(std::ptr::null_mut(), |(h, _)| h.as_ptr());
        Ok(())
    })
}

/// Stops listening; the reserved EP becomes unconnected again. Errors: `DAT_INVALID_HANDLE|RSP`.
#[no_mangle]
pub unsafe extern "C" fn dat_rsp_free(rsp_handle: DAT_RSP_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_rsp_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(rsp_handle, rsp_free_func, (rsp_handle)) {
            return crate::registry::ret(r);
        }
        sp::free_rsp(h(rsp_handle))
    })
}

/// Queries a connection request (private data stays valid until accept/reject).
/// Errors: `DAT_INVALID_HANDLE|CR`, `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_cr_query(
    cr_handle: DAT_CR_HANDLE,
    cr_param_mask: DAT_CR_PARAM_MASK,
    cr_param: *mut DAT_CR_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_cr_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(cr_handle, cr_query_func, (cr_handle, cr_param_mask, cr_param)) {
            return crate::registry::ret(r);
        }
        let _ = cr_param_mask;
        let c = handle::get_ptr::<ConnectionRequest>(cr_handle, DAT_INVALID_HANDLE_CR)?;
        // SAFETY: writable out-pointer from the consumer.
        let o = unsafe { out(cr_param, 3)? };
        let pd = c.request.private_data();
        o.remote_ia_address_ptr = c.remote_address_ptr() as DAT_IA_ADDRESS_PTR;
        o.remote_port_qual = c.request.remote_address().port() as u64;
        o.private_data_size = pd.len() as DAT_COUNT;
        o.private_data = if pd.is_empty() { std::ptr::null_mut() } else { pd.as_ptr() as DAT_PVOID };
        o.local_ep_handle = c.local_ep.as_ptr();
        Ok(())
    })
}

/// Accepts a request on an EP (NULL: the EP the request names: an RSP's reserved EP or the
/// provider-created EP). Errors: `DAT_INVALID_HANDLE|CR`, `|EP`, `DAT_INVALID_PARAMETER|ARG3/ARG4`
/// (private data), `DAT_INVALID_STATE` (EP state; `EP_NOTREADY`: a provider EP without a PZ).
#[no_mangle]
pub unsafe extern "C" fn dat_cr_accept(
    cr_handle: DAT_CR_HANDLE,
    ep_handle: DAT_EP_HANDLE,
    private_data_size: DAT_COUNT,
    private_data: DAT_PVOID,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_cr_accept", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(cr_handle, cr_accept_func, (cr_handle, ep_handle, private_data_size, private_data))
        {
            return crate::registry::ret(r);
        }
        handle::get_ptr::<ConnectionRequest>(cr_handle, DAT_INVALID_HANDLE_CR)?;
        // SAFETY: the consumer passes `private_data_size` readable bytes.
        let pd = unsafe { slice(private_data as *const u8, private_data_size as i64, 4, 3)? };
        sp::accept(h(cr_handle), h(ep_handle), pd)
    })
}

/// Hands a request to the service point on another qualifier of the same IA.
/// Errors: `DAT_INVALID_HANDLE|CR`, `DAT_INVALID_PARAMETER|ARG2` (nobody listens there).
#[no_mangle]
pub unsafe extern "C" fn dat_cr_handoff(cr_handle: DAT_CR_HANDLE, handoff: DAT_CONN_QUAL) -> DAT_RETURN {
    crate::ffi::boundary("dat_cr_handoff", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(cr_handle, cr_handoff_func, (cr_handle, handoff)) {
            return crate::registry::ret(r);
        }
        sp::handoff(h(cr_handle), handoff)
    })
}
