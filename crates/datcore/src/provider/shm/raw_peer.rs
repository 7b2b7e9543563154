//! A peer with no provider behind it, for tests of what a hostile peer of the same user can do
//! to us. It runs the connection handshake with the provider's own message, segment and ring
//! code, then gives raw access to what any peer holds: its rings, the segment's words, its own
//! published area (which it fills as it likes), and the descriptors the other side passed.
//! Nothing in the provider uses it.

use super::super::{Access, WcStatus};
use super::area::{PeerArea, WAKE_BYTES, WAKE_SLOTS};
use super::memtable::{self, Entry, Kind};
use super::ring::{self, segment_len, Consumer, Producer, Segment};
use super::shared::Share;
use super::sys::{self, Mapping, Recv};
use super::udsock::Outbox;
use super::{conn, qp, rendezvous, ud, wire, xfer};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The raw peer's protection domain (what its handshake announces).
pub const PD: u32 = 0x7a;

/// Most data bytes one inline record of a send carries.
pub const CHUNK: usize = xfer::CHUNK as usize;

/// Bytes of a published memory table.
pub const TABLE_BYTES: usize = memtable::TABLE_BYTES;

/// A memfd of `len` bytes; unsealed when asked (its holder may then shrink it under the other
/// side's mappings), else sealed as the provider seals its own.
pub fn memfd(len: usize, unsealed: bool) -> io::Result<OwnedFd> {
    if !unsealed {
        return sys::memfd(len);
    }
    // SAFETY: the name is a NUL-terminated literal; the result is checked.
    let raw = unsafe { libc::memfd_create(c"dat-raw-peer".as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    truncate(&fd, len)?;
    Ok(fd)
}

/// Sets the size of the file `fd` to `len` bytes.
pub fn truncate(fd: &OwnedFd, len: usize) -> io::Result<()> {
    // SAFETY: ftruncate on a descriptor we hold.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes a table entry: `key` for `len` bytes at `addr` of protection domain `pd` with the
/// rights `access`, mappable through descriptor `file` of process `owner` if given, into the
/// table whose first byte is `table` (ours or another process's, mapped writable here).
///
/// # Safety
/// `table` must point to a live, writable mapping of [`TABLE_BYTES`] bytes, 8-aligned.
#[allow(clippy::too_many_arguments)]
pub unsafe fn write_entry(
    table: *mut u8,
    key: u32,
    pd: u32,
    addr: u64,
    len: u64,
    access: Access,
    file: Option<&OwnedFd>,
) {
    let share = file.and_then(|f| {
        let (dev, ino, _) = sys::identity(f).ok()?;
        Some(Share::File { fd: f.as_raw_fd() as u32, dev, ino, offset: 0 })
    });
    // SAFETY: per the contract.
    let slots = unsafe { memtable::peer_slots(table) };
    memtable::write_slot(slots, key, &Entry { kind: Kind::Region, pd, addr, len, access, share });
}

/// The key of generation 1 of table slot `index`.
pub fn key(index: u32) -> u32 {
    memtable::key_of(index, 1)
}

/// The raw peer's own published area: wake words and a memory table, both mapped here.
struct OwnArea {
    wake_fd: OwnedFd,
    table_fd: OwnedFd,
    table: Mapping,
}

impl OwnArea {
    fn new(unsealed: bool) -> io::Result<OwnArea> {
        let wake_fd = memfd(WAKE_BYTES, unsealed)?;
        let table_fd = memfd(TABLE_BYTES, unsealed)?;
        let table = Mapping::map(&table_fd, TABLE_BYTES)?;
        Ok(OwnArea { wake_fd, table_fd, table })
    }
}

/// How the raw peer makes the files it passes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Files {
    /// The published area's memfds are left unsealed.
    pub unsealed_area: bool,
    /// The connection segment's memfd (made by the passive side) is left unsealed.
    pub unsealed_segment: bool,
}

/// A ring index word the passive raw peer sets in the segment before it passes it on.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The side that produces into the ring (0: active, 1: passive).
    pub producer_side: usize,
    pub response: bool,
    /// The consumer's head (else the producer's tail).
    pub head: bool,
    pub value: u64,
}

/// What the other side put into its response ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// An acknowledgement: the status and its value (an atomic's old word).
    Ack(WcStatus, u64),
    /// Data answering an RDMA read.
    ReadData(Vec<u8>),
}

