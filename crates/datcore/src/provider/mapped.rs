//! Is a virtual address range of this process mapped with the access a registration needs?
//!
//! `dat_lmr_create` on shm registers nothing with a kernel, so without this check an unmapped
//! or read-only range would be accepted and the fault would come later, inside a transfer.
//! On verbs `ibv_reg_mr` itself refuses such a range, with an errno that depends on the driver
//! (`EFAULT` on hardware; soft devices differ); after a failed registration the verbs provider
//! asks this module whether the range was the cause, so both providers give the same error.
//!
//! How: `/proc/self/maps` lists every mapping with its protection, in address order; the range
//! must be covered by mappings without a gap, each readable, and writable when the LMR may be
//! written (local or remote write). Reading the table touches none of the consumer's pages
//! (unlike probing with loads or `process_vm_readv`), tells read-only from writable (which
//! `mincore` cannot), and is correct for file, anonymous, shared and stack mappings alike.
//! The answer is as of registration: memory unmapped afterwards is the consumer's error, and
//! a transfer from it then fails with a protection error completion (cross-memory attach
//! reports `EFAULT`) rather than a crash.
//!
//! If `/proc` is not mounted the range cannot be checked and is accepted (logged at debug).

use std::io::{BufRead, BufReader};

/// One line of `/proc/self/maps`: `start-end perms offset dev inode path`.
fn parse_line(line: &str) -> Option<(u64, u64, &str)> {
    let mut fields = line.split_ascii_whitespace();
    let (lo, hi) = fields.next()?.split_once('-')?;
    let perms = fields.next()?;
    Some((u64::from_str_radix(lo, 16).ok()?, u64::from_str_radix(hi, 16).ok()?, perms))
}

/// Whether `[addr, addr + len)` is covered, without gaps, by the mappings in `maps` (in
/// address order, as the kernel lists them), each readable and, if `write`, writable.
pub fn covered_by(maps: impl IntoIterator<Item = (u64, u64, String)>, addr: u64, len: u64, write: bool) -> bool {
    let Some(end) = addr.checked_add(len) else { return false };
    let mut next = addr;
    for (lo, hi, perms) in maps {
        if hi <= next {
            continue;
        }
        let p = perms.as_bytes();
        let ok = lo <= next && p.first() == Some(&b'r') && (!write || p.get(1) == Some(&b'w'));
        if !ok {
            return false;
        }
        next = hi;
        if next >= end {
            return true;
        }
    }
    false
}

/// Whether this process has `[addr, addr + len)` mapped readable (and writable if `write`).
pub fn is_mapped(addr: u64, len: u64, write: bool) -> bool {
    let file = match std::fs::File::open("/proc/self/maps") {
        Ok(f) => f,
        Err(e) => {
            tracing::debug!("shm: cannot read /proc/self/maps ({e}); registration range not checked");
            return true;
        }
    };
    let maps = BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| parse_line(&l).map(|(lo, hi, p)| (lo, hi, p.to_string())));
    covered_by(maps, addr, len, write)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maps(v: &[(u64, u64, &str)]) -> Vec<(u64, u64, String)> {
        v.iter().map(|&(lo, hi, p)| (lo, hi, p.to_string())).collect()
    }

    #[test]
    fn parses_kernel_lines() {
        let l = "7f2c4a000000-7f2c4a021000 rw-p 00000000 00:00 0 ";
        assert_eq!(parse_line(l), Some((0x7f2c4a000000, 0x7f2c4a021000, "rw-p")));
        let l = "55d0c8a00000-55d0c8a02000 r--p 00000000 08:01 1234   /usr/bin/x";
        assert_eq!(parse_line(l), Some((0x55d0c8a00000, 0x55d0c8a02000, "r--p")));
        assert_eq!(parse_line("garbage"), None);
    }

    #[test]
    fn coverage_rules() {
        let m = maps(&[(0x1000, 0x3000, "rw-p"), (0x3000, 0x4000, "r--p"), (0x5000, 0x6000, "---p")]);
        assert!(covered_by(m.clone(), 0x1000, 0x2000, true));
        assert!(covered_by(m.clone(), 0x1800, 0x2800, false), "spans two adjacent mappings");
        assert!(!covered_by(m.clone(), 0x1800, 0x2800, true), "second mapping is read-only");
        assert!(!covered_by(m.clone(), 0x3800, 0x1000, false), "runs into the gap at 0x4000");
        assert!(!covered_by(m.clone(), 0x5000, 0x10, false), "PROT_NONE");
        assert!(!covered_by(m.clone(), 0x0, 0x1000, false), "below every mapping");
        assert!(!covered_by(m, 0x7000, 0x10, false), "above every mapping");
        assert!(!covered_by(Vec::new(), 0x1000, 1, false));
        assert!(!covered_by(maps(&[(0, u64::MAX, "rw-p")]), u64::MAX, 2, false), "wraps");
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
}
