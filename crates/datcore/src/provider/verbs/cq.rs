//! Completion queues: an `ibv_cq` on the IA's completion channel, and the progress thread that
//! re-arms a CQ (`ibv_req_notify_cq`) and wakes its EVD when the channel fires.
//!
//! `poll` is `ibv_poll_cq` into a stack array plus a translation of each `ibv_wc` through the
//! QP's slot ring (see [`super::qp::Slots`]); it takes one read lock of this CQ's QP table per
//! batch and allocates nothing. Completions the provider makes itself (receives flushed before
//! their QP existed) wait in a small software queue checked through one atomic flag.

use super::super::serve::Served;
use super::super::{CompletionQueue, Waker, WcOpcode, WcStatus, WorkCompletion};
use super::qp::{self, Slots};
use super::{fail, sys, DevInner};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::{Mutex, RwLock};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

const BATCH: usize = 16;

pub struct VerbsCq {
    pub(crate) dev: Arc<DevInner>,
    pub(crate) cq: *mut sys::ibv_cq,
    key: u64,
    waker: Arc<dyn Waker>,
    /// The QPs completing here, by QP number.
    qps: RwLock<Vec<(u32, Arc<Slots>)>>,
    soft: Mutex<VecDeque<WorkCompletion>>,
    has_soft: AtomicBool,
}

// SAFETY: ibv_cq is polled and armed through thread-safe verbs; destroyed once in Drop.
unsafe impl Send for VerbsCq {}
// SAFETY: as above.
unsafe impl Sync for VerbsCq {}

