//! Entry points for the fuzz targets (`fuzz/`, the `fuzzing` feature): the verbs provider's
//! decoding of the rdma_cm private data a peer sends, on given bytes. No device is needed.

use super::{cm, ud};
use crate::provider::ConnEvent;

/// The private data of an rdma_cm event as the provider reads it: a reject of a connect (with
/// the event's `status`), and the SIDR request or reply of a UD exchange (our header and the
/// consumer's data, or a foreign peer's data as it came). Checks that what is taken out lies
/// inside what came, and that a UD header we frame reads back.
pub fn private_data(status: i32, pd: &[u8]) {
    let (ev, data) = cm::rejected(pd, status);
    assert!(matches!(ev, ConnEvent::PeerRejected | ConnEvent::NonPeerRejected));
    assert!(pd.ends_with(data));
    let (data, qpn) = ud::unframe(pd.to_vec());
    match qpn {
        Some(_) => assert!(data.len() < pd.len()),
        None => assert_eq!(data, pd),
    }
    if let Ok(n) = u8::try_from(pd.len()) {
        let qpn = u32::from(n) << 8 | status as u32 & 0xff;
        assert_eq!(ud::unframe(ud::framed(qpn, pd)), (pd.to_vec(), Some(qpn)));
    }
}
