//! The contract's shared records (`wit/types.wit`) as C structs, and their
//! reading into the host's Rust records.
//!
//! Field names and meanings are the contract's (see `wit/types.wit`, which
//! names the Slurm field each comes from); the conventions for strings,
//! lists, optionals and enums are in the header's introduction. Where a
//! closed set of the contract is one of Slurm's enums or flag sets, the
//! `SWASM_*` constants carry Slurm's own values, so a shim passes the
//! field of Slurm's record as it is.
#![allow(non_camel_case_types)]

use std::ffi::c_char;

use slurm_wasm_host::types::{
    Association, Bitmap, ClusterConfig, GpuDefaults, GresAllocation, GresCount, GresDeviceGroup,
    GresFlags, GresRequest, GresScope, Job, JobDetails, JobResources, JobState, KeyValue,
    MemoryRequest, Node, NodeBaseState, NodeResources, NodeState, NodeStateFlags, Oversubscribe,
    Partition, PluginIdentity, PreemptModes, Qos, SelectTypeParams, ShareRequest, Shares, Step,
    Task, TaskPluginParams, TresAmount, TresUsage,
};

use crate::cvt::{self, choice, list, opt, opt_text, text, texts};
use crate::error::{c_string, Failure};

/// A bitmap of `len` bits: bit `i` is bit `i % 64` (from the least
/// significant) of `words[i / 64]`, which is the layout of the data words of
/// Slurm's `bitstr_t` on 64-bit machines (after its two header words).
/// `words` holds `(len + 63) / 64` words (NULL when `len` is 0); bits at or
/// past `len` are ignored. A shim passes a `bitstr_t *b` as
/// `{ bit_size(b), (const uint64_t *)b + 2 }`. In results the words are the
/// library's, freed with the result.
#[repr(C)]
pub struct swasm_bitmap {
    pub len: u32,
    pub words: *const u64,
}

impl swasm_bitmap {
    /// # Safety
    /// `words` holds `(len + 63) / 64` words or is NULL with `len` 0.
    pub(crate) unsafe fn read(&self, what: &str) -> Result<Bitmap, Failure> {
        let count = (self.len as usize).div_ceil(64);
        // SAFETY: as the caller promised.
        let mut words = unsafe { cvt::slice(self.words, count, what) }?.to_vec();
        let tail = self.len % 64;
        if let (Some(last), true) = (words.last_mut(), tail != 0) {
            *last &= (1u64 << tail) - 1;
        }
        Ok(Bitmap {
            len: self.len,
            words,
        })
    }
}

/// # Safety
/// `p` is NULL or points to a valid [`swasm_bitmap`].
pub(crate) unsafe fn opt_bitmap(
    p: *const swasm_bitmap,
    what: &str,
) -> Result<Option<Bitmap>, Failure> {
    // SAFETY: as the caller promised.
    unsafe { p.as_ref() }
        .map(|b| unsafe { b.read(what) })
        .transpose()
}

/// A `key=value` pair (environment variables, raw slurm.conf options).
#[repr(C)]
pub struct swasm_key_value {
    pub key: *const c_char,
    pub value: *const c_char,
}

impl swasm_key_value {
    /// # Safety
    /// Both strings NULL or NUL-terminated.
    pub(crate) unsafe fn read(&self) -> KeyValue {
        // SAFETY: as the caller promised.
        unsafe {
            KeyValue {
                key: text(self.key),
                value: text(self.value),
            }
        }
    }
}

/// A TRES amount (`cpu=8`, `mem=4000`, `gres/gpu=2`).
#[repr(C)]
pub struct swasm_tres_amount {
    pub name: *const c_char,
    pub count: u64,
}

/// A list of TRES amounts (one entry of a list of lists).
#[repr(C)]
pub struct swasm_tres_list {
    pub items: *const swasm_tres_amount,
    pub n_items: usize,
}

/// # Safety
/// As [`cvt::slice`], with valid strings.
pub(crate) unsafe fn tres_amounts(
    p: *const swasm_tres_amount,
    n: usize,
    what: &str,
) -> Result<Vec<TresAmount>, Failure> {
    // SAFETY: as the caller promised.
    unsafe {
        list(p, n, what, |t| {
            Ok(TresAmount {
                name: text(t.name),
                count: t.count,
            })
        })
    }
}

/// Accumulated usage of one TRES.
#[repr(C)]
pub struct swasm_tres_usage {
    pub name: *const c_char,
    pub usage: f64,
}

/// `memory-request` kinds.
pub const SWASM_MEMORY_NONE: u32 = 0;
/// MB per node (`--mem`); 0 means all the memory of the node.
pub const SWASM_MEMORY_PER_NODE: u32 = 1;
/// MB per allocated CPU (`--mem-per-cpu`).
pub const SWASM_MEMORY_PER_CPU: u32 = 2;

/// A memory request or limit: `kind` is a `SWASM_MEMORY_*` value, `mb` its
/// amount (ignored for `SWASM_MEMORY_NONE`).
#[repr(C)]
pub struct swasm_memory_request {
    pub kind: u32,
    pub mb: u64,
}

impl swasm_memory_request {
    pub(crate) fn read(&self, what: &str) -> Result<MemoryRequest, Failure> {
        choice(self.kind, what, |k| match k {
            SWASM_MEMORY_NONE => Some(MemoryRequest::None),
            SWASM_MEMORY_PER_NODE => Some(MemoryRequest::PerNode(self.mb)),
            SWASM_MEMORY_PER_CPU => Some(MemoryRequest::PerCpu(self.mb)),
            _ => None,
        })
    }
}

/// `DefCpuPerGPU` / `DefMemPerGPU`.
#[repr(C)]
pub struct swasm_gpu_defaults {
    pub has_cpus_per_gpu: bool,
    pub cpus_per_gpu: u64,
    pub has_mem_per_gpu: bool,
    pub mem_per_gpu: u64,
}

impl swasm_gpu_defaults {
    fn read(&self) -> GpuDefaults {
        GpuDefaults {
            cpus_per_gpu: opt(self.has_cpus_per_gpu, self.cpus_per_gpu),
            mem_per_gpu: opt(self.has_mem_per_gpu, self.mem_per_gpu),
        }
    }
}

