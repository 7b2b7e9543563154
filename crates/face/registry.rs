//! The registry exports of a face: `dat_registry_list_providers`, the provider-side
//! `dat_registry_add_provider` / `dat_registry_remove_provider` (the dynamic registry),
//! third-party provider libraries named in dat.conf, and dispatch of their handles.
//!
//! # How the rest of the face uses this module
//!
//! **Opening an IA** (`dat_ia_openv`):
//! ```ignore
//! // 1. The static registry / built-ins, candidates in dat.conf order:
//! for candidate in datcore::registry::resolve_candidates(&name, major, minor, ts)? {
//!     match candidate {
//!         Resolution::Builtin { provider, ia_name, params } => { /* core IA */ }
//!         Resolution::Library(lib) => match registry::open_library(&lib, qlen, async_evd, ia_out) {
//!             Err(LibraryError::Unusable) => continue, // the next dat.conf line of the key
//!             r => return r,
//!         },
//!     }
//! }
//! // 2. A name the static registry does not know: a provider the application registered
//! //    itself in the dynamic registry:
//! registry::open_registered(&name, major, minor, ts, qlen, async_evd, ia_out)
//! ```
//! `*ia_out` then holds the third-party provider's own IA pointer.
//!
//! **Closing** (`dat_ia_close`): `if registry::is_library_ia(ia) { return registry::close_library_ia(ia, flags); }`
//! — it calls the provider's `ia_close_func` and, on the last IA of that library, calls
//! `dat_provider_fini` and dlclose()s it.
//!
//! **Every other export** taking a handle dispatches foreign handles first:
//! ```ignore
//! if let Some(r) = foreign_call!(ep_handle, ep_post_send_func, (ep_handle, n, iov, cookie, flags)) {
//!     return registry::ret(r);
//! }
//! ```
//! `foreign_call!` evaluates to `None` (cheaply: one atomic load) unless third-party providers
//! are registered and the handle is a real pointer whose first word is one of their
//! `DAT_PROVIDER *`s; then it calls the slot and yields `Some(DAT_RETURN)` (`DAT_NOT_IMPLEMENTED`
//! for a NULL slot). The arguments are evaluated only when the call is made.
//!
//! Our own handles are addresses of the core's handle slots (`datcore::handle`), told apart by
//! one mask before anything is read, so they never reach a third party's table; a
//! foreign-looking value that no registered provider owns is left to the face's normal handle
//! check (which rejects it). The first word is read with `process_vm_readv` on our own pid
//! (falling back to a pipe write), so a garbage pointer gives `None`, never SIGSEGV.

use datcore::codes::{DAT_INVALID_HANDLE_IA, DAT_NOT_IMPLEMENTED, DAT_PROVIDER_ALREADY_REGISTERED, DAT_SUCCESS};
use datcore::registry::{Library, ProviderInfo};
use datcore::{DatError, DatResult};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::abi::*;

// The provider-table slots this module relies on are at the same offsets in both faces
// (dat-abi.md §1.3, §2.4: DAT 2.0 appends slots after the 70 of DAT 1.2).
const _: () = assert!(std::mem::offset_of!(DAT_PROVIDER, pz_create_func) == 416);
const _: () = assert!(std::mem::offset_of!(DAT_PROVIDER, srq_set_lw_func) == 552);
const _: () = assert!(std::mem::size_of::<DAT_PROVIDER_INFO>() == 268);

/// `DAT_NOT_IMPLEMENTED` in the face's numbering: what a NULL provider slot yields through
/// [`foreign_call!`].
pub const NOT_IMPLEMENTED_RETURN: DAT_RETURN = crate::convert::code_out(DAT_NOT_IMPLEMENTED);

