//! The data path: issuing send-queue work into the request ring (initiator), executing
//! requests against local memory (target), and completing from responses (initiator).
//!
//! Requests are executed by the *target*, in ring order, from whichever of its threads drives
//! the connection (normally the consumer's own poll of its receive queue, see
//! [`super::cq::ShmCq::poll`]), which gives RC ordering: data of op N is placed before op N+1
//! starts, and ACKs come back in order.
//! With cross-memory attach the target copies straight between the two processes' buffers (one
//! copy, one syscall); small payloads, and everything when attach is not permitted, travel
//! inline through the rings (two copies, no syscall).

use super::super::{Sge, WcStatus};
use super::cma::{self, MAX_IOV};
use super::memtable;
use super::qp::{status_code, status_from, Ack, After, Dest, Fault, OpKind, QpShared, QpState, Rx};
use super::rdma;
use super::recvq::{self, LOCAL_WRITE};
use super::ring::Record;
use super::wire::*;

/// Payloads up to this size go inline even when the peer could copy them itself.
pub const INLINE_MAX: u64 = 8 * 1024;
/// Largest inline chunk per record.
pub const CHUNK: u64 = 32 * 1024;
const _: () = assert!(OP_HDR + CHUNK as usize <= super::ring::MAX_PAYLOAD && OP_HDR + MAX_IOV * IOV <= CHUNK as usize);

/// Whether a record payload of `have` bytes (padded to 8) carries exactly `n` data bytes.
fn chunk_fits(have: usize, n: u64) -> bool {
    let have = have as u64;
    have >= n && have < n + 8
}

/// Copies `len` bytes of the local SGE list, starting `off` bytes in, to `dst`.
///
/// # Safety
/// The SGEs must describe readable memory (validated against the memory table) and `dst` must
/// be valid for `len` bytes of writes.
pub(super) unsafe fn gather(sges: &[Sge], mut off: u64, mut dst: *mut u8, mut len: u64) {
    for s in sges {
        if len == 0 {
            break;
        }
        if off >= u64::from(s.length) {
            off -= u64::from(s.length);
            continue;
        }
        let n = (u64::from(s.length) - off).min(len);
        // SAFETY: per the contract; n bytes lie inside both the SGE and dst.
        unsafe {
            std::ptr::copy_nonoverlapping((s.addr + off) as *const u8, dst, n as usize);
            dst = dst.add(n as usize);
        }
        len -= n;
        off = 0;
    }
}

/// Copies `len` bytes from `src` into the local SGE list starting `off` bytes in.
///
/// # Safety
/// The SGEs must describe writable memory and `src` must be valid for `len` bytes of reads.
pub(super) unsafe fn scatter(sges: &[Sge], mut off: u64, mut src: *const u8, mut len: u64) {
    for s in sges {
        if len == 0 {
            break;
        }
        if off >= u64::from(s.length) {
            off -= u64::from(s.length);
            continue;
        }
        let n = (u64::from(s.length) - off).min(len);
        // SAFETY: per the contract.
        unsafe {
            std::ptr::copy_nonoverlapping(src, (s.addr + off) as *mut u8, n as usize);
            src = src.add(n as usize);
        }
        len -= n;
        off = 0;
    }
}

/// The first `total` bytes of `sges` as (addr, len) pairs.
pub fn iovs(sges: &[Sge], total: u64, out: &mut [(u64, u64); MAX_IOV]) -> usize {
    let mut n = 0;
    let mut left = total;
    for s in sges {
        if left == 0 || n == MAX_IOV {
            break;
        }
        let l = u64::from(s.length).min(left);
        if l > 0 {
            out[n] = (s.addr, l);
            n += 1;
            left -= l;
        }
    }
    n
}

/// One data step on a connected QP, in whatever thread drives it: execute requests (unless
/// the peer is going away), complete outbound work, issue queued work. True if it did
/// something.
pub fn step(sh: &QpShared, st: &mut QpState, a: &mut After, part: Part) -> Result<bool, Fault> {
    let mut did = false;
    if part.requests && !st.peer_disc && !st.peer_gone {
        did |= pump_rx(sh, st, a)?;
    }
    if part.completes(st) {
        did |= pump_resp(sh, st, a)?;
    }
    if st.sq.issued < st.sq.tail {
        did |= pump_tx(sh, st, a)?;
    }
    Ok(did)
}

