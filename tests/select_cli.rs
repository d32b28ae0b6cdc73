//! `slurm-wasm select place`: where would this job go?
//!
//! The cluster is the anchor's (the `slurm.conf` and `gres.conf`
//! `tests/anchor/select/record.sh` recorded with select/cons_tres
//! CR_Core_Memory), so the expected placements are the ones real Slurm
//! 22.05.8 made for the same jobs in the same order
//! (`tests/fixtures/anchor/select/cons_tres-CR_Core_Memory/stream.txt`,
//! `tests/fixtures/anchor/gres/case-gpu1-second.txt`).

use std::path::PathBuf;
use std::process::Command;

fn fixture(config: &str, file: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/anchor/select")
        .join(config)
        .join(file)
        .display()
        .to_string()
}

/// Runs `slurm-wasm select place` on the anchor cluster at time `NOW`.
fn place(running: &[&str], options: &[&str], json: bool) -> (i32, String, String) {
    place_in("cons_tres-CR_Core_Memory", running, options, json)
}

/// [`place`] with the files of another recorded configuration (and its
/// QOS table, when it has one).
fn place_in(config: &str, running: &[&str], options: &[&str], json: bool) -> (i32, String, String) {
    place_queued(config, running, &[], options, json)
}

/// [`place_in`] with `pending` jobs waiting in the queue.
fn place_queued(
    config: &str,
    running: &[&str],
    pending: &[&str],
    options: &[&str],
    json: bool,
) -> (i32, String, String) {
    let (conf, gres) = (fixture(config, "slurm.conf"), fixture(config, "gres.conf"));
    let qos = fixture(config, "qos.txt");
    let mut args = vec!["--slurm-conf", &conf, "--gres-conf", &gres, "--now", NOW];
    if std::path::Path::new(&qos).is_file() {
        args.extend(["--qos-table", &qos]);
    }
    for r in running {
        args.push("--running");
        args.push(r);
    }
    for p in pending {
        args.push("--pending");
        args.push(p);
    }
    if json {
        args.push("--json");
    }
    args.push("--");
    args.extend(options);
    select_place(&args)
}

/// `slurm-wasm select place` with `args`: its exit code, stdout and stderr.
fn select_place(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args(["select", "place"])
        .args(args)
        .output()
        .expect("run slurm-wasm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// 2026-11-21T16:24:39 UTC, the recording's first `--test-only` time.
const NOW: &str = "1795278279";

#[test]
fn first_job_goes_to_the_first_cores_of_n1() {
    // a1 `-n1`: `Nodes=n1 CPU_IDs=0-1 Mem=500` (one task, a whole
    // two-thread core, DefMemPerCPU=250 for each of its 2 CPUs).
    let (code, out, err) = place(&[], &["-n1", "-J", "a1"], false);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "JobId=1 JobName=a1\n   JobState=RUNNING Reason=None\n   StartTime=2026-11-21T16:24:39 \
         EndTime=2026-11-21T16:29:39\n   Partition=big\n   NodeList=n1\n   NumNodes=1 NumCPUs=2 \
         NumTasks=1 CPUs/Task=1\n     Nodes=n1 CPU_IDs=0-1 Mem=500 GRES=\n"
    );
}

#[test]
fn running_jobs_are_placed_first() {
    // a1 `-n1` and a2 `-n2` run on n1 (CPU_IDs 0-1 and 2-3); a3 `-c3`
    // then got `Nodes=n1 CPU_IDs=4-7 Mem=1000`.
    let (code, out, err) = place(&["-n1", "-n2"], &["-c3"], true);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["job_id"], 3);
    assert_eq!(v["state"], "RUNNING");
    assert_eq!(v["node_list"], "n1");
    assert_eq!(v["num_cpus"], 4);
    assert_eq!(v["nodes"][0]["cpu_ids"], "4-7");
    assert_eq!(v["nodes"][0]["mem"], 1000);
}

