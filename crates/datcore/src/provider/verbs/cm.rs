//! Connection management: the IA's rdma_cm event channel and its CM thread, listeners
//! (PSP/RSP) and connection requests (CR).
//!
//! Every rdma_cm id we create carries a key of ours as its context; the device's `ids` table
//! maps it to the owner (a queue pair, a listener or a pending request). The CM thread copies
//! what it needs from an event (private data included), acknowledges the event, and only then
//! calls the owner, so `rdma_destroy_id` never waits on an unacknowledged event and owners may
//! be dropped from any thread, the CM thread included. The same thread reads the device's
//! asynchronous events (QP fatal errors, device fatal) and runs connect/disconnect deadlines.

use super::super::serve::Served;
use super::super::{AsyncError, ConnEvent, ConnectionEvents, ConnectionRequest, Listener, ListenerEvents};
use super::qp::{set_nonblock, VerbsQp};
use super::ud;
use super::{fail, sys, DevInner, Reg};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Instant;

/// Private data of our rejects, so iWARP peers can tell a consumer reject from no listener.
pub const REJECT_MARKER: &[u8] = b"DATREJ";
/// The most private data a reject carries on every transport (an IB CM REJ has 148 bytes).
pub const REJECT_DATA_MAX: usize = 148;

/// What a REJECTED event of a connect says, from its private data and status: the peer's
/// consumer rejected (our marker, or the IB CM's consumer-reject status 28; the data is what
/// follows the marker), or nobody listens there (IB CM status 8; iWARP: ECONNREFUSED for both).
pub fn rejected(pd: &[u8], status: i32) -> (ConnEvent, &[u8]) {
    match pd.strip_prefix(REJECT_MARKER) {
        Some(data) => (ConnEvent::PeerRejected, data),
        None if status == 28 => (ConnEvent::PeerRejected, pd),
        None => (ConnEvent::NonPeerRejected, pd),
    }
}

pub(crate) static CRS: Reg<VerbsCr> = Reg::new();

/// Who owns an rdma_cm id.
pub enum Owner {
    Qp(Weak<VerbsQp>),
    Listener(Weak<VerbsListener>),
    Cr(Weak<VerbsCr>),
    /// An address exchange of a UD queue pair.
    Ud(Weak<ud::Exchange>),
}

/// A watched queue pair: (device context, qp_num) → (EP context, its device, the queue pair's
/// connection events).
type WatchTable = HashMap<(usize, u32), (u64, Weak<DevInner>, Weak<dyn ConnectionEvents>)>;

/// Queue pairs (RC and UD) whose asynchronous events we report.
static WATCHED: Mutex<Option<WatchTable>> = Mutex::new(None);

/// Reports the asynchronous events of queue pair `qpn` of `dev` from now on: its errors to
/// `dev`'s IA naming EP `context`, its "last WQE reached" to `events`.
pub fn watch_qp(dev: &Arc<DevInner>, qpn: u32, context: u64, events: Weak<dyn ConnectionEvents>) {
    let entry = (context, Arc::downgrade(dev), events);
    WATCHED.lock().get_or_insert_with(HashMap::new).insert((dev.ctx as usize, qpn), entry);
}

pub fn unwatch_qp(dev: &DevInner, qpn: u32) {
    if let Some(m) = WATCHED.lock().as_mut() {
        m.remove(&(dev.ctx as usize, qpn));
    }
}

pub fn start(dev: &Arc<DevInner>) -> DatResult<JoinHandle<()>> {
    let d = dev.clone();
    std::thread::Builder::new().name("dat-verbs-cm".into()).spawn(move || cm_thread(d)).map_err(|e| {
        tracing::warn!("verbs: cannot start the CM thread: {e}");
        DatError::insufficient(DAT_RESOURCE_MEMORY)
    })
}

fn sockaddr_of(ss: &libc::sockaddr_storage) -> SocketAddr {
    // SAFETY: a sockaddr_storage is large enough for any family from_sockaddr reads.
    unsafe { crate::ia::from_sockaddr(ss as *const _ as *const libc::sockaddr) }
        .unwrap_or(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0))
}

