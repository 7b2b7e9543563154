//! The `shm` provider: DAT between processes of one user on one host, no RDMA hardware.
//!
//! - Addressing: the device address is 127.0.0.1:0; a connection qualifier is a unix socket in a
//!   private per-user directory ([`rendezvous`]). Any local IPv4/IPv6 address reaches it.
//! - Connection management: a SOCK_SEQPACKET socket per connection carries REQ / ACC / REJ /
//!   RTU / DISC and the doorbell; the passive side creates a memfd segment (mode 0600) with four
//!   rings and passes it with ACC ([`conn`], [`ring`]). Each side also passes its published
//!   area ([`area`]): completion-queue wake words and the memory table.
//! - Data: sends go into the request ring; the target executes them in order and answers
//!   errors on the response ring ([`xfer`]). The consumers' own polls drive this ([`cq`]):
//!   polling a receive queue executes inbound requests and places sends into posted receives,
//!   polling a send queue completes outbound work; no other thread is on the path. RDMA
//!   writes and reads are done by the initiator itself against the target's published memory
//!   table ([`rdma`], [`memtable`]); where it cannot, they go through the ring and the target
//!   executes them. A sleeping consumer is woken through its queue's wake word
//!   by whichever process produced work for it. The progress thread ([`progress`]) handles
//!   connection management and only the work no consumer drives.
//!   Large payloads move with one `process_vm_readv/writev` copy when the kernel allows it
//!   ([`cma`]), else inline through the rings.
//! - Peer death: end-of-file on the socket without DISC = Broken, outstanding work flushed.
//!
//! Simplifications (documented): a DTO error completes that op only and does not move the QP to
//! the error state; a send without a posted receive waits (infinite RNR retry); the SRQ low
//! watermark raises no event; bind completions are reported at once, not ordered after earlier
//! sends; the solicited flag is carried but the trait has no way to surface it.

use super::lookup;
use super::{
    Access, AsyncEvents, CompletionQueue, Device, DeviceAttr, Listener, ListenerEvents, MemoryRegion, MemoryWindow,
    ProtectionDomain, Provider, QpInit, QueuePair, SharedReceiveQueue, Transport, Waker,
};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

mod area;
mod cma;
mod conn;
mod cq;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod memtable;
mod progress;
mod qp;
pub(crate) mod quota;
#[doc(hidden)]
pub mod raw_peer;
mod rdma;
mod recvq;
mod rendezvous;
mod ring;
mod shared;
mod sys;
mod ud;
mod udsock;
mod wake;
mod wire;
mod xfer;

pub use conn::NO_LISTENER_GRACE;

/// Largest message or RDMA transfer.
pub const MAX_MESSAGE: u64 = 1 << 31;

static CQS: lookup::Reg<cq::ShmCq> = lookup::Reg::new();
static PDS: lookup::Reg<ShmPd> = lookup::Reg::new();
static SRQS: lookup::Reg<recvq::ShmSrq> = lookup::Reg::new();
static MWS: lookup::Reg<ShmMw> = lookup::Reg::new();
static CRS: lookup::Reg<conn::ShmCr> = lookup::Reg::new();

/// The device's `max_qp`, `max_pd`, `max_mr` and `max_mw`, enforced per process ([`quota`]).
/// Memory regions and windows share the memory table: their limits add up to its size, so
/// neither kind can take the other's keys. (`max_cq` is the number of wake words.)
static QPS: quota::Quota = quota::Quota::new(16384);
static PD_QUOTA: quota::Quota = quota::Quota::new(16384);
static MW_QUOTA: quota::Quota = quota::Quota::new(memtable::KEYS / 8);
static MR_QUOTA: quota::Quota = quota::Quota::new(memtable::KEYS - memtable::KEYS / 8);
static SRQ_QUOTA: quota::Quota = quota::Quota::new(1024);

/// The provider object registered with the core.
#[derive(Default)]
pub struct ShmProvider;

impl ShmProvider {
    pub fn new() -> Self {
        ShmProvider
    }
}

impl Provider for ShmProvider {
    fn name(&self) -> &'static str {
        "shm"
    }

    fn ia_names(&self) -> Vec<String> {
        ["shm", "shm0", "loopback"].iter().map(|s| s.to_string()).collect()
    }

    fn open(&self, ia_name: &str, _params: &str, events: Arc<dyn AsyncEvents>) -> DatResult<Arc<dyn Device>> {
        if let Err(e) = rendezvous::dir() {
            tracing::warn!(ia_name, "shm: no private rendezvous directory: {e}");
            return Err(DatError::insufficient(DAT_RESOURCE_DEVICE));
        }
        Ok(Arc::new(ShmDevice { attr: device_attr(ia_name), events }))
    }
}

