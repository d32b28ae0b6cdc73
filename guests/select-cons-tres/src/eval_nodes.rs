//! `eval_nodes`: choosing the nodes (spec 2.6): one-node fast path, least
//! loaded node (CR_LLN) and consecutive best fit with weights.
//!
//! Inside the chosen set nodes are taken from its start; only when one node
//! is left to choose (and the job names no required nodes) is the single
//! tightest node of the set that alone fits taken instead, as Slurm 22.05.8
//! does. The anchor runs show both: `-N1-2 -n6` under CR_CPU_Memory (two
//! nodes to choose) takes two partly used nodes before an idle one that
//! alone would fit, while `-n2 --mem-per-cpu=1000` (job a30, one node)
//! goes to the busy n3 whose 2 usable CPUs fit exactly, not to idle n1.

use slurm_wasm_sdk::types::GresScope;

use crate::can_run::NodeAvail;
use crate::node_usage::NodeRec;
use crate::params::{Params, Unit};
use crate::request::JobView;

/// Node counts of the request (`min_nodes`, `req_nodes`, `max_nodes`).
#[derive(Clone, Copy, Debug)]
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
    rem_max_cpus: i64,
    gres_job: u64,
    gres_have: u64,
    chosen: Vec<(usize, u32)>,
}

impl State<'_> {
    /// `cpus_to_use`: clip a node's CPUs so later nodes keep their share.
    /// Each node still to come keeps one core's worth of the job's CPUs per
    /// core (`cpus_per_core`; e.g. 2 on a 2-thread node without
    /// `--ntasks-per-core`, as in 22.05's `common_cpus_per_core`), a whole
    /// socket's worth under CR_Socket.
    fn cpus_to_use(&self, node: usize, avail: u32, cpus_per_core: u32) -> u32 {
        if self.job.whole_node {
            return avail;
        }
        let mut unit = cpus_per_core.max(1) as i64;
        if self.params.unit == Unit::Socket {
            unit *= self.recs[node].cores_per_socket as i64;
        }
        let reserve = (self.rem_nodes - 1).max(0) * unit;
        let limit = self.rem_max_cpus - reserve;
        if avail as i64 > limit {
            limit.max(self.job.pn_min_cpus as i64).max(0) as u32
        } else {
            avail
        }
    }

    fn take(&mut self, node: usize, offer: &NodeAvail) {
        let cpus = self.cpus_to_use(node, offer.alloc.avail_cpus, offer.alloc.cpus_per_core);
        self.rem_cpus -= cpus as i64;
        self.rem_max_cpus -= cpus as i64;
        self.rem_nodes -= 1;
        self.gres_have += job_gres_devices(self.job, offer);
        self.chosen.push((node, cpus));
    }

    fn done(&self) -> bool {
        self.rem_nodes <= 0 && self.rem_cpus <= 0 && self.gres_have >= self.gres_job
    }
}

/// Devices a node could give a per-job GRES request.
fn job_gres_devices(job: &JobView, offer: &NodeAvail) -> u64 {
    job.gres
        .iter()
        .zip(&offer.gres.reqs)
        .filter(|(g, _)| g.scope == GresScope::PerJob)
        .map(|(_, p)| p.devices.len() as u64)
        .min()
        .unwrap_or(0)
}

/// A node's scheduling weight for this job: `Weight` shifted left by 8,
/// the low byte `0xff` less the GPUs near the node's free cores (22.05's
/// `can_job_run_on_node`), so that among nodes of equal `Weight` those with
/// more co-located GPUs come first and form their own consecutive sets
/// (anchor job a29, `-N2 -n4 --gpus-per-task=1`: Slurm took n1 and n4,
/// whose two GPUs sit beside free cores, over n2 and n3 with one each).
fn sched_weight(recs: &[NodeRec], offers: &[Option<NodeAvail>], i: usize) -> u64 {
    let near = offers[i].as_ref().map_or(0, |o| o.gres.near_gpus);
    ((recs[i].weight as u64) << 8) | (0xff - near as u64)
}