fn cm_thread(dev: Arc<DevInner>) {
    let lib = dev.lib;
    // SAFETY: the channel and context live as long as `dev`.
    let (cm_fd, async_fd) = unsafe { ((*dev.cm_channel).fd, (*dev.ctx).async_fd) };
    set_nonblock(cm_fd);
    set_nonblock(async_fd);
    let mut served = Served::new("dat-verbs-cm");
    // Sleeps until an event or the next deadline: an idle IA's thread never wakes (OFED's
    // does not either). Whoever adds a deadline or stops the IA rings `cm_wake`.
    let mut next: Option<Instant> = None;
    while !dev.stop.load(Ordering::Relaxed) {
        let mut fds = [
            libc::pollfd { fd: cm_fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: async_fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: dev.cm_wake.fd(), events: libc::POLLIN, revents: 0 },
        ];
        let timeout = next.map_or(-1, |d| {
            // rounded up, so a deadline is due when the sleep ends
            let ms = d.saturating_duration_since(Instant::now()).as_micros().div_ceil(1000);
            ms.min(i32::MAX as u128) as i32
        });
        // SAFETY: three valid pollfds.
        unsafe { libc::poll(fds.as_mut_ptr(), 3, timeout) };
        if fds[2].revents != 0 {
            dev.cm_wake.clear();
        }
        served.iteration(&*dev.async_events, || {
            if fds[0].revents != 0 {
                drain_cm(&dev);
            }
            if fds[1].revents != 0 {
                drain_async(&dev);
            }
            next = run_deadlines(&dev);
        });
    }
    let _ = lib;
}

fn drain_cm(dev: &Arc<DevInner>) {
    let lib = dev.lib;
    loop {
        let mut ev = std::ptr::null_mut();
        // SAFETY: live channel, non-blocking: EAGAIN ends the loop.
        if unsafe { (lib.rdma_get_cm_event)(dev.cm_channel, &mut ev) } != 0 {
            break;
        }
        // SAFETY: a live event until acknowledged below; we copy everything we use.
        let (id, event, status, pd, key, peer_params, ud_params) = unsafe {
            let e = &*ev;
            let pd = if e.conn.private_data.is_null() || e.event == sys::RDMA_CM_EVENT_DISCONNECTED {
                Vec::new()
            } else {
                std::slice::from_raw_parts(e.conn.private_data as *const u8, e.conn.private_data_len as usize).to_vec()
            };
            let key_id = if e.event == sys::RDMA_CM_EVENT_CONNECT_REQUEST { e.listen_id } else { e.id };
            let key = if key_id.is_null() { 0 } else { (*key_id).context as usize as u64 };
            let datagram = !e.id.is_null() && (*e.id).ps == sys::RDMA_PS_UDP;
            let ud_params = datagram.then(|| ud::Params::of(&e.ud()));
            (e.id, e.event, e.status, pd, key, (e.conn.responder_resources, e.conn.initiator_depth), ud_params)
        };
        // SAFETY: acknowledging the event we got; nothing of it is used afterwards.
        unsafe { (lib.rdma_ack_cm_event)(ev) };
        let owner = match dev.ids.lock().get(&key) {
            Some(Owner::Qp(w)) => Some(Target::Qp(w.upgrade())),
            Some(Owner::Listener(w)) => Some(Target::Listener(w.upgrade())),
            Some(Owner::Cr(w)) => Some(Target::Cr(w.upgrade())),
            Some(Owner::Ud(w)) => Some(Target::Ud(w.upgrade())),
            None => None,
        };
        match (event, owner) {
            (sys::RDMA_CM_EVENT_CONNECT_REQUEST, Some(Target::Listener(Some(l)))) => l.request(id, pd, peer_params),
            (sys::RDMA_CM_EVENT_CONNECT_REQUEST, _) => {
                // SAFETY: the new id is ours alone; refuse and free it.
                unsafe {
                    (lib.rdma_reject)(id, std::ptr::null(), 0);
                    (lib.rdma_destroy_id)(id);
                }
            }
            (_, Some(Target::Qp(Some(q)))) => q.on_cm_event(event, status, &pd),
            (_, Some(Target::Ud(Some(x)))) => x.on_cm_event(event, status, &pd, ud_params),
            (_, Some(Target::Cr(Some(_)))) => {
                tracing::debug!("verbs: {} on a pending connection request", sys::event_str(lib, event));
            }
            (sys::RDMA_CM_EVENT_DEVICE_REMOVAL, _) => super::route::device_wide(dev, None, AsyncError::DeviceFatal),
            _ => tracing::debug!("verbs: {} for a forgotten id", sys::event_str(lib, event)),
        }
    }
}

