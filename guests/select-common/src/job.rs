//! What a select plugin reads of a `job` record, with its bitmaps checked
//! against the node table once at the boundary.

use slurm_wasm_sdk::types::{
    GresAllocation, Job, JobDetails, JobResources, JobState, MemoryRequest,
};
use slurm_wasm_sdk::{Bitmap, Error};

/// `pn_min_memory` without the `MEM_PER_CPU` flag trick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemRequest {
    /// No request (`pn_min_memory` 0 with no flag): all memory of the node
    /// when memory is consumable.
    None,
    /// MB per node; 0 = all memory of the node.
    PerNode(u64),
    /// MB per allocated CPU.
    PerCpu(u64),
}

impl From<&MemoryRequest> for MemRequest {
    fn from(m: &MemoryRequest) -> Self {
        match *m {
            MemoryRequest::None => MemRequest::None,
            MemoryRequest::PerNode(0) => MemRequest::None,
            MemoryRequest::PerNode(n) => MemRequest::PerNode(n),
            MemoryRequest::PerCpu(n) => MemRequest::PerCpu(n),
        }
    }
}

/// What a job holds on one node.
#[derive(Debug, Clone)]
pub struct NodeAlloc {
    pub node: usize,
    /// Cores of the node held (bit = core index).
    pub cores: Bitmap,
    pub cpus: u16,
    /// MB.
    pub memory: u64,
    /// GRES held on the node.
    pub gres: Vec<GresAllocation>,
}

/// A job's resources (`job_resources_t`).
#[derive(Debug, Clone)]
pub struct Allocation {
    /// Nodes of the job, over the whole node table.
    pub nodes: Bitmap,
    pub ncpus: u32,
    /// One entry per node of `nodes`, in node-index order.
    pub per_node: Vec<NodeAlloc>,
    pub whole_nodes: bool,
}

impl Allocation {
    /// Converts the contract's `job-resources`, checking it against a table
    /// of `node_count` nodes: the node bitmap has the table's length, one
    /// entry per set bit in node-index order. `EINVAL` names the job and the
    /// broken rule.
    pub fn from_resources(job_id: u32, r: &JobResources, node_count: usize) -> Result<Self, Error> {
        let nodes = Bitmap::try_from(&r.nodes)
            .map_err(|e| Error::invalid(format!("job {job_id} resources.nodes: {}", e.message)))?;
        if nodes.len() != node_count {
            return Err(Error::invalid(format!(
                "job {job_id} resources.nodes has {} bits; the node table has {node_count} nodes",
                nodes.len()
            )));
        }
        let expected: Vec<usize> = nodes.ones().collect();
        let got: Vec<usize> = r.per_node.iter().map(|n| n.node_index as usize).collect();
        if expected != got {
            return Err(Error::invalid(format!(
                "job {job_id} resources.per-node lists nodes {got:?}; expected one entry per node \
                 of resources.nodes in index order {expected:?}"
            )));
        }
        let per_node = r
            .per_node
            .iter()
            .map(|n| {
                Ok(NodeAlloc {
                    node: n.node_index as usize,
                    cores: Bitmap::try_from(&n.cores).map_err(|e| {
                        Error::invalid(format!(
                            "job {job_id} cores of node {}: {}",
                            n.node_index, e.message
                        ))
                    })?,
                    cpus: n.cpus,
                    memory: n.memory,
                    gres: n.gres.clone(),
                })
            })
            .collect::<Result<_, Error>>()?;
        Ok(Allocation {
            nodes,
            ncpus: r.ncpus,
            per_node,
            whole_nodes: r.whole_nodes,
        })
    }

    /// The entry of node `node`, if the job holds it.
    pub fn on(&self, node: usize) -> Option<&NodeAlloc> {
        self.per_node.iter().find(|n| n.node == node)
    }
}

/// A job as select plugins read it.
#[derive(Debug, Clone)]
pub struct JobView {
    pub id: u32,
    pub state: JobState,
    pub priority: u32,
    /// Partitions, by index, in request order.
    pub partitions: Vec<u32>,
    pub start_time: i64,
    pub end_time: i64,
    pub time_limit: Option<u32>,
    /// The request (`job_details_t`), as given.
    pub details: JobDetails,
    pub memory: MemRequest,
    /// `-w`, checked to be a node-table bitmap.
    pub required: Option<Bitmap>,
    /// `-x`, checked to be a node-table bitmap.
    pub excluded: Option<Bitmap>,
    /// Set for running, suspended and completing jobs.
    pub resources: Option<Allocation>,
}

