//! `slurm-wasm new <kind> <name> --lang python|c`: each kind's project,
//! made outside this repository, passes its own native test, builds to a
//! component with one command (`make`) and passes `check` unchanged
//! (`make check`). A project `new` writes is the example of its language
//! (the repository keeps no copy of one: it would repeat the templates).
//!
//! The toolchains are found on `PATH` and where `.ci/run` installs them in
//! this checkout (`target/py`: componentize-py in a virtual environment;
//! `target/tools`: wit-bindgen-cli and wasm-tools; clang, lld and wasi-libc
//! from Debian). Where one is missing the test names it and skips that
//! language; under CI (`CI` set) a missing toolchain fails instead, since
//! `.ci/run` installs them.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `PATH` with this checkout's tool directories first.
fn search_path() -> String {
    let mut dirs = vec![
        Path::new(ROOT).join("target/py/bin"),
        Path::new(ROOT).join("target/tools/bin"),
    ];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap().into_string().unwrap()
}

/// Runs `program args` in `dir` with [`search_path`]; (success, stdout +
/// stderr). A program that does not start counts as a failure.
fn run(dir: &Path, program: &str, args: &[&str]) -> (bool, String) {
    match Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("PATH", search_path())
        .output()
    {
        Ok(out) => (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ),
        Err(e) => (false, format!("{program}: {e}")),
    }
}

/// What a language's build needs that this machine lacks (empty: all
/// there). Each tool is run, not just looked up: clang must build a
/// wasm32-wasi reactor, Python must be 3.11 or later (the bindings
/// componentize-py generates use `typing.Self`).
fn missing(lang: &str, scratch: &Path) -> Vec<String> {
    let probes: Vec<(&str, Vec<&str>, &str)> = match lang {
        "python" => vec![
            (
                "componentize-py",
                vec!["--version"],
                "componentize-py (pip install componentize-py==0.25.1)",
            ),
            (
                "python3",
                vec!["-c", "import sys; sys.exit(sys.version_info < (3, 11))"],
                "python3 3.11 or later",
            ),
        ],
        _ => vec![
            (
                "wit-bindgen",
                vec!["--version"],
                "wit-bindgen (cargo install --locked wit-bindgen-cli@0.61.1)",
            ),
            (
                "wasm-tools",
                vec!["--version"],
                "wasm-tools (cargo install --locked wasm-tools@1.258.0)",
            ),
            ("cc", vec!["--version"], "cc"),
        ],
    };
    let probes = probes
        .into_iter()
        .chain([("make", vec!["--version"], "make")]);
    let mut lacking: Vec<String> = probes
        .into_iter()
        .filter(|(program, args, _)| !run(scratch, program, args).0)
        .map(|(_, _, what)| what.to_string())
        .collect();
    if lang == "c" {
        let source = scratch.join("probe.c");
        std::fs::write(&source, "int probe(void) { return 1; }\n").unwrap();
        let args = [
            "--target=wasm32-wasi",
            "-mexec-model=reactor",
            "-O2",
            "-o",
            "probe.wasm",
            "probe.c",
        ];
        let (ok, out) = run(scratch, "clang", &args);
        if !ok {
            lacking.push(format!(
                "clang for wasm32-wasi (apt-get install clang lld wasi-libc \
                 libclang-rt-14-dev-wasm32): {}",
                out.lines().last().unwrap_or("")
            ));
        }
    }
    lacking
}

/// `new`, `make test`, `make` and `make check` for each kind in `lang`;
/// prints each project's time from `new` to a passing check.
fn new_projects_pass_check(lang: &str) {
    let dir = tempfile::tempdir().unwrap();
    let lacking = missing(lang, dir.path());
    if !lacking.is_empty() {
        let message = format!(
            "new --lang {lang}: not tested, this machine lacks {}",
            lacking.join("; ")
        );
        assert!(
            std::env::var_os("CI").is_none(),
            "{message} (.ci/run installs them)"
        );
        eprintln!("SKIPPED {message}");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_slurm-wasm");
    for (kind, name) in [
        ("priority", "fair_small"),
        ("task", "spread_out"),
        ("gres", "nic"),
        ("select", "first_free"),
    ] {
        let started = Instant::now();
        let project = dir.path().join(format!("{lang}-{kind}"));
        let (ok, out) = run(
            dir.path(),
            bin,
            &[
                "new",
                kind,
                name,
                "--lang",
                lang,
                "--dir",
                project.to_str().unwrap(),
            ],
        );
        assert!(ok, "new {kind} {name} --lang {lang}: {out}");
        let (ok, out) = run(&project, "make", &["test"]);
        assert!(ok, "{lang} {kind}: make test:\n{out}");
        // The templates' tests count what they check (unittest: "Ran 1
        // test ... OK"; C: "N passed, 0 failed").
        assert!(
            out.contains("\nOK") || out.contains(" passed, 0 failed"),
            "{out}"
        );
        let (ok, out) = run(&project, "make", &[]);
        assert!(ok, "{lang} {kind}: make:\n{out}");
        let wasm = project.join(format!("build/{kind}_{name}.wasm"));
        assert!(
            wasm.is_file(),
            "{lang} {kind}: make wrote no {}",
            wasm.display()
        );
        let (ok, out) = run(&project, "make", &["check", &format!("SLURM_WASM={bin}")]);
        assert!(ok, "{lang} {kind}: make check:\n{out}");
        assert!(
            out.contains(&format!("conformance of {kind}/{name}")),
            "{out}"
        );
        assert!(out.contains(" 0 failed"), "{out}");
        eprintln!(
            "new {kind} {name} --lang {lang}: new to a passing check in {:.1} s, component {} bytes",
            started.elapsed().as_secs_f64(),
            std::fs::metadata(&wasm).unwrap().len()
        );
    }
}

#[test]
fn python_projects_build_test_and_pass_check() {
    new_projects_pass_check("python");
}

#[test]
fn c_projects_build_test_and_pass_check() {
    new_projects_pass_check("c");
}
