//! The DAT core behind libdat's C faces.
//!
//! One module per DAT object, a handle registry that validates every handle the C side passes
//! in, the dat.conf registry, and the providers that move data. Faces (`dat12`, later `dat20`)
//! convert C arguments to these types and back; nothing here knows a C struct layout.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod cno;
pub mod codes;
pub mod counters;
pub mod endpoint;
pub mod error;
pub mod evd;
pub mod event;
pub mod handle;
pub mod ia;
pub mod ib_ext;
pub mod lmr;
pub mod log;
pub mod provider;
pub mod pz;
pub mod registry;
pub mod rmr;
pub mod service_point;
pub mod srq;
pub mod teardown;
pub mod ud;
pub mod waiting;

pub use error::{DatError, DatResult};
