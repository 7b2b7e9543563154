//! The DAT core behind libdat's C faces.
//!
//! One module per DAT object, a handle registry that validates every handle the C side passes
//! in, the dat.conf registry, and the providers that move data.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod codes;
pub mod error;
pub mod provider;
pub mod registry;

pub use error::{DatError, DatResult};
