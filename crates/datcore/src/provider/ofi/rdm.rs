//! DAT's connections over `FI_EP_RDM` endpoints (see docs/ofi.md, "Connections over
//! reliable-datagram endpoints").
//!
//! Each IA has an address vector (AV), a control CQ (`FI_WAIT_FD`, read by the CM thread) and
//! a control endpoint; each PSP / RSP is a control endpoint at the address its connection
//! qualifier names ([`psp_addr`]). A DAT EP is an RDM endpoint of its own, bound to the AV and to
//! its EVDs' CQs, whose posts name the peer's endpoint (an AV entry). The connection messages
//! ([`Msg`]) go between control endpoints only, so no data endpoint ever receives anything but
//! the consumer's messages: a request to the PSP, then accept / reject, ready-to-use,
//! disconnect and heartbeats, each naming the receiver's connection by a token. Nothing here
//! runs on the data path.

use super::super::{ConnEvent, ConnectionRequest, Listener, ListenerEvents};
use super::cm::REJECT_MARKER;
use super::ctl_entries::CtlEntries;
use super::ep::OfiQp;
use super::mr::Region;
use super::retries::{Retries, Tried, Waiting};
use super::shm_psp;
use super::{fail, sys, DevInner};
use crate::codes::*;
use crate::error::{DatError, DatResult};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::super::lookup::Reg;

/// Room for one connection message: a header, two addresses and the private data.
const CTL_SIZE: usize = 512;
/// Receives each control endpoint keeps posted.
const CTL_RECVS: usize = 32;
/// Longest endpoint address we carry.
const MAX_ADDR: usize = 128;
const MAGIC: u32 = 0x4441_5443;
const HEAD: usize = 32;

pub(super) static RCRS: Reg<RdmCr> = Reg::new();

/// What a connection message says.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
enum Kind {
    /// Active to the PSP: a connection request (sender's control and data addresses, data).
    Request = 1,
    /// Passive to active: accepted (the passive data endpoint's address, data).
    Accept,
    /// Passive to active: rejected (flag: by the consumer, with its data).
    Reject,
    /// Active to passive: the accept arrived, the connection is established.
    Ready,
    /// Either way: the connection ends.
    Disconnect,
    /// Either way, every beat: still here.
    Beat,
    /// Which region is under this key (u32 in the data)?
    AskBase,
    /// This one (key u32, start u64, length u64, remote access u8 (0: unknown key)).
    TellBase,
}

/// One connection message. Layout (little-endian): magic u32, kind u8, flag u8, data length
/// u16, control address length u16, data address length u16, 4 bytes zero, receiver's token
/// u64, sender's token u64; then the two addresses and the private data.
struct Msg<'a> {
    kind: Kind,
    flag: bool,
    to: u64,
    from: u64,
    cm: &'a [u8],
    data: &'a [u8],
    pd: &'a [u8],
}

impl<'a> Msg<'a> {
    fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(HEAD + self.cm.len() + self.data.len() + self.pd.len());
        v.extend_from_slice(&MAGIC.to_le_bytes());
        v.push(self.kind as u8);
        v.push(self.flag as u8);
        for n in [self.pd.len(), self.cm.len(), self.data.len()] {
            v.extend_from_slice(&(n as u16).to_le_bytes());
        }
        v.extend_from_slice(&[0; 4]);
        v.extend_from_slice(&self.to.to_le_bytes());
        v.extend_from_slice(&self.from.to_le_bytes());
        v.extend_from_slice(self.cm);
        v.extend_from_slice(self.data);
        v.extend_from_slice(self.pd);
        v
    }

    fn decode(b: &'a [u8]) -> Option<Msg<'a>> {
        if b.len() < HEAD || b[0..4] != MAGIC.to_le_bytes() {
            return None;
        }
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]) as usize;
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        let kind = match b[4] {
            1 => Kind::Request,
            2 => Kind::Accept,
            3 => Kind::Reject,
            4 => Kind::Ready,
            5 => Kind::Disconnect,
            6 => Kind::Beat,
            7 => Kind::AskBase,
            8 => Kind::TellBase,
            _ => return None,
        };
        let (pd, cm, data) = (u16_at(6), u16_at(8), u16_at(10));
        let rest = b.get(HEAD..HEAD + cm + data + pd)?;
        Some(Msg {
            kind,
            flag: b[5] != 0,
            to: u64_at(16),
            from: u64_at(24),
            cm: &rest[..cm],
            data: &rest[cm..cm + data],
            pd: &rest[cm + data..],
        })
    }
}

/// The address of the PSP for `port` on the IA at `ip`, as the AV takes it: the IP address
/// with the port for sockaddr formats; for `FI_ADDR_STR` (shm) the name the qualifier's holder
/// gave its endpoint ([`shm_psp`]), None where nobody holds it.
pub(super) fn psp_addr(fmt: u32, ip: std::net::IpAddr, port: u16) -> Option<Vec<u8>> {
    if fmt == sys::FI_ADDR_STR {
        return shm_psp::owner(port);
    }
    let ss = crate::ia::to_sockaddr(SocketAddr::new(ip, port));
    let len =
        if ip.is_ipv4() { std::mem::size_of::<libc::sockaddr_in>() } else { std::mem::size_of::<libc::sockaddr_in6>() };
    // SAFETY: a sockaddr_storage has at least `len` bytes.
    Some(unsafe { std::slice::from_raw_parts((&ss as *const libc::sockaddr_storage).cast::<u8>(), len) }.to_vec())
}

