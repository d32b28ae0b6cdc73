//! Tests of [`crate::will_run`] (22.05 `_will_run_test`, cons_common/job_test.c):
//! when and where a job would start.

use slurm_wasm_sdk::select::{JobTestMode, PreemptMode, PreempteeCandidate};
use slurm_wasm_sdk::types::{Job, JobState, MemoryRequest, ShareRequest};

use crate::test_support::{
    anchor_cluster, anchor_like, bm, cluster, holding, job, on_node, preempt_cluster, preempting,
    refused, request, row_jobs, with_gres,
};
use crate::ConsTres;
use slurm_wasm_sdk::Bitmap;

/// Places and starts on `ct`'s one 4-core node job 1 (2 CPUs, ending at
/// 5000) and job 2 (2 CPUs, ending at 9000), as RUN_NOW chose; returns them.
fn two_running_jobs(ct: &mut ConsTres) -> Vec<Job> {
    let mut running = Vec::new();
    for (id, n, end) in [(1u32, 2u32, 5000i64), (2, 2, 9000)] {
        running.push(start_until(ct, job(id, 1, n, 1), end, 60));
    }
    running
}

#[test]
fn will_run_start_is_end_of_needed_job() {
    // WILL_RUN (`_will_run_test`, cons_common/job_test.c): start = end time of
    // the last removed job actually needed.
    let mut ct = cluster(&["CR_Core"], 1, 1, 4, 1, 1000);
    two_running_jobs(&mut ct);
    let r = ct
        .job_test(&request(&ct, job(3, 1, 2, 1), JobTestMode::WillRun), 1000)
        .unwrap();
    assert_eq!(r.start_time, Some(5000));
    let r = ct
        .job_test(&request(&ct, job(4, 1, 4, 1), JobTestMode::WillRun), 1000)
        .unwrap();
    assert_eq!(r.start_time, Some(9000));
    // TEST_ONLY ignores usage; RUN_NOW is busy.
    assert!(ct
        .job_test(&request(&ct, job(5, 1, 4, 1), JobTestMode::TestOnly), 0)
        .is_ok());
    assert!(refused(&ct, job(5, 1, 4, 1), JobTestMode::RunNow));
    // Preemption: REQUEUE of job 2 frees its cores.
    let mut req = request(&ct, job(6, 1, 2, 1), JobTestMode::RunNow);
    req.preemptee_candidates = vec![PreempteeCandidate {
        job_id: 2,
        mode: PreemptMode::Requeue,
    }];
    let r = ct.job_test(&req, 0).unwrap();
    assert_eq!(r.preemptees, vec![2]);
}

#[test]
fn bf_busy_nodes_prefers_nodes_running_jobs_after_releases() {
    // 22.05 `_will_run_test` (cons_common/job_test.c:2043-2047) passes
    // `bf_busy_nodes` as `prefer_alloc_nodes` to its tests after releasing
    // jobs, and `_eval_nodes_busy` (cons_tres/job_test.c:1196-1373) then
    // takes the nodes running jobs now before the idle ones, until the
    // job has its CPUs. Hand runs on the anchor (CR_Core_Memory,
    // `--mem-per-cpu=100`): A `-w n2 -n8` ending first, B `-w n3 -n2`;
    // `sbatch --test-only -N2 -n16 -x n4` answered A's end time on
    // n[1-2], and with `SchedulerParameters=bf_busy_nodes` on n[1-3]
    // (n2 and n3, busy now, first; their 14 CPUs then need n1).
    let will_run = |busy: bool| {
        let mut ct = anchor_like("CR_Core_Memory", 4, (2, 2), 0, &[]);
        if busy {
            ct.params
                .apply_scheduler(
                    &["bf_busy_nodes".into()],
                    slurm_wasm_sdk::types::PreemptModes::empty(),
                )
                .unwrap();
        }
        for (id, node, tasks, end) in [(1u32, 1usize, 8u32, 1600i64), (2, 2, 2, 2200)] {
            let mut a = on_node(id, 4, node, tasks);
            a.details.memory = MemoryRequest::PerCpu(100);
            start_until(&mut ct, a, end, 60);
        }
        let mut j = job(3, 2, 16, 1);
        j.details.excluded_nodes = Some(bm(4, &[3]));
        j.details.memory = MemoryRequest::PerCpu(100);
        let r = ct
            .job_test(&request(&ct, j, JobTestMode::WillRun), 1000)
            .unwrap();
        let nodes: Vec<usize> = Bitmap::from_words(4, &r.resources.nodes.words)
            .unwrap()
            .ones()
            .collect();
        (r.start_time, nodes)
    };
    assert_eq!(will_run(false), (Some(1600), vec![0, 1]));
    assert_eq!(will_run(true), (Some(1600), vec![0, 1, 2]));
}

