//! Local memory regions (LMR): registered consumer memory.

use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::{Access, MemoryRegion, Sge};
use crate::pz::ProtectionZone;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

pub struct LocalMemoryRegion {
    pub ia: Arc<InterfaceAdapter>,
    pub pz: Arc<ProtectionZone>,
    pub pz_handle: Handle,
    pub mr: Arc<dyn MemoryRegion>,
    pub mem_type: u32,
    pub privileges: u32,
    /// RMRs currently bound to this LMR.
    pub binds: AtomicU32,
}

handle::dat_object!(LocalMemoryRegion, Lmr);

/// An IA's LMRs by lmr_context (lkey): each one's handle and the span it registered, fixed for
/// its life, so `dat_lmr_sync_rdma_*` checks a segment under the table's lock alone.
pub type LmrsByContext = HashMap<u32, LmrSpan, BuildHasherDefault<ContextHasher>>;

/// An IA's LMR table: the LMRs by lmr_context, and the one a sync found last.
#[derive(Default)]
pub struct LmrTable {
    by_context: Mutex<LmrsByContext>,
    last_synced: LastSynced,
}

/// The LMR a `dat_lmr_sync_rdma_*` found last, so the next sync of the same region (an
/// RDMA-write ping-pong's, once per message) checks its segment without the table's lock. A
/// sequence lock: `seq` is odd while an entry is written, and writers hold the table's lock
/// (so there is one at a time); a reader that sees `seq` odd or changed across its reads
/// takes the table instead. The entry is cleared when its LMR leaves the table, so it never
/// holds a freed region.
#[derive(Default)]
struct LastSynced {
    seq: AtomicU64,
    /// The lmr_context with [`LastSynced::VALID`] set; 0 when empty.
    key: AtomicU64,
    start: AtomicU64,
    end: AtomicU64,
}

impl LastSynced {
    const VALID: u64 = 1 << 32;

    /// Whether the entry's LMR has `lmr_context` and holds `[addr, addr+len)`; None if the
    /// entry is of another LMR, empty, or being written.
    #[inline]
    fn holds(&self, lmr_context: u32, addr: u64, len: u64) -> Option<bool> {
        let seq = self.seq.load(Ordering::Acquire);
        let key = self.key.load(Ordering::Relaxed);
        let (start, end) = (self.start.load(Ordering::Relaxed), self.end.load(Ordering::Relaxed));
        fence(Ordering::Acquire);
        if seq & 1 != 0 || self.seq.load(Ordering::Relaxed) != seq || key != (Self::VALID | u64::from(lmr_context)) {
            return None;
        }
        Some(range_holds(start, end, addr, len))
    }

    /// Makes the entry `span` of `lmr_context` (None: empty). The caller holds the table's lock.
    fn set(&self, entry: Option<(u32, &LmrSpan)>) {
        let seq = self.seq.load(Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        let (key, start, end) = match entry {
            Some((lmr_context, span)) => (Self::VALID | u64::from(lmr_context), span.start, span.end),
            None => (0, 0, 0),
        };
        self.key.store(key, Ordering::Relaxed);
        self.start.store(start, Ordering::Relaxed);
        self.end.store(end, Ordering::Relaxed);
        self.seq.store(seq.wrapping_add(2), Ordering::Release);
    }
}

impl LmrTable {
    fn insert(&self, lmr_context: u32, span: LmrSpan) {
        self.by_context.lock().insert(lmr_context, span);
    }

    fn remove(&self, lmr_context: u32) {
        let mut lmrs = self.by_context.lock();
        lmrs.remove(&lmr_context);
        if self.last_synced.key.load(Ordering::Relaxed) == LastSynced::VALID | u64::from(lmr_context) {
            self.last_synced.set(None);
        }
    }

    fn handle(&self, lmr_context: u32) -> Option<Handle> {
        Some(self.by_context.lock().get(&lmr_context)?.handle)
    }

