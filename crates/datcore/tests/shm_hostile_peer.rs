//! A hostile peer of the same user against the `shm` provider.
//!
//! The test process is the hostile peer: it connects (or listens) with the provider's own
//! handshake, ring and table code (`datcore::provider::shm::raw_peer`), then writes what no
//! provider would. The victim is this test binary run again (`peer_main`, its case in
//! `SHM_PEER_ROLE`), a consumer of the provider like any other, which also holds an honest
//! connection between two endpoints of its own. Each case checks that the victim neither
//! crashes nor hangs, never reads or writes outside a registered region with the rights an
//! operation needs, keeps its honest connection (and connection management) working, and
//! ends the hostile connection BROKEN with an asynchronous QP error, or refuses it at setup.

mod shm_common;

use datcore::provider::shm::raw_peer::{self, Files, Preset, RawListener, RawPeer, Response};
use datcore::provider::*;
use shm_common::*;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The context of the victim's queue pair on the hostile connection.
const HOSTILE: u64 = 0xbad;

// ---- the victim -------------------------------------------------------------------------------

/// The victim's device, its asynchronous errors, and its honest connection (`a` connected to
/// `b`, through the listener on `port`).
struct Victim {
    dev: Arc<dyn Device>,
    asyncs: Arc<Q<AsyncError>>,
    honest_port: u64,
    honest_crs: Arc<Q<Arc<dyn ConnectionRequest>>>,
    _honest_listener: Arc<dyn Listener>,
    a: Ep,
    b: Ep,
}

impl Victim {
    fn new(hostile_port: u64) -> Victim {
        let asyncs = Q::new();
        let dev = open_with(Arc::new(AsyncQ(asyncs.clone())));
        let honest_port = hostile_port + 1;
        let honest_crs = Q::new();
        let l = dev.listen(honest_port, Arc::new(ListenQ(honest_crs.clone()))).unwrap();
        let (a, b) = (Ep::new(&dev), Ep::new(&dev));
        connect_pair(&a, &b, honest_port, &honest_crs);
        Victim { dev, asyncs, honest_port, honest_crs, _honest_listener: l, a, b }
    }

    /// Listens on `port` and accepts the hostile peer's connection (not yet established).
    fn accept_hostile(&self, port: u64) -> (Ep, Arc<dyn Listener>) {
        let crs = Q::new();
        let l = self.dev.listen(port, Arc::new(ListenQ(crs.clone()))).unwrap();
        let req = crs.wait(T).expect("no connect request from the hostile peer");
        let ep = Ep::with_context(&self.dev, HOSTILE);
        ep.qp.accept(&req, b"").unwrap();
        (ep, l)
    }

    /// Connects to the hostile peer listening on `port`.
    fn connect_hostile(&self, port: u64) -> Ep {
        let ep = Ep::with_context(&self.dev, HOSTILE);
        ep.qp.connect(local(), port, b"", None).unwrap();
        ep
    }

    /// Uses the hostile connection as any consumer would (a receive posted, sends, both queues
    /// polled) once it is established, until it ends; it must end BROKEN with the asynchronous
    /// error (refused at setup: without being established).
    fn use_until_broken(&self, ep: &Ep) {
        let rx = Buf::new(&ep.pd, 64, ALL);
        let tx = Buf::new(&ep.pd, 64, ALL);
        ep.qp.post_recv(1, &[rx.sge(0, 64)]).unwrap();
        let end = Instant::now() + T;
        let mut established = false;
        loop {
            match ep.ev.wait(Duration::from_millis(2)) {
                Some((ConnEvent::Established, _)) => established = true,
                Some((ev, _)) => {
                    assert_eq!(ev, ConnEvent::Broken, "the hostile connection ended otherwise");
                    break;
                }
                None => assert!(Instant::now() < end, "the hostile connection did not end"),
            }
            if established {
                let _ = ep.op(2, SendOp::Send, &[tx.sge(0, 8)], false);
                while ep.scq.poll().is_some() {}
                let _ = ep.rcq.poll();
            }
        }
        let err = self.asyncs.wait(T).expect("no asynchronous error for the hostile connection");
        assert_eq!(err, AsyncError::QpError { context: HOSTILE });
    }

    /// The hostile connection (whose earlier events are gone) ends BROKEN and the IA hears an
    /// asynchronous error naming its queue pair.
    fn expect_broken(&self, ep: &Ep) {
        let (ev, _) = ep.ev.wait(T).expect("the hostile connection did not end");
        assert_eq!(ev, ConnEvent::Broken, "the hostile connection ended otherwise");
        let err = self.asyncs.wait(T).expect("no asynchronous error for the hostile connection");
        assert_eq!(err, AsyncError::QpError { context: HOSTILE });
    }

