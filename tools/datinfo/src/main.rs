//! `datinfo`: which DAT IA names open on this host, and exactly why the others do not.
//!
//! ```text
//! datinfo [--json]            every IA name a consumer can ask for, probed by opening it
//! datinfo [--json] -v IA      opens IA and prints its provider and device attributes
//! datinfo [--json] --conf     the dat.conf in effect, line by line
//! ```
//!
//! It uses the core's registry and providers directly (the same resolution and open path as
//! `dat_ia_open` in libdat.so.1). Exit status: 0 when at least one IA (in `--conf` mode: one
//! dat.conf line; with `-v`: that IA) opened, 1 when none did, 2 on a usage error.
#![deny(unsafe_op_in_unsafe_fn)]

mod capture;
mod conf_lines;
mod list;
mod output;
mod probe;
mod verbose;

use std::process::ExitCode;

const USAGE: &str = "\
usage: datinfo [--json]            list every DAT IA name and whether it opens (and why not)
       datinfo [--json] -v IA      open IA and print its provider and device attributes
       datinfo [--json] --conf     explain the dat.conf in effect, line by line
       datinfo --help | --version

The dat.conf in effect is $DAT_OVERRIDE if set, else /etc/dat.conf, else /etc/rdma/dat.conf.
Names are probed as a DAT 1.2 consumer of libdat.so.1 asks for them (dat_ia_open), by opening
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
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut mode = Mode::List;
    let mut json = false;
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(None);
            }
            "-V" | "--version" => {
                println!("datinfo {} (libdat DAT 1.2 face, datcore)", env!("CARGO_PKG_VERSION"));
                return Ok(None);
            }
            "--json" => json = true,
            "--conf" => mode = Mode::Conf,
            "-v" | "--verbose" => match args.next() {
                Some(ia) if !ia.starts_with('-') => mode = Mode::Verbose(ia),
                _ => return Err(format!("{a} needs an IA name")),
            },
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(Some(Args { mode, json }))
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
            let (rows, notes) = list::gather(reg);
            if args.json {
                println!("{}", list::json(reg, &rows, &notes));
            } else {
                print!("{}", list::text(reg, &rows, &notes));
            }
            exit(list::usable_count(&rows) > 0)
        }
        Mode::Verbose(name) => {
            let report = verbose::probe(reg, &name);
            if args.json {
                println!("{}", verbose::json(&report));
            } else {
                print!("{}", verbose::text(&report));
            }
            exit(report.probe.state == probe::State::Usable)
        }
        Mode::Conf => match conf_lines::gather(reg) {
            Ok(lines) => {
                if args.json {
                    println!("{}", conf_lines::json(reg, &lines));
                } else {
                    print!("{}", conf_lines::text(reg, &lines));
                }
                exit(conf_lines::usable_count(&lines) > 0)
            }
            Err(why) => {
                if args.json {
                    println!("{}", conf_lines::json(reg, &[]));
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
