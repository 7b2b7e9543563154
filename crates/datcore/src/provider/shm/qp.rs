//! Queue pairs: state, send queue, and the `QueuePair` entry points.
//!
//! Everything about one connection (its rings, its queues, its state) sits behind one per-QP
//! lock ([`super::super::spin::SpinLock`]). Posting threads, polling threads and the progress thread all produce into the rings
//! under it, so each ring has exactly one producer at a time.

use super::super::spin::SpinLock;
use super::super::{
    Access, AsyncError, AsyncEvents, AtomicOp, BindWr, CompletionQueue, ConnEvent, ConnectionEvents, ConnectionRequest,
    QpCaps, QueuePair, SendOp, SendWr, Sge, WcOpcode, WcStatus, WorkCompletion,
};
use super::area::PeerArea;
use super::cq::{Handout, ShmCq};
use super::memtable::{self, Entry, Kind};
use super::recvq::{self, RecvQueue, SgeList, ShmSrq};
use super::ring::{Consumer, Malformed, Producer, Segment};
use super::shared::PeerMaps;
use super::wake::NO_SLOT;
use super::xfer::Part;
use super::{conn, progress, sys, wire, ShmMw, MWS};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Connecting,
    Accepting,
    Connected,
    Closed,
}

/// Why a connection must go down.
#[derive(Debug)]
#[allow(dead_code)] // the reason is read through Debug in logs
pub enum Fault {
    Malformed(&'static str),
    PeerGone,
}

impl From<Malformed> for Fault {
    fn from(m: Malformed) -> Fault {
        Fault::Malformed(m.0)
    }
}

/// What the peer told us about its end at connect time.
pub struct PeerEnd {
    /// Its published area (None until the handshake delivered it).
    pub area: Option<PeerArea>,
    /// Wake-word indices of its QP's send and receive completion queues.
    pub send_cq: u32,
    pub recv_cq: u32,
    /// Its QP's slots on those queues (named when we ring their doorbells).
    pub send_slot: u32,
    pub recv_slot: u32,
    /// Its QP's protection domain.
    pub pd: u32,
}

impl PeerEnd {
    pub fn new(area: Option<PeerArea>, h: &wire::Hello) -> PeerEnd {
        PeerEnd {
            area,
            send_cq: h.send_cq,
            recv_cq: h.recv_cq,
            send_slot: h.send_slot,
            recv_slot: h.recv_slot,
            pd: h.pd,
        }
    }

    fn notify(&self, cq: u32, slot: u32) {
        if let Some(w) = self.area.as_ref().and_then(|a| a.wake(cq)) {
            w.notify_from(slot);
        }
    }

    /// We added a request record: the peer's receive queue's poll will execute it.
    pub fn notify_recv_cq(&self) {
        self.notify(self.recv_cq, self.recv_slot)
    }

