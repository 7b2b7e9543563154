//! Registered memory a connected peer can map itself, so its RDMA reads and writes become one
//! `memcpy` into or out of its own mapping instead of a `process_vm_readv/writev`.
//!
//! At registration ([`export`], once per LMR, never per message) the mapping the range starts
//! in ([`crate::provider::mapped`]) tells whether the whole range lies in one shared mapping of
//! something another process can map:
//!
//! - a memfd sealed against shrinking (`F_SEAL_SHRINK`; the holder of any other file could
//!   truncate it under the peer's mapping, which would then fault): we keep a descriptor of it
//!   open for the life of the registration and publish its number with the file's device and
//!   inode; the peer opens `/proc/<our pid>/fd/<number>` (allowed for a same-user process:
//!   it needs ptrace *read* access, which Yama does not restrict; `pidfd_getfd` and opening
//!   `/proc/<pid>/map_files` would need ptrace attach or `CAP_SYS_ADMIN`), checks the device
//!   and inode, so a number reused for another file is never mapped, and maps it only if it is
//!   such a memfd ([`super::sys::open_memory_file`]: nothing else the peer names is opened);
//! - a System V segment (`/SYSV<key>` in the maps, whose inode is the shmid): the peer
//!   `shmat`s the shmid.
//!
//! Anything else (private or anonymous shared memory, a range spanning mappings, a file that
//! can shrink or that we cannot reopen read-write) publishes nothing and RDMA on it keeps
//! using cross-memory attach.
//! What the peer does with the description is in [`PeerMaps`].

use super::memtable::Entry;
use crate::provider::mapped::Mapping;
use parking_lot::Mutex;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::{Arc, Weak};

/// How a peer maps the memory behind one registration (published in the memory table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// Descriptor `fd` of the registering process names file (`dev`, `ino`); the registration
    /// starts `offset` bytes into the file.
    File { fd: u32, dev: u64, ino: u64, offset: u64 },
    /// System V segment `shmid`; the registration starts `offset` bytes into it.
    SysV { shmid: u32, offset: u64 },
}

impl Share {
    /// The description of the part of this memory that starts `by` bytes further in (a window).
    pub fn shifted(self, by: u64) -> Share {
        match self {
            Share::File { fd, dev, ino, offset } => Share::File { fd, dev, ino, offset: offset + by },
            Share::SysV { shmid, offset } => Share::SysV { shmid, offset: offset + by },
        }
    }

    /// The table encoding: (kind, id, dev, ino, offset); kind 0 is "not shared".
    pub fn encode(share: Option<Share>) -> (u32, u32, u64, u64, u64) {
        match share {
            None => (0, 0, 0, 0, 0),
            Some(Share::File { fd, dev, ino, offset }) => (1, fd, dev, ino, offset),
            Some(Share::SysV { shmid, offset }) => (2, shmid, 0, 0, offset),
        }
    }

    pub fn decode(kind: u32, id: u32, dev: u64, ino: u64, offset: u64) -> Option<Share> {
        match kind {
            1 => Some(Share::File { fd: id, dev, ino, offset }),
            2 => Some(Share::SysV { shmid: id, offset }),
            _ => None,
        }
    }
}

/// A registration's published description and the descriptor that keeps its number valid
/// (closed only after the registration's key is revoked and peers' copies are over).
pub struct Exported {
    pub share: Share,
    _fd: Option<Arc<OwnedFd>>,
}

/// A file's (device, inode).
type FileId = (u64, u64);

/// The descriptors registrations keep, one per file however many registrations lie in it (a
/// consumer may register thousands of pieces of one memfd).
static KEPT: Mutex<Vec<(FileId, Weak<OwnedFd>)>> = Mutex::new(Vec::new());

/// The descriptor already kept for file (`dev`, `ino`), if a live registration holds one.
fn kept(dev: u64, ino: u64) -> Option<Arc<OwnedFd>> {
    KEPT.lock().iter().find(|(id, _)| *id == (dev, ino)).and_then(|(_, w)| w.upgrade())
}

