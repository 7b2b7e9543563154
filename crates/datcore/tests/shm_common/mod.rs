//! What the shm test binaries share: event sinks, completion queues, registered buffers, an
//! endpoint, and the peer process (the test binary re-executed: `SHM_PEER_ROLE` selects what
//! it does in that binary's `peer_main`, `SHM_PEER_PORT` where it connects or listens).
#![allow(dead_code)] // each test binary uses its own part

use datcore::provider::shm::ShmProvider;
use datcore::provider::*;
use datcore::DatResult;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

// ---- test-side sinks ---------------------------------------------------------------------------

pub struct Q<T> {
    pub q: Mutex<VecDeque<T>>,
    pub cv: Condvar,
}

impl<T> Q<T> {
    pub fn new() -> Arc<Self> {
        Arc::new(Q { q: Mutex::new(VecDeque::new()), cv: Condvar::new() })
    }
    pub fn push(&self, t: T) {
        self.q.lock().push_back(t);
        self.cv.notify_all();
    }
    pub fn wait(&self, d: Duration) -> Option<T> {
        let end = Instant::now() + d;
        let mut g = self.q.lock();
        loop {
            if let Some(t) = g.pop_front() {
                return Some(t);
            }
            if self.cv.wait_until(&mut g, end).timed_out() {
                return g.pop_front();
            }
        }
    }
}

/// A UD exchange's outcome: event, private data, the peer, whether this side accepted.
pub type UdOutcome = (ConnEvent, Vec<u8>, UdPeer, bool);

pub struct ConnQ(pub Arc<Q<(ConnEvent, Vec<u8>)>>, pub Arc<Q<UdOutcome>>);
impl ConnectionEvents for ConnQ {
    fn event(&self, ev: ConnEvent, pd: &[u8]) {
        self.0.push((ev, pd.to_vec()));
    }
    fn ud_event(&self, x: &UdExchange<'_>) {
        assert!(x.remote.ip().is_loopback(), "the peer's IA address");
        self.1.push((x.ev, x.private_data.to_vec(), x.peer, x.passive));
    }
}

pub struct ListenQ(pub Arc<Q<Arc<dyn ConnectionRequest>>>);
impl ListenerEvents for ListenQ {
    fn connect_request(&self, req: Arc<dyn ConnectionRequest>) {
        self.0.push(req);
    }
}

pub struct NoAsync;
impl AsyncEvents for NoAsync {
    fn async_error(&self, err: AsyncError) {
        eprintln!("async error {err:?}");
    }
}

/// Records the device's asynchronous errors.
pub struct AsyncQ(pub Arc<Q<AsyncError>>);
impl AsyncEvents for AsyncQ {
    fn async_error(&self, err: AsyncError) {
        self.0.push(err);
    }
}

pub struct CvWaker {
    m: Mutex<u64>,
    cv: Condvar,
}
impl Waker for CvWaker {
    fn wake(&self) {
        *self.m.lock() += 1;
        self.cv.notify_all();
    }
}

// ---- a test endpoint ---------------------------------------------------------------------------

pub const T: Duration = Duration::from_secs(10);

pub struct Cq {
    pub cq: Arc<dyn CompletionQueue>,
    pub w: Arc<CvWaker>,
}

impl Cq {
    pub fn new(dev: &Arc<dyn Device>) -> Cq {
        let w = Arc::new(CvWaker { m: Mutex::new(0), cv: Condvar::new() });
        Cq { cq: dev.create_cq(4096, w.clone()).unwrap(), w }
    }
    pub fn poll(&self) -> Option<WorkCompletion> {
        let mut out = [WorkCompletion::EMPTY; 1];
        (self.cq.poll(&mut out) == 1).then_some(out[0])
    }
    pub fn wait(&self, d: Duration) -> Option<WorkCompletion> {
        let end = Instant::now() + d;
        loop {
            if let Some(wc) = self.poll() {
                return Some(wc);
            }
            let mut g = self.w.m.lock();
            if Instant::now() >= end {
                return None;
            }
            self.w.cv.wait_for(&mut g, Duration::from_millis(5));
        }
    }
    pub fn expect(&self) -> WorkCompletion {
        self.wait(T).expect("completion timed out")
    }
}

pub struct Buf {
    pub mem: Vec<u8>,
    pub mr: Arc<dyn MemoryRegion>,
}

