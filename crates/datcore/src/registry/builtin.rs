//! Built-in providers: compiled into libdat, reachable under their own IA names without any
//! dat.conf, and the table that maps dat.conf `lib_path`s to them.
//!
//! A provider becomes built-in in one of two ways:
//! - it is listed in [`compiled_in`] (seeded once, on first use of the registry), or
//! - a face (or a test) calls [`register_builtin`] at run time.
//!
//! A dat.conf entry resolves to a built-in provider instead of a library when its `lib_path` is
//! our marker `builtin:<provider>` (e.g. `builtin:shm`) or the file name of one of OFED's DAPL
//! provider libraries ([`LIB_ALIASES`]); the latter all map to the `verbs` provider.
//!
//! The opposite marker, `dlopen:<library>` ([`DLOPEN_PREFIX`]), asks for the library itself even
//! when its name is one of OFED's: `dlopen:libdaplofa.so.2` loads OFED's provider as a
//! third-party provider library instead of mapping it to `verbs`.

use crate::provider::Provider;
use parking_lot::RwLock;
use std::sync::{Arc, Once};

/// DAT API versions the built-in providers answer for (any thread-safety: the core is
/// thread-safe): DAT 1.2 for `libdat.so.1`, DAT 2.0 for `libdat2.so.2`.
pub const BUILTIN_API: &[(u32, u32)] = &[(1, 2), (2, 0)];

/// The marker prefix of a dat.conf `lib_path` that names a built-in provider.
pub const MARKER_PREFIX: &str = "builtin:";

/// The marker prefix of a dat.conf `lib_path` that names a provider library to dlopen() as it
/// is, never mapped to a built-in provider.
pub const DLOPEN_PREFIX: &str = "dlopen:";

/// OFED DAPL provider libraries (file name up to `.so`) and the built-in provider that takes
/// their place.
pub const LIB_ALIASES: &[(&str, &str)] = &[
    ("libdaplcma", "verbs"),
    ("libdaplscm", "verbs"),
    ("libdaplucm", "verbs"),
    ("libdaplofa", "verbs"),
    ("libdaploscm", "verbs"),
    ("libdaploucm", "verbs"),
    ("libdaplomcm", "verbs"),
    ("libdaplmcm", "verbs"),
];

static BUILTINS: RwLock<Vec<Arc<dyn Provider>>> = RwLock::new(Vec::new());
static SEED: Once = Once::new();

/// The providers compiled into this build. One line per provider.
fn compiled_in() -> Vec<Arc<dyn Provider>> {
    vec![
        Arc::new(crate::provider::shm::ShmProvider::new()),
        Arc::new(crate::provider::verbs::VerbsProvider::new()),
        Arc::new(crate::provider::ofi::OfiProvider::new()),
    ]
}

fn seed() {
    SEED.call_once(|| {
        let mut list = BUILTINS.write();
        for p in compiled_in() {
            if !list.iter().any(|q| q.name() == p.name()) {
                list.push(p);
            }
        }
    });
}

/// Adds a built-in provider. Returns false (and changes nothing) if a provider of the same
/// [`Provider::name`] is already registered.
pub fn register_builtin(provider: Arc<dyn Provider>) -> bool {
    seed();
    let mut list = BUILTINS.write();
    if list.iter().any(|q| q.name() == provider.name()) {
        return false;
    }
    tracing::debug!("registry: built-in provider '{}' answers {:?}", provider.name(), provider.ia_names());
    list.push(provider);
    true
}

/// A snapshot of the built-in providers, in registration order.
pub fn builtins() -> Vec<Arc<dyn Provider>> {
    seed();
    BUILTINS.read().clone()
}

/// The built-in provider called `name` (`shm`, `verbs`), if present in this build.
pub fn builtin_by_name(name: &str) -> Option<Arc<dyn Provider>> {
    seed();
    BUILTINS.read().iter().find(|p| p.name() == name).cloned()
}

/// If a dat.conf `lib_path` stands for a built-in provider, that provider's name.
pub fn builtin_for_lib_path(lib_path: &str) -> Option<&str> {
    if lib_path.starts_with(DLOPEN_PREFIX) {
        return None;
    }
    if let Some(name) = lib_path.strip_prefix(MARKER_PREFIX) {
        return Some(name.trim());
    }
    let file = lib_path.rsplit('/').next().unwrap_or(lib_path);
    let stem = file.split(".so").next().unwrap_or(file);
    LIB_ALIASES.iter().find(|(lib, _)| *lib == stem).map(|(_, p)| *p)
}

/// What dlopen() is given for a dat.conf `lib_path` that is not a built-in provider: the path
/// after a `dlopen:` marker (surrounding blanks removed), else the `lib_path` unchanged.
pub fn library_for_lib_path(lib_path: &str) -> &str {
    match lib_path.strip_prefix(DLOPEN_PREFIX) {
        Some(library) => library.trim(),
        None => lib_path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lib_path_table() {
        assert_eq!(builtin_for_lib_path("libdaplcma.so.1"), Some("verbs"));
        assert_eq!(builtin_for_lib_path("/usr/lib64/libdaplofa.so.2"), Some("verbs"));
        assert_eq!(builtin_for_lib_path("libdaploucm.so.2.0.0"), Some("verbs"));
        assert_eq!(builtin_for_lib_path("libdaplscm.so"), Some("verbs"));
        assert_eq!(builtin_for_lib_path("builtin:shm"), Some("shm"));
        assert_eq!(builtin_for_lib_path("/opt/x/libmyprov.so"), None);
        assert_eq!(builtin_for_lib_path("libdaplcmaX.so.1"), None);
        assert_eq!(builtin_for_lib_path("dlopen:libdaplofa.so.2"), None);
        assert_eq!(builtin_for_lib_path("dlopen:builtin:shm"), None);
    }

    #[test]
    fn dlopen_marker() {
        assert_eq!(library_for_lib_path("dlopen:libdaplofa.so.2"), "libdaplofa.so.2");
        assert_eq!(library_for_lib_path("dlopen: /opt/p/libp.so "), "/opt/p/libp.so");
        assert_eq!(library_for_lib_path("dlopen:"), "");
        assert_eq!(library_for_lib_path("/opt/p/libp.so"), "/opt/p/libp.so");
        assert_eq!(library_for_lib_path("libdlopen:x.so"), "libdlopen:x.so");
    }
}
