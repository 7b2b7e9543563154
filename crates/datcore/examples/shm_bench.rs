//! `cargo run --release -p datcore --example shm_bench`: round-trip latency of 64 B send/recv
//! and 1 MiB RDMA write bandwidth between two processes over the `shm` provider, next to the
//! memcpy floor for the same sizes. `DAT_SHM_NO_CMA=1` forces the inline (two-copy) path.

use datcore::provider::shm::ShmProvider;
use datcore::provider::*;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

struct Events(Mutex<VecDeque<ConnEvent>>, Condvar);
impl ConnectionEvents for Events {
    fn event(&self, ev: ConnEvent, _: &[u8]) {
        self.0.lock().push_back(ev);
        self.1.notify_all();
    }
}
impl Events {
    fn wait(&self) -> ConnEvent {
        let mut g = self.0.lock();
        loop {
            if let Some(e) = g.pop_front() {
                return e;
            }
            self.1.wait(&mut g);
        }
    }
}
struct Crs(Mutex<Option<Arc<dyn ConnectionRequest>>>);
impl ListenerEvents for Crs {
    fn connect_request(&self, r: Arc<dyn ConnectionRequest>) {
        *self.0.lock() = Some(r);
    }
}
struct Nop;
/// Blocking waits (like dat_evd_wait) unless SHM_BENCH_SPIN is set.
struct CvWaker(Mutex<u64>, Condvar);
impl Waker for CvWaker {
    fn wake(&self) {
        *self.0.lock() += 1;
        self.1.notify_all();
    }
}
static WAKER: std::sync::OnceLock<Arc<CvWaker>> = std::sync::OnceLock::new();
fn waker() -> Arc<CvWaker> {
    WAKER.get_or_init(|| Arc::new(CvWaker(Mutex::new(0), Condvar::new()))).clone()
}
impl AsyncEvents for Nop {
    fn async_error(&self, _: AsyncError) {}
}

const ALL: Access =
    Access { local_read: true, local_write: true, remote_read: true, remote_write: true, remote_atomic: true };
const MIB: usize = 1 << 20;
const PORT: u64 = 0x7e57_0000;

struct Ep {
    pd: Arc<dyn ProtectionDomain>,
    scq: Arc<dyn CompletionQueue>,
    rcq: Arc<dyn CompletionQueue>,
    qp: Arc<dyn QueuePair>,
    ev: Arc<Events>,
}

fn ep(dev: &Arc<dyn Device>) -> Ep {
    let pd = dev.alloc_pd().unwrap();
    let scq = dev.create_cq(1024, waker()).unwrap();
    let rcq = dev.create_cq(1024, waker()).unwrap();
    let ev = Arc::new(Events(Mutex::new(VecDeque::new()), Condvar::new()));
    let caps = QpCaps {
        max_send_wr: 64,
        max_recv_wr: 64,
        max_send_sge: 4,
        max_recv_sge: 4,
        max_rdma_read_in: 8,
        max_rdma_read_out: 8,
    };
    let qp = dev
        .create_qp(QpInit {
            pd: pd.clone(),
            send_cq: Some(scq.clone()),
            recv_cq: Some(rcq.clone()),
            srq: None,
            caps,
            context: 1,
            events: ev.clone(),
            datagram: false,
        })
        .unwrap();
    Ep { pd, scq, rcq, qp, ev }
}