impl Buf {
    pub fn new(pd: &Arc<dyn ProtectionDomain>, len: usize, access: Access) -> Buf {
        let mem = vec![0u8; len];
        let mr = pd.reg_mr(mem.as_ptr() as u64, len as u64, access).unwrap();
        Buf { mem, mr }
    }
    pub fn addr(&self) -> u64 {
        self.mem.as_ptr() as u64
    }
    pub fn sge(&self, off: usize, len: usize) -> Sge {
        Sge { addr: self.addr() + off as u64, length: len as u32, lkey: self.mr.lkey() }
    }
    pub fn bytes(&self) -> &[u8] {
        // Read through a volatile-ish barrier: the provider wrote behind the compiler's back.
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        &self.mem
    }
    /// Offset of the first 8-byte aligned byte at or after `off`.
    pub fn aligned(&self, off: usize) -> usize {
        off + (8 - (self.addr() as usize + off) % 8) % 8
    }
    pub fn word(&self, off: usize) -> u64 {
        u64::from_ne_bytes(self.bytes()[off..off + 8].try_into().unwrap())
    }
    pub fn set_word(&mut self, off: usize, v: u64) {
        self.mem[off..off + 8].copy_from_slice(&v.to_ne_bytes());
    }
    pub fn fill(&mut self, f: impl Fn(usize) -> u8) {
        for (i, b) in self.mem.iter_mut().enumerate() {
            *b = f(i);
        }
    }
}

pub const ALL: Access =
    Access { local_read: true, local_write: true, remote_read: true, remote_write: true, remote_atomic: true };

/// The queue-pair context of an [`Ep`] made without one.
pub const CONTEXT: u64 = 0xc0ffee;

pub struct Ep {
    pub dev: Arc<dyn Device>,
    pub pd: Arc<dyn ProtectionDomain>,
    pub scq: Cq,
    pub rcq: Cq,
    pub qp: Arc<dyn QueuePair>,
    pub ev: Arc<Q<(ConnEvent, Vec<u8>)>>,
    pub ud_ev: Arc<Q<UdOutcome>>,
}

pub fn open() -> Arc<dyn Device> {
    open_with(Arc::new(NoAsync))
}

/// The shm device, its asynchronous errors going to `events`.
pub fn open_with(events: Arc<dyn AsyncEvents>) -> Arc<dyn Device> {
    if std::env::var_os("SHM_TRACE").is_some() {
        let _ = tracing_subscriber::fmt().with_max_level(tracing::Level::DEBUG).with_writer(std::io::stderr).try_init();
    }
    ShmProvider::new().open("shm", "", events).unwrap()
}

impl Ep {
    pub fn new(dev: &Arc<dyn Device>) -> Ep {
        let pd = dev.alloc_pd().unwrap();
        Ep::with_pd(dev, pd, None)
    }
    pub fn with_pd(
        dev: &Arc<dyn Device>,
        pd: Arc<dyn ProtectionDomain>,
        srq: Option<Arc<dyn SharedReceiveQueue>>,
    ) -> Ep {
        Ep::make(dev, pd, srq, false, CONTEXT)
    }
    /// An endpoint whose queue pair has context `context` (others: [`CONTEXT`]).
    pub fn with_context(dev: &Arc<dyn Device>, context: u64) -> Ep {
        Ep::make(dev, dev.alloc_pd().unwrap(), None, false, context)
    }
    /// An unreliable datagram endpoint.
    pub fn ud(dev: &Arc<dyn Device>) -> Ep {
        Ep::make(dev, dev.alloc_pd().unwrap(), None, true, CONTEXT)
    }
    pub fn make(
        dev: &Arc<dyn Device>,
        pd: Arc<dyn ProtectionDomain>,
        srq: Option<Arc<dyn SharedReceiveQueue>>,
        datagram: bool,
        context: u64,
    ) -> Ep {
        let scq = Cq::new(dev);
        let rcq = Cq::new(dev);
        let (ev, ud_ev) = (Q::new(), Q::new());
        let qp = dev
            .create_qp(QpInit {
                pd: pd.clone(),
                send_cq: Some(scq.cq.clone()),
                recv_cq: Some(rcq.cq.clone()),
                srq,
                caps: QpCaps {
                    max_send_wr: 256,
                    max_recv_wr: 256,
                    max_send_sge: 8,
                    max_recv_sge: 8,
                    max_rdma_read_in: 8,
                    max_rdma_read_out: 8,
                },
                context,
                events: Arc::new(ConnQ(ev.clone(), ud_ev.clone())),
                datagram,
            })
            .unwrap();
        Ep { dev: dev.clone(), pd, scq, rcq, qp, ev, ud_ev }
    }
    pub fn event(&self) -> (ConnEvent, Vec<u8>) {
        self.ev.wait(T).expect("connection event timed out")
    }
    pub fn ud_event(&self) -> UdOutcome {
        self.ud_ev.wait(T).expect("UD connection event timed out")
    }
    /// Sends `data` (from `b`) as one datagram to `peer` and expects its completion.
    pub fn send_ud(&self, wr_id: u64, b: &mut Buf, data: &[u8], peer: UdPeer) {
        b.mem[..data.len()].copy_from_slice(data);
        let wr = SendWr {
            wr_id,
            op: SendOp::Send,
            sges: &[b.sge(0, data.len())],
            signaled: true,
            solicited: false,
            fence: false,
        };
        self.qp.post_send_ud(&wr, peer).unwrap();
        let wc = self.scq.expect();
        assert_eq!(
            (wc.wr_id, wc.status, wc.opcode, wc.byte_len),
            (wr_id, WcStatus::Success, WcOpcode::SendUd, data.len() as u64)
        );
    }
    /// Expects the next receive: a datagram of `data` from queue pair `src_qpn`, placed after the
    /// header slot of receive buffer `b` (whose slot bytes stay as they were).
    pub fn expect_ud(&self, wr_id: u64, b: &Buf, data: &[u8], src_qpn: u32) {
        let wc = self.rcq.expect();
        let want = (wr_id, WcStatus::Success, WcOpcode::RecvUd, UD_HEADER_LEN + data.len() as u64, src_qpn);
        assert_eq!((wc.wr_id, wc.status, wc.opcode, wc.byte_len, wc.immed), want);
        let h = UD_HEADER_LEN as usize;
        assert_eq!(&b.bytes()[h..h + data.len()], data);
        assert!(b.bytes()[..h].iter().all(|&x| x == 0xee), "header slot left alone");
    }
    pub fn send(&self, wr_id: u64, sges: &[Sge]) {
        self.qp
            .post_send(&SendWr { wr_id, op: SendOp::Send, sges, signaled: true, solicited: false, fence: false })
            .unwrap();
    }
    pub fn op(&self, wr_id: u64, op: SendOp, sges: &[Sge], signaled: bool) -> DatResult<()> {
        self.qp.post_send(&SendWr { wr_id, op, sges, signaled, solicited: false, fence: false })
    }
}

