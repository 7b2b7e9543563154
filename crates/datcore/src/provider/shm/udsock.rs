//! The sockets that carry a shm UD queue pair's datagrams.
//!
//! A UD queue pair's address is a listening unix `SOCK_SEQPACKET` socket in the private
//! rendezvous directory, `ud-<pid>-<qpn>.sock` ([`Inbox`]). A sender connects to it at its first
//! datagram to that queue pair and sends every later one over that connection ([`Outbox`]), so
//! a sender's datagrams arrive in the order sent. Connections rather than one `SOCK_DGRAM`
//! socket: the kernel queues at most `net.unix.max_dgram_qlen` datagrams (10 by default) at an
//! unconnected datagram socket, which a burst of MTU-sized datagrams (Intel MPI's UD transport
//! sends a message as one) overruns at once, so the sender waited for the receiver to be
//! scheduled every ten datagrams; over a connection the limit is the sender's send buffer,
//! which [`SNDBUF`] asks to raise. A connection is kept only from a process a UD connect
//! exchange of this process named ([`admit`]), known by the connection's `SO_PEERCRED` at its
//! accept (so no system call per datagram); others are closed unread.
//!
//! A sender whose connection is full tries again, yielding the processor between tries (a
//! sender that slept in the kernel instead would, on a busy machine, wait milliseconds for a
//! processor once woken), for [`FULL_PEER_SPIN`], then sleeps until there is room for at most
//! [`FULL_PEER_WAIT`]: the peer takes its arrivals within a scheduling delay unless it is
//! stopped, and only then is the datagram lost.

use super::super::spin::SpinLock;
use super::sys::{self, Recv};
use super::{cma::MAX_IOV, rendezvous};
use parking_lot::Mutex;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// The send buffer a sender's connection asks for (the kernel caps it at `net.core.wmem_max`).
const SNDBUF: libc::c_int = 4 << 20;
/// How long a send to a full connection tries again before it sleeps until there is room.
const FULL_PEER_SPIN: Duration = Duration::from_millis(5);
/// How long that sleep lasts at most before the datagram is lost.
const FULL_PEER_WAIT: libc::timeval = libc::timeval { tv_sec: 1, tv_usec: 0 };
/// Datagrams taken from one connection in one look (a sender that never stops does not keep
/// the taker in its loop).
const TAKE_PER_LOOK: usize = 64;

/// The socket address of UD queue pair `qpn` of process `pid`, written in place (a sender
/// builds it without allocating).
fn ud_addr(pid: u64, qpn: u32) -> io::Result<libc::sockaddr_un> {
    /// Writes into a `sun_path`, keeping its last byte the terminating zero.
    struct SunPath<'a>(&'a mut [libc::c_char], usize);
    impl SunPath<'_> {
        fn put(&mut self, b: &[u8]) -> std::fmt::Result {
            if b.len() > self.0.len() - 1 - self.1 {
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
        .map_err(|_| io::Error::other("socket path too long"))?;
    Ok(a)
}

const ADDR_LEN: libc::socklen_t = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;

fn socket(flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC | flags, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn set_option<T>(fd: &OwnedFd, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: passes a live value of the size given.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            name,
            value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
}

/// A new epoll set.
pub fn epoll() -> io::Result<OwnedFd> {
    // SAFETY: plain epoll_create1(2) call.
    let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    check(fd)?;
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Adds `fd` (readable when something arrived: a socket, or an [`Inbox::fd`]) to epoll set
/// `ep`, reported by its number.
pub fn watch(ep: &OwnedFd, fd: RawFd) -> io::Result<()> {
    let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: fd as u64 };
    // SAFETY: registers a live descriptor with a live epoll set.
    check(unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })
}

/// Takes `fd` out of epoll set `ep`.
pub fn unwatch(ep: &OwnedFd, fd: RawFd) {
    // SAFETY: a live epoll set; a descriptor not in it is an error we need not report.
    unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, std::ptr::null_mut()) };
}

/// Whether something in epoll set `ep` is readable now (one `epoll_wait` that does not wait).
pub fn ready(ep: &OwnedFd) -> bool {
    let mut ev = libc::epoll_event { events: 0, u64: 0 };
    // SAFETY: fills at most one entry of a live event.
    unsafe { libc::epoll_wait(ep.as_raw_fd(), &mut ev, 1, 0) > 0 }
}