    /// A message each way on the honest connection, and a new connection set up and torn down.
    fn check_honest(&self) {
        for (from, to) in [(&self.a, &self.b), (&self.b, &self.a)] {
            let rx = Buf::new(&to.pd, 64, ALL);
            to.qp.post_recv(7, &[rx.sge(0, 64)]).unwrap();
            send_words(from, 8, &[0x600d]);
            let wc = to.rcq.expect();
            assert_eq!((wc.wr_id, wc.status, wc.byte_len), (7, WcStatus::Success, 8));
            assert_eq!(rx.word(0), 0x600d);
        }
        let (c, d) = (Ep::new(&self.dev), Ep::new(&self.dev));
        connect_pair(&c, &d, self.honest_port, &self.honest_crs);
        c.qp.disconnect(true).unwrap();
        assert_eq!(c.event().0, ConnEvent::Disconnected);
        assert_eq!(d.event().0, ConnEvent::Disconnected);
        assert!(self.asyncs.wait(Duration::ZERO).is_none(), "an asynchronous error besides the hostile one");
    }
}

/// Connects `a` to `b` through the listener on `port` whose requests go to `crs`.
fn connect_pair(a: &Ep, b: &Ep, port: u64, crs: &Q<Arc<dyn ConnectionRequest>>) {
    a.qp.connect(local(), port, b"", None).unwrap();
    let req = crs.wait(T).expect("no connect request on the honest listener");
    b.qp.accept(&req, b"").unwrap();
    assert_eq!(a.event().0, ConnEvent::Established);
    assert_eq!(b.event().0, ConnEvent::Established);
}

/// Entry point of the victim process (ignored when run normally).
#[test]
#[ignore]
fn peer_main() {
    let Ok(role) = std::env::var("SHM_PEER_ROLE") else { return };
    let p: u64 = std::env::var("SHM_PEER_PORT").unwrap().parse().unwrap();
    let v = Victim::new(p);
    match role.as_str() {
        "forged_table" => victim_forged_table(&v, p),
        "pad_loop" => victim_pad_loop(&v, p),
        "bad_indices" | "unsealed_segment" => v.use_until_broken(&v.connect_hostile(p)),
        "unsealed_area" => v.use_until_broken(&v.accept_hostile(p).0),
        "unsealed_lmr_file" => victim_unsealed_lmr_file(&v, p),
        "pinned_mark" => victim_pinned_mark(&v, p),
        "wrapping_entry" => victim_wrapping_entry(&v, p),
        "inline_freed_receive" => victim_inline_freed_receive(&v, p),
        "ud_freed_receive" => victim_ud_freed_receive(&v, p),
        "ud_forged_source" => victim_ud_forged_source(&v, p),
        "ud_lying_listener" => victim_ud_lying_listener(&v, p),
        "ud_lying_requester" => victim_ud_lying_requester(&v, p),
        "zeroed_sleepers" => victim_zeroed_sleepers(&v, p),
        r => panic!("unknown role {r}"),
    }
    v.check_honest();
    std::process::exit(0);
}

// ---- the hostile side --------------------------------------------------------------------------

/// The victim process; killed if it is still running when this is dropped.
struct VictimProcess(Child);

impl VictimProcess {
    fn spawn(role: &str, port: u64) -> VictimProcess {
        VictimProcess(spawn(role, port, &[]))
    }

