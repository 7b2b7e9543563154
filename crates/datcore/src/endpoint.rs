//! Endpoints (EP): a provider queue pair, its EVDs and the DAT connection state machine.
//!
//! ```text
//! UNCONNECTED --connect--> ACTIVE_CONNECTION_PENDING --established--> CONNECTED
//! UNCONNECTED --cr_accept--> PASSIVE_CONNECTION_PENDING --established--> CONNECTED
//! RESERVED (bound to an RSP) --cr_accept--> PASSIVE_CONNECTION_PENDING
//! TENTATIVE_CONNECTION_PENDING (provider-made EP of a PSP) --cr_accept--> PASSIVE_...
//! CONNECTED --disconnect--> DISCONNECT_PENDING --disconnected--> DISCONNECTED
//! any pending/connected --rejected/unreachable/timeout/broken--> DISCONNECTED
//! DISCONNECTED --ep_reset--> UNCONNECTED (fresh queue pair)
//! ```
//! The state is an atomic so the post path reads it without a lock.

use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::evd::EventDispatcher;
use crate::event::{Event, EventData};
use crate::handle::{self, DatObject, Handle, HandleType};
use crate::ia::InterfaceAdapter;
use crate::provider::{ConnEvent, ConnectionEvents, ConnectionRequest, QpCaps, QpInit, QueuePair, SendOp, SendWr, Sge};
use crate::pz::ProtectionZone;
use crate::srq::SharedReceiveQueue;
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// Largest private data any provider of ours carries.
pub const MAX_PRIVATE_DATA: usize = 1024;

/// `DAT_EP_ATTR` in native types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpAttr {
    pub service_type: u32,
    pub max_message_size: u64,
    pub max_rdma_size: u64,
    pub qos: u32,
    pub recv_completion_flags: u32,
    pub request_completion_flags: u32,
    pub max_recv_dtos: i32,
    pub max_request_dtos: i32,
    pub max_recv_iov: i32,
    pub max_request_iov: i32,
    pub max_rdma_read_in: i32,
    pub max_rdma_read_out: i32,
    pub srq_soft_hw: i32,
    pub max_rdma_read_iov: i32,
    pub max_rdma_write_iov: i32,
}

impl EpAttr {
    /// The attributes an EP gets when the consumer passes none.
    pub fn defaults(ia: &InterfaceAdapter) -> EpAttr {
        let a = ia.device.attr();
        let iov = a.max_sge.min(8) as i32;
        EpAttr {
            service_type: DAT_SERVICE_TYPE_RC,
            max_message_size: a.max_message_size,
            max_rdma_size: a.max_rdma_size,
            qos: DAT_QOS_BEST_EFFORT,
            recv_completion_flags: DAT_COMPLETION_DEFAULT_FLAG,
            request_completion_flags: DAT_COMPLETION_DEFAULT_FLAG,
            max_recv_dtos: a.max_qp_wr.min(256) as i32,
            max_request_dtos: a.max_qp_wr.min(256) as i32,
            max_recv_iov: iov,
            max_request_iov: iov,
            max_rdma_read_in: a.max_rdma_read_in.min(4) as i32,
            max_rdma_read_out: a.max_rdma_read_out.min(4) as i32,
            srq_soft_hw: 0,
            max_rdma_read_iov: iov,
            max_rdma_write_iov: iov,
        }
    }

    fn validate(&self, ia: &InterfaceAdapter, arg: u32) -> DatResult<()> {
        let a = ia.device.attr();
        let bad = self.service_type != DAT_SERVICE_TYPE_RC
            || self.max_message_size > a.max_message_size
            || self.max_rdma_size > a.max_rdma_size
            || self.max_recv_dtos < 0
            || self.max_request_dtos <= 0
            || self.max_recv_dtos as u32 > a.max_qp_wr
            || self.max_request_dtos as u32 > a.max_qp_wr
            || self.max_recv_iov < 0
            || self.max_request_iov <= 0
            || self.max_recv_iov as u32 > a.max_sge
            || self.max_request_iov as u32 > a.max_sge
            || self.max_rdma_read_in < 0
            || self.max_rdma_read_out < 0
            || self.max_rdma_read_in as u32 > a.max_rdma_read_in
            || self.max_rdma_read_out as u32 > a.max_rdma_read_out;
        if bad {
            Err(DatError::invalid_arg(arg))
        } else {
            Ok(())
        }
    }

