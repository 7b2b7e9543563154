//! Rust mirrors of the DAT 1.2 C types in include/dat.
