//! Known-answer tests of the engine on hand-made workloads, with a native
//! whole-node select plugin (a test double that allocates the lowest-numbered
//! free nodes, like select/linear without topology or weights) and a
//! priority/basic-like prioritizer (each job one below the previous: FCFS).
//! The schedules are derived on paper in each test's comment.

use super::*;
use crate::workload::{TraceJob, Workload};
use slurm::slurm_conf;
use slurm_wasm_host::types::NodeResources;

const TOTAL_BITS: u32 = 64;

/// Whole-node allocation over `cpus[i]` CPUs per node.
struct WholeNodes {
    cpus: Vec<u16>,
    /// Per node: (job id, expected end) of the job holding it.
    busy: Vec<Option<(u32, i64)>>,
}

impl WholeNodes {
    fn pick(&self, job: &Job, usable: &[u32]) -> Option<Vec<u32>> {
        let mut chosen = Vec::new();
        let mut cpus = 0u32;
        for &n in usable {
            if chosen.len() as u32 >= job.details.min_nodes && cpus >= job.details.min_cpus {
                break;
            }
            chosen.push(n);
            cpus += u32::from(self.cpus[n as usize]);
        }
        (chosen.len() as u32 >= job.details.min_nodes && cpus >= job.details.min_cpus)
            .then_some(chosen)
    }

    fn resources(&self, nodes: &[u32]) -> JobResources {
        let len = self.cpus.len() as u32;
        JobResources {
            nodes: slurm_wasm_host::fixtures::bitmap(len, nodes.iter().copied()),
            ncpus: nodes
                .iter()
                .map(|&n| u32::from(self.cpus[n as usize]))
                .sum(),
            per_node: nodes
                .iter()
                .map(|&n| NodeResources {
                    node_index: n,
                    cores: slurm_wasm_host::fixtures::bitmap(TOTAL_BITS, []),
                    cpus: self.cpus[n as usize],
                    memory: 0,
                    gres: Vec::new(),
                })
                .collect(),
            whole_nodes: true,
        }
    }
}

/// A refusal of the test double, as the host reports a plugin's.
fn refused(code: i32, message: &str) -> CallError {
    CallError::Plugin {
        plugin: "test".into(),
        function: "job-test",
        code,
        message: message.into(),
    }
}

impl Select for WholeNodes {
    fn node_init(&mut self, nodes: &[slurm_wasm_host::types::Node]) -> Result<(), CallError> {
        self.cpus = nodes.iter().map(|n| n.cpus).collect();
        self.busy = vec![None; self.cpus.len()];
        Ok(())
    }

    fn job_test(
        &mut self,
        request: &slurm_wasm_host::kinds::select::JobTestRequest,
    ) -> Result<JobTestResult, CallError> {
        let job = &request.job;
        let cand = slurm_wasm_host::fixtures::bits(&request.candidates);
        let placed = |resources, start_time| JobTestResult {
            resources,
            start_time,
            preemptees: Vec::new(),
        };
        match request.mode {
            JobTestMode::TestOnly => match self.pick(job, &cand) {
                Some(n) => Ok(placed(self.resources(&n), None)),
                None => Err(refused(2014, "too big")),
            },
            JobTestMode::RunNow => {
                let free: Vec<u32> = cand
                    .into_iter()
                    .filter(|&n| self.busy[n as usize].is_none())
                    .collect();
                match self.pick(job, &free) {
                    Some(n) => Ok(placed(self.resources(&n), None)),
                    None => Err(refused(2016, "busy")),
                }
            }
            JobTestMode::WillRun | JobTestMode::Reservation => {
                // Release running jobs in order of expected end until it fits.
                let mut ends: Vec<i64> = self.busy.iter().flatten().map(|b| b.1).collect();
                ends.sort_unstable();
                let mut times = vec![i64::MIN];
                times.extend(ends);
                for t in times {
                    let free: Vec<u32> = cand
                        .iter()
                        .copied()
                        .filter(|&n| self.busy[n as usize].is_none_or(|b| b.1 <= t))
                        .collect();
                    if let Some(n) = self.pick(job, &free) {
                        return Ok(placed(self.resources(&n), Some(t.max(job.start_time))));
                    }
                }
                Err(refused(2016, "busy"))
            }
        }
    }

    fn job_begin(&mut self, job: &Job) -> Result<(), CallError> {
        for n in &job.resources.as_ref().unwrap().per_node {
            self.busy[n.node_index as usize] = Some((job.job_id, job.end_time));
        }
        Ok(())
    }

    /// The double keeps no `sinfo` table.
    fn nodeinfo_set(&mut self, _job: &Job) -> Result<(), CallError> {
        Ok(())
    }

    fn job_fini(&mut self, job: &Job) -> Result<(), CallError> {
        for slot in &mut self.busy {
            if slot.is_some_and(|b| b.0 == job.job_id) {
                *slot = None;
            }
        }
        Ok(())
    }

