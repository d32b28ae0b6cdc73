//! The native builds of the bundled plugins (`simulate --native`) against
//! their components: on the embedded default cluster and a seeded synthetic
//! workload, both give the same schedule job by job, which is the evidence
//! that the wasm/native ratio in BENCHMARKS.md compares the same code.

use std::path::Path;
use std::process::Command;

use slurm::setup::records::Cluster;
use slurm::slurm_conf;
use slurm_wasm_host::types::Job;
use slurm_wasm_sim::compare::run_one;
use slurm_wasm_sim::engine::accounting::Accounts;
use slurm_wasm_sim::engine::policy::LoadedStack;
use slurm_wasm_sim::engine::{Input, PolicySpec, SchedConfig, SimResult};
use slurm_wasm_sim::hazards::ReplayOptions;
use slurm_wasm_sim::synthetic::{generate, SyntheticOptions};
use slurm_wasm_sim::workload::Workload;

/// The cluster `slurm-wasm simulate` uses by default (64 nodes of 32
/// cores, cons_tres with CR_Core_Memory, simulated accounting, multifactor
/// on Fair Tree fair-share, age and job size, sched/backfill).
const DEFAULT_CLUSTER: &str = include_str!("../host/cli/simulate-default.conf");

/// The stacks with a native build, skipped (and said so) when this build
/// does not bundle their components.
fn stacks() -> Vec<&'static str> {
    [
        "select/cons_tres,priority/multifactor",
        "select/linear,priority/basic",
    ]
    .into_iter()
    .filter(|stack| {
        let present = stack
            .split(',')
            .all(|p| slurm_wasm_bundled::find(p).is_some());
        if !present {
            eprintln!("skipped for {stack}: not bundled in this build");
        }
        present
    })
    .collect()
}

fn cluster(text: &str) -> Cluster {
    let conf = slurm_conf::parse_str(text, Path::new("simulate-default.conf")).unwrap();
    Cluster::from_slurm_conf(&conf).unwrap()
}

/// The CLI's default synthetic workload shape (Lublin-Feitelson, sized to
/// the cluster's CPUs, default replay choices), `jobs` jobs, seed 1.
fn workload(cluster: &Cluster, jobs: usize) -> Workload {
    let cpus: u32 = cluster.nodes.iter().map(|n| u32::from(n.cpus)).sum();
    let options = SyntheticOptions {
        seed: 1,
        jobs,
        max_procs: cpus,
        ..SyntheticOptions::default()
    };
    generate(&options, &ReplayOptions::default())
}

fn run(cluster: &Cluster, workload: &Workload, spec: &PolicySpec) -> SimResult {
    let input = Input {
        cluster,
        workload,
        config: SchedConfig::from_cluster(cluster).unwrap(),
        default_partition: 0,
    };
    run_one(&input, spec, 1, None).unwrap()
}

/// Runs `stack` as components and natively and requires the same
/// schedule: every job's start, end, nodes, CPUs, node list, backfilled
/// and killed flags and rejection reason, and the same counters (so the
/// same number of job-test calls in each mode).
fn same_schedule(cluster: &Cluster, workload: &Workload, stack: &str) -> SimResult {
    let spec = PolicySpec::parse(stack).unwrap();
    let wasm = run(cluster, workload, &spec);
    let native = run(cluster, workload, &spec.clone().native());
    assert_eq!(wasm.outcomes.len(), workload.jobs.len(), "{stack}");
    for (w, n) in wasm.outcomes.iter().zip(&native.outcomes) {
        assert_eq!(w, n, "{stack}: job {} differs (wasm, native)", w.id);
    }
    assert_eq!(wasm.counters, native.counters, "{stack}");
    // Fuel is counted for components only.
    assert!(wasm.fuel.is_some() && native.fuel.is_none(), "{stack}");
    wasm
}

#[test]
fn native_builds_schedule_the_default_workload_as_the_components_do() {
    let c = cluster(DEFAULT_CLUSTER);
    let w = workload(&c, 300);
    for stack in stacks() {
        let r = same_schedule(&c, &w, stack);
        // The comparison covers every call the engine makes: the main
        // pass, backfill (run-now on partial candidates and will-run),
        // priority recalculations and test-only at submission.
        let started = r.outcomes.iter().filter(|o| o.start.is_some()).count();
        assert!(started > 250, "{stack}: {started} of 300 started");
        assert!(r.outcomes.iter().any(|o| o.backfilled), "{stack}");
        assert!(r.counters.will_run_tests > 0, "{stack}");
        assert!(r.counters.priority_recalcs > 0, "{stack}");
        assert!(r.counters.test_only_tests > 0, "{stack}");
    }
}

