//! Whether an IA would open, found by opening it through the core (`dat_ia_open`'s path: the
//! registry's resolution, then `InterfaceAdapter::open` and `ia::close`), and what it is.

use crate::capture;
use crate::face_library::{self, dlerror_text};
use datcore::handle::Handle;
use datcore::ia::InterfaceAdapter;
use datcore::provider::{ofi, verbs, DeviceAttr, Transport};
use datcore::registry::conf::ConfEntry;
use datcore::registry::{builtin_by_name, builtin_for_lib_path, library_for_lib_path, Library, Resolution};
use std::ffi::CString;
use std::net::{IpAddr, SocketAddr};

/// The face whose consumer datinfo speaks for: the DAT API its `dat_ia_open` asks for, and the
/// library that serves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Face {
    pub api: (u32, u32),
    pub library: &'static str,
}

impl Face {
    /// A DAT 1.2 consumer of `libdat.so.1` (the default).
    pub const DAT12: Face = Face { api: (1, 2), library: "libdat.so.1" };
    /// A DAT 2.0 consumer of `libdat2.so.2` (`--dat2`).
    pub const DAT20: Face = Face { api: (2, 0), library: "libdat2.so.2" };

    /// `1.2`, `2.0`.
    pub fn api_text(self) -> String {
        format!("{}.{}", self.api.0, self.api.1)
    }
}

/// Async EVD queue length of the probe's open (any valid value).
const PROBE_ASYNC_QLEN: i32 = 8;

/// The verdict on one IA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// It opened (and was closed again).
    Usable,
    /// A third-party provider library that loads and has the DAT entry points; not opened
    /// (a dat.conf line that `dat_ia_open` does not use for its IA name).
    Loadable,
    /// It would not open; the one-line cause.
    Unusable(String),
}

impl State {
    pub fn word(&self) -> &'static str {
        match self {
            State::Usable => "usable",
            State::Loadable => "loadable",
            State::Unusable(_) => "unusable",
        }
    }

    /// `usable`, `loadable (…)`, or the cause.
    pub fn text(&self) -> String {
        match self {
            State::Usable => "usable".into(),
            State::Loadable => "loadable (library with dat_provider_init; not the line dat_ia_open uses)".into(),
            State::Unusable(why) => format!("unusable: {why}"),
        }
    }

    pub fn cause(&self) -> Option<&str> {
        match self {
            State::Unusable(why) => Some(why),
            _ => None,
        }
    }
}

/// What is known about one IA after probing it.
pub struct Probe {
    /// `shm`, `verbs`, or the library path of a third-party provider.
    pub provider: Option<String>,
    pub transport: Option<Transport>,
    /// RDMA device and port, e.g. `rxe0:1`.
    pub device: Option<String>,
    pub netdev: Option<String>,
    /// The IA address (from the opened device; else the address it would bind).
    pub address: Option<SocketAddr>,
    pub state: State,
    /// Warnings that do not stop it from opening (RLIMIT_MEMLOCK).
    pub notes: Vec<String>,
    /// The device attributes, when it opened.
    pub attr: Option<DeviceAttr>,
}

impl Probe {
    pub fn unusable(why: impl Into<String>) -> Probe {
        Probe {
            provider: None,
            transport: None,
            device: None,
            netdev: None,
            address: None,
            state: State::Unusable(why.into()),
            notes: Vec::new(),
            attr: None,
        }
    }
}

pub fn transport_name(t: Transport) -> &'static str {
    match t {
        Transport::SharedMemory => "shm",
        Transport::InfiniBand => "InfiniBand",
        Transport::RoCE => "RoCE",
        Transport::IWarp => "iWARP",
        Transport::Fabric => "libfabric",
    }
}

/// Probes what the registry resolved an IA name to.
pub fn resolution(r: Resolution) -> Probe {
    match r {
        Resolution::Builtin { provider, ia_name, params } => builtin(&provider, &ia_name, &params),
        Resolution::Library(lib) => library(&lib, true),
    }
}

/// Resolves one dat.conf line for itself (as the registry does for an exact key): a built-in
/// provider when its lib_path stands for one, else a third-party library.
pub fn conf_entry(e: &ConfEntry) -> Probe {
    if let Some(name) = builtin_for_lib_path(&e.lib_path) {
        return match builtin_by_name(name) {
            Some(provider) => builtin(&provider, &e.ia_name, &e.ia_params),
            None => Probe::unusable(format!("provider {name} is not built into this libdat")),
        };
    }
    let lib = Library {
        lib_path: library_for_lib_path(&e.lib_path).to_string(),
        ia_params: e.ia_params.clone(),
        info: datcore::registry::ProviderInfo {
            ia_name: e.ia_name.clone(),
            major: e.major,
            minor: e.minor,
            thread_safe: e.thread_safe,
        },
    };
    library(&lib, false)
}

