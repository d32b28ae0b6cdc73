//! `select/cons_tres` (and `select/cons_res`): Slurm's consumable-resource
//! node selection (src/plugins/select/cons_tres and the cons_common code it
//! shares with cons_res), as Slurm 22.05.8 behaves.
//!
//! The algorithm is plain Rust on the contract's records and builds
//! natively as well ([`ConsTres`] is the instance a benchmark drives):
//!
//! * [`params`]: `SelectTypeParameters` (`parse_select_type_param`,
//!   common/slurm_selecttype_info.c; `select_p_node_init`,
//!   cons_common/cons_common.c);
//! * [`node_usage`]: node table, devices and usage counters
//!   (`node_use_record_t`, cons_common/node_data.h);
//! * [`rows`]: partition rows (`part_res_record_t`, cons_common/part_data.c);
//! * [`request`]: the job normalised as slurmctld hands it over;
//! * [`verify`]: `_verify_node_state` (cons_common/job_test.c);
//! * [`allocate_sc`] and [`can_run`]: one node's offer (`_allocate_sc`,
//!   cons_common/cons_common.c; `can_job_run_on_node`, cons_tres/job_test.c);
//! * [`eval_nodes`]: choosing nodes (`_eval_nodes` and its variants,
//!   cons_tres/job_test.c);
//! * [`dist_tasks`]: task counts and core trimming (`dist_tasks`,
//!   cons_common/dist_tasks.c);
//! * [`gres_sched`]: GRES in scheduling (cons_tres/gres_sched.c,
//!   cons_common/gres_select_filter.c);
//! * [`job_test`]: the passes and modes (`common_job_test` and `_job_test`,
//!   cons_common/job_test.c);
//! * [`preempt`] and [`will_run`]: the simulations (`_run_now`,
//!   `_will_run_test`, cons_common/job_test.c);
//! * [`transitions`]: usage-table transitions (`job_res_add_job`,
//!   `job_res_rm_job`, cons_common/job_resources.c);
//! * [`state`]: the state blob.
//!
//! [`plugin`] exports it through the `select-plugin` world, with the
//! nodeinfo/jobinfo resources of `select-common` (shared with select/linear).

mod allocate_sc;
mod can_run;
mod dist_tasks;
mod eval_nodes;
mod gres_sched;
mod job_test;
mod node_usage;
mod params;
mod plugin;
mod preempt;
mod request;
mod rows;
mod state;
mod transitions;
mod verify;
mod will_run;

pub use plugin::{instance_from, ConsTresPlugin};

use std::cell::RefCell;
use std::collections::BTreeMap;

use slurm_wasm_sdk::types::{MemoryRequest, Node, Oversubscribe, Partition};

use crate::node_usage::{GresColumns, GresNames, NodeRec, NodeUse};
use crate::params::Params;
use crate::rows::PartRows;
use slurm_wasm_sdk::Bitmap;

/// What a job holds on one node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAlloc {
    pub node: usize,
    /// Node-local core bitmap.
    pub cores: Bitmap,
    pub cpus: u32,
    pub memory: u64,
    /// `(device, amount)` pairs.
    pub gres: Vec<(usize, u64)>,
    pub tasks: u32,
}

/// A job the tables know.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRec {
    pub id: u32,
    pub partition: u32,
    pub node_req: u16,
    pub whole_node: bool,
    pub end_time: i64,
    /// `start + --time-min`, when the job has a `--time-min`.
    pub soft_end: Option<i64>,
    /// No time limit (end-time guesses use now + 1 year).
    pub unlimited: bool,
    pub nodes: Vec<NodeAlloc>,
    /// Suspended by an administrator: memory and GRES stay, cores are released.
    pub suspended: bool,
}

