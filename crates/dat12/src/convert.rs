//! Conversions between the core's native types and DAT 1.2 C structs.

use crate::abi::*;
use datcore::endpoint::EpAttr;
use datcore::event::{Event, EventData};

/// A core event as a DAT 1.2 `DAT_EVENT`.
pub fn event(ev: &Event) -> DAT_EVENT {
    // SAFETY: DAT_EVENT is plain old data; all-zero is a valid value.
    let mut out: DAT_EVENT = unsafe { std::mem::zeroed() };
    out.event_number = ev.number as _;
    out.evd_handle = ev.evd.as_ptr();
    match ev.data {
        EventData::Dto { ep, cookie, status, length, ext: _ } => {
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
