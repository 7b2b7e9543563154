//! `datinfo`: which DAT IA names open on this host, and exactly why the others do not.
//!
//! ```text
//! datinfo [--json] [--dat2]            every IA name a consumer can ask for, probed by opening it
//! datinfo [--json] [--dat2] -v IA      opens IA and prints its provider and device attributes
//! datinfo [--json] [--dat2] --conf     the dat.conf in effect, line by line
//! ```
//!
//! It uses the core's registry and providers directly (the same resolution and open path as
//! `dat_ia_open` in libdat.so.1, or with `--dat2` in libdat2.so.2). Exit status: 0 when at least one IA (in `--conf` mode: one
//! dat.conf line; with `-v`: that IA) opened, 1 when none did, 2 on a usage error.
#![deny(unsafe_op_in_unsafe_fn)]

mod capture;
mod conf_lines;
mod face_library;
mod list;
mod output;
mod probe;
mod verbose;

use probe::Face;
use std::process::ExitCode;

const USAGE: &str = "\
usage: datinfo [--json] [--dat2]            list every DAT IA name and whether it opens (and why not)
       datinfo [--json] [--dat2] -v IA      open IA and print its provider and device attributes
       datinfo [--json] [--dat2] --conf     explain the dat.conf in effect, line by line
       datinfo --help | --version

The dat.conf in effect is $DAT_OVERRIDE if set, else /etc/dat.conf, else /etc/rdma/dat.conf.
Names are probed as a DAT 1.2 consumer of libdat.so.1 asks for them (dat_ia_open), or with
--dat2 as a DAT 2.0 consumer of libdat2.so.2 does (u2.0 dat.conf lines), by opening
and closing them. DAT_LOG=warn|debug|... also prints the core's log on stderr.
Exit status: 0 when at least one IA (--conf: one dat.conf line; -v: that IA) is usable,
1 when none is, 2 on a usage error.
";

enum Mode {
    List,
    Verbose(String),
    Conf,
}

struct Args {
    mode: Mode,
    json: bool,
    face: Face,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut mode = Mode::List;
    let mut json = false;
    let mut face = Face::DAT12;
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(None);
            }
            "-V" | "--version" => {
                println!("datinfo {} (libdat DAT 1.2 and 2.0 faces, datcore)", env!("CARGO_PKG_VERSION"));
                return Ok(None);
            }
            "--json" => json = true,
            "--dat2" => face = Face::DAT20,
            "--conf" => mode = Mode::Conf,
            "-v" | "--verbose" => match args.next() {
                Some(ia) if !ia.starts_with('-') => mode = Mode::Verbose(ia),
                _ => return Err(format!("{a} needs an IA name")),
            },
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(Some(Args { mode, json, face }))
}

fn exit(usable: bool) -> ExitCode {
    if usable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn run(args: Args) -> ExitCode {
    capture::install();
    let reg = datcore::registry::global();
    match args.mode {
        Mode::List => {
            let (rows, notes) = list::gather(reg, args.face);
            if args.json {
                println!("{}", list::json(reg, args.face, &rows, &notes));
            } else {
                print!("{}", list::text(reg, args.face, &rows, &notes));
            }
            exit(list::usable_count(&rows) > 0)
        }
        Mode::Verbose(name) => {
            let report = verbose::probe(reg, args.face, &name);
            if args.json {
                println!("{}", verbose::json(&report));
            } else {
                print!("{}", verbose::text(&report));
            }
            exit(report.probe.state == probe::State::Usable)
        }
        Mode::Conf => match conf_lines::gather(reg, args.face) {
            Ok(lines) => {
                if args.json {
                    println!("{}", conf_lines::json(reg, args.face, &lines));
                } else {
                    print!("{}", conf_lines::text(reg, args.face, &lines));
                }
                exit(conf_lines::usable_count(&lines) > 0)
            }
            Err(why) => {
                if args.json {
                    println!("{}", conf_lines::json(reg, args.face, &[]));
                } else {
                    println!("dat.conf: {why}");
                }
                exit(false)
            }
        },
    }
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1)) {
        Ok(Some(args)) => run(args),
        Ok(None) => ExitCode::SUCCESS,
        Err(why) => {
            eprint!("datinfo: {why}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
