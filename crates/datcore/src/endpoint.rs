//! Endpoints (EP): a provider queue pair, its EVDs and the DAT connection state machine.
//!
//! ```text
//! UNCONNECTED --connect--> ACTIVE_CONNECTION_PENDING --established--> CONNECTED
//! UNCONNECTED --cr_accept--> PASSIVE_CONNECTION_PENDING --established--> CONNECTED
//! RESERVED (bound to an RSP) --cr_accept--> PASSIVE_CONNECTION_PENDING
//! TENTATIVE_CONNECTION_PENDING (provider-made EP of a PSP) --cr_accept--> PASSIVE_...
//! CONNECTED --disconnect--> DISCONNECT_PENDING --disconnected--> DISCONNECTED
//! any pending/connected --rejected/unreachable/timeout/broken--> DISCONNECTED
//! DISCONNECTED --ep_reset--> UNCONNECTED (fresh queue pair)
//! ```
//! The state is an atomic so the post path reads it without a lock.

use crate::codes::*;
use crate::counters::{self, EpCounters};
use crate::error::{DatError, DatResult};
use crate::evd::EventDispatcher;
use crate::event::{Event, EventData};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::{
    ConnEvent, ConnectionEvents, ConnectionRequest, QpCaps, QpInit, QueuePair, Rdma, SendFlags, SendOp, SendWr, Sge,
    UdExchange, UdPeer, WcOpcode, ATOMIC_LEN,
};
use crate::pz::ProtectionZone;
use crate::srq::SharedReceiveQueue;
use crate::ud::{AddressHandle, DAT_IB_SERVICE_TYPE_UD};
use parking_lot::{Mutex, RwLock};
use queue_pairs::QueuePairs;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

mod queue_pairs;

/// Largest private data any provider of ours carries.
pub const MAX_PRIVATE_DATA: usize = 1024;

/// `DAT_EP_ATTR` in native types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpAttr {
    pub service_type: u32,
    pub max_message_size: u64,
    pub max_rdma_size: u64,
    pub qos: u32,
    pub recv_completion_flags: u32,
    pub request_completion_flags: u32,
    pub max_recv_dtos: i32,
    pub max_request_dtos: i32,
    pub max_recv_iov: i32,
    pub max_request_iov: i32,
    pub max_rdma_read_in: i32,
    pub max_rdma_read_out: i32,
    pub srq_soft_hw: i32,
    pub max_rdma_read_iov: i32,
    pub max_rdma_write_iov: i32,
}

impl EpAttr {
    /// The attributes an EP gets when the consumer passes none.
    pub fn defaults(ia: &InterfaceAdapter) -> EpAttr {
        let a = ia.device.attr();
        let iov = a.max_sge.min(8) as i32;
        EpAttr {
            service_type: DAT_SERVICE_TYPE_RC,
            max_message_size: a.max_message_size,
            max_rdma_size: a.max_rdma_size,
            qos: DAT_QOS_BEST_EFFORT,
            recv_completion_flags: DAT_COMPLETION_DEFAULT_FLAG,
            request_completion_flags: DAT_COMPLETION_DEFAULT_FLAG,
            max_recv_dtos: a.max_qp_wr.min(256) as i32,
            max_request_dtos: a.max_qp_wr.min(256) as i32,
            max_recv_iov: iov,
            max_request_iov: iov,
            max_rdma_read_in: a.max_rdma_read_in.min(4) as i32,
            max_rdma_read_out: a.max_rdma_read_out.min(4) as i32,
            srq_soft_hw: 0,
            max_rdma_read_iov: iov,
            max_rdma_write_iov: iov,
        }
    }

    fn validate(&self, ia: &InterfaceAdapter, arg: u32) -> DatResult<()> {
        let a = ia.device.attr();
        if self.is_datagram() && !a.extensions.ud {
            return Err(DatError::NOT_IMPLEMENTED);
        }
        let bad = !matches!(self.service_type, DAT_SERVICE_TYPE_RC | DAT_IB_SERVICE_TYPE_UD)
            || self.max_message_size > a.max_message_size
            || self.max_rdma_size > a.max_rdma_size
            || self.max_recv_dtos < 0
            || self.max_request_dtos <= 0
            || self.max_recv_dtos as u32 > a.max_qp_wr
            || self.max_request_dtos as u32 > a.max_qp_wr
            || self.max_recv_iov < 0
            || self.max_request_iov <= 0
            || self.max_recv_iov as u32 > a.max_sge
            || self.max_request_iov as u32 > a.max_sge
            || self.max_rdma_read_in < 0
            || self.max_rdma_read_out < 0
            || self.max_rdma_read_in as u32 > a.max_rdma_read_in
            || self.max_rdma_read_out as u32 > a.max_rdma_read_out
            || self.request_completion_flags & !ALL_COMPLETION_FLAGS != 0
            || self.recv_completion_flags & !ALL_COMPLETION_FLAGS != 0;
        if bad {
            Err(DatError::invalid_arg(arg))
        } else {
            Ok(())
        }
    }

    /// Whether these are the attributes of a UD endpoint (`DAT_IB_SERVICE_TYPE_UD`).
    pub fn is_datagram(&self) -> bool {
        self.service_type == DAT_IB_SERVICE_TYPE_UD
    }

    fn caps(&self) -> QpCaps {
        QpCaps {
            max_send_wr: self.max_request_dtos as u32,
            max_recv_wr: self.max_recv_dtos as u32,
            max_send_sge: self.max_request_iov as u32,
            max_recv_sge: self.max_recv_iov as u32,
            max_rdma_read_in: self.max_rdma_read_in as u32,
            max_rdma_read_out: self.max_rdma_read_out as u32,
        }
    }
}

/// What the consumer names when creating an EP.
pub struct EpCreate {
    pub pz: Handle,
    pub recv_evd: Handle,
    pub request_evd: Handle,
    pub connect_evd: Handle,
    pub srq: Handle,
    pub attr: Option<EpAttr>,
}

/// Connection details for queries and connection events.
struct Connection {
    remote: Option<SocketAddr>,
    remote_sockaddr: Box<libc::sockaddr_storage>,
    remote_port: u64,
    /// Peer private data of the last connection event, at a stable address.
    private_data: Box<[u8; MAX_PRIVATE_DATA]>,
    private_data_len: usize,
}

/// The PZ and EVDs an EP names. `dat_ep_modify` may change them until the EP connects; an EP
/// the provider creates for a connection request (`DAT_PSP_PROVIDER_FLAG`) starts with none.
#[derive(Clone, Default)]
pub struct EpBinding {
    pub pz: Option<Arc<ProtectionZone>>,
    pub pz_handle: Handle,
    pub recv_evd: Option<Arc<EventDispatcher>>,
    pub request_evd: Option<Arc<EventDispatcher>>,
    pub connect_evd: Option<Arc<EventDispatcher>>,
    /// The receive, request and connect EVD handles, in that order.
    pub evd_handles: [Handle; 3],
}

/// Which EVD of an EP: the index into [`EpBinding::evd_handles`].
pub const RECV_EVD: usize = 0;
pub const REQUEST_EVD: usize = 1;
pub const CONNECT_EVD: usize = 2;

