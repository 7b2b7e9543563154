//! An ofi CQ's sleeping state: whether a waiter (or a CNO's waiter) sleeps on it, what its
//! arm found, whether software completions wait, and the CM thread's look ([`Sleep::look`]).
//!
//! Lost-wake-up invariants:
//! - A waiter arms ([`Sleep::arm`]: announces itself, then `fi_trywait`), re-polls, and
//!   blocks; `fi_trywait` either finds completions pending (the next `block` returns at once)
//!   or leaves the wait fd to become readable at the next one.
//! - A software completion is queued, its flag set, and then the sleeper is looked for
//!   ([`Sleep::interrupt`]); by the two `fence(SeqCst)`s (after the announcement, before the
//!   look), either the re-poll sees the flag or the look sees the sleeper and rings.
//! - libfabric's progress takes the wait fd's signal with the data it turns into completions,
//!   so the CM thread's look, which drives progress, must not run across a waiter's sleep:
//!   it skips a queue slept on, and holds `look_lock` from its check to the end of its
//!   progress; the arm announces the waiter and then takes and drops `look_lock`, so that a
//!   look that checked before the announcement has finished its progress before the arm's
//!   `fi_trywait` (which then finds what it made), and a later one sees the announcement.
//! - A wait withdraws its announcement when it ends, by `block` or [`Sleep::disarm`] (the
//!   re-poll found what it wanted): a queue left looking slept on is never looked at again.
//!
//! Generic over [`Atomics`] and over libfabric's side ([`Fabric`]: `fi_trywait`, the wait fd
//! and the interrupt eventfd, progress), so that the model checker runs this very code with a
//! stand-in for libfabric (the `loom_model` tests below).

use super::super::atomics::{Atomics, Flag, StdAtomics, TryLock};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The CQ's readiness in [`Fabric::wait`]: its interrupt eventfd.
pub const SLEEP_INTR: u32 = 1 << 1;

/// libfabric's side of a CQ's sleep.
pub trait Fabric {
    /// `fi_trywait`: true when the wait fd will become readable at the next completion, false
    /// when something is pending already (the next poll finds it).
    fn trywait(&self) -> bool;
    /// Sleeps until the wait fd or the interrupt is readable, or `timeout` passes (None); may
    /// return early with neither (`Some(0)`), and the caller re-polls.
    fn wait(&self, timeout: Option<Duration>) -> Option<u32>;
    /// Takes the interrupt's signal.
    fn clear_intr(&self);
    /// Signals the interrupt.
    fn ring_intr(&self);
    /// Drives progress without taking a completion (`fi_cq_read` of 0 entries).
    fn progress(&self);
}

pub struct Sleep<A: Atomics = StdAtomics> {
    /// A waiter armed and has not left `block` yet: `interrupt` must ring the eventfd.
    sleeping: A::Bool,
    /// `arm` found completions pending: the next `block` returns at once.
    pending: A::Bool,
    /// Software completions are queued.
    has_soft: A::Bool,
    /// A consumer polled since the CM thread's last look.
    polled: A::Bool,
    /// A CNO's waiter armed this CQ and has not disarmed it.
    group_armed: A::Bool,
    /// Held by a look from its check to the end of its progress, taken and dropped by an arm.
    look_lock: A::Lock,
}

impl<A: Atomics> Default for Sleep<A> {
    fn default() -> Sleep<A> {
        Sleep {
            sleeping: A::Bool::default(),
            pending: A::Bool::default(),
            has_soft: A::Bool::default(),
            polled: A::Bool::default(),
            group_armed: A::Bool::default(),
            look_lock: A::Lock::default(),
        }
    }
}

impl<A: Atomics> Sleep<A> {
    /// The CM thread's look: where no consumer polled since the last look and none sleeps
    /// here, drives progress. True when it did.
    pub fn look(&self, fabric: &impl Fabric) -> bool {
        if self.polled.swap(false, Ordering::Relaxed) {
            return false;
        }
        let Some(_held) = self.look_lock.try_lock() else { return false };
        if self.sleeping.load(Ordering::SeqCst) || self.group_armed.load(Ordering::SeqCst) {
            return false;
        }
        fabric.progress();
        true
    }

    /// A poll's mark for the look.
    #[inline(always)]
    pub fn polled(&self) {
        self.polled.store(true, Ordering::Relaxed);
    }

