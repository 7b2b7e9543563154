//! Finding RDMA ports and the IA names they answer to.
//!
//! Ports come from `ibv_get_device_list` + `ibv_query_port`; the netdev and IP address of a
//! port come from binding a throw-away rdma_cm id to every local address (`rdma_bind_addr`
//! tells which device and port an address belongs to, for InfiniBand/IPoIB, RoCE and iWARP
//! alike, where sysfs only knows RoCE's netdevs).

use super::sys::{self, Lib};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// One port of one device.
#[derive(Clone, Debug)]
pub struct Port {
    pub dev: String,
    pub port: u8,
    pub active: bool,
    pub iwarp: bool,
    /// (netdev, address) pairs that rdma_cm maps to this port, IPv4 first.
    pub addrs: Vec<(String, IpAddr)>,
}

impl Port {
    pub fn netdev(&self) -> Option<&str> {
        self.addrs.first().map(|(n, _)| n.as_str())
    }
    pub fn ip(&self) -> Option<IpAddr> {
        self.addrs.first().map(|(_, a)| *a)
    }
}

/// Local interface addresses: (netdev, address), IPv4 before IPv6, no loopback.
fn local_addrs() -> Vec<(String, SocketAddr)> {
    let mut out = Vec::new();
    let mut ifa: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills a list we free below; we read sockaddrs of known families only.
    unsafe {
        if libc::getifaddrs(&mut ifa) != 0 {
            return out;
        }
        let mut p = ifa;
        while !p.is_null() {
            let a = (*p).ifa_addr;
            if !a.is_null() && ((*a).sa_family as i32 == libc::AF_INET || (*a).sa_family as i32 == libc::AF_INET6) {
                if let Some(sa) = crate::ia::from_sockaddr(a) {
                    let sa = match sa {
                        SocketAddr::V6(mut v6) => {
                            v6.set_scope_id((*(a as *const libc::sockaddr_in6)).sin6_scope_id);
                            SocketAddr::V6(v6)
                        }
                        v4 => v4,
                    };
                    let name = std::ffi::CStr::from_ptr((*p).ifa_name).to_string_lossy().into_owned();
                    if !sa.ip().is_loopback() {
                        out.push((name, sa));
                    }
                }
            }
            p = (*p).ifa_next;
        }
        libc::freeifaddrs(ifa);
    }
    out.sort_by_key(|(_, a)| a.is_ipv6());
    out
}

/// The device name and port rdma_cm binds `addr` to, if any.
pub fn bind_probe(lib: &Lib, addr: SocketAddr) -> Option<(String, u8)> {
    let mut ss = crate::ia::to_sockaddr(addr);
    // SAFETY: a private event channel and id, destroyed before returning; we read only the
    // bound id's `verbs->device->name` and `port_num`, valid while the id lives.
    unsafe {
        let ch = (lib.rdma_create_event_channel)();
        if ch.is_null() {
            return None;
        }
        let mut id = std::ptr::null_mut();
        let mut out = None;
        if (lib.rdma_create_id)(ch, &mut id, std::ptr::null_mut(), sys::RDMA_PS_TCP) == 0 {
            if (lib.rdma_bind_addr)(id, &mut ss as *mut _ as *mut libc::sockaddr) == 0 && !(*id).verbs.is_null() {
                let dev = &*(*(*id).verbs).device;
                out = Some((sys::cstr(&dev.name), (*id).port_num));
            }
            (lib.rdma_destroy_id)(id);
        }
        (lib.rdma_destroy_event_channel)(ch);
        out
    }
}

/// Every port of every device, with the addresses rdma_cm maps to it.
pub fn ports(lib: &Lib) -> Vec<Port> {
    let mut out = Vec::new();
    // SAFETY: the device list is freed below; each context is closed after the queries.
    unsafe {
        let mut n = 0;
        let list = (lib.ibv_get_device_list)(&mut n);
        if list.is_null() {
            return out;
        }
        for i in 0..n.max(0) as usize {
            let d = *list.add(i);
            if d.is_null() {
                break;
            }
            let name = sys::cstr(&(*d).name);
            let iwarp = (*d).transport_type == sys::IBV_TRANSPORT_IWARP;
            let ctx = (lib.ibv_open_device)(d);
            if ctx.is_null() {
                tracing::debug!("verbs: cannot open {name}: {}", sys::errno_str(sys::errno()));
                continue;
            }
            let mut attr: sys::ibv_device_attr = std::mem::zeroed();
            if (lib.ibv_query_device)(ctx, &mut attr) == 0 {
                for p in 1..=attr.phys_port_cnt {
                    let mut pa: sys::ibv_port_attr = std::mem::zeroed();
                    let active = (lib.ibv_query_port)(ctx, p, &mut pa) == 0 && pa.state == sys::IBV_PORT_ACTIVE;
                    out.push(Port { dev: name.clone(), port: p, active, iwarp, addrs: Vec::new() });
                }
            }
            (lib.ibv_close_device)(ctx);
        }
        (lib.ibv_free_device_list)(list);
    }
    for (netdev, addr) in local_addrs() {
        if let Some((dev, port)) = bind_probe(lib, addr) {
            if let Some(p) = out.iter_mut().find(|p| p.dev == dev && (p.port == port || port == 0)) {
                p.addrs.push((netdev, addr.ip()));
            }
        }
    }
    out
}

