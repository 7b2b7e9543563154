//! Unreliable datagram (UD) queue pairs: the IB extensions' UD endpoints between processes.
//!
//! A UD queue pair is a unix `SOCK_DGRAM` socket in the private rendezvous directory, named by
//! (process id, queue pair number): `ud-<pid>-<qpn>.sock`. That pair is its address
//! ([`UdPeer`]: `node` the pid, `qpn`). The connect exchange runs over a connection qualifier
//! like a reliable connect, on the same SOCK_SEQPACKET handshake with the UD queue pair number
//! in the hello ([`wire::Hello::ud_qpn`]):
//!
//! ```text
//! active (UD QP a)                           passive (listener, then UD QP b)
//! connect(q<port>.sock) --REQ(pid, qpn a, private data)-->  ConnectionRequest (datagram)
//!                       <--ACC(pid, qpn b, private data)--  accept: Established(peer a, passive)
//! Established(peer b, accept data)
//!                       <--REJ(private data)--              reject: PeerRejected
//! ```
//! Nothing stays connected: either queue pair may connect and accept any number of times.
//!
//! A send is one datagram (an 8-byte header: magic, sender's qpn; then the message, gathered
//! by the kernel straight from the send's segments) sent to the peer's socket; it completes
//! once sent. As on InfiniBand UD, a datagram is lost when the peer is gone or has no receive
//! posted, not because the peer's receive thread has not yet taken the datagrams before it:
//! the kernel queues only `net.unix.max_dgram_qlen` datagrams (10 by default) at a socket, so a
//! send to a full queue waits for room as a sender on a lossless fabric waits for link credit,
//! for at most [`FULL_PEER_WAIT`] (a stopped peer), and only then drops the datagram.
//! A receive thread per queue pair sleeps in poll(2) on the socket and places each
//! datagram [`UD_HEADER_LEN`] bytes into the oldest posted receive, the length counting those
//! bytes (OFED's consumers expect the global-route-header slot there); the slot's bytes are
//! left as they were (InfiniBand without a global route header).

use super::super::eventfd::EventFd;
use super::super::{
    Access, BindWr, ConnEvent, ConnectionEvents, ConnectionRequest, QpCaps, QueuePair, SendWr, Sge, UdExchange, UdPeer,
    WcOpcode, WcStatus, WorkCompletion, UD_HEADER_LEN,
};
use super::cma::MAX_IOV;
use super::conn::{connect_listener, dialled_ip, is_local, send_msg, NO_LISTENER_GRACE};
use super::cq::ShmCq;
use super::recvq::{self, RecvQueue, SgeList, ShmSrq};
use super::sys::{self, Recv};
use super::{rendezvous, wire, xfer, CRS};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
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
/// How long a send waits for room at a peer whose socket queue is full before the datagram is
/// lost (the peer's receive thread empties it within a scheduling delay unless the peer is
/// stopped).
const FULL_PEER_WAIT: libc::timeval = libc::timeval { tv_sec: 0, tv_usec: 100_000 };

/// The socket address of UD queue pair `qpn` of process `pid`: `ud-<pid>-<qpn>.sock` in the
/// rendezvous directory, written in place (a send builds its peer's without allocating).
fn ud_addr(pid: u64, qpn: u32) -> std::io::Result<libc::sockaddr_un> {
    /// Writes into a `sun_path`, keeping its last byte the terminating zero.
    struct SunPath<'a>(&'a mut [libc::c_char], usize);
    impl SunPath<'_> {
        fn put(&mut self, b: &[u8]) -> std::fmt::Result {
            let room = self.0.len() - 1 - self.1;
            if b.len() > room {
                return Err(std::fmt::Error);
            }
            for (d, s) in self.0[self.1..].iter_mut().zip(b) {
                *d = *s as libc::c_char;
            }
            self.1 += b.len();
            Ok(())
        }
    }
    impl std::fmt::Write for SunPath<'_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.put(s.as_bytes())
        }
    }
    // SAFETY: sockaddr_un is plain old data.
    let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let mut w = SunPath(&mut a.sun_path, 0);
    w.put(rendezvous::dir()?.as_os_str().as_bytes())
        .and_then(|()| write!(w, "/ud-{pid}-{qpn}.sock"))
        .map_err(|_| std::io::Error::other("socket path too long"))?;
    Ok(a)
}

