//! Unit tests: the task distribution examples of doc/html/cpu_management.shtml
//! (`dist_tasks`, cons_common/dist_tasks.c), GRES scheduling
//! (cons_tres/gres_sched.c, cons_common/gres_select_filter.c) and the
//! usage-table transitions (`job_res_add_job`, `job_res_rm_job`,
//! cons_common/job_resources.c).

use slurm_wasm_sdk::select::{
    JobTestFlags, JobTestMode, JobTestRequest, PreemptMode, PreempteeCandidate,
};
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{
    Bitmap, GresDeviceGroup, GresFlags, GresRequest, GresScope, Job, JobState, MemoryRequest,
    ShareRequest,
};

use crate::bits::Bits;
use crate::params::Params;
use crate::ConsTres;

fn bm(len: usize, bits: &[usize]) -> Bitmap {
    let mut words = vec![0u64; len.div_ceil(64)];
    for &b in bits {
        words[b / 64] |= 1 << (b % 64);
    }
    Bitmap {
        len: len as u32,
        words,
    }
}

fn cluster(params: &[&str], nodes: usize, s: u16, c: u16, t: u16, mem: u64) -> ConsTres {
    let p = Params::parse(&params.iter().map(|x| x.to_string()).collect::<Vec<_>>()).unwrap();
    let part = fixtures::partition(0, "debug", nodes as u32);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    let table: Vec<_> = (0..nodes)
        .map(|i| fixtures::node(i as u32, &format!("n{i}"), s, c, t, mem))
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

fn request(ct: &ConsTres, job: Job, mode: JobTestMode) -> JobTestRequest {
    let n = ct.recs.len();
    JobTestRequest {
        min_nodes: job.details.min_nodes,
        max_nodes: job.details.max_nodes.unwrap_or(0),
        // slurmctld's select_nodes: the maximum when one is given.
        req_nodes: job.details.max_nodes.unwrap_or(job.details.min_nodes),
        job,
        candidates: bm(n, &(0..n).collect::<Vec<_>>()),
        mode,
        flags: JobTestFlags::empty(),
        preemptee_candidates: Vec::new(),
        excluded_cores: None,
    }
}

/// Whether `ct` refuses `job` in `mode`.
fn refused(ct: &ConsTres, job: Job, mode: JobTestMode) -> bool {
    ct.job_test(&request(ct, job, mode), 0).is_err()
}

fn cores(ct: &ConsTres, job: Job) -> Vec<(u32, Vec<usize>, u16)> {
    let r = ct
        .job_test(&request(ct, job, JobTestMode::RunNow), 1000)
        .unwrap();
    r.resources
        .per_node
        .iter()
        .map(|n| (n.node_index, held_cores(n), n.cpus))
        .collect()
}

fn job(id: u32, nodes: u32, tasks: u32, cpt: u16) -> Job {
    let mut j = fixtures::job(id);
    j.details.min_nodes = nodes;
    j.details.num_tasks = tasks;
    j.details.cpus_per_task = cpt;
    j.details.min_cpus = tasks.max(1) * cpt as u32;
    j.details.pn_min_cpus = cpt;
    j
}

// `dist_tasks` (cons_common/dist_tasks.c) on the worked examples of
// doc/html/cpu_management.shtml (2 sockets x 4 cores x 1 thread, CR_Core).
#[test]
fn cpu_management_n6_cyclic() {
    let ct = cluster(&["CR_Core"], 1, 2, 4, 1, 1000);
    let mut j = job(1, 1, 6, 1);
    j.details.max_nodes = Some(1);
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1, 2, 4, 5, 6], 6)]);
}

#[test]
fn cpu_management_default_dist_block() {
    let ct = cluster(&["CR_Core", "CR_CORE_DEFAULT_DIST_BLOCK"], 1, 2, 4, 1, 1000);
    let j = job(1, 1, 2, 3);
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1, 2, 3, 4, 5], 6)]);
}

#[test]
fn cpu_management_n3_c3_on_three_nodes() {
    let ct = cluster(&["CR_Core"], 3, 2, 4, 1, 1000);
    let got: Vec<u16> = cores(&ct, job(1, 3, 3, 3)).iter().map(|n| n.2).collect();
    assert_eq!(got, vec![3, 3, 3]);
}

#[test]
fn cpu_management_plane() {
    // -N3 -m plane=2 -n8 -c2 -> CPUs 8/6/2.
    let ct = cluster(&["CR_Core"], 3, 2, 4, 1, 1000);
    let mut j = job(1, 3, 8, 2);
    j.details.task_dist = 0x4;
    j.details.plane_size = 2;
    let got: Vec<u16> = cores(&ct, j).iter().map(|n| n.2).collect();
    assert_eq!(got, vec![8, 6, 2]);
}

#[test]
fn cpu_management_ntasks_per_node() {
    // -N2 --ntasks-per-node=3 -m cyclic -n6 -c2 -> 6 CPUs per node.
    let ct = cluster(&["CR_Core"], 2, 2, 4, 1, 1000);
    let mut j = job(1, 2, 6, 2);
    j.details.ntasks_per_node = 3;
    j.details.task_dist = 0x1;
    let got: Vec<u16> = cores(&ct, j).iter().map(|n| n.2).collect();
    assert_eq!(got, vec![6, 6]);
}

#[test]
fn srun_n20_counts_8_8_4() {
    // The example in the comments of `dist_tasks_compute_c_b`
    // (cons_tres/dist_tasks.c): srun -n20 on three nodes of 2-thread
    // cores (8 CPUs) -> 8,8,4.
    let ct = cluster(&["CR_Core"], 3, 1, 4, 2, 1000);
    let got: Vec<u16> = cores(&ct, job(1, 3, 20, 1)).iter().map(|n| n.2).collect();
    assert_eq!(got, vec![8, 8, 4]);
}

#[test]
fn cr_core_rounds_to_whole_cores_and_memory_per_cpu() {
    // CR_Core allocates whole cores (`_allocate_sc`, cons_common.c); memory
    // per CPU is set after the placement (`_job_test`, cons_common/job_test.c).
    let ct = cluster(&["CR_Core_Memory"], 1, 1, 4, 2, 1000);
    let mut j = job(1, 1, 1, 1);
    j.details.memory = MemoryRequest::PerCpu(100);
    let r = ct
        .job_test(&request(&ct, j, JobTestMode::RunNow), 0)
        .unwrap();
    assert_eq!(r.resources.per_node[0].cpus, 2);
    assert_eq!(r.resources.per_node[0].memory, 200);
}

