//! Event dispatchers (EVD).
//!
//! An EVD owns a bounded software queue (connection, CR, async and software events) and, when
//! created for DTO or RMR-bind events, a provider completion queue. Completions stay in the
//! provider's queue until a dequeue or wait pulls them, and a wait moves at most as many as the
//! EVD's queue has room for, so a DTO EVD never overflows. Each EVD has its own lock; nothing
//! here takes a global lock or allocates on the dequeue/wait path.

use crate::cno::ConsumerNotifier;
use crate::codes::*;
use crate::counters::{self, EvdCounters};
use crate::error::{DatError, DatResult};
use crate::event::{self, Event, EventData};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::{CompletionQueue, WakeSource, Waker, WcOpcode, WorkCompletion};
use crate::waiting::{AdaptiveSpin, WaitClock};
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Where [`EventDispatcher::dequeue_into`] and [`EventDispatcher::wait_into`] put an event: a
/// core [`Event`], or a face's `DAT_EVENT` (whose `write` is `#[inline(always)]`, so that each
/// of their calls gets its own copy).
pub trait EventSink {
    fn write(&mut self, ev: &Event);
    /// The DTO completion event of `wc` on EVD `evd` ([`event::from_completion`]), written
    /// straight from the completion (a face's `#[inline(always)]` version writes its fields
    /// without building the [`Event`] first).
    #[inline(always)]
    fn write_completion(&mut self, evd: Handle, wc: &WorkCompletion) {
        self.write(&event::from_completion(evd, wc));
    }
}

impl EventSink for Event {
    #[inline(always)]
    fn write(&mut self, ev: &Event) {
        *self = *ev;
    }
}

/// How many provider completions one wait or dequeue step moves at a time (the EVD's buffer).
const DRAIN_BATCH: usize = 16;

pub struct EventDispatcher {
    pub ia: Arc<InterfaceAdapter>,
    pub flags: u32,
    /// Itself, for the CNO it attaches to.
    this: Weak<EventDispatcher>,
    /// This EVD's handle (`Handle::NULL` until it is in the handle table): one plain load
    /// where a completion's event names its EVD.
    handle: AtomicU64,
    cq: Option<Arc<dyn CompletionQueue>>,
    state: Mutex<EvdState>,
    cond: Condvar,
    /// Threads asleep in `wait`; providers skip wakes when zero and no CNO is attached.
    sleepers: AtomicU32,
    has_cno: AtomicBool,
    /// EPs, service points and SRQs that name this EVD.
    pub users: AtomicU32,
    /// What the IB counters extension reports for this EVD.
    pub counters: EvdCounters,
}

struct EvdState {
    queue: VecDeque<Event>,
    qlen: usize,
    enabled: bool,
    waitable: bool,
    waiter: bool,
    cno: Option<Arc<ConsumerNotifier>>,
    /// The CNO's waiter has this EVD's queue armed ([`EventDispatcher::arm_for_cno`]).
    cno_armed: bool,
    spin: AdaptiveSpin,
    /// Where `drain` and `dequeue` take provider completions: kept here, so that no poll
    /// initialises a buffer.
    polled: [WorkCompletion; DRAIN_BATCH],
    /// `polled[pending.start..pending.end]`: the rest of a dequeue's batch, not converted into
    /// events yet. They are the EVD's oldest events: while any are left, `queue` is empty
    /// (whatever adds to or reads `queue` first queues them, [`EventDispatcher::queue_pending`]),
    /// so the dequeue hands them out in order straight from here.
    pending: std::ops::Range<usize>,
}

handle::dat_object!(EventDispatcher, Evd);

/// The waker a provider's completion queue calls.
struct EvdWaker(Weak<EventDispatcher>);

impl Waker for EvdWaker {
    fn wake(&self) {
        if let Some(evd) = self.0.upgrade() {
            evd.notify();
        }
    }
    fn wants_wake(&self) -> bool {
        self.0.upgrade().is_some_and(|e| e.sleepers.load(Ordering::SeqCst) > 0 || e.has_cno.load(Ordering::SeqCst))
    }
}

