//! What a restart replays beyond `init` and the saved state: the calls that
//! built a plugin's world, compacted to what still matters.
//!
//! A trapped instance cannot be entered again, so a restart starts a fresh
//! one. `init` (the configuration) and `state-restore` (the last state
//! saved or restored through the host) give it most of its world back; the
//! journals here give it the rest, kept by the kinds' handles as calls
//! succeed ([`crate::plugin::PluginCore::call_journaled`]):
//!
//! * select: the node table and the running jobs. Slurm's own restart path
//!   gives the same to a select plugin (`select_p_node_init`, then the
//!   running jobs through `select_p_job_init`/`select_p_reconfigure`); here
//!   the jobs are replayed as they came (`job-begin`, `job-init`,
//!   `job-suspend`, `job-resume`, `job-resized`, `job-expand`), less those
//!   that ended (`job-fini`), so the plugin rebuilds the same usage; so are
//!   their running steps (`step-start`, less those that ended with
//!   `step-finish`).
//! * priority: the jobs given to `set` and not ended (with the `last_prio`
//!   they were given), the last update of each association and QOS, and the
//!   usage-changing calls (`job-end`, `calculate`) since the last state saved
//!   or restored.
//! * gres: the last `node-config-load` and `step-context`.
//!
//! task plugins keep nothing beyond their configuration: a restarted task
//! plugin gets `init` only.

use std::collections::{BTreeMap, HashMap};

use crate::bindings::priority::exports::slurm::plugin::priority::{AssociationUpdate, QosUpdate};
use crate::bindings::types::{Bitmap, Job, Node};
use crate::plugin::Journal;

/// A select plugin's world.
#[derive(Debug, Default)]
pub(crate) struct SelectJournal {
    /// The node table, as `node-init` gave it and node updates changed it.
    pub nodes: Option<Vec<Node>>,
    /// The jobs of the last `job-init` (or `reconfigure`), by sequence
    /// number, less those that ended.
    initial: BTreeMap<u64, Job>,
    /// The job calls since, by sequence number, less those of ended jobs.
    calls: BTreeMap<u64, JobCall>,
    /// The sequence numbers of each job's calls, so that `job-fini` removes
    /// them without a scan of every running job's calls.
    by_job: HashMap<u32, Vec<u64>>,
    next: u64,
}

/// One journaled job call of a select plugin.
#[derive(Debug, Clone)]
pub(crate) enum JobCall {
    Begin(Box<Job>),
    Suspend(Box<Job>, bool),
    Resume(Box<Job>, bool),
    Resized(Box<Job>, u32),
    Expand(Box<(Job, Job)>),
    /// `step-start`: the job, the step's id and its nodes.
    StepStart(Box<(Job, u32, Bitmap)>),
}

impl JobCall {
    /// The job whose end makes this call unneeded.
    fn job_id(&self) -> u32 {
        match self {
            JobCall::Begin(j)
            | JobCall::Suspend(j, _)
            | JobCall::Resume(j, _)
            | JobCall::Resized(j, _) => j.job_id,
            JobCall::StepStart(start) => start.0.job_id,
            // The moved resources belong to `to` from then on.
            JobCall::Expand(jobs) => jobs.1.job_id,
        }
    }
}

/// A select plugin's state (`select_p_state_save`) holds no running jobs:
/// the journal keeps them all.
impl Journal for SelectJournal {}

impl SelectJournal {
    /// `node-init`: a new table; previous usage is discarded, as the
    /// contract says.
    pub fn node_init(&mut self, nodes: &[Node]) {
        self.nodes = Some(nodes.to_vec());
        self.init_jobs(&[]);
    }

    /// `update-node-config` / `update-node-state`: the node's new record.
    pub fn node_update(&mut self, node: &Node) {
        if let Some(slot) = self
            .nodes
            .as_mut()
            .and_then(|nodes| nodes.get_mut(node.index as usize))
        {
            *slot = node.clone();
        }
    }

