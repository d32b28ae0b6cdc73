//! Taps on a plugin's calls (issue 32): shadows that get the active
//! plugin's calls and are compared, never applied, and recordings replayed
//! against another build.

use std::time::Duration;

use slurm_wasm_host::kinds::select::{JobTestMode, JobTestResult};
use slurm_wasm_host::recording::{self, RecordOptions};
use slurm_wasm_host::tap::{ShadowOptions, TapError};
use slurm_wasm_host::types::{Job, JobState};
use slurm_wasm_host::{FailurePolicy, Host, Limits, PluginSettings, PluginSource, SelectPlugin};

use crate::select_cons_tres::{config, job, nodes, request};

fn host() -> Host {
    Host::new(slurm_wasm_bundled::host_options()).expect("host")
}

fn cons_tres(host: &Host) -> SelectPlugin {
    SelectPlugin::load(
        host,
        &PluginSource::Bundled("select/cons_tres".into()),
        PluginSettings::default(),
    )
    .expect("cons_tres loads")
}

fn heaviest() -> PluginSource {
    PluginSource::File(slurm_wasm_test_artifacts::SHADOW_SELECT.into())
}

/// Two nodes of 4 cores, n0 of weight 1 and n1 of weight 5 (slurm.conf
/// `Weight`: the lightest is used first).
fn weighted_nodes() -> Vec<slurm_wasm_host::types::Node> {
    let mut nodes = nodes(2, 1, 4, 1, 8000);
    nodes[0].weight = 1;
    nodes[1].weight = 5;
    nodes
}

/// A one-node job of 4 tasks: a whole node.
fn whole_node(id: u32) -> Job {
    job(id, 1, 4, 1)
}

fn test_now(plugin: &SelectPlugin, j: &Job) -> Result<JobTestResult, slurm_wasm_host::CallError> {
    plugin.job_test(&request(2, j.clone(), JobTestMode::RunNow))
}

fn begin(plugin: &SelectPlugin, mut j: Job, result: JobTestResult) -> Job {
    j.state = JobState::Running;
    j.resources = Some(result.resources);
    plugin.job_begin(&j).expect("job-begin");
    j
}

fn first_node(result: &JobTestResult) -> u32 {
    result.resources.per_node[0].node_index
}

/// A shadow differing from the active cons_tres only by the node-weight
/// rule (tests/shadow-select: heaviest first) diverges exactly on the job
/// tests where both nodes are free, so that the weight picks: calls 2 and
/// 10 below. Where one node is busy, or none is free, both answer the
/// same; the shadow's usage follows the active plugin's decisions (it gets
/// the same job-begin), so it stays in step after diverging.
#[test]
fn a_shadow_diverges_exactly_where_its_weight_rule_chooses() {
    let host = host();
    let active = cons_tres(&host);
    active
        .add_shadow(
            &heaviest(),
            PluginSettings::default(),
            ShadowOptions::default(),
        )
        .expect("shadow loads");
    active
        .init(&config(&["CR_Core_Memory"], 2, "select/cons_tres"))
        .unwrap(); // call 0
    active.node_init(&weighted_nodes()).unwrap(); // 1

    let a = test_now(&active, &whole_node(1)).unwrap(); // 2: both free
    assert_eq!(first_node(&a), 0, "the lightest node first (Weight=1)");
    let job_a = begin(&active, whole_node(1), a); // 3
    let b = test_now(&active, &whole_node(2)).unwrap(); // 4: only n1
    assert_eq!(first_node(&b), 1);
    let job_b = begin(&active, whole_node(2), b); // 5
    assert!(test_now(&active, &whole_node(3)).is_err()); // 6: none free
    active.job_fini(&job_a).unwrap(); // 7
    assert_eq!(first_node(&test_now(&active, &whole_node(4)).unwrap()), 0); // 8: only n0
    active.job_fini(&job_b).unwrap(); // 9
    assert_eq!(first_node(&test_now(&active, &whole_node(5)).unwrap()), 0); // 10: both free

    let reports = active.settled_shadow_reports();
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    assert_eq!(report.plugin, "select/cons_tres_heaviest");
    assert_eq!(report.out_of_service, None);
    assert_eq!((report.received, report.pending), (11, 0));
    assert_eq!(report.divergences.compared, 11);
    assert_eq!(report.divergences.calls, vec![2, 10]);
    assert_eq!(
        report.divergences.by_function,
        [("job-test".to_string(), 2)].into()
    );
    let first = &report.divergences.first[0];
    assert!(
        first.recorded.contains("node-index: 0") && first.replayed.contains("node-index: 1"),
        "{first:?}"
    );
}

