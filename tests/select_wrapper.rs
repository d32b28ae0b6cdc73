//! Select wrappers (issue 33): a component of the `select-wrapper` world
//! over an inner select plugin the host wires to its imported `select`.
//!
//! * `select/pass_through` (`tests/pass-through-select`, nothing but the
//!   SDK's defaults) answers as its inner plugin, the bundled
//!   select/cons_tres, and the inner plugin keeps the node and job tables
//!   (the differential over the anchor's recordings is in
//!   `select_anchor`);
//! * a fault of the inner plugin (`tests/hostile-select`: a job named
//!   `trap` or `loop`) ends the wrapper's call with `CallError::Inner`
//!   naming the inner plugin and its fault; the inner plugin's failure
//!   policy counts it, the wrapper's does not, and both serve the next
//!   call;
//! * a wrapper without an inner plugin, and an inner plugin for a
//!   component that is no wrapper, are refused at load;
//! * `select/spare_bigmem` (`examples/select-spare-bigmem`) keeps a job
//!   that does not ask for `bigmem` off the `bigmem` nodes while cons_tres
//!   finds room elsewhere.

use slurm_wasm_host::kinds::select::{
    JobTestMode, JobTestRequest, JobTestResult, PluginInfoField, PluginInfoValue,
};
use slurm_wasm_host::types::{Job, JobState, Node, ShareRequest};
use slurm_wasm_host::{
    fixtures, CallError, FailurePolicy, Host, LoadError, PluginSettings, PluginSource, SelectPlugin,
};

use crate::hostile::tight;

/// Four nodes of 1 socket x 4 cores, 1,000 MB; those in `bigmem` have the
/// `bigmem` feature.
fn nodes(bigmem: &[u32]) -> Vec<Node> {
    (0..4)
        .map(|i| {
            let mut node = fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000);
            if bigmem.contains(&i) {
                node.features = vec!["bigmem".into()];
            }
            node
        })
        .collect()
}

fn host() -> Host {
    Host::new(slurm_wasm_bundled::host_options()).expect("host")
}

fn file(path: &str) -> PluginSource {
    PluginSource::File(path.into())
}

/// `wrapper` over `inner`, initialised on [`nodes`]`(bigmem)`.
fn stack(
    host: &Host,
    wrapper: &str,
    inner: SelectPlugin,
    settings: PluginSettings,
    bigmem: &[u32],
) -> SelectPlugin {
    let plugin = SelectPlugin::load_over(host, &file(wrapper), settings, inner)
        .unwrap_or_else(|e| panic!("{wrapper}: {e}"));
    plugin.init(&fixtures::select_config()).expect("init");
    plugin.node_init(&nodes(bigmem)).expect("node-init");
    plugin
}

fn cons_tres(host: &Host) -> SelectPlugin {
    SelectPlugin::load(
        host,
        &PluginSource::Bundled("select/cons_tres".into()),
        PluginSettings::default(),
    )
    .expect("bundled select/cons_tres")
}

/// A job of `cpus` CPUs on one node, named `name`.
fn job(id: u32, name: &str, cpus: u32) -> Job {
    let mut job = fixtures::job(id);
    job.name = name.into();
    job.details.min_cpus = cpus;
    job.details.num_tasks = cpus;
    job
}

/// `job` with `--exclusive`: it takes its node whole.
fn exclusive(mut job: Job) -> Job {
    job.details.share = ShareRequest::Exclusive;
    job
}

fn request(job: &Job, mode: JobTestMode) -> JobTestRequest {
    fixtures::one_node_request(job.clone(), mode, fixtures::bitmap(4, 0..4))
}

