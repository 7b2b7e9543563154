//! Interface adapters (IA): an opened provider device plus everything created under it.

use crate::codes::*;
use crate::counters::{self, IaCounters};
use crate::error::{DatError, DatResult};
use crate::evd::EventDispatcher;
use crate::event::{Event, EventData};
use crate::handle::{self, Handle, HandleType};
use crate::provider::{AsyncError, AsyncEvents, Device, Provider};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock, Weak};

/// `DAT_EVD_ASYNC_EXISTS`: the consumer says an async EVD exists already.
pub const EVD_ASYNC_EXISTS: Handle = Handle(1);

/// A DAT extension interface (DAT 2.0 `DAT_EXTENSION`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extension {
    /// The InfiniBand extensions of `dat_ib_extensions.h`.
    Ib,
}

pub struct InterfaceAdapter {
    pub name: String,
    pub provider_name: &'static str,
    pub device: Arc<dyn Device>,
    /// The IA address as a C `sockaddr`, at a stable address for `DAT_IA_ADDRESS_PTR`.
    address: Box<libc::sockaddr_storage>,
    handle: OnceLock<Handle>,
    async_evd: Mutex<Option<Arc<EventDispatcher>>>,
    /// Every live handle created under this IA, for abrupt close and in-use checks.
    children: Mutex<Vec<Handle>>,
    /// Listening service points by connection qualifier (for `dat_cr_handoff`).
    pub service_points: Mutex<HashMap<u64, Handle>>,
    /// LMR handles and spans by lmr_context (lkey), for RMR binds and LMR syncs.
    pub lmrs: crate::lmr::LmrTable,
    /// What the IB counters extension reports for this IA.
    pub counters: IaCounters,
}

handle::dat_object!(InterfaceAdapter, Ia);

/// The event number of the watermark events (SRQ low, EP soft high). The DAT headers name no
/// event of their own for them, only their reasons (`DAT_SRQ_LOW_WATERMARK_EVENT`,
/// `DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT`): they come as this asynchronous event, whose data names
/// the SRQ or EP and the reason.
pub const WATERMARK_EVENT: u32 = DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR;

/// Routes a provider's device errors to the IA's async EVD.
struct AsyncRouter(OnceLock<Weak<InterfaceAdapter>>);

impl AsyncEvents for AsyncRouter {
    fn async_error(&self, err: AsyncError) {
        if let AsyncError::SrqLimit { context } = err {
            // Every IA's device thread may read a verbs context's async events (librdmacm shares
            // one context per device in a process), so the SRQ's handle, not the reader, names
            // the IA to tell.
            if let Ok(srq) = crate::handle::get::<crate::srq::SharedReceiveQueue>(Handle(context), 0) {
                srq.ia.post_async(WATERMARK_EVENT, Handle(context), DAT_SRQ_LOW_WATERMARK_EVENT);
            }
            return;
        }
        let Some(ia) = self.0.get().and_then(Weak::upgrade) else { return };
        let (number, handle, reason) = match err {
            AsyncError::QpError { context } => (DAT_ASYNC_ERROR_EP_BROKEN, Handle(context), DAT_EP_TRANSFER_TO_ERROR),
            AsyncError::CqOverflow => (DAT_ASYNC_ERROR_EVD_OVERFLOW, ia.handle(), DAT_EVD_OVERFLOW_ERROR),
            // the IA's device or its port is gone: nothing the IA does works any more
            AsyncError::DeviceFatal | AsyncError::PortError => {
                (DAT_ASYNC_ERROR_IA_CATASTROPHIC, ia.handle(), DAT_IA_CATASTROPHIC_ERROR)
            }
            AsyncError::ProviderInternal => (DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR, ia.handle(), DAT_IA_OTHER_ERROR),
            AsyncError::SrqLimit { .. } => return, // routed above
        };
        ia.counters.count(counters::ia::ASYNC_ERROR);
        match err {
            AsyncError::QpError { .. } => ia.counters.count(counters::ia::ASYNC_QP_ERROR),
            AsyncError::CqOverflow => ia.counters.count(counters::ia::ASYNC_CQ_ERROR),
            _ => {}
        }
        ia.post_async(number, handle, reason);
    }
}

/// Converts a socket address to a C `sockaddr_storage`.
pub fn to_sockaddr(addr: SocketAddr) -> libc::sockaddr_storage {
    // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in, sin) };
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write(&mut ss as *mut _ as *mut libc::sockaddr_in6, sin6) };
        }
    }
    ss
}

/// Reads a C socket address (`DAT_IA_ADDRESS_PTR`); `None` if the family is not IPv4/IPv6.
///
/// # Safety
/// `p` must point to a readable `sockaddr` at least as large as its family's struct.
pub unsafe fn from_sockaddr(p: *const libc::sockaddr) -> Option<SocketAddr> {
    // SAFETY: the caller guarantees `p` points to a readable sockaddr.
    let family = unsafe { (*p).sa_family } as i32;
    match family {
        libc::AF_INET => {
            // SAFETY: family says this is a sockaddr_in; unaligned read tolerates any caller.
            let sin = unsafe { std::ptr::read_unaligned(p as *const libc::sockaddr_in) };
            let ip = std::net::Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes());
            Some(SocketAddr::from((ip, u16::from_be(sin.sin_port))))
        }
        libc::AF_INET6 => {
            // SAFETY: family says this is a sockaddr_in6.
            let sin6 = unsafe { std::ptr::read_unaligned(p as *const libc::sockaddr_in6) };
            let ip = std::net::Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::from((ip, u16::from_be(sin6.sin6_port))))
        }
        _ => None,
    }
}

