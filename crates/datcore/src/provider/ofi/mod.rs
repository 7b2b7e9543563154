//! The `ofi` provider: DAT over libfabric (`libfabric.so.1`): libfabric's `tcp` provider with
//! `FI_EP_MSG` endpoints, and providers of `FI_EP_RDM` endpoints (shm, `tcp;ofi_rxm`, ...) with
//! DAT's connections built on them ([`rdm`]; docs/ofi.md).
//!
//! **Binding: hand-written, loaded with `dlopen`**, for the reasons the verbs provider gives
//! (builds with nothing but rustc, loads and runs `shm` on hosts without libfabric): without
//! `libfabric.so.1` (1.17 or later) [`Provider::ia_names`] is empty. Most `fi_*` calls are
//! inline functions of libfabric's headers calling through the objects' operation tables;
//! [`sys`] declares those tables for API 1.17 and checks them against the headers in a test.
//!
//! **Names** ([`names`]): `ofi-<libfabric provider>-<domain>` for each provider and domain
//! `fi_getinfo` offers (`ofi-tcp-lo`, `ofi-tcp-eth0`, `ofi-tcp_rxm-lo`, `ofi-shm`);
//! `FI_PROVIDER` narrows them as libfabric honours it.
//!
//! **Objects:** IA = a fabric, a domain and one event queue (EQ) with a CM thread ([`cm`]);
//! PZ = bookkeeping only (a libfabric domain is the protection domain); LMR = `fi_mr_reg`
//! ([`mr`]); RMR: not implemented (`DAT_MODEL_NOT_SUPPORTED`, as on devices without memory
//! windows); EVD's DTO side = a CQ of `FI_CQ_FORMAT_DATA` with an `FI_WAIT_FD` wait object,
//! polled and slept on in the consumer's thread ([`cq`]); EP = an `FI_EP_MSG` endpoint made at
//! connect (from the IA's info) or accept (from the connection request's), receives posted
//! before that wait in the EP until then ([`ep`]); PSP/RSP = a passive endpoint listening on
//! the IA's address, port = connection qualifier (16 bits); CR = an `FI_CONNREQ` event's info.
//! SRQs, UD endpoints and the IB extensions are `DAT_NOT_IMPLEMENTED` / not advertised.
//!
//! **Memory keys:** DAT's `DAT_RMR_CONTEXT` and `DAT_LMR_CONTEXT` are 32 bits, libfabric's keys
//! 64. Where the provider lets us choose keys (no `FI_MR_PROV_KEY`, as tcp), we request our own
//! 32-bit keys (a per-IA counter), so the rkey a consumer sends its peer is the libfabric key.
//! Where the provider picks them (`FI_MR_PROV_KEY`), its key is used when it fits 32 bits and
//! the registration fails with `DAT_INSUFFICIENT_RESOURCES` otherwise (a key table published to
//! the peer is future work). The lkey is the same number. A per-IA table by key holds each
//! region's bounds, its local write access and, where the provider wants local descriptors
//! (`FI_MR_LOCAL`), its `fi_mr_desc`: every posted segment is checked against it
//! (`DAT_PROTECTION_VIOLATION` outside a region, `DAT_PRIVILEGES_VIOLATION` for a sink without
//! local write), since libfabric's tcp checks no local keys. RMA
//! addresses are virtual addresses: the domain is always opened with `FI_MR_VIRT_ADDR` (a
//! provider that does not need it, as tcp, would otherwise address by offset); one that
//! cannot address virtually fails `fi_domain` and the IA does not open (offset addressing
//! with a published table of MR bases is future work).
//!
//! **Work-request ids:** every post takes a slot of its queue ([`ep::Queue`]); the slot's
//! address is the libfabric operation context, and the slot keeps the consumer's cookie, the
//! operation and its length, so an error completion reports the right operation. Unsignaled
//! sends complete in libfabric too; the poll drops their successful completions.
//!
//! **Disconnect** (either side, or the peer's `FI_SHUTDOWN`): `fi_shutdown`, every posted work
//! request completes as [`super::WcStatus::Flushed`] (in software: a slot still held is
//! flushed, and a late libfabric completion of a flushed slot is dropped), and `Disconnected`
//! is delivered. The libfabric endpoint is closed when the EP's queue pair is dropped.
//!
//! **Private data:** raw consumer bytes; a reject carries the marker `DATREJ` first, so the
//! active side tells a consumer's reject (`PeerRejected`) from nobody listening
//! (`NonPeerRejected`): both arrive as `ECONNREFUSED`.