    /// A whole-node test double asked once per job.
    fn plugin_info(
        &mut self,
        field: slurm_wasm_host::kinds::select::PluginInfoField,
    ) -> Result<slurm_wasm_host::kinds::select::PluginInfoValue, CallError> {
        use slurm_wasm_host::kinds::select::{PluginInfoField, PluginInfoValue};
        Ok(match field {
            PluginInfoField::SingleJobTest => PluginInfoValue::Flag(true),
            _ => PluginInfoValue::Number(0),
        })
    }
}

/// priority/basic's rule: each new job one below the previous one.
struct Fcfs(u32);

impl Prioritizer for Fcfs {
    fn submit(&mut self, _job: &Job) -> Result<u32, CallError> {
        self.0 -= 1;
        Ok(self.0)
    }
    fn recalculate(&mut self, _: &[Job], _: &[u32]) -> Result<Vec<(u32, u32)>, CallError> {
        Ok(Vec::new())
    }
    fn end(&mut self, _job: &Job) -> Result<(), CallError> {
        Ok(())
    }
    fn associations(
        &mut self,
        _: &[slurm_wasm_host::kinds::priority::AssociationUpdate],
    ) -> Result<(), CallError> {
        Ok(())
    }
}

/// Four 4-CPU nodes n[1-4] in one partition.
fn cluster(extra: &str) -> Cluster {
    let text = format!(
        "ClusterName=t\nSelectType=select/linear\n{extra}\n\
         NodeName=n[1-4] CPUs=4 RealMemory=1000\n\
         PartitionName=p Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n"
    );
    let conf = slurm_conf::parse_str(&text, std::path::Path::new("slurm.conf")).unwrap();
    Cluster::from_slurm_conf(&conf).unwrap()
}

/// A job of `nodes` whole nodes, `run` seconds, limit `limit` seconds.
fn job(id: u32, submit: i64, nodes: u32, run: i64, limit: i64) -> TraceJob {
    TraceJob {
        id,
        submit,
        run_time: run,
        time_limit: Some(limit),
        nodes: Some(nodes),
        cpus: nodes * 4,
        user: 1000,
        group: 1000,
        ..TraceJob::default()
    }
}

fn run(cluster: &Cluster, jobs: Vec<TraceJob>) -> SimResult {
    run_with(cluster, jobs, SchedConfig::from_cluster(cluster).unwrap())
}

/// [`run`] under `config`.
fn run_with(cluster: &Cluster, jobs: Vec<TraceJob>, config: SchedConfig) -> SimResult {
    let workload = Workload {
        source: "test".into(),
        jobs,
        ..Workload::default()
    };
    let input = Input {
        cluster,
        config,
        workload: &workload,
        default_partition: 0,
    };
    let mut select = WholeNodes {
        cpus: Vec::new(),
        busy: Vec::new(),
    };
    let clock = VirtualClock::new(input.epoch());
    simulate(
        &input,
        &mut select,
        &mut Fcfs(0xffff_0000),
        &clock,
        "test",
        None,
    )
    .unwrap()
}

/// (start, end, backfilled) of each job.
type Schedule = Vec<(Option<i64>, Option<i64>, bool)>;

/// The [`Schedule`] of `result`.
fn schedule(result: &SimResult) -> Schedule {
    result
        .outcomes
        .iter()
        .map(|o| (o.start, o.end, o.backfilled))
        .collect()
}

#[test]
fn fcfs_without_backfill_keeps_strict_order() {
    // sched/builtin on 4 nodes. J1 (2 nodes, 100 s) and J2 (3 nodes) at 0:
    // J1 starts at 0 on n[1-2]; J2 needs 3 and blocks the partition, so J3
    // (1 node, submitted at 10) waits behind it although n[3-4] are free.
    // J1 ends at 100 -> J2 starts at 100 (n[1-3]), J3 at 100 on n4.
    let c = cluster("SchedulerType=sched/builtin");
    let r = run(
        &c,
        vec![
            job(1, 0, 2, 100, 200),
            job(2, 0, 3, 50, 200),
            job(3, 10, 1, 30, 200),
        ],
    );
    assert_eq!(
        schedule(&r),
        vec![
            (Some(0), Some(100), false),
            (Some(100), Some(150), false),
            (Some(100), Some(130), false),
        ]
    );
    assert_eq!(r.outcomes[1].node_list, "n[1-3]");
    assert_eq!(r.outcomes[2].node_list, "n4");
    assert_eq!(r.counters.backfill_passes, 0);
}

#[test]
fn easy_backfill_starts_a_job_that_ends_before_the_reservation() {
    // Backfill every 30 s (default). J1: 2 nodes, runs 100 s, limit 100 s.
    // J2 at 0: 4 nodes, blocked until J1's expected end (t=100): reserved
    // n[1-4] from 120 (100 rounded up to bf_resolution, 60 s; the epoch is
    // a multiple of 60). J3 at 10: 2 nodes, limit 60 s. The first backfill
    // pass after J3's submission is at 30 (bf_interval after the pass at
    // 0): started then J3 ends by 90 <= 120, so it starts on n[3-4]. J1
    // and J3 end (100, 90); J2 starts when J1 ends, at 100.
    let c = cluster("");
    let r = run(
        &c,
        vec![
            job(1, 0, 2, 100, 100),
            job(2, 0, 4, 50, 200),
            job(3, 10, 2, 60, 60),
        ],
    );
    assert_eq!(
        schedule(&r),
        vec![
            (Some(0), Some(100), false),
            (Some(100), Some(150), false),
            (Some(30), Some(90), true),
        ]
    );
}

