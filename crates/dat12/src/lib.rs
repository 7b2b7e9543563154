//! libdat.so.1: the DAT 1.2 C face over the `datcore` core.
//!
//! One module per API area. Each export checks its C arguments, converts them to core types,
//! calls the core inside a panic boundary (`ffi::boundary`) and returns a DAT 1.2 `DAT_RETURN`.
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_camel_case_types, non_snake_case)]

pub mod abi;
mod cm;
mod convert;
mod ep;
mod evd;
mod ffi;
mod ia;
mod memory;
mod open;
pub mod registry;
mod srq;
pub mod strerror;
