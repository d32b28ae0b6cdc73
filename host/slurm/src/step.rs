//! Job steps inside a job's allocation: the nodes, tasks, cores and memory
//! slurmctld gives a step that srun asks for, and what the step gives back
//! when it ends.
//!
//! This is Slurm 22.05.8's `src/slurmctld/step_mgr.c`: `_pick_step_nodes`
//! (which of the job's nodes can take the step now, idle nodes first),
//! `step_layout_create` with `src/common/slurm_step_layout.c` (tasks per
//! node), `_step_alloc_lps` and `_pick_step_cores` (the cores of each node,
//! socket by socket in the step's `-m` socket order, and the job's
//! `cpus_used`, `memory_used` and `core_bitmap_used`), and
//! `_step_dealloc_lps` (the end of a step). [`StepRequest::from_srun`] is
//! what srun sends for its options inside an allocation
//! (`src/srun/libsrun/launch.c`, `launch_common_create_job_step`).
//!
//! The points that decide most steps:
//! * without `--exact` (or `--exclusive`, or `-c` without `--overcommit`,
//!   which imply it) a step
//!   is `SSF_WHOLE`: it takes every CPU the job has on each of its nodes,
//!   and cannot start on a node where another step runs;
//! * with `--exact` a step takes whole cores: `ceil(tasks x cpus-per-task /
//!   threads)` of them on a node with several threads per core, each core
//!   once (`core_bitmap_used`) unless `--overcommit`; a step whose task
//!   count equals the node's core count takes all the job's cores there
//!   whatever other steps use (`_pick_step_cores`'s `use_all_cores`);
//! * `--overlap` steps count against nothing and take what they ask;
//! * a memory request (`--mem`, `--mem-per-cpu`) counts against the job's
//!   memory on the node when memory is consumable (`CR_*_Memory`); without
//!   one the step may use all the job's memory and counts nothing.
//!
//! # Not modelled
//! GRES in steps (`--gres`/`--gpus` on srun, and the GRES core filter of
//! `_pick_step_cores`), `-w`/`-x`/`--relative`/`--constraint` on srun, the
//! `plane` and `arbitrary` distributions, `--ntasks-per-*` limits and
//! nodes that stop responding: [`StepRequest::from_srun`] refuses those
//! options, so no step is placed by rules that are not Slurm's.

use std::collections::BTreeMap;
use std::fmt;

use slurm_wasm_host::kinds::task::{CpuBinding, LaunchRequest};
use slurm_wasm_host::types::{
    Bitmap, Job, JobResources, KeyValue, Node, SelectTypeParams, Step as StepRecord,
};

use crate::job_request::{bad, each_option, megabytes, node_range, positive, RequestError};

/// `SLURM_DIST_SOCKMASK` of `task_dist`: the socket level.
const SOCKET_MASK: u32 = 0xF0;
/// `SLURM_DIST_SOCKBLOCK`.
const SOCKET_BLOCK: u32 = 0x20;
/// `SLURM_DIST_SOCKCFULL` (`fcyclic`).
const SOCKET_CFULL: u32 = 0x30;
/// `SLURM_DIST_STATE_BASE`: the node level.
const NODE_MASK: u32 = 0xF;
/// `SLURM_DIST_STATE_FLAGS`: the flags (`Pack`, `NoPack`) of `task_dist`.
const STATE_FLAGS: u32 = 0xFF_0000;
/// The node and socket levels srun sends as given (launch.c,
/// `launch_common_create_job_step`); any other (none given, `*`) becomes
/// block, or cyclic for no more tasks than nodes, without a socket level.
const NAMED_DISTRIBUTIONS: [u32; 9] = [0x1, 0x2, 0x3, 0x11, 0x21, 0x12, 0x22, 0x31, 0x32];
/// `CPU_BIND_ONE_THREAD_PER_CORE` of `cpu_bind_type`.
const ONE_THREAD_PER_CORE: u32 = 0x2000;

/// A step's memory request (`pn_min_memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepMemory {
    /// None: the step may use all the job's memory on each node, and
    /// counts none of it (`SSF_MEM_ZERO`).
    Job,
    /// `--mem`: MB per node (0 is the same as [`StepMemory::Job`]).
    PerNode(u64),
    /// `--mem-per-cpu`: MB per CPU.
    PerCpu(u64),
}

/// What srun asks slurmctld for when it creates a step in an existing
/// allocation (`job_step_create_request_msg_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRequest {
    /// `num_tasks`.
    pub tasks: u32,
    /// `cpus_per_task` (1 unless `-c`).
    pub cpus_per_task: u16,
    /// `min_nodes` and `max_nodes`, at most the job's node count.
    pub min_nodes: u32,
    /// See `min_nodes`.
    pub max_nodes: u32,
    /// `cpu_count`: the CPUs the step needs in all.
    pub cpu_count: u32,
    /// `SSF_WHOLE`: every CPU of the job on each node (no `--exact`).
    pub whole: bool,
    /// `SSF_OVERLAP_FORCE` (`--overlap`): counts against nothing.
    pub overlap: bool,
    /// `SSF_OVERCOMMIT` (`--overcommit`): more tasks than CPUs.
    pub overcommit: bool,
    /// `--threads-per-core`.
    pub threads_per_core: Option<u16>,
    /// `--mem` / `--mem-per-cpu`.
    pub memory: StepMemory,
    /// `task_dist` (`-m`), as `srun::task_dist` encodes it.
    pub task_dist: u32,
}

/// Options of srun that take no value.
const FLAGS: &[&[&str]] = &[
    &["--exact"],
    &["--exclusive"],
    &["--overlap"],
    &["--overcommit", "-O"],
];

/// Options of srun that take a value.
const VALUED: &[&[&str]] = &[
    &["--ntasks", "-n"],
    &["--nodes", "-N"],
    &["--cpus-per-task", "-c"],
    &["--threads-per-core"],
    &["--mem"],
    &["--mem-per-cpu"],
    &["--distribution", "-m"],
];

