//! Connection management, rdma_cm style, over a unix SOCK_SEQPACKET socket per connection:
//!
//! ```text
//! active                                   passive
//! connect(q<port>.sock) --REQ(pid, probe word, private data)-->  listener: ConnectionRequest
//!                        <--ACC(pid, probe word, private data) + segment memfd
//!                                               + published area (2 memfds)--  accept
//! map segment, probe     --RTU(probe result) + published area (2 memfds)-->
//! Established(accept pd)                                          Established
//!                        <--REJ--                                 reject (PeerRejected)
//! ```
//! After that the socket carries only doorbells and DISC; end-of-file without DISC means the
//! peer died (the kernel closes its sockets on kill -9), which breaks the connection at once.

use super::super::{ConnEvent, ConnectionRequest, Listener, ListenerEvents};
use super::area::{self, PeerArea};
use super::qp::{After, Fault, Link, PeerEnd, Phase, QpShared, QpState};
use super::ring::{segment_len, Segment};
use super::sys::{self, Mapping, Recv};
use super::{cma, progress, rendezvous, wire, CRS};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) fn send_msg(sock: &OwnedFd, m: &wire::Msg<'_>, fds: &[&OwnedFd]) -> std::io::Result<()> {
    let mut b = [0u8; wire::MAX_MSG];
    let n = wire::encode(m, &mut b);
    let mut raw = [0; sys::MAX_FDS];
    for (r, f) in raw.iter_mut().zip(fds) {
        *r = f.as_raw_fd();
    }
    sys::send(sock, &b[..n], &raw[..fds.len().min(sys::MAX_FDS)])
}

pub fn send_disc(st: &QpState) {
    if let Some(s) = &st.sock {
        if let Err(e) = send_msg(s, &wire::Msg::Disc, &[]) {
            tracing::debug!("shm: DISC not sent: {e}");
        }
    }
}

fn hello(sh: &QpShared, can_cma_you: bool, ip: [u8; 4]) -> wire::Hello {
    let (cookie_addr, cookie_val) = cma::cookie();
    let cq = |c: &Option<Arc<super::cq::ShmCq>>| c.as_ref().map_or(wire::NO_CQ, |c| c.wake_index());
    wire::Hello {
        pid: sys::getpid() as u32,
        can_cma_you,
        cookie_addr,
        cookie_val,
        ip,
        send_cq: cq(&sh.send_cq),
        recv_cq: cq(&sh.recv_cq),
        pd: sh.pd,
        ud_qpn: wire::NO_UD,
        send_slot: sh.send_slot(),
        recv_slot: sh.recv_slot(),
    }
}

/// Maps the published area a peer passed with ACC or RTU (its wake-word and table fds).
fn peer_area(fds: &[OwnedFd]) -> Result<PeerArea, Fault> {
    let [wake, table] = fds else { return Err(Fault::Malformed("handshake without the published area")) };
    PeerArea::map(wake, table).map_err(|_| Fault::Malformed("cannot map the published area"))
}

/// Whether `ip` is an address of this host.
pub(super) fn is_local(ip: IpAddr) -> bool {
    if ip.is_loopback() || ip.is_unspecified() {
        return true;
    }
    let mut found = false;
    let mut ifa: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills a list we free below; we only read sockaddrs of known family.
    unsafe {
        if libc::getifaddrs(&mut ifa) != 0 {
            return false;
        }
        let mut p = ifa;
        while !p.is_null() {
            let a = (*p).ifa_addr;
            if !a.is_null() {
                match (*a).sa_family as i32 {
                    libc::AF_INET => {
                        let sin = &*(a as *const libc::sockaddr_in);
                        found |= IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr))) == ip;
                    }
                    libc::AF_INET6 => {
                        let sin6 = &*(a as *const libc::sockaddr_in6);
                        found |= IpAddr::V6(sin6.sin6_addr.s6_addr.into()) == ip;
                    }
                    _ => {}
                }
            }
            p = (*p).ifa_next;
        }
        libc::freeifaddrs(ifa);
    }
    found
}

/// The IPv4 address a connect to `remote` tells the listener it dialled (loopback for an IPv6
/// or unspecified one).
pub(super) fn dialled_ip(remote: SocketAddr) -> [u8; 4] {
    match remote.ip() {
        IpAddr::V4(v4) if !v4.is_unspecified() => v4.octets(),
        _ => [127, 0, 0, 1],
    }
}

