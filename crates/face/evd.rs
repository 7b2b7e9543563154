//! EVD and CNO exports.

use crate::abi::*;
use crate::ffi::{h, input, out};
use crate::ia::ia_of;
use datcore::cno::{self, ConsumerNotifier, ProxyAgent};
use datcore::codes::{DAT_INVALID_HANDLE_CNO, DAT_INVALID_HANDLE_EVD_REQUEST};
use datcore::evd::{self, EventDispatcher};
use datcore::event::{Event, EventData};
use datcore::handle;
use datcore::ib_ext;
use datcore::provider::WorkCompletion;
use datcore::{DatError, DatResult};
use std::sync::Arc;

/// EVD lookups report `DAT_INVALID_HANDLE_EVD_REQUEST`, as the reference libdat does.
fn evd_of(p: DAT_EVD_HANDLE) -> DatResult<handle::Ref<EventDispatcher>> {
    handle::get_ptr::<EventDispatcher>(p, DAT_INVALID_HANDLE_EVD_REQUEST)
}

fn cno_of(p: DAT_CNO_HANDLE) -> DatResult<Arc<ConsumerNotifier>> {
    handle::get_ptr::<ConsumerNotifier>(p, DAT_INVALID_HANDLE_CNO).map(|c| c.arc())
}

fn optional_cno(p: DAT_CNO_HANDLE) -> DatResult<Option<Arc<ConsumerNotifier>>> {
    if p.is_null() {
        Ok(None)
    } else {
        cno_of(p).map(Some)
    }
}

fn agent(a: &DAT_OS_WAIT_PROXY_AGENT) -> ProxyAgent {
    ProxyAgent { instance_data: a.instance_data as usize, func: a.proxy_agent_func.map_or(0, |f| f as usize) }
}

/// Writes `ev` into the consumer's event. A DTO completion (the data path) sets the event
/// number, EVD and its own union member only, as OFED's library leaves the rest of the event
/// alone; any other event is written whole, over zeroes, out of line ([`write_whole_event`]).
/// Inlined into the dequeue and the wait (a DTO completion is a few stores).
#[inline(always)]
fn write_event(out: &mut DAT_EVENT, ev: &Event) {
    if let EventData::Dto { ep, cookie, status, length, op, immed } = ev.data {
        out.event_number = ev.number as _;
        out.evd_handle = ev.evd.as_ptr();
        crate::convert::dto_event(out, ep, cookie, status, length, op, immed);
    } else {
        write_whole_event(out, ev);
    }
}

impl evd::EventSink for DAT_EVENT {
    #[inline(always)]
    fn write(&mut self, ev: &Event) {
        write_event(self, ev)
    }

    /// [`write_event`]'s DTO case, from the provider's completion itself.
    #[inline(always)]
    fn write_completion(&mut self, evd: handle::Handle, wc: &WorkCompletion) {
        self.event_number = DAT_DTO_COMPLETION_EVENT as _;
        self.evd_handle = evd.as_ptr();
        let status = datcore::event::dto_status(wc.status);
        crate::convert::dto_event(self, handle::Handle(wc.context), wc.wr_id, status, wc.byte_len, wc.opcode, wc.immed);
    }
}

/// Writes `ev` whole into the consumer's event: out of line, so that the DTO write stays small
/// enough to be inlined at each of its callers.
#[inline(never)]
fn write_whole_event(out: &mut DAT_EVENT, ev: &Event) {
    *out = c_event(ev);
}