/// Which halves of the data path a step runs: a receive queue's poll executes inbound
/// requests, a send queue's poll completes outbound work; the progress thread does both.
#[derive(Clone, Copy, Debug)]
pub struct Part {
    pub requests: bool,
    pub completions: bool,
}

impl Part {
    pub const ALL: Part = Part { requests: true, completions: true };

    /// Whether the step completes outbound work. A receive-queue poll also does when the send
    /// queue fills up, so programs that post unsignaled sends and never poll their request EVD
    /// keep going.
    fn completes(self, st: &QpState) -> bool {
        self.completions || (st.sq.issued - st.sq.head) * 2 > st.sq.depth as u64
    }
}

/// Whether a [`step`] with `part` would find nothing to do: no request record waiting and no
/// inbound operation or answer in progress, no outbound work to complete, none to issue. A poll
/// checks it (under the queue pair's lock, reading only the header a step reads first) before
/// it sets a step up, so an idle poll costs a few loads.
pub fn idle(st: &QpState, part: Part) -> bool {
    let Some(link) = &st.link else { return true };
    let requests_idle =
        !part.requests || (matches!(st.rx, Rx::Idle) && st.pending_ack.is_none() && link.rx_req.is_empty());
    let completions_idle = st.sq.head == st.sq.issued || !part.completes(st);
    requests_idle && completions_idle && st.sq.issued == st.sq.tail
}

/// Issues as much of the send queue as it can: RDMA ops this side may execute itself are done
/// here ([`rdma`]), the rest is written into the request ring as far as it fits. True if it
/// issued anything.
#[inline]
pub fn pump_tx(sh: &QpShared, st: &mut QpState, a: &mut After) -> Result<bool, Fault> {
    let QpState { link, sq, reads_out, sock, .. } = st;
    let Some(link) = link.as_mut() else { return Ok(false) };
    if sock.is_none() {
        return Ok(false);
    }
    let mut pushed = false;
    let mut local = false;
    while sq.issued < sq.tail {
        let (e, sges) = sq.entry_mut(sq.issued);
        if !e.hdr_sent && e.fence && *reads_out > 0 {
            break;
        }
        if matches!(e.kind, OpKind::Write | OpKind::Read) && !e.hdr_sent {
            let op =
                rdma::Op { kind: e.kind, remote_addr: e.remote_addr, rkey: e.rkey, total: e.total, sges, pd: sh.pd };
            match rdma::execute(link, *reads_out, &op)? {
                rdma::Outcome::Unavailable => {}
                rdma::Outcome::NotYet => break,
                rdma::Outcome::Done(status) => {
                    let len = if status == WcStatus::Success { e.total } else { 0 };
                    e.done = Some((status, len));
                    sq.issued += 1;
                    local = true;
                    continue;
                }
            }
        }
        e.via_ring = true;
        let mut flags = if e.solicited { F_SOLICITED } else { 0 };
        let kind = match e.kind {
            OpKind::Send => R_SEND,
            OpKind::Write => R_WRITE,
            OpKind::Read => R_READ,
            OpKind::WriteImmed => {
                flags |= F_IMMED;
                R_WRITE
            }
            OpKind::FetchAdd => R_ATOMIC,
            OpKind::CmpSwap => {
                flags |= F_CMP_SWAP;
                R_ATOMIC
            }
        };
        let hdr = |niov: usize| OpHdr {
            total_len: e.total,
            remote_addr: e.remote_addr,
            rkey: e.rkey,
            niov: niov as u32,
            arg: e.arg,
        };
        let inline = e.kind != OpKind::Read && (!link.peer_copies || e.total <= INLINE_MAX);
        if kind == R_ATOMIC {
            let ok = link.tx_req.push(kind, flags, ATOMIC_REC, |b| {
                hdr(0).write(&mut b[..OP_HDR]);
                b[OP_HDR..ATOMIC_REC].copy_from_slice(&e.swap.to_le_bytes());
            })?;
            if !ok {
                break;
            }
            e.hdr_sent = true;
        } else if !inline {
            let mut v = [(0u64, 0u64); MAX_IOV];
            let nv = iovs(sges, e.total, &mut v);
            let ok = link.tx_req.push(kind, flags, OP_HDR + nv * IOV, |b| {
                hdr(nv).write(&mut b[..OP_HDR]);
                for (k, (a, l)) in v[..nv].iter().enumerate() {
                    write_iov(&mut b[OP_HDR + k * IOV..], *a, *l);
                }
            })?;
            if !ok {
                break;
            }
            if e.kind == OpKind::Read {
                *reads_out += 1;
            }
            e.hdr_sent = true;
        } else {
            let mut blocked = false;
            if !e.hdr_sent {
                let first = e.total.min(CHUNK);
                let ok = link.tx_req.push(kind, flags | F_INLINE, OP_HDR + first as usize, |b| {
                    hdr(0).write(&mut b[..OP_HDR]);
                    // SAFETY: SGEs validated at post; b has `first` bytes after the header.
                    unsafe { gather(sges, 0, b[OP_HDR..].as_mut_ptr(), first) };
                })?;
                if ok {
                    e.hdr_sent = true;
                    e.sent = first;
                } else {
                    blocked = true;
                }
            }
            while !blocked && e.sent < e.total {
                let c = (e.total - e.sent).min(CHUNK);
                let off = e.sent;
                // SAFETY: as above.
                let ok =
                    link.tx_req.push(R_DATA, 0, c as usize, |b| unsafe { gather(sges, off, b.as_mut_ptr(), c) })?;
                if ok {
                    e.sent += c;
                } else {
                    blocked = true;
                }
            }
            if e.hdr_sent {
                pushed = true;
            }
            if blocked {
                break;
            }
        }
        e.ring_end = link.tx_req.position();
        sq.issued += 1;
        pushed = true;
    }
    if pushed {
        link.peer.notify_recv_cq();
    }
    if local {
        sh.retire(sq, a);
    }
    Ok(pushed || local)
}

