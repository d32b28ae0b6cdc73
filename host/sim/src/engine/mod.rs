//! The simulation engine: a workload replayed in virtual time through one
//! policy stack (a [`Select`] driven by slurmctld's model,
//! [`slurm::controller::Controller`], as `select place` and the replays of
//! real Slurm recordings drive it, and a [`Prioritizer`]; normally the
//! select and priority plugins loaded through the host).
//!
//! Jobs are prepared from the sbatch options a trace job stands for by the
//! same code ([`jobs::request`]); the controller builds every `job-test`
//! request, which this scheduler narrows to the candidates it chose, and
//! makes the calls that follow a start (`job-begin`, then `nodeinfo-set`)
//! and an end (`job-fini`).
//!
//! # Events
//!
//! Time jumps from event to event: job submissions (the trace's submit
//! times), job ends (start + run time, or start + time limit + `OverTimeLimit`
//! for a job whose run time exceeds its limit: it is killed), priority
//! recalculations (every `PriorityCalcPeriod` while jobs are pending) and
//! backfill passes. Before each event the stack's [`VirtualClock`] is set,
//! so the plugins' `clock` capability answers the simulated time and
//! priority age and usage decay follow it. Events at the same second are
//! processed together: ends first, then submissions (in trace order), then
//! the priority recalculation, then one main scheduling pass, then a
//! backfill pass when one is due.
//!
//! # Submission
//!
//! A job is turned into the contract's `job` record ([`jobs::request`]),
//! tested once `TEST_ONLY` on its partition's nodes (slurmctld rejects at
//! submission a job no node configuration can ever hold: the outcome then
//! says `rejected`), and given its priority by the priority plugin's `set`.
//! The `TEST_ONLY` answer is kept per request shape (partition, node counts,
//! CPUs, memory, GPUs): it ignores usage, so jobs of one shape share it.
//!
//! With accounting (`AccountingStorageType=accounting_storage/slurmdbd`),
//! the priority plugin is given the workload's association tree before the
//! first job ([`accounting`]), and each job names its user association and
//! account, so multifactor's fair-share and age factors count.
//!
//! # Main pass (slurmctld's `schedule()`)
//!
//! Pending jobs are walked in priority order (higher first; equal
//! priorities by submit time, then job id). Each is tested `RUN_NOW` on its
//! partition's nodes; on success it starts (`job-begin` with the
//! allocation). The first job of a partition that cannot start blocks that
//! partition: later jobs of the same partition are not tried, as Slurm's
//! main scheduler does, so without backfill the policy is strict priority
//! order (FCFS with priority/basic). Under sched/backfill a job pending
//! for less than `bf_min_age_reserve` seconds, or of a priority below
//! `bf_min_prio_reserve`, does not block its partition (job_scheduler.c
//! 1955-1973): the jobs after it are still tried. The pass ends when every
//! partition is blocked or every pending job was tried. Cheap pre-check:
//! when no partition oversubscribes, a job asking for more CPUs than its
//! partition has free is not sent to the plugin (the plugin would refuse
//! it).
//!
//! # Backfill (sched/backfill)
//!
//! Modelled: a pass at most every `bf_interval` seconds after a change
//! (a pass with nothing changed since the last one cannot start anything
//! and is skipped); pending jobs in priority order up to `bf_max_job_test`,
//! planned on a node-time map as Slurm's `_attempt_backfill` plans them
//! (`node_space`: slots of time, each with the nodes no planned job holds).
//! For each job, from a tried start (now, at first), the candidates are
//! the partition's nodes free in every slot of `[start, start + limit)`: a
//! `RUN_NOW` test on them at the first try starts the job now, marked
//! backfilled, without taking a node any planned job needs before the job
//! ends. Otherwise `WILL_RUN` on them gives the expected start (from the
//! end times of running jobs, start + time limit, as the plugin learnt
//! them at `job-begin`) and nodes; the job is tried again from a later
//! boundary of the plan (`TRY_LATER`) when the answer lies past the first
//! boundary after which the next slot frees a node the candidates lack,
//! when too few nodes are free, or when the answer's nodes would overlap
//! another job's plan. A start within `bf_window` is planned: its nodes
//! leave the slots of `[start, start + limit)`, both times rounded down to
//! a multiple of `bf_resolution` seconds of Unix time (backfill.c
//! 2853-2880), the span at least one `bf_resolution`. The five-job case of
//! issue 34 is the known answer (`tests::backfill_plans_node_time_like_slurm`,
//! recorded from real Slurm). Calls whose answer is certain are spared:
//! `RUN_NOW` when the candidates' unallocated CPUs are fewer than the job's
//! minimum (no partition oversubscribes), `WILL_RUN` when the candidates,
//! idle, would have too few CPUs or nodes for it.
//!
//! A pass after which only submissions happened (no job started or ended,
//! no priority changed) keeps the answers of the jobs it tested ahead of the
//! first new job and tests from there on; with FCFS priorities and a queue
//! longer than `bf_max_job_test` such a pass has nothing to test. The kept
//! answers were computed before the jobs that pass backfilled had started;
//! Slurm recomputes them (the backfilled jobs end before, or run beside,
//! every reservation, so a will-run answer changes only in which of several
//! equally early nodes it names).
//!
//! Modelled limits of a pass: `bf_max_job_test` (jobs tried: a select call
//! made, as Slurm counts `bf_last_depth_try`), `bf_max_job_user` and
//! `bf_max_job_part` (jobs considered; one over a limit is skipped,
//! uncounted), `bf_max_job_start` (starts), `bf_min_prio_reserve`,
//! `bf_min_age_reserve` and `bf_job_part_count_reserve` (a job below the
//! priority, pending for less than the age since its submission, or past
//! the partition's count of plans, may start now but is not planned:
//! `job_no_reserve` in `_attempt_backfill`, backfill.c 2046-2092). A pass
//! a limit cut short makes the next one due `bf_interval` later even if
//! nothing changes. `bf_continue` needs nothing: a pass here takes no time.
//! A job growing older than `bf_min_age_reserve` needs no pass of its own:
//! its plan, and its blocking the main pass, can only keep jobs from
//! starting, never start one.
//!
//! `bf_window_linear` and `bf_busy_nodes` are not sched/backfill's in
//! Slurm 22.05: select/cons_res and cons_tres read them
//! (`select_p_node_init`, cons_common.c 1113-1135) and act on them inside
//! their WILL_RUN answer (`_will_run_test`, cons_common/job_test.c
//! 2036-2048: the window that batches the running jobs released by end
//! time grows by `bf_window_linear` seconds instead of doubling, and the
//! tests after a release prefer nodes running jobs now). The select
//! plugin is initialised with slurm.conf's `SchedulerParameters`, so the
//! bundled cons_tres answers the engine's WILL_RUN calls as 22.05 does
//! (`tests::bf_window_linear_reaches_cons_tres_will_run`,
//! `tests::bf_busy_nodes_reaches_cons_tres_will_run`); select/linear
//! ignores both, as Slurm's does.
//!
//! Not modelled (listed in the run's notes when slurm.conf sets them,
//! [`config::unmodelled`]): the other `SchedulerParameters`
//! (`bf_max_job_assoc`, `bf_one_resv_per_job`, `bf_licenses`, ...),
//! QOS/association limits, advanced reservations, licenses, preemption,
//! job dependencies and arrays, resource-level (core, memory) plans: a plan
//! holds whole nodes for the future, which is what Slurm's node-space map
//! does too.

