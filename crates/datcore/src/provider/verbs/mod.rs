//! The `verbs` provider: DAT over rdma-core (libibverbs + librdmacm) — InfiniBand, RoCE
//! (rxe, mlx5, ...) and iWARP (siw, ...).
//!
//! **Binding: hand-written, loaded with `dlopen`.** libdat must load and run `shm` on a host
//! without rdma-core, so libibverbs/librdmacm are never linked: `libibverbs.so.1` and
//! `librdmacm.so.1` are opened at the first use of this provider ([`sys::lib`]); without them
//! [`Provider::ia_names`] is empty (one debug line). The few structures we touch are declared
//! by hand in [`sys`] (`ibv_wc`, `ibv_send_wr`, `ibv_context_ops`, `rdma_cm_id`, ...), from
//! libibverbs' frozen `IBVERBS_1.1` ABI, and the header-inline verbs (`ibv_post_send`,
//! `ibv_post_recv`, `ibv_poll_cq`, `ibv_req_notify_cq`, `ibv_post_srq_recv`, `ibv_bind_mw`,
//! `ibv_alloc_mw`) are the same calls through `ibv_context.ops` that the header makes. Why not
//! the alternatives: `rdma-sys` needs bindgen + libclang at build time and links the libraries;
//! a C shim needs the `-dev` headers and a C compiler on every build machine, and would either
//! fail to build or silently lose the provider on a fresh Debian box without them. The
//! hand-written binding builds anywhere with nothing but rustc; `verbs/layout_check.c` prints
//! the real headers' offsets to compare when rdma-core's ABI is in doubt.
//!
//! **Fork safety:** `ibv_fork_init()` is called once right after loading the libraries, before
//! any device is opened or memory registered (skip it with `RDMAV_FORK_SAFE=0`), unless the
//! kernel copies pinned pages on fork (5.13+, `ibv_is_fork_initialized`), where it is not needed
//! and would cost two madvise calls per registration; on older kernels registered pages are
//! MADV_DONTFORK, so a forked child must not touch registered buffers (exec is fine).
//!
//! **Objects:** IA = the `ibv_context` of an rdma_cm id bound to the IA's IP address (kept for
//! the IA's life) plus one rdma_cm event channel with a CM thread ([`cm`]). PZ = `ibv_pd`;
//! LMR = `ibv_mr`; RMR = `ibv_mw` (type 1 when the device offers it, else type 2; none on siw:
//! `DAT_MODEL_NOT_SUPPORTED`); EVD's DTO side = `ibv_cq` on its own completion channel, polled
//! and slept on by the consumer's thread ([`cq`]; a device thread watches it only while a CNO is
//! attached, [`notify`]); PSP/RSP = listening rdma_cm id on
//! port = conn_qual (must fit 16 bits); CR = the CONNECT_REQUEST id; SRQ = `ibv_srq`.
//!
//! **When the QP exists:** from `dat_ep_create` (and each rebuild by `dat_ep_modify` or
//! `dat_ep_reset`), as in OFED's cma provider: the EP gets an rdma_cm id of its own, bound to the
//! IA's address, and `rdma_create_qp` makes the `ibv_qp` on it (INIT, so receives posted before
//! the connection go straight to the device). A device out of QPs or queue memory fails
//! `dat_ep_create` with `DAT_INSUFFICIENT_RESOURCES`, not a later connect. `dat_ep_connect`
//! resolves and connects that id; `dat_cr_accept` moves the QP onto the CONNECT_REQUEST's id
//! (librdmacm drives the QP of the id a connection is made on: RTR/RTS on IB/RoCE, the kernel's
//! iw_cm on iWARP) and frees the EP's own. librdmacm does every state transition.
//!
//! **Work-request ids:** the ibv wr_id is a slot number in a per-QP send/receive ring (or a
//! per-SRQ slot table) that holds the consumer's cookie, the operation and its length, so
//! error and flush completions (whose `ibv_wc.opcode` is undefined) still report the right
//! operation. Post and poll allocate nothing; post takes only its queue's own lock, poll one
//! read lock of its CQ's QP table per batch.
//!
//! **Private data:** raw consumer bytes, no header of ours. Limits: 56 bytes on IB/RoCE (the
//! IB CM REQ's 92 less rdma_cm's 36), 256 on iWARP. IB CM messages have fixed-size private
//! data fields, so on IB/RoCE the receiver sees the sender's bytes followed by zero padding
//! (REQ: 56 bytes, REP: capped at 56). Connecting to 127.0.0.1 (or 0.0.0.0) reaches the IA's own
//! address. A reject carries the marker `DATREJ` so the active side
//! can tell a consumer reject (PeerRejected) from "nobody listens" (NonPeerRejected) on iWARP,
//! where both arrive as ECONNREFUSED.
//!
//! **iWARP differences:** memory registered with local write access also gets remote write on
//! iWARP devices, since an RDMA read's sink must be remotely writable there (not on siw, which
//! only wants local write on a read sink: there privileges are exact). iWARP requires
//! the active side to send first in MPA v1 without RTR: siw negotiates it, other devices may
//! not — consumers on iWARP should let the active side issue the first operation. On siw each
//! verbs context holds one large CQ over mapping offset 0x90000, which libsiw cannot use
//! (`cq::reserve_siw_colliding_page`); without it the 72nd QP of a process failed.
//!
//! **Disconnect:** `rdma_disconnect` + QP to ERR, so everything still posted completes as
//! `WcStatus::Flushed`; `Disconnected` is delivered on the rdma_cm DISCONNECTED event
//! (graceful) or at once (abrupt), and at the latest 5 s after a graceful one.