enum Target {
    Qp(Option<Arc<VerbsQp>>),
    Listener(Option<Arc<VerbsListener>>),
    Cr(Option<Arc<VerbsCr>>),
    Ud(Option<Arc<ud::Exchange>>),
}

fn drain_async(dev: &Arc<DevInner>) {
    let lib = dev.lib;
    loop {
        // SAFETY: plain old data filled by the library.
        let mut ev: sys::ibv_async_event = unsafe { std::mem::zeroed() };
        // SAFETY: live context, non-blocking fd.
        if unsafe { (lib.ibv_get_async_event)(dev.ctx, &mut ev) } != 0 {
            break;
        }
        let t = ev.event_type;
        let qp_error = matches!(t, sys::IBV_EVENT_QP_FATAL | sys::IBV_EVENT_QP_REQ_ERR | sys::IBV_EVENT_QP_ACCESS_ERR);
        let last_wqe = t == sys::IBV_EVENT_QP_LAST_WQE_REACHED;
        let comm_est = t == sys::IBV_EVENT_COMM_EST;
        let about_qp = qp_error || last_wqe || comm_est;
        // SAFETY: for QP events the element is the QP, alive until the event is acknowledged.
        let qpn = if about_qp { unsafe { (*(ev.element as *mut sys::ibv_qp)).qp_num } } else { 0 };
        let srq_limit = t == sys::IBV_EVENT_SRQ_LIMIT_REACHED;
        // SAFETY: for SRQ events the element is the SRQ, alive until the event is acknowledged;
        // its srq_context is the context set when the limit was armed (srq.rs, set_limit).
        let srq_context =
            if srq_limit { unsafe { (*(ev.element as *mut sys::ibv_srq)).srq_context as u64 } } else { 0 };
        if t == sys::IBV_EVENT_CQ_ERR {
            tracing::warn!("verbs: CQ error (overrun)");
            // SAFETY: for CQ events the element is the CQ, alive until the event is acknowledged.
            unsafe { super::route::cq_error(dev, ev.element as *mut sys::ibv_cq) };
        }
        // SAFETY: acknowledging the event we got.
        unsafe { (lib.ibv_ack_async_event)(&mut ev) };
        if comm_est {
            let r = notify_comm_est(dev, qpn);
            tracing::debug!(qpn, "verbs: a message before the connection's establishment, rdma_notify: {r:?}");
        } else if about_qp {
            qp_event(dev, qpn, last_wqe);
        } else if t == sys::IBV_EVENT_DEVICE_FATAL {
            tracing::warn!("verbs: {}: device fatal error", dev.attr.adapter_name);
            super::route::device_wide(dev, None, AsyncError::DeviceFatal);
        } else if srq_limit {
            tracing::debug!(srq_context, "verbs: SRQ limit reached");
            dev.async_events.async_error(AsyncError::SrqLimit { context: srq_context });
        } else if t == sys::IBV_EVENT_PORT_ERR {
            // the union's port_num, an int at the element's place
            let port = ev.element as usize as u8;
            tracing::warn!(port, "verbs: {}: port error", dev.attr.adapter_name);
            super::route::device_wide(dev, Some(port), AsyncError::PortError);
        } else if t != sys::IBV_EVENT_CQ_ERR {
            tracing::debug!("verbs: asynchronous event {t}");
        }
    }
}

