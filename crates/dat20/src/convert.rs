//! Conversions between the core's native types and DAT 2.0 C structs: what the shared face
//! modules (`crates/face/`) call where DAT 2.0's ABI differs from the core's DAT 1.2 terms.
//!
//! - Return codes: the core numbers them as DAT 1.2; DAT 2.0 inserted `DAT_INVALID_HANDLE_CSP`
//!   (0x1a) and `DAT_INVALID_STATE_SRQ_SHUTDOWN` (0x58) into the subtypes and moved
//!   `DAT_NOT_IMPLEMENTED` to 0x3fff0000 ([`code_out`], [`code_in`]).
//! - Triplets (`virtual_address`, 32-bit `segment_length`, context) have the core's
//!   scatter/gather layout ([`Sge`], which is also verbs' `ibv_sge`): passed through as they are.
//! - DTO completions carry a 32-bit length and the operation.
//! - `DAT_SRQ_STATE` swapped its two values.

use crate::abi::*;
use datcore::handle::Handle;
use datcore::ia::{Extension, InterfaceAdapter};
use datcore::ib_ext::{self, IbExtension};
use datcore::provider::{ExtensionCaps, Sge, WcOpcode};
use datcore::DatResult;
use std::ffi::CStr;
use std::sync::OnceLock;

const TYPE_MASK: u32 = 0x3fff_0000;
const SUBTYPE_MASK: u32 = 0xffff;
/// The type part of `DAT_NOT_IMPLEMENTED` in both numberings.
const NOT_IMPLEMENTED_TYPE: u32 = 0x3fff_0000;
/// DAT 1.2's `DAT_NOT_IMPLEMENTED` (0xffff0000: both class bits set).
const NOT_IMPLEMENTED_12: u32 = 0xffff_0000;
/// First DAT 1.2 subtype that DAT 2.0 numbers one higher (`DAT_INVALID_HANDLE1`).
const SHIFT1_FROM: u32 = 0x1a;
/// First DAT 1.2 subtype that DAT 2.0 numbers two higher (`DAT_PRIVILEGES_READ`).
const SHIFT2_FROM: u32 = 0x57;
/// Last DAT 1.2 subtype (`DAT_THREAD_SAFETY_NOT_FOUND`).
const LAST_12: u32 = 0x65;
/// A DAT 2.0-only subtype in the core's numbering: `DAT_INVALID_HANDLE_CSP` or
/// `DAT_INVALID_STATE_SRQ_SHUTDOWN` from a third-party provider keep their 2.0 value with this
/// bit set, so [`code_out`] gives them back unchanged. No DAT 1.2 subtype uses the bit.
const ONLY_20: u32 = 0x8000;

const fn subtype_out(s: u32) -> u32 {
    if s & ONLY_20 != 0 {
        s & !ONLY_20
    } else if s >= SHIFT2_FROM && s <= LAST_12 {
        s + 2
    } else if s >= SHIFT1_FROM && s < SHIFT2_FROM {
        s + 1
    } else {
        s
    }
}

const fn subtype_in(s: u32) -> u32 {
    if s == DAT_INVALID_HANDLE_CSP || s == DAT_INVALID_STATE_SRQ_SHUTDOWN {
        s | ONLY_20
    } else if s >= SHIFT2_FROM + 2 && s <= LAST_12 + 2 {
        s - 2
    } else if s > SHIFT1_FROM && s <= SHIFT2_FROM {
        s - 1
    } else {
        s
    }
}

/// `DAT_INVALID_HANDLE_CSP` (DAT 2.0 only) as a subtype in the core's numbering.
pub const INVALID_HANDLE_CSP: u32 = subtype_in(DAT_INVALID_HANDLE_CSP);