/// Keeps `fd` as the descriptor of file (`dev`, `ino`).
fn keep(dev: u64, ino: u64, fd: OwnedFd) -> Option<Arc<OwnedFd>> {
    let fd = Arc::new(fd);
    let mut k = KEPT.lock();
    k.retain(|(id, w)| w.strong_count() > 0 && *id != (dev, ino));
    k.push(((dev, ino), Arc::downgrade(&fd)));
    Some(fd)
}

/// Whether `[addr, addr + len)`, which starts in `mapping`, can be published for peers to map,
/// and how.
pub fn export(mapping: &Mapping, addr: u64, len: u64) -> Option<Exported> {
    let end = addr.checked_add(len)?;
    let Mapping { lo, hi, shared, offset, dev, ino, ref path, .. } = *mapping;
    if !shared || addr < lo || end > hi {
        return None;
    }
    let offset = offset + (addr - lo);
    if path.starts_with("/SYSV") {
        let shmid = u32::try_from(ino).ok()?;
        return Some(Exported { share: Share::SysV { shmid, offset }, _fd: None });
    }
    let fd = kept(dev, ino)
        .or_else(|| keep(dev, ino, reopen(path, dev, ino).or_else(|| reopen_from_fd_table(dev, ino))?))?;
    if !super::sys::sealed_against_shrinking(&fd) {
        // A peer would refuse it: whoever holds the file could shrink it under its mapping.
        tracing::debug!(addr, len, path, "shm: registration in a file that can shrink; peers copy with CMA");
        return None;
    }
    let size = super::sys::file_size(&fd).ok()?;
    if offset.checked_add(len).is_none_or(|e| e > size) {
        return None;
    }
    let share = Share::File { fd: u32::try_from(fd.as_raw_fd()).ok()?, dev, ino, offset };
    tracing::debug!(addr, len, ?share, "shm: registration in shared memory; peers map it");
    Some(Exported { share, _fd: Some(fd) })
}

/// Opens `path` read-write if it still names file (`dev`, `ino`).
fn reopen(path: &str, dev: u64, ino: u64) -> Option<OwnedFd> {
    if path.ends_with(" (deleted)") || !path.starts_with('/') {
        return None;
    }
    open_checked(path, dev, ino)
}

/// A read-write descriptor of file (`dev`, `ino`) found among the process's open descriptors
/// (a memfd or an unlinked file the consumer still holds).
fn reopen_from_fd_table(dev: u64, ino: u64) -> Option<OwnedFd> {
    std::fs::read_dir("/proc/self/fd").ok()?.map_while(Result::ok).find_map(|d| {
        let p = d.path();
        let m = std::fs::metadata(&p).ok()?;
        (m.dev() == dev && m.ino() == ino).then(|| open_checked(p.to_str()?, dev, ino))?
    })
}

/// Opens `path` read-write (close-on-exec) and checks it is file (`dev`, `ino`).
fn open_checked(path: &str, dev: u64, ino: u64) -> Option<OwnedFd> {
    let c = CString::new(path).ok()?;
    // SAFETY: c is NUL-terminated; the result is checked.
    let raw = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if raw < 0 {
        return None;
    }
    // SAFETY: a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let (d, i, _) = super::sys::identity(&fd).ok()?;
    (d == dev && i == ino).then_some(fd)
}

// ---- the initiator's side -------------------------------------------------------------------

/// A peer's registered memory mapped into this process; unmapped (or detached) on drop.
pub struct PeerMapping {
    /// Where the mapping starts and how long it is (page aligned, as mmap/shmat returned it).
    base: *mut u8,
    len: usize,
    /// Bytes from `base` to the registration's first byte.
    skew: usize,
    sysv: bool,
}

// SAFETY: the mapping is plain shared memory; this process only copies through it while the
// peer's key is live (see `PeerMaps`), from whichever thread holds the link.
unsafe impl Send for PeerMapping {}

