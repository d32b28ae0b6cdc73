//! The comparison of several policies' runs on one workload: a terminal
//! table ([`table`]), JSON ([`json`]), per-job CSV ([`csv`]), a
//! self-contained HTML page with plots ([`html`]), and each policy's
//! schedule as SWF and as a Batsim jobs file ([`schedule`]).

pub mod csv;
pub mod html;
mod plots;
pub mod schedule;
pub mod table;

use serde::Serialize;

use crate::agreement::Agreement;
use crate::metrics::{self, Measure, Metrics};
use crate::outcome::JobOutcome;

/// One policy's run: its label, one outcome per job, and its agreement
/// with the schedule the workload recorded, if it recorded one.
#[derive(Debug, Clone, Copy)]
pub struct PolicyRun<'a> {
    pub policy: &'a str,
    pub outcomes: &'a [JobOutcome],
    pub agreement: Option<&'a Agreement>,
}

/// What every report shows about the experiment.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The workload's source (a path, `synthetic(seed=...)`).
    pub workload: &'a str,
    /// The cluster's CPU count (the utilization denominator).
    pub cluster_cpus: u64,
    /// The workload's notes (replay choices applied, cluster derived).
    pub notes: &'a [String],
    /// How the runs are measured (bounded slowdown's threshold, warm-up).
    pub measure: Measure,
}

/// The metrics of each run, in order.
pub fn all_metrics(runs: &[PolicyRun<'_>], cluster_cpus: u64, measure: &Measure) -> Vec<Metrics> {
    runs.iter()
        .map(|r| metrics::compute(r.policy, r.outcomes, cluster_cpus, measure))
        .collect()
}

#[derive(Serialize)]
struct JsonReport<'a> {
    workload: &'a str,
    cluster_cpus: u64,
    notes: &'a [String],
    policies: Vec<Metrics>,
    /// One entry per policy whose run has an agreement; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    agreement: Vec<PolicyAgreement<'a>>,
}

#[derive(Serialize)]
struct PolicyAgreement<'a> {
    policy: &'a str,
    #[serde(flatten)]
    agreement: &'a Agreement,
    mean_wait_error: f64,
    makespan_error: f64,
}

/// The metrics as pretty-printed JSON: `{"workload", "cluster_cpus",
/// "notes", "policies": [metrics...]}`, a metric with nothing to average
/// as `null`; each policy's metrics hold its breakdowns by user,
/// partition and size class. When the workload recorded its schedule,
/// `"agreement": [{"policy", ...}]` holds each run's [`Agreement`] with
/// its relative errors `mean_wait_error` and `makespan_error`.
pub fn json(context: &Context<'_>, runs: &[PolicyRun<'_>]) -> String {
    let report = JsonReport {
        workload: context.workload,
        cluster_cpus: context.cluster_cpus,
        notes: context.notes,
        policies: all_metrics(runs, context.cluster_cpus, &context.measure),
        agreement: runs
            .iter()
            .filter_map(|r| {
                r.agreement.map(|a| PolicyAgreement {
                    policy: r.policy,
                    agreement: a,
                    mean_wait_error: a.mean_wait_error(),
                    makespan_error: a.makespan_error(),
                })
            })
            .collect(),
    };
    // Plain data with string keys always serialises.
    serde_json::to_string_pretty(&report).unwrap_or_default()
}

/// Seconds as a short human duration (`45s`, `12m05s`, `3h20m`, `2d04h`).
pub fn duration(seconds: f64) -> String {
    let s = seconds.round() as i64;
    match s {
        _ if s < 60 => format!("{s}s"),
        _ if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ if s < 86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::metrics::tests::{hand_made, outcome};

    pub(crate) fn two_runs() -> (Vec<JobOutcome>, Vec<JobOutcome>) {
        let other = vec![
            outcome(1, 0, Some(0), Some(100), 4),
            outcome(2, 10, Some(100), Some(150), 4),
        ];
        (hand_made(), other)
    }

    #[test]
    fn json_report() {
        let (a, b) = two_runs();
        let runs = [
            PolicyRun {
                policy: "fifo",
                outcomes: &a,
                agreement: None,
            },
            PolicyRun {
                policy: "bf",
                outcomes: &b,
                agreement: None,
            },
        ];
        let notes = vec!["a note".to_owned()];
        let context = Context {
            workload: "w.swf",
            cluster_cpus: 4,
            notes: &notes,
            measure: Measure::default(),
        };
        let value: serde_json::Value = serde_json::from_str(&json(&context, &runs)).unwrap();
        assert_eq!(value["workload"], "w.swf");
        assert_eq!(value["cluster_cpus"], 4);
        assert_eq!(value["notes"][0], "a note");
        // The hand-made schedule's known answers (metrics::tests).
        assert_eq!(value["policies"][0]["policy"], "fifo");
        assert_eq!(value["policies"][0]["mean_wait"], 61.25);
        assert_eq!(value["policies"][0]["makespan"], 200);
        // Second run: waits 0 and 90, median 45; work 100x4 + 50x4 = 600
        // CPU-s over 4 CPUs x 150 s = 1.0.
        assert_eq!(value["policies"][1]["median_wait"], 45.0);
        assert_eq!(value["policies"][1]["utilization"], 1.0);
    }

    #[test]
    fn durations() {
        assert_eq!(duration(45.2), "45s");
        assert_eq!(duration(725.0), "12m05s");
        assert_eq!(duration(12_000.0), "3h20m");
        assert_eq!(duration(187_200.0), "2d04h");
    }
}