/// A core return code (DAT 1.2 numbering) as DAT 2.0 numbers it.
#[inline]
pub const fn code_out(core: u32) -> u32 {
    if core == 0 {
        return 0;
    }
    let sub = subtype_out(core & SUBTYPE_MASK);
    if core & TYPE_MASK == NOT_IMPLEMENTED_TYPE {
        return DAT_CLASS_ERROR | NOT_IMPLEMENTED_TYPE | sub;
    }
    (core & !SUBTYPE_MASK) | sub
}

/// A DAT 2.0 return code (from a consumer or a third-party provider) in the core's numbering.
#[inline]
pub const fn code_in(face: u32) -> u32 {
    if face == 0 {
        return 0;
    }
    let sub = subtype_in(face & SUBTYPE_MASK);
    if face & TYPE_MASK == NOT_IMPLEMENTED_TYPE {
        return NOT_IMPLEMENTED_12 | sub;
    }
    (face & !SUBTYPE_MASK) | sub
}

/// `dat_strerror` names of the return types DAT 2.0 added, which the core's DAT 1.2 numbering
/// (and so `strerror`'s main table) has no name for, keyed by their value after [`code_in`]
/// (which keeps them as they are: no DAT 1.2 type uses these values). `DAT_EXTENSION_BASE` is
/// the type of the errors an extension defines (`DAT_IB_ERR` in `dat_ib_extensions.h`).
pub const TYPE_NAMES_ONLY_IN_THIS_FACE: &[(u32, &CStr)] = &[
    (DAT_RESERVED_LMR, c"DAT_RESERVED_LMR"),
    (DAT_PORT_IN_USE, c"DAT_PORT_IN_USE"),
    (DAT_COMM_NOT_SUPPORTED, c"DAT_COMM_NOT_SUPPORTED"),
    (DAT_EXTENSION_BASE, c"DAT_EXTENSION_BASE"),
];
/// The same for the subtypes DAT 2.0 added ([`code_in`] marks them with [`ONLY_20`]).
pub const SUBTYPE_NAMES_ONLY_IN_THIS_FACE: &[(u32, &CStr)] = &[
    (subtype_in(DAT_INVALID_HANDLE_CSP), c"DAT_INVALID_HANDLE_CSP"),
    (subtype_in(DAT_INVALID_STATE_SRQ_SHUTDOWN), c"DAT_INVALID_STATE_SRQ_SHUTDOWN"),
];

/// A length as this face's structs hold it (`DAT_SEG_LENGTH`, 32 bits; larger values are
/// reported as the largest it holds).
#[inline]
pub fn seg_len(v: u64) -> DAT_SEG_LENGTH {
    v.min(DAT_SEG_LENGTH::MAX as u64) as DAT_SEG_LENGTH
}

/// Runs `f` on consumer triplets as core scatter/gather elements: DAT 2.0 triplets have the
/// core's layout, so the slice is passed through as it is.
#[inline]
pub fn with_sges<R>(t: &[DAT_LMR_TRIPLET], f: impl FnOnce(&[Sge]) -> DatResult<R>) -> DatResult<R> {
    const _: () = assert!(std::mem::size_of::<DAT_LMR_TRIPLET>() == std::mem::size_of::<Sge>());
    const _: () = assert!(std::mem::align_of::<DAT_LMR_TRIPLET>() == std::mem::align_of::<Sge>());
    const _: () = assert!(std::mem::offset_of!(DAT_LMR_TRIPLET, virtual_address) == std::mem::offset_of!(Sge, addr));
    const _: () = assert!(std::mem::offset_of!(DAT_LMR_TRIPLET, segment_length) == std::mem::offset_of!(Sge, length));
    const _: () = assert!(std::mem::offset_of!(DAT_LMR_TRIPLET, lmr_context) == std::mem::offset_of!(Sge, lkey));
    // SAFETY: both are repr(C) {u64, u32, u32} with the same field offsets, size and alignment
    // (checked above), so the slices are interchangeable.
    f(unsafe { std::slice::from_raw_parts(t.as_ptr().cast::<Sge>(), t.len()) })
}

