//! `export-prototypes CRATE_DIR CONFIG OUT_FILE`: writes the C prototypes of the functions a
//! face crate exports, as cbindgen sees them, to OUT_FILE.
//!
//! It is a checker, not a header generator: `tests/prototypes/check.sh` compiles its output after
//! our hand-written headers under `-Werror`, so a Rust export whose prototype differs from the
//! header (a parameter type, a pointer level, the return type) fails the build. Using cbindgen as
//! a library pinned by Cargo.lock means `make check` needs no globally installed binary.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [crate_dir, config, out] = args.as_slice() else {
        eprintln!("usage: export-prototypes CRATE_DIR CBINDGEN_TOML OUT_FILE");
        return ExitCode::from(2);
    };
    let config = match cbindgen::Config::from_file(config) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("export-prototypes: {config}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cbindgen::generate_with_config(crate_dir, config) {
        Ok(bindings) => {
            bindings.write_to_file(Path::new(out));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("export-prototypes: {crate_dir}: {e}");
            ExitCode::FAILURE
        }
    }
}
