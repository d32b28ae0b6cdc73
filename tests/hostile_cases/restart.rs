//! Issue 26, classes 2 and 3: a restarted plugin gets its world back, and a
//! plugin whose `init` failed never answers.
//!
//! Before: a restarted select plugin got only `init` (its node table and
//! running jobs were gone, so every later job-test failed with "the node
//! table has 0 nodes"), and a plugin whose `init` trapped was restarted
//! uninitialised and answered calls. Slurm itself never runs a plugin whose
//! `init` failed (`plugin_context_create` fails and the daemon stops), and
//! gives a select plugin its nodes and running jobs back after a restart
//! (`select_g_node_init`, then `select_g_job_init`/`select_g_reconfigure`).

use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::kinds::select::{
    JobTestMode, JobTestRequest, PluginInfoField, PluginInfoValue,
};
use slurm_wasm_host::types::{Job, KeyValue};
use slurm_wasm_host::{
    fixtures, CallError, FailurePolicy, Host, HostOptions, PluginSettings, PluginSource,
    SelectPlugin, Services, TaskPlugin,
};

fn hostile_select() -> PluginSource {
    PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_SELECT.into())
}

/// select/hostile's world, as its `config-info` reports it.
fn world(plugin: &SelectPlugin) -> Vec<(String, String)> {
    match plugin
        .get_info_from_plugin(PluginInfoField::ConfigInfo, None)
        .expect("config-info")
    {
        PluginInfoValue::Config(pairs) => pairs
            .into_iter()
            .map(|KeyValue { key, value }| (key, value))
            .collect(),
        other => panic!("config-info answered {other:?}"),
    }
}

fn value<'a>(world: &'a [(String, String)], key: &str) -> &'a str {
    world
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no `{key}` in {world:?}"))
}

/// A job that runs on `nodes` of a 4-node cluster, whole, as select/hostile
/// answered for it.
fn running(plugin: &SelectPlugin, id: u32) -> Job {
    let mut job = fixtures::job(id);
    job.name = "normal".into();
    let result = plugin.job_test(&run_now(job.clone())).expect("job-test");
    job.resources = Some(result.resources);
    job
}

fn run_now(job: Job) -> JobTestRequest {
    fixtures::one_node_request(job, JobTestMode::RunNow, fixtures::bitmap(4, 0..4))
}

fn four_nodes() -> Vec<slurm_wasm_host::types::Node> {
    (0..4)
        .map(|i| fixtures::node(i, &format!("n{i}"), 1, 4, 1, 8000))
        .collect()
}

/// select/hostile with nodes n0-n3, jobs 1 and 2 started and job 1 ended:
/// job 2 holds one node.
fn populated(failure: FailurePolicy) -> (SelectPlugin, Job) {
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let plugin = SelectPlugin::load(
        &host,
        &hostile_select(),
        PluginSettings {
            failure,
            ..PluginSettings::default()
        },
    )
    .expect("select/hostile loads");
    let mut config = fixtures::select_config();
    config.cluster.cluster_name = "c1".into();
    config.partitions = vec![fixtures::partition(0, "debug", 4)];
    plugin.init(&config).expect("init");
    plugin.node_init(&four_nodes()).expect("node-init");
    let first = running(&plugin, 1);
    plugin.job_begin(&first).expect("job-begin 1");
    let second = running(&plugin, 2);
    plugin.job_begin(&second).expect("job-begin 2");
    plugin.job_fini(&first).expect("job-fini 1");
    (plugin, second)
}

fn provoke_trap(plugin: &SelectPlugin) {
    let mut job = fixtures::job(9);
    job.name = "trap".into();
    let err = plugin.job_test(&run_now(job)).unwrap_err();
    assert!(matches!(err, CallError::Trap { .. }), "{err:?}");
}

#[test]
fn a_restarted_select_plugin_gets_its_node_table_and_running_jobs_back() {
    let (plugin, second) = populated(FailurePolicy::Restart { max_restarts: 3 });
    let before = world(&plugin);
    assert_eq!(value(&before, "running"), "2");
    provoke_trap(&plugin);
    let after = world(&plugin);
    assert_eq!(after, before, "the restarted instance's world");
    assert_eq!(value(&after, "nodes"), "4");
    assert_eq!(value(&after, "cluster"), "c1");
    // The next job gets a node job 2 does not hold.
    let held = &second.resources.as_ref().expect("resources").nodes;
    let next = plugin
        .job_test(&run_now(fixtures::job(3)))
        .expect("job-test");
    assert!(
        fixtures::bits(&next.resources.nodes)
            .iter()
            .all(|n| !fixtures::bits(held).contains(n)),
        "{:?} overlaps job 2's {:?}",
        fixtures::bits(&next.resources.nodes),
        fixtures::bits(held)
    );
}

