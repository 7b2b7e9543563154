//! Unreliable datagram (UD) queue pairs: the IB extensions' UD endpoints between processes.
//!
//! A UD queue pair is addressed by (process id, queue pair number) ([`UdPeer`]: `node` the pid,
//! `qpn`), the name of its socket in the private rendezvous directory (`udsock.rs` says how
//! datagrams travel). The connect exchange runs over a connection qualifier like a reliable
//! connect, on the same SOCK_SEQPACKET handshake with the UD queue pair number in the hello
//! ([`wire::Hello::ud_qpn`]):
//!
//! ```text
//! active (UD QP a)                           passive (listener, then UD QP b)
//! connect(q<port>.sock) --REQ(pid, qpn a, private data)-->  ConnectionRequest (datagram)
//!                       <--ACC(pid, qpn b, private data)--  accept: Established(peer a, passive)
//! Established(peer b, accept data)
//!                       <--REJ(private data)--              reject: PeerRejected
//! ```
//! Nothing stays connected: either queue pair may connect and accept any number of times.
//! Each side names the other by the pid the kernel gives for the handshake connection
//! (`SO_PEERCRED`), never by the hello's: an ACC naming another process than the listener's ends
//! the connect `Broken`, a REQ naming another than its sender is refused before the listener
//! hears of it ([`super::conn::make_cr`]); both sides let that process send to this one's UD queue
//! pairs ([`udsock::admit`]) before their REQ or ACC goes out.
//!
//! A send is one datagram (an 8-byte header: magic, sender's qpn; then the message, gathered
//! by the kernel straight from the send's segments); it completes once sent. As on InfiniBand
//! UD, a datagram is lost when the peer is gone or has no receive posted.
//!
//! An arrival goes [`UD_HEADER_LEN`] bytes into the oldest posted receive, the length counting
//! those bytes (OFED's consumers expect the global-route-header slot there); the slot's bytes
//! are left as they were (InfiniBand without a global route header). Two take arrivals, one at
//! a time (whoever holds [`UdShared::arrivals`], so datagrams fill receives in arrival order):
//!
//! - every poll of the receive queue's completion queue, in the poller's thread: one
//!   `epoll_wait` over the inboxes of all its UD queue pairs ([`UdSet`]) that finds nothing when
//!   nothing came; what it places goes straight to the poller, as a reliable queue pair's data
//!   step does. A polling consumer waits for no other thread.
//! - a receive thread per queue pair, for a consumer that sleeps or does not poll. It stays
//!   out of the polls' way: were it to take arrivals while a consumer polls, the poll would wait
//!   whenever the thread is preempted holding them, and even waking it at every arrival made it
//!   and the consumer contend for the processor (on a busy two-processor machine Intel MPI's
//!   8-byte ping-pong then took about a millisecond a message in 4 of 10 runs, against none
//!   with the thread asleep). It places arrivals at once when a consumer sleeps (a sleeper armed on the
//!   completion queue, whose `arm` kicks the thread, or a CNO attached) or the queue pair's own
//!   sender waits for room at a peer (which may be waiting for room here: the sender places
//!   them itself, then kicks the thread if it must sleep); otherwise it looks every
//!   `DAT_SHM_LOOK_US` and places what is there if no poll came since its last look, as the
//!   progress thread does for a reliable connection nobody drives ([`receive_loop`]).

use super::super::eventfd::EventFd;
use super::super::spin::SpinLock;
use super::super::{
    BindWr, ConnEvent, ConnectionEvents, ConnectionRequest, QpCaps, QueuePair, SendWr, Sge, UdExchange, UdPeer,
    WcOpcode, WcStatus, WorkCompletion, UD_HEADER_LEN,
};
use super::cma::MAX_IOV;
use super::conn::{connect_listener, dialled_ip, is_local, send_msg, NO_LISTENER_GRACE};
use super::cq::{Handout, ShmCq};
use super::recvq::{self, RecvQueue, SgeList, ShmSrq};
use super::sys::{self, Recv};
use super::udsock::{self, Arrivals, Inbox, Outbox};
use super::{rendezvous, wire, xfer, CRS};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Largest UD message (the payload after the 8-byte datagram header).
pub const MAX_UD_MESSAGE: u64 = 64 * 1024;
/// First word of every datagram.
const MAGIC: u32 = 0x4455_5344; // "DSUD"
const DGRAM_HEADER: usize = 8;
/// The queue key every shm UD queue pair uses (the connect exchange reports it).
pub const QKEY: u32 = 0x1234_5678;
/// How long an active connect waits for its answer when the consumer gave no timeout.
const CONNECT_WAIT: Duration = Duration::from_secs(60);

