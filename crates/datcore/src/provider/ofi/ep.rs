//! Endpoints: an `FI_EP_MSG` endpoint per DAT EP, made when the EP connects or accepts, and
//! the slot queues that carry each work request's cookie through libfabric.
//!
//! Posts run in the caller's thread: a slot from the queue's free list (one spin lock of the
//! queue), then `fi_sendv` / `fi_recvv` / `fi_writev` / `fi_readv` (`fi_sendmsg` where a fence
//! is asked for) with the slot's address as the operation context; a receive is posted to
//! libfabric while the lock is held, so that the end of the connection finds every receive
//! libfabric holds (see [`Queue::kill`]). Receives posted before the libfabric endpoint exists
//! wait in the queue and are posted when it is made.

use super::super::spin::SpinLock;
use super::super::{
    BindWr, ConnEvent, ConnectionEvents, ConnectionRequest, QpInit, QueuePair, SendOp, SendWr, Sge, WcOpcode, WcStatus,
    WorkCompletion,
};
use super::cm::{self, Owner};
use super::cq::{OfiCq, CQS};
use super::mr::{Refused, Region};
use super::rdm::{self, Kind2, Link};
use super::{fail, sys, DevInner, MAX_SGE};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// One work request in flight.
#[derive(Clone, Copy)]
struct Slot {
    wr_id: u64,
    /// The queue's count of posts when this one was made: the order of posting.
    seq: u64,
    op: WcOpcode,
    len: u64,
    busy: bool,
    signaled: bool,
    /// Completed by libfabric before an older request of an ordered queue: its status and
    /// length, reported after the older ones.
    held: Option<(WcStatus, u64)>,
}

const IDLE: Slot = Slot { wr_id: 0, seq: 0, op: WcOpcode::Send, len: 0, busy: false, signaled: true, held: None };

/// A receive posted before the libfabric endpoint existed.
struct Pending {
    slot: u32,
    sges: [Sge; MAX_SGE],
    n: usize,
}

struct QState {
    slots: Box<[Slot]>,
    free: Vec<u32>,
    /// The endpoint exists (receives go to it, not to `pending`).
    live: bool,
    /// The connection ended: new work completes as flushed at once.
    dead: bool,
    pending: Vec<Pending>,
    /// Posts made so far (each slot's [`Slot::seq`]).
    posts: u64,
    /// Sends and RDMA handed to libfabric, or about to be, and not refused by it: libfabric
    /// owes a completion for each (its counter of completed work, `FI_EP_RDM`, reaches this
    /// once it made them all).
    handed: u64,
    /// An ordered queue's requests in posting order (see [`Queue::complete`]); None: libfabric
    /// completes this queue in order itself.
    order: Option<std::collections::VecDeque<u32>>,
}

impl QState {
    /// A free slot, filled with a new work request; None when every slot is busy.
    fn claim(&mut self, wr_id: u64, op: WcOpcode, len: u64, signaled: bool) -> Option<u32> {
        let i = self.free.pop()?;
        self.posts += 1;
        self.slots[i as usize] = Slot { wr_id, seq: self.posts, op, len, busy: true, signaled, held: None };
        if let Some(o) = &mut self.order {
            o.push_back(i);
        }
        Some(i)
    }

    /// Whether an ordered queue's oldest request completed and waits to be reported.
    fn front_held(&self) -> bool {
        self.order.as_ref().and_then(|o| o.front()).is_some_and(|&i| self.slots[i as usize].held.is_some())
    }
}

/// A send or receive queue of one endpoint.
pub struct Queue {
    /// One byte per slot: the address of byte `i` is slot `i`'s operation context.
    anchors: Box<[u8]>,
    state: SpinLock<QState>,
    cq: Option<Arc<OfiCq>>,
    /// The QP's [`QpInit::context`].
    context: u64,
    /// An ordered queue's oldest requests completed and wait for [`Queue::take_ready`].
    ready: std::sync::atomic::AtomicBool,
}

impl Queue {
    /// A queue of `size` requests; `ordered`: libfabric may complete them out of order
    /// (`FI_ORDER_NONE` completions, as shm's and rxm's sends), so they are reported in
    /// posting order here.
    fn new(size: u32, cq: Option<Arc<OfiCq>>, context: u64, ordered: bool) -> Arc<Queue> {
        let size = size.max(1) as usize;
        let q = Arc::new(Queue {
            anchors: vec![0u8; size].into_boxed_slice(),
            state: SpinLock::new(QState {
                slots: vec![IDLE; size].into_boxed_slice(),
                free: (0..size as u32).rev().collect(),
                live: false,
                dead: false,
                pending: Vec::new(),
                posts: 0,
                handed: 0,
                order: ordered.then(|| std::collections::VecDeque::with_capacity(size)),
            }),
            cq,
            context,
            ready: std::sync::atomic::AtomicBool::new(false),
        });
        if let Some(cq) = &q.cq {
            cq.attach(&q);
        }
        q
    }

    /// The slot whose operation context is `addr`, if it is one of this queue's.
    #[inline]
    pub fn slot_of(&self, addr: usize) -> Option<usize> {
        let base = self.anchors.as_ptr() as usize;
        addr.checked_sub(base).filter(|&i| i < self.anchors.len())
    }

