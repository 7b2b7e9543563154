//! shm, end to end: a raw peer (`datcore::provider::shm::raw_peer`) connected to an endpoint
//! of this process writes the input's records into its request ring, as they are, and may
//! then send a socket message (a disconnect, a doorbell, anything); the endpoint executes
//! them as it executes any peer's. Its memory: a registered region with every right, one
//! with local rights only, and guard bytes around both, which must never change; the
//! endpoint must not crash or hang, and a connection it breaks is made again.
//!
//! Input: first how a connection is made when one is to be made: the raw peer connects to the
//! endpoint's listener, or the endpoint connects to the raw peer's, which accepts with a
//! segment whose ring index words it set (up to two, from the input) and with its files sealed
//! or not. Then
//! records, each a kind selector, flags, a length and that many payload bytes; an operation
//! header's rkey below 4 names one of the endpoint's keys and an address below 1 MiB is an
//! offset from the start of the first region (so that valid requests are easy to make).
//! Then an optional socket message.
#![no_main]

use datcore::provider::shm::raw_peer::{Files, Preset, RawListener, RawPeer};
use datcore::provider::shm::ShmProvider;
use datcore::provider::*;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Events(Mutex<Vec<ConnEvent>>);
impl ConnectionEvents for Events {
    fn event(&self, ev: ConnEvent, _: &[u8]) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(ev);
    }
    fn ud_event(&self, _: &UdExchange<'_>) {}
}

struct Requests(Mutex<Vec<Arc<dyn ConnectionRequest>>>);
impl ListenerEvents for Requests {
    fn connect_request(&self, req: Arc<dyn ConnectionRequest>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(req);
    }
}

struct Quiet;
impl AsyncEvents for Quiet {
    fn async_error(&self, _: AsyncError) {}
}
impl Waker for Quiet {
    fn wake(&self) {}
}

const ALL: Access =
    Access { local_read: true, local_write: true, remote_read: true, remote_write: true, remote_atomic: true };
const LOCAL: Access =
    Access { local_read: true, local_write: true, remote_read: false, remote_write: false, remote_atomic: false };
const PAGE: usize = 4096;
const GUARD: u8 = 0x5a;
/// Receives kept posted.
const RECEIVES: u64 = 32;

/// The endpoint's side: device, listener, memory (guard, region with every right, guard,
/// region with local rights, guard).
struct Victim {
    dev: Arc<dyn Device>,
    pd: Arc<dyn ProtectionDomain>,
    port: u64,
    requests: Arc<Requests>,
    _listener: Arc<dyn Listener>,
    /// The raw peer's listener (on `port + 1`).
    raw_listener: Arc<RawListener>,
    mem: Vec<u8>,
    open: Arc<dyn MemoryRegion>,
    local: Arc<dyn MemoryRegion>,
}

impl Victim {
    fn new() -> Victim {
        let dev = ShmProvider::new().open("shm", "", Arc::new(Quiet)).expect("the shm device");
        let pd = dev.alloc_pd().expect("a protection domain");
        let port = 0x6600_0000 + u64::from(std::process::id());
        let requests = Arc::new(Requests(Mutex::new(Vec::new())));
        let listener = dev.listen(port, requests.clone()).expect("a listener");
        let raw_listener = Arc::new(RawListener::listen(port + 1).expect("the raw peer's listener"));
        let mem = vec![GUARD; 5 * PAGE];
        let base = mem.as_ptr() as u64;
        let open = pd.reg_mr(base + PAGE as u64, PAGE as u64, ALL).expect("a region");
        let local = pd.reg_mr(base + 3 * PAGE as u64, PAGE as u64, LOCAL).expect("a region");
        Victim { dev, pd, port, requests, _listener: listener, raw_listener, mem, open, local }
    }

    /// The guard pages and the region without remote rights are as they were.
    fn untouched(&self) -> bool {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        let m = &self.mem;
        [0..PAGE, 2 * PAGE..5 * PAGE].into_iter().all(|r| m[r].iter().all(|&b| b == GUARD))
    }
}

/// A connection of the raw peer to an endpoint of the victim.
struct Link {
    peer: RawPeer,
    qp: Arc<dyn QueuePair>,
    rcq: Arc<dyn CompletionQueue>,
    scq: Arc<dyn CompletionQueue>,
    events: Arc<Events>,
    posted: u64,
}