#[test]
fn easy_backfill_refuses_a_job_that_would_delay_the_reservation() {
    // As above but J3's limit is 120 s: starting at 30 it could run until
    // 150, past J2's reservation from 120 on all four nodes, so it must not
    // start. J2 starts at 100 (when J1 ends), J3 after J2 ends at 150.
    let c = cluster("");
    let r = run(
        &c,
        vec![
            job(1, 0, 2, 100, 100),
            job(2, 0, 4, 50, 200),
            job(3, 10, 2, 60, 120),
        ],
    );
    assert_eq!(
        schedule(&r),
        vec![
            (Some(0), Some(100), false),
            (Some(100), Some(150), false),
            (Some(150), Some(210), false),
        ]
    );
}

#[test]
fn backfill_uses_nodes_the_reservation_does_not_need() {
    // J1: 3 nodes (n[1-3]) until 100. J2: 2 nodes, reserved from 100 on the
    // nodes will-run picks then, n[1-2]. J3 (1 node, long limit) may take
    // n4 now: n4 is not reserved, so J2 is not delayed. Backfill pass at 0
    // (first change) sees J3 only from t=10: the next pass is at 30.
    let c = cluster("");
    let r = run(
        &c,
        vec![
            job(1, 0, 3, 100, 100),
            job(2, 0, 2, 50, 200),
            job(3, 10, 1, 500, 1000),
        ],
    );
    assert_eq!(
        schedule(&r),
        vec![
            (Some(0), Some(100), false),
            (Some(100), Some(150), false),
            (Some(30), Some(530), true),
        ]
    );
    assert_eq!(r.outcomes[2].node_list, "n4");
}

#[test]
fn backfill_spares_tests_whose_answer_is_certain() {
    // J1 holds all four nodes until 100. J2 (3 nodes) and J3 (2 nodes),
    // both limited to 200 s, wait. Pass at 0: J2's RUN_NOW is spared (no
    // free CPU), its WILL_RUN reserves 3 nodes from 120. J3's RUN_NOW is
    // spared (its candidate, the unreserved node, has no free CPU), and
    // WILL_RUN on that one node is spared too (4 CPUs, J3 needs 8): only
    // WILL_RUN on all nodes is asked. At 100 J1 ends and J2 starts; J3
    // cannot start (4 free CPUs, no call), the pass at 100 asks WILL_RUN
    // once. J2 ends at 150 and J3 starts. RUN_NOW: J1, J2, J3 once each.
    let c = cluster("");
    let r = run(
        &c,
        vec![
            job(1, 0, 4, 100, 100),
            job(2, 0, 3, 50, 200),
            job(3, 0, 2, 60, 200),
        ],
    );
    assert_eq!(
        schedule(&r),
        vec![
            (Some(0), Some(100), false),
            (Some(100), Some(150), false),
            (Some(150), Some(210), false),
        ]
    );
    assert_eq!(r.counters.run_now_tests, 3);
    assert_eq!(r.counters.will_run_tests, 3);
}

#[test]
fn jobs_are_killed_at_their_time_limit() {
    // J1 asks 90 s (1.5 min, rounded up to 2 min = 120 s) and runs 300 s:
    // killed at 120. J2 asks 60 s and runs 30 s: ends at 30.
    // With OverTimeLimit=1 the kill comes one minute later (180).
    let c = cluster("");
    let r = run(&c, vec![job(1, 0, 1, 300, 90), job(2, 0, 1, 30, 60)]);
    assert_eq!(r.outcomes[0].end, Some(120));
    assert!(r.outcomes[0].killed_at_limit);
    assert_eq!(r.outcomes[1].end, Some(30));
    assert!(!r.outcomes[1].killed_at_limit);
    let c = cluster("OverTimeLimit=1");
    let r = run(&c, vec![job(1, 0, 1, 300, 90)]);
    assert_eq!(r.outcomes[0].end, Some(180));
}

#[test]
fn a_job_larger_than_its_partition_is_rejected_at_submission() {
    // 5 nodes on a 4-node partition: TEST_ONLY fails, as sbatch would be
    // refused; the next job is unaffected. J3 has J1's shape: its verdict
    // comes from the cache (two TEST_ONLY calls for three jobs).
    let c = cluster("");
    let r = run(
        &c,
        vec![
            job(1, 0, 5, 10, 60),
            job(2, 0, 1, 10, 60),
            job(3, 5, 5, 99, 600),
        ],
    );
    assert!(r.outcomes[0]
        .rejected
        .as_deref()
        .unwrap()
        .contains("partition p"));
    assert_eq!(r.outcomes[0].start, None);
    assert_eq!(r.outcomes[1].start, Some(0));
    assert_eq!(r.outcomes[2].rejected, r.outcomes[0].rejected);
    assert_eq!(r.counters.test_only_tests, 2);
}

