//! WILL_RUN and reservation mode (`_will_run_test`, cons_common/job_test.c):
//! when and where would the job
//! start, given the end times of running jobs.
//!
//! Follows Slurm 22.05.8's `_will_run_test`, which differs from later
//! releases': running jobs on a candidate node are removed in
//! batches ordered by end time; every batch window starts at the first end
//! rounded up to the next multiple of 30 s (a full 30 s later when already
//! on one) and the window (30 s, doubled — or grown by `bf_window_linear` —
//! after each batch until the next job fits in it) is added to that start.
//! After each batch the job is tried against the usage left; the answer is
//! the end time of the *last job of that batch*, and the nodes are those
//! chosen on that usage. Removed jobs are not re-added to find the one
//! actually needed (HEAD does). A batch that removed more than 201 jobs is
//! not tried and does not widen the window. Anchor: `--test-only -n8
//! --mem=3000` got the end of a9 (+300 s), not of a3 (+282 s).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use slurm_wasm_sdk::codes::ESLURM_NODES_BUSY;
use slurm_wasm_sdk::select::{PreemptMode, PreempteeCandidate};
use slurm_wasm_sdk::types::JobResources;
use slurm_wasm_sdk::Error;

use crate::eval_nodes::Counts;
use crate::job_test::{FreeCores, FreeNodes, TestAs};
use crate::node_usage::NODE_CR_AVAILABLE;
use crate::preempt::preempted_part;
use crate::request::JobView;
use crate::transitions::{hold_on_nodes, release, release_on_nodes, Part};
use crate::{ConsTres, JobRec, Usage};
use slurm_wasm_sdk::Bitmap;

const YEAR: i64 = 365 * 24 * 3600;
/// The first time window, seconds.
const WINDOW: i64 = 30;
/// A batch that removed more jobs than this is not tested (22.05 counts
/// from 0 and stops after its 202nd removal).
const BATCH_CAP: usize = 200;

impl ConsTres {
    /// The expected end of a running job for planning (`_guess_job_end`,
    /// cons_common/job_test.c; `time_min_as_soft_limit` is a
    /// SchedulerParameters option of later releases).
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

    /// The end a running job is planned with: its recorded end time (now +
    /// 1 year for a job without a time limit), as 22.05 orders and batches
    /// jobs by; with `time_min_as_soft_limit` (a later release's option) the
    /// soft end of [`Self::end_guess`]. An end already past is replaced by
    /// the `end_guess` estimate.
    fn plan_end(&self, rec: &JobRec, now: i64) -> i64 {
        if (self.params.time_min_as_soft_limit && rec.soft_end.is_some()) || rec.end_time <= now {
            self.end_guess(rec, now)
        } else {
            rec.end_time
        }
    }

    /// Releases live job `id` from the scratch tables (once: `gone`
    /// records the released jobs).
    fn remove_all(&self, scratch: &mut Scratch, gone: &mut BTreeSet<u32>, id: u32) {
        let Some(rec) = self.usage.jobs.get(&id) else {
            return;
        };
        if gone.insert(id) {
            scratch.release(self, rec, part_of(rec));
        }
    }

    /// `_will_run_test`: where and when the job would start, and the
    /// preemptees, answered as Slurm's will-run reply carries it: the
    /// nodes, the CPU count and the start (Slurm frees the job's resources
    /// after the test, `_job_test`). Without preemptees or excluded
    /// cores the answer depends only on the request, the candidates, the
    /// time and the tables: a job asking what the one before it asked (a
    /// backfill pass tests runs of identical jobs) gets the kept answer.
    #[allow(clippy::too_many_arguments)]
    pub fn will_run(
        &self,
        job: &JobView,
        cand: &Bitmap,
        counts: Counts,
        excluded: Option<&Bitmap>,
        candidates: &[PreempteeCandidate],
        now: i64,
    ) -> Result<(JobResources, i64, Vec<u32>), Error> {
        let mut scratch = self.scratch.borrow_mut();
        scratch.sync(&self.usage, now);
        let memo = candidates.is_empty() && excluded.is_none();
        if memo {
            let asked = |l: &&LastAnswer| {
                l.now == now && l.counts == counts && l.cand == *cand && l.job.same_request(job)
            };
            if let Some(last) = scratch.last.as_ref().filter(asked) {
                return match &last.answer {
                    Some((resources, start)) => Ok((resources.clone(), *start, Vec::new())),
                    None => Err(never_fits(job)),
                };
            }
        }
        // Without preemptees, and when a release frees exactly the job's
        // cores (every partition has one row), the scratch tables follow a
        // prefix of the end order from answer to answer.
        let prefix = candidates.is_empty() && self.one_row_each();
        if !prefix {
            let order = scratch.order(self, now);
            scratch.move_to(self, &order, 0);
        }
        let answer = self
            .will_run_on(
                &mut scratch,
                prefix,
                job,
                cand,
                counts,
                excluded,
                candidates,
                now,
            )
            .map(|(rec, start, list)| (self.to_nodes_only(&rec), start, list));
        scratch.put_back(self);
        if memo {
            scratch.last = Some(LastAnswer {
                job: job.clone(),
                cand: cand.clone(),
                counts,
                now,
                answer: answer
                    .as_ref()
                    .ok()
                    .map(|(r, start, _)| (r.clone(), *start)),
            });
        }
        answer
    }

