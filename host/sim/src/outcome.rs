//! What happened to each job in one simulated schedule.

use serde::{Deserialize, Serialize};

/// One job's fate in a simulation. Times are seconds relative to the
/// workload's start. The request's fields (user to trace run time) came
/// later than the others: results saved before them read as 0 / none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobOutcome {
    pub id: u32,
    pub submit: i64,
    /// None when the job never started (the simulation ended first, or no
    /// node of the cluster can ever hold it).
    pub start: Option<i64>,
    pub end: Option<i64>,
    /// Nodes and CPUs the job was given.
    pub nodes: u32,
    pub cpus: u32,
    /// Names of the nodes (hostlist form), empty when not started.
    pub node_list: String,
    /// Started by the backfill pass rather than the main pass.
    pub backfilled: bool,
    /// Killed at its time limit (its trace run time was longer).
    pub killed_at_limit: bool,
    /// Why the job never ran, when it did not.
    pub rejected: Option<String>,
    /// The trace's user and group ids.
    #[serde(default)]
    pub user: u32,
    #[serde(default)]
    pub group: u32,
    /// The partition the trace names, if any.
    #[serde(default)]
    pub partition: Option<String>,
    /// What the job asked for: CPUs in total, and nodes when the trace
    /// gives them (`cpus` and `nodes` above are what it was given).
    #[serde(default)]
    pub requested_cpus: u32,
    #[serde(default)]
    pub requested_nodes: Option<u32>,
    /// The trace's time estimate in seconds, if it has one.
    #[serde(default)]
    pub time_limit: Option<i64>,
    /// The trace's run time in seconds.
    #[serde(default)]
    pub trace_run_time: i64,
}