pub mod accounting;
pub mod config;
pub mod jobs;
mod node_space;
pub mod policy;

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

use slurm::controller::{Controller, Select};
use slurm::hostlist;
use slurm::job_request::PreparedJob;
use slurm::setup::records::Cluster;
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::kinds::select::{JobTestMode, JobTestResult};
use slurm_wasm_host::types::{Bitmap, Job, JobResources, JobState, MemoryRequest, Oversubscribe};
use slurm_wasm_host::CallError;

use crate::outcome::JobOutcome;
use crate::workload::Workload;
use node_space::NodeSpace;

pub use config::{Backfill, SchedConfig, Style};
pub use policy::{Build, PolicySpec, Prioritizer};

/// Unix time of a workload's time zero when the trace does not say
/// (2021-01-01T00:00:00Z): plugins see plausible dates.
pub const DEFAULT_EPOCH: i64 = 1_609_459_200;

/// The fixed inputs of a simulation.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    pub cluster: &'a Cluster,
    pub workload: &'a Workload,
    pub config: SchedConfig,
    /// Partition of jobs that name none, or one the cluster does not have
    /// (slurm.conf's `Default=YES` partition, else the first).
    pub default_partition: usize,
}

impl Input<'_> {
    /// Unix time of the workload's time zero.
    pub fn epoch(&self) -> i64 {
        if self.workload.start_time > 0 {
            self.workload.start_time
        } else {
            DEFAULT_EPOCH
        }
    }
}

/// Counters of one simulation, for reports and benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    pub main_passes: u64,
    pub backfill_passes: u64,
    pub priority_recalcs: u64,
    /// `job-test` calls by mode.
    pub run_now_tests: u64,
    pub will_run_tests: u64,
    pub test_only_tests: u64,
    /// Jobs submitted to a partition other than the one the trace names,
    /// because the cluster has no partition of that name.
    pub partition_fallbacks: u64,
}

/// The schedule one stack produced.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SimResult {
    /// The stack's label (`select/linear,priority/basic`).
    pub policy: String,
    /// One outcome per workload job, in workload order.
    pub outcomes: Vec<JobOutcome>,
    pub counters: Counters,
    /// Seconds of real time the simulation took.
    pub wall_seconds: f64,
    /// Fuel the stack's plugins used, when they ran as components: unlike
    /// the wall time, the same on every run and machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<StackFuel>,
    /// How close the schedule is to the one the workload recorded, when
    /// it recorded one ([`crate::agreement`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<crate::agreement::Agreement>,
}

/// Fuel used by each plugin of a stack over a whole simulation (loading
/// and the association tree included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StackFuel {
    pub select: u64,
    pub priority: u64,
}

/// A simulation that could not go on: a plugin fault (trap, exhausted
/// limit, malformed answer) or an inconsistent answer.
#[derive(Debug, thiserror::Error)]
#[error("at t={time}s (job {job}): {reason}")]
pub struct SimError {
    /// Seconds since the workload's time zero.
    pub time: i64,
    pub job: u32,
    pub reason: String,
}

/// A reservation made by a backfill pass for the job of `key`: `nodes`
/// from `start` to `end`.
struct Reservation {
    key: QueueKey,
    start: i64,
    end: i64,
    nodes: Vec<u64>,
}

/// What a backfill pass did with one job ([`Engine::plan`]).
enum Planned {
    /// Started now.
    Started,
    /// Planned: its nodes held for the future.
    At(Reservation),
    /// Neither.
    No,
}

/// Pending-queue key: priority (higher first), submit time, job id, index.
type QueueKey = (Reverse<u32>, i64, u32, usize);

/// What the last backfill pass decided, valid while no job started or
/// ended and no priority changed (`generation` unchanged).
struct BfCache {
    generation: u64,
    /// The jobs it considered, in queue order, each with whether it was
    /// tried (counted against `bf_max_job_test`).
    tested: Vec<(QueueKey, bool)>,
    reservations: Vec<Reservation>,
}

