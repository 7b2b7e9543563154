//! An endpoint's queue pair, reached by the posts without a lock or a reference count.
//!
//! Invariant: a queue pair installed in [`QueuePairs`] stays allocated until the `QueuePairs`
//! (its endpoint) is dropped. `dat_ep_modify` and `dat_ep_reset` replace an endpoint's queue
//! pair and `dat_ep_free` removes it while a post in another thread, or in this one (a CNO
//! upcall run from a completion the provider made in the posting thread), may be using it. A
//! replaced queue pair is therefore kept, not dropped: a post's `&dyn QueuePair` is valid for as
//! long as its borrow of the endpoint.
//!
//! Replaced queue pairs are released early when nothing can still use them
//! ([`QueuePairs::release_replaced`]): every borrow from [`QueuePairs::get`] is taken inside a
//! call made through the endpoint's handle, which holds one use of the handle's slot for the
//! whole call (the face's lookup). So once `dat_ep_reset` or `dat_ep_modify`, itself holding one
//! use, has installed the new queue pair and then counts no other use, no post is in flight on
//! an old one, and every later post reads the new one (`handle::uses` orders the two). A reset
//! that races with posts in other threads, or runs from a CNO upcall inside a post, leaves the
//! old ones for the next reset or for `dat_ep_free`.

use crate::provider::QueuePair;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Arc;

/// The current queue pair (none while the endpoint has no PZ, or once freed) and every queue
/// pair installed before it.
pub struct QueuePairs {
    /// Null, or one of `installed`'s boxes.
    current: AtomicPtr<Installed>,
    /// Every queue pair installed, as `Box::into_raw` pointers, freed on drop.
    installed: Mutex<Vec<*mut Installed>>,
}

/// One installed queue pair: its owning reference and, for the posts, its address (so a post
/// reads the object's address instead of computing it from the `Arc`'s allocation).
struct Installed {
    owner: Arc<dyn QueuePair>,
    /// `Arc::as_ptr(&owner)`.
    object: *const dyn QueuePair,
}

// SAFETY: the raw pointers are owned boxes of `Installed`, whose queue pair is `Send + Sync`;
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
        // dropped (module invariant), so it and the queue pair its `owner` keeps outlive the
        // borrow of `self`.
        unsafe { p.as_ref().map(|installed| &*installed.object) }
    }

    /// The current queue pair as an owning reference, for calls that may outlast the endpoint's
    /// borrow (connection management).
    pub fn arc(&self) -> Option<Arc<dyn QueuePair>> {
        let p = self.current.load(Ordering::Acquire);
        // SAFETY: as in `get`.
        unsafe { p.as_ref() }.map(|installed| installed.owner.clone())
    }

    /// Makes `qp` the current queue pair (None: none); the one it replaces stays allocated.
    pub fn install(&self, qp: Option<Arc<dyn QueuePair>>) {
        let mut installed = self.installed.lock();
        let p = match qp {
            Some(owner) => {
                let object = Arc::as_ptr(&owner);
                let p = Box::into_raw(Box::new(Installed { owner, object }));
                installed.push(p);
                p
            }
            None => std::ptr::null_mut(),
        };
        self.current.store(p, Ordering::Release);
    }

    /// Drops every queue pair but the current one. The caller guarantees that no borrow from
    /// [`get`](Self::get) taken before the last [`install`](Self::install) is still alive (see
    /// the module comment for how the endpoint knows).
    pub fn release_replaced(&self) {
        let current = self.current.load(Ordering::Acquire);
        let replaced: Vec<_> = {
            let mut installed = self.installed.lock();
            let (keep, replaced) = installed.drain(..).partition(|&p| p == current);
            *installed = keep;
            replaced
        };
        for p in replaced {
            // SAFETY: from `Box::into_raw` in `install`, removed from `installed` above so freed
            // once; no borrow of it is alive (the caller's guarantee).
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

#[cfg(test)]
impl QueuePairs {
    /// How many queue pairs are allocated (the current one included).
    pub fn allocated(&self) -> usize {
        self.installed.lock().len()
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
