//! Completion queue: a fixed-capacity ring of work completions under its own lock, the queue
//! pairs whose completions land here, and a cross-process wake word.
//!
//! Polling drives the data path: [`ShmCq::poll`] first services the rings of every attached
//! queue pair in the caller's own thread (as the receive queue: executing inbound requests,
//! placing sends into posted receives; as the send queue: completing outbound work; either
//! way: issuing queued work), then hands out what is queued. Sleeping uses the queue's wake
//! words ([`super::wake`]): producers in peers bump its public word, ours its private one,
//! when they add work that feeds this queue.
//!
//! **The doorbell.** Servicing a queue pair that has nothing to do still costs a lock and a few
//! loads, so a queue with many connections would pay for all of them at every poll. Once more
//! than [`DOORBELL_QPS`] queue pairs are attached, the queue asks every producer in a peer to
//! ring at each addition ([`super::wake::DOORBELL`]: one compare-and-swap of the word beside
//! the public wake word, no system call), naming the slot its connection has on this queue
//! (told in the connection's hello). The word counts the rings and keeps the one slot all of
//! them named since the queue last looked, or MIXED. A poll then steps only the queue pairs it
//! needs to: none while the count stands still and its previous poll found nothing to do; the
//! named one and those its previous poll stepped (at most [`BUSY_MAX`]) when every ring named
//! one slot; all of them otherwise, or when something marked the queue ([`ShmCq::mark`]: a
//! queue pair attached, a connection established or stepped by the progress thread). The word
//! and the marks are read before the steps: an addition either was visible to them, or moved
//! the word after. A peer that names a wrong slot, holds the word still or clears the bit
//! delays only what arrives meanwhile: the progress thread steps any connection whose work
//! waited since its previous look, and marks the queue. (So does a receive queue's own share of
//! completing sends past a half-full send queue, `Part::completes`, on a connection nothing
//! arrives on: no producer rings the receive queue for it, and a post does not pay to check.)

use super::super::spin::SpinLock;
use super::super::{AsyncError, AsyncEvents, CompletionQueue, WakeSource, Waker, WorkCompletion};
use super::area::OwnWake;
use super::qp::QpShared;
use super::ud::{UdSet, UdShared};
use super::wake::{Armed, MIXED};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub const MAX_CQE: u32 = 1 << 20;

/// Above this many attached queue pairs a queue uses the doorbell (module comment).
pub const DOORBELL_QPS: usize = 8;

/// Queue pairs a doorbell round remembers as busy; more, and the next poll steps them all.
const BUSY_MAX: usize = 8;

/// The queue pairs attached, each at a slot that stays its own while it is attached (its
/// name in a doorbell ring).
#[derive(Default)]
struct Attached {
    slots: Vec<Option<Arc<QpShared>>>,
    free: Vec<u32>,
    count: usize,
}

impl Attached {
    fn iter(&self) -> impl Iterator<Item = &Arc<QpShared>> {
        self.slots.iter().flatten()
    }
}

/// What the last poll under the doorbell saw (module comment). Polls only (one at a time:
/// the EVD's lock).
#[derive(Default)]
struct Rounds {
    /// The next poll may step only the queue pairs named below.
    valid: bool,
    /// The doorbell ([`OwnWake::rung`]) and the marks, read before the last poll's steps.
    rung: u64,
    marks: u32,
    /// Slots of the queue pairs that last poll stepped.
    busy: [u32; BUSY_MAX],
    busy_len: usize,
}

/// The slots of the queue pairs one poll under the doorbell steps (the first of them; all
/// where none is given).
type Few = [u32; BUSY_MAX + 1];

/// The slots of the queue pairs a poll under the doorbell stepped that had work.
#[derive(Default)]
struct Worked {
    busy: [u32; BUSY_MAX],
    busy_len: usize,
    overflow: bool,
}

impl Worked {
    #[inline(always)]
    fn add(&mut self, slot: u32) {
        if self.busy_len < BUSY_MAX {
            self.busy[self.busy_len] = slot;
            self.busy_len += 1;
        } else {
            self.overflow = true;
        }
    }
}

impl Rounds {
    /// What a poll steps, given the doorbell `rung` and the marks read before its steps: None
    /// where nothing was marked since the last poll, the doorbell stood still and that poll
    /// found nothing to do; the queue pairs that poll stepped and the one named where nothing
    /// was marked and the doorbell stood still or every ring since named one slot (their
    /// slots in `few`, how many returned); else all (0 returned).
    #[inline(always)]
    fn plan(&self, rung: u64, marks: u32, few: &mut Few) -> Option<usize> {
        let unmarked = self.valid && marks == self.marks;
        if unmarked && rung >> 32 == self.rung >> 32 && self.busy_len == 0 {
            return None;
        }
        let rang = rung >> 32 != self.rung >> 32;
        let named = (rang && (rung as u32) < MIXED).then_some(rung as u32);
        let mut nfew = 0;
        if unmarked && (!rang || named.is_some()) {
            few[..self.busy_len].copy_from_slice(&self.busy[..self.busy_len]);
            nfew = self.busy_len;
            if let Some(s) = named.filter(|s| !few[..nfew].contains(s)) {
                few[nfew] = s;
                nfew += 1;
            }
        }
        Some(nfew)
    }

