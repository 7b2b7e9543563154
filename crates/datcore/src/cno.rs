//! Consumer notification objects (CNO): one waiter (`dat_cno_wait`) or a proxy agent learns
//! that an event arrived on one of several EVDs while nobody waited on that EVD.
//!
//! **Who wakes the waiter.** The waiter does the work itself, like an EVD's (see
//! `EventDispatcher::wait_queued`): it polls its EVDs' provider queues (which drives the
//! provider's progress), spins while nothing comes (the CNO's own [`AdaptiveSpin`]), and then
//! sleeps on all of its EVDs' queues at once ([`crate::provider::group_sleep`]): a completion
//! wakes it directly, from the producer's own thread or process, with no provider thread on
//! the path. What the core queues itself (`dat_evd_post_se`, connection events) and what a
//! provider thread finds ([`crate::provider::Waker`]: shm's background look, verbs' notifier)
//! trigger the CNO through [`ConsumerNotifier::trigger`], which ends that sleep too.
//!
//! **No lost wake-up.** The waiter's sleep is the queues' protocol: (1) arm its own word, then
//! every EVD that can trigger (enabled, nobody waiting on it), each under the EVD's lock
//! (`EventDispatcher::arm_for_cno`); (2) look once more: a trigger, a change of the EVDs, and
//! every armed EVD's queue (`EventDispatcher::poll_for_cno`); (3) block on all of them. An
//! arrival on an armed queue after its arm is seen in (2) or ends (3) (the provider's
//! invariant); a trigger stores `triggered` before it interrupts, so one after (1) is seen in
//! (2) or ends (3); and an EVD that was left out because it could not trigger (disabled, or a
//! thread waited on it) interrupts the waiter when that changes (`ConsumerNotifier::rescan`:
//! `dat_evd_enable`, the end of a `dat_evd_wait`, `dat_evd_modify_cno`), so the waiter arms it
//! in its next round.

use crate::codes::*;
use crate::error::{DatError, DatResult};
use crate::evd::EventDispatcher;
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::group_sleep::{GroupSleeper, SleepSet};
use crate::waiting::{AdaptiveSpin, WaitClock};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

/// The proxy agent a CNO calls instead of (or besides) waking a waiter:
/// `DAT_OS_WAIT_PROXY_AGENT { instance_data, proxy_agent_func }`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProxyAgent {
    pub instance_data: usize,
    pub func: usize,
}

/// A CNO: wakes its waiter when any of its EVDs gets an event nobody waits for.
pub struct ConsumerNotifier {
    pub ia: Arc<InterfaceAdapter>,
    state: Mutex<CnoState>,
    /// The EVD that triggered last and no wait has returned yet (`Handle::NULL`: none).
    triggered: AtomicU64,
    /// What the waiter sleeps on besides its EVDs' queues: interrupted by triggers and
    /// changes of the EVDs.
    sleeper: GroupSleeper,
    /// Moves when the attached EVDs, or whether one of them can trigger, change: the waiter
    /// then reads its list again.
    changes: AtomicU32,
    handle: OnceLock<Handle>,
}

struct CnoState {
    agent: ProxyAgent,
    waiter: bool,
    /// The attached EVDs.
    evds: Vec<Weak<EventDispatcher>>,
    spin: AdaptiveSpin,
    /// The waiter's own, taken while it waits and kept between waits.
    looks: Looks,
}

/// The waiter's copy of the attached EVDs while it waits (kept between waits, so that a wait
/// allocates nothing), and where its next look starts.
#[derive(Default)]
struct Looks {
    evds: Vec<Arc<EventDispatcher>>,
    /// The EVD after the one that triggered last: a busy EVD does not hide the others.
    next: usize,
}

impl Looks {
    /// Polls every EVD that can trigger, from `next` round, up to the first that got
    /// completions (which the caller triggers).
    fn find_ready(&mut self) -> Option<Handle> {
        let n = self.evds.len();
        let i = (0..n).map(|k| (self.next + k) % n).find(|&i| self.evds[i].poll_for_cno())?;
        self.next = i + 1;
        Some(self.evds[i].handle())
    }
}

handle::dat_object!(ConsumerNotifier, Cno);