    /// Waits for the victim to finish and fails the test with what became of it, then with
    /// `hostile`, the hostile side's own outcome.
    fn finish(mut self, hostile: io::Result<()>) {
        let end = Instant::now() + 3 * T;
        let status = loop {
            if let Some(s) = self.0.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > end {
                panic!("the victim hung (killed after {:?}); hostile side: {hostile:?}", 3 * T);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        if let Some(sig) = status.signal() {
            panic!("the victim died of signal {sig}; hostile side: {hostile:?}");
        }
        assert!(status.success(), "the victim failed ({status}); hostile side: {hostile:?}");
        hostile.unwrap();
    }
}

impl Drop for VictimProcess {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Runs case `role` against a fresh victim on qualifier base `n`: `hostile` gets the qualifier
/// the victim listens on.
fn case(role: &str, n: u64, hostile: impl FnOnce(u64) -> io::Result<()>) {
    let p = port(n * 4);
    let victim = VictimProcess::spawn(role, p);
    let r = hostile(p);
    victim.finish(r);
}

/// Expects the victim to close the hostile connection.
fn expect_closed(peer: &RawPeer) -> io::Result<()> {
    if !peer.closed_by_other(T) {
        return Err(fail("the victim kept the hostile connection".into()));
    }
    Ok(())
}

/// Runs case `role` against a fresh victim that connects to the raw listener `hostile` gets,
/// on qualifier base `n`.
fn case_listening(role: &str, n: u64, hostile: impl FnOnce(&RawListener) -> io::Result<()>) {
    let p = port(n * 4);
    let l = RawListener::listen(p).unwrap();
    let victim = VictimProcess::spawn(role, p);
    let r = hostile(&l);
    victim.finish(r);
}

fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn fail(what: String) -> io::Error {
    io::Error::other(what)
}

// ---- the memory table a peer can write -------------------------------------------------------

/// A slot the victim never uses (slots are taken from 0 up).
const FORGED_SLOT: u32 = 60_000;

/// The victim's memory: a canary nobody registered, and a region registered for remote reads
/// only. The hostile peer forges table entries for both (through the table descriptor it was
/// given, reopened read-write) and writes, reads and adds through them; nothing may change and
/// nothing may be read.
fn victim_forged_table(v: &Victim, p: u64) {
    let (ep, _l) = v.accept_hostile(p);
    assert_eq!(ep.event().0, ConnEvent::Established);
    let canary = vec![0x11u64; 512];
    let ro = {
        let mut b = Buf::new(&ep.pd, 4096, Access { remote_write: false, remote_atomic: false, ..ALL });
        b.fill(|_| 0x22);
        b
    };
    send_words(&ep, 1, &[canary.as_ptr() as u64, ro.addr(), ro.mr.rkey() as u64]);
    assert_eq!(recv_words(&ep, 2, 1), [0xd0e]);
    std::sync::atomic::fence(Ordering::SeqCst);
    assert!(canary.iter().all(|&w| w == 0x11), "memory no region covers was written");
    assert!(ro.bytes().iter().all(|&b| b == 0x22), "a region without remote write was written");
    assert_eq!(ep.event().0, ConnEvent::Broken, "the hostile peer left");
}

/// Opens the file behind `fd` again read-write (as any process of the user can, through
/// /proc) and maps `len` bytes of it writable.
fn reopen_writable(fd: &OwnedFd, len: usize) -> io::Result<*mut u8> {
    let path = std::ffi::CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap();
    // SAFETY: NUL-terminated path; the result is checked.
    let raw = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    let file = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: mapping a file we hold; the result is checked (and the mapping never unmapped).
    let p = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, file.as_raw_fd(), 0)
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

#[test]
fn forged_table_entries_grant_nothing() {
    case("forged_table", 1, |p| {
        let mut peer = RawPeer::connect(p, Files::default(), T)?;
        let w = words(&peer.next_send(T)?);
        let (canary, ro, ro_key) = (w[0], w[1], w[2] as u32);
        let forged = raw_peer::key(FORGED_SLOT);
        match reopen_writable(peer.other_table_fd(), raw_peer::TABLE_BYTES) {
            Ok(table) => {
                let pd = peer.other_pd();
                // SAFETY: a writable mapping of the whole table, never unmapped.
                unsafe {
                    raw_peer::write_entry(table, forged, pd, canary, 4096, ALL, None);
                    raw_peer::write_entry(table, ro_key, pd, ro, 4096, ALL, None);
                }
            }
            Err(e) => eprintln!("the victim's table cannot be written: {e}"),
        }
        peer.write(forged, canary, &[0xee; 8])?;
        peer.fetch_add(forged, canary + 8, 1)?;
        peer.read(forged, canary + 16, 8)?;
        peer.write(ro_key, ro, &[0xee; 8])?;
        peer.fetch_add(ro_key, ro + 8, 1)?;
        let answers: Vec<Response> = (0..5).map_while(|_| peer.next_response(Duration::from_secs(2)).ok()).collect();
        peer.send(&bytes(&[0xd0e]))?;
        peer.wait_drained(T)?;
        let refused = Response::Ack(WcStatus::RemoteAccess, 0);
        if answers.iter().any(|a| !matches!(a, Response::Ack(WcStatus::RemoteAccess, _))) || answers.len() != 5 {
            return Err(fail(format!("answers {answers:x?}, each should be {refused:?}")));
        }
        Ok(())
    });
}

// ---- a malformed record ----------------------------------------------------------------------

/// The hostile peer writes a pad record as long as the whole ring where the victim reads its
/// next request: consuming it would bring the victim back to the same place forever.
fn victim_pad_loop(v: &Victim, p: u64) {
    let (ep, _l) = v.accept_hostile(p);
    assert_eq!(ep.event().0, ConnEvent::Established);
    let rb = Buf::new(&ep.pd, 64, ALL);
    ep.qp.post_recv(1, &[rb.sge(0, 64)]).unwrap();
    v.expect_broken(&ep);
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status), (1, WcStatus::Flushed));
}

#[test]
fn a_pad_record_as_long_as_the_ring_breaks_the_connection() {
    case("pad_loop", 2, |p| {
        let mut peer = RawPeer::connect(p, Files::default(), T)?;
        peer.pad_request_ring(RawPeer::request_ring_capacity() as u32);
        expect_closed(&peer)
    });
}

// ---- ring indices in a listener's segment ----------------------------------------------------

/// The hostile peer listens and hands the victim a segment whose ring indices are not those
/// of a fresh connection: `preset` (the victim is side 0).
fn bad_indices(n: u64, preset: Preset) {
    case_listening("bad_indices", n, |l| {
        // Refused at setup (no ready-to-use) or taken: either way the victim must end it.
        match l.accept(Files::default(), &[preset], T) {
            Ok(peer) => expect_closed(&peer),
            Err(e) => {
                eprintln!("accept: {e}");
                Ok(())
            }
        }
    });
}

/// The victim's response-ring head 3 bytes short of the segment's end: its 8-byte header
/// loads would reach past the mapping.
#[test]
fn a_misaligned_ring_head_in_the_segment_is_refused() {
    let cap = 128 * 1024;
    bad_indices(3, Preset { producer_side: 1, response: true, head: true, value: cap - 3 });
}

/// The victim's request-ring tail at the end of the position space: the next record's end
/// overflows.
#[test]
fn a_ring_tail_at_the_end_of_the_position_space_is_refused() {
    bad_indices(4, Preset { producer_side: 0, response: false, head: false, value: u64::MAX - 7 });
}

/// The victim's request-ring head ahead of its tail: the free space underflows.
#[test]
fn a_ring_head_ahead_of_its_tail_is_refused() {
    bad_indices(5, Preset { producer_side: 0, response: false, head: true, value: 64 });
}

// ---- files a peer shrinks under our mappings -------------------------------------------------

/// The hostile peer passes its published area in files it can shrink, and shrinks them.
#[test]
fn a_published_area_that_can_shrink_is_refused() {
    case("unsealed_area", 6, |p| {
        let mut peer = RawPeer::connect(p, Files { unsealed_area: true, ..Files::default() }, T)?;
        // Once the victim uses the connection (it mapped the area by then), or refused it.
        let end = Instant::now() + T;
        while !peer.closed_by_other(Duration::from_millis(5)) {
            if peer.next_send(Duration::from_millis(5)).is_ok() {
                peer.truncate_area()?;
                return expect_closed(&peer);
            }
            if Instant::now() > end {
                return Err(fail("the victim neither used nor refused the connection".into()));
            }
        }
        Ok(())
    });
}

/// The hostile peer listens, hands over a segment it can shrink, and shrinks it.
#[test]
fn a_segment_that_can_shrink_is_refused() {
    case_listening("unsealed_segment", 7, |l| {
        match l.accept(Files { unsealed_segment: true, ..Files::default() }, &[], T) {
            Ok(peer) => {
                peer.truncate_segment()?;
                expect_closed(&peer)
            }
            Err(e) => {
                eprintln!("accept: {e}");
                Ok(())
            }
        }
    });
}

/// The hostile peer publishes a region in a memfd it can shrink (the victim, an RDMA
/// initiator, would map it and copy through the mapping) and shrinks it between two of the
/// victim's RDMA writes. The victim must not map it: its writes go through the ring instead.
fn victim_unsealed_lmr_file(v: &Victim, p: u64) {
    let (ep, _l) = v.accept_hostile(p);
    assert_eq!(ep.event().0, ConnEvent::Established);
    let w = recv_words(&ep, 1, 3);
    let (rkey, addr, ino) = (w[0] as u32, w[1], w[2]);
    let src = Buf::new(&ep.pd, 64, ALL);
    let write = |wr_id| {
        ep.op(wr_id, SendOp::RdmaWrite { remote_addr: addr, rkey }, &[src.sge(0, 64)], true).unwrap();
        let wc = ep.scq.expect();
        assert_eq!((wc.wr_id, wc.status), (wr_id, WcStatus::Success));
    };
    write(10);
    send_words(&ep, 11, &[1]);
    assert_eq!(recv_words(&ep, 12, 1), [2], "shrunk");
    write(13);
    assert!(!maps_memfd(ino), "the victim mapped a file its owner can shrink");
    send_words(&ep, 14, &[3]);
    assert_eq!(ep.event().0, ConnEvent::Broken, "the hostile peer left");
}

/// Whether this process has a shared mapping of the memfd with inode `ino`.
fn maps_memfd(ino: u64) -> bool {
    let ino = ino.to_string();
    std::fs::read_to_string("/proc/self/maps").unwrap().lines().any(|l| {
        // start-end perms offset dev inode path
        let f: Vec<&str> = l.split_ascii_whitespace().collect();
        f.len() > 5 && f[1].ends_with('s') && f[4] == ino && f[5].starts_with("/memfd:")
    })
}

#[test]
fn a_registration_in_a_file_that_can_shrink_is_not_mapped() {
    use std::os::unix::fs::MetadataExt;
    case("unsealed_lmr_file", 8, |p| {
        let mut peer = RawPeer::connect(p, Files::default(), T)?;
        let file = raw_peer::memfd(65536, true)?;
        let ino = std::fs::File::from(file.try_clone()?).metadata()?.ino();
        let addr = 0x7000_0000_0000;
        let rights = Access { remote_read: true, remote_write: true, ..Access::default() };
        let rkey = peer.publish(5, addr, 65536, rights, Some(&file));
        peer.send(&bytes(&[rkey as u64, addr, ino]))?;
        assert_eq!(words(&peer.next_send(T)?), [1]);
        raw_peer::truncate(&file, 0)?;
        peer.send(&bytes(&[2]))?;
        assert_eq!(words(&peer.next_send(T)?), [3]);
        Ok(())
    });
}

// ---- a copy mark the peer never clears -------------------------------------------------------

/// The hostile peer marks a copy through the victim's table slot of a memory window (bound on
/// the victim's honest connection) and never clears the mark. While the victim rebinds the
/// window, which waits for that mark, its other work goes on (a registration freed, the
/// honest queue pair moving data), and the rebind ends the hostile connection.
fn victim_pinned_mark(v: &Victim, p: u64) {
    let (ep, _l) = v.accept_hostile(p);
    assert_eq!(ep.event().0, ConnEvent::Established);
    let (a, b) = (&v.a, &v.b);
    let region = Buf::new(&a.pd, 8192, ALL);
    let mw = a.pd.alloc_mw().unwrap();
    let bind = BindWr {
        wr_id: 3,
        mw: &mw,
        mr: &region.mr,
        addr: region.addr(),
        length: 4096,
        access: Access { remote_write: true, ..Access::default() },
        signaled: false,
    };
    let rkey = a.qp.bind_mw(&bind).unwrap();
    send_words(&ep, 1, &[rkey as u64]);
    assert_eq!(recv_words(&ep, 2, 1), [0x919], "pinned");
    let rebound = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            a.qp.bind_mw(&bind).unwrap();
            rebound.store(true, Ordering::SeqCst);
        });
        std::thread::sleep(Duration::from_millis(100));
        drop(Buf::new(&b.pd, 64, ALL));
        let rx = Buf::new(&b.pd, 64, ALL);
        b.qp.post_recv(4, &[rx.sge(0, 64)]).unwrap();
        send_words(a, 5, &[0x600d]);
        assert_eq!(b.rcq.expect().status, WcStatus::Success);
        assert!(!rebound.load(Ordering::SeqCst), "other work waited for the peer's mark");
    });
    v.expect_broken(&ep);
}

