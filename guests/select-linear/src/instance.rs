//! [`Linear`]: one select/linear instance, whose methods take the
//! contract's records and return its results. The component export
//! ([`crate::plugin`]) and native benchmarks both drive it.

use std::collections::{BTreeMap, BTreeSet};

use select_common::nodeinfo::no_change;
use select_common::{JobView, NodeInfo, NodeInfoTable, NodeTable};
use slurm_wasm_sdk::select::{
    resv_first_nodes, JobTestMode, JobTestRequest, JobTestResult, PluginInfoField, PluginInfoValue,
    ReservationRequest, ReservationResult, SelectConfig,
};
use slurm_wasm_sdk::types::{Job, JobResources, JobState, Node, Partition};
use slurm_wasm_sdk::{Bitmap, Error};

use crate::config::{max_share, Config, SHARED_FORCE};
use crate::filter::{check_gres, per_node_gres};
use crate::gres::GresTotals;
use crate::jobs::{resolve_share, ActiveJob, Activity, GresHeld, NodeHeld};
use crate::modes::{Request, Tables};
use crate::usage::{PartCount, Usage};
use crate::{resources, state};

/// A select/linear instance: configuration, node table, usage tables, the
/// running and suspended jobs, and the nodeinfo last refreshed.
#[derive(Debug, Clone, Default)]
pub struct Linear {
    config: Config,
    partitions: Vec<Partition>,
    nodes: NodeTable,
    /// Configured GRES of `nodes`, by column.
    gres: GresTotals,
    usage: Usage,
    jobs: BTreeMap<u32, ActiveJob>,
    nodeinfo: NodeInfoTable,
}

impl Linear {
    /// `init`: reads `SelectTypeParameters` (EINVAL for CR_CPU / CR_Core /
    /// CR_Socket, which Slurm's linear treats as fatal) and the partitions.
    pub fn init(config: &SelectConfig) -> Result<Self, Error> {
        let mut linear = Linear::default();
        linear.configure(config)?;
        Ok(linear)
    }

    /// Applies `SelectTypeParameters` and the partition table, keeping the
    /// node and usage tables; on error nothing changes.
    pub fn configure(&mut self, config: &SelectConfig) -> Result<(), Error> {
        self.config = Config::from_flags(config.cluster.select_type_parameters)?;
        self.partitions = config.partitions.clone();
        Ok(())
    }

    /// The configuration read at `init`.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The usage tables (for tests and inspection).
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// `node_init`: a new node table; usage and jobs are discarded.
    pub fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error> {
        self.nodes = NodeTable::new(nodes)?;
        self.gres = GresTotals::new(&self.nodes);
        self.usage = Usage::new(&self.nodes);
        self.jobs.clear();
        self.nodeinfo.clear();
        Ok(())
    }

    /// Rebuilds the usage tables from `jobs` (`_init_node_cr`): only
    /// running and suspended jobs with resources count; others are skipped
    /// (a running job without resources is logged, as Slurm does).
    fn rebuild(&mut self, jobs: &[Job]) -> Result<(), Error> {
        let mut usage = Usage::new(&self.nodes);
        let mut active = BTreeMap::new();
        for job in jobs {
            if !matches!(job.state, JobState::Running | JobState::Suspended) {
                continue;
            }
            if job.resources.is_none() {
                slurm_wasm_sdk::error!(
                    "select/linear: job {} lacks a job_resources struct",
                    job.job_id
                );
                continue;
            }
            let view = JobView::new(job, self.nodes.len())?;
            let a = ActiveJob::from_view(&view, &self.partitions, &self.nodes, &self.config)?;
            usage.add_initial(&a, &self.nodes, &self.config)?;
            active.insert(a.id, a);
        }
        self.usage = usage;
        self.jobs = active;
        Ok(())
    }

    /// `job_init`: the running and suspended jobs after a restart; the
    /// usage tables are rebuilt from them.
    pub fn job_init(&mut self, jobs: &[Job]) -> Result<(), Error> {
        self.rebuild(jobs)
    }