    /// `job-init`, or `reconfigure`'s running jobs: the usage is rebuilt
    /// from these jobs alone.
    pub fn init_jobs(&mut self, jobs: &[Job]) {
        self.initial.clear();
        self.calls.clear();
        self.by_job.clear();
        for job in jobs {
            let seq = self.sequence(job.job_id);
            self.initial.insert(seq, job.clone());
        }
    }

    /// A job call other than `job-init` and `job-fini`.
    pub fn record(&mut self, call: JobCall) {
        let seq = self.sequence(call.job_id());
        self.calls.insert(seq, call);
    }

    /// The next sequence number, noted as one of job `id`'s.
    fn sequence(&mut self, id: u32) -> u64 {
        let seq = self.next;
        self.next += 1;
        self.by_job.entry(id).or_default().push(seq);
        seq
    }

    /// `step-finish`: the step's `step-start` is no longer needed.
    pub fn step_finish(&mut self, job_id: u32, step_id: u32) {
        let Some(seqs) = self.by_job.get_mut(&job_id) else {
            return;
        };
        let calls = &mut self.calls;
        seqs.retain(|seq| {
            let started = matches!(calls.get(seq), Some(JobCall::StepStart(s)) if s.1 == step_id);
            if started {
                calls.remove(seq);
            }
            !started
        });
    }

    /// `job-fini`: the job's calls are no longer needed.
    pub fn fini(&mut self, id: u32) {
        for seq in self.by_job.remove(&id).unwrap_or_default() {
            self.initial.remove(&seq);
            self.calls.remove(&seq);
        }
    }

    /// What to replay, in order: the jobs of the last `job-init` (one call),
    /// then each later call.
    pub fn replay(&self) -> (Vec<Job>, impl Iterator<Item = &JobCall>) {
        (
            self.initial.values().cloned().collect(),
            self.calls.values(),
        )
    }
}

/// How many usage-changing priority calls a journal keeps before the
/// handle saves the plugin's state ([`PriorityJournal::wants_checkpoint`]),
/// which lets it forget them.
pub(crate) const PRIORITY_CHECKPOINT_CALLS: usize = 64;

/// A priority plugin's world.
#[derive(Debug, Default)]
pub(crate) struct PriorityJournal {
    /// The last update of each association since `init`.
    pub associations: Latest<AssociationUpdate>,
    /// The last update of each QOS since `init`.
    pub qos: Latest<QosUpdate>,
    /// The jobs last given to `set`, with the `last_prio` they were given,
    /// until `job-end`.
    pub jobs: BTreeMap<u32, (u32, Job)>,
    /// `job-end` and `calculate` since the state was last saved or restored.
    pub usage: Vec<UsageCall>,
}

/// The last of the updates of each id (an upsert carries the whole record,
/// a removal ends it), in the order of those last updates: bounded by the
/// number of associations or QOS, however often they change.
#[derive(Debug)]
pub(crate) struct Latest<T> {
    by_seq: BTreeMap<u64, T>,
    seq_of: HashMap<u32, u64>,
    next: u64,
}

impl<T> Default for Latest<T> {
    fn default() -> Self {
        Latest {
            by_seq: BTreeMap::new(),
            seq_of: HashMap::new(),
            next: 0,
        }
    }
}

impl<T: Clone> Latest<T> {
    /// Keeps `update` as the last of `id`'s.
    pub fn put(&mut self, id: u32, update: T) {
        if let Some(old) = self.seq_of.insert(id, self.next) {
            self.by_seq.remove(&old);
        }
        self.by_seq.insert(self.next, update);
        self.next += 1;
    }

    /// The kept updates, oldest first.
    pub fn updates(&self) -> Vec<T> {
        self.by_seq.values().cloned().collect()
    }
}

/// A priority call that changes usage.
#[derive(Debug, Clone)]
pub(crate) enum UsageCall {
    JobEnd(Box<Job>),
    Calculate {
        running: Vec<Job>,
        pending: Vec<u32>,
    },
}

impl Journal for PriorityJournal {
    /// Usage before the state was saved or restored is in the state.
    fn state_kept(&mut self) {
        self.usage.clear();
    }
}