/// The path of a socket address made by [`ud_addr`].
fn addr_path(a: &libc::sockaddr_un) -> PathBuf {
    let bytes: Vec<u8> = a.sun_path.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    PathBuf::from(std::ffi::OsStr::from_bytes(&bytes))
}

const ADDR_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;

/// A datagram socket whose sends wait up to [`FULL_PEER_WAIT`] for room at the peer (its
/// receive thread reads it with `MSG_DONTWAIT`).
fn dgram_socket() -> std::io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sets SO_SNDTIMEO of a live socket from a timeval of the size passed.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            &FULL_PEER_WAIT as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(sock)
}

/// The state the queue pair, its receive thread and its connect threads share.
struct UdShared {
    qpn: u32,
    pd: u32,
    caps: QpCaps,
    context: u64,
    sock: OwnedFd,
    path: PathBuf,
    send_cq: Option<Arc<ShmCq>>,
    recv_cq: Option<Arc<ShmCq>>,
    events: Arc<dyn ConnectionEvents>,
    rq: Mutex<RecvQueue>,
    /// The shared receive queue arrivals take their receives from instead of `rq`, if any.
    srq: Option<Arc<ShmSrq>>,
}

/// A UD queue pair. Dropping it stops its receive thread and removes its socket.
pub struct ShmUdQp {
    sh: Arc<UdShared>,
    stop: Arc<EventFd>,
    receiver: Option<std::thread::JoinHandle<()>>,
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
        let addr = ud_addr(sys::getpid() as u64, qpn).map_err(|e| resource("address", e))?;
        let path = addr_path(&addr);
        let sock = dgram_socket().map_err(|e| resource("socket", e))?;
        let _ = std::fs::remove_file(&path);
        // SAFETY: binds a live socket to a filled sockaddr_un of ADDR_LEN bytes.
        if unsafe { libc::bind(sock.as_raw_fd(), &addr as *const _ as *const libc::sockaddr, ADDR_LEN) } != 0 {
            return Err(resource("bind", std::io::Error::last_os_error()));
        }
        let stop = Arc::new(EventFd::new().map_err(|e| resource("eventfd", e))?);
        let sh = Arc::new(UdShared {
            qpn,
            pd,
            caps,
            context,
            sock,
            path,
            send_cq,
            recv_cq,
            events,
            rq: Mutex::new(RecvQueue::new(caps.max_recv_wr.max(1), caps.max_recv_sge)),
            srq,
        });
        let (thread_sh, thread_stop) = (sh.clone(), stop.clone());
        let receiver = std::thread::Builder::new()
            .name("dat-shm-ud".into())
            .spawn(move || receive_loop(&thread_sh, &thread_stop))
            .map_err(|e| resource("receive thread", e))?;
        Ok(ShmUdQp { sh, stop, receiver: Some(receiver) })
    }
}

impl Drop for ShmUdQp {
    fn drop(&mut self) {
        self.stop.ring();
        if let Some(t) = self.receiver.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.sh.path);
    }
}

/// The receive thread: waits for datagrams (or `stop`) and places them.
fn receive_loop(sh: &UdShared, stop: &EventFd) {
    let mut buf = vec![0u8; DGRAM_HEADER + MAX_UD_MESSAGE as usize];
    loop {
        let mut fds = [
            libc::pollfd { fd: sh.sock.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: stop.fd(), events: libc::POLLIN, revents: 0 },
        ];
        sys::poll(&mut fds, -1);
        if fds[1].revents != 0 {
            return;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sh.drain(&mut buf)));
        if r.is_err() {
            tracing::warn!("shm: UD receive thread recovered from a panic");
        }
    }
}