/// The state the queue pair, its receive thread, its connect threads and its receive
/// completion queue's polls share.
pub struct UdShared {
    qpn: u32,
    pd: u32,
    caps: QpCaps,
    context: u64,
    inbox: Inbox,
    outbox: Outbox,
    send_cq: Option<Arc<ShmCq>>,
    recv_cq: Option<Arc<ShmCq>>,
    events: Arc<dyn ConnectionEvents>,
    rq: Mutex<RecvQueue>,
    /// The shared receive queue arrivals take their receives from instead of `rq`, if any.
    srq: Option<Arc<ShmSrq>>,
    /// Whoever holds it takes arrivals from the inbox.
    arrivals: SpinLock<Arrivals>,
    /// Polls of the receive completion queue (the receive thread's sign of a polling consumer).
    polls: AtomicU32,
    /// Makes the receive thread place arrivals now.
    kick: EventFd,
}

/// The UD queue pairs whose receive queue is one completion queue, and an epoll set of their
/// inboxes: a poll of the queue looks at all of them with one `epoll_wait`.
pub struct UdSet {
    members: SpinLock<Vec<Arc<UdShared>>>,
    /// Whether there are members (a poll of a queue without them takes no lock).
    any: AtomicBool,
    /// Made at the first attach (most completion queues never have a UD queue pair).
    epoll: OnceLock<OwnedFd>,
}

impl UdSet {
    pub const fn new() -> UdSet {
        UdSet { members: SpinLock::new(Vec::new()), any: AtomicBool::new(false), epoll: OnceLock::new() }
    }

    pub fn attach(&self, ud: &Arc<UdShared>) -> std::io::Result<()> {
        let ep = match self.epoll.get() {
            Some(ep) => ep,
            None => {
                let ep = udsock::epoll()?;
                self.epoll.get_or_init(|| ep)
            }
        };
        udsock::watch(ep, ud.inbox.fd())?;
        self.members.lock().push(ud.clone());
        self.any.store(true, Ordering::Relaxed);
        Ok(())
    }

    pub fn detach(&self, ud: &UdShared) {
        if let Some(ep) = self.epoll.get() {
            udsock::unwatch(ep, ud.inbox.fd());
        }
        let mut members = self.members.lock();
        members.retain(|u| !std::ptr::eq(&**u, ud));
        self.any.store(!members.is_empty(), Ordering::Relaxed);
    }

    /// A poll of the completion queue: one `epoll_wait` that does not wait, then each member
    /// counts the poll and takes its arrivals if any came.
    pub fn drive_from_poll(&self, h: &mut Handout<'_>) {
        if !self.any.load(Ordering::Relaxed) {
            return;
        }
        let arrived = self.epoll.get().is_some_and(udsock::ready);
        for ud in self.members.lock().iter() {
            ud.drive_from_poll(h, arrived);
        }
    }

    /// Makes the members' receive threads place arrivals now (a consumer goes to sleep).
    pub fn kick(&self) {
        if self.any.load(Ordering::Relaxed) {
            for ud in self.members.lock().iter() {
                ud.kick();
            }
        }
    }
}

/// A UD queue pair. Dropping it stops its receive thread and removes its socket.
pub struct ShmUdQp {
    sh: Arc<UdShared>,
    stop: Arc<EventFd>,
    receiver: Option<std::thread::JoinHandle<()>>,
    /// Its place among the device's queue pairs.
    pub held: Option<super::quota::Held>,
}

