//! Issue 26, class 11 (select and priority answers): what a plugin answers
//! is checked against what the host offered and what the contract allows,
//! so a hostile answer ends in `CallError::Invalid` naming plugin, function
//! and rule, and the same plugin serves the next normal call (an invalid
//! answer is not a fault: even under `FailurePolicy::Fail` it stays up).
//!
//! Before: the host passed these answers on unchecked, and the simulator
//! printed 899,125,101% utilization from an `ncpus` of `u32::MAX`. The
//! rules come from the contract's doc comments (wit/select.wit,
//! wit/priority.wit) and Slurm's controller (src/slurmctld/job_mgr.c:
//! priority 0 means held; `recover` adds at most the boost the controller
//! offered, as `sync_job_priorities` does).
//!
//! The plugins are `tests/hostile-select` (select/hostile) and
//! `tests/hostile-priority` (priority/hostile): each misbehaviour is named by
//! a job's name, by an association's account, or armed by select/hostile's
//! `job-signal` for a function that gets no job.

use slurm_wasm_host::kinds::priority::{AssociationUpdate, FactorsRequest};
use slurm_wasm_host::kinds::select::{
    JobTestMode, JobTestRequest, JobinfoField, NodeinfoField, NodeinfoValue, PluginInfoField,
    PluginInfoValue, PreemptMode, PreempteeCandidate, ReservationRequest,
};
use slurm_wasm_host::types::{GresCount, Job, Node};
use slurm_wasm_host::{
    fixtures, CallError, FailurePolicy, Host, PluginSource, PriorityPlugin, SelectPlugin,
};

use super::{assert_names, tight};

/// select/hostile's and priority/hostile's "stranger": an id never offered.
const STRANGER: &str = "4000000000";
/// The cluster: 4 nodes of 1 socket x 4 cores (4 CPUs), 1,000 MB.
const NODES: u32 = 4;

fn nodes() -> Vec<Node> {
    (0..NODES)
        .map(|i| fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000))
        .collect()
}

/// select/hostile on [`nodes`], under `fail`: were an invalid answer a
/// fault, the plugin would be disabled and the next call would say so.
fn select() -> SelectPlugin {
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let source = PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_SELECT.into());
    let plugin = SelectPlugin::load(&host, &source, tight(FailurePolicy::Fail)).expect("loads");
    plugin.init(&fixtures::select_config()).expect("init");
    plugin.node_init(&nodes()).expect("node-init");
    plugin
}

/// priority/hostile with one association (1, account `root`), under `fail`.
fn priority() -> PriorityPlugin {
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let source = PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_PRIORITY.into());
    let plugin = PriorityPlugin::load(&host, &source, tight(FailurePolicy::Fail)).expect("loads");
    plugin.init(&fixtures::priority_config()).expect("init");
    associations(&plugin, &[(1, "root")]);
    plugin
}

fn associations(plugin: &PriorityPlugin, accounts: &[(u32, &str)]) {
    let updates: Vec<AssociationUpdate> = accounts
        .iter()
        .map(|&(id, account)| {
            AssociationUpdate::Upsert(fixtures::association(id, None, account, None, 1))
        })
        .collect();
    plugin
        .update_associations(&updates)
        .expect("update-associations");
}

/// Job `id`, named `name` (the behaviour it asks of the plugin).
fn named(id: u32, name: &str) -> Job {
    Job {
        name: name.into(),
        ..fixtures::job(id)
    }
}

/// A one-node job-test over every node.
fn test(job: Job, mode: JobTestMode) -> JobTestRequest {
    fixtures::one_node_request(job, mode, fixtures::bitmap(NODES, 0..NODES))
}

/// Job `id` placed and started by select/hostile: it holds the next free node.
fn start(plugin: &SelectPlugin, id: u32) -> Job {
    let mut job = fixtures::job(id);
    let result = plugin
        .job_test(&test(job.clone(), JobTestMode::RunNow))
        .expect("job-test");
    job.resources = Some(result.resources);
    plugin.job_begin(&job).expect("job-begin");
    job
}

/// Arms select/hostile's `behaviour` for its next function without a job.
fn arm(plugin: &SelectPlugin, behaviour: &str) {
    plugin
        .job_signal(&named(99, behaviour), 0)
        .expect("job-signal");
}

/// `result` is an invalid-answer error of `plugin`'s `function` whose
/// message holds each of `parts`.
fn refused<T: std::fmt::Debug>(
    result: Result<T, CallError>,
    plugin: &str,
    function: &str,
    parts: &[&str],
) {
    let err = result.expect_err("the answer is refused");
    assert!(
        matches!(&err, CallError::Invalid { function: f, .. } if *f == function),
        "{err:?}"
    );
    let message = err.to_string();
    assert_names(&message, &[plugin, function, "invalid result"]);
    assert_names(&message, parts);
}