impl EpBinding {
    /// Names `h` as the PZ; it must be a PZ of `ia`.
    fn set_pz(&mut self, ia: &Arc<InterfaceAdapter>, h: Handle) -> DatResult<()> {
        let pz = handle::get::<ProtectionZone>(h, DAT_INVALID_HANDLE_PZ)?;
        if !Arc::ptr_eq(&pz.ia, ia) {
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_PZ));
        }
        self.pz = Some(pz.arc());
        self.pz_handle = h;
        Ok(())
    }

    /// Names `h` (NULL: none) as the EVD `which` ([`RECV_EVD`], [`REQUEST_EVD`], [`CONNECT_EVD`]).
    fn set_evd(&mut self, which: usize, h: Handle) -> DatResult<()> {
        let (sub, flag) = [
            (DAT_INVALID_HANDLE_EVD_RECV, DAT_EVD_DTO_FLAG),
            (DAT_INVALID_HANDLE_EVD_REQUEST, DAT_EVD_DTO_FLAG),
            (DAT_INVALID_HANDLE_EVD_CONN, DAT_EVD_CONNECTION_FLAG),
        ][which];
        let evd = optional_evd(h, sub, flag)?;
        *[&mut self.recv_evd, &mut self.request_evd, &mut self.connect_evd][which] = evd;
        self.evd_handles[which] = h;
        Ok(())
    }

    /// Counts this EP as a user of its PZ and EVDs (`acquire`) or stops counting it.
    fn count_use(&self, acquire: bool) {
        if let Some(pz) = &self.pz {
            if acquire {
                pz.acquire()
            } else {
                pz.release()
            }
        }
        for evd in [&self.recv_evd, &self.request_evd, &self.connect_evd].into_iter().flatten() {
            if acquire {
                evd.users.fetch_add(1, Ordering::SeqCst);
            } else {
                evd.users.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

/// What `dat_ep_modify` changes: `Some` fields only.
#[derive(Default)]
pub struct EpModify {
    pub attr: Option<EpAttr>,
    pub pz: Option<Handle>,
    /// New receive, request and connect EVDs (a NULL handle: none).
    pub evds: [Option<Handle>; 3],
}

/// The kind of a post, for [`Endpoint::check_segment_count`]: which IOV limit applies
/// (atomics, sends with immediate data and datagram sends are requests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostKind {
    Recv,
    Send,
    RdmaWrite,
    RdmaRead,
}

impl PostKind {
    /// The limit a request of `op` is under.
    pub fn of(op: &SendOp) -> Self {
        match op {
            SendOp::Send | SendOp::Atomic { .. } => PostKind::Send,
            SendOp::RdmaWrite { .. } | SendOp::RdmaWriteImmed { .. } => PostKind::RdmaWrite,
            SendOp::RdmaRead { .. } => PostKind::RdmaRead,
        }
    }
}

/// How many SGEs each kind of post may carry (from the EP attributes; an RDMA op may use the
/// request limit when it is the larger).
#[derive(Default)]
struct IovLimits {
    request: AtomicU32,
    recv: AtomicU32,
    rdma_write: AtomicU32,
    rdma_read: AtomicU32,
}

impl IovLimits {
    fn set(&self, a: &EpAttr) {
        let limit = |n: i32| n.max(0) as u32;
        self.request.store(limit(a.max_request_iov), Ordering::Relaxed);
        self.recv.store(limit(a.max_recv_iov), Ordering::Relaxed);
        self.rdma_write.store(limit(a.max_rdma_write_iov.max(a.max_request_iov)), Ordering::Relaxed);
        self.rdma_read.store(limit(a.max_rdma_read_iov.max(a.max_request_iov)), Ordering::Relaxed);
    }
}

pub struct Endpoint {
    pub ia: Arc<InterfaceAdapter>,
    pub srq: Option<Arc<SharedReceiveQueue>>,
    pub srq_handle: Handle,
    binding: RwLock<EpBinding>,
    attr: Mutex<EpAttr>,
    /// The attributes' IOV limits, read by every post without taking `attr`'s lock.
    iov_limits: IovLimits,
    /// The queue pair; none while the EP has no PZ (a provider-created EP before
    /// `dat_ep_modify` names one). Replaced ones stay allocated until the EP is dropped (see
    /// [`queue_pairs`]), so posts use it without a lock or reference count.
    qp: QueuePairs,
    /// Where the current queue pair reports connection events. A replaced queue pair's is
    /// detached: a queue pair kept after its replacement reports nothing to the EP.
    qp_events: Mutex<Option<Arc<EpEvents>>>,
    /// Receives posted since the queue pair was made and before any connect or accept, so that
    /// a queue pair rebuilt by `dat_ep_modify` gets them again.
    early_recvs: Mutex<Vec<(u64, Vec<Sge>)>>,
    state: AtomicU32,
    conn: Mutex<Connection>,
    binds: Mutex<HashMap<u64, (Handle, u64)>>,
    next_bind: AtomicU64,
    handle: OnceLock<Handle>,
    /// The armed soft high watermark on receives in progress (`dat_ep_set_watermark`), or
    /// [`WATERMARK_DISARMED`].
    soft_watermark: AtomicU32,
    /// The hard high watermark on receives in progress, or [`WATERMARK_DISARMED`]
    /// (`DAT_WATERMARK_INFINITE`): above it, a connected EP's connection is broken.
    hard_watermark: AtomicU32,
    /// Set when the hard high watermark broke the connection: the disconnect that follows is
    /// reported as `DAT_CONNECTION_EVENT_BROKEN`.
    broken_by_watermark: AtomicBool,
    /// What a receive's fast path checks, in one word: the receive IOV limit plus one while
    /// the EP is connected, has no SRQ and no watermark armed, else 0 (every receive then
    /// takes the checked path). Recomputed by [`Self::refresh_fast`] after every change
    /// of one of those, so it is never stale once the change's call returns.
    recv_fast_limit: AtomicU32,
    /// What a send's fast path checks, in one word: the request IOV limit plus one while the
    /// EP is connected, else 0 (every send then takes the checked path). Recomputed with
    /// `recv_fast_limit`.
    send_fast_limit: AtomicU32,
    /// What an RDMA write's (index 0) and an RDMA read's (index 1) fast paths check, as
    /// `send_fast_limit` does with their own IOV limits. Recomputed with `recv_fast_limit`.
    rdma_fast_limits: [AtomicU32; 2],
    /// Serialises the recomputations of the fast words, so the last one sees every change.
    fast_refresh: Mutex<()>,
    /// A UD endpoint's live address handles (freed with the EP); None once the EP is freed (an
    /// exchange that ends after that makes none).
    address_handles: Mutex<Option<Vec<Handle>>>,
    /// What the IB counters extension reports for this EP.
    pub counters: EpCounters,
}

/// A new queue pair and the sink of its connection events.
type MadeQp = (Arc<dyn QueuePair>, Arc<EpEvents>);

/// `soft_watermark` / `hard_watermark` when nothing is armed (`DAT_WATERMARK_INFINITE`, or
/// after the soft watermark's event).
const WATERMARK_DISARMED: u32 = u32::MAX;
/// `DAT_WATERMARK_INFINITE` (`(DAT_COUNT) ~0`).
pub const WATERMARK_INFINITE: i32 = -1;

handle::dat_object!(Endpoint, Ep);

/// Routes a queue pair's connection events to its EP.
///
/// It also raises the "last WQE reached" event of an EP on an SRQ, which DAT consumers (Debian's
/// `dtestsrq`) wait for before freeing the EP: `DAT_ASYNC_ERROR_EP_BROKEN` on the IA's async EVD,
/// naming the EP, reason `DAT_EP_TRANSFER_TO_ERROR`. Rule: it is delivered exactly once per
/// connection of the queue pair, after the EP has left an established connection (its
/// `DISCONNECTED` or `BROKEN` event is queued) and once the provider said every receive the
/// queue pair took from the SRQ has completed or been flushed
/// ([`ConnectionEvents::srq_receives_done`]: verbs from the device's own
/// `IBV_EVENT_QP_LAST_WQE_REACHED` if it comes first, else with the final connection event,
/// the queue pair being in error by then; shm with the final event, after its teardown flushed
/// a receive in progress). Whichever of the two conditions is met second delivers it, after the
/// connection event, so a consumer sees `DISCONNECTED` first. Neither rxe nor siw
/// reports the device event reliably, which is why it is not left to the device.
struct EpEvents {
    ep: Weak<Endpoint>,
    /// Set once the EP has replaced (or freed) this queue pair: its events are dropped.
    detached: AtomicBool,
    /// Which of [`LEFT_CONNECTION`] and [`SRQ_RECEIVES_DONE`] happened to this queue pair.
    srq_exit: AtomicU8,
}

/// `EpEvents::srq_exit`: the EP left an established connection.
const LEFT_CONNECTION: u8 = 1;
/// `EpEvents::srq_exit`: the provider said the queue pair's SRQ receives are done.
const SRQ_RECEIVES_DONE: u8 = 2;

impl EpEvents {
    /// The EP, unless it is gone or no longer uses this queue pair.
    fn endpoint(&self) -> Option<Arc<Endpoint>> {
        if self.detached.load(Ordering::Acquire) {
            return None;
        }
        self.ep.upgrade()
    }

    /// Records `step`; delivers the last-WQE event if this is the call that completes both
    /// (bits are only ever set, so exactly one call does).
    fn srq_exit_step(&self, ep: &Endpoint, step: u8) {
        if ep.srq.is_none() {
            return;
        }
        let both = LEFT_CONNECTION | SRQ_RECEIVES_DONE;
        let before = self.srq_exit.fetch_or(step, Ordering::AcqRel);
        if before & both != both && (before | step) & both == both {
            tracing::debug!(ep = ?ep.handle(), "EP on an SRQ: last WQE reached");
            ep.ia.post_async(DAT_ASYNC_ERROR_EP_BROKEN, ep.handle(), DAT_EP_TRANSFER_TO_ERROR);
        }
    }
}

impl ConnectionEvents for EpEvents {
    fn event(&self, ev: ConnEvent, private_data: &[u8]) {
        if let Some(ep) = self.endpoint() {
            let ev = match ev {
                ConnEvent::Disconnected if ep.broken_by_watermark.swap(false, Ordering::Relaxed) => ConnEvent::Broken,
                ev => ev,
            };
            let old = ep.connection_event(ev, private_data);
            if ev == ConnEvent::Established && ep.hard_watermark.load(Ordering::Relaxed) != WATERMARK_DISARMED {
                // Receives posted before the connection count from its start. The provider
                // calls this under its own locks, and the check asks its queue pair: a thread
                // of its own checks (an armed hard watermark only).
                let ep = ep.clone();
                let _ = std::thread::Builder::new()
                    .name("dat-hard-watermark".into())
                    .spawn(move || ep.check_hard_watermark());
            }
            let was_up = matches!(old, DAT_EP_STATE_CONNECTED | DAT_EP_STATE_DISCONNECT_PENDING);
            if was_up && ev != ConnEvent::Established {
                self.srq_exit_step(&ep, LEFT_CONNECTION);
            }
        }
    }

    fn srq_receives_done(&self) {
        if let Some(ep) = self.endpoint() {
            self.srq_exit_step(&ep, SRQ_RECEIVES_DONE);
        }
    }

    fn ud_event(&self, outcome: &UdExchange<'_>) {
        if let Some(ep) = self.endpoint() {
            ep.ud_connection_event(outcome);
        }
    }
}

fn optional_evd(h: Handle, sub: u32, flag: u32) -> DatResult<Option<Arc<EventDispatcher>>> {
    if h.is_null() {
        return Ok(None);
    }
    let evd = handle::get::<EventDispatcher>(h, sub)?;
    if !evd.accepts(flag) {
        return Err(DatError::invalid_handle(sub));
    }
    Ok(Some(evd.arc()))
}

/// The DAT_INVALID_STATE subtype naming an EP state.
pub fn state_subtype(state: u32) -> u32 {
    match state {
        DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_UNCONFIGURED_UNCONNECTED => DAT_INVALID_STATE_EP_UNCONNECTED,
        DAT_EP_STATE_RESERVED | DAT_EP_STATE_UNCONFIGURED_RESERVED => DAT_INVALID_STATE_EP_RESERVED,
        DAT_EP_STATE_PASSIVE_CONNECTION_PENDING | DAT_EP_STATE_UNCONFIGURED_PASSIVE => {
            DAT_INVALID_STATE_EP_PASSCONNPENDING
        }
        DAT_EP_STATE_ACTIVE_CONNECTION_PENDING => DAT_INVALID_STATE_EP_ACTCONNPENDING,
        DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING | DAT_EP_STATE_UNCONFIGURED_TENTATIVE => {
            DAT_INVALID_STATE_EP_TENTCONNPENDING
        }
        DAT_EP_STATE_CONNECTED => DAT_INVALID_STATE_EP_CONNECTED,
        DAT_EP_STATE_DISCONNECT_PENDING => DAT_INVALID_STATE_EP_DISCPENDING,
        DAT_EP_STATE_DISCONNECTED => DAT_INVALID_STATE_EP_DISCONNECTED,
        _ => DAT_INVALID_STATE_EP_COMPLPENDING,
    }
}

const ALL_COMPLETION_FLAGS: u32 = DAT_COMPLETION_SUPPRESS_FLAG
    | DAT_COMPLETION_SOLICITED_WAIT_FLAG
    | DAT_COMPLETION_UNSIGNALLED_FLAG
    | DAT_COMPLETION_BARRIER_FENCE_FLAG
    | DAT_COMPLETION_EVD_THRESHOLD_FLAG;

/// The completion flags a post's fast path takes: all but `DAT_COMPLETION_UNSIGNALLED_FLAG`,
/// which a request may carry only where the EP's attributes allow it (checked under their lock).
const FAST_POST_FLAGS: u32 = ALL_COMPLETION_FLAGS & !DAT_COMPLETION_UNSIGNALLED_FLAG;

/// [`SendFlags`] of each combination of the completion flags (the index): a table, so the
/// send's fast path converts them with one load.
const SEND_FLAGS_OF: [u8; 32] = {
    let mut t = [0; 32];
    let mut f = 0;
    while f < 32 {
        let mut b = 0;
        if f & (DAT_COMPLETION_SUPPRESS_FLAG | DAT_COMPLETION_UNSIGNALLED_FLAG) as usize == 0 {
            b |= SendFlags::SIGNALED;
        }
        if f & DAT_COMPLETION_SOLICITED_WAIT_FLAG as usize != 0 {
            b |= SendFlags::SOLICITED;
        }
        if f & DAT_COMPLETION_BARRIER_FENCE_FLAG as usize != 0 {
            b |= SendFlags::FENCE;
        }
        t[f] = b as u8;
        f += 1;
    }
    t
};
const _: () = assert!(ALL_COMPLETION_FLAGS as usize == SEND_FLAGS_OF.len() - 1);

/// The [`SendFlags`] of a request's completion flags (those outside [`ALL_COMPLETION_FLAGS`]
/// ignored).
#[inline(always)]
fn send_flags(flags: u32) -> SendFlags {
    SendFlags(u32::from(SEND_FLAGS_OF[(flags & ALL_COMPLETION_FLAGS) as usize]))
}

impl Endpoint {
    /// `dat_ep_create` / `dat_ep_create_with_srq`.
    pub fn create(ia: &Arc<InterfaceAdapter>, c: &EpCreate) -> DatResult<(Handle, Arc<Endpoint>)> {
        let mut binding = EpBinding::default();
        binding.set_pz(ia, c.pz)?;
        for (which, h) in [c.recv_evd, c.request_evd, c.connect_evd].into_iter().enumerate() {
            binding.set_evd(which, h)?;
        }
        let srq = if c.srq.is_null() {
            None
        } else {
            Some(handle::get::<SharedReceiveQueue>(c.srq, DAT_INVALID_HANDLE_SRQ)?.arc())
        };
        let attr = c.attr.unwrap_or_else(|| EpAttr::defaults(ia));
        attr.validate(ia, if srq.is_some() { 7 } else { 6 })?;
        Self::insert(ia, binding, srq.map(|s| (c.srq, s)), attr, DAT_EP_STATE_UNCONNECTED)
    }

    /// The EP the provider makes for a connection request on a PSP created with
    /// `DAT_PSP_PROVIDER_FLAG`: default attributes, no PZ and no EVDs (dat_psp_create(3)),
    /// in `DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING`. It has no queue pair until
    /// `dat_ep_modify` gives it a PZ.
    pub fn create_for_request(
        ia: &Arc<InterfaceAdapter>,
        req: &Arc<dyn ConnectionRequest>,
    ) -> DatResult<(Handle, Arc<Endpoint>)> {
        let attr = EpAttr::defaults(ia);
        let (h, ep) = Self::insert(ia, EpBinding::default(), None, attr, DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING)?;
        ep.set_remote(req.remote_address(), req.port());
        Ok((h, ep))
    }

    /// Registers a new EP, with a queue pair if it has a PZ.
    fn insert(
        ia: &Arc<InterfaceAdapter>,
        binding: EpBinding,
        srq: Option<(Handle, Arc<SharedReceiveQueue>)>,
        attr: EpAttr,
        state: u32,
    ) -> DatResult<(Handle, Arc<Endpoint>)> {
        let (srq_handle, srq) = srq.map_or((Handle::NULL, None), |(h, s)| (h, Some(s)));
        let ep = Arc::new(Endpoint {
            ia: ia.clone(),
            srq,
            srq_handle,
            binding: RwLock::new(binding),
            iov_limits: IovLimits::default(),
            attr: Mutex::new(attr),
            qp: QueuePairs::new(),
            qp_events: Mutex::new(None),
            early_recvs: Mutex::new(Vec::new()),
            soft_watermark: AtomicU32::new(WATERMARK_DISARMED),
            hard_watermark: AtomicU32::new(WATERMARK_DISARMED),
            broken_by_watermark: AtomicBool::new(false),
            recv_fast_limit: AtomicU32::new(0),
            send_fast_limit: AtomicU32::new(0),
            rdma_fast_limits: Default::default(),
            fast_refresh: Mutex::new(()),
            state: AtomicU32::new(state),
            conn: Mutex::new(Connection {
                remote: None,
                // SAFETY: sockaddr_storage is plain old data; all-zero is valid.
                remote_sockaddr: Box::new(unsafe { std::mem::zeroed() }),
                remote_port: 0,
                private_data: Box::new([0; MAX_PRIVATE_DATA]),
                private_data_len: 0,
            }),
            binds: Mutex::new(HashMap::new()),
            next_bind: AtomicU64::new(1 << 63),
            handle: OnceLock::new(),
            address_handles: Mutex::new(Some(Vec::new())),
            counters: EpCounters::default(),
        });
        ep.iov_limits.set(&attr);
        ep.refresh_fast();
        let h = handle::insert(ep.clone())?;
        let _ = ep.handle.set(h);
        if let Err(e) = ep.new_qp() {
            handle::remove::<Endpoint>(h);
            return Err(e);
        }
        ep.binding.read().count_use(true);
        if let Some(s) = &ep.srq {
            s.eps.fetch_add(1, Ordering::SeqCst);
        }
        ia.adopt(h);
        Ok((h, ep))
    }

    /// A provider queue pair for `attr` and `binding` with its event sink, or None when
    /// `binding` has no PZ.
    fn make_qp(self: &Arc<Self>, attr: &EpAttr, binding: &EpBinding) -> DatResult<Option<MadeQp>> {
        let Some(pz) = &binding.pz else { return Ok(None) };
        let events = Arc::new(EpEvents {
            ep: Arc::downgrade(self),
            detached: AtomicBool::new(false),
            srq_exit: AtomicU8::new(0),
        });
        let qp = self.ia.device.create_qp(QpInit {
            pd: pz.pd.clone(),
            send_cq: binding.request_evd.as_ref().and_then(|e| e.completion_queue().cloned()),
            recv_cq: binding.recv_evd.as_ref().and_then(|e| e.completion_queue().cloned()),
            srq: self.srq.as_ref().map(|s| s.srq.clone()),
            caps: attr.caps(),
            context: self.handle().0,
            events: events.clone(),
            datagram: attr.is_datagram(),
        })?;
        Ok(Some((qp, events)))
    }

    /// Makes `made` the EP's queue pair (None: none); the one it replaces no longer reports to
    /// the EP and stays allocated while a post may still use it ([`queue_pairs`]). Called by
    /// `dat_ep_reset` / `dat_ep_modify` through the EP's handle (one use of it) or before any
    /// post can run: when no other use of the handle is held, the replaced queue pairs go.
    fn install_qp(&self, made: Option<MadeQp>) {
        let (qp, events) = made.unzip();
        if let Some(old) = std::mem::replace(&mut *self.qp_events.lock(), events) {
            old.detached.store(true, Ordering::Release);
        }
        let replacing = qp.is_some();
        self.qp.install(qp);
        if replacing && handle::uses(self.handle()).is_some_and(|uses| uses <= 1) {
            self.qp.release_replaced();
        }
    }

    /// Replaces the queue pair with a fresh one; receives posted on the old one are forgotten.
    fn new_qp(self: &Arc<Self>) -> DatResult<()> {
        let made = self.make_qp(&self.attr(), &self.binding())?;
        self.install_qp(made);
        self.early_recvs.lock().clear();
        Ok(())
    }

    /// `dat_ep_modify`: attributes, PZ and EVDs, before the EP connects. The queue pair is
    /// rebuilt with the new settings and the receives posted so far are posted on it again.
    /// The PZ may change while unconnected or tentative (quiescent, dat_ep_modify(3)); the
    /// rest also while reserved for an RSP.
    pub fn modify(self: &Arc<Self>, m: &EpModify) -> DatResult<()> {
        let s = self.state();
        let allowed = match s {
            DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING => true,
            DAT_EP_STATE_RESERVED => m.pz.is_none(),
            _ => false,
        };
        if !allowed {
            return Err(DatError::invalid_state(state_subtype(s)));
        }
        let attr = match m.attr {
            Some(a) => {
                a.validate(&self.ia, 3)?;
                a
            }
            None => self.attr(),
        };
        let mut binding = self.binding();
        if let Some(h) = m.pz {
            binding.set_pz(&self.ia, h)?;
        }
        for (which, h) in m.evds.iter().enumerate() {
            if let Some(h) = h {
                binding.set_evd(which, *h)?;
            }
        }
        let made = self.make_qp(&attr, &binding)?;
        let qp = made.as_ref().map(|(qp, _)| qp.clone());
        binding.count_use(true);
        std::mem::replace(&mut *self.binding.write(), binding).count_use(false);
        self.set_attr(attr);
        self.install_qp(made);
        self.repost_early_recvs(qp);
        Ok(())
    }

    /// Posts the early receives again on a rebuilt queue pair. One the new queue pair refuses
    /// (e.g. its LMR is outside a new PZ) completes with `DAT_DTO_ERR_LOCAL_PROTECTION`.
    fn repost_early_recvs(&self, qp: Option<Arc<dyn QueuePair>>) {
        let recvs = std::mem::take(&mut *self.early_recvs.lock());
        let mut kept = Vec::with_capacity(recvs.len());
        for (cookie, sges) in recvs {
            match qp.as_ref().map(|q| q.post_recv(cookie, &sges)) {
                Some(Ok(())) => kept.push((cookie, sges)),
                _ => {
                    let evd = self.binding.read().recv_evd.clone();
                    let _ = self.complete_now(evd.as_ref(), cookie, WcOpcode::Recv, DAT_DTO_ERR_LOCAL_PROTECTION);
                }
            }
        }
        *self.early_recvs.lock() = kept;
    }

    /// The PZ and EVDs the EP names now.
    pub fn binding(&self) -> EpBinding {
        self.binding.read().clone()
    }

    pub fn handle(&self) -> Handle {
        self.handle.get().copied().unwrap_or(Handle::NULL)
    }

    #[inline]
    pub fn state(&self) -> u32 {
        self.state.load(Ordering::Acquire)
    }

    pub fn set_state(&self, s: u32) {
        self.state.store(s, Ordering::Release);
        self.refresh_fast();
    }

    /// Moves from `from` to `to`; false if the EP was not in `from`.
    pub fn transition(&self, from: u32, to: u32) -> bool {
        let moved = self.state.compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire).is_ok();
        if moved {
            self.refresh_fast();
        }
        moved
    }

    /// Recomputes `recv_fast_limit` from the state, the SRQ, the watermarks and the receive IOV
    /// limit, and `send_fast_limit` and `rdma_fast_limits` from the state and the request,
    /// RDMA write and RDMA read IOV limits. Every change of one of them calls it after the
    /// change; under the lock, the last recomputation sees them all.
    fn refresh_fast(&self) {
        let _serial = self.fast_refresh.lock();
        let connected = self.state() == DAT_EP_STATE_CONNECTED;
        let fast = connected && self.srq.is_none() && !self.watermarks_armed();
        let word = |fast: bool, iov_limit: &AtomicU32| {
            if fast {
                iov_limit.load(Ordering::Relaxed).saturating_add(1)
            } else {
                0
            }
        };
        self.recv_fast_limit.store(word(fast, &self.iov_limits.recv), Ordering::Release);
        self.send_fast_limit.store(word(connected, &self.iov_limits.request), Ordering::Release);
        let [write, read] = &self.rdma_fast_limits;
        write.store(word(connected, &self.iov_limits.rdma_write), Ordering::Release);
        read.store(word(connected, &self.iov_limits.rdma_read), Ordering::Release);
    }

    pub fn attr(&self) -> EpAttr {
        *self.attr.lock()
    }

    /// `DAT_INVALID_PARAMETER|DAT_INVALID_ARG2` when `count` segments are more than one post of
    /// `kind` takes on this EP. The faces check the count before they read the consumer's
    /// triplets, so a count past the limit is refused without reading past the array the
    /// consumer passed (which need only hold `count` triplets when `count` is allowed).
    #[inline(always)]
    pub fn check_segment_count(&self, kind: PostKind, count: i32) -> DatResult<()> {
        let limit = match kind {
            PostKind::Recv => &self.iov_limits.recv,
            PostKind::Send => &self.iov_limits.request,
            PostKind::RdmaWrite => &self.iov_limits.rdma_write,
            PostKind::RdmaRead => &self.iov_limits.rdma_read,
        };
        if i64::from(count) > i64::from(limit.load(Ordering::Relaxed)) {
            return Err(DatError::invalid_arg(2));
        }
        Ok(())
    }

    /// Whether a post of `kind` with `count` segments takes the fast path: `count` is below
    /// that kind's fast-limit word (the EP connected, `count` within the IOV limit, and for
    /// receives no SRQ or watermarks). The face's posts ask this before they read the
    /// consumer's triplets, then call [`Self::post_send_fast`], [`Self::post_rdma_fast`] or
    /// [`Self::post_recv_fast`], which compare nothing again; any other post goes through
    /// [`Self::check_segment_count`] and the checked post.
    #[inline(always)]
    pub fn segment_count_is_fast(&self, kind: PostKind, count: i32) -> bool {
        let fast_limit = match kind {
            PostKind::Recv => &self.recv_fast_limit,
            PostKind::Send => &self.send_fast_limit,
            PostKind::RdmaWrite => &self.rdma_fast_limits[0],
            PostKind::RdmaRead => &self.rdma_fast_limits[1],
        };
        // A negative count is a huge u32: never below the word.
        (count as u32) < fast_limit.load(Ordering::Acquire)
    }

    fn set_attr(&self, attr: EpAttr) {
        let mut a = self.attr.lock();
        *a = attr;
        self.iov_limits.set(&attr);
        drop(a);
        self.refresh_fast();
    }

    /// The queue pair; `DAT_INVALID_STATE_EP_NOTREADY` while the EP has no PZ.
    pub fn qp(&self) -> DatResult<Arc<dyn QueuePair>> {
        self.qp.arc().ok_or(DatError::invalid_state(DAT_INVALID_STATE_EP_NOTREADY))
    }

    /// The queue pair, for a post (no reference taken: see [`queue_pairs`]).
    #[inline]
    fn posting_qp(&self) -> DatResult<&dyn QueuePair> {
        self.qp.get().ok_or(DatError::invalid_state(DAT_INVALID_STATE_EP_NOTREADY))
    }

    /// The queue pair, if the EP is connected.
    pub fn connected_qp(&self) -> DatResult<Arc<dyn QueuePair>> {
        let s = self.state();
        if s != DAT_EP_STATE_CONNECTED {
            return Err(DatError::invalid_state(state_subtype(s)));
        }
        self.qp()
    }

    pub fn remote(&self) -> (Option<SocketAddr>, *const libc::sockaddr, u64) {
        let c = self.conn.lock();
        (c.remote, &*c.remote_sockaddr as *const _ as *const libc::sockaddr, c.remote_port)
    }

    fn set_remote(&self, remote: SocketAddr, port: u64) {
        let mut c = self.conn.lock();
        c.remote = Some(remote);
        *c.remote_sockaddr = crate::ia::to_sockaddr(remote);
        c.remote_port = port;
    }

    fn check_flags(&self, flags: u32, arg: u32) -> DatResult<()> {
        if flags & !ALL_COMPLETION_FLAGS != 0 {
            return Err(DatError::invalid_arg(arg));
        }
        if flags & DAT_COMPLETION_UNSIGNALLED_FLAG != 0
            && self.attr().request_completion_flags & DAT_COMPLETION_UNSIGNALLED_FLAG == 0
        {
            return Err(DatError::invalid_arg(arg));
        }
        Ok(())
    }

    /// `dat_ep_post_send`, `dat_ep_post_rdma_write`, `dat_ep_post_rdma_read`, and the IB
    /// extension posts (`dat_ib_post_rdma_write_immed`, `dat_ib_post_fetch_and_add`,
    /// `dat_ib_post_cmp_and_swap`): `DAT_NOT_IMPLEMENTED` where the device lacks the extension
    /// ([`DeviceAttr::extensions`](crate::provider::DeviceAttr::extensions)); an atomic's local
    /// buffer is one segment of at least 8 bytes (its first 8 receive the old value).
    ///
    /// Inlined into the face's posts: a send, RDMA write or read goes to [`Self::post_send`] or
    /// [`Self::post_rdma`]; any other call (an extension op) takes
    /// [`Self::post_request_checked`], which checks everything in the spec's order.
    #[inline(always)]
    pub fn post_request(&self, op: SendOp, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        match op {
            SendOp::Send => self.post_send(sges, cookie, flags),
            SendOp::RdmaWrite { remote_addr, rkey } => {
                self.post_rdma(sges, cookie, flags, Rdma { remote_addr, rkey, read: false })
            }
            SendOp::RdmaRead { remote_addr, rkey } => {
                self.post_rdma(sges, cookie, flags, Rdma { remote_addr, rkey, read: true })
            }
            _ => self.post_request_checked(op, sges, cookie, flags),
        }
    }

    /// `dat_ep_post_send`: [`Self::post_request`] of a [`SendOp::Send`].
    ///
    /// Inlined into the face's post: a send on a connected EP whose every check passes goes
    /// straight to the queue pair's [`QueuePair::post_message`] (`send_fast_limit` holds the
    /// state and IOV checks, the flags are converted by table); any other call takes
    /// [`Self::post_request_checked`]. Whether the IB counters count is asked before the post,
    /// so the usual post keeps nothing of its own across the queue pair's call (counting posts
    /// through [`Self::post_counted`]).
    #[inline(always)]
    pub fn post_send(&self, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        if sges.len() < self.send_fast_limit.load(Ordering::Acquire) as usize {
            return self.post_send_fast(sges, cookie, flags);
        }
        self.post_send_checked(sges, cookie, flags)
    }

    /// [`Self::post_send`] of segments fewer than `send_fast_limit` says (compared by the
    /// caller, [`Self::segment_count_is_fast`]).
    #[inline(always)]
    pub fn post_send_fast(&self, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        if flags & !FAST_POST_FLAGS == 0 {
            if let Some(qp) = self.qp.get() {
                if counters::counting() {
                    return self.post_counted(qp, SendOp::Send, sges, cookie, flags);
                }
                return qp.post_message(cookie, sges, send_flags(flags));
            }
        }
        self.post_send_checked(sges, cookie, flags)
    }

    /// `dat_ep_post_rdma_write` and `dat_ep_post_rdma_read`: [`Self::post_request`] of `rdma`'s
    /// [`SendOp`], as [`Self::post_send`] is of a send: on a connected EP whose every check
    /// passes (`rdma_fast_limits`), straight to the queue pair's [`QueuePair::post_rdma`].
    #[inline(always)]
    pub fn post_rdma(&self, sges: &[Sge], cookie: u64, flags: u32, rdma: Rdma) -> DatResult<()> {
        let fast_limit = &self.rdma_fast_limits[usize::from(rdma.read)];
        if sges.len() < fast_limit.load(Ordering::Acquire) as usize {
            return self.post_rdma_fast(sges, cookie, flags, rdma);
        }
        self.post_rdma_checked(sges, cookie, flags, rdma)
    }

    /// [`Self::post_rdma`] of segments fewer than its `rdma_fast_limits` word says (compared
    /// by the caller, [`Self::segment_count_is_fast`]).
    #[inline(always)]
    pub fn post_rdma_fast(&self, sges: &[Sge], cookie: u64, flags: u32, rdma: Rdma) -> DatResult<()> {
        if flags & !FAST_POST_FLAGS == 0 {
            if let Some(qp) = self.qp.get() {
                if counters::counting() {
                    return self.post_counted(qp, rdma.op(), sges, cookie, flags);
                }
                return qp.post_rdma(cookie, sges, rdma, send_flags(flags));
            }
        }
        self.post_rdma_checked(sges, cookie, flags, rdma)
    }

    /// A fast path's post while the IB counters count: the general post and its count.
    #[cold]
    #[inline(never)]
    fn post_counted(&self, qp: &dyn QueuePair, op: SendOp, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        self.post_request_on(qp, op, sges, cookie, flags)
    }

    /// [`Self::post_request_checked`] of a send: its operation built here, out of the export.
    #[inline(never)]
    fn post_send_checked(&self, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        self.post_request_checked(SendOp::Send, sges, cookie, flags)
    }

    /// [`Self::post_request_checked`] of an RDMA write or read: its operation built here, out
    /// of the export.
    #[inline(never)]
    fn post_rdma_checked(&self, sges: &[Sge], cookie: u64, flags: u32, rdma: Rdma) -> DatResult<()> {
        self.post_request_checked(rdma.op(), sges, cookie, flags)
    }

    /// [`Self::post_request`] with every check, for the calls its fast path does not take.
    #[inline(never)]
    fn post_request_checked(&self, op: SendOp, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        let flags_arg = if op == SendOp::Send { 5 } else { 6 };
        self.check_flags(flags, flags_arg)?;
        let mut atomic_sge = [Sge::default()];
        let (sges, max_iov) = match op {
            SendOp::Send => (sges, self.iov_limits.request.load(Ordering::Relaxed)),
            SendOp::RdmaWrite { .. } => (sges, self.iov_limits.rdma_write.load(Ordering::Relaxed)),
            SendOp::RdmaRead { .. } => (sges, self.iov_limits.rdma_read.load(Ordering::Relaxed)),
            SendOp::RdmaWriteImmed { .. } if !self.ia.device.attr().extensions.immed_data => {
                return Err(DatError::NOT_IMPLEMENTED)
            }
            SendOp::RdmaWriteImmed { .. } => (sges, self.iov_limits.rdma_write.load(Ordering::Relaxed)),
            SendOp::Atomic { .. } if !self.ia.device.attr().extensions.atomics => {
                return Err(DatError::NOT_IMPLEMENTED)
            }
            SendOp::Atomic { .. } => {
                let [sge] = sges else { return Err(DatError::invalid_arg(3)) };
                if sge.length < ATOMIC_LEN {
                    return Err(DatError::new(DAT_LENGTH_ERROR, 0));
                }
                atomic_sge[0] = Sge { length: ATOMIC_LEN, ..*sge };
                (&atomic_sge[..], 1)
            }
        };
        let state = self.state();
        // A UD endpoint sends only datagrams to an address handle (post_send_ud): its queue
        // pair refuses a connected post; checked here too for the other states (the attribute
        // lock stays off the connected fast path).
        if state != DAT_EP_STATE_CONNECTED && self.attr().is_datagram() {
            return Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0));
        }
        if state == DAT_EP_STATE_DISCONNECTED {
            // Valid, and flushed (dat_ep_post_send(3)), in order behind what is still posted.
            if self.posting_qp().is_ok_and(|qp| qp.flush_behind_posted(cookie, op.opcode())) {
                return Ok(());
            }
            let evd = self.binding.read().request_evd.clone();
            return self.complete_now(evd.as_ref(), cookie, op.opcode(), DAT_DTO_ERR_FLUSHED);
        }
        if state != DAT_EP_STATE_CONNECTED {
            return Err(DatError::invalid_state(state_subtype(state)));
        }
        // A provider may complete the request in this thread, and a CNO's upcall run from
        // there may free or modify this EP: the queue pair stays allocated (`QueuePairs`).
        let qp = self.posting_qp()?;
        if sges.len() > max_iov as usize {
            return Err(DatError::invalid_arg(2));
        }
        self.post_request_on(qp, op, sges, cookie, flags)
    }

    /// Posts a checked request on `qp` and counts it.
    #[inline(always)]
    fn post_request_on(&self, qp: &dyn QueuePair, op: SendOp, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        qp.post_send(&SendWr {
            wr_id: cookie,
            op,
            sges,
            signaled: flags & (DAT_COMPLETION_SUPPRESS_FLAG | DAT_COMPLETION_UNSIGNALLED_FLAG) == 0,
            solicited: flags & DAT_COMPLETION_SOLICITED_WAIT_FLAG != 0,
            fence: flags & DAT_COMPLETION_BARRIER_FENCE_FLAG != 0,
        })?;
        self.counters.count_request(op, sges);
        Ok(())
    }

    /// `dat_ib_post_send_ud`: one datagram of `sges` to `peer` (see [`crate::ud::destination`]),
    /// on a UD endpoint (an RC endpoint gets `DAT_MODEL_NOT_SUPPORTED`); flushed at once on a
    /// disconnected one, as any post. Flags argument 6.
    pub fn post_send_ud(&self, sges: &[Sge], peer: UdPeer, cookie: u64, flags: u32) -> DatResult<()> {
        self.check_flags(flags, 6)?;
        if !self.attr().is_datagram() {
            return Err(DatError::new(DAT_MODEL_NOT_SUPPORTED, 0));
        }
        if self.state() == DAT_EP_STATE_DISCONNECTED {
            let evd = self.binding.read().request_evd.clone();
            return self.complete_now(evd.as_ref(), cookie, WcOpcode::SendUd, DAT_DTO_ERR_FLUSHED);
        }
        if sges.len() > self.iov_limits.request.load(Ordering::Relaxed) as usize {
            return Err(DatError::invalid_arg(2));
        }
        let wr = SendWr {
            wr_id: cookie,
            op: SendOp::Send,
            sges,
            signaled: flags & (DAT_COMPLETION_SUPPRESS_FLAG | DAT_COMPLETION_UNSIGNALLED_FLAG) == 0,
            solicited: flags & DAT_COMPLETION_SOLICITED_WAIT_FLAG != 0,
            fence: false,
        };
        self.posting_qp()?.post_send_ud(&wr, peer)?;
        self.counters.count_post((counters::ep::POST_SEND_UD, true), sges);
        Ok(())
    }

    /// `dat_ep_post_recv`: allowed before the connection is up, not on an SRQ endpoint.
    ///
    /// Inlined into the face's post: a receive on a connected EP without an SRQ or watermarks
    /// whose every check passes goes straight to the queue pair (`recv_fast_limit` holds those
    /// checks); any other call takes [`Self::post_recv_checked`].
    #[inline(always)]
    pub fn post_recv(&self, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        if sges.len() < self.recv_fast_limit.load(Ordering::Acquire) as usize {
            return self.post_recv_fast(sges, cookie, flags);
        }
        self.post_recv_checked(sges, cookie, flags)
    }

    /// [`Self::post_recv`] of segments fewer than `recv_fast_limit` says (compared by the
    /// caller, [`Self::segment_count_is_fast`]).
    #[inline(always)]
    pub fn post_recv_fast(&self, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        if flags & !ALL_COMPLETION_FLAGS == 0 {
            if let Some(qp) = self.qp.get() {
                return self.post_recv_on(qp, sges, cookie);
            }
        }
        self.post_recv_checked(sges, cookie, flags)
    }

    /// Whether a soft or hard watermark is set (then each receive posted checks them).
    #[inline(always)]
    fn watermarks_armed(&self) -> bool {
        self.soft_watermark.load(Ordering::Relaxed) & self.hard_watermark.load(Ordering::Relaxed) != WATERMARK_DISARMED
    }

    /// Posts a checked receive on `qp` and counts it.
    #[inline(always)]
    fn post_recv_on(&self, qp: &dyn QueuePair, sges: &[Sge], cookie: u64) -> DatResult<()> {
        qp.post_recv(cookie, sges)?;
        self.counters.count_post((counters::ep::POST_RECV, true), sges);
        Ok(())
    }

    /// [`Self::post_recv`] with every check, for the calls its fast path does not take.
    #[inline(never)]
    fn post_recv_checked(&self, sges: &[Sge], cookie: u64, flags: u32) -> DatResult<()> {
        if flags & !ALL_COMPLETION_FLAGS != 0 {
            return Err(DatError::invalid_arg(5));
        }
        if self.state() == DAT_EP_STATE_DISCONNECTED {
            // Flushed, in order behind the receives still posted.
            if self.posting_qp().is_ok_and(|qp| qp.flush_behind_posted(cookie, WcOpcode::Recv)) {
                return Ok(());
            }
            let evd = self.binding.read().recv_evd.clone();
            return self.complete_now(evd.as_ref(), cookie, WcOpcode::Recv, DAT_DTO_ERR_FLUSHED);
        }
        if self.srq.is_some() {
            return Err(DatError::invalid_state(0));
        }
        if sges.len() > self.iov_limits.recv.load(Ordering::Relaxed) as usize {
            return Err(DatError::invalid_arg(2));
        }
        self.post_recv_on(self.posting_qp()?, sges, cookie)?;
        if self.watermarks_armed() {
            self.check_watermarks();
        }
        if matches!(
            self.state(),
            DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_RESERVED | DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING
        ) {
            self.early_recvs.lock().push((cookie, sges.to_vec()));
        }
        Ok(())
    }

    /// `dat_ep_recv_query`: (receives allocated to the EP and not completed, their span). On
    /// its own queue a receive is allocated when posted: every posted receive not yet completed
    /// counts. A receive taken from an SRQ completes as it is taken as far as the library can
    /// see (shm takes and completes it in one step; a verbs device reports only the
    /// completion), so an SRQ endpoint reports 0. Messages complete in order on a connection,
    /// so the span equals the count.
    pub fn recv_query(&self) -> (u32, u32) {
        let allocated = if self.srq.is_some() { 0 } else { self.qp.get().map_or(0, |q| q.posted_recvs()) };
        (allocated, allocated)
    }

    /// `dat_ep_set_watermark`: arms the soft high watermark, raised once on the IA's async EVD
    /// when more receives than `soft` are in progress at the EP (at once if so already) and
    /// then disarmed until set again; and sets the hard high watermark: while more receives
    /// than `hard` are in progress at a connected EP (checked now, at each receive posted and
    /// when the connection is established), its connection is broken (an abrupt disconnect,
    /// reported on its connect EVD as `DAT_CONNECTION_EVENT_BROKEN`).
    /// `DAT_WATERMARK_INFINITE` disarms either.
    pub fn set_watermark(&self, soft: i32, hard: i32) -> DatResult<()> {
        if soft < WATERMARK_INFINITE {
            return Err(DatError::invalid_arg(2));
        }
        if hard < WATERMARK_INFINITE {
            return Err(DatError::invalid_arg(3));
        }
        let armed = |w: i32| if w == WATERMARK_INFINITE { WATERMARK_DISARMED } else { w as u32 };
        self.soft_watermark.store(armed(soft), Ordering::Relaxed);
        self.hard_watermark.store(armed(hard), Ordering::Relaxed);
        self.refresh_fast();
        self.check_watermarks();
        Ok(())
    }

    /// Checks both high watermarks against the receives in progress.
    fn check_watermarks(&self) {
        self.check_soft_watermark();
        self.check_hard_watermark();
    }

    /// Breaks a connected EP's connection when more receives than its hard high watermark are
    /// in progress at it (a UD endpoint has none: nothing happens there).
    fn check_hard_watermark(&self) {
        let hard = self.hard_watermark.load(Ordering::Relaxed);
        if hard == WATERMARK_DISARMED || self.state() != DAT_EP_STATE_CONNECTED || self.recv_query().0 <= hard {
            return;
        }
        if self.attr().is_datagram() {
            return; // a UD endpoint has no connection to break
        }
        if !self.transition(DAT_EP_STATE_CONNECTED, DAT_EP_STATE_DISCONNECT_PENDING) {
            return; // another thread is ending the connection
        }
        tracing::debug!(ep = ?self.handle(), hard, "EP above its hard high watermark: connection broken");
        self.broken_by_watermark.store(true, Ordering::Relaxed);
        if let Ok(qp) = self.qp() {
            let _ = qp.disconnect(false);
        }
    }

    /// Raises the soft high watermark event if armed and exceeded, and disarms it.
    fn check_soft_watermark(&self) {
        let soft = self.soft_watermark.load(Ordering::Relaxed);
        if soft == WATERMARK_DISARMED || self.recv_query().0 <= soft {
            return;
        }
        if self.soft_watermark.compare_exchange(soft, WATERMARK_DISARMED, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            self.refresh_fast();
            tracing::debug!(ep = ?self.handle(), soft, "EP above its soft high watermark");
            self.ia.post_async(crate::ia::WATERMARK_EVENT, self.handle(), DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
        }
    }

    /// Completes a DTO at once with `status` (e.g. `DAT_DTO_ERR_FLUSHED` on a disconnected EP).
    fn complete_now(
        &self,
        evd: Option<&Arc<EventDispatcher>>,
        cookie: u64,
        op: WcOpcode,
        status: u32,
    ) -> DatResult<()> {
        let ev = Event {
            number: DAT_DTO_COMPLETION_EVENT,
            evd: Handle::NULL,
            data: EventData::Dto { ep: self.handle(), cookie, status, length: 0, op, immed: 0 },
        };
        match evd {
            Some(e) => e.post_completion(ev),
            None => Ok(()),
        }
    }

    /// `dat_ep_connect`.
    pub fn connect(&self, remote: SocketAddr, port: u64, timeout_us: u32, private_data: &[u8]) -> DatResult<()> {
        if private_data.len() > self.ia.device.attr().max_private_data {
            return Err(DatError::invalid_arg(5));
        }
        if self.binding.read().connect_evd.is_none() {
            return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_EVD_CONNECT));
        }
        let timeout =
            (timeout_us != crate::waiting::TIMEOUT_INFINITE).then(|| Duration::from_micros(timeout_us as u64));
        if self.attr().is_datagram() {
            // Any number of exchanges, each ending in its own event; the state stays.
            let s = self.state();
            if !matches!(s, DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_CONNECTED) {
                return Err(DatError::invalid_state(state_subtype(s)));
            }
            self.qp()?.connect(remote, port, private_data, timeout)?;
            self.counters.count(counters::ep::CONNECT);
            return Ok(());
        }
        if !self.transition(DAT_EP_STATE_UNCONNECTED, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING) {
            return Err(DatError::invalid_state(state_subtype(self.state())));
        }
        self.early_recvs.lock().clear();
        self.set_remote(remote, port);
        let r = self.qp().and_then(|qp| qp.connect(remote, port, private_data, timeout));
        match r {
            Ok(()) => self.counters.count(counters::ep::CONNECT),
            Err(_) => self.set_state(DAT_EP_STATE_UNCONNECTED),
        }
        r
    }

    /// Accepts a connection request on this EP (`dat_cr_accept`).
    pub fn accept(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()> {
        if private_data.len() > self.ia.device.attr().max_private_data {
            return Err(DatError::invalid_arg(3));
        }
        let s = self.state();
        if self.attr().is_datagram() {
            // As connect: any number of times, the state stays.
            if !matches!(s, DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_CONNECTED) {
                return Err(DatError::invalid_state(state_subtype(s)));
            }
            return self.qp()?.accept(req, private_data);
        }
        let ok_state =
            matches!(s, DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_RESERVED | DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
        if !ok_state || !self.transition(s, DAT_EP_STATE_PASSIVE_CONNECTION_PENDING) {
            return Err(DatError::invalid_state(state_subtype(s)));
        }
        self.early_recvs.lock().clear();
        self.set_remote(req.remote_address(), req.port());
        let r = self.qp().and_then(|qp| qp.accept(req, private_data));
        if r.is_err() {
            self.set_state(s);
        }
        r
    }

    /// `dat_ep_disconnect`. A UD endpoint holds no connection: it becomes disconnected at once,
    /// without an event (its address handles stay until freed).
    pub fn disconnect(&self, abrupt: bool) -> DatResult<()> {
        let s = self.state();
        if self.attr().is_datagram() {
            return match s {
                DAT_EP_STATE_UNCONNECTED | DAT_EP_STATE_CONNECTED | DAT_EP_STATE_DISCONNECTED => {
                    self.set_state(DAT_EP_STATE_DISCONNECTED);
                    Ok(())
                }
                _ => Err(DatError::invalid_state(state_subtype(s))),
            };
        }
        match s {
            DAT_EP_STATE_CONNECTED
            | DAT_EP_STATE_ACTIVE_CONNECTION_PENDING
            | DAT_EP_STATE_PASSIVE_CONNECTION_PENDING => {
                self.set_state(DAT_EP_STATE_DISCONNECT_PENDING);
                self.counters.count(counters::ep::DISCONNECT);
                self.qp()?.disconnect(!abrupt)
            }
            DAT_EP_STATE_DISCONNECT_PENDING | DAT_EP_STATE_DISCONNECTED => Ok(()),
            _ => Err(DatError::invalid_state(state_subtype(s))),
        }
    }

    /// `dat_ep_reset`: a disconnected EP becomes unconnected with a fresh queue pair.
    pub fn reset(self: &Arc<Self>) -> DatResult<()> {
        let s = self.state();
        if s != DAT_EP_STATE_DISCONNECTED && s != DAT_EP_STATE_UNCONNECTED {
            return Err(DatError::invalid_state(state_subtype(s)));
        }
        self.new_qp()?;
        // a watermark break whose disconnect never came (the peer's came first) is over
        self.broken_by_watermark.store(false, Ordering::Relaxed);
        self.set_state(DAT_EP_STATE_UNCONNECTED);
        Ok(())
    }

    /// `dat_ep_get_status` idle flags: (receive queue empty, send queue empty).
    pub fn idle(&self) -> (bool, bool) {
        let qp = self.qp.get();
        let recv_idle = qp.as_ref().is_none_or(|q| q.posted_recvs() == 0);
        let request_idle = qp.as_ref().is_none_or(|q| q.posted_sends() == 0);
        (recv_idle, request_idle)
    }

    pub fn remember_bind(&self, rmr: Handle, cookie: u64) -> u64 {
        let id = self.next_bind.fetch_add(1, Ordering::Relaxed);
        self.binds.lock().insert(id, (rmr, cookie));
        id
    }

    pub fn take_bind(&self, wr_id: u64) -> Option<(Handle, u64)> {
        self.binds.lock().remove(&wr_id)
    }

    /// Queues connection event `ev` and moves the state; returns the state before.
    fn connection_event(&self, ev: ConnEvent, private_data: &[u8]) -> u32 {
        let number = match ev {
            ConnEvent::Established => DAT_CONNECTION_EVENT_ESTABLISHED,
            ConnEvent::PeerRejected => DAT_CONNECTION_EVENT_PEER_REJECTED,
            ConnEvent::NonPeerRejected => DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
            ConnEvent::Unreachable => DAT_CONNECTION_EVENT_UNREACHABLE,
            ConnEvent::TimedOut => DAT_CONNECTION_EVENT_TIMED_OUT,
            ConnEvent::Disconnected => DAT_CONNECTION_EVENT_DISCONNECTED,
            ConnEvent::Broken => DAT_CONNECTION_EVENT_BROKEN,
        };
        let new_state = if ev == ConnEvent::Established { DAT_EP_STATE_CONNECTED } else { DAT_EP_STATE_DISCONNECTED };
        let (ptr, len) = {
            let mut c = self.conn.lock();
            let n = private_data.len().min(MAX_PRIVATE_DATA);
            c.private_data[..n].copy_from_slice(&private_data[..n]);
            c.private_data[n..].fill(0);
            c.private_data_len = n;
            (c.private_data.as_ptr(), n)
        };
        let old = self.state.swap(new_state, Ordering::AcqRel);
        self.refresh_fast();
        tracing::debug!(ep = ?self.handle(), ?ev, old, new_state, "connection event");
        if let Some(evd) = self.binding.read().connect_evd.clone() {
            let data = EventData::Connection {
                ep: self.handle(),
                private_data_size: len as i32,
                // Never NULL, even with no private data (OFED passes NULL there): consumers
                // that read the private data of an event they took for ESTABLISHED (Debian's
                // dtestcm on a BROKEN event) read zeros instead of crashing. The buffer is the
                // EP's and lives as long as the EP.
                private_data: ptr,
            };
            let _ = evd.post(Event { number, evd: Handle::NULL, data });
        }
        old
    }
}

impl Endpoint {
    /// The outcome of a UD endpoint's connect or accept exchange: when established, a new
    /// address handle for the peer and a `DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED` (the EP counts
    /// as connected from the first one on); otherwise a UD reject or error event.
    fn ud_connection_event(&self, x: &UdExchange<'_>) {
        use crate::ib_ext::*;
        let Some(evd) = self.binding.read().connect_evd.clone() else { return };
        let (number, data) = match x.ev {
            ConnEvent::Established => {
                let (ah, a) = match AddressHandle::insert(self, x.peer, x.remote, x.private_data) {
                    Ok(made) => made,
                    Err(e) => {
                        tracing::warn!(?e, "no handle for a UD address handle; the peer is not reported");
                        return;
                    }
                };
                match self.address_handles.lock().as_mut() {
                    Some(live) => live.push(ah),
                    None => {
                        handle::remove::<AddressHandle>(ah);
                        return;
                    }
                }
                let _ = self.transition(DAT_EP_STATE_UNCONNECTED, DAT_EP_STATE_CONNECTED);
                let (ptr, len) = a.private_data();
                let data = EventData::UdConnection {
                    ep: self.handle(),
                    private_data_size: len as i32,
                    private_data: ptr,
                    ext_type: if x.passive { DAT_IB_UD_PASSIVE_REMOTE_AH } else { DAT_IB_UD_REMOTE_AH },
                    ah,
                    qpn: x.peer.qpn,
                    remote: Some(x.remote),
                };
                (DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED, data)
            }
            ev => {
                let rejected = ev == ConnEvent::PeerRejected;
                // Never NULL, as for a reliable connection's events (connection_event): OFED's
                // providers hand rdma_cm's private-data buffer here, and Intel MPI 2018 asserts
                // that a UD reject event has one ("private_data != NULL").
                let (ptr, len) = {
                    let mut c = self.conn.lock();
                    let n = x.private_data.len().min(MAX_PRIVATE_DATA);
                    c.private_data[..n].copy_from_slice(&x.private_data[..n]);
                    c.private_data[n..].fill(0);
                    c.private_data_len = n;
                    (c.private_data.as_ptr(), n)
                };
                let data = EventData::UdConnection {
                    ep: self.handle(),
                    private_data_size: len as i32,
                    private_data: ptr,
                    ext_type: if rejected { DAT_IB_UD_CONNECT_REJECT } else { DAT_IB_UD_CONNECT_ERROR },
                    ah: Handle::NULL,
                    qpn: 0,
                    remote: Some(x.remote),
                };
                let number =
                    if rejected { DAT_IB_UD_CONNECTION_REJECT_EVENT } else { DAT_IB_UD_CONNECTION_ERROR_EVENT };
                (number, data)
            }
        };
        tracing::debug!(ep = ?self.handle(), ?x, "UD connection event");
        let _ = evd.post(Event { number, evd: Handle::NULL, data });
    }

    /// Stops counting `ah` among this EP's address handles (it is being freed).
    pub(crate) fn forget_ah(&self, ah: Handle) {
        if let Some(live) = self.address_handles.lock().as_mut() {
            live.retain(|h| *h != ah);
        }
    }
}

/// `dat_ep_free`: disconnects abruptly if needed, then releases everything the EP names.
/// A provider-created EP belongs to its connection request until accepted:
/// `DAT_INVALID_STATE` while tentative (dat_ep_free(3)); rejecting the request frees it.
pub fn free(h: Handle) -> DatResult<()> {
    let ep = handle::get::<Endpoint>(h, DAT_INVALID_HANDLE_EP)?;
    if ep.state() == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING {
        return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_TENTCONNPENDING));
    }
    release(h)
}