fn device_attr(name: &str) -> DeviceAttr {
    DeviceAttr {
        adapter_name: name.to_string(),
        vendor_name: "datcore shm".to_string(),
        hardware_version_major: 1,
        hardware_version_minor: 0,
        firmware_version_major: 1,
        firmware_version_minor: 0,
        transport: Transport::SharedMemory,
        max_qp: QPS.max(),
        max_qp_wr: 16384,
        max_sge: cma::MAX_IOV as u32,
        max_cq: area::WAKE_SLOTS as u32,
        max_cqe: cq::MAX_CQE,
        max_mr: MR_QUOTA.max(),
        max_mr_size: MAX_MESSAGE,
        max_pd: PD_QUOTA.max(),
        max_mw: MW_QUOTA.max(),
        max_srq: SRQ_QUOTA.max(),
        max_srq_wr: 16384,
        max_rdma_read_in: 64,
        max_rdma_read_out: 64,
        max_message_size: MAX_MESSAGE,
        max_rdma_size: MAX_MESSAGE,
        max_private_data: wire::MAX_PRIVATE_DATA,
        extensions: super::ExtensionCaps { immed_data: true, atomics: true, ud: true },
        // No wire MTU: the largest InfiniBand one, for consumers that size messages by it.
        transport_mtu: 4096,
    }
}

pub struct ShmDevice {
    attr: DeviceAttr,
    events: Arc<dyn AsyncEvents>,
}

impl Device for ShmDevice {
    fn attr(&self) -> &DeviceAttr {
        &self.attr
    }

    fn address(&self) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0)
    }

    fn alloc_pd(&self) -> DatResult<Arc<dyn ProtectionDomain>> {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let held = PD_QUOTA.take().ok_or(DatError::insufficient(DAT_RESOURCE_PROTECTION_DOMAIN))?;
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let pd = Arc::new(ShmPd { id, events: self.events.clone(), _held: held });
        PDS.insert(&pd);
        Ok(pd)
    }

    fn create_cq(&self, min_entries: u32, waker: Arc<dyn Waker>) -> DatResult<Arc<dyn CompletionQueue>> {
        let cq = Arc::new(cq::ShmCq::new(min_entries, waker, self.events.clone())?);
        CQS.insert(&cq);
        Ok(cq)
    }

    fn listen(&self, port: u64, events: Arc<dyn ListenerEvents>) -> DatResult<Arc<dyn Listener>> {
        Ok(Arc::new(conn::ShmListener::listen(port, events)?))
    }

    fn create_qp(&self, init: QpInit) -> DatResult<Arc<dyn QueuePair>> {
        let pd = PDS.get(&init.pd).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_PZ))?;
        let send_cq = qp::our_cq(&init.send_cq)?;
        let recv_cq = qp::our_cq(&init.recv_cq)?;
        let srq = match &init.srq {
            None => None,
            Some(s) => Some(SRQS.get(s).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_SRQ))?),
        };
        let c = init.caps;
        if c.max_send_wr > self.attr.max_qp_wr || c.max_recv_wr > self.attr.max_qp_wr {
            return Err(DatError::insufficient(DAT_RESOURCE_TEP));
        }
        if c.max_send_sge > self.attr.max_sge || c.max_recv_sge > self.attr.max_sge {
            return Err(DatError::insufficient(DAT_RESOURCE_TEP));
        }
        if srq.as_ref().is_some_and(|s| s.pd != pd.id) {
            return Err(DatError::new(DAT_PROTECTION_VIOLATION, 0));
        }
        let caps = super::QpCaps { max_send_wr: c.max_send_wr.max(1), max_recv_wr: c.max_recv_wr.max(1), ..c };
        let held = QPS.take().ok_or(DatError::insufficient(DAT_RESOURCE_TEP))?;
        if init.datagram {
            let mut qp = ud::ShmUdQp::new(pd.id, send_cq, recv_cq, srq, caps, init.context, init.events)?;
            qp.held = Some(held);
            return Ok(Arc::new(qp));
        }
        let events = self.events.clone();
        let mut qp = qp::ShmQp::new(pd.id, send_cq, recv_cq, srq, caps, init.context, init.events, events);
        qp.held = Some(held);
        Ok(Arc::new(qp))
    }
}