impl StepRequest {
    /// The request srun 22.05 sends for `args` inside a job of
    /// `job_nodes` nodes and `job_tasks` tasks (what `-n` defaults to,
    /// `SLURM_NTASKS`), with no `SLURM_MEM_PER_*` in its environment.
    ///
    /// As srun: `-N` is capped at the job's nodes and at the task count
    /// (`min_nodes`/`max_nodes` default to the job's nodes); `--exclusive`,
    /// `--exact` and (without `--overcommit`) `-c` make the step exact; `cpu_count` is the
    /// node count with `--overcommit`, `tasks x cpus-per-task` with `-c`,
    /// else the task count; a distribution without a node level is block
    /// for more tasks than nodes and cyclic otherwise (and loses its
    /// socket level).
    ///
    /// # Errors
    ///
    /// A [`RequestError`] naming an unknown or malformed option, one that
    /// is not modelled (see the [module documentation](self)), or
    /// `--mem` with `--mem-per-cpu`.
    pub fn from_srun<S: AsRef<str>>(
        args: &[S],
        job_nodes: u32,
        job_tasks: u32,
    ) -> Result<StepRequest, RequestError> {
        let mut tasks = None;
        let mut nodes = None;
        let mut cpus_per_task = None;
        let mut exact = false;
        let mut overlap = false;
        let mut overcommit = false;
        let mut threads_per_core = None;
        let mut memory = StepMemory::Job;
        let mut task_dist = srun::task_dist::UNKNOWN;
        each_option(
            args,
            FLAGS,
            VALUED,
            "srun options only, no command",
            |option, value| {
                match (option, value) {
                    (_, Some(v)) if FLAGS.iter().any(|names| names[0] == option) => {
                        return Err(bad(option, format!("takes no value, found `{v}`")))
                    }
                    ("--exact" | "--exclusive", _) => exact = true,
                    ("--overlap", _) => overlap = true,
                    ("--overcommit", _) => overcommit = true,
                    (option, Some(value)) => match option {
                        "--ntasks" => tasks = Some(positive(option, value)?),
                        "--nodes" => nodes = Some(node_range(option, value)?),
                        "--cpus-per-task" => cpus_per_task = Some(positive(option, value)?),
                        "--threads-per-core" => {
                            threads_per_core = Some(positive(option, value)?);
                        }
                        "--mem" | "--mem-per-cpu" => {
                            if memory != StepMemory::Job {
                                return Err(bad(option, "excludes --mem and --mem-per-cpu"));
                            }
                            let mb = megabytes(option, value)?;
                            memory = if option == "--mem" {
                                StepMemory::PerNode(mb)
                            } else {
                                StepMemory::PerCpu(mb)
                            };
                        }
                        "--distribution" => {
                            let parsed =
                                srun::task_dist::parse(value).map_err(|e| bad(option, e))?;
                            let node = parsed.task_dist & NODE_MASK;
                            if node == srun::task_dist::PLANE || node == srun::task_dist::ARBITRARY
                            {
                                return Err(bad(
                                    option,
                                    "plane and arbitrary distributions of steps are not modelled",
                                ));
                            }
                            task_dist = parsed.task_dist;
                        }
                        _ => unreachable!("every valued option is handled"),
                    },
                    _ => unreachable!("a valued option has a value"),
                }
                Ok(())
            },
        )?;
        // --overlap clears --exclusive (slurm_opt.c arg_set_overlap), not --exact.
        let tasks = tasks.unwrap_or(job_tasks.max(1));
        let (min, max) = nodes.unwrap_or((job_nodes, Some(job_nodes)));
        let mut max_nodes = max.unwrap_or(job_nodes).min(job_nodes);
        let mut min_nodes = min.min(job_nodes);
        if tasks < min_nodes {
            // srun: "can't run N processes on M nodes, setting nnodes to N"
            min_nodes = tasks;
            max_nodes = max_nodes.min(tasks);
        }
        // launch.c: `--overcommit` comes first, so `-c` then does not
        // imply `--exact`.
        if cpus_per_task.is_some() && !overcommit {
            exact = true;
        }
        let cpus_per_task: u16 = cpus_per_task.unwrap_or(1);
        let cpu_count = if overcommit {
            min_nodes
        } else if cpus_per_task > 1 {
            tasks.saturating_mul(u32::from(cpus_per_task))
        } else {
            tasks
        };
        if !NAMED_DISTRIBUTIONS.contains(&(task_dist & srun::task_dist::NODE_SOCKET_MASK)) {
            let base = if tasks <= min_nodes {
                srun::task_dist::CYCLIC
            } else {
                srun::task_dist::BLOCK
            };
            task_dist = (task_dist & STATE_FLAGS) | base;
        }
        Ok(StepRequest {
            tasks,
            cpus_per_task,
            min_nodes,
            max_nodes: max_nodes.max(min_nodes),
            cpu_count,
            whole: !exact,
            overlap,
            overcommit,
            threads_per_core,
            memory,
            task_dist,
        })
    }
}

/// Why a step cannot be created: the `ESLURM_*` code slurmctld answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// `ESLURM_NODES_BUSY`: other steps hold what this one needs now; it
    /// can start once they end (srun waits, or fails with `--immediate`).
    #[error("Requested nodes are busy")]
    Busy,
    /// `ESLURM_INVALID_TASK_MEMORY`.
    #[error("Memory required by task is not available")]
    TaskMemory,
    /// `ESLURM_TOO_MANY_REQUESTED_CPUS`.
    #[error("More processors requested than permitted")]
    TooManyCpus,
    /// `ESLURM_INVALID_NODE_COUNT`.
    #[error("Node count specification invalid")]
    NodeCount,
    /// `ESLURM_BAD_THREAD_PER_CORE`.
    #[error("Cannot request more threads per core than the job allocation")]
    ThreadsPerCore,
    /// `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE`: the job's nodes can
    /// never run the step.
    #[error("Requested node configuration is not available")]
    NeverFits,
    /// No step of that id runs in the job.
    #[error("no such step")]
    NoSuchStep,
}

/// The devices a step's request for `count` of one GRES gets on a node, as
/// slurmctld allocates step GRES (gres_ctld.c `gres_ctld_step_alloc`,
/// `_step_alloc`, `_set_step_gres_bit_alloc`): of the job's devices there
/// that its other steps do not hold (`free`, in index order), first those
/// whose `Cores=` overlap the step's cores (`local`), then any, until the
/// count is met. A shared GRES (MPS) takes the whole count from the first
/// device such a pass finds. Returns fewer than `count` devices when the
/// job's free devices are fewer.
///
/// Anchor: `-n1 --gres=gpu:2` placed on CPUs 4-5 (core 2, socket 1) gave
/// its step's `--gres=gpu:1` GPU 1 (`Cores=2-3`), not the lower GPU 0
/// (tests/fixtures/anchor/gres-fuzz/case-f030.txt).
pub fn gres_devices(
    free: &[u32],
    local: impl Fn(u32) -> bool,
    count: u64,
    shared: bool,
) -> Vec<u32> {
    let want = if shared { 1 } else { count };
    let (near, far): (Vec<u32>, Vec<u32>) = free.iter().partition(|&&d| local(d));
    near.into_iter()
        .chain(far)
        .take(usize::try_from(want).unwrap_or(usize::MAX))
        .collect()
}