fn refused_select<T: std::fmt::Debug>(
    result: Result<T, CallError>,
    function: &str,
    parts: &[&str],
) {
    refused(result, "select/hostile", function, parts);
}

fn refused_priority<T: std::fmt::Debug>(
    result: Result<T, CallError>,
    function: &str,
    parts: &[&str],
) {
    refused(result, "priority/hostile", function, parts);
}

/// select/hostile still places a normal job.
fn select_serves(plugin: &SelectPlugin) {
    let result = plugin
        .job_test(&test(named(50, "normal"), JobTestMode::RunNow))
        .expect("the plugin serves on after an invalid answer");
    assert_eq!(result.resources.ncpus, 4);
}

/// priority/hostile still prioritises a normal job.
fn priority_serves(plugin: &PriorityPlugin) {
    let p = plugin
        .set(100, &named(50, "normal"))
        .expect("the plugin serves on after an invalid answer");
    assert_eq!(p, 99);
}

#[test]
fn job_test_ncpus_beyond_the_chosen_nodes_is_refused() {
    let plugin = select();
    refused_select(
        plugin.job_test(&test(named(1, "ncpus-max"), JobTestMode::RunNow)),
        "job-test",
        // whole nodes: a total above the per-node counts is allowed up to
        // the nodes' CPUs (Slurm's `total_cpus` of whole nodes)
        &["ncpus = 4294967295, more than the 4 CPUs of the chosen nodes"],
    );
    // A will-run answer has no per-node entries: ncpus is bounded by the
    // chosen nodes' CPUs (the simulator sums it into utilization).
    refused_select(
        plugin.job_test(&test(named(1, "ncpus-max"), JobTestMode::WillRun)),
        "job-test",
        &["ncpus = 4294967295, more than the 4 CPUs of the chosen nodes"],
    );
    select_serves(&plugin);
}

#[test]
fn allocated_gpus_are_among_the_nodes_gpus() {
    let plugin = select();
    let mut with_gpus = nodes();
    for node in &mut with_gpus {
        node.gres = vec![GresCount {
            name: "gpu".into(),
            type_name: None,
            count: 2,
        }];
    }
    plugin.node_init(&with_gpus).expect("node-init");
    refused_select(
        plugin.job_test(&test(named(1, "gpu-beyond"), JobTestMode::RunNow)),
        "job-test",
        &["gpu device 2 allocated on n0, which has 2"],
    );
    select_serves(&plugin);
}

#[test]
fn preemptees_must_be_offered_candidates_named_once() {
    let plugin = select();
    let mut request = test(named(1, "preempt-stranger"), JobTestMode::RunNow);
    request.preemptee_candidates = vec![PreempteeCandidate {
        job_id: 7,
        mode: PreemptMode::Requeue,
    }];
    refused_select(
        plugin.job_test(&request),
        "job-test",
        &[
            &format!("preemptee {STRANGER}"),
            "not among the 1 preemption candidates",
        ],
    );
    request.job.name = "preempt-twice".into();
    refused_select(
        plugin.job_test(&request),
        "job-test",
        &["preemptee 7 is named twice"],
    );
    select_serves(&plugin);
}

#[test]
fn will_run_starts_are_between_the_epoch_and_year_9999() {
    let plugin = select();
    for (name, start) in [("start-max", i64::MAX), ("start-min", i64::MIN)] {
        refused_select(
            plugin.job_test(&test(named(1, name), JobTestMode::WillRun)),
            "job-test",
            &[&format!("start-time {start} is outside 0..=253402300799")],
        );
    }
    let fine = plugin
        .job_test(&test(named(1, "normal"), JobTestMode::WillRun))
        .expect("a will-run answer starting now");
    assert!(fine.start_time.is_some());
}

#[test]
fn job_expand_keeps_to_the_two_jobs_nodes_and_cpus() {
    let plugin = select();
    let from = start(&plugin, 1);
    let to = Job {
        name: "expand-stranger".into(),
        ..start(&plugin, 2)
    };
    refused_select(
        plugin.job_expand(&from, &to),
        "job-expand",
        &["node 2 was given to job 2 but neither job 1 nor job 2 held it"],
    );
    let to = Job {
        name: "ncpus-max".into(),
        ..to
    };
    refused_select(
        plugin.job_expand(&from, &to),
        "job-expand",
        &["ncpus = 4294967295, more than the 8 CPUs of the two jobs and their nodes"],
    );
    let merged = plugin
        .job_expand(
            &from,
            &Job {
                name: "normal".into(),
                ..to
            },
        )
        .expect("a normal expansion");
    assert_eq!(fixtures::bits(&merged.nodes), [0, 1]);
}

