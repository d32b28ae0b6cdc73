//! The usage tables ("cr record", Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_init_node_cr`) and their transitions (`_add_job_to_nodes`/`_rm_job_from_nodes`).
//!
//! Per node: memory reserved, how many jobs hold it exclusively, one
//! `{run, tot}` job counter per partition containing the node, and the
//! GRES allocated there. Globally: the ids of running jobs and of running
//! plus suspended jobs.

use std::collections::BTreeSet;

use select_common::{NodeRec, NodeTable};
use slurm_wasm_sdk::{Bitmap, Error};
use smallvec::SmallVec;

use crate::config::Config;
use crate::jobs::{ActiveJob, GresHeld, NodeHeld};
use crate::resources::node_memory;

/// Job counters of one partition on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartCount {
    pub part: u32,
    pub run: u16,
    pub tot: u16,
}

/// One node's usage.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeUsage {
    /// MB reserved by jobs.
    pub alloc_memory: u64,
    /// Jobs holding the node exclusively (`share_res == 0`).
    pub exclusive_cnt: u16,
    pub parts: SmallVec<[PartCount; 2]>,
    /// GRES allocated, summed per name and type.
    pub gres: Vec<GresHeld>,
}

impl NodeUsage {
    /// Running jobs, and running plus suspended jobs, over all partitions
    /// of the node (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`), in one pass.
    pub fn job_counts(&self) -> (u32, u32) {
        self.parts.iter().fold((0, 0), |(run, tot), p| {
            (run + u32::from(p.run), tot + u32::from(p.tot))
        })
    }

    /// GRES `name` (of `type_name`, or any type when `None`) allocated here.
    pub fn gres_allocated(&self, name: &str, type_name: Option<&str>) -> u64 {
        self.gres
            .iter()
            .filter(|g| {
                g.name.eq_ignore_ascii_case(name)
                    && type_name.is_none_or(|t| g.type_name.as_deref() == Some(t))
            })
            .map(|g| g.count)
            .sum()
    }

    /// Devices of device group `group` of `node` (an index into its
    /// `gres_topology`) that jobs hold here: Slurm's
    /// `topo_gres_cnt_alloc`. A group's devices are numbered after the
    /// earlier groups of its name (the contract's table order). Only jobs
    /// that share the node are given devices (see
    /// [`crate::resources::pick_devices`]); a job holding a node alone
    /// leaves no other job on it, so its devices never need counting.
    pub fn group_allocated(&self, node: &NodeRec, group: usize) -> u64 {
        let Some(g) = node.gres_topology.get(group) else {
            return 0;
        };
        let start: u64 = node.gres_topology[..group]
            .iter()
            .filter(|o| o.name.eq_ignore_ascii_case(&g.name))
            .map(|o| o.count)
            .sum();
        let (start, end) = (start as usize, (start + g.count) as usize);
        self.gres
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(&g.name))
            .filter_map(|h| h.devices.as_ref())
            .map(|d| d.ones().filter(|&k| k >= start && k < end).count() as u64)
            .sum()
    }

    /// Adds a job's GRES; the devices it names are kept, as the union of
    /// the jobs' devices per name and type (see [`Self::group_allocated`]).
    fn gres_add(&mut self, held: &[GresHeld]) {
        for g in held {
            match self
                .gres
                .iter_mut()
                .find(|h| h.name == g.name && h.type_name == g.type_name)
            {
                Some(h) => {
                    h.count += g.count;
                    h.devices = match (h.devices.take(), &g.devices) {
                        (Some(mut all), Some(d)) => {
                            grow(&mut all, d.len());
                            for k in d.ones() {
                                all.set(k);
                            }
                            Some(all)
                        }
                        (all, d) => all.or_else(|| d.clone()),
                    };
                }
                None => self.gres.push(g.clone()),
            }
        }
    }

    fn gres_release(&mut self, held: &[GresHeld]) {
        for g in held {
            if let Some(h) = self
                .gres
                .iter_mut()
                .find(|h| h.name == g.name && h.type_name == g.type_name)
            {
                h.count = h.count.saturating_sub(g.count);
                if let (Some(all), Some(d)) = (h.devices.as_mut(), &g.devices) {
                    let len = all.len();
                    for k in d.ones().filter(|&k| k < len) {
                        all.clear(k);
                    }
                }
            }
        }
        self.gres.retain(|g| g.count > 0);
    }
}