/// A step on one of its nodes.
#[derive(Debug, Clone)]
pub struct StepNode {
    /// The node's index in the node table.
    pub node_index: u32,
    /// The step's tasks on the node, by global id (`tids`).
    pub task_ids: Vec<u32>,
    /// The step's cores on the node (bit = core index, sockets x cores):
    /// the credential's step core bitmap, a launch request's `step-cores`.
    pub cores: Bitmap,
    /// CPUs counted against the job's on the node (`cpus_used`).
    pub cpus: u32,
    /// MB of the job's memory the step counts on the node.
    pub memory: u64,
}

/// A step running in a job.
#[derive(Debug, Clone)]
pub struct Step {
    /// The step id, from 0 in creation order.
    pub id: u32,
    /// What srun asked.
    pub request: StepRequest,
    /// The step's nodes, in node-index order.
    pub nodes: Vec<StepNode>,
}

impl Step {
    /// The step's CPUs in all (`cpu_count` after `_step_alloc_lps`).
    pub fn cpus(&self) -> u32 {
        self.nodes.iter().map(|n| n.cpus).sum()
    }
}

/// One node of the job, with what its steps use of it.
#[derive(Debug, Clone)]
struct JobNode {
    node_index: u32,
    sockets: u32,
    cores_per_socket: u32,
    /// Threads per core of the node (`tpc`).
    threads: u32,
    /// The node has one CPU per core (`cpus == tot_cores`).
    cpu_per_core: bool,
    /// The job's cores (`core_bitmap`), by node core index.
    cores: Vec<bool>,
    /// Cores steps use (`core_bitmap_used`).
    used: Vec<bool>,
    /// The job's CPUs (`cpus[]`) and what steps count of them.
    cpus: u32,
    cpus_used: u32,
    /// The job's memory (`memory_allocated[]`) and what steps count of it.
    memory: u64,
    memory_used: u64,
}

/// The steps of one running job and what they use of its allocation: the
/// step side of slurmctld's `job_resources_t`.
#[derive(Debug, Clone)]
pub struct JobSteps {
    job_id: u32,
    nodes: Vec<JobNode>,
    /// `--threads-per-core` of the job (`mc_ptr->threads_per_core`).
    threads_per_core: Option<u16>,
    /// `_use_one_thread_per_core`'s test on the job alone: not whole nodes,
    /// `CR_Core`/`CR_Socket`, and the job's `--cpu-bind` has
    /// `one_thread`.
    job_one_thread: bool,
    /// Memory is a consumable resource (`_is_mem_resv`).
    memory_counted: bool,
    /// `CR_PACK_NODES`.
    pack_nodes: bool,
    steps: BTreeMap<u32, Step>,
    next_id: u32,
}

/// A node-local core index from `_pick_step_core`'s socket and core.
fn core_at(node: &JobNode, socket: u32, core: u32) -> usize {
    (socket * node.cores_per_socket + core) as usize
}

impl JobSteps {
    /// The steps of `job`, none yet, on its `resources` in the cluster's
    /// `nodes` under `select_params`.
    pub fn new(
        job: &Job,
        resources: &JobResources,
        nodes: &[Node],
        select_params: SelectTypeParams,
    ) -> JobSteps {
        let job_nodes = resources
            .per_node
            .iter()
            .map(|r| {
                let node = &nodes[r.node_index as usize];
                let count = u32::from(node.sockets) * u32::from(node.cores_per_socket);
                let mut cores = vec![false; count as usize];
                for c in r.cores.ones().filter(|&c| c < count) {
                    cores[c as usize] = true;
                }
                JobNode {
                    node_index: r.node_index,
                    sockets: u32::from(node.sockets),
                    cores_per_socket: u32::from(node.cores_per_socket),
                    threads: u32::from(node.threads_per_core.max(1)),
                    cpu_per_core: u32::from(node.cpus) == count,
                    used: vec![false; cores.len()],
                    cores,
                    cpus: u32::from(r.cpus),
                    cpus_used: 0,
                    memory: r.memory,
                    memory_used: 0,
                }
            })
            .collect();
        let details = &job.details;
        JobSteps {
            job_id: job.job_id,
            nodes: job_nodes,
            threads_per_core: (details.threads_per_core != 0).then_some(details.threads_per_core),
            job_one_thread: !resources.whole_nodes
                && select_params.intersects(SelectTypeParams::CORE | SelectTypeParams::SOCKET)
                && details.cpu_bind_type & ONE_THREAD_PER_CORE != 0,
            memory_counted: select_params.contains(SelectTypeParams::MEMORY),
            pack_nodes: select_params.contains(SelectTypeParams::PACK_NODES),
            steps: BTreeMap::new(),
            next_id: 0,
        }
    }