/// `OverSubscribe=NO`.
pub const SWASM_OVERSUBSCRIBE_NO: u32 = 0;
/// `OverSubscribe=YES:count`.
pub const SWASM_OVERSUBSCRIBE_YES: u32 = 1;
/// `OverSubscribe=FORCE:count`.
pub const SWASM_OVERSUBSCRIBE_FORCE: u32 = 2;
/// `OverSubscribe=EXCLUSIVE`.
pub const SWASM_OVERSUBSCRIBE_EXCLUSIVE: u32 = 3;

/// A partition (`part_record_t`).
#[repr(C)]
pub struct swasm_partition {
    /// Position in the controller's partition table.
    pub index: u32,
    pub name: *const c_char,
    pub nodes: swasm_bitmap,
    /// A `SWASM_OVERSUBSCRIBE_*` value; `oversubscribe_count` goes with
    /// `YES` and `FORCE`.
    pub oversubscribe: u32,
    pub oversubscribe_count: u16,
    pub priority_job_factor: u16,
    pub priority_tier: u16,
    /// `PreemptMode` of the partition's own line (`SWASM_PREEMPT_MODE_*`
    /// bits), when `has_preempt_mode` (slurmctld: not `NO_VAL16`).
    pub has_preempt_mode: bool,
    pub preempt_mode: u16,
    /// `MaxTime` in minutes; unset = UNLIMITED.
    pub has_max_time: bool,
    pub max_time: u32,
    pub has_default_time: bool,
    pub default_time: u32,
    pub has_max_nodes: bool,
    pub max_nodes: u32,
    pub min_nodes: u32,
    pub default_memory: swasm_memory_request,
    pub max_memory: swasm_memory_request,
    pub has_max_cpus_per_node: bool,
    pub max_cpus_per_node: u32,
    pub lln: bool,
    pub gpu_defaults: swasm_gpu_defaults,
}

impl swasm_partition {
    /// # Safety
    /// Every pointer as the header's conventions say.
    pub(crate) unsafe fn read(&self) -> Result<Partition, Failure> {
        let count = self.oversubscribe_count;
        // SAFETY: as the caller promised.
        unsafe {
            Ok(Partition {
                index: self.index,
                name: text(self.name),
                nodes: self.nodes.read("partition.nodes")?,
                oversubscribe: choice(
                    self.oversubscribe,
                    "partition.oversubscribe",
                    |k| match k {
                        SWASM_OVERSUBSCRIBE_NO => Some(Oversubscribe::No),
                        SWASM_OVERSUBSCRIBE_YES => Some(Oversubscribe::Yes(count)),
                        SWASM_OVERSUBSCRIBE_FORCE => Some(Oversubscribe::Force(count)),
                        SWASM_OVERSUBSCRIBE_EXCLUSIVE => Some(Oversubscribe::Exclusive),
                        _ => None,
                    },
                )?,
                priority_job_factor: self.priority_job_factor,
                priority_tier: self.priority_tier,
                preempt_mode: match self.has_preempt_mode {
                    true => Some(preempt_modes(self.preempt_mode, "partition.preempt_mode")?),
                    false => None,
                },
                max_time: opt(self.has_max_time, self.max_time),
                default_time: opt(self.has_default_time, self.default_time),
                max_nodes: opt(self.has_max_nodes, self.max_nodes),
                min_nodes: self.min_nodes,
                default_memory: self.default_memory.read("partition.default_memory")?,
                max_memory: self.max_memory.read("partition.max_memory")?,
                max_cpus_per_node: opt(self.has_max_cpus_per_node, self.max_cpus_per_node),
                lln: self.lln,
                gpu_defaults: self.gpu_defaults.read(),
            })
        }
    }
}

/// `gres-scope` values.
pub const SWASM_GRES_PER_JOB: u32 = 0;
pub const SWASM_GRES_PER_NODE: u32 = 1;
pub const SWASM_GRES_PER_SOCKET: u32 = 2;
pub const SWASM_GRES_PER_TASK: u32 = 3;

/// One GRES request of a job (`--gres`, `--gpus*`).
#[repr(C)]
pub struct swasm_gres_request {
    pub name: *const c_char,
    /// NULL when no type was given.
    pub type_name: *const c_char,
    /// A `SWASM_GRES_PER_*` value.
    pub scope: u32,
    pub count: u64,
    pub has_cpus_per_gres: bool,
    pub cpus_per_gres: u16,
    pub has_mem_per_gres: bool,
    pub mem_per_gres: u64,
}

/// `--gres-flags` bits of [`swasm_job_details::gres_flags`].
pub const SWASM_GRES_ENFORCE_BINDING: u32 = 1;
pub const SWASM_GRES_DISABLE_BINDING: u32 = 2;

/// `share-request` values (`--exclusive` / `--oversubscribe`).
pub const SWASM_SHARE_PARTITION_DEFAULT: u32 = 0;
pub const SWASM_SHARE_OVERSUBSCRIBE: u32 = 1;
pub const SWASM_SHARE_EXCLUSIVE: u32 = 2;
pub const SWASM_SHARE_EXCLUSIVE_USER: u32 = 3;
pub const SWASM_SHARE_EXCLUSIVE_MCS: u32 = 4;

/// Job request details (`job_details_t`).
#[repr(C)]
pub struct swasm_job_details {
    pub min_nodes: u32,
    pub has_max_nodes: bool,
    pub max_nodes: u32,
    pub num_tasks: u32,
    pub min_cpus: u32,
    pub has_max_cpus: bool,
    pub max_cpus: u32,
    pub cpus_per_task: u16,
    pub ntasks_per_node: u16,
    pub ntasks_per_socket: u16,
    pub ntasks_per_core: u16,
    pub ntasks_per_board: u16,
    pub threads_per_core: u16,
    pub sockets_per_node: u16,
    pub cores_per_socket: u16,
    pub pn_min_cpus: u16,
    pub memory: swasm_memory_request,
    pub pn_min_tmp_disk: u64,
    pub contiguous: bool,
    /// A `SWASM_SHARE_*` value.
    pub share: u32,
    pub has_core_spec: bool,
    pub core_spec: u16,
    pub overcommit: bool,
    pub spread_job: bool,
    /// `-w` and `-x`; NULL for none.
    pub required_nodes: *const swasm_bitmap,
    pub excluded_nodes: *const swasm_bitmap,
    /// `--constraint`; NULL for none.
    pub features: *const c_char,
    pub task_dist: u32,
    pub plane_size: u16,
    pub cpu_bind_type: u32,
    pub gres: *const swasm_gres_request,
    pub n_gres: usize,
    /// `SWASM_GRES_*_BINDING` bits.
    pub gres_flags: u32,
    /// `--nice` as the user gave it (Slurm stores it plus `NICE_OFFSET`).
    pub nice: i32,
    pub begin_time: i64,
    pub accrue_time: i64,
    pub submit_time: i64,
}

