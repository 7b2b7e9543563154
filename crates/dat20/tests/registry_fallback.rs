//! dat.conf lines of one key as OFED's registry chains them: when the library of a line does not
//! load, has no `dat_provider_init`, or its `dat_provider_init` does not register the IA,
//! `dat_ia_openv` goes on with the next line of the same IA name and version; a provider that
//! loads but refuses to open the IA ends the search with its error. Through the real exports
//! and a dat.conf read via `DAT_OVERRIDE`.
//!
//! Its own test binary: the process-wide registry reads `DAT_OVERRIDE` once, on first use.
//! Skipped when no C compiler is available.

#[path = "../../../tests/c/thirdparty/harness.rs"]
#[allow(dead_code)] // its Registry builders serve the other tests; this one reads DAT_OVERRIDE
mod harness;

use dat20::abi::*;
use dat20::face_specific::dats_get_ia_handle;
use dat20::ia::*;
use dat20::registry::*;
use harness::{copy_provider, Built, Peek};
use std::ffi::{c_void, CString};
use std::ptr::null_mut;

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

/// `dat_ia_openv(name, 2, 0, nonthreadsafe)`: the IA handle or the return code.
fn open(name: &str) -> Result<DAT_IA_HANDLE, DAT_RETURN> {
    let name = CString::new(name).unwrap();
    let mut evd: DAT_EVD_HANDLE = null_mut();
    let mut ia: DAT_IA_HANDLE = null_mut();
    // SAFETY: a NUL-terminated name and writable out pointers.
    let r = unsafe { dat_ia_openv(name.as_ptr() as DAT_NAME_PTR, 8, &mut evd, &mut ia, 2, 0, DAT_FALSE) };
    if r == DAT_SUCCESS {
        Ok(ia)
    } else {
        Err(r)
    }
}

#[test]
fn next_line_of_the_same_key_after_an_unusable_library() {
    let Some(b) = built() else { return };
    let noreg = copy_provider(b, "fallback-noreg");
    let good = copy_provider(b, "fallback-good");
    let failing = copy_provider(b, "fallback-failopen");
    let later = copy_provider(b, "fallback-later");
    let line = |name: &str, lib: &str, params: &str| {
        format!("{name} u2.0 nonthreadsafe default {lib} tp.2.0 \"{params}\" \"\"\n")
    };
    let conf_text = [
        // "fb": three unusable lines, then one that opens
        line("fb", "dlopen:libdat-no-such-provider.so.9", ""),
        line("fb", &format!("dlopen:{}", b.nosyms.display()), ""),
        line("fb", &format!("dlopen:{}", noreg.display()), "no-register"),
        line("fb", &format!("dlopen:{}", good.display()), "dev0 1"),
        // "fo": the provider loads but refuses the open: its error, no further line
        line("fo", &format!("dlopen:{}", failing.display()), "fail-open"),
        line("fo", &format!("dlopen:{}", later.display()), ""),
        // "none": no line is usable
        line("none", "dlopen:libdat-no-such-provider.so.9", ""),
        line("none", &format!("dlopen:{}", b.nosyms.display()), ""),
    ]
    .concat();
    let conf = b.dir.join("fallback.conf");
    std::fs::write(&conf, conf_text).unwrap();
    std::env::set_var("DAT_OVERRIDE", &conf);

    let ia = open("fb").expect("the fourth line opens");
    assert!(Peek::new(&noreg).is_none(), "the library that did not register is unloaded again");
    {
        let peek = Peek::new(&good).expect("the fourth line's library is loaded");
        assert_eq!(peek.string("tp_instance_data"), "dev0 1");
        assert_eq!(peek.int("tp_open_ias"), 1);
    }
    // SAFETY: an IA this test opened.
    assert_eq!(unsafe { dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG) }, DAT_SUCCESS);
    assert!(Peek::new(&good).is_none(), "unloaded on close");

    assert_eq!(open("fo").unwrap_err(), DAT_CLASS_ERROR | DAT_INSUFFICIENT_RESOURCES | DAT_RESOURCE_MEMORY);
    assert!(Peek::new(&later).is_none(), "no line after a provider that refused the open is tried");

    assert_eq!(open("none").unwrap_err(), DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND | DAT_NAME_NOT_REGISTERED);
}
