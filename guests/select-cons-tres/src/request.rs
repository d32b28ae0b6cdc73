//! The job as the algorithm sees it: `job_details` normalised the way
//! slurmctld hands it to cons_tres (effective per-node CPU minimum, memory
//! defaults resolved, `node_req`, whole-node flag).

use slurm_wasm_sdk::types::{
    GresFlags, GresScope, Job, MemoryRequest, Oversubscribe, Partition, ShareRequest,
};

use crate::node_usage::{
    is_shared, GresNames, NODE_CR_AVAILABLE, NODE_CR_ONE_ROW, NODE_CR_RESERVED,
};
use crate::params::Params;
use slurm_wasm_sdk::Bitmap;

/// A GRES name or type no node has: matches no device.
pub const UNKNOWN_GRES: u32 = u32::MAX;

/// Memory asked per node, after defaults (`pn_min_memory`). The variants
/// are named as the contract's `memory-request` ones.
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    /// MB per node; 0 = all the memory of the node.
    PerNode(u64),
    /// MB per allocated CPU.
    PerCpu(u64),
    /// `--mem-per-gpu` (the largest mem-per-GRES asked) without an explicit
    /// memory request: Slurm clears the per-node request
    /// (`_verify_node_state`, cons_common/job_test.c:636), a node needs this
    /// much free memory, and the job is given mem-per-GRES x the GRES it
    /// holds on each node (`gres_select_util_job_mem_set`, :1654).
    PerGres(u64),
}

/// Socket-level task distribution used to trim cores (`dist_tasks`,
/// cons_common/dist_tasks.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SockDist {
    Block,
    Cyclic,
}

/// One GRES request.
#[derive(Clone, Debug, PartialEq)]
pub struct GresReq {
    pub name: String,
    pub type_name: Option<String>,
    /// `name` and `type_name` in the instance's [`GresNames`]
    /// ([`UNKNOWN_GRES`] when no node has them); `type_id` is `None` when
    /// any type will do.
    pub name_id: u32,
    pub type_id: Option<u32>,
    /// `mps` or `shard`.
    pub shared: bool,
    /// `gpu`.
    pub gpu: bool,
    pub scope: GresScope,
    pub count: u64,
    pub cpus_per_gres: u32,
    pub mem_per_gres: u64,
}

/// The normalised request.
#[derive(Clone, Debug)]
pub struct JobView {
    pub job_id: u32,
    pub partition: u32,
    pub min_nodes: u32,
    pub max_nodes: u32,
    pub req_nodes: u32,
    pub min_cpus: u32,
    /// 0 = no maximum.
    pub max_cpus: u32,
    /// `-n`, 0 when not given.
    pub num_tasks: u32,
    pub cpt: u32,
    pub ntasks_per_node: u32,
    pub ntasks_per_socket: u32,
    pub ntasks_per_core: u32,
    pub threads_per_core: u32,
    pub sockets_per_node: u32,
    pub cores_per_socket: u32,
    /// `pn_min_cpus` after slurmctld's normalisation.
    pub pn_min_cpus: u32,
    pub mem: Mem,
    /// The job takes its nodes whole (22.05's `whole_node == 1`):
    /// `--exclusive`, a core specialisation, or an `OverSubscribe=EXCLUSIVE`
    /// partition, where slurmctld sets it (node_scheduler.c:820-824; on the
    /// anchor such a `-n1 --gres=gpu:1` job held every CPU and both GPUs).
    pub whole_node: bool,
    pub node_req: u16,
    /// `--oversubscribe` asked (`share_res == 1`).
    pub share_res: bool,
    pub contiguous: bool,
    pub overcommit: bool,
    pub required: Option<Bitmap>,
    pub excluded: Option<Bitmap>,
    pub node_dist_plane: bool,
    pub plane_size: u32,
    pub sock_dist: SockDist,
    pub gres: Vec<GresReq>,
    pub enforce_binding: bool,
    /// Least loaded nodes first: `CR_LLN`, or the partition's `LLN=YES`.
    pub lln: bool,
    /// `--spread-job`.
    pub spread: bool,
    /// The nodes idle in the live tables, when node selection prefers
    /// nodes already running jobs (`prefer_alloc_nodes`: will-run tests
    /// after releasing jobs under `SchedulerParameters=bf_busy_nodes`, see
    /// `eval_nodes`); `None` otherwise. Set by the will-run test, not by
    /// the request.
    pub prefer_busy: Option<Bitmap>,
    /// [`JobView::gres_cpus_per_node`], read for every candidate node.
    gres_cpn: u32,
}

