//! select/linear through the host (src/plugins/select/linear/select_linear.c):
//! the bundled component
//! loaded into the select slot, driven with the host's fixtures and a
//! virtual clock. Unit tests of every rule live in guests/select-linear;
//! these check the same behaviour across the component boundary, the
//! state files, and two properties over random workloads.

use std::sync::Arc;

use proptest::prelude::*;
use slurm_wasm_host::bindings::select::exports::slurm::plugin::select::{
    PreemptMode, PreempteeCandidate,
};
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::kinds::select::{
    JobTestFlags, JobTestMode, JobTestRequest, JobTestResult, JobinfoField, NodeinfoField,
    NodeinfoValue, PluginInfoField, PluginInfoValue, SelectConfig, SprintMode,
};
use slurm_wasm_host::types::{Job, JobState, MemoryRequest, Node, Oversubscribe, ShareRequest};
use slurm_wasm_host::{
    fixtures, CallError, Host, HostOptions, PluginSettings, PluginSource, SelectPlugin, Services,
};

const NOW: i64 = 1_700_000_000;
/// `NODE_STATE_ALLOCATED`.
const ALLOCATED: u32 = 3;
/// `SLURM_22_05_PROTOCOL_VERSION`.
const PROTOCOL_22_05: u16 = 38 << 8;

fn code(e: &CallError) -> i32 {
    match e {
        CallError::Plugin { code, .. } => *code,
        other => panic!("expected a plugin error, got {other}"),
    }
}

/// `n` nodes n0.. of 1 socket × 4 cores × 1 thread and 1000 MB in partition 0.
fn nodes(n: u32) -> Vec<Node> {
    (0..n)
        .map(|i| fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000))
        .collect()
}

fn config(params: &[&str], n: u32, oversubscribe: Oversubscribe) -> SelectConfig {
    let mut config = fixtures::select_config();
    config.cluster.select_type_parameters =
        slurm::option_flags::select_type_params(&params.join(",")).expect("22.05 parameters");
    let mut p = fixtures::partition(0, "p0", n);
    p.oversubscribe = oversubscribe;
    config.partitions = vec![p];
    config
}

