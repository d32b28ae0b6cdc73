//! select/cray_aries (issue 33): Slurm 22.05.8's Cray/Aries plugin, built
//! without ALPS, as a bundled select wrapper over select/linear or
//! select/cons_tres. Each test names the function of
//! src/plugins/select/cray_aries/select_cray_aries.c it follows and the
//! case of docs/cray-aries.md §11 it checks; the differential on the
//! anchor's recordings (no job asks for counters there, so every decision
//! is the inner plugin's) is in `select_anchor`.
//!
//! Nodes `nid0`..`nid7`: a node's blade is its number mod 4, so blade 0
//! is {nid0, nid4}, blade 1 {nid1, nid5}, and so on. The controller tells
//! the plugin each job's `--network` with `SelectPlugin::set_job_network`
//! (slurmctld's `SELECT_JOBDATA_NETWORK`), which the wrapper reads through
//! its `job-network` import.

use slurm_wasm_host::kinds::select::{
    JobTestMode, JobTestRequest, JobinfoField, JobinfoValue, SelectConfig,
};
use slurm_wasm_host::types::{Job, JobState, Node, SelectTypeParams, ShareRequest};
use slurm_wasm_host::{fixtures, CallError, Host, PluginSettings, PluginSource, SelectPlugin};

/// `SLURM_NO_CHANGE_IN_DATA`.
const NO_CHANGE: i32 = 1900;

fn nodes() -> Vec<Node> {
    (0..8)
        .map(|i| fixtures::node(i, &format!("nid{i}"), 1, 4, 1, 1000))
        .collect()
}

fn host() -> Host {
    Host::new(slurm_wasm_bundled::host_options()).expect("host")
}

fn bundled(plugin_type: &str) -> PluginSource {
    PluginSource::Bundled(plugin_type.into())
}

/// The select configuration: one partition of the eight nodes.
fn config() -> SelectConfig {
    let mut config = fixtures::select_config();
    config.partitions = vec![fixtures::partition(0, "p", 8)];
    config
}

fn stack(host: &Host, inner: &str) -> SelectPlugin {
    SelectPlugin::load_stack(
        host,
        &[bundled("select/cray_aries"), bundled(inner)],
        PluginSettings::default(),
    )
    .expect("loads")
}

/// The `SelectTypeParameters` under which cray runs over `inner`.
fn plugin_params(inner: &str) -> SelectTypeParams {
    if inner == "select/cons_tres" {
        SelectTypeParams::CORE | SelectTypeParams::MEMORY | SelectTypeParams::OTHER_CONS_TRES
    } else {
        fixtures::select_config().cluster.select_type_parameters
    }
}

/// select/cray_aries over `inner`, initialised on [`nodes`].
fn cray_over(host: &Host, inner: &str) -> SelectPlugin {
    let plugin = stack(host, inner);
    let mut config = config();
    config.cluster.select_type_parameters = plugin_params(inner);
    plugin.init(&config).expect("init");
    plugin.node_init(&nodes()).expect("node-init");
    plugin
}

/// A one-node exclusive job.
fn job(id: u32) -> Job {
    let mut job = fixtures::job(id);
    job.details.min_cpus = 1;
    job.details.num_tasks = 1;
    job.details.share = ShareRequest::Exclusive;
    job
}

fn request(job: &Job, mode: JobTestMode, candidates: &[u32]) -> JobTestRequest {
    fixtures::one_node_request(
        job.clone(),
        mode,
        fixtures::bitmap(8, candidates.iter().copied()),
    )
}

/// RUN_NOW on `candidates`: the node, or the plugin's refusal.
fn place(plugin: &SelectPlugin, job: &Job, candidates: &[u32]) -> Result<Vec<u32>, CallError> {
    plugin
        .job_test(&request(job, JobTestMode::RunNow, candidates))
        .map(|r| fixtures::bits(&r.resources.nodes))
}

