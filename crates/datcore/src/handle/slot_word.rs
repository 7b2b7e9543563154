//! The protocol of a handle slot's state word: `type | LIVE | DYING | uses` (see the parent
//! module's "Why a concurrent free never frees memory a lookup uses").
//!
//! Every transition of the word is one function here, generic over [`StateWord`] so that the
//! registry runs them on `std`'s `AtomicU64` and the model checker (`loom`, `make check-loom`)
//! runs the very same code on its own atomic, exploring every interleaving of lookups, frees and
//! inserts (the `loom_model` tests below). The functions are `#[inline(always)]`: on `std`'s
//! atomic they compile to the same instructions as hand-written calls.

use std::sync::atomic::Ordering;

// The word's layout:
//  63      37 36  33   32     31    30       0
// [  unused  | type | LIVE | DYING |   uses   ]
pub(super) const USES_MASK: u64 = (1 << 31) - 1;
pub(super) const DYING: u64 = 1 << 31;
pub(super) const LIVE: u64 = 1 << 32;
pub(super) const KIND_SHIFT: u32 = 33;

/// The atomic operations the protocol uses on the word.
pub(super) trait StateWord {
    fn load(&self, order: Ordering) -> u64;
    fn fetch_add(&self, v: u64, order: Ordering) -> u64;
    fn fetch_sub(&self, v: u64, order: Ordering) -> u64;
    fn fetch_or(&self, v: u64, order: Ordering) -> u64;
    fn compare_exchange_weak(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64>;
}

macro_rules! state_word_for {
    ($atomic:ty) => {
        impl StateWord for $atomic {
            #[inline(always)]
            fn load(&self, order: Ordering) -> u64 {
                <$atomic>::load(self, order)
            }
            #[inline(always)]
            fn fetch_add(&self, v: u64, order: Ordering) -> u64 {
                <$atomic>::fetch_add(self, v, order)
            }
            #[inline(always)]
            fn fetch_sub(&self, v: u64, order: Ordering) -> u64 {
                <$atomic>::fetch_sub(self, v, order)
            }
            #[inline(always)]
            fn fetch_or(&self, v: u64, order: Ordering) -> u64 {
                <$atomic>::fetch_or(self, v, order)
            }
            #[inline(always)]
            fn compare_exchange_weak(
                &self,
                current: u64,
                new: u64,
                success: Ordering,
                failure: Ordering,
            ) -> Result<u64, u64> {
                <$atomic>::compare_exchange_weak(self, current, new, success, failure)
            }
        }
    };
}

state_word_for!(std::sync::atomic::AtomicU64);
#[cfg(all(test, loom))]
state_word_for!(loom::sync::atomic::AtomicU64);

/// The type number in a word.
#[inline(always)]
pub(super) fn kind(word: u64) -> u64 {
    (word >> KIND_SHIFT) & 0xf
}

/// True if `word` is the state of a live slot of type number `kind`: one shift and compare.
#[inline(always)]
pub(super) fn is_live_of(word: u64, kind: u64) -> bool {
    word >> 32 == kind << 1 | 1
}

/// Takes a use; returns the word it read. The use is taken whatever the word says: the caller
/// gives it back with [`leave`] in every case.
#[inline(always)]
pub(super) fn enter(w: &impl StateWord) -> u64 {
    w.fetch_add(1, Ordering::Acquire)
}

/// Gives a use back. True when it was the last use of a freed (`DYING`) slot: the caller then
/// calls [`reclaim`].
#[inline(always)]
pub(super) fn leave(w: &impl StateWord) -> bool {
    let before = w.fetch_sub(1, Ordering::Release);
    before & (DYING | USES_MASK) == DYING | 1
}

/// Clears a `DYING` slot without uses (to 0: free, no type). Returns the word it cleared when
/// this call's compare-and-swap won: then, and only then, the caller owns the slot's object.
#[inline(always)]
pub(super) fn reclaim(w: &impl StateWord) -> Option<u64> {
    let mut word = w.load(Ordering::Acquire);
    loop {
        if word & DYING == 0 || word & USES_MASK != 0 {
            return None; // someone else reclaims (or a racing lookup will, when it leaves)
        }
        match w.compare_exchange_weak(word, 0, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(word),
            Err(now) => word = now,
        }
    }
}

/// Frees a live slot: clears `LIVE` and sets `DYING` in one compare-and-swap. The caller holds
/// a use (so only a concurrent free can have cleared `LIVE`); false when that one won.
#[inline(always)]
pub(super) fn mark_dying(w: &impl StateWord) -> bool {
    let mut word = w.load(Ordering::Relaxed);
    loop {
        if word & LIVE == 0 {
            return false;
        }
        match w.compare_exchange_weak(word, word & !LIVE | DYING, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => word = now,
        }
    }
}

/// Publishes a filled slot as live with type number `kind` (release: a lookup that sees `LIVE`
/// sees what the inserter wrote before). Uses that stray lookups hold meanwhile are kept.
#[inline(always)]
pub(super) fn publish(w: &impl StateWord, kind: u64) {
    w.fetch_or(LIVE | kind << KIND_SHIFT, Ordering::Release);
}

/// Model checking of the protocol: every interleaving (loom) of the operations a slot sees.
/// Run by `make check-loom` (`RUSTFLAGS="--cfg loom"`); not built otherwise.
#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicU64, AtomicUsize};
    use loom::sync::Arc;
    use loom::thread;