    /// The running steps, by id.
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.steps.values()
    }

    /// The id the next step gets.
    pub fn next_id(&self) -> u32 {
        self.next_id
    }

    /// Creates a step as `step_create` does: picks its nodes (or takes
    /// `plugin_picked`, the nodes a select plugin's `step-pick-nodes`
    /// chose), within `plugin_avail` when the select plugin restricts the
    /// job's steps (its `step-avail-nodes`, C's `avail_nodes`), lays out
    /// its tasks, picks its cores and counts its CPUs and memory. The step
    /// gets the next id; a refused step takes none (nothing changes).
    ///
    /// # Errors
    ///
    /// The [`StepError`] slurmctld answers; [`StepError::Busy`] when the
    /// step could start after running steps end.
    pub fn create(
        &mut self,
        request: &StepRequest,
        plugin_picked: Option<&Bitmap>,
        plugin_avail: Option<&Bitmap>,
    ) -> Result<&Step, StepError> {
        // slurmctld does not take srun's `-c`: it works the CPUs per task
        // out of the step's CPU count (`_calc_cpus_per_task`).
        // With `--overcommit` it zeroes the CPU count (step_create).
        let ctld = StepRequest {
            cpus_per_task: self.calc_cpus_per_task(request),
            cpu_count: if request.overcommit {
                0
            } else {
                request.cpu_count
            },
            ..request.clone()
        };
        let picked = match plugin_picked {
            Some(map) => {
                let set: Vec<u32> = map.ones().collect();
                let on: Vec<usize> = (0..self.nodes.len())
                    .filter(|&i| set.contains(&self.nodes[i].node_index))
                    .collect();
                if on.is_empty() {
                    return Err(StepError::NeverFits);
                }
                on
            }
            None => self.pick_nodes(&ctld, plugin_avail)?,
        };
        let tasks = self.layout(&ctld, &picked)?;
        let mut trial = self.nodes.clone();
        let mut nodes = Vec::with_capacity(picked.len());
        for (&at, task_ids) in picked.iter().zip(tasks) {
            nodes.push(self.alloc_node(&mut trial[at], &ctld, task_ids)?);
        }
        self.nodes = trial;
        let id = self.next_id;
        self.next_id += 1;
        let step = Step {
            id,
            request: request.clone(),
            nodes,
        };
        Ok(self.steps.entry(id).or_insert(step))
    }

    /// Step `id` ended: its CPUs, memory and cores are the job's again
    /// (`_step_dealloc_lps`).
    ///
    /// # Errors
    ///
    /// [`StepError::NoSuchStep`].
    pub fn complete(&mut self, id: u32) -> Result<Step, StepError> {
        let step = self.steps.remove(&id).ok_or(StepError::NoSuchStep)?;
        if !step.request.overlap {
            for placed in &step.nodes {
                let node = self
                    .nodes
                    .iter_mut()
                    .find(|n| n.node_index == placed.node_index)
                    .expect("a step's nodes are the job's");
                node.cpus_used = node.cpus_used.saturating_sub(placed.cpus);
                node.memory_used = node.memory_used.saturating_sub(placed.memory);
                for c in placed.cores.ones() {
                    node.used[c as usize] = false;
                }
            }
        }
        Ok(step)
    }

    /// `_calc_cpus_per_task` (step_mgr.c): the CPU count over the task
    /// count when it divides evenly and every task fits the job's nodes at
    /// that many CPUs each; 0 otherwise, and with `--overcommit` (whose CPU
    /// count slurmctld zeroes). With 0, a task counts no CPU and takes one
    /// core's share of a core pick.
    fn calc_cpus_per_task(&self, request: &StepRequest) -> u16 {
        let tasks = request.tasks.max(1);
        if request.overcommit || request.cpu_count == 0 || !request.cpu_count.is_multiple_of(tasks)
        {
            return 0;
        }
        let cpt = (request.cpu_count / tasks).max(1);
        let mut left = i64::from(tasks);
        for node in &self.nodes {
            if cpt > node.cpus {
                return 0;
            }
            left -= i64::from(node.cpus / cpt);
        }
        if left > 0 {
            0
        } else {
            u16::try_from(cpt).unwrap_or(0)
        }
    }

    /// The step's or else the job's `--threads-per-core` (`req_tpc`).
    fn requested_tpc(&self, request: &StepRequest) -> Option<u32> {
        request
            .threads_per_core
            .or(self.threads_per_core)
            .map(u32::from)
    }

    /// `_use_one_thread_per_core`.
    fn one_thread_per_core(&self, request: &StepRequest) -> bool {
        match request.threads_per_core {
            Some(t) => t == 1,
            None => self.threads_per_core == Some(1) || self.job_one_thread,
        }
    }

    /// `_pick_step_nodes`: the job nodes (positions in `self.nodes`) the
    /// step runs on, ascending.
    fn pick_nodes(
        &self,
        request: &StepRequest,
        plugin_avail: Option<&Bitmap>,
    ) -> Result<Vec<usize>, StepError> {
        let job_nodes = self.nodes.len() as u32;
        let max_nodes = if request.max_nodes == 0 {
            job_nodes
        } else {
            request.max_nodes
        };
        if max_nodes < request.min_nodes {
            return Err(StepError::NodeCount);
        }
        let mut min_nodes = request.min_nodes;
        let cpt = u32::from(request.cpus_per_task.max(1));
        let mut usable = vec![0u32; self.nodes.len()];
        let mut avail = vec![false; self.nodes.len()];
        let (mut job_blocked_nodes, mut job_blocked_cpus) = (0u32, 0u32);
        let (mut mem_blocked_nodes, mut mem_blocked_cpus) = (0u32, 0u32);
        for (i, node) in self.nodes.iter().enumerate() {
            usable[i] = node.cpus;
            if !request.overlap {
                if request.whole && node.cpus_used > 0 {
                    job_blocked_cpus += node.cpus_used;
                    job_blocked_nodes += 1;
                    usable[i] = 0;
                } else {
                    usable[i] = usable[i].saturating_sub(node.cpus_used);
                    job_blocked_cpus += node.cpus_used;
                    if usable[i] == 0 {
                        job_blocked_nodes += 1;
                    }
                }
            }
            if usable[i] == 0 {
                continue;
            }
            avail[i] = true;
            let asks_memory = !matches!(
                request.memory,
                StepMemory::Job | StepMemory::PerNode(0) | StepMemory::PerCpu(0)
            );
            if !(asks_memory && self.memory_counted) {
                continue;
            }
            let mut fail = StepError::Busy;
            let mut avail_cpus = usable[i];
            let mut total_cpus = usable[i];
            let free = if request.overlap {
                node.memory
            } else {
                node.memory.saturating_sub(node.memory_used)
            };
            match request.memory {
                StepMemory::PerCpu(mb) => {
                    total_cpus =
                        total_cpus.min(u32::try_from(node.memory / mb).unwrap_or(u32::MAX));
                    let free_cpus = u32::try_from(free / mb).unwrap_or(u32::MAX);
                    if free_cpus < avail_cpus {
                        avail_cpus = free_cpus;
                        usable[i] = avail_cpus;
                        fail = StepError::TaskMemory;
                    }
                }
                StepMemory::PerNode(mb) => {
                    if node.memory < mb {
                        total_cpus = 0;
                    }
                    if free < mb && avail_cpus > 0 {
                        avail_cpus = 0;
                        usable[i] = 0;
                        fail = StepError::TaskMemory;
                    }
                }
                StepMemory::Job => unreachable!("tested above"),
            }
            if avail_cpus / cpt == 0 {
                if min_nodes == job_nodes {
                    return Err(if total_cpus / cpt == 0 {
                        fail
                    } else {
                        StepError::Busy
                    });
                }
                avail[i] = false;
                mem_blocked_nodes += 1;
            }
            mem_blocked_cpus += total_cpus.saturating_sub(avail_cpus);
        }
        // "The select plugin told us these were the only ones we could
        // choose from": its `avail_nodes`, after the memory checks.
        if let Some(allowed) = plugin_avail {
            for (i, node) in self.nodes.iter().enumerate() {
                if !allowed.get(node.node_index) {
                    avail[i] = false;
                }
            }
        }

        let mut picked = vec![false; self.nodes.len()];
        let mut idle = avail.clone();
        for step in self.steps.values() {
            for placed in &step.nodes {
                if let Some(i) = self
                    .nodes
                    .iter()
                    .position(|n| n.node_index == placed.node_index)
                {
                    idle[i] = false;
                }
            }
        }

        let mut cpu_count = request.cpu_count;
        let first = self.nodes.first().map_or(0, |n| n.cpus);
        if cpu_count > 0 && first > 0 && self.nodes.iter().all(|n| n.cpus == first) {
            if let Some(tpc) = self.requested_tpc(request) {
                let node_tpc = self.nodes[0].threads;
                if tpc < node_tpc {
                    cpu_count = cpu_count.div_ceil(tpc) * node_tpc;
                } else if tpc > node_tpc {
                    return Err(StepError::ThreadsPerCore);
                }
            }
            min_nodes = min_nodes.max(cpu_count.div_ceil(first));
            if max_nodes < min_nodes {
                return Err(StepError::TooManyCpus);
            }
        }

        let count = |set: &[bool]| set.iter().filter(|&&b| b).count() as u32;
        let mut picked_cnt = 0;
        let failure = |picked_now: u32| {
            if max_nodes <= picked_now && mem_blocked_cpus == 0 && job_blocked_cpus == 0 {
                StepError::TooManyCpus
            } else if mem_blocked_cpus > 0
                || min_nodes <= picked_now + mem_blocked_nodes + job_blocked_nodes
            {
                StepError::Busy
            } else {
                StepError::NeverFits
            }
        };
        if min_nodes > 0 {
            if count(&avail) + picked_cnt < min_nodes {
                return Err(StepError::Busy);
            }
            let mut needed = min_nodes - picked_cnt;
            if needed > 0 && count(&idle) >= needed {
                let cpus_needed = opt_cpu_cnt(cpu_count, &picked, &usable);
                let target = opt_node_cnt(min_nodes, max_nodes, count(&idle), picked_cnt);
                if let Some(tmp) = pick_nodes_cpus(&idle, target, cpus_needed, &usable) {
                    for (i, &take) in tmp.iter().enumerate() {
                        if take {
                            picked[i] = true;
                            avail[i] = false;
                        }
                    }
                    picked_cnt = min_nodes;
                    needed = 0;
                }
            }
            if needed > 0 && count(&avail) >= needed {
                let cpus_needed = opt_cpu_cnt(cpu_count, &picked, &usable);
                let target = opt_node_cnt(min_nodes, max_nodes, count(&avail), picked_cnt);
                let Some(tmp) = pick_nodes_cpus(&avail, target, cpus_needed, &usable) else {
                    return Err(failure(count(&avail) + picked_cnt));
                };
                for (i, &take) in tmp.iter().enumerate() {
                    if take {
                        picked[i] = true;
                        avail[i] = false;
                    }
                }
                picked_cnt = min_nodes;
            } else if needed > 0 {
                return Err(failure(picked_cnt));
            }
        }
        if cpu_count > 0 {
            let sum = |set: &[bool]| -> u32 {
                set.iter()
                    .zip(&usable)
                    .filter(|(&b, _)| b)
                    .map(|(_, &u)| u)
                    .sum()
            };
            let mut cpus_picked = sum(&picked);
            if cpu_count > cpus_picked && max_nodes > picked_cnt {
                picked_cnt = count(&picked);
                while cpu_count > cpus_picked {
                    let Some(i) = avail.iter().position(|&b| b) else {
                        break;
                    };
                    avail[i] = false;
                    if usable[i] == 0 {
                        continue;
                    }
                    picked[i] = true;
                    picked_cnt += 1;
                    cpus_picked += usable[i];
                    if picked_cnt >= max_nodes {
                        break;
                    }
                }
            }
            if cpu_count > cpus_picked {
                return Err(
                    if cpu_count <= cpus_picked + mem_blocked_cpus + job_blocked_cpus {
                        StepError::Busy
                    } else {
                        StepError::NeverFits
                    },
                );
            }
        }
        let picked: Vec<usize> = (0..picked.len()).filter(|&i| picked[i]).collect();
        if picked.is_empty() {
            return Err(StepError::NeverFits);
        }
        Ok(picked)
    }

    /// `step_layout_create` and `_init_task_layout`: the task ids of each
    /// picked node.
    fn layout(&self, request: &StepRequest, picked: &[usize]) -> Result<Vec<Vec<u32>>, StepError> {
        let one_thread = self.one_thread_per_core(request);
        let cpt = u32::from(request.cpus_per_task.max(1));
        let mut cpus = Vec::with_capacity(picked.len());
        for &i in picked {
            let node = &self.nodes[i];
            let (mut total, mut used) = (node.cpus, node.cpus_used);
            if one_thread {
                total /= node.threads;
                used /= node.threads;
            }
            let mut usable = if request.overlap {
                total
            } else {
                total.saturating_sub(used)
            };
            if usable == 0 {
                return Err(StepError::Busy);
            }
            if let StepMemory::PerCpu(mb) = request.memory {
                if self.memory_counted && mb > 0 {
                    let free = node.memory.saturating_sub(node.memory_used) / mb;
                    usable = usable.min(u32::try_from(free).unwrap_or(u32::MAX));
                }
            }
            cpus.push((usable / cpt).max(1));
        }
        let pack = if request.task_dist & srun::task_dist::PACK_NODES != 0 {
            true
        } else if request.task_dist & srun::task_dist::NO_PACK_NODES != 0 {
            false
        } else {
            self.pack_nodes
        };
        let block = request.task_dist & NODE_MASK == srun::task_dist::BLOCK;
        Ok(if block && pack {
            layout_packed(&cpus, request.tasks)
        } else if block {
            layout_spread(&cpus, request.tasks, false)
        } else {
            layout_spread(&cpus, request.tasks, true)
        })
    }

    /// `_step_alloc_lps` and `_pick_step_cores` on one node: the step's
    /// CPUs, memory and cores there, counted in `node`.
    fn alloc_node(
        &self,
        node: &mut JobNode,
        request: &StepRequest,
        task_ids: Vec<u32>,
    ) -> Result<StepNode, StepError> {
        let tasks = task_ids.len() as u32;
        let tpc = self.requested_tpc(request);
        let vpus = node.threads;
        let cpt = u32::from(request.cpus_per_task);
        let (cpus_alloc, cpus_alloc_mem) = if request.whole {
            let mut mem_cpus = node.cpus;
            if let Some(t) = tpc.filter(|&t| t < vpus) {
                mem_cpus = mem_cpus.div_ceil(vpus) * t;
            }
            (node.cpus, mem_cpus)
        } else {
            let mut cpus = tasks * cpt;
            let mem_cpus = cpus;
            if let Some(t) = tpc.filter(|&t| t < vpus) {
                cpus = cpus.div_ceil(t) * vpus;
            }
            (cpus, mem_cpus)
        };
        let memory = if !self.memory_counted || request.overlap {
            0
        } else {
            match request.memory {
                StepMemory::PerCpu(mb) => mb * u64::from(cpus_alloc_mem),
                StepMemory::PerNode(mb) => mb,
                StepMemory::Job => 0,
            }
        };
        if !request.overlap {
            node.cpus_used += cpus_alloc;
            node.memory_used += memory;
        }
        let cpus_per_core = if self.one_thread_per_core(request) || node.cpu_per_core {
            1
        } else {
            tpc.unwrap_or(node.threads)
        };
        let cores = pick_cores(node, request, tasks, cpus_per_core)?;
        Ok(StepNode {
            node_index: node.node_index,
            task_ids,
            cores: Bitmap::with_ones(
                node.cores.len() as u32,
                cores
                    .iter()
                    .enumerate()
                    .filter(|(_, &b)| b)
                    .map(|(c, _)| c as u32),
            ),
            cpus: cpus_alloc,
            memory,
        })
    }
}

