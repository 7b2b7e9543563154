//! The per-process progress thread: accepts connections, runs handshakes, notices dead peers
//! and disconnects, and does the data-path work that no consumer drives.
//!
//! It is never on the path of a message between consumers that poll or wait: they drive the
//! rings themselves ([`super::cq`]). It blocks in poll(2) on all sockets plus an eventfd, and
//! while connections exist it wakes every millisecond ([`look_every`]) to service connections whose work
//! has waited since its previous look (see [`service`]). It announces `sleeping` in every
//! connection's segment before it blocks; peers ring the socket doorbell (a one-byte
//! datagram) only then, and only when they free ring space a producer waits for.

use super::super::eventfd::EventFd;
use super::super::ConnEvent;
use super::conn::{self, ListenerInner};
use super::cq::ShmCq;
use super::qp::{After, Fault, Phase, QpShared};
use super::sys::{self, Recv};
use super::{wire, xfer};
use parking_lot::Mutex;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{fence, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

type Deferred = (Arc<QpShared>, ConnEvent, Vec<u8>);

#[derive(Default)]
struct Cmds {
    qps: Vec<Arc<QpShared>>,
    listeners: Vec<Arc<ListenerInner>>,
    events: Vec<Deferred>,
    cq_wakes: Vec<Arc<ShmCq>>,
}

pub struct Engine {
    kick_fd: Option<EventFd>,
    cmds: Mutex<Cmds>,
}

/// The process's engine; its thread starts on first use.
pub fn engine() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    static STARTED: std::sync::Once = std::sync::Once::new();
    let e = E.get_or_init(|| {
        let kick_fd = EventFd::new().map_err(|e| tracing::warn!("shm: eventfd: {e}")).ok();
        Engine { kick_fd, cmds: Mutex::new(Cmds::default()) }
    });
    STARTED.call_once(|| {
        let r = std::thread::Builder::new().name("dat-shm-progress".into()).spawn(move || run(e));
        if let Err(err) = r {
            tracing::warn!("shm: cannot start progress thread: {err}");
        }
    });
    e
}

impl Engine {
    pub fn kick(&self) {
        if let Some(fd) = &self.kick_fd {
            fd.ring();
        }
    }

    pub fn add_qp(&self, qp: Arc<QpShared>) {
        self.cmds.lock().qps.push(qp);
        self.kick();
    }

    pub fn add_listener(&self, l: Arc<ListenerInner>) {
        self.cmds.lock().listeners.push(l);
        self.kick();
    }

    /// Calls `cq`'s waker from the progress thread (for completions added inside a poll).
    pub fn wake_later(&self, cq: Arc<ShmCq>) {
        self.cmds.lock().cq_wakes.push(cq);
        self.kick();
    }

    /// Delivers `ev` from the progress thread (never from inside the caller's call).
    pub fn defer(&self, qp: Arc<QpShared>, ev: ConnEvent, data: Vec<u8>) {
        self.cmds.lock().events.push((qp, ev, data));
        self.kick();
    }
}

struct Incoming {
    sock: OwnedFd,
    listener: Arc<ListenerInner>,
    since: Instant,
}

struct State {
    qps: Vec<Arc<QpShared>>,
    listeners: Vec<Arc<ListenerInner>>,
    incoming: Vec<Incoming>,
}

/// How often the thread looks for work no consumer drives (while connections exist):
/// `DAT_SHM_LOOK_US` microseconds, default 1000; 0 = never (a test knob: then only consumers'
/// polls move data, so a lost wake-up shows as a hang instead of a 1 ms delay).
pub(super) fn look_every() -> Option<Duration> {
    let us = std::env::var("DAT_SHM_LOOK_US").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1000u64);
    (us > 0).then(|| Duration::from_micros(us))
}

fn run(e: &'static Engine) {
    let mut s = State { qps: Vec::new(), listeners: Vec::new(), incoming: Vec::new() };
    let look_every = look_every();
    let mut next_look = Instant::now();
    let mut kicked = false;
    loop {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let kick = commands(e, &mut s) | kicked;
            let now = Instant::now();
            let look = look_every.is_some() && now >= next_look;
            if let Some(every) = look_every.filter(|_| look) {
                next_look = now + every;
            }
            service_all(&mut s, look, kick);
            // Going to sleep: announce it (peers ring the socket doorbell only then), then
            // look at the commands once more so no kick is lost.
            set_sleeping(&s, 1);
            fence(Ordering::SeqCst);
            if !e.cmds.lock().is_empty() {
                set_sleeping(&s, 0);
                return;
            }
            let connected = s.qps.iter().any(|q| q.st.lock().phase == Phase::Connected);
            let look_in = (connected && look_every.is_some()).then_some(next_look);
            let deadline = next_deadline(&s).into_iter().chain(look_in).min();
            let timeout = deadline.map(|d| {
                let t = d.saturating_duration_since(Instant::now());
                t.as_micros().div_ceil(1000).min(60_000) as i32
            });
            kicked = poll_all(e, &mut s, timeout.unwrap_or(-1));
            set_sleeping(&s, 0);
        }));
        if r.is_err() {
            tracing::warn!("shm: progress thread recovered from a panic");
        }
    }
}

