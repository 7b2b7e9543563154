//! `dat_strerror` text: the names of the DAT 1.2 return-code parts (shared by both faces: the
//! DAT 2.0 face turns its codes into the core's DAT 1.2 numbering first, `convert::code_in`),
//! and of the parts only the face has (`convert::TYPE_NAMES_ONLY_IN_THIS_FACE`,
//! `SUBTYPE_NAMES_ONLY_IN_THIS_FACE`: DAT 2.0's `DAT_RESERVED_LMR`, `DAT_PORT_IN_USE`,
//! `DAT_COMM_NOT_SUPPORTED`, `DAT_EXTENSION_BASE`, `DAT_INVALID_HANDLE_CSP`,
//! `DAT_INVALID_STATE_SRQ_SHUTDOWN`; OFED's libdat2 refuses these as unknown, we name them).
//!
//! As in the reference libdat: the major message names `DAT_GET_TYPE(value)`,
//! the minor message names `DAT_GET_SUBTYPE(value)`; the class bits are
//! ignored.  `DAT_NO_SUBTYPE` gives the empty string and
//! `DAT_INVALID_STATE_EP_EVD_RECV` is spelled `"DAT_INVALID_STATE_EP_EVD_RCV"`.
//!
//! `DAT_NOT_IMPLEMENTED` (0xffff0000 in the OFED 1.2 headers) sets bits that
//! `DAT_GET_TYPE` masks off: its type part is 0x3fff0000, which no other code
//! uses, so that type part is named `"DAT_NOT_IMPLEMENTED"`.  (The reference
//! switch never reaches it and refuses the code; we describe it, since our
//! library returns it.)
//!
//! A value whose type or subtype is unknown is refused with
//! `DAT_INVALID_PARAMETER` (0x00060000, without the error class bit, as the
//! reference returns it); the messages are still set, to [`UNKNOWN_TYPE`] /
//! [`UNKNOWN_SUBTYPE`] for the unknown part, so a consumer that prints them
//! without looking at the return value prints text, not garbage.  A consumer
//! that passes no minor pointer asks for the major message only: as in the
//! reference, only the type then has to be known.

use datcore::codes::*;
use std::ffi::CStr;

type DAT_RETURN = u32;
#[cfg(test)]
const DAT_CLASS_WARNING: u32 = 0x4000_0000;
const DAT_TYPE_MASK: u32 = 0x3fff_0000;
const DAT_SUBTYPE_MASK: u32 = 0xffff;

/// `DAT_GET_TYPE(status)`: bits 29..16 of a return code.
const fn DAT_GET_TYPE(status: DAT_RETURN) -> DAT_RETURN {
    status & DAT_TYPE_MASK
}

/// `DAT_GET_SUBTYPE(status)`: bits 15..0 of a return code.
const fn DAT_GET_SUBTYPE(status: DAT_RETURN) -> DAT_RETURN {
    status & DAT_SUBTYPE_MASK
}

/// Major message of a value whose type part no DAT 1.2 code uses.
pub const UNKNOWN_TYPE: &CStr = c"unknown DAT return type";
/// Minor message of a value whose subtype part no DAT 1.2 code uses.
pub const UNKNOWN_SUBTYPE: &CStr = c"unknown DAT return subtype";

/// The type part of `DAT_NOT_IMPLEMENTED` (see the module note).
const NOT_IMPLEMENTED_TYPE: DAT_RETURN = DAT_GET_TYPE(DAT_NOT_IMPLEMENTED);

