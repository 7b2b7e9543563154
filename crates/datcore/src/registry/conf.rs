//! The dat.conf parser and the config-file search order.
//!
//! One record per line, eight whitespace-separated fields:
//!
//! ```text
//! <ia_name> <api_version> <threadsafety> <default> <lib_path> <provider_version> <ia_params> <platform_params>
//! OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
//! ```
//!
//! - `#` outside a quoted field starts a comment that runs to the end of the line;
//! - a field may be double-quoted; inside quotes `\"` is a quote and `\\` a backslash (any other
//!   backslash is kept as is); a quoted field may be empty (`""`) and may hold whitespace;
//! - `api_version` is `u<major>.<minor>` (uDAPL) or `k<major>.<minor>` (kDAPL);
//! - `threadsafety` is `threadsafe` / `nonthreadsafe`, `default` is `default` / `nondefault`
//!   (prefix match, as the reference parser does);
//! - `provider_version` is `<id>.<major>.<minor>` (e.g. `dapl.1.2`; informational);
//! - `platform_params` may be left out (the dat.conf(5) man page documents seven fields).
//!
//! A malformed line is skipped with exactly one `tracing::warn!` naming the file and line; parsing
//! never panics, whatever the bytes.

use std::ffi::OsString;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Longest IA name a consumer can pass (DAT_NAME_MAX_LENGTH, including the terminator).
pub const NAME_MAX: usize = 256;
/// Lines longer than this are rejected as malformed.
pub const LINE_MAX: usize = 64 * 1024;
/// Config files larger than this are not read at all.
pub const FILE_MAX: u64 = 16 * 1024 * 1024;

/// The default config files, searched in this order when `DAT_OVERRIDE` is not set.
pub const DEFAULT_PATHS: &[&str] = &["/etc/dat.conf", "/etc/rdma/dat.conf"];
/// The environment variable naming the config file to use instead of the defaults.
pub const OVERRIDE_VAR: &str = "DAT_OVERRIDE";

/// uDAPL (`u`) or kDAPL (`k`) API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApiKind {
    User,
    Kernel,
}

/// `provider_version`: `<id>.<major>.<minor>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderVersion {
    pub id: String,
    pub major: u32,
    pub minor: u32,
}

/// One valid dat.conf record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfEntry {
    pub ia_name: String,
    pub api: ApiKind,
    pub major: u32,
    pub minor: u32,
    pub thread_safe: bool,
    pub is_default: bool,
    pub lib_path: String,
    pub provider_version: ProviderVersion,
    pub ia_params: String,
    pub platform_params: String,
    /// 1-based line number in the file it came from.
    pub line: usize,
}

impl ConfEntry {
    /// Only uDAPL `default` entries are loadable by a user-space libdat (and listed).
    pub fn is_loadable(&self) -> bool {
        self.api == ApiKind::User && self.is_default
    }
}

/// Why a line was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineError {
    TooLong(usize),
    NotUtf8,
    NulByte,
    UnterminatedQuote,
    FieldCount(usize),
    BadName(&'static str),
    BadApiVersion(String),
    BadThreadSafety(String),
    BadDefault(String),
    EmptyLibPath,
    BadProviderVersion(String),
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineError::TooLong(n) => write!(f, "line of {n} bytes is longer than {LINE_MAX}"),
            LineError::NotUtf8 => write!(f, "line is not valid UTF-8"),
            LineError::NulByte => write!(f, "line contains a NUL byte"),
            LineError::UnterminatedQuote => write!(f, "unterminated quoted field"),
            LineError::FieldCount(n) => write!(f, "{n} fields, expected 8"),
            LineError::BadName(why) => write!(f, "bad ia_name: {why}"),
            LineError::BadApiVersion(s) => {
                write!(f, "bad api_version {s:?}, expected u<major>.<minor> or k<major>.<minor>")
            }
            LineError::BadThreadSafety(s) => {
                write!(f, "bad thread safety {s:?}, expected threadsafe or nonthreadsafe")
            }
            LineError::BadDefault(s) => write!(f, "bad default field {s:?}, expected default or nondefault"),
            LineError::EmptyLibPath => write!(f, "empty lib_path"),
            LineError::BadProviderVersion(s) => {
                write!(f, "bad provider_version {s:?}, expected <id>.<major>.<minor>")
            }
        }
    }
}