/// An asynchronous event of queue pair `qpn` of `dev`'s context: an error (the QP is in error)
/// to the IA that owns the queue pair (`DAT_ASYNC_ERROR_EP_BROKEN` naming its EP), or
/// (`last_wqe`) its "last WQE reached" to its connection events.
fn qp_event(dev: &DevInner, qpn: u32, last_wqe: bool) {
    let watched = WATCHED.lock().as_ref().and_then(|m| m.get(&(dev.ctx as usize, qpn)).cloned());
    let Some((context, owner, events)) = watched else {
        tracing::debug!(qpn, last_wqe, "verbs: asynchronous event of a queue pair we do not watch");
        return;
    };
    if last_wqe {
        tracing::debug!(qpn, "verbs: last WQE reached");
        if let Some(events) = events.upgrade() {
            events.srq_receives_done();
        }
    } else {
        tracing::warn!(qpn, "verbs: asynchronous QP error");
        if let Some(d) = owner.upgrade() {
            d.async_events.async_error(AsyncError::QpError { context });
        }
    }
}

/// `IBV_EVENT_COMM_EST` of queue pair `qpn` of `dev`'s context (it received a message before
/// its CM took the connection as established, e.g. the peer's RTU was lost or is late): passed
/// on to rdma_cm for the RC queue pair of that number, of whichever IA owns it
/// ([`VerbsQp::notify_comm_est`]). Returns rdma_notify's errno (0: done), None when no RC
/// queue pair of ours has that number.
fn notify_comm_est(dev: &DevInner, qpn: u32) -> Option<i32> {
    let owner = WATCHED.lock().as_ref().and_then(|m| m.get(&(dev.ctx as usize, qpn)).map(|e| e.1.clone()))?;
    let owner = owner.upgrade()?;
    let qp = rc_queue_pairs(&owner).into_iter().find(|q| q.qp_num() == qpn)?;
    Some(qp.notify_comm_est())
}

/// The live RC queue pairs of `dev`'s IA.
fn rc_queue_pairs(dev: &DevInner) -> Vec<Arc<VerbsQp>> {
    // Only weak references under the id table's lock: dropping the last strong one there would
    // deadlock (a queue pair's Drop removes its id from the table).
    let weak: Vec<Weak<VerbsQp>> =
        dev.ids.lock().values().filter_map(|o| if let Owner::Qp(w) = o { Some(w.clone()) } else { None }).collect();
    weak.iter().filter_map(Weak::upgrade).collect()
}

/// For tests: passes `IBV_EVENT_COMM_EST` on for every RC queue pair of the IA at `address`
/// as if its device had raised the event for each, through the same lookup by queue pair
/// number; returns what rdma_notify gave for each (0 or errno; None: the lookup missed).
/// A message before the CM's RTU cannot be made on purpose (rdma_cm sends the RTU itself).
/// None when no IA of this process is open at `address`.
pub fn report_comm_est_for_test(address: IpAddr) -> Option<Vec<Option<i32>>> {
    let dev = super::route::OPEN.find(|d| d.ip == address)?;
    let qpns: Vec<u32> = rc_queue_pairs(&dev).iter().map(|q| q.qp_num()).collect();
    Some(qpns.into_iter().map(|qpn| notify_comm_est(&dev, qpn)).collect())
}

/// For tests: rdma_cm's REJECTED for the RC queue pair of the EP whose context is `context`,
/// on the IA at `address`, as librdmacm hands it over (the queue pair moved to error first).
/// The IB CM sends one for an established connection when the peer's id goes between its REP
/// and our RTU's arrival, a window inside the two kernels no test can hold open. False when
/// there is no such IA or queue pair.
pub fn report_rejected_for_test(address: IpAddr, context: u64, status: i32) -> bool {
    // The EP's handle names one queue pair in the process, on a device context that the IAs
    // open at `address` (tests running at once open several) may share: look in each.
    let Some((ctx, qpn)) =
        WATCHED.lock().as_ref().and_then(|m| m.iter().find(|(_, v)| v.0 == context).map(|(k, _)| *k))
    else {
        return false;
    };
    let devs = super::route::OPEN.on(ctx, None);
    let qp =
        devs.iter().filter(|d| d.ip == address).find_map(|d| rc_queue_pairs(d).into_iter().find(|q| q.qp_num() == qpn));
    match qp {
        Some(qp) => {
            qp.rejected_for_test(status);
            true
        }
        None => false,
    }
}

