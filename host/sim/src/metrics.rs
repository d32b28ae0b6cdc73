//! The standard schedule metrics of one policy's run, and the time series
//! the report plots. Everything is computed from the jobs' submit, start
//! and end times and requests ([`JobOutcome`]) and the cluster's CPU count.
//!
//! Definitions (times in seconds; only jobs that started and ended count
//! towards waits, slowdowns and utilization):
//!
//! - wait = start - submit; the median of an even count is the mean of the
//!   two middle values; the 90th and 99th percentiles are nearest-rank
//!   (the value at rank ceil(p/100 x n) of the sorted values), as are the
//!   bounded slowdown's;
//! - turnaround = end - submit;
//! - bounded slowdown = max(1, (wait + run) / max(run, threshold)), run =
//!   end - start: the slowdown of Feitelson, Rudolph, Schwiegelshohn,
//!   Sevcik and Wong, "Theory and Practice in Parallel Job Scheduling"
//!   (JSSPP 1997), with their 10-second threshold by default so that very
//!   short jobs do not dominate the mean (`simulate --bsld-threshold`);
//! - utilization = sum(run x CPUs) / (cluster CPUs x (last end - first
//!   submit)), the formula of the traces' README (`MaxProcs` there is the
//!   cluster's CPU count here); the first submit is over all jobs. As
//!   allocated (the CPUs the plugin gave) and as requested (the CPUs the
//!   trace asked for): a plugin that gives whole nodes looks busy by the
//!   first and not by the second;
//! - fairness = Jain's index over users, (sum x)^2 / (n sum x^2) of each
//!   user's mean bounded slowdown x (users with a completed job): 1 when
//!   every user waits alike, down to 1/n when one user bears it all
//!   (Jain, Chiu and Hawe, DEC-TR-301, 1984);
//! - makespan = last end - first submit.
//!
//! With a warm-up ([`Measure::warmup`]) only jobs submitted after it count,
//! and "first submit" above is the warm-up's end.
//!
//! The same figures per user, per partition and per size class of the
//! requested CPUs (1, 2-4, 5-16, 17-64, 65-256, 257-1024, more) are in
//! [`Metrics::by_user`], [`Metrics::by_partition`] and [`Metrics::by_size`].
//!
//! A metric with nothing to average (no job started) is `None`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::outcome::JobOutcome;

/// Bounded slowdown's threshold in seconds, unless the run sets another.
pub const BOUNDED_SLOWDOWN_THRESHOLD: i64 = 10;

/// How a run is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measure {
    /// Bounded slowdown's threshold, seconds (`simulate --bsld-threshold`).
    pub bsld_threshold: i64,
    /// Seconds from the first submit whose jobs warm the machine up and are
    /// left out of every metric (`simulate --warmup`): jobs submitted
    /// earlier still run and hold nodes, but neither their waits nor their
    /// work count, and the makespan and utilization window start at the
    /// warm-up's end.
    pub warmup: i64,
}

impl Default for Measure {
    fn default() -> Measure {
        Measure {
            bsld_threshold: BOUNDED_SLOWDOWN_THRESHOLD,
            warmup: 0,
        }
    }
}

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
    pub p90_wait: Option<f64>,
    pub p99_wait: Option<f64>,
    pub max_wait: Option<i64>,
    pub mean_turnaround: Option<f64>,
    /// The threshold the bounded slowdowns below use, seconds.
    pub bounded_slowdown_threshold: i64,
    /// The warm-up left out, seconds from the first submit (see [`Measure`]).
    pub warmup: i64,
    pub mean_bounded_slowdown: Option<f64>,
    pub median_bounded_slowdown: Option<f64>,
    pub p90_bounded_slowdown: Option<f64>,
    pub p99_bounded_slowdown: Option<f64>,
    /// As allocated.
    pub utilization: Option<f64>,
    /// As requested.
    pub utilization_requested: Option<f64>,
    /// Jain's index over users' mean bounded slowdowns.
    pub fairness_users: Option<f64>,
    pub makespan: Option<i64>,
    pub by_user: Vec<GroupMetrics>,
    pub by_partition: Vec<GroupMetrics>,
    pub by_size: Vec<GroupMetrics>,
}

