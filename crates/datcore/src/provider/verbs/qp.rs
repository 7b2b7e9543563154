//! Queue pairs: an RC `ibv_qp` created with the EP on an rdma_cm id of its own (moved to the
//! request's id on accept), slot rings for the consumer's cookies, and the connection state
//! machine driven by the CM thread ([`super::cm`]).
//!
//! ```text
//! Idle --connect--> Resolving --ADDR/ROUTE_RESOLVED: rdma_connect--> Connecting
//! Idle --accept: QP moved to the request id, rdma_accept--> Accepting
//! Connecting/Accepting --ESTABLISHED--> Connected --disconnect / DISCONNECTED--> Closed
//! any --REJECTED/UNREACHABLE/errors/timeout--> Closed
//! ```

use super::super::{
    AtomicOp, BindWr, ConnEvent, ConnectionEvents, ConnectionRequest, QpCaps, QpInit, QueuePair, Rdma, SendFlags,
    SendOp, SendWr, Sge, WcOpcode, WorkCompletion,
};
use super::cm::{self, Owner};
use super::cq::{self, VerbsCq};
use super::inline::{self, InlineSends};
use super::srq::VerbsSrq;
use super::{fail, sys, DevInner, VerbsPd, CQS, MRS, MWS, PDS, SRQS};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::provider::spin::{SpinGuard, SpinLock};
use parking_lot::Mutex;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// Most scatter/gather entries of one work request (a stack array on the post path).
pub const MAX_SGE: usize = 16;

pub const KIND_SEND: u64 = 0;
pub const KIND_RECV: u64 = 1 << 62;
pub const KIND_SRQ: u64 = 2 << 62;
const KIND_MASK: u64 = 3 << KIND_SHIFT;
/// Where a work request's kind starts in its ibv wr_id.
const KIND_SHIFT: u32 = 62;

// The operations whose payload may go inline come first, so one compare tells them
// ([`OP_LAST_INLINE`]).
const OP_SEND: u64 = 0;
const OP_WRITE: u64 = 1;
const OP_WRITE_IMMED: u64 = 2;
/// The last `OP_*` whose payload a device may take inline (a send or RDMA write's).
const OP_LAST_INLINE: u64 = OP_WRITE_IMMED;
const OP_READ: u64 = 3;
const OP_BIND: u64 = 4;
const OP_FETCH_ADD: u64 = 5;
const OP_CMP_SWAP: u64 = 6;
const OP_SEND_UD: u64 = 7;

/// How long a graceful disconnect waits for rdma_cm's DISCONNECTED before reporting anyway.
const DISCONNECT_GRACE: Duration = Duration::from_secs(5);

/// When an initiator on soft-iWARP sends its empty RDMA writes ([`VerbsQp::nudge`]): the first
/// this long after ESTABLISHED, the next this long after the one before.
const NUDGE_GAPS: [Duration; 2] = [Duration::from_millis(200), Duration::from_millis(1800)];

/// Test hook (`DAT_VERBS_TEST_LOSE_PASSIVE_ESTABLISHED` set): the passive side drops rdma_cm's
/// ESTABLISHED, as when the IB CM handles the peer's DREQ before its RTU. Read once per
/// accepted connection, on the CM thread.
fn lose_passive_established_for_test() -> bool {
    std::env::var_os("DAT_VERBS_TEST_LOSE_PASSIVE_ESTABLISHED").is_some()
}

pub fn set_nonblock(fd: i32) {
    // SAFETY: fcntl on a descriptor we own a reference to.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
}

/// The segments of a work request as the device takes them ([`Sge`] is `struct ibv_sge`), and
/// the bytes they span: the consumer's own list when none is empty (the usual case: nothing
/// copied), else its non-empty segments copied into `out` (DAT ignores an empty segment's
/// lmr_context, which a device may check). More than [`MAX_SGE`] non-empty segments:
/// `DAT_INVALID_PARAMETER`.
#[inline]
pub fn device_sges<'a>(sges: &'a [Sge], out: &'a mut [MaybeUninit<Sge>; MAX_SGE]) -> DatResult<(&'a [Sge], u64)> {
    // One segment, the usual case: no loop.
    if let [s] = sges {
        if s.length != 0 {
            return Ok((sges, u64::from(s.length)));
        }
    } else if sges.len() <= MAX_SGE {
        if let Some(total) = span_if_none_empty(sges) {
            return Ok((sges, total));
        }
    }
    copy_non_empty(sges, out)
}

/// [`device_sges`]' rare case, out of line so the usual one stays short: `sges`' non-empty
/// segments copied into `out`.
#[cold]
#[inline(never)]
fn copy_non_empty<'a>(sges: &[Sge], out: &'a mut [MaybeUninit<Sge>; MAX_SGE]) -> DatResult<(&'a [Sge], u64)> {
    let mut n = 0;
    let mut total = 0;
    for s in sges.iter().filter(|s| s.length != 0) {
        if n == MAX_SGE {
            return Err(DatError::invalid_arg(2));
        }
        out[n].write(*s);
        total += u64::from(s.length);
        n += 1;
    }
    // SAFETY: the first `n` entries were written above.
    Ok((unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<Sge>(), n) }, total))
}

/// The bytes `sges` span, or None if one of them is empty. One pass that stops at an empty
/// segment (which also keeps it a plain loop rather than a vectorised sum, whose set-up costs
/// more than a request's few segments).
#[inline]
fn span_if_none_empty(sges: &[Sge]) -> Option<u64> {
    let mut total = 0;
    for s in sges {
        if s.length == 0 {
            return None;
        }
        total += u64::from(s.length);
    }
    Some(total)
}

/// The bytes a list of segments spans.
fn total_length(sges: &[Sge]) -> u64 {
    sges.iter().map(|s| u64::from(s.length)).sum()
}

/// The longest payload siw sends from user memory in one copy (`MAX_HDR_INLINE` of its
/// transmit path; an RDMA read's response among them). That copy is wrong when the payload
/// crosses a page of the sender: it takes the second page's share of the bytes for the first's,
/// so a read of 16-31 bytes across a responder's page boundary came back as the right first
/// bytes, others of the responder's memory, then the start of the next page (the siw soak).
const SIW_SHORT_PAYLOAD: u64 = 32;
/// The boundary such a read is cut at: the smallest page size, of which every larger one is a
/// multiple.
const PAGE_GRANULE: u64 = 4096;

/// Whether a read of `bytes` at the responder's `remote_addr` is one siw's short copy takes
/// and crosses a page boundary there.
#[inline(always)]
fn short_read_crosses_page(remote_addr: u64, bytes: u64) -> bool {
    bytes != 0 && bytes <= SIW_SHORT_PAYLOAD && remote_addr % PAGE_GRANULE + bytes > PAGE_GRANULE
}

/// An RDMA read split into requests the device takes: chunks of at most `max_sge_rd` SGEs
/// and, on siw, a short chunk crossing a page boundary of the responder cut in two there (its
/// SGE at the cut in two pieces). Fragment `k` is `sges[ends[k - 1]..ends[k]]`.
struct ReadFragments {
    sges: [Sge; 2 * MAX_SGE],
    ends: [usize; 2 * MAX_SGE],
    count: usize,
}

impl ReadFragments {
    /// `list` (at most [`MAX_SGE`] SGEs, none empty) read from `remote_addr` on; `cut_short`:
    /// cut short chunks that cross a page (siw).
    fn new(list: &[Sge], max_sge_rd: usize, remote_addr: u64, cut_short: bool) -> ReadFragments {
        let empty = Sge { addr: 0, length: 0, lkey: 0 };
        let mut f = ReadFragments { sges: [empty; 2 * MAX_SGE], ends: [0; 2 * MAX_SGE], count: 0 };
        let mut n = 0;
        let mut remote = remote_addr;
        for chunk in list.chunks(max_sge_rd.max(1)) {
            let bytes = total_length(chunk);
            // Bytes of the chunk before the cut, if it has one.
            let cut =
                (cut_short && short_read_crosses_page(remote, bytes)).then(|| PAGE_GRANULE - remote % PAGE_GRANULE);
            let mut at = 0;
            for s in chunk {
                let len = u64::from(s.length);
                match cut {
                    Some(c) if at < c && c < at + len => {
                        let first = (c - at) as u32;
                        f.sges[n] = Sge { length: first, ..*s };
                        f.end(n + 1);
                        f.sges[n + 1] = Sge { addr: s.addr + u64::from(first), length: s.length - first, lkey: s.lkey };
                        n += 2;
                    }
                    _ => {
                        f.sges[n] = *s;
                        n += 1;
                        if cut == Some(at + len) {
                            f.end(n);
                        }
                    }
                }
                at += len;
            }
            f.end(n);
            remote += bytes;
        }
        f
    }

    /// A fragment ends before `sges[n]` (nothing if it would be empty).
    fn end(&mut self, n: usize) {
        if n > self.count.checked_sub(1).map_or(0, |k| self.ends[k]) {
            self.ends[self.count] = n;
            self.count += 1;
        }
    }

    fn iter(&self) -> impl Iterator<Item = &[Sge]> {
        (0..self.count).map(|k| &self.sges[if k == 0 { 0 } else { self.ends[k - 1] }..self.ends[k]])
    }
}

/// Slot info: the operation (`OP_*`, low byte).
const INFO_OP: u64 = 0xff;
/// Slot info: fragments of a split RDMA read that follow this one (0: the last, or unsplit).
const INFO_REST_SHIFT: u32 = 8;
const INFO_REST: u64 = 0xff << INFO_REST_SHIFT;
/// Slot info, on the last fragment of a split read: the request was already reported (an
/// earlier fragment failed), so its own completion — a flush — is dropped.
const INFO_REPORTED: u64 = 1 << 16;
/// Slot info: the request asked for its completion (`IBV_SEND_SIGNALED`; a split read's last
/// fragment stands for the request).
const INFO_SIGNALED: u64 = 1 << 17;
/// Slot info: a datagram longer than the port's MTU, which the device completes as sent
/// without sending anything (IB C10-93.1.1); reported `LocalLength`.
const INFO_TOO_LONG: u64 = 1 << 18;
/// Slot info: the byte count reported on success.
const INFO_LEN_SHIFT: u32 = 24;

fn slot_info(op: u64, rest: usize, len: u64) -> u64 {
    op | (rest as u64) << INFO_REST_SHIFT | len << INFO_LEN_SHIFT
}

/// [`INFO_SIGNALED`] of a work request's `send_flags`.
#[inline(always)]
fn signaled_info(send_flags: u32) -> u64 {
    const SHIFT: u32 = INFO_SIGNALED.trailing_zeros() - sys::IBV_SEND_SIGNALED.trailing_zeros();
    u64::from(send_flags & sys::IBV_SEND_SIGNALED) << SHIFT
}

/// One work request's bookkeeping: the consumer cookie and [`slot_info`].
pub struct Slot {
    wr_id: AtomicU64,
    info: AtomicU64,
}

/// The slots of one queue, indexed by its work-request counter: a power of two of them, so a
/// counter's slot is its low bits.
pub struct Ring(Box<[Slot]>);

impl Ring {
    /// Slots for `n` requests outstanding, twice over (at least 2, a power of two).
    fn new(n: u32) -> Ring {
        let cap = (n.max(1) as usize * 2).next_power_of_two();
        Ring((0..cap).map(|_| Slot { wr_id: AtomicU64::new(0), info: AtomicU64::new(0) }).collect())
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// Counter `c`'s slot.
    #[inline]
    fn at(&self, c: u64) -> &Slot {
        let i = (c as usize) & (self.0.len() - 1);
        // SAFETY: `Ring::new` makes a power of two of slots (at least 2), so `len - 1` masks
        // every counter to an index below `len`.
        unsafe { self.0.get_unchecked(i) }
    }
}

/// What a CQ needs to translate a QP's completions.
pub struct Slots {
    context: u64,
    send: Ring,
    recv: Ring,
    srq: Option<Arc<VerbsSrq>>,
    /// Receive counter (low 32 bits) just past the newest posted receive. Written only by the
    /// poster, under its receive queue's lock: a plain store, and the receives outstanding are
    /// `recv_count - recv_done`, no counter shared by posts and completions.
    recv_count: AtomicU32,
    /// Receive counter (low 32 bits) just past the newest completed receive. The receive queue
    /// completes in order, so a device completion below it was already completed in software
    /// ([`Slots::flush_unreported_recvs`]) and is dropped.
    recv_done: AtomicU32,
    /// Send-queue counter (low 32 bits) just past the newest completed work request. The send
    /// queue completes in order, so a completion also retires every unsignaled request before it.
    send_done: AtomicU32,
    /// An unreliable datagram queue pair's: receives complete as [`WcOpcode::RecvUd`] with
    /// the sender's queue pair number.
    datagram: bool,
}

/// A post's error when the send queue (or its slot ring) is full; out of line, so the post's
/// usual path does not build it.
#[cold]
fn send_queue_full() -> DatError {
    DatError::insufficient(DAT_RESOURCE_TEP)
}

impl Slots {
    /// The slots of a UD queue pair (super::ud) of `send` / `recv` work requests (receives
    /// taken from `srq` when it has one).
    pub(super) fn datagram(context: u64, send: u32, recv: u32, srq: Option<Arc<VerbsSrq>>) -> Slots {
        Slots {
            context,
            send: Ring::new(send),
            recv: Ring::new(recv),
            srq,
            recv_count: AtomicU32::new(0),
            recv_done: AtomicU32::new(0),
            send_done: AtomicU32::new(0),
            datagram: true,
        }
    }

    /// Records datagram send counter `c` (cookie `wr_id`, `len` bytes, `send_flags` as
    /// posted, `too_long`: longer than the MTU, so reported `LocalLength`); its ibv wr_id is
    /// `KIND_SEND | c`.
    pub(super) fn note_send_ud(&self, c: u64, wr_id: u64, len: u64, send_flags: u32, too_long: bool) {
        let s = self.send.at(c);
        s.wr_id.store(wr_id, Ordering::Relaxed);
        let too_long = if too_long { INFO_TOO_LONG } else { 0 };
        s.info.store(slot_info(OP_SEND_UD, 0, len) | signaled_info(send_flags) | too_long, Ordering::Release);
    }

