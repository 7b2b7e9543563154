//! The sleeping protocol of a completion queue: how its sleeper announces itself and blocks,
//! and how producers wake it, in this process and in its peers.
//!
//! A queue has two [`Wake`] words: a **public** one in the published area (its peers map it
//! read-write: their producers wake through it) and a **private** one in our own memory (our
//! producers, the progress thread included, wake through it). A peer can write anything into
//! the public word, so nothing our own threads do depends on it: the queue's sleeper announces
//! itself in both words and blocks on both sequence values at once (`futex_waitv`), and our
//! producers look only at the private word. What a hostile peer can still do there is wake our
//! sleeper spuriously (which costs a re-poll) and suppress the wake-ups its own writes, and
//! other peers' writes, would give; the latter is bounded by the progress thread, which finds
//! work that waited since its previous look and wakes through the private word.
//!
//! Lost-wake-up invariant, per word: a producer makes its work visible (a ring record or queue
//! entry), then `fence(SeqCst)` and reads `sleeping`; the sleeper sets its bit in `sleeping`,
//! then `fence(SeqCst)`, reads `seq`, polls for work, and sleeps while `seq` holds the value it
//! read. By the two fences, either the sleeper's poll sees the work, or the producer sees
//! `sleeping` and bumps `seq` (so the sleep ends at once, or by the `FUTEX_WAKE` that follows;
//! the bump, a fence, then the look at `sleeping` that decides on the system call, pair with
//! the sleeper's announcement the same way). The protocol rests on fences, not on the order of
//! `SeqCst` accesses, which the model checker does not model (it takes them for `AcqRel`).
//!
//! Two sleepers may use one public word at once, each with its own bit of `sleeping`, so that
//! neither clears the other's announcement: the queue's own waiter ([`SLEEPER`]) and a CNO's
//! waiter sleeping on several queues ([`GROUP_SLEEPER`], which blocks on the public `seq` among
//! others; our own producers reach it through the core's waker, not through this word). Every
//! wake-up (`FUTEX_WAKE` of all) reaches both. A third bit, [`DOORBELL`], asks producers to bump
//! `seq` at every addition without waking anyone. Producers test `sleeping` for 0 (then they
//! bump `seq`) and for a bit other than [`DOORBELL`] (then they wake).
//!
//! The functions are generic over [`FutexWord`] so that the provider runs them on `std`'s
//! atomics and real futexes, and the model checker (`loom`, `make check-loom`) runs the very
//! same code on its atomics with a futex made of its mutex and condition variable (the
//! `loom_model` tests below, and the doorbell's in [`super::cq`]). They are `#[inline(always)]`: on `std`'s atomic they compile to
//! the same instructions as hand-written calls.

use super::super::futex::{self, FutexWaitv, Waitv};
use super::super::group_sleep::UNCOVERED_LOOK;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

/// A 32-bit atomic word that a thread can sleep on and wake, as a futex.
pub trait FutexWord {
    /// The 64-bit atomic of the same memory model, for [`Wake`]'s doorbell.
    type Rung: RungWord + Default;
    fn load(&self, order: Ordering) -> u32;
    fn store(&self, v: u32, order: Ordering);
    fn fetch_add(&self, v: u32, order: Ordering) -> u32;
    fn fetch_or(&self, v: u32, order: Ordering) -> u32;
    fn fetch_and(&self, v: u32, order: Ordering) -> u32;
    /// `fence(SeqCst)` of the same memory model.
    fn fence_seq_cst();
    /// Wakes every thread sleeping on the word.
    fn wake(&self);
    /// Wakes every thread sleeping on the word, a word of this process's private memory.
    fn wake_private(&self);
    /// Sleeps while `a` holds `va` and `b` (a word of this process's private memory) holds
    /// `vb`, until either is woken or `timeout` passes (spurious returns allowed). True when it
    /// returned because `timeout` passed.
    fn wait_either(a: &Self, va: u32, b: &Self, vb: u32, timeout: Option<Duration>) -> bool;
}