fn spin(cq: &Arc<dyn CompletionQueue>) -> WorkCompletion {
    let mut wc = [WorkCompletion::EMPTY; 1];
    let t = Instant::now();
    let spin = std::env::var_os("SHM_BENCH_SPIN").is_some();
    loop {
        if cq.poll(&mut wc) == 1 {
            break;
        }
        if spin {
            std::hint::spin_loop();
        } else if cq.arm() {
            // The provider's sleeping protocol: arm, poll once more, block.
            if cq.poll(&mut wc) == 1 {
                break;
            }
            cq.block(Some(Duration::from_millis(100)));
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
        if t.elapsed() > Duration::from_secs(5) {
            eprintln!("shm_bench: no completion for 5 s (pid {})", std::process::id());
            std::process::exit(1);
        }
    }
    assert_eq!(wc[0].status, WcStatus::Success);
    wc[0]
}

fn send(e: &Ep, sge: Sge, signaled: bool) {
    e.qp.post_send(&SendWr { wr_id: 0, op: SendOp::Send, sges: &[sge], signaled, solicited: false, fence: false })
        .unwrap();
}

fn main() {
    let dev = ShmProvider::new().open("shm", "", Arc::new(Nop)).unwrap();
    let e = ep(&dev);
    let buf = vec![0u8; 2 * MIB];
    let mr = e.pd.reg_mr(buf.as_ptr() as u64, buf.len() as u64, ALL).unwrap();
    let sge =
        |off: usize, len: usize| Sge { addr: buf.as_ptr() as u64 + off as u64, length: len as u32, lkey: mr.lkey() };
    let iters = 20_000;

    if std::env::args().nth(1).as_deref() == Some("peer") {
        // Echo 64 B messages, then expose a 1 MiB region for RDMA writes.
        for _ in 0..8 {
            e.qp.post_recv(0, &[sge(0, 64)]).unwrap();
        }
        e.qp.connect("127.0.0.1:0".parse().unwrap(), PORT, b"", None).unwrap();
        assert_eq!(e.ev.wait(), ConnEvent::Established);
        for _ in 0..iters {
            spin(&e.rcq);
            e.qp.post_recv(0, &[sge(0, 64)]).unwrap();
            send(&e, sge(64, 64), false);
        }
        let words = [buf.as_ptr() as u64 + MIB as u64, mr.rkey() as u64];
        // SAFETY: writing 16 bytes at the start of our own 2 MiB buffer.
        unsafe { std::ptr::copy_nonoverlapping(words.as_ptr() as *const u8, (buf.as_ptr() as *mut u8).add(128), 16) };
        send(&e, sge(128, 16), true);
        spin(&e.scq);
        assert_eq!(e.ev.wait(), ConnEvent::Disconnected);
        return;
    }

    let crs = Arc::new(Crs(Mutex::new(None)));
    let _l = dev.listen(PORT, crs.clone()).unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap()).arg("peer").spawn().unwrap();
    let req = loop {
        if let Some(r) = crs.0.lock().take() {
            break r;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    for _ in 0..8 {
        e.qp.post_recv(0, &[sge(0, 64)]).unwrap();
    }
    e.qp.accept(&req, b"").unwrap();
    assert_eq!(e.ev.wait(), ConnEvent::Established);

    // 64 B round trips.
    let warm = 1000;
    let mut t0 = Instant::now();
    for i in 0..iters {
        if i == warm {
            t0 = Instant::now();
        }
        send(&e, sge(64, 64), false);
        spin(&e.rcq);
        e.qp.post_recv(0, &[sge(0, 64)]).unwrap();
    }
    let rtt = t0.elapsed() / (iters - warm) as u32;

    // 1 MiB RDMA writes, 8 in flight.
    let wc = loop {
        let mut wc = [WorkCompletion::EMPTY; 1];
        if e.rcq.poll(&mut wc) == 1 {
            break wc[0];
        }
        std::thread::yield_now();
    };
    assert_eq!(wc.byte_len, 16);
    let mut w = [0u64; 2];
    // SAFETY: reading the 16 bytes the peer just sent into our buffer at offset 0.
    unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), w.as_mut_ptr() as *mut u8, 16) };
    let (raddr, rkey) = (w[0], w[1] as u32);
    let n = 2000;
    let depth = 8;
    let t1 = Instant::now();
    let mut out = 0;
    for i in 0..n {
        if out == depth {
            spin(&e.scq);
            out -= 1;
        }
        let op = SendOp::RdmaWrite { remote_addr: raddr, rkey };
        e.qp.post_send(&SendWr {
            wr_id: i,
            op,
            sges: &[sge(MIB, MIB)],
            signaled: true,
            solicited: false,
            fence: false,
        })
        .unwrap();
        out += 1;
    }
    while out > 0 {
        spin(&e.scq);
        out -= 1;
    }
    let bw = (n as f64 * MIB as f64) / t1.elapsed().as_secs_f64() / 1e9;
    e.qp.disconnect(true).unwrap();
    let _ = child.wait();

    // memcpy floor.
    let src = vec![1u8; MIB];
    let mut dst = vec![0u8; MIB];
    let t2 = Instant::now();
    let m = 1_000_000;
    for i in 0..m {
        let o = (i % 64) * 64;
        dst[o..o + 64].copy_from_slice(std::hint::black_box(&src[o..o + 64]));
    }
    let small = t2.elapsed() / m as u32;
    let t3 = Instant::now();
    for _ in 0..n {
        dst.copy_from_slice(std::hint::black_box(&src));
    }
    let big = (n as f64 * MIB as f64) / t3.elapsed().as_secs_f64() / 1e9;
    std::hint::black_box(&dst);

    let mode = if std::env::var_os("DAT_SHM_NO_CMA").is_some() { "inline (no CMA)" } else { "cross-memory attach" };
    println!("shm provider, {mode}");
    println!(
        "send/recv 64 B round trip: {:.2} us (one way {:.2} us)",
        rtt.as_secs_f64() * 1e6,
        rtt.as_secs_f64() * 0.5e6
    );
    println!("RDMA write 1 MiB, {depth} in flight: {bw:.2} GB/s");
    println!("memcpy floor: 64 B {:.1} ns, 1 MiB {big:.2} GB/s", small.as_secs_f64() * 1e9);
}