/// What srun adds to a step when it launches its tasks, besides what
/// slurmctld allocated: the fields of `launch_tasks_request_msg_t` that
/// come from srun's options and its user.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// The user the tasks run as.
    pub user_id: u32,
    /// The user's group.
    pub group_id: u32,
    /// `--cpu-bind` type bits (`CPU_BIND_*`, `srun::cpu_bind`).
    pub cpu_bind_type: u32,
    /// `--cpu-bind` map or mask list.
    pub cpu_bind: String,
    /// The step's environment.
    pub env: Vec<KeyValue>,
}

impl JobSteps {
    /// The launch request slurmd on node `node` receives for `step`
    /// (srun's `launch_tasks_request_msg_t`): the node's tasks by global
    /// id, the step's and the job's cores there (the credential's
    /// bitmaps), the node's shape, and srun's `launch` options. None when
    /// the step does not run on `node`.
    pub fn launch_request(
        &self,
        step: &Step,
        node: &Node,
        launch: &Launch,
    ) -> Option<LaunchRequest> {
        let node_id = step.nodes.iter().position(|n| n.node_index == node.index)?;
        let placed = &step.nodes[node_id];
        let job_node = self.nodes.iter().find(|n| n.node_index == node.index)?;
        let len = job_node.cores.len() as u32;
        let request = &step.request;
        Some(LaunchRequest {
            job_id: self.job_id,
            step_id: step.id,
            user_id: launch.user_id,
            group_id: launch.group_id,
            node_count: step.nodes.len() as u32,
            node_id: node_id as u32,
            node_name: node.name.clone(),
            total_tasks: request.tasks,
            global_task_ids: placed.task_ids.clone(),
            cpus_per_task: request.cpus_per_task,
            cpu_bind_type: launch.cpu_bind_type,
            cpu_bind: launch.cpu_bind.clone(),
            task_dist: request.task_dist,
            plane_size: 0,
            ntasks_per_board: 0,
            ntasks_per_socket: 0,
            ntasks_per_core: 0,
            threads_per_core: request.threads_per_core.unwrap_or(0),
            overcommit: request.overcommit,
            step_cores: placed.cores.clone(),
            job_cores: Bitmap::with_ones(len, (0..len).filter(|&c| job_node.cores[c as usize])),
            sockets: node.sockets,
            cores_per_socket: node.cores_per_socket,
            threads_per_core_conf: node.threads_per_core,
            cpus_conf: node.cpus,
            job_core_spec: None,
            mem_bind_type: 0,
            mem_bind: String::new(),
            env: launch.env.clone(),
            interactive: false,
        })
    }
}

