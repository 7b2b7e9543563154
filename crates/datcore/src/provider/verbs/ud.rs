//! Unreliable datagram (UD) queue pairs: the IB extensions' UD endpoints on IB/RoCE (not on
//! iWARP, which has no datagram service).
//!
//! **The queue pair** is an `IBV_QPT_UD` QP made at `dat_ep_create` on an rdma_cm id of the UDP
//! port space bound to the IA's address: librdmacm moves it to RTS at once with rdma_cm's UDP
//! queue key ([`QKEY`]), so receives go straight to it and nothing ever connects it. It is made
//! as an RC queue pair is ([`Made::create`]), with its own receive queue or on an SRQ of its
//! PD, and its asynchronous errors reach its IA as an RC queue pair's do (the watch table of
//! `cm.rs`: `DAT_ASYNC_ERROR_EP_BROKEN` naming the EP).
//!
//! **The address exchange** is rdma_cm's UD "connection" (an IB CM SIDR request and reply),
//! each on an id of its own ([`Exchange`]) that lives only while it runs:
//!
//! ```text
//! active                                         passive (listener on the same port, UDP space)
//! rdma_resolve_addr/route, rdma_connect --SIDR REQ (our header, private data)--> CONNECT_REQUEST
//!     ESTABLISHED(ah_attr, qpn, qkey) <--SIDR REP (qpn, qkey, private data)-- rdma_accept
//!     -> ibv_create_ah, DAT_IB_UD_REMOTE_AH          -> ibv_create_ah from the request's route
//!                                                       (GIDs, path), DAT_IB_UD_PASSIVE_REMOTE_AH
//! ```
//! A SIDR request does not carry the requester's queue pair number, which the passive side's
//! event reports, and SIDR messages have fixed-size private data (the receiver gets the
//! sender's bytes padded with zeros), so the private data of both starts with a header of ours
//! ([`framed`]: magic, queue pair number, length) and the other side strips it again
//! ([`unframe`]): each side's event carries exactly the bytes the other gave. A reply also
//! carries the queue pair and queue key in the SIDR message itself. (A peer that sent no
//! header, a foreign one, is reported with its bytes as they came, at most the IA's private
//! data limit, and queue pair number 0 on the passive side.) A connect with a timeout ends
//! as timed out when no reply came in time (the exchange's deadline, kept by the CM thread),
//! otherwise when rdma_cm's own SIDR retries give up.
//!
//! **Address handles** are `ibv_ah`s kept per protection domain, one per distinct address
//! (`ibv_ah_attr`), destroyed with the PD: the core's AH handle names one through
//! [`UdPeer::node`]. `dat_ib_ud_ah_free` ends the DAT handle only; the `ibv_ah` stays for the
//! next exchange with that peer.
//!
//! **Datagrams:** a send names the AH, the peer's queue pair and queue key, and completes as
//! [`WcOpcode::SendUd`]; a message longer than the path MTU ([`super::super::DeviceAttr::
//! transport_mtu`]) completes with a length error. A receive buffer starts with the 40-byte
//! global route header slot the device fills (RoCE) or leaves alone (IB without GRH), and its
//! length counts those 40 bytes ([`super::super::UD_HEADER_LEN`]); it completes as
//! [`WcOpcode::RecvUd`] with the sender's queue pair number.

use super::super::{
    BindWr, ConnEvent, ConnectionEvents, ConnectionRequest, QpCaps, QpInit, QueuePair, SendWr, Sge, UdExchange, UdPeer,
};
use super::cm::{self, Owner, Timed};
use super::cq::VerbsCq;
use super::qp::{device_sges, post_error, Made, QpObjects, Slots, KIND_RECV, KIND_SEND, MAX_SGE};
use super::srq::VerbsSrq;
use super::{fail, sys, DevInner, VerbsPd};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::provider::spin::SpinLock;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// rdma_cm's queue key for its UDP port space (`RDMA_UDP_QKEY`): every UD QP made on such an
/// id uses it, and a SIDR reply reports it.
pub const QKEY: u32 = 0x0123_4567;
/// First bytes of our SIDR request header ("DAT UD").
const MAGIC: [u8; 2] = [0xda, 0x7d];
/// Header: magic, queue pair number (big endian), length of the consumer's private data.
const HEADER_LEN: usize = 7;