/// The atomic operations the doorbell uses on its 64-bit word.
pub trait RungWord {
    fn load(&self, order: Ordering) -> u64;
    fn compare_exchange(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64>;
    fn compare_exchange_weak(&self, current: u64, new: u64, success: Ordering, failure: Ordering) -> Result<u64, u64>;
}

macro_rules! rung_word_for {
    ($atomic:ty) => {
        impl RungWord for $atomic {
            #[inline(always)]
            fn load(&self, order: Ordering) -> u64 {
                <$atomic>::load(self, order)
            }
            #[inline(always)]
            fn compare_exchange(&self, c: u64, n: u64, s: Ordering, f: Ordering) -> Result<u64, u64> {
                <$atomic>::compare_exchange(self, c, n, s, f)
            }
            #[inline(always)]
            fn compare_exchange_weak(&self, c: u64, n: u64, s: Ordering, f: Ordering) -> Result<u64, u64> {
                <$atomic>::compare_exchange_weak(self, c, n, s, f)
            }
        }
    };
}

rung_word_for!(AtomicU64);

impl FutexWord for AtomicU32 {
    type Rung = AtomicU64;
    #[inline(always)]
    fn load(&self, order: Ordering) -> u32 {
        AtomicU32::load(self, order)
    }
    #[inline(always)]
    fn store(&self, v: u32, order: Ordering) {
        AtomicU32::store(self, v, order)
    }
    #[inline(always)]
    fn fetch_add(&self, v: u32, order: Ordering) -> u32 {
        AtomicU32::fetch_add(self, v, order)
    }
    #[inline(always)]
    fn fetch_or(&self, v: u32, order: Ordering) -> u32 {
        AtomicU32::fetch_or(self, v, order)
    }
    #[inline(always)]
    fn fetch_and(&self, v: u32, order: Ordering) -> u32 {
        AtomicU32::fetch_and(self, v, order)
    }
    #[inline(always)]
    fn fence_seq_cst() {
        std::sync::atomic::fence(Ordering::SeqCst)
    }
    #[inline(always)]
    fn wake(&self) {
        futex::futex_wake(self)
    }
    #[inline(always)]
    fn wake_private(&self) {
        futex::futex_wake_private(self)
    }
    /// One `futex_waitv` on both words; a kernel without it (before Linux 5.16) sleeps on `a`
    /// alone, at most [`UNCOVERED_LOOK`] (then `b`'s wakers reach the sleeper that late).
    fn wait_either(a: &Self, va: u32, b: &Self, vb: u32, timeout: Option<Duration>) -> bool {
        match futex::futex_waitv(&[FutexWaitv::new(a, va), FutexWaitv::new_private(b, vb)], timeout) {
            Waitv::Woken => false,
            Waitv::TimedOut => true,
            Waitv::Unsupported => {
                let capped = timeout.map_or(UNCOVERED_LOOK, |t| t.min(UNCOVERED_LOOK));
                futex::futex_wait(a, va, Some(capped)) && Some(capped) == timeout
            }
        }
    }
}

/// One sleeping word: a sequence value to sleep on, and the sleepers' announcement. `PRIVATE`:
/// a word in this process's private memory, which only its own threads wake (a private futex).
#[repr(C, align(64))]
#[derive(Default)]
pub struct Wake<W: FutexWord = AtomicU32, const PRIVATE: bool = false> {
    seq: W,
    sleeping: W,
    /// The doorbell ([`DOORBELL`]): rings so far (high half), and (low half) the one slot every
    /// ring since the queue's last [`Wake::rung_seen`] named, [`UNNAMED`] for none yet, or
    /// [`MIXED`]. A public word's only; not part of the sleeping protocol.
    rung: W::Rung,
}

/// [`Wake`]'s `sleeping` bit of the queue's own waiter.
pub const SLEEPER: u32 = 1;
/// [`Wake`]'s `sleeping` bit of a waiter sleeping on several queues at once.
pub const GROUP_SLEEPER: u32 = 2;
/// [`Wake`]'s `sleeping` bit of a queue that wants to hear of every addition, asleep or not:
/// producers then ring (count one more in `rung`, naming their connection's slot; no system
/// call), and the queue's poll steps only the connection named, or none while `rung` stands
/// still (the doorbell of [`super::cq::ShmCq`]).
pub const DOORBELL: u32 = 4;
/// A [`Wake::notify_from`] that names no slot.
pub const NO_SLOT: u32 = u32::MAX;
/// [`Wake::rung`]'s slot half: no ring since the queue looked.
pub const UNNAMED: u32 = u32::MAX;
/// [`Wake::rung`]'s slot half: rings since the queue looked named different slots (or none).
pub const MIXED: u32 = u32::MAX - 1;

impl<W: FutexWord, const PRIVATE: bool> Wake<W, PRIVATE> {
    /// Producer side: call after the work is visible. A system call only when someone sleeps.
    #[inline(always)]
    pub fn notify(&self) {
        self.notify_from(NO_SLOT);
    }

