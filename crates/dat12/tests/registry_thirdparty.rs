//! A third-party DAT 1.2 provider library (tests/c/thirdparty/provider.c), compiled with `cc`
//! at test time, reached through a dat.conf entry: resolve → open_library (dlopen,
//! dat_provider_init, dat_registry_add_provider, ia_open_func) → foreign dispatch → close
//! (ia_close_func, dat_provider_fini, dlclose). Skipped when no C compiler is available.

#[path = "../../../tests/c/thirdparty/harness.rs"]
mod harness;

use dat12::abi::*;
use dat12::foreign_call;
use dat12::registry::*;
use datcore::registry::{Library, ProviderInfo, NOT_FOUND};
use harness::{copy_provider, library, registry_for, Built, Peek};
use std::ffi::{c_void, CStr};
use std::ptr::null_mut;

/// The provider library built for DAT 1.2, calling our registry exports.
fn built() -> Option<&'static Built> {
    harness::built(
        1,
        &[
            ("dat_registry_add_provider", dat_registry_add_provider as *const c_void),
            ("dat_registry_remove_provider", dat_registry_remove_provider as *const c_void),
        ],
    )
}

fn open(lib: &Library) -> Result<DAT_IA_HANDLE, u32> {
    let mut evd: DAT_EVD_HANDLE = null_mut();
    let mut ia: DAT_IA_HANDLE = null_mut();
    // SAFETY: valid out pointers.
    unsafe { open_library(lib, 8, &mut evd, &mut ia) }.map(|_| ia).map_err(|e| match e {
        LibraryError::Unusable => NOT_FOUND.0,
        LibraryError::Open(e) => e.0,
    })
}

#[test]
fn full_cycle() {
    let Some(b) = built() else { return };
    let so = copy_provider(b, "full");
    let reg = registry_for(&format!(
        "# a third-party provider\ntp u1.2 nonthreadsafe default {} tp.1.0 \"dev0 7\" \"\"\n",
        so.display()
    ));
    assert_eq!(reg.list(1), vec![ProviderInfo { ia_name: "tp".into(), major: 1, minor: 2, thread_safe: false }]);
    assert_eq!(reg.resolve("tp", 1, 2, true).unwrap_err(), NOT_FOUND);
    let lib = library(reg.resolve("tp", 1, 2, false));
    assert_eq!(lib.ia_params, "dev0 7");

    let ia = open(&lib).expect("open_library");
    {
        let peek = Peek::new(&so).expect("library loaded");
        assert_eq!(peek.int("tp_init_calls"), 1);
        assert_eq!(peek.int("tp_register_status"), 0);
        assert_eq!(peek.string("tp_instance_data"), "dev0 7");
        assert_eq!(peek.int("tp_open_ias"), 1);
    }
    assert!(is_library_ia(ia));
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 1);
    assert!(registered().contains(&lib.info));

    // dispatch through the handle's first word
    let p = unsafe { foreign_provider(ia) }.expect("foreign IA");
    assert_eq!(unsafe { CStr::from_ptr(p.device_name) }.to_str().unwrap(), "tp");
    let mut pz: DAT_PZ_HANDLE = null_mut();
    assert_eq!(foreign_call!(ia, pz_create_func, (ia, &mut pz)), Some(0));
    assert!(!pz.is_null());
    assert!(std::ptr::eq(unsafe { foreign_provider(pz) }.unwrap(), p));
    let mut evd: DAT_EVD_HANDLE = 1 as DAT_EVD_HANDLE;
    assert_eq!(foreign_call!(ia, ia_query_func, (ia, &mut evd, 0, null_mut(), 0, null_mut())), Some(0));
    assert!(evd.is_null());

    // a second IA of the same entry: one more reference, no second init
    let ia2 = open(&lib).expect("second open");
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 2);
    assert_eq!(Peek::new(&so).unwrap().int("tp_init_calls"), 1);

    // graceful close with a PZ outstanding fails and changes nothing
    assert_eq!(unsafe { close_library_ia(ia, 1) }.unwrap_err().0, 0x8007_004f);
    assert!(is_library_ia(ia));
    assert_eq!(foreign_call!(pz, pz_free_func, (pz)), Some(0));
    unsafe { close_library_ia(ia, 1) }.unwrap();
    assert!(!is_library_ia(ia));
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 1);
    assert_eq!(unsafe { close_library_ia(ia, 1) }.unwrap_err().0, 0x8005_000b);

    unsafe { close_library_ia(ia2, 0) }.unwrap();
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 0);
    assert!(!registered().contains(&lib.info), "fini removed the provider");
    assert!(Peek::new(&so).is_none(), "library unloaded");

    // and again from scratch: a fresh load calls init again
    let ia3 = open(&lib).expect("reopen");
    assert_eq!(Peek::new(&so).unwrap().int("tp_init_calls"), 1);
    unsafe { close_library_ia(ia3, 0) }.unwrap();
    assert!(Peek::new(&so).is_none());
}