#[test]
fn exclusive_takes_whole_node_and_usage_blocks_others() {
    // --exclusive gives every core (`dist_tasks`, cons_common/dist_tasks.c);
    // busy nodes are rejected (`_verify_node_state`, cons_common/job_test.c).
    let mut ct = cluster(&["CR_Core_Memory"], 2, 2, 4, 1, 1000);
    let mut a = job(1, 1, 1, 1);
    a.details.memory = MemoryRequest::PerNode(100);
    let r = ct
        .job_test(&request(&ct, a.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    a.state = JobState::Running;
    a.resources = Some(r.resources);
    let before = ct.usage.clone();
    ct.add_running(&a).unwrap();
    let mut b = job(2, 1, 1, 1);
    b.details.share = ShareRequest::Exclusive;
    b.details.memory = MemoryRequest::PerNode(100);
    let r = ct
        .job_test(&request(&ct, b, JobTestMode::RunNow), 0)
        .unwrap();
    assert_eq!(r.resources.per_node[0].node_index, 1);
    assert_eq!(r.resources.per_node[0].cpus, 8);
    assert!(r.resources.whole_nodes);
    // select_p_job_fini (cons_common.c, `job_res_rm_job`) returns the tables
    // to their prior state.
    ct.job_fini(1);
    assert_eq!(ct.usage, before);
}

#[test]
fn begin_then_nodeinfo_set_does_not_double_count() {
    // Module doc of transitions: job-begin adds, nodeinfo-set only adds unknown jobs.
    let mut ct = cluster(&["CR_Core_Memory"], 1, 1, 4, 1, 1000);
    let mut a = job(1, 1, 2, 1);
    a.details.memory = MemoryRequest::PerNode(300);
    let r = ct
        .job_test(&request(&ct, a.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    a.state = JobState::Running;
    a.resources = Some(r.resources);
    ct.add_running(&a).unwrap();
    ct.add_running(&a).unwrap();
    assert_eq!(ct.usage.nodes[0].alloc_memory, 300);
    assert_eq!(ct.nodeinfo_of(0).alloc_cpus, 2);
    assert_eq!(
        ct.nodeinfo_of(0).tres_alloc_fmt_str.as_deref(),
        Some("cpu=2,mem=300M")
    );
}

#[test]
fn suspend_indefinite_frees_cores_keeps_memory() {
    // select_p_job_suspend (cons_common.c): indf_susp true -> `job_res_rm_job`
    // with JOB_RES_ACTION_RESUME; gang (false) -> no-op.
    let mut ct = cluster(&["CR_Core_Memory"], 1, 1, 4, 1, 1000);
    let mut a = job(1, 1, 4, 1);
    a.details.memory = MemoryRequest::PerNode(300);
    let r = ct
        .job_test(&request(&ct, a.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    a.state = JobState::Running;
    a.resources = Some(r.resources);
    ct.add_running(&a).unwrap();
    ct.job_suspend(1, false);
    assert_eq!(ct.nodeinfo_of(0).alloc_cpus, 4);
    ct.job_suspend(1, true);
    assert_eq!(ct.nodeinfo_of(0).alloc_cpus, 0);
    assert_eq!(ct.usage.nodes[0].alloc_memory, 300);
    ct.job_resume(1, a.end_time, true);
    assert_eq!(ct.nodeinfo_of(0).alloc_cpus, 4);
}

#[test]
fn resume_moves_the_planned_end() {
    // slurmctld moves a resumed job's end by the time it was suspended
    // (job_mgr.c `_job_suspend_op`); will-run answers read the new end.
    // Anchor (select/linear, `scontrol suspend`, 12 s, `scontrol resume`):
    // `--test-only` then answered the resumed job's later end.
    let mut ct = cluster(&["CR_Core"], 1, 1, 4, 1, 1000);
    let mut a = job(1, 1, 4, 1);
    a.end_time = 5000;
    start_full(&mut ct, a.clone());
    let will_run = |ct: &ConsTres| {
        ct.job_test(&request(ct, job(2, 1, 4, 1), JobTestMode::WillRun), 1000)
            .unwrap()
            .start_time
    };
    assert_eq!(will_run(&ct), Some(5000));
    for indefinite in [true, false] {
        ct.job_suspend(1, indefinite);
        ct.job_resume(1, 5600 + i64::from(indefinite), indefinite);
        assert_eq!(
            will_run(&ct),
            Some(5600 + i64::from(indefinite)),
            "{indefinite}"
        );
    }
}

#[test]
fn state_round_trip_and_refusal() {
    let mut ct = cluster(&["CR_Core_Memory"], 2, 1, 4, 1, 1000);
    let mut a = job(1, 1, 2, 1);
    a.details.memory = MemoryRequest::PerNode(300);
    let r = ct
        .job_test(&request(&ct, a.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    a.state = JobState::Running;
    a.resources = Some(r.resources);
    ct.add_running(&a).unwrap();
    let blob = ct.state_save();
    let mut other = cluster(&["CR_Core_Memory"], 2, 1, 4, 1, 1000);
    other.state_restore(&blob).unwrap();
    assert_eq!(other.usage, ct.usage);
    let kept = other.usage.clone();
    assert!(other
        .state_restore(&blob[..blob.len() - 3])
        .unwrap_err()
        .contains("truncated"));
    assert_eq!(other.usage, kept);
}

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
fn run_now_preemption_reorders_to_the_fewest_jobs() {
    // RUN_NOW (22.05 `_run_now`, cons_common/job_test.c:2183-2237):
    // a fit found by removing candidates in list order is tried again with
    // the last one needed moved first, so a job that alone frees enough is
    // the only one preempted. One 4-core node: job 1 holds a core, job 2
    // three; a 3-core job offered [1, 2] fits once both are removed, and
    // again with job 2 alone. The anchor showed the same under
    // preempt_youngest_first (cons_tres-CR_Core_Memory-preempt_youngest, e1).
    for strict in [false, true] {
        let mut ct = cluster(&["CR_Core"], 1, 1, 4, 1, 1000);
        ct.params.preempt_strict_order = strict;
        start_full(&mut ct, job(1, 1, 1, 1));
        start_full(&mut ct, job(2, 1, 3, 1));
        let mut req = request(&ct, job(3, 1, 3, 1), JobTestMode::RunNow);
        req.preemptee_candidates = [1, 2]
            .map(|job_id| PreempteeCandidate {
                job_id,
                mode: PreemptMode::Cancel,
            })
            .to_vec();
        let r = ct.job_test(&req, 0).unwrap();
        assert_eq!(r.preemptees, vec![2], "strict order {strict}");
        // SUSPEND candidates are not removed in this step (:2164).
        for c in &mut req.preemptee_candidates {
            c.mode = PreemptMode::Suspend;
        }
        assert!(ct.job_test(&req, 0).is_err(), "strict order {strict}");
    }
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
                .apply_scheduler(&["bf_busy_nodes".into()], &[])
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
        let nodes: Vec<usize> = Bits::from_words(4, &r.resources.nodes.words)
            .unwrap()
            .ones()
            .collect();
        (r.start_time, nodes)
    };
    assert_eq!(will_run(false), (Some(1600), vec![0, 1]));
    assert_eq!(will_run(true), (Some(1600), vec![0, 1, 2]));
}

#[test]
fn pack_serial_at_end_takes_the_last_nodes_for_one_cpu_jobs() {
    // 22.05 `_eval_nodes_serial` (cons_tres/job_test.c:2955-3113): under
    // SchedulerParameters=pack_serial_at_end a one-CPU one-node job takes
    // the nodes from the last one back. Hand run on the anchor
    // (CR_Core_Memory, `--mem-per-cpu=100`), in this order: `-n1` n4
    // CPU_IDs=0-1, `-n1` n4 2-3, `-n2` (not serial: the tightest node)
    // n4 4-5, `-n1 -w n2` n2 0-1, `-n1` n4 6-7; then `sbatch --test-only
    // -n1` answered n3, now.
    let mut ct = anchor_like("CR_Core_Memory", 4, (2, 2), 0, &[]);
    ct.params
        .apply_scheduler(&["pack_serial_at_end".into()], &[])
        .unwrap();
    let submit = |id: u32, tasks: u32, on: Option<usize>| {
        let mut j = job(id, 1, tasks, 1);
        j.details.memory = MemoryRequest::PerCpu(100);
        j.details.required_nodes = on.map(|n| bm(4, &[n]));
        j
    };
    let placed = |ct: &mut ConsTres, j: Job| {
        let r = start_full(ct, j);
        let n = &r.per_node[0];
        (n.node_index, held_cores(n))
    };
    assert_eq!(placed(&mut ct, submit(1, 1, None)), (3, vec![0]));
    assert_eq!(placed(&mut ct, submit(2, 1, None)), (3, vec![1]));
    assert_eq!(placed(&mut ct, submit(3, 2, None)), (3, vec![2]));
    assert_eq!(placed(&mut ct, submit(4, 1, Some(1))), (1, vec![0]));
    assert_eq!(placed(&mut ct, submit(5, 1, None)), (3, vec![3]));
    let r = ct
        .job_test(
            &request(&ct, submit(6, 1, None), JobTestMode::WillRun),
            1000,
        )
        .unwrap();
    let nodes: Vec<usize> = Bits::from_words(4, &r.resources.nodes.words)
        .unwrap()
        .ones()
        .collect();
    assert_eq!((r.start_time, nodes), (Some(1000), vec![2]));
}

#[test]
fn spread_job_and_lln_partitions_choose_node_by_node() {
    // 22.05 `_eval_nodes_spread` (cons_tres/job_test.c:1022-1194) for
    // `--spread-job`, whose node maximum slurmctld raises to its tasks (at
    // most the cluster's 6 nodes), and `_eval_nodes_lln` for a partition
    // with `LLN=YES`. Hand run on the anchor (CR_Core_Memory,
    // `--mem-per-cpu=100`, a partition `lln` over n[1-4] with LLN=YES), in
    // this order: `--spread-job -n4` n[1-4] CPU_IDs=0-1 each;
    // `--spread-job -n6` n1 CPU_IDs=2-5 and n[2-4] 2-3; `-p lln -n1` n2
    // 4-5, then n3 4-5; `-p lln -n3` n4 4-7.
    let mut ct = anchor_like("CR_Core_Memory", 4, (2, 2), 0, &[]);
    let mut lln = fixtures::partition(1, "lln", 4);
    lln.lln = true;
    ct.partitions.push(lln);
    ct.usage
        .rows
        .push(crate::rows::PartRows::new(1, ct.total_cores));
    let submit = |id: u32, tasks: u32, spread: bool, partition: u32| {
        let mut j = job(id, 1, tasks, 1);
        j.details.memory = MemoryRequest::PerCpu(100);
        j.details.spread_job = spread;
        if spread {
            j.details.max_nodes = Some(tasks.min(6));
        }
        j.partitions = vec![partition];
        j
    };
    let cpus = |r: &slurm_wasm_sdk::types::JobResources| -> Vec<(u32, Vec<usize>)> {
        r.per_node
            .iter()
            .map(|n| {
                let cpus = held_cores(n)
                    .into_iter()
                    .flat_map(|k| [2 * k, 2 * k + 1])
                    .collect();
                (n.node_index, cpus)
            })
            .collect()
    };
    let r = start_full(&mut ct, submit(1, 4, true, 0));
    assert_eq!(
        cpus(&r),
        (0..4).map(|n| (n, vec![0, 1])).collect::<Vec<_>>()
    );
    let r = start_full(&mut ct, submit(2, 6, true, 0));
    assert_eq!(
        cpus(&r),
        vec![
            (0, vec![2, 3, 4, 5]),
            (1, vec![2, 3]),
            (2, vec![2, 3]),
            (3, vec![2, 3])
        ]
    );
    assert_eq!(
        cpus(&start_full(&mut ct, submit(3, 1, false, 1))),
        vec![(1, vec![4, 5])]
    );
    assert_eq!(
        cpus(&start_full(&mut ct, submit(4, 1, false, 1))),
        vec![(2, vec![4, 5])]
    );
    assert_eq!(
        cpus(&start_full(&mut ct, submit(5, 3, false, 1))),
        vec![(3, vec![4, 5, 6, 7])]
    );
    // Around a full node. Hand run on the anchor: with n2 full (`-w n2
    // -n8`), `--spread-job -n2` ran on n[1,3] (best fit over its node
    // range 1-2 takes the same nodes); then `sbatch --test-only -N2 -n2`
    // answered n[3-4], the tighter set of two.
    let mut ct = anchor_like("CR_Core_Memory", 4, (2, 2), 0, &[]);
    start_full(&mut ct, on_node(1, 4, 1, 8));
    let nodes = |r: &slurm_wasm_sdk::types::JobResources| -> Vec<u32> {
        r.per_node.iter().map(|n| n.node_index).collect()
    };
    assert_eq!(
        nodes(&start_full(&mut ct, submit(2, 2, true, 0))),
        vec![0, 2]
    );
    let mut pair = submit(3, 2, false, 0);
    pair.details.min_nodes = 2;
    pair.details.max_nodes = Some(2);
    assert_eq!(nodes(&start_full(&mut ct, pair)), vec![2, 3]);
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
    let nodes: Vec<usize> = Bits::from_words(4, &r.resources.nodes.words)
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

fn gpu_cluster() -> ConsTres {
    // test_144_8: 2 nodes x 2 sockets x 8 cores x 2 threads, CR_CORE,
    // gpu Cores=0-7 File=gpu[0-2], gpu Cores=8-15 File=gpu[3-5].
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let part = fixtures::partition(0, "debug", 2);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    let table: Vec<_> = (0..2)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{i}"), 2, 8, 2, 1000);
            n.gres_topology = vec![
                GresDeviceGroup {
                    name: "gpu".into(),
                    type_name: None,
                    count: 3,
                    cores: Some(bm(16, &(0..8).collect::<Vec<_>>())),
                    links: Vec::new(),
                },
                GresDeviceGroup {
                    name: "gpu".into(),
                    type_name: None,
                    count: 3,
                    cores: Some(bm(16, &(8..16).collect::<Vec<_>>())),
                    links: Vec::new(),
                },
            ];
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

fn gpu_job(tasks: u32, cpt: u16, scope: GresScope, count: u64, cpus_per_gpu: u16) -> Job {
    let mut j = job(1, 1, tasks, cpt);
    j.details.gres_flags = GresFlags::ENFORCE_BINDING;
    j.details.gres = vec![GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope,
        count,
        cpus_per_gres: (cpus_per_gpu > 0).then_some(cpus_per_gpu),
        mem_per_gres: None,
    }];
    j
}

/// (abstract CPU ids, GPU indices) of node 0.
fn cpu_gpu(ct: &ConsTres, j: Job) -> (Vec<usize>, Vec<usize>) {
    let r = ct
        .job_test(&request(ct, j, JobTestMode::RunNow), 0)
        .unwrap();
    let n = &r.resources.per_node[0];
    let cpus = held_cores(n)
        .into_iter()
        .flat_map(|k| [2 * k, 2 * k + 1])
        .collect();
    let d = n.gres[0].devices.as_ref().unwrap();
    let g = crate::bits::Bits::from_words(d.len as usize, &d.words).unwrap();
    (cpus, g.ones().collect())
}

#[test]
fn test_144_8_gres_gpu3_c2() {
    let ct = gpu_cluster();
    assert_eq!(
        cpu_gpu(&ct, gpu_job(1, 2, GresScope::PerNode, 3, 0)),
        (vec![0, 1], vec![0, 1, 2])
    );
}

#[test]
fn test_144_8_gres_gpu4_c4() {
    let ct = gpu_cluster();
    assert_eq!(
        cpu_gpu(&ct, gpu_job(1, 4, GresScope::PerNode, 4, 0)),
        (vec![0, 1, 16, 17], vec![0, 1, 3, 4])
    );
}

#[test]
fn test_144_8_gpus2_cpus_per_gpu1() {
    let ct = gpu_cluster();
    let mut j = gpu_job(0, 1, GresScope::PerJob, 2, 1);
    j.details.min_cpus = 1;
    assert_eq!(cpu_gpu(&ct, j), (vec![0, 1], vec![0, 1]));
}

#[test]
fn test_144_8_gpus4_cpus_per_gpu1() {
    let ct = gpu_cluster();
    let mut j = gpu_job(0, 1, GresScope::PerJob, 4, 1);
    j.details.min_cpus = 1;
    assert_eq!(cpu_gpu(&ct, j), (vec![0, 1, 16, 17], vec![0, 1, 3, 4]));
}

#[test]
fn test_144_8_ntasks_per_node2_cpus_per_gpu4() {
    let ct = gpu_cluster();
    let mut j = gpu_job(2, 1, GresScope::PerNode, 1, 4);
    j.details.ntasks_per_node = 2;
    j.details.max_nodes = Some(1);
    assert_eq!(cpu_gpu(&ct, j), (vec![0, 1, 2, 3], vec![0]));
}

#[test]
fn test_144_8_gpus_per_task3_cpus_per_gpu2() {
    let ct = gpu_cluster();
    let mut j = gpu_job(1, 1, GresScope::PerTask, 3, 2);
    j.details.max_nodes = Some(1);
    assert_eq!(cpu_gpu(&ct, j), (vec![0, 1, 2, 3, 4, 5], vec![0, 1, 2]));
}

#[test]
fn cons_res_refuses_gpu_options() {
    // cons_res does not support --gpus / --cpus-per-gpu (see below).
    let mut ct = gpu_cluster();
    ct.params.cons_res = true;
    let e = ct
        .job_test(
            &request(
                &ct,
                gpu_job(0, 1, GresScope::PerJob, 2, 1),
                JobTestMode::RunNow,
            ),
            0,
        )
        .unwrap_err();
    // gres_job_state_validate (common/gres.c:5681): ESLURM_UNSUPPORTED_GRES
    // (2122, slurm/slurm_errno.h).
    assert_eq!(e.code, slurm_wasm_sdk::codes::ESLURM_UNSUPPORTED_GRES);
}

/// Runs `j` and adds it to the tables; returns its per-node (index, cores, cpus).
fn start(ct: &mut ConsTres, mut j: Job) -> Vec<(u32, Vec<usize>, u16)> {
    let got = cores(ct, j.clone());
    let r = ct
        .job_test(&request(ct, j.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    j.state = JobState::Running;
    j.resources = Some(r.resources);
    ct.add_running(&j).unwrap();
    got
}

#[test]
fn one_node_walk_checks_the_nodes_it_visits() {
    // `_verify_node_state` (cons_common/job_test.c): `--mem=0` cannot use a
    // node where memory is allocated. A
    // one-node job's walk checks node state as it goes (instead of a pass
    // over every node first): node 0, busy with a small job, is passed
    // over for node 1, as the whole pass would drop it.
    let mut ct = cluster(&["CR_Core_Memory"], 2, 1, 4, 1, 1000);
    let mut a = job(1, 1, 1, 1);
    a.details.memory = MemoryRequest::PerNode(100);
    assert_eq!(start(&mut ct, a)[0].0, 0);
    let mut b = job(2, 1, 1, 1);
    b.details.max_nodes = Some(1);
    b.details.memory = MemoryRequest::PerNode(0);
    assert_eq!(cores(&ct, b)[0].0, 1);
}

#[test]
fn lowest_weight_first() {
    // `_eval_nodes` (cons_tres/job_test.c): lower weights are used first.
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let mut ct = ConsTres::new(p, vec![fixtures::partition(0, "p", 3)], MemoryRequest::None);
    let table: Vec<_> = [10, 1, 10]
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut n = fixtures::node(i as u32, &format!("n{i}"), 1, 4, 1, 100);
            n.weight = *w;
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    assert_eq!(cores(&ct, job(1, 1, 1, 1))[0].0, 1);
    let mut two = job(2, 2, 2, 1);
    two.details.max_nodes = Some(2);
    // Two nodes: the weight-1 node forms its own set; the job then needs a
    // second set: node 0 (first of the weight-10 tier).
    let got: Vec<u32> = cores(&ct, two).iter().map(|n| n.0).collect();
    assert_eq!(got, vec![0, 1]);
}

#[test]
fn lln_picks_least_loaded() {
    // `_eval_nodes_lln` (cons_tres/job_test.c): CR_LLN picks the node with
    // the greatest free/total ratio.
    let mut ct = cluster(&["CR_Core", "CR_LLN"], 3, 1, 4, 1, 100);
    let mut a = job(1, 1, 2, 1);
    a.details.required_nodes = Some(bm(3, &[0]));
    start(&mut ct, a);
    let mut b = job(2, 1, 1, 1);
    b.details.required_nodes = Some(bm(3, &[1]));
    start(&mut ct, b);
    assert_eq!(cores(&ct, job(3, 1, 1, 1))[0].0, 2);
    // Without LLN a one-node job takes the tightest node that alone fits
    // (22.05's _eval_nodes with one node left; anchor job a30): node 1,
    // whose 2 free cores match the request, not the idle node 0.
    let mut ct2 = cluster(&["CR_Core"], 3, 1, 4, 1, 100);
    let mut a = job(1, 1, 2, 1);
    a.details.required_nodes = Some(bm(3, &[1]));
    start(&mut ct2, a);
    assert_eq!(cores(&ct2, job(3, 1, 2, 1))[0].0, 1);
}

/// A CR_Core cluster (plus `params`) of one-socket, one-thread nodes of
/// `cores[i]` cores each.
fn sized_cluster(params: &[&str], cores: &[u16]) -> ConsTres {
    let p = Params::parse(&params.iter().map(|x| x.to_string()).collect::<Vec<_>>()).unwrap();
    let part = fixtures::partition(0, "debug", cores.len() as u32);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    let table: Vec<_> = cores
        .iter()
        .enumerate()
        .map(|(i, &c)| fixtures::node(i as u32, &format!("n{i}"), 1, c, 1, 100))
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

#[test]
fn lln_scan_stops_at_the_last_picks_free_cpus() {
    // 22.05 `_eval_nodes_lln` (cons_tres/job_test.c:2895-2897, :2913): the
    // scan for the next node stops at a new best whose free CPUs equal the
    // last pick's. n0 (8 cores, 4 free: ratio 1/2), n1 and n2 (4 cores,
    // all free: ratio 1). `-N2 -n2` takes n1 first (best ratio); the next
    // scan starts at n0, a new best with n1's 4 free CPUs, and stops
    // there: n0 and n1, not n1 and n2.
    let mut ct = sized_cluster(&["CR_Core", "CR_LLN"], &[8, 4, 4]);
    start(&mut ct, on_node(1, 3, 0, 4));
    let mut j = job(2, 2, 2, 1);
    j.details.max_nodes = Some(2);
    assert_eq!(nodes_of(&ct, j), vec![0, 1]);
}

#[test]
fn whole_node_job_skips_nodes_above_its_max_cpus() {
    // 22.05 `choose_nodes` (cons_tres/job_test.c:3156-3172): a whole-node
    // job (`--exclusive`) with a CPU maximum uses no node offering more
    // CPUs than it. n0 (16 cores), n1 and n2 (4 cores), all idle:
    // `-N2 -n2 --exclusive` with at most 8 CPUs takes n1 and n2, not the
    // first two nodes of the set.
    let ct = sized_cluster(&["CR_Core"], &[16, 4, 4]);
    let mut j = job(1, 2, 2, 1);
    j.details.max_nodes = Some(2);
    j.details.share = ShareRequest::Exclusive;
    j.details.max_cpus = Some(8);
    assert_eq!(nodes_of(&ct, j.clone()), vec![1, 2]);
    // Without the maximum: n0 and n1.
    j.details.max_cpus = None;
    assert_eq!(nodes_of(&ct, j.clone()), vec![0, 1]);
    // A required node above the maximum: no fit.
    j.details.max_cpus = Some(8);
    j.details.required_nodes = Some(bm(3, &[0]));
    assert!(refused(&ct, j, JobTestMode::RunNow));
}

#[test]
fn failed_choice_is_retried_without_small_nodes() {
    // 22.05 `choose_nodes` (cons_tres/job_test.c:3201-3247): when
    // `_eval_nodes` fails, nodes of up to 1, 2, ... CPUs are dropped and
    // the choice made again. Four 8-core nodes, n0 and n1 with 2 free
    // cores: `-N1-2 -n16` walks the one set from n0 (2 CPUs), and its last
    // node must then hold 14 CPUs: none does. Without the 2-CPU nodes it
    // takes n2 and n3.
    let mut ct = cluster(&["CR_Core"], 4, 1, 8, 1, 100);
    start(&mut ct, on_node(1, 4, 0, 6));
    start(&mut ct, on_node(2, 4, 1, 6));
    let mut j = job(3, 1, 16, 1);
    j.details.max_nodes = Some(2);
    assert_eq!(
        cores(&ct, j.clone()),
        vec![(2, (0..8).collect(), 8), (3, (0..8).collect(), 8)]
    );
    // A required node is never dropped (:3228-3229): with n0 required the
    // retry keeps it, and n0 with one 8-CPU node is too small.
    j.details.required_nodes = Some(bm(4, &[0]));
    assert!(refused(&ct, j, JobTestMode::RunNow));
}

#[test]
fn required_nodes_are_used() {
    // `_eval_nodes` (cons_tres/job_test.c): required nodes are taken first.
    let ct = cluster(&["CR_Core"], 3, 1, 4, 1, 100);
    let mut j = job(1, 2, 2, 1);
    j.details.required_nodes = Some(bm(3, &[2]));
    // One set n0-n2 holding the required n2: walked up from n2, then down
    // (22.05 cons_tres/job_test.c:837-897).
    let got: Vec<u32> = cores(&ct, j).iter().map(|n| n.0).collect();
    assert_eq!(got, vec![1, 2]);
    let mut x = job(2, 1, 1, 1);
    x.details.excluded_nodes = Some(bm(3, &[0, 1]));
    assert_eq!(cores(&ct, x)[0].0, 2);
}

/// The node indices `j` gets.
fn nodes_of(ct: &ConsTres, j: Job) -> Vec<u32> {
    cores(ct, j).iter().map(|n| n.0).collect()
}

/// A job of `tasks` tasks on node `node` of a `len`-node cluster.
fn on_node(id: u32, len: usize, node: usize, tasks: u32) -> Job {
    let mut j = job(id, 1, tasks, 1);
    j.details.required_nodes = Some(bm(len, &[node]));
    j
}

#[test]
fn node_range_runs_without_its_optional_nodes() {
    // `_eval_nodes` succeeds after the loop when only optional extra nodes
    // are missing; 22.05 cons_tres/job_test.c:253 (`_enough_nodes`) and
    // :1004-1007. `-N1-2 -n1` (req_nodes 2) with n0 full: runs on n1 alone.
    let mut ct = cluster(&["CR_Core"], 2, 1, 4, 1, 100);
    start(&mut ct, on_node(1, 2, 0, 4));
    let mut j = job(2, 1, 1, 1);
    j.details.max_nodes = Some(2);
    assert_eq!(nodes_of(&ct, j), vec![1]);
    // `-N2-3 -n2`: a set of two nodes is enough (needed = rem + min - req).
    let mut ct = cluster(&["CR_Core"], 3, 1, 4, 1, 100);
    start(&mut ct, on_node(1, 3, 1, 4));
    let mut j = job(2, 2, 2, 1);
    j.details.max_nodes = Some(3);
    assert_eq!(nodes_of(&ct, j), vec![0, 2]);
}

#[test]
fn node_range_takes_no_more_nodes_than_tasks() {
    // 22.05 `choose_nodes` (cons_tres/job_test.c:3179-3180) lowers
    // max_nodes to MAX(num_tasks, min_nodes) before `_eval_nodes`. `-N1-4
    // -n2` (req_nodes 4) on four idle nodes: the walk stops after two
    // nodes and the other two are optional, so n0 and n1, not all four.
    let ct = cluster(&["CR_Core"], 4, 1, 4, 1, 100);
    let mut j = job(1, 1, 2, 1);
    j.details.max_nodes = Some(4);
    assert_eq!(nodes_of(&ct, j), vec![0, 1]);
    // `_eval_nodes_lln` (:2773-2775) caps at MIN(max_nodes, num_tasks):
    // under CR_LLN the same job gets two nodes as well, and `-N3 -n2`,
    // left one node short of its minimum, does not run.
    let ct = cluster(&["CR_Core", "CR_LLN"], 4, 1, 4, 1, 100);
    let mut j = job(2, 1, 2, 1);
    j.details.max_nodes = Some(4);
    assert_eq!(nodes_of(&ct, j).len(), 2);
    let j = job(3, 3, 2, 1);
    assert!(refused(&ct, j, JobTestMode::RunNow));
}

#[test]
fn node_range_clips_cpus_for_the_minimum_nodes_only() {
    // 22.05 `_cpus_to_use` (cons_tres/job_test.c:228-251) keeps one core's
    // worth of CPUs per node still to come, counting the nodes below
    // `min_nodes` (`min_rem_nodes`, :844, :881, :969), not those up to
    // req_nodes. `-N1-2 -n3` under CR_CPU on 2-thread nodes: n0 may take
    // all 3 CPUs (none kept for the optional n1), so the tasks go 2 + 1
    // (CPUs 2 and 1), not 1 + 2.
    let ct = cluster(&["CR_CPU"], 2, 1, 4, 2, 100);
    let mut j = job(1, 1, 3, 1);
    j.details.max_nodes = Some(2);
    let got: Vec<(u32, u16)> = cores(&ct, j).iter().map(|n| (n.0, n.2)).collect();
    assert_eq!(got, vec![(0, 2), (1, 1)]);
}

#[test]
fn bigger_insufficient_set_beats_a_sufficient_one_of_equal_weight() {
    // 22.05 `_eval_nodes` (cons_tres/job_test.c:776-783): at equal weight
    // a set that is not sufficient but has more CPUs than the best so far
    // becomes the best even when that one is sufficient. n0-n2 keep one
    // free core each (set A: 3 CPUs, 3 nodes), n3 is full, n4-n5 idle (set
    // B: 8 CPUs, 2 nodes). `-N3 -n3`: A is sufficient, B is bigger, so B's
    // nodes are taken first and A then gives its first node.
    let mut ct = cluster(&["CR_Core"], 6, 1, 4, 1, 100);
    for n in 0..3 {
        start(&mut ct, on_node(n as u32 + 1, 6, n, 3));
    }
    start(&mut ct, on_node(4, 6, 3, 4));
    assert_eq!(nodes_of(&ct, job(5, 3, 3, 1)), vec![0, 4, 5]);
}

#[test]
fn contiguous_job_takes_the_tighter_or_lighter_sufficient_set() {
    // 22.05 `_eval_nodes` (cons_tres/job_test.c:766-791): the weight and
    // equal-weight rules apply to a contiguous job too; "first sufficient"
    // only adds a sufficient set over an insufficient best. n2 full: sets
    // n0-n1 (8 CPUs) and n3 (4 CPUs), both sufficient for `--contiguous
    // -n2`; the tighter n3 wins.
    let mut ct = cluster(&["CR_Core"], 4, 1, 4, 1, 100);
    start(&mut ct, on_node(1, 4, 2, 4));
    let mut j = job(2, 1, 2, 1);
    j.details.contiguous = true;
    assert_eq!(nodes_of(&ct, j.clone()), vec![3]);
    // A contiguous set is not split by weight; its weight is that of its
    // last node (:641-642). n0 weighs 1 and n1 10, so the set n0-n1 weighs
    // 10 and n3 (weight 5) is lighter.
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let mut ct = ConsTres::new(p, vec![fixtures::partition(0, "p", 4)], MemoryRequest::None);
    let table: Vec<_> = [1, 10, 1, 5]
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut n = fixtures::node(i as u32, &format!("n{i}"), 1, 4, 1, 100);
            n.weight = *w;
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    start(&mut ct, on_node(1, 4, 2, 4));
    assert_eq!(nodes_of(&ct, j), vec![3]);
}

#[test]
fn one_node_left_per_job_gres_sees_every_set() {
    // 22.05 `_eval_nodes` compares every set in each pass (a set without
    // a node that alone fits is chosen, takes nothing and is dropped,
    // :994-1002): with per-job GRES a bigger set that lacks them can be
    // the best for a while and hand the choice to a later sufficient set.
    // `-n1 --gpus=1 --cpus-per-gpu=4` (one node): n0 (4 CPUs, a GPU) is
    // sufficient, n2-n3 (3 + 3 CPUs, no GPU) bigger but short of the GPU,
    // n5 (5 CPUs, a GPU) sufficient after it: n5 is taken, not n0.
    use crate::can_run::Offer;
    use crate::eval_nodes::{eval_nodes, Counts};
    use crate::request::JobView;
    let ct = cluster(&["CR_Core"], 6, 1, 8, 1, 100);
    let mut j = with_gres(job(1, 1, 1, 1), "gpu", 1);
    j.details.gres[0].scope = GresScope::PerJob;
    j.details.gres[0].cpus_per_gres = Some(4);
    let view = JobView::new(
        &j,
        &ct.gres_names,
        &ct.partitions,
        &ct.default_memory,
        &ct.params,
        6,
    )
    .unwrap();
    let offer = |node: usize, cpus: u32, gpus: u64| Offer {
        node,
        avail_cpus: cpus,
        cpus_per_core: 1,
        max_cpus: cpus,
        near_gpus: 0,
        job_gres: gpus,
    };
    let offers = [
        offer(0, 4, 1),
        offer(2, 3, 0),
        offer(3, 3, 0),
        offer(5, 5, 1),
    ];
    let counts = Counts {
        min: 1,
        req: 1,
        max: u32::MAX,
    };
    let got = eval_nodes(&view, &ct.params, &ct.recs, &offers, counts).unwrap();
    // (Clipped to the job's 4 CPUs by `_cpus_to_use`.)
    assert_eq!(got, vec![(5, 4)]);
}

#[test]
fn cpus_to_use_keeps_the_gres_cpus_of_a_node() {
    // 22.05 `_cpus_to_use` (cons_tres/job_test.c:228-248) clips a node's
    // CPUs to what the job still may use, but never below `pn_min_cpus`
    // nor the job's per-node GRES CPUs (`min_gres_cpu`, here 1 GPU x 4
    // CPUs per GPU). `-N2 -n2 --gpus-per-node=1 --cpus-per-gpu=4` on two
    // 8-CPU nodes of 2 threads per core: the job may use 8 CPUs; the first
    // node keeps one core (2 CPUs) for the second and takes 6, and the
    // second, left 2, still gets the 4 its GPU needs.
    use crate::can_run::Offer;
    use crate::eval_nodes::{eval_nodes, Counts};
    use crate::request::JobView;
    let ct = cluster(&["CR_Core"], 2, 1, 4, 2, 100);
    let mut j = with_gres(job(1, 2, 2, 1), "gpu", 1);
    j.details.gres[0].cpus_per_gres = Some(4);
    j.details.min_cpus = 8;
    let view = JobView::new(
        &j,
        &ct.gres_names,
        &ct.partitions,
        &ct.default_memory,
        &ct.params,
        2,
    )
    .unwrap();
    let offer = |node: usize| Offer {
        node,
        avail_cpus: 8,
        cpus_per_core: 2,
        max_cpus: 8,
        near_gpus: 1,
        job_gres: 0,
    };
    let counts = Counts {
        min: 2,
        req: 2,
        max: 2,
    };
    let got = eval_nodes(&view, &ct.params, &ct.recs, &[offer(0), offer(1)], counts).unwrap();
    assert_eq!(got, vec![(0, 6), (1, 4)]);
}

#[test]
fn retries_size_nodes_by_cpus_and_usable_gpus() {
    // 22.05 `choose_nodes` (cons_tres/job_test.c:3212-3227): a node's
    // size for the retries is `avail_res_cnt`, its CPUs plus its usable
    // GPUs (job_test.c:3495). `-N1-2 -n16 --gpus-per-node=1` on n0 (2
    // CPUs, 1 GPU), n1 (2 CPUs, 6 GPUs) and n2, n3 (8 CPUs, 0 GPUs): the
    // first choice (n0, then nothing holds 14 CPUs) fails; dropping the
    // nodes of size 3 or less keeps n1 (size 8, as big as the largest),
    // whose 2 CPUs again leave too few: no fit. With n1's GPUs uncounted
    // it would have gone too and n2, n3 fitted.
    use crate::can_run::Offer;
    use crate::eval_nodes::{choose_nodes, Counts};
    use crate::request::JobView;
    let ct = cluster(&["CR_Core"], 4, 1, 8, 1, 100);
    let mut j = with_gres(job(1, 1, 16, 1), "gpu", 1);
    j.details.max_nodes = Some(2);
    let view = JobView::new(
        &j,
        &ct.gres_names,
        &ct.partitions,
        &ct.default_memory,
        &ct.params,
        4,
    )
    .unwrap();
    let offers: Vec<Offer> = [2, 2, 8, 8]
        .iter()
        .enumerate()
        .map(|(node, &cpus)| Offer {
            node,
            avail_cpus: cpus,
            cpus_per_core: 1,
            max_cpus: cpus,
            near_gpus: 0,
            job_gres: 0,
        })
        .collect();
    let counts = Counts {
        min: 1,
        req: 2,
        max: 2,
    };
    let choose = |gpus: [u16; 4]| {
        choose_nodes(
            &view,
            &ct.params,
            &ct.recs,
            &offers,
            || None,
            counts,
            |i| gpus[i],
        )
        .map(|(chosen, _)| chosen)
    };
    assert_eq!(choose([1, 6, 0, 0]), None);
    assert_eq!(choose([1, 1, 0, 0]), Some(vec![(2, 8), (3, 8)]));
}

#[test]
fn a_failed_choice_leaves_its_clipped_cpus_to_the_next() {
    // 22.05 `_cpus_to_use` writes a clipped CPU count into the node's
    // `avail_res` (cons_tres/job_test.c:244-246), and `choose_nodes`
    // chooses again from the same array (:3186-3237). `-N2 -n5` on nodes
    // of 4 cores x 2 threads. The first pass offers n0 (8 CPUs) and n2
    // (1): the job takes n0, clipped to 3 (5 CPUs less one core kept for
    // the second node), and n2 cannot hold the 2 left: it fails. The
    // second pass offers n0, n1 (8 each) and n3, n4 (6 each): Slurm sees
    // n0 with 3, so the set n0-n1 holds 11 CPUs, tighter than n3-n4's 12,
    // and is chosen. Offered afresh, n0-n1 (16) would lose to n3-n4.
    // Under CR_ONE_TASK_PER_CORE, `_select_cores` counts the node's CPUs
    // again from its cores (:2172-2177): the clip is forgotten.
    use crate::can_run::Offer;
    use crate::eval_nodes::{choose_nodes, Counts};
    use crate::request::JobView;
    let offer = |node: usize, cpus: u32| Offer {
        node,
        avail_cpus: cpus,
        cpus_per_core: 2,
        max_cpus: cpus,
        near_gpus: 0,
        job_gres: 0,
    };
    let first = [offer(0, 8), offer(2, 1)];
    let later = vec![offer(0, 8), offer(1, 8), offer(3, 6), offer(4, 6)];
    let counts = Counts {
        min: 2,
        req: 2,
        max: 2,
    };
    let choose = |params: &[&str]| {
        let ct = cluster(params, 5, 1, 4, 2, 100);
        let mut j = job(1, 2, 5, 1);
        j.details.max_nodes = Some(2);
        let view = JobView::new(
            &j,
            &ct.gres_names,
            &ct.partitions,
            &ct.default_memory,
            &ct.params,
            5,
        )
        .unwrap();
        choose_nodes(
            &view,
            &ct.params,
            &ct.recs,
            &first,
            || Some(later.clone()),
            counts,
            |_| 0,
        )
    };
    assert_eq!(choose(&["CR_Core"]), Some((vec![(0, 3), (1, 2)], false)));
    assert_eq!(
        choose(&["CR_Core", "CR_ONE_TASK_PER_CORE"]),
        Some((vec![(3, 3), (4, 2)], false))
    );
}

#[test]
fn required_node_is_walked_up_from() {
    // `_eval_nodes` takes a set's nodes up, then down, from its first
    // required node (22.05 cons_tres/job_test.c:837-897). Four
    // idle nodes, `-N2 -n2 -w n1`: n1's set is walked up from n1 -> n1, n2.
    let ct = cluster(&["CR_Core"], 4, 1, 4, 1, 100);
    let mut j = job(1, 2, 2, 1);
    j.details.required_nodes = Some(bm(4, &[1]));
    assert_eq!(nodes_of(&ct, j), vec![1, 2]);
}

#[test]
fn set_with_required_node_is_preferred() {
    // `_eval_nodes` prefers the first set, or one with required nodes (22.05
    // cons_tres/job_test.c:763-770). n1 full: sets {n0} and {n2, n3} (the
    // latter holding the required n2); `-N2 -n2 -w n2` takes n3, not n0.
    let mut ct = cluster(&["CR_Core"], 4, 1, 4, 1, 100);
    start(&mut ct, on_node(1, 4, 1, 4));
    let mut j = job(2, 2, 2, 1);
    j.details.required_nodes = Some(bm(4, &[2]));
    assert_eq!(nodes_of(&ct, j), vec![2, 3]);
}

#[test]
fn required_nodes_mark_their_set_as_22_05_builds_it() {
    // 22.05 `_eval_nodes` builds the sets in one pass (cons_tres/
    // job_test.c:594-690): a required node sets no set weight, so after
    // an unusable node (weight unset) required nodes join the nodes after
    // them whatever their weight and mark that set; after a weight change
    // the new set's weight reads 0, so the next node "changes" it again
    // and the required nodes before it lose their mark.
    let weighted = |weights: &[u32]| {
        let p = Params::parse(&["CR_Core".to_string()]).unwrap();
        let n = weights.len();
        let mut ct = ConsTres::new(
            p,
            vec![fixtures::partition(0, "p", n as u32)],
            MemoryRequest::None,
        );
        let table: Vec<_> = weights
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let mut node = fixtures::node(i as u32, &format!("n{i}"), 1, 4, 1, 100);
                node.weight = *w;
                node
            })
            .collect();
        ct.node_init(&table).unwrap();
        ct
    };
    // n1 full; `-N2 -n2 -w n2`: n2 (weight 1) joins n3-n4 (weight 10),
    // marking that set, which beats the lighter n0: n3 is taken.
    let mut ct = weighted(&[5, 1, 1, 10, 10]);
    start(&mut ct, on_node(1, 5, 1, 4));
    let mut j = job(2, 2, 2, 1);
    j.details.required_nodes = Some(bm(5, &[2]));
    assert_eq!(nodes_of(&ct, j), vec![2, 3]);
    // n0 (weight 1) keeps 2 free cores, n1 weighs 5; `-N2 -n6 -w n2`: n2
    // starts a set after a weight change, n3 takes its mark away, and the
    // 2 CPUs still needed go to the tighter n0.
    let mut ct = weighted(&[1, 5, 1, 1]);
    start(&mut ct, on_node(1, 4, 0, 2));
    let mut j = job(2, 2, 6, 1);
    j.details.required_nodes = Some(bm(4, &[2]));
    assert_eq!(nodes_of(&ct, j), vec![0, 2]);
}

#[test]
fn contiguous_job_grows_around_its_required_node() {
    // `_eval_nodes` with --contiguous and required nodes: all required
    // nodes must be in one set (22.05 cons_tres/job_test.c:747-750 and
    // 806-822). n3 full,
    // `--contiguous -N2 -w n2`: the set n0-n2 is walked down from n2.
    let mut ct = cluster(&["CR_Core"], 4, 1, 4, 1, 100);
    start(&mut ct, on_node(1, 4, 3, 4));
    let mut j = job(2, 2, 2, 1);
    j.details.contiguous = true;
    j.details.required_nodes = Some(bm(4, &[2]));
    assert_eq!(nodes_of(&ct, j), vec![1, 2]);
    // Required nodes in two sets (n1 and n3 apart, n2 full): no fit.
    let mut ct = cluster(&["CR_Core"], 5, 1, 4, 1, 100);
    start(&mut ct, on_node(1, 5, 2, 4));
    let mut j = job(2, 3, 3, 1);
    j.details.contiguous = true;
    j.details.required_nodes = Some(bm(5, &[1, 3]));
    assert!(refused(&ct, j, JobTestMode::RunNow));
}

#[test]
fn single_node_best_fit_in_a_set_without_required_nodes() {
    // `_eval_nodes`, in a set without required nodes: when rem_nodes <= 1 it
    // picks the single node with the fewest available CPUs that is still >=
    // rem_cpus; 22.05 cons_tres/job_test.c:898-936 tests the set's
    // required node, not the job's. n1 full, n3 with 2 free cores;
    // `-N2 -n6 -w n0`: n0 gives 4, the set n2-n4 then gives n3 (exact fit).
    let mut ct = cluster(&["CR_Core"], 5, 1, 4, 1, 100);
    start(&mut ct, on_node(1, 5, 1, 4));
    start(&mut ct, on_node(2, 5, 3, 2));
    let mut j = job(3, 2, 6, 1);
    j.details.required_nodes = Some(bm(5, &[0]));
    assert_eq!(nodes_of(&ct, j), vec![0, 3]);
}

#[test]
fn lln_ranks_by_free_cpus_before_job_limits() {
    // `_eval_nodes_lln` (free_cpus/total_cpus); 22.05 cons_tres/job_test.c
    // :2854-2862 ranks by `max_cpus` (free cores x threads,
    // cons_common.c:392), not by the CPUs left after the job's memory.
    // n0: 7 CPUs but 1000 MB free (2 CPUs at 500 MB); n1: 4 CPUs free.
    let mut ct = cluster(&["CR_CPU_Memory", "CR_LLN"], 2, 1, 8, 1, 8000);
    let mut a = on_node(1, 2, 0, 1);
    a.details.memory = MemoryRequest::PerNode(7000);
    start(&mut ct, a);
    let mut b = on_node(2, 2, 1, 4);
    b.details.memory = MemoryRequest::PerNode(100);
    start(&mut ct, b);
    let mut j = job(3, 1, 1, 1);
    j.details.memory = MemoryRequest::PerCpu(500);
    assert_eq!(nodes_of(&ct, j), vec![0]);
}

#[test]
fn cr_socket_allocates_whole_sockets() {
    // `_allocate_sc` (cons_common.c): CR_Socket allocates whole sockets; a
    // used socket is unusable.
    let mut ct = cluster(&["CR_Socket"], 1, 2, 4, 1, 100);
    assert_eq!(
        start(&mut ct, job(1, 1, 1, 1)),
        vec![(0, vec![0, 1, 2, 3], 4)]
    );
    assert_eq!(
        start(&mut ct, job(2, 1, 1, 1)),
        vec![(0, vec![4, 5, 6, 7], 4)]
    );
    assert!(refused(&ct, job(3, 1, 1, 1), JobTestMode::RunNow));
}

#[test]
fn cr_cpu_counts_threads() {
    // `_allocate_sc` (cons_common.c): CR_CPU allocates single CPUs (threads).
    let ct = cluster(&["CR_CPU"], 1, 1, 4, 2, 100);
    assert_eq!(cores(&ct, job(1, 1, 1, 1)), vec![(0, vec![0], 1)]);
    assert_eq!(cores(&ct, job(2, 1, 3, 1)), vec![(0, vec![0, 1], 3)]);
}

#[test]
fn force_oversubscribe_shares_rows() {
    // part_data_create_array (cons_common/part_data.c): FORCE:2 gives two
    // rows; jobs share cores up to two deep.
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let mut part = fixtures::partition(0, "p", 1);
    part.oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Force(2);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    ct.node_init(&[fixtures::node(0, "n0", 1, 4, 1, 100)])
        .unwrap();
    start(&mut ct, job(1, 1, 4, 1));
    assert_eq!(
        start(&mut ct, job(2, 1, 4, 1)),
        vec![(0, vec![0, 1, 2, 3], 4)]
    );
    assert!(refused(&ct, job(3, 1, 4, 1), JobTestMode::RunNow));
    ct.job_fini(1);
    assert!(ct
        .job_test(&request(&ct, job(3, 1, 4, 1), JobTestMode::RunNow), 0)
        .is_ok());
}

#[test]
fn whole_memory_default_blocks_second_job() {
    // `_verify_node_state` and `_job_test` (cons_common/job_test.c): no
    // memory request with *_Memory = all of the node's memory.
    let mut ct = cluster(&["CR_Core_Memory"], 2, 1, 4, 1, 1000);
    start(&mut ct, job(1, 1, 1, 1));
    assert_eq!(ct.usage.nodes[0].alloc_memory, 1000);
    assert_eq!(start(&mut ct, job(2, 1, 1, 1))[0].0, 1);
}

#[test]
fn mps_shares_come_from_one_gpu_the_one_in_use() {
    // `_build_sock_gres_by_topo` (cons_tres/gres_sched.c): shared GRES come
    // from a single GPU per node. And mps is
    // one-sharing by default (22.05 common/gres.c:1392-1394, 1429-1430):
    // once shares of one GPU are allocated, later jobs may only use the
    // GPUs with shares in use (`gres_use_busy_dev`, common/gres.c:
    // 10132-10146; cons_tres/gres_sched.c:85-87). Anchor
    // cons_tres-CR_Core_Memory-one_task a15 (`--gres=mps:100`) went to n4
    // rather than n2, whose GPU 1 was idle but whose GPU 0 held a14's 50.
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let mut ct = ConsTres::new(p, vec![fixtures::partition(0, "p", 1)], MemoryRequest::None);
    let mut n = fixtures::node(0, "n0", 1, 4, 1, 100);
    n.gres_topology = (0..2)
        .map(|_| GresDeviceGroup {
            name: "mps".into(),
            type_name: None,
            count: 100,
            cores: None,
            links: Vec::new(),
        })
        .collect();
    ct.node_init(&[n]).unwrap();
    let mps = |id: u32, count: u64| {
        let mut j = job(id, 1, 1, 1);
        j.details.gres = vec![GresRequest {
            name: "mps".into(),
            type_name: None,
            scope: GresScope::PerNode,
            count,
            cpus_per_gres: None,
            mem_per_gres: None,
        }];
        j
    };
    let run = |ct: &mut ConsTres, j: Job| {
        let r = ct
            .job_test(&request(ct, j.clone(), JobTestMode::RunNow), 0)
            .unwrap();
        let g = r.resources.per_node[0].gres[0].clone();
        let mut j = j;
        j.state = JobState::Running;
        j.resources = Some(r.resources);
        ct.add_running(&j).unwrap();
        let d = crate::bits::Bits::from_words(2, &g.devices.unwrap().words).unwrap();
        (d.ones().collect::<Vec<_>>(), g.per_device)
    };
    assert_eq!(run(&mut ct, mps(1, 50)), (vec![0], vec![50]));
    assert!(refused(&ct, mps(2, 60), JobTestMode::RunNow));
    assert_eq!(run(&mut ct, mps(3, 30)), (vec![0], vec![30]));
    ct.job_fini(1);
    ct.job_fini(3);
    assert_eq!(run(&mut ct, mps(4, 60)), (vec![0], vec![60]));
}

#[test]
fn gpus_per_job_spread_over_nodes() {
    // `_set_job_bits1` (cons_common/gres_select_filter.c): per job, each
    // node gets at most remaining - (nodes left - 1).
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let mut ct = ConsTres::new(p, vec![fixtures::partition(0, "p", 2)], MemoryRequest::None);
    let table: Vec<_> = (0..2)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{i}"), 1, 4, 1, 100);
            n.gres = vec![slurm_wasm_sdk::types::GresCount {
                name: "gpu".into(),
                type_name: None,
                count: 2,
            }];
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    let mut j = job(1, 2, 2, 1);
    j.details.gres = vec![GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope: GresScope::PerJob,
        count: 3,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    let r = ct
        .job_test(&request(&ct, j, JobTestMode::RunNow), 0)
        .unwrap();
    let counts: Vec<u64> = r
        .resources
        .per_node
        .iter()
        .map(|n| n.gres[0].count)
        .collect();
    assert_eq!(counts, vec![2, 1]);
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
fn reservation_test_picks_nodes_and_cores() {
    // select_cons_tres.c (22.05) `_sequential_pick`: whole nodes are the
    // first `node_cnt` available ones (excluded cores do not matter);
    // one core count without a node count takes free cores node by node.
    let ct = cluster(&["CR_Core"], 3, 1, 4, 1, 100);
    let req = slurm_wasm_sdk::select::ReservationRequest {
        node_count: 2,
        core_count: 0,
        cores_per_node: Vec::new(),
        available: bm(3, &[0, 1, 2]),
        excluded_cores: Some(bm(12, &[0])),
        flags: 0,
    };
    let (nodes, cores) = ct.resv_test(&req).unwrap();
    assert_eq!(nodes.ones().collect::<Vec<_>>(), vec![0, 1]);
    assert!(cores.is_none());
    let req = slurm_wasm_sdk::select::ReservationRequest {
        node_count: 0,
        core_count: 6,
        ..req
    };
    let (nodes, cores) = ct.resv_test(&req).unwrap();
    assert_eq!(nodes.ones().collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(
        cores.unwrap().ones().collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 5, 6]
    );
}

fn core_reservation(
    node_count: u32,
    core_count: u32,
    excluded: &[usize],
    flags: u64,
) -> slurm_wasm_sdk::select::ReservationRequest {
    slurm_wasm_sdk::select::ReservationRequest {
        node_count,
        core_count,
        cores_per_node: Vec::new(),
        available: bm(2, &[0, 1]),
        excluded_cores: Some(bm(16, excluded)),
        flags,
    }
}

#[test]
fn reservation_cores_split_over_the_node_count() {
    // `_sequential_pick`: CoreCnt=4 NodeCnt=2 is 4 / 2 = 2 cores on each
    // of two nodes.
    let ct = cluster(&["CR_Core"], 2, 1, 8, 1, 100);
    let (nodes, cores) = ct.resv_test(&core_reservation(2, 4, &[], 0)).unwrap();
    assert_eq!(nodes.ones().collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(cores.unwrap().ones().collect::<Vec<_>>(), vec![0, 1, 8, 9]);
    // CoreCnt=5 NodeCnt=2: 2 each, the remainder on the first node with more.
    let (_, cores) = ct.resv_test(&core_reservation(2, 5, &[], 0)).unwrap();
    assert_eq!(
        cores.unwrap().ones().collect::<Vec<_>>(),
        vec![0, 1, 2, 8, 9]
    );
}

#[test]
fn reservation_node_must_hold_its_whole_core_count() {
    // `_sequential_pick` with NodeCnt=1 CoreCnt=4: a node with fewer free
    // cores is skipped, not partly used.
    let ct = cluster(&["CR_Core"], 2, 1, 8, 1, 100);
    let (nodes, cores) = ct
        .resv_test(&core_reservation(1, 4, &[2, 3, 4, 5, 6, 7], 0))
        .unwrap();
    assert_eq!(nodes.ones().collect::<Vec<_>>(), vec![1]);
    assert_eq!(
        cores.unwrap().ones().collect::<Vec<_>>(),
        vec![8, 9, 10, 11]
    );
    let e = ct.resv_test(&core_reservation(1, 9, &[], 0)).unwrap_err();
    assert_eq!(e.code, slurm_wasm_sdk::codes::ESLURM_NODES_BUSY);
}

#[test]
fn reservation_first_cores_needs_the_nodes_first_cores() {
    // select_cons_tres.c `_pick_first_cores` (Flags=FIRST_CORES): a node
    // qualifies only when cores 0..n-1 are all free.
    let ct = cluster(&["CR_Core"], 2, 1, 8, 1, 100);
    let first_cores = 1 << 16;
    let (nodes, cores) = ct
        .resv_test(&core_reservation(1, 2, &[1], first_cores))
        .unwrap();
    assert_eq!(nodes.ones().collect::<Vec<_>>(), vec![1]);
    assert_eq!(cores.unwrap().ones().collect::<Vec<_>>(), vec![8, 9]);
    let (nodes, _) = ct.resv_test(&core_reservation(1, 2, &[1], 0)).unwrap();
    assert_eq!(
        nodes.ones().collect::<Vec<_>>(),
        vec![0],
        "without the flag any 2 free cores do"
    );
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

/// The anchor cluster (tests/fixtures/anchor/select/cons_tres-CR_Core_Memory):
/// n[1-4] 2 sockets x 2 cores x 2 threads, 4000 MB, gres.conf
/// `gpu Cores=0-1`, `gpu Cores=2-3`, `mps Count=100` per GPU, DefMemPerCPU=250.
fn anchor_cluster() -> ConsTres {
    anchor_cluster_with("CR_Core_Memory")
}

/// The anchor cluster under `SelectTypeParameters=param`.
fn anchor_cluster_with(param: &str) -> ConsTres {
    anchor_cluster_of(param, 0)
}

/// The anchor cluster under `SelectTypeParameters=param` with
/// `CoreSpecCount=core_spec` on every node.
fn anchor_cluster_of(param: &str, core_spec: u16) -> ConsTres {
    anchor_like(
        param,
        4,
        (2, 2),
        core_spec,
        &[
            ("gpu", 1, &[0, 1]),
            ("gpu", 1, &[2, 3]),
            ("mps", 100, &[0, 1]),
            ("mps", 100, &[2, 3]),
        ],
    )
}

/// Nodes like the anchor's (2 threads per core, 4000 MB, named n1, n2, ...,
/// partition `big`, DefMemPerCPU=250) under `SelectTypeParameters=param`:
/// `nodes` nodes of `sockets x cores_per_socket` cores, each with
/// `CoreSpecCount=core_spec` and the device groups `gres` (name, count,
/// `Cores=`).
fn anchor_like(
    param: &str,
    nodes: u32,
    (sockets, cores_per_socket): (u16, u16),
    core_spec: u16,
    gres: &[(&str, u64, &[usize])],
) -> ConsTres {
    let p = Params::parse(&[param.to_string()]).unwrap();
    let mut ct = ConsTres::new(
        p,
        vec![fixtures::partition(0, "big", nodes)],
        MemoryRequest::PerCpu(250),
    );
    let cores = (sockets * cores_per_socket) as usize;
    let table: Vec<_> = (0..nodes)
        .map(|i| {
            let mut n = fixtures::node(
                i,
                &format!("n{}", i + 1),
                sockets,
                cores_per_socket,
                2,
                4000,
            );
            n.core_spec_count = core_spec;
            n.gres_topology = gres
                .iter()
                .map(|&(name, count, on)| GresDeviceGroup {
                    name: name.into(),
                    type_name: None,
                    count,
                    cores: Some(bm(cores, on)),
                    links: Vec::new(),
                })
                .collect();
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

#[test]
fn a_device_counts_on_the_first_of_its_sockets() {
    // 22.05 `_build_sock_gres_by_topo` (cons_tres/gres_sched.c:188-230)
    // counts a device bound to some but not all sockets on the first of
    // them only (with enforce-binding the first with a free core). Checked
    // on the anchor with its nodes as 4 sockets x 1 core x 2 threads (GPU 0
    // `Cores=0-1` spans sockets 0-1, GPU 1 `Cores=2-3` sockets 2-3), by
    // hand: after `-w n1 -n1` took core 0, `-w n1 -n1 --gres=gpu:1` got
    // CPU_IDs=4-5 and gpu:1(IDX:1). Socket 1, with GPU 0's other core,
    // does not count GPU 0. With `--gres-flags=enforce-binding` GPU 0
    // counts on socket 1, its first socket with a free core: CPU_IDs=2-3
    // and gpu:1(IDX:0).
    let mut ct = anchor_like(
        "CR_Core_Memory",
        1,
        (4, 1),
        0,
        &[("gpu", 1, &[0, 1]), ("gpu", 1, &[2, 3])],
    );
    start_full(&mut ct, job(1, 1, 1, 1));
    let gpu_job = with_gres(job(2, 1, 1, 1), "gpu", 1);
    assert_eq!(cpu_gpu(&ct, gpu_job.clone()), (vec![4, 5], vec![1]));
    let mut bound = gpu_job;
    bound.details.gres_flags = GresFlags::ENFORCE_BINDING;
    assert_eq!(cpu_gpu(&ct, bound), (vec![2, 3], vec![0]));
    // Then `-w n1 -n1` took core 1, and `-w n1 -n2 --gres=gpu:2` got
    // CPU_IDs=4-5 and gpu:2(IDX:0-1).
    assert_eq!(cores(&ct, job(3, 1, 1, 1)), vec![(0, vec![1], 2)]);
    start_full(&mut ct, job(3, 1, 1, 1));
    assert_eq!(
        cpu_gpu(&ct, with_gres(job(4, 1, 2, 1), "gpu", 2)),
        (vec![4, 5], vec![0, 1])
    );
}

#[test]
fn a_gpu_request_needs_only_the_sockets_its_total_reaches() {
    // 22.05 `gres_select_filter_sock_core` (gres_select_filter.c:648-662,
    // 663-683): a `--gpus-per-task` or `--gpus` job's node may give it at
    // most the job's total (`gres_per_job`: tasks x count, or the count),
    // and the sockets walked, most free cores first, until their GPUs reach
    // it are the only ones needed; the first pass drops the cores of the
    // others. Hand runs on the anchor with `MaxCPUsPerNode=4` (the
    // recording where a41 differed), `-w n1`, `--mem-per-cpu=100`: on the
    // idle node `-n1 --gpus-per-task=1` and `-n1 --gpus=1` got CPU_IDs=0-1
    // and GPU 0; after `-n2` took core 0, `-n1 --gpus-per-task=1` and `-n1
    // --gpus=1` got CPU_IDs=4-5 and GPU 1 (socket 1 has more free cores);
    // `-n2 --gpus-per-task=1`, whose total of 2 needs both sockets, got
    // CPU_IDs=4-5 and GPUs 0-1, `-n2 --gpus=1` CPU_IDs=4-5 and GPU 1.
    for (scope, two_tasks_gpus) in [
        (GresScope::PerTask, vec![0, 1]),
        (GresScope::PerJob, vec![1]),
    ] {
        let mut ct = anchor_like(
            "CR_Core_Memory",
            1,
            (2, 2),
            0,
            &[("gpu", 1, &[0, 1]), ("gpu", 1, &[2, 3])],
        );
        ct.partitions[0].max_cpus_per_node = Some(4);
        let gpu_job = |id: u32, tasks: u32| {
            let mut j = with_gres_per(job(id, 1, tasks, 1), "gpu", 1, scope);
            j.details.memory = MemoryRequest::PerCpu(100);
            j
        };
        assert_eq!(cpu_gpu(&ct, gpu_job(1, 1)), (vec![0, 1], vec![0]));
        let mut first = job(2, 1, 2, 1);
        first.details.memory = MemoryRequest::PerCpu(100);
        assert_eq!(cores(&ct, first.clone()), vec![(0, vec![0], 2)]);
        start_full(&mut ct, first);
        assert_eq!(cpu_gpu(&ct, gpu_job(3, 1)), (vec![4, 5], vec![1]));
        assert_eq!(cpu_gpu(&ct, gpu_job(4, 2)), (vec![4, 5], two_tasks_gpus));
    }
}

#[test]
fn a_per_job_gpu_request_keeps_the_cores_its_tasks_need() {
    // Fuzzed anchor stream (cons_tres-CR_Core_Memory-fuzz, seed 1) f5,
    // `-N2 --ntasks-per-node=1 --gpus=2` on two idle nodes: each got
    // CPU_IDs=4-5 and GPU 1. With the node's task count bounded (one),
    // 22.05's `gres_select_filter_sock_core` keeps one core, dropping
    // the highest core of the socket with the most free cores (socket 0 on
    // ties) until one is left: core 2, beside GPU 1.
    let ct = anchor_like(
        "CR_Core_Memory",
        2,
        (2, 2),
        0,
        &[("gpu", 1, &[0, 1]), ("gpu", 1, &[2, 3])],
    );
    let mut j = with_gres_per(job(1, 2, 2, 1), "gpu", 2, GresScope::PerJob);
    j.details.max_nodes = Some(2);
    j.details.ntasks_per_node = 1;
    assert_eq!(
        cores(&ct, j.clone()),
        vec![(0, vec![2], 2), (1, vec![2], 2)]
    );
    assert_eq!(cpu_gpu(&ct, j), (vec![4, 5], vec![1]));
}

#[test]
fn near_gpus_weigh_no_more_than_a_per_task_request_needs() {
    // Fuzzed anchor stream (cons_tres-CR_Core_Memory-fuzz, seed 1) f466,
    // `-n1 --gpus-per-task=1`: of a node with one free core beside one GPU
    // and one with a free core beside each of its two, Slurm took the
    // first. 22.05 caps a node's co-located GPUs by `max_node_gres` (the
    // job's total, 1 here) before they lower its scheduling weight, so
    // both weigh the same and the tighter node wins.
    let mut ct = anchor_like(
        "CR_Core_Memory",
        2,
        (2, 2),
        0,
        &[("gpu", 1, &[0, 1]), ("gpu", 1, &[2, 3])],
    );
    let mut six = job(1, 1, 6, 1);
    six.details.required_nodes = Some(bm(2, &[0]));
    six.details.max_nodes = Some(1);
    assert_eq!(start(&mut ct, six), vec![(0, vec![0, 1, 2], 6)]);
    let mut two = job(2, 1, 4, 1);
    two.details.required_nodes = Some(bm(2, &[1]));
    two.details.max_nodes = Some(1);
    assert_eq!(start(&mut ct, two), vec![(1, vec![0, 2], 4)]);
    let j = with_gres_per(job(3, 1, 1, 1), "gpu", 1, GresScope::PerTask);
    assert_eq!(cores(&ct, j)[0].0, 0);
}

fn with_gres(j: Job, name: &str, count: u64) -> Job {
    with_gres_per(j, name, count, GresScope::PerNode)
}

fn with_gres_per(mut j: Job, name: &str, count: u64, scope: GresScope) -> Job {
    j.details.gres = vec![GresRequest {
        name: name.into(),
        type_name: None,
        scope,
        count,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    j
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

fn start_full(ct: &mut ConsTres, mut j: Job) -> slurm_wasm_sdk::types::JobResources {
    let r = ct
        .job_test(&request(ct, j.clone(), JobTestMode::RunNow), 0)
        .unwrap();
    j.state = JobState::Running;
    j.resources = Some(r.resources.clone());
    ct.add_running(&j).unwrap();
    r.resources
}

/// The cores a node's resources hold.
fn held_cores(n: &slurm_wasm_sdk::types::NodeResources) -> Vec<usize> {
    crate::bits::Bits::from_words(n.cores.len as usize, &n.cores.words)
        .unwrap()
        .ones()
        .collect()
}

fn devs(g: &slurm_wasm_sdk::types::GresAllocation) -> Vec<usize> {
    let d = g.devices.as_ref().unwrap();
    crate::bits::Bits::from_words(d.len as usize, &d.words)
        .unwrap()
        .ones()
        .collect()
}

#[test]
fn anchor_exclusive_holds_all_gpus_and_memory_per_cpu() {
    // Anchor a6 (`-n1 --exclusive`): CPU_IDs=0-7 Mem=2000 GRES=gpu:2(IDX:0-1).
    let mut ct = anchor_cluster();
    let mut j = job(1, 1, 1, 1);
    j.details.share = ShareRequest::Exclusive;
    let r = start_full(&mut ct, j);
    let n = &r.per_node[0];
    assert_eq!((n.cpus, n.memory), (8, 2000));
    assert_eq!(n.gres.len(), 1);
    assert_eq!(
        (n.gres[0].name.as_str(), n.gres[0].count, devs(&n.gres[0])),
        ("gpu", 2, vec![0, 1])
    );
}

#[test]
fn anchor_mps_avoids_gpu_in_use_and_takes_its_socket() {
    // Anchor a11 (`-n1 --gres=gpu:1`): CPU_IDs=0-1, IDX 0; then a14
    // (`-n1 --gres=mps:50`): CPU_IDs=4-5, mps:50(IDX:1).
    let mut ct = anchor_cluster();
    let r = start_full(&mut ct, with_gres(job(1, 1, 1, 1), "gpu", 1));
    assert_eq!(devs(&r.per_node[0].gres[0]), vec![0]);
    assert_eq!(r.per_node[0].memory, 500);
    let r = start_full(&mut ct, with_gres(job(2, 1, 1, 1), "mps", 50));
    let n = &r.per_node[0];
    assert_eq!(n.node_index, 0);
    assert_eq!(held_cores(n), vec![2]);
    assert_eq!(
        (devs(&n.gres[0]), n.gres[0].per_device.clone()),
        (vec![1], vec![50])
    );
}

#[test]
fn anchor_first_jobs_pack_the_first_node() {
    // Anchor a1 `-n1` -> n1 CPU_IDs=0-1 Mem=500; a2 `-n2` -> n1 CPU_IDs=2-3;
    // a3 `-c3` -> n1 CPU_IDs=4-7 Mem=1000; a4 `-n2 --mem=1000` -> n2 CPU_IDs=0-1.
    let mut ct = anchor_cluster();
    assert_eq!(start(&mut ct, job(1, 1, 1, 1)), vec![(0, vec![0], 2)]);
    assert_eq!(start(&mut ct, job(2, 1, 2, 1)), vec![(0, vec![1], 2)]);
    assert_eq!(start(&mut ct, job(3, 1, 1, 3)), vec![(0, vec![2, 3], 4)]);
    assert_eq!(ct.usage.nodes[0].alloc_memory, 500 + 500 + 1000);
    let mut a4 = job(4, 1, 2, 1);
    a4.details.memory = MemoryRequest::PerNode(1000);
    assert_eq!(start(&mut ct, a4), vec![(1, vec![0], 2)]);
}

#[test]
fn tasks_wider_than_a_cpu_fill_a_socket_before_the_next() {
    // Fuzzed anchor stream (cons_tres-CR_Core_Memory-fuzz, seed 1) f13,
    // `-n4 -c2 -w n4`: two tasks went to the idle n3 with CPU_IDs=0-3,
    // both on socket 0 (22.05 `_cyclic_sync_core_bitmap` packs each
    // socket with whole tasks before the next), not one task per socket.
    let ct = anchor_cluster();
    let mut j = job(1, 1, 2, 2);
    j.details.max_nodes = Some(1);
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1], 4)]);
    // `-n2 -c3`: socket 0 holds one task of 3 CPUs (4 less the remainder
    // by 3), taken as cores 0 and 1; the second task's core comes from
    // socket 1.
    let mut j = job(2, 1, 2, 3);
    j.details.max_nodes = Some(1);
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1, 2], 6)]);
}

#[test]
fn anchor_stream_a1_to_a19() {
    // The anchor stream (tests/fixtures/anchor/select/cons_tres-CR_Core_Memory,
    // real Slurm 22.05.8): submissions and cancels in order, with the node,
    // cores (core k = CPU_IDs 2k,2k+1) and memory Slurm gave.
    let mut ct = anchor_cluster();
    let mem = |j: &mut Job, m: MemoryRequest| j.details.memory = m;
    start(&mut ct, job(1, 1, 1, 1));
    start(&mut ct, job(2, 1, 2, 1));
    start(&mut ct, job(3, 1, 1, 3));
    let mut a4 = job(4, 1, 2, 1);
    mem(&mut a4, MemoryRequest::PerNode(1000));
    start(&mut ct, a4);
    let mut a5 = job(5, 2, 2, 1);
    a5.details.ntasks_per_node = 1;
    assert_eq!(start(&mut ct, a5), vec![(1, vec![1], 2), (2, vec![0], 2)]);
    let mut a6 = job(6, 1, 1, 1);
    a6.details.share = ShareRequest::Exclusive;
    assert_eq!(start(&mut ct, a6), vec![(3, vec![0, 1, 2, 3], 8)]);
    let mut a7 = job(7, 1, 4, 1);
    mem(&mut a7, MemoryRequest::PerCpu(300));
    let r = start_full(&mut ct, a7);
    assert_eq!((r.per_node[0].node_index, r.per_node[0].memory), (1, 1200));
    ct.job_fini(2);
    let mut a8 = job(8, 1, 2, 1);
    a8.details.required_nodes = Some(bm(4, &[2]));
    assert_eq!(start(&mut ct, a8), vec![(2, vec![1], 2)]);
    let mut a9 = job(9, 1, 3, 1);
    a9.details.excluded_nodes = Some(bm(4, &[0, 1]));
    let r = start_full(&mut ct, a9);
    assert_eq!((r.per_node[0].node_index, r.per_node[0].memory), (2, 1000));
    ct.job_fini(1);
    ct.job_fini(3);
    start(&mut ct, with_gres(job(11, 1, 1, 1), "gpu", 1));
    // a12 `-n2 --gres=gpu:2`: pending (no node has two free GPUs and CPUs).
    assert!(refused(
        &ct,
        with_gres(job(12, 1, 2, 1), "gpu", 2),
        JobTestMode::RunNow
    ));
    start(&mut ct, with_gres(job(14, 1, 1, 1), "mps", 50));
    // a15 `--gres=mps:100`: pending.
    assert!(refused(
        &ct,
        with_gres(job(15, 1, 1, 1), "mps", 100),
        JobTestMode::RunNow
    ));
    ct.job_fini(6);
    // a16 `--contiguous -N2`: pending (n1 and n4 are free but not adjacent).
    let mut a16 = job(16, 2, 2, 1);
    a16.details.contiguous = true;
    let r16 = ct.job_test(&request(&ct, a16, JobTestMode::RunNow), 0);
    assert!(r16.is_err(), "{:?}", r16.map(|r| r.resources.per_node));
    let mut a17 = job(17, 1, 1, 1);
    mem(&mut a17, MemoryRequest::PerNode(3500));
    assert_eq!(start(&mut ct, a17), vec![(3, vec![0], 2)]);
    ct.job_fini(4);
    ct.job_fini(5);
    let mut a18 = job(18, 1, 6, 1);
    a18.details.max_nodes = Some(2);
    mem(&mut a18, MemoryRequest::PerCpu(200));
    let r = start_full(&mut ct, a18);
    let got: Vec<(u32, u64)> = r
        .per_node
        .iter()
        .map(|n| (n.node_index, n.memory))
        .collect();
    assert_eq!(got, vec![(0, 800), (1, 400)]);
    let got: Vec<(u32, Vec<usize>, u16)> = start(&mut ct, job(19, 1, 3, 2));
    assert_eq!(got, vec![(1, vec![1], 2), (2, vec![0], 2), (3, vec![1], 2)]);
}

#[test]
fn anchor_gpu_socket_with_more_free_cores() {
    // Anchor a24 (`--gres=gpu:1 -n4` on a node with core 0 busy): CPU_IDs=4-7,
    // gpu:1(IDX:1): the GPU's socket with room for the CPUs wins.
    let mut ct = anchor_cluster();
    let mut busy = job(1, 1, 1, 1);
    busy.details.required_nodes = Some(bm(4, &[0]));
    busy.details.memory = MemoryRequest::PerNode(100);
    start(&mut ct, busy);
    let mut j = with_gres(job(2, 1, 4, 1), "gpu", 1);
    j.details.required_nodes = Some(bm(4, &[0]));
    let r = start_full(&mut ct, j);
    let n = &r.per_node[0];
    assert_eq!(held_cores(n), vec![2, 3]);
    assert_eq!(devs(&n.gres[0]), vec![1]);
}

#[test]
fn anchor_cr_cpu_walks_the_set_from_its_start() {
    // Anchor cons_tres-CR_CPU_Memory a18 (`-N1-2 -n6 --mem-per-cpu=200`)
    // with two free cores on n2, one on n3 and n4 idle: Slurm 22.05.8 gives
    // n2 4 CPUs Mem=800 and n3 2 CPUs Mem=400, not n4 alone.
    let mut ct = anchor_like("CR_CPU_Memory", 4, (2, 2), 0, &[]);
    let pin = |id: u32, node: usize, tasks: u32| {
        let mut j = job(id, 1, tasks, 1);
        j.details.required_nodes = Some(bm(4, &[node]));
        j.details.memory = MemoryRequest::PerNode(if node == 0 { 4000 } else { 100 });
        j
    };
    start(&mut ct, pin(1, 0, 8));
    start(&mut ct, pin(2, 1, 4));
    start(&mut ct, pin(3, 2, 6));
    let mut a18 = job(18, 1, 6, 1);
    a18.details.max_nodes = Some(2);
    a18.details.memory = MemoryRequest::PerCpu(200);
    let r = start_full(&mut ct, a18);
    let got: Vec<(u32, u16, u64)> = r
        .per_node
        .iter()
        .map(|n| (n.node_index, n.cpus, n.memory))
        .collect();
    assert_eq!(got, vec![(1, 4, 800), (2, 2, 400)]);
}

/// A job of `tasks` tasks pinned to node `node` with 100 MB, optionally
/// with `gpu:1`.
fn pinned(id: u32, node: usize, tasks: u32, gpu: bool) -> Job {
    let mut j = job(id, 1, tasks, 1);
    j.details.required_nodes = Some(bm(4, &[node]));
    j.details.memory = MemoryRequest::PerNode(100);
    if gpu {
        j = with_gres(j, "gpu", 1);
    }
    j
}

#[test]
fn anchor_gpus_per_task_over_two_nodes() {
    // Anchor cons_tres-CR_Core_Memory a29 (`-N2 -n4 --gpus-per-task=1`)
    // with socket 1 and its GPU busy on n2 and n3 (the anchor had socket 1
    // of n2 and socket 1 plus GPU 1 of n3 busy: one GPU beside free cores
    // on each): Slurm ran it on n[1,4] with `CPU_IDs=4-5 Mem=500
    // GRES=gpu:2(IDX:0-1)` on each. Checks the GRES task limit (2 tasks per
    // node), the per-core CPU reserve for the second node, the GPU-locality
    // weight (n1 and n4 have two GPUs beside free cores, n2 and n3 one) and
    // the spread core trim (core 2 kept).
    let mut ct = anchor_cluster();
    let bits_of = |r: &slurm_wasm_sdk::types::JobResources| {
        let n = &r.per_node[0];
        (held_cores(n), devs(&n.gres[0]))
    };
    for (first, node) in [(1, 1), (3, 2)] {
        let a = start_full(&mut ct, pinned(first, node, 4, true));
        assert_eq!(bits_of(&a), (vec![0, 1], vec![0]));
        let b = start_full(&mut ct, pinned(first + 1, node, 4, true));
        assert_eq!(bits_of(&b), (vec![2, 3], vec![1]));
        ct.job_fini(first);
    }
    let mut a29 = job(29, 2, 4, 1);
    a29.details.max_nodes = Some(2);
    a29.details.gres = vec![GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope: GresScope::PerTask,
        count: 1,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    let r = start_full(&mut ct, a29);
    type Placed = (u32, Vec<usize>, u16, u64, Vec<usize>);
    let got: Vec<Placed> = r
        .per_node
        .iter()
        .map(|n| {
            (
                n.node_index,
                held_cores(n),
                n.cpus,
                n.memory,
                devs(&n.gres[0]),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, vec![2], 2, 500, vec![0, 1]),
            (3, vec![2], 2, 500, vec![0, 1]),
        ]
    );
}

#[test]
fn anchor_cr_cpu_mps_cores_beside_its_gpu() {
    // Anchor cons_tres-CR_CPU_Memory a14 (`-n1 --gres=mps:50`) with a11
    // (`-n1 --gres=gpu:1`) on n1's CPUs 0-1 and GPU 0: Slurm gave
    // `CPU_IDs=4-5 Mem=250 GRES=mps:50(IDX:1)`, a core of socket 1 beside
    // GPU 1, not the free core 1 of socket 0.
    let mut ct = anchor_cluster_with("CR_CPU_Memory");
    let a11 = start_full(&mut ct, with_gres(job(11, 1, 1, 1), "gpu", 1));
    assert_eq!(devs(&a11.per_node[0].gres[0]), vec![0]);
    let r = start_full(&mut ct, with_gres(job(14, 1, 1, 1), "mps", 50));
    let n = &r.per_node[0];
    assert_eq!(
        (n.node_index, held_cores(n), n.cpus, n.memory),
        (0, vec![2], 1, 250)
    );
    assert_eq!(devs(&n.gres[0]), vec![1]);
}

#[test]
fn nodes_holding_maps_cores_to_their_nodes() {
    // Four nodes of 2 x 40 cores (80 each: a node spans two words of the
    // core map). Cores 79 (node 0's last), 160 (node 2's first) and 300
    // (node 3) are set: nodes 0, 2 and 3 hold them, node 1 none.
    let ct = cluster(&["CR_Core"], 4, 2, 40, 1, 1000);
    let mut cores = Bits::new(320);
    for c in [79, 160, 161, 300] {
        cores.set(c);
    }
    assert_eq!(
        ct.nodes_holding(&cores).ones().collect::<Vec<_>>(),
        vec![0, 2, 3]
    );
    assert!(!ct.nodes_holding(&Bits::new(320)).any());
    assert_eq!(ct.nodes_holding(&Bits::full(320)).count(), 4);
}

#[test]
fn job_expand_merges_and_scales_shared_cores() {
    // cons_common.c (22.05) select_p_job_expand: CPUs of a node both jobs
    // hold add up, scaled by merged cores / (from cores + to cores) where
    // the jobs shared cores; a job merged with itself is SLURM_ERROR.
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let mut part = fixtures::partition(0, "p", 1);
    part.oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Force(2);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    ct.node_init(&[fixtures::node(0, "n0", 1, 4, 1, 100)])
        .unwrap();
    let empty = ct.usage.clone();
    assert_eq!(
        start(&mut ct, job(1, 1, 4, 1)),
        vec![(0, vec![0, 1, 2, 3], 4)]
    );
    assert_eq!(start(&mut ct, job(2, 1, 2, 1)), vec![(0, vec![0, 1], 2)]);
    let e = ct.job_expand(2, 2).unwrap_err();
    assert_eq!(e.code, slurm_wasm_sdk::codes::SLURM_ERROR);
    let merged = ct.job_expand(1, 2).unwrap();
    assert_eq!(merged.nodes.len(), 1);
    assert_eq!(
        merged.nodes[0].cores.ones().collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    // (4 + 2) CPUs × 4 merged cores / (4 + 2) cores = 4.
    assert_eq!(merged.nodes[0].cpus, 4);
    assert!(!ct.usage.jobs.contains_key(&1), "from holds nothing");
    assert_eq!(
        ct.job_expand(1, 2).unwrap_err().code,
        slurm_wasm_sdk::codes::EINVAL
    );
    ct.job_fini(2);
    assert_eq!(ct.usage, empty, "the merged job's end frees everything");
}

#[test]
fn job_expand_of_disjoint_jobs_keeps_their_cpus() {
    let mut ct = cluster(&["CR_Core"], 2, 1, 4, 1, 1000);
    let empty = ct.usage.clone();
    let mut a = job(1, 1, 2, 1);
    a.details.required_nodes = Some(bm(2, &[0]));
    let mut b = job(2, 1, 4, 1);
    b.details.required_nodes = Some(bm(2, &[1]));
    start(&mut ct, a);
    start(&mut ct, b);
    let merged = ct.job_expand(1, 2).unwrap();
    let cpus: Vec<(usize, u32)> = merged.nodes.iter().map(|n| (n.node, n.cpus)).collect();
    assert_eq!(cpus, vec![(0, 2), (1, 4)]);
    ct.job_fini(2);
    assert_eq!(ct.usage, empty);
}

#[test]
fn a_failed_test_leaves_the_rows_sorted_for_the_next_job() {
    // 22.05 sorts the partition's live rows in step 4 of a RUN_NOW test
    // (cons_common/job_test.c:1264-1265) and adds a starting job to the
    // first row it fits in that order. Hand run on the anchor (CR_Core_Memory,
    // OverSubscribe=FORCE:2, DebugFlags=SelectType for the row dumps,
    // `--mem-per-cpu=100`): A `-w n1 -n8` went to row 0; B `-w n1,n2 -N2
    // -n16` to row 1; C `-w n1 -n1` stayed pending, its test sorting the
    // rows (B's 8 cores first); D `-w n3 -n1` then joined B: row 0 held
    // n1, n2 and n3's core 0, row 1 n1 alone.
    let mut part = fixtures::partition(0, "big", 4);
    part.oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Force(2);
    let p = Params::parse(&["CR_Core_Memory".to_string()]).unwrap();
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::PerCpu(250));
    let nodes: Vec<_> = (0..4)
        .map(|i| fixtures::node(i, &format!("n{}", i + 1), 2, 2, 2, 4000))
        .collect();
    ct.node_init(&nodes).unwrap();
    let pinned = |id: u32, on: &[usize], nodes: u32, tasks: u32| {
        let mut j = job(id, nodes, tasks, 1);
        j.details.required_nodes = Some(bm(4, on));
        j.details.memory = MemoryRequest::PerCpu(100);
        j
    };
    start_full(&mut ct, pinned(1, &[0], 1, 8));
    start_full(&mut ct, pinned(2, &[0, 1], 2, 16));
    let rows = |ct: &ConsTres| -> Vec<Vec<u32>> {
        ct.usage.rows[0]
            .rows
            .iter()
            .map(|r| r.jobs.clone())
            .collect()
    };
    assert_eq!(rows(&ct), vec![vec![1], vec![2]]);
    assert_eq!(
        decision(&ct, pinned(3, &[0], 1, 1)),
        Err(slurm_wasm_sdk::codes::ESLURM_NODES_BUSY)
    );
    start_full(&mut ct, pinned(4, &[2], 1, 1));
    assert_eq!(rows(&ct), vec![vec![2, 4], vec![1]]);
}

#[test]
fn sharing_jobs_of_two_partitions_overlap() {
    // 22.05 `_job_test` steps 2-4 (cons_common/job_test.c:1090-1300):
    // without partition_prio preemption a job sharing its cores counts on
    // every other partition's jobs' cores; only its own partition's rows
    // keep it out. Hand run on the anchor with `big` and `alt` both
    // OverSubscribe=FORCE:2 over n[1-4] (CR_Core_Memory,
    // `--mem-per-cpu=100`), the jobs in this order:
    // A big `-w n1 -n8`: n1 CPU_IDs=0-7; B alt `-w n1 -n2`: n1 0-1;
    // C alt `-w n1 -n2`: n1 2-3; D big `-w n1 -n8`: n1 0-7;
    // E alt `-w n1 -n8`: n1 4-7 and n2 0-1,4-5; F big `-w n2 -n2`: n2 2-3.
    let p = Params::parse(&["CR_Core_Memory".to_string()]).unwrap();
    let parts: Vec<_> = ["big", "alt"]
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut part = fixtures::partition(i as u32, name, 4);
            part.oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Force(2);
            part
        })
        .collect();
    let mut ct = ConsTres::new(p, parts, MemoryRequest::PerCpu(250));
    let nodes: Vec<_> = (0..4)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{}", i + 1), 2, 2, 2, 4000);
            n.partitions = vec![0, 1];
            n
        })
        .collect();
    ct.node_init(&nodes).unwrap();
    let submit = |id: u32, partition: u32, on: usize, tasks: u32| {
        let mut j = job(id, 1, tasks, 1);
        j.partitions = vec![partition];
        j.details.required_nodes = Some(bm(4, &[on]));
        j.details.memory = MemoryRequest::PerCpu(100);
        j
    };
    let cpus = |r: &slurm_wasm_sdk::types::JobResources| -> Vec<(u32, Vec<usize>)> {
        r.per_node
            .iter()
            .map(|n| {
                let cpus = held_cores(n)
                    .into_iter()
                    .flat_map(|k| [2 * k, 2 * k + 1])
                    .collect();
                (n.node_index, cpus)
            })
            .collect()
    };
    let all = vec![0, 1, 2, 3, 4, 5, 6, 7];
    let a = start_full(&mut ct, submit(1, 0, 0, 8));
    assert_eq!(cpus(&a), vec![(0, all.clone())]);
    let b = start_full(&mut ct, submit(2, 1, 0, 2));
    assert_eq!(cpus(&b), vec![(0, vec![0, 1])]);
    let c = start_full(&mut ct, submit(3, 1, 0, 2));
    assert_eq!(cpus(&c), vec![(0, vec![2, 3])]);
    let d = start_full(&mut ct, submit(4, 0, 0, 8));
    assert_eq!(cpus(&d), vec![(0, all)]);
    let e = start_full(&mut ct, submit(5, 1, 0, 8));
    assert_eq!(cpus(&e), vec![(0, vec![4, 5, 6, 7]), (1, vec![0, 1, 4, 5])]);
    let f = start_full(&mut ct, submit(6, 0, 1, 2));
    assert_eq!(cpus(&f), vec![(1, vec![2, 3])]);
}

#[test]
fn sharing_jobs_avoid_lower_tiers_first() {
    // 22.05 `_job_test` step 3 (cons_common/job_test.c:1143-1224): a
    // sharing job that fits nowhere free counts on the cores outside its
    // own PriorityTier's rows, then avoids each lower tier's jobs while it
    // still fits. Under PreemptType=preempt/partition_prio, step 2 first
    // takes away the cores of higher tiers (:1096-1120). Three FORCE:2
    // partitions over two 4-core nodes: `hi` (tier 3) holds n1, `lo`
    // (tier 1) holds n0; a `mid` (tier 2) job of 2 CPUs takes n1, beside
    // the higher tier's job rather than the lower one's.
    let setup = |preempt_by_part: bool, lo_mode: &[&str]| {
        let mut p = Params::parse(&["CR_Core".to_string()]).unwrap();
        p.preempt_by_part = preempt_by_part;
        let parts: Vec<_> = [("hi", 3), ("mid", 2), ("lo", 1)]
            .iter()
            .enumerate()
            .map(|(i, &(name, tier))| {
                let mut part = fixtures::partition(i as u32, name, 2);
                part.oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Force(2);
                part.priority_tier = tier;
                if name == "lo" {
                    part.preempt_mode = lo_mode.iter().map(|t| t.to_string()).collect();
                }
                part
            })
            .collect();
        let mut ct = ConsTres::new(p, parts, MemoryRequest::None);
        let nodes: Vec<_> = (0..2)
            .map(|i| {
                let mut n = fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000);
                n.partitions = vec![0, 1, 2];
                n
            })
            .collect();
        ct.node_init(&nodes).unwrap();
        let submit = |id: u32, partition: u32, on: Option<usize>, tasks: u32| {
            let mut j = job(id, 1, tasks, 1);
            j.partitions = vec![partition];
            j.details.required_nodes = on.map(|n| bm(2, &[n]));
            j
        };
        start_full(&mut ct, submit(1, 0, Some(1), 4));
        start_full(&mut ct, submit(2, 2, Some(0), 4));
        (ct, submit(3, 1, None, 2))
    };
    let (ct, mid) = setup(false, &[]);
    assert_eq!(cores(&ct, mid), vec![(1, vec![0, 1], 2)]);
    // With partition_prio the higher tier's cores are off limits: the job
    // can only share the lower tier's node.
    let (ct, mid) = setup(true, &[]);
    assert_eq!(cores(&ct, mid), vec![(0, vec![0, 1], 2)]);
    // So are those of a partition whose own PreemptMode is OFF, whatever
    // its tier (`preempt_mode != PREEMPT_MODE_OFF`, :1104-1107), and
    // CLUSTER reads as OFF in 22.05: the job fits nowhere.
    for off in [&["OFF"][..], &["CLUSTER"]] {
        let (ct, mid) = setup(true, off);
        let code = ct
            .job_test(&request(&ct, mid, JobTestMode::RunNow), 1000)
            .map_err(|e| e.code);
        assert_eq!(
            code.err(),
            Some(slurm_wasm_sdk::codes::ESLURM_NODES_BUSY),
            "{off:?}"
        );
    }
    // A mode that lets the jobs be preempted changes nothing.
    let (ct, mid) = setup(true, &["REQUEUE"]);
    assert_eq!(cores(&ct, mid), vec![(0, vec![0, 1], 2)]);
}

/// The per-node (index, CPUs, memory) of a RUN_NOW test of `j`, or the error code.
fn decision(ct: &ConsTres, j: Job) -> Result<Vec<(u32, u16, u64)>, i32> {
    ct.job_test(&request(ct, j, JobTestMode::RunNow), 0)
        .map(|r| {
            r.resources
                .per_node
                .iter()
                .map(|n| (n.node_index, n.cpus, n.memory))
                .collect()
        })
        .map_err(|e| e.code)
}

#[test]
fn reconfigure_keeps_every_decision() {
    // cons_common.c:2055 (select_p_reconfigure): node_init on the same node
    // table, then the running jobs added again, so every decision after a
    // reconfigure with an unchanged configuration is the one before it.
    let mut ct = anchor_cluster();
    let mut a = with_gres(job(1, 1, 1, 1), "gpu", 1);
    a.resources = Some(start_full(&mut ct, a.clone()));
    a.state = JobState::Running;
    let probes = || {
        let mut wide = job(4, 2, 4, 1);
        wide.details.max_nodes = Some(2);
        vec![
            job(2, 1, 1, 1),
            with_gres(job(3, 1, 1, 1), "gpu", 1),
            with_gres(job(5, 1, 1, 1), "mps", 50),
            wide,
        ]
    };
    let before: Vec<_> = probes().into_iter().map(|j| decision(&ct, j)).collect();
    assert!(before.iter().all(|d| d.is_ok()), "{before:?}");
    let config = ConsTres::new(ct.params.clone(), ct.partitions.clone(), ct.default_memory);
    let usage = ct.usage.clone();
    ct.reconfigure(config, &[a]).unwrap();
    assert_eq!(ct.usage, usage);
    let after: Vec<_> = probes().into_iter().map(|j| decision(&ct, j)).collect();
    assert_eq!(after, before);
}
#[test]
fn mem_per_gpu_replaces_the_default_memory() {
    // cons_common/job_test.c:636 (_verify_node_state) and :1654
    // (gres_select_util_job_mem_set, cons_common/gres_select_util.c): without an
    // explicit memory request, `--mem-per-gpu` alone sets the node's
    // memory (mem-per-GPU x GPUs); DefMemPerCPU (250 here) is not used,
    // and a node with less free memory than mem-per-GPU is dropped.
    let mut ct = anchor_cluster();
    let gpu_job = |id: u32| {
        let mut j = with_gres(job(id, 1, 1, 1), "gpu", 1);
        j.details.gres[0].mem_per_gres = Some(3000);
        j
    };
    assert_eq!(decision(&ct, gpu_job(1)), Ok(vec![(0, 2, 3000)]));
    // n1 keeps 2000 MB free: the job moves to n2.
    let mut a = job(2, 1, 1, 1);
    a.details.memory = MemoryRequest::PerNode(2000);
    start_full(&mut ct, a);
    assert_eq!(decision(&ct, gpu_job(3)), Ok(vec![(1, 2, 3000)]));
    // An explicit request (exclusive with --mem-per-gpu in sbatch) wins
    // over DefMemPerGPU for the node's memory, but the GRES filter still
    // refuses a node with less free memory than one GPU's default
    // (`def_mem_per_gres`, set by `_set_gpu_defaults` whatever the job's
    // memory, cons_common/job_test.c:253-265; gres_select_filter.c:274-285):
    // n2 at a default of 3000 MB, n1 at 2000. Checked on the anchor
    // with DefMemPerGPU=3000 (by hand): after `-w n1 -n1 --mem=2000`,
    // `-n1 --gres=gpu:1 --mem-per-cpu=100` ran on n2 with Mem=200.
    ct.params.def_mem_per_gpu = Some(3000);
    let mut j = with_gres(job(4, 1, 1, 1), "gpu", 1);
    j.details.memory = MemoryRequest::PerCpu(100);
    assert_eq!(decision(&ct, j.clone()), Ok(vec![(1, 2, 200)]));
    ct.params.def_mem_per_gpu = Some(2000);
    assert_eq!(decision(&ct, j), Ok(vec![(0, 2, 200)]));
}
#[test]
fn mem_per_gpu_caps_the_gpus_a_node_can_give() {
    // 22.05 gres_select_filter_remove_unusable (gres_select_filter.c:272-
    // 285, 348-362): with CR_Memory a node gives no more GPUs than its
    // free memory holds at mem-per-GPU, and is refused when that is below
    // the GPUs the job needs there. `--gres=gpu:2 --mem-per-gpu=1500`
    // (3000 MB) on anchor nodes of 4000 MB: n1 with 2000 MB in use holds
    // one GPU's worth, so the job goes to n2. Checked on the anchor
    // (22.05.8, CR_Core_Memory, by hand): after `-w n1 -n1 --mem=2000`,
    // `-n1 --gres=gpu:2 --mem-per-gpu=1500` ran on n2 (Mem=3000,
    // gpu:2(IDX:0-1)), and `-n1 --gres=gpu:1 --mem-per-gpu=1500` on n1.
    let mut ct = anchor_cluster();
    let mut a = job(1, 1, 1, 1);
    a.details.memory = MemoryRequest::PerNode(2000);
    start_full(&mut ct, a);
    let mut j = with_gres(job(2, 1, 1, 1), "gpu", 2);
    j.details.gres[0].mem_per_gres = Some(1500);
    assert_eq!(decision(&ct, j), Ok(vec![(1, 2, 3000)]));
}

#[test]
fn memory_per_cpu_counts_only_the_threads_asked() {
    // common/job_resources.c:1926 (job_resources_get_node_cpu_cnt), as
    // `_job_test` uses it: under CR_Core a job asking fewer threads per core than
    // the node has is given memory for ceil(cpus/tpc) x threads_per_core
    // CPUs: -n2 --threads-per-core=1 --mem-per-cpu=500 on 2-thread cores
    // holds 2 cores (4 CPUs) and 1000 MB.
    let ct = anchor_cluster();
    let mut j = job(1, 1, 2, 1);
    j.details.threads_per_core = 1;
    j.details.memory = MemoryRequest::PerCpu(500);
    assert_eq!(decision(&ct, j.clone()), Ok(vec![(0, 4, 1000)]));
    // CR_CPU counts every allocated CPU.
    let ct = anchor_cluster_with("CR_CPU_Memory");
    assert_eq!(decision(&ct, j), Ok(vec![(0, 2, 1000)]));
}
#[test]
fn max_cpus_per_node_counts_only_the_partitions_own_cpus() {
    // cons_common.c:357-392 (_allocate_sc): the CPUs already used count
    // only the cores of the job's own partition (part_core_map). One 8-CPU
    // node (CR_CPU) in partitions A (MaxCPUsPerNode=4) and B; a B job holds
    // 6 CPUs; an A `-n2` runs.
    let p = Params::parse(&["CR_CPU".to_string()]).unwrap();
    let mut part_a = fixtures::partition(0, "A", 1);
    part_a.max_cpus_per_node = Some(4);
    let part_b = fixtures::partition(1, "B", 1);
    let mut ct = ConsTres::new(p, vec![part_a, part_b], MemoryRequest::None);
    let mut n = fixtures::node(0, "n0", 1, 8, 1, 1000);
    n.partitions = vec![0, 1];
    ct.node_init(&[n]).unwrap();
    let mut b = job(1, 1, 6, 1);
    b.partitions = vec![1];
    start_full(&mut ct, b);
    let mut a = job(2, 1, 2, 1);
    a.details.required_nodes = Some(bm(1, &[0]));
    assert_eq!(decision(&ct, a.clone()), Ok(vec![(0, 2, 0)]));
    start_full(&mut ct, a);
    // A now holds 2 of its 4 CPUs: a third A job gets the other 2, no more.
    assert_eq!(
        decision(&ct, job(3, 1, 3, 1)),
        Err(slurm_wasm_sdk::codes::ESLURM_NODES_BUSY)
    );
}

#[test]
fn max_cpus_per_node_leaving_one_cpu_refuses_multi_cpu_units() {
    // 22.05 `_allocate_sc` (cons_common.c:413-424): when MaxCPUsPerNode
    // leaves a node one CPU, a job asking --ntasks-per-core, --ntasks-per-
    // socket or CPUs per core (--threads-per-core) above 1, or
    // --cpus-per-task above 1, cannot use it. A 4-core node, partition
    // MaxCPUsPerNode=3, 2 cores held by a job of the partition.
    let limited = |params: &str, threads: u16, held: u32| {
        let p = Params::parse(&[params.to_string()]).unwrap();
        let mut part = fixtures::partition(0, "p", 1);
        part.max_cpus_per_node = Some(3);
        let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
        ct.node_init(&[fixtures::node(0, "n0", 1, 4, threads, 1000)])
            .unwrap();
        start_full(&mut ct, on_node(1, 1, 0, held));
        ct
    };
    let busy = Err(slurm_wasm_sdk::codes::ESLURM_NODES_BUSY);
    let ct = limited("CR_Core", 1, 2);
    assert_eq!(decision(&ct, job(2, 1, 1, 1)), Ok(vec![(0, 1, 0)]));
    let mut per_core = job(3, 1, 1, 1);
    per_core.details.ntasks_per_core = 2;
    assert_eq!(decision(&ct, per_core), busy);
    let mut per_socket = job(4, 1, 1, 1);
    per_socket.details.ntasks_per_socket = 2;
    assert_eq!(decision(&ct, per_socket), busy);
    // CR_CPU on 2-thread cores: the held job's core counts 2 CPUs, 3 cores
    // are free, 1 CPU is left; `--threads-per-core=2` asks 2 per core.
    let ct = limited("CR_CPU", 2, 2);
    assert_eq!(decision(&ct, job(5, 1, 1, 1)), Ok(vec![(0, 1, 0)]));
    let mut threads = job(6, 1, 1, 1);
    threads.details.threads_per_core = 2;
    assert_eq!(decision(&ct, threads), busy);
}

#[test]
fn cons_res_answers_no_single_job_test() {
    // cons_common.c:2034 (select_p_get_info_from_plugin,
    // SELECT_SINGLE_JOB_TEST): is_cons_tres ? 1 : 0.
    use slurm_wasm_sdk::select::{PluginInfoField, PluginInfoValue};
    let mut ct = anchor_cluster();
    let single = |ct: &ConsTres| match ct.info(PluginInfoField::SingleJobTest) {
        PluginInfoValue::Flag(f) => f,
        other => panic!("single-job-test answered {other:?}"),
    };
    assert!(single(&ct));
    ct.params.cons_res = true;
    assert!(!single(&ct));
}

#[test]
fn job_ready_needs_a_running_or_suspended_job() {
    // cons_common.c:1194 (select_p_job_ready): 0 unless the job is
    // RUNNING or SUSPENDED, 0 when one of its nodes is powered down or
    // powering up, else ready (also for a job without nodes).
    let mut ct = anchor_cluster();
    let mut j = job(1, 1, 1, 1);
    j.resources = Some(start_full(&mut ct, j.clone()));
    for (state, ready) in [
        (JobState::Pending, false),
        (JobState::Running, true),
        (JobState::Suspended, true),
        (JobState::Complete, false),
    ] {
        j.state = state;
        assert_eq!(ct.job_ready(&j), ready, "{state:?}");
    }
    j.state = JobState::Running;
    ct.recs[0].powered_down = true;
    assert!(!ct.job_ready(&j));
    let mut empty = job(2, 1, 1, 1);
    empty.state = JobState::Running;
    assert!(ct.job_ready(&empty));
}

#[test]
fn per_node_gpu_request_keeps_the_cores_beside_its_gpu() {
    // gres_select_filter_sock_core (22.05) on the first pass: a per-node
    // GPU request keeps the socket of the GPU it needs and then only the
    // cores its tasks need. Anchor job a11 (`-n1 --gres=gpu:1`, idle n1):
    // CPUs 0-1 with GPU 0.
    let ct = anchor_cluster();
    let one = with_gres(job(11, 1, 1, 1), "gpu", 1);
    assert_eq!(cores(&ct, one), vec![(0, vec![0], 2)]);
}

#[test]
fn per_node_gpu_trim_makes_an_idle_node_as_tight_as_a_busy_one() {
    // Anchor job a46 (`-n1 --gres=gpu:1 --mem-per-gpu=1000`): with n2 left
    // one free core beside its free GPU, Slurm took the idle n1. Trimmed to
    // one core, n1 ties with n2 as the tightest fit and comes first.
    let mut ct = anchor_cluster();
    let mut busy = job(42, 1, 3, 1);
    busy.details.required_nodes = Some(bm(4, &[1]));
    busy.details.max_nodes = Some(1);
    start_full(&mut ct, busy);
    let mut g = with_gres(job(46, 1, 1, 1), "gpu", 1);
    g.details.gres[0].mem_per_gres = Some(1000);
    assert_eq!(decision(&ct, g), Ok(vec![(0, 2, 1000)]));
}

#[test]
fn per_node_gpu_trim_gives_way_when_the_socket_is_too_small() {
    // When the GPU's socket cannot hold the job, Slurm's first pass fails
    // and the second uses every free core: -N1 -n6 --gres=gpu:1 on an idle
    // 2 x 2-core x 2-thread node takes three cores over both sockets.
    let ct = anchor_cluster();
    let mut j = with_gres(job(1, 1, 6, 1), "gpu", 1);
    j.details.max_nodes = Some(1);
    let got = cores(&ct, j);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].1.len(), got[0].2), (3, 6));
}

#[test]
fn gpu_defaults_apply_as_slurm_sets_them() {
    // _set_gpu_defaults and gres_select_util_job_set_defs (22.05
    // cons_common/job_test.c:227-262, gres_select_util.c:55-106), checked
    // against the anchor's gpu_defaults recording (DefCpuPerGPU=2,
    // DefMemPerGPU=1500): a11 `-n1 --gres=gpu:1` got NumCPUs=2 Mem=1500; a13
    // `-n2 --gpus-per-task=1` 2 CPUs per task; a25 `-c4` kept its own CPUs.
    let mut ct = anchor_cluster();
    ct.params.def_cpu_per_gpu = Some(2);
    ct.params.def_mem_per_gpu = Some(1500);
    // Jobs without -c (cpus_per_task 0) and without a memory option.
    let gpu_job = |id: u32, tasks: u32| {
        let mut j = with_gres(job(id, 1, tasks, 1), "gpu", 1);
        j.details.cpus_per_task = 0;
        j.details.memory = MemoryRequest::None;
        j
    };
    // One core of 2 threads covers the 2 CPUs of one GPU; 1500 MB per GPU.
    assert_eq!(decision(&ct, gpu_job(1, 1)), Ok(vec![(0, 2, 1500)]));
    // Two GPUs per node: 4 CPUs (two cores) and 3000 MB, even for one task.
    let mut two = gpu_job(2, 1);
    two.details.gres[0].count = 2;
    assert_eq!(decision(&ct, two), Ok(vec![(0, 4, 3000)]));
    // --gpus-per-task=1 with -n2: CPUs per task rise to 2.
    let mut per_task = gpu_job(3, 2);
    per_task.details.gres[0].scope = GresScope::PerTask;
    assert_eq!(decision(&ct, per_task), Ok(vec![(0, 4, 3000)]));
    // With -c the CPU default is off; the memory default stays.
    let mut with_c = gpu_job(4, 1);
    with_c.details.cpus_per_task = 1;
    assert_eq!(decision(&ct, with_c), Ok(vec![(0, 2, 1500)]));
    // An explicit memory or --cpus-per-gpu wins over the defaults.
    let mut own = gpu_job(5, 1);
    own.details.memory = MemoryRequest::PerNode(700);
    own.details.gres[0].cpus_per_gres = Some(4);
    assert_eq!(decision(&ct, own), Ok(vec![(0, 4, 700)]));
    // The partition's own values come first; its DefMemPerGPU=0 switches
    // the cluster's off (DefMemPerCPU=250 applies again).
    ct.partitions[0].gpu_defaults.cpus_per_gpu = Some(4);
    ct.partitions[0].gpu_defaults.mem_per_gpu = Some(0);
    assert_eq!(decision(&ct, gpu_job(6, 1)), Ok(vec![(0, 4, 1000)]));
    // A job without GPUs is untouched.
    let mut plain = job(7, 1, 1, 1);
    plain.details.cpus_per_task = 0;
    plain.details.memory = MemoryRequest::None;
    assert_eq!(decision(&ct, plain), Ok(vec![(0, 2, 500)]));
}

#[test]
fn one_node_job_takes_the_tightest_node_of_the_tightest_set() {
    // 22.05 `_eval_nodes` (cons_tres/job_test.c:736-791, 899-935) has no
    // shortcut for `-N1`: the sets of consecutive usable nodes are weighed
    // as for any job (the sufficient one with the fewest CPUs at the least
    // weight), and the set's node with the fewest usable CPUs that still
    // covers the job is taken, the first on ties.
    let mut ct = cluster(&["CR_Core"], 4, 1, 4, 1, 1000);
    // n1 keeps 2 free cores.
    let mut a = job(1, 1, 2, 1);
    a.details.required_nodes = Some(bm(4, &[1]));
    start_full(&mut ct, a);
    let mut one = job(2, 1, 2, 1);
    one.details.max_nodes = Some(1);
    assert_eq!(nodes_of(&ct, one.clone()), [1]);
    // n2 busy. For four tasks n1 is no usable node (too few CPUs for the
    // tasks a one-node job must hold, `_can_job_run_on_node`,
    // cons_tres/job_test.c:3372-3388), so the sets are {n0} and {n3}, 4 CPUs
    // each: the first sufficient one stays.
    let mut b = job(3, 1, 4, 1);
    b.details.required_nodes = Some(bm(4, &[2]));
    start_full(&mut ct, b);
    let mut four = job(4, 1, 4, 1);
    four.details.max_nodes = Some(1);
    assert_eq!(nodes_of(&ct, four), [0]);
    // For two tasks: sets {n0, n1} (6 CPUs) and {n3} (4 CPUs), both
    // sufficient; the tighter set wins, though n1 alone is tighter still.
    one.job_id = 5;
    assert_eq!(nodes_of(&ct, one), [3]);
}

#[test]
fn one_task_per_core_gres_job_keeps_its_uncapped_cpus() {
    // 22.05 gres_select_filter.c:887-950: under CR_ONE_TASK_PER_CORE a GRES
    // job with one CPU per task and no CPUs per GRES keeps the CPUs counted
    // before the GRES trim (less a core's threads per core dropped once the
    // cores left hold fewer threads), so best fit prefers the node with the
    // fewest free cores. Anchor a46 (`-n1 --gres=gpu:1` under
    // CR_Core_Memory,CR_ONE_TASK_PER_CORE) went to n2, the node left with
    // one free core, not to the idle n1.
    let mut ct = anchor_cluster_with("CR_Core_Memory,CR_ONE_TASK_PER_CORE");
    let mut a = job(1, 1, 3, 1);
    a.details.required_nodes = Some(bm(4, &[1]));
    start_full(&mut ct, a);
    let mut b = job(2, 1, 2, 1);
    b.details.required_nodes = Some(bm(4, &[2]));
    start_full(&mut ct, b);
    let gpu = with_gres(job(3, 1, 1, 1), "gpu", 1);
    assert_eq!(decision(&ct, gpu).map(|d| d[0].0), Ok(1));
    // Without CR_ONE_TASK_PER_CORE every node's count is capped to the one
    // task, all tie, and the first node stays.
    let mut ct = anchor_cluster();
    let mut a = job(1, 1, 6, 1);
    a.details.required_nodes = Some(bm(4, &[1]));
    start_full(&mut ct, a);
    let gpu = with_gres(job(3, 1, 1, 1), "gpu", 1);
    assert_eq!(decision(&ct, gpu).map(|d| d[0].0), Ok(0));
}

#[test]
fn idle_nodes_share_an_offer_only_with_their_device_layout() {
    // Idle nodes of one core and memory layout share their offer
    // (`NodeRec::gres_shape`); for a GPU job their devices are part of
    // that layout. n0 and n2 have no GPU, n1 one bound to core 1, n3 one
    // bound to core 0: all four have the same cores and memory.
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let mut ct = ConsTres::new(p, vec![fixtures::partition(0, "p", 4)], MemoryRequest::None);
    let gpu_on = |core: usize| GresDeviceGroup {
        name: "gpu".into(),
        type_name: None,
        count: 1,
        cores: Some(bm(2, &[core])),
        links: Vec::new(),
    };
    let table: Vec<_> = (0..4u32)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{i}"), 1, 2, 1, 100);
            match i {
                1 => n.gres_topology = vec![gpu_on(1)],
                3 => n.gres_topology = vec![gpu_on(0)],
                _ => {}
            }
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    let classes: Vec<u32> = ct.recs.iter().map(|r| r.gres_shape).collect();
    assert_eq!(classes, [0, 1, 0, 2]);
    assert!(ct.recs.iter().all(|r| r.shape == ct.recs[0].shape));
    // A one-GPU job skips the GPU-less n0 (whose offer n2 shares) and
    // takes n1, the first node with a GPU.
    let gpu = with_gres(job(1, 1, 1, 1), "gpu", 1);
    assert_eq!(nodes_of(&ct, gpu), vec![1]);
}

/// `-N1 -n<tasks>` on node `node` of the anchor cluster.
fn one_node_on(id: u32, node: usize, tasks: u32) -> Job {
    let mut j = on_node(id, 4, node, tasks);
    j.details.max_nodes = Some(1);
    j
}

// The anchor cluster under CR_Socket_Memory with CoreSpecCount=1 (core 3,
// CPUs 6-7, specialised on every node), as recorded from real Slurm 22.05.8
// (tests/fixtures/anchor/select/cons_tres-CR_Socket_Memory-core_spec) and
// in a by-hand run of the same cluster.

#[test]
fn cr_socket_specialised_core_makes_its_socket_used_without_a_row_map() {
    // cons_common.c:357-392: without a `part_core_map` every core not
    // free counts as used, the specialised one too. Real Slurm: `-w n1
    // -n5` as the partition's first job took socket 0 of n1 and of n2
    // (CPU_IDs 0-3 on both); `-N1 -w n1 -n5` was refused at submission
    // ("Requested node configuration is not available").
    let ct = anchor_cluster_of("CR_Socket_Memory", 1);
    assert_eq!(
        cores(&ct, on_node(1, 4, 0, 5)),
        vec![(0, vec![0, 1], 4), (1, vec![0, 1], 4)]
    );
    assert!(refused(&ct, one_node_on(2, 0, 5), JobTestMode::TestOnly));
}

#[test]
fn cr_socket_row_map_frees_the_specialised_socket_after_test_zero() {
    // Once a job of the partition entered a row, `_job_test` passes the
    // rows as `part_core_map` (cons_common/job_test.c:1033-1049) and only
    // the partition's own cores make a socket used; the maps stay when the
    // job ends (part_data.c:87-91). Test 0 still has no map, so a job that
    // needs the specialised socket can never start. Real Slurm, after the
    // first job: `-w n2 -n3` took socket 1 of n2, the specialised core
    // with it (CPU_IDs 4-7, dist_tasks.c:1126-1143), and socket 0 of n3.
    let mut ct = anchor_cluster_of("CR_Socket_Memory", 1);
    start(&mut ct, on_node(1, 4, 0, 5));
    assert_eq!(
        cores(&ct, on_node(2, 4, 1, 3)),
        vec![(1, vec![2, 3], 4), (2, vec![0, 1], 4)]
    );
    ct.job_fini(1);
    // Idle again, but with maps: `-w n1 -n5` fits n1 alone (6 CPUs, both
    // sockets), where the fresh cluster took two nodes.
    assert_eq!(
        cores(&ct, on_node(3, 4, 0, 5)),
        vec![(0, vec![0, 1, 2, 3], 8)]
    );
    assert!(refused(&ct, one_node_on(4, 0, 7), JobTestMode::RunNow));
    // The maps survive a state round trip (a version 2 blob), and a
    // version 1 blob (jobs only) leaves them where a job is.
    let blob = ct.state_save();
    let mut other = anchor_cluster_of("CR_Socket_Memory", 1);
    other.state_restore(&blob).unwrap();
    assert_eq!(
        cores(&other, on_node(3, 4, 0, 5)),
        vec![(0, vec![0, 1, 2, 3], 8)]
    );
    let mut v1 = blob[..blob.len() - 5].to_vec();
    v1[4..6].copy_from_slice(&1u16.to_le_bytes());
    other.state_restore(&v1).unwrap();
    assert_eq!(
        cores(&other, on_node(3, 4, 0, 5)),
        vec![(0, vec![0, 1], 4), (1, vec![0, 1], 4)]
    );
}

#[test]
fn cr_socket_rules_sockets_out_before_gres_trims_cores() {
    // `_allocate_sc` runs before `gres_select_filter_sock_core`
    // (cons_tres/job_test.c:3361, 374): the GRES trim keeps cores of usable
    // sockets only, and the used socket is then widened whole. Real Slurm
    // (anchor a11): `-n1 --gres=gpu:1` took CPU_IDs 0-3 and GPU 0.
    let ct = anchor_cluster_of("CR_Socket_Memory", 1);
    assert_eq!(
        cores(&ct, with_gres(job(1, 1, 1, 1), "gpu", 1)),
        vec![(0, vec![0, 1], 4)]
    );
    // Two GPUs need both sockets (`req_sock_map`), and socket 1 is used:
    // refused, as sbatch was for `-n2 --gres=gpu:2` (anchor a12).
    assert!(refused(
        &ct,
        with_gres(job(2, 1, 2, 1), "gpu", 2),
        JobTestMode::TestOnly
    ));
}

#[test]
fn per_task_gres_caps_a_nodes_cpus_at_its_tasks() {
    // gres_select_filter.c:940-951: a node's CPUs are capped at its most
    // tasks x cpus-per-task, so one GPU per node holds one task of
    // `-n2 --gpus-per-task=1`, not two on its core's two threads.
    let mut ct = anchor_cluster();
    for n in 0..4 {
        start(&mut ct, with_gres(on_node(n as u32 + 1, 4, n, 1), "gpu", 1));
    }
    let j = with_gres_per(job(9, 1, 2, 1), "gpu", 1, GresScope::PerTask);
    assert_eq!(nodes_of(&ct, j), vec![0, 1]);
}

#[test]
fn mps_first_pass_skips_a_node_whose_free_cores_are_away_from_its_gpu() {
    // 22.05's `choose_nodes` first evaluates the nodes with `first_pass`
    // (cons_tres/job_test.c:3186-3190): `gres_select_filter_sock_core`
    // then counts only devices on sockets with free cores
    // (gres_select_filter.c:611-614) and refuses a node where they fall
    // short (:642-646). Here n1's free core is on socket 1 while its only
    // usable mps is GPU 0's (GPU 1 is allocated whole), so the mps job goes
    // to the idle n2, beside GPU 0; only when no node passes is the second
    // pass, without that test, tried. Anchor cons_tres-CR_Core_Memory-
    // gpu_defaults a37 (`-n1 --gres=mps:30`): n3 was such a node.
    let mut ct = anchor_cluster();
    let mut a = job(1, 1, 1, 4);
    a.details.required_nodes = Some(bm(4, &[0]));
    assert_eq!(start(&mut ct, a), vec![(0, vec![0, 1], 4)]);
    let mut b = with_gres(job(2, 1, 2, 1), "gpu", 1);
    b.details.required_nodes = Some(bm(4, &[0]));
    let r = start_full(&mut ct, b);
    assert_eq!(devs(&r.per_node[0].gres[0]), vec![1]);
    // n3 and n4 are full.
    for n in [2, 3] {
        let mut fill = job(10 + n, 1, 8, 1);
        fill.details.required_nodes = Some(bm(4, &[n as usize]));
        start(&mut ct, fill);
    }
    let r = start_full(&mut ct, with_gres(job(3, 1, 1, 1), "mps", 30));
    let n = &r.per_node[0];
    assert_eq!(n.node_index, 1);
    assert_eq!(
        (devs(&n.gres[0]), n.gres[0].per_device.clone()),
        (vec![0], vec![30])
    );
    // With n2 full too, the second pass takes n1 and GPU 0's shares.
    ct.job_fini(3);
    let mut fill = job(11, 1, 8, 1);
    fill.details.required_nodes = Some(bm(4, &[1]));
    start(&mut ct, fill);
    let r = start_full(&mut ct, with_gres(job(4, 1, 1, 1), "mps", 30));
    let n = &r.per_node[0];
    assert_eq!(n.node_index, 0);
    assert_eq!(devs(&n.gres[0]), vec![0]);
}

#[test]
fn exclusive_user_and_mcs_jobs_are_not_whole_node() {
    // Real Slurm 22.05.8 on the anchor (CR_Core_Memory, DefMemPerCPU=250):
    // `-w n1 -n1 --exclusive=user` and `--exclusive=mcs` each held one
    // core (CPU_IDs=0-1, NumCPUs=2, Mem=500); plain `--exclusive` held the
    // node (CPU_IDs=0-7, NumCPUs=8).
    let ct = anchor_cluster();
    for share in [ShareRequest::ExclusiveUser, ShareRequest::ExclusiveMcs] {
        let mut j = on_node(1, 4, 0, 1);
        j.details.share = share;
        assert_eq!(cores(&ct, j), vec![(0, vec![0], 2)], "{share:?}");
    }
    let mut j = on_node(2, 4, 0, 1);
    j.details.share = ShareRequest::Exclusive;
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1, 2, 3], 8)]);
}

