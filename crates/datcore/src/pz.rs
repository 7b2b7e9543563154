//! Protection zones (PZ): a provider protection domain.

use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::ProtectionDomain;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

pub struct ProtectionZone {
    pub ia: Arc<InterfaceAdapter>,
    pub pd: Arc<dyn ProtectionDomain>,
    /// LMRs, RMRs, EPs and SRQs in this zone; a PZ in use cannot be freed.
    pub users: AtomicU32,
}

handle::dat_object!(ProtectionZone, Pz);

impl ProtectionZone {
    /// `dat_pz_create`.
    pub fn create(ia: &Arc<InterfaceAdapter>) -> DatResult<Handle> {
        let pd = ia.device.alloc_pd()?;
        let h = handle::insert(Arc::new(ProtectionZone { ia: ia.clone(), pd, users: AtomicU32::new(0) }))?;
        ia.adopt(h);
        Ok(h)
    }

    pub fn acquire(&self) {
        self.users.fetch_add(1, Ordering::SeqCst);
    }

    pub fn release(&self) {
        self.users.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `dat_pz_free`: `DAT_INVALID_STATE_PZ_IN_USE` while anything lives in the zone.
pub fn free(h: Handle) -> DatResult<()> {
    let pz = handle::get::<ProtectionZone>(h, DAT_INVALID_HANDLE_PZ)?;
    if pz.users.load(Ordering::SeqCst) != 0 {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_PZ_IN_USE));
    }
    handle::remove::<ProtectionZone>(h);
    pz.ia.disown(h);
    Ok(())
}
