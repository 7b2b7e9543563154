//! Which IA names the ofi provider answers to: one per libfabric provider and domain that
//! `fi_getinfo` offers (`ofi-<provider>-<domain>`: `ofi-tcp-lo`, `ofi-tcp-eth0`,
//! `ofi-tcp_rxm-lo`, `ofi-shm`), and why an offered one is not usable. libfabric itself honours `FI_PROVIDER` (and its other `FI_*`
//! variables) in `fi_getinfo`, so they narrow this list too.

use super::sys::{self, Lib};
use std::ffi::c_int;
use std::net::SocketAddr;

/// One (libfabric provider, domain) pair `fi_getinfo` offered.
#[derive(Clone, Debug)]
pub struct Offer {
    /// Our IA name for it.
    pub ia_name: String,
    /// libfabric's provider name (`tcp`, `verbs`, `tcp;ofi_rxm`, ...).
    pub prov: String,
    pub fabric: String,
    pub domain: String,
    /// `FI_EP_MSG` or `FI_EP_RDM`.
    pub ep_type: &'static str,
    /// The address the IA is bound to, where the provider gave an IP one.
    pub addr: Option<SocketAddr>,
    /// Why the IA cannot be opened (None: usable).
    pub unusable: Option<String>,
}

/// Our IA name for a libfabric provider and domain: `ofi-<provider>-<domain>`; a layered
/// provider `X;ofi_Y` is `X_Y` (`tcp;ofi_rxm` on `lo`: `ofi-tcp_rxm-lo`), and a domain named
/// as its provider is left out (`shm`'s only domain: `ofi-shm`). Characters a dat.conf name
/// cannot hold (blanks, `;`) become `-`.
pub fn ia_name(prov: &str, domain: &str) -> String {
    let clean = |s: &str| {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '.' { c } else { '-' }).collect::<String>()
    };
    let p = clean(&prov.replace(";ofi_", "_"));
    if domain == prov {
        format!("ofi-{p}")
    } else {
        format!("ofi-{p}-{}", clean(domain))
    }
}

/// The libfabric providers whose `FI_EP_MSG` endpoints the ofi provider is tested on (the rest
/// are listed as not supported yet: libfabric's `sockets` crashes in its own progress thread
/// under this provider, `verbs` wants what is not written yet).
const TESTED: &[&str] = &["tcp", "net"];

/// libfabric providers whose `FI_EP_RDM` endpoints are not driven: `sockets` crashes in its
/// own progress thread, as with `FI_EP_MSG`.
const RDM_REFUSED: &[&str] = &["sockets"];

/// Why an `FI_EP_RDM` info cannot carry DAT's connections here, or None.
///
/// # Safety
/// `info` is a live fi_info with its attribute structs.
pub unsafe fn rdm_unusable(info: *const sys::fi_info) -> Option<String> {
    // SAFETY: per the contract.
    let (prov, fmt, order, mr_mode) = unsafe {
        (
            sys::cstr((*(*info).fabric_attr).prov_name),
            (*info).addr_format,
            (*(*info).tx_attr).msg_order,
            (*(*info).domain_attr).mr_mode,
        )
    };
    if RDM_REFUSED.contains(&prov.as_str()) {
        return Some(format!("libfabric provider {prov} is not supported (it crashes in its own progress thread)"));
    }
    if order & sys::FI_ORDER_SAS == 0 {
        return Some("no FI_ORDER_SAS: sends are not delivered in order, which DAT requires".into());
    }
    if mr_mode & sys::FI_MR_LOCAL != 0 {
        return Some("FI_MR_LOCAL: the connection messages' buffers are not registered yet".into());
    }
    if fmt != sys::FI_SOCKADDR_IN && fmt != sys::FI_SOCKADDR_IN6 && fmt != sys::FI_ADDR_STR {
        return Some(format!("address format {fmt} (supported: sockaddr, FI_ADDR_STR)"));
    }
    None
}