impl EventDispatcher {
    /// `dat_evd_create`: an EVD of at least `qlen` entries for the event kinds in `flags`.
    pub fn create(
        ia: &Arc<InterfaceAdapter>,
        qlen: i32,
        cno: Option<Arc<ConsumerNotifier>>,
        flags: u32,
    ) -> DatResult<(Handle, Arc<EventDispatcher>)> {
        let max = ia.device.attr().max_cqe as i32;
        if qlen <= 0 || qlen > max {
            return Err(DatError::invalid_arg(2));
        }
        let all = DAT_EVD_SOFTWARE_FLAG
            | DAT_EVD_CR_FLAG
            | DAT_EVD_DTO_FLAG
            | DAT_EVD_CONNECTION_FLAG
            | DAT_EVD_RMR_BIND_FLAG
            | DAT_EVD_ASYNC_FLAG;
        if flags == 0 || flags & !all != 0 {
            return Err(DatError::invalid_arg(4));
        }
        let wants_cq = flags & (DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG) != 0;
        let qlen = qlen as usize;
        let mut cq_error = None;
        let evd = Arc::new_cyclic(|weak: &Weak<EventDispatcher>| {
            let cq = if wants_cq {
                let waker = Arc::new(EvdWaker(weak.clone()));
                ia.device.create_cq(qlen as u32, waker).map_err(|e| cq_error = Some(e)).ok()
            } else {
                None
            };
            Self::new(weak.clone(), ia, flags, cq, qlen, cno.clone())
        });
        if let Some(e) = cq_error {
            return Err(e);
        }
        if let Some(c) = &cno {
            c.attach(Arc::downgrade(&evd));
            evd.refresh_notify();
        }
        let h = handle::insert(evd.clone())?;
        evd.handle.store(h.0, Ordering::Relaxed);
        ia.adopt(h);
        Ok((h, evd))
    }

    /// An EVD of `qlen` entries on `cq` (None: no provider queue), not yet in the handle table;
    /// `this` is the `Arc` it goes into.
    fn new(
        this: Weak<EventDispatcher>,
        ia: &Arc<InterfaceAdapter>,
        flags: u32,
        cq: Option<Arc<dyn CompletionQueue>>,
        qlen: usize,
        cno: Option<Arc<ConsumerNotifier>>,
    ) -> EventDispatcher {
        let has_cno = cno.is_some();
        EventDispatcher {
            ia: ia.clone(),
            flags,
            this,
            handle: AtomicU64::new(Handle::NULL.0),
            cq,
            state: Mutex::new(EvdState {
                queue: VecDeque::with_capacity(qlen),
                qlen,
                enabled: true,
                waitable: true,
                waiter: false,
                cno,
                cno_armed: false,
                spin: AdaptiveSpin::new(),
                polled: [WorkCompletion::EMPTY; DRAIN_BATCH],
                pending: 0..0,
            }),
            cond: Condvar::new(),
            sleepers: AtomicU32::new(0),
            has_cno: AtomicBool::new(has_cno),
            users: AtomicU32::new(0),
            counters: EvdCounters::default(),
        }
    }

    #[inline]
    pub fn handle(&self) -> Handle {
        Handle(self.handle.load(Ordering::Relaxed))
    }

    pub fn completion_queue(&self) -> Option<&Arc<dyn CompletionQueue>> {
        self.cq.as_ref()
    }

    pub fn qlen(&self) -> usize {
        self.state.lock().qlen
    }

    pub fn cno(&self) -> Option<Arc<ConsumerNotifier>> {
        self.state.lock().cno.clone()
    }

    /// `DAT_EVD_STATE_*` bits for `dat_evd_query`.
    pub fn state_bits(&self) -> u32 {
        let st = self.state.lock();
        (if st.enabled { DAT_EVD_STATE_ENABLED } else { DAT_EVD_STATE_DISABLED })
            | if st.waitable { DAT_EVD_STATE_WAITABLE } else { DAT_EVD_STATE_UNWAITABLE }
    }

    /// Adds a software-queue event (connection, CR, async, software). Full queue: the event is
    /// dropped, an overflow is reported to the IA's async EVD, and `DAT_QUEUE_FULL` returned.
    pub fn post(&self, ev: Event) -> DatResult<()> {
        let mut st = self.state.lock();
        self.queue_pending(&mut st);
        self.push_software(st, ev)
    }

    /// Adds a DTO completion made in software (a post on a disconnected EP, flushed at once)
    /// behind every completion the provider already holds for this EVD: the EP's earlier work,
    /// which the provider flushed when the connection ended, completes first, as the
    /// completions of one queue come out in posting order.
    pub fn post_completion(&self, ev: Event) -> DatResult<()> {
        let mut st = self.state.lock();
        self.drain(&mut st);
        self.push_software(st, ev)
    }

