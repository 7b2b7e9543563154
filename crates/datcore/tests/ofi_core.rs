//! The `ofi` provider through the DAT core, on each of `ofi-tcp-lo` (libfabric's tcp,
//! `FI_EP_MSG`), `ofi-tcp_rxm-lo` (tcp under rxm, `FI_EP_RDM`) and `ofi-shm` (libfabric's shm,
//! `FI_EP_RDM`) that libfabric offers: IA names, PSP errors, EPs connected within one process,
//! send/recv (receives posted before the connection, several segments), RDMA write/read,
//! private data, a consumer's reject and a connect nobody listens for, disconnect flushing
//! posted work, reset and reconnect, a consumer sleeping in `dat_evd_wait`, and a peer process
//! killed (BROKEN, posted work flushed); and on `ofi-tcp-lo`, Intel MPI's eager protocol (RDMA
//! writes into rings both sides spin on).
//!
//! A test passes with "skipped: ..." for a name libfabric does not offer. `OFI_IA` picks one
//! IA name instead.

use datcore::codes::*;
use datcore::endpoint::{Endpoint, EpCreate};
use datcore::evd::EventDispatcher;
use datcore::event::{Event, EventData};
use datcore::handle::{self, Handle};
use datcore::ia::InterfaceAdapter;
use datcore::lmr::LocalMemoryRegion;
use datcore::provider::ofi::OfiProvider;
use datcore::provider::{Provider, SendOp, Sge};
use datcore::pz::ProtectionZone;
use datcore::service_point;
use std::net::SocketAddr;
use std::sync::Arc;

const WAIT_US: u32 = 20_000_000;

fn provider() -> Arc<dyn Provider> {
    datcore::log::init();
    Arc::new(OfiProvider::new())
}

/// Connection qualifier `q` for the IA `name`: each name its own range, so that a port or shm
/// region one name's test just freed is not the next name's.
fn qual(name: &str, q: u64) -> u64 {
    q + match name {
        "ofi-tcp_rxm-lo" => 100,
        "ofi-shm" => 200,
        _ => 0,
    }
}

/// Runs `test` on each IA name to test that libfabric offers.
fn on_each_ia(test: impl Fn(&str)) {
    let wanted: Vec<String> = match std::env::var("OFI_IA") {
        Ok(n) => vec![n],
        Err(_) => ["ofi-tcp-lo", "ofi-tcp_rxm-lo", "ofi-shm"].map(String::from).to_vec(),
    };
    let names = provider().ia_names();
    for want in wanted {
        if names.contains(&want) {
            eprintln!("on {want}");
            test(&want);
        } else {
            eprintln!("skipped: {want} not offered by libfabric (offered: {names:?})");
        }
    }
}

struct Ia {
    ia: Arc<InterfaceAdapter>,
    pz: Handle,
    cr_evd: Arc<EventDispatcher>,
    addr: SocketAddr,
}

fn open(name: &str) -> Ia {
    let (_h, ia, _aevd) = InterfaceAdapter::open(&provider(), name, "", 16, Handle::NULL).expect("open IA");
    let pz = ProtectionZone::create(&ia).expect("pz");
    let (_, cr_evd) = EventDispatcher::create(&ia, 16, None, DAT_EVD_CR_FLAG).expect("cr evd");
    let addr = ia.device.address();
    Ia { ia, pz, cr_evd, addr }
}

struct Ep {
    h: Handle,
    ep: Arc<Endpoint>,
    recv: Arc<EventDispatcher>,
    req: Arc<EventDispatcher>,
    conn: Arc<EventDispatcher>,
}

fn ep(ia: &Ia) -> Ep {
    let dto = || EventDispatcher::create(&ia.ia, 256, None, DAT_EVD_DTO_FLAG).expect("dto evd").1;
    let (recv, req) = (dto(), dto());
    let (ch, conn) = EventDispatcher::create(&ia.ia, 16, None, DAT_EVD_CONNECTION_FLAG).expect("conn evd");
    let (h, ep) = Endpoint::create(
        &ia.ia,
        &EpCreate {
            pz: ia.pz,
            recv_evd: recv.handle(),
            request_evd: req.handle(),
            connect_evd: ch,
            srq: Handle::NULL,
            attr: None,
        },
    )
    .expect("ep");
    Ep { h, ep, recv, req, conn }
}

