//! The DAT 2.0 exports whose C signature differs from DAT 1.2's: `dat_lmr_create` (with
//! `DAT_VA_TYPE`), `dat_rmr_bind` (with the LMR handle and `DAT_VA_TYPE`), `dat_cr_reject`
//! (with private data), and `dats_get_ia_handle`, which DAT 2.0 provider libraries call. Each
//! dispatches third-party handles, decodes its arguments and calls the shared body in
//! `crates/face/`.

use crate::abi::*;
use crate::convert::with_sges;
use crate::ffi::{h, input, out, slice};
use datcore::codes::{DAT_INVALID_HANDLE_IA, DAT_INVALID_HANDLE_LMR};
use datcore::handle;
use datcore::ia::InterfaceAdapter;
use datcore::lmr::LocalMemoryRegion;
use datcore::{DatError, DatResult};

/// Only virtual addresses are supported (`DAT_IA_ATTR.zb_supported` is false): any other
/// `DAT_VA_TYPE` is `DAT_INVALID_PARAMETER|ARG{arg}`.
fn virtual_addresses_only(va_type: DAT_VA_TYPE, arg: u32) -> DatResult<()> {
    if va_type == DAT_VA_TYPE_VA {
        Ok(())
    } else {
        Err(DatError::invalid_arg(arg))
    }
}

/// Registers memory. Errors: `DAT_INVALID_PARAMETER|ARG7` (`va_type` other than
/// `DAT_VA_TYPE_VA`: zero-based addressing is not supported), then those of
/// `memory::create_lmr` (`lmr_handle` is ARG8).
#[no_mangle]
pub unsafe extern "C" fn dat_lmr_create(
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
                va_type,
                lmr_handle,
                lmr_context,
                rmr_context,
                registered_length,
                registered_address
            )
        ) {
            return crate::registry::ret(r);
        }
        crate::ia::ia_of(ia_handle)?;
        virtual_addresses_only(va_type, 7)?;
        // SAFETY: the consumer's arguments, forwarded.
        unsafe {
            crate::memory::create_lmr(
                ia_handle,
                mem_type,
                region_description,
                length,
                pz_handle,
                privileges,
                (lmr_handle, 8),
                lmr_context,
                rmr_context,
                registered_length,
                registered_address,
            )
        }
    })
}

/// Binds an RMR to part of an LMR through a connected EP (length 0 unbinds).
/// Errors: `DAT_INVALID_HANDLE|RMR`, `DAT_INVALID_HANDLE|LMR` (`lmr_handle` neither NULL nor
/// a live LMR), `DAT_INVALID_PARAMETER|ARG3` (triplet NULL), `|ARG5` (`va_type` other than
/// `DAT_VA_TYPE_VA`), `|ARG9` (rmr_context NULL), then those of `memory::bind_rmr` (the
/// triplet's `lmr_context` names the LMR, as in DAT 1.2).
#[no_mangle]
pub unsafe extern "C" fn dat_rmr_bind(
    rmr_handle: DAT_RMR_HANDLE,
    lmr_handle: DAT_LMR_HANDLE,
    lmr_triplet: *const DAT_LMR_TRIPLET,
    mem_privileges: DAT_MEM_PRIV_FLAGS,
    va_type: DAT_VA_TYPE,
    ep_handle: DAT_EP_HANDLE,
    user_cookie: DAT_RMR_COOKIE,
    completion_flags: DAT_COMPLETION_FLAGS,
    rmr_context: *mut DAT_RMR_CONTEXT,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_rmr_bind", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            rmr_handle,
            rmr_bind_func,
            (
                rmr_handle,
                lmr_handle,
                lmr_triplet,
                mem_privileges,
                va_type,
                ep_handle,
                user_cookie,
                completion_flags,
                rmr_context
            )
        ) {
            return crate::registry::ret(r);
        }
        crate::memory::rmr_of(rmr_handle)?;
        if !lmr_handle.is_null() {
            handle::get_ptr::<LocalMemoryRegion>(lmr_handle, DAT_INVALID_HANDLE_LMR)?;
        }
        // SAFETY: readable triplet and writable out-pointer from the consumer.
        let (t, slot) = unsafe { (input(lmr_triplet, 3)?, out(rmr_context, 9)?) };
        virtual_addresses_only(va_type, 5)?;
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

/// Rejects a request; the active side sees `DAT_CONNECTION_EVENT_PEER_REJECTED` with the
/// private data where the transport carries it (shm: always; verbs: after our reject marker,
/// padded to the REJ size on InfiniBand). Errors: `DAT_INVALID_HANDLE|CR`,
/// `DAT_INVALID_PARAMETER|ARG2` (negative or above the IA's private-data limit), `|ARG3`
/// (NULL data with a size).
#[no_mangle]
pub unsafe extern "C" fn dat_cr_reject(
    cr_handle: DAT_CR_HANDLE,
    private_data_size: DAT_COUNT,
    private_data: DAT_PVOID,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_cr_reject", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(cr_handle, cr_reject_func, (cr_handle, private_data_size, private_data)) {
            return crate::registry::ret(r);
        }
        // SAFETY: the consumer passes `private_data_size` readable bytes.
        let pd = unsafe { slice(private_data as *const u8, private_data_size as i64, 3, 2)? };
        datcore::service_point::reject(h(cr_handle), pd)
    })
}

/// What DAT 2.0 provider libraries call to turn their IA pointer into the consumer's IA handle
/// (OFED's library keeps a table of small integers). Here the consumer's handle of a
/// third-party provider's IA is that provider's own pointer, and our own IAs have their own
/// handles, so a live IA handle of either kind is answered with itself.
/// Errors: `DAT_INVALID_HANDLE|IA` (NULL or not a live IA), `DAT_INVALID_PARAMETER|ARG2`.
#[no_mangle]
pub unsafe extern "C" fn dats_get_ia_handle(handle: DAT_IA_HANDLE, ia_handle_ptr: *mut DAT_IA_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dats_get_ia_handle", || -> DatResult<()> {
        if !crate::open::is_library_ia(handle) {
            handle::get_ptr::<InterfaceAdapter>(handle, DAT_INVALID_HANDLE_IA)?;
        }
        // SAFETY: writable out-pointer from the caller.
        *unsafe { out(ia_handle_ptr, 2)? } = handle;
        Ok(())
    })
}
