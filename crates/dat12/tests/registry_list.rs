//! dat_registry_list_providers error codes, the dynamic registry and foreign-handle detection.

use dat12::abi::*;
use dat12::foreign_call;
use dat12::registry::*;
use datcore::registry::ProviderInfo;
use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};

const ARG1: u32 = 0x8006_0024;
const ARG2: u32 = 0x8006_0025;
const ARG3: u32 = 0x8006_0026;

fn infos(n: usize) -> Vec<ProviderInfo> {
    (0..n).map(|i| ProviderInfo { ia_name: format!("ia{i}"), major: 1, minor: 2, thread_safe: i % 2 == 1 }).collect()
}

fn blank() -> DAT_PROVIDER_INFO {
    info_to_c(&ProviderInfo { ia_name: String::new(), major: 0, minor: 0, thread_safe: false })
}

fn name(i: &DAT_PROVIDER_INFO) -> String {
    // SAFETY: info_to_c / list_providers always NUL-terminate.
    unsafe { CStr::from_ptr(i.ia_name.as_ptr()) }.to_string_lossy().into_owned()
}

#[test]
fn list_error_codes() {
    let all = infos(3);
    let mut n: DAT_COUNT = -7;
    let mut a = [blank(), blank(), blank(), blank()];
    let mut ptrs: Vec<*mut DAT_PROVIDER_INFO> = a.iter_mut().map(|x| x as *mut _).collect();
    unsafe {
        assert_eq!(list_providers_from(&all, 4, null_mut(), ptrs.as_mut_ptr()), ARG2);
        assert_eq!(list_providers_from(&all, 0, null_mut(), null_mut()), ARG2);
        assert_eq!(list_providers_from(&all, 4, &mut n, null_mut()), ARG3);
        assert_eq!(n, -7);
        // size query: count stored, and (per spec) an error
        assert_eq!(list_providers_from(&all, 0, &mut n, null_mut()), ARG1);
        assert_eq!(n, 3);
        n = -7;
        assert_eq!(list_providers_from(&all, -1, &mut n, ptrs.as_mut_ptr()), ARG1);
        assert_eq!(n, -7);
        // a NULL element among those to fill
        let mut with_null = vec![ptrs[0], null_mut()];
        assert_eq!(list_providers_from(&all, 2, &mut n, with_null.as_mut_ptr()), ARG3);
        // a NULL element beyond what is filled is fine
        let mut tail_null = vec![ptrs[0], null_mut()];
        assert_eq!(list_providers_from(&all[..1], 2, &mut n, tail_null.as_mut_ptr()), 0);
        assert_eq!(n, 1);
        // min(max, size)
        assert_eq!(list_providers_from(&all, 2, &mut n, ptrs.as_mut_ptr()), 0);
        assert_eq!(n, 2);
        assert_eq!(list_providers_from(&all, 4, &mut n, ptrs.as_mut_ptr()), 0);
        assert_eq!(n, 3);
    }
    assert_eq!((name(&a[0]), name(&a[1]), name(&a[2])), ("ia0".into(), "ia1".into(), "ia2".into()));
    assert_eq!((a[1].dapl_version_major, a[1].dapl_version_minor, a[1].is_thread_safe), (1, 2, 1));
    assert_eq!(a[0].is_thread_safe, 0);
    assert_eq!(name(&a[3]), "");
}

#[test]
fn list_export_matches_core() {
    let want = datcore::registry::list(1);
    let mut n: DAT_COUNT = 0;
    unsafe {
        assert_eq!(dat_registry_list_providers(0, &mut n, null_mut()), ARG1);
        assert_eq!(n as usize, want.len());
        assert_eq!(dat_registry_list_providers(1, null_mut(), null_mut()), ARG2);
        assert_eq!(dat_registry_list_providers(1, &mut n, null_mut()), ARG3);
        let mut a: Vec<DAT_PROVIDER_INFO> = (0..want.len().max(1)).map(|_| blank()).collect();
        let mut ptrs: Vec<*mut DAT_PROVIDER_INFO> = a.iter_mut().map(|x| x as *mut _).collect();
        assert_eq!(dat_registry_list_providers(ptrs.len() as DAT_COUNT, &mut n, ptrs.as_mut_ptr()), 0);
        assert_eq!(n as usize, want.len());
        for (c, w) in a.iter().zip(&want) {
            assert_eq!(info_from_c(c), *w);
        }
    }
}

#[test]
fn info_roundtrip() {
    let long = ProviderInfo { ia_name: "x".repeat(300), major: 2, minor: 0, thread_safe: true };
    let c = info_to_c(&long);
    assert_eq!(c.ia_name[255], 0);
    let back = info_from_c(&c);
    assert_eq!(back.ia_name.len(), 255);
    // an unterminated name is read up to 255 bytes
    let mut raw = blank();
    raw.ia_name = [b'y' as c_char; 256];
    assert_eq!(info_from_c(&raw).ia_name.len(), 255);
}

fn leak_provider() -> &'static mut DAT_PROVIDER {
    // SAFETY: every DAT_PROVIDER field is a raw pointer or an Option of a function pointer, for
    // which all-zero is a valid value (NULL / None).
    Box::leak(Box::new(unsafe { std::mem::zeroed::<DAT_PROVIDER>() }))
}

unsafe extern "C" fn fake_open(
    _: DAT_NAME_PTR,
    _: DAT_COUNT,
    _: *mut DAT_EVD_HANDLE,
    _: *mut DAT_IA_HANDLE,
) -> DAT_RETURN {
    0
}

unsafe extern "C" fn fake_pz_create(ia: DAT_IA_HANDLE, pz: *mut DAT_PZ_HANDLE) -> DAT_RETURN {
    // SAFETY: test passes a valid out pointer.
    unsafe { *pz = ia };
    0x1234
}