    /// The rest of [`post`](Self::post) and [`post_completion`](Self::post_completion), with
    /// the batch of a dequeue already queued.
    fn push_software(&self, mut st: MutexGuard<'_, EvdState>, ev: Event) -> DatResult<()> {
        if st.queue.len() >= st.qlen {
            drop(st);
            tracing::warn!(evd = ?self.handle(), "EVD overflow: event {:#x} dropped", ev.number);
            self.ia.report_overflow(self.handle());
            return Err(DatError::new(DAT_QUEUE_FULL, 0));
        }
        st.queue.push_back(Event { evd: self.handle(), ..ev });
        let cno = self.trigger_target(&st);
        let waiter = st.waiter;
        self.cond.notify_all();
        drop(st);
        if waiter {
            self.interrupt_waiter();
        }
        if let Some(c) = cno {
            c.trigger(self.handle());
        }
        Ok(())
    }

    /// Called by the provider (through the waker) when completions arrived.
    fn notify(&self) {
        let st = self.state.lock();
        let cno = self.trigger_target(&st);
        self.cond.notify_all();
        drop(st);
        if let Some(c) = cno {
            c.trigger(self.handle());
        }
    }

    /// The CNO to trigger: one is attached, the EVD is enabled and nobody waits on the EVD.
    fn trigger_target(&self, st: &EvdState) -> Option<Arc<ConsumerNotifier>> {
        if st.enabled && !st.waiter {
            st.cno.clone()
        } else {
            None
        }
    }

    /// Converts the rest of a dequeue's batch ([`EvdState::pending`]) into queued events: done
    /// before anything else adds to or reads the queue. Out of line: the dequeue never calls it.
    #[inline(never)]
    fn queue_pending(&self, st: &mut EvdState) {
        let EvdState { queue, polled, pending, .. } = st;
        for wc in &polled[pending.clone()] {
            queue.push_back(self.convert(wc));
        }
        *pending = 0..0;
    }

    /// Moves provider completions into the software queue, as many as fit; returns how many.
    fn drain(&self, st: &mut EvdState) -> usize {
        self.queue_pending(st);
        let Some(cq) = &self.cq else { return 0 };
        let EvdState { queue, qlen, polled, .. } = st;
        let mut moved = 0;
        loop {
            let room = (*qlen - queue.len().min(*qlen)).min(DRAIN_BATCH);
            if room == 0 {
                return moved;
            }
            let n = cq.poll(&mut polled[..room]);
            for wc in &polled[..n] {
                queue.push_back(self.convert(wc));
            }
            moved += n;
            if n < room {
                return moved;
            }
        }
    }

    /// Inlined everywhere: at the dequeue's and the wait's write, a completion's event goes
    /// straight into the face's stores.
    #[inline(always)]
    fn convert(&self, wc: &WorkCompletion) -> Event {
        if wc.opcode == WcOpcode::Bind {
            return crate::rmr::bind_completion(self.handle(), wc);
        }
        event::from_completion(self.handle(), wc)
    }

    /// Writes the event of completion `wc` into `out`: a DTO completion straight from `wc`
    /// ([`EventSink::write_completion`]), a bind completion (its RMR looked up) out of line.
    #[inline(always)]
    fn write_converted(&self, wc: &WorkCompletion, out: &mut impl EventSink) {
        if wc.opcode == WcOpcode::Bind {
            out.write(&self.bind_event(wc));
        } else {
            out.write_completion(self.handle(), wc);
        }
    }

    #[cold]
    #[inline(never)]
    fn bind_event(&self, wc: &WorkCompletion) -> Event {
        crate::rmr::bind_completion(self.handle(), wc)
    }

    /// `dat_evd_dequeue`: the oldest event, or `DAT_QUEUE_EMPTY`.
    pub fn dequeue(&self) -> DatResult<Event> {
        let mut ev = Event::EMPTY;
        if !self.dequeue_into(&mut ev)? {
            return Err(DatError::QUEUE_EMPTY);
        }
        Ok(ev)
    }