impl swasm_job_details {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self) -> Result<JobDetails, Failure> {
        if self.gres_flags & !(SWASM_GRES_ENFORCE_BINDING | SWASM_GRES_DISABLE_BINDING) != 0 {
            return Err(Failure::new(format!(
                "job.details.gres_flags: unknown bits in {:#x}",
                self.gres_flags
            )));
        }
        let mut gres_flags = GresFlags::empty();
        if self.gres_flags & SWASM_GRES_ENFORCE_BINDING != 0 {
            gres_flags |= GresFlags::ENFORCE_BINDING;
        }
        if self.gres_flags & SWASM_GRES_DISABLE_BINDING != 0 {
            gres_flags |= GresFlags::DISABLE_BINDING;
        }
        // SAFETY: as the caller promised.
        unsafe {
            Ok(JobDetails {
                min_nodes: self.min_nodes,
                max_nodes: opt(self.has_max_nodes, self.max_nodes),
                num_tasks: self.num_tasks,
                min_cpus: self.min_cpus,
                max_cpus: opt(self.has_max_cpus, self.max_cpus),
                cpus_per_task: self.cpus_per_task,
                ntasks_per_node: self.ntasks_per_node,
                ntasks_per_socket: self.ntasks_per_socket,
                ntasks_per_core: self.ntasks_per_core,
                ntasks_per_board: self.ntasks_per_board,
                threads_per_core: self.threads_per_core,
                sockets_per_node: self.sockets_per_node,
                cores_per_socket: self.cores_per_socket,
                pn_min_cpus: self.pn_min_cpus,
                memory: self.memory.read("job.details.memory")?,
                pn_min_tmp_disk: self.pn_min_tmp_disk,
                contiguous: self.contiguous,
                share: choice(self.share, "job.details.share", |k| match k {
                    SWASM_SHARE_PARTITION_DEFAULT => Some(ShareRequest::PartitionDefault),
                    SWASM_SHARE_OVERSUBSCRIBE => Some(ShareRequest::Oversubscribe),
                    SWASM_SHARE_EXCLUSIVE => Some(ShareRequest::Exclusive),
                    SWASM_SHARE_EXCLUSIVE_USER => Some(ShareRequest::ExclusiveUser),
                    SWASM_SHARE_EXCLUSIVE_MCS => Some(ShareRequest::ExclusiveMcs),
                    _ => None,
                })?,
                core_spec: opt(self.has_core_spec, self.core_spec),
                overcommit: self.overcommit,
                spread_job: self.spread_job,
                required_nodes: opt_bitmap(self.required_nodes, "job.details.required_nodes")?,
                excluded_nodes: opt_bitmap(self.excluded_nodes, "job.details.excluded_nodes")?,
                features: opt_text(self.features),
                task_dist: self.task_dist,
                plane_size: self.plane_size,
                cpu_bind_type: self.cpu_bind_type,
                gres: list(self.gres, self.n_gres, "job.details.gres", |g| {
                    Ok(GresRequest {
                        name: text(g.name),
                        type_name: opt_text(g.type_name),
                        scope: choice(g.scope, "job.details.gres.scope", |k| match k {
                            SWASM_GRES_PER_JOB => Some(GresScope::PerJob),
                            SWASM_GRES_PER_NODE => Some(GresScope::PerNode),
                            SWASM_GRES_PER_SOCKET => Some(GresScope::PerSocket),
                            SWASM_GRES_PER_TASK => Some(GresScope::PerTask),
                            _ => None,
                        })?,
                        count: g.count,
                        cpus_per_gres: opt(g.has_cpus_per_gres, g.cpus_per_gres),
                        mem_per_gres: opt(g.has_mem_per_gres, g.mem_per_gres),
                    })
                })?,
                gres_flags,
                nice: self.nice,
                begin_time: self.begin_time,
                accrue_time: self.accrue_time,
                submit_time: self.submit_time,
            })
        }
    }
}

/// `job-state` values: the order of Slurm's `enum job_states`, so
/// `job_ptr->job_state & JOB_STATE_BASE` can be passed as it is.
pub const SWASM_JOB_PENDING: u32 = 0;
pub const SWASM_JOB_RUNNING: u32 = 1;
pub const SWASM_JOB_SUSPENDED: u32 = 2;
pub const SWASM_JOB_COMPLETE: u32 = 3;
pub const SWASM_JOB_CANCELLED: u32 = 4;
pub const SWASM_JOB_FAILED: u32 = 5;
pub const SWASM_JOB_TIMEOUT: u32 = 6;
pub const SWASM_JOB_NODE_FAIL: u32 = 7;
pub const SWASM_JOB_PREEMPTED: u32 = 8;
pub const SWASM_JOB_BOOT_FAIL: u32 = 9;
pub const SWASM_JOB_DEADLINE: u32 = 10;
pub const SWASM_JOB_OOM: u32 = 11;

fn job_state(value: u32) -> Option<JobState> {
    Some(match value {
        SWASM_JOB_PENDING => JobState::Pending,
        SWASM_JOB_RUNNING => JobState::Running,
        SWASM_JOB_SUSPENDED => JobState::Suspended,
        SWASM_JOB_COMPLETE => JobState::Complete,
        SWASM_JOB_CANCELLED => JobState::Cancelled,
        SWASM_JOB_FAILED => JobState::Failed,
        SWASM_JOB_TIMEOUT => JobState::Timeout,
        SWASM_JOB_NODE_FAIL => JobState::NodeFail,
        SWASM_JOB_PREEMPTED => JobState::Preempted,
        SWASM_JOB_BOOT_FAIL => JobState::BootFail,
        SWASM_JOB_DEADLINE => JobState::Deadline,
        SWASM_JOB_OOM => JobState::OutOfMemory,
        _ => return None,
    })
}

/// The GRES allocated on one node.
#[repr(C)]
pub struct swasm_gres_allocation {
    pub name: *const c_char,
    /// NULL when the GRES has no type.
    pub type_name: *const c_char,
    pub count: u64,
    /// Device indices on the node; NULL when the GRES has no devices.
    pub devices: *const swasm_bitmap,
    /// Count taken from each allocated device (MPS shares), in device order.
    pub per_device: *const u64,
    pub n_per_device: usize,
}