/// A core scatter/gather element as a consumer triplet.
pub fn lmr_triplet(s: &Sge) -> DAT_LMR_TRIPLET {
    DAT_LMR_TRIPLET { virtual_address: s.addr, segment_length: s.length, lmr_context: s.lkey }
}

/// The remote side of an RDMA triplet: (target address, rmr_context).
#[inline]
pub fn rmr_target(t: &DAT_RMR_TRIPLET) -> (u64, u32) {
    (t.virtual_address, t.rmr_context)
}

/// A core `DAT_SRQ_STATE` (DAT 1.2 values: OPERATIONAL 0, ERROR 1) as DAT 2.0 numbers it.
pub fn srq_state(core: u32) -> DAT_SRQ_STATE {
    if core == datcore::codes::DAT_SRQ_STATE_OPERATIONAL {
        DAT_SRQ_STATE_OPERATIONAL
    } else {
        DAT_SRQ_STATE_ERROR
    }
}

/// The `DAT_CNO_PARAM_MASK` bits `dat_cno_query` accepts. DAT 2.0 numbers its CNO fields 1, 2,
/// 3 (`DAT_CNO_FIELD_PROXY`) and 4 (`DAT_CNO_FIELD_ALL`) rather than as single bits, so any
/// combination of them is a valid request.
pub const CNO_FIELDS: DAT_CNO_PARAM_MASK =
    DAT_CNO_FIELD_IA_HANDLE | DAT_CNO_FIELD_PROXY_TYPE | DAT_CNO_FIELD_PROXY | DAT_CNO_FIELD_ALL;

/// Stores a CNO's proxy agent in a `DAT_CNO_PARAM` (proxy type `DAT_PROXY_TYPE_AGENT`).
pub fn set_cno_agent(p: &mut DAT_CNO_PARAM, agent: DAT_OS_WAIT_PROXY_AGENT) {
    p.proxy_type = DAT_PROXY_TYPE_AGENT;
    p.proxy = DAT_CNO_PARAM_PROXY { agent };
}

/// The DAT 2.0 `DAT_IA_ATTR` fields: zero-based virtual addresses are not supported; the
/// extension interface and version are what the core offers (`InterfaceAdapter::extension`).
pub fn fill_ia_attr_face(ia: &InterfaceAdapter, a: &mut DAT_IA_ATTR) {
    a.zb_supported = DAT_FALSE;
    let (ext, version) = match ia.extension() {
        Some((Extension::Ib, version)) => (DAT_EXTENSION_IB, version),
        None => (DAT_EXTENSION_NONE, 0),
    };
    a.extension_supported = ext;
    a.extension_version = version;
}

/// The DAT 2.0 `DAT_PROVIDER_ATTR` fields: RMRs are bound through an EP, no signal safety, no
/// high availability; the provider-specific attributes announce the IB extensions
/// ([`ib_ext::provider_attrs`]).
pub fn fill_provider_attr_face(ia: &InterfaceAdapter, p: &mut DAT_PROVIDER_ATTR) {
    p.rdma_read_lmr_rmr_context_exposure = DAT_FALSE;
    p.rmr_scope_supported = DAT_RMR_SCOPE_EP;
    p.is_signal_safe = DAT_FALSE;
    p.ha_supported = DAT_FALSE;
    p.ha_loadbalancing = DAT_HA_LB_NONE;
    let attrs = provider_attrs(ia.device.attr().extensions, ia.device.attr().transport_mtu);
    p.num_provider_specific_attr = attrs.len() as DAT_COUNT;
    // The consumer only reads them (OFED's provider hands out a shared table the same way).
    p.provider_specific_attr = attrs.as_ptr() as *mut DAT_NAMED_ATTR;
}