    /// We added a response record: the peer's send queue's poll will complete from it.
    pub fn notify_send_cq(&self) {
        self.notify(self.send_cq, self.send_slot)
    }
}

/// An established (or accepting) connection's shared-memory side.
pub struct Link {
    pub seg: Arc<Segment>,
    pub side: usize,
    pub peer_pid: i32,
    pub tx_req: Producer,
    pub tx_resp: Producer,
    pub rx_req: Consumer,
    pub rx_resp: Consumer,
    /// The peer can read/write our memory: we may send iovec descriptors instead of data.
    pub peer_copies: bool,
    /// We can read/write the peer's memory.
    pub we_copy: bool,
    pub peer: PeerEnd,
    /// The peer's shared-memory registrations mapped here (RDMA by memcpy, [`super::rdma`]).
    pub peer_maps: PeerMaps,
}

impl Link {
    pub fn new(seg: Segment, side: usize, peer_pid: i32, we_copy: bool, peer: PeerEnd) -> Link {
        let seg = Arc::new(seg);
        memtable::add_target(&seg, 1 - side);
        Link {
            peer,
            tx_req: seg.producer(side, false),
            tx_resp: seg.producer(side, true),
            rx_req: seg.consumer(1 - side, false),
            rx_resp: seg.consumer(1 - side, true),
            seg,
            side,
            peer_pid,
            peer_copies: false,
            we_copy,
            peer_maps: PeerMaps::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Send,
    Write,
    Read,
    /// RDMA write with immediate data (always through the ring: the target consumes a receive).
    WriteImmed,
    /// Atomics (always through the ring: the target's thread executes them, see `xfer`).
    FetchAdd,
    CmpSwap,
}

impl OpKind {
    /// Whether the target always answers with an ACK (the initiator needs data back).
    pub fn acknowledged(self) -> bool {
        matches!(self, OpKind::Read | OpKind::FetchAdd | OpKind::CmpSwap)
    }

    /// The completion opcode at the initiator.
    fn wc_opcode(self) -> WcOpcode {
        match self {
            OpKind::Send => WcOpcode::Send,
            OpKind::Write => WcOpcode::RdmaWrite,
            OpKind::Read => WcOpcode::RdmaRead,
            OpKind::WriteImmed => WcOpcode::RdmaWriteImmed,
            OpKind::FetchAdd => WcOpcode::FetchAdd,
            OpKind::CmpSwap => WcOpcode::CmpSwap,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct SqEntry {
    pub wr_id: u64,
    pub kind: OpKind,
    pub remote_addr: u64,
    pub rkey: u32,
    /// [`super::wire::OpHdr::arg`]: immediate data, or an atomic's add / compare value.
    pub arg: u64,
    /// A compare-and-swap's swap value.
    pub swap: u64,
    pub signaled: bool,
    pub solicited: bool,
    pub fence: bool,
    pub nsge: usize,
    pub total: u64,
    /// Inline bytes already pushed into the request ring.
    pub sent: u64,
    pub hdr_sent: bool,
    /// RDMA read bytes already received inline.
    pub got: u64,
    pub err: Option<WcStatus>,
    /// Sent through the request ring; else executed here.
    pub via_ring: bool,
    /// Ring position just past its last record: once the target's consumer head passes it
    /// with no ACK naming it, it succeeded (reads always get an ACK).
    pub ring_end: u64,
    /// Finished with this status and byte count; completes when it reaches the head.
    pub done: Option<(WcStatus, u64)>,
}

const NO_ENTRY: SqEntry = SqEntry {
    wr_id: 0,
    kind: OpKind::Send,
    remote_addr: 0,
    rkey: 0,
    arg: 0,
    swap: 0,
    signaled: false,
    solicited: false,
    fence: false,
    nsge: 0,
    total: 0,
    sent: 0,
    hdr_sent: false,
    got: 0,
    err: None,
    via_ring: false,
    ring_end: 0,
    done: None,
};

/// Fixed-capacity send queue: `[head, issued)` are issued (in the ring awaiting their outcome,
/// or done and waiting for earlier ones to complete: completions come out in queue order),
/// `[issued, tail)` wait to be issued. Before `acked` every ring op has its outcome.
pub struct SendQueue {
    /// Entries; the length is a power of two, so op `n` lives in slot `n & mask` (no division
    /// per message).
    pub e: Vec<SqEntry>,
    /// How many ops may be outstanding (the QP's send-queue depth, at most `e.len()`).
    pub depth: usize,
    sges: Vec<Sge>,
    max_sge: usize,
    pub head: u64,
    pub acked: u64,
    pub issued: u64,
    pub tail: u64,
}

impl SendQueue {
    /// The queue of an endpoint that is not connected: no storage (nothing can be posted).
    const NONE: SendQueue =
        SendQueue { e: Vec::new(), depth: 0, sges: Vec::new(), max_sge: 1, head: 0, acked: 0, issued: 0, tail: 0 };

    fn new(cap: u32, max_sge: u32) -> SendQueue {
        let depth = cap.max(1) as usize;
        let slots = depth.next_power_of_two();
        let max_sge = (max_sge as usize).clamp(1, super::cma::MAX_IOV);
        SendQueue {
            e: vec![NO_ENTRY; slots],
            depth,
            sges: vec![Sge::default(); slots * max_sge],
            max_sge,
            head: 0,
            acked: 0,
            issued: 0,
            tail: 0,
        }
    }

    /// Moves `acked` past ops that have their outcome (and past retired ones: their slots may
    /// hold newer ops).
    fn skip_done(&mut self) {
        self.acked = self.acked.max(self.head);
        while self.acked < self.issued {
            let e = &self.e[self.slot(self.acked)];
            if e.via_ring && e.done.is_none() {
                return;
            }
            self.acked += 1;
        }
    }

    /// The pending ring op (slot) whose last record ends at `pos`, or the oldest pending RDMA
    /// read through the ring (`pos` None).
    pub fn pending_ring_op(&mut self, pos: Option<u64>) -> Option<usize> {
        self.skip_done();
        (self.acked..self.issued).map(|n| self.slot(n)).find(|&i| {
            let e = &self.e[i];
            e.via_ring && e.done.is_none() && pos.map_or(e.kind == OpKind::Read, |p| e.ring_end == p)
        })
    }

    /// Marks as succeeded every pending ring op not [acknowledged](OpKind::acknowledged) whose
    /// records the target consumed (`consumed`: its head position).
    pub fn consumed_up_to(&mut self, consumed: u64) {
        self.skip_done();
        for n in self.acked..self.issued {
            let i = self.slot(n);
            let e = &mut self.e[i];
            if !e.via_ring || e.done.is_some() {
                continue;
            }
            if e.ring_end.wrapping_sub(consumed) as i64 > 0 {
                break;
            }
            if !e.kind.acknowledged() {
                let status = e.err.unwrap_or(WcStatus::Success);
                e.done = Some((status, if status == WcStatus::Success { e.total } else { 0 }));
            }
        }
    }
    pub fn slot(&self, n: u64) -> usize {
        (n & (self.e.len() as u64 - 1)) as usize
    }
    /// Op `n`, to update in place, and its SGEs.
    pub fn entry_mut(&mut self, n: u64) -> (&mut SqEntry, &[Sge]) {
        let i = self.slot(n);
        let sges = &self.sges[i * self.max_sge..i * self.max_sge + self.e[i].nsge];
        (&mut self.e[i], sges)
    }
    /// The SGEs of the entry in slot `i`.
    pub fn sges_at(&self, i: usize) -> &[Sge] {
        &self.sges[i * self.max_sge..i * self.max_sge + self.e[i].nsge]
    }
    pub fn is_empty(&self) -> bool {
        self.head == self.tail
    }
    fn push(&mut self, e: SqEntry, sges: &[Sge]) -> DatResult<()> {
        if (self.tail - self.head) as usize >= self.depth {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        if sges.len() > self.max_sge {
            return Err(DatError::invalid_arg(2));
        }
        let i = self.slot(self.tail);
        self.e[i] = SqEntry { nsge: sges.len(), ..e };
        self.sges[i * self.max_sge..i * self.max_sge + sges.len()].copy_from_slice(sges);
        self.tail += 1;
        Ok(())
    }
}

/// Target-side state of an inbound operation whose payload spans several records, or of an
/// RDMA read being answered inline.
#[derive(Clone, Copy)]
pub enum Rx {
    Idle,
    Inline {
        dest: Dest,
        total: u64,
        off: u64,
        status: WcStatus,
        ack: WcStatus,
    },
    /// `pos`: where the READ record ended in the ring (named in the ACK).
    ReadResp {
        src: u64,
        rkey: u32,
        total: u64,
        off: u64,
        pos: u64,
    },
}

#[derive(Clone, Copy)]
pub enum Dest {
    /// A posted receive: its work-request id (its SGEs are `QpState::recv_sges`) and whether
    /// it came from the SRQ.
    Recv(u64, bool),
    /// Our memory at `addr`, under `rkey` (checked again for every chunk); `immed`: an RDMA
    /// write with immediate data, with the receive it consumed (work request id) and the data.
    Mem { addr: u64, rkey: u32, immed: Option<(u64, u32)> },
}

pub struct QpState {
    pub phase: Phase,
    pub sock: Option<Arc<OwnedFd>>,
    pub deadline: Option<Instant>,
    pub link: Option<Link>,
    pub sq: SendQueue,
    pub rq: RecvQueue,
    pub rx: Rx,
    /// The SGEs of the receive last taken ([`QpShared::take_recv`]), the one `rx` fills.
    pub recv_sges: SgeList,
    pub pending_ack: Option<Ack>,
    pub reads_out: u32,
    pub graceful_pending: bool,
    pub peer_disc: bool,
    pub peer_gone: bool,
    /// The socket has data to read (set from poll results).
    pub sock_ready: bool,
    /// Dropped by the core: no more events.
    pub dropped: bool,
    /// A data step run from a poll found the connection broken; the progress thread tears it
    /// down and reports it.
    pub fault: Option<Fault>,
    /// Counts data steps that did something; the progress thread services a connection
    /// itself only when work waits and this did not move since its last look.
    pub data_gen: u64,
    pub looked_gen: u64,
}

impl QpState {
    /// Whether data-path work waits: records to consume, work to issue, an answer to send.
    pub fn data_pending(&self) -> bool {
        let Some(l) = &self.link else { return false };
        !l.rx_req.is_empty()
            || !l.rx_resp.is_empty()
            || self.sq.head < self.sq.tail
            || self.pending_ack.is_some()
            || !matches!(self.rx, Rx::Idle)
    }
}

/// An answer the target owes: errors and RDMA reads. `pos` is the request-ring position just
/// past the op's last record (the initiator matches it to the op); with `then_consume` that
/// record is still unconsumed and is consumed right after the ACK is written, so the
/// initiator, which takes a consumed record without an ACK as success, sees the ACK first.
#[derive(Clone, Copy, Debug)]
pub struct Ack {
    pub status: WcStatus,
    pub len: u64,
    pub pos: u64,
    pub then_consume: bool,
}

/// What a locked section asks to have done once the lock is gone; inside a poll, also where
/// that poll's own completions go ([`Handout`]).
#[derive(Default)]
pub struct After<'o> {
    pub wake_send: bool,
    pub wake_recv: bool,
    pub event: Option<(ConnEvent, Vec<u8>)>,
    /// The peer broke the protocol: the queue pair went to error (reported after `event`).
    pub qp_error: bool,
    pub handout: Option<Handout<'o>>,
}

impl After<'_> {
    /// Adds `wc` to `cq`: straight into the running poll's buffer when that poll is `cq`'s and
    /// may take it (see [`Handout::offer`]), else into the queue. True when it went into the
    /// queue (its waiter is to be woken); one handed out needs no wake-up: its poller is awake.
    fn complete_on(&mut self, cq: &ShmCq, wc: WorkCompletion) -> bool {
        let wc = match &mut self.handout {
            Some(h) => match h.offer(cq, wc) {
                Ok(()) => return false,
                Err(wc) => wc,
            },
            None => wc,
        };
        cq.push(wc);
        true
    }
}

pub struct QpShared {
    pub pd: u32,
    pub context: u64,
    pub send_cq: Option<Arc<ShmCq>>,
    pub recv_cq: Option<Arc<ShmCq>>,
    pub srq: Option<Arc<ShmSrq>>,
    pub caps: QpCaps,
    pub events: Arc<dyn ConnectionEvents>,
    /// The device's asynchronous errors (a queue pair in error).
    pub async_events: Arc<dyn AsyncEvents>,
    /// Taken by every post, poll and progress-thread look: see [`SpinLock`].
    pub st: SpinLock<QpState>,
    /// Stalled on an empty receive queue: the next post_recv runs a data step itself.
    pub need_recv: AtomicBool,
    /// On its completion queues' lists (from the first connect or accept): only then do their
    /// polls look at it, so idle endpoints cost a poll nothing.
    attached: AtomicBool,
    /// Our slots on the send and receive completion queues ([`QpShared::send_slot`]).
    slots: [AtomicU32; 2],
}

pub fn status_code(s: WcStatus) -> u32 {
    match s {
        WcStatus::Success => 0,
        WcStatus::Flushed => 1,
        WcStatus::LocalLength => 2,
        WcStatus::LocalProtection => 3,
        WcStatus::LocalOperation => 4,
        WcStatus::RemoteAccess => 5,
        WcStatus::RemoteOperation => 6,
        WcStatus::BadResponse => 7,
        WcStatus::TransportRetry => 8,
        WcStatus::ReceiverNotReady => 9,
        WcStatus::BindFailure => 10,
    }
}

pub fn status_from(c: u32) -> WcStatus {
    match c {
        0 => WcStatus::Success,
        1 => WcStatus::Flushed,
        2 => WcStatus::LocalLength,
        3 => WcStatus::LocalProtection,
        4 => WcStatus::LocalOperation,
        5 => WcStatus::RemoteAccess,
        7 => WcStatus::BadResponse,
        8 => WcStatus::TransportRetry,
        9 => WcStatus::ReceiverNotReady,
        _ => WcStatus::RemoteOperation,
    }
}

impl QpShared {
    pub fn complete_send(&self, a: &mut After, wr_id: u64, kind: OpKind, status: WcStatus, byte_len: u64) {
        if let Some(cq) = &self.send_cq {
            let opcode = kind.wc_opcode();
            let wc = WorkCompletion { wr_id, context: self.context, status, opcode, immed: 0, byte_len };
            a.wake_send |= a.complete_on(cq, wc);
        }
    }

    /// Completes a receive; `immed`: it was consumed by an RDMA write with this immediate data.
    pub fn complete_recv(&self, a: &mut After, wr_id: u64, status: WcStatus, byte_len: u64, immed: Option<u32>) {
        if let Some(cq) = &self.recv_cq {
            let opcode = if immed.is_some() { WcOpcode::RecvRdmaWriteImmed } else { WcOpcode::Recv };
            let immed = immed.unwrap_or(0);
            let wc = WorkCompletion { wr_id, context: self.context, status, opcode, immed, byte_len };
            a.wake_recv |= a.complete_on(cq, wc);
        }
    }

    /// Wakes CQ waiters and delivers the event; call with no lock held.
    pub fn finish(&self, a: After) {
        self.finish_except(a, None)
    }

    /// As [`finish`](Self::finish), but leaves `polling` (the queue whose poll runs this, under
    /// its EVD's lock; its poller takes the completions itself) alone.
    ///
    /// Inside a poll, the EVD lock of `polling` is held: the core's waker of another queue
    /// (which takes that queue's EVD lock, for a CNO) is left to the progress thread, so two
    /// threads polling two queues can never wait for each other's EVD locks.
    fn finish_except(&self, a: After, polling: Option<&ShmCq>) {
        if !a.wake_send && !a.wake_recv && a.event.is_none() {
            return;
        }
        let other = |cq: &Arc<ShmCq>| polling.is_none_or(|p| !std::ptr::eq(p, &**cq));
        let wake = |cq: &Arc<ShmCq>| match polling {
            None => cq.wake(),
            Some(_) => {
                if cq.wake_sleeper() {
                    progress::engine().wake_later(cq.clone());
                }
            }
        };
        if a.wake_send {
            if let Some(cq) = self.send_cq.as_ref().filter(|c| other(c)) {
                wake(cq);
            }
        }
        if a.wake_recv {
            if let Some(cq) = self.recv_cq.as_ref().filter(|c| other(c)) {
                wake(cq);
            }
        }
        if let Some((ev, data)) = a.event {
            self.deliver(ev, &data);
            if a.qp_error {
                self.async_events.async_error(AsyncError::QpError { context: self.context });
            }
        }
    }

    /// Delivers connection event `ev`. A final one comes after the teardown, which flushed a
    /// receive in progress, so a queue pair on an SRQ then has its SRQ receives done.
    pub fn deliver(&self, ev: ConnEvent, data: &[u8]) {
        tracing::debug!(context = self.context, ?ev, "shm: connection event");
        self.events.event(ev, data);
        if ev != ConnEvent::Established && self.srq.is_some() {
            self.events.srq_receives_done();
        }
    }

    /// Takes one receive from the SRQ or our own queue: its work-request id; its SGEs go to
    /// `st.recv_sges`.
    pub fn take_recv(&self, st: &mut QpState) -> Option<u64> {
        match &self.srq {
            Some(s) => {
                let r = s.take(&mut st.recv_sges);
                if r.is_none() {
                    s.starved.store(true, Ordering::SeqCst);
                    // A post may have slipped in before the flag was visible.
                    return s.take(&mut st.recv_sges);
                }
                r
            }
            None => {
                let r = st.rq.pop(&mut st.recv_sges);
                if r.is_none() {
                    self.need_recv.store(true, Ordering::SeqCst);
                }
                r
            }
        }
    }

    /// Tears the connection down: everything outstanding completes as flushed.
    pub fn teardown(&self, st: &mut QpState, a: &mut After) {
        st.link = None;
        st.sock = None;
        st.deadline = None;
        st.phase = Phase::Closed;
        st.graceful_pending = false;
        st.pending_ack = None;
        st.reads_out = 0;
        if st.dropped {
            return;
        }
        while st.sq.head < st.sq.tail {
            let e = st.sq.e[st.sq.slot(st.sq.head)];
            match e.done {
                Some((status, len)) if e.signaled || status != WcStatus::Success => {
                    self.complete_send(a, e.wr_id, e.kind, status, len)
                }
                Some(_) => {}
                None => self.complete_send(a, e.wr_id, e.kind, WcStatus::Flushed, 0),
            }
            st.sq.head += 1;
        }
        st.sq.issued = st.sq.head;
        st.sq.acked = st.sq.head;
        match st.rx {
            Rx::Inline { dest: Dest::Recv(wr_id, _), .. }
            | Rx::Inline { dest: Dest::Mem { immed: Some((wr_id, _)), .. }, .. } => {
                self.complete_recv(a, wr_id, WcStatus::Flushed, 0, None)
            }
            _ => {}
        }
        st.rx = Rx::Idle;
        while let Some(wr_id) = st.rq.pop(&mut st.recv_sges) {
            self.complete_recv(a, wr_id, WcStatus::Flushed, 0, None);
        }
        // Nothing can be posted to a closed queue pair any more (posts complete as flushed).
        st.sq = SendQueue::NONE;
        st.rq = RecvQueue::new(0, self.caps.max_recv_sge);
    }

    /// Puts the queue pair on its completion queues' lists, once: called before a connect or an
    /// accept (without the queue pair's lock, which a poll takes under the list's).
    pub fn attach(self: &Arc<Self>) {
        if !self.attached.swap(true, Ordering::AcqRel) {
            if let Some(cq) = &self.send_cq {
                self.slots[0].store(cq.attach(self), Ordering::Release);
            }
            match &self.recv_cq {
                Some(r) if self.send_cq.as_ref().is_some_and(|s| Arc::ptr_eq(r, s)) => {
                    self.slots[1].store(self.send_slot(), Ordering::Release)
                }
                Some(r) => self.slots[1].store(r.attach(self), Ordering::Release),
                None => {}
            }
        }
    }

    /// Our place on the send completion queue ([`NO_SLOT`] before [`QpShared::attach`]).
    pub fn send_slot(&self) -> u32 {
        self.slots[0].load(Ordering::Acquire)
    }

    /// Our place on the receive completion queue.
    pub fn recv_slot(&self) -> u32 {
        self.slots[1].load(Ordering::Acquire)
    }

    /// Gives the queue pair its send queue, as it starts connecting (under its lock).
    pub fn make_send_queue(&self, st: &mut QpState) {
        st.sq = SendQueue::new(self.caps.max_send_wr, self.caps.max_send_sge);
    }

    /// Ends the connection after `fault`: everything outstanding is flushed and the
    /// connection reported BROKEN; where the peer broke the protocol, the queue pair is also
    /// reported in error (the IA's asynchronous `DAT_ASYNC_ERROR_EP_BROKEN`), as a device
    /// reports a queue pair it moved to error.
    pub fn broken(&self, st: &mut QpState, a: &mut After, fault: Fault) {
        tracing::warn!(context = self.context, ?fault, "shm: connection broken");
        self.teardown(st, a);
        a.event = Some((ConnEvent::Broken, Vec::new()));
        a.qp_error = matches!(fault, Fault::Malformed(_));
    }

    /// Completes, in queue order, the send-queue ops at the head that are done.
    pub fn retire(&self, sq: &mut SendQueue, a: &mut After) {
        while sq.head < sq.issued {
            let e = &sq.e[sq.slot(sq.head)];
            let Some((status, len)) = e.done else { break };
            if e.signaled || status != WcStatus::Success {
                self.complete_send(a, e.wr_id, e.kind, status, len);
            }
            sq.head += 1;
        }
    }

    /// One data step from `h.cq`'s poll, in the poller's thread; returns how many completions
    /// `h` holds then. A broken connection is left to the progress thread (events are never
    /// delivered from inside a poll).
    pub fn drive_from_poll(&self, h: Handout<'_>) -> (usize, bool) {
        let cq = h.cq;
        let mut a;
        {
            let mut st = self.st.lock();
            // What is not Connected, or is going away, is the progress thread's.
            if st.phase != Phase::Connected || st.fault.is_some() || st.peer_gone || st.peer_disc {
                return (h.n, false);
            }
            let is = |c: &Option<Arc<ShmCq>>| c.as_ref().is_some_and(|c| std::ptr::eq(&**c, cq));
            let part = Part { requests: is(&self.recv_cq), completions: is(&self.send_cq) };
            if super::xfer::idle(&st, part) {
                return (h.n, false);
            }
            a = After { handout: Some(h), ..After::default() };
            self.data_step(&mut st, &mut a, part);
        }
        let n = a.handout.take().map_or(0, |h| h.n);
        if a.wake_send || a.wake_recv || a.event.is_some() {
            self.finish_except(a, Some(cq));
        }
        (n, true)
    }

    /// Runs (part of) the data path once; a fault is parked in `st.fault` for the progress
    /// thread.
    pub fn data_step(&self, st: &mut QpState, a: &mut After, part: Part) {
        match super::xfer::step(self, st, a, part) {
            Ok(true) => st.data_gen += 1,
            Ok(false) => {}
            Err(f) => {
                st.fault = Some(f);
                progress::engine().kick();
            }
        }
    }

    /// Rings the peer's progress-thread doorbell if that thread sleeps (only where no
    /// consumer's poll is expected to notice: ring space freed for a waiting producer).
    pub fn bell(st: &QpState) {
        if let (Some(l), Some(s)) = (&st.link, &st.sock) {
            fence(Ordering::SeqCst);
            if l.seg.sleeping(1 - l.side).load(Ordering::Relaxed) != 0 {
                let mut b = [0u8; wire::MAX_MSG];
                let n = wire::encode(&wire::Msg::Bell, &mut b);
                let _ = sys::send(s, &b[..n], &[]);
            }
        }
    }
}

/// The `QueuePair` the core holds. Dropping it closes the connection without further events.
pub struct ShmQp {
    pub sh: Arc<QpShared>,
    /// Its place among the device's queue pairs.
    pub held: Option<super::quota::Held>,
}

impl ShmQp {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        pd: u32,
        send_cq: Option<Arc<ShmCq>>,
        recv_cq: Option<Arc<ShmCq>>,
        srq: Option<Arc<ShmSrq>>,
        caps: QpCaps,
        context: u64,
        events: Arc<dyn ConnectionEvents>,
        async_events: Arc<dyn AsyncEvents>,
    ) -> ShmQp {
        // The queues get their storage when they are used (the send queue at connect time, the
        // receive queue at the first receive): an endpoint that is never connected stays small.
        let st = QpState {
            phase: Phase::Idle,
            sock: None,
            deadline: None,
            link: None,
            sq: SendQueue::NONE,
            rq: RecvQueue::new(0, caps.max_recv_sge),
            rx: Rx::Idle,
            recv_sges: SgeList::EMPTY,
            pending_ack: None,
            reads_out: 0,
            graceful_pending: false,
            peer_disc: false,
            peer_gone: false,
            sock_ready: false,
            dropped: false,
            fault: None,
            data_gen: 0,
            looked_gen: 0,
        };
        let sh = Arc::new(QpShared {
            pd,
            context,
            send_cq,
            recv_cq,
            srq,
            caps,
            events,
            async_events,
            st: SpinLock::new(st),
            need_recv: AtomicBool::new(false),
            attached: AtomicBool::new(false),
            slots: [AtomicU32::new(NO_SLOT), AtomicU32::new(NO_SLOT)],
        });
        ShmQp { sh, held: None }
    }
}

impl QpShared {
    /// Tells this QP's completion queues that it changed in a way no producer's ring announces
    /// (see the doorbell in [`super::cq`]).
    pub fn mark_cqs(&self) {
        for cq in self.cqs() {
            cq.mark();
        }
    }

    /// The distinct completion queues this QP completes on.
    fn cqs(&self) -> impl Iterator<Item = &Arc<ShmCq>> {
        let recv = self.recv_cq.as_ref().filter(|r| self.send_cq.as_ref().is_none_or(|s| !Arc::ptr_eq(r, s)));
        self.send_cq.iter().chain(recv)
    }
}

impl Drop for ShmQp {
    fn drop(&mut self) {
        for cq in self.sh.cqs() {
            cq.detach(&self.sh);
        }
        let mut st = self.sh.st.lock();
        st.dropped = true;
        if st.phase != Phase::Closed && st.phase != Phase::Idle {
            if let Some(s) = &st.sock {
                let mut b = [0u8; wire::MAX_MSG];
                let n = wire::encode(&wire::Msg::Disc, &mut b);
                let _ = sys::send(s, &b[..n], &[]);
            }
            let mut a = After::default();
            self.sh.teardown(&mut st, &mut a);
        }
        st.phase = Phase::Closed;
    }
}

impl QueuePair for ShmQp {
    fn post_send(&self, wr: &SendWr<'_>) -> DatResult<()> {
        let sh = &self.sh;
        let (kind, remote_addr, rkey, arg, swap) = match wr.op {
            SendOp::Send => (OpKind::Send, 0, 0, 0, 0),
            SendOp::RdmaWrite { remote_addr, rkey } => (OpKind::Write, remote_addr, rkey, 0, 0),
            SendOp::RdmaRead { remote_addr, rkey } => (OpKind::Read, remote_addr, rkey, 0, 0),
            SendOp::RdmaWriteImmed { remote_addr, rkey, immed } => {
                (OpKind::WriteImmed, remote_addr, rkey, immed as u64, 0)
            }
            SendOp::Atomic { remote_addr, rkey, op: AtomicOp::FetchAdd { add } } => {
                (OpKind::FetchAdd, remote_addr, rkey, add, 0)
            }
            SendOp::Atomic { remote_addr, rkey, op: AtomicOp::CmpSwap { compare, swap } } => {
                (OpKind::CmpSwap, remote_addr, rkey, compare, swap)
            }
        };
        let sink = matches!(kind, OpKind::Read | OpKind::FetchAdd | OpKind::CmpSwap);
        let total = recvq::validate(wr.sges, sh.pd, sink, sh.caps.max_send_sge.max(1))?;
        if total > super::MAX_MESSAGE {
            return Err(DatError::new(DAT_LENGTH_ERROR, 0));
        }
        let entry = SqEntry {
            wr_id: wr.wr_id,
            kind,
            remote_addr,
            rkey,
            arg,
            swap,
            signaled: wr.signaled,
            solicited: wr.solicited,
            fence: wr.fence,
            total,
            ..NO_ENTRY
        };
        let mut a = After::default();
        {
            let mut st = sh.st.lock();
            match st.phase {
                Phase::Connected => {}
                Phase::Closed => {
                    sh.complete_send(&mut a, wr.wr_id, kind, WcStatus::Flushed, 0);
                    drop(st);
                    sh.finish(a);
                    return Ok(());
                }
                _ => return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_UNCONNECTED)),
            }
            st.sq.push(entry, wr.sges)?;
            if let Err(f) = super::xfer::pump_tx(sh, &mut st, &mut a) {
                sh.broken(&mut st, &mut a, f);
            }
        }
        if a.wake_send || a.event.is_some() {
            sh.finish(a);
        }
        Ok(())
    }

    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()> {
        let sh = &self.sh;
        if sh.srq.is_some() {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_RECV_WATERMARK));
        }
        let checked = recvq::check_receive(sges, sh.pd, sh.caps.max_recv_sge.max(1))?;
        let mut st = sh.st.lock();
        if st.phase == Phase::Closed {
            let mut a = After::default();
            sh.complete_recv(&mut a, wr_id, WcStatus::Flushed, 0, None);
            drop(st);
            sh.finish(a);
            return Ok(());
        }
        if let Err(e) = st.rq.push(wr_id, sges, checked) {
            // Full, or not yet given its storage (the first receive of the queue pair).
            if st.rq.cap() != 0 {
                return Err(e);
            }
            st.rq = RecvQueue::new(sh.caps.max_recv_wr.max(1), sh.caps.max_recv_sge);
            st.rq.push(wr_id, sges, checked)?;
        }
        // A send waits for this receive: place it now, in the caller's thread.
        if sh.need_recv.load(Ordering::Acquire) && sh.need_recv.swap(false, Ordering::AcqRel) {
            let mut a = After::default();
            if st.phase == Phase::Connected && st.fault.is_none() {
                sh.data_step(&mut st, &mut a, Part::ALL);
            }
            drop(st);
            sh.finish(a);
        }
        Ok(())
    }

