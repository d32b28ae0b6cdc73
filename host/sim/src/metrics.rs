//! The standard schedule metrics of one policy's run, and the time series
//! the report plots. Everything is computed from the jobs' submit, start
//! and end times ([`JobOutcome`]) and the cluster's CPU count.
//!
//! Definitions (times in seconds; only jobs that started and ended count
//! towards waits, slowdowns and utilization):
//!
//! - wait = start - submit; the median of an even count is the mean of the
//!   two middle values;
//! - bounded slowdown = max(1, (wait + run) / max(run, 10)), run = end -
//!   start: the slowdown of Feitelson, Rudolph, Schwiegelshohn, Sevcik and
//!   Wong, "Theory and Practice in Parallel Job Scheduling" (JSSPP 1997),
//!   with their 10-second threshold so that very short jobs do not dominate
//!   the mean;
//! - utilization = sum(run x CPUs) / (cluster CPUs x (last end - first
//!   submit)), the formula of the traces' README (`MaxProcs` there is the
//!   cluster's CPU count here); the first submit is over all jobs;
//! - makespan = last end - first submit.
//!
//! A metric with nothing to average (no job started) is `None`.

use serde::Serialize;

use crate::outcome::JobOutcome;

/// Bounded slowdown's threshold in seconds.
pub const BOUNDED_SLOWDOWN_THRESHOLD: i64 = 10;

/// One policy's numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    pub policy: String,
    /// All jobs of the run.
    pub jobs: usize,
    /// Jobs that started and ended.
    pub completed: usize,
    /// Jobs that never started (see [`JobOutcome::rejected`]).
    pub never_started: usize,
    pub backfilled: usize,
    pub killed_at_limit: usize,
    pub mean_wait: Option<f64>,
    pub median_wait: Option<f64>,
    pub max_wait: Option<i64>,
    pub mean_bounded_slowdown: Option<f64>,
    pub utilization: Option<f64>,
    pub makespan: Option<i64>,
}

/// The metrics of `outcomes` on a cluster of `cluster_cpus` CPUs.
pub fn compute(policy: &str, outcomes: &[JobOutcome], cluster_cpus: u64) -> Metrics {
    let ran: Vec<(i64, i64, u32)> = outcomes
        .iter()
        .filter_map(|o| Some((o.start? - o.submit, o.end? - o.start?, o.cpus)))
        .collect();
    let mut waits: Vec<i64> = ran.iter().map(|&(wait, _, _)| wait).collect();
    waits.sort_unstable();
    let count = waits.len() as f64;
    let mean = |sum: f64| (!waits.is_empty()).then(|| sum / count);
    let median = (!waits.is_empty()).then(|| {
        let mid = waits.len() / 2;
        if waits.len() % 2 == 1 {
            waits[mid] as f64
        } else {
            (waits[mid - 1] + waits[mid]) as f64 / 2.0
        }
    });
    let slowdowns: f64 = ran
        .iter()
        .map(|&(wait, run, _)| bounded_slowdown(wait, run))
        .sum();
    let first_submit = outcomes.iter().map(|o| o.submit).min();
    let last_end = outcomes.iter().filter_map(|o| o.end).max();
    let makespan = first_submit.zip(last_end).map(|(first, last)| last - first);
    let work: f64 = ran
        .iter()
        .map(|&(_, run, cpus)| run as f64 * f64::from(cpus))
        .sum();
    let utilization = makespan
        .filter(|&m| m > 0 && cluster_cpus > 0)
        .map(|m| work / (cluster_cpus as f64 * m as f64));
    Metrics {
        policy: policy.to_owned(),
        jobs: outcomes.len(),
        completed: ran.len(),
        never_started: outcomes.iter().filter(|o| o.start.is_none()).count(),
        backfilled: outcomes.iter().filter(|o| o.backfilled).count(),
        killed_at_limit: outcomes.iter().filter(|o| o.killed_at_limit).count(),
        mean_wait: mean(waits.iter().map(|&w| w as f64).sum()),
        median_wait: median,
        max_wait: waits.last().copied(),
        mean_bounded_slowdown: mean(slowdowns),
        utilization,
        makespan,
    }
}

/// Bounded slowdown of a job that waited `wait` and ran `run` seconds.
pub fn bounded_slowdown(wait: i64, run: i64) -> f64 {
    let response = (wait + run) as f64;
    (response / run.max(BOUNDED_SLOWDOWN_THRESHOLD) as f64).max(1.0)
}

/// A step function of time: `points[i].1` holds from `points[i].0` until
/// the next point's time (the last value until the end of the run).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub points: Vec<(i64, f64)>,
}

