//! `eval_nodes`: choosing the nodes (`_eval_nodes`, `_eval_nodes_lln`,
//! cons_tres/job_test.c): one-node fast path, least
//! loaded node (CR_LLN) and consecutive best fit with weights.
//!
//! Inside the chosen set nodes are taken from its start (from its first
//! required node up, then down, when it holds required nodes); only when
//! one node is left to choose (and the set holds no required node) is the
//! single tightest node of the set that alone fits taken instead, as Slurm
//! 22.05.8 does. The anchor runs show both: `-N1-2 -n6` under
//! CR_CPU_Memory (two nodes to choose) takes two partly used nodes before
//! an idle one that alone would fit, while `-n2 --mem-per-cpu=1000` (job
//! a30, one node) goes to the busy n3 whose 2 usable CPUs fit exactly, not
//! to idle n1.

use std::borrow::Cow;

use slurm_wasm_sdk::types::GresScope;

use crate::can_run::Offer;
use crate::node_usage::NodeRec;
use crate::params::{Params, Unit};
use crate::request::JobView;
use slurm_wasm_sdk::Bitmap;

/// Node counts of the request (`min_nodes`, `req_nodes`, `max_nodes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub min: u32,
    pub req: u32,
    pub max: u32,
}

struct State<'a> {
    job: &'a JobView,
    params: &'a Params,
    recs: &'a [NodeRec],
    rem_cpus: i64,
    rem_nodes: i64,
    /// The nodes still below `min_nodes` (22.05's `min_rem_nodes`).
    min_rem_nodes: i64,
    /// Nodes of `rem_nodes` that a node range (`-N min-max`, `req_nodes`
    /// above `min_nodes`) only wishes for: `req_nodes − min_nodes`, or 0.
    optional: i64,
    rem_max_cpus: i64,
    gres_job: u64,
    gres_have: u64,
    chosen: Vec<(usize, u32)>,
    /// The nodes whose CPUs `cpus_to_use` clipped, with the clipped count
    /// (see [`evaluate`]).
    clipped: &'a mut Vec<(usize, u32)>,
}

impl State<'_> {
    /// `cpus_to_use`: clip a node's CPUs so later nodes keep their share.
    /// Each node still needed for `min_nodes` (not the optional nodes of a
    /// range: 22.05 passes `min_rem_nodes`, cons_tres/job_test.c:844)
    /// keeps one core's worth of the job's CPUs per core (`cpus_per_core`;
    /// e.g. 2 on a 2-thread node without `--ntasks-per-core`, as in 22.05's
    /// `common_cpus_per_core`), a whole socket's worth under CR_Socket.
    fn cpus_to_use(&self, node: usize, avail: u32, cpus_per_core: u32) -> u32 {
        if self.job.whole_node {
            return avail;
        }
        let mut unit = cpus_per_core.max(1) as i64;
        if self.params.unit == Unit::Socket {
            unit *= self.recs[node].cores_per_socket as i64;
        }
        let reserve = (self.min_rem_nodes - 1).max(0) * unit;
        let limit = self.rem_max_cpus - reserve;
        if avail as i64 > limit {
            limit.max(self.job.pn_min_cpus as i64).max(0) as u32
        } else {
            avail
        }
    }

    fn take(&mut self, offer: &Offer) {
        let cpus = self.cpus_to_use(offer.node, offer.avail_cpus, offer.cpus_per_core);
        if cpus < offer.avail_cpus {
            self.clipped.push((offer.node, cpus));
        }
        self.rem_cpus -= cpus as i64;
        self.rem_max_cpus -= cpus as i64;
        self.rem_nodes -= 1;
        self.min_rem_nodes -= 1;
        self.gres_have += offer.job_gres;
        self.chosen.push((offer.node, cpus));
    }

    fn done(&self) -> bool {
        self.rem_nodes <= 0 && self.rem_cpus <= 0 && self.gres_have >= self.gres_job
    }

    /// The end of the greedy choices (least loaded, busy first, serial
    /// at the end): the chosen nodes in node order when the job has its
    /// CPUs, its per-job GRES and the nodes below its minimum (22.05's
    /// `_eval_nodes_lln`, `_busy` and `_serial` end on `min_rem_nodes`,
    /// cons_tres/job_test.c:2930-2938).
    fn finish(mut self) -> Option<Vec<(usize, u32)>> {
        self.chosen.sort_unstable();
        let fits = self.rem_cpus <= 0 && self.gres_have >= self.gres_job && self.min_rem_nodes <= 0;
        (self.done() || fits).then_some(self.chosen)
    }

    /// The nodes still needed, leaving out the optional ones (22.05's
    /// `_enough_nodes`, cons_tres/job_test.c:253).
    fn needed_nodes(&self) -> i64 {
        self.rem_nodes - self.optional
    }

    /// Whether the job fits once no more nodes can be had: the CPUs and
    /// per-job GRES are there and only optional nodes are missing
    /// (`_eval_nodes`, cons_tres/job_test.c:1004-1007).
    fn enough(&self) -> bool {
        self.done()
            || (self.rem_cpus <= 0 && self.gres_have >= self.gres_job && self.needed_nodes() <= 0)
    }
}

