//! The DAT 2.0 calls that `dat_redirection.h` defines only as `DAT_<CALL>` macros (OFED's
//! libdat2 exports no function for them), reached through the provider table's slots 70-79:
//! common service points, the common connect, the RMR for an EP, send with invalidate, RDMA read
//! to an RMR, the file-descriptor CNO and its trigger, and the HA relation of two IAs.
//!
//! None is implemented: each checks its handle as the other calls do (a bad one is
//! `DAT_INVALID_HANDLE` with the handle's subtype), then returns `DAT_NOT_IMPLEMENTED`. No CSP
//! handle exists, so a CSP handle is always invalid.

use crate::abi::*;
use crate::ffi::boundary;
use datcore::cno::ConsumerNotifier;
use datcore::codes::{
    DAT_INVALID_HANDLE_CNO, DAT_INVALID_HANDLE_EP, DAT_INVALID_HANDLE_IA, DAT_INVALID_HANDLE_PZ, DAT_NOT_IMPLEMENTED,
};
use datcore::endpoint::Endpoint;
use datcore::handle::{self, DatObject};
use datcore::ia::InterfaceAdapter;
use datcore::pz::ProtectionZone;
use datcore::{DatError, DatResult};

/// `DAT_INVALID_HANDLE` for `handle` unless it is a live `T`, else `DAT_NOT_IMPLEMENTED`.
fn not_implemented_for<T: DatObject>(handle: DAT_HANDLE, invalid: u32) -> DatResult<()> {
    handle::get_ptr::<T>(handle, invalid)?;
    Err(DatError(DAT_NOT_IMPLEMENTED))
}

pub unsafe extern "C" fn csp_create(
    ia_handle: DAT_IA_HANDLE,
    _comm: *mut DAT_COMM,
    _address: DAT_IA_ADDRESS_PTR,
    _evd_handle: DAT_EVD_HANDLE,
    _csp_handle: *mut DAT_CSP_HANDLE,
) -> DAT_RETURN {
    boundary("DAT_CSP_CREATE", || not_implemented_for::<InterfaceAdapter>(ia_handle, DAT_INVALID_HANDLE_IA))
}

pub unsafe extern "C" fn csp_query(
    _csp_handle: DAT_CSP_HANDLE,
    _mask: DAT_CSP_PARAM_MASK,
    _param: *mut DAT_CSP_PARAM,
) -> DAT_RETURN {
    boundary("DAT_CSP_QUERY", || Err(DatError::invalid_handle(crate::convert::INVALID_HANDLE_CSP)))
}

pub unsafe extern "C" fn csp_free(_csp_handle: DAT_CSP_HANDLE) -> DAT_RETURN {
    boundary("DAT_CSP_FREE", || Err(DatError::invalid_handle(crate::convert::INVALID_HANDLE_CSP)))
}

pub unsafe extern "C" fn ep_common_connect(
    ep_handle: DAT_EP_HANDLE,
    _remote_address: DAT_IA_ADDRESS_PTR,
    _timeout: DAT_TIMEOUT,
    _private_data_size: DAT_COUNT,
    _private_data: DAT_PVOID,
) -> DAT_RETURN {
    boundary("DAT_EP_COMMON_CONNECT", || not_implemented_for::<Endpoint>(ep_handle, DAT_INVALID_HANDLE_EP))
}

pub unsafe extern "C" fn rmr_create_for_ep(pz_handle: DAT_PZ_HANDLE, _rmr_handle: *mut DAT_RMR_HANDLE) -> DAT_RETURN {
    boundary("DAT_RMR_CREATE_FOR_EP", || not_implemented_for::<ProtectionZone>(pz_handle, DAT_INVALID_HANDLE_PZ))
}

pub unsafe extern "C" fn ep_post_send_with_invalidate(
    ep_handle: DAT_EP_HANDLE,
    _num_segments: DAT_COUNT,
    _local_iov: *mut DAT_LMR_TRIPLET,
    _user_cookie: DAT_DTO_COOKIE,
    _completion_flags: DAT_COMPLETION_FLAGS,
    _invalidate_flag: DAT_BOOLEAN,
    _rmr_context: DAT_RMR_CONTEXT,
) -> DAT_RETURN {
    boundary("DAT_EP_POST_SEND_WITH_INVALIDATE", || not_implemented_for::<Endpoint>(ep_handle, DAT_INVALID_HANDLE_EP))
}

pub unsafe extern "C" fn ep_post_rdma_read_to_rmr(
    ep_handle: DAT_EP_HANDLE,
    _local: *const DAT_RMR_TRIPLET,
    _user_cookie: DAT_DTO_COOKIE,
    _remote: *const DAT_RMR_TRIPLET,
    _completion_flags: DAT_COMPLETION_FLAGS,
) -> DAT_RETURN {
    boundary("DAT_EP_POST_RDMA_READ_TO_RMR", || not_implemented_for::<Endpoint>(ep_handle, DAT_INVALID_HANDLE_EP))
}

pub unsafe extern "C" fn cno_fd_create(
    ia_handle: DAT_IA_HANDLE,
    _fd: *mut DAT_FD,
    _cno_handle: *mut DAT_CNO_HANDLE,
) -> DAT_RETURN {
    boundary("DAT_CNO_FD_CREATE", || not_implemented_for::<InterfaceAdapter>(ia_handle, DAT_INVALID_HANDLE_IA))
}

pub unsafe extern "C" fn cno_trigger(cno_handle: DAT_CNO_HANDLE, _evd_handle: *mut DAT_EVD_HANDLE) -> DAT_RETURN {
    boundary("DAT_CNO_TRIGGER", || not_implemented_for::<ConsumerNotifier>(cno_handle, DAT_INVALID_HANDLE_CNO))
}

pub unsafe extern "C" fn ia_ha_related(
    ia_handle: DAT_IA_HANDLE,
    _name: DAT_NAME_PTR,
    _answer: *mut DAT_BOOLEAN,
) -> DAT_RETURN {
    boundary("DAT_IA_HA_RELATED", || not_implemented_for::<InterfaceAdapter>(ia_handle, DAT_INVALID_HANDLE_IA))
}