struct Live {
    /// The job record as last updated (priority, state, resources), with
    /// its `job-test` arguments.
    prepared: PreparedJob,
    partition: usize,
    kill_after: Option<i64>,
    expected: i64,
}

struct Engine<'a, 'p> {
    input: &'a Input<'a>,
    /// slurmctld around the select plugin.
    ctl: Controller<&'p mut dyn Select>,
    prioritizer: &'p mut dyn Prioritizer,
    epoch: i64,
    live: Vec<Option<Live>>,
    outcomes: Vec<JobOutcome>,
    index_of: HashMap<u32, usize>,
    pending: BTreeSet<QueueKey>,
    running: BTreeSet<usize>,
    ends: BinaryHeap<Reverse<(i64, usize)>>,
    /// Node bitmaps of the partitions, as words and as contract bitmaps.
    part_words: Vec<Vec<u64>>,
    part_bitmaps: Vec<Bitmap>,
    /// CPUs not allocated, per partition (for the pre-check).
    part_free: Vec<i64>,
    /// CPUs not allocated, per node (for the backfill pre-checks).
    node_free: Vec<u32>,
    largest_node_cpus: Vec<u32>,
    /// The CPU count of the cluster's smallest node.
    fewest_node_cpus: u32,
    /// `TEST_ONLY` verdicts (none = fits, else why not) by request shape.
    test_only_cache: HashMap<Shape, Option<String>>,
    cpu_precheck: bool,
    counters: Counters,
    done: u64,
    progress: Option<&'p AtomicU64>,
    /// Bumped whenever a job starts or ends or a priority changes.
    generation: u64,
    bf_cache: Option<BfCache>,
    /// Queue keys of the jobs submitted since the last backfill pass.
    submitted_since_bf: Vec<QueueKey>,
    /// The simulated association tree, when the cluster runs with
    /// accounting ([`accounting::enabled`]).
    accounts: Option<accounting::Accounts>,
}

/// Replays `input.workload` through `select` (driven by slurmctld's
/// model, [`Controller`], which gives it the node table first) and
/// `prioritizer`, moving
/// `clock` (the clock the plugins read) from event to event. `progress`,
/// when given, counts jobs that reached their end (finished, or rejected).
///
/// The same inputs give the same result: every ordering is by time, then
/// priority, submit time and job id, and no wall-clock value is used.
///
/// # Errors
///
/// [`SimError`] when a plugin call faults (not when a plugin refuses a
/// placement, which is an answer), an allocation names no node, or
/// `input.default_partition` is not a partition of the cluster.
pub fn simulate<'p>(
    input: &Input<'_>,
    select: &'p mut dyn Select,
    prioritizer: &'p mut dyn Prioritizer,
    clock: &VirtualClock,
    policy: &str,
    progress: Option<&'p AtomicU64>,
) -> Result<SimResult, SimError> {
    let started = std::time::Instant::now();
    let cluster = input.cluster;
    if input.default_partition >= cluster.partitions.len() {
        return Err(SimError {
            time: 0,
            job: 0,
            reason: format!(
                "default partition {} does not exist: the cluster has {} partitions",
                input.default_partition,
                cluster.partitions.len()
            ),
        });
    }
    // slurmctld offers only available nodes (`avail_node_bitmap`)
    let part_bitmaps: Vec<Bitmap> = cluster
        .partitions
        .iter()
        .map(|p| cluster.available_of(&p.nodes))
        .collect();
    let part_words: Vec<Vec<u64>> = part_bitmaps.iter().map(|b| b.words.clone()).collect();
    let part_free = cluster
        .partitions
        .iter()
        .map(|p| {
            p.nodes
                .ones()
                .map(|i| i64::from(cluster.nodes[i as usize].cpus))
                .sum()
        })
        .collect();
    let cpu_precheck = cluster.partitions.iter().all(|p| {
        matches!(
            p.oversubscribe,
            Oversubscribe::No | Oversubscribe::Exclusive
        )
    });
    let ctl = Controller::new(cluster.clone(), select, None).map_err(|e| SimError {
        time: 0,
        job: 0,
        reason: format!("node-init: {e}"),
    })?;
    let mut engine = Engine {
        input,
        ctl,
        prioritizer,
        epoch: input.epoch(),
        live: (0..input.workload.jobs.len()).map(|_| None).collect(),
        outcomes: Vec::with_capacity(input.workload.jobs.len()),
        index_of: HashMap::with_capacity(input.workload.jobs.len()),
        pending: BTreeSet::new(),
        running: BTreeSet::new(),
        ends: BinaryHeap::new(),
        part_bitmaps,
        part_words,
        part_free,
        node_free: cluster.nodes.iter().map(|n| u32::from(n.cpus)).collect(),
        largest_node_cpus: jobs::largest_node_cpus(cluster),
        fewest_node_cpus: cluster
            .nodes
            .iter()
            .map(|n| u32::from(n.cpus))
            .min()
            .unwrap_or(0),
        test_only_cache: HashMap::new(),
        cpu_precheck,
        counters: Counters::default(),
        done: 0,
        progress,
        generation: 0,
        bf_cache: None,
        submitted_since_bf: Vec::new(),
        accounts: accounting::enabled(cluster)
            .then(|| accounting::Accounts::derive(input.workload)),
    };
    if let Some(accounts) = &engine.accounts {
        engine
            .prioritizer
            .associations(&accounts.updates())
            .map_err(|e| SimError {
                time: 0,
                job: 0,
                reason: format!("loading the simulated association tree: {e}"),
            })?;
    }
    engine.outcomes = input
        .workload
        .jobs
        .iter()
        .map(|j| JobOutcome {
            id: j.id,
            submit: j.submit,
            user: j.user,
            group: j.group,
            partition: j.partition.clone(),
            requested_cpus: j.cpus,
            requested_nodes: j.nodes,
            time_limit: j.time_limit,
            trace_run_time: j.run_time,
            ..JobOutcome::default()
        })
        .collect();
    engine.run(clock)?;
    for (idx, live) in engine.live.iter().enumerate() {
        if live
            .as_ref()
            .is_some_and(|l| l.prepared.job.state == JobState::Pending)
        {
            engine.outcomes[idx].rejected =
                Some("still pending when no event was left (never fitted)".into());
        }
    }
    let fuel = engine
        .ctl
        .fuel_used()
        .zip(engine.prioritizer.fuel_used())
        .map(|(select, priority)| StackFuel { select, priority });
    let agreement = crate::agreement::agreement(input.workload, &engine.outcomes);
    Ok(SimResult {
        policy: policy.to_owned(),
        agreement,
        outcomes: engine.outcomes,
        counters: engine.counters,
        wall_seconds: started.elapsed().as_secs_f64(),
        fuel,
    })
}