impl swasm_gres_allocation {
    /// # Safety
    /// Every pointer as the header's conventions say.
    pub(crate) unsafe fn read(&self, what: &str) -> Result<GresAllocation, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(GresAllocation {
                name: text(self.name),
                type_name: opt_text(self.type_name),
                count: self.count,
                devices: opt_bitmap(self.devices, &format!("{what}.devices"))?,
                per_device: cvt::slice(
                    self.per_device,
                    self.n_per_device,
                    &format!("{what}.per_device"),
                )?
                .to_vec(),
            })
        }
    }
}

/// What a job holds on one of its nodes.
#[repr(C)]
pub struct swasm_node_resources {
    pub node_index: u32,
    pub cores: swasm_bitmap,
    pub cpus: u16,
    /// MB.
    pub memory: u64,
    pub gres: *const swasm_gres_allocation,
    pub n_gres: usize,
}

/// The resources of a job (`job_resources_t`), per node in node-index order.
/// In results (`swasm_job_test_result`, `swasm_select_job_expand`) every
/// pointer is the library's, freed with the result; such resources may be
/// passed back in as a job's (`swasm_job.resources` at job-begin).
#[repr(C)]
pub struct swasm_job_resources {
    pub nodes: swasm_bitmap,
    pub ncpus: u32,
    pub per_node: *const swasm_node_resources,
    pub n_per_node: usize,
    pub whole_nodes: bool,
}

impl swasm_job_resources {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self) -> Result<JobResources, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(JobResources {
                nodes: self.nodes.read("job.resources.nodes")?,
                ncpus: self.ncpus,
                per_node: list(
                    self.per_node,
                    self.n_per_node,
                    "job.resources.per_node",
                    |n| {
                        Ok(NodeResources {
                            node_index: n.node_index,
                            cores: n.cores.read("job.resources.per_node.cores")?,
                            cpus: n.cpus,
                            memory: n.memory,
                            gres: list(n.gres, n.n_gres, "job.resources.per_node.gres", |g| {
                                g.read("job.resources.per_node.gres")
                            })?,
                        })
                    },
                )?,
                whole_nodes: self.whole_nodes,
            })
        }
    }
}

/// A job (`job_record_t`) as a plugin needs it.
#[repr(C)]
pub struct swasm_job {
    pub job_id: u32,
    pub array_job_id: u32,
    pub has_array_task_id: bool,
    pub array_task_id: u32,
    pub name: *const c_char,
    pub user_id: u32,
    pub group_id: u32,
    /// NULL for none.
    pub account: *const c_char,
    /// `assoc_id`, 0 when accounting is off.
    pub assoc_id: u32,
    /// Partition indices, in request order (the first is `part_ptr`).
    pub partitions: *const u32,
    pub n_partitions: usize,
    /// The QOS name; NULL for none.
    pub qos: *const c_char,
    /// A `SWASM_JOB_*` value.
    pub state: u32,
    /// Current priority; 0 means held.
    pub priority: u32,
    pub direct_set_priority: bool,
    pub site_factor: i64,
    /// `--time` in minutes; unset = no limit.
    pub has_time_limit: bool,
    pub time_limit: u32,
    pub has_time_min: bool,
    pub time_min: u32,
    pub start_time: i64,
    pub end_time: i64,
    pub suspended_seconds: i64,
    pub details: swasm_job_details,
    /// `tres_req_cnt` and `tres_alloc_cnt` by TRES name.
    pub tres_requested: *const swasm_tres_amount,
    pub n_tres_requested: usize,
    pub tres_allocated: *const swasm_tres_amount,
    pub n_tres_allocated: usize,
    pub has_billable_tres: bool,
    pub billable_tres: f64,
    pub has_total_cpus: bool,
    pub total_cpus: u32,
    /// Allocated resources; NULL for none (priority plugins need none).
    pub resources: *const swasm_job_resources,
}

impl swasm_job {
    /// # Safety
    /// Every pointer as the header's conventions say.
    pub(crate) unsafe fn read(&self) -> Result<Job, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(Job {
                job_id: self.job_id,
                array_job_id: self.array_job_id,
                array_task_id: opt(self.has_array_task_id, self.array_task_id),
                name: text(self.name),
                user_id: self.user_id,
                group_id: self.group_id,
                account: opt_text(self.account),
                assoc_id: self.assoc_id,
                partitions: cvt::slice(self.partitions, self.n_partitions, "job.partitions")?
                    .to_vec(),
                qos: opt_text(self.qos),
                state: choice(self.state, "job.state", job_state)?,
                priority: self.priority,
                direct_set_priority: self.direct_set_priority,
                site_factor: self.site_factor,
                time_limit: opt(self.has_time_limit, self.time_limit),
                time_min: opt(self.has_time_min, self.time_min),
                start_time: self.start_time,
                end_time: self.end_time,
                suspended_seconds: self.suspended_seconds,
                details: self.details.read()?,
                tres_requested: tres_amounts(
                    self.tres_requested,
                    self.n_tres_requested,
                    "job.tres_requested",
                )?,
                tres_allocated: tres_amounts(
                    self.tres_allocated,
                    self.n_tres_allocated,
                    "job.tres_allocated",
                )?,
                billable_tres: opt(self.has_billable_tres, self.billable_tres),
                total_cpus: opt(self.has_total_cpus, self.total_cpus),
                resources: self.resources.as_ref().map(|r| r.read()).transpose()?,
            })
        }
    }
}

/// # Safety
/// As [`cvt::slice`], each job valid.
pub(crate) unsafe fn jobs(p: *const swasm_job, n: usize, what: &str) -> Result<Vec<Job>, Failure> {
    // SAFETY: as the caller promised.
    unsafe { list(p, n, what, |j| j.read()) }
}

/// A job step, as node-side plugins see it.
#[repr(C)]
pub struct swasm_step {
    pub job_id: u32,
    /// Slurm's reserved values for `batch`, `extern` and `interactive` steps.
    pub step_id: u32,
    pub user_id: u32,
    pub group_id: u32,
    pub node_name: *const c_char,
    pub node_id: u32,
    pub local_tasks: u32,
    pub total_tasks: u32,
    pub cpus_per_task: u16,
    pub cpu_bind_type: u32,
    pub cpu_bind: *const c_char,
    /// `TresFreq`; NULL for none.
    pub tres_freq: *const c_char,
    /// The step's cores on this node (bit = core index).
    pub cores: swasm_bitmap,
    /// Task pids by local task id, once known.
    pub task_pids: *const u32,
    pub n_task_pids: usize,
}

