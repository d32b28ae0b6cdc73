//! Scenario tests of [`Linear`] through the contract's records
//! (select_linear.c; each test names the Slurm function and the case it
//! checks).

use slurm_wasm_sdk::select::{
    JobTestFlags, JobTestMode, JobTestRequest, PluginInfoField, PluginInfoValue, PreemptMode,
    PreempteeCandidate, ReservationRequest, SelectConfig,
};
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{
    Job, JobState, Node, Oversubscribe, Partition, SelectTypeParams, ShareRequest,
};
use slurm_wasm_sdk::{codes, Bitmap};

use crate::Linear;

const T: i64 = 1_700_000_000;

/// `n` nodes of 1 socket × 4 cores × 1 thread, 1000 MB, all in partition 0.
fn nodes(n: u32) -> Vec<Node> {
    (0..n)
        .map(|i| fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000))
        .collect()
}

/// `SelectTypeParameters=<params>` as the flags 22.05 sets for them (the
/// tokens linear's tests use).
fn config(params: &[&str], partitions: Vec<Partition>) -> SelectConfig {
    let mut cluster = fixtures::cluster_config();
    cluster.select_type_parameters = params.iter().fold(SelectTypeParams::empty(), |all, p| {
        all | match *p {
            "CR_Memory" => SelectTypeParams::MEMORY,
            "CR_Core_Memory" => SelectTypeParams::CORE | SelectTypeParams::MEMORY,
            "CR_ONE_TASK_PER_CORE" => SelectTypeParams::ONE_TASK_PER_CORE,
            other => panic!("no test flags for {other}"),
        }
    });
    SelectConfig {
        cluster,
        partitions,
    }
}

fn linear(n: u32, params: &[&str]) -> Linear {
    let mut l = Linear::init(&config(params, vec![fixtures::partition(0, "p0", n)])).unwrap();
    l.node_init(&nodes(n)).unwrap();
    l
}

/// A pending job asking for `n` nodes (and `4n` CPUs).
fn pending(id: u32, n: u32) -> Job {
    let mut job = fixtures::job(id);
    job.details.min_nodes = n;
    job.details.min_cpus = 4 * n;
    job.details.num_tasks = 4 * n;
    job
}

fn request(job: Job, n_nodes: u32, mode: JobTestMode) -> JobTestRequest {
    let n = job.details.min_nodes;
    JobTestRequest {
        job,
        candidates: (&Bitmap::full(n_nodes as usize)).into(),
        min_nodes: n,
        max_nodes: n,
        req_nodes: n,
        mode,
        flags: JobTestFlags::empty(),
        preemptee_candidates: Vec::new(),
        excluded_cores: None,
    }
}

fn chosen(r: &slurm_wasm_sdk::select::JobTestResult) -> Vec<usize> {
    Bitmap::try_from(&r.resources.nodes)
        .unwrap()
        .ones()
        .collect()
}

/// Places `job` with RUN_NOW on `n_nodes` nodes and starts it, ending at `end`.
fn start(l: &mut Linear, mut job: Job, n_nodes: u32, end: i64) -> Job {
    let r = l
        .job_test(&request(job.clone(), n_nodes, JobTestMode::RunNow), T)
        .unwrap();
    job.state = JobState::Running;
    job.start_time = T;
    job.end_time = end;
    job.resources = Some(r.resources);
    l.job_begin(&job).unwrap();
    job
}

/// Starts `job` on exactly `nodes` (as the controller would after its own test).
fn start_on(l: &mut Linear, mut job: Job, n_nodes: u32, on: &[usize], end: i64) -> Job {
    let mut req = request(job.clone(), n_nodes, JobTestMode::RunNow);
    req.candidates = (&Bitmap::from_bits(n_nodes as usize, on.iter().copied())).into();
    let r = l.job_test(&req, T).unwrap();
    assert_eq!(chosen(&r), on.to_vec());
    job.state = JobState::Running;
    job.end_time = end;
    job.resources = Some(r.resources);
    l.job_begin(&job).unwrap();
    job
}

#[test]
fn identity_is_slurms() {
    // select_linear.c: select/linear, id 102, version 22.05.8.
    use slurm_wasm_sdk::select::{Export, IdentityGuest};
    let id = Export::<Linear>::describe();
    assert_eq!(id.plugin_type, "select/linear");
    assert_eq!(id.plugin_name, "Linear node selection plugin");
    assert_eq!(id.plugin_id, Some(102));
    assert_eq!(id.plugin_version, 0x160508);
}

