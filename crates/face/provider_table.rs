//! The face's `DAT_PROVIDER` table: the first word of every handle the face gives out.
//!
//! `dat_redirection.h` defines a handle as a pointer whose first word is the provider's table,
//! and its `DAT_<CALL>` macros call `(*(DAT_PROVIDER **)handle)-><call>_func(handle, ...)`.
//! Binaries compiled that way (Intel MPI 2018 calls the provider so after
//! `dats_get_ia_handle`) reach the same code as the `dat_*` functions: every slot holds the
//! face's export for that call, or, for the calls DAT 2.0 defines only as macros, a function
//! of this face that checks its handle the same way. The core stores the table's address in
//! every handle slot it hands out (`datcore::handle`), set once when the library is loaded.
//!
//! The table is the face's: libdat.so.1's is the DAT 1.2 layout (70 slots), libdat2.so.2's the
//! DAT 2.0 layout with `DAT_EXTENSIONS` (81 slots); each face passes its own slots after the
//! 70 they share to [`provider_table!`].

use crate::abi::*;
use std::ffi::c_void;

/// A `DAT_PROVIDER` that may be a `static`: its pointers are to code and to string constants.
#[repr(transparent)]
pub struct ProviderTable(pub DAT_PROVIDER);

// SAFETY: the table is never written after it is built; its pointers are to functions and to a
// static string.
unsafe impl Sync for ProviderTable {}

/// `ia_open_func`: the provider-side open, which names the IA only; it opens the IA at the
/// face's own DAT version, as `dat_ia_openv` would.
///
/// # Safety
/// As `dat_ia_openv`.
pub unsafe extern "C" fn provider_ia_open(
    name: DAT_NAME_PTR,
    async_event_qlen: DAT_COUNT,
    async_event_handle: *mut DAT_EVD_HANDLE,
    ia_handle: *mut DAT_IA_HANDLE,
) -> DAT_RETURN {
    // SAFETY: the caller's arguments, passed on.
    unsafe {
        crate::ia::dat_ia_openv(
            name,
            async_event_qlen,
            async_event_handle,
            ia_handle,
            DAT_VERSION_MAJOR,
            DAT_VERSION_MINOR,
            DAT_TRUE as DAT_BOOLEAN,
        )
    }
}

