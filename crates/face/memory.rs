//! PZ, LMR and RMR exports. `dat_lmr_create` and `dat_rmr_bind` have face-specific C
//! signatures: each face's `face_specific` module exports them and calls [`create_lmr`] /
//! [`bind_rmr`] here.

use crate::abi::*;
use crate::convert::with_sges;
use crate::ffi::{h, out, slice, write_opt};
use crate::ia::ia_of;
use datcore::codes::{DAT_INVALID_HANDLE_IA, DAT_INVALID_HANDLE_LMR, DAT_INVALID_HANDLE_PZ, DAT_INVALID_HANDLE_RMR};
use datcore::handle;
use datcore::ia::InterfaceAdapter;
use datcore::lmr::{self, LocalMemoryRegion};
use datcore::provider::Sge;
use datcore::pz::{self, ProtectionZone};
use datcore::rmr::{self, RemoteMemoryRegion};
use datcore::DatError;
use datcore::DatResult;

/// Creates a PZ. Errors: `DAT_INVALID_HANDLE|IA`, `DAT_INVALID_PARAMETER|ARG2`.
#[no_mangle]
pub unsafe extern "C" fn dat_pz_create(ia_handle: DAT_IA_HANDLE, pz_handle: *mut DAT_PZ_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_pz_create", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(ia_handle, pz_create_func, (ia_handle, pz_handle)) {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(pz_handle, 2)? };
        *slot = ProtectionZone::create(&ia)?.as_ptr();
        Ok(())
    })
}

/// Queries a PZ. Errors: `DAT_INVALID_HANDLE|PZ`, `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_pz_query(
    pz_handle: DAT_PZ_HANDLE,
    pz_param_mask: DAT_PZ_PARAM_MASK,
    pz_param: *mut DAT_PZ_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_pz_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(pz_handle, pz_query_func, (pz_handle, pz_param_mask, pz_param)) {
            return crate::registry::ret(r);
        }
        let _ = pz_param_mask;
        let pz = handle::get_ptr::<ProtectionZone>(pz_handle, DAT_INVALID_HANDLE_PZ)?;
        // SAFETY: writable out-pointer from the consumer.
        unsafe { out(pz_param, 3)? }.ia_handle = pz.ia.handle().as_ptr();
        Ok(())
    })
}

/// Frees a PZ. Errors: `DAT_INVALID_HANDLE|PZ`, `DAT_INVALID_STATE|PZ_IN_USE`.
#[no_mangle]
pub unsafe extern "C" fn dat_pz_free(pz_handle: DAT_PZ_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_pz_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(pz_handle, pz_free_func, (pz_handle)) {
            return crate::registry::ret(r);
        }
        pz::free(h(pz_handle))
    })
}

/// `dat_lmr_create` after the face's foreign-provider dispatch: registers memory.
/// Errors: `DAT_INVALID_HANDLE|IA`, `|PZ`, `|LMR` (DAT_MEM_TYPE_LMR source),
/// `DAT_INVALID_PARAMETER|ARG2` (memory type), `|ARG3` (NULL address), `|ARG6` (privileges),
/// `|ARG{lmr_handle_arg}` (lmr_handle NULL), `DAT_LENGTH_ERROR` (zero or too long), and provider
/// registration failures (`DAT_INSUFFICIENT_RESOURCES`).
///
/// # Safety
/// The consumer's `dat_lmr_create` arguments: out-pointers NULL or writable, the region
/// description the member `mem_type` names.
#[allow(clippy::too_many_arguments)]
pub unsafe fn create_lmr(
    ia_handle: DAT_IA_HANDLE,
    mem_type: DAT_MEM_TYPE,
    region_description: DAT_REGION_DESCRIPTION,
    length: DAT_VLEN,
    pz_handle: DAT_PZ_HANDLE,
    privileges: DAT_MEM_PRIV_FLAGS,
    lmr_handle: (*mut DAT_LMR_HANDLE, u32),
    lmr_context: *mut DAT_LMR_CONTEXT,
    rmr_context: *mut DAT_RMR_CONTEXT,
    registered_length: *mut DAT_VLEN,
    registered_address: *mut DAT_VADDR,
) -> DatResult<()> {
    let ia = ia_of(ia_handle)?;
    // SAFETY: each union member read matches the memory type the consumer declared.
    let addr = match mem_type {
        DAT_MEM_TYPE_VIRTUAL => (unsafe { region_description.for_va }) as u64,
        DAT_MEM_TYPE_SHARED_VIRTUAL => (unsafe { region_description.for_shared_memory.virtual_address }) as u64,
        DAT_MEM_TYPE_LMR => {
            let src = handle::get_ptr::<LocalMemoryRegion>(
                unsafe { region_description.for_lmr_handle },
                DAT_INVALID_HANDLE_LMR,
            )?;
            src.mr.addr()
        }
        _ => return Err(DatError::invalid_arg(2)),
    };
    // SAFETY: writable out-pointer from the consumer.
    let slot = unsafe { out(lmr_handle.0, lmr_handle.1)? };
    let c = LocalMemoryRegion::create(&ia, h(pz_handle), mem_type, addr, length, privileges)?;
    *slot = c.handle.as_ptr();
    // SAFETY: optional writable out-pointers from the consumer.
    unsafe {
        write_opt(lmr_context, c.lmr_context);
        write_opt(rmr_context, c.rmr_context);
        write_opt(registered_length, c.registered_length);
        write_opt(registered_address, c.registered_address);
    }
    Ok(())
}