use super::{
    AsyncEvents, CompletionQueue, Device, DeviceAttr, ExtensionCaps, Listener, ListenerEvents, ProtectionDomain,
    Provider, QpInit, QueuePair, Transport, Waker,
};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

mod cm;
mod cq;
mod ctl_entries;
mod ep;
mod mr;
mod names;
mod rdm;
mod retries;
mod shm_names;
mod shm_psp;
mod sleep;
mod sys;

pub use names::Offer;

/// Largest private data of a connect, accept or reject (the tcp provider's limit).
const MAX_PRIVATE_DATA: usize = 128;
/// Most SGEs of one post (each libfabric provider may allow fewer: its `iov_limit`).
pub(crate) const MAX_SGE: usize = 8;

/// Logs a failed libfabric call and returns `err`.
fn fail(lib: &sys::Lib, what: &str, r: isize, err: DatError) -> DatError {
    tracing::warn!("ofi: {what} failed: {} ({r})", sys::strerror(lib, r));
    err
}

/// The provider object registered with the core.
#[derive(Default)]
pub struct OfiProvider;

impl OfiProvider {
    pub fn new() -> Self {
        OfiProvider
    }
}

impl Provider for OfiProvider {
    fn name(&self) -> &'static str {
        "ofi"
    }

    fn ia_names(&self) -> Vec<String> {
        match offers() {
            Ok(list) => list.into_iter().filter(|o| o.unusable.is_none()).map(|o| o.ia_name).collect(),
            Err(_) => Vec::new(),
        }
    }

    fn open(&self, ia_name: &str, _params: &str, events: Arc<dyn AsyncEvents>) -> DatResult<Arc<dyn Device>> {
        let lib = sys::lib().map_err(|why| {
            tracing::warn!(ia_name, "ofi: {why}");
            DatError::new(DAT_PROVIDER_NOT_FOUND, 0)
        })?;
        let (info, ep_type) = names::find(lib, ia_name).map_err(|why| {
            tracing::warn!(ia_name, "ofi: cannot open IA: {why}");
            DatError::new(DAT_PROVIDER_NOT_FOUND, 0)
        })?;
        let dev = DevInner::open(lib, ia_name, info, ep_type == sys::FI_EP_RDM, events)?;
        let thread = cm::start(&dev)?;
        Ok(Arc::new(OfiDevice { inner: dev, thread: Mutex::new(Some(thread)) }))
    }
}

/// For tools (`datinfo`): every libfabric provider and domain we would name, usable or not, or
/// why libfabric cannot be loaded.
pub fn offers() -> Result<Vec<Offer>, String> {
    let lib = sys::lib().map_err(str::to_string)?;
    names::offers(lib)
}

/// One opened IA's libfabric objects.
pub(crate) struct DevInner {
    pub lib: &'static sys::Lib,
    /// The info the domain was opened with (endpoints are made from duplicates of it).
    pub info: *mut sys::fi_info,
    pub fabric: *mut sys::fid_fabric,
    pub domain: *mut sys::fid_domain,
    pub attr: DeviceAttr,
    pub addr: SocketAddr,
    /// `iov_limit` of the provider's transmit and receive queues (at most [`MAX_SGE`]).
    pub iov_limit: usize,
    pub mr_keys: mr::Keys,
    /// The provider wants local descriptors (`FI_MR_LOCAL`).
    pub mr_local: bool,
    /// RMA addresses are offsets into the target's region, not virtual addresses.
    pub offsets: bool,
    /// Held by the CM thread while it calls into libfabric and by whoever opens or closes an
    /// endpoint:
    /// libfabric 1.17's rxm does not survive an endpoint made or closed while another thread drives
    /// progress in the domain. Consumers' posts and polls never take it. Reentrant: the CM
    /// thread may drop the last reference to an endpoint.
    pub lifecycle: parking_lot::ReentrantMutex<()>,
    pub cm: cm::Cm,
    /// The connection protocol's objects where the endpoints are `FI_EP_RDM` ([`rdm`]).
    pub rdm: Option<rdm::Rdm>,
    pub async_events: Arc<dyn AsyncEvents>,
}

