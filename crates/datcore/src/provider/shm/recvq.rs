//! Receive queues: the per-QP one and the shared one (SRQ), with SGE validation.

use super::super::{Access, AsyncError, AsyncEvents, Sge, SharedReceiveQueue};
use super::cma::MAX_IOV;
use super::memtable::{self, Kind};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Up to [`MAX_IOV`] SGEs held by value (no allocation).
#[derive(Clone, Copy)]
pub struct SgeList {
    pub n: usize,
    pub s: [Sge; MAX_IOV],
}

impl SgeList {
    pub const EMPTY: SgeList = SgeList { n: 0, s: [Sge { addr: 0, length: 0, lkey: 0 }; MAX_IOV] };

    /// Replaces the list with `sges` (at most [`MAX_IOV`]), copying only those.
    pub fn set(&mut self, sges: &[Sge]) {
        self.n = sges.len().min(MAX_IOV);
        self.s[..self.n].copy_from_slice(&sges[..self.n]);
    }

    pub fn as_slice(&self) -> &[Sge] {
        &self.s[..self.n]
    }

    pub fn total(&self) -> u64 {
        self.as_slice().iter().map(|s| u64::from(s.length)).sum()
    }
}

/// Checks local SGEs against the memory table: each must name a live region of protection
/// domain `pd` and lie inside it; `need_write` for receive and RDMA-read sinks. Returns the
/// total length.
pub fn validate(sges: &[Sge], pd: u32, need_write: bool, max_sge: u32) -> DatResult<u64> {
    if sges.len() > max_sge as usize || sges.len() > MAX_IOV {
        return Err(DatError::invalid_arg(2));
    }
    let mut total = 0u64;
    for s in sges {
        if s.length == 0 {
            continue;
        }
        let e = match memtable::lookup_unshared(s.lkey) {
            Some(e) if e.kind == Kind::Region => e,
            _ => return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0)),
        };
        if e.pd != pd {
            return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0));
        }
        if !e.covers(s.addr, u64::from(s.length)) {
            return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0));
        }
        if need_write && !e.access.local_write {
            return Err(DatError::new(DAT_PROTECTION_VIOLATION, DAT_PROTECTION_WRITE));
        }
        total = total.checked_add(u64::from(s.length)).ok_or(DatError::new(DAT_LENGTH_ERROR, 0))?;
    }
    Ok(total)
}

/// A posted receive's check against the memory table: its total length, and the
/// [`memtable::keys_cleared`] count read before the check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    pub total: u64,
    keys_cleared: u64,
}

impl Checked {
    /// Whether the check still holds, with no second look at the table: no key was cleared
    /// since (see [`memtable::keys_cleared`] for why that suffices).
    pub fn holds(&self) -> bool {
        memtable::keys_cleared() == self.keys_cleared
    }
}

/// Checks a receive's SGEs at its post (as [`validate`], writable, of protection domain `pd`).
pub fn check_receive(sges: &[Sge], pd: u32, max_sge: u32) -> DatResult<Checked> {
    let keys_cleared = memtable::keys_cleared();
    let total = validate(sges, pd, true, max_sge)?;
    Ok(Checked { total, keys_cleared })
}

/// The right a receive's local memory needs (and an RDMA read's or atomic's local sink).
pub const LOCAL_WRITE: Access =
    Access { local_read: false, local_write: true, remote_read: false, remote_write: false, remote_atomic: false };

/// Re-checks SGEs at the moment data lands (the region may be gone since the post).
pub fn still_valid(sges: &[Sge], pd: u32, need: Access) -> bool {
    sges.iter().filter(|s| s.length > 0).all(|s| {
        memtable::lookup_unshared(s.lkey).is_some_and(|e| {
            e.kind == Kind::Region
                && e.pd == pd
                && e.covers(s.addr, u64::from(s.length))
                && (!need.local_write || e.access.local_write)
        })
    })
}

/// `i` (below twice `cap`) as an index below `cap`, without a division.
fn wrap(i: usize, cap: usize) -> usize {
    if i >= cap {
        i - cap
    } else {
        i
    }
}

/// A fixed-capacity FIFO of receives; its storage is allocated once.
pub struct RecvQueue {
    wr_ids: Vec<u64>,
    checks: Vec<Checked>,
    counts: Vec<u8>,
    sges: Vec<Sge>,
    max_sge: usize,
    head: usize,
    len: usize,
}

