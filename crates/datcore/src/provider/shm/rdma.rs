//! RDMA write and read executed by the *initiator*: it checks the rkey against the target's
//! published memory table (mapped read-only from the target's area), then moves the bytes:
//! with one `memcpy` into or out of its own mapping of the target's memory where the target
//! registered shared memory ([`super::shared`]), else with one `process_vm_writev/readv`
//! between the two processes' buffers. The target's threads are not involved at all.
//!
//! Ordering (RC): an op runs here only when every earlier op of the same send queue has been
//! placed at the target: the request ring is drained (the target consumes a record only after
//! placing its data) and no RDMA read through the target is outstanding. Otherwise the send
//! queue waits (the ACKs that end that state come to this side's send-queue poll). A later
//! send's record is written only after this copy returned, so the target sees the data first.
//!
//! Deregistration safety: see the in-flight mark protocol in [`super::memtable`].

use super::super::{Access, Sge, WcStatus};
use super::cma::{self, MAX_IOV};
use super::memtable;
use super::qp::{Fault, Link, OpKind};
use super::recvq;
use super::shared::PeerMaps;
use std::sync::atomic::{fence, Ordering};

/// What became of an RDMA op offered to the initiator path.
pub enum Outcome {
    /// This connection cannot do it (no peer table, no cross-memory attach and no mapping of
    /// the target memory, or disabled by `DAT_SHM_TARGET_RDMA=1`): send it through the ring
    /// for the target to execute.
    Unavailable,
    /// Earlier ops are not placed yet: try again later.
    NotYet,
    /// Done, with this status.
    Done(WcStatus),
}

/// Whether `DAT_SHM_TARGET_RDMA=1` asks for target-executed RDMA (to measure and test it).
fn target_executes() -> bool {
    static V: std::sync::LazyLock<bool> =
        std::sync::LazyLock::new(|| std::env::var_os("DAT_SHM_TARGET_RDMA").is_some_and(|v| v != "0"));
    *V
}

/// One RDMA op described by the send queue entry.
pub struct Op<'a> {
    pub kind: OpKind,
    pub remote_addr: u64,
    pub rkey: u32,
    pub total: u64,
    pub sges: &'a [Sge],
    /// The local protection domain (for re-validating a read's sink).
    pub pd: u32,
}

/// Runs `op` from the initiator if the connection allows it now.
#[inline]
pub fn execute(link: &mut Link, reads_out: u32, op: &Op<'_>) -> Result<Outcome, Fault> {
    let Some(area) = link.peer.area.as_ref().filter(|_| !target_executes()) else {
        return Ok(Outcome::Unavailable);
    };
    // SAFETY: the peer's table mapping lives as long as `area` (borrowed from the link).
    let slots = unsafe { memtable::peer_slots(area.table.ptr) };
    // Without cross-memory attach only memory we can map ourselves is ours to copy (a first
    // look; the marked lookup below decides).
    if !link.we_copy {
        match memtable::lookup_in(slots, op.rkey) {
            Some(e) if e.share.is_some() => {}
            found => {
                if found.is_none() {
                    link.peer_maps.forget(op.rkey);
                }
                return Ok(Outcome::Unavailable);
            }
        }
    }
    if reads_out > 0 || !link.tx_req.drained()? {
        return Ok(Outcome::NotYet);
    }
    let write = op.kind == OpKind::Write;
    if op.total == 0 {
        return Ok(Outcome::Done(WcStatus::Success));
    }
    if !write && !recvq::still_valid(op.sges, op.pd, Access { local_write: true, ..Access::default() }) {
        return Ok(Outcome::Done(WcStatus::LocalProtection));
    }
    let mark = link.seg.in_flight(link.side);
    mark.store(memtable::slot_of(op.rkey) + 1, Ordering::SeqCst);
    fence(Ordering::SeqCst);
    let entry = memtable::lookup_in(slots, op.rkey);
    let allowed = entry.filter(|e| {
        e.pd == link.peer.pd
            && e.covers(op.remote_addr, op.total)
            && if write { e.access.remote_write } else { e.access.remote_read }
    });
    let moved = match allowed {
        // An entry past the end of the address space covers nothing; the peer broke the protocol.
        None if entry.is_some_and(|e| e.end().is_none()) => {
            mark.store(0, Ordering::Release);
            return Err(Fault::Malformed("a table entry past the end of the address space"));
        }
        None => Moved::Refused,
        Some(e) => copy(&mut link.peer_maps, link.peer_pid, link.we_copy, op, &e),
    };
    if entry.is_none() {
        link.peer_maps.forget(op.rkey);
    }
    mark.store(0, Ordering::Release);
    Ok(Outcome::Done(match moved {
        Moved::Refused => WcStatus::RemoteAccess,
        Moved::Unmappable => return Ok(Outcome::Unavailable),
        Moved::Copied(Ok(())) => WcStatus::Success,
        Moved::Copied(Err(e)) if e.raw_os_error() == Some(libc::ESRCH) => return Err(Fault::PeerGone),
        Moved::Copied(Err(e)) => {
            tracing::debug!("shm: cross-memory RDMA failed: {e}");
            WcStatus::LocalProtection
        }
    }))
}

/// What became of the bytes of an op whose rkey was looked up.
enum Moved {
    /// rkey, protection domain, bounds or rights refused it: nothing moved.
    Refused,
    /// Not mappable here and no cross-memory attach: the target must execute it.
    Unmappable,
    Copied(std::io::Result<()>),
}

/// Moves an allowed op's bytes: through our mapping of the peer's shared memory, else with
/// cross-memory attach. Runs under the in-flight mark, `e` being the live entry of `op.rkey`.
fn copy(maps: &mut PeerMaps, pid: i32, we_copy: bool, op: &Op<'_>, e: &memtable::Entry) -> Moved {
    let write = op.kind == OpKind::Write;
    let mut local = [(0u64, 0u64); MAX_IOV];
    let n = super::xfer::iovs(op.sges, op.total, &mut local);
    match maps.get(pid, op.rkey, e) {
        Some(mapping) => {
            // SAFETY: the local pieces were validated against our table when posted (a read's
            // sink again above); the remote range was just checked against the live entry the
            // mapping was made for, and the mark keeps it live until the copy ends (the
            // invariant on `PeerMaps`).
            unsafe { mapping.copy(op.remote_addr - e.addr, &local[..n], write) };
            Moved::Copied(Ok(()))
        }
        None if we_copy => Moved::Copied(cma::transfer(pid, &local[..n], &[(op.remote_addr, op.total)], write)),
        None => Moved::Unmappable,
    }
}
