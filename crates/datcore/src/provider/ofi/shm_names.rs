//! Names of our endpoints over libfabric's shm (`ofi-shm`), and the regions dead processes left.
//!
//! libfabric's shm makes a 16 MiB file in /dev/shm for each endpoint, named by the endpoint,
//! and removes it when the endpoint is closed: a process killed (or ending without closing)
//! leaves its files behind. Its own names (`<pid>:<uid>:<n>`) then collide with those of a
//! later process that gets the same pid, whose endpoint is refused as in use. So every endpoint
//! of ours gets a name of its own, `dat-ofi-<kind>-<pid>-<start>-<n>` (`start`: the process's
//! start time, which a later process of the same pid does not share), and an IA's open removes
//! the files of ours whose process is gone.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

const DIR: &str = "/dev/shm";
const PREFIX: &str = "dat-ofi-";

/// Field 22 of /proc/<pid>/stat: the start time in clock ticks since boot (0 if unreadable).
fn start_time(pid: &str) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0 };
    // The command (field 2) is in parentheses and may hold spaces: count from its end.
    let after = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
    after.split_whitespace().nth(19).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn own_start() -> u64 {
    static START: OnceLock<u64> = OnceLock::new();
    *START.get_or_init(|| start_time("self"))
}

/// A new endpoint name of this process for `kind` (`ia`, `ep`, `psp-<qualifier>`), never
/// used before by any process: `dat-ofi-<kind>-<pid>-<start>-<n>`.
pub(crate) fn unique(kind: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{PREFIX}{kind}-{}-{}-{}", std::process::id(), own_start(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The (pid, start) a name of [`unique`]'s holds, if it is one.
fn owner_of(name: &str) -> Option<(&str, u64)> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.rsplitn(4, '-');
    let (n, start, pid) = (parts.next()?, parts.next()?, parts.next()?);
    parts.next()?;
    n.parse::<u64>().ok()?;
    pid.parse::<u32>().ok()?;
    Some((pid, start.parse().ok()?))
}

/// Removes the regions in /dev/shm named by [`unique`] whose process is gone (no process of
/// that pid, or one that started at another time). Once per process.
pub(crate) fn remove_dead_regions() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| remove_dead_in(Path::new(DIR)));
}

fn remove_dead_in(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((pid, start)) = name.to_str().and_then(owner_of) else { continue };
        if start_time(pid) != start && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    if removed > 0 {
        tracing::debug!(removed, "ofi: shm regions of processes that are gone removed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_tells_its_owner_and_is_never_given_twice() {
        let (a, b) = (unique("ia"), unique("psp-4000"));
        assert_ne!(a, b);
        let me = std::process::id().to_string();
        assert_eq!(owner_of(&a), Some((me.as_str(), own_start())));
        assert_eq!(owner_of(&b), Some((me.as_str(), own_start())));
        assert!(own_start() > 0);
        assert_eq!(owner_of("12201:0:11"), None, "libfabric's own names are not ours");
        assert_eq!(owner_of("dat-ofi-psp-4000"), None, "a qualifier's claim file is not a region");
        assert_eq!(owner_of("dat-ofi-ep-12-34-x"), None);
    }

    /// Only files of ours whose process is gone go: a live one's (this process's), another
    /// program's, and one of a pid now running another process (another start time) stay or go
    /// as they should.
    #[test]
    fn only_the_regions_of_dead_processes_are_removed() {
        let dir = std::env::temp_dir().join(format!("dat-shm-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let live = unique("ep");
        let me = std::process::id();
        let recycled = format!("{PREFIX}ep-{me}-{}-0", own_start() + 1);
        let dead = format!("{PREFIX}ia-{}-5-0", u32::MAX - 1);
        for f in [live.as_str(), recycled.as_str(), dead.as_str(), "12201:0:11", "dat-ofi-psp-4000"] {
            std::fs::write(dir.join(f), b"").unwrap();
        }
        remove_dead_in(&dir);
        let mut left: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        let mut want = vec![live, "12201:0:11".to_string(), "dat-ofi-psp-4000".to_string()];
        want.sort();
        assert_eq!(left, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
