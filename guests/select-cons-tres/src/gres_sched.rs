//! GRES in scheduling (spec 2.10): which devices a node can offer a job,
//! which sockets that forces, and the final device pick per node.

use slurm_wasm_sdk::types::GresScope;

use crate::bits::Bits;
use crate::node_usage::{is_shared, NodeRec, NodeUse};
use crate::request::{GresReq, JobView};

/// What one node can offer one GRES request.
#[derive(Clone, Debug, PartialEq)]
pub struct ReqPlan {
    /// Usable devices (indices into `NodeRec::devices`), index order.
    pub devices: Vec<usize>,
    /// Count this node must provide (0 for a per-job request: decided later).
    pub need: u64,
}

/// What a node can offer the job's GRES requests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePlan {
    pub reqs: Vec<ReqPlan>,
    /// Sockets the devices force (enforce-binding); empty = no constraint.
    pub req_sockets: Vec<usize>,
}

fn matches(req: &GresReq, rec: &NodeRec, dev: usize) -> bool {
    let d = &rec.devices[dev];
    d.name == req.name && (req.type_name.is_none() || req.type_name == d.type_name)
}

/// The devices of `req`'s name on the node in total (configured counts).
pub fn total(rec: &NodeRec, req: &GresReq) -> u64 {
    (0..rec.devices.len())
        .filter(|&i| matches(req, rec, i))
        .map(|i| rec.devices[i].capacity)
        .sum()
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

/// Whether the node's configured GRES could ever satisfy the job
/// (`_verify_node_state`'s GRES test).
pub fn node_could_satisfy(rec: &NodeRec, job: &JobView) -> bool {
    job.gres.iter().all(|g| {
        let need = per_node_need(g, job);
        if is_shared(&g.name) {
            rec.devices
                .iter()
                .enumerate()
                .any(|(i, d)| matches(g, rec, i) && d.capacity >= need)
        } else {
            total(rec, g) >= need
        }
    })
}

/// Is device `i` taken through its other face: a GPU with MPS shares in
/// use, or MPS shares of a GPU allocated whole (`gres/gpu` and `gres/mps`
/// devices of the same index are one physical GPU).
pub fn blocked(rec: &NodeRec, usage: &NodeUse, i: usize) -> bool {
    let d = &rec.devices[i];
    rec.devices.iter().enumerate().any(|(j, o)| {
        j != i
            && o.index == d.index
            && o.name != d.name
            && (is_shared(&o.name) || is_shared(&d.name))
            && usage.gres_used[j] > 0
    })
}

/// Builds the node's plan with `free` the node's available cores; under
/// enforce-binding removes the cores of sockets the devices do not need.
/// `None` when the node cannot serve the request.
pub fn node_filter(
    rec: &NodeRec,
    usage: &NodeUse,
    job: &JobView,
    free: &mut Bits,
    ignore_usage: bool,
) -> Option<NodePlan> {
    let mut plan = NodePlan::default();
    let mut req_sockets = vec![false; rec.sockets as usize];
    for g in &job.gres {
        let shared = is_shared(&g.name);
        let need_here = per_node_need(g, job);
        let free_of =
            |i: usize| rec.devices[i].capacity - if ignore_usage { 0 } else { usage.gres_used[i] };
        let mut devices: Vec<usize> = (0..rec.devices.len())
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
        if units > any {
            let cps = rec.cores_per_socket as usize;
            let mut per_sock = vec![0u64; rec.sockets as usize];
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
            let mut order: Vec<usize> = (0..rec.sockets as usize).collect();
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
        plan.reqs.push(ReqPlan {
            devices,
            need: if g.scope == GresScope::PerJob {
                0
            } else {
                need
            },
        });
    }
    plan.req_sockets = (0..rec.sockets as usize)
        .filter(|&s| req_sockets[s])
        .collect();
    if job.enforce_binding && !plan.req_sockets.is_empty() {
        let cps = rec.cores_per_socket as usize;
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
    Some(plan)
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
    if is_shared(&req.name) {
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
        take(plan.devices.clone(), u64::MAX, &mut chosen);
    }
    if (chosen.len() as u64) < count {
        return None;
    }
    chosen.sort_unstable();
    Some(chosen.into_iter().map(|i| (i, 1)).collect())
}
