//! `dist_tasks`: tasks per node and which cores of each node are kept
//! (cons_common/dist_tasks.c).

use smallvec::SmallVec;

use crate::node_usage::NodeRec;
use crate::params::{Params, Unit};
use crate::request::{JobView, SockDist};
use slurm_wasm_sdk::Bitmap;

/// One chosen node before trimming.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeShare {
    pub node: usize,
    /// CPUs given by `eval_nodes`; rewritten to the final count.
    pub cpus: u32,
    /// Cores the node offered; trimmed to the kept ones.
    pub cores: Bitmap,
    /// Under CR_Socket, the cores a socket the job uses may grow to (see
    /// `whole_sockets`): the node's free cores before the GRES filter and
    /// its specialised cores; empty otherwise.
    pub socket_fill: Bitmap,
    pub cpus_per_core: u32,
    /// Sockets GRES require (cyclic walks only those).
    pub req_sockets: Vec<usize>,
    /// Most tasks the node's GRES allow (`--gpus-per-task` and the like);
    /// the first task of a node ignores it, as in Slurm.
    pub task_limit: Option<u32>,
    pub tasks: u32,
}

impl NodeShare {
    /// Whether the node's GRES task limit lets one more task in
    /// (`dist_tasks_tres_tasks_avail`).
    fn gres_room(&self) -> bool {
        self.task_limit.is_none_or(|l| self.tasks < l)
    }
}

/// Why task distribution failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DistError {
    /// Fewer tasks fit than requested (`ESLURM_BAD_TASK_COUNT`).
    BadTaskCount { wanted: u32, placed: u32 },
}

/// The tasks 22.05's task distribution deals (`maxtasks`,
/// cons_tres/dist_tasks.c:137-149, cons_common/dist_tasks.c:253-262): the
/// job's CPU count `ncpus` (`job_res->ncpus`, which holds the GRES CPU
/// minimum, cons_common/job_test.c:1400-1425), divided by `-c` when that is
/// above 1 (`--ntasks-per-node` x nodes then, if given), not `-n`: a
/// `--cpus-per-gpu` minimum above `-n` spreads like more tasks. Fuzzed
/// CR_Socket_Memory probe `-N2-4 -n6 --gpus=4 --cpus-per-gpu=4`: 16 "tasks"
/// fill n1 and n2 (4 sockets, 16 CPUs), not 6 (3 sockets, 12).
pub fn task_count(job: &JobView, nhosts: u32, ncpus: u32) -> u32 {
    let cpt = job.cpt.max(1);
    let tasks = if job.node_dist_plane && !job.whole_node {
        // `_compute_plane_dist` (cons_common/dist_tasks.c:390-394).
        ncpus / cpt
    } else if cpt > 1 && !job.overcommit {
        if job.ntasks_per_node > 0 {
            job.ntasks_per_node * nhosts
        } else {
            ncpus / cpt
        }
    } else {
        ncpus
    };
    tasks.max(1)
}

/// Distributes tasks and trims cores on every node of `shares`.
pub fn dist_tasks(
    recs: &[NodeRec],
    shares: &mut [NodeShare],
    job: &JobView,
    params: &Params,
    ncpus: u32,
) -> Result<(), DistError> {
    if shares.is_empty() {
        return Ok(());
    }
    let maxtasks = task_count(job, shares.len() as u32, ncpus);
    let cpt = job.cpt;
    if job.whole_node {
        // Keep every core; count tasks only (`dist_tasks` with an exclusive
        // or whole-node job runs `_set_task_dist` alone).
        let plane = if job.node_dist_plane {
            job.plane_size
        } else {
            1
        };
        let mut placed = 0;
        for s in shares.iter_mut() {
            s.tasks = 0;
        }
        let mut progress = true;
        let mut first = true;
        while placed < maxtasks && progress {
            progress = false;
            for s in shares.iter_mut() {
                if placed >= maxtasks {
                    break;
                }
                let step = if first { 1 } else { (s.tasks % plane).max(1) };
                for _ in 0..step {
                    if placed < maxtasks && ((s.tasks + 1) * cpt <= s.cpus || job.overcommit) {
                        s.tasks += 1;
                        placed += 1;
                        progress = true;
                    }
                }
            }
            first = false;
            if job.overcommit && placed < maxtasks && !progress {
                break;
            }
        }
        if placed < maxtasks {
            return Err(DistError::BadTaskCount {
                wanted: maxtasks,
                placed,
            });
        }
        return Ok(());
    }
    if job.node_dist_plane {
        let p = job.plane_size;
        let mut avail: Vec<u32> = shares.iter().map(|s| s.cpus).collect();
        let mut used = vec![0u32; shares.len()];
        let mut placed = 0;
        let mut progress = true;
        // Once a round finds a node whose GRES limit is reached, the limit
        // is no longer applied (Slurm's `test_tres_tasks` switch).
        let mut test_gres = true;
        while placed < maxtasks && progress {
            progress = false;
            for (i, s) in shares.iter_mut().enumerate() {
                if test_gres && !s.gres_room() {
                    test_gres = false;
                    continue;
                }
                let mut k = 0;
                while k < p && placed < maxtasks && avail[i] >= cpt && (!test_gres || s.gres_room())
                {
                    avail[i] -= cpt;
                    used[i] += cpt;
                    s.tasks += 1;
                    placed += 1;
                    k += 1;
                    progress = true;
                }
            }
        }
        if placed < maxtasks {
            return Err(DistError::BadTaskCount {
                wanted: maxtasks,
                placed,
            });
        }
        for (i, s) in shares.iter_mut().enumerate() {
            s.cpus = used[i];
        }
    } else {
        cyclic_block_counts(recs, shares, job, maxtasks)?;
    }
    for s in shares.iter_mut() {
        trim_cores(&recs[s.node], s, job, params);
    }
    Ok(())
}

