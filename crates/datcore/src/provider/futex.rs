//! Futex calls: one word (`FUTEX_WAIT` / `FUTEX_WAKE`), and several words at once
//! (`futex_waitv`, Linux 5.16). Every word is waited on and woken as a shared futex (no
//! `FUTEX_PRIVATE_FLAG`), so that a waker in another process mapping the word reaches the
//! sleeper; both sides must agree on that, and every caller here does. The exception: a word in
//! this process's private memory, which only its own threads wake, is waited on and woken as a
//! private futex (the `_private` calls; cheaper for the kernel to find).

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleeps while `word` holds `expected`, until a [`futex_wake`] on the same word (in any
/// process mapping it: shared futex), `timeout`, or a signal. Spurious returns are allowed.
/// True when it returned because `timeout` passed.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) -> bool {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let tp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: word is a live, aligned u32 (in a shared mapping or our memory); tp is null or
    // points to a live timespec. FUTEX_WAIT only reads the word.
    let r = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT, expected, tp, 0usize, 0u32) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT)
}

/// Wakes every sleeper in [`futex_wait`] or [`futex_waitv`] on `word`.
pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: word is a live, aligned u32; FUTEX_WAKE does not access memory.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX, 0usize, 0usize, 0u32) };
}

/// Wakes every sleeper on a word of this process's private memory that waits as a private
/// futex ([`FutexWaitv::new_private`]).
pub fn futex_wake_private(word: &AtomicU32) {
    // SAFETY: word is a live, aligned u32; FUTEX_WAKE does not access memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
            0usize,
            0usize,
            0u32,
        )
    };
}

/// The kernel's `struct futex_waitv` (linux/futex.h).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct FutexWaitv {
    val: u64,
    uaddr: u64,
    flags: u32,
    reserved: u32,
}

/// `FUTEX2_SIZE_U32`: a 32-bit word (shared: no `FUTEX2_PRIVATE`).
const FUTEX2_SIZE_U32: u32 = 0x02;

/// `FUTEX2_PRIVATE`: a word only this process's threads wake.
const FUTEX2_PRIVATE: u32 = 128;

/// The most words one [`futex_waitv`] takes (`FUTEX_WAITV_MAX`).
pub const WAITV_MAX: usize = 128;

impl FutexWaitv {
    /// Sleep while `word` holds `value`. The word must stay mapped until the wait returns.
    pub fn new(word: *const AtomicU32, value: u32) -> Self {
        FutexWaitv { val: value as u64, uaddr: word as u64, flags: FUTEX2_SIZE_U32, reserved: 0 }
    }

    /// Sleep while `word`, in this process's private memory, holds `value`; woken by
    /// [`futex_wake_private`].
    pub fn new_private(word: *const AtomicU32, value: u32) -> Self {
        FutexWaitv { val: value as u64, uaddr: word as u64, flags: FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, reserved: 0 }
    }
}

/// How a [`futex_waitv`] ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Waitv {
    /// Woken, or a word did not hold its value, or a signal: the caller looks again.
    Woken,
    TimedOut,
    /// The kernel has no `futex_waitv` (before Linux 5.16).
    Unsupported,
}

/// Sleeps until one of `words` (at most [`WAITV_MAX`], each word live until this returns)
/// no longer holds its value or is woken by [`futex_wake`], or `timeout` passes.
pub fn futex_waitv(words: &[FutexWaitv], timeout: Option<Duration>) -> Waitv {
    // futex_waitv's timeout is absolute, on the clock named by its last argument.
    let deadline = timeout.map(|t| {
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a live timespec to write; CLOCK_MONOTONIC always exists.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
        let nanos = now.tv_nsec as u64 + t.subsec_nanos() as u64;
        libc::timespec {
            tv_sec: now.tv_sec.saturating_add(t.as_secs().min(i32::MAX as u64) as libc::time_t)
                + (nanos / 1_000_000_000) as libc::time_t,
            tv_nsec: (nanos % 1_000_000_000) as libc::c_long,
        }
    });
    let tp = deadline.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `words` is a live array of words.len() futex_waitv entries whose addresses the
    // caller keeps mapped; tp is null or a live timespec. The kernel only reads them.
    let r = unsafe {
        libc::syscall(libc::SYS_futex_waitv, words.as_ptr(), words.len() as u32, 0u32, tp, libc::CLOCK_MONOTONIC)
    };
    if r >= 0 {
        return Waitv::Woken;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ETIMEDOUT) => Waitv::TimedOut,
        Some(libc::ENOSYS) => Waitv::Unsupported,
        _ => Waitv::Woken,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn waitv_returns_at_once_on_a_changed_word_sleeps_until_a_wake_and_times_out() {
        let words: Arc<[AtomicU32; 2]> = Arc::new([AtomicU32::new(0), AtomicU32::new(7)]);
        let probe = [FutexWaitv::new(&words[0], 0)];
        if futex_waitv(&probe, Some(Duration::ZERO)) == Waitv::Unsupported {
            eprintln!("no futex_waitv on this kernel");
            return;
        }
        // A word not holding its value: at once.
        let list = [FutexWaitv::new(&words[0], 0), FutexWaitv::new(&words[1], 6)];
        assert_eq!(futex_waitv(&list, None), Waitv::Woken);
        // Nothing changes: the timeout.
        let list = [FutexWaitv::new(&words[0], 0), FutexWaitv::new(&words[1], 7)];
        let t0 = Instant::now();
        assert_eq!(futex_waitv(&list, Some(Duration::from_millis(20))), Waitv::TimedOut);
        assert!(t0.elapsed() >= Duration::from_millis(20));
        // The second word is changed and woken by another thread.
        let w = words.clone();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            w[1].store(8, Ordering::SeqCst);
            futex_wake(&w[1]);
        });
        assert_eq!(futex_waitv(&list, Some(Duration::from_secs(10))), Waitv::Woken);
        waker.join().unwrap();
        assert_eq!(words[1].load(Ordering::SeqCst), 8);
    }
}