#[test]
fn a_copy_mark_the_peer_never_clears_holds_up_nothing_else() {
    case("pinned_mark", 9, |p| {
        let mut peer = RawPeer::connect(p, Files::default(), T)?;
        let rkey = words(&peer.next_send(T)?)[0] as u32;
        peer.pin_in_flight(rkey);
        peer.send(&bytes(&[0x919]))?;
        expect_closed(&peer)
    });
}

// ---- arithmetic on the peer's numbers --------------------------------------------------------

/// The hostile peer publishes a region whose end lies past the end of the address space; the
/// victim's RDMA write into it (checked against the peer's table, as every initiator does)
/// must neither overflow (a debug build panics) nor be taken for an ordinary refusal.
fn victim_wrapping_entry(v: &Victim, p: u64) {
    let (ep, _l) = v.accept_hostile(p);
    assert_eq!(ep.event().0, ConnEvent::Established);
    let w = recv_words(&ep, 1, 2);
    let (rkey, addr) = (w[0] as u32, w[1]);
    let src = Buf::new(&ep.pd, 64, ALL);
    ep.op(10, SendOp::RdmaWrite { remote_addr: addr + 8, rkey }, &[src.sge(0, 8)], true).unwrap();
    let wc = ep.scq.expect();
    assert_eq!((wc.wr_id, wc.status), (10, WcStatus::Flushed));
    v.expect_broken(&ep);
}