    fn caps(&self) -> QpCaps {
        QpCaps {
            max_send_wr: self.max_request_dtos as u32,
            max_recv_wr: self.max_recv_dtos as u32,
            max_send_sge: self.max_request_iov as u32,
            max_recv_sge: self.max_recv_iov as u32,
            max_rdma_read_in: self.max_rdma_read_in as u32,
            max_rdma_read_out: self.max_rdma_read_out as u32,
        }
    }
}

/// What the consumer names when creating an EP.
pub struct EpCreate {
    pub pz: Handle,
    pub recv_evd: Handle,
    pub request_evd: Handle,
    pub connect_evd: Handle,
    pub srq: Handle,
    pub attr: Option<EpAttr>,
}

/// Connection details for queries and connection events.
struct Connection {
    remote: Option<SocketAddr>,
    remote_sockaddr: Box<libc::sockaddr_storage>,
    remote_port: u64,
    /// Peer private data of the last connection event, at a stable address.
    private_data: Box<[u8; MAX_PRIVATE_DATA]>,
    private_data_len: usize,
}

pub struct Endpoint {
    pub ia: Arc<InterfaceAdapter>,
    pub pz: Arc<ProtectionZone>,
    pub pz_handle: Handle,
    pub recv_evd: Option<Arc<EventDispatcher>>,
    pub request_evd: Option<Arc<EventDispatcher>>,
    pub connect_evd: Option<Arc<EventDispatcher>>,
    pub srq: Option<Arc<SharedReceiveQueue>>,
    pub evd_handles: [Handle; 3],
    pub srq_handle: Handle,
    attr: Mutex<EpAttr>,
    qp: RwLock<Option<Arc<dyn QueuePair>>>,
    state: AtomicU32,
    conn: Mutex<Connection>,
    binds: Mutex<HashMap<u64, (Handle, u64)>>,
    next_bind: AtomicU64,
    handle: OnceLock<Handle>,
}

impl DatObject for Endpoint {
    const TYPE: HandleType = HandleType::Ep;
}

/// Routes a queue pair's connection events to its EP.
struct EpEvents(Weak<Endpoint>);

impl ConnectionEvents for EpEvents {
    fn event(&self, ev: ConnEvent, private_data: &[u8]) {
        if let Some(ep) = self.0.upgrade() {
            ep.connection_event(ev, private_data);
        }
    }
}

fn optional_evd(h: Handle, sub: u32, flag: u32) -> DatResult<Option<Arc<EventDispatcher>>> {
    if h.is_null() {
        return Ok(None);
    }
    let evd = handle::get::<EventDispatcher>(h, sub)?;
    if !evd.accepts(flag) {
        return Err(DatError::invalid_handle(sub));
    }
    Ok(Some(evd))
}

/// The DAT_INVALID_STATE subtype naming an EP state.
pub fn state_subtype(state: u32) -> u32 {
    match state {
        DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_UNCONFIGURED_UNCONNECTED => DAT_INVALID_STATE_EP_UNCONNECTED,
        DAT_EP_STATE_RESERVED | DAT_EP_STATE_UNCONFIGURED_RESERVED => DAT_INVALID_STATE_EP_RESERVED,
        DAT_EP_STATE_PASSIVE_CONNECTION_PENDING | DAT_EP_STATE_UNCONFIGURED_PASSIVE => {
            DAT_INVALID_STATE_EP_PASSCONNPENDING
        }
        DAT_EP_STATE_ACTIVE_CONNECTION_PENDING => DAT_INVALID_STATE_EP_ACTCONNPENDING,
        DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING | DAT_EP_STATE_UNCONFIGURED_TENTATIVE => {
            DAT_INVALID_STATE_EP_TENTCONNPENDING
        }
        DAT_EP_STATE_CONNECTED => DAT_INVALID_STATE_EP_CONNECTED,
        DAT_EP_STATE_DISCONNECT_PENDING => DAT_INVALID_STATE_EP_DISCPENDING,
        DAT_EP_STATE_DISCONNECTED => DAT_INVALID_STATE_EP_DISCONNECTED,
        _ => DAT_INVALID_STATE_EP_COMPLPENDING,
    }
}