pub struct ShmPd {
    id: u32,
    /// The device's asynchronous events (an SRQ's low watermark).
    events: Arc<dyn AsyncEvents>,
    _held: quota::Held,
}

impl ProtectionDomain for ShmPd {
    fn reg_mr(&self, addr: u64, len: u64, access: Access) -> DatResult<Arc<dyn MemoryRegion>> {
        if len > MAX_MESSAGE || addr.checked_add(len).is_none() {
            return Err(DatError::new(DAT_LENGTH_ERROR, 0));
        }
        // As the verbs provider (ibv_reg_mr fails with EFAULT): the range must be mapped with
        // the access the LMR grants, else DAT_INVALID_PARAMETER | DAT_INVALID_ARG3.
        let range = super::mapped::survey(addr, len);
        if !range.allows(access.needs_write()) {
            tracing::debug!(addr, len, ?access, "shm: registration of a range not mapped with that access");
            return Err(DatError::new(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
        }
        let held = MR_QUOTA.take().ok_or(DatError::insufficient(DAT_RESOURCE_MEMORY_REGION))?;
        let slot = memtable::alloc().ok_or(DatError::insufficient(DAT_RESOURCE_MEMORY_REGION))?;
        let exported = range.first.as_ref().and_then(|m| shared::export(m, addr, len));
        let share = exported.as_ref().map(|e| e.share);
        let entry = memtable::Entry { kind: memtable::Kind::Region, pd: self.id, addr, len, access, share };
        let key = memtable::publish(slot, entry);
        Ok(Arc::new(ShmMr { slot, key, addr, len, _exported: exported, _held: held }))
    }

    fn alloc_mw(&self) -> DatResult<Arc<dyn MemoryWindow>> {
        let held = MW_QUOTA.take().ok_or(DatError::insufficient(DAT_RESOURCE_MEMORY_REGION))?;
        let slot = memtable::alloc().ok_or(DatError::insufficient(DAT_RESOURCE_MEMORY_REGION))?;
        let mw = Arc::new(ShmMw { slot, pd: self.id, key: AtomicU32::new(0), _held: held });
        MWS.insert(&mw);
        Ok(mw)
    }

    fn create_srq(&self, max_wr: u32, max_sge: u32) -> DatResult<Arc<dyn SharedReceiveQueue>> {
        if max_wr > 16384 || max_sge > cma::MAX_IOV as u32 {
            return Err(DatError::insufficient(DAT_RESOURCE_SRQ));
        }
        let held = SRQ_QUOTA.take().ok_or(DatError::insufficient(DAT_RESOURCE_SRQ))?;
        let s = Arc::new(recvq::ShmSrq::new(self.id, max_wr, max_sge.max(1), self.events.clone(), Some(held)));
        SRQS.insert(&s);
        Ok(s)
    }
}

pub struct ShmMr {
    slot: u32,
    key: u32,
    addr: u64,
    len: u64,
    /// Keeps the published descriptor open; dropped after `Drop` has freed the slot (so after
    /// every peer copy through the key ended).
    _exported: Option<shared::Exported>,
    _held: quota::Held,
}

impl MemoryRegion for ShmMr {
    fn lkey(&self) -> u32 {
        self.key
    }
    fn rkey(&self) -> u32 {
        self.key
    }
    fn addr(&self) -> u64 {
        self.addr
    }
    fn length(&self) -> u64 {
        self.len
    }
}

impl Drop for ShmMr {
    fn drop(&mut self) {
        memtable::free(self.slot);
    }
}

pub struct ShmMw {
    slot: u32,
    pd: u32,
    key: AtomicU32,
    _held: quota::Held,
}

impl ShmMw {
    /// Binds the window: a fresh rkey for `e`; the previous rkey stops working.
    fn bind(&self, e: memtable::Entry) -> u32 {
        let k = memtable::publish(self.slot, e);
        self.key.store(k, Ordering::Release);
        k
    }
}

impl MemoryWindow for ShmMw {
    fn rkey(&self) -> u32 {
        self.key.load(Ordering::Acquire)
    }
}

impl Drop for ShmMw {
    fn drop(&mut self) {
        memtable::revoke(self.slot);
        memtable::free(self.slot);
    }
}