#[test]
fn scheduler_parameters_are_read() {
    let c = cluster(
        "SchedulerParameters=bf_interval=60,bf_window=120,bf_resolution=300,bf_max_job_test=7\nPriorityCalcPeriod=2",
    );
    let config = SchedConfig::from_cluster(&c).unwrap();
    assert_eq!(
        config,
        SchedConfig {
            backfill: Some(Backfill {
                interval: 60,
                window: 7200,
                resolution: 300,
                max_job_test: 7,
                ..Backfill::default()
            }),
            calc_period: 120,
        }
    );
    let c = cluster("SchedulerParameters=bf_window=soon");
    let e = SchedConfig::from_cluster(&c).unwrap_err();
    assert_eq!(
        e,
        "SchedulerParameters=bf_window=soon: expected a positive whole number"
    );
    // bf_min_age_reserve: 0 to 30 days (backfill.c 118, 863-872); the
    // select plugin's bf_window_linear (positive) and bf_busy_nodes are
    // checked, not kept.
    let c = cluster("SchedulerParameters=bf_min_age_reserve=600,bf_window_linear=60,bf_busy_nodes");
    let bf = SchedConfig::from_cluster(&c).unwrap().backfill.unwrap();
    assert_eq!(
        bf,
        Backfill {
            min_age_reserve: 600,
            ..Backfill::default()
        }
    );
    assert_eq!(Backfill::default().min_age_reserve, 0);
    let error = |params: &str| {
        SchedConfig::from_cluster(&cluster(&format!("SchedulerParameters={params}"))).unwrap_err()
    };
    assert_eq!(
        error("bf_min_age_reserve=2592001"),
        "SchedulerParameters=bf_min_age_reserve=2592001: \
         expected a whole number of seconds from 0 to 2592000"
    );
    assert_eq!(
        error("bf_min_age_reserve=-1"),
        "SchedulerParameters=bf_min_age_reserve=-1: \
         expected a whole number of seconds from 0 to 2592000"
    );
    assert_eq!(
        error("bf_window_linear=0"),
        "SchedulerParameters=bf_window_linear=0: expected a positive whole number"
    );
}

/// The HPC2N subset (120 nodes x 2 CPUs) with the test double: two runs
/// give identical schedules, every job starts after its submission, and
/// the backfill pass does start jobs on this real queue.
#[test]
fn hpc2n_replay_is_deterministic() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/HPC2N-2002-subset-alea-3170jobs.swf");
    if !path.exists() {
        eprintln!("skipped: {} not present", path.display());
        return;
    }
    let workload = crate::swf::read_path(&path, &crate::hazards::ReplayOptions::default()).unwrap();
    let text = "NodeName=n[1-120] CPUs=2 RealMemory=1000\n\
                PartitionName=p Nodes=n[1-120] Default=YES MaxTime=UNLIMITED\n";
    let conf = slurm_conf::parse_str(text, std::path::Path::new("slurm.conf")).unwrap();
    let c = Cluster::from_slurm_conf(&conf).unwrap();
    let once = |c: &Cluster| run(c, workload.jobs.clone());
    let (a, b) = (once(&c), once(&c));
    assert_eq!(a.outcomes, b.outcomes);
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.outcomes.len(), workload.jobs.len());
    for o in &a.outcomes {
        if o.rejected.is_none() {
            assert!(o.start.unwrap() >= o.submit, "job {}", o.id);
        }
    }
    assert!(a.outcomes.iter().any(|o| o.backfilled));
}

/// The five-job case of issue 34 (bf_interval=1, bf_resolution=1, FIFO,
/// whole nodes; job: submit, nodes, limit = run time): 1: 0, 2, 600;
/// 2: 0, 1, 1200; 3: 60, 2, 120; 4: 60, 2, 600; 5: 120, 1, 1200. Jobs 1
/// and 2 start at 0 (n[1-2], n3). At 60 job 3 is planned on n[1-2] for
/// [600, 720). Job 4's candidates over [60, 660) are n[3-4] (n[1-2] are
/// planned from 600): its will-run there (1200, when job 2 ends) lies past
/// 720, where the next slot frees n[1-2] (`later_start`), so it is tried
/// from 720: every node is free of plans then, its will-run answers 600 on
/// n[1-2], moved to 720: planned on n[1-2] for [720, 1320). n4 carries no
/// plan, so at 120 job 5 starts there by backfill. Job 3 starts at 600,
/// job 4 at 720 (job 3 ended), as planned. Real Slurm 22.05.8 planned the
/// same (tests/fixtures/anchor/backfill/five-jobs, recorded by
/// tests/anchor/backfill/record.sh: see `slurm_planned_the_five_jobs`).
#[test]
fn backfill_plans_node_time_like_slurm() {
    let c = cluster("SchedulerParameters=bf_interval=1,bf_resolution=1");
    let r = run(
        &c,
        vec![
            job(1, 0, 2, 600, 600),
            job(2, 0, 1, 1200, 1200),
            job(3, 60, 2, 120, 120),
            job(4, 60, 2, 600, 600),
            job(5, 120, 1, 1200, 1200),
        ],
    );
    assert_eq!(
        schedule(&r),
        vec![
            (Some(0), Some(600), false),
            (Some(0), Some(1200), false),
            (Some(600), Some(720), false),
            (Some(720), Some(1320), false),
            (Some(120), Some(1320), true),
        ]
    );
    let nodes: Vec<&str> = r.outcomes.iter().map(|o| o.node_list.as_str()).collect();
    assert_eq!(nodes, ["n[1-2]", "n3", "n[1-2]", "n[1-2]", "n4"]);
}