    /// [`Wake::notify`] by a producer whose work is for the queue pair at `slot` of the queue:
    /// it also rings the doorbell, where the queue asked for it.
    #[inline(always)]
    pub fn notify_from(&self, slot: u32) {
        W::fence_seq_cst();
        let sleeping = self.sleeping.load(Ordering::Relaxed);
        if sleeping == 0 {
            return;
        }
        if sleeping & DOORBELL != 0 {
            self.ring(slot);
        }
        if sleeping & !DOORBELL != 0 {
            self.interrupt();
        }
    }

    /// Counts one more ring, naming `slot`.
    #[cold]
    fn ring(&self, slot: u32) {
        let mut v = self.rung.load(Ordering::Relaxed);
        loop {
            let named = match v as u32 {
                _ if slot >= MIXED => MIXED,
                UNNAMED => slot,
                s if s == slot => slot,
                _ => MIXED,
            };
            let next = ((v >> 32).wrapping_add(1) << 32) | u64::from(named);
            match self.rung.compare_exchange_weak(v, next, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => v = now,
            }
        }
    }

    /// The doorbell's word: rings so far (high half), and the slot all of them named since the
    /// last [`Wake::rung_seen`] (low half; [`UNNAMED`], [`MIXED`]).
    #[inline(always)]
    pub fn rung(&self) -> u64 {
        self.rung.load(Ordering::SeqCst)
    }

    /// The queue took `seen` (a value [`Wake::rung`] returned) into account: the slot half
    /// starts again from [`UNNAMED`], unless another ring came meanwhile.
    #[inline(always)]
    pub fn rung_seen(&self, seen: u64) {
        if seen as u32 != UNNAMED {
            let fresh = (seen & !0xffff_ffff) | u64::from(UNNAMED);
            let _ = self.rung.compare_exchange(seen, fresh, Ordering::SeqCst, Ordering::Relaxed);
        }
    }

    /// Ends a current or coming sleep unconditionally.
    #[inline(always)]
    pub fn interrupt(&self) {
        self.seq.fetch_add(1, Ordering::SeqCst);
        W::fence_seq_cst();
        if self.sleeping.load(Ordering::Relaxed) & !DOORBELL != 0 {
            if PRIVATE {
                self.seq.wake_private();
            } else {
                self.seq.wake();
            }
        }
    }

    /// Announces the sleeper `bit`; returns the sequence value to sleep on.
    #[inline(always)]
    pub fn announce(&self, bit: u32) -> u32 {
        self.sleeping.fetch_or(bit, Ordering::SeqCst);
        W::fence_seq_cst();
        self.seq.load(Ordering::SeqCst)
    }

    /// Withdraws the sleeper `bit`.
    #[inline(always)]
    pub fn withdraw(&self, bit: u32) {
        self.sleeping.fetch_and(!bit, Ordering::SeqCst);
    }

