//! What slurmctld does around a select plugin: one model that `select
//! place`, the differential replays of real Slurm recordings and the
//! simulator drive.
//!
//! A [`Controller`] holds the cluster, the select plugin (anything that is
//! [`Select`]: a loaded component, or a native build in the simulator),
//! the jobs that hold resources (running or suspended, in job order), the
//! active advanced reservations and the preemption rules. It builds each
//! `job-test` request as slurmctld's `select_nodes` does (the job's node
//! counts and candidates from [`PreparedJob`], the preemptee candidates of
//! `slurm_find_preemptable_jobs`, what reservations leave it,
//! `job_test_resv`), and keeps the plugin's tables in step with every
//! change slurmctld reports to it: a job starts (`select_g_job_begin`, then
//! `select_g_select_nodeinfo_set`), ends (`select_g_job_fini`), is
//! suspended or resumed, gives up nodes (`select_g_job_resized`, once per
//! node, as `excise_node_from_job` does) or absorbs another job
//! (`select_g_job_expand`), and when a reservation is made
//! (`select_g_resv_test`). Inside a running job it creates and ends job
//! steps ([`crate::step`]), asking the plugin first
//! (`select_g_step_pick_nodes`) and telling it at the end
//! (`select_g_step_finish`).
//!
//! # Failure modes
//!
//! Every call returns the plugin's [`CallError`] unchanged; a call that
//! fails changes nothing the controller holds (the plugin's own tables are
//! its failure policy's to keep). Naming a job that holds no resources, or
//! a reservation that is not active, is a [`ControllerError`] before the
//! plugin is asked.

use std::collections::BTreeMap;
use std::fmt;

use slurm_wasm_host::kinds::select::{
    JobTestMode, JobTestRequest, JobTestResult, PluginInfoField, PluginInfoValue, PreemptMode,
    ReservationRequest, ReservationResult,
};
use slurm_wasm_host::types::{
    Bitmap, Job, JobResources, JobState, Node, Oversubscribe, ShareRequest, Step as StepRecord,
};
use slurm_wasm_host::{CallError, SelectPlugin};

use crate::job_request::PreparedJob;
use crate::setup::preemption::Preemption;
use crate::setup::records::Cluster;
use crate::setup::reservations::{self, Reservation, UnknownReservation};
use crate::step::{JobSteps, Step, StepError, StepRequest};

/// The select plugin calls of slurmctld's scheduling loop: the node table,
/// tests, and jobs starting and ending. [`SelectPlugin`] (a loaded
/// component) is one; the simulator's native builds of the bundled
/// plugins and its test doubles are others.
///
/// Errors are the plugin's: a refusal (`CallError::Plugin`) or a fault.
pub trait Select {
    /// `node-init`: the node table.
    fn node_init(&mut self, nodes: &[Node]) -> Result<(), CallError>;
    /// `job-test`.
    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, CallError>;
    /// `job-begin`.
    fn job_begin(&mut self, job: &Job) -> Result<(), CallError>;
    /// `nodeinfo-set`, after each `job-begin`.
    fn nodeinfo_set(&mut self, job: &Job) -> Result<(), CallError>;
    /// `job-fini`.
    fn job_fini(&mut self, job: &Job) -> Result<(), CallError>;
    /// `get-info-from-plugin` without a job (slurmctld asks `cr-plugin` and
    /// `single-job-test` once, [`Controller::new`]).
    fn plugin_info(&mut self, field: PluginInfoField) -> Result<PluginInfoValue, CallError>;
    /// Fuel spent so far, for a component; none for a native build.
    fn fuel_used(&self) -> Option<u64> {
        None
    }
}

/// The select plugin calls that follow what operators, users and the gang
/// scheduler change besides starts and ends: suspensions, resizes, merges
/// and advanced reservations. [`SelectPlugin`] makes them all; an embedding
/// that never changes jobs so (the simulator) needs only [`Select`].
pub trait Operations: Select {
    /// `job-suspend`.
    fn job_suspend(&mut self, job: &Job, indefinite: bool) -> Result<(), CallError>;
    /// `job-resume`.
    fn job_resume(&mut self, job: &Job, indefinite: bool) -> Result<(), CallError>;
    /// `job-resized`: `job` gives up node `node_index`.
    fn job_resized(&mut self, job: &Job, node_index: u32) -> Result<(), CallError>;
    /// `job-expand`: `from`'s resources move into `to`'s.
    fn job_expand(&mut self, from: &Job, to: &Job) -> Result<JobResources, CallError>;
    /// `resv-test`.
    fn resv_test(&mut self, request: &ReservationRequest) -> Result<ReservationResult, CallError>;
    /// `step-pick-nodes`.
    fn step_pick_nodes(
        &mut self,
        job: &Job,
        step: &StepRecord,
        node_count: u32,
        available: Option<&Bitmap>,
    ) -> Result<Option<Bitmap>, CallError>;
    /// `step-finish`.
    fn step_finish(&mut self, step: &StepRecord, killing: bool) -> Result<(), CallError>;
    /// `select-steps.step-start`.
    fn step_start(&mut self, job: &Job, step_id: u32, nodes: &Bitmap) -> Result<(), CallError>;
    /// `select-steps.step-avail-nodes`.
    fn step_avail_nodes(&mut self, job: &Job) -> Result<Option<Bitmap>, CallError>;
}