    /// Records receive counter `c` (cookie `wr_id`); its ibv wr_id is `KIND_RECV | c`. Call
    /// [`Slots::recv_posted`] once the device took it.
    pub(super) fn note_recv(&self, c: u64, wr_id: u64) {
        self.recv.at(c).wr_id.store(wr_id, Ordering::Release);
    }

    /// The counter of the next receive. Called by one poster at a time (its receive lock).
    fn next_recv(&self) -> u32 {
        self.recv_count.load(Ordering::Relaxed)
    }

    /// The device took receive counter `c`. Called by one poster at a time (its receive lock).
    pub(super) fn recv_posted(&self, c: u32) {
        self.recv_count.store(c.wrapping_add(1), Ordering::Release);
    }

    /// Receives posted and not yet completed.
    pub(super) fn outstanding_recvs(&self) -> u32 {
        self.recv_count.load(Ordering::Acquire).wrapping_sub(self.recv_done.load(Ordering::Acquire))
    }

    /// Send-queue work requests of the `posted` so far not yet completed.
    pub(super) fn outstanding_sends(&self, posted: u64) -> u32 {
        (posted as u32).wrapping_sub(self.send_done.load(Ordering::Acquire))
    }

    /// Refuses a send-queue request (`DAT_INSUFFICIENT_RESOURCES`) while `posted` minus the
    /// completions read so far fills the slot ring: a request's slot (cookie, length) is
    /// reused `send.len()` requests later, and a device may free its own queue entries at
    /// completion, before a poll has read that completion from its slot. Without this, a
    /// consumer that keeps posting past an unread completion would get it with a later
    /// request's cookie. OFED's provider bounds posts the same way (by completions reaped).
    /// Called under the send lock.
    #[inline]
    pub(super) fn send_slot_free(&self, posted: u64) -> DatResult<()> {
        if self.outstanding_sends(posted) as usize >= self.send.len() {
            return Err(send_queue_full());
        }
        Ok(())
    }

    /// Send-queue work requests up to and including counter `c` have completed.
    fn retire_sends(&self, c: u32) {
        let done = c.wrapping_add(1);
        let mut cur = self.send_done.load(Ordering::Acquire);
        // Completions of one QP may be translated by several pollers at once: only move forward.
        while (done.wrapping_sub(cur) as i32) > 0 {
            match self.send_done.compare_exchange_weak(cur, done, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => break,
                Err(v) => cur = v,
            }
        }
    }

    /// The DAT completion of `wc`, or None for a stale one ([`Slots::complete_into`]); the
    /// completions it puts before it are left out.
    #[cfg(test)]
    pub fn complete(&self, wc: &sys::ibv_wc) -> Option<WorkCompletion> {
        let mut c = [WorkCompletion::EMPTY];
        self.complete_into(wc, &mut c, 0, &mut Vec::new()).then_some(c[0])
    }

    /// Writes the DAT completion of `wc` into `out[n]`; false (`out[n]` left as scratch) for a
    /// stale one. Completions that must come before it (see [`Slots::flush_earlier_sends`])
    /// go to `before`, each with `n`. Inlined into the CQ's poll loop: the usual completions
    /// (a successful send, RDMA write or read, atomic or bind, not part of a split read; a
    /// successful plain receive or receive with immediate data, not of a datagram QP nor of
    /// an SRQ) are translated here, everything else out of line by [`Slots::complete_rare`],
    /// which gives the same answer for every completion (a send's `retire_sends` may then run
    /// twice: it only moves forward).
    #[inline(always)]
    pub fn complete_into(
        &self,
        wc: &sys::ibv_wc,
        out: &mut [WorkCompletion],
        n: usize,
        before: &mut Vec<(usize, WorkCompletion)>,
    ) -> bool {
        if wc.status != sys::IBV_WC_SUCCESS || self.datagram {
            return self.complete_rare_into(wc, out, n, before);
        }
        let idx = wc.wr_id as u32;
        // The kind as a small number (one shift, no 64-bit constants to compare with).
        const SEND: u64 = KIND_SEND >> KIND_SHIFT;
        const RECV: u64 = KIND_RECV >> KIND_SHIFT;
        let (wr_id, opcode, byte_len) = match wc.wr_id >> KIND_SHIFT {
            SEND => {
                self.retire_sends(idx);
                let s = self.send.at(idx as u64);
                let info = s.info.load(Ordering::Acquire);
                if info & (INFO_REST | INFO_REPORTED) != 0 {
                    return self.complete_rare_into(wc, out, n, before);
                }
                (s.wr_id.load(Ordering::Acquire), send_opcode(info), info >> INFO_LEN_SHIFT)
            }
            RECV => {
                let done = self.recv_done.load(Ordering::Relaxed);
                if (idx.wrapping_sub(done) as i32) < 0 {
                    return false;
                }
                // One poller at a time per CQ (the EVD's lock), so a plain store moves it on.
                self.recv_done.store(idx.wrapping_add(1), Ordering::Relaxed);
                let s = self.recv.at(idx as u64);
                (s.wr_id.load(Ordering::Acquire), recv_opcode(wc), wc.byte_len as u64)
            }
            _ => return self.complete_rare_into(wc, out, n, before),
        };
        out[n] = WorkCompletion {
            wr_id,
            context: self.context,
            status: super::super::WcStatus::Success,
            opcode,
            immed: wc.imm_data,
            byte_len,
        };
        true
    }

    /// [`Slots::complete_rare`] into `out[n]`.
    #[cold]
    #[inline(never)]
    fn complete_rare_into(
        &self,
        wc: &sys::ibv_wc,
        out: &mut [WorkCompletion],
        n: usize,
        before: &mut Vec<(usize, WorkCompletion)>,
    ) -> bool {
        match self.complete_rare(wc, |c| before.push((n, c))) {
            Some(c) => {
                out[n] = c;
                true
            }
            None => false,
        }
    }

    /// [`Slots::complete`] for every completion: failed ones (status mapping, the failure's
    /// log line, no length), fragments of a split RDMA read, datagram receives, SRQ receives.
    /// A failed send-queue request first hands the earlier ones it flushes to `before`.
    fn complete_rare(&self, wc: &sys::ibv_wc, before: impl FnMut(WorkCompletion)) -> Option<WorkCompletion> {
        let mut status = cq::status(wc.status);
        let idx = wc.wr_id as u32 as usize;
        let (wr_id, opcode, byte_len) = match wc.wr_id & KIND_MASK {
            KIND_SEND => {
                if status != super::super::WcStatus::Success {
                    self.flush_earlier_sends(idx as u32, before);
                }
                self.retire_sends(idx as u32);
                let s = self.send.at(idx as u64);
                let info = s.info.load(Ordering::Acquire);
                let rest = ((info & INFO_REST) >> INFO_REST_SHIFT) as usize;
                if rest > 0 {
                    // A fragment of a split RDMA read (unsignaled, so only errors and flushes
                    // complete here): the first one to fail reports the request; the rest of
                    // the group, the last fragment included, is dropped.
                    if status == super::super::WcStatus::Success {
                        return None;
                    }
                    let last = self.send.at((idx + rest) as u64);
                    if last.info.fetch_or(INFO_REPORTED, Ordering::AcqRel) & INFO_REPORTED != 0 {
                        return None;
                    }
                } else if status != super::super::WcStatus::Success {
                    // Reported once: the siw soak saw a request completed as flushed twice.
                    if s.info.fetch_or(INFO_REPORTED, Ordering::AcqRel) & INFO_REPORTED != 0 {
                        return None;
                    }
                } else if info & INFO_REPORTED != 0 {
                    return None;
                } else if info & INFO_TOO_LONG != 0 {
                    status = super::super::WcStatus::LocalLength;
                }
                (s.wr_id.load(Ordering::Acquire), send_opcode(info), info >> INFO_LEN_SHIFT)
            }
            KIND_RECV => {
                let done = self.recv_done.load(Ordering::Relaxed);
                if ((idx as u32).wrapping_sub(done) as i32) < 0 {
                    return None;
                }
                // One poller at a time per CQ (the EVD's lock), so a plain store moves it on.
                self.recv_done.store((idx as u32).wrapping_add(1), Ordering::Relaxed);
                let s = self.recv.at(idx as u64);
                (s.wr_id.load(Ordering::Acquire), recv_opcode(wc), wc.byte_len as u64)
            }
            KIND_SRQ => (self.srq.as_ref()?.complete(idx as u32), recv_opcode(wc), wc.byte_len as u64),
            _ => return None,
        };
        let byte_len = if status == super::super::WcStatus::Success { byte_len } else { 0 };
        if status != super::super::WcStatus::Success && status != super::super::WcStatus::Flushed {
            tracing::warn!(
                qpn = wc.qp_num,
                ?opcode,
                "verbs: work request failed: ibv_wc status {} (vendor {:#x})",
                wc.status,
                wc.vendor_err
            );
        }
        let (opcode, immed) = match opcode {
            WcOpcode::Recv if self.datagram => (WcOpcode::RecvUd, wc.src_qp),
            _ => (opcode, wc.imm_data),
        };
        Some(WorkCompletion { wr_id, context: self.context, status, opcode, immed, byte_len })
    }

    /// Send-queue request `idx` failed or was flushed, so the QP is in error and every request
    /// before it not yet completed is flushed too: completes those here, through `emit`, in
    /// order, and drops their completions from the device. A send queue completes in order,
    /// but rxe flushes the requests it has not started before those in flight. Only signaled
    /// ones are reported: an unsignaled one may have succeeded, which makes no completion.
    fn flush_earlier_sends(&self, idx: u32, mut emit: impl FnMut(WorkCompletion)) {
        let mut c = self.send_done.load(Ordering::Acquire);
        while (idx.wrapping_sub(c) as i32) > 0 {
            let rest = ((self.send.at(c as u64).info.load(Ordering::Acquire) & INFO_REST) >> INFO_REST_SHIFT) as u32;
            // A split read stands or falls as a whole, reported by its last fragment's slot.
            let last = c.wrapping_add(rest);
            if (idx.wrapping_sub(last) as i32) <= 0 {
                // `idx` is a fragment of it: its own completion reports the request.
                break;
            }
            let s = self.send.at(last as u64);
            let info = s.info.fetch_or(INFO_REPORTED, Ordering::AcqRel);
            if info & (INFO_REPORTED | INFO_SIGNALED) == INFO_SIGNALED {
                tracing::debug!(context = self.context, "verbs: a request the device flushed late, flushed");
                emit(WorkCompletion {
                    wr_id: s.wr_id.load(Ordering::Acquire),
                    context: self.context,
                    status: super::super::WcStatus::Flushed,
                    opcode: send_opcode(info),
                    immed: 0,
                    byte_len: 0,
                });
            }
            c = last.wrapping_add(1);
        }
    }

    /// Slot `c` holds an RDMA write of the library's own ([`VerbsQp::nudge`]), marked reported
    /// already: its completion, success or flush, only retires the slot.
    fn note_unreported_write(&self, c: u64) {
        let slot = self.send.at(c);
        slot.wr_id.store(0, Ordering::Relaxed);
        slot.info.store(slot_info(OP_WRITE, 0, 0) | INFO_SIGNALED | INFO_REPORTED, Ordering::Release);
    }

    /// Completes as flushed, through `emit`, every send-queue request below counter `mark` not
    /// yet completed (see [`Slots::flush_earlier_sends`]); a device completion of one of them
    /// arriving later is dropped. For requests posted after the QP went into error, which
    /// never reach the device (`VerbsQp::flush_behind_posted`).
    pub fn flush_unreported_sends(&self, mark: u32, emit: impl FnMut(WorkCompletion)) {
        self.flush_earlier_sends(mark, emit);
        self.retire_sends(mark.wrapping_sub(1));
    }

