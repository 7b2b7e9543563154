//! The provider interface: what the DAT core asks of a transport.
//!
//! It is shaped like rdma-core's verbs and rdma_cm so that the `verbs` provider is a thin mapping:
//!
//! | here                      | verbs / rdma_cm                        | DAT object it backs |
//! |---------------------------|----------------------------------------|---------------------|
//! | [`Device`]                | `ibv_context` + a bound `rdma_cm_id`   | IA                  |
//! | [`ProtectionDomain`]      | `ibv_pd`                               | PZ                  |
//! | [`MemoryRegion`]          | `ibv_mr` (lkey, rkey)                  | LMR                 |
//! | [`MemoryWindow`]          | `ibv_mw`                               | RMR                 |
//! | [`CompletionQueue`]       | `ibv_cq` + `ibv_comp_channel`          | DTO side of an EVD  |
//! | [`QueuePair`]             | RC `ibv_qp` on an `rdma_cm_id`         | EP                  |
//! | [`Listener`]              | listening `rdma_cm_id`                 | PSP / RSP           |
//! | [`ConnectionRequest`]     | `RDMA_CM_EVENT_CONNECT_REQUEST` id     | CR                  |
//! | [`SharedReceiveQueue`]    | `ibv_srq`                              | SRQ                 |
//!
//! Events flow back to the core through sinks the core hands in: completions are polled from the
//! [`CompletionQueue`] (the provider calls [`Waker::wake`] when new ones arrive), connection
//! events go to the [`ConnectionEvents`] of a queue pair, connect requests to the
//! [`ListenerEvents`] of a listener, and device errors to the [`AsyncEvents`] of the device.
//!
//! Errors are DAT error codes ([`DatError`]); a provider returns the code the DAT man pages name
//! and logs the underlying cause in one line through `tracing`.
//!
//! Rules for every provider:
//! - `post_send`, `post_recv`, `poll` allocate nothing and take no lock shared between queue
//!   pairs or processes (a per-queue lock is fine).
//! - Dropping an object releases it (deregisters, destroys, stops listening). The core drops
//!   children before parents.
//! - Callbacks into sinks may come from any thread, including a provider's own progress thread,
//!   but never while the provider holds a lock that a core call into the provider could need.

use crate::error::DatResult;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub use group_sleep::WakeSource;

mod atomics;
mod epoll;
pub mod eventfd;
pub mod futex;
pub mod group_sleep;
mod lookup;
pub mod mapped;
pub mod ofi;
pub mod serve;
pub mod shm;
mod spin;
pub mod verbs;

/// A transport family. A provider is registered once per process.
pub trait Provider: Send + Sync + 'static {
    /// Short name: `shm`, `verbs`.
    fn name(&self) -> &'static str;
    /// IA names this provider answers to without any dat.conf, e.g. `["shm", "shm0"]`.
    fn ia_names(&self) -> Vec<String>;
    /// Opens the device behind `ia_name`. `params` is the dat.conf `ia_params` field when the IA
    /// came from dat.conf (e.g. `"ib0 0"`), or empty.
    fn open(&self, ia_name: &str, params: &str, events: Arc<dyn AsyncEvents>) -> DatResult<Arc<dyn Device>>;
}

/// Transport kind, reported in IA attributes and used where DAT semantics differ (iWARP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    SharedMemory,
    InfiniBand,
    RoCE,
    IWarp,
    /// A libfabric provider (the `ofi` provider).
    Fabric,
}

