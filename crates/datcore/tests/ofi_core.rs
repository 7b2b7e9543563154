//! The `ofi` provider through the DAT core on libfabric's `tcp` provider over the loopback
//! (`ofi-tcp-lo`): IA names, PSP errors, EPs connected within one process, send/recv (receives
//! posted before the connection, several segments), RDMA write/read, private data, a consumer's
//! reject and a connect nobody listens for, disconnect flushing posted work, reset and
//! reconnect, and a consumer sleeping in `dat_evd_wait` on the CQ's wait fd.
//!
//! Every test passes with "skipped: ..." where libfabric or its tcp provider on `lo` is
//! missing. `OFI_IA` picks another IA name.

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

/// The IA name to test, or None (test skipped).
fn ia_name() -> Option<String> {
    let want = std::env::var("OFI_IA").unwrap_or_else(|_| "ofi-tcp-lo".into());
    let names = provider().ia_names();
    eprintln!("ofi IA names: {names:?}");
    if !names.contains(&want) {
        eprintln!("skipped: {want} not offered (libfabric or its tcp provider missing)");
        return None;
    }
    Some(want)
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
    let Some(name) = ia_name() else { return };
    let ia = open(&name);
    assert_eq!(ia.addr.ip(), std::net::Ipv4Addr::LOCALHOST);
    assert!(ia.ia.device.attr().max_private_data >= 64);
    let e = service_point::create_psp(&ia.ia, 1 << 20, ia.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).unwrap_err();
    assert_eq!(e.ty(), DAT_INVALID_PARAMETER);
    let psp = service_point::create_psp(&ia.ia, 21001, ia.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).expect("psp");
    let ia2 = open(&name);
    let e = service_point::create_psp(&ia2.ia, 21001, ia2.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).unwrap_err();
    assert_eq!(e.ty(), DAT_CONN_QUAL_IN_USE);
    service_point::free_psp(psp).unwrap();
    let e = provider().open("ofi-nosuch-dev", "", Arc::new(NoAsync)).err().expect("unknown name must fail");
    assert_eq!(e.ty(), DAT_PROVIDER_NOT_FOUND);
}

struct NoAsync;
impl datcore::provider::AsyncEvents for NoAsync {
    fn async_error(&self, err: datcore::provider::AsyncError) {
        eprintln!("async error {err:?}");
    }
}

#[test]
fn ofi_send_recv_rdma() {
    let Some(name) = ia_name() else { return };
    let ia = open(&name);
    let (c, s) = (ep(&ia), ep(&ia));
    let sbuf = Buf::new(&ia, 1 << 16, 0);
    let cbuf = Buf::new(&ia, 1 << 16, 0xab);
    // Receives posted before the connection exists (held until the endpoint is made).
    for i in 0..4u64 {
        s.ep.post_recv(&[sbuf.sge(i as usize * 4096, 4096)], 100 + i, 0).expect("post recv");
    }
    let (pd, apd) = connect(&ia, &c, &s, 21002, b"hello-private");
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
    connect(&ia, &c, &s, 21003, b"");
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
    let Some(name) = ia_name() else { return };
    let ia = open(&name);
    let cbuf = Buf::new(&ia, 4096, 0);
    for round in 0..5u16 {
        let (c, s) = (ep(&ia), ep(&ia));
        connect(&ia, &c, &s, 21010 + u64::from(round), b"");
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
    let Some(name) = ia_name() else { return };
    let ia = open(&name);
    let (c, s) = (ep(&ia), ep(&ia));
    let sbuf = Buf::new(&ia, 4096, 0);
    let cbuf = Buf::new(&ia, 4096, 1);
    connect(&ia, &c, &s, 21004, b"");
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
    let Some(name) = ia_name() else { return };
    let ia = open(&name);
    let c = ep(&ia);
    let b = Buf::new(&ia, 64, 0);
    c.ep.post_recv(&[b.sge(0, 64)], 5, 0).unwrap();
    let psp = service_point::create_psp(&ia.ia, 21005, ia.cr_evd.handle(), DAT_PSP_CONSUMER_FLAG).unwrap();
    c.ep.connect(ia.addr, 21005, WAIT_US, b"please").unwrap();
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
    // Nobody listens on 21006.
    let c2 = ep(&ia);
    c2.ep.connect(ia.addr, 21006, WAIT_US, b"").unwrap();
    let e = wait(&c2.conn, "non-peer reject");
    assert_eq!(e.number, DAT_CONNECTION_EVENT_NON_PEER_REJECTED, "{e:?}");
}