impl InterfaceAdapter {
    /// Opens `ia_name` on `provider`. `async_evd` is the consumer's in/out async EVD handle:
    /// NULL asks for a new async EVD of `async_qlen` entries, `DAT_EVD_ASYNC_EXISTS` for none.
    pub fn open(
        provider: &Arc<dyn Provider>,
        ia_name: &str,
        params: &str,
        async_qlen: i32,
        async_evd: Handle,
    ) -> DatResult<(Handle, Arc<InterfaceAdapter>, Handle)> {
        if async_evd != Handle::NULL && async_evd != EVD_ASYNC_EXISTS {
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_EVD_ASYNC));
        }
        if async_evd == Handle::NULL && async_qlen <= 0 {
            return Err(DatError::invalid_arg(2));
        }
        counters::start_from_environment();
        let router = Arc::new(AsyncRouter(OnceLock::new()));
        let device = provider.open(ia_name, params, router.clone())?;
        let ia = Arc::new(InterfaceAdapter {
            name: ia_name.to_string(),
            provider_name: provider.name(),
            address: Box::new(to_sockaddr(device.address())),
            device,
            handle: OnceLock::new(),
            async_evd: Mutex::new(None),
            children: Mutex::new(Vec::new()),
            service_points: Mutex::new(HashMap::new()),
            lmrs: Default::default(),
            counters: IaCounters::default(),
        });
        let _ = router.0.set(Arc::downgrade(&ia));
        let h = handle::insert(ia.clone())?;
        let _ = ia.handle.set(h);
        let mut out_evd = async_evd;
        if async_evd == Handle::NULL {
            match EventDispatcher::create(&ia, async_qlen, None, DAT_EVD_ASYNC_FLAG) {
                Ok((eh, evd)) => {
                    *ia.async_evd.lock() = Some(evd);
                    out_evd = eh;
                }
                Err(e) => {
                    handle::remove::<InterfaceAdapter>(h);
                    return Err(e);
                }
            }
        }
        tracing::debug!(ia = ia_name, provider = provider.name(), "IA opened");
        Ok((h, ia, out_evd))
    }

    pub fn handle(&self) -> Handle {
        self.handle.get().copied().unwrap_or(Handle::NULL)
    }

    /// The DAT extension interface this IA offers (`dat_extension_op`) and its version, as the
    /// DAT 2.0 face advertises it in `DAT_IA_ATTR`: the IB extensions where the device carries
    /// any of them out (none on iWARP, as OFED's provider), see [`crate::ib_ext`].
    pub fn extension(&self) -> Option<(Extension, i32)> {
        let caps = self.device.attr().extensions;
        caps.any().then_some((Extension::Ib, DAT_IB_EXTENSION_VERSION as i32))
    }

    /// Pointer to the IA address, valid as long as the IA is open.
    pub fn address_ptr(&self) -> *const libc::sockaddr {
        &*self.address as *const libc::sockaddr_storage as *const libc::sockaddr
    }

    pub fn async_evd(&self) -> Option<Arc<EventDispatcher>> {
        self.async_evd.lock().clone()
    }

    /// Records a child handle.
    pub fn adopt(&self, h: Handle) {
        self.count_child(h, true);
        self.children.lock().push(h);
    }

    /// Forgets a child handle (it was freed).
    pub fn disown(&self, h: Handle) {
        self.count_child(h, false);
        let mut c = self.children.lock();
        if let Some(i) = c.iter().position(|&x| x == h) {
            c.swap_remove(i);
        }
    }

    /// Counts the creation (`created`) or the free of a child in the IA's counters: the
    /// `DCNT_IA_*_CREATE` / `*_FREE` counter of its type; a CR's creation is `DCNT_IA_SP_CR`.
    fn count_child(&self, h: Handle, created: bool) {
        let (create, free) = match h.held_type() {
            Some(HandleType::Pz) => (counters::ia::PZ_CREATE, counters::ia::PZ_FREE),
            Some(HandleType::Lmr) => (counters::ia::LMR_CREATE, counters::ia::LMR_FREE),
            Some(HandleType::Rmr) => (counters::ia::RMR_CREATE, counters::ia::RMR_FREE),
            Some(HandleType::Psp) => (counters::ia::PSP_CREATE, counters::ia::PSP_FREE),
            Some(HandleType::Rsp) => (counters::ia::RSP_CREATE, counters::ia::RSP_FREE),
            Some(HandleType::Evd) => (counters::ia::EVD_CREATE, counters::ia::EVD_FREE),
            Some(HandleType::Ep) => (counters::ia::EP_CREATE, counters::ia::EP_FREE),
            Some(HandleType::Srq) => (counters::ia::SRQ_CREATE, counters::ia::SRQ_FREE),
            Some(HandleType::Cr) if created => (counters::ia::SP_CR, 0),
            _ => return,
        };
        self.counters.count(if created { create } else { free });
    }

    pub fn children(&self) -> Vec<Handle> {
        self.children.lock().clone()
    }

    pub fn post_async(&self, number: u32, handle: Handle, reason: u32) {
        if let Some(evd) = self.async_evd() {
            let _ = evd.post(Event { number, evd: Handle::NULL, data: EventData::AsyncError { handle, reason } });
        } else {
            tracing::warn!(ia = %self.name, "async event {number:#x} with no async EVD");
        }
    }

    /// An EVD overflowed; tell the async EVD unless it is the one overflowing.
    pub fn report_overflow(&self, evd: Handle) {
        if let Some(a) = self.async_evd() {
            if a.handle() != evd {
                self.post_async(DAT_ASYNC_ERROR_EVD_OVERFLOW, evd, DAT_EVD_OVERFLOW_ERROR);
            }
        }
    }
}

