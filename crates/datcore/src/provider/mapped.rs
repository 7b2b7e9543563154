//! What this process has mapped over a virtual address range: is it mapped with the access a
//! registration needs, and in which mapping does it start?
//!
//! `dat_lmr_create` on shm registers nothing with a kernel, so without this check an unmapped
//! or read-only range would be accepted and the fault would come later, inside a transfer.
//! On verbs `ibv_reg_mr` itself refuses such a range, with an errno that depends on the driver
//! (`EFAULT` on hardware; soft devices differ); after a failed registration the verbs provider
//! asks this module whether the range was the cause, so both providers give the same error.
//!
//! The rule: the range must be covered by mappings without a gap, each readable, and writable
//! when the LMR may be written (local or remote write, remote atomics). The mapping the first
//! byte lies in also tells shm whether peers can map the memory ([`super::shm::shared`]).
//!
//! How: the kernel's `PROCMAP_QUERY` ioctl (Linux 6.11) on a descriptor of `/proc/self/maps`
//! answers for one address the mapping that covers it (bounds, protection, shared or private,
//! file offset, device, inode, name), or `ENOENT`: one system call per mapping the range
//! spans, so one for nearly every registration, whatever the number of mappings the process
//! has. The descriptor is opened once and kept (close-on-exec). It answers for the address
//! space of the process that opened it, also in a forked child, so a `pthread_atfork` child
//! handler drops it and the child opens its own (a child made by a raw `clone` without
//! `CLONE_VM`, bypassing `fork`, would be answered for its parent: don't register memory
//! there). Where the kernel has no `PROCMAP_QUERY` (`ENOTTY`), or a query fails otherwise,
//! the `/proc/self/maps` text is read instead, as before: an open, reads in which the kernel
//! formats a line (and a path) for every mapping of the process, and a close.
//!
//! `mincore` would tell a gap (`ENOMEM`) in one call too, but passes `PROT_NONE` and read-only
//! pages, so the permission checks would still need the table. Neither way touches the
//! consumer's pages (unlike probing with loads or `process_vm_readv`), and both are correct for
//! file, anonymous, shared and stack mappings alike. The answer is as of registration: memory
//! unmapped afterwards is the consumer's error, and a transfer from it then fails with a
//! protection error completion (cross-memory attach reports `EFAULT`) rather than a crash.
//!
//! If `/proc` is not mounted the range cannot be checked and is accepted (logged at debug).

use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::OnceLock;

/// One mapping of this process: a line of `/proc/self/maps`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub lo: u64,
    pub hi: u64,
    pub readable: bool,
    pub writable: bool,
    /// `MAP_SHARED` (or a System V segment).
    pub shared: bool,
    /// Offset in the file of `lo`.
    pub offset: u64,
    pub dev: u64,
    pub ino: u64,
    /// The file's path as the kernel prints it (`" (deleted)"` appended for an unlinked one),
    /// a name such as `[heap]`, or empty.
    pub path: String,
}

/// How much of the access a registration may need the whole range allows, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Coverage {
    /// A gap, or a mapping that is not readable.
    NotReadable,
    ReadOnly,
    ReadWrite,
}

impl Coverage {
    fn of(m: &Mapping) -> Coverage {
        match (m.readable, m.writable) {
            (false, _) => Coverage::NotReadable,
            (true, false) => Coverage::ReadOnly,
            (true, true) => Coverage::ReadWrite,
        }
    }
}

/// What registration learns of a range.
#[derive(Debug)]
pub struct Survey {
    /// None: the mappings could not be read (no `/proc`).
    coverage: Option<Coverage>,
    /// The mapping the range's first byte lies in.
    pub first: Option<Mapping>,
}

impl Survey {
    /// Whether the range is mapped readable and, if `write`, writable (true when unknown).
    pub fn allows(&self, write: bool) -> bool {
        let need = if write { Coverage::ReadWrite } else { Coverage::ReadOnly };
        self.coverage.is_none_or(|c| c >= need)
    }
}

/// Walks `[addr, addr + len)` with `covering(a, named)`, the mapping that covers address `a`
/// (its path wanted if `named`), from the first byte until a gap, a mapping that is not
/// readable, or the end.
fn walk(addr: u64, len: u64, mut covering: impl FnMut(u64, bool) -> Option<Mapping>) -> Survey {
    let Some(end) = addr.checked_add(len) else {
        return Survey { coverage: Some(Coverage::NotReadable), first: None };
    };
    let Some(first) = covering(addr, true) else {
        return Survey { coverage: Some(Coverage::NotReadable), first: None };
    };
    let (mut coverage, mut hi) = (Coverage::of(&first), first.hi);
    while coverage > Coverage::NotReadable && hi < end {
        // A mapping covering `hi` starts there: mappings do not overlap.
        match covering(hi, false) {
            Some(next) => (coverage, hi) = (coverage.min(Coverage::of(&next)), next.hi),
            None => coverage = Coverage::NotReadable,
        }
    }
    Survey { coverage: Some(coverage), first: Some(first) }
}