// SAFETY: the domain is opened FI_THREAD_SAFE, so every object of it may be used from any
// thread; the pointers are closed once, in Drop.
unsafe impl Send for DevInner {}
// SAFETY: as above.
unsafe impl Sync for DevInner {}

impl DevInner {
    fn open(
        lib: &'static sys::Lib,
        ia_name: &str,
        info: *mut sys::fi_info,
        is_rdm: bool,
        async_events: Arc<dyn AsyncEvents>,
    ) -> DatResult<Arc<DevInner>> {
        let free_info = move || {
            // SAFETY: ours, freed once on this error path.
            unsafe { (lib.fi_freeinfo)(info) }
        };
        // SAFETY: a live info with its attribute structs.
        let (mr_mode, addr, fmt) =
            unsafe { ((*(*info).domain_attr).mr_mode, names::src_addr(info), (*info).addr_format) };
        // An FI_ADDR_STR provider (shm) is the host's: its IA address is the loopback.
        let addr = addr.or((fmt == sys::FI_ADDR_STR).then(|| SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), 0)));
        let Some(addr) = addr else {
            free_info();
            return Err(DatError::new(DAT_PROVIDER_NOT_FOUND, 0));
        };
        // RMA addresses are virtual addresses: a provider that does not need FI_MR_VIRT_ADDR
        // (tcp) uses offsets unless the domain is opened with it, so it is always asked for.
        // An RDM provider that does not ask for it itself addresses by offset even so (rxm
        // does not pass it on to its core provider): its RMA addresses are translated
        // ([`rdm`]'s key bases).
        let offsets = is_rdm && mr_mode & sys::FI_MR_VIRT_ADDR == 0;
        // SAFETY: a live info.
        unsafe { (*(*info).domain_attr).mr_mode = mr_mode | sys::FI_MR_VIRT_ADDR };
        let mut fabric = std::ptr::null_mut();
        // SAFETY: the info's fabric attributes; the fabric is closed in Drop or below.
        let r = unsafe { (lib.fi_fabric)((*info).fabric_attr, &mut fabric, std::ptr::null_mut()) };
        if r != 0 {
            free_info();
            return Err(fail(lib, "fi_fabric", r as isize, DatError::insufficient(DAT_RESOURCE_DEVICE)));
        }
        let mut domain = std::ptr::null_mut();
        // SAFETY: a live fabric and info.
        let r = unsafe { ((*(*fabric).ops).domain)(fabric, info, &mut domain, std::ptr::null_mut()) };
        if r != 0 {
            // SAFETY: closing what we opened.
            unsafe { sys::FiOps::close(&fabric) };
            free_info();
            return Err(fail(lib, "fi_domain", r as isize, DatError::insufficient(DAT_RESOURCE_DEVICE)));
        }
        let rdm = if is_rdm { Some(rdm::Rdm::open(lib, domain, info)) } else { None }.transpose();
        let cm = rdm.and_then(|r| {
            Ok((
                cm::Cm::open(
                    lib,
                    fabric,
                    &r.as_ref().map_or(Vec::new(), |r| r.cq_fd.into_iter().chain([r.kick.fd()]).collect()),
                    r.as_ref().and_then(|r| r.cq_fd).map_or(0, |_| cq::wait_fd_edge(true, 0)),
                )?,
                r,
            ))
        });
        let (cm, rdm) = match cm {
            Ok(cm) => cm,
            Err(e) => {
                // SAFETY: closing what we opened, children first (an Rdm closes itself).
                unsafe {
                    sys::FiOps::close(&domain);
                    sys::FiOps::close(&fabric);
                }
                free_info();
                return Err(e);
            }
        };
        // SAFETY: live attribute structs.
        let attr = unsafe { device_attr(info) };
        // SAFETY: as above.
        let iov_limit = unsafe { (*(*info).tx_attr).iov_limit.min((*(*info).rx_attr).iov_limit) }.clamp(1, MAX_SGE);
        tracing::debug!(ia_name, %addr, mr_mode, iov_limit, "ofi: opened");
        Ok(Arc::new(DevInner {
            lib,
            info,
            fabric,
            domain,
            attr: DeviceAttr { max_sge: iov_limit as u32, ..attr },
            addr,
            iov_limit,
            mr_keys: mr::Keys::new(),
            mr_local: mr_mode & sys::FI_MR_LOCAL != 0,
            offsets,
            lifecycle: parking_lot::ReentrantMutex::new(()),
            cm,
            rdm,
            async_events,
        }))
    }
}