    fn bind_mw(&self, wr: &BindWr<'_>) -> DatResult<u32> {
        let sh = &self.sh;
        let mw: Arc<ShmMw> = MWS.get(wr.mw).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_RMR))?;
        let mr = match memtable::lookup(wr.mr.lkey()) {
            Some(e) if e.kind == Kind::Region => e,
            _ => return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0)),
        };
        if mr.pd != sh.pd || mw.pd != sh.pd {
            return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0));
        }
        if !mr.covers(wr.addr, wr.length) {
            return Err(DatError::new(DAT_LENGTH_ERROR, 0));
        }
        if wr.access.remote_write && !mr.access.local_write {
            return Err(DatError::new(DAT_PRIVILEGES_VIOLATION, 0));
        }
        if sh.st.lock().phase != Phase::Connected {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_UNCONNECTED));
        }
        // Without the queue pair's lock: a rebind waits out peers' copies under the old key
        // (see memtable::quiesce), and the queue pair's other work must not wait with it.
        let access = Access { local_read: false, local_write: false, ..wr.access };
        let share = mr.share.map(|s| s.shifted(wr.addr - mr.addr));
        let rkey = mw.bind(Entry { kind: Kind::Window, pd: sh.pd, addr: wr.addr, len: wr.length, access, share });
        if wr.signaled {
            if let Some(cq) = &sh.send_cq {
                let wc = WorkCompletion {
                    wr_id: wr.wr_id,
                    context: sh.context,
                    opcode: WcOpcode::Bind,
                    ..WorkCompletion::EMPTY
                };
                // Under the queue pair's lock, as every completion of it (see `Handout::offer`).
                let queued = {
                    let _st = sh.st.lock();
                    cq.push(wc)
                };
                if queued {
                    cq.wake();
                }
            }
        }
        Ok(rkey)
    }

    fn connect(&self, remote: SocketAddr, port: u64, private_data: &[u8], timeout: Option<Duration>) -> DatResult<()> {
        conn::connect(&self.sh, remote, port, private_data, timeout)
    }

    fn accept(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()> {
        conn::accept(&self.sh, req, private_data)
    }

    fn disconnect(&self, graceful: bool) -> DatResult<()> {
        let sh = &self.sh;
        let mut a = After::default();
        {
            let mut st = sh.st.lock();
            match st.phase {
                Phase::Idle | Phase::Closed => return Ok(()),
                Phase::Connected if graceful && !st.sq.is_empty() => {
                    st.graceful_pending = true;
                    drop(st);
                    progress::engine().kick();
                    return Ok(());
                }
                _ => {
                    conn::send_disc(&st);
                    sh.teardown(&mut st, &mut a);
                }
            }
        }
        // Reported before the call returns (as the verbs provider and OFED's do for an abrupt
        // close): consumers free the EP right after dat_ep_disconnect and count the
        // DISCONNECTED events they were promised (Debian's dtestcm).
        // Through `deliver`, which also reports an SRQ's receives done (the teardown flushed).
        sh.finish(a);
        sh.deliver(ConnEvent::Disconnected, &[]);
        Ok(())
    }

    fn posted_sends(&self) -> u32 {
        let st = self.sh.st.lock();
        (st.sq.tail - st.sq.head) as u32
    }

    fn posted_recvs(&self) -> u32 {
        let st = self.sh.st.lock();
        let taken = matches!(st.rx, Rx::Inline { dest: Dest::Recv(_, false), .. }) as u32;
        st.rq.len() as u32 + taken
    }
}

/// Bytes of the CQ type the trait hands out; used to find ours.
pub fn our_cq(cq: &Option<Arc<dyn CompletionQueue>>) -> DatResult<Option<Arc<ShmCq>>> {
    match cq {
        None => Ok(None),
        Some(c) => super::CQS.get(c).map(Some).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_EVD_REQUEST)),
    }
}
