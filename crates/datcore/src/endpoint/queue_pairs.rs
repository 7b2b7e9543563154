//! An endpoint's queue pair, reached by the posts without a lock or a reference count.
//!
//! Invariant: a queue pair installed in [`QueuePairs`] stays allocated until the `QueuePairs`
//! (its endpoint) is dropped. `dat_ep_modify` and `dat_ep_reset` replace an endpoint's queue
//! pair and `dat_ep_free` removes it while a post in another thread, or in this one (a CNO
//! upcall run from a completion the provider made in the posting thread), may be using it. A
//! replaced queue pair is therefore kept, not dropped: a post's `&dyn QueuePair` is valid for as
//! long as its borrow of the endpoint. The cost: an endpoint reset N times holds N queue pairs
//! (disconnected, in the error state) until it is freed.

use crate::provider::QueuePair;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// The current queue pair (none while the endpoint has no PZ, or once freed) and every queue
/// pair installed before it.
pub struct QueuePairs {
    /// Null, or one of `installed`'s boxes.
    current: AtomicPtr<Arc<dyn QueuePair>>,
    /// Every queue pair installed, as `Box::into_raw` pointers, freed on drop.
    installed: Mutex<Vec<*mut Arc<dyn QueuePair>>>,
}

// SAFETY: the raw pointers are owned boxes of `Arc<dyn QueuePair>`, which is `Send + Sync`;
// they are only dereferenced shared (posts) or freed on drop (exclusive access).
unsafe impl Send for QueuePairs {}
// SAFETY: as above; `installed` is behind a mutex and `current` is atomic.
unsafe impl Sync for QueuePairs {}

impl QueuePairs {
    pub fn new() -> QueuePairs {
        QueuePairs { current: AtomicPtr::new(std::ptr::null_mut()), installed: Mutex::new(Vec::new()) }
    }

    /// The current queue pair, for a post: one atomic load, no lock, no reference count.
    #[inline]
    pub fn get(&self) -> Option<&dyn QueuePair> {
        let p = self.current.load(Ordering::Acquire);
        // SAFETY: a non-null `current` is one of `installed`'s boxes, freed only when `self` is
        // dropped (module invariant), so it outlives the borrow of `self`.
        unsafe { p.as_ref() }.map(|qp| &**qp)
    }

    /// The current queue pair as an owning reference, for calls that may outlast the endpoint's
    /// borrow (connection management).
    pub fn arc(&self) -> Option<Arc<dyn QueuePair>> {
        let p = self.current.load(Ordering::Acquire);
        // SAFETY: as in `get`.
        unsafe { p.as_ref() }.cloned()
    }

    /// Makes `qp` the current queue pair (None: none); the one it replaces stays allocated.
    pub fn install(&self, qp: Option<Arc<dyn QueuePair>>) {
        let mut installed = self.installed.lock();
        let p = match qp {
            Some(qp) => {
                let p = Box::into_raw(Box::new(qp));
                installed.push(p);
                p
            }
            None => std::ptr::null_mut(),
        };
        self.current.store(p, Ordering::Release);
    }
}

impl Drop for QueuePairs {
    fn drop(&mut self) {
        for p in self.installed.get_mut().drain(..) {
            // SAFETY: from `Box::into_raw` in `install`, freed once, here; no borrow of `self`
            // (hence none of the queue pair) is left.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}
