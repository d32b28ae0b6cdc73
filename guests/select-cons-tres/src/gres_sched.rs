//! GRES in scheduling (spec 2.10): which devices a node can offer a job,
//! which sockets that forces, and the final device pick per node.

use slurm_wasm_sdk::types::GresScope;
use smallvec::SmallVec;

use crate::bits::Bits;
use crate::node_usage::{GresColumn, NodeRec, NodeUse};
use crate::request::{GresReq, JobView};

/// Device indices of one node, inline for the usual device counts.
pub type DeviceList = SmallVec<[usize; 8]>;

/// What one node can offer one GRES request.
#[derive(Clone, Debug, PartialEq)]
pub struct ReqPlan {
    /// Usable devices (indices into `NodeRec::devices`), index order.
    pub devices: DeviceList,
    /// Count this node must provide (0 for a per-job request: decided later).
    pub need: u64,
}

/// What a node can offer the job's GRES requests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePlan {
    /// Per request, in request order; only built with `full` (see
    /// [`node_filter`]).
    pub reqs: Vec<ReqPlan>,
    /// Sockets the devices force (enforce-binding); empty = no constraint.
    pub req_sockets: Vec<usize>,
    /// Devices the node could give the per-job requests (the fewest over
    /// them; 0 without any).
    pub job_gres: u64,
    /// Most tasks the node's usable devices allow for the per-task
    /// requests (`gres_select_util_get_task_limit`: usable count divided by
    /// the per-task count, smallest over the requests); `None` without
    /// per-task requests.
    pub task_limit: Option<u32>,
    /// Usable whole GPUs near the node's free cores (bound to no socket, or
    /// to a socket with a free core), capped by a per-node or per-job
    /// count, at most 255 (`near_gpus` of `gres_select_filter_remove_unusable`).
    /// Lowers the node's scheduling weight (see `eval_nodes`).
    pub near_gpus: u8,
    /// Usable GPUs of the job's GPU requests, uncapped but at most 65,535
    /// (`avail_gpus` of `gres_select_filter_remove_unusable`, 16 bits wide):
    /// counted with the node's CPUs when `choose_nodes` drops small nodes
    /// (see `eval_nodes`).
    pub gpus: u16,
}

fn matches(req: &GresReq, rec: &NodeRec, dev: usize) -> bool {
    let d = &rec.devices[dev];
    d.name_id == req.name_id && req.type_id.is_none_or(|t| d.type_id == Some(t))
}

/// Count a node must hold for `req` (per-job requests: at least 1).
pub fn per_node_need(req: &GresReq, job: &JobView) -> u64 {
    match req.scope {
        GresScope::PerNode => req.count,
        GresScope::PerSocket => req.count * job.sockets_per_node.max(1) as u64,
        GresScope::PerTask => req.count * job.tasks_per_node_needed() as u64,
        GresScope::PerJob => 1,
    }
}