/// A core event as this face's `DAT_EVENT` (48 bytes in DAT 1.2, 120 in DAT 2.0, whose
/// extension data only IB extension completions fill); the DTO and connection-request data
/// come from `convert`.
fn c_event(ev: &Event) -> DAT_EVENT {
    // SAFETY: DAT_EVENT is plain old data; all-zero is a valid value.
    let mut out: DAT_EVENT = unsafe { std::mem::zeroed() };
    out.event_number = ev.number as _;
    out.evd_handle = ev.evd.as_ptr();
    match ev.data {
        EventData::Dto { ep, cookie, status, length, op, immed } => {
            crate::convert::dto_event(&mut out, ep, cookie, status, length, op, immed)
        }
        EventData::RmrBind { rmr, cookie, status } => {
            out.event_data.rmr_completion_event_data = DAT_RMR_BIND_COMPLETION_EVENT_DATA {
                rmr_handle: rmr.as_ptr(),
                user_cookie: DAT_CONTEXT { as_64: cookie },
                status: status as _,
            }
        }
        EventData::ConnectionRequest { sp, local_address, conn_qual, cr } => {
            out.event_data.cr_arrival_event_data =
                crate::convert::cr_arrival(sp, local_address as DAT_IA_ADDRESS_PTR, conn_qual, cr);
            if ev.number == ib_ext::DAT_IB_UD_CONNECTION_REQUEST_EVENT {
                let request = ib_ext::DAT_IB_UD_CONNECT_REQUEST;
                crate::convert::ud_connection_extension(&mut out, request, handle::Handle::NULL, 0, None);
            }
        }
        EventData::Connection { ep, private_data_size, private_data } => {
            out.event_data.connect_event_data = DAT_CONNECTION_EVENT_DATA {
                ep_handle: ep.as_ptr(),
                private_data_size,
                private_data: private_data as DAT_PVOID,
            }
        }
        EventData::UdConnection { ep, private_data_size, private_data, ext_type, ah, qpn, remote } => {
            out.event_data.connect_event_data = DAT_CONNECTION_EVENT_DATA {
                ep_handle: ep.as_ptr(),
                private_data_size,
                private_data: private_data as DAT_PVOID,
            };
            crate::convert::ud_connection_extension(&mut out, ext_type, ah, qpn, remote);
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

/// Creates an EVD. Errors: `DAT_INVALID_HANDLE|IA`, `DAT_INVALID_HANDLE|CNO`,
/// `DAT_INVALID_PARAMETER|ARG2` (qlen <= 0 or above the IA's max_evd_qlen),
/// `DAT_INVALID_PARAMETER|ARG4` (no or unknown flags), `|ARG5` (evd_handle NULL).
#[no_mangle]
pub unsafe extern "C" fn dat_evd_create(
    ia_handle: DAT_IA_HANDLE,
    evd_min_qlen: DAT_COUNT,
    cno_handle: DAT_CNO_HANDLE,
    evd_flags: DAT_EVD_FLAGS,
    evd_handle: *mut DAT_EVD_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_create", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(
            ia_handle,
            evd_create_func,
            (ia_handle, evd_min_qlen, cno_handle, evd_flags, evd_handle)
        ) {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        let cno = optional_cno(cno_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(evd_handle, 5)? };
        let (eh, _) = EventDispatcher::create(&ia, evd_min_qlen, cno, evd_flags)?;
        *slot = eh.as_ptr();
        Ok(())
    })
}

/// Queries an EVD. Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`, `DAT_INVALID_PARAMETER|ARG2`
/// (unknown mask bits), `|ARG3` (evd_param NULL).
#[no_mangle]
pub unsafe extern "C" fn dat_evd_query(
    evd_handle: DAT_EVD_HANDLE,
    evd_param_mask: DAT_EVD_PARAM_MASK,
    evd_param: *mut DAT_EVD_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_query_func, (evd_handle, evd_param_mask, evd_param)) {
            return crate::registry::ret(r);
        }
        let e = evd_of(evd_handle)?;
        if evd_param_mask & !DAT_EVD_FIELD_ALL != 0 {
            return Err(DatError::invalid_arg(2));
        }
        // SAFETY: writable out-pointer from the consumer.
        let p = unsafe { out(evd_param, 3)? };
        p.ia_handle = e.ia.handle().as_ptr();
        p.evd_qlen = e.qlen() as DAT_COUNT;
        p.evd_state = e.state_bits() as _;
        p.cno_handle = e.cno().map_or(std::ptr::null_mut(), |c| cno_handle_of(&c));
        p.evd_flags = e.flags as _;
        Ok(())
    })
}