    /// `reconfigure`: re-reads the configuration and rebuilds the tables
    /// from `running`.
    pub fn reconfigure(&mut self, config: &SelectConfig, running: &[Job]) -> Result<(), Error> {
        self.configure(config)?;
        self.rebuild(running)
    }

    fn partition(&self, index: u32, job: u32) -> Result<&Partition, Error> {
        self.partitions.get(index as usize).ok_or_else(|| {
            Error::invalid(format!(
                "job {job}: partition {index} is not in the partition table ({} partitions given at init)",
                self.partitions.len()
            ))
        })
    }

    /// `select_p_job_test` (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `select_p_job_test`). Errors: `EINVAL` without a
    /// usable answer in RUN_NOW (and for malformed input, with a message);
    /// in TEST_ONLY and WILL_RUN `EINVAL` when the placement ran and found
    /// nothing, `SLURM_ERROR` when too few nodes ever passed the filter
    /// (Slurm's codes); `ESLURM_UNSUPPORTED_GRES`
    /// for GRES options only cons_tres takes (as sbatch reports them).
    ///
    /// The job's excluded nodes (`-x`) are taken out of the candidates (the
    /// controller normally has done so already). The share limit comes from
    /// the job's first partition, which must be in the table given at
    /// `init` (`EINVAL` otherwise). `now` is the time of a will-run answer
    /// that can start at once.
    pub fn job_test(&self, request: &JobTestRequest, now: i64) -> Result<JobTestResult, Error> {
        let n = self.nodes.len();
        let view = JobView::new(&request.job, n)?;
        check_gres(&view.details)?;
        let mut candidates = Bitmap::try_from(&request.candidates)
            .map_err(|e| Error::invalid(format!("job-test candidates: {}", e.message)))?;
        if candidates.len() != n {
            return Err(Error::invalid(format!(
                "job-test candidates have {} bits; the node table has {n} nodes",
                candidates.len()
            )));
        }
        if candidates.count() < request.min_nodes as usize {
            return Err(Error::invalid(format!(
                "job {}: {} candidate nodes, fewer than the {} required",
                view.id,
                candidates.count(),
                request.min_nodes
            )));
        }
        if let Some(excluded) = &view.excluded {
            for i in excluded.ones() {
                candidates.clear(i);
            }
        }
        let partition = match view.partitions.first() {
            Some(&p) => Some(self.partition(p, view.id)?),
            None => None,
        };
        let share_res = resolve_share(partition, view.details.share);
        let max_share = match (share_res, partition) {
            (true, Some(p)) => u32::from(max_share(p) & !SHARED_FORCE),
            _ => 1,
        };
        let preemptees: Vec<_> = request
            .preemptee_candidates
            .iter()
            .map(|c| (c.job_id, c.mode))
            .collect();
        let req = Request {
            job: &view,
            candidates,
            min_nodes: request.min_nodes,
            max_nodes: request.max_nodes,
            req_nodes: request.req_nodes,
            preemptees: &preemptees,
            max_share,
        };
        let tables = Tables {
            nodes: &self.nodes,
            config: &self.config,
            usage: &self.usage,
            gres: &self.gres,
            jobs: &self.jobs,
        };
        let outcome = match request.mode {
            JobTestMode::RunNow => tables.run_now(&req).ok_or_else(|| {
                Error::invalid(format!("job {}: no nodes can run it now", view.id))
            })?,
            JobTestMode::TestOnly => tables.test_only(&req).map_err(|code| {
                Error::new(
                    code,
                    format!("job {}: the candidate nodes can never satisfy it", view.id),
                )
            })?,
            JobTestMode::WillRun | JobTestMode::Reservation => {
                tables.will_run(&req, now).map_err(|code| {
                    Error::new(
                        code,
                        format!(
                            "job {}: no start found even after every running job ends",
                            view.id
                        ),
                    )
                })?
            }
        };
        // A will-run answer is the nodes, the CPU count and the start: Slurm
        // frees the job's resources after the test.
        let will_run = matches!(
            request.mode,
            JobTestMode::WillRun | JobTestMode::Reservation
        );
        let resources = if will_run {
            JobResources {
                nodes: (&outcome.placed.nodes).into(),
                ncpus: outcome.placed.total_cpus,
                per_node: Vec::new(),
                whole_nodes: true,
            }
        } else {
            let jobs = &self.jobs;
            let gets_devices = share_res && per_node_gres(&view.details).next().is_some();
            resources::build(
                &self.nodes,
                &self.config,
                view.memory,
                &outcome.placed.nodes,
                outcome.placed.total_cpus,
                |node| {
                    if !gets_devices {
                        return Vec::new();
                    }
                    let held: Vec<&[GresHeld]> = jobs
                        .values()
                        .flat_map(|j| j.held.iter())
                        .filter(|h| h.node == node.index)
                        .map(|h| h.gres.as_slice())
                        .collect();
                    resources::pick_devices(node, per_node_gres(&view.details), &held)
                },
            )
        };
        let mut resources = resources;
        if request.mode == JobTestMode::TestOnly {
            // `_test_only` (select_linear.c) builds no job resources: the
            // answer holds the nodes and CPUs, and no memory, which would
            // otherwise be the job's request on nodes never checked for it
            // (anchor a30, `-n2 --mem-per-cpu=1000` on 8-CPU nodes of
            // 4000 MB: 8000 MB a node, yet sbatch accepted it, and it
            // pended).
            for node in &mut resources.per_node {
                node.memory = 0;
            }
        }
        Ok(JobTestResult {
            resources,
            start_time: outcome.start_time,
            preemptees: outcome.preemptees,
        })
    }