    fn ctx(&self, slot: u32) -> *mut c_void {
        self.anchors.as_ptr().wrapping_add(slot as usize) as *mut c_void
    }

    /// The completion of slot `i` (None: a stale entry, or a successful unsignaled one).
    ///
    /// In an ordered queue, a request that completes before an older one is held, and
    /// reported by [`Queue::take_ready`] once the older ones are.
    pub fn complete(&self, i: usize, status: WcStatus, len: u64) -> Option<WorkCompletion> {
        let mut st = self.state.lock();
        let s = st.slots[i];
        if !s.busy || s.held.is_some() {
            return None;
        }
        if let Some(o) = &mut st.order {
            if o.front() != Some(&(i as u32)) {
                st.slots[i].held = Some((status, len));
                return None;
            }
            o.pop_front();
            if st.front_held() {
                self.ready.store(true, Ordering::Release);
            }
        }
        self.finish(&mut st, i, status, len)
    }

    /// Frees slot `i`; its completion, None for a successful unsignaled one.
    fn finish(&self, st: &mut QState, i: usize, status: WcStatus, len: u64) -> Option<WorkCompletion> {
        let s = st.slots[i];
        st.slots[i].busy = false;
        st.slots[i].held = None;
        st.free.push(i as u32);
        if !s.signaled && status == WcStatus::Success {
            return None;
        }
        let byte_len = if s.op == WcOpcode::Recv { len } else { s.len };
        Some(WorkCompletion { wr_id: s.wr_id, context: self.context, status, opcode: s.op, immed: 0, byte_len })
    }

    /// The held completions of an ordered queue whose older ones are reported, into `out`;
    /// returns how many.
    pub fn take_ready(&self, out: &mut [WorkCompletion]) -> usize {
        if !self.ready.load(Ordering::Acquire) {
            return 0;
        }
        let mut st = self.state.lock();
        let mut n = 0;
        while n < out.len() && st.front_held() {
            let i = st.order.as_mut().and_then(|o| o.pop_front()).expect("a held front") as usize;
            let (status, len) = st.slots[i].held.expect("held");
            if let Some(wc) = self.finish(&mut st, i, status, len) {
                out[n] = wc;
                n += 1;
            }
        }
        self.ready.store(st.front_held(), Ordering::Release);
        n
    }

    /// Completes a request posted to a dead queue as flushed.
    fn flush_now(&self, s: Slot) {
        if let Some(cq) = &self.cq {
            cq.push_soft([self.flushed(&s)]);
        }
    }

    fn flushed(&self, s: &Slot) -> WorkCompletion {
        WorkCompletion {
            wr_id: s.wr_id,
            context: self.context,
            status: WcStatus::Flushed,
            opcode: s.op,
            immed: 0,
            byte_len: 0,
        }
    }

    /// Ends the queue: receives held for an endpoint that never came complete as flushed, and
    /// so do later posts. What libfabric holds it flushes itself (`FI_ECANCELED`, after the
    /// completions it made before), in order; `ep` (the live endpoint, or NULL) is the one it
    /// holds them on.
    ///
    /// A receive posted after libfabric ended the endpoint on its own (the peer's shutdown,
    /// found by its progress before our CM thread reads the event) stays in libfabric's queue
    /// and would complete only when the endpoint is closed: each work request still busy here
    /// is cancelled (`fi_cancel`, which completes it with `FI_ECANCELED`; a no-op for one
    /// libfabric flushed already), oldest first. Receives are posted under this queue's lock
    /// ([`OfiQp::post_recv`]), so none reaches libfabric after this pass.
    fn kill(&self, ep: *mut sys::fid_ep) {
        let mut st = self.state.lock();
        st.dead = true;
        let held = std::mem::take(&mut st.pending);
        let mut wcs = Vec::with_capacity(held.len());
        for p in &held {
            let i = p.slot as usize;
            st.slots[i].busy = false;
            wcs.push(self.flushed(&st.slots[i]));
            st.free.push(p.slot);
        }
        if !ep.is_null() {
            let mut busy: Vec<(u64, u32)> = (0..st.slots.len() as u32)
                .filter(|&i| st.slots[i as usize].busy)
                .map(|i| (st.slots[i as usize].seq, i))
                .collect();
            busy.sort_unstable();
            for (_, i) in busy {
                // SAFETY: a live endpoint (closed only in Drop); the context is our slot's.
                unsafe { ((*(*ep).ops).cancel)(ep.cast(), self.ctx(i)) };
            }
        }
        drop(st);
        if let Some(cq) = &self.cq {
            cq.push_soft(wcs);
        }
    }

    /// Completes every work request still busy as flushed, in software, oldest first (a
    /// libfabric completion of one arriving later is dropped): for an RDM endpoint's sends
    /// that libfabric did not complete by the connection's end, which it neither cancels nor
    /// fails then.
    fn flush_busy(&self) {
        let mut st = self.state.lock();
        if let Some(o) = &mut st.order {
            o.clear();
        }
        self.ready.store(false, Ordering::Release);
        let mut busy: Vec<(u64, u32)> = (0..st.slots.len() as u32)
            .filter(|&i| st.slots[i as usize].busy)
            .map(|i| (st.slots[i as usize].seq, i))
            .collect();
        busy.sort_unstable();
        let mut wcs = Vec::with_capacity(busy.len());
        for (_, i) in busy {
            st.slots[i as usize].busy = false;
            wcs.push(self.flushed(&st.slots[i as usize]));
            st.free.push(i);
        }
        drop(st);
        if let Some(cq) = &self.cq {
            cq.push_soft(wcs);
        }
    }

