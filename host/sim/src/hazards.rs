//! The choices a replay makes where a trace is incomplete or odd, each
//! switchable ([`ReplayOptions`]) and each recorded with its count in
//! [`Workload::notes`].
//!
//! [`apply`] turns the jobs a reader found ([`RawTrace`]) into a
//! [`Workload`], in this order:
//!
//! 1. jobs without a processor count (SWF fields 5 and 8 both -1), or with
//!    a submit time, run time or estimate beyond [`HORIZON_SECONDS`], are
//!    skipped: nothing can place them, and no real trace has such times;
//! 2. cancelled jobs that never started: [`CancelledJobs`];
//! 3. run time zero, negative or unknown: [`ZeroRunTime`];
//! 4. no time estimate: [`MissingEstimate`];
//! 5. run time over the estimate: [`OverLimit`];
//! 6. a job number seen before: the later job is skipped;
//! 7. the jobs are sorted by submit time, ties by job number (Slurm gives
//!    job ids in submit order, so the lower id was submitted first).
//!
//! [`reshape`] then changes any workload (a trace's or a synthetic one) for
//! an experiment: load scaling and perfect estimates ([`Reshape`]).

use std::collections::{BTreeMap, HashSet};

use crate::input::{RawJob, RawTrace, HORIZON_SECONDS};
use crate::workload::{TraceJob, TraceStatus, Workload};

/// Jobs whose run time is zero, negative or unknown (SWF `-1`; HPC2N has
/// such jobs with status -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZeroRunTime {
    /// Leave them out (the default: they put no load on the machine).
    #[default]
    Skip,
    /// Replay them as 1-second jobs (they still pass through the queue).
    OneSecond,
}

/// Jobs without a time estimate (SWF requested time -1 or 2147483647,
/// sacct `UNLIMITED` / `Partition_Limit`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MissingEstimate {
    /// The job's own run time: a perfect estimate (the default).
    #[default]
    RunTime,
    /// The `MaxTime` of the job's partition, in seconds, by partition name;
    /// `default` for jobs without a partition or with one not in `limits`;
    /// the run time when that is none too.
    PartitionMaxTime {
        limits: BTreeMap<String, i64>,
        default: Option<i64>,
    },
    /// The same number of seconds for every such job.
    Fixed(i64),
}

/// Jobs that ran longer than their estimate in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverLimit {
    /// Keep the limit: the simulator kills the job when it is reached, as
    /// Slurm does (`TIMEOUT`). The default.
    #[default]
    KillAtLimit,
    /// Raise the limit to the run time, so the job runs as long as it did.
    ExtendLimit,
}

/// Jobs the trace records as cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CancelledJobs {
    /// Leave out those that never started (cancelled while pending: they
    /// never used the machine). The default.
    #[default]
    SkipNeverStarted,
    /// Replay every cancelled job like any other.
    Include,
}

/// The replay's choices. `ReplayOptions::default()` is what the simulator
/// uses unless told otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReplayOptions {
    pub zero_run_time: ZeroRunTime,
    pub missing_estimate: MissingEstimate,
    pub over_limit: OverLimit,
    pub cancelled: CancelledJobs,
}

/// The workload of `trace` under `options`; the trace's own notes come
/// first, then one note per choice that changed or dropped a job.
pub fn apply(trace: RawTrace, options: &ReplayOptions) -> Workload {
    let RawTrace {
        source,
        start_time,
        max_nodes,
        max_procs,
        jobs: raw,
        mut notes,
    } = trace;
    let mut counts = Counts::default();
    let mut seen = HashSet::new();
    let mut jobs = Vec::with_capacity(raw.len());
    for job in raw {
        if let Some(job) = one(job, options, &mut counts) {
            if seen.insert(job.id) {
                jobs.push(job);
            } else {
                counts.duplicate += 1;
            }
        }
    }
    jobs.sort_by_key(|j| (j.submit, j.id));
    let ties = jobs
        .iter()
        .enumerate()
        .filter(|(i, j)| {
            (*i > 0 && jobs[i - 1].submit == j.submit)
                || jobs.get(i + 1).is_some_and(|n| n.submit == j.submit)
        })
        .count();
    counts.notes(options, ties, &mut notes);
    Workload {
        source,
        start_time,
        max_nodes,
        max_procs,
        jobs,
        notes,
    }
}