/// An endpoint's own address (`fi_getname`).
///
/// # Safety
/// `ep` is a live enabled endpoint.
pub(super) unsafe fn name_of(lib: &sys::Lib, ep: *mut sys::fid_ep) -> DatResult<Vec<u8>> {
    let mut buf = [0u8; MAX_ADDR];
    let mut len = buf.len();
    // SAFETY: per the contract; `buf` has room for `len` bytes.
    let r = unsafe { ((*(*ep).cm).getname)(ep.cast(), buf.as_mut_ptr().cast(), &mut len) };
    if r != 0 || len > MAX_ADDR {
        return Err(fail(lib, "fi_getname", r as isize, DatError::insufficient(DAT_RESOURCE_TEP)));
    }
    Ok(buf[..len].to_vec())
}

/// An address vector, closed when dropped.
///
/// Every endpoint has its own: shm keeps the peers an AV names (and the senders it heard from)
/// as pointers to their regions, and walks them when an endpoint bound to that AV is enabled;
/// an endpoint of this process closed since would be a dangling pointer then. An AV that
/// serves one endpoint is walked once, at that endpoint's enable.
pub(crate) struct Av {
    lib: &'static sys::Lib,
    pub av: *mut sys::fid_av,
}

// SAFETY: an AV of a FI_THREAD_SAFE domain; closed once, in Drop.
unsafe impl Send for Av {}
// SAFETY: as above.
unsafe impl Sync for Av {}

