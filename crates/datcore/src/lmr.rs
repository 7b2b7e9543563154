//! Local memory regions (LMR): registered consumer memory.

use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::{Access, MemoryRegion, Sge};
use crate::pz::ProtectionZone;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU32, Ordering};
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
        addr >= self.start && addr.checked_add(len).is_some_and(|end| end <= self.end)
    }
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
        ia.lmrs_by_context.lock().insert(created.lmr_context, span);
        Ok(LmrCreated { handle: h, ..created })
    }

    /// True if `[addr, addr+len)` lies inside the region.
    pub fn contains(&self, addr: u64, len: u64) -> bool {
        let start = self.mr.addr();
        addr >= start && addr.checked_add(len).is_some_and(|end| end <= start + self.mr.length())
    }
}

/// `dat_lmr_free`: `DAT_INVALID_STATE_LMR_IN_USE` while RMRs are bound to it.
pub fn free(h: Handle) -> DatResult<()> {
    let lmr = handle::get::<LocalMemoryRegion>(h, DAT_INVALID_HANDLE_LMR)?;
    if lmr.binds.load(Ordering::SeqCst) != 0 {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_LMR_IN_USE));
    }
    handle::remove::<LocalMemoryRegion>(h);
    lmr.ia.lmrs_by_context.lock().remove(&lmr.mr.lkey());
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
    let h = ia.lmrs_by_context.lock().get(&lmr_context)?.handle;
    handle::get::<LocalMemoryRegion>(h, DAT_INVALID_HANDLE_LMR).ok().map(|l| l.arc())
}

/// `dat_lmr_sync_rdma_read` / `_write`: every segment must lie in an LMR of this IA
/// (`DAT_INVALID_PARAMETER|ARG2` otherwise). Memory is cache-coherent on the platforms we
/// support, so a full fence is all that remains.
pub fn sync_rdma(ia: &InterfaceAdapter, segments: &[Sge]) -> DatResult<()> {
    {
        let lmrs = ia.lmrs_by_context.lock();
        for s in segments {
            if !lmrs.get(&s.lkey).is_some_and(|l| l.contains(s.addr, u64::from(s.length))) {
                return Err(DatError::invalid_arg(2));
            }
        }
    }
    std::sync::atomic::fence(Ordering::SeqCst);
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
