//! `_allocate_sc`: which cores of one node a job may use and how many CPUs
//! that gives (spec 2.4, "Core choice within a node").

use crate::bits::Bits;
use crate::node_usage::NodeRec;
use crate::params::{Params, Unit};
use crate::request::JobView;

/// One node's offer to a job.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketAlloc {
    /// CPUs the job may use on the node.
    pub avail_cpus: u32,
    /// Free cores × threads.
    pub max_cpus: u32,
    /// Kept cores (node-local core bitmap).
    pub cores: Bits,
    /// CPUs per core the job uses (`v` of the spec).
    pub cpus_per_core: u32,
}

/// CPUs per core for the job on `rec` (spec 2.4 step 4).
pub fn cpus_per_core(rec: &NodeRec, job: &JobView, params: &Params, gres_min_cpus: bool) -> u32 {
    let tpc = rec.tpc as u32;
    let ntpc = effective_ntasks_per_core(job, params);
    if params.one_task_per_core && gres_min_cpus {
        return tpc;
    }
    let mut v = tpc;
    if ntpc > 0 {
        v = v.min(ntpc * job.cpt);
    }
    if job.threads_per_core > 0 {
        v = v.min(job.threads_per_core);
    }
    v.max(1)
}

/// `--ntasks-per-core`, or 1 under `CR_ONE_TASK_PER_CORE` when not given.
pub fn effective_ntasks_per_core(job: &JobView, params: &Params) -> u32 {
    if job.ntasks_per_core == 0 && params.one_task_per_core {
        1
    } else {
        job.ntasks_per_core
    }
}

/// The cores a job may use on one node: bits `off..off + cores` of `bits`
/// (the cluster-wide map with `off` = the node's first core, or a
/// node-local map with `off` = 0).
#[derive(Clone, Copy)]
pub struct FreeCores<'a> {
    pub bits: &'a Bits,
    pub off: usize,
}

impl FreeCores<'_> {
    fn get(&self, core: usize) -> bool {
        self.bits.get(self.off + core)
    }
    fn count(&self, lo: usize, hi: usize) -> usize {
        self.bits.count_range(self.off + lo, self.off + hi)
    }
}

/// Chooses the node's cores for the job. `free` holds the cores the job may
/// use, `req_sockets` the sockets GRES require (walked first),
/// `max_cpus_per_node` the partition's `MaxCPUsPerNode`. With `want_cores`
/// false only the CPU counts are computed (`cores` is left empty), which is
/// all node selection needs. `None` = the node cannot run the job.
#[allow(clippy::too_many_arguments)]
pub fn allocate_sc(
    rec: &NodeRec,
    free: FreeCores,
    want_cores: bool,
    job: &JobView,
    params: &Params,
    req_sockets: &[usize],
    max_cpus_per_node: Option<u32>,
) -> Option<SocketAlloc> {
    let sockets = rec.sockets as usize;
    let cps = rec.cores_per_socket as usize;
    let tpc = rec.tpc as u32;
    // Per-socket free cores, on the stack for the usual socket counts.
    let mut stack = [0u32; 16];
    let mut heap = Vec::new();
    let free_sock: &mut [u32] = if sockets <= stack.len() {
        &mut stack[..sockets]
    } else {
        heap.resize(sockets, 0);
        &mut heap
    };
    for (s, f) in free_sock.iter_mut().enumerate() {
        *f = free.count(s * cps, (s + 1) * cps) as u32;
    }
    let mut used_cpus = 0u32;
    for (s, free_s) in free_sock.iter_mut().enumerate() {
        let spec = if rec.spec_count == 0 {
            0
        } else {
            rec.spec_cores.count_range(s * cps, (s + 1) * cps) as u32
        };
        let used = (cps as u32).saturating_sub(*free_s + spec);
        used_cpus += used * tpc;
        // CR_Socket: a socket partly used by another job is unusable.
        if params.unit == Unit::Socket && used > 0 {
            *free_s = 0;
        }
    }
    let mut cap = u32::MAX;
    if let Some(limit) = max_cpus_per_node {
        let free_cpus: u32 = free_sock.iter().sum::<u32>() * tpc;
        if free_cpus + used_cpus > limit {
            if job.whole_node || used_cpus >= limit {
                return None;
            }
            cap = limit - used_cpus;
        }
    }
    for f in free_sock.iter_mut() {
        if job.cores_per_socket > 0 && *f < job.cores_per_socket {
            *f = 0;
        }
    }
    let usable_sockets = free_sock.iter().filter(|f| **f > 0).count() as u32;
    if usable_sockets < job.sockets_per_node {
        return None;
    }
    let free_cores: u32 = free_sock.iter().sum();
    if free_cores == 0 {
        return None;
    }
    let gres_min = job.gres_cpus_per_node() > 0;
    let v = cpus_per_core(rec, job, params, gres_min);
    if free_cores * v < job.pn_min_cpus {
        return None;
    }
    let mut avail: u32 = free_sock.iter().map(|f| f * v).sum();
    let mut num_tasks: u32 = free_sock
        .iter()
        .map(|f| {
            if job.ntasks_per_socket > 0 {
                (f * v).min(job.ntasks_per_socket)
            } else {
                f * v
            }
        })
        .sum();
    if job.ntasks_per_node > 0 && job.share_res && !gres_min {
        num_tasks = num_tasks.min(job.ntasks_per_node);
    }
    let cpt = job.cpt;
    let ntpc = effective_ntasks_per_core(job, params);
    if cpt < 2 {
        avail = num_tasks;
    } else if ntpc == 1 && cpt > v {
        let per_task = cpt.div_ceil(v) * v;
        num_tasks = avail / per_task;
        avail = num_tasks * cpt;
    } else {
        num_tasks = num_tasks.min(avail / cpt);
        avail = num_tasks * cpt;
    }
    if (job.ntasks_per_node > 0 && num_tasks < job.ntasks_per_node && !job.overcommit)
        || avail < job.pn_min_cpus
    {
        return None;
    }
    // Step 5: keep cores, GRES sockets first, socket budgets and caps.
    let sock_cap = if job.ntasks_per_socket > 0 {
        job.ntasks_per_socket * cpt
    } else {
        cps as u32 * tpc
    };
    let order = req_sockets
        .iter()
        .copied()
        .chain((0..sockets).filter(|s| !req_sockets.contains(s)));
    let mut left = avail;
    let mut kept = Bits::new(if want_cores { rec.cores as usize } else { 0 });
    let mut kept_cpus = 0;
    for s in order {
        let budget = free_sock[s];
        if !want_cores {
            // The walk below, counted: each kept core takes `v` CPUs (the
            // last one what is left) until the budget, the CPUs or the
            // socket cap run out.
            let k = budget.min(left.div_ceil(v)).min(sock_cap.div_ceil(v));
            let take = (k * v).min(left);
            left -= take;
            kept_cpus += take;
            continue;
        }
        let mut budget = budget;
        let mut sock_cpus = 0;
        for c in s * cps..(s + 1) * cps {
            if !free.get(c) {
                continue;
            }
            if budget > 0 && left > 0 && sock_cpus < sock_cap {
                kept.set(c);
                let take = v.min(left);
                left -= take;
                kept_cpus += take;
                sock_cpus += v;
                budget -= 1;
            }
        }
    }
    let avail_cpus = kept_cpus.min(cap);
    if avail_cpus < job.pn_min_cpus {
        return None;
    }
    Some(SocketAlloc {
        avail_cpus,
        max_cpus: free_cores * tpc,
        cores: kept,
        cpus_per_core: v,
    })
}