#[test]
fn a_second_gpu_job_gets_the_other_gpu() {
    // case-gpu1-second.txt: beside `-n1 --gres=gpu:1 -w n1` (GPU 0, cores
    // 0), `-n1 --gres=gpu:1 -w n1` got `CPU_IDs=4-5 Mem=500 GRES=gpu:1(IDX:1)`.
    let (code, out, err) = place(
        &["-n1 --gres=gpu:1 -w n1"],
        &["-n1", "--gres=gpu:1", "-w", "n1"],
        false,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("     Nodes=n1 CPU_IDs=4-5 Mem=500 GRES=gpu:1(IDX:1)\n"),
        "{out}"
    );
}

/// The recording's a1..a5, here running for 5..9 minutes from `NOW`.
const FIVE_RUNNING: [&str; 5] = [
    "-n1 -t 5",
    "-n2 -t 6",
    "-c3 -t 7",
    "-n2 --mem=1000 -t 8",
    "-N2 --ntasks-per-node=1 -t 9",
];

#[test]
fn a_job_that_must_wait_gets_a_will_run_answer() {
    // The recording's first test-only question: with a1..a5 running, `-N4
    // --exclusive` would start when the last of them ends, on n[1-4] with
    // all 32 CPUs. Here the five run for 5..9 minutes from NOW, so the
    // last ends at NOW + 9 min = 16:33:39.
    let (code, out, err) = place(&FIVE_RUNNING, &["-N4", "--exclusive"], false);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("   JobState=PENDING Reason=Resources\n"),
        "{out}"
    );
    assert!(out.contains("   StartTime=2026-11-21T16:33:39 "), "{out}");
    assert!(
        out.contains("   SchedNodeList=n[1-4]\n   NumNodes=4 NumCPUs=32 "),
        "{out}"
    );
}

#[test]
fn queued_jobs_of_the_partition_delay_a_will_run_answer() {
    // slurmctld answers `sbatch --test-only` with the will-run start
    // delayed for the pending jobs of the job's partition with at least its
    // priority (22.05 job_scheduler.c `job_start_data` and
    // `_delayed_job_start_time`): each adds max(min CPUs, min nodes x the
    // partition's CPUs per node) x its time limit in CPU-minutes, and the
    // sum over the partition's CPUs is the delay in minutes. Partition big
    // is n[1-4], 8 CPUs each (32): `-N2 -t 20` adds 16 x 20, `-n6 -t 10`
    // adds max(6, 8) x 10, the `-p hw` job none (another partition):
    // 400 / 32 = 12 whole minutes after the 16:33:39 of the test above.
    // Real 22.05.8 (the anchor, 2026-11-27): with these five running,
    // `sbatch --test-only -N4 --exclusive` answered 13:04:16; with the three
    // queued (`--begin=now+3600`, priority raised above the tested job's)
    // 13:16:16, 12 minutes later; with only `-n6 -t 10` above it, 13:06:16
    // (80 / 32 = 2 whole minutes); with both below it, 13:04:16 again.
    let pending = ["-N2 -t 20", "-n6 -t 10", "-p hw -N1 -t 30"];
    let (code, out, err) = place_queued(
        "cons_tres-CR_Core_Memory",
        &FIVE_RUNNING,
        &pending,
        &["-N4", "--exclusive"],
        false,
    );
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.starts_with("JobId=9 "), "{out}");
    assert!(out.contains("   StartTime=2026-11-21T16:45:39 "), "{out}");
    // Jobs queued behind it (a lower priority) delay nothing; of the two,
    // only the one above it counts.
    for (priorities, start) in [((1, 1), "16:33:39"), ((1, 9), "16:35:39")] {
        let queued = [
            format!("-N2 -t 20 --priority={}", priorities.0),
            format!("-n6 -t 10 --priority={}", priorities.1),
        ];
        let (_, out, err) = place_queued(
            "cons_tres-CR_Core_Memory",
            &FIVE_RUNNING,
            &[&queued[0], &queued[1]],
            &["-N4", "--exclusive", "--priority=5"],
            false,
        );
        let start = format!("   StartTime=2026-11-21T{start} ");
        assert!(out.contains(&start), "{out}{err}");
    }
}

#[test]
fn bad_options_are_refused_before_anything_runs() {
    let (code, _, err) = place(&[], &["-n1", "--mem=lots"], false);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim(),
        "slurm-wasm: --mem: expected a size in MB, optionally with a K, M, G or T suffix, found `lots`"
    );
    let (code, _, err) = place(&["-w n9"], &["-n1"], false);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim(),
        "slurm-wasm: --running '-w n9': --nodelist: no node `n9` in the cluster"
    );
}

