//! A workload: the jobs of a trace in submit order, independent of the
//! format they were read from (SWF, `sacct --parsable2`, the synthetic
//! generator).

use serde::Serialize;

/// How a job ended in the original trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum TraceStatus {
    #[default]
    Completed,
    Failed,
    Cancelled,
    /// The trace does not say (SWF status -1, unknown sacct state).
    Unknown,
}

/// One job of a workload. Times are seconds relative to the workload's
/// start (`Workload::start_time`). The default is a completed job of
/// nothing (builders fill in what they know).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct TraceJob {
    /// Job number in the trace (unique within a workload).
    pub id: u32,
    /// Submit time.
    pub submit: i64,
    /// Actual run time in the trace (what the job will run for if it is
    /// not killed at its limit).
    pub run_time: i64,
    /// Requested time limit in seconds; none when the trace has no estimate.
    pub time_limit: Option<i64>,
    /// Requested nodes; none when the trace gives only processors.
    pub nodes: Option<u32>,
    /// Requested processors (CPUs) in total.
    pub cpus: u32,
    /// Requested memory per node in MB, when known.
    pub memory_mb_per_node: Option<u64>,
    /// Requested GPUs in total (0 for traces without GPUs).
    pub gpus: u32,
    pub user: u32,
    pub group: u32,
    pub account: Option<String>,
    pub partition: Option<String>,
    pub status: TraceStatus,
    /// When and where the job ran on the machine the trace was recorded
    /// on, when the trace says: what [`crate::agreement`] compares a
    /// simulated schedule with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Recorded>,
}

/// Where a trace job ran on the recorded machine.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Recorded {
    /// Start time, relative to the workload's start like `submit`.
    pub start: i64,
    /// The nodes it ran on (a hostlist such as `n[1-2]`), when the trace
    /// names them (sacct's `NodeList`; SWF has no node names).
    pub nodes: Option<String>,
}

/// The jobs of one trace, sorted by submit time then id.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Workload {
    /// Where the jobs came from (a path, or `synthetic(seed=...)`).
    pub source: String,
    /// Unix time of the trace's time zero (SWF `UnixStartTime`), 0 if unknown.
    pub start_time: i64,
    /// Cluster size the trace declares (SWF `MaxNodes`, `MaxProcs`), if any.
    pub max_nodes: Option<u32>,
    pub max_procs: Option<u32>,
    pub jobs: Vec<TraceJob>,
    /// What the reader decided on the way (hazard choices applied, lines
    /// skipped and why), for the report.
    pub notes: Vec<String>,
}
