//! Endpoint exports: create, query, modify, connect, disconnect, post, status, free.

use crate::abi::*;
use crate::convert::{seg_len, with_sges};
use crate::ffi::{h, input, out, slice};
use crate::ia::ia_of;
use datcore::codes::{
    DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNSUPPORTED, DAT_INVALID_HANDLE_EP, DAT_INVALID_HANDLE_SRQ,
};
use datcore::endpoint::{self, Endpoint, EpAttr, EpCreate, EpModify, PostKind, CONNECT_EVD, RECV_EVD, REQUEST_EVD};
use datcore::handle;
use datcore::provider::{Rdma, Sge};
use datcore::{DatError, DatResult};

pub fn ep_of(p: DAT_EP_HANDLE) -> DatResult<handle::Ref<Endpoint>> {
    handle::get_ptr::<Endpoint>(p, DAT_INVALID_HANDLE_EP)
}

/// A C `DAT_EP_ATTR` as core attributes (DAT 2.0's sizes are 32-bit, DAT 1.2's 64-bit: the
/// `u64::from` converts in one face only).
#[allow(clippy::useless_conversion)]
fn ep_attr_in(a: &DAT_EP_ATTR) -> EpAttr {
    EpAttr {
        service_type: crate::convert::service_type_in(a.service_type),
        max_message_size: u64::from(a.max_message_size),
        max_rdma_size: u64::from(a.max_rdma_size),
        qos: a.qos,
        recv_completion_flags: a.recv_completion_flags,
        request_completion_flags: a.request_completion_flags,
        max_recv_dtos: a.max_recv_dtos,
        max_request_dtos: a.max_request_dtos,
        max_recv_iov: a.max_recv_iov,
        max_request_iov: a.max_request_iov,
        max_rdma_read_in: a.max_rdma_read_in,
        max_rdma_read_out: a.max_rdma_read_out,
        srq_soft_hw: a.srq_soft_hw,
        max_rdma_read_iov: a.max_rdma_read_iov,
        max_rdma_write_iov: a.max_rdma_write_iov,
    }
}

/// Core attributes as a C `DAT_EP_ATTR` (no transport- or provider-specific attributes).
fn ep_attr_out(a: &EpAttr) -> DAT_EP_ATTR {
    DAT_EP_ATTR {
        service_type: a.service_type as _,
        max_message_size: seg_len(a.max_message_size),
        max_rdma_size: seg_len(a.max_rdma_size),
        qos: a.qos as _,
        recv_completion_flags: a.recv_completion_flags as _,
        request_completion_flags: a.request_completion_flags as _,
        max_recv_dtos: a.max_recv_dtos,
        max_request_dtos: a.max_request_dtos,
        max_recv_iov: a.max_recv_iov,
        max_request_iov: a.max_request_iov,
        max_rdma_read_in: a.max_rdma_read_in,
        max_rdma_read_out: a.max_rdma_read_out,
        srq_soft_hw: a.srq_soft_hw,
        max_rdma_read_iov: a.max_rdma_read_iov,
        max_rdma_write_iov: a.max_rdma_write_iov,
        ep_transport_specific_count: 0,
        ep_transport_specific: std::ptr::null_mut(),
        ep_provider_specific_count: 0,
        ep_provider_specific: std::ptr::null_mut(),
    }
}

/// Reads an optional `DAT_EP_ATTR`.
unsafe fn attr_arg(p: *const DAT_EP_ATTR) -> Option<EpAttr> {
    // SAFETY: a non-NULL pointer from the consumer points to a readable DAT_EP_ATTR.
    unsafe { p.as_ref() }.map(ep_attr_in)
}