#[test]
fn one_task_per_core_lets_a_gres_job_run_a_task_per_core() {
    // Under CR_ONE_TASK_PER_CORE every job has `--ntasks-per-core=1`, so
    // `gres_select_filter_sock_core` allows a node one task per core
    // (cons_tres/job_test.c:321-325), not the job's one task: an idle node
    // keeps both cores beside its GPU and offers 4 CPUs, more than n3's 2.
    // Real Slurm 22.05.8 (anchor one_task a37, `-n1 --gres=mps:30`, n3
    // holding cores 0-1 and GPU 0): n3, CPU_IDs=4-5, mps:30(IDX:1); its
    // SelectType log showed `required_cores=2 by max_tasks_this_node=2`.
    let mut ct = anchor_cluster_with("CR_Core_Memory,CR_ONE_TASK_PER_CORE");
    let held = start_full(&mut ct, with_gres(on_node(35, 4, 2, 2), "gpu", 1));
    assert_eq!(devs(&held.per_node[0].gres[0]), vec![0]);
    let r = start_full(&mut ct, with_gres(job(37, 1, 1, 1), "mps", 30));
    let n = &r.per_node[0];
    assert_eq!(
        (n.node_index, held_cores(n), devs(&n.gres[0])),
        (2, vec![2], vec![1])
    );
}

