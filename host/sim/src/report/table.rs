//! The terminal table: one row per policy.

use super::{duration, PolicyRun};
use crate::metrics::{Measure, Metrics};

/// The table's columns, in order.
const HEADERS: [&str; 9] = [
    "policy",
    "jobs",
    "ran",
    "mean wait",
    "median wait",
    "mean bsld",
    "util",
    "makespan",
    "backfilled",
];

/// One row per run, columns aligned (the policy left, numbers right); a
/// metric with nothing to average shows as `-`; the mean wait is written
/// both as a short duration and exactly, in seconds with one decimal.
/// Measured as `measure` says.
pub fn table(runs: &[PolicyRun<'_>], cluster_cpus: u64, measure: &Measure) -> String {
    let rows: Vec<[String; 9]> = super::all_metrics(runs, cluster_cpus, measure)
        .iter()
        .map(row)
        .collect();
    aligned(HEADERS, &rows)
}

/// A note per run with jobs that never ran, counting them by reason (the
/// reason up to its details: `cannot run on partition p` for a job larger
/// than any node set of its partition, `sbatch refuses it`, `still
/// pending when no event was left`), most frequent first; the per-job
/// reasons are in the CSV's `rejected` column.
pub fn rejections(runs: &[PolicyRun<'_>]) -> Vec<String> {
    runs.iter()
        .filter_map(|run| {
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for reason in run.outcomes.iter().filter_map(|o| o.rejected.as_deref()) {
                let kind = reason.split(['(', ':']).next().unwrap_or(reason).trim();
                match counts.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((kind, 1)),
                }
            }
            let total: usize = counts.iter().map(|(_, n)| n).sum();
            (total > 0).then(|| {
                counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
                let kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
                format!(
                    "{}: {total} of {} jobs never ran: {}",
                    run.policy,
                    run.outcomes.len(),
                    kinds.join(", ")
                )
            })
        })
        .collect()
}

/// The columns of [`agreement`], in order.
const AGREEMENT_HEADERS: [&str; 8] = [
    "policy",
    "jobs",
    "same start",
    "same nodes",
    "same order",
    "mean wait",
    "recorded",
    "makespan",
];

/// How close each run is to the schedule the workload recorded: one row
/// per run that has an [`Agreement`](crate::agreement::Agreement) (jobs
/// started in both; the shares of them started within its tolerance of
/// the recorded start, on the recorded nodes (`-` when the trace names
/// none), and of job pairs started in the recorded order; the simulated
/// and recorded mean wait with the relative error; the makespan's relative
/// error), under a title line; none when no run has one.
pub fn agreement(runs: &[PolicyRun<'_>]) -> Option<String> {
    let percent = |n: usize, of: usize| format!("{:.1}%", n as f64 * 100.0 / of as f64);
    let signed = |e: f64| format!("{:+.1}%", e * 100.0);
    let rows: Vec<[String; 8]> = runs
        .iter()
        .filter_map(|r| {
            let a = r.agreement?;
            Some([
                r.policy.to_owned(),
                a.jobs.to_string(),
                percent(a.same_start, a.jobs),
                if a.with_nodes == 0 {
                    "-".to_owned()
                } else {
                    percent(a.same_nodes, a.with_nodes)
                },
                format!("{:.1}%", a.same_order * 100.0),
                format!(
                    "{} ({})",
                    duration(a.simulated_mean_wait),
                    signed(a.mean_wait_error())
                ),
                duration(a.recorded_mean_wait),
                signed(a.makespan_error()),
            ])
        })
        .collect();
    let tolerance = runs.iter().find_map(|r| r.agreement)?.tolerance;
    Some(format!(
        "agreement with the recorded schedule (same start: within {tolerance} s):\n{}",
        aligned(AGREEMENT_HEADERS, &rows)
    ))
}

/// `headers` and `rows` as aligned columns: the first left, the others
/// right, two spaces apart.
fn aligned<const N: usize>(headers: [&str; N], rows: &[[String; N]]) -> String {
    let mut widths = headers.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i == 0 {
                text.push_str(&format!("{cell:<w$}"));
            } else {
                text.push_str(&format!("  {cell:>w$}"));
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&headers.map(str::to_owned));
    for row in rows {
        line(row);
    }
    out
}

fn row(m: &Metrics) -> [String; 9] {
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".to_owned());
    [
        m.policy.clone(),
        m.jobs.to_string(),
        m.completed.to_string(),
        or_dash(m.mean_wait.map(|w| format!("{} ({w:.1} s)", duration(w)))),
        or_dash(m.median_wait.map(duration)),
        or_dash(m.mean_bounded_slowdown.map(|s| format!("{s:.2}"))),
        or_dash(m.utilization.map(|u| format!("{:.1}%", u * 100.0))),
        or_dash(m.makespan.map(|s| duration(s as f64))),
        m.backfilled.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::JobOutcome;
    use crate::report::tests::two_runs;

    #[test]
    fn one_row_per_policy() {
        let (a, b) = two_runs();
        let runs = [
            PolicyRun {
                policy: "select/linear,priority/basic",
                outcomes: &a,
                agreement: None,
            },
            PolicyRun {
                policy: "bf",
                outcomes: &b,
                agreement: None,
            },
        ];
        // Values from the hand-made schedule (metrics::tests): mean wait
        // 61.25 s, median 77.5 s, bsld 4.2625, utilization 78.75%, makespan
        // 200 s, one backfilled; the second run: waits 0 and 90 s (mean and
        // median 45 s), bsld (1 + (90 + 50) / 50) / 2 = 1.90, 600 CPU-s over
        // 4 CPUs x 150 s = 100%.
        let expected = "\
policy                        jobs  ran       mean wait  median wait  mean bsld    util  makespan  backfilled
select/linear,priority/basic     5    4  1m01s (61.2 s)        1m18s       4.26   78.8%     3m20s           1
bf                               2    2    45s (45.0 s)          45s       1.90  100.0%     2m30s           0
";
        assert_eq!(table(&runs, 4, &Measure::default()), expected);
        assert_eq!(agreement(&runs), None);
        // The hand-made schedule's fifth job needs more than the cluster.
        assert_eq!(
            rejections(&runs),
            ["select/linear,priority/basic: 1 of 5 jobs never ran: 1 needs 8 CPUs, the cluster has 4"]
        );
    }

    #[test]
    fn rejections_are_counted_by_reason() {
        let mut jobs = vec![JobOutcome::default(); 4];
        jobs[0].rejected = Some("cannot run on partition p (error 2014: too big)".into());
        jobs[1].rejected = Some("cannot run on partition p (error 2014: other)".into());
        jobs[2].rejected = Some("sbatch refuses it: too many tasks".into());
        let runs = [PolicyRun {
            policy: "s",
            outcomes: &jobs,
            agreement: None,
        }];
        assert_eq!(
            rejections(&runs),
            ["s: 3 of 4 jobs never ran: 2 cannot run on partition p, 1 sbatch refuses it"]
        );
    }

    #[test]
    fn agreement_rows() {
        let a = crate::agreement::Agreement {
            jobs: 200,
            same_start: 180,
            tolerance: 2,
            mean_start_error: 1.5,
            with_nodes: 200,
            same_nodes: 150,
            same_order: 0.987,
            recorded_mean_wait: 100.0,
            simulated_mean_wait: 103.0,
            recorded_makespan: 1000,
            simulated_makespan: 990,
        };
        let runs = [PolicyRun {
            policy: "p",
            outcomes: &[],
            agreement: Some(&a),
        }];
        let expected = "\
agreement with the recorded schedule (same start: within 2 s):
policy  jobs  same start  same nodes  same order      mean wait  recorded  makespan
p        200       90.0%       75.0%       98.7%  1m43s (+3.0%)     1m40s     -1.0%
";
        assert_eq!(agreement(&runs).as_deref(), Some(expected));
    }
}