#[test]
fn a_table_entry_past_the_end_of_the_address_space_breaks_the_connection() {
    case("wrapping_entry", 10, |p| {
        let mut peer = RawPeer::connect(p, Files::default(), T)?;
        // A sealed file: the victim would map it, so it checks the entry.
        let file = raw_peer::memfd(4096, false)?;
        let addr = u64::MAX - 4095;
        let rights = Access { remote_read: true, remote_write: true, ..Access::default() };
        let rkey = peer.publish(6, addr, 8192, rights, Some(&file));
        peer.send(&bytes(&[rkey as u64, addr]))?;
        expect_closed(&peer)
    });
}

// ---- receive buffers deregistered after their post ------------------------------------------

/// The hostile peer sends a message of two inline records into the victim's receive; between
/// them the victim frees the receive buffer's registration and writes a canary into the part
/// the second record would fill. Nothing may land there, and the receive completes with a
/// local protection error (as when the registration is gone before the first record).
fn victim_inline_freed_receive(v: &Victim, p: u64) {
    let (ep, _l) = v.accept_hostile(p);
    assert_eq!(ep.event().0, ConnEvent::Established);
    let chunk = raw_peer::CHUNK;
    let big = Buf::new(&ep.pd, 2 * chunk, ALL);
    ep.qp.post_recv(1, &[big.sge(0, 2 * chunk)]).unwrap();
    send_words(&ep, 2, &[1]);
    let end = Instant::now() + T;
    while big.bytes()[chunk - 1] != 0xee {
        assert!(ep.rcq.poll().is_none(), "the receive completed at its first record");
        assert!(Instant::now() < end, "the first record never landed");
        std::thread::sleep(Duration::from_millis(1));
    }
    let Buf { mut mem, mr } = big;
    drop(mr);
    mem[chunk..].fill(0x11);
    send_words(&ep, 3, &[2]);
    let wc = ep.rcq.expect();
    std::sync::atomic::fence(Ordering::SeqCst);
    assert!(mem[chunk..].iter().all(|&b| b == 0x11), "the second record landed in deregistered memory");
    assert_eq!((wc.wr_id, wc.status, wc.byte_len), (1, WcStatus::LocalProtection, 0));
    assert_eq!(ep.event().0, ConnEvent::Broken, "the hostile peer left");
}