/// Completes send-queue work: ops the target consumed without an ACK succeeded; ACKs carry
/// errors and RDMA read outcomes; inline RDMA read data is placed.
pub fn pump_resp(sh: &QpShared, st: &mut QpState, a: &mut After) -> Result<bool, Fault> {
    let mut did = false;
    let mut ring = false;
    {
        let QpState { link, sq, reads_out, .. } = &mut *st;
        let Some(link) = link.as_mut() else { return Ok(false) };
        if sq.head == sq.issued {
            return Ok(false);
        }
        // Read the target's position first: an ACK for a consumed op was written before the
        // op's record was consumed, so the ring below holds every ACK up to there.
        let consumed = link.tx_req.consumer_position()?;
        while let Some(rec) = link.rx_resp.peek()? {
            did = true;
            match rec.kind {
                R_ACK => {
                    let b: [u8; ACK_LEN] = rec.fixed()?;
                    let word = |k: usize| u64::from_le_bytes(b[k..k + 8].try_into().unwrap_or_default());
                    let status = status_from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                    let (len, pos) = (word(8), word(16));
                    let i = sq.pending_ring_op(Some(pos)).ok_or(Fault::Malformed("ACK without outstanding request"))?;
                    let e = sq.e[i];
                    if e.kind == OpKind::Read {
                        *reads_out = reads_out.saturating_sub(1);
                        if status == WcStatus::Success && e.got != 0 && e.got != e.total {
                            return Err(Fault::Malformed("short rdma read data"));
                        }
                    }
                    let mut status = if status == WcStatus::Success { e.err.unwrap_or(status) } else { status };
                    if matches!(e.kind, OpKind::FetchAdd | OpKind::CmpSwap) && status == WcStatus::Success {
                        // The ACK's length is the word's old value: it lands in the local buffer.
                        status = place_old_value(sh, sq.sges_at(i), len);
                    }
                    let len = if status == WcStatus::Success { len.min(e.total) } else { 0 };
                    sq.e[i].done = Some((status, len));
                }
                R_READ_DATA => {
                    let i = sq.pending_ring_op(None).ok_or(Fault::Malformed("unexpected rdma read data"))?;
                    let mut e = sq.e[i];
                    // Records are padded to 8 bytes; chunk sizes are implied by the protocol.
                    let n = e.total.saturating_sub(e.got).min(CHUNK);
                    if !chunk_fits(rec.payload_len, n) || n == 0 {
                        return Err(Fault::Malformed("unexpected rdma read data"));
                    }
                    let sink = sq.sges_at(i);
                    if e.err.is_none() && !recvq::still_valid(sink, sh.pd, LOCAL_WRITE) {
                        e.err = Some(WcStatus::LocalProtection);
                    }
                    if e.err.is_none() {
                        // SAFETY: sink SGEs re-validated just now; payload has n bytes.
                        unsafe { scatter(sink, e.got, rec.payload, n) };
                    }
                    e.got += n;
                    sq.e[i] = e;
                }
                _ => return Err(Fault::Malformed("unknown response record")),
            }
            ring |= link.rx_resp.consume(rec);
        }
        sq.consumed_up_to(consumed);
        let before = sq.head;
        sh.retire(sq, a);
        did |= sq.head != before;
        if ring {
            // The peer's responder waits for response space.
            link.peer.notify_recv_cq();
        }
    }
    if ring {
        QpShared::bell(st);
    }
    Ok(did)
}