/// Lengthens `map` to `len` bits (kept set bits stay).
fn grow(map: &mut Bitmap, len: usize) {
    if map.len() < len {
        let mut longer = Bitmap::new(len);
        for k in map.ones() {
            longer.set(k);
        }
        *map = longer;
    }
}

/// The whole cr record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Usage {
    pub nodes: Vec<NodeUsage>,
    /// `run_job_ids`.
    pub run_jobs: BTreeSet<u32>,
    /// `tot_job_ids`.
    pub tot_jobs: BTreeSet<u32>,
}

/// Memory a partial (suspend/resume) transition moves: Slurm's quirk is the
/// node's whole memory under `CR_Memory`, whatever the job asked for.
fn partial_memory(config: &Config, node: &NodeRec) -> u64 {
    if config.memory {
        node.real_memory
    } else {
        0
    }
}

/// Memory a full or partial removal of `job` releases on `held`'s node
/// (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`); `EINVAL` when the node is outside the table.
fn removed_memory(
    config: &Config,
    job: &ActiveJob,
    nodes: &NodeTable,
    held: &NodeHeld,
    full: bool,
) -> Result<u64, Error> {
    let node = nodes.node(held.node, "job usage")?;
    Ok(if full {
        node_memory(config, job.memory, node)
    } else {
        partial_memory(config, node)
    })
}

/// Slurm's "could not find partition" of a transition: `SLURM_ERROR`.
fn missing_partition(job: &ActiveJob, node: &NodeRec) -> Error {
    Error::generic(format!(
        "select/linear: job {} could not find its partition on node {}",
        job.id, node.name
    ))
}

/// Read access to per-node usage, as the node filter needs it: the tables
/// themselves or a [`Scratch`] copy.
pub trait NodeUsages {
    /// The usage of node `i`; `None` outside the table.
    fn node(&self, i: usize) -> Option<&NodeUsage>;
}

impl NodeUsages for Usage {
    fn node(&self, i: usize) -> Option<&NodeUsage> {
        self.nodes.get(i)
    }
}

/// A what-if copy of the usage tables for simulations (WILL_RUN's job
/// ends, RUN_NOW's preemption): a node's usage is copied on its first
/// change, every other node reads through to the tables. Removing jobs
/// from it gives the same per-node usage as [`Usage::remove`] on a full
/// clone, without copying a whole-cluster table per test.
#[derive(Debug)]
pub struct Scratch<'a> {
    base: &'a Usage,
    /// Per node: 0 = unchanged, `k` = `changed[k - 1]`.
    slot: Vec<u32>,
    changed: Vec<NodeUsage>,
    /// Jobs removed here (out of both the run and tot sets).
    removed: BTreeSet<u32>,
}

impl<'a> Scratch<'a> {
    pub fn new(base: &'a Usage) -> Self {
        Scratch {
            base,
            slot: vec![0; base.nodes.len()],
            changed: Vec::new(),
            removed: BTreeSet::new(),
        }
    }

    fn node_mut(&mut self, i: usize, job: u32) -> Result<&mut NodeUsage, Error> {
        let Some(&k) = self.slot.get(i) else {
            return Err(Error::invalid(format!(
                "job {job} holds node {i}, outside the node table of {} nodes",
                self.slot.len()
            )));
        };
        let k = if k == 0 {
            self.changed.push(self.base.nodes[i].clone());
            let k = self.changed.len();
            self.slot[i] = k as u32;
            k
        } else {
            k as usize
        };
        Ok(&mut self.changed[k - 1])
    }

    /// [`Usage::remove`] on this copy: `SLURM_ERROR` (nothing changes) when
    /// the job is not in the tot set or was removed here already.
    pub fn remove(
        &mut self,
        job: &ActiveJob,
        nodes: &NodeTable,
        config: &Config,
        full: bool,
    ) -> Result<(), Error> {
        if !self.base.tot_jobs.contains(&job.id) || !self.removed.insert(job.id) {
            return Err(Error::generic(format!(
                "select/linear: job {} has no resources allocated",
                job.id
            )));
        }
        let was_running = self.base.run_jobs.contains(&job.id);
        for held in &job.held {
            let memory = removed_memory(config, job, nodes, held, full)?;
            let usage = self.node_mut(held.node, job.id)?;
            // A missing partition counter is reported by the live tables'
            // transitions; a simulation only needs the usage.
            Usage::release(usage, job, held, memory, was_running, full);
        }
        Ok(())
    }
}

impl NodeUsages for Scratch<'_> {
    fn node(&self, i: usize) -> Option<&NodeUsage> {
        match *self.slot.get(i)? {
            0 => self.base.nodes.get(i),
            k => self.changed.get(k as usize - 1),
        }
    }
}