fn cno_handle_of(c: &Arc<ConsumerNotifier>) -> DAT_CNO_HANDLE {
    c.handle().as_ptr()
}

/// Attaches (or with NULL detaches) a CNO. Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`, `|CNO`.
#[no_mangle]
pub unsafe extern "C" fn dat_evd_modify_cno(evd_handle: DAT_EVD_HANDLE, cno_handle: DAT_CNO_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_modify_cno", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_modify_cno_func, (evd_handle, cno_handle)) {
            return crate::registry::ret(r);
        }
        let e = evd_of(evd_handle)?;
        e.set_cno(optional_cno(cno_handle)?);
        Ok(())
    })
}

/// Enables CNO notification. Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`.
#[no_mangle]
pub unsafe extern "C" fn dat_evd_enable(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_enable", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_enable_func, (evd_handle)) {
            return crate::registry::ret(r);
        }
        evd_of(evd_handle)?.set_enabled(true);
        Ok(())
    })
}

/// Disables CNO notification (events still queue). Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`.
#[no_mangle]
pub unsafe extern "C" fn dat_evd_disable(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_disable", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_disable_func, (evd_handle)) {
            return crate::registry::ret(r);
        }
        evd_of(evd_handle)?.set_enabled(false);
        Ok(())
    })
}

/// Makes waits fail with `DAT_INVALID_STATE` (current waiters return at once).
#[no_mangle]
pub unsafe extern "C" fn dat_evd_set_unwaitable(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_set_unwaitable", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_set_unwaitable_func, (evd_handle)) {
            return crate::registry::ret(r);
        }
        evd_of(evd_handle)?.set_waitable(false);
        Ok(())
    })
}

/// Makes the EVD waitable again.
#[no_mangle]
pub unsafe extern "C" fn dat_evd_clear_unwaitable(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_clear_unwaitable", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_clear_unwaitable_func, (evd_handle)) {
            return crate::registry::ret(r);
        }
        evd_of(evd_handle)?.set_waitable(true);
        Ok(())
    })
}

/// Waits for `threshold` events, returns the first. Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`,
/// `DAT_INVALID_PARAMETER|ARG3` (threshold out of range), `|ARG4`/`|ARG5` (NULL outputs),
/// `DAT_INVALID_STATE` (unwaitable, or another thread waits), `DAT_TIMEOUT_EXPIRED`.
#[no_mangle]
pub unsafe extern "C" fn dat_evd_wait(
    evd_handle: DAT_EVD_HANDLE,
    timeout: DAT_TIMEOUT,
    threshold: DAT_COUNT,
    event: *mut DAT_EVENT,
    n_more_events: *mut DAT_COUNT,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_wait", || -> DatResult<()> {
        if let Some(r) =
            crate::foreign_call!(evd_handle, evd_wait_func, (evd_handle, timeout, threshold, event, n_more_events))
        {
            return crate::registry::ret(r);
        }
        let e = evd_of(evd_handle)?;
        // SAFETY: writable out-pointers from the consumer.
        let (ev_out, more_out) = unsafe { (out(event, 4)?, out(n_more_events, 5)?) };
        *more_out = e.wait_into(timeout, threshold, ev_out)?;
        Ok(())
    })
}

/// Takes the oldest event without waiting. Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`,
/// `DAT_INVALID_PARAMETER|ARG2`, `DAT_QUEUE_EMPTY`.
#[no_mangle]
pub unsafe extern "C" fn dat_evd_dequeue(evd_handle: DAT_EVD_HANDLE, event: *mut DAT_EVENT) -> DAT_RETURN {
    /// An empty queue's answer, in this face's numbering.
    const EMPTY: u32 = crate::convert::code_out(DatError::QUEUE_EMPTY.0);
    crate::ffi::boundary_code("dat_evd_dequeue", || -> DatResult<u32> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_dequeue_func, (evd_handle, event)) {
            return crate::registry::ret(r).map(|()| 0);
        }
        let e = evd_of(evd_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let ev_out = unsafe { out(event, 2)? };
        Ok(if e.dequeue_into(ev_out)? { 0 } else { EMPTY })
    })
}