/// Places `job` now and starts it; its nodes.
fn start(plugin: &SelectPlugin, mut job: Job) -> Vec<u32> {
    let result = plugin
        .job_test(&request(&job, JobTestMode::RunNow))
        .unwrap_or_else(|e| panic!("job {}: {e}", job.job_id));
    let nodes = fixtures::bits(&result.resources.nodes);
    job.state = JobState::Running;
    job.end_time = 4_000_000_000;
    job.time_limit = Some(60);
    job.resources = Some(result.resources);
    plugin.job_begin(&job).expect("job-begin");
    nodes
}

fn nodes_of(result: &JobTestResult) -> Vec<u32> {
    fixtures::bits(&result.resources.nodes)
}

#[test]
fn a_pass_through_wrapper_answers_as_its_inner_plugin() {
    let host = host();
    let alone = cons_tres(&host);
    alone.init(&fixtures::select_config()).expect("init");
    alone.node_init(&nodes(&[])).expect("node-init");
    let wrapped = stack(
        &host,
        slurm_wasm_test_artifacts::PASS_THROUGH,
        cons_tres(&host),
        PluginSettings::default(),
        &[],
    );
    assert_eq!(wrapped.identity().plugin_type, "select/pass_through");
    assert_eq!(
        wrapped.inner().map(|i| i.identity().plugin_type),
        Some("select/cons_tres".into())
    );
    // The same stream through both: three 3-CPU jobs fill three nodes'
    // cores as cons_tres packs them, a will-run for a fourth job and the
    // plugin's own answers.
    for (id, cpus) in [(1, 3), (2, 3), (3, 3), (4, 2)] {
        assert_eq!(
            start(&alone, job(id, "j", cpus)),
            start(&wrapped, job(id, "j", cpus)),
            "job {id}"
        );
    }
    let late = job(5, "j", 4);
    let ask = |p: &SelectPlugin| p.job_test(&request(&late, JobTestMode::WillRun));
    let (a, w) = (ask(&alone), ask(&wrapped));
    match (&a, &w) {
        (Ok(a), Ok(w)) => assert_eq!((nodes_of(a), a.start_time), (nodes_of(w), w.start_time)),
        (Err(a), Err(w)) => assert_eq!(a.slurm_code(), w.slurm_code()),
        _ => panic!("alone {a:?}, wrapped {w:?}"),
    }
    for field in [PluginInfoField::CrPlugin, PluginInfoField::SingleJobTest] {
        assert_eq!(
            alone.get_info_from_plugin(field, None).unwrap(),
            wrapped.get_info_from_plugin(field, None).unwrap()
        );
    }
    // nodeinfo: the inner plugin's records, packed as it packs them.
    wrapped.nodeinfo_set_all().expect("nodeinfo-set-all");
    alone.nodeinfo_set_all().expect("nodeinfo-set-all");
    let packed = |p: &SelectPlugin| {
        let info = p.node_nodeinfo(0).expect("node-nodeinfo");
        // SLURM_22_05_PROTOCOL_VERSION
        let bytes = p.nodeinfo_pack(info, 0x2600).expect("pack");
        p.drop_resource(info).expect("drop");
        bytes
    };
    assert_eq!(packed(&alone), packed(&wrapped));
    // State: the inner plugin's, saved and restored through the wrapper.
    assert_eq!(alone.state_save().unwrap(), wrapped.state_save().unwrap());
    // Fuel is accounted to the plugin that spent it: the inner plugin
    // spent exactly what cons_tres alone spent on the same calls; the
    // wrapper's own (passing records on) is counted apart.
    assert_eq!(wrapped.inner().unwrap().fuel_used(), alone.fuel_used());
    assert!(wrapped.fuel_used() > 0);
}

