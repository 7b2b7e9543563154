//! One thread sleeping on several completion queues at once: a CNO's waiter
//! (`dat_cno_wait`), which must be woken by a completion on any of its EVDs the way an EVD's
//! own waiter is, by the producer itself and not by a provider thread's later look.
//!
//! The protocol is the queues' own (see [`super::CompletionQueue`]): **arm** every queue
//! ([`super::CompletionQueue::arm_group`], which hands back the queue's [`WakeSource`]) and the
//! sleeper's own word ([`GroupSleeper::arm`]), **poll** every queue once more, then **block**
//! on all of them together ([`SleepSet::block`]). Invariant: a completion added to an armed
//! queue after its arm is seen by the second poll or ends the block, and so does a
//! [`GroupSleeper::interrupt`] after [`GroupSleeper::arm`] (an event the core queues itself,
//! a CNO triggered from elsewhere, a change of the set).
//!
//! How it blocks depends on what the queues give: futex words (shm) are slept on together with
//! the sleeper's own word in one `futex_waitv`; descriptors (verbs completion channels) with the
//! sleeper's eventfd in one poll(2). A set that mixes the two, holds more than a call can
//! take, or meets a kernel without `futex_waitv` (before Linux 5.16) sleeps on what it can and
//! looks again every [`UNCOVERED_LOOK`]: the queues left out are then woken that late. So does
//! a set with a queue that has no signal to give ([`WakeSource::Tick`]), whose sleeper's
//! looks are then what finds its completions.

use super::eventfd::EventFd;
use super::futex::{self, FutexWaitv, Waitv, WAITV_MAX};
use std::mem::MaybeUninit;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// What a thread sleeping on several queues waits on for one of them.
#[derive(Clone, Copy, Debug)]
pub enum WakeSource {
    /// A shared futex word: the sleep ends once it no longer holds `value` (a producer in any
    /// process bumps it and issues `FUTEX_WAKE`). The word outlives the sleep: it belongs to a
    /// queue the sleeper holds.
    Futex { word: *const AtomicU32, value: u32 },
    /// A descriptor that becomes readable (left readable: the queue takes what it holds).
    Fd(RawFd),
    /// Nothing that a completion signals (a queue whose arrivals only its own polls find):
    /// the sleep lasts at most [`UNCOVERED_LOOK`], and the sleeper then polls the queue again.
    Tick,
}

/// How long a sleep lasts at most when some of its queues could not be included (see the
/// module's documentation).
pub const UNCOVERED_LOOK: Duration = Duration::from_millis(1);

/// [`GroupSleeper`]'s `sleeping`: awake.
const AWAKE: u32 = 0;
/// Armed, or asleep in `futex_waitv`: an interrupt bumps `seq` and wakes it.
const ON_FUTEX: u32 = 1;
/// Asleep in poll(2): an interrupt also rings the eventfd.
const ON_FD: u32 = 2;

/// The sleeper's own word: what [`GroupSleeper::interrupt`] wakes, whichever way it sleeps.
#[derive(Default)]
pub struct GroupSleeper {
    seq: AtomicU32,
    sleeping: AtomicU32,
    /// Made at the first sleep on descriptors (None: it could not be made).
    fd: OnceLock<Option<EventFd>>,
}

impl GroupSleeper {
    /// Step 1 for the sleeper itself: from here on, an [`GroupSleeper::interrupt`] ends the
    /// coming block. Returns the value to pass to [`SleepSet::block`].
    pub fn arm(&self) -> u32 {
        self.sleeping.store(ON_FUTEX, Ordering::SeqCst);
        self.seq.load(Ordering::SeqCst)
    }

    /// After the block (or instead of it).
    pub fn disarm(&self) {
        self.sleeping.store(AWAKE, Ordering::SeqCst);
    }

