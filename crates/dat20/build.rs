//! Compiles the C shim of the variadic `dat_extension_op` (src/extension_op.c) against our
//! own DAT 2.0 headers (include/dat2).
fn main() {
    println!("cargo:rerun-if-changed=src/extension_op.c");
    println!("cargo:rerun-if-changed=../../include/dat2");
    cc::Build::new()
        .file("src/extension_op.c")
        .include("../../include")
        .flag_if_supported("-Wall")
        .flag_if_supported("-Wextra")
        .warnings_into_errors(true)
        .compile("dat20_extension_op");
}