/// What a UD event of rdma_cm says about the peer.
#[derive(Clone, Copy)]
pub struct Params {
    ah_attr: sys::ibv_ah_attr,
    qp_num: u32,
    qkey: u32,
}

impl Params {
    pub fn of(p: &sys::rdma_ud_param) -> Params {
        Params { ah_attr: p.ah_attr, qp_num: p.qp_num, qkey: p.qkey }
    }
}

/// The private data of a SIDR request or reply of UD queue pair `qpn`: our header, then `pd`.
pub(super) fn framed(qpn: u32, pd: &[u8]) -> Vec<u8> {
    let mut d = Vec::with_capacity(HEADER_LEN + pd.len());
    d.extend_from_slice(&MAGIC);
    d.extend_from_slice(&qpn.to_be_bytes());
    d.push(pd.len() as u8);
    d.extend_from_slice(pd);
    d
}

/// The consumer private data of a SIDR request or reply and the sender's queue pair number;
/// one without our header (a foreign peer) is passed on as it came, without a number.
pub fn unframe(raw: Vec<u8>) -> (Vec<u8>, Option<u32>) {
    match raw.get(..HEADER_LEN) {
        Some(h) if h[..2] == MAGIC && HEADER_LEN + h[6] as usize <= raw.len() => {
            let qpn = u32::from_be_bytes([h[2], h[3], h[4], h[5]]);
            (raw[HEADER_LEN..HEADER_LEN + h[6] as usize].to_vec(), Some(qpn))
        }
        _ => (raw, None),
    }
}

/// A listening id on `port` of the UDP port space with context `key` (a listener's, so its
/// requests reach that listener), or null (logged) when it cannot listen there.
pub fn listen(dev: &DevInner, key: u64, port: u16) -> *mut sys::rdma_cm_id {
    let lib = dev.lib;
    let mut id = std::ptr::null_mut();
    // SAFETY: the device's channel; the id is destroyed below or by the listener's Drop.
    let r = unsafe { (lib.rdma_create_id)(dev.cm_channel, &mut id, key as usize as *mut _, sys::RDMA_PS_UDP) };
    if r != 0 {
        tracing::warn!("verbs: UD listen on port {port}: rdma_create_id: {}", sys::errno_str(sys::err_of(r)));
        return std::ptr::null_mut();
    }
    let mut ss = crate::ia::to_sockaddr(SocketAddr::new(dev.ip, port));
    // SAFETY: live id; valid sockaddr.
    let mut r = unsafe { (lib.rdma_bind_addr)(id, &mut ss as *mut _ as *mut libc::sockaddr) };
    if r == 0 {
        // SAFETY: bound id.
        r = unsafe { (lib.rdma_listen)(id, 128) };
    }
    if r != 0 {
        tracing::warn!("verbs: port {port} takes no UD address exchanges: {}", sys::errno_str(sys::err_of(r)));
        // SAFETY: our id, never shared.
        unsafe { (lib.rdma_destroy_id)(id) };
        return std::ptr::null_mut();
    }
    id
}

struct AhPtr(*mut sys::ibv_ah);

// SAFETY: an address handle is immutable after creation and used through thread-safe verbs.
unsafe impl Send for AhPtr {}

/// A protection domain's address handles, one per address.
#[derive(Default)]
pub struct AddressHandles(Mutex<HashMap<sys::ibv_ah_attr, AhPtr>>);

