//! `select_p_job_test`'s modes (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `select_p_job_test`): RUN_NOW with job mates and
//! preemption, TEST_ONLY and WILL_RUN.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use select_common::{JobView, NodeTable};
use slurm_wasm_sdk::select::PreemptMode;
use slurm_wasm_sdk::{codes, Bitmap};

use crate::config::Config;
use crate::filter::{count_bitmap, AvailCpus, Ctx, FilterMode, Pending, NO_SHARE_LIMIT};
use crate::gres::GresTotals;
use crate::jobs::{ActiveJob, Activity};
use crate::placement::{place, Placed, Placement};
use crate::usage::{NodeUsages, Scratch, Usage};

/// A job-test request after the boundary checks.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub job: &'a JobView,
    /// Candidate nodes, without the job's excluded nodes.
    pub candidates: Bitmap,
    pub min_nodes: u32,
    pub max_nodes: u32,
    pub req_nodes: u32,
    /// Jobs the controller may preempt, in its order.
    pub preemptees: &'a [(u32, PreemptMode)],
    /// The share limit: the partition's `max_share` without the FORCE bit
    /// when the job shares, else 1.
    pub max_share: u32,
}

/// Where (and, for WILL_RUN, when) the job runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub placed: Placed,
    pub start_time: Option<i64>,
    pub preemptees: Vec<u32>,
}

/// The plugin's tables, read-only during a test.
#[derive(Debug, Clone, Copy)]
pub struct Tables<'a> {
    pub nodes: &'a NodeTable,
    pub config: &'a Config,
    pub usage: &'a Usage,
    /// Configured GRES of `nodes`, by column.
    pub gres: &'a GresTotals,
    /// Running and suspended jobs, by id.
    pub jobs: &'a BTreeMap<u32, ActiveJob>,
}