/// For tests: reports an asynchronous error of queue pair `qpn` as if the device of the IA
/// at `address` had read one (`IBV_EVENT_QP_FATAL`) from its context, through the same
/// routing. rxe and siw never raise a QP error, so there is no other way to make one there.
/// False when no IA of this process is open at `address`.
pub fn report_qp_error_for_test(address: IpAddr, qpn: u32) -> bool {
    match super::route::OPEN.find(|d| d.ip == address) {
        Some(dev) => {
            qp_event(&dev, qpn, false);
            true
        }
        None => false,
    }
}

/// Something with a deadline the CM thread keeps (`DevInner::timed`): an RC connect's timeout
/// or graceful disconnect, a UD address exchange's timeout.
pub trait Timed: Send + Sync {
    /// When [`Timed::on_deadline`] is due (None: no longer).
    fn deadline(&self) -> Option<Instant>;
    /// The CM thread: the deadline passed.
    fn on_deadline(&self);
}

/// What has a deadline, kept for the CM thread (`DevInner::timed`).
#[derive(Default)]
pub struct Timers {
    list: Vec<Weak<dyn Timed>>,
    /// When the CM thread looks at `list` next by itself (None: only when woken): a deadline
    /// added before it needs the thread woken, one after it does not.
    looks_at: Option<Instant>,
}

impl Timers {
    /// Keeps `t`, due at `deadline`; true when the CM thread must be woken to see it in time.
    pub fn add(&mut self, t: Weak<dyn Timed>, deadline: Instant) -> bool {
        self.list.push(t);
        if self.looks_at.is_some_and(|at| at <= deadline) {
            return false;
        }
        self.looks_at = Some(deadline);
        true
    }
}

/// Runs the deadlines that are due; returns the earliest of those still pending.
fn run_deadlines(dev: &Arc<DevInner>) -> Option<Instant> {
    // Take the list out and look at its entries without holding `timed`: a QP's deadline lives
    // under its CM lock, and `set_deadline` pushes here while holding that lock (connect,
    // graceful disconnect), so holding `timed` while locking a QP would deadlock the two —
    // leaving the CM thread, and with it every later event and deadline, stuck for good.
    let list = {
        let mut timers = dev.timed.lock();
        let list = std::mem::take(&mut timers.list);
        if list.is_empty() {
            timers.looks_at = None;
            return None;
        }
        list
    };
    let now = Instant::now();
    let mut keep: Vec<Weak<dyn Timed>> = Vec::with_capacity(list.len());
    let mut due = Vec::new();
    let mut next: Option<Instant> = None;
    for w in list {
        let Some(q) = w.upgrade() else { continue };
        match q.deadline() {
            Some(d) if d <= now => due.push(q),
            Some(d) if !keep.iter().any(|k| k.ptr_eq(&w)) => {
                next = Some(next.map_or(d, |n| n.min(d)));
                keep.push(w);
            }
            _ => {}
        }
    }
    {
        let mut timers = dev.timed.lock();
        if !timers.list.is_empty() {
            // Added while the list was out, against the thread's previous plan: look at them
            // at once (the thread does not sleep) rather than work out their deadlines here.
            next = Some(now);
        }
        keep.retain(|w| !timers.list.iter().any(|k| k.ptr_eq(w)));
        timers.list.extend(keep);
        timers.looks_at = next;
    }
    for q in due {
        q.on_deadline();
    }
    next
}

/// A listening rdma_cm id on port = connection qualifier.
pub struct VerbsListener {
    dev: Arc<DevInner>,
    id: *mut sys::rdma_cm_id,
    /// The same port in rdma_cm's UDP port space, for UD endpoints' exchanges (null where the
    /// device has no UD).
    ud_id: *mut sys::rdma_cm_id,
    key: u64,
    port: u64,
    events: Arc<dyn ListenerEvents>,
}

// SAFETY: the id is only destroyed in Drop; rdma_cm calls are thread-safe.
unsafe impl Send for VerbsListener {}
// SAFETY: as above.
unsafe impl Sync for VerbsListener {}