/// The step as slurmstepd holds it on a node (`stepd_step_rec_t`), built
/// from the launch `request` it started from and the `binding` the task
/// plugin's `slurmd-launch-request` decided: what the node-side calls
/// (`pre-launch`, `post-term`, ...) take. No task has a process yet.
pub fn node_step(request: &LaunchRequest, binding: &CpuBinding) -> StepRecord {
    StepRecord {
        job_id: request.job_id,
        step_id: request.step_id,
        user_id: request.user_id,
        group_id: request.group_id,
        node_name: request.node_name.clone(),
        node_id: request.node_id,
        local_tasks: request.global_task_ids.len() as u32,
        total_tasks: request.total_tasks,
        cpus_per_task: request.cpus_per_task,
        cpu_bind_type: binding.cpu_bind_type,
        cpu_bind: binding.cpu_bind.clone(),
        tres_freq: None,
        cores: request.step_cores.clone(),
        task_pids: Vec::new(),
    }
}

/// `_pick_step_cores`: the cores of `node` for `tasks` tasks of the step,
/// marked in `node.used` unless the step overlaps.
fn pick_cores(
    node: &mut JobNode,
    request: &StepRequest,
    tasks: u32,
    cpus_per_core: u32,
) -> Result<Vec<bool>, StepError> {
    let total_cores = node.sockets * node.cores_per_socket;
    let use_all = request.whole || tasks == total_cores;
    let mut cpu_cnt = if use_all {
        node.cpus
    } else {
        let cpt = u32::from(request.cpus_per_task);
        let mut cnt = tasks;
        if cpt > 0 {
            if cpt > cpus_per_core {
                cnt *= cpt.div_ceil(cpus_per_core);
            } else {
                cnt = (cnt * cpt).div_ceil(cpus_per_core);
            }
        }
        if cnt > node.cpus {
            return Err(StepError::TooManyCpus);
        }
        cnt
    };
    let per_task = (cpu_cnt / tasks.max(1)).max(1);
    let mut step = vec![false; node.cores.len()];
    let mut picker = CorePicker {
        node,
        step: &mut step,
        use_all,
        overlap: request.overlap,
        socket_dist: request.task_dist & SOCKET_MASK,
        per_task,
    };
    if picker.select(false, &mut cpu_cnt) || use_all || total_cores == 0 {
        return Ok(step);
    }
    if !request.overcommit {
        return Err(StepError::Busy);
    }
    picker.select(true, &mut cpu_cnt);
    Ok(step)
}

/// `_handle_core_select` over one node's cores.
struct CorePicker<'a> {
    node: &'a mut JobNode,
    step: &'a mut Vec<bool>,
    use_all: bool,
    overlap: bool,
    socket_dist: u32,
    per_task: u32,
}