/// Creates an EP. Errors: `DAT_INVALID_HANDLE|IA`, `|PZ`, `|EVD_RECV`, `|EVD_REQUEST`,
/// `|EVD_CONN` (also for an EVD without the needed event flag), `DAT_INVALID_PARAMETER|ARG6`
/// (attributes beyond the IA's limits), `|ARG7` (ep_handle NULL).
#[no_mangle]
pub unsafe extern "C" fn dat_ep_create(
    ia_handle: DAT_IA_HANDLE,
    pz_handle: DAT_PZ_HANDLE,
    recv_evd_handle: DAT_EVD_HANDLE,
    request_evd_handle: DAT_EVD_HANDLE,
    connect_evd_handle: DAT_EVD_HANDLE,
    ep_attributes: *const DAT_EP_ATTR,
    ep_handle: *mut DAT_EP_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_create", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ia_handle,
            ep_create_func,
            (ia_handle, pz_handle, recv_evd_handle, request_evd_handle, connect_evd_handle, ep_attributes, ep_handle)
        ) {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(ep_handle, 7)? };
        let c = EpCreate {
            pz: h(pz_handle),
            recv_evd: h(recv_evd_handle),
            request_evd: h(request_evd_handle),
            connect_evd: h(connect_evd_handle),
            srq: datcore::handle::Handle::NULL,
            // SAFETY: optional attributes from the consumer.
            attr: unsafe { attr_arg(ep_attributes) },
        };
        *slot = Endpoint::create(&ia, &c)?.0.as_ptr();
        Ok(())
    })
}

/// Creates an EP whose receives come from an SRQ. Errors as `dat_ep_create`, plus
/// `DAT_INVALID_HANDLE|SRQ`; attributes are ARG7 and the out-pointer ARG8.
#[no_mangle]
pub unsafe extern "C" fn dat_ep_create_with_srq(
    ia_handle: DAT_IA_HANDLE,
    pz_handle: DAT_PZ_HANDLE,
    recv_evd_handle: DAT_EVD_HANDLE,
    request_evd_handle: DAT_EVD_HANDLE,
    connect_evd_handle: DAT_EVD_HANDLE,
    srq_handle: DAT_SRQ_HANDLE,
    ep_attributes: *const DAT_EP_ATTR,
    ep_handle: *mut DAT_EP_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_create_with_srq", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ia_handle,
            ep_create_with_srq_func,
            (
                ia_handle,
                pz_handle,
                recv_evd_handle,
                request_evd_handle,
                connect_evd_handle,
                srq_handle,
                ep_attributes,
                ep_handle
            )
        ) {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        if srq_handle.is_null() {
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_SRQ));
        }
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(ep_handle, 8)? };
        let c = EpCreate {
            pz: h(pz_handle),
            recv_evd: h(recv_evd_handle),
            request_evd: h(request_evd_handle),
            connect_evd: h(connect_evd_handle),
            srq: h(srq_handle),
            // SAFETY: optional attributes from the consumer.
            attr: unsafe { attr_arg(ep_attributes) },
        };
        *slot = Endpoint::create(&ia, &c)?.0.as_ptr();
        Ok(())
    })
}

/// Queries an EP (all fields are filled). Errors: `DAT_INVALID_HANDLE|EP`,
/// `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_ep_query(
    ep_handle: DAT_EP_HANDLE,
    ep_param_mask: DAT_EP_PARAM_MASK,
    ep_param: *mut DAT_EP_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(ep_handle, ep_query_func, (ep_handle, ep_param_mask, ep_param)) {
            return crate::registry::ret(r);
        }
        let _ = ep_param_mask;
        let ep = ep_of(ep_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let p = unsafe { out(ep_param, 3)? };
        // SAFETY: DAT_EP_PARAM is plain old data; all-zero is a valid value (DAT 2.0's `comm`
        // stays zero: no common-interface transport).
        *p = unsafe { std::mem::zeroed() };
        let (_, remote_ptr, remote_port) = ep.remote();
        p.ia_handle = ep.ia.handle().as_ptr();
        p.ep_state = ep.state() as _;
        p.local_ia_address_ptr = ep.ia.address_ptr() as DAT_IA_ADDRESS_PTR;
        p.local_port_qual = 0;
        p.remote_ia_address_ptr = remote_ptr as DAT_IA_ADDRESS_PTR;
        p.remote_port_qual = remote_port;
        let b = ep.binding();
        p.pz_handle = b.pz_handle.as_ptr();
        p.recv_evd_handle = b.evd_handles[RECV_EVD].as_ptr();
        p.request_evd_handle = b.evd_handles[REQUEST_EVD].as_ptr();
        p.connect_evd_handle = b.evd_handles[CONNECT_EVD].as_ptr();
        p.srq_handle = ep.srq_handle.as_ptr();
        p.ep_attr = ep_attr_out(&ep.attr());
        Ok(())
    })
}