    /// Completes as flushed, through `emit`, every receive below counter `mark` the device has
    /// not completed: on a QP in error the device completes in order what it flushed, and a
    /// receive posted after its flush (siw flushes its receive queue once, when the QP enters
    /// error, possibly on its own at the peer's disconnect; a later post only writes the
    /// user-mapped queue) is never completed. Called once the device's flush completions were
    /// all polled (cq.rs, `Unreported`); a device completion arriving later is dropped.
    pub fn flush_unreported_recvs(&self, mark: u32, mut emit: impl FnMut(WorkCompletion)) {
        let mut c = self.recv_done.load(Ordering::Relaxed);
        while (mark.wrapping_sub(c) as i32) > 0 {
            let s = self.recv.at(c as u64);
            tracing::debug!(context = self.context, "verbs: a receive the device did not flush, flushed");
            emit(cq::flushed_recv(s.wr_id.load(Ordering::Acquire), self.context));
            c = c.wrapping_add(1);
        }
        self.recv_done.store(c, Ordering::Relaxed);
    }
}

/// What a send-queue request was, by its slot's `info`.
#[inline(always)]
fn send_opcode(info: u64) -> WcOpcode {
    match info & INFO_OP {
        OP_SEND => WcOpcode::Send,
        OP_WRITE => WcOpcode::RdmaWrite,
        OP_READ => WcOpcode::RdmaRead,
        OP_WRITE_IMMED => WcOpcode::RdmaWriteImmed,
        OP_FETCH_ADD => WcOpcode::FetchAdd,
        OP_CMP_SWAP => WcOpcode::CmpSwap,
        OP_SEND_UD => WcOpcode::SendUd,
        _ => WcOpcode::Bind,
    }
}

/// The slot ring's `OP_*` of a send-queue request completing as `op`.
fn slot_op(op: WcOpcode) -> u64 {
    match op {
        WcOpcode::RdmaWrite => OP_WRITE,
        WcOpcode::RdmaWriteImmed => OP_WRITE_IMMED,
        WcOpcode::RdmaRead => OP_READ,
        WcOpcode::Bind => OP_BIND,
        WcOpcode::FetchAdd => OP_FETCH_ADD,
        WcOpcode::CmpSwap => OP_CMP_SWAP,
        WcOpcode::SendUd => OP_SEND_UD,
        _ => OP_SEND,
    }
}

/// What a receive completion was: a plain receive, or one carrying immediate data (valid only
/// on success).
#[inline(always)]
fn recv_opcode(wc: &sys::ibv_wc) -> WcOpcode {
    if wc.status != sys::IBV_WC_SUCCESS {
        WcOpcode::Recv
    } else if wc.opcode == sys::IBV_WC_RECV_RDMA_WITH_IMM {
        WcOpcode::RecvRdmaWriteImmed
    } else if wc.wc_flags & sys::IBV_WC_WITH_IMM != 0 {
        WcOpcode::RecvImmed
    } else {
        WcOpcode::Recv
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Resolving,
    Connecting,
    Accepting,
    Connected,
    Disconnecting,
    Closed,
}

/// The send queue's state (see `VerbsQp::send_queue`).
struct SendQueue {
    /// Send-queue work requests posted.
    count: u64,
    /// The work request handed to the device, kept from one post to the next (all zero at
    /// first): a post writes what every request carries and the fields of its own opcode
    /// ([`fill_send_wr`]) rather than clearing 128 bytes each time. A field of another opcode
    /// left from an earlier request is one the device does not read for this one.
    wr: sys::ibv_send_wr,
    /// Where the device's post names a work request it refused.
    bad: *mut sys::ibv_send_wr,
    /// Which sends go inline.
    inline: InlineSends,
    /// The QP was moved to error: a request posted now is flushed in software, in order behind
    /// the earlier ones, without reaching the device (siw never completes it).
    flushing: bool,
}

// SAFETY: the work request's pointers are only set during a post, to memory the poster holds,
// and only the device's post (called under the lock) reads them or writes `bad`.
unsafe impl Send for SendQueue {}

/// The receive queue's state (its counter is `Slots::recv_count`).
struct RecvState {
    /// Whether a receive posted now reaches the device.
    mode: RecvMode,
    /// The work request handed to the device, kept from one post to the next: a post writes its
    /// id and segments (`next` stays NULL).
    wr: sys::ibv_recv_wr,
    /// Where the device's post names a work request it refused.
    bad: *mut sys::ibv_recv_wr,
}

// SAFETY: the work request's segment pointer is only set during a post, to memory the poster
// holds, and only the device's post (called under the lock) reads it or writes `bad`.
unsafe impl Send for RecvState {}

impl RecvState {
    fn new(on_srq: bool) -> RecvState {
        RecvState {
            mode: if on_srq { RecvMode::OnSrq } else { RecvMode::Open },
            wr: sys::ibv_recv_wr { wr_id: 0, next: std::ptr::null_mut(), sg_list: std::ptr::null_mut(), num_sge: 0 },
            bad: std::ptr::null_mut(),
        }
    }
}

/// Whether a queue pair's own receive queue takes receives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RecvMode {
    /// Receives go to the device.
    Open,
    /// The QP was moved to error: a receive posted now is flushed in software, in order behind
    /// the earlier ones, without reaching the device (which may never flush it).
    Flushing,
    /// The QP takes its receives from an SRQ: one posted to it is refused.
    OnSrq,
}

struct CmState {
    phase: Phase,
    /// The id holding the QP: the EP's own until an accept moves the QP to the request's id.
    id: *mut sys::rdma_cm_id,
    /// Key of `id` in the device's id table.
    id_key: u64,
    private_data: Vec<u8>,
    deadline: Option<Instant>,
    /// Empty RDMA writes sent on this connection so far ([`VerbsQp::nudge`]).
    nudges: usize,
    /// A final event decided under the lock, delivered once it is released.
    final_ev: Option<(ConnEvent, Vec<u8>)>,
}

pub struct VerbsQp {
    dev: Arc<DevInner>,
    pd: Arc<VerbsPd>,
    send_cq: Option<Arc<VerbsCq>>,
    recv_cq: Option<Arc<VerbsCq>>,
    srq: Option<Arc<VerbsSrq>>,
    caps: QpCaps,
    slots: Arc<Slots>,
    /// Created with the EP, destroyed in Drop.
    qp: *mut sys::ibv_qp,
    /// The device's post functions of `qp` (its context's ops, fixed for the context's life),
    /// read once here rather than through two pointers at every post.
    device_post_send: sys::PostSendFn,
    device_post_recv: sys::PostRecvFn,
    /// CQs we made for a missing send or receive EVD.
    own_cqs: Vec<*mut sys::ibv_cq>,
    /// The send queue's state. Held across a post: a request takes its slot and reaches the
    /// device in counter order, which `Slots::complete` relies on (the send queue completes in
    /// order; a completion retires the unsignaled requests before it). DAT lets several threads
    /// post on one EP, so it needs a lock; a spin flag (one atomic swap, then a plain store)
    /// rather than a mutex (a compare-and-swap at each end): the holder only fills a slot and
    /// calls the device's post.
    send_queue: SpinLock<SendQueue>,
    /// Held across a receive's post, for the same reason (and under the same kind of lock).
    recv: SpinLock<RecvState>,
    cm: Mutex<CmState>,
    events: Arc<dyn ConnectionEvents>,
    ended: AtomicBool,
    me: Weak<VerbsQp>,
}

// SAFETY: the raw pointers are rdma-core objects used through thread-safe verbs; the CM state
// is behind a mutex; everything is freed once in Drop.
unsafe impl Send for VerbsQp {}
// SAFETY: as above.
unsafe impl Sync for VerbsQp {}

fn our_cq(c: &Option<Arc<dyn crate::provider::CompletionQueue>>) -> DatResult<Option<Arc<VerbsCq>>> {
    match c {
        None => Ok(None),
        Some(c) => CQS.get(c).map(Some).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_EVD_REQUEST)),
    }
}

/// What a queue pair (RC here, UD in super::ud) is made with: the device objects its
/// [`QpInit`] names and its queue sizes.
pub(super) struct QpObjects {
    pub pd: Arc<VerbsPd>,
    pub send_cq: Option<Arc<VerbsCq>>,
    pub recv_cq: Option<Arc<VerbsCq>>,
    pub srq: Option<Arc<VerbsSrq>>,
    /// The sizes asked for, at least one of each (no receive queue on an SRQ).
    pub caps: QpCaps,
}

impl QpObjects {
    /// Looks up `init`'s objects on `dev`: a size beyond the device's is
    /// `DAT_INSUFFICIENT_RESOURCES`, an SRQ of another PD `DAT_PROTECTION_VIOLATION`.
    pub fn of(dev: &DevInner, init: &QpInit) -> DatResult<QpObjects> {
        let pd = PDS.get(&init.pd).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_PZ))?;
        let send_cq = our_cq(&init.send_cq)?;
        let recv_cq = our_cq(&init.recv_cq)?;
        let srq = match &init.srq {
            None => None,
            Some(s) => Some(SRQS.get(s).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_SRQ))?),
        };
        let c = init.caps;
        let a = &dev.attr;
        if c.max_send_wr > a.max_qp_wr
            || c.max_recv_wr > a.max_qp_wr
            || c.max_send_sge > a.max_sge
            || c.max_recv_sge > a.max_sge
        {
            return Err(DatError::insufficient(DAT_RESOURCE_TEP));
        }
        if srq.as_ref().is_some_and(|s| !Arc::ptr_eq(&s.pd, &pd)) {
            return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0));
        }
        let caps = QpCaps {
            max_send_wr: c.max_send_wr.max(1),
            max_recv_wr: if srq.is_some() { 0 } else { c.max_recv_wr.max(1) },
            max_send_sge: c.max_send_sge.clamp(1, MAX_SGE as u32),
            max_recv_sge: c.max_recv_sge.clamp(1, MAX_SGE as u32),
            ..c
        };
        Ok(QpObjects { pd, send_cq, recv_cq, srq, caps })
    }
}

/// What [`Made::create`] creates on the device for a queue pair: its rdma_cm id (bound to the
/// IA's address, as the QP's attributes come from it), CQs standing in for a missing EVD, and
/// the QP (an RC one in INIT, so receives may be posted before the connection; a UD one ready
/// at once).
pub(super) struct Made {
    pub id: *mut sys::rdma_cm_id,
    pub own_cqs: Vec<*mut sys::ibv_cq>,
    pub qp: *mut sys::ibv_qp,
}

impl Made {
    /// Makes a queue pair of `o`'s objects with queue sizes `cap`: an RC one on an id of the
    /// TCP port space with context `key`, or (`datagram`) a UD one on an id of the UDP port
    /// space; with the inline size the device granted (a device refusing `cap.max_inline_data`
    /// gets the queue pair without inline data).
    pub fn create(
        dev: &DevInner,
        o: &QpObjects,
        cap: sys::ibv_qp_cap,
        datagram: bool,
        key: u64,
    ) -> DatResult<(Made, u32)> {
        let lib = dev.lib;
        let (ps, qp_type) =
            if datagram { (sys::RDMA_PS_UDP, sys::IBV_QPT_UD) } else { (sys::RDMA_PS_TCP, sys::IBV_QPT_RC) };
        let mut made = Made { id: dev.bound_id(ps, key)?, own_cqs: Vec::new(), qp: std::ptr::null_mut() };
        let mut make = || -> DatResult<u32> {
            let send_cq = made.cq_or_own(dev, o.send_cq.as_ref(), cap.max_send_wr)?;
            let recv_cq = made.cq_or_own(dev, o.recv_cq.as_ref(), cap.max_recv_wr)?;
            let create = |cap: sys::ibv_qp_cap| {
                let mut attr = sys::ibv_qp_init_attr {
                    qp_context: std::ptr::null_mut(),
                    send_cq,
                    recv_cq,
                    srq: o.srq.as_ref().map_or(std::ptr::null_mut(), |s| s.srq),
                    cap,
                    qp_type,
                    sq_sig_all: 0,
                };
                sys::clear_errno();
                // SAFETY: live id bound to our device, live PD and CQs; attr fully initialised.
                let r = unsafe { (lib.rdma_create_qp)(made.id, o.pd.pd, &mut attr) };
                // rdma_create_qp leaves the sizes the device granted in attr.cap
                (r, attr.cap.max_inline_data)
            };
            let (mut r, mut max_inline) = create(cap);
            if r != 0 && cap.max_inline_data > 0 {
                tracing::debug!(asked = cap.max_inline_data, "verbs: no queue pair with inline data; trying without");
                (r, max_inline) = create(sys::ibv_qp_cap { max_inline_data: 0, ..cap });
            }
            if r != 0 {
                let e = sys::err_of(r);
                tracing::warn!(
                    datagram,
                    send_wr = cap.max_send_wr,
                    recv_wr = cap.max_recv_wr,
                    send_sge = cap.max_send_sge,
                    recv_sge = cap.max_recv_sge,
                    srq = o.srq.is_some(),
                    "verbs: cannot create a queue pair"
                );
                // The sizes are within the device's (QpObjects::of): a device refusing a UD
                // queue pair on an SRQ as such refuses the model, not a resource.
                let refused =
                    datagram && o.srq.is_some() && matches!(e, libc::EINVAL | libc::EOPNOTSUPP | libc::ENOSYS);
                let d = if refused {
                    DatError::new(DAT_MODEL_NOT_SUPPORTED, 0)
                } else {
                    DatError::insufficient(DAT_RESOURCE_TEP)
                };
                return Err(fail("rdma_create_qp", e, d));
            }
            // SAFETY: rdma_create_qp stored the new QP in the id.
            made.qp = unsafe { (*made.id).qp };
            Ok(max_inline)
        };
        match make() {
            Ok(max_inline) => Ok((made, max_inline)),
            Err(e) => {
                made.free(lib);
                Err(e)
            }
        }
    }

    /// The CQ of a queue: the EVD's (`evd`), or, for a queue without an EVD, one of our own
    /// of `entries` (without a channel; freed with the QP).
    fn cq_or_own(&mut self, dev: &DevInner, evd: Option<&Arc<VerbsCq>>, entries: u32) -> DatResult<*mut sys::ibv_cq> {
        if let Some(c) = evd {
            return Ok(c.cq);
        }
        sys::clear_errno();
        // SAFETY: live context; a CQ without channel, destroyed by `free`.
        let c = unsafe {
            (dev.lib.ibv_create_cq)(dev.ctx, entries.max(1) as i32, std::ptr::null_mut(), std::ptr::null_mut(), 0)
        };
        if c.is_null() {
            return Err(fail("ibv_create_cq", sys::errno(), DatError::insufficient(DAT_RESOURCE_TEP)));
        }
        self.own_cqs.push(c);
        Ok(c)
    }

    /// Frees what was made, in reverse order (the QP first, through its id).
    pub fn free(&mut self, lib: &sys::Lib) {
        // SAFETY: each object is ours, freed once (the pointers are cleared).
        unsafe {
            if !self.id.is_null() {
                if !(*self.id).qp.is_null() {
                    (lib.rdma_destroy_qp)(self.id);
                }
                (lib.rdma_destroy_id)(self.id);
                self.id = std::ptr::null_mut();
            }
            for c in self.own_cqs.drain(..) {
                (lib.ibv_destroy_cq)(c);
            }
        }
    }
}

