//! How close a simulated schedule is to the one the trace recorded: job by
//! job (start times, nodes, start order) and on aggregates (mean wait,
//! makespan), for the jobs that started in both.
//!
//! The recorded run of a job is what its trace says ([`Recorded`]: sacct's
//! `Start` and `NodeList`, SWF's wait); a workload without any (synthetic,
//! reshaped by `--load-scale` or `--perfect-estimates`) has no agreement.

use serde::{Deserialize, Serialize};

use crate::outcome::JobOutcome;
use crate::workload::{Recorded, Workload};

/// Seconds two start times may differ by and still count as the same
/// start: slurmctld acts on events up to a second or two after they happen
/// (a job's end reaches it from slurmd, the scheduler runs on its own
/// thread), which a simulation on whole seconds does not reproduce.
pub const START_TOLERANCE: i64 = 2;

/// The agreement of one simulated schedule with the recorded one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Jobs that started both in the trace and in the simulation: what
    /// every figure below is over.
    pub jobs: usize,
    /// Jobs whose starts differ by at most `tolerance` seconds.
    pub same_start: usize,
    pub tolerance: i64,
    /// Mean of |simulated start - recorded start|, in seconds.
    pub mean_start_error: f64,
    /// Jobs whose trace names their nodes, and those of them the
    /// simulation put on exactly the same nodes.
    pub with_nodes: usize,
    pub same_nodes: usize,
    /// Of the pairs of jobs the trace started at different times (more
    /// than `tolerance` apart), the share the simulation started in the
    /// same order (1 when there is no such pair).
    pub same_order: f64,
    /// Mean wait (start - submit) in seconds, recorded and simulated.
    pub recorded_mean_wait: f64,
    pub simulated_mean_wait: f64,
    /// The latest end, recorded (start plus the trace's run time) and
    /// simulated, in seconds from the workload's start.
    pub recorded_makespan: i64,
    pub simulated_makespan: i64,
}

impl Agreement {
    /// (simulated - recorded) / recorded mean wait; 0 when both are 0.
    #[must_use]
    pub fn mean_wait_error(&self) -> f64 {
        relative(self.simulated_mean_wait, self.recorded_mean_wait)
    }

    /// (simulated - recorded) / recorded makespan; 0 when both are 0.
    #[must_use]
    pub fn makespan_error(&self) -> f64 {
        relative(
            self.simulated_makespan as f64,
            self.recorded_makespan as f64,
        )
    }
}

fn relative(simulated: f64, recorded: f64) -> f64 {
    if recorded == 0.0 {
        if simulated == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (simulated - recorded) / recorded
    }
}

