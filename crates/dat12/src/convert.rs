//! Conversions between the core's native types and DAT 1.2 C structs: what the shared face
//! modules (`crates/face/`) call where the two ABIs differ. In DAT 1.2 most are identities,
//! since the core speaks DAT 1.2's numbering; triplets are converted (DAT 1.2's holds a 64-bit
//! length, the core's [`Sge`] the 32-bit one of verbs and DAT 2.0).

use crate::abi::*;
use datcore::codes::DAT_LENGTH_ERROR;
use datcore::handle::Handle;
use datcore::ia::InterfaceAdapter;
use datcore::provider::{Sge, WcOpcode};
use datcore::{DatError, DatResult};
use std::ffi::CStr;
use std::mem::MaybeUninit;

/// A core return code in this face's numbering: the core numbers codes as DAT 1.2 does.
#[inline]
pub const fn code_out(core: u32) -> u32 {
    core
}

/// A return code of this face's numbering (from a consumer or a third-party provider) in the
/// core's numbering.
#[inline]
pub const fn code_in(face: u32) -> u32 {
    face
}

/// `dat_strerror` names of the return types this face has and the core's DAT 1.2 numbering
/// does not (none in DAT 1.2), keyed by their value after [`code_in`].
pub const TYPE_NAMES_ONLY_IN_THIS_FACE: &[(u32, &CStr)] = &[];
/// The same for subtypes (none in DAT 1.2).
pub const SUBTYPE_NAMES_ONLY_IN_THIS_FACE: &[(u32, &CStr)] = &[];

/// A length as this face's structs hold it (`DAT_VLEN`).
#[inline]
pub fn seg_len(v: u64) -> DAT_VLEN {
    v
}

/// A consumer triplet as a core scatter/gather element: a segment longer than the core's 32-bit
/// length holds (4 GiB - 1) gets `DAT_LENGTH_ERROR`, as one longer than the EP's
/// max_message_size does.
fn sge(t: &DAT_LMR_TRIPLET) -> DatResult<Sge> {
    let length = u32::try_from(t.segment_length).map_err(|_| DatError::new(DAT_LENGTH_ERROR, 0))?;
    Ok(Sge { addr: t.virtual_address, length, lkey: t.lmr_context })
}

/// Runs `f` on consumer triplets as core scatter/gather elements (converted on the stack for
/// up to [`SGES_ON_STACK`] segments). Inlined into each post with `f`, which has one call site here.
#[inline(always)]
pub fn with_sges<R>(t: &[DAT_LMR_TRIPLET], f: impl FnOnce(&[Sge]) -> DatResult<R>) -> DatResult<R> {
    // Only the segments converted are initialised.
    let mut buf = [MaybeUninit::<Sge>::uninit(); SGES_ON_STACK];
    let on_heap: Vec<Sge>;
    let sges = if t.len() <= SGES_ON_STACK {
        for (d, s) in buf.iter_mut().zip(t) {
            d.write(sge(s)?);
        }
        // SAFETY: the first t.len() elements were written just above.
        unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<Sge>(), t.len()) }
    } else {
        on_heap = t.iter().map(sge).collect::<DatResult<Vec<_>>>()?;
        &on_heap[..]
    };
    f(sges)
}

/// How many segments [`with_sges`] converts without allocating.
pub const SGES_ON_STACK: usize = 8;

/// A core scatter/gather element as a consumer triplet.
pub fn lmr_triplet(s: &Sge) -> DAT_LMR_TRIPLET {
    DAT_LMR_TRIPLET { lmr_context: s.lkey, pad: 0, virtual_address: s.addr, segment_length: s.length.into() }
}

/// The remote side of an RDMA triplet: (target address, rmr_context).
#[inline]
pub fn rmr_target(t: &DAT_RMR_TRIPLET) -> (u64, u32) {
    (t.target_address, t.rmr_context)
}

/// A core `DAT_SRQ_STATE` (DAT 1.2 values) as this face numbers it.
pub fn srq_state(core: u32) -> DAT_SRQ_STATE {
    core
}