/// What real Slurm 22.05.8 planned for the five-job case (see
/// `backfill_plans_node_time_like_slurm`), as recorded: each job's start
/// (a pending job's planned start, scontrol's StartTime) and nodes (its
/// SchedNodeList), counted from the start of jobs 1 and 2.
#[test]
fn slurm_planned_the_five_jobs() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/anchor/backfill/five-jobs/plan.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let field = |line: &str, key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {line}"))
            .to_owned()
    };
    let rows: Vec<(i64, String)> = text
        .lines()
        .map(|l| (field(l, "start=").parse().unwrap(), field(l, "nodes=")))
        .collect();
    let origin = rows[0].0;
    let planned: Vec<(i64, &str)> = rows.iter().map(|(s, n)| (s - origin, n.as_str())).collect();
    assert_eq!(
        planned,
        [
            (0, "n[1-2]"),
            (0, "n3"),
            (600, "n[1-2]"),
            (720, "n[1-2]"),
            (120, "n4")
        ]
    );
}

/// `bf_max_job_start=1`: a pass starts one job. J1 holds n[1-2] until 600;
/// J2 (4 nodes) is planned from 600. J3 and J4 (1 node, 60 s) both fit on
/// n[3-4] before that plan; the pass at 30 starts J3 only, and J4 waits
/// for the next pass, at 60 (`bf_interval` after the last). Without the
/// limit both start at 30.
#[test]
fn bf_max_job_start_limits_the_starts_of_a_pass() {
    let jobs = || {
        vec![
            job(1, 0, 2, 600, 600),
            job(2, 0, 4, 60, 120),
            job(3, 10, 1, 60, 60),
            job(4, 10, 1, 60, 60),
        ]
    };
    let starts = |extra: &str| -> Vec<Option<i64>> {
        run(&cluster(extra), jobs())
            .outcomes
            .iter()
            .map(|o| o.start)
            .collect()
    };
    assert_eq!(starts(""), [Some(0), Some(600), Some(30), Some(30)]);
    assert_eq!(
        starts("SchedulerParameters=bf_max_job_start=1"),
        [Some(0), Some(600), Some(30), Some(60)]
    );
}

/// `bf_max_job_user=1`: a pass considers one job per user. As above, with
/// J3 and J4 of user 1001 (J1 and J2 of user 1000): the pass at 30
/// considers J2 (user 1000) and J3, starts J3, skips J4; the pass at 60
/// starts J4.
#[test]
fn bf_max_job_user_limits_the_jobs_of_a_user_in_a_pass() {
    let mut jobs = vec![
        job(1, 0, 2, 600, 600),
        job(2, 0, 4, 60, 120),
        job(3, 10, 1, 60, 60),
        job(4, 10, 1, 60, 60),
    ];
    jobs[2].user = 1001;
    jobs[3].user = 1001;
    let r = run(&cluster("SchedulerParameters=bf_max_job_user=1"), jobs);
    let starts: Vec<_> = r.outcomes.iter().map(|o| o.start).collect();
    assert_eq!(starts, [Some(0), Some(600), Some(30), Some(60)]);
}