impl PeerMapping {
    /// Maps `len` bytes of `share`, published by process `pid`, read-write.
    fn map(pid: i32, share: Share, len: u64) -> io::Result<PeerMapping> {
        let end = |offset: u64| offset.checked_add(len).ok_or(io::Error::from_raw_os_error(libc::EOVERFLOW));
        match share {
            Share::File { fd, dev, ino, offset } => {
                // Closed when this returns; the mapping keeps the file.
                let path = CString::new(format!("/proc/{pid}/fd/{fd}"))?;
                let (file, size) = super::sys::open_memory_file(&path, dev, ino)?;
                if end(offset)? > size {
                    return Err(io::Error::other("file shorter than the registration"));
                }
                let page = page_size();
                let start = offset - offset % page;
                let skew = (offset - start) as usize;
                let m = super::sys::Mapping::map_at(&file, start as usize, skew + len as usize, true)?;
                let (base, map_len) = (m.ptr, m.len);
                std::mem::forget(m); // PeerMapping unmaps it now
                Ok(PeerMapping { base, len: map_len, skew, sysv: false })
            }
            Share::SysV { shmid, offset } => {
                // SAFETY: shmid_ds is plain old data; IPC_STAT fills it.
                let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
                // SAFETY: ds is a valid buffer.
                if unsafe { libc::shmctl(shmid as i32, libc::IPC_STAT, &mut ds) } < 0 {
                    return Err(io::Error::last_os_error());
                }
                if end(offset)? > ds.shm_segsz as u64 {
                    return Err(io::Error::other("segment shorter than the registration"));
                }
                // SAFETY: attaching at an address of the kernel's choice; the result is checked.
                let p = unsafe { libc::shmat(shmid as i32, std::ptr::null(), 0) };
                if p as isize == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(PeerMapping { base: p as *mut u8, len: ds.shm_segsz, skew: offset as usize, sysv: true })
            }
        }
    }

    /// Copies between local `pieces` (address, length) and the registration's bytes from `at`
    /// on: `write` pushes local -> mapping, else pulls mapping -> local.
    ///
    /// # Safety
    /// The pieces must be valid local memory; `at` plus their total must lie inside the
    /// registration this mapping was made for.
    pub unsafe fn copy(&self, at: u64, pieces: &[(u64, u64)], write: bool) {
        let mut remote = self.skew + at as usize;
        for &(addr, len) in pieces {
            debug_assert!(remote + len as usize <= self.len);
            // SAFETY: per the contract; `copy` allows the two sides to overlap (a consumer may
            // register one shared buffer on both ends of a connection).
            unsafe {
                let there = self.base.add(remote);
                if write {
                    std::ptr::copy(addr as *const u8, there, len as usize);
                } else {
                    std::ptr::copy(there as *const u8, addr as *mut u8, len as usize);
                }
            }
            remote += len as usize;
        }
    }
}

impl Drop for PeerMapping {
    fn drop(&mut self) {
        // SAFETY: base/len came from a successful mmap or shmat and are released once.
        unsafe {
            if self.sysv {
                libc::shmdt(self.base as *const libc::c_void);
            } else {
                libc::munmap(self.base as *mut libc::c_void, self.len);
            }
        }
    }
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Mappings kept per connection.
const CACHED: usize = 16;

/// The peer's registrations this side has mapped, per connection (dropped with it).
///
/// Invariant (no stale write): bytes move through a cached mapping only between a successful
/// lookup of its rkey in the peer's table, under the in-flight mark and returning exactly the
/// entry the mapping was made for, and the clearing of that mark ([`super::rdma`]). The
/// peer's `dat_lmr_free` clears the key and then waits for the mark ([`super::memtable`]), so
/// once it returns no copy uses the mapping again, and its descriptor is closed only after
/// that. A mapping is of the shared file's (or segment's) pages, never of the peer's address
/// space: memory the peer maps anew at the same address later is other pages. A mapping whose
/// key is found dead is unmapped at once; the others at eviction or when the connection ends.
#[derive(Default)]
pub struct PeerMaps {
    cached: Vec<Cached>,
}

struct Cached {
    key: u32,
    entry: Entry,
    /// None: mapping failed (logged once); this registration uses cross-memory attach.
    map: Option<PeerMapping>,
}

impl PeerMaps {
    /// The mapping for registration `key`, whose live entry (looked up under the in-flight
    /// mark) is `entry`; made and cached on first use. None: use cross-memory attach.
    pub fn get(&mut self, pid: i32, key: u32, entry: &Entry) -> Option<&PeerMapping> {
        let share = entry.share?;
        let i = match self.cached.iter().position(|c| c.key == key) {
            Some(i) if self.cached[i].entry == *entry => i,
            found => {
                if let Some(i) = found {
                    self.cached.swap_remove(i); // the same key for other memory (wrapped)
                }
                if self.cached.len() == CACHED {
                    self.cached.remove(0);
                }
                let map = PeerMapping::map(pid, share, entry.len)
                    .map_err(|e| tracing::debug!(pid, ?share, "shm: cannot map the peer's memory ({e})"))
                    .ok();
                self.cached.push(Cached { key, entry: *entry, map });
                self.cached.len() - 1
            }
        };
        self.cached[i].map.as_ref()
    }