impl swasm_step {
    /// # Safety
    /// Every pointer as the header's conventions say.
    pub(crate) unsafe fn read(&self) -> Result<Step, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(Step {
                job_id: self.job_id,
                step_id: self.step_id,
                user_id: self.user_id,
                group_id: self.group_id,
                node_name: text(self.node_name),
                node_id: self.node_id,
                local_tasks: self.local_tasks,
                total_tasks: self.total_tasks,
                cpus_per_task: self.cpus_per_task,
                cpu_bind_type: self.cpu_bind_type,
                cpu_bind: text(self.cpu_bind),
                tres_freq: opt_text(self.tres_freq),
                cores: self.cores.read("step.cores")?,
                task_pids: cvt::slice(self.task_pids, self.n_task_pids, "step.task_pids")?.to_vec(),
            })
        }
    }
}

/// A task of a step on one node.
#[repr(C)]
pub struct swasm_task {
    /// Position among the step's tasks on this node.
    pub local_id: u32,
    /// Global task rank.
    pub global_id: u32,
    pub pid: u32,
}

impl swasm_task {
    pub(crate) fn read(&self) -> Task {
        Task {
            local_id: self.local_id,
            global_id: self.global_id,
            pid: self.pid,
        }
    }
}

/// `shares` kinds of an association.
pub const SWASM_SHARES_RAW: u32 = 0;
/// `FairShare=parent`.
pub const SWASM_SHARES_PARENT: u32 = 1;

/// An association (`slurmdb_assoc_rec_t`). The root account has id 1 and
/// no parent.
#[repr(C)]
pub struct swasm_association {
    pub id: u32,
    pub has_parent_id: bool,
    pub parent_id: u32,
    pub account: *const c_char,
    /// Set for user associations, NULL for accounts.
    pub user: *const c_char,
    pub has_user_id: bool,
    pub user_id: u32,
    /// NULL for none.
    pub partition: *const c_char,
    /// A `SWASM_SHARES_*` value; `shares_raw` goes with `SWASM_SHARES_RAW`.
    pub shares: u32,
    pub shares_raw: u32,
    /// `Priority=`; unset when unset or INFINITE.
    pub has_priority: bool,
    pub priority: u32,
    pub usage_raw: f64,
    pub usage_tres_raw: *const swasm_tres_usage,
    pub n_usage_tres_raw: usize,
    pub grp_used_tres_run_secs: *const swasm_tres_amount,
    pub n_grp_used_tres_run_secs: usize,
}

impl swasm_association {
    /// # Safety
    /// Every pointer as the header's conventions say.
    pub(crate) unsafe fn read(&self) -> Result<Association, Failure> {
        let raw = self.shares_raw;
        // SAFETY: as the caller promised.
        unsafe {
            Ok(Association {
                id: self.id,
                parent_id: opt(self.has_parent_id, self.parent_id),
                account: text(self.account),
                user: opt_text(self.user),
                user_id: opt(self.has_user_id, self.user_id),
                partition: opt_text(self.partition),
                shares: choice(self.shares, "association.shares", |k| match k {
                    SWASM_SHARES_RAW => Some(Shares::Raw(raw)),
                    SWASM_SHARES_PARENT => Some(Shares::Parent),
                    _ => None,
                })?,
                priority: opt(self.has_priority, self.priority),
                usage_raw: self.usage_raw,
                usage_tres_raw: list(
                    self.usage_tres_raw,
                    self.n_usage_tres_raw,
                    "association.usage_tres_raw",
                    |t| {
                        Ok(TresUsage {
                            name: text(t.name),
                            usage: t.usage,
                        })
                    },
                )?,
                grp_used_tres_run_secs: tres_amounts(
                    self.grp_used_tres_run_secs,
                    self.n_grp_used_tres_run_secs,
                    "association.grp_used_tres_run_secs",
                )?,
            })
        }
    }
}

/// A QOS (`slurmdb_qos_rec_t`).
#[repr(C)]
pub struct swasm_qos {
    pub name: *const c_char,
    pub id: u32,
    pub priority: u32,
    pub usage_factor: f64,
    /// `Flags=NoDecay`.
    pub no_decay: bool,
    pub grp_used_tres_run_secs: *const swasm_tres_amount,
    pub n_grp_used_tres_run_secs: usize,
}

impl swasm_qos {
    /// # Safety
    /// Every pointer as the header's conventions say.
    pub(crate) unsafe fn read(&self) -> Result<Qos, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(Qos {
                name: text(self.name),
                id: self.id,
                priority: self.priority,
                usage_factor: self.usage_factor,
                no_decay: self.no_decay,
                grp_used_tres_run_secs: tres_amounts(
                    self.grp_used_tres_run_secs,
                    self.n_grp_used_tres_run_secs,
                    "qos.grp_used_tres_run_secs",
                )?,
            })
        }
    }
}

/// `SelectTypeParameters` bits: slurm.h's `CR_*` values, so slurmctld's
/// `select_type_param` passes as it is.
pub const SWASM_CR_CPU: u32 = 0x0001;
pub const SWASM_CR_SOCKET: u32 = 0x0002;
pub const SWASM_CR_CORE: u32 = 0x0004;
pub const SWASM_CR_MEMORY: u32 = 0x0010;
pub const SWASM_CR_OTHER_CONS_RES: u32 = 0x0020;
pub const SWASM_CR_ONE_TASK_PER_CORE: u32 = 0x0100;
pub const SWASM_CR_PACK_NODES: u32 = 0x0200;
pub const SWASM_CR_OTHER_CONS_TRES: u32 = 0x0800;
pub const SWASM_CR_CORE_DEFAULT_DIST_BLOCK: u32 = 0x1000;
pub const SWASM_CR_LLN: u32 = 0x4000;

/// `PreemptMode` bits: slurm.h's `PREEMPT_MODE_*` values (none is `OFF`).
pub const SWASM_PREEMPT_MODE_SUSPEND: u32 = 0x0001;
pub const SWASM_PREEMPT_MODE_REQUEUE: u32 = 0x0002;
pub const SWASM_PREEMPT_MODE_CANCEL: u32 = 0x0008;
pub const SWASM_PREEMPT_MODE_WITHIN: u32 = 0x4000;
pub const SWASM_PREEMPT_MODE_GANG: u32 = 0x8000;

