//! A verbs CQ's sleeping state: whether a waiter sleeps on it (so that [`Sleep::interrupt`]
//! must ring the eventfd it sleeps on), and the flags of completions the provider made
//! itself ([`HAS_SOFT`], [`HAS_UNREPORTED`]), which a poll reads as one byte.
//!
//! Lost-wake-up invariant: a waiter arms ([`Sleep::arm`]: announces itself, then
//! `ibv_req_notify_cq`), re-polls, and blocks; a completion the device writes after the
//! request makes the channel readable, one written before it is found by the re-poll. A
//! software completion is queued, its flag set, and then the sleeper is looked for
//! ([`Sleep::add_rare`]); by the two `fence(SeqCst)`s (after the announcement, before the
//! look), either the re-poll sees the flag or the look sees the sleeper and rings.
//! [`Sleep::disarm`] (the re-poll found what the waiter wanted) and the end of
//! [`Sleep::block`] withdraw the announcement.
//!
//! Generic over [`Atomics`] and over the device's side ([`Channel`]: the completion channel,
//! the eventfd and the epoll set of the CQ), so that the model checker runs this very code
//! with a stand-in for the device (the `loom_model` tests below).

use super::super::atomics::{Atomics, Bits, Flag, StdAtomics};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The CQ's readiness in [`Channel::wait`]: its completion channel.
pub const SLEEP_CHANNEL: u32 = 1 << 0;
/// The CQ's readiness in [`Channel::wait`]: its interrupt eventfd.
pub const SLEEP_INTR: u32 = 1 << 1;

/// [`Sleep::rare`]: software completions are queued.
pub const HAS_SOFT: u8 = 1;
/// [`Sleep::rare`]: QPs' unreported receives are watched.
pub const HAS_UNREPORTED: u8 = 2;

/// The device's side of a CQ's sleep.
pub trait Channel {
    /// `ibv_req_notify_cq`: the next completion makes the channel readable.
    fn request_notification(&self);
    /// Sleeps until the channel or the interrupt is readable, or `timeout` passes (None).
    fn wait(&self, timeout: Option<Duration>) -> Option<u32>;
    /// Takes the interrupt's signal.
    fn clear_intr(&self);
    /// Signals the interrupt.
    fn ring_intr(&self);
    /// The channel was readable: takes its event.
    fn on_channel_event(&self);
}

pub struct Sleep<A: Atomics = StdAtomics> {
    /// A waiter armed and has not left `block` yet: `interrupt` must ring the eventfd.
    sleeping: A::Bool,
    /// [`HAS_SOFT`] and [`HAS_UNREPORTED`].
    rare: A::U8,
}

impl<A: Atomics> Default for Sleep<A> {
    fn default() -> Sleep<A> {
        Sleep { sleeping: A::Bool::default(), rare: A::U8::default() }
    }
}

impl<A: Atomics> Sleep<A> {
    /// The flags of completions the provider made itself; 0 almost always (the poll's test).
    #[inline(always)]
    pub fn rare(&self) -> u8 {
        self.rare.load(Ordering::SeqCst)
    }

    /// Sets `bits` of [`Sleep::rare`] and ends a sleep (the completions they stand for are
    /// queued already).
    #[inline(always)]
    pub fn add_rare(&self, bits: u8, channel: &impl Channel) {
        self.rare.fetch_or(bits, Ordering::SeqCst);
        self.interrupt(channel);
    }

    /// Sets `bits` of [`Sleep::rare`] from inside a poll (nobody sleeps: the poller is here).
    #[inline(always)]
    pub fn set_rare(&self, bits: u8) {
        self.rare.fetch_or(bits, Ordering::SeqCst);
    }

    /// Clears `bits` of [`Sleep::rare`], under the lock of what they stand for.
    #[inline(always)]
    pub fn clear_rare(&self, bits: u8) {
        self.rare.fetch_and(!bits, Ordering::Release);
    }

    /// Step 1: announces the waiter, then requests the channel's notification.
    #[inline(always)]
    pub fn arm(&self, channel: &impl Channel) {
        self.sleeping.store(true, Ordering::SeqCst);
        // Pairs with the fence of `interrupt`: the re-poll that follows sees a software
        // completion queued before the look there, or that look sees the sleeper.
        A::fence_seq_cst();
        channel.request_notification();
    }

    /// Step 3: sleeps on the channel and the interrupt; takes what woke it. True when it
    /// returned because `timeout` passed.
    #[inline(always)]
    pub fn block(&self, channel: &impl Channel, timeout: Option<Duration>) -> bool {
        let woke = channel.wait(timeout);
        let ready = woke.unwrap_or(0);
        if ready & SLEEP_INTR != 0 {
            channel.clear_intr();
        }
        if ready & SLEEP_CHANNEL != 0 {
            channel.on_channel_event();
        }
        self.sleeping.store(false, Ordering::SeqCst);
        woke.is_none()
    }

    /// Step 3 not taken: nobody sleeps here any more.
    #[inline(always)]
    pub fn disarm(&self) {
        self.sleeping.store(false, Ordering::SeqCst);
    }