/// Splits one line (without its newline) into fields. `Ok(vec![])` for blank/comment lines.
pub fn tokenize(line: &str) -> Result<Vec<String>, LineError> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        match chars.peek() {
            None | Some('#') => return Ok(fields),
            Some('"') => {
                chars.next();
                let mut field = String::new();
                loop {
                    match chars.next() {
                        None => return Err(LineError::UnterminatedQuote),
                        Some('"') => break,
                        Some('\\') => match chars.peek() {
                            Some(&c @ ('"' | '\\')) => {
                                field.push(c);
                                chars.next();
                            }
                            _ => field.push('\\'),
                        },
                        Some(c) => field.push(c),
                    }
                }
                // A quoted field must be followed by whitespace, a comment or the end of line.
                match chars.peek() {
                    None | Some('#') => {}
                    Some(c) if c.is_whitespace() => {}
                    Some(_) => {
                        // `"a"b`: glue the rest on, like a shell word; keeps parsing total.
                        while let Some(&c) = chars.peek() {
                            if c.is_whitespace() || c == '#' {
                                break;
                            }
                            if c == '"' {
                                return Err(LineError::UnterminatedQuote);
                            }
                            field.push(c);
                            chars.next();
                        }
                    }
                }
                fields.push(field);
            }
            Some(_) => {
                let mut field = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || c == '#' {
                        break;
                    }
                    field.push(c);
                    chars.next();
                }
                fields.push(field);
            }
        }
    }
}

fn parse_u32(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_api(s: &str) -> Option<(ApiKind, u32, u32)> {
    let kind = match s.as_bytes().first()? {
        b'u' | b'U' => ApiKind::User,
        b'k' | b'K' => ApiKind::Kernel,
        _ => return None,
    };
    let (maj, min) = s[1..].split_once('.')?;
    Some((kind, parse_u32(maj)?, parse_u32(min)?))
}

fn parse_thread_safety(s: &str) -> Option<bool> {
    if s.starts_with("nonthreadsafe") {
        Some(false)
    } else if s.starts_with("threadsafe") {
        Some(true)
    } else {
        None
    }
}

fn parse_default(s: &str) -> Option<bool> {
    if s.starts_with("nondefault") {
        Some(false)
    } else if s.starts_with("default") {
        Some(true)
    } else {
        None
    }
}

fn parse_provider_version(s: &str) -> Option<ProviderVersion> {
    let mut it = s.rsplitn(3, '.');
    let minor = parse_u32(it.next()?)?;
    let major = parse_u32(it.next()?)?;
    let id = it.next()?;
    if id.is_empty() {
        return None;
    }
    Some(ProviderVersion { id: id.to_string(), major, minor })
}

/// Parses one line. `Ok(None)` for blank and comment-only lines.
pub fn parse_line(raw: &[u8], line: usize) -> Result<Option<ConfEntry>, LineError> {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    if raw.len() > LINE_MAX {
        return Err(LineError::TooLong(raw.len()));
    }
    let text = std::str::from_utf8(raw).map_err(|_| LineError::NotUtf8)?;
    if text.contains('\0') {
        return Err(LineError::NulByte);
    }
    let mut f = tokenize(text)?;
    match f.len() {
        0 => return Ok(None),
        7 => f.push(String::new()),
        8 => {}
        n => return Err(LineError::FieldCount(n)),
    }
    let ia_name = std::mem::take(&mut f[0]);
    if ia_name.is_empty() {
        return Err(LineError::BadName("empty"));
    }
    if ia_name.len() >= NAME_MAX {
        return Err(LineError::BadName("longer than 255 bytes"));
    }
    let (api, major, minor) = parse_api(&f[1]).ok_or_else(|| LineError::BadApiVersion(f[1].clone()))?;
    let thread_safe = parse_thread_safety(&f[2]).ok_or_else(|| LineError::BadThreadSafety(f[2].clone()))?;
    let is_default = parse_default(&f[3]).ok_or_else(|| LineError::BadDefault(f[3].clone()))?;
    if f[4].is_empty() {
        return Err(LineError::EmptyLibPath);
    }
    let provider_version = parse_provider_version(&f[5]).ok_or_else(|| LineError::BadProviderVersion(f[5].clone()))?;
    Ok(Some(ConfEntry {
        ia_name,
        api,
        major,
        minor,
        thread_safe,
        is_default,
        lib_path: std::mem::take(&mut f[4]),
        provider_version,
        ia_params: std::mem::take(&mut f[6]),
        platform_params: std::mem::take(&mut f[7]),
        line,
    }))
}

/// Parses a whole file's bytes; `origin` names the file in warnings.
pub fn parse_bytes(bytes: &[u8], origin: &str) -> Vec<ConfEntry> {
    let mut out = Vec::new();
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = i + 1;
        match parse_line(raw, line) {
            Ok(Some(e)) => out.push(e),
            Ok(None) => {}
            Err(err) => tracing::warn!("{origin}:{line}: {err}; line skipped"),
        }
    }
    out
}

/// Parses text (tests and tools).
pub fn parse_str(text: &str, origin: &str) -> Vec<ConfEntry> {
    parse_bytes(text.as_bytes(), origin)
}