    fn active(&self, job: &Job) -> Result<ActiveJob, Error> {
        let view = JobView::new(job, self.nodes.len())?;
        ActiveJob::from_view(&view, &self.partitions, &self.nodes, &self.config)
    }

    /// `job_begin`: the job (with its resources) starts. `SLURM_ERROR`
    /// when one of its nodes is not in its partition; the job is charged
    /// and tracked all the same, as Slurm's tables keep it.
    pub fn job_begin(&mut self, job: &Job) -> Result<(), Error> {
        let mut a = self.active(job)?;
        a.activity = Activity::Running;
        let result = self.usage.add(&a, &self.nodes, &self.config, true);
        self.jobs.insert(a.id, a);
        result
    }

    /// The job as linear remembers it, or as the record describes it.
    fn known(&self, job: &Job) -> Result<ActiveJob, Error> {
        match self.jobs.get(&job.job_id) {
            Some(a) => Ok(a.clone()),
            None => self.active(job),
        }
    }

    /// `job_fini`: releases the job's usage; `SLURM_ERROR` when linear
    /// holds nothing for it.
    pub fn job_fini(&mut self, job: &Job) -> Result<(), Error> {
        let a = self.known(job)?;
        let result = self.usage.remove(&a, &self.nodes, &self.config, true);
        self.jobs.remove(&a.id);
        result
    }

    /// `job_suspend`: the tables change only when `indefinite` (an
    /// administrator's suspend: the partial removal of Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`); a gang
    /// suspend leaves them alone but makes the job no longer a job mate
    /// (it is not RUNNING any more).
    pub fn job_suspend(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        if !indefinite {
            if let Some(j) = self.jobs.get_mut(&job.job_id) {
                j.activity = Activity::GangSuspended;
            }
            return Ok(());
        }
        let a = self.known(job)?;
        let held = self.usage.tot_jobs.contains(&a.id);
        let result = self.usage.remove(&a, &self.nodes, &self.config, false);
        if let Some(j) = self.jobs.get_mut(&a.id).filter(|_| held) {
            j.activity = Activity::Suspended;
        }
        result
    }

    /// `job_resume`: the tables change only when `indefinite` (the partial
    /// addition of Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`); either way the job runs again, until the
    /// record's `end-time`: slurmctld moves the end by the time the job was
    /// suspended (job_mgr.c `_job_suspend_op`), and will-run answers release
    /// jobs by it.
    pub fn job_resume(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        if !indefinite {
            if let Some(j) = self.jobs.get_mut(&job.job_id) {
                j.activity = Activity::Running;
                j.end_time = job.end_time;
            }
            return Ok(());
        }
        let mut a = self.known(job)?;
        let result = self.usage.add(&a, &self.nodes, &self.config, false);
        a.activity = Activity::Running;
        a.end_time = job.end_time;
        self.jobs.insert(a.id, a);
        result
    }