#[test]
fn an_inline_send_continued_into_a_deregistered_receive_lands_nothing() {
    case("inline_freed_receive", 11, |p| {
        let mut peer = RawPeer::connect(p, Files::default(), T)?;
        let chunk = raw_peer::CHUNK;
        assert_eq!(words(&peer.next_send(T)?), [1]);
        peer.send_first_chunk(2 * chunk as u64, &vec![0xee; chunk])?;
        assert_eq!(words(&peer.next_send(T)?), [2], "deregistered");
        if !peer.send_chunk(&vec![0xee; chunk])? {
            return Err(fail("no room for the second record".into()));
        }
        match peer.next_response(T)? {
            Response::Ack(WcStatus::RemoteOperation, _) => Ok(()),
            r => Err(fail(format!("answer {r:?}, should be a remote operation error"))),
        }
    });
}

/// The UD queue pair on which the victim accepts the hostile peer's UD connect request
/// (through the UD listener on `port`).
fn accept_ud(v: &Victim, port: u64, ep: &Ep) -> UdPeer {
    let crs = Q::new();
    let _l = v.dev.listen(port, Arc::new(ListenQ(crs.clone()))).unwrap();
    let req = crs.wait(T).expect("no UD connect request from the hostile peer");
    ep.qp.accept(&req, b"").unwrap();
    let (ev, _, peer, passive) = ep.ud_event();
    assert_eq!((ev, passive), (ConnEvent::Established, true));
    peer
}