impl VerbsListener {
    pub fn listen(dev: &Arc<DevInner>, port: u64, events: Arc<dyn ListenerEvents>) -> DatResult<Arc<VerbsListener>> {
        let Ok(p16) = u16::try_from(port) else {
            tracing::warn!("verbs: connection qualifier {port} does not fit an rdma_cm port (16 bits)");
            return Err(DatError::invalid_arg(2));
        };
        let lib = dev.lib;
        let key = dev.key();
        let mut id = std::ptr::null_mut();
        // SAFETY: the device's channel; the id is destroyed in Drop or below.
        let r = unsafe { (lib.rdma_create_id)(dev.cm_channel, &mut id, key as usize as *mut _, sys::RDMA_PS_TCP) };
        if r != 0 {
            return Err(fail("rdma_create_id", sys::err_of(r), DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        let mut ss = crate::ia::to_sockaddr(SocketAddr::new(dev.ip, p16));
        // SAFETY: live id; valid sockaddr.
        let mut r = unsafe { (lib.rdma_bind_addr)(id, &mut ss as *mut _ as *mut libc::sockaddr) };
        if r == 0 {
            // SAFETY: bound id.
            r = unsafe { (lib.rdma_listen)(id, 128) };
        }
        if r != 0 {
            let e = sys::err_of(r);
            // SAFETY: our id, never shared.
            unsafe { (lib.rdma_destroy_id)(id) };
            if e == libc::EADDRINUSE {
                tracing::debug!("verbs: port {port} on {} is taken", dev.ip);
                return Err(DatError::new(DAT_CONN_QUAL_IN_USE, 0));
            }
            return Err(fail("rdma_listen", e, DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        let ud_id = if dev.attr.extensions.ud { ud::listen(dev, key, p16) } else { std::ptr::null_mut() };
        let l = Arc::new(VerbsListener { dev: dev.clone(), id, ud_id, key, port, events });
        dev.ids.lock().insert(key, Owner::Listener(Arc::downgrade(&l)));
        Ok(l)
    }

    /// The CM thread: a CONNECT_REQUEST arrived on this listener with new id `id`.
    fn request(&self, id: *mut sys::rdma_cm_id, private_data: Vec<u8>, peer: (u8, u8)) {
        let key = self.dev.key();
        // SAFETY: the new id is ours; no event of it can be dispatched before we return.
        let (remote, datagram) = unsafe {
            (*id).context = key as usize as *mut _;
            (sockaddr_of(&(*id).dst_addr), (*id).ps == sys::RDMA_PS_UDP)
        };
        let (private_data, ud_qpn) = match datagram {
            true => ud::unframe(private_data),
            false => (private_data, None),
        };
        let cr = Arc::new(VerbsCr {
            dev: self.dev.clone(),
            id: Mutex::new(Some(IdPtr(id))),
            key,
            private_data,
            remote,
            port: self.port,
            rdma_params: peer,
            datagram,
            ud_qpn,
        });
        self.dev.ids.lock().insert(key, Owner::Cr(Arc::downgrade(&cr)));
        CRS.insert(&cr);
        self.events.connect_request(cr);
    }
}

impl Listener for VerbsListener {
    fn port(&self) -> u64 {
        self.port
    }
}

impl Drop for VerbsListener {
    fn drop(&mut self) {
        self.dev.ids.lock().remove(&self.key);
        // SAFETY: our ids, destroyed once.
        unsafe {
            (self.dev.lib.rdma_destroy_id)(self.id);
            if !self.ud_id.is_null() {
                (self.dev.lib.rdma_destroy_id)(self.ud_id);
            }
        }
    }
}

pub struct IdPtr(*mut sys::rdma_cm_id);

// SAFETY: a plain pointer handed between threads under a mutex.
unsafe impl Send for IdPtr {}

/// An incoming connection request: the CONNECT_REQUEST id until accepted or rejected.
pub struct VerbsCr {
    pub(crate) dev: Arc<DevInner>,
    id: Mutex<Option<IdPtr>>,
    pub(crate) key: u64,
    private_data: Vec<u8>,
    remote: SocketAddr,
    port: u64,
    /// (responder_resources, initiator_depth) the active side offered.
    pub(crate) rdma_params: (u8, u8),
    /// A UD endpoint's exchange (arrived on the listener's UDP port space).
    datagram: bool,
    /// The requesting UD queue pair's number, from our exchange header (None: a peer that
    /// sent none).
    pub(crate) ud_qpn: Option<u32>,
}

/// Request `req`, to be accepted with reply `private_data` by a queue pair of `dev` that is a
/// UD one (`datagram`) or an RC one: only the same kind may answer (else
/// `DAT_INVALID_PARAMETER|ARG2`), on the device the request came to.
pub fn acceptable(
    dev: &Arc<DevInner>,
    req: &Arc<dyn ConnectionRequest>,
    private_data: &[u8],
    datagram: bool,
) -> DatResult<Arc<VerbsCr>> {
    let cr = CRS.get(req).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_CR))?;
    if private_data.len() > dev.attr.max_private_data {
        return Err(DatError::invalid_arg(3));
    }
    if !Arc::ptr_eq(&cr.dev, dev) {
        return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_EP));
    }
    if cr.datagram != datagram {
        return Err(DatError::invalid_arg(2));
    }
    Ok(cr)
}

impl VerbsCr {
    /// Takes the id for an accept.
    pub fn take_id(&self) -> Option<*mut sys::rdma_cm_id> {
        self.id.lock().take().map(|p| p.0)
    }

    /// Returns the id after a failed UD accept (the request stays open for another answer).
    pub fn give_back(&self, id: *mut sys::rdma_cm_id) {
        *self.id.lock() = Some(IdPtr(id));
    }
}

impl ConnectionRequest for VerbsCr {
    fn private_data(&self) -> &[u8] {
        &self.private_data
    }

    fn remote_address(&self) -> SocketAddr {
        self.remote
    }

    fn port(&self) -> u64 {
        self.port
    }

    fn is_datagram(&self) -> bool {
        self.datagram
    }

    fn reject(&self, private_data: &[u8]) -> DatResult<()> {
        // Our marker, then the consumer's private data (the active side strips the marker).
        let data = [REJECT_MARKER, private_data].concat();
        if data.len() > REJECT_DATA_MAX {
            return Err(DatError::invalid_arg(2));
        }
        let Some(IdPtr(id)) = self.id.lock().take() else {
            return Err(DatError::invalid_state(0));
        };
        self.dev.ids.lock().remove(&self.key);
        // SAFETY: the request id is ours (taken above); destroyed once.
        let r = unsafe {
            let r = (self.dev.lib.rdma_reject)(id, data.as_ptr() as *const _, data.len() as u8);
            (self.dev.lib.rdma_destroy_id)(id);
            r
        };
        if r != 0 {
            tracing::warn!("verbs: rdma_reject failed: {}", sys::errno_str(sys::err_of(r)));
        }
        Ok(())
    }
}

impl Drop for VerbsCr {
    fn drop(&mut self) {
        if self.id.get_mut().is_some() {
            let _ = self.reject(&[]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    struct Never;
    impl Timed for Never {
        fn deadline(&self) -> Option<Instant> {
            None
        }
        fn on_deadline(&self) {}
    }

    #[test]
    fn a_deadline_wakes_the_cm_thread_only_when_it_would_sleep_past_it() {
        let t: Arc<dyn Timed> = Arc::new(Never);
        let at = |s| Instant::now() + Duration::from_secs(s);
        let mut timers = Timers::default();
        assert!(timers.add(Arc::downgrade(&t), at(10)), "the thread sleeps without a deadline");
        assert!(!timers.add(Arc::downgrade(&t), at(20)), "it wakes at 10 s anyway");
        assert!(timers.add(Arc::downgrade(&t), at(5)), "earlier than its wake");
        assert!(!timers.add(Arc::downgrade(&t), at(5)), "no earlier than its wake");
        assert_eq!(timers.list.len(), 4, "every deadline is kept");
    }
}