impl Engine<'_, '_> {
    fn fail(&self, now: i64, idx: usize, reason: impl std::fmt::Display) -> SimError {
        SimError {
            time: now - self.epoch,
            job: self.input.workload.jobs[idx].id,
            reason: reason.to_string(),
        }
    }

    fn call<T>(&self, now: i64, idx: usize, r: Result<T, CallError>) -> Result<T, SimError> {
        r.map_err(|e| self.fail(now, idx, e))
    }

    fn run(&mut self, clock: &VirtualClock) -> Result<(), SimError> {
        let jobs = &self.input.workload.jobs;
        let config = self.input.config;
        let mut next_submit = 0usize;
        let mut calc_due = self.epoch + config.calc_period;
        let mut bf_due: Option<i64> = None;
        let mut last_bf = i64::MIN / 2;
        loop {
            let submit_at = jobs.get(next_submit).map(|j| self.epoch + j.submit);
            let end_at = self.ends.peek().map(|Reverse((t, _))| *t);
            let more_coming = submit_at.is_some() || end_at.is_some();
            let mut next = [submit_at, end_at].into_iter().flatten().min();
            if more_coming && !self.pending.is_empty() {
                next = [next, bf_due, Some(calc_due)].into_iter().flatten().min();
            } else if !self.pending.is_empty() {
                // Nothing will end or arrive: a due backfill pass is the
                // last chance for the pending jobs.
                next = next.or(bf_due);
            }
            let Some(now) = next else { break };
            clock.set(now);
            let mut changed = false;
            while let Some(&Reverse((t, idx))) = self.ends.peek() {
                if t != now {
                    break;
                }
                self.ends.pop();
                self.end(now, idx)?;
                changed = true;
            }
            while let Some(job) = jobs.get(next_submit) {
                if self.epoch + job.submit != now {
                    break;
                }
                self.submit(now, next_submit)?;
                next_submit += 1;
                changed = true;
            }
            if calc_due <= now && !self.pending.is_empty() {
                changed |= self.recalculate(now)?;
                calc_due = now + config.calc_period;
            }
            if changed {
                self.main_pass(now)?;
                if config.backfill.is_some() && bf_due.is_none() {
                    bf_due = Some(now.max(last_bf + config.backfill.map_or(0, |b| b.interval)));
                }
            }
            if let (Some(bf), Some(due)) = (config.backfill, bf_due) {
                if due <= now {
                    let cut_short = !self.pending.is_empty() && self.backfill(now, &bf)?;
                    last_bf = now;
                    // A pass a limit cut short leaves work for the next
                    // one, due although nothing changes.
                    bf_due = cut_short.then_some(now + bf.interval);
                }
            }
        }
        Ok(())
    }

    fn finish_one(&mut self) {
        self.done += 1;
        if let Some(p) = self.progress {
            p.store(self.done, Ordering::Relaxed);
        }
    }

    fn submit(&mut self, now: i64, idx: usize) -> Result<(), SimError> {
        let trace = &self.input.workload.jobs[idx];
        let mut fell_back = false;
        let request = jobs::request(
            trace,
            now,
            self.input.cluster,
            self.input.default_partition,
            &self.largest_node_cpus,
            &mut fell_back,
        );
        if fell_back {
            self.counters.partition_fallbacks += 1;
        }
        self.index_of.insert(trace.id, idx);
        let request = match request {
            Ok(request) => request,
            Err(e) => {
                self.outcomes[idx].rejected = Some(format!("sbatch refuses it: {e}"));
                self.finish_one();
                return Ok(());
            }
        };
        let shape = shape(&request);
        let verdict = match self.test_only_cache.get(&shape) {
            Some(verdict) => verdict.clone(),
            None => {
                self.counters.test_only_tests += 1;
                let candidates = self.part_bitmaps[request.partition].clone();
                let answer = self.test(
                    now,
                    idx,
                    &request.prepared,
                    candidates,
                    JobTestMode::TestOnly,
                )?;
                let verdict = match answer {
                    Err((code, message)) => Some(format!(
                        "cannot run on partition {} (error {code}: {message})",
                        self.input.cluster.partitions[request.partition].name
                    )),
                    Ok(_) => None,
                };
                self.test_only_cache.insert(shape, verdict.clone());
                verdict
            }
        };
        if let Some(reason) = verdict {
            self.outcomes[idx].rejected = Some(reason);
            self.finish_one();
            return Ok(());
        }
        let mut prepared = request.prepared;
        let job = &mut prepared.job;
        if let Some((assoc_id, account)) = self.accounts.as_ref().and_then(|a| a.of(trace)) {
            job.assoc_id = assoc_id;
            job.account = Some(account);
        }
        let priority = self.prioritizer.submit(job);
        job.priority = self.call(now, idx, priority)?;
        let key = (Reverse(job.priority), now, job.job_id, idx);
        self.pending.insert(key);
        self.submitted_since_bf.push(key);
        self.live[idx] = Some(Live {
            prepared,
            partition: request.partition,
            kill_after: request.kill_after,
            expected: request.expected,
        });
        Ok(())
    }