impl AddressHandles {
    /// The address handle for `attr` on `pd`, made on first use.
    fn get(&self, pd: &VerbsPd, attr: &sys::ibv_ah_attr) -> DatResult<*mut sys::ibv_ah> {
        let mut map = self.0.lock();
        if let Some(ah) = map.get(attr) {
            return Ok(ah.0);
        }
        let mut a = *attr;
        sys::clear_errno();
        // SAFETY: live PD; a fully initialised attribute.
        let ah = unsafe { (pd.dev.lib.ibv_create_ah)(pd.pd, &mut a) };
        if ah.is_null() {
            return Err(fail("ibv_create_ah", sys::errno(), DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        map.insert(*attr, AhPtr(ah));
        Ok(ah)
    }

    /// Destroys them all (the PD's Drop, before the PD goes).
    pub fn destroy_all(&mut self, lib: &sys::Lib) {
        for (_, ah) in self.0.get_mut().drain() {
            // SAFETY: our AH, destroyed once; no QP sends with it any more (QPs of the PD
            // are gone before it).
            let r = unsafe { (lib.ibv_destroy_ah)(ah.0) };
            if r != 0 {
                tracing::warn!("verbs: ibv_destroy_ah failed: {}", sys::errno_str(sys::err_of(r)));
            }
        }
    }
}

/// A UD queue pair.
pub struct VerbsUdQp {
    dev: Arc<DevInner>,
    pd: Arc<VerbsPd>,
    send_cq: Option<Arc<VerbsCq>>,
    recv_cq: Option<Arc<VerbsCq>>,
    /// The shared receive queue the receives come from, if any (kept alive as long as the QP).
    _srq: Option<Arc<VerbsSrq>>,
    caps: QpCaps,
    slots: Arc<Slots>,
    /// The UDP port space id carrying the QP.
    id: *mut sys::rdma_cm_id,
    qp: *mut sys::ibv_qp,
    qpn: u32,
    /// CQs we made for a missing send or receive EVD.
    own_cqs: Vec<*mut sys::ibv_cq>,
    /// Send-queue work requests posted (as `VerbsQp`'s: held across a post).
    send_count: SpinLock<u64>,
    recv_count: SpinLock<u64>,
    events: Arc<dyn ConnectionEvents>,
    /// Active exchanges in progress.
    exchanges: Mutex<Vec<Arc<Exchange>>>,
    me: Weak<VerbsUdQp>,
}

// SAFETY: the raw pointers are rdma-core objects used through thread-safe verbs, freed once in
// Drop; the counters are behind mutexes.
unsafe impl Send for VerbsUdQp {}
// SAFETY: as above.
unsafe impl Sync for VerbsUdQp {}

impl VerbsUdQp {
    pub fn new(dev: &Arc<DevInner>, init: QpInit) -> DatResult<Arc<VerbsUdQp>> {
        let objs = QpObjects::of(dev, &init)?;
        let caps = objs.caps;
        let cap = sys::ibv_qp_cap {
            max_send_wr: caps.max_send_wr,
            max_recv_wr: caps.max_recv_wr,
            max_send_sge: caps.max_send_sge,
            max_recv_sge: caps.max_recv_sge,
            max_inline_data: 0,
        };
        // No context on the id: nothing ever connects it, so it has no events of ours.
        let (made, _) = Made::create(dev, &objs, cap, true, 0)?;
        let (id, qp) = (made.id, made.qp);
        // SAFETY: rdma_create_qp made the QP live.
        let qpn = unsafe { (*qp).qp_num };
        let slots = Arc::new(Slots::datagram(init.context, caps.max_send_wr, caps.max_recv_wr, objs.srq.clone()));
        let QpObjects { pd, send_cq, recv_cq, srq, .. } = objs;
        for c in [&send_cq, &recv_cq].into_iter().flatten() {
            c.attach(qpn, slots.clone());
        }
        cm::watch_qp(dev, qpn, init.context, Arc::downgrade(&init.events));
        tracing::debug!(qpn, srq = srq.is_some(), "verbs: UD queue pair created");
        Ok(Arc::new_cyclic(|me| VerbsUdQp {
            dev: dev.clone(),
            pd,
            send_cq,
            recv_cq,
            _srq: srq,
            caps,
            slots,
            id,
            qp,
            qpn,
            own_cqs: made.own_cqs,
            send_count: SpinLock::new(0),
            recv_count: SpinLock::new(0),
            events: init.events,
            exchanges: Mutex::new(Vec::new()),
            me: me.clone(),
        }))
    }

    fn post_send_wr(&self, wr: &mut sys::ibv_send_wr) -> i32 {
        let mut bad = std::ptr::null_mut();
        // SAFETY: live QP; post_send is what ibv_post_send calls; WR and SGEs live across it.
        unsafe {
            match (*(*self.qp).context).ops.post_send {
                Some(f) => f(self.qp, wr, &mut bad),
                None => libc::ENOSYS,
            }
        }
    }

    /// Reports an exchange that gave this side `peer`'s address `attr` (an AH is made for it).
    fn established(&self, attr: &sys::ibv_ah_attr, qpn: u32, qkey: u32, pd: &[u8], remote: SocketAddr, passive: bool) {
        let outcome = match self.pd.ahs.get(&self.pd, attr) {
            Ok(ah) => UdExchange {
                ev: ConnEvent::Established,
                private_data: pd,
                peer: UdPeer { node: ah as u64, qpn, qkey },
                remote,
                passive,
            },
            Err(_) => UdExchange::failed(ConnEvent::Broken, remote, passive),
        };
        tracing::debug!(qpn = self.qpn, peer_qpn = qpn, passive, ev = ?outcome.ev, "verbs: UD exchange ended");
        self.events.ud_event(&outcome);
    }

    /// The address of the peer of request id `id` as seen from here: a global route to the
    /// requester's GID from our GID's table entry (and the path's LID on IB).
    fn passive_ah_attr(&self, id: *mut sys::rdma_cm_id) -> Option<sys::ibv_ah_attr> {
        let lib = self.dev.lib;
        // SAFETY: live request id; librdmacm filled its route when it reported the request.
        let (sgid, dgid, port, dlid) = unsafe {
            let i = &*id;
            let dlid = if i.num_paths > 0 && !i.path_rec.is_null() {
                u16::from_be_bytes([*i.path_rec.add(32), *i.path_rec.add(33)])
            } else {
                0
            };
            (i.ib_sgid, i.ib_dgid, i.port_num, dlid)
        };
        let index = (0..256).find_map(|n| {
            let mut gid = [0u8; 16];
            // SAFETY: live context; 16-byte output.
            let r = unsafe { (lib.ibv_query_gid)(self.dev.ctx, port, n, &mut gid) };
            match r {
                0 if gid == sgid => Some(Some(n as u8)),
                0 => None,
                _ => Some(None),
            }
        });
        match index.flatten() {
            Some(i) => Some(sys::ibv_ah_attr::global(dgid, i, dlid, port)),
            None => {
                tracing::warn!(port, "verbs: UD accept: our GID of the request is not in the port's GID table");
                None
            }
        }
    }

    /// Ends active exchange `x`: true the first time, when the caller reports its outcome;
    /// false once it has ended (its outcome was reported).
    fn finish(&self, x: &Exchange) -> bool {
        let mut list = self.exchanges.lock();
        let ended = list.iter().position(|e| std::ptr::eq(&**e, x)).map(|i| list.swap_remove(i));
        drop(list);
        // The exchange (and its id) may go here, outside the lock.
        ended.is_some()
    }
}

impl QueuePair for VerbsUdQp {
    /// A UD endpoint sends only datagrams (`post_send_ud`).
    fn post_send(&self, _wr: &SendWr<'_>) -> DatResult<()> {
        Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0))
    }

    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()> {
        let mut buf = [MaybeUninit::uninit(); MAX_SGE];
        let (list, _) = device_sges(sges, &mut buf)?;
        if list.len() > self.caps.max_recv_sge as usize {
            return Err(DatError::invalid_arg(2));
        }
        let mut count = self.recv_count.lock();
        let c = *count;
        self.slots.note_recv(c, wr_id);
        let mut wr = sys::ibv_recv_wr {
            wr_id: KIND_RECV | (c as u32 as u64),
            next: std::ptr::null_mut(),
            sg_list: list.as_ptr().cast_mut(), // only read by the device
            num_sge: list.len() as i32,
        };
        let mut bad = std::ptr::null_mut();
        // SAFETY: live QP; WR and SGE list live across the call.
        let r = unsafe {
            match (*(*self.qp).context).ops.post_recv {
                Some(f) => f(self.qp, &mut wr, &mut bad),
                None => libc::ENOSYS,
            }
        };
        if r != 0 {
            return Err(post_error("ibv_post_recv(UD)", r));
        }
        *count = c + 1;
        self.slots.recv_posted(c as u32);
        Ok(())
    }

    fn bind_mw(&self, _wr: &BindWr<'_>) -> DatResult<u32> {
        Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0))
    }

    fn connect(&self, remote: SocketAddr, port: u64, private_data: &[u8], timeout: Option<Duration>) -> DatResult<()> {
        let port = self.dev.connect_port(port, private_data)?;
        let lib = self.dev.lib;
        let key = self.dev.key();
        let mut id = std::ptr::null_mut();
        // SAFETY: the device's channel; the id is destroyed by the exchange's Drop.
        let r = unsafe { (lib.rdma_create_id)(self.dev.cm_channel, &mut id, key as usize as *mut _, sys::RDMA_PS_UDP) };
        if r != 0 {
            return Err(fail("rdma_create_id(UDP)", sys::err_of(r), DatError::insufficient(DAT_RESOURCE_TEP)));
        }
        let x = Arc::new(Exchange {
            qp: self.me.clone(),
            dev: self.dev.clone(),
            id,
            key,
            remote,
            private_data: framed(self.qpn, private_data),
            deadline: timeout.map(|t| Instant::now() + t),
        });
        self.dev.ids.lock().insert(key, Owner::Ud(Arc::downgrade(&x)));
        self.exchanges.lock().push(x.clone());
        if let Err(e) = self.dev.resolve_addr(id, remote, port, timeout) {
            self.finish(&x);
            return Err(e);
        }
        if let Some(d) = x.deadline {
            self.dev.add_timed(Arc::downgrade(&x) as Weak<dyn Timed>, d);
        }
        Ok(())
    }

    fn accept(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()> {
        let cr = cm::acceptable(&self.dev, req, private_data, true)?;
        let Some(id) = cr.take_id() else {
            return Err(DatError::invalid_state(0));
        };
        let Some(attr) = self.passive_ah_attr(id) else {
            cr.give_back(id);
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        };
        let lib = self.dev.lib;
        let reply = framed(self.qpn, private_data);
        let mut param = sys::rdma_conn_param {
            private_data: reply.as_ptr() as *const _,
            private_data_len: reply.len() as u8,
            responder_resources: 0,
            initiator_depth: 0,
            flow_control: 0,
            retry_count: 0,
            rnr_retry_count: 0,
            srq: 0,
            qp_num: self.qpn,
        };
        // SAFETY: the request id is ours (taken above); the SIDR reply names our QP.
        let r = unsafe { (lib.rdma_accept)(id, &mut param) };
        if r != 0 {
            let e = sys::err_of(r);
            cr.give_back(id);
            return Err(fail("rdma_accept(UD)", e, DatError::new(DAT_INVALID_STATE, 0)));
        }
        self.dev.ids.lock().remove(&cr.key);
        // SAFETY: the exchange ended with the reply; the request id is ours, destroyed once.
        unsafe { (lib.rdma_destroy_id)(id) };
        self.established(&attr, cr.ud_qpn.unwrap_or(0), QKEY, req.private_data(), req.remote_address(), true);
        Ok(())
    }

    /// Nothing stays connected on a UD queue pair: nothing to do.
    fn disconnect(&self, _graceful: bool) -> DatResult<()> {
        Ok(())
    }

    fn posted_recvs(&self) -> u32 {
        self.slots.outstanding_recvs()
    }

    fn posted_sends(&self) -> u32 {
        self.slots.outstanding_sends(*self.send_count.lock())
    }

    fn post_send_ud(&self, wr: &SendWr<'_>, peer: UdPeer) -> DatResult<()> {
        let mut buf = [MaybeUninit::uninit(); MAX_SGE];
        let (list, total) = device_sges(wr.sges, &mut buf)?;
        if list.len() > self.caps.max_send_sge as usize {
            return Err(DatError::invalid_arg(2));
        }
        // Longer than a datagram can be: posted all the same, so its completion comes in order
        // after the earlier sends; the device sends nothing of it and completes it as sent (IB
        // C10-93.1.1), and the slot reports it `LocalLength`.
        let too_long = total > self.dev.attr.transport_mtu as u64;
        let mut flags = if wr.signaled { sys::IBV_SEND_SIGNALED } else { 0 };
        if wr.solicited {
            flags |= sys::IBV_SEND_SOLICITED;
        }
        let mut count = self.send_count.lock();
        self.slots.send_slot_free(*count)?;
        let c = *count;
        self.slots.note_send_ud(c, wr.wr_id, total, flags, too_long);
        // SAFETY: plain old data; every field a UD send uses is set below.
        let mut w: sys::ibv_send_wr = unsafe { std::mem::zeroed() };
        w.wr_id = KIND_SEND | (c as u32 as u64);
        w.sg_list = list.as_ptr().cast_mut(); // only read by the device
        w.num_sge = list.len() as i32;
        w.opcode = sys::IBV_WR_SEND;
        w.send_flags = flags;
        // `node` is an ibv_ah of an AddressHandles table (made by `established`), alive as
        // long as the PD; the core hands out only peers this provider reported.
        w.wr.ud = sys::ibv_ud_wr { ah: peer.node as *mut sys::ibv_ah, remote_qpn: peer.qpn, remote_qkey: peer.qkey };
        let r = self.post_send_wr(&mut w);
        if r != 0 {
            return Err(post_error("ibv_post_send(UD)", r));
        }
        *count = c + 1;
        Ok(())
    }
}