/// The figures of one user, partition or size class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupMetrics {
    /// The user id, the partition (`-` for none) or the size class.
    pub group: String,
    pub jobs: usize,
    pub completed: usize,
    pub mean_wait: Option<f64>,
    pub median_wait: Option<f64>,
    pub mean_bounded_slowdown: Option<f64>,
    /// CPU-seconds the group's completed jobs were given.
    pub cpu_seconds: f64,
}

/// The size classes of [`Metrics::by_size`]: upper bounds of requested CPUs.
const SIZE_CLASSES: [(u32, &str); 7] = [
    (1, "1"),
    (4, "2-4"),
    (16, "5-16"),
    (64, "17-64"),
    (256, "65-256"),
    (1024, "257-1024"),
    (u32::MAX, ">1024"),
];

/// The index in [`SIZE_CLASSES`] of a request of `cpus` CPUs.
fn size_class(cpus: u32) -> usize {
    SIZE_CLASSES
        .iter()
        .position(|(most, _)| cpus <= *most)
        .unwrap_or(SIZE_CLASSES.len() - 1)
}

/// A completed job's figures; none for a job that did not start and end.
struct Ran {
    wait: i64,
    run: i64,
    bsld: f64,
}

impl Ran {
    fn of(o: &JobOutcome, threshold: i64) -> Option<Ran> {
        let (start, end) = (o.start?, o.end?);
        let (wait, run) = (start - o.submit, end - start);
        Some(Ran {
            wait,
            run,
            bsld: bounded_slowdown_with(wait, run, threshold),
        })
    }
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The median of sorted values (the mean of the two middle ones for an
/// even count).
fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    (n > 0).then(|| {
        if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        }
    })
}

/// The nearest-rank `p`th percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    let n = sorted.len();
    (n > 0).then(|| {
        let rank = ((p / 100.0) * n as f64).ceil() as usize;
        sorted[rank.clamp(1, n) - 1]
    })
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// The metrics of `outcomes` on a cluster of `cluster_cpus` CPUs, measured
/// as `measure` says.
pub fn compute(
    policy: &str,
    outcomes: &[JobOutcome],
    cluster_cpus: u64,
    measure: &Measure,
) -> Metrics {
    let threshold = measure.bsld_threshold;
    let first_submit = outcomes.iter().map(|o| o.submit).min();
    let window_start = first_submit.map(|first| first + measure.warmup.max(0));
    let outcomes: Vec<&JobOutcome> = outcomes
        .iter()
        .filter(|o| window_start.is_none_or(|from| o.submit >= from))
        .collect();
    let done: Vec<(&JobOutcome, Ran)> = outcomes
        .iter()
        .filter_map(|&o| Ran::of(o, threshold).map(|r| (o, r)))
        .collect();
    let waits = sorted(done.iter().map(|(_, r)| r.wait as f64));
    let bslds = sorted(done.iter().map(|(_, r)| r.bsld));
    let last_end = outcomes.iter().filter_map(|o| o.end).max();
    let makespan = window_start.zip(last_end).map(|(first, last)| last - first);
    let share = |cpus: &dyn Fn(&JobOutcome) -> u32| -> Option<f64> {
        let work: f64 = done
            .iter()
            .map(|(o, r)| r.run as f64 * f64::from(cpus(o)))
            .sum();
        makespan
            .filter(|&m| m > 0 && cluster_cpus > 0)
            .map(|m| work / (cluster_cpus as f64 * m as f64))
    };
    let by_user = groups(&outcomes, threshold, |o| o.user, u32::to_string);
    let user_means: Vec<f64> = by_user
        .iter()
        .filter_map(|g| g.mean_bounded_slowdown)
        .collect();
    let fairness_users = (!user_means.is_empty()).then(|| {
        let sum: f64 = user_means.iter().sum();
        let squares: f64 = user_means.iter().map(|x| x * x).sum();
        sum * sum / (user_means.len() as f64 * squares)
    });
    Metrics {
        policy: policy.to_owned(),
        jobs: outcomes.len(),
        completed: done.len(),
        never_started: outcomes.iter().filter(|o| o.start.is_none()).count(),
        backfilled: outcomes.iter().filter(|o| o.backfilled).count(),
        killed_at_limit: outcomes.iter().filter(|o| o.killed_at_limit).count(),
        mean_wait: mean(waits.iter().copied()),
        median_wait: median(&waits),
        p90_wait: percentile(&waits, 90.0),
        p99_wait: percentile(&waits, 99.0),
        max_wait: waits.last().map(|&w| w as i64),
        mean_turnaround: mean(done.iter().map(|(_, r)| (r.wait + r.run) as f64)),
        bounded_slowdown_threshold: threshold,
        warmup: measure.warmup,
        mean_bounded_slowdown: mean(bslds.iter().copied()),
        median_bounded_slowdown: median(&bslds),
        p90_bounded_slowdown: percentile(&bslds, 90.0),
        p99_bounded_slowdown: percentile(&bslds, 99.0),
        utilization: share(&|o| o.cpus),
        utilization_requested: share(&|o| o.requested_cpus),
        fairness_users,
        makespan,
        by_user,
        by_partition: groups(
            &outcomes,
            threshold,
            |o| o.partition.clone(),
            |p| p.clone().unwrap_or_else(|| "-".to_owned()),
        ),
        by_size: groups(
            &outcomes,
            threshold,
            |o| size_class(o.requested_cpus),
            |&i| SIZE_CLASSES[i].1.to_owned(),
        ),
    }
}

