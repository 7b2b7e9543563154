//! The process's published area: two sealed memfds that every connected peer maps:
//!
//! - the public wake words, one [`WakeWord`] per completion queue (read-write for peers): a
//!   producer in a peer that adds work feeding that queue wakes its sleeper without a thread
//!   hand-off (our own producers use the queue's private word, [`OwnWake`]);
//! - a copy of the memory table ([`super::memtable`]), passed as a read-only fd: initiators
//!   check rkey, bounds, protection domain and rights there before they copy. The file is
//!   sealed against every write but through our own mapping, so no peer changes what another
//!   peer's initiator reads; what this process decides on is its private table anyway.
//!
//! The fds travel with the connection handshake ([`super::conn`]).

use super::super::WakeSource;
use super::sys::{self, Mapping};
use super::wake::{self, Armed, Wake, DOORBELL, GROUP_SLEEPER};
use parking_lot::Mutex;
use std::os::fd::OwnedFd;
use std::sync::atomic::AtomicU32;
use std::sync::OnceLock;
use std::time::Duration;

/// Completion queues per process (the device's `max_cq`).
pub const WAKE_SLOTS: usize = 4096;
/// Bytes of the wake words in the published area.
pub const WAKE_BYTES: usize = WAKE_SLOTS * std::mem::size_of::<WakeWord>();

/// A queue's public sleeping word (see [`super::wake`]).
pub type WakeWord = Wake;

struct Area {
    wake_fd: OwnedFd,
    /// A read-only descriptor of the table's memfd (what peers get).
    table_fd: OwnedFd,
    wake: Mapping,
    table: Mapping,
    free_wake: Mutex<Vec<u32>>,
}

fn area() -> Option<&'static Area> {
    static A: OnceLock<Option<Area>> = OnceLock::new();
    A.get_or_init(|| {
        let made = (|| -> std::io::Result<Area> {
            let wake_fd = sys::memfd(WAKE_BYTES)?;
            let (table_rw, table) = sys::memfd_written_here_only(super::memtable::TABLE_BYTES)?;
            Ok(Area {
                wake: Mapping::map(&wake_fd, WAKE_BYTES)?,
                table,
                table_fd: sys::reopen_read_only(&table_rw)?,
                wake_fd,
                free_wake: Mutex::new((0..WAKE_SLOTS as u32).rev().collect()),
            })
        })();
        made.map_err(|e| tracing::warn!("shm: cannot create the published area: {e}")).ok()
    })
    .as_ref()
}

/// The published area's fds (wake words, read-only table), to pass to a peer.
pub fn fds() -> Option<[&'static OwnedFd; 2]> {
    area().map(|a| [&a.wake_fd, &a.table_fd])
}

/// The bytes of our published memory table (zero-filled at creation): the copy peers read.
pub fn table_ptr() -> Option<*mut u8> {
    area().map(|a| a.table.ptr)
}

fn wake_at<'a>(base: *mut u8, i: u32) -> &'a WakeWord {
    // SAFETY: callers pass i < WAKE_SLOTS; the mapping lives as long as its owner, which hands
    // out these references only while it lives (process area: forever; peer area: the link).
    unsafe { &*(base.add(i as usize * std::mem::size_of::<WakeWord>()) as *const WakeWord) }
}

/// The sleeping words of one of our completion queues: its public word in the published area
/// (freed on drop) and its private word, which no peer can write (see [`super::wake`]).
pub struct OwnWake {
    pub index: u32,
    private: Wake<AtomicU32, true>,
}

impl OwnWake {
    pub fn alloc() -> Option<OwnWake> {
        let index = area()?.free_wake.lock().pop()?;
        Some(OwnWake { index, private: Wake::default() })
    }

    fn public(&self) -> &WakeWord {
        let a = area().expect("allocated from the area");
        wake_at(a.wake.ptr, self.index)
    }

    /// Our producer side: call after the work is visible. A system call only when the queue's
    /// own waiter sleeps.
    #[inline(always)]
    pub fn notify(&self) {
        self.private.notify();
    }

    /// Ends the queue's own waiter's current or coming sleep.
    pub fn interrupt(&self) {
        self.private.interrupt();
    }

    /// Announces the queue's own waiter (step 1).
    pub fn arm(&self) -> Armed {
        wake::arm(self.public(), &self.private)
    }