/// How long a connect keeps trying a qualifier nobody listens on before the connection is
/// NON_PEER_REJECTED. An rdma_cm connect spends at least this long resolving address and route
/// before its request leaves, and consumers rely on it: Debian's dtest server creates its PSP
/// only after it has sent the client its address over a TCP socket, and the client connects as
/// soon as it has read it.
pub const NO_LISTENER_GRACE: Duration = Duration::from_millis(250);

/// Connects `sock` to the listener socket at `path`, trying again while nobody listens there
/// (no socket file, or a dead listener's) or its backlog is full (EAGAIN: the listener's
/// progress thread has not taken the connects before ours yet) for at most `grace`. The caller
/// holds its QP's lock meanwhile: the QP is idle, so only a connect that cannot go in waits.
pub(super) fn connect_listener(sock: &OwnedFd, path: &std::path::Path, grace: Duration) -> std::io::Result<()> {
    let give_up = Instant::now() + grace;
    let mut pause = Duration::from_millis(1);
    loop {
        match sys::connect(sock, path) {
            Err(e)
                if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ECONNREFUSED | libc::EAGAIN))
                    && Instant::now() < give_up =>
            {
                std::thread::sleep(pause.min(give_up.saturating_duration_since(Instant::now())));
                pause = (pause * 2).min(Duration::from_millis(16));
            }
            result => return result,
        }
    }
}

/// Starts an active connect; the outcome arrives as a connection event.
pub fn connect(
    sh: &Arc<QpShared>,
    remote: SocketAddr,
    port: u64,
    pd: &[u8],
    timeout: Option<Duration>,
) -> DatResult<()> {
    if pd.len() > wire::MAX_PRIVATE_DATA {
        return Err(DatError::invalid_arg(5));
    }
    sh.attach();
    let mut st = sh.st.lock();
    if st.phase != Phase::Idle {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_UNCONNECTED));
    }
    let fail = |st: &mut QpState, ev: ConnEvent| {
        st.phase = Phase::Closed;
        progress::engine().defer(sh.clone(), ev, Vec::new());
        Ok(())
    };
    if !is_local(remote.ip()) {
        tracing::debug!(%remote, "shm: not an address of this host");
        return fail(&mut st, ConnEvent::Unreachable);
    }
    let path = rendezvous::socket_path(port).map_err(|e| {
        tracing::warn!("shm: rendezvous directory: {e}");
        DatError::insufficient(DAT_RESOURCE_DEVICE)
    })?;
    let sock = sys::seqpacket().map_err(|e| {
        tracing::warn!("shm: socket: {e}");
        DatError::insufficient(DAT_RESOURCE_DEVICE)
    })?;
    let grace = timeout.map_or(NO_LISTENER_GRACE, |t| t.min(NO_LISTENER_GRACE));
    if let Err(e) = connect_listener(&sock, &path, grace) {
        tracing::debug!(port, "shm: connect: {e}");
        return fail(&mut st, ConnEvent::NonPeerRejected);
    }
    let ip = dialled_ip(remote);
    if let Err(e) = send_msg(&sock, &wire::Msg::Req(hello(sh, false, ip), pd), &[]) {
        tracing::debug!(port, "shm: connect request: {e}");
        return fail(&mut st, ConnEvent::NonPeerRejected);
    }
    st.sock = Some(Arc::new(sock));
    st.deadline = timeout.map(|t| Instant::now() + t);
    sh.make_send_queue(&mut st);
    st.phase = Phase::Connecting;
    drop(st);
    progress::engine().add_qp(sh.clone());
    Ok(())
}