impl JobRec {
    /// The job's cores in the cluster-wide core map, as (first core of the
    /// node, node-local cores) per node holding CPUs: rows test and update
    /// only these words, so adding or removing a job costs its own size,
    /// not the cluster's.
    pub fn core_pieces<'a>(&'a self, recs: &[NodeRec]) -> Vec<(usize, &'a Bitmap)> {
        self.nodes
            .iter()
            .filter(|n| n.cpus > 0)
            .map(|n| (recs[n.node].core_off, &n.cores))
            .collect()
    }

    /// What re-packing a partition's rows needs of the job.
    pub fn packed<'a>(&'a self, recs: &[NodeRec]) -> rows::Packed<'a> {
        let cores = self.core_pieces(recs);
        let start = cores
            .iter()
            .find_map(|(off, c)| c.ones().next().map(|k| off + k))
            .unwrap_or(usize::MAX);
        rows::Packed {
            start,
            cpus: self.nodes.iter().map(|n| n.cpus).sum(),
            cores,
        }
    }
}

/// The usage tables (cloned for simulations).
///
/// Equality compares the tables, not [`Usage::version`].
#[derive(Clone, Debug)]
pub struct Usage {
    pub nodes: Vec<NodeUse>,
    pub rows: Vec<PartRows>,
    pub jobs: BTreeMap<u32, JobRec>,
    /// Changes whenever the node or row tables may have changed: a new
    /// value at construction and at every [`transitions::add_job`] and
    /// [`transitions::remove_job`] (the two functions that change them).
    /// What is derived from the tables (the will-run [`will_run::Scratch`])
    /// is kept only while the version it was made from is current.
    pub version: u64,
}

impl Usage {
    /// Tables of `nodes` and `rows` with no job, under a new version.
    pub fn new(nodes: Vec<NodeUse>, rows: Vec<PartRows>) -> Usage {
        Usage {
            nodes,
            rows,
            jobs: BTreeMap::new(),
            version: next_version(),
        }
    }
}

impl PartialEq for Usage {
    fn eq(&self, other: &Usage) -> bool {
        self.nodes == other.nodes && self.rows == other.rows && self.jobs == other.jobs
    }
}

/// A [`Usage::version`] no tables had before (unique in the process).
pub fn next_version() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The plugin instance: configuration, node table, usage tables.
#[derive(Clone, Debug)]
pub struct ConsTres {
    pub params: Params,
    pub partitions: Vec<Partition>,
    pub default_memory: MemoryRequest,
    pub recs: Vec<NodeRec>,
    /// The GRES names and types of the node table, numbered.
    pub gres_names: GresNames,
    /// Configured GRES per node, by name and type, dense.
    pub gres_columns: GresColumns,
    pub total_cores: usize,
    /// All cores minus specialised ones.
    pub base_avail: Bitmap,
    /// Per node, the end (exclusive) of its range in the core map.
    pub core_ends: Vec<u32>,
    pub usage: Usage,
    /// What will-run answers keep between calls (see [`will_run::Scratch`]).
    pub scratch: RefCell<will_run::Scratch>,
}

/// Rows of a partition (`part_data_create_array`, part_data.c:336-346):
/// `max_share & ~FORCE` (`YES:n` and `FORCE:n` give n, `NO` 1,
/// `EXCLUSIVE` 0), one more under `preempt/qos` (the row QOS preemptors
/// may use), at least 1. So under `preempt/qos` an `OverSubscribe=NO`
/// partition has 2 rows, an `EXCLUSIVE` one 1, a `FORCE:2` one 3.
pub fn num_rows(p: &Partition, preempt_by_qos: bool) -> usize {
    let max_share = match p.oversubscribe {
        Oversubscribe::Yes(n) | Oversubscribe::Force(n) => n as usize,
        Oversubscribe::No => 1,
        Oversubscribe::Exclusive => 0,
    };
    (max_share + usize::from(preempt_by_qos)).max(1)
}