#[test]
fn step_nodes_are_picked_from_what_was_offered() {
    let plugin = select();
    let job = Job {
        name: "pick-stranger".into(),
        ..start(&plugin, 1)
    };
    let step = fixtures::step(1, 0);
    let available = fixtures::bitmap(NODES, [0]);
    refused_select(
        plugin.step_pick_nodes(&job, &step, 1, Some(&available)),
        "step-pick-nodes",
        &["node 1 was picked but is not among the available nodes"],
    );
    // Without `available`, the job's own nodes are the offer.
    refused_select(
        plugin.step_pick_nodes(&job, &step, 1, None),
        "step-pick-nodes",
        &["node 1 was picked but is not among the job's nodes"],
    );
    let job = Job {
        name: "pick-extra".into(),
        ..job
    };
    let two = fixtures::bitmap(NODES, [0, 3]);
    refused_select(
        plugin.step_pick_nodes(&job, &step, 1, Some(&two)),
        "step-pick-nodes",
        &["2 nodes picked for a step of 1 nodes"],
    );
    let job = Job {
        name: "normal".into(),
        ..job
    };
    assert!(plugin
        .step_pick_nodes(&job, &step, 1, Some(&two))
        .expect("a normal answer")
        .is_none());
}

fn reservation(node_count: u32, core_count: u32, available: &[u32]) -> ReservationRequest {
    ReservationRequest {
        node_count,
        core_count,
        cores_per_node: Vec::new(),
        available: fixtures::bitmap(NODES, available.iter().copied()),
        excluded_cores: None,
        flags: 0,
    }
}

#[test]
fn reservations_stay_inside_what_was_offered_and_asked() {
    let plugin = select();
    arm(&plugin, "resv-stranger");
    refused_select(
        plugin.resv_test(&reservation(1, 0, &[1, 2])),
        "resv-test",
        &["node 0 was reserved but is not among the available nodes"],
    );
    arm(&plugin, "resv-extra");
    refused_select(
        plugin.resv_test(&reservation(1, 0, &[0, 1, 2])),
        "resv-test",
        &["3 nodes reserved for a reservation of 1 nodes"],
    );
    let mut cores = reservation(0, 1, &[0, 1]);
    cores.excluded_cores = Some(fixtures::bitmap(NODES * 4, [0]));
    arm(&plugin, "resv-excluded-core");
    refused_select(
        plugin.resv_test(&cores),
        "resv-test",
        &["core 0 was reserved but is excluded"],
    );
    arm(&plugin, "resv-core-outside");
    refused_select(
        plugin.resv_test(&cores),
        "resv-test",
        &["core 15 (core 3 of n3) was reserved on a node the answer did not choose"],
    );
    // Unarmed: core 1 of n0, the first core not excluded.
    let fine = plugin.resv_test(&cores).expect("a normal core reservation");
    assert_eq!(fixtures::bits(&fine.nodes), [0]);
    assert_eq!(fine.cores.as_ref().map(fixtures::bits), Some(vec![1]));
}

#[test]
fn plugin_info_answers_the_kind_its_field_reads() {
    let plugin = select();
    refused_select(
        plugin.get_info_from_plugin(
            PluginInfoField::ConfigInfo,
            Some(&named(1, "info-mismatch")),
        ),
        "get-info-from-plugin",
        &["config-info answered with a flag"],
    );
    arm(&plugin, "info-mismatch");
    refused_select(
        plugin.get_info_from_plugin(PluginInfoField::CrPlugin, None),
        "get-info-from-plugin",
        &["cr-plugin answered with key/value pairs"],
    );
    assert!(matches!(
        plugin.get_info_from_plugin(PluginInfoField::ConfigInfo, None),
        Ok(PluginInfoValue::Config(_))
    ));
}

#[test]
fn nodeinfo_values_match_their_field_and_the_nodes() {
    let plugin = select();
    start(&plugin, 1);
    let info = plugin.node_nodeinfo(0).expect("node-nodeinfo");
    arm(&plugin, "nodeinfo-mismatch");
    refused_select(
        plugin.nodeinfo_get(info, NodeinfoField::Subcnt, 3),
        "select-nodeinfo.get",
        &["subcnt answered with a text"],
    );
    arm(&plugin, "nodeinfo-cpus");
    refused_select(
        plugin.nodeinfo_get(info, NodeinfoField::Subcnt, 3),
        "select-nodeinfo.get",
        &["subcnt = 65535 CPUs, more than any node has (4)"],
    );
    arm(&plugin, "nodeinfo-nan");
    refused_select(
        plugin.nodeinfo_get(info, NodeinfoField::TresAllocWeighted, 3),
        "select-nodeinfo.get",
        &["tres-alloc-weighted = NaN"],
    );
    assert!(matches!(
        plugin.nodeinfo_get(info, NodeinfoField::Subcnt, 3),
        Ok(NodeinfoValue::Count(4))
    ));
}

