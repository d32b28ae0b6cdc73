//! `slurm-wasm simulate --sweep` on a real Slurm 22.05.8 (issue 34): the
//! job-array script it writes, submitted to the anchor cluster, runs one
//! stack per array task, and the last task to finish combines the saved
//! results into the comparison a single `simulate` run prints for the same
//! inputs, text for text.
//!
//! It needs root, the anchor's scripts beside the repository and Slurm's
//! packages installed (`.ci/run` installs them); elsewhere it says why it
//! does not run and passes. About a minute.

use std::path::Path;
use std::process::Command;

use crate::live_slurm::{anchor_dir, differences, read, run, skip_reason, ClusterLock, REPO};

/// Two stacks on 300 synthetic jobs (seed 3), as in the README's example.
const INPUTS: [&str; 8] = [
    "--jobs",
    "300",
    "--seed",
    "3",
    "--policy",
    "select/linear,priority/basic",
    "--policy",
    "select/cons_tres,priority/multifactor",
];

#[test]
fn a_sweep_runs_as_a_job_array_on_slurm_and_combines() {
    let anchor = anchor_dir();
    if let Some(why) = skip_reason(&anchor) {
        eprintln!("skipped: {why}");
        return;
    }
    let _lock = ClusterLock::acquire();
    let work = tempfile::tempdir().expect("a temporary directory");
    let work = work.path();
    let exe = env!("CARGO_BIN_EXE_slurm-wasm");
    // No compiled-component cache outside the test's directory.
    let simulate = || {
        let mut cmd = Command::new(exe);
        cmd.env("SLURM_WASM_CACHE_DIR", work.join("cache"))
            .arg("simulate")
            .args(INPUTS);
        cmd
    };
    let script = work.join("sweep.sh");
    run(simulate().arg("--sweep").arg(&script), "simulate --sweep");
    let expected = run(simulate().arg("--quiet"), "simulate");
    let log = run(
        Command::new("bash")
            .arg(Path::new(REPO).join("tests/anchor/sweep/run.sh"))
            .env("SCRIPT", &script)
            .env("WORK", work)
            .env("SLURM_ANCHOR", &anchor)
            .env("SLURM_WASM_CACHE_DIR", work.join("cache")),
        "tests/anchor/sweep/run.sh",
    );
    // slurmctld ran both array tasks (its log names them `<job>_<task>`).
    for task in ["_0(", "_1("] {
        assert!(log.contains(task), "no array task {task}: {log}");
    }
    for task in 0..2 {
        assert!(
            work.join(format!("sweep-results/{task}.json")).is_file(),
            "task {task} saved no result"
        );
    }
    let combined = read(&work.join("sweep-results/comparison.txt"));
    assert!(
        combined == expected,
        "the combined sweep differs from one run:\n{}",
        differences(&expected, &combined)
    );
}
