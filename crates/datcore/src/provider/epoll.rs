//! An epoll set made once: one descriptor a thread sleeps on for several others. poll(2)
//! registers and unregisters every descriptor at every sleep; the set registers them when it
//! is made, so a sleep costs the kernel about what a poll(2) on one descriptor does. A verbs
//! CQ's waiter sleeps on its completion channel and its interrupt eventfd through one.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

pub struct EpollSet(OwnedFd);

/// How many descriptors a set watches: each one's readiness comes back from one `wait`.
pub const MAX_FDS: usize = 4;

impl EpollSet {
    /// A set watching each of `fds` (at most [`MAX_FDS`]) for input, level-triggered.
    pub fn new(fds: &[RawFd]) -> std::io::Result<EpollSet> {
        EpollSet::with_edges(fds, 0)
    }

    /// As [`EpollSet::new`], but the descriptors whose bit (by index) is set in `edges` are
    /// edge-triggered: reported once each time they are signalled, not for as long as they
    /// stay readable (for a descriptor whose owner resets its readiness in a call we cannot
    /// make).
    pub fn with_edges(fds: &[RawFd], edges: u32) -> std::io::Result<EpollSet> {
        assert!(fds.len() <= MAX_FDS, "an EpollSet watches at most {MAX_FDS} descriptors");
        // SAFETY: plain epoll_create1(2) call.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if ep < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        let set = EpollSet(unsafe { OwnedFd::from_raw_fd(ep) });
        for (i, &fd) in fds.iter().enumerate() {
            let edge = if edges & 1 << i != 0 { libc::EPOLLET as u32 } else { 0 };
            let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32 | edge, u64: i as u64 };
            // SAFETY: a live epoll descriptor and event; the kernel copies the event.
            if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(set)
    }

    /// Sleeps until one of the set's descriptors is readable, `timeout` passes (None: no limit;
    /// rounded up to whole milliseconds, so the sleep never ends before it) or a signal comes.
    /// Returns the readable ones as bits by their index in [`EpollSet::new`]'s list (0 after a
    /// signal), or None when the timeout passed with none readable.
    pub fn wait(&self, timeout: Option<Duration>) -> Option<u32> {
        let ms = timeout.map_or(-1, |t| t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32);
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; MAX_FDS];
        // SAFETY: a live epoll descriptor and room for evs.len() events.
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), evs.len() as i32, ms) };
        if n == 0 {
            return None;
        }
        Some(evs[..n.max(0) as usize].iter().fold(0, |ready, ev| ready | 1 << ev.u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::eventfd::EventFd;

    #[test]
    fn reports_the_readable_descriptors_by_index_and_times_out() {
        let (a, b) = (EventFd::new().unwrap(), EventFd::new().unwrap());
        let set = EpollSet::new(&[a.fd(), b.fd()]).unwrap();
        let t0 = std::time::Instant::now();
        assert_eq!(set.wait(Some(Duration::from_micros(1500))), None);
        assert!(t0.elapsed() >= Duration::from_micros(1500), "a timeout is rounded up, never down");
        b.ring();
        assert_eq!(set.wait(None), Some(0b10));
        a.ring();
        assert_eq!(set.wait(Some(Duration::ZERO)), Some(0b11), "level-triggered: b is still readable");
        a.clear();
        b.clear();
        assert_eq!(set.wait(Some(Duration::ZERO)), None);
    }

    #[test]
    fn an_edge_triggered_descriptor_is_reported_once_per_signal() {
        let (a, b) = (EventFd::new().unwrap(), EventFd::new().unwrap());
        let set = EpollSet::with_edges(&[a.fd(), b.fd()], 0b10).unwrap();
        b.ring();
        assert_eq!(set.wait(Some(Duration::ZERO)), Some(0b10));
        assert_eq!(set.wait(Some(Duration::ZERO)), None, "still readable, but reported once");
        b.ring();
        assert_eq!(set.wait(Some(Duration::ZERO)), Some(0b10), "signalled again: reported again");
        a.ring();
        assert_eq!(set.wait(Some(Duration::ZERO)), Some(0b01));
        assert_eq!(set.wait(Some(Duration::ZERO)), Some(0b01), "a level-triggered one stays reported");
    }
}