#[test]
fn provider_does_not_register() {
    let Some(b) = built() else { return };
    let so = copy_provider(b, "noreg");
    let reg = registry_for(&format!("nr u1.2 nonthreadsafe default {} tp.1.0 no-register \"\"\n", so.display()));
    let lib = library(reg.resolve("nr", 1, 2, false));
    assert_eq!(open(&lib).unwrap_err(), NOT_FOUND.0);
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 0);
    assert!(Peek::new(&so).is_none(), "unloaded after the failure");
}

#[test]
fn provider_open_fails() {
    let Some(b) = built() else { return };
    let so = copy_provider(b, "failopen");
    let reg = registry_for(&format!("fo u1.2 threadsafe default {} tp.1.0 fail-open \"\"\n", so.display()));
    let lib = library(reg.resolve("fo", 1, 2, true));
    assert_eq!(open(&lib).unwrap_err(), 0x8003_0002);
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 0);
    assert!(!registered().contains(&lib.info));
    assert!(Peek::new(&so).is_none());
}

#[test]
fn library_problems() {
    let Some(b) = built() else { return };
    let reg = registry_for(&format!(
        "gone u1.2 nonthreadsafe default libdat-no-such-provider.so.9 x.1.0 \"\" \"\"\n\
         nosym u1.2 nonthreadsafe default {} x.1.0 \"\" \"\"\n\
         abs u1.2 nonthreadsafe default {}/missing.so x.1.0 \"\" \"\"\n",
        b.nosyms.display(),
        b.dir.display()
    ));
    // relative path: resolve passes it on, dlopen fails
    let lib = library(reg.resolve("gone", 1, 2, false));
    assert_eq!(open(&lib).unwrap_err(), NOT_FOUND.0);
    // no dat_provider_init
    let lib = library(reg.resolve("nosym", 1, 2, false));
    assert_eq!(open(&lib).unwrap_err(), NOT_FOUND.0);
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 0);
    // absolute and missing: resolve already refuses
    assert_eq!(reg.resolve("abs", 1, 2, false).unwrap_err(), NOT_FOUND);
}

#[test]
fn registered_provider_opens_without_library() {
    let Some(b) = built() else { return };
    let so = copy_provider(b, "dr");
    let reg = registry_for(&format!("dr u1.2 nonthreadsafe default {} tp.1.0 \"\" \"\"\n", so.display()));
    let lib = library(reg.resolve("dr", 1, 2, false));
    let ia = open(&lib).unwrap();
    // the library registered "dr": open_registered finds it without another library reference
    let mut evd: DAT_EVD_HANDLE = null_mut();
    let mut ia2: DAT_IA_HANDLE = null_mut();
    let r = unsafe { open_registered("dr", 1, 2, false, 4, &mut evd, &mut ia2) };
    assert!(matches!(r, Some(Ok(()))));
    assert!(unsafe { open_registered("dr", 1, 2, true, 4, &mut evd, &mut ia2) }.is_none());
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 1);
    unsafe { close_library_ia(ia2, 0) }.unwrap();
    assert_eq!(library_refs(&lib.lib_path, &lib.info), 1);
    unsafe { close_library_ia(ia, 0) }.unwrap();
    assert!(Peek::new(&so).is_none());
}