    /// Both sleepers gone (the queue is freed).
    pub fn clear(&self) {
        self.sleeping.store(0, Ordering::SeqCst);
    }

    /// Whether a sleeper is announced.
    #[inline(always)]
    pub fn armed(&self) -> bool {
        self.sleeping.load(Ordering::SeqCst) & !DOORBELL != 0
    }

    /// The word to sleep on.
    pub fn seq(&self) -> &W {
        &self.seq
    }

    /// Writes `v` over the sleepers' announcement, as a hostile peer may (the raw peer's).
    pub fn overwrite_sleeping(&self, v: u32) {
        self.sleeping.store(v, Ordering::SeqCst);
    }
}

/// The sequence values a queue's own waiter read when it armed.
#[derive(Clone, Copy, Debug, Default)]
pub struct Armed {
    public: u32,
    private: u32,
}

/// The queue's own waiter: step 1, announces it in both words.
#[inline(always)]
pub fn arm<W: FutexWord>(public: &Wake<W>, private: &Wake<W, true>) -> Armed {
    Armed { private: private.announce(SLEEPER), public: public.announce(SLEEPER) }
}

/// Step 3: sleeps until either word moves past what `arm` read or `timeout` passes. True when
/// it returned because `timeout` passed.
#[inline(always)]
pub fn block<W: FutexWord>(public: &Wake<W>, private: &Wake<W, true>, armed: Armed, timeout: Option<Duration>) -> bool {
    if timeout.is_some_and(|t| t.is_zero()) {
        return true;
    }
    public.seq.load(Ordering::SeqCst) == armed.public
        && private.seq.load(Ordering::SeqCst) == armed.private
        && W::wait_either(&public.seq, armed.public, &private.seq, armed.private, timeout)
}

/// After the block (or instead of it).
#[inline(always)]
pub fn disarm<W: FutexWord>(public: &Wake<W>, private: &Wake<W, true>) {
    private.withdraw(SLEEPER);
    public.withdraw(SLEEPER);
}

/// Model checking of the protocol: every interleaving (loom) of a sleeper and its wakers.
/// Run by `make check-loom` (`RUSTFLAGS="--cfg loom"`); not built otherwise.
#[cfg(all(test, loom))]
pub(super) mod loom_model {
    use super::*;
    use loom::sync::atomic::{AtomicBool, AtomicU32 as LoomU32, AtomicU64 as LoomU64};
    use loom::sync::{Arc, Condvar, Mutex};
    use loom::thread;

    /// A futex word: loom's atomic, and the kernel's futex as one mutex and condition variable
    /// for all words (a wait checks its words and sleeps under the mutex, a wake notifies
    /// under it: the kernel's check-and-sleep is atomic with respect to wakes in the same way).
    #[derive(Default)]
    pub(in super::super) struct Word(LoomU32);

    rung_word_for!(LoomU64);

    loom::lazy_static! {
        static ref KERNEL: (Mutex<()>, Condvar) = (Mutex::new(()), Condvar::new());
    }

    impl FutexWord for Word {
        type Rung = LoomU64;
        fn load(&self, o: Ordering) -> u32 {
            self.0.load(o)
        }
        fn store(&self, v: u32, o: Ordering) {
            self.0.store(v, o)
        }
        fn fetch_add(&self, v: u32, o: Ordering) -> u32 {
            self.0.fetch_add(v, o)
        }
        fn fetch_or(&self, v: u32, o: Ordering) -> u32 {
            self.0.fetch_or(v, o)
        }
        fn fetch_and(&self, v: u32, o: Ordering) -> u32 {
            self.0.fetch_and(v, o)
        }
        fn fence_seq_cst() {
            loom::sync::atomic::fence(Ordering::SeqCst)
        }
        fn wake(&self) {
            let _g = KERNEL.0.lock().unwrap();
            KERNEL.1.notify_all();
        }
        fn wake_private(&self) {
            self.wake();
        }
        fn wait_either(a: &Self, va: u32, b: &Self, vb: u32, timeout: Option<Duration>) -> bool {
            assert!(timeout.is_none(), "the model sleeps without a limit");
            let g = KERNEL.0.lock().unwrap();
            if a.0.load(Ordering::SeqCst) == va && b.0.load(Ordering::SeqCst) == vb {
                drop(KERNEL.1.wait(g).unwrap());
            }
            false
        }
    }

