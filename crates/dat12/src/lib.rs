//! libdat.so.1: the DAT 1.2 C face over the `datcore` core.
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_camel_case_types, non_snake_case)]

pub mod abi;
pub mod registry;