impl JobView {
    /// Whether `other` asks exactly what `self` asks (all but the job id):
    /// a select test then answers both the same.
    pub fn same_request(&self, other: &JobView) -> bool {
        // Spelled out field by field: a field added later must be compared
        // (or knowingly left out) before this compiles.
        let JobView {
            job_id: _,
            partition,
            min_nodes,
            max_nodes,
            req_nodes,
            min_cpus,
            max_cpus,
            num_tasks,
            cpt,
            ntasks_per_node,
            ntasks_per_socket,
            ntasks_per_core,
            threads_per_core,
            sockets_per_node,
            cores_per_socket,
            pn_min_cpus,
            mem,
            whole_node,
            node_req,
            share_res,
            contiguous,
            overcommit,
            required,
            excluded,
            node_dist_plane,
            plane_size,
            sock_dist,
            gres,
            enforce_binding,
            lln,
            spread,
            // Derived from the fields above, or set by the test.
            prefer_busy: _,
            gres_cpn: _,
        } = self;
        *partition == other.partition
            && *min_nodes == other.min_nodes
            && *max_nodes == other.max_nodes
            && *req_nodes == other.req_nodes
            && *min_cpus == other.min_cpus
            && *max_cpus == other.max_cpus
            && *num_tasks == other.num_tasks
            && *cpt == other.cpt
            && *ntasks_per_node == other.ntasks_per_node
            && *ntasks_per_socket == other.ntasks_per_socket
            && *ntasks_per_core == other.ntasks_per_core
            && *threads_per_core == other.threads_per_core
            && *sockets_per_node == other.sockets_per_node
            && *cores_per_socket == other.cores_per_socket
            && *pn_min_cpus == other.pn_min_cpus
            && *mem == other.mem
            && *whole_node == other.whole_node
            && *node_req == other.node_req
            && *share_res == other.share_res
            && *contiguous == other.contiguous
            && *overcommit == other.overcommit
            && *required == other.required
            && *excluded == other.excluded
            && *node_dist_plane == other.node_dist_plane
            && *plane_size == other.plane_size
            && *sock_dist == other.sock_dist
            && *gres == other.gres
            && *enforce_binding == other.enforce_binding
            && *lln == other.lln
            && *spread == other.spread
    }

