//! The panic boundary and argument helpers every export uses (shared by both faces).
//!
//! Every `dat_*` export wraps its body in [`boundary`]: the body returns `DatResult<()>`,
//! runs inside `catch_unwind`, and a panic becomes `DAT_INTERNAL_ERROR` instead of unwinding
//! into C. Pointer arguments go through [`out`], [`input`] and [`slice`], which turn NULL into
//! the right `DAT_INVALID_PARAMETER | DAT_INVALID_ARGn`.

use datcore::handle::Handle;
use datcore::{DatError, DatResult};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs an export body; maps its result (or a panic) to a `DAT_RETURN` in the face's numbering
/// (`crate::convert::code_out`: the core's DAT 1.2 codes as this face's ABI numbers them).
///
/// Inlined into every export, so the export's arguments stay in registers instead of being
/// spilled into a closure and passed to a shared function. A failing call (an empty
/// `dat_evd_dequeue` is one) costs one load and compare for logging; the logging itself is out
/// of line. Logging is set up by `dat_ia_openv` and the registry calls (a call can only succeed,
/// or reach a provider, after an IA is open), not per call.
#[inline(always)]
pub fn boundary(name: &'static str, f: impl FnOnce() -> DatResult<()>) -> u32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            if tracing::level_filters::LevelFilter::current() >= tracing::Level::DEBUG {
                log_failure(name, e);
            }
            crate::convert::code_out(e.0)
        }
        Err(_) => panicked(name),
    }
}

/// [`boundary`] for a call whose success has more than one return code (`dat_evd_dequeue`:
/// an event, or `DAT_QUEUE_EMPTY`, which is not a failure): `Ok(code)` is returned as it is (a
/// code of this face's numbering, not logged), an error as [`boundary`] returns it.
#[inline(always)]
pub fn boundary_code(name: &'static str, f: impl FnOnce() -> DatResult<u32>) -> u32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            if tracing::level_filters::LevelFilter::current() >= tracing::Level::DEBUG {
                log_failure(name, e);
            }
            crate::convert::code_out(e.0)
        }
        Err(_) => panicked(name),
    }
}

#[cold]
#[inline(never)]
fn log_failure(name: &'static str, e: DatError) {
    tracing::debug!("{name} -> {:#010x}", e.0);
}

/// A panic caught by [`boundary`]: `DAT_INTERNAL_ERROR`.
#[cold]
#[inline(never)]
fn panicked(name: &'static str) -> u32 {
    tracing::error!("{name}: internal panic caught at the C boundary");
    crate::convert::code_out(DatError::INTERNAL.0)
}

/// A writable out-pointer, or `DAT_INVALID_PARAMETER | DAT_INVALID_ARG{arg}` if NULL.
///
/// # Safety
/// A non-NULL `p` must be valid for writes of `T` for the returned lifetime.
pub unsafe fn out<'a, T>(p: *mut T, arg: u32) -> DatResult<&'a mut T> {
    // SAFETY: the caller guarantees non-NULL pointers are valid for writes.
    unsafe { p.as_mut() }.ok_or(DatError::invalid_arg(arg))
}

/// A readable in-pointer, or `DAT_INVALID_PARAMETER | DAT_INVALID_ARG{arg}` if NULL.
///
/// # Safety
/// A non-NULL `p` must be valid for reads of `T` for the returned lifetime.
pub unsafe fn input<'a, T>(p: *const T, arg: u32) -> DatResult<&'a T> {
    // SAFETY: the caller guarantees non-NULL pointers are valid for reads.
    unsafe { p.as_ref() }.ok_or(DatError::invalid_arg(arg))
}

/// A C array of `n` elements; NULL is allowed only when `n == 0`. A negative `n` is
/// `DAT_INVALID_ARG{count_arg}`, a NULL pointer with `n > 0` is `DAT_INVALID_ARG{ptr_arg}`.
///
/// # Safety
/// A non-NULL `p` must point to `n` readable elements.
pub unsafe fn slice<'a, T>(p: *const T, n: i64, ptr_arg: u32, count_arg: u32) -> DatResult<&'a [T]> {
    if n < 0 {
        return Err(DatError::invalid_arg(count_arg));
    }
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(DatError::invalid_arg(ptr_arg));
    }
    // SAFETY: non-NULL, and the caller guarantees `n` readable elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n as usize) })
}

/// The handle value behind a C handle pointer.
pub fn h(p: *mut libc::c_void) -> Handle {
    Handle::from_ptr(p)
}

/// Writes `v` through `p` if `p` is not NULL (optional out-parameters).
///
/// # Safety
/// A non-NULL `p` must be valid for writes of `T`.
pub unsafe fn write_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL and valid per the caller.
        unsafe { p.write(v) };
    }
}
