//! Logging: `tracing`, off unless an environment variable switches it on.
//!
//! `DAT_LOG` takes a `tracing` filter level (`error`, `warn`, `info`, `debug`, `trace`).
//! `DAT_DBG_TYPE` and `DAPL_DBG_TYPE` (the reference's bitmasks, read with base prefix like
//! strtol) also switch it on: bit 0x1 alone gives errors, any other bit warnings, 0xff or more
//! everything. Output goes to stderr. Nothing is installed if the process already set a global
//! subscriber, and nothing at all when no variable is set.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

fn parse_mask(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// The level the environment asks for, if any.
pub fn level_from_env() -> Option<tracing::Level> {
    use tracing::Level;
    if let Ok(v) = std::env::var("DAT_LOG") {
        return v.trim().parse::<Level>().ok();
    }
    let mask = ["DAT_DBG_TYPE", "DAPL_DBG_TYPE"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().and_then(|v| parse_mask(&v)))
        .fold(0u64, |a, b| a | b);
    match mask {
        0 => None,
        1 => Some(Level::ERROR),
        m if m >= 0xff => Some(Level::TRACE),
        m if m & 0x8 != 0 => Some(Level::DEBUG),
        _ => Some(Level::WARN),
    }
}

/// Installs a stderr subscriber once, if the environment asks for logging. The faces call it
/// from `dat_ia_openv` and the registry calls, not from every export (no other call succeeds
/// or reaches a provider before an IA is open): after the first call it costs one load and
/// one branch.
#[inline]
pub fn init() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if !DONE.load(Ordering::Acquire) {
        init_once();
        DONE.store(true, Ordering::Release);
    }
}

#[cold]
#[inline(never)]
fn init_once() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if let Some(level) = level_from_env() {
            let sub = tracing_subscriber::fmt()
                .with_max_level(level)
                .with_writer(std::io::stderr)
                .with_target(false)
                .finish();
            let _ = tracing::subscriber::set_global_default(sub);
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn masks() {
        assert_eq!(super::parse_mask("0x3f"), Some(0x3f));
        assert_eq!(super::parse_mask("017"), Some(15));
        assert_eq!(super::parse_mask("12"), Some(12));
        assert_eq!(super::parse_mask("junk"), None);
    }
}