impl Drop for VerbsUdQp {
    fn drop(&mut self) {
        let lib = self.dev.lib;
        for c in [&self.send_cq, &self.recv_cq].into_iter().flatten() {
            c.detach(self.qpn);
        }
        cm::unwatch_qp(&self.dev, self.qpn);
        // The id has no events (no context key).
        Made { id: self.id, own_cqs: std::mem::take(&mut self.own_cqs), qp: self.qp }.free(lib);
    }
}

/// An active address exchange: its own rdma_cm id, from address resolution to the SIDR reply.
pub struct Exchange {
    qp: Weak<VerbsUdQp>,
    dev: Arc<DevInner>,
    id: *mut sys::rdma_cm_id,
    key: u64,
    remote: SocketAddr,
    /// The SIDR request's private data (our header and the consumer's bytes).
    private_data: Vec<u8>,
    /// When the consumer's connect timeout ends the exchange (None: rdma_cm's own SIDR
    /// timeout does).
    deadline: Option<Instant>,
}

// SAFETY: the id is used through thread-safe rdma_cm calls and destroyed once, in Drop.
unsafe impl Send for Exchange {}
// SAFETY: as above.
unsafe impl Sync for Exchange {}

impl Exchange {
    /// The CM thread: an rdma_cm event of this exchange's id (`ud` its datagram parameters).
    pub fn on_cm_event(&self, ev: u32, status: i32, pd: &[u8], ud: Option<Params>) {
        let Some(qp) = self.qp.upgrade() else { return };
        let lib = self.dev.lib;
        tracing::debug!("verbs: UD exchange: {} status {status}", sys::event_str(lib, ev));
        let outcome = match ev {
            sys::RDMA_CM_EVENT_ADDR_RESOLVED => {
                // SAFETY: live id.
                let r = unsafe { (lib.rdma_resolve_route)(self.id, super::RESOLVE_MS) };
                if r == 0 {
                    return;
                }
                tracing::warn!("verbs: rdma_resolve_route failed: {}", sys::errno_str(sys::err_of(r)));
                ConnEvent::Unreachable
            }
            sys::RDMA_CM_EVENT_ROUTE_RESOLVED => {
                let mut param = sys::rdma_conn_param {
                    private_data: self.private_data.as_ptr() as *const _,
                    private_data_len: self.private_data.len() as u8,
                    responder_resources: 0,
                    initiator_depth: 0,
                    flow_control: 0,
                    retry_count: 7,
                    rnr_retry_count: 0,
                    srq: 0,
                    qp_num: qp.qpn,
                };
                // SAFETY: live, route-resolved id; the private data outlives the call.
                let r = unsafe { (lib.rdma_connect)(self.id, &mut param) };
                if r == 0 {
                    return;
                }
                tracing::warn!("verbs: rdma_connect(UD) failed: {}", sys::errno_str(sys::err_of(r)));
                ConnEvent::Unreachable
            }
            sys::RDMA_CM_EVENT_ESTABLISHED => {
                if !qp.finish(self) {
                    return;
                }
                match ud {
                    Some(p) => {
                        let (mut data, _) = unframe(pd.to_vec());
                        data.truncate(self.dev.attr.max_private_data);
                        qp.established(&p.ah_attr, p.qp_num, p.qkey, &data, self.remote, false);
                    }
                    None => qp.events.ud_event(&UdExchange::failed(ConnEvent::Broken, self.remote, false)),
                }
                return;
            }
            // A SIDR reply's status: 1 no such service (nobody listens), 2 rejected. A reject
            // carries the rejecting consumer's private data (after our marker, when the
            // rejecting side is ours), as the IB CM reject of a reliable connect does.
            sys::RDMA_CM_EVENT_UNREACHABLE | sys::RDMA_CM_EVENT_REJECTED if status == 2 => {
                if qp.finish(self) {
                    let data = pd.strip_prefix(cm::REJECT_MARKER).unwrap_or(pd);
                    let n = data.len().min(self.dev.attr.max_private_data);
                    tracing::debug!(len = n, "verbs: UD exchange rejected by the peer");
                    let x = UdExchange {
                        private_data: &data[..n],
                        ..UdExchange::failed(ConnEvent::PeerRejected, self.remote, false)
                    };
                    qp.events.ud_event(&x);
                }
                return;
            }
            sys::RDMA_CM_EVENT_UNREACHABLE | sys::RDMA_CM_EVENT_REJECTED if status == 1 => ConnEvent::NonPeerRejected,
            _ if status == -libc::ETIMEDOUT => ConnEvent::TimedOut,
            sys::RDMA_CM_EVENT_ADDR_ERROR
            | sys::RDMA_CM_EVENT_ROUTE_ERROR
            | sys::RDMA_CM_EVENT_UNREACHABLE
            | sys::RDMA_CM_EVENT_REJECTED
            | sys::RDMA_CM_EVENT_CONNECT_ERROR => ConnEvent::Unreachable,
            _ => return,
        };
        if qp.finish(self) {
            tracing::debug!(?outcome, "verbs: UD exchange failed");
            qp.events.ud_event(&UdExchange::failed(outcome, self.remote, false));
        }
    }
}

