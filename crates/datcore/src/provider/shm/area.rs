//! The process's published area: two sealed memfds that every connected peer maps:
//!
//! - the wake words, one [`WakeWord`] per completion queue (read-write for peers): a producer
//!   in any process that adds work feeding that queue wakes its sleeper without a thread
//!   hand-off;
//! - a copy of the memory table ([`super::memtable`]), passed as a read-only fd: initiators
//!   check rkey, bounds, protection domain and rights there before they copy. The file is
//!   sealed against every write but through our own mapping, so no peer changes what another
//!   peer's initiator reads; what this process decides on is its private table anyway.
//!
//! The fds travel with the connection handshake ([`super::conn`]).

use super::super::futex;
use super::super::WakeSource;
use super::sys::{self, Mapping};
use parking_lot::Mutex;
use std::os::fd::OwnedFd;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// Completion queues per process (the device's `max_cq`).
pub const WAKE_SLOTS: usize = 4096;
/// Bytes of the wake words in the published area.
pub const WAKE_BYTES: usize = WAKE_SLOTS * std::mem::size_of::<WakeWord>();

/// A cross-process sleeping word for one completion queue.
///
/// Lost-wake-up invariant: a producer makes its work visible (a ring record or queue entry), then
/// `fence(SeqCst)` and reads `sleeping`; the sleeper sets its bit in `sleeping`, then (SeqCst)
/// reads `seq`, then polls for work, then `FUTEX_WAIT`s on `seq` with the value it read. By the
/// SeqCst order, either the sleeper's poll sees the work, or the producer sees `sleeping` and
/// bumps `seq` (so the wait returns at once, or is woken by the `FUTEX_WAKE` that follows).
///
/// Two sleepers may use one word at once, each with its own bit of `sleeping`, so that neither
/// clears the other's announcement: the EVD's own waiter ([`WakeWord::arm`], [`SLEEPER`]) and a
/// CNO's waiter sleeping on several queues ([`WakeWord::arm_group`], [`GROUP_SLEEPER`]). Every
/// wake-up (`FUTEX_WAKE` of all) reaches both. Peers only test `sleeping` for 0.
#[repr(C, align(64))]
pub struct WakeWord {
    seq: AtomicU32,
    sleeping: AtomicU32,
}

/// [`WakeWord`]'s `sleeping` bit of the queue's own waiter (in `block`).
const SLEEPER: u32 = 1;
/// [`WakeWord`]'s `sleeping` bit of a waiter sleeping on several queues at once.
const GROUP_SLEEPER: u32 = 2;

impl WakeWord {
    /// Producer side: call after the work is visible. A system call only when someone sleeps.
    pub fn notify(&self) {
        fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) != 0 {
            self.interrupt();
        }
    }

    /// Ends a current or coming sleep unconditionally.
    pub fn interrupt(&self) {
        self.seq.fetch_add(1, Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) != 0 {
            futex::futex_wake(&self.seq);
        }
    }

    /// Announces the queue's sleeper; returns the sequence value to wait on.
    pub fn arm(&self) -> u32 {
        self.sleeping.fetch_or(SLEEPER, Ordering::SeqCst);
        self.seq.load(Ordering::SeqCst)
    }

    /// Announces a sleeper on several queues (the same protocol as [`WakeWord::arm`], then a
    /// `futex_waitv` that holds this word among others); returns what it sleeps on here.
    pub fn arm_group(&self) -> WakeSource {
        self.sleeping.fetch_or(GROUP_SLEEPER, Ordering::SeqCst);
        WakeSource::Futex { word: &self.seq, value: self.seq.load(Ordering::SeqCst) }
    }

    pub fn disarm_group(&self) {
        self.sleeping.fetch_and(!GROUP_SLEEPER, Ordering::SeqCst);
    }

    /// Sleeps until `seq` moves past `armed_at` or `timeout` passes.
    /// True when it returned because `timeout` passed.
    pub fn block(&self, armed_at: u32, timeout: Option<Duration>) -> bool {
        if timeout.is_some_and(|t| t.is_zero()) {
            return true;
        }
        self.seq.load(Ordering::SeqCst) == armed_at && futex::futex_wait(&self.seq, armed_at, timeout)
    }

    pub fn disarm(&self) {
        self.sleeping.fetch_and(!SLEEPER, Ordering::SeqCst);
    }

    /// Both sleepers gone (the queue is freed).
    fn clear(&self) {
        self.sleeping.store(0, Ordering::SeqCst);
    }

    /// Whether a sleeper is announced (between `arm` and `disarm`).
    pub fn armed(&self) -> bool {
        self.sleeping.load(Ordering::SeqCst) != 0
    }
}

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

/// A wake word of our own, for one completion queue; freed on drop.
pub struct OwnWake {
    pub index: u32,
}

impl OwnWake {
    pub fn alloc() -> Option<OwnWake> {
        let index = area()?.free_wake.lock().pop()?;
        Some(OwnWake { index })
    }

    pub fn word(&self) -> &WakeWord {
        let a = area().expect("allocated from the area");
        wake_at(a.wake.ptr, self.index)
    }
}

impl Drop for OwnWake {
    fn drop(&mut self) {
        self.word().clear();
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
