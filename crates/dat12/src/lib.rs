//! libdat.so.1: the DAT 1.2 C face over the `datcore` core.
//!
//! One module per API area. Each export checks its C arguments, converts them to core types,
//! calls the core inside a panic boundary (`ffi::boundary`) and returns a DAT 1.2 `DAT_RETURN`.
//!
//! The area modules are shared with the DAT 2.0 face (`crates/dat20`): their source lives once
//! in `crates/face/` and is compiled into each face crate against that crate's own [`abi`]
//! (the C types keep their C names in both ABIs) and [`convert`] (the few conversions that
//! differ: events, triplets, error numbering, query fields only one ABI has). Exports whose
//! C signature differs between the ABIs live in each face's `face_specific` module.
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(non_camel_case_types, non_snake_case)]

pub mod abi;
#[path = "../../face/cm.rs"]
mod cm;
mod convert;
#[path = "../../face/ep.rs"]
mod ep;
#[path = "../../face/evd.rs"]
mod evd;
mod face_specific;
#[path = "../../face/ffi.rs"]
mod ffi;
#[path = "../../face/ia.rs"]
mod ia;
#[path = "../../face/memory.rs"]
mod memory;
#[path = "../../face/open.rs"]
mod open;
#[path = "../../face/provider_table.rs"]
mod provider_table;
#[path = "../../face/registry.rs"]
pub mod registry;
#[path = "../../face/srq.rs"]
mod srq;
#[path = "../../face/strerror.rs"]
pub mod strerror;

// The DAT 1.2 provider table: 70 slots (dat-abi.md §1.3).
const _: () = assert!(std::mem::size_of::<abi::DAT_PROVIDER>() == 70 * 8);

/// The DAT 1.2 provider table: the first word of every handle of this library.
static PROVIDER: provider_table::ProviderTable = provider_table::provider_table!(c"libdat.so.1";);

/// Installs [`PROVIDER`] when the library is loaded, before any call can make a handle.
#[used]
#[link_section = ".init_array"]
static INSTALL_PROVIDER_TABLE: extern "C" fn() = install_provider_table;

extern "C" fn install_provider_table() {
    provider_table::install(&PROVIDER);
}
