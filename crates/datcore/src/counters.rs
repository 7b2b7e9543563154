//! The counters of the IB counters extension (`dat_ib_query_counters`, `dat_ib_print_counters`,
//! `dat_ib_start_counter`, `dat_ib_stop_counter` of `dat_ib_extensions.h`): one array per IA,
//! EP and EVD, numbered as the header's `DAT_IA_COUNTERS`, `DAT_EP_COUNTERS` and
//! `DAT_EVD_COUNTERS`.
//!
//! Counting is off until `dat_ib_start_counter` (or `DAT_IB_COUNTERS=1` in the environment
//! when the first IA opens) turns it on for the process, and `dat_ib_stop_counter` turns it
//! off again: off, a hook costs one load of [`COUNTING`] and a branch. On, a counter is bumped
//! with a relaxed load and store (no locked instruction), so counts are approximate when
//! several threads use one object at once (as OFED's plain counters are).
//!
//! Only what [`IA_COUNTED`], [`EP_COUNTED`] and [`EVD_COUNTED`] list is counted; the other
//! counters of the enumerations stay 0 (README says which and why).

use crate::provider::{AtomicOp, SendOp, Sge};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Once;

/// `DCNT_IA_ALL_COUNTERS`, `DCNT_EP_ALL_COUNTERS`, `DCNT_EVD_ALL_COUNTERS`.
pub const IA_COUNTERS: usize = 0x55;
pub const EP_COUNTERS: usize = 0x18;
pub const EVD_COUNTERS: usize = 0x0a;

/// Indices of the IA counters we count (`DCNT_IA_*`).
pub mod ia {
    pub const PZ_CREATE: usize = 0x00;
    pub const PZ_FREE: usize = 0x01;
    pub const LMR_CREATE: usize = 0x02;
    pub const LMR_FREE: usize = 0x03;
    pub const RMR_CREATE: usize = 0x04;
    pub const RMR_FREE: usize = 0x05;
    pub const PSP_CREATE: usize = 0x06;
    pub const PSP_CREATE_ANY: usize = 0x07;
    pub const PSP_FREE: usize = 0x08;
    pub const RSP_CREATE: usize = 0x09;
    pub const RSP_FREE: usize = 0x0a;
    pub const EVD_CREATE: usize = 0x0b;
    pub const EVD_FREE: usize = 0x0c;
    pub const EP_CREATE: usize = 0x0d;
    pub const EP_FREE: usize = 0x0e;
    pub const SRQ_CREATE: usize = 0x0f;
    pub const SRQ_FREE: usize = 0x10;
    pub const SP_CR: usize = 0x11;
    pub const SP_CR_ACCEPTED: usize = 0x12;
    pub const SP_CR_REJECTED: usize = 0x13;
    pub const ASYNC_ERROR: usize = 0x17;
    pub const ASYNC_QP_ERROR: usize = 0x18;
    pub const ASYNC_CQ_ERROR: usize = 0x19;
}

/// Indices of the EP counters we count (`DCNT_EP_*`); a post counter's byte total is the
/// counter after it.
pub mod ep {
    pub const CONNECT: usize = 0x00;
    pub const DISCONNECT: usize = 0x01;
    pub const POST_SEND: usize = 0x02;
    pub const POST_SEND_UD: usize = 0x04;
    pub const POST_RECV: usize = 0x06;
    pub const POST_WRITE: usize = 0x08;
    pub const POST_WRITE_IMM: usize = 0x0a;
    pub const POST_READ: usize = 0x0c;
    pub const POST_CMP_SWAP: usize = 0x0e;
    pub const POST_FETCH_ADD: usize = 0x0f;
}

/// Indices of the EVD counters we count (`DCNT_EVD_*`).
pub mod evd {
    pub const WAIT: usize = 0x00;
    pub const WAIT_BLOCKED: usize = 0x01;
    pub const DEQUEUE: usize = 0x03;
    pub const DEQUEUE_FOUND: usize = 0x04;
    pub const DEQUEUE_NOT_FOUND: usize = 0x05;
    pub const DEQUEUE_POLL: usize = 0x06;
    pub const DEQUEUE_POLL_FOUND: usize = 0x07;
}

