//! Memory registration: LMRs over `fi_mr_reg`, and the 32-bit keys DAT hands out for them
//! (see the module docs of [`super`] for the mapping).

use super::super::{Access, MemoryRegion, MemoryWindow, ProtectionDomain, SharedReceiveQueue};
use super::{fail, sys, DevInner};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Arc;

/// Slots of the local-descriptor table (`FI_MR_LOCAL`): the low bits of a key index it.
const DESC_SLOTS: usize = 1 << 16;

/// An IA's key allocator and, where the provider wants local descriptors, the table from our
/// 32-bit lkey to the MR's descriptor (read on the post path with one atomic load per SGE).
pub(crate) struct Keys {
    next: AtomicU32,
    /// Present only with `FI_MR_LOCAL`.
    descs: Option<Box<[AtomicPtr<c_void>]>>,
}

impl Keys {
    pub fn new(mr_mode: i32) -> Keys {
        let descs = (mr_mode & sys::FI_MR_LOCAL != 0)
            .then(|| (0..DESC_SLOTS).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect());
        Keys { next: AtomicU32::new(1), descs }
    }

    /// A key we ask for: never 0 (DAT consumers read 0 as "no context").
    fn requested(&self) -> u32 {
        loop {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k != 0 {
                return k;
            }
        }
    }

    /// The descriptor to pass for local memory under `lkey` (NULL where none is needed).
    #[inline]
    pub fn desc(&self, lkey: u32) -> *mut c_void {
        match &self.descs {
            Some(t) => t[lkey as usize % DESC_SLOTS].load(Ordering::Acquire),
            None => std::ptr::null_mut(),
        }
    }

    fn set_desc(&self, lkey: u32, desc: *mut c_void) {
        if let Some(t) = &self.descs {
            t[lkey as usize % DESC_SLOTS].store(desc, Ordering::Release);
        }
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
        let want = d.mr_keys.requested();
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
            return Err(fail(d.lib, "fi_mr_reg", r as isize, DatError::insufficient(DAT_RESOURCE_MEMORY_REGION)));
        }
        // SAFETY: a live MR.
        let (key, desc) = unsafe { ((*mr).key, (*mr).mem_desc) };
        let Ok(key) = u32::try_from(key) else {
            tracing::warn!(
                "ofi: the provider chose a {key:#x} key, wider than DAT's 32-bit contexts: not supported yet"
            );
            // SAFETY: ours, closed once.
            unsafe { sys::FiOps::close(&mr) };
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY_REGION));
        };
        d.mr_keys.set_desc(key, desc);
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
        self.dev.mr_keys.set_desc(self.key, std::ptr::null_mut());
        // SAFETY: the MR is live and closed once.
        let r = unsafe { sys::FiOps::close(&self.mr) };
        if r != 0 {
            tracing::warn!("ofi: closing an MR failed: {}", sys::strerror(self.dev.lib, r as isize));
        }
    }
}
