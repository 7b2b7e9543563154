//! How long a wait polls before it sleeps, and the time of one wait: shared by
//! `dat_evd_wait` ([`crate::evd`]) and `dat_cno_wait` ([`crate::cno`]).

use std::time::{Duration, Instant};

/// How long `dat_evd_wait` (and `dat_cno_wait`) polls before it sleeps: `DAT_EVD_SPIN_US` (microseconds), default
/// 50 µs on a machine with more than one CPU and 0 on one CPU (where spinning only delays the
/// peer that would produce the event). Spinning pays when the reply is due within a few
/// microseconds, as in a ping-pong; a sleep and wake-up costs several microseconds even when
/// the waker is the sleeper's own peer.
pub fn spin_budget() -> Duration {
    static BUDGET: std::sync::LazyLock<Duration> = std::sync::LazyLock::new(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let default = if cpus > 1 { 50 } else { 0 };
        let us = std::env::var("DAT_EVD_SPIN_US").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default);
        Duration::from_micros(us)
    });
    *BUDGET
}

/// The spin of a `dat_evd_wait` (or `dat_cno_wait`), adapted per EVD (or CNO) between 0 and [`spin_budget`]: halved after a
/// wait that spun it all and still had to sleep (the event comes later than that, or the
/// machine is so busy that the spinner keeps the event's producer off a CPU), doubled (to at
/// least [`AdaptiveSpin::floor`]) after a wait that the spin satisfied. Halved below the floor
/// it is 0: the wait arms and sleeps at once, as OFED's does, which is what a blocking exchange
/// whose replies take tens of microseconds (an emulated or remote device) wants. While it is 0,
/// one wait in [`SPIN_PROBE_EVERY`] spins the floor, so that events that come quickly again
/// bring the spin back.
#[derive(Clone, Copy)]
pub(crate) struct AdaptiveSpin {
    spin: Duration,
    /// Waits since the spin dropped to 0.
    unspun: u32,
}

/// While the adaptive spin is 0, every this many waits one spins [`AdaptiveSpin::floor`].
const SPIN_PROBE_EVERY: u32 = 32;

impl AdaptiveSpin {
    pub(crate) fn new() -> Self {
        AdaptiveSpin { spin: spin_budget(), unspun: 0 }
    }

    /// The shortest spin (2 µs, or the budget if smaller); below it the spin is 0.
    fn floor() -> Duration {
        spin_budget().min(Duration::from_micros(2))
    }

    /// How long this wait spins.
    pub(crate) fn this_wait(&mut self) -> Duration {
        if !self.spin.is_zero() {
            return self.spin;
        }
        self.unspun = self.unspun.wrapping_add(1);
        if self.unspun.is_multiple_of(SPIN_PROBE_EVERY) {
            Self::floor()
        } else {
            Duration::ZERO
        }
    }

    pub(crate) fn satisfied(&mut self) {
        self.spin = (self.spin * 2).min(spin_budget()).max(Self::floor());
    }

    pub(crate) fn slept(&mut self) {
        self.spin /= 2;
        if self.spin < Self::floor() {
            self.spin = Duration::ZERO;
        }
    }
}

/// `DAT_TIMEOUT_INFINITE`.
pub const TIMEOUT_INFINITE: u32 = u32::MAX;

/// How many empty polls a spinning wait makes between two reads of the clock.
const SPIN_POLLS_PER_CLOCK: u32 = 16;

/// The time of one wait (`dat_evd_wait`, `dat_cno_wait`): its deadline and the end of its spin. The clock is read only
/// where a spin or a timed sleep needs it (at the start of a spin; at a timed wait's first sleep,
/// which sleeps the whole timeout, unless the wait is for one event), after a sleep that
/// returned without the events, and while spinning once per [`SPIN_POLLS_PER_CLOCK`] polls:
/// where it is not the TSC (an emulated guest's HPET) a read is a system call of microseconds,
/// and even the TSC's costs a sleeping wait about a tenth of its own instructions.
///
/// A timed wait for one event that does not spin reads no clock before it sleeps: the kernel
/// times its first sleep, given the whole timeout, and a first sleep that ends by its timeout
/// ends the wait. A first sleep that ends before its timeout without the event (woken by a
/// channel event left from an earlier arm, which ends it at once, by a CNO attached meanwhile,
/// or by a signal; the usual wake-ups bring the event) starts the clock then, and the timeout
/// counts from there: such a wait can last the length of its first sleep beyond its timeout.
pub(crate) struct WaitClock {
    timeout: Option<Duration>,
    deadline: Option<Instant>,
    spin_until: Option<Instant>,
    /// None until the clock is first read.
    now: Option<Instant>,
    polls: u32,
    /// The first sleep may go without the clock (see [`WaitClock::sleep_timeout`]).
    first_sleep_unclocked: bool,
    /// An unclocked first sleep ended by its timeout: the whole timeout has passed.
    expired: bool,
}

impl WaitClock {
    /// `single`: the wait is for one event, so that its first sleep may go without the clock.
    pub(crate) fn start(timeout_us: u32, spin: Duration, single: bool) -> Self {
        let timeout = (timeout_us != TIMEOUT_INFINITE).then(|| Duration::from_micros(timeout_us as u64));
        let mut clock = WaitClock {
            timeout,
            deadline: None,
            spin_until: None,
            now: None,
            polls: 0,
            first_sleep_unclocked: single,
            expired: false,
        };
        if !spin.is_zero() {
            let now = clock.start_clock();
            clock.spin_until = Some(clock.deadline.map_or(now + spin, |d| d.min(now + spin)));
        }
        clock
    }