    /// The poll that read `rung` and `marks` stepped its queue pairs; those in `worked` had
    /// work.
    #[inline(always)]
    fn record(&mut self, rung: u64, marks: u32, worked: Worked) {
        self.busy = worked.busy;
        self.busy_len = worked.busy_len;
        self.valid = !worked.overflow;
        self.rung = rung;
        self.marks = marks;
    }
}

pub struct ShmCq {
    q: Mutex<Ring>,
    /// How many completions `q` holds (changed under its lock): an empty poll does not lock it.
    queued: AtomicUsize,
    waker: Arc<dyn Waker>,
    async_events: Arc<dyn AsyncEvents>,
    /// Queue pairs with this as their send or receive queue. Strong references (a poll walks
    /// them without touching reference counts): `ShmQp`'s drop detaches its queue pair, which
    /// also breaks the cycle through `QpShared`'s own references to its queues.
    /// Locked by every poll (a [`SpinLock`]: one locked instruction), edited at attach / detach.
    qps: SpinLock<Attached>,
    /// UD queue pairs with this as their receive queue (each poll takes their arrivals).
    uds: UdSet,
    wake: OwnWake,
    /// The wake words' sequence values at `arm`.
    armed_at: Mutex<Armed>,
    /// More than [`DOORBELL_QPS`] queue pairs were attached: producers ring.
    doorbell: AtomicBool,
    rounds: SpinLock<Rounds>,
    /// Bumped by [`ShmCq::mark`].
    marks: AtomicU32,
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
        let wake = OwnWake::alloc().ok_or(DatError::insufficient(DAT_RESOURCE_TEVD))?;
        let cap = min_entries.max(1) as usize;
        Ok(ShmCq {
            q: Mutex::new(Ring { items: VecDeque::with_capacity(cap), cap, overflowed: false }),
            queued: AtomicUsize::new(0),
            waker,
            async_events,
            qps: SpinLock::new(Attached::default()),
            uds: UdSet::new(),
            wake,
            armed_at: Mutex::new(Armed::default()),
            doorbell: AtomicBool::new(false),
            rounds: SpinLock::new(Rounds::default()),
            marks: AtomicU32::new(0),
        })
    }

    /// This queue's wake-word index in our published area (told to peers at connect time).
    pub fn wake_index(&self) -> u32 {
        self.wake.index
    }

    /// Adds `qp` to the queue pairs polls step; returns its slot.
    pub fn attach(&self, qp: &Arc<QpShared>) -> u32 {
        let mut qps = self.qps.lock();
        let slot = match qps.free.pop() {
            Some(s) => s,
            None => {
                qps.slots.push(None);
                (qps.slots.len() - 1) as u32
            }
        };
        qps.slots[slot as usize] = Some(qp.clone());
        qps.count += 1;
        if qps.count > DOORBELL_QPS && !self.doorbell.load(Ordering::Relaxed) {
            self.wake.ring_on_every_addition();
            self.doorbell.store(true, Ordering::SeqCst);
        }
        drop(qps);
        self.mark();
        slot
    }

    pub fn detach(&self, qp: &QpShared) {
        let mut qps = self.qps.lock();
        if let Some(i) = qps.slots.iter().position(|q| q.as_ref().is_some_and(|q| std::ptr::eq(&**q, qp))) {
            qps.slots[i] = None;
            qps.free.push(i as u32);
            qps.count -= 1;
        }
    }

    /// Something changed that a producer's ring does not announce (a connection established,
    /// the progress thread's step): the next poll steps every queue pair.
    pub fn mark(&self) {
        self.marks.fetch_add(1, Ordering::SeqCst);
    }

    pub fn attach_ud(&self, ud: &Arc<UdShared>) -> std::io::Result<()> {
        self.uds.attach(ud)
    }

    pub fn detach_ud(&self, ud: &UdShared) {
        self.uds.detach(ud);
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
        self.queued.store(q.items.len(), Ordering::Release);
        true
    }

    /// Tells a sleeper (in `block`) and a CNO that completions arrived. Never call it from
    /// inside this queue's own `poll` (the EVD lock is held there).
    pub fn wake(&self) {
        if self.wake_sleeper() {
            self.waker.wake();
        }
    }

    /// Whether a consumer waits for this queue rather than polls it: a sleeper armed, or the
    /// core's waker wants calls (a CNO is attached).
    pub fn has_waiter(&self) -> bool {
        self.wake.armed() || self.waker.wants_wake()
    }

    /// Wakes a sleeper in `block` (no lock taken); true when the core's waker wants a call too
    /// (a CNO is attached).
    pub fn wake_sleeper(&self) -> bool {
        self.wake.notify();
        self.waker.wants_wake()
    }

    /// Services the rings of the attached queue pairs in the caller's thread (all of them, or
    /// under the doorbell those that may have work); the completions this produces for this
    /// queue go into `out` as far as [`Handout::offer`] lets them. Returns how many did.
    fn drive(&self, out: &mut [WorkCompletion]) -> usize {
        let mut n = 0;
        if self.doorbell.load(Ordering::Relaxed) {
            n = self.drive_rung(out);
        } else {
            for qp in self.qps.lock().iter() {
                (n, _) = qp.drive_from_poll(Handout { cq: self, out: &mut *out, n });
            }
        }
        let mut h = Handout { cq: self, out, n };
        self.uds.drive_from_poll(&mut h);
        h.n
    }

    /// [`ShmCq::drive`] under the doorbell: where nothing was marked since the last poll, and
    /// the doorbell stood still or every ring since named one slot, only the queue pairs that
    /// poll stepped and the one named; else all.
    fn drive_rung(&self, out: &mut [WorkCompletion]) -> usize {
        let mut r = self.rounds.lock();
        // Read before the steps (module comment).
        let rung = self.wake.rung();
        let marks = self.marks.load(Ordering::SeqCst);
        let mut few = [0u32; BUSY_MAX + 1];
        let Some(nfew) = r.plan(rung, marks, &mut few) else { return 0 };
        self.wake.rung_seen(rung);
        let qps = self.qps.lock();
        let (mut n, mut worked) = (0, Worked::default());
        let mut step = |slot: usize, qp: &Arc<QpShared>, n: &mut usize, out: &mut [WorkCompletion]| {
            let had_work;
            (*n, had_work) = qp.drive_from_poll(Handout { cq: self, out, n: *n });
            if had_work {
                worked.add(slot as u32);
            }
        };
        if nfew > 0 {
            for &s in &few[..nfew] {
                if let Some(Some(qp)) = qps.slots.get(s as usize) {
                    step(s as usize, qp, &mut n, out);
                }
            }
        } else {
            for (s, qp) in qps.slots.iter().enumerate() {
                if let Some(qp) = qp {
                    step(s, qp, &mut n, out);
                }
            }
        }
        drop(qps);
        r.record(rung, marks, worked);
        n
    }
}

