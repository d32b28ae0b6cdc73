//! The jobs linear tracks: what it needs of every running or suspended
//! job to update its usage tables, find job mates and simulate job ends.

use select_common::{Allocation, JobView, MemRequest, NodeTable};
use slurm_wasm_sdk::types::{JobDetails, JobState, Partition, ShareRequest};
use slurm_wasm_sdk::{Bitmap, Error};

use crate::config::{max_share, Config, SHARED_FORCE};
use crate::filter::per_node_gres;

/// GRES a job holds on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresHeld {
    pub name: String,
    pub type_name: Option<String>,
    pub count: u64,
    /// The devices held (indices among the node's devices of `name`), as
    /// the job's resources give them: only a job that shares its nodes is
    /// given devices (see [`crate::resources::pick_devices`]).
    pub devices: Option<Bitmap>,
}

/// What a job holds on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeHeld {
    pub node: usize,
    pub cpus: u16,
    /// MB (`memory_allocated`).
    pub memory: u64,
    pub gres: Vec<GresHeld>,
}

/// Where a job linear tracks stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// `JOB_RUNNING`: in the run set, and the only kind of job that can be
    /// a job mate (`_find_job_mate` asks `IS_JOB_RUNNING`).
    Running,
    /// Suspended by gang scheduling (`job_suspend` without `indf_susp`, or
    /// found SUSPENDED with priority ≠ 0 by a rebuild): Slurm leaves the
    /// tables alone, so the job stays in the run set, but it is no mate.
    GangSuspended,
    /// Suspended by an administrator (`indf_susp`): out of the run set.
    Suspended,
}

impl Activity {
    /// The job's state as a rebuild (`_init_node_cr`) reads it.
    pub fn of(state: JobState, priority: u32) -> Self {
        match state {
            JobState::Suspended if priority != 0 => Activity::GangSuspended,
            JobState::Suspended => Activity::Suspended,
            _ => Activity::Running,
        }
    }

    /// Does the job count in the run set?
    pub fn in_run_set(self) -> bool {
        self != Activity::Suspended
    }
}

/// A running or suspended job as linear remembers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveJob {
    pub id: u32,
    pub activity: Activity,
    /// The partition the job runs in (its first partition); `None` when the
    /// job names none.
    pub partition: Option<u32>,
    /// `details->share_res` after the controller resolved it: 0 (false)
    /// means the job holds its nodes exclusively.
    pub share_res: bool,
    pub end_time: i64,
    pub contiguous: bool,
    /// The memory its transitions charge: the request, or for a job that
    /// asked for none under `CR_Memory` the least memory among its nodes
    /// (see [`charged_memory`]).
    pub memory: MemRequest,
    /// The job's nodes.
    pub nodes: Bitmap,
    /// `total_cpus`.
    pub total_cpus: u32,
    /// One entry per node of `nodes`, in node-index order.
    pub held: Vec<NodeHeld>,
}

/// The controller's `_resolve_shared_status` for a whole-node plugin: does
/// the job share its nodes (`share_res`)?
///
/// EXCLUSIVE partitions never share; `FORCE:n` with n > 1 always shares;
/// otherwise (NO, YES:n, FORCE:1) the job shares only when it asked with
/// `--oversubscribe` and the partition is not `NO`.
pub fn resolve_share(partition: Option<&Partition>, share: ShareRequest) -> bool {
    let Some(partition) = partition else {
        return matches!(share, ShareRequest::Oversubscribe);
    };
    let max = max_share(partition);
    if max == 0 {
        return false;
    }
    if max & SHARED_FORCE != 0 && (max & !SHARED_FORCE) > 1 {
        return true;
    }
    if max == 1 {
        return false;
    }
    matches!(share, ShareRequest::Oversubscribe)
}

/// The memory request `job_begin`, `job_fini`, `job_resized` and a
/// rebuild charge on each of a job's nodes. A job that asked for no memory
/// under `CR_Memory` is charged the least memory among the nodes of its
/// allocation on every one of them: when Slurm places such a job,
/// `_build_select_struct` writes that least node memory into the job's
/// `pn_min_memory`, which every later transition reads (select_linear.c,
/// 22.05). Any other request is charged as asked.
pub fn charged_memory(
    memory: MemRequest,
    alloc: &Allocation,
    nodes: &NodeTable,
    config: &Config,
) -> MemRequest {
    if memory != MemRequest::None || !config.memory {
        return memory;
    }
    alloc
        .per_node
        .iter()
        .filter_map(|n| nodes.get(n.node))
        .map(|n| n.real_memory)
        .min()
        .map_or(MemRequest::None, MemRequest::PerNode)
}

impl ActiveJob {
    /// Reads a job that holds resources. `SLURM_ERROR` naming the job when
    /// it has none (Slurm: "lacks a job_resources struct").
    pub fn from_view(
        view: &JobView,
        partitions: &[Partition],
        nodes: &NodeTable,
        config: &Config,
    ) -> Result<Self, Error> {
        let Some(alloc) = &view.resources else {
            return Err(Error::generic(format!(
                "job {} lacks a job_resources struct",
                view.id
            )));
        };
        let partition = view.partitions.first().copied();
        let part = partition.and_then(|p| partitions.get(p as usize));
        Ok(ActiveJob {
            id: view.id,
            activity: Activity::of(view.state, view.priority),
            partition,
            share_res: resolve_share(part, view.details.share),
            end_time: view.end_time,
            contiguous: view.details.contiguous,
            memory: charged_memory(view.memory, alloc, nodes, config),
            nodes: alloc.nodes.clone(),
            total_cpus: alloc.ncpus,
            held: held(alloc, &view.details),
        })
    }
}

/// Per-node holdings from an allocation. GRES: the job's per-node GRES
/// requests on every node (what `job_begin` allocates there), with the
/// devices the allocation names there.
fn held(alloc: &Allocation, details: &JobDetails) -> Vec<NodeHeld> {
    alloc
        .per_node
        .iter()
        .map(|n| NodeHeld {
            node: n.node,
            cpus: n.cpus,
            memory: n.memory,
            gres: per_node_gres(details)
                .map(|g| GresHeld {
                    name: g.name.clone(),
                    type_name: g.type_name.clone(),
                    count: g.count,
                    devices: n
                        .gres
                        .iter()
                        .find(|a| a.name == g.name && a.type_name == g.type_name)
                        .and_then(|a| a.devices.as_ref())
                        .and_then(|d| Bitmap::try_from(d).ok()),
                })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;
    use slurm_wasm_sdk::types::Oversubscribe;

    #[test]
    fn share_resolution_follows_the_controller() {
        // node_scheduler.c _resolve_shared_status for non-cons plugins.
        let mut p = fixtures::partition(0, "p", 2);
        let ask = ShareRequest::Oversubscribe;
        let none = ShareRequest::PartitionDefault;
        assert!(
            !resolve_share(Some(&p), ask),
            "OverSubscribe=NO never shares"
        );
        p.oversubscribe = Oversubscribe::Yes(4);
        assert!(resolve_share(Some(&p), ask));
        assert!(!resolve_share(Some(&p), none));
        p.oversubscribe = Oversubscribe::Force(2);
        assert!(resolve_share(Some(&p), none), "FORCE:2 shares every job");
        p.oversubscribe = Oversubscribe::Force(1);
        assert!(!resolve_share(Some(&p), none));
        p.oversubscribe = Oversubscribe::Exclusive;
        assert!(!resolve_share(Some(&p), ask));
    }
}
