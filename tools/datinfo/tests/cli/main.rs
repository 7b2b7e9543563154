//! datinfo run as an administrator runs it: the list, `-v shm`, `--conf` on a dat.conf written
//! here (DAT_OVERRIDE) with u1.2 and u2.0 lines, a malformed line, a missing library, a
//! library without the DAT entry points and a real third-party provider library; `--json` of
//! every mode parsed and checked; exit statuses.

mod json;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A private scratch directory (mode 0700, so the shm provider accepts a rendezvous dir in it).
fn scratch() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d =
        std::env::temp_dir().join(format!("datinfo-test-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    d
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

/// This checkout's face libraries (`make` puts libdat.so.1 and libdat2.so.2 in build/lib), if
/// built: datinfo opens third-party provider libraries through them. None: the lines of such
/// libraries are not checked for "usable" (datinfo would take whatever face library the
/// dynamic linker finds).
fn face_libs() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build/lib");
    let built = ["libdat.so.1", "libdat2.so.2"].iter().all(|l| dir.join(l).exists());
    if !built {
        eprintln!("no build/lib face libraries (run make): third-party provider lines are not checked");
    }
    built.then_some(dir)
}

/// Runs datinfo with `conf` as DAT_OVERRIDE and a private shm rendezvous directory (or
/// `shm_dir` when given), logging off, finding this checkout's face libraries when built.
fn run_with(args: &[&str], conf: &Path, shm_dir: Option<&Path>) -> Out {
    let dir = scratch();
    let shm = shm_dir.map_or_else(|| dir.join("shm"), Path::to_path_buf);
    let mut command = Command::new(env!("CARGO_BIN_EXE_datinfo"));
    if let Some(libs) = face_libs() {
        command.env("LD_LIBRARY_PATH", libs);
    }
    let o = command
        .args(args)
        .env("DAT_OVERRIDE", conf)
        .env("DAT_SHM_DIR", shm)
        .env_remove("DAT_LOG")
        .env_remove("DAT_DBG_TYPE")
        .env_remove("DAPL_DBG_TYPE")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let out = Out {
        code: o.status.code().expect("datinfo was killed by a signal"),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    };
    eprintln!("datinfo {args:?} -> {}\n{}{}", out.code, out.stdout, out.stderr);
    out
}

fn run(args: &[&str], conf: &Path) -> Out {
    run_with(args, conf, None)
}

/// The output line that starts with `prefix` (a table row or a `name:` field).
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line starting {prefix:?}"))
}

/// A real third-party provider library for DAT `major` (tests/c/thirdparty/provider.c), built
/// as `name` with the extra compiler/linker `flags`, or None without a C compiler.
fn thirdparty_provider(dir: &Path, major: u32, name: &str, flags: &[&str]) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/c/thirdparty/provider.c");
    let so = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let ok = Command::new(&cc)
        .args(["-shared", "-fPIC", &format!("-DTP_DAT_MAJOR={major}")])
        .args(flags)
        .arg("-o")
        .arg(&so)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("no working {cc}: the loadable-library line is not checked");
    }
    ok.then_some(so)
}

/// A dat.conf with one line of every kind; returns its path and the provider library, if built.
fn mixed_conf(dir: &Path) -> (PathBuf, Option<PathBuf>) {
    let tp = thirdparty_provider(dir, 1, "libdattp.so", &[]);
    let tp_path = tp.as_ref().map_or("/nonexistent/libdattp.so".into(), |p| p.display().to_string());
    let text = format!(
        "# dat.conf for datinfo's tests\n\
         shmconf u1.2 nonthreadsafe default builtin:shm dapl.1.2 \"\" \"\"\n\
         \n\
         ofa-v2-x u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"ib0 0\" \"\"\n\
         this line is broken\n\
         nolib u1.2 nonthreadsafe default /nonexistent/libdatprov.so.1 x.1.2 \"\" \"\"\n\
         nd u1.2 nonthreadsafe nondefault builtin:shm dapl.1.2 \"\" \"\"\n\
         kd k1.2 nonthreadsafe default builtin:shm dapl.1.2 \"\" \"\"\n\
         shmconf u1.2 nonthreadsafe default builtin:shm dapl.1.2 \"\" \"\"\n\
         nosym u1.2 nonthreadsafe default libc.so.6 x.1.2 \"\" \"\"\n\
         tp u1.2 nonthreadsafe default {tp_path} tp.1.2 \"\" \"\"\n"
    );
    let conf = dir.join("dat.conf");
    std::fs::write(&conf, text).unwrap();
    (conf, tp)
}

