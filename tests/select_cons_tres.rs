//! select/cons_tres through the host's typed `SelectPlugin` handle
//! (src/plugins/select/cons_tres): identity, the cons_res alias, placements Slurm's docs and tests
//! show (cpu_management.shtml, python test_144_8), GRES, nodeinfo,
//! and properties of the usage tables.

use std::sync::OnceLock;

use proptest::prelude::*;
use slurm_wasm_host::bindings::select::exports::slurm::plugin::select::{
    PreemptMode, PreempteeCandidate,
};
use slurm_wasm_host::fixtures;
use slurm_wasm_host::kinds::select::{
    JobTestFlags, JobTestMode, JobTestRequest, JobTestResult, NodeinfoField, NodeinfoValue,
    PluginInfoField, PluginInfoValue, SelectConfig,
};
use slurm_wasm_host::types::{
    GresDeviceGroup, GresFlags, GresRequest, GresScope, Job, JobState, KeyValue, MemoryRequest,
    Node, NodeStateFlags,
};
use slurm_wasm_host::{CallError, Host, PluginSettings, PluginSource, SelectPlugin};

fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| Host::new(slurm_wasm_bundled::host_options()).expect("host"))
}

fn load(plugin_type: &str) -> SelectPlugin {
    SelectPlugin::load(
        host(),
        &PluginSource::Bundled(plugin_type.into()),
        PluginSettings::default(),
    )
    .expect("load")
}

pub(crate) fn config(params: &[&str], nodes: u32, select_type: &str) -> SelectConfig {
    let mut c = fixtures::select_config();
    c.cluster.select_type_parameters =
        slurm::option_flags::select_type_params(&params.join(",")).expect("22.05 parameters");
    c.cluster.raw.push(KeyValue {
        key: "SelectType".into(),
        value: select_type.into(),
    });
    c.partitions = vec![fixtures::partition(0, "debug", nodes)];
    c
}

pub(crate) fn nodes(n: u32, s: u16, c: u16, t: u16, mem: u64) -> Vec<Node> {
    (0..n)
        .map(|i| fixtures::node(i, &format!("n{i}"), s, c, t, mem))
        .collect()
}

pub(crate) fn job(id: u32, nodes: u32, tasks: u32, cpt: u16) -> Job {
    let mut j = fixtures::job(id);
    j.details.min_nodes = nodes;
    j.details.num_tasks = tasks;
    j.details.cpus_per_task = cpt;
    j.details.min_cpus = tasks.max(1) * cpt as u32;
    j.details.pn_min_cpus = cpt;
    j
}

pub(crate) fn request(n: u32, job: Job, mode: JobTestMode) -> JobTestRequest {
    JobTestRequest {
        min_nodes: job.details.min_nodes,
        max_nodes: job.details.max_nodes.unwrap_or(0),
        req_nodes: job.details.min_nodes,
        job,
        candidates: fixtures::bitmap(n, 0..n),
        mode,
        flags: JobTestFlags::empty(),
        preemptee_candidates: Vec::new(),
        excluded_cores: None,
    }
}

fn per_node(r: &JobTestResult) -> Vec<(u32, Vec<u32>, u16)> {
    r.resources
        .per_node
        .iter()
        .map(|n| (n.node_index, fixtures::bits(&n.cores), n.cpus))
        .collect()
}

fn code(e: CallError) -> i32 {
    match e {
        CallError::Plugin { code, .. } => code,
        other => panic!("expected a plugin error, got {other}"),
    }
}

#[test]
fn identity_is_slurms() {
    // cons_tres/select_cons_tres.c: plugin_type, plugin_name, plugin_id 109,
    // version 22.05.8 (SLURM_VERSION_NUMBER, checked by common/plugin.c).
    let id = load("select/cons_tres").identity();
    assert_eq!(id.plugin_type, "select/cons_tres");
    assert_eq!(
        id.plugin_name,
        "Trackable RESources (TRES) Selection plugin"
    );
    assert_eq!(id.plugin_id, Some(109));
    assert_eq!(id.plugin_version, 0x16_05_08);
}

