//! `include/slurm_wasm.h` is generated from this crate's source by
//! cbindgen; these tests keep the checked-in copy current.

use std::path::{Path, PathBuf};

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn header_path() -> PathBuf {
    crate_dir().join("include/slurm_wasm.h")
}

/// The header as cbindgen generates it now.
fn generate() -> String {
    let config = cbindgen::Config::from_file(crate_dir().join("cbindgen.toml"))
        .unwrap_or_else(|e| panic!("cbindgen.toml: {e}"));
    let bindings = cbindgen::Builder::new()
        .with_crate(crate_dir())
        .with_config(config)
        .generate()
        .unwrap_or_else(|e| panic!("generating the C header: {e}"));
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("cbindgen writes UTF-8")
}

#[test]
fn header_is_current() {
    let checked_in = std::fs::read_to_string(header_path()).unwrap_or_default();
    assert!(
        generate() == checked_in,
        "{} is stale (or missing): the crate's C API changed since it was generated; \
         run `cargo test -p slurm-wasm-capi --test all -- --ignored regenerate` and commit it",
        header_path().display()
    );
}

/// Rewrites the header (ignored: run it on purpose, as the message of
/// `header_is_current` says).
#[test]
#[ignore = "rewrites include/slurm_wasm.h"]
fn regenerate() {
    std::fs::write(header_path(), generate()).expect("writing include/slurm_wasm.h");
}