impl ShmUdQp {
    pub fn new(
        pd: u32,
        send_cq: Option<Arc<ShmCq>>,
        recv_cq: Option<Arc<ShmCq>>,
        srq: Option<Arc<ShmSrq>>,
        caps: QpCaps,
        context: u64,
        events: Arc<dyn ConnectionEvents>,
    ) -> DatResult<ShmUdQp> {
        static NEXT_QPN: AtomicU32 = AtomicU32::new(1);
        let qpn = NEXT_QPN.fetch_add(1, Ordering::Relaxed);
        let resource = |what: &str, e: std::io::Error| {
            tracing::warn!("shm: UD queue pair: {what}: {e}");
            DatError::insufficient(DAT_RESOURCE_TEP)
        };
        let inbox = Inbox::bind(qpn).map_err(|e| resource("socket", e))?;
        let stop = Arc::new(EventFd::new().map_err(|e| resource("eventfd", e))?);
        let kick = EventFd::new().map_err(|e| resource("eventfd", e))?;
        let sh = Arc::new(UdShared {
            qpn,
            pd,
            caps,
            context,
            inbox,
            outbox: Outbox::new(),
            send_cq,
            recv_cq,
            events,
            rq: Mutex::new(RecvQueue::new(caps.max_recv_wr.max(1), caps.max_recv_sge)),
            srq,
            arrivals: SpinLock::new(Arrivals::new(DGRAM_HEADER + MAX_UD_MESSAGE as usize)),
            polls: AtomicU32::new(0),
            kick,
        });
        if let Some(cq) = &sh.recv_cq {
            cq.attach_ud(&sh).map_err(|e| resource("epoll", e))?;
        }
        let (thread_sh, thread_stop) = (sh.clone(), stop.clone());
        let receiver = std::thread::Builder::new()
            .name("dat-shm-ud".into())
            .spawn(move || receive_loop(&thread_sh, &thread_stop, super::progress::look_every()))
            .map_err(|e| resource("receive thread", e))?;
        Ok(ShmUdQp { sh, stop, receiver: Some(receiver), held: None })
    }
}

impl Drop for ShmUdQp {
    fn drop(&mut self) {
        self.stop.ring();
        if let Some(t) = self.receiver.take() {
            let _ = t.join();
        }
        if let Some(cq) = &self.sh.recv_cq {
            cq.detach_ud(&self.sh);
        }
    }
}

/// Looks without a poll after which the receive thread watches the inbox again.
const IDLE_LOOKS: u32 = 100;

/// The receive thread (the module's introduction says when it places arrivals). Looking:
/// asleep until a kick, `stop` or the end of a look (`look`: `DAT_SHM_LOOK_US`; none: only a
/// kick); a look during which no poll came places what is there. Arrivals do not wake it.
/// Watching (a consumer sleeps or has a CNO, or [`IDLE_LOOKS`] looks passed without a poll):
/// asleep until an arrival, a kick or `stop`; it places an arrival at once, then looks again
/// unless a consumer waits.
fn receive_loop(sh: &UdShared, stop: &EventFd, look: Option<Duration>) {
    let look_ms = look.map_or(-1, |d| d.as_millis().clamp(1, i32::MAX as u128) as i32);
    let (mut watching, mut idle_looks) = (false, 0);
    loop {
        let polls = sh.polls.load(Ordering::Relaxed);
        let mut fds = [
            libc::pollfd { fd: if watching { sh.inbox.fd() } else { -1 }, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: stop.fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: sh.kick.fd(), events: libc::POLLIN, revents: 0 },
        ];
        sys::poll(&mut fds, if watching { -1 } else { look_ms });
        if fds[1].revents != 0 {
            return;
        }
        if fds[2].revents != 0 {
            sh.kick.clear();
        }
        let waiter = sh.recv_cq.as_ref().is_none_or(|cq| cq.has_waiter());
        let quiet = sh.polls.load(Ordering::Relaxed) == polls;
        // Placing when nothing came costs one epoll_wait.
        if fds[2].revents != 0 || waiter || watching || quiet {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sh.place_arrivals(true)));
            if r.is_err() {
                tracing::warn!("shm: UD receive thread recovered from a panic");
            }
        }
        idle_looks = if quiet && !watching { idle_looks + 1 } else { 0 };
        watching = waiter || idle_looks >= IDLE_LOOKS;
    }
}

impl UdShared {
    /// Places every pending datagram into a posted receive (or drops it, as UD does, when none
    /// is posted) from outside a poll (the receive thread, which `wait`s for another thread
    /// placing to finish; a sender waiting for room at a peer, which does not), then wakes the
    /// receive queue's waiter.
    fn place_arrivals(&self, wait: bool) {
        let Some(mut a) = (if wait { Some(self.arrivals.lock()) } else { self.arrivals.try_lock() }) else {
            return;
        };
        let mut queued = false;
        self.take_arrivals(&mut a, |wc| queued |= self.recv_cq.as_ref().is_some_and(|cq| cq.push(wc)));
        drop(a);
        if let Some(cq) = self.recv_cq.as_ref().filter(|_| queued) {
            cq.wake();
        }
    }