#[test]
fn a_fallback_select_plugin_gets_the_running_jobs_too() {
    // select/linear takes over from select/hostile: it must know job 2 holds
    // its node, or it would give that node to the next whole-node job.
    let (plugin, second) = populated(FailurePolicy::Fallback {
        plugin: "select/linear".into(),
        max_restarts: 3,
    });
    provoke_trap(&plugin);
    assert_eq!(plugin.identity().plugin_type, "select/linear");
    let held = fixtures::bits(&second.resources.as_ref().expect("resources").nodes);
    for id in 3..6 {
        let job = fixtures::job(id);
        let placed = plugin.job_test(&run_now(job.clone())).expect("job-test");
        let nodes = fixtures::bits(&placed.resources.nodes);
        assert!(
            nodes.iter().all(|n| !held.contains(n)),
            "job {id} got {nodes:?}, held by job 2: {held:?}"
        );
        let mut started = job;
        started.resources = Some(placed.resources);
        plugin.job_begin(&started).expect("job-begin");
    }
    // Three free nodes, three jobs: the fourth finds none.
    let err = plugin.job_test(&run_now(fixtures::job(6))).unwrap_err();
    assert!(matches!(err, CallError::Plugin { .. }), "{err:?}");
}

#[test]
fn a_plugin_whose_init_trapped_does_not_answer_until_init_succeeds() {
    // task/hostile_runtime's init traps while the clock reads INIT_TRAPS_AT.
    let clock = std::sync::Arc::new(VirtualClock::new(3_000));
    let host = Host::new(HostOptions {
        services: Services {
            clock: clock.clone(),
            ..Services::default()
        },
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    let plugin = TaskPlugin::load(
        &host,
        &PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_RUNTIME.into()),
        PluginSettings::default(),
    )
    .expect("loads");
    let err = plugin.init(&fixtures::task_config()).unwrap_err();
    assert!(matches!(err, CallError::Trap { .. }), "{err:?}");
    let err = plugin
        .slurmd_launch_request(&fixtures::launch_request(1, 1, 1))
        .unwrap_err();
    assert!(matches!(err, CallError::NotInitialised { .. }), "{err:?}");
    super::assert_names(
        &err.to_string(),
        &[
            "task/hostile_runtime",
            "slurmd-launch-request",
            "init has not succeeded",
        ],
    );
    // Once init succeeds the plugin serves.
    clock.set(0);
    plugin.init(&fixtures::task_config()).expect("init");
    plugin
        .slurmd_launch_request(&fixtures::launch_request(1, 1, 1))
        .expect("serves after init");
}

#[test]
fn a_select_plugin_whose_init_trapped_is_not_restarted_uninitialised() {
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let plugin = SelectPlugin::load(&host, &hostile_select(), PluginSettings::default())
        .expect("select/hostile loads");
    let mut config = fixtures::select_config();
    config.cluster.cluster_name = "trap".into();
    assert!(matches!(
        plugin.init(&config).unwrap_err(),
        CallError::Trap { .. }
    ));
    for _ in 0..5 {
        let err = plugin.node_init(&four_nodes()).unwrap_err();
        assert!(matches!(err, CallError::NotInitialised { .. }), "{err:?}");
    }
}

#[test]
fn a_restarted_priority_plugin_gets_its_associations_and_jobs_back() {
    use slurm_wasm_host::kinds::priority::AssociationUpdate;
    use slurm_wasm_host::PriorityPlugin;
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let plugin = PriorityPlugin::load(
        &host,
        &PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_PRIORITY.into()),
        PluginSettings::default(),
    )
    .expect("priority/hostile loads");
    plugin.init(&fixtures::priority_config()).expect("init");
    let added = fixtures::association(42, None, "acct42", None, 1);
    plugin
        .update_associations(&[AssociationUpdate::Upsert(added)])
        .expect("update-associations");
    let priority = plugin.set(0xffff_0000, &fixtures::job(7)).expect("set");
    let before = plugin.association_usages().expect("usages");
    let mut trap = fixtures::job(8);
    trap.name = "trap".into();
    assert!(matches!(
        plugin.set(0xffff_0000, &trap).unwrap_err(),
        CallError::Trap { .. }
    ));
    // The restarted instance knows job 7 (calculate names it by id only) and
    // association 42.
    assert_eq!(
        plugin.calculate(&[], &[7]).expect("calculate"),
        [(7, priority)]
    );
    let after = plugin.association_usages().expect("usages");
    assert_eq!(
        after.iter().map(|u| u.id).collect::<Vec<_>>(),
        before.iter().map(|u| u.id).collect::<Vec<_>>()
    );
    assert!(after.iter().any(|u| u.id == 42), "{after:?}");
}