/// The processes whose datagrams this process's UD queue pairs take: those a connect exchange
/// of one of them named, by the kernel's credentials of the exchange's connection.
static SENDERS: LazyLock<Mutex<HashSet<i32>>> = LazyLock::new(Mutex::default);

/// Lets process `pid` send to this process's UD queue pairs: a connect exchange with it is
/// under way (before our request or our accept goes out, so that none of its datagrams comes
/// first).
pub fn admit(pid: i32) {
    SENDERS.lock().insert(pid);
}

fn admitted(pid: i32) -> bool {
    SENDERS.lock().contains(&pid)
}

/// A UD queue pair's receiving side: its listening socket and an epoll set of it and the
/// connections it accepted. Dropping it removes the socket's name.
pub struct Inbox {
    listener: OwnedFd,
    epoll: OwnedFd,
    path: PathBuf,
}

/// What the one taking arrivals holds: the buffer a datagram is read into and the accepted
/// connections.
pub struct Arrivals {
    buf: Box<[u8]>,
    conns: Vec<OwnedFd>,
}

impl Arrivals {
    /// Room for datagrams of up to `max` bytes.
    pub fn new(max: usize) -> Arrivals {
        Arrivals { buf: vec![0u8; max].into_boxed_slice(), conns: Vec::new() }
    }
}