/// Resizes the EVD. Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`, `DAT_INVALID_PARAMETER|ARG2`,
/// `DAT_INVALID_STATE` (more events queued than the new size).
#[no_mangle]
pub unsafe extern "C" fn dat_evd_resize(evd_handle: DAT_EVD_HANDLE, evd_min_qlen: DAT_COUNT) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_resize", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_resize_func, (evd_handle, evd_min_qlen)) {
            return crate::registry::ret(r);
        }
        evd_of(evd_handle)?.resize(evd_min_qlen)
    })
}

/// Posts a software event. Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`,
/// `DAT_INVALID_PARAMETER|ARG2` (NULL or not a DAT_SOFTWARE_EVENT, or an EVD created
/// without DAT_EVD_SOFTWARE_FLAG), `DAT_QUEUE_FULL`.
#[no_mangle]
pub unsafe extern "C" fn dat_evd_post_se(evd_handle: DAT_EVD_HANDLE, event: *const DAT_EVENT) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_post_se", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_post_se_func, (evd_handle, event)) {
            return crate::registry::ret(r);
        }
        let e = evd_of(evd_handle)?;
        // SAFETY: readable event from the consumer.
        let ev = unsafe { input(event, 2)? };
        if ev.event_number as u32 != DAT_SOFTWARE_EVENT || !e.accepts(DAT_EVD_SOFTWARE_FLAG) {
            return Err(DatError::invalid_arg(2));
        }
        // SAFETY: a software event's data is the software_event_data member.
        let pointer = unsafe { ev.event_data.software_event_data.pointer } as usize as u64;
        e.post(evd::software_event(pointer))
    })
}

/// Frees an EVD. Errors: `DAT_INVALID_HANDLE|EVD_REQUEST`,
/// `DAT_INVALID_STATE|EVD_IN_USE` (an EP or service point uses it), `|EVD_ASYNC`.
#[no_mangle]
pub unsafe extern "C" fn dat_evd_free(evd_handle: DAT_EVD_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_evd_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(evd_handle, evd_free_func, (evd_handle)) {
            return crate::registry::ret(r);
        }
        evd::free_evd(h(evd_handle), false)
    })
}

/// Creates a CNO. Errors: `DAT_INVALID_HANDLE|IA`, `DAT_INVALID_PARAMETER|ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_cno_create(
    ia_handle: DAT_IA_HANDLE,
    agent_: DAT_OS_WAIT_PROXY_AGENT,
    cno_handle: *mut DAT_CNO_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_cno_create", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(ia_handle, cno_create_func, (ia_handle, agent_, cno_handle)) {
            return crate::registry::ret(r);
        }
        let ia = ia_of(ia_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(cno_handle, 3)? };
        let (ch, _) = ConsumerNotifier::create(&ia, agent(&agent_))?;
        *slot = ch.as_ptr();
        Ok(())
    })
}

/// Replaces the proxy agent. Errors: `DAT_INVALID_HANDLE|CNO`.
#[no_mangle]
pub unsafe extern "C" fn dat_cno_modify_agent(
    cno_handle: DAT_CNO_HANDLE,
    agent_: DAT_OS_WAIT_PROXY_AGENT,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_cno_modify_agent", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(cno_handle, cno_modify_agent_func, (cno_handle, agent_)) {
            return crate::registry::ret(r);
        }
        cno_of(cno_handle)?.set_agent(agent(&agent_));
        Ok(())
    })
}

