//! What the live shim tests (`priority_shim`, `task_shim`, `gres_shim`)
//! share: whether the anchor cluster can run here, building and installing
//! the shim plugins with the project's own scripts, and running commands.
//!
//! A live test takes [`ClusterLock`] before it checks that no anchor
//! cluster is running: one machine has one anchor cluster (its ports and
//! `/etc/slurm` are fixed), so live tests started at once (several cargo
//! invocations) wait for each other instead of failing.
#![allow(dead_code)] // each test binary uses its own part

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Held while a live test uses the anchor cluster (an exclusive `flock` on
/// a file in the anchor's state directory's parent).
pub struct ClusterLock(#[allow(dead_code)] File);

impl ClusterLock {
    /// Waits for the anchor cluster to be free of other live tests.
    pub fn acquire() -> ClusterLock {
        let path = Path::new(&anchor_state_dir()).with_extension("lock");
        let file = File::create(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // SAFETY: a valid descriptor; LOCK_EX blocks until granted and is
        // released when the file is closed.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        assert_eq!(rc, 0, "flock {}", path.display());
        ClusterLock(file)
    }
}

/// Why a live test cannot run here, if it cannot: not root, no anchor
/// scripts, no Slurm packages, or an anchor cluster already running (the
/// test stops only what it started).
pub fn skip_reason(anchor: &Path) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: the anchor cluster's scripts start Slurm's daemons".into());
    }
    if !anchor.join("setup.sh").is_file() {
        return Some(format!(
            "no anchor cluster scripts in {} (set SLURM_ANCHOR)",
            anchor.display()
        ));
    }
    if !Path::new("/usr/sbin/slurmctld").exists() || !Path::new("/usr/sbin/slurmd").exists() {
        return Some(
            "Slurm's packages are not installed (slurmctld, slurmd, slurmdbd, mariadb-server: \
             .ci/run installs them)"
                .into(),
        );
    }
    let pid_file = Path::new(&anchor_state_dir()).join("run/slurmctld.pid");
    if let Ok(pid) = std::fs::read_to_string(&pid_file) {
        if Path::new(&format!("/proc/{}", pid.trim())).exists() {
            return Some(format!(
                "an anchor cluster is already running ({}): stop it with its teardown.sh",
                pid_file.display()
            ));
        }
    }
    None
}

/// The anchor's scripts: `$SLURM_ANCHOR`, else `../shared/slurm-anchor`.
pub fn anchor_dir() -> PathBuf {
    std::env::var_os("SLURM_ANCHOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(REPO).join("../shared/slurm-anchor"))
}

/// The anchor's state directory (`$SLURM_ANCHOR_DIR`, /tmp/slurm-anchor).
pub fn anchor_state_dir() -> String {
    std::env::var("SLURM_ANCHOR_DIR").unwrap_or_else(|_| "/tmp/slurm-anchor".into())
}

/// The shared library cargo built for this test run (a dev-dependency):
/// beside the test binary (`deps/`) or one level up.
pub fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let deps = exe.parent().expect("the test binary's directory");
    [deps, deps.parent().unwrap_or(deps)]
        .iter()
        .map(|d| d.join("libslurm_wasm.so"))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("no libslurm_wasm.so in {} or its parent", deps.display()))
}

/// Runs `cmd`, panicking with its output when it fails; returns stdout.
pub fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        tail(&stdout, 40),
        tail(&String::from_utf8_lossy(&out.stderr), 40)
    );
    stdout
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Builds the shim plugins `shims` (Makefile names: `priority_wasm`,
/// `task_wasm`, `gres_gpu`, `gres_mps`) with the project's scripts
/// (`get-slurm-source.sh` and the Makefile of `host/slurm-plugins`) and
/// installs them with the library into `plugin_dir`, which then holds only
/// those (a gres shim there replaces Debian's plugin of its name).
pub fn build_and_install(work: &Path, plugin_dir: &Path, shims: &[&str]) {
    let shims = format!("SHIMS={}", shims.join(" "));
    let plugins = Path::new(REPO).join("host/slurm-plugins");
    let source = run(
        Command::new("bash").arg(plugins.join("get-slurm-source.sh")),
        "get-slurm-source.sh",
    );
    let source = source
        .lines()
        .last()
        .expect("the configured source directory");
    let build = work.join("build");
    run(
        Command::new("make")
            .arg("-C")
            .arg(&plugins)
            .arg(format!("SLURM_SRC={source}"))
            .arg(&shims)
            .arg(format!("BUILD={}", build.display())),
        "make",
    );
    run(
        Command::new("make")
            .arg("-C")
            .arg(&plugins)
            .arg("install")
            .arg(&shims)
            .arg(format!("BUILD={}", build.display()))
            .arg(format!("PLUGINDIR={}", plugin_dir.display()))
            .arg(format!("LIBRARY={}", library().display())),
        "make install",
    );
}

/// The lines where `a` (stock Slurm's) and `b` (the shim's) differ, for a
/// failure message.
pub fn differences(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let mut out = String::new();
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i).copied(), b.get(i).copied());
        if x != y {
            out += &format!(
                "line {}:\n  stock: {}\n  wasm:  {}\n",
                i + 1,
                x.unwrap_or("(none)"),
                y.unwrap_or("(none)")
            );
        }
    }
    out
}

/// The bad-input cases of a shim's live test: `fixed` (name, what its
/// line must name) and each host configuration of `configs` (named by its
/// file stem). Each `<dir>/<case>.txt` (the daemon's exit status line, then
/// its log lines) must show that `daemon` refused to start (neither exit 0
/// nor killed by the script's timeout) and hold an `error: <shim>:` line
/// naming what its case names. Returns each case's text, for checks of
/// its own.
pub fn check_refusals(
    dir: &Path,
    daemon: &str,
    shim: &str,
    fixed: &[(&str, &str)],
    configs: &[(PathBuf, &str)],
) -> Vec<(String, String)> {
    let cases = fixed.iter().map(|(n, w)| (n.to_string(), *w)).chain(
        configs
            .iter()
            .map(|(path, w)| (path.file_stem().unwrap().to_string_lossy().into_owned(), *w)),
    );
    let mut texts = Vec::new();
    for (case, names) in cases {
        let text = read(&dir.join(format!("{case}.txt")));
        assert!(
            !text.starts_with("exit=0\n") && !text.starts_with("exit=124\n"),
            "{case}: {daemon} did not refuse to start:\n{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.contains(&format!("error: {shim}:")) && l.contains(names)),
            "{case}: no {shim} error line naming `{names}`:\n{text}"
        );
        texts.push((case, text));
    }
    texts
}
