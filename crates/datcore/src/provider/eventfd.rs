//! A non-blocking eventfd: one thread rings it, another sleeps in poll(2) on it among other
//! descriptors. Used by providers to end a sleep early (an interrupt, a changed fd set).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub struct EventFd(OwnedFd);

impl EventFd {
    pub fn new() -> std::io::Result<EventFd> {
        // SAFETY: plain eventfd(2) call.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor that nothing else owns.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Makes the descriptor readable until the next `clear`.
    pub fn ring(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64; a full counter (EAGAIN) is readable anyway.
        unsafe { libc::write(self.0.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
    }

    /// Resets the counter (non-blocking: nothing to read is fine).
    pub fn clear(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64.
        unsafe { libc::read(self.0.as_raw_fd(), &mut v as *mut u64 as *mut libc::c_void, 8) };
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}
