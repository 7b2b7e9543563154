//! Opening and closing IAs through the registry: built-in providers in the core, or
//! third-party DAT 1.2 provider libraries named in dat.conf.

use crate::abi::*;
use datcore::codes::{DAT_NAME_NOT_REGISTERED, DAT_PROVIDER_NOT_FOUND};
use datcore::handle::Handle;
use datcore::ia::InterfaceAdapter;
use datcore::registry::{self, Resolution};
use datcore::{DatError, DatResult};

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
    // A face answers only for its own DAT major version, as OFED's two libraries do: a DAT 1.2
    // consumer is never handed a 2.0 provider, nor the reverse (the name is not registered for it).
    if major != DAT_VERSION_MAJOR {
        tracing::warn!("dat_ia_open('{name}'): DAT {major}.{minor} asked of the DAT {DAT_VERSION_MAJOR}.x library");
        return Err(DatError::new(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED));
    }
    let resolved = registry::resolve(name, major, minor, thread_safe);
    match resolved {
        Ok(Resolution::Builtin { provider, ia_name, params }) => {
            let (ia, _, evd) =
                InterfaceAdapter::open(&provider, &ia_name, &params, async_qlen, Handle::from_ptr(*async_evd))
                    .inspect_err(|e| {
                        tracing::warn!("dat_ia_open('{name}'): provider {} could not open it ({e})", provider.name())
                    })?;
            *ia_out = ia.as_ptr();
            *async_evd = evd.as_ptr();
            Ok(())
        }
        // SAFETY: both pointers come from exclusive references.
        Ok(Resolution::Library(lib)) => unsafe { crate::registry::open_library(&lib, async_qlen, async_evd, ia_out) },
        // Not in dat.conf or built in: a provider the application registered itself.
        // SAFETY: both pointers come from exclusive references.
        Err(e) => {
            unsafe { crate::registry::open_registered(name, major, minor, thread_safe, async_qlen, async_evd, ia_out) }
                .unwrap_or(Err(e))
        }
    }
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