/// The MR modes we can honour (asked for in the hints; the provider keeps those it needs).
pub const MR_MODES: c_int = sys::FI_MR_LOCAL | sys::FI_MR_VIRT_ADDR | sys::FI_MR_ALLOCATED | sys::FI_MR_PROV_KEY;

/// `fi_getinfo` for endpoints of `ep_type` with what DAT needs (messages and RMA, a
/// thread-safe domain, the MR modes we honour); the caller frees the list.
pub fn getinfo(lib: &Lib, ep_type: c_int) -> Result<*mut sys::fi_info, String> {
    // SAFETY: fi_dupinfo(NULL) allocates a zeroed info with its attribute structs.
    let hints = unsafe { (lib.fi_dupinfo)(std::ptr::null()) };
    if hints.is_null() {
        return Err("fi_dupinfo failed".into());
    }
    // SAFETY: the attribute structs fi_dupinfo allocated.
    unsafe {
        (*hints).caps = sys::FI_MSG | sys::FI_RMA;
        (*hints).mode = 0;
        (*(*hints).ep_attr).type_ = ep_type;
        (*(*hints).domain_attr).mr_mode = MR_MODES;
        (*(*hints).domain_attr).threading = sys::FI_THREAD_SAFE;
    }
    let mut info = std::ptr::null_mut();
    // SAFETY: valid hints; `info` receives a list we free.
    let r = unsafe { (lib.fi_getinfo)(sys::API_VERSION, std::ptr::null(), std::ptr::null(), 0, hints, &mut info) };
    // SAFETY: ours, freed once.
    unsafe { (lib.fi_freeinfo)(hints) };
    if r != 0 {
        return Err(format!("fi_getinfo: {}", sys::strerror(lib, r as isize)));
    }
    Ok(info)
}

/// The IP address of an info's `src_addr`, if it is one.
///
/// # Safety
/// `info` is a live fi_info.
pub unsafe fn src_addr(info: *const sys::fi_info) -> Option<SocketAddr> {
    // SAFETY: per the contract.
    let (fmt, p) = unsafe { ((*info).addr_format, (*info).src_addr) };
    if p.is_null() || (fmt != sys::FI_SOCKADDR_IN && fmt != sys::FI_SOCKADDR_IN6) {
        return None;
    }
    // SAFETY: a sockaddr of the family the format says.
    unsafe { crate::ia::from_sockaddr(p as *const libc::sockaddr) }
}

/// Every offer, usable or not: the `FI_EP_MSG` ones, then the `FI_EP_RDM` ones under names no
/// `FI_EP_MSG` offer took (IPv4 first where a domain has both).
pub fn offers(lib: &Lib) -> Result<Vec<Offer>, String> {
    let mut out: Vec<Offer> = Vec::new();
    for ep_type in [sys::FI_EP_MSG, sys::FI_EP_RDM] {
        let list = match getinfo(lib, ep_type) {
            Ok(l) => l,
            // No provider offers this kind (FI_ENODATA): nothing to list.
            Err(_) => continue,
        };
        let mut p = list;
        while !p.is_null() {
            // SAFETY: a live list entry with its attribute structs.
            let (prov, fabric, domain, addr, next) = unsafe {
                (
                    sys::cstr((*(*p).fabric_attr).prov_name),
                    sys::cstr((*(*p).fabric_attr).name),
                    sys::cstr((*(*p).domain_attr).name),
                    src_addr(p),
                    (*p).next,
                )
            };
            let entry = p;
            p = next;
            let name = ia_name(&prov, &domain);
            if let Some(o) = out.iter_mut().find(|o| o.ia_name == name) {
                // Prefer an IPv4 address for the same name.
                if o.ep_type == ep_name(ep_type)
                    && !o.addr.is_some_and(|a| a.is_ipv4())
                    && addr.is_some_and(|a| a.is_ipv4())
                {
                    o.addr = addr;
                    o.fabric = fabric;
                }
                continue;
            }
            let (ep, unusable) = if ep_type == sys::FI_EP_MSG {
                let why = if !TESTED.contains(&prov.as_str()) {
                    Some(format!("libfabric provider {prov} is not supported yet (supported: {})", TESTED.join(", ")))
                } else if addr.is_none() {
                    Some("no IP address (only sockaddr formats are supported)".into())
                } else {
                    None
                };
                ("FI_EP_MSG", why)
            } else {
                // SAFETY: a live list entry.
                ("FI_EP_RDM", unsafe { rdm_unusable(entry) })
            };
            out.push(Offer { ia_name: name, prov, fabric, domain, ep_type: ep, addr, unusable });
        }
        // SAFETY: the list fi_getinfo returned, freed once.
        unsafe { (lib.fi_freeinfo)(list) };
    }
    Ok(out)
}

