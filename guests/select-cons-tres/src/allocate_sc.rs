//! `_allocate_sc`: which cores of one node a job may use and how many CPUs
//! that gives (cons_common/cons_common.c).

use smallvec::SmallVec;

use crate::node_usage::NodeRec;
use crate::params::{Params, Unit};
use crate::request::JobView;
use crate::rows::Row;
use slurm_wasm_sdk::Bitmap;

/// What `_allocate_sc` knows of the job's own partition on a node: its
/// `MaxCPUsPerNode` and, where Slurm has one, its `part_core_map` (the
/// cores its rows hold).
#[derive(Clone, Copy, Default)]
pub struct OwnPartition<'a> {
    /// `MaxCPUsPerNode`.
    pub max_cpus: Option<u32>,
    /// The partition's rows where Slurm passes a `part_core_map`: not in
    /// TEST_ONLY or the first "can it ever run" test, and not before a job
    /// of the partition entered a row ([`crate::rows::PartRows::has_map`];
    /// cons_common/job_test.c:922-1049).
    pub rows: Option<&'a [Row]>,
}

impl OwnPartition<'_> {
    /// Slurm's `used_cores` of each socket of `rec`, with `free` the cores
    /// the job may use (cons_common.c:357-392): with a `part_core_map`, the
    /// cores the partition's rows hold that are not free; without one,
    /// every core not free, specialised cores and other partitions' cores
    /// included.
    pub fn used_cores(&self, rec: &NodeRec, free: &FreeCores<'_>) -> SmallVec<[u32; 64]> {
        let cps = rec.cores_per_socket as usize;
        let sockets = rec.sockets as usize;
        if rec.cores <= 64 {
            // The node's cores in one word: a mask and a popcount per socket.
            let all = low_bits(rec.cores as usize);
            let mut taken = !free.bits.bits64(free.off) & all;
            if let Some(rows) = self.rows {
                taken &= rows
                    .iter()
                    .fold(0, |held, row| held | row.cores.bits64(rec.core_off));
            }
            return (0..sockets)
                .map(|s| ((taken >> (s * cps)) & low_bits(cps)).count_ones())
                .collect();
        }
        (0..sockets)
            .map(|s| {
                (s * cps..(s + 1) * cps)
                    .filter(|&c| {
                        !free.get(c)
                            && self.rows.is_none_or(|rows| {
                                rows.iter().any(|row| row.cores.get(rec.core_off + c))
                            })
                    })
                    .count() as u32
            })
            .collect()
    }

    /// `used_cpu_count` of `_allocate_sc`: the CPUs `MaxCPUsPerNode` counts
    /// as taken, from `used` (see [`Self::used_cores`]) of the node's free
    /// cores `seen`: only with a `part_core_map`, the partition's cores,
    /// and under CR_Socket the free cores of each socket where it holds
    /// some.
    fn used_cpus(&self, rec: &NodeRec, seen: &FreeCores<'_>, used: &[u32], unit: Unit) -> u32 {
        if self.rows.is_none() {
            return 0;
        }
        let cps = rec.cores_per_socket as usize;
        let mut cores: u32 = used.iter().sum();
        if unit == Unit::Socket {
            cores += used
                .iter()
                .enumerate()
                .filter(|(_, own)| **own > 0)
                .map(|(s, _)| seen.count(s * cps, (s + 1) * cps) as u32)
                .sum::<u32>();
        }
        cores * rec.tpc as u32
    }
}

/// The lowest `n` bits of a word.
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// One node's offer to a job.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketAlloc {
    /// CPUs the job may use on the node.
    pub avail_cpus: u32,
    /// Kept cores (node-local core bitmap).
    pub cores: Bitmap,
    /// CPUs per core the job uses (`cpus_per_core` of `_allocate_sc`).
    pub cpus_per_core: u32,
}

/// CPUs per core for the job on `rec` (`cpus_per_core` in `_allocate_sc`).
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