    /// [`Self::will_run`] with `scratch` in step with the live tables:
    /// with `prefix`, its tables are the live ones less a prefix of the
    /// end order, moved to the prefix each test needs (a test reads only
    /// the candidate nodes, and on those the state is the same as after
    /// releasing only the jobs on them); otherwise they are the live ones,
    /// and the jobs released into them are put back afterwards.
    #[allow(clippy::too_many_arguments)]
    fn will_run_on(
        &self,
        scratch: &mut Scratch,
        prefix: bool,
        job: &JobView,
        cand: &Bitmap,
        counts: Counts,
        excluded: Option<&Bitmap>,
        candidates: &[PreempteeCandidate],
        now: i64,
    ) -> Result<(JobRec, i64, Vec<u32>), Error> {
        // An upper bound of the CPUs the candidates can give the job: their
        // cores in no row now, plus the cores of every job released below.
        // A test while it is below the job's minimum must fail and is
        // skipped. Jobs that may share cores with other rows (and gang
        // scheduling) can use cores inside rows: no bound for them.
        let mut cpu_bound = if job.node_req != NODE_CR_AVAILABLE && !self.params.gang {
            // Only the candidates holding a free core count (on a busy
            // cluster a few of the thousands).
            let mut holding = cand.clone();
            if let Some(nodes) = &scratch.live_free(self).nodes {
                holding.and(&nodes.holding);
            }
            let free = scratch.free_cpus(self);
            holding.ones().map(|i| u64::from(free[i])).sum()
        } else {
            u64::MAX
        };
        let need = u64::from(job.min_cpus);
        // Every test of the answer: free resources, COMPLETING nodes allowed.
        let test_as = |how: TestAs, job: &JobView, usage: &Usage, free: Option<&FreeCores>| {
            self.test_on(usage, free, job, cand, counts, how, excluded)
        };
        if cpu_bound >= need {
            let live_free = Some(scratch.live_free(self));
            if let Ok(rec) = test_as(TestAs::WILL_RUN, job, &self.usage, live_free) {
                return Ok((rec, now, Vec::new()));
            }
        }
        // The tests on released jobs prefer the nodes running jobs now
        // under bf_busy_nodes (cons_common/job_test.c:2043-2047).
        let busy_first;
        let later = if self.params.bf_busy_nodes {
            let mut view = job.clone();
            view.prefer_busy = Some(self.idle_nodes(&scratch.live_free(self).cores));
            busy_first = view;
            &busy_first
        } else {
            job
        };
        // The jobs stay in the live table (`gone` lists those released
        // from the scratch copies).
        let mut gone = BTreeSet::new();
        let mut removed_cands = Vec::new();
        // Under preempt/qos, removing a SUSPEND candidate makes every later
        // test a QOS preemptor's (cons_common/job_test.c:1862-1865).
        let mut qos_preemptor = false;
        // Candidates leave now, as their mode says (a SUSPEND one keeps
        // its memory and GRES), and are not released again by end time.
        for c in candidates {
            let Some(rec) = self.usage.jobs.get(&c.job_id) else {
                continue;
            };
            if gone.insert(c.job_id) {
                let (_, cpus) = self.share_of(c.job_id, cand);
                cpu_bound = cpu_bound.saturating_add(cpus);
                if let Some(part) = preempted_part(c.mode, rec) {
                    scratch.release(self, rec, part);
                }
                qos_preemptor |= self.params.preempt_by_qos && c.mode == PreemptMode::Suspend;
                removed_cands.push(c.job_id);
            }
        }
        let how = TestAs::WILL_RUN.with_qos_preemptor(qos_preemptor);
        let test = |usage: &Usage, free: Option<&FreeCores>| test_as(how, later, usage, free);
        if !removed_cands.is_empty() && cpu_bound >= need {
            if let Ok(rec) = test(scratch.tables(), scratch.free.as_ref()) {
                let list = self.overlapping(&removed_cands, &rec);
                return Ok((rec, now, list));
            }
        }
        // Running jobs by planned end; those on no candidate node are
        // skipped but still end a batch when they end past its window.
        let mut order = scratch.order(self, now);
        if !gone.is_empty() {
            order = order
                .iter()
                .filter(|(_, id)| !gone.contains(id))
                .copied()
                .collect();
        }
        let mut base: Option<i64> = None;
        let mut window = WINDOW;
        let mut next = 0;
        let mut more = true;
        while more {
            let mut last = None;
            let mut in_batch = 0;
            let mut capped = false;
            loop {
                let Some(&(end, id)) = order.get(next) else {
                    more = false;
                    break;
                };
                next += 1;
                let (overlaps, cpus) = self.share_of(id, cand);
                if !overlaps {
                    continue;
                }
                // The windows all start at the first end rounded up to the
                // next multiple of 30 s (a full 30 s further when on one).
                let b = *base.get_or_insert(end + (WINDOW - end.rem_euclid(WINDOW)));
                cpu_bound = cpu_bound.saturating_add(cpus);
                if !prefix {
                    self.remove_all(scratch, &mut gone, id);
                }
                last = Some(end);
                match order.get(next) {
                    None => {
                        more = false;
                        break;
                    }
                    Some(&(e, _)) if e > b + window => break,
                    Some(_) => {}
                }
                if in_batch > BATCH_CAP {
                    capped = true;
                    break;
                }
                in_batch += 1;
            }
            let (Some(end), Some(b)) = (last, base) else {
                break;
            };
            if capped {
                // 22.05 goes on to the next batch without testing or
                // widening the window.
                continue;
            }
            loop {
                window = if self.params.bf_window_linear > 0 {
                    window + self.params.bf_window_linear
                } else {
                    window * 2
                };
                if order.get(next).is_none_or(|&(e, _)| e <= b + window) {
                    break;
                }
            }
            if cpu_bound < need {
                continue;
            }
            if prefix {
                scratch.move_to(self, &order, next);
            }
            if let Ok(rec) = test(scratch.tables(), scratch.free.as_ref()) {
                let list = self.overlapping(&removed_cands, &rec);
                return Ok((rec, end, list));
            }
        }
        Err(never_fits(job))
    }
}