impl Series {
    /// A step function from `(time, change)` events: the value at a time
    /// is the sum of the changes up to it, times `scale`; one point per
    /// distinct event time, in time order.
    fn from_changes(mut events: Vec<(i64, i64)>, scale: f64) -> Series {
        events.sort_unstable_by_key(|&(t, _)| t);
        let mut points: Vec<(i64, f64)> = Vec::new();
        let mut level = 0i64;
        for (t, change) in events {
            level += change;
            let value = level as f64 * scale;
            match points.last_mut() {
                Some(last) if last.0 == t => last.1 = value,
                _ => points.push((t, value)),
            }
        }
        Series { points }
    }

    /// The time-weighted mean of the function over `buckets` equal
    /// intervals from the first point to `end`, as `(interval start, mean)`:
    /// what a plot of a long run shows. Empty when the series is empty or
    /// `end` is not after the first point.
    pub fn bucket_means(&self, end: i64, buckets: usize) -> Vec<(i64, f64)> {
        let Some(&(start, _)) = self.points.first() else {
            return Vec::new();
        };
        if end <= start || buckets == 0 {
            return Vec::new();
        }
        let span = (end - start) as f64;
        let width = span / buckets as f64;
        let mut area = vec![0.0f64; buckets];
        for (i, &(t, value)) in self.points.iter().enumerate() {
            let until = self.points.get(i + 1).map_or(end, |n| n.0).min(end);
            let (mut a, b) = ((t - start) as f64, (until - start) as f64);
            // Walk the buckets by index: recomputing the bucket from `a`
            // could land just below a boundary by rounding and never advance.
            let mut bucket = ((a / width) as usize).min(buckets - 1);
            while a < b {
                let stop = if bucket == buckets - 1 {
                    b
                } else {
                    b.min((bucket + 1) as f64 * width)
                };
                if stop > a {
                    area[bucket] += value * (stop - a);
                    a = stop;
                }
                bucket += 1;
            }
        }
        area.iter()
            .enumerate()
            .map(|(i, a)| (start + (i as f64 * width) as i64, a / width))
            .collect()
    }
}

/// Fraction of the cluster's CPUs busy over time (0 to 1).
pub fn utilization_series(outcomes: &[JobOutcome], cluster_cpus: u64) -> Series {
    let mut events = Vec::new();
    for o in outcomes {
        if let (Some(start), Some(end)) = (o.start, o.end) {
            events.push((start, i64::from(o.cpus)));
            events.push((end, -i64::from(o.cpus)));
        }
    }
    Series::from_changes(events, 1.0 / cluster_cpus.max(1) as f64)
}