impl ConsumerNotifier {
    pub fn create(ia: &Arc<InterfaceAdapter>, agent: ProxyAgent) -> DatResult<(Handle, Arc<Self>)> {
        let cno = Arc::new(ConsumerNotifier {
            ia: ia.clone(),
            state: Mutex::new(CnoState {
                agent,
                waiter: false,
                evds: Vec::new(),
                spin: AdaptiveSpin::new(),
                looks: Looks::default(),
            }),
            triggered: AtomicU64::new(Handle::NULL.0),
            sleeper: GroupSleeper::default(),
            changes: AtomicU32::new(0),
            handle: OnceLock::new(),
        });
        let h = handle::insert(cno.clone())?;
        let _ = cno.handle.set(h);
        ia.adopt(h);
        Ok((h, cno))
    }

    #[inline]
    pub fn handle(&self) -> Handle {
        self.handle.get().copied().unwrap_or(Handle::NULL)
    }

    pub fn agent(&self) -> ProxyAgent {
        self.state.lock().agent
    }

    /// `dat_cno_modify_agent`. Whether there is an agent decides the notify mode of the
    /// attached EVDs' queues (`EventDispatcher::refresh_notify`), set here after the CNO's lock
    /// is released (an EVD's lock is taken before a CNO's).
    pub fn set_agent(&self, agent: ProxyAgent) {
        let mut st = self.state.lock();
        let had = st.agent.func != 0;
        st.agent = agent;
        if had == (agent.func != 0) {
            return;
        }
        let evds: Vec<Arc<EventDispatcher>> = st.evds.iter().filter_map(Weak::upgrade).collect();
        drop(st);
        for evd in evds {
            evd.refresh_notify();
        }
    }

    /// Whether a proxy agent is registered.
    pub(crate) fn has_agent(&self) -> bool {
        self.state.lock().agent.func != 0
    }

    /// Whether EVDs are attached (a CNO in use cannot be freed).
    pub fn in_use(&self) -> bool {
        let mut st = self.state.lock();
        st.evds.retain(|e| e.strong_count() > 0);
        !st.evds.is_empty()
    }

    /// `evd` names this CNO from now on (`dat_evd_create`, `dat_evd_modify_cno`).
    pub(crate) fn attach(&self, evd: Weak<EventDispatcher>) {
        self.state.lock().evds.push(evd);
        self.rescan();
    }

    /// `evd` no longer names this CNO.
    pub(crate) fn detach(&self, evd: &EventDispatcher) {
        self.state.lock().evds.retain(|e| e.strong_count() > 0 && !std::ptr::eq(e.as_ptr(), evd));
        self.rescan();
    }

    /// Something that decides which EVDs the waiter sleeps on changed: it looks again.
    /// Atomics only while nobody sleeps.
    pub(crate) fn rescan(&self) {
        self.changes.fetch_add(1, Ordering::SeqCst);
        self.sleeper.interrupt();
    }

    /// An event arrived on `evd` and nobody waits on it: wakes the waiter (or has the next
    /// wait return at once) and calls the proxy agent.
    pub(crate) fn trigger(&self, evd: Handle) {
        self.triggered.store(evd.0, Ordering::SeqCst);
        self.sleeper.interrupt();
        let agent = self.state.lock().agent;
        if agent.func != 0 {
            // SAFETY: the consumer registered this function with the documented proxy-agent
            // signature `void (*)(DAT_PVOID instance_data, DAT_EVD_HANDLE evd)`.
            let f: extern "C" fn(*mut libc::c_void, *mut libc::c_void) = unsafe { std::mem::transmute(agent.func) };
            f(agent.instance_data as *mut libc::c_void, evd.as_ptr());
        }
    }