/// The victim's UD queue pair posts two receives and frees the first one's registration (a
/// canary written where it was) before it accepts the hostile peer, which sends two datagrams:
/// the first receive completes with a local protection error and nothing landed in it.
fn victim_ud_freed_receive(v: &Victim, p: u64) {
    let ep = Ep::ud(&v.dev);
    let (gone, kept) = (Buf::new(&ep.pd, 128, ALL), Buf::new(&ep.pd, 128, ALL));
    ep.qp.post_recv(1, &[gone.sge(0, 128)]).unwrap();
    ep.qp.post_recv(2, &[kept.sge(0, 128)]).unwrap();
    let Buf { mut mem, mr } = gone;
    drop(mr);
    mem.fill(0x11);
    let peer = accept_ud(v, p, &ep);
    assert_eq!(peer.node, std::os::unix::process::parent_id() as u64);
    let wc = ep.rcq.expect();
    std::sync::atomic::fence(Ordering::SeqCst);
    assert!(mem.iter().all(|&b| b == 0x11), "a datagram landed in deregistered memory");
    assert_eq!((wc.wr_id, wc.status, wc.byte_len), (1, WcStatus::LocalProtection, 0));
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.immed), (2, WcStatus::Success, 9));
    assert_eq!(&kept.bytes()[UD_HEADER_LEN as usize..][..8], b"second!!");
}

#[test]
fn a_datagram_into_a_deregistered_receive_lands_nothing() {
    case("ud_freed_receive", 12, |p| {
        let (pid, qpn) = raw_peer::ud_request(p, std::process::id(), 9, b"", T)?;
        raw_peer::ud_send(pid as u64, qpn, 9, b"first!!!")?;
        raw_peer::ud_send(pid as u64, qpn, 9, b"second!!")
    });
}

// ---- who may send to a UD queue pair ---------------------------------------------------------

/// The victim's UD queue pair `a` has exchanged with its own `b` only; the hostile peer, told
/// their addresses, sends `a` a datagram whose header names `b`'s queue pair, then `b` sends one.
/// `a` takes `b`'s only.
fn victim_ud_forged_source(v: &Victim, p: u64) {
    let (hostile, _l) = v.accept_hostile(p);
    assert_eq!(hostile.event().0, ConnEvent::Established);
    let (a, b) = (Ep::ud(&v.dev), Ep::ud(&v.dev));
    let crs = Q::new();
    let _ul = v.dev.listen(p + 2, Arc::new(ListenQ(crs.clone()))).unwrap();
    b.qp.connect(local(), p + 2, b"", None).unwrap();
    a.qp.accept(&crs.wait(T).expect("no UD connect request"), b"").unwrap();
    let (_, _, b_addr, _) = a.ud_event();
    let (ev, _, a_addr, _) = b.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    let bufs = [Buf::new(&a.pd, 128, ALL), Buf::new(&a.pd, 128, ALL)];
    for (i, r) in bufs.iter().enumerate() {
        a.qp.post_recv(i as u64 + 1, &[r.sge(0, 128)]).unwrap();
    }
    send_words(&hostile, 1, &[a_addr.node, a_addr.qpn as u64, b_addr.qpn as u64]);
    assert_eq!(recv_words(&hostile, 2, 1), [0x5e7], "sent");
    let mut tx = Buf::new(&b.pd, 8, ALL);
    b.send_ud(3, &mut tx, b"honest!!", a_addr);
    let wc = a.rcq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.immed), (1, WcStatus::Success, b_addr.qpn));
    let h = UD_HEADER_LEN as usize;
    assert_eq!(&bufs[0].bytes()[h..h + 8], b"honest!!", "the forged datagram was taken");
    let late = a.rcq.wait(Duration::from_millis(200));
    assert!(late.is_none(), "a datagram from a process the queue pair never exchanged with: {late:?}");
    assert_eq!(hostile.event().0, ConnEvent::Broken, "the hostile peer left");
}

#[test]
fn a_datagram_from_a_process_never_exchanged_with_is_dropped() {
    case("ud_forged_source", 13, |p| {
        let mut peer = RawPeer::connect(p, Files::default(), T)?;
        let w = words(&peer.next_send(T)?);
        let (pid, qpn, claimed) = (w[0], w[1] as u32, w[2] as u32);
        // The victim may close the connection before the datagram goes (then it is lost).
        if let Err(e) = raw_peer::ud_send(pid, qpn, claimed, b"forged!!") {
            eprintln!("the forged datagram: {e}");
        }
        peer.send(&bytes(&[0x5e7]))?;
        peer.wait_drained(T)
    });
}

// ---- who a UD connect exchange names ---------------------------------------------------------

/// The victim's UD queue pair connects to the hostile listener, whose accept names another
/// process (pid 1): the connect fails.
fn victim_ud_lying_listener(v: &Victim, p: u64) {
    let ep = Ep::ud(&v.dev);
    ep.qp.connect(local(), p, b"", None).unwrap();
    let (ev, _, peer, _) = ep.ud_event();
    assert_eq!((ev, peer), (ConnEvent::Broken, UdPeer::default()), "an accept naming another process was taken");
}

#[test]
fn a_ud_accept_naming_another_process_is_refused() {
    case_listening("ud_lying_listener", 14, |l| l.answer_ud(1, 7, T));
}