    fn busy(&self) -> u32 {
        let st = self.state.lock();
        (st.slots.len() - st.free.len()) as u32
    }

    /// Sends and RDMA handed to libfabric ([`QState::handed`]).
    fn handed(&self) -> u64 {
        self.state.lock().handed
    }

    /// Gives back the slot of a send libfabric refused.
    fn release(&self, slot: u32) {
        let mut st = self.state.lock();
        st.handed -= 1;
        if !st.slots[slot as usize].busy {
            // Flushed meanwhile by the connection's end, and freed there.
            return;
        }
        if let Some(o) = &mut st.order {
            if o.back() == Some(&slot) {
                o.pop_back();
            }
        }
        st.slots[slot as usize].busy = false;
        st.free.push(slot);
    }
}

/// Total bytes of `sges`.
fn total(sges: &[Sge]) -> u64 {
    sges.iter().map(|s| s.length as u64).sum()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Connecting,
    Accepting,
    Connected,
    Closed,
}

pub struct OfiQp {
    me: Weak<OfiQp>,
    dev: Arc<DevInner>,
    ep: AtomicPtr<sys::fid_ep>,
    send: Arc<Queue>,
    recv: Arc<Queue>,
    /// CQs made for a side the EP has no EVD for (libfabric wants both bound).
    spare_cqs: Mutex<Vec<Arc<OfiCq>>>,
    events: Arc<dyn ConnectionEvents>,
    phase: Mutex<Phase>,
    /// The peer's data endpoint in the IA's AV (`FI_EP_RDM`; 0 and unused for `FI_EP_MSG`).
    peer: AtomicU64,
    /// The connection's side of the RDM protocol ([`rdm`]).
    pub(super) link: Link,
    /// The endpoint's own AV (`FI_EP_RDM`), closed after it.
    av: std::sync::OnceLock<rdm::Av>,
    /// Its receive counter (`FI_EP_RDM`), closed after it.
    received: std::sync::OnceLock<rdm::Counter>,
    /// Its counter of completed sends and RDMA (`FI_EP_RDM`), closed after it.
    done: std::sync::OnceLock<rdm::Counter>,
}

// SAFETY: the endpoint belongs to a FI_THREAD_SAFE domain; it is closed once, in Drop.
unsafe impl Send for OfiQp {}
// SAFETY: as above.
unsafe impl Sync for OfiQp {}