    /// `dat_evd_dequeue` into `out`, written once the EVD's lock is released. An empty queue
    /// takes a batch of provider completions at once: the first is written, the rest kept in
    /// the poll buffer ([`EvdState::pending`]) and written by the next dequeues from there, so
    /// one provider poll serves the batch's dequeues and a completion is converted once, at its
    /// write. Inlined into the export, with the face's [`EventSink::write`] at each of its two
    /// calls: a completion is known to be a DTO or bind completion there, so its write is a few
    /// stores. Returns false (nothing written) when there was no event (`DAT_QUEUE_EMPTY`,
    /// which the face returns as a constant; counted here).
    #[inline]
    pub fn dequeue_into(&self, out: &mut impl EventSink) -> DatResult<bool> {
        let mut st = self.state.lock();
        let wc = if st.pending.start < st.pending.end {
            let wc = st.polled[st.pending.start];
            st.pending.start += 1;
            self.counters.count_dequeue(false, true);
            wc
        } else if let Some(ev) = st.queue.pop_front() {
            self.counters.count_dequeue(false, true);
            drop(st);
            out.write(&ev);
            return Ok(true);
        } else {
            let Some(cq) = &self.cq else {
                self.counters.count_dequeue(false, false);
                return Ok(false);
            };
            let EvdState { qlen, polled, pending, .. } = &mut *st;
            let n = cq.poll(&mut polled[..(*qlen).min(DRAIN_BATCH)]);
            self.counters.count_dequeue(true, n > 0);
            if n == 0 {
                return Ok(false);
            }
            *pending = 1..n;
            polled[0]
        };
        drop(st);
        self.write_converted(&wc, out);
        Ok(true)
    }

    /// `dat_evd_wait`: waits until `threshold` events are queued or `timeout_us` passes, then
    /// returns the oldest event and how many remain ([`EventDispatcher::wait_into`]).
    pub fn wait(&self, timeout_us: u32, threshold: i32) -> DatResult<(Event, i32)> {
        let mut ev = Event::EMPTY;
        let more = self.wait_into(timeout_us, threshold, &mut ev)?;
        Ok((ev, more))
    }

