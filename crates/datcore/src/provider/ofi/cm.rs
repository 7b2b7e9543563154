//! Connection management: the IA's event queue (EQ) and the thread that reads it, passive
//! endpoints (PSP / RSP) and connection requests (CR).
//!
//! One CM thread per IA reads the EQ (`FI_WAIT_FD`; it sleeps in `epoll_wait` on the EQ's fd,
//! after `fi_trywait`, and an eventfd that stops it or announces an earlier deadline) and routes
//! each event by the fid it names: `FI_CONNREQ` to the listener, `FI_CONNECTED`,
//! `FI_SHUTDOWN` and errors (`fi_eq_readerr`) to the endpoint. It also ends connects whose
//! timeout passed, and looks at the CQs nobody polls (see [`OfiCq::look`]). Nothing of the
//! data path runs here.

use super::super::epoll::EpollSet;
use super::super::eventfd::EventFd;
use super::super::lookup::Reg;
use super::super::{ConnectionRequest, Listener, ListenerEvents};
use super::cq::OfiCq;
use super::ep::OfiQp;
use super::{fail, sys, DevInner};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The first bytes of a reject's private data: a consumer's reject, not a missing listener.
pub(super) const REJECT_MARKER: &[u8] = b"DATREJ";

pub(super) static CRS: Reg<OfiCr> = Reg::new();

/// Who an EQ event's fid belongs to.
pub(crate) enum Owner {
    Qp(Weak<OfiQp>),
    Listener(Weak<OfiListener>),
}

/// The IA's event queue and what its thread needs.
pub(crate) struct Cm {
    pub eq: *mut sys::fid_eq,
    wake: EventFd,
    sleep_set: EpollSet,
    stop: AtomicBool,
    owners: Mutex<HashMap<usize, Owner>>,
    deadlines: Mutex<Vec<(Instant, Weak<OfiQp>)>>,
    /// The IA's CQs, looked at every [`look_every`].
    cqs: Mutex<Vec<Weak<OfiCq>>>,
}

/// How often the CM thread looks at CQs nobody polls: `DAT_OFI_LOOK_US` microseconds,
/// default 1000; 0 = never (then only consumers' calls move data).
fn look_every() -> Option<Duration> {
    let us = std::env::var("DAT_OFI_LOOK_US").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1000u64);
    (us > 0).then(|| Duration::from_micros(us))
}

