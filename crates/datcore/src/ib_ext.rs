//! The IB extensions of DAT 2.0 (`dat2/dat_ib_extensions.h`) as the core carries them: what a
//! completion of an extension operation reports, and how an IA advertises the operations.
//!
//! The operations themselves are provider send operations ([`SendOp::RdmaWriteImmed`],
//! [`SendOp::Atomic`]) posted through [`Endpoint::post_request`](crate::endpoint::Endpoint::post_request);
//! their completions are DTO events whose operation (and immediate data) name the extension
//! ([`IbExtension::of`]). A face without extensions (DAT 1.2) reports them as plain DTO
//! completions.
//!
//! [`SendOp::RdmaWriteImmed`]: crate::provider::SendOp::RdmaWriteImmed
//! [`SendOp::Atomic`]: crate::provider::SendOp::Atomic

use crate::provider::{ExtensionCaps, WcOpcode};
use std::ffi::CStr;

/// `DAT_IB_EXT_TYPE` values.
pub const DAT_IB_FETCH_AND_ADD: u32 = 0x00;
pub const DAT_IB_CMP_AND_SWAP: u32 = 0x01;
pub const DAT_IB_RDMA_WRITE_IMMED: u32 = 0x02;
pub const DAT_IB_RDMA_WRITE_IMMED_DATA: u32 = 0x03;
pub const DAT_IB_RECV_IMMED_DATA: u32 = 0x04;
pub const DAT_IB_UD_CONNECT_REQUEST: u32 = 0x05;
pub const DAT_IB_UD_REMOTE_AH: u32 = 0x06;
pub const DAT_IB_UD_PASSIVE_REMOTE_AH: u32 = 0x07;
pub const DAT_IB_UD_SEND: u32 = 0x08;
pub const DAT_IB_UD_RECV: u32 = 0x09;
pub const DAT_IB_UD_CONNECT_REJECT: u32 = 0x0a;
pub const DAT_IB_UD_CONNECT_ERROR: u32 = 0x0b;

/// `DAT_IB_EVENT_NUMBER` values of UD connection management.
pub const DAT_IB_UD_CONNECTION_REQUEST_EVENT: u32 = 0x40001;
pub const DAT_IB_UD_CONNECTION_EVENT_ESTABLISHED: u32 = 0x40002;
pub const DAT_IB_UD_CONNECTION_REJECT_EVENT: u32 = 0x40003;
pub const DAT_IB_UD_CONNECTION_ERROR_EVENT: u32 = 0x40004;

/// `DAT_IB_DTOS` values (DAT_DTO_COMPLETION_EVENT_DATA.operation of extension completions).
pub const DAT_IB_DTO_RDMA_WRITE_IMMED: u32 = 0x08;
pub const DAT_IB_DTO_RECV_IMMED: u32 = 0x09;
pub const DAT_IB_DTO_FETCH_ADD: u32 = 0x0a;
pub const DAT_IB_DTO_CMP_SWAP: u32 = 0x0b;
pub const DAT_IB_DTO_RECV_MSG_IMMED: u32 = 0x0c;
pub const DAT_IB_DTO_SEND_UD: u32 = 0x0d;
pub const DAT_IB_DTO_RECV_UD: u32 = 0x0e;

/// What an extension completion reports (`DAT_IB_EXTENSION_EVENT_DATA`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IbExtension {
    /// The initiator's completion of `dat_ib_post_rdma_write_immed`.
    RdmaWriteImmed,
    /// A receive consumed by the peer's RDMA write with immediate data.
    RdmaWriteImmedData {
        immed: u32,
    },
    /// A receive filled by a send with immediate data.
    RecvImmedData {
        immed: u32,
    },
    FetchAndAdd,
    CmpAndSwap,
    /// The sender's completion of `dat_ib_post_send_ud`.
    UdSend,
    /// A receive of a UD endpoint; the sender's queue pair number is reported in the
    /// extension data's `remote_ah.qpn`.
    UdRecv {
        src_qpn: u32,
    },
}

