//! Registry resolution and listing over explicit configs (no process environment involved).

use datcore::error::{DatError, DatResult};
use datcore::provider::{AsyncEvents, Device, Provider};
use datcore::registry::conf::{self, StaticConf};
use datcore::registry::{ProviderInfo, Registry, Resolution, NOT_FOUND};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

struct Fake(&'static str, &'static [&'static str]);

impl Provider for Fake {
    fn name(&self) -> &'static str {
        self.0
    }
    fn ia_names(&self) -> Vec<String> {
        self.1.iter().map(|s| s.to_string()).collect()
    }
    fn open(&self, _: &str, _: &str, _: Arc<dyn AsyncEvents>) -> DatResult<Arc<dyn Device>> {
        Err(DatError::NOT_IMPLEMENTED)
    }
}

fn conf_of(text: &str) -> StaticConf {
    StaticConf { path: Some("test.conf".into()), entries: conf::parse_str(text, "test.conf") }
}

const CONF: &str = r#"
# a third-party library, two versions
lib12 u1.2 nonthreadsafe default /bin/sh tp.1.2 "dev0 1" ""
lib20 u2.0 nonthreadsafe default libthird.so.2 tp.2.0 "" ""
# OFED names resolve to the (absent) verbs provider
OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
# our marker
shm-conf u1.2 threadsafe default builtin:shm ours.1.0 "param" ""
kern k1.2 nonthreadsafe default libk.so k.1.2 "" ""
nodef u1.2 nonthreadsafe nondefault libn.so n.1.2 "" ""
missing u1.2 nonthreadsafe default /nonexistent/libmissing.so m.1.2 "" ""
# chained duplicates: first unusable, second fine
dup u1.2 nonthreadsafe default /nonexistent/a.so d.1.2 "a" ""
dup u1.2 nonthreadsafe default libdup.so d.1.2 "b" ""
"#;

fn reg() -> Registry {
    Registry::new(conf_of(CONF), vec![Arc::new(Fake("shm", &["shm", "shm0"]))])
}

fn lib(r: Result<Resolution, DatError>) -> datcore::registry::Library {
    match r {
        Ok(Resolution::Library(l)) => l,
        other => panic!("expected a library, got {other:?}"),
    }
}

#[test]
fn builtin_without_conf() {
    let r = Registry::new(StaticConf::empty(), vec![Arc::new(Fake("shm", &["shm", "shm0"]))]);
    // The built-ins answer DAT 1.2 (libdat.so.1) and DAT 2.0 (libdat2.so.2), either thread safety.
    for (major, minor) in [(1, 2), (2, 0)] {
        for ts in [false, true] {
            match r.resolve("shm0", major, minor, ts) {
                Ok(Resolution::Builtin { provider, ia_name, params }) => {
                    assert_eq!((provider.name(), ia_name.as_str(), params.as_str()), ("shm", "shm0", ""));
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(r.resolve("shm", 1, 1, false).unwrap_err(), NOT_FOUND);
    assert_eq!(NOT_FOUND.0, 0x800a_0062);
    let cause = r.resolve_cause("shm", 1, 1, false).unwrap_err();
    assert!(
        cause.contains("registered for DAT 1.2") && cause.contains("2.0") && cause.contains("asked 1.1"),
        "{cause}"
    );
    let cause = r.resolve_cause("nope", 1, 2, false).unwrap_err();
    assert!(cause.contains("not registered") && cause.contains("no dat.conf"), "{cause}");
}

#[test]
fn library_entries() {
    let r = reg();
    let l = lib(r.resolve("lib12", 1, 2, false));
    assert_eq!(l.lib_path, "/bin/sh");
    assert_eq!(l.ia_params, "dev0 1");
    assert_eq!(l.info, ProviderInfo { ia_name: "lib12".into(), major: 1, minor: 2, thread_safe: false });
    // every key part must match
    for (ma, mi, ts) in [(1, 2, true), (2, 0, false), (1, 1, false), (1, 3, false)] {
        assert_eq!(r.resolve("lib12", ma, mi, ts).unwrap_err(), NOT_FOUND);
    }
    let cause = r.resolve_cause("lib20", 1, 2, false).unwrap_err();
    assert!(
        cause.contains("IA 'lib20' is registered for DAT 2.0 nonthreadsafe") && cause.contains("asked 1.2"),
        "{cause}"
    );
    assert!(lib(r.resolve("lib20", 2, 0, false)).lib_path == "libthird.so.2");
    // chained duplicates: the first usable wins
    assert_eq!(lib(r.resolve("dup", 1, 2, false)).ia_params, "b");
}

#[test]
fn unloadable_entries() {
    let r = reg();
    let c = r.resolve_cause("kern", 1, 2, false).unwrap_err();
    assert!(c.contains("kDAPL"), "{c}");
    let c = r.resolve_cause("nodef", 1, 2, false).unwrap_err();
    assert!(c.contains("nondefault"), "{c}");
    let c = r.resolve_cause("missing", 1, 2, false).unwrap_err();
    assert!(c.contains("missing") && c.contains("test.conf:"), "{c}");
    let c = r.resolve_cause("OpenIB-cma", 1, 2, false).unwrap_err();
    assert!(c.contains("provider verbs not available in this build"), "{c}");
    assert_eq!(r.resolve("OpenIB-cma", 1, 2, false).unwrap_err(), NOT_FOUND);
}

#[test]
fn builtin_via_conf() {
    let r = reg();
    match r.resolve("shm-conf", 1, 2, true) {
        Ok(Resolution::Builtin { provider, ia_name, params }) => {
            assert_eq!((provider.name(), ia_name.as_str(), params.as_str()), ("shm", "shm-conf", "param"));
        }
        other => panic!("{other:?}"),
    }
    // the dat.conf key is exact
    assert!(r.resolve("shm-conf", 1, 2, false).is_err());
    // a registry with a verbs provider resolves the OFED names to it
    let r = Registry::new(conf_of(CONF), vec![Arc::new(Fake("verbs", &[]))]);
    match r.resolve("OpenIB-cma", 1, 2, false) {
        Ok(Resolution::Builtin { provider, params, .. }) => {
            assert_eq!((provider.name(), params.as_str()), ("verbs", "ib0 0"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn dlopen_marker_loads_the_library_itself() {
    let text = "ofa u2.0 nonthreadsafe default dlopen:libdaplofa.so.2 dapl.2.0 \"rdma0 0\" \"\"\n\
                abs u2.0 nonthreadsafe default dlopen:/nonexistent/libdaplofa.so.2 dapl.2.0 \"\" \"\"\n\
                empty u2.0 nonthreadsafe default dlopen: x.1.0 \"\" \"\"\n";
    // a verbs provider is present: without the marker, libdaplofa would map to it
    let r = Registry::new(conf_of(text), vec![Arc::new(Fake("verbs", &[]))]);
    let l = lib(r.resolve("ofa", 2, 0, false));
    assert_eq!((l.lib_path.as_str(), l.ia_params.as_str()), ("libdaplofa.so.2", "rdma0 0"));
    assert_eq!(l.info, ProviderInfo { ia_name: "ofa".into(), major: 2, minor: 0, thread_safe: false });
    let c = r.resolve_cause("abs", 2, 0, false).unwrap_err();
    assert!(c.contains("library /nonexistent/libdaplofa.so.2 is missing"), "{c}");
    let c = r.resolve_cause("empty", 2, 0, false).unwrap_err();
    assert!(c.contains("names no library"), "{c}");
}

#[test]
fn conf_beats_builtin_name() {
    let text = "shm u1.2 nonthreadsafe default libother.so o.1.2 \"\" \"\"\n";
    let r = Registry::new(conf_of(text), vec![Arc::new(Fake("shm", &["shm"]))]);
    assert_eq!(lib(r.resolve("shm", 1, 2, false)).lib_path, "libother.so");
    // other thread safety: the built-in still answers
    assert!(matches!(r.resolve("shm", 1, 2, true), Ok(Resolution::Builtin { .. })));
}

#[test]
fn listing() {
    let r = reg();
    let got: Vec<(String, u32, u32, bool)> =
        r.list(1).into_iter().map(|i| (i.ia_name, i.major, i.minor, i.thread_safe)).collect();
    // lib20 (u2.0) is left out of the DAT 1 listing
    let want: Vec<(String, u32, u32, bool)> = [
        ("shm", 1, 2, false),
        ("shm0", 1, 2, false),
        ("lib12", 1, 2, false),
        ("OpenIB-cma", 1, 2, false),
        ("shm-conf", 1, 2, true),
        ("missing", 1, 2, false),
        ("dup", 1, 2, false),
    ]
    .iter()
    .map(|&(n, a, b, t)| (n.to_string(), a, b, t))
    .collect();
    assert_eq!(got, want);
    // stable
    assert_eq!(r.list(1), r.list(1));
    assert!(Registry::new(StaticConf::empty(), vec![]).list(1).is_empty());
    // the DAT 2 face sees the built-ins (as DAT 2.0) and the u2.0 entry, not the u1.2 ones
    let info = |n: &str| ProviderInfo { ia_name: n.into(), major: 2, minor: 0, thread_safe: false };
    assert_eq!(r.list(2), vec![info("shm"), info("shm0"), info("lib20")]);
}

/// Debian's layout: many `u2.0` `ofa-v2-*` lines (libdapl2), a few DAT 1.2 lines mixed in.
#[test]
fn listing_mixed_versions_shows_only_the_faces_major() {
    let text = r#"
ofa-v2-mlx4_0-1 u2.0 nonthreadsafe default libdaploscm.so.2 dapl.2.0 "mlx4_0 1" ""
ofa-v2-ib0 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "ib0 0" ""
OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 dapl.1.2 "ib0 0" ""
ofa-v2-mlx5_0-1u u2.0 nonthreadsafe default libdaploucm.so.2 dapl.2.0 "mlx5_0 1" ""
ofa-v2-mcm-1 u2.0 nonthreadsafe default libdaplomcm.so.2 dapl.2.0 "mlx4_0 1" ""
OpenIB-mlx4_0-1 u1.2 nonthreadsafe default libdaplscm.so.1 dapl.1.2 "mlx4_0 1" ""
"#;
    let r = Registry::new(conf_of(text), vec![Arc::new(Fake("shm", &["shm"]))]);
    let names = |v: Vec<ProviderInfo>| v.into_iter().map(|i| (i.ia_name, i.major)).collect::<Vec<_>>();
    assert_eq!(
        names(r.list(1)),
        [("shm", 1), ("OpenIB-cma", 1), ("OpenIB-mlx4_0-1", 1)].map(|(n, m)| (n.to_string(), m))
    );
    // DAT 2: the built-in shm and the four u2.0 lines
    assert_eq!(names(r.list(2)).len(), 5);
    // what is listed for DAT 1 is what a DAT 1.2 open resolves (here to the absent verbs
    // provider, which the test registry does not have: the cause names it, not the version)
    for i in r.list(1).iter().filter(|i| i.ia_name != "shm") {
        let cause = r.resolve_cause(&i.ia_name, 1, 2, false).unwrap_err();
        assert!(cause.contains("provider verbs not available"), "{cause}");
    }
}

/// Counts WARN events.
struct Count(Arc<AtomicUsize>);
impl tracing::Subscriber for Count {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, e: &tracing::Event<'_>) {
        if *e.metadata().level() == tracing::Level::WARN {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn one_warning_per_bad_line() {
    let n = Arc::new(AtomicUsize::new(0));
    let text = "bad\n\"open\nok u1.2 threadsafe default l d.1.2 a b\nx y z w v u t s r q p\n\u{0}\n";
    let v = tracing::subscriber::with_default(Count(n.clone()), || conf::parse_str(text, "w.conf"));
    assert_eq!(v.len(), 1);
    assert_eq!(n.load(Ordering::SeqCst), 4);
}

#[test]
fn shm_is_builtin_without_any_conf() {
    let r = Registry::with_builtins(StaticConf::empty());
    for ts in [false, true] {
        match r.resolve("shm", 1, 2, ts) {
            Ok(Resolution::Builtin { provider, .. }) => assert_eq!(provider.name(), "shm"),
            other => panic!("{other:?}"),
        }
    }
    assert!(r.list(1).contains(&ProviderInfo { ia_name: "shm".into(), major: 1, minor: 2, thread_safe: false }));
    // a dat.conf entry can name it through the marker too
    let r = Registry::with_builtins(conf_of("myshm u1.2 nonthreadsafe default builtin:shm x.1.0 \"\" \"\"\n"));
    assert!(matches!(r.resolve("myshm", 1, 2, false), Ok(Resolution::Builtin { .. })));
    // verbs is compiled in too (it answers no names on a host without rdma-core)
    assert!(datcore::registry::builtin_by_name("verbs").is_some());
}

/// The lines of one key in file order, as the face tries them: lines that cannot serve at all
/// left out, nothing after a built-in line.
#[test]
fn candidates_in_file_order() {
    let r = Registry::new(
        conf_of(
            r#"
c u2.0 nonthreadsafe default dlopen:libfirst.so.2 x.2.0 "1" ""
c u2.0 nonthreadsafe default /nonexistent/libgone.so x.2.0 "2" ""
c u2.0 threadsafe default libother-key.so x.2.0 "3" ""
c u2.0 nonthreadsafe default libsecond.so.2 x.2.0 "4" ""
c u2.0 nonthreadsafe default builtin:shm x.2.0 "5" ""
c u2.0 nonthreadsafe default libnever.so x.2.0 "6" ""
"#,
        ),
        vec![Arc::new(Fake("shm", &["shm"]))],
    );
    let got: Vec<String> = r
        .candidates("c", 2, 0, false)
        .unwrap()
        .iter()
        .map(|c| match c {
            Resolution::Library(l) => format!("{} {}", l.lib_path, l.ia_params),
            Resolution::Builtin { provider, params, .. } => format!("builtin:{} {params}", provider.name()),
        })
        .collect();
    assert_eq!(got, ["libfirst.so.2 1", "libsecond.so.2 4", "builtin:shm 5"]);
    // resolve gives the first
    assert_eq!(lib(r.resolve("c", 2, 0, false)).lib_path, "libfirst.so.2");
}