/// `bf_min_age_reserve=60` in the backfill pass (`_attempt_backfill`,
/// backfill.c 2050-2055: a job pending for less than the age gets
/// `TEST_NOW_ONLY`, so it may start now but is not planned, and the
/// `TRY_LATER` retries at 2455 and 2576 are skipped for it). J1 (2 nodes,
/// 600 s) runs on n[1-2]; J2 (3 nodes, 300 s) is submitted at 0, J3 (2
/// nodes, 1200 s) and then J4 (1 node, runs 300 s of a 1200 s limit) at
/// 100. At 100 J2, 100 s old, blocks the main pass (job_scheduler.c
/// 1955-1966 spares only a younger job), so J3 and J4 are left to the
/// backfill pass at 100, which plans J2 on n[1-3] for [600, 900) (its
/// will-run: J1's end).
///
/// Without the age, J3 is planned too: over [100, 1300) only n4 is free of
/// J2's plan, too few nodes, so it is tried from 900 (where the next slot
/// frees n[1-3], `later_start`) and planned on n[3-4] for [900, 2100). J4
/// then finds no node free of plans over [100, 1300) and is planned on n1
/// from 900. At 600 J1 ends: J2 starts (main pass, n[1-3]); the pass at
/// 600 plans J3 on n[1-2] from 900 (J2's end), and J4 starts on n4,
/// which no plan holds, backfilled. At 900 J2 and J4 end and J3 starts.
///
/// With the age, J3 (0 s old at 100) is not planned: its first candidates
/// are too few and it is not tried later. J4 finds n4 free of plans over
/// [100, 1300) and starts at 100, backfilled; it ends at 400. At 400 J3 is
/// 300 s old and planned; J2 starts at 600 when J1 ends and J3 at 900, as
/// before.
#[test]
fn bf_min_age_reserve_lets_a_young_job_go_unplanned() {
    let jobs = || {
        vec![
            job(1, 0, 2, 600, 600),
            job(2, 0, 3, 300, 300),
            job(3, 100, 2, 1200, 1200),
            job(4, 100, 1, 300, 1200),
        ]
    };
    let without = run(&cluster(""), jobs());
    assert_eq!(
        schedule(&without),
        vec![
            (Some(0), Some(600), false),
            (Some(600), Some(900), false),
            (Some(900), Some(2100), false),
            (Some(600), Some(900), true),
        ]
    );
    assert_eq!(without.outcomes[3].node_list, "n4");
    let with = run(
        &cluster("SchedulerParameters=bf_min_age_reserve=60"),
        jobs(),
    );
    assert_eq!(
        schedule(&with),
        vec![
            (Some(0), Some(600), false),
            (Some(600), Some(900), false),
            (Some(900), Some(2100), false),
            (Some(100), Some(400), true),
        ]
    );
    assert_eq!(with.outcomes[3].node_list, "n4");
}

/// `bf_min_age_reserve=60` in the main pass (`schedule`, job_scheduler.c
/// 1955-1966: a job pending for less than the age that fails to start
/// does not block its partition), and `bf_min_prio_reserve` there
/// (1968-1973: nor does a job below the priority). `bf_interval=1000`
/// keeps backfill out of the way: its passes come at 0 and 1000. J1 (2
/// nodes, 600 s) runs on n[1-2]; J2 (4 nodes, 120 s) cannot start; J3 (2
/// nodes, 1200 s) comes at 10.
///
/// Without either, J2 blocks the partition at 10 and J3 waits: J2 starts
/// when J1 ends (600), J3 when J2 ends (720). With the age, J2 is 10 s old
/// at 10: the main pass goes on to J3, which starts at once on n[3-4], not
/// backfilled; J2 waits for J3's end, 1210. With `bf_min_prio_reserve` above every
/// job's priority (the test's FCFS priorities are below 0xffff0000) it is
/// the same.
#[test]
fn a_young_or_low_priority_job_does_not_block_the_main_pass() {
    let jobs = || {
        vec![
            job(1, 0, 2, 600, 600),
            job(2, 0, 4, 120, 120),
            job(3, 10, 2, 1200, 1200),
        ]
    };
    let without = run(&cluster("SchedulerParameters=bf_interval=1000"), jobs());
    assert_eq!(
        schedule(&without),
        vec![
            (Some(0), Some(600), false),
            (Some(600), Some(720), false),
            (Some(720), Some(1920), false),
        ]
    );
    let expected = vec![
        (Some(0), Some(600), false),
        (Some(1210), Some(1330), false),
        (Some(10), Some(1210), false),
    ];
    for params in ["bf_min_age_reserve=60", "bf_min_prio_reserve=4294901760"] {
        let r = run(
            &cluster(&format!("SchedulerParameters=bf_interval=1000,{params}")),
            jobs(),
        );
        assert_eq!(schedule(&r), expected, "{params}");
        assert_eq!(r.outcomes[2].node_list, "n[3-4]", "{params}");
    }
}

/// What the simulator reads and does not model is named, never dropped:
/// `bf_continue`, the `bf_*` limits, `bf_min_age_reserve` and the select
/// plugin's `bf_busy_nodes` and `bf_window_linear` are modelled;
/// `bf_one_resv_per_job` and preemption are not.
#[test]
fn unmodelled_settings_are_listed() {
    let c = cluster(
        "SchedulerParameters=bf_continue,bf_busy_nodes,bf_one_resv_per_job,bf_max_job_user=3,bf_min_age_reserve=60,bf_window_linear=30\nPreemptType=preempt/qos\nPreemptMode=CANCEL\nTopologyPlugin=topology/none",
    );
    assert_eq!(
        config::unmodelled(&c),
        [
            "SchedulerParameters=bf_one_resv_per_job: not modelled by the simulator (ignored)",
            "PreemptType=preempt/qos: not modelled by the simulator (ignored)",
        ]
    );
    assert!(config::unmodelled(&cluster("")).is_empty());
}

