//! Helpers the unit tests of several modules share: small clusters, jobs,
//! requests and readers of the answers.

use slurm_wasm_sdk::select::{
    JobTestFlags, JobTestMode, JobTestRequest, PreemptMode, PreempteeCandidate,
};
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{
    Bitmap, GresDeviceGroup, GresFlags, GresRequest, GresScope, Job, JobState, MemoryRequest,
};

use crate::params::Params;
use crate::ConsTres;

pub(crate) fn bm(len: usize, bits: &[usize]) -> Bitmap {
    let mut words = vec![0u64; len.div_ceil(64)];
    for &b in bits {
        words[b / 64] |= 1 << (b % 64);
    }
    Bitmap {
        len: len as u32,
        words,
    }
}

/// The cons_tres parameters of `SelectTypeParameters=<tokens>`: each token
/// as the flags 22.05's `parse_select_type_param` sets for it (the host
/// parses slurm.conf; tests write the tokens an anchor's slurm.conf has).
pub(crate) fn params(tokens: &[&str]) -> Params {
    use slurm_wasm_sdk::types::SelectTypeParams as F;
    let words = tokens.iter().flat_map(|t| t.split(','));
    let flags = words.fold(F::empty(), |all, token| {
        all | match token {
            "CR_CPU" => F::CPU,
            "CR_CPU_Memory" => F::CPU | F::MEMORY,
            "CR_Core" => F::CORE,
            "CR_Core_Memory" => F::CORE | F::MEMORY,
            "CR_Socket" => F::SOCKET,
            "CR_Socket_Memory" => F::SOCKET | F::MEMORY,
            "CR_ONE_TASK_PER_CORE" => F::ONE_TASK_PER_CORE,
            "CR_CORE_DEFAULT_DIST_BLOCK" => F::CORE_DEFAULT_DIST_BLOCK,
            "CR_LLN" => F::LLN,
            "CR_PACK_NODES" => F::PACK_NODES,
            other => panic!("no test flags for {other}"),
        }
    });
    Params::from_flags(flags).unwrap()
}

