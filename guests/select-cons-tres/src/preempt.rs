//! Preemption in RUN_NOW (22.05 `_run_now`,
//! cons_common/job_test.c:2141-2270): REQUEUE and CANCEL candidates are
//! removed from a copy of the tables in list order until the job fits; the
//! list is then reordered and the removal run again, up to
//! `preempt_reorder_count` times; the preemptees are the candidates removed
//! in the last run whose nodes overlap the allocation. SUSPEND candidates
//! are not removed here (the tier rules of `_job_test` already let a job
//! use their cores).
//!
//! Under `PreemptType=preempt/qos` every partition has an extra row (see
//! [`crate::num_rows`]) that only a QOS preemptor's test may use (see
//! [`crate::job_test::TestAs::qos_preemptor`]). When the first candidate's
//! mode is SUSPEND and the job is not held, a failed RUN_NOW test is run
//! again on the live tables as a QOS preemptor instead of the removals
//! above, and its answer, which preempts no job, is final
//! (cons_common/job_test.c:2123-2140; see `ConsTres::run_now`). In
//! will-run, removing a SUSPEND candidate makes the tests that follow a QOS
//! preemptor's (`_build_cr_job_list`, :1862-1865).

use slurm_wasm_sdk::select::{PreemptMode, PreempteeCandidate};

use crate::eval_nodes::Counts;
use crate::job_test::TestAs;
use crate::request::JobView;
use crate::transitions::{remove_job, Part};
use crate::{ConsTres, JobRec, Usage};
use slurm_wasm_sdk::Bitmap;

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

    /// Tries the job after removing REQUEUE and CANCEL candidates one at a
    /// time; returns the allocation and the preemptees, or `None` when even
    /// all removed fail.
    ///
    /// A fit found by removing the `i`-th candidate is tried again with the
    /// list reordered (`pass_count` against `preempt_reorder_count`, and
    /// never more passes than candidates): under `preempt_strict_order` that
    /// candidate moves to the front; otherwise it goes first and the ones
    /// before it follow by how many of their nodes the fit used, most first
    /// (`_sort_usable_nodes_dec`, a stable sort), the rest after. So a
    /// candidate that alone frees enough is the only one preempted, where
    /// the first fitting prefix of the list would take several: with
    /// `preempt_youngest_first` the anchor's e1 (`-p alt -n8`) preempted
    /// the second youngest job alone, not the two youngest.
    pub fn preempt_run_now(
        &self,
        job: &JobView,
        cand: &Bitmap,
        counts: Counts,
        excluded: Option<&Bitmap>,
        candidates: &[PreempteeCandidate],
    ) -> Option<(JobRec, Vec<u32>)> {
        let removable =
            |c: &PreempteeCandidate| matches!(c.mode, PreemptMode::Requeue | PreemptMode::Cancel);
        let mut list = candidates.to_vec();
        let mut passes = 0usize;
        loop {
            let mut sim = self.usage.clone();
            let mut fit = None;
            for (i, c) in list.iter().enumerate() {
                if !removable(c) || !self.remove_candidate(&mut sim, c) {
                    continue;
                }
                if let Ok(rec) =
                    self.test_on(&sim, None, job, cand, counts, TestAs::PREEMPTION, excluded)
                {
                    fit = Some((i, rec));
                    break;
                }
            }
            let (i, rec) = fit?;
            let last =
                passes > self.params.preempt_reorder_count as usize || list.len() <= passes + 1;
            passes += 1;
            if last {
                let removed: Vec<u32> = list[..=i]
                    .iter()
                    .filter(|c| removable(c))
                    .map(|c| c.job_id)
                    .collect();
                let preemptees = self.overlapping(&removed, &rec);
                return Some((rec, preemptees));
            }
            if self.params.preempt_strict_order {
                let c = list.remove(i);
                list.insert(0, c);
            } else {
                let mut keyed: Vec<(usize, PreempteeCandidate)> = list
                    .iter()
                    .enumerate()
                    .map(|(j, c)| {
                        let usable = match j.cmp(&i) {
                            std::cmp::Ordering::Less => self.nodes_used(c.job_id, &rec),
                            std::cmp::Ordering::Equal => usize::MAX,
                            std::cmp::Ordering::Greater => 0,
                        };
                        (usable, *c)
                    })
                    .collect();
                keyed.sort_by_key(|(usable, _)| std::cmp::Reverse(*usable));
                list = keyed.into_iter().map(|(_, c)| c).collect();
            }
        }
    }

    /// How many of job `id`'s nodes (live tables) `rec` uses
    /// (`_get_usable_nodes`).
    fn nodes_used(&self, id: u32, rec: &JobRec) -> usize {
        self.usage.jobs.get(&id).map_or(0, |j| {
            j.nodes
                .iter()
                .filter(|n| rec.nodes.iter().any(|m| m.node == n.node))
                .count()
        })
    }

    /// The jobs of `ids` (live tables) with a node in `rec`.
    pub fn overlapping(&self, ids: &[u32], rec: &JobRec) -> Vec<u32> {
        ids.iter()
            .copied()
            .filter(|&id| self.nodes_used(id, rec) > 0)
            .collect()
    }
}

#[cfg(test)]
mod tests;