fn wait(evd: &EventDispatcher, what: &str) -> Event {
    match evd.wait(WAIT_US, 1) {
        Ok((e, _)) => e,
        Err(e) => panic!("waiting for {what}: {e:?}"),
    }
}

fn dto(evd: &EventDispatcher, what: &str) -> (u64, u32, u64) {
    let e = wait(evd, what);
    match e.data {
        EventData::Dto { cookie, status, length, .. } => (cookie, status, length),
        d => panic!("{what}: expected a DTO event, got {:#x} {d:?}", e.number),
    }
}

struct Buf {
    mem: Vec<u8>,
    lkey: u32,
    rkey: u32,
}

impl Buf {
    fn new(ia: &Ia, len: usize, fill: u8) -> Buf {
        let mem = vec![fill; len];
        let r = LocalMemoryRegion::create(
            &ia.ia,
            ia.pz,
            DAT_MEM_TYPE_VIRTUAL,
            mem.as_ptr() as u64,
            len as u64,
            DAT_MEM_PRIV_ALL_FLAG,
        )
        .expect("lmr");
        Buf { mem, lkey: r.lmr_context, rkey: r.rmr_context }
    }
    fn sge(&self, off: usize, len: usize) -> Sge {
        Sge { addr: self.mem.as_ptr() as u64 + off as u64, length: len as u32, lkey: self.lkey }
    }
    fn addr(&self) -> u64 {
        self.mem.as_ptr() as u64
    }
}

/// Connects `c` to `s` through a PSP on `port`; returns the server's view of the private data
/// and the client's of the accept's.
fn connect(ia: &Ia, c: &Ep, s: &Ep, port: u64, pd: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let psp = service_point::create_psp(&ia.ia, port, ia.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).expect("psp");
    c.ep.connect(ia.addr, port, WAIT_US, pd).expect("connect");
    let e = wait(&ia.cr_evd, "connection request");
    let EventData::ConnectionRequest { cr, conn_qual, .. } = e.data else { panic!("expected a CR, got {e:?}") };
    assert_eq!(conn_qual, port);
    let req = handle::get::<service_point::ConnectionRequest>(cr, 0).expect("cr");
    let got = req.request.private_data().to_vec();
    service_point::accept(cr, s.h, b"accept-pd").expect("accept");
    let mut accept_pd = Vec::new();
    for (who, ep) in [("server", s), ("client", c)] {
        let e = wait(&ep.conn, "established");
        assert_eq!(e.number, DAT_CONNECTION_EVENT_ESTABLISHED, "{who}: {e:?}");
        if who == "client" {
            let EventData::Connection { private_data_size, private_data, .. } = e.data else { panic!("{e:?}") };
            // SAFETY: the event's private data lives in the EP, which is alive.
            accept_pd = unsafe { std::slice::from_raw_parts(private_data, private_data_size as usize) }.to_vec();
        }
    }
    service_point::free_psp(psp).expect("free psp");
    (got, accept_pd)
}

#[test]
fn ofi_names_and_psp_errors() {
    on_each_ia(ofi_names_and_psp_errors_on);
}

fn ofi_names_and_psp_errors_on(name: &str) {
    let ia = open(name);
    assert_eq!(ia.addr.ip(), std::net::Ipv4Addr::LOCALHOST);
    assert!(ia.ia.device.attr().max_private_data >= 64);
    let e = service_point::create_psp(&ia.ia, 1 << 20, ia.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).unwrap_err();
    assert_eq!(e.ty(), DAT_INVALID_PARAMETER);
    let psp =
        service_point::create_psp(&ia.ia, qual(name, 21001), ia.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).expect("psp");
    let ia2 = open(name);
    let e =
        service_point::create_psp(&ia2.ia, qual(name, 21001), ia2.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).unwrap_err();
    assert_eq!(e.ty(), DAT_CONN_QUAL_IN_USE);
    service_point::free_psp(psp).unwrap();
    let e = provider().open("ofi-nosuch-dev", "", Arc::new(NoAsync)).err().expect("unknown name must fail");
    assert_eq!(e.ty(), DAT_PROVIDER_NOT_FOUND);
}