/// Reads and parses a file (at most [`FILE_MAX`] bytes).
pub fn parse_file(path: &Path) -> std::io::Result<Vec<ConfEntry>> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    let mut bytes = Vec::new();
    file.take(FILE_MAX + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > FILE_MAX {
        return Err(std::io::Error::other(format!("larger than {FILE_MAX} bytes")));
    }
    Ok(parse_bytes(&bytes, &path.display().to_string()))
}

/// The static registry: the parsed config file, if any.
#[derive(Clone, Debug, Default)]
pub struct StaticConf {
    /// The file the entries came from (None: no config file in use).
    pub path: Option<PathBuf>,
    /// Every valid record, in file order (loadable or not).
    pub entries: Vec<ConfEntry>,
}

impl StaticConf {
    /// No config file.
    pub fn empty() -> Self {
        StaticConf::default()
    }

    /// Parses `path`. On error, logs it and returns an empty registry.
    pub fn from_path(path: &Path) -> Self {
        match parse_file(path) {
            Ok(entries) => {
                tracing::debug!("dat.conf: {} entries from {}", entries.len(), path.display());
                StaticConf { path: Some(path.to_path_buf()), entries }
            }
            Err(e) => {
                tracing::error!("dat.conf: cannot read {}: {e}; no static registry", path.display());
                StaticConf::empty()
            }
        }
    }

