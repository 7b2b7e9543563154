//! The limits the device reports, enforced: a count per kind of object, process-wide (every
//! shm IA of a process shares them, as they share the memory table and the wake words). An
//! object holds its [`Held`] token; dropping the object gives the place back.

use std::sync::atomic::{AtomicU32, Ordering};

pub struct Quota {
    used: AtomicU32,
    max: u32,
}

/// One place of a [`Quota`], given back on drop.
pub struct Held(&'static Quota);

impl Quota {
    pub const fn new(max: u32) -> Quota {
        Quota { used: AtomicU32::new(0), max }
    }

    pub fn max(&self) -> u32 {
        self.max
    }

    /// A place, or None when all `max` are taken.
    pub fn take(&'static self) -> Option<Held> {
        self.used.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.max).then_some(n + 1)).ok()?;
        Some(Held(self))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.used.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_up_to_max_and_gives_back_on_drop() {
        static Q: Quota = Quota::new(3);
        let held: Vec<Held> = (0..3).map(|_| Q.take().expect("below the limit")).collect();
        assert!(Q.take().is_none(), "one past the limit");
        drop(held);
        let again: Vec<Held> = (0..3).filter_map(|_| Q.take()).collect();
        assert_eq!(again.len(), 3);
    }
}