/// EASY and conservative backfilling, derived on paper (4 whole nodes,
/// the test double takes the lowest-numbered free nodes; limits are whole
/// minutes). J1 (0 s, 3 nodes, 240 s) runs on n[1-3]; J2 (0 s, 2 nodes,
/// 120 s) can start when J1 ends: planned on n[1-2] for [240, 360). J3
/// (0 s, 4 nodes, 120 s) and J4 (10 s, 1 node, runs its limit, 420 s).
///
/// EASY plans only J2 (the first job that cannot start): at 10, J4 fits on
/// n4, which no plan holds, and starts, ending at 430; J2 starts at 240;
/// J3, which has no plan, waits for J4: 430.
///
/// Conservative plans J3 too, after J2 on all four nodes: [360, 480). J4
/// on n4 until 430 would delay it, so J4 is planned after J3: J2 at 240,
/// J3 at 360, J4 at 480.
#[test]
fn easy_and_conservative_backfilling_known_answers() {
    let jobs = || {
        vec![
            job(1, 0, 3, 240, 240),
            job(2, 0, 2, 120, 120),
            job(3, 0, 4, 120, 120),
            job(4, 10, 1, 420, 420),
        ]
    };
    let c = cluster("");
    let starts = |style| -> Vec<Option<i64>> {
        let config = SchedConfig {
            backfill: Some(Backfill::pure(style)),
            ..SchedConfig::from_cluster(&c).unwrap()
        };
        run_with(&c, jobs(), config)
            .outcomes
            .iter()
            .map(|o| o.start)
            .collect()
    };
    assert_eq!(
        starts(Style::Easy),
        [Some(0), Some(240), Some(430), Some(10)]
    );
    assert_eq!(
        starts(Style::Conservative),
        [Some(0), Some(240), Some(360), Some(480)]
    );
}

/// Ties and the machines a plan takes: three jobs submitted at the same
/// second run in job order. J1 (2 nodes, 120 s) takes n[1-2]; J2 (3 nodes,
/// 120 s) is planned at 120 on n[1-3], the lowest nodes free then; J3 (1
/// node, 60 s) fits now on n3 before that plan, so both styles start it
/// at 0 on n3 (n4 is left: the double takes the lowest free node).
#[test]
fn pure_backfilling_orders_ties_by_job_and_plans_the_lowest_nodes() {
    let c = cluster("");
    for style in [Style::Easy, Style::Conservative] {
        let config = SchedConfig {
            backfill: Some(Backfill::pure(style)),
            ..SchedConfig::from_cluster(&c).unwrap()
        };
        let r = run_with(
            &c,
            vec![
                job(1, 0, 2, 120, 120),
                job(2, 0, 3, 120, 120),
                job(3, 0, 1, 60, 60),
            ],
            config,
        );
        let got: Vec<_> = r
            .outcomes
            .iter()
            .map(|o| (o.start, o.node_list.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (Some(0), "n[1-2]".to_owned()),
                (Some(120), "n[1-3]".to_owned()),
                (Some(0), "n3".to_owned())
            ],
            "{style:?}"
        );
    }
}

/// Four 4-CPU nodes n[1-4] under the bundled select/cons_tres (`CR_Core`)
/// and priority/basic (FCFS), with `params` as `SchedulerParameters`: the
/// schedule (start, end, backfilled) and each job's nodes. None, with a
/// message, when this build does not bundle cons_tres.
fn through_cons_tres(params: &str, jobs: Vec<TraceJob>) -> Option<(Schedule, Vec<String>)> {
    if slurm_wasm_bundled::find("select/cons_tres").is_none() {
        eprintln!("skipped: select/cons_tres is not bundled in this build");
        return None;
    }
    let text = format!(
        "ClusterName=t\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n\
         SchedulerParameters={params}\n\
         NodeName=n[1-4] CPUs=4 RealMemory=1000\n\
         PartitionName=p Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n"
    );
    let conf = slurm_conf::parse_str(&text, std::path::Path::new("slurm.conf")).unwrap();
    let c = Cluster::from_slurm_conf(&conf).unwrap();
    let workload = Workload {
        source: "test".into(),
        jobs,
        ..Workload::default()
    };
    let input = Input {
        cluster: &c,
        config: SchedConfig::from_cluster(&c).unwrap(),
        workload: &workload,
        default_partition: 0,
    };
    let spec = PolicySpec::parse("select/cons_tres,priority/basic").unwrap();
    let r = crate::compare::run_one(&input, &spec, 1, None).unwrap();
    let nodes = r.outcomes.iter().map(|o| o.node_list.clone()).collect();
    Some((schedule(&r), nodes))
}

