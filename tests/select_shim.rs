//! The select/wasm shim plugin in a real Slurm 22.05.8 (issue 28): on the
//! live anchor cluster (`../shared/slurm-anchor`), the project's recorded
//! select streams (`tests/anchor/select/record.sh`: cons_tres with
//! `CR_Core_Memory` and `CR_CPU_Memory`, linear with `CR_Memory`, and
//! cons_tres's streams of suspend and resume, of running jobs shrunk and of
//! reservations, and both plugins' streams of jobs merged into others) run
//! again with `SelectType=select/wasm` and the bundled
//! `select_cons_tres.wasm` or `select_linear.wasm` give what the stock
//! plugin gave when the fixtures were recorded
//! (`tests/fixtures/anchor/select/<config>/stream.txt`): for every submit
//! the same outcome (refused with the same message, pending with the same
//! reason, or running on the same `NodeList` with the same `NumCPUs` and,
//! per node, the same `CPU_IDs`, `Mem` and `GRES` with device indices), for
//! every `sbatch --test-only` the same answer (nodes, processors, and a
//! start at the same moment: now, or the end of the same running job), for
//! every suspend, resume, shrink and merge the same state and placement,
//! and for every reservation the same nodes and cores. After each submit, `sinfo`'s
//! allocated CPUs of each node are those the running jobs hold there.
//!
//! slurmctld restarted with running jobs, then reconfigured, keeps them
//! where they are (the component gets them back from the recovered jobs),
//! the next decision is the one a cluster that did not restart makes, srun
//! steps run on their job's CPUs, and the shim's debug mode
//! (`DebugFlags=SelectType`: cons_tres's and the component's allocated CPUs
//! and memory of each node compared after each change) finds no difference.
//!
//! Then a select component that traps or loops in `job-test`
//! (`select/hostile`, `failure = "fallback"`, fallback the bundled
//! `select/cons_tres`) leaves slurmctld scheduling: a plain job submitted
//! after the hostile one still starts.
//!
//! It needs root, the anchor's scripts beside the repository and Slurm's
//! packages installed (`.ci/run` installs them); elsewhere it says why it
//! does not run and passes. About 15 minutes.

use crate::anchor_select;
use crate::live_slurm;

use std::path::{Path, PathBuf};
use std::process::Command;

use anchor_select::{fixture_root, parse_stream, JobRecord, Step, Submitted, WillRun};
use live_slurm::{anchor_dir, build_and_install, read, run, skip_reason, tail, ClusterLock, REPO};

/// The configurations replayed live (record.sh's names), each with the
/// fewest submits and job changes it must compare, and whether `sinfo` is
/// checked: the three main streams, then cons_tres's own streams of
/// suspend and resume, of running jobs shrunk (select_p_job_resized), and
/// of reservations (every `resv_test`), and the expand streams of both
/// (jobs merged into others: select_p_job_expand). sinfo's count is
/// checked where no two running jobs share a core, and where each running
/// job's record shows all its nodes: a resumed job takes its cores back
/// whoever holds them, and cons_tres's count of such a node is its own
/// (the same C code as stock's, compiled into the shim); a job merged
/// across nodes shows its first node only (22.05's job_resources_bits_copy,
/// common/job_resources.c), which under linear happens before later submits.
const CONFIGS: [(&str, usize, bool); 8] = [
    ("cons_tres-CR_Core_Memory", 40, true),
    ("cons_tres-CR_CPU_Memory", 40, true),
    ("linear-CR_Memory", 40, true),
    ("cons_tres-CR_Core_Memory-suspend", 14, false),
    ("cons_tres-CR_Core_Memory-resize", 11, true),
    ("cons_tres-CR_Core_Memory-reservations", 3, true),
    ("cons_tres-CR_Core_Memory-expand", 10, true),
    ("linear-CR_Memory-expand", 10, false),
];
/// The configurations run as a site that replaces the stock plugin runs
/// them (shim.sh's ALONE): PluginDir holds select/wasm and every Debian
/// plugin but select/cons_tres and select/linear, so select/wasm takes the
/// stock plugin's id (109, or 102 under linear's bookkeeping), with which
/// scontrol accepts `CoreCnt=` reservations (state_control.c,
/// state_control_corecnt_supported). The others run beside Debian's
/// select plugins, where select/wasm's id is its own (120).
const ALONE: [&str; 4] = [
    "cons_tres-CR_CPU_Memory",
    "linear-CR_Memory",
    "cons_tres-CR_Core_Memory-reservations",
    "linear-CR_Memory-expand",
];
/// Differences from the stock fixtures not resolved yet (`config`, the
/// step as the differences name it, why). `must` entries must still differ
/// (so a fix shows up here and the entry goes); the others may differ.
const KNOWN: [(&str, &str, bool, &str); 3] = [
    (
        "cons_tres-CR_Core_Memory",
        "test-only -N3 -n3",
        false,
        "open: the same nodes and processors, but the start is the end of a19 (stock: a17, \
         which ends 4-5 s earlier); in cons_tres-CR_CPU_Memory the other way (a14, stock a19): \
         the end times of a live run differ from the recording by seconds, which is not \
         resolved yet",
    ),
    (
        "cons_tres-CR_CPU_Memory",
        "test-only -N3 -n3",
        false,
        "open: as in cons_tres-CR_Core_Memory",
    ),
    (
        "cons_tres-CR_Core_Memory-reservations",
        "reserve v9",
        true,
        "kept: `NodeCnt=3 CoreCnt=4` got CoreCnt=6 under stock cons_tres, whose \
         `_sequential_pick` (cons_tres/select_cons_tres.c) raises the remainder of cores \
         still needed where it should lower it; the component reserves the 4 cores asked \
         for on the same nodes (as tests/select_anchor.rs's replay of the same stream says)",
    ),
];