#[test]
fn init_refuses_consumable_resource_parameters() {
    // select_g_init (common/select.c): CR_CPU/CR_Core/CR_Socket are fatal
    // for linear.
    let err = Linear::init(&config(&["CR_Core_Memory"], Vec::new())).unwrap_err();
    assert_eq!(err.code, codes::EINVAL);
    assert!(
        Linear::init(&config(&["CR_Memory"], Vec::new()))
            .unwrap()
            .config()
            .memory
    );
}

#[test]
fn run_now_gives_whole_nodes() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_build_select_struct`: every core, configured CPUs, ncpus = Σ CPUs, memory with CR_Memory.
    let l = linear(4, &["CR_Memory"]);
    let mut job = pending(1, 2);
    job.details.memory = slurm_wasm_sdk::types::MemoryRequest::PerNode(300);
    let r = l
        .job_test(&request(job, 4, JobTestMode::RunNow), T)
        .unwrap();
    assert_eq!(chosen(&r), vec![0, 1]);
    assert!(r.resources.whole_nodes);
    assert_eq!(r.resources.ncpus, 8);
    assert_eq!(r.resources.per_node[0].cpus, 4);
    assert_eq!(r.resources.per_node[0].memory, 300);
    assert_eq!(
        Bitmap::try_from(&r.resources.per_node[1].cores)
            .unwrap()
            .count(),
        4
    );
    assert_eq!(r.start_time, None);
}

#[test]
fn run_now_best_fit_takes_the_tightest_hole() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`: node 3 busy leaves sets {0,1,2} and {4,5}; -N2 takes {4,5}.
    let mut l = linear(6, &[]);
    start_on(&mut l, pending(1, 1), 6, &[3], T + 100);
    let r = l
        .job_test(&request(pending(2, 2), 6, JobTestMode::RunNow), T)
        .unwrap();
    assert_eq!(chosen(&r), vec![4, 5]);
}

#[test]
fn exclusive_nodes_are_not_shared_with_oversubscribe_no() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `select_p_job_test` (OverSubscribe=NO => max_share 1) and
    // `_job_count_bitmap`, which refuses a node another job holds exclusively (exclusive_cnt).
    let mut l = linear(1, &[]);
    start(&mut l, pending(1, 1), 1, T + 100);
    let err = l
        .job_test(&request(pending(2, 1), 1, JobTestMode::RunNow), T)
        .unwrap_err();
    assert_eq!(err.code, codes::EINVAL);
}

#[test]
fn force_2_counts_jobs_of_every_partition() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_count_bitmap`, which sums the run/tot job counts of
    // every partition on the node, and the slurm.conf man page: FORCE:2 on two partitions
    // sharing node n0; one job from each partition fills the node.
    let mut p0 = fixtures::partition(0, "p0", 1);
    p0.oversubscribe = Oversubscribe::Force(2);
    let mut p1 = fixtures::partition(1, "p1", 1);
    p1.oversubscribe = Oversubscribe::Force(2);
    let mut l = Linear::init(&config(&[], vec![p0, p1])).unwrap();
    let mut n = nodes(1);
    n[0].partitions = vec![0, 1];
    l.node_init(&n).unwrap();
    let mut a = pending(1, 1);
    a.partitions = vec![1];
    start(&mut l, a, 1, T + 100);
    // B (p0) shares n0 with A (job mate on the second pass).
    let b = start(&mut l, pending(2, 1), 1, T + 100);
    assert_eq!(b.resources.as_ref().unwrap().ncpus, 4);
    // C (p0) sees two jobs on n0 although p0 holds only one: refused.
    assert!(l
        .job_test(&request(pending(3, 1), 1, JobTestMode::RunNow), T)
        .is_err());
    // With only p0's job counted it would fit: TEST_ONLY ignores counts.
    assert!(l
        .job_test(&request(pending(3, 1), 1, JobTestMode::TestOnly), T)
        .is_ok());
}

#[test]
fn oversubscribe_yes_needs_the_job_to_ask() {
    // Controller's share resolution: YES:2 shares only with --oversubscribe.
    let mut p0 = fixtures::partition(0, "p0", 1);
    p0.oversubscribe = Oversubscribe::Yes(2);
    let mut l = Linear::init(&config(&[], vec![p0])).unwrap();
    l.node_init(&nodes(1)).unwrap();
    let mut a = pending(1, 1);
    a.details.share = ShareRequest::Oversubscribe;
    start(&mut l, a, 1, T + 100);
    assert!(l
        .job_test(&request(pending(2, 1), 1, JobTestMode::RunNow), T)
        .is_err());
    let mut b = pending(2, 1);
    b.details.share = ShareRequest::Oversubscribe;
    assert!(l.job_test(&request(b, 1, JobTestMode::RunNow), T).is_ok());
}

#[test]
fn will_run_waits_for_the_job_that_frees_enough_nodes() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_will_run_test`, running jobs removed in end-time order:
    // J1 on n0,n1 until t+100, J2 on n2,n3 until t+50; a -N3 job does not fit once J2 ends
    // (2 nodes free), fits once J1 ends too, so it starts at t+100 on n0-n2.
    let mut l = linear(4, &[]);
    start_on(&mut l, pending(1, 2), 4, &[0, 1], T + 100);
    start_on(&mut l, pending(2, 2), 4, &[2, 3], T + 50);
    let r = l
        .job_test(&request(pending(3, 3), 4, JobTestMode::WillRun), T)
        .unwrap();
    assert_eq!(r.start_time, Some(T + 100));
    assert_eq!(chosen(&r), vec![0, 1, 2]);
    assert!(r.preemptees.is_empty());
    // Reservation mode is treated as will-run.
    let r = l
        .job_test(&request(pending(3, 3), 4, JobTestMode::Reservation), T)
        .unwrap();
    assert_eq!(r.start_time, Some(T + 100));
}