impl RecvQueue {
    pub fn new(cap: u32, max_sge: u32) -> RecvQueue {
        let cap = cap as usize;
        let max_sge = (max_sge as usize).clamp(1, MAX_IOV);
        RecvQueue {
            wr_ids: vec![0; cap],
            checks: vec![Checked::default(); cap],
            counts: vec![0; cap],
            sges: vec![Sge::default(); cap * max_sge],
            max_sge,
            head: 0,
            len: 0,
        }
    }

    pub fn cap(&self) -> usize {
        self.wr_ids.len()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds a receive; `checked`: its SGEs' check at the post ([`check_receive`]).
    pub fn push(&mut self, wr_id: u64, sges: &[Sge], checked: Checked) -> DatResult<()> {
        if self.len == self.cap() {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        if sges.len() > self.max_sge {
            return Err(DatError::invalid_arg(2));
        }
        let i = wrap(self.head + self.len, self.cap());
        self.wr_ids[i] = wr_id;
        self.checks[i] = checked;
        self.counts[i] = sges.len() as u8;
        self.sges[i * self.max_sge..i * self.max_sge + sges.len()].copy_from_slice(sges);
        self.len += 1;
        Ok(())
    }

    /// Takes the oldest receive: returns its work-request id and puts its SGEs in `sges` (the
    /// caller's buffer, so that no large value is copied per message).
    pub fn pop(&mut self, sges: &mut SgeList) -> Option<u64> {
        let (wr_id, s, _) = self.front()?;
        sges.set(s);
        self.skip();
        Some(wr_id)
    }

    /// The oldest receive, left in the queue: its work-request id, SGEs and check.
    pub fn front(&self) -> Option<(u64, &[Sge], Checked)> {
        if self.len == 0 {
            return None;
        }
        let i = self.head;
        let n = self.counts[i] as usize;
        Some((self.wr_ids[i], &self.sges[i * self.max_sge..i * self.max_sge + n], self.checks[i]))
    }

    /// Drops the oldest receive (one [`front`](Self::front) showed).
    pub fn skip(&mut self) {
        if self.len > 0 {
            self.head = wrap(self.head + 1, self.cap());
            self.len -= 1;
        }
    }

    /// A queue of a new capacity holding the same receives (`None` if they do not fit).
    pub fn resized(&mut self, cap: u32) -> Option<RecvQueue> {
        if (cap as usize) < self.len {
            return None;
        }
        let mut q = RecvQueue::new(cap, self.max_sge as u32);
        while let Some((wr_id, sges, checked)) = self.front() {
            let _ = q.push(wr_id, sges, checked);
            self.skip();
        }
        Some(q)
    }
}

/// A shared receive queue. An armed low watermark (`limit` above 0) is checked where queue
/// pairs take receives ([`ShmSrq::take`]): the first take that leaves fewer receives reports
/// `AsyncError::SrqLimit` and disarms it.
pub struct ShmSrq {
    pub pd: u32,
    pub max_sge: u32,
    pub q: Mutex<RecvQueue>,
    limit: AtomicU32,
    /// The context reported with the low-watermark event (the core's SRQ handle).
    limit_context: AtomicU64,
    events: Arc<dyn AsyncEvents>,
    /// A queue pair stalls on an empty SRQ: kick the progress thread at the next post.
    pub starved: AtomicBool,
    /// Its place under the device's `max_srq` (none in unit tests).
    _held: Option<super::quota::Held>,
}

impl ShmSrq {
    pub fn new(
        pd: u32,
        max_wr: u32,
        max_sge: u32,
        events: Arc<dyn AsyncEvents>,
        held: Option<super::quota::Held>,
    ) -> ShmSrq {
        ShmSrq {
            pd,
            max_sge,
            q: Mutex::new(RecvQueue::new(max_wr.max(1), max_sge)),
            limit: AtomicU32::new(0),
            limit_context: AtomicU64::new(0),
            events,
            starved: AtomicBool::new(false),
            _held: held,
        }
    }

    /// Takes the oldest receive (its SGEs go to `sges`); reports the low watermark once when
    /// fewer than the armed limit remain.
    pub fn take(&self, sges: &mut SgeList) -> Option<u64> {
        let (wr_id, left) = {
            let mut q = self.q.lock();
            (q.pop(sges)?, q.len())
        };
        let limit = self.limit.load(Ordering::Relaxed);
        if (left as u32) < limit && self.limit.compare_exchange(limit, 0, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            let context = self.limit_context.load(Ordering::Relaxed);
            tracing::debug!(context, left, limit, "shm: SRQ below its low watermark");
            self.events.async_error(AsyncError::SrqLimit { context });
        }
        Some(wr_id)
    }
}

impl SharedReceiveQueue for ShmSrq {
    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()> {
        let checked = check_receive(sges, self.pd, self.max_sge)?;
        self.q.lock().push(wr_id, sges, checked)?;
        if self.starved.load(Ordering::Acquire) && self.starved.swap(false, Ordering::AcqRel) {
            super::progress::engine().kick();
        }
        Ok(())
    }

    fn resize(&self, max_wr: u32) -> DatResult<()> {
        let mut q = self.q.lock();
        let n = q.resized(max_wr.max(1)).ok_or(DatError::invalid_state(DAT_INVALID_STATE_SRQ_IN_USE))?;
        *q = n;
        Ok(())
    }

    fn set_limit(&self, low_watermark: u32, context: u64) -> DatResult<()> {
        self.limit_context.store(context, Ordering::Relaxed);
        self.limit.store(low_watermark, Ordering::Release);
        Ok(())
    }

    fn posted(&self) -> u32 {
        self.q.lock().len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::RecordedAsyncEvents as Recorded;

    /// A receive's check at its post stops holding once any key is cleared after it: the
    /// region's deregistration, its slot's re-publication, a revocation. Then the landing looks
    /// at the table again and refuses a receive whose region went away. (Other tests clear
    /// keys concurrently, so only the direction that matters for correctness is asserted.)
    #[test]
    fn a_receive_check_stops_holding_when_a_key_is_cleared() {
        let mut buf = [0u8; 64];
        let region = memtable::Entry {
            kind: Kind::Region,
            pd: 7,
            addr: buf.as_mut_ptr() as u64,
            len: 64,
            access: Access { local_read: true, local_write: true, ..Access::default() },
            share: None,
        };
        let slot = memtable::alloc().unwrap();
        let sge = |lkey| [Sge { addr: region.addr, length: 64, lkey }];
        let clearings: [&dyn Fn() -> u32; 3] = [
            &|| {
                memtable::revoke(slot);
                memtable::publish(slot, region)
            },
            &|| memtable::publish(slot, region),
            &|| {
                memtable::free(slot);
                0
            },
        ];
        let mut lkey = memtable::publish(slot, region);
        for clear in clearings {
            let checked = check_receive(&sge(lkey), 7, 1).unwrap();
            assert_eq!(checked.total, 64);
            let old = lkey;
            lkey = clear();
            assert!(!checked.holds(), "a cleared key leaves the check holding");
            assert!(!still_valid(&sge(old), 7, Access { local_write: true, ..Access::default() }));
        }
    }

    /// The low watermark fires once, at the first take that leaves fewer receives than the
    /// limit, and not again until armed again; 0 disarms.
    #[test]
    fn srq_low_watermark_fires_once_per_arming() {
        let events = Arc::new(Recorded::default());
        let srq = ShmSrq::new(1, 8, 1, events.clone(), None);
        for i in 0..6 {
            srq.post_recv(i, &[]).unwrap();
        }
        srq.set_limit(3, 77).unwrap();
        let mut sges = SgeList::EMPTY;
        for i in 0..3 {
            assert_eq!(srq.take(&mut sges), Some(i));
            assert!(events.0.lock().is_empty(), "{} left is not below 3", 5 - i);
        }
        assert_eq!(srq.take(&mut sges), Some(3));
        assert_eq!(*events.0.lock(), vec![AsyncError::SrqLimit { context: 77 }]);
        assert_eq!(srq.take(&mut sges), Some(4));
        assert_eq!(events.0.lock().len(), 1, "disarmed after the event");
        srq.set_limit(0, 77).unwrap();
        assert_eq!(srq.take(&mut sges), Some(5));
        assert_eq!(srq.take(&mut sges), None);
        assert_eq!(events.0.lock().len(), 1, "0 disarms");
    }
}
