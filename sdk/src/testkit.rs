//! Test kit for plugin authors: a mock host and fixtures.
//!
//! In a native build every [`crate::host`] call goes to the [`MockHost`] of
//! the calling thread. Tests set the clock, grant or deny capabilities and
//! read back what the plugin logged or bound:
//!
//! ```
//! use slurm_wasm_sdk::testkit;
//! testkit::reset();
//! testkit::with(|host| host.now = 1_700_000_000);
//! assert_eq!(slurm_wasm_sdk::host::now(), 1_700_000_000);
//! ```
//!
//! Capabilities other than `log` and `clock` start denied, as in the real
//! host with no grants.

use std::cell::RefCell;

use crate::host::Level;
#[cfg(any(feature = "task", feature = "gres"))]
use crate::types::{Capability, CapabilityError};

/// What the mock host answers and what it recorded.
#[derive(Debug, Clone)]
pub struct MockHost {
    /// `clock.now`.
    pub now: i64,
    /// `clock.monotonic-nanos`.
    pub monotonic_nanos: u64,
    /// Every `log.write`, in order.
    pub logs: Vec<(Level, String)>,
    /// `topology.cpu-layout`'s answer.
    #[cfg(feature = "task")]
    pub cpu_layout: Result<crate::task::topology::CpuLayout, CapabilityError>,
    /// When set, `cpuset.bind` answers this error.
    #[cfg(feature = "task")]
    pub cpuset_denied: Option<CapabilityError>,
    /// Every successful `cpuset.bind`.
    #[cfg(feature = "task")]
    pub bound: Vec<(u32, crate::Bitmap)>,
    /// `gpu.devices`'s answer.
    #[cfg(feature = "gres")]
    pub gpus: Result<Vec<crate::gres::gpu::GpuDevice>, CapabilityError>,
    /// When set, `gpu-control` calls answer this error.
    #[cfg(feature = "gres")]
    pub gpu_control_denied: Option<CapabilityError>,
    /// Every successful `gpu-control.set-application-clocks`.
    #[cfg(feature = "gres")]
    pub clocks_set: Vec<(u32, crate::gres::gpu_control::Clocks)>,
}

// Derivable only when neither `task` nor `gres` is enabled; written out so
// every feature combination shares one definition.
#[allow(clippy::derivable_impls)]
impl Default for MockHost {
    fn default() -> Self {
        MockHost {
            now: 0,
            monotonic_nanos: 0,
            logs: Vec::new(),
            #[cfg(feature = "task")]
            cpu_layout: Err(CapabilityError::Denied(Capability::Topology)),
            #[cfg(feature = "task")]
            cpuset_denied: Some(CapabilityError::Denied(Capability::Cpuset)),
            #[cfg(feature = "task")]
            bound: Vec::new(),
            #[cfg(feature = "gres")]
            gpus: Err(CapabilityError::Denied(Capability::Gpu)),
            #[cfg(feature = "gres")]
            gpu_control_denied: Some(CapabilityError::Denied(Capability::GpuControl)),
            #[cfg(feature = "gres")]
            clocks_set: Vec::new(),
        }
    }
}

thread_local! {
    static MOCK: RefCell<MockHost> = RefCell::new(MockHost::default());
}

/// Runs `f` on this thread's mock host.
pub fn with<R>(f: impl FnOnce(&mut MockHost) -> R) -> R {
    MOCK.with(|mock| f(&mut mock.borrow_mut()))
}

/// Restores this thread's mock host to its defaults (capabilities denied).
pub fn reset() {
    with(|mock| *mock = MockHost::default());
}

/// Record builders with neutral defaults, to be adjusted field by field.
pub mod fixtures {
    use crate::types::{
        Bitmap, ClusterConfig, Job, JobDetails, JobState, MemoryRequest, Node, NodeBaseState,
        NodeState, NodeStateFlags, ShareRequest, Step, Task,
    };

    /// An empty bitmap record of `len` bits.
    pub fn bitmap(len: u32) -> Bitmap {
        Bitmap {
            len,
            words: vec![0; (len as usize).div_ceil(64)],
        }
    }

    /// A cluster configuration with nothing set.
    pub fn cluster_config() -> ClusterConfig {
        ClusterConfig {
            cluster_name: "test".into(),
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

    /// An idle node `index` named `name` with `sockets x cores x threads`
    /// CPUs and `memory` MB.
    pub fn node(
        index: u32,
        name: &str,
        sockets: u16,
        cores: u16,
        threads: u16,
        memory: u64,
    ) -> Node {
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

    /// Job details of a one-node, one-task request.
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

    /// A pending job `job_id` of user 1000 in partition 0.
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

    /// Step `step_id` of `job_id` with one task on node `n1` and no cores.
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
            cores: bitmap(0),
            task_pids: Vec::new(),
        }
    }

    /// Task `local_id` (global id the same) running as `pid`.
    pub fn task(local_id: u32, pid: u32) -> Task {
        Task {
            local_id,
            global_id: local_id,
            pid,
        }
    }
}
