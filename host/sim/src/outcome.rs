//! What happened to each job in one simulated schedule.

use serde::{Deserialize, Serialize};

/// One job's fate in a simulation. Times are seconds relative to the
/// workload's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
}
