//! A third-party provider library probed the way a consumer reaches it: through the face
//! library the consumer links (`libdat.so.1` or `libdat2.so.2`: ours, beside datinfo in
//! `../lib`, else whichever the dynamic linker finds). The face is loaded `RTLD_GLOBAL` first,
//! as it is in a consumer process, so the provider's references to `dat_registry_add_provider`
//! and `dats_get_ia_handle` bind to it even under immediate binding (OFED's `libdaplofa.so.2`
//! is linked `-z now`); the IA is then opened, queried and closed with the face's own
//! `dat_ia_openv`, `dat_ia_query` and `dat_ia_close`.

use std::ffi::{c_char, c_void, CStr, CString};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::OnceLock;

type IaOpenv = unsafe extern "C" fn(*const c_char, i32, *mut *mut c_void, *mut *mut c_void, u32, u32, u32) -> u32;
type IaQuery = unsafe extern "C" fn(*mut c_void, *mut *mut c_void, u64, *mut c_void, u64, *mut c_void) -> u32;
type IaClose = unsafe extern "C" fn(*mut c_void, u32) -> u32;
type Strerror = unsafe extern "C" fn(u32, *mut *const c_char, *mut *const c_char) -> u32;

/// `DAT_IA_ATTR` offsets, the same in both ABIs (reference layouts): `adapter_name[256]` at 0,
/// `ia_address_ptr` at 528. The buffer is larger than either ABI's `DAT_IA_ATTR`.
const ADAPTER_NAME_LEN: usize = 256;
const IA_ADDRESS_PTR_OFFSET: usize = 528;
const IA_ATTR_BUFFER: usize = 4096;
/// `DAT_IA_FIELD_IA_ADAPTER_NAME | DAT_IA_FIELD_IA_ADDRESS_PTR`.
const IA_ATTR_MASK: u64 = 0x1 | 0x40;
const DAT_CLOSE_ABRUPT_FLAG: u32 = 0;

/// The entry points of a loaded face library.
pub struct FaceLibrary {
    /// What was loaded (a path, or the soname when ours is not beside datinfo).
    pub loaded: String,
    open: IaOpenv,
    query: IaQuery,
    close: IaClose,
    strerror: Strerror,
}

/// What opening an IA through the face found.
pub struct Opened {
    pub adapter: String,
    pub address: Option<SocketAddr>,
}

/// The dynamic linker's last error.
pub fn dlerror_text() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated thread-local string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        return "unknown dlopen error".into();
    }
    // SAFETY: non-NULL and NUL-terminated (above).
    unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
}

/// Ours beside datinfo (`<bin>/../lib/<soname>`, as datperf finds it), else the soname.
fn candidate(soname: &str) -> String {
    let beside: Option<PathBuf> =
        std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.parent()?.join("lib").join(soname)));
    match beside {
        Some(p) if p.exists() => p.display().to_string(),
        _ => soname.to_string(),
    }
}

fn load(soname: &str) -> Result<FaceLibrary, String> {
    let loaded = candidate(soname);
    let c_path = CString::new(loaded.as_str()).map_err(|_| format!("{loaded:?} contains a NUL byte"))?;
    // SAFETY: a NUL-terminated path of a DAT face library, loaded as a consumer links it.
    let dl = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if dl.is_null() {
        return Err(format!("{soname} cannot be loaded: {}", dlerror_text()));
    }
    let sym = |name: &CStr| -> Result<*mut c_void, String> {
        // SAFETY: `dl` is a live handle (never closed) and `name` is NUL-terminated.
        let f = unsafe { libc::dlsym(dl, name.as_ptr()) };
        if f.is_null() {
            Err(format!("{loaded} has no symbol {}", name.to_string_lossy()))
        } else {
            Ok(f)
        }
    };
    // SAFETY: the DAT API defines these exports with these C signatures (dat_ia_openv,
    // dat_ia_query, dat_ia_close, dat_strerror in both udat.h versions).
    unsafe {
        Ok(FaceLibrary {
            open: std::mem::transmute::<*mut c_void, IaOpenv>(sym(c"dat_ia_openv")?),
            query: std::mem::transmute::<*mut c_void, IaQuery>(sym(c"dat_ia_query")?),
            close: std::mem::transmute::<*mut c_void, IaClose>(sym(c"dat_ia_close")?),
            strerror: std::mem::transmute::<*mut c_void, Strerror>(sym(c"dat_strerror")?),
            loaded,
        })
    }
}