    /// Whether `[addr, addr+len)` lies in the LMR with `lmr_context`: the last synced one
    /// without the lock, else the table (which then makes that LMR the last synced).
    fn holds(&self, lmr_context: u32, addr: u64, len: u64) -> bool {
        if let Some(held) = self.last_synced.holds(lmr_context, addr, len) {
            return held;
        }
        self.holds_looked_up(lmr_context, addr, len)
    }

    #[cold]
    #[inline(never)]
    fn holds_looked_up(&self, lmr_context: u32, addr: u64, len: u64) -> bool {
        let lmrs = self.by_context.lock();
        let Some(span) = lmrs.get(&lmr_context) else { return false };
        self.last_synced.set(Some((lmr_context, span)));
        span.contains(addr, len)
    }
}

/// An LMR in [`LmrsByContext`].
#[derive(Clone, Copy, Debug)]
pub struct LmrSpan {
    pub handle: Handle,
    start: u64,
    end: u64,
}

impl LmrSpan {
    /// True if `[addr, addr+len)` lies inside the span.
    fn contains(&self, addr: u64, len: u64) -> bool {
        range_holds(self.start, self.end, addr, len)
    }
}

/// True if `[addr, addr+len)` lies inside `[start, end)` (a length that wraps never does).
fn range_holds(start: u64, end: u64, addr: u64, len: u64) -> bool {
    addr >= start && addr.checked_add(len).is_some_and(|last| last <= end)
}

/// Hashes an lmr_context with one multiply: std's default (SipHash) costs more than the rest
/// of a `dat_lmr_sync_rdma_write`, which consumers such as RDMA-write ping-pongs call per
/// message. The keys are the device's, not an attacker's.
#[derive(Default)]
pub struct ContextHasher(u64);

impl Hasher for ContextHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        // Fibonacci hashing; rotated so the low bits (the bucket) come from the product's
        // well-mixed middle.
        self.0 = (u64::from(n) ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(26);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Provider access rights for DAT memory privileges.
pub fn access(privileges: u32) -> Access {
    Access {
        local_read: privileges & DAT_MEM_PRIV_LOCAL_READ_FLAG != 0,
        local_write: privileges & DAT_MEM_PRIV_LOCAL_WRITE_FLAG != 0,
        remote_read: privileges & DAT_MEM_PRIV_REMOTE_READ_FLAG != 0,
        remote_write: privileges & DAT_MEM_PRIV_REMOTE_WRITE_FLAG != 0,
        remote_atomic: privileges & DAT_IB_MEM_PRIV_REMOTE_ATOMIC != 0,
    }
}

/// Everything `dat_lmr_create` hands back.
pub struct LmrCreated {
    pub handle: Handle,
    pub lmr_context: u32,
    pub rmr_context: u32,
    pub registered_length: u64,
    pub registered_address: u64,
}

impl LocalMemoryRegion {
    /// `dat_lmr_create` for a virtual address range (the face resolves `DAT_MEM_TYPE_LMR`
    /// to the source LMR's range before calling).
    pub fn create(
        ia: &Arc<InterfaceAdapter>,
        pz_handle: Handle,
        mem_type: u32,
        addr: u64,
        length: u64,
        privileges: u32,
    ) -> DatResult<LmrCreated> {
        let pz = handle::get::<ProtectionZone>(pz_handle, DAT_INVALID_HANDLE_PZ)?.arc();
        if !Arc::ptr_eq(&pz.ia, ia) {
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_PZ));
        }
        if privileges & !(DAT_MEM_PRIV_ALL_FLAG | DAT_IB_MEM_PRIV_REMOTE_ATOMIC) != 0 {
            return Err(DatError::invalid_arg(6));
        }
        if length == 0 || length > ia.device.attr().max_mr_size {
            return Err(DatError::new(DAT_LENGTH_ERROR, 0));
        }
        if addr == 0 || addr.checked_add(length).is_none() {
            return Err(DatError::invalid_arg(3));
        }
        let mr = pz.pd.reg_mr(addr, length, access(privileges))?;
        let created = LmrCreated {
            handle: Handle::NULL,
            lmr_context: mr.lkey(),
            rmr_context: mr.rkey(),
            registered_length: mr.length(),
            registered_address: mr.addr(),
        };
        pz.acquire();
        let lmr = Arc::new(LocalMemoryRegion {
            ia: ia.clone(),
            pz,
            pz_handle,
            mr,
            mem_type,
            privileges,
            binds: AtomicU32::new(0),
        });
        let h = handle::insert(lmr.clone()).inspect_err(|_| lmr.pz.release())?;
        ia.adopt(h);
        let span = LmrSpan { handle: h, start: created.registered_address, end: addr_end(&created) };
        ia.lmrs.insert(created.lmr_context, span);
        Ok(LmrCreated { handle: h, ..created })
    }