impl Usage {
    /// Empty tables for `nodes`, one counter per partition of each node.
    pub fn new(nodes: &NodeTable) -> Self {
        Usage {
            nodes: nodes
                .iter()
                .map(|n| NodeUsage {
                    parts: n
                        .partitions
                        .iter()
                        .map(|&part| PartCount {
                            part,
                            run: 0,
                            tot: 0,
                        })
                        .collect(),
                    ..NodeUsage::default()
                })
                .collect(),
            ..Usage::default()
        }
    }

    fn node_mut(&mut self, i: usize, job: u32) -> Result<&mut NodeUsage, Error> {
        let count = self.nodes.len();
        self.nodes.get_mut(i).ok_or_else(|| {
            Error::invalid(format!(
                "job {job} holds node {i}, outside the node table of {count} nodes"
            ))
        })
    }

    /// Records a job found running or suspended when the tables are
    /// (re)built (`_init_node_cr`): running jobs, and suspended jobs with
    /// priority ≠ 0 (gang suspended), count as running.
    pub fn add_initial(
        &mut self,
        job: &ActiveJob,
        nodes: &NodeTable,
        config: &Config,
    ) -> Result<(), Error> {
        let running = job.activity.in_run_set();
        if running {
            self.run_jobs.insert(job.id);
        }
        self.tot_jobs.insert(job.id);
        for held in &job.held {
            let node = nodes.node(held.node, "job-init")?;
            let memory = node_memory(config, job.memory, node);
            let usage = self.node_mut(held.node, job.id)?;
            if !job.share_res {
                usage.exclusive_cnt += 1;
            }
            usage.alloc_memory += memory;
            usage.gres_add(&held.gres);
            if let Some(p) = Self::part(usage, job) {
                if running {
                    p.run += 1;
                }
                p.tot += 1;
            }
        }
        Ok(())
    }

