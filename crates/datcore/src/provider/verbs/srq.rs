//! Shared receive queues: an `ibv_srq` plus a slot table for the consumer's cookies. SRQ
//! receives complete in any order across QPs, so slots come from a free list (per-SRQ lock).

use super::super::SharedReceiveQueue;
use super::qp::{device_sges, MAX_SGE};
use super::{fail, sys, VerbsPd};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::provider::spin::SpinLock;
use crate::provider::Sge;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

pub struct VerbsSrq {
    pub(crate) pd: Arc<VerbsPd>,
    pub(crate) srq: *mut sys::ibv_srq,
    cookies: Box<[AtomicU64]>,
    free: SpinLock<Vec<u32>>,
    posted: AtomicU32,
}

// SAFETY: ibv_srq is used through thread-safe verbs; destroyed once in Drop.
unsafe impl Send for VerbsSrq {}
// SAFETY: as above.
unsafe impl Sync for VerbsSrq {}

impl VerbsSrq {
    pub fn new(pd: Arc<VerbsPd>, max_wr: u32, max_sge: u32) -> DatResult<Arc<VerbsSrq>> {
        let dev = &pd.dev;
        if max_wr > dev.attr.max_srq_wr || max_sge as usize > MAX_SGE {
            return Err(DatError::insufficient(DAT_RESOURCE_SRQ));
        }
        let mut init = sys::ibv_srq_init_attr {
            srq_context: std::ptr::null_mut(),
            attr: sys::ibv_srq_attr { max_wr: max_wr.max(1), max_sge: max_sge.max(1), srq_limit: 0 },
        };
        sys::clear_errno();
        // SAFETY: live PD; init attr fully initialised.
        let srq = unsafe { (dev.lib.ibv_create_srq)(pd.pd, &mut init) };
        if srq.is_null() {
            let e = sys::errno();
            return Err(fail("ibv_create_srq", e, DatError::insufficient(DAT_RESOURCE_SRQ)));
        }
        // The device may round up: size the table for what it accepts.
        // The table is sized for the largest resize too, so it never moves.
        let cap = init.attr.max_wr.max(max_wr).max(dev.attr.max_srq_wr.min(1 << 16)).max(1) as usize;
        Ok(Arc::new(VerbsSrq {
            pd: pd.clone(),
            srq,
            cookies: (0..cap).map(|_| AtomicU64::new(0)).collect(),
            free: SpinLock::new((0..cap as u32).rev().collect()),
            posted: AtomicU32::new(0),
        }))
    }

    /// The consumer cookie of a completed slot; frees the slot.
    pub fn complete(&self, slot: u32) -> u64 {
        let c = self.cookies.get(slot as usize).map_or(0, |a| a.load(Ordering::Acquire));
        self.free.lock().push(slot);
        self.posted.fetch_sub(1, Ordering::Relaxed);
        c
    }
}

impl Drop for VerbsSrq {
    fn drop(&mut self) {
        // SAFETY: QPs using this SRQ hold an Arc to it, so none is left; destroyed once.
        unsafe { (self.pd.dev.lib.ibv_destroy_srq)(self.srq) };
    }
}

impl SharedReceiveQueue for VerbsSrq {
    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()> {
        let mut buf = [std::mem::MaybeUninit::uninit(); MAX_SGE];
        let (list, _) = device_sges(sges, &mut buf)?;
        let n = list.len();
        let mut free = self.free.lock();
        let Some(slot) = free.pop() else {
            return Err(DatError::insufficient(DAT_RESOURCE_SRQ));
        };
        self.cookies[slot as usize].store(wr_id, Ordering::Release);
        let mut wr = sys::ibv_recv_wr {
            wr_id: super::qp::KIND_SRQ | slot as u64,
            next: std::ptr::null_mut(),
            sg_list: list.as_ptr().cast_mut(), // only read by the device
            num_sge: n as i32,
        };
        let mut bad = std::ptr::null_mut();
        // SAFETY: live SRQ; the WR and its SGE list live across the call.
        let r = unsafe {
            match (*(*self.srq).context).ops.post_srq_recv {
                Some(f) => f(self.srq, &mut wr, &mut bad),
                None => libc::ENOSYS,
            }
        };
        if r != 0 {
            free.push(slot);
            let e = sys::err_of(r);
            return Err(fail("ibv_post_srq_recv", e, DatError::insufficient(DAT_RESOURCE_SRQ)));
        }
        self.posted.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn resize(&self, max_wr: u32) -> DatResult<()> {
        if max_wr as usize > self.cookies.len() {
            // The slot table is fixed; growing beyond it would need a new table.
            tracing::warn!("verbs: SRQ resize to {max_wr} beyond its {} slots is not supported", self.cookies.len());
            return Err(DatError::insufficient(DAT_RESOURCE_SRQ));
        }
        if max_wr < self.posted() {
            return Err(DatError::invalid_state(0));
        }
        let mut a = sys::ibv_srq_attr { max_wr: max_wr.max(1), max_sge: 0, srq_limit: 0 };
        // SAFETY: live SRQ.
        let r = unsafe { (self.pd.dev.lib.ibv_modify_srq)(self.srq, &mut a, sys::IBV_SRQ_MAX_WR) };
        if r != 0 {
            let e = sys::err_of(r);
            // Devices that cannot resize keep their (larger or equal) size.
            if e != libc::EOPNOTSUPP && e != libc::ENOSYS && e != libc::EINVAL {
                return Err(fail("ibv_modify_srq(max_wr)", e, DatError::insufficient(DAT_RESOURCE_SRQ)));
            }
            tracing::debug!("verbs: SRQ resize not supported by the device ({})", sys::errno_str(e));
        }
        Ok(())
    }

    fn set_limit(&self, low_watermark: u32, context: u64) -> DatResult<()> {
        // The device reports IBV_EVENT_SRQ_LIMIT_REACHED with the ibv_srq; its srq_context
        // carries our context to that report (cm.rs, drain_async). The core passes the same
        // context every time, so the field is written before the first arming only, while no
        // limit event can be on its way.
        // SAFETY: live SRQ; srq_context is ours (NULL at creation).
        unsafe {
            if (*self.srq).srq_context as u64 != context {
                (*self.srq).srq_context = context as *mut libc::c_void;
            }
        }
        let mut a = sys::ibv_srq_attr { max_wr: 0, max_sge: 0, srq_limit: low_watermark };
        // SAFETY: live SRQ.
        let r = unsafe { (self.pd.dev.lib.ibv_modify_srq)(self.srq, &mut a, sys::IBV_SRQ_LIMIT) };
        if r != 0 {
            let e = sys::err_of(r);
            return Err(fail("ibv_modify_srq(limit)", e, DatError::new(DAT_MODEL_NOT_SUPPORTED, 0)));
        }
        Ok(())
    }

    fn posted(&self) -> u32 {
        self.posted.load(Ordering::Relaxed)
    }
}