/// Writes an atomic's result (the remote word's old value) into its local buffer.
fn place_old_value(sh: &QpShared, sink: &[Sge], old: u64) -> WcStatus {
    if !recvq::still_valid(sink, sh.pd, LOCAL_WRITE) {
        return WcStatus::LocalProtection;
    }
    let bytes = old.to_ne_bytes();
    // SAFETY: the sink was validated just now; it holds 8 bytes (checked at post).
    unsafe { scatter(sink, 0, bytes.as_ptr(), bytes.len() as u64) };
    WcStatus::Success
}

/// Executes a 64-bit atomic on our memory at `addr` (under `rkey`, with remote-atomic access)
/// and returns the word's old value. It runs in this (the target's) process with the CPU's own
/// atomic instructions, so it is atomic against every other DAT atomic on this memory from any
/// peer (they all execute here, in some thread of ours) and against the target's own atomic
/// instructions on the word, but not against plain stores or RDMA writes (as on IB).
fn execute_atomic(
    sh: &QpShared,
    busy: &std::sync::atomic::AtomicU32,
    hdr: &OpHdr,
    op: super::super::AtomicOp,
) -> (WcStatus, u64) {
    use std::sync::atomic::{AtomicU64, Ordering};
    if !hdr.remote_addr.is_multiple_of(8) || hdr.total_len != 8 {
        return (WcStatus::RemoteOperation, 0);
    }
    let run = || {
        // SAFETY: [addr, addr+8) is registered memory of ours with remote-atomic access
        // (checked against the rkey under the busy mark), 8-byte aligned (checked above).
        let word = unsafe { AtomicU64::from_ptr(hdr.remote_addr as *mut u64) };
        match op {
            super::super::AtomicOp::FetchAdd { add } => word.fetch_add(add, Ordering::SeqCst),
            super::super::AtomicOp::CmpSwap { compare, swap } => {
                word.compare_exchange(compare, swap, Ordering::SeqCst, Ordering::SeqCst).unwrap_or_else(|v| v)
            }
        }
    };
    match guarded(sh, busy, (hdr.rkey, hdr.remote_addr, 8, Right::Atomic), run) {
        Some(old) => (WcStatus::Success, old),
        None => (WcStatus::RemoteAccess, 0),
    }
}

fn push_ack(st: &mut QpState, ack: Ack) -> Result<bool, Fault> {
    let Some(link) = st.link.as_mut() else { return Ok(false) };
    let ok = link.tx_resp.push(R_ACK, 0, ACK_LEN, |b| {
        b[0..4].copy_from_slice(&status_code(ack.status).to_le_bytes());
        b[4..8].fill(0);
        b[8..16].copy_from_slice(&ack.len.to_le_bytes());
        b[16..24].copy_from_slice(&ack.pos.to_le_bytes());
    })?;
    Ok(ok)
}

/// The remote access right an inbound operation needs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Right {
    Read,
    Write,
    Atomic,
}

/// Checks an rkey access at the target.
fn remote_ok(sh: &QpShared, rkey: u32, addr: u64, len: u64, right: Right) -> bool {
    if len == 0 {
        return true;
    }
    memtable::lookup(rkey).is_some_and(|e| {
        e.pd == sh.pd
            && e.covers(addr, len)
            && match right {
                Right::Read => e.access.remote_read,
                Right::Write => e.access.remote_write,
                Right::Atomic => e.access.remote_atomic,
            }
    })
}