#[test]
fn a_fault_of_the_inner_plugin_is_named_as_the_inner_plugin_s_and_contained() {
    let host = host();
    let inner = SelectPlugin::load(
        &host,
        &file(slurm_wasm_test_artifacts::HOSTILE_SELECT),
        tight(FailurePolicy::Restart { max_restarts: 5 }),
    )
    .expect("select/hostile");
    // The wrapper may not fault at all: a fault counted against it would
    // disable it.
    let wrapper = stack(
        &host,
        slurm_wasm_test_artifacts::PASS_THROUGH,
        inner,
        tight(FailurePolicy::Fail),
        &[],
    );
    assert_eq!(start(&wrapper, job(1, "normal", 1)), [0]);
    for (id, misbehaviour, fault) in [(2, "trap", "trap"), (3, "loop", "fuel")] {
        let error = wrapper
            .job_test(&request(&job(id, misbehaviour, 1), JobTestMode::RunNow))
            .unwrap_err();
        let CallError::Inner {
            plugin,
            function,
            error: inner,
        } = &error
        else {
            panic!("{misbehaviour}: expected the inner plugin's failure, got {error}");
        };
        assert_eq!(
            (plugin.as_str(), *function),
            ("select/pass_through", "job-test")
        );
        let text = inner.to_string();
        assert!(
            text.contains("select/hostile") && text.contains(fault) && inner.is_fault(),
            "{misbehaviour}: {text}"
        );
        assert!(error.is_fault());
        // Both serve the next call: the inner plugin restarted with its
        // node table and running job 1 back, the wrapper was not disabled.
        assert_eq!(start(&wrapper, job(10 + id, "normal", 1)), [id - 1]);
    }
    let world = wrapper
        .get_info_from_plugin(PluginInfoField::ConfigInfo, None)
        .expect("config-info through the wrapper");
    let PluginInfoValue::Config(pairs) = world else {
        panic!("{world:?}");
    };
    let running = pairs.iter().find(|kv| kv.key == "running").unwrap();
    assert_eq!(running.value, "1,12,13");
}

