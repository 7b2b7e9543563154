//! Keeping a provider's service threads alive across a panic.
//!
//! A provider thread (the verbs CM thread and CNO notifier) serves every connection of its IA:
//! if it died, completions would stop and `dat_evd_wait` would hang. Each thread runs every
//! iteration of its work through [`Served::iteration`]: a panic is caught, logged, reported
//! once per thread to the IA's async EVD (`DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR`; once, so
//! a panic that repeats on every iteration cannot flood the async EVD), and the thread carries
//! on with its next iteration.

use super::{AsyncError, AsyncEvents};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One service thread's panic bookkeeping.
pub struct Served {
    thread: &'static str,
    panics: u64,
}

impl Served {
    pub fn new(thread: &'static str) -> Self {
        Served { thread, panics: 0 }
    }

    /// Runs `work`; a panic in it is caught and reported to `events`. Returns whether `work`
    /// completed without panicking.
    pub fn iteration(&mut self, events: &dyn AsyncEvents, work: impl FnOnce()) -> bool {
        if catch_unwind(AssertUnwindSafe(work)).is_ok() {
            return true;
        }
        self.panics += 1;
        tracing::error!(thread = self.thread, panics = self.panics, "provider thread recovered from a panic");
        if self.panics == 1 {
            events.async_error(AsyncError::ProviderInternal);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::RecordedAsyncEvents as Recorded;

    #[test]
    fn a_panic_is_caught_reported_once_and_the_thread_goes_on() {
        let events = Recorded::default();
        let mut served = Served::new("test");
        let mut ran = 0;
        assert!(served.iteration(&events, || ran += 1));
        assert!(events.0.lock().is_empty());
        assert!(!served.iteration(&events, || panic!("injected")));
        assert!(!served.iteration(&events, || panic!("injected again")));
        assert!(served.iteration(&events, || ran += 1));
        assert_eq!(ran, 2);
        assert_eq!(*events.0.lock(), vec![AsyncError::ProviderInternal]);
    }
}