/// The provider-specific attributes: the two transport attributes DAT 2.0 programs read (dtest
/// runs its RDMA read and ping-pong phases only when `DAT_IB_RDMA_READ` is "TRUE"; dtestsrq
/// sizes its messages by `DAT_IB_TRANSPORT_MTU`), then the IB extension attributes with
/// `DAT_COUNTERS` (one more, `DAT_IB_UD`, where UD endpoints work).
const MAX_ATTRS: usize = 8;

/// Named attributes with static addresses (strings and array live for the process).
struct NamedAttrs {
    attrs: [DAT_NAMED_ATTR; MAX_ATTRS],
    len: usize,
}
// SAFETY: the pointers name static C strings; the arrays are never written.
unsafe impl Sync for NamedAttrs {}
unsafe impl Send for NamedAttrs {}

/// The MTUs a transport reports, as `DAT_IB_TRANSPORT_MTU` values.
const MTUS: [(u32, &std::ffi::CStr); 5] =
    [(256, c"256"), (512, c"512"), (1024, c"1024"), (2048, c"2048"), (4096, c"4096")];

/// The provider-specific attribute table for a device's extensions and MTU, one static table
/// per combination.
fn provider_attrs(caps: ExtensionCaps, mtu: u32) -> &'static [DAT_NAMED_ATTR] {
    static TABLES: OnceLock<[[NamedAttrs; MTUS.len()]; 8]> = OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        std::array::from_fn(|bits| {
            let caps = ExtensionCaps { immed_data: bits & 1 != 0, atomics: bits & 2 != 0, ud: bits & 4 != 0 };
            MTUS.map(|(_, mtu)| {
                let transport = [(c"DAT_IB_RDMA_READ", c"TRUE"), (c"DAT_IB_TRANSPORT_MTU", mtu)];
                let mut all = transport.into_iter().chain(ib_ext::provider_attrs(caps)).peekable();
                let mut len = 0;
                let attrs = std::array::from_fn(|_| match all.next() {
                    Some((n, v)) => {
                        len += 1;
                        DAT_NAMED_ATTR { name: n.as_ptr(), value: v.as_ptr() }
                    }
                    None => DAT_NAMED_ATTR { name: std::ptr::null(), value: std::ptr::null() },
                });
                assert!(all.peek().is_none(), "more provider attributes than MAX_ATTRS");
                NamedAttrs { attrs, len }
            })
        })
    });
    // the largest listed MTU not above the device's (4096 for anything larger)
    let m = MTUS.iter().rposition(|(bytes, _)| *bytes <= mtu).unwrap_or(0);
    let t = &tables[caps.immed_data as usize | (caps.atomics as usize) << 1 | (caps.ud as usize) << 2][m];
    &t.attrs[..t.len]
}

/// What a DTO completion was, as `DAT_DTOS` (`DAT_IB_DTOS` for the IB extensions).
fn operation(op: WcOpcode, immed: u32) -> DAT_DTOS {
    if let Some(ext) = IbExtension::of(op, immed) {
        return ext.dto_operation() as DAT_DTOS;
    }
    match op {
        WcOpcode::Send => DAT_DTO_SEND,
        WcOpcode::RdmaWrite => DAT_DTO_RDMA_WRITE,
        WcOpcode::RdmaRead => DAT_DTO_RDMA_READ,
        WcOpcode::Bind => DAT_DTO_BIND_MW,
        _ => DAT_DTO_RECEIVE,
    }
}

/// Writes an IB extension completion's `DAT_IB_EXTENSION_EVENT_DATA` into the event's
/// `event_extension_data` (type at byte 0, status at 4, immediate data at 8, as OFED's header
/// lays it out) and makes the event a `DAT_IB_DTO_EVENT`.
fn extension_event(out: &mut DAT_EVENT, ext: IbExtension, status: u32) {
    out.event_number = DAT_IB_DTO_EVENT as _;
    let words = &mut out.event_extension_data;
    words[0] = ext.ext_type() as u64 | (status as u64) << 32;
    words[1] = ext.immed() as u64;
    if let IbExtension::UdRecv { src_qpn } = ext {
        // remote_ah: no address handle (ah NULL), the sender's queue pair, no address.
        write_remote_ah(out, Handle::NULL, src_qpn, None);
    }
}