/// Applies the attribute fields selected by `mask` from `from` onto `to`.
fn merge_attr(mask: u64, from: &EpAttr, to: &mut EpAttr) {
    let m = |bit: u64| mask & bit != 0;
    if m(DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE) {
        to.service_type = from.service_type;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE) {
        to.max_message_size = from.max_message_size;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE) {
        to.max_rdma_size = from.max_rdma_size;
    }
    if m(DAT_EP_FIELD_EP_ATTR_QOS) {
        to.qos = from.qos;
    }
    if m(DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS) {
        to.recv_completion_flags = from.recv_completion_flags;
    }
    if m(DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS) {
        to.request_completion_flags = from.request_completion_flags;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS) {
        to.max_recv_dtos = from.max_recv_dtos;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS) {
        to.max_request_dtos = from.max_request_dtos;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV) {
        to.max_recv_iov = from.max_recv_iov;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV) {
        to.max_request_iov = from.max_request_iov;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN) {
        to.max_rdma_read_in = from.max_rdma_read_in;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT) {
        to.max_rdma_read_out = from.max_rdma_read_out;
    }
    if m(DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW) {
        to.srq_soft_hw = from.srq_soft_hw;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV) {
        to.max_rdma_read_iov = from.max_rdma_read_iov;
    }
    if m(DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV) {
        to.max_rdma_write_iov = from.max_rdma_write_iov;
    }
}

/// Modifies an EP before it connects: attributes, PZ and EVDs (see `Endpoint::modify` for the
/// states each may change in). Errors: `DAT_INVALID_HANDLE|EP`, `DAT_INVALID_PARAMETER|ARG2`
/// (read-only fields: IA, state, addresses, ports), `|ARG3` (NULL or out-of-range values),
/// `DAT_INVALID_HANDLE|PZ`, `|EVD_RECV`, `|EVD_REQUEST`, `|EVD_CONN` (a handle that is not
/// one, or an EVD without the needed event flag), `DAT_INVALID_STATE`.
/// Changing the SRQ of an EP returns `DAT_NOT_IMPLEMENTED`.
#[no_mangle]
pub unsafe extern "C" fn dat_ep_modify(
    ep_handle: DAT_EP_HANDLE,
    ep_param_mask: DAT_EP_PARAM_MASK,
    ep_param: *const DAT_EP_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_modify", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(ep_handle, ep_modify_func, (ep_handle, ep_param_mask, ep_param)) {
            return crate::registry::ret(r);
        }
        let ep = ep_of(ep_handle)?;
        // SAFETY: readable parameters from the consumer.
        let p = unsafe { input(ep_param, 3)? };
        let mask = ep_param_mask;
        let read_only = DAT_EP_FIELD_IA_HANDLE
            | DAT_EP_FIELD_EP_STATE
            | DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR
            | DAT_EP_FIELD_LOCAL_PORT_QUAL
            | DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR
            | DAT_EP_FIELD_REMOTE_PORT_QUAL;
        if mask & read_only != 0 || mask & !DAT_EP_FIELD_ALL != 0 {
            return Err(DatError::invalid_arg(2));
        }
        if mask & DAT_EP_FIELD_SRQ_HANDLE != 0 {
            return Err(DatError::NOT_IMPLEMENTED);
        }
        let field = |bit: u64, value: DAT_HANDLE| (mask & bit != 0).then(|| h(value));
        let attr = (mask & DAT_EP_FIELD_EP_ATTR_ALL != 0).then(|| {
            let mut attr = ep.attr();
            merge_attr(mask, &ep_attr_in(&p.ep_attr), &mut attr);
            attr
        });
        ep.arc().modify(&EpModify {
            attr,
            pz: field(DAT_EP_FIELD_PZ_HANDLE, p.pz_handle),
            evds: [
                field(DAT_EP_FIELD_RECV_EVD_HANDLE, p.recv_evd_handle),
                field(DAT_EP_FIELD_REQUEST_EVD_HANDLE, p.request_evd_handle),
                field(DAT_EP_FIELD_CONNECT_EVD_HANDLE, p.connect_evd_handle),
            ],
        })
    })
}