    fn live(&self, idx: usize) -> &Live {
        rec(&self.live, idx)
    }

    fn key(&self, idx: usize) -> QueueKey {
        let job = &self.live(idx).prepared.job;
        (
            Reverse(job.priority),
            job.details.submit_time,
            job.job_id,
            idx,
        )
    }

    /// The pending job after `after` in queue order (the first with none).
    fn next_pending(&self, after: Option<QueueKey>) -> Option<QueueKey> {
        match after {
            None => self.pending.first().copied(),
            Some(k) => self
                .pending
                .range((Bound::Excluded(k), Bound::Unbounded))
                .next()
                .copied(),
        }
    }

    /// One PriorityCalcPeriod pass; true when a priority changed.
    fn recalculate(&mut self, now: i64) -> Result<bool, SimError> {
        self.counters.priority_recalcs += 1;
        // The decay pass charges allocated TRES: the records go without
        // their per-node resources, which would be most of the copying.
        let live = &mut self.live;
        let running: Vec<Job> = self
            .running
            .iter()
            .map(|&i| {
                let job = &mut live[i]
                    .as_mut()
                    .expect("running job has a record")
                    .prepared
                    .job;
                let resources = job.resources.take();
                let lean = job.clone();
                job.resources = resources;
                lean
            })
            .collect();
        let pending: Vec<u32> = self.pending.iter().map(|k| k.2).collect();
        let first = self.pending.first().map_or(0, |k| k.3);
        let result = self.prioritizer.recalculate(&running, &pending);
        let updates = self.call(now, first, result)?;
        let mut changed = false;
        for (id, priority) in updates {
            let Some(&idx) = self.index_of.get(&id) else {
                continue;
            };
            let key = self.key(idx);
            if self.live(idx).prepared.job.state != JobState::Pending || key.0 .0 == priority {
                continue;
            }
            self.pending.remove(&key);
            if let Some(l) = self.live[idx].as_mut() {
                l.prepared.job.priority = priority;
            }
            self.pending.insert(self.key(idx));
            self.generation += 1;
            changed = true;
        }
        Ok(changed)
    }

    /// Whether the unallocated CPUs of the nodes in `words` reach job
    /// `idx`'s minimum (always true when a partition oversubscribes). When
    /// they do not, `RUN_NOW` there must fail: the call is spared.
    fn fits_free_cpus_on(&self, idx: usize, words: &[u64]) -> bool {
        let need = u64::from(self.live(idx).prepared.job.details.min_cpus);
        // The partition's free CPUs bound the candidates' (a subset).
        !self.cpu_precheck
            || (self.fits_free_cpus(idx)
                && sum_over(words, |i| u64::from(self.node_free[i])) >= need)
    }

    /// Whether the nodes in `words`, all idle, could hold job `idx`: its
    /// minimum CPUs and nodes against their configured CPUs. When they
    /// cannot, `WILL_RUN` there must fail (not even every running job's end
    /// makes room): the call is spared.
    fn could_ever_fit_on(&self, idx: usize, words: &[u64]) -> bool {
        let live = self.live(idx);
        let d = &live.prepared.job.details;
        let nodes: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
        let need = u64::from(d.min_cpus);
        if nodes < u64::from(d.min_nodes)
            || nodes * u64::from(self.largest_node_cpus[live.partition]) < need
        {
            return false;
        }
        // Settled by the smallest node without a pass over the nodes, as a
        // rule; otherwise counted.
        nodes * u64::from(self.fewest_node_cpus) >= need
            || sum_over(words, |i| u64::from(self.input.cluster.nodes[i].cpus)) >= need
    }

    fn fits_free_cpus(&self, idx: usize) -> bool {
        let live = self.live(idx);
        !self.cpu_precheck
            || self.part_free[live.partition] >= i64::from(live.prepared.job.details.min_cpus)
    }

    fn main_pass(&mut self, now: i64) -> Result<(), SimError> {
        self.counters.main_passes += 1;
        let parts = self.input.cluster.partitions.len();
        let mut blocked = vec![false; parts];
        let mut blocked_count = 0;
        let mut cursor = None;
        while blocked_count < parts {
            let Some(key) = self.next_pending(cursor) else {
                break;
            };
            cursor = Some(key);
            let idx = key.3;
            let partition = self.live(idx).partition;
            if blocked[partition] {
                continue;
            }
            let placed = if self.fits_free_cpus(idx) {
                self.counters.run_now_tests += 1;
                let candidates = self.part_bitmaps[partition].clone();
                self.test_live(now, idx, candidates, JobTestMode::RunNow)?
                    .ok()
            } else {
                None
            };
            match placed {
                Some(result) => self.start(now, idx, result.resources, false)?,
                None if self.blocks_main_pass(now, key) => {
                    blocked[partition] = true;
                    blocked_count += 1;
                }
                None => {}
            }
        }
        Ok(())
    }