/// The `DAT_CNO_PARAM_MASK` bits `dat_cno_query` accepts.
pub const CNO_FIELDS: DAT_CNO_PARAM_MASK = DAT_CNO_FIELD_ALL;

/// Stores a CNO's proxy agent in a `DAT_CNO_PARAM`.
pub fn set_cno_agent(p: &mut DAT_CNO_PARAM, agent: DAT_OS_WAIT_PROXY_AGENT) {
    p.agent = agent;
}

/// `DAT_IA_ATTR` fields only this face has: none in DAT 1.2.
pub fn fill_ia_attr_face(_ia: &InterfaceAdapter, _a: &mut DAT_IA_ATTR) {}

/// `DAT_PROVIDER_ATTR` fields only this face has: none in DAT 1.2.
pub fn fill_provider_attr_face(_ia: &InterfaceAdapter, _p: &mut DAT_PROVIDER_ATTR) {}

/// Writes a DTO completion into `out` as DAT 1.2 reports it: no operation, a 64-bit length, no
/// extension data (the 1.2 face has no IB extensions, so `op` and `immed` are not shown).
#[inline]
pub fn dto_event(out: &mut DAT_EVENT, ep: Handle, cookie: u64, status: u32, length: u64, _op: WcOpcode, _immed: u32) {
    out.event_data.dto_completion_event_data = DAT_DTO_COMPLETION_EVENT_DATA {
        ep_handle: ep.as_ptr(),
        user_cookie: DAT_CONTEXT { as_64: cookie },
        status: status as _,
        transfered_length: length,
    }
}

/// A connection request's arrival as DAT 1.2 reports it.
pub fn cr_arrival(
    sp: Handle,
    local_address: DAT_IA_ADDRESS_PTR,
    conn_qual: u64,
    cr: Handle,
) -> DAT_CR_ARRIVAL_EVENT_DATA {
    DAT_CR_ARRIVAL_EVENT_DATA {
        sp_handle: DAT_SP_HANDLE { psp_handle: sp.as_ptr() },
        local_ia_address_ptr: local_address,
        conn_qual,
        cr_handle: cr.as_ptr(),
    }
}

/// The core service type of a DAT 1.2 `DAT_SERVICE_TYPE`: DAT 1.2 has RC only (no IB
/// extensions, so no UD endpoints); anything else becomes a value the core refuses as an
/// invalid attribute.
pub fn service_type_in(t: DAT_SERVICE_TYPE) -> u32 {
    if t == DAT_SERVICE_TYPE_RC {
        t
    } else {
        u32::MAX
    }
}

/// A UD connection event's extension data: DAT 1.2 has none (and no UD endpoints).
pub fn ud_connection_extension(
    _out: &mut DAT_EVENT,
    _ext_type: u32,
    _ah: Handle,
    _qpn: u32,
    _remote: Option<std::net::SocketAddr>,
) {
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triplets_convert_both_ways() {
        let t = [DAT_LMR_TRIPLET { lmr_context: 7, pad: 0, virtual_address: 0x1000, segment_length: 64 }; 9];
        for n in [0, 1, SGES_ON_STACK, SGES_ON_STACK + 1] {
            let got = with_sges(&t[..n], |s| Ok(s.to_vec())).unwrap();
            assert_eq!(got.len(), n);
            assert!(got.iter().all(|s| *s == Sge { addr: 0x1000, length: 64, lkey: 7 }));
        }
        let back = lmr_triplet(&Sge { addr: 0x2000, length: u32::MAX, lkey: 9 });
        assert_eq!((back.lmr_context, back.virtual_address, back.segment_length), (9, 0x2000, u32::MAX as u64));
    }

    #[test]
    fn a_segment_over_4_gib_is_a_length_error() {
        for n in [1, SGES_ON_STACK + 1] {
            let mut t = vec![DAT_LMR_TRIPLET { lmr_context: 7, pad: 0, virtual_address: 0, segment_length: 8 }; n];
            t[n - 1].segment_length = 1 << 32;
            let r = with_sges(&t, |_| -> DatResult<()> { panic!("called with a truncated length") });
            assert_eq!(r.unwrap_err().0, DatError::new(DAT_LENGTH_ERROR, 0).0);
        }
    }
}