impl CorePicker<'_> {
    /// `_pick_step_core`: takes core `core` of socket `socket` if the job
    /// has it and (unless `use_all` or oversubscribing) no step uses it.
    fn take(&mut self, socket: u32, core: u32, oversubscribing: bool) -> bool {
        let at = core_at(self.node, socket, core);
        if !self.node.cores[at] {
            return false;
        }
        if oversubscribing {
            if self.step[at] {
                return false;
            }
        } else if !self.overlap {
            if !self.use_all && self.node.used[at] {
                return false;
            }
            self.node.used[at] = true;
        }
        self.step[at] = true;
        true
    }

    /// Picks cores until `cpu_cnt` reaches 0, in the socket order of the
    /// step's distribution; true when it did. Oversubscribing starts each
    /// socket's walk one core further on each call, as Slurm's static
    /// `last_core_inx` does for the first oversubscribing step.
    fn select(&mut self, oversubscribing: bool, cpu_cnt: &mut u32) -> bool {
        let sockets = self.node.sockets;
        let cores = self.node.cores_per_socket;
        let start = if oversubscribing { 1 % cores.max(1) } else { 0 };
        let core_at_step = |i: u32| {
            if oversubscribing {
                (start + i) % cores
            } else {
                i
            }
        };
        match self.socket_dist {
            SOCKET_BLOCK | SOCKET_CFULL => {
                // block fills a socket before the next; fcyclic takes core i
                // of every socket before core i + 1
                let order: Vec<(u32, u32)> = if self.socket_dist == SOCKET_BLOCK {
                    (0..sockets)
                        .flat_map(|s| (0..cores).map(move |i| (s, i)))
                        .collect()
                } else {
                    (0..cores)
                        .flat_map(|i| (0..sockets).map(move |s| (s, i)))
                        .collect()
                };
                for (socket, i) in order {
                    if self.take(socket, core_at_step(i), oversubscribing) {
                        *cpu_cnt -= 1;
                        if *cpu_cnt == 0 {
                            return true;
                        }
                    }
                }
            }
            _ => {
                let mut next = vec![0u32; sockets as usize];
                let mut task_cpus = 0;
                loop {
                    let mut nothing = true;
                    for socket in 0..sockets {
                        let mut i = next[socket as usize];
                        while i < cores {
                            next[socket as usize] = i + 1;
                            if self.take(socket, core_at_step(i), oversubscribing) {
                                nothing = false;
                                *cpu_cnt -= 1;
                                if *cpu_cnt == 0 {
                                    return true;
                                }
                                task_cpus += 1;
                                if task_cpus == self.per_task {
                                    task_cpus = 0;
                                    break;
                                }
                            }
                            i += 1;
                        }
                    }
                    if nothing {
                        break;
                    }
                }
            }
        }
        false
    }
}

/// `_opt_cpu_cnt`: CPUs still needed after the nodes already picked.
fn opt_cpu_cnt(cpu_count: u32, picked: &[bool], usable: &[u32]) -> u32 {
    let mut rem = cpu_count;
    for (i, _) in picked.iter().enumerate().filter(|(_, &p)| p) {
        if usable[i] >= rem {
            return 0;
        }
        rem -= usable[i];
    }
    rem
}

/// `_opt_node_cnt`: how many more nodes to pick.
fn opt_node_cnt(min_nodes: u32, max_nodes: u32, avail: u32, picked: u32) -> u32 {
    let target = if max_nodes > min_nodes {
        max_nodes
    } else {
        min_nodes
    };
    target.saturating_sub(picked).min(avail)
}

/// `_pick_step_nodes_cpus`: `node_cnt` nodes of `from` with `cpu_cnt` CPUs
/// in all, nodes with at least the per-node target first.
fn pick_nodes_cpus(
    from: &[bool],
    node_cnt: u32,
    cpu_cnt: u32,
    usable: &[u32],
) -> Option<Vec<bool>> {
    let mut picked = vec![false; from.len()];
    if node_cnt == 0 {
        return Some(picked);
    }
    let target = cpu_cnt.div_ceil(node_cnt);
    if cpu_cnt <= node_cnt || target > 1024 {
        // bit_pick_cnt: the first node_cnt nodes
        let mut left = node_cnt;
        for (i, _) in from.iter().enumerate().filter(|(_, &b)| b) {
            if left == 0 {
                break;
            }
            picked[i] = true;
            left -= 1;
        }
        return (left == 0).then_some(picked);
    }
    let mut below = vec![0u32; target as usize];
    let (mut rem_nodes, mut rem_cpus) = (node_cnt as i64, i64::from(cpu_cnt));
    for (i, _) in from.iter().enumerate().filter(|(_, &b)| b) {
        if usable[i] < target {
            below[usable[i] as usize] += 1;
            continue;
        }
        picked[i] = true;
        rem_cpus -= i64::from(usable[i]);
        rem_nodes -= 1;
        if rem_cpus <= 0 && rem_nodes <= 0 {
            return Some(picked);
        }
        if rem_nodes == 0 {
            return None;
        }
    }
    let (save_nodes, save_cpus) = (rem_nodes, rem_cpus);
    below[0] = 0;
    for c in (1..target as usize).rev() {
        if below[c] == 0 {
            continue;
        }
        below[c] = below[c].min(rem_nodes.max(0) as u32);
        if rem_nodes > 0 {
            rem_nodes -= i64::from(below[c]);
            rem_cpus -= i64::from(below[c]) * c as i64;
        }
    }
    if rem_cpus > 0 || rem_nodes > 0 {
        return None;
    }
    let (mut rem_nodes, mut rem_cpus) = (save_nodes, save_cpus);
    for (i, _) in from.iter().enumerate().filter(|(_, &b)| b) {
        if usable[i] >= target || below[usable[i] as usize] == 0 {
            continue;
        }
        below[usable[i] as usize] -= 1;
        picked[i] = true;
        rem_cpus -= i64::from(usable[i]);
        rem_nodes -= 1;
        if rem_cpus <= 0 && rem_nodes <= 0 {
            return Some(picked);
        }
        if rem_nodes == 0 {
            break;
        }
    }
    None
}

/// `_task_layout_block` without packing and `_task_layout_cyclic`: the
/// task ids of each node, from a cyclic deal over the nodes' task slots
/// (`cpus`), then over all nodes once every slot is taken. The cyclic deal
/// caps the oversubscription per node evenly and numbers tasks as dealt;
/// the block deal does not cap it and numbers each node's tasks
/// consecutively.
fn layout_spread(cpus: &[u32], tasks: u32, cyclic: bool) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); cpus.len()];
    let total: u32 = cpus.iter().sum();
    let mut over = false;
    let mut max_over = 0;
    if cyclic && total < tasks {
        over = true;
        max_over = (tasks - total).div_ceil(cpus.len() as u32);
    }
    let mut placed = 0;
    let mut j = 0;
    while placed < tasks {
        let mut room = false;
        for (i, &c) in cpus.iter().enumerate() {
            if placed == tasks {
                break;
            }
            let fits = if cyclic {
                j < c || (over && j < c + max_over)
            } else {
                j < c || over
            };
            if fits {
                out[i].push(placed);
                placed += 1;
                if j + 1 < c {
                    room = true;
                }
            }
        }
        if !room {
            over = true;
        }
        j += 1;
    }
    if !cyclic {
        let counts: Vec<u32> = out.iter().map(|ids| ids.len() as u32).collect();
        return consecutive(&counts);
    }
    out
}