    /// Ends a current block, or makes the next one after an `arm` return at once. No system
    /// call while nobody sleeps.
    pub fn interrupt(&self) {
        self.seq.fetch_add(1, Ordering::SeqCst);
        match self.sleeping.load(Ordering::SeqCst) {
            AWAKE => {}
            ON_FUTEX => futex::futex_wake(&self.seq),
            _ => {
                futex::futex_wake(&self.seq);
                if let Some(Some(fd)) = self.fd.get() {
                    fd.ring();
                }
            }
        }
    }
}

/// The queues of one sleep, gathered on the stack (no allocation, and nothing written but the
/// entries used): futex words and descriptors, up to what one call takes. Slot 0 of each list
/// is the sleeper's own word or eventfd, written by [`SleepSet::block`]; `words[1..=nwords]`
/// and `fds[1..=nfds]` by [`SleepSet::add`].
pub struct SleepSet {
    words: [MaybeUninit<FutexWaitv>; WAITV_MAX],
    nwords: usize,
    fds: [MaybeUninit<libc::pollfd>; WAITV_MAX],
    nfds: usize,
    /// Sources left out (no room, or [`WakeSource::Tick`]): the sleep is then bounded by
    /// [`UNCOVERED_LOOK`].
    left_out: bool,
}

impl Default for SleepSet {
    fn default() -> Self {
        SleepSet {
            words: [const { MaybeUninit::uninit() }; WAITV_MAX],
            nwords: 0,
            fds: [const { MaybeUninit::uninit() }; WAITV_MAX],
            nfds: 0,
            left_out: false,
        }
    }
}