impl<T: Select + ?Sized> Select for &mut T {
    fn node_init(&mut self, nodes: &[Node]) -> Result<(), CallError> {
        (**self).node_init(nodes)
    }
    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, CallError> {
        (**self).job_test(request)
    }
    fn job_begin(&mut self, job: &Job) -> Result<(), CallError> {
        (**self).job_begin(job)
    }
    fn nodeinfo_set(&mut self, job: &Job) -> Result<(), CallError> {
        (**self).nodeinfo_set(job)
    }
    fn job_fini(&mut self, job: &Job) -> Result<(), CallError> {
        (**self).job_fini(job)
    }
    fn plugin_info(&mut self, field: PluginInfoField) -> Result<PluginInfoValue, CallError> {
        (**self).plugin_info(field)
    }
    fn fuel_used(&self) -> Option<u64> {
        (**self).fuel_used()
    }
}

impl Select for SelectPlugin {
    fn node_init(&mut self, nodes: &[Node]) -> Result<(), CallError> {
        SelectPlugin::node_init(self, nodes)
    }
    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, CallError> {
        SelectPlugin::job_test(self, request)
    }
    fn job_begin(&mut self, job: &Job) -> Result<(), CallError> {
        SelectPlugin::job_begin(self, job)
    }
    fn nodeinfo_set(&mut self, job: &Job) -> Result<(), CallError> {
        SelectPlugin::nodeinfo_set(self, job)
    }
    fn job_fini(&mut self, job: &Job) -> Result<(), CallError> {
        SelectPlugin::job_fini(self, job)
    }
    fn plugin_info(&mut self, field: PluginInfoField) -> Result<PluginInfoValue, CallError> {
        SelectPlugin::get_info_from_plugin(self, field, None)
    }
    fn fuel_used(&self) -> Option<u64> {
        Some(SelectPlugin::fuel_used(self))
    }
}

impl Operations for SelectPlugin {
    fn job_suspend(&mut self, job: &Job, indefinite: bool) -> Result<(), CallError> {
        SelectPlugin::job_suspend(self, job, indefinite)
    }
    fn job_resume(&mut self, job: &Job, indefinite: bool) -> Result<(), CallError> {
        SelectPlugin::job_resume(self, job, indefinite)
    }
    fn job_resized(&mut self, job: &Job, node_index: u32) -> Result<(), CallError> {
        SelectPlugin::job_resized(self, job, node_index)
    }
    fn job_expand(&mut self, from: &Job, to: &Job) -> Result<JobResources, CallError> {
        SelectPlugin::job_expand(self, from, to)
    }
    fn resv_test(&mut self, request: &ReservationRequest) -> Result<ReservationResult, CallError> {
        SelectPlugin::resv_test(self, request)
    }
    fn step_pick_nodes(
        &mut self,
        job: &Job,
        step: &StepRecord,
        node_count: u32,
        available: Option<&Bitmap>,
    ) -> Result<Option<Bitmap>, CallError> {
        SelectPlugin::step_pick_nodes(self, job, step, node_count, available)
    }
    fn step_finish(&mut self, step: &StepRecord, killing: bool) -> Result<(), CallError> {
        SelectPlugin::step_finish(self, step, killing)
    }
    fn step_start(&mut self, job: &Job, step_id: u32, nodes: &Bitmap) -> Result<(), CallError> {
        SelectPlugin::step_start(self, job, step_id, nodes)
    }
    fn step_avail_nodes(&mut self, job: &Job) -> Result<Option<Bitmap>, CallError> {
        SelectPlugin::step_avail_nodes(self, job)
    }
}

