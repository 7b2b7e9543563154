//! The IB counters operations of `dat_extension_op` (`dat_ib_query_counters`,
//! `dat_ib_print_counters`, `dat_ib_start_counter`, `dat_ib_stop_counter`) over the core's
//! counters ([`datcore::counters`]).
//!
//! As OFED's library: a query of one counter `i` writes `out[i]` (so `out` is an array of the
//! owner's `*_ALL_COUNTERS` entries either way), of `*_ALL_COUNTERS` all of them; `reset`
//! zeroes what was read. Print writes the owner's counted counters, one line each, to stdout.
//! Start and stop take an IA and a `DAT_IA_COUNTER_TYPE`, and turn counting on and off for
//! the process (every type alike: we sample no CM, link or diagnostic counters).

use crate::abi::*;
use crate::ffi::h;
use datcore::codes::{DAT_INVALID_HANDLE1, DAT_INVALID_HANDLE_IA};
use datcore::counters::{self, Counters, EP_COUNTED, EVD_COUNTED, IA_COUNTED};
use datcore::endpoint::Endpoint;
use datcore::evd::EventDispatcher;
use datcore::handle::{self, HandleType};
use datcore::ia::InterfaceAdapter;
use datcore::{DatError, DatResult};
use std::io::Write;

// The core counts in the header's numbering.
const _: () = assert!(counters::IA_COUNTERS == DCNT_IA_ALL_COUNTERS as usize);
const _: () = assert!(counters::EP_COUNTERS == DCNT_EP_ALL_COUNTERS as usize);
const _: () = assert!(counters::EVD_COUNTERS == DCNT_EVD_ALL_COUNTERS as usize);

/// What a counters operation does with one owner's counters.
enum Action {
    /// Copy to the consumer's array (`dat_ib_query_counters`).
    Query(*mut u64),
    /// Write to stdout (`dat_ib_print_counters`).
    Print,
}

/// Runs `action` on counter `counter` (or all) of `owner`'s `counters`, whose counted ones
/// (with their names) are `counted`; `reset` zeroes what was read.
fn run<const N: usize>(
    owner: DAT_HANDLE,
    counters: &Counters<N>,
    counted: &[(usize, &str)],
    counter: i32,
    action: Action,
    reset: bool,
) -> DatResult<()> {
    let index = usize::try_from(counter).ok().filter(|&i| i <= N).ok_or(DatError::invalid_arg(3))?;
    match action {
        Action::Query(out) => {
            if out.is_null() {
                return Err(DatError::invalid_arg(4));
            }
            let len = if index == N { N } else { index + 1 };
            // SAFETY: the consumer's array of the owner's `*_ALL_COUNTERS` entries (the
            // header's contract, as OFED's library writes it).
            let out = unsafe { std::slice::from_raw_parts_mut(out, len) };
            counters.query(index, out, reset);
        }
        Action::Print => {
            let mut values = [0u64; N];
            counters.query(index, &mut values, reset);
            let mut stdout = std::io::stdout().lock();
            for &(i, name) in counted.iter().filter(|(i, _)| index == N || *i == index) {
                let _ = writeln!(stdout, " {}:{:?}: {name} = {}", std::process::id(), owner, values[i]);
            }
        }
    }
    Ok(())
}

/// `dat_ib_query_counters` (`action` Query) and `dat_ib_print_counters` (Print) on an IA, EP or
/// EVD; any other handle is `DAT_INVALID_HANDLE|DAT_INVALID_HANDLE1`.
fn query_or_print(owner: DAT_HANDLE, counter: i32, action: Action, reset: bool) -> DatResult<()> {
    let bad = || DatError::invalid_handle(DAT_INVALID_HANDLE1);
    match handle::type_of(h(owner)) {
        Some(HandleType::Ia) => {
            let ia = handle::get::<InterfaceAdapter>(h(owner), DAT_INVALID_HANDLE1).map_err(|_| bad())?;
            run(owner, &ia.counters, IA_COUNTED, counter, action, reset)
        }
        Some(HandleType::Ep) => {
            let ep = handle::get::<Endpoint>(h(owner), DAT_INVALID_HANDLE1).map_err(|_| bad())?;
            run(owner, &ep.counters, EP_COUNTED, counter, action, reset)
        }
        Some(HandleType::Evd) => {
            let evd = handle::get::<EventDispatcher>(h(owner), DAT_INVALID_HANDLE1).map_err(|_| bad())?;
            run(owner, &evd.counters, EVD_COUNTED, counter, action, reset)
        }
        _ => Err(bad()),
    }
}

/// `dat_ib_query_counters`.
pub fn query(owner: DAT_HANDLE, counter: i32, out: *mut u64, reset: bool) -> DatResult<()> {
    query_or_print(owner, counter, Action::Query(out), reset)
}

/// `dat_ib_print_counters`.
pub fn print(owner: DAT_HANDLE, counter: i32, reset: bool) -> DatResult<()> {
    query_or_print(owner, counter, Action::Print, reset)
}

/// `dat_ib_start_counter` (`on`) / `dat_ib_stop_counter`: `ia` an IA
/// (`DAT_INVALID_HANDLE|DAT_INVALID_HANDLE_IA`), `kind` a `DAT_IA_COUNTER_TYPE`
/// (`DAT_INVALID_PARAMETER|ARG3`).
pub fn start_or_stop(ia: DAT_HANDLE, kind: i32, on: bool) -> DatResult<()> {
    handle::get_ptr::<InterfaceAdapter>(ia, DAT_INVALID_HANDLE_IA)?;
    if !(DCNT_IA_CM as i32..=DCNT_IA_DIAG as i32).contains(&kind) {
        return Err(DatError::invalid_arg(3));
    }
    counters::set_counting(on);
    Ok(())
}
