//! Completion queues: a libfabric CQ (`FI_CQ_FORMAT_DATA`, wait object `FI_WAIT_FD`), polled
//! and slept on in the consumer's thread.
//!
//! libfabric's `tcp` provider moves data only inside calls on a CQ (its progress runs in
//! `fi_cq_read` and `fi_trywait`), so a consumer that neither polls nor waits would leave a
//! peer's RDMA read or write to its memory unanswered: the IA's CM thread looks at such CQs every
//! `DAT_OFI_LOOK_US` microseconds (default 1000) and drives their progress ([`OfiCq::look`]).
//!
//! `poll` is `fi_cq_read` into a stack array and a translation of each entry through the slot
//! of its queue ([`Queue`]; the operation context is the slot's address); an error entry
//! (`-FI_EAVAIL`) is read with `fi_cq_readerr`. Completions made in software (work flushed by a
//! disconnect) wait in a small queue checked through one atomic flag.
//!
//! **Sleeping** (the core's arm / re-poll / block protocol, see [`CompletionQueue`]): `arm` is
//! `fi_trywait` on the CQ: 0 means nothing is pending and the CQ's wait fd will become readable
//! when a completion arrives; `-FI_EAGAIN` means something is pending, and the next `block`
//! returns at once (the re-poll takes it). `block` sleeps in `epoll_wait` on the wait fd and an
//! eventfd that [`CompletionQueue::interrupt`] rings. No other thread is involved. A CNO's
//! waiter arms the same way ([`CompletionQueue::arm_group`]) and sleeps on the wait fd.

use super::super::epoll::EpollSet;
use super::super::eventfd::EventFd;
use super::super::lookup::Reg;
use super::super::spin::SpinLock;
use super::super::{CompletionQueue, WakeSource, Waker, WcStatus, WorkCompletion};
use super::ep::Queue;
use super::sleep::{Fabric, Sleep, SLEEP_INTR};
use super::{fail, sys, DevInner};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

pub(super) static CQS: Reg<OfiCq> = Reg::new();

const BATCH: usize = 16;

pub struct OfiCq {
    pub(super) dev: Arc<DevInner>,
    pub(super) cq: *mut sys::fid_cq,
    intr: EventFd,
    /// The CQ's wait fd (`FI_GETWAIT`); None where the provider has no fd wait object (shm),
    /// and a sleeper re-polls every [`NO_FD_TICK`] instead.
    wait_fd: Option<libc::c_int>,
    /// Readable while a CNO's waiter armed with completions already pending.
    group_ready: EventFd,
    sleep_set: EpollSet,
    /// Whether a waiter or a CNO's waiter sleeps here, whether software completions wait in
    /// `soft`, and the CM thread's look ([`OfiCq::look`]).
    sleep: Sleep,
    waker: Arc<dyn Waker>,
    /// The queues completing here.
    queues: SpinLock<Vec<Arc<Queue>>>,
    soft: Mutex<VecDeque<WorkCompletion>>,
}

// SAFETY: the CQ belongs to a FI_THREAD_SAFE domain; it is closed once, in Drop.
unsafe impl Send for OfiCq {}
// SAFETY: as above.
unsafe impl Sync for OfiCq {}

