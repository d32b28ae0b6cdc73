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
//!   that ended (`job-fini`), so the plugin rebuilds the same usage.
//! * priority: the jobs given to `set` and not ended, the association and
//!   QOS updates, and the usage-changing calls (`job-end`, `calculate`)
//!   since the last state saved or restored.
//! * gres: the last `node-config-load` and `step-context`.
//!
//! task plugins keep nothing beyond their configuration: a restarted task
//! plugin gets `init` only.

use std::collections::BTreeMap;

use crate::bindings::priority::exports::slurm::plugin::priority::{AssociationUpdate, QosUpdate};
use crate::bindings::types::{Job, Node};
use crate::plugin::Journal;

/// A select plugin's world.
#[derive(Debug, Default)]
pub(crate) struct SelectJournal {
    /// The node table, as `node-init` gave it and node updates changed it.
    pub nodes: Option<Vec<Node>>,
    /// The job calls since `node-init`, in order, less those of ended jobs.
    pub jobs: Vec<JobCall>,
}

/// One journaled job call of a select plugin.
#[derive(Debug, Clone)]
pub(crate) enum JobCall {
    /// `job-init` or the running list of `reconfigure`.
    Init(Vec<Job>),
    Begin(Box<Job>),
    Suspend(Box<Job>, bool),
    Resume(Box<Job>, bool),
    Resized(Box<Job>, u32),
    Expand(Box<(Job, Job)>),
}

impl JobCall {
    /// Does this call concern job `id` alone (so it goes when `id` ends)?
    fn only_about(&self, id: u32) -> bool {
        match self {
            JobCall::Init(_) => false,
            JobCall::Begin(j) | JobCall::Suspend(j, _) | JobCall::Resume(j, _) => j.job_id == id,
            JobCall::Resized(j, _) => j.job_id == id,
            // The moved resources belong to `to` from then on.
            JobCall::Expand(jobs) => jobs.1.job_id == id,
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
        self.jobs.clear();
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
        self.jobs = vec![JobCall::Init(jobs.to_vec())];
    }

    /// A job call other than `job-fini`.
    pub fn record(&mut self, call: JobCall) {
        self.jobs.push(call);
    }

    /// `job-fini`: the job's calls are no longer needed.
    pub fn fini(&mut self, id: u32) {
        self.jobs.retain(|call| !call.only_about(id));
        for call in &mut self.jobs {
            if let JobCall::Init(jobs) = call {
                jobs.retain(|j| j.job_id != id);
            }
        }
    }
}

/// How many usage-changing priority calls a journal keeps before the
/// handle saves the plugin's state ([`PriorityJournal::wants_checkpoint`]),
/// which lets it forget them.
pub(crate) const PRIORITY_CHECKPOINT_CALLS: usize = 64;

/// A priority plugin's world.
#[derive(Debug, Default)]
pub(crate) struct PriorityJournal {
    /// Association and QOS updates since `init`, in order.
    pub updates: Vec<PriorityUpdate>,
    /// The jobs last given to `set`, until `job-end`.
    pub jobs: BTreeMap<u32, Job>,
    /// `job-end` and `calculate` since the state was last saved or restored.
    pub usage: Vec<UsageCall>,
}

/// An association or QOS update.
#[derive(Debug, Clone)]
pub(crate) enum PriorityUpdate {
    Associations(Vec<AssociationUpdate>),
    Qos(Vec<QosUpdate>),
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
        let mut ids: Vec<u32> = Vec::new();
        for call in &journal.jobs {
            match call {
                JobCall::Init(jobs) => ids.extend(jobs.iter().map(|j| j.job_id)),
                JobCall::Begin(j) => ids.push(j.job_id),
                JobCall::Expand(jobs) => ids.push(jobs.1.job_id),
                _ => {}
            }
        }
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
        assert_eq!(journal.jobs.len(), 2, "{:?}", journal.jobs);
        journal.node_init(&[]);
        assert!(running(&journal).is_empty());
    }
}