/// The name a face-only table gives `part`, if any.
fn face_only_name(names: &[(u32, &'static CStr)], part: DAT_RETURN) -> Option<&'static CStr> {
    names.iter().find(|&&(value, _)| value == part).map(|&(_, name)| name)
}

/// The major (type) name of a return code, if the type is known.
pub fn major_name(value: DAT_RETURN) -> Option<&'static CStr> {
    let ty = DAT_GET_TYPE(value);
    Some(match ty {
        DAT_SUCCESS => c"DAT_SUCCESS",
        DAT_ABORT => c"DAT_ABORT",
        DAT_CONN_QUAL_IN_USE => c"DAT_CONN_QUAL_IN_USE",
        DAT_INSUFFICIENT_RESOURCES => c"DAT_INSUFFICIENT_RESOURCES",
        DAT_INTERNAL_ERROR => c"DAT_INTERNAL_ERROR",
        DAT_INVALID_HANDLE => c"DAT_INVALID_HANDLE",
        DAT_INVALID_PARAMETER => c"DAT_INVALID_PARAMETER",
        DAT_INVALID_STATE => c"DAT_INVALID_STATE",
        DAT_LENGTH_ERROR => c"DAT_LENGTH_ERROR",
        DAT_MODEL_NOT_SUPPORTED => c"DAT_MODEL_NOT_SUPPORTED",
        DAT_PROVIDER_NOT_FOUND => c"DAT_PROVIDER_NOT_FOUND",
        DAT_PRIVILEGES_VIOLATION => c"DAT_PRIVILEGES_VIOLATION",
        DAT_PROTECTION_VIOLATION => c"DAT_PROTECTION_VIOLATION",
        DAT_QUEUE_EMPTY => c"DAT_QUEUE_EMPTY",
        DAT_QUEUE_FULL => c"DAT_QUEUE_FULL",
        DAT_TIMEOUT_EXPIRED => c"DAT_TIMEOUT_EXPIRED",
        DAT_PROVIDER_ALREADY_REGISTERED => c"DAT_PROVIDER_ALREADY_REGISTERED",
        DAT_PROVIDER_IN_USE => c"DAT_PROVIDER_IN_USE",
        DAT_INVALID_ADDRESS => c"DAT_INVALID_ADDRESS",
        DAT_INTERRUPTED_CALL => c"DAT_INTERRUPTED_CALL",
        DAT_CONN_QUAL_UNAVAILABLE => c"DAT_CONN_QUAL_UNAVAILABLE",
        NOT_IMPLEMENTED_TYPE => c"DAT_NOT_IMPLEMENTED",
        _ => return face_only_name(crate::convert::TYPE_NAMES_ONLY_IN_THIS_FACE, ty),
    })
}

/// The minor (subtype) name of a return code, if the subtype is known.
pub fn minor_name(value: DAT_RETURN) -> Option<&'static CStr> {
    let subtype = DAT_GET_SUBTYPE(value);
    Some(match subtype {
        DAT_NO_SUBTYPE => c"",
        DAT_SUB_INTERRUPTED => c"DAT_SUB_INTERRUPTED",
        DAT_RESOURCE_MEMORY => c"DAT_RESOURCE_MEMORY",
        DAT_RESOURCE_DEVICE => c"DAT_RESOURCE_DEVICE",
        DAT_RESOURCE_TEP => c"DAT_RESOURCE_TEP",
        DAT_RESOURCE_TEVD => c"DAT_RESOURCE_TEVD",
        DAT_RESOURCE_PROTECTION_DOMAIN => c"DAT_RESOURCE_PROTECTION_DOMAIN",
        DAT_RESOURCE_MEMORY_REGION => c"DAT_RESOURCE_MEMORY_REGION",
        DAT_RESOURCE_ERROR_HANDLER => c"DAT_RESOURCE_ERROR_HANDLER",
        DAT_RESOURCE_CREDITS => c"DAT_RESOURCE_CREDITS",
        DAT_RESOURCE_SRQ => c"DAT_RESOURCE_SRQ",
        DAT_INVALID_HANDLE_IA => c"DAT_INVALID_HANDLE_IA",
        DAT_INVALID_HANDLE_EP => c"DAT_INVALID_HANDLE_EP",
        DAT_INVALID_HANDLE_LMR => c"DAT_INVALID_HANDLE_LMR",
        DAT_INVALID_HANDLE_RMR => c"DAT_INVALID_HANDLE_RMR",
        DAT_INVALID_HANDLE_PZ => c"DAT_INVALID_HANDLE_PZ",
        DAT_INVALID_HANDLE_PSP => c"DAT_INVALID_HANDLE_PSP",
        DAT_INVALID_HANDLE_RSP => c"DAT_INVALID_HANDLE_RSP",
        DAT_INVALID_HANDLE_CR => c"DAT_INVALID_HANDLE_CR",
        DAT_INVALID_HANDLE_CNO => c"DAT_INVALID_HANDLE_CNO",
        DAT_INVALID_HANDLE_EVD_CR => c"DAT_INVALID_HANDLE_EVD_CR",
        DAT_INVALID_HANDLE_EVD_REQUEST => c"DAT_INVALID_HANDLE_EVD_REQUEST",
        DAT_INVALID_HANDLE_EVD_RECV => c"DAT_INVALID_HANDLE_EVD_RECV",
        DAT_INVALID_HANDLE_EVD_CONN => c"DAT_INVALID_HANDLE_EVD_CONN",
        DAT_INVALID_HANDLE_EVD_ASYNC => c"DAT_INVALID_HANDLE_EVD_ASYNC",
        DAT_INVALID_HANDLE_SRQ => c"DAT_INVALID_HANDLE_SRQ",
        DAT_INVALID_HANDLE1 => c"DAT_INVALID_HANDLE1",
        DAT_INVALID_HANDLE2 => c"DAT_INVALID_HANDLE2",
        DAT_INVALID_HANDLE3 => c"DAT_INVALID_HANDLE3",
        DAT_INVALID_HANDLE4 => c"DAT_INVALID_HANDLE4",
        DAT_INVALID_HANDLE5 => c"DAT_INVALID_HANDLE5",
        DAT_INVALID_HANDLE6 => c"DAT_INVALID_HANDLE6",
        DAT_INVALID_HANDLE7 => c"DAT_INVALID_HANDLE7",
        DAT_INVALID_HANDLE8 => c"DAT_INVALID_HANDLE8",
        DAT_INVALID_HANDLE9 => c"DAT_INVALID_HANDLE9",
        DAT_INVALID_HANDLE10 => c"DAT_INVALID_HANDLE10",
        DAT_INVALID_ARG1 => c"DAT_INVALID_ARG1",
        DAT_INVALID_ARG2 => c"DAT_INVALID_ARG2",
        DAT_INVALID_ARG3 => c"DAT_INVALID_ARG3",
        DAT_INVALID_ARG4 => c"DAT_INVALID_ARG4",
        DAT_INVALID_ARG5 => c"DAT_INVALID_ARG5",
        DAT_INVALID_ARG6 => c"DAT_INVALID_ARG6",
        DAT_INVALID_ARG7 => c"DAT_INVALID_ARG7",
        DAT_INVALID_ARG8 => c"DAT_INVALID_ARG8",
        DAT_INVALID_ARG9 => c"DAT_INVALID_ARG9",
        DAT_INVALID_ARG10 => c"DAT_INVALID_ARG10",
        DAT_INVALID_STATE_EP_UNCONNECTED => c"DAT_INVALID_STATE_EP_UNCONNECTED",
        DAT_INVALID_STATE_EP_ACTCONNPENDING => c"DAT_INVALID_STATE_EP_ACTCONNPENDING",
        DAT_INVALID_STATE_EP_PASSCONNPENDING => c"DAT_INVALID_STATE_EP_PASSCONNPENDING",
        DAT_INVALID_STATE_EP_TENTCONNPENDING => c"DAT_INVALID_STATE_EP_TENTCONNPENDING",
        DAT_INVALID_STATE_EP_CONNECTED => c"DAT_INVALID_STATE_EP_CONNECTED",
        DAT_INVALID_STATE_EP_DISCONNECTED => c"DAT_INVALID_STATE_EP_DISCONNECTED",
        DAT_INVALID_STATE_EP_RESERVED => c"DAT_INVALID_STATE_EP_RESERVED",
        DAT_INVALID_STATE_EP_COMPLPENDING => c"DAT_INVALID_STATE_EP_COMPLPENDING",
        DAT_INVALID_STATE_EP_DISCPENDING => c"DAT_INVALID_STATE_EP_DISCPENDING",
        DAT_INVALID_STATE_EP_PROVIDERCONTROL => c"DAT_INVALID_STATE_EP_PROVIDERCONTROL",
        DAT_INVALID_STATE_EP_NOTREADY => c"DAT_INVALID_STATE_EP_NOTREADY",
        DAT_INVALID_STATE_EP_RECV_WATERMARK => c"DAT_INVALID_STATE_EP_RECV_WATERMARK",
        DAT_INVALID_STATE_EP_PZ => c"DAT_INVALID_STATE_EP_PZ",
        DAT_INVALID_STATE_EP_EVD_REQUEST => c"DAT_INVALID_STATE_EP_EVD_REQUEST",
        DAT_INVALID_STATE_EP_EVD_RECV => c"DAT_INVALID_STATE_EP_EVD_RCV",
        DAT_INVALID_STATE_EP_EVD_CONNECT => c"DAT_INVALID_STATE_EP_EVD_CONNECT",
        DAT_INVALID_STATE_EP_UNCONFIGURED => c"DAT_INVALID_STATE_EP_UNCONFIGURED",
        DAT_INVALID_STATE_EP_UNCONFRESERVED => c"DAT_INVALID_STATE_EP_UNCONFRESERVED",
        DAT_INVALID_STATE_EP_UNCONFPASSIVE => c"DAT_INVALID_STATE_EP_UNCONFPASSIVE",
        DAT_INVALID_STATE_EP_UNCONFTENTATIVE => c"DAT_INVALID_STATE_EP_UNCONFTENTATIVE",
        DAT_INVALID_STATE_CNO_IN_USE => c"DAT_INVALID_STATE_CNO_IN_USE",
        DAT_INVALID_STATE_CNO_DEAD => c"DAT_INVALID_STATE_CNO_DEAD",
        DAT_INVALID_STATE_EVD_OPEN => c"DAT_INVALID_STATE_EVD_OPEN",
        DAT_INVALID_STATE_EVD_ENABLED => c"DAT_INVALID_STATE_EVD_ENABLED",
        DAT_INVALID_STATE_EVD_DISABLED => c"DAT_INVALID_STATE_EVD_DISABLED",
        DAT_INVALID_STATE_EVD_WAITABLE => c"DAT_INVALID_STATE_EVD_WAITABLE",
        DAT_INVALID_STATE_EVD_UNWAITABLE => c"DAT_INVALID_STATE_EVD_UNWAITABLE",
        DAT_INVALID_STATE_EVD_IN_USE => c"DAT_INVALID_STATE_EVD_IN_USE",
        DAT_INVALID_STATE_EVD_CONFIG_NOTIFY => c"DAT_INVALID_STATE_EVD_CONFIG_NOTIFY",
        DAT_INVALID_STATE_EVD_CONFIG_SOLICITED => c"DAT_INVALID_STATE_EVD_CONFIG_SOLICITED",
        DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD => c"DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD",
        DAT_INVALID_STATE_EVD_WAITER => c"DAT_INVALID_STATE_EVD_WAITER",
        DAT_INVALID_STATE_EVD_ASYNC => c"DAT_INVALID_STATE_EVD_ASYNC",
        DAT_INVALID_STATE_IA_IN_USE => c"DAT_INVALID_STATE_IA_IN_USE",
        DAT_INVALID_STATE_LMR_IN_USE => c"DAT_INVALID_STATE_LMR_IN_USE",
        DAT_INVALID_STATE_LMR_FREE => c"DAT_INVALID_STATE_LMR_FREE",
        DAT_INVALID_STATE_PZ_IN_USE => c"DAT_INVALID_STATE_PZ_IN_USE",
        DAT_INVALID_STATE_PZ_FREE => c"DAT_INVALID_STATE_PZ_FREE",
        DAT_INVALID_STATE_SRQ_OPERATIONAL => c"DAT_INVALID_STATE_SRQ_OPERATIONAL",
        DAT_INVALID_STATE_SRQ_ERROR => c"DAT_INVALID_STATE_SRQ_ERROR",
        DAT_INVALID_STATE_SRQ_IN_USE => c"DAT_INVALID_STATE_SRQ_IN_USE",
        DAT_PRIVILEGES_READ => c"DAT_PRIVILEGES_READ",
        DAT_PRIVILEGES_WRITE => c"DAT_PRIVILEGES_WRITE",
        DAT_PRIVILEGES_RDMA_READ => c"DAT_PRIVILEGES_RDMA_READ",
        DAT_PRIVILEGES_RDMA_WRITE => c"DAT_PRIVILEGES_RDMA_WRITE",
        DAT_PROTECTION_READ => c"DAT_PROTECTION_READ",
        DAT_PROTECTION_WRITE => c"DAT_PROTECTION_WRITE",
        DAT_PROTECTION_RDMA_READ => c"DAT_PROTECTION_RDMA_READ",
        DAT_PROTECTION_RDMA_WRITE => c"DAT_PROTECTION_RDMA_WRITE",
        DAT_INVALID_ADDRESS_UNSUPPORTED => c"DAT_INVALID_ADDRESS_UNSUPPORTED",
        DAT_INVALID_ADDRESS_UNREACHABLE => c"DAT_INVALID_ADDRESS_UNREACHABLE",
        DAT_INVALID_ADDRESS_MALFORMED => c"DAT_INVALID_ADDRESS_MALFORMED",
        DAT_NAME_NOT_REGISTERED => c"DAT_NAME_NOT_REGISTERED",
        DAT_MAJOR_NOT_FOUND => c"DAT_MAJOR_NOT_FOUND",
        DAT_MINOR_NOT_FOUND => c"DAT_MINOR_NOT_FOUND",
        DAT_THREAD_SAFETY_NOT_FOUND => c"DAT_THREAD_SAFETY_NOT_FOUND",
        _ => return face_only_name(crate::convert::SUBTYPE_NAMES_ONLY_IN_THIS_FACE, subtype),
    })
}

/// What `dat_strerror` reports for `value`: both messages (placeholders for
/// an unknown part) and which parts were known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Messages {
    pub major: &'static CStr,
    pub minor: &'static CStr,
    pub type_known: bool,
    pub subtype_known: bool,
}

