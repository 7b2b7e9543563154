//! Finding a provider's own objects behind the trait objects the core hands back (a PD in
//! `QpInit`, a CQ, an SRQ, a memory window, a connection request). Keyed by the `Arc` data
//! address; holds weak references only, so a stale entry never resurrects anything. Used at
//! create / accept / bind time only, never on the post or poll path.

use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

pub(crate) struct Reg<T> {
    map: RwLock<Option<HashMap<usize, Weak<T>>>>,
}

impl<T> Reg<T> {
    pub const fn new() -> Self {
        Reg { map: RwLock::new(None) }
    }

    pub fn insert(&self, a: &Arc<T>) {
        let mut g = self.map.write();
        let m = g.get_or_insert_with(HashMap::new);
        if m.len() >= 64 && m.len().is_power_of_two() {
            m.retain(|_, w| w.strong_count() > 0);
        }
        m.insert(Arc::as_ptr(a) as *const () as usize, Arc::downgrade(a));
    }

    /// Our object behind `a`, if it is one of ours.
    pub fn get<U: ?Sized>(&self, a: &Arc<U>) -> Option<Arc<T>> {
        self.get_at(Arc::as_ptr(a) as *const ())
    }

    /// Our object at data address `p` (e.g. `self` of a registered object).
    pub fn get_at(&self, p: *const ()) -> Option<Arc<T>> {
        self.map.read().as_ref()?.get(&(p as usize))?.upgrade()
    }
}
