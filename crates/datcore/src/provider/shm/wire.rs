//! What travels between the two processes: socket messages (connection management and the
//! doorbell) and ring records (data transfer). All parsing is bounds-checked; a message that
//! does not parse is a protocol error that breaks only its connection.

use super::ring::Malformed;

// ---- socket messages -------------------------------------------------------------------------

pub const MAX_PRIVATE_DATA: usize = 256;
/// Largest handshake message.
pub const MAX_MSG: usize = 64 + MAX_PRIVATE_DATA;

pub const M_REQ: u32 = 0x5145_5244; // connect request
pub const M_ACC: u32 = 0x4343_4144; // accept (+ the segment fd and the published area fds)
pub const M_REJ: u32 = 0x4a45_5244; // reject
pub const M_RTU: u32 = 0x5554_5244; // ready to use (+ the published area fds)
pub const M_DISC: u32 = 0x4353_4444; // graceful disconnect
/// The doorbell is a one-byte datagram.
pub const BELL: u8 = 0xb1;
pub const VERSION: u32 = 6;

/// The identity/credential block each side sends: who it is and how to test cross-memory
/// attach on it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hello {
    pub pid: u32,
    /// Whether the sender could read the receiver's test word with process_vm_readv.
    pub can_cma_you: bool,
    pub cookie_addr: u64,
    pub cookie_val: u64,
    /// IPv4 address the active side dialled (passive side: unused).
    pub ip: [u8; 4],
    /// Wake-word indices (in the sender's published area) of the sender's QP's send and
    /// receive completion queues ([`NO_CQ`]: none), and the QP's protection domain.
    pub send_cq: u32,
    pub recv_cq: u32,
    pub pd: u32,
    /// The sender's unreliable datagram queue pair number ([`NO_UD`]: a reliable connection).
    pub ud_qpn: u32,
    /// The sender's QP's place among the queue pairs of its send and receive completion queue,
    /// which a producer names when it rings that queue's doorbell ([`super::cq`]).
    pub send_slot: u32,
    pub recv_slot: u32,
}

/// No completion queue.
pub const NO_CQ: u32 = u32::MAX;
/// [`Hello::ud_qpn`] of a reliable connection.
pub const NO_UD: u32 = u32::MAX;

#[derive(Debug)]
pub enum Msg<'a> {
    Req(Hello, &'a [u8]),
    Acc(Hello, &'a [u8]),
    /// A reject with the consumer's private data (DAT 2.0 `dat_cr_reject`; empty otherwise).
    Rej(&'a [u8]),
    Rtu(Hello),
    Disc,
    Bell,
}

struct W<'a> {
    buf: &'a mut [u8],
    n: usize,
}

impl W<'_> {
    fn put(&mut self, b: &[u8]) {
        self.buf[self.n..self.n + b.len()].copy_from_slice(b);
        self.n += b.len();
    }
    fn u32(&mut self, v: u32) {
        self.put(&v.to_le_bytes())
    }
    fn u64(&mut self, v: u64) {
        self.put(&v.to_le_bytes())
    }
    fn hello(&mut self, h: &Hello) {
        self.u32(h.pid);
        self.u32(h.can_cma_you as u32);
        self.u64(h.cookie_addr);
        self.u64(h.cookie_val);
        self.put(&h.ip);
        self.u32(h.send_cq);
        self.u32(h.recv_cq);
        self.u32(h.pd);
        self.u32(h.ud_qpn);
        self.u32(h.send_slot);
        self.u32(h.recv_slot);
    }
}

struct R<'a> {
    b: &'a [u8],
}

impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.b.len() < n {
            return Err(Malformed("short message"));
        }
        let (a, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32, Malformed> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }
    fn u64(&mut self) -> Result<u64, Malformed> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }
    fn hello(&mut self) -> Result<Hello, Malformed> {
        let pid = self.u32()?;
        let can = self.u32()? != 0;
        let cookie_addr = self.u64()?;
        let cookie_val = self.u64()?;
        let mut ip = [0u8; 4];
        ip.copy_from_slice(self.take(4)?);
        let (send_cq, recv_cq, pd, ud_qpn) = (self.u32()?, self.u32()?, self.u32()?, self.u32()?);
        let (send_slot, recv_slot) = (self.u32()?, self.u32()?);
        Ok(Hello {
            pid,
            can_cma_you: can,
            cookie_addr,
            cookie_val,
            ip,
            send_cq,
            recv_cq,
            pd,
            ud_qpn,
            send_slot,
            recv_slot,
        })
    }
    fn private(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.u32()? as usize;
        if n > MAX_PRIVATE_DATA {
            return Err(Malformed("private data too long"));
        }
        self.take(n)
    }
}

/// Encodes `m` into `buf` (at least [`MAX_MSG`] bytes); returns the length.
pub fn encode(m: &Msg<'_>, buf: &mut [u8; MAX_MSG]) -> usize {
    if let Msg::Bell = m {
        buf[0] = BELL;
        return 1;
    }
    let mut w = W { buf, n: 0 };
    match m {
        Msg::Req(h, p) | Msg::Acc(h, p) => {
            w.u32(if matches!(m, Msg::Req(..)) { M_REQ } else { M_ACC });
            w.u32(VERSION);
            w.hello(h);
            let p = &p[..p.len().min(MAX_PRIVATE_DATA)];
            w.u32(p.len() as u32);
            w.put(p);
        }
        Msg::Rej(p) => {
            w.u32(M_REJ);
            let p = &p[..p.len().min(MAX_PRIVATE_DATA)];
            w.u32(p.len() as u32);
            w.put(p);
        }
        Msg::Rtu(h) => {
            w.u32(M_RTU);
            w.u32(VERSION);
            w.hello(h);
        }
        Msg::Disc => w.u32(M_DISC),
        Msg::Bell => {}
    }
    w.n
}

