//! Service points (PSP, RSP) that listen on a connection qualifier, and the connection requests
//! (CR) they produce.

use crate::codes::*;
use crate::endpoint::Endpoint;
use crate::error::{DatError, DatResult};
use crate::evd::EventDispatcher;
use crate::event::{Event, EventData};
use crate::handle::{self, DatObject, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::{ConnectionRequest as ProviderRequest, Listener, ListenerEvents};
use parking_lot::Mutex;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, Weak};

/// What both kinds of service point share.
pub struct ServicePoint {
    pub ia: Arc<InterfaceAdapter>,
    pub conn_qual: u64,
    pub evd: Arc<EventDispatcher>,
    pub evd_handle: Handle,
    /// `DAT_PSP_FLAGS` of a PSP; 0 for an RSP.
    pub psp_flags: u32,
    /// The reserved EP of an RSP.
    pub reserved_ep: Option<(Handle, Arc<Endpoint>)>,
    listener: Mutex<Option<Arc<dyn Listener>>>,
    handle: OnceLock<Handle>,
}

/// A public service point.
pub struct PublicServicePoint(pub Arc<ServicePoint>);
/// A reserved service point: one EP waits for a connection on it.
pub struct ReservedServicePoint(pub Arc<ServicePoint>);

handle::dat_object!(PublicServicePoint, Psp);
handle::dat_object!(ReservedServicePoint, Rsp);

/// A connection request waiting for `dat_cr_accept`, `dat_cr_reject` or `dat_cr_handoff`.
pub struct ConnectionRequest {
    pub ia: Arc<InterfaceAdapter>,
    pub sp_handle: Handle,
    pub conn_qual: u64,
    pub request: Arc<dyn ProviderRequest>,
    /// The EP the request names (`DAT_CR_PARAM.local_ep_handle`): an RSP's reserved EP, the
    /// provider-created EP of a `DAT_PSP_PROVIDER_FLAG` PSP, or NULL.
    pub local_ep: Handle,
    /// Whether `local_ep` was created by the provider for this request: it is freed with the
    /// request unless the request is accepted on it.
    provider_ep: bool,
    remote_sockaddr: Box<libc::sockaddr_storage>,
}

handle::dat_object!(ConnectionRequest, Cr);

impl ConnectionRequest {
    pub fn remote_address_ptr(&self) -> *const libc::sockaddr {
        &*self.remote_sockaddr as *const _ as *const libc::sockaddr
    }
}

struct SpEvents(Weak<ServicePoint>);

impl ListenerEvents for SpEvents {
    fn connect_request(&self, req: Arc<dyn ProviderRequest>) {
        match self.0.upgrade() {
            Some(sp) => sp.deliver(req),
            None => {
                let _ = req.reject(&[]);
            }
        }
    }
}

impl ServicePoint {
    pub fn handle(&self) -> Handle {
        self.handle.get().copied().unwrap_or(Handle::NULL)
    }

    /// Turns a provider request into a CR handle and a connection-request event; on a PSP with
    /// `DAT_PSP_PROVIDER_FLAG`, also into a provider-created EP.
    fn deliver(self: &Arc<Self>, request: Arc<dyn ProviderRequest>) {
        let provider_ep = self.psp_flags == DAT_PSP_PROVIDER_FLAG;
        let local_ep = if provider_ep {
            match Endpoint::create_for_request(&self.ia, &request) {
                Ok((h, _)) => h,
                Err(e) => {
                    tracing::warn!(?e, "cannot create the provider EP of a connection request; rejecting it");
                    let _ = request.reject(&[]);
                    return;
                }
            }
        } else {
            self.reserved_ep.as_ref().map_or(Handle::NULL, |(h, _)| *h)
        };
        let cr = Arc::new(ConnectionRequest {
            ia: self.ia.clone(),
            sp_handle: self.handle(),
            conn_qual: self.conn_qual,
            remote_sockaddr: Box::new(crate::ia::to_sockaddr(request.remote_address())),
            request: request.clone(),
            local_ep,
            provider_ep,
        });
        let Ok(cr_handle) = handle::insert(cr) else {
            if provider_ep {
                let _ = crate::endpoint::free_tentative(local_ep);
            }
            let _ = request.reject(&[]);
            return;
        };
        self.ia.adopt(cr_handle);
        let number = if request.is_datagram() {
            crate::ib_ext::DAT_IB_UD_CONNECTION_REQUEST_EVENT
        } else {
            DAT_CONNECTION_REQUEST_EVENT
        };
        let ev = Event {
            number,
            evd: Handle::NULL,
            data: EventData::ConnectionRequest {
                sp: self.handle(),
                local_address: self.ia.address_ptr(),
                conn_qual: self.conn_qual,
                cr: cr_handle,
            },
        };
        if self.evd.post(ev).is_err() {
            let _ = reject(cr_handle, &[]);
        }
    }
}