impl Av {
    pub fn open(lib: &'static sys::Lib, domain: *mut sys::fid_domain) -> DatResult<Av> {
        let mut attr = sys::fi_av_attr {
            type_: sys::FI_AV_UNSPEC,
            rx_ctx_bits: 0,
            count: 16,
            ep_per_node: 0,
            name: std::ptr::null(),
            map_addr: std::ptr::null_mut(),
            flags: 0,
        };
        let mut av = std::ptr::null_mut();
        // SAFETY: a live domain and attributes.
        let r = unsafe { ((*(*domain).ops).av_open)(domain, &mut attr, &mut av, std::ptr::null_mut()) };
        if r != 0 {
            return Err(fail(lib, "fi_av_open", r as isize, DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        Ok(Av { lib, av })
    }

    /// Inserts `addr`; returns its entry.
    pub fn insert(&self, addr: &[u8]) -> DatResult<u64> {
        let mut fa = sys::FI_ADDR_UNSPEC;
        // SAFETY: a live AV; `addr` is one address of the AV's format.
        let r =
            unsafe { ((*(*self.av).ops).insert)(self.av, addr.as_ptr().cast(), 1, &mut fa, 0, std::ptr::null_mut()) };
        if r != 1 {
            return Err(fail(
                self.lib,
                "fi_av_insert",
                r as isize,
                DatError::new(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNREACHABLE),
            ));
        }
        Ok(fa)
    }

    pub fn remove(&self, mut fa: u64) {
        // SAFETY: a live AV and an entry of it.
        unsafe { ((*(*self.av).ops).remove)(self.av, &mut fa, 1, 0) };
    }
}

/// A receive counter of a data endpoint (`FI_RECV`), closed when dropped: how many messages
/// have arrived, whether or not the consumer polled them yet.
pub(crate) struct Counter {
    pub cntr: *mut sys::fid_cntr,
}

// SAFETY: a counter of a FI_THREAD_SAFE domain; closed once, in Drop.
unsafe impl Send for Counter {}
// SAFETY: as above.
unsafe impl Sync for Counter {}

impl Counter {
    pub fn open(lib: &'static sys::Lib, domain: *mut sys::fid_domain) -> DatResult<Counter> {
        let mut attr =
            sys::fi_cntr_attr { events: 0, wait_obj: sys::FI_WAIT_NONE, wait_set: std::ptr::null_mut(), flags: 0 };
        let mut cntr = std::ptr::null_mut();
        // SAFETY: a live domain and attributes.
        let r = unsafe { ((*(*domain).ops).cntr_open)(domain, &mut attr, &mut cntr, std::ptr::null_mut()) };
        if r != 0 {
            return Err(fail(lib, "fi_cntr_open", r as isize, DatError::insufficient(DAT_RESOURCE_MEMORY)));
        }
        Ok(Counter { cntr })
    }

    /// `fi_cntr_read` (which drives the progress of the endpoint it counts for).
    pub fn read(&self) -> u64 {
        // SAFETY: a live counter.
        unsafe { ((*(*self.cntr).ops).read)(self.cntr) }
    }

    /// `fi_cntr_readerr`.
    pub fn read_errors(&self) -> u64 {
        // SAFETY: a live counter.
        unsafe { ((*(*self.cntr).ops).readerr)(self.cntr) }
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        // SAFETY: ours, closed once, after the endpoint bound to it.
        unsafe { sys::FiOps::close(&self.cntr) };
    }
}

impl Drop for Av {
    fn drop(&mut self) {
        // SAFETY: ours, closed once, after the endpoint bound to it.
        unsafe { sys::FiOps::close(&self.av) };
    }
}

/// An RDM endpoint carrying connection messages, with its receives posted.
pub(crate) struct CtlEp {
    lib: &'static sys::Lib,
    ep: *mut sys::fid_ep,
    bufs: *mut u8,
    name: Vec<u8>,
    /// Its AV where it has one of its own (a listener's), closed after it.
    _own_av: Option<Av>,
}

// SAFETY: the endpoint belongs to a FI_THREAD_SAFE domain; its buffers are written by
// libfabric and read by the CM thread only; closed once, in Drop.
unsafe impl Send for CtlEp {}
// SAFETY: as above.
unsafe impl Sync for CtlEp {}

impl CtlEp {
    /// Opens one from the IA's info, at `src` (None: the info's own address).
    fn open(
        lib: &'static sys::Lib,
        domain: *mut sys::fid_domain,
        info: *const sys::fi_info,
        src: Option<&[u8]>,
        av: &Av,
        own_av: Option<Av>,
        cq: *mut sys::fid_cq,
    ) -> DatResult<CtlEp> {
        let av = own_av.as_ref().map_or(av.av, |a| a.av);
        let ep = open_endpoint(lib, domain, info, src)?;
        let bufs = Box::into_raw(vec![0u8; CTL_SIZE * CTL_RECVS].into_boxed_slice()).cast::<u8>();
        let mut c = CtlEp { lib, ep, bufs, name: Vec::new(), _own_av: own_av };
        // SAFETY: live endpoint, AV and CQ of one domain.
        let r = unsafe {
            let mut r = sys::FiOps::bind(&ep, av.cast(), 0);
            if r == 0 {
                r = sys::FiOps::bind(&ep, cq.cast(), sys::FI_TRANSMIT | sys::FI_RECV);
            }
            if r == 0 {
                r = sys::FiOps::control(&ep, sys::FI_ENABLE, std::ptr::null_mut());
            }
            r
        };
        if r != 0 {
            // shm: "shm file in use" (EBUSY).
            let e = if r == -libc::EADDRINUSE || r == -libc::EBUSY {
                DatError::new(DAT_CONN_QUAL_IN_USE, 0)
            } else {
                fail(lib, "enabling a control endpoint", r as isize, DatError::insufficient(DAT_RESOURCE_TEP))
            };
            return Err(e);
        }
        for i in 0..CTL_RECVS {
            let r = c.repost(c.buf(i));
            if r != 0 {
                return Err(fail(lib, "posting a control receive", r, DatError::insufficient(DAT_RESOURCE_TEP)));
            }
        }
        // SAFETY: a live enabled endpoint.
        c.name = unsafe { name_of(lib, ep)? };
        Ok(c)
    }

    fn buf(&self, i: usize) -> *mut u8 {
        self.bufs.wrapping_add(i * CTL_SIZE)
    }

    /// Whether `p` is one of this endpoint's receive buffers.
    fn owns(&self, p: *mut c_void) -> bool {
        let (p, base) = (p as usize, self.bufs as usize);
        p >= base && p < base + CTL_SIZE * CTL_RECVS && (p - base) % CTL_SIZE == 0
    }

    /// Posts receive buffer `b` (again).
    fn repost(&self, b: *mut u8) -> isize {
        // SAFETY: a live endpoint; the buffer is ours until its completion; the context is it.
        unsafe {
            ((*(*self.ep).msg).recv)(self.ep, b.cast(), CTL_SIZE, std::ptr::null_mut(), sys::FI_ADDR_UNSPEC, b.cast())
        }
    }
}

impl Drop for CtlEp {
    fn drop(&mut self) {
        // SAFETY: ours, closed once (which drops its posted receives); then the buffers go.
        unsafe {
            sys::FiOps::close(&self.ep);
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(self.bufs, CTL_SIZE * CTL_RECVS)));
        }
    }
}

/// Opens an RDM endpoint from a duplicate of `info`, at `src` where given.
pub(super) fn open_endpoint(
    lib: &'static sys::Lib,
    domain: *mut sys::fid_domain,
    info: *const sys::fi_info,
    src: Option<&[u8]>,
) -> DatResult<*mut sys::fid_ep> {
    // SAFETY: a live info; the duplicate is freed below.
    let dup = unsafe { (lib.fi_dupinfo)(info) };
    if dup.is_null() {
        return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
    }
    // shm: a name of our own where none is given (`super::shm_names`).
    // SAFETY: a live info.
    let named = (src.is_none() && unsafe { (*info).addr_format } == sys::FI_ADDR_STR)
        .then(|| [super::shm_names::unique("ep").as_bytes(), b"\0"].concat());
    if let Some(a) = src.or(named.as_deref()) {
        // SAFETY: the duplicate's src_addr is malloc'd and freed by fi_freeinfo: replaced by a
        // malloc'd copy of `a`.
        unsafe {
            let p = libc::malloc(a.len());
            if p.is_null() {
                (lib.fi_freeinfo)(dup);
                return Err(DatError::insufficient(DAT_RESOURCE_MEMORY));
            }
            std::ptr::copy_nonoverlapping(a.as_ptr(), p.cast::<u8>(), a.len());
            libc::free((*dup).src_addr);
            (*dup).src_addr = p;
            (*dup).src_addrlen = a.len();
        }
    }
    let mut ep = std::ptr::null_mut();
    // SAFETY: a live domain and info.
    let r = unsafe { ((*(*domain).ops).endpoint)(domain, dup, &mut ep, std::ptr::null_mut()) };
    // SAFETY: ours, freed once.
    unsafe { (lib.fi_freeinfo)(dup) };
    if r == -libc::EADDRINUSE || r == -libc::EEXIST {
        return Err(DatError::new(DAT_CONN_QUAL_IN_USE, 0));
    }
    if r != 0 {
        return Err(fail(lib, "fi_endpoint", r as isize, DatError::insufficient(DAT_RESOURCE_TEP)));
    }
    Ok(ep)
}

/// A connection's side of the protocol, in its [`OfiQp`] (all zero for `FI_EP_MSG`).
#[derive(Default)]
pub(crate) struct Link {
    /// Ours: the peer names this connection by it.
    pub token: AtomicU64,
    /// The peer's.
    pub peer_token: AtomicU64,
    /// The AV entry of the peer's control endpoint (valid once `peer_known`).
    pub peer_cm: AtomicU64,
    /// The AV entry of the PSP a request went to, until its answer (0: none).
    pub psp: AtomicU64,
    pub peer_known: AtomicBool,
    /// When the peer was last heard of, in ms since the IA's epoch.
    pub heard: AtomicU64,
    /// Messages posted on this connection (its disconnect message carries the count).
    pub sent: AtomicU64,
    /// The peer's regions by key, as it told them.
    pub bases: Mutex<HashMap<u32, Region>>,
    /// Notified when an answer enters `bases` or the connection ends.
    pub told: parking_lot::Condvar,
}

/// One control send in flight: its bytes, the AV entry it went to, and the connection it is
/// about (0: none).
struct Sending {
    _bytes: Box<[u8]>,
    to: u64,
    token: u64,
}

/// An IA's RDM objects.
pub(crate) struct Rdm {
    lib: &'static sys::Lib,
    /// The control endpoint's AV: the PSPs and peers' control endpoints it sends to.
    av: Av,
    /// Who uses each entry of `av`; inserts and removes happen under its lock.
    entries: Mutex<CtlEntries>,
    pub cq: *mut sys::fid_cq,
    /// The control CQ's wait fd; None: the CM thread polls it at every look.
    pub cq_fd: Option<libc::c_int>,
    pub fmt: u32,
    cm: Option<CtlEp>,
    listeners: Mutex<Vec<Weak<RdmListener>>>,
    conns: Mutex<HashMap<u64, Weak<OfiQp>>>,
    next_token: AtomicU64,
    sending: Mutex<HashMap<usize, Sending>>,
    /// Sends libfabric refused for now, by destination.
    waiting: Mutex<Retries>,
    /// Connections whose peer disconnected after sending this many messages, until they
    /// arrived or the time passed ([`Rdm::drain`]).
    draining: Mutex<Vec<(Weak<OfiQp>, u64, Instant)>>,
    /// Rung when a send starts waiting, so that the CM thread retries it.
    pub kick: super::super::eventfd::EventFd,
    epoch: Instant,
    beat: Duration,
    last_beat: Mutex<Instant>,
}

// SAFETY: the objects belong to a FI_THREAD_SAFE domain; closed once, in Drop.
unsafe impl Send for Rdm {}
// SAFETY: as above.
unsafe impl Sync for Rdm {}

/// The heartbeat interval: `DAT_OFI_BEAT_MS` (default 1000); a peer not heard of for
/// [`MISSED_BEATS`] intervals is gone.
fn beat_every() -> Duration {
    let ms = std::env::var("DAT_OFI_BEAT_MS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1000u64);
    Duration::from_millis(ms.max(1))
}

const MISSED_BEATS: u32 = 5;

/// How long a peer's disconnect waits for the messages it sent before it.
const DRAIN_FOR: Duration = Duration::from_secs(2);

impl Rdm {
    pub fn open(lib: &'static sys::Lib, domain: *mut sys::fid_domain, info: *const sys::fi_info) -> DatResult<Rdm> {
        let av = Av::open(lib, domain)?;
        let (cq, cq_fd) = super::cq::open_cq_on(lib, domain, 256)?;
        // SAFETY: a live info.
        let fmt = unsafe { (*info).addr_format };
        if fmt == sys::FI_ADDR_STR {
            super::shm_names::remove_dead_regions();
        }
        let mut rdm = Rdm {
            lib,
            av,
            entries: Mutex::new(CtlEntries::default()),
            cq,
            cq_fd,
            fmt,
            cm: None,
            listeners: Mutex::new(Vec::new()),
            conns: Mutex::new(HashMap::new()),
            next_token: AtomicU64::new(first_token()),
            sending: Mutex::new(HashMap::new()),
            waiting: Mutex::new(Retries::default()),
            draining: Mutex::new(Vec::new()),
            kick: super::super::eventfd::EventFd::new().map_err(|e| {
                tracing::warn!("ofi: eventfd failed: {e}");
                DatError::insufficient(DAT_RESOURCE_MEMORY)
            })?,
            epoch: Instant::now(),
            beat: beat_every(),
            last_beat: Mutex::new(Instant::now()),
        };
        rdm.cm = Some(CtlEp::open(lib, domain, info, None, &rdm.av, None, cq)?);
        Ok(rdm)
    }

    fn cm(&self) -> &CtlEp {
        self.cm.as_ref().expect("the control endpoint is made at open")
    }

    /// The IA's control endpoint's address.
    pub fn cm_name(&self) -> &[u8] {
        &self.cm().name
    }

    pub fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// The control AV's entry for `addr` (inserted where it has none), held until
    /// [`Rdm::let_go`].
    pub fn insert(&self, addr: &[u8]) -> DatResult<u64> {
        let mut e = self.entries.lock();
        if let Some(fa) = e.hold(addr) {
            return Ok(fa);
        }
        let fa = self.av.insert(addr)?;
        e.inserted(addr, fa);
        Ok(fa)
    }

    /// Lets go of a control AV entry [`Rdm::insert`] gave; it leaves the AV once no holder and
    /// no control message uses it ([`CtlEntries`]).
    fn let_go(&self, fa: u64) {
        let mut e = self.entries.lock();
        if e.let_go(fa) {
            self.av.remove(fa);
        }
    }

    /// A control message to `fa` completed, failed or was dropped.
    fn message_over(&self, fa: u64) {
        let mut e = self.entries.lock();
        if e.message_over(fa) {
            self.av.remove(fa);
        }
    }

    pub fn register(&self, qp: &Arc<OfiQp>) -> u64 {
        let t = self.next_token.fetch_add(1, Ordering::Relaxed);
        let mut c = self.conns.lock();
        c.retain(|_, w| w.strong_count() > 0);
        c.insert(t, Arc::downgrade(qp));
        t
    }

    pub fn unregister(&self, token: u64) {
        self.conns.lock().remove(&token);
    }

    /// Sends `m` from the control endpoint to `to` (an AV entry); an error completion of it
    /// ends the connection named `token` (0: none).
    ///
    /// A send libfabric cannot take yet (`-FI_EAGAIN`: rxm is still connecting to that peer)
    /// waits in order behind those to the same destination and is retried by the CM thread
    /// ([`Rdm::retry`]; [`Retries`]).
    ///
    /// `to` must be held ([`Rdm::insert`]); the message uses it until it is over, so the entry
    /// stays in the AV that long even if its holder lets go meanwhile.
    fn send(&self, to: u64, m: &Msg<'_>, token: u64) -> DatResult<()> {
        if !self.entries.lock().message(to) {
            tracing::warn!(to, "ofi: a connection message to an AV entry nobody holds dropped");
            return Err(DatError::new(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNREACHABLE));
        }
        let bytes = m.encode().into_boxed_slice();
        let mut w = self.waiting.lock();
        if !w.holds(to) {
            match self.post(to, bytes, token) {
                Ok(()) => return Ok(()),
                Err(Some(r)) => {
                    drop(w);
                    self.message_over(to);
                    return Err(fail(
                        self.lib,
                        "sending a connection message",
                        r,
                        DatError::new(DAT_INVALID_ADDRESS, DAT_INVALID_ADDRESS_UNREACHABLE),
                    ));
                }
                Err(None) => {}
            }
        }
        let now = Instant::now();
        w.push(Waiting { to, bytes: m.encode().into_boxed_slice(), token, since: now }, now);
        drop(w);
        self.kick.ring();
        Ok(())
    }

    /// Posts one control send; Err(None) for `-FI_EAGAIN`, Err(Some(r)) for another error.
    fn post(&self, to: u64, bytes: Box<[u8]>, token: u64) -> Result<(), Option<isize>> {
        let (p, len) = (bytes.as_ptr(), bytes.len());
        let mut s = self.sending.lock();
        s.insert(p as usize, Sending { _bytes: bytes, to, token });
        let ep = self.cm().ep;
        // SAFETY: a live endpoint; the bytes stay in `sending` until the completion; the
        // context is their address.
        let r = unsafe { ((*(*ep).msg).send)(ep, p.cast(), len, std::ptr::null_mut(), to, p as *mut c_void) };
        if r == 0 {
            return Ok(());
        }
        s.remove(&(p as usize));
        Err((r != -(sys::FI_EAGAIN as isize)).then_some(r))
    }

    /// Posts the sends that waited and whose destination is due ([`Retries`]), in order; a
    /// send that cannot go for [`MISSED_BEATS`] beats, or fails, ends its connection. Returns
    /// how long until the next retry is due (None: nothing waits).
    fn retry(&self) -> Option<Duration> {
        let mut failed = Vec::new();
        let give_up = self.beat * MISSED_BEATS;
        let next = self.waiting.lock().retry(Instant::now(), |x| match self.post(x.to, x.bytes.clone(), x.token) {
            Ok(()) => Tried::Sent,
            Err(None) if x.since.elapsed() < give_up => Tried::Again,
            Err(_) => {
                failed.push((x.to, x.token));
                Tried::Dropped
            }
        });
        for &(to, _) in &failed {
            self.message_over(to);
        }
        // rxm answers a peer that refuses its connection with -FI_EAGAIN, so a request that
        // never goes is one nobody listens for.
        for q in failed.into_iter().filter_map(|(_, t)| self.conn(t)) {
            q.on_error(libc::ECONNREFUSED, &[]);
        }
        next
    }

    /// Sends a message about `qp`'s connection to its peer.
    pub fn send_to_peer(&self, qp: &OfiQp, kind: Kind2, pd: &[u8]) -> DatResult<()> {
        let l = &qp.link;
        if !l.peer_known.load(Ordering::Acquire) {
            return Ok(());
        }
        let token = l.token.load(Ordering::Relaxed);
        let m = Msg {
            kind: kind.0,
            flag: false,
            to: l.peer_token.load(Ordering::Relaxed),
            from: token,
            cm: self.cm_name(),
            data: &[],
            pd,
        };
        self.send(l.peer_cm.load(Ordering::Relaxed), &m, token)
    }

    /// Asks `qp`'s peer where its region under `key` starts.
    pub fn ask_base(&self, qp: &OfiQp, key: u32) -> DatResult<()> {
        self.send_to_peer(qp, Kind2(Kind::AskBase), &key.to_le_bytes())
    }

    /// Sends a connection request for `qp` (token `token`, data endpoint at `data`) to the
    /// PSP at `psp`.
    ///
    /// Ok(false): nobody listens there (`psp` None: see [`psp_addr`]; over shm nobody is asked
    /// then: a send to a name without a region crashes libfabric 1.17's shm).
    pub fn send_request(&self, qp: &OfiQp, psp: Option<&[u8]>, data: &[u8], pd: &[u8]) -> DatResult<bool> {
        let Some(psp) = psp else { return Ok(false) };
        let to = self.insert(psp)?;
        qp.link.psp.store(to, Ordering::Relaxed);
        let token = qp.link.token.load(Ordering::Relaxed);
        let m = Msg { kind: Kind::Request, flag: false, to: 0, from: token, cm: self.cm_name(), data, pd };
        self.send(to, &m, token).map(|()| true)
    }

    /// Lets go of the AV entries `qp`'s connection holds (all at its end; the PSP's at the
    /// answer, `all` false). Control messages still waiting or in flight to them keep them
    /// in the AV until they are over.
    pub fn release(&self, link: &Link, all: bool) {
        let psp = link.psp.swap(0, Ordering::AcqRel);
        if psp != 0 {
            self.let_go(psp);
        }
        if all && link.peer_known.swap(false, Ordering::AcqRel) {
            self.let_go(link.peer_cm.load(Ordering::Relaxed));
        }
    }

    /// Sends `qp`'s accept of `cr` (the peer's token and control endpoint become `qp`'s).
    pub fn send_accept(&self, qp: &OfiQp, cr: &RdmCr, data: &[u8], pd: &[u8]) -> DatResult<()> {
        let l = &qp.link;
        l.peer_token.store(cr.from, Ordering::Relaxed);
        l.peer_cm.store(self.insert(&cr.cm)?, Ordering::Relaxed);
        l.heard.store(self.now_ms(), Ordering::Relaxed);
        l.peer_known.store(true, Ordering::Release);
        let token = l.token.load(Ordering::Relaxed);
        let m = Msg { kind: Kind::Accept, flag: false, to: cr.from, from: token, cm: self.cm_name(), data, pd };
        self.send(l.peer_cm.load(Ordering::Relaxed), &m, token)
    }

    /// The CM thread's turn: reads the control CQ, handles what arrived, sends the heartbeats
    /// and retries that are due; returns the time until the next of them (or the next look at
    /// a peer's disconnect).
    pub fn progress(&self, d: &Arc<DevInner>) -> Duration {
        let mut buf = std::mem::MaybeUninit::<[sys::fi_cq_data_entry; 16]>::uninit();
        loop {
            // SAFETY: a live CQ; `buf` has room for 16 entries of its format.
            let got = unsafe { ((*(*self.cq).ops).read)(self.cq, buf.as_mut_ptr().cast(), 16) };
            if got == -(sys::FI_EAVAIL as isize) {
                self.read_error();
                continue;
            }
            if got <= 0 {
                break;
            }
            // SAFETY: fi_cq_read wrote the first `got` entries.
            let entries =
                unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<sys::fi_cq_data_entry>(), got as usize) };
            for e in entries {
                let sent = self.sending.lock().remove(&(e.op_context as usize));
                match sent {
                    Some(s) => self.message_over(s.to),
                    None => self.arrived(d, e.op_context, e.len),
                }
            }
        }
        self.kick.clear();
        let mut next = self.beats();
        if let Some(due) = self.retry() {
            next = next.min(due);
        }
        if self.drain() {
            next = next.min(Duration::from_millis(1));
        }
        next
    }