impl Cmds {
    fn is_empty(&self) -> bool {
        self.qps.is_empty() && self.listeners.is_empty() && self.events.is_empty() && self.cq_wakes.is_empty()
    }
}

fn commands(e: &Engine, s: &mut State) -> bool {
    let c = {
        let mut g = e.cmds.lock();
        if g.is_empty() {
            return false;
        }
        std::mem::take(&mut *g)
    };
    s.qps.extend(c.qps);
    s.listeners.extend(c.listeners);
    for cq in c.cq_wakes {
        cq.wake();
    }
    for (qp, ev, data) in c.events {
        if !qp.st.lock().dropped {
            qp.deliver(ev, &data);
        }
    }
    true
}

fn set_sleeping(s: &State, v: u32) {
    for qp in &s.qps {
        if let Some(l) = &qp.st.lock().link {
            l.seg.sleeping(l.side).store(v, Ordering::SeqCst);
        }
    }
}

fn next_deadline(s: &State) -> Option<Instant> {
    let qd = s.qps.iter().filter_map(|q| q.st.lock().deadline).min();
    let id = s.incoming.iter().map(|i| i.since + Duration::from_secs(10)).min();
    qd.into_iter().chain(id).min()
}

/// Services every queue pair: sockets always, data where nobody else drives it (see
/// [`service`]).
fn service_all(s: &mut State, look: bool, kick: bool) {
    let mut closed = false;
    for qp in &s.qps {
        closed |= service(qp, look, kick);
    }
    if closed {
        s.qps.retain(|q| q.st.lock().phase != Phase::Closed);
    }
}

/// One round on one queue pair; true when it is closed.
///
/// The data path of a connection is normally driven by its consumers' polls
/// ([`super::cq::ShmCq::poll`]); this thread runs a data step only when the connection goes
/// away (drain what arrived before DISC, flush), a graceful disconnect waits for its send
/// queue, a poll parked a fault, the doorbell rang, the engine was kicked (`kick`: e.g. a
/// receive posted to a starved SRQ) while work waits, or (at a `look`) work has waited since
/// the previous look with nobody driving it (a consumer that does not poll: its peer's sends
/// must still complete, and CNOs must still fire).
fn service(qp: &QpShared, look: bool, kick: bool) -> bool {
    let mut a = After::default();
    let closed;
    // The socket spoke or a data step ran: polls skipping idle connections must look again.
    let mut changed = false;
    {
        let mut st = qp.st.lock();
        let r = (|| -> Result<(), Fault> {
            let rang = st.sock_ready;
            changed |= rang;
            if st.sock_ready {
                st.sock_ready = false;
                conn::on_socket(qp, &mut st, &mut a)?;
                if a.event.is_some() {
                    // Delivered first (Established before whatever the data path finds next:
                    // on_socket asked for another round).
                    return Ok(());
                }
            }
            if st.link.as_ref().is_some_and(|l| l.seg.condemned()) {
                return Err(Fault::Malformed("a copy mark held past the limit"));
            }
            match st.phase {
                Phase::Connecting => {
                    if st.peer_gone {
                        qp.teardown(&mut st, &mut a);
                        a.event = Some((ConnEvent::NonPeerRejected, Vec::new()));
                    } else if st.deadline.is_some_and(|d| Instant::now() >= d) {
                        tracing::debug!(context = qp.context, "shm: connect timed out");
                        qp.teardown(&mut st, &mut a);
                        a.event = Some((ConnEvent::TimedOut, Vec::new()));
                    }
                }
                Phase::Accepting => {
                    if st.peer_gone || st.peer_disc {
                        qp.teardown(&mut st, &mut a);
                        a.event = Some((ConnEvent::Broken, Vec::new()));
                    }
                }
                Phase::Connected => {
                    if let Some(f) = st.fault.take() {
                        return Err(f);
                    }
                    let stale = st.data_pending() && (kick || look && st.data_gen == st.looked_gen);
                    let driven = rang || stale || st.peer_disc || st.peer_gone || st.graceful_pending;
                    if driven && xfer::step(qp, &mut st, &mut a, xfer::Part::ALL)? {
                        st.data_gen += 1;
                        changed = true;
                    }
                    if look {
                        st.looked_gen = st.data_gen;
                    }
                    if st.peer_disc || st.peer_gone {
                        let ev = if st.peer_disc { ConnEvent::Disconnected } else { ConnEvent::Broken };
                        tracing::debug!(context = qp.context, ?ev, "shm: peer closed");
                        qp.teardown(&mut st, &mut a);
                        a.event = Some((ev, Vec::new()));
                    } else if st.graceful_pending && st.sq.is_empty() {
                        conn::send_disc(&st);
                        qp.teardown(&mut st, &mut a);
                        a.event = Some((ConnEvent::Disconnected, Vec::new()));
                    }
                }
                Phase::Idle | Phase::Closed => {}
            }
            Ok(())
        })();
        if let Err(f) = r {
            qp.broken(&mut st, &mut a, f);
        }
        if st.dropped {
            a.event = None;
            a.qp_error = false;
        }
        closed = st.phase == Phase::Closed;
    }
    if changed {
        qp.mark_cqs();
    }
    qp.finish(a);
    closed
}