/// Starts an active connection. Errors: `DAT_INVALID_HANDLE|EP`, `DAT_INVALID_PARAMETER|ARG2`
/// (address NULL), `|ARG5` (private data too long, or size > 0 with NULL data),
/// `DAT_INVALID_ADDRESS|DAT_INVALID_ADDRESS_UNSUPPORTED` (not IPv4/IPv6),
/// `DAT_INVALID_STATE` (EP not unconnected, or no connect EVD).
#[no_mangle]
pub unsafe extern "C" fn dat_ep_connect(
    ep_handle: DAT_EP_HANDLE,
    remote_ia_address: DAT_IA_ADDRESS_PTR,
    remote_conn_qual: DAT_CONN_QUAL,
    timeout: DAT_TIMEOUT,
    private_data_size: DAT_COUNT,
    private_data: DAT_PVOID,
    quality_of_service: DAT_QOS,
    connect_flags: DAT_CONNECT_FLAGS,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_connect", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ep_handle,
            ep_connect_func,
            (
                ep_handle,
                remote_ia_address,
                remote_conn_qual,
                timeout,
                private_data_size,
                private_data,
                quality_of_service,
                connect_flags
            )
        ) {
            return crate::registry::ret(r);
        }
        let ep = ep_of(ep_handle)?;
        if remote_ia_address.is_null() {
            return Err(DatError::invalid_arg(2));
        }
        // SAFETY: non-NULL address from the consumer, a sockaddr of its family.
        let remote = unsafe { datcore::ia::from_sockaddr(remote_ia_address as *const libc::sockaddr) }
            .ok_or(DatError::new(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNSUPPORTED))?;
        // SAFETY: the consumer passes `private_data_size` readable bytes.
        let pdata = unsafe { slice(private_data as *const u8, private_data_size as i64, 6, 5)? };
        if quality_of_service
            & !(DAT_QOS_BEST_EFFORT | DAT_QOS_HIGH_THROUGHPUT | DAT_QOS_LOW_LATENCY | DAT_QOS_ECONOMY | DAT_QOS_PREMIUM)
            != 0
        {
            return Err(DatError::invalid_arg(7));
        }
        if connect_flags & !DAT_CONNECT_MULTIPATH_FLAG != 0 {
            return Err(DatError::invalid_arg(8));
        }
        ep.connect(remote, remote_conn_qual, timeout, pdata)
    })
}

/// Connects to the same remote as an already connected EP. Errors: `DAT_INVALID_HANDLE|EP`
/// (either EP), `DAT_INVALID_PARAMETER|ARG4`, `DAT_INVALID_STATE` (the duplicate is not
/// connected, or `ep_handle` is not unconnected).
#[no_mangle]
pub unsafe extern "C" fn dat_ep_dup_connect(
    ep_handle: DAT_EP_HANDLE,
    ep_dup_handle: DAT_EP_HANDLE,
    timeout: DAT_TIMEOUT,
    private_data_size: DAT_COUNT,
    private_data: DAT_PVOID,
    quality_of_service: DAT_QOS,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_dup_connect", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ep_handle,
            ep_dup_connect_func,
            (ep_handle, ep_dup_handle, timeout, private_data_size, private_data, quality_of_service)
        ) {
            return crate::registry::ret(r);
        }
        let _ = quality_of_service;
        let ep = ep_of(ep_handle)?;
        let dup = ep_of(ep_dup_handle)?;
        let (remote, _, port) = dup.remote();
        let remote = match (dup.state(), remote) {
            (DAT_EP_STATE_CONNECTED, Some(r)) => r,
            (s, _) => return Err(DatError::invalid_state(endpoint::state_subtype(s))),
        };
        // SAFETY: the consumer passes `private_data_size` readable bytes.
        let pdata = unsafe { slice(private_data as *const u8, private_data_size as i64, 5, 4)? };
        ep.connect(remote, port, timeout, pdata)
    })
}

