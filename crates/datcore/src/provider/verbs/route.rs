//! Where a verbs device's asynchronous events go when they concern more than one object.
//!
//! Every IA opens its own [`DevInner`], but librdmacm gives all the IAs of a process on one
//! RDMA device the same `ibv_context`, whose async events any one IA's CM thread may read. An
//! event about an object (a QP, an SRQ, a CQ) goes to the IA owning the object (`cm.rs`:
//! the QP watch table, the SRQ's context, the CQ's `cq_context`); a device-wide event
//! (`IBV_EVENT_DEVICE_FATAL`, `RDMA_CM_EVENT_DEVICE_REMOVAL`) goes to every IA open on that
//! context, and a port's error (`IBV_EVENT_PORT_ERR`) to every IA bound to that port, through
//! the [`OPEN`] registry of this module.

use super::super::AsyncError;
use super::{sys, DevInner};
use parking_lot::Mutex;
use std::sync::{Arc, Weak};

/// Open devices by (`ibv_context` address, port). Entries of closed devices are dropped as
/// they are met.
pub struct Registry<T>(Mutex<Vec<(usize, u8, Weak<T>)>>);

impl<T> Registry<T> {
    pub const fn new() -> Self {
        Registry(Mutex::new(Vec::new()))
    }

    /// Records `dev`, open on context `ctx` and bound to `port`.
    pub fn register(&self, ctx: usize, port: u8, dev: &Arc<T>) {
        let mut open = self.0.lock();
        open.retain(|(_, _, d)| d.strong_count() > 0);
        open.push((ctx, port, Arc::downgrade(dev)));
    }

    /// A live device for which `f` holds.
    pub fn find(&self, f: impl Fn(&T) -> bool) -> Option<Arc<T>> {
        self.0.lock().iter().filter_map(|(_, _, d)| d.upgrade()).find(|d| f(d))
    }

    /// The live devices open on context `ctx` (and bound to `port`, when given).
    pub fn on(&self, ctx: usize, port: Option<u8>) -> Vec<Arc<T>> {
        let mut open = self.0.lock();
        open.retain(|(_, _, d)| d.strong_count() > 0);
        open.iter()
            .filter(|(c, p, _)| *c == ctx && port.is_none_or(|port| port == *p))
            .filter_map(|(_, _, d)| d.upgrade())
            .collect()
    }
}

/// Every verbs device (IA) open in this process.
pub static OPEN: Registry<DevInner> = Registry::new();

/// Reports device-wide error `err`, read by `dev`'s thread, to every IA open on `dev`'s
/// context (bound to `port`, when given); to `dev`'s own IA when the registry has none.
pub fn device_wide(dev: &DevInner, port: Option<u8>, err: AsyncError) {
    let all = OPEN.on(dev.ctx as usize, port);
    if all.is_empty() && port.is_none() {
        dev.async_events.async_error(err);
    }
    for d in all {
        d.async_events.async_error(err);
    }
}

/// Reports a CQ error to the IA whose device created the CQ (its `cq_context`, cq.rs), or to
/// `dev`'s own IA for a CQ without one (a queue pair's internal CQ).
///
/// # Safety
/// `cq` is the event's live CQ (alive until the event is acknowledged).
pub unsafe fn cq_error(dev: &DevInner, cq: *mut sys::ibv_cq) {
    // SAFETY: the caller's contract.
    let owner = unsafe { (*cq).cq_context } as *const DevInner;
    if owner.is_null() {
        dev.async_events.async_error(AsyncError::CqOverflow);
    } else {
        // SAFETY: a CQ's context is its device (cq.rs), which the CQ keeps alive (an Arc)
        // while the CQ, alive until the event is acknowledged, exists.
        unsafe { (*owner).async_events.async_error(AsyncError::CqOverflow) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_wide_events_reach_every_ia_on_the_context_and_port_events_those_on_the_port() {
        let reg = Registry::<u32>::new();
        let (a, b, c) = (Arc::new(1), Arc::new(2), Arc::new(3));
        reg.register(0x1000, 1, &a);
        reg.register(0x1000, 2, &b);
        reg.register(0x2000, 1, &c);
        let ids = |v: Vec<Arc<u32>>| v.iter().map(|x| **x).collect::<Vec<_>>();
        assert_eq!(ids(reg.on(0x1000, None)), vec![1, 2]);
        assert_eq!(ids(reg.on(0x1000, Some(2))), vec![2]);
        assert_eq!(ids(reg.on(0x2000, None)), vec![3]);
        drop(a);
        assert_eq!(ids(reg.on(0x1000, None)), vec![2], "a closed device is forgotten");
    }
}