/// The bundled plugin on a virtual clock at `NOW`, with `n` nodes.
fn linear(
    params: &[&str],
    n: u32,
    oversubscribe: Oversubscribe,
) -> (Arc<VirtualClock>, SelectPlugin) {
    let clock = Arc::new(VirtualClock::new(NOW));
    let host = Host::new(HostOptions {
        services: Services {
            clock: clock.clone(),
            ..Services::default()
        },
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    let plugin = SelectPlugin::load(
        &host,
        &PluginSource::Bundled("select/linear".into()),
        PluginSettings::default(),
    )
    .expect("load");
    plugin
        .init(&config(params, n, oversubscribe))
        .expect("init");
    plugin.node_init(&nodes(n)).expect("node-init");
    (clock, plugin)
}

fn pending(id: u32, n: u32) -> Job {
    let mut job = fixtures::job(id);
    job.details.min_nodes = n;
    job.details.min_cpus = 4 * n;
    job.details.num_tasks = 4 * n;
    job
}

fn request(job: Job, n_nodes: u32, mode: JobTestMode) -> JobTestRequest {
    let n = job.details.min_nodes;
    JobTestRequest {
        job,
        candidates: fixtures::bitmap(n_nodes, 0..n_nodes),
        min_nodes: n,
        max_nodes: n,
        req_nodes: n,
        mode,
        flags: JobTestFlags::empty(),
        preemptee_candidates: Vec::new(),
        excluded_cores: None,
    }
}

fn chosen(r: &JobTestResult) -> Vec<u32> {
    fixtures::bits(&r.resources.nodes)
}

/// Tests `job` RUN_NOW on `on` and starts it there, ending at `end`.
fn start_on(plugin: &SelectPlugin, mut job: Job, n_nodes: u32, on: &[u32], end: i64) -> Job {
    let mut req = request(job.clone(), n_nodes, JobTestMode::RunNow);
    req.candidates = fixtures::bitmap(n_nodes, on.iter().copied());
    let r = plugin.job_test(&req).expect("run-now");
    assert_eq!(chosen(&r), on);
    job.state = JobState::Running;
    job.start_time = NOW;
    job.end_time = end;
    job.resources = Some(r.resources);
    plugin.job_begin(&job).expect("job-begin");
    job
}

#[test]
fn identity_is_slurms() {
    // select_linear.c: select/linear, plugin id 102, Slurm 22.05.8.
    let (_, plugin) = linear(&[], 1, Oversubscribe::No);
    let id = plugin.identity();
    assert_eq!(id.plugin_type, "select/linear");
    assert_eq!(id.plugin_name, "Linear node selection plugin");
    assert_eq!(id.plugin_id, Some(102));
    assert_eq!(id.plugin_version, 0x16_05_08);
}

#[test]
fn init_refuses_cr_core() {
    // select_g_init (common/select.c): CR_CPU/CR_Core/CR_Socket are fatal
    // for linear.
    let (_, plugin) = linear(&[], 1, Oversubscribe::No);
    let err = plugin
        .init(&config(&["CR_Core_Memory"], 1, Oversubscribe::No))
        .unwrap_err();
    assert_eq!(code(&err), 22);
}

#[test]
fn every_mode_through_the_host() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_will_run_test` through the component, running jobs removed in
    // end-time order: J1 on n0,n1 until t+100, J2 on n2,n3 until t+50; -N3 WILL_RUN does
    // not fit when J2 ends, fits when J1 ends too => t+100 on n0-n2.
    let (clock, plugin) = linear(&["CR_Memory"], 4, Oversubscribe::No);
    let j1 = start_on(&plugin, pending(1, 2), 4, &[0, 1], NOW + 100);
    start_on(&plugin, pending(2, 2), 4, &[2, 3], NOW + 50);
    let r = plugin
        .job_test(&request(pending(3, 3), 4, JobTestMode::WillRun))
        .unwrap();
    assert_eq!(r.start_time, Some(NOW + 100));
    assert_eq!(chosen(&r), vec![0, 1, 2]);
    // The answer is the nodes and CPU count, without per-node entries
    // (Slurm frees job_resrcs after a will-run test).
    assert_eq!(r.resources.ncpus, 12);
    assert!(r.resources.per_node.is_empty());
    // RUN_NOW: every node is busy (EINVAL, as linear's _run_now).
    let err = plugin
        .job_test(&request(pending(3, 1), 4, JobTestMode::RunNow))
        .unwrap_err();
    assert_eq!(code(&err), 22);
    // TEST_ONLY ignores usage; whole nodes, and no memory (linear's
    // `_test_only` builds no job resources).
    let r = plugin
        .job_test(&request(pending(3, 3), 4, JobTestMode::TestOnly))
        .unwrap();
    assert_eq!(r.resources.ncpus, 12);
    assert!(r.resources.whole_nodes);
    assert_eq!(r.resources.per_node[2].memory, 0);
    // Preemption: J1 (requeue) frees n0,n1.
    let mut req = request(pending(3, 2), 4, JobTestMode::RunNow);
    req.preemptee_candidates = vec![PreempteeCandidate {
        job_id: 1,
        mode: PreemptMode::Requeue,
    }];
    let r = plugin.job_test(&req).unwrap();
    assert_eq!((chosen(&r), r.preemptees.clone()), (vec![0, 1], vec![1]));
    // Time moves on: J1 ends, the -N2 job runs now.
    clock.set(NOW + 100);
    plugin.job_fini(&j1).unwrap();
    let r = plugin
        .job_test(&request(pending(3, 2), 4, JobTestMode::WillRun))
        .unwrap();
    assert_eq!(r.start_time, Some(NOW + 100));
    assert_eq!(chosen(&r), vec![0, 1]);
}

#[test]
fn nodeinfo_and_jobinfo_resources() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `select_p_select_nodeinfo_set_all`; select_nodeinfo pack/unpack/get.
    let (_, plugin) = linear(&["CR_Memory"], 2, Oversubscribe::No);
    let job = start_on(&plugin, pending(1, 1), 2, &[0], NOW + 100);
    plugin.nodeinfo_set_all().unwrap();
    assert_eq!(code(&plugin.nodeinfo_set_all().unwrap_err()), 1900);
    let info = plugin.node_nodeinfo(0).unwrap();
    assert!(matches!(
        plugin
            .nodeinfo_get(info, NodeinfoField::Subcnt, ALLOCATED)
            .unwrap(),
        NodeinfoValue::Count(4)
    ));
    assert!(matches!(
        plugin
            .nodeinfo_get(info, NodeinfoField::MemAlloc, ALLOCATED)
            .unwrap(),
        NodeinfoValue::Memory(1000)
    ));
    let bytes = plugin.nodeinfo_pack(info, PROTOCOL_22_05).unwrap();
    let copy = plugin.nodeinfo_unpack(&bytes, PROTOCOL_22_05).unwrap();
    assert!(matches!(
        plugin.nodeinfo_get(copy, NodeinfoField::TresAllocFmtStr, 0).unwrap(),
        // The node's configured TRES with Slurm's default billing (its
        // CPUs), as AllocTRES showed on the anchor under select/linear.
        NodeinfoValue::Text(t) if t == "cpu=4,mem=1000M,billing=4"
    ));
    assert_eq!(
        code(
            &plugin
                .nodeinfo_unpack(&bytes[..5], PROTOCOL_22_05)
                .unwrap_err()
        ),
        22
    );
    assert_eq!(
        code(&plugin.nodeinfo_unpack(&bytes, 39 << 8).unwrap_err()),
        22
    );
    plugin.drop_resource(info).unwrap();
    plugin.drop_resource(copy).unwrap();
    // The jobinfo of linear is empty: packs to nothing, get fails.
    let ji = plugin.jobinfo_alloc().unwrap();
    assert!(plugin.jobinfo_pack(ji, PROTOCOL_22_05).unwrap().is_empty());
    assert_eq!(
        code(&plugin.jobinfo_get(ji, JobinfoField::Network).unwrap_err()),
        -1
    );
    assert_eq!(plugin.jobinfo_to_string(ji, SprintMode::Mixed).unwrap(), "");
    plugin.drop_resource(ji).unwrap();
    assert!(plugin.job_ready(&job).unwrap());
    assert!(matches!(
        plugin
            .get_info_from_plugin(PluginInfoField::CrPlugin, None)
            .unwrap(),
        PluginInfoValue::Number(0)
    ));
    assert!(plugin
        .step_pick_nodes(&job, &fixtures::step(1, 0), 1, None)
        .unwrap()
        .is_none());
    assert_eq!(plugin.ba_get_dims().unwrap(), None);
}

#[test]
fn state_save_restore_through_the_host() {
    let (_, plugin) = linear(&["CR_Memory"], 4, Oversubscribe::No);
    start_on(&plugin, pending(1, 2), 4, &[0, 1], NOW + 100);
    let blob = plugin.state_save().unwrap();
    let (_, other) = linear(&["CR_Memory"], 4, Oversubscribe::No);
    other.state_restore(&blob).unwrap();
    for mode in [JobTestMode::RunNow, JobTestMode::WillRun] {
        let a = plugin.job_test(&request(pending(2, 3), 4, mode));
        let b = other.job_test(&request(pending(2, 3), 4, mode));
        assert_eq!(
            a.map(|r| (chosen(&r), r.start_time)).map_err(|e| code(&e)),
            b.map(|r| (chosen(&r), r.start_time)).map_err(|e| code(&e))
        );
    }
    // Damaged blobs are refused and the restored state stays.
    let (_, fresh) = linear(&["CR_Memory"], 4, Oversubscribe::No);
    let mut bad = blob.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert_eq!(code(&fresh.state_restore(&bad).unwrap_err()), 22);
    assert!(fresh
        .job_test(&request(pending(2, 4), 4, JobTestMode::RunNow))
        .is_ok());
}

/// A random workload step: start a job of `nodes` nodes (asking to share
/// or not), or end the `k`-th running job.
#[derive(Debug, Clone)]
enum Step {
    Start { nodes: u32, share: bool },
    End(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u32..=3, any::<bool>()).prop_map(|(nodes, share)| Step::Start { nodes, share }),
        (0usize..8).prop_map(Step::End),
    ]
}

fn oversubscribe() -> impl Strategy<Value = Oversubscribe> {
    prop_oneof![
        Just(Oversubscribe::No),
        Just(Oversubscribe::Exclusive),
        (1u16..=3).prop_map(Oversubscribe::Yes),
        (1u16..=3).prop_map(Oversubscribe::Force),
    ]
}

/// Whether a job shares its nodes under `o` (the controller's rule; linear's
/// `max_share` in `select_p_job_test`, select_linear.c).
fn shares(o: &Oversubscribe, asked: bool) -> bool {
    match *o {
        Oversubscribe::No | Oversubscribe::Exclusive => false,
        Oversubscribe::Force(n) if n > 1 => true,
        Oversubscribe::Force(_) => false,
        Oversubscribe::Yes(n) => n > 1 && asked,
    }
}

fn nodeinfo(plugin: &SelectPlugin, n: u32) -> Vec<(u16, u64)> {
    match plugin.nodeinfo_set_all() {
        Ok(()) => {}
        Err(e) => assert_eq!(code(&e), 1900),
    }
    (0..n)
        .map(|i| {
            let info = plugin.node_nodeinfo(i).unwrap();
            let cpus = match plugin
                .nodeinfo_get(info, NodeinfoField::Subcnt, ALLOCATED)
                .unwrap()
            {
                NodeinfoValue::Count(c) => c,
                other => panic!("subcnt answered {other:?}"),
            };
            let mem = match plugin
                .nodeinfo_get(info, NodeinfoField::MemAlloc, 0)
                .unwrap()
            {
                NodeinfoValue::Memory(m) => m,
                other => panic!("mem-alloc answered {other:?}"),
            };
            plugin.drop_resource(info).unwrap();
            (cpus, mem)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// No node holds more running jobs than the partition's OverSubscribe
    /// allows, and a node holds several only when all of them share
    /// (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap` and `select_p_job_test`); ending every job restores the nodeinfo (`_rm_job_from_nodes`).
    #[test]
    fn sharing_limits_hold_and_fini_restores(
        o in oversubscribe(),
        steps in proptest::collection::vec(step(), 1..24),
    ) {
        const N: u32 = 5;
        let (_, plugin) = linear(&["CR_Memory"], N, o);
        let initial = nodeinfo(&plugin, N);
        let limit = match o {
            Oversubscribe::No | Oversubscribe::Exclusive => 1,
            Oversubscribe::Yes(n) | Oversubscribe::Force(n) => u32::from(n),
        };
        let mut running: Vec<(Job, bool)> = Vec::new();
        let mut next_id = 1;
        for s in steps {
            match s {
                Step::Start { nodes: n, share } => {
                    let mut job = pending(next_id, n);
                    next_id += 1;
                    job.details.memory = MemoryRequest::PerNode(100);
                    if share {
                        job.details.share = ShareRequest::Oversubscribe;
                    }
                    if let Ok(r) = plugin.job_test(&request(job.clone(), N, JobTestMode::RunNow)) {
                        job.state = JobState::Running;
                        job.end_time = NOW + 100;
                        job.resources = Some(r.resources);
                        plugin.job_begin(&job).unwrap();
                        running.push((job, shares(&o, share)));
                    }
                }
                Step::End(k) if !running.is_empty() => {
                    let (job, _) = running.remove(k % running.len());
                    plugin.job_fini(&job).unwrap();
                }
                Step::End(_) => {}
            }
            for node in 0..N {
                let on: Vec<&(Job, bool)> = running
                    .iter()
                    .filter(|(j, _)| fixtures::bits(&j.resources.as_ref().unwrap().nodes).contains(&node))
                    .collect();
                prop_assert!(on.len() as u32 <= limit, "node {node}: {} jobs, limit {limit}", on.len());
                if on.len() > 1 {
                    prop_assert!(on.iter().all(|(_, s)| *s), "node {node} shared by a job that may not share");
                }
            }
        }
        for (job, _) in running.drain(..) {
            plugin.job_fini(&job).unwrap();
        }
        prop_assert_eq!(nodeinfo(&plugin, N), initial);
    }
}
