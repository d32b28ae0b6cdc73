//! Tests of [`crate::transitions`]: the usage tables as jobs begin, end, are
//! suspended, resumed and expanded, and across a reconfigure.

use slurm_wasm_sdk::select::JobTestMode;
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{JobState, MemoryRequest};

use crate::test_support::{
    anchor_cluster, bm, cluster, decision, job, params, request, run, start, start_full, with_gres,
};
use crate::ConsTres;

#[test]
fn begin_then_nodeinfo_set_does_not_double_count() {
    // Module doc of transitions: job-begin adds, nodeinfo-set only adds unknown jobs.
    let mut ct = cluster(&["CR_Core_Memory"], 1, 1, 4, 1, 1000);
    let mut a = job(1, 1, 2, 1);
    a.details.memory = MemoryRequest::PerNode(300);
    let a = run(&mut ct, a);
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
    let a = run(&mut ct, a);
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
fn job_expand_merges_and_scales_shared_cores() {
    // cons_common.c (22.05) select_p_job_expand: CPUs of a node both jobs
    // hold add up, scaled by merged cores / (from cores + to cores) where
    // the jobs shared cores; a job merged with itself is SLURM_ERROR.
    let p = params(&["CR_Core"]);
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