    /// `job_resized`: node `node` left the job; its resources there are
    /// released. As Slurm's, it succeeds when linear holds nothing for the
    /// job or the job no longer holds the node: the problem is logged and
    /// nothing changes. `EINVAL` only for a node outside the table.
    pub fn job_resized(&mut self, job: &Job, node: u32) -> Result<(), Error> {
        let node = node as usize;
        self.nodes.node(node, "job-resized")?;
        let mut a = self.known(job)?;
        if let Err(e) = self.usage.remove_node(&a, node, &self.nodes, &self.config) {
            slurm_wasm_sdk::error!("select_p_job_resized: {}", e.message);
            return Ok(());
        }
        if let Some(pos) = a.held.iter().position(|h| h.node == node) {
            let h = a.held.remove(pos);
            a.total_cpus = a.total_cpus.saturating_sub(u32::from(h.cpus));
        }
        a.nodes.clear(node);
        self.jobs.insert(a.id, a);
        Ok(())
    }

    /// `job_expand`: every resource of `from` moves to `to` (node union;
    /// on a shared node `to` keeps its CPU count and the memory adds up);
    /// `from` is left with nothing. Returns `to`'s new resources (whole
    /// nodes; the GRES both held stay tracked, but the resources list no
    /// devices).
    /// `SLURM_ERROR` when both are the same job or either holds nothing.
    pub fn job_expand(&mut self, from: &Job, to: &Job) -> Result<JobResources, Error> {
        if from.job_id == to.job_id {
            return Err(Error::generic(format!(
                "select/linear: attempt to merge job {} with itself",
                from.job_id
            )));
        }
        for id in [from.job_id, to.job_id] {
            if !self.usage.tot_jobs.contains(&id) {
                return Err(Error::generic(format!(
                    "select/linear: job {id} has no resources allocated"
                )));
            }
        }
        let a_from = self.known(from)?;
        let mut a_to = self.known(to)?;
        let _ = self.usage.remove(&a_from, &self.nodes, &self.config, true);
        let _ = self.usage.remove(&a_to, &self.nodes, &self.config, true);
        let mut merged: BTreeMap<usize, NodeHeld> = BTreeMap::new();
        for h in &a_from.held {
            merged.insert(h.node, h.clone());
        }
        for h in &a_to.held {
            merged
                .entry(h.node)
                .and_modify(|m| {
                    m.cpus = h.cpus;
                    m.memory += h.memory;
                    m.gres.extend(h.gres.iter().cloned());
                })
                .or_insert_with(|| h.clone());
        }
        let ncpus = a_from.total_cpus + a_to.total_cpus;
        a_to.held = merged.into_values().collect();
        a_to.nodes = Bitmap::from_bits(self.nodes.len(), a_to.held.iter().map(|h| h.node));
        a_to.total_cpus = a_to.held.iter().map(|h| u32::from(h.cpus)).sum();
        self.usage.add(&a_to, &self.nodes, &self.config, true)?;
        let mut builder = select_common::ResourcesBuilder::new(self.nodes.len(), true);
        for h in &a_to.held {
            let cores = self.nodes.get(h.node).map_or(0, |n| n.cores() as usize);
            builder.add(
                h.node,
                &Bitmap::full(cores),
                h.cpus,
                h.memory,
                resources::held_devices(&h.gres),
            );
        }
        self.jobs.remove(&a_from.id);
        self.jobs.insert(a_to.id, a_to);
        Ok(builder.build_with_ncpus(ncpus))
    }

    /// `job_ready`: false unless the job runs (or is suspended) and none of
    /// its nodes is powered down or powering up.
    pub fn job_ready(&self, job: &Job) -> Result<bool, Error> {
        if !matches!(job.state, JobState::Running | JobState::Suspended) {
            return Ok(false);
        }
        let view = JobView::new(job, self.nodes.len())?;
        let Some(alloc) = &view.resources else {
            return Ok(true);
        };
        let powered_off = alloc
            .nodes
            .ones()
            .any(|i| self.nodes.get(i).is_some_and(|n| n.is_powered_off()));
        Ok(!powered_off)
    }

