//! libdat2.so.2: the DAT 2.0 C face over the `datcore` core.
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_camel_case_types, non_snake_case)]

pub mod abi;