impl VerbsQp {
    pub fn new(dev: &Arc<DevInner>, init: QpInit) -> DatResult<Arc<VerbsQp>> {
        let objs = QpObjects::of(dev, &init)?;
        let caps = objs.caps;
        let slots = Arc::new(Slots {
            context: init.context,
            // Binds share the send queue; +1 leaves room for one in flight beyond the sends.
            send: Ring::new(send_depth(dev, &caps)),
            recv: Ring::new(caps.max_recv_wr),
            srq: objs.srq.clone(),
            recv_count: AtomicU32::new(0),
            recv_done: AtomicU32::new(0),
            send_done: AtomicU32::new(0),
            datagram: false,
        });
        let key = dev.key();
        let cap = sys::ibv_qp_cap {
            max_send_wr: send_depth(dev, &caps),
            max_recv_wr: caps.max_recv_wr,
            max_send_sge: caps.max_send_sge,
            max_recv_sge: caps.max_recv_sge,
            max_inline_data: inline::INLINE_REQUEST,
        };
        let (made, max_inline) = Made::create(dev, &objs, cap, false, key)?;
        let QpObjects { pd, send_cq, recv_cq, srq, .. } = objs;
        let recv = RecvState::new(srq.is_some());
        let qp = Arc::new_cyclic(|me| VerbsQp {
            dev: dev.clone(),
            pd,
            send_cq,
            recv_cq,
            srq,
            caps,
            slots,
            qp: made.qp,
            // SAFETY: a live QP of a live context.
            device_post_send: unsafe { (*(*made.qp).context).ops.post_send.unwrap_or(sys::no_post_send) },
            // SAFETY: as above.
            device_post_recv: unsafe { (*(*made.qp).context).ops.post_recv.unwrap_or(sys::no_post_recv) },
            own_cqs: made.own_cqs,
            send_queue: SpinLock::new(SendQueue {
                count: 0,
                // SAFETY: plain old data, all zero: no opcode's field set, null pointers.
                wr: unsafe { std::mem::zeroed() },
                bad: std::ptr::null_mut(),
                inline: InlineSends::new(max_inline),
                flushing: false,
            }),
            recv: SpinLock::new(recv),
            cm: Mutex::new(CmState {
                phase: Phase::Idle,
                id: made.id,
                id_key: key,
                private_data: Vec::new(),
                deadline: None,
                nudges: 0,
                final_ev: None,
            }),
            events: init.events,
            ended: AtomicBool::new(false),
            me: me.clone(),
        });
        // The CQs and the CM thread find the QP from here on.
        // SAFETY: live QP.
        let qpn = unsafe { (*made.qp).qp_num };
        for c in [&qp.send_cq, &qp.recv_cq].into_iter().flatten() {
            c.attach(qpn, qp.slots.clone());
        }
        cm::watch_qp(dev, qpn, qp.slots.context, Arc::downgrade(&qp.events));
        dev.ids.lock().insert(key, Owner::Qp(qp.me.clone()));
        Ok(qp)
    }

    fn lib(&self) -> &'static sys::Lib {
        self.dev.lib
    }

    pub(super) fn qp_num(&self) -> u32 {
        // SAFETY: the QP lives as long as self.
        unsafe { (*self.qp).qp_num }
    }

    /// The CM thread: the device reported `IBV_EVENT_COMM_EST` for this queue pair (a message
    /// arrived before its CM took the connection as established). Passes it on to rdma_cm with
    /// `rdma_notify` on the id holding the queue pair, as librdmacm asks: an IB CM still waiting
    /// for the peer's RTU takes the connection as established at once, and rdma_cm reports
    /// ESTABLISHED (iWARP CMs ignore it). Returns 0, or the errno of `rdma_notify`.
    pub(super) fn notify_comm_est(&self) -> i32 {
        let st = self.cm.lock();
        if st.id.is_null() {
            return libc::EINVAL;
        }
        // SAFETY: the id is live while the CM state names it (freed in Drop).
        let r = unsafe { (self.lib().rdma_notify)(st.id, sys::IBV_EVENT_COMM_EST as i32) };
        if r == 0 {
            0
        } else {
            sys::err_of(r)
        }
    }

    /// Posts a receive of `list` (segments the device takes as they are) on the receive queue,
    /// or completes it as flushed at once if the QP is in error.
    #[inline(always)]
    fn post_recv_list(&self, wr_id: u64, list: &[Sge]) -> DatResult<()> {
        match self.recv.try_lock() {
            Some(guard) => self.post_recv_locked(guard, wr_id, list),
            None => self.post_recv_contended(wr_id, list),
        }
    }

    /// [`Self::post_recv_list`] when another thread holds the receive queue: waits for it. Out
    /// of line, so the usual path keeps nothing across the wait.
    #[cold]
    #[inline(never)]
    fn post_recv_contended(&self, wr_id: u64, list: &[Sge]) -> DatResult<()> {
        self.post_recv_locked(self.recv.lock(), wr_id, list)
    }

    /// [`Self::post_recv_list`] holding the receive queue.
    #[inline(always)]
    fn post_recv_locked(&self, mut guard: SpinGuard<'_, RecvState>, wr_id: u64, list: &[Sge]) -> DatResult<()> {
        if guard.mode != RecvMode::Open {
            return self.post_recv_refused(guard, wr_id);
        }
        let c = self.slots.next_recv();
        self.slots.note_recv(c as u64, wr_id);
        let q = &mut *guard;
        q.wr.wr_id = KIND_RECV | c as u64;
        // Only read by the device's post (see `send_wr`).
        q.wr.sg_list = list.as_ptr().cast_mut();
        q.wr.num_sge = list.len() as i32;
        // SAFETY: live QP; the work request is ours under the lock, and it and the SGE list live
        // across the call.
        let r = unsafe { (self.device_post_recv)(self.qp, &mut q.wr, &mut q.bad) };
        if r != 0 {
            return Err(recv_post_failed(r));
        }
        // The counter is read again rather than kept across the device's call: it does not
        // move while we hold the receive queue.
        self.slots.recv_posted(self.slots.next_recv());
        Ok(())
    }

    /// [`QueuePair::post_recv`] of segments the device does not take as they are: empty ones
    /// are left out; more than the queue pair takes is `DAT_INVALID_PARAMETER|ARG2`.
    #[cold]
    #[inline(never)]
    fn post_recv_uncommon(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()> {
        let mut buf = [MaybeUninit::uninit(); MAX_SGE];
        let (list, _) = device_sges(sges, &mut buf)?;
        if list.len() > self.caps.max_recv_sge as usize {
            return Err(DatError::invalid_arg(2));
        }
        self.post_recv_list(wr_id, list)
    }

    /// A receive posted to a receive queue that does not take it: on an SRQ's queue pair
    /// `DAT_INVALID_STATE`; on one in error, counted as posted without reaching the device and
    /// flushed in software behind the receives posted before it, which the device may still
    /// be flushing (rxe does so in a kernel task, after `ibv_modify_qp` returned): a receive
    /// queue completes in order, flushes included.
    #[cold]
    #[inline(never)]
    fn post_recv_refused(&self, guard: SpinGuard<'_, RecvState>, wr_id: u64) -> DatResult<()> {
        if guard.mode == RecvMode::OnSrq {
            drop(guard);
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_RECV_WATERMARK));
        }
        // As full as the device's queue would be.
        if self.slots.outstanding_recvs() >= self.caps.max_recv_wr {
            drop(guard);
            return Err(recv_post_failed(libc::ENOMEM));
        }
        let c = self.slots.next_recv();
        self.slots.note_recv(c as u64, wr_id);
        self.slots.recv_posted(c);
        drop(guard);
        if let Some(cq) = &self.recv_cq {
            // SAFETY: live QP.
            let qpn = unsafe { (*self.qp).qp_num };
            cq.watch_unreported(qpn, false, self.slots.clone(), c.wrapping_add(1));
        }
        Ok(())
    }

    /// Moves the QP to the error state so everything posted is flushed, exactly once: what the
    /// device flushes comes from it; a receive posted from now on is flushed in software after
    /// the receives before it; and receives posted before that the device never flushes (siw, see
    /// [`Slots::flush_unreported_recvs`]) are flushed by the receive CQ's next poll that finds
    /// the device's completions all taken.
    fn to_error(&self) {
        let qp = self.qp;
        let mut a = sys::ibv_qp_attr::state(sys::IBV_QPS_ERR);
        // SAFETY: live QP.
        let r = unsafe { (self.lib().ibv_modify_qp)(qp, &mut a, sys::IBV_QP_STATE) };
        if r != 0 {
            tracing::debug!("verbs: ibv_modify_qp(ERR) failed: {}", sys::errno_str(sys::err_of(r)));
        }
        // SAFETY: live QP.
        let qpn = unsafe { (*qp).qp_num };
        // The device's own flush is done now (siw flushes under the QP's state lock, which the
        // modify above took), its completions are in the CQ. A request that raced the move
        // into the queue the device no longer reads is flushed by the settle.
        let mut sq = self.send_queue.lock();
        let first = !sq.flushing;
        sq.flushing = true;
        let mark = sq.count as u32;
        drop(sq);
        if let (true, Some(c)) = (first, &self.send_cq) {
            c.watch_unreported(qpn, true, self.slots.clone(), mark);
        }
        let mut p = self.recv.lock();
        if p.mode != RecvMode::Open {
            return;
        }
        p.mode = RecvMode::Flushing;
        let mark = self.slots.next_recv();
        drop(p);
        if let Some(c) = &self.recv_cq {
            c.watch_unreported(qpn, false, self.slots.clone(), mark);
        }
    }

    /// Delivers the connection's final event once. Every caller moved the QP to error first,
    /// and the device flushes a receive in progress at that transition (siw inside the call,
    /// rxe in its responder task right after), so a QP on an SRQ also reports its SRQ receives
    /// done here (the core's last-WQE rule, endpoint.rs `EpEvents`).
    fn end(&self, ev: ConnEvent, pd: &[u8]) {
        if !self.ended.swap(true, Ordering::AcqRel) {
            self.events.event(ev, pd);
            if self.srq.is_some() {
                self.events.srq_receives_done();
            }
        }
    }

    fn set_deadline(&self, st: &mut CmState, d: Option<Instant>) {
        st.deadline = d;
        if let Some(d) = d {
            self.dev.add_timed(self.me.clone(), d);
        }
    }

    /// A connection attempt failed with `ev`.
    fn fail_connect(&self, st: &mut CmState, ev: ConnEvent, pd: &[u8]) {
        st.phase = Phase::Closed;
        st.deadline = None;
        self.to_error();
        st.final_ev = Some((ev, pd.to_vec()));
    }

    /// Delivers a final event decided under the CM lock, after releasing it.
    fn deliver_final(&self, mut st: parking_lot::MutexGuard<'_, CmState>) {
        let f = st.final_ev.take();
        drop(st);
        if let Some((ev, pd)) = f {
            self.end(ev, &pd);
        }
    }

    /// The CM thread: an rdma_cm event for this QP's id.
    pub fn on_cm_event(&self, ev: u32, status: i32, pd: &[u8]) {
        self.cm_event(ev, status, pd);
        let st = self.cm.lock();
        if st.final_ev.is_some() {
            self.deliver_final(st);
        }
    }

    fn cm_event(&self, ev: u32, status: i32, pd: &[u8]) {
        let lib = self.lib();
        let mut st = self.cm.lock();
        let id = st.id;
        tracing::debug!(phase = ?st.phase, "verbs: cm event {} status {status}", sys::event_str(lib, ev));
        match (ev, st.phase) {
            (sys::RDMA_CM_EVENT_ADDR_RESOLVED, Phase::Resolving) => {
                // SAFETY: live id.
                let r = unsafe { (lib.rdma_resolve_route)(id, super::RESOLVE_MS) };
                if r != 0 {
                    tracing::warn!("verbs: rdma_resolve_route failed: {}", sys::errno_str(sys::err_of(r)));
                    self.fail_connect(&mut st, ConnEvent::Unreachable, &[]);
                }
            }
            (sys::RDMA_CM_EVENT_ROUTE_RESOLVED, Phase::Resolving) => {
                let mut param = self.conn_param(&st.private_data, None);
                // SAFETY: live id with a QP; the private data outlives the call.
                let r = unsafe { (lib.rdma_connect)(id, &mut param) };
                if r != 0 {
                    // iWARP connects the TCP stream here: ECONNREFUSED means nobody listens.
                    let e = sys::err_of(r);
                    let ev = match e {
                        libc::ECONNREFUSED => ConnEvent::NonPeerRejected,
                        libc::ETIMEDOUT => ConnEvent::TimedOut,
                        _ => ConnEvent::Unreachable,
                    };
                    tracing::debug!("verbs: rdma_connect failed: {} -> {ev:?}", sys::errno_str(e));
                    self.fail_connect(&mut st, ev, &[]);
                    return;
                }
                st.phase = Phase::Connecting;
            }
            (sys::RDMA_CM_EVENT_ADDR_ERROR | sys::RDMA_CM_EVENT_ROUTE_ERROR, Phase::Resolving) => {
                tracing::warn!("verbs: connect: {} ({})", sys::event_str(lib, ev), sys::errno_str(status));
                let e = if status == -libc::ETIMEDOUT { ConnEvent::TimedOut } else { ConnEvent::Unreachable };
                self.fail_connect(&mut st, e, &[]);
            }
            (
                sys::RDMA_CM_EVENT_UNREACHABLE | sys::RDMA_CM_EVENT_CONNECT_ERROR,
                Phase::Resolving | Phase::Connecting | Phase::Accepting,
            ) => {
                tracing::warn!("verbs: connect: {} ({})", sys::event_str(lib, ev), sys::errno_str(status));
                let e = if status == -libc::ETIMEDOUT || status == libc::ETIMEDOUT {
                    ConnEvent::TimedOut
                } else {
                    ConnEvent::Unreachable
                };
                self.fail_connect(&mut st, e, &[]);
            }
            (sys::RDMA_CM_EVENT_REJECTED, Phase::Resolving | Phase::Connecting | Phase::Accepting) => {
                let (ev, data) = cm::rejected(pd, status);
                tracing::debug!(
                    "verbs: connect rejected (status {status}, {})",
                    if ev == ConnEvent::PeerRejected { "by the peer" } else { "no listener" }
                );
                self.fail_connect(&mut st, ev, data);
            }
            (sys::RDMA_CM_EVENT_REJECTED, Phase::Connected | Phase::Disconnecting) => {
                // The peer's CM rejects a connection this side has established already: the
                // peer's id went (its process killed, its IA closed, its EP freed) after its REP
                // and before our RTU reached it, so its IB CM answers with a REJ, and no DREQ
                // (no DISCONNECTED) ever comes. librdmacm moved the QP to error before handing
                // the event over. Not an orderly end: BROKEN (DISCONNECTED when this side was
                // disconnecting anyway).
                tracing::debug!("verbs: an established connection rejected by the peer's CM (status {status})");
                let ev = if st.phase == Phase::Disconnecting { ConnEvent::Disconnected } else { ConnEvent::Broken };
                st.phase = Phase::Closed;
                st.deadline = None;
                self.to_error();
                drop(st);
                self.end(ev, &[]);
            }
            (sys::RDMA_CM_EVENT_ESTABLISHED, Phase::Accepting) if lose_passive_established_for_test() => {
                tracing::debug!("verbs: ESTABLISHED of an accepted connection dropped (test hook)");
            }
            (sys::RDMA_CM_EVENT_ESTABLISHED, Phase::Connecting | Phase::Accepting) => {
                let initiator = st.phase == Phase::Connecting;
                st.phase = Phase::Connected;
                st.deadline = None;
                if initiator && self.dev.siw {
                    st.nudges = 0;
                    self.set_deadline(&mut st, Some(Instant::now() + NUDGE_GAPS[0]));
                }
                let n = pd.len().min(self.dev.attr.max_private_data);
                drop(st);
                self.events.event(ConnEvent::Established, &pd[..n]);
            }
            (sys::RDMA_CM_EVENT_ESTABLISHED, _) => {
                // Too late (timed out or disconnected meanwhile): tear it down.
                // SAFETY: live id.
                unsafe { (lib.rdma_disconnect)(id) };
            }
            (sys::RDMA_CM_EVENT_DISCONNECTED, Phase::Accepting) => {
                // The peer disconnects a connection we accepted before rdma_cm reported it
                // established, and it never will: the IB CM on our side got the peer's DREQ while
                // still waiting for its RTU (the RTU lost, or handled after the DREQ on a loaded
                // host) and gives no ESTABLISHED after that. A DREQ comes only from a peer that
                // had the connection established, and data may have arrived meanwhile (our QP
                // was ready to receive from rdma_accept on), so the consumer sees the connection
                // established and then disconnected, as if the RTU had come in time.
                tracing::debug!("verbs: DISCONNECTED before ESTABLISHED on an accepted connection");
                st.phase = Phase::Connected;
                drop(st);
                self.events.event(ConnEvent::Established, &[]);
                self.cm_event(ev, status, pd);
            }
            (sys::RDMA_CM_EVENT_DISCONNECTED, Phase::Connected | Phase::Disconnecting) => {
                let local = st.phase == Phase::Disconnecting;
                st.phase = Phase::Closed;
                st.deadline = None;
                self.to_error();
                if !local {
                    // SAFETY: live id; answers the peer's DREQ.
                    unsafe { (lib.rdma_disconnect)(id) };
                }
                drop(st);
                self.end(ConnEvent::Disconnected, &[]);
            }
            (sys::RDMA_CM_EVENT_DEVICE_REMOVAL, _) => {
                st.phase = Phase::Closed;
                self.to_error();
                drop(st);
                self.end(ConnEvent::Broken, &[]);
            }
            _ => {}
        }
    }

    /// For tests ([`cm::report_rejected_for_test`]): rdma_cm's REJECTED as librdmacm hands it
    /// over, the queue pair moved to error first.
    pub(super) fn rejected_for_test(&self, status: i32) {
        self.to_error();
        self.on_cm_event(sys::RDMA_CM_EVENT_REJECTED, status, &[]);
    }

    fn conn_param(&self, pd: &[u8], peer: Option<(u8, u8)>) -> sys::rdma_conn_param {
        let a = &self.dev.attr;
        let mut resp = self.caps.max_rdma_read_in.clamp(1, a.max_rdma_read_in.max(1)).min(255) as u8;
        let mut init = self.caps.max_rdma_read_out.clamp(1, a.max_rdma_read_out.max(1)).min(255) as u8;
        if let Some((peer_resp, peer_init)) = peer {
            resp = resp.min(peer_init.max(1));
            init = init.min(peer_resp.max(1));
        }
        sys::rdma_conn_param {
            private_data: if pd.is_empty() { std::ptr::null() } else { pd.as_ptr() as *const _ },
            private_data_len: pd.len() as u8,
            responder_resources: resp,
            initiator_depth: init,
            flow_control: 1,
            retry_count: 7,
            rnr_retry_count: 7,
            srq: self.srq.is_some() as u8,
            qp_num: 0,
        }
    }

    /// The CM thread, on an initiator's connection on soft-iWARP: sends an empty RDMA write,
    /// whose completion is reported to nobody. siw's accept sends the MPA reply before it hands
    /// the socket's data-ready callback to the QP, so a first message arriving in between is
    /// acknowledged by TCP (the initiator's send completes) and then sits unread in the
    /// responder's socket until more data arrives. On iWARP the initiator speaks first, so
    /// often nothing else comes and both sides wait for each other for good (seen in the siw
    /// soak: 80 bytes left in the socket's receive queue). This write, sent once that window
    /// has closed, is the data that makes siw read the socket; the responder places nothing for
    /// it (siw checks no STag for zero bytes). Skipped when the send queue is full or flushing.
    fn nudge(&self) {
        let mut guard = self.send_queue.lock();
        if guard.flushing {
            return;
        }
        let c = guard.count;
        if self.slots.send_slot_free(c).is_err() {
            return;
        }
        self.slots.note_unreported_write(c);
        // SAFETY: plain old data; no segment, remote address 0, STag 0.
        let mut w: sys::ibv_send_wr = unsafe { std::mem::zeroed() };
        w.wr_id = KIND_SEND | (c as u32 as u64);
        w.opcode = sys::IBV_WR_RDMA_WRITE;
        w.send_flags = sys::IBV_SEND_SIGNALED;
        let r = self.post(&mut w);
        if r == 0 {
            guard.count = c + 1;
        } else {
            tracing::debug!("verbs: empty RDMA write not posted: {}", sys::errno_str(sys::err_of(r)));
        }
    }

    fn post(&self, wr: &mut sys::ibv_send_wr) -> i32 {
        let mut bad = std::ptr::null_mut();
        // SAFETY: the QP lives until Drop; the device's post_send is what ibv_post_send calls.
        unsafe { (self.device_post_send)(self.qp, wr, &mut bad) }
    }
}