#[test]
fn a_higher_tier_job_preempts_and_starts() {
    // The preemption recording (cons_tres-CR_Core_Memory-preempt:
    // PreemptType=preempt/partition_prio, PreemptMode=CANCEL, `alt` at
    // PriorityTier=2 over `big`'s nodes): with d1-d7 running, e1 `-p alt
    // -n8` preempted d1 (job 1 here) and ran on `Nodes=n1 CPU_IDs=0-1,4-5
    // Mem=400` and `Nodes=n[2,4] CPU_IDs=6-7 Mem=200`.
    let running = [
        "-w n1 -n4 --mem-per-cpu=100",
        "-w n2 -n4 --mem-per-cpu=100",
        "-w n1 -n4 --mem-per-cpu=100",
        "-w n2 -n2 --mem-per-cpu=100",
        "-N2 -w n3,n4 -n8 --mem-per-cpu=100",
        "-w n3 -n4 --mem-per-cpu=100",
        "-w n4 -n2 --gres=gpu:2 --mem-per-cpu=100",
    ];
    let config = "cons_tres-CR_Core_Memory-preempt";
    let e1 = ["-p", "alt", "-n8", "--mem-per-cpu=100"];
    let (code, out, err) = place_in(config, &running, &e1, true);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["state"], "RUNNING");
    assert_eq!(v["preempts"], serde_json::json!([1]));
    assert_eq!(v["node_list"], "n[1-2,4]");
    let nodes: Vec<(String, String, u64)> = v["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_owned(),
                n["cpu_ids"].as_str().unwrap().to_owned(),
                n["mem"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [
            ("n1".to_owned(), "0-1,4-5".to_owned(), 400),
            ("n2".to_owned(), "6-7".to_owned(), 200),
            ("n4".to_owned(), "6-7".to_owned(), 200),
        ]
    );
    let (code, out, _) = place_in(config, &running, &e1, false);
    assert_eq!(code, 0);
    assert!(out.contains("\n   Preempts=1\n"), "{out}");
    // A job of the lower tier preempts nothing and waits.
    let (code, out, _) = place_in(config, &running, &["-n8", "--mem-per-cpu=100"], true);
    assert_eq!(code, 3, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["preempts"], serde_json::json!([]));
}

#[test]
fn a_higher_qos_job_preempts_and_starts() {
    // The QOS preemption recording (cons_tres-CR_Core_Memory-qos_preempt:
    // PreemptType=preempt/qos, PreemptMode=CANCEL, QOS high preempting
    // normal and low): with d1-d7 and f1 running, e1 `--qos=high -n8`
    // preempted d2 and d3 (jobs 2 and 3 here, of QOS normal, which ranks
    // before low) and ran on `Nodes=n1 CPU_IDs=2-3,6-7 Mem=400` and
    // `Nodes=n2 CPU_IDs=0-1,4-5 Mem=400`.
    let running = [
        "-w n1 -n4 --mem-per-cpu=100 --qos=low",
        "-w n2 -n4 --mem-per-cpu=100",
        "-w n1 -n4 --mem-per-cpu=100",
        "-w n2 -n2 --mem-per-cpu=100 --qos=low",
        "-N2 -w n3,n4 -n8 --mem-per-cpu=100",
        "-w n3 -n4 --mem-per-cpu=100 --qos=low",
        "-w n4 -n2 --gres=gpu:2 --mem-per-cpu=100",
        "-n2 --mem-per-cpu=100 --qos=low",
    ];
    let config = "cons_tres-CR_Core_Memory-qos_preempt";
    let e1 = ["--qos=high", "-n8", "--mem-per-cpu=100"];
    let (code, out, err) = place_in(config, &running, &e1, false);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\n   Preempts=2,3\n"), "{out}");
    assert!(
        out.contains("\n     Nodes=n1 CPU_IDs=2-3,6-7 Mem=400 GRES=\n"),
        "{out}"
    );
    assert!(
        out.contains("\n     Nodes=n2 CPU_IDs=0-1,4-5 Mem=400 GRES=\n"),
        "{out}"
    );
    // A job of QOS normal preempts nothing and waits.
    let (code, out, _) = place_in(config, &running, &["-n8", "--mem-per-cpu=100"], true);
    assert_eq!(code, 3, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["preempts"], serde_json::json!([]));
    // A QOS the table does not define is refused before anything runs.
    let (code, _, err) = place_in(config, &running, &["--qos=gold", "-n1"], false);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("QOS `gold` is not in the QOS table"), "{err}");
    // Without the table, preempt/qos cannot tell who preempts whom.
    let conf = fixture(config, "slurm.conf");
    let (code, _, err) = select_place(&["--slurm-conf", &conf, "--", "-n1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("PreemptType=preempt/qos needs the site's QOS table: --qos-table FILE"),
        "{err}"
    );
}

