//! The notifier thread: completions for EVDs whose CNO has a proxy agent.
//!
//! A CNO's proxy agent must be called when completions arrive on its EVDs although no consumer
//! thread polls or waits there, so something must watch those CQs (a CNO without one is
//! served by its waiter, which sleeps on the CQs' channels itself). One thread per device
//! does, started when the device's first CQ goes into CNO mode ([`super::cq::VerbsCq`]'s
//! `set_notify`): it
//! sleeps in poll(2) on the completion channel fds of the watched CQs plus an eventfd rung when
//! the set changes, and for each channel that fires takes the event, re-arms the CQ and calls
//! its EVD's waker. CQs of EVDs without a CNO never involve it.

use super::super::eventfd::EventFd;
use super::super::serve::Served;
use super::super::AsyncEvents;
use super::cq::VerbsCq;
use super::DevInner;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

/// How often the thread checks for a stop without being rung.
const IDLE_POLL_MS: i32 = 100;

pub(crate) struct Notifier {
    watched: Mutex<Vec<Weak<VerbsCq>>>,
    /// Rung when `watched` changes or the thread must stop.
    changed: EventFd,
    stop: AtomicBool,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Where a caught panic is reported (the IA's async EVD).
    events: Arc<dyn AsyncEvents>,
}

impl Notifier {
    fn start(events: Arc<dyn AsyncEvents>) -> Option<Arc<Notifier>> {
        let changed = EventFd::new().map_err(|e| tracing::warn!("verbs: notifier eventfd: {e}")).ok()?;
        let n = Arc::new(Notifier {
            watched: Mutex::new(Vec::new()),
            changed,
            stop: AtomicBool::new(false),
            thread: Mutex::new(None),
            events,
        });
        let run = n.clone();
        match std::thread::Builder::new().name("dat-verbs-cno".into()).spawn(move || run.run()) {
            Ok(t) => *n.thread.lock() = Some(t),
            Err(e) => {
                tracing::warn!("verbs: cannot start the CNO notifier thread: {e}");
                return None;
            }
        }
        Some(n)
    }

    /// Stops and joins the thread (unless called from it, e.g. by a proxy agent closing the IA).
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.changed.ring();
        let t = self.thread.lock().take();
        if let Some(t) = t {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }

    fn run(&self) {
        let mut fds = Vec::new();
        let mut cqs = Vec::new();
        let mut served = Served::new("dat-verbs-cno");
        while !self.stop.load(Ordering::SeqCst) {
            // A panic below (e.g. in a waker) must not end the notifications of every CNO.
            if !served.iteration(&*self.events, || self.step(&mut fds, &mut cqs)) {
                cqs.clear();
            }
        }
    }

    /// One poll over the watched channels; handles what fired.
    fn step(&self, fds: &mut Vec<libc::pollfd>, cqs: &mut Vec<Arc<VerbsCq>>) {
        cqs.clear();
        cqs.extend(self.watched.lock().iter().filter_map(Weak::upgrade));
        fds.clear();
        fds.push(libc::pollfd { fd: self.changed.fd(), events: libc::POLLIN, revents: 0 });
        fds.extend(cqs.iter().map(|c| libc::pollfd { fd: c.channel_fd(), events: libc::POLLIN, revents: 0 }));
        // SAFETY: `fds` holds fds.len() valid pollfds; the CQs (and so their channels) are
        // kept alive by `cqs` across the call.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, IDLE_POLL_MS) };
        if r > 0 {
            if fds[0].revents != 0 {
                self.changed.clear();
            }
            for (c, fd) in cqs.iter().zip(&fds[1..]) {
                if fd.revents != 0 {
                    c.on_channel_event();
                    // A waiter that armed before the CQ left CNO mode may have wanted this
                    // event: let it re-poll.
                    crate::provider::CompletionQueue::interrupt(&**c);
                }
            }
        }
        // Dropping the Arcs here may free a CQ whose EVD went away meanwhile: fine on any thread.
        cqs.clear();
    }
}

/// Puts `cq` under the device's notifier thread, starting it if needed. False when the thread
/// cannot be started (logged).
pub fn watch(dev: &DevInner, cq: &VerbsCq) -> bool {
    let Some(me) = cq_arc(cq) else { return false };
    let mut slot = dev.notifier.lock();
    if slot.is_none() {
        *slot = Notifier::start(dev.async_events.clone());
    }
    let Some(n) = slot.as_ref() else { return false };
    let mut w = n.watched.lock();
    w.retain(|c| c.strong_count() > 0);
    w.push(Arc::downgrade(&me));
    drop(w);
    n.changed.ring();
    true
}

/// Takes `cq` out of the watched set.
pub fn unwatch(dev: &DevInner, cq: &VerbsCq) {
    if let Some(n) = dev.notifier.lock().as_ref() {
        n.watched.lock().retain(|c| c.strong_count() > 0 && !std::ptr::eq(c.as_ptr(), cq));
        n.changed.ring();
    }
}

fn cq_arc(cq: &VerbsCq) -> Option<Arc<VerbsCq>> {
    super::CQS.get_at(cq as *const VerbsCq as *const ())
}