impl UdShared {
    /// Places every pending datagram into a posted receive (or drops it, as UD does, when
    /// none is posted), then wakes the receive queue's waiter.
    fn drain(&self, buf: &mut [u8]) {
        let mut placed = false;
        loop {
            let n = match sys::recv(&self.sock, buf) {
                Ok(Recv::Data(n, _)) => n,
                Ok(Recv::Empty | Recv::Closed) => break,
                Err(e) => {
                    tracing::debug!("shm: UD receive: {e}");
                    break;
                }
            };
            let Some((src_qpn, msg)) = parse(&buf[..n]) else {
                tracing::debug!(qpn = self.qpn, "shm: UD: malformed datagram dropped");
                continue;
            };
            placed |= self.place(src_qpn, msg);
        }
        if placed {
            if let Some(cq) = &self.recv_cq {
                cq.wake();
            }
        }
    }

    /// Places one message into the oldest posted receive (of the SRQ, when the queue pair has
    /// one); false when none is posted.
    fn place(&self, src_qpn: u32, msg: &[u8]) -> bool {
        let mut sges = SgeList::EMPTY;
        let taken = match &self.srq {
            Some(srq) => srq.take(&mut sges),
            None => self.rq.lock().pop(&mut sges),
        };
        let Some(wr_id) = taken else {
            tracing::debug!(qpn = self.qpn, src_qpn, "shm: UD: no receive posted, datagram dropped");
            return false;
        };
        let len = msg.len() as u64;
        let writable = Access { local_write: true, ..Access::default() };
        let status = if UD_HEADER_LEN + len > sges.total() {
            WcStatus::LocalLength
        } else if !recvq::still_valid(sges.as_slice(), self.pd, writable) {
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
        let wc =
            WorkCompletion { wr_id, context: self.context, status, opcode: WcOpcode::RecvUd, immed: src_qpn, byte_len };
        self.recv_cq.as_ref().is_some_and(|cq| cq.push(wc))
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
                Ok(wire::Msg::Acc(h, pd)) if h.ud_qpn != wire::NO_UD => {
                    let peer = UdPeer { node: h.pid as u64, qpn: h.ud_qpn, qkey: QKEY };
                    Ok((ConnEvent::Established, pd.to_vec(), peer))
                }
                Ok(wire::Msg::Rej(pd)) => Ok((ConnEvent::PeerRejected, pd.to_vec(), UdPeer::default())),
                _ => Err(ConnEvent::Broken),
            };
        }
    }
}

/// The sender's queue pair number and the message of a datagram, if it is one of ours.
fn parse(d: &[u8]) -> Option<(u32, &[u8])> {
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
            let mut head = [0u8; DGRAM_HEADER];
            head[..4].copy_from_slice(&MAGIC.to_le_bytes());
            head[4..].copy_from_slice(&sh.qpn.to_le_bytes());
            // SAFETY: the SGEs were validated as registered memory of this process.
            if let Err(e) = unsafe { send_to(&sh.sock, peer, &head, wr.sges) } {
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

/// Sends one datagram, `head` and then the bytes of `sges`, to the UD queue pair `peer`; waits
/// up to [`FULL_PEER_WAIT`] while the peer's socket queue is full.
///
/// # Safety
/// The SGEs must describe readable memory (validated against the memory table), at most
/// [`MAX_IOV`] of them.
unsafe fn send_to(sock: &OwnedFd, peer: UdPeer, head: &[u8; DGRAM_HEADER], sges: &[Sge]) -> std::io::Result<()> {
    let addr = ud_addr(peer.node, peer.qpn)?;
    let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; 1 + MAX_IOV];
    iov[0] = libc::iovec { iov_base: head.as_ptr() as *mut libc::c_void, iov_len: DGRAM_HEADER };
    let mut n = 1;
    for s in sges.iter().filter(|s| s.length != 0) {
        iov[n] = libc::iovec { iov_base: s.addr as *mut libc::c_void, iov_len: s.length as usize };
        n += 1;
    }
    // SAFETY: msghdr is plain old data.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = &addr as *const libc::sockaddr_un as *mut libc::c_void;
    msg.msg_namelen = ADDR_LEN;
    msg.msg_iov = iov.as_mut_ptr();
    msg.msg_iovlen = n as _;
    loop {
        // SAFETY: msg names a filled sockaddr_un and `n` iovecs of readable memory (the
        // header, and the SGEs per the contract), all live for the call.
        if unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) } >= 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