#[test]
fn native_multifactor_follows_the_virtual_clock() {
    // With accounting, multifactor's age and fair-share factors count:
    // priorities then depend on the plugin's clock (age since submission,
    // usage decay at job end and at each recalculation), which natively is
    // the SDK's mock host set from the stack's virtual clock. The default
    // cluster has Fair Tree; this one classic fair-share (NO_FAIR_TREE),
    // short decay and age horizons so both move within the workload.
    if !stacks().contains(&"select/cons_tres,priority/multifactor") {
        return;
    }
    let text = DEFAULT_CLUSTER
        .replace("PriorityDecayHalfLife=7-0", "PriorityDecayHalfLife=0-1")
        .replace("PriorityMaxAge=7-0", "PriorityMaxAge=0-2")
        .replace(
            "PriorityWeightAge=1000",
            "PriorityWeightAge=10000\nPriorityFlags=NO_FAIR_TREE",
        );
    assert_ne!(text, DEFAULT_CLUSTER);
    let c = cluster(&text);
    let w = workload(&c, 200);
    let r = same_schedule(&c, &w, "select/cons_tres,priority/multifactor");
    assert!(r.counters.priority_recalcs > 0);
}

#[test]
fn simulated_accounting_changes_the_multifactor_schedule() {
    // The default cluster's fair-share and age weights count only with
    // accounting (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`: without slurmdbd both weights are 0): the same
    // workload without AccountingStorageType is ordered on job size alone,
    // and some jobs start at other times. Both are the same natively.
    if !stacks().contains(&"select/cons_tres,priority/multifactor") {
        return;
    }
    let stack = "select/cons_tres,priority/multifactor";
    let with = cluster(DEFAULT_CLUSTER);
    let without = cluster(
        &DEFAULT_CLUSTER.replace("AccountingStorageType=accounting_storage/slurmdbd\n", ""),
    );
    let w = workload(&with, 300);
    // The synthetic workload has several users in several groups, so the
    // derived tree has several accounts to share the machine between.
    let users: std::collections::BTreeSet<u32> = w.jobs.iter().map(|j| j.user).collect();
    let groups: std::collections::BTreeSet<u32> = w.jobs.iter().map(|j| j.group).collect();
    assert!(
        users.len() > 10 && groups.len() == 6,
        "{users:?} {groups:?}"
    );
    let a = same_schedule(&with, &w, stack);
    let b = same_schedule(&without, &w, stack);
    let moved = a
        .outcomes
        .iter()
        .zip(&b.outcomes)
        .filter(|(x, y)| x.start != y.start)
        .count();
    assert!(moved > 0, "accounting changed no start time");
}

#[test]
fn native_priorities_match_the_components_call_by_call() {
    // The priorities themselves (a schedule does not show them: FCFS
    // order is the same whatever the values): `set` with slurmctld's
    // `lowest_prio` bookkeeping (Slurm 22.05.8 src/slurmctld/job_mgr.c `set_job_prio`: priority/basic counts down from
    // it, a nice value shifts it, a direct priority is kept and leaves it
    // alone), then a recalculation an hour later and the jobs' ends.
    let c = cluster(DEFAULT_CLUSTER);
    let start = 1_700_000_000;
    let jobs: Vec<Job> = (1..=6)
        .map(|id| {
            let mut job = slurm_wasm_host::fixtures::job(id);
            job.partitions = vec![0];
            job.time_limit = Some(60);
            job.details.min_cpus = 16 * id;
            job.details.submit_time = start;
            job.details.nice = [0, 100, -50, 0, 7, 0][id as usize - 1];
            if id == 4 {
                job.direct_set_priority = true;
                job.priority = 777;
            }
            job
        })
        .collect();
    for stack in stacks() {
        let spec = PolicySpec::parse(stack).unwrap();
        let mut answers = Vec::new();
        for spec in [spec.clone(), spec.native()] {
            let mut s = LoadedStack::open(&spec, &c, start, 1).unwrap();
            let set: Vec<u32> = jobs
                .iter()
                .map(|j| s.prioritizer.submit(j).unwrap())
                .collect();
            s.clock.set(start + 3600);
            let ids: Vec<u32> = jobs.iter().map(|j| j.job_id).collect();
            let recalculated = s.prioritizer.recalculate(&[], &ids).unwrap();
            for j in &jobs {
                s.prioritizer.end(j).unwrap();
            }
            answers.push((set, recalculated));
        }
        assert_eq!(answers[0], answers[1], "{stack} (wasm, native)");
        // The direct priority is kept by both plugins.
        assert_eq!(answers[0].0[3], 777, "{stack}");
    }
}