#[test]
fn will_run_copies_do_not_keep_a_gpu_out_for_its_mps_shares() {
    // Hand run on the anchor (CR_Core_Memory, `--mem-per-cpu=100`): X
    // `-w n1 -n1 --gres=gpu:1 -t 5` held GPU 0, Y `-w n1 -n1
    // --gres=mps:50 -t 30` shares of GPU 1, n2-n4 were held whole for 30
    // minutes. `sbatch --test-only -n1 --gres=gpu:2` answered n1 at X's
    // end, with Y still there; RUN_NOW of `-w n1 -n1 --gres=gpu:1` stayed
    // pending. 22.05 keeps a GPU out for its MPS shares in use only in the
    // live tables, not in the copies its later will-run tests release jobs
    // from (see `Tables::Copy`).
    let mut ct = anchor_cluster();
    let place = |ct: &mut ConsTres, mut j: Job, end: i64| {
        j.details.memory = MemoryRequest::PerCpu(100);
        start_until(ct, j, end, 30);
    };
    place(&mut ct, with_gres(on_node(1, 4, 0, 1), "gpu", 1), 1300);
    place(&mut ct, with_gres(on_node(2, 4, 0, 1), "mps", 50), 2800);
    for (id, node) in [(3u32, 1usize), (4, 2), (5, 3)] {
        let mut whole = on_node(id, 4, node, 8);
        whole.details.share = ShareRequest::Exclusive;
        place(&mut ct, whole, 2800);
    }
    let mut gpu_pair = with_gres(job(6, 1, 1, 1), "gpu", 2);
    gpu_pair.details.memory = MemoryRequest::PerCpu(100);
    let r = ct
        .job_test(&request(&ct, gpu_pair, JobTestMode::WillRun), 1000)
        .unwrap();
    let nodes: Vec<usize> = Bitmap::from_words(4, &r.resources.nodes.words)
        .unwrap()
        .ones()
        .collect();
    assert_eq!((r.start_time, nodes), (Some(1300), vec![0]));
    let mut one = with_gres(on_node(7, 4, 0, 1), "gpu", 1);
    one.details.memory = MemoryRequest::PerCpu(100);
    assert!(refused(&ct, one, JobTestMode::RunNow));
}