/// The caller's buffer of a running [`ShmCq::poll`], which the data step it drives fills
/// directly: a completion that goes there skips the queue's lock twice (push and poll).
pub struct Handout<'o> {
    pub cq: &'o ShmCq,
    out: &'o mut [WorkCompletion],
    /// How many of `out` are filled.
    pub n: usize,
}

impl Handout<'_> {
    /// Takes `wc` if it is for this poll's queue, `out` has room and the queue holds nothing:
    /// then nothing older is waiting, so handing it out first keeps every queue pair's
    /// completions in order. (Every completion of a queue pair is added under its lock, which
    /// the caller holds, so an older one of the same queue pair shows in `queued`.) Gives
    /// `wc` back otherwise.
    pub fn offer(&mut self, cq: &ShmCq, wc: WorkCompletion) -> Result<(), WorkCompletion> {
        if !std::ptr::eq(self.cq, cq) || self.n == self.out.len() || cq.queued.load(Ordering::Acquire) != 0 {
            return Err(wc);
        }
        self.out[self.n] = wc;
        self.n += 1;
        Ok(())
    }
}

impl CompletionQueue for ShmCq {
    fn poll(&self, out: &mut [WorkCompletion]) -> usize {
        let handed = self.drive(out);
        // A completion pushed after this look is the next poll's (a sleeper's re-poll follows
        // its arm, and the producer's wake-up follows its push). Those queued are no older
        // than the handed-out ones of the same queue pair (see `Handout::offer`).
        if handed == out.len() || self.queued.load(Ordering::SeqCst) == 0 {
            return handed;
        }
        let mut q = self.q.lock();
        let n = (out.len() - handed).min(q.items.len());
        for (slot, wc) in out[handed..].iter_mut().zip(q.items.drain(..n)) {
            *slot = wc;
        }
        self.queued.store(q.items.len(), Ordering::Release);
        handed + n
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

    fn arm(&self) -> bool {
        *self.armed_at.lock() = self.wake.arm();
        // UD receive threads leave arrivals to polls; a sleeper needs them placed.
        self.uds.kick();
        true
    }

    fn block(&self, timeout: Option<Duration>) -> bool {
        let armed = *self.armed_at.lock();
        let timed_out = self.wake.block(armed, timeout);
        self.wake.disarm();
        timed_out
    }

    /// The waiter found its events without blocking: producers stop waking it at once.
    fn disarm(&self) {
        self.wake.disarm();
    }

    fn interrupt(&self) {
        self.wake.interrupt();
    }

    fn arm_group(&self) -> Option<WakeSource> {
        let source = self.wake.arm_group();
        self.uds.kick(); // as in `arm`
        Some(source)
    }

    fn disarm_group(&self, _queue_waiter: bool) {
        self.wake.disarm_group();
    }
}

/// Model checking of the doorbell: every interleaving (loom) of producers ringing for their
/// queue pairs' slots while the queue polls, on the provider's own doorbell word
/// ([`super::wake::Wake`]'s `rung`) and rounds ([`Rounds`]). Run by `make check-loom`
/// (`RUSTFLAGS="--cfg loom"`); not built otherwise.
#[cfg(all(test, loom))]
mod loom_model {
    use super::super::wake::loom_model::Word;
    use super::super::wake::{Wake, DOORBELL};
    use super::*;
    use loom::sync::atomic::AtomicU32 as LoomU32;
    use loom::sync::Arc;
    use loom::thread;