/// A provider's DAT_RETURN (in the face's numbering) as the face's `DatResult`, whose error is
/// in the core's numbering (`crate::convert::code_in`); the boundary turns it back unchanged.
/// Warnings and errors both pass through.
pub fn ret(r: DAT_RETURN) -> DatResult<()> {
    if r == DAT_SUCCESS {
        Ok(())
    } else {
        Err(DatError(crate::convert::code_in(r)))
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs an export body that returns a core (DAT 1.2 numbered) code; a panic becomes
/// `DAT_INTERNAL_ERROR` instead of unwinding into C. The result is in the face's numbering.
fn guard(name: &'static str, f: impl FnOnce() -> DAT_RETURN) -> DAT_RETURN {
    datcore::log::init();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => crate::convert::code_out(r),
        Err(_) => {
            tracing::error!("{name}: internal panic caught at the C boundary");
            crate::convert::code_out(DatError::INTERNAL.0)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// DAT_PROVIDER_INFO <-> ProviderInfo

/// Reads a C DAT_PROVIDER_INFO (the name may lack a terminator: at most 255 bytes are used).
pub fn info_from_c(i: &DAT_PROVIDER_INFO) -> ProviderInfo {
    let bytes: Vec<u8> =
        i.ia_name.iter().take(DAT_NAME_MAX_LENGTH - 1).take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    ProviderInfo {
        ia_name: String::from_utf8_lossy(&bytes).into_owned(),
        major: i.dapl_version_major,
        minor: i.dapl_version_minor,
        thread_safe: i.is_thread_safe != 0,
    }
}

/// Builds a C DAT_PROVIDER_INFO (name truncated to 255 bytes, NUL-terminated).
pub fn info_to_c(i: &ProviderInfo) -> DAT_PROVIDER_INFO {
    let mut out = DAT_PROVIDER_INFO {
        ia_name: [0; DAT_NAME_MAX_LENGTH],
        dapl_version_major: i.major,
        dapl_version_minor: i.minor,
        is_thread_safe: i.thread_safe as DAT_BOOLEAN,
    };
    for (d, s) in out.ia_name.iter_mut().zip(i.ia_name.bytes().take(DAT_NAME_MAX_LENGTH - 1)) {
        *d = s as c_char;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// dat_registry_list_providers

/// `dat_registry_list_providers` over an explicit list (the export passes the process registry).
///
/// # Safety
/// Same contract as the export: non-NULL pointers are valid, and `list` has `max_to_return`
/// readable elements, each NULL or a writable DAT_PROVIDER_INFO.
pub unsafe fn list_providers_from(
    all: &[ProviderInfo],
    max_to_return: DAT_COUNT,
    entries_returned: *mut DAT_COUNT,
    list: *mut *mut DAT_PROVIDER_INFO,
) -> DAT_RETURN {
    if entries_returned.is_null() {
        return DatError::invalid_arg(2).0;
    }
    if max_to_return != 0 && list.is_null() {
        return DatError::invalid_arg(3).0;
    }
    let total = all.len().min(i32::MAX as usize) as DAT_COUNT;
    if max_to_return == 0 {
        // SAFETY: checked non-NULL; the caller passes a writable DAT_COUNT.
        unsafe { *entries_returned = total };
        // "We must also (per spec) return an error": the count is the answer to a size query.
        return DatError::invalid_arg(1).0;
    }
    if max_to_return < 0 {
        return DatError::invalid_arg(1).0;
    }
    let n = (max_to_return as usize).min(all.len());
    // SAFETY: `list` is non-NULL and holds `max_to_return >= n` readable pointers.
    let slots = unsafe { std::slice::from_raw_parts(list, n) };
    if slots.iter().any(|p| p.is_null()) {
        return DatError::invalid_arg(3).0;
    }
    for (slot, info) in slots.iter().zip(all) {
        // SAFETY: non-NULL, caller-owned DAT_PROVIDER_INFO storage.
        unsafe { slot.write(info_to_c(info)) };
    }
    // SAFETY: checked non-NULL above.
    unsafe { *entries_returned = n as DAT_COUNT };
    DAT_SUCCESS
}

/// Lists the static registry: built-in IAs, then the loadable dat.conf entries registered for
/// the face's DAT major version in file order: the 1.2 face lists `u1.*` lines and never
/// `u2.0` ones (as OFED's 1.2 library), the 2.0 face only `u2.*` lines.
///
/// Errors (DAT 1.2 numbering): `entries_returned == NULL` → `DAT_INVALID_PARAMETER|ARG2`
/// (0x80060025); `max_to_return != 0` with a NULL list or a NULL element →
/// `DAT_INVALID_PARAMETER|ARG3` (0x80060026); `max_to_return == 0` stores the number of
/// entries in `*entries_returned` and returns `DAT_INVALID_PARAMETER|ARG1` (0x80060024), as the
/// reference does; a negative `max_to_return` is `DAT_INVALID_PARAMETER|ARG1` too.
///
/// # Safety
/// C caller contract as in the DAT 1.2 specification.
#[no_mangle]
pub unsafe extern "C" fn dat_registry_list_providers(
    max_to_return: DAT_COUNT,
    entries_returned: *mut DAT_COUNT,
    dat_provider_list: *mut *mut DAT_PROVIDER_INFO,
) -> DAT_RETURN {
    guard("dat_registry_list_providers", || {
        let all = datcore::registry::list(DAT_VERSION_MAJOR);
        // SAFETY: forwarded C caller contract.
        unsafe { list_providers_from(&all, max_to_return, entries_returned, dat_provider_list) }
    })
}

// ---------------------------------------------------------------------------------------------
// The dynamic registry

struct DynEntry {
    key: ProviderInfo,
    /// `*const DAT_PROVIDER`, owned by the provider; valid until it removes itself.
    provider: usize,
}

static DYNAMIC: Mutex<Vec<DynEntry>> = Mutex::new(Vec::new());
/// Number of entries in [`DYNAMIC`]; the cheap "any third-party provider?" test.
static FOREIGN: AtomicUsize = AtomicUsize::new(0);

/// The provider registered under `key`, if any.
pub fn lookup_registered(key: &ProviderInfo) -> Option<&'static DAT_PROVIDER> {
    let p = lock(&DYNAMIC).iter().find(|e| &e.key == key).map(|e| e.provider)?;
    // SAFETY: registered providers stay valid until dat_registry_remove_provider (contract of
    // dat_registry_add_provider); the pointer is non-NULL (checked at add).
    Some(unsafe { &*(p as *const DAT_PROVIDER) })
}

/// The keys in the dynamic registry, in registration order.
pub fn registered() -> Vec<ProviderInfo> {
    lock(&DYNAMIC).iter().map(|e| e.key.clone()).collect()
}

/// Registers a provider for `provider_info`'s key (name, major, minor, thread safety).
///
/// Errors: NULL `provider` (or a NULL `ia_open_func`) → `DAT_INVALID_PARAMETER|ARG1`; NULL
/// `provider_info` → `DAT_INVALID_PARAMETER|ARG2`; an empty name → `DAT_INVALID_PARAMETER|ARG2`;
/// key already registered → `DAT_PROVIDER_ALREADY_REGISTERED`.
///
/// # Safety
/// Non-NULL arguments point to valid structures; `*provider` stays valid and unchanged until
/// it is removed.
#[no_mangle]
pub unsafe extern "C" fn dat_registry_add_provider(
    provider: *const DAT_PROVIDER,
    provider_info: *const DAT_PROVIDER_INFO,
) -> DAT_RETURN {
    guard("dat_registry_add_provider", || {
        // SAFETY: C caller contract: NULL or a valid DAT_PROVIDER.
        let Some(p) = (unsafe { provider.as_ref() }) else {
            return DatError::invalid_arg(1).0;
        };
        // SAFETY: C caller contract: NULL or a valid DAT_PROVIDER_INFO.
        let Some(info) = (unsafe { provider_info.as_ref() }) else {
            return DatError::invalid_arg(2).0;
        };
        if p.ia_open_func.is_none() {
            tracing::warn!("dat_registry_add_provider: provider has no ia_open_func");
            return DatError::invalid_arg(1).0;
        }
        let key = info_from_c(info);
        if key.ia_name.is_empty() {
            return DatError::invalid_arg(2).0;
        }
        let mut d = lock(&DYNAMIC);
        if d.iter().any(|e| e.key == key) {
            tracing::warn!("dat_registry_add_provider: {key} is already registered");
            return DatError::new(DAT_PROVIDER_ALREADY_REGISTERED, 0).0;
        }
        tracing::debug!("dat_registry_add_provider: {key}");
        d.push(DynEntry { key, provider: provider as usize });
        FOREIGN.store(d.len(), Ordering::Release);
        DAT_SUCCESS
    })
}

/// Removes the provider registered for `provider_info`'s key.
///
/// Errors: NULL `provider` → `DAT_INVALID_PARAMETER|ARG1`; NULL `provider_info` →
/// `DAT_INVALID_PARAMETER|ARG2`; key not registered →
/// `DAT_PROVIDER_NOT_FOUND|DAT_NAME_NOT_REGISTERED`.
///
/// # Safety
/// Non-NULL arguments point to valid structures.
#[no_mangle]
pub unsafe extern "C" fn dat_registry_remove_provider(
    provider: *const DAT_PROVIDER,
    provider_info: *const DAT_PROVIDER_INFO,
) -> DAT_RETURN {
    guard("dat_registry_remove_provider", || {
        if provider.is_null() {
            return DatError::invalid_arg(1).0;
        }
        // SAFETY: C caller contract: NULL or a valid DAT_PROVIDER_INFO.
        let Some(info) = (unsafe { provider_info.as_ref() }) else {
            return DatError::invalid_arg(2).0;
        };
        let key = info_from_c(info);
        let mut d = lock(&DYNAMIC);
        match d.iter().position(|e| e.key == key) {
            Some(i) => {
                d.remove(i);
                FOREIGN.store(d.len(), Ordering::Release);
                tracing::debug!("dat_registry_remove_provider: {key}");
                DAT_SUCCESS
            }
            None => {
                tracing::warn!("dat_registry_remove_provider: {key} is not registered");
                datcore::registry::NOT_FOUND.0
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Foreign handles

/// True when `h` may be a third-party provider's handle: it is not the address of one of our
/// handle slots (tested first: our own handles cost one mask), third-party providers are
/// registered, and `h` is not NULL or one of the small reserved values.
#[inline]
pub fn is_foreign(h: *const c_void) -> bool {
    !datcore::handle::Handle::from_ptr(h).is_ours() && FOREIGN.load(Ordering::Acquire) != 0 && (h as usize) >= 4096
}

fn read_word_vm(addr: usize) -> Result<usize, c_int> {
    let mut word: usize = 0;
    let local = libc::iovec { iov_base: (&mut word as *mut usize).cast(), iov_len: std::mem::size_of::<usize>() };
    let remote = libc::iovec { iov_base: addr as *mut c_void, iov_len: std::mem::size_of::<usize>() };
    // SAFETY: `local` describes our own stack variable; the kernel validates `remote` and
    // reports EFAULT for unmapped memory instead of faulting.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == std::mem::size_of::<usize>() as isize {
        Ok(word)
    } else if n < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EFAULT))
    } else {
        Err(libc::EFAULT)
    }
}

fn read_word_pipe(addr: usize) -> Option<usize> {
    static PIPE: OnceLock<Option<Mutex<[c_int; 2]>>> = OnceLock::new();
    let pipe = PIPE.get_or_init(|| {
        let mut fds = [0 as c_int; 2];
        // SAFETY: `fds` is a valid array of two ints.
        let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) };
        (r == 0).then(|| Mutex::new(fds))
    });
    let fds = lock(pipe.as_ref()?);
    let size = std::mem::size_of::<usize>();
    // SAFETY: the kernel copies from `addr` and reports EFAULT if it is not readable.
    let w = unsafe { libc::write(fds[1], addr as *const c_void, size) };
    if w != size as isize {
        return None;
    }
    let mut word: usize = 0;
    // SAFETY: reads into our own variable the bytes just written (the lock keeps it drained).
    let r = unsafe { libc::read(fds[0], (&mut word as *mut usize).cast(), size) };
    (r == size as isize).then_some(word)
}

/// Reads the pointer-sized word at `addr` without faulting; None if it is not readable.
pub fn read_word(addr: usize) -> Option<usize> {
    if addr == 0 || !addr.is_multiple_of(std::mem::align_of::<usize>()) {
        return None;
    }
    match read_word_vm(addr) {
        Ok(w) => Some(w),
        Err(libc::EFAULT) | Err(libc::ESRCH) => None,
        // ENOSYS / EPERM (seccomp, old kernels): the pipe trick.
        Err(_) => read_word_pipe(addr),
    }
}

/// The registered third-party `DAT_PROVIDER` that owns handle `h`, read from its first word;
/// None for our own handles, NULL, unreadable or unrecognised values.
///
/// # Safety
/// The returned reference is valid while that provider stays registered (until its library's
/// `dat_provider_fini` removes it); callers use it within one export call.
#[inline]
pub unsafe fn foreign_provider(h: *const c_void) -> Option<&'static DAT_PROVIDER> {
    if !is_foreign(h) {
        return None;
    }
    // SAFETY: the caller's contract is passed on unchanged.
    unsafe { registered_provider(h) }
}

/// The slow half of [`foreign_provider`], for values that may be a third party's.
///
/// # Safety
/// As [`foreign_provider`].
#[cold]
#[inline(never)]
unsafe fn registered_provider(h: *const c_void) -> Option<&'static DAT_PROVIDER> {
    let word = read_word(h as usize)?;
    if word == 0 {
        return None;
    }
    let known = lock(&DYNAMIC).iter().any(|e| e.provider == word);
    // SAFETY: `word` is the address of a DAT_PROVIDER that a provider registered and that stays
    // valid until it is removed (the caller's contract covers the lifetime).
    known.then(|| unsafe { &*(word as *const DAT_PROVIDER) })
}

/// Dispatches a call to a third-party provider's table when `$h` is one of its handles.
///
/// `foreign_call!(h, slot, (args…))` is `Option<DAT_RETURN>`: `None` when `h` is not a
/// registered third-party provider's handle (then the face handles it itself), `Some(ret)`
/// otherwise (`DAT_NOT_IMPLEMENTED` if the provider left the slot NULL). It carries its own
/// `unsafe` blocks, so it can be used in safe code. The arguments are
/// evaluated only when the call is made.
#[macro_export]
macro_rules! foreign_call {
    ($h:expr, $slot:ident, ($($arg:expr),* $(,)?)) => {{
        let __h = $h as *const ::std::ffi::c_void;
        // SAFETY: foreign_provider reads the first word without faulting and returns only
        // registered provider tables; the reference is used within this call.
        match unsafe { $crate::registry::foreign_provider(__h) } {
            Some(__p) => Some(match __p.$slot {
                // SAFETY: the provider registered this table for its own handles; the
                // consumer's arguments are passed through unchanged, as the reference libdat does.
                Some(__f) => {
                    #[allow(clippy::macro_metavars_in_unsafe)]
                    // SAFETY: as above.
                    unsafe { __f($($arg),*) }
                }
                None => $crate::registry::NOT_IMPLEMENTED_RETURN,
            }),
            None => None,
        }
    }};
}

// ---------------------------------------------------------------------------------------------
// Provider libraries

type InitFn = unsafe extern "C" fn(*const DAT_PROVIDER_INFO, *const c_char);
type FiniFn = unsafe extern "C" fn(*const DAT_PROVIDER_INFO);

/// One dat.conf entry's library, loaded (the reference's per-entry ref count).
struct Loaded {
    lib_path: String,
    key: ProviderInfo,
    dl: usize,
    fini: FiniFn,
    info: Box<DAT_PROVIDER_INFO>,
    refs: usize,
}

static LIBS: Mutex<Vec<Loaded>> = Mutex::new(Vec::new());

struct OpenIa {
    ia: usize,
    provider: usize,
    /// (lib_path, key) of the library reference it holds, None if opened through a provider
    /// registered by other means.
    lib: Option<(String, ProviderInfo)>,
}

static OPEN_IAS: Mutex<Vec<OpenIa>> = Mutex::new(Vec::new());

fn dlerror_text() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated thread-local string.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown dl error".to_string()
    } else {
        // SAFETY: non-NULL and NUL-terminated (above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn not_found() -> DatError {
    datcore::registry::NOT_FOUND
}

/// Loads (or takes one more reference on) the library of `lib`; calls `dat_provider_init` on
/// first load.
fn acquire(lib: &Library) -> DatResult<()> {
    let mut libs = lock(&LIBS);
    if let Some(l) = libs.iter_mut().find(|l| l.lib_path == lib.lib_path && l.key == lib.info) {
        l.refs += 1;
        return Ok(());
    }
    let path = CString::new(lib.lib_path.as_str()).map_err(|_| {
        tracing::warn!("dat_ia_open: IA '{}': lib_path contains a NUL byte", lib.info.ia_name);
        not_found()
    })?;
    let params = CString::new(lib.ia_params.as_str()).unwrap_or_default();
    // SAFETY: `path` is NUL-terminated; loading a provider library is what dat.conf asks for.
    let dl = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if dl.is_null() {
        tracing::warn!("dat_ia_open: IA '{}': cannot load {}: {}", lib.info.ia_name, lib.lib_path, dlerror_text());
        return Err(not_found());
    }
    let sym = |name: &CStr| {
        // SAFETY: `dl` is a live handle and `name` is NUL-terminated.
        unsafe { libc::dlsym(dl, name.as_ptr()) }
    };
    let init = sym(c"dat_provider_init");
    let fini = sym(c"dat_provider_fini");
    if init.is_null() || fini.is_null() {
        let missing = if init.is_null() { "dat_provider_init" } else { "dat_provider_fini" };
        tracing::warn!("dat_ia_open: IA '{}': {} has no symbol {missing}", lib.info.ia_name, lib.lib_path);
        // SAFETY: `dl` came from dlopen and nothing of it is in use.
        unsafe { libc::dlclose(dl) };
        return Err(not_found());
    }
    // SAFETY: the DAT provider ABI defines these two symbols with these signatures.
    let (init, fini) =
        unsafe { (std::mem::transmute::<*mut c_void, InitFn>(init), std::mem::transmute::<*mut c_void, FiniFn>(fini)) };
    let info = Box::new(info_to_c(&lib.info));
    tracing::debug!("dat_ia_open: loaded {} for {}; calling dat_provider_init", lib.lib_path, lib.info);
    // SAFETY: `info` and `params` outlive the call (info lives until fini); the provider
    // registers itself through dat_registry_add_provider, which takes a different lock.
    unsafe { init(&*info, params.as_ptr()) };
    libs.push(Loaded { lib_path: lib.lib_path.clone(), key: lib.info.clone(), dl: dl as usize, fini, info, refs: 1 });
    Ok(())
}

/// Drops one reference on a loaded library; on the last, calls `dat_provider_fini` and
/// dlclose()s it.
fn release(lib_path: &str, key: &ProviderInfo) {
    let mut libs = lock(&LIBS);
    let Some(i) = libs.iter().position(|l| l.lib_path == lib_path && &l.key == key) else {
        return;
    };
    libs[i].refs -= 1;
    if libs[i].refs > 0 {
        return;
    }
    let l = libs.remove(i);
    tracing::debug!("dat_ia_close: unloading {} ({})", l.lib_path, l.key);
    // SAFETY: `l.fini` belongs to the still-loaded library; `l.info` is the info init got.
    unsafe { (l.fini)(&*l.info) };
    // SAFETY: the handle came from dlopen; no IA of this entry is open any more.
    if unsafe { libc::dlclose(l.dl as *mut c_void) } != 0 {
        tracing::warn!("dat_ia_close: dlclose({}) failed: {}", l.lib_path, dlerror_text());
    }
}

/// Calls a registered provider's ia_open_func and records the IA.
///
/// # Safety
/// `async_evd` / `ia_out` as in `dat_ia_openv`.
unsafe fn open_with(
    p: &DAT_PROVIDER,
    key: &ProviderInfo,
    qlen: DAT_COUNT,
    async_evd: *mut DAT_EVD_HANDLE,
    ia_out: *mut DAT_IA_HANDLE,
    lib: Option<(String, ProviderInfo)>,
) -> DatResult<()> {
    let Some(open) = p.ia_open_func else {
        return Err(not_found());
    };
    let name = CString::new(key.ia_name.as_str()).map_err(|_| not_found())?;
    // SAFETY: the provider registered this function; the name is NUL-terminated and the
    // handle pointers are the consumer's.
    let r = unsafe { open(name.as_ptr() as DAT_NAME_PTR, qlen, async_evd, ia_out) };
    if r != DAT_SUCCESS {
        tracing::warn!("dat_ia_open: provider for {key} failed to open it: {r:#010x}");
        return Err(DatError(crate::convert::code_in(r)));
    }
    // SAFETY: the provider succeeded, so it wrote the IA handle.
    let ia = unsafe { *ia_out } as usize;
    lock(&OPEN_IAS).push(OpenIa { ia, provider: p as *const DAT_PROVIDER as usize, lib });
    Ok(())
}

/// Opens an IA through a provider already in the dynamic registry (registered by a loaded
/// library or by the application). None if no provider is registered for the key.
///
/// # Safety
/// `async_evd` / `ia_out` as in `dat_ia_openv` (ia_out non-NULL and writable).
pub unsafe fn open_registered(
    name: &str,
    major: u32,
    minor: u32,
    thread_safe: bool,
    qlen: DAT_COUNT,
    async_evd: *mut DAT_EVD_HANDLE,
    ia_out: *mut DAT_IA_HANDLE,
) -> Option<DatResult<()>> {
    let key = ProviderInfo { ia_name: name.to_string(), major, minor, thread_safe };
    let p = lookup_registered(&key)?;
    // SAFETY: forwarded caller contract.
    Some(unsafe { open_with(p, &key, qlen, async_evd, ia_out, None) })
}

/// Why [`open_library`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibraryError {
    /// The library cannot be loaded, lacks the entry points or does not register the IA in
    /// `dat_provider_init`: another dat.conf line of the same key may serve instead.
    Unusable,
    /// The provider's `ia_open_func` refused (its code, in the core's numbering).
    Open(DatError),
}

