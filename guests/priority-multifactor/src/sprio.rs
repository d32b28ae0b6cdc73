//! The rows of `get-priority-factors-list` (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_get_priority_factors_list`): which jobs `sprio`
//! shows, and the request's filters.
//!
//! The factors are the ones the job's last computation stored (see
//! `Multifactor::factors_list`); who is listed is decided at the request.
//! One row per job and partition, for jobs that are pending (or running or
//! suspended with CALCULATE_RUNNING), eligible (begin time reached, or
//! submit time with ACCRUE_ALWAYS), not held and in at least one
//! partition. Slurm also hides jobs from users `PrivateData=jobs` does not
//! let see them; the contract carries no PrivateData, so every job is
//! visible to every uid.

use crate::config::Flags;
use crate::factors::Factors;
use crate::job::{JobView, RunState};

/// The request's filters; an empty list accepts everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    pub job_ids: &'a [u32],
    pub user_ids: &'a [u32],
    pub partitions: &'a [String],
}

impl Filter<'_> {
    /// The job passes the job id and user id filters.
    pub fn job(&self, job: &JobView<'_>) -> bool {
        (self.job_ids.is_empty() || self.job_ids.contains(&job.job_id))
            && (self.user_ids.is_empty() || self.user_ids.contains(&job.user_id))
    }

    /// A row of partition `name` passes the partition filter.
    pub fn partition(&self, name: &str) -> bool {
        self.partitions.is_empty() || self.partitions.iter().any(|p| p == name)
    }
}

/// Whether `job` gets rows at `now` (before the request's filters). A
/// begin time of 0 (no `--begin`) counts as reached.
pub fn listed(job: &JobView<'_>, flags: Flags, now: i64) -> bool {
    let state_ok = job.state == RunState::Pending
        || (flags.contains(Flags::CALCULATE_RUNNING) && job.state.is_active());
    let eligible_from = if flags.contains(Flags::ACCRUE_ALWAYS) {
        job.submit_time
    } else {
        job.begin_time
    };
    state_ok && job.priority != 0 && eligible_from <= now && !job.partitions.is_empty()
}

/// One row: a job in one partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub job_id: u32,
    pub user_id: u32,
    pub account: Option<String>,
    pub partition: String,
    pub qos: Option<String>,
    /// The explicit priority of a job that has one (the factors are then 0).
    pub direct: Option<u32>,
    /// Weighted factors (TRES in the configuration's order).
    pub weighted: Factors,
    pub site: i64,
    pub nice: i32,
    /// The priority in this partition.
    pub priority: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::factors::tests::{vector_job, NOW};

    #[test]
    fn who_is_listed() {
        let none = Flags::default();
        let job = vector_job();
        assert!(listed(&job, none, NOW));
        let held = JobView {
            priority: 0,
            ..vector_job()
        };
        assert!(!listed(&held, none, NOW), "held jobs are not listed");
        let later = JobView {
            begin_time: NOW + 60,
            ..vector_job()
        };
        assert!(!listed(&later, none, NOW), "not eligible yet");
        assert!(
            listed(&later, Flags::ACCRUE_ALWAYS, NOW),
            "submit time counts"
        );
        let running = JobView {
            state: RunState::Running,
            ..vector_job()
        };
        assert!(!listed(&running, none, NOW));
        assert!(listed(&running, Flags::CALCULATE_RUNNING, NOW));
        let nowhere = JobView {
            partitions: &[],
            ..vector_job()
        };
        assert!(!listed(&nowhere, none, NOW));
    }

    #[test]
    fn filters() {
        let parts = vec!["debug".to_string()];
        let f = Filter {
            job_ids: &[1, 2],
            user_ids: &[1000],
            partitions: &parts,
        };
        assert!(f.job(&vector_job()));
        assert!(!f.job(&JobView {
            job_id: 3,
            ..vector_job()
        }));
        assert!(!f.job(&JobView {
            user_id: 7,
            ..vector_job()
        }));
        assert!(f.partition("debug") && !f.partition("gpu"));
        assert!(Filter::default().partition("any"));
    }
}