/// Byte offsets in `DAT_IB_EXTENSION_EVENT_DATA` (OFED's layout, checked by the ABI tests):
/// `remote_ah.ah`, `remote_ah.qpn`, `remote_ah.ia_addr` (a 28-byte `DAT_SOCK_ADDR6`), `context`.
const EXT_AH: usize = 16;
const EXT_QPN: usize = 24;
const EXT_IA_ADDR: usize = 28;
const EXT_CONTEXT: usize = 56;

/// Writes `remote_ah` (and `context`, which names the same handle for `dat_ib_ud_cm_free`)
/// into the event's extension data.
fn write_remote_ah(out: &mut DAT_EVENT, ah: Handle, qpn: u32, remote: Option<std::net::SocketAddr>) {
    let mut b = [0u8; 64];
    for (i, w) in out.event_extension_data.iter().enumerate() {
        b[i * 8..i * 8 + 8].copy_from_slice(&w.to_ne_bytes());
    }
    b[EXT_AH..EXT_AH + 8].copy_from_slice(&ah.0.to_ne_bytes());
    b[EXT_QPN..EXT_QPN + 4].copy_from_slice(&qpn.to_ne_bytes());
    let addr = remote.map(datcore::ia::to_sockaddr);
    let addr_len = EXT_CONTEXT - EXT_IA_ADDR;
    b[EXT_IA_ADDR..EXT_CONTEXT].fill(0);
    if let Some(a) = &addr {
        // SAFETY: reads the first 28 bytes of a sockaddr_storage (128 bytes of plain data).
        let bytes = unsafe { std::slice::from_raw_parts(a as *const _ as *const u8, addr_len) };
        b[EXT_IA_ADDR..EXT_CONTEXT].copy_from_slice(bytes);
    }
    b[EXT_CONTEXT..].copy_from_slice(&ah.0.to_ne_bytes());
    for (i, w) in out.event_extension_data.iter_mut().enumerate() {
        *w = u64::from_ne_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    }
}

/// A UD connection event's `DAT_IB_EXTENSION_EVENT_DATA`: its type, status 0, and the peer's
/// address handle when established.
pub fn ud_connection_extension(
    out: &mut DAT_EVENT,
    ext_type: u32,
    ah: Handle,
    qpn: u32,
    remote: Option<std::net::SocketAddr>,
) {
    out.event_extension_data[0] = ext_type as u64;
    out.event_extension_data[1] = 0;
    write_remote_ah(out, ah, qpn, remote);
}

/// The core service type of a DAT 2.0 `DAT_SERVICE_TYPE` (RC, or the IB extensions' UD).
pub fn service_type_in(t: DAT_SERVICE_TYPE) -> u32 {
    t
}

/// Writes a DTO completion into `out` as DAT 2.0 reports it: the operation, a 32-bit length,
/// and for an IB extension completion a `DAT_IB_DTO_EVENT` with its extension data.
#[inline]
pub fn dto_event(out: &mut DAT_EVENT, ep: Handle, cookie: u64, status: u32, length: u64, op: WcOpcode, immed: u32) {
    out.event_data.dto_completion_event_data = DAT_DTO_COMPLETION_EVENT_DATA {
        ep_handle: ep.as_ptr(),
        user_cookie: DAT_CONTEXT { as_64: cookie },
        status: status as _,
        transfered_length: seg_len(length),
        operation: operation(op, immed),
        rmr_context: 0,
    };
    if let Some(ext) = IbExtension::of(op, immed) {
        extension_event(out, ext, status);
    }
}