    const KIND: u64 = 3;
    const OTHER_KIND: u64 = 5;

    /// A slot as the registry has it: the word and the object (0: none, else the object's
    /// value), plus how many times the object was taken out (must end at exactly one per free).
    struct Slot {
        state: AtomicU64,
        object: UnsafeCell<u64>,
        reclaimed: AtomicUsize,
    }

    impl Slot {
        fn new() -> Slot {
            Slot { state: AtomicU64::new(0), object: UnsafeCell::new(0), reclaimed: AtomicUsize::new(0) }
        }

        /// What the registry's insert does with a slot from the free list.
        fn insert(&self, value: u64) {
            // SAFETY: loom's cell; loom reports any access that races with this one.
            self.object.with_mut(|o| unsafe { *o = value });
            publish(&self.state, KIND);
        }

        /// Gives a use back, reclaiming when it was the last of a freed slot.
        fn leave(&self) {
            if leave(&self.state) {
                self.reclaim();
            }
        }

        fn reclaim(&self) {
            if reclaim(&self.state).is_some() {
                // The winner owns the object: a write that loom checks against every read.
                // SAFETY: as in `insert`.
                self.object.with_mut(|o| unsafe { *o = 0 });
                self.reclaimed.fetch_add(1, Ordering::SeqCst);
            }
        }

        /// A lookup of type `kind`: the object's value if the slot is live of that type.
        fn get(&self, kind: u64) -> Option<u64> {
            let word = enter(&self.state);
            // SAFETY: as in `insert`.
            let got = is_live_of(word, kind).then(|| self.object.with(|o| unsafe { *o }));
            if let Some(v) = got {
                assert_ne!(v, 0, "a live slot handed out no object");
            }
            self.leave();
            got
        }

        /// A free (`remove`): true if this call freed the slot.
        fn remove(&self) -> bool {
            let word = enter(&self.state);
            let freed = is_live_of(word, KIND) && mark_dying(&self.state);
            self.leave();
            freed
        }
    }

    /// A lookup racing with the free: it sees the object or fails, never a reclaimed one; the
    /// object is taken out once, after the lookup's use ends.
    #[test]
    fn lookup_across_a_free() {
        loom::model(|| {
            let s = Arc::new(Slot::new());
            s.insert(7);
            let reader = {
                let s = s.clone();
                thread::spawn(move || s.get(KIND))
            };
            assert!(s.remove());
            let got = reader.join().unwrap();
            assert!(got.is_none() || got == Some(7));
            assert_eq!(s.reclaimed.load(Ordering::SeqCst), 1);
            assert_eq!(s.state.load(Ordering::SeqCst), 0, "slot not free after the last use");
            assert_eq!(s.get(KIND), None, "a freed slot still resolves");
        });
    }

    /// Two frees of one handle: exactly one wins, the object is taken out once.
    #[test]
    fn two_frees_race() {
        loom::model(|| {
            let s = Arc::new(Slot::new());
            s.insert(9);
            let other = {
                let s = s.clone();
                thread::spawn(move || s.remove())
            };
            let mine = s.remove();
            let theirs = other.join().unwrap();
            assert!(mine ^ theirs, "both or neither free won: {mine} {theirs}");
            assert_eq!(s.reclaimed.load(Ordering::SeqCst), 1);
        });
    }

    /// A stray lookup of a free slot (a stale or forged handle) while an insert fills it: the
    /// lookup never reads the object before it is published, and its use does not disturb the
    /// new object's state.
    #[test]
    fn stray_lookup_during_insert() {
        loom::model(|| {
            let s = Arc::new(Slot::new());
            let stray = {
                let s = s.clone();
                thread::spawn(move || s.get(KIND))
            };
            s.insert(11);
            let got = stray.join().unwrap();
            assert!(got.is_none() || got == Some(11));
            assert_eq!(s.state.load(Ordering::SeqCst), LIVE | KIND << KIND_SHIFT, "uses left behind");
            assert_eq!(s.get(OTHER_KIND), None, "a wrong-type lookup succeeded");
        });
    }

    /// Two lookups and a free at once: both lookups see the object or fail, the object is taken
    /// out exactly once, by whichever of the three gives the last use back. Three threads:
    /// bounded to interleavings with at most 3 preemptions (exhaustive takes minutes).
    #[test]
    fn two_lookups_and_a_free() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let s = Arc::new(Slot::new());
            s.insert(13);
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let s = s.clone();
                    thread::spawn(move || s.get(KIND))
                })
                .collect();
            assert!(s.remove());
            for r in readers {
                let got = r.join().unwrap();
                assert!(got.is_none() || got == Some(13));
            }
            assert_eq!(s.reclaimed.load(Ordering::SeqCst), 1);
        });
    }
}
