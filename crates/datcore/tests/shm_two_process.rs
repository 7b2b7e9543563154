//! Two-process tests of the `shm` provider. The test binary re-executes itself as the peer:
//! `SHM_PEER_ROLE` selects what the peer does (see `peer_main`), `SHM_PEER_PORT` where it
//! connects. The parent always listens; the peer always connects.

mod shm_common;

use datcore::codes::*;
use datcore::provider::shm::NO_LISTENER_GRACE;
use datcore::provider::*;
use datcore::DatResult;
use shm_common::*;
use std::net::SocketAddr;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Entry point of the peer process (ignored when run normally).
#[test]
#[ignore]
fn peer_main() {
    let Ok(role) = std::env::var("SHM_PEER_ROLE") else { return };
    let p: u64 = std::env::var("SHM_PEER_PORT").unwrap().parse().unwrap();
    let dev = open();
    if role == "ud" {
        peer_ud(&dev, p);
        std::process::exit(0);
    }
    if role == "ud_receiver" {
        peer_ud_receiver(&dev, p);
        std::process::exit(0);
    }
    if role == "many_on_one_cq" {
        peer_many_on_one_cq(&dev, p);
        std::process::exit(0);
    }
    let ep = Ep::new(&dev);
    let timeout = (role == "client_timeout").then(|| Duration::from_millis(300));
    ep.qp.connect(local(), p, b"hello-from-client", timeout).unwrap();
    match role.as_str() {
        "client_pd" => {
            assert_eq!(ep.event(), (ConnEvent::Established, b"welcome".to_vec()));
            assert_eq!(ep.event().0, ConnEvent::Disconnected);
        }
        "client_reject" => assert_eq!(ep.event(), (ConnEvent::PeerRejected, b"not now".to_vec())),
        "client_timeout" => assert_eq!(ep.event().0, ConnEvent::TimedOut),
        "echo" => peer_echo(&ep),
        "rdma_target" => peer_rdma_target(&ep),
        "rdma_hammer" => peer_rdma_hammer(&ep),
        "shared_lmr" => peer_shared_lmr(&ep),
        "ext_target" => peer_ext_target(&ep),
        "ud" | "ud_receiver" => unreachable!("the UD peers have their own endpoints"),
        "atomic_hammer" => peer_atomic_hammer(&ep),
        "two_sends" => peer_two_sends(&ep),
        "many_on_one_cq" => unreachable!("made below"),
        "flush" => {
            assert_eq!(ep.event().0, ConnEvent::Established);
            let b = Buf::new(&ep.pd, 64, ALL);
            for i in 0..3 {
                ep.qp.post_recv(100 + i, &[b.sge(0, 64)]).unwrap();
            }
            assert_eq!(ep.event().0, ConnEvent::Disconnected);
            for i in 0..3 {
                let wc = ep.rcq.expect();
                assert_eq!((wc.wr_id, wc.status, wc.context), (100 + i, WcStatus::Flushed, 0xc0ffee));
            }
        }
        "idle" => {
            assert_eq!(ep.event().0, ConnEvent::Established);
            std::thread::sleep(Duration::from_secs(30));
        }
        r => panic!("unknown role {r}"),
    }
    std::process::exit(0);
}

/// Connections of [`many_connections_on_one_cq_each_message_seen_by_polls`].
const MANY: u64 = 24;
/// Messages each way in that test.
const MANY_ROUNDS: u64 = 600;

/// Opens [`MANY`] connections whose queue pairs complete on one send and one receive queue
/// (more than `DOORBELL_QPS`: the queue skips idle connections until a producer rings), then
/// echoes every message back on its connection, driving the data path by polls alone.
fn peer_many_on_one_cq(dev: &Arc<dyn Device>, p: u64) {
    let (scq, rcq) = (Cq::new(dev), Cq::new(dev));
    let pd = dev.alloc_pd().unwrap();
    let buf = Buf::new(&pd, (MANY * 64) as usize, ALL);
    let mut eps = Vec::new();
    for i in 0..MANY {
        let ev = Q::new();
        let qp = dev
            .create_qp(QpInit {
                pd: pd.clone(),
                send_cq: Some(scq.cq.clone()),
                recv_cq: Some(rcq.cq.clone()),
                srq: None,
                caps: QpCaps {
                    max_send_wr: 16,
                    max_recv_wr: 16,
                    max_send_sge: 1,
                    max_recv_sge: 1,
                    max_rdma_read_in: 1,
                    max_rdma_read_out: 1,
                },
                context: i,
                events: Arc::new(ConnQ(ev.clone(), Q::new())),
                datagram: false,
            })
            .unwrap();
        qp.post_recv(i, &[buf.sge(i as usize * 64, 64)]).unwrap();
        qp.connect(local(), p, &i.to_le_bytes(), None).unwrap();
        assert_eq!(ev.wait(T).expect("established").0, ConnEvent::Established);
        eps.push((qp, ev));
    }
    let mut out = [WorkCompletion::EMPTY; 8];
    let deadline = Instant::now() + T;
    let mut echoed = 0;
    while echoed < MANY_ROUNDS {
        assert!(Instant::now() < deadline, "{echoed} of {MANY_ROUNDS} messages seen");
        let mut sent = [WorkCompletion::EMPTY; 8];
        scq.cq.poll(&mut sent);
        let n = rcq.cq.poll(&mut out);
        for wc in &out[..n] {
            assert_eq!((wc.status, wc.byte_len, wc.context), (WcStatus::Success, 8, wc.wr_id));
            let i = wc.wr_id;
            let at = i as usize * 64;
            let qp = &eps[i as usize].0;
            qp.post_send(&SendWr {
                wr_id: i,
                op: SendOp::Send,
                sges: &[buf.sge(at, 8)],
                signaled: true,
                solicited: false,
                fence: false,
            })
            .unwrap();
            qp.post_recv(i, &[buf.sge(at, 64)]).unwrap();
            echoed += 1;
        }
    }
    for (_, ev) in &eps {
        assert_eq!(ev.wait(T).expect("disconnected").0, ConnEvent::Disconnected);
    }
}

/// A queue with many connections skips the idle ones at a poll until a producer rings (the
/// doorbell); every message on any of them is still seen by polls alone, promptly: the peer
/// runs without the progress thread's periodic look (`DAT_SHM_LOOK_US=0`), which would
/// otherwise step a connection whose work waited since its previous look.
#[test]
fn many_connections_on_one_cq_each_message_seen_by_polls() {
    let dev = open();
    let p = port(60);
    let crs = Q::new();
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    let child = spawn("many_on_one_cq", p, &[("DAT_SHM_LOOK_US", "0")]);
    let mut eps = Vec::new();
    for _ in 0..MANY {
        let req = crs.wait(T).expect("no connect request");
        let i = u64::from_le_bytes(req.private_data().try_into().unwrap());
        let ep = Ep::new(&dev);
        ep.qp.accept(&req, b"").unwrap();
        assert_eq!(ep.event().0, ConnEvent::Established);
        eps.push((i, ep));
    }
    eps.sort_by_key(|(i, _)| *i);
    let mut bufs: Vec<Buf> = eps.iter().map(|(_, ep)| Buf::new(&ep.pd, 16, ALL)).collect();
    for round in 0..MANY_ROUNDS {
        // One connection after another, out of order.
        let k = (round * 7 % MANY) as usize;
        let (i, ep) = &eps[k];
        let b = &mut bufs[k];
        b.mem[..8].copy_from_slice(&round.to_le_bytes());
        ep.qp.post_recv(round, &[b.sge(8, 8)]).unwrap();
        ep.send(round, &[b.sge(0, 8)]);
        let s = ep.scq.expect();
        assert_eq!((s.wr_id, s.status), (round, WcStatus::Success));
        let r = ep.rcq.wait(Duration::from_secs(2)).unwrap_or_else(|| panic!("round {round}: connection {i}: no echo"));
        assert_eq!((r.wr_id, r.status, r.byte_len), (round, WcStatus::Success, 8));
        assert_eq!(b.mem[8..16], round.to_le_bytes(), "round {round}: the echo");
    }
    for (_, ep) in &eps {
        ep.qp.disconnect(true).unwrap();
        assert_eq!(ep.event().0, ConnEvent::Disconnected);
    }
    wait_child(child);
}

