//! Thin, checked wrappers over the few system calls the provider uses.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn cvt_ssize(r: libc::ssize_t) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

fn sockaddr_un(path: &Path) -> io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: sockaddr_un is plain old data; all-zero is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_bytes();
    if bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "socket path too long"));
    }
    for (d, s) in addr.sun_path.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    Ok((addr, len as libc::socklen_t))
}

/// A non-blocking, close-on-exec SOCK_SEQPACKET unix socket.
pub fn seqpacket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call; the returned fd is owned by us.
    let fd = cvt(unsafe {
        libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0)
    })?;
    // SAFETY: fd was just returned by socket(2) and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn bind_listen(fd: &OwnedFd, path: &Path) -> io::Result<()> {
    let (addr, len) = sockaddr_un(path)?;
    // SAFETY: addr is a valid sockaddr_un of `len` bytes.
    cvt(unsafe { libc::bind(fd.as_raw_fd(), &addr as *const _ as *const libc::sockaddr, len) })?;
    // SAFETY: listen on a bound socket we own. The kernel's somaxconn caps the backlog: a
    // consumer connecting hundreds of endpoints at once fills it faster than the listener's
    // progress thread takes them (a connect finding it full tries again, see `conn`).
    cvt(unsafe { libc::listen(fd.as_raw_fd(), libc::SOMAXCONN) })?;
    Ok(())
}

/// Connects `fd` to the unix socket at `path`. AF_UNIX connects complete at once (or fail with
/// EAGAIN when the listener's backlog is full).
pub fn connect(fd: &OwnedFd, path: &Path) -> io::Result<()> {
    let (addr, len) = sockaddr_un(path)?;
    // SAFETY: addr is a valid sockaddr_un of `len` bytes.
    cvt(unsafe { libc::connect(fd.as_raw_fd(), &addr as *const _ as *const libc::sockaddr, len) })?;
    Ok(())
}

/// accept4 with NONBLOCK|CLOEXEC; `Ok(None)` when nothing is pending.
pub fn accept(fd: &OwnedFd) -> io::Result<Option<OwnedFd>> {
    // SAFETY: accept4 on our listening socket; null address pointers are allowed.
    let r = unsafe {
        libc::accept4(
            fd.as_raw_fd(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::ECONNABORTED) {
            return Ok(None);
        }
        return Err(e);
    }
    // SAFETY: r is a fresh fd from accept4.
    Ok(Some(unsafe { OwnedFd::from_raw_fd(r) }))
}

/// The pid of the peer of a connected unix socket (SO_PEERCRED), checked to be our uid.
pub fn peer_pid_same_uid(fd: &OwnedFd) -> io::Result<i32> {
    // SAFETY: ucred is plain old data.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: cred/len point to a ucred-sized buffer.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut cred as *mut _ as *mut libc::c_void,
            &mut len,
        )
    })?;
    // SAFETY: getuid cannot fail.
    if cred.uid != unsafe { libc::getuid() } {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, "peer of another user"));
    }
    Ok(cred.pid)
}

/// Most file descriptors one datagram carries.
pub const MAX_FDS: usize = 3;

/// Sends one datagram with up to [`MAX_FDS`] file descriptors attached. Never blocks.
pub fn send(fd: &OwnedFd, data: &[u8], pass: &[RawFd]) -> io::Result<()> {
    if pass.len() > MAX_FDS {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut iov = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
    // SAFETY: msghdr is plain old data.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    let mut cbuf = [0u64; 4];
    if !pass.is_empty() {
        let bytes = std::mem::size_of_val(pass) as u32;
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        // SAFETY: CMSG_SPACE is a pure computation.
        msg.msg_controllen = unsafe { libc::CMSG_SPACE(bytes) } as _;
        // SAFETY: msg_control points to cbuf (32 bytes), large enough for one cmsg of
        // MAX_FDS descriptors (16 + 12 bytes, padded to 32).
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&msg);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(bytes) as _;
            std::ptr::copy_nonoverlapping(pass.as_ptr(), libc::CMSG_DATA(c) as *mut RawFd, pass.len());
        }
    }
    // SAFETY: msg references live buffers for the duration of the call.
    let n = cvt_ssize(unsafe { libc::sendmsg(fd.as_raw_fd(), &msg, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) })?;
    if n != data.len() {
        return Err(io::Error::new(io::ErrorKind::WriteZero, "short datagram"));
    }
    Ok(())
}

