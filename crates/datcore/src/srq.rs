//! Shared receive queues (SRQ).

use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::{Sge, SharedReceiveQueue as ProviderSrq};
use crate::pz::ProtectionZone;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

pub struct SharedReceiveQueue {
    pub ia: Arc<InterfaceAdapter>,
    pub pz: Arc<ProtectionZone>,
    pub pz_handle: Handle,
    pub srq: Arc<dyn ProviderSrq>,
    pub max_recv_iov: u32,
    limits: Mutex<SrqLimits>,
    /// EPs created with this SRQ.
    pub eps: AtomicU32,
    handle: OnceLock<Handle>,
}

#[derive(Clone, Copy, Debug)]
pub struct SrqLimits {
    pub max_recv_dtos: u32,
    pub low_watermark: u32,
}

handle::dat_object!(SharedReceiveQueue, Srq);

impl SharedReceiveQueue {
    /// `dat_srq_create`.
    pub fn create(
        ia: &Arc<InterfaceAdapter>,
        pz_handle: Handle,
        max_recv_dtos: i32,
        max_recv_iov: i32,
        low_watermark: i32,
    ) -> DatResult<Handle> {
        let pz = handle::get::<ProtectionZone>(pz_handle, DAT_INVALID_HANDLE_PZ)?.arc();
        let attr = ia.device.attr();
        if attr.max_srq == 0 {
            // The provider has no shared receive queues (ofi).
            return Err(DatError::NOT_IMPLEMENTED);
        }
        if max_recv_dtos <= 0 || max_recv_dtos as u32 > attr.max_srq_wr {
            return Err(DatError::invalid_arg(3));
        }
        if max_recv_iov <= 0 || max_recv_iov as u32 > attr.max_sge {
            return Err(DatError::invalid_arg(3));
        }
        let srq = pz.pd.create_srq(max_recv_dtos as u32, max_recv_iov as u32)?;
        pz.acquire();
        let s = Arc::new(SharedReceiveQueue {
            ia: ia.clone(),
            pz,
            pz_handle,
            srq,
            max_recv_iov: max_recv_iov as u32,
            limits: Mutex::new(SrqLimits {
                max_recv_dtos: max_recv_dtos as u32,
                low_watermark: low_watermark.max(0) as u32,
            }),
            eps: AtomicU32::new(0),
            handle: OnceLock::new(),
        });
        let h = handle::insert(s.clone()).inspect_err(|_| s.pz.release())?;
        let _ = s.handle.set(h);
        ia.adopt(h);
        Ok(h)
    }

    pub fn limits(&self) -> SrqLimits {
        *self.limits.lock()
    }

    /// `DAT_INVALID_PARAMETER|DAT_INVALID_ARG2` when `count` segments are more than one receive
    /// takes: checked by the faces before they read the consumer's triplets (as
    /// `Endpoint::check_segment_count`).
    pub fn check_segment_count(&self, count: i32) -> DatResult<()> {
        if i64::from(count) > i64::from(self.max_recv_iov) {
            return Err(DatError::invalid_arg(2));
        }
        Ok(())
    }

    /// `dat_srq_post_recv`.
    pub fn post_recv(&self, sges: &[Sge], cookie: u64) -> DatResult<()> {
        if sges.len() > self.max_recv_iov as usize {
            return Err(DatError::invalid_arg(2));
        }
        self.srq.post_recv(cookie, sges)
    }

    /// `dat_srq_resize`: never below what is posted.
    pub fn resize(&self, max_recv_dtos: i32) -> DatResult<()> {
        if max_recv_dtos <= 0 || max_recv_dtos as u32 > self.ia.device.attr().max_srq_wr {
            return Err(DatError::invalid_arg(2));
        }
        if (max_recv_dtos as u32) < self.srq.posted() {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_SRQ_IN_USE));
        }
        self.srq.resize(max_recv_dtos as u32)?;
        self.limits.lock().max_recv_dtos = max_recv_dtos as u32;
        Ok(())
    }

    /// `dat_srq_set_lw`: arms the low-watermark event, raised once on the IA's async EVD when
    /// fewer than `lw` receives are left in the SRQ (at once if that is so already) and then
    /// disarmed until set again; 0 disarms. Above `max_recv_dtos`: `DAT_INVALID_PARAMETER`.
    pub fn set_low_watermark(&self, lw: i32) -> DatResult<()> {
        let mut limits = self.limits.lock();
        if lw < 0 || lw as u32 > limits.max_recv_dtos {
            return Err(DatError::invalid_arg(2));
        }
        let context = self.handle.get().map_or(0, |h| h.0);
        let below_now = self.srq.posted() < lw as u32;
        self.srq.set_limit(if below_now { 0 } else { lw as u32 }, context)?;
        limits.low_watermark = lw as u32;
        drop(limits);
        if below_now {
            self.ia.post_async(crate::ia::WATERMARK_EVENT, Handle(context), DAT_SRQ_LOW_WATERMARK_EVENT);
        }
        Ok(())
    }
}

/// `dat_srq_free`: `DAT_INVALID_STATE_SRQ_IN_USE` while EPs use it.
pub fn free(h: Handle) -> DatResult<()> {
    let s = handle::get::<SharedReceiveQueue>(h, DAT_INVALID_HANDLE_SRQ)?;
    if s.eps.load(Ordering::SeqCst) != 0 {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_SRQ_IN_USE));
    }
    handle::remove::<SharedReceiveQueue>(h);
    s.ia.disown(h);
    s.pz.release();
    Ok(())
}
