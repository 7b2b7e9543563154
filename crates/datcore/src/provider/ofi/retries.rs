//! Control messages libfabric could not take yet (`FI_EP_RDM`; see rdm.rs): a send refused
//! with `-FI_EAGAIN` (rxm connecting to the peer underneath, or refusing because the peer does
//! not answer) waits, and the CM thread tries it again.
//!
//! Each destination (an entry of the control AV) has a queue of its own, kept in order, so a
//! peer that does not answer holds back only the messages to it. A destination whose message
//! is refused again waits twice as long before the next try, from [`FIRST_BACKOFF`] up to
//! [`MAX_BACKOFF`]: each try to an unreachable peer costs rxm a TCP connection attempt.
//!
//! Pure bookkeeping: the caller posts, under the lock that guards this table.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// The wait before the first retry to a destination.
pub(super) const FIRST_BACKOFF: Duration = Duration::from_millis(1);
/// The longest wait between two tries to a destination.
pub(super) const MAX_BACKOFF: Duration = Duration::from_millis(64);

/// A control send waiting for libfabric to take it.
pub(super) struct Waiting {
    /// The control AV entry it goes to.
    pub to: u64,
    pub bytes: Box<[u8]>,
    /// The connection it is about (0: none).
    pub token: u64,
    /// When it was first refused.
    pub since: Instant,
}

/// What became of one try ([`Retries::retry`]'s `post`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Tried {
    /// libfabric took it.
    Sent,
    /// Refused again: it waits on, with the messages behind it.
    Again,
    /// Given up (the caller reports it); the next one to the destination is tried.
    Dropped,
}

struct Destination {
    queue: VecDeque<Waiting>,
    backoff: Duration,
    next_try: Instant,
}

/// The waiting messages by destination.
#[derive(Default)]
pub(super) struct Retries {
    by_to: HashMap<u64, Destination>,
}

impl Retries {
    /// Whether messages to `to` wait: a new one to it must wait behind them.
    pub fn holds(&self, to: u64) -> bool {
        self.by_to.contains_key(&to)
    }

    /// Queues `w` behind the messages waiting for its destination; a destination that had
    /// none is tried again [`FIRST_BACKOFF`] after `now`.
    pub fn push(&mut self, w: Waiting, now: Instant) {
        let d = self.by_to.entry(w.to).or_insert_with(|| Destination {
            queue: VecDeque::new(),
            backoff: FIRST_BACKOFF,
            next_try: now + FIRST_BACKOFF,
        });
        d.queue.push_back(w);
    }

    /// Tries the destinations whose time has come at `now`: `post` on each one's messages in
    /// order, until one is refused again (the destination then waits twice as long as before,
    /// at most [`MAX_BACKOFF`]) or none is left. Returns how long until the next try is due
    /// (None: nothing waits).
    pub fn retry(&mut self, now: Instant, mut post: impl FnMut(&Waiting) -> Tried) -> Option<Duration> {
        self.by_to.retain(|_, d| {
            if d.next_try > now {
                return true;
            }
            while let Some(w) = d.queue.front() {
                match post(w) {
                    Tried::Sent | Tried::Dropped => {
                        d.queue.pop_front();
                    }
                    Tried::Again => {
                        d.backoff = (d.backoff * 2).min(MAX_BACKOFF);
                        d.next_try = now + d.backoff;
                        return true;
                    }
                }
            }
            false
        });
        self.by_to.values().map(|d| d.next_try.saturating_duration_since(now)).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(to: u64, tag: u8, since: Instant) -> Waiting {
        Waiting { to, bytes: vec![tag].into_boxed_slice(), token: 0, since }
    }

    /// A destination that refuses holds back only its own messages, and is tried at growing
    /// intervals; the others go in order as soon as they are due.
    #[test]
    fn a_refusing_destination_backs_off_alone() {
        let t0 = Instant::now();
        let mut r = Retries::default();
        for (to, tag) in [(1, 10), (2, 20), (1, 11), (2, 21)] {
            r.push(msg(to, tag, t0), t0);
        }
        assert!(r.holds(1) && r.holds(2) && !r.holds(3));
        assert_eq!(r.retry(t0, |_| panic!("nothing is due yet")), Some(FIRST_BACKOFF));
        let mut sent = Vec::new();
        let mut now = t0 + FIRST_BACKOFF;
        let next = r.retry(now, |w| {
            if w.to == 1 {
                return Tried::Again;
            }
            sent.push(w.bytes[0]);
            Tried::Sent
        });
        assert_eq!(sent, [20, 21], "destination 2 went, in order, although 1 refused");
        assert!(!r.holds(2) && r.holds(1));
        assert_eq!(next, Some(FIRST_BACKOFF * 2));
        let mut waits = Vec::new();
        for _ in 0..8 {
            now += r.retry(now, |_| panic!("not due")).expect("1 waits");
            waits.push(r.retry(now, |_| Tried::Again).expect("1 still waits"));
        }
        assert_eq!(waits[0], FIRST_BACKOFF * 4);
        assert!(waits.windows(2).all(|p| p[1] >= p[0]), "the intervals grow: {waits:?}");
        assert_eq!(*waits.last().unwrap(), MAX_BACKOFF, "up to the cap");
        let mut order = Vec::new();
        let next = r.retry(now + MAX_BACKOFF, |w| {
            order.push(w.bytes[0]);
            if w.bytes[0] == 10 {
                Tried::Dropped
            } else {
                Tried::Sent
            }
        });
        assert_eq!(order, [10, 11], "a message given up lets the next one to its destination go");
        assert_eq!(next, None);
        assert!(!r.holds(1));
    }
}