/// Queries an LMR. Errors: `DAT_INVALID_HANDLE|LMR`, `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_lmr_query(
    lmr_handle: DAT_LMR_HANDLE,
    lmr_param_mask: DAT_LMR_PARAM_MASK,
    lmr_param: *mut DAT_LMR_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_lmr_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(lmr_handle, lmr_query_func, (lmr_handle, lmr_param_mask, lmr_param)) {
            return crate::registry::ret(r);
        }
        let _ = lmr_param_mask;
        let l = handle::get_ptr::<LocalMemoryRegion>(lmr_handle, DAT_INVALID_HANDLE_LMR)?;
        // SAFETY: writable out-pointer from the consumer.
        let p = unsafe { out(lmr_param, 3)? };
        // SAFETY: DAT_LMR_PARAM is plain old data; all-zero is valid (DAT 2.0's va_type: VA).
        *p = unsafe { std::mem::zeroed() };
        p.ia_handle = l.ia.handle().as_ptr();
        p.mem_type = l.mem_type as _;
        p.region_desc = DAT_REGION_DESCRIPTION { for_va: l.mr.addr() as usize as DAT_PVOID };
        p.length = l.mr.length();
        p.pz_handle = l.pz_handle.as_ptr();
        p.mem_priv = l.privileges as _;
        p.lmr_context = l.mr.lkey();
        p.rmr_context = l.mr.rkey();
        p.registered_size = l.mr.length();
        p.registered_address = l.mr.addr();
        Ok(())
    })
}

/// Deregisters an LMR. Errors: `DAT_INVALID_HANDLE|LMR`, `DAT_INVALID_STATE|LMR_IN_USE`.
#[no_mangle]
pub unsafe extern "C" fn dat_lmr_free(lmr_handle: DAT_LMR_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_lmr_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(lmr_handle, lmr_free_func, (lmr_handle)) {
            return crate::registry::ret(r);
        }
        lmr::free(h(lmr_handle))
    })
}

/// `dat_lmr_sync_rdma_read` / `_write` on an IA of ours. The IA is used through its handle's
/// lookup, without a reference of its own: RDMA-write ping-pongs sync once per message.
///
/// # Safety
/// `local_segments` points at `num_segments` readable triplets (or is checked NULL).
#[inline(always)]
unsafe fn sync_rdma(
    ia_handle: DAT_IA_HANDLE,
    local_segments: *const DAT_LMR_TRIPLET,
    num_segments: DAT_VLEN,
) -> DatResult<()> {
    let ia = handle::get_ptr::<InterfaceAdapter>(ia_handle, DAT_INVALID_HANDLE_IA)?;
    let n = i64::try_from(num_segments).map_err(|_| DatError::invalid_arg(3))?;
    // SAFETY: the consumer passes `num_segments` readable triplets.
    with_sges(unsafe { slice(local_segments, n, 2, 3)? }, |sges| lmr::sync_rdma(&ia, sges))
}

/// Makes RDMA-read sources visible. Errors: `DAT_INVALID_HANDLE|IA`,
/// `DAT_INVALID_PARAMETER|ARG2` (NULL, or a segment outside every LMR of the IA).
#[no_mangle]
pub unsafe extern "C" fn dat_lmr_sync_rdma_read(
    ia_handle: DAT_IA_HANDLE,
    local_segments: *const DAT_LMR_TRIPLET,
    num_segments: DAT_VLEN,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_lmr_sync_rdma_read", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(ia_handle, lmr_sync_rdma_read_func, (ia_handle, local_segments, num_segments))
        {
            return crate::registry::ret(r);
        }
        // SAFETY: the consumer's arguments.
        unsafe { sync_rdma(ia_handle, local_segments, num_segments) }
    })
}