/// Disconnects. Errors: `DAT_INVALID_HANDLE|EP`, `DAT_INVALID_PARAMETER|ARG2` (flags),
/// `DAT_INVALID_STATE` (never connected).
#[no_mangle]
pub unsafe extern "C" fn dat_ep_disconnect(ep_handle: DAT_EP_HANDLE, close_flags: DAT_CLOSE_FLAGS) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_disconnect", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(ep_handle, ep_disconnect_func, (ep_handle, close_flags)) {
            return crate::registry::ret(r);
        }
        let ep = ep_of(ep_handle)?;
        let abrupt = match close_flags {
            DAT_CLOSE_ABRUPT_FLAG => true,
            DAT_CLOSE_GRACEFUL_FLAG => false,
            _ => return Err(DatError::invalid_arg(2)),
        };
        ep.disconnect(abrupt)
    })
}

/// An RDMA read or write: the EP is looked up once, then the remote triplet (ARG5), then the
/// local IOV. Inlined into each export, so `read` is a constant there; as `dat_ep_post_send`,
/// one mask tells a handle of ours, and any other value may be a third party's.
///
/// # Safety
/// `local_iov` points at `num_segments` readable triplets, `remote_iov` at a readable triplet
/// (either checked NULL).
#[inline(always)]
unsafe fn post_rdma(
    ep_handle: DAT_EP_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    cookie: DAT_DTO_COOKIE,
    remote_iov: *const DAT_RMR_TRIPLET,
    flags: DAT_COMPLETION_FLAGS,
    read: bool,
) -> DatResult<()> {
    if !h(ep_handle).is_ours() {
        // SAFETY: the consumer's arguments, passed on unchanged.
        return unsafe { post_rdma_not_ours(ep_handle, num_segments, local_iov, cookie, remote_iov, flags, read) };
    }
    let ep = ep_of(ep_handle)?;
    // SAFETY: remote triplet from the consumer.
    let (remote_addr, rkey) = unsafe { remote(remote_iov)? };
    let kind = if read { PostKind::RdmaRead } else { PostKind::RdmaWrite };
    // SAFETY: the cookie union is 8 bytes of plain data.
    let cookie = unsafe { cookie.as_64 };
    let rdma = Rdma { remote_addr, rkey, read };
    if !ep.segment_count_is_fast(kind, num_segments) {
        let ep = &*ep;
        let post = move |sges: &[Sge]| ep.post_rdma(sges, cookie, flags, rdma);
        // SAFETY: the consumer passes `num_segments` readable triplets.
        return unsafe { post_checked(ep, kind, num_segments, local_iov, post) };
    }
    // SAFETY: the consumer passes `num_segments` readable triplets.
    let iov = unsafe { slice(local_iov as *const DAT_LMR_TRIPLET, num_segments as i64, 3, 2)? };
    with_sges(
        iov,
        #[inline(always)]
        |sges| ep.post_rdma_fast(sges, cookie, flags, rdma),
    )
}

/// A post the fast path does not take ([`Endpoint::segment_count_is_fast`] said no): the
/// consumer's segment count checked against the EP's limit before its `count` triplets at
/// `iov` are read, then `post` (the post with every check) of them.
///
/// # Safety
/// `iov` is NULL or points at `count` readable triplets when `count` is within the limit.
#[cold]
#[inline(never)]
unsafe fn post_checked(
    ep: &Endpoint,
    kind: PostKind,
    count: DAT_COUNT,
    iov: *mut DAT_LMR_TRIPLET,
    post: impl FnOnce(&[Sge]) -> DatResult<()>,
) -> DatResult<()> {
    ep.check_segment_count(kind, count)?;
    // SAFETY: the count is within the limit; the caller's contract.
    let iov = unsafe { slice(iov as *const DAT_LMR_TRIPLET, count as i64, 3, 2)? };
    with_sges(iov, post)
}

