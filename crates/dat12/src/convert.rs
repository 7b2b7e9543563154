//! Conversions between the core's native types and DAT 1.2 C structs: what the shared face
//! modules (`crates/face/`) call where the two ABIs differ. In DAT 1.2 most are identities,
//! since the core speaks DAT 1.2's numbering and its scatter/gather layout.

use crate::abi::*;
use datcore::endpoint::EpAttr;
use datcore::event::{Event, EventData};
use datcore::ia::InterfaceAdapter;
use datcore::provider::Sge;
use datcore::DatResult;

/// A core return code in this face's numbering: the core numbers codes as DAT 1.2 does.
#[inline]
pub const fn code_out(core: u32) -> u32 {
    core
}

/// A return code of this face's numbering (from a consumer or a third-party provider) in the
/// core's numbering.
#[inline]
pub const fn code_in(face: u32) -> u32 {
    face
}

/// Return-code names of this face's abi.rs that the core has no code for (none in DAT 1.2).
#[cfg(test)]
pub const ONLY_IN_THIS_FACE: &[&str] = &[];

/// A length as this face's structs hold it (`DAT_VLEN`).
#[inline]
pub fn seg_len(v: u64) -> DAT_VLEN {
    v
}

/// Runs `f` on consumer triplets as core scatter/gather elements: DAT 1.2 triplets have the
/// core's layout, so the slice is passed through as it is.
#[inline]
pub fn with_sges<R>(t: &[DAT_LMR_TRIPLET], f: impl FnOnce(&[Sge]) -> DatResult<R>) -> DatResult<R> {
    const _: () = assert!(std::mem::size_of::<DAT_LMR_TRIPLET>() == std::mem::size_of::<Sge>());
    const _: () = assert!(std::mem::align_of::<DAT_LMR_TRIPLET>() == std::mem::align_of::<Sge>());
    // SAFETY: both are repr(C) {u32, u32, u64, u64} with equal size and alignment (checked
    // above; field order checked by the layout tests), so the slices are interchangeable.
    f(unsafe { std::slice::from_raw_parts(t.as_ptr() as *const Sge, t.len()) })
}

/// A core scatter/gather element as a consumer triplet.
pub fn lmr_triplet(s: &Sge) -> DAT_LMR_TRIPLET {
    DAT_LMR_TRIPLET { lmr_context: s.lkey, pad: 0, virtual_address: s.addr, segment_length: s.length }
}

/// The remote side of an RDMA triplet: (target address, rmr_context).
#[inline]
pub fn rmr_target(t: &DAT_RMR_TRIPLET) -> (u64, u32) {
    (t.target_address, t.rmr_context)
}

/// A core `DAT_SRQ_STATE` (DAT 1.2 values) as this face numbers it.
pub fn srq_state(core: u32) -> DAT_SRQ_STATE {
    core
}

/// The `DAT_CNO_PARAM_MASK` bits `dat_cno_query` accepts.
pub const CNO_FIELDS: DAT_CNO_PARAM_MASK = DAT_CNO_FIELD_ALL;

/// Stores a CNO's proxy agent in a `DAT_CNO_PARAM`.
pub fn set_cno_agent(p: &mut DAT_CNO_PARAM, agent: DAT_OS_WAIT_PROXY_AGENT) {
    p.agent = agent;
}

/// `DAT_IA_ATTR` fields only this face has: none in DAT 1.2.
pub fn fill_ia_attr_face(_ia: &InterfaceAdapter, _a: &mut DAT_IA_ATTR) {}

/// `DAT_PROVIDER_ATTR` fields only this face has: none in DAT 1.2.
pub fn fill_provider_attr_face(_ia: &InterfaceAdapter, _p: &mut DAT_PROVIDER_ATTR) {}

/// A core event as a DAT 1.2 `DAT_EVENT`.
pub fn event(ev: &Event) -> DAT_EVENT {
    // SAFETY: DAT_EVENT is plain old data; all-zero is a valid value.
    let mut out: DAT_EVENT = unsafe { std::mem::zeroed() };
    out.event_number = ev.number as _;
    out.evd_handle = ev.evd.as_ptr();
    match ev.data {
        EventData::Dto { ep, cookie, status, length, op: _ } => {
            out.event_data.dto_completion_event_data = DAT_DTO_COMPLETION_EVENT_DATA {
                ep_handle: ep.as_ptr(),
                user_cookie: DAT_CONTEXT { as_64: cookie },
                status: status as _,
                transfered_length: length,
            }
        }
        EventData::RmrBind { rmr, cookie, status } => {
            out.event_data.rmr_completion_event_data = DAT_RMR_BIND_COMPLETION_EVENT_DATA {
                rmr_handle: rmr.as_ptr(),
                user_cookie: DAT_CONTEXT { as_64: cookie },
                status: status as _,
            }
        }
        EventData::ConnectionRequest { sp, local_address, conn_qual, cr } => {
            out.event_data.cr_arrival_event_data = DAT_CR_ARRIVAL_EVENT_DATA {
                sp_handle: DAT_SP_HANDLE { psp_handle: sp.as_ptr() },
                local_ia_address_ptr: local_address as DAT_IA_ADDRESS_PTR,
                conn_qual,
                cr_handle: cr.as_ptr(),
            }
        }
        EventData::Connection { ep, private_data_size, private_data } => {
            out.event_data.connect_event_data = DAT_CONNECTION_EVENT_DATA {
                ep_handle: ep.as_ptr(),
                private_data_size,
                private_data: private_data as DAT_PVOID,
            }
        }
        EventData::AsyncError { handle, reason } => {
            out.event_data.asynch_error_event_data =
                DAT_ASYNCH_ERROR_EVENT_DATA { dat_handle: handle.as_ptr(), reason: reason as _ }
        }
        EventData::Software { pointer } => {
            out.event_data.software_event_data = DAT_SOFTWARE_EVENT_DATA { pointer: pointer as usize as DAT_PVOID }
        }
    }
    out
}

/// A C `DAT_EP_ATTR` as core attributes.
pub fn ep_attr_in(a: &DAT_EP_ATTR) -> EpAttr {
    EpAttr {
        service_type: a.service_type,
        max_message_size: a.max_message_size,
        max_rdma_size: a.max_rdma_size,
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
pub fn ep_attr_out(a: &EpAttr) -> DAT_EP_ATTR {
    DAT_EP_ATTR {
        service_type: a.service_type as _,
        max_message_size: a.max_message_size,
        max_rdma_size: a.max_rdma_size,
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

/// Copies a Rust string into a fixed C char array, NUL-terminated and truncated.
pub fn fill_name(dst: &mut [libc::c_char], s: &str) {
    let n = s.len().min(dst.len().saturating_sub(1));
    for (d, b) in dst.iter_mut().zip(s.as_bytes()[..n].iter()) {
        *d = *b as libc::c_char;
    }
    if let Some(d) = dst.get_mut(n) {
        *d = 0;
    }
}