impl IbExtension {
    /// The extension a completion of `op` reports, if any (`immed`: its immediate data, see
    /// [`WorkCompletion::immed`](crate::provider::WorkCompletion::immed)).
    pub fn of(op: WcOpcode, immed: u32) -> Option<IbExtension> {
        match op {
            WcOpcode::RdmaWriteImmed => Some(IbExtension::RdmaWriteImmed),
            WcOpcode::RecvRdmaWriteImmed => Some(IbExtension::RdmaWriteImmedData { immed }),
            WcOpcode::RecvImmed => Some(IbExtension::RecvImmedData { immed }),
            WcOpcode::FetchAdd => Some(IbExtension::FetchAndAdd),
            WcOpcode::CmpSwap => Some(IbExtension::CmpAndSwap),
            WcOpcode::SendUd => Some(IbExtension::UdSend),
            WcOpcode::RecvUd => Some(IbExtension::UdRecv { src_qpn: immed }),
            WcOpcode::Send | WcOpcode::Recv | WcOpcode::RdmaWrite | WcOpcode::RdmaRead | WcOpcode::Bind => None,
        }
    }

    /// `DAT_IB_EXTENSION_EVENT_DATA.type`.
    pub fn ext_type(self) -> u32 {
        match self {
            IbExtension::RdmaWriteImmed => DAT_IB_RDMA_WRITE_IMMED,
            IbExtension::RdmaWriteImmedData { .. } => DAT_IB_RDMA_WRITE_IMMED_DATA,
            IbExtension::RecvImmedData { .. } => DAT_IB_RECV_IMMED_DATA,
            IbExtension::FetchAndAdd => DAT_IB_FETCH_AND_ADD,
            IbExtension::CmpAndSwap => DAT_IB_CMP_AND_SWAP,
            IbExtension::UdSend => DAT_IB_UD_SEND,
            IbExtension::UdRecv { .. } => DAT_IB_UD_RECV,
        }
    }

    /// `DAT_DTO_COMPLETION_EVENT_DATA.operation` (a `DAT_IB_DTOS` value).
    pub fn dto_operation(self) -> u32 {
        match self {
            IbExtension::RdmaWriteImmed => DAT_IB_DTO_RDMA_WRITE_IMMED,
            IbExtension::RdmaWriteImmedData { .. } => DAT_IB_DTO_RECV_IMMED,
            IbExtension::RecvImmedData { .. } => DAT_IB_DTO_RECV_MSG_IMMED,
            IbExtension::FetchAndAdd => DAT_IB_DTO_FETCH_ADD,
            IbExtension::CmpAndSwap => DAT_IB_DTO_CMP_SWAP,
            IbExtension::UdSend => DAT_IB_DTO_SEND_UD,
            IbExtension::UdRecv { .. } => DAT_IB_DTO_RECV_UD,
        }
    }

    /// `DAT_IB_EXTENSION_EVENT_DATA.val.immed.data` (0 where the type has none).
    pub fn immed(self) -> u32 {
        match self {
            IbExtension::RdmaWriteImmedData { immed } | IbExtension::RecvImmedData { immed } => immed,
            _ => 0,
        }
    }
}

/// The provider-specific attributes (`DAT_PROVIDER_ATTR.provider_specific_attr`) that announce
/// each extension, named as in `dat_ib_extensions.h` with the values "TRUE" / "FALSE", as
/// consumers probe for them (dtestx reads `DAT_IB_FETCH_AND_ADD` and `DAT_IB_CMP_AND_SWAP`).
/// `DAT_IB_UD` is listed only where UD endpoints work (consumers such as Intel MPI look for
/// the name). `DAT_COUNTERS` is listed always: the core counts on every provider
/// ([`crate::counters`]; dtestx -p reads counters only where it is listed). With
/// [`InterfaceAdapter::extension`](crate::ia::InterfaceAdapter::extension)
/// (the IA attributes' `extension_supported` / `extension_version`) this is the whole
/// advertisement.
pub fn provider_attrs(caps: ExtensionCaps) -> impl Iterator<Item = (&'static CStr, &'static CStr)> {
    let truth = |b: bool| if b { c"TRUE" } else { c"FALSE" };
    let ud = caps.ud.then_some((c"DAT_IB_UD", c"TRUE"));
    [
        (c"DAT_EXTENSION_INTERFACE", truth(caps.any())),
        (c"DAT_IB_FETCH_AND_ADD", truth(caps.atomics)),
        (c"DAT_IB_CMP_AND_SWAP", truth(caps.atomics)),
        (c"DAT_IB_IMMED_DATA", truth(caps.immed_data)),
        (c"DAT_COUNTERS", c"TRUE"),
    ]
    .into_iter()
    .chain(ud)
}
