//! `DatError`: a DAT_RETURN error value carried through the core as a Rust error.

use crate::codes::*;
use std::fmt;

/// A DAT error code (class | type | subtype), numbered as DAT 1.2 numbers it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct DatError(pub u32);

/// Result of every core operation.
pub type DatResult<T> = Result<T, DatError>;

impl DatError {
    /// `DAT_ERROR(ty, sub)`: the error class bit, a type and a subtype.
    pub const fn new(ty: u32, sub: u32) -> Self {
        DatError(DAT_CLASS_ERROR | ty | sub)
    }
    /// The type part (`DAT_GET_TYPE`).
    pub const fn ty(self) -> u32 {
        self.0 & 0x3fff_0000
    }
    /// The subtype part (`DAT_GET_SUBTYPE`).
    pub const fn subtype(self) -> u32 {
        self.0 & 0xffff
    }
    pub const fn invalid_handle(sub: u32) -> Self {
        Self::new(DAT_INVALID_HANDLE, sub)
    }
    /// `DAT_INVALID_PARAMETER | DAT_INVALID_ARGn` for 1-based argument `n`.
    pub const fn invalid_arg(n: u32) -> Self {
        Self::new(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + n - 1)
    }
    pub const fn invalid_state(sub: u32) -> Self {
        Self::new(DAT_INVALID_STATE, sub)
    }
    pub const fn insufficient(sub: u32) -> Self {
        Self::new(DAT_INSUFFICIENT_RESOURCES, sub)
    }
    pub const INTERNAL: Self = Self::new(DAT_INTERNAL_ERROR, 0);
    pub const NOT_IMPLEMENTED: Self = DatError(DAT_NOT_IMPLEMENTED);
    pub const QUEUE_EMPTY: Self = Self::new(DAT_QUEUE_EMPTY, 0);
    pub const TIMEOUT: Self = Self::new(DAT_TIMEOUT_EXPIRED, 0);
}

impl fmt::Debug for DatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatError({:#010x})", self.0)
    }
}

impl fmt::Display for DatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DAT error {:#010x}", self.0)
    }
}

impl std::error::Error for DatError {}

/// Turns a `DatResult<()>` into the DAT_RETURN a C caller sees.
pub fn to_return(r: DatResult<()>) -> u32 {
    match r {
        Ok(()) => DAT_SUCCESS,
        Err(e) => e.0,
    }
}