#[test]
fn list_shows_usable_names_and_exact_causes() {
    let dir = scratch();
    let (conf, tp) = mixed_conf(&dir);
    let o = run(&[], &conf);
    assert_eq!(o.code, 0);
    assert!(o.stdout.starts_with(&format!("dat.conf: {} (from DAT_OVERRIDE)\n", conf.display())));
    assert!(line(&o.stdout, "IA NAME ").contains("STATUS"));
    for shm_name in ["shm ", "shm0 ", "loopback "] {
        let l = line(&o.stdout, shm_name);
        assert!(l.contains(" built-in ") && l.contains(" 127.0.0.1 ") && l.ends_with(" usable"), "{l}");
    }
    let c = conf.display();
    let l = line(&o.stdout, "shmconf ");
    assert!(l.contains(&format!("{c}:2")) && l.ends_with(" usable"), "{l}");
    let l = line(&o.stdout, "ofa-v2-x ");
    assert!(l.contains("u2.0 nonthreadsafe") && l.contains("unusable: registered for DAT 2.0"), "{l}");
    let l = line(&o.stdout, "nolib ");
    assert!(l.contains("unusable: library cannot be loaded: /nonexistent/libdatprov.so.1"), "{l}");
    assert!(line(&o.stdout, "nd ").contains("unusable: marked nondefault"));
    assert!(line(&o.stdout, "kd ").contains("unusable: a kDAPL entry"));
    assert!(line(&o.stdout, "nosym ").contains("unusable: libc.so.6 has no symbol dat_provider_init"));
    let l = line(&o.stdout, "tp ");
    if tp.is_some() && face_libs().is_some() {
        assert!(l.ends_with(" usable"), "opened through libdat.so.1: {l}");
    }
    // The duplicate of line 2 is not the one used.
    let dup = o.stdout.lines().find(|l| l.starts_with("shmconf ") && l.contains(&format!("{c}:9"))).unwrap();
    assert!(dup.contains("unusable: line 2 has the same name and version and is used instead"), "{dup}");
    let usable = o.stdout.lines().filter(|l| l.ends_with("  usable")).count();
    assert!(o.stdout.contains(&format!("\n{usable} of ")), "summary must count the {usable} usable rows");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn list_json() {
    let dir = scratch();
    let (conf, _) = mixed_conf(&dir);
    let o = run(&["--json"], &conf);
    assert_eq!(o.code, 0);
    let v = json::parse(&o.stdout).unwrap();
    assert_eq!(v.get("api").str(), "1.2");
    assert_eq!(v.get("dat_conf").str(), conf.display().to_string());
    let ias = v.get("ias").arr();
    let by_name = |n: &str| ias.iter().find(|i| i.get("name").str() == n).unwrap_or_else(|| panic!("no IA {n}"));
    let shm = by_name("shm");
    assert!(shm.get("usable").bool());
    assert_eq!(shm.get("state").str(), "usable");
    assert_eq!(shm.get("provider").str(), "shm");
    assert_eq!(shm.get("transport").str(), "shm");
    assert_eq!(shm.get("address").str(), "127.0.0.1");
    assert_eq!(shm.get("cause"), &json::Value::Null);
    let v2 = by_name("ofa-v2-x");
    assert!(!v2.get("usable").bool());
    assert_eq!(v2.get("api").str(), "u2.0 nonthreadsafe");
    assert!(v2.get("cause").str().contains("registered for DAT 2.0"));
    assert!(by_name("nolib").get("cause").str().contains("cannot be loaded"));
    let usable = ias.iter().filter(|i| i.get("usable").bool()).count();
    assert_eq!(v.get("usable").num() as usize, usable);
    assert!(usable >= 4, "shm, shm0, loopback and shmconf open");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn verbose_shm() {
    let dir = scratch();
    let (conf, _) = mixed_conf(&dir);
    let o = run(&["-v", "shm"], &conf);
    assert_eq!(o.code, 0);
    let field = |k: &str| line(&o.stdout, &format!("{k}:"))[k.len() + 1..].trim().to_string();
    assert_eq!(field("ia_name"), "shm");
    assert_eq!(field("source"), "built-in");
    assert_eq!(field("provider"), "shm");
    assert_eq!(field("transport"), "shm");
    assert_eq!(field("ia_address"), "127.0.0.1");
    assert_eq!(field("status"), "usable");
    assert!(field("max_qp").parse::<u32>().unwrap() > 0);
    assert!(field("max_private_data").parse::<u32>().unwrap() >= 64);

    // A dat.conf name for the built-in provider: its line is the source.
    let o = run(&["--json", "-v", "shmconf"], &conf);
    assert_eq!(o.code, 0);
    let v = json::parse(&o.stdout).unwrap();
    assert_eq!(v.get("source").str(), format!("{}:2", conf.display()));
    assert!(v.get("usable").bool());
    assert_eq!(v.get("provider").str(), "shm");
    let attr = v.get("attributes");
    assert!(attr.get("max_qp").num() > 0.0);
    assert_eq!(attr.get("adapter_name").str(), "shmconf");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn verbose_failures_say_why() {
    let dir = scratch();
    let (conf, _) = mixed_conf(&dir);
    let o = run(&["-v", "no-such-ia"], &conf);
    assert_eq!(o.code, 1);
    assert!(line(&o.stdout, "status:").contains("unusable: IA 'no-such-ia' is not registered"));
    let o = run(&["--json", "-v", "ofa-v2-x"], &conf);
    assert_eq!(o.code, 1);
    let v = json::parse(&o.stdout).unwrap();
    assert!(!v.get("usable").bool());
    assert!(v.get("cause").str().contains("registered for DAT 2.0"), "{v:?}");
    assert_eq!(v.get("attributes"), &json::Value::Null);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn conf_line_by_line() {
    let dir = scratch();
    let (conf, tp) = mixed_conf(&dir);
    let c = conf.display().to_string();
    let o = run(&["--conf"], &conf);
    assert_eq!(o.code, 0);
    let at = |n: usize| line(&o.stdout, &format!("{c}:{n} ")).to_string();
    assert!(!o.stdout.contains(&format!("{c}:1 ")), "the comment line is not listed");
    assert!(!o.stdout.contains(&format!("{c}:3 ")), "the blank line is not listed");
    assert!(at(2).contains("built-in provider shm") && at(2).ends_with(" usable"), "{}", at(2));
    assert!(at(4).contains("built-in provider verbs with ia_params \"ib0 0\""));
    assert!(at(4).contains("unusable: registered for DAT 2.0"));
    assert!(at(5).contains("malformed, skipped: 4 fields, expected 8"), "{}", at(5));
    assert!(at(6).contains("third-party library") && at(6).contains("cannot be loaded"));
    assert!(at(7).contains("marked nondefault"));
    assert!(at(8).contains("kDAPL"));
    assert!(at(9).contains("line 2 has the same name and version and is used instead"));
    assert!(at(10).contains("has no symbol dat_provider_init"));
    let usable_lines = if tp.is_some() && face_libs().is_some() {
        assert!(at(11).ends_with(" usable"), "{}", at(11));
        2
    } else {
        1
    };
    assert!(o.stdout.contains(&format!("\n{usable_lines} of 9 lines give a usable IA\n")));

    let o = run(&["--conf", "--json"], &conf);
    assert_eq!(o.code, 0);
    let v = json::parse(&o.stdout).unwrap();
    let lines = v.get("lines").arr();
    let numbers: Vec<f64> = lines.iter().map(|l| l.get("line").num()).collect();
    assert_eq!(numbers, [2.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]);
    assert_eq!(lines[0].get("ia_name").str(), "shmconf");
    assert!(lines[0].get("usable").bool());
    assert_eq!(lines[2].get("state").str(), "malformed");
    assert_eq!(lines[2].get("ia_name"), &json::Value::Null);
    assert_eq!(lines[1].get("lib_path").str(), "libdaplofa.so.2");
    assert_eq!(lines[1].get("ia_params").str(), "ib0 0");
    assert_eq!(v.get("usable").num(), usable_lines as f64);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--dat2`: what a DAT 2.0 consumer of libdat2.so.2 sees. Its names are the u2.0 lines (an OFED
/// provider library resolves to the built-in verbs provider, a `builtin:` marker to that
/// provider) and the built-in names when the core serves DAT 2.0; u1.2 lines are the other face's.
#[test]
fn dat2_view() {
    let dir = scratch();
    let (conf, _) = mixed_conf(&dir);
    let mut text = std::fs::read_to_string(&conf).unwrap();
    text.push_str("shm2 u2.0 nonthreadsafe default builtin:shm dapl.2.0 \"\" \"\"\n");
    std::fs::write(&conf, text).unwrap();
    let c = conf.display().to_string();
    let builtin_serves_2_0 = datcore::registry::builtin::BUILTIN_API.contains(&(2, 0));

    let o = run(&["--dat2"], &conf);
    assert_eq!(o.code, 0);
    assert!(line(&o.stdout, "face: ").ends_with("DAT 2.0 (libdat2.so.2)"));
    let l = line(&o.stdout, "shm2 ");
    assert!(l.contains("u2.0 nonthreadsafe") && l.contains(&format!("{c}:12")) && l.ends_with(" usable"), "{l}");
    let l = line(&o.stdout, "shmconf ");
    assert!(l.contains("unusable: registered for DAT 1.2; libdat2.so.2 is the DAT 2.0 face"), "{l}");
    let l = line(&o.stdout, "ofa-v2-x ");
    assert!(l.contains(" verbs ") && !l.contains("registered for DAT"), "the u2.0 line resolves to verbs: {l}");
    let l = line(&o.stdout, "shm ");
    if builtin_serves_2_0 {
        assert!(l.contains(" 2.0 ") && l.ends_with(" usable"), "{l}");
    } else {
        assert!(l.contains("registered for DAT 1.2 (built-in shm provider), asked 2.0"), "{l}");
    }

    let o = run(&["--dat2", "--conf", "--json"], &conf);
    assert_eq!(o.code, 0);
    let v = json::parse(&o.stdout).unwrap();
    assert_eq!(v.get("api").str(), "2.0");
    assert_eq!(v.get("library").str(), "libdat2.so.2");
    let lines = v.get("lines").arr();
    let shm2 = lines.iter().find(|l| l.get("line").num() == 12.0).unwrap();
    assert!(shm2.get("usable").bool());
    assert_eq!(v.get("usable").num(), 1.0, "only the u2.0 shm line opens for DAT 2.0");

    let o = run(&["--dat2", "--json", "-v", "shm2"], &conf);
    assert_eq!(o.code, 0);
    let v = json::parse(&o.stdout).unwrap();
    assert_eq!(v.get("api").str(), "u2.0 nonthreadsafe");
    assert_eq!(v.get("provider").str(), "shm");
    // the same line is the other face's business in the default view
    let o = run(&["-v", "shm2"], &conf);
    assert_eq!(o.code, 1);
    assert!(line(&o.stdout, "status:").contains("registered for DAT 2.0"), "{}", o.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A third-party DAT 2.0 provider library behind a `dlopen:` line (as OFED's libdaplofa.so.2
/// is, which binds `dats_get_ia_handle` at load time): `--dat2` loads it beside libdat2.so.2
/// and opens, queries and closes its IA through that face.
#[test]
fn dat2_thirdparty_provider_opens_through_the_face() {
    let dir = scratch();
    let (Some(tp2), Some(_)) = (thirdparty_provider(&dir, 2, "libdattp2.so", &[]), face_libs()) else { return };
    // -z now, as OFED's provider libraries are linked: every libdat reference binds at load
    let now = thirdparty_provider(&dir, 2, "libdattp2-now.so", &["-Wl,-z,now"]).expect("built once already");
    let conf = dir.join("dat.conf");
    std::fs::write(
        &conf,
        format!(
            "tp2 u2.0 nonthreadsafe default dlopen:{} tp.2.0 \"\" \"\"\n\
             tp2now u2.0 nonthreadsafe default dlopen:{} tp.2.0 \"\" \"\"\n",
            tp2.display(),
            now.display()
        ),
    )
    .unwrap();
    let o = run(&["--dat2"], &conf);
    assert_eq!(o.code, 0);
    for name in ["tp2 ", "tp2now "] {
        let l = line(&o.stdout, name);
        assert!(l.ends_with(" usable"), "{l}");
    }
    let o = run(&["--dat2", "-v", "tp2now"], &conf);
    assert_eq!(o.code, 0);
    assert!(line(&o.stdout, "status:").contains("usable"), "{}", o.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn exit_status_when_nothing_opens() {
    let dir = scratch();
    let conf = dir.join("bad.conf");
    std::fs::write(&conf, "v2 u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 \"ib0 0\" \"\"\nbroken\n").unwrap();
    let o = run(&["--conf"], &conf);
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains("\n0 of 2 lines give a usable IA\n"));

    // shm cannot open without a private rendezvous directory: the cause is the core's.
    let bad_shm = Path::new("/proc/datinfo-no-such-dir/shm");
    let o = run_with(&["-v", "shm"], &conf, Some(bad_shm));
    assert_eq!(o.code, 1);
    assert!(line(&o.stdout, "status:").contains("shm: no private rendezvous directory"), "{}", o.stdout);
    let o = run_with(&["--json"], &conf, Some(bad_shm));
    let v = json::parse(&o.stdout).unwrap();
    let usable = v.get("usable").num();
    assert_eq!(o.code, if usable > 0.0 { 0 } else { 1 }, "exit status follows the usable count");
    let shm = v.get("ias").arr().iter().find(|i| i.get("name").str() == "shm").unwrap();
    assert!(!shm.get("usable").bool());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn no_dat_conf() {
    let missing = Path::new("/nonexistent/dat.conf");
    let o = run(&[], missing);
    assert!(o.stdout.starts_with("dat.conf: none: DAT_OVERRIDE=/nonexistent/dat.conf cannot be read ("));
    assert!(line(&o.stdout, "shm ").ends_with(" usable"));
    assert_eq!(o.code, 0);
    let o = run(&["--conf"], missing);
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains("no dat.conf is used at all"));
    let o = run(&["--conf", "--json"], missing);
    assert_eq!(o.code, 1);
    let v = json::parse(&o.stdout).unwrap();
    assert_eq!(v.get("dat_conf"), &json::Value::Null);
    assert!(v.get("lines").arr().is_empty());
}

#[test]
fn usage() {
    let conf = Path::new("/nonexistent/dat.conf");
    let o = run(&["--help"], conf);
    assert_eq!(o.code, 0);
    assert!(o.stdout.starts_with("usage: datinfo"));
    let o = run(&["--version"], conf);
    assert_eq!(o.code, 0);
    assert!(o.stdout.starts_with(&format!("datinfo {}", env!("CARGO_PKG_VERSION"))));
    for bad in [&["--bogus"][..], &["-v"], &["-v", "--json"]] {
        let o = run(bad, conf);
        assert_eq!(o.code, 2, "{bad:?}");
        assert!(o.stderr.starts_with("datinfo: ") && o.stderr.contains("usage: datinfo"));
        assert!(o.stdout.is_empty());
    }
}