/// Opens an IA of a third-party provider library: dlopen (RTLD_NOW|RTLD_GLOBAL) and
/// `dat_provider_init(info, ia_params)` on first use of this dat.conf entry, then the
/// `ia_open_func` the library registered for `lib.info`. On failure the cause is logged in one
/// line and the library reference is dropped again (unloading it if it was the last).
///
/// # Safety
/// `async_evd` / `ia_out` as in `dat_ia_openv` (ia_out non-NULL and writable).
pub unsafe fn open_library(
    lib: &Library,
    qlen: DAT_COUNT,
    async_evd: *mut DAT_EVD_HANDLE,
    ia_out: *mut DAT_IA_HANDLE,
) -> Result<(), LibraryError> {
    acquire(lib).map_err(|_| LibraryError::Unusable)?;
    let Some(p) = lookup_registered(&lib.info) else {
        tracing::warn!("dat_ia_open: {} did not register {} in dat_provider_init", lib.lib_path, lib.info);
        release(&lib.lib_path, &lib.info);
        return Err(LibraryError::Unusable);
    };
    // SAFETY: forwarded caller contract.
    let r = unsafe { open_with(p, &lib.info, qlen, async_evd, ia_out, Some((lib.lib_path.clone(), lib.info.clone()))) };
    if r.is_err() {
        release(&lib.lib_path, &lib.info);
    }
    r.map_err(LibraryError::Open)
}