/// [`post_rdma`] of a value that is not an EP handle of ours: a third-party provider's EP gets
/// its own RDMA read or write; anything else is `DAT_INVALID_HANDLE|EP`.
///
/// # Safety
/// As [`post_rdma`].
#[cold]
#[inline(never)]
unsafe fn post_rdma_not_ours(
    ep_handle: DAT_EP_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    cookie: DAT_DTO_COOKIE,
    remote_iov: *const DAT_RMR_TRIPLET,
    flags: DAT_COMPLETION_FLAGS,
    read: bool,
) -> DatResult<()> {
    let r = if read {
        crate::foreign_call!(
            ep_handle,
            ep_post_rdma_read_func,
            (ep_handle, num_segments, local_iov, cookie, remote_iov, flags)
        )
    } else {
        crate::foreign_call!(
            ep_handle,
            ep_post_rdma_write_func,
            (ep_handle, num_segments, local_iov, cookie, remote_iov, flags)
        )
    };
    match r {
        Some(r) => crate::registry::ret(r),
        None => Err(DatError::invalid_handle(DAT_INVALID_HANDLE_EP)),
    }
}

/// The remote side of an RDMA operation: target address and rmr_context.
///
/// The triplet's `segment_length` is not checked against the local IOV, as OFED's library
/// does not check it: shipped consumers advertise a short triplet and then move a longer
/// buffer within the same registered region. The target enforces the region itself (rkey,
/// bounds, rights) and an access outside it completes with `DAT_DTO_ERR_REMOTE_ACCESS`.
pub(crate) unsafe fn remote(p: *const DAT_RMR_TRIPLET) -> DatResult<(u64, u32)> {
    // SAFETY: readable triplet from the consumer.
    let r = unsafe { input(p, 5)? };
    Ok(crate::convert::rmr_target(r))
}

/// Posts a send. Errors: `DAT_INVALID_HANDLE|EP`, `DAT_INVALID_PARAMETER|ARG2` (too many
/// segments), `|ARG3` (NULL IOV), `|ARG5` (flags), `DAT_INVALID_STATE` (not connected),
/// `DAT_PROTECTION_VIOLATION` / `DAT_LENGTH_ERROR` (IOV outside its LMR),
/// `DAT_INSUFFICIENT_RESOURCES` (send queue full).
#[no_mangle]
pub unsafe extern "C" fn dat_ep_post_send(
    ep_handle: DAT_EP_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    user_cookie: DAT_DTO_COOKIE,
    completion_flags: DAT_COMPLETION_FLAGS,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_post_send", || -> DatResult<()> {
        // One mask tells a handle of ours; any other value may be a third party's.
        if !h(ep_handle).is_ours() {
            // SAFETY: the consumer's arguments, passed on unchanged.
            return unsafe { post_send_not_ours(ep_handle, num_segments, local_iov, user_cookie, completion_flags) };
        }
        let ep = ep_of(ep_handle)?;
        // SAFETY: the cookie union is 8 bytes of plain data.
        let cookie = unsafe { user_cookie.as_64 };
        if !ep.segment_count_is_fast(PostKind::Send, num_segments) {
            let (ep, flags) = (&*ep, completion_flags);
            let post = move |sges: &[Sge]| ep.post_send(sges, cookie, flags);
            // SAFETY: the consumer passes `num_segments` readable triplets.
            return unsafe { post_checked(ep, PostKind::Send, num_segments, local_iov, post) };
        }
        // SAFETY: the consumer passes `num_segments` readable triplets.
        let iov = unsafe { slice(local_iov as *const DAT_LMR_TRIPLET, num_segments as i64, 3, 2)? };
        with_sges(
            iov,
            #[inline(always)]
            |sges| ep.post_send_fast(sges, cookie, completion_flags),
        )
    })
}

/// [`dat_ep_post_send`] of a value that is not an EP handle of ours: a third-party provider's
/// EP gets its own post; anything else is `DAT_INVALID_HANDLE|EP`.
///
/// # Safety
/// As [`dat_ep_post_send`].
#[cold]
#[inline(never)]
unsafe fn post_send_not_ours(
    ep_handle: DAT_EP_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    user_cookie: DAT_DTO_COOKIE,
    completion_flags: DAT_COMPLETION_FLAGS,
) -> DatResult<()> {
    match crate::foreign_call!(
        ep_handle,
        ep_post_send_func,
        (ep_handle, num_segments, local_iov, user_cookie, completion_flags)
    ) {
        Some(r) => crate::registry::ret(r),
        None => Err(DatError::invalid_handle(DAT_INVALID_HANDLE_EP)),
    }
}