/// The IA counters we count, with their names in the header (for `dat_ib_print_counters`).
pub const IA_COUNTED: &[(usize, &str)] = &[
    (ia::PZ_CREATE, "DCNT_IA_PZ_CREATE"),
    (ia::PZ_FREE, "DCNT_IA_PZ_FREE"),
    (ia::LMR_CREATE, "DCNT_IA_LMR_CREATE"),
    (ia::LMR_FREE, "DCNT_IA_LMR_FREE"),
    (ia::RMR_CREATE, "DCNT_IA_RMR_CREATE"),
    (ia::RMR_FREE, "DCNT_IA_RMR_FREE"),
    (ia::PSP_CREATE, "DCNT_IA_PSP_CREATE"),
    (ia::PSP_CREATE_ANY, "DCNT_IA_PSP_CREATE_ANY"),
    (ia::PSP_FREE, "DCNT_IA_PSP_FREE"),
    (ia::RSP_CREATE, "DCNT_IA_RSP_CREATE"),
    (ia::RSP_FREE, "DCNT_IA_RSP_FREE"),
    (ia::EVD_CREATE, "DCNT_IA_EVD_CREATE"),
    (ia::EVD_FREE, "DCNT_IA_EVD_FREE"),
    (ia::EP_CREATE, "DCNT_IA_EP_CREATE"),
    (ia::EP_FREE, "DCNT_IA_EP_FREE"),
    (ia::SRQ_CREATE, "DCNT_IA_SRQ_CREATE"),
    (ia::SRQ_FREE, "DCNT_IA_SRQ_FREE"),
    (ia::SP_CR, "DCNT_IA_SP_CR"),
    (ia::SP_CR_ACCEPTED, "DCNT_IA_SP_CR_ACCEPTED"),
    (ia::SP_CR_REJECTED, "DCNT_IA_SP_CR_REJECTED"),
    (ia::ASYNC_ERROR, "DCNT_IA_ASYNC_ERROR"),
    (ia::ASYNC_QP_ERROR, "DCNT_IA_ASYNC_QP_ERROR"),
    (ia::ASYNC_CQ_ERROR, "DCNT_IA_ASYNC_CQ_ERROR"),
];

/// The EP counters we count, with their names.
pub const EP_COUNTED: &[(usize, &str)] = &[
    (ep::CONNECT, "DCNT_EP_CONNECT"),
    (ep::DISCONNECT, "DCNT_EP_DISCONNECT"),
    (ep::POST_SEND, "DCNT_EP_POST_SEND"),
    (ep::POST_SEND + 1, "DCNT_EP_POST_SEND_DATA"),
    (ep::POST_SEND_UD, "DCNT_EP_POST_SEND_UD"),
    (ep::POST_SEND_UD + 1, "DCNT_EP_POST_SEND_UD_DATA"),
    (ep::POST_RECV, "DCNT_EP_POST_RECV"),
    (ep::POST_RECV + 1, "DCNT_EP_POST_RECV_DATA"),
    (ep::POST_WRITE, "DCNT_EP_POST_WRITE"),
    (ep::POST_WRITE + 1, "DCNT_EP_POST_WRITE_DATA"),
    (ep::POST_WRITE_IMM, "DCNT_EP_POST_WRITE_IMM"),
    (ep::POST_WRITE_IMM + 1, "DCNT_EP_POST_WRITE_IMM_DATA"),
    (ep::POST_READ, "DCNT_EP_POST_READ"),
    (ep::POST_READ + 1, "DCNT_EP_POST_READ_DATA"),
    (ep::POST_CMP_SWAP, "DCNT_EP_POST_CMP_SWAP"),
    (ep::POST_FETCH_ADD, "DCNT_EP_POST_FETCH_ADD"),
];

/// The EVD counters we count, with their names.
pub const EVD_COUNTED: &[(usize, &str)] = &[
    (evd::WAIT, "DCNT_EVD_WAIT"),
    (evd::WAIT_BLOCKED, "DCNT_EVD_WAIT_BLOCKED"),
    (evd::DEQUEUE, "DCNT_EVD_DEQUEUE"),
    (evd::DEQUEUE_FOUND, "DCNT_EVD_DEQUEUE_FOUND"),
    (evd::DEQUEUE_NOT_FOUND, "DCNT_EVD_DEQUEUE_NOT_FOUND"),
    (evd::DEQUEUE_POLL, "DCNT_EVD_DEQUEUE_POLL"),
    (evd::DEQUEUE_POLL_FOUND, "DCNT_EVD_DEQUEUE_POLL_FOUND"),
];

/// Whether counting is on (process-wide).
static COUNTING: AtomicBool = AtomicBool::new(false);

/// Whether the hooks count now.
#[inline(always)]
pub fn counting() -> bool {
    COUNTING.load(Ordering::Relaxed)
}

/// `dat_ib_start_counter` / `dat_ib_stop_counter`: turns counting on or off for the process.
pub fn set_counting(on: bool) {
    COUNTING.store(on, Ordering::Relaxed);
}

/// Turns counting on at the first IA open when the environment has `DAT_IB_COUNTERS=1` (for
/// consumers, such as dtestx, that read counters without starting them).
pub fn start_from_environment() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("DAT_IB_COUNTERS").is_some_and(|v| v == "1") {
            set_counting(true);
        }
    });
}

/// One object's counters.
pub struct Counters<const N: usize>([AtomicU64; N]);

pub type IaCounters = Counters<IA_COUNTERS>;
pub type EpCounters = Counters<EP_COUNTERS>;
pub type EvdCounters = Counters<EVD_COUNTERS>;