/// Polls every socket once (`timeout_ms`: 0 = just look, -1 = until something happens) and
/// handles listeners and half-open incoming connections. True when the engine was kicked.
fn poll_all(e: &Engine, s: &mut State, timeout_ms: i32) -> bool {
    s.listeners.retain(|l| !l.closed.load(Ordering::SeqCst));
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(1 + s.listeners.len() + s.incoming.len() + s.qps.len());
    let pfd = |fd: i32| libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    fds.push(pfd(e.kick_fd.as_ref().map_or(-1, |f| f.fd())));
    for l in &s.listeners {
        fds.push(pfd(l.sock.as_raw_fd()));
    }
    for i in &s.incoming {
        fds.push(pfd(i.sock.as_raw_fd()));
    }
    // Keep the sockets alive across poll even if a QP closes meanwhile.
    let socks: Vec<Option<Arc<OwnedFd>>> = s.qps.iter().map(|q| q.st.lock().sock.clone()).collect();
    for so in &socks {
        fds.push(pfd(so.as_ref().map_or(-1, |f| f.as_raw_fd())));
    }
    if sys::poll(&mut fds, timeout_ms) == 0 {
        if timeout_ms != 0 {
            drop_stale_incoming(s);
        }
        return false;
    }
    let mut k = 0;
    let kicked = fds[k].revents != 0;
    if kicked {
        if let Some(f) = &e.kick_fd {
            f.clear();
        }
    }
    k += 1;
    let nl = s.listeners.len();
    for li in 0..nl {
        if fds[k + li].revents != 0 {
            let l = s.listeners[li].clone();
            loop {
                match sys::accept(&l.sock) {
                    Ok(Some(sock)) => s.incoming.push(Incoming { sock, listener: l.clone(), since: Instant::now() }),
                    Ok(None) => break,
                    Err(err) => {
                        tracing::warn!(port = l.port, "shm: accept: {err}");
                        break;
                    }
                }
            }
        }
    }
    k += nl;
    let ni = fds.len() - k - socks.len();
    let mut ready_in = Vec::new();
    for ii in (0..ni).rev() {
        if fds[k + ii].revents != 0 {
            ready_in.push(s.incoming.swap_remove(ii));
        }
    }
    k += ni;
    for (qi, q) in s.qps.iter().enumerate() {
        if fds[k + qi].revents != 0 {
            q.st.lock().sock_ready = true;
        }
    }
    for inc in ready_in {
        let mut buf = [0u8; wire::MAX_MSG];
        match sys::recv(&inc.sock, &mut buf) {
            Ok(Recv::Data(n, _)) => {
                let l = inc.listener;
                if l.closed.load(Ordering::SeqCst) {
                    continue;
                }
                if let Some(cr) = conn::make_cr(inc.sock, l.port, &buf[..n]) {
                    tracing::debug!(port = l.port, pid = cr.peer_pid, "shm: connect request");
                    l.events.connect_request(cr);
                }
            }
            Ok(Recv::Empty) => s.incoming.push(inc),
            _ => {}
        }
    }
    drop_stale_incoming(s);
    kicked
}

fn drop_stale_incoming(s: &mut State) {
    let now = Instant::now();
    s.incoming.retain(|i| now.duration_since(i.since) < Duration::from_secs(10));
}