pub fn local() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

pub fn port(n: u64) -> u64 {
    0x5000_0000 + (std::process::id() as u64 % 100_000) * 100 + n
}

// ---- the peer process ---------------------------------------------------------------------------

pub fn spawn(role: &str, port: u64, extra: &[(&str, &str)]) -> Child {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "peer_main", "--ignored", "--nocapture", "--test-threads=1"])
        .env("SHM_PEER_ROLE", role)
        .env("SHM_PEER_PORT", port.to_string());
    for (k, v) in extra {
        c.env(k, v);
    }
    c.spawn().unwrap()
}

pub fn wait_child(mut c: Child) {
    let end = Instant::now() + T;
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            assert!(s.success(), "peer failed: {s:?}");
            return;
        }
        if Instant::now() > end {
            let _ = c.kill();
            panic!("peer did not exit");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Listens on `p`, starts peer `role`, and accepts its connection (with private data `pd`).
pub fn accept_one(
    dev: &Arc<dyn Device>,
    p: u64,
    ep: &Ep,
    pd: &[u8],
    role: &str,
    extra: &[(&str, &str)],
) -> (Arc<dyn Listener>, Vec<u8>, Child) {
    let crs = Q::new();
    let l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    let child = spawn(role, p, extra);
    let req = crs.wait(T).expect("no connect request");
    let data = req.private_data().to_vec();
    assert_eq!(req.port(), p);
    assert!(req.remote_address().ip().is_loopback());
    ep.qp.accept(&req, pd).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Established);
    (l, data, child)
}

/// Sends `words` (little endian) from a fresh buffer and waits for the send to complete.
pub fn send_words(ep: &Ep, wr_id: u64, words: &[u64]) {
    let mut b = Buf::new(&ep.pd, words.len() * 8, ALL);
    for (i, w) in words.iter().enumerate() {
        b.mem[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    ep.send(wr_id, &[b.sge(0, words.len() * 8)]);
    let wc = ep.scq.expect();
    assert_eq!((wc.wr_id, wc.status), (wr_id, WcStatus::Success));
}

/// Receives `n` little-endian words into a fresh buffer.
pub fn recv_words(ep: &Ep, wr_id: u64, n: usize) -> Vec<u64> {
    let b = Buf::new(&ep.pd, n * 8, ALL);
    ep.qp.post_recv(wr_id, &[b.sge(0, n * 8)]).unwrap();
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.opcode), (wr_id, WcStatus::Success, WcOpcode::Recv));
    (0..n).map(|i| u64::from_le_bytes(b.bytes()[i * 8..i * 8 + 8].try_into().unwrap())).collect()
}