impl OfiCq {
    pub fn new(dev: &Arc<DevInner>, min_entries: u32, waker: Arc<dyn Waker>) -> DatResult<Arc<OfiCq>> {
        if min_entries > dev.attr.max_cqe {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        let eventfd = || {
            EventFd::new().map_err(|e| {
                tracing::warn!("ofi: eventfd for a CQ failed: {e}");
                DatError::insufficient(DAT_RESOURCE_MEMORY)
            })
        };
        let (intr, group_ready) = (eventfd()?, eventfd()?);
        let (cq, wait_fd) = open_cq_on(dev.lib, dev.domain, min_entries.max(1) as usize)?;
        let set = match wait_fd {
            Some(fd) => EpollSet::with_edges(&[fd, intr.fd()], wait_fd_edge(dev.rdm.is_some(), 0)).ok(),
            None => EpollSet::new(&[intr.fd()]).ok(),
        };
        let Some(sleep_set) = set else {
            // SAFETY: ours, closed once.
            unsafe { sys::FiOps::close(&cq) };
            tracing::warn!("ofi: epoll for a CQ failed");
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        };
        Ok(Arc::new(OfiCq {
            dev: dev.clone(),
            cq,
            intr,
            wait_fd,
            group_ready,
            sleep_set,
            sleep: Sleep::default(),
            waker,
            queues: SpinLock::new(Vec::new()),
            soft: Mutex::new(VecDeque::new()),
        }))
    }

    /// The CM thread's look: where no consumer polled since the last look and none sleeps
    /// here, drives libfabric's progress of this CQ's endpoints (`fi_cq_read` of 0 entries,
    /// which takes none), so that a peer's RDMA to an idle consumer completes and its shutdown
    /// is noticed. True when it did.
    pub fn look(&self) -> bool {
        self.sleep.look(self)
    }

    /// Drives libfabric's progress of this CQ's endpoints (a post that libfabric refused for
    /// now needs it).
    pub fn progress(&self) {
        self.read_none();
    }

    /// `fi_cq_read` of 0 entries: drives progress, takes nothing; true when entries wait.
    fn read_none(&self) -> bool {
        let mut e = std::mem::MaybeUninit::<sys::fi_cq_data_entry>::uninit();
        // SAFETY: a live CQ; no entry is written for a count of 0.
        let r = unsafe { ((*(*self.cq).ops).read)(self.cq, e.as_mut_ptr().cast(), 0) };
        r >= 0 || r == -(sys::FI_EAVAIL as isize)
    }

    pub fn attach(&self, q: &Arc<Queue>) {
        self.queues.lock().push(q.clone());
    }

    pub fn detach(&self, q: &Arc<Queue>) {
        let mut qs = self.queues.lock();
        qs.retain(|x| !Arc::ptr_eq(x, q));
    }

    /// Queues a completion made in software and wakes whoever sleeps on the EVD.
    pub fn push_soft(&self, wcs: impl IntoIterator<Item = WorkCompletion>) {
        let mut s = self.soft.lock();
        let before = s.len();
        s.extend(wcs);
        if s.len() == before {
            return;
        }
        self.sleep.soft_added();
        drop(s);
        self.sleep.interrupt(self);
        if self.waker.wants_wake() {
            self.waker.wake();
        }
    }

    #[cold]
    fn poll_soft(&self, out: &mut [WorkCompletion]) -> usize {
        let mut s = self.soft.lock();
        let mut n = 0;
        while n < out.len() {
            let Some(wc) = s.pop_front() else { break };
            out[n] = wc;
            n += 1;
        }
        if s.is_empty() {
            self.sleep.soft_taken();
        }
        n
    }

    /// Reads libfabric's completions into `out` from `n`; returns the new `n`.
    fn poll_fabric(&self, out: &mut [WorkCompletion], mut n: usize) -> usize {
        let mut buf = std::mem::MaybeUninit::<[sys::fi_cq_data_entry; BATCH]>::uninit();
        while n < out.len() {
            // Held completions of ordered queues that became reportable come first.
            for q in self.queues.lock().iter() {
                n += q.take_ready(&mut out[n..]);
            }
            if n == out.len() {
                return n;
            }
            let want = (out.len() - n).min(BATCH);
            // SAFETY: a live CQ; `buf` has room for `want` entries of the CQ's format.
            let got = unsafe { ((*(*self.cq).ops).read)(self.cq, buf.as_mut_ptr().cast(), want) };
            if got == -(sys::FI_EAVAIL as isize) {
                if let Some(wc) = self.read_error() {
                    out[n] = wc;
                    n += 1;
                }
                continue;
            }
            if got <= 0 {
                if got != -(sys::FI_EAGAIN as isize) {
                    tracing::warn!("ofi: fi_cq_read failed: {}", sys::strerror(self.dev.lib, got));
                }
                return n;
            }
            // SAFETY: fi_cq_read wrote the first `got` entries.
            let entries =
                unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<sys::fi_cq_data_entry>(), got as usize) };
            let qs = self.queues.lock();
            for e in entries {
                if let Some(wc) =
                    find(&qs, e.op_context).and_then(|(q, i)| q.complete(i, WcStatus::Success, e.len as u64))
                {
                    out[n] = wc;
                    n += 1;
                }
            }
            drop(qs);
            if (got as usize) < want {
                return n;
            }
        }
        n
    }

    /// One error completion (`fi_cq_readerr`), translated.
    #[cold]
    fn read_error(&self) -> Option<WorkCompletion> {
        // SAFETY: plain old data.
        let mut e: sys::fi_cq_err_entry = unsafe { std::mem::zeroed() };
        // SAFETY: a live CQ and a live entry.
        let r = unsafe { ((*(*self.cq).ops).readerr)(self.cq, &mut e, 0) };
        if r <= 0 {
            return None;
        }
        let status = status(e.err);
        if status != WcStatus::Flushed {
            tracing::debug!(
                err = e.err,
                prov_errno = e.prov_errno,
                "ofi: error completion: {}",
                sys::strerror(self.dev.lib, e.err as isize)
            );
        }
        let qs = self.queues.lock();
        find(&qs, e.op_context).and_then(|(q, i)| q.complete(i, status, e.len as u64))
    }
}