impl OfiQp {
    pub fn new(dev: &Arc<DevInner>, init: QpInit) -> DatResult<Arc<OfiQp>> {
        let own = |c: &Option<Arc<dyn super::super::CompletionQueue>>| -> DatResult<Option<Arc<OfiCq>>> {
            match c {
                None => Ok(None),
                Some(c) => CQS.get(c).map(Some).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_EVD_REQUEST)),
            }
        };
        let send_cq = own(&init.send_cq)?;
        let recv_cq = own(&init.recv_cq)?;
        let c = init.caps;
        if c.max_send_wr > dev.attr.max_qp_wr || c.max_recv_wr > dev.attr.max_qp_wr {
            return Err(DatError::insufficient(DAT_RESOURCE_TEP));
        }
        if c.max_send_sge as usize > dev.iov_limit || c.max_recv_sge as usize > dev.iov_limit {
            return Err(DatError::invalid_arg(2));
        }
        Ok(Arc::new_cyclic(|me| OfiQp {
            me: me.clone(),
            dev: dev.clone(),
            ep: AtomicPtr::new(std::ptr::null_mut()),
            send: Queue::new(c.max_send_wr, send_cq, init.context, dev.rdm.is_some()),
            recv: Queue::new(c.max_recv_wr, recv_cq, init.context, false),
            spare_cqs: Mutex::new(Vec::new()),
            events: init.events,
            phase: Mutex::new(Phase::Idle),
            peer: AtomicU64::new(0),
            link: Link::default(),
            av: std::sync::OnceLock::new(),
            received: std::sync::OnceLock::new(),
            done: std::sync::OnceLock::new(),
        }))
    }

    /// A slot of the send queue for a work request, or None where the queue is dead and the
    /// request completed as flushed at once. `handed`: the request goes to libfabric (see
    /// [`QState::handed`]; [`Queue::release`] takes it back if libfabric refuses it).
    fn take_send(
        &self,
        wr_id: u64,
        op: WcOpcode,
        sges: &[Sge],
        signaled: bool,
        handed: bool,
    ) -> DatResult<Option<u32>> {
        let q = &self.send;
        let mut st = q.state.lock();
        if st.dead {
            drop(st);
            q.flush_now(Slot { wr_id, seq: 0, op, len: total(sges), busy: false, signaled, held: None });
            return Ok(None);
        }
        if !st.live {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_UNCONNECTED));
        }
        let slot = st.claim(wr_id, op, total(sges), signaled).ok_or(DatError::insufficient(DAT_RESOURCE_TEP))?;
        st.handed += u64::from(handed);
        Ok(Some(slot))
    }

    /// Checks `sges` against the registered regions (local write where `write`).
    #[inline]
    fn check(&self, sges: &[Sge], write: bool) -> DatResult<()> {
        for s in sges.iter().filter(|s| s.length > 0) {
            if let Err(why) = self.dev.mr_keys.check(s.lkey, s.addr, s.length, write) {
                return Err(match why {
                    Refused::Protection => DatError::new(DAT_PROTECTION_VIOLATION, 0),
                    Refused::Privileges => DatError::new(DAT_PRIVILEGES_VIOLATION, 0),
                });
            }
        }
        Ok(())
    }

    /// The iovecs of `sges` and their descriptors (NULL where the provider wants none).
    #[inline]
    fn iov(&self, sges: &[Sge], iov: &mut [sys::iovec; MAX_SGE], desc: &mut [*mut c_void; MAX_SGE]) {
        for (i, s) in sges.iter().enumerate() {
            iov[i] = sys::iovec { iov_base: s.addr as *mut c_void, iov_len: s.length as usize };
            desc[i] = match self.dev.mr_keys.check(s.lkey, s.addr, s.length, false) {
                Ok(d) => d,
                Err(_) => std::ptr::null_mut(),
            };
        }
    }

    /// Posts a receive to the live endpoint.
    fn post_recv_now(&self, ep: *mut sys::fid_ep, slot: u32, sges: &[Sge]) -> isize {
        let mut iov = [const { sys::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 } }; MAX_SGE];
        let mut desc = [std::ptr::null_mut(); MAX_SGE];
        self.iov(sges, &mut iov, &mut desc);
        // SAFETY: a live enabled endpoint; the buffers are registered consumer memory that
        // stays valid until the completion; the context is our slot.
        unsafe {
            ((*(*ep).msg).recvv)(
                ep,
                iov.as_ptr(),
                desc.as_mut_ptr(),
                sges.len(),
                sys::FI_ADDR_UNSPEC,
                self.recv.ctx(slot),
            )
        }
    }

    /// The error of a failed post of `slot` on `q` (the slot is released).
    #[cold]
    fn post_failed(&self, q: &Queue, slot: u32, what: &str, r: isize) -> DatError {
        q.release(slot);
        self.post_error(what, r)
    }

    /// The error for libfabric's `r` from a post.
    #[cold]
    fn post_error(&self, what: &str, r: isize) -> DatError {
        if r == -(sys::FI_EAGAIN as isize) {
            return DatError::insufficient(DAT_RESOURCE_TEP);
        }
        fail(self.dev.lib, what, r, DatError::invalid_state(DAT_INVALID_STATE_EP_DISCONNECTED))
    }

    /// The peer's region under `key` (`FI_EP_RDM`): asked of the peer once per key and
    /// connection (a connection message; the post waits for the answer), then cached. The
    /// initiator checks each RDMA against it, since neither shm nor rxm reports a bad key,
    /// range or right to the initiator; and where the domain addresses by offset, the address
    /// is translated by the region's start.
    fn peer_region(&self, key: u32) -> DatResult<Region> {
        if let Some(&r) = self.link.bases.lock().get(&key) {
            return Ok(r);
        }
        let rdm = self.dev.rdm.as_ref().expect("an RDM IA");
        rdm.ask_base(self, key)?;
        let until = std::time::Instant::now() + Duration::from_secs(10);
        let mut bases = self.link.bases.lock();
        loop {
            if let Some(&r) = bases.get(&key) {
                return Ok(r);
            }
            if !self.is_open() {
                return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_DISCONNECTED));
            }
            if self.link.told.wait_until(&mut bases, until).timed_out() {
                return Ok(Region::default());
            }
        }
    }

    /// An RDMA the peer's region does not allow: it completes with a remote access error
    /// and the connection breaks, as a target's refusal does on RDMA hardware.
    #[cold]
    fn refuse_remote(&self, wr: &SendWr<'_>, op: WcOpcode, sges: &[Sge]) -> DatResult<()> {
        let Some(slot) = self.take_send(wr.wr_id, op, sges, true, false)? else {
            return Ok(());
        };
        if let Some(wc) = self.send.complete(slot as usize, WcStatus::RemoteAccess, 0) {
            if let Some(cq) = &self.send.cq {
                cq.push_soft([wc]);
            }
        }
        self.end(ConnEvent::Broken, &[]);
        Ok(())
    }

    /// Retries a post libfabric refused with `-FI_EAGAIN`, driving the progress of the
    /// endpoint's CQs in between, for up to a second: an RDM provider refuses the first posts
    /// to a peer while it connects to it underneath (rxm), or while its queue is full. Only
    /// this exceptional path loops; a post libfabric takes at once costs nothing more.
    #[cold]
    fn retry_again(&self, mut call: impl FnMut() -> isize) -> isize {
        let until = std::time::Instant::now() + Duration::from_secs(1);
        loop {
            for q in [&self.send, &self.recv] {
                if let Some(cq) = &q.cq {
                    cq.progress();
                }
            }
            let r = call();
            if r != -(sys::FI_EAGAIN as isize) || std::time::Instant::now() > until {
                return r;
            }
            std::thread::yield_now();
        }
    }

    /// Makes the libfabric endpoint from `info`, binds it to the EQ (`FI_EP_MSG`) or the AV
    /// (`FI_EP_RDM`) and the CQs, and enables it.
    fn open_ep(&self, info: *mut sys::fi_info) -> DatResult<*mut sys::fid_ep> {
        let d = &self.dev;
        let _held = d.lifecycle.lock();
        let ep = rdm::open_endpoint(d.lib, d.domain, info, None)?;
        let cq_for = |q: &Queue| -> DatResult<*mut sys::fid_cq> {
            match &q.cq {
                Some(c) => Ok(c.cq),
                None => {
                    let c = OfiCq::new(d, 1, Arc::new(NoWaker))?;
                    let p = c.cq;
                    self.spare_cqs.lock().push(c);
                    Ok(p)
                }
            }
        };
        let bound = (|| {
            let (scq, rcq) = (cq_for(&self.send)?, cq_for(&self.recv)?);
            // SAFETY: live endpoint, EQ and CQs of the same domain and fabric.
            let r = unsafe {
                let first = match d.rdm {
                    Some(_) => {
                        let av = rdm::Av::open(d.lib, d.domain)?;
                        let (rc, dc) = (rdm::Counter::open(d.lib, d.domain)?, rdm::Counter::open(d.lib, d.domain)?);
                        let rc = self.received.get_or_init(|| rc).cntr;
                        let dc = self.done.get_or_init(|| dc).cntr;
                        let mut r = sys::FiOps::bind(&ep, rc.cast(), sys::FI_RECV);
                        if r == 0 {
                            r = sys::FiOps::bind(&ep, dc.cast(), sys::FI_SEND | sys::FI_WRITE | sys::FI_READ);
                        }
                        if r != 0 {
                            return Err(fail(
                                d.lib,
                                "binding a counter",
                                r as isize,
                                DatError::insufficient(DAT_RESOURCE_TEP),
                            ));
                        }
                        self.av.get_or_init(|| av).av.cast()
                    }
                    None => d.cm.eq.cast(),
                };
                let mut r = sys::FiOps::bind(&ep, first, 0);
                if r == 0 {
                    r = sys::FiOps::bind(&ep, scq.cast(), sys::FI_TRANSMIT);
                }
                if r == 0 {
                    r = sys::FiOps::bind(&ep, rcq.cast(), sys::FI_RECV);
                }
                if r == 0 {
                    r = sys::FiOps::control(&ep, sys::FI_ENABLE, std::ptr::null_mut());
                }
                r
            };
            if r != 0 {
                return Err(fail(d.lib, "binding an endpoint", r as isize, DatError::insufficient(DAT_RESOURCE_TEP)));
            }
            Ok(())
        })();
        if let Err(e) = bound {
            // SAFETY: ours, closed once.
            unsafe { sys::FiOps::close(&ep) };
            return Err(e);
        }
        Ok(ep)
    }

    /// Installs the endpoint: the CM thread routes its events here, queued receives go to it.
    fn go_live(&self, ep: *mut sys::fid_ep) {
        self.dev.cm.register(ep as usize, Owner::Qp(self.me.clone()));
        if let (Some(r), Some(me)) = (&self.dev.rdm, self.me.upgrade()) {
            self.link.token.store(r.register(&me), Ordering::Relaxed);
        }
        self.ep.store(ep, Ordering::Release);
        self.send.state.lock().live = true;
        let mut st = self.recv.state.lock();
        st.live = true;
        let pending = std::mem::take(&mut st.pending);
        // Posted under the lock, so that a receive posted meanwhile goes after these.
        for p in &pending {
            let r = self.post_recv_now(ep, p.slot, &p.sges[..p.n]);
            if r != 0 {
                tracing::warn!("ofi: posting a held receive failed: {}", sys::strerror(self.dev.lib, r));
                st.slots[p.slot as usize].busy = false;
                st.free.push(p.slot);
            }
        }
    }

    /// Moves the phase from one of `from` to `to`; false if it was elsewhere.
    fn step(&self, from: &[Phase], to: Phase) -> bool {
        let mut p = self.phase.lock();
        if from.contains(&p) {
            *p = to;
            true
        } else {
            false
        }
    }

    /// The connection ended with `ev` (once): `fi_shutdown` (`FI_EP_MSG`) or a disconnect
    /// message to the peer unless it told us (`FI_EP_RDM`), posted work flushed, `ev`
    /// delivered.
    fn end(&self, ev: ConnEvent, private_data: &[u8]) {
        self.end_as(ev, private_data, true)
    }

    fn end_as(&self, ev: ConnEvent, private_data: &[u8], tell_peer: bool) {
        if !self.step(&[Phase::Connecting, Phase::Accepting, Phase::Connected], Phase::Closed) {
            return;
        }
        let ep = self.ep.load(Ordering::Acquire);
        match &self.dev.rdm {
            None => {
                if !ep.is_null() {
                    // SAFETY: a live endpoint (closed only in Drop).
                    unsafe { ((*(*ep).cm).shutdown)(ep, 0) };
                }
                // Sends need no cancelling: one posted to an endpoint libfabric ended fails
                // at once (its socket is shut), with an error completion.
                self.send.kill(std::ptr::null_mut());
            }
            Some(r) => {
                if tell_peer {
                    self.finish_sends();
                    let sent = self.link.sent.load(Ordering::Relaxed).to_le_bytes();
                    let _ = r.send_to_peer(self, Kind2::DISCONNECT, &sent);
                }
                self.send.kill(std::ptr::null_mut());
                // Work libfabric completed reaches the consumer through the CQ as it does
                // (its completion may still wait there unread); the rest is flushed here.
                if !self.sends_done() {
                    self.send.flush_busy();
                }
            }
        }
        self.recv.kill(ep);
        // A post waiting for a region's start (`offset_of`) gives up.
        drop(self.link.bases.lock());
        self.link.told.notify_all();
        self.events.event(ev, private_data);
    }

    /// Inserts the peer's data endpoint into this endpoint's AV.
    pub(super) fn insert_peer(&self, addr: &[u8]) -> DatResult<u64> {
        self.av.get().ok_or(DatError::invalid_state(DAT_INVALID_STATE_EP_UNCONNECTED))?.insert(addr)
    }

    /// Lets libfabric finish what was posted before the connection ends here (`FI_EP_RDM`):
    /// rxm and shm move a send only in a call that drives progress, and a send still queued
    /// when the endpoint closes is lost, while over `FI_EP_MSG` the kernel's socket delivers
    /// it. Drives progress until the counter of completed work reaches the posts (errors
    /// count too) or a second passed.
    fn finish_sends(&self) {
        let until = std::time::Instant::now() + Duration::from_secs(1);
        while !self.sends_done() && std::time::Instant::now() < until {
            std::thread::yield_now();
        }
    }

    /// Whether libfabric completed every send and RDMA handed to it (`FI_EP_RDM`: its counter
    /// of completed work, read driving progress; errors count too).
    pub(super) fn sends_done(&self) -> bool {
        let Some(done) = self.done.get() else { return true };
        let handed = self.send.handed();
        done.read() + done.read_errors() >= handed
    }

    /// Messages that arrived on this endpoint (`FI_EP_RDM`; driving its progress).
    pub(super) fn received(&self) -> u64 {
        self.received.get().map_or(u64::MAX, rdm::Counter::read)
    }

    /// Whether the connection is being made or is up.
    pub(super) fn is_open(&self) -> bool {
        matches!(*self.phase.lock(), Phase::Connecting | Phase::Accepting | Phase::Connected)
    }

    /// The peer's accept arrived (`FI_EP_RDM`): its data endpoint is `peer`.
    pub(super) fn on_accepted(&self, peer: u64, private_data: &[u8]) {
        if *self.phase.lock() != Phase::Connecting {
            return;
        }
        self.peer.store(peer, Ordering::Release);
        let r = self.dev.rdm.as_ref().expect("an RDM IA");
        if let Err(e) = r.send_to_peer(self, Kind2::READY, &[]) {
            tracing::debug!("ofi: sending ready failed: {e:?}");
            return self.end(ConnEvent::Unreachable, &[]);
        }
        self.on_connected(private_data);
    }

    /// The peer's disconnect message (`FI_EP_RDM`). Messages the peer sent before it travel on
    /// the data endpoint: libfabric's progress of the receive CQ is driven first (even under a
    /// sleeper, which the flush below wakes), so that those already here complete before the
    /// receives still posted are flushed.
    pub(super) fn on_peer_disconnect(&self) {
        if let Some(cq) = &self.recv.cq {
            for _ in 0..4 {
                cq.progress();
            }
        }
        self.end_as(ConnEvent::Disconnected, &[], false);
    }

    /// The CM thread's `FI_CONNECTED` for this endpoint.
    pub(super) fn on_connected(&self, private_data: &[u8]) {
        if self.step(&[Phase::Connecting, Phase::Accepting], Phase::Connected) {
            self.events.event(ConnEvent::Established, private_data);
        }
    }

    /// The CM thread's `FI_SHUTDOWN` for this endpoint.
    pub(super) fn on_shutdown(&self) {
        self.end(ConnEvent::Disconnected, &[]);
    }

    /// The CM thread's error event for this endpoint.
    pub(super) fn on_error(&self, err: i32, data: &[u8]) {
        let connecting = *self.phase.lock() == Phase::Connecting;
        let (ev, pd) = rdm::ends_as(connecting, err, data);
        self.end(ev, pd.unwrap_or(&[]));
    }

    /// A connect's deadline passed.
    pub(super) fn on_timeout(&self) {
        if *self.phase.lock() == Phase::Connecting {
            self.end(ConnEvent::TimedOut, &[]);
        }
    }

    fn post(&self, wr: &SendWr<'_>) -> DatResult<()> {
        let sges = wr.sges;
        let (op, rma) = match wr.op {
            SendOp::Send => (WcOpcode::Send, None),
            SendOp::RdmaWrite { remote_addr, rkey } => (WcOpcode::RdmaWrite, Some((remote_addr, rkey, false))),
            SendOp::RdmaRead { remote_addr, rkey } => (WcOpcode::RdmaRead, Some((remote_addr, rkey, true))),
            SendOp::RdmaWriteImmed { .. } | SendOp::Atomic { .. } => return Err(DatError::NOT_IMPLEMENTED),
        };
        if sges.len() > self.dev.iov_limit {
            return Err(DatError::invalid_arg(3));
        }
        self.check(sges, op == WcOpcode::RdmaRead)?;
        let rma = match rma {
            Some((addr, key, read)) if self.dev.rdm.is_some() => {
                let r = self.peer_region(key)?;
                if !r.allows(addr, total(sges), read) {
                    return self.refuse_remote(wr, op, sges);
                }
                Some((if self.dev.offsets { addr - r.base } else { addr }, key, read))
            }
            r => r,
        };
        let Some(slot) = self.take_send(wr.wr_id, op, sges, wr.signaled, true)? else {
            return Ok(());
        };
        let ep = self.ep.load(Ordering::Acquire);
        let to = self.peer.load(Ordering::Acquire);
        let mut iov = [const { sys::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 } }; MAX_SGE];
        let mut desc = [std::ptr::null_mut(); MAX_SGE];
        self.iov(sges, &mut iov, &mut desc);
        let ctx = self.send.ctx(slot);
        let flags = sys::FI_COMPLETION | if wr.fence { sys::FI_FENCE } else { 0 };
        // SAFETY: a live enabled endpoint (live queues imply it); the buffers are registered
        // consumer memory valid until the completion; the context is our slot.
        let mut call = || unsafe {
            match rma {
                None if wr.fence => {
                    let msg = sys::fi_msg {
                        msg_iov: iov.as_ptr(),
                        desc: desc.as_mut_ptr(),
                        iov_count: sges.len(),
                        addr: to,
                        context: ctx,
                        data: 0,
                    };
                    ((*(*ep).msg).sendmsg)(ep, &msg, flags)
                }
                None => ((*(*ep).msg).sendv)(ep, iov.as_ptr(), desc.as_mut_ptr(), sges.len(), to, ctx),
                Some((addr, key, read)) => {
                    let rma_iov = sys::fi_rma_iov { addr, len: total(sges) as usize, key: key as u64 };
                    let msg = sys::fi_msg_rma {
                        msg_iov: iov.as_ptr(),
                        desc: desc.as_mut_ptr(),
                        iov_count: sges.len(),
                        addr: to,
                        rma_iov: &rma_iov,
                        rma_iov_count: 1,
                        context: ctx,
                        data: 0,
                    };
                    if read {
                        ((*(*ep).rma).readmsg)(ep, &msg, flags)
                    } else {
                        ((*(*ep).rma).writemsg)(ep, &msg, flags)
                    }
                }
            }
        };
        let mut r = call();
        if r == -(sys::FI_EAGAIN as isize) && self.dev.rdm.is_some() {
            r = self.retry_again(call);
        }
        if r != 0 {
            return Err(self.post_failed(&self.send, slot, "posting a send", r));
        }
        if self.dev.rdm.is_some() && rma.is_none() {
            self.link.sent.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl OfiQp {
    /// Accepts an [`rdm::RdmCr`]: the data endpoint, the peer's in the AV, the accept
    /// message; ESTABLISHED follows the peer's ready message.
    fn accept_rdm(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()> {
        let cr = rdm::RCRS.get(req).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_CR))?;
        let d = &self.dev;
        let r = d.rdm.as_ref().expect("an RDM IA");
        if !self.step(&[Phase::Idle], Phase::Accepting) {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_CONNECTED));
        }
        if !cr.claim() {
            *self.phase.lock() = Phase::Idle;
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_CR));
        }
        let made = self.open_ep(d.info).and_then(|ep| {
            let peer = self.insert_peer(&cr.data)?;
            self.peer.store(peer, Ordering::Release);
            Ok(ep)
        });
        let ep = match made {
            Ok(ep) => ep,
            Err(e) => {
                *self.phase.lock() = Phase::Idle;
                cr.unclaim();
                return Err(e);
            }
        };
        self.go_live(ep);
        // SAFETY: a live enabled endpoint.
        let sent = unsafe { rdm::name_of(d.lib, ep) }.and_then(|me| r.send_accept(self, &cr, &me, private_data));
        if let Err(e) = sent {
            self.end(ConnEvent::Broken, &[]);
            return Err(e);
        }
        Ok(())
    }
}