impl PriorityJournal {
    /// `update-associations`.
    pub fn associations(&mut self, updates: &[AssociationUpdate]) {
        for update in updates {
            let id = match update {
                AssociationUpdate::Upsert(a) => a.id,
                AssociationUpdate::Remove(id) => *id,
            };
            self.associations.put(id, update.clone());
        }
    }

    /// `update-qos`.
    pub fn qos(&mut self, updates: &[QosUpdate]) {
        for update in updates {
            let id = match update {
                QosUpdate::Upsert(q) => q.id,
                QosUpdate::Remove(id) => *id,
            };
            self.qos.put(id, update.clone());
        }
    }

    /// `job-end`: usage changes and the job is forgotten.
    pub fn job_end(&mut self, job: &Job) {
        self.jobs.remove(&job.job_id);
        self.usage.push(UsageCall::JobEnd(Box::new(job.clone())));
    }

    /// Has the journal kept enough usage calls that the state should be
    /// saved?
    pub fn wants_checkpoint(&self) -> bool {
        self.usage.len() >= PRIORITY_CHECKPOINT_CALLS
    }
}

/// A gres plugin's world beyond its configuration.
#[derive(Debug, Default)]
pub(crate) struct GresJournal {
    /// The last `node-config-load` arguments.
    pub node_config: Option<(
        Vec<crate::bindings::gres::exports::slurm::plugin::gres::GresConfRecord>,
        crate::bindings::gres::exports::slurm::plugin::gres::NodeHardware,
    )>,
    /// The last `step-context`.
    pub step: Option<crate::bindings::types::Step>,
}

impl Journal for GresJournal {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    /// The jobs the journal holds as running or suspended, by id.
    fn running(journal: &SelectJournal) -> Vec<u32> {
        let mut ids: Vec<u32> = journal.initial.values().map(|j| j.job_id).collect();
        ids.extend(journal.calls.values().map(JobCall::job_id));
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    #[test]
    fn ended_jobs_leave_the_select_journal() {
        let mut journal = SelectJournal::default();
        journal.node_init(&[]);
        journal.init_jobs(&[fixtures::job(1), fixtures::job(2)]);
        journal.record(JobCall::Begin(Box::new(fixtures::job(3))));
        journal.record(JobCall::Suspend(Box::new(fixtures::job(3)), false));
        journal.record(JobCall::Begin(Box::new(fixtures::job(4))));
        assert_eq!(running(&journal), [1, 2, 3, 4]);
        journal.fini(3);
        journal.fini(1);
        assert_eq!(running(&journal), [2, 4]);
        assert_eq!(journal.initial.len() + journal.calls.len(), 2);
        let (initial, later) = journal.replay();
        assert_eq!(initial.iter().map(|j| j.job_id).collect::<Vec<_>>(), [2]);
        assert!(matches!(later.collect::<Vec<_>>()[..], [JobCall::Begin(ref j)] if j.job_id == 4));
        journal.node_init(&[]);
        assert!(running(&journal).is_empty());
    }

    /// A step's start is replayed until the step or its job ends.
    #[test]
    fn step_starts_leave_the_journal_with_their_step() {
        let mut journal = SelectJournal::default();
        journal.node_init(&[]);
        let map = fixtures::bitmap(4, [1]);
        journal.record(JobCall::Begin(Box::new(fixtures::job(3))));
        for step in [1, 2] {
            journal.record(JobCall::StepStart(Box::new((
                fixtures::job(3),
                step,
                map.clone(),
            ))));
        }
        journal.step_finish(3, 1);
        journal.step_finish(9, 2);
        let steps: Vec<u32> = journal
            .replay()
            .1
            .filter_map(|call| match call {
                JobCall::StepStart(start) => Some(start.1),
                _ => None,
            })
            .collect();
        assert_eq!(steps, [2]);
        journal.fini(3);
        assert_eq!(journal.replay().1.count(), 0);
    }

    #[test]
    fn updates_keep_the_last_of_each_id() {
        let mut latest = Latest::default();
        for (id, v) in [(1, "a"), (2, "b"), (1, "c"), (3, "d"), (2, "e")] {
            latest.put(id, v);
        }
        assert_eq!(latest.updates(), ["c", "d", "e"]);
    }
}