/// The queue whose slot `ctx` is, and the slot's index.
#[inline]
fn find(qs: &[Arc<Queue>], ctx: *mut libc::c_void) -> Option<(&Arc<Queue>, usize)> {
    qs.iter().find_map(|q| q.slot_of(ctx as usize).map(|i| (q, i)))
}

/// DAT's status for a libfabric error of a completion.
fn status(err: i32) -> WcStatus {
    match err {
        libc::ECANCELED | libc::ECONNRESET | libc::ENOTCONN | libc::EPIPE | libc::ECONNABORTED | libc::ESHUTDOWN => {
            WcStatus::Flushed
        }
        sys::FI_ETRUNC | libc::EMSGSIZE => WcStatus::LocalLength,
        libc::EACCES | libc::EPERM | libc::EKEYREJECTED | libc::ENOKEY => WcStatus::RemoteAccess,
        libc::EINVAL | libc::EFAULT => WcStatus::LocalProtection,
        libc::ETIMEDOUT | libc::EIO => WcStatus::TransportRetry,
        _ => WcStatus::LocalOperation,
    }
}

/// How long a sleeper on a CQ without a wait fd (or over `FI_EP_RDM`) sleeps before it polls
/// again.
const NO_FD_TICK: Duration = Duration::from_millis(1);

/// The edge mask ([`EpollSet::with_edges`]) for a CQ's wait fd at `index` of a sleep set: over
/// `FI_EP_RDM` (`rdm`) it is watched edge-triggered, by a CQ's sleeper and, for the control
/// CQ, by the CM thread. libfabric's util CQ (rxm's) signals its fd at every completion it
/// writes and resets it only in `fi_trywait`, which we do not call there (see
/// [`Fabric::trywait`] below), so once signalled it stays readable: level-triggered, every
/// sleep on it returned at once, and the sleepers and the CM thread spun, a CPU each, which
/// starved the data path under load. An edge still comes with each new signal and each
/// arrival on the endpoints' sockets (their wake-ups pass through the nested epoll sets), and
/// the [`NO_FD_TICK`] re-poll covers a completion written without either.
pub(super) fn wait_fd_edge(rdm: bool, index: usize) -> u32 {
    if rdm {
        1 << index
    } else {
        0
    }
}