/// Device limits (`ibv_device_attr` and friends), used to fill DAT_IA_ATTR and to validate.
#[derive(Clone, Debug)]
pub struct DeviceAttr {
    pub adapter_name: String,
    pub vendor_name: String,
    pub hardware_version_major: u32,
    pub hardware_version_minor: u32,
    pub firmware_version_major: u32,
    pub firmware_version_minor: u32,
    pub transport: Transport,
    pub max_qp: u32,
    pub max_qp_wr: u32,
    pub max_sge: u32,
    pub max_cq: u32,
    pub max_cqe: u32,
    pub max_mr: u32,
    pub max_mr_size: u64,
    pub max_pd: u32,
    pub max_mw: u32,
    pub max_srq: u32,
    pub max_srq_wr: u32,
    pub max_rdma_read_in: u32,
    pub max_rdma_read_out: u32,
    pub max_message_size: u64,
    pub max_rdma_size: u64,
    /// Largest private data a connect / accept / reject may carry.
    pub max_private_data: usize,
    /// Which IB extension operations work on this device.
    pub extensions: ExtensionCaps,
    /// The transport's MTU in bytes (verbs: the port's active MTU), which DAT 2.0 consumers read
    /// as the provider attribute `DAT_IB_TRANSPORT_MTU` to size their messages.
    pub transport_mtu: u32,
}

/// The IB extension operations (`dat_ib_extensions.h`) a device carries out for real.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtensionCaps {
    /// [`SendOp::RdmaWriteImmed`] and its receive-side completion.
    pub immed_data: bool,
    /// [`SendOp::Atomic`]: fetch-and-add and compare-and-swap on 8 remote bytes.
    pub atomics: bool,
    /// Unreliable datagram queue pairs ([`QpInit::datagram`], [`QueuePair::post_send_ud`]).
    pub ud: bool,
}

impl ExtensionCaps {
    /// Whether any extension operation works.
    pub fn any(self) -> bool {
        self.immed_data || self.atomics || self.ud
    }
}

/// Memory access rights (`IBV_ACCESS_*`), from DAT_MEM_PRIV_FLAGS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Access {
    pub local_read: bool,
    pub local_write: bool,
    pub remote_read: bool,
    pub remote_write: bool,
    /// Remote atomic operations (`IBV_ACCESS_REMOTE_ATOMIC`, DAT_IB_MEM_PRIV_REMOTE_ATOMIC).
    pub remote_atomic: bool,
}

impl Access {
    /// Whether the registered memory may be written (locally or remotely).
    pub fn needs_write(&self) -> bool {
        self.local_write || self.remote_write || self.remote_atomic
    }
}

/// An opened device: the provider side of an IA.
pub trait Device: Send + Sync {
    fn attr(&self) -> &DeviceAttr;
    /// The IA address consumers connect to (DAT_IA_ATTR.ia_address_ptr).
    fn address(&self) -> SocketAddr;
    fn alloc_pd(&self) -> DatResult<Arc<dyn ProtectionDomain>>;
    /// A completion queue of at least `min_entries`. The provider calls `waker.wake()` when
    /// entries are added (it may skip calls while [`Waker::wants_wake`] is false); a provider
    /// whose [`CompletionQueue::arm`] returns true needs to do so only while
    /// [`CompletionQueue::set_notify`] is on or `arm` returns false.
    fn create_cq(&self, min_entries: u32, waker: Arc<dyn Waker>) -> DatResult<Arc<dyn CompletionQueue>>;
    /// Listens on connection qualifier `port` (rdma_listen). `DAT_CONN_QUAL_IN_USE` when taken.
    fn listen(&self, port: u64, events: Arc<dyn ListenerEvents>) -> DatResult<Arc<dyn Listener>>;
    /// An RC queue pair with its connection-manager id (rdma_create_ep).
    fn create_qp(&self, init: QpInit) -> DatResult<Arc<dyn QueuePair>>;
}

/// Everything needed to create a queue pair.
pub struct QpInit {
    pub pd: Arc<dyn ProtectionDomain>,
    /// CQ for send, RDMA and bind completions (None: the EP has no request EVD).
    pub send_cq: Option<Arc<dyn CompletionQueue>>,
    /// CQ for receive completions (None: the EP has no receive EVD).
    pub recv_cq: Option<Arc<dyn CompletionQueue>>,
    pub srq: Option<Arc<dyn SharedReceiveQueue>>,
    pub caps: QpCaps,
    /// Opaque to the provider; returned in every [`WorkCompletion::context`] of this QP.
    pub context: u64,
    pub events: Arc<dyn ConnectionEvents>,
    /// An unreliable datagram queue pair (only where [`ExtensionCaps::ud`]): connects and
    /// accepts any number of times, each reporting the peer's [`UdPeer`] through
    /// [`ConnectionEvents::ud_event`]; sends go to a [`UdPeer`] with
    /// [`QueuePair::post_send_ud`]; a receive gets [`UD_HEADER_LEN`] bytes of header and then
    /// the message.
    pub datagram: bool,
}

