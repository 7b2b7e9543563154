//! Local memory regions (LMR): registered consumer memory.

use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::{Access, MemoryRegion, Sge};
use crate::pz::ProtectionZone;
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
        ia.lmrs_by_context.lock().insert(created.lmr_context, h);
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

/// The LMR of this IA with `lmr_context`.
pub fn by_context(ia: &InterfaceAdapter, lmr_context: u32) -> Option<Arc<LocalMemoryRegion>> {
    let h = *ia.lmrs_by_context.lock().get(&lmr_context)?;
    handle::get::<LocalMemoryRegion>(h, DAT_INVALID_HANDLE_LMR).ok().map(|l| l.arc())
}

/// `dat_lmr_sync_rdma_read` / `_write`: every segment must lie in an LMR of this IA. Memory is
/// cache-coherent on the platforms we support, so a full fence is all that remains.
pub fn sync_rdma(ia: &InterfaceAdapter, segments: &[Sge]) -> DatResult<()> {
    for s in segments {
        let ok = by_context(ia, s.lkey).is_some_and(|l| l.contains(s.addr, u64::from(s.length)));
        if !ok {
            return Err(DatError::invalid_arg(2));
        }
    }
    std::sync::atomic::fence(Ordering::SeqCst);
    Ok(())
}