/// Job `id` running on node `node` of the 4-node anchor cluster with
/// `cores` and, when given, GPU `gpu`.
fn running_on(ct: &mut ConsTres, id: u32, node: usize, cores: &[usize], gpu: Option<usize>) {
    use slurm_wasm_sdk::types::{GresAllocation, JobResources, NodeResources};
    let mut j = job(id, 1, cores.len() as u32 * 2, 1);
    j.state = JobState::Running;
    j.resources = Some(JobResources {
        nodes: bm(4, &[node]),
        ncpus: cores.len() as u32 * 2,
        per_node: vec![NodeResources {
            node_index: node as u32,
            cores: bm(4, cores),
            cpus: cores.len() as u16 * 2,
            memory: 500,
            gres: gpu
                .map(|g| GresAllocation {
                    name: "gpu".into(),
                    type_name: None,
                    count: 1,
                    devices: Some(bm(2, &[g])),
                    per_device: Vec::new(),
                })
                .into_iter()
                .collect(),
        }],
        whole_nodes: false,
    });
    ct.add_running(&j).unwrap();
}

#[test]
fn second_pass_keeps_a_gres_job_to_its_tasks_cores() {
    // A GPU job whose only usable GPU is away from the free cores fails
    // 22.05's first pass on n1 and n2; on the second pass
    // `gres_select_filter_sock_core` still trims a node's cores to what its
    // tasks need, giving up the sockets the devices do not need first
    // (gres_select_filter.c:855-907). Both nodes then offer one core, so
    // the tie goes to the first node, n1 (untrimmed, n2's one free core
    // would be the tighter fit).
    let mut ct = anchor_cluster();
    running_on(&mut ct, 1, 0, &[2, 3], Some(0));
    running_on(&mut ct, 2, 1, &[1, 2, 3], Some(0));
    running_on(&mut ct, 3, 2, &[0, 1, 2, 3], None);
    running_on(&mut ct, 4, 3, &[0, 1, 2, 3], None);
    let r = start_full(&mut ct, with_gres(job(5, 1, 1, 1), "gpu", 1));
    let n = &r.per_node[0];
    assert_eq!(
        (n.node_index, held_cores(n), devs(&n.gres[0])),
        (0, vec![0], vec![1])
    );
}