use super::eventfd::EventFd;
use super::{
    Access, AsyncEvents, CompletionQueue, Device, DeviceAttr, ExtensionCaps, Listener, ListenerEvents, MemoryRegion,
    MemoryWindow, ProtectionDomain, Provider, QpInit, QueuePair, SharedReceiveQueue, Transport, Waker,
};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Instant;

/// rdma_resolve_addr / rdma_resolve_route timeout.
const RESOLVE_MS: i32 = 2000;

mod cm;
#[doc(hidden)]
pub use cm::{report_comm_est_for_test, report_qp_error_for_test, report_rejected_for_test};
mod cq;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod inline;
mod names;
mod notify;
pub use names::{Port, Target};
mod qp;
mod route;
mod sleep;
mod srq;
mod sys;
mod ud;

use sys::Lib;

/// `vendor_id` of soft-iWARP (siw): ASCII "bmt".
const SIW_VENDOR_ID: u32 = 0x62_6d74;
/// Largest private data on IB/RoCE (IB CM REQ: 92 bytes, less rdma_cm's 36-byte header).
const IB_PRIVATE_DATA: usize = 56;
/// Largest private data we allow on iWARP (MPA allows up to 512 less its own parameters).
const IWARP_PRIVATE_DATA: usize = 256;

use super::lookup::Reg;

static PDS: Reg<VerbsPd> = Reg::new();
static MRS: Reg<VerbsMr> = Reg::new();
static MWS: Reg<VerbsMw> = Reg::new();
static CQS: Reg<cq::VerbsCq> = Reg::new();
static SRQS: Reg<srq::VerbsSrq> = Reg::new();

/// Logs a failed verbs call and returns `err`.
fn fail(what: &str, e: i32, err: DatError) -> DatError {
    if e == 0 {
        tracing::warn!("verbs: {what} failed without an error code (rdma-core set no errno)");
    } else {
        tracing::warn!("verbs: {what} failed: {} (errno {e})", sys::errno_str(e));
    }
    err
}

/// The usual DAT code for an errno of a resource-creating verb.
fn resource_error(e: i32, sub: u32) -> DatError {
    match e {
        libc::EINVAL => DatError::invalid_arg(2),
        libc::EACCES | libc::EPERM => DatError::new(DAT_PRIVILEGES_VIOLATION, 0),
        libc::EOPNOTSUPP | libc::ENOSYS => DatError::new(DAT_MODEL_NOT_SUPPORTED, 0),
        _ => DatError::insufficient(sub),
    }
}

/// The provider object registered with the core.
#[derive(Default)]
pub struct VerbsProvider;

impl VerbsProvider {
    pub fn new() -> Self {
        VerbsProvider
    }
}

impl Provider for VerbsProvider {
    fn name(&self) -> &'static str {
        "verbs"
    }

    fn ia_names(&self) -> Vec<String> {
        match sys::lib() {
            Some(lib) => names::ia_names(&names::ports(lib)),
            None => Vec::new(),
        }
    }

    fn open(&self, ia_name: &str, params: &str, events: Arc<dyn AsyncEvents>) -> DatResult<Arc<dyn Device>> {
        let Some(lib) = sys::lib() else {
            tracing::warn!(ia_name, "verbs: rdma-core (libibverbs.so.1, librdmacm.so.1) not installed");
            return Err(DatError::new(DAT_PROVIDER_NOT_FOUND, 0));
        };
        let target = names::resolve(lib, ia_name, params).map_err(|why| {
            tracing::warn!(ia_name, params, "verbs: cannot open IA: {why}");
            if why.contains("DOWN") || why.contains("no IP") {
                DatError::insufficient(DAT_RESOURCE_DEVICE)
            } else {
                DatError::new(DAT_PROVIDER_NOT_FOUND, 0)
            }
        })?;
        let port = target.port;
        let dev = DevInner::open(lib, ia_name, target, events)?;
        route::OPEN.register(dev.ctx as usize, port, &dev);
        let threads = vec![cm::start(&dev)?];
        Ok(Arc::new(VerbsDevice { inner: dev, threads: Mutex::new(threads) }))
    }
}