#[test]
fn will_run_suspend_candidates_free_cores_but_keep_memory() {
    // 22.05 `_build_cr_job_list` (cons_common/job_test.c:1858-1870): for
    // WILL_RUN a SUSPEND-mode candidate is removed at once with action 2
    // (JOB_RES_ACTION_RESUME, cores and node state only: its memory and
    // GRES stay, job_resources.c:534-568), a REQUEUE or CANCEL one with
    // action 0 (everything); candidates are then never removed by end time.
    // One 4-core node with 1000 MB: job 1 (2 CPUs, 800 MB, ends at 5000),
    // job 2 (2 CPUs, 100 MB, ends at 9000). `-n2 --mem=150` with job 1 as
    // candidate: REQUEUE frees its memory, so now; SUSPEND leaves 100 MB
    // until job 2 ends.
    let mut ct = cluster(&["CR_Core_Memory"], 1, 1, 4, 1, 1000);
    for (id, mem, end) in [(1u32, 800u64, 5000i64), (2, 100, 9000)] {
        let mut a = job(id, 1, 2, 1);
        a.details.memory = MemoryRequest::PerNode(mem);
        start_until(&mut ct, a, end, 60);
    }
    let answer = |mode: PreemptMode| {
        let mut j = job(3, 1, 2, 1);
        j.details.memory = MemoryRequest::PerNode(150);
        let mut req = request(&ct, j, JobTestMode::WillRun);
        req.preemptee_candidates = vec![PreempteeCandidate { job_id: 1, mode }];
        let r = ct.job_test(&req, 1000).unwrap();
        (r.start_time, r.preemptees)
    };
    assert_eq!(answer(PreemptMode::Requeue), (Some(1000), vec![1]));
    assert_eq!(answer(PreemptMode::Suspend), (Some(9000), vec![1]));
}

#[test]
fn will_run_answers_follow_the_live_tables_between_calls() {
    // WILL_RUN (`_will_run_test`), asked repeatedly as a backfill pass does: the
    // answers keep a scratch copy of the tables between calls, which must
    // neither leak the jobs one answer released into the next answer nor
    // outlive a change of the live tables (job_fini, job_begin).
    let mut ct = cluster(&["CR_Core"], 1, 1, 4, 1, 1000);
    let running = two_running_jobs(&mut ct);
    let will_run = |ct: &ConsTres, id: u32, cpus: u32| {
        let start = ct
            .job_test(
                &request(ct, job(id, 1, cpus, 1), JobTestMode::WillRun),
                1000,
            )
            .unwrap()
            .start_time;
        // The free cores and idle nodes the scratch follows match its tables.
        ct.scratch.borrow().assert_followed(ct);
        start
    };
    // Both jobs released for the 4-CPU answer; the answers after it start
    // from the live tables again: 2 CPUs once job 1 ends, 3 only once
    // job 2 ends too.
    assert_eq!(will_run(&ct, 3, 4), Some(9000));
    assert_eq!(will_run(&ct, 4, 2), Some(5000));
    assert_eq!(will_run(&ct, 5, 3), Some(9000));
    // With job 2 offered for preemption the answer releases it first, then
    // job 1 (ending at 5000); the answers after it see both jobs again.
    let mut req = request(&ct, job(10, 1, 4, 1), JobTestMode::WillRun);
    req.preemptee_candidates = vec![PreempteeCandidate {
        job_id: 2,
        mode: PreemptMode::Requeue,
    }];
    let r = ct.job_test(&req, 1000).unwrap();
    assert_eq!((r.start_time, r.preemptees), (Some(5000), vec![2]));
    assert_eq!(will_run(&ct, 11, 3), Some(9000));
    assert_eq!(will_run(&ct, 12, 2), Some(5000));
    // Job 2 ends: two CPUs free now, four once job 1 ends.
    ct.job_fini(2);
    assert_eq!(will_run(&ct, 6, 2), Some(1000));
    assert_eq!(will_run(&ct, 7, 4), Some(5000));
    // Job 2 back: as before.
    ct.add_running(&running[1]).unwrap();
    assert_eq!(will_run(&ct, 8, 2), Some(5000));
    assert_eq!(will_run(&ct, 9, 4), Some(9000));
}

