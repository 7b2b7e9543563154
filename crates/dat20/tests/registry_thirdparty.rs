//! A third-party DAT 2.0 provider library (tests/c/thirdparty/provider.c built with
//! TP_DAT_MAJOR=2), compiled with `cc` at test time and reached through a dat.conf line with a
//! `dlopen:` lib_path, then driven through the face's own exports as a DAT 2.0 consumer calls
//! them: the 81-slot provider table, the 2.0 slot types (lmr_create with va_type, rmr_bind with
//! the LMR handle and va_type, cr_reject with private data), `dat_extension_op`'s variadic
//! arguments reaching `handle_extendedop_func` as a va_list, `dats_get_ia_handle` called by the
//! provider while it fills a query, and DAT 2.0 error numbering on the way back.
//! The generic load/unload and error paths are the 1.2 face's test (same code, crates/face).
//! Skipped when no C compiler is available.

#[path = "../../../tests/c/thirdparty/harness.rs"]
mod harness;

use dat20::abi::*;
use dat20::face_specific::*;
use dat20::ia::*;
use dat20::memory::*;
use dat20::registry::*;
use datcore::registry::ProviderInfo;
use harness::{copy_provider, library, registry_for, Built, Peek};
use std::ffi::c_void;
use std::ptr::null_mut;

extern "C" {
    // The variadic export (the C shim in src/extension_op.c).
    fn dat_extension_op(handle: DAT_HANDLE, op: DAT_EXTENDED_OP, ...) -> DAT_RETURN;
}

const FETCH_AND_ADD: DAT_EXTENDED_OP = 0x00;
const QUERY_COUNTERS: DAT_EXTENDED_OP = 0x0b;

/// The provider library built for DAT 2.0, calling our registry exports and `dats_get_ia_handle`.
fn built() -> Option<&'static Built> {
    harness::built(
        2,
        &[
            ("dat_registry_add_provider", dat_registry_add_provider as *const c_void),
            ("dat_registry_remove_provider", dat_registry_remove_provider as *const c_void),
            ("dats_get_ia_handle", dats_get_ia_handle as *const c_void),
        ],
    )
}

fn ok(r: DAT_RETURN, what: &str) {
    assert_eq!(r, DAT_SUCCESS, "{what}: {r:#010x}");
}