pub(crate) fn cluster(tokens: &[&str], nodes: usize, s: u16, c: u16, t: u16, mem: u64) -> ConsTres {
    let p = params(tokens);
    let part = fixtures::partition(0, "debug", nodes as u32);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    let table: Vec<_> = (0..nodes)
        .map(|i| fixtures::node(i as u32, &format!("n{i}"), s, c, t, mem))
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

pub(crate) fn request(ct: &ConsTres, job: Job, mode: JobTestMode) -> JobTestRequest {
    let n = ct.recs.len();
    JobTestRequest {
        min_nodes: job.details.min_nodes,
        max_nodes: job.details.max_nodes.unwrap_or(0),
        // slurmctld's select_nodes: the maximum when one is given.
        req_nodes: job.details.max_nodes.unwrap_or(job.details.min_nodes),
        job,
        candidates: bm(n, &(0..n).collect::<Vec<_>>()),
        mode,
        flags: JobTestFlags::empty(),
        preemptee_candidates: Vec::new(),
        excluded_cores: None,
    }
}

/// Whether `ct` refuses `job` in `mode`.
pub(crate) fn refused(ct: &ConsTres, job: Job, mode: JobTestMode) -> bool {
    ct.job_test(&request(ct, job, mode), 0).is_err()
}

pub(crate) fn cores(ct: &ConsTres, job: Job) -> Vec<(u32, Vec<usize>, u16)> {
    let r = ct
        .job_test(&request(ct, job, JobTestMode::RunNow), 1000)
        .unwrap();
    r.resources
        .per_node
        .iter()
        .map(|n| (n.node_index, held_cores(n), n.cpus))
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

pub(crate) fn gpu_cluster() -> ConsTres {
    // test_144_8: 2 nodes x 2 sockets x 8 cores x 2 threads, CR_CORE,
    // gpu Cores=0-7 File=gpu[0-2], gpu Cores=8-15 File=gpu[3-5].
    let p = params(&["CR_Core"]);
    let part = fixtures::partition(0, "debug", 2);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    let table: Vec<_> = (0..2)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{i}"), 2, 8, 2, 1000);
            n.gres_topology = vec![
                GresDeviceGroup {
                    name: "gpu".into(),
                    type_name: None,
                    count: 3,
                    cores: Some(bm(16, &(0..8).collect::<Vec<_>>())),
                    links: Vec::new(),
                },
                GresDeviceGroup {
                    name: "gpu".into(),
                    type_name: None,
                    count: 3,
                    cores: Some(bm(16, &(8..16).collect::<Vec<_>>())),
                    links: Vec::new(),
                },
            ];
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

pub(crate) fn gpu_job(
    tasks: u32,
    cpt: u16,
    scope: GresScope,
    count: u64,
    cpus_per_gpu: u16,
) -> Job {
    let mut j = job(1, 1, tasks, cpt);
    j.details.gres_flags = GresFlags::ENFORCE_BINDING;
    j.details.gres = vec![GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope,
        count,
        cpus_per_gres: (cpus_per_gpu > 0).then_some(cpus_per_gpu),
        mem_per_gres: None,
    }];
    j
}

/// Runs `j` and adds it to the tables; returns its per-node (index, cores, cpus).
pub(crate) fn start(ct: &mut ConsTres, j: Job) -> Vec<(u32, Vec<usize>, u16)> {
    let got = cores(ct, j.clone());
    run(ct, j);
    got
}

/// `j` placed now (RUN_NOW) and added to the tables as running; returned
/// with its state and resources set.
pub(crate) fn run(ct: &mut ConsTres, mut j: Job) -> Job {
    let r = ct
        .job_test(&request(ct, j.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    j.state = JobState::Running;
    j.resources = Some(r.resources);
    ct.add_running(&j).unwrap();
    j
}

/// The node indices `j` gets.
pub(crate) fn nodes_of(ct: &ConsTres, j: Job) -> Vec<u32> {
    cores(ct, j).iter().map(|n| n.0).collect()
}

/// A job of `tasks` tasks on node `node` of a `len`-node cluster.
pub(crate) fn on_node(id: u32, len: usize, node: usize, tasks: u32) -> Job {
    let mut j = job(id, 1, tasks, 1);
    j.details.required_nodes = Some(bm(len, &[node]));
    j
}

/// The anchor cluster (tests/fixtures/anchor/select/cons_tres-CR_Core_Memory):
/// n[1-4] 2 sockets x 2 cores x 2 threads, 4000 MB, gres.conf
/// `gpu Cores=0-1`, `gpu Cores=2-3`, `mps Count=100` per GPU, DefMemPerCPU=250.
pub(crate) fn anchor_cluster() -> ConsTres {
    anchor_cluster_with("CR_Core_Memory")
}

/// The anchor cluster under `SelectTypeParameters=param`.
pub(crate) fn anchor_cluster_with(param: &str) -> ConsTres {
    anchor_cluster_of(param, 0)
}

/// The anchor cluster under `SelectTypeParameters=param` with
/// `CoreSpecCount=core_spec` on every node.
pub(crate) fn anchor_cluster_of(param: &str, core_spec: u16) -> ConsTres {
    anchor_like(
        param,
        4,
        (2, 2),
        core_spec,
        &[
            ("gpu", 1, &[0, 1]),
            ("gpu", 1, &[2, 3]),
            ("mps", 100, &[0, 1]),
            ("mps", 100, &[2, 3]),
        ],
    )
}

/// Nodes like the anchor's (2 threads per core, 4000 MB, named n1, n2, ...,
/// partition `big`, DefMemPerCPU=250) under `SelectTypeParameters=param`:
/// `nodes` nodes of `sockets x cores_per_socket` cores, each with
/// `CoreSpecCount=core_spec` and the device groups `gres` (name, count,
/// `Cores=`).
pub(crate) fn anchor_like(
    param: &str,
    nodes: u32,
    (sockets, cores_per_socket): (u16, u16),
    core_spec: u16,
    gres: &[(&str, u64, &[usize])],
) -> ConsTres {
    let p = params(&[param]);
    let mut ct = ConsTres::new(
        p,
        vec![fixtures::partition(0, "big", nodes)],
        MemoryRequest::PerCpu(250),
    );
    let cores = (sockets * cores_per_socket) as usize;
    let table: Vec<_> = (0..nodes)
        .map(|i| {
            let mut n = fixtures::node(
                i,
                &format!("n{}", i + 1),
                sockets,
                cores_per_socket,
                2,
                4000,
            );
            n.core_spec_count = core_spec;
            n.gres_topology = gres
                .iter()
                .map(|&(name, count, on)| GresDeviceGroup {
                    name: name.into(),
                    type_name: None,
                    count,
                    cores: Some(bm(cores, on)),
                    links: Vec::new(),
                })
                .collect();
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

pub(crate) fn with_gres(j: Job, name: &str, count: u64) -> Job {
    with_gres_per(j, name, count, GresScope::PerNode)
}

pub(crate) fn with_gres_per(mut j: Job, name: &str, count: u64, scope: GresScope) -> Job {
    j.details.gres = vec![GresRequest {
        name: name.into(),
        type_name: None,
        scope,
        count,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    j
}

pub(crate) fn start_full(ct: &mut ConsTres, mut j: Job) -> slurm_wasm_sdk::types::JobResources {
    let r = ct
        .job_test(&request(ct, j.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    j.state = JobState::Running;
    j.resources = Some(r.resources.clone());
    ct.add_running(&j).unwrap();
    r.resources
}

/// The cores a node's resources hold.
pub(crate) fn held_cores(n: &slurm_wasm_sdk::types::NodeResources) -> Vec<usize> {
    slurm_wasm_sdk::Bitmap::from_words(n.cores.len, &n.cores.words)
        .unwrap()
        .ones()
        .collect()
}

pub(crate) fn devs(g: &slurm_wasm_sdk::types::GresAllocation) -> Vec<usize> {
    let d = g.devices.as_ref().unwrap();
    slurm_wasm_sdk::Bitmap::from_words(d.len, &d.words)
        .unwrap()
        .ones()
        .collect()
}

/// A job of `tasks` tasks pinned to node `node` with 100 MB, optionally
/// with `gpu:1`.
pub(crate) fn pinned(id: u32, node: usize, tasks: u32, gpu: bool) -> Job {
    let mut j = job(id, 1, tasks, 1);
    j.details.required_nodes = Some(bm(4, &[node]));
    j.details.memory = MemoryRequest::PerNode(100);
    if gpu {
        j = with_gres(j, "gpu", 1);
    }
    j
}

/// The per-node (index, CPUs, memory) of a RUN_NOW test of `j`, or the error code.
pub(crate) fn decision(ct: &ConsTres, j: Job) -> Result<Vec<(u32, u16, u64)>, i32> {
    ct.job_test(&request(ct, j, JobTestMode::RunNow), 0)
        .map(|r| {
            r.resources
                .per_node
                .iter()
                .map(|n| (n.node_index, n.cpus, n.memory))
                .collect()
        })
        .map_err(|e| e.code)
}

/// The configuration of a CR_Core cluster under `PreemptType=preempt_type`
/// with one partition per entry of `parts` (its OverSubscribe), each over
/// all the nodes.
pub(crate) fn preempt_config(
    preempt_type: &str,
    parts: &[slurm_wasm_sdk::types::Oversubscribe],
    nodes: u32,
) -> slurm_wasm_sdk::select::SelectConfig {
    let mut cluster = fixtures::cluster_config();
    cluster.select_type_parameters = slurm_wasm_sdk::types::SelectTypeParams::CORE;
    cluster.raw.push(slurm_wasm_sdk::types::KeyValue {
        key: "PreemptType".into(),
        value: preempt_type.into(),
    });
    let partitions = parts
        .iter()
        .enumerate()
        .map(|(i, &over)| {
            let mut p = fixtures::partition(i as u32, &format!("p{i}"), nodes);
            p.oversubscribe = over;
            p
        })
        .collect();
    slurm_wasm_sdk::select::SelectConfig {
        cluster,
        partitions,
    }
}

/// [`preempt_config`]'s cluster with `nodes` nodes of 1 socket x 4 cores x
/// 1 thread, each in every partition.
pub(crate) fn preempt_cluster(
    preempt_type: &str,
    parts: &[slurm_wasm_sdk::types::Oversubscribe],
    nodes: u32,
) -> ConsTres {
    let mut ct = crate::plugin::instance_from(&preempt_config(preempt_type, parts, nodes)).unwrap();
    let table: Vec<_> = (0..nodes)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000);
            n.partitions = (0..parts.len() as u32).collect();
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

/// Job `id` of partition `partition`, running until `end` on the cores
/// `held` names per node (node, cores) of a [`preempt_cluster`].
pub(crate) fn holding(
    ct: &mut ConsTres,
    id: u32,
    partition: u32,
    held: &[(usize, &[usize])],
    end: i64,
) {
    use slurm_wasm_sdk::types::{JobResources, NodeResources};
    let cpus: u32 = held.iter().map(|(_, c)| c.len() as u32).sum();
    let mut j = job(id, held.len() as u32, cpus, 1);
    j.partitions = vec![partition];
    j.state = JobState::Running;
    j.end_time = end;
    j.time_limit = Some(60);
    let nodes: Vec<usize> = held.iter().map(|&(n, _)| n).collect();
    j.resources = Some(JobResources {
        nodes: bm(ct.recs.len(), &nodes),
        ncpus: cpus,
        per_node: held
            .iter()
            .map(|&(node, cores)| NodeResources {
                node_index: node as u32,
                cores: bm(4, cores),
                cpus: cores.len() as u16,
                memory: 0,
                gres: Vec::new(),
            })
            .collect(),
        whole_nodes: false,
    });
    ct.add_running(&j).unwrap();
}

/// The jobs of each row of partition `p`.
pub(crate) fn row_jobs(ct: &ConsTres, p: usize) -> Vec<Vec<u32>> {
    ct.usage.rows[p]
        .rows
        .iter()
        .map(|r| r.jobs.clone())
        .collect()
}

/// A RUN_NOW request for `j` (priority 100) offering `candidates` in order.
pub(crate) fn preempting(
    ct: &ConsTres,
    mut j: Job,
    candidates: &[(u32, PreemptMode)],
) -> JobTestRequest {
    j.priority = 100;
    let mut req = request(ct, j, JobTestMode::RunNow);
    req.preemptee_candidates = candidates
        .iter()
        .map(|&(job_id, mode)| PreempteeCandidate { job_id, mode })
        .collect();
    req
}
