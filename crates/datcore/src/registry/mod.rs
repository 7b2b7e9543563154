//! The dat.conf static registry and the built-in providers.
//!
//! - [`conf`]: the dat.conf parser and the search order (`$DAT_OVERRIDE`, else `/etc/dat.conf`,
//!   else `/etc/rdma/dat.conf`); the process-wide file is parsed lazily, once ([`static_conf`]).
//! - [`builtin`]: providers compiled in (reachable by their own IA names with no dat.conf), and
//!   the table mapping dat.conf `lib_path`s (OFED DAPL libraries, `builtin:<name>`) to them;
//!   `dlopen:<library>` asks for the library itself, even one of OFED's.
//! - [`resolve_candidates`]: what `dat_ia_openv(name, major, minor, thread_safe)` may open — a
//!   built-in provider or third-party provider libraries (which the face dlopen()s, falling back
//!   to the next dat.conf line of the same key when one does not load or register the IA).
//! - [`list`]: what `dat_registry_list_providers` reports (entries of the asking face's major
//!   API version only).
//!
//! Matching follows the reference: name, major, minor and thread safety must all be equal to a
//! dat.conf entry's; built-in providers answer for every API in [`builtin::BUILTIN_API`] with
//! either thread safety. Any failure is `DAT_PROVIDER_NOT_FOUND | DAT_NAME_NOT_REGISTERED`, and
//! its cause is logged in one line.
//!
//! Precedence: a dat.conf entry with the exact key wins over a built-in IA of the same name
//! (explicit configuration beats the default), then built-in IA names.
//!
//! Tests build their own [`Registry`] from a [`conf::StaticConf`] and a provider list instead of
//! touching the process environment.

pub mod builtin;
pub mod conf;

use crate::codes::{DAT_NAME_NOT_REGISTERED, DAT_PROVIDER_NOT_FOUND};
use crate::error::DatError;
use crate::provider::Provider;
use conf::{ConfEntry, StaticConf};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

pub use builtin::{builtin_by_name, builtin_for_lib_path, builtins, library_for_lib_path, register_builtin};

/// `DAT_PROVIDER_NOT_FOUND | DAT_NAME_NOT_REGISTERED`: every resolution failure.
pub const NOT_FOUND: DatError = DatError::new(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);

/// A registry key, as in DAT_PROVIDER_INFO.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProviderInfo {
    pub ia_name: String,
    pub major: u32,
    pub minor: u32,
    pub thread_safe: bool,
}

impl fmt::Display for ProviderInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' (DAT {}.{}, {})",
            self.ia_name,
            self.major,
            self.minor,
            if self.thread_safe { "threadsafe" } else { "nonthreadsafe" }
        )
    }
}

/// A third-party provider library to dlopen (the face does it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Library {
    /// What dlopen() is given: the dat.conf `lib_path` (after a `dlopen:` marker, if any).
    pub lib_path: String,
    /// dat.conf `ia_params`: the `instance_data` argument of `dat_provider_init`.
    pub ia_params: String,
    /// The key the library is expected to register (`dat_registry_add_provider`).
    pub info: ProviderInfo,
}

/// What an IA name resolves to.
#[derive(Clone)]
pub enum Resolution {
    /// A provider compiled into libdat; open it with `provider.open(&ia_name, &params, …)`.
    Builtin { provider: Arc<dyn Provider>, ia_name: String, params: String },
    /// A DAT provider library named in dat.conf.
    Library(Library),
}

impl fmt::Debug for Resolution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resolution::Builtin { provider, ia_name, params } => f
                .debug_struct("Builtin")
                .field("provider", &provider.name())
                .field("ia_name", ia_name)
                .field("params", params)
                .finish(),
            Resolution::Library(l) => f.debug_tuple("Library").field(l).finish(),
        }
    }
}

/// A static registry (dat.conf) plus built-in providers.
pub struct Registry {
    pub conf: StaticConf,
    /// None: use the process-wide built-in list ([`builtins`]) at each call.
    providers: Option<Vec<Arc<dyn Provider>>>,
}

fn api_str(major: u32, minor: u32, ts: bool) -> String {
    format!("{major}.{minor} {}", if ts { "threadsafe" } else { "nonthreadsafe" })
}

impl Registry {
    /// A registry over `conf` and an explicit provider list (tests).
    pub fn new(conf: StaticConf, providers: Vec<Arc<dyn Provider>>) -> Self {
        Registry { conf, providers: Some(providers) }
    }