fn cr_evd(h: Handle) -> DatResult<Arc<EventDispatcher>> {
    let evd = handle::get::<EventDispatcher>(h, DAT_INVALID_HANDLE_EVD_CR)?;
    if !evd.accepts(DAT_EVD_CR_FLAG) {
        return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_EVD_CR));
    }
    Ok(evd.arc())
}

/// Starts listening and registers the service point. `wrap` makes the PSP or RSP object.
fn listen<T: DatObject>(
    ia: &Arc<InterfaceAdapter>,
    conn_qual: u64,
    evd_handle: Handle,
    psp_flags: u32,
    reserved_ep: Option<(Handle, Arc<Endpoint>)>,
    wrap: fn(Arc<ServicePoint>) -> T,
) -> DatResult<Handle> {
    let evd = cr_evd(evd_handle)?;
    let sp = Arc::new(ServicePoint {
        ia: ia.clone(),
        conn_qual,
        evd,
        evd_handle,
        psp_flags,
        reserved_ep,
        listener: Mutex::new(None),
        handle: OnceLock::new(),
    });
    let listener = ia.device.listen(conn_qual, Arc::new(SpEvents(Arc::downgrade(&sp))))?;
    *sp.listener.lock() = Some(listener);
    let h = handle::insert(Arc::new(wrap(sp.clone())))?;
    let _ = sp.handle.set(h);
    sp.evd.users.fetch_add(1, Ordering::SeqCst);
    ia.service_points.lock().insert(conn_qual, h);
    ia.adopt(h);
    Ok(h)
}

/// `dat_psp_create`. With `DAT_PSP_PROVIDER_FLAG` every request comes with an EP the
/// provider creates (see [`Endpoint::create_for_request`]).
pub fn create_psp(ia: &Arc<InterfaceAdapter>, conn_qual: u64, evd: Handle, flags: u32) -> DatResult<Handle> {
    match flags {
        DAT_PSP_CONSUMER_FLAG | DAT_PSP_PROVIDER_FLAG => listen(ia, conn_qual, evd, flags, None, PublicServicePoint),
        _ => Err(DatError::invalid_arg(4)),
    }
}

/// `dat_psp_create_any`: a PSP on a free qualifier, which it returns.
pub fn create_psp_any(ia: &Arc<InterfaceAdapter>, evd: Handle, flags: u32) -> DatResult<(u64, Handle)> {
    cr_evd(evd)?;
    // The dynamic port range (49152-65535), so the qualifier also fits rdma_cm's 16-bit ports.
    // Start at a per-process offset so concurrent processes rarely collide.
    const FIRST: u64 = 49152;
    const COUNT: u64 = 65536 - FIRST;
    let start = std::process::id() as u64 * 7919 % COUNT;
    for i in 0..COUNT {
        let q = FIRST + (start + i) % COUNT;
        match create_psp(ia, q, evd, flags) {
            Ok(h) => {
                ia.counters.count(crate::counters::ia::PSP_CREATE_ANY);
                return Ok((q, h));
            }
            Err(e) if e.ty() == DAT_CONN_QUAL_IN_USE => continue,
            Err(e) => return Err(e),
        }
    }
    Err(DatError::new(DAT_CONN_QUAL_UNAVAILABLE, 0))
}

/// `dat_rsp_create`: the EP must be unconnected; it becomes RESERVED.
pub fn create_rsp(ia: &Arc<InterfaceAdapter>, conn_qual: u64, ep_handle: Handle, evd: Handle) -> DatResult<Handle> {
    let ep = handle::get::<Endpoint>(ep_handle, DAT_INVALID_HANDLE_EP)?;
    if !ep.transition(DAT_EP_STATE_UNCONNECTED, DAT_EP_STATE_RESERVED) {
        return Err(DatError::invalid_state(crate::endpoint::state_subtype(ep.state())));
    }
    listen(ia, conn_qual, evd, 0, Some((ep_handle, ep.arc())), ReservedServicePoint).inspect_err(|_| {
        ep.transition(DAT_EP_STATE_RESERVED, DAT_EP_STATE_UNCONNECTED);
    })
}

fn free_sp(sp: &ServicePoint, h: Handle) {
    sp.listener.lock().take();
    let mut sps = sp.ia.service_points.lock();
    if sps.get(&sp.conn_qual) == Some(&h) {
        sps.remove(&sp.conn_qual);
    }
    drop(sps);
    sp.evd.users.fetch_sub(1, Ordering::SeqCst);
    if let Some((_, ep)) = &sp.reserved_ep {
        ep.transition(DAT_EP_STATE_RESERVED, DAT_EP_STATE_UNCONNECTED);
    }
    sp.ia.disown(h);
}