    /// Sleeps until a producer here or in a peer wakes the waiter armed at `armed`, or
    /// `timeout` passes. True when it returned because `timeout` passed.
    pub fn block(&self, armed: Armed, timeout: Option<Duration>) -> bool {
        wake::block(self.public(), &self.private, armed, timeout)
    }

    pub fn disarm(&self) {
        wake::disarm(self.public(), &self.private);
    }

    /// Asks producers in peers to ring the public word's doorbell at every addition
    /// ([`DOORBELL`]); after it returns, an addition either rings or was visible before.
    pub fn ring_on_every_addition(&self) {
        self.public().announce(DOORBELL);
    }

    /// The public word's doorbell ([`Wake::rung`]). A peer may also ring it at will, or hold it
    /// still: see [`super::cq::ShmCq`]'s doorbell for why that only costs time.
    #[inline(always)]
    pub fn rung(&self) -> u64 {
        self.public().rung()
    }

    /// See [`Wake::rung_seen`].
    #[inline(always)]
    pub fn rung_seen(&self, seen: u64) {
        self.public().rung_seen(seen)
    }

    /// Whether the queue's own waiter is announced (between `arm` and `disarm`).
    #[inline(always)]
    pub fn armed(&self) -> bool {
        self.private.armed()
    }

    /// Announces a sleeper on several queues (the same protocol as [`OwnWake::arm`], then a
    /// `futex_waitv` that holds the public word among others: our own producers reach that
    /// sleeper through the core's waker); returns what it sleeps on here.
    pub fn arm_group(&self) -> WakeSource {
        let public = self.public();
        let value = public.announce(GROUP_SLEEPER);
        WakeSource::Futex { word: public.seq(), value }
    }

    pub fn disarm_group(&self) {
        self.public().withdraw(GROUP_SLEEPER);
    }
}

impl Drop for OwnWake {
    fn drop(&mut self) {
        self.public().clear();
        if let Some(a) = area() {
            a.free_wake.lock().push(self.index);
        }
    }
}

/// A peer's published area, mapped: wake words read-write, memory table read-only.
pub struct PeerArea {
    wake: Mapping,
    pub table: Mapping,
}

impl PeerArea {
    /// Maps a peer's wake words (read-write) and memory table (read-only): files sealed
    /// against shrinking (else the peer could shrink them under our mappings), and long enough.
    pub fn map(wake_fd: &OwnedFd, table_fd: &OwnedFd) -> std::io::Result<PeerArea> {
        if !sys::sealed_against_shrinking(wake_fd) || !sys::sealed_against_shrinking(table_fd) {
            return Err(std::io::Error::other("published area not sealed against shrinking"));
        }
        if sys::file_size(wake_fd)? < WAKE_BYTES as u64
            || sys::file_size(table_fd)? < super::memtable::TABLE_BYTES as u64
        {
            return Err(std::io::Error::other("published area too small"));
        }
        Ok(PeerArea {
            wake: Mapping::map_at(wake_fd, 0, WAKE_BYTES, true)?,
            table: Mapping::map_at(table_fd, 0, super::memtable::TABLE_BYTES, false)?,
        })
    }

    /// The peer's wake word `i` (None: out of range, the peer has no such queue).
    pub fn wake(&self, i: u32) -> Option<&WakeWord> {
        ((i as usize) < WAKE_SLOTS).then(|| wake_at(self.wake.ptr, i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileExt;

    /// Peers get a read-only descriptor of the memory table, but any process of the user can
    /// open the file again read-write through /proc: the file takes no write but ours.
    #[test]
    fn the_published_table_takes_no_writes_but_ours() {
        let [_, table] = fds().expect("a published area");
        let path = format!("/proc/self/fd/{}", table.as_raw_fd());
        let file = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        assert!(file.write_at(&[1], 0).is_err(), "a write through a descriptor opened again");
        // SAFETY: a shared mapping of a file we hold; the result is checked, and unmapped if made.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if p != libc::MAP_FAILED {
            // SAFETY: the mapping just made.
            unsafe { libc::munmap(p, 4096) };
        }
        assert_eq!(p, libc::MAP_FAILED, "a writable mapping through a descriptor opened again");
    }
}