impl cm::Timed for VerbsQp {
    fn deadline(&self) -> Option<Instant> {
        self.cm.lock().deadline
    }

    /// The CM thread: this QP's deadline passed.
    fn on_deadline(&self) {
        let mut st = self.cm.lock();
        match st.deadline {
            Some(d) if d <= Instant::now() => {}
            _ => return,
        }
        st.deadline = None;
        match st.phase {
            Phase::Resolving | Phase::Connecting => {
                tracing::debug!("verbs: connect timed out");
                if !st.id.is_null() && st.phase == Phase::Connecting {
                    // SAFETY: live id; cancels the pending connection.
                    unsafe { (self.lib().rdma_disconnect)(st.id) };
                }
                self.fail_connect(&mut st, ConnEvent::TimedOut, &[]);
                self.deliver_final(st);
            }
            Phase::Disconnecting => {
                tracing::debug!(
                    "verbs: no DISCONNECTED from rdma_cm in {DISCONNECT_GRACE:?}; reporting the disconnect"
                );
                st.phase = Phase::Closed;
                self.to_error();
                drop(st);
                self.end(ConnEvent::Disconnected, &[]);
            }
            Phase::Connected => {
                self.nudge();
                st.nudges += 1;
                if let Some(gap) = NUDGE_GAPS.get(st.nudges) {
                    self.set_deadline(&mut st, Some(Instant::now() + *gap));
                }
            }
            _ => {}
        }
    }
}

/// Send queue depth: room for every request, a bind, and RDMA reads split into one work
/// request per sink SGE where the device reads into fewer SGEs than a request may carry (on
/// siw one more, a short read cut at a page boundary: [`ReadFragments`]).
fn send_depth(dev: &DevInner, caps: &QpCaps) -> u32 {
    let split = ((caps.max_send_sge as usize).div_ceil(dev.max_sge_rd).max(1) + dev.siw as usize) as u32;
    // and on siw an initiator's empty RDMA write (`VerbsQp::nudge`)
    let extra = 1 + dev.siw as u32;
    (caps.max_send_wr.saturating_mul(split) + extra).min(dev.attr.max_qp_wr.max(caps.max_send_wr + extra))
}

pub(super) fn post_error(what: &str, r: i32) -> DatError {
    let e = sys::err_of(r);
    let d = match e {
        libc::ENOMEM => DatError::insufficient(DAT_RESOURCE_TEP),
        libc::EINVAL => DatError::invalid_state(DAT_INVALID_STATE_EP_DISCONNECTED),
        _ => DatError::INTERNAL,
    };
    fail(what, e, d)
}

/// A receive's post refused by the device (return value `r`); out of line, so the post's
/// usual path does not build it.
#[cold]
#[inline(never)]
fn recv_post_failed(r: i32) -> DatError {
    post_error("ibv_post_recv", r)
}

// `SendFlags` are `ibv_send_flags`: the direct posts (`fill_direct_wr`) hand them to the device as they are.
const _: () = assert!(
    SendFlags::FENCE == sys::IBV_SEND_FENCE
        && SendFlags::SIGNALED == sys::IBV_SEND_SIGNALED
        && SendFlags::SOLICITED == sys::IBV_SEND_SOLICITED
);

/// The operation of a direct post ([`QueuePair::post_message`], [`QueuePair::post_rdma`]): a
/// send, or an RDMA write or read, with nothing else to decode.
#[derive(Clone, Copy)]
enum Direct {
    Send,
    Rdma(Rdma),
}

impl Direct {
    /// The request it stands for, for the general post.
    fn send_wr<'a>(self, wr_id: u64, sges: &'a [Sge], flags: SendFlags) -> SendWr<'a> {
        match self {
            Direct::Send => SendWr::message(wr_id, sges, flags),
            Direct::Rdma(rdma) => SendWr::rdma(wr_id, sges, rdma, flags),
        }
    }
}

/// The segments of a direct post that the device takes as they are (none empty, at most
/// [`MAX_SGE`]), with the bytes they span; None for any other list.
#[inline(always)]
fn direct_total(sges: &[Sge]) -> Option<u64> {
    match sges {
        [s] if s.length != 0 => Some(u64::from(s.length)),
        _ if sges.len() <= MAX_SGE => span_if_none_empty(sges),
        _ => None,
    }
}

/// Makes `w` the verbs work request of a direct post for send-queue counter `c`: what
/// [`fill_send_wr`] writes for the same [`SendOp`] (the inline flag aside), without a
/// [`SendWr`] to decode. Returns the slot ring's `OP_*` of it.
#[inline(always)]
fn fill_direct_wr(w: &mut sys::ibv_send_wr, c: u64, list: &[Sge], flags: SendFlags, op: Direct) -> u64 {
    w.wr_id = KIND_SEND | (c as u32 as u64);
    // Only read by the device's post (see `fill_send_wr`).
    w.sg_list = list.as_ptr().cast_mut();
    w.num_sge = list.len() as i32;
    w.imm_data = 0;
    match op {
        Direct::Send => {
            w.opcode = sys::IBV_WR_SEND;
            w.send_flags = flags.0;
            OP_SEND
        }
        Direct::Rdma(Rdma { remote_addr, rkey, read }) => {
            w.wr.rdma = sys::ibv_rdma_wr { remote_addr, rkey };
            w.send_flags = flags.0 & !SendFlags::SOLICITED;
            if read {
                w.opcode = sys::IBV_WR_RDMA_READ;
                OP_READ
            } else {
                w.opcode = sys::IBV_WR_RDMA_WRITE;
                OP_WRITE
            }
        }
    }
}

/// Makes `w` the verbs work request for send-queue counter `c`: `wr`'s operation on `sges`, at
/// `offset` bytes past its remote address (a fragment of a split read), signaled if `wr` is and
/// `signaled`. Writes the fields every request carries and those of `wr`'s opcode (see
/// [`SendQueue::wr`]), decoding the operation once; returns the slot ring's `OP_*` of it.
#[inline]
fn fill_send_wr(w: &mut sys::ibv_send_wr, c: u64, sges: &[Sge], wr: &SendWr<'_>, offset: u64, signaled: bool) -> u64 {
    w.wr_id = KIND_SEND | (c as u32 as u64);
    // The device's post only reads the list (`ibv_post_send` takes it through a non-const
    // pointer of the C API).
    w.sg_list = sges.as_ptr().cast_mut();
    w.num_sge = sges.len() as i32;
    let mut flags = 0;
    if wr.signaled && signaled {
        flags |= sys::IBV_SEND_SIGNALED;
    }
    if wr.fence {
        flags |= sys::IBV_SEND_FENCE;
    }
    let solicited = if wr.solicited { sys::IBV_SEND_SOLICITED } else { 0 };
    let mut immed = 0;
    let (opcode, slot_op) = match wr.op {
        SendOp::Send => {
            flags |= solicited;
            (sys::IBV_WR_SEND, OP_SEND)
        }
        SendOp::RdmaWrite { remote_addr, rkey } => {
            w.wr.rdma = sys::ibv_rdma_wr { remote_addr: remote_addr + offset, rkey };
            (sys::IBV_WR_RDMA_WRITE, OP_WRITE)
        }
        SendOp::RdmaRead { remote_addr, rkey } => {
            w.wr.rdma = sys::ibv_rdma_wr { remote_addr: remote_addr + offset, rkey };
            (sys::IBV_WR_RDMA_READ, OP_READ)
        }
        SendOp::RdmaWriteImmed { remote_addr, rkey, immed: i } => {
            flags |= solicited;
            immed = i;
            w.wr.rdma = sys::ibv_rdma_wr { remote_addr: remote_addr + offset, rkey };
            (sys::IBV_WR_RDMA_WRITE_WITH_IMM, OP_WRITE_IMMED)
        }
        SendOp::Atomic { remote_addr, rkey, op: AtomicOp::FetchAdd { add } } => {
            w.wr.atomic = sys::ibv_atomic_wr { remote_addr, compare_add: add, swap: 0, rkey };
            (sys::IBV_WR_ATOMIC_FETCH_AND_ADD, OP_FETCH_ADD)
        }
        SendOp::Atomic { remote_addr, rkey, op: AtomicOp::CmpSwap { compare, swap } } => {
            w.wr.atomic = sys::ibv_atomic_wr { remote_addr, compare_add: compare, swap, rkey };
            (sys::IBV_WR_ATOMIC_CMP_AND_SWP, OP_CMP_SWAP)
        }
    };
    w.imm_data = immed;
    w.send_flags = flags;
    w.opcode = opcode;
    slot_op
}