/// Raw pointers of one opened device.
pub(crate) struct DevInner {
    pub lib: &'static Lib,
    pub ctx: *mut sys::ibv_context,
    /// The rdma_cm id bound to the IA address; owns `ctx`'s use by this IA.
    bound_id: *mut sys::rdma_cm_id,
    pub cm_channel: *mut sys::rdma_event_channel,
    pub ip: IpAddr,
    /// RDMA read sinks must be remotely writable (iWARP devices but siw, which places read
    /// responses into memory with local write access only).
    pub read_sink_remote_write: bool,
    pub attr: DeviceAttr,
    /// The memory window type we allocate (0: none).
    pub mw_type: u32,
    /// Most SGEs of an RDMA read's sink (`max_sge_rd`; siw: 1). Longer reads are split.
    pub max_sge_rd: usize,
    /// The device is soft-iWARP: an initiator's connection sends empty RDMA writes after
    /// ESTABLISHED (`VerbsQp::nudge`).
    pub siw: bool,
    pub async_events: Arc<dyn AsyncEvents>,
    pub stop: AtomicBool,
    /// Rung to wake the CM thread from its sleep: at `stop`, and when a deadline is added.
    pub cm_wake: EventFd,
    /// rdma_cm id contexts (our keys) → who owns the id.
    pub ids: Mutex<HashMap<u64, cm::Owner>>,
    /// The thread watching CQs of EVDs with a CNO, once one needed it.
    pub notifier: Mutex<Option<Arc<notify::Notifier>>>,
    /// What has a pending deadline (an RC connect's timeout or graceful disconnect, a UD
    /// address exchange's timeout), run by the CM thread.
    pub timed: Mutex<cm::Timers>,
    next_key: AtomicU64,
}

// SAFETY: the raw pointers name rdma-core objects that are thread-safe per libibverbs'
// threading rules (every verb may be called from any thread); we free them once, in Drop.
unsafe impl Send for DevInner {}
// SAFETY: as above.
unsafe impl Sync for DevInner {}