/// A qualifier listened on again in one process, after its first PSP was freed, connects
/// (libfabric's shm would reach the second PSP through the first one's freed region were they
/// named alike; rxm's port must be free again when the free returns).
#[test]
fn ofi_a_qualifier_listened_on_again_connects() {
    on_each_ia(ofi_a_qualifier_listened_on_again_connects_on);
}

fn ofi_a_qualifier_listened_on_again_connects_on(name: &str) {
    let port = qual(name, 21051);
    for round in 0..2 {
        let ia = open(name);
        let (c, s) = (ep(&ia), ep(&ia));
        let (got, _) = connect(&ia, &c, &s, port, b"again");
        assert_eq!(got, b"again", "round {round}");
    }
}

struct NoAsync;
impl datcore::provider::AsyncEvents for NoAsync {
    fn async_error(&self, err: datcore::provider::AsyncError) {
        eprintln!("async error {err:?}");
    }
}

#[test]
fn ofi_send_recv_rdma() {
    on_each_ia(ofi_send_recv_rdma_on);
}

fn ofi_send_recv_rdma_on(name: &str) {
    let ia = open(name);
    let (c, s) = (ep(&ia), ep(&ia));
    let sbuf = Buf::new(&ia, 1 << 16, 0);
    let cbuf = Buf::new(&ia, 1 << 16, 0xab);
    // Receives posted before the connection exists (held until the endpoint is made).
    for i in 0..4u64 {
        s.ep.post_recv(&[sbuf.sge(i as usize * 4096, 4096)], 100 + i, 0).expect("post recv");
    }
    let (pd, apd) = connect(&ia, &c, &s, qual(name, 21002), b"hello-private");
    assert_eq!(pd, b"hello-private");
    assert_eq!(apd, b"accept-pd");
    for i in 0..4u64 {
        c.ep.post_request(SendOp::Send, &[cbuf.sge(0, 1000 + i as usize)], 7 + i, 0).expect("send");
    }
    for i in 0..4u64 {
        assert_eq!(dto(&s.recv, "recv"), (100 + i, DAT_DTO_SUCCESS, 1000 + i));
        let (cookie, st, _) = dto(&c.req, "send completion");
        assert_eq!((cookie, st), (7 + i, DAT_DTO_SUCCESS));
    }
    assert!(sbuf.mem[..1000].iter().all(|&b| b == 0xab));
    // RDMA write into the server buffer, then read it back into another client region.
    let cwr = Buf::new(&ia, 8192, 0x5a);
    c.ep.post_request(
        SendOp::RdmaWrite { remote_addr: sbuf.addr() + 32768, rkey: sbuf.rkey },
        &[cwr.sge(0, 8192)],
        1,
        0,
    )
    .expect("rdma write");
    assert_eq!(dto(&c.req, "write"), (1, DAT_DTO_SUCCESS, 8192));
    let crd = Buf::new(&ia, 8192, 0);
    c.ep.post_request(
        SendOp::RdmaRead { remote_addr: sbuf.addr() + 32768, rkey: sbuf.rkey },
        &[crd.sge(0, 8192)],
        2,
        0,
    )
    .expect("rdma read");
    assert_eq!(dto(&c.req, "read"), (2, DAT_DTO_SUCCESS, 8192));
    assert!(crd.mem.iter().all(|&b| b == 0x5a));
    // A write completes once sent (as on iWARP); the read behind it saw it placed.
    assert!(sbuf.mem[32768..32768 + 8192].iter().all(|&b| b == 0x5a));
    // Several segments each way.
    s.ep.post_recv(&[sbuf.sge(0, 100), sbuf.sge(200, 100)], 55, 0).unwrap();
    c.ep.post_request(SendOp::Send, &[cwr.sge(0, 50), crd.sge(0, 100)], 56, 0).unwrap();
    assert_eq!(dto(&s.recv, "sg recv"), (55, DAT_DTO_SUCCESS, 150));
    assert_eq!(dto(&c.req, "sg send").0, 56);
    // No memory windows: RMR creation says the model lacks them.
    let e = datcore::rmr::RemoteMemoryRegion::create(ia.pz).map(|_| ()).expect_err("no RMRs on ofi");
    assert_eq!(e.ty(), DAT_MODEL_NOT_SUPPORTED);
    // Disconnect: outstanding receives on both sides flush.
    s.ep.post_recv(&[sbuf.sge(0, 64)], 900, 0).unwrap();
    c.ep.post_recv(&[cbuf.sge(0, 64)], 901, 0).unwrap();
    c.ep.disconnect(false).expect("disconnect");
    for (who, e) in [("client", &c), ("server", &s)] {
        let ev = wait(&e.conn, "disconnected");
        assert_eq!(ev.number, DAT_CONNECTION_EVENT_DISCONNECTED, "{who}: {ev:?}");
    }
    assert_eq!(dto(&s.recv, "server flush"), (900, DAT_DTO_ERR_FLUSHED, 0));
    assert_eq!(dto(&c.recv, "client flush"), (901, DAT_DTO_ERR_FLUSHED, 0));
    // Reset and reconnect.
    c.ep.reset().expect("reset");
    s.ep.reset().expect("reset");
    s.ep.post_recv(&[sbuf.sge(0, 64)], 1000, 0).unwrap();
    connect(&ia, &c, &s, qual(name, 21003), b"");
    c.ep.post_request(SendOp::Send, &[cbuf.sge(0, 8)], 1001, 0).unwrap();
    assert_eq!(dto(&s.recv, "recv after reconnect"), (1000, DAT_DTO_SUCCESS, 8));
    assert_eq!(dto(&c.req, "send after reconnect").0, 1001);
    s.ep.disconnect(true).expect("graceful disconnect");
    for e in [&c, &s] {
        assert_eq!(wait(&e.conn, "disconnected").number, DAT_CONNECTION_EVENT_DISCONNECTED);
    }
}