    /// Normalises `job` for the partition table `parts`. `default_memory` is
    /// the cluster's `DefMemPerCPU`/`DefMemPerNode`; `names` numbers the
    /// GRES the nodes have; `params` gives the default socket distribution
    /// and the cluster's GPU defaults. Fails with a message naming the
    /// field on input the controller would never send.
    pub fn new(
        job: &Job,
        names: &GresNames,
        parts: &[Partition],
        default_memory: &MemoryRequest,
        params: &Params,
        nodes: usize,
    ) -> Result<JobView, String> {
        let d = &job.details;
        let partition = job.partitions.first().copied().unwrap_or(0);
        let part = parts.get(partition as usize);
        let ntasks_per_node = d.ntasks_per_node as u32;
        // `_set_gpu_defaults` (cons_common/job_test.c:227-262): the
        // partition's DefCpuPerGPU, else the cluster's, only for a job that
        // gave no `-c`; DefMemPerGPU likewise, whatever `-c` says. Each GPU
        // request without its own value takes them, and a per-task GPU
        // request raises CPUs per task to GPUs per task x the default
        // (`gres_select_util_job_set_defs`, gres_select_util.c:55-106).
        let part_gpu = part.map(|p| &p.gpu_defaults);
        let def_cpu_per_gpu = if d.cpus_per_task == 0 {
            part_gpu
                .and_then(|g| g.cpus_per_gpu)
                .or(params.def_cpu_per_gpu)
                .unwrap_or(0)
        } else {
            0
        };
        let def_mem_per_gpu = part_gpu
            .and_then(|g| g.mem_per_gpu)
            .or(params.def_mem_per_gpu)
            .unwrap_or(0);
        let gpu_cpt = d
            .gres
            .iter()
            .filter(|g| g.name == "gpu" && g.scope == GresScope::PerTask)
            .map(|g| g.count.saturating_mul(def_cpu_per_gpu))
            .max()
            .unwrap_or(0);
        let cpt = (d.cpus_per_task.max(1) as u32).max(u32::try_from(gpu_cpt).unwrap_or(u32::MAX));
        let mem_per_gres_of = |g: &slurm_wasm_sdk::types::GresRequest| match g.mem_per_gres {
            Some(m) => m,
            None if g.name == "gpu" => def_mem_per_gpu,
            None => 0,
        };
        // `memory: none` is Slurm's job without JOB_MEM_SET: a default
        // applies, and a per-GPU memory (`--mem-per-gpu`, else
        // DefMemPerGPU) replaces it (`gres_select_util_job_mem_max`).
        let mem_per_gres = d.gres.iter().map(mem_per_gres_of).max().unwrap_or(0);
        let mem = match (&d.memory, part.map(|p| &p.default_memory), default_memory) {
            (MemoryRequest::None, _, _) if mem_per_gres > 0 => Mem::PerGres(mem_per_gres),
            (MemoryRequest::PerNode(v), _, _) => Mem::PerNode(*v),
            (MemoryRequest::PerCpu(v), _, _) => Mem::PerCpu(*v),
            (MemoryRequest::None, Some(MemoryRequest::PerNode(v)), _) => Mem::PerNode(*v),
            (MemoryRequest::None, Some(MemoryRequest::PerCpu(v)), _) => Mem::PerCpu(*v),
            (MemoryRequest::None, _, MemoryRequest::PerNode(v)) => Mem::PerNode(*v),
            (MemoryRequest::None, _, MemoryRequest::PerCpu(v)) => Mem::PerCpu(*v),
            _ => Mem::PerNode(0),
        };
        let oversub = part.map(|p| p.oversubscribe).unwrap_or(Oversubscribe::No);
        let share_res = d.share == ShareRequest::Oversubscribe;
        // node_req of a job (`_get_job_node_req`, cons_common/job_test.c).
        let node_req = match oversub {
            Oversubscribe::Exclusive => NODE_CR_RESERVED,
            Oversubscribe::Force(_) => NODE_CR_AVAILABLE,
            Oversubscribe::Yes(n) if n > 1 && share_res => NODE_CR_AVAILABLE,
            _ => NODE_CR_ONE_ROW,
        };
        // `--exclusive=user` and `=mcs` keep other users' jobs off the
        // nodes (the controller's candidates), but the job's own allocation
        // is not whole-node (22.05 job_mgr.c:8682-8705: whole_node 2 and 3,
        // which the select plugin's `whole_node == 1` tests leave out).
        let whole_node = d.share == ShareRequest::Exclusive
            || matches!(oversub, Oversubscribe::Exclusive)
            || d.core_spec.is_some();
        let bitmap = |b: &Option<slurm_wasm_sdk::types::Bitmap>,
                      what: &str|
         -> Result<Option<Bitmap>, String> {
            match b {
                None => Ok(None),
                Some(b) if b.len as usize != nodes => Err(format!(
                    "job {}: {what} has {} bits, the node table has {nodes} nodes",
                    job.job_id, b.len
                )),
                Some(b) => Bitmap::from_words(b.len, &b.words)
                    .map(Some)
                    .map_err(|e| format!("job {}: {what}: {e}", job.job_id)),
            }
        };
        let dist = d.task_dist & 0xffff;
        let node_dist_plane = dist & 0xf == 0x4;
        let sock_bits = (dist >> 4) & 0xf;
        let sock_dist = match sock_bits {
            2 => SockDist::Block,
            1 | 3 => SockDist::Cyclic,
            _ if node_dist_plane => SockDist::Block,
            _ if params.default_dist_block => SockDist::Block,
            _ => SockDist::Cyclic,
        };
        let gres: Vec<GresReq> = d
            .gres
            .iter()
            .map(|g| GresReq {
                name: g.name.clone(),
                type_name: g.type_name.clone(),
                name_id: names.name_id(&g.name).unwrap_or(UNKNOWN_GRES),
                type_id: g
                    .type_name
                    .as_deref()
                    .map(|t| names.type_id(t).unwrap_or(UNKNOWN_GRES)),
                shared: is_shared(&g.name),
                gpu: g.name == "gpu",
                scope: g.scope,
                count: g.count,
                cpus_per_gres: match g.cpus_per_gres {
                    Some(c) => c as u32,
                    None if g.name == "gpu" => u32::try_from(def_cpu_per_gpu).unwrap_or(u32::MAX),
                    None => 0,
                },
                mem_per_gres: mem_per_gres_of(g),
            })
            .collect();
        let mut view = JobView {
            job_id: job.job_id,
            partition,
            min_nodes: d.min_nodes,
            max_nodes: d.max_nodes.unwrap_or(u32::MAX),
            req_nodes: d.min_nodes,
            min_cpus: d.min_cpus.max(1),
            max_cpus: d.max_cpus.unwrap_or(0),
            num_tasks: d.num_tasks,
            cpt,
            ntasks_per_node,
            ntasks_per_socket: d.ntasks_per_socket as u32,
            ntasks_per_core: d.ntasks_per_core as u32,
            threads_per_core: d.threads_per_core as u32,
            sockets_per_node: d.sockets_per_node as u32,
            cores_per_socket: d.cores_per_socket as u32,
            pn_min_cpus: (d.pn_min_cpus as u32).max(cpt).max(ntasks_per_node * cpt),
            mem,
            whole_node,
            node_req,
            share_res,
            contiguous: d.contiguous,
            overcommit: d.overcommit,
            required: bitmap(&d.required_nodes, "required-nodes")?,
            excluded: bitmap(&d.excluded_nodes, "excluded-nodes")?,
            node_dist_plane,
            plane_size: d.plane_size.max(1) as u32,
            sock_dist,
            gres,
            enforce_binding: d.gres_flags.contains(GresFlags::ENFORCE_BINDING),
            lln: params.lln || part.is_some_and(|p| p.lln),
            spread: d.spread_job,
            prefer_busy: None,
            gres_cpn: 0,
        };
        // CPUs the GRES request implies (`--cpus-per-gpu`).
        let gres_cpus: u32 = view
            .gres
            .iter()
            .map(|g| match g.scope {
                GresScope::PerJob => g.count as u32 * g.cpus_per_gres,
                GresScope::PerTask => g.count as u32 * g.cpus_per_gres * view.num_tasks.max(1),
                _ => g.count as u32 * g.cpus_per_gres * view.min_nodes.max(1),
            })
            .max()
            .unwrap_or(0);
        view.min_cpus = view.min_cpus.max(gres_cpus);
        view.gres_cpn = view
            .gres
            .iter()
            .map(|g| match g.scope {
                GresScope::PerNode => g.count as u32 * g.cpus_per_gres,
                GresScope::PerTask if view.max_nodes == 1 => {
                    g.count as u32 * g.cpus_per_gres * view.num_tasks.max(1)
                }
                _ => 0,
            })
            .max()
            .unwrap_or(0);
        view.pn_min_cpus = view.pn_min_cpus.max(view.gres_cpn);
        Ok(view)
    }