/// The waker of a spare CQ, which nobody waits on.
struct NoWaker;

impl super::super::Waker for NoWaker {
    fn wake(&self) {}
    fn wants_wake(&self) -> bool {
        false
    }
}

impl Drop for OfiQp {
    fn drop(&mut self) {
        for q in [&self.send, &self.recv] {
            if let Some(cq) = &q.cq {
                cq.detach(q);
            }
        }
        if let Some(r) = &self.dev.rdm {
            r.unregister(*self.link.token.get_mut());
            r.release(&self.link, true);
        }
        let ep = *self.ep.get_mut();
        if !ep.is_null() {
            let _held = self.dev.lifecycle.lock();
            self.dev.cm.unregister(ep as usize);
            // SAFETY: our endpoint, closed once; no post can run any more.
            let r = unsafe { sys::FiOps::close(&ep) };
            if r != 0 {
                tracing::warn!("ofi: closing an endpoint failed: {}", sys::strerror(self.dev.lib, r as isize));
            }
        }
    }
}

impl QueuePair for OfiQp {
    fn post_send(&self, wr: &SendWr<'_>) -> DatResult<()> {
        self.post(wr)
    }

    /// A receive is posted to libfabric under the queue's lock, so that [`Queue::kill`] finds
    /// every receive libfabric holds (see there).
    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()> {
        if sges.len() > self.dev.iov_limit {
            return Err(DatError::invalid_arg(3));
        }
        self.check(sges, true)?;
        let q = &self.recv;
        let mut st = q.state.lock();
        if st.dead {
            drop(st);
            q.flush_now(Slot {
                wr_id,
                seq: 0,
                op: WcOpcode::Recv,
                len: total(sges),
                busy: false,
                signaled: true,
                held: None,
            });
            return Ok(());
        }
        let slot =
            st.claim(wr_id, WcOpcode::Recv, total(sges), true).ok_or(DatError::insufficient(DAT_RESOURCE_TEP))?;
        if !st.live {
            let mut p = Pending { slot, sges: [Sge::default(); MAX_SGE], n: sges.len() };
            p.sges[..sges.len()].copy_from_slice(sges);
            st.pending.push(p);
            return Ok(());
        }
        let r = self.post_recv_now(self.ep.load(Ordering::Acquire), slot, sges);
        if r != 0 {
            st.slots[slot as usize].busy = false;
            st.free.push(slot);
            drop(st);
            return Err(self.post_error("posting a receive", r));
        }
        Ok(())
    }