/// Receives posted while the peer's shutdown is on its way (libfabric's progress, in the
/// consumer's own poll, ended the endpoint, and the CM thread has not read the event yet) are
/// flushed like those posted before: each completes once, as flushed, in the order posted.
/// (libfabric keeps a receive posted to an ended endpoint until the endpoint is closed.)
#[test]
fn ofi_receives_posted_as_the_peer_shuts_down_are_flushed() {
    on_each_ia(ofi_receives_posted_as_the_peer_shuts_down_are_flushed_on);
}

fn ofi_receives_posted_as_the_peer_shuts_down_are_flushed_on(name: &str) {
    let ia = open(name);
    let cbuf = Buf::new(&ia, 4096, 0);
    for round in 0..5u16 {
        let (c, s) = (ep(&ia), ep(&ia));
        connect(&ia, &c, &s, qual(name, 21010) + u64::from(round), b"");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut posted = 0u64;
        let mut done = Vec::new();
        let take = |done: &mut Vec<(u64, u32)>| {
            while let Ok(ev) = c.recv.dequeue() {
                let EventData::Dto { cookie, status, .. } = ev.data else { panic!("{ev:?}") };
                done.push((cookie, status));
            }
        };
        s.ep.disconnect(false).expect("disconnect");
        // Post and poll (which drives libfabric's progress) until the disconnect arrives.
        let ev = loop {
            if let Ok(ev) = c.conn.dequeue() {
                break ev;
            }
            if c.ep.post_recv(&[cbuf.sge(0, 64)], posted, 0).is_ok() {
                posted += 1;
            }
            take(&mut done);
            assert!(std::time::Instant::now() < deadline, "round {round}: no disconnect");
        };
        assert_eq!(ev.number, DAT_CONNECTION_EVENT_DISCONNECTED, "round {round}");
        while done.len() < posted as usize && std::time::Instant::now() < deadline {
            take(&mut done);
        }
        let want: Vec<(u64, u32)> = (0..posted).map(|i| (i, DAT_DTO_ERR_FLUSHED)).collect();
        assert_eq!(done, want, "round {round}: {posted} receives posted");
        assert_eq!(wait(&s.conn, "server disconnected").number, DAT_CONNECTION_EVENT_DISCONNECTED);
    }
}