/// The error for a job that cannot run on the candidates even once every
/// running job has ended.
fn never_fits(job: &JobView) -> Error {
    Error::new(
        ESLURM_NODES_BUSY,
        format!(
            "job {}: cannot run even after every running job ends",
            job.job_id
        ),
    )
}

/// The last answer given without preemptees or excluded cores, with what
/// it was asked (see [`ConsTres::will_run`]): the nodes and start,
/// or none when the job could never run there.
#[derive(Clone, Debug)]
pub struct LastAnswer {
    job: JobView,
    cand: Bitmap,
    counts: Counts,
    now: i64,
    answer: Option<(JobResources, i64)>,
}

impl ConsTres {
    /// Forgets what will-run answers (and RUN_NOW's free cores) keep: a
    /// node's state changed, which leaves the tables as they were but may
    /// change answers.
    pub fn forget_answers(&self) {
        *self.scratch.borrow_mut() = Scratch::default();
    }

    /// Whether every partition has one row: releasing a job then frees
    /// exactly its cores that no other row holds, and adding it back takes
    /// them again.
    fn one_row_each(&self) -> bool {
        self.usage.rows.iter().all(|p| p.rows.len() == 1)
    }

    /// Whether live job `id` holds a node among `cand`, and the CPUs of
    /// the cores it holds there.
    fn share_of(&self, id: u32, cand: &Bitmap) -> (bool, u64) {
        let Some(j) = self.usage.jobs.get(&id) else {
            return (false, 0);
        };
        let mut share = (false, 0);
        for n in j.nodes.iter().filter(|n| cand.get(n.node)) {
            share.0 = true;
            share.1 += n.cores.count() as u64 * self.recs[n.node].tpc as u64;
        }
        share
    }
}

