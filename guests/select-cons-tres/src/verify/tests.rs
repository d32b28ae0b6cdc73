//! Tests of [`crate::verify`] (22.05 `_verify_node_state`, cons_common/job_test.c),
//! through [`crate::ConsTres::job_test`].

use slurm_wasm_sdk::select::JobTestMode;
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::MemoryRequest;

use crate::test_support::{
    bm, cluster, cores, holding, job, params, preempt_cluster, refused, start,
};
use crate::ConsTres;
use slurm_wasm_sdk::Bitmap;

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
fn whole_memory_default_blocks_second_job() {
    // `_verify_node_state` and `_job_test` (cons_common/job_test.c): no
    // memory request with *_Memory = all of the node's memory.
    let mut ct = cluster(&["CR_Core_Memory"], 2, 1, 4, 1, 1000);
    start(&mut ct, job(1, 1, 1, 1));
    assert_eq!(ct.usage.nodes[0].alloc_memory, 1000);
    assert_eq!(start(&mut ct, job(2, 1, 1, 1))[0].0, 1);
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
        let mut cand = Bitmap::full(1);
        ct.verify_node_state(&ct.usage, &view, &mut cand, None, None, qos_preemptor)
            .unwrap();
        assert_eq!(cand.ones().collect::<Vec<_>>(), kept, "{qos_preemptor}");
    }
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
    let p = params(&["CR_Core"]);
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