impl DevInner {
    fn open(
        lib: &'static Lib,
        ia_name: &str,
        t: names::Target,
        events: Arc<dyn AsyncEvents>,
    ) -> DatResult<Arc<DevInner>> {
        let nodev = |what: &str| {
            let e = sys::errno();
            tracing::warn!(ia_name, "verbs: {what} failed on {} ({}): {}", t.dev, t.ip, sys::errno_str(e));
            DatError::insufficient(DAT_RESOURCE_DEVICE)
        };
        let cm_wake = EventFd::new().map_err(|e| {
            tracing::warn!("verbs: eventfd: {e}");
            DatError::insufficient(DAT_RESOURCE_MEMORY)
        })?;
        // SAFETY: creating a channel and an id; both freed below on error or in Drop.
        let (ch, id) = unsafe {
            let ch = (lib.rdma_create_event_channel)();
            if ch.is_null() {
                return Err(nodev("rdma_create_event_channel"));
            }
            let mut id = std::ptr::null_mut();
            if (lib.rdma_create_id)(ch, &mut id, std::ptr::null_mut(), sys::RDMA_PS_TCP) != 0 {
                let e = nodev("rdma_create_id");
                (lib.rdma_destroy_event_channel)(ch);
                return Err(e);
            }
            let mut ss = crate::ia::to_sockaddr(SocketAddr::new(t.ip, 0));
            if (lib.rdma_bind_addr)(id, &mut ss as *mut _ as *mut libc::sockaddr) != 0 || (*id).verbs.is_null() {
                let e = nodev("rdma_bind_addr");
                (lib.rdma_destroy_id)(id);
                (lib.rdma_destroy_event_channel)(ch);
                return Err(e);
            }
            (ch, id)
        };
        // SAFETY: the id is bound, so `verbs` is librdmacm's open context for the device.
        let ctx = unsafe { (*id).verbs };
        let mut a: sys::ibv_device_attr = {
            // SAFETY: plain old data.
            unsafe { std::mem::zeroed() }
        };
        let mut pa: sys::ibv_port_attr = {
            // SAFETY: plain old data.
            unsafe { std::mem::zeroed() }
        };
        // SAFETY: live context; output structs sized for the library.
        let (qd, qp_ok) =
            unsafe { ((lib.ibv_query_device)(ctx, &mut a), (lib.ibv_query_port)(ctx, t.port.max(1), &mut pa)) };
        if qd != 0 {
            let e = nodev("ibv_query_device");
            // SAFETY: freeing what we created above.
            unsafe {
                (lib.rdma_destroy_id)(id);
                (lib.rdma_destroy_event_channel)(ch);
            }
            return Err(e);
        }
        let transport = if t.iwarp {
            Transport::IWarp
        } else if qp_ok == 0 && pa.link_layer == sys::IBV_LINK_LAYER_ETHERNET {
            Transport::RoCE
        } else {
            Transport::InfiniBand
        };
        let max_msg = if qp_ok == 0 && pa.max_msg_sz > 0 { pa.max_msg_sz as u64 } else { 1 << 31 };
        let mw_type = if a.device_cap_flags & sys::IBV_DEVICE_MEM_WINDOW != 0 && a.max_mw > 0 {
            sys::IBV_MW_TYPE_1
        } else if a.device_cap_flags & (sys::IBV_DEVICE_MEM_WINDOW_TYPE_2A | sys::IBV_DEVICE_MEM_WINDOW_TYPE_2B) != 0
            && a.max_mw > 0
        {
            sys::IBV_MW_TYPE_2
        } else {
            0
        };
        let fw = sys::cstr(&a.fw_ver);
        let mut fwp = fw.split('.').map(|s| s.parse::<u32>().unwrap_or(0));
        let u = |v: i32| v.max(0) as u32;
        let attr = DeviceAttr {
            adapter_name: t.dev.clone(),
            vendor_name: format!("verbs vendor {:#x}", a.vendor_id),
            hardware_version_major: a.hw_ver,
            hardware_version_minor: 0,
            firmware_version_major: fwp.next().unwrap_or(0),
            firmware_version_minor: fwp.next().unwrap_or(0),
            transport,
            max_qp: u(a.max_qp),
            max_qp_wr: u(a.max_qp_wr),
            max_sge: u(a.max_sge).min(qp::MAX_SGE as u32),
            max_cq: u(a.max_cq),
            max_cqe: u(a.max_cqe),
            max_mr: u(a.max_mr),
            max_mr_size: a.max_mr_size,
            max_pd: u(a.max_pd),
            max_mw: if mw_type == 0 { 0 } else { u(a.max_mw) },
            max_srq: u(a.max_srq),
            max_srq_wr: u(a.max_srq_wr),
            max_rdma_read_in: u(a.max_qp_rd_atom).min(255),
            max_rdma_read_out: u(a.max_qp_init_rd_atom).min(255),
            max_message_size: max_msg,
            max_rdma_size: max_msg,
            max_private_data: if t.iwarp { IWARP_PRIVATE_DATA } else { IB_PRIVATE_DATA },
            // iWARP has neither write with immediate data nor atomics (OFED's provider
            // advertises no extensions there either); elsewhere atomics as the device says.
            extensions: ExtensionCaps {
                immed_data: !t.iwarp,
                atomics: !t.iwarp && a.atomic_cap != sys::IBV_ATOMIC_NONE,
                // UD queue pairs (ud.rs) on IB/RoCE; iWARP has no datagram service.
                ud: !t.iwarp,
            },
            // enum ibv_mtu: 1 = 256 bytes ... 5 = 4096 bytes
            transport_mtu: 128 << pa.active_mtu.clamp(1, 5),
        };
        check_memlock();
        let read_sink_remote_write = t.iwarp && a.vendor_id != SIW_VENDOR_ID;
        if a.vendor_id == SIW_VENDOR_ID {
            cq::reserve_siw_colliding_page(lib, ctx);
        }
        tracing::debug!(ia_name, dev = %t.dev, port = t.port, ip = %t.ip, ?transport, mw_type, vendor = a.vendor_id, read_sink_remote_write, "verbs: device opened");
        Ok(Arc::new(DevInner {
            lib,
            ctx,
            bound_id: id,
            cm_channel: ch,
            ip: t.ip,
            read_sink_remote_write,
            attr,
            mw_type,
            max_sge_rd: (a.max_sge_rd.max(1) as usize).min(qp::MAX_SGE),
            siw: a.vendor_id == SIW_VENDOR_ID,
            async_events: events,
            stop: AtomicBool::new(false),
            cm_wake,
            ids: Mutex::new(HashMap::new()),
            notifier: Mutex::new(None),
            timed: Mutex::new(cm::Timers::default()),
            next_key: AtomicU64::new(1),
        }))
    }