impl VerbsQp {
    /// A direct post ([`Direct`]): segments the device takes as they are (a read's within what
    /// it scatters) posted holding the send queue; any other list, or the send queue held by
    /// another thread, takes the general post, which waits for the queue. `uncommon` is the
    /// same operation as `op` in the form the caller received it (an RDMA one's own argument,
    /// handed on to the general post as it is rather than rebuilt on the usual path).
    /// Inlined into each direct post, so `op` is a constant there.
    #[inline(always)]
    fn post_direct(&self, wr_id: u64, sges: &[Sge], flags: SendFlags, op: Direct, uncommon: Direct) -> DatResult<()> {
        if let Some(total) = direct_total(sges) {
            let unsplit = match op {
                Direct::Rdma(Rdma { read: true, remote_addr, .. }) => {
                    sges.len() <= self.dev.max_sge_rd && !self.cuts_read(remote_addr, total)
                }
                _ => true,
            };
            if unsplit {
                if let Some(guard) = self.send_queue.try_lock() {
                    return self.post_direct_locked(guard, wr_id, sges, total, flags, op);
                }
            }
        }
        self.post_direct_uncommon(wr_id, sges, flags, uncommon)
    }

    /// [`Self::post_direct`] holding the send queue: what [`QueuePair::post_send`] does for
    /// the same [`SendOp`] (the slot ring's room, the request's fields, the inline check, the
    /// slot), with nothing to decode.
    #[inline(always)]
    fn post_direct_locked(
        &self,
        mut guard: SpinGuard<'_, SendQueue>,
        wr_id: u64,
        list: &[Sge],
        total: u64,
        flags: SendFlags,
        op: Direct,
    ) -> DatResult<()> {
        if guard.flushing {
            drop(guard);
            return self.post_direct_uncommon(wr_id, list, flags, op);
        }
        let sq = &mut *guard;
        let c = sq.count;
        if let Err(e) = self.slots.send_slot_free(c) {
            drop(guard);
            return Err(e);
        }
        // Everything but the inline flag first, so nothing else is live across the inline
        // check's out-of-line lookup.
        let slot_op = fill_direct_wr(&mut sq.wr, c, list, flags, op);
        let slot = self.slots.send.at(c);
        slot.wr_id.store(wr_id, Ordering::Relaxed);
        slot.info.store(slot_info(slot_op, 0, total) | signaled_info(sq.wr.send_flags), Ordering::Release);
        if slot_op <= OP_LAST_INLINE {
            sq.wr.send_flags |= sq.inline.flag(&self.pd.mrs, list, total);
        }
        // SAFETY: live QP; the work request is ours under the lock, and it and the SGE list live
        // across the call.
        let r = unsafe { (self.device_post_send)(self.qp, &mut sq.wr, &mut sq.bad) };
        if r != 0 {
            return self.send_refused(guard, r, wr_id, slot_op);
        }
        // Read again rather than kept across the device's call: it does not move while we hold
        // the send queue.
        sq.count += 1;
        Ok(())
    }

    /// A direct post [`Self::post_direct`] does not make: the general post, which waits for the
    /// send queue, leaves empty segments out and splits a read into more than the device
    /// scatters.
    #[cold]
    #[inline(never)]
    fn post_direct_uncommon(&self, wr_id: u64, sges: &[Sge], flags: SendFlags, op: Direct) -> DatResult<()> {
        self.post_send(&op.send_wr(wr_id, sges, flags))
    }

    /// A send-queue request of slot operation `op` posted to the QP in error: counted as posted
    /// without reaching the device (siw never completes a request posted to a QP in error) and
    /// flushed in software behind the requests before it, which rxe may still be flushing.
    /// `DAT_INSUFFICIENT_RESOURCES` when the slot ring is full.
    #[cold]
    #[inline(never)]
    fn post_send_flushed(&self, mut guard: SpinGuard<'_, SendQueue>, wr_id: u64, op: u64) -> DatResult<()> {
        let sq = &mut *guard;
        let c = sq.count;
        self.slots.send_slot_free(c)?;
        let slot = self.slots.send.at(c);
        slot.wr_id.store(wr_id, Ordering::Relaxed);
        // Reported whatever its flags: a flushed request always completes.
        slot.info.store(slot_info(op, 0, 0) | INFO_SIGNALED, Ordering::Release);
        sq.count = c + 1;
        drop(guard);
        if let Some(cq) = &self.send_cq {
            // SAFETY: live QP.
            let qpn = unsafe { (*self.qp).qp_num };
            cq.watch_unreported(qpn, true, self.slots.clone(), (c + 1) as u32);
        }
        Ok(())
    }

    /// The device refused send-queue request `wr_id` (slot operation `op`) with `r`. siw
    /// answers `ENOTCONN` while its QP leaves RTS, which the peer's disconnect does before the
    /// CM thread moves it to error: then the request is flushed in software as on a QP in error
    /// (a completion the device still makes of it is dropped). Otherwise the post fails.
    #[cold]
    #[inline(never)]
    fn send_refused(&self, guard: SpinGuard<'_, SendQueue>, r: i32, wr_id: u64, op: u64) -> DatResult<()> {
        if sys::err_of(r) == libc::ENOTCONN {
            tracing::debug!(context = self.slots.context, "verbs: a send refused by a QP leaving RTS, flushed");
            return self.post_send_flushed(guard, wr_id, op);
        }
        Err(post_error("ibv_post_send", r))
    }

    /// Whether an RDMA read of `bytes` at `remote_addr` is cut at the responder's page boundary
    /// ([`ReadFragments`]): on siw, a short one crossing a page.
    #[inline(always)]
    fn cuts_read(&self, remote_addr: u64, bytes: u64) -> bool {
        self.dev.siw && short_read_crosses_page(remote_addr, bytes)
    }

    /// An RDMA read the device cannot take as one request ([`ReadFragments`]: into more SGEs
    /// than it scatters, or on siw short across a page): one read per fragment, at consecutive
    /// remote addresses (`remote_addr` on), unsignaled but the last. Reads complete in order
    /// (the responder answers them in order, also on siw, whose reads otherwise complete after
    /// later sends), so the last completion stands for all of them; if a fragment fails, its
    /// error reports the request and the rest of the group is dropped (see `Slots::complete`).
    #[cold]
    #[inline(never)]
    fn post_split_read(
        &self,
        sq: &mut SendQueue,
        wr: &SendWr<'_>,
        remote_addr: u64,
        list: &[Sge],
        total: u64,
    ) -> DatResult<()> {
        let fragments = ReadFragments::new(list, self.dev.max_sge_rd, remote_addr, self.dev.siw);
        let frags = fragments.count;
        // All fragments or none: a send queue filling up half way would leave a partial
        // request in flight behind an error return.
        let outstanding = (sq.count as u32).wrapping_sub(self.slots.send_done.load(Ordering::Acquire));
        if outstanding as usize + frags > send_depth(&self.dev, &self.caps) as usize {
            return Err(DatError::insufficient(DAT_RESOURCE_TEP));
        }
        let start = sq.count;
        let mut offset = 0;
        for (k, part) in fragments.iter().enumerate() {
            let last = k + 1 == frags;
            let c = sq.count;
            let bytes = total_length(part);
            let slot = self.slots.send.at(c);
            slot.wr_id.store(wr.wr_id, Ordering::Relaxed);
            fill_send_wr(&mut sq.wr, c, part, wr, offset, last);
            let info = slot_info(OP_READ, frags - 1 - k, if last { total } else { bytes });
            slot.info.store(info | signaled_info(sq.wr.send_flags), Ordering::Release);
            let r = self.post(&mut sq.wr);
            if r != 0 {
                // Fragments already posted belong to a request that failed: whatever they
                // complete with (a flush, if the QP broke) is not reported.
                for k in start..c {
                    let s = self.slots.send.at(k);
                    s.info.store(slot_info(OP_READ, 0, 0) | INFO_REPORTED, Ordering::Release);
                }
                return Err(post_error("ibv_post_send", r));
            }
            sq.count = c + 1;
            offset += bytes;
        }
        Ok(())
    }
}

impl QueuePair for VerbsQp {
    fn post_send(&self, wr: &SendWr<'_>) -> DatResult<()> {
        let mut buf = [MaybeUninit::uninit(); MAX_SGE];
        let (list, total) = device_sges(wr.sges, &mut buf)?;
        let mut guard = self.send_queue.lock();
        if guard.flushing {
            return self.post_send_flushed(guard, wr.wr_id, slot_op(wr.op.opcode()));
        }
        let sq = &mut *guard;
        let c = sq.count;
        // Before the split read's own check, which needs room for all its fragments: the slot
        // ring is never smaller than the send queue.
        self.slots.send_slot_free(c)?;
        let op = fill_send_wr(&mut sq.wr, c, list, wr, 0, true);
        if let SendOp::RdmaRead { remote_addr, .. } = wr.op {
            if list.len() > self.dev.max_sge_rd || self.cuts_read(remote_addr, total) {
                return self.post_split_read(sq, wr, remote_addr, list, total);
            }
        }
        if op <= OP_LAST_INLINE {
            sq.wr.send_flags |= sq.inline.flag(&self.pd.mrs, list, total);
        }
        let slot = self.slots.send.at(c);
        slot.wr_id.store(wr.wr_id, Ordering::Relaxed);
        slot.info.store(slot_info(op, 0, total) | signaled_info(sq.wr.send_flags), Ordering::Release);
        let r = self.post(&mut sq.wr);
        if r != 0 {
            return self.send_refused(guard, r, wr.wr_id, op);
        }
        sq.count = c + 1;
        Ok(())
    }

    fn post_message(&self, wr_id: u64, sges: &[Sge], flags: SendFlags) -> DatResult<()> {
        self.post_direct(wr_id, sges, flags, Direct::Send, Direct::Send)
    }

    fn post_rdma(&self, wr_id: u64, sges: &[Sge], rdma: Rdma, flags: SendFlags) -> DatResult<()> {
        // One way or the other, so each way's post knows its operation; the general post gets
        // `rdma` as it came.
        let Rdma { remote_addr, rkey, read } = rdma;
        if read {
            self.post_direct(
                wr_id,
                sges,
                flags,
                Direct::Rdma(Rdma { remote_addr, rkey, read: true }),
                Direct::Rdma(rdma),
            )
        } else {
            self.post_direct(
                wr_id,
                sges,
                flags,
                Direct::Rdma(Rdma { remote_addr, rkey, read: false }),
                Direct::Rdma(rdma),
            )
        }
    }

    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()> {
        // The usual receive: segments the device takes as they are (none empty), within the
        // queue pair's limit (at least one, never above `MAX_SGE`).
        let as_given = match sges {
            [s] => s.length != 0,
            _ => sges.len() <= self.caps.max_recv_sge as usize && sges.iter().all(|s| s.length != 0),
        };
        if as_given {
            return self.post_recv_list(wr_id, sges);
        }
        self.post_recv_uncommon(wr_id, sges)
    }