    /// A poll of the receive completion queue `h.cq`, in the poller's thread: counts it and,
    /// when something `arrived`, places every pending datagram unless another thread is
    /// placing (then what it places is queued for the next poll); the completions go into `h`
    /// as far as [`Handout::offer`] lets them, the rest into the queue (no wake-up: this poll
    /// hands them out).
    fn drive_from_poll(&self, h: &mut Handout<'_>, arrived: bool) {
        self.polls.fetch_add(1, Ordering::Relaxed);
        if !arrived {
            return;
        }
        if let Some(mut a) = self.arrivals.try_lock() {
            let cq = h.cq;
            self.take_arrivals(&mut a, |wc| {
                if let Err(wc) = h.offer(cq, wc) {
                    cq.push(wc);
                }
            });
        }
    }

    /// Makes the receive thread place arrivals now.
    fn kick(&self) {
        self.kick.ring();
    }

    /// Takes the datagrams that have arrived and places them, giving each completion to
    /// `deliver`.
    fn take_arrivals(&self, a: &mut Arrivals, mut deliver: impl FnMut(WorkCompletion)) {
        self.inbox.take(a, |d| {
            let Some((src_qpn, msg)) = parse(d) else {
                tracing::debug!(qpn = self.qpn, "shm: UD: malformed datagram dropped");
                return;
            };
            if let Some(wc) = self.place(src_qpn, msg) {
                deliver(wc);
            }
        });
    }

    /// Places one message into the oldest posted receive (of the SRQ, when the queue pair has
    /// one): its completion; none when no receive is posted.
    fn place(&self, src_qpn: u32, msg: &[u8]) -> Option<WorkCompletion> {
        let mut sges = SgeList::EMPTY;
        let taken = match &self.srq {
            Some(srq) => srq.take(&mut sges),
            None => self.rq.lock().pop(&mut sges),
        };
        let Some(wr_id) = taken else {
            tracing::debug!(qpn = self.qpn, src_qpn, "shm: UD: no receive posted, datagram dropped");
            return None;
        };
        let len = msg.len() as u64;
        let status = if UD_HEADER_LEN + len > sges.total() {
            WcStatus::LocalLength
        } else if !recvq::still_valid(sges.as_slice(), self.pd, recvq::LOCAL_WRITE) {
            // a region of the receive was deregistered since its post: nothing lands (a verbs
            // device completes such a receive with a local protection error too)
            WcStatus::LocalProtection
        } else {
            // SAFETY: the receive's SGEs are writable registered memory of this process (checked
            // just now) and hold UD_HEADER_LEN + len bytes; msg is len readable bytes.
            unsafe { xfer::scatter(sges.as_slice(), UD_HEADER_LEN, msg.as_ptr(), len) };
            WcStatus::Success
        };
        let byte_len = if status == WcStatus::Success { UD_HEADER_LEN + len } else { 0 };
        Some(WorkCompletion {
            wr_id,
            context: self.context,
            status,
            opcode: WcOpcode::RecvUd,
            immed: src_qpn,
            byte_len,
        })
    }

    /// Our hello: who we are; `ip` the IPv4 address a connect dialled (the request's remote
    /// address at the listener, as for a reliable connect).
    fn hello(&self, ip: [u8; 4]) -> wire::Hello {
        let (send_cq, recv_cq) = (wire::NO_CQ, wire::NO_CQ);
        wire::Hello { pid: sys::getpid() as u32, ud_qpn: self.qpn, ip, send_cq, recv_cq, ..Default::default() }
    }

    /// Runs an active connect's exchange (in its own thread) and reports the outcome.
    fn run_connect(&self, remote: SocketAddr, port: u64, private_data: &[u8], deadline: Instant) {
        let (ev, data, peer) = match self.exchange(remote, port, private_data, deadline) {
            Ok(outcome) => outcome,
            Err(ev) => (ev, Vec::new(), UdPeer::default()),
        };
        tracing::debug!(qpn = self.qpn, ?ev, ?peer, "shm: UD connect");
        self.events.ud_event(&UdExchange { ev, private_data: &data, peer, remote, passive: false });
    }