    /// A registry over `conf` and the process-wide built-in providers.
    pub fn with_builtins(conf: StaticConf) -> Self {
        Registry { conf, providers: None }
    }

    fn providers(&self) -> Vec<Arc<dyn Provider>> {
        match &self.providers {
            Some(v) => v.clone(),
            None => builtins(),
        }
    }

    fn provider_named(&self, name: &str) -> Option<Arc<dyn Provider>> {
        match &self.providers {
            Some(v) => v.iter().find(|p| p.name() == name).cloned(),
            None => builtin_by_name(name),
        }
    }

    fn where_(&self, e: &ConfEntry) -> String {
        format!("{}:{}", self.conf.origin(), e.line)
    }

    /// Resolves without logging: the first of [`Registry::candidates`]; `Err` carries the
    /// one-line cause.
    pub fn resolve_cause(&self, name: &str, major: u32, minor: u32, thread_safe: bool) -> Result<Resolution, String> {
        self.candidates(name, major, minor, thread_safe).map(|mut c| c.swap_remove(0))
    }

    /// What `dat_ia_openv(name, major, minor, thread_safe)` may open, to be tried in this order
    /// (never empty): the dat.conf lines of that exact key in file order, as OFED's registry
    /// chains them, up to the first built-in one (a built-in provider is always there, so no
    /// line after it is ever tried); lines that cannot serve at all (a provider not in this
    /// build, a missing absolute library path) are left out. The face opens the first library
    /// that loads and registers the IA. With no such line, the built-in provider answering the
    /// name. Without logging; `Err` carries the one-line cause.
    pub fn candidates(&self, name: &str, major: u32, minor: u32, thread_safe: bool) -> Result<Vec<Resolution>, String> {
        let named: Vec<&ConfEntry> = self.conf.entries.iter().filter(|e| e.ia_name == name).collect();
        let exact = named
            .iter()
            .filter(|e| e.is_loadable() && e.major == major && e.minor == minor && e.thread_safe == thread_safe);
        let mut causes: Vec<String> = Vec::new();
        let mut candidates: Vec<Resolution> = Vec::new();
        for e in exact {
            if let Some(pname) = builtin_for_lib_path(&e.lib_path) {
                match self.provider_named(pname) {
                    Some(provider) => {
                        candidates.push(Resolution::Builtin {
                            provider,
                            ia_name: name.to_string(),
                            params: e.ia_params.clone(),
                        });
                        break;
                    }
                    None => causes.push(format!(
                        "provider {pname} not available in this build (lib_path '{}' at {})",
                        e.lib_path,
                        self.where_(e)
                    )),
                }
                continue;
            }
            let library = library_for_lib_path(&e.lib_path);
            if library.is_empty() {
                causes.push(format!("lib_path '{}' names no library (at {})", e.lib_path, self.where_(e)));
                continue;
            }
            let p = Path::new(library);
            if p.is_absolute() && !p.exists() {
                causes.push(format!("library {library} is missing (named at {})", self.where_(e)));
                continue;
            }
            candidates.push(Resolution::Library(Library {
                lib_path: library.to_string(),
                ia_params: e.ia_params.clone(),
                info: ProviderInfo { ia_name: name.to_string(), major, minor, thread_safe },
            }));
        }
        if !candidates.is_empty() {
            if !causes.is_empty() {
                tracing::debug!("dat_ia_open: IA '{name}': lines left out: {}", causes.join("; "));
            }
            return Ok(candidates);
        }
        if !causes.is_empty() {
            return Err(format!("IA '{name}': {}", causes.join("; ")));
        }

        let mut builtin_hit: Option<Arc<dyn Provider>> = None;
        for p in self.providers() {
            if p.ia_names().iter().any(|n| n == name) {
                if builtin::BUILTIN_API.contains(&(major, minor)) {
                    return Ok(vec![Resolution::Builtin {
                        provider: p,
                        ia_name: name.to_string(),
                        params: String::new(),
                    }]);
                }
                builtin_hit.get_or_insert(p);
            }
        }

        // Nothing matches; say why as precisely as we can.
        let mut registered: Vec<String> = named
            .iter()
            .filter(|e| e.is_loadable())
            .map(|e| format!("{} ({})", api_str(e.major, e.minor, e.thread_safe), self.where_(e)))
            .collect();
        if let Some(p) = &builtin_hit {
            for (ma, mi) in builtin::BUILTIN_API {
                registered.push(format!("{ma}.{mi} (built-in {} provider)", p.name()));
            }
        }
        if !registered.is_empty() {
            return Err(format!(
                "IA '{name}' is registered for DAT {}, asked {}",
                registered.join(", "),
                api_str(major, minor, thread_safe)
            ));
        }
        if let Some(e) = named.first() {
            let why = if e.api == conf::ApiKind::Kernel { "a kDAPL entry" } else { "marked nondefault" };
            return Err(format!("IA '{name}' is in dat.conf only as {why} ({}); not loadable", self.where_(e)));
        }
        Err(format!(
            "IA '{name}' is not registered (no built-in provider answers it; {})",
            match &self.conf.path {
                Some(p) => format!("not in {}", p.display()),
                None => "no dat.conf in use".to_string(),
            }
        ))
    }

