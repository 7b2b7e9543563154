//! Shared receive queue exports.

use crate::abi::*;
use crate::convert::with_sges;
use crate::ffi::{h, input, out, slice};
use crate::ia::ia_of;
use datcore::codes::DAT_INVALID_HANDLE_SRQ;
use datcore::handle;
use datcore::srq::{self, SharedReceiveQueue};
use datcore::DatResult;

fn srq_of(p: DAT_SRQ_HANDLE) -> DatResult<handle::Ref<SharedReceiveQueue>> {
    handle::get_ptr::<SharedReceiveQueue>(p, DAT_INVALID_HANDLE_SRQ)
}

/// Creates an SRQ. Errors: `DAT_INVALID_HANDLE|IA`, `|PZ`, `DAT_INVALID_PARAMETER|ARG3`
/// (attributes NULL or beyond the IA's limits), `|ARG4` (srq_handle NULL).
#[no_mangle]
pub unsafe extern "C" fn dat_srq_create(
    ia_handle: DAT_IA_HANDLE,
    pz_handle: DAT_PZ_HANDLE,
    srq_attr: *mut DAT_SRQ_ATTR,
    srq_handle: *mut DAT_SRQ_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_srq_create", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(ia_handle, srq_create_func, (ia_handle, pz_handle, srq_attr, srq_handle))
        {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        // SAFETY: readable attributes and writable out-pointer from the consumer.
        let (a, slot) = unsafe { (input(srq_attr as *const DAT_SRQ_ATTR, 3)?, out(srq_handle, 4)?) };
        *slot =
            SharedReceiveQueue::create(&ia, h(pz_handle), a.max_recv_dtos, a.max_recv_iov, a.low_watermark)?.as_ptr();
        Ok(())
    })
}

/// Queries an SRQ. Errors: `DAT_INVALID_HANDLE|SRQ`, `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_srq_query(
    srq_handle: DAT_SRQ_HANDLE,
    srq_param_mask: DAT_SRQ_PARAM_MASK,
    srq_param: *mut DAT_SRQ_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_srq_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(srq_handle, srq_query_func, (srq_handle, srq_param_mask, srq_param)) {
            return crate::registry::ret(r);
        }
        let _ = srq_param_mask;
        let s = srq_of(srq_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let o = unsafe { out(srq_param, 3)? };
        let l = s.limits();
        let posted = s.srq.posted();
        o.ia_handle = s.ia.handle().as_ptr();
        o.srq_state = crate::convert::srq_state(datcore::codes::DAT_SRQ_STATE_OPERATIONAL);
        o.pz_handle = s.pz_handle.as_ptr();
        o.max_recv_dtos = l.max_recv_dtos as DAT_COUNT;
        o.max_recv_iov = s.max_recv_iov as DAT_COUNT;
        o.low_watermark = l.low_watermark as DAT_COUNT;
        o.available_dto_count = posted as DAT_COUNT;
        o.outstanding_dto_count = posted as DAT_COUNT;
        Ok(())
    })
}

/// Posts a receive to the SRQ. Errors: `DAT_INVALID_HANDLE|SRQ`,
/// `DAT_INVALID_PARAMETER|ARG2/ARG3`, `DAT_PROTECTION_VIOLATION`, `DAT_LENGTH_ERROR`,
/// `DAT_INSUFFICIENT_RESOURCES` (SRQ full).
#[no_mangle]
pub unsafe extern "C" fn dat_srq_post_recv(
    srq_handle: DAT_SRQ_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    user_cookie: DAT_DTO_COOKIE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_srq_post_recv", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(srq_handle, srq_post_recv_func, (srq_handle, num_segments, local_iov, user_cookie))
        {
            return crate::registry::ret(r);
        }
        let s = srq_of(srq_handle)?;
        s.check_segment_count(num_segments)?;
        // SAFETY: the consumer passes `num_segments` readable triplets.
        let iov = unsafe { slice(local_iov as *const DAT_LMR_TRIPLET, num_segments as i64, 3, 2)? };
        // SAFETY: the cookie union is 8 bytes of plain data.
        let cookie = unsafe { user_cookie.as_64 };
        with_sges(iov, |sges| s.post_recv(sges, cookie))
    })
}

/// Resizes an SRQ. Errors: `DAT_INVALID_HANDLE|SRQ`, `DAT_INVALID_PARAMETER|ARG2`,
/// `DAT_INVALID_STATE` (below the number posted).
#[no_mangle]
pub unsafe extern "C" fn dat_srq_resize(srq_handle: DAT_SRQ_HANDLE, srq_max_recv_dto: DAT_COUNT) -> DAT_RETURN {
    crate::ffi::boundary("dat_srq_resize", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(srq_handle, srq_resize_func, (srq_handle, srq_max_recv_dto)) {
            return crate::registry::ret(r);
        }
        srq_of(srq_handle)?.resize(srq_max_recv_dto)
    })
}

/// Sets the low watermark. Errors: `DAT_INVALID_HANDLE|SRQ`, `DAT_INVALID_PARAMETER|ARG2`.
#[no_mangle]
pub unsafe extern "C" fn dat_srq_set_lw(srq_handle: DAT_SRQ_HANDLE, low_watermark: DAT_COUNT) -> DAT_RETURN {
    crate::ffi::boundary("dat_srq_set_lw", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(srq_handle, srq_set_lw_func, (srq_handle, low_watermark)) {
            return crate::registry::ret(r);
        }
        srq_of(srq_handle)?.set_low_watermark(low_watermark)
    })
}

/// Frees an SRQ. Errors: `DAT_INVALID_HANDLE|SRQ`, `DAT_INVALID_STATE|SRQ_IN_USE`.
#[no_mangle]
pub unsafe extern "C" fn dat_srq_free(srq_handle: DAT_SRQ_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_srq_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(srq_handle, srq_free_func, (srq_handle)) {
            return crate::registry::ret(r);
        }
        srq::free(h(srq_handle))
    })
}