    /// `dat_cno_wait`: the EVD that triggered, or `DAT_TIMEOUT_EXPIRED`.
    pub fn wait(&self, timeout_us: u32) -> DatResult<Handle> {
        let mut st = self.state.lock();
        if st.waiter {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_CNO_IN_USE));
        }
        st.waiter = true;
        let spin = st.spin.this_wait();
        let mut looks = std::mem::take(&mut st.looks);
        drop(st);
        let (result, slept) = self.wait_for_trigger(timeout_us, spin, &mut looks);
        looks.evds.clear();
        let mut st = self.state.lock();
        st.looks = looks;
        st.waiter = false;
        if result.is_ok() && !spin.is_zero() {
            if slept {
                st.spin.slept();
            } else {
                st.spin.satisfied();
            }
        }
        result
    }

    /// The waiter's loop: what triggered, else its own look at the EVDs, spinning for `spin`,
    /// then sleeping. Returns whether it slept.
    fn wait_for_trigger(&self, timeout_us: u32, spin: Duration, looks: &mut Looks) -> (DatResult<Handle>, bool) {
        let mut clock = WaitClock::start(timeout_us, spin, true);
        let mut slept = false;
        let mut listed = self.list_evds(&mut looks.evds);
        loop {
            let h = Handle(self.triggered.swap(Handle::NULL.0, Ordering::SeqCst));
            if h != Handle::NULL {
                return (Ok(h), slept);
            }
            if self.changes.load(Ordering::SeqCst) != listed {
                listed = self.list_evds(&mut looks.evds);
            }
            if let Some(h) = looks.find_ready() {
                self.trigger(h);
                continue;
            }
            if clock.timed_out() {
                return (Err(DatError::TIMEOUT), slept);
            }
            if clock.spinning() {
                std::hint::spin_loop();
                continue;
            }
            let timed_out = self.sleep(looks, listed, clock.sleep_timeout());
            clock.slept(timed_out);
            slept = true;
        }
    }

    /// Copies the attached EVDs into `evds`; returns the `changes` value it read first.
    fn list_evds(&self, evds: &mut Vec<Arc<EventDispatcher>>) -> u32 {
        let listed = self.changes.load(Ordering::SeqCst);
        evds.clear();
        evds.extend(self.state.lock().evds.iter().filter_map(Weak::upgrade));
        listed
    }

    /// One sleep of the waiter (the module's arm / look / block protocol), until an EVD's
    /// queue or a trigger wakes it or `timeout` passes. True when it ended by `timeout`.
    fn sleep(&self, looks: &mut Looks, listed: u32, timeout: Option<Duration>) -> bool {
        let armed_at = self.sleeper.arm();
        let mut set = SleepSet::default();
        for evd in &looks.evds {
            if let Some(source) = evd.arm_for_cno() {
                set.add(source);
            }
        }
        let ready = looks.find_ready();
        let changed = ready.is_some()
            || self.triggered.load(Ordering::SeqCst) != Handle::NULL.0
            || self.changes.load(Ordering::SeqCst) != listed;
        let timed_out = !changed && set.block(&self.sleeper, armed_at, timeout);
        for evd in &looks.evds {
            evd.disarm_for_cno();
        }
        self.sleeper.disarm();
        // Triggered once awake: its interrupt then costs no system call.
        if let Some(h) = ready {
            self.trigger(h);
        }
        timed_out
    }
}