/// Bytes at the head of every unreliable-datagram receive buffer before the message: the
/// InfiniBand global route header slot, which verbs leaves there and OFED's consumers skip
/// (dtestx reads its message 40 bytes into the buffer and expects the length to include them).
pub const UD_HEADER_LEN: u64 = 40;

/// Where an unreliable datagram goes, as the connect exchange reported the peer: `node` names
/// the peer's host side in the provider's terms (shm: the peer's process id), `qpn` its queue
/// pair, `qkey` the queue key both sides use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdPeer {
    pub node: u64,
    pub qpn: u32,
    pub qkey: u32,
}

/// Queue sizes (`ibv_qp_cap`).
#[derive(Clone, Copy, Debug, Default)]
pub struct QpCaps {
    pub max_send_wr: u32,
    pub max_recv_wr: u32,
    pub max_send_sge: u32,
    pub max_recv_sge: u32,
    pub max_rdma_read_in: u32,
    pub max_rdma_read_out: u32,
}

pub trait ProtectionDomain: Send + Sync {
    /// Registers `[addr, addr+len)` (ibv_reg_mr). Memory stays owned by the consumer.
    fn reg_mr(&self, addr: u64, len: u64, access: Access) -> DatResult<Arc<dyn MemoryRegion>>;
    /// A memory window (ibv_alloc_mw); `DAT_NOT_IMPLEMENTED`-class error if unsupported.
    fn alloc_mw(&self) -> DatResult<Arc<dyn MemoryWindow>>;
    fn create_srq(&self, max_wr: u32, max_sge: u32) -> DatResult<Arc<dyn SharedReceiveQueue>>;
}

pub trait MemoryRegion: Send + Sync {
    fn lkey(&self) -> u32;
    fn rkey(&self) -> u32;
    fn addr(&self) -> u64;
    fn length(&self) -> u64;
}

pub trait MemoryWindow: Send + Sync {
    /// The rkey of the current binding (0 when unbound).
    fn rkey(&self) -> u32;
}