/// Running jobs as `(planned end, id)`, ascending.
type EndOrder = Arc<[(i64, u32)]>;

/// What will-run answers keep between calls while the live tables stay at
/// one [`Usage::version`]: a copy of the node and row tables that an answer
/// releases running jobs from (the nodes and partitions it changed are put
/// back afterwards, so an answer costs the jobs it releases, not a copy of
/// the cluster), the running jobs by planned end for one `now`, and each
/// node's CPUs in no row, with step 1's free cores of the live and the
/// scratch tables. A backfill pass asks dozens of answers of the same
/// tables; RUN_NOW reads the live free cores from here too.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// The live version the rest mirrors (0, which no tables have: none).
    version: u64,
    /// The copy of the live node and row tables (no jobs).
    tables: Option<Usage>,
    /// Nodes and partitions the answer under way changed in `tables`.
    touched_nodes: Vec<usize>,
    touched_parts: Vec<usize>,
    /// The running jobs by planned end at a `now`: `(now, [(end, id)])`.
    order: Option<(i64, EndOrder)>,
    /// Per node, the CPUs of its cores in no row (empty until asked).
    free_cpus: Vec<u32>,
    /// Step 1's free cores of the live tables (until asked, none).
    live_free: Option<FreeCores>,
    /// How many jobs at the start of the end order are released from
    /// `tables` (see [`ConsTres::will_run`]'s prefix mode).
    released: usize,
    /// Step 1's free cores of `tables`, followed through releases, when
    /// every partition has one row (a release then frees exactly the
    /// released job's cores that no other row holds); none otherwise, and
    /// the tests compute them.
    free: Option<FreeCores>,
    /// The last answer, valid while the rest is (and for its `now` only).
    last: Option<LastAnswer>,
}

impl Scratch {
    /// Brings the scratch in step with `live`: kept when `live` is at the
    /// version it mirrors, emptied otherwise (the copies are made by the
    /// first release that needs them: many answers place the job now and
    /// release nothing).
    pub(crate) fn sync(&mut self, live: &Usage, now: i64) {
        let order_kept =
            self.released == 0 || self.order.as_ref().is_some_and(|(at, _)| *at == now);
        if self.version == live.version && order_kept {
            return;
        }
        *self = Scratch {
            version: live.version,
            ..Scratch::default()
        };
    }

    /// Moves the scratch tables to the live ones less the first `p` jobs
    /// of `order` (the cached end order): releases or adds back the jobs
    /// in between. Only with one row per partition (prefix mode): a
    /// release then clears the job's cores from its row and an add-back
    /// sets them again, leaving the rows' job lists as in the live tables.
    fn move_to(&mut self, ct: &ConsTres, order: &[(i64, u32)], p: usize) {
        while self.released < p {
            if let Some(rec) = ct.usage.jobs.get(&order[self.released].1) {
                self.make_tables(ct);
                let tables = self.tables.as_mut().expect("made above");
                release_on_nodes(&mut tables.nodes, rec, part_of(rec));
                if let Some(row) = live_row(ct, rec) {
                    let cores = &mut tables.rows[rec.partition as usize].rows[row].cores;
                    for n in rec.nodes.iter().filter(|n| n.cpus > 0) {
                        cores.clear_at(ct.recs[n.node].core_off, &n.cores);
                    }
                }
                self.free_released(ct, rec);
            }
            self.released += 1;
        }
        while self.released > p {
            self.released -= 1;
            if let Some(rec) = ct.usage.jobs.get(&order[self.released].1) {
                self.add_back(ct, rec);
            }
        }
    }