/// `dat_cno_free`: `DAT_INVALID_STATE_CNO_IN_USE` while EVDs are attached.
pub fn free(h: Handle) -> DatResult<()> {
    let cno = handle::get::<ConsumerNotifier>(h, DAT_INVALID_HANDLE_CNO)?;
    if cno.in_use() {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_CNO_IN_USE));
    }
    handle::remove::<ConsumerNotifier>(h);
    cno.ia.disown(h);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{futex, CompletionQueue, WakeSource, WcOpcode, WorkCompletion};
    use std::collections::VecDeque;
    use std::sync::atomic::fence;
    use std::time::Instant;

    /// A provider queue whose completions the test adds, with a wake word for a group sleeper
    /// as shm's: nothing else looks at it, so only a direct wake-up ends the CNO's sleep.
    #[derive(Default)]
    struct WordQueue {
        list: Mutex<VecDeque<WorkCompletion>>,
        seq: AtomicU32,
        sleeping: AtomicU32,
    }

    impl WordQueue {
        fn complete(&self, cookie: u64) {
            let wc = WorkCompletion { wr_id: cookie, opcode: WcOpcode::Recv, ..WorkCompletion::EMPTY };
            self.list.lock().push_back(wc);
            fence(Ordering::SeqCst);
            if self.sleeping.load(Ordering::SeqCst) != 0 {
                self.seq.fetch_add(1, Ordering::SeqCst);
                futex::futex_wake(&self.seq);
            }
        }
    }

    impl CompletionQueue for WordQueue {
        fn poll(&self, out: &mut [WorkCompletion]) -> usize {
            let mut list = self.list.lock();
            let n = out.len().min(list.len());
            for (slot, wc) in out.iter_mut().zip(list.drain(..n)) {
                *slot = wc;
            }
            n
        }
        fn resize(&self, _: u32) -> DatResult<()> {
            Ok(())
        }
        fn arm_group(&self) -> Option<WakeSource> {
            self.sleeping.store(1, Ordering::SeqCst);
            Some(WakeSource::Futex { word: &self.seq, value: self.seq.load(Ordering::SeqCst) })
        }
        fn disarm_group(&self, _queue_waiter: bool) {
            self.sleeping.store(0, Ordering::SeqCst);
        }
    }

    const LONG_US: u32 = 10_000_000;

    /// Runs `wait` on the CNO in a thread, then `act` once the waiter has had time to fall
    /// asleep (past any spin); the wait's result.
    fn wait_while(cno: &Arc<ConsumerNotifier>, act: impl FnOnce()) -> DatResult<Handle> {
        let c = cno.clone();
        let waiter = std::thread::spawn(move || c.wait(LONG_US));
        std::thread::sleep(Duration::from_millis(30));
        act();
        waiter.join().expect("waiter")
    }

    /// A completion on any of the CNO's queues wakes its sleeping waiter by itself; so do an
    /// EVD that becomes able to trigger (enabled again, or its own waiter gone) and a
    /// software event. Nothing else looks at these queues: a lost wake-up times out.
    #[test]
    fn the_waiter_is_woken_by_each_queue_a_software_event_and_an_evd_that_can_trigger_again() {
        let (ia_h, ia) = crate::ia::tests::open_shm();
        let (_, cno) = ConsumerNotifier::create(&ia, ProxyAgent::default()).expect("cno");
        let queues: Vec<Arc<WordQueue>> = (0..3).map(|_| Arc::new(WordQueue::default())).collect();
        let evds: Vec<Arc<EventDispatcher>> =
            queues.iter().map(|q| EventDispatcher::create_on(&ia, q.clone(), Some(cno.clone()))).collect();
        // Attached again to the same CNO: still attached, once.
        evds[0].set_cno(Some(cno.clone()));
        let t0 = Instant::now();
        for (i, q) in queues.iter().enumerate() {
            assert_eq!(wait_while(&cno, || q.complete(i as u64)), Ok(evds[i].handle()), "queue {i}");
            assert!(evds[i].dequeue().is_ok());
        }
        // A software event: the EVD triggers the CNO itself.
        let software = crate::evd::software_event(7);
        assert_eq!(wait_while(&cno, || evds[1].post(software).expect("post")), Ok(evds[1].handle()));
        assert!(evds[1].dequeue().is_ok());
        // Disabled while the waiter goes to sleep, enabled later, then a completion.
        evds[0].set_enabled(false);
        let r = wait_while(&cno, || {
            evds[0].set_enabled(true);
            std::thread::sleep(Duration::from_millis(10));
            queues[0].complete(10);
        });
        assert_eq!(r, Ok(evds[0].handle()), "after dat_evd_enable");
        assert!(evds[0].dequeue().is_ok());
        // A thread waits on the EVD while the CNO's waiter goes to sleep; it leaves (timed
        // out), then a completion.
        let e = evds[2].clone();
        let evd_waiter = std::thread::spawn(move || e.wait(20_000, 1).map(|_| ()));
        std::thread::sleep(Duration::from_millis(5));
        let r = wait_while(&cno, || {
            assert_eq!(evd_waiter.join().expect("EVD waiter"), Err(DatError::TIMEOUT));
            queues[2].complete(20);
        });
        assert_eq!(r, Ok(evds[2].handle()), "after the EVD's own waiter left");
        assert!(t0.elapsed() < Duration::from_micros(LONG_US as u64), "no wait timed out");
        // Nothing new: a short wait times out; a completion already there returns at once.
        assert_eq!(cno.wait(20_000), Err(DatError::TIMEOUT));
        queues[1].complete(30);
        assert_eq!(cno.wait(0), Ok(evds[1].handle()));
        assert!(evds[1].dequeue().is_ok());
        // Completions on two queues, and the first busy again: the second is not hidden.
        queues[0].complete(40);
        queues[1].complete(41);
        let first = cno.wait(0).expect("a completion is there");
        let busy = if first == evds[0].handle() { 0 } else { 1 };
        queues[busy].complete(42);
        assert_eq!(cno.wait(0), Ok(evds[1 - busy].handle()), "the other EVD's turn");
        for (i, e) in evds.iter().enumerate() {
            assert!(cno.in_use(), "EVD {i} still attached");
            e.set_cno(None);
        }
        assert!(!cno.in_use());
        drop(evds);
        crate::ia::close(ia_h, true).expect("close IA");
    }
}