/// Why the controller refused a request before asking the plugin, or the
/// plugin's error.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The plugin refused or faulted.
    #[error(transparent)]
    Call(#[from] CallError),
    /// The job named holds no resources here.
    #[error("job {0} is not running")]
    NotRunning(u32),
    /// The job asked for a reservation that is not active.
    #[error(transparent)]
    Reservation(#[from] UnknownReservation),
    /// A step cannot be created (or is not running).
    #[error("job {job}: {error}")]
    Step {
        /// The job.
        job: u32,
        /// Why.
        error: StepError,
    },
}

/// What slurmctld's scheduler decides for one job ([`Controller::place`]).
#[derive(Debug)]
pub enum Decision {
    /// It starts now (it has been begun); `preempted` are the running jobs
    /// the plugin named to make room: those cancelled or requeued have
    /// ended, those suspended hold their resources suspended.
    Now {
        /// The running job.
        job: Job,
        /// The jobs preempted for it, as the plugin named them.
        preempted: Vec<u32>,
    },
    /// It cannot start now; a will-run test expects it to start at `start`
    /// on `job`'s resources, preempting `preempts` then. Nothing changed.
    /// `start` is the plugin's start delayed for the queued jobs of the
    /// partition that come first, as slurmctld answers a will-run
    /// ([`Controller::delayed_start`]).
    Later {
        /// The job as it would run.
        job: Job,
        /// The expected start.
        start: i64,
        /// The jobs it would preempt.
        preempts: Vec<u32>,
    },
    /// It can never run on its candidates: the plugin's refusal.
    Never(CallError),
}

/// slurmctld's state around one select plugin (see the module
/// documentation).
pub struct Controller<S> {
    cluster: Cluster,
    select: S,
    preemption: Option<Preemption>,
    holding: BTreeMap<u32, Job>,
    /// Jobs waiting in the queue, in submission order.
    queued: Vec<Job>,
    reservations: Vec<Reservation>,
    /// The steps of running jobs that have any (made at the first step).
    steps: BTreeMap<u32, JobSteps>,
    /// The plugin allocates consumable resources (`cr-plugin` above 0).
    consumable: bool,
    /// The node sets [`Controller::pick_best_nodes`] asks about one after
    /// the other, lowest weight first; empty when the plugin is asked once
    /// per job (`single-job-test`) or the cluster has one set.
    node_sets: Vec<NodeSet>,
}

/// Nodes of one `NodeName=` line (slurmctld's `node_set`) and their weight.
#[derive(Debug, Clone)]
struct NodeSet {
    weight: u32,
    nodes: Bitmap,
}

/// slurmctld's node sets of `cluster` (`_build_node_list`): one per
/// `NodeName=` line, in order of the lines, then sorted by weight
/// (`_sort_node_set`; equal weights keep their order, as glibc's merge sort
/// does).
fn node_sets(cluster: &Cluster) -> Vec<NodeSet> {
    let len = u32::try_from(cluster.nodes.len()).expect("fewer than 2^32 nodes");
    let mut sets: Vec<(u32, NodeSet)> = Vec::new();
    for (node, &config) in cluster.nodes.iter().zip(&cluster.node_configs) {
        let at = match sets.iter().position(|(c, _)| *c == config) {
            Some(at) => at,
            None => {
                sets.push((
                    config,
                    NodeSet {
                        weight: node.weight,
                        nodes: Bitmap::with_ones(len, []),
                    },
                ));
                sets.len() - 1
            }
        };
        sets[at].1.nodes.words[(node.index / 64) as usize] |= 1 << (node.index % 64);
    }
    let mut sets: Vec<NodeSet> = sets.into_iter().map(|(_, set)| set).collect();
    sets.sort_by_key(|set| set.weight);
    sets
}

impl<S: Select> Controller<S> {
    /// The controller of `cluster` over `select`, an initialised plugin
    /// (its `init` taken, as the embedding configured it), with the
    /// site's preemption rules. Gives the plugin the node table
    /// (`node-init`); no job holds resources yet.
    ///
    /// # Errors
    ///
    /// The plugin's `node-init` error.
    ///
    /// Then asks the plugin, once, what `_pick_best_nodes` asks: whether it
    /// allocates consumable resources (`cr-plugin`) and whether it wants one
    /// `job-test` per job (`single-job-test`; a refusal counts as no, as
    /// slurmctld ignores it).
    ///
    /// # Errors
    ///
    /// The plugin's `node-init` or `get-info-from-plugin(cr-plugin)` error
    /// (slurmctld then fails every scheduling attempt with it).
    pub fn new(
        cluster: Cluster,
        mut select: S,
        preemption: Option<Preemption>,
    ) -> Result<Self, CallError> {
        select.node_init(&cluster.nodes)?;
        let consumable = matches!(
            select.plugin_info(PluginInfoField::CrPlugin)?,
            PluginInfoValue::Number(n) if n > 0
        );
        let single_job_test = matches!(
            select.plugin_info(PluginInfoField::SingleJobTest),
            Ok(PluginInfoValue::Flag(true))
        );
        let sets = node_sets(&cluster);
        Ok(Controller {
            node_sets: if single_job_test || sets.len() < 2 {
                Vec::new()
            } else {
                sets
            },
            consumable,
            cluster,
            select,
            preemption,
            holding: BTreeMap::new(),
            queued: Vec::new(),
            reservations: Vec::new(),
            steps: BTreeMap::new(),
        })
    }

    /// Puts `job` in the queue: a pending job that holds nothing and that
    /// the scheduler has not started, whose place in line delays the
    /// will-run answers of the jobs behind it ([`Controller::delayed_start`]).
    pub fn queue(&mut self, job: Job) {
        self.queued.push(job);
    }

    /// The queued jobs, in submission order.
    pub fn queued(&self) -> &[Job] {
        &self.queued
    }

    /// How much later than its will-run start slurmctld tells `job` it
    /// will start, for the queued jobs of its partition that it would wait
    /// behind (22.05 job_scheduler.c `_delayed_job_start_time`, applied to
    /// the answer of `job_start_data`, which is what `sbatch --test-only`
    /// prints). Every other pending job of the same partition with a
    /// priority at least `job`'s adds its CPU-minutes, `max(min CPUs,
    /// min nodes x the partition's CPUs per node) x time limit` (the
    /// partition's `MaxTime` when the job has none), and the sum, in
    /// whole partition-wide minutes, is the delay in seconds. Slurm's own
    /// caveat holds: a rough estimate that ignores dependencies, features
    /// and requested nodes. A job whose limit is `UNLIMITED` in a
    /// partition without `MaxTime` counts as Slurm's `INFINITE` minutes.
    pub fn delayed_start(&self, job: &Job) -> i64 {
        /// `INFINITE`: an unlimited time limit.
        const INFINITE: u64 = 0xffff_fffe;
        let Some(&partition) = job.partitions.first() else {
            return 0;
        };
        let Some(part) = self.cluster.partitions.get(partition as usize) else {
            return 0;
        };
        let members: Vec<u32> = part.nodes.ones().collect();
        let part_nodes = members.len() as u64;
        let part_cpus: u64 = members
            .iter()
            .filter_map(|&n| self.cluster.nodes.get(n as usize))
            .map(|n| u64::from(n.cpus))
            .sum();
        if part_cpus == 0 {
            return 0;
        }
        let cpus_per_node = if part_cpus > part_nodes {
            part_cpus / part_nodes
        } else {
            1
        };
        let cume: u64 = self
            .queued
            .iter()
            .filter(|q| {
                q.job_id != job.job_id
                    && q.partitions.first() == Some(&partition)
                    && q.priority >= job.priority
            })
            .map(|q| {
                let cpus = u64::from(q.details.min_cpus)
                    .max(u64::from(q.details.min_nodes) * cpus_per_node);
                let minutes = q.time_limit.or(part.max_time).map_or(INFINITE, u64::from);
                cpus.saturating_mul(minutes)
            })
            .fold(0, u64::saturating_add);
        i64::try_from(cume / part_cpus * 60).unwrap_or(i64::MAX)
    }

    /// The cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The plugin.
    pub fn select(&self) -> &S {
        &self.select
    }

    /// The jobs holding resources (running or suspended), in job order.
    pub fn holding(&self) -> impl Iterator<Item = &Job> {
        self.holding.values()
    }

    /// Job `id`, when it holds resources.
    pub fn job(&self, id: u32) -> Option<&Job> {
        self.holding.get(&id)
    }

    /// The active reservations.
    pub fn reservations(&self) -> &[Reservation] {
        &self.reservations
    }

    /// The `job-test` request slurmctld makes for `prepared` in `mode` at
    /// `now`: the job's node counts and candidates; for a run-now or
    /// will-run test the jobs it may preempt (`slurm_find_preemptable_jobs`:
    /// none for a test-only one), then what the active reservations leave
    /// it ([`reservations::restrict`]).
    ///
    /// # Errors
    ///
    /// [`ControllerError::Reservation`] when the job names a reservation
    /// that is not active.
    pub fn request(
        &self,
        prepared: &PreparedJob,
        mode: JobTestMode,
        now: i64,
    ) -> Result<JobTestRequest, ControllerError> {
        let preemptee_candidates = match (&self.preemption, mode) {
            (_, JobTestMode::TestOnly) | (None, _) => Vec::new(),
            (Some(rules), _) => rules.candidates(&prepared.job, self.holding.values(), now),
        };
        let mut request = JobTestRequest {
            preemptee_candidates,
            ..prepared.test_request(mode)
        };
        reservations::restrict(
            &mut request,
            &self.reservations,
            prepared.reservation.as_deref(),
        )?;
        Ok(request)
    }

    /// Asks the plugin `request` as it is (one built by [`Self::request`],
    /// possibly narrowed by the caller's scheduler).
    ///
    /// # Errors
    ///
    /// The plugin's refusal or fault.
    pub fn test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, CallError> {
        self.select.job_test(request)
    }

    /// slurmctld's `_pick_best_nodes` (node_scheduler.c) for a RUN_NOW or
    /// TEST_ONLY `request`, the way `select_nodes` asks when it starts a job
    /// or tests one at submission (the main scheduler's and backfill's
    /// starts alike). A plugin that tests once per job (`single-job-test`:
    /// select/cons_tres, which orders nodes by weight itself), a cluster
    /// with one `NodeName=` line, and a WILL_RUN request get one `job-test`
    /// with every candidate. Otherwise (select/linear, select/cons_res) the
    /// node sets are added to the candidates one at a time, lowest `Weight`
    /// first, and the plugin is asked after each, until it places the job:
    /// - a set of the same weight as the next one is added without asking
    ///   when the job may share nodes (`_resolve_shared_status`) or
    ///   preemption is on, so that the least loaded nodes of the tier can
    ///   be picked;
    /// - nothing is asked while the candidates so far (the job's required
    ///   nodes, then the sets) are fewer than the job's minimum or desired
    ///   node count and more sets remain;
    /// - a set without a candidate node is not one (slurmctld builds node
    ///   sets of the job's partition, without its excluded nodes);
    /// - preemptee candidates go only with the last ask (the one with every
    ///   set): slurmctld preempts jobs only when all nodes are considered.
    ///
    /// Slurm also leaves busy nodes out of the count for a job that does
    /// not share; here the plugin, which knows them, refuses such a set
    /// and the next one is added, which ends the same.
    ///
    /// # Errors
    ///
    /// The plugin's answer to the last ask: its refusal when no set
    /// placed the job, or a fault (which ends the loop at once).
    pub fn pick_best_nodes(
        &mut self,
        request: &JobTestRequest,
    ) -> Result<JobTestResult, CallError> {
        if self.node_sets.is_empty() || request.mode == JobTestMode::WillRun {
            return self.select.job_test(request);
        }
        // The sets with a candidate node (`_build_node_list` builds none
        // outside the job's partition or for excluded nodes).
        let sets: Vec<(u32, Bitmap)> = self
            .node_sets
            .iter()
            .map(|set| (set.weight, and(&set.nodes, &request.candidates)))
            .filter(|(_, nodes)| nodes.words.iter().any(|&w| w != 0))
            .collect();
        if sets.len() < 2 {
            return self.select.job_test(request);
        }
        let partition = request
            .job
            .partitions
            .first()
            .and_then(|&p| self.cluster.partitions.get(p as usize));
        let shared = shares(
            &request.job,
            partition.map(|p| p.oversubscribe),
            self.consumable,
        );
        let accumulate = shared || self.preemption.is_some();
        let required = request.job.details.required_nodes.as_ref();
        let mut candidates = match required {
            Some(nodes) => and(nodes, &request.candidates),
            None => Bitmap::with_ones(request.candidates.len, []),
        };
        for (i, (weight, nodes)) in sets.iter().enumerate().take(sets.len() - 1) {
            for (w, set) in candidates.words.iter_mut().zip(&nodes.words) {
                *w |= set;
            }
            if accumulate && *weight == sets[i + 1].0 {
                continue;
            }
            let available = and(&candidates, &request.candidates);
            let count = available.ones().count();
            if count < request.min_nodes as usize || count < request.req_nodes as usize {
                continue;
            }
            let ask = JobTestRequest {
                candidates: available,
                preemptee_candidates: Vec::new(),
                ..request.clone()
            };
            match self.select.job_test(&ask) {
                Ok(result) => return Ok(result),
                Err(CallError::Plugin { .. }) => {}
                Err(fault) => return Err(fault),
            }
        }
        // The last ask: every set, the preemptee candidates.
        self.select.job_test(request)
    }

    /// `job` starts on its `resources`: `job-begin`, then `nodeinfo-set`,
    /// as slurmctld's `select_nodes` does; it then holds resources.
    ///
    /// # Errors
    ///
    /// The plugin's error from either call; after a `nodeinfo-set` error
    /// the job holds its resources (the plugin has begun it).
    pub fn begin(&mut self, job: Job) -> Result<(), CallError> {
        self.select.job_begin(&job)?;
        let id = job.job_id;
        let job = self.holding.entry(id).or_insert(job);
        self.select.nodeinfo_set(job)
    }

    /// Job `id` ends (completes, is cancelled or requeued): `job-fini`.
    /// Returns the job as it held its resources.
    ///
    /// # Errors
    ///
    /// [`ControllerError::NotRunning`], or the plugin's error (the job is
    /// then still held).
    pub fn end(&mut self, id: u32) -> Result<Job, ControllerError> {
        let job = held(&self.holding, id)?;
        self.select.job_fini(job)?;
        self.steps.remove(&id);
        Ok(self.holding.remove(&id).expect("held above"))
    }

    /// Fuel the plugin spent so far, for a component.
    pub fn fuel_used(&self) -> Option<u64> {
        self.select.fuel_used()
    }
}

/// What operators, users and the gang scheduler change, and slurmctld's
/// scheduling of one job (which may suspend preemptees).
impl<S: Operations> Controller<S> {
    /// Job `id` is suspended: by `scontrol suspend` (`indefinite`), or by
    /// the gang scheduler or a preemptor (its resources stay counted);
    /// `end_time` is its end as slurmctld moved it, when it did.
    ///
    /// # Errors
    ///
    /// [`ControllerError::NotRunning`], or the plugin's error (the job
    /// then keeps its state and end).
    pub fn suspend(
        &mut self,
        id: u32,
        indefinite: bool,
        end_time: Option<i64>,
    ) -> Result<(), ControllerError> {
        self.set_state(id, JobState::Suspended, end_time, indefinite)
    }

    /// Job `id` resumes; `end_time` is its end as slurmctld moved it (by
    /// the time it was suspended), when it did.
    ///
    /// # Errors
    ///
    /// As [`Self::suspend`].
    pub fn resume(
        &mut self,
        id: u32,
        indefinite: bool,
        end_time: Option<i64>,
    ) -> Result<(), ControllerError> {
        self.set_state(id, JobState::Running, end_time, indefinite)
    }

    fn set_state(
        &mut self,
        id: u32,
        state: JobState,
        end_time: Option<i64>,
        indefinite: bool,
    ) -> Result<(), ControllerError> {
        let job = held_mut(&mut self.holding, id)?;
        let before = (job.state, job.end_time);
        job.state = state;
        job.end_time = end_time.unwrap_or(job.end_time);
        let done = if state == JobState::Suspended {
            self.select.job_suspend(job, indefinite)
        } else {
            self.select.job_resume(job, indefinite)
        };
        if done.is_err() {
            (job.state, job.end_time) = before;
        }
        Ok(done?)
    }

    /// Job `id` keeps only the nodes of `kept` (`scontrol update
    /// NumNodes=`/`NodeList=`): `job-resized` once per node it gives up,
    /// in node order (`excise_node_from_job`), then it holds `kept`.
    ///
    /// # Errors
    ///
    /// [`ControllerError::NotRunning`], or the plugin's error at the first
    /// node it refused (the job then keeps what it held).
    ///
    /// The job's running steps are forgotten: its next step counts from
    /// the resources it kept (slurmctld's `rebuild_step_bitmaps`, which
    /// carries steps over, is not modelled).
    pub fn resize(&mut self, id: u32, kept: JobResources) -> Result<(), ControllerError> {
        let job = held_mut(&mut self.holding, id)?;
        let held = job.resources.as_ref().map(|r| r.nodes.ones().collect());
        let dropped: Vec<u32> = held
            .unwrap_or_else(Vec::new)
            .into_iter()
            .filter(|n| !kept.nodes.ones().any(|k| k == *n))
            .collect();
        for node in dropped {
            self.select.job_resized(job, node)?;
        }
        job.resources = Some(kept);
        self.steps.remove(&id);
        Ok(())
    }

    /// Job `from` is merged into job `into` (`--dependency=expand`, then
    /// `scontrol update JobId=<from> NumNodes=0`): `job-expand`; `into`
    /// then holds the merged resources and `from` ends without a
    /// `job-fini`. Returns the merged resources. As after
    /// [`Self::resize`], the steps of both jobs are forgotten.
    ///
    /// # Errors
    ///
    /// [`ControllerError::NotRunning`] for either job, or the plugin's
    /// refusal (cons_tres refuses a job holding GRES): nothing changes.
    pub fn expand(&mut self, from: u32, into: u32) -> Result<&JobResources, ControllerError> {
        let source = held(&self.holding, from)?;
        let target = held(&self.holding, into)?;
        let merged = self.select.job_expand(source, target)?;
        self.holding.remove(&from);
        self.steps.remove(&from);
        self.steps.remove(&into);
        let target = self.holding.get_mut(&into).expect("held above");
        Ok(target.resources.insert(merged))
    }

    /// What a replay of a real Slurm does where the plugin answered
    /// otherwise than Slurm: job `id` holds `resources` as Slurm's did
    /// (`None`: it no longer holds any), without asking the plugin. A job
    /// not held is added with `resources` only through [`Self::begin`].
    pub fn follow(&mut self, id: u32, resources: Option<JobResources>) {
        self.steps.remove(&id);
        match resources {
            Some(r) => {
                if let Some(job) = self.holding.get_mut(&id) {
                    job.resources = Some(r);
                }
            }
            None => {
                self.holding.remove(&id);
            }
        }
    }

    /// Creates a step of running job `id` as slurmctld's `step_create`
    /// does: the plugin may restrict the job's nodes (`step-avail-nodes`)
    /// or pick the step's (`step-pick-nodes`; the bundled plugins leave it
    /// to slurmctld), then [`JobSteps::create`], and the plugin hears of
    /// the step's start on its nodes (`step-start`, whose answer slurmctld
    /// ignores).
    ///
    /// # Errors
    ///
    /// [`ControllerError::NotRunning`] (a suspended job runs no new step
    /// either: [`StepError::Busy`]), the plugin's error, or
    /// [`ControllerError::Step`] with slurmctld's refusal.
    pub fn step_create(
        &mut self,
        id: u32,
        request: &StepRequest,
    ) -> Result<&Step, ControllerError> {
        let job = held(&self.holding, id)?;
        let Some(resources) = job.resources.as_ref() else {
            return Err(ControllerError::NotRunning(id));
        };
        if job.state != JobState::Running {
            return Err(ControllerError::Step {
                job: id,
                error: StepError::Busy,
            });
        }
        let steps = self.steps.entry(id).or_insert_with(|| {
            JobSteps::new(
                job,
                resources,
                &self.cluster.nodes,
                self.cluster.config.select_type_parameters,
            )
        });
        let record = step_record(job, steps.next_id(), request);
        // A failed answer restricts nothing, as in select/wasm (C's
        // `avail_nodes` cannot fail): the host has logged the fault and its
        // failure policy has acted.
        let avail = self.select.step_avail_nodes(job).unwrap_or(None);
        let picked = self
            .select
            .step_pick_nodes(job, &record, request.min_nodes, None)?;
        let step = steps
            .create(request, picked.as_ref(), avail.as_ref())
            .map_err(|error| ControllerError::Step { job: id, error })?;
        let nodes = Bitmap::with_ones(
            self.cluster.nodes.len() as u32,
            step.nodes.iter().map(|n| n.node_index),
        );
        // slurmctld ignores select_g_step_start's answer (step_mgr.c
        // step_create): the step runs whatever the plugin says, and a
        // fault is the host's to log and its failure policy's to handle.
        let _ignored = self.select.step_start(job, step.id, &nodes);
        Ok(step)
    }

    /// Step `step` of job `id` ended: its CPUs, memory and cores are the
    /// job's again, and the plugin hears of it (`step-finish`, not
    /// killing). Returns the step.
    ///
    /// # Errors
    ///
    /// [`ControllerError::NotRunning`], [`ControllerError::Step`] with
    /// [`StepError::NoSuchStep`], or the plugin's error (the step has
    /// ended).
    pub fn step_complete(&mut self, id: u32, step: u32) -> Result<Step, ControllerError> {
        let job = held(&self.holding, id)?;
        let ended = self
            .steps
            .get_mut(&id)
            .ok_or(StepError::NoSuchStep)
            .and_then(|steps| steps.complete(step))
            .map_err(|error| ControllerError::Step { job: id, error })?;
        self.select
            .step_finish(&step_record(job, ended.id, &ended.request), false)?;
        Ok(ended)
    }

    /// The running steps of job `id`, by id.
    pub fn steps(&self, id: u32) -> impl Iterator<Item = &Step> {
        self.steps.get(&id).into_iter().flat_map(JobSteps::steps)
    }

    /// A reservation `name` of `node_count` nodes and `core_count` cores
    /// (0: whole nodes) in partition `partition`, made now as slurmctld
    /// makes it (`resv-test` on [`reservations::request`]); it is active
    /// from then on.
    ///
    /// # Errors
    ///
    /// The plugin's refusal or fault: no reservation is made.
    ///
    /// # Panics
    ///
    /// When `partition` is not an index of the cluster's partitions.
    pub fn reserve(
        &mut self,
        name: &str,
        partition: usize,
        node_count: u32,
        core_count: u32,
    ) -> Result<&Reservation, CallError> {
        let request = reservations::request(
            &self.cluster,
            partition,
            self.holding.values(),
            node_count,
            core_count,
        );
        let answer = self.select.resv_test(&request)?;
        self.reservations.retain(|r| r.name != name);
        self.reservations.push(Reservation::new(name, answer));
        Ok(self.reservations.last().expect("pushed"))
    }

    /// Reservation `name` ends (deleted or expired); jobs may use its
    /// nodes and cores again. Nothing happens when none is active.
    pub fn release(&mut self, name: &str) {
        self.reservations.retain(|r| r.name != name);
    }

    /// slurmctld's scheduling of one pending job at `now`, what `select
    /// place` shows: a run-now test; when the plugin names preemptees that
    /// are cancelled or requeued, they end and the job is tested again on
    /// what they left (slurmctld's next pass); the job then begins, and the
    /// preemptees it suspends are suspended. When it cannot start now, a
    /// will-run test says when it would.
    ///
    /// # Errors
    ///
    /// [`ControllerError::Reservation`], or a plugin fault (a refusal is a
    /// [`Decision`]).
    pub fn place(&mut self, prepared: &PreparedJob, now: i64) -> Result<Decision, ControllerError> {
        let run_now = self.request(prepared, JobTestMode::RunNow, now)?;
        let mut result = match self.pick_best_nodes(&run_now) {
            Ok(result) => result,
            Err(CallError::Plugin { .. }) => {
                let will_run = self.request(prepared, JobTestMode::WillRun, now)?;
                return match self.select.job_test(&will_run) {
                    Ok(JobTestResult {
                        resources,
                        start_time,
                        preemptees,
                    }) => {
                        let start = start_time
                            .unwrap_or(now)
                            .saturating_add(self.delayed_start(&prepared.job));
                        Ok(Decision::Later {
                            job: prepared.started(resources, start),
                            start,
                            preempts: preemptees,
                        })
                    }
                    Err(e @ CallError::Plugin { .. }) => Ok(Decision::Never(e)),
                    Err(e) => Err(e.into()),
                };
            }
            Err(e) => return Err(e.into()),
        };
        let preempted = result.preemptees.clone();
        let mode_of = |id: u32| {
            run_now
                .preemptee_candidates
                .iter()
                .find(|c| c.job_id == id)
                .map(|c| c.mode)
        };
        let stopped: Vec<u32> = preempted
            .iter()
            .copied()
            .filter(|&id| mode_of(id).is_some_and(|m| m != PreemptMode::Suspend))
            .collect();
        if !stopped.is_empty() {
            for &id in &stopped {
                self.end(id)?;
            }
            let again = self.request(prepared, JobTestMode::RunNow, now)?;
            result = self.pick_best_nodes(&again)?;
        }
        let job = prepared.started(result.resources, now);
        self.begin(job.clone())?;
        for id in preempted.iter().copied().filter(|id| !stopped.contains(id)) {
            if self
                .holding
                .get(&id)
                .is_some_and(|j| j.state == JobState::Running)
            {
                self.suspend(id, false, None)?;
            }
        }
        Ok(Decision::Now { job, preempted })
    }
}

/// Whether a job may share its nodes, as `_resolve_shared_status`
/// (node_scheduler.c) decides from the partition's `OverSubscribe` and the
/// job's `--exclusive`/`--oversubscribe`, for a plugin that allocates
/// consumable resources or whole nodes.
fn shares(job: &Job, oversubscribe: Option<Oversubscribe>, consumable: bool) -> bool {
    match oversubscribe {
        Some(Oversubscribe::Exclusive) => return false,
        Some(Oversubscribe::Force(n)) if n > 1 => return true,
        _ => {}
    }
    match job.details.share {
        ShareRequest::Oversubscribe => {
            consumable || !matches!(oversubscribe, Some(Oversubscribe::No) | None)
        }
        ShareRequest::PartitionDefault => consumable,
        ShareRequest::Exclusive | ShareRequest::ExclusiveUser | ShareRequest::ExclusiveMcs => false,
    }
}

/// The bits set in both `a` and `b` (of `b`'s length).
fn and(a: &Bitmap, b: &Bitmap) -> Bitmap {
    Bitmap {
        len: b.len,
        words: b
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| w & a.words.get(i).copied().unwrap_or(0))
            .collect(),
    }
}