    const SLOTS: usize = 3;

    /// A queue under the doorbell: its public wake word and, per slot, the records its queue
    /// pair's ring holds (what a step finds).
    struct Queue {
        wake: Wake<Word>,
        records: [LoomU32; SLOTS],
    }

    impl Queue {
        /// A queue that asked producers to ring (`OwnWake::ring_on_every_addition`).
        fn new() -> Queue {
            let q = Queue { wake: Wake::default(), records: Default::default() };
            q.wake.announce(DOORBELL);
            q
        }

        /// A peer's producer for the queue pair at `slot`: the record, then the notification
        /// that names the slot.
        fn produce(&self, slot: usize) {
            self.records[slot].fetch_add(1, Ordering::Release);
            self.wake.notify_from(slot as u32);
        }

        /// `ShmCq::drive_rung`: the doorbell read before the steps, the plan, the steps (each
        /// takes what its queue pair's ring holds), the round recorded. Returns how many
        /// records it took.
        fn poll(&self, rounds: &mut Rounds) -> u32 {
            let rung = self.wake.rung();
            let mut few = [0u32; BUSY_MAX + 1];
            let Some(nfew) = rounds.plan(rung, 0, &mut few) else { return 0 };
            self.wake.rung_seen(rung);
            let (mut n, mut worked) = (0, Worked::default());
            let mut step = |slot: usize| {
                let took = self.records[slot].swap(0, Ordering::Acquire);
                if took > 0 {
                    worked.add(slot as u32);
                    n += took;
                }
            };
            if nfew > 0 {
                few[..nfew].iter().filter(|&&s| (s as usize) < SLOTS).for_each(|&s| step(s as usize));
            } else {
                (0..SLOTS).for_each(step);
            }
            rounds.record(rung, 0, worked);
            n
        }
    }

    /// Producers for the slots `slots` (one record each) while the queue polls `polls` times;
    /// then the queue polls until a poll takes nothing: every record was taken.
    fn every_record_is_taken(slots: &'static [usize], polls: usize, bound: usize) {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(bound);
        model.check(move || {
            let q = Arc::new(Queue::new());
            let producers: Vec<_> = slots
                .iter()
                .map(|&slot| {
                    let q = q.clone();
                    thread::spawn(move || q.produce(slot))
                })
                .collect();
            let mut rounds = Rounds::default();
            let mut taken = 0;
            for _ in 0..polls {
                taken += q.poll(&mut rounds);
            }
            for p in producers {
                p.join().unwrap();
            }
            loop {
                let n = q.poll(&mut rounds);
                if n == 0 {
                    break;
                }
                taken += n;
            }
            assert_eq!(taken as usize, slots.len(), "a record no ring named and no full step took");
        });
    }

    /// Two producers ring for different slots while the queue polls twice.
    #[test]
    fn two_producers_for_different_slots() {
        every_record_is_taken(&[0, 1], 2, 4);
    }

    /// Three producers, two of them for one slot, while the queue polls twice.
    #[test]
    fn three_producers_two_of_them_for_one_slot() {
        every_record_is_taken(&[0, 1, 1], 2, 2);
    }

    /// Three producers for three slots while the queue polls twice.
    #[test]
    fn three_producers_for_different_slots() {
        every_record_is_taken(&[0, 1, 2], 2, 2);
    }
}