impl SleepSet {
    /// Adds one armed queue's source. Slot 0 of each list is kept for the sleeper's own word
    /// or eventfd.
    pub fn add(&mut self, source: WakeSource) {
        match source {
            WakeSource::Futex { word, value } if self.nwords + 1 < WAITV_MAX => {
                self.nwords += 1;
                self.words[self.nwords].write(FutexWaitv::new(word, value));
            }
            WakeSource::Fd(fd) if self.nfds + 1 < WAITV_MAX => {
                self.nfds += 1;
                self.fds[self.nfds].write(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
            }
            WakeSource::Futex { .. } | WakeSource::Fd(_) | WakeSource::Tick => self.left_out = true,
        }
    }

    /// Step 3: sleeps until a source fires, `sleeper` is interrupted after its `arm` (which
    /// returned `armed_at`), or `timeout` passes (None: no limit). True only when it ended by
    /// `timeout`. Descriptors, if any, are slept on and futex words then left out.
    pub fn block(&mut self, sleeper: &GroupSleeper, armed_at: u32, timeout: Option<Duration>) -> bool {
        let capped = Some(timeout.map_or(UNCOVERED_LOOK, |t| t.min(UNCOVERED_LOOK)));
        let (limit, timed_out) = if self.nfds > 0 {
            let own = sleeper.fd.get_or_init(|| EventFd::new().ok()).as_ref();
            // Futex words cannot join a poll(2), nor an interrupt without the eventfd.
            let covered = !self.left_out && self.nwords == 0 && own.is_some();
            let limit = if covered { timeout } else { capped };
            (limit, self.block_on_fds(sleeper, own, armed_at, limit))
        } else {
            let limit = if self.left_out { capped } else { timeout };
            self.words[0].write(FutexWaitv::new(&sleeper.seq, armed_at));
            // SAFETY: words[0] was just written, words[1..=nwords] by `add`; MaybeUninit<T>
            // has T's layout.
            let words =
                unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<FutexWaitv>(), self.nwords + 1) };
            match futex::futex_waitv(words, limit) {
                Waitv::Woken => (limit, false),
                Waitv::TimedOut => (limit, true),
                Waitv::Unsupported => (capped, futex::futex_wait(&sleeper.seq, armed_at, capped)),
            }
        };
        // The caller's timeout ended the sleep only if it was not shortened here.
        timed_out && limit == timeout
    }

    /// poll(2) on the sleeper's eventfd (`own`, if it could be made) and the descriptors.
    /// True when `limit` passed.
    fn block_on_fds(
        &mut self,
        sleeper: &GroupSleeper,
        own: Option<&EventFd>,
        armed_at: u32,
        limit: Option<Duration>,
    ) -> bool {
        if own.is_some() {
            // Interrupts from here on ring the eventfd; one that came since `arm` moved `seq`.
            sleeper.sleeping.store(ON_FD, Ordering::SeqCst);
            if sleeper.seq.load(Ordering::SeqCst) != armed_at {
                return false;
            }
        }
        // fd -1: poll(2) ignores the slot.
        let fd = own.map_or(-1, |o| o.fd());
        self.fds[0].write(libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
        let timed_out = self.poll_fds(limit);
        // SAFETY: written above.
        let own_ready = unsafe { self.fds[0].assume_init_ref() }.revents != 0;
        if let Some(own) = own.filter(|_| own_ready) {
            own.clear();
        }
        timed_out
    }

    /// poll(2) on `fds[..=nfds]` (all written; slot 0 may be -1: ignored). True when `limit`
    /// passed.
    fn poll_fds(&mut self, limit: Option<Duration>) -> bool {
        let ms = limit.map_or(-1, |t| t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32);
        // SAFETY: fds[..=nfds] are written pollfds (MaybeUninit<T> has T's layout); the
        // descriptors belong to queues the caller holds for the duration of the call.
        let n =
            unsafe { libc::poll(self.fds.as_mut_ptr().cast::<libc::pollfd>(), (self.nfds + 1) as libc::nfds_t, ms) };
        n == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    /// A queue's word as a producer bumps it.
    fn bump(word: &AtomicU32) {
        word.fetch_add(1, Ordering::SeqCst);
        futex::futex_wake(word);
    }

    #[test]
    fn futex_sources_and_the_sleeper_end_a_sleep_and_an_early_interrupt_is_kept() {
        let sleeper = Arc::new(GroupSleeper::default());
        let words: Arc<[AtomicU32; 3]> = Arc::new(Default::default());
        let set = |armed: &[usize]| {
            let mut s = SleepSet::default();
            for &i in armed {
                s.add(WakeSource::Futex { word: &words[i], value: words[i].load(Ordering::SeqCst) });
            }
            s
        };
        // Nothing happens: the timeout.
        let at = sleeper.arm();
        let t0 = Instant::now();
        assert!(set(&[0, 1, 2]).block(&sleeper, at, Some(Duration::from_millis(20))));
        assert!(t0.elapsed() >= Duration::from_millis(20));
        // An interrupt between arm and block: the block returns at once.
        let at = sleeper.arm();
        sleeper.interrupt();
        assert!(!set(&[0, 1, 2]).block(&sleeper, at, None));
        sleeper.disarm();
        // A producer on the third queue, later.
        for (i, from_sleeper) in [(2usize, false), (0, true)] {
            let at = sleeper.arm();
            let mut s = set(&[0, 1, 2]);
            let (w, sl) = (words.clone(), sleeper.clone());
            let t = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(10));
                if from_sleeper {
                    sl.interrupt();
                } else {
                    bump(&w[i]);
                }
            });
            assert!(!s.block(&sleeper, at, Some(Duration::from_secs(10))), "woken, not timed out");
            sleeper.disarm();
            t.join().unwrap();
        }
    }

    #[test]
    fn descriptor_sources_and_the_sleepers_eventfd_end_a_sleep() {
        let sleeper = Arc::new(GroupSleeper::default());
        let (a, b) = (EventFd::new().unwrap(), EventFd::new().unwrap());
        let at = sleeper.arm();
        let mut s = SleepSet::default();
        s.add(WakeSource::Fd(a.fd()));
        s.add(WakeSource::Fd(b.fd()));
        assert!(s.block(&sleeper, at, Some(Duration::from_millis(5))));
        b.ring();
        assert!(!s.block(&sleeper, at, Some(Duration::from_secs(10))));
        b.clear();
        let sl = sleeper.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(10));
            sl.interrupt();
        });
        assert!(!s.block(&sleeper, at, Some(Duration::from_secs(10))));
        t.join().unwrap();
        sleeper.disarm();
    }
}