#[test]
fn exclusive_partition_jobs_take_whole_nodes_with_their_gpus() {
    // slurmctld sets whole_node for an OverSubscribe=EXCLUSIVE partition
    // (22.05 node_scheduler.c:820-824). Real Slurm 22.05.8 on the anchor
    // with such a partition over n[1-4]: `-w n1 -n1 --gres=gpu:1` held
    // CPU_IDs=0-7 and gpu:2(IDX:0-1), Mem=2000 (8 CPUs x DefMemPerCPU).
    let mut ct = anchor_cluster();
    ct.partitions[0].oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Exclusive;
    let r = start_full(&mut ct, with_gres(on_node(1, 4, 0, 1), "gpu", 1));
    let n = &r.per_node[0];
    assert_eq!(
        (held_cores(n), n.cpus, n.memory, devs(&n.gres[0])),
        (vec![0, 1, 2, 3], 8, 2000, vec![0, 1])
    );
}

/// The configuration of a CR_Core cluster under `PreemptType=preempt_type`
/// with one partition per entry of `parts` (its OverSubscribe), each over
/// all the nodes.
fn preempt_config(
    preempt_type: &str,
    parts: &[slurm_wasm_sdk::types::Oversubscribe],
    nodes: u32,
) -> slurm_wasm_sdk::select::SelectConfig {
    let mut cluster = fixtures::cluster_config();
    cluster.select_type_parameters = vec!["CR_Core".into()];
    cluster.raw.push(slurm_wasm_sdk::types::KeyValue {
        key: "PreemptType".into(),
        value: preempt_type.into(),
    });
    let partitions = parts
        .iter()
        .enumerate()
        .map(|(i, &over)| {
            let mut p = fixtures::partition(i as u32, &format!("p{i}"), nodes);
            p.oversubscribe = over;
            p
        })
        .collect();
    slurm_wasm_sdk::select::SelectConfig {
        cluster,
        partitions,
    }
}

