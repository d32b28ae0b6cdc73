//! What the C-program tests share: building a C test program against the
//! library of this build with the system `cc`, running it, and comparing
//! what it prints with what the Rust API answers.
// Each test crate that includes this module uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shared library cargo built for this test run: beside the test
/// binary (`deps/`) or one level up.
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe.parent().expect("the test binary's directory");
    let found = [deps, deps.parent().unwrap_or(deps)]
        .into_iter()
        .find(|d| d.join("libslurm_wasm.so").exists())
        .unwrap_or_else(|| panic!("no libslurm_wasm.so in {} or its parent", deps.display()))
        .to_path_buf();
    found
}

fn have_cc() -> bool {
    Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Compiles `tests/capi/<source>` into `dir`; `None` (after saying why)
/// when there is no `cc`.
pub fn build_program(dir: &Path, source: &str) -> Option<PathBuf> {
    if !have_cc() {
        eprintln!("skipped: no system C compiler (`cc`) to build tests/capi/{source}");
        return None;
    }
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = library_dir();
    let exe = dir.join(source.trim_end_matches(".c"));
    let out = Command::new("cc")
        .args([
            "-std=c11",
            "-D_DEFAULT_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pthread",
        ])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/capi").join(source))
        .arg("-L")
        .arg(&lib)
        .arg("-lslurm_wasm")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("running cc");
    assert!(
        out.status.success(),
        "cc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

/// Runs a program built by [`build_program`] with `dir` as its argument
/// and checks that it succeeded, wrote nothing on stderr (everything the
/// library says goes to the log callback) and ended with `done`.
pub fn run_program(exe: &Path, dir: &Path) -> Output {
    // The library of this build: cargo's own LD_LIBRARY_PATH would take
    // precedence over the program's run path and may hold an older copy.
    let run = Command::new(exe)
        .arg(dir)
        .env("LD_LIBRARY_PATH", library_dir())
        .output()
        .expect("running the C test program");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "{} failed ({}):\nstderr:\n{stderr}\nstdout:\n{stdout}",
        exe.display(),
        run.status
    );
    assert_eq!(stderr, "", "the library wrote to stderr");
    let out = Output {
        lines: stdout.lines().map(str::to_owned).collect(),
    };
    assert_eq!(
        out.lines.last().map(String::as_str),
        Some("done"),
        "{stdout}"
    );
    out
}

/// A program's output: lines by key (the first word), in order.
pub struct Output {
    pub lines: Vec<String>,
}

impl Output {
    pub fn with_key(&self, key: &str) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|l| l.split_whitespace().next() == Some(key))
            .map(String::as_str)
            .collect()
    }

    /// The lines whose key starts with `prefix`.
    pub fn with_prefix(&self, prefix: &str) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|l| l.starts_with(prefix))
            .map(String::as_str)
            .collect()
    }

    /// The rest of the single line `key`.
    pub fn one(&self, key: &str) -> &str {
        match self.with_key(key).as_slice() {
            [line] => line[key.len()..].trim_start(),
            other => panic!("expected one `{key}` line, got {other:?}"),
        }
    }
}

/// Do two result lines say the same? Words equal, numbers (also the
/// values of `name=value` words) compared as numbers: C prints doubles
/// with `%.17g`, Rust with `{:?}`; both give the same f64 back.
fn same_line(c: &str, rust: &str) -> bool {
    let number = |w: &str| w.parse::<f64>().ok();
    let words = |l: &str| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let (c, rust) = (words(c), words(rust));
    c.len() == rust.len()
        && c.iter().zip(&rust).all(|(a, b)| {
            if a == b {
                return true;
            }
            let (a, b) = match (a.rsplit_once('='), b.rsplit_once('=')) {
                (Some((ka, va)), Some((kb, vb))) if ka == kb => (va, vb),
                _ => (a.as_str(), b.as_str()),
            };
            matches!((number(a), number(b)), (Some(x), Some(y)) if x == y)
        })
}

/// The C program's lines and the Rust API's say the same, line for line.
pub fn assert_same(c: &[&str], rust: &[String], what: &str) {
    assert!(
        c.len() == rust.len() && c.iter().zip(rust).all(|(a, b)| same_line(a, b)),
        "{what}: the C ABI and the Rust API disagree\nC:    {c:#?}\nRust: {rust:#?}"
    );
}