    fn exchange(
        &self,
        remote: SocketAddr,
        port: u64,
        private_data: &[u8],
        deadline: Instant,
    ) -> Result<(ConnEvent, Vec<u8>, UdPeer), ConnEvent> {
        let ip = dialled_ip(remote);
        let path = rendezvous::socket_path(port).map_err(|_| ConnEvent::Unreachable)?;
        let sock = sys::seqpacket().map_err(|_| ConnEvent::Unreachable)?;
        connect_listener(&sock, &path, NO_LISTENER_GRACE).map_err(|_| ConnEvent::NonPeerRejected)?;
        // Who listens, from the kernel: the accept must name that process.
        let listener_pid = sys::peer_pid_same_uid(&sock).map_err(|_| ConnEvent::NonPeerRejected)?;
        udsock::admit(listener_pid);
        send_msg(&sock, &wire::Msg::Req(self.hello(ip), private_data), &[]).map_err(|_| ConnEvent::NonPeerRejected)?;
        let mut buf = [0u8; wire::MAX_MSG];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ConnEvent::TimedOut);
            }
            let mut fds = [libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
            sys::poll(&mut fds, left.as_millis().clamp(1, 60_000) as i32);
            let n = match sys::recv(&sock, &mut buf) {
                Ok(Recv::Data(n, _)) => n,
                Ok(Recv::Empty) => continue,
                Ok(Recv::Closed) | Err(_) => return Err(ConnEvent::NonPeerRejected),
            };
            return match wire::decode(&buf[..n]) {
                Ok(wire::Msg::Acc(h, pd)) if h.ud_qpn != wire::NO_UD && h.pid == listener_pid as u32 => {
                    let peer = UdPeer { node: listener_pid as u64, qpn: h.ud_qpn, qkey: QKEY };
                    Ok((ConnEvent::Established, pd.to_vec(), peer))
                }
                Ok(wire::Msg::Rej(pd)) => Ok((ConnEvent::PeerRejected, pd.to_vec(), UdPeer::default())),
                _ => Err(ConnEvent::Broken),
            };
        }
    }
}

/// The header of a datagram from queue pair `src_qpn`.
pub(super) fn datagram_header(src_qpn: u32) -> [u8; DGRAM_HEADER] {
    let mut head = [0u8; DGRAM_HEADER];
    head[..4].copy_from_slice(&MAGIC.to_le_bytes());
    head[4..].copy_from_slice(&src_qpn.to_le_bytes());
    head
}

/// The sender's queue pair number and the message of a datagram, if it is one of ours.
pub(super) fn parse(d: &[u8]) -> Option<(u32, &[u8])> {
    let (head, msg) = d.split_first_chunk::<DGRAM_HEADER>()?;
    let magic = u32::from_le_bytes(head[..4].try_into().ok()?);
    let src_qpn = u32::from_le_bytes(head[4..].try_into().ok()?);
    (magic == MAGIC).then_some((src_qpn, msg))
}

/// Runs `f` in a short-lived thread of its own (connection outcomes are never reported from
/// inside the consumer's call).
fn in_thread(f: impl FnOnce() + Send + 'static) -> DatResult<()> {
    std::thread::Builder::new().name("dat-shm-ud-cm".into()).spawn(f).map(drop).map_err(|e| {
        tracing::warn!("shm: UD connection thread: {e}");
        DatError::insufficient(DAT_RESOURCE_MEMORY)
    })
}

