//! The jobs linear tracks: what it needs of every running or suspended
//! job to update its usage tables, find job mates and simulate job ends.

use select_common::{Allocation, JobView, MemRequest};
use slurm_wasm_sdk::types::{JobDetails, JobState, Partition, ShareRequest};
use slurm_wasm_sdk::{Bitmap, Error};

use crate::config::{max_share, SHARED_FORCE};
use crate::filter::per_node_gres;

/// GRES a job holds on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresHeld {
    pub name: String,
    pub type_name: Option<String>,
    pub count: u64,
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

/// A running or suspended job as linear remembers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveJob {
    pub id: u32,
    /// Running (or gang-suspended with priority ≠ 0) rather than suspended.
    pub running: bool,
    /// The partition the job runs in (its first partition); `None` when the
    /// job names none.
    pub partition: Option<u32>,
    /// `details->share_res` after the controller resolved it: 0 (false)
    /// means the job holds its nodes exclusively.
    pub share_res: bool,
    pub end_time: i64,
    pub contiguous: bool,
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

impl ActiveJob {
    /// Reads a job that holds resources. `SLURM_ERROR` naming the job when
    /// it has none (Slurm: "lacks a job_resources struct").
    pub fn from_view(view: &JobView, partitions: &[Partition]) -> Result<Self, Error> {
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
            running: view.state == JobState::Running
                || (view.state == JobState::Suspended && view.priority != 0),
            partition,
            share_res: resolve_share(part, view.details.share),
            end_time: view.end_time,
            contiguous: view.details.contiguous,
            memory: view.memory,
            nodes: alloc.nodes.clone(),
            total_cpus: alloc.ncpus,
            held: held(alloc, &view.details),
        })
    }
}

/// Per-node holdings from an allocation. GRES: the job's per-node GRES
/// requests on every node (what `job_begin` allocates there).
fn held(alloc: &Allocation, details: &JobDetails) -> Vec<NodeHeld> {
    let gres: Vec<GresHeld> = per_node_gres(details)
        .map(|g| GresHeld {
            name: g.name.clone(),
            type_name: g.type_name.clone(),
            count: g.count,
        })
        .collect();
    alloc
        .per_node
        .iter()
        .map(|n| NodeHeld {
            node: n.node,
            cpus: n.cpus,
            memory: n.memory,
            gres: gres.clone(),
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