/// A connection to a provider, held by no provider.
pub struct RawPeer {
    sock: OwnedFd,
    side: usize,
    /// The segment's descriptor (the passive side's own file).
    seg_fd: Option<OwnedFd>,
    tx_req: Producer,
    rx_req: Consumer,
    rx_resp: Consumer,
    seg: Segment,
    own: OwnArea,
    other: wire::Hello,
    other_wake_fd: OwnedFd,
    other_table_fd: OwnedFd,
    other_area: Option<PeerArea>,
}

fn hello() -> wire::Hello {
    wire::Hello {
        pid: sys::getpid() as u32,
        can_cma_you: false,
        // No probe word: the other side never gets cross-memory attach on us.
        cookie_addr: 0,
        cookie_val: 0,
        ip: [127, 0, 0, 1],
        send_cq: 0,
        recv_cq: 1,
        pd: PD,
        ud_qpn: wire::NO_UD,
        send_slot: 0,
        recv_slot: 0,
    }
}

fn send_msg(sock: &OwnedFd, m: &wire::Msg<'_>, fds: &[&OwnedFd]) -> io::Result<()> {
    conn::send_msg(sock, m, fds)
}

/// The next datagram on `sock` and the descriptors passed with it, waiting until `deadline`.
fn recv_msg(sock: &OwnedFd, deadline: Instant) -> io::Result<(Vec<u8>, Vec<OwnedFd>)> {
    let mut buf = [0u8; wire::MAX_MSG];
    loop {
        match sys::recv(sock, &mut buf)? {
            Recv::Data(n, fds) => return Ok((buf[..n].to_vec(), fds)),
            Recv::Closed => return Err(io::ErrorKind::ConnectionReset.into()),
            Recv::Empty => wait_readable(sock, deadline)?,
        }
    }
}

fn wait_readable(fd: &OwnedFd, deadline: Instant) -> io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::ErrorKind::TimedOut.into());
    }
    let mut p = [libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
    sys::poll(&mut p, left.as_millis().clamp(1, i32::MAX as u128) as i32);
    Ok(())
}

