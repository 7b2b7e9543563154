//! Cross-memory attach (process_vm_readv / process_vm_writev): one copy, straight between the
//! two processes' buffers. Whether it is allowed (same uid, ptrace policy such as Yama) is
//! probed per connection; where it is not, data goes inline through the rings instead.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

/// Most iovec entries on either side of one transfer.
pub const MAX_IOV: usize = 32;

/// A word peers read to probe cross-memory attach on us.
static COOKIE: AtomicU64 = AtomicU64::new(0);

/// Address and value of our probe word.
pub fn cookie() -> (u64, u64) {
    let mut v = COOKIE.load(Ordering::Relaxed);
    if v == 0 {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        v = t ^ ((super::sys::getpid() as u64) << 32) | 1;
        COOKIE.store(v, Ordering::Relaxed);
    }
    (&COOKIE as *const AtomicU64 as u64, v)
}

/// True when we can read `pid`'s probe word and it holds `val`. `DAT_SHM_NO_CMA=1` disables
/// cross-memory attach (to exercise the inline path).
pub fn probe(pid: i32, addr: u64, val: u64) -> bool {
    if std::env::var_os("DAT_SHM_NO_CMA").is_some_and(|v| v != "0") {
        return false;
    }
    let mut got = 0u64;
    let l = [(&mut got as *mut u64 as u64, 8u64)];
    let r = [(addr, 8u64)];
    match transfer(pid, &l, &r, false) {
        Ok(()) => got == val,
        Err(e) => {
            tracing::debug!(pid, "shm: cross-memory attach unavailable ({e}); using inline copies");
            false
        }
    }
}

/// Copies between local `[(addr, len)]` and `pid`'s remote `[(addr, len)]` (same total
/// length): `write` pushes local -> remote, else pulls remote -> local. Retries partial
/// transfers. EFAULT means one side's addresses are bad; ESRCH that the peer is gone.
pub fn transfer(pid: i32, local: &[(u64, u64)], remote: &[(u64, u64)], write: bool) -> io::Result<()> {
    if local.len() > MAX_IOV || remote.len() > MAX_IOV {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let empty = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 };
    let mut lv = [empty; MAX_IOV];
    let mut rv = [empty; MAX_IOV];
    let fill = |v: &mut [libc::iovec; MAX_IOV], s: &[(u64, u64)]| -> (usize, u64) {
        let mut n = 0;
        let mut total = 0u64;
        for &(a, l) in s.iter().filter(|x| x.1 > 0) {
            v[n] = libc::iovec { iov_base: a as *mut libc::c_void, iov_len: l as usize };
            n += 1;
            total += l;
        }
        (n, total)
    };
    let (mut ln, total) = fill(&mut lv, local);
    let (mut rn, rtotal) = fill(&mut rv, remote);
    if total != rtotal {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let (mut li, mut ri) = (0usize, 0usize);
    let mut left = total;
    while left > 0 {
        // SAFETY: the iovec arrays are valid for ln/rn entries from li/ri; the kernel checks
        // every address against the respective address space and reports EFAULT.
        let r = unsafe {
            if write {
                libc::process_vm_writev(pid, lv[li..].as_ptr(), (ln - li) as _, rv[ri..].as_ptr(), (rn - ri) as _, 0)
            } else {
                libc::process_vm_readv(pid, lv[li..].as_ptr(), (ln - li) as _, rv[ri..].as_ptr(), (rn - ri) as _, 0)
            }
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        if r == 0 {
            return Err(io::Error::from_raw_os_error(libc::EFAULT));
        }
        let done = r as u64;
        left -= done.min(left);
        for (v, i, n) in [(&mut lv, &mut li, &mut ln), (&mut rv, &mut ri, &mut rn)] {
            let mut d = done;
            while d > 0 && *i < *n {
                let take = d.min(v[*i].iov_len as u64);
                v[*i].iov_len -= take as usize;
                v[*i].iov_base = (v[*i].iov_base as u64).wrapping_add(take) as *mut libc::c_void;
                d -= take;
                if v[*i].iov_len == 0 {
                    *i += 1;
                }
            }
        }
    }
    Ok(())
}