impl QueuePair for ShmUdQp {
    /// Only [`QueuePair::post_send_ud`] sends on a UD queue pair.
    fn post_send(&self, _wr: &SendWr<'_>) -> DatResult<()> {
        Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0))
    }

    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()> {
        let sh = &self.sh;
        let checked = recvq::check_receive(sges, sh.pd, sh.caps.max_recv_sge.max(1))?;
        sh.rq.lock().push(wr_id, sges, checked)
    }

    fn bind_mw(&self, _wr: &BindWr<'_>) -> DatResult<u32> {
        Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0))
    }

    fn connect(&self, remote: SocketAddr, port: u64, private_data: &[u8], timeout: Option<Duration>) -> DatResult<()> {
        if private_data.len() > wire::MAX_PRIVATE_DATA {
            return Err(DatError::invalid_arg(5));
        }
        let sh = self.sh.clone();
        if !is_local(remote.ip()) {
            let ev = ConnEvent::Unreachable;
            let failed = move || sh.events.ud_event(&UdExchange::failed(ev, remote, false));
            return in_thread(failed);
        }
        let deadline = Instant::now() + timeout.unwrap_or(CONNECT_WAIT);
        let pd = private_data.to_vec();
        in_thread(move || sh.run_connect(remote, port, &pd, deadline))
    }

    fn accept(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()> {
        if private_data.len() > wire::MAX_PRIVATE_DATA {
            return Err(DatError::invalid_arg(3));
        }
        let cr = CRS.get(req).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_CR))?;
        if !req.is_datagram() {
            // A reliable connection asks; a UD queue pair cannot answer it.
            return Err(DatError::invalid_arg(2));
        }
        let sock = cr.sock.lock().take().ok_or(DatError::invalid_state(0))?;
        cr.decided.store(true, Ordering::SeqCst);
        let sh = self.sh.clone();
        // The requester's pid is the kernel's (its request naming another was refused).
        udsock::admit(cr.peer_pid);
        let acc = send_msg(&sock, &wire::Msg::Acc(sh.hello([0; 4]), private_data), &[]);
        let request_data = cr.private.clone();
        let peer = UdPeer { node: cr.peer_pid as u64, qpn: cr.hello.ud_qpn, qkey: QKEY };
        let remote = cr.remote;
        in_thread(move || match acc {
            Ok(()) => {
                let ev = ConnEvent::Established;
                sh.events.ud_event(&UdExchange { ev, private_data: &request_data, peer, remote, passive: true })
            }
            Err(e) => {
                tracing::debug!("shm: UD accept: peer gone: {e}");
                sh.events.ud_event(&UdExchange::failed(ConnEvent::Broken, remote, true))
            }
        })
    }

    /// Nothing stays connected on a UD queue pair: nothing to do.
    fn disconnect(&self, _graceful: bool) -> DatResult<()> {
        Ok(())
    }

    fn posted_recvs(&self) -> u32 {
        self.sh.rq.lock().len() as u32
    }

    /// Sends complete as they are posted.
    fn posted_sends(&self) -> u32 {
        0
    }

    fn post_send_ud(&self, wr: &SendWr<'_>, peer: UdPeer) -> DatResult<()> {
        let sh = &self.sh;
        let total = recvq::validate(wr.sges, sh.pd, false, sh.caps.max_send_sge.max(1))?;
        let status = if total > MAX_UD_MESSAGE {
            WcStatus::LocalLength
        } else {
            let head = datagram_header(sh.qpn);
            // SAFETY: the SGEs were validated as registered memory of this process.
            if let Err(e) = unsafe { sh.send_to(peer, &head, wr.sges) } {
                // Lost, as a UD datagram may be; the send itself completed.
                tracing::debug!(?peer, "shm: UD send: datagram lost: {e}");
            }
            WcStatus::Success
        };
        if wr.signaled || status != WcStatus::Success {
            if let Some(cq) = &sh.send_cq {
                let wc = WorkCompletion {
                    wr_id: wr.wr_id,
                    context: sh.context,
                    status,
                    opcode: WcOpcode::SendUd,
                    immed: 0,
                    byte_len: if status == WcStatus::Success { total } else { 0 },
                };
                if cq.push(wc) {
                    cq.wake();
                }
            }
        }
        Ok(())
    }
}

impl UdShared {
    /// Sends one datagram, `head` and then the bytes of `sges`, to the UD queue pair `peer`;
    /// while the peer is full, places our own arrivals (the peer may be waiting for room here,
    /// and we do not poll meanwhile), and kicks our receive thread before sleeping.
    ///
    /// # Safety
    /// The SGEs must describe readable memory (validated against the memory table), at most
    /// [`MAX_IOV`] of them.
    unsafe fn send_to(&self, peer: UdPeer, head: &[u8; DGRAM_HEADER], sges: &[Sge]) -> std::io::Result<()> {
        let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; 1 + MAX_IOV];
        iov[0] = libc::iovec { iov_base: head.as_ptr() as *mut libc::c_void, iov_len: DGRAM_HEADER };
        let mut n = 1;
        for s in sges.iter().filter(|s| s.length != 0) {
            iov[n] = libc::iovec { iov_base: s.addr as *mut libc::c_void, iov_len: s.length as usize };
            n += 1;
        }
        let stalled = |sleeping| {
            self.place_arrivals(false);
            if sleeping {
                self.kick();
            }
        };
        // SAFETY: the header and (per the contract) the SGEs are readable memory.
        unsafe { self.outbox.send(peer.node, peer.qpn, &iov[..n], stalled) }
    }
}