/// The figures of each group `key` puts jobs in, in key order, named by
/// `label`.
fn groups<K: Ord>(
    outcomes: &[&JobOutcome],
    threshold: i64,
    key: impl Fn(&JobOutcome) -> K,
    label: impl Fn(&K) -> String,
) -> Vec<GroupMetrics> {
    let mut by: BTreeMap<K, Vec<&JobOutcome>> = BTreeMap::new();
    for &o in outcomes {
        by.entry(key(o)).or_default().push(o);
    }
    by.into_iter()
        .map(|(k, jobs)| {
            let done: Vec<(&JobOutcome, Ran)> = jobs
                .iter()
                .filter_map(|&o| Ran::of(o, threshold).map(|r| (o, r)))
                .collect();
            let waits = sorted(done.iter().map(|(_, r)| r.wait as f64));
            GroupMetrics {
                group: label(&k),
                jobs: jobs.len(),
                completed: done.len(),
                mean_wait: mean(waits.iter().copied()),
                median_wait: median(&waits),
                mean_bounded_slowdown: mean(done.iter().map(|(_, r)| r.bsld)),
                cpu_seconds: done
                    .iter()
                    .map(|(o, r)| r.run as f64 * f64::from(o.cpus))
                    .sum(),
            }
        })
        .collect()
}

/// Bounded slowdown of a job that waited `wait` and ran `run` seconds, at
/// the default threshold.
pub fn bounded_slowdown(wait: i64, run: i64) -> f64 {
    bounded_slowdown_with(wait, run, BOUNDED_SLOWDOWN_THRESHOLD)
}

