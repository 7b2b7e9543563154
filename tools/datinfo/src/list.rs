//! `datinfo`: every IA name a consumer can ask for right now — built-in provider names, the
//! names of RDMA ports that are not active, and dat.conf lines — each probed by opening it.

use crate::output::{cell, Json, Table};
use crate::probe::{self, Face, Probe, State};
use datcore::provider::{ofi, verbs};
use datcore::registry::builtin::builtins;
use datcore::registry::conf::{ApiKind, ConfEntry, DEFAULT_PATHS, OVERRIDE_VAR};
use datcore::registry::{builtin_for_lib_path, library_for_lib_path, Registry, Resolution};

/// One IA name and what opening it gives.
pub struct Row {
    pub name: String,
    /// `u1.2 nonthreadsafe` for dat.conf lines; `1.2` for built-in names (either thread safety).
    pub api: String,
    /// `built-in`, or `file:line`.
    pub source: String,
    pub probe: Probe,
}

/// The dat.conf in effect and how it was chosen, as one line.
pub fn conf_description(reg: &Registry) -> String {
    let over = std::env::var_os(OVERRIDE_VAR).filter(|v| !v.is_empty());
    match (&reg.conf.path, over) {
        (Some(p), Some(_)) => format!("{} (from {OVERRIDE_VAR})", p.display()),
        (Some(p), None) => p.display().to_string(),
        (None, Some(o)) => format!(
            "none: {OVERRIDE_VAR}={} cannot be read ({}), so no dat.conf is used at all",
            o.to_string_lossy(),
            std::fs::metadata(&o).map_or_else(|e| e.to_string(), |_| "not a readable file".into())
        ),
        (None, None) => format!("none ({} not found): built-in IA names only", DEFAULT_PATHS.join(", ")),
    }
}

/// `u1.2 nonthreadsafe`.
pub fn entry_api(e: &ConfEntry) -> String {
    let kind = if e.api == ApiKind::User { 'u' } else { 'k' };
    format!("{kind}{}.{} {}", e.major, e.minor, if e.thread_safe { "threadsafe" } else { "nonthreadsafe" })
}

/// Whether a resolution came from this dat.conf line.
fn resolution_is(r: &Resolution, e: &ConfEntry) -> bool {
    match r {
        Resolution::Builtin { provider, params, .. } => {
            builtin_for_lib_path(&e.lib_path) == Some(provider.name()) && *params == e.ia_params
        }
        Resolution::Library(l) => l.lib_path == library_for_lib_path(&e.lib_path) && l.ia_params == e.ia_params,
    }
}

/// The dat.conf line `dat_ia_open` would use for this key and resolution, if any.
pub fn used_line<'a>(
    reg: &'a Registry,
    face: Face,
    name: &str,
    thread_safe: bool,
    r: &Resolution,
) -> Option<&'a ConfEntry> {
    reg.conf.entries.iter().find(|e| {
        e.ia_name == name
            && e.is_loadable()
            && (e.major, e.minor) == face.api
            && e.thread_safe == thread_safe
            && resolution_is(r, e)
    })
}

/// What this libdat does with dat.conf line `e`: probed when it is the line `dat_ia_open`
/// uses for its key; otherwise why it is not used.
pub fn conf_line_probe(reg: &Registry, face: Face, e: &ConfEntry) -> Probe {
    if e.api == ApiKind::Kernel {
        return Probe::unusable("a kDAPL entry: for kernel consumers, not loaded by libdat");
    }
    if !e.is_default {
        return Probe::unusable("marked nondefault: never loaded");
    }
    if (e.major, e.minor) != face.api {
        return Probe::unusable(format!(
            "registered for DAT {}.{}; {} is the DAT {} face",
            e.major,
            e.minor,
            face.library,
            face.api_text()
        ));
    }
    match reg.resolve_cause(&e.ia_name, face.api.0, face.api.1, e.thread_safe) {
        Ok(r) => match used_line(reg, face, &e.ia_name, e.thread_safe, &r) {
            Some(u) if u.line == e.line => probe::resolution(r),
            Some(u) => Probe::unusable(format!("line {} has the same name and version and is used instead", u.line)),
            None => probe::conf_entry(e),
        },
        Err(_) => probe::conf_entry(e),
    }
}