fn c_info(name: &str, ts: bool) -> DAT_PROVIDER_INFO {
    info_to_c(&ProviderInfo { ia_name: name.into(), major: 1, minor: 2, thread_safe: ts })
}

#[test]
fn add_remove() {
    let p = leak_provider();
    let info = c_info("dyn-test", false);
    unsafe {
        assert_eq!(dat_registry_add_provider(null(), &info), ARG1);
        assert_eq!(dat_registry_add_provider(p, null()), ARG2);
        // no ia_open_func
        assert_eq!(dat_registry_add_provider(p, &info), ARG1);
        p.ia_open_func = Some(fake_open);
        assert_eq!(dat_registry_add_provider(p, &c_info("", false)), ARG2);
        assert_eq!(dat_registry_add_provider(p, &info), 0);
        assert_eq!(dat_registry_add_provider(p, &info), 0x8010_0000);
        // another key part differs: a separate registration
        assert_eq!(dat_registry_add_provider(p, &c_info("dyn-test", true)), 0);
        let key = info_from_c(&info);
        assert!(registered().contains(&key));
        assert!(std::ptr::eq(lookup_registered(&key).unwrap(), p));
        assert_eq!(dat_registry_remove_provider(null(), &info), ARG1);
        assert_eq!(dat_registry_remove_provider(p, null()), ARG2);
        assert_eq!(dat_registry_remove_provider(p, &info), 0);
        assert_eq!(dat_registry_remove_provider(p, &info), 0x800a_0062);
        assert!(lookup_registered(&key).is_none());
        assert_eq!(dat_registry_remove_provider(p, &c_info("dyn-test", true)), 0);
    }
}

extern "C" {
    fn dat_ia_openv(
        name: DAT_NAME_PTR,
        qlen: DAT_COUNT,
        async_evd: *mut DAT_EVD_HANDLE,
        ia: *mut DAT_IA_HANDLE,
        major: DAT_UINT32,
        minor: DAT_UINT32,
        thread_safety: DAT_BOOLEAN,
    ) -> DAT_RETURN;
    fn dat_ia_close(ia: DAT_IA_HANDLE, flags: DAT_CLOSE_FLAGS) -> DAT_RETURN;
}

/// A handle of ours: a shm IA's (close it with `dat_ia_close`).
fn our_ia() -> DAT_IA_HANDLE {
    let (mut ia, mut evd) = (null_mut(), null_mut());
    assert_eq!(unsafe { dat_ia_openv(c"shm".as_ptr().cast_mut(), 8, &mut evd, &mut ia, 1, 2, 1) }, 0);
    ia
}

#[repr(C)]
struct Obj {
    provider: *const DAT_PROVIDER,
    other: u64,
}

#[test]
fn foreign_handles() {
    let p = leak_provider();
    p.ia_open_func = Some(fake_open);
    p.pz_create_func = Some(fake_pz_create);
    let info = c_info("foreign-test", false);
    assert_eq!(unsafe { dat_registry_add_provider(p, &info) }, 0);

    let obj = Box::new(Obj { provider: p, other: 0 });
    let h = &*obj as *const Obj as *mut c_void;
    assert!(is_foreign(h));
    assert!(std::ptr::eq(unsafe { foreign_provider(h) }.unwrap(), p));

    // not one of ours, but first word is not a registered provider
    let junk = Box::new(Obj { provider: 0x5555 as *const _, other: 0 });
    assert!(unsafe { foreign_provider(&*junk as *const Obj as *const c_void) }.is_none());
    // unmapped memory
    let page = unsafe {
        let m = libc::mmap(null_mut(), 4096, libc::PROT_READ, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        assert_ne!(m, libc::MAP_FAILED);
        libc::munmap(m, 4096);
        m
    };
    assert!(read_word(page as usize).is_none());
    assert!(unsafe { foreign_provider(page) }.is_none());
    // PROT_NONE memory
    let none = unsafe { libc::mmap(null_mut(), 4096, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    assert!(unsafe { foreign_provider(none) }.is_none());
    unsafe { libc::munmap(none, 4096) };
    // misaligned, NULL, tiny values, one of our handles, kernel-half addresses
    assert!(unsafe { foreign_provider((h as usize + 1) as *const c_void) }.is_none());
    assert!(unsafe { foreign_provider(null()) }.is_none());
    assert!(!is_foreign(2 as *const c_void));
    let ours = our_ia();
    assert!(!is_foreign(ours));
    assert!(unsafe { foreign_provider(0xffff_8000_0000_0000usize as *const c_void) }.is_none());
    assert!(unsafe { foreign_provider(0x0000_7fff_ffff_f000usize as *const c_void) }.is_none());

    // dispatch
    let mut pz: DAT_PZ_HANDLE = null_mut();
    assert_eq!(foreign_call!(h, pz_create_func, (h, &mut pz)), Some(0x1234));
    assert_eq!(pz, h);
    assert_eq!(foreign_call!(h, pz_free_func, (h)), Some(0xffff_0000)); // NULL slot
    let j = &*junk as *const Obj as *mut c_void;
    assert_eq!(foreign_call!(j, pz_free_func, (j)), None);
    let mut evaluated = false;
    assert_eq!(
        foreign_call!(
            ours,
            pz_create_func,
            (ours, {
                evaluated = true;
                &mut pz
            })
        ),
        None
    );
    assert!(!evaluated);

    assert_eq!(unsafe { dat_ia_close(ours, DAT_CLOSE_ABRUPT_FLAG) }, 0);

    assert_eq!(unsafe { dat_registry_remove_provider(p, &info) }, 0);
    assert!(unsafe { foreign_provider(h) }.is_none());
}