/// A consumer that sleeps in `dat_evd_wait` before the message is sent is woken by its arrival
/// (the CQ's wait fd), many times over.
#[test]
fn ofi_wait_wakes_on_arrival() {
    on_each_ia(ofi_wait_wakes_on_arrival_on);
}

fn ofi_wait_wakes_on_arrival_on(name: &str) {
    let ia = open(name);
    let (c, s) = (ep(&ia), ep(&ia));
    let sbuf = Buf::new(&ia, 4096, 0);
    let cbuf = Buf::new(&ia, 4096, 1);
    connect(&ia, &c, &s, qual(name, 21004), b"");
    let rounds = 200u64;
    let (sep, srecv) = (s.ep.clone(), s.recv.clone());
    let sge = sbuf.sge(0, 64);
    let (posted_tx, posted) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        for i in 0..rounds {
            sep.post_recv(&[sge], i, 0).unwrap();
            posted_tx.send(()).unwrap();
            assert_eq!(dto(&srecv, "woken recv"), (i, DAT_DTO_SUCCESS, 8));
        }
    });
    for i in 0..rounds {
        posted.recv().unwrap();
        // Give the receiver time to fall asleep now and then.
        if i % 10 == 0 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        c.ep.post_request(SendOp::Send, &[cbuf.sge(0, 8)], i, 0).unwrap();
        assert_eq!(dto(&c.req, "send").0, i);
    }
    waiter.join().unwrap();
    c.ep.disconnect(false).unwrap();
}

#[test]
fn ofi_reject_and_no_listener() {
    on_each_ia(ofi_reject_and_no_listener_on);
}

fn ofi_reject_and_no_listener_on(name: &str) {
    let ia = open(name);
    let c = ep(&ia);
    let b = Buf::new(&ia, 64, 0);
    c.ep.post_recv(&[b.sge(0, 64)], 5, 0).unwrap();
    let psp = service_point::create_psp(&ia.ia, qual(name, 21005), ia.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).unwrap();
    c.ep.connect(ia.addr, qual(name, 21005), WAIT_US, b"please").unwrap();
    let e = wait(&ia.cr_evd, "cr");
    let EventData::ConnectionRequest { cr, .. } = e.data else { panic!("{e:?}") };
    service_point::reject(cr, b"busy").expect("reject");
    let e = wait(&c.conn, "rejected");
    assert_eq!(e.number, DAT_CONNECTION_EVENT_PEER_REJECTED, "{e:?}");
    let EventData::Connection { private_data_size, private_data, .. } = e.data else { panic!("{e:?}") };
    // SAFETY: the event's private data lives in the EP, which is alive.
    assert_eq!(unsafe { std::slice::from_raw_parts(private_data, private_data_size as usize) }, b"busy");
    service_point::free_psp(psp).unwrap();
    assert_eq!(dto(&c.recv, "flush after reject"), (5, DAT_DTO_ERR_FLUSHED, 0));
    // Nobody listens on this one.
    let c2 = ep(&ia);
    c2.ep.connect(ia.addr, qual(name, 21006), WAIT_US, b"").unwrap();
    let e = wait(&c2.conn, "non-peer reject");
    assert_eq!(e.number, DAT_CONNECTION_EVENT_NON_PEER_REJECTED, "{e:?}");
}