pub fn decode(b: &[u8]) -> Result<Msg<'_>, Malformed> {
    if b.len() == 1 && b[0] == BELL {
        return Ok(Msg::Bell);
    }
    let mut r = R { b };
    let magic = r.u32()?;
    let version = |r: &mut R<'_>| -> Result<(), Malformed> {
        if r.u32()? != VERSION {
            return Err(Malformed("protocol version mismatch"));
        }
        Ok(())
    };
    match magic {
        M_REQ | M_ACC => {
            version(&mut r)?;
            let h = r.hello()?;
            let p = r.private()?;
            Ok(if magic == M_REQ { Msg::Req(h, p) } else { Msg::Acc(h, p) })
        }
        M_REJ => Ok(Msg::Rej(r.private()?)),
        M_RTU => {
            version(&mut r)?;
            Ok(Msg::Rtu(r.hello()?))
        }
        M_DISC => Ok(Msg::Disc),
        _ => Err(Malformed("unknown message")),
    }
}

// ---- ring records ----------------------------------------------------------------------------

/// Request ring (initiator -> target).
pub const R_SEND: u16 = 1;
pub const R_WRITE: u16 = 2;
pub const R_READ: u16 = 3;
/// Continuation of the inline payload of the previous SEND/WRITE.
pub const R_DATA: u16 = 4;
/// A 64-bit atomic: [`OpHdr`] (`total_len` 8, `arg` the add or compare value) and the swap
/// value; always acknowledged, the ACK's length field carrying the word's old value.
pub const R_ATOMIC: u16 = 5;
/// Response ring (target -> initiator).
pub const R_ACK: u16 = 16;
pub const R_READ_DATA: u16 = 17;

/// Record header flags.
pub const F_SOLICITED: u16 = 1;
/// The payload is carried inline (this record and R_DATA records that follow); otherwise an
/// iovec list of the initiator's memory follows the op header for the target to copy with
/// cross-memory attach.
pub const F_INLINE: u16 = 2;
/// R_WRITE: with immediate data (`OpHdr::arg`): it consumes a receive, which completes with it.
pub const F_IMMED: u16 = 4;
/// R_ATOMIC: compare-and-swap (else fetch-and-add).
pub const F_CMP_SWAP: u16 = 8;

/// Fixed part of SEND / WRITE / READ / ATOMIC.
#[derive(Clone, Copy, Debug)]
pub struct OpHdr {
    pub total_len: u64,
    pub remote_addr: u64,
    pub rkey: u32,
    pub niov: u32,
    /// The immediate data of a write with [`F_IMMED`]; an atomic's add or compare value.
    pub arg: u64,
}

pub const OP_HDR: usize = 32;
pub const IOV: usize = 16;
/// R_ATOMIC: the header and the swap value.
pub const ATOMIC_REC: usize = OP_HDR + 8;

fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7]])
}

impl OpHdr {
    pub fn write(&self, b: &mut [u8]) {
        b[0..8].copy_from_slice(&self.total_len.to_le_bytes());
        b[8..16].copy_from_slice(&self.remote_addr.to_le_bytes());
        b[16..20].copy_from_slice(&self.rkey.to_le_bytes());
        b[20..24].copy_from_slice(&self.niov.to_le_bytes());
        b[24..32].copy_from_slice(&self.arg.to_le_bytes());
    }
    pub fn read(b: &[u8]) -> OpHdr {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        OpHdr {
            total_len: u64_at(b, 0),
            remote_addr: u64_at(b, 8),
            rkey: u32_at(16),
            niov: u32_at(20),
            arg: u64_at(b, 24),
        }
    }
}

/// The swap value of an R_ATOMIC record (its [`ATOMIC_REC`] fixed bytes).
pub fn atomic_swap(b: &[u8; ATOMIC_REC]) -> u64 {
    u64_at(b, OP_HDR)
}

pub fn write_iov(b: &mut [u8], addr: u64, len: u64) {
    b[0..8].copy_from_slice(&addr.to_le_bytes());
    b[8..16].copy_from_slice(&len.to_le_bytes());
}

pub fn read_iov(b: &[u8]) -> (u64, u64) {
    let mut a = [0u8; 8];
    let mut l = [0u8; 8];
    a.copy_from_slice(&b[0..8]);
    l.copy_from_slice(&b[8..16]);
    (u64::from_le_bytes(a), u64::from_le_bytes(l))
}

/// ACK payload: status code (see [`super::qp::status_code`]), byte count (an atomic's old
/// value), and the request-ring position just past the acknowledged op's last record. Only
/// errors, RDMA reads and atomics are acknowledged; a send or write whose records the target consumed without an ACK succeeded.
pub const ACK_LEN: usize = 24;