/// Wakes whoever waits on an EVD. Implemented by the core.
pub trait Waker: Send + Sync {
    fn wake(&self);
    /// False when nobody waits, so the provider may skip `wake` on its hot path.
    fn wants_wake(&self) -> bool {
        true
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcStatus {
    Success,
    /// Flushed by a disconnect or an error on the queue pair.
    Flushed,
    LocalLength,
    LocalProtection,
    LocalOperation,
    RemoteAccess,
    RemoteOperation,
    BadResponse,
    TransportRetry,
    ReceiverNotReady,
    /// The memory window bind failed.
    BindFailure,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcOpcode {
    Send,
    Recv,
    RdmaWrite,
    RdmaRead,
    Bind,
    /// [`SendOp::RdmaWriteImmed`] at the initiator.
    RdmaWriteImmed,
    /// [`SendOp::Atomic`] at the initiator (the old value is in the local buffer).
    FetchAdd,
    CmpSwap,
    /// A receive consumed by the peer's RDMA write with immediate data
    /// ([`WorkCompletion::immed`]); `byte_len` is the length written.
    RecvRdmaWriteImmed,
    /// A receive filled by a send with immediate data ([`WorkCompletion::immed`]). Only a
    /// foreign peer sends these (DAT has no post for it).
    RecvImmed,
    /// [`QueuePair::post_send_ud`] at the sender.
    SendUd,
    /// A receive of an unreliable datagram queue pair; [`WorkCompletion::immed`] holds the
    /// sender's queue pair number, `byte_len` counts the [`UD_HEADER_LEN`] header too.
    RecvUd,
}

/// One completion (`ibv_wc`).
#[derive(Clone, Copy, Debug)]
pub struct WorkCompletion {
    pub wr_id: u64,
    /// The [`QpInit::context`] of the queue pair the work was posted on.
    pub context: u64,
    pub status: WcStatus,
    pub opcode: WcOpcode,
    /// The immediate data of [`WcOpcode::RecvRdmaWriteImmed`] and [`WcOpcode::RecvImmed`],
    /// as the sender posted it (no byte-order change, as OFED's provider); for
    /// [`WcOpcode::RecvUd`] the sender's queue pair number.
    pub immed: u32,
    pub byte_len: u64,
}

impl WorkCompletion {
    pub const EMPTY: WorkCompletion = WorkCompletion {
        wr_id: 0,
        context: 0,
        status: WcStatus::Success,
        opcode: WcOpcode::Send,
        immed: 0,
        byte_len: 0,
    };
}

/// A completion queue. The consumer's own thread drives it: `poll` is called from
/// `dat_evd_dequeue` and `dat_evd_wait`, and a provider does whatever work makes completions
/// appear (ibv_poll_cq, matching inbound messages to posted receives) right there, in the
/// caller's thread.
///
/// # Sleeping without a lost wake-up
/// A waiter that found nothing, even after spinning, sleeps in its own thread with this
/// protocol (see `EventDispatcher::wait`):
///
/// 1. [`arm`](CompletionQueue::arm): from now on, a completion added to this queue, or a call
///    to [`interrupt`](CompletionQueue::interrupt), makes the next `block` return promptly.
/// 2. `poll` once more: what raced in between the last poll and `arm` is taken here.
/// 3. [`block`](CompletionQueue::block) until such an event or the deadline; or, where step 2
///    found enough, [`disarm`](CompletionQueue::disarm) instead.
///
/// Invariant: an event that happens after step 1 is either seen by step 2 or ends step 3.
/// A provider keeps it with a level-triggered notification (an armed `ibv_req_notify_cq` with
/// its channel fd, an eventfd or a futex sequence word read before arming) and never with an
/// edge that can fire before the sleeper is there. A spurious return from `block` is allowed.
///
/// `arm` returns false when the provider has no sleeping mechanism of its own; the core then
/// sleeps on its condition variable and the provider reports arrivals through the [`Waker`].
///
/// A thread sleeping on several queues at once (a CNO's waiter) keeps the same invariant with
/// [`arm_group`](CompletionQueue::arm_group) for step 1 and [`group_sleep`]'s block for step
/// 3. It is a second sleeper, independent of `arm`'s: each may come and go while the other
/// sleeps, and neither takes the other's wake-up.
pub trait CompletionQueue: Send + Sync {
    /// Moves up to `out.len()` completions into `out`, oldest first; returns how many.
    fn poll(&self, out: &mut [WorkCompletion]) -> usize;
    /// Grows or shrinks the queue (ibv_resize_cq).
    fn resize(&self, min_entries: u32) -> DatResult<()>;
    /// Step 1 of the sleeping protocol. At most one thread sleeps on a queue at a time.
    fn arm(&self) -> bool {
        false
    }
    /// Step 3: sleeps until a completion arrives after `arm`, `interrupt` is called, or
    /// `timeout` (None: no limit) passes. A relative timeout, so that the caller need not read
    /// the clock to sleep (an emulated guest's clock is a system call). True only when it
    /// returned because `timeout` passed (a wait for one event then ends without reading the
    /// clock); false when woken, interrupted or signalled.
    fn block(&self, timeout: Option<std::time::Duration>) -> bool {
        let _ = timeout;
        false
    }
    /// Step 3 not taken: the re-poll after `arm` found what the waiter wanted, and it will not
    /// `block`. The queue forgets the sleeper (a provider that treats an armed queue as slept
    /// on must not go on doing so).
    fn disarm(&self) {}
    /// Ends a current `block`, or makes the next one after an `arm` return at once. Called
    /// when a software event is queued on the EVD or the EVD becomes unwaitable. Cheap (no
    /// system call) when nobody sleeps.
    fn interrupt(&self) {}
    /// Step 1 for a thread sleeping on this queue among others: from now on, a completion
    /// added to this queue, or an [`interrupt`](CompletionQueue::interrupt), ends that
    /// thread's sleep on the returned [`WakeSource`] promptly. None: the queue cannot wake such
    /// a sleeper (its arrivals then reach the core through the [`Waker`] only). The core calls
    /// it with the EVD's lock held, at most once before each
    /// [`disarm_group`](CompletionQueue::disarm_group).
    fn arm_group(&self) -> Option<WakeSource> {
        None
    }
    /// The group sleeper armed by [`arm_group`](CompletionQueue::arm_group) woke (or never
    /// slept): it stops asking for wake-ups, and takes what woke it unless `queue_waiter` (a
    /// thread is in a wait on this queue's EVD, and may sleep on the same wake-up). Called with
    /// the EVD's lock held.
    fn disarm_group(&self, queue_waiter: bool) {
        let _ = queue_waiter;
    }
    /// On while the EVD has a CNO attached: every arrival must then reach the [`Waker`] even
    /// when no thread polls or waits (the CNO triggers when nobody waits on the EVD). Called
    /// with the EVD's lock held, so the provider must not call the waker from here.
    fn set_notify(&self, on: bool) {
        let _ = on;
    }
}

/// A scatter/gather element. Same layout as verbs' `struct ibv_sge` and DAT 2.0's
/// `DAT_LMR_TRIPLET` (virtual_address, 32-bit segment_length, lmr_context): the 2.0 face passes
/// a consumer's IOV through as it is, and the verbs provider hands it on to the device. The 1.2
/// face converts (its triplet holds a 64-bit length).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    pub addr: u64,
    pub length: u32,
    pub lkey: u32,
}

/// A send-queue operation. `repr(u8)`: its tag is a plain byte the verbs post switches on
/// directly (without it, the tag hides in [`AtomicOp`]'s, and decoding it costs a subtract
/// and a conditional move per post).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SendOp {
    Send,
    RdmaWrite {
        remote_addr: u64,
        rkey: u32,
    },
    RdmaRead {
        remote_addr: u64,
        rkey: u32,
    },
    /// An RDMA write that also consumes a receive at the peer, which completes with `immed`
    /// ([`WcOpcode::RecvRdmaWriteImmed`]). Only where [`ExtensionCaps::immed_data`].
    RdmaWriteImmed {
        remote_addr: u64,
        rkey: u32,
        immed: u32,
    },
    /// A 64-bit atomic on the 8-byte aligned word at `remote_addr`; the word's old value lands
    /// in the local buffer (one SGE of 8 bytes). Only where [`ExtensionCaps::atomics`].
    Atomic {
        remote_addr: u64,
        rkey: u32,
        op: AtomicOp,
    },
}

/// What a [`SendOp::Atomic`] does to the remote word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    FetchAdd {
        add: u64,
    },
    /// Stores `swap` if the word equals `compare`.
    CmpSwap {
        compare: u64,
        swap: u64,
    },
}