/// The host configurations: select_cons_tres.wasm, select_linear.wasm,
/// and the hostile component falling back to the bundled cons_tres
/// (deadline 1 s).
fn write_configs(work: &Path) -> (PathBuf, PathBuf, PathBuf) {
    for name in ["cons_tres", "linear"] {
        let bundled = slurm_wasm_bundled::find(&format!("select/{name}")).expect("bundled");
        std::fs::write(work.join(format!("select_{name}.wasm")), bundled.bytes).unwrap();
    }
    std::fs::copy(
        slurm_wasm_test_artifacts::HOSTILE_SELECT,
        work.join("select_hostile.wasm"),
    )
    .unwrap();
    let cache = work.join("cache");
    let write = |name: &str, text: String| {
        let path = work.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let wasm = write(
        "cons_tres.toml",
        format!(
            "cache_dir = \"{}\"\n[plugins.select]\nwasm = \"{}\"\n",
            cache.display(),
            work.join("select_cons_tres.wasm").display()
        ),
    );
    let fault = write(
        "fallback.toml",
        format!(
            "cache_dir = \"{}\"\n[plugins.select]\nwasm = \"{}\"\nfailure = \"fallback\"\n\
             fallback = \"select/cons_tres\"\n[plugins.select.limits]\ndeadline_ms = 1000\n",
            cache.display(),
            work.join("select_hostile.wasm").display()
        ),
    );
    let linear = write(
        "linear.toml",
        format!(
            "cache_dir = \"{}\"\n[plugins.select]\nwasm = \"{}\"\n",
            cache.display(),
            work.join("select_linear.wasm").display()
        ),
    );
    (wasm, linear, fault)
}

/// A running job's placement as `scontrol show job -d` shows it.
fn placement(r: &JobRecord) -> String {
    let mut text = format!("NodeList={} NumCPUs={}", r.nodes.join(","), r.num_cpus);
    for n in &r.per_node {
        text.push_str(&format!(
            "\n  {} CPU_IDs={} Mem={} GRES={}",
            n.node, n.cpu_ids, n.memory, n.gres
        ));
    }
    text
}

/// A job's record after `scontrol update` (a shrink or a merge), or
/// scontrol's refusal with job ids left out: they differ between the runs.
fn updated(outcome: &Result<JobRecord, String>) -> String {
    match outcome {
        Ok(r) => placement(r),
        Err(e) => {
            let words: Vec<&str> = e
                .split_whitespace()
                .map(|w| {
                    if w.bytes().all(|b| b.is_ascii_digit()) {
                        "<id>"
                    } else {
                        w
                    }
                })
                .collect();
            format!("refused: {}", words.join(" "))
        }
    }
}

fn outcome(s: &Submitted) -> String {
    match s {
        Submitted::Refused(m) => format!("refused: {m}"),
        Submitted::Pending(r) => format!("pending ({})", r.reason),
        Submitted::Running(r) => format!("{} {}", r.state, placement(r)),
    }
}

/// A will-run answer with the start said relative to the stream (now, or
/// the end of a named running job) and preempted jobs by name: job ids and
/// clocks differ between the two runs.
fn will_run(answer: &WillRun, now: i64, running: &[(u32, String, i64)]) -> String {
    match answer {
        WillRun::Error(e) => format!("error: {e}"),
        WillRun::Start {
            start,
            cpus,
            nodes,
            preempts,
            ..
        } => {
            let when = if (start - now).abs() <= 2 {
                "now".to_string()
            } else if let Some((_, name, _)) =
                running.iter().find(|(_, _, end)| (end - start).abs() <= 1)
            {
                format!("when {name} ends")
            } else {
                format!("{} s after now", start - now)
            };
            let names: Vec<String> = preempts
                .iter()
                .map(|id| {
                    running
                        .iter()
                        .find(|(r, _, _)| r == id)
                        .map_or(format!("job {id}"), |(_, n, _)| n.clone())
                })
                .collect();
            format!(
                "start {when} using {cpus} processors on {} preempting [{}]",
                nodes.join(","),
                names.join(",")
            )
        }
    }
}

/// Compares a stream recorded under select/wasm with the stock fixture;
/// returns the number of submits and test-only answers compared and the
/// differences.
fn compare(config: &str, stock: &[Step], wasm: &[Step]) -> (usize, usize, Vec<String>) {
    let mut diffs = Vec::new();
    let (mut jobs, mut answers) = (0, 0);
    if stock.len() != wasm.len() {
        diffs.push(format!(
            "{config}: {} steps recorded under select/wasm, {} in the fixture",
            wasm.len(),
            stock.len()
        ));
    }
    for (s, w) in stock.iter().zip(wasm) {
        match (s, w) {
            (
                Step::Submit {
                    name, outcome: so, ..
                },
                Step::Submit {
                    name: wn,
                    outcome: wo,
                    ..
                },
            ) if name == wn => {
                jobs += 1;
                let (a, b) = (outcome(so), outcome(wo));
                if a != b {
                    diffs.push(format!(
                        "{config} submit {name}:\n  stock:  {a}\n  select/wasm: {b}"
                    ));
                }
            }
            (
                Step::TestOnly {
                    options,
                    now: sn,
                    answer: sa,
                    running: sr,
                },
                Step::TestOnly {
                    now: wn,
                    answer: wa,
                    running: wr,
                    ..
                },
            ) => {
                answers += 1;
                let (a, b) = (will_run(sa, *sn, sr), will_run(wa, *wn, wr));
                if a != b {
                    diffs.push(format!(
                        "{config} test-only {}:\n  stock:  {a}\n  select/wasm: {b}",
                        options.join(" ")
                    ));
                }
            }
            (
                Step::Suspend {
                    name,
                    resume,
                    refused,
                    state,
                    ..
                },
                Step::Suspend {
                    name: wn,
                    resume: wr,
                    refused: wf,
                    state: ws,
                    ..
                },
            ) if name == wn && resume == wr => {
                jobs += 1;
                if (refused, state) != (wf, ws) {
                    diffs.push(format!(
                        "{config} {} {name}:\n  stock:  {state} {refused:?}\n  select/wasm: {ws} {wf:?}",
                        if *resume { "resume" } else { "suspend" }
                    ));
                }
            }
            (
                Step::Resize {
                    name, outcome: so, ..
                },
                Step::Resize {
                    name: wn,
                    outcome: wo,
                    ..
                },
            ) if name == wn => {
                jobs += 1;
                let (a, b) = (updated(so), updated(wo));
                if a != b {
                    diffs.push(format!(
                        "{config} resize {name}:\n  stock:  {a}\n  select/wasm: {b}"
                    ));
                }
            }
            (
                Step::Merge {
                    name,
                    into,
                    outcome: so,
                },
                Step::Merge {
                    name: wn,
                    outcome: wo,
                    ..
                },
            ) if name == wn => {
                jobs += 1;
                let (a, b) = (updated(so), updated(wo));
                if a != b {
                    diffs.push(format!(
                        "{config} merge {name}: {into} afterwards:\n  stock:  {a}\n  select/wasm: {b}"
                    ));
                }
            }
            (
                Step::Reserve {
                    name, outcome: so, ..
                },
                Step::Reserve {
                    name: wn,
                    outcome: wo,
                    ..
                },
            ) if name == wn => {
                answers += 1;
                if so != wo {
                    diffs.push(format!(
                        "{config} reserve {name}:\n  stock:  {so:?}\n  select/wasm: {wo:?}"
                    ));
                }
            }
            (
                Step::Cancel {
                    name, resumed: sr, ..
                },
                Step::Cancel {
                    name: wn,
                    resumed: wr,
                    ..
                },
            ) if name == wn => {
                let names =
                    |r: &[(String, i64)]| r.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
                if names(sr) != names(wr) {
                    diffs.push(format!(
                        "{config} cancel {name}: the jobs resumed afterwards:\n  stock:  {:?}\n  select/wasm: {:?}",
                        names(sr),
                        names(wr)
                    ));
                }
            }
            (Step::Submit { .. }, _)
            | (_, Step::Submit { .. })
            | (Step::Suspend { .. }, _)
            | (Step::Resize { .. }, _)
            | (Step::Merge { .. }, _)
            | (Step::Reserve { .. }, _)
            | (Step::Cancel { .. }, _) => {
                diffs.push(format!(
                    "{config}: the streams are out of step: {s:?} / {w:?}"
                ));
                break;
            }
            _ => {}
        }
    }
    (jobs, answers, diffs)
}

/// The number of CPUs in a `CPU_IDs=` list (`0-3,6`).
fn count_ids(ids: &str) -> u32 {
    ids.split(',')
        .filter(|r| !r.is_empty())
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<u32>().unwrap() - a.parse::<u32>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

/// Checks what `sinfo` showed after each submit under select/wasm
/// (record.sh's `sinfo.txt`: the running jobs, then each node's
/// `allocated/idle/other/total` CPUs) against the CPUs those jobs hold
/// there (their `CPU_IDs` in the stream): sinfo reads the allocation from
/// the select plugin's nodeinfo (select_p_select_nodeinfo_get, which the
/// shim answers from cons_tres's or linear's own bookkeeping), so the counts
/// show the C view slurmctld serves its clients follows the component's
/// placements. Returns the nodes compared and the differences.
fn sinfo_differences(config: &str, wasm: &[Step], sinfo: &str) -> (usize, Vec<String>) {
    let blocks: std::collections::HashMap<&str, &str> = sinfo
        .split("[after ")
        .skip(1)
        .filter_map(|b| b.split_once("]\n"))
        .collect();
    // each job's placement as the stream stands: from its submit, then
    // from each shrink
    let mut held: std::collections::HashMap<u32, &JobRecord> = std::collections::HashMap::new();
    let (mut compared, mut diffs) = (0, Vec::new());
    for step in wasm {
        let name = match step {
            Step::Submit { name, outcome, .. } => {
                if let Submitted::Running(r) = outcome {
                    held.insert(r.id, r);
                }
                name
            }
            Step::Resize { outcome: Ok(r), .. } | Step::Merge { outcome: Ok(r), .. } => {
                held.insert(r.id, r);
                continue;
            }
            _ => continue,
        };
        let Some(block) = blocks.get(name.as_str()) else {
            continue;
        };
        let mut lines = block.lines();
        let running: Vec<u32> = lines
            .next()
            .and_then(|l| l.strip_prefix("running"))
            .unwrap_or("")
            .split_whitespace()
            .map(|id| id.parse().unwrap())
            .collect();
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let (node, counts) = line.split_once(' ').expect("node and A/I/O/T");
            let shown: u32 = counts.split('/').next().unwrap().parse().unwrap();
            let mut expected = 0;
            for id in &running {
                let Some(r) = held.get(id) else {
                    diffs.push(format!(
                        "{config} after {name}: job {id} runs but its placement was not recorded"
                    ));
                    continue;
                };
                expected += r
                    .per_node
                    .iter()
                    .filter(|n| n.node == node)
                    .map(|n| count_ids(&n.cpu_ids))
                    .sum::<u32>();
            }
            compared += 1;
            if shown != expected {
                diffs.push(format!(
                    "{config} after {name}: sinfo shows {shown} CPUs allocated on {node}, the running jobs hold {expected}"
                ));
            }
        }
    }
    (compared, diffs)
}

#[test]
fn select_wasm_places_jobs_as_stock_cons_tres_live_and_survives_faults() {
    let anchor = anchor_dir();
    let _cluster = ClusterLock::acquire();
    if let Some(reason) = skip_reason(&anchor) {
        eprintln!("select_shim: not run: {reason}");
        return;
    }
    // SELECT_SHIM_CHECK=<dir> checks the outputs a kept run left in <dir>
    // instead of running the cluster again (for work on the checks)
    if let Some(kept) = std::env::var_os("SELECT_SHIM_CHECK") {
        check_outputs(&PathBuf::from(kept).join("out"));
        return;
    }
    let work = tempfile::tempdir().expect("a temporary directory");
    // SELECT_SHIM_KEEP=1 keeps the outputs (their path is printed)
    let work = if std::env::var_os("SELECT_SHIM_KEEP").is_some() {
        let kept = work.keep();
        eprintln!("select_shim: outputs in {}", kept.display());
        kept
    } else {
        work.path().to_owned()
    };
    let work = work.as_path();
    let plugin_dir = work.join("plugins");
    build_and_install(work, &plugin_dir, &["select_wasm"]);
    let (wasm_config, linear_config, fault_config) = write_configs(work);

    let out = work.join("out");
    let log = run(
        Command::new("bash")
            .arg(Path::new(REPO).join("tests/anchor/select/shim.sh"))
            .args(CONFIGS.map(|(config, _, _)| config))
            .env("SLURM_ANCHOR", &anchor)
            .env("PLUGINDIR", &plugin_dir)
            .env("WASM_CONFIG", &wasm_config)
            .env("LINEAR_WASM_CONFIG", &linear_config)
            .env("FAULT_CONFIG", &fault_config)
            .env("ALONE", ALONE.join(" "))
            .env("OUT", &out),
        "shim.sh",
    );
    eprintln!("{}", tail(&log, 3));
    check_outputs(&out);
}

/// select/cray_aries (the bundled select wrapper, over select/cons_tres)
/// inside slurmctld through select/wasm (`tests/anchor/select/cray.sh`): a
/// `--network=blade` job on n1 closes blade 1 (n1 and h1: the first
/// number of the name mod 4) to other counter jobs (`select_p_job_test`,
/// select_cray_aries.c: the shim tells the component each job's
/// `--network`), not to a job without counters: a plain job runs on h1
/// and a counter job waits though h1 has a free core; once the first
/// counter job ended (`select_p_job_fini`) the waiting one starts on h1.
/// Steps (`select_p_step_start`, `select_p_step_pick_nodes`, which the
/// shim forwards): while a counter job's one-node step runs on n1, a
/// two-node step of the job is refused (n1's blade is the step's; with
/// the stock select/cons_tres it runs: slurmctld picks nodes with CPUs
/// free), and runs once that step ended. The node health check (18.08's
/// NHC, the host configuration's `node_health`): a job's node stays the
/// component's while the program runs, so a job asking for it waits,
/// and starts once the program ended; the program gets select/cray's
/// arguments. About two minutes.
#[test]
fn select_cray_aries_keeps_counter_jobs_apart_in_slurmctld() {
    let anchor = anchor_dir();
    let _cluster = ClusterLock::acquire();
    if let Some(reason) = skip_reason(&anchor) {
        eprintln!("select_shim: not run: {reason}");
        return;
    }
    let work = tempfile::tempdir().expect("a temporary directory");
    let work = work.path();
    let plugin_dir = work.join("plugins");
    build_and_install(work, &plugin_dir, &["select_wasm"]);
    let config = work.join("cray.toml");
    let out = work.join("out");
    std::fs::write(
        &config,
        format!(
            "cache_dir = \"{}\"\n[plugins.select]\nbundled = \"select/cray_aries\"\n\
             node_health = \"{}\"\n[plugins.select.inner]\nbundled = \"select/cons_tres\"\n",
            work.join("cache").display(),
            out.join("nhc").display()
        ),
    )
    .expect("host configuration");
    let log = run(
        Command::new("bash")
            .arg(Path::new(REPO).join("tests/anchor/select/cray.sh"))
            .env("SLURM_ANCHOR", &anchor)
            .env("PLUGINDIR", &plugin_dir)
            .env("CRAY_CONFIG", &config)
            .env("OUT", &out),
        "cray.sh",
    );
    eprintln!("{}", tail(&log, 3));
    let before = read(&out.join("before.txt"));
    let after = read(&out.join("after.txt"));
    let steps = read(&out.join("steps.txt"));
    let nhc_during = read(&out.join("nhc-during.txt"));
    let nhc_after = read(&out.join("nhc-after.txt"));
    let nhc_args = read(&out.join("nhc-args.txt"));
    let context = format!(
        "before:\n{before}after:\n{after}steps:\n{steps}node health: {nhc_during}{nhc_after}\
         its runs:\n{nhc_args}slurmctld:\n{}",
        read(&out.join("slurmctld.log"))
    );
    let lines: Vec<&str> = before.lines().collect();
    assert_eq!(
        lines.first(),
        Some(&"a state=RUNNING nodes=n1"),
        "{context}"
    );
    assert_eq!(lines.get(1), Some(&"c state=RUNNING nodes=h1"), "{context}");
    assert!(
        lines
            .get(2)
            .is_some_and(|l| l.starts_with("b state=PENDING")),
        "{context}"
    );
    assert_eq!(after.trim(), "b state=RUNNING nodes=h1", "{context}");
    assert_eq!(
        steps.lines().collect::<Vec<_>>(),
        ["during=refused", "after=ran"],
        "{context}"
    );
    assert!(nhc_during.starts_with("f state=PENDING"), "{context}");
    assert_eq!(nhc_after.trim(), "f state=RUNNING nodes=n3", "{context}");
    // select/cray's xtcleanup_after arguments: a job's check on its node
    // numbers (n3: 3), a step's on the step's (n1: 1), `-a (step << 32) +
    // job` for a step.
    let runs: Vec<&str> = nhc_args.lines().collect();
    assert!(
        runs.iter()
            .any(|l| l.starts_with("-a 0 -e 1 -r ") && l.ends_with("-m reservation 3")),
        "{context}"
    );
    assert!(
        runs.iter()
            .any(|l| l.contains(" -e 0 -r ") && l.ends_with("-m application 1")),
        "{context}"
    );
}

/// The test's checks of shim.sh's outputs in `out`.
fn check_outputs(out: &Path) {
    let mut all = Vec::new();
    for (config, fewest, check_sinfo) in CONFIGS {
        let stock = parse_stream(&read(&fixture_root().join(config).join("stream.txt")))
            .unwrap_or_else(|e| panic!("{config}: the fixture: {e}"));
        let wasm = parse_stream(&read(&out.join("wasm").join(config).join("stream.txt")))
            .unwrap_or_else(|e| panic!("{config}: the select/wasm stream: {e}"));
        let (jobs, answers, diffs) = compare(config, &stock, &wasm);
        eprintln!(
            "select_shim: {config}: {jobs} submits and {answers} test-only answers compared, {} differ",
            diffs.len()
        );
        assert!(
            jobs >= fewest,
            "{config}: only {jobs} submits and job changes compared"
        );
        all.extend(diffs);
        let id = read(&out.join("wasm").join(config).join("plugin-id.txt"));
        // every call of the component succeeded and every answer was applied
        let errors = read(&out.join("wasm").join(config).join("shim-errors.txt"));
        assert!(
            errors.trim().is_empty(),
            "{config}: slurmctld logged errors of select/wasm:\n{errors}"
        );
        let expected = match (ALONE.contains(&config), config.starts_with("linear-")) {
            (false, _) => "plugin id 120 (its own: the stock plugin is in PluginDir)",
            (true, true) => "plugin id 102 (select/linear's)",
            (true, false) => "plugin id 109 (select/cons_tres's)",
        };
        assert!(
            id.contains(expected),
            "{config}: select/wasm took another plugin id than {expected:?}:\n{id}"
        );
        if !check_sinfo {
            continue;
        }
        let sinfo = read(&out.join("wasm").join(config).join("sinfo.txt"));
        let (nodes, diffs) = sinfo_differences(config, &wasm, &sinfo);
        eprintln!(
            "select_shim: {config}: sinfo's allocated CPUs compared on {nodes} nodes after submits, {} differ",
            diffs.len()
        );
        assert!(
            nodes >= 2 * fewest,
            "{config}: sinfo compared on only {nodes} nodes"
        );
        assert!(
            diffs.is_empty(),
            "sinfo under select/wasm:\n{}",
            diffs.join("\n")
        );
    }
    let (known, unexpected): (Vec<String>, Vec<String>) = all.into_iter().partition(|d| {
        KNOWN
            .iter()
            .any(|(c, step, _, _)| d.starts_with(&format!("{c} {step}:")))
    });
    for d in &known {
        eprintln!("select_shim: known difference: {d}");
    }
    assert!(
        unexpected.is_empty(),
        "select/wasm placed jobs differently from stock select/cons_tres:\n{}",
        unexpected.join("\n")
    );
    for (c, step, must, why) in KNOWN {
        assert!(
            !must || known.iter().any(|d| d.starts_with(&format!("{c} {step}:"))),
            "{c} {step} now matches stock Slurm; drop it from KNOWN ({why})"
        );
    }

    // Restart: slurmctld restarted with running jobs keeps them where they
    // were, and the next job goes where it goes without the restart
    // (control.txt: the same jobs on a fresh cluster, no restart); the
    // debug comparison of cons_tres's and the component's nodes found no
    // difference.
    let restart = out.join("restart");
    let (before, after) = (
        read(&restart.join("before.txt")),
        read(&restart.join("after.txt")),
    );
    let (control, next) = (
        read(&restart.join("control.txt")),
        read(&restart.join("next.txt")),
    );
    assert!(
        before.matches(" RUNNING ").count() == 4,
        "not every job ran before the restart:\n{before}"
    );
    assert_eq!(
        before, after,
        "the running jobs moved when slurmctld restarted"
    );
    assert_eq!(
        before,
        read(&restart.join("reconfigured.txt")),
        "the running jobs moved when slurmctld was reconfigured"
    );
    assert!(
        control.starts_with(&before) && control.ends_with(&next),
        "after the restart the next job went elsewhere than without one:\ncontrol:\n{control}\nafter the restart:\n{before}{next}"
    );
    assert!(
        next.contains(" RUNNING "),
        "the job after the restart did not run:\n{next}"
    );
    let debug = read(&restart.join("debug.txt"));
    assert!(
        debug.trim().is_empty(),
        "the debug comparison found cons_tres's and the component's nodes differ:\n{debug}"
    );

    // Steps: an srun step inside each of two one-CPU jobs on h1 (real
    // CPUs) runs on its job's CPUs: the credential slurmd binds from
    // carries the cores the component chose (the two jobs hold different
    // CPUs, so an unbound step, on both, would differ from each).
    let steps = read(&restart.join("steps.txt"));
    let lines: Vec<&str> = steps.lines().collect();
    assert_eq!(lines.len(), 2, "two step lines expected:\n{steps}");
    let mut held = Vec::new();
    for line in &lines {
        let ids = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("CPU_IDs="))
            .unwrap_or("");
        let step = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("step="))
            .unwrap_or("");
        assert!(
            !ids.is_empty() && ids == step,
            "a step ran elsewhere than on its job's CPUs: {line}"
        );
        held.push(ids.to_string());
    }
    assert_ne!(
        held[0], held[1],
        "the two jobs hold the same CPUs:\n{steps}"
    );

    // Faults: the hostile component's job-test traps or loops; the
    // fallback (the bundled cons_tres) answers and the plain job starts.
    for case in ["trap", "loop", "gpu-beyond"] {
        let text = read(&out.join("fault").join(format!("{case}.txt")));
        assert!(
            text.contains("slurmctld answers"),
            "{case}: slurmctld stopped answering:\n{text}"
        );
        assert!(
            text.lines().any(|l| l.starts_with("plain state=RUNNING")),
            "{case}: the plain job after the hostile one did not start:\n{text}"
        );
        assert!(
            text.contains("select/wasm"),
            "{case}: slurmctld logged nothing of the fault:\n{text}"
        );
        // the anchor's n[1-4] have two GPUs (IDX 0 and 1): a device past
        // them is the hostile answer, which must not have been applied
        assert!(
            !text.lines().any(|l| l.contains("CPU_IDs=")
                && l.split("IDX:")
                    .skip(1)
                    .any(|i| !i.starts_with('0') && !i.starts_with('1'))),
            "{case}: a GPU past the node's was allocated:\n{text}"
        );
    }
}