    fn bind_mw(&self, _wr: &BindWr<'_>) -> DatResult<u32> {
        Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0))
    }

    fn connect(&self, remote: SocketAddr, port: u64, private_data: &[u8], timeout: Option<Duration>) -> DatResult<()> {
        let Ok(port) = u16::try_from(port) else {
            tracing::warn!("ofi: connection qualifier {port} does not fit a TCP port (16 bits)");
            return Err(DatError::invalid_arg(3));
        };
        if private_data.len() > self.dev.attr.max_private_data {
            return Err(DatError::invalid_arg(5));
        }
        if !self.step(&[Phase::Idle], Phase::Connecting) {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_CONNECTED));
        }
        let d = &self.dev;
        let ep = match self.open_ep(d.info) {
            Ok(ep) => ep,
            Err(e) => {
                *self.phase.lock() = Phase::Idle;
                return Err(e);
            }
        };
        self.go_live(ep);
        if let Some(t) = timeout {
            d.cm.deadline(t, self.me.clone());
        }
        if let Some(r) = &d.rdm {
            let psp = rdm::psp_addr(r.fmt, remote.ip(), port);
            // SAFETY: a live enabled endpoint.
            let sent = unsafe { rdm::name_of(d.lib, ep) }
                .and_then(|me| r.send_request(self, psp.as_deref(), &me, private_data));
            match sent {
                Ok(true) => {}
                Ok(false) => self.end(ConnEvent::NonPeerRejected, &[]),
                Err(e) => {
                    self.end(ConnEvent::NonPeerRejected, &[]);
                    return Err(e);
                }
            }
            return Ok(());
        }
        let dst = crate::ia::to_sockaddr(SocketAddr::new(remote.ip(), port));
        // SAFETY: a live enabled endpoint; the address and data are read during the call.
        let r = unsafe {
            ((*(*ep).cm).connect)(
                ep,
                (&dst as *const libc::sockaddr_storage).cast(),
                private_data.as_ptr().cast(),
                private_data.len(),
            )
        };
        if r != 0 {
            let e = fail(
                d.lib,
                "fi_connect",
                r as isize,
                DatError::new(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNREACHABLE),
            );
            self.end(ConnEvent::Unreachable, &[]);
            return Err(e);
        }
        Ok(())
    }

    fn accept(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()> {
        if private_data.len() > self.dev.attr.max_private_data {
            return Err(DatError::invalid_arg(3));
        }
        if self.dev.rdm.is_some() {
            return self.accept_rdm(req, private_data);
        }
        let cr = cm::CRS.get(req).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_CR))?;
        if !self.step(&[Phase::Idle], Phase::Accepting) {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_CONNECTED));
        }
        let Some(info) = cr.take_info() else {
            *self.phase.lock() = Phase::Idle;
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_CR));
        };
        let ep = self.open_ep(info.0);
        drop(info);
        let ep = match ep {
            Ok(ep) => ep,
            Err(e) => {
                *self.phase.lock() = Phase::Idle;
                return Err(e);
            }
        };
        self.go_live(ep);
        // SAFETY: a live endpoint made from the request's info.
        let r = unsafe { ((*(*ep).cm).accept)(ep, private_data.as_ptr().cast(), private_data.len()) };
        if r != 0 {
            let e = fail(self.dev.lib, "fi_accept", r as isize, DatError::invalid_state(0));
            self.end(ConnEvent::Broken, &[]);
            return Err(e);
        }
        Ok(())
    }

    fn disconnect(&self, _graceful: bool) -> DatResult<()> {
        self.end(ConnEvent::Disconnected, &[]);
        Ok(())
    }

    fn posted_recvs(&self) -> u32 {
        self.recv.busy()
    }

    fn posted_sends(&self) -> u32 {
        self.send.busy()
    }
}