impl<const N: usize> Default for Counters<N> {
    fn default() -> Self {
        Counters(std::array::from_fn(|_| AtomicU64::new(0)))
    }
}

impl<const N: usize> Counters<N> {
    /// Adds one to counter `index` while counting is on.
    #[inline(always)]
    pub fn count(&self, index: usize) {
        if counting() {
            self.add(index, 1);
        }
    }

    /// Counts one post at `counter` and, when `with_bytes`, the byte total of `sges` at
    /// `counter + 1`, while counting is on.
    #[inline(always)]
    pub fn count_post(&self, counter: (usize, bool), sges: &[Sge]) {
        if counting() {
            self.add_post(counter, sges);
        }
    }

    /// Counts one request post of `op` (see [`request_counter`]) while counting is on.
    #[inline(always)]
    pub fn count_request(&self, op: SendOp, sges: &[Sge]) {
        if counting() {
            self.add_post(request_counter(op), sges);
        }
    }

    #[inline(always)]
    fn add_post(&self, (counter, with_bytes): (usize, bool), sges: &[Sge]) {
        self.add(counter, 1);
        if with_bytes {
            self.add(counter + 1, sges.iter().map(|s| u64::from(s.length)).sum());
        }
    }

    /// A relaxed load and store: no locked instruction (an increment racing with another on
    /// the same counter may be lost).
    #[inline(always)]
    fn add(&self, index: usize, n: u64) {
        let c = &self.0[index];
        c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    /// The value of counter `index`.
    pub fn get(&self, index: usize) -> u64 {
        self.0[index].load(Ordering::Relaxed)
    }

    /// `dat_ib_query_counters`: copies counter `index` to `out[index]`, or every counter to
    /// `out` when `index` is `N` (the `*_ALL_COUNTERS` value); `reset` zeroes what was copied.
    /// `out` has room for `N` counters, or `index + 1`.
    pub fn query(&self, index: usize, out: &mut [u64], reset: bool) {
        let range = if index == N { 0..N } else { index..index + 1 };
        for i in range {
            out[i] = if reset { self.0[i].swap(0, Ordering::Relaxed) } else { self.get(i) };
        }
    }
}

impl EvdCounters {
    /// Counts one `dat_evd_dequeue`: whether it polled the provider's queue (its software
    /// queue was empty), and whether it found an event.
    #[inline(always)]
    pub fn count_dequeue(&self, polled: bool, found: bool) {
        if counting() {
            self.add(evd::DEQUEUE, 1);
            self.add(if found { evd::DEQUEUE_FOUND } else { evd::DEQUEUE_NOT_FOUND }, 1);
            if polled {
                self.add(evd::DEQUEUE_POLL, 1);
                self.add(evd::DEQUEUE_POLL_FOUND, found as u64);
            }
        }
    }
}

/// The counter of a request post of `op`, and whether it has a byte total (the counter after it).
pub fn request_counter(op: SendOp) -> (usize, bool) {
    match op {
        SendOp::Send => (ep::POST_SEND, true),
        SendOp::RdmaWrite { .. } => (ep::POST_WRITE, true),
        SendOp::RdmaWriteImmed { .. } => (ep::POST_WRITE_IMM, true),
        SendOp::RdmaRead { .. } => (ep::POST_READ, true),
        SendOp::Atomic { op: AtomicOp::CmpSwap { .. }, .. } => (ep::POST_CMP_SWAP, false),
        SendOp::Atomic { op: AtomicOp::FetchAdd { .. }, .. } => (ep::POST_FETCH_ADD, false),
    }
}

/// Held by the unit tests that switch counting (a process-wide flag) on or off.
#[cfg(test)]
pub(crate) static SWITCH_TEST_LOCK: parking_lot::Mutex<()> = parking_lot::Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_while_on_and_query_resets_what_it_copies() {
        let _switch = SWITCH_TEST_LOCK.lock();
        let c = EpCounters::default();
        set_counting(false);
        c.count(ep::CONNECT);
        assert_eq!(c.get(ep::CONNECT), 0);
        set_counting(true);
        c.count(ep::CONNECT);
        let sges = [Sge { length: 10, ..Sge::default() }, Sge { length: 5, ..Sge::default() }];
        c.count_post(request_counter(SendOp::Send), &sges);
        set_counting(false);
        let mut out = [u64::MAX; EP_COUNTERS];
        c.query(ep::POST_SEND + 1, &mut out, true);
        assert_eq!(out[ep::POST_SEND + 1], 15);
        assert_eq!(out[ep::POST_SEND], u64::MAX, "only the counter asked for is written");
        c.query(EP_COUNTERS, &mut out, false);
        assert_eq!((out[ep::CONNECT], out[ep::POST_SEND], out[ep::POST_SEND + 1]), (1, 1, 0));
    }
}