/// `dat_ia_close`. Graceful fails with `DAT_INVALID_STATE_IA_IN_USE` while objects other than
/// the IA's own async EVD exist; abrupt frees them all first.
pub fn close(h: Handle, abrupt: bool) -> DatResult<()> {
    let ia = handle::get::<InterfaceAdapter>(h, DAT_INVALID_HANDLE_IA)?;
    let own_async = ia.async_evd().map(|e| e.handle());
    let others: Vec<Handle> = ia.children().into_iter().filter(|c| Some(*c) != own_async).collect();
    if !others.is_empty() {
        if !abrupt {
            tracing::debug!(ia = %ia.name, in_use = ?others.iter().map(|c| c.held_type()).collect::<Vec<_>>(), "dat_ia_close: objects still exist");
            return Err(DatError::invalid_state(DAT_INVALID_STATE_IA_IN_USE));
        }
        crate::teardown::free_all(&others);
    }
    if let Some(evd) = ia.async_evd.lock().take() {
        evd.release();
        handle::remove::<EventDispatcher>(evd.handle());
    }
    ia.children.lock().clear();
    handle::remove::<InterfaceAdapter>(h);
    tracing::debug!(ia = %ia.name, abrupt, "IA closed");
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An shm IA for a unit test (its connection qualifiers in a directory of this process).
    pub(crate) fn open_shm() -> (Handle, Arc<InterfaceAdapter>) {
        let dir = std::env::temp_dir().join(format!("dat-ia-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
        let shm = crate::registry::builtin_by_name("shm").expect("shm provider");
        let (h, ia, _) = InterfaceAdapter::open(&shm, "shm", "", 8, Handle::NULL).expect("open shm IA");
        (h, ia)
    }

    /// An asynchronous error a provider reports through the `AsyncEvents` it was opened with
    /// reaches that IA's async EVD only, as the event, handle and reason DAT names, and counts.
    #[test]
    fn a_device_error_reaches_the_async_evd_of_the_ia_it_was_reported_to() {
        let (h1, ia) = open_shm();
        let (h2, other) = open_shm();
        let router = AsyncRouter(OnceLock::new());
        let _ = router.0.set(Arc::downgrade(&ia));
        let _switch = crate::counters::SWITCH_TEST_LOCK.lock();
        crate::counters::set_counting(true);
        for (err, number, handle, reason) in [
            (AsyncError::PortError, DAT_ASYNC_ERROR_IA_CATASTROPHIC, h1, DAT_IA_CATASTROPHIC_ERROR),
            (AsyncError::DeviceFatal, DAT_ASYNC_ERROR_IA_CATASTROPHIC, h1, DAT_IA_CATASTROPHIC_ERROR),
            (AsyncError::CqOverflow, DAT_ASYNC_ERROR_EVD_OVERFLOW, h1, DAT_EVD_OVERFLOW_ERROR),
            (AsyncError::QpError { context: 77 }, DAT_ASYNC_ERROR_EP_BROKEN, Handle(77), DAT_EP_TRANSFER_TO_ERROR),
        ] {
            router.async_error(err);
            let ev = ia.async_evd().unwrap().dequeue().expect("an async event");
            assert_eq!(ev.number, number, "{err:?}");
            assert!(
                matches!(ev.data, EventData::AsyncError { handle: h, reason: r } if h == handle && r == reason),
                "{err:?}"
            );
            assert!(other.async_evd().unwrap().dequeue().is_err(), "{err:?} reached another IA");
        }
        crate::counters::set_counting(false);
        assert_eq!(ia.counters.get(crate::counters::ia::ASYNC_ERROR), 4);
        assert_eq!(ia.counters.get(crate::counters::ia::ASYNC_QP_ERROR), 1);
        assert_eq!(ia.counters.get(crate::counters::ia::ASYNC_CQ_ERROR), 1);
        close(h1, true).unwrap();
        close(h2, true).unwrap();
    }
}