/// Opens and closes a built-in provider's IA; for verbs, first asks where it would bind (that
/// names the cause when it cannot: port DOWN, no IP address, ...).
pub fn builtin(provider: &std::sync::Arc<dyn datcore::provider::Provider>, ia_name: &str, params: &str) -> Probe {
    let mut p = Probe::unusable("");
    p.provider = Some(provider.name().to_string());
    if provider.name() == "ofi" {
        if let Some(o) = ofi::offers().ok().and_then(|l| l.into_iter().find(|o| o.ia_name == ia_name)) {
            describe_offer(&mut p, &o);
        }
    }
    if provider.name() == "verbs" {
        match verbs::open_target(ia_name, params) {
            Ok(t) => {
                p.device = Some(format!("{}:{}", t.dev, t.port));
                p.netdev = netdev_of(&t.dev, t.port, t.ip);
                p.address = Some(SocketAddr::new(t.ip, 0));
                p.transport = t.iwarp.then_some(Transport::IWarp);
                p.notes.extend(verbs::memlock_warning());
            }
            Err(why) => {
                p.state = State::Unusable(why);
                return p;
            }
        }
    }
    capture::take();
    match InterfaceAdapter::open(provider, ia_name, params, PROBE_ASYNC_QLEN, Handle::NULL) {
        Ok((handle, ia, _async_evd)) => {
            let attr = ia.device.attr().clone();
            p.transport = Some(attr.transport);
            p.address = Some(ia.device.address());
            p.attr = Some(attr);
            drop(ia);
            p.state = match datcore::ia::close(handle, false) {
                Ok(()) => State::Usable,
                Err(e) => State::Unusable(format!("opened, but closing it failed ({e})")),
            };
        }
        Err(e) => {
            let why = capture::take().pop().unwrap_or_else(|| format!("{} could not open it", provider.name()));
            p.state = State::Unusable(format!("{why} ({e})"));
        }
    }
    p
}

/// What libfabric says of an ofi IA: its provider and domain as the device, its fabric and
/// endpoint type in a note.
pub fn describe_offer(p: &mut Probe, o: &ofi::Offer) {
    p.provider = Some("ofi".into());
    p.device = Some(format!("{}:{}", o.prov, o.domain));
    p.address = o.addr.map(|a| SocketAddr::new(a.ip(), 0));
    p.notes.push(format!(
        "{}: libfabric provider {}, fabric {}, domain {}, {}",
        o.ia_name, o.prov, o.fabric, o.domain, o.ep_type
    ));
}

/// The netdev rdma_cm maps `ip` on that port to.
fn netdev_of(dev: &str, port: u8, ip: IpAddr) -> Option<String> {
    let ports = verbs::ports().ok()?;
    let p = ports.iter().find(|p| p.dev == dev && p.port == port)?;
    p.addrs.iter().find(|(_, a)| *a == ip).or(p.addrs.first()).map(|(n, _)| n.clone())
}

/// Checks a third-party provider library the way `dat_ia_open` loads it, in a process that has
/// the face library loaded ([`face_library`]): dlopen, then the `dat_provider_init` /
/// `dat_provider_fini` entry points. With `open` (the line `dat_ia_open` uses for the IA), the
/// IA is then opened, queried and closed through the face library, as a consumer does.
pub fn library(lib: &Library, open: bool) -> Probe {
    let mut p = Probe::unusable("");
    p.provider = Some(lib.lib_path.clone());
    let face = match face_library::for_major(lib.info.major) {
        Ok(face) => face,
        Err(why) => {
            p.state = State::Unusable(why);
            return p;
        }
    };
    if let Err(why) = check_library(&lib.lib_path) {
        p.state = State::Unusable(why);
        return p;
    }
    if !open {
        p.state = State::Loadable;
        return p;
    }
    let info = &lib.info;
    p.state = match face.open_query_close(&info.ia_name, info.major, info.minor, info.thread_safe) {
        Ok(opened) => {
            p.device = Some(opened.adapter).filter(|a| !a.is_empty());
            p.address = opened.address;
            State::Usable
        }
        Err(why) => State::Unusable(why),
    };
    p
}

fn check_library(path: &str) -> Result<(), String> {
    let c_path = CString::new(path).map_err(|_| format!("lib_path {path:?} contains a NUL byte"))?;
    // SAFETY: a NUL-terminated path; what the library takes from libdat itself
    // (dat_registry_add_provider, dats_get_ia_handle) resolves against the face library loaded
    // RTLD_GLOBAL before, even when the library asks for immediate binding.
    let dl = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if dl.is_null() {
        return Err(format!("library cannot be loaded: {}", dlerror_text()));
    }
    let missing = [c"dat_provider_init", c"dat_provider_fini"]
        .into_iter()
        // SAFETY: `dl` is a live handle and the names are NUL-terminated.
        .find(|name| unsafe { libc::dlsym(dl, name.as_ptr()) }.is_null());
    // SAFETY: `dl` came from dlopen above and nothing of it is used after this.
    unsafe { libc::dlclose(dl) };
    match missing {
        Some(name) => Err(format!("{path} has no symbol {}", name.to_string_lossy())),
        None => Ok(()),
    }
}