    /// What `dat_ia_openv(name, major, minor, thread_safe)` opens. On failure, logs the cause in
    /// one line and returns `DAT_PROVIDER_NOT_FOUND | DAT_NAME_NOT_REGISTERED`.
    pub fn resolve(&self, name: &str, major: u32, minor: u32, thread_safe: bool) -> Result<Resolution, DatError> {
        self.resolve_candidates(name, major, minor, thread_safe).map(|mut c| c.swap_remove(0))
    }

    /// [`Registry::candidates`], logging the cause of a failure in one line and returning
    /// `DAT_PROVIDER_NOT_FOUND | DAT_NAME_NOT_REGISTERED` for it.
    pub fn resolve_candidates(
        &self,
        name: &str,
        major: u32,
        minor: u32,
        thread_safe: bool,
    ) -> Result<Vec<Resolution>, DatError> {
        self.candidates(name, major, minor, thread_safe).map_err(|cause| {
            tracing::warn!("dat_ia_open: {cause}");
            NOT_FOUND
        })
    }

    /// What `dat_registry_list_providers` of the face for DAT `major` reports: built-in IA
    /// names first (provider registration order, each once, under the face's built-in API
    /// version as nonthreadsafe — the key its `dat_ia_open` uses), then the loadable dat.conf
    /// entries registered for DAT `major`, in file order; duplicate keys once.
    ///
    /// Entries for another major version are left out, as OFED's library does: Debian's
    /// dat.conf lists dozens of `u2.0` lines that a DAT 1.2 consumer could never open, and
    /// consumers that open every listed IA (MPI libraries do) would warn once per line.
    pub fn list(&self, major: u32) -> Vec<ProviderInfo> {
        let mut out: Vec<ProviderInfo> = Vec::new();
        let mut push = |i: ProviderInfo| {
            if !out.contains(&i) {
                out.push(i);
            }
        };
        if let Some(&(ma, mi)) = builtin::BUILTIN_API.iter().find(|(ma, _)| *ma == major) {
            for p in self.providers() {
                for n in p.ia_names() {
                    push(ProviderInfo { ia_name: n, major: ma, minor: mi, thread_safe: false });
                }
            }
        }
        for e in self.conf.entries.iter().filter(|e| e.is_loadable() && e.major == major) {
            push(ProviderInfo {
                ia_name: e.ia_name.clone(),
                major: e.major,
                minor: e.minor,
                thread_safe: e.thread_safe,
            });
        }
        out
    }
}

static GLOBAL: OnceLock<Registry> = OnceLock::new();

/// The process-wide static registry: dat.conf found by the search order, parsed on first use.
pub fn static_conf() -> &'static StaticConf {
    &global().conf
}

/// The process-wide registry (dat.conf from the environment + process-wide built-ins).
pub fn global() -> &'static Registry {
    GLOBAL.get_or_init(|| Registry::with_builtins(StaticConf::from_env()))
}

/// [`Registry::resolve_candidates`] on the process-wide registry.
pub fn resolve_candidates(name: &str, major: u32, minor: u32, thread_safe: bool) -> Result<Vec<Resolution>, DatError> {
    global().resolve_candidates(name, major, minor, thread_safe)
}

/// [`Registry::list`] on the process-wide registry, for the face of DAT `major`.
pub fn list(major: u32) -> Vec<ProviderInfo> {
    global().list(major)
}
