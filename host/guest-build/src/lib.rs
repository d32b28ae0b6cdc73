//! Build-script helper: compiles guest crates of this workspace to
//! `wasm32-wasip2` components.
//!
//! Runs a nested `cargo rustc --crate-type cdylib --target wasm32-wasip2
//! --release` per guest, in its own target directory
//! (`<workspace>/target/wasm-guests`), the pattern wasmtime uses for its test
//! programs. One invocation per guest keeps cargo's feature unification from
//! mixing the SDK features of different plugin kinds into one component.
//!
//! One package may be listed more than once with different features. Its
//! builds then share one output file (a `cdylib`'s name carries no hash);
//! cargo rebuilds it whenever the feature list changes from the last build,
//! and each component is copied out right after its own build.
//!
//! Failure modes, all fatal to the calling build script with a message:
//! the `wasm32-wasip2` target is missing (the message gives the `rustup`
//! command), or a guest fails to compile (cargo's output is shown).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A guest crate to build and the file name its component gets.
#[derive(Debug, Clone, Copy)]
pub struct Guest<'a> {
    /// Cargo package name, e.g. `priority-basic`.
    pub package: &'a str,
    /// The package's directory, relative to the workspace root.
    pub dir: &'a str,
    /// Cargo features of the package to enable (`--features`); usually none.
    pub features: &'a [&'a str],
    /// Output file name, e.g. `priority_basic.wasm` (Slurm's naming).
    pub file_name: &'a str,
}

/// Builds `guests` for the calling build script and copies each component
/// to `$OUT_DIR/<file_name>`; the guests' `dir`s are relative to the
/// workspace root, the nearest directory above the calling package that
/// holds `Cargo.lock`. Returns the paths, in the order given. Registers
/// `rerun-if-changed` for the contract, the SDK and each guest's directory.
pub fn build(guests: &[Guest<'_>]) -> Vec<PathBuf> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let workspace = manifest
        .ancestors()
        .find(|dir| dir.join("Cargo.lock").is_file())
        .unwrap_or_else(|| panic!("no Cargo.lock above {}", manifest.display()));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    build_in(workspace, &out_dir, guests)
}

fn build_in(workspace: &Path, out_dir: &Path, guests: &[Guest<'_>]) -> Vec<PathBuf> {
    require_target();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = workspace.join("target").join("wasm-guests");
    // `guests/` and `sdk/` as a whole: plugins share crates there
    // (select-common, gres-common; the SDK, its fixtures, srun's encodings)
    // whose changes must rebuild every plugin using them.
    for dir in ["wit", "sdk", "Cargo.lock", "guests"] {
        println!("cargo:rerun-if-changed={}", workspace.join(dir).display());
    }
    let mut outputs = Vec::new();
    for guest in guests {
        let manifest = workspace.join(guest.dir);
        assert!(
            manifest.join("Cargo.toml").is_file(),
            "guest package `{}` not found in {}",
            guest.package,
            manifest.display()
        );
        println!("cargo:rerun-if-changed={}", manifest.display());
        let mut cmd = Command::new(&cargo);
        cmd.current_dir(workspace)
            .args([
                "rustc",
                "--quiet",
                "--lib",
                "--release",
                "--crate-type",
                "cdylib",
            ])
            .args(["--target", "wasm32-wasip2", "-p", guest.package])
            .args(["--features", &guest.features.join(",")])
            .arg("--target-dir")
            .arg(&target_dir);
        // Flags meant for the host build must not leak into the guest build.
        for var in [
            "CARGO_ENCODED_RUSTFLAGS",
            "RUSTFLAGS",
            "CARGO_BUILD_RUSTFLAGS",
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET",
            "RUSTC_WORKSPACE_WRAPPER",
        ] {
            cmd.env_remove(var);
        }
        // Components carry no DWARF (names stay, so traps are readable).
        // One codegen unit and fat LTO: a plugin is small, and inlining
        // across its crates (SDK, shared plugin code) is worth more in wasm,
        // where Cranelift inlines nothing itself.
        cmd.env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1")
            .env("CARGO_PROFILE_RELEASE_LTO", "fat");
        let status = cmd.status().unwrap_or_else(|e| {
            panic!(
                "could not run `{cargo}` to build guest {}: {e}",
                guest.package
            )
        });
        assert!(
            status.success(),
            "building guest `{}` for wasm32-wasip2 failed (see cargo's output above)",
            guest.package
        );
        let built = target_dir
            .join("wasm32-wasip2")
            .join("release")
            .join(format!("{}.wasm", guest.package.replace('-', "_")));
        let dest = out_dir.join(guest.file_name);
        std::fs::copy(&built, &dest)
            .unwrap_or_else(|e| panic!("copying {} to {}: {e}", built.display(), dest.display()));
        outputs.push(dest);
    }
    outputs
}

/// Panics with the exact install command when the target is missing.
fn require_target() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let installed = sysroot
        .map(|root| root.join("lib/rustlib/wasm32-wasip2").is_dir())
        .unwrap_or(false);
    if !installed {
        panic!(
            "\n\nerror: the wasm32-wasip2 Rust target is not installed; the bundled plugins need it.\n\
             run: rustup target add wasm32-wasip2\n\n"
        );
    }
}