/// [`preempt_config`]'s cluster with `nodes` nodes of 1 socket x 4 cores x
/// 1 thread, each in every partition.
fn preempt_cluster(
    preempt_type: &str,
    parts: &[slurm_wasm_sdk::types::Oversubscribe],
    nodes: u32,
) -> ConsTres {
    let mut ct = crate::plugin::instance_from(&preempt_config(preempt_type, parts, nodes)).unwrap();
    let table: Vec<_> = (0..nodes)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000);
            n.partitions = (0..parts.len() as u32).collect();
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    ct
}

/// Job `id` of partition `partition`, running until `end` on the cores
/// `held` names per node (node, cores) of a [`preempt_cluster`].
fn holding(ct: &mut ConsTres, id: u32, partition: u32, held: &[(usize, &[usize])], end: i64) {
    use slurm_wasm_sdk::types::{JobResources, NodeResources};
    let cpus: u32 = held.iter().map(|(_, c)| c.len() as u32).sum();
    let mut j = job(id, held.len() as u32, cpus, 1);
    j.partitions = vec![partition];
    j.state = JobState::Running;
    j.end_time = end;
    j.time_limit = Some(60);
    let nodes: Vec<usize> = held.iter().map(|&(n, _)| n).collect();
    j.resources = Some(JobResources {
        nodes: bm(ct.recs.len(), &nodes),
        ncpus: cpus,
        per_node: held
            .iter()
            .map(|&(node, cores)| NodeResources {
                node_index: node as u32,
                cores: bm(4, cores),
                cpus: cores.len() as u16,
                memory: 0,
                gres: Vec::new(),
            })
            .collect(),
        whole_nodes: false,
    });
    ct.add_running(&j).unwrap();
}