    /// One error completion of the control CQ: a send that failed ends its connection; a
    /// receive is posted again.
    fn read_error(&self) {
        // SAFETY: plain old data.
        let mut e: sys::fi_cq_err_entry = unsafe { std::mem::zeroed() };
        // SAFETY: a live CQ and entry.
        if unsafe { ((*(*self.cq).ops).readerr)(self.cq, &mut e, 0) } <= 0 {
            return;
        }
        let sent = self.sending.lock().remove(&(e.op_context as usize));
        if let Some(s) = sent {
            self.message_over(s.to);
            tracing::debug!(err = e.err, "ofi: connection message failed: {}", sys::strerror(self.lib, e.err as isize));
            if let Some(q) = self.conn(s.token) {
                // A request nobody takes is refused; after the connection, any failure breaks it.
                q.on_error(libc::ECONNREFUSED, &[]);
            }
            return;
        }
        if let Some(c) = self.ctl_of(e.op_context) {
            c.repost(e.op_context.cast());
        }
    }

    fn conn(&self, token: u64) -> Option<Arc<OfiQp>> {
        if token == 0 {
            return None;
        }
        self.conns.lock().get(&token).and_then(Weak::upgrade)
    }

    /// The control endpoint a receive buffer belongs to (the IA's, or a listener's).
    fn ctl_of(&self, p: *mut c_void) -> Option<CtlRef<'_>> {
        if self.cm().owns(p) {
            return Some(CtlRef::Ia(self.cm()));
        }
        let ls = self.listeners.lock();
        ls.iter().filter_map(Weak::upgrade).find(|l| l.ctl.owns(p)).map(CtlRef::Listener)
    }

    /// A connection message arrived in buffer `p` (`len` bytes).
    fn arrived(&self, d: &Arc<DevInner>, p: *mut c_void, len: usize) {
        let Some(ctl) = self.ctl_of(p) else { return };
        // SAFETY: one of our receive buffers, which libfabric filled with `len` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len.min(CTL_SIZE)) }.to_vec();
        ctl.repost(p.cast());
        let Some(m) = Msg::decode(&bytes) else {
            tracing::debug!(len, "ofi: a malformed connection message dropped");
            return;
        };
        tracing::debug!(kind = ?m.kind, to = m.to, from = m.from, "ofi: connection message");
        if m.kind == Kind::Request {
            if let CtlRef::Listener(l) = ctl {
                l.request(d, &m);
            }
            return;
        }
        let Some(q) = self.conn(m.to) else { return };
        let l = &q.link;
        if m.kind != Kind::Accept && m.kind != Kind::Reject && l.peer_token.load(Ordering::Relaxed) != m.from {
            return;
        }
        l.heard.store(self.now_ms(), Ordering::Relaxed);
        match m.kind {
            // A second accept (the peer is known) changes nothing.
            Kind::Accept if !l.peer_known.load(Ordering::Acquire) => {
                self.release(l, false);
                let known = self.insert(m.cm).and_then(|cm| match q.insert_peer(m.data) {
                    Ok(data) => Ok((cm, data)),
                    Err(e) => {
                        self.let_go(cm);
                        Err(e)
                    }
                });
                match known {
                    Ok((cm, data)) => {
                        l.peer_token.store(m.from, Ordering::Relaxed);
                        l.peer_cm.store(cm, Ordering::Relaxed);
                        l.peer_known.store(true, Ordering::Release);
                        q.on_accepted(data, m.pd);
                    }
                    Err(_) => q.on_error(libc::EHOSTUNREACH, &[]),
                }
            }
            Kind::Reject if m.flag => {
                self.release(l, false);
                let mut data = REJECT_MARKER.to_vec();
                data.extend_from_slice(m.pd);
                q.on_error(libc::ECONNREFUSED, &data);
            }
            Kind::Reject => {
                self.release(l, false);
                q.on_error(libc::ECONNREFUSED, &[]);
            }
            Kind::Ready => q.on_connected(&[]),
            Kind::Disconnect => {
                let sent = m.pd.try_into().map_or(0, u64::from_le_bytes);
                self.draining.lock().push((Arc::downgrade(&q), sent, Instant::now() + DRAIN_FOR));
            }
            Kind::AskBase if m.pd.len() == 4 => {
                let key = u32::from_le_bytes(m.pd.try_into().unwrap());
                let r = d.mr_keys.region(key).unwrap_or_default();
                let mut tell = key.to_le_bytes().to_vec();
                tell.extend_from_slice(&r.base.to_le_bytes());
                tell.extend_from_slice(&r.len.to_le_bytes());
                tell.push(r.remote);
                let _ = self.send_to_peer(&q, Kind2(Kind::TellBase), &tell);
            }
            Kind::TellBase if m.pd.len() == 21 => {
                let u64_at = |i: usize| u64::from_le_bytes(m.pd[i..i + 8].try_into().unwrap());
                let key = u32::from_le_bytes(m.pd[..4].try_into().unwrap());
                let r = Region { base: u64_at(4), len: u64_at(12), remote: m.pd[20] };
                l.bases.lock().insert(key, r);
                l.told.notify_all();
            }
            Kind::Accept | Kind::AskBase | Kind::TellBase | Kind::Beat | Kind::Request => {}
        }
    }

    /// Ends the connections whose peer disconnected once the messages it sent before have
    /// arrived (the data endpoint's receive counter; messages travel apart from the
    /// disconnect message, which can overtake them) and libfabric completed the work posted
    /// here (a send the peer received may not be completed here yet: its completion comes,
    /// not a flush), or [`DRAIN_FOR`] passed (a message without a receive for it, a send
    /// that never completes). True while some still wait.
    fn drain(&self) -> bool {
        let mut ready = Vec::new();
        let mut d = self.draining.lock();
        d.retain(|(w, sent, until)| match w.upgrade() {
            None => false,
            Some(q) => {
                let done = (q.received() >= *sent && q.sends_done()) || Instant::now() >= *until;
                if done {
                    ready.push(q);
                }
                !done
            }
        });
        let more = !d.is_empty();
        drop(d);
        for q in ready {
            q.on_peer_disconnect();
        }
        more
    }

    /// Sends a heartbeat on each connection when one is due, and ends those whose peer was not
    /// heard of for [`MISSED_BEATS`] beats (BROKEN). Returns the time to the next beat.
    fn beats(&self) -> Duration {
        {
            let mut last = self.last_beat.lock();
            let since = last.elapsed();
            if since < self.beat {
                return self.beat - since;
            }
            *last = Instant::now();
        }
        let now = self.now_ms();
        let dead_after = (self.beat * MISSED_BEATS).as_millis() as u64;
        let qps: Vec<Arc<OfiQp>> = self.conns.lock().values().filter_map(Weak::upgrade).collect();
        for q in qps.iter().filter(|q| q.link.peer_known.load(Ordering::Acquire) && q.is_open()) {
            if now.saturating_sub(q.link.heard.load(Ordering::Relaxed)) > dead_after {
                tracing::debug!("ofi: peer silent for {dead_after} ms: connection broken");
                q.on_error(libc::ETIMEDOUT, &[]);
            } else if self.send_to_peer(q, Kind2(Kind::Beat), &[]).is_err() {
                q.on_error(libc::ECONNRESET, &[]);
            }
        }
        self.beat
    }
}