#[derive(Default)]
struct Counts {
    no_cpus: usize,
    beyond_horizon: usize,
    cancelled_skipped: usize,
    zero_skipped: usize,
    zero_one_second: usize,
    estimate_run_time: usize,
    estimate_partition: usize,
    estimate_fixed: usize,
    unlimited: usize,
    over_killed: usize,
    over_extended: usize,
    duplicate: usize,
}

fn one(job: RawJob, options: &ReplayOptions, counts: &mut Counts) -> Option<TraceJob> {
    let Some(cpus) = job.cpus.filter(|&c| c > 0) else {
        counts.no_cpus += 1;
        return None;
    };
    let beyond = |t: Option<i64>| t.is_some_and(|t| t > HORIZON_SECONDS);
    if beyond(Some(job.submit)) || beyond(job.run_time) || beyond(job.time_limit) {
        counts.beyond_horizon += 1;
        return None;
    }
    if job.status == TraceStatus::Cancelled
        && !job.started
        && options.cancelled == CancelledJobs::SkipNeverStarted
    {
        counts.cancelled_skipped += 1;
        return None;
    }
    let run_time = match job.run_time.filter(|&r| r > 0) {
        Some(r) => r,
        None => match options.zero_run_time {
            ZeroRunTime::Skip => {
                counts.zero_skipped += 1;
                return None;
            }
            ZeroRunTime::OneSecond => {
                counts.zero_one_second += 1;
                1
            }
        },
    };
    if job.unlimited_limit {
        counts.unlimited += 1;
    }
    let time_limit = match job.time_limit.filter(|&l| l > 0) {
        Some(l) => l,
        None => match &options.missing_estimate {
            MissingEstimate::RunTime => {
                counts.estimate_run_time += 1;
                run_time
            }
            MissingEstimate::PartitionMaxTime { limits, default } => {
                let limit = job
                    .partition
                    .as_ref()
                    .and_then(|p| limits.get(p))
                    .copied()
                    .or(*default);
                match limit {
                    Some(l) => {
                        counts.estimate_partition += 1;
                        l
                    }
                    None => {
                        counts.estimate_run_time += 1;
                        run_time
                    }
                }
            }
            MissingEstimate::Fixed(seconds) => {
                counts.estimate_fixed += 1;
                *seconds
            }
        },
    };
    let time_limit = if run_time > time_limit {
        match options.over_limit {
            OverLimit::KillAtLimit => {
                counts.over_killed += 1;
                time_limit
            }
            OverLimit::ExtendLimit => {
                counts.over_extended += 1;
                run_time
            }
        }
    } else {
        time_limit
    };
    Some(TraceJob {
        id: job.id,
        submit: job.submit,
        run_time,
        time_limit: Some(time_limit),
        nodes: job.nodes,
        cpus,
        memory_mb_per_node: job.memory_mb_per_node,
        gpus: job.gpus,
        user: job.user,
        group: job.group,
        account: job.account,
        partition: job.partition,
        status: job.status,
        recorded: job.recorded,
    })
}