    /// `dat_evd_wait` into `out` (written once the EVD's lock is released); returns how many
    /// events remain. A wait for one event on an EVD with nothing queued (nor
    /// [`EvdState::pending`]) polls the provider once, as [`EventDispatcher::dequeue_into`]
    /// does: when that takes the provider's queue whole (fewer completions than asked for), it
    /// writes the first and keeps the rest in the poll buffer, whose length is then exactly the
    /// count of events left. Anything else goes the queue's way
    /// ([`EventDispatcher::wait_queued`]), which counts everything the provider has.
    #[inline]
    pub fn wait_into(&self, timeout_us: u32, threshold: i32, out: &mut impl EventSink) -> DatResult<i32> {
        let mut st = self.state.lock();
        if threshold <= 0 || threshold as usize > st.qlen {
            return Err(DatError::invalid_arg(3));
        }
        if !st.waitable {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EVD_UNWAITABLE));
        }
        if st.waiter {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EVD_WAITER));
        }
        self.counters.count(counters::evd::WAIT);
        let mut polled_empty = false;
        if threshold == 1 && st.queue.is_empty() && st.pending.is_empty() {
            if let Some(cq) = &self.cq {
                let EvdState { qlen, polled, pending, .. } = &mut *st;
                let asked = (*qlen).min(DRAIN_BATCH);
                let n = cq.poll(&mut polled[..asked]);
                if n > 0 && n < asked {
                    // The provider's queue is empty now: the batch's rest is all that remains.
                    *pending = 1..n;
                    let wc = polled[0];
                    drop(st);
                    self.write_converted(&wc, out);
                    return Ok(n as i32 - 1);
                }
                // A full batch goes to the queue, with what else the provider has.
                *pending = 0..n;
                polled_empty = n == 0;
            }
        }
        let (ev, more) = self.wait_queued(st, timeout_us, threshold as usize, polled_empty)?;
        out.write(&ev);
        Ok(more)
    }

    /// The rest of a `dat_evd_wait` (its checks done), through the software queue: drains the
    /// provider's completions into it and waits until `threshold` events are there. When
    /// `polled_empty`, the caller has just polled the provider and found nothing queued, so
    /// the first check is skipped. Returns with the lock released.
    ///
    /// The waiting thread does the work itself: it polls the provider's queue (which drives the
    /// provider's progress), spins (for the EVD's [`AdaptiveSpin`], at most [`crate::waiting::spin_budget`])
    /// while nothing is there, and then sleeps with the provider's arm / re-poll / block
    /// protocol (see [`CompletionQueue`]), so no other thread is on the path of a completion.
    /// A wait that finds its events at the first poll, or that neither spins nor has a
    /// timeout, does not read the clock; a timed wait that does not spin reads it once, at its
    /// first sleep (and again only after a sleep that ended without its events).
    #[inline(never)]
    fn wait_queued(
        &self,
        mut st: MutexGuard<'_, EvdState>,
        timeout_us: u32,
        threshold: usize,
        polled_empty: bool,
    ) -> DatResult<(Event, i32)> {
        if !polled_empty {
            self.drain(&mut st);
            if let Some(ready) = Self::take_ready(&mut st, threshold) {
                return Ok(ready);
            }
        }
        let spin = if self.cq.is_some() { st.spin.this_wait() } else { Duration::ZERO };
        let mut clock = WaitClock::start(timeout_us, spin, threshold == 1);
        let mut slept = false;
        st.waiter = true;
        let result = loop {
            if clock.timed_out() {
                break Err(DatError::TIMEOUT);
            }
            if clock.spinning() {
                // Let a thread queueing a software event in, then poll again.
                MutexGuard::bump(&mut st);
                std::hint::spin_loop();
            } else {
                let timeout = clock.sleep_timeout();
                let timed_out = self.sleep(&mut st, threshold, timeout);
                clock.slept(timed_out);
                self.counters.count(counters::evd::WAIT_BLOCKED);
                slept = true;
            }
            self.drain(&mut st);
            if !st.waitable {
                break Err(DatError::invalid_state(DAT_INVALID_STATE_EVD_UNWAITABLE));
            }
            if let Some(ready) = Self::take_ready(&mut st, threshold) {
                break Ok(ready);
            }
        };
        if result.is_ok() && !spin.is_zero() {
            if slept {
                st.spin.slept();
            } else {
                st.spin.satisfied();
            }
        }
        st.waiter = false;
        // While this thread waited, the CNO's waiter left this EVD out of its sleep.
        if let Some(c) = &st.cno {
            c.rescan();
        }
        result
    }

    /// The oldest event and how many remain, once `threshold` events are queued.
    fn take_ready(st: &mut EvdState, threshold: usize) -> Option<(Event, i32)> {
        if st.queue.len() < threshold {
            return None;
        }
        let ev = st.queue.pop_front()?;
        Some((ev, st.queue.len() as i32))
    }

    /// Sleeps once, until something may have arrived or `timeout` passes; the caller re-checks.
    /// True when the sleep ended by its timeout.
    fn sleep(&self, st: &mut MutexGuard<'_, EvdState>, threshold: usize, timeout: Option<Duration>) -> bool {
        let ready = |st: &EvdState| st.queue.len() >= threshold || !st.waitable;
        if let Some(cq) = &self.cq {
            if cq.arm() {
                // Anything that arrived before the arm is taken now; anything after it ends
                // `block` (the provider's invariant), and `post` interrupts it.
                self.drain(st);
                if !ready(st) {
                    return MutexGuard::unlocked(st, || cq.block(timeout));
                }
                cq.disarm();
                return false;
            }
        }
        // The provider wakes us through the Waker (while `sleepers` > 0) or `post` does.
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        // Re-check after announcing ourselves, so a completion that raced in is seen.
        self.drain(st);
        let mut timed_out = false;
        if !ready(st) {
            match timeout {
                Some(t) => timed_out = self.cond.wait_for(st, t).timed_out(),
                None => self.cond.wait(st),
            }
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        timed_out
    }

    /// Ends the sleep of a waiter blocked in the provider (no-op for the condition variable
    /// path, which `cond.notify_all` covers). Called with the EVD lock released.
    fn interrupt_waiter(&self) {
        if let Some(cq) = &self.cq {
            cq.interrupt();
        }
    }

    /// `dat_evd_resize`.
    pub fn resize(&self, qlen: i32) -> DatResult<()> {
        if qlen <= 0 || qlen > self.ia.device.attr().max_cqe as i32 {
            return Err(DatError::invalid_arg(2));
        }
        let mut st = self.state.lock();
        self.queue_pending(&mut st);
        if (qlen as usize) < st.queue.len() {
            return Err(DatError::invalid_state(0));
        }
        if let Some(cq) = &self.cq {
            cq.resize(qlen as u32)?;
        }
        let extra = (qlen as usize).saturating_sub(st.queue.capacity());
        st.queue.reserve(extra);
        st.qlen = qlen as usize;
        Ok(())
    }

    pub fn set_enabled(&self, enabled: bool) {
        let mut st = self.state.lock();
        let enabling = enabled && !st.enabled;
        st.enabled = enabled;
        // A disabled EVD was left out of the CNO waiter's sleep.
        if let Some(c) = st.cno.as_ref().filter(|_| enabling) {
            c.rescan();
        }
    }

    /// `dat_evd_set_unwaitable` wakes current waiters, which return `DAT_INVALID_STATE`.
    pub fn set_waitable(&self, waitable: bool) {
        let mut st = self.state.lock();
        st.waitable = waitable;
        self.cond.notify_all();
        drop(st);
        self.interrupt_waiter();
    }

    /// `dat_evd_modify_cno`.
    pub fn set_cno(&self, cno: Option<Arc<ConsumerNotifier>>) {
        let mut st = self.state.lock();
        // Detached first: the CNO may be the same one again.
        if let Some(old) = st.cno.take() {
            old.detach(self);
        }
        if let Some(c) = &cno {
            c.attach(self.this.clone());
        }
        self.has_cno.store(cno.is_some(), Ordering::SeqCst);
        st.cno = cno;
        self.apply_notify(&st);
        // A waiter sleeping on the condition variable (CNO mode) re-enters the provider's
        // sleeping protocol, which may have changed with the mode.
        self.cond.notify_all();
    }

    /// Sets the provider's notify mode ([`CompletionQueue::set_notify`]) for the attached CNO:
    /// on only when the CNO has a proxy agent, which must be called when an event arrives
    /// although no thread is in a call. Without one, the CNO's waiter polls and sleeps on this
    /// EVD's queue itself, like an EVD's waiter, and a trigger can wait for the next
    /// `dat_cno_wait`, whose first look takes what arrived meanwhile.
    pub(crate) fn refresh_notify(&self) {
        let st = self.state.lock();
        self.apply_notify(&st);
    }

    fn apply_notify(&self, st: &EvdState) {
        if let Some(cq) = &self.cq {
            cq.set_notify(st.cno.as_ref().is_some_and(|c| c.has_agent()));
        }
    }

    /// Detaches from its CNO on free.
    pub fn release(&self) {
        self.set_cno(None);
    }

    /// For a CNO's waiter, between its looks: when an event arriving now would trigger the CNO
    /// (the EVD is enabled and nobody waits on it), moves the provider's completions into the
    /// queue. True when there were any: they arrived since the last look, and nobody waits for
    /// them (the CNO fires).
    pub(crate) fn poll_for_cno(&self) -> bool {
        if self.cq.is_none() {
            return false;
        }
        let mut st = self.state.lock();
        st.enabled && !st.waiter && self.drain(&mut st) > 0
    }

    /// For a CNO's waiter about to sleep: arms this EVD's queue for it
    /// ([`CompletionQueue::arm_group`]) when an arrival would trigger the CNO, and returns what
    /// to sleep on. None: no queue, the EVD cannot trigger now (the CNO is told when it can
    /// again, [`ConsumerNotifier::rescan`]), or the queue cannot wake a group sleeper (its
    /// arrivals come through the [`Waker`]).
    pub(crate) fn arm_for_cno(&self) -> Option<WakeSource> {
        let cq = self.cq.as_ref()?;
        let mut st = self.state.lock();
        if !st.enabled || st.waiter || st.cno_armed {
            return None;
        }
        let source = cq.arm_group()?;
        st.cno_armed = true;
        Some(source)
    }

    /// The CNO's waiter woke: undoes [`EventDispatcher::arm_for_cno`].
    pub(crate) fn disarm_for_cno(&self) {
        let Some(cq) = &self.cq else { return };
        let mut st = self.state.lock();
        if std::mem::take(&mut st.cno_armed) {
            cq.disarm_group(st.waiter);
        }
    }

    /// Event kinds this EVD accepts.
    pub fn accepts(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
    /// A DTO and software EVD of 64 entries on `cq`, in the handle table and owned by `ia`
    /// (closing it frees the EVD), as `dat_evd_create` makes one on a provider's queue.
    #[cfg(test)]
    pub(crate) fn create_on(
        ia: &Arc<InterfaceAdapter>,
        cq: Arc<dyn CompletionQueue>,
        cno: Option<Arc<ConsumerNotifier>>,
    ) -> Arc<EventDispatcher> {
        let flags = DAT_EVD_DTO_FLAG | DAT_EVD_SOFTWARE_FLAG;
        let evd = Arc::new_cyclic(|weak| Self::new(weak.clone(), ia, flags, Some(cq), 64, cno.clone()));
        if let Some(c) = &cno {
            c.attach(Arc::downgrade(&evd));
        }
        let h = handle::insert(evd.clone()).expect("handle");
        evd.handle.store(h.0, Ordering::Relaxed);
        ia.adopt(h);
        evd
    }
}

/// A software event for `dat_evd_post_se`.
pub fn software_event(pointer: u64) -> Event {
    Event { number: DAT_SOFTWARE_EVENT, evd: Handle::NULL, data: EventData::Software { pointer } }
}

/// `dat_evd_free`: `DAT_INVALID_STATE_EVD_IN_USE` while EPs or service points name it, unless
/// `force` (abrupt IA close, after those were freed).
pub fn free_evd(h: Handle, force: bool) -> DatResult<()> {
    let evd = handle::get::<EventDispatcher>(h, DAT_INVALID_HANDLE_EVD_REQUEST)?;
    if !force && evd.users.load(Ordering::SeqCst) != 0 {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_EVD_IN_USE));
    }
    if evd.ia.async_evd().is_some_and(|a| a.handle() == h) && !force {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_EVD_ASYNC));
    }
    handle::remove::<EventDispatcher>(h);
    evd.release();
    evd.set_waitable(false);
    evd.ia.disown(h);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A provider queue whose completions the test adds.
    struct ListedCompletions(Mutex<VecDeque<WorkCompletion>>);

    impl CompletionQueue for ListedCompletions {
        fn poll(&self, out: &mut [WorkCompletion]) -> usize {
            let mut list = self.0.lock();
            let n = out.len().min(list.len());
            for (slot, wc) in out.iter_mut().zip(list.drain(..n)) {
                *slot = wc;
            }
            n
        }
        fn resize(&self, _: u32) -> DatResult<()> {
            Ok(())
        }
    }

    /// A provider queue whose completion arrives just as the waiter arms, so that the re-poll
    /// after the arm finds it; counts arms and their ends (a block or a disarm).
    struct ArrivesAtArm {
        list: ListedCompletions,
        arms: AtomicUsize,
        ends: AtomicUsize,
    }

    impl CompletionQueue for ArrivesAtArm {
        fn poll(&self, out: &mut [WorkCompletion]) -> usize {
            self.list.poll(out)
        }
        fn resize(&self, _: u32) -> DatResult<()> {
            Ok(())
        }
        fn arm(&self) -> bool {
            self.arms.fetch_add(1, Ordering::SeqCst);
            self.list.0.lock().push_back(send_done(7));
            true
        }
        fn block(&self, _: Option<Duration>) -> bool {
            self.ends.fetch_add(1, Ordering::SeqCst);
            false
        }
        fn disarm(&self) {
            self.ends.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// Every arm of a wait ends in a block or a disarm: a wait whose re-poll found its event
    /// does not leave the provider's queue armed.
    #[test]
    fn a_wait_whose_repoll_finds_its_event_disarms_the_queue() {
        let (ia_h, ia) = crate::ia::tests::open_shm();
        let cq = Arc::new(ArrivesAtArm {
            list: ListedCompletions(Mutex::new(VecDeque::new())),
            arms: AtomicUsize::new(0),
            ends: AtomicUsize::new(0),
        });
        let evd = EventDispatcher::new(Weak::new(), &ia, DAT_EVD_DTO_FLAG, Some(cq.clone()), 8, None);
        let (ev, left) = evd.wait(5_000_000, 1).expect("wait");
        assert_eq!((cookie(&ev), left), (7, 0));
        assert_eq!(cq.arms.load(Ordering::SeqCst), 1, "the wait slept once");
        assert_eq!(cq.ends.load(Ordering::SeqCst), 1, "its arm was ended");
        drop(evd);
        crate::ia::close(ia_h, true).expect("close IA");
    }

    fn send_done(cookie: u64) -> WorkCompletion {
        WorkCompletion { wr_id: cookie, opcode: WcOpcode::Send, ..WorkCompletion::EMPTY }
    }

    /// What an event is, in the test's terms: a DTO completion's cookie, or 0 for the software
    /// event.
    fn cookie(ev: &Event) -> u64 {
        match ev.data {
            EventData::Dto { cookie, .. } => cookie,
            EventData::Software { .. } => 0,
            _ => panic!("unexpected event {ev:?}"),
        }
    }

    /// The rest of a dequeue's batch, kept in the poll buffer, stays the EVD's oldest events
    /// for every other path: a posted event, a wait (which polls into the same buffer), the
    /// wait's count of the events left, and a resize's check of how many are queued.
    #[test]
    fn the_rest_of_a_dequeue_batch_stays_oldest_for_post_wait_and_resize() {
        let (ia_h, ia) = crate::ia::tests::open_shm();
        let cq = Arc::new(ListedCompletions(Mutex::new(VecDeque::new())));
        let evd =
            EventDispatcher::new(Weak::new(), &ia, DAT_EVD_DTO_FLAG | DAT_EVD_SOFTWARE_FLAG, Some(cq.clone()), 8, None);
        let complete = |cookies: &[u64]| cq.0.lock().extend(cookies.iter().map(|&c| send_done(c)));
        let dequeue_all = || std::iter::from_fn(|| evd.dequeue().ok()).map(|ev| cookie(&ev)).collect::<Vec<u64>>();

        complete(&[1, 2, 3]);
        assert_eq!(cookie(&evd.dequeue().expect("the first of a batch")), 1);
        assert_eq!(evd.resize(1).unwrap_err().0, DatError::invalid_state(0).0, "2 events queued, 1 entry");
        assert_eq!(dequeue_all(), [2, 3]);

        complete(&[4, 5, 6]);
        assert_eq!(cookie(&evd.dequeue().expect("the first of a batch")), 4);
        complete(&[7]);
        let (ev, left) = evd.wait(0, 1).expect("wait");
        assert_eq!((cookie(&ev), left), (5, 2), "the wait's event and the events left after it");
        assert_eq!(dequeue_all(), [6, 7]);

        complete(&[8, 9]);
        assert_eq!(cookie(&evd.dequeue().expect("the first of a batch")), 8);
        evd.post(Event { number: DAT_SOFTWARE_EVENT, evd: Handle::NULL, data: EventData::Software { pointer: 0 } })
            .expect("post");
        complete(&[10]);
        assert_eq!(dequeue_all(), [9, 0, 10]);

        // A posted event finds the EVD full when the batch's rest fills it.
        let small =
            EventDispatcher::new(Weak::new(), &ia, DAT_EVD_DTO_FLAG | DAT_EVD_SOFTWARE_FLAG, Some(cq.clone()), 2, None);
        complete(&[11, 12]);
        assert_eq!(cookie(&small.dequeue().expect("the first of a batch")), 11);
        let software =
            Event { number: DAT_SOFTWARE_EVENT, evd: Handle::NULL, data: EventData::Software { pointer: 0 } };
        small.post(software).expect("post into the second entry");
        assert_eq!(
            small.post(software).unwrap_err().0,
            DatError::new(DAT_QUEUE_FULL, 0).0,
            "a third event in 2 entries"
        );
        drop(small);
        drop(evd);
        crate::ia::close(ia_h, true).expect("close IA");
    }

    /// A wait for one event reports exactly how many events are left: all of a provider's
    /// completions, whether its poll took them whole (the rest kept in the poll buffer) or not
    /// (more than one poll's batch: they go through the queue), and in order.
    #[test]
    fn a_wait_for_one_event_counts_every_event_left() {
        let (ia_h, ia) = crate::ia::tests::open_shm();
        let cq = Arc::new(ListedCompletions(Mutex::new(VecDeque::new())));
        let evd = EventDispatcher::new(Weak::new(), &ia, DAT_EVD_DTO_FLAG, Some(cq.clone()), 64, None);
        let complete = |cookies: &[u64]| cq.0.lock().extend(cookies.iter().map(|&c| send_done(c)));
        let wait = || evd.wait(0, 1).map(|(ev, left)| (cookie(&ev), left)).expect("wait");
        let dequeue_all = || std::iter::from_fn(|| evd.dequeue().ok()).map(|ev| cookie(&ev)).collect::<Vec<u64>>();

        let more_than_a_batch: Vec<u64> = (1..=DRAIN_BATCH as u64 + 4).collect();
        complete(&more_than_a_batch);
        assert_eq!(wait(), (1, DRAIN_BATCH as i32 + 3), "more than one poll's batch");
        assert_eq!(dequeue_all(), more_than_a_batch[1..]);

        complete(&[101, 102, 103]);
        assert_eq!(wait(), (101, 2), "a batch taken whole");
        complete(&[104]);
        assert_eq!(wait(), (102, 2), "the batch's rest and a new completion");
        assert_eq!(dequeue_all(), [103, 104]);
        assert_eq!(evd.wait(0, 1).unwrap_err().0, DatError::TIMEOUT.0, "nothing left");
        drop(evd);
        crate::ia::close(ia_h, true).expect("close IA");
    }
}
