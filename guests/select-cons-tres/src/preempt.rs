//! Preemption in RUN_NOW (spec 2.3): candidates are removed from a copy of
//! the tables in list order (REQUEUE/CANCEL completely, SUSPEND only their
//! cores) until the job fits; the preemptees are the removed candidates
//! whose nodes overlap the allocation.
//!
//! Not modelled: the `reorder_count`/`strict_order` re-test passes and the
//! extra QOS row; the first fitting prefix of the list decides.

use slurm_wasm_sdk::select::{PreemptMode, PreempteeCandidate};

use crate::bits::Bits;
use crate::eval_nodes::Counts;
use crate::job_test::Against;
use crate::request::JobView;
use crate::transitions::{remove_job, Part};
use crate::{ConsTres, JobRec, Usage};

/// What preempting `rec` in `mode` releases from the tables (22.05
/// `_build_cr_job_list`, cons_common/job_test.c:1858-1870): REQUEUE and
/// CANCEL everything the job holds (action 0), SUSPEND only its cores and
/// node state (action 2, `JOB_RES_ACTION_RESUME`: its memory and GRES
/// stay); nothing for a SUSPEND candidate already suspended, which holds
/// no cores.
pub fn preempted_part(mode: PreemptMode, rec: &JobRec) -> Option<Part> {
    match mode {
        PreemptMode::Requeue | PreemptMode::Cancel if rec.suspended => Some(Part::Suspend),
        PreemptMode::Requeue | PreemptMode::Cancel => Some(Part::Normal),
        PreemptMode::Suspend if rec.suspended => None,
        PreemptMode::Suspend => Some(Part::Resume),
    }
}

impl ConsTres {
    /// Removes `cand`'s share from `usage` as its preempt mode says
    /// ([`preempted_part`]); false when `usage` does not hold the job.
    pub fn remove_candidate(&self, usage: &mut Usage, cand: &PreempteeCandidate) -> bool {
        let Some(rec) = usage.jobs.get(&cand.job_id).cloned() else {
            return false;
        };
        if let Some(part) = preempted_part(cand.mode, &rec) {
            usage.jobs.remove(&cand.job_id);
            remove_job(usage, &self.recs, &rec, part);
        }
        true
    }

    /// Tries the job after removing candidates one at a time; returns the
    /// allocation and the preemptees, or `None` when even all removed fail.
    pub fn preempt_run_now(
        &self,
        job: &JobView,
        cand: &Bits,
        counts: Counts,
        excluded: Option<&Bits>,
        candidates: &[PreempteeCandidate],
    ) -> Option<(JobRec, Vec<u32>)> {
        let mut sim = self.usage.clone();
        let mut removed = Vec::new();
        for c in candidates {
            if !self.remove_candidate(&mut sim, c) {
                continue;
            }
            removed.push(c.job_id);
            if let Ok(rec) =
                self.test_on(&sim, None, job, cand, counts, Against::Free, excluded, true)
            {
                let list = self.overlapping(&removed, &rec);
                return Some((rec, list));
            }
        }
        None
    }

    /// The jobs of `ids` (live tables) with a node in `rec`.
    pub fn overlapping(&self, ids: &[u32], rec: &JobRec) -> Vec<u32> {
        ids.iter()
            .copied()
            .filter(|id| {
                self.usage.jobs.get(id).is_some_and(|j| {
                    j.nodes
                        .iter()
                        .any(|n| rec.nodes.iter().any(|m| m.node == n.node))
                })
            })
            .collect()
    }
}