    /// Has the CM thread keep `t`'s `deadline`, waking the thread only when it would sleep
    /// past it (connects with one timeout, issued one after another, wake it once).
    pub fn add_timed(&self, t: Weak<dyn cm::Timed>, deadline: Instant) {
        if self.timed.lock().add(t, deadline) {
            self.cm_wake.ring();
        }
    }

    pub fn key(&self) -> u64 {
        self.next_key.fetch_add(1, Ordering::Relaxed)
    }

    /// A new rdma_cm id of port space `ps` (`RDMA_PS_TCP` for an RC queue pair, `RDMA_PS_UDP`
    /// for a UD one) on this IA's event channel, with context `key`, bound to the IA's address
    /// (the queue pair made on it takes its device and port from there). The caller destroys it.
    pub fn bound_id(&self, ps: i32, key: u64) -> DatResult<*mut sys::rdma_cm_id> {
        let lib = self.lib;
        let mut id = std::ptr::null_mut();
        // SAFETY: the device's channel; the id is destroyed below on error, else by the caller.
        let r = unsafe { (lib.rdma_create_id)(self.cm_channel, &mut id, key as usize as *mut _, ps) };
        if r != 0 {
            return Err(fail("rdma_create_id", sys::err_of(r), DatError::insufficient(DAT_RESOURCE_TEP)));
        }
        let mut src = crate::ia::to_sockaddr(SocketAddr::new(self.ip, 0));
        // SAFETY: live id; valid sockaddr.
        let r = unsafe { (lib.rdma_bind_addr)(id, &mut src as *mut _ as *mut libc::sockaddr) };
        if r != 0 {
            let e = sys::err_of(r);
            // SAFETY: our id, never shared.
            unsafe { (lib.rdma_destroy_id)(id) };
            return Err(fail("rdma_bind_addr", e, DatError::insufficient(DAT_RESOURCE_TEP)));
        }
        Ok(id)
    }

    /// The rdma_cm port of a connect to connection qualifier `port` with `private_data`
    /// (`DAT_INVALID_PARAMETER`: ARG3 for a qualifier beyond 16 bits, ARG5 for too much data).
    fn connect_port(&self, port: u64, private_data: &[u8]) -> DatResult<u16> {
        let Ok(port) = u16::try_from(port) else {
            tracing::warn!("verbs: connection qualifier {port} does not fit an rdma_cm port (16 bits)");
            return Err(DatError::invalid_arg(3));
        };
        if private_data.len() > self.attr.max_private_data {
            return Err(DatError::invalid_arg(5));
        }
        Ok(port)
    }

    /// Starts resolving `remote`:`port` from this IA's address on `id` (rdma_resolve_addr,
    /// within `timeout` but at most 2 s); ADDR_RESOLVED or ADDR_ERROR follows on the CM thread.
    /// Loopback or unspecified means this IA's own address (rdma_cm cannot route 127.0.0.1
    /// over a device bound to another address; DAT consumers use it for same-host connections).
    fn resolve_addr(
        &self,
        id: *mut sys::rdma_cm_id,
        remote: SocketAddr,
        port: u16,
        timeout: Option<std::time::Duration>,
    ) -> DatResult<()> {
        let rip = if remote.ip().is_loopback() || remote.ip().is_unspecified() { self.ip } else { remote.ip() };
        let mut src = crate::ia::to_sockaddr(SocketAddr::new(self.ip, 0));
        let mut dst = crate::ia::to_sockaddr(SocketAddr::new(rip, port));
        let ms = timeout.map_or(RESOLVE_MS, |t| (t.as_millis().min(RESOLVE_MS as u128) as i32).max(1));
        // SAFETY: a live id of ours; both addresses are valid sockaddr_storage.
        let r = unsafe {
            (self.lib.rdma_resolve_addr)(
                id,
                &mut src as *mut _ as *mut libc::sockaddr,
                &mut dst as *mut _ as *mut libc::sockaddr,
                ms,
            )
        };
        if r != 0 {
            let e = sys::err_of(r);
            return Err(fail(
                "rdma_resolve_addr",
                e,
                DatError::new(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNREACHABLE),
            ));
        }
        Ok(())
    }
}

impl Drop for DevInner {
    fn drop(&mut self) {
        // SAFETY: every CQ, QP, id and listener holds an Arc<DevInner>, so all are gone.
        unsafe {
            (self.lib.rdma_destroy_id)(self.bound_id);
            (self.lib.rdma_destroy_event_channel)(self.cm_channel);
        }
    }
}