#[test]
fn resume_moves_the_planned_end() {
    // slurmctld moves a resumed job's end by the time it was suspended
    // (job_mgr.c `_job_suspend_op`). Anchor (linear-CR_Memory-suspend:
    // `scontrol suspend s1`, 12 s later `scontrol resume s1`): the next
    // `--test-only -w n1` answered s1's end 12 s later than before.
    let mut l = linear(1, &[]);
    let mut job = start(&mut l, pending(1, 1), 1, T + 100);
    let will_run = |l: &Linear| {
        l.job_test(&request(pending(2, 1), 1, JobTestMode::WillRun), T)
            .unwrap()
            .start_time
    };
    assert_eq!(will_run(&l), Some(T + 100));
    for (indefinite, end) in [(true, T + 112), (false, T + 130)] {
        l.job_suspend(&job, indefinite).unwrap();
        job.end_time = end;
        l.job_resume(&job, indefinite).unwrap();
        assert_eq!(will_run(&l), Some(end), "{indefinite}");
    }
}

#[test]
fn will_run_now_and_past_end_times() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_will_run_test`: success now => start = now; an end time already passed => now + 1.
    let mut l = linear(2, &[]);
    let r = l
        .job_test(&request(pending(1, 1), 2, JobTestMode::WillRun), T)
        .unwrap();
    assert_eq!(r.start_time, Some(T));
    start(&mut l, pending(1, 2), 2, T - 10);
    let r = l
        .job_test(&request(pending(2, 1), 2, JobTestMode::WillRun), T)
        .unwrap();
    assert_eq!(r.start_time, Some(T + 1));
}

#[test]
fn will_run_with_preemptable_jobs_starts_now() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_will_run_test`: preemptable candidates are removed from the
    // copy at once, so a fit then => start = now; preemptees = candidates overlapping the
    // chosen nodes.
    let mut l = linear(2, &[]);
    start_on(&mut l, pending(1, 1), 2, &[0], T + 100);
    start_on(&mut l, pending(2, 1), 2, &[1], T + 200);
    let mut req = request(pending(3, 1), 2, JobTestMode::WillRun);
    req.preemptee_candidates = vec![PreempteeCandidate {
        job_id: 2,
        mode: PreemptMode::Requeue,
    }];
    let r = l.job_test(&req, T).unwrap();
    assert_eq!(r.start_time, Some(T));
    assert_eq!(chosen(&r), vec![1]);
    assert_eq!(r.preemptees, vec![2]);
}

#[test]
fn run_now_preemption_reorders_and_reports_needed_jobs() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_run_now`'s preemption simulation: J1..J3 on n0..n2; -N2 with candidates
    // [J1, J2, J3]. Pass 1 succeeds after removing J1 and J2 (J2 = 9999,
    // J3 = 0, sorted: J2, J1, J3); pass 2 succeeds after J2 and J1.
    let mut l = linear(3, &[]);
    for (id, node) in [(1, 0), (2, 1), (3, 2)] {
        start_on(&mut l, pending(id, 1), 3, &[node], T + 100);
    }
    let mut req = request(pending(4, 2), 3, JobTestMode::RunNow);
    req.preemptee_candidates = [1, 2, 3]
        .into_iter()
        .map(|job_id| PreempteeCandidate {
            job_id,
            mode: PreemptMode::Requeue,
        })
        .collect();
    let r = l.job_test(&req, T).unwrap();
    assert_eq!(chosen(&r), vec![0, 1]);
    assert_eq!(r.preemptees, vec![2, 1]);
}

#[test]
fn run_now_single_candidate_is_used_directly() {
    let mut l = linear(1, &[]);
    start(&mut l, pending(1, 1), 1, T + 100);
    let mut req = request(pending(2, 1), 1, JobTestMode::RunNow);
    req.preemptee_candidates = vec![PreempteeCandidate {
        job_id: 1,
        mode: PreemptMode::Cancel,
    }];
    let r = l.job_test(&req, T).unwrap();
    assert_eq!(r.preemptees, vec![1]);
}

#[test]
fn test_only_ignores_usage() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_test_only`: limits NO_SHARE_LIMIT, usage not checked.
    let mut l = linear(2, &["CR_Memory"]);
    start(&mut l, pending(1, 2), 2, T + 100);
    let r = l
        .job_test(&request(pending(2, 2), 2, JobTestMode::TestOnly), T)
        .unwrap();
    assert_eq!(chosen(&r), vec![0, 1]);
    assert!(l
        .job_test(&request(pending(2, 3), 2, JobTestMode::TestOnly), T)
        .is_err());
}