    /// Whether software completions may be queued (the poll's test).
    #[inline(always)]
    pub fn has_soft(&self) -> bool {
        self.has_soft.load(Ordering::SeqCst)
    }

    /// Software completions were queued (under the software queue's lock); call
    /// [`Sleep::interrupt`] after.
    #[inline(always)]
    pub fn soft_added(&self) {
        self.has_soft.store(true, Ordering::SeqCst);
    }

    /// The software queue was emptied (under its lock).
    #[inline(always)]
    pub fn soft_taken(&self) {
        self.has_soft.store(false, Ordering::Release);
    }

    /// Step 1: announces the waiter, waits out a look in progress, then `fi_trywait`.
    pub fn arm(&self, fabric: &impl Fabric) {
        self.sleeping.store(true, Ordering::SeqCst);
        // Pairs with the fence of `interrupt`: the re-poll that follows sees a software
        // completion queued before the look there, or that look sees the sleeper.
        A::fence_seq_cst();
        drop(self.look_lock.lock());
        if !fabric.trywait() {
            self.pending.store(true, Ordering::SeqCst);
        }
    }

    /// Step 3: returns at once if `arm` found completions pending, else sleeps on the wait fd
    /// and the interrupt. True when it returned because `timeout` passed.
    pub fn block(&self, fabric: &impl Fabric, timeout: Option<Duration>) -> bool {
        if self.pending.swap(false, Ordering::SeqCst) {
            self.sleeping.store(false, Ordering::SeqCst);
            return false;
        }
        let woke = fabric.wait(timeout);
        if woke.unwrap_or(0) & SLEEP_INTR != 0 {
            fabric.clear_intr();
        }
        self.sleeping.store(false, Ordering::SeqCst);
        woke.is_none()
    }

    /// Step 3 not taken: nobody sleeps here any more, and the look comes back to the queue.
    pub fn disarm(&self) {
        self.pending.store(false, Ordering::SeqCst);
        self.sleeping.store(false, Ordering::SeqCst);
    }

    /// Ends a current `block`, or makes the next one after an `arm` return at once. Rings
    /// only while a waiter is armed.
    pub fn interrupt(&self, fabric: &impl Fabric) {
        A::fence_seq_cst();
        if self.sleeping.load(Ordering::SeqCst) {
            fabric.ring_intr();
        }
    }

    /// Step 1 for a CNO's waiter: announces it (the look leaves the queue alone), then
    /// `fi_trywait` (its result).
    pub fn arm_group(&self, fabric: &impl Fabric) -> bool {
        self.group_armed.store(true, Ordering::SeqCst);
        drop(self.look_lock.lock());
        fabric.trywait()
    }

    /// The CNO's waiter woke.
    pub fn disarm_group(&self) {
        self.group_armed.store(false, Ordering::SeqCst);
    }
}

/// Model checking of the protocol: every interleaving (loom) of a waiter, a peer whose data
/// completes there, the CM thread's look and a producer of a software completion. Run by
/// `make check-loom` (`RUSTFLAGS="--cfg loom"`); not built otherwise.
#[cfg(all(test, loom))]
mod loom_model {
    use super::super::super::atomics::loom_atomics::LoomAtomics;
    use super::*;
    use loom::sync::{Arc, Condvar, Mutex};
    use loom::thread;

    /// libfabric's `tcp` provider and the kernel, under one mutex: data arrived on the socket
    /// (which makes the wait fd readable) and not yet progressed, the CQ's entries, and the
    /// interrupt eventfd. Progress (in `fi_cq_read` and `fi_trywait`, any thread's) turns the
    /// data into entries, and so takes the wait fd's readiness. epoll's check-and-sleep is
    /// atomic with respect to a wake, as here under the mutex.
    #[derive(Default)]
    struct Lib {
        state: Mutex<LibState>,
        ready: Condvar,
    }

    #[derive(Default)]
    struct LibState {
        arrived: u32,
        entries: u32,
        intr: bool,
    }

    impl LibState {
        fn progress(&mut self) {
            self.entries += std::mem::take(&mut self.arrived);
        }
    }

    impl Lib {
        /// A peer's data arrives.
        fn arrive(&self) {
            self.state.lock().unwrap().arrived += 1;
            self.ready.notify_all();
        }