impl JobView {
    /// Reads `job` against a table of `node_count` nodes; `EINVAL` naming
    /// the job and field when a bitmap does not match the table.
    pub fn new(job: &Job, node_count: usize) -> Result<Self, Error> {
        let node_map = |field: &str, map: &Option<slurm_wasm_sdk::types::Bitmap>| {
            map.as_ref()
                .map(|m| {
                    let b = Bitmap::try_from(m).map_err(|e| {
                        Error::invalid(format!("job {} {field}: {}", job.job_id, e.message))
                    })?;
                    if b.len() != node_count {
                        return Err(Error::invalid(format!(
                            "job {} {field} has {} bits; the node table has {node_count} nodes",
                            job.job_id,
                            b.len()
                        )));
                    }
                    Ok(b)
                })
                .transpose()
        };
        Ok(JobView {
            id: job.job_id,
            state: job.state,
            priority: job.priority,
            partitions: job.partitions.clone(),
            start_time: job.start_time,
            end_time: job.end_time,
            time_limit: job.time_limit,
            memory: MemRequest::from(&job.details.memory),
            required: node_map("details.required-nodes", &job.details.required_nodes)?,
            excluded: node_map("details.excluded-nodes", &job.details.excluded_nodes)?,
            resources: job
                .resources
                .as_ref()
                .map(|r| Allocation::from_resources(job.job_id, r, node_count))
                .transpose()?,
            details: job.details.clone(),
        })
    }

    /// RUNNING or SUSPENDED.
    pub fn is_active(&self) -> bool {
        matches!(self.state, JobState::Running | JobState::Suspended)
    }

    /// The job's nodes (empty bitmap of `node_count` bits without resources).
    pub fn nodes(&self, node_count: usize) -> Bitmap {
        self.resources
            .as_ref()
            .map(|r| r.nodes.clone())
            .unwrap_or_else(|| Bitmap::new(node_count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;
    use slurm_wasm_sdk::types::NodeResources;

    fn resources(len: u32, nodes: &[u32]) -> JobResources {
        let map = Bitmap::from_bits(len as usize, nodes.iter().map(|&n| n as usize));
        JobResources {
            nodes: (&map).into(),
            ncpus: 4 * nodes.len() as u32,
            per_node: nodes
                .iter()
                .map(|&n| NodeResources {
                    node_index: n,
                    cores: (&Bitmap::full(4)).into(),
                    cpus: 4,
                    memory: 100,
                    gres: Vec::new(),
                })
                .collect(),
            whole_nodes: true,
        }
    }

    #[test]
    fn reads_resources_and_memory() {
        let mut job = fixtures::job(7);
        job.details.memory = MemoryRequest::PerCpu(500);
        job.resources = Some(resources(4, &[1, 3]));
        let view = JobView::new(&job, 4).unwrap();
        assert_eq!(view.memory, MemRequest::PerCpu(500));
        let alloc = view.resources.unwrap();
        assert_eq!(alloc.nodes.ones().collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(alloc.on(3).unwrap().cpus, 4);
    }

    #[test]
    fn per_node_out_of_order_is_refused() {
        let mut job = fixtures::job(7);
        let mut r = resources(4, &[1, 3]);
        r.per_node.swap(0, 1);
        job.resources = Some(r);
        let err = JobView::new(&job, 4).unwrap_err();
        assert!(err.message.contains("index order"), "{}", err.message);
    }

    #[test]
    fn bitmap_of_wrong_length_is_refused() {
        let mut job = fixtures::job(7);
        job.details.required_nodes = Some(fixtures::bitmap(3));
        let err = JobView::new(&job, 4).unwrap_err();
        assert!(err.message.contains("required-nodes"), "{}", err.message);
    }

    #[test]
    fn per_node_zero_is_no_request() {
        // `--mem=0` asks for all the memory of the node (sbatch(1)).
        assert_eq!(
            MemRequest::from(&MemoryRequest::PerNode(0)),
            MemRequest::None
        );
    }
}
