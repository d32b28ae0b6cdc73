//! Tests of [`crate::eval_nodes`] (22.05 `_eval_nodes` and its variants,
//! `choose_nodes`, `_cpus_to_use`; cons_tres/job_test.c).

use slurm_wasm_sdk::select::JobTestMode;
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{GresScope, Job, MemoryRequest, ShareRequest};

use crate::test_support::{
    anchor_like, bm, cluster, cores, held_cores, job, nodes_of, on_node, params, refused, request,
    start, start_full, with_gres, with_gres_per,
};
use crate::ConsTres;
use slurm_wasm_sdk::Bitmap;

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
        .apply_scheduler(
            &["pack_serial_at_end".into()],
            slurm_wasm_sdk::types::PreemptModes::empty(),
        )
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
    let nodes: Vec<usize> = Bitmap::from_words(4, &r.resources.nodes.words)
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
fn lowest_weight_first() {
    // `_eval_nodes` (cons_tres/job_test.c): lower weights are used first.
    let p = params(&["CR_Core"]);
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
fn sized_cluster(tokens: &[&str], cores: &[u16]) -> ConsTres {
    let p = params(tokens);
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
    let p = params(&["CR_Core"]);
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
        .map(|c| c.nodes)
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
    let core = choose(&["CR_Core"]).expect("chosen");
    assert_eq!((&core.nodes, core.by_first), (&vec![(0, 3), (1, 2)], false));
    // n0's clip from the failed choice stays with the answer.
    assert_eq!((core.cap(0), core.cap(1)), (Some(3), None));
    let one = choose(&["CR_Core", "CR_ONE_TASK_PER_CORE"]).expect("chosen");
    assert_eq!((one.nodes, one.caps), (vec![(3, 3), (4, 2)], vec![]));
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
        let p = params(&["CR_Core"]);
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