/// Accepts `req` on `sh`: builds the shared segment and hands it over.
pub fn accept(sh: &Arc<QpShared>, req: &Arc<dyn ConnectionRequest>, pd: &[u8]) -> DatResult<()> {
    if pd.len() > wire::MAX_PRIVATE_DATA {
        return Err(DatError::invalid_arg(3));
    }
    let cr = CRS.get(req).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_CR))?;
    if req.is_datagram() {
        // An unreliable datagram queue pair asks; only one of those may answer.
        return Err(DatError::invalid_arg(2));
    }
    sh.attach();
    let mut st = sh.st.lock();
    if st.phase != Phase::Idle {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_UNCONNECTED));
    }
    let sock = cr.sock.lock().take().ok_or(DatError::invalid_state(0))?;
    cr.decided.store(true, Ordering::SeqCst);
    let res = (|| -> std::io::Result<(Segment, OwnedFd)> {
        let fd = sys::memfd(segment_len())?;
        let map = Mapping::map(&fd, segment_len())?;
        let seg = Segment::new(map, true).ok_or_else(|| std::io::Error::other("segment too small"))?;
        Ok((seg, fd))
    })();
    let (seg, fd) = res.map_err(|e| {
        tracing::warn!("shm: accept: shared segment: {e}");
        let _ = send_msg(&sock, &wire::Msg::Rej(&[]), &[]);
        DatError::insufficient(DAT_RESOURCE_MEMORY)
    })?;
    let Some([wake_fd, table_fd]) = area::fds() else {
        let _ = send_msg(&sock, &wire::Msg::Rej(&[]), &[]);
        return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
    };
    let we_copy = cma::probe(cr.peer_pid, cr.hello.cookie_addr, cr.hello.cookie_val);
    // The peer's area arrives with RTU.
    st.link = Some(Link::new(seg, 1, cr.peer_pid, we_copy, PeerEnd::new(None, &cr.hello)));
    sh.make_send_queue(&mut st);
    st.phase = Phase::Accepting;
    if let Err(e) = send_msg(&sock, &wire::Msg::Acc(hello(sh, we_copy, [0; 4]), pd), &[&fd, wake_fd, table_fd]) {
        tracing::debug!("shm: accept: peer gone: {e}");
        let mut a = After::default();
        sh.teardown(&mut st, &mut a);
        drop(st);
        sh.finish(a);
        progress::engine().defer(sh.clone(), ConnEvent::Broken, Vec::new());
        return Ok(());
    }
    st.sock = Some(Arc::new(sock));
    drop(st);
    progress::engine().add_qp(sh.clone());
    Ok(())
}

/// Reads and handles everything pending on a QP's socket (progress thread, QP locked).
pub fn on_socket(sh: &QpShared, st: &mut QpState, a: &mut After) -> Result<(), Fault> {
    let Some(sock) = st.sock.clone() else { return Ok(()) };
    let mut buf = [0u8; wire::MAX_MSG];
    loop {
        let (n, fds) = match sys::recv(&sock, &mut buf) {
            Ok(Recv::Data(n, fds)) => (n, fds),
            Ok(Recv::Empty) => return Ok(()),
            Ok(Recv::Closed) | Err(_) => {
                st.peer_gone = true;
                return Ok(());
            }
        };
        let msg = wire::decode(&buf[..n])?;
        match (st.phase, msg) {
            (_, wire::Msg::Bell) => {}
            (Phase::Connecting, wire::Msg::Acc(h, pd)) => {
                let fd = fds.first().ok_or(Fault::Malformed("accept without segment"))?;
                if !sys::sealed_against_shrinking(fd) {
                    return Err(Fault::Malformed("segment not sealed against shrinking"));
                }
                let area = peer_area(&fds[1..])?;
                let peer_pid = sys::peer_pid_same_uid(&sock).map_err(|_| Fault::PeerGone)?;
                let len = sys::file_size(fd).map_err(|_| Fault::Malformed("bad segment"))?;
                if len < segment_len() as u64 {
                    return Err(Fault::Malformed("segment too small"));
                }
                let map = Mapping::map(fd, segment_len()).map_err(|_| Fault::Malformed("cannot map segment"))?;
                let seg = Segment::new(map, false).ok_or(Fault::Malformed("bad segment"))?;
                let we_copy = cma::probe(peer_pid, h.cookie_addr, h.cookie_val);
                let mut link = Link::new(seg, 0, peer_pid, we_copy, PeerEnd::new(Some(area), &h));
                link.peer_copies = h.can_cma_you;
                let ours = area::fds().ok_or(Fault::Malformed("no published area"))?;
                send_msg(&sock, &wire::Msg::Rtu(hello(sh, we_copy, [0; 4])), &ours).map_err(|_| Fault::PeerGone)?;
                st.link = Some(link);
                st.phase = Phase::Connected;
                st.deadline = None;
                a.event = Some((ConnEvent::Established, pd.to_vec()));
                tracing::debug!(context = sh.context, peer_pid, we_copy, peer_copies = h.can_cma_you, "shm: connected");
                // Deliver Established before anything that follows it on the socket.
                st.sock_ready = true;
                return Ok(());
            }
            (Phase::Connecting, wire::Msg::Rej(pd)) => {
                sh.teardown(st, a);
                a.event = Some((ConnEvent::PeerRejected, pd.to_vec()));
                return Ok(());
            }
            (Phase::Accepting, wire::Msg::Rtu(h)) => {
                let area = peer_area(&fds)?;
                if let Some(l) = st.link.as_mut() {
                    l.peer_copies = h.can_cma_you;
                    l.peer = PeerEnd::new(Some(area), &h);
                }
                st.phase = Phase::Connected;
                a.event = Some((ConnEvent::Established, Vec::new()));
                tracing::debug!(context = sh.context, peer_copies = h.can_cma_you, "shm: accepted");
                st.sock_ready = true;
                return Ok(());
            }
            (Phase::Connected | Phase::Accepting, wire::Msg::Disc) => st.peer_disc = true,
            _ => return Err(Fault::Malformed("unexpected message")),
        }
    }
}

