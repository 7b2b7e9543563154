//! Remote memory regions (RMR): memory windows bound to part of an LMR through an endpoint.

use crate::codes::*;
use crate::endpoint::Endpoint;
use crate::error::{DatError, DatResult};
use crate::event::{self, Event, EventData};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::lmr::{self, LocalMemoryRegion};
use crate::provider::{BindWr, MemoryWindow, Sge, WorkCompletion};
use crate::pz::ProtectionZone;
use parking_lot::Mutex;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub struct RemoteMemoryRegion {
    pub ia: Arc<InterfaceAdapter>,
    pub pz: Arc<ProtectionZone>,
    pub pz_handle: Handle,
    mw: Arc<dyn MemoryWindow>,
    binding: Mutex<Option<Binding>>,
}

/// The current binding, as `dat_rmr_query` reports it.
#[derive(Clone)]
pub struct Binding {
    pub lmr: Arc<LocalMemoryRegion>,
    pub triplet: Sge,
    pub privileges: u32,
    pub rmr_context: u32,
}

handle::dat_object!(RemoteMemoryRegion, Rmr);

impl RemoteMemoryRegion {
    /// `dat_rmr_create`.
    pub fn create(pz_handle: Handle) -> DatResult<Handle> {
        let pz = handle::get::<ProtectionZone>(pz_handle, DAT_INVALID_HANDLE_PZ)?.arc();
        let mw = pz.pd.alloc_mw()?;
        pz.acquire();
        let ia = pz.ia.clone();
        let rmr = Arc::new(RemoteMemoryRegion { ia: ia.clone(), pz, pz_handle, mw, binding: Mutex::new(None) });
        let h = handle::insert(rmr.clone()).inspect_err(|_| rmr.pz.release())?;
        ia.adopt(h);
        Ok(h)
    }

    pub fn binding(&self) -> Option<Binding> {
        self.binding.lock().clone()
    }

    fn unbind(&self) {
        if let Some(b) = self.binding.lock().take() {
            b.lmr.binds.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// `dat_rmr_bind`: binds (or, with a zero-length triplet, unbinds) the window through `ep`.
/// Returns the new rmr_context; the bind completes with an RMR bind event on the EP's request
/// EVD unless suppressed.
pub fn bind(
    rmr_handle: Handle,
    triplet: &Sge,
    privileges: u32,
    ep_handle: Handle,
    cookie: u64,
    completion_flags: u32,
) -> DatResult<u32> {
    let rmr = handle::get::<RemoteMemoryRegion>(rmr_handle, DAT_INVALID_HANDLE_RMR)?;
    let ep = handle::get::<Endpoint>(ep_handle, DAT_INVALID_HANDLE_EP)?;
    if privileges
        & !(DAT_MEM_PRIV_REMOTE_READ_FLAG
            | DAT_MEM_PRIV_REMOTE_WRITE_FLAG
            | DAT_MEM_PRIV_LOCAL_READ_FLAG
            | DAT_MEM_PRIV_LOCAL_WRITE_FLAG)
        != 0
    {
        return Err(DatError::invalid_arg(3));
    }
    if !ep.binding().pz.is_some_and(|pz| Arc::ptr_eq(&pz, &rmr.pz)) {
        return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0));
    }
    let signaled = completion_flags & DAT_COMPLETION_SUPPRESS_FLAG == 0;
    if triplet.length == 0 {
        // Unbind: a zero-length bind through the provider invalidates the old rkey
        // (as ibv_bind_mw with length 0 does).
        let Some(old) = rmr.binding() else { return Ok(0) };
        let qp = ep.connected_qp()?;
        let wr_id = ep.remember_bind(rmr_handle, cookie);
        let access = lmr::access(0);
        qp.bind_mw(&BindWr {
            wr_id,
            mw: &rmr.mw,
            mr: &old.lmr.mr,
            addr: old.triplet.addr,
            length: 0,
            access,
            signaled,
        })?;
        rmr.unbind();
        return Ok(0);
    }
    let lmr = lmr::by_context(&rmr.ia, triplet.lkey).ok_or(DatError::new(DAT_PROTECTION_VIOLATION, 0))?;
    if !Arc::ptr_eq(&lmr.pz, &rmr.pz) {
        return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0));
    }
    if !lmr.contains(triplet.addr, u64::from(triplet.length)) {
        return Err(DatError::new(DAT_LENGTH_ERROR, 0));
    }
    // Remote rights on the window need the matching local rights on the LMR.
    if privileges & DAT_MEM_PRIV_REMOTE_WRITE_FLAG != 0 && lmr.privileges & DAT_MEM_PRIV_LOCAL_WRITE_FLAG == 0 {
        return Err(DatError::new(DAT_PRIVILEGES_VIOLATION, 0));
    }
    let qp = ep.connected_qp()?;
    let wr_id = ep.remember_bind(rmr_handle, cookie);
    let rkey = qp.bind_mw(&BindWr {
        wr_id,
        mw: &rmr.mw,
        mr: &lmr.mr,
        addr: triplet.addr,
        length: u64::from(triplet.length),
        access: lmr::access(privileges),
        signaled,
    })?;
    rmr.unbind();
    lmr.binds.fetch_add(1, Ordering::SeqCst);
    *rmr.binding.lock() = Some(Binding { lmr, triplet: *triplet, privileges, rmr_context: rkey });
    Ok(rkey)
}

fn bind_event(rmr: Handle, cookie: u64, status: u32) -> Event {
    Event { number: DAT_RMR_BIND_COMPLETION_EVENT, evd: Handle::NULL, data: EventData::RmrBind { rmr, cookie, status } }
}

/// Converts a provider bind completion into an RMR bind event.
pub fn bind_completion(evd: Handle, wc: &WorkCompletion) -> Event {
    let (rmr, cookie) = handle::get::<Endpoint>(Handle(wc.context), DAT_INVALID_HANDLE_EP)
        .ok()
        .and_then(|ep| ep.take_bind(wc.wr_id))
        .unwrap_or((Handle::NULL, wc.wr_id));
    Event { evd, ..bind_event(rmr, cookie, event::dto_status(wc.status)) }
}

/// `dat_rmr_free`.
pub fn free(h: Handle) -> DatResult<()> {
    let rmr = handle::get::<RemoteMemoryRegion>(h, DAT_INVALID_HANDLE_RMR)?;
    handle::remove::<RemoteMemoryRegion>(h);
    rmr.unbind();
    rmr.ia.disown(h);
    rmr.pz.release();
    Ok(())
}