/// One side's rings in Intel MPI 2018's eager protocol over DAT (read from its `libmpi` and a
/// trace of its DAT calls, tests/vm/README.md): a ring it sends from and a ring its peer
/// writes into, 16 slots of 8448 bytes each, in one registered buffer. A 64 KiB message is 8
/// RDMA writes (completion suppressed), one per slot: the payload's size (4 bytes) at 0, a flag
/// byte at 4, the payload from 12, and the flag again in the write's last byte. The sender
/// picks the flag as the one of 2 and 4 that its own copy of the slot does not hold in that
/// last byte; the receiver calls no DAT function: it spins until the flag byte is not 1, then
/// until the last byte equals it, takes the payload and writes 1 to the flag byte.
///
/// The receiver is right as long as each write's bytes are placed once, the last one last: a
/// write placed out of order is taken before its payload is there, and one whose first bytes
/// are placed again after the receiver took the slot leaves the slot looking full, so that every
/// later message through it is taken before its write arrives and carries the bytes of the one
/// before (Intel MPI's failure over ofi-tcp across two guests).
struct EagerRings {
    buf: Buf,
}

impl EagerRings {
    const SLOTS: usize = 16;
    const SLOT: usize = 8448;
    const RING: usize = EagerRings::SLOTS * EagerRings::SLOT;
    const MSG: usize = 65536;
    const CHUNK: usize = 8368;

    fn new(ia: &Ia) -> EagerRings {
        let rings = EagerRings { buf: Buf::new(ia, 2 * EagerRings::RING, 0) };
        for s in 0..EagerRings::SLOTS {
            // SAFETY: inside the buffer, before the connection exists.
            unsafe { rings.recv_slot(s).add(4).write_volatile(1) };
        }
        rings
    }
    fn send_slot(&self, s: usize) -> *mut u8 {
        self.buf.mem.as_ptr().wrapping_add(s * EagerRings::SLOT) as *mut u8
    }
    fn recv_slot(&self, s: usize) -> *mut u8 {
        self.buf.mem.as_ptr().wrapping_add(EagerRings::RING + s * EagerRings::SLOT) as *mut u8
    }
    /// The peer's receive ring, for writes to it.
    fn remote(&self) -> (u64, u32) {
        (self.buf.addr() + EagerRings::RING as u64, self.buf.rkey)
    }
}