/// Posts a receive (allowed before the connection is up). Errors: `DAT_INVALID_HANDLE|EP`,
/// `DAT_INVALID_PARAMETER|ARG2/ARG3/ARG5`, `DAT_INVALID_STATE` (disconnected, or an SRQ EP),
/// `DAT_PROTECTION_VIOLATION`, `DAT_LENGTH_ERROR`, `DAT_INSUFFICIENT_RESOURCES`.
#[no_mangle]
pub unsafe extern "C" fn dat_ep_post_recv(
    ep_handle: DAT_EP_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    user_cookie: DAT_DTO_COOKIE,
    completion_flags: DAT_COMPLETION_FLAGS,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_post_recv", || -> DatResult<()> {
        // One mask tells a handle of ours; any other value may be a third party's.
        if !h(ep_handle).is_ours() {
            // SAFETY: the consumer's arguments, passed on unchanged.
            return unsafe { post_recv_not_ours(ep_handle, num_segments, local_iov, user_cookie, completion_flags) };
        }
        let ep = ep_of(ep_handle)?;
        // SAFETY: the cookie union is 8 bytes of plain data.
        let cookie = unsafe { user_cookie.as_64 };
        if !ep.segment_count_is_fast(PostKind::Recv, num_segments) {
            let (ep, flags) = (&*ep, completion_flags);
            let post = move |sges: &[Sge]| ep.post_recv(sges, cookie, flags);
            // SAFETY: the consumer passes `num_segments` readable triplets.
            return unsafe { post_checked(ep, PostKind::Recv, num_segments, local_iov, post) };
        }
        // SAFETY: the consumer passes `num_segments` readable triplets.
        let iov = unsafe { slice(local_iov as *const DAT_LMR_TRIPLET, num_segments as i64, 3, 2)? };
        with_sges(
            iov,
            #[inline(always)]
            |sges| ep.post_recv_fast(sges, cookie, completion_flags),
        )
    })
}

/// [`dat_ep_post_recv`] of a value that is not an EP handle of ours: a third-party provider's
/// EP gets its own post; anything else is `DAT_INVALID_HANDLE|EP`.
///
/// # Safety
/// As [`dat_ep_post_recv`].
#[cold]
#[inline(never)]
unsafe fn post_recv_not_ours(
    ep_handle: DAT_EP_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    user_cookie: DAT_DTO_COOKIE,
    completion_flags: DAT_COMPLETION_FLAGS,
) -> DatResult<()> {
    match crate::foreign_call!(
        ep_handle,
        ep_post_recv_func,
        (ep_handle, num_segments, local_iov, user_cookie, completion_flags)
    ) {
        Some(r) => crate::registry::ret(r),
        None => Err(DatError::invalid_handle(DAT_INVALID_HANDLE_EP)),
    }
}

/// Posts an RDMA read into the local IOV. Errors as `dat_ep_post_send`, plus
/// `DAT_INVALID_PARAMETER|ARG5` (remote triplet NULL) and `|ARG6` (flags). The remote
/// triplet's `segment_length` is not compared with the local IOV (see [`remote`]).
#[no_mangle]
pub unsafe extern "C" fn dat_ep_post_rdma_read(
    ep_handle: DAT_EP_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    user_cookie: DAT_DTO_COOKIE,
    remote_iov: *const DAT_RMR_TRIPLET,
    completion_flags: DAT_COMPLETION_FLAGS,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_post_rdma_read", || -> DatResult<()> {
        // SAFETY: arguments straight from the consumer, validated inside.
        unsafe { post_rdma(ep_handle, num_segments, local_iov, user_cookie, remote_iov, completion_flags, true) }
    })
}

/// Posts an RDMA write from the local IOV. Errors as `dat_ep_post_rdma_read`.
#[no_mangle]
pub unsafe extern "C" fn dat_ep_post_rdma_write(
    ep_handle: DAT_EP_HANDLE,
    num_segments: DAT_COUNT,
    local_iov: *mut DAT_LMR_TRIPLET,
    user_cookie: DAT_DTO_COOKIE,
    remote_iov: *const DAT_RMR_TRIPLET,
    completion_flags: DAT_COMPLETION_FLAGS,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_post_rdma_write", || -> DatResult<()> {
        // SAFETY: arguments straight from the consumer, validated inside.
        unsafe { post_rdma(ep_handle, num_segments, local_iov, user_cookie, remote_iov, completion_flags, false) }
    })
}

