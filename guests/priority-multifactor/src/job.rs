//! What the plugin reads of a job, borrowed from the contract's record.

/// Where a job is in its life, as far as priorities and usage go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    Pending,
    Running,
    Suspended,
    /// Completed, cancelled, failed, timed out, ...: `end_time` is final.
    Finished,
}

impl RunState {
    /// Running or suspended: the job holds resources.
    pub fn is_active(self) -> bool {
        matches!(self, RunState::Running | RunState::Suspended)
    }
}

/// A job as the formula and the usage accounting see it.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView<'a> {
    pub job_id: u32,
    pub user_id: u32,
    pub account: Option<&'a str>,
    /// 0 when accounting is off.
    pub assoc_id: u32,
    /// Indices into the partition table, in request order.
    pub partitions: &'a [u32],
    pub qos: Option<&'a str>,
    pub state: RunState,
    /// Current priority; 0 = held.
    pub priority: u32,
    /// The priority was set explicitly and must be kept.
    pub direct_priority: bool,
    /// Plain signed site factor.
    pub site_factor: i64,
    /// Plain signed nice.
    pub nice: i32,
    /// Time limit in minutes, when the job has one.
    pub time_limit: Option<u32>,
    pub start_time: i64,
    pub end_time: i64,
    pub submit_time: i64,
    pub begin_time: i64,
    /// 0 until the job accrues age.
    pub accrue_time: i64,
    pub min_nodes: u32,
    /// CPUs for the job size factor: allocated when known, else the
    /// maximum requested, else the minimum.
    pub cpus: u32,
    /// Counts for the TRES factors: allocated when the job has an
    /// allocation, else requested.
    pub tres: Vec<(&'a str, u64)>,
    /// Allocated TRES (usage per TRES and run-seconds).
    pub tres_allocated: Vec<(&'a str, u64)>,
    /// Billable TRES charged per second of run time: the job's
    /// `billable-tres`, else its allocated CPU count.
    pub billable: f64,
}