    /// Whether pending job `key`, having failed to start in the main pass,
    /// keeps the later jobs of its partition from being tried
    /// (`fail_by_part` in `schedule`, job_scheduler.c 1955-1973): not when
    /// it has been pending for less than `bf_min_age_reserve` seconds, nor
    /// when its priority is below `bf_min_prio_reserve`.
    fn blocks_main_pass(&self, now: i64, key: QueueKey) -> bool {
        let Some(bf) = self.input.config.backfill else {
            return true;
        };
        !young(now, key, &bf) && !low_priority(key, &bf)
    }

    /// One backfill pass; true when a per-user or per-partition limit, or
    /// `bf_max_job_start`, left jobs it would otherwise have tried.
    fn backfill(&mut self, now: i64, bf: &Backfill) -> Result<bool, SimError> {
        let mut new_keys = std::mem::take(&mut self.submitted_since_bf);
        new_keys.retain(|k| self.pending.contains(k));
        let first_new = new_keys.iter().min().copied();
        // Per-user and per-partition limits count what earlier jobs of the
        // pass did: a pass under them starts over.
        // So does one under `bf_min_age_reserve`: a job the last pass did
        // not plan, too young then, may be planned now.
        let limited = bf.max_job_user > 0
            || bf.max_job_part > 0
            || bf.max_job_start > 0
            || bf.min_prio_reserve > 0
            || bf.job_part_count_reserve > 0
            || bf.min_age_reserve > 0;
        let (mut reservations, mut tested) = match self.bf_cache.take() {
            Some(cache) if cache.generation == self.generation && !limited => {
                // Only submissions since the last pass: the jobs it tested
                // ahead of the first new one keep their answers.
                let Some(first_new) = first_new else {
                    self.bf_cache = Some(cache);
                    return Ok(false);
                };
                let prefix = cache.tested.partition_point(|(k, _)| *k < first_new);
                let tries = cache.tested[..prefix].iter().filter(|t| t.1).count();
                if tries >= bf.max_job_test {
                    self.bf_cache = Some(cache);
                    return Ok(false);
                }
                let mut tested = cache.tested;
                tested.truncate(prefix);
                let kept = cache
                    .reservations
                    .into_iter()
                    .filter(|r| r.key < first_new)
                    .collect();
                (kept, tested)
            }
            _ => (Vec::new(), Vec::new()),
        };
        self.counters.backfill_passes += 1;
        let all_nodes = self.all_node_words();
        let mut space = NodeSpace::new(now, now + bf.window, all_nodes, bf.resolution);
        for r in &reservations {
            space.reserve(r.start, r.end, &r.nodes);
        }
        let parts = self.input.cluster.partitions.len();
        let mut per_user: HashMap<u32, usize> = HashMap::new();
        let mut per_part = vec![0usize; parts];
        let mut planned_in = vec![0usize; parts];
        let mut started = 0usize;
        let mut tries = tested.iter().filter(|t| t.1).count();
        let mut cut_short = false;
        let mut cursor = tested.last().map(|t| t.0);
        while tries < bf.max_job_test {
            let Some(key) = self.next_pending(cursor) else {
                break;
            };
            cursor = Some(key);
            tested.push((key, false));
            let (partition, user) = {
                let l = self.live(key.3);
                (l.partition, l.prepared.job.user_id)
            };
            // `_job_exceeds_max_bf_param` (backfill.c 1563-1660): a job
            // over a limit is skipped, uncounted.
            let user_jobs = per_user.entry(user).or_default();
            if (bf.max_job_user > 0 && *user_jobs >= bf.max_job_user)
                || (bf.max_job_part > 0 && per_part[partition] >= bf.max_job_part)
            {
                cut_short = true;
                continue;
            }
            *user_jobs += 1;
            per_part[partition] += 1;
            // `job_no_reserve` (backfill.c 2038-2092): such a job may
            // start now, and is not planned: below `bf_min_prio_reserve`
            // (2047-2049), pending for less than `bf_min_age_reserve`
            // (2050-2055), or past its partition's count of plans.
            let part_planned =
                bf.job_part_count_reserve > 0 && planned_in[partition] >= bf.job_part_count_reserve;
            // EASY plans the first job that cannot start now, no other.
            let easy_planned = bf.style == Style::Easy && !reservations.is_empty();
            let reserve =
                !low_priority(key, bf) && !young(now, key, bf) && !part_planned && !easy_planned;
            let (tried, planned) = self.plan(now, key, bf, &space, reserve)?;
            if tried {
                tries += 1;
                if let Some(last) = tested.last_mut() {
                    last.1 = true;
                }
            }
            match planned {
                Planned::Started => {
                    started += 1;
                    if bf.max_job_start > 0 && started >= bf.max_job_start {
                        cut_short = self.next_pending(cursor).is_some();
                        break;
                    }
                }
                Planned::At(r) => {
                    planned_in[partition] += 1;
                    space.reserve(r.start, r.end, &r.nodes);
                    reservations.push(r);
                }
                Planned::No => {}
            }
        }
        self.bf_cache = Some(BfCache {
            generation: self.generation,
            tested,
            reservations,
        });
        Ok(cut_short)
    }