    /// Undoes [`Self::move_to`]'s release of `rec` (a live job of `ct`):
    /// its memory, devices and node state, and its cores in its live row.
    fn add_back(&mut self, ct: &ConsTres, rec: &JobRec) {
        let Some(tables) = self.tables.as_mut() else {
            return;
        };
        hold_on_nodes(&mut tables.nodes, rec, part_of(rec));
        let row = live_row(ct, rec);
        if let Some(row) = row {
            let cores = &mut tables.rows[rec.partition as usize].rows[row].cores;
            for n in rec.nodes.iter().filter(|n| n.cpus > 0) {
                cores.or_at(ct.recs[n.node].core_off, &n.cores);
            }
        }
        if let Some(FreeCores {
            cores,
            nodes: Some(nodes),
        }) = self.free.as_mut()
        {
            for n in rec.nodes.iter().filter(|n| n.cpus > 0) {
                let r = &ct.recs[n.node];
                if row.is_some() {
                    // Its cores are taken again: the node is not idle.
                    cores.clear_at(r.core_off, &n.cores);
                    if !cores.any_in(r.core_off, r.cores as usize) {
                        nodes.holding.clear(n.node);
                    }
                    nodes.idle.clear(n.node);
                } else if !ct.unused(&tables.nodes[n.node], n.node) {
                    nodes.idle.clear(n.node);
                }
            }
        }
    }

    /// Makes the scratch copies of `ct`'s live tables (and, with one row
    /// per partition, of its free cores) if not made yet.
    fn make_tables(&mut self, ct: &ConsTres) {
        if self.free.is_none() && ct.one_row_each() {
            self.free = Some(self.live_free(ct).clone());
        }
        if self.tables.is_none() {
            self.tables = Some(Usage {
                nodes: ct.usage.nodes.clone(),
                rows: ct.usage.rows.clone(),
                jobs: BTreeMap::new(),
                version: ct.usage.version,
            });
        }
    }

    /// Releases `part` of `rec` (a live job of `ct`) from the scratch
    /// tables as `remove_job` would, noting the nodes and partition to put
    /// back.
    fn release(&mut self, ct: &ConsTres, rec: &JobRec, part: Part) {
        self.make_tables(ct);
        let tables = self.tables.as_mut().expect("made above");
        release(
            &mut tables.nodes,
            &mut tables.rows,
            &ct.usage.jobs,
            &ct.recs,
            rec,
            part,
        );
        self.free_released(ct, rec);
        self.touched_nodes.extend(rec.nodes.iter().map(|n| n.node));
        self.touched_parts.push(rec.partition as usize);
    }

    /// Follows a release of `rec` from the scratch tables in the scratch
    /// free cores (kept with one row per partition only).
    fn free_released(&mut self, ct: &ConsTres, rec: &JobRec) {
        let (
            Some(tables),
            Some(FreeCores {
                cores,
                nodes: Some(nodes),
            }),
        ) = (self.tables.as_ref(), self.free.as_mut())
        else {
            return;
        };
        for n in rec.nodes.iter().filter(|n| n.cpus > 0) {
            let r = &ct.recs[n.node];
            // The node's cores 64 at a time: the job's cores become free
            // where no row holds them (another partition's row may) and
            // they are not specialised; the cores free before stay free.
            let (mut any, mut all) = (false, true);
            for (w, &job) in n.cores.words().iter().enumerate() {
                let at = r.core_off + 64 * w;
                let width = (r.cores as usize - 64 * w).min(64);
                let mask = u64::MAX >> (64 - width);
                let mut freed = job & ct.base_avail.bits64(at);
                for row in tables.rows.iter().flat_map(|p| &p.rows) {
                    freed &= !row.cores.bits64(at);
                }
                if freed != 0 {
                    cores.or_window(at, freed);
                }
                let now = cores.bits64(at) & mask;
                any |= now != 0;
                all &= now == mask;
            }
            if any {
                nodes.holding.set(n.node);
            }
            if all && ct.unused(&tables.nodes[n.node], n.node) {
                nodes.idle.set(n.node);
            }
        }
    }