impl SendOp {
    /// The completion opcode of this operation.
    pub fn opcode(self) -> WcOpcode {
        match self {
            SendOp::Send => WcOpcode::Send,
            SendOp::RdmaWrite { .. } => WcOpcode::RdmaWrite,
            SendOp::RdmaRead { .. } => WcOpcode::RdmaRead,
            SendOp::RdmaWriteImmed { .. } => WcOpcode::RdmaWriteImmed,
            SendOp::Atomic { op: AtomicOp::FetchAdd { .. }, .. } => WcOpcode::FetchAdd,
            SendOp::Atomic { op: AtomicOp::CmpSwap { .. }, .. } => WcOpcode::CmpSwap,
        }
    }
}

/// Bytes of the remote word and of the local result of an atomic.
pub const ATOMIC_LEN: u32 = 8;

/// A send-queue work request (`ibv_send_wr`).
#[derive(Clone, Copy, Debug)]
pub struct SendWr<'a> {
    pub wr_id: u64,
    pub op: SendOp,
    pub sges: &'a [Sge],
    /// Produce a completion on success (errors always complete).
    pub signaled: bool,
    /// Solicited event at the receiver (send only).
    pub solicited: bool,
    /// Wait for prior RDMA reads to finish before this one starts.
    pub fence: bool,
}

