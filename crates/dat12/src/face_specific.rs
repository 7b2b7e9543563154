//! The DAT 1.2 exports whose C signature differs from DAT 2.0's: `dat_lmr_create` (no
//! `DAT_VA_TYPE`), `dat_rmr_bind` (no LMR handle, no `DAT_VA_TYPE`) and `dat_cr_reject` (no
//! private data). Each dispatches third-party handles, decodes its arguments and calls the
//! shared body in `crates/face/`.

use crate::abi::*;
use crate::convert::with_sges;
use crate::ffi::{h, input, out};
use datcore::DatResult;

/// Registers memory. Errors: see `memory::create_lmr` (`lmr_handle` is ARG7).
#[no_mangle]
pub unsafe extern "C" fn dat_lmr_create(
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
) -> DAT_RETURN {
    crate::ffi::boundary("dat_lmr_create", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ia_handle,
            lmr_create_func,
            (
                ia_handle,
                mem_type,
                region_description,
                length,
                pz_handle,
                privileges,
                lmr_handle,
                lmr_context,
                rmr_context,
                registered_length,
                registered_address
            )
        ) {
            return crate::registry::ret(r);
        }
        // SAFETY: the consumer's arguments, forwarded.
        unsafe {
            crate::memory::create_lmr(
                ia_handle,
                mem_type,
                region_description,
                length,
                pz_handle,
                privileges,
                (lmr_handle, 7),
                lmr_context,
                rmr_context,
                registered_length,
                registered_address,
            )
        }
    })
}

/// Binds an RMR to part of an LMR through a connected EP (length 0 unbinds).
/// Errors: `DAT_INVALID_HANDLE|RMR`, `DAT_INVALID_PARAMETER|ARG2` (triplet NULL), `|ARG7`
/// (rmr_context NULL), then those of `memory::bind_rmr`.
#[no_mangle]
pub unsafe extern "C" fn dat_rmr_bind(
    rmr_handle: DAT_RMR_HANDLE,
    lmr_triplet: *const DAT_LMR_TRIPLET,
    mem_privileges: DAT_MEM_PRIV_FLAGS,
    ep_handle: DAT_EP_HANDLE,
    user_cookie: DAT_RMR_COOKIE,
    completion_flags: DAT_COMPLETION_FLAGS,
    rmr_context: *mut DAT_RMR_CONTEXT,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_rmr_bind", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            rmr_handle,
            rmr_bind_func,
            (rmr_handle, lmr_triplet, mem_privileges, ep_handle, user_cookie, completion_flags, rmr_context)
        ) {
            return crate::registry::ret(r);
        }
        crate::memory::rmr_of(rmr_handle)?;
        // SAFETY: readable triplet and writable out-pointer from the consumer.
        let (t, slot) = unsafe { (input(lmr_triplet, 2)?, out(rmr_context, 7)?) };
        with_sges(std::slice::from_ref(t), |segment| {
            crate::memory::bind_rmr(
                rmr_handle,
                &segment[0],
                mem_privileges,
                ep_handle,
                user_cookie,
                completion_flags,
                slot,
            )
        })
    })
}

/// Rejects a request; the active side sees PEER_REJECTED. Errors: `DAT_INVALID_HANDLE|CR`.
#[no_mangle]
pub unsafe extern "C" fn dat_cr_reject(cr_handle: DAT_CR_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_cr_reject", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(cr_handle, cr_reject_func, (cr_handle)) {
            return crate::registry::ret(r);
        }
        datcore::service_point::reject(h(cr_handle), &[])
    })
}