    fn part<'a>(usage: &'a mut NodeUsage, job: &ActiveJob) -> Option<&'a mut PartCount> {
        let part = job.partition?;
        usage.parts.iter_mut().find(|p| p.part == part)
    }

    /// `job_begin` (`full`) or `job_resume` (partial) (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`).
    ///
    /// Full: the job joins the run and tot sets, each node gets its memory
    /// and GRES, `exclusive_cnt` (when the job does not share) and the
    /// partition's run and tot counters. Partial: tot set, the node's whole
    /// memory under `CR_Memory`, `exclusive_cnt`, tot counter only.
    /// `SLURM_ERROR` when a node has no counter for the job's partition
    /// (after every other change was made, as Slurm's `_add_job_to_nodes`).
    pub fn add(
        &mut self,
        job: &ActiveJob,
        nodes: &NodeTable,
        config: &Config,
        full: bool,
    ) -> Result<(), Error> {
        if full {
            self.run_jobs.insert(job.id);
        }
        self.tot_jobs.insert(job.id);
        let mut missing = None;
        for held in &job.held {
            let node = nodes.node(held.node, "job usage")?;
            let memory = if full {
                node_memory(config, job.memory, node)
            } else {
                partial_memory(config, node)
            };
            let usage = self.node_mut(held.node, job.id)?;
            usage.alloc_memory += memory;
            if full {
                usage.gres_add(&held.gres);
            }
            if !job.share_res {
                usage.exclusive_cnt += 1;
            }
            match Self::part(usage, job) {
                Some(p) => {
                    if full {
                        p.run += 1;
                    }
                    p.tot += 1;
                }
                None => missing = missing.or(Some(node)),
            }
        }
        match missing {
            Some(node) => Err(missing_partition(job, node)),
            None => Ok(()),
        }
    }

    /// `job_fini` (`full`) or `job_suspend` (partial) (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`).
    ///
    /// `SLURM_ERROR` when the job is not in the tot set (nothing changes).
    /// Full: memory (clamped at 0), GRES, `exclusive_cnt`, run (if the job
    /// was running) and tot counters; a partition whose tot reaches 0 with
    /// run left over has run forced to 0. Partial: the whole node's memory
    /// under `CR_Memory`, `exclusive_cnt`, run counter; tot counter kept.
    /// `SLURM_ERROR` too when a node has no counter for the job's partition,
    /// after every other change was made (`_rm_job_from_nodes`).
    pub fn remove(
        &mut self,
        job: &ActiveJob,
        nodes: &NodeTable,
        config: &Config,
        full: bool,
    ) -> Result<(), Error> {
        if !self.tot_jobs.remove(&job.id) {
            return Err(Error::generic(format!(
                "select/linear: job {} has no resources allocated",
                job.id
            )));
        }
        let was_running = self.run_jobs.remove(&job.id);
        let mut missing = None;
        for held in &job.held {
            let memory = removed_memory(config, job, nodes, held, full)?;
            let usage = self.node_mut(held.node, job.id)?;
            if !Self::release(usage, job, held, memory, was_running, full) {
                missing = missing.or(Some(held.node));
            }
        }
        match missing.map(|i| nodes.node(i, "job usage")).transpose()? {
            Some(node) => Err(missing_partition(job, node)),
            None => Ok(()),
        }
    }

    /// Takes one node's share of `job` out of `usage`; false when the node
    /// has no counter for the job's partition (everything else is done).
    fn release(
        usage: &mut NodeUsage,
        job: &ActiveJob,
        held: &NodeHeld,
        memory: u64,
        was_running: bool,
        full: bool,
    ) -> bool {
        usage.alloc_memory = usage.alloc_memory.saturating_sub(memory);
        if full {
            usage.gres_release(&held.gres);
        }
        if !job.share_res {
            usage.exclusive_cnt = usage.exclusive_cnt.saturating_sub(1);
        }
        let Some(p) = Self::part(usage, job) else {
            return false;
        };
        if was_running {
            p.run = p.run.saturating_sub(1);
        }
        if full {
            p.tot = p.tot.saturating_sub(1);
            if p.tot == 0 {
                p.run = 0;
            }
        }
        true
    }

    /// `job_resized`: releases everything the job holds on `node` (memory
    /// with `CR_Memory`, GRES, exclusivity, run and tot counters). The job
    /// stays in the run and tot sets. `SLURM_ERROR` when the job is not
    /// in the tot set or does not hold `node`.
    pub fn remove_node(
        &mut self,
        job: &ActiveJob,
        node: usize,
        nodes: &NodeTable,
        config: &Config,
    ) -> Result<(), Error> {
        if !self.tot_jobs.contains(&job.id) {
            return Err(Error::generic(format!(
                "select/linear: job {} has no resources allocated",
                job.id
            )));
        }
        let Some(held) = job.held.iter().find(|h| h.node == node) else {
            return Err(Error::generic(format!(
                "select/linear: job {} does not hold node {node}",
                job.id
            )));
        };
        let rec = nodes.node(node, "job-resized")?;
        let memory = node_memory(config, job.memory, rec);
        let running = self.run_jobs.contains(&job.id);
        let usage = self.node_mut(node, job.id)?;
        if Self::release(usage, job, held, memory, running, true) {
            Ok(())
        } else {
            Err(missing_partition(job, rec))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::Activity;
    use select_common::MemRequest;
    use slurm_wasm_sdk::testkit::fixtures;
    use slurm_wasm_sdk::Bitmap;

    fn table() -> NodeTable {
        NodeTable::new(&[
            fixtures::node(0, "n0", 1, 4, 1, 1000),
            fixtures::node(1, "n1", 1, 4, 1, 1000),
        ])
        .unwrap()
    }

    fn job(memory: MemRequest, share_res: bool) -> ActiveJob {
        ActiveJob {
            id: 5,
            activity: Activity::Running,
            partition: Some(0),
            share_res,
            end_time: 100,
            contiguous: false,
            memory,
            nodes: Bitmap::from_bits(2, [0, 1]),
            total_cpus: 8,
            held: (0..2)
                .map(|node| NodeHeld {
                    node,
                    cpus: 4,
                    memory: 0,
                    gres: Vec::new(),
                })
                .collect(),
        }
    }

    fn memory_on() -> Config {
        Config {
            memory: true,
            ..Config::default()
        }
    }

    #[test]
    fn begin_then_fini_restores_the_tables() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`: job_fini is the reverse of job_begin.
        let nodes = table();
        let empty = Usage::new(&nodes);
        let mut usage = empty.clone();
        let j = job(MemRequest::PerCpu(100), false);
        usage.add(&j, &nodes, &memory_on(), true).unwrap();
        assert_eq!(usage.nodes[0].alloc_memory, 400);
        assert_eq!(usage.nodes[1].exclusive_cnt, 1);
        assert_eq!(
            usage.nodes[1].parts[0],
            PartCount {
                part: 0,
                run: 1,
                tot: 1
            }
        );
        usage.remove(&j, &nodes, &memory_on(), true).unwrap();
        assert_eq!(usage, empty);
    }

    #[test]
    fn fini_of_unknown_job_is_slurm_error() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`: a job not in the tot set => SLURM_ERROR.
        let nodes = table();
        let mut usage = Usage::new(&nodes);
        let err = usage
            .remove(
                &job(MemRequest::None, false),
                &nodes,
                &Config::default(),
                true,
            )
            .unwrap_err();
        assert_eq!(err.code, slurm_wasm_sdk::codes::SLURM_ERROR);
    }

    #[test]
    fn suspend_resume_asymmetry() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`: suspend drops run (tot kept) and, under CR_Memory, the
        // node's whole memory; resume adds tot (run not) and whole memory.
        let nodes = table();
        let mut usage = Usage::new(&nodes);
        let j = job(MemRequest::PerNode(300), false);
        usage.add(&j, &nodes, &memory_on(), true).unwrap();
        usage.remove(&j, &nodes, &memory_on(), false).unwrap();
        assert_eq!(
            usage.nodes[0].parts[0],
            PartCount {
                part: 0,
                run: 0,
                tot: 1
            }
        );
        assert_eq!(usage.nodes[0].alloc_memory, 0, "1000 clamped against 300");
        assert_eq!(usage.nodes[0].exclusive_cnt, 0);
        assert!(!usage.tot_jobs.contains(&5) && !usage.run_jobs.contains(&5));
        usage.add(&j, &nodes, &memory_on(), false).unwrap();
        assert_eq!(
            usage.nodes[0].parts[0],
            PartCount {
                part: 0,
                run: 0,
                tot: 2
            }
        );
        assert_eq!(usage.nodes[0].alloc_memory, 1000);
        assert_eq!(usage.nodes[0].exclusive_cnt, 1);
        assert!(usage.tot_jobs.contains(&5) && !usage.run_jobs.contains(&5));
    }

    #[test]
    fn without_cr_memory_nothing_is_reserved() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`: memory is only charged as a consumable with CR_Memory.
        let nodes = table();
        let mut usage = Usage::new(&nodes);
        usage
            .add(
                &job(MemRequest::PerNode(300), true),
                &nodes,
                &Config::default(),
                true,
            )
            .unwrap();
        assert_eq!(usage.nodes[0].alloc_memory, 0);
        assert_eq!(
            usage.nodes[0].exclusive_cnt, 0,
            "a sharing job is not exclusive"
        );
    }

    #[test]
    fn scratch_removal_matches_removal_from_a_copy() {
        // A Scratch copy must read exactly as Usage::remove on a clone
        // (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes` transitions), for full and partial removals, and
        // refuse a second removal of the same job as the tables do.
        let nodes = table();
        let mut usage = Usage::new(&nodes);
        let mut other = job(MemRequest::PerNode(300), true);
        other.id = 6;
        other.nodes = Bitmap::from_bits(2, [1]);
        other.held.truncate(1);
        other.held[0].node = 1;
        let j = job(MemRequest::PerNode(300), false);
        usage.add(&j, &nodes, &memory_on(), true).unwrap();
        usage.add(&other, &nodes, &memory_on(), true).unwrap();
        for full in [true, false] {
            let mut copy = usage.clone();
            copy.remove(&j, &nodes, &memory_on(), full).unwrap();
            let mut scratch = Scratch::new(&usage);
            scratch.remove(&j, &nodes, &memory_on(), full).unwrap();
            for i in 0..2 {
                assert_eq!(scratch.node(i), copy.node(i), "node {i}, full {full}");
            }
            assert_eq!(scratch.node(2), None);
            assert!(scratch.remove(&j, &nodes, &memory_on(), full).is_err());
            assert!(copy.remove(&j, &nodes, &memory_on(), full).is_err());
            scratch.remove(&other, &nodes, &memory_on(), true).unwrap();
            copy.remove(&other, &nodes, &memory_on(), true).unwrap();
            assert_eq!(scratch.node(1), copy.node(1));
        }
        assert_eq!(usage.nodes[1].alloc_memory, 600, "the tables are untouched");
    }

    #[test]
    fn resized_releases_one_node() {
        let nodes = table();
        let mut usage = Usage::new(&nodes);
        let j = job(MemRequest::PerNode(300), false);
        usage.add(&j, &nodes, &memory_on(), true).unwrap();
        usage.remove_node(&j, 1, &nodes, &memory_on()).unwrap();
        assert_eq!(usage.nodes[1], Usage::new(&nodes).nodes[1]);
        assert_eq!(usage.nodes[0].alloc_memory, 300);
    }
}
