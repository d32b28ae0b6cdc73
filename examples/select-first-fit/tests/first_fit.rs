//! select/first_fit through the exported contract functions, natively: the
//! expectations are the policy's (first candidate nodes by index, `-w`
//! nodes first; will-run at the first end that frees enough) and Slurm's
//! job-test error codes.

use select_first_fit::FirstFit;
use slurm_wasm_sdk::select::{
    Export, JobTestFlags, JobTestMode, JobTestRequest, Managed, SelectConfig, SelectGuest,
};
use slurm_wasm_sdk::testkit::{self, fixtures};
use slurm_wasm_sdk::types::{Job, JobState};
use slurm_wasm_sdk::{codes, Bitmap};

type P = Export<Managed<FirstFit>>;
const NOW: i64 = 1_700_000_000;

/// Job `id` asking for `nodes` whole nodes (`-N nodes`).
fn job(id: u32, nodes: u32) -> Job {
    let mut job = fixtures::job(id);
    job.details.min_nodes = nodes;
    job
}

fn request(job: &Job, mode: JobTestMode) -> JobTestRequest {
    JobTestRequest {
        job: job.clone(),
        candidates: Bitmap::full(3).into(),
        min_nodes: job.details.min_nodes,
        max_nodes: job.details.min_nodes,
        req_nodes: job.details.min_nodes,
        mode,
        flags: JobTestFlags::empty(),
        preemptee_candidates: Vec::new(),
        excluded_cores: None,
    }
}

/// The node indices of a run-now (or other) answer, or its error code.
fn test(job: &Job, mode: JobTestMode) -> Result<(Vec<usize>, Option<i64>), i32> {
    P::job_test(request(job, mode))
        .map(|r| {
            let nodes = Bitmap::try_from(&r.resources.nodes).unwrap();
            (nodes.ones().collect(), r.start_time)
        })
        .map_err(|e| e.code)
}

/// Starts `job` where run-now puts it, ending at `end`.
fn start(mut job: Job, end: i64) -> Job {
    let placed = P::job_test(request(&job, JobTestMode::RunNow)).unwrap();
    job.state = JobState::Running;
    job.end_time = end;
    job.resources = Some(placed.resources);
    P::job_begin(job.clone()).unwrap();
    job
}

#[test]
fn first_fit_whole_nodes_and_will_run_from_end_times() {
    testkit::reset();
    testkit::with(|host| host.now = NOW);
    P::init(SelectConfig {
        cluster: fixtures::cluster_config(),
        partitions: Vec::new(),
    })
    .unwrap();
    let nodes = (0..3)
        .map(|i| fixtures::node(i, &format!("n{i}"), 1, 4, 1, 4000))
        .collect();
    P::node_init(nodes).unwrap();

    // An idle cluster: the first two nodes, whole (4 CPUs each).
    let first = start(job(1, 2), NOW + 100);
    let resources = first.resources.clone().unwrap();
    assert_eq!(resources.ncpus, 8);
    assert!(resources.whole_nodes);
    assert_eq!(P::with_cluster(|c| c.nodeinfo(0).alloc_cpus).unwrap(), 4);

    // Two more nodes: busy now, possible at all, and at job 1's end.
    let second = job(2, 2);
    assert_eq!(
        test(&second, JobTestMode::RunNow),
        Err(codes::ESLURM_NODES_BUSY)
    );
    assert_eq!(test(&second, JobTestMode::TestOnly), Ok((vec![0, 1], None)));
    assert_eq!(
        test(&second, JobTestMode::WillRun),
        Ok((vec![0, 1], Some(NOW + 100)))
    );
    // One node: the first idle one now; -w n0 only when job 1 ends.
    assert_eq!(test(&job(3, 1), JobTestMode::RunNow), Ok((vec![2], None)));
    let mut pinned = job(4, 1);
    pinned.details.required_nodes = Some(Bitmap::from_bits(3, [0]).into());
    assert_eq!(
        test(&pinned, JobTestMode::RunNow),
        Err(codes::ESLURM_NODES_BUSY)
    );
    assert_eq!(
        test(&pinned, JobTestMode::WillRun),
        Ok((vec![0], Some(NOW + 100)))
    );
    // Four nodes never fit on three.
    assert_eq!(
        test(&job(5, 4), JobTestMode::TestOnly),
        Err(codes::ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE)
    );

    // The state round-trips; garbage is refused.
    let state = P::state_save().unwrap();
    P::state_restore(state).unwrap();
    assert!(P::state_restore(b"garbage".to_vec()).is_err());

    // Job 1 ends: job 2 runs now on the first two nodes.
    P::job_fini(first).unwrap();
    assert_eq!(test(&second, JobTestMode::RunNow), Ok((vec![0, 1], None)));
    P::fini().unwrap();
}