impl Link {
    /// A connection made as the input says (None: the endpoint refused it, or the raw peer
    /// could not complete it).
    fn new(v: &Victim, how: &How) -> Option<Link> {
        let (rcq, scq) =
            (v.dev.create_cq(256, Arc::new(Quiet)).unwrap(), v.dev.create_cq(256, Arc::new(Quiet)).unwrap());
        let events = Arc::new(Events(Mutex::new(Vec::new())));
        let qp = v
            .dev
            .create_qp(QpInit {
                pd: v.pd.clone(),
                send_cq: Some(scq.clone()),
                recv_cq: Some(rcq.clone()),
                srq: None,
                caps: QpCaps {
                    max_send_wr: 64,
                    max_recv_wr: RECEIVES as u32,
                    max_send_sge: 4,
                    max_recv_sge: 4,
                    max_rdma_read_in: 8,
                    max_rdma_read_out: 8,
                },
                context: 1,
                events: events.clone(),
                datagram: false,
            })
            .expect("a queue pair");
        let peer = if !how.active {
            let port = v.port;
            let peer = std::thread::spawn(move || RawPeer::connect(port, Files::default(), Duration::from_secs(5)));
            let end = Instant::now() + Duration::from_secs(5);
            let req = loop {
                if let Some(r) = v.requests.0.lock().unwrap_or_else(|e| e.into_inner()).pop() {
                    break r;
                }
                assert!(Instant::now() < end, "no connect request from the raw peer");
                std::thread::sleep(Duration::from_micros(50));
            };
            qp.accept(&req, b"").expect("accept");
            peer.join().expect("the raw peer's thread").expect("the raw peer's connect")
        } else {
            let (files, preset) = (how.files, how.preset.clone());
            let l = v.raw_listener.clone();
            let peer = std::thread::spawn(move || l.accept(files, &preset, Duration::from_secs(5)));
            let peer_addr = "127.0.0.1:0".parse().expect("an address");
            qp.connect(peer_addr, v.port + 1, b"", Some(Duration::from_secs(5))).expect("connect");
            match peer.join().expect("the raw peer's thread") {
                Ok(p) => p,
                Err(_) => {
                    let _ = qp.disconnect(false);
                    return None;
                }
            }
        };
        let mut link = Link { peer, qp, rcq, scq, events, posted: 0 };
        link.repost(v);
        Some(link)
    }

    /// Takes the completions and posts receives again (into the region with every right).
    fn repost(&mut self, v: &Victim) {
        let mut wc = [WorkCompletion::EMPTY; 16];
        while self.scq.poll(&mut wc) > 0 {}
        loop {
            let n = self.rcq.poll(&mut wc);
            if n == 0 {
                break;
            }
            self.posted -= n as u64;
        }
        let sge = Sge { addr: v.open.addr(), length: PAGE as u32, lkey: v.open.lkey() };
        while self.posted < RECEIVES && self.qp.post_recv(self.posted, &[sge]).is_ok() {
            self.posted += 1;
        }
    }

    fn ended(&self) -> bool {
        !self.events.0.lock().unwrap_or_else(|e| e.into_inner()).iter().all(|&e| e == ConnEvent::Established)
    }
}

/// How a connection is made.
struct How {
    /// The endpoint connects (else the raw peer does).
    active: bool,
    files: Files,
    preset: Vec<Preset>,
}

impl How {
    fn parse(i: &mut Input) -> How {
        let mode = i.u8();
        let preset = (0..(mode >> 3) % 3)
            .map(|_| {
                let f = i.u8();
                let value = u64::from_le_bytes(i.take(8).try_into().unwrap_or_default());
                Preset { producer_side: usize::from(f & 1), response: f & 2 != 0, head: f & 4 != 0, value }
            })
            .collect();
        How {
            active: mode & 1 != 0,
            files: Files { unsealed_area: mode & 2 != 0, unsealed_segment: mode & 4 != 0 },
            preset,
        }
    }
}

struct State {
    victim: Victim,
    link: Option<Link>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The input as a stream of values (zeros once it runs out).
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }
    fn u8(&mut self) -> u8 {
        self.take(1).first().copied().unwrap_or(0)
    }
}

const KINDS: [u16; 8] = [1, 2, 3, 4, 5, 16, 17, 0];

/// Points an operation header's small rkey at one of the victim's keys and its small address
/// into the victim's memory.
fn aim(v: &Victim, payload: &mut [u8]) {
    if payload.len() < 32 {
        return;
    }
    let addr = u64::from_le_bytes(payload[8..16].try_into().unwrap_or_default());
    if addr < 1 << 20 {
        payload[8..16].copy_from_slice(&(v.open.addr().wrapping_add(addr)).to_le_bytes());
    }
    let rkey = u32::from_le_bytes(payload[16..20].try_into().unwrap_or_default());
    let keys = [v.open.rkey(), v.local.rkey(), v.open.lkey(), 0];
    if let Some(&k) = keys.get(rkey as usize) {
        payload[16..20].copy_from_slice(&k.to_le_bytes());
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let st = guard.get_or_insert_with(|| State { victim: Victim::new(), link: None });
    let v = &st.victim;
    let mut i = Input(data);
    let how = How::parse(&mut i);
    if st.link.is_none() {
        st.link = Link::new(v, &how);
    }
    let Some(link) = st.link.as_mut() else { return };
    let mut records = 0;
    while i.0.len() >= 4 && records < 16 {
        let kind = KINDS[(i.u8() & 7) as usize];
        let flags = u16::from(i.u8() & 0x0f);
        let len = u16::from_le_bytes([i.u8(), i.u8()]) as usize % 256;
        let mut payload = i.take(len).to_vec();
        aim(v, &mut payload);
        if !matches!(link.peer.push_record(kind, flags, &payload), Ok(true)) {
            break;
        }
        records += 1;
    }
    if !i.0.is_empty() {
        let _ = link.peer.send_message(i.0);
    }
    // Until the victim took every record or ended the connection.
    let end = Instant::now() + Duration::from_millis(200);
    loop {
        while link.peer.next_response(Duration::ZERO).is_ok() {}
        if link.ended() || link.peer.closed_by_other(Duration::ZERO) || !matches!(link.peer.drained(), Ok(false)) {
            break;
        }
        if Instant::now() > end {
            break;
        }
        std::thread::yield_now();
    }
    assert!(v.untouched(), "the peer changed memory it has no right to");
    let done = link.ended() || !matches!(link.peer.drained(), Ok(true));
    if done {
        let _ = link.qp.disconnect(false);
        st.link = None;
    } else {
        link.repost(v);
    }
});
