//! Memory registration: LMRs over `fi_mr_reg`, and the 32-bit keys DAT hands out for them
//! (see the module docs of [`super`] for the mapping).

use super::super::{Access, MemoryRegion, MemoryWindow, ProtectionDomain, SharedReceiveQueue};
use super::{fail, sys, DevInner};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Slots of the key table: the low bits of a key index it.
const SLOTS: usize = 1 << 16;

/// One registered region, as the post path checks it.
struct Entry {
    /// The key (0: free).
    key: AtomicU32,
    addr: AtomicU64,
    len: AtomicU64,
    /// Local write access (a receive's or an RDMA read's sink).
    write: AtomicBool,
    /// Remote access: [`REMOTE_READ`] | [`REMOTE_WRITE`].
    remote: std::sync::atomic::AtomicU8,
    /// `fi_mr_desc` where the provider wants local descriptors (`FI_MR_LOCAL`), else NULL.
    desc: AtomicPtr<c_void>,
}

/// An IA's registered regions by key: the keys we request, and the table the post path checks
/// each segment against (libfabric's tcp checks no local keys) and takes the descriptor from,
/// with a few atomic loads per segment and no lock.
pub(crate) struct Keys {
    next: AtomicU32,
    table: Box<[Entry]>,
}

/// [`Region::remote`]: the peer may read.
pub(crate) const REMOTE_READ: u8 = 1;
/// [`Region::remote`]: the peer may write.
pub(crate) const REMOTE_WRITE: u8 = 2;

/// A registered region as a peer learns it (`FI_EP_RDM`).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub base: u64,
    pub len: u64,
    /// [`REMOTE_READ`] | [`REMOTE_WRITE`]; 0 for a key the peer does not know.
    pub remote: u8,
}

impl Region {
    /// Whether `[addr, addr + len)` lies in it with the access an RDMA read or write needs.
    pub fn allows(&self, addr: u64, len: u64, read: bool) -> bool {
        let need = if read { REMOTE_READ } else { REMOTE_WRITE };
        self.remote & need != 0
            && addr >= self.base
            && addr.checked_add(len).is_some_and(|end| end <= self.base.saturating_add(self.len))
    }
}

/// Why a segment is refused.
pub(crate) enum Refused {
    /// No region under the key covers it.
    Protection,
    /// The region lacks local write access.
    Privileges,
}

impl Keys {
    pub fn new() -> Keys {
        let table = (0..SLOTS)
            .map(|_| Entry {
                key: AtomicU32::new(0),
                addr: AtomicU64::new(0),
                len: AtomicU64::new(0),
                write: AtomicBool::new(false),
                remote: std::sync::atomic::AtomicU8::new(0),
                desc: AtomicPtr::new(std::ptr::null_mut()),
            })
            .collect();
        Keys { next: AtomicU32::new(1), table }
    }

    /// Claims a free slot for a key we ask for (never 0: DAT consumers read 0 as "no
    /// context"); None when every slot is taken.
    fn claim_requested(&self) -> Option<u32> {
        for _ in 0..SLOTS {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k != 0 && self.claim(k) {
                return Some(k);
            }
        }
        None
    }

