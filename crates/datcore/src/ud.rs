//! Unreliable datagram (UD) endpoints of the IB extensions (`DAT_IB_SERVICE_TYPE_UD`).
//!
//! A UD endpoint connects and accepts any number of times; each exchange that succeeds gives
//! this side an address handle (AH) for the peer, reported in a
//! `DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED` event (extension type `DAT_IB_UD_REMOTE_AH` on the
//! connecting side, `DAT_IB_UD_PASSIVE_REMOTE_AH` on the accepting side). The consumer sends
//! datagrams with `dat_ib_post_send_ud` naming an AH, and frees AHs with `dat_ib_ud_ah_free`
//! (the EP frees those left when it is freed).
//!
//! An AH is a DAT object in the handle registry like any other: the `ah` pointer the consumer
//! gets in `DAT_IB_ADDR_HANDLE` is its handle value, so a stale, freed or foreign pointer is
//! refused with `DAT_INVALID_HANDLE` and never dereferenced. It also keeps the event's private
//! data at a stable address for as long as it lives. The event's `context` (the "CM handle"
//! OFED's consumers give to `dat_ib_ud_cm_free`) is the same handle value: the object lives
//! until both `dat_ib_ud_ah_free` and `dat_ib_ud_cm_free` were called on it (or its EP is
//! freed); after `dat_ib_ud_ah_free` it no longer addresses sends.

use crate::codes::*;
use crate::endpoint::Endpoint;
use crate::error::{DatError, DatResult};
use crate::handle::{self, Handle};
use crate::ia::InterfaceAdapter;
use crate::provider::UdPeer;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// `DAT_IB_SERVICE_TYPE_UD` (`DAT_SERVICE_TYPE_EXTENSION_BASE`).
pub const DAT_IB_SERVICE_TYPE_UD: u32 = 0x1;

/// An address handle: where datagrams to one peer go.
pub struct AddressHandle {
    pub ia: Arc<InterfaceAdapter>,
    /// The EP whose connect exchange made it.
    pub ep: Handle,
    pub peer: UdPeer,
    /// The peer's IA address, as the exchange named it.
    pub remote: SocketAddr,
    /// The private data of the event that reported it.
    private_data: Box<[u8]>,
    /// Not yet freed as an address handle (`dat_ib_ud_ah_free`).
    ah_live: AtomicBool,
    /// Not yet freed as the exchange's handle (`dat_ib_ud_cm_free`).
    cm_live: AtomicBool,
}

handle::dat_object!(AddressHandle, Ah);

impl AddressHandle {
    /// Registers an AH for `peer`, learnt by `ep`'s exchange with `private_data`.
    pub fn insert(
        ep: &Endpoint,
        peer: UdPeer,
        remote: SocketAddr,
        private_data: &[u8],
    ) -> DatResult<(Handle, Arc<AddressHandle>)> {
        let ah = Arc::new(AddressHandle {
            ia: ep.ia.clone(),
            ep: ep.handle(),
            peer,
            remote,
            private_data: private_data.into(),
            ah_live: AtomicBool::new(true),
            cm_live: AtomicBool::new(true),
        });
        let h = handle::insert(ah.clone())?;
        Ok((h, ah))
    }

    /// The private data (NULL when there is none), valid while the AH lives.
    pub fn private_data(&self) -> (*const u8, usize) {
        let p = &self.private_data;
        (if p.is_empty() { std::ptr::null() } else { p.as_ptr() }, p.len())
    }
}

/// Where a datagram posted on `ep` goes: the AH `ah` (a live AH of the same IA, else
/// `DAT_INVALID_HANDLE`), to queue pair `qpn` (`DAT_IB_ADDR_HANDLE.qpn`, as the consumer gives
/// it, as OFED's provider does).
pub fn destination(ep: &Endpoint, ah: Handle, qpn: u32) -> DatResult<UdPeer> {
    let a = handle::get::<AddressHandle>(ah, DAT_INVALID_HANDLE1)?;
    if !Arc::ptr_eq(&a.ia, &ep.ia) || !a.ah_live.load(Ordering::Acquire) {
        return Err(DatError::invalid_handle(DAT_INVALID_HANDLE1));
    }
    Ok(UdPeer { qpn, ..a.peer })
}

/// Ends one of the two uses of `h`, an AH of `ep` (`DAT_INVALID_HANDLE` if it is not, or that
/// use already ended); the object goes when both have.
fn release(ep: &Endpoint, h: Handle, which: fn(&AddressHandle) -> &AtomicBool) -> DatResult<()> {
    let other_live = {
        let a = handle::get::<AddressHandle>(h, DAT_INVALID_HANDLE1)?;
        if a.ep != ep.handle() || !which(&a).swap(false, Ordering::AcqRel) {
            return Err(DatError::invalid_handle(DAT_INVALID_HANDLE1));
        }
        a.ah_live.load(Ordering::Acquire) || a.cm_live.load(Ordering::Acquire)
    };
    if !other_live {
        ep.forget_ah(h);
        handle::remove::<AddressHandle>(h);
    }
    Ok(())
}

/// `dat_ib_ud_ah_free`: `h` no longer addresses sends.
pub fn free(ep: &Endpoint, h: Handle) -> DatResult<()> {
    release(ep, h, |a| &a.ah_live)
}

/// `dat_ib_ud_cm_free`: releases what the connect exchange named by `cm` (the `context` of its
/// established event) holds. Our providers keep nothing once the exchange has ended, so this
/// only ends that use of the handle.
pub fn free_cm(ep: &Endpoint, cm: Handle) -> DatResult<()> {
    release(ep, cm, |a| &a.cm_live)
}