impl Cm {
    /// Opens the EQ; the thread sleeps on its fd, and on `more` (the RDM control CQ's wait fd
    /// and its kick), those whose bit is set in `more_edges` edge-triggered.
    pub fn open(lib: &sys::Lib, fabric: *mut sys::fid_fabric, more: &[libc::c_int], more_edges: u32) -> DatResult<Cm> {
        let mut attr = sys::fi_eq_attr {
            size: 256,
            flags: 0,
            wait_obj: sys::FI_WAIT_FD,
            signaling_vector: 0,
            wait_set: std::ptr::null_mut(),
        };
        let mut eq = std::ptr::null_mut();
        // SAFETY: a live fabric and attributes.
        let r = unsafe { ((*(*fabric).ops).eq_open)(fabric, &mut attr, &mut eq, std::ptr::null_mut()) };
        if r != 0 {
            return Err(fail(lib, "fi_eq_open", r as isize, DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        let mut fd: libc::c_int = -1;
        // SAFETY: a live EQ of FI_WAIT_FD.
        let r = unsafe { sys::FiOps::control(&eq, sys::FI_GETWAIT, (&mut fd as *mut libc::c_int).cast()) };
        let made = EventFd::new().ok().and_then(|w| {
            let fds: Vec<libc::c_int> = [fd, w.fd()].iter().chain(more).copied().collect();
            EpollSet::with_edges(&fds, more_edges << 2).ok().map(|s| (w, s))
        });
        let (wake, sleep_set) = match (r, made) {
            (0, Some(m)) => m,
            _ => {
                // SAFETY: ours, closed once.
                unsafe { sys::FiOps::close(&eq) };
                return Err(fail(
                    lib,
                    "fi_control(FI_GETWAIT) of the EQ",
                    r as isize,
                    DatError::insufficient(DAT_RESOURCE_MEMORY),
                ));
            }
        };
        Ok(Cm {
            eq,
            wake,
            sleep_set,
            stop: AtomicBool::new(false),
            owners: Mutex::new(HashMap::new()),
            deadlines: Mutex::new(Vec::new()),
            cqs: Mutex::new(Vec::new()),
        })
    }

    /// Closes the EQ.
    ///
    /// # Safety
    /// Once, after every endpoint bound to it is closed and the thread stopped.
    pub unsafe fn close(&self) {
        // SAFETY: per the contract.
        unsafe { sys::FiOps::close(&self.eq) };
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.ring();
    }

    pub fn register(&self, fid: usize, owner: Owner) {
        self.owners.lock().insert(fid, owner);
    }

    pub fn unregister(&self, fid: usize) {
        self.owners.lock().remove(&fid);
    }

    /// Looks at `cq` from now on (see [`OfiCq::look`]).
    pub fn watch(&self, cq: &Arc<OfiCq>) {
        let mut cqs = self.cqs.lock();
        cqs.retain(|w| w.strong_count() > 0);
        cqs.push(Arc::downgrade(cq));
        drop(cqs);
        self.wake.ring();
    }

    /// One look at every CQ.
    fn look(&self) {
        let cqs: Vec<Arc<OfiCq>> = self.cqs.lock().iter().filter_map(Weak::upgrade).collect();
        for cq in &cqs {
            cq.look();
        }
    }

    /// Whether any CQ is looked at.
    fn watching(&self) -> bool {
        let mut cqs = self.cqs.lock();
        cqs.retain(|w| w.strong_count() > 0);
        !cqs.is_empty()
    }

    /// Ends `qp`'s connect `after` from now if it is still connecting then.
    pub fn deadline(&self, after: Duration, qp: Weak<OfiQp>) {
        self.deadlines.lock().push((Instant::now() + after, qp));
        self.wake.ring();
    }

    /// Runs the deadlines that passed; returns the time to the next one.
    fn run_deadlines(&self) -> Option<Duration> {
        let now = Instant::now();
        let mut due = Vec::new();
        let next = {
            let mut d = self.deadlines.lock();
            d.retain(|(t, q)| {
                if *t <= now {
                    due.push(q.clone());
                    false
                } else {
                    q.strong_count() > 0
                }
            });
            d.iter().map(|(t, _)| *t - now).min()
        };
        for q in due.iter().filter_map(Weak::upgrade) {
            q.on_timeout();
        }
        next
    }
}

/// Starts the IA's CM thread.
pub(super) fn start(dev: &Arc<DevInner>) -> DatResult<JoinHandle<()>> {
    let d = dev.clone();
    std::thread::Builder::new().name("dat-ofi-cm".into()).spawn(move || run(&d)).map_err(|e| {
        tracing::warn!("ofi: cannot start the CM thread: {e}");
        DatError::insufficient(DAT_RESOURCE_MEMORY)
    })
}

/// Room for an event: a CM entry and the largest private data.
#[repr(C, align(8))]
struct EventBuf([u8; 512]);

fn run(d: &Arc<DevInner>) {
    let cm = &d.cm;
    let mut buf = EventBuf([0; 512]);
    let every = look_every();
    let mut last_look = Instant::now();
    while !cm.stop.load(Ordering::SeqCst) {
        loop {
            let mut ev = 0u32;
            // SAFETY: a live EQ; `buf` has room for a CM entry and its data.
            let r = unsafe { ((*(*cm.eq).ops).read)(cm.eq, &mut ev, buf.0.as_mut_ptr().cast(), buf.0.len(), 0) };
            if r == -(sys::FI_EAVAIL as isize) {
                read_error(d);
                continue;
            }
            if r < 0 {
                if r != -(sys::FI_EAGAIN as isize) {
                    tracing::warn!("ofi: fi_eq_read failed: {}", sys::strerror(d.lib, r));
                }
                break;
            }
            if let Err(p) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| event(d, ev, &buf.0[..r as usize])))
            {
                tracing::error!("ofi: CM event handler panicked: {p:?}");
                d.async_events.async_error(super::super::AsyncError::ProviderInternal);
            }
        }
        let held = d.lifecycle.lock();
        let mut next = cm.run_deadlines();
        if let Some(r) = &d.rdm {
            // A control CQ without a wait fd is read every look (1 ms at most).
            let beat = r.progress(d);
            let beat = if r.cq_fd.is_some() { beat } else { beat.min(every.unwrap_or(Duration::from_millis(1))) };
            next = Some(next.map_or(beat, |n| n.min(beat)));
        }
        if let Some(every) = every {
            if last_look.elapsed() >= every {
                cm.look();
                last_look = Instant::now();
            }
            if cm.watching() {
                let to_look = every.saturating_sub(last_look.elapsed());
                next = Some(next.map_or(to_look, |n| n.min(to_look)));
            }
        }
        drop(held);
        let mut fid = cm.eq.cast::<sys::fid>();
        // SAFETY: a live fabric and EQ of it.
        if unsafe { ((*(*d.fabric).ops).trywait)(d.fabric, &mut fid, 1) } != 0 {
            continue;
        }
        // The RDM control CQ was read empty just now (no fi_trywait on it: see OfiCq's
        // trywait); its fd wakes us for what arrives after.
        let woke = cm.sleep_set.wait(next);
        if woke.unwrap_or(0) & 2 != 0 {
            cm.wake.clear();
        }
    }
}

fn owner(d: &DevInner, fid: sys::fid_t) -> Option<OwnerRef> {
    match d.cm.owners.lock().get(&(fid as usize))? {
        Owner::Qp(w) => w.upgrade().map(OwnerRef::Qp),
        Owner::Listener(w) => w.upgrade().map(OwnerRef::Listener),
    }
}

enum OwnerRef {
    Qp(Arc<OfiQp>),
    Listener(Arc<OfiListener>),
}

/// One EQ event of `data.len()` bytes.
fn event(d: &Arc<DevInner>, ev: u32, data: &[u8]) {
    let head = std::mem::size_of::<sys::fi_eq_cm_entry>();
    if data.len() < head {
        return;
    }
    // SAFETY: the EQ wrote a CM entry at the start of the (aligned) buffer.
    let entry = unsafe { std::ptr::read(data.as_ptr().cast::<sys::fi_eq_cm_entry>()) };
    let private = &data[head..];
    tracing::debug!(ev, len = private.len(), "ofi: EQ event");
    match (ev, owner(d, entry.fid)) {
        (sys::FI_CONNREQ, Some(OwnerRef::Listener(l))) => l.request(entry.info, private),
        (sys::FI_CONNREQ, _) => {
            // SAFETY: the event's info is ours to free; no listener any more.
            unsafe { (d.lib.fi_freeinfo)(entry.info) };
        }
        (sys::FI_CONNECTED, Some(OwnerRef::Qp(q))) => q.on_connected(private),
        (sys::FI_SHUTDOWN, Some(OwnerRef::Qp(q))) => q.on_shutdown(),
        _ => {
            if !entry.info.is_null() {
                // SAFETY: an event's info is the reader's to free.
                unsafe { (d.lib.fi_freeinfo)(entry.info) };
            }
        }
    }
}

/// One error entry of the EQ.
fn read_error(d: &Arc<DevInner>) {
    // SAFETY: plain old data.
    let mut e: sys::fi_eq_err_entry = unsafe { std::mem::zeroed() };
    // SAFETY: a live EQ and entry.
    let r = unsafe { ((*(*d.cm.eq).ops).readerr)(d.cm.eq, &mut e, 0) };
    if r <= 0 {
        return;
    }
    let data: Vec<u8> = if e.err_data.is_null() || e.err_data_size == 0 {
        Vec::new()
    } else {
        // SAFETY: err_data holds err_data_size bytes until the next read of the EQ.
        unsafe { std::slice::from_raw_parts(e.err_data.cast::<u8>(), e.err_data_size) }.to_vec()
    };
    tracing::debug!(err = e.err, prov_errno = e.prov_errno, "ofi: EQ error: {}", sys::strerror(d.lib, e.err as isize));
    if let Some(OwnerRef::Qp(q)) = owner(d, e.fid) {
        q.on_error(e.err, &data);
    }
}

/// A passive endpoint listening on the IA's address, port = connection qualifier.
pub struct OfiListener {
    dev: Arc<DevInner>,
    pep: *mut sys::fid_pep,
    port: u64,
    events: Arc<dyn ListenerEvents>,
}

// SAFETY: the passive endpoint belongs to a FI_THREAD_SAFE fabric; closed once, in Drop.
unsafe impl Send for OfiListener {}
// SAFETY: as above.
unsafe impl Sync for OfiListener {}

impl OfiListener {
    pub fn listen(dev: &Arc<DevInner>, port: u64, events: Arc<dyn ListenerEvents>) -> DatResult<Arc<OfiListener>> {
        let Ok(p16) = u16::try_from(port) else {
            tracing::warn!("ofi: connection qualifier {port} does not fit a TCP port (16 bits)");
            return Err(DatError::invalid_arg(2));
        };
        let lib = dev.lib;
        // SAFETY: the IA's live info; the duplicate is freed below.
        let info = unsafe { (lib.fi_dupinfo)(dev.info) };
        if info.is_null() {
            return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
        }
        let ss = crate::ia::to_sockaddr(SocketAddr::new(dev.addr.ip(), p16));
        let len = if dev.addr.is_ipv4() {
            std::mem::size_of::<libc::sockaddr_in>()
        } else {
            std::mem::size_of::<libc::sockaddr_in6>()
        };
        // SAFETY: the duplicate's src_addr is malloc'd and freed by fi_freeinfo: replaced by a
        // malloc'd copy of our address.
        let mut pep = std::ptr::null_mut();
        let r = unsafe {
            let a = libc::malloc(len);
            if a.is_null() {
                (lib.fi_freeinfo)(info);
                return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
            }
            std::ptr::copy_nonoverlapping((&ss as *const libc::sockaddr_storage).cast::<u8>(), a.cast::<u8>(), len);
            libc::free((*info).src_addr);
            (*info).src_addr = a;
            (*info).src_addrlen = len;
            let r = ((*(*dev.fabric).ops).passive_ep)(dev.fabric, info, &mut pep, std::ptr::null_mut());
            (lib.fi_freeinfo)(info);
            r
        };
        if r == -libc::EADDRINUSE {
            return Err(DatError::new(DAT_CONN_QUAL_IN_USE, 0));
        }
        if r != 0 {
            return Err(fail(lib, "fi_passive_ep", r as isize, DatError::insufficient(DAT_RESOURCE_TEP)));
        }
        // SAFETY: a live passive endpoint and EQ.
        let r = unsafe {
            let r = sys::FiOps::bind(&pep, dev.cm.eq.cast(), 0);
            if r == 0 {
                ((*(*pep).cm).listen)(pep)
            } else {
                r
            }
        };
        if r != 0 {
            // SAFETY: ours, closed once.
            unsafe { sys::FiOps::close(&pep) };
            if r == -libc::EADDRINUSE {
                return Err(DatError::new(DAT_CONN_QUAL_IN_USE, 0));
            }
            return Err(fail(lib, "fi_listen", r as isize, DatError::insufficient(DAT_RESOURCE_TEP)));
        }
        let l = Arc::new(OfiListener { dev: dev.clone(), pep, port, events });
        dev.cm.register(pep as usize, Owner::Listener(Arc::downgrade(&l)));
        Ok(l)
    }