    /// Applies the search order: `override_path` (the value of `DAT_OVERRIDE`) if given — and
    /// if it cannot be read, logs an error and uses no config file at all; otherwise the first
    /// of `defaults` that can be opened; otherwise none.
    pub fn search(override_path: Option<&Path>, defaults: &[&Path]) -> Self {
        if let Some(p) = override_path {
            return match parse_file(p) {
                Ok(entries) => StaticConf { path: Some(p.to_path_buf()), entries },
                Err(e) => {
                    tracing::error!("{OVERRIDE_VAR}={}: cannot read it ({e}); using no dat.conf at all", p.display());
                    StaticConf::empty()
                }
            };
        }
        for p in defaults {
            match parse_file(p) {
                Ok(entries) => return StaticConf { path: Some(p.to_path_buf()), entries },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    tracing::warn!("dat.conf: cannot read {}: {e}; trying the next one", p.display());
                    continue;
                }
            }
        }
        tracing::debug!("dat.conf: no config file found; built-in providers only");
        StaticConf::empty()
    }

    /// The search order with the process environment and the default paths.
    pub fn from_env() -> Self {
        let over: Option<OsString> = std::env::var_os(OVERRIDE_VAR).filter(|v| !v.is_empty());
        let defaults: Vec<&Path> = DEFAULT_PATHS.iter().map(Path::new).collect();
        Self::search(over.as_deref().map(Path::new), &defaults)
    }

    /// Display name of the source, for log lines.
    pub fn origin(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "no dat.conf".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ofed_line() {
        let e = parse_line(br#"OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" """#, 3)
            .unwrap()
            .unwrap();
        assert_eq!(e.ia_name, "OpenIB-cma");
        assert_eq!((e.api, e.major, e.minor), (ApiKind::User, 1, 2));
        assert!(!e.thread_safe && e.is_default && e.is_loadable());
        assert_eq!(e.lib_path, "libdaplcma.so.1");
        assert_eq!(e.provider_version, ProviderVersion { id: "dapl".into(), major: 1, minor: 2 });
        assert_eq!(e.ia_params, "ib0 0");
        assert_eq!(e.platform_params, "");
        assert_eq!(e.line, 3);
    }

    #[test]
    fn tokens() {
        assert_eq!(tokenize("  # only a comment").unwrap(), Vec::<String>::new());
        assert_eq!(tokenize("a b#c d").unwrap(), vec!["a", "b"]);
        assert_eq!(tokenize(r#""x \"y\" \\ \z" "" "#).unwrap(), vec![r#"x "y" \ \z"#, ""]);
        assert_eq!(tokenize(r#""a # b" c"#).unwrap(), vec!["a # b", "c"]);
        assert_eq!(tokenize("\"abc").unwrap_err(), LineError::UnterminatedQuote);
        assert_eq!(tokenize("\"ab\\\"").unwrap_err(), LineError::UnterminatedQuote);
    }

    #[test]
    fn fields() {
        let ok = |s: &str| parse_line(s.as_bytes(), 1).unwrap().unwrap();
        let bad = |s: &str| parse_line(s.as_bytes(), 1).unwrap_err();
        assert!(ok("x k1.2 threadsafe nondefault /l.so SUNW.1.0 \" \"").api == ApiKind::Kernel);
        assert!(ok("x u2.0 threadsafe default /l.so a.b.2.0 p q").thread_safe);
        assert_eq!(ok("x u2.0 threadsafe default /l.so a.b.2.0 p q").provider_version.id, "a.b");
        // seven fields (dat.conf(5)): platform_params empty
        assert_eq!(ok("x u1.2 threadsafe default l id.1.2 p").platform_params, "");
        assert_eq!(bad("x u1.2 threadsafe default l id.1.2"), LineError::FieldCount(6));
        assert_eq!(bad("x u1.2 threadsafe default l id.1.2 a b c"), LineError::FieldCount(9));
        assert!(matches!(bad("x 1.2 threadsafe default l id.1.2 a b"), LineError::BadApiVersion(_)));
        assert!(matches!(bad("x u1 threadsafe default l id.1.2 a b"), LineError::BadApiVersion(_)));
        assert!(matches!(bad("x u1.-2 threadsafe default l id.1.2 a b"), LineError::BadApiVersion(_)));
        assert!(matches!(bad("x u99999999999.2 threadsafe default l id.1.2 a b"), LineError::BadApiVersion(_)));
        assert!(matches!(bad("x u1.2 safe default l id.1.2 a b"), LineError::BadThreadSafety(_)));
        assert!(matches!(bad("x u1.2 threadsafe dflt l id.1.2 a b"), LineError::BadDefault(_)));
        assert!(matches!(bad("x u1.2 threadsafe default l 1.2 a b"), LineError::BadProviderVersion(_)));
        assert!(matches!(bad("x u1.2 threadsafe default l id.x.2 a b"), LineError::BadProviderVersion(_)));
        assert_eq!(bad("x u1.2 threadsafe default \"\" id.1.2 a b"), LineError::EmptyLibPath);
        assert_eq!(bad("\"\" u1.2 threadsafe default l id.1.2 a b"), LineError::BadName("empty"));
        let long = format!("{} u1.2 threadsafe default l id.1.2 a b", "n".repeat(256));
        assert_eq!(bad(&long), LineError::BadName("longer than 255 bytes"));
        assert_eq!(ok(&format!("{} u1.2 threadsafe default l id.1.2 a b", "n".repeat(255))).ia_name.len(), 255);
        assert_eq!(bad("x\0 u1.2 threadsafe default l id.1.2 a b"), LineError::NulByte);
        // CRLF line endings
        assert_eq!(ok("x u1.2 threadsafe default l id.1.2 a b\r").platform_params, "b");
    }

    #[test]
    fn file_with_bad_lines() {
        let text = "# comment\n\n  \t\nA u1.2 nonthreadsafe default a.so d.1.2 \"\" \"\"\nbroken line\n\
                    B u2.0 threadsafe default b.so d.2.0 \"p\" \"\" # trailing\n\"unterminated\n";
        let v = parse_str(text, "t");
        assert_eq!(v.iter().map(|e| (e.ia_name.as_str(), e.line)).collect::<Vec<_>>(), vec![("A", 4), ("B", 6)]);
    }

    #[test]
    fn adversarial() {
        assert!(parse_bytes(b"", "empty").is_empty());
        assert!(parse_bytes(b"\n\n\n", "blank").is_empty());
        let junk: Vec<u8> = (0..65536u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        let _ = parse_bytes(&junk, "junk");
        let mut huge = vec![b'a'; LINE_MAX + 10];
        huge.extend_from_slice(b"\nA u1.2 threadsafe default a.so d.1.2 x y\n");
        let v = parse_bytes(&huge, "huge");
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].line, 2);
        assert_eq!(parse_line(&vec![b'"'; 1000], 1).unwrap_err(), LineError::UnterminatedQuote);
        assert_eq!(parse_line(&[0xff, 0xfe, b' '], 1).unwrap_err(), LineError::NotUtf8);
        // every prefix of a valid line parses or fails cleanly
        let l = br#"OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" """#;
        for n in 0..=l.len() {
            let _ = parse_line(&l[..n], 1);
        }
    }

    #[test]
    fn search_order() {
        let dir = std::env::temp_dir().join(format!("datcore-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.conf");
        let b = dir.join("b.conf");
        std::fs::write(&a, "A u1.2 threadsafe default a.so d.1.2 x y\n").unwrap();
        std::fs::write(&b, "B u1.2 threadsafe default b.so d.1.2 x y\n").unwrap();
        let missing = dir.join("missing.conf");
        // override wins
        let c = StaticConf::search(Some(&b), &[&a]);
        assert_eq!(c.entries[0].ia_name, "B");
        // unreadable override: no config at all, no fallback
        let c = StaticConf::search(Some(&missing), &[&a]);
        assert!(c.entries.is_empty() && c.path.is_none());
        // override that is a directory: same
        let c = StaticConf::search(Some(&dir), &[&a]);
        assert!(c.entries.is_empty() && c.path.is_none());
        // first readable default
        let c = StaticConf::search(None, &[&missing, &a, &b]);
        assert_eq!(c.path.as_deref(), Some(a.as_path()));
        let c = StaticConf::search(None, &[&missing]);
        assert!(c.path.is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