impl ConsTres {
    /// An instance with `params` and no nodes.
    pub fn new(
        params: Params,
        partitions: Vec<Partition>,
        default_memory: MemoryRequest,
    ) -> ConsTres {
        let rows = partitions
            .iter()
            .map(|p| PartRows::new(num_rows(p, params.preempt_by_qos), 0))
            .collect();
        ConsTres {
            params,
            partitions,
            default_memory,
            recs: Vec::new(),
            gres_names: GresNames::default(),
            gres_columns: GresColumns::default(),
            total_cores: 0,
            base_avail: Bitmap::new(0),
            core_ends: Vec::new(),
            usage: Usage::new(Vec::new(), rows),
            scratch: RefCell::default(),
        }
    }

    /// `node_init`: takes the node table and discards all usage.
    pub fn node_init(&mut self, nodes: &[Node]) -> Result<(), String> {
        let mut recs = Vec::with_capacity(nodes.len());
        let mut names = GresNames::default();
        let mut off = 0;
        for (i, n) in nodes.iter().enumerate() {
            if n.index as usize != i {
                return Err(format!(
                    "node-init: node {} has index {} at position {i}; indices must follow the table order",
                    n.name, n.index
                ));
            }
            let mut r = NodeRec::from_node(n, off)?;
            names.intern_node(&mut r);
            off += r.cores as usize;
            recs.push(r);
        }
        let mut shapes = BTreeMap::new();
        for r in &mut recs {
            let next = shapes.len() as u32;
            r.shape = *shapes
                .entry((
                    r.sockets,
                    r.cores_per_socket,
                    r.tpc,
                    r.real_memory,
                    r.mem_spec,
                ))
                .or_insert(next);
        }
        // A GRES class is a shape and a device layout: each node's devices
        // are compared only with one representative node per layout of its
        // own shape (a shape rarely has more than a few), so a cluster of
        // many shapes costs no comparison across them.
        let mut layouts: BTreeMap<u32, Vec<(usize, u32)>> = BTreeMap::new();
        let mut classes = 0u32;
        for i in 0..recs.len() {
            let of_shape = layouts.entry(recs[i].shape).or_default();
            recs[i].gres_shape = match of_shape
                .iter()
                .find(|&&(k, _)| recs[k].devices == recs[i].devices)
            {
                Some(&(_, class)) => class,
                None => {
                    of_shape.push((i, classes));
                    classes += 1;
                    classes - 1
                }
            };
        }
        self.total_cores = off;
        let mut base = Bitmap::full(off);
        for r in &recs {
            base.clear_at(r.core_off, &r.spec_cores);
        }
        self.base_avail = base;
        self.core_ends = recs
            .iter()
            .map(|r| (r.core_off + r.cores as usize) as u32)
            .collect();
        self.gres_columns = GresColumns::build(&recs);
        self.recs = recs;
        self.gres_names = names;
        self.reset_usage();
        Ok(())
    }

    /// The nodes holding at least one set bit of `cores` (a cluster-wide
    /// core map). Costs the words of `cores` plus one step per node found,
    /// so on a busy cluster it visits the few nodes with free cores instead
    /// of every node.
    pub fn nodes_holding(&self, cores: &Bitmap) -> Bitmap {
        let mut out = Bitmap::new(self.recs.len());
        let (mut core, mut node) = (0, 0);
        while core < cores.len() {
            let word = cores.bits64(core);
            if word == 0 {
                core += 64;
                continue;
            }
            let first = core + word.trailing_zeros() as usize;
            // The first node ending past `first`: a forward walk, as the
            // next holding node is usually close.
            while node < self.core_ends.len() && self.core_ends[node] as usize <= first {
                node += 1;
            }
            if node == self.core_ends.len() {
                break;
            }
            out.set(node);
            core = self.core_ends[node] as usize;
        }
        out
    }

    /// Empty usage tables for the current nodes and partitions.
    pub fn reset_usage(&mut self) {
        self.usage = self.empty_usage();
    }

    /// Usage tables with no job (what TEST_ONLY tests against).
    pub fn empty_usage(&self) -> Usage {
        Usage::new(
            self.recs.iter().map(NodeUse::for_node).collect(),
            self.partitions
                .iter()
                .map(|p| PartRows::new(num_rows(p, self.params.preempt_by_qos), self.total_cores))
                .collect(),
        )
    }
}

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
