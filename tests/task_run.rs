//! `slurm-wasm task run` launches real processes bound by task/affinity on
//! this machine; each task reads its own `Cpus_allowed_list` from /proc and
//! must find the CPUs the plugin chose (issue "task/affinity", Must show).

use std::collections::BTreeMap;
use std::process::Command;

/// Runs `task run` with `args`, each task printing `<rank> <Cpus_allowed_list>`.
/// Returns the exit code, what each task saw, what the CLI reported, and stderr.
fn run(args: &[&str]) -> (i32, BTreeMap<u32, String>, BTreeMap<u32, String>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args(["task", "run", "--json"])
        .args(args)
        .args([
            "--",
            "sh",
            "-c",
            "echo \"$SLURM_PROCID $(grep Cpus_allowed_list /proc/self/status | cut -f2)\"",
        ])
        .output()
        .expect("run slurm-wasm");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let seen = stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(rank, cpus)| (rank.parse().expect("rank"), cpus.trim().to_owned()))
        .collect();
    let chosen = stderr
        .lines()
        .find(|l| l.starts_with('{'))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSON report");
            v["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["task"].as_u64().unwrap() as u32,
                        t["cpus_list"].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (out.status.code().unwrap_or(-1), seen, chosen, stderr)
}

/// This machine's online CPUs, when it is the 1 socket x 2 cores x 1
/// thread shape of the anchor's `hw` partition (Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution` rows then apply).
fn two_cpu_machine() -> bool {
    std::thread::available_parallelism()
        .map(|n| n.get() == 2)
        .unwrap_or(false)
}

#[test]
fn each_task_runs_on_the_cpus_task_affinity_chose() {
    for args in [
        &["-n", "2", "--cpu-bind=cores"][..],
        &["-n", "2"],
        &["-n", "1", "-c", "2"],
        &["-n", "2", "-m", "block:cyclic"],
    ] {
        let (code, seen, chosen, stderr) = run(args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert_eq!(seen.len(), chosen.len(), "{args:?}: {stderr}");
        assert_eq!(
            seen, chosen,
            "{args:?}: each task's /proc view must equal the plugin's choice"
        );
    }
}

#[test]
fn two_tasks_bound_to_cores_get_one_cpu_each() {
    if !two_cpu_machine() {
        eprintln!("skipped: expectations are for a 2-CPU machine (1 socket x 2 cores)");
        return;
    }
    // Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`: -n2 with --cpu-bind=cores on a whole 1x2x1 node: one core each.
    let (code, seen, _, stderr) = run(&["-n", "2", "--cpu-bind=cores"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        seen,
        BTreeMap::from([(0, "0".to_owned()), (1, "1".to_owned())])
    );
    // map_cpu:1,0 puts task 0 on CPU 1 and task 1 on CPU 0 (Slurm 22.05.8 src/plugins/task/affinity/affinity.c `get_cpuset`).
    let (code, seen, _, stderr) = run(&["-n", "2", "--cpu-bind=map_cpu:1,0"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        seen,
        BTreeMap::from([(0, "1".to_owned()), (1, "0".to_owned())])
    );
}

#[test]
fn without_the_cpuset_grant_the_run_is_refused() {
    let (code, seen, _, stderr) = run(&["-n", "2", "--grant", "topology"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(seen.is_empty(), "no task may run unbound: {seen:?}");
    assert!(
        stderr.contains("cpuset") && stderr.contains("not granted"),
        "{stderr}"
    );
}

#[test]
fn without_the_topology_grant_the_plugin_does_not_load() {
    let (code, _, _, stderr) = run(&["-n", "1", "--grant", "none"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("requires capability `topology`"),
        "{stderr}"
    );
}

/// `--exact` gives the step only the cores its tasks need, as slurmctld
/// picks them (step_mgr.c `_pick_step_cores`; the anchor's `hw-exclusive`
/// case in tests/fixtures/anchor/step: a first one-task exact step on an
/// idle 1 x 2 x 1 node gets core 0), and task/affinity binds within them.
#[test]
fn an_exact_step_runs_on_the_cores_slurmctld_gave_it() {
    if !two_cpu_machine() {
        eprintln!("skipped: expectations are for a 2-CPU machine (1 socket x 2 cores)");
        return;
    }
    let (code, seen, chosen, stderr) = run(&["-n", "1", "--exact"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(seen, BTreeMap::from([(0, "0".to_owned())]), "{stderr}");
    assert_eq!(seen, chosen);
}