impl<'a> SendWr<'a> {
    /// The request [`QueuePair::post_message`] stands for: a [`SendOp::Send`] of `sges`.
    #[inline]
    pub fn message(wr_id: u64, sges: &'a [Sge], flags: SendFlags) -> SendWr<'a> {
        SendWr {
            wr_id,
            op: SendOp::Send,
            sges,
            signaled: flags.signaled(),
            solicited: flags.solicited(),
            fence: flags.fence(),
        }
    }

    /// The request [`QueuePair::post_rdma`] stands for: `rdma`'s write or read of `sges`.
    #[inline]
    pub fn rdma(wr_id: u64, sges: &'a [Sge], rdma: Rdma, flags: SendFlags) -> SendWr<'a> {
        SendWr { op: rdma.op(), solicited: false, ..SendWr::message(wr_id, sges, flags) }
    }
}

/// An RDMA write or read ([`QueuePair::post_rdma`]): the remote buffer's address and rkey,
/// and which way the data moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rdma {
    pub remote_addr: u64,
    pub rkey: u32,
    /// A read (the remote buffer into the local segments), else a write.
    pub read: bool,
}

impl Rdma {
    /// The [`SendOp`] of this write or read.
    #[inline]
    pub fn op(self) -> SendOp {
        let Rdma { remote_addr, rkey, read } = self;
        if read {
            SendOp::RdmaRead { remote_addr, rkey }
        } else {
            SendOp::RdmaWrite { remote_addr, rkey }
        }
    }
}

/// A direct post's flags ([`QueuePair::post_message`], [`QueuePair::post_rdma`]), numbered as
/// `ibv_send_flags` numbers them, so the verbs provider hands them to the device as they are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendFlags(pub u32);

impl SendFlags {
    /// Wait for prior RDMA reads to finish before this one starts (`IBV_SEND_FENCE`).
    pub const FENCE: u32 = 1;
    /// Produce a completion on success (`IBV_SEND_SIGNALED`; errors always complete).
    pub const SIGNALED: u32 = 2;
    /// Solicited event at the receiver (`IBV_SEND_SOLICITED`).
    pub const SOLICITED: u32 = 4;

    pub fn signaled(self) -> bool {
        self.0 & Self::SIGNALED != 0
    }

    pub fn solicited(self) -> bool {
        self.0 & Self::SOLICITED != 0
    }

    pub fn fence(self) -> bool {
        self.0 & Self::FENCE != 0
    }
}

/// A memory-window bind (`ibv_bind_mw`).
pub struct BindWr<'a> {
    pub wr_id: u64,
    pub mw: &'a Arc<dyn MemoryWindow>,
    pub mr: &'a Arc<dyn MemoryRegion>,
    pub addr: u64,
    pub length: u64,
    pub access: Access,
    pub signaled: bool,
}

/// Connection events of a queue pair, in rdma_cm's vocabulary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnEvent {
    Established,
    /// The peer's consumer rejected (DAT_CONNECTION_EVENT_PEER_REJECTED).
    PeerRejected,
    /// Nobody listens there (DAT_CONNECTION_EVENT_NON_PEER_REJECTED).
    NonPeerRejected,
    Unreachable,
    TimedOut,
    Disconnected,
    /// The peer vanished or the transport failed.
    Broken,
}