/// The face's table, with its own slots after the shared 70 (none for DAT 1.2).
macro_rules! provider_table {
    ($device_name:expr; $($face_slots:tt)*) => {
        $crate::provider_table::ProviderTable($crate::abi::DAT_PROVIDER {
            device_name: $device_name.as_ptr(),
            extension: std::ptr::null_mut(),
            ia_open_func: Some($crate::provider_table::provider_ia_open),
            ia_query_func: Some($crate::ia::dat_ia_query),
            ia_close_func: Some($crate::ia::dat_ia_close),
            set_consumer_context_func: Some($crate::ia::dat_set_consumer_context),
            get_consumer_context_func: Some($crate::ia::dat_get_consumer_context),
            get_handle_type_func: Some($crate::ia::dat_get_handle_type),
            cno_create_func: Some($crate::evd::dat_cno_create),
            cno_modify_agent_func: Some($crate::evd::dat_cno_modify_agent),
            cno_query_func: Some($crate::evd::dat_cno_query),
            cno_free_func: Some($crate::evd::dat_cno_free),
            cno_wait_func: Some($crate::evd::dat_cno_wait),
            cr_query_func: Some($crate::cm::dat_cr_query),
            cr_accept_func: Some($crate::cm::dat_cr_accept),
            cr_reject_func: Some($crate::face_specific::dat_cr_reject),
            cr_handoff_func: Some($crate::cm::dat_cr_handoff),
            evd_create_func: Some($crate::evd::dat_evd_create),
            evd_query_func: Some($crate::evd::dat_evd_query),
            evd_modify_cno_func: Some($crate::evd::dat_evd_modify_cno),
            evd_enable_func: Some($crate::evd::dat_evd_enable),
            evd_disable_func: Some($crate::evd::dat_evd_disable),
            evd_wait_func: Some($crate::evd::dat_evd_wait),
            evd_resize_func: Some($crate::evd::dat_evd_resize),
            evd_post_se_func: Some($crate::evd::dat_evd_post_se),
            evd_dequeue_func: Some($crate::evd::dat_evd_dequeue),
            evd_free_func: Some($crate::evd::dat_evd_free),
            ep_create_func: Some($crate::ep::dat_ep_create),
            ep_query_func: Some($crate::ep::dat_ep_query),
            ep_modify_func: Some($crate::ep::dat_ep_modify),
            ep_connect_func: Some($crate::ep::dat_ep_connect),
            ep_dup_connect_func: Some($crate::ep::dat_ep_dup_connect),
            ep_disconnect_func: Some($crate::ep::dat_ep_disconnect),
            ep_post_send_func: Some($crate::ep::dat_ep_post_send),
            ep_post_recv_func: Some($crate::ep::dat_ep_post_recv),
            ep_post_rdma_read_func: Some($crate::ep::dat_ep_post_rdma_read),
            ep_post_rdma_write_func: Some($crate::ep::dat_ep_post_rdma_write),
            ep_get_status_func: Some($crate::ep::dat_ep_get_status),
            ep_free_func: Some($crate::ep::dat_ep_free),
            lmr_create_func: Some($crate::face_specific::dat_lmr_create),
            lmr_query_func: Some($crate::memory::dat_lmr_query),
            lmr_free_func: Some($crate::memory::dat_lmr_free),
            rmr_create_func: Some($crate::memory::dat_rmr_create),
            rmr_query_func: Some($crate::memory::dat_rmr_query),
            rmr_bind_func: Some($crate::face_specific::dat_rmr_bind),
            rmr_free_func: Some($crate::memory::dat_rmr_free),
            psp_create_func: Some($crate::cm::dat_psp_create),
            psp_query_func: Some($crate::cm::dat_psp_query),
            psp_free_func: Some($crate::cm::dat_psp_free),
            rsp_create_func: Some($crate::cm::dat_rsp_create),
            rsp_query_func: Some($crate::cm::dat_rsp_query),
            rsp_free_func: Some($crate::cm::dat_rsp_free),
            pz_create_func: Some($crate::memory::dat_pz_create),
            pz_query_func: Some($crate::memory::dat_pz_query),
            pz_free_func: Some($crate::memory::dat_pz_free),
            psp_create_any_func: Some($crate::cm::dat_psp_create_any),
            ep_reset_func: Some($crate::ep::dat_ep_reset),
            evd_set_unwaitable_func: Some($crate::evd::dat_evd_set_unwaitable),
            evd_clear_unwaitable_func: Some($crate::evd::dat_evd_clear_unwaitable),
            lmr_sync_rdma_read_func: Some($crate::memory::dat_lmr_sync_rdma_read),
            lmr_sync_rdma_write_func: Some($crate::memory::dat_lmr_sync_rdma_write),
            ep_create_with_srq_func: Some($crate::ep::dat_ep_create_with_srq),
            ep_recv_query_func: Some($crate::ep::dat_ep_recv_query),
            ep_set_watermark_func: Some($crate::ep::dat_ep_set_watermark),
            srq_create_func: Some($crate::srq::dat_srq_create),
            srq_free_func: Some($crate::srq::dat_srq_free),
            srq_post_recv_func: Some($crate::srq::dat_srq_post_recv),
            srq_query_func: Some($crate::srq::dat_srq_query),
            srq_resize_func: Some($crate::srq::dat_srq_resize),
            srq_set_lw_func: Some($crate::srq::dat_srq_set_lw),
            $($face_slots)*
        })
    };
}
pub(crate) use provider_table;

/// Points every handle the core makes at `table`. Run from the face library's constructor,
/// before any call can create a handle.
pub fn install(table: &'static ProviderTable) {
    datcore::handle::set_provider_table((&table.0 as *const DAT_PROVIDER).cast::<c_void>());
}
