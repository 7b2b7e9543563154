//! Opening and closing IAs through the registry: built-in providers in the core, or
//! third-party provider libraries of the face's DAT version named in dat.conf.

use crate::abi::*;
use crate::registry::LibraryError;
use datcore::handle::Handle;
use datcore::ia::InterfaceAdapter;
use datcore::registry::{self, Resolution};
use datcore::DatResult;

/// `dat_ia_openv` after argument checks: resolves the name and opens the IA.
pub fn open_ia(
    name: &str,
    async_qlen: DAT_COUNT,
    async_evd: &mut DAT_EVD_HANDLE,
    ia_out: &mut DAT_IA_HANDLE,
    major: u32,
    minor: u32,
    thread_safe: bool,
) -> DatResult<()> {
    if major != DAT_VERSION_MAJOR {
        // Each library serves its own DAT major version only (a DAT 2.0 provider table is not a
        // DAT 1.2 one), as the listing shows only that version's entries.
        tracing::warn!(
            "dat_ia_open('{name}'): DAT {major}.{minor} asked of the DAT {DAT_VERSION_MAJOR}.{DAT_VERSION_MINOR} library"
        );
        return Err(registry::NOT_FOUND);
    }
    match registry::resolve_candidates(name, major, minor, thread_safe) {
        Ok(candidates) => open_first_usable(name, candidates, async_qlen, async_evd, ia_out),
        // Not in dat.conf or built in: a provider the application registered itself.
        // SAFETY: both pointers come from exclusive references.
        Err(e) => {
            unsafe { crate::registry::open_registered(name, major, minor, thread_safe, async_qlen, async_evd, ia_out) }
                .unwrap_or(Err(e))
        }
    }
}

/// Opens the IA with the first of `candidates` that can serve it: a built-in provider, or a
/// provider library that loads and registers the IA; when a library cannot (its cause is
/// logged already), the next dat.conf line of the key is tried, as OFED's registry does.
fn open_first_usable(
    name: &str,
    candidates: Vec<Resolution>,
    async_qlen: DAT_COUNT,
    async_evd: &mut DAT_EVD_HANDLE,
    ia_out: &mut DAT_IA_HANDLE,
) -> DatResult<()> {
    let count = candidates.len();
    for (i, candidate) in candidates.into_iter().enumerate() {
        match candidate {
            Resolution::Builtin { provider, ia_name, params } => {
                let (ia, _, evd) =
                    InterfaceAdapter::open(&provider, &ia_name, &params, async_qlen, Handle::from_ptr(*async_evd))
                        .inspect_err(|e| {
                            tracing::warn!(
                                "dat_ia_open('{name}'): provider {} could not open it ({e})",
                                provider.name()
                            )
                        })?;
                *ia_out = ia.as_ptr();
                *async_evd = evd.as_ptr();
                return Ok(());
            }
            Resolution::Library(lib) => {
                // SAFETY: both pointers come from exclusive references.
                match unsafe { crate::registry::open_library(&lib, async_qlen, async_evd, ia_out) } {
                    Ok(()) => return Ok(()),
                    Err(LibraryError::Open(e)) => return Err(e),
                    Err(LibraryError::Unusable) if i + 1 < count => {
                        tracing::warn!(
                            "dat_ia_open('{name}'): {} unusable; trying the next dat.conf line",
                            lib.lib_path
                        )
                    }
                    Err(LibraryError::Unusable) => {}
                }
            }
        }
    }
    Err(registry::NOT_FOUND)
}

/// True if `ia` was opened through a third-party provider library.
pub fn is_library_ia(ia: DAT_IA_HANDLE) -> bool {
    !Handle::from_ptr(ia).is_ours() && crate::registry::is_library_ia(ia)
}

/// `dat_ia_close` for an IA of a third-party provider library.
pub fn close_library_ia(ia: DAT_IA_HANDLE, flags: DAT_CLOSE_FLAGS) -> DatResult<()> {
    // SAFETY: the consumer's arguments, for an IA of a library provider.
    unsafe { crate::registry::close_library_ia(ia, flags) }
}