/// `TaskPluginParam` bits: slurm.h's `CPU_BIND_*` values that 22.05's
/// read_config.c sets for it.
pub const SWASM_TASK_PARAM_VERBOSE: u32 = 0x0001;
pub const SWASM_TASK_PARAM_THREADS: u32 = 0x0002;
pub const SWASM_TASK_PARAM_CORES: u32 = 0x0004;
pub const SWASM_TASK_PARAM_SOCKETS: u32 = 0x0008;
pub const SWASM_TASK_PARAM_NONE: u32 = 0x0020;
pub const SWASM_TASK_PARAM_AUTOBIND_THREADS: u32 = 0x4000;
pub const SWASM_TASK_PARAM_AUTOBIND_CORES: u32 = 0x10000;
pub const SWASM_TASK_PARAM_AUTOBIND_SOCKETS: u32 = 0x20000;
pub const SWASM_TASK_PARAM_SLURMD_OFF_SPEC: u32 = 0x40000;

/// The contract's flags of `bits` (from `none`), one per `(bit, flag)` of
/// `table`; `what: unknown bits in 0x..` for a bit outside it (a Slurm
/// release whose settings this contract does not know).
fn bit_flags<F: Copy + std::ops::BitOr<Output = F>>(
    bits: u32,
    table: &[(u32, F)],
    none: F,
    what: &str,
) -> Result<F, Failure> {
    let known = table.iter().fold(0, |all, (bit, _)| all | bit);
    if bits & !known != 0 {
        return Err(Failure::new(format!("{what}: unknown bits in {bits:#x}")));
    }
    Ok(table
        .iter()
        .filter(|(bit, _)| bits & bit != 0)
        .fold(none, |all, (_, flag)| all | *flag))
}

fn select_type_params(bits: u16) -> Result<SelectTypeParams, Failure> {
    type F = SelectTypeParams;
    bit_flags(
        u32::from(bits),
        &[
            (SWASM_CR_CPU, F::CPU),
            (SWASM_CR_SOCKET, F::SOCKET),
            (SWASM_CR_CORE, F::CORE),
            (SWASM_CR_MEMORY, F::MEMORY),
            (SWASM_CR_OTHER_CONS_RES, F::OTHER_CONS_RES),
            (SWASM_CR_ONE_TASK_PER_CORE, F::ONE_TASK_PER_CORE),
            (SWASM_CR_PACK_NODES, F::PACK_NODES),
            (SWASM_CR_OTHER_CONS_TRES, F::OTHER_CONS_TRES),
            (SWASM_CR_CORE_DEFAULT_DIST_BLOCK, F::CORE_DEFAULT_DIST_BLOCK),
            (SWASM_CR_LLN, F::LLN),
        ],
        F::empty(),
        "cluster.select_type_parameters",
    )
}

fn preempt_modes(bits: u16, what: &str) -> Result<PreemptModes, Failure> {
    type F = PreemptModes;
    bit_flags(
        u32::from(bits),
        &[
            (SWASM_PREEMPT_MODE_SUSPEND, F::SUSPEND),
            (SWASM_PREEMPT_MODE_REQUEUE, F::REQUEUE),
            (SWASM_PREEMPT_MODE_CANCEL, F::CANCEL),
            (SWASM_PREEMPT_MODE_WITHIN, F::WITHIN),
            (SWASM_PREEMPT_MODE_GANG, F::GANG),
        ],
        F::empty(),
        what,
    )
}

fn task_plugin_params(bits: u32) -> Result<TaskPluginParams, Failure> {
    type F = TaskPluginParams;
    bit_flags(
        bits,
        &[
            (SWASM_TASK_PARAM_VERBOSE, F::VERBOSE),
            (SWASM_TASK_PARAM_THREADS, F::THREADS),
            (SWASM_TASK_PARAM_CORES, F::CORES),
            (SWASM_TASK_PARAM_SOCKETS, F::SOCKETS),
            (SWASM_TASK_PARAM_NONE, F::NONE),
            (SWASM_TASK_PARAM_AUTOBIND_THREADS, F::AUTOBIND_THREADS),
            (SWASM_TASK_PARAM_AUTOBIND_CORES, F::AUTOBIND_CORES),
            (SWASM_TASK_PARAM_AUTOBIND_SOCKETS, F::AUTOBIND_SOCKETS),
            (SWASM_TASK_PARAM_SLURMD_OFF_SPEC, F::SLURMD_OFF_SPEC),
        ],
        F::empty(),
        "cluster.task_plugin_param",
    )
}

/// Slurm-wide settings every plugin may read (from `slurm.conf`).
#[repr(C)]
pub struct swasm_cluster_config {
    pub cluster_name: *const c_char,
    /// `SelectTypeParameters`: `SWASM_CR_*` bits (slurmctld's
    /// `select_type_param` as it is).
    pub select_type_parameters: u16,
    pub default_memory: swasm_memory_request,
    /// `SchedulerParameters` as `key` or `key=value` tokens.
    pub scheduler_parameters: *const *const c_char,
    pub n_scheduler_parameters: usize,
    /// `PreemptMode`: `SWASM_PREEMPT_MODE_*` bits (slurmctld's
    /// `preempt_mode` as it is).
    pub preempt_mode: u16,
    /// Minutes.
    pub over_time_limit: u16,
    /// Seconds.
    pub kill_wait: u16,
    /// `TaskPluginParam`: `SWASM_TASK_PARAM_*` bits (slurmctld's
    /// `task_plugin_param` as it is).
    pub task_plugin_param: u32,
    pub gres_types: *const *const c_char,
    pub n_gres_types: usize,
    pub gpu_defaults: swasm_gpu_defaults,
    /// Every slurm.conf option as read (`PriorityWeightAge`, ...): what the
    /// fields above do not cover.
    pub raw: *const swasm_key_value,
    pub n_raw: usize,
}

impl swasm_cluster_config {
    /// # Safety
    /// Every pointer as the header's conventions say.
    pub(crate) unsafe fn read(&self) -> Result<ClusterConfig, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(ClusterConfig {
                cluster_name: text(self.cluster_name),
                select_type_parameters: select_type_params(self.select_type_parameters)?,
                default_memory: self.default_memory.read("cluster.default_memory")?,
                scheduler_parameters: texts(
                    self.scheduler_parameters,
                    self.n_scheduler_parameters,
                    "cluster.scheduler_parameters",
                )?,
                preempt_mode: preempt_modes(self.preempt_mode, "cluster.preempt_mode")?,
                over_time_limit: self.over_time_limit,
                kill_wait: self.kill_wait,
                task_plugin_param: task_plugin_params(self.task_plugin_param)?,
                gres_types: texts(self.gres_types, self.n_gres_types, "cluster.gres_types")?,
                gpu_defaults: self.gpu_defaults.read(),
                raw: list(self.raw, self.n_raw, "cluster.raw", |kv| Ok(kv.read()))?,
            })
        }
    }
}