/// Opens a CQ of at least `size` entries on `domain`, with a wait fd where the provider has
/// one (else `FI_WAIT_NONE`, and None).
pub(super) fn open_cq_on(
    lib: &sys::Lib,
    domain: *mut sys::fid_domain,
    size: usize,
) -> DatResult<(*mut sys::fid_cq, Option<libc::c_int>)> {
    match open_cq_with(lib, domain, size, sys::FI_WAIT_FD) {
        Ok(cq) => {
            let mut fd: libc::c_int = -1;
            // SAFETY: a live CQ of FI_WAIT_FD: FI_GETWAIT writes its fd.
            let r = unsafe { sys::FiOps::control(&cq, sys::FI_GETWAIT, (&mut fd as *mut libc::c_int).cast()) };
            if r == 0 {
                return Ok((cq, Some(fd)));
            }
            // SAFETY: ours, closed once.
            unsafe { sys::FiOps::close(&cq) };
        }
        Err(e) if e != DatError::NOT_IMPLEMENTED => return Err(e),
        Err(_) => {}
    }
    Ok((open_cq_with(lib, domain, size, sys::FI_WAIT_NONE)?, None))
}

fn open_cq_with(
    lib: &sys::Lib,
    domain: *mut sys::fid_domain,
    size: usize,
    wait_obj: i32,
) -> DatResult<*mut sys::fid_cq> {
    let mut attr = sys::fi_cq_attr {
        size,
        flags: 0,
        format: sys::FI_CQ_FORMAT_DATA,
        wait_obj,
        signaling_vector: 0,
        wait_cond: 0,
        wait_set: std::ptr::null_mut(),
    };
    let mut cq = std::ptr::null_mut();
    // SAFETY: a live domain and attributes.
    let r = unsafe { ((*(*domain).ops).cq_open)(domain, &mut attr, &mut cq, std::ptr::null_mut()) };
    if r == -libc::ENOSYS {
        return Err(DatError::NOT_IMPLEMENTED);
    }
    if r != 0 {
        return Err(fail(lib, "fi_cq_open", r as isize, DatError::insufficient(DAT_RESOURCE_MEMORY)));
    }
    Ok(cq)
}

/// libfabric's side of the sleeping protocol ([`Sleep`]).
impl Fabric for OfiCq {
    /// `fi_trywait`, but over `FI_EP_RDM` or without a wait fd a read of 0 entries instead
    /// (progress, then: is anything there?): libfabric 1.17's rxm leaves a closed endpoint's
    /// entry in its CQs' wait set, which `fi_trywait` then reads after it is freed. The wait
    /// fd still becomes readable when data arrives for the CQ's endpoints (their sockets are in
    /// its set) or a completion is written.
    fn trywait(&self) -> bool {
        if self.wait_fd.is_none() || self.dev.rdm.is_some() {
            return !self.read_none();
        }
        let mut fid = self.cq.cast::<sys::fid>();
        // SAFETY: a live fabric and CQ of it.
        unsafe { ((*(*self.dev.fabric).ops).trywait)(self.dev.fabric, &mut fid, 1) == 0 }
    }
    /// Without a wait fd, and over `FI_EP_RDM`, a sleeper sleeps for at most [`NO_FD_TICK`]:
    /// rxm writes a completion that another thread's progress of the same endpoint made
    /// without signalling this CQ's wait fd, and its sockets' data is gone by then. When the
    /// tick passes before `timeout`, it woke for nothing and the caller re-polls. Without a
    /// wait fd the interrupt is the set's only descriptor.
    fn wait(&self, timeout: Option<Duration>) -> Option<u32> {
        let ticks = self.wait_fd.is_none() || self.dev.rdm.is_some();
        let nap = if ticks { Some(timeout.map_or(NO_FD_TICK, |t| t.min(NO_FD_TICK))) } else { timeout };
        match (self.sleep_set.wait(nap), self.wait_fd) {
            (None, _) if nap != timeout => Some(0),
            (Some(_), None) => Some(SLEEP_INTR),
            (woke, _) => woke,
        }
    }
    fn clear_intr(&self) {
        self.intr.clear();
    }
    fn ring_intr(&self) {
        self.intr.ring();
    }
    fn progress(&self) {
        self.read_none();
    }
}