    /// Reads the clock for the first time; the deadline counts from here.
    fn start_clock(&mut self) -> Instant {
        let now = Instant::now();
        self.now = Some(now);
        self.deadline = self.timeout.map(|t| now + t);
        now
    }

    /// Advances the clock where needed; true once the deadline has passed. Before the clock
    /// is started nothing has been waited for yet.
    pub(crate) fn timed_out(&mut self) -> bool {
        if self.expired {
            return true;
        }
        let Some(now) = self.now.as_mut() else { return false };
        self.polls = self.polls.wrapping_add(1);
        let spun_out = self.spin_until.is_none_or(|u| *now >= u);
        if spun_out || self.polls.is_multiple_of(SPIN_POLLS_PER_CLOCK) {
            *now = Instant::now();
        }
        self.deadline.is_some_and(|d| *now >= d)
    }

    /// How long the next sleep may last (None: no limit): the whole timeout at a timed wait's
    /// first sleep (which starts the clock, unless the wait is for one event), else what is
    /// left of it as of the last reading.
    pub(crate) fn sleep_timeout(&mut self) -> Option<Duration> {
        let timeout = self.timeout?;
        match (self.now, self.deadline) {
            (Some(now), Some(deadline)) => Some(deadline.saturating_duration_since(now)),
            _ if self.first_sleep_unclocked => {
                self.first_sleep_unclocked = false;
                Some(timeout)
            }
            _ => {
                self.start_clock();
                Some(timeout)
            }
        }
    }

    /// After a sleep given [`WaitClock::sleep_timeout`]'s timeout: `timed_out` when the sleep
    /// ended by it. A sleep ended by its timeout with the clock not started was the unclocked
    /// first one (a sleep without a timeout never times out): it expires the wait.
    pub(crate) fn slept(&mut self, timed_out: bool) {
        if timed_out && self.now.is_none() {
            self.expired = true;
        }
    }

    /// Whether the spin goes on (as of the last [`WaitClock::timed_out`]).
    pub(crate) fn spinning(&self) -> bool {
        matches!((self.now, self.spin_until), (Some(now), Some(until)) if now < until)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_for_one_event_sleeps_first_without_the_clock() {
        let ms = Duration::from_millis(5);
        // Ended by its timeout: the wait has expired, the clock never read.
        let mut c = WaitClock::start(5000, Duration::ZERO, true);
        assert!(!c.timed_out());
        assert_eq!(c.sleep_timeout(), Some(ms));
        assert!(c.now.is_none(), "no clock read before the first sleep");
        c.slept(true);
        assert!(c.timed_out());
        assert!(c.now.is_none());
        // Woken before its timeout without the event: the clock starts and the timeout counts
        // from there.
        let mut c = WaitClock::start(5000, Duration::ZERO, true);
        assert_eq!(c.sleep_timeout(), Some(ms));
        c.slept(false);
        assert!(!c.timed_out());
        let t0 = Instant::now();
        assert_eq!(c.sleep_timeout(), Some(ms));
        assert!(c.deadline.is_some_and(|d| d >= t0 + ms));
        // A later sleep ended by its timeout is judged by the clock, not by the flag.
        c.slept(true);
        assert!(!c.expired);
        // A wait for more than one event, or one that spins, reads the clock before it sleeps.
        let mut c = WaitClock::start(5000, Duration::ZERO, false);
        assert_eq!(c.sleep_timeout(), Some(ms));
        assert!(c.now.is_some() && c.deadline.is_some());
        let c = WaitClock::start(5000, Duration::from_micros(10), true);
        assert!(c.now.is_some());
        // An infinite wait never reads it.
        let mut c = WaitClock::start(TIMEOUT_INFINITE, Duration::ZERO, true);
        assert_eq!(c.sleep_timeout(), None);
        c.slept(false);
        assert!(!c.timed_out() && c.now.is_none());
    }

    #[test]
    fn adaptive_spin_drops_to_zero_probes_and_recovers() {
        let budget = spin_budget();
        if budget < AdaptiveSpin::floor() * 2 {
            return; // DAT_EVD_SPIN_US below 4 µs, or one CPU: nothing to adapt
        }
        let mut s = AdaptiveSpin::new();
        assert_eq!(s.this_wait(), budget);
        // Spins in vain halve it until it is below the floor, then it is 0.
        let mut halvings = 0;
        while !s.spin.is_zero() {
            s.slept();
            halvings += 1;
            assert!(s.spin.is_zero() || s.spin >= AdaptiveSpin::floor());
        }
        assert!(halvings > 1);
        // At 0, one wait in SPIN_PROBE_EVERY spins the floor.
        let spins: Vec<Duration> = (0..2 * SPIN_PROBE_EVERY).map(|_| s.this_wait()).collect();
        assert_eq!(spins.iter().filter(|d| **d == AdaptiveSpin::floor()).count(), 2);
        assert_eq!(spins.iter().filter(|d| d.is_zero()).count(), 2 * SPIN_PROBE_EVERY as usize - 2);
        // A probe the spin satisfied brings the spin back, doubling up to the budget.
        s.satisfied();
        assert_eq!(s.this_wait(), AdaptiveSpin::floor());
        for _ in 0..32 {
            s.satisfied();
        }
        assert_eq!(s.this_wait(), budget);
    }
}