/// The jobs of each row of partition `p`.
fn row_jobs(ct: &ConsTres, p: usize) -> Vec<Vec<u32>> {
    ct.usage.rows[p]
        .rows
        .iter()
        .map(|r| r.jobs.clone())
        .collect()
}

/// A RUN_NOW request for `j` (priority 100) offering `candidates` in order.
fn preempting(ct: &ConsTres, mut j: Job, candidates: &[(u32, PreemptMode)]) -> JobTestRequest {
    j.priority = 100;
    let mut req = request(ct, j, JobTestMode::RunNow);
    req.preemptee_candidates = candidates
        .iter()
        .map(|&(job_id, mode)| PreempteeCandidate { job_id, mode })
        .collect();
    req
}

#[test]
fn preempt_qos_adds_a_row_to_every_partition() {
    // 22.05 part_data.c:336-346 (`part_data_create_array`): a partition
    // has `max_share & ~SHARED_FORCE` rows, one more when the preempt
    // type's name holds "qos" (cons_common.c:1137-1146), and at least 1;
    // max_share is 1 for OverSubscribe=NO and 0 for EXCLUSIVE. The rows
    // are made at init and again by node_init.
    use slurm_wasm_sdk::types::Oversubscribe::{Exclusive, Force, No, Yes};
    for (over, plain, qos) in [
        (No, 1, 2),
        (Exclusive, 1, 1),
        (Force(2), 2, 3),
        (Yes(2), 2, 3),
    ] {
        for (preempt_type, want) in [
            ("preempt/none", plain),
            ("preempt/partition_prio", plain),
            ("preempt/qos", qos),
        ] {
            let config = preempt_config(preempt_type, &[over], 1);
            let at_init = crate::plugin::instance_from(&config).unwrap();
            let ct = preempt_cluster(preempt_type, &[over], 1);
            for rows in [&at_init.usage.rows[0], &ct.usage.rows[0]] {
                assert_eq!(
                    (rows.num_rows, rows.rows.len()),
                    (want, want),
                    "{over:?} {preempt_type}"
                );
            }
        }
    }
}