#[test]
fn a_reservation_is_made_and_the_job_runs_beside_or_in_it() {
    // The reservation recording (cons_tres-CR_Core_Memory-reserved_jobs):
    // with q1 `-w n1 -n2` running, `NodeCnt=1 CoreCnt=2` reserved two cores
    // of n1; q2 `-w n1 -n4` then ran on `Nodes=n1 CPU_IDs=6-7` and
    // `Nodes=n2 CPU_IDs=0-1`, and q4 `--reservation=k1 -n4` on `Nodes=n1
    // CPU_IDs=2-5`, the reserved cores.
    let config = "cons_tres-CR_Core_Memory-reserved_jobs";
    let (conf, gres) = (fixture(config, "slurm.conf"), fixture(config, "gres.conf"));
    let run = |options: &[&str]| {
        let mut args = vec!["--slurm-conf", &conf, "--gres-conf", &gres, "--now", NOW];
        args.extend(["--running", "-w n1 -n2 --mem=100"]);
        args.extend(["--reservation", "k1 NodeCnt=1 CoreCnt=2", "--"]);
        args.extend(options);
        select_place(&args)
    };
    let (code, out, err) = run(&["-w", "n1", "-n4", "--mem=100"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("ReservationName=k1\n   Nodes=n1 NodeCnt=1 CoreCnt=2\n"),
        "{out}"
    );
    assert!(
        out.contains("\n     Nodes=n1 CPU_IDs=6-7 Mem=100 GRES=\n"),
        "{out}"
    );
    assert!(
        out.contains("\n     Nodes=n2 CPU_IDs=0-1 Mem=100 GRES=\n"),
        "{out}"
    );
    let (code, out, err) = run(&["--reservation=k1", "-n4", "--mem=100"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\n   Reservation=k1\n"), "{out}");
    assert!(
        out.contains("\n     Nodes=n1 CPU_IDs=2-5 Mem=100 GRES=\n"),
        "{out}"
    );
    // A reservation this command did not make is refused before anything
    // runs.
    let (code, _, err) = run(&["--reservation=k9", "-n1"]);
    assert_eq!(code, 2);
    assert!(err.contains("reservation `k9` is not made here"), "{err}");
}

/// `SelectType=select/cray_aries` with `other_cons_tres` (how a site runs
/// it over cons_tres: `other_select_init`): the bundled wrapper over the
/// bundled cons_tres, placing a job without `--network` as cons_tres alone
/// does (the first test's placement).
#[test]
fn select_cray_aries_places_as_its_inner_plugin() {
    let dir = tempfile::tempdir().expect("temp dir");
    let conf = std::fs::read_to_string(fixture("cons_tres-CR_Core_Memory", "slurm.conf"))
        .expect("slurm.conf")
        .replace(
            "SelectType=select/cons_tres",
            "SelectType=select/cray_aries",
        )
        .replace(
            "SelectTypeParameters=CR_Core_Memory",
            "SelectTypeParameters=CR_Core_Memory,other_cons_tres",
        );
    let path = dir.path().join("slurm.conf");
    std::fs::write(&path, conf).expect("write slurm.conf");
    let gres = fixture("cons_tres-CR_Core_Memory", "gres.conf");
    let path = path.display().to_string();
    let args = [
        "--slurm-conf",
        &path,
        "--gres-conf",
        &gres,
        "--now",
        NOW,
        "--",
        "-n1",
        "-J",
        "a1",
    ];
    let (code, out, err) = select_place(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Nodes=n1 CPU_IDs=0-1 Mem=500"), "{out}");
}