/// Sends two 8-byte messages (0x5a bytes, then 0xa5): the first one's receive is refused at
/// the target, the second one lands.
fn peer_two_sends(ep: &Ep) {
    assert_eq!(ep.event().0, ConnEvent::Established);
    let mut b = Buf::new(&ep.pd, 16, ALL);
    b.fill(|i| if i < 8 { 0x5a } else { 0xa5 });
    ep.send(1, &[b.sge(0, 8)]);
    assert_eq!(ep.scq.expect().status, WcStatus::RemoteOperation);
    ep.send(2, &[b.sge(8, 8)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
}

/// Echoes every message back until disconnected.
fn peer_echo(ep: &Ep) {
    assert_eq!(ep.event().0, ConnEvent::Established);
    const N: usize = 4;
    const SZ: usize = 2 << 20;
    let b = Buf::new(&ep.pd, N * SZ, ALL);
    for i in 0..N {
        ep.qp.post_recv(i as u64, &[b.sge(i * SZ, SZ)]).unwrap();
    }
    loop {
        let Some(wc) = ep.rcq.wait(Duration::from_millis(20)) else {
            if let Some((ev, _)) = ep.ev.wait(Duration::ZERO) {
                assert_eq!(ev, ConnEvent::Disconnected);
                return;
            }
            continue;
        };
        if wc.status == WcStatus::Flushed {
            continue;
        }
        assert_eq!(wc.status, WcStatus::Success);
        let i = wc.wr_id as usize;
        ep.send(1000 + wc.wr_id, &[b.sge(i * SZ, wc.byte_len as usize)]);
        let s = ep.scq.expect();
        assert_eq!(s.status, WcStatus::Success);
        ep.qp.post_recv(wc.wr_id, &[b.sge(i * SZ, SZ)]).unwrap();
    }
}

/// Exposes memory for RDMA and reports what it sees.
fn peer_rdma_target(ep: &Ep) {
    assert_eq!(ep.event().0, ConnEvent::Established);
    let big = Buf::new(&ep.pd, 2 << 20, ALL);
    let ro = Buf::new(&ep.pd, 4096, Access { remote_write: false, ..ALL });
    let wo = Buf::new(&ep.pd, 4096, Access { remote_read: false, ..ALL });
    let mw = ep.pd.alloc_mw().unwrap();
    let mw_rkey = ep
        .qp
        .bind_mw(&BindWr {
            wr_id: 77,
            mw: &mw,
            mr: &big.mr,
            addr: big.addr() + 4096,
            length: 4096,
            access: Access { remote_write: true, ..Access::default() },
            signaled: true,
        })
        .unwrap();
    let wc = ep.scq.expect();
    assert_eq!((wc.wr_id, wc.opcode, wc.status), (77, WcOpcode::Bind, WcStatus::Success));
    assert_eq!(mw.rkey(), mw_rkey);
    // recv #0: small (16 B) for the too-long test; recv #1: the "go" message.
    let rb = Buf::new(&ep.pd, 4096, ALL);
    ep.qp.post_recv(0, &[rb.sge(0, 16)]).unwrap();
    ep.qp.post_recv(1, &[rb.sge(1024, 1024)]).unwrap();
    let mut desc = Buf::new(&ep.pd, 128, ALL);
    let words = [
        big.addr(),
        big.mr.rkey() as u64,
        ro.addr(),
        ro.mr.rkey() as u64,
        wo.addr(),
        wo.mr.rkey() as u64,
        big.addr() + 4096,
        mw_rkey as u64,
    ];
    for (i, w) in words.iter().enumerate() {
        desc.mem[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    ep.send(5, &[desc.sge(0, 64)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    // The parent sends 64 B into our 16 B receive.
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status), (0, WcStatus::LocalLength));
    desc.mem[0] = 0x11; // "saw LocalLength"
    ep.send(6, &[desc.sge(0, 1)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    // "go": check what the parent wrote into `wo` and the window, then report a checksum.
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status), (1, WcStatus::Success));
    let sum: u64 = wo.bytes()[..100].iter().map(|&b| b as u64).sum::<u64>()
        + big.bytes()[4096..4196].iter().map(|&b| b as u64).sum::<u64>();
    desc.mem[..8].copy_from_slice(&sum.to_le_bytes());
    ep.send(7, &[desc.sge(0, 8)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    drop((ro, wo, big, mw));
}

/// RDMA-writes 1 MiB of 0xab to the region the parent names, again and again, until a write
/// fails (the parent freed the region); then reports how many landed.
fn peer_rdma_hammer(ep: &Ep) {
    assert_eq!(ep.event().0, ConnEvent::Established);
    let rb = Buf::new(&ep.pd, 64, ALL);
    ep.qp.post_recv(0, &[rb.sge(0, 16)]).unwrap();
    let wc = ep.rcq.expect();
    assert_eq!(wc.status, WcStatus::Success);
    let word = |i: usize| u64::from_le_bytes(rb.bytes()[i * 8..i * 8 + 8].try_into().unwrap());
    let (addr, rkey) = (word(0), word(1) as u32);
    let mut src = Buf::new(&ep.pd, HAMMER, ALL);
    src.fill(|_| 0xab);
    let mut landed = 0u64;
    loop {
        ep.op(landed, SendOp::RdmaWrite { remote_addr: addr, rkey }, &[src.sge(0, HAMMER)], true).unwrap();
        let wc = ep.scq.expect();
        if wc.status != WcStatus::Success {
            assert_eq!(wc.status, WcStatus::RemoteAccess);
            break;
        }
        landed += 1;
    }
    src.mem[..8].copy_from_slice(&landed.to_le_bytes());
    ep.send(1, &[src.sge(0, 8)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
}

const HAMMER: usize = 1 << 20;

// ---- tests ------------------------------------------------------------------------------------

/// Once deregistration returns, no peer copy into the region happens any more (the initiator's
/// in-flight mark protocol), although the peer was writing it in a loop.
#[test]
fn dereg_waits_out_peer_writes() {
    dereg_waits_out(&mut vec![0u8; HAMMER], 12);
}

/// The same with the region in a memfd: the peer writes through its own mapping of it, and
/// its next write after the free fails instead of landing in the (still shared) pages.
#[test]
fn dereg_waits_out_peer_writes_into_shared_memory() {
    dereg_waits_out(SharedMem::memfd(HAMMER).bytes(), 13);
}

fn dereg_waits_out(target: &mut [u8], n: u64) {
    let dev = open();
    let ep = Ep::new(&dev);
    let (_l, _, child) = accept_one(&dev, port(n), &ep, b"", "rdma_hammer", &[]);
    let mr = ep.pd.reg_mr(target.as_ptr() as u64, HAMMER as u64, ALL).unwrap();
    let rb = Buf::new(&ep.pd, 64, ALL);
    ep.qp.post_recv(0, &[rb.sge(0, 64)]).unwrap();
    let mut desc = Buf::new(&ep.pd, 16, ALL);
    desc.mem[..8].copy_from_slice(&(target.as_ptr() as u64).to_le_bytes());
    desc.mem[8..].copy_from_slice(&(mr.rkey() as u64).to_le_bytes());
    ep.send(9, &[desc.sge(0, 16)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    // Let writes land, then free the region in the middle of them.
    let end = Instant::now() + T;
    while std::hint::black_box(&*target)[HAMMER - 1] != 0xab {
        assert!(Instant::now() < end, "no RDMA write landed");
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(20));
    drop(mr);
    // From here on the bytes are ours alone: write a marker and check nothing overwrites it.
    target.fill(0x5a);
    let wc = ep.rcq.expect();
    assert_eq!(wc.status, WcStatus::Success);
    let landed = u64::from_le_bytes(rb.bytes()[..8].try_into().unwrap());
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    let late = std::hint::black_box(&*target).iter().filter(|&&b| b != 0x5a).count();
    assert_eq!(late, 0, "{late} bytes written after the region was freed ({landed} writes landed)");
    assert!(landed > 0);
    ep.qp.disconnect(true).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    wait_child(child);
}

// ---- shared-memory LMRs: the initiator copies through its own mapping ---------------------------

/// Memory in a shared mapping another process can map: a memfd sealed against shrinking or a
/// System V segment (removed at once: it lives while attached).
struct SharedMem {
    ptr: *mut u8,
    len: usize,
    /// What names it in /proc/<pid>/maps.
    id: MapsId,
    _fd: Option<std::os::fd::OwnedFd>,
}

impl SharedMem {
    fn memfd(len: usize) -> SharedMem {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        use std::os::unix::fs::MetadataExt;
        // SAFETY: NUL-terminated name; the result is checked.
        let raw = unsafe { libc::memfd_create(MEMFD_NAME.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
        assert!(raw >= 0);
        // SAFETY: a fresh descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let file = std::fs::File::from(fd.try_clone().unwrap());
        file.set_len(len as u64).unwrap();
        // Peers map only memory files nobody can shrink under them.
        // SAFETY: fcntl on our own descriptor.
        assert_eq!(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, libc::F_SEAL_SHRINK) }, 0);
        let ino = file.metadata().unwrap().ino();
        // SAFETY: mapping our own file; checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        SharedMem { ptr: p as *mut u8, len, id: MapsId { ino, sysv: false }, _fd: Some(fd) }
    }

    fn sysv(len: usize) -> SharedMem {
        // SAFETY: plain System V calls; each result is checked.
        unsafe {
            let id = libc::shmget(libc::IPC_PRIVATE, len, libc::IPC_CREAT | 0o600);
            assert!(id >= 0);
            let p = libc::shmat(id, std::ptr::null(), 0);
            assert_ne!(p as isize, -1);
            libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
            SharedMem { ptr: p as *mut u8, len, id: MapsId { ino: id as u64, sysv: true }, _fd: None }
        }
    }

    fn bytes(&self) -> &'static mut [u8] {
        // SAFETY: the mapping is len bytes; tests keep the SharedMem alive while they use it
        // (it is leaked: a freed LMR's memory must stay valid for the late-write checks).
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for SharedMem {
    fn drop(&mut self) {
        // SAFETY: unmapping what new() mapped, once.
        unsafe {
            if self.id.sysv {
                libc::shmdt(self.ptr as *const libc::c_void);
            } else {
                libc::munmap(self.ptr as *mut libc::c_void, self.len);
            }
        }
    }
}

/// The name of the tests' memfds; /proc/<pid>/maps shows `/memfd:<name> (deleted)`.
const MEMFD_NAME: &std::ffi::CStr = c"dat-test";

/// How /proc/<pid>/maps names a [`SharedMem`]: a shared mapping with this inode (a segment's is
/// its shmid) and the path of its kind (`/SYSV<key>` or the memfd's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MapsId {
    ino: u64,
    sysv: bool,
}

impl MapsId {
    /// Two words for the peer.
    fn words(self) -> [u64; 2] {
        [self.ino, self.sysv as u64]
    }
    fn from_words(w: &[u64]) -> MapsId {
        MapsId { ino: w[0], sysv: w[1] != 0 }
    }

    /// The lines of `maps` (a `/proc/self/maps` text) that map this memory. The inode alone
    /// does not tell: the kernel's private mappings ([heap], [stack], [vdso], ...) show inode 0,
    /// which is also the shmid of the first segment after a boot (or in a new IPC namespace),
    /// and segments and memfds live on one device, so a shmid can equal a memfd's inode.
    fn mappings_in(self, maps: &str) -> usize {
        let ino = self.ino.to_string();
        let memfd = format!("/memfd:{}", MEMFD_NAME.to_str().unwrap());
        let prefix = if self.sysv { "/SYSV" } else { memfd.as_str() };
        maps.lines()
            .filter(|l| {
                // start-end perms offset dev inode path
                let mut fields = l.split_ascii_whitespace();
                let shared = fields.nth(1).is_some_and(|perms| perms.ends_with('s'));
                shared && fields.nth(2) == Some(ino.as_str()) && fields.next().is_some_and(|p| p.starts_with(prefix))
            })
            .count()
    }

    /// The mappings of this memory in this process.
    fn mappings(self) -> usize {
        self.mappings_in(&std::fs::read_to_string("/proc/self/maps").unwrap())
    }
}

#[test]
fn maps_id_counts_only_its_memory() {
    let maps = "\
559da76a1000-559da76c2000 rw-p 00000000 00:00 0                          [heap]
7f83fa903000-7f83faa03000 rw-s 00000000 00:01 0                          /SYSV00000000 (deleted)
7f83fab03000-7f83fac46000 rw-p 00000000 00:00 0 
7f83fac46000-7f83fad87000 rw-s 00000000 00:01 1054                       /memfd:dat-shm (deleted)
7f83fad87000-7f83fae87000 rw-s 00000000 00:01 32768                      /memfd:dat-test (deleted)
7f83fae87000-7f83faf87000 rw-s 00000000 00:01 32768                      /SYSV00000000 (deleted)
7f83fb1c7000-7f83fb1c8000 ---p 00000000 00:00 0
7ffd4b5e2000-7ffd4b603000 rw-p 00000000 00:00 0                          [stack]
7ffd4b7b2000-7ffd4b7b6000 r--p 00000000 00:00 0                          [vvar]
7ffd4b7b6000-7ffd4b7b8000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
";
    let sysv = |ino| MapsId { ino, sysv: true };
    let memfd = |ino| MapsId { ino, sysv: false };
    assert_eq!(sysv(0).mappings_in(maps), 1, "segment 0 told apart from the kernel's private mappings");
    assert_eq!(sysv(32768).mappings_in(maps), 1, "a segment told apart from a memfd with its number");
    assert_eq!(memfd(32768).mappings_in(maps), 1);
    assert_eq!(memfd(1054).mappings_in(maps), 0, "another memfd");
    assert_eq!(memfd(0).mappings_in(maps), 0);
    assert_eq!(sysv(7).mappings_in(maps), 0);
    assert_eq!(MapsId::from_words(&sysv(5).words()), sysv(5));
}

/// The parent registers shared memory (a read-write region with a write-only window in it, a
/// read-only region); the peer checks the direct path: its RDMA write lands and maps the
/// memory into the peer, rkey, bounds and rights are refused there as on every path, and after
/// the parent frees the region and the window the peer's next writes fail and its mappings of
/// them are gone; when the connection ends, so is the last one. `extra` is the peer's
/// environment.
fn shared_lmr(mem: SharedMem, n: u64, extra: &[(&str, &str)]) {
    let dev = open();
    let ep = Ep::new(&dev);
    let (_l, _, child) = accept_one(&dev, port(n), &ep, b"", "shared_lmr", extra);
    let m = mem.bytes();
    let half = (mem.len / 2) as u64;
    let base = mem.ptr as u64;
    let rw = ep.pd.reg_mr(base, half, ALL).unwrap();
    let ro = ep.pd.reg_mr(base + half, half, Access { remote_write: false, ..ALL }).unwrap();
    // A write-only window on the read-write region's second page.
    let mw = ep.pd.alloc_mw().unwrap();
    let win = base + 4096;
    let bind = BindWr {
        wr_id: 8,
        mw: &mw,
        mr: &rw,
        addr: win,
        length: 4096,
        access: Access { remote_write: true, ..Access::default() },
        signaled: true,
    };
    let win_k = ep.qp.bind_mw(&bind).unwrap();
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    let rb = Buf::new(&ep.pd, 256, ALL);
    ep.qp.post_recv(0, &[rb.sge(0, 64)]).unwrap();
    ep.qp.post_recv(1, &[rb.sge(64, 64)]).unwrap();
    let mut desc = Buf::new(&ep.pd, DESC, ALL);
    let [id0, id1] = mem.id.words();
    let words = [base, rw.rkey() as u64, base + half, ro.rkey() as u64, half, win, win_k as u64, id0, id1];
    for (i, w) in words.iter().enumerate() {
        desc.mem[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    ep.send(9, &[desc.sge(0, DESC)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    // Phase 1 done: the peer wrote i % 251 over the whole read-write region.
    assert_eq!(ep.rcq.expect().status, WcStatus::Success);
    assert!(m[..half as usize].iter().enumerate().all(|(i, &b)| b == (i % 251) as u8), "peer's write");
    assert!(m[half as usize..].iter().all(|&b| b == 0), "the read-only region was written");
    drop(mw);
    drop(rw);
    m[..half as usize].fill(0x5a);
    ep.send(10, &[desc.sge(0, 8)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    // Phase 2 done: the peer's write to the freed region failed.
    assert_eq!(ep.rcq.expect().status, WcStatus::Success);
    assert!(m[..half as usize].iter().all(|&b| b == 0x5a), "written after the free");
    drop(ro);
    ep.qp.disconnect(true).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    wait_child(child);
    std::mem::forget(mem); // see SharedMem::bytes
}

/// Bytes of the description `shared_lmr` sends its peer: nine words.
const DESC: usize = 72;

fn peer_shared_lmr(ep: &Ep) {
    assert_eq!(ep.event().0, ConnEvent::Established);
    let rb = Buf::new(&ep.pd, 2 * DESC, ALL);
    ep.qp.post_recv(0, &[rb.sge(0, DESC)]).unwrap();
    ep.qp.post_recv(1, &[rb.sge(DESC, DESC)]).unwrap();
    assert_eq!(ep.rcq.expect().status, WcStatus::Success);
    let w: Vec<u64> =
        (0..DESC / 8).map(|i| u64::from_le_bytes(rb.bytes()[i * 8..i * 8 + 8].try_into().unwrap())).collect();
    let (rw, rw_k, ro, ro_k, half) = (w[0], w[1] as u32, w[2], w[3] as u32, w[4] as usize);
    let (win, win_k, parent_mem) = (w[5], w[6] as u32, MapsId::from_words(&w[7..9]));
    let mut src = Buf::new(&ep.pd, half, ALL);
    src.fill(|i| (i % 251) as u8);
    let dst = Buf::new(&ep.pd, half, ALL);
    let status = |wr_id: u64, op: SendOp, sge: Sge| {
        ep.op(wr_id, op, &[sge], true).unwrap();
        let wc = ep.scq.expect();
        assert_eq!(wc.wr_id, wr_id);
        wc.status
    };
    // Two SGEs into the whole region; the copy went through a mapping of the parent's memory.
    ep.op(20, SendOp::RdmaWrite { remote_addr: rw, rkey: rw_k }, &[src.sge(0, 1000), src.sge(1000, half - 1000)], true)
        .unwrap();
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    assert!(parent_mem.mappings() > 0, "no mapping of the parent's shared memory: the direct path was not taken");
    assert_eq!(
        status(21, SendOp::RdmaRead { remote_addr: rw + 3, rkey: rw_k }, dst.sge(0, half - 3)),
        WcStatus::Success
    );
    assert!(dst.bytes()[..half - 3] == src.bytes()[3..], "read-back mismatch");
    // Refused: wrong rkey, out of bounds either way, a write to the read-only region.
    let ra = WcStatus::RemoteAccess;
    assert_eq!(status(30, SendOp::RdmaWrite { remote_addr: rw, rkey: rw_k ^ 0x10000 }, src.sge(0, 8)), ra);
    assert_eq!(status(31, SendOp::RdmaWrite { remote_addr: rw + half as u64 - 4, rkey: rw_k }, src.sge(0, 8)), ra);
    assert_eq!(status(32, SendOp::RdmaRead { remote_addr: rw - 1, rkey: rw_k }, dst.sge(0, 8)), ra);
    assert_eq!(status(33, SendOp::RdmaWrite { remote_addr: ro, rkey: ro_k }, src.sge(0, 8)), ra);
    assert_eq!(status(34, SendOp::RdmaWrite { remote_addr: ro, rkey: rw_k }, src.sge(0, 8)), ra);
    assert_eq!(status(35, SendOp::RdmaRead { remote_addr: ro, rkey: ro_k }, dst.sge(0, 64)), WcStatus::Success);
    // The window (the same pattern again, so the parent's check covers it) and its limits.
    let win_write =
        |wr_id, at: u64, len| status(wr_id, SendOp::RdmaWrite { remote_addr: at, rkey: win_k }, src.sge(4096, len));
    assert_eq!(win_write(36, win, 4096), WcStatus::Success);
    assert_eq!(win_write(37, win + 8, 4096), ra);
    assert_eq!(status(38, SendOp::RdmaRead { remote_addr: win, rkey: win_k }, dst.sge(0, 8)), ra);
    ep.send(40, &[src.sge(0, 1)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    // The parent frees the read-write region, then tells us: the old rkey must fail now, and
    // our mapping of it is gone (the read-only region's mapping stays while it lives).
    assert_eq!(ep.rcq.expect().status, WcStatus::Success);
    assert_eq!(status(50, SendOp::RdmaWrite { remote_addr: rw, rkey: rw_k }, src.sge(0, 64)), ra);
    assert_eq!(win_write(51, win, 64), ra);
    let mappings = std::fs::read_to_string("/proc/self/maps").unwrap();
    let of_parent = parent_mem.mappings_in(&mappings);
    assert_eq!(of_parent, 1, "the freed region's mapping was kept:\n{mappings}");
    ep.send(52, &[src.sge(0, 1)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    assert_eq!(parent_mem.mappings(), 0, "the connection ended but a mapping of the parent's memory stayed");
}

#[test]
fn shared_lmr_memfd() {
    shared_lmr(SharedMem::memfd(4 << 20), 14, &[]);
}

/// Without cross-memory attach the direct path still works (it needs only /proc/<pid>/fd).
#[test]
fn shared_lmr_memfd_without_cma() {
    shared_lmr(SharedMem::memfd(1 << 20), 15, &[("DAT_SHM_NO_CMA", "1")]);
}

#[test]
fn shared_lmr_sysv() {
    shared_lmr(SharedMem::sysv(1 << 20), 16, &[]);
}

#[test]
fn connect_with_private_data_then_disconnect() {
    let dev = open();
    assert_eq!(dev.address(), "127.0.0.1:0".parse::<SocketAddr>().unwrap());
    let ep = Ep::new(&dev);
    let p = port(1);
    let (_l, data, child) = accept_one(&dev, p, &ep, b"welcome", "client_pd", &[]);
    assert_eq!(data, b"hello-from-client");
    ep.qp.disconnect(true).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    wait_child(child);
}

#[test]
fn reject_gives_peer_rejected_with_private_data() {
    let dev = open();
    let p = port(2);
    let crs = Q::new();
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    let child = spawn("client_reject", p, &[]);
    let req = crs.wait(T).unwrap();
    req.reject(b"not now").unwrap();
    wait_child(child);
}

#[test]
fn connect_timeout() {
    let dev = open();
    let p = port(3);
    let crs = Q::new();
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    let child = spawn("client_timeout", p, &[]);
    let _held = crs.wait(T).unwrap(); // never answered
    wait_child(child);
}

#[test]
fn no_listener_and_qualifier_in_use() {
    let dev = open();
    let ep = Ep::new(&dev);
    ep.qp.connect(local(), port(4), b"x", None).unwrap();
    assert_eq!(ep.event().0, ConnEvent::NonPeerRejected);
    let ep2 = Ep::new(&dev);
    ep2.qp.connect("10.255.255.1:0".parse().unwrap(), port(4), b"", None).unwrap();
    assert_eq!(ep2.event().0, ConnEvent::Unreachable);

    let p = port(5);
    let l = dev.listen(p, Arc::new(ListenQ(Q::new()))).unwrap();
    let e = dev.listen(p, Arc::new(ListenQ(Q::new()))).err().unwrap();
    assert_eq!(e.ty(), DAT_CONN_QUAL_IN_USE);
    drop(l);
    let _l2 = dev.listen(p, Arc::new(ListenQ(Q::new()))).unwrap();
}

/// A listener that appears just after the connect still gets the request: Debian's dtest server
/// creates its PSP only after it has told its client where to connect. The connect waits for a
/// listener for `NO_LISTENER_GRACE`; the listener is opened by a thread that sleeps 30 ms first.
/// A try proves something only if the listener started listening after the connect began and
/// before the grace ran out: on a loaded machine the thread can run before the connect, or wake
/// after the grace, and such a try is made again.
#[test]
fn connect_waits_briefly_for_a_late_listener() {
    let dev = open();
    let p = port(6);
    for _ in 0..20 {
        let crs = Q::new();
        let ep = Ep::new(&dev);
        let late = {
            let (dev, crs) = (dev.clone(), crs.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                let opening = Instant::now();
                let l = dev.listen(p, Arc::new(ListenQ(crs))).unwrap();
                (l, opening, Instant::now())
            })
        };
        let connecting = Instant::now();
        ep.qp.connect(local(), p, b"late", None).unwrap();
        let (_listener, opening, listening) = late.join().unwrap();
        if opening < connecting || listening >= connecting + NO_LISTENER_GRACE {
            continue;
        }
        let req = crs.wait(T).expect("no connection request at the late listener");
        assert_eq!(req.private_data(), b"late");
        req.reject(b"").unwrap();
        assert_eq!(ep.event().0, ConnEvent::PeerRejected);
        return;
    }
    panic!("in 20 tries the listener never opened within the connect's grace");
}

/// An abrupt disconnect's DISCONNECTED event is not lost when the QP is dropped right after it
/// (dat_ep_disconnect then dat_ep_free, as Debian's dtestcm does).
#[test]
fn abrupt_disconnect_then_drop_reports_disconnected() {
    let dev = open();
    let ep = Ep::new(&dev);
    let (_l, _, child) = accept_one(&dev, port(7), &ep, b"", "echo", &[]);
    ep.qp.disconnect(false).unwrap();
    let Ep { qp, ev, .. } = ep;
    drop(qp);
    assert_eq!(ev.wait(T).map(|e| e.0), Some(ConnEvent::Disconnected));
    wait_child(child);
}

fn ping_pong(extra: &[(&str, &str)], n: u64) {
    let dev = open();
    let ep = Ep::new(&dev);
    let p = port(10 + n);
    let (_l, _, child) = accept_one(&dev, p, &ep, b"", "echo", extra);
    let mut tx = Buf::new(&ep.pd, 3 << 20, ALL);
    let rx = Buf::new(&ep.pd, 4 << 20, ALL);
    for (round, len) in [1usize, 64, 100, 4000, 9000, 70_000, 1 << 20, 0, 3].into_iter().enumerate() {
        tx.fill(|i| (i * 7 + round * 13) as u8);
        // Receive scattered over three SGEs; send gathered from two.
        let a = len / 3;
        ep.qp.post_recv(round as u64, &[rx.sge(0, a), rx.sge(1 << 20, a), rx.sge(2 << 20, len + 16)]).unwrap();
        let h = len / 2;
        ep.send(500 + round as u64, &[tx.sge(0, h), tx.sge(h + 4096, len - h)]);
        let s = ep.scq.expect();
        assert_eq!((s.wr_id, s.status, s.opcode), (500 + round as u64, WcStatus::Success, WcOpcode::Send));
        let r = ep.rcq.expect();
        assert_eq!(
            (r.wr_id, r.status, r.opcode, r.byte_len),
            (round as u64, WcStatus::Success, WcOpcode::Recv, len as u64)
        );
        let expect: Vec<u8> =
            tx.bytes()[..h].iter().chain(&tx.bytes()[h + 4096..h + 4096 + len - h]).copied().collect();
        let got: Vec<u8> = rx.bytes()[..a]
            .iter()
            .chain(&rx.bytes()[1 << 20..(1 << 20) + a])
            .chain(&rx.bytes()[2 << 20..(2 << 20) + len - 2 * a])
            .copied()
            .collect();
        assert!(got == expect, "data mismatch at len {len}");
    }
    ep.qp.disconnect(true).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    wait_child(child);
}

/// A small send whose receive lost its registration after it was posted is refused
/// (LocalProtection here, RemoteOperation at the sender) and writes nothing; the next one lands.
#[test]
fn receive_into_a_deregistered_region_is_refused() {
    let dev = open();
    let ep = Ep::new(&dev);
    let Buf { mem: gone, mr: gone_mr } = Buf::new(&ep.pd, 64, ALL);
    let gone_sge = Sge { addr: gone.as_ptr() as u64, length: 64, lkey: gone_mr.lkey() };
    ep.qp.post_recv(1, &[gone_sge]).unwrap();
    drop(gone_mr);
    let rx = Buf::new(&ep.pd, 64, ALL);
    ep.qp.post_recv(2, &[rx.sge(0, 64)]).unwrap();
    let (_l, _, child) = accept_one(&dev, port(60), &ep, b"", "two_sends", &[]);
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status), (1, WcStatus::LocalProtection));
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.byte_len), (2, WcStatus::Success, 8));
    assert_eq!(&rx.bytes()[..9], &[0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0]);
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    assert!(gone.iter().all(|&b| b == 0), "a refused receive wrote nothing");
    ep.qp.disconnect(false).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    wait_child(child);
}

#[test]
fn send_recv_ping_pong_multi_sge() {
    ping_pong(&[], 0);
}

#[test]
fn send_recv_ping_pong_inline_fallback() {
    ping_pong(&[("DAT_SHM_NO_CMA", "1")], 1);
}

fn rdma(extra: &[(&str, &str)], n: u64) {
    let dev = open();
    let ep = Ep::new(&dev);
    let p = port(20 + n);
    let (_l, _, child) = accept_one(&dev, p, &ep, b"", "rdma_target", extra);
    let rb = Buf::new(&ep.pd, 4096, ALL);
    ep.qp.post_recv(1, &[rb.sge(0, 64)]).unwrap();
    ep.qp.post_recv(2, &[rb.sge(64, 64)]).unwrap();
    ep.qp.post_recv(3, &[rb.sge(128, 64)]).unwrap();
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status), (1, WcStatus::Success));
    let w: Vec<u64> = (0..8).map(|i| u64::from_le_bytes(rb.bytes()[i * 8..i * 8 + 8].try_into().unwrap())).collect();
    let (big, big_k, ro, ro_k, wo, wo_k, win, win_k) =
        (w[0], w[1] as u32, w[2], w[3] as u32, w[4], w[5] as u32, w[6], w[7] as u32);

    // Too-long send: receiver sees LocalLength (reported back), we see an error.
    let mut src = Buf::new(&ep.pd, 2 << 20, ALL);
    ep.send(10, &[src.sge(0, 64)]);
    assert_ne!(ep.scq.expect().status, WcStatus::Success);
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, rb.bytes()[64]), (2, 0x11));

    // RDMA write 1 MiB + 3 bytes in two SGEs, read it back into another buffer, compare.
    let len = (1 << 20) + 3;
    src.fill(|i| (i % 251) as u8);
    let write = SendOp::RdmaWrite { remote_addr: big + 5, rkey: big_k };
    ep.op(20, write, &[src.sge(0, 1000), src.sge(1000, len - 1000)], true).unwrap();
    let wc = ep.scq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.opcode), (20, WcStatus::Success, WcOpcode::RdmaWrite));
    let dst = Buf::new(&ep.pd, 2 << 20, ALL);
    let read = SendOp::RdmaRead { remote_addr: big + 5, rkey: big_k };
    ep.op(21, read, &[dst.sge(0, 7), dst.sge(100, len - 7)], true).unwrap();
    let wc = ep.scq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.opcode, wc.byte_len), (21, WcStatus::Success, WcOpcode::RdmaRead, len as u64));
    assert!(
        dst.bytes()[..7] == src.bytes()[..7] && dst.bytes()[100..100 + len - 7] == src.bytes()[7..len],
        "read-back mismatch"
    );

    // Remote violations: wrong rkey, out of bounds, missing rights.
    let bad = |wr_id: u64, op: SendOp, sge: Sge| {
        ep.op(wr_id, op, &[sge], true).unwrap();
        let wc = ep.scq.expect();
        assert_eq!((wc.wr_id, wc.status), (wr_id, WcStatus::RemoteAccess), "op {wr_id}");
    };
    bad(30, SendOp::RdmaWrite { remote_addr: big, rkey: big_k ^ 0x10000 }, src.sge(0, 8));
    bad(31, SendOp::RdmaWrite { remote_addr: big + (2 << 20) - 4, rkey: big_k }, src.sge(0, 8));
    bad(32, SendOp::RdmaRead { remote_addr: big - 1, rkey: big_k }, dst.sge(0, 8));
    bad(33, SendOp::RdmaWrite { remote_addr: ro, rkey: ro_k }, src.sge(0, 8));
    bad(34, SendOp::RdmaRead { remote_addr: wo, rkey: wo_k }, dst.sge(0, 8));
    bad(35, SendOp::RdmaWrite { remote_addr: win + 4090, rkey: win_k }, src.sge(0, 8)); // past the window
    bad(36, SendOp::RdmaRead { remote_addr: win, rkey: win_k }, dst.sge(0, 8)); // window is write-only
    bad(37, SendOp::RdmaWrite { remote_addr: big, rkey: win_k }, src.sge(0, 8)); // MR part outside window
                                                                                 // Allowed: read-only region can be read, write-only region and the window written.
    ep.op(40, SendOp::RdmaRead { remote_addr: ro, rkey: ro_k }, &[dst.sge(0, 16)], true).unwrap();
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    ep.op(41, SendOp::RdmaWrite { remote_addr: wo, rkey: wo_k }, &[src.sge(0, 100)], true).unwrap();
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    // Unsignaled: no completion on success; the final signaled write proves ordering.
    for i in 0..10 {
        ep.op(50 + i, SendOp::RdmaWrite { remote_addr: win, rkey: win_k }, &[src.sge(100, 100)], false).unwrap();
    }
    ep.op(60, SendOp::RdmaWrite { remote_addr: win, rkey: win_k }, &[src.sge(100, 100)], true).unwrap();
    let wc = ep.scq.expect();
    assert_eq!((wc.wr_id, wc.status), (60, WcStatus::Success));
    assert!(ep.scq.wait(Duration::from_millis(50)).is_none());

    // Local violations are refused synchronously.
    let err = |r: DatResult<()>| r.expect_err("post should fail").ty();
    let foreign_pd = ep.dev.alloc_pd().unwrap();
    let foreign = Buf::new(&foreign_pd, 64, ALL);
    let ro_local = Buf::new(&ep.pd, 64, Access { local_read: true, ..Access::default() });
    let mut s = src.sge(0, 8);
    s.lkey ^= 0x20000;
    assert_eq!(err(ep.op(70, SendOp::Send, &[s], true)), DAT_PROTECTION_VIOLATION);
    assert_eq!(err(ep.op(71, SendOp::Send, &[src.sge((2 << 20) - 4, 8)], true)), DAT_PROTECTION_VIOLATION);
    assert_eq!(err(ep.op(72, SendOp::Send, &[foreign.sge(0, 8)], true)), DAT_PROTECTION_VIOLATION);
    assert_eq!(
        err(ep.op(73, SendOp::RdmaRead { remote_addr: ro, rkey: ro_k }, &[ro_local.sge(0, 8)], true)),
        DAT_PROTECTION_VIOLATION
    );
    assert_eq!(ep.qp.post_recv(74, &[ro_local.sge(0, 8)]).err().unwrap().ty(), DAT_PROTECTION_VIOLATION);

    // "go": the target sums what we wrote into `wo` and the window.
    ep.send(80, &[src.sge(0, 4)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Success);
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status), (3, WcStatus::Success));
    let expect: u64 = src.bytes()[..100].iter().chain(&src.bytes()[100..200]).map(|&b| b as u64).sum();
    assert_eq!(u64::from_le_bytes(rb.bytes()[128..136].try_into().unwrap()), expect);
    ep.qp.disconnect(true).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    wait_child(child);
}

#[test]
fn rdma_write_read_and_protection() {
    rdma(&[], 0);
}

#[test]
fn rdma_inline_fallback() {
    rdma(&[("DAT_SHM_NO_CMA", "1")], 1);
}

#[test]
fn disconnect_flushes_both_sides() {
    let dev = open();
    let ep = Ep::new(&dev);
    let p = port(30);
    let (_l, _, child) = accept_one(&dev, p, &ep, b"", "flush", &[]);
    let b = Buf::new(&ep.pd, 256, ALL);
    for i in 0..4 {
        ep.qp.post_recv(200 + i, &[b.sge(0, 64)]).unwrap();
    }
    assert_eq!(ep.qp.posted_recvs(), 4);
    std::thread::sleep(Duration::from_millis(100)); // let the peer post its receives
    ep.qp.disconnect(false).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    for i in 0..4 {
        let wc = ep.rcq.expect();
        assert_eq!((wc.wr_id, wc.status, wc.opcode), (200 + i, WcStatus::Flushed, WcOpcode::Recv));
    }
    // Posting after the disconnect flushes at once.
    ep.send(300, &[b.sge(0, 8)]);
    assert_eq!(ep.scq.expect().status, WcStatus::Flushed);
    wait_child(child);
}

#[test]
fn peer_killed_gives_broken_and_flush() {
    let dev = open();
    let ep = Ep::new(&dev);
    let p = port(40);
    let (_l, _, mut child) = accept_one(&dev, p, &ep, b"", "idle", &[]);
    let b = Buf::new(&ep.pd, 1 << 20, ALL);
    ep.qp.post_recv(1, &[b.sge(0, 64)]).unwrap();
    // The peer posts no receives: these sends stay outstanding.
    ep.send(2, &[b.sge(0, 64)]);
    ep.send(3, &[b.sge(0, 1 << 20)]);
    ep.op(4, SendOp::RdmaWrite { remote_addr: 0, rkey: 0 }, &[b.sge(0, 0)], false).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let t0 = Instant::now();
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(ep.event().0, ConnEvent::Broken);
    assert!(t0.elapsed() < Duration::from_secs(2), "death noticed late: {:?}", t0.elapsed());
    let mut sends: Vec<u64> =
        (0..3).map(|_| ep.scq.expect()).inspect(|w| assert_eq!(w.status, WcStatus::Flushed)).map(|w| w.wr_id).collect();
    sends.sort();
    assert_eq!(sends, vec![2, 3, 4]);
    let r = ep.rcq.expect();
    assert_eq!((r.wr_id, r.status), (1, WcStatus::Flushed));
}

#[test]
fn stale_socket_reclaimed() {
    // A listener in a process that dies leaves its socket file; the next listen takes over.
    let dev = open();
    let p = port(50);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "peer_listen_forever", "--ignored", "--nocapture"])
        .env("SHM_PEER_PORT", p.to_string())
        .spawn()
        .unwrap();
    let end = Instant::now() + T;
    loop {
        match dev.listen(p, Arc::new(ListenQ(Q::new()))) {
            Err(e) if e.ty() == DAT_CONN_QUAL_IN_USE => break,
            Ok(l) => {
                drop(l);
                assert!(Instant::now() < end, "peer never listened");
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    child.kill().unwrap();
    let _ = child.wait();
    let _l = dev.listen(p, Arc::new(ListenQ(Q::new()))).unwrap();
}

#[test]
#[ignore]
fn peer_listen_forever() {
    let Ok(p) = std::env::var("SHM_PEER_PORT") else { return };
    let dev = open();
    let _l = loop {
        match dev.listen(p.parse().unwrap(), Arc::new(ListenQ(Q::new()))) {
            Ok(l) => break l,
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    std::thread::sleep(Duration::from_secs(60));
}

// ---- IB extensions: RDMA write with immediate data, atomics ---------------------------------------

const IMMED: u32 = 0xfeed_0001;
const WORD_START: u64 = 100;

/// The target of `ib_extensions`: exposes a word (remote atomic) and a data area, checks the
/// write with immediate data and the word's final value.
fn peer_ext_target(ep: &Ep) {
    assert_eq!(ep.event().0, ConnEvent::Established);
    let mut b = Buf::new(&ep.pd, 4096, ALL);
    let no_atomic = Buf::new(&ep.pd, 64, Access { remote_atomic: false, ..ALL });
    let w = b.aligned(0);
    b.set_word(w, WORD_START);
    // The writes with immediate data consume these receives (their buffers stay untouched).
    ep.qp.post_recv(1, &[b.sge(1024, 64)]).unwrap();
    ep.qp.post_recv(3, &[b.sge(1024, 64)]).unwrap();
    send_words(ep, 5, &[b.addr(), w as u64, b.mr.rkey() as u64, no_atomic.addr(), no_atomic.mr.rkey() as u64]);
    let wc = ep.rcq.expect();
    assert_eq!(
        (wc.wr_id, wc.status, wc.opcode, wc.immed, wc.byte_len),
        (1, WcStatus::Success, WcOpcode::RecvRdmaWriteImmed, IMMED, 100)
    );
    assert!((0..100).all(|i| b.bytes()[2048 + i] == (i as u8) ^ 0x5a), "write with immediate: data");
    let wc = ep.rcq.expect();
    assert_eq!(
        (wc.wr_id, wc.status, wc.opcode, wc.immed, wc.byte_len),
        (3, WcStatus::Success, WcOpcode::RecvRdmaWriteImmed, IMMED + 1, 0),
        "immediate data alone"
    );
    assert!(b.bytes()[1024..1088].iter().all(|&x| x == 0), "the receive buffer is not written");
    // The initiator tells the value it expects once its atomics are done.
    let expect = recv_words(ep, 2, 1)[0];
    assert_eq!(b.word(w), expect, "word after the atomics");
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
}

#[test]
fn ib_extensions_write_immed_and_atomics() {
    let dev = open();
    assert_eq!(dev.attr().extensions, ExtensionCaps { immed_data: true, atomics: true, ud: true });
    let ep = Ep::new(&dev);
    let (_l, _, child) = accept_one(&dev, port(42), &ep, b"", "ext_target", &[]);
    let t = recv_words(&ep, 1, 5);
    let (base, word, rkey, no_atomic, no_atomic_k) = (t[0], t[0] + t[1], t[2] as u32, t[3], t[4] as u32);

    // RDMA write with immediate data: 100 bytes into the target's data area.
    let mut src = Buf::new(&ep.pd, 4096, ALL);
    src.fill(|i| (i as u8) ^ 0x5a);
    let op = SendOp::RdmaWriteImmed { remote_addr: base + 2048, rkey, immed: IMMED };
    ep.op(10, op, &[src.sge(0, 60), src.sge(60, 40)], true).unwrap();
    let wc = ep.scq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.opcode, wc.byte_len), (10, WcStatus::Success, WcOpcode::RdmaWriteImmed, 100));
    ep.op(11, SendOp::RdmaWriteImmed { remote_addr: 0, rkey: 0, immed: IMMED + 1 }, &[], true).unwrap();
    assert_eq!(ep.scq.expect().status, WcStatus::Success);

    // Atomics: results land in the local buffer.
    let res = Buf::new(&ep.pd, 64, ALL);
    let r = res.aligned(0);
    let atomic_into = |sink: &Buf, wr_id: u64, op: AtomicOp, remote_addr: u64, rkey: u32| {
        ep.op(wr_id, SendOp::Atomic { remote_addr, rkey, op }, &[sink.sge(r, 8)], true).unwrap();
        ep.scq.expect()
    };
    let atomic = |wr_id, op, remote_addr, rkey| atomic_into(&res, wr_id, op, remote_addr, rkey);
    let wc = atomic(20, AtomicOp::FetchAdd { add: 5 }, word, rkey);
    assert_eq!((wc.wr_id, wc.status, wc.opcode, wc.byte_len), (20, WcStatus::Success, WcOpcode::FetchAdd, 8));
    assert_eq!(res.word(r), WORD_START);
    let wc = atomic(21, AtomicOp::CmpSwap { compare: WORD_START + 5, swap: 7 }, word, rkey);
    assert_eq!((wc.wr_id, wc.status, wc.opcode), (21, WcStatus::Success, WcOpcode::CmpSwap));
    assert_eq!(res.word(r), WORD_START + 5, "swapped");
    let wc = atomic(22, AtomicOp::CmpSwap { compare: 1, swap: 9 }, word, rkey);
    assert_eq!((wc.status, res.word(r)), (WcStatus::Success, 7), "compare failed: no swap");
    // Violations complete with errors and leave the local buffer alone.
    let mut untouched = Buf::new(&ep.pd, 64, ALL);
    untouched.set_word(r, 0xdead);
    let add_one = AtomicOp::FetchAdd { add: 1 };
    let wc = atomic_into(&untouched, 23, add_one, word + 4, rkey);
    assert_eq!((wc.wr_id, wc.status), (23, WcStatus::RemoteOperation), "misaligned");
    let wc = atomic_into(&untouched, 24, add_one, no_atomic, no_atomic_k);
    assert_eq!((wc.wr_id, wc.status), (24, WcStatus::RemoteAccess), "no remote-atomic right");
    let wc = atomic_into(&untouched, 25, add_one, word, rkey ^ 0x10000);
    assert_eq!((wc.wr_id, wc.status), (25, WcStatus::RemoteAccess), "bad rkey");
    assert_eq!(untouched.word(r), 0xdead);

    send_words(&ep, 30, &[7]);
    ep.qp.disconnect(true).unwrap();
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
    wait_child(child);
}

const ATOMIC_ROUNDS: u64 = 2000;

/// Adds 1 to the target's word `ATOMIC_ROUNDS` times; the old values it sees must rise strictly.
fn peer_atomic_hammer(ep: &Ep) {
    assert_eq!(ep.event().0, ConnEvent::Established);
    let t = recv_words(ep, 1, 2);
    let res = Buf::new(&ep.pd, 64, ALL);
    let r = res.aligned(0);
    let mut last = None;
    for i in 0..ATOMIC_ROUNDS {
        let op = SendOp::Atomic { remote_addr: t[0], rkey: t[1] as u32, op: AtomicOp::FetchAdd { add: 1 } };
        ep.op(i, op, &[res.sge(r, 8)], true).unwrap();
        let wc = ep.scq.expect();
        assert_eq!((wc.wr_id, wc.status), (i, WcStatus::Success));
        let old = res.word(r);
        assert!(last.is_none_or(|l| old > l), "old values rise: {last:?} then {old}");
        last = Some(old);
    }
    send_words(ep, 9, &[ATOMIC_ROUNDS]);
    assert_eq!(ep.event().0, ConnEvent::Disconnected);
}

/// Two peer processes fetch-and-add on one word of ours while another thread of this process
/// adds to it with its own atomic instructions: no update is lost.
#[test]
fn ib_extensions_atomics_are_atomic_among_peers_and_the_target() {
    use std::sync::atomic::{AtomicU64, Ordering};
    let dev = open();
    let pd = dev.alloc_pd().unwrap();
    let eps = [Ep::with_pd(&dev, pd.clone(), None), Ep::with_pd(&dev, pd.clone(), None)];
    let crs = Q::new();
    let p = port(41);
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    let children: Vec<Child> = (0..2).map(|_| spawn("atomic_hammer", p, &[])).collect();
    let mut target = Buf::new(&pd, 64, ALL);
    let w = target.aligned(0);
    target.set_word(w, 0);
    for ep in &eps {
        let req = crs.wait(T).expect("no connect request");
        ep.qp.accept(&req, b"").unwrap();
        assert_eq!(ep.event().0, ConnEvent::Established);
    }
    let done = Buf::new(&eps[0].pd, 16, ALL);
    for ep in &eps {
        ep.qp.post_recv(2, &[done.sge(0, 8)]).unwrap();
    }
    for (k, ep) in eps.iter().enumerate() {
        send_words(ep, 1 + k as u64, &[target.addr() + w as u64, target.mr.rkey() as u64]);
    }
    // SAFETY (test): the word is 8-byte aligned inside `target`, which outlives every use.
    let word = unsafe { AtomicU64::from_ptr((target.addr() + w as u64) as *mut u64) };
    // This thread executes the peers' atomics (polling its receive queues) while another adds
    // to the word until both peers are done.
    let finished = std::sync::atomic::AtomicBool::new(false);
    let local = std::thread::scope(|s| {
        let adder = s.spawn(|| {
            let mut n = 0u64;
            while !finished.load(Ordering::Relaxed) {
                word.fetch_add(1, Ordering::SeqCst);
                n += 1;
            }
            n
        });
        let mut done = 0;
        while done < 2 {
            for ep in &eps {
                if let Some(wc) = ep.rcq.poll() {
                    assert_eq!((wc.wr_id, wc.status), (2, WcStatus::Success));
                    done += 1;
                }
            }
        }
        finished.store(true, Ordering::Relaxed);
        adder.join().unwrap()
    });
    assert_eq!(word.load(Ordering::SeqCst), 2 * ATOMIC_ROUNDS + local, "an update was lost");
    for ep in &eps {
        ep.qp.disconnect(false).unwrap();
        assert_eq!(ep.event().0, ConnEvent::Disconnected);
    }
    for c in children {
        wait_child(c);
    }
}

// ---- unreliable datagrams ----------------------------------------------------------------------

/// A receive buffer of `len` bytes whose header slot is marked (0xee) to show it is left alone.
fn ud_recv_buf(ep: &Ep, len: usize) -> Buf {
    let mut b = Buf::new(&ep.pd, len, ALL);
    b.fill(|_| 0xee);
    b
}

/// The UD peer: connects to the parent's UD endpoint, exchanges datagrams both ways, then is
/// rejected on a second connect.
fn peer_ud(dev: &Arc<dyn Device>, p: u64) {
    let ep = Ep::ud(dev);
    let (small, big) = (ud_recv_buf(&ep, 64), ud_recv_buf(&ep, 256));
    ep.qp.post_recv(1, &[small.sge(0, 64)]).unwrap();
    ep.qp.post_recv(2, &[big.sge(0, 100), big.sge(100, 156)]).unwrap();
    ep.qp.post_recv(3, &[small.sge(0, 64)]).unwrap();
    ep.qp.connect(local(), p, b"ud-hello", None).unwrap();
    let (ev, pd, parent, passive) = ep.ud_event();
    assert_eq!((ev, pd.as_slice(), passive), (ConnEvent::Established, &b"ud-welcome"[..], false));
    assert_eq!(parent.node, u64::from(std::os::unix::process::parent_id()), "the parent process");
    let mut out = Buf::new(&ep.pd, 256, ALL);
    ep.send_ud(10, &mut out, b"ping", parent);
    ep.expect_ud(1, &small, b"pong", parent.qpn);
    // 200 bytes after the 40-byte slot: too long for a 64-byte receive, fits the next one.
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.opcode), (2, WcStatus::Success, WcOpcode::RecvUd));
    assert_eq!(wc.byte_len, UD_HEADER_LEN + 200);
    assert!(big.bytes()[40..240].iter().all(|&x| x == 0x42));
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status), (3, WcStatus::LocalLength), "a datagram longer than the receive");
    ep.send_ud(11, &mut out, b"done", parent);
    ep.qp.connect(local(), p, b"again", None).unwrap();
    let (ev, pd, _, _) = ep.ud_event();
    assert_eq!((ev, pd.as_slice()), (ConnEvent::PeerRejected, &b"not you"[..]));
}

/// A UD endpoint whose receives come from a shared receive queue (in one process: the
/// exchange and the datagram go through the same sockets as between two).
#[test]
fn ud_endpoint_on_an_srq() {
    let dev = open();
    let pd = dev.alloc_pd().unwrap();
    let srq = pd.create_srq(4, 1).unwrap();
    let s = Ep::make(&dev, pd.clone(), Some(srq.clone()), true, CONTEXT);
    let c = Ep::ud(&dev);
    let mut b = Buf::new(&pd, 128, ALL);
    b.fill(|_| 0xee);
    srq.post_recv(300, &[b.sge(0, 128)]).unwrap();
    let p = port(52);
    let crs = Q::new();
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    c.qp.connect(local(), p, b"srq?", None).unwrap();
    let req = crs.wait(T).expect("no UD connect request");
    s.qp.accept(&req, b"srq!").unwrap();
    let (ev, _, to_server, _) = c.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    let (ev, _, to_client, _) = s.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    let mut out = Buf::new(&c.pd, 64, ALL);
    c.send_ud(1, &mut out, b"into the srq", to_server);
    s.expect_ud(300, &b, b"into the srq", to_client.qpn);
    assert_eq!(srq.posted(), 0);
}

/// A receive whose region is deregistered after the post: the datagram it takes lands nowhere
/// and the receive completes with a local protection error, as a verbs device completes it;
/// the next receive takes the next datagram. `srq`: the receives come from a shared receive queue.
fn ud_receive_of_a_freed_region(srq: bool, port_index: u64) {
    let dev = open();
    let pd = dev.alloc_pd().unwrap();
    let q = if srq { Some(pd.create_srq(4, 1).unwrap()) } else { None };
    let s = Ep::make(&dev, pd.clone(), q.clone(), true, CONTEXT);
    let c = Ep::ud(&dev);
    let post = |wr_id: u64, sge: Sge| match &q {
        Some(q) => q.post_recv(wr_id, &[sge]).unwrap(),
        None => s.qp.post_recv(wr_id, &[sge]).unwrap(),
    };
    // the first receive's memory stays allocated (a write into it would show), its region goes
    let gone = Box::new([0xeeu8; 128]);
    let mr = pd.reg_mr(gone.as_ptr() as u64, 128, ALL).unwrap();
    post(1, Sge { addr: gone.as_ptr() as u64, length: 128, lkey: mr.lkey() });
    drop(mr);
    let live = ud_recv_buf(&s, 128);
    post(2, live.sge(0, 128));
    let p = port(port_index);
    let crs = Q::new();
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    c.qp.connect(local(), p, b"", None).unwrap();
    s.qp.accept(&crs.wait(T).expect("no UD connect request"), b"").unwrap();
    let (ev, _, to_server, _) = c.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    let (ev, _, to_client, _) = s.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    let mut out = Buf::new(&c.pd, 64, ALL);
    c.send_ud(10, &mut out, b"into freed memory", to_server);
    let wc = s.rcq.expect();
    assert_eq!((wc.wr_id, wc.status, wc.byte_len), (1, WcStatus::LocalProtection, 0));
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    assert!(gone.iter().all(|&x| x == 0xee), "a datagram was written into a deregistered region");
    c.send_ud(11, &mut out, b"into live memory", to_server);
    s.expect_ud(2, &live, b"into live memory", to_client.qpn);
}

#[test]
fn ud_receive_of_a_freed_region_fails_locally() {
    ud_receive_of_a_freed_region(false, 53);
}

#[test]
fn ud_srq_receive_of_a_freed_region_fails_locally() {
    ud_receive_of_a_freed_region(true, 54);
}

#[test]
fn ud_exchange_datagrams_and_reject() {
    let dev = open();
    let ep = Ep::ud(&dev);
    let p = port(57);
    let crs = Q::new();
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    let bufs: Vec<Buf> = (0..2).map(|_| ud_recv_buf(&ep, 128)).collect();
    for (i, b) in bufs.iter().enumerate() {
        ep.qp.post_recv(100 + i as u64, &[b.sge(0, 128)]).unwrap();
    }
    assert_eq!(ep.qp.posted_recvs(), 2);
    let child = spawn("ud", p, &[]);
    let req = crs.wait(T).expect("no UD connect request");
    assert!(req.is_datagram());
    assert_eq!(req.private_data(), b"ud-hello");
    // Only a UD queue pair may answer a UD request.
    let rc = Ep::new(&dev);
    assert!(rc.qp.accept(&req, b"").is_err());
    ep.qp.accept(&req, b"ud-welcome").unwrap();
    let (ev, pd, peer, passive) = ep.ud_event();
    assert_eq!((ev, pd.as_slice(), passive), (ConnEvent::Established, &b"ud-hello"[..], true));
    assert_eq!(peer.node, u64::from(child.id()));
    ep.expect_ud(100, &bufs[0], b"ping", peer.qpn);
    let mut out = Buf::new(&ep.pd, 512, ALL);
    ep.send_ud(20, &mut out, b"pong", peer);
    out.fill(|_| 0x42);
    ep.send_ud(21, &mut out, &[0x42; 200], peer);
    ep.send_ud(22, &mut out, &[0x42; 200], peer);
    ep.expect_ud(101, &bufs[1], b"done", peer.qpn);
    // A reliable queue pair cannot send datagrams; a UD one has no reliable sends.
    let wr = SendWr { wr_id: 1, op: SendOp::Send, sges: &[], signaled: true, solicited: false, fence: false };
    assert!(rc.qp.post_send_ud(&wr, peer).is_err());
    assert!(ep.qp.post_send(&wr).is_err());
    let again = crs.wait(T).expect("no second UD connect request");
    assert_eq!(again.private_data(), b"again");
    again.reject(b"not you").unwrap();
    wait_child(child);
}

/// Two UD endpoints of one process with an address for each other (the exchange and the
/// datagrams go through the same sockets as between two processes): (server, client, the
/// server's address, the client's address).
fn ud_pair(dev: &Arc<dyn Device>, server: Ep, p: u64) -> (Ep, Ep, UdPeer, UdPeer) {
    let c = Ep::ud(dev);
    let crs = Q::new();
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    c.qp.connect(local(), p, b"", None).unwrap();
    let req = crs.wait(T).expect("no UD connect request");
    server.qp.accept(&req, b"").unwrap();
    let (ev, _, to_server, _) = c.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    let (ev, _, to_client, _) = server.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    (server, c, to_server, to_client)
}

/// A burst of MTU-sized datagrams posted back to back, as Intel MPI's UD transport sends a
/// message, into as many posted receives: none is lost (a UD datagram is lost when no receive
/// is posted, not because the receiving side has not yet taken the previous ones).
#[test]
fn ud_burst_into_posted_receives_loses_nothing() {
    const N: usize = 256;
    const LEN: usize = 2048;
    let dev = open();
    let (s, c, to_server, to_client) = ud_pair(&dev, Ep::ud(&dev), port(55));
    let slot = UD_HEADER_LEN as usize + LEN;
    let rb = Buf::new(&s.pd, N * slot, ALL);
    for i in 0..N {
        s.qp.post_recv(i as u64, &[rb.sge(i * slot, slot)]).unwrap();
    }
    let mut out = Buf::new(&c.pd, N * LEN, ALL);
    out.fill(|i| (i / LEN) as u8 ^ (i % 251) as u8);
    for i in 0..N {
        out.mem[i * LEN..i * LEN + 4].copy_from_slice(&(i as u32).to_le_bytes());
    }
    for i in 0..N {
        let wr = SendWr {
            wr_id: i as u64,
            op: SendOp::Send,
            sges: &[out.sge(i * LEN, LEN)],
            signaled: i == N - 1,
            solicited: false,
            fence: false,
        };
        c.qp.post_send_ud(&wr, to_server).unwrap();
    }
    assert_eq!(c.scq.expect().wr_id, N as u64 - 1);
    for got in 0..N {
        let wc = s.rcq.wait(Duration::from_secs(2)).unwrap_or_else(|| panic!("{got} of {N} datagrams arrived"));
        assert_eq!(
            (wc.wr_id, wc.status, wc.byte_len, wc.immed),
            (got as u64, WcStatus::Success, slot as u64, to_client.qpn)
        );
        let h = got * slot + UD_HEADER_LEN as usize;
        let arrived = u32::from_le_bytes(rb.bytes()[h..h + 4].try_into().unwrap());
        assert_eq!(arrived as usize, got, "receive {got} holds datagram {arrived}: those between were lost");
        assert!(rb.bytes()[h..h + LEN] == out.bytes()[got * LEN..(got + 1) * LEN], "datagram {got}'s bytes");
    }
}

/// A core waker with no CNO behind it: nobody waits but through the queue's own `arm`/`block`.
struct NoCno;
impl Waker for NoCno {
    fn wake(&self) {}
    fn wants_wake(&self) -> bool {
        false
    }
}

const RECEIVER_DATAGRAMS: u64 = 20;

/// The receiving peer of `ud_datagrams_reach_a_poller_and_a_sleeper`, run with
/// `DAT_SHM_LOOK_US=0` (no look places an arrival): takes the first datagrams by polling only,
/// the rest asleep in `arm`/`block` only, then says so.
fn peer_ud_receiver(dev: &Arc<dyn Device>, p: u64) {
    let pd = dev.alloc_pd().unwrap();
    let (scq, rcq) = (Cq::new(dev), dev.create_cq(64, Arc::new(NoCno)).unwrap());
    let (ev, ud_ev) = (Q::new(), Q::new());
    let caps = QpCaps { max_send_wr: 8, max_recv_wr: 64, max_send_sge: 1, max_recv_sge: 1, ..QpCaps::default() };
    let qp = dev
        .create_qp(QpInit {
            pd: pd.clone(),
            send_cq: Some(scq.cq.clone()),
            recv_cq: Some(rcq.clone()),
            srq: None,
            caps,
            context: 7,
            events: Arc::new(ConnQ(ev, ud_ev.clone())),
            datagram: true,
        })
        .unwrap();
    let b = Buf::new(&pd, 64 * 64, ALL);
    for i in 0..2 * RECEIVER_DATAGRAMS {
        qp.post_recv(i, &[b.sge(i as usize * 64, 64)]).unwrap();
    }
    qp.connect(local(), p, b"receiver", None).unwrap();
    let (ev, _, parent, _) = ud_ev.wait(T).expect("UD connection event timed out");
    assert_eq!(ev, ConnEvent::Established);
    let mut out = [WorkCompletion::EMPTY; 1];
    let end = Instant::now() + T;
    for i in 0..RECEIVER_DATAGRAMS {
        while rcq.poll(&mut out) == 0 {
            assert!(Instant::now() < end, "datagram {i} not taken by polling");
        }
        assert_eq!((out[0].wr_id, out[0].status), (i, WcStatus::Success));
    }
    let mut o = Buf::new(&pd, 8, ALL);
    o.mem.copy_from_slice(b"polled!!");
    let send = |wr_id| {
        let wr =
            SendWr { wr_id, op: SendOp::Send, sges: &[o.sge(0, 8)], signaled: false, solicited: false, fence: false };
        qp.post_send_ud(&wr, parent).unwrap();
    };
    send(1);
    for i in RECEIVER_DATAGRAMS..2 * RECEIVER_DATAGRAMS {
        loop {
            if rcq.poll(&mut out) == 1 {
                break;
            }
            assert!(rcq.arm());
            if rcq.poll(&mut out) == 1 {
                break;
            }
            assert!(!rcq.block(Some(T)), "datagram {i}: the sleeper was not woken");
        }
        assert_eq!((out[0].wr_id, out[0].status), (i, WcStatus::Success));
    }
    send(2);
}

/// Datagrams reach a consumer that polls (its polls take them: no other thread need run) and
/// one that sleeps (the receive thread places them and wakes it), with no periodic look to
/// place them otherwise.
#[test]
fn ud_datagrams_reach_a_poller_and_a_sleeper() {
    let dev = open();
    let ep = Ep::ud(&dev);
    let p = port(56);
    let crs = Q::new();
    let _l = dev.listen(p, Arc::new(ListenQ(crs.clone()))).unwrap();
    let b = ud_recv_buf(&ep, 128);
    ep.qp.post_recv(1, &[b.sge(0, 64)]).unwrap();
    ep.qp.post_recv(2, &[b.sge(64, 64)]).unwrap();
    let child = spawn("ud_receiver", p, &[("DAT_SHM_LOOK_US", "0")]);
    let req = crs.wait(T).expect("no UD connect request");
    ep.qp.accept(&req, b"").unwrap();
    let (ev, _, peer, _) = ep.ud_event();
    assert_eq!(ev, ConnEvent::Established);
    let mut out = Buf::new(&ep.pd, 8, ALL);
    for i in 0..RECEIVER_DATAGRAMS {
        ep.send_ud(i, &mut out, b"to poll", peer);
    }
    ep.expect_ud(1, &b, b"polled!!", peer.qpn);
    for i in 0..RECEIVER_DATAGRAMS {
        // Let the receiver fall asleep first.
        std::thread::sleep(Duration::from_millis(20));
        ep.send_ud(100 + i, &mut out, b"to wake", peer);
    }
    let wc = ep.rcq.expect();
    assert_eq!((wc.wr_id, wc.status), (2, WcStatus::Success));
    wait_child(child);
}