/// A shadow that spins in `job-test` (select/hostile's `loop` job) costs
/// the live path nothing but handing the call over: the active answer is
/// back while the shadow is still inside the call (its deadline is 5 s),
/// and the shadow's own failure policy (`fail`) takes it out of service
/// once its deadline fires, without touching the active plugin.
#[test]
fn a_looping_shadow_does_not_hold_the_live_path() {
    let host = host();
    let active = cons_tres(&host);
    let shadow_settings = PluginSettings {
        limits: Limits {
            deadline: Duration::from_secs(5),
            fuel_per_call: u64::MAX,
            ..Limits::default()
        },
        failure: FailurePolicy::Fail,
        ..PluginSettings::default()
    };
    active
        .add_shadow(
            &PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_SELECT.into()),
            shadow_settings,
            ShadowOptions::default(),
        )
        .unwrap();
    active
        .init(&config(&["CR_Core_Memory"], 2, "select/cons_tres"))
        .unwrap();
    active.node_init(&weighted_nodes()).unwrap();
    let mut looping = whole_node(1);
    looping.name = "loop".into();
    let answer = test_now(&active, &looping).expect("the active plugin answers");
    assert_eq!(first_node(&answer), 0);

    // The shadow catches up with init and node-init, and is then still
    // spinning in that call, which the active plugin answered long before.
    let now = loop {
        let now = active.shadow_reports();
        if now[0].pending <= 1 {
            break now;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!((now[0].received, now[0].pending), (2, 1), "{now:?}");

    let settled = active.settled_shadow_reports();
    let report = &settled[0];
    assert_eq!(report.divergences.calls, vec![2]);
    assert!(
        report.divergences.first[0].replayed.contains("deadline"),
        "{:?}",
        report.divergences.first[0]
    );
    let reason = report.out_of_service.as_deref().expect("out of service");
    assert!(reason.contains("failure policy is `fail`"), "{reason}");

    // The active plugin goes on; the shadow gets nothing more.
    assert_eq!(first_node(&test_now(&active, &whole_node(2)).unwrap()), 0);
    let after = active.settled_shadow_reports();
    assert_eq!(after[0].received, report.received);
}

/// A shadow joins before `init` or not at all, and may not act on the node.
#[test]
fn shadows_and_recordings_are_refused_after_init_and_shadows_may_not_act() {
    let host = host();
    let active = cons_tres(&host);
    let acting = PluginSettings {
        grants: slurm_wasm_host::Grants::none().with(slurm_wasm_host::Capability::Cpuset),
        ..PluginSettings::default()
    };
    let e = active
        .add_shadow(&heaviest(), acting, ShadowOptions::default())
        .unwrap_err();
    assert!(matches!(e, TapError::Acting { .. }), "{e}");
    active
        .init(&config(&["CR_Core_Memory"], 2, "select/cons_tres"))
        .unwrap();
    let e = active
        .add_shadow(
            &heaviest(),
            PluginSettings::default(),
            ShadowOptions::default(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("before init"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let e = active
        .record(RecordOptions::new(dir.path().join("r")))
        .unwrap_err();
    assert!(e.to_string().contains("before init"), "{e}");
}

/// A recording of cons_tres replayed against the same build answers the
/// same at every call; against the heaviest-first build it differs
/// exactly where the shadow did.
#[test]
fn a_recording_replays_against_the_same_and_another_build() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cons_tres.swrec");
    {
        let host = host();
        let active = cons_tres(&host);
        active.record(RecordOptions::new(&path)).unwrap();
        active
            .init(&config(&["CR_Core_Memory"], 2, "select/cons_tres"))
            .unwrap();
        active.node_init(&weighted_nodes()).unwrap();
        let a = test_now(&active, &whole_node(1)).unwrap();
        let job_a = begin(&active, whole_node(1), a);
        let b = test_now(&active, &whole_node(2)).unwrap();
        begin(&active, whole_node(2), b);
        active.job_fini(&job_a).unwrap();
        let summary = active.finish_recording().unwrap().expect("recorded");
        assert_eq!(summary.calls, 7);
        assert_eq!(summary.stopped, None);
    }
    let recording = recording::read(&path).unwrap();
    assert_eq!(recording.header.plugin_type, "select/cons_tres");
    assert_eq!(recording.header.kind, "select");
    let functions: Vec<&str> = recording
        .calls
        .iter()
        .map(|c| c.function.as_str())
        .collect();
    assert_eq!(
        functions,
        [
            "init",
            "node-init",
            "job-test",
            "job-begin",
            "job-test",
            "job-begin",
            "job-fini"
        ]
    );
    assert!(recording.calls[2].fuel > 0);

    let replay = |source: &PluginSource| {
        let clock =
            std::sync::Arc::new(slurm_wasm_host::capabilities::clock::VirtualClock::default());
        let host = host().with_clock(clock.clone());
        let plugin = SelectPlugin::load(&host, source, PluginSettings::default()).unwrap();
        slurm_wasm_host::replay::run(&recording, &plugin, &clock, 10).unwrap()
    };
    let same = replay(&PluginSource::Bundled("select/cons_tres".into()));
    assert_eq!((same.compared, same.total()), (7, 0));
    let other = replay(&heaviest());
    assert_eq!(other.calls, vec![2]);

    // Another kind cannot take it.
    let clock = std::sync::Arc::new(slurm_wasm_host::capabilities::clock::VirtualClock::default());
    let priority = slurm_wasm_host::PriorityPlugin::load(
        &host().with_clock(clock.clone()),
        &PluginSource::Bundled("priority/basic".into()),
        PluginSettings::default(),
    )
    .unwrap();
    let e = slurm_wasm_host::replay::run(&recording, &priority, &clock, 10).unwrap_err();
    assert_eq!(
        e.to_string(),
        "a select recording cannot be replayed into a priority plugin"
    );
}

/// The HPC2N trace's first 400 jobs through cons_tres and multifactor,
/// recorded by `simulate --record` and replayed by `slurm-wasm replay`:
/// against the same plugins no call differs; multifactor's calls against
/// priority/basic differ where basic does otherwise by design
/// (priority_basic.c): it recalculates nothing (every `calculate` for
/// which multifactor returned new priorities), keeps another state format
/// (every `state-save`), and orders jobs by submission (`set`).
#[test]
fn an_hpc2n_recording_replays_the_same_and_basic_differs_where_it_should() {
    let trace = crate::simulate::traces().join("HPC2N-2002-subset-alea-3170jobs.swf");
    if !trace.exists() {
        eprintln!("skipped: {} not present", trace.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cli = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
            .args(args)
            .output()
            .expect("run slurm-wasm")
    };
    let out = cli(&[
        "simulate".as_ref(),
        "--swf".as_ref(),
        trace.as_os_str(),
        "--first".as_ref(),
        "400".as_ref(),
        "--policy".as_ref(),
        "select/cons_tres,priority/multifactor".as_ref(),
        "--record".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stem = dir.path().join("1-select-cons_tres+priority-multifactor");
    let part = |kind: &str| stem.with_extension(format!("{kind}.swrec"));
    let replay = |recording: &std::path::Path, plugin: &str| {
        let out = cli(&[
            "replay".as_ref(),
            recording.as_os_str(),
            "--bundled".as_ref(),
            plugin.as_ref(),
            "--json".as_ref(),
        ]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), json)
    };

    for (kind, plugin) in [
        ("select", "select/cons_tres"),
        ("priority", "priority/multifactor"),
    ] {
        let (code, json) = replay(&part(kind), plugin);
        assert_eq!(code, Some(0), "{json}");
        assert_eq!(json["replay"]["diverged"], 0, "{json}");
        assert!(json["calls"].as_u64().unwrap() > 400, "{json}");
    }

    let recording = recording::read(&part("priority")).unwrap();
    let count = |f: &dyn Fn(&recording::CallRecord) -> bool| {
        recording.calls.iter().filter(|c| f(c)).count() as u64
    };
    let recalculated = count(&|c| {
        c.function == "calculate"
            && postcard_answer::<Vec<(u32, u32)>>(c).is_some_and(|p| !p.is_empty())
    });
    let state_saves = count(&|c| c.function == "state-save");
    assert!(recalculated > 0 && state_saves > 0);
    let (code, json) = replay(&part("priority"), "priority/basic");
    assert_eq!(code, Some(1), "{json}");
    let by_function = &json["replay"]["divergences"]["by_function"];
    let functions: Vec<&String> = by_function.as_object().unwrap().keys().collect();
    assert_eq!(functions, ["calculate", "set", "state-save"], "{json}");
    assert_eq!(by_function["calculate"], recalculated);
    assert_eq!(by_function["state-save"], state_saves);
}

/// A recorded call's answer as `T`, if it answered.
fn postcard_answer<T: serde::de::DeserializeOwned>(call: &recording::CallRecord) -> Option<T> {
    call.outcome
        .as_ref()
        .ok()
        .and_then(|bytes| recording::decode(bytes).ok())
}

/// cons_tres on the weighted nodes, job 1 running on n0 (the lightest).
fn serving_job_1() -> (Host, SelectPlugin, Job) {
    let host = host();
    let plugin = cons_tres(&host);
    plugin
        .init(&config(&["CR_Core_Memory"], 2, "select/cons_tres"))
        .unwrap();
    plugin.node_init(&weighted_nodes()).unwrap();
    let a = test_now(&plugin, &whole_node(1)).unwrap();
    assert_eq!(first_node(&a), 0);
    let job_1 = begin(&plugin, whole_node(1), a);
    (host, plugin, job_1)
}

fn hostile() -> PluginSource {
    PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_SELECT.into())
}

/// A reload to a build that traps (select/hostile, on a job named `trap`)
/// rolls back within the call that trapped: the replaced cons_tres, which
/// ran beside it on every probation call, answers that call (no decision
/// is lost) and serves again, with the world the probation calls built
/// (job 2 began and job 1 ended while the new build served).
#[test]
fn a_reload_to_a_trapping_build_rolls_back_within_one_call() {
    let (_host, plugin, job_1) = serving_job_1();
    assert!(plugin.reload(&hostile(), 5).expect("the reload starts"));
    let status = plugin.reload_status();
    assert_eq!(status.serving, "select/hostile");
    assert_eq!(status.probation, Some(("select/cons_tres".into(), 5)));
    let b = test_now(&plugin, &whole_node(2)).unwrap();
    assert_eq!(first_node(&b), 1, "select/hostile: the first free node");
    begin(&plugin, whole_node(2), b);
    plugin.job_fini(&job_1).unwrap();

    let mut trap = whole_node(3);
    trap.name = "trap".into();
    let answer = test_now(&plugin, &trap).expect("cons_tres answers the call that trapped");
    assert_eq!(first_node(&answer), 0);
    let status = plugin.reload_status();
    assert_eq!(
        (status.serving.as_str(), status.probation, status.rollbacks),
        ("select/cons_tres", None, 1)
    );
    assert_eq!(plugin.identity().plugin_type, "select/cons_tres");
    // cons_tres knows job 2 holds n1 and job 1 left n0.
    let d = test_now(&plugin, &whole_node(4)).unwrap();
    assert_eq!(first_node(&d), 0);
    assert!(test_now(&plugin, &{
        let mut j = job(5, 2, 8, 1);
        j.name = "both".into();
        j
    })
    .is_err());
}

/// A reload to a build that answers what the host refuses (select/hostile's
/// `ncpus-max`: `job-test` claims u32::MAX CPUs, refused by the host's
/// check of `ncpus` against the chosen nodes) rolls back as a trapping one
/// does: the check runs inside the call, so the replaced cons_tres answers
/// that call and the caller never sees the refusal.
#[test]
fn a_reload_to_a_build_with_refused_answers_rolls_back_within_one_call() {
    let (_host, plugin, _job_1) = serving_job_1();
    assert!(plugin.reload(&hostile(), 5).expect("the reload starts"));
    let mut bent = whole_node(2);
    bent.name = "ncpus-max".into();
    let answer = test_now(&plugin, &bent).expect("cons_tres answers the refused call");
    assert_eq!(first_node(&answer), 1);
    assert!(answer.resources.ncpus < u32::MAX, "{answer:?}");
    let status = plugin.reload_status();
    assert_eq!(
        (status.serving.as_str(), status.probation, status.rollbacks),
        ("select/cons_tres", None, 1)
    );

    // Outside a probation the refusal reaches the caller, and the plugin
    // serves on.
    assert!(plugin.reload(&hostile(), 0).expect("the reload starts"));
    let e = test_now(&plugin, &bent).unwrap_err();
    assert!(
        matches!(e, slurm_wasm_host::CallError::Invalid { .. }),
        "{e}"
    );
    assert_eq!(first_node(&test_now(&plugin, &whole_node(3)).unwrap()), 1);
}

/// A reload that passes its probation serves from then on with the world
/// it was given (the running job, then its end); a reload to a plugin of
/// another kind, or to bytes that are no component, is refused and the
/// serving plugin goes on.
#[test]
fn a_reload_passes_probation_and_bad_reloads_are_refused() {
    let (_host, plugin, job_1) = serving_job_1();

    let e = plugin
        .reload(
            &PluginSource::File(slurm_wasm_test_artifacts::EXAMPLE.into()),
            2,
        )
        .unwrap_err();
    assert!(e.to_string().contains("priority"), "{e}");
    let e = plugin
        .reload(
            &PluginSource::Bytes {
                name: "junk.wasm".into(),
                bytes: b"\0asm junk".to_vec(),
            },
            2,
        )
        .unwrap_err();
    assert!(e.to_string().starts_with("reload refused"), "{e}");
    assert_eq!(plugin.reload_status().serving, "select/cons_tres");

    assert!(plugin.reload(&heaviest(), 2).unwrap());
    assert_eq!(first_node(&test_now(&plugin, &whole_node(2)).unwrap()), 1);
    plugin.job_fini(&job_1).unwrap();
    let status = plugin.reload_status();
    assert_eq!(
        (status.serving.as_str(), status.probation, status.rollbacks),
        ("select/cons_tres_heaviest", None, 0)
    );
    // Both nodes free: the new rule (heaviest first) picks n1.
    assert_eq!(first_node(&test_now(&plugin, &whole_node(3)).unwrap()), 1);
    // The same component again changes nothing.
    assert!(!plugin.reload(&heaviest(), 2).unwrap());
    assert_eq!(plugin.reload_status().probation, None);
}

/// `slurm-wasm replay` refuses what it cannot use, with exit code 2 and
/// what is wrong.
#[test]
fn replay_refuses_what_is_not_a_recording() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.swrec");
    std::fs::write(&junk, b"not a recording").unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
            .args(args)
            .output()
            .expect("run slurm-wasm");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(&["replay".as_ref(), junk.as_os_str(), "--report".as_ref()]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("not a slurm-wasm recording"), "{stderr}");
    let (code, stderr) = run(&["replay".as_ref(), junk.as_os_str()]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("--plugin FILE or --bundled TYPE"),
        "{stderr}"
    );
}