/// Every IA name, probed; plus notes about the host (no rdma-core, no RDMA device).
pub fn gather(reg: &Registry, face: Face) -> (Vec<Row>, Vec<String>) {
    let mut rows: Vec<Row> = Vec::new();
    let mut notes = Vec::new();
    let api = face.api_text();
    // A consumer's dat_ia_open asks nonthreadsafe; a dat.conf line with that key wins.
    let conf_wins = |name: &str| {
        reg.conf
            .entries
            .iter()
            .any(|e| e.ia_name == name && e.is_loadable() && (e.major, e.minor) == face.api && !e.thread_safe)
    };
    for provider in builtins() {
        for name in provider.ia_names() {
            if conf_wins(&name) || rows.iter().any(|r| r.name == name && r.source == "built-in") {
                continue;
            }
            let probe = match reg.resolve_cause(&name, face.api.0, face.api.1, false) {
                Ok(r) => probe::resolution(r),
                Err(why) => Probe::unusable(why),
            };
            rows.push(Row { name, api: api.clone(), source: "built-in".into(), probe });
        }
    }
    match verbs::ports() {
        Err(why) => notes.push(format!("verbs: {why}: no verbs IA names")),
        Ok(ports) if ports.is_empty() => notes.push("verbs: no RDMA devices".into()),
        Ok(ports) => {
            for (name, probe) in inactive_port_names(&ports) {
                if !rows.iter().any(|r| r.name == name) {
                    rows.push(Row { name, api: api.clone(), source: "built-in".into(), probe });
                }
            }
        }
    }
    match ofi::offers() {
        Err(why) => notes.push(format!("ofi: {why}: no ofi IA names")),
        Ok(offers) => {
            for o in offers.iter().filter(|o| o.unusable.is_some()) {
                if !rows.iter().any(|r| r.name == o.ia_name) {
                    let mut probe = Probe::unusable(o.unusable.clone().unwrap_or_default());
                    probe::describe_offer(&mut probe, o);
                    rows.push(Row { name: o.ia_name.clone(), api: api.clone(), source: "built-in".into(), probe });
                }
            }
        }
    }
    for e in &reg.conf.entries {
        rows.push(Row {
            name: e.ia_name.clone(),
            api: entry_api(e),
            source: format!("{}:{}", reg.conf.origin(), e.line),
            probe: conf_line_probe(reg, face, e),
        });
    }
    (rows, notes)
}

/// Ports that are not active answer no IA name; these are the names they would have
/// (`ofa-v2-<netdev>`, `<dev>-<port>`, the ones consumers' configurations use), each with the
/// cause it does not open.
pub fn inactive_port_names(ports: &[verbs::Port]) -> Vec<(String, Probe)> {
    let mut out = Vec::new();
    for p in ports.iter().filter(|p| !p.active) {
        let mut names: Vec<String> = p.addrs.iter().map(|(netdev, _)| format!("ofa-v2-{netdev}")).collect();
        names.push(format!("{}-{}", p.dev, p.port));
        names.dedup();
        for name in names {
            let cause = verbs::open_target(&name, "").err().unwrap_or_else(|| "port not active".into());
            let mut probe = Probe::unusable(cause);
            probe.provider = Some("verbs".into());
            probe.device = Some(format!("{}:{}", p.dev, p.port));
            probe.netdev = p.netdev().map(str::to_string);
            out.push((name, probe));
        }
    }
    out
}

pub fn usable_count(rows: &[Row]) -> usize {
    rows.iter().filter(|r| r.probe.state == State::Usable).count()
}

/// `face: DAT 1.2 (libdat.so.1)`: whose view the names are probed for.
pub fn face_line(face: Face) -> String {
    format!("face: DAT {} ({})\n", face.api_text(), face.library)
}

pub fn text(reg: &Registry, face: Face, rows: &[Row], notes: &[String]) -> String {
    let mut t =
        Table::new(&["IA NAME", "API", "SOURCE", "PROVIDER", "TRANSPORT", "DEVICE", "NETDEV", "ADDRESS", "STATUS"]);
    for r in rows {
        let p = &r.probe;
        t.push(vec![
            r.name.clone(),
            r.api.clone(),
            r.source.clone(),
            cell(p.provider.as_deref()),
            cell(p.transport.map(probe::transport_name)),
            cell(p.device.as_deref()),
            cell(p.netdev.as_deref()),
            cell(p.address.map(|a| a.ip().to_string()).as_deref()),
            p.state.text(),
        ]);
    }
    let mut out = format!("dat.conf: {}\n{}\n{t}", conf_description(reg), face_line(face));
    // Host notes, then each distinct IA note once (RLIMIT_MEMLOCK applies to every verbs IA).
    let mut all_notes: Vec<&String> = notes.iter().collect();
    for n in rows.iter().flat_map(|r| &r.probe.notes) {
        if !all_notes.contains(&n) {
            all_notes.push(n);
        }
    }
    if !all_notes.is_empty() {
        out.push('\n');
        for n in all_notes {
            out.push_str(&format!("note: {n}\n"));
        }
    }
    out.push_str(&format!("\n{} of {} IA names usable\n", usable_count(rows), rows.len()));
    out
}

pub fn row_json(r: &Row) -> Json {
    let p = &r.probe;
    Json::Obj(vec![
        ("name", Json::str(&r.name)),
        ("api", Json::str(&r.api)),
        ("source", Json::str(&r.source)),
        ("provider", Json::opt(p.provider.clone())),
        ("transport", Json::opt(p.transport.map(probe::transport_name))),
        ("device", Json::opt(p.device.clone())),
        ("netdev", Json::opt(p.netdev.clone())),
        ("address", Json::opt(p.address.map(|a| a.ip().to_string()))),
        ("state", Json::str(p.state.word())),
        ("usable", Json::Bool(p.state == State::Usable)),
        ("cause", Json::opt(p.state.cause())),
        ("notes", Json::strs(&p.notes)),
    ])
}

pub fn json(reg: &Registry, face: Face, rows: &[Row], notes: &[String]) -> Json {
    Json::Obj(vec![
        ("api", Json::str(face.api_text())),
        ("library", Json::str(face.library)),
        ("dat_conf", Json::opt(reg.conf.path.as_ref().map(|p| p.display().to_string()))),
        ("dat_conf_description", Json::str(conf_description(reg))),
        ("ias", Json::Arr(rows.iter().map(row_json).collect())),
        ("notes", Json::strs(notes)),
        ("usable", Json::Num(usable_count(rows) as u64)),
    ])
}