impl Counts {
    fn notes(&self, options: &ReplayOptions, ties: usize, notes: &mut Vec<String>) {
        let mut note = |n: usize, text: String| {
            if n > 0 {
                notes.push(text);
            }
        };
        note(
            self.no_cpus,
            format!("{} jobs without a processor count skipped", self.no_cpus),
        );
        note(
            self.beyond_horizon,
            format!(
                "{} jobs with a time beyond year 9999 ({HORIZON_SECONDS} s) skipped",
                self.beyond_horizon
            ),
        );
        note(
            self.cancelled_skipped,
            format!(
                "{} cancelled jobs that never started skipped (cancelled: skip-never-started)",
                self.cancelled_skipped
            ),
        );
        note(
            self.zero_skipped,
            format!(
                "{} jobs with run time <= 0 or unknown skipped (zero-run-time: skip)",
                self.zero_skipped
            ),
        );
        note(
            self.zero_one_second,
            format!(
                "{} jobs with run time <= 0 or unknown replayed as 1 s (zero-run-time: one-second)",
                self.zero_one_second
            ),
        );
        note(
            self.unlimited,
            format!(
                "{} jobs asked for an unlimited time (treated as no estimate)",
                self.unlimited
            ),
        );
        note(
            self.estimate_run_time,
            format!(
                "{} jobs without a time estimate use their run time as the estimate",
                self.estimate_run_time
            ),
        );
        note(
            self.estimate_partition,
            format!(
                "{} jobs without a time estimate use their partition's MaxTime",
                self.estimate_partition
            ),
        );
        if let MissingEstimate::Fixed(seconds) = options.missing_estimate {
            note(
                self.estimate_fixed,
                format!(
                    "{} jobs without a time estimate use the fixed estimate {seconds} s",
                    self.estimate_fixed
                ),
            );
        }
        note(
            self.over_killed,
            format!(
                "{} jobs ran longer than their estimate: killed at the limit as Slurm does (over-limit: kill)",
                self.over_killed
            ),
        );
        note(
            self.over_extended,
            format!(
                "{} jobs ran longer than their estimate: limit raised to the run time (over-limit: extend)",
                self.over_extended
            ),
        );
        note(
            self.duplicate,
            format!(
                "{} jobs repeat an earlier job number and were skipped",
                self.duplicate
            ),
        );
        note(
            ties,
            format!("{ties} jobs share their submit time with another: ordered by job number"),
        );
    }
}

/// What an experiment changes in a workload after it was read.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reshape {
    /// Offered load times this factor: every submit time `t` becomes
    /// `first + (t - first) / factor` (rounded down), the first submit
    /// kept, so the jobs arrive `factor` times as fast and keep their order.
    pub load_scale: Option<f64>,
    /// Every job's time limit becomes its run time.
    pub perfect_estimates: bool,
}