#[test]
fn a_wrapper_needs_an_inner_plugin_and_only_a_wrapper_takes_one() {
    let host = host();
    let e = SelectPlugin::load(
        &host,
        &file(slurm_wasm_test_artifacts::PASS_THROUGH),
        PluginSettings::default(),
    )
    .err()
    .expect("a wrapper alone is refused");
    assert!(matches!(e, LoadError::WrapperWithoutInner { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("select/pass_through is a select wrapper"),
        "{e}"
    );
    let e = SelectPlugin::load_over(
        &host,
        &PluginSource::Bundled("select/linear".into()),
        PluginSettings::default(),
        cons_tres(&host),
    )
    .err()
    .expect("linear is no wrapper");
    assert!(matches!(e, LoadError::NotAWrapper { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("select/linear is not a select wrapper"),
        "{e}"
    );
    // A wrapper in another slot is refused as any select plugin would be.
    let e = slurm_wasm_host::PriorityPlugin::load(
        &host,
        &file(slurm_wasm_test_artifacts::PASS_THROUGH),
        PluginSettings::default(),
    )
    .err()
    .expect("not a priority plugin");
    assert!(e.to_string().contains("select"), "{e}");
}

#[test]
fn spare_bigmem_keeps_plain_jobs_off_bigmem_nodes_while_there_is_room() {
    let host = host();
    // n0 and n1 have bigmem: cons_tres alone would put the first job on n0.
    let plugin = stack(
        &host,
        slurm_wasm_test_artifacts::SPARE_BIGMEM,
        cons_tres(&host),
        PluginSettings::default(),
        &[0, 1],
    );
    assert_eq!(start(&plugin, exclusive(job(1, "a", 4))), [2]);
    assert_eq!(start(&plugin, exclusive(job(2, "b", 4))), [3]);
    // No room left off bigmem: the bigmem nodes are offered.
    assert_eq!(start(&plugin, exclusive(job(3, "c", 4))), [0]);
    // A job asking for bigmem is not steered.
    let mut asks = exclusive(job(4, "d", 2));
    asks.details.features = Some("bigmem".into());
    assert_eq!(start(&plugin, asks), [1]);
}

/// The host configuration names the stack: `[plugins.select]` the wrapper,
/// `[plugins.select.inner]` its inner plugin with limits of its own, as the
/// Slurm shims and `slurm-wasm` commands load it (`setup::load_all`).
#[test]
fn a_host_configuration_names_the_stack() {
    let text = format!(
        "[plugins.select]\nwasm = \"{}\"\n[plugins.select.inner]\nbundled = \"select/cons_tres\"\n\
         [plugins.select.inner.limits]\nfuel_per_call = 123456789\n",
        slurm_wasm_test_artifacts::PASS_THROUGH
    );
    let config = slurm_wasm_host::host_config::parse_str(&text, std::path::Path::new("/"))
        .expect("host configuration");
    let plan = slurm::setup::plan(&config, None).expect("plan");
    let loaded = slurm::setup::load_all(&host(), &plan).expect("loads");
    let select = loaded.select.expect("a select plugin");
    assert_eq!(select.identity().plugin_type, "select/pass_through");
    let inner = select.inner().expect("its inner plugin");
    assert_eq!(inner.identity().plugin_type, "select/cons_tres");
    assert_eq!(inner.settings().limits.fuel_per_call, 123_456_789);
    select.init(&fixtures::select_config()).expect("init");
    select.node_init(&nodes(&[])).expect("node-init");
    assert_eq!(start(&select, exclusive(job(1, "a", 4))), [0]);
}

/// Time spent in the inner plugin is given back to the wrapper's deadline
/// (`kinds::inner_select`): select/hostile's `slow` job-test waits 300 ms
/// and answers. Alone under a 100 ms deadline it times out (the wait is
/// longer than that deadline); as the inner plugin, under a deadline of its
/// own of 5 s, of a wrapper whose deadline is 100 ms, it answers, and the
/// wrapper's deadline has not been charged for the 300 ms.
#[test]
fn time_in_the_inner_plugin_is_not_charged_to_the_wrapper() {
    let host = host();
    let with_deadline = |ms: u64| {
        let mut settings = tight(FailurePolicy::Restart { max_restarts: 5 });
        settings.limits.deadline = std::time::Duration::from_millis(ms);
        settings
    };
    let hostile = || file(slurm_wasm_test_artifacts::HOSTILE_SELECT);
    let alone = SelectPlugin::load(&host, &hostile(), with_deadline(100)).expect("loads");
    alone.init(&fixtures::select_config()).expect("init");
    alone.node_init(&nodes(&[])).expect("node-init");
    let slow = job(1, "slow", 1);
    let error = alone
        .job_test(&request(&slow, JobTestMode::RunNow))
        .unwrap_err();
    assert!(matches!(error, CallError::Deadline { .. }), "{error}");

    let inner = SelectPlugin::load(&host, &hostile(), with_deadline(5000)).expect("loads");
    let wrapper = stack(
        &host,
        slurm_wasm_test_artifacts::PASS_THROUGH,
        inner,
        with_deadline(100),
        &[],
    );
    let started = std::time::Instant::now();
    let answer = wrapper
        .job_test(&request(&slow, JobTestMode::RunNow))
        .unwrap_or_else(|e| panic!("the wrapper was charged for its inner plugin's time: {e}"));
    assert!(started.elapsed() >= std::time::Duration::from_millis(300));
    assert_eq!(nodes_of(&answer), [0]);
}

/// `slurm-wasm check` on a select wrapper runs the select suite on it over
/// the bundled select/cons_tres (a wrapper alone cannot load); the example
/// passes every check.
#[test]
fn the_conformance_suite_checks_a_wrapper_over_a_bundled_plugin() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args(["check", slurm_wasm_test_artifacts::SPARE_BIGMEM])
        .output()
        .expect("run slurm-wasm");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("conformance of select/spare_bigmem"),
        "{text}"
    );
    assert!(
        text.contains("ok    loads as a select wrapper over a bundled plugin"),
        "{text}"
    );
    assert!(text.contains(" 0 failed"), "{text}");
}