/// Logs once when RLIMIT_MEMLOCK is low enough to make registrations fail.
fn check_memlock() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if let Some(l) = memlock_limit() {
            if l < 64 << 20 {
                tracing::warn!("verbs: RLIMIT_MEMLOCK is {l} bytes; registering more fails (raise it with ulimit -l)");
            }
        }
    });
}

/// RLIMIT_MEMLOCK, or None when unlimited.
fn memlock_limit() -> Option<u64> {
    // SAFETY: plain old data filled by getrlimit.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: valid out pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    Some(r.rlim_cur)
}

/// For tools (`datinfo`): every port of every RDMA device, with its state and the netdevs and
/// addresses rdma_cm maps to it. `Err` when rdma-core cannot be loaded.
pub fn ports() -> Result<Vec<Port>, String> {
    sys::lib().map(names::ports).ok_or_else(no_rdma_core)
}

/// For tools (`datinfo`): the port and address [`Provider::open`] would bind `ia_name` (with
/// dat.conf `params`) to, or the one-line cause it fails with (port DOWN, no IP address, device
/// absent, rdma-core missing): the same cause `open` logs.
pub fn open_target(ia_name: &str, params: &str) -> Result<Target, String> {
    let lib = sys::lib().ok_or_else(no_rdma_core)?;
    names::resolve(lib, ia_name, params)
}

/// For tools (`datinfo`): why registrations will fail early (RLIMIT_MEMLOCK below 64 MiB), if
/// they will.
pub fn memlock_warning() -> Option<String> {
    memlock_limit()
        .filter(|&l| l < 64 << 20)
        .map(|l| format!("RLIMIT_MEMLOCK is {l} bytes; registering more fails (raise it with ulimit -l)"))
}

fn no_rdma_core() -> String {
    "rdma-core (libibverbs.so.1, librdmacm.so.1) not installed".to_string()
}

/// An opened IA. Dropping it stops the CM thread (and the CNO notifier thread, if any); the device's resources go
/// when the last PD / CQ / QP holding them does.
pub struct VerbsDevice {
    inner: Arc<DevInner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Drop for VerbsDevice {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::SeqCst);
        self.inner.cm_wake.ring();
        let notifier = self.inner.notifier.lock().take();
        if let Some(n) = notifier {
            n.shutdown();
        }
        let me = std::thread::current().id();
        for t in self.threads.lock().drain(..) {
            if t.thread().id() != me {
                let _ = t.join();
            }
        }
    }
}

impl Device for VerbsDevice {
    fn attr(&self) -> &DeviceAttr {
        &self.inner.attr
    }

    fn address(&self) -> SocketAddr {
        SocketAddr::new(self.inner.ip, 0)
    }

    fn alloc_pd(&self) -> DatResult<Arc<dyn ProtectionDomain>> {
        let d = &self.inner;
        // SAFETY: live context.
        let pd = unsafe { (d.lib.ibv_alloc_pd)(d.ctx) };
        if pd.is_null() {
            let e = sys::errno();
            return Err(fail("ibv_alloc_pd", e, DatError::insufficient(DAT_RESOURCE_PROTECTION_DOMAIN)));
        }
        let pd = Arc::new(VerbsPd { dev: d.clone(), pd, ahs: ud::AddressHandles::default(), mrs: Default::default() });
        PDS.insert(&pd);
        Ok(pd)
    }

    fn create_cq(&self, min_entries: u32, waker: Arc<dyn Waker>) -> DatResult<Arc<dyn CompletionQueue>> {
        let cq = cq::VerbsCq::new(&self.inner, min_entries, waker)?;
        CQS.insert(&cq);
        Ok(cq)
    }

    fn listen(&self, port: u64, events: Arc<dyn ListenerEvents>) -> DatResult<Arc<dyn Listener>> {
        Ok(cm::VerbsListener::listen(&self.inner, port, events)?)
    }

    fn create_qp(&self, init: QpInit) -> DatResult<Arc<dyn QueuePair>> {
        if init.datagram {
            return Ok(ud::VerbsUdQp::new(&self.inner, init)?);
        }
        Ok(qp::VerbsQp::new(&self.inner, init)?)
    }
}

pub struct VerbsPd {
    pub(crate) dev: Arc<DevInner>,
    pub(crate) pd: *mut sys::ibv_pd,
    /// Address handles of UD exchanges (destroyed with the PD).
    ahs: ud::AddressHandles,
    /// This PD's MRs by lkey, for checking inline sends.
    pub(crate) mrs: inline::MrRanges,
}