/// Runs `copy` (touching our memory under `rkey`) if the access is allowed, with the copy
/// announced in `busy` (the connection's private `target_busy` word) so deregistration waits
/// for it; see [`memtable::quiesce`]. None when not allowed.
fn guarded<T>(
    sh: &QpShared,
    busy: &std::sync::atomic::AtomicU32,
    (rkey, addr, len, right): (u32, u64, u64, Right),
    copy: impl FnOnce() -> T,
) -> Option<T> {
    use std::sync::atomic::{fence, Ordering};
    busy.store(memtable::slot_of(rkey) + 1, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    let r = remote_ok(sh, rkey, addr, len, right).then(copy);
    busy.store(0, Ordering::Release);
    r
}

fn cma_status(sh: &QpShared, r: std::io::Result<()>) -> Result<WcStatus, Fault> {
    match r {
        Ok(()) => Ok(WcStatus::Success),
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Err(Fault::PeerGone),
        Err(e) => {
            tracing::debug!(context = sh.context, "shm: cross-memory copy failed: {e}");
            Ok(WcStatus::LocalProtection)
        }
    }
}

/// The receive an inbound op consumed: its work request id, and the immediate data of an
/// RDMA write with immediate (None: a send filled it).
type Consumed = (u64, Option<u32>);

/// Finishes an inbound op whose payload is complete: `status` for the receive, `ack` for the
/// initiator.
/// `recv`: the receive it consumed, if any (a send, or a write with immediate data).
fn finish_inbound(
    sh: &QpShared,
    st: &mut QpState,
    a: &mut After,
    recv: Option<Consumed>,
    total: u64,
    (status, ack): (WcStatus, WcStatus),
    end: u64,
) {
    if let Some((wr_id, immed)) = recv {
        sh.complete_recv(a, wr_id, status, if status == WcStatus::Success { total } else { 0 }, immed);
    }
    answer(st, ack, total, end);
}

/// Sets the answer to the op whose last record ends at ring position `end`: success needs
/// none (the initiator sees the record consumed), an error is acknowledged before the record
/// is consumed.
fn answer(st: &mut QpState, status: WcStatus, len: u64, end: u64) {
    if status != WcStatus::Success {
        st.pending_ack = Some(Ack { status, len, pos: end, then_consume: true });
    }
}

/// Reads the `niov` initiator iovecs after a request record's header into `buf`; their lengths
/// must add up to the op's `total`.
pub(super) fn read_iovs<'a>(
    rec: &Record,
    niov: u32,
    total: u64,
    buf: &'a mut [(u64, u64); MAX_IOV],
) -> Result<&'a [(u64, u64)], Fault> {
    let nr = niov as usize;
    if nr > MAX_IOV || rec.payload_len < OP_HDR + nr * IOV {
        return Err(Fault::Malformed("bad iovec list"));
    }
    // SAFETY: payload_len covers the iovec list (checked above).
    let p = unsafe { std::slice::from_raw_parts(rec.payload.add(OP_HDR), nr * IOV) };
    let mut sum = 0u64;
    for (k, v) in buf[..nr].iter_mut().enumerate() {
        *v = read_iov(&p[k * IOV..]);
        sum = sum.checked_add(v.1).ok_or(Fault::Malformed("iovec overflow"))?;
    }
    if sum != total {
        return Err(Fault::Malformed("bad iovec list"));
    }
    Ok(&buf[..nr])
}

/// Executes inbound requests until the ring is empty or something must wait (no receive
/// posted, response ring full).
pub fn pump_rx(sh: &QpShared, st: &mut QpState, a: &mut After) -> Result<bool, Fault> {
    let mut did = false;
    let mut ring = false;
    let r = (|| {
        while receive_small_send(sh, st, a, &mut ring)? {
            did = true;
        }
        let more = !matches!(st.rx, Rx::Idle)
            || st.pending_ack.is_some()
            || st.link.as_ref().is_some_and(|l| !l.rx_req.is_empty());
        if more {
            pump_rx_inner(sh, st, a, &mut did, &mut ring)?;
        }
        Ok(())
    })();
    if let Some(link) = &st.link {
        if ring || did {
            // Responses for its send queue, or request space it waits for.
            link.peer.notify_send_cq();
        }
    }
    if ring {
        QpShared::bell(st);
    }
    r.map(|()| did)
}