/// Makes RDMA-write results visible. Errors as `dat_lmr_sync_rdma_read`.
#[no_mangle]
pub unsafe extern "C" fn dat_lmr_sync_rdma_write(
    ia_handle: DAT_IA_HANDLE,
    local_segments: *const DAT_LMR_TRIPLET,
    num_segments: DAT_VLEN,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_lmr_sync_rdma_write", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(ia_handle, lmr_sync_rdma_write_func, (ia_handle, local_segments, num_segments))
        {
            return crate::registry::ret(r);
        }
        // SAFETY: the consumer's arguments.
        unsafe { sync_rdma(ia_handle, local_segments, num_segments) }
    })
}

/// Creates an RMR (a memory window). Errors: `DAT_INVALID_HANDLE|PZ`,
/// `DAT_INVALID_PARAMETER|ARG2`, provider errors when windows are unsupported.
#[no_mangle]
pub unsafe extern "C" fn dat_rmr_create(pz_handle: DAT_PZ_HANDLE, rmr_handle: *mut DAT_RMR_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_rmr_create", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(pz_handle, rmr_create_func, (pz_handle, rmr_handle)) {
            return crate::registry::ret(r);
        }
        handle::get_ptr::<ProtectionZone>(pz_handle, DAT_INVALID_HANDLE_PZ)?;
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(rmr_handle, 2)? };
        *slot = RemoteMemoryRegion::create(h(pz_handle))?.as_ptr();
        Ok(())
    })
}

/// Queries an RMR. Errors: `DAT_INVALID_HANDLE|RMR`, `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_rmr_query(
    rmr_handle: DAT_RMR_HANDLE,
    rmr_param_mask: DAT_RMR_PARAM_MASK,
    rmr_param: *mut DAT_RMR_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_rmr_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(rmr_handle, rmr_query_func, (rmr_handle, rmr_param_mask, rmr_param)) {
            return crate::registry::ret(r);
        }
        let _ = rmr_param_mask;
        let r = handle::get_ptr::<RemoteMemoryRegion>(rmr_handle, DAT_INVALID_HANDLE_RMR)?;
        // SAFETY: writable out-pointer from the consumer.
        let p = unsafe { out(rmr_param, 3)? };
        // SAFETY: DAT_RMR_PARAM is plain old data; all-zero is valid (DAT 2.0's rmr_scope: EP,
        // va_type: VA).
        *p = unsafe { std::mem::zeroed() };
        p.ia_handle = r.ia.handle().as_ptr();
        p.pz_handle = r.pz_handle.as_ptr();
        let b = r.binding();
        p.lmr_triplet = crate::convert::lmr_triplet(&b.as_ref().map(|b| b.triplet).unwrap_or_default());
        p.mem_priv = b.as_ref().map_or(0, |b| b.privileges) as _;
        p.rmr_context = b.as_ref().map_or(0, |b| b.rmr_context);
        Ok(())
    })
}

/// `dat_rmr_bind` after the face's foreign-provider dispatch and argument decoding: binds an
/// RMR to part of an LMR through a connected EP (length 0 unbinds) and stores the new
/// rmr_context. Errors: `DAT_INVALID_HANDLE|RMR`, `|EP`, `DAT_PROTECTION_VIOLATION` (PZ
/// mismatch, unknown LMR), `DAT_LENGTH_ERROR` (outside the LMR), `DAT_PRIVILEGES_VIOLATION`,
/// `DAT_INVALID_STATE` (EP not connected).
pub fn bind_rmr(
    rmr_handle: DAT_RMR_HANDLE,
    segment: &Sge,
    mem_privileges: DAT_MEM_PRIV_FLAGS,
    ep_handle: DAT_EP_HANDLE,
    user_cookie: DAT_RMR_COOKIE,
    completion_flags: DAT_COMPLETION_FLAGS,
    rmr_context: &mut DAT_RMR_CONTEXT,
) -> DatResult<()> {
    // SAFETY: the cookie union is 8 bytes of plain data.
    let cookie = unsafe { user_cookie.as_64 };
    *rmr_context = rmr::bind(h(rmr_handle), segment, mem_privileges, h(ep_handle), cookie, completion_flags)?;
    Ok(())
}

/// The RMR behind a handle, or `DAT_INVALID_HANDLE|RMR`.
pub fn rmr_of(p: DAT_RMR_HANDLE) -> DatResult<handle::Ref<RemoteMemoryRegion>> {
    handle::get_ptr::<RemoteMemoryRegion>(p, DAT_INVALID_HANDLE_RMR)
}

/// Frees an RMR. Errors: `DAT_INVALID_HANDLE|RMR`.
#[no_mangle]
pub unsafe extern "C" fn dat_rmr_free(rmr_handle: DAT_RMR_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_rmr_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(rmr_handle, rmr_free_func, (rmr_handle)) {
            return crate::registry::ret(r);
        }
        rmr::free(h(rmr_handle))
    })
}