/// The mappings over `[addr, addr + len)`: coverage and first mapping.
pub fn survey(addr: u64, len: u64) -> Survey {
    if let Some(fd) = query::descriptor() {
        let mut failed = None;
        let s = walk(addr, len, |a, named| {
            query::covering(fd, a, named).unwrap_or_else(|errno| {
                failed = Some(errno);
                None
            })
        });
        let Some(errno) = failed else { return s };
        tracing::debug!(errno, "PROCMAP_QUERY failed; reading /proc/self/maps");
    }
    match text::read() {
        Some(maps) => walk(addr, len, |a, _| maps.iter().find(|m| m.lo <= a && a < m.hi).cloned()),
        None => Survey { coverage: None, first: None },
    }
}

/// Whether this process has `[addr, addr + len)` mapped readable (and writable if `write`).
pub fn is_mapped(addr: u64, len: u64, write: bool) -> bool {
    survey(addr, len).allows(write)
}

/// The `PROCMAP_QUERY` ioctl and the descriptor it is asked on.
mod query {
    use super::*;

    /// `struct procmap_query` of `<linux/fs.h>`.
    #[repr(C)]
    #[derive(Default)]
    struct ProcmapQuery {
        size: u64,
        query_flags: u64,
        query_addr: u64,
        vma_start: u64,
        vma_end: u64,
        vma_flags: u64,
        vma_page_size: u64,
        vma_offset: u64,
        inode: u64,
        dev_major: u32,
        dev_minor: u32,
        vma_name_size: u32,
        build_id_size: u32,
        vma_name_addr: u64,
        build_id_addr: u64,
    }

    /// `_IOWR('f', 17, struct procmap_query)`.
    const PROCMAP_QUERY: libc::c_ulong = (3 << 30)
        | ((std::mem::size_of::<ProcmapQuery>() as libc::c_ulong) << 16)
        | ((b'f' as libc::c_ulong) << 8)
        | 17;
    const VMA_READABLE: u64 = 0x1;
    const VMA_WRITABLE: u64 = 0x2;
    const VMA_SHARED: u64 = 0x8;

    /// The kept descriptor of `/proc/self/maps`, or one of these.
    const NOT_OPEN: i32 = -1;
    const NO_QUERY: i32 = -2;
    static MAPS_FD: AtomicI32 = AtomicI32::new(NOT_OPEN);
    /// Whether [`forget_in_child`] is registered (once, before the first descriptor opens).
    static AT_FORK: OnceLock<bool> = OnceLock::new();

    /// In a forked child (one thread, async-signal-safe calls only): the descriptor answers
    /// for the parent, drop it.
    extern "C" fn forget_in_child() {
        let fd = MAPS_FD.load(Ordering::Relaxed);
        if fd >= 0 {
            MAPS_FD.store(NOT_OPEN, Ordering::Relaxed);
            // SAFETY: our descriptor; no other thread exists in the child.
            unsafe { libc::close(fd) };
        }
    }