/// EP state and whether its queues are idle. Errors: `DAT_INVALID_HANDLE|EP`,
/// `DAT_INVALID_PARAMETER|ARG2` (state NULL); the idle pointers are optional.
#[no_mangle]
pub unsafe extern "C" fn dat_ep_get_status(
    ep_handle: DAT_EP_HANDLE,
    ep_state: *mut DAT_EP_STATE,
    recv_idle: *mut DAT_BOOLEAN,
    request_idle: *mut DAT_BOOLEAN,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_get_status", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(ep_handle, ep_get_status_func, (ep_handle, ep_state, recv_idle, request_idle))
        {
            return crate::registry::ret(r);
        }
        let ep = ep_of(ep_handle)?;
        let (r, q) = ep.idle();
        // SAFETY: optional writable out-pointers from the consumer. ep_state may be NULL too, as
        // OFED's library allows: Debian's dtestx asks only for the idle flags.
        unsafe {
            crate::ffi::write_opt(ep_state, ep.state() as _);
            crate::ffi::write_opt(recv_idle, r as u32 as DAT_BOOLEAN);
            crate::ffi::write_opt(request_idle, q as u32 as DAT_BOOLEAN);
        }
        Ok(())
    })
}

/// Reports the receives allocated to the EP and not completed, and their span (either output
/// may be NULL). Errors: `DAT_INVALID_HANDLE|EP`.
#[no_mangle]
pub unsafe extern "C" fn dat_ep_recv_query(
    ep_handle: DAT_EP_HANDLE,
    nbufs_allocated: *mut DAT_COUNT,
    bufs_alloc_span: *mut DAT_COUNT,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_recv_query", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(ep_handle, ep_recv_query_func, (ep_handle, nbufs_allocated, bufs_alloc_span))
        {
            return crate::registry::ret(r);
        }
        let (allocated, span) = ep_of(ep_handle)?.recv_query();
        for (p, v) in [(nbufs_allocated, allocated), (bufs_alloc_span, span)] {
            if !p.is_null() {
                // SAFETY: a non-NULL output pointer from the consumer is writable.
                unsafe { *p = v as DAT_COUNT };
            }
        }
        Ok(())
    })
}

/// Sets the soft and hard high watermarks on receives in progress. Errors:
/// `DAT_INVALID_HANDLE|EP`, `DAT_INVALID_PARAMETER|ARG2/ARG3` (below `DAT_WATERMARK_INFINITE`),
/// `DAT_MODEL_NOT_SUPPORTED` (a finite hard watermark).
#[no_mangle]
pub unsafe extern "C" fn dat_ep_set_watermark(
    ep_handle: DAT_EP_HANDLE,
    soft_high_watermark: DAT_COUNT,
    hard_high_watermark: DAT_COUNT,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_set_watermark", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ep_handle,
            ep_set_watermark_func,
            (ep_handle, soft_high_watermark, hard_high_watermark)
        ) {
            return crate::registry::ret(r);
        }
        ep_of(ep_handle)?.set_watermark(soft_high_watermark, hard_high_watermark)
    })
}

/// Returns a disconnected EP to unconnected. Errors: `DAT_INVALID_HANDLE|EP`,
/// `DAT_INVALID_STATE` (connected or connecting).
#[no_mangle]
pub unsafe extern "C" fn dat_ep_reset(ep_handle: DAT_EP_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_reset", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(ep_handle, ep_reset_func, (ep_handle)) {
            return crate::registry::ret(r);
        }
        ep_of(ep_handle)?.arc().reset()
    })
}

/// Frees an EP, disconnecting it abruptly if needed; posted work is flushed.
/// Errors: `DAT_INVALID_HANDLE|EP`.
#[no_mangle]
pub unsafe extern "C" fn dat_ep_free(ep_handle: DAT_EP_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_ep_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(ep_handle, ep_free_func, (ep_handle)) {
            return crate::registry::ret(r);
        }
        endpoint::free(h(ep_handle))
    })
}