    /// Copies back from `live` what the last answer released.
    fn put_back(&mut self, ct: &ConsTres) {
        let live = &ct.usage;
        let Some(tables) = self.tables.as_mut() else {
            return;
        };
        let free = match (self.free.as_mut(), self.live_free.as_ref()) {
            (
                Some(FreeCores {
                    cores,
                    nodes: Some(nodes),
                }),
                Some(FreeCores {
                    cores: live_cores,
                    nodes: Some(live_nodes),
                }),
            ) => Some((cores, nodes, live_cores, live_nodes)),
            _ => None,
        };
        let mut free = free;
        for i in self.touched_nodes.drain(..) {
            tables.nodes[i].clone_from(&live.nodes[i]);
            if let Some((cores, nodes, live_cores, live_nodes)) = free.as_mut() {
                let r = &ct.recs[i];
                cores.copy_range(live_cores, r.core_off, r.core_off + r.cores as usize);
                nodes.copy_node(live_nodes, i);
            }
        }
        self.touched_parts.sort_unstable();
        self.touched_parts.dedup();
        for p in self.touched_parts.drain(..) {
            tables.rows[p].copy_from(&live.rows[p]);
        }
    }

    /// The scratch tables (the first release made them).
    fn tables(&self) -> &Usage {
        self.tables
            .as_ref()
            .expect("will-run scratch tables read before a release made them")
    }

    /// The running jobs of `ct` by planned end at `now`, ties by id.
    fn order(&mut self, ct: &ConsTres, now: i64) -> EndOrder {
        match &self.order {
            Some((at, order)) if *at == now => order.clone(),
            _ => {
                let mut order: Vec<(i64, u32)> = ct
                    .usage
                    .jobs
                    .values()
                    .map(|j| (ct.plan_end(j, now), j.id))
                    .collect();
                order.sort_unstable();
                let order: EndOrder = order.into();
                self.order = Some((now, order.clone()));
                order
            }
        }
    }

    /// Step 1's free cores of the live tables of `ct`, with the nodes
    /// holding them.
    pub(crate) fn live_free(&mut self, ct: &ConsTres) -> &FreeCores {
        self.live_free.get_or_insert_with(|| {
            let mut free = FreeCores::of(&ct.usage, ct.base_avail.clone());
            free.nodes = Some(ct.free_nodes(&ct.usage, &free.cores));
            free
        })
    }

    /// Per node of `ct`, the CPUs of its cores that are in no row of the
    /// live tables (specialised cores excluded).
    fn free_cpus(&mut self, ct: &ConsTres) -> &[u32] {
        if self.free_cpus.len() != ct.recs.len() {
            let free = &self.live_free(ct).cores;
            let cpus = ct
                .recs
                .iter()
                .map(|r| {
                    free.count_range(r.core_off, r.core_off + r.cores as usize) as u32
                        * u32::from(r.tpc)
                })
                .collect();
            self.free_cpus = cpus;
        }
        &self.free_cpus
    }
}

#[cfg(test)]
impl Scratch {
    /// Panics unless the free cores and nodes followed through releases and
    /// add-backs equal those found afresh in the scratch tables.
    pub fn assert_followed(&self, ct: &ConsTres) {
        let (Some(tables), Some(free)) = (&self.tables, &self.free) else {
            return;
        };
        let mut fresh = FreeCores::of(tables, ct.base_avail.clone());
        fresh.nodes = Some(ct.free_nodes(tables, &fresh.cores));
        assert_eq!(free, &fresh, "followed free cores drifted");
    }
}

impl FreeNodes {
    /// Takes node `i`'s membership from `other`.
    fn copy_node(&mut self, other: &FreeNodes, i: usize) {
        for (mine, theirs) in [
            (&mut self.holding, &other.holding),
            (&mut self.idle, &other.idle),
        ] {
            if theirs.get(i) {
                mine.set(i);
            } else {
                mine.clear(i);
            }
        }
    }
}

/// How a release or add-back of `rec` treats it: a suspended job holds
/// memory and devices but no cores and no node state.
fn part_of(rec: &JobRec) -> Part {
    if rec.suspended {
        Part::Suspend
    } else {
        Part::Normal
    }
}

/// The row of its partition that holds running job `rec` in the live
/// tables of `ct`; none for a suspended job or one left out of every row.
fn live_row(ct: &ConsTres, rec: &JobRec) -> Option<usize> {
    if rec.suspended {
        return None;
    }
    ct.usage
        .rows
        .get(rec.partition as usize)?
        .rows
        .iter()
        .position(|r| r.jobs.binary_search(&rec.id).is_ok())
}

#[cfg(test)]
mod tests;