/// True if `ia` is an IA opened through a third-party provider (by [`open_library`] or
/// [`open_registered`]) and not closed yet.
pub fn is_library_ia(ia: *const c_void) -> bool {
    !ia.is_null() && lock(&OPEN_IAS).iter().any(|o| o.ia == ia as usize)
}

/// Closes a third-party IA: its provider's `ia_close_func(ia, flags)`; on success forgets it
/// and drops its library reference (on the last: `dat_provider_fini`, dlclose).
/// `DAT_INVALID_HANDLE|DAT_INVALID_HANDLE_IA` if `ia` is not such an IA.
///
/// # Safety
/// Called from `dat_ia_close` with the consumer's arguments.
pub unsafe fn close_library_ia(ia: DAT_IA_HANDLE, flags: DAT_CLOSE_FLAGS) -> DatResult<()> {
    let provider = lock(&OPEN_IAS).iter().find(|o| o.ia == ia as usize).map(|o| o.provider);
    let Some(provider) = provider else {
        return Err(DatError::invalid_handle(DAT_INVALID_HANDLE_IA));
    };
    // SAFETY: the provider table stays valid while one of its IAs is open (its library holds a
    // reference and is not unloaded before the IA is closed).
    let p = unsafe { &*(provider as *const DAT_PROVIDER) };
    let Some(close) = p.ia_close_func else {
        return Err(DatError::NOT_IMPLEMENTED);
    };
    // SAFETY: the provider's own close function on its own handle.
    let r = unsafe { close(ia, flags) };
    if r != DAT_SUCCESS {
        return Err(DatError(crate::convert::code_in(r)));
    }
    let lib = {
        let mut ias = lock(&OPEN_IAS);
        ias.iter().position(|o| o.ia == ia as usize).and_then(|i| ias.remove(i).lib)
    };
    if let Some((path, key)) = lib {
        release(&path, &key);
    }
    Ok(())
}

/// How many references the library entry (`lib_path`, key) holds; 0 when not loaded (tests).
pub fn library_refs(lib_path: &str, key: &ProviderInfo) -> usize {
    lock(&LIBS).iter().find(|l| l.lib_path == lib_path && &l.key == key).map_or(0, |l| l.refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_fallback_reads_safely() {
        let v: usize = 0x1122_3344_5566_7788;
        assert_eq!(read_word_pipe(&v as *const usize as usize), Some(v));
        // SAFETY: plain anonymous mapping, unmapped again right away.
        let page = unsafe {
            let m =
                libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
            assert_ne!(m, libc::MAP_FAILED);
            m as usize
        };
        assert_eq!(read_word_pipe(page), None);
        assert_eq!(read_word(page), None);
        // the pipe stays usable after a failed write
        assert_eq!(read_word_pipe(&v as *const usize as usize), Some(v));
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(page as *mut c_void, 4096) };
        assert_eq!(read_word(0), None);
        assert_eq!(read_word(&v as *const usize as usize + 1), None);
    }
}