/// A message kind others may send through [`Rdm::send_to_peer`].
#[derive(Clone, Copy)]
pub(crate) struct Kind2(Kind);

impl Kind2 {
    pub const READY: Kind2 = Kind2(Kind::Ready);
    pub const DISCONNECT: Kind2 = Kind2(Kind::Disconnect);
}

enum CtlRef<'a> {
    Ia(&'a CtlEp),
    Listener(Arc<RdmListener>),
}

impl CtlRef<'_> {
    fn repost(&self, b: *mut u8) {
        let c = match self {
            CtlRef::Ia(c) => *c,
            CtlRef::Listener(l) => &l.ctl,
        };
        let r = c.repost(b);
        if r != 0 {
            tracing::warn!("ofi: reposting a control receive failed: {}", sys::strerror(c.lib, r));
        }
    }
}

/// A token no earlier IA of this host likely used: a connection message left over from one
/// (to a reused token) is then ignored.
fn first_token() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    (t ^ (u64::from(std::process::id()) << 40)) | 1
}

impl Drop for Rdm {
    fn drop(&mut self) {
        // SAFETY: every data endpoint and listener is closed (they hold the IA); the control
        // endpoint, CQ and AV go in that order, each once.
        unsafe {
            drop(self.cm.take());
            sys::FiOps::close(&self.cq);
        }
    }
}

