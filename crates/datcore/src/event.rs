//! DAT events as the core carries them; each face converts them to its own `DAT_EVENT` layout.

use crate::codes::*;
use crate::handle::Handle;
use crate::provider::{WcOpcode, WcStatus, WorkCompletion};

/// What an event carries, by kind.
#[derive(Clone, Copy, Debug)]
pub enum EventData {
    /// A DTO completion; `op` is what completed (DAT 2.0 shows it as `DAT_DTOS operation`),
    /// `immed` the immediate data of a receive that carried some ([`IbExtension::of`](crate::ib_ext::IbExtension::of) says
    /// which IB extension a completion reports; the 1.2 face shows a plain DTO completion).
    Dto {
        ep: Handle,
        cookie: u64,
        status: u32,
        length: u64,
        op: WcOpcode,
        immed: u32,
    },
    RmrBind {
        rmr: Handle,
        cookie: u64,
        status: u32,
    },
    ConnectionRequest {
        sp: Handle,
        local_address: *const libc::sockaddr,
        conn_qual: u64,
        cr: Handle,
    },
    Connection {
        ep: Handle,
        private_data_size: i32,
        private_data: *const u8,
    },
    /// A connection event of a UD endpoint (`DAT_IB_UD_CONNECTION_*_EVENT`): the connection
    /// data, and the extension data the 2.0 face reports (`ext_type` a `DAT_IB_EXT_TYPE`; `ah`,
    /// `qpn` and `remote` the peer's address handle when established, else NULL / 0).
    UdConnection {
        ep: Handle,
        private_data_size: i32,
        private_data: *const u8,
        ext_type: u32,
        ah: Handle,
        qpn: u32,
        remote: Option<std::net::SocketAddr>,
    },
    AsyncError {
        handle: Handle,
        reason: u32,
    },
    Software {
        pointer: u64,
    },
}

/// One event: its `DAT_EVENT_NUMBER`, the EVD it came from, and its data.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub number: u32,
    pub evd: Handle,
    pub data: EventData,
}

// SAFETY: the raw pointers in events point into memory owned by live DAT objects (IA addresses,
// EP private-data buffers) and are only handed to the consumer, never dereferenced by the core.
unsafe impl Send for Event {}
// SAFETY: as above; events are plain values.
unsafe impl Sync for Event {}

impl Event {
    pub const EMPTY: Event = Event { number: 0, evd: Handle::NULL, data: EventData::Software { pointer: 0 } };
}

/// The DTO completion status a provider completion maps to.
#[inline]
pub fn dto_status(s: WcStatus) -> u32 {
    match s {
        WcStatus::Success => DAT_DTO_SUCCESS,
        WcStatus::Flushed => DAT_DTO_ERR_FLUSHED,
        WcStatus::LocalLength => DAT_DTO_ERR_LOCAL_LENGTH,
        WcStatus::LocalProtection => DAT_DTO_ERR_LOCAL_PROTECTION,
        WcStatus::LocalOperation => DAT_DTO_ERR_LOCAL_EP,
        WcStatus::RemoteAccess => DAT_DTO_ERR_REMOTE_ACCESS,
        WcStatus::RemoteOperation => DAT_DTO_ERR_REMOTE_RESPONDER,
        WcStatus::BadResponse => DAT_DTO_ERR_BAD_RESPONSE,
        WcStatus::TransportRetry => DAT_DTO_ERR_TRANSPORT,
        WcStatus::ReceiverNotReady => DAT_DTO_ERR_RECEIVER_NOT_READY,
        WcStatus::BindFailure => DAT_RMR_OPERATION_FAILED,
    }
}

/// A DTO completion event for a provider work completion.
#[inline]
pub fn from_completion(evd: Handle, wc: &WorkCompletion) -> Event {
    Event {
        number: DAT_DTO_COMPLETION_EVENT,
        evd,
        data: EventData::Dto {
            ep: Handle(wc.context),
            cookie: wc.wr_id,
            status: dto_status(wc.status),
            length: wc.byte_len,
            op: wc.opcode,
            immed: wc.immed,
        },
    }
}