/// Whether node `i`'s configured GRES could ever satisfy the job
/// (`_verify_node_state`'s GRES test): `reqs` holds, per request, its
/// column, the count a node needs and whether it is shared (whose count
/// must come from one device).
pub fn node_could_satisfy(reqs: &[(Option<GresColumn<'_>>, u64, bool)], i: usize) -> bool {
    reqs.iter().all(|(col, need, shared)| match col {
        None => !shared && *need == 0,
        Some(c) if *shared => c.largest_plus_one[i] > *need,
        Some(c) => c.total[i] >= *need,
    })
}

/// Is device `i` taken through its other face: a GPU with MPS shares in
/// use, or MPS shares of a GPU allocated whole (`gres/gpu` and `gres/mps`
/// devices of the same index are one physical GPU).
pub fn blocked(rec: &NodeRec, usage: &NodeUse, i: usize) -> bool {
    rec.devices[i]
        .twins
        .iter()
        .any(|&j| usage.gres_used[j as usize] > 0)
}

/// Builds the node's plan with `free` the node's available cores; under
/// enforce-binding removes the cores of sockets the devices do not need.
/// `None` when the node cannot serve the request. Without `full`, only
/// the counts node selection needs are filled: no device lists, and
/// without enforce-binding no `req_sockets` either (the sockets only order
/// the core walk, which changes which cores are kept but not how many).
pub fn node_filter(
    rec: &NodeRec,
    usage: &NodeUse,
    job: &JobView,
    free: &mut Bits,
    ignore_usage: bool,
    full: bool,
) -> Option<NodePlan> {
    let mut plan = NodePlan::default();
    let sockets = rec.sockets as usize;
    let cps = rec.cores_per_socket as usize;
    let mut req_sockets: SmallVec<[bool; 8]> = SmallVec::from_elem(false, sockets);
    let socket_free: SmallVec<[bool; 8]> = (0..sockets)
        .map(|s| free.count_range(s * cps, (s + 1) * cps) > 0)
        .collect();
    let mut near_gpus = 0u64;
    let mut gpus = 0u64;
    let mut job_gres = None;
    // The cores a per-node GRES request keeps on the first pass, when the
    // request narrows them (see `per_node_first_pass`).
    let mut first_pass: Option<Bits> = None;
    for g in &job.gres {
        let shared = g.shared;
        let need_here = per_node_need(g, job);
        let free_of =
            |i: usize| rec.devices[i].capacity - if ignore_usage { 0 } else { usage.gres_used[i] };
        let mut devices: DeviceList = (0..rec.devices.len())
            .filter(|&i| matches(g, rec, i))
            .filter(|&i| ignore_usage || !blocked(rec, usage, i))
            .filter(|&i| {
                if shared {
                    free_of(i) >= need_here
                } else {
                    free_of(i) > 0
                }
            })
            .filter(|&i| {
                !job.enforce_binding
                    || rec.devices[i]
                        .cores
                        .as_ref()
                        .is_none_or(|c| c.intersects(free))
            })
            .collect();
        if g.scope == GresScope::PerNode && !shared && !job.enforce_binding {
            // Nothing can go when the job needs every free core (a
            // whole-node job): tested here, so such jobs pay no call.
            let min_cores = min_cores(rec, job);
            if first_pass.as_ref().unwrap_or(free).count() > min_cores {
                per_node_first_pass(rec, free, &devices, need_here, min_cores, &mut first_pass);
            }
        }
        if g.scope == GresScope::PerTask && g.count > 0 {
            let usable: u64 = devices.iter().map(|&i| free_of(i)).sum();
            let limit = u32::try_from(usable / g.count).unwrap_or(u32::MAX);
            plan.task_limit = Some(plan.task_limit.map_or(limit, |l| l.min(limit)));
        }
        if g.gpu {
            gpus += devices.iter().map(|&i| free_of(i)).sum::<u64>();
            let near = devices
                .iter()
                .filter(|&&i| {
                    let socks = &rec.devices[i].sockets;
                    socks.is_empty()
                        || socks
                            .iter()
                            .any(|&s| socket_free.get(s as usize).copied().unwrap_or(false))
                })
                .count() as u64;
            let cap = match g.scope {
                GresScope::PerNode | GresScope::PerJob => g.count,
                _ => u64::MAX,
            };
            near_gpus += near.min(cap);
        }
        let need = if g.scope == GresScope::PerJob {
            g.count.min(devices.len() as u64).max(1)
        } else {
            need_here
        };
        if shared {
            // Shares come from one device per node (spec 2.10).
            devices.truncate(1);
            if devices.is_empty() {
                return None;
            }
        } else if (devices.len() as u64) < need {
            return None;
        }
        if g.cpus_per_gres > 0 && !shared {
            let cpus = free.count() as u64 * rec.tpc as u64;
            if cpus < g.cpus_per_gres as u64 * need {
                return None;
            }
        }
        // Sockets the devices need (spec 2.10): devices bound to every
        // socket count for any; the others count for the sockets of their
        // `Cores=` that still have free cores. The cores are walked on these
        // sockets first; enforce-binding also removes the other sockets.
        let any = devices
            .iter()
            .filter(|&&i| rec.devices[i].sockets.is_empty())
            .count() as u64;
        let units = if shared { 1 } else { need };
        if units > any && (full || job.enforce_binding) {
            let mut per_sock: SmallVec<[u64; 8]> = SmallVec::from_elem(0, sockets);
            for &i in &devices {
                for &s in &rec.devices[i].sockets {
                    let s = s as usize;
                    if free.count_range(s * cps, (s + 1) * cps) > 0 {
                        per_sock[s] += 1;
                    }
                }
            }
            // Most devices first, then most free cores, then socket order.
            let free_in = |s: usize| free.count_range(s * cps, (s + 1) * cps);
            let mut order: SmallVec<[usize; 8]> = (0..sockets).collect();
            order.sort_by(|a, b| {
                per_sock[*b]
                    .cmp(&per_sock[*a])
                    .then(free_in(*b).cmp(&free_in(*a)))
                    .then(a.cmp(b))
            });
            let mut have = any;
            for s in order {
                if have >= units {
                    break;
                }
                if per_sock[s] > 0 {
                    req_sockets[s] = true;
                    have += per_sock[s];
                }
            }
            if have < units && job.enforce_binding {
                return None;
            }
        }
        if g.scope == GresScope::PerJob {
            let n = devices.len() as u64;
            job_gres = Some(job_gres.map_or(n, |j: u64| j.min(n)));
        }
        if !full {
            continue;
        }
        plan.reqs.push(ReqPlan {
            devices,
            need: if g.scope == GresScope::PerJob {
                0
            } else {
                need
            },
        });
    }
    plan.near_gpus = near_gpus.min(0xff) as u8;
    plan.gpus = gpus.min(u16::MAX as u64) as u16;
    plan.job_gres = job_gres.unwrap_or(0);
    plan.req_sockets = (0..sockets).filter(|&s| req_sockets[s]).collect();
    if job.enforce_binding && !plan.req_sockets.is_empty() {
        for (s, keep) in req_sockets.iter().enumerate() {
            if !keep {
                for c in s * cps..(s + 1) * cps {
                    free.clear(c);
                }
            }
        }
        if !free.any() {
            return None;
        }
    }
    if let Some(limit) = plan.task_limit {
        trim_to_task_limit(rec, job, free, limit);
    } else if let Some(kept) = first_pass {
        *free = kept;
        trim_to_task_limit(rec, job, free, u32::MAX);
    }
    Some(plan)
}

/// A per-node request's first pass (22.05's `gres_select_filter_sock_core`
/// with `first_pass`, without enforce-binding): the sockets are walked
/// from the one with the most free cores (socket order on ties); a socket
/// holding none of the request's free devices gives up its highest cores
/// while the node keeps more than the job's minimum; the sockets walked
/// until their devices cover `need` are required, and the cores of the
/// others are dropped. Applies to `first_pass` (the cores kept so far, from
/// `free` on the first request), unless what is left is fewer than
/// `min_cores`: Slurm would then fail this pass and try again without it,
/// which is approximated here node by node. Devices bound to no socket
/// count on every socket and leave the cores alone.
#[inline(never)]
fn per_node_first_pass(
    rec: &NodeRec,
    free: &Bits,
    devices: &[usize],
    need: u64,
    min_cores: usize,
    first_pass: &mut Option<Bits>,
) {
    if devices.iter().any(|&i| rec.devices[i].sockets.is_empty()) {
        return;
    }
    let cores_now = first_pass.as_ref().unwrap_or(free).count();
    let mut kept = first_pass.clone().unwrap_or_else(|| free.clone());
    let cps = rec.cores_per_socket as usize;
    let sockets = rec.sockets as usize;
    let in_socket = |b: &Bits, s: usize| b.count_range(s * cps, (s + 1) * cps);
    let mut order: SmallVec<[usize; 8]> = (0..sockets).collect();
    order.sort_by_key(|&s| std::cmp::Reverse(in_socket(&kept, s)));
    let mut total = cores_now;
    let mut have = 0;
    let mut required: SmallVec<[bool; 8]> = SmallVec::from_elem(false, sockets);
    for s in order {
        let here = devices
            .iter()
            .filter(|&&i| rec.devices[i].sockets.contains(&(s as u16)))
            .count() as u64;
        if here == 0 {
            for c in (s * cps..(s + 1) * cps).rev() {
                if total <= min_cores {
                    break;
                }
                if kept.get(c) {
                    kept.clear(c);
                    total -= 1;
                }
            }
        }
        if in_socket(&kept, s) == 0 {
            continue;
        }
        if have < need {
            required[s] = true;
        }
        have += here;
    }
    for (s, _) in required.iter().enumerate().filter(|(_, r)| !**r) {
        for c in s * cps..(s + 1) * cps {
            kept.clear(c);
        }
    }
    if kept.count() >= min_cores {
        *first_pass = Some(kept);
    }
}

/// The cores the job's fewest tasks on node `rec` need
/// (`min_core_cnt` of `gres_select_filter_sock_core`).
fn min_cores(rec: &NodeRec, job: &JobView) -> usize {
    let (min_tasks, _) = task_range(rec, job);
    (min_tasks.max(1) * job.cpt.max(1)).div_ceil((rec.tpc as u32).max(1)) as usize
}

/// The tasks a node may run for the job (`min_tasks_this_node`,
/// `max_tasks_this_node`): from `--ntasks-per-node`, `-socket`, `-core`, a
/// one-node job's `-n`, one task for a one-task job or one task per node,
/// else 1 to unbounded.
fn task_range(rec: &NodeRec, job: &JobView) -> (u32, u32) {
    if job.ntasks_per_node > 0 {
        (job.ntasks_per_node, job.ntasks_per_node)
    } else if job.ntasks_per_socket > 0 {
        (
            job.ntasks_per_socket,
            job.ntasks_per_socket * rec.sockets as u32,
        )
    } else if job.ntasks_per_core > 0 {
        (job.ntasks_per_core, job.ntasks_per_core * rec.cores as u32)
    } else if job.max_nodes == 1 && job.num_tasks > 0 {
        (job.num_tasks, job.num_tasks)
    } else if job.num_tasks == 1
        || (job.num_tasks == job.min_nodes && job.num_tasks == job.max_nodes)
    {
        (1, 1)
    } else {
        (1, u32::MAX)
    }
}

/// With a per-task GRES request the node offers only the cores its tasks
/// need (22.05's `gres_select_filter_sock_core` on the first pass). The
/// node's task range comes from `--ntasks-per-node`, `-socket`, `-core`,
/// a one-node job's `-n`, else 1 to unbounded; the maximum is cut to the
/// free CPUs / cpus-per-task and to `limit` (usable GRES / per-task
/// count). Those tasks' CPUs, and the CPUs `--cpus-per-gpu` asks for their
/// devices (per task, node or socket), rounded up to whole cores, are kept: while more cores are
/// free, the highest free core of the socket with the most free cores (the
/// first such socket on ties) is dropped, so the kept cores spread over the
/// sockets. Anchor job a29 (`-N2 -n4 --gpus-per-task=1` on idle 2×2-core
/// nodes): Slurm kept core 2, CPUs 4-5. Per-node requests are trimmed
/// the same way after [`per_node_first_pass`] (anchor job a11, `-n1
/// --gres=gpu:1` on an idle node: core 0, beside GPU 0).
fn trim_to_task_limit(rec: &NodeRec, job: &JobView, free: &mut Bits, limit: u32) {
    let cps = rec.cores_per_socket as usize;
    let tpc = if job.threads_per_core > 0 {
        (rec.tpc as u32).min(job.threads_per_core)
    } else {
        rec.tpc as u32
    }
    .max(1);
    let cpt = job.cpt.max(1);
    let cores_of = |cpus: u32| cpus.div_ceil(tpc) as usize;
    let mut have = free.count();
    let (min_tasks, max_tasks) = task_range(rec, job);
    let fit = have as u32 * tpc / cpt;
    if fit < min_tasks {
        return;
    }
    let mut tasks = max_tasks.min(fit).min(limit);
    while tasks > min_tasks && cores_of(tasks * cpt) > have {
        tasks -= 1;
    }
    // The CPUs `--cpus-per-gpu` (or DefCpuPerGPU) asks for the node's
    // devices: per task, per node or per socket (`req_cpus` from
    // `cpus_per_gres`, gres_select_filter.c:776-806).
    let gres_cpus = job
        .gres
        .iter()
        .filter(|g| g.cpus_per_gres > 0)
        .map(|g| {
            let count = match g.scope {
                GresScope::PerTask => g.count as u32 * tasks,
                GresScope::PerNode => g.count as u32,
                GresScope::PerSocket => g.count as u32 * rec.sockets as u32,
                GresScope::PerJob => 0,
            };
            count * g.cpus_per_gres
        })
        .max()
        .unwrap_or(0);
    let want = cores_of(tasks * cpt).max(cores_of(gres_cpus)).max(1);
    while have > want {
        let Some(s) = (0..rec.sockets as usize).fold(None, |best: Option<usize>, s| {
            let n = free.count_range(s * cps, (s + 1) * cps);
            match best {
                Some(b) if free.count_range(b * cps, (b + 1) * cps) >= n => Some(b),
                _ if n > 0 => Some(s),
                _ => best,
            }
        }) else {
            break;
        };
        let Some(c) = (s * cps..(s + 1) * cps).rev().find(|&c| free.get(c)) else {
            break;
        };
        free.clear(c);
        have -= 1;
    }
}

/// One request's devices picked on one node: `(device, amount)` pairs.
pub type Pick = Vec<(usize, u64)>;

/// Picks `count` of request `req` on the node (`select_and_set`, per node):
/// spread across sockets in proportion to the allocated cores, then devices
/// usable from any socket, then more from allocated sockets, then (without
/// enforce-binding) other sockets; index order inside a socket, re-sorted by
/// accumulated `Links=` counts when the node has them.
pub fn pick(
    rec: &NodeRec,
    plan: &ReqPlan,
    req: &GresReq,
    count: u64,
    cores: &Bits,
    enforce_binding: bool,
) -> Option<Pick> {
    if req.shared {
        let dev = *plan.devices.first()?;
        return Some(vec![(dev, count)]);
    }
    let sockets = rec.sockets as usize;
    let cps = rec.cores_per_socket as usize;
    let per_sock: Vec<usize> = (0..sockets)
        .map(|s| cores.count_range(s * cps, (s + 1) * cps))
        .collect();
    let total_cores: usize = per_sock.iter().sum::<usize>().max(1);
    let mut chosen: Vec<usize> = Vec::new();
    let on_socket = |i: usize, s: usize| rec.devices[i].sockets.contains(&(s as u16));
    let take = |cands: Vec<usize>, limit: u64, chosen: &mut Vec<usize>| {
        let mut cands: Vec<usize> = cands.into_iter().filter(|i| !chosen.contains(i)).collect();
        let mut taken = 0;
        while taken < limit && (chosen.len() as u64) < count && !cands.is_empty() {
            if !chosen.is_empty() && !rec.devices[cands[0]].links.is_empty() {
                let link_sum = |i: &usize| -> i64 {
                    chosen
                        .iter()
                        .map(|&c| {
                            let idx = rec.devices[c].index as usize;
                            rec.devices[*i].links.get(idx).copied().unwrap_or(0) as i64
                        })
                        .sum()
                };
                // Spec 2.10: the sums are sorted ascending (a quirk kept on purpose).
                cands.sort_by_key(|i| (link_sum(i), *i));
            }
            chosen.push(cands.remove(0));
            taken += 1;
        }
    };
    for (s, n) in per_sock.iter().enumerate() {
        let share = count * *n as u64 / total_cores as u64;
        let cands = plan
            .devices
            .iter()
            .copied()
            .filter(|&i| on_socket(i, s))
            .collect();
        take(cands, share, &mut chosen);
    }
    let any = plan
        .devices
        .iter()
        .copied()
        .filter(|&i| rec.devices[i].sockets.is_empty())
        .collect();
    take(any, u64::MAX, &mut chosen);
    for (s, n) in per_sock.iter().enumerate() {
        if *n > 0 {
            let cands = plan
                .devices
                .iter()
                .copied()
                .filter(|&i| on_socket(i, s))
                .collect();
            take(cands, u64::MAX, &mut chosen);
        }
    }
    if !enforce_binding {
        take(plan.devices.to_vec(), u64::MAX, &mut chosen);
    }
    if (chosen.len() as u64) < count {
        return None;
    }
    chosen.sort_unstable();
    Some(chosen.into_iter().map(|i| (i, 1)).collect())
}