    /// One job of a backfill pass, as `_attempt_backfill` tries it against
    /// the pass's plan `space`: started now when it fits on the nodes no
    /// planned job needs before its time limit ends, else, with `reserve`,
    /// given the plan the answer is. Also says whether the job was tried
    /// (a select call made: what `bf_max_job_test` counts, as Slurm's
    /// `bf_last_depth_try`).
    ///
    /// From a tried start (now, at first), the job's candidates are its
    /// partition's nodes free in every slot of `[start, start + limit)`,
    /// and `WILL_RUN` on them gives the expected start (never before the
    /// tried one) and nodes. A later boundary of the plan is tried again
    /// (`TRY_LATER`) when the answer lies past it, when too few nodes are
    /// free, or when the answer's nodes overlap another job's plan
    /// (`_test_resv_overlap`): the first boundary after the tried start
    /// past which the next slot frees a node the candidates lack
    /// (`later_start`). The plan's times are rounded down to
    /// `bf_resolution` (backfill.c 2853-2880). Without `reserve` (Slurm's
    /// `TEST_NOW_ONLY`) only a start now is tried.
    fn plan(
        &mut self,
        now: i64,
        key: QueueKey,
        bf: &Backfill,
        space: &NodeSpace,
        reserve: bool,
    ) -> Result<(bool, Planned), SimError> {
        let idx = key.3;
        let (partition, limit, min_nodes, required) = {
            let l = self.live(idx);
            let d = &l.prepared.job.details;
            (
                l.partition,
                l.expected,
                d.min_nodes,
                d.required_nodes.as_ref().map(|b| b.words.clone()),
            )
        };
        let words = self.part_words[partition].clone();
        let len = self.part_bitmaps[partition].len;
        let slots = space.slots();
        let mut from = now;
        let mut tried = false;
        loop {
            let end_time = from.max(now) + limit;
            let mut avail = words.clone();
            let mut later = None;
            for (j, slot) in slots.iter().enumerate() {
                if slot.end > from && later.is_none() {
                    if let Some(next) = slots.get(j + 1) {
                        let frees = words
                            .iter()
                            .zip(&next.avail)
                            .zip(avail.iter().zip(&slot.avail))
                            .any(|((w, n), (a, s))| w & n & !(a & s) != 0);
                        if frees {
                            later = Some(slot.end);
                        }
                    }
                }
                if slot.end <= from {
                    continue;
                }
                if slot.begin > end_time {
                    break;
                }
                for (a, s) in avail.iter_mut().zip(&slot.avail) {
                    *a &= s;
                }
            }
            let retry = later.filter(|&l| reserve && l > from);
            let nodes_left: u32 = avail.iter().map(|w| w.count_ones()).sum();
            let lacks_required = required
                .as_ref()
                .is_some_and(|r| r.iter().zip(&avail).any(|(r, a)| r & !a != 0));
            if nodes_left < min_nodes || lacks_required {
                match retry {
                    Some(l) => {
                        from = l;
                        continue;
                    }
                    None => return Ok((tried, Planned::No)),
                }
            }
            if from <= now && self.fits_free_cpus_on(idx, &avail) {
                tried = true;
                self.counters.run_now_tests += 1;
                let candidates = Bitmap {
                    len,
                    words: avail.clone(),
                };
                if let Ok(result) = self.test_live(now, idx, candidates, JobTestMode::RunNow)? {
                    self.start(now, idx, result.resources, true)?;
                    return Ok((true, Planned::Started));
                }
            }
            if !reserve {
                return Ok((tried, Planned::No));
            }
            let answer = if self.could_ever_fit_on(idx, &avail) {
                tried = true;
                self.will_run(now, idx, len, avail)?
            } else {
                None
            };
            let Some((start, nodes)) = answer else {
                match retry {
                    Some(l) => {
                        from = l;
                        continue;
                    }
                    None => return Ok((tried, Planned::No)),
                }
            };
            let start = start.max(from).max(now + 1);
            if let Some(l) = retry.filter(|&l| start > l) {
                from = l;
                continue;
            }
            if start > now + bf.window {
                return Ok((tried, Planned::No));
            }
            let res = bf.resolution.max(1);
            let (begin, end) = (
                start.div_euclid(res) * res,
                (start + limit).div_euclid(res) * res,
            );
            if space.overlaps(&nodes, begin, end) {
                if start <= from {
                    return Ok((tried, Planned::No));
                }
                from = start;
                continue;
            }
            return Ok((
                tried,
                Planned::At(Reservation {
                    key,
                    start: begin,
                    end,
                    nodes,
                }),
            ));
        }
    }

    /// Every node of the cluster, one bit each.
    fn all_node_words(&self) -> Vec<u64> {
        let n = self.input.cluster.nodes.len();
        let mut words = vec![u64::MAX; n.div_ceil(64)];
        if !n.is_multiple_of(64) {
            if let Some(last) = words.last_mut() {
                *last = (1u64 << (n % 64)) - 1;
            }
        }
        words
    }

    /// `WILL_RUN` on `words`: the expected start and the nodes, or none.
    fn will_run(
        &mut self,
        now: i64,
        idx: usize,
        len: u32,
        words: Vec<u64>,
    ) -> Result<Option<(i64, Vec<u64>)>, SimError> {
        self.counters.will_run_tests += 1;
        let candidates = Bitmap { len, words };
        Ok(self
            .test_live(now, idx, candidates, JobTestMode::WillRun)?
            .ok()
            .map(|r| (r.start_time.unwrap_or(now), r.resources.nodes.words)))
    }

    /// `job-test` of `prepared` (job `idx`) in `mode` on `candidates`: the
    /// request the controller builds, narrowed to the candidates this
    /// scheduler chose. A refusal is the plugin's code and message; a
    /// fault ends the simulation.
    fn test(
        &mut self,
        now: i64,
        idx: usize,
        prepared: &PreparedJob,
        candidates: Bitmap,
        mode: JobTestMode,
    ) -> Result<Result<JobTestResult, (i32, String)>, SimError> {
        let request = self
            .ctl
            .request(prepared, mode, now)
            .map_err(|e| self.fail(now, idx, e))?;
        let request = slurm_wasm_host::kinds::select::JobTestRequest {
            candidates,
            ..request
        };
        match self.ctl.pick_best_nodes(&request) {
            Ok(result) => Ok(Ok(result)),
            Err(CallError::Plugin { code, message, .. }) => Ok(Err((code, message))),
            Err(e) => Err(self.fail(now, idx, e)),
        }
    }