    /// One queue: its public and private words, and whether work waits (what a poll finds).
    #[derive(Default)]
    struct Queue {
        public: Wake<Word>,
        private: Wake<Word, true>,
        work: AtomicBool,
    }

    impl Queue {
        /// The queue's own waiter, as `dat_evd_wait` runs it: poll, arm, poll again, block,
        /// disarm, until a poll finds the work. A lost wake-up leaves it asleep for ever (loom
        /// reports the deadlock).
        fn wait(&self) {
            loop {
                if self.work.load(Ordering::SeqCst) {
                    return;
                }
                let armed = arm(&self.public, &self.private);
                if self.work.load(Ordering::SeqCst) {
                    disarm(&self.public, &self.private);
                    return;
                }
                block(&self.public, &self.private, armed, None);
                disarm(&self.public, &self.private);
            }
        }

        /// A CNO's waiter on this queue (and on its own word `own`, which our producers reach
        /// through the core's waker): announce the group bit, poll, block on both.
        fn wait_group(&self, own: &Wake<Word, true>) {
            loop {
                if self.work.load(Ordering::SeqCst) {
                    return;
                }
                let at_own = own.announce(SLEEPER);
                let at = self.public.announce(GROUP_SLEEPER);
                if !self.work.load(Ordering::SeqCst) {
                    Word::wait_either(self.public.seq(), at, own.seq(), at_own, None);
                }
                self.public.withdraw(GROUP_SLEEPER);
                own.withdraw(SLEEPER);
            }
        }

        /// A producer in a peer: the work, then the public word.
        fn produce_remote(&self) {
            self.work.store(true, Ordering::SeqCst);
            self.public.notify();
        }

        /// A producer in our process (a queue pair's poll, the progress thread): the work, then
        /// the private word.
        fn produce_local(&self) {
            self.work.store(true, Ordering::SeqCst);
            self.private.notify();
        }
    }

    /// A peer's producer wakes the queue's own waiter.
    #[test]
    fn a_peer_wakes_the_sleeper() {
        loom::model(|| {
            let q = Arc::new(Queue::default());
            let p = {
                let q = q.clone();
                thread::spawn(move || q.produce_remote())
            };
            q.wait();
            p.join().unwrap();
        });
    }

    /// Our own producer wakes the sleeper whatever a hostile peer writes into the public
    /// word's announcement meanwhile (0: it would suppress every wake-up that trusts it).
    #[test]
    fn our_producer_wakes_the_sleeper_while_a_peer_zeroes_the_public_word() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let q = Arc::new(Queue::default());
            let hostile = {
                let q = q.clone();
                thread::spawn(move || {
                    q.public.overwrite_sleeping(0);
                    q.public.overwrite_sleeping(0);
                })
            };
            let p = {
                let q = q.clone();
                thread::spawn(move || q.produce_local())
            };
            q.wait();
            p.join().unwrap();
            hostile.join().unwrap();
        });
    }

    /// The queue's own waiter and a CNO's waiter sleep on one public word at once; a peer's
    /// producer wakes both (neither withdraws the other's announcement).
    #[test]
    fn a_peer_wakes_both_sleepers_of_one_word() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(2);
        model.check(|| {
            let q = Arc::new(Queue::default());
            let cno = {
                let q = q.clone();
                thread::spawn(move || q.wait_group(&Wake::default()))
            };
            let p = {
                let q = q.clone();
                thread::spawn(move || q.produce_remote())
            };
            q.wait();
            p.join().unwrap();
            cno.join().unwrap();
        });
    }
}
