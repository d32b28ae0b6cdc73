//! WILL_RUN and reservation mode (spec 2.3): when and where would the job
//! start, given the end times of running jobs.
//!
//! Running jobs leave a copy of the tables in *time windows*: the first
//! window ends at the first end time rounded up to a multiple of 30 s;
//! each failure doubles the window (or adds `bf_window_linear` seconds).
//! This batching is what the spec describes (Slurm 23.02 and later);
//! Slurm 22.05 removes one job at a time. Both give the same start time —
//! the end of the last removed job whose resources are needed, found here by
//! re-adding removed jobs latest first — except that 22.05 has no 200-job
//! batch cap.

use slurm_wasm_sdk::codes::ESLURM_NODES_BUSY;
use slurm_wasm_sdk::select::PreempteeCandidate;
use slurm_wasm_sdk::Error;

use crate::bits::Bits;
use crate::eval_nodes::Counts;
use crate::job_test::Against;
use crate::request::JobView;
use crate::transitions::{add_job, remove_job, Part};
use crate::{ConsTres, JobRec, Usage};

const YEAR: i64 = 365 * 24 * 3600;

impl ConsTres {
    /// The expected end of a running job for planning (spec 2.3).
    pub fn end_guess(&self, rec: &JobRec, now: i64) -> i64 {
        if self.params.time_min_as_soft_limit {
            if let Some(soft) = rec.soft_end {
                // `time_min_as_soft_limit`: plan with the `--time-min` end,
                // or halfway to the hard end once it has passed.
                let end = if soft > now {
                    soft
                } else {
                    now + (rec.end_time - now).max(0) / 2
                };
                return end.max(now + 1);
            }
        }
        let end = if rec.end_time > now {
            rec.end_time
        } else if rec.unlimited {
            now + YEAR
        } else if self.params.over_time_limit == 0 {
            rec.end_time + self.params.kill_wait as i64
        } else {
            rec.end_time + self.params.kill_wait as i64 + self.params.over_time_limit as i64 * 60
        };
        end.max(now + 1)
    }

    fn remove_all(&self, usage: &mut Usage, id: u32) {
        if let Some(rec) = usage.jobs.remove(&id) {
            let part = if rec.suspended {
                Part::Suspend
            } else {
                Part::Normal
            };
            remove_job(usage, &self.recs, self.total_cores, &rec, part);
        }
    }

    /// `_will_run_test`: the allocation, its start time and the preemptees.
    #[allow(clippy::too_many_arguments)]
    pub fn will_run(
        &self,
        job: &JobView,
        cand: &Bits,
        counts: Counts,
        excluded: Option<&Bits>,
        candidates: &[PreempteeCandidate],
        now: i64,
    ) -> Result<(JobRec, i64, Vec<u32>), Error> {
        if let Ok(rec) = self.test_on(
            &self.usage,
            job,
            cand,
            counts,
            Against::Free,
            excluded,
            true,
        ) {
            return Ok((rec, now, Vec::new()));
        }
        let mut sim = self.usage.clone();
        let mut removed_cands = Vec::new();
        for c in candidates {
            if sim.jobs.contains_key(&c.job_id) {
                self.remove_all(&mut sim, c.job_id);
                removed_cands.push(c.job_id);
            }
        }
        if !removed_cands.is_empty() {
            if let Ok(rec) = self.test_on(&sim, job, cand, counts, Against::Free, excluded, true) {
                let list = self.overlapping(&removed_cands, &rec);
                return Ok((rec, now, list));
            }
        }
        let mut order: Vec<(i64, u32)> = sim
            .jobs
            .values()
            .map(|j| (self.end_guess(j, now), j.id))
            .collect();
        order.sort();
        let mut next = 0;
        let mut window: i64 = 30;
        let mut removed: Vec<(i64, u32)> = Vec::new();
        let mut limit = order
            .first()
            .map_or(now, |o| (o.0 + 29).div_euclid(30) * 30);
        while next < order.len() {
            limit = limit.max(order[next].0);
            while next < order.len() && order[next].0 <= limit {
                self.remove_all(&mut sim, order[next].1);
                removed.push(order[next]);
                next += 1;
            }
            if let Ok(rec) = self.test_on(&sim, job, cand, counts, Against::Free, excluded, true) {
                // Re-add removed jobs latest first: the first one that breaks
                // the fit is the last one needed.
                let mut probe = sim.clone();
                let mut start = removed.first().map_or(now, |r| r.0);
                let mut best = rec;
                for &(end, id) in removed.iter().rev() {
                    if let Some(j) = self.usage.jobs.get(&id) {
                        let part = if j.suspended {
                            Part::Suspend
                        } else {
                            Part::Normal
                        };
                        add_job(&mut probe, &self.recs, self.total_cores, j, part);
                        probe.jobs.insert(id, j.clone());
                    }
                    match self.test_on(&probe, job, cand, counts, Against::Free, excluded, true) {
                        Ok(r) => best = r,
                        Err(_) => {
                            start = end;
                            break;
                        }
                    }
                }
                let list = self.overlapping(&removed_cands, &best);
                return Ok((best, start.max(now + 1), list));
            }
            window = if self.params.bf_window_linear > 0 {
                window + self.params.bf_window_linear
            } else {
                window * 2
            };
            if window > YEAR {
                break;
            }
            limit += window;
        }
        Err(Error::new(
            ESLURM_NODES_BUSY,
            format!(
                "job {}: cannot run even after every running job ends",
                job.job_id
            ),
        ))
    }
}