/// The byte at `off` of message `iter` from `side`: no two messages carry the same bytes.
fn eager_byte(off: usize, iter: u64, side: u64) -> u8 {
    let x = (off as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ iter.wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ side << 7;
    (x >> 56 ^ x >> 24 ^ x) as u8
}

/// The length of the write carrying `n` payload bytes (its last byte on a 64-byte boundary).
fn eager_len(n: usize) -> usize {
    (12 + n + 1).div_ceil(64) * 64
}

/// Sends message `iter` of `side` into the peer's slots from `first`.
fn eager_send(me: &Ep, rings: &EagerRings, peer: (u64, u32), first: usize, iter: u64, side: u64) {
    let mut off = 0;
    for s in first.. {
        if off == EagerRings::MSG {
            break;
        }
        let n = EagerRings::CHUNK.min(EagerRings::MSG - off);
        let len = eager_len(n);
        let slot = rings.send_slot(s);
        // SAFETY: the slot lies in the registered buffer's send ring, which only this thread
        // writes; the peer answered the message that last went out of it, so libfabric has
        // sent it.
        unsafe {
            for i in 0..n {
                *slot.add(12 + i) = eager_byte(off + i, iter, side);
            }
            (slot as *mut u32).write_unaligned(n as u32);
            let flag = if *slot.add(len - 1) == 2 { 4 } else { 2 };
            *slot.add(4) = flag;
            *slot.add(len - 1) = flag;
        }
        let (addr, rkey) = peer;
        me.ep
            .post_request(
                SendOp::RdmaWrite { remote_addr: addr + (s * EagerRings::SLOT) as u64, rkey },
                &[rings.buf.sge(s * EagerRings::SLOT, len)],
                0,
                DAT_COMPLETION_SUPPRESS_FLAG,
            )
            .expect("eager write");
        off += n;
    }
    // Suppressed completions hold their request slots until the queue is polled (Intel MPI
    // polls its request EVD now and then).
    while me.req.dequeue().is_ok() {}
}

/// Receives message `iter` of `side` from the slots from `first` as Intel MPI does, touching
/// memory only; returns the number of payload bytes that are not the message's.
fn eager_recv(rings: &EagerRings, first: usize, iter: u64, side: u64) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut payload = vec![0u8; EagerRings::CHUNK];
    let (mut off, mut bad) = (0, 0);
    for s in first.. {
        if off == EagerRings::MSG {
            break;
        }
        let slot = rings.recv_slot(s);
        // SAFETY: the slot lies in the registered buffer's receive ring, which libfabric writes
        // from another thread: every read of it is volatile, and the payload is read after an
        // acquire fence behind the last byte's read.
        let n = unsafe {
            let flag = loop {
                let f = slot.add(4).read_volatile();
                if f != 1 {
                    break f;
                }
                assert!(std::time::Instant::now() < deadline, "message {iter}: slot {s} never written");
                std::hint::spin_loop();
            };
            let n = (slot as *const u32).read_unaligned() as usize;
            assert_eq!(n, EagerRings::CHUNK.min(EagerRings::MSG - off), "message {iter}: slot {s}: size");
            while slot.add(eager_len(n) - 1).read_volatile() != flag {
                assert!(std::time::Instant::now() < deadline, "message {iter}: slot {s}: no last byte");
                std::hint::spin_loop();
            }
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            std::ptr::copy_nonoverlapping(slot.add(12), payload.as_mut_ptr(), n);
            slot.add(4).write_volatile(1);
            n
        };
        let wrong: Vec<usize> = (0..n).filter(|&i| payload[i] != eager_byte(off + i, iter, side)).collect();
        if let Some(&i) = wrong.first() {
            eprintln!("message {iter} of side {side}: slot {s}: {} wrong bytes, the first at {}", wrong.len(), off + i);
        }
        bad += wrong.len();
        off += n;
    }
    bad
}

/// Intel MPI's 64 KiB ping-pong over its eager rings ([`EagerRings`]), both sides spinning on
/// their memory while the CM thread's looks place the peer's writes: every payload byte is the
/// message's, so no write was placed with its last byte before its others, or placed twice.
/// `OFI_EAGER_ROUNDS` sets the round trips (default 200).
#[test]
fn ofi_intel_mpi_eager_rings() {
    // Intel MPI's ofi setting is tcp's FI_EP_MSG; the RDM names are not tried here.
    on_each_ia(|name| {
        if name == "ofi-tcp-lo" {
            ofi_intel_mpi_eager_rings_on(name)
        }
    });
}