    /// True if `[addr, addr+len)` lies inside the region.
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        let start = self.mr.addr();
        range_holds(start, start.saturating_add(self.mr.length()), addr, len)
    }
}

/// `dat_lmr_free`: `DAT_INVALID_STATE_LMR_IN_USE` while RMRs are bound to it.
pub fn free(h: Handle) -> DatResult<()> {
    let lmr = handle::get::<LocalMemoryRegion>(h, DAT_INVALID_HANDLE_LMR)?;
    if lmr.binds.load(Ordering::SeqCst) != 0 {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_LMR_IN_USE));
    }
    handle::remove::<LocalMemoryRegion>(h);
    lmr.ia.lmrs.remove(lmr.mr.lkey());
    lmr.ia.disown(h);
    lmr.pz.release();
    Ok(())
}

/// The end of the span `dat_lmr_create` registered.
fn addr_end(created: &LmrCreated) -> u64 {
    created.registered_address.saturating_add(created.registered_length)
}

/// The LMR of this IA with `lmr_context`.
pub fn by_context(ia: &InterfaceAdapter, lmr_context: u32) -> Option<Arc<LocalMemoryRegion>> {
    let h = ia.lmrs.handle(lmr_context)?;
    handle::get::<LocalMemoryRegion>(h, DAT_INVALID_HANDLE_LMR).ok().map(|l| l.arc())
}

/// `dat_lmr_sync_rdma_read` / `_write`: every segment must lie in an LMR of this IA
/// (`DAT_INVALID_PARAMETER|ARG2` otherwise). Memory is cache-coherent on the platforms we
/// support, so a full fence is all that remains.
///
/// Inlined into the face's exports: the usual sync, one segment in the last synced LMR,
/// checks without the table's lock; any other takes [`sync_rdma_looked_up`].
#[inline]
pub fn sync_rdma(ia: &InterfaceAdapter, segments: &[Sge]) -> DatResult<()> {
    let last = &ia.lmrs.last_synced;
    let usual = match segments {
        [s] => last.holds(s.lkey, s.addr, u64::from(s.length)) == Some(true),
        _ => false,
    };
    if !usual {
        return sync_rdma_looked_up(ia, segments);
    }
    fence(Ordering::SeqCst);
    Ok(())
}