#[test]
fn native_fair_share_matches_the_components_call_by_call() {
    // The simulated association tree through both builds: the same tree
    // (root, accounts group10 and group20, users 1001 and 1002 in group10,
    // 2001 in group20), then `set` for pending jobs of each user and three
    // recalculations while a 64-CPU job of user 1001 runs, under Fair Tree
    // (the default cluster) and classic fair-share (NO_FAIR_TREE). The
    // priorities are compared call by call, and fair-share must separate
    // the users (user 1001 has all the usage).
    if !stacks().contains(&"select/cons_tres,priority/multifactor") {
        return;
    }
    let trace = |id: u32, user: u32, group: u32| slurm_wasm_sim::workload::TraceJob {
        id,
        run_time: 600,
        time_limit: Some(3600),
        nodes: Some(2),
        cpus: 64,
        user,
        group,
        ..Default::default()
    };
    let traces = vec![
        trace(1, 1001, 10),
        trace(2, 1001, 10),
        trace(3, 1002, 10),
        trace(4, 2001, 20),
    ];
    let accounts = Accounts::derive(&Workload {
        jobs: traces.clone(),
        ..Workload::default()
    });
    let start = 1_700_000_000;
    let jobs: Vec<Job> = traces
        .iter()
        .map(|t| {
            let mut job = slurm_wasm_host::fixtures::job(t.id);
            job.partitions = vec![0];
            job.time_limit = Some(60);
            job.user_id = t.user;
            let (assoc, account) = accounts.of(t).unwrap();
            job.assoc_id = assoc;
            job.account = Some(account);
            job.details.min_cpus = t.cpus;
            job.details.submit_time = start;
            job.details.accrue_time = start;
            job
        })
        .collect();
    let mut running = jobs[0].clone();
    running.state = slurm_wasm_host::types::JobState::Running;
    running.start_time = start;
    running.end_time = start + 3600;
    running.tres_allocated = vec![slurm_wasm_host::types::TresAmount {
        name: "cpu".into(),
        count: 64,
    }];
    let classic = DEFAULT_CLUSTER.replace(
        "PriorityWeightAge=1000",
        "PriorityWeightAge=1000\nPriorityFlags=NO_FAIR_TREE",
    );
    for text in [DEFAULT_CLUSTER, classic.as_str()] {
        let c = cluster(text);
        let spec = PolicySpec::parse("select/cons_tres,priority/multifactor").unwrap();
        let mut answers = Vec::new();
        for spec in [spec.clone(), spec.native()] {
            let mut s = LoadedStack::open(&spec, &c, start, 1).unwrap();
            s.prioritizer.associations(&accounts.updates()).unwrap();
            let set: Vec<u32> = jobs[1..]
                .iter()
                .map(|j| s.prioritizer.submit(j).unwrap())
                .collect();
            let mut recalculated = Vec::new();
            for minutes in [5, 10, 15] {
                s.clock.set(start + minutes * 60);
                recalculated.push(
                    s.prioritizer
                        .recalculate(std::slice::from_ref(&running), &[2, 3, 4])
                        .unwrap(),
                );
            }
            s.prioritizer.end(&running).unwrap();
            answers.push((set, recalculated));
        }
        assert_eq!(answers[0], answers[1], "(wasm, native)");
        let last = answers[0].1.last().unwrap();
        // Job 2 (user 1001, all the usage) below job 3 (same account, no
        // usage) below job 4 (the other account, no usage).
        assert!(last[0].1 < last[1].1 && last[1].1 < last[2].1, "{last:?}");
    }
}

#[test]
fn native_calls_leave_nothing_in_the_mock_host() {
    // priority/basic logs at init ("priority/basic loaded"): a native stack
    // moves what its plugins log to tracing, so the thread's mock host
    // keeps no log however long the replay.
    if !stacks().contains(&"select/linear,priority/basic") {
        return;
    }
    slurm_wasm_sdk::testkit::reset();
    let c = cluster(DEFAULT_CLUSTER);
    let spec = PolicySpec::parse("select/linear,priority/basic")
        .unwrap()
        .native();
    let stack = LoadedStack::open(&spec, &c, 1_700_000_000, 1).unwrap();
    drop(stack);
    assert!(slurm_wasm_sdk::testkit::with(|m| m.logs.is_empty()));
}

#[test]
fn a_plugin_file_cannot_run_natively() {
    let c = cluster(DEFAULT_CLUSTER);
    let spec = PolicySpec::parse("select=mine.wasm,priority/basic")
        .unwrap()
        .native();
    let e = LoadedStack::open(&spec, &c, 0, 1)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("mine.wasm: a plugin file has no native build"),
        "{e}"
    );
    let e = spec.check_available().unwrap_err().to_string();
    assert!(e.contains("mine.wasm"), "{e}");
}

#[test]
fn simulate_native_first_runs_part_of_the_workload() {
    if stacks().len() < 2 {
        return;
    }
    // The CLI: `--first 40` of a 100-job synthetic workload, natively; the
    // report says both.
    let out = Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args([
            "simulate", "--jobs", "100", "--first", "40", "--native", "--json", "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = report["notes"].to_string();
    assert!(notes.contains("only the first 40 of 100 jobs"), "{notes}");
    assert!(notes.contains("native builds"), "{notes}");
    let policies = report["policies"].as_array().unwrap();
    assert_eq!(policies.len(), 2);
    for p in policies {
        assert_eq!(p["jobs"], 40, "{p}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args(["simulate", "--jobs", "10", "--first", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--first 0"));
}