// SAFETY: ibv_pd is used through thread-safe verbs only.
unsafe impl Send for VerbsPd {}
// SAFETY: as above.
unsafe impl Sync for VerbsPd {}

impl Drop for VerbsPd {
    fn drop(&mut self) {
        self.ahs.destroy_all(self.dev.lib);
        // SAFETY: MRs, MWs, SRQs and QPs of this PD hold an Arc to it, so none is left.
        let r = unsafe { (self.dev.lib.ibv_dealloc_pd)(self.pd) };
        if r != 0 {
            tracing::warn!("verbs: ibv_dealloc_pd failed: {}", sys::errno_str(sys::err_of(r)));
        }
    }
}

/// IBV_ACCESS_* for DAT privileges (remote write needs local write in verbs; on iWARP local
/// write also gets remote write, as RDMA read sinks must be remotely writable there — except
/// on siw, which checks read sinks for local write only, so DAT's privileges hold exactly).
fn access_flags(dev: &DevInner, a: Access) -> i32 {
    let mut f = 0;
    if a.local_write {
        f |= sys::IBV_ACCESS_LOCAL_WRITE;
        if dev.read_sink_remote_write {
            f |= sys::IBV_ACCESS_REMOTE_WRITE;
        }
    }
    if a.remote_write {
        f |= sys::IBV_ACCESS_REMOTE_WRITE | sys::IBV_ACCESS_LOCAL_WRITE;
    }
    if a.remote_read {
        f |= sys::IBV_ACCESS_REMOTE_READ;
    }
    // Only where atomics work: a device without them may refuse the flag.
    if a.remote_atomic && dev.attr.extensions.atomics {
        f |= sys::IBV_ACCESS_REMOTE_ATOMIC | sys::IBV_ACCESS_LOCAL_WRITE;
    }
    f
}