#[test]
fn fini_after_begin_restores_the_tables() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`: job_fini reverses job_begin.
    let mut l = linear(3, &["CR_Memory"]);
    let fresh = l.usage().clone();
    let job = start(&mut l, pending(1, 2), 3, T + 100);
    assert_ne!(l.usage(), &fresh);
    l.job_fini(&job).unwrap();
    assert_eq!(l.usage(), &fresh);
    // A second fini: the job is no longer allocated => SLURM_ERROR.
    assert_eq!(l.job_fini(&job).unwrap_err().code, codes::SLURM_ERROR);
}

#[test]
fn suspend_and_resume_keep_slurms_asymmetry() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`: gang suspends are ignored; an indefinite suspend keeps the
    // tot counter, the resume then adds it again (tot = 2, run = 0).
    let mut l = linear(1, &["CR_Memory"]);
    let job = start(&mut l, pending(1, 1), 1, T + 100);
    let before = l.usage().clone();
    l.job_suspend(&job, false).unwrap();
    assert_eq!(l.usage(), &before);
    l.job_suspend(&job, true).unwrap();
    let n0 = &l.usage().nodes[0];
    assert_eq!((n0.parts[0].run, n0.parts[0].tot), (0, 1));
    assert_eq!(n0.exclusive_cnt, 0);
    assert_eq!(n0.alloc_memory, 0);
    l.job_resume(&job, true).unwrap();
    let n0 = &l.usage().nodes[0];
    assert_eq!((n0.parts[0].run, n0.parts[0].tot), (0, 2));
    assert_eq!(n0.exclusive_cnt, 1);
    assert_eq!(
        n0.alloc_memory, 1000,
        "resume charges the whole node's memory"
    );
}

#[test]
fn save_restore_gives_identical_decisions() {
    let mut l = linear(4, &["CR_Memory"]);
    start_on(&mut l, pending(1, 2), 4, &[0, 1], T + 100);
    start_on(&mut l, pending(2, 1), 4, &[3], T + 50);
    let blob = l.state_save();
    let mut other = linear(4, &["CR_Memory"]);
    other.state_restore(&blob).unwrap();
    assert_eq!(other.usage(), l.usage());
    for mode in [
        JobTestMode::RunNow,
        JobTestMode::WillRun,
        JobTestMode::TestOnly,
    ] {
        for n in 1..=4 {
            let a = l.job_test(&request(pending(9, n), 4, mode), T);
            let b = other.job_test(&request(pending(9, n), 4, mode), T);
            assert_eq!(
                a.map(|r| (chosen(&r), r.start_time)),
                b.map(|r| (chosen(&r), r.start_time))
            );
        }
    }
    assert_eq!(other.state_save(), blob);
}

#[test]
fn corrupt_state_is_refused_and_nothing_changes() {
    let mut l = linear(2, &[]);
    start(&mut l, pending(1, 1), 2, T + 100);
    let blob = l.state_save();
    let mut target = linear(2, &[]);
    let before = target.usage().clone();
    for i in 0..blob.len() {
        let mut bad = blob.clone();
        bad[i] ^= 0x21;
        assert_eq!(
            target.state_restore(&bad).unwrap_err().code,
            codes::EINVAL,
            "byte {i}"
        );
        assert_eq!(target.usage(), &before);
    }
    assert!(target.state_restore(&blob[..blob.len() - 1]).is_err());
    // A blob for another node table is refused too.
    let mut bigger = linear(3, &[]);
    let err = bigger.state_restore(&blob).unwrap_err();
    assert!(err.message.contains("2 nodes"), "{}", err.message);
}

