//! Tests of the instance methods [`crate::plugin`] adds: plugin info, job
//! readiness and reservations.

use slurm_wasm_sdk::types::JobState;

use crate::test_support::{anchor_cluster, bm, cluster, job, start_full};
use crate::ConsTres;

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