/// [`sync_rdma`] of anything but one segment in the last synced LMR: each segment checked,
/// in the table where the last synced LMR does not answer.
#[cold]
#[inline(never)]
fn sync_rdma_looked_up(ia: &InterfaceAdapter, segments: &[Sge]) -> DatResult<()> {
    for s in segments {
        if !ia.lmrs.holds(s.lkey, s.addr, u64::from(s.length)) {
            return Err(DatError::invalid_arg(2));
        }
    }
    fence(Ordering::SeqCst);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A span holds exactly the segments inside it: at either edge, and not one byte past
    /// (nor a length that wraps around).
    #[test]
    fn a_span_holds_exactly_its_segments() {
        let span = LmrSpan { handle: Handle::NULL, start: 0x1000, end: 0x2000 };
        assert!(span.contains(0x1000, 0x1000), "all of it");
        assert!(span.contains(0x1fff, 1), "its last byte");
        assert!(span.contains(0x2000, 0), "empty, at its end");
        assert!(!span.contains(0xfff, 1), "the byte before");
        assert!(!span.contains(0x1fff, 2), "one byte past");
        assert!(!span.contains(0x1800, u64::MAX), "a wrapping length");
    }

    /// The last synced LMR answers for its own region only, is forgotten when its LMR leaves
    /// the table (its lmr_context then fails even though it was the last synced), and a new LMR
    /// of the same lmr_context is checked against its own span.
    #[test]
    fn the_last_synced_lmr_answers_for_its_region_only() {
        let table = LmrTable::default();
        let span = |start, end| LmrSpan { handle: Handle::NULL, start, end };
        table.insert(7, span(0x1000, 0x2000));
        table.insert(8, span(0x8000, 0x9000));
        for _ in 0..2 {
            assert!(table.holds(7, 0x1800, 0x10), "inside 7");
            assert!(!table.holds(7, 0x1ff0, 0x20), "past 7's end");
            assert!(table.holds(8, 0x8000, 0x1000), "all of 8");
            assert!(!table.holds(9, 0x8000, 1), "no LMR 9");
        }
        assert!(table.holds(7, 0x1000, 1));
        table.remove(7);
        assert!(!table.holds(7, 0x1000, 1), "7 freed after its sync");
        table.insert(7, span(0x3000, 0x4000));
        assert!(!table.holds(7, 0x1000, 1), "the old 7's region");
        assert!(table.holds(7, 0x3000, 0x1000), "the new 7's region");
    }

    /// While one thread frees and re-creates lmr_context 7 over two regions and syncs each,
    /// another's syncs never see a mix of the two (a start from one and an end from the
    /// other would hold the gap between them).
    #[test]
    fn a_sync_never_sees_a_half_written_entry() {
        let table = Arc::new(LmrTable::default());
        let span = |start, end| LmrSpan { handle: Handle::NULL, start, end };
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (table, done) = (table.clone(), done.clone());
            std::thread::spawn(move || {
                for i in 0..200_000 {
                    let (start, end) = if i % 2 == 0 { (0x1000, 0x2000) } else { (0x3000, 0x4000) };
                    table.insert(7, span(start, end));
                    assert!(table.holds(7, start, 1));
                    table.remove(7);
                }
                done.store(true, Ordering::Release);
            })
        };
        let mut looks = 0u64;
        while !done.load(Ordering::Acquire) {
            assert!(!table.holds(7, 0x2800, 1), "a sync held the gap between the two regions");
            looks += 1;
        }
        writer.join().unwrap();
        assert!(looks > 0);
    }

    /// The table finds every context among many whose low bits are alike (rxe's lkeys
    /// differ in their index above the low byte), and no other.
    #[test]
    fn the_context_table_finds_each_lmr() {
        let mut lmrs = LmrsByContext::default();
        let key = |i: u32| (i << 8) | 0x5a;
        for i in 0..4096 {
            lmrs.insert(key(i), LmrSpan { handle: Handle::NULL, start: u64::from(i), end: u64::from(i) + 1 });
        }
        for i in 0..4096 {
            assert_eq!(lmrs.get(&key(i)).map(|l| l.start), Some(u64::from(i)));
        }
        assert!(!lmrs.contains_key(&0x5b));
        let hash = |k: u32| {
            let mut h = ContextHasher::default();
            h.write_u32(k);
            h.finish()
        };
        let buckets: std::collections::HashSet<u64> = (0..4096).map(|i| hash(key(i)) & 4095).collect();
        assert!(buckets.len() > 2048, "lkeys spread over the buckets: {} of 4096", buckets.len());
    }
}