/// A configured count of one generic resource (`Gres=gpu:a100:4` of a
/// node's slurm.conf line).
#[repr(C)]
pub struct swasm_gres_count {
    pub name: *const c_char,
    /// NULL when no type was given.
    pub type_name: *const c_char,
    pub count: u64,
}

impl swasm_gres_count {
    /// # Safety
    /// Both strings NULL or NUL-terminated.
    pub(crate) unsafe fn read(&self) -> GresCount {
        // SAFETY: as the caller promised.
        unsafe {
            GresCount {
                name: text(self.name),
                type_name: opt_text(self.type_name),
                count: self.count,
            }
        }
    }
}

/// One device group of a node's GRES (a gres.conf line after
/// `node_config_load`; the `topo_*` arrays of the node's
/// `gres_node_state_t`, one entry per index). Device indices follow the
/// table order: the first group of a name holds devices `0..count`, the
/// next one the following indices; for shared GRES (`mps`) each group is
/// one GPU and `count` its shares.
#[repr(C)]
pub struct swasm_gres_device_group {
    pub name: *const c_char,
    /// NULL when the GRES has no type.
    pub type_name: *const c_char,
    pub count: u64,
    /// `Cores=` as core indices of the node; NULL: usable from every core.
    pub cores: *const swasm_bitmap,
    /// `Links=`: the link count to each device of the node (-1 = itself);
    /// empty when not given.
    pub links: *const i32,
    pub n_links: usize,
}

/// `node-state` base values: Slurm's `enum node_states`, so
/// `node_ptr->node_state & NODE_STATE_BASE` is one of them as it is.
pub const SWASM_NODE_STATE_UNKNOWN: u32 = 0;
pub const SWASM_NODE_STATE_DOWN: u32 = 1;
pub const SWASM_NODE_STATE_IDLE: u32 = 2;
pub const SWASM_NODE_STATE_ALLOCATED: u32 = 3;
pub const SWASM_NODE_STATE_ERROR: u32 = 4;
pub const SWASM_NODE_STATE_MIXED: u32 = 5;
pub const SWASM_NODE_STATE_FUTURE: u32 = 6;
/// The base value's bits of a node state (`NODE_STATE_BASE`).
pub const SWASM_NODE_STATE_BASE: u32 = 0xf;

/// Node state flag bits the contract carries, with Slurm 22.05's values
/// (`NODE_STATE_*` of `slurm.h`): `NODE_STATE_RES` (in an advanced
/// reservation).
pub const SWASM_NODE_STATE_RES: u32 = 1 << 5;
pub const SWASM_NODE_STATE_CLOUD: u32 = 1 << 7;
pub const SWASM_NODE_STATE_DRAIN: u32 = 1 << 9;
pub const SWASM_NODE_STATE_COMPLETING: u32 = 1 << 10;
pub const SWASM_NODE_STATE_NO_RESPOND: u32 = 1 << 11;
/// `NODE_STATE_POWERED_DOWN` (`POWER_SAVE` before 21.08; the contract's
/// `power-save`).
pub const SWASM_NODE_STATE_POWERED_DOWN: u32 = 1 << 12;
pub const SWASM_NODE_STATE_FAIL: u32 = 1 << 13;
pub const SWASM_NODE_STATE_POWERING_UP: u32 = 1 << 14;
pub const SWASM_NODE_STATE_MAINT: u32 = 1 << 15;
pub const SWASM_NODE_STATE_REBOOT_REQUESTED: u32 = 1 << 16;
pub const SWASM_NODE_STATE_POWERING_DOWN: u32 = 1 << 18;
/// `NODE_STATE_DYNAMIC_FUTURE` and `NODE_STATE_DYNAMIC_NORM` are both the
/// contract's `dynamic`.
pub const SWASM_NODE_STATE_DYNAMIC_FUTURE: u32 = 1 << 19;
pub const SWASM_NODE_STATE_DYNAMIC_NORM: u32 = 1 << 26;

/// `node_ptr->node_state` as the contract's `node-state`: an unknown base
/// value is refused; flag bits the contract does not carry
/// (`NODE_STATE_NET`, `NODE_RESUME`, `NODE_STATE_PLANNED`, ...) are ignored.
fn node_state(state: u32, what: &str) -> Result<NodeState, Failure> {
    let base = choice(state & SWASM_NODE_STATE_BASE, what, |b| {
        Some(match b {
            SWASM_NODE_STATE_UNKNOWN => NodeBaseState::Unknown,
            SWASM_NODE_STATE_DOWN => NodeBaseState::Down,
            SWASM_NODE_STATE_IDLE => NodeBaseState::Idle,
            SWASM_NODE_STATE_ALLOCATED => NodeBaseState::Allocated,
            SWASM_NODE_STATE_ERROR => NodeBaseState::Error,
            SWASM_NODE_STATE_MIXED => NodeBaseState::Mixed,
            SWASM_NODE_STATE_FUTURE => NodeBaseState::Future,
            _ => return None,
        })
    })?;
    let mut flags = NodeStateFlags::empty();
    for (bit, flag) in [
        (SWASM_NODE_STATE_DRAIN, NodeStateFlags::DRAIN),
        (SWASM_NODE_STATE_COMPLETING, NodeStateFlags::COMPLETING),
        (SWASM_NODE_STATE_NO_RESPOND, NodeStateFlags::NO_RESPOND),
        (SWASM_NODE_STATE_POWERED_DOWN, NodeStateFlags::POWER_SAVE),
        (SWASM_NODE_STATE_POWERING_UP, NodeStateFlags::POWERING_UP),
        (
            SWASM_NODE_STATE_POWERING_DOWN,
            NodeStateFlags::POWERING_DOWN,
        ),
        (SWASM_NODE_STATE_FAIL, NodeStateFlags::FAIL),
        (SWASM_NODE_STATE_MAINT, NodeStateFlags::MAINT),
        (SWASM_NODE_STATE_RES, NodeStateFlags::RESERVED),
        (
            SWASM_NODE_STATE_REBOOT_REQUESTED,
            NodeStateFlags::REBOOT_REQUESTED,
        ),
        (SWASM_NODE_STATE_CLOUD, NodeStateFlags::CLOUD),
        (SWASM_NODE_STATE_DYNAMIC_FUTURE, NodeStateFlags::DYNAMIC),
        (SWASM_NODE_STATE_DYNAMIC_NORM, NodeStateFlags::DYNAMIC),
    ] {
        if state & bit != 0 {
            flags |= flag;
        }
    }
    Ok(NodeState { base, flags })
}