/// What one `recv` produced.
pub enum Recv {
    /// A datagram of this many bytes (truncated to the buffer) and the fds passed with it.
    Data(usize, Vec<OwnedFd>),
    /// Nothing pending.
    Empty,
    /// The peer closed its end (or died).
    Closed,
}

/// Receives one datagram without blocking; keeps up to [`MAX_FDS`] passed fds (others are closed).
///
/// A peer that closes its end while datagrams of ours lie unread in its queue (a doorbell)
/// makes the kernel report `ECONNRESET` once, before the datagrams it sent (its DISC) and the
/// end of file: that report is passed over, so what the peer sent last is still read.
pub fn recv(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Recv> {
    loop {
        match recv_once(fd, buf) {
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => continue,
            r => return r,
        }
    }
}

fn recv_once(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Recv> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
    // SAFETY: msghdr is plain old data.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    let mut cbuf = [0u64; 8];
    msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
    // SAFETY: msg references live buffers for the duration of the call.
    let r = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock => Ok(Recv::Empty),
            _ => Err(e),
        };
    }
    let mut passed = Vec::new();
    // SAFETY: walking the control messages the kernel filled in, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c) as *const RawFd;
                let n = ((*c).cmsg_len as usize - (data as usize - c as usize)) / std::mem::size_of::<RawFd>();
                for i in 0..n {
                    let f = OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i)));
                    if passed.len() < MAX_FDS {
                        passed.push(f);
                    }
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    if r == 0 && !buf.is_empty() {
        return Ok(Recv::Closed);
    }
    Ok(Recv::Data(r as usize, passed))
}

/// An anonymous shared-memory file of `len` bytes, mode 0600, sealed against resizing (a
/// peer holding it cannot truncate it under our mappings).
pub fn memfd(len: usize) -> io::Result<OwnedFd> {
    let fd = memfd_sealable(len)?;
    add_seals(&fd, libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL)?;
    Ok(fd)
}

/// As [`memfd`], mapped read-write here, and then sealed against every other write
/// (`F_SEAL_FUTURE_WRITE`): a peer that opens the file again read-write (through /proc) can
/// neither write it nor map it writable. Kernels before 5.1 lack that seal (logged): there
/// peers can write the file.
pub fn memfd_written_here_only(len: usize) -> io::Result<(OwnedFd, Mapping)> {
    let fd = memfd_sealable(len)?;
    let map = Mapping::map(&fd, len)?;
    let size = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    if let Err(e) = add_seals(&fd, size | libc::F_SEAL_FUTURE_WRITE) {
        tracing::warn!("shm: cannot seal the published memory table against peers' writes: {e}");
        add_seals(&fd, size)?;
    }
    Ok((fd, map))
}

/// A memfd of `len` bytes, mode 0600, that takes seals.
fn memfd_sealable(len: usize) -> io::Result<OwnedFd> {
    // SAFETY: the name is a NUL-terminated literal.
    let fd = cvt(unsafe { libc::memfd_create(c"dat-shm".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) })?;
    // SAFETY: fresh fd.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: fchmod/ftruncate on our own fd.
    cvt(unsafe { libc::fchmod(fd.as_raw_fd(), 0o600) })?;
    // SAFETY: as above.
    cvt(unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) })?;
    Ok(fd)
}

fn add_seals(fd: &OwnedFd, seals: libc::c_int) -> io::Result<()> {
    // SAFETY: fcntl on our own fd.
    cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) })?;
    Ok(())
}

/// A read-only descriptor of the same file as `fd` (through /proc/self/fd).
pub fn reopen_read_only(fd: &OwnedFd) -> io::Result<OwnedFd> {
    open(&std::ffi::CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd()))?, libc::O_RDONLY)
}

pub fn file_size(fd: &OwnedFd) -> io::Result<u64> {
    Ok(identity(fd)?.2)
}