/// Where a queue pair's connection events go. Implemented by the core.
pub trait ConnectionEvents: Send + Sync {
    /// `private_data` is the peer's (accept data for `Established` on the active side).
    fn event(&self, ev: ConnEvent, private_data: &[u8]);
    /// A queue pair on a shared receive queue has no receive of the SRQ in progress any more:
    /// it is out of the connection (in error) and every receive it took from the SRQ has
    /// completed or been flushed. A provider says so when it knows (shm: with the final
    /// connection event, after its teardown flushed a receive in progress; verbs: with the final
    /// event, the queue pair being in error by then, or at `IBV_EVENT_QP_LAST_WQE_REACHED` if
    /// that comes first); more than one call is harmless. A sink whose queue
    /// pairs have no SRQ may ignore it.
    fn srq_receives_done(&self) {}
    /// A connect or accept of a [`QpInit::datagram`] queue pair ended (see [`UdExchange`]).
    /// The queue pair stays usable either way.
    fn ud_event(&self, outcome: &UdExchange<'_>) {
        let _ = outcome;
    }
}

/// How an address exchange of a [`QpInit::datagram`] queue pair ended.
#[derive(Clone, Copy, Debug)]
pub struct UdExchange<'a> {
    /// `Established`, or why not.
    pub ev: ConnEvent,
    /// The other side's private data: the accept's on the connecting side, the request's on
    /// the accepting side (or a reject's).
    pub private_data: &'a [u8],
    /// The peer's address when established (default otherwise).
    pub peer: UdPeer,
    /// The peer's IA address: the one connected to, or the request's.
    pub remote: SocketAddr,
    /// This side accepted.
    pub passive: bool,
}

impl UdExchange<'_> {
    /// An exchange with `remote` that ended in `ev` without an address.
    pub fn failed(ev: ConnEvent, remote: SocketAddr, passive: bool) -> UdExchange<'static> {
        UdExchange { ev, private_data: &[], peer: UdPeer::default(), remote, passive }
    }
}

/// Where a listener's connect requests go. Implemented by the core.
pub trait ListenerEvents: Send + Sync {
    fn connect_request(&self, req: Arc<dyn ConnectionRequest>);
}

/// Asynchronous device errors. Implemented by the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncError {
    /// A queue pair (by its context) went to error state.
    QpError {
        context: u64,
    },
    CqOverflow,
    DeviceFatal,
    /// The port the device is bound to went down (verbs `IBV_EVENT_PORT_ERR`).
    PortError,
    /// A provider thread hit an internal error (a caught panic) and carries on.
    ProviderInternal,
    /// An armed SRQ (by the context given to `set_limit`) holds fewer receives than its limit.
    SrqLimit {
        context: u64,
    },
}

pub trait AsyncEvents: Send + Sync {
    fn async_error(&self, err: AsyncError);
}

/// Unit tests' sink: records every asynchronous error reported.
#[cfg(test)]
#[derive(Default)]
pub(crate) struct RecordedAsyncEvents(pub parking_lot::Mutex<Vec<AsyncError>>);

#[cfg(test)]
impl AsyncEvents for RecordedAsyncEvents {
    fn async_error(&self, err: AsyncError) {
        self.0.lock().push(err);
    }
}

/// A listening connection qualifier. Dropping it stops listening.
pub trait Listener: Send + Sync {
    fn port(&self) -> u64;
}

/// An incoming connection request that has not been accepted or rejected yet.
pub trait ConnectionRequest: Send + Sync {
    fn private_data(&self) -> &[u8];
    fn remote_address(&self) -> SocketAddr;
    /// The connection qualifier it arrived on.
    fn port(&self) -> u64;
    /// Refuses it; the active side sees `PeerRejected`.
    fn reject(&self, private_data: &[u8]) -> DatResult<()>;
    /// Whether an unreliable datagram queue pair asks (only such a queue pair may accept it).
    fn is_datagram(&self) -> bool {
        false
    }
}