    /// CPUs per node the per-node / per-task GRES requests imply.
    pub fn gres_cpus_per_node(&self) -> u32 {
        self.gres_cpn
    }

    /// Tasks expected on one node (`can_job_run_on_node`,
    /// cons_tres/job_test.c: `--ntasks-per-node`, 1 with
    /// `--overcommit`, or `-n` when the job is limited to one node).
    pub fn tasks_per_node_needed(&self) -> u32 {
        if self.ntasks_per_node > 0 {
            self.ntasks_per_node
        } else if self.overcommit {
            1
        } else if self.max_nodes == 1 {
            self.num_tasks.max(1)
        } else {
            1
        }
    }

    /// The GPU-specific options `select/cons_res` refuses, if any.
    pub fn cons_res_refusal(&self) -> Option<String> {
        for g in &self.gres {
            if g.name == "mps" {
                return Some("gres/mps is not supported by select/cons_res".into());
            }
            if g.name == "gpu" && g.scope != GresScope::PerNode {
                return Some(
                    "--gpus, --gpus-per-socket and --gpus-per-task need select/cons_tres".into(),
                );
            }
            if g.cpus_per_gres > 0 || g.mem_per_gres > 0 {
                return Some("--cpus-per-gpu and --mem-per-gpu need select/cons_tres".into());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests;