const ALL_COMPLETION_FLAGS: u32 = DAT_COMPLETION_SUPPRESS_FLAG
    | DAT_COMPLETION_SOLICITED_WAIT_FLAG
    | DAT_COMPLETION_UNSIGNALLED_FLAG
    | DAT_COMPLETION_BARRIER_FENCE_FLAG
    | DAT_COMPLETION_EVD_THRESHOLD_FLAG;

impl Endpoint {
    /// `dat_ep_create` / `dat_ep_create_with_srq`.
    pub fn create(ia: &Arc<InterfaceAdapter>, c: &EpCreate) -> DatResult<(Handle, Arc<Endpoint>)> {
        let pz = handle::get::<ProtectionZone>(c.pz, DAT_INVALID_HANDLE_PZ)?;
        if !Arc::ptr_eq(&pz.ia, ia) {
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_PZ));
        }
        let recv_evd = optional_evd(c.recv_evd, DAT_INVALID_HANDLE_EVD_RECV, DAT_EVD_DTO_FLAG)?;
        let request_evd = optional_evd(c.request_evd, DAT_INVALID_HANDLE_EVD_REQUEST, DAT_EVD_DTO_FLAG)?;
        let connect_evd = optional_evd(c.connect_evd, DAT_INVALID_HANDLE_EVD_CONN, DAT_EVD_CONNECTION_FLAG)?;
        let srq = if c.srq.is_null() {
            None
        } else {
            Some(handle::get::<SharedReceiveQueue>(c.srq, DAT_INVALID_HANDLE_SRQ)?)
        };
        let attr = c.attr.unwrap_or_else(|| EpAttr::defaults(ia));
        attr.validate(ia, if srq.is_some() { 7 } else { 6 })?;
        if attr.request_completion_flags & !ALL_COMPLETION_FLAGS != 0
            || attr.recv_completion_flags & !ALL_COMPLETION_FLAGS != 0
        {
            return Err(DatError::invalid_arg(if srq.is_some() { 7 } else { 6 }));
        }
        let ep = Arc::new(Endpoint {
            ia: ia.clone(),
            pz,
            pz_handle: c.pz,
            recv_evd,
            request_evd,
            connect_evd,
            srq,
            evd_handles: [c.recv_evd, c.request_evd, c.connect_evd],
            srq_handle: c.srq,
            attr: Mutex::new(attr),
            qp: RwLock::new(None),
            state: AtomicU32::new(DAT_EP_STATE_UNCONNECTED),
            conn: Mutex::new(Connection {
                remote: None,
                // SAFETY: sockaddr_storage is plain old data; all-zero is valid.
                remote_sockaddr: Box::new(unsafe { std::mem::zeroed() }),
                remote_port: 0,
                private_data: Box::new([0; MAX_PRIVATE_DATA]),
                private_data_len: 0,
            }),
            binds: Mutex::new(HashMap::new()),
            next_bind: AtomicU64::new(1 << 63),
            handle: OnceLock::new(),
        });
        let h = handle::insert(ep.clone())?;
        let _ = ep.handle.set(h);
        if let Err(e) = ep.new_qp() {
            handle::remove::<Endpoint>(h);
            return Err(e);
        }
        ep.pz.acquire();
        for evd in [&ep.recv_evd, &ep.request_evd, &ep.connect_evd].into_iter().flatten() {
            evd.users.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(s) = &ep.srq {
            s.eps.fetch_add(1, Ordering::SeqCst);
        }
        ia.adopt(h);
        Ok((h, ep))
    }

    /// Creates (or replaces) the provider queue pair.
    fn new_qp(self: &Arc<Self>) -> DatResult<()> {
        let attr = *self.attr.lock();
        let qp = self.ia.device.create_qp(QpInit {
            pd: self.pz.pd.clone(),
            send_cq: self.request_evd.as_ref().and_then(|e| e.completion_queue().cloned()),
            recv_cq: self.recv_evd.as_ref().and_then(|e| e.completion_queue().cloned()),
            srq: self.srq.as_ref().map(|s| s.srq.clone()),
            caps: attr.caps(),
            context: self.handle().0,
            events: Arc::new(EpEvents(Arc::downgrade(self))),
        })?;
        *self.qp.write() = Some(qp);
        Ok(())
    }

    pub fn handle(&self) -> Handle {
        self.handle.get().copied().unwrap_or(Handle::NULL)
    }

    pub fn state(&self) -> u32 {
        self.state.load(Ordering::Acquire)
    }

    pub fn set_state(&self, s: u32) {
        self.state.store(s, Ordering::Release);
    }

    /// Moves from `from` to `to`; false if the EP was not in `from`.
    pub fn transition(&self, from: u32, to: u32) -> bool {
        self.state.compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    pub fn attr(&self) -> EpAttr {
        *self.attr.lock()
    }

    pub fn qp(&self) -> DatResult<Arc<dyn QueuePair>> {
        self.qp.read().clone().ok_or(DatError::INTERNAL)
    }

    /// The queue pair, if the EP is connected.
    pub fn connected_qp(&self) -> DatResult<Arc<dyn QueuePair>> {
        let s = self.state();
        if s != DAT_EP_STATE_CONNECTED {
            return Err(DatError::invalid_state(state_subtype(s)));
        }
        self.qp()
    }

    pub fn remote(&self) -> (Option<SocketAddr>, *const libc::sockaddr, u64) {
        let c = self.conn.lock();
        (c.remote, &*c.remote_sockaddr as *const _ as *const libc::sockaddr, c.remote_port)
    }

    fn set_remote(&self, remote: SocketAddr, port: u64) {
        let mut c = self.conn.lock();
        c.remote = Some(remote);
        *c.remote_sockaddr = crate::ia::to_sockaddr(remote);
        c.remote_port = port;
    }

    fn check_flags(&self, flags: u32, arg: u32) -> DatResult<()> {
        if flags & !ALL_COMPLETION_FLAGS != 0 {
            return Err(DatError::invalid_arg(arg));
        }
        if flags & DAT_COMPLETION_UNSIGNALLED_FLAG != 0
            && self.attr().request_completion_flags & DAT_COMPLETION_UNSIGNALLED_FLAG == 0
        {
            return Err(DatError::invalid_arg(arg));
        }
        Ok(())
    }

    /// `dat_ep_post_send`, `dat_ep_post_rdma_write`, `dat_ep_post_rdma_read`.
    pub fn post_request(&self, op: SendOp, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        let flags_arg = if op == SendOp::Send { 5 } else { 6 };
        self.check_flags(flags, flags_arg)?;
        if self.state() == DAT_EP_STATE_DISCONNECTED {
            // Valid, and flushed at once (dat_ep_post_send(3)).
            return self.flush_now(self.request_evd.as_ref(), cookie);
        }
        let qp = self.connected_qp()?;
        let max_iov = {
            let a = self.attr.lock();
            match op {
                SendOp::Send => a.max_request_iov,
                SendOp::RdmaWrite { .. } => a.max_rdma_write_iov.max(a.max_request_iov),
                SendOp::RdmaRead { .. } => a.max_rdma_read_iov.max(a.max_request_iov),
            }
        };
        if sges.len() > max_iov as usize {
            return Err(DatError::invalid_arg(2));
        }
        qp.post_send(&SendWr {
            wr_id: cookie,
            op,
            sges,
            signaled: flags & (DAT_COMPLETION_SUPPRESS_FLAG | DAT_COMPLETION_UNSIGNALLED_FLAG) == 0,
            solicited: flags & DAT_COMPLETION_SOLICITED_WAIT_FLAG != 0,
            fence: flags & DAT_COMPLETION_BARRIER_FENCE_FLAG != 0,
        })
    }

    /// `dat_ep_post_recv`: allowed before the connection is up, not on an SRQ endpoint.
    pub fn post_recv(&self, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        if flags & !ALL_COMPLETION_FLAGS != 0 {
            return Err(DatError::invalid_arg(5));
        }
        if self.state() == DAT_EP_STATE_DISCONNECTED {
            return self.flush_now(self.recv_evd.as_ref(), cookie);
        }
        if self.srq.is_some() {
            return Err(DatError::invalid_state(0));
        }
        if sges.len() > self.attr.lock().max_recv_iov as usize {
            return Err(DatError::invalid_arg(2));
        }
        self.qp()?.post_recv(cookie, sges)
    }

    /// Completes a DTO posted on a disconnected EP with `DAT_DTO_ERR_FLUSHED`.
    fn flush_now(&self, evd: Option<&Arc<EventDispatcher>>, cookie: u64) -> DatResult<()> {
        let ev = Event {
            number: DAT_DTO_COMPLETION_EVENT,
            evd: Handle::NULL,
            data: EventData::Dto { ep: self.handle(), cookie, status: DAT_DTO_ERR_FLUSHED, length: 0 },
        };
        match evd {
            Some(e) => e.post(ev),
            None => Ok(()),
        }
    }

    /// `dat_ep_connect`.
    pub fn connect(&self, remote: SocketAddr, port: u64, timeout_us: u32, private_data: &[u8]) -> DatResult<()> {
        if private_data.len() > self.ia.device.attr().max_private_data {
            return Err(DatError::invalid_arg(5));
        }
        if self.connect_evd.is_none() {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_EVD_CONNECT));
        }
        if !self.transition(DAT_EP_STATE_UNCONNECTED, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING) {
            return Err(DatError::invalid_state(state_subtype(self.state())));
        }
        self.set_remote(remote, port);
        let timeout = (timeout_us != crate::evd::TIMEOUT_INFINITE).then(|| Duration::from_micros(timeout_us as u64));
        let r = self.qp().and_then(|qp| qp.connect(remote, port, private_data, timeout));
        if r.is_err() {
            self.set_state(DAT_EP_STATE_UNCONNECTED);
        }
        r
    }

    /// Accepts a connection request on this EP (`dat_cr_accept`).
    pub fn accept(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()> {
        if private_data.len() > self.ia.device.attr().max_private_data {
            return Err(DatError::invalid_arg(3));
        }
        let s = self.state();
        let ok_state =
            matches!(s, DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_RESERVED | DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
        if !ok_state || !self.transition(s, DAT_EP_STATE_PASSIVE_CONNECTION_PENDING) {
            return Err(DatError::invalid_state(state_subtype(s)));
        }
        self.set_remote(req.remote_address(), req.port());
        let r = self.qp().and_then(|qp| qp.accept(req, private_data));
        if r.is_err() {
            self.set_state(s);
        }
        r
    }

    /// `dat_ep_disconnect`.
    pub fn disconnect(&self, abrupt: bool) -> DatResult<()> {
        let s = self.state();
        match s {
            DAT_EP_STATE_CONNECTED
            | DAT_EP_STATE_ACTIVE_CONNECTION_PENDING
            | DAT_EP_STATE_PASSIVE_CONNECTION_PENDING => {
                self.set_state(DAT_EP_STATE_DISCONNECT_PENDING);
                self.qp()?.disconnect(!abrupt)
            }
            DAT_EP_STATE_DISCONNECT_PENDING | DAT_EP_STATE_DISCONNECTED => Ok(()),
            _ => Err(DatError::invalid_state(state_subtype(s))),
        }
    }

    /// `dat_ep_reset`: a disconnected EP becomes unconnected with a fresh queue pair.
    pub fn reset(self: &Arc<Self>) -> DatResult<()> {
        let s = self.state();
        if s != DAT_EP_STATE_DISCONNECTED && s != DAT_EP_STATE_UNCONNECTED {
            return Err(DatError::invalid_state(state_subtype(s)));
        }
        self.new_qp()?;
        self.set_state(DAT_EP_STATE_UNCONNECTED);
        Ok(())
    }

    /// `dat_ep_modify` of attributes: only while unconnected; the queue pair is rebuilt.
    pub fn modify_attr(self: &Arc<Self>, attr: EpAttr) -> DatResult<()> {
        let s = self.state();
        if s != DAT_EP_STATE_UNCONNECTED {
            return Err(DatError::invalid_state(state_subtype(s)));
        }
        attr.validate(&self.ia, 3)?;
        let old = std::mem::replace(&mut *self.attr.lock(), attr);
        if let Err(e) = self.new_qp() {
            *self.attr.lock() = old;
            return Err(e);
        }
        Ok(())
    }

    /// `dat_ep_get_status` idle flags: (receive queue empty, send queue empty).
    pub fn idle(&self) -> (bool, bool) {
        let qp = self.qp.read().clone();
        let recv_idle = qp.as_ref().is_none_or(|q| q.posted_recvs() == 0);
        let request_idle = qp.as_ref().is_none_or(|q| q.posted_sends() == 0);
        (recv_idle, request_idle)
    }

    pub fn remember_bind(&self, rmr: Handle, cookie: u64) -> u64 {
        let id = self.next_bind.fetch_add(1, Ordering::Relaxed);
        self.binds.lock().insert(id, (rmr, cookie));
        id
    }

    pub fn take_bind(&self, wr_id: u64) -> Option<(Handle, u64)> {
        self.binds.lock().remove(&wr_id)
    }

    fn connection_event(&self, ev: ConnEvent, private_data: &[u8]) {
        let number = match ev {
            ConnEvent::Established => DAT_CONNECTION_EVENT_ESTABLISHED,
            ConnEvent::PeerRejected => DAT_CONNECTION_EVENT_PEER_REJECTED,
            ConnEvent::NonPeerRejected => DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
            ConnEvent::Unreachable => DAT_CONNECTION_EVENT_UNREACHABLE,
            ConnEvent::TimedOut => DAT_CONNECTION_EVENT_TIMED_OUT,
            ConnEvent::Disconnected => DAT_CONNECTION_EVENT_DISCONNECTED,
            ConnEvent::Broken => DAT_CONNECTION_EVENT_BROKEN,
        };
        let new_state = if ev == ConnEvent::Established { DAT_EP_STATE_CONNECTED } else { DAT_EP_STATE_DISCONNECTED };
        let (ptr, len) = {
            let mut c = self.conn.lock();
            let n = private_data.len().min(MAX_PRIVATE_DATA);
            c.private_data[..n].copy_from_slice(&private_data[..n]);
            c.private_data_len = n;
            (c.private_data.as_ptr(), n)
        };
        let old = self.state.swap(new_state, Ordering::AcqRel);
        tracing::debug!(ep = ?self.handle(), ?ev, old, new_state, "connection event");
        if let Some(evd) = &self.connect_evd {
            let data = EventData::Connection {
                ep: self.handle(),
                private_data_size: len as i32,
                private_data: if len == 0 { std::ptr::null() } else { ptr },
            };
            let _ = evd.post(Event { number, evd: Handle::NULL, data });
        }
    }
}

/// `dat_ep_free`: disconnects abruptly if needed, then releases everything the EP names.
pub fn free(h: Handle) -> DatResult<()> {
    let ep = handle::get::<Endpoint>(h, DAT_INVALID_HANDLE_EP)?;
    handle::remove::<Endpoint>(h);
    let s = ep.state();
    if matches!(
        s,
        DAT_EP_STATE_CONNECTED
            | DAT_EP_STATE_ACTIVE_CONNECTION_PENDING
            | DAT_EP_STATE_PASSIVE_CONNECTION_PENDING
            | DAT_EP_STATE_DISCONNECT_PENDING
    ) {
        if let Ok(qp) = ep.qp() {
            let _ = qp.disconnect(false);
        }
    }
    ep.qp.write().take();
    for evd in [&ep.recv_evd, &ep.request_evd, &ep.connect_evd].into_iter().flatten() {
        evd.users.fetch_sub(1, Ordering::SeqCst);
    }
    if let Some(s) = &ep.srq {
        s.eps.fetch_sub(1, Ordering::SeqCst);
    }
    ep.pz.release();
    ep.ia.disown(h);
    Ok(())
}