impl Timed for Exchange {
    fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// The consumer's connect timeout passed with no reply: the exchange ends as timed out (a
    /// `DAT_IB_UD_CONNECTION_ERROR_EVENT`, as on shm); its id goes with it, so a late reply is
    /// not heard.
    fn on_deadline(&self) {
        let Some(qp) = self.qp.upgrade() else { return };
        if qp.finish(self) {
            tracing::debug!(qpn = qp.qpn, "verbs: UD exchange timed out");
            qp.events.ud_event(&UdExchange::failed(ConnEvent::TimedOut, self.remote, false));
        }
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        self.dev.ids.lock().remove(&self.key);
        // SAFETY: our id, destroyed once; the CM thread acknowledges events before dispatching.
        unsafe { (self.dev.lib.rdma_destroy_id)(self.id) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_header_round_trip() {
        let d = framed(0x00ab_cdef, b"hello");
        let mut padded = d.clone();
        padded.resize(180, 0); // a SIDR request's private data arrives padded
        assert_eq!(unframe(padded), (b"hello".to_vec(), Some(0x00ab_cdef)));
        let foreign = vec![1u8, 2, 3];
        assert_eq!(unframe(foreign.clone()), (foreign, None));
        let mut short = framed(7, b"abc");
        short.truncate(HEADER_LEN + 1);
        assert_eq!(unframe(short.clone()).1, None, "a length beyond the data is not ours");
    }
}