    /// The descriptor to query, opened on first use; None where the kernel has no
    /// `PROCMAP_QUERY` or `/proc/self/maps` cannot be opened.
    pub(super) fn descriptor() -> Option<i32> {
        let fd = MAPS_FD.load(Ordering::Acquire);
        if fd >= 0 || fd == NO_QUERY {
            return (fd >= 0).then_some(fd);
        }
        // SAFETY: registers a handler that lives as long as the library (glibc removes a
        // library's handlers when it is unloaded).
        if !*AT_FORK.get_or_init(|| unsafe { libc::pthread_atfork(None, None, Some(forget_in_child)) } == 0) {
            return None;
        }
        // SAFETY: a NUL-terminated path; the result is checked.
        let fd = unsafe { libc::open(c"/proc/self/maps".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // Probe before publishing, so that a descriptor others may use is never closed.
        let probe = &MAPS_FD as *const AtomicI32 as u64;
        if covering(fd, probe, false) == Err(libc::ENOTTY) {
            tracing::debug!("no PROCMAP_QUERY in this kernel; registrations read /proc/self/maps");
            // SAFETY: our descriptor, not published.
            unsafe { libc::close(fd) };
            MAPS_FD.store(NO_QUERY, Ordering::Release);
            return None;
        }
        match MAPS_FD.compare_exchange(NOT_OPEN, fd, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => Some(fd),
            Err(other) => {
                // SAFETY: ours, not published (another thread's is).
                unsafe { libc::close(fd) };
                (other >= 0).then_some(other)
            }
        }
    }

    /// The mapping covering `addr` (with its path if `named`), None if none; Err(errno) if
    /// the query failed.
    pub(super) fn covering(fd: i32, addr: u64, named: bool) -> Result<Option<Mapping>, i32> {
        let mut name = [0u8; libc::PATH_MAX as usize];
        let mut q =
            ProcmapQuery { size: std::mem::size_of::<ProcmapQuery>() as u64, query_addr: addr, ..Default::default() };
        if named {
            q.vma_name_size = name.len() as u32;
            q.vma_name_addr = name.as_mut_ptr() as u64;
        }
        // SAFETY: q is a valid procmap_query whose name buffer, if any, is `name`'s length.
        if unsafe { libc::ioctl(fd, PROCMAP_QUERY, &mut q) } < 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
            return if errno == libc::ENOENT { Ok(None) } else { Err(errno) };
        }
        // vma_name_size: the name's length with its NUL, 0 without a name.
        let path = &name[..(q.vma_name_size as usize).saturating_sub(1).min(name.len())];
        Ok(Some(Mapping {
            lo: q.vma_start,
            hi: q.vma_end,
            readable: q.vma_flags & VMA_READABLE != 0,
            writable: q.vma_flags & VMA_WRITABLE != 0,
            shared: q.vma_flags & VMA_SHARED != 0,
            offset: q.vma_offset,
            dev: libc::makedev(q.dev_major, q.dev_minor),
            ino: q.inode,
            path: String::from_utf8_lossy(path).into_owned(),
        }))
    }
}

/// The `/proc/self/maps` text.
mod text {
    use super::*;

    /// One line: `start-end perms offset major:minor inode path`.
    pub(super) fn parse_line(line: &str) -> Option<Mapping> {
        let mut rest = line;
        let mut field = || {
            let t = rest.trim_start();
            let end = t.find(' ').unwrap_or(t.len());
            let (f, r) = t.split_at(end);
            rest = r;
            f
        };
        let (lo, hi) = field().split_once('-')?;
        let perms = field().as_bytes();
        let offset = u64::from_str_radix(field(), 16).ok()?;
        let (major, minor) = field().split_once(':')?;
        let ino = field().parse().ok()?;
        let dev = libc::makedev(u32::from_str_radix(major, 16).ok()?, u32::from_str_radix(minor, 16).ok()?);
        Some(Mapping {
            lo: u64::from_str_radix(lo, 16).ok()?,
            hi: u64::from_str_radix(hi, 16).ok()?,
            readable: perms.first() == Some(&b'r'),
            writable: perms.get(1) == Some(&b'w'),
            shared: perms.get(3) == Some(&b's'),
            offset,
            dev,
            ino,
            path: rest.trim().to_owned(),
        })
    }

