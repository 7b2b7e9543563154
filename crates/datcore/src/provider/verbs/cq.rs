//! Completion queues: an `ibv_cq` on its own completion channel, polled and slept on in the
//! consumer's thread.
//!
//! `poll` is `ibv_poll_cq` into a stack array plus a translation of each `ibv_wc` through the
//! QP's slot ring (see [`super::qp::Slots`]); it takes this CQ's QP table's spin lock once per
//! batch (one swap and one plain store: polls are already one at a time under the EVD's lock,
//! and the table changes only when a QP is made or destroyed), allocates nothing and makes no
//! system call. Completions the provider makes itself
//! (receives flushed before their QP existed) wait in a small software queue checked through
//! one atomic flag.
//!
//! **Sleeping** (the core's arm / re-poll / block protocol, see [`CompletionQueue`]): only a
//! waiter about to sleep arms the CQ (`ibv_req_notify_cq`); it then sleeps in its own thread in
//! `epoll_wait` on this CQ's channel fd and an eventfd that [`CompletionQueue::interrupt`] rings
//! (one epoll set made with the CQ, so a sleep registers nothing), and on waking takes the
//! channel event, acknowledging events in batches of [`ACK_BATCH`] (the CQ's drop acknowledges
//! the rest before `ibv_destroy_cq`, which would otherwise wait for them). While the consumer
//! polls, nothing is armed and no other thread is involved.
//!
//! **A CNO's waiter** sleeps on this CQ's completion channel among its other queues
//! ([`CompletionQueue::arm_group`]): it arms the CQ, and on waking takes the channel event
//! unless the CQ's own waiter sleeps on the channel too.
//!
//! **CNO mode**: an EVD whose CNO has a proxy agent must call it when completions arrive and
//! nobody is in a call, so while [`CompletionQueue::set_notify`] is on, the device's notifier
//! thread ([`super::notify`]) watches the channel, re-arms and calls the [`Waker`]; `arm` and
//! `arm_group` then return false and None, and waiters hear of arrivals through the core.

use super::super::epoll::EpollSet;
use super::super::eventfd::EventFd;
use super::super::spin::SpinLock;
use super::super::{CompletionQueue, WakeSource, Waker, WcOpcode, WcStatus, WorkCompletion};
use super::qp::{self, Slots};
use super::sleep::{Channel, Sleep, HAS_SOFT, HAS_UNREPORTED};
use super::{fail, notify, sys, DevInner};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

const BATCH: usize = 16;

/// siw's user library (libsiw) reads the mmap key `SIW_INVAL_UOBJ_KEY` = 0x90000 as "the
/// kernel gave no key", but the kernel hands out keys as page offsets into the verbs context's
/// mmap space, first fit: the queue placed at page 144 gets exactly 0x90000, and libsiw fails
/// its `ibv_create_cq` / `ibv_create_qp` without an errno. Every later queue lands on the same
/// free page, so once a process holds about 144 pages of queues (70 small QPs, fewer larger
/// ones) no queue can be created on that context any more (dtestcm's 100 connections, the
/// CQs and QPs of dapltest -T T). [`reserve_siw_colliding_page`] makes, while the context is
/// still nearly empty, one CQ whose queue spans that page and keeps it for the life of the
/// process (librdmacm keeps the context open as long): 1 MiB of the device's memory per
/// process and context.
const SIW_COLLIDING_PAGE: u32 = 0x90000 / 4096;
/// `sizeof(struct siw_cqe)` (rdma/siw-abi.h)
const SIW_CQE_SIZE: u32 = 32;