/// Whether the job's unit on `rec` is more than one CPU, as 22.05's
/// `_allocate_sc` refuses a node the partition's `MaxCPUsPerNode` leaves
/// one CPU (cons_common.c:413-424): `--ntasks-per-core` or
/// `--ntasks-per-socket` above 1, CPUs per core above 1 where
/// `--ntasks-per-core` or `--threads-per-core` sets them, or
/// `--cpus-per-task` above 1.
fn needs_more_than_one_cpu(rec: &NodeRec, job: &JobView, params: &Params) -> bool {
    let ntpc = effective_ntasks_per_core(job, params);
    let mut per_core = None;
    if ntpc > 0 {
        per_core = Some((rec.tpc as u32).min(ntpc * job.cpt));
    }
    if job.threads_per_core > 0 {
        per_core = Some(per_core.map_or(job.threads_per_core, |v| v.min(job.threads_per_core)));
    }
    ntpc > 1 || job.ntasks_per_socket > 1 || per_core.is_some_and(|v| v > 1) || job.cpt > 1
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
    pub bits: &'a Bitmap,
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
/// use (under CR_Socket without the used sockets, which the caller rules
/// out), `seen` the node's free cores before the GRES filter took some,
/// `used` their [`OwnPartition::used_cores`] where the unit is CR_Socket or
/// a `MaxCPUsPerNode` applies (else empty), `req_sockets` the sockets GRES
/// require (walked first),
/// `own` what Slurm knows of the job's partition there. With `want_cores`
/// false only the CPU counts are computed (`cores` is left empty), which is
/// all node selection needs. `None` = the node cannot run the job.
#[allow(clippy::too_many_arguments)]
pub fn allocate_sc(
    rec: &NodeRec,
    free: FreeCores<'_>,
    seen: FreeCores<'_>,
    used: &[u32],
    want_cores: bool,
    job: &JobView,
    params: &Params,
    req_sockets: &[usize],
    own: OwnPartition<'_>,
) -> Option<SocketAlloc> {
    let sockets = rec.sockets as usize;
    let cps = rec.cores_per_socket as usize;
    let tpc = rec.tpc as u32;
    // Per-socket free cores are needed to pick cores and for socket-level
    // rules; otherwise the node's totals give the same counts.
    let per_socket = want_cores
        || params.unit == Unit::Socket
        || job.cores_per_socket > 0
        || job.ntasks_per_socket > 0
        || job.sockets_per_node > 0;
    // Inline for the usual socket counts (a node given only `CPUs=` has one
    // socket per CPU).
    let mut free_sock: SmallVec<[u32; 64]> = SmallVec::new();
    let (free_cores, free_for_cap) = if per_socket {
        free_sock.resize(sockets, 0);
        if rec.cores <= 64 {
            // The node's cores in one word: a mask and a popcount per socket.
            let word = free.bits.bits64(free.off) & low_bits(rec.cores as usize);
            for (s, f) in free_sock.iter_mut().enumerate() {
                *f = ((word >> (s * cps)) & low_bits(cps)).count_ones();
            }
        } else {
            for (s, f) in free_sock.iter_mut().enumerate() {
                *f = free.count(s * cps, (s + 1) * cps) as u32;
            }
        }
        let free_for_cap: u32 = free_sock.iter().sum();
        for f in free_sock.iter_mut() {
            if job.cores_per_socket > 0 && *f < job.cores_per_socket {
                *f = 0;
            }
        }
        let usable_sockets = free_sock.iter().filter(|f| **f > 0).count() as u32;
        if usable_sockets < job.sockets_per_node {
            return None;
        }
        (free_sock.iter().sum(), free_for_cap)
    } else {
        let free_total = if rec.cores <= 64 {
            (free.bits.bits64(free.off) & low_bits(rec.cores as usize)).count_ones()
        } else {
            free.count(0, rec.cores as usize) as u32
        };
        (free_total, free_total)
    };
    let mut cap = u32::MAX;
    if let Some(max) = own.max_cpus {
        let used_cpus = own.used_cpus(rec, &seen, used, params.unit);
        let free_cpus = free_for_cap * tpc;
        if free_cpus + used_cpus > max {
            if job.whole_node || used_cpus >= max {
                return None;
            }
            cap = max - used_cpus;
            if cap == 1 && needs_more_than_one_cpu(rec, job, params) {
                return None;
            }
        }
    }
    if free_cores == 0 {
        return None;
    }
    let gres_min = job.gres_cpus_per_node() > 0;
    let v = cpus_per_core(rec, job, params, gres_min);
    if free_cores * v < job.pn_min_cpus {
        return None;
    }
    let mut avail: u32 = free_cores * v;
    let mut num_tasks: u32 = if job.ntasks_per_socket > 0 {
        free_sock
            .iter()
            .map(|f| (f * v).min(job.ntasks_per_socket))
            .sum()
    } else {
        avail
    };
    if job.ntasks_per_node > 0 && job.share_res && !gres_min {
        num_tasks = num_tasks.min(job.ntasks_per_node);
    }
    let cpt = job.cpt;
    let ntpc = effective_ntasks_per_core(job, params);
    if cpt < 2 {
        avail = num_tasks;
    } else if ntpc == 1 && cpt > v {
        // One task per core with tasks wider than a core: 22.05 keeps
        // every free core here too (see below), and counts each task's
        // last core for the CPUs the task has left (`_count_used_cpus`,
        // cons_common.c:175-199; see `split_task_cpus`). Anchor, under
        // CR_ONE_TASK_PER_CORE: `-n1 -c4 --mem=600` beside a job on core 0
        // got CPU_IDs 4-7, and `-n2 -c3` on an idle node CPU_IDs 0-7.
    } else {
        // 22.05's `_allocate_sc` (cons_common.c:499-561) keeps every free
        // core here, whatever `-c`: the cut to whole tasks is left to task
        // distribution, which puts each task on a socket with room for it
        // (see `dist_tasks::trim_cores`). Later Slurm cuts the CPUs to
        // whole tasks at this step, which keeps the lowest free cores
        // instead: on the anchor, `-n1 -c4 --mem=600` on a node whose
        // core 0 was busy got CPU_IDs 4-7 (socket 1's two cores), not
        // 2-5. The fewest CPUs the node must give (`-c`, `--ntasks-per-node`)
        // are checked by the caller.
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
    // Every free core keeps `v` CPUs when the CPUs cover them all and no
    // socket rule (CR_Socket, --cores-per-socket, --ntasks-per-socket)
    // trims a socket's budget below its free cores: the walk would keep
    // each free core, so take them at once (a big job takes whole nodes by
    // the hundred).
    let keeps_all = avail >= free_cores * v
        && params.unit != Unit::Socket
        && job.cores_per_socket == 0
        && job.ntasks_per_socket == 0;
    let mut kept = Bitmap::new(0);
    let kept_cpus = if want_cores && keeps_all {
        kept = free.bits.extract(free.off, rec.cores as usize);
        free_cores * v
    } else if want_cores {
        let walk = Walk {
            free,
            free_sock: &free_sock,
            req_sockets,
            cps,
            sock_cap,
            v,
        };
        let (cores, taken) = walk.keep(rec.cores as usize, avail);
        kept = cores;
        taken
    } else {
        // The walk, counted: a socket keeps at most its budget and its
        // cap's worth of cores, `v` CPUs each, until the CPUs run out (the
        // last core taking what is left), so the total is the smaller of
        // the CPUs and the sum of the sockets' shares, in any order.
        // Without socket rules every socket's share is its free cores.
        let shares: u32 = if per_socket {
            let per_sock_cores = sock_cap.div_ceil(v);
            free_sock.iter().map(|&b| b.min(per_sock_cores) * v).sum()
        } else {
            free_cores * v
        };
        avail.min(shares)
    };
    // A walk keeps `v` CPUs a core here (`avail` is every free core's);
    // one task per core with tasks wider than a core counts fewer.
    let kept_cpus = if ntpc == 1 && cpt > v && !(params.one_task_per_core && gres_min) {
        split_task_cpus(kept_cpus / v, cpt, v)
    } else {
        kept_cpus
    };
    let avail_cpus = kept_cpus.min(cap);
    if avail_cpus < job.pn_min_cpus {
        return None;
    }
    Some(SocketAlloc {
        avail_cpus,
        cores: kept,
        cpus_per_core: v,
    })
}

/// The CPUs 22.05 counts for `cores` kept cores when each task of `cpt`
/// CPUs takes whole cores of `v` CPUs, one task per core
/// (`_count_used_cpus` with `ntasks_per_core == 1` and `cpus_per_task >
/// threads_per_core`): a task's cores count `v` each but its last, which
/// counts what the task has left. `-c3` on 2-CPU cores: 2, 1, 2, 1, ...
fn split_task_cpus(cores: u32, cpt: u32, v: u32) -> u32 {
    let per_task = cpt.div_ceil(v);
    (cores / per_task) * cpt + (cores % per_task) * v
}

/// Step 5 of `_allocate_sc` for the cores themselves: sockets the GRES
/// require first, then the others in order, each keeping up to its budget
/// of free cores and its CPU cap, `v` CPUs a core, until the CPUs run out.
struct Walk<'a> {
    free: FreeCores<'a>,
    /// Each socket's budget of cores.
    free_sock: &'a [u32],
    req_sockets: &'a [usize],
    cps: usize,
    sock_cap: u32,
    v: u32,
}

impl Walk<'_> {
    /// The kept cores of a node of `cores` cores and the CPUs they give,
    /// at most `cpus`. Out of line: only chosen nodes pick cores, and in
    /// wasm the walk's loop state inlined into [`allocate_sc`] costs every
    /// counted offer register spills (BENCHMARKS.md, session 14).
    #[inline(never)]
    fn keep(&self, cores: usize, cpus: u32) -> (Bitmap, u32) {
        let mut kept = Bitmap::new(cores);
        let sockets = self.free_sock.len();
        let order = self
            .req_sockets
            .iter()
            .copied()
            .chain((0..sockets).filter(|s| !self.req_sockets.contains(s)));
        let (mut left, mut taken) = (cpus, 0);
        for s in order {
            let mut budget = self.free_sock[s];
            let mut sock_cpus = 0;
            for c in s * self.cps..(s + 1) * self.cps {
                if !self.free.get(c) {
                    continue;
                }
                if budget > 0 && left > 0 && sock_cpus < self.sock_cap {
                    kept.set(c);
                    let take = self.v.min(left);
                    left -= take;
                    taken += take;
                    sock_cpus += self.v;
                    budget -= 1;
                }
            }
        }
        (kept, taken)
    }
}

#[cfg(test)]
mod tests;