/// Jobs submitted and not yet started over time (a job that never starts
/// stays queued to the end).
pub fn queue_length_series(outcomes: &[JobOutcome]) -> Series {
    let mut events = Vec::new();
    for o in outcomes {
        events.push((o.submit, 1));
        if let Some(start) = o.start {
            events.push((start, -1));
        }
    }
    Series::from_changes(events, 1.0)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn outcome(
        id: u32,
        submit: i64,
        start: Option<i64>,
        end: Option<i64>,
        cpus: u32,
    ) -> JobOutcome {
        JobOutcome {
            id,
            submit,
            start,
            end,
            nodes: 1,
            cpus,
            node_list: String::new(),
            backfilled: false,
            killed_at_limit: false,
            rejected: None,
        }
    }

    /// Four jobs on a 4-CPU cluster, and one that never started:
    ///
    /// | job | submit | start | end | cpus | wait | run |
    /// |-----|--------|-------|-----|------|------|-----|
    /// | 1   | 0      | 0     | 100 | 4    | 0    | 100 |
    /// | 2   | 10     | 100   | 105 | 2    | 90   | 5   |
    /// | 3   | 20     | 100   | 200 | 2    | 80   | 100 |
    /// | 4   | 30     | 105   | 125 | 1    | 75   | 20  |
    /// | 5   | 40     | -     | -   | 8    | -    | -   |
    pub(crate) fn hand_made() -> Vec<JobOutcome> {
        let mut jobs = vec![
            outcome(1, 0, Some(0), Some(100), 4),
            outcome(2, 10, Some(100), Some(105), 2),
            outcome(3, 20, Some(100), Some(200), 2),
            outcome(4, 30, Some(105), Some(125), 1),
            outcome(5, 40, None, None, 8),
        ];
        jobs[3].backfilled = true;
        jobs[2].killed_at_limit = true;
        jobs[4].rejected = Some("needs 8 CPUs, the cluster has 4".into());
        jobs
    }

    #[test]
    fn bucket_means_keep_the_area_for_any_bucket_width() {
        // Widths like 1e6/7 are not exact in binary: a step ending on a
        // bucket boundary used to recompute a bucket just below it and loop
        // forever (seen in `simulate --html`). Each bucket mean times the
        // width must add up to the step function's area.
        let series = Series {
            points: (0..200i32)
                .map(|i| (i64::from(i) * 5_000, f64::from(i % 7)))
                .collect(),
        };
        let end = 1_000_000;
        let area: f64 = series
            .points
            .iter()
            .enumerate()
            .map(|(i, &(t, v))| {
                let until = series.points.get(i + 1).map_or(end, |n| n.0);
                v * (until - t) as f64
            })
            .sum();
        for buckets in [1, 3, 7, 13, 600, 1_000, 4_096] {
            let means = series.bucket_means(end, buckets);
            assert_eq!(means.len(), buckets);
            let width = end as f64 / buckets as f64;
            let total: f64 = means.iter().map(|&(_, m)| m * width).sum();
            assert!(
                (total - area).abs() < 1e-6 * area,
                "{buckets}: {total} vs {area}"
            );
        }
    }

    #[test]
    fn known_answers_on_a_hand_made_schedule() {
        let m = compute("fifo", &hand_made(), 4);
        assert_eq!(
            (
                m.jobs,
                m.completed,
                m.never_started,
                m.backfilled,
                m.killed_at_limit
            ),
            (5, 4, 1, 1, 1)
        );
        // Waits 0, 90, 80, 75: mean 245 / 4 = 61.25; sorted 0 75 80 90,
        // median (75 + 80) / 2 = 77.5; max 90.
        assert_eq!(m.mean_wait, Some(61.25));
        assert_eq!(m.median_wait, Some(77.5));
        assert_eq!(m.max_wait, Some(90));
        // Bounded slowdowns: job 1 (0+100)/100 = 1; job 2 (90+5)/max(5,10)
        // = 9.5; job 3 (80+100)/100 = 1.8; job 4 (75+20)/20 = 4.75.
        // Mean (1 + 9.5 + 1.8 + 4.75) / 4 = 17.05 / 4 = 4.2625.
        assert!((m.mean_bounded_slowdown.unwrap() - 4.2625).abs() < 1e-12);
        // Work 100x4 + 5x2 + 100x2 + 20x1 = 630 CPU-s; makespan 200 - 0;
        // utilization 630 / (4 x 200) = 0.7875.
        assert_eq!(m.makespan, Some(200));
        assert!((m.utilization.unwrap() - 0.7875).abs() < 1e-12);
    }

    #[test]
    fn bounded_slowdown_threshold_and_floor() {
        // A 1-second job that waited 9 s: (9+1)/max(1,10) = 1, not 10.
        assert_eq!(bounded_slowdown(9, 1), 1.0);
        // A 0-second job that never waited: 0/10 floors to 1.
        assert_eq!(bounded_slowdown(0, 0), 1.0);
        assert_eq!(bounded_slowdown(30, 10), 4.0);
    }

    #[test]
    fn nothing_ran() {
        let m = compute("x", &[outcome(1, 5, None, None, 1)], 4);
        assert_eq!(
            (m.mean_wait, m.median_wait, m.mean_bounded_slowdown),
            (None, None, None)
        );
        assert_eq!(
            (m.utilization, m.makespan, m.never_started),
            (None, None, 1)
        );
        let m = compute("x", &[], 4);
        assert_eq!(m.jobs, 0);
    }

    #[test]
    fn series_of_the_hand_made_schedule() {
        let jobs = hand_made();
        // Busy CPUs: 4 on [0,100), 2+2 = 4 on [100,105), job 3 + job 4 = 3 on
        // [105,125), 2 on [125,200), 0 from 200.
        assert_eq!(
            utilization_series(&jobs, 4).points,
            vec![(0, 1.0), (100, 1.0), (105, 0.75), (125, 0.5), (200, 0.0)]
        );
        // Queued: job 1 in and out at 0; jobs 2-5 arrive at 10-40; 2 and 3
        // start at 100, 4 at 105; job 5 never starts.
        assert_eq!(
            queue_length_series(&jobs).points,
            vec![
                (0, 0.0),
                (10, 1.0),
                (20, 2.0),
                (30, 3.0),
                (40, 4.0),
                (100, 2.0),
                (105, 1.0)
            ]
        );
        // Two 100-s buckets of the utilization: the first is all 1.0; the
        // second is (5x1.0 + 20x0.75 + 75x0.5) / 100 = 0.575.
        assert_eq!(
            utilization_series(&jobs, 4).bucket_means(200, 2),
            vec![(0, 1.0), (100, 0.575)]
        );
    }
}