fn stat(fd: &OwnedFd) -> io::Result<libc::stat> {
    // SAFETY: stat is plain old data; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid stat buffer.
    cvt(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(st)
}

/// (device, inode, size) of an open file.
pub fn identity(fd: &OwnedFd) -> io::Result<(u64, u64, u64)> {
    let st = stat(fd)?;
    Ok((st.st_dev, st.st_ino, st.st_size as u64))
}

/// Whether `fd` is a file sealed against shrinking (`F_SEAL_SHRINK`): nobody can truncate it
/// under a mapping of it (only memfds and hugetlbfs files take seals).
pub fn sealed_against_shrinking(fd: &OwnedFd) -> bool {
    // SAFETY: F_GET_SEALS on a descriptor we hold; a file without seals answers EINVAL.
    let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
    seals >= 0 && seals & libc::F_SEAL_SHRINK != 0
}

fn open(path: &std::ffi::CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: path is NUL-terminated; the result is checked.
    let r = cvt(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) })?;
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// Opens read-write the file `path` names (a peer's `/proc/<pid>/fd/<n>`) if it is file
/// (`dev`, `ino`), a regular file of tmpfs or hugetlbfs sealed against shrinking (a memfd):
/// returns it and its size. Nothing else is opened: the name is first resolved without
/// opening what it names (`O_PATH`), so no peer makes us open a device, a FIFO or a file whose
/// open may block.
pub fn open_memory_file(path: &std::ffi::CStr, dev: u64, ino: u64) -> io::Result<(OwnedFd, u64)> {
    let handle = open(path, libc::O_PATH)?;
    let st = stat(&handle)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || (st.st_dev, st.st_ino) != (dev, ino) {
        return Err(io::Error::other("not the regular file named"));
    }
    // SAFETY: statfs is plain old data; fstatfs fills it.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fs is a valid statfs buffer; fstatfs takes an O_PATH descriptor.
    cvt(unsafe { libc::fstatfs(handle.as_raw_fd(), &mut fs) })?;
    if ![libc::TMPFS_MAGIC, libc::HUGETLBFS_MAGIC].contains(&fs.f_type) {
        return Err(io::Error::other("not a memory file"));
    }
    let again = std::ffi::CString::new(format!("/proc/self/fd/{}", handle.as_raw_fd()))?;
    let file = open(&again, libc::O_RDWR | libc::O_NOCTTY)?;
    let (d, i, size) = identity(&file)?;
    if (d, i) != (dev, ino) || !sealed_against_shrinking(&file) {
        return Err(io::Error::other("a file its owner can shrink"));
    }
    Ok((file, size))
}

/// A shared mapping, unmapped on drop.
pub struct Mapping {
    pub ptr: *mut u8,
    pub len: usize,
}

// SAFETY: the mapping is plain memory; all access to it goes through atomics or raw copies.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` read-write.
    pub fn map(fd: &OwnedFd, len: usize) -> io::Result<Mapping> {
        Mapping::map_at(fd, 0, len, true)
    }

    /// Maps `len` bytes of `fd` from `offset` (page aligned), read-only unless `writable`.
    pub fn map_at(fd: &OwnedFd, offset: usize, len: usize, writable: bool) -> io::Result<Mapping> {
        let prot = if writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
        // SAFETY: mapping a file we hold; the result is checked.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd.as_raw_fd(), offset as libc::off_t)
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr: p as *mut u8, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from a successful mmap and are unmapped once.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// poll(2) over `fds`; returns how many are ready (0 on timeout or EINTR).
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> usize {
    // SAFETY: fds is a valid slice of pollfd.
    let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    r.max(0) as usize
}

pub fn getpid() -> i32 {
    // SAFETY: getpid cannot fail.
    unsafe { libc::getpid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (OwnedFd, OwnedFd) {
        let mut sv = [0; 2];
        // SAFETY: sv has room for the two descriptors; checked.
        assert_eq!(
            unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, sv.as_mut_ptr()) },
            0
        );
        // SAFETY: fresh descriptors we own.
        unsafe { (OwnedFd::from_raw_fd(sv[0]), OwnedFd::from_raw_fd(sv[1])) }
    }

    /// A peer that closes with datagrams of ours unread (a doorbell) makes the kernel report
    /// ECONNRESET before what it sent last (DISC): that is read first, then the end.
    #[test]
    fn messages_sent_before_a_close_with_unread_data_are_read() {
        let (a, b) = pair();
        send(&b, b"b", &[]).unwrap();
        send(&a, b"disc", &[]).unwrap();
        drop(a);
        let mut buf = [0u8; 16];
        assert!(matches!(recv(&b, &mut buf), Ok(Recv::Data(4, _))), "the last message before the close is lost");
        assert_eq!(&buf[..4], b"disc");
        assert!(matches!(recv(&b, &mut buf), Ok(Recv::Closed)));
    }

    #[test]
    fn an_empty_socket_and_a_plain_close() {
        let (a, b) = pair();
        let mut buf = [0u8; 16];
        assert!(matches!(recv(&b, &mut buf), Ok(Recv::Empty)));
        drop(a);
        assert!(matches!(recv(&b, &mut buf), Ok(Recv::Closed)));
    }
}