/// Queries a CNO. Errors: `DAT_INVALID_HANDLE|CNO`, `DAT_INVALID_PARAMETER|ARG2/ARG3`.
#[no_mangle]
pub unsafe extern "C" fn dat_cno_query(
    cno_handle: DAT_CNO_HANDLE,
    cno_param_mask: DAT_CNO_PARAM_MASK,
    cno_param: *mut DAT_CNO_PARAM,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_cno_query", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(cno_handle, cno_query_func, (cno_handle, cno_param_mask, cno_param)) {
            return crate::registry::ret(r);
        }
        let c = cno_of(cno_handle)?;
        if cno_param_mask & !crate::convert::CNO_FIELDS != 0 {
            return Err(DatError::invalid_arg(2));
        }
        // SAFETY: writable out-pointer from the consumer.
        let p = unsafe { out(cno_param, 3)? };
        let a = c.agent();
        p.ia_handle = c.ia.handle().as_ptr();
        let agent = DAT_OS_WAIT_PROXY_AGENT {
            instance_data: a.instance_data as DAT_PVOID,
            // SAFETY: `func` is 0 or a function pointer the consumer gave us with this signature.
            proxy_agent_func: unsafe { std::mem::transmute::<usize, DAT_AGENT_FUNC>(a.func) },
        };
        crate::convert::set_cno_agent(p, agent);
        Ok(())
    })
}

/// Waits until an attached EVD triggers; returns that EVD. Errors: `DAT_INVALID_HANDLE|CNO`,
/// `DAT_INVALID_PARAMETER|ARG3`, `DAT_TIMEOUT_EXPIRED`, `DAT_INVALID_STATE|CNO_IN_USE`.
#[no_mangle]
pub unsafe extern "C" fn dat_cno_wait(
    cno_handle: DAT_CNO_HANDLE,
    timeout: DAT_TIMEOUT,
    evd_handle: *mut DAT_EVD_HANDLE,
) -> DAT_RETURN {
    crate::ffi::boundary("dat_cno_wait", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(cno_handle, cno_wait_func, (cno_handle, timeout, evd_handle)) {
            return crate::registry::ret(r);
        }
        let c = cno_of(cno_handle)?;
        // SAFETY: writable out-pointer from the consumer.
        let slot = unsafe { out(evd_handle, 3)? };
        *slot = c.wait(timeout)?.as_ptr();
        Ok(())
    })
}

/// Frees a CNO. Errors: `DAT_INVALID_HANDLE|CNO`, `DAT_INVALID_STATE|CNO_IN_USE`.
#[no_mangle]
pub unsafe extern "C" fn dat_cno_free(cno_handle: DAT_CNO_HANDLE) -> DAT_RETURN {
    crate::ffi::boundary("dat_cno_free", || -> DatResult<()> {
        if let Some(r) = crate::foreign_call!(cno_handle, cno_free_func, (cno_handle)) {
            return crate::registry::ret(r);
        }
        cno::free(h(cno_handle))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use datcore::evd::EventSink;
    use datcore::provider::{WcOpcode, WcStatus};

    fn bytes(ev: &DAT_EVENT) -> Vec<u8> {
        // SAFETY: DAT_EVENT is plain old data, read as the bytes it is made of.
        unsafe { std::slice::from_raw_parts(ev as *const DAT_EVENT as *const u8, std::mem::size_of::<DAT_EVENT>()) }
            .to_vec()
    }

    /// A completion written straight from the provider's completion is the event the core's
    /// conversion writes, for every opcode (IB extension completions included) and status.
    #[test]
    fn a_completion_written_straight_is_the_converted_event() {
        use WcOpcode::*;
        let ops = [
            Send,
            Recv,
            RdmaWrite,
            RdmaRead,
            RdmaWriteImmed,
            FetchAdd,
            CmpSwap,
            RecvRdmaWriteImmed,
            RecvImmed,
            SendUd,
            RecvUd,
        ];
        let evd = handle::Handle(0xda72_0000_0000_0005);
        for op in ops {
            for status in [WcStatus::Success, WcStatus::Flushed, WcStatus::RemoteAccess] {
                let wc = WorkCompletion {
                    wr_id: 77,
                    context: 0xda71_0000_0000_0009,
                    status,
                    opcode: op,
                    immed: 0x1234,
                    byte_len: 4096,
                };
                // SAFETY: DAT_EVENT is plain old data; all-zero is a valid value.
                let (mut a, mut b): (DAT_EVENT, DAT_EVENT) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
                a.write_completion(evd, &wc);
                b.write(&datcore::event::from_completion(evd, &wc));
                assert_eq!(bytes(&a), bytes(&b), "{op:?} {status:?}");
            }
        }
    }
}