/// `dat_psp_free`.
pub fn free_psp(h: Handle) -> DatResult<()> {
    let psp = handle::remove::<PublicServicePoint>(h).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_PSP))?;
    free_sp(&psp.0, h);
    Ok(())
}

/// `dat_rsp_free`.
pub fn free_rsp(h: Handle) -> DatResult<()> {
    let rsp = handle::remove::<ReservedServicePoint>(h).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_RSP))?;
    free_sp(&rsp.0, h);
    Ok(())
}

fn free_cr(h: Handle) -> DatResult<Arc<ConnectionRequest>> {
    let cr = handle::remove::<ConnectionRequest>(h).ok_or(DatError::invalid_handle(DAT_INVALID_HANDLE_CR))?;
    cr.ia.disown(h);
    Ok(cr)
}

/// Frees the request's provider-created EP (it reverts to the provider, dat_cr_reject(3)).
fn free_provider_ep(cr: &ConnectionRequest) {
    if cr.provider_ep {
        let _ = crate::endpoint::free_tentative(cr.local_ep);
    }
}

/// `dat_cr_accept`: `ep_handle` may be NULL only for a CR that names its EP (RSP, or a PSP with
/// provider-created EPs). A request with a provider-created EP accepted on another EP frees
/// the provider's one.
pub fn accept(cr_handle: Handle, ep_handle: Handle, private_data: &[u8]) -> DatResult<()> {
    let cr = handle::get::<ConnectionRequest>(cr_handle, DAT_INVALID_HANDLE_CR)?;
    let ep_h = if ep_handle.is_null() { cr.local_ep } else { ep_handle };
    let ep = handle::get::<Endpoint>(ep_h, DAT_INVALID_HANDLE_EP)?;
    if !Arc::ptr_eq(&ep.ia, &cr.ia) {
        return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_EP));
    }
    if ep_h != cr.local_ep && ep.state() == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING {
        // Another request's provider-created EP.
        return Err(DatError::invalid_state(DAT_INVALID_STATE_EP_TENTCONNPENDING));
    }
    ep.accept(&cr.request, private_data)?;
    let cr = free_cr(cr_handle)?;
    cr.ia.counters.count(crate::counters::ia::SP_CR_ACCEPTED);
    if ep_h != cr.local_ep {
        free_provider_ep(&cr);
    }
    Ok(())
}

/// `dat_cr_reject`: refuses the request; `private_data` (DAT 2.0; empty from DAT 1.2) goes to
/// the active side with its `DAT_CONNECTION_EVENT_PEER_REJECTED` where the transport carries it.
/// Private data longer than the IA's limit is `DAT_INVALID_PARAMETER|ARG2` and leaves the
/// request pending.
pub fn reject(cr_handle: Handle, private_data: &[u8]) -> DatResult<()> {
    let limit = handle::get::<ConnectionRequest>(cr_handle, DAT_INVALID_HANDLE_CR)?.ia.device.attr().max_private_data;
    if private_data.len() > limit {
        return Err(DatError::invalid_arg(2));
    }
    let cr = free_cr(cr_handle)?;
    cr.ia.counters.count(crate::counters::ia::SP_CR_REJECTED);
    free_provider_ep(&cr);
    if let Some((_, ep)) = handle::get::<ReservedServicePoint>(cr.sp_handle, DAT_INVALID_HANDLE_RSP)
        .ok()
        .and_then(|r| r.0.reserved_ep.clone())
    {
        ep.transition(DAT_EP_STATE_RESERVED, DAT_EP_STATE_UNCONNECTED);
    }
    cr.request.reject(private_data)
}

/// `dat_cr_handoff`: gives the request to the service point listening on `conn_qual`.
pub fn handoff(cr_handle: Handle, conn_qual: u64) -> DatResult<()> {
    let cr = handle::get::<ConnectionRequest>(cr_handle, DAT_INVALID_HANDLE_CR)?;
    let target = cr.ia.service_points.lock().get(&conn_qual).copied();
    let sp = target
        .and_then(|h| {
            handle::get::<PublicServicePoint>(h, 0)
                .map(|p| p.0.clone())
                .or_else(|_| handle::get::<ReservedServicePoint>(h, 0).map(|r| r.0.clone()))
                .ok()
        })
        .ok_or(DatError::invalid_arg(2))?;
    let cr = free_cr(cr_handle)?;
    free_provider_ep(&cr);
    sp.deliver(cr.request.clone());
    Ok(())
}