#[test]
fn job_init_rebuilds_from_running_jobs() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_init_node_cr`: tables rebuilt from RUNNING/SUSPENDED jobs.
    let mut l = linear(2, &["CR_Memory"]);
    let job = start(&mut l, pending(1, 1), 2, T + 100);
    let expected = l.usage().clone();
    let mut done = pending(2, 1);
    done.state = JobState::Complete;
    let mut other = linear(2, &["CR_Memory"]);
    other.job_init(&[job, done]).unwrap();
    assert_eq!(other.usage(), &expected);
}

#[test]
fn nodeinfo_set_all_reports_changes_once() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `select_p_select_nodeinfo_set_all`: allocated nodes report all CPUs; unchanged => 1900.
    let mut l = linear(2, &["CR_Memory"]);
    start(&mut l, pending(1, 1), 2, T + 100);
    l.nodeinfo_set_all().unwrap();
    let n0 = l.nodeinfo(0).unwrap();
    assert_eq!((n0.alloc_cpus, n0.alloc_memory), (4, 1000));
    // Real Slurm 22.05.8 under select/linear (the anchor, `-w n1 -n1`):
    // AllocTRES=cpu=8,mem=4000M,billing=8, the node's configured TRES.
    assert_eq!(
        n0.tres_alloc_fmt_str.as_deref(),
        Some("cpu=4,mem=1000M,billing=4")
    );
    assert_eq!(l.nodeinfo(1).unwrap().alloc_cpus, 0);
    assert_eq!(
        l.nodeinfo_set_all().unwrap_err().code,
        codes::SLURM_NO_CHANGE_IN_DATA
    );
    assert!(l.nodeinfo(7).is_err());
}

#[test]
fn job_ready_needs_powered_nodes() {
    // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `select_p_job_ready`: 0 unless the job runs (or is suspended) on
    // nodes neither powered down nor powering up.
    let mut l = linear(2, &[]);
    let job = start(&mut l, pending(1, 1), 2, T + 100);
    assert!(l.job_ready(&job).unwrap());
    assert!(!l.job_ready(&pending(2, 1)).unwrap());
    let mut n = nodes(2);
    n[0].state.flags = slurm_wasm_sdk::types::NodeStateFlags::POWERING_UP;
    l.update_node(&n[0]).unwrap();
    assert!(!l.job_ready(&job).unwrap());
}

#[test]
fn resv_test_is_first_fit() {
    let l = linear(4, &[]);
    let req = ReservationRequest {
        node_count: 2,
        core_count: 0,
        cores_per_node: Vec::new(),
        available: (&Bitmap::from_bits(4, [1, 2, 3])).into(),
        excluded_cores: None,
        flags: 0,
    };
    let r = l.resv_test(&req).unwrap();
    assert_eq!(
        Bitmap::try_from(&r.nodes)
            .unwrap()
            .ones()
            .collect::<Vec<_>>(),
        vec![1, 2]
    );
    let too_many = ReservationRequest {
        node_count: 4,
        ..req.clone()
    };
    assert_eq!(
        l.resv_test(&too_many).unwrap_err().code,
        codes::ESLURM_NODES_BUSY
    );
    // select_p_resv_test without topology returns bit_pick_cnt(avail, 0):
    // an empty bitmap, which is success (select_linear.c 22.05).
    let cores = ReservationRequest {
        node_count: 0,
        core_count: 2,
        ..req
    };
    let r = l.resv_test(&cores).unwrap();
    assert_eq!(Bitmap::try_from(&r.nodes).unwrap().count(), 0);
    assert_eq!(Bitmap::try_from(&r.nodes).unwrap().len(), 4);
    assert!(r.cores.is_none());
}

#[test]
fn info_answers_slurms_defaults() {
    let l = linear(1, &[]);
    assert!(matches!(
        l.info(PluginInfoField::CrPlugin),
        PluginInfoValue::Number(0)
    ));
    assert!(matches!(
        l.info(PluginInfoField::SingleJobTest),
        PluginInfoValue::Flag(false)
    ));
    assert!(
        matches!(l.info(PluginInfoField::ConfigInfo), PluginInfoValue::Config(c) if c.is_empty())
    );
}

#[test]
fn expand_moves_everything_to_the_target() {
    let mut l = linear(3, &[]);
    let a = start_on(&mut l, pending(1, 1), 3, &[0], T + 100);
    let b = start_on(&mut l, pending(2, 1), 3, &[2], T + 100);
    let r = l.job_expand(&a, &b).unwrap();
    assert_eq!(
        Bitmap::try_from(&r.nodes)
            .unwrap()
            .ones()
            .collect::<Vec<_>>(),
        vec![0, 2]
    );
    assert_eq!(r.ncpus, 8);
    assert!(!l.usage().tot_jobs.contains(&1));
    assert_eq!(l.usage().nodes[0].parts[0].run, 1);
    assert_eq!(l.job_expand(&b, &b).unwrap_err().code, codes::SLURM_ERROR);
}

#[test]
fn expand_joins_the_devices_of_sharing_jobs() {
    // 22.05 select_p_job_expand (select_linear.c) hands the GRES to the
    // target with `gres_job_merge`, which joins the per-node device maps:
    // two jobs sharing n0 (FORCE:2) with gpu:1 each (devices 0 and 1, the
    // lowest free ones) leave a merged job holding gpu:2 on devices 0-1.
    use slurm_wasm_sdk::types::{GresCount, GresRequest, GresScope};
    let mut n = nodes(1);
    n[0].gres = vec![GresCount {
        name: "gpu".into(),
        type_name: None,
        count: 2,
    }];
    let mut p0 = fixtures::partition(0, "p0", 1);
    p0.oversubscribe = Oversubscribe::Force(2);
    let mut l = Linear::init(&config(&[], vec![p0])).unwrap();
    l.node_init(&n).unwrap();
    let gpu_job = |id: u32| {
        let mut job = pending(id, 1);
        job.details.gres = vec![GresRequest {
            name: "gpu".into(),
            type_name: None,
            scope: GresScope::PerNode,
            count: 1,
            cpus_per_gres: None,
            mem_per_gres: None,
        }];
        job
    };
    let devices = |g: &slurm_wasm_sdk::types::GresAllocation| {
        Bitmap::try_from(g.devices.as_ref().unwrap())
            .unwrap()
            .ones()
            .collect::<Vec<_>>()
    };
    let a = start(&mut l, gpu_job(1), 1, T + 100);
    let b = start(&mut l, gpu_job(2), 1, T + 100);
    let held = |j: &Job| devices(&j.resources.as_ref().unwrap().per_node[0].gres[0]);
    assert_eq!((held(&a), held(&b)), (vec![0], vec![1]));
    let r = l.job_expand(&a, &b).unwrap();
    let gres = &r.per_node[0].gres;
    assert_eq!(gres.len(), 1);
    assert_eq!((gres[0].count, devices(&gres[0])), (2, vec![0, 1]));
}

#[test]
fn resized_releases_the_node() {
    let mut l = linear(2, &[]);
    let job = start(&mut l, pending(1, 2), 2, T + 100);
    l.job_resized(&job, 1).unwrap();
    assert_eq!(l.usage().nodes[1].exclusive_cnt, 0);
    assert!(l
        .job_test(&request(pending(2, 1), 2, JobTestMode::RunNow), T)
        .is_ok());
    // Slurm's select_p_job_resized logs a duplicate relinquish and still
    // returns SLURM_SUCCESS; nothing changes.
    let before = l.usage().clone();
    l.job_resized(&job, 1).unwrap();
    assert_eq!(l.usage(), &before, "node 1 already released");
}

#[test]
fn malformed_requests_are_einval() {
    let l = linear(2, &[]);
    let mut req = request(pending(1, 1), 2, JobTestMode::RunNow);
    req.candidates = (&Bitmap::full(3)).into();
    let err = l.job_test(&req, T).unwrap_err();
    assert_eq!(err.code, codes::EINVAL);
    assert!(err.message.contains("candidates"), "{}", err.message);
    let mut job = pending(1, 1);
    job.partitions = vec![5];
    let err = l
        .job_test(&request(job, 2, JobTestMode::RunNow), T)
        .unwrap_err();
    assert!(err.message.contains("partition 5"), "{}", err.message);
}

#[test]
fn gres_options_of_cons_tres_are_refused() {
    // Anchor (real Slurm 22.05, linear): `--gpus-per-task=1` is refused with
    // "Requested GRES option unsupported by configured SelectType plugin".
    use slurm_wasm_sdk::types::{GresCount, GresRequest, GresScope};
    let mut n = nodes(2);
    for node in &mut n {
        node.gres = vec![GresCount {
            name: "gpu".into(),
            type_name: None,
            count: 2,
        }];
    }
    // FORCE:4: nodes are shared, only GRES can keep a job out.
    let mut p0 = fixtures::partition(0, "p0", 2);
    p0.oversubscribe = Oversubscribe::Force(4);
    let mut l = Linear::init(&config(&[], vec![p0])).unwrap();
    l.node_init(&n).unwrap();
    let gpu = |scope, count| GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope,
        count,
        cpus_per_gres: None,
        mem_per_gres: None,
    };
    let mut job = pending(1, 1);
    job.details.gres = vec![gpu(GresScope::PerTask, 1)];
    let err = l
        .job_test(&request(job, 2, JobTestMode::RunNow), T)
        .unwrap_err();
    assert_eq!(err.code, 2122);
    // Per-node GRES is filtered and consumed: two jobs of gpu:2 fill both
    // nodes, a third cannot run now. A job sharing its node is given the
    // devices (anchor, OverSubscribe=FORCE:2: a12 `-n2 --gres=gpu:2`
    // showed gpu:2(IDX:0-1)).
    let mut job = pending(1, 1);
    job.details.gres = vec![gpu(GresScope::PerNode, 2)];
    let first = start(&mut l, job.clone(), 2, T + 100);
    let held = &first.resources.as_ref().unwrap().per_node[0].gres;
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].count, 2);
    assert_eq!(
        Bitmap::try_from(held[0].devices.as_ref().unwrap())
            .unwrap()
            .ones()
            .collect::<Vec<_>>(),
        vec![0, 1]
    );
    job.job_id = 2;
    let second = start(&mut l, job.clone(), 2, T + 100);
    assert_eq!(
        Bitmap::try_from(&second.resources.as_ref().unwrap().nodes)
            .unwrap()
            .ones()
            .collect::<Vec<_>>(),
        vec![1],
        "n0's GPUs are taken"
    );
    // The devices travel in the state blob (version 3).
    let blob = l.state_save();
    let mut p0 = fixtures::partition(0, "p0", 2);
    p0.oversubscribe = Oversubscribe::Force(4);
    let mut restored = Linear::init(&config(&[], vec![p0])).unwrap();
    restored.node_init(&n).unwrap();
    restored.state_restore(&blob).unwrap();
    assert_eq!(restored.state_save(), blob);
    job.job_id = 3;
    assert!(l
        .job_test(&request(job.clone(), 2, JobTestMode::RunNow), T)
        .is_err());
    assert!(l
        .job_test(&request(job, 2, JobTestMode::TestOnly), T)
        .is_ok());
}

/// Nodes of 1 socket × 4 cores with the given memories (MB), in partition 0.
fn nodes_with_memory(memory: &[u64]) -> Linear {
    let n = memory.len() as u32;
    let mut l = Linear::init(&config(
        &["CR_Memory"],
        vec![fixtures::partition(0, "p0", n)],
    ))
    .unwrap();
    let nodes: Vec<Node> = memory
        .iter()
        .enumerate()
        .map(|(i, &m)| fixtures::node(i as u32, &format!("n{i}"), 1, 4, 1, m))
        .collect();
    l.node_init(&nodes).unwrap();
    l
}

#[test]
fn no_memory_request_is_charged_the_least_node_memory() {
    // select_linear.c (22.05) `_build_select_struct`: a job without a
    // memory request under CR_Memory gets memory_allocated = each node's
    // RealMemory, and pn_min_memory = the least of them, which job_begin,
    // job_fini and `_init_node_cr` then charge on every node.
    let mut l = nodes_with_memory(&[1000, 2000, 4000]);
    let job = start(&mut l, pending(1, 2), 3, T + 100);
    let per_node: Vec<u64> = job
        .resources
        .as_ref()
        .unwrap()
        .per_node
        .iter()
        .map(|n| n.memory)
        .collect();
    assert_eq!(per_node, vec![1000, 2000], "memory_allocated per node");
    let charged: Vec<u64> = l.usage().nodes.iter().map(|n| n.alloc_memory).collect();
    assert_eq!(charged, vec![1000, 1000, 0], "pn_min_memory on each node");
    let mut rebuilt = nodes_with_memory(&[1000, 2000, 4000]);
    rebuilt.job_init(std::slice::from_ref(&job)).unwrap();
    assert_eq!(rebuilt.usage(), l.usage(), "a rebuild charges the same");
    rebuilt.job_fini(&job).unwrap();
    assert_eq!(
        rebuilt.usage(),
        nodes_with_memory(&[1000, 2000, 4000]).usage()
    );
}

#[test]
fn no_memory_request_needs_the_first_nodes_memory_everywhere() {
    // select_linear.c `_job_count_bitmap` (22.05 and HEAD): without a
    // memory request under CR_Memory, job_memory_node is set from the
    // first node reaching the memory test and kept for every later node,
    // so a 4000 MB node after an 8000 MB one is refused.
    let l = nodes_with_memory(&[8000, 4000]);
    for mode in [JobTestMode::RunNow, JobTestMode::WillRun] {
        assert!(
            l.job_test(&request(pending(1, 2), 2, mode), T).is_err(),
            "{mode:?}"
        );
    }
    assert!(l
        .job_test(&request(pending(1, 2), 2, JobTestMode::TestOnly), T)
        .is_ok());
    let l = nodes_with_memory(&[4000, 8000]);
    let r = l
        .job_test(&request(pending(1, 2), 2, JobTestMode::RunNow), T)
        .unwrap();
    assert_eq!(chosen(&r), vec![0, 1]);
}

#[test]
fn a_gang_suspended_job_is_no_job_mate() {
    // select_linear.c `_find_job_mate` takes only IS_JOB_RUNNING jobs; a
    // gang suspend (job_suspend without indf_susp) leaves the tables alone.
    let mut l = Linear::init(&config(&[], vec![force_2()])).unwrap();
    l.node_init(&nodes(4)).unwrap();
    let first = start_on(&mut l, pending(1, 2), 4, &[0, 1], T + 100);
    start_on(&mut l, pending(2, 2), 4, &[2, 3], T + 100);
    let tables = l.usage().clone();
    // Where a two-node job that shares goes now.
    let mate = |l: &Linear| {
        chosen(
            &l.job_test(&request(pending(3, 2), 4, JobTestMode::RunNow), T)
                .unwrap(),
        )
    };
    assert_eq!(mate(&l), vec![0, 1], "job 1 is the first mate");
    l.job_suspend(&first, false).unwrap();
    assert_eq!(l.usage(), &tables, "a gang suspend changes no table");
    assert_eq!(mate(&l), vec![2, 3], "job 2 is the only running mate");
    l.job_resume(&first, false).unwrap();
    assert_eq!(mate(&l), vec![0, 1]);
    let blob = l.state_save();
    l.job_suspend(&first, false).unwrap();
    let mut restored = Linear::init(&config(&[], vec![force_2()])).unwrap();
    restored.node_init(&nodes(4)).unwrap();
    restored.state_restore(&l.state_save()).unwrap();
    assert_eq!(
        mate(&restored),
        vec![2, 3],
        "the gang suspend survives a save"
    );
    restored.state_restore(&blob).unwrap();
    assert_eq!(mate(&restored), vec![0, 1]);
}

/// Partition p0 of 4 nodes with OverSubscribe=FORCE:2.
fn force_2() -> Partition {
    let mut p0 = fixtures::partition(0, "p0", 4);
    p0.oversubscribe = Oversubscribe::Force(2);
    p0
}

#[test]
fn a_node_outside_the_jobs_partition_is_slurm_error() {
    // select_linear.c `_add_job_to_nodes` / `_rm_job_from_nodes`: "could
    // not find partition" sets SLURM_ERROR after the other changes.
    let p0 = fixtures::partition(0, "p0", 2);
    let p1 = fixtures::partition(1, "p1", 2);
    let mut l = Linear::init(&config(&[], vec![p0, p1])).unwrap();
    l.node_init(&nodes(2)).unwrap();
    let mut job = pending(1, 1);
    job.partitions = vec![1];
    let r = l
        .job_test(&request(job.clone(), 2, JobTestMode::RunNow), T)
        .unwrap();
    job.state = JobState::Running;
    job.end_time = T + 100;
    job.resources = Some(r.resources);
    assert_eq!(l.job_begin(&job).unwrap_err().code, codes::SLURM_ERROR);
    assert_eq!(l.usage().nodes[0].exclusive_cnt, 1, "charged all the same");
    assert_eq!(l.job_fini(&job).unwrap_err().code, codes::SLURM_ERROR);
    assert_eq!(l.usage(), linear(2, &[]).usage());
}

#[test]
fn test_only_and_will_run_fail_with_slurms_codes() {
    // select_linear.c (22.05) `_test_only` and `_will_run_test` start from
    // SLURM_ERROR and return `_job_test`'s EINVAL once it ran: a contiguous
    // job on two separated nodes reaches the placement and fails there; a
    // GPU job on nodes without GPUs never leaves the filter.
    let l = linear(3, &[]);
    let mut apart = pending(1, 2);
    apart.details.contiguous = true;
    let mut gpu = pending(2, 1);
    gpu.details.gres = vec![slurm_wasm_sdk::types::GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope: slurm_wasm_sdk::types::GresScope::PerNode,
        count: 1,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    for mode in [JobTestMode::TestOnly, JobTestMode::WillRun] {
        let mut req = request(apart.clone(), 3, mode);
        req.candidates = (&Bitmap::from_bits(3, [0, 2])).into();
        assert_eq!(
            l.job_test(&req, T).unwrap_err().code,
            codes::EINVAL,
            "{mode:?}"
        );
        let req = request(gpu.clone(), 3, mode);
        assert_eq!(
            l.job_test(&req, T).unwrap_err().code,
            codes::SLURM_ERROR,
            "{mode:?}"
        );
    }
}