#[test]
fn time_min_as_soft_limit_plans_with_time_min() {
    // SchedulerParameters=time_min_as_soft_limit (an option of releases
    // after 22.05): the soft end is start + --time-min.
    let mut ct = cluster(&["CR_Core"], 1, 1, 4, 1, 100);
    ct.params.time_min_as_soft_limit = true;
    let mut a = job(1, 1, 4, 1);
    let r = ct
        .job_test(&request(&ct, a.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    a.state = JobState::Running;
    a.start_time = 1000;
    a.end_time = 1000 + 3600;
    a.time_limit = Some(60);
    a.time_min = Some(10);
    a.resources = Some(r.resources);
    ct.add_running(&a).unwrap();
    let r = ct
        .job_test(&request(&ct, job(2, 1, 1, 1), JobTestMode::WillRun), 1200)
        .unwrap();
    assert_eq!(r.start_time, Some(1600));
    // Past the soft end: halfway to the hard end.
    let r = ct
        .job_test(&request(&ct, job(2, 1, 1, 1), JobTestMode::WillRun), 2000)
        .unwrap();
    assert_eq!(r.start_time, Some(2000 + (4600 - 2000) / 2));
}

#[test]
fn will_run_answers_the_last_job_of_the_first_batch_that_fits() {
    // Slurm 22.05 `_will_run_test`: the window ends at the first end rounded
    // up past a multiple of 30 s (5010 -> 5040) plus the window (30 s), so
    // jobs 1-3 leave together and the start is the end of the last of them
    // (5025), not of the one actually needed (job 2, 5020: HEAD's answer).
    let mut ct = cluster(&["CR_Core"], 1, 1, 4, 1, 100);
    for (id, end) in [(1u32, 5010i64), (2, 5020), (3, 5025), (4, 7000)] {
        start_until(&mut ct, job(id, 1, 1, 1), end, 60);
    }
    let r = ct
        .job_test(&request(&ct, job(9, 1, 2, 1), JobTestMode::WillRun), 1000)
        .unwrap();
    assert_eq!(r.start_time, Some(5025));
    let r = ct
        .job_test(&request(&ct, job(9, 1, 4, 1), JobTestMode::WillRun), 1000)
        .unwrap();
    assert_eq!(r.start_time, Some(7000));
}

/// Places `j` with RUN_NOW at time 0 and starts it on `ct`, running until
/// `end` under a time limit of `limit` minutes; returns the running job.
fn start_until(ct: &mut ConsTres, mut j: Job, end: i64, limit: u32) -> Job {
    let r = ct
        .job_test(&request(ct, j.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    j.state = JobState::Running;
    j.end_time = end;
    j.time_limit = Some(limit);
    j.resources = Some(r.resources);
    ct.add_running(&j).unwrap();
    j
}

#[test]
fn will_run_suspend_candidate_under_qos_uses_the_extra_row() {
    // 22.05 `_build_cr_job_list` (cons_common/job_test.c:1858-1870): under
    // preempt/qos, removing a SUSPEND candidate from the will-run copies
    // makes every later `_job_test` of `_will_run_test` a QOS preemptor's
    // (:1943-2048), which may use the extra row. One 4-core node in a
    // FORCE:1 partition (2 rows under qos): job 1 holds every core in row
    // 0 until 9000, job 2 every core in the extra row until 5000. With job
    // 2 suspended the job starts now in the extra row; requeued, it is no
    // QOS preemptor and waits for job 1.
    use slurm_wasm_sdk::types::Oversubscribe::Force;
    let mut ct = preempt_cluster("preempt/qos", &[Force(1)], 1);
    holding(&mut ct, 1, 0, &[(0, &[0, 1, 2, 3])], 9000);
    holding(&mut ct, 2, 0, &[(0, &[0, 1, 2, 3])], 5000);
    assert_eq!(row_jobs(&ct, 0), vec![vec![1], vec![2]]);
    let answer = |mode: PreemptMode| {
        let mut req = preempting(&ct, job(3, 1, 4, 1), &[(2, mode)]);
        req.mode = JobTestMode::WillRun;
        let r = ct.job_test(&req, 1000).unwrap();
        (r.start_time, r.preemptees)
    };
    assert_eq!(answer(PreemptMode::Suspend), (Some(1000), vec![2]));
    assert_eq!(answer(PreemptMode::Requeue), (Some(9000), vec![2]));
}