/// A PSP / RSP: a control endpoint at the qualifier's address.
pub struct RdmListener {
    dev: Arc<DevInner>,
    /// Closed at drop under the IA's `lifecycle` lock, which the CM thread holds while it
    /// reads the CQ the endpoint is bound to (rxm does not survive an endpoint closed while
    /// another thread reads its CQ); closed there and then, so that the qualifier is free
    /// again when the PSP's free returns.
    ctl: std::mem::ManuallyDrop<CtlEp>,
    /// shm: the qualifier's claim, given up after the endpoint is closed.
    _claim: Option<shm_psp::Claim>,
    port: u64,
    events: Arc<dyn ListenerEvents>,
}

impl RdmListener {
    pub fn listen(dev: &Arc<DevInner>, port: u64, events: Arc<dyn ListenerEvents>) -> DatResult<Arc<RdmListener>> {
        let Ok(p16) = u16::try_from(port) else {
            tracing::warn!("ofi: connection qualifier {port} does not fit 16 bits");
            return Err(DatError::invalid_arg(2));
        };
        let r = dev.rdm.as_ref().expect("an RDM IA");
        // shm: the qualifier's claim and the endpoint name it gives.
        let claim = if r.fmt == sys::FI_ADDR_STR { Some(shm_psp::Claim::take(p16)?) } else { None };
        let src = match &claim {
            Some(c) => c.name.clone(),
            None => psp_addr(r.fmt, dev.addr.ip(), p16).expect("a sockaddr"),
        };
        let _held = dev.lifecycle.lock();
        let ctl = Av::open(dev.lib, dev.domain)
            .and_then(|own| CtlEp::open(dev.lib, dev.domain, dev.info, Some(&src), &r.av, Some(own), r.cq))?;
        let l = Arc::new(RdmListener {
            dev: dev.clone(),
            ctl: std::mem::ManuallyDrop::new(ctl),
            _claim: claim,
            port,
            events,
        });
        let mut ls = r.listeners.lock();
        ls.retain(|w| w.strong_count() > 0);
        ls.push(Arc::downgrade(&l));
        Ok(l)
    }

