//! Record builders with neutral defaults, for embedders' tests, the
//! conformance suite and the demo. Adjust fields after building.
//!
//! The contract's shared records (`cluster_config`, `node`, `job_details`,
//! `job`, `step`, `task`) come from [`slurm_wasm_fixtures::record_builders`],
//! the same builders the SDK's test kit has; the rest is the host's own.

use crate::bindings::types::Bitmap;
use crate::bindings::types::Job;
use crate::kinds::gres::GresConfig;
use crate::kinds::priority::PriorityConfig;
use crate::kinds::select::{JobTestFlags, JobTestMode, JobTestRequest, SelectConfig};
use crate::kinds::task::{BatchRequest, LaunchRequest, TaskConfig};

/// A bitmap of `len` bits with `bits` set.
///
/// # Panics
/// If a bit is at or past `len`.
pub fn bitmap(len: u32, bits: impl IntoIterator<Item = u32>) -> Bitmap {
    Bitmap::with_ones(len, bits)
}

/// The set bits of a bitmap, ascending.
pub fn bits(map: &Bitmap) -> Vec<u32> {
    map.ones().collect()
}

slurm_wasm_fixtures::record_builders!(crate::bindings::types);

/// A job-test of `job` for exactly one node among `candidates`, in `mode`:
/// no flags, preemptees or excluded cores.
pub fn one_node_request(job: Job, mode: JobTestMode, candidates: Bitmap) -> JobTestRequest {
    JobTestRequest {
        job,
        candidates,
        min_nodes: 1,
        max_nodes: 1,
        req_nodes: 1,
        mode,
        flags: JobTestFlags::empty(),
        preemptee_candidates: Vec::new(),
        excluded_cores: None,
    }
}

/// A priority configuration for a one-node, 8-CPU cluster: the default
/// [`cluster_config`], one partition `debug` holding that node, no TRES.
pub fn priority_config() -> PriorityConfig {
    PriorityConfig {
        cluster: cluster_config(),
        partitions: vec![partition(0, "debug", 1)],
        partition_tres: vec![Vec::new()],
        cluster_cpus: 8,
        cluster_nodes: 1,
        cluster_tres: Vec::new(),
    }
}

/// A task configuration for node `n1` of the default [`cluster_config`].
pub fn task_config() -> TaskConfig {
    TaskConfig {
        cluster: cluster_config(),
        node_name: "n1".into(),
    }
}

/// A select configuration: the default [`cluster_config`] (no
/// `SelectTypeParameters`) and no partitions.
pub fn select_config() -> SelectConfig {
    SelectConfig {
        cluster: cluster_config(),
        partitions: Vec::new(),
    }
}

/// A gres configuration: the default [`cluster_config`] and no
/// `AutoDetect`.
pub fn gres_config() -> GresConfig {
    GresConfig {
        cluster: cluster_config(),
        auto_detect: None,
    }
}

/// A launch request for `tasks` tasks of step `job_id.0` on a one-socket,
/// `cores`-core node, all cores in the step.
pub fn launch_request(job_id: u32, tasks: u32, cores: u16) -> LaunchRequest {
    LaunchRequest {
        job_id,
        step_id: 0,
        user_id: 1000,
        group_id: 1000,
        node_count: 1,
        node_id: 0,
        node_name: "n1".into(),
        total_tasks: tasks,
        global_task_ids: (0..tasks).collect(),
        cpus_per_task: 1,
        cpu_bind_type: 0,
        cpu_bind: String::new(),
        task_dist: 0,
        plane_size: 0,
        ntasks_per_board: 0,
        ntasks_per_socket: 0,
        ntasks_per_core: 0,
        threads_per_core: 0,
        overcommit: false,
        step_cores: bitmap(u32::from(cores), 0..u32::from(cores)),
        job_cores: bitmap(u32::from(cores), 0..u32::from(cores)),
        sockets: 1,
        cores_per_socket: cores,
        threads_per_core_conf: 1,
        cpus_conf: cores,
        job_core_spec: None,
        mem_bind_type: 0,
        mem_bind: String::new(),
        env: Vec::new(),
        interactive: false,
    }
}

/// A batch request for job `job_id` by user 1000 on node `n1`, a
/// one-socket, `cores`-core node with one thread per core, all cores in the
/// job and no `--cpu-bind`.
pub fn batch_request(job_id: u32, cores: u16) -> BatchRequest {
    BatchRequest {
        job_id,
        user_id: 1000,
        node_name: "n1".into(),
        job_cores: bitmap(u32::from(cores), 0..u32::from(cores)),
        sockets: 1,
        cores_per_socket: cores,
        threads_per_core_conf: 1,
        cpus_conf: cores,
        cpu_bind_type: 0,
        cpu_bind: String::new(),
    }
}