    /// Drops the mapping of a key found dead in the peer's table.
    pub fn forget(&mut self, key: u32) {
        self.cached.retain(|c| c.key != key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifted_windows() {
        let f = Share::File { fd: 3, dev: 1, ino: 2, offset: 4096 };
        assert_eq!(f.shifted(10), Share::File { fd: 3, dev: 1, ino: 2, offset: 4106 });
        let s = Share::SysV { shmid: 9, offset: 0 };
        assert_eq!(Share::decode(2, 9, 0, 0, 0), Some(s));
        let (k, id, d, i, o) = Share::encode(Some(f));
        assert_eq!(Share::decode(k, id, d, i, o), Some(f));
        assert_eq!(Share::encode(None).0, 0);
    }

    fn memfd_mapping(len: usize) -> (OwnedFd, *mut u8) {
        let fd = super::super::sys::memfd(len).unwrap();
        let m = super::super::sys::Mapping::map(&fd, len).unwrap();
        let p = m.ptr;
        std::mem::forget(m);
        (fd, p)
    }

    /// `export` of a range of this process, as registration does it.
    fn export(addr: u64, len: u64) -> Option<Exported> {
        super::export(&crate::provider::mapped::survey(addr, len).first?, addr, len)
    }

    #[test]
    fn exports_what_a_peer_can_map() {
        let (fd, p) = memfd_mapping(1 << 16);
        let e = export(p as u64 + 4100, 1000).expect("a memfd held by the process");
        let Share::File { offset, fd: kept_fd, .. } = e.share else { panic!("{:?}", e.share) };
        assert_eq!(offset, 4100);
        let again = export(p as u64, 4096).expect("the same memfd");
        assert!(matches!(again.share, Share::File { fd, offset: 0, .. } if fd == kept_fd), "one descriptor per file");
        assert!(export(p as u64 + 4096, 1 << 16).is_none(), "runs past the mapping");
        let private = vec![0u8; 8192];
        assert!(export(private.as_ptr() as u64, 8192).is_none(), "private memory");
        let unsealed = super::super::raw_peer::memfd(1 << 16, true).unwrap();
        let m = super::super::sys::Mapping::map(&unsealed, 1 << 16).unwrap();
        assert!(export(m.ptr as u64, 4096).is_none(), "a memfd that can shrink");
        // Our own mapping through our own descriptor, as a peer would (pid = us).
        let mut maps = PeerMaps::default();
        let entry = Entry {
            kind: super::super::memtable::Kind::Region,
            pd: 1,
            addr: p as u64 + 4100,
            len: 1000,
            access: Default::default(),
            share: Some(e.share),
        };
        let m = maps.get(super::super::sys::getpid(), 77, &entry).expect("mappable");
        let data = [5u8; 100];
        // SAFETY: local array; 10 + 100 <= 1000.
        unsafe { m.copy(10, &[(data.as_ptr() as u64, 100)], true) };
        // SAFETY: p maps 64 KiB.
        assert_eq!(unsafe { *p.add(4110) }, 5);
        drop(fd);
    }
}
