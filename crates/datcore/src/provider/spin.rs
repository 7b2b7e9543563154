//! A lock for state that is nearly always taken by one thread at a time and held briefly (an
//! shm queue pair's state, a completion queue's list of queue pairs, a verbs send queue's
//! counter): one atomic swap to take it, one plain release store to give it back.
//!
//! `parking_lot::Mutex` costs two locked instructions per use (a compare-and-swap at lock and
//! another at unlock, which must look for parked waiters); on the data path every post (and on
//! shm every poll) takes such a lock, and each locked instruction drains the store buffer. A waiter
//! here spins, then yields, then sleeps with a growing pause (a holder may be in a system call:
//! a connection set-up, a cross-memory copy), so nobody ever parks and the unlock needs no
//! read-modify-write.

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Spins of a waiter before it starts yielding the CPU, and yields before it starts sleeping.
const SPINS: u32 = 64;
const YIELDS: u32 = 256;
/// The longest pause between two looks of a sleeping waiter: it bounds how late a waiter
/// notices the release (a holder may copy a megabyte with `process_vm_writev` under the lock,
/// about 100 us here), so it stays near one such copy.
const MAX_PAUSE: Duration = Duration::from_micros(100);

pub struct SpinLock<T> {
    held: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and `held` lets one guard exist at a time
// (acquire at lock, release at unlock), as for a mutex.
unsafe impl<T: Send> Sync for SpinLock<T> {}
// SAFETY: as above; moving the lock moves the value.
unsafe impl<T: Send> Send for SpinLock<T> {}

pub struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
    /// Shared or sent like the `&mut T` it stands for.
    _value: PhantomData<&'a mut T>,
}

impl<T> SpinLock<T> {
    pub const fn new(value: T) -> SpinLock<T> {
        SpinLock { held: AtomicBool::new(false), value: UnsafeCell::new(value) }
    }

    pub fn lock(&self) -> SpinGuard<'_, T> {
        if self.held.swap(true, Ordering::Acquire) {
            self.lock_contended();
        }
        SpinGuard { lock: self, _value: PhantomData }
    }

    /// The lock if it is free now, without waiting.
    #[inline]
    pub fn try_lock(&self) -> Option<SpinGuard<'_, T>> {
        if self.held.swap(true, Ordering::Acquire) {
            return None; // held by another guard: no guard made here, so none released
        }
        Some(SpinGuard { lock: self, _value: PhantomData })
    }

    #[cold]
    fn lock_contended(&self) {
        let mut looks = 0u32;
        let mut pause = Duration::from_micros(1);
        loop {
            // Wait with plain loads (the line stays shared) until it looks free, then try.
            while self.held.load(Ordering::Relaxed) {
                looks = looks.saturating_add(1);
                if looks < SPINS {
                    std::hint::spin_loop();
                } else if looks < SPINS + YIELDS {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(MAX_PAUSE);
                }
            }
            if !self.held.swap(true, Ordering::Acquire) {
                return;
            }
        }
    }
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (it holds `held`).
        unsafe { &*self.lock.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only one (it holds `held`), and it is borrowed mutably.
        unsafe { &mut *self.lock.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::SpinLock;
    use std::sync::Arc;

    #[test]
    fn try_lock_fails_while_held_and_leaves_it_held() {
        let lock = SpinLock::new(0u32);
        let held = lock.try_lock().expect("free");
        assert!(lock.try_lock().is_none(), "held by `held`");
        assert!(lock.try_lock().is_none(), "a failed try_lock did not release it");
        drop(held);
        assert!(lock.try_lock().is_some(), "free again");
    }

    #[test]
    fn threads_never_hold_it_together() {
        let lock = Arc::new(SpinLock::new((0u64, 0u64)));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..20000 {
                        let mut g = lock.lock();
                        // Two fields updated apart: a second holder would see them differ.
                        assert_eq!(g.0, g.1);
                        g.0 += 1;
                        std::hint::black_box(&mut *g);
                        g.1 += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), (80000, 80000));
    }
}
