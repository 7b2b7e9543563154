//! `datinfo --conf`: the dat.conf in effect, line by line — what each line resolves to (a
//! built-in provider, a third-party library) and whether it opens, or why it is skipped.

use crate::list::{conf_description, conf_line_probe, entry_api, face_line};
use crate::output::{Json, Table};
use crate::probe::{Face, Probe, State};
use datcore::registry::builtin_for_lib_path;
use datcore::registry::conf::{parse_line, ConfEntry, FILE_MAX};
use datcore::registry::Registry;
use std::io::Read;

/// One non-blank, non-comment line.
pub struct Line {
    pub number: usize,
    /// The parsed entry and what this libdat makes of it, or why the line is malformed.
    pub verdict: Result<(ConfEntry, Probe), String>,
}

fn resolves_to(e: &ConfEntry) -> String {
    let params = if e.ia_params.is_empty() { String::new() } else { format!(" with ia_params {:?}", e.ia_params) };
    match builtin_for_lib_path(&e.lib_path) {
        Some(p) => format!("built-in provider {p}{params}"),
        None => format!("third-party library{params}"),
    }
}

/// The lines of the dat.conf in effect; Err when none is in effect or it cannot be read now.
pub fn gather(reg: &Registry, face: Face) -> Result<Vec<Line>, String> {
    let path = reg.conf.path.as_ref().ok_or_else(|| conf_description(reg))?;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(FILE_MAX).read_to_end(&mut bytes))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let number = i + 1;
        let verdict = match parse_line(raw, number) {
            Ok(None) => continue,
            Ok(Some(e)) => {
                let probe = conf_line_probe(reg, face, &e);
                Ok((e, probe))
            }
            Err(err) => Err(format!("malformed, skipped: {err}")),
        };
        out.push(Line { number, verdict });
    }
    Ok(out)
}

pub fn usable_count(lines: &[Line]) -> usize {
    lines.iter().filter(|l| matches!(&l.verdict, Ok((_, p)) if p.state == State::Usable)).count()
}

pub fn text(reg: &Registry, face: Face, lines: &[Line]) -> String {
    let origin = reg.conf.origin();
    let mut t = Table::new(&["LINE", "IA NAME", "API", "LIB_PATH", "RESOLVES TO", "STATUS"]);
    for l in lines {
        let at = format!("{origin}:{}", l.number);
        t.push(match &l.verdict {
            Ok((e, p)) => vec![at, e.ia_name.clone(), entry_api(e), e.lib_path.clone(), resolves_to(e), p.state.text()],
            Err(why) => vec![at, "-".into(), "-".into(), "-".into(), "-".into(), why.clone()],
        });
    }
    format!(
        "dat.conf: {}\n{}\n{t}\n{} of {} lines give a usable IA\n",
        conf_description(reg),
        face_line(face),
        usable_count(lines),
        lines.len()
    )
}

pub fn json(reg: &Registry, face: Face, lines: &[Line]) -> Json {
    let origin = reg.conf.origin();
    let line_json = |l: &Line| match &l.verdict {
        Ok((e, p)) => Json::Obj(vec![
            ("file", Json::str(&origin)),
            ("line", Json::Num(l.number as u64)),
            ("ia_name", Json::str(&e.ia_name)),
            ("api", Json::str(entry_api(e))),
            ("lib_path", Json::str(&e.lib_path)),
            ("ia_params", Json::str(&e.ia_params)),
            ("resolves_to", Json::str(resolves_to(e))),
            ("provider", Json::opt(p.provider.clone())),
            ("state", Json::str(p.state.word())),
            ("usable", Json::Bool(p.state == State::Usable)),
            ("cause", Json::opt(p.state.cause())),
        ]),
        Err(why) => Json::Obj(vec![
            ("file", Json::str(&origin)),
            ("line", Json::Num(l.number as u64)),
            ("ia_name", Json::Null),
            ("state", Json::str("malformed")),
            ("usable", Json::Bool(false)),
            ("cause", Json::str(why)),
        ]),
    };
    Json::Obj(vec![
        ("api", Json::str(face.api_text())),
        ("library", Json::str(face.library)),
        ("dat_conf", Json::opt(reg.conf.path.as_ref().map(|p| p.display().to_string()))),
        ("dat_conf_description", Json::str(conf_description(reg))),
        ("lines", Json::Arr(lines.iter().map(line_json).collect())),
        ("usable", Json::Num(usable_count(lines) as u64)),
    ])
}