#[test]
fn run_now_retries_as_qos_preemptor_when_the_first_candidate_suspends() {
    // 22.05 `_run_now` (cons_common/job_test.c:2123-2140): under
    // preempt/qos, when the first test fails, the first candidate's mode
    // is SUSPEND and the job's priority is not 0, the job is tested again
    // on the live tables as a QOS preemptor, which may use the extra row
    // (:1267-1268), and no job is preempted; otherwise the removal of
    // REQUEUE and CANCEL candidates runs (:2141-2270). One 4-core node in
    // a FORCE:1 partition (2 rows under qos): job 1 holds every core in
    // row 0, and a 4-CPU job fits only in the empty extra row.
    use slurm_wasm_sdk::types::Oversubscribe::Force;
    let setup = |preempt_type: &str| {
        let mut ct = preempt_cluster(preempt_type, &[Force(1)], 1);
        holding(&mut ct, 1, 0, &[(0, &[0, 1, 2, 3])], 5000);
        ct
    };
    let ct = setup("preempt/qos");
    assert_eq!(row_jobs(&ct, 0), vec![vec![1], vec![]]);
    let r = ct
        .job_test(
            &preempting(&ct, job(2, 1, 4, 1), &[(1, PreemptMode::Suspend)]),
            1000,
        )
        .unwrap();
    let n = &r.resources.per_node[0];
    assert_eq!((n.node_index, held_cores(n)), (0, vec![0, 1, 2, 3]));
    assert!(r.preemptees.is_empty());
    // Without candidates the job is no QOS preemptor: row 0 alone is tried.
    assert!(ct
        .job_test(&preempting(&ct, job(2, 1, 4, 1), &[]), 1000)
        .is_err());
    // A held job (priority 0) is not retried, and SUSPEND candidates are
    // not removed by the simulation.
    let mut held = preempting(&ct, job(2, 1, 4, 1), &[(1, PreemptMode::Suspend)]);
    held.job.priority = 0;
    assert!(ct.job_test(&held, 1000).is_err());
    // A CANCEL first candidate: the simulation removes job 1 and preempts it.
    let r = ct
        .job_test(
            &preempting(&ct, job(2, 1, 4, 1), &[(1, PreemptMode::Cancel)]),
            1000,
        )
        .unwrap();
    assert_eq!(r.preemptees, vec![1]);
    // Without preempt/qos the partition has one row: nothing fits.
    let ct = setup("preempt/none");
    assert!(ct
        .job_test(
            &preempting(&ct, job(2, 1, 4, 1), &[(1, PreemptMode::Suspend)]),
            1000,
        )
        .is_err());
}

#[test]
fn qos_step4_keeps_row_order_and_leaves_the_extra_row_to_preemptors() {
    // 22.05 `_job_test` step 4 (cons_common/job_test.c:1264-1270): the
    // rows are sorted by their cores (`part_data_sort_res`) only without
    // preempt/qos ("preserve row order for QOS"), and a job that is no QOS
    // preemptor does not try the extra row. Two 4-core nodes in a FORCE:2
    // partition: jobs 1 (n0 cores 0-1) and 2 (n0 cores 2-3) share row 0,
    // job 3 (n0 cores 0-1, n1) is in row 1, which has more cores; no core
    // is free.
    use slurm_wasm_sdk::types::Oversubscribe::Force;
    let setup = |preempt_type: &str| {
        let mut ct = preempt_cluster(preempt_type, &[Force(2)], 2);
        holding(&mut ct, 1, 0, &[(0, &[0, 1])], 5000);
        holding(&mut ct, 2, 0, &[(0, &[2, 3])], 5000);
        holding(&mut ct, 3, 0, &[(0, &[0, 1]), (1, &[0, 1, 2, 3])], 5000);
        ct
    };
    let mut one_node = job(4, 1, 2, 1);
    one_node.details.max_nodes = Some(1);
    // Sorted, row 1 comes first and leaves n0's cores 2-3; the live rows
    // are then sorted before the next job is placed.
    let ct = setup("preempt/none");
    assert_eq!(row_jobs(&ct, 0), vec![vec![1, 2], vec![3]]);
    assert_eq!(cores(&ct, one_node.clone()), vec![(0, vec![2, 3], 2)]);
    assert!(ct.usage.rows[0].sort_pending.get());
    // Under preempt/qos row 0 comes first and leaves n1.
    let ct = setup("preempt/qos");
    assert_eq!(row_jobs(&ct, 0), vec![vec![1, 2], vec![3], vec![]]);
    assert_eq!(cores(&ct, one_node), vec![(1, vec![0, 1], 2)]);
    assert!(!ct.usage.rows[0].sort_pending.get());
    // Eight CPUs fit only in the empty extra row: not without candidates,
    // but as a QOS preemptor (the first candidate suspends).
    assert!(refused(&ct, job(5, 2, 8, 1), JobTestMode::RunNow));
    let r = ct
        .job_test(
            &preempting(&ct, job(5, 2, 8, 1), &[(3, PreemptMode::Suspend)]),
            1000,
        )
        .unwrap();
    let held: Vec<(u32, Vec<usize>)> = r
        .resources
        .per_node
        .iter()
        .map(|n| (n.node_index, held_cores(n)))
        .collect();
    assert_eq!(held, vec![(0, vec![0, 1, 2, 3]), (1, vec![0, 1, 2, 3])]);
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

#[test]
fn qos_extra_row_does_not_make_a_partition_sharing() {
    // 22.05 `_is_node_busy` (cons_common/job_test.c:400-450): a test whose
    // job is no QOS preemptor reads one row less of each partition under
    // preempt/qos, so an OverSubscribe=NO partition (2 rows there) is not
    // a sharing one; a QOS preemptor's test reads every row. One 4-core
    // node in two NO partitions: job 1 of p0 holds cores 0-1 (the node is
    // then NODE_CR_ONE_ROW); a 2-CPU job of p1 takes cores 2-3.
    use slurm_wasm_sdk::types::Oversubscribe::No;
    let mut ct = preempt_cluster("preempt/qos", &[No, No], 1);
    holding(&mut ct, 1, 0, &[(0, &[0, 1])], 5000);
    let mut other = job(2, 1, 2, 1);
    other.partitions = vec![1];
    assert_eq!(cores(&ct, other.clone()), vec![(0, vec![2, 3], 2)]);
    let view = crate::request::JobView::new(
        &other,
        &ct.gres_names,
        &ct.partitions,
        &ct.default_memory,
        &ct.params,
        1,
    )
    .unwrap();
    for (qos_preemptor, kept) in [(false, vec![0]), (true, vec![])] {
        let mut cand = Bits::full(1);
        ct.verify_node_state(&ct.usage, &view, &mut cand, None, None, qos_preemptor)
            .unwrap();
        assert_eq!(cand.ones().collect::<Vec<_>>(), kept, "{qos_preemptor}");
    }
}

#[test]
fn qos_preemptor_that_does_not_share_tries_the_first_row_alone() {
    // 22.05 `_job_test` step 4 (cons_common/job_test.c:1269-1270): under
    // preempt/qos a job that does not share its cores (node_req other than
    // NODE_CR_AVAILABLE) tries row 0 alone, even as a QOS preemptor. With
    // gang scheduling (so that such a job reaches step 4, :1066), one
    // 4-core node in an OverSubscribe=NO partition (2 rows under qos): job
    // 1 holds every core in row 0; a 4-CPU job offered job 1 to suspend
    // does not get the empty extra row, as a FORCE:1 partition's job does
    // (see run_now_retries_as_qos_preemptor_when_the_first_candidate_suspends).
    use slurm_wasm_sdk::types::Oversubscribe::No;
    let mut ct = preempt_cluster("preempt/qos", &[No], 1);
    ct.params.gang = true;
    holding(&mut ct, 1, 0, &[(0, &[0, 1, 2, 3])], 5000);
    assert_eq!(row_jobs(&ct, 0), vec![vec![1], vec![]]);
    let req = preempting(&ct, job(2, 1, 4, 1), &[(1, PreemptMode::Suspend)]);
    assert!(ct.job_test(&req, 1000).is_err());
}

#[test]
fn a_job_that_does_not_share_runs_beside_its_own_partitions_sharing_jobs() {
    // `_verify_node_state` asks `_is_node_busy` with `sharing_only`, which
    // leaves the job's own partition out (22.05 cons_common/job_test.c:
    // 774-785, 400-416). Hand run on the anchor (CR_Core_Memory,
    // OverSubscribe=YES:2 on big, `--mem=100`): A `--oversubscribe -w n1
    // -n2` ran on n1 CPU_IDs 0-1 and B `-w n1 -n2` beside it on 2-3; C
    // `-w n2 -n2` ran on n2 and D `--oversubscribe -w n2 -n2` pended: a
    // node running a job that does not share takes no job that does.
    use slurm_wasm_sdk::types::{Oversubscribe, ShareRequest};
    let p = Params::parse(&["CR_Core".to_string()]).unwrap();
    let mut part = fixtures::partition(0, "big", 2);
    part.oversubscribe = Oversubscribe::Yes(2);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    ct.node_init(&[
        fixtures::node(0, "n1", 1, 4, 1, 1000),
        fixtures::node(1, "n2", 1, 4, 1, 1000),
    ])
    .unwrap();
    let on = |id, node, share| {
        let mut j = job(id, 1, 2, 1);
        j.details.required_nodes = Some(bm(2, &[node]));
        if share {
            j.details.share = ShareRequest::Oversubscribe;
        }
        j
    };
    assert_eq!(start(&mut ct, on(1, 0, true)), vec![(0, vec![0, 1], 2)]);
    assert_eq!(start(&mut ct, on(2, 0, false)), vec![(0, vec![2, 3], 2)]);
    assert_eq!(start(&mut ct, on(3, 1, false)), vec![(1, vec![0, 1], 2)]);
    assert!(refused(&ct, on(4, 1, true), JobTestMode::RunNow));
}

#[test]
fn test_only_ends_once_the_nodes_are_chosen() {
    // Fuzzed anchor stream (cons_tres-CR_Core_Memory-fuzz, seed 1) f196,
    // `-n4 -c5 --mem=1000`: Slurm's submit test (TEST_ONLY) accepted it,
    // as 22.05's `_job_test` returns once `_select_nodes` found nodes
    // with the CPUs (three nodes, 20 CPUs), before task distribution
    // finds that they hold only three 5-CPU tasks. RUN_NOW distributes the
    // tasks and cannot start it there.
    let ct = anchor_cluster();
    let mut j = job(1, 1, 4, 5);
    j.details.memory = MemoryRequest::PerNode(1000);
    assert!(!refused(&ct, j.clone(), JobTestMode::TestOnly));
    assert!(refused(&ct, j, JobTestMode::RunNow));
}