/// The hostile peer sends a UD connect request naming another process (pid 1), then one naming
/// itself: the victim hears the second only.
fn victim_ud_lying_requester(v: &Victim, p: u64) {
    let ep = Ep::ud(&v.dev);
    let crs = Q::new();
    let _l = v.dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    let req = crs.wait(T).expect("no UD connect request");
    assert_eq!(req.private_data(), b"true", "a request naming another process was heard");
    ep.qp.accept(&req, b"").unwrap();
    let (ev, _, peer, _) = ep.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    assert_eq!((peer.node, peer.qpn), (std::os::unix::process::parent_id() as u64, 8));
}

#[test]
fn a_ud_connect_request_naming_another_process_is_refused() {
    case("ud_lying_requester", 15, |p| {
        match raw_peer::ud_request(p, 1, 7, b"lie", T) {
            Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionRefused) => {}
            r => return Err(fail(format!("the request naming pid 1 was answered: {r:?}"))),
        }
        raw_peer::ud_request(p, std::process::id(), 8, b"true", T).map(drop)
    });
}

// ---- the sleepers' announcement a peer can write ---------------------------------------------

/// Waits for one completion of `cq` with no time limit, as `dat_evd_wait` does: poll, arm,
/// poll again, block.
fn wait_without_limit(cq: &Arc<dyn CompletionQueue>) -> WorkCompletion {
    let mut out = [WorkCompletion::EMPTY; 1];
    loop {
        if cq.poll(&mut out) == 1 || cq.arm() && cq.poll(&mut out) == 1 {
            return out[0];
        }
        cq.block(None);
    }
}

/// Starts a thread waiting without limit on `cq`, lets it fall asleep, runs `produce`, and
/// checks the waiter returns with a completion (the victim fails with exit status 3 if not).
fn waiter_returns(cq: &Arc<dyn CompletionQueue>, what: &str, produce: impl FnOnce()) {
    let (tx, done) = std::sync::mpsc::channel();
    let cq = cq.clone();
    std::thread::spawn(move || {
        let _ = tx.send(wait_without_limit(&cq));
    });
    std::thread::sleep(Duration::from_millis(100)); // asleep by now, announced (then zeroed)
    produce();
    match done.recv_timeout(Duration::from_secs(2)) {
        Ok(wc) => assert_eq!(wc.status, WcStatus::Success),
        Err(_) => {
            eprintln!("victim: the waiter for a message from {what} did not return within 2 s");
            std::process::exit(3)
        }
    }
}

/// Threads of the victim sleep without a time limit on receive queues while the hostile peer
/// writes 0 over every sleeper's announcement in the victim's wake words; a message then
/// arrives: on the honest connection (from a sender that wakes sleepers it sees announced),
/// and on the hostile one (without any wake-up: the victim's progress thread finds it). Each
/// waiter must return.
fn victim_zeroed_sleepers(v: &Victim, p: u64) {
    let (ep, _l) = v.accept_hostile(p);
    assert_eq!(ep.event().0, ConnEvent::Established);
    let rx = Buf::new(&ep.pd, 64, ALL);
    let brx = Buf::new(&v.b.pd, 64, ALL);
    v.b.qp.post_recv(20, &[brx.sge(0, 64)]).unwrap();
    ep.qp.post_recv(21, &[rx.sge(0, 64)]).unwrap();
    send_words(&ep, 1, &[0x5eed]);
    waiter_returns(&v.b.rcq.cq, "the honest peer", || send_words(&v.a, 22, &[0x600d]));
    assert_eq!(brx.word(0), 0x600d);
    waiter_returns(&ep.rcq.cq, "the hostile peer", || send_words(&ep, 2, &[0x90]));
    assert_eq!(rx.word(0), 0x5eed);
}

#[test]
fn a_peer_zeroing_the_sleepers_announcement_loses_no_wake_up() {
    case("zeroed_sleepers", 20, |p| {
        let mut peer = RawPeer::connect(p, Files::default(), T)?;
        assert_eq!(words(&peer.next_send(T)?), [0x5eed]);
        let end = Instant::now() + T;
        loop {
            peer.zero_sleeping_words();
            if peer.next_send(Duration::ZERO).is_ok() {
                // The victim's waiter sleeps: a message without a wake-up.
                peer.send_without_wake_up(&bytes(&[0x5eed]))?;
            }
            if peer.closed_by_other(Duration::ZERO) {
                return Ok(());
            }
            if Instant::now() > end {
                return Err(fail("the victim kept the hostile connection".into()));
            }
        }
    });
}