fn malformed(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

impl RawPeer {
    /// Connects to the listener on qualifier `port` (waiting up to `timeout` for it to appear
    /// and answer) and completes the handshake.
    pub fn connect(port: u64, files: Files, timeout: Duration) -> io::Result<RawPeer> {
        let deadline = Instant::now() + timeout;
        let sock = sys::seqpacket()?;
        conn::connect_listener(&sock, &rendezvous::socket_path(port)?, timeout)?;
        send_msg(&sock, &wire::Msg::Req(hello(), b"raw"), &[])?;
        let (msg, mut fds) = recv_msg(&sock, deadline)?;
        let other = match wire::decode(&msg).map_err(|m| malformed(m.0))? {
            wire::Msg::Acc(h, _) => h,
            m => return Err(malformed(&format!("no accept: {m:?}"))),
        };
        if fds.len() != 3 {
            return Err(malformed("accept without its three descriptors"));
        }
        let other_table_fd = fds.pop().unwrap_or_else(|| unreachable!());
        let other_wake_fd = fds.pop().unwrap_or_else(|| unreachable!());
        let seg_file = fds.pop().unwrap_or_else(|| unreachable!());
        let seg = Segment::new(Mapping::map(&seg_file, segment_len())?, false).ok_or(malformed("bad segment"))?;
        let own = OwnArea::new(files.unsealed_area)?;
        send_msg(&sock, &wire::Msg::Rtu(hello()), &[&own.wake_fd, &own.table_fd])?;
        Ok(RawPeer::new(sock, 0, None, seg, own, other, other_wake_fd, other_table_fd))
    }

    #[allow(clippy::too_many_arguments)]
    fn new(
        sock: OwnedFd,
        side: usize,
        seg_fd: Option<OwnedFd>,
        seg: Segment,
        own: OwnArea,
        other: wire::Hello,
        other_wake_fd: OwnedFd,
        other_table_fd: OwnedFd,
    ) -> RawPeer {
        let other_area = PeerArea::map(&other_wake_fd, &other_table_fd).ok();
        RawPeer {
            sock,
            side,
            seg_fd,
            tx_req: seg.producer(side, false),
            rx_req: seg.consumer(1 - side, false),
            rx_resp: seg.consumer(1 - side, true),
            seg,
            own,
            other,
            other_wake_fd,
            other_table_fd,
            other_area,
        }
    }

    /// The other side's protection domain (from its handshake).
    pub fn other_pd(&self) -> u32 {
        self.other.pd
    }

    /// The read-only descriptor of the other side's memory table it passed.
    pub fn other_table_fd(&self) -> &OwnedFd {
        &self.other_table_fd
    }

    /// The descriptor of the other side's wake words it passed.
    pub fn other_wake_fd(&self) -> &OwnedFd {
        &self.other_wake_fd
    }

    /// Wakes the other side's completion queues (as a producer does after adding work).
    pub fn notify(&self) {
        if let Some(a) = &self.other_area {
            for cq in [self.other.recv_cq, self.other.send_cq] {
                if let Some(w) = a.wake(cq) {
                    w.interrupt();
                }
            }
        }
    }

    /// Writes 0 over the sleepers' announcement of every wake word of the other side (which
    /// suppresses the wake-ups of producers that trust it).
    pub fn zero_sleeping_words(&self) {
        if let Some(a) = &self.other_area {
            for i in 0..WAKE_SLOTS as u32 {
                if let Some(w) = a.wake(i) {
                    w.overwrite_sleeping(0);
                }
            }
        }
    }

    fn push(&mut self, kind: u16, flags: u16, hdr: wire::OpHdr, tail: &[u8]) -> io::Result<()> {
        self.push_then(kind, flags, hdr, tail, true)
    }

    /// Writes one request record, then (`wake`) wakes the other side's queues.
    fn push_then(&mut self, kind: u16, flags: u16, hdr: wire::OpHdr, tail: &[u8], wake: bool) -> io::Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let ok = self
                .tx_req
                .push(kind, flags, wire::OP_HDR + tail.len(), |b| {
                    hdr.write(&mut b[..wire::OP_HDR]);
                    b[wire::OP_HDR..].copy_from_slice(tail);
                })
                .map_err(|m| malformed(m.0))?;
            if ok {
                if wake {
                    self.notify();
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(io::ErrorKind::TimedOut.into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    fn op(total_len: u64, remote_addr: u64, rkey: u32, niov: u32, arg: u64) -> wire::OpHdr {
        wire::OpHdr { total_len, remote_addr, rkey, niov, arg }
    }

    /// Waits until the other side consumed every request we wrote.
    pub fn wait_drained(&mut self, timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        while !self.tx_req.drained().map_err(|m| malformed(m.0))? {
            if Instant::now() > deadline {
                return Err(io::ErrorKind::TimedOut.into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// A send of `data` (at most one inline chunk).
    pub fn send(&mut self, data: &[u8]) -> io::Result<()> {
        self.push(wire::R_SEND, wire::F_INLINE, Self::op(data.len() as u64, 0, 0, 0, 0), data)
    }

    /// The first record of an inline send of `total` bytes, carrying `first` (at most
    /// [`CHUNK`] bytes); [`send_chunk`](Self::send_chunk) writes the rest.
    pub fn send_first_chunk(&mut self, total: u64, first: &[u8]) -> io::Result<()> {
        self.push(wire::R_SEND, wire::F_INLINE, Self::op(total, 0, 0, 0, 0), first)
    }

    /// A later record of an inline operation, carrying `data`; false when the ring has no
    /// room for it.
    pub fn send_chunk(&mut self, data: &[u8]) -> io::Result<bool> {
        self.push_record(wire::R_DATA, 0, data)
    }

    /// A send of `data`, as [`RawPeer::send`], but waking nobody.
    pub fn send_without_wake_up(&mut self, data: &[u8]) -> io::Result<()> {
        self.push_then(wire::R_SEND, wire::F_INLINE, Self::op(data.len() as u64, 0, 0, 0, 0), data, false)
    }

    /// An RDMA write of `data` to `addr` under `rkey`, carried inline.
    pub fn write(&mut self, rkey: u32, addr: u64, data: &[u8]) -> io::Result<()> {
        self.push(wire::R_WRITE, wire::F_INLINE, Self::op(data.len() as u64, addr, rkey, 0, 0), data)
    }

    /// An RDMA read of `len` bytes at `addr` under `rkey` (answered inline: the other side
    /// cannot reach our memory).
    pub fn read(&mut self, rkey: u32, addr: u64, len: u64) -> io::Result<()> {
        let mut iov = [0u8; wire::IOV];
        wire::write_iov(&mut iov, 0x1000, len);
        self.push(wire::R_READ, 0, Self::op(len, addr, rkey, 1, 0), &iov)
    }

    /// A fetch-and-add of `add` on the word at `addr` under `rkey`.
    pub fn fetch_add(&mut self, rkey: u32, addr: u64, add: u64) -> io::Result<()> {
        self.push(wire::R_ATOMIC, 0, Self::op(8, addr, rkey, 0, add), &0u64.to_le_bytes())
    }

    /// Writes one record of `kind` with `flags` and `payload` as they are (whatever they say)
    /// where the other side reads our next request; false when the ring has no room for it.
    pub fn push_record(&mut self, kind: u16, flags: u16, payload: &[u8]) -> io::Result<bool> {
        let payload = &payload[..payload.len().min(ring::MAX_PAYLOAD)];
        let ok =
            self.tx_req.push(kind, flags, payload.len(), |b| b.copy_from_slice(payload)).map_err(|m| malformed(m.0))?;
        if ok {
            self.notify();
        }
        Ok(ok)
    }

    /// Sends `bytes` as one message on the connection's socket (a disconnect, a doorbell, or
    /// anything else).
    pub fn send_message(&self, bytes: &[u8]) -> io::Result<()> {
        sys::send(&self.sock, bytes, &[])
    }

    /// Whether the other side consumed every request we wrote (Err: it made our ring's head
    /// index say something no consumer does).
    pub fn drained(&mut self) -> io::Result<bool> {
        self.tx_req.drained().map_err(|m| malformed(m.0))
    }

    /// Writes the header of a pad record of `len` bytes where the other side reads our next
    /// request (a real producer pads only from a record that does not fit to the ring's end).
    pub fn pad_request_ring(&mut self, len: u32) {
        let (data, cap) = self.seg.ring_data(self.side, false);
        let off = self.tx_req.position() & (cap - 1);
        let word = len as u64 | (ring::PAD as u64) << 32;
        // SAFETY: `off` is a record position (8-aligned, below the capacity) of our ring.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(data.add(off as usize) as *mut u64) }
            .store(word, Ordering::Release);
        self.notify();
    }

    /// The capacity of each side's request ring.
    pub fn request_ring_capacity() -> u64 {
        ring::REQ_CAP
    }

    /// Consumes the other side's requests (answering none: a send or write then counts as
    /// done there) until an inline send arrives; returns its data.
    pub fn next_send(&mut self, timeout: Duration) -> io::Result<Vec<u8>> {
        let deadline = Instant::now() + timeout;
        loop {
            while let Some(rec) = self.rx_req.peek().map_err(|m| malformed(m.0))? {
                let send = (rec.kind == wire::R_SEND && rec.flags & wire::F_INLINE != 0)
                    .then(|| -> io::Result<Vec<u8>> {
                        let hdr = wire::OpHdr::read(&rec.fixed::<{ wire::OP_HDR }>().map_err(|m| malformed(m.0))?);
                        let n = (hdr.total_len as usize).min(rec.payload_len - wire::OP_HDR);
                        // SAFETY: the record's payload holds OP_HDR + n bytes until consumed.
                        Ok(unsafe { std::slice::from_raw_parts(rec.payload.add(wire::OP_HDR), n) }.to_vec())
                    })
                    .transpose()?;
                self.rx_req.consume(rec);
                self.notify();
                if let Some(data) = send {
                    return Ok(data);
                }
            }
            if Instant::now() > deadline {
                return Err(io::ErrorKind::TimedOut.into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The other side's next response record, consumed.
    pub fn next_response(&mut self, timeout: Duration) -> io::Result<Response> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(rec) = self.rx_resp.peek().map_err(|m| malformed(m.0))? {
                let r = match rec.kind {
                    wire::R_ACK => {
                        let b = rec.fixed::<{ wire::ACK_LEN }>().map_err(|m| malformed(m.0))?;
                        let word = |k: usize| u64::from_le_bytes(b[k..k + 8].try_into().unwrap_or_default());
                        Response::Ack(qp::status_from(word(0) as u32), word(8))
                    }
                    // SAFETY: the payload holds payload_len bytes until consumed.
                    _ => {
                        Response::ReadData(unsafe { std::slice::from_raw_parts(rec.payload, rec.payload_len) }.to_vec())
                    }
                };
                self.rx_resp.consume(rec);
                self.notify();
                return Ok(r);
            }
            if Instant::now() > deadline {
                return Err(io::ErrorKind::TimedOut.into());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Announces a copy through the other side's table slot that `rkey` names, and never
    /// clears the mark (an initiator that neither finishes nor dies).
    pub fn pin_in_flight(&self, rkey: u32) {
        self.seg.in_flight(self.side).store(memtable::slot_of(rkey) + 1, Ordering::SeqCst);
    }

    /// Writes an entry into our own published table (see [`write_entry`]), our protection
    /// domain's, and returns its key.
    pub fn publish(&self, index: u32, addr: u64, len: u64, access: Access, file: Option<&OwnedFd>) -> u32 {
        let k = key(index);
        // SAFETY: our table's mapping is TABLE_BYTES long and lives as long as self.
        unsafe { write_entry(self.own.table.ptr, k, PD, addr, len, access, file) };
        k
    }

    /// Shrinks our published area's files to nothing.
    pub fn truncate_area(&self) -> io::Result<()> {
        truncate(&self.own.wake_fd, 0)?;
        truncate(&self.own.table_fd, 0)
    }

    /// Shrinks the segment to nothing (a passive raw peer's: it made the file).
    pub fn truncate_segment(&self) -> io::Result<()> {
        truncate(self.seg_fd.as_ref().ok_or(io::ErrorKind::NotFound)?, 0)
    }

    /// Whether the other side closed the connection (within `timeout`), reading and dropping
    /// whatever else comes.
    pub fn closed_by_other(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            match recv_msg(&self.sock, deadline) {
                Ok(_) => continue,
                Err(e) => return e.kind() == io::ErrorKind::ConnectionReset,
            }
        }
    }
}

/// A listening qualifier held by no provider: the other side connects, the raw peer makes the
/// segment.
pub struct RawListener {
    sock: OwnedFd,
    _bound: rendezvous::Bound,
}

impl RawListener {
    pub fn listen(port: u64) -> io::Result<RawListener> {
        let mut bound = rendezvous::listen(port).map_err(|e| io::Error::other(format!("{e:?}")))?;
        let sock = bound.take_sock().ok_or(io::ErrorKind::AddrInUse)?;
        Ok(RawListener { sock, _bound: bound })
    }

    /// Takes the next connection (within `timeout`), reads its UD connect request and accepts
    /// it with a hello saying our pid is `pid` and our UD queue pair `qpn`.
    pub fn answer_ud(&self, pid: u32, qpn: u32, timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        let sock = self.next(deadline)?;
        let (msg, _) = recv_msg(&sock, deadline)?;
        if !matches!(wire::decode(&msg).map_err(|m| malformed(m.0))?, wire::Msg::Req(h, _) if h.ud_qpn != wire::NO_UD) {
            return Err(malformed("no UD connect request"));
        }
        send_msg(&sock, &wire::Msg::Acc(ud_hello(pid, qpn), b"raw"), &[])
    }

    fn next(&self, deadline: Instant) -> io::Result<OwnedFd> {
        loop {
            if let Some(s) = sys::accept(&self.sock)? {
                return Ok(s);
            }
            wait_readable(&self.sock, deadline)?;
        }
    }

    /// Takes the next connection (within `timeout`) and accepts it with a segment whose index
    /// words are `preset`.
    pub fn accept(&self, files: Files, preset: &[Preset], timeout: Duration) -> io::Result<RawPeer> {
        let deadline = Instant::now() + timeout;
        let sock = self.next(deadline)?;
        let (msg, _) = recv_msg(&sock, deadline)?;
        if !matches!(wire::decode(&msg).map_err(|m| malformed(m.0))?, wire::Msg::Req(..)) {
            return Err(malformed("no connect request"));
        }
        let seg_fd = memfd(segment_len(), files.unsealed_segment)?;
        let seg = Segment::new(Mapping::map(&seg_fd, segment_len())?, true).ok_or(malformed("segment"))?;
        for p in preset {
            let (head, tail) = seg.indices(p.producer_side, p.response);
            if p.head { head } else { tail }.store(p.value, Ordering::SeqCst);
        }
        let own = OwnArea::new(files.unsealed_area)?;
        send_msg(&sock, &wire::Msg::Acc(hello(), b"raw"), &[&seg_fd, &own.wake_fd, &own.table_fd])?;
        let (msg, mut fds) = recv_msg(&sock, deadline)?;
        let other = match wire::decode(&msg).map_err(|m| malformed(m.0))? {
            wire::Msg::Rtu(h) => h,
            m => return Err(malformed(&format!("no ready-to-use: {m:?}"))),
        };
        if fds.len() != 2 {
            return Err(malformed("ready-to-use without its two descriptors"));
        }
        let other_table_fd = fds.pop().unwrap_or_else(|| unreachable!());
        let other_wake_fd = fds.pop().unwrap_or_else(|| unreachable!());
        Ok(RawPeer::new(sock, 1, Some(seg_fd), seg, own, other, other_wake_fd, other_table_fd))
    }
}

/// A UD hello saying our pid is `pid` and our queue pair `qpn`.
fn ud_hello(pid: u32, qpn: u32) -> wire::Hello {
    wire::Hello { pid, ud_qpn: qpn, send_cq: wire::NO_CQ, recv_cq: wire::NO_CQ, ..hello() }
}

/// A UD connect request to the listener on qualifier `port` from queue pair `qpn`, its hello
/// saying our pid is `pid`: the pid and queue pair number the accept names, or the error of a
/// refusal (`ConnectionRefused`: rejected; `ConnectionReset`: closed unanswered).
pub fn ud_request(port: u64, pid: u32, qpn: u32, private: &[u8], timeout: Duration) -> io::Result<(u32, u32)> {
    let deadline = Instant::now() + timeout;
    let sock = sys::seqpacket()?;
    conn::connect_listener(&sock, &rendezvous::socket_path(port)?, timeout)?;
    send_msg(&sock, &wire::Msg::Req(ud_hello(pid, qpn), private), &[])?;
    let (msg, _) = recv_msg(&sock, deadline)?;
    match wire::decode(&msg).map_err(|m| malformed(m.0))? {
        wire::Msg::Acc(h, _) => Ok((h.pid, h.ud_qpn)),
        wire::Msg::Rej(_) => Err(io::ErrorKind::ConnectionRefused.into()),
        m => Err(malformed(&format!("no answer: {m:?}"))),
    }
}

/// Sends `msg` as one datagram to UD queue pair `qpn` of process `pid`, its header saying it
/// comes from queue pair `src_qpn`.
pub fn ud_send(pid: u64, qpn: u32, src_qpn: u32, msg: &[u8]) -> io::Result<()> {
    let head = ud::datagram_header(src_qpn);
    let iov = [
        libc::iovec { iov_base: head.as_ptr() as *mut libc::c_void, iov_len: head.len() },
        libc::iovec { iov_base: msg.as_ptr() as *mut libc::c_void, iov_len: msg.len() },
    ];
    // SAFETY: both iovecs describe live, readable buffers.
    unsafe { Outbox::new().send(pid, qpn, &iov, |_| {}) }
}
