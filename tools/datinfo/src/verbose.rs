//! `datinfo -v IA`: opens one IA and prints its provider, address and device attributes, like
//! `ibv_devinfo -v`.

use crate::list::{entry_api, inactive_port_names, used_line};
use crate::output::{fields, Json};
use crate::probe::{self, Face, Probe, State};
use datcore::provider::DeviceAttr;
use datcore::registry::{builtin_by_name, Registry, Resolution};

/// The IA's description: where its name came from, and the probe.
pub struct Report {
    pub name: String,
    pub api: String,
    pub source: String,
    pub probe: Probe,
}

/// Resolves `name` as a consumer's `dat_ia_open` does (nonthreadsafe first, then a threadsafe
/// dat.conf line) and opens it.
pub fn probe(reg: &Registry, face: Face, name: &str) -> Report {
    let mut first_cause = None;
    for thread_safe in [false, true] {
        match reg.resolve_cause(name, face.api.0, face.api.1, thread_safe) {
            Ok(r) => return report(reg, face, name, thread_safe, r),
            Err(why) => {
                first_cause.get_or_insert(why);
            }
        }
    }
    // Not registered, but perhaps the name of a port that is not active: say that instead.
    let port = datcore::provider::verbs::ports()
        .ok()
        .and_then(|ports| inactive_port_names(&ports).into_iter().find(|(n, _)| n == name));
    let (source, probe) = match port {
        Some((_, probe)) => ("built-in".to_string(), probe),
        None => ("-".to_string(), Probe::unusable(first_cause.unwrap_or_default())),
    };
    Report { name: name.to_string(), api: face.api_text(), source, probe }
}

fn report(reg: &Registry, face: Face, name: &str, thread_safe: bool, r: Resolution) -> Report {
    let (api, source) = match used_line(reg, face, name, thread_safe, &r) {
        Some(e) => (entry_api(e), format!("{}:{}", reg.conf.origin(), e.line)),
        None => (face.api_text(), "built-in".to_string()),
    };
    Report { name: name.to_string(), api, source, probe: probe::resolution(r) }
}

/// A built-in provider's version: this libdat's (as `dat_ia_query` reports it).
fn provider_version() -> String {
    format!("{}.{}", env!("CARGO_PKG_VERSION_MAJOR"), env!("CARGO_PKG_VERSION_MINOR"))
}

fn attr_pairs(a: &DeviceAttr) -> Vec<(&'static str, Json)> {
    let n = |v: u64| Json::Num(v);
    vec![
        ("adapter_name", Json::str(&a.adapter_name)),
        ("vendor_name", Json::str(&a.vendor_name)),
        ("hardware_version", Json::str(format!("{}.{}", a.hardware_version_major, a.hardware_version_minor))),
        ("firmware_version", Json::str(format!("{}.{}", a.firmware_version_major, a.firmware_version_minor))),
        ("max_qp", n(a.max_qp.into())),
        ("max_qp_wr", n(a.max_qp_wr.into())),
        ("max_sge", n(a.max_sge.into())),
        ("max_cq", n(a.max_cq.into())),
        ("max_cqe", n(a.max_cqe.into())),
        ("max_mr", n(a.max_mr.into())),
        ("max_mr_size", n(a.max_mr_size)),
        ("max_pd", n(a.max_pd.into())),
        ("max_mw", n(a.max_mw.into())),
        ("max_srq", n(a.max_srq.into())),
        ("max_srq_wr", n(a.max_srq_wr.into())),
        ("max_rdma_read_in", n(a.max_rdma_read_in.into())),
        ("max_rdma_read_out", n(a.max_rdma_read_out.into())),
        ("max_message_size", n(a.max_message_size)),
        ("max_rdma_size", n(a.max_rdma_size)),
        ("max_private_data", n(a.max_private_data as u64)),
    ]
}

fn summary_pairs(r: &Report) -> Vec<(&'static str, String)> {
    let p = &r.probe;
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    vec![
        ("ia_name", r.name.clone()),
        ("api", r.api.clone()),
        ("source", r.source.clone()),
        ("provider", or_dash(p.provider.clone())),
        ("provider_version", or_dash(p.provider.as_deref().and_then(builtin_by_name).map(|_| provider_version()))),
        ("transport", or_dash(p.transport.map(|t| probe::transport_name(t).to_string()))),
        ("device", or_dash(p.device.clone())),
        ("netdev", or_dash(p.netdev.clone())),
        ("ia_address", or_dash(p.address.map(|a| a.ip().to_string()))),
        ("status", p.state.text()),
    ]
}

pub fn text(r: &Report) -> String {
    let mut pairs = summary_pairs(r);
    if let Some(a) = &r.probe.attr {
        pairs.extend(attr_pairs(a).into_iter().map(|(k, v)| (k, v.plain())));
    }
    pairs.extend(r.probe.notes.iter().map(|n| ("note", n.clone())));
    fields(&pairs)
}

pub fn json(r: &Report) -> Json {
    let p = &r.probe;
    let mut obj: Vec<(&'static str, Json)> = summary_pairs(r)
        .into_iter()
        .filter(|(k, _)| *k != "status")
        .map(|(k, v)| (k, if v == "-" { Json::Null } else { Json::Str(v) }))
        .collect();
    obj.push(("state", Json::str(p.state.word())));
    obj.push(("usable", Json::Bool(p.state == State::Usable)));
    obj.push(("cause", Json::opt(p.state.cause())));
    obj.push(("notes", Json::strs(&p.notes)));
    let attr = match &p.attr {
        None => Json::Null,
        Some(a) => Json::Obj(attr_pairs(a)),
    };
    obj.push(("attributes", attr));
    Json::Obj(obj)
}