/// The common inbound operation, placed without the general loop ([`pump_rx_inner`]): a send
/// whose whole payload is inline in its record, into the queue pair's own next receive, which
/// holds it and is still registered (its check at the post still holds while no key was
/// cleared since: [`super::memtable::keys_cleared`]), with nothing else in progress. Anything
/// else (an SRQ, a payload over several records, a receive too short or deregistered: an error
/// to report, no receive posted) is left to the general loop, untouched. True when it placed
/// one.
fn receive_small_send(sh: &QpShared, st: &mut QpState, a: &mut After, ring: &mut bool) -> Result<bool, Fault> {
    if sh.srq.is_some() || !matches!(st.rx, Rx::Idle) || st.pending_ack.is_some() {
        return Ok(false);
    }
    let QpState { link, rq, .. } = st;
    let Some(link) = link.as_mut() else { return Ok(false) };
    let Some(rec) = link.rx_req.peek()? else { return Ok(false) };
    if rec.kind != R_SEND || rec.flags & F_INLINE == 0 || rec.payload_len < OP_HDR {
        return Ok(false);
    }
    let hdr = OpHdr::read(&rec.fixed::<OP_HDR>()?);
    let total = hdr.total_len;
    if total > CHUNK || hdr.niov != 0 || !chunk_fits(rec.payload_len - OP_HDR, total) {
        return Ok(false);
    }
    let Some((wr_id, sges, checked)) = rq.front() else { return Ok(false) };
    if checked.total < total || !(checked.holds() || recvq::still_valid(sges, sh.pd, LOCAL_WRITE)) {
        return Ok(false);
    }
    // SAFETY: the receive's SGEs were validated just now and hold `total` bytes; the record's
    // payload holds them after the op header (checked by `chunk_fits`).
    unsafe { scatter(sges, 0, rec.payload.add(OP_HDR), total) };
    rq.skip();
    *ring |= link.rx_req.consume(rec);
    sh.complete_recv(a, wr_id, WcStatus::Success, total, None);
    Ok(true)
}

