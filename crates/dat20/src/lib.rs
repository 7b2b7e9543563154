//! libdat2.so.2: the DAT 2.0 C face over the `datcore` core.
//!
//! The same area modules as the DAT 1.2 face (`crates/face/`, see `crates/dat12/src/lib.rs`)
//! compiled against this crate's [`abi`] (`include/dat2`) and [`convert`] (DAT 2.0 error
//! numbering, 16-byte triplets, the 120-byte `DAT_EVENT`, the 2.0-only query fields). The
//! exports whose signature is DAT 2.0's own are in `face_specific` (`dat_lmr_create`,
//! `dat_rmr_bind`, `dat_cr_reject`, `dats_get_ia_handle`) and `extension`
//! (`dat_extension_op`).
//!
//! The export modules are public so that the Rust tests (`tests/shm_face.rs`) call the exports
//! as a C program would. Their safety contract is the C caller's contract of the DAT 2.0 API
//! (valid pointers where non-NULL), stated once here rather than on every export.
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(clippy::missing_safety_doc)]
#![allow(non_camel_case_types, non_snake_case)]

pub mod abi;
#[path = "../../face/cm.rs"]
pub mod cm;
pub mod convert;
#[path = "../../face/ep.rs"]
pub mod ep;
#[path = "../../face/evd.rs"]
pub mod evd;
pub mod extension;
pub mod extension_counters;
pub mod face_specific;
#[path = "../../face/ffi.rs"]
mod ffi;
#[path = "../../face/ia.rs"]
pub mod ia;
mod macro_only;
#[path = "../../face/memory.rs"]
pub mod memory;
#[path = "../../face/open.rs"]
mod open;
#[path = "../../face/provider_table.rs"]
mod provider_table;
#[path = "../../face/registry.rs"]
pub mod registry;
#[path = "../../face/srq.rs"]
pub mod srq;
#[path = "../../face/strerror.rs"]
pub mod strerror;

// The DAT 2.0 provider table with DAT_EXTENSIONS: 81 slots (dat-abi.md §2.4).
const _: () = assert!(std::mem::size_of::<abi::DAT_PROVIDER>() == 648);

extern "C" {
    /// `dat_extension_op` with a `va_list` (extension_op.c): the table's extended-op slot.
    fn dat20_handle_extendedop(
        handle: abi::DAT_HANDLE,
        op: abi::DAT_EXTENDED_OP,
        args: *mut std::ffi::c_void,
    ) -> abi::DAT_RETURN;
}

/// The DAT 2.0 provider table (with `DAT_EXTENSIONS`): the first word of every handle of this
/// library.
static PROVIDER: provider_table::ProviderTable = provider_table::provider_table!(c"libdat2.so.2";
    csp_create_func: Some(macro_only::csp_create),
    csp_query_func: Some(macro_only::csp_query),
    csp_free_func: Some(macro_only::csp_free),
    ep_common_connect_func: Some(macro_only::ep_common_connect),
    rmr_create_for_ep_func: Some(macro_only::rmr_create_for_ep),
    ep_post_send_with_invalidate_func: Some(macro_only::ep_post_send_with_invalidate),
    ep_post_rdma_read_to_rmr_func: Some(macro_only::ep_post_rdma_read_to_rmr),
    cno_fd_create_func: Some(macro_only::cno_fd_create),
    cno_trigger_func: Some(macro_only::cno_trigger),
    ia_ha_related_func: Some(macro_only::ia_ha_related),
    handle_extendedop_func: Some(dat20_handle_extendedop),
);

/// Installs [`PROVIDER`] when the library is loaded, before any call can make a handle.
#[used]
#[link_section = ".init_array"]
static INSTALL_PROVIDER_TABLE: extern "C" fn() = install_provider_table;

extern "C" fn install_provider_table() {
    provider_table::install(&PROVIDER);
}