/// DAT's device attributes from an info.
///
/// # Safety
/// `info` is a live fi_info with its attribute structs.
unsafe fn device_attr(info: *const sys::fi_info) -> DeviceAttr {
    // SAFETY: per the contract.
    let (tx, rx, ep, dom, fab) = unsafe {
        (&*(*info).tx_attr, &*(*info).rx_attr, &*(*info).ep_attr, &*(*info).domain_attr, &*(*info).fabric_attr)
    };
    // SAFETY: as above.
    let (prov, domain) = unsafe { (sys::cstr(fab.prov_name), sys::cstr(dom.name)) };
    let clamp = |v: usize| v.min(u32::MAX as usize) as u32;
    let max_msg = (ep.max_msg_size as u64).min(1 << 31);
    DeviceAttr {
        adapter_name: domain,
        vendor_name: format!("libfabric {prov}"),
        hardware_version_major: fab.prov_version >> 16,
        hardware_version_minor: fab.prov_version & 0xffff,
        firmware_version_major: fab.api_version >> 16,
        firmware_version_minor: fab.api_version & 0xffff,
        transport: Transport::Fabric,
        max_qp: clamp(dom.ep_cnt),
        max_qp_wr: clamp(tx.size.min(rx.size)),
        max_sge: clamp(tx.iov_limit.min(rx.iov_limit)),
        max_cq: clamp(dom.cq_cnt),
        max_cqe: 1 << 16,
        max_mr: if dom.mr_cnt == 0 { 1 << 20 } else { clamp(dom.mr_cnt) },
        max_mr_size: 1 << 40,
        max_pd: 1 << 16,
        max_mw: 0,
        max_srq: 0,
        max_srq_wr: 0,
        max_rdma_read_in: 16,
        max_rdma_read_out: 16,
        max_message_size: max_msg,
        max_rdma_size: max_msg,
        max_private_data: MAX_PRIVATE_DATA,
        extensions: ExtensionCaps::default(),
        transport_mtu: 4096,
    }
}

impl Drop for DevInner {
    fn drop(&mut self) {
        // SAFETY: every CQ, endpoint, MR and listener holds an Arc<DevInner>, so all are
        // closed; the EQ, domain and fabric go in that order, each once.
        unsafe {
            drop(self.rdm.take());
            self.cm.close();
            sys::FiOps::close(&self.domain);
            sys::FiOps::close(&self.fabric);
            (self.lib.fi_freeinfo)(self.info);
        }
    }
}

/// An opened IA. Dropping it stops the CM thread; the libfabric objects go when the last CQ,
/// endpoint or MR holding them does.
pub struct OfiDevice {
    inner: Arc<DevInner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for OfiDevice {
    fn drop(&mut self) {
        self.inner.cm.stop();
        if let Some(t) = self.thread.lock().take() {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

impl Device for OfiDevice {
    fn attr(&self) -> &DeviceAttr {
        &self.inner.attr
    }

    fn address(&self) -> SocketAddr {
        SocketAddr::new(self.inner.addr.ip(), 0)
    }

    fn alloc_pd(&self) -> DatResult<Arc<dyn ProtectionDomain>> {
        Ok(Arc::new(mr::OfiPd::new(&self.inner)))
    }

    fn create_cq(&self, min_entries: u32, waker: Arc<dyn Waker>) -> DatResult<Arc<dyn CompletionQueue>> {
        let cq = cq::OfiCq::new(&self.inner, min_entries, waker)?;
        cq::CQS.insert(&cq);
        self.inner.cm.watch(&cq);
        Ok(cq)
    }

    fn listen(&self, port: u64, events: Arc<dyn ListenerEvents>) -> DatResult<Arc<dyn Listener>> {
        if self.inner.rdm.is_some() {
            return Ok(rdm::RdmListener::listen(&self.inner, port, events)?);
        }
        Ok(cm::OfiListener::listen(&self.inner, port, events)?)
    }

    fn create_qp(&self, init: QpInit) -> DatResult<Arc<dyn QueuePair>> {
        if init.datagram || init.srq.is_some() {
            return Err(DatError::NOT_IMPLEMENTED);
        }
        Ok(ep::OfiQp::new(&self.inner, init)?)
    }
}