fn ep_name(ep_type: c_int) -> &'static str {
    if ep_type == sys::FI_EP_MSG {
        "FI_EP_MSG"
    } else {
        "FI_EP_RDM"
    }
}

/// A duplicate of the info behind `ia_name` (an `FI_EP_MSG` one first, IPv4 preferred) and its
/// endpoint type, or why there is none. The caller frees it.
pub fn find(lib: &Lib, ia_name: &str) -> Result<(*mut sys::fi_info, c_int), String> {
    for ep_type in [sys::FI_EP_MSG, sys::FI_EP_RDM] {
        let Ok(list) = getinfo(lib, ep_type) else { continue };
        let r = find_in(lib, list, ia_name, ep_type);
        // SAFETY: the list fi_getinfo returned, freed once (the duplicate is separate).
        unsafe { (lib.fi_freeinfo)(list) };
        if let Some(r) = r {
            return r.map(|d| (d, ep_type));
        }
    }
    Err(format!("libfabric offers no usable endpoint for {ia_name}"))
}

/// The best usable entry of `list` named `ia_name`, duplicated; None if there is none.
fn find_in(
    lib: &Lib,
    list: *mut sys::fi_info,
    ia_name: &str,
    ep_type: c_int,
) -> Option<Result<*mut sys::fi_info, String>> {
    let usable = |p: *mut sys::fi_info| {
        // SAFETY: a live list entry.
        unsafe {
            if ep_type == sys::FI_EP_MSG {
                src_addr(p).is_some() && TESTED.contains(&sys::cstr((*(*p).fabric_attr).prov_name).as_str())
            } else {
                rdm_unusable(p).is_none()
            }
        }
    };
    let ipv4 = |p: *mut sys::fi_info| {
        // SAFETY: a live list entry.
        unsafe { src_addr(p) }.is_some_and(|a| a.is_ipv4())
    };
    let mut best: *mut sys::fi_info = std::ptr::null_mut();
    let mut p = list;
    while !p.is_null() {
        // SAFETY: a live list entry.
        let (name, next) = unsafe { (ia_name_of(p), (*p).next) };
        if name == ia_name && usable(p) && (best.is_null() || ipv4(p) && !ipv4(best)) {
            best = p;
        }
        p = next;
    }
    if best.is_null() {
        return None;
    }
    // SAFETY: a live entry; the duplicate is the caller's.
    let d = unsafe { (lib.fi_dupinfo)(best) };
    Some(if d.is_null() { Err("fi_dupinfo failed".into()) } else { Ok(d) })
}

/// The IA name of a live info.
///
/// # Safety
/// `info` is a live fi_info.
unsafe fn ia_name_of(info: *const sys::fi_info) -> String {
    // SAFETY: per the contract.
    unsafe { ia_name(&sys::cstr((*(*info).fabric_attr).prov_name), &sys::cstr((*(*info).domain_attr).name)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(ia_name("tcp", "lo"), "ofi-tcp-lo");
        assert_eq!(ia_name("tcp;ofi_rxm", "eth0"), "ofi-tcp_rxm-eth0");
        assert_eq!(ia_name("shm", "shm"), "ofi-shm");
        assert_eq!(ia_name("verbs", "mlx5_0"), "ofi-verbs-mlx5_0");
    }
}