/// A connection request's arrival as DAT 2.0 reports it (private data is never truncated).
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
        truncate_flag: DAT_FALSE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datcore::codes;
    use datcore::DatError;

    #[test]
    fn codes_are_renumbered_and_round_trip() {
        // Below DAT_INVALID_HANDLE1 nothing moves.
        let ia = DatError::invalid_handle(codes::DAT_INVALID_HANDLE_IA).0;
        assert_eq!(code_out(ia), DAT_CLASS_ERROR | DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_IA);
        // From DAT_INVALID_HANDLE1 on: one up; from DAT_PRIVILEGES_READ on: two up.
        assert_eq!(code_out(DatError::invalid_handle(codes::DAT_INVALID_HANDLE1).0) & 0xffff, DAT_INVALID_HANDLE1);
        assert_eq!(code_out(DatError::invalid_arg(3).0), DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | DAT_INVALID_ARG3);
        let pz_in_use = DatError::invalid_state(codes::DAT_INVALID_STATE_PZ_IN_USE).0;
        assert_eq!(code_out(pz_in_use) & 0xffff, DAT_INVALID_STATE_PZ_IN_USE);
        let srq_in_use = DatError::invalid_state(codes::DAT_INVALID_STATE_SRQ_IN_USE).0;
        assert_eq!(code_out(srq_in_use) & 0xffff, DAT_INVALID_STATE_SRQ_IN_USE);
        let not_reg = DatError::new(codes::DAT_PROVIDER_NOT_FOUND, codes::DAT_NAME_NOT_REGISTERED).0;
        assert_eq!(code_out(not_reg), DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND | DAT_NAME_NOT_REGISTERED);
        assert_eq!(code_out(DatError::NOT_IMPLEMENTED.0), DAT_CLASS_ERROR | DAT_NOT_IMPLEMENTED);
        assert_eq!(code_out(0), DAT_SUCCESS);
        // Every core subtype survives the way out and back.
        for sub in 0..=LAST_12 {
            for ty in [codes::DAT_INVALID_HANDLE, codes::DAT_INVALID_STATE] {
                let core = DatError::new(ty, sub).0;
                assert_eq!(code_in(code_out(core)), core, "{core:#x}");
            }
        }
        assert_eq!(code_in(code_out(DatError::NOT_IMPLEMENTED.0)), DatError::NOT_IMPLEMENTED.0);
        // DAT 2.0-only subtypes from a provider come back unchanged.
        for sub in [DAT_INVALID_HANDLE_CSP, DAT_INVALID_STATE_SRQ_SHUTDOWN] {
            let face = DAT_CLASS_ERROR | DAT_INVALID_STATE | sub;
            assert_eq!(code_out(code_in(face)), face);
        }
    }

    #[test]
    fn triplets_convert_both_ways() {
        let t = [
            DAT_LMR_TRIPLET { virtual_address: 0x1000, segment_length: 64, lmr_context: 7 },
            DAT_LMR_TRIPLET { virtual_address: 0x2000, segment_length: u32::MAX, lmr_context: 9 },
        ];
        let got = with_sges(&t, |s| Ok(s.to_vec())).unwrap();
        assert_eq!(got, [Sge { addr: 0x1000, length: 64, lkey: 7 }, Sge { addr: 0x2000, length: u32::MAX, lkey: 9 }]);
        assert!(with_sges(&[], |s| Ok(s.is_empty())).unwrap());
        let back = lmr_triplet(&got[1]);
        assert_eq!((back.virtual_address, back.segment_length, back.lmr_context), (0x2000, u32::MAX, 9));
    }

    #[test]
    fn srq_states_swap() {
        assert_eq!(srq_state(codes::DAT_SRQ_STATE_OPERATIONAL), DAT_SRQ_STATE_OPERATIONAL);
        assert_eq!(srq_state(codes::DAT_SRQ_STATE_ERROR), DAT_SRQ_STATE_ERROR);
        assert_ne!(DAT_SRQ_STATE_OPERATIONAL, codes::DAT_SRQ_STATE_OPERATIONAL);
    }
}