/// Places `job` on `candidates` and begins it; the running job.
fn start(plugin: &SelectPlugin, mut job: Job, candidates: &[u32]) -> Job {
    let result = plugin
        .job_test(&request(&job, JobTestMode::RunNow, candidates))
        .unwrap_or_else(|e| panic!("job {}: {e}", job.job_id));
    job.state = JobState::Running;
    job.end_time = 4_000_000_000;
    job.time_limit = Some(60);
    job.resources = Some(result.resources);
    plugin.job_begin(&job).expect("job-begin");
    job
}

fn nodes_of(job: &Job) -> Vec<u32> {
    fixtures::bits(&job.resources.as_ref().expect("running").nodes)
}

const ALL: [u32; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

/// `select_p_job_test` (§4.2), `_set_job_running` (§4.3) and
/// `_remove_job_from_blades` (§4.4); cases §11.4–6: a `blade` job on nid0
/// marks blade 0 (nid0, nid4); another counter job may not use nid4 (the
/// inner plugin is asked without it), a job without counters may, and
/// TEST_ONLY is never filtered; a `system` job needs no node marked. At
/// the blade job's end the marks go; a running `system` job marks every
/// node.
#[test]
fn counter_jobs_keep_off_the_blades_where_counters_run() {
    let host = host();
    let plugin = cray_over(&host, "select/linear");
    plugin.set_job_network(1, Some("blade"));
    let a = start(&plugin, job(1), &ALL);
    assert_eq!(nodes_of(&a), [0]);

    plugin.set_job_network(2, Some("blade"));
    let refused = place(&plugin, &job(2), &[4]).unwrap_err();
    assert!(matches!(refused, CallError::Plugin { .. }), "{refused}");
    assert_eq!(place(&plugin, &job(2), &[4, 5]).unwrap(), [5]);
    let test_only = plugin
        .job_test(&request(&job(2), JobTestMode::TestOnly, &[4]))
        .expect("TEST_ONLY is not filtered");
    assert_eq!(fixtures::bits(&test_only.resources.nodes), [4]);
    assert_eq!(
        place(&plugin, &job(3), &[4]).unwrap(),
        [4],
        "no counters: no filter"
    );

    plugin.set_job_network(4, Some("system"));
    assert!(
        place(&plugin, &job(4), &ALL).is_err(),
        "counters run on blade 0"
    );
    plugin.job_fini(&a).expect("job-fini");
    let s = start(&plugin, job(4), &ALL);
    assert_eq!(nodes_of(&s), [0]);
    assert!(
        place(&plugin, &job(2), &ALL).is_err(),
        "a system job marks every node"
    );
    assert_eq!(place(&plugin, &job(3), &[7]).unwrap(), [7]);
    plugin.job_fini(&s).expect("job-fini");
    assert_eq!(place(&plugin, &job(2), &ALL).unwrap(), [0]);
}

/// The same rules over select/cons_tres (`OTHER_CONS_TRES`, plugin id
/// 110): the filter runs before the inner plugin, whichever it is.
#[test]
fn counter_jobs_are_filtered_over_cons_tres_too() {
    let host = host();
    let plugin = cray_over(&host, "select/cons_tres");
    plugin.set_job_network(1, Some("blade"));
    let a = start(&plugin, job(1), &[1]);
    assert_eq!(nodes_of(&a), [1]);
    plugin.set_job_network(2, Some("blade"));
    assert!(place(&plugin, &job(2), &[5]).is_err());
    assert_eq!(place(&plugin, &job(2), &[5, 6]).unwrap(), [6]);
}

/// `select_p_select_nodeinfo_set_all` (§4.6, §11.19): before any counter
/// job every call is the inner plugin's (cons_tres answers "no change"
/// itself when nothing changed); once a counter job began, the first call
/// refreshes and the following ones are answered by cray alone with
/// `SLURM_NO_CHANGE_IN_DATA`, even after a job without counters began
/// (the inner plugin's node data goes stale until the next counter
/// event, as in C).
#[test]
fn nodeinfo_is_refreshed_only_after_counter_events() {
    let host = host();
    let plugin = cray_over(&host, "select/cons_tres");
    let no_change = |plugin: &SelectPlugin| match plugin.nodeinfo_set_all() {
        Err(CallError::Plugin { code, message, .. }) => {
            assert_eq!(code, NO_CHANGE);
            message
        }
        other => panic!("expected SLURM_NO_CHANGE_IN_DATA, got {other:?}"),
    };
    plugin.nodeinfo_set_all().expect("the first refresh");
    start(&plugin, job(9), &[7]);
    plugin
        .nodeinfo_set_all()
        .expect("no counter event yet: cons_tres refreshes");
    assert!(!no_change(&plugin).contains("cray"), "cons_tres answered");
    plugin.set_job_network(1, Some("blade"));
    start(&plugin, job(1), &ALL);
    plugin
        .nodeinfo_set_all()
        .expect("refresh after the counter job began");
    start(&plugin, job(2), &[6]);
    assert!(
        no_change(&plugin).contains("cray_aries"),
        "cray answered alone"
    );
}

/// `select_p_select_jobinfo_set`/`_get`/`_pack`/`_copy` (§4.1, §6.2,
/// §11.11, §11.13, §11.14): the counter mode by exact name, unknown names
/// ignored; the cleaning word read as "started and not complete"; a copy
/// is blank; the 22.05 layout of a fresh copy is 11 bytes.
#[test]
fn the_jobinfo_keeps_the_counter_mode_and_the_cleaning_word() {
    let host = host();
    let plugin = cray_over(&host, "select/linear");
    let info = plugin.jobinfo_alloc().expect("alloc");
    let network = |plugin: &SelectPlugin| plugin.jobinfo_get(info, JobinfoField::Network);
    assert_eq!(network(&plugin).unwrap(), JobinfoValue::Text("none".into()));
    for (set, now) in [
        ("blade", "blade"),
        ("Blade", "blade"),
        ("system", "system"),
        ("", "none"),
    ] {
        plugin
            .jobinfo_set(info, JobinfoField::Network, &JobinfoValue::Text(set.into()))
            .expect("set");
        assert_eq!(
            network(&plugin).unwrap(),
            JobinfoValue::Text(now.into()),
            "{set}"
        );
    }
    for (raw, cleaning) in [(1, true), (3, false), (2, false), (5, true)] {
        plugin
            .jobinfo_set(info, JobinfoField::Cleaning, &JobinfoValue::Count(raw))
            .expect("set");
        assert_eq!(
            plugin.jobinfo_get(info, JobinfoField::Cleaning).unwrap(),
            JobinfoValue::Flag(cleaning),
            "{raw}"
        );
    }
    // A jobinfo made after node-init has an empty map of the 4 blades.
    let packed = plugin.jobinfo_pack(info, 0x2600).expect("pack");
    assert_eq!(&packed[..12], b"\0\0\0\x04\0\0\0\x040x0\0");
    let copy = plugin.jobinfo_copy(info).expect("copy");
    assert_eq!(
        plugin.jobinfo_pack(copy, 0x2600).expect("pack"),
        [0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe]
    );
    let back = plugin.jobinfo_unpack(&packed, 0x2600).expect("unpack");
    assert_eq!(
        plugin.jobinfo_get(back, JobinfoField::Cleaning).unwrap(),
        JobinfoValue::Flag(true)
    );
}

/// `select_p_state_save` / `select_p_state_restore` / `select_p_job_init`
/// (§7, §11.16–17): a controller restart. The blade state is checked, not
/// restored; the running `blade` job (saved with its blades) is counted
/// again at job-init, so its blade stays closed to counter jobs; a
/// suspended one is not counted.
#[test]
fn a_restart_counts_running_counter_jobs_again() {
    let host = host();
    let before = cray_over(&host, "select/linear");
    before.set_job_network(1, Some("blade"));
    let a = start(&before, job(1), &[1]);
    before.set_job_network(2, Some("blade"));
    let mut b = start(&before, job(2), &[2]);
    b.state = JobState::Suspended;
    let saved = before.state_save().expect("state-save");

    let after = stack(&host, "select/linear");
    after.init(&config()).expect("init");
    after.node_init(&nodes()).expect("node-init");
    after.state_restore(&saved).expect("state-restore");
    after.job_init(&[a.clone(), b.clone()]).expect("job-init");
    // The controller has not told this host of job 3's network yet.
    after.set_job_network(3, Some("blade"));
    assert!(
        place(&after, &job(3), &[5]).is_err(),
        "blade 1 still marked"
    );
    assert_eq!(
        place(&after, &job(3), &[6]).unwrap(),
        [6],
        "suspended job 2 not counted"
    );
}

/// A four-node job on `candidates` (exclusive nodes), begun.
fn start_wide(plugin: &SelectPlugin, mut job: Job, candidates: &[u32]) -> Job {
    let mut request = request(&job, JobTestMode::RunNow, candidates);
    request.min_nodes = 4;
    request.max_nodes = 4;
    request.req_nodes = 4;
    request.job.details.min_nodes = 4;
    request.job.details.max_nodes = Some(4);
    let result = plugin
        .job_test(&request)
        .unwrap_or_else(|e| panic!("job {}: {e}", job.job_id));
    job.details = request.job.details;
    job.state = JobState::Running;
    job.end_time = 4_000_000_000;
    job.resources = Some(result.resources);
    plugin.job_begin(&job).expect("job-begin");
    job
}

/// `select_p_step_start`, `select_p_step_pick_nodes` and
/// `select_p_step_finish` through the host (§4.5, §11.18), over linear and
/// cons_tres, whose own step functions do nothing: a `blade` job on
/// nid[0-3]; until a counter step starts its steps are not restricted;
/// step 1 on nid0 claims blade 0 (nid0, nid4), so the next steps may use
/// nid1-3; at step 1's end all four again. The extern step claims
/// nothing; a job without counters is never restricted. The restriction
/// outlives a restart of the plugin (its state, then `job-init`).
#[test]
fn counter_steps_keep_the_jobs_next_steps_off_their_blades() {
    const EXTERN: u32 = 0xffff_fffc;
    for inner in ["select/linear", "select/cons_tres"] {
        let host = host();
        let plugin = cray_over(&host, inner);
        plugin.set_job_network(1, Some("blade"));
        let a = start_wide(&plugin, job(1), &[0, 1, 2, 3]);
        assert_eq!(nodes_of(&a), [0, 1, 2, 3], "{inner}");
        assert_eq!(plugin.step_avail_nodes(&a).unwrap(), None, "{inner}");
        plugin
            .step_start(&a, EXTERN, &fixtures::bitmap(8, [0, 1, 2, 3]))
            .unwrap();
        assert_eq!(plugin.step_avail_nodes(&a).unwrap(), None, "{inner}");
        plugin
            .step_start(&a, 1, &fixtures::bitmap(8, [0]))
            .expect("step-start");
        let avail = plugin.step_avail_nodes(&a).unwrap().expect("restricted");
        assert_eq!(fixtures::bits(&avail), [1, 2, 3], "{inner}");

        let saved = plugin.state_save().expect("state-save");
        let after = stack(&host, inner);
        let mut config = config();
        config.cluster.select_type_parameters = plugin_params(inner);
        after.init(&config).expect("init");
        after.node_init(&nodes()).expect("node-init");
        after.state_restore(&saved).expect("state-restore");
        after.job_init(std::slice::from_ref(&a)).expect("job-init");
        let avail = after.step_avail_nodes(&a).unwrap().expect("restricted");
        assert_eq!(fixtures::bits(&avail), [1, 2, 3], "{inner} after a restart");

        plugin
            .step_finish(&fixtures::step(1, 1), false)
            .expect("step-finish");
        let avail = plugin.step_avail_nodes(&a).unwrap().expect("still a map");
        assert_eq!(fixtures::bits(&avail), [0, 1, 2, 3], "{inner}");

        let b = start_wide(&plugin, job(2), &[4, 5, 6, 7]);
        plugin
            .step_start(&b, 1, &fixtures::bitmap(8, [4]))
            .expect("step-start");
        assert_eq!(plugin.step_avail_nodes(&b).unwrap(), None, "{inner}");
    }
}

/// The step hooks pass through a wrapper over a wrapper: `select/pass_through`
/// (the SDK's defaults: `Inner::step_start`, `Inner::step_avail_nodes`)
/// over select/cray_aries over select/linear, the host serving each
/// wrapper's imported `select-steps` with the export of the plugin under
/// it.
#[test]
fn step_hooks_pass_through_an_outer_wrapper() {
    let host = host();
    let plugin = SelectPlugin::load_stack(
        &host,
        &[
            PluginSource::File(slurm_wasm_test_artifacts::PASS_THROUGH.into()),
            bundled("select/cray_aries"),
            bundled("select/linear"),
        ],
        PluginSettings::default(),
    )
    .expect("loads");
    plugin.init(&config()).expect("init");
    plugin.node_init(&nodes()).expect("node-init");
    plugin.set_job_network(1, Some("blade"));
    let a = start_wide(&plugin, job(1), &[0, 1, 2, 3]);
    plugin
        .step_start(&a, 1, &fixtures::bitmap(8, [2]))
        .expect("step-start");
    let avail = plugin.step_avail_nodes(&a).unwrap().expect("restricted");
    assert_eq!(fixtures::bits(&avail), [0, 1, 3]);
}

/// A select component without the `select-steps` export (the bundled
/// select/linear, as every plugin built before it) loads and is asked for
/// neither: its steps are not restricted and a step's start is a success,
/// Slurm's select/linear answers (`select_p_step_start` returns
/// `SLURM_SUCCESS`, `select_p_step_pick_nodes` leaves `avail_nodes`
/// unset).
#[test]
fn a_plugin_without_step_hooks_restricts_no_step() {
    let host = host();
    let plugin = SelectPlugin::load(&host, &bundled("select/linear"), PluginSettings::default())
        .expect("loads");
    plugin.init(&config()).expect("init");
    plugin.node_init(&nodes()).expect("node-init");
    let a = start(&plugin, job(1), &ALL);
    plugin
        .step_start(&a, 0, &fixtures::bitmap(8, nodes_of(&a)))
        .expect("step-start");
    assert_eq!(plugin.step_avail_nodes(&a).unwrap(), None);
}

/// `init` (select.c `select_g_init`, `select_running_linear_based`):
/// without `OTHER_CONS_RES`/`OTHER_CONS_TRES` the cray plugin counts as
/// linear-based (plugin id 107), which refuses per-CPU allocation units,
/// whatever plugin the host wired under it.
#[test]
fn without_an_other_cons_flag_per_cpu_units_are_refused() {
    let host = host();
    let plugin = stack(&host, "select/cons_tres");
    let mut config = config();
    config.cluster.select_type_parameters = SelectTypeParams::CORE | SelectTypeParams::MEMORY;
    let error = plugin.init(&config).unwrap_err();
    assert!(
        error.to_string().contains("CR_(CPU|CORE|SOCKET)"),
        "{error}"
    );
}

/// `select_p_node_init` (§3, §11.3): a node name without a number is not
/// recognisable; slurmctld stops there.
#[test]
fn a_node_name_without_a_number_is_refused() {
    let host = host();
    let plugin = stack(&host, "select/linear");
    plugin.init(&config()).expect("init");
    let mut table = nodes();
    table[3].name = "login".into();
    let error = plugin.node_init(&table).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("Node was not recognizable: login"),
        "{error}"
    );
}