/// Job `id` of those holding resources, or [`ControllerError::NotRunning`].
fn held(holding: &BTreeMap<u32, Job>, id: u32) -> Result<&Job, ControllerError> {
    holding.get(&id).ok_or(ControllerError::NotRunning(id))
}

/// [`held`], to change.
fn held_mut(holding: &mut BTreeMap<u32, Job>, id: u32) -> Result<&mut Job, ControllerError> {
    holding.get_mut(&id).ok_or(ControllerError::NotRunning(id))
}

/// The step record the select plugin's step calls take, as slurmctld
/// knows a step (no node of its own: `node-name` empty, no cores, no
/// processes).
fn step_record(job: &Job, step_id: u32, request: &StepRequest) -> StepRecord {
    StepRecord {
        job_id: job.job_id,
        step_id,
        user_id: job.user_id,
        group_id: job.group_id,
        node_name: String::new(),
        node_id: 0,
        local_tasks: 0,
        total_tasks: request.tasks,
        cpus_per_task: request.cpus_per_task,
        cpu_bind_type: 0,
        cpu_bind: String::new(),
        tres_freq: None,
        cores: Bitmap {
            len: 0,
            words: Vec::new(),
        },
        task_pids: Vec::new(),
    }
}

impl<S> fmt::Debug for Controller<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("nodes", &self.cluster.nodes.len())
            .field("holding", &self.holding.keys().collect::<Vec<_>>())
            .field(
                "reservations",
                &self
                    .reservations
                    .iter()
                    .map(|r| &r.name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::job_request::JobRequest;
    use crate::slurm_conf;

    /// A plugin that records the candidates of every `job-test` and places
    /// the job only when node `fits` is among them; `consumable` and
    /// `single` are its `cr-plugin` and `single-job-test` answers.
    struct Asks {
        consumable: bool,
        single: bool,
        fits: u32,
        asked: Vec<Vec<u32>>,
    }

    impl Select for Asks {
        fn node_init(&mut self, _: &[Node]) -> Result<(), CallError> {
            Ok(())
        }
        fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, CallError> {
            let nodes: Vec<u32> = request.candidates.ones().collect();
            let fits = nodes.contains(&self.fits);
            self.asked.push(nodes);
            if fits {
                Ok(JobTestResult {
                    resources: JobResources {
                        nodes: Bitmap::with_ones(request.candidates.len, [self.fits]),
                        ncpus: 4,
                        per_node: Vec::new(),
                        whole_nodes: true,
                    },
                    start_time: None,
                    preemptees: Vec::new(),
                })
            } else {
                Err(CallError::Plugin {
                    plugin: "asks".into(),
                    function: "job-test",
                    code: 2016,
                    message: "busy".into(),
                })
            }
        }
        fn job_begin(&mut self, _: &Job) -> Result<(), CallError> {
            Ok(())
        }
        fn nodeinfo_set(&mut self, _: &Job) -> Result<(), CallError> {
            Ok(())
        }
        fn job_fini(&mut self, _: &Job) -> Result<(), CallError> {
            Ok(())
        }
        fn plugin_info(&mut self, field: PluginInfoField) -> Result<PluginInfoValue, CallError> {
            Ok(match field {
                PluginInfoField::CrPlugin => PluginInfoValue::Number(u32::from(self.consumable)),
                _ => PluginInfoValue::Flag(self.single),
            })
        }
    }

    /// Three `NodeName=` lines: n[1-2] and n[3-4] of weight 1, n[5-6] of
    /// weight 5 written first, so that sorting by weight moves it last.
    const THREE_LINES: &str = "NodeName=n[5-6] CPUs=4 Weight=5\n\
        NodeName=n[1-2] CPUs=4\n\
        NodeName=n[3-4] CPUs=4\n\
        PartitionName=p Nodes=n[5-6],n[1-4] Default=YES\n";

    /// The candidates `_pick_best_nodes` asks about for `args`, with a
    /// plugin that fits only on node index `fits`.
    fn asked(consumable: bool, single: bool, args: &[&str], fits: u32) -> Vec<Vec<u32>> {
        let conf = slurm_conf::parse_str(THREE_LINES, Path::new("slurm.conf")).unwrap();
        let cluster = Cluster::from_slurm_conf(&conf).unwrap();
        let prepared = JobRequest::parse(args)
            .and_then(|r| r.prepare(1, &cluster, Some("p")))
            .unwrap();
        let plugin = Asks {
            consumable,
            single,
            fits,
            asked: Vec::new(),
        };
        let mut ctl = Controller::new(cluster, plugin, None).unwrap();
        let _ = ctl.pick_best_nodes(&prepared.test_request(JobTestMode::RunNow));
        ctl.select.asked
    }

    #[test]
    fn node_sets_are_asked_about_lightest_first() {
        // Node indices: n5, n6 are 0, 1; n1..n4 are 2..5. Whole nodes
        // (select/linear): one ask per set, the lighter ones first.
        assert_eq!(
            asked(false, false, &["-N1"], 4),
            [vec![2, 3], vec![2, 3, 4, 5]]
        );
        // Placed in the first set: one ask.
        assert_eq!(asked(false, false, &["-N1"], 2), [vec![2, 3]]);
        // Nothing placed it: the last ask is every set.
        assert_eq!(
            asked(false, false, &["-N1"], 9).last().map(Vec::len),
            Some(6)
        );
        // Three nodes: no ask while the sets so far hold fewer.
        assert_eq!(
            asked(false, false, &["-N3"], 0),
            [vec![2, 3, 4, 5], vec![0, 1, 2, 3, 4, 5]]
        );
        // A sharing job under a consumable-resource plugin (cons_res): the
        // sets of one weight together.
        assert_eq!(
            asked(true, false, &["-n1"], 0),
            [vec![2, 3, 4, 5], vec![0, 1, 2, 3, 4, 5]]
        );
        // ... but not when it asks for whole nodes.
        assert_eq!(asked(true, false, &["-N1", "--exclusive"], 4).len(), 2);
        // A single-job-test plugin (cons_tres): one ask with every node.
        assert_eq!(asked(true, true, &["-n1"], 0), [vec![0, 1, 2, 3, 4, 5]]);
    }
}