/// The face library of DAT `major`, loaded once per process.
pub fn for_major(major: u32) -> Result<&'static FaceLibrary, String> {
    static DAT12: OnceLock<Result<FaceLibrary, String>> = OnceLock::new();
    static DAT20: OnceLock<Result<FaceLibrary, String>> = OnceLock::new();
    let (cell, soname) = if major == 2 { (&DAT20, "libdat2.so.2") } else { (&DAT12, "libdat.so.1") };
    cell.get_or_init(|| load(soname)).as_ref().map_err(Clone::clone)
}

impl FaceLibrary {
    /// `0x...: MAJOR MINOR` through the face's `dat_strerror`.
    fn describe(&self, code: u32) -> String {
        let (mut major, mut minor): (*const c_char, *const c_char) = (std::ptr::null(), std::ptr::null());
        // SAFETY: two writable out pointers; the face sets them to static strings.
        unsafe { (self.strerror)(code, &mut major, &mut minor) };
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: non-NULL static NUL-terminated strings of the face.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        format!("{code:#010x} {} {}", text(major), text(minor)).trim_end().to_string()
    }

    /// Opens IA `name` as a consumer of DAT `major.minor` does, queries its adapter name and
    /// address, and closes it again; `Err` carries the cause.
    pub fn open_query_close(&self, name: &str, major: u32, minor: u32, thread_safe: bool) -> Result<Opened, String> {
        let c_name = CString::new(name).map_err(|_| format!("{name:?} contains a NUL byte"))?;
        let mut evd: *mut c_void = std::ptr::null_mut();
        let mut ia: *mut c_void = std::ptr::null_mut();
        // SAFETY: a NUL-terminated name and writable out pointers.
        let r = unsafe { (self.open)(c_name.as_ptr(), 8, &mut evd, &mut ia, major, minor, u32::from(thread_safe)) };
        if r != 0 {
            return Err(format!("dat_ia_open through {} failed: {}", self.loaded, self.describe(r)));
        }
        let mut attr = vec![0u64; IA_ATTR_BUFFER / 8];
        let mut async_evd: *mut c_void = std::ptr::null_mut();
        // SAFETY: `ia` is open; `attr` is larger than DAT_IA_ATTR and 8-byte aligned.
        let r = unsafe {
            (self.query)(ia, &mut async_evd, IA_ATTR_MASK, attr.as_mut_ptr().cast(), 0, std::ptr::null_mut())
        };
        let opened = if r == 0 {
            let bytes: &[u8] = {
                // SAFETY: `attr` holds IA_ATTR_BUFFER initialised bytes.
                unsafe { std::slice::from_raw_parts(attr.as_ptr().cast::<u8>(), IA_ATTR_BUFFER) }
            };
            let name_bytes = &bytes[..ADAPTER_NAME_LEN];
            let end = name_bytes.iter().position(|&b| b == 0).unwrap_or(ADAPTER_NAME_LEN);
            let adapter = String::from_utf8_lossy(&name_bytes[..end]).into_owned();
            let address = attr[IA_ADDRESS_PTR_OFFSET / 8] as *const libc::sockaddr;
            // SAFETY: the provider set ia_address_ptr to its IA address (or NULL), valid while
            // the IA is open.
            Ok(Opened { adapter, address: unsafe { sockaddr(address) } })
        } else {
            Err(format!("dat_ia_query failed: {}", self.describe(r)))
        };
        // SAFETY: the IA opened above, closed once.
        let r = unsafe { (self.close)(ia, DAT_CLOSE_ABRUPT_FLAG) };
        if r != 0 {
            return Err(format!("opened, but closing it failed: {}", self.describe(r)));
        }
        opened
    }
}

/// An IPv4/IPv6 `sockaddr` as a SocketAddr; None for NULL or another family.
///
/// # Safety
/// `sa` is NULL or points to a sockaddr of its family's size.
unsafe fn sockaddr(sa: *const libc::sockaddr) -> Option<SocketAddr> {
    if sa.is_null() {
        return None;
    }
    // SAFETY: non-NULL sockaddr (caller), read per its family.
    unsafe {
        match i32::from((*sa).sa_family) {
            libc::AF_INET => {
                let a = &*sa.cast::<libc::sockaddr_in>();
                Some(SocketAddr::from((u32::from_be(a.sin_addr.s_addr).to_be_bytes(), u16::from_be(a.sin_port))))
            }
            libc::AF_INET6 => {
                let a = &*sa.cast::<libc::sockaddr_in6>();
                Some(SocketAddr::from((a.sin6_addr.s6_addr, u16::from_be(a.sin6_port))))
            }
            _ => None,
        }
    }
}