impl<'a> Tables<'a> {
    fn ctx(&self) -> Ctx<'a> {
        Ctx {
            nodes: self.nodes,
            config: self.config,
            gres: self.gres,
        }
    }

    fn pending<'j>(&self, job: &'j JobView) -> Pending<'j> {
        Pending {
            details: &job.details,
            memory: job.memory,
        }
    }

    /// Filters against `usage` and places on what remains: the filtered
    /// count and the placement.
    fn attempt(
        &self,
        usage: &impl NodeUsages,
        req: &Request<'_>,
        run_cnt: u32,
        tot_cnt: u32,
        mode: FilterMode,
    ) -> (Bitmap, Option<Placed>) {
        let usable = count_bitmap(
            self.ctx(),
            usage,
            self.pending(req.job),
            &req.candidates,
            run_cnt,
            tot_cnt,
            mode,
        );
        if usable.count() < req.min_nodes as usize {
            return (usable, None);
        }
        let placed = self.place(req, &usable);
        (usable, placed)
    }

    fn place(&self, req: &Request<'_>, usable: &Bitmap) -> Option<Placed> {
        let nodes = self.nodes;
        let details = &req.job.details;
        let rule = AvailCpus::of(details);
        let avail = |i: usize| nodes.get(i).map_or(0, |n| rule.on(n));
        let cpus = |i: usize| nodes.get(i).map_or(0, |n| u32::from(n.cpus));
        place(
            &Placement {
                avail: &avail,
                cpus: &cpus,
                min_cpus: req.job.details.min_cpus,
                min_nodes: req.min_nodes,
                max_nodes: req.max_nodes,
                req_nodes: req.req_nodes,
                required: req.job.required.as_ref(),
                contiguous: req.job.details.contiguous,
            },
            usable,
        )
    }

    /// [`Self::attempt`] of a will-run test with the live filter, noting
    /// in `tried` whether the placement ran (enough nodes passed).
    fn attempt_live(
        &self,
        usage: &impl NodeUsages,
        req: &Request<'_>,
        max_run: u32,
        tried: &mut bool,
    ) -> Option<Placed> {
        let (usable, placed) = self.attempt(usage, req, max_run, NO_SHARE_LIMIT, FilterMode::Live);
        *tried |= usable.count() >= req.min_nodes as usize;
        placed
    }

    /// `_test_only`: can the job ever run on the candidates? Usage,
    /// memory and job counts are ignored; GRES totals are checked. The
    /// error is Slurm's return code (see `miss`).
    pub fn test_only(&self, req: &Request<'_>) -> Result<Outcome, i32> {
        let (usable, placed) = self.attempt(
            self.usage,
            req,
            NO_SHARE_LIMIT,
            NO_SHARE_LIMIT,
            FilterMode::TestOnly,
        );
        placed
            .map(|placed| Outcome {
                placed,
                start_time: None,
                preemptees: Vec::new(),
            })
            .ok_or_else(|| miss(usable.count() >= req.min_nodes as usize))
    }

    /// `_find_job_mate`: a running job on exactly `req_nodes` nodes, all
    /// usable, with at least our CPUs, the same contiguity, all our required
    /// nodes and none of our excluded ones: share exactly its nodes.
    fn job_mate(&self, req: &Request<'_>, usable: &Bitmap) -> Option<Placed> {
        self.jobs.values().find_map(|mate| {
            let fits = mate.activity == Activity::Running
                && mate.nodes.count() == req.req_nodes as usize
                && mate.total_cpus >= req.job.details.min_cpus
                && mate.nodes.is_subset_of(usable)
                && mate.contiguous == req.job.details.contiguous
                && req
                    .job
                    .required
                    .as_ref()
                    .is_none_or(|r| r.is_subset_of(&mate.nodes))
                && req
                    .job
                    .excluded
                    .as_ref()
                    .is_none_or(|x| !x.ones().any(|i| mate.nodes.get(i)));
            fits.then(|| Placed {
                nodes: mate.nodes.clone(),
                total_cpus: mate.total_cpus,
            })
        })
    }

    /// `_run_now` (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_run_now`): raise the allowed job count per node step by
    /// step up to `max_share`, trying a job mate before placing when
    /// sharing; then, if candidates are given, simulate preemption.
    pub fn run_now(&self, req: &Request<'_>) -> Option<Outcome> {
        let max_share = req.max_share.max(1);
        let mut prev_cnt: Option<usize> = None;
        for run in 0..max_share {
            let last = run == max_share - 1;
            let suspended: &[u32] = if last { &[NO_SHARE_LIMIT] } else { &[0, 4] };
            for &sus in suspended {
                let usable = count_bitmap(
                    self.ctx(),
                    self.usage,
                    self.pending(req.job),
                    &req.candidates,
                    run,
                    run + sus,
                    FilterMode::Live,
                );
                let count = usable.count();
                if prev_cnt == Some(count) || count < req.min_nodes as usize {
                    continue;
                }
                prev_cnt = Some(count);
                let placed = if run > 0 {
                    self.job_mate(req, &usable)
                        .or_else(|| self.place(req, &usable))
                } else {
                    self.place(req, &usable)
                };
                if let Some(placed) = placed {
                    return Some(Outcome {
                        placed,
                        start_time: None,
                        preemptees: Vec::new(),
                    });
                }
            }
        }
        if req.preemptees.is_empty() {
            return None;
        }
        self.preempt(req, max_share)
    }

    /// Removes `job` from `usage`: completely for REQUEUE and CANCEL,
    /// partially (as a suspend) otherwise. A job the tables no longer hold
    /// is left alone, as Slurm does.
    fn remove(&self, usage: &mut Scratch<'_>, job: &ActiveJob, mode: PreemptMode) {
        let full = matches!(mode, PreemptMode::Requeue | PreemptMode::Cancel);
        let _ = usage.remove(job, self.nodes, self.config, full);
    }

    /// The preemption simulation of `_run_now` (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_run_now`).
    fn preempt(&self, req: &Request<'_>, max_share: u32) -> Option<Outcome> {
        // (job id, mode, usable node count), in the controller's order.
        let mut list: Vec<(u32, PreemptMode, u32)> =
            req.preemptees.iter().map(|&(id, m)| (id, m, 0)).collect();
        let mut passes = 0;
        let mut found: Option<Placed> = None;
        'top: loop {
            let mut exp = Scratch::new(self.usage);
            for idx in 0..list.len() {
                let (id, mode, _) = list[idx];
                let Some(job) = self.jobs.get(&id) else {
                    continue;
                };
                self.remove(&mut exp, job, mode);
                let (usable, placed) =
                    self.attempt(&exp, req, max_share - 1, NO_SHARE_LIMIT, FilterMode::Live);
                list[idx].2 = usable.ones().filter(|&i| job.nodes.get(i)).count() as u32;
                let Some(placed) = placed else {
                    continue;
                };
                let first = passes == 0;
                passes += 1;
                if !first || list.len() == 1 {
                    found = Some(placed);
                    break 'top;
                }
                list[idx].2 = 9999;
                for later in &mut list[idx + 1..] {
                    later.2 = 0;
                }
                list.sort_by_key(|c| Reverse(c.2));
                continue 'top;
            }
            break;
        }
        let placed = found?;
        let preemptees = list
            .iter()
            .filter(|(id, _, usable)| {
                *usable != 0
                    && self
                        .jobs
                        .get(id)
                        .is_some_and(|j| j.nodes.ones().any(|i| placed.nodes.get(i)))
            })
            .map(|(id, _, _)| *id)
            .collect();
        Some(Outcome {
            placed,
            start_time: None,
            preemptees,
        })
    }

    /// `_will_run_test` (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_will_run_test`): now if the job fits now or once the
    /// preemptable jobs are gone; otherwise at the end of the first running
    /// job (by end time) whose departure lets it fit. The error is Slurm's
    /// return code (see `miss`).
    pub fn will_run(&self, req: &Request<'_>, now: i64) -> Result<Outcome, i32> {
        let mut tried = false;
        let max_run = req.max_share.saturating_sub(1).max(1);
        let preemptable = |id: u32| req.preemptees.iter().find(|(p, _)| *p == id);
        let finish = |placed: Placed, start: i64| {
            let preemptees = req
                .preemptees
                .iter()
                .filter(|(id, _)| {
                    self.jobs
                        .get(id)
                        .is_some_and(|j| j.nodes.ones().any(|i| placed.nodes.get(i)))
                })
                .map(|(id, _)| *id)
                .collect();
            Outcome {
                placed,
                start_time: Some(start),
                preemptees,
            }
        };
        if let Some(placed) = self.attempt_live(self.usage, req, max_run, &mut tried) {
            return Ok(finish(placed, now));
        }
        let mut exp = Scratch::new(self.usage);
        // End-time order, jobs ending at the same time in job-id order. A
        // heap, not a sort: the answer usually comes after the first few
        // ends, and sorting every running job was half of a will-run.
        let mut ends = Vec::with_capacity(self.jobs.len());
        for job in self.jobs.values() {
            if job.end_time == 0 {
                slurm_wasm_sdk::error!("select/linear: active job {} has zero end_time", job.id);
                continue;
            }
            match preemptable(job.id) {
                Some(&(_, mode)) => self.remove(&mut exp, job, mode),
                None => ends.push(Reverse((job.end_time, job.id))),
            }
        }
        let mut queued = BinaryHeap::from(ends);
        if !req.preemptees.is_empty() {
            if let Some(placed) = self.attempt_live(&exp, req, max_run, &mut tried) {
                return Ok(finish(placed, now));
            }
        }
        while let Some(Reverse((_, id))) = queued.pop() {
            let Some(job) = self.jobs.get(&id) else {
                continue;
            };
            let _ = exp.remove(job, self.nodes, self.config, true);
            if let Some(placed) = self.attempt_live(&exp, req, max_run, &mut tried) {
                let start = if job.end_time <= now {
                    now + 1
                } else {
                    job.end_time
                };
                return Ok(finish(placed, start));
            }
        }
        Err(miss(tried))
    }
}

/// Slurm's return code for a TEST_ONLY or WILL_RUN test without an answer:
/// `_job_test`'s `EINVAL` once the placement ran (`tried`), else the
/// `SLURM_ERROR` these tests start from (the filter never left
/// `min_nodes` nodes).
fn miss(tried: bool) -> i32 {
    if tried {
        codes::EINVAL
    } else {
        codes::SLURM_ERROR
    }
}