/// The IA names of the active ports, in a stable order; the first is the default device.
pub fn ia_names(ports: &[Port]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |n: String| {
        if !names.contains(&n) {
            names.push(n);
        }
    };
    if ports.iter().any(|p| p.active && p.ip().is_some()) {
        add("OpenIB-cma".into());
    }
    for p in ports.iter().filter(|p| p.active) {
        let mut netdevs: Vec<&str> = p.addrs.iter().map(|(n, _)| n.as_str()).collect();
        netdevs.dedup();
        for nd in netdevs {
            add(format!("ofa-v2-{nd}"));
            add(format!("OpenIB-{nd}"));
        }
        add(format!("ofa-v2-{}-{}", p.dev, p.port));
        add(format!("{}-{}", p.dev, p.port));
        add(p.dev.clone());
    }
    names
}

/// What an IA name or dat.conf `ia_params` selects.
#[derive(Clone, Debug)]
pub struct Target {
    pub dev: String,
    pub port: u8,
    pub ip: IpAddr,
    pub iwarp: bool,
}

fn unknown(what: &str) -> String {
    format!("no RDMA device or netdev '{what}'")
}

/// A port by device name and port number (0: the first active port).
fn by_device<'a>(ports: &'a [Port], dev: &str, port: u8) -> Result<&'a Port, String> {
    let of_dev: Vec<&Port> = ports.iter().filter(|p| p.dev == dev).collect();
    if of_dev.is_empty() {
        return Err(format!("RDMA device '{dev}' absent"));
    }
    let p = if port == 0 {
        of_dev.iter().find(|p| p.active).or(of_dev.first()).copied()
    } else {
        of_dev.iter().find(|p| p.port == port).copied()
    };
    p.ok_or(format!("RDMA device '{dev}' has no port {port}"))
}

fn check(p: &Port, ip: Option<IpAddr>) -> Result<Target, String> {
    if !p.active {
        return Err(format!("{} port {} is DOWN (not ACTIVE)", p.dev, p.port));
    }
    let ip = ip.or(p.ip()).ok_or(format!(
        "{} port {} has no IP address on its netdev{} (rdma_cm needs one)",
        p.dev,
        p.port,
        p.netdev().map(|n| format!(" {n}")).unwrap_or_default()
    ))?;
    Ok(Target { dev: p.dev.clone(), port: p.port, ip, iwarp: p.iwarp })
}

/// Resolves an IA name, or dat.conf `ia_params` ("rdma0 0", "10.0.0.1 0", "host 0",
/// "rxe0 1") when given, to a port and a local address.
pub fn resolve(lib: &Lib, ia_name: &str, params: &str) -> Result<Target, String> {
    let ports = ports(lib);
    let mut words = params.split_whitespace();
    if let Some(what) = words.next() {
        let port: u8 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
        if let Some(p) = ports.iter().find(|p| p.addrs.iter().any(|(n, _)| n == what)) {
            let ip = p.addrs.iter().find(|(n, _)| n == what).map(|(_, a)| *a);
            return check(p, ip);
        }
        if ports.iter().any(|p| p.dev == what) {
            return check(by_device(&ports, what, port)?, None);
        }
        let ip = what.parse::<IpAddr>().ok().or_else(|| {
            (what, 0u16).to_socket_addrs().ok().and_then(|mut it| it.find(|a| !a.ip().is_loopback())).map(|a| a.ip())
        });
        let Some(ip) = ip else {
            if std::path::Path::new("/sys/class/net").join(what).exists() {
                return Err(format!("netdev '{what}' has no IP address bound to an RDMA device"));
            }
            return Err(unknown(what));
        };
        let (dev, port) = bind_probe(lib, SocketAddr::new(ip, 0))
            .ok_or(format!("address {ip} (from '{what}') is not on an RDMA device"))?;
        return check(by_device(&ports, &dev, port)?, Some(ip));
    }
    let first = || {
        ports.iter().find(|p| p.active && p.ip().is_some()).ok_or("no active RDMA port with an IP address".to_string())
    };
    if ia_name == "OpenIB-cma" || ia_name == "verbs" {
        return check(first()?, None);
    }
    for prefix in ["ofa-v2-", "OpenIB-"] {
        if let Some(nd) = ia_name.strip_prefix(prefix) {
            if let Some(p) = ports.iter().find(|p| p.addrs.iter().any(|(n, _)| n == nd)) {
                let ip = p.addrs.iter().find(|(n, _)| n == nd).map(|(_, a)| *a);
                return check(p, ip);
            }
            if let Ok(t) = dev_port(&ports, nd) {
                return t;
            }
            if std::path::Path::new("/sys/class/net").join(nd).exists() {
                return Err(format!("netdev '{nd}' has no IP address bound to an RDMA device"));
            }
        }
    }
    match dev_port(&ports, ia_name) {
        Ok(t) => t,
        Err(_) => Err(unknown(ia_name)),
    }
}

/// `<dev>-<port>` or `<dev>`: Ok(result) when the device exists.
fn dev_port(ports: &[Port], name: &str) -> Result<Result<Target, String>, ()> {
    if ports.iter().any(|p| p.dev == name) {
        return Ok(by_device(ports, name, 0).and_then(|p| check(p, None)));
    }
    if let Some((d, n)) = name.rsplit_once('-') {
        if let Ok(n) = n.parse::<u8>() {
            if ports.iter().any(|p| p.dev == d) {
                return Ok(by_device(ports, d, n).and_then(|p| check(p, None)));
            }
        }
    }
    Err(())
}