/// A node's scheduling weight for this job: `Weight` shifted left by 8,
/// the low byte `0xff` less the GPUs near the node's free cores (22.05's
/// `can_job_run_on_node`), so that among nodes of equal `Weight` those with
/// more co-located GPUs come first and form their own consecutive sets
/// (anchor job a29, `-N2 -n4 --gpus-per-task=1`: Slurm took n1 and n4,
/// whose two GPUs sit beside free cores, over n2 and n3 with one each).
pub fn sched_weight(recs: &[NodeRec], offer: &Offer) -> u64 {
    ((recs[offer.node].weight as u64) << 8) | (0xff - offer.near_gpus as u64)
}

/// The node-by-node choices of 22.05's `_eval_nodes` dispatch
/// (cons_tres/job_test.c:440-470) other than least loaded: each takes the
/// nodes weight by weight, lightest first, until the job has what it needs
/// or its most nodes.
enum Walk<'a> {
    /// `--spread-job` (`_eval_nodes_spread`, :1022-1194; the controller
    /// raised its node maximum to its tasks): in node order.
    Spread,
    /// A will-run test after releasing jobs under bf_busy_nodes, not for a
    /// contiguous job (`_eval_nodes_busy`, :1196-1373): the nodes not idle
    /// now (`idle`), then the idle ones, each in node order.
    BusyFirst(&'a Bitmap),
    /// A one-CPU one-node job under pack_serial_at_end, unless least
    /// loaded comes first (`_eval_nodes_serial`, :2955-3113): from the
    /// last node back.
    SerialAtEnd,
}