impl Messages {
    /// Whether the messages asked for name real parts: the major always, the minor only when
    /// the consumer asked for it (`minor_wanted`, a non-NULL minor pointer).
    pub fn known(&self, minor_wanted: bool) -> bool {
        self.type_known && (self.subtype_known || !minor_wanted)
    }
}

/// The messages of `value`; see the module note for unknown parts.
pub fn messages(value: DAT_RETURN) -> Messages {
    let (major, minor) = (major_name(value), minor_name(value));
    Messages {
        major: major.unwrap_or(UNKNOWN_TYPE),
        minor: minor.unwrap_or(UNKNOWN_SUBTYPE),
        type_known: major.is_some(),
        subtype_known: minor.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `DAT_ERROR(type, subtype)`.
    const fn DAT_ERROR(ty: u32, subtype: u32) -> u32 {
        DAT_CLASS_ERROR | ty | subtype
    }

    /// `dat_strerror` with both pointers: `Ok((major, minor))`, or
    /// `Err(DAT_INVALID_PARAMETER)` (0x00060000) for an unknown type or subtype.
    fn strerror(value: u32) -> Result<(&'static CStr, &'static CStr), u32> {
        let m = messages(value);
        if m.known(true) {
            Ok((m.major, m.minor))
        } else {
            Err(DAT_INVALID_PARAMETER)
        }
    }

    fn s(value: u32) -> (String, String) {
        let (a, b) = strerror(value).expect("known code");
        (a.to_str().unwrap().to_owned(), b.to_str().unwrap().to_owned())
    }

    #[test]
    fn success() {
        assert_eq!(s(DAT_SUCCESS), ("DAT_SUCCESS".into(), "".into()));
    }

    #[test]
    fn error_with_subtype() {
        let v = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
        assert_eq!(v, 0x8005000c);
        assert_eq!(s(v), ("DAT_INVALID_HANDLE".into(), "DAT_INVALID_HANDLE_EP".into()));
        let v = DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
        assert_eq!(v, 0x800a0062);
        assert_eq!(s(v), ("DAT_PROVIDER_NOT_FOUND".into(), "DAT_NAME_NOT_REGISTERED".into()));
    }

    #[test]
    fn class_bits_ignored() {
        assert_eq!(s(DAT_CLASS_WARNING | DAT_QUEUE_EMPTY), ("DAT_QUEUE_EMPTY".into(), "".into()));
        assert_eq!(s(DAT_TIMEOUT_EXPIRED), ("DAT_TIMEOUT_EXPIRED".into(), "".into()));
    }

    #[test]
    fn rcv_spelling() {
        let v = DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_EVD_RECV);
        assert_eq!(s(v).1, "DAT_INVALID_STATE_EP_EVD_RCV");
    }

    #[test]
    fn unknown() {
        assert_eq!(strerror(0x12345678), Err(0x00060000));
        // known type, unknown subtype
        assert_eq!(strerror(DAT_ERROR(DAT_INVALID_HANDLE, 0x7777)), Err(DAT_INVALID_PARAMETER));
        // first value past the last 1.2 subtype; past the last type of both faces (2.0's
        // DAT_COMM_NOT_SUPPORTED is 0x170000)
        assert_eq!(strerror(DAT_THREAD_SAFETY_NOT_FOUND + 1), Err(DAT_INVALID_PARAMETER));
        assert_eq!(strerror(0x180000), Err(DAT_INVALID_PARAMETER));
    }

    #[test]
    fn unknown_parts_still_get_text() {
        let m = messages(DAT_ERROR(DAT_INVALID_HANDLE, 0x7777));
        assert_eq!((m.major, m.minor, m.known(true)), (c"DAT_INVALID_HANDLE", UNKNOWN_SUBTYPE, false));
        let m = messages(DAT_ERROR(0x2a0000, DAT_INVALID_ARG2));
        assert_eq!((m.major, m.minor, m.known(true)), (UNKNOWN_TYPE, c"DAT_INVALID_ARG2", false));
    }

    /// Without a minor pointer only the type has to be known.
    #[test]
    fn major_only() {
        assert!(messages(DAT_SUCCESS).known(false));
        assert!(messages(DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ)).known(false));
        assert!(messages(DAT_ERROR(DAT_INVALID_HANDLE, 0x7777)).known(false));
        assert!(!messages(DAT_ERROR(0x2a0000, DAT_INVALID_ARG2)).known(false));
        assert!(!messages(0x12345678).known(false));
    }

    #[test]
    fn not_implemented() {
        assert_eq!(s(DAT_NOT_IMPLEMENTED), ("DAT_NOT_IMPLEMENTED".into(), "".into()));
    }

    /// `pub const NAME: <ty> = <value>;` lines of a Rust source, in order.
    fn constants<'a>(source: &'a str, ty: &str) -> Vec<(&'a str, u32)> {
        source
            .lines()
            .filter_map(|line| {
                let rest = line.trim().strip_prefix("pub const ")?;
                let (name, rest) = rest.split_once(':')?;
                let (decl_ty, value) = rest.split_once('=')?;
                if decl_ty.trim() != ty {
                    return None;
                }
                let value = value.trim().trim_end_matches(';').trim();
                let hex = value.strip_prefix("0x").expect("return codes are written in hex");
                Some((name.trim(), u32::from_str_radix(&hex.replace('_', ""), 16).unwrap()))
            })
            .collect()
    }

    /// The name `dat_strerror` gives a code part declared as `name`.
    fn expected_text(name: &str) -> &str {
        match name {
            "DAT_NO_SUBTYPE" => "",
            "DAT_INVALID_STATE_EP_EVD_RECV" => "DAT_INVALID_STATE_EP_EVD_RCV",
            other => other,
        }
    }

    /// `list` without aliases (a later name for a value already listed, e.g. `DAT_NAME_NOT_FOUND`).
    fn without_aliases<'a>(list: &[(&'a str, u32)]) -> Vec<(&'a str, u32)> {
        let mut seen = std::collections::HashSet::new();
        list.iter().copied().filter(|&(_, value)| seen.insert(value)).collect()
    }

    /// Every type and every subtype of a code table, combined with each other and with
    /// each class, has its own names.
    fn check_every_combination(types: &[(&str, u32)], subtypes: &[(&str, u32)]) {
        for &(type_name, ty) in &without_aliases(types) {
            for &(subtype_name, subtype) in &without_aliases(subtypes) {
                for class in [0, DAT_CLASS_ERROR, DAT_CLASS_WARNING] {
                    let value = class | ty | subtype;
                    assert_eq!(
                        s(value),
                        (expected_text(type_name).to_owned(), expected_text(subtype_name).to_owned()),
                        "{value:#010x} = {type_name} | {subtype_name}"
                    );
                }
            }
        }
    }

    /// Every code the core can return (`datcore::codes`, the part before the enumerations).
    #[test]
    fn every_core_code() {
        let source = include_str!("../datcore/src/codes.rs");
        let return_codes = &source[..source.find("// Enumerations").expect("codes.rs section marker")];
        let all = constants(return_codes, "u32");
        let types: Vec<_> = all
            .iter()
            .copied()
            .filter(|&(name, v)| v & DAT_SUBTYPE_MASK == 0 && !name.starts_with("DAT_CLASS_"))
            .filter(|&(name, _)| name != "DAT_NO_SUBTYPE")
            .collect();
        let subtypes: Vec<_> =
            all.iter().copied().filter(|&(name, v)| v <= DAT_SUBTYPE_MASK && name != "DAT_SUCCESS").collect();
        assert_eq!(types.len() + subtypes.len() + 1, all.len(), "every constant sorted: {all:?}");
        assert!(types.len() >= 22 && subtypes.len() >= 102, "codes.rs parsed: {all:?}");
        check_every_combination(&types, &subtypes);
    }

    /// Every `DAT_RETURN_TYPE` and `DAT_RETURN_SUBTYPE` constant of the face (its `abi.rs` and
    /// the shared `abi_common.rs`), translated into the core's numbering as `dat_strerror` does,
    /// has its own name: none gets a placeholder, the DAT 2.0-only codes included.
    #[test]
    fn every_face_code() {
        let sources = [include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/abi.rs")), include_str!("abi_common.rs")];
        let face_constants = |ty: &str| -> Vec<(&'static str, u32)> {
            sources.iter().flat_map(|source| constants(source, ty)).collect()
        };
        let types = face_constants("DAT_RETURN_TYPE");
        let subtypes = face_constants("DAT_RETURN_SUBTYPE");
        assert!(types.len() >= 22 && subtypes.len() >= 102, "abi.rs parsed");
        let to_core = |list: Vec<(&'static str, u32)>| -> Vec<(&'static str, u32)> {
            list.into_iter().map(|(name, v)| (name, crate::convert::code_in(v))).collect()
        };
        check_every_combination(&to_core(types), &to_core(subtypes));
    }
}
