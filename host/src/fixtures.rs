//! Record builders with neutral defaults, for embedders' tests, the
//! conformance suite and the demo. Adjust fields after building.

use crate::bindings::types::{
    Bitmap, ClusterConfig, Job, JobDetails, JobState, MemoryRequest, Node, NodeBaseState,
    NodeState, NodeStateFlags, ShareRequest, Step, Task,
};
use crate::kinds::gres::GresConfig;
use crate::kinds::priority::PriorityConfig;
use crate::kinds::select::SelectConfig;
use crate::kinds::task::{BatchRequest, LaunchRequest, TaskConfig};

/// A bitmap of `len` bits with `bits` set.
///
/// # Panics
/// If a bit is at or past `len`.
pub fn bitmap(len: u32, bits: impl IntoIterator<Item = u32>) -> Bitmap {
    let mut words = vec![0u64; (len as usize).div_ceil(64)];
    for bit in bits {
        assert!(bit < len, "bit {bit} outside a bitmap of {len}");
        words[(bit / 64) as usize] |= 1 << (bit % 64);
    }
    Bitmap { len, words }
}

/// The set bits of a bitmap, ascending.
pub fn bits(map: &Bitmap) -> Vec<u32> {
    (0..map.len)
        .filter(|&i| {
            map.words
                .get((i / 64) as usize)
                .is_some_and(|w| w >> (i % 64) & 1 == 1)
        })
        .collect()
}

pub fn cluster_config() -> ClusterConfig {
    ClusterConfig {
        cluster_name: "cluster".into(),
        select_type_parameters: Vec::new(),
        default_memory: MemoryRequest::None,
        scheduler_parameters: Vec::new(),
        preempt_mode: Vec::new(),
        over_time_limit: 0,
        kill_wait: 30,
        task_plugin_param: Vec::new(),
        gres_types: Vec::new(),
        raw: Vec::new(),
    }
}

/// An idle node with `sockets x cores x threads` CPUs and `memory` MB, in partition 0.
pub fn node(index: u32, name: &str, sockets: u16, cores: u16, threads: u16, memory: u64) -> Node {
    Node {
        index,
        name: name.into(),
        cpus: sockets * cores * threads,
        boards: 1,
        sockets,
        cores_per_socket: cores,
        threads_per_core: threads,
        real_memory: memory,
        mem_spec_limit: 0,
        core_spec_count: 0,
        cpu_spec_list: None,
        tmp_disk: 0,
        weight: 1,
        features: Vec::new(),
        gres: Vec::new(),
        state: NodeState {
            base: NodeBaseState::Idle,
            flags: NodeStateFlags::empty(),
        },
        partitions: vec![0],
    }
}

/// One node, one task, one CPU.
pub fn job_details() -> JobDetails {
    JobDetails {
        min_nodes: 1,
        max_nodes: None,
        num_tasks: 1,
        min_cpus: 1,
        max_cpus: None,
        cpus_per_task: 1,
        ntasks_per_node: 0,
        ntasks_per_socket: 0,
        ntasks_per_core: 0,
        ntasks_per_board: 0,
        threads_per_core: 0,
        sockets_per_node: 0,
        cores_per_socket: 0,
        pn_min_cpus: 1,
        memory: MemoryRequest::None,
        pn_min_tmp_disk: 0,
        contiguous: false,
        share: ShareRequest::PartitionDefault,
        core_spec: None,
        overcommit: false,
        required_nodes: None,
        excluded_nodes: None,
        features: None,
        task_dist: 0,
        plane_size: 0,
        cpu_bind_type: 0,
        gres: Vec::new(),
        nice: 0,
        begin_time: 0,
        accrue_time: 0,
        submit_time: 0,
    }
}

/// A pending job of user 1000 in partition 0.
pub fn job(job_id: u32) -> Job {
    Job {
        job_id,
        array_job_id: 0,
        array_task_id: None,
        name: format!("job{job_id}"),
        user_id: 1000,
        group_id: 1000,
        account: None,
        assoc_id: 0,
        partitions: vec![0],
        qos: None,
        state: JobState::Pending,
        priority: 0,
        direct_set_priority: false,
        site_factor: 0,
        time_limit: None,
        time_min: None,
        start_time: 0,
        end_time: 0,
        suspended_seconds: 0,
        details: job_details(),
        tres_requested: Vec::new(),
        tres_allocated: Vec::new(),
        resources: None,
    }
}

/// Step `step_id` of `job_id`: one task on node `n1`, no cores.
pub fn step(job_id: u32, step_id: u32) -> Step {
    Step {
        job_id,
        step_id,
        user_id: 1000,
        group_id: 1000,
        node_name: "n1".into(),
        node_id: 0,
        local_tasks: 1,
        total_tasks: 1,
        cpus_per_task: 1,
        cpu_bind_type: 0,
        cpu_bind: String::new(),
        tres_freq: None,
        cores: bitmap(0, []),
        task_pids: Vec::new(),
    }
}

pub fn task(local_id: u32, pid: u32) -> Task {
    Task {
        local_id,
        global_id: local_id,
        pid,
    }
}

pub fn priority_config() -> PriorityConfig {
    PriorityConfig {
        cluster: cluster_config(),
        partition_names: vec!["debug".into()],
        partition_job_factors: vec![1],
        cluster_cpus: 8,
        cluster_nodes: 1,
        cluster_tres: Vec::new(),
    }
}

pub fn task_config() -> TaskConfig {
    TaskConfig {
        cluster: cluster_config(),
        node_name: "n1".into(),
    }
}

pub fn select_config() -> SelectConfig {
    SelectConfig {
        cluster: cluster_config(),
        partitions: Vec::new(),
    }
}

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