/// A pending incoming connection.
pub struct ShmCr {
    pub sock: Mutex<Option<OwnedFd>>,
    pub hello: wire::Hello,
    pub peer_pid: i32,
    pub private: Vec<u8>,
    pub port: u64,
    pub remote: SocketAddr,
    pub decided: AtomicBool,
}

impl ConnectionRequest for ShmCr {
    fn private_data(&self) -> &[u8] {
        &self.private
    }
    fn remote_address(&self) -> SocketAddr {
        self.remote
    }
    fn port(&self) -> u64 {
        self.port
    }
    fn is_datagram(&self) -> bool {
        self.hello.ud_qpn != wire::NO_UD
    }
    fn reject(&self, private_data: &[u8]) -> DatResult<()> {
        self.decided.store(true, Ordering::SeqCst);
        match self.sock.lock().take() {
            Some(s) => {
                let _ = send_msg(&s, &wire::Msg::Rej(private_data), &[]);
                Ok(())
            }
            None => Err(DatError::invalid_state(0)),
        }
    }
}

impl Drop for ShmCr {
    fn drop(&mut self) {
        // Neither accepted nor rejected: the active side hears a reject rather than waiting.
        if let Some(s) = self.sock.get_mut().take() {
            let _ = send_msg(&s, &wire::Msg::Rej(&[]), &[]);
        }
    }
}

/// Turns a REQ read by the progress thread into a connection request.
pub fn make_cr(sock: OwnedFd, port: u64, buf: &[u8]) -> Option<Arc<ShmCr>> {
    let (h, pd) = match wire::decode(buf) {
        Ok(wire::Msg::Req(h, pd)) => (h, pd),
        _ => {
            tracing::warn!(port, "shm: malformed connect request dropped");
            return None;
        }
    };
    let peer_pid = match sys::peer_pid_same_uid(&sock) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(port, "shm: connect request refused: {e}");
            return None;
        }
    };
    if h.ud_qpn != wire::NO_UD && h.pid != peer_pid as u32 {
        // A UD peer is named by its pid: the request must name the process that sent it.
        tracing::warn!(port, peer_pid, claimed = h.pid, "shm: UD connect request naming another process refused");
        return None;
    }
    let remote = SocketAddr::new(IpAddr::V4(Ipv4Addr::from(h.ip)), 0);
    let cr = Arc::new(ShmCr {
        sock: Mutex::new(Some(sock)),
        hello: h,
        peer_pid,
        private: pd.to_vec(),
        port,
        remote,
        decided: AtomicBool::new(false),
    });
    CRS.insert(&cr);
    Some(cr)
}

/// The listener's state shared with the progress thread.
pub struct ListenerInner {
    pub sock: OwnedFd,
    pub port: u64,
    pub events: Arc<dyn ListenerEvents>,
    pub closed: AtomicBool,
}

/// A listening qualifier. Dropping it frees the qualifier at once.
pub struct ShmListener {
    pub bound: Option<rendezvous::Bound>,
    pub inner: Arc<ListenerInner>,
}

impl ShmListener {
    pub fn listen(port: u64, events: Arc<dyn ListenerEvents>) -> DatResult<ShmListener> {
        let mut bound = rendezvous::listen(port)?;
        let sock = bound.take_sock().ok_or(DatError::INTERNAL)?;
        let inner = Arc::new(ListenerInner { sock, port, events, closed: AtomicBool::new(false) });
        progress::engine().add_listener(inner.clone());
        Ok(ShmListener { bound: Some(bound), inner })
    }
}

impl Listener for ShmListener {
    fn port(&self) -> u64 {
        self.inner.port
    }
}

impl Drop for ShmListener {
    fn drop(&mut self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.bound.take();
        progress::engine().kick();
    }
}