        /// `fi_cq_read`: progress, then every entry.
        fn read(&self) -> u32 {
            let mut s = self.state.lock().unwrap();
            s.progress();
            std::mem::take(&mut s.entries)
        }
    }

    /// The wait fd's readiness in [`Fabric::wait`].
    const WAIT_FD: u32 = 1 << 0;

    impl Fabric for Lib {
        fn trywait(&self) -> bool {
            let mut s = self.state.lock().unwrap();
            s.progress();
            s.entries == 0
        }
        fn wait(&self, timeout: Option<Duration>) -> Option<u32> {
            assert!(timeout.is_none(), "the model sleeps without a limit");
            let mut s = self.state.lock().unwrap();
            while s.arrived == 0 && !s.intr {
                s = self.ready.wait(s).unwrap();
            }
            Some(if s.arrived > 0 { WAIT_FD } else { 0 } | if s.intr { SLEEP_INTR } else { 0 })
        }
        fn clear_intr(&self) {
            self.state.lock().unwrap().intr = false;
        }
        fn ring_intr(&self) {
            self.state.lock().unwrap().intr = true;
            self.ready.notify_all();
        }
        fn progress(&self) {
            self.state.lock().unwrap().progress();
        }
    }

    /// A CQ: the sleeping state, libfabric, and the software queue (a count under its lock).
    #[derive(Default)]
    struct Cq {
        sleep: Sleep<LoomAtomics>,
        lib: Lib,
        soft: Mutex<u32>,
    }

    impl Cq {
        /// `OfiCq::push_soft`.
        fn push_soft(&self) {
            let mut soft = self.soft.lock().unwrap();
            *soft += 1;
            self.sleep.soft_added();
            drop(soft);
            self.sleep.interrupt(&self.lib);
        }

        /// `OfiCq::poll`: libfabric's completions, then the software queue when its flag is set.
        fn poll(&self) -> u32 {
            self.sleep.polled();
            let mut n = self.lib.read();
            if self.sleep.has_soft() {
                let mut soft = self.soft.lock().unwrap();
                n += std::mem::take(&mut *soft);
                self.sleep.soft_taken();
            }
            n
        }

        /// The core's wait for `want` completions (`EventDispatcher::wait_queued` and `sleep`):
        /// poll; arm, re-poll, then disarm if the re-poll found them, else block; until they
        /// are all there. A lost wake-up leaves it blocked for ever (loom reports a deadlock).
        fn wait(&self, want: u32) {
            let mut got = self.poll();
            while got < want {
                self.sleep.arm(&self.lib);
                got += self.poll();
                if got >= want {
                    self.sleep.disarm();
                    break;
                }
                self.sleep.block(&self.lib, None);
                got += self.poll();
            }
        }

        /// Once nothing runs, the CM thread's looks come back to the queue: the first may
        /// find a poll since the previous look, the second drives progress.
        fn looked_at_again(&self) -> bool {
            self.sleep.look(&self.lib);
            self.sleep.look(&self.lib)
        }
    }

    /// A peer's completion races the waiter's arm while the CM thread looks: the look never
    /// takes the wake-up from the sleeper, and once the wait ends, the look comes back.
    #[test]
    fn the_look_takes_no_wake_up_and_comes_back_after_the_wait() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(4);
        model.check(|| {
            let cq = Arc::new(Cq::default());
            let peer = {
                let cq = cq.clone();
                thread::spawn(move || cq.lib.arrive())
            };
            let cm = {
                let cq = cq.clone();
                thread::spawn(move || {
                    cq.sleep.look(&cq.lib);
                })
            };
            cq.wait(1);
            peer.join().unwrap();
            cm.join().unwrap();
            assert!(cq.looked_at_again(), "the wait left the queue looking slept on");
        });
    }

    /// A software completion and a peer's completion race the waiter's arm: it gets both.
    #[test]
    fn no_lost_wake_up_when_a_software_completion_races_the_arm() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(4);
        model.check(|| {
            let cq = Arc::new(Cq::default());
            let soft = {
                let cq = cq.clone();
                thread::spawn(move || cq.push_soft())
            };
            let peer = {
                let cq = cq.clone();
                thread::spawn(move || cq.lib.arrive())
            };
            cq.wait(2);
            soft.join().unwrap();
            peer.join().unwrap();
            assert!(cq.looked_at_again(), "the wait left the queue looking slept on");
        });
    }
}