    /// Ends a current `block`, or makes the next one after an `arm` return at once. Rings
    /// only while a waiter is armed.
    #[inline(always)]
    pub fn interrupt(&self, channel: &impl Channel) {
        A::fence_seq_cst();
        if self.sleeping.load(Ordering::SeqCst) {
            channel.ring_intr();
        }
    }

    /// Whether a waiter is armed (between `arm` and the end of its `block` or its `disarm`).
    #[cfg(all(test, loom))]
    #[inline(always)]
    pub fn slept_on(&self) -> bool {
        self.sleeping.load(Ordering::SeqCst)
    }
}

/// Model checking of the protocol: every interleaving (loom) of a waiter, a producer of a
/// software completion and the device. Run by `make check-loom` (`RUSTFLAGS="--cfg loom"`);
/// not built otherwise.
#[cfg(all(test, loom))]
mod loom_model {
    use super::super::super::atomics::loom_atomics::LoomAtomics;
    use super::*;
    use loom::sync::{Arc, Condvar, Mutex};
    use loom::thread;

    /// The device and the kernel: the CQ's entries, whether a notification is requested, the
    /// channel's and the eventfd's readiness, under one mutex (the device's request and its
    /// completion are ordered as the hardware orders them; epoll's check-and-sleep is atomic
    /// with respect to a wake, as here under the mutex).
    #[derive(Default)]
    struct Device {
        state: Mutex<DeviceState>,
        ready: Condvar,
    }

    #[derive(Default)]
    struct DeviceState {
        entries: u32,
        requested: bool,
        channel: bool,
        intr: bool,
    }

    impl Device {
        /// The device writes a completion: the channel becomes readable if a notification was
        /// requested (once per request).
        fn complete(&self) {
            let mut s = self.state.lock().unwrap();
            s.entries += 1;
            if std::mem::take(&mut s.requested) {
                s.channel = true;
                self.ready.notify_all();
            }
        }

        /// `ibv_poll_cq`: takes every entry.
        fn poll(&self) -> u32 {
            std::mem::take(&mut self.state.lock().unwrap().entries)
        }
    }

    impl Channel for Device {
        fn request_notification(&self) {
            self.state.lock().unwrap().requested = true;
        }
        fn wait(&self, timeout: Option<Duration>) -> Option<u32> {
            assert!(timeout.is_none(), "the model sleeps without a limit");
            let mut s = self.state.lock().unwrap();
            while !s.channel && !s.intr {
                s = self.ready.wait(s).unwrap();
            }
            Some(if s.channel { SLEEP_CHANNEL } else { 0 } | if s.intr { SLEEP_INTR } else { 0 })
        }
        fn clear_intr(&self) {
            self.state.lock().unwrap().intr = false;
        }
        fn ring_intr(&self) {
            self.state.lock().unwrap().intr = true;
            self.ready.notify_all();
        }
        fn on_channel_event(&self) {
            self.state.lock().unwrap().channel = false;
        }
    }

    /// A CQ: the sleeping state, the device, and the work completed in software for queue
    /// pairs in error (a count under its lock).
    #[derive(Default)]
    struct Cq {
        sleep: Sleep<LoomAtomics>,
        device: Device,
        unreported: Mutex<u32>,
    }

    impl Cq {
        /// `VerbsCq::watch_unreported`: another thread (a post to a queue pair in error, or
        /// the CM thread moving one to error) hands the poller work to complete in software.
        fn watch_unreported(&self) {
            *self.unreported.lock().unwrap() += 1;
            self.sleep.add_rare(HAS_UNREPORTED, &self.device);
        }

        /// `VerbsCq::poll`: the work handed over when its flag is set, then the device.
        fn poll(&self) -> u32 {
            let mut n = 0;
            if self.sleep.rare() & HAS_UNREPORTED != 0 {
                let mut unreported = self.unreported.lock().unwrap();
                n += std::mem::take(&mut *unreported);
                self.sleep.clear_rare(HAS_UNREPORTED);
            }
            n + self.device.poll()
        }

        /// The core's wait for `want` completions (`EventDispatcher::wait_queued` and `sleep`):
        /// poll; arm, re-poll, then disarm if the re-poll found them, else block; until they
        /// are all there. A lost wake-up leaves it blocked for ever (loom reports a deadlock).
        fn wait(&self, want: u32) {
            let mut got = self.poll();
            while got < want {
                self.sleep.arm(&self.device);
                got += self.poll();
                if got >= want {
                    self.sleep.disarm();
                    break;
                }
                self.sleep.block(&self.device, None);
                got += self.poll();
            }
        }
    }

    /// A software completion and a device completion race the waiter's arm: the waiter gets
    /// both, and once its wait ends the queue is no longer slept on.
    #[test]
    fn no_lost_wake_up_when_completions_race_the_arm() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(4);
        model.check(|| {
            let cq = Arc::new(Cq::default());
            let soft = {
                let cq = cq.clone();
                thread::spawn(move || cq.watch_unreported())
            };
            let device = {
                let cq = cq.clone();
                thread::spawn(move || cq.device.complete())
            };
            cq.wait(2);
            assert!(!cq.sleep.slept_on(), "the wait ended with the queue still slept on");
            soft.join().unwrap();
            device.join().unwrap();
        });
    }
}