    fn request(self: &Arc<Self>, d: &Arc<DevInner>, m: &Msg<'_>) {
        let r = d.rdm.as_ref().expect("an RDM IA");
        let remote = if r.fmt == sys::FI_ADDR_STR || m.cm.len() < std::mem::size_of::<libc::sockaddr_in>() {
            None
        } else {
            // SAFETY: a sockaddr of the AV's format, at least a sockaddr_in long.
            let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let n = m.cm.len().min(std::mem::size_of::<libc::sockaddr_storage>());
            // SAFETY: copying `n` bytes into the storage.
            unsafe {
                std::ptr::copy_nonoverlapping(m.cm.as_ptr(), (&mut ss as *mut libc::sockaddr_storage).cast::<u8>(), n);
                crate::ia::from_sockaddr((&ss as *const libc::sockaddr_storage).cast())
            }
        }
        .unwrap_or_else(|| SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), 0));
        let cr = Arc::new(RdmCr {
            listener: self.clone(),
            from: m.from,
            cm: m.cm.to_vec(),
            data: m.data.to_vec(),
            pd: m.pd.to_vec(),
            remote,
            answered: AtomicBool::new(false),
        });
        RCRS.insert(&cr);
        self.events.connect_request(cr);
    }
}

impl Drop for RdmListener {
    fn drop(&mut self) {
        // SAFETY: taken once; the field is not used after this.
        let ctl = unsafe { std::mem::ManuallyDrop::take(&mut self.ctl) };
        let held = self.dev.lifecycle.lock();
        drop(ctl);
        drop(held);
    }
}

