//! Tests of [`crate::job_test`] (22.05 `common_job_test` and `_job_test`,
//! cons_common/job_test.c): the passes over sharing and partitions, and
//! whole scenarios recorded from a real Slurm 22.05.8 cluster.

use slurm_wasm_sdk::select::{JobTestMode, PreemptMode};
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{
    GresDeviceGroup, Job, JobState, MemoryRequest, PreemptModes, ShareRequest,
};

use crate::test_support::{
    anchor_cluster, anchor_cluster_with, bm, cluster, cores, decision, devs, held_cores, holding,
    job, nodes_of, params, preempt_cluster, preempting, refused, request, row_jobs, start,
    start_full, with_gres,
};
use crate::ConsTres;

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
    let p = params(&["CR_Core_Memory"]);
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
    let p = params(&["CR_Core_Memory"]);
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
    let setup = |preempt_by_part: bool, lo_mode: Option<PreemptModes>| {
        let mut p = params(&["CR_Core"]);
        p.preempt_by_part = preempt_by_part;
        let parts: Vec<_> = [("hi", 3), ("mid", 2), ("lo", 1)]
            .iter()
            .enumerate()
            .map(|(i, &(name, tier))| {
                let mut part = fixtures::partition(i as u32, name, 2);
                part.oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Force(2);
                part.priority_tier = tier;
                if name == "lo" {
                    part.preempt_mode = lo_mode;
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
    let (ct, mid) = setup(false, None);
    assert_eq!(cores(&ct, mid), vec![(1, vec![0, 1], 2)]);
    // With partition_prio the higher tier's cores are off limits: the job
    // can only share the lower tier's node.
    let (ct, mid) = setup(true, None);
    assert_eq!(cores(&ct, mid), vec![(0, vec![0, 1], 2)]);
    // So are those of a partition whose own PreemptMode is OFF, whatever
    // its tier (`preempt_mode != PREEMPT_MODE_OFF`, :1104-1107), and
    // CLUSTER reads as OFF in 22.05 (no flag either way): the job fits
    // nowhere.
    let (ct, mid) = setup(true, Some(PreemptModes::empty()));
    let code = ct
        .job_test(&request(&ct, mid, JobTestMode::RunNow), 1000)
        .map_err(|e| e.code);
    assert_eq!(code.err(), Some(slurm_wasm_sdk::codes::ESLURM_NODES_BUSY));
    // A mode that lets the jobs be preempted changes nothing.
    let (ct, mid) = setup(true, Some(PreemptModes::REQUEUE));
    assert_eq!(cores(&ct, mid), vec![(0, vec![0, 1], 2)]);
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
fn idle_nodes_share_an_offer_only_with_their_device_layout() {
    // Idle nodes of one core and memory layout share their offer
    // (`NodeRec::gres_shape`); for a GPU job their devices are part of
    // that layout. n0 and n2 have no GPU, n1 one bound to core 1, n3 one
    // bound to core 0: all four have the same cores and memory.
    let p = params(&["CR_Core"]);
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
fn test_only_ends_once_the_nodes_are_chosen() {
    // Fuzzed anchor stream (cons_tres-CR_Core_Memory-fuzz, seed 1) f196,
    // `-n4 -c5 --mem=1000`: Slurm's submit test (TEST_ONLY) accepted it,
    // as 22.05's `_job_test` returns once `_select_nodes` found nodes
    // with the CPUs (three nodes, 20 CPUs), before task distribution
    // finds that they hold only three 5-CPU tasks (the recording's job
    // then pended on Resources: other jobs held the nodes). On idle nodes
    // RUN_NOW starts it: 22.05's task distribution over-subscribes the
    // fourth task (`dist_tasks_compute_c_b`'s `over_subscribe`), as the
    // fuzzed streams' f479 and f24 show Slurm doing.
    let ct = anchor_cluster();
    let mut j = job(1, 1, 4, 5);
    j.details.memory = MemoryRequest::PerNode(1000);
    assert!(!refused(&ct, j.clone(), JobTestMode::TestOnly));
    assert!(!refused(&ct, j, JobTestMode::RunNow));
}