impl VerbsCq {
    pub fn new(dev: &Arc<DevInner>, min_entries: u32, waker: Arc<dyn Waker>) -> DatResult<Arc<VerbsCq>> {
        if min_entries > dev.attr.max_cqe {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        let key = dev.key();
        // SAFETY: live context and channel; the CQ is destroyed in Drop.
        let cq = unsafe {
            (dev.lib.ibv_create_cq)(dev.ctx, min_entries.max(1) as i32, key as usize as *mut _, dev.comp_channel, 0)
        };
        if cq.is_null() {
            let e = sys::errno();
            return Err(fail("ibv_create_cq", e, DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        let c = Arc::new(VerbsCq {
            dev: dev.clone(),
            cq,
            key,
            waker,
            qps: RwLock::new(Vec::new()),
            soft: Mutex::new(VecDeque::new()),
            has_soft: AtomicBool::new(false),
        });
        dev.cqs.lock().insert(key, Arc::downgrade(&c));
        c.arm();
        Ok(c)
    }

    fn arm(&self) {
        // SAFETY: live CQ; the op slot is what ibv_req_notify_cq calls.
        unsafe {
            if let Some(f) = (*(*self.cq).context).ops.req_notify_cq {
                f(self.cq, 0);
            }
        }
    }

    fn wake(&self) {
        if self.waker.wants_wake() {
            self.waker.wake();
        }
    }

    pub fn attach(&self, qpn: u32, slots: Arc<Slots>) {
        self.qps.write().push((qpn, slots));
    }

    pub fn detach(&self, qpn: u32) {
        self.qps.write().retain(|(n, _)| *n != qpn);
    }

    /// Queues a completion made in software and wakes the EVD.
    pub fn push_soft(&self, wc: WorkCompletion) {
        self.soft.lock().push_back(wc);
        self.has_soft.store(true, Ordering::Release);
        self.waker.wake();
    }
}

impl Drop for VerbsCq {
    fn drop(&mut self) {
        self.dev.cqs.lock().remove(&self.key);
        // SAFETY: no QP uses this CQ any more (they hold Arcs to it); destroyed once.
        let r = unsafe { (self.dev.lib.ibv_destroy_cq)(self.cq) };
        if r != 0 {
            tracing::warn!("verbs: ibv_destroy_cq failed: {}", sys::errno_str(sys::err_of(r)));
        }
    }
}

pub fn status(s: u32) -> WcStatus {
    match s {
        sys::IBV_WC_SUCCESS => WcStatus::Success,
        sys::IBV_WC_WR_FLUSH_ERR => WcStatus::Flushed,
        sys::IBV_WC_LOC_LEN_ERR => WcStatus::LocalLength,
        sys::IBV_WC_LOC_PROT_ERR | sys::IBV_WC_LOC_ACCESS_ERR => WcStatus::LocalProtection,
        sys::IBV_WC_MW_BIND_ERR => WcStatus::BindFailure,
        sys::IBV_WC_BAD_RESP_ERR => WcStatus::BadResponse,
        sys::IBV_WC_REM_ACCESS_ERR => WcStatus::RemoteAccess,
        sys::IBV_WC_REM_OP_ERR | sys::IBV_WC_REM_INV_REQ_ERR => WcStatus::RemoteOperation,
        sys::IBV_WC_RETRY_EXC_ERR => WcStatus::TransportRetry,
        sys::IBV_WC_RNR_RETRY_EXC_ERR => WcStatus::ReceiverNotReady,
        _ => WcStatus::LocalOperation,
    }
}

impl CompletionQueue for VerbsCq {
    fn poll(&self, out: &mut [WorkCompletion]) -> usize {
        let mut n = 0;
        if self.has_soft.load(Ordering::Acquire) {
            let mut s = self.soft.lock();
            while n < out.len() {
                match s.pop_front() {
                    Some(wc) => {
                        out[n] = wc;
                        n += 1;
                    }
                    None => break,
                }
            }
            if s.is_empty() {
                self.has_soft.store(false, Ordering::Release);
            }
        }
        let mut wcs = [sys::ibv_wc::ZERO; BATCH];
        // SAFETY: live CQ; poll_cq is the op slot ibv_poll_cq calls.
        let poll_cq = unsafe { (*(*self.cq).context).ops.poll_cq };
        let Some(poll_cq) = poll_cq else { return n };
        while n < out.len() {
            let want = (out.len() - n).min(BATCH);
            // SAFETY: `wcs` has room for `want` entries.
            let got = unsafe { poll_cq(self.cq, want as i32, wcs.as_mut_ptr()) };
            if got <= 0 {
                break;
            }
            let qps = self.qps.read();
            for wc in &wcs[..got as usize] {
                let Some((_, slots)) = qps.iter().find(|(q, _)| *q == wc.qp_num) else { continue };
                if let Some(c) = slots.complete(wc) {
                    out[n] = c;
                    n += 1;
                }
            }
            drop(qps);
            if (got as usize) < want {
                break;
            }
        }
        n
    }

    fn resize(&self, min_entries: u32) -> DatResult<()> {
        if min_entries > self.dev.attr.max_cqe {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        // SAFETY: live CQ.
        let r = unsafe { (self.dev.lib.ibv_resize_cq)(self.cq, min_entries.max(1) as i32) };
        if r != 0 {
            let e = sys::err_of(r);
            if e == libc::EOPNOTSUPP || e == libc::ENOSYS {
                // Some devices cannot resize; a CQ at least as large is fine.
                // SAFETY: live CQ.
                if unsafe { (*self.cq).cqe } as u32 >= min_entries {
                    return Ok(());
                }
            }
            return Err(fail("ibv_resize_cq", e, DatError::invalid_state(0)));
        }
        Ok(())
    }
}

/// A completion for a receive flushed before it reached a QP.
pub fn flushed_recv(wr_id: u64, context: u64) -> WorkCompletion {
    WorkCompletion { wr_id, context, status: WcStatus::Flushed, opcode: WcOpcode::Recv, byte_len: 0 }
}

/// Starts the progress thread of a device: waits on the completion channel, acknowledges,
/// re-arms and wakes.
pub fn start(dev: &Arc<DevInner>) -> DatResult<JoinHandle<()>> {
    let d = dev.clone();
    std::thread::Builder::new().name("dat-verbs-cq".into()).spawn(move || progress(d)).map_err(|e| {
        tracing::warn!("verbs: cannot start progress thread: {e}");
        DatError::insufficient(DAT_RESOURCE_MEMORY)
    })
}

fn progress(dev: Arc<DevInner>) {
    // SAFETY: the channel lives as long as `dev`.
    let fd = unsafe { (*dev.comp_channel).fd };
    qp::set_nonblock(fd);
    let mut served = Served::new("dat-verbs-cq");
    while !dev.stop.load(Ordering::Relaxed) {
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, 100) };
        if r <= 0 {
            continue;
        }
        served.iteration(&*dev.async_events, || wake_ready_cqs(&dev));
    }
}

/// Acknowledges every pending completion-channel event, re-arms its CQ and wakes its waiters.
fn wake_ready_cqs(dev: &DevInner) {
    loop {
        let mut cq = std::ptr::null_mut();
        let mut ctx = std::ptr::null_mut();
        // SAFETY: live channel; non-blocking fd, so EAGAIN ends the loop.
        if unsafe { (dev.lib.ibv_get_cq_event)(dev.comp_channel, &mut cq, &mut ctx) } != 0 {
            break;
        }
        let c = dev.cqs.lock().get(&(ctx as usize as u64)).and_then(|w| w.upgrade());
        // SAFETY: `cq` came from the event; ibv_destroy_cq waits for this acknowledgement,
        // so the CQ is alive here even if its owner is dropping it.
        unsafe { (dev.lib.ibv_ack_cq_events)(cq, 1) };
        if let Some(c) = c {
            c.arm();
            c.wake();
        }
    }
}
