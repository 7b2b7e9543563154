//! Shared by the third-party provider tests of both faces (crates/dat12/tests/registry_thirdparty.rs,
//! crates/dat20/tests/registry_thirdparty.rs): builds this directory's provider.c for one DAT
//! major version, makes the face's provider-side exports reachable from it, and peeks at a
//! loaded copy's counters.

use datcore::registry::conf::{self, StaticConf};
use datcore::registry::{Library, Registry, Resolution};
use std::ffi::{c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub struct Built {
    pub dir: PathBuf,
    pub provider: PathBuf,
    pub nosyms: PathBuf,
}

fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

fn compile(src: &Path, out: &Path, defines: &[String]) -> bool {
    match Command::new(cc())
        .args(["-shared", "-fPIC", "-O0", "-Wall", "-Werror"])
        .args(defines)
        .arg("-o")
        .arg(out)
        .arg(src)
        .status()
    {
        Ok(s) => s.success(),
        Err(_) => false,
    }
}

/// A libdat export a provider library calls (`dat_registry_add_provider`, …): its name and
/// the face's function. All of them take two pointers and return a DAT_RETURN.
pub type Export = (&'static str, *const c_void);

/// Builds provider.c for DAT `major` (and a library without the entry points) once; None (test
/// skipped) without a working `cc`. `exports` are made callable from the provider.
pub fn built(major: u32, exports: &[Export]) -> Option<&'static Built> {
    static B: OnceLock<Option<Built>> = OnceLock::new();
    B.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("dat{major}-thirdparty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/c/thirdparty/provider.c");
        let provider = dir.join("libdattp.so");
        if !compile(&src, &provider, &[format!("-DTP_DAT_MAJOR={major}")]) {
            eprintln!("skipping: cannot compile {} with {}", src.display(), cc());
            return None;
        }
        let empty = dir.join("empty.c");
        std::fs::write(&empty, "int not_a_provider = 1;\n").ok()?;
        let nosyms = dir.join("libnosyms.so");
        assert!(compile(&empty, &nosyms, &[]));
        install_shim(&dir, exports);
        Some(Built { dir, provider, nosyms })
    })
    .as_ref()
}

/// A test executable does not export the face's functions to dlopen()ed libraries (libdat.so.1
/// and libdat2.so.2 do). Load a global shim that forwards each of `exports` to the Rust function.
fn install_shim(dir: &Path, exports: &[Export]) {
    let mut src = String::from("typedef unsigned (*fn_t)(const void *, const void *);\n");
    for (i, (name, _)) in exports.iter().enumerate() {
        src += &format!("static fn_t f{i};\nunsigned {name}(const void *a, const void *b) {{ return f{i}(a, b); }}\n");
    }
    src += "void dat_shim_set(int i, fn_t f) {\n";
    for i in 0..exports.len() {
        src += &format!("    if (i == {i}) f{i} = f;\n");
    }
    src += "}\n";
    let c = dir.join("shim.c");
    std::fs::write(&c, src).unwrap();
    let so = dir.join("libshim.so");
    assert!(compile(&c, &so, &[]));
    let p = CString::new(so.to_str().unwrap()).unwrap();
    // SAFETY: plain dlopen/dlsym of the shim just built; each function pointer has the
    // two-pointer signature the shim forwards with.
    unsafe {
        let h = libc::dlopen(p.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
        assert!(!h.is_null());
        let set = libc::dlsym(h, c"dat_shim_set".as_ptr());
        assert!(!set.is_null());
        let set: unsafe extern "C" fn(c_int, *const c_void) = std::mem::transmute(set);
        for (i, (_, f)) in exports.iter().enumerate() {
            set(i as c_int, *f);
        }
    }
}

/// A private copy of the provider, so each test has its own library instance and counters.
pub fn copy_provider(b: &Built, tag: &str) -> PathBuf {
    let p = b.dir.join(format!("libdattp-{tag}.so"));
    std::fs::copy(&b.provider, &p).unwrap();
    p
}

pub fn registry_for(conf_text: &str) -> Registry {
    Registry::new(StaticConf { path: Some("t.conf".into()), entries: conf::parse_str(conf_text, "t.conf") }, vec![])
}

pub fn library(r: Result<Resolution, datcore::DatError>) -> Library {
    match r {
        Ok(Resolution::Library(l)) => l,
        other => panic!("expected a library, got {other:?}"),
    }
}

/// A handle on the library only if it is loaded (RTLD_NOLOAD); closed on drop.
pub struct Peek(*mut c_void);
impl Peek {
    pub fn new(path: &Path) -> Option<Peek> {
        let p = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: RTLD_NOLOAD never loads anything; it only returns an existing handle.
        let h = unsafe { libc::dlopen(p.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        // (not `then_some`: that would build, and drop, a Peek of NULL too)
        if h.is_null() {
            None
        } else {
            Some(Peek(h))
        }
    }
    /// The address of one of the provider's exports.
    pub fn symbol(&self, name: &str) -> *mut c_void {
        let n = CString::new(name).unwrap();
        // SAFETY: live handle, NUL-terminated name.
        let s = unsafe { libc::dlsym(self.0, n.as_ptr()) };
        assert!(!s.is_null(), "the provider exports {name}");
        s
    }
    pub fn int(&self, name: &str) -> c_int {
        // SAFETY: the provider exports these ints.
        unsafe { *(self.symbol(name) as *const c_int) }
    }
    pub fn string(&self, name: &str) -> String {
        // SAFETY: the provider exports this NUL-terminated char array.
        unsafe { CStr::from_ptr(self.symbol(name) as *const _) }.to_string_lossy().into_owned()
    }
}
impl Drop for Peek {
    fn drop(&mut self) {
        // SAFETY: handle from dlopen(RTLD_NOLOAD) above.
        unsafe { libc::dlclose(self.0) };
    }
}