/// Applies `reshape` to `workload`, with a note for each change. A
/// reshaped workload is not what the trace's machine ran: the jobs'
/// recorded runs are dropped, so no agreement is computed against them.
///
/// # Errors
///
/// A load scale that is not a positive finite number.
pub fn reshape(workload: &mut Workload, reshape: &Reshape) -> Result<(), String> {
    if let Some(factor) = reshape.load_scale {
        if !(factor.is_finite() && factor > 0.0) {
            return Err(format!(
                "--load-scale {factor}: expected a positive number (1.5 offers 1.5 times the load)"
            ));
        }
        if let Some(first) = workload.jobs.iter().map(|j| j.submit).min() {
            for job in &mut workload.jobs {
                job.submit = first + ((job.submit - first) as f64 / factor).floor() as i64;
            }
        }
        workload.notes.push(format!(
            "submit times compressed by {factor}: {factor} times the trace's offered load (--load-scale)"
        ));
    }
    if reshape.perfect_estimates {
        let mut changed = 0;
        for job in &mut workload.jobs {
            if job.time_limit != Some(job.run_time) {
                job.time_limit = Some(job.run_time);
                changed += 1;
            }
        }
        workload.notes.push(format!(
            "every time limit is the job's run time ({changed} changed, --perfect-estimates)"
        ));
    }
    if reshape.load_scale.is_some() || reshape.perfect_estimates {
        for job in &mut workload.jobs {
            job.recorded = None;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(id: u32, submit: i64, run: Option<i64>, limit: Option<i64>) -> RawJob {
        RawJob {
            id,
            submit,
            run_time: run,
            time_limit: limit,
            unlimited_limit: false,
            nodes: None,
            cpus: Some(4),
            memory_mb_per_node: None,
            gpus: 0,
            user: 1,
            group: 1,
            account: None,
            partition: None,
            status: TraceStatus::Completed,
            started: true,
            recorded: None,
        }
    }

    fn trace(jobs: Vec<RawJob>) -> RawTrace {
        RawTrace {
            source: "t".into(),
            jobs,
            ..RawTrace::default()
        }
    }

    fn ids(w: &Workload) -> Vec<u32> {
        w.jobs.iter().map(|j| j.id).collect()
    }

    #[test]
    fn zero_run_time_skip_or_one_second() {
        let jobs = vec![
            raw(1, 0, Some(0), Some(60)),
            raw(2, 0, None, Some(60)),
            raw(3, 0, Some(-5), Some(60)),
            raw(4, 0, Some(10), Some(60)),
        ];
        let w = apply(trace(jobs.clone()), &ReplayOptions::default());
        assert_eq!(ids(&w), vec![4]);
        assert!(w.notes.contains(
            &"3 jobs with run time <= 0 or unknown skipped (zero-run-time: skip)".to_owned()
        ));
        let options = ReplayOptions {
            zero_run_time: ZeroRunTime::OneSecond,
            ..ReplayOptions::default()
        };
        let w = apply(trace(jobs), &options);
        assert_eq!(ids(&w), vec![1, 2, 3, 4]);
        assert_eq!(w.jobs[0].run_time, 1);
        assert!(w
            .notes
            .iter()
            .any(|n| n.starts_with("3 jobs with run time <= 0")));
    }

    #[test]
    fn missing_estimate_choices() {
        let mut a = raw(1, 0, Some(100), None);
        a.partition = Some("batch".into());
        let mut b = raw(2, 0, Some(100), None);
        b.partition = Some("other".into());
        let c = raw(3, 0, Some(100), None);
        let jobs = vec![a, b, c];
        let limits = |w: &Workload| w.jobs.iter().map(|j| j.time_limit).collect::<Vec<_>>();

        let w = apply(trace(jobs.clone()), &ReplayOptions::default());
        assert_eq!(limits(&w), vec![Some(100); 3]);

        let options = ReplayOptions {
            missing_estimate: MissingEstimate::PartitionMaxTime {
                limits: BTreeMap::from([("batch".to_owned(), 3600)]),
                default: Some(7200),
            },
            ..ReplayOptions::default()
        };
        let w = apply(trace(jobs.clone()), &options);
        // "batch" has its own MaxTime; "other" and no partition take the default.
        assert_eq!(limits(&w), vec![Some(3600), Some(7200), Some(7200)]);
        assert!(w
            .notes
            .contains(&"3 jobs without a time estimate use their partition's MaxTime".to_owned()));

        let options = ReplayOptions {
            missing_estimate: MissingEstimate::Fixed(600),
            ..ReplayOptions::default()
        };
        let w = apply(trace(jobs), &options);
        // The 100 s run times fit in 600 s: no job is over its limit.
        assert_eq!(limits(&w), vec![Some(600); 3]);
        assert!(w
            .notes
            .contains(&"3 jobs without a time estimate use the fixed estimate 600 s".to_owned()));
    }

    #[test]
    fn over_limit_kill_or_extend() {
        let jobs = vec![
            raw(1, 0, Some(120), Some(60)),
            raw(2, 0, Some(30), Some(60)),
        ];
        let w = apply(trace(jobs.clone()), &ReplayOptions::default());
        // Kill at limit: the limit stays, the run time stays (the engine kills).
        assert_eq!((w.jobs[0].run_time, w.jobs[0].time_limit), (120, Some(60)));
        assert!(w.notes.iter().any(|n| n.starts_with("1 jobs ran longer")));
        let options = ReplayOptions {
            over_limit: OverLimit::ExtendLimit,
            ..ReplayOptions::default()
        };
        let w = apply(trace(jobs), &options);
        assert_eq!((w.jobs[0].run_time, w.jobs[0].time_limit), (120, Some(120)));
        assert_eq!(w.jobs[1].time_limit, Some(60));
    }

    #[test]
    fn cancelled_never_started_skipped_unless_included() {
        let mut pending = raw(1, 0, Some(0), Some(60));
        pending.status = TraceStatus::Cancelled;
        pending.started = false;
        let mut ran = raw(2, 0, Some(50), Some(60));
        ran.status = TraceStatus::Cancelled;
        let jobs = vec![pending, ran];
        let w = apply(trace(jobs.clone()), &ReplayOptions::default());
        assert_eq!(ids(&w), vec![2]);
        assert!(w.notes.iter().any(|n| n.starts_with("1 cancelled jobs")));
        let options = ReplayOptions {
            cancelled: CancelledJobs::Include,
            zero_run_time: ZeroRunTime::OneSecond,
            ..ReplayOptions::default()
        };
        assert_eq!(ids(&apply(trace(jobs), &options)), vec![1, 2]);
    }

    #[test]
    fn ties_by_job_number_duplicates_and_missing_cpus() {
        let mut no_cpus = raw(9, 5, Some(10), Some(60));
        no_cpus.cpus = None;
        let jobs = vec![
            raw(7, 10, Some(10), Some(60)),
            raw(3, 10, Some(10), Some(60)),
            raw(5, 2, Some(10), Some(60)),
            raw(3, 20, Some(10), Some(60)),
            no_cpus,
        ];
        let w = apply(trace(jobs), &ReplayOptions::default());
        // Submit 2 first, then the two jobs submitted at 10 by job number.
        assert_eq!(ids(&w), vec![5, 3, 7]);
        assert!(w
            .notes
            .contains(&"1 jobs without a processor count skipped".to_owned()));
        assert!(w
            .notes
            .contains(&"1 jobs repeat an earlier job number and were skipped".to_owned()));
        assert!(w.notes.contains(
            &"2 jobs share their submit time with another: ordered by job number".to_owned()
        ));
    }

    /// Issue 26, class 7: a time near `i64::MAX` in a trace wrapped in the
    /// engine's sums; such jobs are skipped and counted.
    #[test]
    fn times_beyond_year_9999_are_skipped() {
        let jobs = vec![
            raw(1, 0, Some(10), Some(60)),
            raw(2, i64::MAX - 5, Some(10), Some(60)),
            raw(3, 0, Some(i64::MAX), Some(60)),
            raw(4, 0, Some(10), Some(HORIZON_SECONDS + 1)),
        ];
        let w = apply(trace(jobs), &ReplayOptions::default());
        assert_eq!(ids(&w), vec![1]);
        assert!(w
            .notes
            .contains(&"3 jobs with a time beyond year 9999 (253402300799 s) skipped".to_owned()));
    }

    #[test]
    fn reshape_scales_the_load_and_makes_estimates_perfect() {
        use crate::workload::TraceJob;
        let job = |id: u32, submit: i64, run: i64, limit: i64| TraceJob {
            id,
            submit,
            run_time: run,
            time_limit: Some(limit),
            cpus: 1,
            ..TraceJob::default()
        };
        let mut w = Workload {
            jobs: vec![
                job(1, 100, 50, 60),
                job(2, 110, 30, 30),
                job(3, 125, 5, 600),
            ],
            ..Workload::default()
        };
        reshape(
            &mut w,
            &Reshape {
                load_scale: Some(2.0),
                perfect_estimates: true,
            },
        )
        .unwrap();
        // Offsets 0, 10, 25 halved (rounded down), from the first submit.
        let submits: Vec<i64> = w.jobs.iter().map(|j| j.submit).collect();
        assert_eq!(submits, [100, 105, 112]);
        let limits: Vec<Option<i64>> = w.jobs.iter().map(|j| j.time_limit).collect();
        assert_eq!(limits, [Some(50), Some(30), Some(5)]);
        assert!(
            w.notes.iter().any(|n| n.contains("2 changed")),
            "{:?}",
            w.notes
        );
        let bad = reshape(
            &mut w,
            &Reshape {
                load_scale: Some(0.0),
                perfect_estimates: false,
            },
        );
        assert!(bad.unwrap_err().contains("expected a positive number"));
    }
}