    /// `update_node_config` / `update_node_state`: the node's record is
    /// replaced; its partition counters follow its partition list (counts
    /// kept for partitions it stays in).
    pub fn update_node(&mut self, node: &Node) -> Result<(), Error> {
        let rec = self.nodes.update(node)?;
        self.gres.update(rec);
        let partitions = rec.partitions.clone();
        let index = rec.index;
        if let Some(u) = self.usage.nodes.get_mut(index) {
            let old = std::mem::take(&mut u.parts);
            u.parts = partitions
                .iter()
                .map(|&part| {
                    old.iter()
                        .find(|c| c.part == part)
                        .cloned()
                        .unwrap_or(PartCount {
                            part,
                            run: 0,
                            tot: 0,
                        })
                })
                .collect();
        }
        Ok(())
    }

    /// `select_nodeinfo_set_all`: every node's allocated CPUs (all of them
    /// on an allocated or completing node, 0 otherwise), memory from the
    /// usage tables, and allocated TRES (the node's effective CPUs, memory
    /// and billing, see [`NodeInfo::whole_node`]).
    /// A node counts as allocated when the controller says so or when a
    /// job linear tracks holds it. `SLURM_NO_CHANGE_IN_DATA` when nothing
    /// changed since the previous call.
    pub fn nodeinfo_set_all(&mut self) -> Result<(), Error> {
        let held: BTreeSet<usize> = self
            .jobs
            .values()
            .flat_map(|j| j.held.iter().map(|h| h.node))
            .collect();
        let fresh = self
            .nodes
            .iter()
            .map(|n| {
                let memory = self.usage.nodes.get(n.index).map_or(0, |u| u.alloc_memory);
                if n.is_allocated_or_completing() || held.contains(&n.index) {
                    NodeInfo::whole_node(n.cpus, memory, n.effective_cpus(), n.real_memory)
                } else {
                    NodeInfo::idle(memory)
                }
            })
            .collect();
        if self.nodeinfo.refresh(fresh) {
            Ok(())
        } else {
            Err(no_change())
        }
    }

    /// The nodeinfo of node `index` as last refreshed.
    pub fn nodeinfo(&self, index: u32) -> Result<NodeInfo, Error> {
        self.nodes.node(index as usize, "node-nodeinfo")?;
        Ok(self.nodeinfo.get(index as usize))
    }

    /// `select_p_get_info_from_plugin`. Slurm's linear answers nothing and
    /// leaves the caller's defaults: `cr-plugin` is 0 (whole-node plugin),
    /// `config-info` an empty list, `single-job-test` false (the controller
    /// calls job-test once per node set).
    pub fn info(&self, field: PluginInfoField) -> PluginInfoValue {
        match field {
            PluginInfoField::CrPlugin => PluginInfoValue::Number(0),
            PluginInfoField::ConfigInfo => PluginInfoValue::Config(Vec::new()),
            PluginInfoField::SingleJobTest => PluginInfoValue::Flag(false),
        }
    }

    /// `select_p_resv_test`: the first `node-count` available nodes in index
    /// order (Slurm's `bit_pick_cnt`); no core reservations, so a request
    /// for cores only gets no nodes, successfully, as from Slurm.
    /// `ESLURM_NODES_BUSY` when too few nodes are available.
    pub fn resv_test(&self, request: &ReservationRequest) -> Result<ReservationResult, Error> {
        resv_first_nodes(request)
    }

    /// `state-save`: the usage tables and tracked jobs.
    pub fn state_save(&self) -> Vec<u8> {
        state::save(&self.usage, &self.jobs)
    }

    /// `state-restore`: replaces the usage tables and jobs with a saved
    /// blob; a malformed blob is refused with `EINVAL` and nothing changes.
    pub fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        let (usage, jobs) = state::restore(data, self.nodes.len())?;
        self.usage = usage;
        self.jobs = jobs;
        Ok(())
    }
}
