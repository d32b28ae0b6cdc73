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

impl ConsTres {
    /// Removes `cand`'s share from `usage` as its preempt mode says.
    pub fn remove_candidate(&self, usage: &mut Usage, cand: &PreempteeCandidate) -> bool {
        let Some(rec) = usage.jobs.get(&cand.job_id).cloned() else {
            return false;
        };
        match cand.mode {
            PreemptMode::Requeue | PreemptMode::Cancel => {
                usage.jobs.remove(&cand.job_id);
                let part = if rec.suspended {
                    Part::Suspend
                } else {
                    Part::Normal
                };
                remove_job(usage, &self.recs, &rec, part);
            }
            PreemptMode::Suspend => {
                if !rec.suspended {
                    usage.jobs.remove(&cand.job_id);
                    remove_job(usage, &self.recs, &rec, Part::Resume);
                }
            }
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
