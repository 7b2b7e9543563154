//! The atomics the verbs and ofi providers' sleeping protocols run on ([`super::verbs`]'s and
//! [`super::ofi`]'s `sleep` modules), behind one trait so that the providers run them on
//! `std`'s atomics and [`SpinLock`] ([`StdAtomics`]) and the model checker (`loom`,
//! `make check-loom`) runs the very same protocol code on its own ([`loom_atomics`]). Every
//! accessor is `#[inline(always)]`: on `std`'s types they compile to the instructions of
//! hand-written calls.

use super::spin::{SpinGuard, SpinLock};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// A family of atomics and a lock.
pub trait Atomics {
    type Bool: Flag + Default;
    type U8: Bits + Default;
    type Lock: TryLock + Default;
    /// `fence(SeqCst)` of the same memory model.
    fn fence_seq_cst();
}

/// An atomic boolean.
pub trait Flag {
    fn load(&self, order: Ordering) -> bool;
    fn store(&self, v: bool, order: Ordering);
    fn swap(&self, v: bool, order: Ordering) -> bool;
}

/// An atomic byte of flag bits.
pub trait Bits {
    fn load(&self, order: Ordering) -> u8;
    fn fetch_or(&self, v: u8, order: Ordering) -> u8;
    fn fetch_and(&self, v: u8, order: Ordering) -> u8;
}

/// A lock guarding nothing but a section of code.
pub trait TryLock {
    type Guard<'a>
    where
        Self: 'a;
    fn lock(&self) -> Self::Guard<'_>;
    /// The lock if it is free now, without waiting.
    fn try_lock(&self) -> Option<Self::Guard<'_>>;
}

/// `std`'s atomics and the providers' [`SpinLock`].
pub struct StdAtomics;

impl Atomics for StdAtomics {
    type Bool = AtomicBool;
    type U8 = AtomicU8;
    type Lock = SpinLock<()>;
    #[inline(always)]
    fn fence_seq_cst() {
        std::sync::atomic::fence(Ordering::SeqCst)
    }
}

macro_rules! flag_for {
    ($atomic:ty) => {
        impl Flag for $atomic {
            #[inline(always)]
            fn load(&self, order: Ordering) -> bool {
                <$atomic>::load(self, order)
            }
            #[inline(always)]
            fn store(&self, v: bool, order: Ordering) {
                <$atomic>::store(self, v, order)
            }
            #[inline(always)]
            fn swap(&self, v: bool, order: Ordering) -> bool {
                <$atomic>::swap(self, v, order)
            }
        }
    };
}

macro_rules! bits_for {
    ($atomic:ty) => {
        impl Bits for $atomic {
            #[inline(always)]
            fn load(&self, order: Ordering) -> u8 {
                <$atomic>::load(self, order)
            }
            #[inline(always)]
            fn fetch_or(&self, v: u8, order: Ordering) -> u8 {
                <$atomic>::fetch_or(self, v, order)
            }
            #[inline(always)]
            fn fetch_and(&self, v: u8, order: Ordering) -> u8 {
                <$atomic>::fetch_and(self, v, order)
            }
        }
    };
}

flag_for!(AtomicBool);
bits_for!(AtomicU8);

impl Default for SpinLock<()> {
    fn default() -> SpinLock<()> {
        SpinLock::new(())
    }
}

impl TryLock for SpinLock<()> {
    type Guard<'a> = SpinGuard<'a, ()>;
    #[inline(always)]
    fn lock(&self) -> SpinGuard<'_, ()> {
        SpinLock::lock(self)
    }
    #[inline(always)]
    fn try_lock(&self) -> Option<SpinGuard<'_, ()>> {
        SpinLock::try_lock(self)
    }
}

/// loom's atomics, fence and mutex, for the models. Built only by `make check-loom`.
#[cfg(all(test, loom))]
pub mod loom_atomics {
    use super::*;
    use loom::sync::{Mutex, MutexGuard};

    pub struct LoomAtomics;

    impl Atomics for LoomAtomics {
        type Bool = loom::sync::atomic::AtomicBool;
        type U8 = loom::sync::atomic::AtomicU8;
        type Lock = Mutex<()>;
        fn fence_seq_cst() {
            loom::sync::atomic::fence(Ordering::SeqCst)
        }
    }

    flag_for!(loom::sync::atomic::AtomicBool);
    bits_for!(loom::sync::atomic::AtomicU8);

    impl TryLock for Mutex<()> {
        type Guard<'a> = MutexGuard<'a, ()>;
        fn lock(&self) -> MutexGuard<'_, ()> {
            Mutex::lock(self).unwrap()
        }
        fn try_lock(&self) -> Option<MutexGuard<'_, ()>> {
            Mutex::try_lock(self).ok()
        }
    }
}