    /// Every mapping, in address order; None if the file cannot be opened.
    pub(super) fn read() -> Option<Vec<Mapping>> {
        let file = match std::fs::File::open("/proc/self/maps") {
            Ok(f) => f,
            Err(e) => {
                tracing::debug!("cannot read /proc/self/maps ({e}); registration range not checked");
                return None;
            }
        };
        Some(BufReader::new(file).lines().map_while(Result::ok).filter_map(|l| parse_line(&l)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(lo: u64, hi: u64, perms: &str) -> Mapping {
        let p = perms.as_bytes();
        Mapping {
            lo,
            hi,
            readable: p[0] == b'r',
            writable: p[1] == b'w',
            shared: p[3] == b's',
            offset: 0,
            dev: 0,
            ino: 0,
            path: String::new(),
        }
    }

    #[test]
    fn parses_kernel_lines() {
        let l = "7f00aa000000-7f00aa200000 rw-s 00001000 00:1a 4242                       /dev/shm/x y (deleted)";
        let m = text::parse_line(l).unwrap();
        assert_eq!((m.lo, m.hi, m.shared, m.offset, m.ino), (0x7f00aa000000, 0x7f00aa200000, true, 0x1000, 4242));
        assert_eq!((m.readable, m.writable), (true, true));
        assert_eq!(m.dev, libc::makedev(0, 0x1a));
        assert_eq!(m.path, "/dev/shm/x y (deleted)");
        let m = text::parse_line("55d0c8a00000-55d0c8a02000 r--p 00000000 08:01 1234   /usr/bin/x").unwrap();
        assert_eq!(
            (m.lo, m.hi, m.readable, m.writable, m.shared),
            (0x55d0c8a00000, 0x55d0c8a02000, true, false, false)
        );
        assert_eq!(m.path, "/usr/bin/x");
        let m = text::parse_line("55d0c8a00000-55d0c8a02000 rw-p 00000000 00:00 0 ").unwrap();
        assert_eq!(m.path, "");
        assert_eq!(text::parse_line("garbage"), None);
    }

    /// `walk` over a fixed table (what the text backend does).
    fn walk_table(table: &[Mapping], addr: u64, len: u64) -> Survey {
        walk(addr, len, |a, _| table.iter().find(|m| m.lo <= a && a < m.hi).cloned())
    }

    #[test]
    fn coverage_rules() {
        let t = [mapping(0x1000, 0x3000, "rw-p"), mapping(0x3000, 0x4000, "r--p"), mapping(0x5000, 0x6000, "---p")];
        let allows = |addr, len, write| walk_table(&t, addr, len).allows(write);
        assert!(allows(0x1000, 0x2000, true));
        assert!(allows(0x1800, 0x2800, false), "spans two adjacent mappings");
        assert!(!allows(0x1800, 0x2800, true), "second mapping is read-only");
        assert!(!allows(0x3800, 0x1000, false), "runs into the gap at 0x4000");
        assert!(!allows(0x5000, 0x10, false), "PROT_NONE");
        assert!(!allows(0x0, 0x1000, false), "below every mapping");
        assert!(!allows(0x7000, 0x10, false), "above every mapping");
        assert!(!walk_table(&[], 0x1000, 1).allows(false));
        assert!(!walk_table(&[mapping(0, u64::MAX, "rw-p")], u64::MAX, 2).allows(false), "wraps");
        assert_eq!(walk_table(&t, 0x1800, 0x2800).first, Some(t[0].clone()), "the mapping of the first byte");
        assert!(Survey { coverage: None, first: None }.allows(true), "unknown: accepted");
    }

    #[test]
    fn this_process() {
        let v = vec![7u8; 10000];
        assert!(is_mapped(v.as_ptr() as u64, v.len() as u64, true));
        assert!(!is_mapped(0x1000, 4096, false));
        static RO: [u8; 64] = [1; 64];
        assert!(is_mapped(RO.as_ptr() as u64, 64, false));
        assert!(!is_mapped(RO.as_ptr() as u64, 64, true), "a static in .rodata is read-only");
    }

    /// The ioctl answers what the text says, for an address in every mapping of this process
    /// (its first and last byte), names included; and nothing in a gap.
    #[test]
    fn query_agrees_with_the_text() {
        let Some(fd) = query::descriptor() else {
            eprintln!("SKIPPED: this kernel has no PROCMAP_QUERY (Linux 6.11)");
            return;
        };
        let table = text::read().expect("/proc/self/maps");
        let mut compared = 0;
        for m in &table {
            // [vsyscall] lies outside the process's address space as the ioctl sees it
            if m.path == "[vsyscall]" {
                continue;
            }
            for a in [m.lo, m.hi - 1] {
                let q = query::covering(fd, a, true).expect("query").expect("a mapping");
                // the table was read a moment ago: neighbours may have been merged or split
                // since (other tests' threads map memory), so compare what the address says
                if (q.lo, q.hi) == (m.lo, m.hi) {
                    assert_eq!(&q, m, "at {a:#x}");
                    compared += 1;
                }
            }
        }
        assert!(compared * 2 > table.len(), "{compared} of {} mappings compared", table.len());
        assert_eq!(query::covering(fd, 0x1000, false), Ok(None));
    }

    /// A forked child asks about its own address space, not its parent's: it unmaps a page
    /// the parent keeps, and must find it unmapped (with the parent's descriptor it would
    /// find it mapped).
    #[test]
    fn forked_child_asks_about_itself() {
        let page = 4096;
        // SAFETY: a fresh anonymous mapping, unmapped below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        assert!(is_mapped(p as u64, page as u64, true), "the parent's descriptor is open now");
        // SAFETY: the child only unmaps, asks, and exits (glibc's malloc is usable after fork).
        let child = unsafe { libc::fork() };
        if child == 0 {
            // SAFETY: the child's copy of the mapping.
            unsafe { libc::munmap(p, page) };
            let status = if is_mapped(p as u64, page as u64, false) { 1 } else { 0 };
            // SAFETY: leaves the child without running the test harness's exit path.
            unsafe { libc::_exit(status) };
        }
        assert!(child > 0);
        let mut status = 0;
        // SAFETY: waits for our child.
        assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child saw its parent's mapping");
        assert!(is_mapped(p as u64, page as u64, true), "still mapped in the parent");
        // SAFETY: ours.
        unsafe { libc::munmap(p, page) };
    }
}