/// Task ids numbered node after node, `counts[i]` on node `i`.
fn consecutive(counts: &[u32]) -> Vec<Vec<u32>> {
    let mut next = 0;
    counts
        .iter()
        .map(|&n| {
            let ids = (next..next + n).collect();
            next += n;
            ids
        })
        .collect()
}

/// `_task_layout_block` with `Pack`: one task per node, then fill node by
/// node, then deal the rest over all nodes; ids node after node.
fn layout_packed(cpus: &[u32], tasks: u32) -> Vec<Vec<u32>> {
    let mut out = vec![0u32; cpus.len()];
    let mut placed = 0;
    for (i, &c) in cpus.iter().enumerate() {
        if placed < tasks && out[i] < c {
            out[i] += 1;
            placed += 1;
        }
    }
    for (i, &c) in cpus.iter().enumerate() {
        while placed < tasks && out[i] < c {
            out[i] += 1;
            placed += 1;
        }
    }
    while placed < tasks {
        for slot in out.iter_mut() {
            if placed == tasks {
                break;
            }
            *slot += 1;
            placed += 1;
        }
    }
    consecutive(&out)
}

impl fmt::Display for Step {
    /// `StepId=<id>` and, per node, `node <index>: <tasks> tasks, cores
    /// <list>, <cpus> CPUs`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StepId={}", self.id)?;
        for n in &self.nodes {
            let cores: Vec<String> = n.cores.ones().map(|c| c.to_string()).collect();
            write!(
                f,
                " node {}: {} tasks, cores {}, {} CPUs",
                n.node_index,
                n.task_ids.len(),
                cores.join(","),
                n.cpus
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn srun(args: &str, job_nodes: u32, job_tasks: u32) -> Result<StepRequest, RequestError> {
        let args: Vec<&str> = args.split_whitespace().collect();
        StepRequest::from_srun(&args, job_nodes, job_tasks)
    }

    /// srun 22.05 (launch.c, `launch_common_create_job_step`): no
    /// `--exact` is `SSF_WHOLE`; `-c` implies `--exact`; the node counts
    /// default to the job's and are capped by the task count; `cpu_count`
    /// is the task count, tasks x cpus-per-task with `-c`, the node count
    /// with `--overcommit`.
    #[test]
    fn srun_options_as_srun_sends_them() {
        let plain = srun("-n3", 2, 16).unwrap();
        assert!(plain.whole);
        assert_eq!(
            (plain.min_nodes, plain.max_nodes, plain.cpu_count),
            (2, 2, 3)
        );
        assert_eq!(plain.task_dist & NODE_MASK, srun::task_dist::BLOCK);
        let one = srun("--exact -n1", 2, 16).unwrap();
        assert!(!one.whole);
        assert_eq!((one.min_nodes, one.max_nodes), (1, 1));
        assert_eq!(one.task_dist & NODE_MASK, srun::task_dist::CYCLIC);
        let c = srun("-n2 -c3", 1, 8).unwrap();
        assert!(!c.whole);
        assert_eq!(c.cpu_count, 6);
        let o = srun("--exact -n4 --overcommit", 1, 2).unwrap();
        assert_eq!(o.cpu_count, 1);
        let tasks_default = srun("--exclusive", 1, 8).unwrap();
        assert_eq!(tasks_default.tasks, 8);
        assert!(!tasks_default.whole);
        let m = srun("--exact -n2 -m block:fcyclic --mem-per-cpu=1G", 1, 8).unwrap();
        assert_eq!(m.task_dist & SOCKET_MASK, SOCKET_CFULL);
        assert_eq!(m.memory, StepMemory::PerCpu(1024));
        assert!(srun("--overlap -n1", 1, 8).unwrap().overlap);
    }

    #[test]
    fn bad_and_unmodelled_options_are_refused_by_name() {
        for (args, option) in [
            ("-n0", "--ntasks"),
            ("--mem=1 --mem-per-cpu=1", "--mem-per-cpu"),
            ("-m plane=2", "--distribution"),
            ("--gres=gpu:1", "--gres"),
            ("-w n1", "-w"),
            ("--exact=yes", "--exact"),
            ("hostname", "hostname"),
        ] {
            let e = srun(args, 1, 1).unwrap_err();
            assert_eq!(e.option, option, "{args}: {e}");
        }
    }

    /// slurm_step_layout.c: `_task_layout_block` (a cyclic deal of the
    /// counts, packed with `Pack`) and `_task_layout_cyclic` (with its
    /// even oversubscription), from the examples in its comments.
    #[test]
    fn task_layouts() {
        let counts = |ids: Vec<Vec<u32>>| ids.iter().map(Vec::len).collect::<Vec<_>>();
        let cyclic = layout_spread(&[4, 2, 4, 2], 16, true);
        assert_eq!(cyclic[1], vec![1, 5, 9]);
        assert_eq!(counts(cyclic), vec![5, 3, 5, 3]);
        assert_eq!(
            counts(layout_spread(&[4, 2, 4, 2], 12, true)),
            vec![4, 2, 4, 2]
        );
        assert_eq!(layout_spread(&[8, 8], 3, false), vec![vec![0, 1], vec![2]]);
        assert_eq!(layout_packed(&[4, 4], 5), vec![vec![0, 1, 2, 3], vec![4]]);
        assert_eq!(counts(layout_packed(&[2, 2], 6)), vec![3, 3]);
    }

    /// `_pick_step_nodes_cpus`: nodes meeting the per-node CPU target
    /// first, then smaller ones that make up the count.
    #[test]
    fn nodes_for_a_cpu_count() {
        let from = [true, true, true];
        assert_eq!(
            pick_nodes_cpus(&from, 2, 8, &[2, 4, 6]),
            Some(vec![false, true, true])
        );
        assert_eq!(pick_nodes_cpus(&from, 2, 16, &[2, 4, 6]), None);
        assert_eq!(
            pick_nodes_cpus(&from, 2, 2, &[2, 4, 6]),
            Some(vec![true, true, false])
        );
    }
    #[test]
    fn step_gres_prefers_devices_beside_the_step_cores() {
        // GPU 0 on cores 0-1, GPU 1 on cores 2-3; the step holds core 2.
        let local = |d: u32| d == 1;
        assert_eq!(gres_devices(&[0, 1], local, 1, false), [1]);
        assert_eq!(gres_devices(&[0, 1], local, 2, false), [1, 0]);
        // a step on core 0 (anchor gpus2-n2-step-gpu1): the lowest
        assert_eq!(gres_devices(&[0, 1], |d| d == 0, 1, false), [0]);
        // MPS: one device, the local one
        assert_eq!(gres_devices(&[0, 1], local, 30, true), [1]);
        assert_eq!(gres_devices(&[0], local, 30, true), [0]);
        // fewer free devices than asked
        assert_eq!(gres_devices(&[1], local, 2, false), [1]);
    }
}