/// The agreement of `outcomes` (one per job of `workload`, in its order, as
/// [`crate::engine::SimResult`] holds them) with the runs `workload`
/// recorded; none when no job has both a recorded and a simulated start.
///
/// Node lists are compared as sets of node names (`n[1-2]` and `n1,n2` are
/// the same); a recorded list that is not a valid hostlist counts as
/// different.
#[must_use]
pub fn agreement(workload: &Workload, outcomes: &[JobOutcome]) -> Option<Agreement> {
    // (recorded run, simulated outcome, simulated start, simulated end,
    // recorded end)
    let pairs: Vec<(&Recorded, &JobOutcome, i64, i64, i64)> = workload
        .jobs
        .iter()
        .zip(outcomes)
        .filter_map(|(job, outcome)| {
            let recorded = job.recorded.as_ref()?;
            let start = outcome.start?;
            let end = outcome.end.unwrap_or(start + job.run_time);
            Some((recorded, outcome, start, end, recorded.start + job.run_time))
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let jobs = pairs.len();
    let mut same_start = 0;
    let mut start_error = 0.0;
    let (mut with_nodes, mut same_nodes) = (0, 0);
    let (mut recorded_wait, mut simulated_wait) = (0.0, 0.0);
    let (mut recorded_makespan, mut simulated_makespan) = (i64::MIN, i64::MIN);
    for &(recorded, outcome, start, end, recorded_end) in &pairs {
        let error = (start - recorded.start).abs();
        start_error += error as f64;
        if error <= START_TOLERANCE {
            same_start += 1;
        }
        if let Some(nodes) = &recorded.nodes {
            with_nodes += 1;
            if same_node_set(nodes, &outcome.node_list) {
                same_nodes += 1;
            }
        }
        recorded_wait += (recorded.start - outcome.submit) as f64;
        simulated_wait += (start - outcome.submit) as f64;
        recorded_makespan = recorded_makespan.max(recorded_end);
        simulated_makespan = simulated_makespan.max(end);
    }
    let starts: Vec<(i64, i64)> = pairs
        .iter()
        .map(|&(recorded, _, start, _, _)| (recorded.start, start))
        .collect();
    let n = jobs as f64;
    Some(Agreement {
        jobs,
        same_start,
        tolerance: START_TOLERANCE,
        mean_start_error: start_error / n,
        with_nodes,
        same_nodes,
        same_order: same_order(&starts, START_TOLERANCE),
        recorded_mean_wait: recorded_wait / n,
        simulated_mean_wait: simulated_wait / n,
        recorded_makespan,
        simulated_makespan,
    })
}

/// Whether two hostlists name the same nodes.
fn same_node_set(a: &str, b: &str) -> bool {
    match (slurm::hostlist::expand(a), slurm::hostlist::expand(b)) {
        (Ok(mut a), Ok(mut b)) => {
            a.sort_unstable();
            b.sort_unstable();
            a == b
        }
        _ => false,
    }
}

/// Of the pairs `(recorded, simulated)` whose recorded values are more
/// than `tolerance` apart, the share whose simulated values are in the
/// same order or equal (only a strict reversal disagrees). In
/// O(n log n): the pairs sorted by recorded value, each one counts the
/// earlier-recorded ones (by more than `tolerance`) simulated strictly
/// later, with a Fenwick tree over the simulated values.
fn same_order(starts: &[(i64, i64)], tolerance: i64) -> f64 {
    let mut by_recorded = starts.to_vec();
    by_recorded.sort_unstable();
    let mut simulated: Vec<i64> = starts.iter().map(|&(_, s)| s).collect();
    simulated.sort_unstable();
    simulated.dedup();
    let rank = |s: i64| simulated.partition_point(|&v| v < s);
    let mut tree = vec![0u64; simulated.len() + 1];
    let mut inserted = 0u64;
    let (mut comparable, mut reversed) = (0u64, 0u64);
    let mut next = 0;
    for &(recorded, sim) in &by_recorded {
        // Insert every job recorded more than `tolerance` before this one.
        while by_recorded[next].0 < recorded - tolerance {
            let mut i = rank(by_recorded[next].1) + 1;
            while i < tree.len() {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
            inserted += 1;
            next += 1;
        }
        // Of those, the ones simulated at or before `sim` keep the order.
        let mut at_or_before = 0;
        let mut i = rank(sim) + 1;
        while i > 0 {
            at_or_before += tree[i];
            i -= i & i.wrapping_neg();
        }
        comparable += inserted;
        reversed += inserted - at_or_before;
    }
    if comparable == 0 {
        1.0
    } else {
        1.0 - reversed as f64 / comparable as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::TraceJob;

    fn job(id: u32, submit: i64, run: i64, start: i64, nodes: &str) -> TraceJob {
        TraceJob {
            id,
            submit,
            run_time: run,
            recorded: Some(Recorded {
                start,
                nodes: Some(nodes.into()),
            }),
            ..TraceJob::default()
        }
    }

    fn outcome(id: u32, submit: i64, start: Option<i64>, run: i64, nodes: &str) -> JobOutcome {
        JobOutcome {
            id,
            submit,
            start,
            end: start.map(|s| s + run),
            node_list: nodes.into(),
            ..JobOutcome::default()
        }
    }

    #[test]
    fn compares_starts_nodes_order_and_aggregates() {
        let workload = Workload {
            jobs: vec![
                job(1, 0, 100, 0, "n[1-2]"),
                job(2, 0, 50, 100, "n3"),
                job(3, 10, 30, 110, "n4"),
                job(4, 20, 10, 500, "n1"),
            ],
            ..Workload::default()
        };
        let outcomes = [
            outcome(1, 0, Some(1), 100, "n1,n2"),
            outcome(2, 0, Some(130), 50, "n3"),
            outcome(3, 10, Some(110), 30, "n1"),
            outcome(4, 20, None, 10, ""),
        ];
        let a = agreement(&workload, &outcomes).expect("three jobs started in both");
        assert_eq!(
            (a.jobs, a.same_start, a.with_nodes, a.same_nodes),
            (3, 2, 3, 2)
        );
        assert!((a.mean_start_error - 31.0 / 3.0).abs() < 1e-9);
        // Pairs (1,2), (1,3), (2,3) were recorded apart by more than 2 s;
        // the simulation reversed (2,3).
        assert!((a.same_order - 2.0 / 3.0).abs() < 1e-9);
        assert!((a.recorded_mean_wait - 200.0 / 3.0).abs() < 1e-9);
        assert!((a.simulated_mean_wait - 231.0 / 3.0).abs() < 1e-9);
        assert_eq!((a.recorded_makespan, a.simulated_makespan), (150, 180));
        assert!((a.makespan_error() - 0.2).abs() < 1e-9);
    }

    #[test]
    fn starts_within_the_tolerance_are_neither_ordered_nor_apart() {
        // Recorded 0 and 2 (within the tolerance): not a comparable pair.
        let a = same_order(&[(0, 5), (2, 1), (10, 20)], 2);
        assert!((a - 1.0).abs() < 1e-9);
        assert!((same_order(&[(0, 9), (10, 1)], 2)).abs() < 1e-9);
        assert!((same_order(&[(0, 3), (10, 3)], 2) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_workload_without_recorded_runs_has_no_agreement() {
        let workload = Workload {
            jobs: vec![TraceJob::default()],
            ..Workload::default()
        };
        assert!(agreement(&workload, &[outcome(0, 0, Some(0), 1, "n1")]).is_none());
    }
}