impl<'a> Walk<'a> {
    /// The walk `job` takes, in the dispatch's order (least loaded sits
    /// between busy first and serial at the end), or `None`.
    fn of(job: &'a JobView, params: &Params, counts: Counts) -> Option<Walk<'a>> {
        if job.spread {
            Some(Walk::Spread)
        } else if let Some(idle) = job.prefer_busy.as_ref().filter(|_| !job.contiguous) {
            Some(Walk::BusyFirst(idle))
        } else if !job.lln && params.pack_serial_at_end && job.min_cpus == 1 && counts.req == 1 {
            Some(Walk::SerialAtEnd)
        } else {
            None
        }
    }

    /// Takes the offers not yet `taken` into `st`.
    fn take(
        &self,
        st: &mut State<'_>,
        recs: &[NodeRec],
        offers: &[Offer],
        taken: &mut [bool],
        max_nodes: usize,
    ) {
        let mut weights: Vec<u64> = (0..offers.len())
            .filter(|&p| !taken[p])
            .map(|p| sched_weight(recs, &offers[p]))
            .collect();
        weights.sort_unstable();
        weights.dedup();
        let order: Vec<usize> = match self {
            Walk::SerialAtEnd => (0..offers.len()).rev().collect(),
            _ => (0..offers.len()).collect(),
        };
        // Busy first walks each weight twice: the busy nodes, then the idle.
        let passes: &[Option<bool>] = match self {
            Walk::BusyFirst(_) => &[Some(false), Some(true)],
            _ => &[None],
        };
        for w in weights {
            for pass in passes {
                for &p in &order {
                    let o = &offers[p];
                    let in_pass = match (self, pass) {
                        (Walk::BusyFirst(idle), Some(want)) => idle.get(o.node) == *want,
                        _ => true,
                    };
                    if taken[p] || sched_weight(recs, o) != w || !in_pass {
                        continue;
                    }
                    if st.done() || st.chosen.len() >= max_nodes {
                        return;
                    }
                    taken[p] = true;
                    st.take(o);
                }
            }
        }
    }
}

/// The largest per-job GRES count of the job, 0 without: `--gpus`, and a
/// whole-device per-task request's tasks x count, which 22.05 makes the
/// request's `gres_per_job` at submission (common/gres.c:5124-5126). With
/// one, `_eval_nodes` aims at `MIN(min_nodes, req_nodes)` nodes
/// (cons_tres/job_test.c:538-542) and stops once the chosen nodes'
/// devices reach it (`gres_sched_test`). Fuzzed CR_Core_Memory probe
/// `-N1-3 -n3 --gpus-per-task=1`: Slurm's will-run took n[1-2], not three
/// nodes; f499 `-N2-4 -n4 --gpus-per-task=1 --contiguous`: n[2-3].
fn per_job_gres(job: &JobView) -> u64 {
    job.gres
        .iter()
        .filter_map(|g| match g.scope {
            GresScope::PerJob => Some(g.count),
            GresScope::PerTask if !g.shared && job.num_tasks > 0 => {
                Some(g.count * u64::from(job.num_tasks))
            }
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// A set of consecutive usable, untaken nodes of one weight (or of any
/// weight for a contiguous job): offers `start..end`, which may also hold
/// required nodes (taken first; counted in neither `nodes` nor `cpus`).
#[derive(Clone, Copy, Debug)]
struct Run {
    start: usize,
    end: usize,
    /// Untaken nodes of the set.
    nodes: usize,
    cpus: u64,
    gres: u64,
    /// The most CPUs one node of the set offers.
    max_avail: u32,
    /// The scheduling weight of the set's last untaken node (a contiguous
    /// job's sets mix weights; 22.05 keeps the last, :641-642).
    weight: u64,
    /// The offer of the set's first required node.
    req: Option<usize>,
}

/// The sets of untaken offers, in node order, built as 22.05 builds them
/// (cons_tres/job_test.c:594-690). Sets break at unusable nodes and,
/// unless the job is contiguous, where the node weight changes. Required
/// nodes (taken before the sets are built) are in no set's counts but
/// mark the set they lie in; they set no weight, which gives two quirks
/// kept here: after an unusable node (weight unset) required nodes join
/// the nodes after them whatever their weight, and a set begun by a
/// weight change reads weight 0, so its next node breaks it again: the
/// required nodes at its start lose their mark and the set starts after
/// them. A set holding only required nodes is dropped.
fn runs_in(recs: &[NodeRec], offers: &[Offer], taken: &[bool], job: &JobView) -> Vec<Run> {
    // Without required nodes nothing is taken yet. That loop is kept
    // apart: with the required-node test inside, the wasm build of a
    // RUN_NOW over 10,000 nodes spent 6% more fuel.
    if job.required.is_none() {
        return plain_runs(recs, offers, job.contiguous);
    }
    // Slurm's weight of a set no node has set (NO_VAL64), and of one begun
    // by a weight change.
    const UNSET: u64 = u64::MAX;
    const FRESH: u64 = 0;
    let mut out = Vec::new();
    let mut run = Run::at(0, UNSET);
    for (p, offer) in offers.iter().enumerate() {
        if p > 0 && offer.node != offers[p - 1].node + 1 {
            // Unusable nodes in between.
            if run.nodes > 0 {
                run.end = p;
                out.push(run);
            }
            run = Run::at(p, UNSET);
        }
        let weight = sched_weight(recs, offer);
        if !job.contiguous && run.weight != UNSET && weight != run.weight {
            if run.nodes == 0 {
                run.req = None;
            } else {
                run.end = p;
                out.push(run);
                run = Run::at(p, FRESH);
            }
        }
        if run.nodes == 0 {
            run.start = p;
        }
        // All taken offers are required nodes here.
        if taken[p] {
            run.req.get_or_insert(p);
            continue;
        }
        run.weight = weight;
        run.add(offer);
    }
    if run.nodes > 0 {
        run.end = offers.len();
        out.push(run);
    }
    out
}

/// [`runs_in`] for a job without required nodes.
fn plain_runs(recs: &[NodeRec], offers: &[Offer], contiguous: bool) -> Vec<Run> {
    let (mut out, hi) = (Vec::new(), offers.len());
    let mut p = 0;
    while p < hi {
        let mut run = Run::at(p, sched_weight(recs, &offers[p]));
        while p < hi
            && (p == run.start || offers[p].node == offers[p - 1].node + 1)
            && (contiguous || sched_weight(recs, &offers[p]) == run.weight)
        {
            if contiguous {
                run.weight = sched_weight(recs, &offers[p]);
            }
            run.add(&offers[p]);
            p += 1;
        }
        run.end = p;
        out.push(run);
    }
    out
}

impl Run {
    /// An empty set starting at offer `p`, of weight `weight`.
    fn at(p: usize, weight: u64) -> Run {
        Run {
            start: p,
            end: p,
            nodes: 0,
            cpus: 0,
            gres: 0,
            max_avail: 0,
            weight,
            req: None,
        }
    }

    /// Counts an untaken offer into the set.
    fn add(&mut self, o: &Offer) {
        self.nodes += 1;
        self.cpus += o.avail_cpus as u64;
        self.gres += o.job_gres;
        self.max_avail = self.max_avail.max(o.avail_cpus);
    }
}

/// The fewest nodes the job takes: its minimum, raised to hold its tasks
/// at `--ntasks-per-node` (22.05's `_select_nodes`,
/// cons_common/job_test.c:526-531).
fn min_nodes_of(job: &JobView, counts: Counts) -> u32 {
    if job.ntasks_per_node > 0 && job.num_tasks > 0 {
        counts.min.max(job.num_tasks.div_ceil(job.ntasks_per_node))
    } else {
        counts.min
    }
}

/// The most nodes [`eval_nodes`] takes on a cluster of `nodes` nodes. No
/// more nodes than tasks: 22.05's `choose_nodes` lowers the maximum to the
/// task count, or to `min_nodes` when that is larger
/// (cons_tres/job_test.c:3179-3180); the greedy choices (see [`greedy`])
/// then cap it at the task count itself (:1219-1221, :2773-2775,
/// :2973-2975).
fn max_nodes_of(job: &JobView, params: &Params, nodes: usize, counts: Counts) -> usize {
    let mut max_nodes = counts.max;
    if job.num_tasks > 0 && max_nodes > job.num_tasks {
        max_nodes = job.num_tasks.max(min_nodes_of(job, counts));
    }
    if greedy(job, params, counts) && job.num_tasks > 0 {
        max_nodes = max_nodes.min(job.num_tasks);
    }
    max_nodes.min(nodes as u32) as usize
}

/// Whether node selection takes nodes one by one rather than by sets of
/// consecutive nodes: a [`Walk`], or least loaded under CR_LLN or in an
/// `LLN=YES` partition.
fn greedy(job: &JobView, params: &Params, counts: Counts) -> bool {
    job.lln || Walk::of(job, params, counts).is_some()
}

/// 22.05's `choose_nodes` (cons_tres/job_test.c:3134): [`eval_nodes`] on
/// the offers the job may use, then, when that fails, on fewer of them.
/// `first` are the offers of the first pass; `later` gives those without
/// the first-pass GRES trim (`None` when they are the same: a job without
/// GRES). Returns the choice and whether the first pass made it.
///
/// A whole-node job with a CPU maximum (`max_cpus`) may use no node
/// offering more CPUs than that maximum; when such a node is a required
/// one the job does not fit (:3156-3172).
///
/// When the first evaluation fails, the later offers are evaluated once
/// when no more than `min_nodes` nodes offer anything (:3197-3205);
/// otherwise small nodes are dropped for good, step by step, and the
/// choice made again (:3206-3247): a node's size is its CPUs plus its
/// usable GPUs (`avail_res_cnt`; `gpus` gives a node's usable GPUs, asked
/// only then and only for a job requesting GPUs); for each size from 1 up
/// to below the largest size among all offers, every node no bigger is
/// dropped in node order, except required nodes, stopping once only
/// `min_nodes` nodes are left; the first choice that fits is the answer.
/// A failed choice's clipped CPU counts stay with their nodes for the
/// choices after it, sizes included (see `evaluate`).
///
/// Only a failing job pays for the steps, and one that no subset of the
/// offers can fit (its `max_nodes` biggest offers short of its CPUs) pays
/// for none: every step would fail too.
pub fn choose_nodes(
    job: &JobView,
    params: &Params,
    recs: &[NodeRec],
    first: &[Offer],
    later: impl FnOnce() -> Option<Vec<Offer>>,
    counts: Counts,
    gpus: impl Fn(usize) -> u16,
) -> Option<Choice> {
    let too_big = |o: &Offer| o.avail_cpus > job.max_cpus;
    let capped = job.whole_node && job.max_cpus > 0;
    // The offers a whole-node job with a CPU maximum may use; `None` when
    // a required node offers more.
    let usable = |offers: &[Offer]| -> Option<Option<Vec<Offer>>> {
        if !capped || !offers.iter().any(too_big) {
            return Some(None);
        }
        if let Some(req) = &job.required {
            if offers.iter().any(|o| too_big(o) && req.get(o.node)) {
                return None;
            }
        }
        Some(Some(
            offers.iter().filter(|o| !too_big(o)).copied().collect(),
        ))
    };
    let kept = usable(first)?;
    let offers = kept.as_deref().unwrap_or(first);
    // 22.05's `_eval_nodes` starts from the nodes `can_job_run_on_node`
    // passed, and the first pass drops nodes inside it (`_select_cores`):
    // a first pass with too few nodes left, or without a required one,
    // still walks its sets and clips their nodes before it fails. Here
    // the first pass's offers are already filtered, so when they look
    // short the later offers (the nodes without that filter) say whether
    // `_eval_nodes` would have walked.
    let min_nodes = min_nodes_of(job, counts) as usize;
    let missing_required = |offers: &[Offer]| {
        job.required.as_ref().is_some_and(|req| {
            req.ones()
                .any(|i| offers.binary_search_by_key(&i, |o| o.node).is_err())
        })
    };
    let (asked, later) = if offers.len() < min_nodes || missing_required(offers) {
        (Some(later()), None)
    } else {
        (None, Some(later))
    };
    let entry = asked.as_ref().and_then(Option::as_deref).unwrap_or(offers);
    let mut clipped = Vec::new();
    if let Some(chosen) = evaluate(job, params, recs, offers, entry, counts, &mut clipped) {
        return Some(Choice {
            nodes: chosen,
            by_first: true,
            caps: Vec::new(),
        });
    }
    let later = match later {
        Some(later) => later(),
        None => asked.flatten(),
    };
    let (all, kept) = match &later {
        Some(all) => (all.as_slice(), usable(all)?),
        None => (first, kept),
    };
    let offers = kept.as_deref().unwrap_or(all);
    // What the failed choice clipped stays clipped (see `evaluate`).
    let keeps_clips = keeps_clips(job, params);
    let (all, offers) = if keeps_clips && !clipped.is_empty() {
        (
            Cow::Owned(with_clips(all, &clipped)),
            Cow::Owned(with_clips(offers, &clipped)),
        )
    } else {
        (Cow::Borrowed(all), Cow::Borrowed(offers))
    };
    // A later choice sees the failed ones' clips (see `Choice::caps`).
    let retried = |nodes: Vec<(usize, u32)>, clipped: Vec<(usize, u32)>| Choice {
        nodes,
        by_first: false,
        caps: if keeps_clips { clipped } else { Vec::new() },
    };
    if offers.len() <= min_nodes {
        // Nothing to drop: the choice once more, without the first-pass
        // trim (a repeat of the failed one when there was none).
        return match later {
            Some(_) => eval_nodes(job, params, recs, &offers, counts).map(|c| retried(c, clipped)),
            None => None,
        };
    }
    // Slurm's first retry (size 1) chooses with the later offers even when
    // it drops nothing (:3237); with no offer of one CPU it drops nothing,
    // so that choice needs no node's GPUs.
    let fresh = later.is_some();
    let tried = fresh && offers.iter().all(|o| o.avail_cpus > 1);
    if tried {
        let failed = clipped.len();
        if let Some(chosen) = evaluate(job, params, recs, &offers, &offers, counts, &mut clipped) {
            clipped.truncate(failed);
            return Some(retried(chosen, clipped));
        }
    }
    let retries = Retries {
        job,
        params,
        recs,
        counts,
        keeps_clips,
    };
    retries
        .without_small_nodes(&all, &offers, gpus, fresh && !tried, &mut clipped)
        .map(|c| retried(c, clipped))
}

/// The nodes [`choose_nodes`] chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// `(node, CPUs)` in node order.
    pub nodes: Vec<(usize, u32)>,
    /// Chosen on the first pass (GRES kept beside their devices).
    pub by_first: bool,
    /// The CPU counts failed choices before it clipped, which 22.05 keeps
    /// in the nodes' `avail_res` (`_cpus_to_use`, cons_tres/job_test.c:
    /// 244-246): the retry's `_select_cores` then bounds a node's tasks by
    /// its clipped count, and for a job with GRES
    /// `gres_select_filter_sock_core` trims the node's cores to those tasks
    /// (cons_common/gres_select_filter.c:880-912), which decides the cores
    /// the job gets there. Empty for a first-pass choice and where clips do
    /// not stay (see `keeps_clips`).
    pub caps: Vec<(usize, u32)>,
}

impl Choice {
    /// The CPUs node `node` was clipped to by a failed choice, if any.
    pub fn cap(&self, node: usize) -> Option<u32> {
        self.caps
            .iter()
            .filter(|(n, _)| *n == node)
            .map(|(_, c)| *c)
            .min()
    }
}

/// Whether CPU counts a failed choice clipped stay clipped for the later
/// choices: not where 22.05's `_select_cores` counts a node's CPUs again
/// from its cores, under CR_ONE_TASK_PER_CORE for a job without
/// `--ntasks-per-core` or CPUs per GRES (cons_tres/job_test.c:2172-2177).
fn keeps_clips(job: &JobView, params: &Params) -> bool {
    !(params.one_task_per_core && job.ntasks_per_core == 0 && job.gres_cpus_per_node() == 0)
}

/// `offers` with each node in `clipped` offering no more than its clipped
/// count.
fn with_clips(offers: &[Offer], clipped: &[(usize, u32)]) -> Vec<Offer> {
    let mut out = offers.to_vec();
    for &(node, cpus) in clipped {
        if let Ok(p) = out.binary_search_by_key(&node, |o| o.node) {
            out[p].avail_cpus = out[p].avail_cpus.min(cpus);
        }
    }
    out
}

/// What [`choose_nodes`]' retries after a failed choice need of the test.
struct Retries<'a> {
    job: &'a JobView,
    params: &'a Params,
    recs: &'a [NodeRec],
    counts: Counts,
    keeps_clips: bool,
}

impl Retries<'_> {
    /// The retries on `offers` (`all` before the whole-node filter), with
    /// `clipped` what the failed choices so far clipped. With `fresh`
    /// offers (not yet chosen from) the first step chooses even when it
    /// drops nothing, as Slurm's does for size 1 (:3237).
    ///
    /// Slurm steps through every size from 1 up to below the largest
    /// `avail_res_cnt` of all offers, dropping at each the nodes no bigger
    /// and choosing again when that dropped any; a failed choice's clips
    /// shrink nodes on the way, and a shrunk node drops at the next size.
    /// Sizes at which no node drops are skipped here.
    #[cold]
    #[inline(never)]
    fn without_small_nodes(
        &self,
        all: &[Offer],
        offers: &[Offer],
        gpus: impl Fn(usize) -> u16,
        fresh: bool,
        clipped: &mut Vec<(usize, u32)>,
    ) -> Option<Vec<(usize, u32)>> {
        let (job, counts) = (self.job, self.counts);
        let min_nodes = min_nodes_of(job, counts) as usize;
        if offers.len() <= min_nodes
            || !cpus_may_suffice(job, self.params, self.recs.len(), offers, counts)
        {
            return None;
        }
        let with_gpus = job.gres.iter().any(|g| g.gpu);
        let gpus_of = |o: &Offer| if with_gpus { gpus(o.node) as u64 } else { 0 };
        // Each offer with its usable GPUs: its size is its CPUs plus those.
        let size = |&(o, g): &(Offer, u64)| o.avail_cpus as u64 + g;
        let largest = all
            .iter()
            .map(|o| size(&(*o, gpus_of(o))))
            .max()
            .unwrap_or(0);
        if largest <= 1 {
            return None;
        }
        let mut left: Vec<(Offer, u64)> = offers.iter().map(|o| (*o, gpus_of(o))).collect();
        self.shrink(&mut left, clipped);
        let required = |o: &Offer| job.required.as_ref().is_some_and(|r| r.get(o.node));
        let droppable_min =
            |left: &[(Offer, u64)]| left.iter().filter(|(o, _)| !required(o)).map(size).min();
        let mut kept: Vec<Offer> = Vec::with_capacity(left.len());
        let mut count = 0;
        if fresh && droppable_min(&left) != Some(1) {
            kept.extend(left.iter().map(|&(o, _)| o));
            if let Some(chosen) = self.choose(&kept, &mut left, clipped) {
                return Some(chosen);
            }
            count = 1;
        }
        while let Some(smallest) = droppable_min(&left) {
            count = smallest.max(count + 1);
            if count >= largest {
                break;
            }
            let before = left.len();
            let mut n = before;
            left.retain(|e| {
                if n <= min_nodes || size(e) > count || required(&e.0) {
                    return true;
                }
                n -= 1;
                false
            });
            if left.len() == before {
                break;
            }
            kept.clear();
            kept.extend(left.iter().map(|&(o, _)| o));
            if let Some(chosen) = self.choose(&kept, &mut left, clipped) {
                return Some(chosen);
            }
            if left.len() <= min_nodes {
                break;
            }
        }
        None
    }

    /// One choice among `kept` (the offers of `left`); when it fails, the
    /// nodes it clipped shrink in `left`, and when it succeeds its own clips
    /// leave `clipped` (which then holds the failed choices').
    fn choose(
        &self,
        kept: &[Offer],
        left: &mut [(Offer, u64)],
        clipped: &mut Vec<(usize, u32)>,
    ) -> Option<Vec<(usize, u32)>> {
        let from = clipped.len();
        let chosen = evaluate(
            self.job,
            self.params,
            self.recs,
            kept,
            kept,
            self.counts,
            clipped,
        );
        if chosen.is_none() {
            self.shrink(left, &clipped[from..]);
        } else {
            clipped.truncate(from);
        }
        chosen
    }

    /// The nodes of `left` in `clipped` lowered to their clipped CPUs,
    /// where clips stay (see [`keeps_clips`]).
    fn shrink(&self, left: &mut [(Offer, u64)], clipped: &[(usize, u32)]) {
        if !self.keeps_clips {
            return;
        }
        for &(node, cpus) in clipped {
            if let Ok(p) = left.binary_search_by_key(&node, |(o, _)| o.node) {
                left[p].0.avail_cpus = left[p].0.avail_cpus.min(cpus);
            }
        }
    }
}

/// Whether the most nodes the job may take can hold its CPUs: a node
/// gives the job at most its offer (or the job's per-node minimum, which
/// `_cpus_to_use` may raise a clipped count to), so when the biggest
/// `max_nodes` offers fall short, [`eval_nodes`] fails on every subset.
fn cpus_may_suffice(
    job: &JobView,
    params: &Params,
    nodes: usize,
    offers: &[Offer],
    counts: Counts,
) -> bool {
    let cpus = |o: &Offer| o.avail_cpus.max(job.pn_min_cpus) as u64;
    let need = job.min_cpus as u64;
    let most = max_nodes_of(job, params, nodes, counts).min(offers.len());
    // One pass settles most cases: all the offers, or `most` of the
    // biggest, against the CPUs needed.
    let (mut sum, mut max) = (0, 0);
    for o in offers {
        sum += cpus(o);
        max = max.max(cpus(o));
    }
    if sum < need || (most as u64) * max < need {
        return false;
    }
    if most == 0 || most == offers.len() {
        return true;
    }
    let mut each: Vec<u64> = offers.iter().map(cpus).collect();
    each.select_nth_unstable_by(most - 1, |a, b| b.cmp(a));
    each[..most].iter().sum::<u64>() >= need
}

/// Chooses nodes among the offers (usable nodes only, `avail_cpus > 0`,
/// in node order). Returns `(node, cpus)` in node order, or `None` when the
/// job does not fit.
///
/// With a node range (`counts.req` above the minimum) nodes are taken up
/// to `req`, but the job also fits when the nodes run out with only the
/// optional ones missing (`_eval_nodes`, cons_tres/job_test.c:1004-1007).
/// A job giving a task count takes no more nodes than it has tasks (or than
/// its minimum, when that is larger; under CR_LLN never more than its
/// tasks).
///
/// A one-node job takes the same path, as in 22.05 (which has no
/// shortcut for it): the tightest sufficient set, then the set's node with
/// the fewest usable CPUs that covers the job.
///
/// Costs O(offers + sets × sets used): the sets are built once and each
/// chosen set is dropped after its walk, instead of a pass over every node
/// per chosen set.
pub fn eval_nodes(
    job: &JobView,
    params: &Params,
    recs: &[NodeRec],
    offers: &[Offer],
    counts: Counts,
) -> Option<Vec<(usize, u32)>> {
    evaluate(job, params, recs, offers, offers, counts, &mut Vec::new())
}

/// [`eval_nodes`], noting in `clipped` each node whose CPUs
/// `_cpus_to_use` lowered, with the lowered count. 22.05 writes that count
/// into the node's `avail_res` (cons_tres/job_test.c:244-246), so when the
/// choice fails, every later choice of the same test (`choose_nodes`'
/// second pass and retries) sees the node with those CPUs, and its size
/// for the retries shrinks with them. `entry` are the nodes `_eval_nodes`
/// starts from (its early refusals count them): `offers`, or on the first
/// pass the nodes before that pass dropped some (see [`choose_nodes`]).
fn evaluate(
    job: &JobView,
    params: &Params,
    recs: &[NodeRec],
    offers: &[Offer],
    entry: &[Offer],
    counts: Counts,
    clipped: &mut Vec<(usize, u32)>,
) -> Option<Vec<(usize, u32)>> {
    let find = |node: usize| offers.binary_search_by_key(&node, |o| o.node).ok();
    if let Some(req) = &job.required {
        if req
            .ones()
            .any(|i| entry.binary_search_by_key(&i, |o| o.node).is_err())
        {
            return None;
        }
    }
    let min_nodes = min_nodes_of(job, counts);
    let total_usable = entry.len() as u32;
    if total_usable < min_nodes || min_nodes > counts.max {
        return None;
    }
    let gres_job = per_job_gres(job);
    let rem_nodes = if gres_job > 0 {
        min_nodes.min(counts.req.max(min_nodes))
    } else {
        min_nodes.max(counts.req)
    };
    let mut st = State {
        job,
        params,
        recs,
        rem_cpus: job.min_cpus as i64,
        rem_nodes: rem_nodes as i64,
        min_rem_nodes: min_nodes as i64,
        optional: counts.req.saturating_sub(min_nodes) as i64,
        rem_max_cpus: if job.max_cpus > 0 {
            job.max_cpus
        } else {
            job.min_cpus
        } as i64,
        gres_job,
        gres_have: 0,
        chosen: Vec::new(),
        clipped,
    };
    let gres_cpu = job.gres_cpus_per_node() as i64;
    st.rem_max_cpus = st.rem_max_cpus.max(gres_cpu * st.rem_nodes);
    let max_nodes = max_nodes_of(job, params, recs.len(), counts);
    let mut taken = vec![false; offers.len()];

    // Required nodes first.
    if let Some(req) = &job.required {
        for i in req.ones() {
            let p = find(i)?;
            st.take(&offers[p]);
            taken[p] = true;
            if st.chosen.last()?.1 == 0 {
                return None;
            }
        }
        if job.max_cpus > 0 && st.rem_max_cpus < 0 {
            return None;
        }
        if st.chosen.len() > max_nodes {
            return None;
        }
    }

    if let Some(walk) = Walk::of(job, params, counts) {
        walk.take(&mut st, recs, offers, &mut taken, max_nodes);
        return st.finish();
    }

    if job.lln {
        // Least loaded node (`_eval_nodes_lln`): lowest weight, then the
        // greatest ratio of free CPUs to node CPUs, free CPUs counted
        // before the job's memory and task limits cut them (`max_cpus`;
        // 22.05 cons_tres/job_test.c:2888-2894); the first on ties. The
        // scan, in node order, stops at a new best whose free CPUs equal
        // the last pick's at the same weight (:2863, :2895-2897, :2913):
        // among nodes of different sizes that can be a node of lower
        // ratio than one further on.
        let mut last: Option<(u64, u32)> = None;
        while !st.done() && st.chosen.len() < max_nodes {
            let mut best: Option<usize> = None;
            for p in (0..offers.len()).filter(|&p| !taken[p]) {
                let better = match best {
                    None => true,
                    Some(b) => {
                        let (oi, ob) = (&offers[p], &offers[b]);
                        let (wi, wb) = (sched_weight(recs, oi), sched_weight(recs, ob));
                        let (fi, fb) = (oi.max_cpus as u64, ob.max_cpus as u64);
                        wi < wb
                            || (wi == wb
                                && fi * recs[ob.node].cpus() as u64
                                    > fb * recs[oi.node].cpus() as u64)
                    }
                };
                if better {
                    best = Some(p);
                    let o = &offers[p];
                    if last == Some((sched_weight(recs, o), o.max_cpus)) {
                        break;
                    }
                }
            }
            let Some(b) = best else {
                break;
            };
            taken[b] = true;
            st.take(&offers[b]);
            last = Some((sched_weight(recs, &offers[b]), offers[b].max_cpus));
        }
        return st.finish();
    }

    // Consecutive best fit.
    let mut runs = runs_in(recs, offers, &taken, job);
    // A contiguous job with required nodes only looks at the set holding
    // them, and fails when they lie in several (22.05 `_eval_nodes`,
    // cons_tres/job_test.c:747-750, 806-822).
    let contiguous_req = job.contiguous && job.required.is_some();
    while !st.done() && st.chosen.len() < max_nodes {
        // When one node is left to choose, only a node that alone has the
        // CPUs still needed is taken (see below); a set without one would
        // be chosen, take nothing and be dropped, one set per pass.
        // Without per-job GRES, leaving such sets out of the comparison
        // picks the same set in one pass: every set holding such a node is
        // sufficient, so a set without one never displaces it for being
        // bigger, and a set that displaces one of those for being lighter
        // or tighter is beaten only by sets lighter or tighter still.
        let last_pick = max_nodes - st.chosen.len() == 1;
        if contiguous_req && runs.iter().filter(|r| r.req.is_some()).nth(1).is_some() {
            break;
        }
        let mut best: Option<usize> = None;
        for (k, run) in runs.iter().enumerate() {
            if contiguous_req && run.req.is_none() {
                continue;
            }
            // (A set holding required nodes stays: its walk takes nodes
            // without that test. So does every set of a job with per-job
            // GRES: one short of them can be bigger than the best so far
            // and hand the choice to a later set, see below.)
            if last_pick
                && st.gres_job == 0
                && !job.contiguous
                && run.req.is_none()
                && (run.max_avail as i64) < st.rem_cpus
            {
                continue;
            }
            let sufficient = |r: &Run| {
                r.nodes as i64 >= st.needed_nodes()
                    && r.cpus as i64 >= st.rem_cpus
                    && st.gres_have + r.gres >= st.gres_job
            };
            let better = match best {
                None => true,
                Some(b) => {
                    let b = &runs[b];
                    let (suff, b_suff) = (sufficient(run), sufficient(b));
                    // 22.05 cons_tres/job_test.c:766-791: the first set
                    // holding required nodes or a lighter set; at equal
                    // weight the first sufficient, a tighter sufficient, or
                    // a bigger insufficient one (bigger than the best even
                    // when that is sufficient); a contiguous job also takes
                    // the first sufficient set over an insufficient best.
                    let equal_weight_better = run.weight == b.weight
                        && if suff {
                            !b_suff || run.cpus < b.cpus
                        } else {
                            run.cpus > b.cpus
                        };
                    (b.req.is_none() && run.req.is_some())
                        || run.weight < b.weight
                        || equal_weight_better
                        || (job.contiguous && !b_suff && suff)
                }
            };
            if better {
                best = Some(k);
            }
        }
        let Some(k) = best else {
            break;
        };
        let Run {
            start,
            end,
            nodes,
            cpus,
            req,
            ..
        } = runs[k];
        if job.contiguous
            && ((nodes as i64) < st.needed_nodes()
                || (cpus as i64) < st.rem_cpus
                || st.gres_have + runs[k].gres < st.gres_job)
        {
            // A contiguous job needs a sufficient set. As in 22.05
            // (cons_tres/job_test.c:832), a set holding only the needed
            // nodes of a range is sufficient, and the loop then goes on
            // to the optional nodes in the next sufficient set.
            break;
        }
        if let Some(r) = req {
            // Walk up from the first required node, then down (22.05
            // cons_tres/job_test.c:837-897); the set is used up.
            for p in (r..end).chain((start..r).rev()) {
                if st.done() || st.chosen.len() >= max_nodes {
                    break;
                }
                if !taken[p] {
                    taken[p] = true;
                    st.take(&offers[p]);
                }
            }
            runs.remove(k);
            continue;
        }
        // One node left: the tightest node of the set that alone fits.
        let mut only: Option<(usize, u32)> = None;
        if st.rem_nodes <= 1 {
            for (p, o) in offers.iter().enumerate().take(end).skip(start) {
                let a = o.avail_cpus;
                if (a as i64) < st.rem_cpus || st.gres_have + o.job_gres < st.gres_job {
                    continue;
                }
                if only.is_none_or(|(_, b)| a < b) {
                    only = Some((p, a));
                    if a as i64 == st.rem_cpus {
                        break;
                    }
                }
            }
        }
        for p in start..end {
            if st.done() || st.chosen.len() >= max_nodes {
                break;
            }
            if only.is_some_and(|(b, _)| b != p) {
                continue;
            }
            let o = &offers[p];
            if max_nodes - st.chosen.len() == 1 && (o.avail_cpus as i64) < st.rem_cpus {
                continue;
            }
            taken[p] = true;
            st.take(o);
        }
        // The set is used up, its untaken nodes too (22.05 clears it
        // after the walk, cons_tres/job_test.c:1001-1002).
        runs.remove(k);
    }
    st.chosen.sort_unstable();
    st.enough().then_some(st.chosen)
}

#[cfg(test)]
mod tests;