/// Bounded slowdown with a threshold of `threshold` seconds.
pub fn bounded_slowdown_with(wait: i64, run: i64, threshold: i64) -> f64 {
    let response = (wait + run) as f64;
    (response / run.max(threshold).max(1) as f64).max(1.0)
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
            requested_cpus: cpus,
            ..JobOutcome::default()
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
    fn percentiles_fairness_requests_and_breakdowns() {
        // hand_made's jobs 1-4 ran: waits 0, 90, 80, 75; runs 100, 5, 100,
        // 20; bounded slowdowns 1, 9.5, 1.8, 4.75. Users: 1 and 2 ran jobs
        // 1-2, user 2 jobs 3-4 and 5 (never started); job 1 asked for 2
        // CPUs and was given 4 (a whole node).
        let mut jobs = hand_made();
        for (j, user) in jobs.iter_mut().zip([1, 1, 2, 2, 2]) {
            j.user = user;
        }
        jobs[0].requested_cpus = 2;
        jobs[0].partition = Some("big".into());
        let m = compute("fifo", &jobs, 4, &Measure::default());
        // Nearest rank: ceil(0.9 x 4) = 4th of 0 75 80 90, and of the
        // sorted slowdowns 1 1.8 4.75 9.5.
        assert_eq!((m.p90_wait, m.p99_wait), (Some(90.0), Some(90.0)));
        assert_eq!(
            (m.median_bounded_slowdown, m.p90_bounded_slowdown),
            (Some((1.8 + 4.75) / 2.0), Some(9.5))
        );
        // Turnarounds 100, 95, 180, 95.
        assert_eq!(m.mean_turnaround, Some(117.5));
        // Requested CPU-seconds 100x2 + 5x2 + 100x2 + 20x1 = 430 over 4
        // CPUs x 200 s; as allocated 630.
        assert_eq!(m.utilization_requested, Some(430.0 / 800.0));
        assert_eq!(m.utilization, Some(630.0 / 800.0));
        // Users' mean slowdowns 5.25 and 3.275: Jain's index
        // (8.525^2) / (2 x (5.25^2 + 3.275^2)).
        let jain = 8.525f64.powi(2) / (2.0 * (5.25f64.powi(2) + 3.275f64.powi(2)));
        assert!((m.fairness_users.unwrap() - jain).abs() < 1e-12);
        assert!((jain - 0.949_062).abs() < 1e-6);
        let users: Vec<(&str, usize, usize, Option<f64>)> = m
            .by_user
            .iter()
            .map(|g| {
                (
                    g.group.as_str(),
                    g.jobs,
                    g.completed,
                    g.mean_bounded_slowdown,
                )
            })
            .collect();
        assert_eq!(users, [("1", 2, 2, Some(5.25)), ("2", 3, 2, Some(3.275))]);
        let sizes: Vec<(&str, usize)> = m
            .by_size
            .iter()
            .map(|g| (g.group.as_str(), g.jobs))
            .collect();
        assert_eq!(sizes, [("1", 1), ("2-4", 3), ("5-16", 1)]);
        let parts: Vec<(&str, usize, f64)> = m
            .by_partition
            .iter()
            .map(|g| (g.group.as_str(), g.jobs, g.cpu_seconds))
            .collect();
        assert_eq!(parts, [("-", 4, 230.0), ("big", 1, 400.0)]);
        // A threshold of 100 s: only job 3 is slowed, (80 + 100) / 100.
        let wide = compute(
            "fifo",
            &jobs,
            4,
            &Measure {
                bsld_threshold: 100,
                warmup: 0,
            },
        );
        assert_eq!(
            wide.mean_bounded_slowdown,
            Some((1.0 + 1.0 + 1.8 + 1.0) / 4.0)
        );
        assert_eq!(wide.bounded_slowdown_threshold, 100);
        // A 15 s warm-up leaves out jobs 1 and 2 (submitted at 0 and 10):
        // jobs 3 and 4 waited 80 and 75 s; the window runs from 15 to 200,
        // where they did 100x2 + 20x1 CPU-seconds; job 5 never ran.
        let warm = compute(
            "fifo",
            &jobs,
            4,
            &Measure {
                bsld_threshold: BOUNDED_SLOWDOWN_THRESHOLD,
                warmup: 15,
            },
        );
        assert_eq!((warm.jobs, warm.completed), (3, 2));
        assert_eq!(warm.mean_wait, Some(77.5));
        assert_eq!(warm.makespan, Some(185));
        assert_eq!(warm.utilization, Some(220.0 / (4.0 * 185.0)));
    }

    #[test]
    fn known_answers_on_a_hand_made_schedule() {
        let m = compute("fifo", &hand_made(), 4, &Measure::default());
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
        let m = compute("x", &[outcome(1, 5, None, None, 1)], 4, &Measure::default());
        assert_eq!(
            (m.mean_wait, m.median_wait, m.mean_bounded_slowdown),
            (None, None, None)
        );
        assert_eq!(
            (m.utilization, m.makespan, m.never_started),
            (None, None, 1)
        );
        let m = compute("x", &[], 4, &Measure::default());
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