impl Inbox {
    /// Listens at the address of queue pair `qpn` of this process (a stale socket of that name
    /// is replaced).
    pub fn bind(qpn: u32) -> io::Result<Inbox> {
        let addr = ud_addr(sys::getpid() as u64, qpn)?;
        let bytes: Vec<u8> = addr.sun_path.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(&bytes));
        let listener = socket(libc::SOCK_NONBLOCK)?;
        let _ = std::fs::remove_file(&path);
        // SAFETY: binds a live socket to a filled sockaddr_un of ADDR_LEN bytes.
        check(unsafe { libc::bind(listener.as_raw_fd(), &addr as *const _ as *const libc::sockaddr, ADDR_LEN) })?;
        let inbox = Inbox { listener, epoll: epoll()?, path };
        // SAFETY: plain listen(2) on a bound socket.
        check(unsafe { libc::listen(inbox.listener.as_raw_fd(), libc::SOMAXCONN) })?;
        watch(&inbox.epoll, inbox.listener.as_raw_fd())?;
        Ok(inbox)
    }

    /// Readable when a datagram or a connection is waiting.
    pub fn fd(&self) -> RawFd {
        self.epoll.as_raw_fd()
    }

    /// Takes the datagrams that have arrived (one `epoll_wait` that does not wait, then each
    /// ready connection until it is empty or gave [`TAKE_PER_LOOK`]), giving each to
    /// `deliver`; accepts new connections and closes those the sender closed.
    pub fn take(&self, a: &mut Arrivals, mut deliver: impl FnMut(&[u8])) {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 16];
        // SAFETY: fills at most evs.len() entries of a live array.
        let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), evs.as_mut_ptr(), evs.len() as i32, 0) };
        for ev in &evs[..n.max(0) as usize] {
            let fd = ev.u64 as RawFd;
            if fd == self.listener.as_raw_fd() {
                self.accept(a);
                continue;
            }
            let Some(i) = a.conns.iter().position(|c| c.as_raw_fd() == fd) else { continue };
            for _ in 0..TAKE_PER_LOOK {
                match sys::recv(&a.conns[i], &mut a.buf) {
                    Ok(Recv::Data(len, _)) => deliver(&a.buf[..len]),
                    Ok(Recv::Empty) => break,
                    Ok(Recv::Closed) | Err(_) => {
                        // Closing it takes it out of the epoll set.
                        a.conns.swap_remove(i);
                        break;
                    }
                }
            }
        }
    }

    fn accept(&self, a: &mut Arrivals) {
        // Connections come from processes of this user only (the rendezvous directory is
        // private), and are kept from the processes a connect exchange named only.
        while let Ok(Some(c)) = sys::accept(&self.listener) {
            match sys::peer_pid_same_uid(&c) {
                Ok(pid) if admitted(pid) => {}
                r => {
                    tracing::debug!(?r, "shm: UD: a connection from a process no connect exchange named, closed");
                    continue;
                }
            }
            if let Err(e) = watch(&self.epoll, c.as_raw_fd()) {
                tracing::warn!("shm: UD: a sender's connection refused: {e}");
                continue;
            }
            a.conns.push(c);
        }
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A UD queue pair's sending side: its connections to the queue pairs it sent to.
pub struct Outbox {
    links: SpinLock<Vec<Link>>,
}

struct Link {
    pid: u64,
    qpn: u32,
    sock: Arc<OwnedFd>,
}

impl Outbox {
    pub const fn new() -> Outbox {
        Outbox { links: SpinLock::new(Vec::new()) }
    }

    /// Sends one datagram, the bytes of `iov` (at most 1 + [`MAX_IOV`] entries), to queue pair
    /// `qpn` of process `pid`, connecting at the first datagram (and again once, should the
    /// connection have ended: a peer queue pair of the same address made since). While the
    /// connection is full, `stalled` runs between tries, with `true` before the sleep.
    ///
    /// # Safety
    /// `iov` must describe readable memory.
    pub unsafe fn send(
        &self,
        pid: u64,
        qpn: u32,
        iov: &[libc::iovec],
        mut stalled: impl FnMut(bool),
    ) -> io::Result<()> {
        let mut sock = self.link(pid, qpn, None)?;
        let mut iov_copy = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; 1 + MAX_IOV];
        iov_copy[..iov.len()].copy_from_slice(iov);
        // SAFETY: msghdr is plain old data.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov_copy.as_mut_ptr();
        msg.msg_iovlen = iov.len() as _;
        let mut flags = libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT;
        let (mut spin_until, mut reconnected) = (None, false);
        loop {
            // SAFETY: msg holds iovecs of readable memory (the contract), live for the call.
            if unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, flags) } >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => {}
                Some(libc::EAGAIN) if flags & libc::MSG_DONTWAIT != 0 => {
                    if Instant::now() < *spin_until.get_or_insert_with(|| Instant::now() + FULL_PEER_SPIN) {
                        stalled(false);
                        std::thread::yield_now();
                    } else {
                        stalled(true);
                        flags &= !libc::MSG_DONTWAIT;
                    }
                }
                Some(libc::EPIPE | libc::ECONNRESET | libc::ENOTCONN) if !reconnected => {
                    reconnected = true;
                    sock = self.link(pid, qpn, Some(&sock))?;
                }
                _ => return Err(e),
            }
        }
    }

    /// The connection to queue pair `qpn` of process `pid`: the one made before unless it is
    /// `ended`, else a new one.
    fn link(&self, pid: u64, qpn: u32, ended: Option<&Arc<OwnedFd>>) -> io::Result<Arc<OwnedFd>> {
        let same = |l: &Link| l.pid == pid && l.qpn == qpn;
        {
            let mut links = self.links.lock();
            match (links.iter().position(same), ended) {
                (Some(i), Some(e)) if Arc::ptr_eq(&links[i].sock, e) => {
                    links.swap_remove(i);
                }
                (Some(i), _) => return Ok(links[i].sock.clone()),
                (None, _) => {}
            }
        }
        let sock = Arc::new(Self::connect(pid, qpn)?);
        let mut links = self.links.lock();
        if let Some(l) = links.iter().find(|l| same(l)) {
            return Ok(l.sock.clone()); // another thread connected meanwhile: one connection
        }
        links.push(Link { pid, qpn, sock: sock.clone() });
        Ok(sock)
    }

    fn connect(pid: u64, qpn: u32) -> io::Result<OwnedFd> {
        let addr = ud_addr(pid, qpn)?;
        let sock = socket(0)?;
        // Best effort: the kernel caps it, and the default still works.
        let _ = set_option(&sock, libc::SO_SNDBUF, &SNDBUF);
        set_option(&sock, libc::SO_SNDTIMEO, &FULL_PEER_WAIT)?;
        loop {
            // SAFETY: connects a live socket to a filled sockaddr_un of ADDR_LEN bytes.
            let r = unsafe { libc::connect(sock.as_raw_fd(), &addr as *const _ as *const libc::sockaddr, ADDR_LEN) };
            match check(r) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EISCONN) => return Ok(sock),
                r => return r.map(|()| sock),
            }
        }
    }
}