#[test]
fn dat20_provider_through_the_exports() {
    let Some(b) = built() else { return };
    let so = copy_provider(b, "v2");
    let reg = registry_for(&format!("tp2 u2.0 nonthreadsafe default dlopen:{} tp.2.0 \"dev0 1\" \"\"\n", so.display()));
    assert_eq!(reg.list(2), vec![ProviderInfo { ia_name: "tp2".into(), major: 2, minor: 0, thread_safe: false }]);
    assert!(reg.list(1).is_empty(), "a u2.0 entry is not listed for DAT 1");
    let lib = library(reg.resolve("tp2", 2, 0, false));
    assert_eq!(lib.lib_path, so.to_str().unwrap(), "the dlopen: marker is stripped");

    let mut evd: DAT_EVD_HANDLE = null_mut();
    let mut ia: DAT_IA_HANDLE = null_mut();
    // SAFETY: valid out pointers.
    unsafe { open_library(&lib, 8, &mut evd, &mut ia) }.expect("open_library");
    let peek = Peek::new(&so).expect("library loaded");
    assert_eq!(peek.int("tp_register_status"), 0, "dat_registry_add_provider accepted the 648-byte table");
    assert_eq!(peek.string("tp_instance_data"), "dev0 1");
    let last = || peek.string("tp_last_call");

    // SAFETY: the exports are called as a C consumer calls them (valid pointers, live handles
    // of this provider); tp_object has the signature given to transmute.
    unsafe {
        // dats_get_ia_handle: the consumer's handle of a third-party IA is the provider's pointer.
        let mut out: DAT_IA_HANDLE = null_mut();
        ok(dats_get_ia_handle(ia, &mut out), "dats_get_ia_handle");
        assert_eq!(out, ia);
        assert_eq!(dats_get_ia_handle(ia, null_mut()), DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | DAT_INVALID_ARG2);

        // pz_query: the provider fills ia_handle through dats_get_ia_handle, as OFED's do.
        let mut pz: DAT_PZ_HANDLE = null_mut();
        ok(dat_pz_create(ia, &mut pz), "dat_pz_create");
        let mut param = DAT_PZ_PARAM { ia_handle: null_mut() };
        ok(dat_pz_query(pz, DAT_PZ_FIELD_IA_HANDLE, &mut param), "dat_pz_query");
        assert_eq!(param.ia_handle, ia);

        // lmr_create with va_type: passed through unchanged (our own IAs refuse ZB; this one takes it).
        let mut region = [0u8; 64];
        let rp = region.as_mut_ptr() as DAT_PVOID;
        let (mut lmr, mut lctx, mut rctx, mut rlen, mut raddr) = (null_mut(), 0, 0, 0, 0);
        ok(
            dat_lmr_create(
                ia,
                DAT_MEM_TYPE_VIRTUAL,
                DAT_REGION_DESCRIPTION { for_va: rp },
                64,
                pz,
                3,
                DAT_VA_TYPE_ZB,
                &mut lmr,
                &mut lctx,
                &mut rctx,
                &mut rlen,
                &mut raddr,
            ),
            "dat_lmr_create",
        );
        assert_eq!(last(), format!("lmr_create {ia:p} 0 {rp:p} 64 {pz:p} 3 1"));
        assert_eq!((lctx, rctx, rlen, raddr), (0x1111, 0x2222, 64, rp as u64));

        // cr_reject with private data, rmr_bind with the LMR handle and va_type, on provider objects.
        let make = std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> DAT_HANDLE>(peek.symbol("tp_object"));
        let obj = make();
        ok(dat_cr_reject(obj, 5, c"hello".as_ptr() as DAT_PVOID), "dat_cr_reject");
        assert_eq!(last(), format!("cr_reject {obj:p} 5 hello"));
        let t = DAT_LMR_TRIPLET { virtual_address: 0x1000, segment_length: 32, lmr_context: 0x1111 };
        let mut bound: DAT_RMR_CONTEXT = 0;
        ok(
            dat_rmr_bind(obj, lmr, &t, 7, DAT_VA_TYPE_ZB, obj, DAT_CONTEXT { as_64: 99 }, 2, &mut bound),
            "dat_rmr_bind",
        );
        assert_eq!(last(), format!("rmr_bind {obj:p} {lmr:p} 4096/32/4369 7 1 {obj:p} 99 2"));
        assert_eq!(bound, 0x3333);

        // dat_extension_op: the variadic arguments reach handle_extendedop_func as a va_list.
        let remote = DAT_RMR_TRIPLET { virtual_address: 0x2000, segment_length: 8, rmr_context: 0x3333 };
        let rr = &remote as *const DAT_RMR_TRIPLET;
        ok(dat_extension_op(obj, FETCH_AND_ADD, 5u64, &t as *const DAT_LMR_TRIPLET, 77u64, rr, 1u32), "fetch and add");
        assert_eq!(last(), format!("fetch_and_add {obj:p} 5 4096 77 {rr:p} 1"));
        let mut counters = [0u64; 4];
        ok(dat_extension_op(ia, QUERY_COUNTERS, 3i32, counters.as_mut_ptr(), 1i32), "query counters");
        assert_eq!(last(), format!("query_counters {ia:p} 3 1"));
        assert_eq!(counters[0], 42);
        // the provider's own error, in DAT 2.0 numbering, comes back unchanged
        assert_eq!(dat_extension_op(obj, 0x7777), DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | DAT_INVALID_ARG2);

        // a graceful close with a PZ outstanding: the provider's DAT 2.0 code (IA_IN_USE = 0x50)
        assert_eq!(
            dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG),
            DAT_CLASS_ERROR | DAT_INVALID_STATE | DAT_INVALID_STATE_IA_IN_USE
        );
        assert_eq!(DAT_INVALID_STATE_IA_IN_USE, 0x50);
        ok(dat_pz_free(pz), "dat_pz_free");
        ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), "dat_ia_close");
    }
    drop(peek);
    assert!(Peek::new(&so).is_none(), "unloaded after the last close");
    assert!(!registered().contains(&lib.info), "dat_provider_fini removed the provider");
    let mut out: DAT_IA_HANDLE = null_mut();
    // SAFETY: valid out pointer; the closed IA's value is only compared, never dereferenced.
    assert_eq!(
        unsafe { dats_get_ia_handle(ia, &mut out) },
        DAT_CLASS_ERROR | DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_IA
    );
}

#[test]
fn dat20_library_without_entry_points_or_registration() {
    let Some(b) = built() else { return };
    let so = copy_provider(b, "v2-noreg");
    let reg = registry_for(&format!(
        "nosym u2.0 nonthreadsafe default dlopen:{} x.2.0 \"\" \"\"\n\
         noreg u2.0 nonthreadsafe default dlopen:{} x.2.0 no-register \"\"\n",
        b.nosyms.display(),
        so.display()
    ));
    for name in ["nosym", "noreg"] {
        let lib = library(reg.resolve(name, 2, 0, false));
        let mut evd: DAT_EVD_HANDLE = null_mut();
        let mut ia: DAT_IA_HANDLE = null_mut();
        // SAFETY: valid out pointers.
        let r = unsafe { open_library(&lib, 8, &mut evd, &mut ia) };
        assert_eq!(r.unwrap_err(), LibraryError::Unusable, "{name}");
        assert_eq!(library_refs(&lib.lib_path, &lib.info), 0, "{name}");
    }
    assert!(Peek::new(&so).is_none(), "unloaded after the failure");
}