#[test]
fn jobinfo_values_match_their_field() {
    let plugin = select();
    let info = plugin.jobinfo_alloc().expect("jobinfo");
    arm(&plugin, "jobinfo-mismatch");
    refused_select(
        plugin.jobinfo_get(info, JobinfoField::Network),
        "select-jobinfo.get",
        &["network answered with a flag"],
    );
    // Unarmed: select/hostile keeps no per-job data, a plugin error.
    assert!(matches!(
        plugin.jobinfo_get(info, JobinfoField::Network),
        Err(CallError::Plugin { .. })
    ));
}

#[test]
fn block_allocator_dimensions_are_at_most_five() {
    let plugin = select();
    arm(&plugin, "dims-many");
    refused_select(
        plugin.ba_get_dims(),
        "ba-get-dims",
        &["6 dimensions, more than Slurm's 5"],
    );
    assert_eq!(plugin.ba_get_dims().unwrap(), None);
}

#[test]
fn calculate_prioritises_the_calls_jobs_once_and_never_holds() {
    let plugin = priority();
    for (id, name) in [(1, "calc-stranger"), (2, "calc-twice"), (3, "calc-zero")] {
        plugin.set(100, &named(id, name)).expect("set");
    }
    refused_priority(
        plugin.calculate(&[], &[1]),
        "calculate",
        &[&format!(
            "a priority for job {STRANGER}, which is not pending or running in this call"
        )],
    );
    refused_priority(
        plugin.calculate(&[], &[2]),
        "calculate",
        &["job 2 is given a priority twice"],
    );
    refused_priority(
        plugin.calculate(&[], &[3]),
        "calculate",
        &["priority 0 for job 3 (0 means held"],
    );
    priority_serves(&plugin);
    assert_eq!(plugin.calculate(&[], &[50]).unwrap(), [(50, 99)]);
}

#[test]
fn recover_boosts_no_more_than_offered() {
    let plugin = priority();
    let mut job = named(1, "recover-max");
    job.priority = 10;
    refused_priority(
        plugin.recover(2_000_000, std::slice::from_ref(&job)),
        "recover",
        &["a boost of 4294967295 where 2000000 was offered"],
    );
    job.name = "recover-stranger".into();
    refused_priority(
        plugin.recover(2_000_000, std::slice::from_ref(&job)),
        "recover",
        &[&format!(
            "a priority for job {STRANGER}, which is not among the jobs recovered"
        )],
    );
    job.name = "normal".into();
    assert_eq!(
        plugin.recover(2_000_000, &[job]).unwrap(),
        (2_000_000, vec![(1, 2_000_010)])
    );
}

#[test]
fn association_usages_are_numbers_of_the_associations_asked() {
    let plugin = priority();
    associations(&plugin, &[(2, "usage-nan")]);
    refused_priority(
        plugin.set_assoc_usage(2),
        "set-assoc-usage",
        &["association 2: usage-raw = NaN"],
    );
    refused_priority(
        plugin.association_usages(),
        "association-usages",
        &["association 2: usage-raw = NaN"],
    );
    associations(&plugin, &[(2, "usage-negative"), (3, "usage-stranger")]);
    refused_priority(
        plugin.set_assoc_usage(2),
        "set-assoc-usage",
        &["association 2: usage-raw = -1"],
    );
    refused_priority(
        plugin.set_assoc_usage(3),
        "set-assoc-usage",
        &[&format!(
            "the usage of association {STRANGER} where 3 was asked for"
        )],
    );
    plugin
        .update_associations(&[AssociationUpdate::Remove(2), AssociationUpdate::Remove(3)])
        .unwrap();
    let usages = plugin.association_usages().expect("the plugin serves on");
    assert_eq!(usages.iter().map(|u| u.id).collect::<Vec<_>>(), [1]);
}

#[test]
fn sprio_rows_are_only_for_the_jobs_given() {
    let plugin = priority();
    let all = FactorsRequest {
        job_ids: Vec::new(),
        user_ids: Vec::new(),
        partitions: Vec::new(),
    };
    refused_priority(
        plugin.get_priority_factors_list(&[named(1, "factors-stranger")], &all, 0),
        "get-priority-factors-list",
        &[&format!("a row for job {STRANGER}, which was not given")],
    );
    let rows = plugin
        .get_priority_factors_list(&[named(1, "normal")], &all, 0)
        .expect("the plugin serves on");
    assert_eq!(rows[0].job_id, 1);
    assert_eq!(rows[0].partition, "debug", "the partition named by init");
}