impl ProtectionDomain for VerbsPd {
    fn reg_mr(&self, addr: u64, len: u64, access: Access) -> DatResult<Arc<dyn MemoryRegion>> {
        if addr.checked_add(len).is_none() || len > self.dev.attr.max_mr_size {
            return Err(DatError::new(DAT_LENGTH_ERROR, 0));
        }
        if !access.needs_write() && !super::mapped::is_mapped(addr, len, false) {
            // The kernel pins read-only registrations with FOLL_FORCE, so a PROT_NONE page
            // registers although the process cannot read it; refused as on shm.
            tracing::debug!(addr, len, ?access, "verbs: read-only registration of a range not mapped readable");
            return Err(DatError::new(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
        }
        let mut flags = access_flags(&self.dev, access);
        if self.dev.mw_type != 0 {
            flags |= sys::IBV_ACCESS_MW_BIND;
        }
        tracing::trace!(len, ?access, flags, "verbs: ibv_reg_mr");
        // SAFETY: registration pins the consumer's range; the kernel validates it (EFAULT).
        let mut mr = unsafe { (self.dev.lib.ibv_reg_mr)(self.pd, addr as *mut _, len as usize, flags) };
        let writes = sys::IBV_ACCESS_LOCAL_WRITE | sys::IBV_ACCESS_REMOTE_WRITE;
        if mr.is_null() && sys::errno() == libc::EFAULT && flags & sys::IBV_ACCESS_MW_BIND != 0 && flags & writes == 0 {
            // The kernel pins MW_BIND regions for writing, so read-only memory (a const table,
            // a PROT_READ mapping) fails with it; register it without windows, as shm accepts it.
            tracing::debug!(len, "verbs: read-only range: registering without IBV_ACCESS_MW_BIND");
            // SAFETY: as above.
            mr = unsafe {
                (self.dev.lib.ibv_reg_mr)(self.pd, addr as *mut _, len as usize, flags & !sys::IBV_ACCESS_MW_BIND)
            };
        }
        if mr.is_null() {
            let e = sys::errno();
            if !super::mapped::is_mapped(addr, len, access.needs_write()) {
                // Drivers differ in the errno (EFAULT, ENOMEM, …); the cause is the range.
                tracing::debug!(
                    addr,
                    len,
                    ?access,
                    errno = e,
                    "verbs: ibv_reg_mr of a range not mapped with that access"
                );
                return Err(DatError::new(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
            }
            return Err(match (e, memlock_limit()) {
                (libc::ENOMEM | libc::EAGAIN, Some(l)) => {
                    tracing::warn!("verbs: ibv_reg_mr of {len} bytes failed: RLIMIT_MEMLOCK too small (limit {l} bytes, asked {len})");
                    DatError::insufficient(DAT_RESOURCE_MEMORY)
                }
                (libc::EFAULT, _) => fail("ibv_reg_mr", e, DatError::new(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3)),
                (libc::EINVAL, _) => fail("ibv_reg_mr", e, DatError::new(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3)),
                _ => fail("ibv_reg_mr", e, DatError::insufficient(DAT_RESOURCE_MEMORY_REGION)),
            });
        }
        // SAFETY: ibv_reg_mr returned a live MR.
        let (lkey, rkey) = unsafe { ((*mr).lkey, (*mr).rkey) };
        let mr = Arc::new(VerbsMr { pd: self.pd_arc(), mr, lkey, rkey, addr, len });
        self.mrs.insert(lkey, addr, len);
        MRS.insert(&mr);
        Ok(mr)
    }

    fn alloc_mw(&self) -> DatResult<Arc<dyn MemoryWindow>> {
        if self.dev.mw_type == 0 {
            tracing::warn!("verbs: {} has no memory windows; RMRs are not supported", self.dev.attr.adapter_name);
            return Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0));
        }
        // SAFETY: live context and PD; the op slot is filled by every provider with MW support.
        let mw = unsafe {
            match (*self.dev.ctx).ops.alloc_mw {
                Some(f) => f(self.pd, self.dev.mw_type),
                None => std::ptr::null_mut(),
            }
        };
        if mw.is_null() {
            let e = sys::errno();
            return Err(fail("ibv_alloc_mw", e, resource_error(e, DAT_RESOURCE_MEMORY_REGION)));
        }
        // SAFETY: live MW.
        let rkey = unsafe { (*mw).rkey };
        let mw = Arc::new(VerbsMw { pd: self.pd_arc(), mw, rkey: AtomicU32::new(rkey), bound: AtomicBool::new(false) });
        MWS.insert(&mw);
        Ok(mw)
    }

    fn create_srq(&self, max_wr: u32, max_sge: u32) -> DatResult<Arc<dyn SharedReceiveQueue>> {
        let s = srq::VerbsSrq::new(self.pd_arc(), max_wr, max_sge)?;
        SRQS.insert(&s);
        Ok(s)
    }
}

impl VerbsPd {
    /// Our own Arc (the core holds `Arc<dyn ProtectionDomain>` of the same allocation).
    fn pd_arc(&self) -> Arc<VerbsPd> {
        PDS.get_at(self as *const VerbsPd as *const ()).expect("PD registered")
    }
}

pub struct VerbsMr {
    pub(crate) pd: Arc<VerbsPd>,
    pub(crate) mr: *mut sys::ibv_mr,
    lkey: u32,
    rkey: u32,
    addr: u64,
    len: u64,
}

// SAFETY: ibv_mr is immutable after registration; deregistered once in Drop.
unsafe impl Send for VerbsMr {}
// SAFETY: as above.
unsafe impl Sync for VerbsMr {}

impl MemoryRegion for VerbsMr {
    fn lkey(&self) -> u32 {
        self.lkey
    }
    fn rkey(&self) -> u32 {
        self.rkey
    }
    fn addr(&self) -> u64 {
        self.addr
    }
    fn length(&self) -> u64 {
        self.len
    }
}

impl Drop for VerbsMr {
    fn drop(&mut self) {
        self.pd.mrs.remove(self.lkey);
        // SAFETY: the MR is live and dropped once.
        let r = unsafe { (self.pd.dev.lib.ibv_dereg_mr)(self.mr) };
        if r != 0 {
            tracing::warn!("verbs: ibv_dereg_mr failed: {}", sys::errno_str(sys::err_of(r)));
        }
    }
}

pub struct VerbsMw {
    pub(crate) pd: Arc<VerbsPd>,
    pub(crate) mw: *mut sys::ibv_mw,
    pub(crate) rkey: AtomicU32,
    pub(crate) bound: AtomicBool,
}

// SAFETY: the MW is changed only through bind work requests; freed once in Drop.
unsafe impl Send for VerbsMw {}
// SAFETY: as above.
unsafe impl Sync for VerbsMw {}

impl MemoryWindow for VerbsMw {
    fn rkey(&self) -> u32 {
        if self.bound.load(Ordering::Acquire) {
            self.rkey.load(Ordering::Acquire)
        } else {
            0
        }
    }
}

impl Drop for VerbsMw {
    fn drop(&mut self) {
        // SAFETY: live MW, freed once, through the op slot ibv_dealloc_mw uses.
        unsafe {
            if let Some(f) = (*self.pd.dev.ctx).ops.dealloc_mw {
                f(self.mw);
            }
        }
    }
}
