//! Tests of [`crate::preempt`] (22.05 `_run_now`, cons_common/job_test.c):
//! preemption in RUN_NOW.

use slurm_wasm_sdk::select::{JobTestMode, PreemptMode, PreempteeCandidate};

use crate::test_support::{cluster, job, request, start_full};

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