    /// Claims `key`'s slot; false if another key holds it.
    fn claim(&self, key: u32) -> bool {
        self.table[key as usize % SLOTS].key.compare_exchange(0, key, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    fn release(&self, key: u32) {
        let e = &self.table[key as usize % SLOTS];
        e.len.store(0, Ordering::Release);
        e.desc.store(std::ptr::null_mut(), Ordering::Release);
        let _ = e.key.compare_exchange(key, 0, Ordering::AcqRel, Ordering::Relaxed);
    }

    fn publish(&self, key: u32, addr: u64, len: u64, write: bool, remote: u8, desc: *mut c_void) {
        let e = &self.table[key as usize % SLOTS];
        e.addr.store(addr, Ordering::Relaxed);
        e.write.store(write, Ordering::Relaxed);
        e.remote.store(remote, Ordering::Relaxed);
        e.desc.store(desc, Ordering::Relaxed);
        e.len.store(len, Ordering::Release);
    }

    /// The region registered under `key`, if one is.
    pub fn region(&self, key: u32) -> Option<Region> {
        let e = &self.table[key as usize % SLOTS];
        let len = e.len.load(Ordering::Acquire);
        (key != 0 && e.key.load(Ordering::Acquire) == key && len > 0).then(|| Region {
            base: e.addr.load(Ordering::Relaxed),
            len,
            remote: e.remote.load(Ordering::Relaxed),
        })
    }

    /// Checks that `[addr, addr + len)` lies in the region under `lkey` (with local write
    /// access when `write`); returns the descriptor to pass for it.
    #[inline]
    pub fn check(&self, lkey: u32, addr: u64, len: u32, write: bool) -> Result<*mut c_void, Refused> {
        let e = &self.table[lkey as usize % SLOTS];
        if e.key.load(Ordering::Acquire) != lkey || lkey == 0 {
            return Err(Refused::Protection);
        }
        let (base, size) = (e.addr.load(Ordering::Relaxed), e.len.load(Ordering::Acquire));
        let end = addr.checked_add(len as u64).ok_or(Refused::Protection)?;
        if addr < base || end > base + size {
            return Err(Refused::Protection);
        }
        if write && !e.write.load(Ordering::Relaxed) {
            return Err(Refused::Privileges);
        }
        Ok(e.desc.load(Ordering::Relaxed))
    }
}

/// A protection zone: a libfabric domain is the protection domain, so this only carries the IA.
pub struct OfiPd {
    dev: Arc<DevInner>,
}

impl OfiPd {
    pub(super) fn new(dev: &Arc<DevInner>) -> OfiPd {
        OfiPd { dev: dev.clone() }
    }
}

/// `FI_*` access bits for DAT privileges (an RDMA read's sink is written locally: FI_READ).
fn access_bits(a: Access) -> u64 {
    let mut f = sys::FI_SEND | sys::FI_RECV | sys::FI_READ | sys::FI_WRITE;
    if a.remote_read {
        f |= sys::FI_REMOTE_READ;
    }
    if a.remote_write {
        f |= sys::FI_REMOTE_WRITE;
    }
    f
}

impl ProtectionDomain for OfiPd {
    fn reg_mr(&self, addr: u64, len: u64, access: Access) -> DatResult<Arc<dyn MemoryRegion>> {
        let d = &self.dev;
        if addr.checked_add(len).is_none() || len > d.attr.max_mr_size {
            return Err(DatError::new(DAT_LENGTH_ERROR, 0));
        }
        if !super::super::mapped::is_mapped(addr, len, access.needs_write()) {
            return Err(DatError::new(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
        }
        let Some(want) = d.mr_keys.claim_requested() else {
            tracing::warn!("ofi: every one of the IA's {SLOTS} memory keys is in use");
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY_REGION));
        };
        let mut mr = std::ptr::null_mut();
        // SAFETY: a live domain; the range is mapped (checked above) and stays the consumer's.
        let r = unsafe {
            ((*(*d.domain).mr).reg)(
                d.domain.cast(),
                addr as *const c_void,
                len as usize,
                access_bits(access),
                0,
                want as u64,
                0,
                &mut mr,
                std::ptr::null_mut(),
            )
        };
        if r != 0 {
            d.mr_keys.release(want);
            return Err(fail(d.lib, "fi_mr_reg", r as isize, DatError::insufficient(DAT_RESOURCE_MEMORY_REGION)));
        }
        // SAFETY: a live MR.
        let (key, desc) = unsafe { ((*mr).key, (*mr).mem_desc) };
        let key = match u32::try_from(key) {
            Ok(k) if k == want => k,
            Ok(k) if k != 0 && d.mr_keys.claim(k) => {
                // The provider chose the key (FI_MR_PROV_KEY).
                d.mr_keys.release(want);
                k
            }
            _ => {
                tracing::warn!("ofi: the provider chose key {key:#x}, which DAT's 32-bit contexts cannot carry here");
                d.mr_keys.release(want);
                // SAFETY: ours, closed once.
                unsafe { sys::FiOps::close(&mr) };
                return Err(DatError::insufficient(DAT_RESOURCE_MEMORY_REGION));
            }
        };
        let remote =
            if access.remote_read { REMOTE_READ } else { 0 } | if access.remote_write { REMOTE_WRITE } else { 0 };
        let desc = if d.mr_local { desc } else { std::ptr::null_mut() };
        d.mr_keys.publish(key, addr, len, access.local_write, remote, desc);
        Ok(Arc::new(OfiMr { dev: d.clone(), mr, key, addr, len }))
    }

    fn alloc_mw(&self) -> DatResult<Arc<dyn MemoryWindow>> {
        tracing::debug!("ofi: no memory windows: RMRs are not supported");
        Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0))
    }

    fn create_srq(&self, _max_wr: u32, _max_sge: u32) -> DatResult<Arc<dyn SharedReceiveQueue>> {
        Err(DatError::NOT_IMPLEMENTED)
    }
}

pub struct OfiMr {
    dev: Arc<DevInner>,
    mr: *mut sys::fid_mr,
    key: u32,
    addr: u64,
    len: u64,
}

// SAFETY: an MR is immutable after registration and closed once, in Drop.
unsafe impl Send for OfiMr {}
// SAFETY: as above.
unsafe impl Sync for OfiMr {}

impl MemoryRegion for OfiMr {
    fn lkey(&self) -> u32 {
        self.key
    }
    fn rkey(&self) -> u32 {
        self.key
    }
    fn addr(&self) -> u64 {
        self.addr
    }
    fn length(&self) -> u64 {
        self.len
    }
}

impl Drop for OfiMr {
    fn drop(&mut self) {
        self.dev.mr_keys.release(self.key);
        // SAFETY: the MR is live and closed once.
        let r = unsafe { sys::FiOps::close(&self.mr) };
        if r != 0 {
            tracing::warn!("ofi: closing an MR failed: {}", sys::strerror(self.dev.lib, r as isize));
        }
    }
}