/// Pass 1: one task per node; pass 2: leftover threads of touched cores;
/// pass 3: round-robin `max(tpc / cpt, 1)` tasks per node per round.
fn cyclic_block_counts(
    recs: &[NodeRec],
    shares: &mut [NodeShare],
    job: &JobView,
    maxtasks: u32,
) -> Result<(), DistError> {
    let cpt = job.cpt;
    let limit = |s: &NodeShare| job.ntasks_per_node == 0 || s.tasks < job.ntasks_per_node;
    let mut placed = 0;
    // Pass 1 gives every node with a free CPU a task, CPUs or not for all
    // of it (its CPUs stay capped at the node's).
    for s in shares.iter_mut() {
        if placed < maxtasks && (s.cpus > 0 || job.overcommit) {
            s.tasks = 1;
            placed += 1;
        }
    }
    for s in shares.iter_mut() {
        let tpc = recs[s.node].tpc as u32;
        let used = s.tasks * cpt;
        let spare = (tpc - used % tpc) % tpc;
        let mut extra = spare / cpt;
        while extra > 0
            && placed < maxtasks
            && s.gres_room()
            && limit(s)
            && (s.tasks + 1) * cpt <= s.cpus
        {
            s.tasks += 1;
            placed += 1;
            extra -= 1;
        }
    }
    // Pass 3, round-robin: each round gives every node up to its step
    // while it has room (GRES task limit, --ntasks-per-node, CPUs unless
    // overcommitting), until the tasks are placed. Computed in closed
    // form: the number of whole rounds by bisection, then one partial
    // round in node order (a big job placed round by round cost a pass
    // over its nodes per task per node).
    // Steps are at most a node's threads and round counts at most the
    // task count, both below 2^32: their products fit a u64 unchecked (a
    // checked 64-bit multiply is a 128-bit library call in wasm32).
    let step = |s: &NodeShare| (recs[s.node].tpc as u32 / cpt).max(1) as u64;
    let room = |s: &NodeShare| -> u64 {
        let mut cap = u64::MAX;
        if let Some(l) = s.task_limit {
            cap = cap.min(l as u64);
        }
        if job.ntasks_per_node > 0 {
            cap = cap.min(job.ntasks_per_node as u64);
        }
        if !job.overcommit {
            cap = cap.min((s.cpus / cpt) as u64);
        }
        cap.saturating_sub(s.tasks as u64)
    };
    let remaining = (maxtasks - placed) as u64;
    let per_node: Vec<(u64, u64)> = shares.iter().map(|s| (room(s), step(s))).collect();
    let gain = |r: u64| -> u64 {
        per_node
            .iter()
            .map(|&(room, step)| room.min(step * r))
            .fold(0, u64::saturating_add)
    };
    // Whole rounds: the most that place no more than what remains (past
    // the rounds that fill every node, more change nothing).
    let full = per_node
        .iter()
        .map(|&(room, step)| room.div_ceil(step))
        .max()
        .unwrap_or(0);
    let (mut lo, mut hi) = (0u64, remaining.min(full));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if gain(mid) <= remaining {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut left = remaining;
    for (s, &(room, step)) in shares.iter_mut().zip(&per_node) {
        let g = room.min(step * lo);
        s.tasks += g as u32;
        left -= g;
    }
    for (s, &(room, step)) in shares.iter_mut().zip(&per_node) {
        if left == 0 {
            break;
        }
        let g = room.saturating_sub(room.min(step * lo)).min(step).min(left);
        s.tasks += g as u32;
        left -= g;
    }
    // No room is left anywhere: 22.05's relief valve (`over_subscribe`)
    // deals the rest round by round, a node's step at a time, whatever
    // their CPUs (a node's CPUs stay capped at what it has). Fuzzed
    // streams f479 (`-n3 -c4`, CR_Core_Memory) and f24 (`-n3 -c3`,
    // CR_CPU_Memory): Slurm started three tasks on 10 and 7 CPUs.
    if left > 0 {
        let per_round: u64 = per_node.iter().map(|&(_, step)| step).sum();
        let rounds = left / per_round;
        for (s, &(_, step)) in shares.iter_mut().zip(&per_node) {
            s.tasks += (step * rounds) as u32;
        }
        left -= per_round * rounds;
        for (s, &(_, step)) in shares.iter_mut().zip(&per_node) {
            let g = step.min(left);
            s.tasks += g as u32;
            left -= g;
        }
    }
    for s in shares.iter_mut() {
        if !job.overcommit {
            // GRES CPU minimums (`--cpus-per-gpu`) raise pn_min_cpus above tasks × cpt.
            s.cpus = s.cpus.min((s.tasks * cpt).max(job.pn_min_cpus));
        }
    }
    Ok(())
}

/// CR_Socket: a socket the job uses is the job's whole. Slurm's block walk
/// marks every core of it (`_block_sync_core_bind`, dist_tasks.c:797-833),
/// the cyclic walk every core after the last one it picked (`_cyclic_sync`,
/// dist_tasks.c:1126-1143), whether the job could use it or not: cores the
/// GRES filter left out, and specialised cores, which count in the job's
/// CPUs (real Slurm 22.05.8, CR_Socket_Memory with CoreSpecCount=1: `-n3`
/// given the free core 2 of socket 1 held CPU_IDs 4-7; `-n1 --gres=gpu:1`
/// held the whole socket beside GPU 0). `fill` are the cores that may be
/// added; cores of other jobs are not among them, which Slurm's walks
/// would give a second time (possible only where another partition's job
/// shares the socket).
fn whole_sockets(rec: &NodeRec, kept: &mut Bitmap, fill: &Bitmap, block: bool) {
    let cps = rec.cores_per_socket as usize;
    for s in 0..rec.sockets as usize {
        let cores = s * cps..(s + 1) * cps;
        let Some(last) = cores.clone().rev().find(|&c| kept.get(c)) else {
            continue;
        };
        for c in cores {
            if fill.get(c) && (block || c > last) {
                kept.set(c);
            }
        }
    }
}

/// Keeps the cores needed for `share.cpus` CPUs (block or cyclic over
/// sockets) and sets `cpus` to the kept cores' CPUs for CR_Core/CR_Socket.
fn trim_cores(rec: &NodeRec, share: &mut NodeShare, job: &JobView, params: &Params) {
    let v = share.cpus_per_core.max(1);
    let cps = rec.cores_per_socket as usize;
    let sockets = rec.sockets as usize;
    let ntpc = crate::allocate_sc::effective_ntasks_per_core(job, params);
    let mut need = if ntpc == 1 && job.cpt > v {
        (share.tasks * job.cpt.div_ceil(v)) as usize
    } else {
        share.cpus.div_ceil(v) as usize
    };
    let block = params.unit == Unit::Cpu || job.sock_dist == SockDist::Block;
    if need >= share.cores.count() && (block || job.ntasks_per_socket == 0) {
        // Every offered core is needed and no per-socket cap applies: both
        // walks below keep them all.
        if params.unit == Unit::Socket {
            whole_sockets(rec, &mut share.cores, &share.socket_fill, block);
        }
        if params.unit != Unit::Cpu {
            share.cpus = share.cores.count() as u32 * rec.tpc as u32;
        }
        return;
    }
    // The offered cores per socket, flat and inline (socket `s` holds
    // `flat[start[s]..start[s + 1]]`): this runs for every node of every
    // allocation, and nodes given only `CPUs=` have one socket per CPU.
    let mut flat: SmallVec<[usize; 64]> = SmallVec::new();
    let mut start: SmallVec<[usize; 64]> = SmallVec::with_capacity(sockets + 1);
    for s in 0..sockets {
        start.push(flat.len());
        flat.extend((s * cps..(s + 1) * cps).filter(|&c| share.cores.get(c)));
    }
    start.push(flat.len());
    let avail = |s: usize| &flat[start[s]..start[s + 1]];
    need = need.min(flat.len());
    let mut kept = Bitmap::new(rec.cores as usize);
    if block {
        // The sockets GRES require are filled first: on its first pass
        // Slurm 22.05 drops the free cores of sockets without usable GRES
        // before the block fit (anchor job a14 under CR_CPU_Memory,
        // `--gres=mps:50` with GPU 0 taken: CPUs 4-5 beside GPU 1).
        let preferred = |s: usize| share.req_sockets.is_empty() || share.req_sockets.contains(&s);
        let mut used: SmallVec<[bool; 64]> = SmallVec::from_elem(false, sockets);
        let mut left = need;
        while left > 0 {
            let open = |s: usize, pref: bool| !used[s] && (!pref || preferred(s));
            let pick = |pref: bool| {
                let tight = (0..sockets)
                    .filter(|&s| open(s, pref) && avail(s).len() >= left)
                    .min_by_key(|&s| (avail(s).len(), s));
                tight.or_else(|| {
                    (0..sockets)
                        .filter(|&s| open(s, pref) && !avail(s).is_empty())
                        .max_by_key(|&s| (avail(s).len(), std::cmp::Reverse(s)))
                })
            };
            let s = match pick(true).or_else(|| pick(false)) {
                Some(s) => s,
                None => break,
            };
            used[s] = true;
            for &c in avail(s).iter().take(left) {
                kept.set(c);
                left -= 1;
            }
        }
    } else {
        let mut next: SmallVec<[usize; 64]> = SmallVec::from_elem(0, sockets);
        let mut left = need;
        let order: SmallVec<[usize; 64]> = if share.req_sockets.is_empty() {
            (0..sockets).collect()
        } else {
            share.req_sockets.iter().copied().collect()
        };
        let sock_cap = if job.ntasks_per_socket > 0 {
            (job.ntasks_per_socket * job.cpt).div_ceil(v) as usize
        } else {
            usize::MAX
        };
        if job.cpt > 1 && job.ntasks_per_socket == 0 {
            // 22.05 `_cyclic_sync_core_bitmap` (cons_common/dist_tasks.c),
            // "pack all CPUs of each task on one socket": each socket in
            // turn gives cores while it has CPUs for whole tasks left
            // (its free CPUs less their remainder by -c), before the next
            // socket gives any; the cyclic walk below places the rest.
            // (Fuzzed anchor stream f13, `-n4 -c2` on an idle node: CPUs
            // 0-3, both tasks on socket 0, not one task per socket; f360,
            // `-c4 --gres=gpu:2` with a GPU on each socket: CPUs 0-3 too.
            // Only enforce-binding's core trim, before this, leaves a
            // socket each, gres_sched.rs `trim_to_task_limit`.)
            let cpt = job.cpt as usize;
            let (v, one_task_per_core) = (v as usize, ntpc == 1 && job.cpt > share.cpus_per_core);
            // With one task per core and tasks wider than a core, the
            // last core of a task counts only the task's CPUs left.
            let mut task_left = cpt;
            for &s in &order {
                let free = avail(s).len() * v;
                let mut cpus = free - free % cpt;
                while next[s] < avail(s).len() && cpus > 0 && left > 0 {
                    kept.set(avail(s)[next[s]]);
                    next[s] += 1;
                    left -= 1;
                    let used = if one_task_per_core {
                        let used = task_left.min(v);
                        task_left = if task_left <= used {
                            cpt
                        } else {
                            task_left - used
                        };
                        used
                    } else {
                        v
                    };
                    cpus = if cpus < v {
                        0
                    } else {
                        cpus.saturating_sub(used)
                    };
                }
            }
        }
        let mut progress = true;
        while left > 0 && progress {
            progress = false;
            for &s in &order {
                if left > 0 && next[s] < avail(s).len() && next[s] < sock_cap {
                    kept.set(avail(s)[next[s]]);
                    next[s] += 1;
                    left -= 1;
                    progress = true;
                }
            }
        }
        if left > 0 && !share.req_sockets.is_empty() {
            for (s, from) in next.iter().enumerate() {
                for &c in &avail(s)[*from..] {
                    if left > 0 {
                        kept.set(c);
                        left -= 1;
                    }
                }
            }
        }
    }
    if params.unit == Unit::Socket {
        whole_sockets(rec, &mut kept, &share.socket_fill, block);
    }
    share.cores = kept;
    if params.unit != Unit::Cpu {
        share.cpus = share.cores.count() as u32 * rec.tpc as u32;
    }
}

#[cfg(test)]
mod tests;