impl Drop for OfiCq {
    fn drop(&mut self) {
        // SAFETY: no endpoint is bound any more (they hold Arcs to this CQ); closed once.
        let r = unsafe { sys::FiOps::close(&self.cq) };
        if r != 0 {
            tracing::warn!("ofi: closing a CQ failed: {}", sys::strerror(self.dev.lib, r as isize));
        }
    }
}

impl CompletionQueue for OfiCq {
    fn poll(&self, out: &mut [WorkCompletion]) -> usize {
        self.sleep.polled();
        // libfabric's first: a completion made in software (a request posted to a dead queue)
        // comes after every one libfabric made for that queue, which are all in the CQ by then
        // (see `Queue::kill`).
        let n = self.poll_fabric(out, 0);
        // The re-poll after `arm` sees the completion or `push_soft` sees the sleeper (see
        // `super::sleep`).
        if n < out.len() && self.sleep.has_soft() {
            return n + self.poll_soft(&mut out[n..]);
        }
        n
    }

    fn resize(&self, min_entries: u32) -> DatResult<()> {
        // libfabric CQs do not resize; ours grow as the provider needs (tcp), so any size up
        // to the limit is accepted.
        if min_entries > self.dev.attr.max_cqe {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        Ok(())
    }

    fn arm(&self) -> bool {
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

    /// Arms the CQ for a CNO's waiter, which sleeps on its wait fd among its other queues:
    /// `fi_trywait`, and where completions are pending already, a descriptor that is readable
    /// at once. Without a wait fd, or over `FI_EP_RDM` (where the fd, never reset, stays
    /// readable: see [`wait_fd_edge`]), the waiter re-polls the CQ every millisecond in its
    /// own thread ([`WakeSource::Tick`]), as an EVD's waiter does.
    fn arm_group(&self) -> Option<WakeSource> {
        let ticks = self.wait_fd.is_none() || self.dev.rdm.is_some();
        match (self.wait_fd, self.sleep.arm_group(self)) {
            (_, true) if ticks => Some(WakeSource::Tick),
            (Some(fd), true) => Some(WakeSource::Fd(fd)),
            _ => {
                self.group_ready.ring();
                Some(WakeSource::Fd(self.group_ready.fd()))
            }
        }
    }

    fn disarm_group(&self, _queue_waiter: bool) {
        self.group_ready.clear();
        self.sleep.disarm_group();
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::{Provider, RecordedAsyncEvents};
    use super::super::OfiProvider;
    use super::*;

    struct NoWaker;

    impl Waker for NoWaker {
        fn wake(&self) {}
    }

    /// A waiter that armed and then found its completion in the re-poll does not block; once it
    /// disarms, the CM thread looks at the CQ again. (A queue left looking slept on was never
    /// looked at again: with no consumer polling, a peer's shutdown went unnoticed.)
    #[test]
    fn the_cm_thread_looks_at_a_queue_again_once_its_waiter_disarms() {
        let provider = OfiProvider::new();
        if !provider.ia_names().iter().any(|n| n == "ofi-tcp-lo") {
            eprintln!("skipped: ofi-tcp-lo not offered (libfabric or its tcp provider missing)");
            return;
        }
        let dev = provider.open("ofi-tcp-lo", "", Arc::new(RecordedAsyncEvents::default())).expect("open");
        let cq = CQS.get(&dev.create_cq(16, Arc::new(NoWaker)).expect("cq")).expect("an ofi CQ");
        assert!(cq.look(), "an idle queue is looked at");
        cq.arm();
        assert!(!cq.look(), "an armed queue is its waiter's");
        cq.disarm();
        assert!(cq.look(), "a disarmed queue is looked at again");
        cq.arm();
        cq.block(Some(Duration::from_millis(1)));
        assert!(cq.look(), "after the block, looked at again");
    }
}