/// Contexts (addresses) holding their colliding-page CQ, with that CQ (never destroyed).
static SIW_RESERVED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// See [`SIW_COLLIDING_PAGE`]. Called for siw devices when an IA opens; once per context.
pub(super) fn reserve_siw_colliding_page(lib: &sys::Lib, ctx: *mut sys::ibv_context) {
    let mut reserved = SIW_RESERVED.lock();
    if reserved.iter().any(|&(c, _)| c == ctx as usize) {
        return;
    }
    // A queue of more than 144 pages starts at or below page 144 on a fresh context, so it
    // covers it; siw rounds the entries up to a power of two (32768 here, 1 MiB).
    let entries = (SIW_COLLIDING_PAGE + 1) * 4096 / SIW_CQE_SIZE;
    // SAFETY: live context; the CQ has no channel and is kept until the process exits.
    let cq = unsafe { (lib.ibv_create_cq)(ctx, entries as i32, std::ptr::null_mut(), std::ptr::null_mut(), 0) };
    if cq.is_null() {
        tracing::warn!("verbs: siw: the CQ keeping mmap page {SIW_COLLIDING_PAGE} taken could not be made");
        return;
    }
    tracing::debug!("verbs: siw: mmap page {SIW_COLLIDING_PAGE} of context {ctx:p} taken by a {entries}-entry CQ");
    reserved.push((ctx as usize, cq as usize));
}

pub struct VerbsCq {
    pub(crate) dev: Arc<DevInner>,
    pub(crate) cq: *mut sys::ibv_cq,
    /// The device's `poll_cq` op (what `ibv_poll_cq` calls), read once at creation.
    poll_cq: PollCq,
    /// This CQ's own completion channel (non-blocking fd): a sleeper waits on exactly its CQ.
    channel: *mut sys::ibv_comp_channel,
    /// Rung by `interrupt` while a waiter sleeps.
    intr: EventFd,
    /// What a waiter sleeps on: the channel's fd ([`super::sleep::SLEEP_CHANNEL`]) and
    /// `intr`'s ([`super::sleep::SLEEP_INTR`]).
    sleep_set: EpollSet,
    /// Whether a waiter sleeps here, and the flags of the software queue and of `unreported`
    /// ([`HAS_SOFT`], [`HAS_UNREPORTED`]): the one atomic a poll reads for both.
    sleep: Sleep,
    /// CNO mode: the notifier thread watches the channel and wakes through `waker`.
    notify: AtomicBool,
    waker: Arc<dyn Waker>,
    /// The QPs completing here, by QP number.
    qps: SpinLock<Vec<(u32, Arc<Slots>)>>,
    soft: Mutex<VecDeque<WorkCompletion>>,
    /// QPs in error whose receives the device may never complete, to settle
    /// ([`VerbsCq::watch_unreported`]).
    unreported: Mutex<Vec<Unreported>>,
    /// Channel events taken and not yet acknowledged (fewer than [`ACK_BATCH`]).
    unacked: AtomicU32,
}

/// How many channel events [`VerbsCq::take_channel_event`] acknowledges at once.
const ACK_BATCH: u32 = 32;

/// A QP's receives (or send-queue requests, `sends`) below `mark` that the device has not
/// completed yet (see [`Slots::flush_unreported_recvs`], [`Slots::flush_unreported_sends`]).
/// They are settled by a poll that started after the entry was `ready` and found the device's
/// queue empty: every device completion written before the QP went into error has been taken
/// by then.
struct Unreported {
    qpn: u32,
    sends: bool,
    slots: Arc<Slots>,
    mark: u32,
    ready: bool,
}

// SAFETY: ibv_cq and its channel are polled, armed and read through thread-safe verbs; both
// are destroyed once in Drop.
unsafe impl Send for VerbsCq {}
// SAFETY: as above.
unsafe impl Sync for VerbsCq {}