/// `bf_window_linear=60` reaches select/cons_tres's WILL_RUN answer
/// (`_will_run_test`, cons_common/job_test.c 1966-2059). At 0 J0 (60 s)
/// takes n1, A n2 (600 s), B n3 (780 s), C n4 (840 s); J0 ends at 60. At
/// 120 P (3 nodes, 120 s) cannot start (only n1 is free) and blocks the
/// main pass; the backfill pass at 120 asks WILL_RUN on n[1-4]. Running
/// jobs are released by end time in batches: the batches start at A's end
/// rounded up to a multiple of 30 s of Unix time (the epoch is one), a
/// full 30 s further when on one (2014-2017: 630); the first takes the jobs ending by 630 + 30 (A), and
/// the window then grows until the next end fits (2036-2042): doubling
/// 30 -> 60 -> 120 -> 240 (870 >= 780); by 60 s, 30 -> 90 -> 150 (780 >=
/// 780). After A, n[1-2] are too few. The second batch doubling takes B
/// and C (840 <= 870): P fits, at the end of the batch's last job, 840
/// (2049-2056), on n[1-3]. By 60 s it takes B only (840 > 780): P fits on
/// n[1-3] at 780. The plan holds n[1-3] from 840, or from 780.
///
/// Q (1 node, runs 660 s of a 660 s limit) comes at 150 and meets the
/// plan in the pass at 150 (`bf_interval` after 120): over [150, 810) n1
/// is free of a plan from 840, so Q starts on n1, backfilled, and ends at
/// 810, which holds P back until then (B ends at 780, but n1 is Q's): P
/// starts at 810. With the plan from 780, n1 is not free over [150, 810):
/// Q is planned on n4 after C (840) and P starts at 780 on n[1-3], when B
/// ends; Q at 840.
#[test]
fn bf_window_linear_reaches_cons_tres_will_run() {
    let jobs = || {
        vec![
            job(10, 0, 1, 60, 60),
            job(11, 0, 1, 600, 600),
            job(12, 0, 1, 780, 780),
            job(13, 0, 1, 840, 840),
            job(14, 120, 3, 120, 120),
            job(15, 150, 1, 660, 660),
        ]
    };
    let Some(doubling) = through_cons_tres("bf_interval=30", jobs()) else {
        return;
    };
    let head = [
        (Some(0), Some(60), false),
        (Some(0), Some(600), false),
        (Some(0), Some(780), false),
        (Some(0), Some(840), false),
    ];
    assert_eq!(doubling.0[..4], head);
    assert_eq!(
        doubling.0[4..],
        [(Some(810), Some(930), false), (Some(150), Some(810), true)]
    );
    assert_eq!(doubling.1, ["n1", "n2", "n3", "n4", "n[1-3]", "n1"]);
    let linear = through_cons_tres("bf_interval=30,bf_window_linear=60", jobs()).unwrap();
    assert_eq!(linear.0[..4], head);
    assert_eq!(
        linear.0[4..],
        [
            (Some(780), Some(900), false),
            (Some(840), Some(1500), false)
        ]
    );
    assert_eq!(linear.1, ["n1", "n2", "n3", "n4", "n[1-3]", "n4"]);
}

/// `bf_busy_nodes` reaches select/cons_tres's WILL_RUN answer
/// (`_will_run_test`, cons_common/job_test.c 2043-2048, passes it as
/// `prefer_alloc_nodes` to the tests after releasing running jobs, and
/// `_eval_nodes_busy`, cons_tres/job_test.c 1196-1373, then takes the
/// nodes busy now first, in index order, then the idle ones). At 0 Ja (2
/// nodes, 60 s) takes n[1-2], J1 n3 and J2 n4 (600 s each); Ja ends at
/// 60. At 120 J3 (3 nodes, 600 s) cannot start (n[1-2] are free) and
/// blocks the main pass; J4 (1 node, 1200 s) comes right after it. In the
/// backfill pass at 120 J3's WILL_RUN releases J1 and J2 (one batch, both
/// end at 600): all four nodes are free then. Without `bf_busy_nodes`
/// cons_tres takes the first three of that run of nodes, n[1-3]; with it,
/// the busy n3 and n4 first, then n1. J4's candidates over [120, 1320)
/// are the node the plan leaves: n4 (busy until 600: J4 is planned on it
/// from 600 and starts there when J1 and J2 end, in the main pass after
/// J3), or n2 (idle: J4 starts at 120, backfilled, and J3 starts at 600
/// on n[1,3-4]).
#[test]
fn bf_busy_nodes_reaches_cons_tres_will_run() {
    let jobs = || {
        vec![
            job(20, 0, 2, 60, 60),
            job(21, 0, 1, 600, 600),
            job(22, 0, 1, 600, 600),
            job(23, 120, 3, 600, 600),
            job(24, 120, 1, 1200, 1200),
        ]
    };
    let Some(spread) = through_cons_tres("bf_interval=30", jobs()) else {
        return;
    };
    let head = [
        (Some(0), Some(60), false),
        (Some(0), Some(600), false),
        (Some(0), Some(600), false),
    ];
    assert_eq!(spread.0[..3], head);
    assert_eq!(
        spread.0[3..],
        [
            (Some(600), Some(1200), false),
            (Some(600), Some(1800), false)
        ]
    );
    assert_eq!(spread.1, ["n[1-2]", "n3", "n4", "n[1-3]", "n4"]);
    let busy = through_cons_tres("bf_interval=30,bf_busy_nodes", jobs()).unwrap();
    assert_eq!(busy.0[..3], head);
    assert_eq!(
        busy.0[3..],
        [
            (Some(600), Some(1200), false),
            (Some(120), Some(1320), true)
        ]
    );
    assert_eq!(busy.1, ["n[1-2]", "n3", "n4", "n[1,3-4]", "n2"]);
}