/// Chooses nodes among those with an offer. Returns `(node, cpus)` in node
/// order, or `None` when the job does not fit.
pub fn eval_nodes(
    job: &JobView,
    params: &Params,
    recs: &[NodeRec],
    offers: &[Option<NodeAvail>],
    counts: Counts,
) -> Option<Vec<(usize, u32)>> {
    let usable = |i: usize| offers[i].as_ref().is_some_and(|o| o.alloc.avail_cpus > 0);
    let n = offers.len();
    if let Some(req) = &job.required {
        if req.ones().any(|i| i >= n || !usable(i)) {
            return None;
        }
    }
    let mut min_nodes = counts.min;
    if job.ntasks_per_node > 0 && job.num_tasks > 0 {
        min_nodes = min_nodes.max(job.num_tasks.div_ceil(job.ntasks_per_node));
    }
    let total_usable = (0..n).filter(|&i| usable(i)).count() as u32;
    if total_usable < min_nodes || min_nodes > counts.max {
        return None;
    }
    let gres_job: u64 = job
        .gres
        .iter()
        .filter(|g| g.scope == GresScope::PerJob)
        .map(|g| g.count)
        .max()
        .unwrap_or(0);
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
        rem_max_cpus: if job.max_cpus > 0 {
            job.max_cpus
        } else {
            job.min_cpus
        } as i64,
        gres_job,
        gres_have: 0,
        chosen: Vec::new(),
    };
    let gres_cpu = job.gres_cpus_per_node() as i64;
    st.rem_max_cpus = st.rem_max_cpus.max(gres_cpu * st.rem_nodes);
    let max_nodes = counts.max.min(n as u32) as usize;
    let mut taken = vec![false; n];

    // Required nodes first.
    if let Some(req) = &job.required {
        for i in req.ones() {
            let offer = offers[i].as_ref()?;
            st.take(i, offer);
            taken[i] = true;
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

    // One-node fast path: lowest weight first, first that fits.
    if counts.max == 1 && job.required.is_none() && !params.lln {
        let mut order: Vec<usize> = (0..n).filter(|&i| usable(i)).collect();
        order.sort_by_key(|&i| sched_weight(recs, offers, i));
        for i in order {
            let offer = offers[i].as_ref()?;
            if offer.alloc.avail_cpus as i64 >= st.rem_cpus
                && job_gres_devices(job, offer) >= gres_job
            {
                st.take(i, offer);
                return Some(st.chosen);
            }
        }
        return None;
    }

    if params.lln {
        while !st.done() && st.chosen.len() < max_nodes {
            let mut best: Option<usize> = None;
            for i in (0..n).filter(|&i| usable(i) && !taken[i]) {
                let better = match best {
                    None => true,
                    Some(b) => {
                        let (wi, wb) =
                            (sched_weight(recs, offers, i), sched_weight(recs, offers, b));
                        let (fi, fb) = (
                            offers[i].as_ref()?.alloc.avail_cpus as u64,
                            offers[b].as_ref()?.alloc.avail_cpus as u64,
                        );
                        wi < wb
                            || (wi == wb && fi * recs[b].cpus() as u64 > fb * recs[i].cpus() as u64)
                    }
                };
                if better {
                    best = Some(i);
                }
            }
            let b = best?;
            taken[b] = true;
            st.take(b, offers[b].as_ref()?);
        }
        st.chosen.sort_unstable();
        return st.done().then_some(st.chosen);
    }

    // Consecutive best fit.
    while !st.done() && st.chosen.len() < max_nodes {
        // When one node is left to choose, only a node that alone has the
        // CPUs still needed is taken (see below); a set without one would
        // be chosen, found useless and marked, one set per pass. Leaving
        // such sets out of the comparison picks the same set in one pass
        // (the preference is a strict order), instead of a pass over every
        // node per useless set.
        let last_pick = max_nodes - st.chosen.len() == 1;
        // Build the sets of consecutive usable, untaken nodes.
        let mut best: Option<(usize, usize, u64, u64)> = None; // start, end, cpus, weight
        let mut i = 0;
        while i < n {
            if !usable(i) || taken[i] {
                i += 1;
                continue;
            }
            let start = i;
            let weight = sched_weight(recs, offers, i);
            let mut cpus = 0u64;
            let mut nodes = 0i64;
            let mut gres = 0u64;
            let mut fits_alone = false;
            while i < n
                && usable(i)
                && !taken[i]
                && (job.contiguous || sched_weight(recs, offers, i) == weight)
            {
                let o = offers[i].as_ref()?;
                cpus += o.alloc.avail_cpus as u64;
                gres += job_gres_devices(job, o);
                fits_alone |= o.alloc.avail_cpus as i64 >= st.rem_cpus;
                nodes += 1;
                i += 1;
            }
            let end = i;
            if last_pick && !job.contiguous && !fits_alone {
                continue;
            }
            let sufficient = nodes >= st.rem_nodes
                && cpus as i64 >= st.rem_cpus
                && st.gres_have + gres >= st.gres_job;
            let better = match best {
                None => true,
                Some((bs, be, bc, bw)) => {
                    let bnodes = (be - bs) as i64;
                    let b_suff = bnodes >= st.rem_nodes
                        && bc as i64 >= st.rem_cpus
                        && st.gres_has_room(bs, be, offers);
                    if job.contiguous {
                        !b_suff && sufficient
                    } else if weight != bw {
                        weight < bw
                    } else {
                        // First sufficient, tighter sufficient, or bigger insufficient.
                        if sufficient {
                            !b_suff || cpus < bc
                        } else {
                            !b_suff && cpus > bc
                        }
                    }
                }
            };
            if better {
                best = Some((start, end, cpus, weight));
            }
        }
        let (start, end, cpus, _) = best?;
        if job.contiguous
            && (((end - start) as i64) < st.rem_nodes
                || (cpus as i64) < st.rem_cpus
                || !st.gres_has_room(start, end, offers))
        {
            // A contiguous job needs one sufficient set.
            return None;
        }
        // One node left: the tightest node of the set that alone fits.
        let mut only: Option<(usize, u32)> = None;
        if job.required.is_none() && st.rem_nodes <= 1 {
            for (j, o) in offers.iter().enumerate().take(end).skip(start) {
                let Some(o) = o.as_ref() else {
                    continue;
                };
                let a = o.alloc.avail_cpus;
                if (a as i64) < st.rem_cpus || st.gres_have + job_gres_devices(job, o) < st.gres_job
                {
                    continue;
                }
                if only.is_none_or(|(_, b)| a < b) {
                    only = Some((j, a));
                    if a as i64 == st.rem_cpus {
                        break;
                    }
                }
            }
        }
        let before = st.chosen.len();
        for j in start..end {
            if st.done() || st.chosen.len() >= max_nodes {
                break;
            }
            if only.is_some_and(|(b, _)| b != j) {
                continue;
            }
            let o = offers[j].as_ref()?;
            if o.alloc.avail_cpus == 0 {
                continue;
            }
            if max_nodes - st.chosen.len() == 1 && (o.alloc.avail_cpus as i64) < st.rem_cpus {
                continue;
            }
            taken[j] = true;
            st.take(j, o);
        }
        if st.chosen.len() == before {
            // Nothing in the best set helps: mark it so the loop ends.
            for t in taken.iter_mut().take(end).skip(start) {
                *t = true;
            }
        }
    }
    st.chosen.sort_unstable();
    st.done().then_some(st.chosen)
}

impl State<'_> {
    fn gres_has_room(&self, start: usize, end: usize, offers: &[Option<NodeAvail>]) -> bool {
        let g: u64 = (start..end)
            .filter_map(|i| offers[i].as_ref())
            .map(|o| job_gres_devices(self.job, o))
            .sum();
        self.gres_have + g >= self.gres_job
    }
}