impl VerbsCq {
    pub fn new(dev: &Arc<DevInner>, min_entries: u32, waker: Arc<dyn Waker>) -> DatResult<Arc<VerbsCq>> {
        if min_entries > dev.attr.max_cqe {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        let intr = EventFd::new().map_err(|e| {
            tracing::warn!("verbs: eventfd for a CQ failed: {e}");
            DatError::insufficient(DAT_RESOURCE_MEMORY)
        })?;
        // SAFETY: live context; the channel is destroyed in Drop or below on error.
        let channel = unsafe { (dev.lib.ibv_create_comp_channel)(dev.ctx) };
        if channel.is_null() {
            let e = sys::errno();
            return Err(fail("ibv_create_comp_channel", e, DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        // SAFETY: the channel just created.
        let channel_fd = unsafe { (*channel).fd };
        qp::set_nonblock(channel_fd);
        let sleep_set = match EpollSet::new(&[channel_fd, intr.fd()]) {
            Ok(set) => set,
            Err(e) => {
                tracing::warn!("verbs: epoll set for a CQ failed: {e}");
                // SAFETY: no CQ uses the channel.
                unsafe { (dev.lib.ibv_destroy_comp_channel)(channel) };
                return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
            }
        };
        sys::clear_errno();
        // SAFETY: live context and channel; the CQ is destroyed in Drop. Its context names the
        // device (kept alive by the CQ's Arc), for routing a CQ error (route.rs).
        let owner = Arc::as_ptr(dev) as *mut std::ffi::c_void;
        let cq = unsafe { (dev.lib.ibv_create_cq)(dev.ctx, min_entries.max(1) as i32, owner, channel, 0) };
        if cq.is_null() {
            let e = sys::errno();
            // SAFETY: no CQ uses the channel.
            unsafe { (dev.lib.ibv_destroy_comp_channel)(channel) };
            return Err(fail("ibv_create_cq", e, DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        // SAFETY: the CQ just created; its context's op table is fixed for the context's life.
        let poll_cq = unsafe { (*(*cq).context).ops.poll_cq }.unwrap_or(no_poll_cq);
        Ok(Arc::new(VerbsCq {
            dev: dev.clone(),
            cq,
            poll_cq,
            channel,
            intr,
            sleep_set,
            sleep: Sleep::default(),
            notify: AtomicBool::new(false),
            waker,
            qps: SpinLock::new(Vec::new()),
            soft: Mutex::new(VecDeque::new()),
            unreported: Mutex::new(Vec::new()),
            unacked: AtomicU32::new(0),
        }))
    }

    /// The completion channel's fd, readable when an armed CQ got a completion.
    pub(super) fn channel_fd(&self) -> i32 {
        // SAFETY: the channel lives as long as `self`.
        unsafe { (*self.channel).fd }
    }

    /// `ibv_req_notify_cq`: the next completion makes the channel readable.
    fn request_notification(&self) {
        // SAFETY: live CQ; the op slot is what ibv_req_notify_cq calls.
        let r = unsafe {
            match (*(*self.cq).context).ops.req_notify_cq {
                Some(f) => f(self.cq, 0),
                None => libc::ENOSYS,
            }
        };
        if r != 0 {
            tracing::warn!("verbs: ibv_req_notify_cq failed: {}", sys::errno_str(sys::err_of(r)));
        }
    }

    /// Takes one event of the channel, if one is pending (acknowledged in a batch). One read per
    /// wake-up: an event left behind (from an earlier arm) keeps the fd readable, so the next
    /// `block` or notifier poll returns at once and takes it (a spurious wake-up, allowed).
    fn take_channel_event(&self) -> bool {
        let mut cq = std::ptr::null_mut();
        let mut ctx = std::ptr::null_mut();
        // SAFETY: live channel; its fd is non-blocking, so nothing pending is EAGAIN.
        if unsafe { (self.dev.lib.ibv_get_cq_event)(self.channel, &mut cq, &mut ctx) } != 0 {
            return false;
        }
        // Acknowledged in batches (`ibv_ack_cq_events` takes the CQ's mutex and signals its
        // condition variable); `Drop` acknowledges the rest before destroying the CQ.
        if self.unacked.fetch_add(1, Ordering::AcqRel) + 1 >= ACK_BATCH {
            let n = self.unacked.swap(0, Ordering::AcqRel);
            if n > 0 {
                // SAFETY: acknowledging events taken on our own CQ (the only one on this
                // channel); no system call.
                unsafe { (self.dev.lib.ibv_ack_cq_events)(self.cq, n) };
            }
        }
        true
    }

    /// The channel fired. In CNO mode: re-arm, then tell the EVD (in this order, so a
    /// completion that lands in between is found by the poll the wake causes).
    pub(super) fn on_channel_event(&self) {
        if self.take_channel_event() && self.notify.load(Ordering::SeqCst) {
            self.request_notification();
            self.wake();
        }
    }

    fn wake(&self) {
        if self.waker.wants_wake() {
            self.waker.wake();
        }
    }

    pub fn attach(&self, qpn: u32, slots: Arc<Slots>) {
        self.qps.lock().push((qpn, slots));
    }

    pub fn detach(&self, qpn: u32) {
        let mut qps = self.qps.lock();
        // Taken out and dropped after the unlock: the last `Slots` may hold the last reference
        // to an SRQ, whose destruction is a system call a poller should not spin through.
        let mut gone = Vec::new();
        while let Some(i) = qps.iter().position(|(n, _)| *n == qpn) {
            gone.push(qps.swap_remove(i));
        }
        drop(qps);
        drop(gone);
        self.unreported.lock().retain(|u| u.qpn != qpn);
    }

    /// QP `qpn` is in error with receive counter `mark` (send-queue counter, if `sends`): its
    /// receives (requests) below `mark` that the device does not complete are flushed by a
    /// later poll (a queue already watched keeps the later of the two marks). Wakes a waiter
    /// so that it polls.
    pub fn watch_unreported(&self, qpn: u32, sends: bool, slots: Arc<Slots>, mark: u32) {
        let mut list = self.unreported.lock();
        match list.iter_mut().find(|u| u.qpn == qpn && u.sends == sends) {
            // The later mark: a post in error and `to_error` may call in either order.
            Some(u) if (mark.wrapping_sub(u.mark) as i32) > 0 => u.mark = mark,
            Some(_) => {}
            None => list.push(Unreported { qpn, sends, slots, mark, ready: false }),
        }
        drop(list);
        self.sleep.add_rare(HAS_UNREPORTED, self);
        self.wake();
    }

    /// Poll start: entries watched before now become ready.
    fn ready_unreported(&self) {
        for u in self.unreported.lock().iter_mut() {
            u.ready = true;
        }
    }

    /// The device's queue was found empty by a poll that made entries ready at its start:
    /// flushes their unreported work into `out` from `n` (the rest into the software queue);
    /// returns the new `n`.
    fn settle_unreported(&self, out: &mut [WorkCompletion], mut n: usize) -> usize {
        let mut list = self.unreported.lock();
        let mut overflow = Vec::new();
        list.retain(|u| {
            if !u.ready {
                return true;
            }
            let emit = |wc| {
                if n < out.len() {
                    out[n] = wc;
                    n += 1;
                } else {
                    overflow.push(wc);
                }
            };
            if u.sends {
                u.slots.flush_unreported_sends(u.mark, emit);
            } else {
                u.slots.flush_unreported_recvs(u.mark, emit);
            }
            false
        });
        if list.is_empty() {
            self.sleep.clear_rare(HAS_UNREPORTED);
        }
        drop(list);
        if !overflow.is_empty() {
            // Inside a poll (the EVD's lock is held): queued without waking; the poller is here.
            self.soft.lock().extend(overflow);
            self.sleep.set_rare(HAS_SOFT);
        }
        n
    }
}

/// The device's side of the sleeping protocol ([`Sleep`]).
impl Channel for VerbsCq {
    #[inline(always)]
    fn request_notification(&self) {
        VerbsCq::request_notification(self);
    }
    #[inline(always)]
    fn wait(&self, timeout: Option<Duration>) -> Option<u32> {
        self.sleep_set.wait(timeout)
    }
    #[inline(always)]
    fn clear_intr(&self) {
        self.intr.clear();
    }
    #[inline(always)]
    fn ring_intr(&self) {
        self.intr.ring();
    }
    #[inline(always)]
    fn on_channel_event(&self) {
        VerbsCq::on_channel_event(self);
    }
}

impl Drop for VerbsCq {
    fn drop(&mut self) {
        // SAFETY: no QP uses this CQ any more (they hold Arcs to it); the channel events taken
        // and not yet acknowledged are acknowledged first (ibv_destroy_cq waits for every taken
        // event's acknowledgement); CQ then channel, each destroyed once.
        unsafe {
            let unacked = *self.unacked.get_mut();
            if unacked > 0 {
                (self.dev.lib.ibv_ack_cq_events)(self.cq, unacked);
            }
            let r = (self.dev.lib.ibv_destroy_cq)(self.cq);
            if r != 0 {
                tracing::warn!("verbs: ibv_destroy_cq failed: {}", sys::errno_str(sys::err_of(r)));
            }
            let r = (self.dev.lib.ibv_destroy_comp_channel)(self.channel);
            if r != 0 {
                tracing::warn!("verbs: ibv_destroy_comp_channel failed: {}", sys::errno_str(sys::err_of(r)));
            }
        }
    }
}

/// Puts each completion of `before` in front of the one at its index in `out[..n]` (the
/// flushes a failed request completes ahead of itself, `Slots::complete_into`; those whose
/// index is `n` last); what no longer fits in `out` goes to `spill`. Returns the new `n`.
fn insert_before(
    out: &mut [WorkCompletion],
    n: usize,
    before: Vec<(usize, WorkCompletion)>,
    spill: impl FnOnce(&[WorkCompletion]),
) -> usize {
    let first = before[0].0;
    let mut merged = Vec::with_capacity(n - first + before.len());
    let mut before = before.into_iter().peekable();
    for (i, wc) in out[first..n].iter().enumerate() {
        while let Some((_, early)) = before.next_if(|(at, _)| *at == first + i) {
            merged.push(early);
        }
        merged.push(*wc);
    }
    // Those of a failed request that is itself not reported (a split read's later fragment).
    merged.extend(before.map(|(_, early)| early));
    let fit = merged.len().min(out.len() - first);
    out[first..first + fit].copy_from_slice(&merged[..fit]);
    if fit < merged.len() {
        spill(&merged[fit..]);
    }
    first + fit
}

/// `ibv_poll_cq`'s op: the CQ, at most how many completions, where to write them.
type PollCq = unsafe extern "C" fn(*mut sys::ibv_cq, libc::c_int, *mut sys::ibv_wc) -> libc::c_int;

/// The `poll_cq` of a device whose op table has none (no known device): nothing to poll.
unsafe extern "C" fn no_poll_cq(_: *mut sys::ibv_cq, _: libc::c_int, _: *mut sys::ibv_wc) -> libc::c_int {
    0
}

pub fn status(s: u32) -> WcStatus {
    match s {
        sys::IBV_WC_SUCCESS => WcStatus::Success,
        sys::IBV_WC_WR_FLUSH_ERR => WcStatus::Flushed,
        sys::IBV_WC_LOC_LEN_ERR => WcStatus::LocalLength,
        sys::IBV_WC_LOC_PROT_ERR | sys::IBV_WC_LOC_ACCESS_ERR => WcStatus::LocalProtection,
        sys::IBV_WC_MW_BIND_ERR => WcStatus::BindFailure,
        sys::IBV_WC_BAD_RESP_ERR => WcStatus::BadResponse,
        sys::IBV_WC_REM_ACCESS_ERR => WcStatus::RemoteAccess,
        sys::IBV_WC_REM_OP_ERR | sys::IBV_WC_REM_INV_REQ_ERR => WcStatus::RemoteOperation,
        sys::IBV_WC_RETRY_EXC_ERR => WcStatus::TransportRetry,
        sys::IBV_WC_RNR_RETRY_EXC_ERR => WcStatus::ReceiverNotReady,
        _ => WcStatus::LocalOperation,
    }
}

impl VerbsCq {
    /// [`CompletionQueue::poll`] while software completions or unreported receives wait
    /// ([`Sleep::rare`]): those first, then the device's, and the unreported
    /// receives settled once the device's queue was found empty. Out of line.
    #[cold]
    #[inline(never)]
    fn poll_rare(&self, out: &mut [WorkCompletion]) -> usize {
        let mut n = 0;
        let rare = self.sleep.rare();
        let unreported = rare & HAS_UNREPORTED != 0;
        if unreported {
            self.ready_unreported();
        }
        // Filled only by this CQ's poller (`settle_unreported`), under the EVD's lock.
        if rare & HAS_SOFT != 0 {
            let mut s = self.soft.lock();
            while n < out.len() {
                match s.pop_front() {
                    Some(wc) => {
                        out[n] = wc;
                        n += 1;
                    }
                    None => break,
                }
            }
            if s.is_empty() {
                self.sleep.clear_rare(HAS_SOFT);
            }
        }
        let (n, device_empty) = self.poll_device(out, n);
        if unreported && device_empty {
            return self.settle_unreported(out, n);
        }
        n
    }

    /// The device's completions into `out` from `n` on, batch after batch while `out` has room
    /// and the device gave a full batch; returns the new `n` and whether the device's queue
    /// was found empty. Out of line: the usual poll makes one device poll itself.
    #[inline(never)]
    fn poll_device(&self, out: &mut [WorkCompletion], mut n: usize) -> (usize, bool) {
        // Left uninitialized: zeroing it would cost more than an empty poll.
        let mut wcs = std::mem::MaybeUninit::<[sys::ibv_wc; BATCH]>::uninit();
        while n < out.len() {
            let want = (out.len() - n).min(BATCH);
            // SAFETY: live CQ; `wcs` has room for `want` (<= BATCH) entries.
            let got = unsafe { (self.poll_cq)(self.cq, want as i32, wcs.as_mut_ptr() as *mut sys::ibv_wc) };
            if got <= 0 {
                return (n, true);
            }
            // SAFETY: poll_cq wrote the first `got` entries.
            let polled = unsafe { std::slice::from_raw_parts(wcs.as_ptr() as *const sys::ibv_wc, got as usize) };
            n = self.translate(polled, out, n);
            if (got as usize) < want {
                return (n, true);
            }
        }
        (n, false)
    }

    /// Translates device completions through their QPs' slot rings into `out` from `n` on
    /// (`polled` is no longer than the room left), each written in its place (a stale one
    /// leaves scratch there, overwritten by the next); returns the new `n`.
    #[inline(always)]
    fn translate(&self, polled: &[sys::ibv_wc], out: &mut [WorkCompletion], mut n: usize) -> usize {
        let mut before = Vec::new();
        let qps = self.qps.lock();
        for wc in polled {
            let Some((_, slots)) = qps.iter().find(|(q, _)| *q == wc.qp_num) else { continue };
            if slots.complete_into(wc, out, n, &mut before) {
                n += 1;
            }
        }
        drop(qps);
        if !before.is_empty() {
            return self.insert_before(out, n, before);
        }
        n
    }

    /// [`insert_before`], what does not fit queued in software, handed out first by the next
    /// poll.
    #[cold]
    #[inline(never)]
    fn insert_before(&self, out: &mut [WorkCompletion], n: usize, before: Vec<(usize, WorkCompletion)>) -> usize {
        insert_before(out, n, before, |rest| {
            // Inside a poll (the EVD's lock is held): queued without waking; the poller is here.
            let mut soft = self.soft.lock();
            for (k, wc) in rest.iter().enumerate() {
                soft.insert(k, *wc);
            }
            self.sleep.set_rare(HAS_SOFT);
        })
    }
}

impl CompletionQueue for VerbsCq {
    /// One device poll of up to `out.len()` (at most [`BATCH`]) completions, translated; a full
    /// batch (more may be waiting) goes on in [`VerbsCq::poll_device`], software completions
    /// and unreported receives in [`VerbsCq::poll_rare`].
    fn poll(&self, out: &mut [WorkCompletion]) -> usize {
        if self.sleep.rare() != 0 {
            return self.poll_rare(out);
        }
        let want = out.len().min(BATCH);
        // Left uninitialized: zeroing it would cost more than an empty poll.
        let mut wcs = std::mem::MaybeUninit::<[sys::ibv_wc; BATCH]>::uninit();
        // SAFETY: live CQ; `wcs` has room for `want` (<= BATCH) entries.
        let got = unsafe { (self.poll_cq)(self.cq, want as i32, wcs.as_mut_ptr() as *mut sys::ibv_wc) };
        if got <= 0 {
            return 0;
        }
        // SAFETY: poll_cq wrote the first `got` entries.
        let polled = unsafe { std::slice::from_raw_parts(wcs.as_ptr() as *const sys::ibv_wc, got as usize) };
        let n = self.translate(polled, out, 0);
        if got as usize == want {
            return self.poll_device(out, n).0;
        }
        n
    }

    fn arm(&self) -> bool {
        if self.notify.load(Ordering::SeqCst) {
            return false;
        }
        self.sleep.arm(self);
        true
    }

    fn block(&self, timeout: Option<Duration>) -> bool {
        self.sleep.block(self, timeout)
    }

    fn disarm(&self) {
        self.sleep.disarm();
    }

    fn interrupt(&self) {
        self.sleep.interrupt(self);
    }

    /// Arms the CQ for a CNO's waiter, which sleeps on the completion channel with its other
    /// queues. In CNO mode the notifier thread keeps the CQ armed and takes the channel's
    /// events itself: the waiter then hears of arrivals through the waker.
    fn arm_group(&self) -> Option<WakeSource> {
        if self.notify.load(Ordering::SeqCst) {
            return None;
        }
        self.request_notification();
        Some(WakeSource::Fd(self.channel_fd()))
    }

    /// Takes the channel event the group sleeper's arm produced, if one is pending, unless
    /// the EVD's own waiter is in its wait: it may sleep on the same channel and must find the
    /// event there (epoll reports a descriptor only if it is still readable when the sleeper
    /// runs); its `block` takes the event instead.
    fn disarm_group(&self, queue_waiter: bool) {
        if !queue_waiter {
            self.take_channel_event();
        }
    }

    fn set_notify(&self, on: bool) {
        if self.notify.load(Ordering::SeqCst) == on {
            return;
        }
        if on {
            // Armed and watched before the flag is seen, so a waiter that finds `arm` false
            // and then polls is covered by the notifier from its poll on.
            self.request_notification();
            if !notify::watch(&self.dev, self) {
                return;
            }
            self.notify.store(true, Ordering::SeqCst);
            // A waiter blocked on the channel moves to the core's condition variable.
            self.interrupt();
        } else {
            self.notify.store(false, Ordering::SeqCst);
            notify::unwatch(&self.dev, self);
        }
    }

    fn resize(&self, min_entries: u32) -> DatResult<()> {
        if min_entries > self.dev.attr.max_cqe {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        sys::clear_errno();
        // SAFETY: live CQ.
        let r = unsafe { (self.dev.lib.ibv_resize_cq)(self.cq, min_entries.max(1) as i32) };
        if r != 0 {
            let e = sys::err_of(r);
            if e == libc::EOPNOTSUPP || e == libc::ENOSYS {
                // Some devices cannot resize; a CQ at least as large is fine.
                // SAFETY: live CQ.
                if unsafe { (*self.cq).cqe } as u32 >= min_entries {
                    return Ok(());
                }
            }
            return Err(fail("ibv_resize_cq", e, DatError::invalid_state(0)));
        }
        Ok(())
    }
}

/// A completion for a receive flushed before it reached a QP.
pub fn flushed_recv(wr_id: u64, context: u64) -> WorkCompletion {
    WorkCompletion { status: WcStatus::Flushed, opcode: WcOpcode::Recv, wr_id, context, ..WorkCompletion::EMPTY }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wc(wr_id: u64) -> WorkCompletion {
        WorkCompletion { wr_id, ..WorkCompletion::EMPTY }
    }

    fn ids(wcs: &[WorkCompletion]) -> Vec<u64> {
        wcs.iter().map(|w| w.wr_id).collect()
    }

    /// Completions put before others land in front of them, in order, and what does not fit
    /// is spilled in order; those placed before the end come last.
    #[test]
    fn completions_inserted_before_keep_their_order() {
        let mut out = [wc(0); 6];
        for (i, o) in out.iter_mut().take(3).enumerate() {
            *o = wc(10 + i as u64);
        }
        let n = insert_before(&mut out, 3, vec![(1, wc(1)), (1, wc(2)), (3, wc(3))], |_| panic!("it fits"));
        assert_eq!(ids(&out[..n]), [10, 1, 2, 11, 12, 3]);

        let mut out = [wc(10), wc(11), wc(12), wc(0)];
        let mut spilled = Vec::new();
        let n = insert_before(&mut out, 3, vec![(2, wc(1)), (2, wc(2))], |rest| spilled.extend_from_slice(rest));
        assert_eq!((ids(&out[..n]), ids(&spilled)), (vec![10, 11, 1, 2], vec![12]));
    }
}