/// A node as the controller sees it (`node_record_t`).
#[repr(C)]
pub struct swasm_node {
    /// Position in the controller's node table (`node_ptr->index`).
    pub index: u32,
    pub name: *const c_char,
    /// Configured CPUs (`CPUs=`).
    pub cpus: u16,
    pub boards: u16,
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    /// `RealMemory`, MB.
    pub real_memory: u64,
    /// `MemSpecLimit`, MB.
    pub mem_spec_limit: u64,
    /// `CoreSpecCount`.
    pub core_spec_count: u16,
    /// `CpuSpecList` as abstract CPU indices; NULL when not set.
    pub cpu_spec_list: *const swasm_bitmap,
    /// `TmpDisk`, MB.
    pub tmp_disk: u64,
    /// Scheduling weight; lower weights are used first.
    pub weight: u32,
    pub features: *const *const c_char,
    pub n_features: usize,
    /// `Gres=` of the node's line.
    pub gres: *const swasm_gres_count,
    pub n_gres: usize,
    /// The node's GRES device groups (empty when gres.conf says nothing of
    /// the node).
    pub gres_topology: *const swasm_gres_device_group,
    pub n_gres_topology: usize,
    /// `node_ptr->node_state` as it is: a `SWASM_NODE_STATE_*` base value
    /// in the low four bits, and flag bits (`SWASM_NODE_STATE_DRAIN`, ...);
    /// other flag bits are ignored.
    pub state: u32,
    /// Indices into the partition table of the partitions holding the node.
    pub partitions: *const u32,
    pub n_partitions: usize,
}

impl swasm_node {
    /// # Safety
    /// Every pointer as the header's conventions say.
    pub(crate) unsafe fn read(&self, what: &str) -> Result<Node, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(Node {
                index: self.index,
                name: text(self.name),
                cpus: self.cpus,
                boards: self.boards,
                sockets: self.sockets,
                cores_per_socket: self.cores_per_socket,
                threads_per_core: self.threads_per_core,
                real_memory: self.real_memory,
                mem_spec_limit: self.mem_spec_limit,
                core_spec_count: self.core_spec_count,
                cpu_spec_list: opt_bitmap(self.cpu_spec_list, &format!("{what}.cpu_spec_list"))?,
                tmp_disk: self.tmp_disk,
                weight: self.weight,
                features: texts(self.features, self.n_features, &format!("{what}.features"))?,
                gres: list(self.gres, self.n_gres, &format!("{what}.gres"), |g| {
                    Ok(g.read())
                })?,
                gres_topology: list(
                    self.gres_topology,
                    self.n_gres_topology,
                    &format!("{what}.gres_topology"),
                    |g| {
                        Ok(GresDeviceGroup {
                            name: text(g.name),
                            type_name: opt_text(g.type_name),
                            count: g.count,
                            cores: opt_bitmap(g.cores, &format!("{what}.gres_topology.cores"))?,
                            links: cvt::slice(
                                g.links,
                                g.n_links,
                                &format!("{what}.gres_topology.links"),
                            )?
                            .to_vec(),
                        })
                    },
                )?,
                state: node_state(self.state, &format!("{what}.state"))?,
                partitions: cvt::slice(
                    self.partitions,
                    self.n_partitions,
                    &format!("{what}.partitions"),
                )?
                .to_vec(),
            })
        }
    }
}

/// # Safety
/// As [`cvt::slice`], each node valid.
pub(crate) unsafe fn nodes(
    p: *const swasm_node,
    n: usize,
    what: &str,
) -> Result<Vec<Node>, Failure> {
    // SAFETY: as the caller promised.
    let nodes = unsafe { cvt::slice(p, n, what) }?;
    nodes
        .iter()
        .enumerate()
        // SAFETY: as the caller promised.
        .map(|(i, node)| unsafe { node.read(&format!("{what}[{i}]")) })
        .collect()
}

/// What a plugin says about itself (`plugin_type`, `plugin_name`,
/// `plugin_version`, `plugin_id`). Filled by the `swasm_*_identity`
/// functions; free its strings with [`swasm_plugin_identity_free`].
#[repr(C)]
pub struct swasm_plugin_identity {
    /// `<kind>/<name>`, e.g. `priority/multifactor`.
    pub plugin_type: *mut c_char,
    pub plugin_name: *mut c_char,
    /// Slurm's version number rule: `(major << 16) | (minor << 8) | micro`.
    pub plugin_version: u32,
    pub has_plugin_id: bool,
    pub plugin_id: u32,
    /// The `slurm:plugin` contract version it was built against.
    pub contract_version: *mut c_char,
}

impl swasm_plugin_identity {
    pub(crate) fn new(identity: &PluginIdentity) -> swasm_plugin_identity {
        swasm_plugin_identity {
            plugin_type: c_string(&identity.plugin_type),
            plugin_name: c_string(&identity.plugin_name),
            plugin_version: identity.plugin_version,
            has_plugin_id: identity.plugin_id.is_some(),
            plugin_id: identity.plugin_id.unwrap_or(0),
            contract_version: c_string(&identity.contract_version),
        }
    }
}

/// Frees the strings of an identity and sets them to NULL; does nothing
/// for NULL.
///
/// # Safety
/// `identity` is NULL or was filled by a `swasm_*_identity` function (or
/// zeroed).
#[no_mangle]
pub unsafe extern "C" fn swasm_plugin_identity_free(identity: *mut swasm_plugin_identity) {
    // SAFETY: as the caller promised.
    if let Some(identity) = unsafe { identity.as_mut() } {
        for s in [
            &mut identity.plugin_type,
            &mut identity.plugin_name,
            &mut identity.contract_version,
        ] {
            // SAFETY: each is NULL or a string of ours.
            unsafe { cvt::free_text(*s) };
            *s = std::ptr::null_mut();
        }
    }
}