    fn bind_mw(&self, wr: &BindWr<'_>) -> DatResult<u32> {
        let qp = self.qp;
        let mw = MWS.get(wr.mw).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_RMR))?;
        let mr = MRS.get(wr.mr).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_LMR))?;
        if !Arc::ptr_eq(&mw.pd, &self.pd) {
            return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0));
        }
        let mut access = 0u32;
        if wr.access.remote_read {
            access |= sys::IBV_ACCESS_REMOTE_READ as u32;
        }
        if wr.access.remote_write {
            access |= sys::IBV_ACCESS_REMOTE_WRITE as u32;
        }
        let info = sys::ibv_mw_bind_info { mr: mr.mr, addr: wr.addr, length: wr.length, mw_access_flags: access };
        let mut sq = self.send_queue.lock();
        self.slots.send_slot_free(sq.count)?;
        let c = sq.count;
        let slot = self.slots.send.at(c);
        slot.wr_id.store(wr.wr_id, Ordering::Release);
        let flags = if wr.signaled { sys::IBV_SEND_SIGNALED } else { 0 };
        slot.info.store(slot_info(OP_BIND, 0, 0) | signaled_info(flags), Ordering::Release);
        let rkey;
        if self.dev.mw_type == sys::IBV_MW_TYPE_1 {
            let mut b = sys::ibv_mw_bind { wr_id: KIND_SEND | (c as u32 as u64), send_flags: flags, bind_info: info };
            // SAFETY: live QP, MW and MR; the op slot is what ibv_bind_mw calls, which
            // updates mw->rkey.
            let r = unsafe {
                match (*(*qp).context).ops.bind_mw {
                    Some(f) => f(qp, mw.mw, &mut b),
                    None => libc::ENOSYS,
                }
            };
            if r != 0 {
                return Err(post_error("ibv_bind_mw", r));
            }
            // SAFETY: live MW.
            rkey = unsafe { (*mw.mw).rkey };
        } else {
            let old = mw.rkey.load(Ordering::Acquire);
            let new = (old & 0xffff_ff00) | (old.wrapping_add(1) & 0xff);
            // SAFETY: plain old data; fields set below.
            let mut w: sys::ibv_send_wr = unsafe { std::mem::zeroed() };
            w.wr_id = KIND_SEND | (c as u32 as u64);
            w.opcode = sys::IBV_WR_BIND_MW;
            w.send_flags = flags;
            w.bind_mw = mw.mw;
            w.bind_rkey = new;
            w.bind_info = info;
            let r = self.post(&mut w);
            if r != 0 {
                return Err(post_error("ibv_post_send(BIND_MW)", r));
            }
            // SAFETY: live MW; type 2 windows take the rkey the consumer chose.
            unsafe { (*mw.mw).rkey = new };
            rkey = new;
        }
        sq.count = c + 1;
        mw.rkey.store(rkey, Ordering::Release);
        mw.bound.store(wr.length > 0, Ordering::Release);
        Ok(rkey)
    }

    fn connect(&self, remote: SocketAddr, port: u64, private_data: &[u8], timeout: Option<Duration>) -> DatResult<()> {
        let port = self.dev.connect_port(port, private_data)?;
        let mut st = self.cm.lock();
        if st.phase != Phase::Idle {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_CONNECTED));
        }
        st.private_data = private_data.to_vec();
        st.phase = Phase::Resolving;
        if let Err(e) = self.dev.resolve_addr(st.id, remote, port, timeout) {
            st.phase = Phase::Idle;
            return Err(e);
        }
        let d = timeout.map(|t| Instant::now() + t);
        self.set_deadline(&mut st, d);
        Ok(())
    }

    fn accept(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()> {
        let cr = cm::acceptable(&self.dev, req, private_data, false)?;
        let lib = self.lib();
        let mut st = self.cm.lock();
        if st.phase != Phase::Idle {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_CONNECTED));
        }
        let Some(id) = cr.take_id() else {
            return Err(DatError::invalid_state(0));
        };
        // The QP moves to the request's id, which carries the connection from now on (librdmacm
        // drives the QP of the id it accepts on); the EP's own id goes. Both ids are on this
        // IA's device and port.
        // SAFETY: both ids are live and ours; no event of the EP's idle id is pending.
        unsafe {
            (*id).qp = self.qp;
            (*st.id).qp = std::ptr::null_mut();
            (lib.rdma_destroy_id)(st.id);
        }
        {
            let mut ids = self.dev.ids.lock();
            ids.remove(&st.id_key);
            ids.insert(cr.key, Owner::Qp(self.me.clone()));
        }
        st.id = id;
        st.id_key = cr.key;
        st.phase = Phase::Accepting;
        let mut param = self.conn_param(private_data, Some(cr.rdma_params));
        // SAFETY: live id with our QP; private data outlives the call.
        let r = unsafe { (lib.rdma_accept)(id, &mut param) };
        if r != 0 {
            // The requester went away (its cancel or reject arrived before our reply): the
            // request's id now carries this QP, so the request is used up either way. The
            // accept is taken, and the connection ends as when the requester vanishes right
            // after an accept: DAT_CONNECTION_EVENT_BROKEN, so that the consumer frees the EP
            // on its usual path and nothing of the request is left behind.
            tracing::debug!("verbs: rdma_accept: {}; the requester is gone", sys::errno_str(sys::err_of(r)));
            self.fail_connect(&mut st, ConnEvent::Broken, &[]);
            self.deliver_final(st);
        }
        Ok(())
    }

    fn disconnect(&self, graceful: bool) -> DatResult<()> {
        let lib = self.lib();
        let mut st = self.cm.lock();
        match st.phase {
            Phase::Closed | Phase::Disconnecting => return Ok(()),
            Phase::Idle => {
                st.phase = Phase::Closed;
                self.to_error();
                drop(st);
                self.end(ConnEvent::Disconnected, &[]);
                return Ok(());
            }
            _ => {}
        }
        let was = st.phase;
        if !graceful || was != Phase::Connected {
            self.to_error();
        }
        if !st.id.is_null() && was != Phase::Resolving {
            // SAFETY: live id; librdmacm also moves the QP to ERR (IB) or SQD (iWARP).
            let r = unsafe { (lib.rdma_disconnect)(st.id) };
            if r != 0 {
                tracing::debug!("verbs: rdma_disconnect: {}", sys::errno_str(sys::err_of(r)));
            }
        }
        if graceful && was == Phase::Connected {
            st.phase = Phase::Disconnecting;
            self.set_deadline(&mut st, Some(Instant::now() + DISCONNECT_GRACE));
            return Ok(());
        }
        st.phase = if was == Phase::Connected { Phase::Disconnecting } else { Phase::Closed };
        self.to_error();
        drop(st);
        self.end(ConnEvent::Disconnected, &[]);
        Ok(())
    }

    fn posted_recvs(&self) -> u32 {
        self.slots.outstanding_recvs()
    }

    /// Neither queue reaches the device any more (siw never completes work posted to a QP in
    /// error): the work request is counted as posted and flushed in software behind the work
    /// before it, which rxe may still be flushing in a kernel task.
    fn flush_behind_posted(&self, wr_id: u64, op: WcOpcode) -> bool {
        if op == WcOpcode::Recv {
            let guard = self.recv.lock();
            if guard.mode != RecvMode::Flushing || self.slots.outstanding_recvs() == 0 {
                return false;
            }
            return self.post_recv_refused(guard, wr_id).is_ok();
        }
        let sq = self.send_queue.lock();
        if !sq.flushing || self.slots.outstanding_sends(sq.count) == 0 {
            return false;
        }
        self.post_send_flushed(sq, wr_id, slot_op(op)).is_ok()
    }

    /// Send-queue work requests posted and not completed. An unsignaled request is retired by
    /// the next completion of its QP (in-order send queue), a flushed one by its flush. (siw
    /// completes an RDMA read after sends posted behind it, so there a read still in flight
    /// may already count as retired.)
    fn posted_sends(&self) -> u32 {
        let posted = self.send_queue.lock().count as u32;
        posted.wrapping_sub(self.slots.send_done.load(Ordering::Acquire))
    }
}