pub trait QueuePair: Send + Sync {
    fn post_send(&self, wr: &SendWr<'_>) -> DatResult<()>;
    /// [`QueuePair::post_send`] of a [`SendOp::Send`] of `sges` (a message), without a
    /// [`SendWr`] to build and read: the post every `dat_ep_post_send` makes. A provider may
    /// take it directly (the verbs one does); this default builds the request.
    #[inline]
    fn post_message(&self, wr_id: u64, sges: &[Sge], flags: SendFlags) -> DatResult<()> {
        self.post_send(&SendWr::message(wr_id, sges, flags))
    }
    /// [`QueuePair::post_send`] of an RDMA write or read of `sges` (`flags`' solicited bit is
    /// ignored, as for any RDMA operation), without a [`SendWr`] to build and read: the post
    /// every `dat_ep_post_rdma_write` and `dat_ep_post_rdma_read` makes. As
    /// [`QueuePair::post_message`], this default builds the request.
    #[inline]
    fn post_rdma(&self, wr_id: u64, sges: &[Sge], rdma: Rdma, flags: SendFlags) -> DatResult<()> {
        self.post_send(&SendWr::rdma(wr_id, sges, rdma, flags))
    }
    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()>;
    /// Binds a memory window; returns the new rkey.
    fn bind_mw(&self, wr: &BindWr<'_>) -> DatResult<u32>;
    /// Starts an active connect. The outcome arrives as a [`ConnEvent`].
    fn connect(&self, remote: SocketAddr, port: u64, private_data: &[u8], timeout: Option<Duration>) -> DatResult<()>;
    /// Accepts `req` on this queue pair; `Established` follows on both sides.
    fn accept(&self, req: &Arc<dyn ConnectionRequest>, private_data: &[u8]) -> DatResult<()>;
    /// Disconnects. Graceful waits for posted work to finish first; abrupt does not. Either way,
    /// work still posted afterwards completes with [`WcStatus::Flushed`], and `Disconnected`
    /// is delivered.
    fn disconnect(&self, graceful: bool) -> DatResult<()>;
    /// Number of receive buffers posted and not yet consumed.
    fn posted_recvs(&self) -> u32;
    /// Number of send-queue work requests (sends, RDMA, binds) posted and not yet completed.
    fn posted_sends(&self) -> u32;
    /// The endpoint is disconnected and `wr_id` is posted to it (a receive if `op` is
    /// [`WcOpcode::Recv`], else a send-queue request): completes it as flushed behind the work
    /// of its queue posted before it, which the provider may still be flushing, and returns
    /// true. False: nothing of the queue is outstanding (or there is no room), and the core
    /// completes it at once. The default is for providers whose flushes are all done when
    /// the disconnection is reported.
    fn flush_behind_posted(&self, wr_id: u64, op: WcOpcode) -> bool {
        let _ = (wr_id, op);
        false
    }
    /// Sends one datagram to `peer` (a [`QpInit::datagram`] queue pair; `wr.op` is
    /// [`SendOp::Send`]). It completes as [`WcOpcode::SendUd`] once handed to the transport;
    /// like InfiniBand UD, a datagram the peer has no receive for is lost.
    fn post_send_ud(&self, wr: &SendWr<'_>, peer: UdPeer) -> DatResult<()> {
        let _ = (wr, peer);
        Err(crate::error::DatError::NOT_IMPLEMENTED)
    }
}

pub trait SharedReceiveQueue: Send + Sync {
    fn post_recv(&self, wr_id: u64, sges: &[Sge]) -> DatResult<()>;
    fn resize(&self, max_wr: u32) -> DatResult<()>;
    /// Arms the low-watermark event (ibv_modify_srq with IBV_SRQ_LIMIT): once the SRQ holds
    /// fewer than `low_watermark` receives, the provider reports `AsyncError::SrqLimit { context }`
    /// once and disarms. 0 disarms.
    fn set_limit(&self, low_watermark: u32, context: u64) -> DatResult<()>;
    fn posted(&self) -> u32;
}