    /// [`Self::test`] of pending job `idx`.
    fn test_live(
        &mut self,
        now: i64,
        idx: usize,
        candidates: Bitmap,
        mode: JobTestMode,
    ) -> Result<Result<JobTestResult, (i32, String)>, SimError> {
        let live = self.live[idx].take().expect("pending job has a record");
        let answer = self.test(now, idx, &live.prepared, candidates, mode);
        self.live[idx] = Some(live);
        answer
    }

    fn start(
        &mut self,
        now: i64,
        idx: usize,
        resources: JobResources,
        backfilled: bool,
    ) -> Result<(), SimError> {
        if resources.per_node.is_empty() {
            return Err(self.fail(now, idx, "the select plugin allocated no node"));
        }
        let key = self.key(idx);
        self.pending.remove(&key);
        self.generation += 1;
        let run_time = self.input.workload.jobs[idx].run_time.max(0);
        let node_names: Vec<&str> = resources
            .per_node
            .iter()
            .map(|n| {
                self.input.cluster.nodes[n.node_index as usize]
                    .name
                    .as_str()
            })
            .collect();
        let node_list = hostlist::compress(&node_names);
        let cluster = self.input.cluster;
        let live = self.live[idx].as_mut().expect("pending job has a record");
        let killed = live.kill_after.is_some_and(|k| run_time > k);
        let end = now + live.kill_after.map_or(run_time, |k| run_time.min(k));
        for n in &resources.per_node {
            let node = n.node_index as usize;
            self.node_free[node] = self.node_free[node].saturating_sub(u32::from(n.cpus));
            for &p in &cluster.nodes[node].partitions {
                self.part_free[p as usize] -= i64::from(n.cpus);
            }
        }
        let outcome = &mut self.outcomes[idx];
        outcome.start = Some(now - self.epoch);
        outcome.end = Some(end - self.epoch);
        outcome.nodes = resources.per_node.len() as u32;
        outcome.cpus = resources.ncpus;
        outcome.node_list = node_list;
        outcome.backfilled = backfilled;
        outcome.killed_at_limit = killed;
        let job = live.prepared.started(resources, now);
        live.prepared.job = job.clone();
        let r = self.ctl.begin(job);
        self.call(now, idx, r)?;
        self.running.insert(idx);
        self.ends.push(Reverse((end, idx)));
        Ok(())
    }

    fn end(&mut self, now: i64, idx: usize) -> Result<(), SimError> {
        self.running.remove(&idx);
        self.generation += 1;
        let killed = self.outcomes[idx].killed_at_limit;
        let cluster = self.input.cluster;
        let live = self.live[idx].as_mut().expect("running job has a record");
        let job = &mut live.prepared.job;
        job.state = if killed {
            JobState::Timeout
        } else {
            JobState::Complete
        };
        job.end_time = now;
        let id = job.job_id;
        if let Some(res) = &job.resources {
            for n in &res.per_node {
                let node = n.node_index as usize;
                self.node_free[node] += u32::from(n.cpus);
                for &p in &cluster.nodes[node].partitions {
                    self.part_free[p as usize] += i64::from(n.cpus);
                }
            }
        }
        let r = self.ctl.end(id).map(drop);
        r.map_err(|e| self.fail(now, idx, e))?;
        let r = self.prioritizer.end(&rec(&self.live, idx).prepared.job);
        self.call(now, idx, r)?;
        // The record is no longer needed: free it (large traces).
        self.live[idx] = None;
        self.finish_one();
        Ok(())
    }
}

/// What a `TEST_ONLY` answer depends on: the partition and the resources
/// asked for (partition, min and max nodes, CPUs, memory, GPUs). Jobs of
/// one shape get the same answer, since the test ignores usage.
type Shape = (usize, u32, Option<u32>, u32, (u8, u64), u64);

fn shape(request: &jobs::Request) -> Shape {
    let d = &request.prepared.job.details;
    let memory = match d.memory {
        MemoryRequest::None => (0, 0),
        MemoryRequest::PerNode(mb) => (1, mb),
        MemoryRequest::PerCpu(mb) => (2, mb),
    };
    let gpus = d.gres.iter().map(|g| g.count).sum();
    (
        request.partition,
        d.min_nodes,
        d.max_nodes,
        d.min_cpus,
        memory,
        gpus,
    )
}

/// Whether pending job `key`'s priority is below `bf_min_prio_reserve`
/// (always false when it is 0).
fn low_priority(key: QueueKey, bf: &Backfill) -> bool {
    bf.min_prio_reserve > 0 && key.0 .0 < bf.min_prio_reserve
}

/// Whether pending job `key` has been eligible for less than
/// `bf_min_age_reserve` seconds at `now` (always false when it is 0).
/// Slurm counts from the job's `begin_time`, which `job_independent`
/// (job_mgr.c 16440-16442) sets when it first finds the job eligible: for
/// the simulator's jobs (no `--begin`, no dependency, no hold), at
/// submission, the key's submit time.
fn young(now: i64, key: QueueKey, bf: &Backfill) -> bool {
    bf.min_age_reserve > 0 && now - key.1 < bf.min_age_reserve
}

/// The record of a queued or running job.
fn rec(live: &[Option<Live>], idx: usize) -> &Live {
    live[idx]
        .as_ref()
        .expect("queued and running jobs have a record")
}

/// The sum of `value(node)` over the nodes set in `words`.
fn sum_over(words: &[u64], value: impl Fn(usize) -> u64) -> u64 {
    let mut total = 0;
    for (w, &word) in words.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            total += value(w * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
    total
}

#[cfg(test)]
mod tests;
