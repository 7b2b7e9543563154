//! Completion queue: a fixed-capacity ring of work completions under its own lock.

use super::super::{AsyncError, AsyncEvents, CompletionQueue, Waker, WorkCompletion};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;

pub const MAX_CQE: u32 = 1 << 20;

pub struct ShmCq {
    q: Mutex<Ring>,
    waker: Arc<dyn Waker>,
    async_events: Arc<dyn AsyncEvents>,
}

struct Ring {
    items: VecDeque<WorkCompletion>,
    cap: usize,
    overflowed: bool,
}

impl ShmCq {
    pub fn new(min_entries: u32, waker: Arc<dyn Waker>, async_events: Arc<dyn AsyncEvents>) -> DatResult<ShmCq> {
        if min_entries > MAX_CQE {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        let cap = min_entries.max(1) as usize;
        Ok(ShmCq {
            q: Mutex::new(Ring { items: VecDeque::with_capacity(cap), cap, overflowed: false }),
            waker,
            async_events,
        })
    }

    /// Adds one completion. Returns false (and raises CqOverflow once) when the queue is full.
    /// The caller wakes the waiter with [`ShmCq::wake`] once it has released its own locks.
    pub fn push(&self, wc: WorkCompletion) -> bool {
        let mut q = self.q.lock();
        if q.items.len() >= q.cap {
            let first = !q.overflowed;
            q.overflowed = true;
            drop(q);
            if first {
                tracing::warn!("shm: completion queue overflow, completion dropped");
                self.async_events.async_error(AsyncError::CqOverflow);
            }
            return false;
        }
        q.items.push_back(wc);
        true
    }

    pub fn wake(&self) {
        if self.waker.wants_wake() {
            self.waker.wake();
        }
    }
}

impl CompletionQueue for ShmCq {
    fn poll(&self, out: &mut [WorkCompletion]) -> usize {
        let mut q = self.q.lock();
        let n = out.len().min(q.items.len());
        for (slot, wc) in out.iter_mut().zip(q.items.drain(..n)) {
            *slot = wc;
        }
        n
    }

    fn resize(&self, min_entries: u32) -> DatResult<()> {
        if min_entries > MAX_CQE {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        let mut q = self.q.lock();
        let cap = min_entries.max(1) as usize;
        if cap < q.items.len() {
            return Err(DatError::invalid_state(0));
        }
        let extra = cap.saturating_sub(q.items.len());
        q.items.reserve(extra);
        q.cap = cap;
        q.overflowed = false;
        Ok(())
    }
}