    /// An `FI_CONNREQ` on this listener.
    fn request(self: &Arc<Self>, info: *mut sys::fi_info, private: &[u8]) {
        // SAFETY: the request's live info; its dest_addr is the peer's.
        let remote = unsafe {
            let p = (*info).dest_addr;
            if p.is_null() {
                None
            } else {
                crate::ia::from_sockaddr(p as *const libc::sockaddr)
            }
        }
        .unwrap_or_else(|| SocketAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into(), 0));
        let cr = Arc::new(OfiCr {
            listener: self.clone(),
            info: Mutex::new(Some(Info(info, self.dev.lib))),
            private_data: private.to_vec(),
            remote,
        });
        CRS.insert(&cr);
        self.events.connect_request(cr);
    }
}

impl Listener for OfiListener {
    fn port(&self) -> u64 {
        self.port
    }
}

impl Drop for OfiListener {
    fn drop(&mut self) {
        self.dev.cm.unregister(self.pep as usize);
        // SAFETY: ours, closed once.
        unsafe { sys::FiOps::close(&self.pep) };
    }
}

/// A connection request's info, freed when dropped.
pub(super) struct Info(pub *mut sys::fi_info, &'static sys::Lib);

impl Drop for Info {
    fn drop(&mut self) {
        // SAFETY: the request's info, freed once.
        unsafe { (self.1.fi_freeinfo)(self.0) };
    }
}

// SAFETY: the info is plain memory owned by whoever holds this.
unsafe impl Send for Info {}

pub struct OfiCr {
    listener: Arc<OfiListener>,
    /// Taken by an accept or a reject.
    info: Mutex<Option<Info>>,
    private_data: Vec<u8>,
    remote: SocketAddr,
}

impl OfiCr {
    pub(super) fn take_info(&self) -> Option<Info> {
        self.info.lock().take()
    }

    fn refuse(&self, info: Info, private_data: &[u8]) -> DatResult<()> {
        let mut data = REJECT_MARKER.to_vec();
        data.extend_from_slice(private_data);
        let pep = self.listener.pep;
        // SAFETY: the live listener and the request's handle.
        let r = unsafe { ((*(*pep).cm).reject)(pep, (*info.0).handle, data.as_ptr().cast(), data.len()) };
        if r != 0 {
            return Err(fail(self.listener.dev.lib, "fi_reject", r as isize, DatError::invalid_state(0)));
        }
        Ok(())
    }
}

impl Drop for OfiCr {
    fn drop(&mut self) {
        if let Some(info) = self.info.get_mut().take() {
            let _ = self.refuse(info, &[]);
        }
    }
}

impl ConnectionRequest for OfiCr {
    fn private_data(&self) -> &[u8] {
        &self.private_data
    }

    fn remote_address(&self) -> SocketAddr {
        self.remote
    }

    fn port(&self) -> u64 {
        self.listener.port
    }

    fn reject(&self, private_data: &[u8]) -> DatResult<()> {
        if private_data.len() + REJECT_MARKER.len() > self.listener.dev.attr.max_private_data + REJECT_MARKER.len() {
            return Err(DatError::invalid_arg(2));
        }
        let info = self.take_info().ok_or(DatError::invalid_state(0))?;
        self.refuse(info, private_data)
    }
}
