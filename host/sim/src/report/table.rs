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
/// metric with nothing to average shows as `-`. Measured as `measure` says.
pub fn table(runs: &[PolicyRun<'_>], cluster_cpus: u64, measure: &Measure) -> String {
    let rows: Vec<[String; 9]> = super::all_metrics(runs, cluster_cpus, measure)
        .iter()
        .map(row)
        .collect();
    let mut widths = HEADERS.map(str::len);
    for row in &rows {
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
    line(&HEADERS.map(str::to_owned));
    for row in &rows {
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
        or_dash(m.mean_wait.map(duration)),
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
    use crate::report::tests::two_runs;

    #[test]
    fn one_row_per_policy() {
        let (a, b) = two_runs();
        let runs = [
            PolicyRun {
                policy: "select/linear,priority/basic",
                outcomes: &a,
            },
            PolicyRun {
                policy: "bf",
                outcomes: &b,
            },
        ];
        // Values from the hand-made schedule (metrics::tests): mean wait
        // 61.25 s, median 77.5 s, bsld 4.2625, utilization 78.75%, makespan
        // 200 s, one backfilled; the second run: waits 0 and 90 s (mean and
        // median 45 s), bsld (1 + (90 + 50) / 50) / 2 = 1.90, 600 CPU-s over
        // 4 CPUs x 150 s = 100%.
        let expected = "\
policy                        jobs  ran  mean wait  median wait  mean bsld    util  makespan  backfilled
select/linear,priority/basic     5    4      1m01s        1m18s       4.26   78.8%     3m20s           1
bf                               2    2        45s          45s       1.90  100.0%     2m30s           0
";
        assert_eq!(table(&runs, 4, &Measure::default()), expected);
    }
}
