//! A third-party DAT 2.0 provider library (tests/c/thirdparty/provider.c built with -DTP_DAT2:
//! the 648-byte provider table) reached through a `u2.0` dat.conf entry and driven through the
//! 2.0 face's own exports: dispatch by the handles' first word, the provider calling back
//! `dats_get_ia_handle`, its DAT 2.0 return codes passing through unchanged, `dat_extension_op`
//! handing the `va_list` to its `handle_extendedop_func`, and close / fini / dlclose.
//! Skipped when no C compiler is available.

use dat20::abi::*;
use dat20::face_specific::dats_get_ia_handle;
use dat20::ia::dat_ia_close;
use dat20::memory::{dat_pz_create, dat_pz_free, dat_pz_query};
use dat20::registry::*;
use datcore::registry::conf::{self, StaticConf};
use datcore::registry::{Registry, Resolution};
use std::ffi::{c_int, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr::null_mut;

extern "C" {
    fn dat_extension_op(handle: DAT_HANDLE, op: DAT_EXTENDED_OP, ...) -> DAT_RETURN;
}

const SHIM: &str = r#"
typedef unsigned (*reg_t)(const void *, const void *);
typedef unsigned (*get_t)(void *, void **);
static reg_t add_fn, remove_fn;
static get_t get_fn;
void dat_shim_set(reg_t a, reg_t r, get_t g) { add_fn = a; remove_fn = r; get_fn = g; }
unsigned dat_registry_add_provider(const void *p, const void *i) { return add_fn(p, i); }
unsigned dat_registry_remove_provider(const void *p, const void *i) { return remove_fn(p, i); }
unsigned dats_get_ia_handle(void *h, void **out) { return get_fn(h, out); }
"#;

fn compile(src: &Path, out: &Path, defines: &[&str]) -> bool {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    Command::new(cc)
        .args(["-shared", "-fPIC", "-O0"])
        .args(defines)
        .arg("-o")
        .arg(out)
        .arg(src)
        .status()
        .is_ok_and(|s| s.success())
}

/// A test executable does not export the registry entry points to dlopen()ed libraries
/// (libdat2.so.2 does): a global shim forwards them to this crate's functions.
fn install_shim(dir: &Path) {
    let src = dir.join("shim.c");
    std::fs::write(&src, SHIM).unwrap();
    let so = dir.join("libshim.so");
    assert!(compile(&src, &so, &[]));
    let p = CString::new(so.to_str().unwrap()).unwrap();
    type Reg = unsafe extern "C" fn(*const DAT_PROVIDER, *const DAT_PROVIDER_INFO) -> DAT_RETURN;
    type Get = unsafe extern "C" fn(DAT_IA_HANDLE, *mut DAT_IA_HANDLE) -> DAT_RETURN;
    // SAFETY: plain dlopen/dlsym of the shim just built; the setter's signature is the shim's.
    unsafe {
        let h = libc::dlopen(p.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
        assert!(!h.is_null());
        let set = libc::dlsym(h, c"dat_shim_set".as_ptr());
        assert!(!set.is_null());
        let set: unsafe extern "C" fn(Reg, Reg, Get) = std::mem::transmute(set);
        set(dat_registry_add_provider, dat_registry_remove_provider, dats_get_ia_handle);
    }
}

/// The DAT 2.0 build of the test provider, or None (test skipped) without a working `cc`.
fn build() -> Option<PathBuf> {
    let dir = std::env::temp_dir().join(format!("dat20-thirdparty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/c/thirdparty/provider.c");
    let so = dir.join("libdattp2.so");
    if !compile(&src, &so, &["-DTP_DAT2"]) {
        eprintln!("skipping: cannot compile {}", src.display());
        return None;
    }
    install_shim(&dir);
    Some(so)
}

fn is_loaded(path: &Path) -> bool {
    let p = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: RTLD_NOLOAD never loads; a handle it returns is closed again at once.
    unsafe {
        let h = libc::dlopen(p.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if !h.is_null() {
            libc::dlclose(h);
        }
        !h.is_null()
    }
}

#[test]
fn dat20_provider_library() {
    let Some(so) = build() else { return };
    let text = format!("tp2 u2.0 nonthreadsafe default {} tp.2.0 \"dev0 1\" \"\"\n", so.display());
    let reg =
        Registry::new(StaticConf { path: Some("t.conf".into()), entries: conf::parse_str(&text, "t.conf") }, vec![]);
    assert!(reg.list(1).is_empty(), "a u2.0 entry is not listed for DAT 1");
    let lib = match reg.resolve("tp2", 2, 0, false) {
        Ok(Resolution::Library(l)) => l,
        other => panic!("expected a library, got {other:?}"),
    };
    let (mut evd, mut ia): (DAT_EVD_HANDLE, DAT_IA_HANDLE) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers.
    unsafe { open_library(&lib, 8, &mut evd, &mut ia) }.expect("open_library");
    assert!(is_library_ia(ia) && is_loaded(&so));

    // SAFETY: the provider's handles, through the face's exports as a consumer calls them.
    unsafe {
        let mut pz: DAT_PZ_HANDLE = null_mut();
        assert_eq!(dat_pz_create(ia, &mut pz), DAT_SUCCESS);
        assert!(!pz.is_null());
        // the provider fills DAT_PZ_PARAM.ia_handle through dats_get_ia_handle
        let mut param = DAT_PZ_PARAM { ia_handle: null_mut() };
        assert_eq!(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &mut param), DAT_SUCCESS);
        assert_eq!(param.ia_handle, ia);
        // its DAT 2.0 code (IA_IN_USE is 0x50 in 2.0) reaches the consumer unchanged
        assert_eq!(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_CLASS_ERROR | DAT_INVALID_STATE | 0x50);
        // dat_extension_op passes the va_list on: the provider checks the int after the op
        assert_eq!(dat_extension_op(ia, 5, 6 as c_int), DAT_SUCCESS);
        assert_eq!(dat_extension_op(ia, 5, 9 as c_int), DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | DAT_INVALID_ARG3);
        assert_eq!(dat_pz_free(pz), DAT_SUCCESS);
        assert_eq!(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
    }
    assert!(!is_library_ia(ia));
    assert!(!registered().contains(&lib.info), "fini removed the provider");
    assert!(!is_loaded(&so), "library unloaded after the last IA");
}