fn pump_rx_inner(sh: &QpShared, st: &mut QpState, a: &mut After, did: &mut bool, ring: &mut bool) -> Result<(), Fault> {
    loop {
        if let Some(ack) = st.pending_ack {
            if !push_ack(st, ack)? {
                return Ok(());
            }
            st.pending_ack = None;
            *did = true;
            if ack.then_consume {
                let Some(link) = st.link.as_mut() else { return Ok(()) };
                let rec = link.rx_req.peek()?.ok_or(Fault::Malformed("acknowledged request vanished"))?;
                *ring |= link.rx_req.consume(rec);
            }
        }
        if let Rx::ReadResp { src, rkey, total, mut off, pos } = st.rx {
            let Some(link) = st.link.as_mut() else { return Ok(()) };
            let mut status = WcStatus::Success;
            while off < total {
                let c = (total - off).min(CHUNK);
                let from = src + off;
                let busy = link.seg.target_busy();
                let pushed = guarded(sh, busy, (rkey, src, total, Right::Read), || {
                    // SAFETY: [src, src+total) was checked against the rkey just now.
                    link.tx_resp.push(R_READ_DATA, 0, c as usize, |b| unsafe {
                        std::ptr::copy_nonoverlapping(from as *const u8, b.as_mut_ptr(), c as usize)
                    })
                });
                match pushed.transpose()? {
                    None => {
                        status = WcStatus::RemoteAccess; // deregistered meanwhile
                        break;
                    }
                    Some(false) => {
                        st.rx = Rx::ReadResp { src, rkey, total, off, pos };
                        return Ok(());
                    }
                    Some(true) => {}
                }
                off += c;
                *did = true;
            }
            st.rx = Rx::Idle;
            st.pending_ack = Some(Ack { status, len: total, pos, then_consume: false });
            continue;
        }
        let Some(link) = st.link.as_mut() else { return Ok(()) };
        let Some(rec) = link.rx_req.peek()? else { return Ok(()) };
        let (peer, we_copy) = (link.peer_pid, link.we_copy);
        let end = link.rx_req.position_after(&rec);
        match (st.rx, rec.kind) {
            (Rx::Inline { dest, total, off, mut status, mut ack }, R_DATA) => {
                let n = (total - off).min(CHUNK);
                if !chunk_fits(rec.payload_len, n) {
                    return Err(Fault::Malformed("inline data overruns its operation"));
                }
                if status == WcStatus::Success && ack == WcStatus::Success {
                    match dest {
                        // The receive's region may have been deregistered since the op's first
                        // record: looked at again before each record lands, as at the first.
                        Dest::Recv(..) if !recvq::still_valid(st.recv_sges.as_slice(), sh.pd, LOCAL_WRITE) => {
                            status = WcStatus::LocalProtection;
                            ack = WcStatus::RemoteOperation;
                        }
                        // SAFETY: the receive SGEs were re-validated just now.
                        Dest::Recv(..) => unsafe { scatter(st.recv_sges.as_slice(), off, rec.payload, n) },
                        Dest::Mem { addr, rkey, .. } => {
                            let busy = link.seg.target_busy();
                            // SAFETY: [addr, addr+total) is checked against the rkey first.
                            let copy = || unsafe {
                                std::ptr::copy_nonoverlapping(rec.payload, (addr + off) as *mut u8, n as usize)
                            };
                            if guarded(sh, busy, (rkey, addr, total, Right::Write), copy).is_none() {
                                ack = WcStatus::RemoteAccess; // deregistered meanwhile
                            }
                        }
                    }
                }
                if off + n == total {
                    st.rx = Rx::Idle;
                    // A write's receive (with immediate data) shares the write's outcome.
                    let (recv, status) = match dest {
                        Dest::Recv(wr_id, _) => (Some((wr_id, None)), status),
                        Dest::Mem { immed, .. } => (immed.map(|(w, i)| (w, Some(i))), ack),
                    };
                    finish_inbound(sh, st, a, recv, total, (status, ack), end);
                } else {
                    st.rx = Rx::Inline { dest, total, off: off + n, status, ack };
                }
            }
            (Rx::Inline { .. }, _) => return Err(Fault::Malformed("operation interleaved with inline data")),
            (Rx::Idle, R_DATA) => return Err(Fault::Malformed("inline data without operation")),
            (Rx::Idle, R_ATOMIC) => {
                // Acknowledged (with the old value) before the record is consumed.
                let b = rec.fixed::<ATOMIC_REC>()?;
                let hdr = OpHdr::read(&b);
                let op = if rec.flags & F_CMP_SWAP != 0 {
                    super::super::AtomicOp::CmpSwap { compare: hdr.arg, swap: atomic_swap(&b) }
                } else {
                    super::super::AtomicOp::FetchAdd { add: hdr.arg }
                };
                let (status, old) = execute_atomic(sh, link.seg.target_busy(), &hdr, op);
                st.pending_ack = Some(Ack { status, len: old, pos: end, then_consume: true });
            }
            (Rx::Idle, R_SEND | R_WRITE | R_READ) => {
                let hdr = OpHdr::read(&rec.fixed::<OP_HDR>()?);
                let inline = rec.flags & F_INLINE != 0;
                let total = hdr.total_len;
                if total > super::MAX_MESSAGE {
                    return Err(Fault::Malformed("operation too large"));
                }
                // Remote iovecs (initiator memory) or the first inline chunk. The iovec buffer
                // is set up only for a non-inline op (an inline one does not clear it).
                let mut riov_buf;
                let mut riov: &[(u64, u64)] = &[];
                let mut chunk = 0u64;
                if inline {
                    chunk = total.min(CHUNK);
                    if !chunk_fits(rec.payload_len - OP_HDR, chunk) || hdr.niov != 0 || rec.kind == R_READ {
                        return Err(Fault::Malformed("bad inline operation"));
                    }
                } else {
                    riov_buf = [(0u64, 0u64); MAX_IOV];
                    riov = read_iovs(&rec, hdr.niov, total, &mut riov_buf)?;
                    if !we_copy && rec.kind != R_READ {
                        return Err(Fault::Malformed("bad iovec list"));
                    }
                }
                match rec.kind {
                    R_SEND => {
                        let Some(wr_id) = sh.take_recv(st) else { return Ok(()) };
                        let sges = st.recv_sges.as_slice();
                        let cap = st.recv_sges.total();
                        let (mut status, mut ack) = (WcStatus::Success, WcStatus::Success);
                        if total > cap {
                            status = WcStatus::LocalLength;
                            ack = WcStatus::RemoteOperation;
                        } else if !recvq::still_valid(sges, sh.pd, LOCAL_WRITE) {
                            status = WcStatus::LocalProtection;
                            ack = WcStatus::RemoteOperation;
                        }
                        if inline {
                            if status == WcStatus::Success {
                                // SAFETY: receive SGEs validated; the chunk is in the record.
                                unsafe { scatter(sges, 0, rec.payload.add(OP_HDR), chunk) };
                            }
                            if chunk == total {
                                finish_inbound(sh, st, a, Some((wr_id, None)), total, (status, ack), end);
                            } else {
                                let dest = Dest::Recv(wr_id, sh.srq.is_some());
                                st.rx = Rx::Inline { dest, total, off: chunk, status, ack };
                            }
                        } else {
                            if status == WcStatus::Success {
                                let mut liov = [(0u64, 0u64); MAX_IOV];
                                let nl = iovs(sges, total, &mut liov);
                                let s = cma_status(sh, cma::transfer(peer, &liov[..nl], riov, false))?;
                                if s != WcStatus::Success {
                                    status = WcStatus::RemoteOperation;
                                    ack = s;
                                }
                            }
                            finish_inbound(sh, st, a, Some((wr_id, None)), total, (status, ack), end);
                        }
                    }
                    R_WRITE => {
                        // With immediate data it consumes a receive first (and waits for one).
                        let immed = if rec.flags & F_IMMED != 0 {
                            let Some(wr_id) = sh.take_recv(st) else { return Ok(()) };
                            Some((wr_id, hdr.arg as u32))
                        } else {
                            None
                        };
                        let recv = immed.map(|(w, i)| (w, Some(i)));
                        let Some(link) = st.link.as_mut() else { return Ok(()) };
                        let busy = link.seg.target_busy();
                        let access = (hdr.rkey, hdr.remote_addr, total, Right::Write);
                        let dest = Dest::Mem { addr: hdr.remote_addr, rkey: hdr.rkey, immed };
                        if inline {
                            // SAFETY: the destination is checked against the rkey first.
                            let copy = || unsafe {
                                std::ptr::copy_nonoverlapping(
                                    rec.payload.add(OP_HDR),
                                    hdr.remote_addr as *mut u8,
                                    chunk as usize,
                                )
                            };
                            let ack = match guarded(sh, busy, access, copy) {
                                Some(()) => WcStatus::Success,
                                None => WcStatus::RemoteAccess,
                            };
                            if chunk == total {
                                finish_inbound(sh, st, a, recv, total, (ack, ack), end);
                            } else {
                                st.rx = Rx::Inline { dest, total, off: chunk, status: WcStatus::Success, ack };
                            }
                        } else {
                            let copy = || cma::transfer(peer, &[(hdr.remote_addr, total)], riov, false);
                            let ack = match guarded(sh, busy, access, copy) {
                                Some(r) => cma_status(sh, r)?,
                                None => WcStatus::RemoteAccess,
                            };
                            finish_inbound(sh, st, a, recv, total, (ack, ack), end);
                        }
                    }
                    _ => {
                        // R_READ: always acknowledged (the initiator has no other sign of the
                        // data), before the record is consumed.
                        let ack = |status| Some(Ack { status, len: total, pos: end, then_consume: true });
                        if !remote_ok(sh, hdr.rkey, hdr.remote_addr, total, Right::Read) {
                            st.pending_ack = ack(WcStatus::RemoteAccess);
                        } else if total == 0 {
                            st.pending_ack = ack(WcStatus::Success);
                        } else if we_copy && !riov.is_empty() {
                            let busy = link.seg.target_busy();
                            let copy = || cma::transfer(peer, &[(hdr.remote_addr, total)], riov, true);
                            st.pending_ack =
                                ack(match guarded(sh, busy, (hdr.rkey, hdr.remote_addr, total, Right::Read), copy) {
                                    Some(r) => cma_status(sh, r)?,
                                    None => WcStatus::RemoteAccess,
                                });
                        } else {
                            st.rx = Rx::ReadResp { src: hdr.remote_addr, rkey: hdr.rkey, total, off: 0, pos: end };
                        }
                    }
                }
            }
            _ => return Err(Fault::Malformed("unknown request record")),
        }
        *did = true;
        if st.pending_ack.is_some_and(|a| a.then_consume) {
            continue; // acknowledge first, then consume (top of the loop)
        }
        let Some(link) = st.link.as_mut() else { return Ok(()) };
        *ring |= link.rx_req.consume(rec);
    }
}