impl Drop for VerbsQp {
    fn drop(&mut self) {
        let st = self.cm.get_mut();
        self.dev.ids.lock().remove(&st.id_key);
        // SAFETY: live QP.
        let qpn = unsafe { (*self.qp).qp_num };
        for c in [&self.send_cq, &self.recv_cq].into_iter().flatten() {
            c.detach(qpn);
        }
        cm::unwatch_qp(&self.dev, qpn);
        // No event of the id is unacknowledged (the CM thread acknowledges before dispatching).
        Made { id: st.id, own_cqs: std::mem::take(&mut self.own_cqs), qp: self.qp }.free(self.dev.lib);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::WcStatus;

    fn recv_slots(n: u32) -> Slots {
        Slots {
            context: 7,
            send: Ring::new(1),
            recv: Ring::new(n),
            srq: None,
            recv_count: AtomicU32::new(0),
            recv_done: AtomicU32::new(0),
            send_done: AtomicU32::new(0),
            datagram: false,
        }
    }

    /// Receive counter `c` posted with cookie `100 + c`.
    fn post(s: &Slots, c: u32) {
        s.recv.at(c as u64).wr_id.store(100 + c as u64, Ordering::Relaxed);
        s.recv_count.store(c.wrapping_add(1), Ordering::Relaxed);
    }

    fn sge(addr: u64, length: u32) -> Sge {
        Sge { addr, length, lkey: 5 }
    }

    /// Each fragment as (address, length) pairs.
    fn fragments(list: &[Sge], max_sge_rd: usize, remote: u64, siw: bool) -> Vec<Vec<(u64, u32)>> {
        let f = ReadFragments::new(list, max_sge_rd, remote, siw);
        f.iter().map(|part| part.iter().map(|s| (s.addr, s.length)).collect()).collect()
    }

    /// A short read across the responder's page boundary is cut there on siw (whose short copy
    /// gets such a payload wrong), so each part lies in one page; a long one, or one on another
    /// device, is not.
    #[test]
    fn a_short_read_across_a_page_is_cut_at_the_page_on_siw() {
        let one = [sge(0x1000, 24)];
        assert_eq!(fragments(&one, 1, 0x7000 - 10, true), vec![vec![(0x1000, 10)], vec![(0x100a, 14)]]);
        assert_eq!(fragments(&one, 1, 0x7000 - 10, false), vec![vec![(0x1000, 24)]]);
        assert_eq!(fragments(&one, 1, 0x7000 - 24, true), vec![vec![(0x1000, 24)]], "ends at the page");
        assert_eq!(fragments(&one, 1, 0x7000, true), vec![vec![(0x1000, 24)]], "starts at the page");
        let long = [sge(0x1000, 33)];
        assert_eq!(fragments(&long, 1, 0x7000 - 10, true), vec![vec![(0x1000, 33)]], "past the short copy");
        assert!(short_read_crosses_page(0x7000 - 1, 2) && !short_read_crosses_page(0x7000 - 1, 0));
    }

    /// Chunks of `max_sge_rd` SGEs; a short chunk across a page is cut at an SGE's end or inside
    /// one, and no fragment holds more SGEs than the device scatters.
    #[test]
    fn a_split_read_keeps_every_byte_in_order_and_each_fragment_within_max_sge_rd() {
        let list = [sge(0x1000, 8), sge(0x2000, 8), sge(0x3000, 100), sge(0x4000, 4)];
        assert_eq!(
            fragments(&list, 2, 0x7000 - 8, true),
            vec![vec![(0x1000, 8)], vec![(0x2000, 8)], vec![(0x3000, 100), (0x4000, 4)]],
            "cut at the first SGE's end"
        );
        assert_eq!(
            fragments(&list, 2, 0x7000 - 12, true),
            vec![vec![(0x1000, 8), (0x2000, 4)], vec![(0x2004, 4)], vec![(0x3000, 100), (0x4000, 4)]],
            "cut inside the second SGE"
        );
        assert_eq!(
            fragments(&list, 1, 0x7000 - 12, true),
            vec![vec![(0x1000, 8)], vec![(0x2000, 4)], vec![(0x2004, 4)], vec![(0x3000, 100)], vec![(0x4000, 4)]]
        );
        let max = [sge(0x1000, 2); MAX_SGE];
        let cut = ReadFragments::new(&max, 1, 0x7000 - 1, true);
        assert_eq!(cut.count, MAX_SGE + 1);
        assert_eq!(cut.iter().map(total_length).sum::<u64>(), 2 * MAX_SGE as u64);
    }

    fn device_wc(c: u32, status: u32) -> sys::ibv_wc {
        sys::ibv_wc {
            wr_id: KIND_RECV | c as u64,
            status,
            opcode: 128, // IBV_WC_RECV
            vendor_err: 0,
            byte_len: 8,
            imm_data: 0,
            qp_num: 1,
            src_qp: 0,
            wc_flags: 0,
            pkey_index: 0,
            slid: 0,
            sl: 0,
            dlid_path_bits: 0,
        }
    }

    /// Send counter `c` posted with cookie `200 + c`.
    fn post_send(s: &Slots, c: u32, signaled: bool) {
        let flags = if signaled { sys::IBV_SEND_SIGNALED } else { 0 };
        s.send.at(c as u64).wr_id.store(200 + c as u64, Ordering::Relaxed);
        s.send.at(c as u64).info.store(slot_info(OP_SEND, 0, 8) | signaled_info(flags), Ordering::Relaxed);
    }

    fn send_wc(c: u32, status: u32) -> sys::ibv_wc {
        sys::ibv_wc { wr_id: KIND_SEND | c as u64, opcode: 0, ..device_wc(c, status) }
    }

    /// rxe flushes the requests it has not started before those in flight: the flush of a
    /// later request first completes the earlier signaled ones as flushed, in order, and their
    /// own late flushes are dropped; an unsignaled one, which may have succeeded, is not
    /// reported. A slot posted again is reported again.
    #[test]
    fn a_flush_ahead_of_earlier_requests_completes_them_first() {
        let s = Slots { send: Ring::new(4), ..recv_slots(1) };
        for c in 0..6 {
            post_send(&s, c, c != 2);
        }
        assert_eq!(s.complete(&send_wc(0, sys::IBV_WC_SUCCESS)).map(|w| w.wr_id), Some(200));
        let (mut out, mut before) = ([WorkCompletion::EMPTY; 2], Vec::new());
        assert!(s.complete_into(&send_wc(4, sys::IBV_WC_WR_FLUSH_ERR), &mut out, 1, &mut before));
        let got: Vec<_> = before.iter().map(|(at, w)| (*at, w.wr_id, w.status, w.opcode)).collect();
        let flushed = |id| (1, id, WcStatus::Flushed, WcOpcode::Send);
        assert_eq!(got, [flushed(201), flushed(203)]);
        assert_eq!((out[1].wr_id, out[1].status), (204, WcStatus::Flushed));
        for c in 1..4 {
            assert!(s.complete(&send_wc(c, sys::IBV_WC_WR_FLUSH_ERR)).is_none(), "late flush of {c} dropped");
        }
        assert_eq!(s.complete(&send_wc(5, sys::IBV_WC_WR_FLUSH_ERR)).map(|w| w.wr_id), Some(205));
        assert!(s.complete(&send_wc(5, sys::IBV_WC_WR_FLUSH_ERR)).is_none(), "a second flush of 5 dropped");
        assert_eq!(s.outstanding_sends(6), 0);
        // Counter 9 reuses counter 1's slot.
        post_send(&s, 9, true);
        assert_eq!(s.complete(&send_wc(9, sys::IBV_WC_SUCCESS)).map(|w| w.wr_id), Some(209));
    }

    /// The library's own RDMA write on siw (`VerbsQp::nudge`) is reported neither when it
    /// succeeds nor when it is flushed, alone or behind a failed request, and its slot retires.
    #[test]
    fn a_write_of_the_librarys_own_is_never_reported() {
        let s = Slots { send: Ring::new(8), ..recv_slots(1) };
        s.note_unreported_write(0);
        assert!(s.complete(&send_wc(0, sys::IBV_WC_SUCCESS)).is_none(), "its success is not reported");
        assert_eq!(s.outstanding_sends(1), 0, "its slot retired");
        post_send(&s, 1, true);
        s.note_unreported_write(2);
        post_send(&s, 3, true);
        assert!(s.complete(&send_wc(2, sys::IBV_WC_WR_FLUSH_ERR)).is_none(), "its flush is not reported");
        let (mut out, mut before) = ([WorkCompletion::EMPTY; 2], Vec::new());
        s.note_unreported_write(4);
        post_send(&s, 5, true);
        assert!(s.complete_into(&send_wc(5, sys::IBV_WC_WR_FLUSH_ERR), &mut out, 0, &mut before));
        let got: Vec<_> = before.iter().map(|(_, w)| w.wr_id).collect();
        assert_eq!(got, [203], "flushed ahead of a later failure: only the consumer's request");
        assert_eq!((out[0].wr_id, out[0].status), (205, WcStatus::Flushed));
        assert_eq!(s.outstanding_sends(6), 0);
    }

    /// Requests posted after the QP went into error are flushed in software behind the ones
    /// the device has not completed yet, which complete first (the signaled ones); a late
    /// device flush of those is dropped.
    #[test]
    fn requests_flushed_in_software_come_after_the_earlier_ones() {
        let s = Slots { send: Ring::new(4), ..recv_slots(1) };
        for c in 0..4 {
            post_send(&s, c, c != 1);
        }
        let slot = s.send.at(4);
        slot.wr_id.store(204, Ordering::Relaxed);
        slot.info.store(slot_info(slot_op(WcOpcode::RdmaRead), 0, 0) | INFO_SIGNALED, Ordering::Relaxed);
        let mut got = Vec::new();
        s.flush_unreported_sends(5, |w| got.push((w.wr_id, w.status, w.opcode)));
        let flushed = |id, op| (id, WcStatus::Flushed, op);
        let want = [flushed(200, WcOpcode::Send), flushed(202, WcOpcode::Send), flushed(203, WcOpcode::Send)];
        assert_eq!(got[..3], want);
        assert_eq!(got[3..], [flushed(204, WcOpcode::RdmaRead)]);
        assert_eq!(s.outstanding_sends(5), 0);
        assert!(s.complete(&send_wc(2, sys::IBV_WC_WR_FLUSH_ERR)).is_none(), "a late device flush is dropped");
    }

    /// Every receive completes exactly once: the device's completions, then the ones it never
    /// flushed (below the error mark) in software, and a late device flush of one of those is
    /// dropped.
    #[test]
    fn unreported_receives_complete_once() {
        let s = recv_slots(8);
        for c in 0..5 {
            post(&s, c);
        }
        assert_eq!(s.outstanding_recvs(), 5);
        assert_eq!(s.complete(&device_wc(0, sys::IBV_WC_SUCCESS)).map(|w| w.wr_id), Some(100));
        assert_eq!(s.complete(&device_wc(1, sys::IBV_WC_WR_FLUSH_ERR)).map(|w| w.status), Some(WcStatus::Flushed));
        let mut flushed = Vec::new();
        s.flush_unreported_recvs(5, |wc| flushed.push((wc.wr_id, wc.status, wc.context)));
        assert_eq!(flushed, (2..5).map(|c| (100 + c, WcStatus::Flushed, 7)).collect::<Vec<_>>());
        assert_eq!(s.outstanding_recvs(), 0);
        assert!(s.complete(&device_wc(3, sys::IBV_WC_WR_FLUSH_ERR)).is_none(), "a late device flush is dropped");
        assert_eq!(s.outstanding_recvs(), 0);
        s.flush_unreported_recvs(5, |_| panic!("settled twice"));
        // Counters wrap: the same holds across 2^32.
        let s = recv_slots(8);
        s.recv_done.store(u32::MAX - 1, Ordering::Relaxed);
        for c in [u32::MAX - 1, u32::MAX, 0] {
            post(&s, c);
        }
        assert_eq!(s.outstanding_recvs(), 3);
        assert!(s.complete(&device_wc(u32::MAX - 1, sys::IBV_WC_WR_FLUSH_ERR)).is_some());
        let mut n = 0;
        s.flush_unreported_recvs(1, |_| n += 1);
        assert_eq!(n, 2);
        assert!(s.complete(&device_wc(0, sys::IBV_WC_WR_FLUSH_ERR)).is_none());
    }

    /// The work request kept from one post to the next carries each post's own opcode, flags,
    /// immediate data and remote side, whatever the request before it was.
    #[test]
    fn the_kept_work_request_carries_each_posts_own_fields() {
        // SAFETY: plain old data, all zero (as `SendQueue::wr` starts).
        let mut w: sys::ibv_send_wr = unsafe { std::mem::zeroed() };
        let sges = [Sge { addr: 0x1000, length: 8, lkey: 7 }];
        let wr = |op, signaled, solicited| SendWr { wr_id: 1, op, sges: &sges, signaled, solicited, fence: true };
        let rdma = |w: &sys::ibv_send_wr| {
            // SAFETY: the RDMA member, which the opcodes checked with it carry.
            unsafe { (w.wr.rdma.remote_addr, w.wr.rdma.rkey) }
        };
        let immed = SendOp::RdmaWriteImmed { remote_addr: 0x2000, rkey: 3, immed: 9 };
        assert_eq!(fill_send_wr(&mut w, 5, &sges, &wr(immed, true, true), 0, true), OP_WRITE_IMMED);
        let all = sys::IBV_SEND_SIGNALED | sys::IBV_SEND_SOLICITED | sys::IBV_SEND_FENCE;
        assert_eq!((w.opcode, w.imm_data, w.send_flags), (sys::IBV_WR_RDMA_WRITE_WITH_IMM, 9, all));
        assert_eq!(rdma(&w), (0x2000, 3));
        assert_eq!((w.wr_id, w.num_sge, w.sg_list.cast_const()), (KIND_SEND | 5, 1, sges.as_ptr()));
        assert_eq!(fill_send_wr(&mut w, 6, &sges[..0], &wr(SendOp::Send, false, true), 0, true), OP_SEND);
        let flags = sys::IBV_SEND_SOLICITED | sys::IBV_SEND_FENCE;
        assert_eq!(
            (w.wr_id, w.num_sge, w.opcode, w.imm_data, w.send_flags),
            (KIND_SEND | 6, 0, sys::IBV_WR_SEND, 0, flags)
        );
        let read = SendOp::RdmaRead { remote_addr: 0x3000, rkey: 4 };
        assert_eq!(fill_send_wr(&mut w, 7, &sges, &wr(read, true, true), 16, false), OP_READ);
        assert_eq!((w.opcode, w.send_flags), (sys::IBV_WR_RDMA_READ, sys::IBV_SEND_FENCE), "unsignaled, not solicited");
        assert_eq!(rdma(&w), (0x3010, 4), "a fragment's remote side is at its offset");
    }

    /// A direct post's request ([`fill_direct_wr`]: a send, an RDMA write, an RDMA read) is the
    /// one [`fill_send_wr`] makes of the same request ([`Direct::send_wr`]), with the same slot
    /// operation, for every combination of flags, over a request another opcode left behind.
    #[test]
    fn a_direct_posts_request_is_the_general_posts() {
        let sges = [Sge { addr: 0x1000, length: 8, lkey: 7 }, Sge { addr: 0x2000, length: 4, lkey: 7 }];
        let immed = SendOp::RdmaWriteImmed { remote_addr: 0x2000, rkey: 3, immed: 9 };
        let ops = [
            Direct::Send,
            Direct::Rdma(Rdma { remote_addr: 0x5000, rkey: 11, read: false }),
            Direct::Rdma(Rdma { remote_addr: 0x6000, rkey: 12, read: true }),
        ];
        for op in ops {
            for bits in 0..8 {
                let flags = SendFlags(bits);
                let left_behind = || {
                    // SAFETY: plain old data, all zero (as `SendQueue::wr` starts).
                    let mut w: sys::ibv_send_wr = unsafe { std::mem::zeroed() };
                    let earlier =
                        SendWr { wr_id: 1, op: immed, sges: &sges[..1], signaled: true, solicited: true, fence: true };
                    fill_send_wr(&mut w, 4, &sges[..1], &earlier, 0, true);
                    w
                };
                let (mut general, mut direct) = (left_behind(), left_behind());
                let c = u64::from(u32::MAX) + 5;
                let general_op = fill_send_wr(&mut general, c, &sges, &op.send_wr(2, &sges, flags), 0, true);
                assert_eq!(fill_direct_wr(&mut direct, c, &sges, flags, op), general_op, "flags {bits:#x}");
                let fields = |w: &sys::ibv_send_wr| {
                    (w.wr_id, w.next, w.sg_list.cast_const(), w.num_sge, w.opcode, w.send_flags, w.imm_data)
                };
                assert_eq!(fields(&direct), fields(&general), "flags {bits:#x}");
                if let Direct::Rdma(r) = op {
                    // SAFETY: both requests are RDMA ones, whose union member is `rdma`.
                    let target = |w: &sys::ibv_send_wr| unsafe { (w.wr.rdma.remote_addr, w.wr.rdma.rkey) };
                    assert_eq!(target(&direct), (r.remote_addr, r.rkey));
                    assert_eq!(target(&direct), target(&general));
                    assert_eq!(direct.send_flags, bits & !SendFlags::SOLICITED, "an RDMA op is never solicited");
                } else {
                    assert_eq!(direct.send_flags, bits, "SendFlags are ibv_send_flags");
                }
            }
        }
    }

    /// A request's slot is not reused while its completion is unread: posts are refused once
    /// the ring's worth of requests is outstanding, and allowed again once a poll read the
    /// oldest completion, which still carries its own cookie. Across counter wrap-around too.
    #[test]
    fn send_slots_are_not_reused_before_their_completion_is_read() {
        for start in [0u32, u32::MAX - 2] {
            let mut s = recv_slots(1);
            s.send = Ring::new(4);
            s.send_done.store(start, Ordering::Relaxed);
            let n = s.send.len() as u32;
            for k in 0..n {
                let c = start.wrapping_add(k);
                assert!(s.send_slot_free(c as u64).is_ok(), "post {k} of {n}");
                let slot = s.send.at(c as u64);
                slot.wr_id.store(500 + k as u64, Ordering::Relaxed);
                slot.info.store(slot_info(OP_SEND, 0, 8), Ordering::Relaxed);
            }
            let full = start.wrapping_add(n) as u64;
            let e = s.send_slot_free(full).expect_err("the ring is full");
            assert_eq!(e.0 & 0xffff_0000, DatError::insufficient(DAT_RESOURCE_TEP).0 & 0xffff_0000);
            let wc = sys::ibv_wc { wr_id: KIND_SEND | start as u64, opcode: 0, ..device_wc(0, sys::IBV_WC_SUCCESS) };
            assert_eq!(s.complete(&wc).map(|w| (w.wr_id, w.byte_len)), Some((500, 8)));
            assert!(s.send_slot_free(full).is_ok(), "room again once the oldest completion was read");
        }
    }

    /// The usual completions' inlined translation gives what the full one
    /// ([`Slots::complete_rare`]) gives, for every opcode and receive kind, and both leave
    /// the counters alike; the rest (failures, split-read fragments, datagram receives) goes
    /// the full way.
    #[test]
    fn the_inlined_completion_agrees_with_the_full_one() {
        let key = |w: Option<WorkCompletion>| w.map(|w| (w.wr_id, w.context, w.status, w.opcode, w.immed, w.byte_len));
        let counters = |s: &Slots| (s.recv_done.load(Ordering::Relaxed), s.send_done.load(Ordering::Relaxed));
        let sends = [OP_SEND, OP_WRITE, OP_WRITE_IMMED, OP_READ, OP_BIND, OP_FETCH_ADD, OP_CMP_SWAP];
        for (k, &op) in sends.iter().enumerate() {
            for status in [sys::IBV_WC_SUCCESS, sys::IBV_WC_WR_FLUSH_ERR, sys::IBV_WC_REM_ACCESS_ERR] {
                for rest in [0usize, 1] {
                    let make = || {
                        let mut s = recv_slots(4);
                        s.send = Ring::new(4);
                        for c in 0..2u64 {
                            let slot = s.send.at(c);
                            slot.wr_id.store(900 + k as u64, Ordering::Relaxed);
                            slot.info.store(slot_info(op, if c == 0 { rest } else { 0 }, 64 + c), Ordering::Relaxed);
                        }
                        s
                    };
                    let (a, b) = (make(), make());
                    let wc = sys::ibv_wc { wr_id: KIND_SEND, opcode: 0, imm_data: 5, ..device_wc(0, status) };
                    assert_eq!(
                        key(a.complete(&wc)),
                        key(b.complete_rare(&wc, |_| {})),
                        "op {op} status {status} rest {rest}"
                    );
                    assert_eq!(counters(&a), counters(&b));
                    assert_eq!(a.send.at(1).info.load(Ordering::Relaxed), b.send.at(1).info.load(Ordering::Relaxed));
                }
            }
        }
        let receives = [
            (128, 0, 0),                                               // plain receive
            (128, sys::IBV_WC_WITH_IMM, 9),                            // send with immediate data
            (sys::IBV_WC_RECV_RDMA_WITH_IMM, sys::IBV_WC_WITH_IMM, 9), // RDMA write with immediate data
        ];
        for datagram in [false, true] {
            for (opcode, wc_flags, imm_data) in receives {
                for status in [sys::IBV_WC_SUCCESS, sys::IBV_WC_WR_FLUSH_ERR] {
                    let make = || {
                        let mut s = recv_slots(4);
                        s.datagram = datagram;
                        post(&s, 0);
                        post(&s, 1);
                        s
                    };
                    let (a, b) = (make(), make());
                    let wc = sys::ibv_wc { opcode, wc_flags, imm_data, src_qp: 33, ..device_wc(1, status) };
                    assert_eq!(
                        key(a.complete(&wc)),
                        key(b.complete_rare(&wc, |_| {})),
                        "receive {opcode} {wc_flags} {status}"
                    );
                    assert_eq!(counters(&a), counters(&b));
                    // A stale one (below the receives done) is dropped by both.
                    let old = device_wc(0, status);
                    assert!(a.complete(&old).is_none() && b.complete_rare(&old, |_| {}).is_none());
                }
            }
        }
    }
}
