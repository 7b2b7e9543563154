//! The per-process progress thread: accepts connections, runs handshakes, executes inbound
//! requests, completes outbound work, and notices dead peers.
//!
//! While there is traffic it spins for a short while (`DAT_SHM_SPIN_US`, default 20 µs with 4+ CPUs, else 0) on the
//! rings; then it announces `sleeping` in every connection's segment and blocks in poll(2) on
//! all sockets plus an eventfd. Peers ring the doorbell (a one-byte datagram) only when they
//! see that flag, so a busy connection costs no system call per message.

use super::super::ConnEvent;
use super::conn::{self, ListenerInner};
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
}

pub struct Engine {
    kick_fd: Option<OwnedFd>,
    cmds: Mutex<Cmds>,
}

/// The process's engine; its thread starts on first use.
pub fn engine() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    static STARTED: std::sync::Once = std::sync::Once::new();
    let e = E.get_or_init(|| {
        let kick_fd = sys::eventfd().map_err(|e| tracing::warn!("shm: eventfd: {e}")).ok();
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
            sys::eventfd_signal(fd);
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

/// How long to spin before sleeping. Spinning only pays when both processes' application and
/// progress threads have a CPU each; on smaller machines it steals the CPU the peer needs.
fn spin_time() -> Duration {
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let default = if cpus >= 4 { 20 } else { 0 };
    let us = std::env::var("DAT_SHM_SPIN_US").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    Duration::from_micros(us)
}

fn run(e: &'static Engine) {
    let mut s = State { qps: Vec::new(), listeners: Vec::new(), incoming: Vec::new() };
    let spin = spin_time();
    let mut last_busy = Instant::now();
    let mut iter = 0u64;
    loop {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            iter += 1;
            let mut busy = commands(e, &mut s);
            busy |= service_all(&mut s);
            let now = Instant::now();
            if busy {
                last_busy = now;
            }
            if busy || now.duration_since(last_busy) < spin {
                if iter.is_multiple_of(128) {
                    poll_all(e, &mut s, 0);
                }
                std::hint::spin_loop();
                return;
            }
            // Going to sleep: announce it, then look once more so no doorbell is lost.
            set_sleeping(&s, 1);
            fence(Ordering::SeqCst);
            if service_all(&mut s) || !e.cmds.lock().is_empty() {
                set_sleeping(&s, 0);
                last_busy = Instant::now();
                return;
            }
            let timeout = next_deadline(&s)
                .map(|d| d.saturating_duration_since(Instant::now()).as_millis().min(60_000) as i32 + 1);
            poll_all(e, &mut s, timeout.unwrap_or(-1));
            set_sleeping(&s, 0);
            last_busy = Instant::now();
        }));
        if r.is_err() {
            tracing::warn!("shm: progress thread recovered from a panic");
        }
    }
}

impl Cmds {
    fn is_empty(&self) -> bool {
        self.qps.is_empty() && self.listeners.is_empty() && self.events.is_empty()
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
    for (qp, ev, data) in c.events {
        if !qp.st.lock().dropped {
            tracing::debug!(context = qp.context, ?ev, "shm: connection event");
            qp.events.event(ev, &data);
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

fn service_all(s: &mut State) -> bool {
    let mut busy = false;
    let mut closed = false;
    for qp in &s.qps {
        let (b, c) = service(qp);
        busy |= b;
        closed |= c;
    }
    if closed {
        s.qps.retain(|q| q.st.lock().phase != Phase::Closed);
    }
    busy
}

/// One round of work on one queue pair: (did something, is closed).
fn service(qp: &QpShared) -> (bool, bool) {
    let mut a = After::default();
    let mut busy = false;
    let closed;
    {
        let mut st = qp.st.lock();
        let r = (|| -> Result<(), Fault> {
            if st.sock_ready {
                st.sock_ready = false;
                busy = true;
                conn::on_socket(qp, &mut st, &mut a)?;
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
                    busy |= xfer::pump_resp(qp, &mut st, &mut a)?;
                    if !st.peer_disc && !st.peer_gone {
                        busy |= xfer::pump_rx(qp, &mut st, &mut a)?;
                    }
                    let before = (st.sq.issued, st.sq.e.get(st.sq.slot(st.sq.issued)).map(|e| e.sent));
                    xfer::pump_tx(&mut st)?;
                    busy |= before != (st.sq.issued, st.sq.e.get(st.sq.slot(st.sq.issued)).map(|e| e.sent));
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
            tracing::warn!(context = qp.context, ?f, "shm: connection broken");
            qp.teardown(&mut st, &mut a);
            a.event = Some((ConnEvent::Broken, Vec::new()));
        }
        if st.dropped {
            a.event = None;
        }
        closed = st.phase == Phase::Closed;
    }
    busy |= a.event.is_some();
    qp.finish(a);
    (busy, closed)
}

/// Polls every socket once (`timeout_ms`: 0 = just look, -1 = until something happens) and
/// handles listeners and half-open incoming connections.
fn poll_all(e: &Engine, s: &mut State, timeout_ms: i32) {
    s.listeners.retain(|l| !l.closed.load(Ordering::SeqCst));
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(1 + s.listeners.len() + s.incoming.len() + s.qps.len());
    let pfd = |fd: i32| libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    fds.push(pfd(e.kick_fd.as_ref().map_or(-1, |f| f.as_raw_fd())));
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
        return;
    }
    let mut k = 0;
    if fds[k].revents != 0 {
        if let Some(f) = &e.kick_fd {
            sys::eventfd_drain(f);
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
}

fn drop_stale_incoming(s: &mut State) {
    let now = Instant::now();
    s.incoming.retain(|i| now.duration_since(i.since) < Duration::from_secs(10));
}