/// Frees a provider-created EP whose connection request was rejected or dropped.
pub(crate) fn free_tentative(h: Handle) -> DatResult<()> {
    release(h)
}

fn release(h: Handle) -> DatResult<()> {
    let ep = handle::remove::<Endpoint>(h).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_EP))?;
    let s = ep.state();
    if matches!(
        s,
        DAT_EP_STATE_CONNECTED
            | DAT_EP_STATE_ACTIVE_CONNECTION_PENDING
            | DAT_EP_STATE_PASSIVE_CONNECTION_PENDING
            | DAT_EP_STATE_DISCONNECT_PENDING
    ) {
        if let Ok(qp) = ep.qp() {
            let _ = qp.disconnect(false);
        }
    }
    ep.install_qp(None);
    for ah in ep.address_handles.lock().take().into_iter().flatten() {
        handle::remove::<AddressHandle>(ah);
    }
    ep.binding.read().count_use(false);
    if let Some(s) = &ep.srq {
        s.eps.fetch_sub(1, Ordering::SeqCst);
    }
    ep.ia.disown(h);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evd::EventDispatcher;
    use crate::ia::InterfaceAdapter;

    /// An EP on a new shm IA: (the IA's handle, the EP's handle, the EP).
    fn shm_ep(test: &str) -> (Handle, Handle, Arc<Endpoint>) {
        let dir = std::env::temp_dir().join(format!("dat-ep-test-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
        let shm = crate::registry::builtin_by_name("shm").expect("shm provider");
        let (ia_h, ia, _) = InterfaceAdapter::open(&shm, "shm", "", 8, Handle::NULL).expect("open shm IA");
        let pz = ProtectionZone::create(&ia).expect("pz");
        let evd = |flags| EventDispatcher::create(&ia, 16, None, flags).expect("evd").0;
        let create = EpCreate {
            pz,
            recv_evd: evd(DAT_EVD_DTO_FLAG),
            request_evd: evd(DAT_EVD_DTO_FLAG),
            connect_evd: evd(DAT_EVD_CONNECTION_FLAG),
            srq: Handle::NULL,
            attr: None,
        };
        let (h, ep) = Endpoint::create(&ia, &create).expect("ep");
        (ia_h, h, ep)
    }

    /// `recv_fast_limit` follows the state and the watermarks, each change's call returning
    /// with the word recomputed, also while other threads change the other inputs: once they
    /// stop, the word is the one their last values give.
    #[test]
    fn the_receive_fast_word_follows_state_and_watermarks() {
        let (ia_h, h, ep) = shm_ep("recvfast");
        let fast = ep.iov_limits.recv.load(Ordering::Relaxed) + 1;
        let word = |ep: &Endpoint| ep.recv_fast_limit.load(Ordering::Acquire);
        assert_eq!(word(&ep), 0, "unconnected");
        ep.set_state(DAT_EP_STATE_CONNECTED);
        assert_eq!(word(&ep), fast, "connected, nothing armed");
        ep.set_watermark(4, WATERMARK_INFINITE).unwrap();
        assert_eq!(word(&ep), 0, "soft watermark armed");
        ep.set_watermark(WATERMARK_INFINITE, WATERMARK_INFINITE).unwrap();
        assert_eq!(word(&ep), fast, "disarmed");
        assert!(ep.transition(DAT_EP_STATE_CONNECTED, DAT_EP_STATE_DISCONNECT_PENDING));
        assert_eq!(word(&ep), 0, "disconnecting");
        for round in 0..20 {
            let states = {
                let ep = ep.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        ep.set_state(if i % 2 == 0 { DAT_EP_STATE_UNCONNECTED } else { DAT_EP_STATE_CONNECTED });
                    }
                })
            };
            let watermarks = {
                let ep = ep.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let soft = if i % 2 == 0 { 1000 } else { WATERMARK_INFINITE };
                        ep.set_watermark(soft, WATERMARK_INFINITE).unwrap();
                    }
                })
            };
            states.join().unwrap();
            watermarks.join().unwrap();
            assert_eq!(word(&ep), fast, "round {round}: connected and disarmed at the end");
        }
        ep.set_state(DAT_EP_STATE_UNCONNECTED);
        drop(ep);
        free(h).expect("free EP");
        crate::ia::close(ia_h, true).expect("close IA");
    }

    /// `send_fast_limit` and `rdma_fast_limits` follow the state and the request, RDMA write
    /// and RDMA read IOV limits (an RDMA limit is never below the request one), each change's
    /// call returning with the words recomputed, also while another thread changes the other
    /// input: once both stop, the words are the ones their last values give.
    #[test]
    fn the_send_and_rdma_fast_words_follow_state_and_attributes() {
        let (ia_h, h, ep) = shm_ep("sendfast");
        let word = |ep: &Endpoint| {
            let [write, read] = &ep.rdma_fast_limits;
            [&ep.send_fast_limit, write, read].map(|w| w.load(Ordering::Acquire))
        };
        let with_iov = |request: i32, write: i32, read: i32| EpAttr {
            max_request_iov: request,
            max_rdma_write_iov: write,
            max_rdma_read_iov: read,
            ..ep.attr()
        };
        let (a, b) = (with_iov(2, 4, 1), with_iov(3, 1, 6));
        ep.set_attr(a);
        assert_eq!(word(&ep), [0; 3], "unconnected");
        ep.set_state(DAT_EP_STATE_CONNECTED);
        assert_eq!(word(&ep), [3, 5, 3], "connected, a's segments");
        ep.set_attr(b);
        assert_eq!(word(&ep), [4, 4, 7], "connected, b's segments");
        ep.set_watermark(4, WATERMARK_INFINITE).unwrap();
        assert_eq!(word(&ep), [4, 4, 7], "a receive watermark leaves sends and RDMA fast");
        ep.set_watermark(WATERMARK_INFINITE, WATERMARK_INFINITE).unwrap();
        assert!(ep.transition(DAT_EP_STATE_CONNECTED, DAT_EP_STATE_DISCONNECT_PENDING));
        assert_eq!(word(&ep), [0; 3], "disconnecting");
        ep.set_state(DAT_EP_STATE_DISCONNECTED);
        assert_eq!(word(&ep), [0; 3], "disconnected");
        for round in 0..20 {
            let states = {
                let ep = ep.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        ep.set_state(if i % 2 == 0 { DAT_EP_STATE_UNCONNECTED } else { DAT_EP_STATE_CONNECTED });
                    }
                })
            };
            let attrs = {
                let ep = ep.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        ep.set_attr(if i % 2 == 0 { b } else { a });
                    }
                })
            };
            states.join().unwrap();
            attrs.join().unwrap();
            assert_eq!(word(&ep), [3, 5, 3], "round {round}: connected with a's segments at the end");
        }
        ep.set_state(DAT_EP_STATE_UNCONNECTED);
        drop(ep);
        free(h).expect("free EP");
        crate::ia::close(ia_h, true).expect("close IA");
    }

    /// The send's flag table gives what the checked path's request carries for every
    /// combination of completion flags.
    #[test]
    fn send_flags_by_table_are_the_requests() {
        for f in 0..64u32 {
            let flags = send_flags(f);
            let signaled = f & (DAT_COMPLETION_SUPPRESS_FLAG | DAT_COMPLETION_UNSIGNALLED_FLAG) == 0;
            assert_eq!(flags.signaled(), signaled, "{f:#x}");
            assert_eq!(flags.solicited(), f & DAT_COMPLETION_SOLICITED_WAIT_FLAG != 0, "{f:#x}");
            assert_eq!(flags.fence(), f & DAT_COMPLETION_BARRIER_FENCE_FLAG != 0, "{f:#x}");
            assert_eq!(flags.0 & !(SendFlags::SIGNALED | SendFlags::SOLICITED | SendFlags::FENCE), 0);
        }
    }

    /// `dat_ep_reset` frees the queue pairs it replaced when no other call holds the EP's
    /// handle, and keeps them while one does (a post in flight may be using the old one).
    #[test]
    fn reset_frees_replaced_queue_pairs_unless_the_ep_is_in_use() {
        let (ia_h, h, ep) = shm_ep("reset");
        let lookup = || handle::get::<Endpoint>(h, 0).expect("live EP");
        for _ in 0..5 {
            lookup().arc().reset().expect("reset"); // as the face calls it: one use held
        }
        assert_eq!(ep.qp.allocated(), 1, "queue pairs kept after resets with the EP otherwise idle");
        let in_flight = lookup(); // another thread's post, say
        for _ in 0..3 {
            lookup().arc().reset().expect("reset");
        }
        assert_eq!(ep.qp.allocated(), 4, "a queue pair a call in flight may use was freed");
        drop(in_flight);
        lookup().arc().reset().expect("reset");
        assert_eq!(ep.qp.allocated(), 1, "the kept queue pairs were not freed once the EP was idle");
        drop(ep);
        free(h).expect("free EP");
        crate::ia::close(ia_h, true).expect("close IA");
    }
}