fn ofi_intel_mpi_eager_rings_on(name: &str) {
    let ia = open(name);
    let (c, s) = (ep(&ia), ep(&ia));
    let (cr, sr) = (EagerRings::new(&ia), EagerRings::new(&ia));
    connect(&ia, &c, &s, qual(name, 21030), b"");
    let rounds: u64 = std::env::var("OFI_EAGER_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let (to_client, to_server) = (cr.remote(), sr.remote());
    let server = std::thread::spawn(move || {
        let mut bad = 0;
        for it in 0..rounds {
            let first = (it as usize % 2) * 8;
            bad += eager_recv(&sr, first, it, 0);
            eager_send(&s, &sr, to_client, first, it, 1);
        }
        (bad, s)
    });
    let mut bad = 0;
    for it in 0..rounds {
        let first = (it as usize % 2) * 8;
        eager_send(&c, &cr, to_server, first, it, 0);
        bad += eager_recv(&cr, first, it, 1);
    }
    let (server_bad, s) = server.join().expect("server side");
    assert_eq!((bad, server_bad), (0, 0), "wrong payload bytes (client, server) in {rounds} round trips");
    c.ep.disconnect(false).unwrap();
    for e in [&c, &s] {
        assert_eq!(wait(&e.conn, "disconnected").number, DAT_CONNECTION_EVENT_DISCONNECTED);
    }
}

/// A peer process killed while connected: the survivor's connection becomes BROKEN (shm: no
/// heartbeat for five beats; rxm: the heartbeat's send fails), or DISCONNECTED over tcp's
/// `FI_EP_MSG`; its posted receive is flushed, nothing hangs, and the IA outlives the endpoint
/// freed then.
#[test]
fn ofi_peer_killed_breaks_the_connection() {
    on_each_ia(ofi_peer_killed_on);
}

fn ofi_peer_killed_on(name: &str) {
    let ia = open(name);
    let s = ep(&ia);
    let b = Buf::new(&ia, 64, 0);
    s.ep.post_recv(&[b.sge(0, 64)], 77, 0).unwrap();
    let port = qual(name, 21020);
    let psp = service_point::create_psp(&ia.ia, port, ia.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).expect("psp");
    let mut peer = std::process::Command::new(std::env::current_exe().unwrap());
    peer.args(["ofi_peer_child", "--exact", "--ignored", "--nocapture"])
        .env("OFI_PEER_CHILD", format!("{name} {} {port}", ia.addr.ip()));
    // libfabric opens its sockets without close-on-exec: the peer would keep the listening
    // socket of a PSP another test has open now, and that test's qualifier could not be
    // listened on again after its free while the peer lives.
    // SAFETY: close_range is async-signal-safe and touches nothing but descriptor flags.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut peer, || {
            if libc::close_range(3, u32::MAX, libc::CLOSE_RANGE_CLOEXEC as i32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = peer.spawn().expect("spawn the peer");
    let e = wait(&ia.cr_evd, "the peer's connection request");
    let EventData::ConnectionRequest { cr, .. } = e.data else { panic!("expected a CR, got {e:?}") };
    service_point::accept(cr, s.h, b"").expect("accept");
    assert_eq!(wait(&s.conn, "established").number, DAT_CONNECTION_EVENT_ESTABLISHED);
    service_point::free_psp(psp).unwrap();
    child.kill().expect("kill the peer");
    child.wait().unwrap();
    let ev = wait(&s.conn, "broken");
    // Over FI_EP_MSG the kernel closes the dead process's socket as a shutdown does: tcp
    // reports it as the peer's disconnect.
    let msg = name == "ofi-tcp-lo" && ev.number == DAT_CONNECTION_EVENT_DISCONNECTED;
    assert!(ev.number == DAT_CONNECTION_EVENT_BROKEN || msg, "{ev:?}");
    assert_eq!(dto(&s.recv, "flushed receive"), (77, DAT_DTO_ERR_FLUSHED, 0));
    // The endpoint freed while connection messages to the dead peer (heartbeats, the
    // disconnect) still wait: the CM thread goes on retrying them for a while, and the IA
    // still makes connections.
    datcore::endpoint::free(s.h).expect("free the endpoint");
    drop(s);
    std::thread::sleep(std::time::Duration::from_secs(3));
    let (c2, s2) = (ep(&ia), ep(&ia));
    connect(&ia, &c2, &s2, qual(name, 21021), b"after");
}

/// The peer [`ofi_peer_killed_breaks_the_connection`] starts in a process of its own: connects
/// and waits to be killed. Does nothing unless `OFI_PEER_CHILD` says where to connect.
#[test]
#[ignore = "run by ofi_peer_killed_breaks_the_connection in a child process"]
fn ofi_peer_child() {
    let Ok(args) = std::env::var("OFI_PEER_CHILD") else { return };
    let mut it = args.split(' ');
    let (name, ip, port) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    let ia = open(name);
    let c = ep(&ia);
    let addr = SocketAddr::new(ip.parse().unwrap(), 0);
    c.ep.connect(addr, port.parse().unwrap(), WAIT_US, b"").expect("connect");
    assert_eq!(wait(&c.conn, "established").number, DAT_CONNECTION_EVENT_ESTABLISHED);
    std::thread::sleep(std::time::Duration::from_secs(120));
}