/// A node health program for the tests: it writes its arguments to
/// `<dir>/args` and ends once `<dir>/go` exists, with status `<dir>/status`
/// (0 when absent).
fn health_program(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("nhc");
    let d = dir.display();
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\necho \"$@\" >> {d}/args\nwhile [ ! -e {d}/go ]; do sleep 0.02; done\n\
             exit $(cat {d}/status 2>/dev/null || echo 0)\n"
        ),
    )
    .expect("write the program");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Calls `nodeinfo-set-all` (which polls the checks) until `done` holds,
/// for at most 20 s.
fn poll_until(plugin: &SelectPlugin, done: impl Fn() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !done() {
        assert!(std::time::Instant::now() < until, "the check never ended");
        let _ = plugin.nodeinfo_set_all();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// 18.08's `select_p_job_fini` / `_job_fini` / `_run_nhc`
/// (docs/cray-aries-nhc.md §1–3), with a node health program given: the
/// program runs on the job's nodes with select/cray's arguments (`-a 0 -e
/// 1 -r <job> -u <uid> -m reservation <nids>`); until it ends the job is
/// cleaning: the inner plugin still holds its node (no other job gets
/// it), its blade stays marked, `job_ready` is false and the job itself
/// is refused. Its end releases everything. A step's check (`-a (step <<
/// 32) + job -m application`) defers the inner plugin's `step_finish`.
#[test]
fn a_node_health_check_keeps_the_job_cleaning_until_it_ends() {
    let dir = tempfile::tempdir().expect("temp dir");
    let host = host();
    let plugin = cray_over(&host, "select/linear");
    plugin.set_node_health(Some(health_program(dir.path())));
    plugin.set_job_network(1, Some("blade"));
    let mut a = start(&plugin, job(1), &[5]);
    a.user_id = 1234;

    let mut step = fixtures::step(1, 0);
    step.user_id = 1234;
    plugin.step_finish(&step, true).expect("step-finish");
    plugin.job_fini(&a).expect("job-fini");
    poll_until(&plugin, || {
        std::fs::read_to_string(dir.path().join("args")).is_ok_and(|s| s.lines().count() == 2)
    });
    let args = std::fs::read_to_string(dir.path().join("args")).expect("args");
    let lines: Vec<&str> = args.lines().collect();
    assert!(
        lines.contains(&"-a 1 -e 9 -r 1 -u 1234 -m application 5"),
        "{lines:?}"
    );
    assert!(
        lines.contains(&"-a 0 -e 1 -r 1 -u 1234 -m reservation 5"),
        "{lines:?}"
    );
    assert!(
        place(&plugin, &job(3), &[5]).is_err(),
        "the inner plugin still holds nid5"
    );
    plugin.set_job_network(2, Some("blade"));
    assert!(
        place(&plugin, &job(2), &[1]).is_err(),
        "blade 1 still marked"
    );
    assert!(!plugin.job_ready(&a).expect("job-ready"));
    assert!(
        place(&plugin, &job(1), &ALL).is_err(),
        "a cleaning job is not started"
    );

    std::fs::write(dir.path().join("status"), "3").expect("status");
    std::fs::write(dir.path().join("go"), "").expect("go");
    poll_until(&plugin, || place(&plugin, &job(3), &[5]).is_ok());
    assert_eq!(
        place(&plugin, &job(2), &[1]).unwrap(),
        [1],
        "blade 1 released"
    );
}

/// Without a program the check is denied (the default) and `job_fini` is
/// 22.05's: the node is free at once.
#[test]
fn without_a_node_health_program_a_job_ends_at_once() {
    let host = host();
    let plugin = cray_over(&host, "select/linear");
    let a = start(&plugin, job(1), &[5]);
    plugin.job_fini(&a).expect("job-fini");
    assert_eq!(place(&plugin, &job(3), &[5]).unwrap(), [5]);
}