#[test]
fn cons_res_alias_reports_cr_plugin_1_and_refuses_gpus() {
    // cons_res shares the cons_common code and refuses --gpus
    // (gres_job_state_validate, common/gres.c); SELECT_CR_PLUGIN is
    // SELECT_TYPE_CONS_RES (1) vs SELECT_TYPE_CONS_TRES (2).
    let tres = load("select/cons_tres");
    tres.init(&config(&["CR_Core"], 1, "select/cons_tres"))
        .unwrap();
    assert!(matches!(
        tres.get_info_from_plugin(PluginInfoField::CrPlugin, None)
            .unwrap(),
        PluginInfoValue::Number(2)
    ));
    // The host's setup loads select/cons_tres for `SelectType=select/cons_res`
    // and passes the written SelectType in `raw`.
    let res = load("select/cons_tres");
    res.init(&config(&["CR_Core"], 1, "select/cons_res"))
        .unwrap();
    res.node_init(&nodes(1, 2, 4, 1, 1000)).unwrap();
    assert!(matches!(
        res.get_info_from_plugin(PluginInfoField::CrPlugin, None)
            .unwrap(),
        PluginInfoValue::Number(1)
    ));
    let mut j = job(1, 1, 1, 1);
    j.details.gres = vec![GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope: GresScope::PerJob,
        count: 1,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    let e = res
        .job_test(&request(1, j, JobTestMode::RunNow))
        .unwrap_err();
    // ESLURM_UNSUPPORTED_GRES (gres_job_state_validate, common/gres.c).
    assert_eq!(code(e), 2122);
}

#[test]
fn init_needs_an_allocation_unit() {
    // select_p_node_init (cons_common/cons_common.c): at least one of
    // CR_CPU/CR_Core/CR_Socket.
    let p = load("select/cons_tres");
    assert_eq!(
        code(
            p.init(&config(&["CR_Memory"], 1, "select/cons_tres"))
                .unwrap_err()
        ),
        22
    );
}

#[test]
fn cpu_management_n6_cyclic_through_the_host() {
    // Slurm 22.05.8 src/plugins/select/cons_common/dist_tasks.c `dist_tasks`: -N1 -n6 on 2 sockets x 4 cores, CR_Core -> cores {0,1,2},{4,5,6}.
    let p = load("select/cons_tres");
    p.init(&config(&["CR_Core"], 1, "select/cons_tres"))
        .unwrap();
    p.node_init(&nodes(1, 2, 4, 1, 1000)).unwrap();
    let mut j = job(1, 1, 6, 1);
    j.details.max_nodes = Some(1);
    let r = p.job_test(&request(1, j, JobTestMode::RunNow)).unwrap();
    assert_eq!(per_node(&r), vec![(0, vec![0, 1, 2, 4, 5, 6], 6)]);
}

#[test]
fn test_144_8_gres_gpu4_c4_through_the_host() {
    // Slurm's python test_144_8 (a later testsuite's): --gres=gpu:4 -n1 -c4,
    // enforce-binding -> CPU_IDs 0-1,16-17 (cores 0 and 8), GPUs 0-1,3-4 there.
    // 22.05.8 picks the GPUs in src/plugins/select/cons_common/gres_select_filter.c
    // `_set_node_bits`: one on each used socket (0, 3), then the used sockets'
    // others in index order: GPUs 0-3 (the anchor's links recording, d2, the same
    // request on three GPUs a socket, got GPUs 0-3).
    let p = load("select/cons_tres");
    p.init(&config(&["CR_Core"], 1, "select/cons_tres"))
        .unwrap();
    let mut n = nodes(1, 2, 8, 2, 1000);
    n[0].gres_topology = vec![
        GresDeviceGroup {
            name: "gpu".into(),
            type_name: None,
            count: 3,
            cores: Some(fixtures::bitmap(16, 0..8)),
            links: Vec::new(),
        },
        GresDeviceGroup {
            name: "gpu".into(),
            type_name: None,
            count: 3,
            cores: Some(fixtures::bitmap(16, 8..16)),
            links: Vec::new(),
        },
    ];
    p.node_init(&n).unwrap();
    let mut j = job(1, 1, 1, 4);
    j.details.gres_flags = GresFlags::ENFORCE_BINDING;
    j.details.gres = vec![GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope: GresScope::PerNode,
        count: 4,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    let r = p.job_test(&request(1, j, JobTestMode::RunNow)).unwrap();
    assert_eq!(fixtures::bits(&r.resources.per_node[0].cores), vec![0, 8]);
    let gpu = &r.resources.per_node[0].gres[0];
    assert_eq!(gpu.count, 4);
    assert_eq!(
        fixtures::bits(gpu.devices.as_ref().unwrap()),
        vec![0, 1, 2, 3]
    );
}

#[test]
fn nodeinfo_reports_allocation_and_round_trips() {
    let p = load("select/cons_tres");
    p.init(&config(&["CR_Core_Memory"], 1, "select/cons_tres"))
        .unwrap();
    p.node_init(&nodes(1, 1, 4, 1, 1000)).unwrap();
    let mut j = job(1, 1, 2, 1);
    j.details.memory = MemoryRequest::PerNode(500);
    let r = p
        .job_test(&request(1, j.clone(), JobTestMode::RunNow))
        .unwrap();
    j.state = JobState::Running;
    j.resources = Some(r.resources);
    p.job_begin(&j).unwrap();
    p.nodeinfo_set(&j).unwrap();
    let info = p.node_nodeinfo(0).unwrap();
    assert!(matches!(
        p.nodeinfo_get(info, NodeinfoField::Subcnt, 3).unwrap(),
        NodeinfoValue::Count(2)
    ));
    assert!(matches!(
        p.nodeinfo_get(info, NodeinfoField::MemAlloc, 0).unwrap(),
        NodeinfoValue::Memory(500)
    ));
    let packed = p.nodeinfo_pack(info, 38 << 8).unwrap();
    let back = p.nodeinfo_unpack(&packed, 38 << 8).unwrap();
    assert!(matches!(
        p.nodeinfo_get(back, NodeinfoField::TresAllocFmtStr, 0).unwrap(),
        NodeinfoValue::Text(t) if t == "cpu=2,mem=500M"
    ));
    assert!(p.nodeinfo_unpack(&packed[..5], 38 << 8).is_err());
    assert!(p.nodeinfo_pack(info, 1).is_err());
}

#[test]
fn preemption_and_will_run_through_the_host() {
    // Slurm 22.05.8 src/plugins/select/cons_common/job_test.c `common_job_test`: REQUEUE candidates are removed fully; WILL_RUN start = end time
    // of the running job whose cores are needed.
    let p = load("select/cons_tres");
    p.init(&config(&["CR_Core"], 1, "select/cons_tres"))
        .unwrap();
    p.node_init(&nodes(1, 1, 4, 1, 1000)).unwrap();
    let mut a = job(1, 1, 4, 1);
    let r = p
        .job_test(&request(1, a.clone(), JobTestMode::RunNow))
        .unwrap();
    a.state = JobState::Running;
    a.end_time = 4_000_000_000;
    a.time_limit = Some(60);
    a.resources = Some(r.resources);
    p.job_begin(&a).unwrap();
    let w = p
        .job_test(&request(1, job(2, 1, 1, 1), JobTestMode::WillRun))
        .unwrap();
    assert_eq!(w.start_time, Some(4_000_000_000));
    // A will-run answer is the node bitmap, the CPU count and the start
    // (Slurm frees job_resrcs after the test): no per-node entries.
    assert_eq!(w.resources.nodes.words, vec![1]);
    assert_eq!(w.resources.ncpus, 1);
    assert!(w.resources.per_node.is_empty());
    let mut req = request(1, job(2, 1, 1, 1), JobTestMode::RunNow);
    assert_eq!(code(p.job_test(&req).unwrap_err()), 2016);
    req.preemptee_candidates = vec![PreempteeCandidate {
        job_id: 1,
        mode: PreemptMode::Requeue,
    }];
    assert_eq!(p.job_test(&req).unwrap().preemptees, vec![1]);
}

#[test]
fn node_states_leave_availability_to_the_candidates() {
    // 22.05's cons_tres applies no node-state test (cons_common/job_test.c
    // `_verify_node_state`): slurmctld offers only available nodes
    // (`avail_node_bitmap`), and a node powering up is NO_RESPOND yet stays
    // available (power_save.c), so backfill plans onto it. What the plugin
    // does read is COMPLETING: RUN_NOW refuses such a node, WILL_RUN takes
    // it (`_job_test` modes). n0 is busy until 4,000,000,000, n1 idle.
    let p = load("select/cons_tres");
    p.init(&config(&["CR_Core"], 2, "select/cons_tres"))
        .unwrap();
    let table = nodes(2, 1, 4, 1, 1000);
    p.node_init(&table).unwrap();
    let mut a = job(1, 1, 4, 1);
    let mut only_n0 = request(2, a.clone(), JobTestMode::RunNow);
    only_n0.candidates = fixtures::bitmap(2, [0]);
    a.state = JobState::Running;
    a.end_time = 4_000_000_000;
    a.time_limit = Some(60);
    a.resources = Some(p.job_test(&only_n0).unwrap().resources);
    p.job_begin(&a).unwrap();
    let ask = |id: u32, mode: JobTestMode| p.job_test(&request(2, job(id, 1, 4, 1), mode));
    let first = ask(2, JobTestMode::WillRun).unwrap();
    assert_eq!(first.resources.nodes.words, vec![0b10]);
    // powering up: NO_RESPOND and POWERING_UP; the answer stays n1, now
    let mut powering = table[1].clone();
    powering.state.flags = NodeStateFlags::NO_RESPOND | NodeStateFlags::POWERING_UP;
    p.update_node_state(&powering).unwrap();
    let again = ask(3, JobTestMode::WillRun).unwrap();
    assert_eq!(again.resources.nodes.words, vec![0b10]);
    assert_eq!(again.start_time, first.start_time);
    assert_ne!(first.start_time, Some(4_000_000_000));
    // completing: RUN_NOW refuses n1 (n0 is full), WILL_RUN still takes it
    let mut completing = table[1].clone();
    completing.state.flags = NodeStateFlags::COMPLETING;
    p.update_node_state(&completing).unwrap();
    assert_eq!(code(ask(4, JobTestMode::RunNow).unwrap_err()), 2016);
    let will = ask(5, JobTestMode::WillRun).unwrap();
    assert_eq!(will.resources.nodes.words, vec![0b10]);
    // back to idle: RUN_NOW gets n1
    p.update_node_state(&table[1]).unwrap();
    let now = ask(6, JobTestMode::RunNow).unwrap();
    assert_eq!(now.resources.nodes.words, vec![0b10]);
}

/// A plugin shared by the property tests, re-initialised per case.
#[test]
fn reconfigure_keeps_every_decision_through_the_host() {
    // cons_common.c:2055 (select_p_reconfigure): node_init on the same node
    // table, then the running jobs added again: with the configuration
    // unchanged, every decision after it is the one before it.
    let p = load("select/cons_tres");
    let conf = config(&["CR_Core_Memory"], NODES, "select/cons_tres");
    p.init(&conf).unwrap();
    p.node_init(&gpu_nodes()).unwrap();
    let mut a = random_job(1, 1, 1000, 1, 1);
    a.resources = Some(
        p.job_test(&request(NODES, a.clone(), JobTestMode::RunNow))
            .unwrap()
            .resources,
    );
    a.state = JobState::Running;
    p.job_begin(&a).unwrap();
    let decide = |p: &SelectPlugin| {
        [
            job(2, 1, 1, 1),
            random_job(3, 1, 1000, 1, 1),
            random_job(4, 2, 1000, 2, 2),
        ]
        .map(|j| {
            p.job_test(&request(NODES, j, JobTestMode::RunNow))
                .map(|r| per_node(&r))
                .map_err(code)
        })
    };
    let before = decide(&p);
    assert!(before.iter().all(|d| d.is_ok()), "{before:?}");
    p.reconfigure(&conf, &[a]).unwrap();
    assert_eq!(decide(&p), before);
}

fn shared() -> &'static SelectPlugin {
    static P: OnceLock<SelectPlugin> = OnceLock::new();
    P.get_or_init(|| load("select/cons_tres"))
}

const NODES: u32 = 3;

fn gpu_nodes() -> Vec<Node> {
    let mut n = nodes(NODES, 2, 4, 2, 4000);
    for node in &mut n {
        node.gres_topology = vec![
            GresDeviceGroup {
                name: "gpu".into(),
                type_name: None,
                count: 1,
                cores: Some(fixtures::bitmap(8, 0..4)),
                links: Vec::new(),
            },
            GresDeviceGroup {
                name: "gpu".into(),
                type_name: None,
                count: 1,
                cores: Some(fixtures::bitmap(8, 4..8)),
                links: Vec::new(),
            },
        ];
    }
    n
}

fn random_job(id: u32, tasks: u32, mem: u64, gpus: u64, nodes: u32) -> Job {
    let mut j = job(id, nodes, tasks, 1);
    j.details.memory = MemoryRequest::PerNode(mem);
    if gpus > 0 {
        j.details.gres = vec![GresRequest {
            name: "gpu".into(),
            type_name: None,
            scope: GresScope::PerNode,
            count: gpus,
            cpus_per_gres: None,
            mem_per_gres: None,
        }];
    }
    j
}

fn snapshot(p: &SelectPlugin) -> Vec<Vec<u8>> {
    // SLURM_NO_CHANGE_IN_DATA (1900) when the tables equal the last refresh.
    if let Err(e) = p.nodeinfo_set_all() {
        assert_eq!(code(e), 1900);
    }
    (0..NODES)
        .map(|i| {
            let info = p.node_nodeinfo(i).unwrap();
            let bytes = p.nodeinfo_pack(info, 38 << 8).unwrap();
            p.drop_resource(info).unwrap();
            bytes
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// No core, MB or GPU is ever given twice across running jobs; job_fini
    /// after job_begin restores every nodeinfo; save then restore gives the
    /// same decisions.
    #[test]
    fn usage_tables_stay_consistent(
        specs in proptest::collection::vec((1u32..6, 1u64..2000, 0u64..3, 1u32..3), 1..8)
    ) {
        let p = shared();
        p.init(&config(&["CR_Core_Memory"], NODES, "select/cons_tres")).unwrap();
        p.node_init(&gpu_nodes()).unwrap();
        let empty = snapshot(p);
        let mut running: Vec<Job> = Vec::new();
        for (k, (tasks, mem, gpus, n)) in specs.iter().enumerate() {
            let j = random_job(k as u32 + 1, *tasks, *mem, *gpus, *n);
            if let Ok(r) = p.job_test(&request(NODES, j.clone(), JobTestMode::RunNow)) {
                let mut j = j;
                j.state = JobState::Running;
                j.resources = Some(r.resources);
                p.job_begin(&j).unwrap();
                running.push(j);
            }
        }
        // The first job always fits an empty cluster: the property is not vacuous.
        prop_assert!(!running.is_empty());
        // Disjoint cores and GPUs, memory within RealMemory, per node.
        for node in 0..NODES {
            let mut cores = std::collections::HashSet::new();
            let mut gpus = std::collections::HashSet::new();
            let mut mem = 0;
            for j in &running {
                for nr in j.resources.as_ref().unwrap().per_node.iter().filter(|nr| nr.node_index == node) {
                    for c in fixtures::bits(&nr.cores) {
                        prop_assert!(cores.insert(c), "core {} of node {} used twice", c, node);
                    }
                    for g in &nr.gres {
                        for d in fixtures::bits(g.devices.as_ref().unwrap()) {
                            prop_assert!(gpus.insert(d), "gpu {} of node {} used twice", d, node);
                        }
                    }
                    mem += nr.memory;
                }
            }
            prop_assert!(mem <= 4000);
        }
        // Save, probe, restore into a fresh table, probe again.
        let blob = p.state_save().unwrap();
        let probe = request(NODES, random_job(99, 2, 100, 1, 1), JobTestMode::RunNow);
        let before = p.job_test(&probe).map(|r| r.resources).map_err(code);
        p.node_init(&gpu_nodes()).unwrap();
        p.state_restore(&blob).unwrap();
        let after = p.job_test(&probe).map(|r| r.resources).map_err(code);
        prop_assert_eq!(format!("{before:?}"), format!("{after:?}"));
        for j in running.iter().rev() {
            p.job_fini(j).unwrap();
        }
        prop_assert_eq!(snapshot(p), empty);
    }
}