impl Listener for RdmListener {
    fn port(&self) -> u64 {
        self.port
    }
}

/// A connection request that arrived at an [`RdmListener`].
pub struct RdmCr {
    listener: Arc<RdmListener>,
    /// The active connection's token.
    pub from: u64,
    /// The active IA's control endpoint and the active EP's data endpoint.
    pub cm: Vec<u8>,
    pub data: Vec<u8>,
    pd: Vec<u8>,
    remote: SocketAddr,
    answered: AtomicBool,
}

impl RdmCr {
    /// Claims the request for an accept or a reject; false if it was answered.
    pub fn claim(&self) -> bool {
        !self.answered.swap(true, Ordering::AcqRel)
    }

    /// Gives an unanswered claim back (an accept that failed before answering).
    pub fn unclaim(&self) {
        self.answered.store(false, Ordering::Release);
    }

    fn refuse(&self, by_consumer: bool, pd: &[u8]) -> DatResult<()> {
        let r = self.listener.dev.rdm.as_ref().expect("an RDM IA");
        let to = r.insert(&self.cm)?;
        let m = Msg { kind: Kind::Reject, flag: by_consumer, to: self.from, from: 0, cm: r.cm_name(), data: &[], pd };
        let sent = r.send(to, &m, 0);
        r.let_go(to);
        sent
    }
}

impl Drop for RdmCr {
    fn drop(&mut self) {
        if self.claim() {
            let _ = self.refuse(false, &[]);
        }
    }
}

impl ConnectionRequest for RdmCr {
    fn private_data(&self) -> &[u8] {
        &self.pd
    }

    fn remote_address(&self) -> SocketAddr {
        self.remote
    }

    fn port(&self) -> u64 {
        self.listener.port
    }

    fn reject(&self, private_data: &[u8]) -> DatResult<()> {
        if private_data.len() > self.listener.dev.attr.max_private_data {
            return Err(DatError::invalid_arg(2));
        }
        if !self.claim() {
            return Err(DatError::invalid_state(0));
        }
        self.refuse(true, private_data)
    }
}

/// What ends a connection, as [`OfiQp`] reports it to the consumer.
pub(super) fn ends_as(connecting: bool, err: i32, data: &[u8]) -> (ConnEvent, Option<&[u8]>) {
    match (connecting, err) {
        (true, libc::ECONNREFUSED) => match data.strip_prefix(REJECT_MARKER) {
            Some(rest) => (ConnEvent::PeerRejected, Some(rest)),
            None => (ConnEvent::NonPeerRejected, None),
        },
        (true, libc::ETIMEDOUT) => (ConnEvent::TimedOut, None),
        (true, _) => (ConnEvent::Unreachable, None),
        _ => (ConnEvent::Broken, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let m = Msg { kind: Kind::Accept, flag: true, to: 7, from: 9, cm: b"abc", data: b"de", pd: b"private" };
        let b = m.encode();
        let d = Msg::decode(&b).expect("decodes");
        assert_eq!((d.kind, d.flag, d.to, d.from), (Kind::Accept, true, 7, 9));
        assert_eq!((d.cm, d.data, d.pd), (&b"abc"[..], &b"de"[..], &b"private"[..]));
        assert!(Msg::decode(&b[..b.len() - 1]).is_none(), "a short message is refused");
        assert!(Msg::decode(&b[..HEAD - 1]).is_none());
    }
}
