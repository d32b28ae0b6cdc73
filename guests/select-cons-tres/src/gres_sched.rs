//! GRES in scheduling (cons_tres/gres_sched.c and
//! cons_common/gres_select_filter.c): which devices a node can offer a job,
//! which sockets that forces, and the final device pick per node.

use slurm_wasm_sdk::types::GresScope;
use smallvec::SmallVec;

use crate::allocate_sc::effective_ntasks_per_core;
use crate::dist_tasks::NodeShare;
use crate::node_usage::{GresColumn, NodeRec, NodeUse, Tables};
use crate::params::Params;
use crate::request::{GresReq, JobView};
use slurm_wasm_sdk::Bitmap;

/// Device indices of one node, inline for the usual device counts.
pub type DeviceList = SmallVec<[usize; 8]>;

/// Devices of one node with the units each offers a request.
type Units = SmallVec<[(usize, u64); 8]>;

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
    /// Most tasks the task distribution lets the node hold for its
    /// whole-device per-task requests: each one's usable devices, near free
    /// cores or not, within memory and CPUs per GRES, divided by its count,
    /// the smallest over them (`gres_select_util_get_task_limit`, which
    /// 22.05 hands to `dist_tasks`, where [`NodePlan::task_limit`] bounds
    /// the GRES trim's tasks). `None` without such requests.
    pub dist_task_limit: Option<u32>,
    /// Most tasks the node takes after the GRES trim, where something
    /// bounds them (`max_tasks_this_node` of
    /// `gres_select_filter_sock_core`); `None` when unbounded or untrimmed.
    pub max_tasks: Option<u32>,
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

/// The least of a request 22.05's `gres_select_filter_remove_unusable`
/// lets a node give (gres_select_filter.c:232-248): all its `total` usable
/// units for a whole-node job, else at least 1, the count per node, per
/// socket times `--sockets-per-node` and per task times
/// `--ntasks-per-node` (each factor only where given).
fn min_gres(req: &GresReq, job: &JobView, total: u64) -> u64 {
    if job.whole_node {
        return total;
    }
    let times = |n: u32| req.count * u64::from(n.max(1));
    match req.scope {
        GresScope::PerNode => req.count,
        GresScope::PerSocket => times(job.sockets_per_node),
        GresScope::PerTask => times(job.ntasks_per_node),
        GresScope::PerJob => 1,
    }
    .max(1)
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

/// Whether request `req` may only use the node's devices already serving
/// other jobs' shares: `mps` is a one-sharing GRES by default (gres.conf's
/// `one_sharing`, 22.05 common/gres.c:1392-1394, 1429-1430), and once any
/// of its shares on a node are allocated, `gres_use_busy_dev`
/// (common/gres.c:10132-10146) limits jobs to the devices with shares in
/// use (cons_tres/gres_sched.c:85-87 when offering,
/// gres_select_filter.c:1028-1030 and 1056-1058 when picking). Flags that
/// turn it off (`all_sharing`) are not part of the node records the
/// plugin sees; `shard` defaults to sharing all devices.
fn busy_devices_only(req: &GresReq, rec: &NodeRec, usage: &NodeUse, ignore_usage: bool) -> bool {
    req.shared
        && !ignore_usage
        && req.name == "mps"
        && (0..rec.devices.len())
            .any(|i| rec.devices[i].name_id == req.name_id && usage.gres_used[i] > 0)
}

/// Builds the node's plan with `free` the node's available cores; under
/// enforce-binding removes the cores of sockets the devices do not need.
/// `None` when the node cannot serve the request. Without `full`, only
/// the counts node selection needs are filled: no device lists, and
/// without enforce-binding or `before` no `req_sockets` either (the
/// sockets only order the core walk, which changes which cores are kept
/// but not how many). `before`, under CR_Socket, are the node's free
/// cores before the used sockets were ruled out of `free`: the sockets the
/// devices need are chosen on them, as `gres_sched_create_sock_gres_list`
/// runs before `_allocate_sc` in Slurm, and a needed socket that was ruled
/// out fails the node (cons_common.c:520-527).
/// `first` = 22.05's first pass (`choose_nodes` evaluates the nodes with
/// `first_pass` set, and again without it only when that fails,
/// cons_tres/job_test.c:3186-3202): per-node requests without
/// enforce-binding then keep only cores beside their devices, and a node
/// where those do not suffice is refused (see `per_node_first_pass`);
/// on the second pass the node keeps all its cores.
/// `gres_before` = the devices the nodes node selection counted before
/// this one give the job's per-job requests (22.05's `total_gres` when
/// `_select_cores` reaches the node: reset by `gres_sched_init` and raised
/// by `gres_sched_add`, cons_tres/gres_sched.c:518-610); 0 when none was.
///
/// Never inlined: LLVM otherwise inlines it into `can_job_run_on_node`,
/// whose wasm code then grew to 80 KB, and Cranelift spilled the loop
/// state of every job's node test around it, GRES or not (wasm 10-25%
/// slower, BENCHMARKS.md session 14).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub fn node_filter(
    rec: &NodeRec,
    usage: &NodeUse,
    job: &JobView,
    params: &Params,
    free: &mut Bitmap,
    before: Option<&Bitmap>,
    tables: Tables,
    full: bool,
    first: bool,
    task_cap: u32,
    gres_before: u64,
) -> Option<NodePlan> {
    let ignore_usage = tables == Tables::Totals;
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
    let mut first_pass: Option<Bitmap> = None;
    // On the second pass, the sockets per-node requests need (see
    // `second_pass_sockets`).
    let mut second_pass: Option<SmallVec<[bool; 8]>> = None;
    // On the first pass, each per-task request's usable devices and the
    // most the node may give it (see `first_pass_sockets`).
    let mut per_task_first: SmallVec<[(Units, u64); 1]> = SmallVec::new();
    for g in &job.gres {
        let shared = g.shared;
        // A whole-node job asks all of the node's units of a shared GRES
        // (its request becomes the node's whole count, gres_select_filter.c:
        // 234-235), and shares come from one device: a node with shares on
        // two devices can never give them (the exclusive-partition
        // recording's mps jobs all stayed pending).
        let need_here = if shared && job.whole_node {
            (0..rec.devices.len())
                .filter(|&i| matches(g, rec, i))
                .map(|i| rec.devices[i].capacity)
                .sum::<u64>()
                .max(per_node_need(g, job))
        } else {
            per_node_need(g, job)
        };
        let free_of =
            |i: usize| rec.devices[i].capacity - if ignore_usage { 0 } else { usage.gres_used[i] };
        let busy_only = busy_devices_only(g, rec, usage, ignore_usage);
        // Devices with something left for the job.
        let usable: DeviceList = (0..rec.devices.len())
            .filter(|&i| matches(g, rec, i))
            .filter(|&i| tables != Tables::Live || !blocked(rec, usage, i))
            .filter(|&i| !busy_only || usage.gres_used[i] > 0)
            .filter(|&i| free_of(i) > 0)
            .filter(|&i| {
                // With enforce-binding a device needs a free core on one of
                // its sockets (see `Device::home`).
                let d = &rec.devices[i];
                !job.enforce_binding
                    || d.sockets.is_empty() && d.cores.as_ref().is_none_or(|c| c.intersects(free))
                    || d.home(true, |s| socket_free[s]).is_some()
            })
            .collect();
        if !first && g.scope == GresScope::PerNode && !job.enforce_binding {
            let units: Units = usable
                .iter()
                .map(|&i| (i, if shared { free_of(i) } else { 1 }))
                .collect();
            let needed = second_pass_sockets(rec, free, &units, need_here);
            match &mut second_pass {
                Some(all) => all.iter_mut().zip(&needed).for_each(|(a, n)| *a |= *n),
                None => second_pass = Some(needed),
            }
        }
        if first && g.scope == GresScope::PerNode && !job.enforce_binding {
            // A device counts its shares for a shared request, else 1.
            let units: Units = usable
                .iter()
                .map(|&i| (i, if shared { free_of(i) } else { 1 }))
                .collect();
            let floor = FirstPassFloor {
                drop_to: min_cores(rec, job, params),
                keep: first_pass_cores(rec, job, params, g, need_here),
            };
            if !per_node_first_pass(rec, free, &units, need_here, floor, &mut first_pass) {
                return None;
            }
        }
        // A shared request's shares come from one device holding them all
        // (`max_node_gres`, the most shares one device has left,
        // cons_tres/gres_sched.c:130-138), except in TEST_ONLY: there
        // 22.05 leaves that limit unset so that a shared job is not
        // refused as never runnable (its bug 15283), and a node's shares
        // count over all its devices (the anchor's a27, `--gres=mps:200
        // -n1` on nodes of two 100-share GPUs: sbatch accepted it, and the
        // job pended on Resources for good).
        let one_device = shared && !ignore_usage;
        let mut devices: DeviceList = usable
            .into_iter()
            .filter(|&i| !one_device || free_of(i) >= need_here)
            .collect();
        if shared && !one_device && devices.iter().map(|&i| free_of(i)).sum::<u64>() < need_here {
            return None;
        }
        // A device counts where its socket has free cores, or it has none
        // (`gres_select_filter_sock_core` on the first pass,
        // gres_select_filter.c:600-606); its socket is its home
        // (`Device::home`).
        let home = |i: usize| rec.devices[i].home(job.enforce_binding, |s| socket_free[s]);
        let near_cores =
            |i: usize| rec.devices[i].sockets.is_empty() || home(i).is_some_and(|s| socket_free[s]);
        if g.scope == GresScope::PerTask && g.count > 0 {
            // Only devices beside free cores count on the first pass and
            // with enforce-binding; on the second pass every device does
            // (`gres_select_filter_sock_core`, gres_select_filter.c:
            // 638-641: a socket without free cores is skipped only then).
            let usable: u64 = devices
                .iter()
                .filter(|&&i| !(first || job.enforce_binding) || near_cores(i))
                .map(|&i| free_of(i))
                .sum();
            let limit = u32::try_from(usable / g.count).unwrap_or(u32::MAX);
            plan.task_limit = Some(plan.task_limit.map_or(limit, |l| l.min(limit)));
        }
        // With CR_Memory a node gives no more devices than its free memory
        // holds at the request's memory per device, and none when that is
        // less than one (gres_select_filter.c:272-285, 348-362).
        let by_memory = if params.memory && g.mem_per_gres > 0 && !shared {
            let free_memory = rec.free_memory(usage, ignore_usage);
            if g.mem_per_gres > free_memory {
                return None;
            }
            let most = free_memory / g.mem_per_gres;
            let total: u64 = devices.iter().map(|&i| free_of(i)).sum();
            if total.min(most) < min_gres(g, job, total) {
                return None;
            }
            Some(most)
        } else {
            None
        };
        if g.scope == GresScope::PerTask && !job.enforce_binding {
            // The node gives a per-task request at most the job's total
            // (`gres_per_job`, tasks x count, common/gres.c:5124-5126),
            // which `_set_max_node_gres` makes its `max_node_gres`, lowered
            // by its memory and `--cpus-per-gpu` (gres_select_filter.c:
            // 272-335); the sockets walked until their devices reach it are
            // the ones needed (:648-662). The anchor with
            // `MaxCPUsPerNode=4`: `-n1 --gpus-per-task=1` on an idle node
            // got core 0 and GPU 0, socket 1 being unneeded.
            let units: Units = devices.iter().map(|&i| (i, 1)).collect();
            let mut most = match job.num_tasks {
                0 => u64::MAX,
                n => g.count * u64::from(n),
            };
            most = most.min(by_memory.unwrap_or(u64::MAX));
            if g.cpus_per_gres > 0 {
                let cpus = free.count() as u64 * rec.tpc as u64;
                most = most.min(cpus / g.cpus_per_gres as u64);
            }
            if first {
                if !units
                    .iter()
                    .any(|&(i, _)| rec.devices[i].sockets.is_empty())
                {
                    per_task_first.push((units, most));
                }
            } else {
                let needed = second_pass_sockets(rec, free, &units, most);
                match &mut second_pass {
                    Some(all) => all.iter_mut().zip(&needed).for_each(|(a, n)| *a |= *n),
                    None => second_pass = Some(needed),
                }
            }
        }
        if g.gpu {
            let total: u64 = devices.iter().map(|&i| free_of(i)).sum();
            gpus += total.min(by_memory.unwrap_or(u64::MAX));
            let near = devices.iter().filter(|&&i| near_cores(i)).count() as u64;
            // Capped by `max_node_gres` (gres_select_filter.c:319-328,
            // 366-369): the per-node count, else the job's total, which for
            // a per-task request is tasks x count once the task count is
            // known (fuzzed anchor stream f466, `-n1 --gpus-per-task=1`:
            // a node with one free core beside one GPU weighs the same as
            // one with two, and the tighter took it).
            let cap = match g.scope {
                GresScope::PerNode | GresScope::PerJob => g.count,
                GresScope::PerTask if job.num_tasks > 0 => g.count * u64::from(job.num_tasks),
                _ => u64::MAX,
            };
            near_gpus += near.min(cap).min(by_memory.unwrap_or(u64::MAX));
        }
        let need = if g.scope == GresScope::PerJob {
            g.count.min(devices.len() as u64).max(1)
        } else {
            need_here
        };
        // Every device that could hold a shared request's shares, for the
        // final pick; the first stands for them in the socket counts below.
        let holders = if shared && full {
            devices.clone()
        } else {
            DeviceList::new()
        };
        if shared {
            // Shares come from one device per node (`_build_sock_gres_by_topo`,
            // cons_tres/gres_sched.c; `_pick_specific_topo`,
            // cons_common/gres_select_filter.c).
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
        // Sockets the devices need (`_build_sock_gres_by_topo`,
        // cons_tres/gres_sched.c): devices bound to every
        // socket count for any; the others count for the sockets of their
        // `Cores=` that still have free cores. The cores are walked on these
        // sockets first; enforce-binding also removes the other sockets.
        let any = devices
            .iter()
            .filter(|&&i| rec.devices[i].sockets.is_empty())
            .count() as u64;
        // A per-job request asks the node only for the devices the job
        // still lacks after the nodes counted before it (`rem_gres`, the
        // node's `max_gres` when below `max_node_gres`,
        // gres_select_filter.c:503-518), and for the whole count again once
        // they cover it (`rem_gres` 0). The links recording's e1, `-w n3,n4
        // -N2 -n2 --gpus=7`: n3 counted 6 GPUs, so n4 needed 1, socket 0
        // alone covered it, and n4 kept core 0 and got GPUs 0-2.
        let units = if shared {
            1
        } else if g.scope == GresScope::PerJob && gres_before > 0 && gres_before < g.count {
            (g.count - gres_before).min(need)
        } else {
            need
        };
        // The first pass of a per-job request drops the sockets its devices
        // do not need (`gres_select_filter_sock_core`, gres_select_filter.c:
        // 652-660, 697-713): their count then changes the node's CPUs, so
        // the counting pass needs them too. Fuzzed CR_CPU_Memory probes
        // `-n2 -c3 --gpus=1` (n[2-3]) and `-n2 -c2 --gpus=1` (n1).
        let first_per_job = first && g.scope == GresScope::PerJob && !job.enforce_binding;
        if units > any && (full || job.enforce_binding || before.is_some() || first_per_job) {
            let view: &Bitmap = before.unwrap_or(free);
            let free_in = |s: usize| view.count_range(s * cps, (s + 1) * cps);
            let mut per_sock: SmallVec<[u64; 8]> = SmallVec::from_elem(0, sockets);
            for &i in &devices {
                let home = rec.devices[i].home(job.enforce_binding, |s| free_in(s) > 0);
                if let Some(s) = home.filter(|&s| free_in(s) > 0) {
                    per_sock[s] += 1;
                }
            }
            // Most devices first, then most free cores, then socket order.
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
            if before.is_some()
                && (0..sockets)
                    .any(|s| req_sockets[s] && free.count_range(s * cps, (s + 1) * cps) == 0)
            {
                return None;
            }
        }
        // A whole-device per-task request's devices count towards its job
        // total (see `eval_nodes::per_job_gres`) as `gres_sched_add` counts
        // them (cons_tres/gres_sched.c:574-610): the node's `total_cnt`,
        // every usable device whether or not its socket has free cores,
        // within its memory (gres_select_filter.c:350-354) and its CPUs per
        // GRES. The same count bounds the node's tasks in the task
        // distribution (`gres_select_util_get_task_limit`,
        // gres_select_util.c:402-421, handed to `dist_tasks` at
        // cons_common/job_test.c:1550).
        let per_task_total = (g.scope == GresScope::PerTask && !shared && g.count > 0).then(|| {
            let mut n = (devices.len() as u64).min(by_memory.unwrap_or(u64::MAX));
            if g.cpus_per_gres > 0 {
                n = n.min(free.count() as u64 * rec.tpc as u64 / g.cpus_per_gres as u64);
            }
            n
        });
        if let Some(n) = per_task_total {
            let limit = u32::try_from(n / g.count).unwrap_or(u32::MAX);
            plan.dist_task_limit = Some(plan.dist_task_limit.map_or(limit, |l| l.min(limit)));
        }
        let per_task_job = per_task_total.filter(|_| job.num_tasks > 0);
        if g.scope == GresScope::PerJob || per_task_job.is_some() {
            let n = per_task_job.unwrap_or(devices.len() as u64);
            job_gres = Some(job_gres.map_or(n, |j: u64| j.min(n)));
        }
        if !full {
            continue;
        }
        plan.reqs.push(ReqPlan {
            devices: if shared { holders } else { devices },
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
        for (units, most) in &per_task_first {
            first_pass_sockets(rec, free, units, *most, min_cores(rec, job, params));
        }
        let spare: Option<SmallVec<[bool; 8]>> = second_pass
            .as_ref()
            .map(|needed| needed.iter().map(|n| !n).collect());
        plan.max_tasks = trim_to_task_limit(
            rec,
            job,
            params,
            free,
            limit.min(task_cap),
            spare.as_deref(),
        );
    } else if let Some(kept) = first_pass {
        *free = kept;
        plan.max_tasks = trim_to_task_limit(rec, job, params, free, task_cap, None);
    } else if let Some(needed) = second_pass {
        let spare: SmallVec<[bool; 8]> = needed.iter().map(|n| !n).collect();
        plan.max_tasks = trim_to_task_limit(rec, job, params, free, task_cap, Some(&spare));
    } else if !job.enforce_binding && job.gres.iter().any(|g| g.scope == GresScope::PerJob) {
        // A per-job request (`--gpus`) keeps the cores its tasks need too:
        // `gres_select_filter_sock_core` drops the sockets the devices do
        // not need on the first pass (gres_select_filter.c:855-878 gives
        // them up first on the second), then trims every request's node
        // once `max_tasks_this_node` is bounded (:880-912). Fuzzed anchor
        // stream f5, `-N2 --ntasks-per-node=1 --gpus=2` on idle nodes:
        // core 2 (CPUs 4-5) and GPU 1 on each.
        let needed: SmallVec<[bool; 8]> = (0..sockets)
            .map(|s| plan.req_sockets.is_empty() || plan.req_sockets.contains(&s))
            .collect();
        let mut spare = None;
        if first {
            let mut kept = free.clone();
            for s in (0..sockets).filter(|&s| !needed[s]) {
                for c in s * cps..(s + 1) * cps {
                    kept.clear(c);
                }
            }
            if kept.any() {
                *free = kept;
            }
        } else {
            spare = Some(needed.iter().map(|n| !n).collect::<SmallVec<[bool; 8]>>());
        }
        plan.max_tasks = trim_to_task_limit(rec, job, params, free, task_cap, spare.as_deref());
    } else if task_cap != u32::MAX || job.enforce_binding {
        // Any other request trims too once the node's tasks are bounded
        // (gres_select_filter.c:880-912); under enforce-binding to at least
        // a core on each socket the devices need (:811-813).
        plan.max_tasks = trim_to_task_limit(rec, job, params, free, task_cap, None);
    }
    Some(plan)
}

/// The first pass's core drop for a per-task or per-node request
/// (`gres_select_filter_sock_core` with `first_pass`,
/// gres_select_filter.c:577-607): walking the sockets from the one with
/// the most free cores (socket order on ties), a socket without the
/// request's usable devices (`with`) gives up its highest free cores while
/// the node keeps more than `floor`. Checked on the anchor (the
/// OverSubscribe recording's a41, `-n1 --gpus-per-task=1` on a node whose
/// GPU 1 held mps shares): Slurm took core 0, beside GPU 0.
fn drop_gresless_sockets(rec: &NodeRec, free: &mut Bitmap, with: &[bool], floor: usize) {
    let cps = rec.cores_per_socket as usize;
    let mut order: SmallVec<[usize; 8]> = (0..rec.sockets as usize).collect();
    order.sort_by_key(|&s| std::cmp::Reverse(free.count_range(s * cps, (s + 1) * cps)));
    let mut total = free.count();
    for s in order {
        if with[s] {
            continue;
        }
        for c in (s * cps..(s + 1) * cps).rev() {
            if total <= floor {
                return;
            }
            if free.get(c) {
                free.clear(c);
                total -= 1;
            }
        }
    }
}

/// The sockets a per-node request needs on the second pass
/// (`gres_select_filter_sock_core` without `first_pass`,
/// gres_select_filter.c:577-630): the sockets are walked from the one with
/// the most free cores (socket order on ties), each counting all its
/// devices (`units`, as in `per_node_first_pass`), and every socket
/// walked before the devices cover `need` is needed. Devices bound to no
/// socket make every socket needed.
fn second_pass_sockets(
    rec: &NodeRec,
    free: &Bitmap,
    units: &[(usize, u64)],
    need: u64,
) -> SmallVec<[bool; 8]> {
    let cps = rec.cores_per_socket as usize;
    let sockets = rec.sockets as usize;
    let mut order: SmallVec<[usize; 8]> = (0..sockets).collect();
    order.sort_by_key(|&s| std::cmp::Reverse(free.count_range(s * cps, (s + 1) * cps)));
    let any = units
        .iter()
        .any(|&(i, _)| rec.devices[i].sockets.is_empty());
    let mut needed: SmallVec<[bool; 8]> = SmallVec::from_elem(false, sockets);
    let mut have = 0;
    for s in order {
        if any || have < need {
            needed[s] = true;
        }
        have += units
            .iter()
            .filter(|&&(i, _)| rec.devices[i].home(false, |_| true) == Some(s))
            .map(|&(_, n)| n)
            .sum::<u64>();
    }
    needed
}

/// The core counts of a per-node request's first pass.
#[derive(Clone, Copy, Debug)]
struct FirstPassFloor {
    /// Sockets without the request's devices give up cores only while the
    /// node keeps more than this (`min_core_cnt`).
    drop_to: usize,
    /// The node fails the pass when fewer cores are left.
    keep: usize,
}

/// A per-node request's first pass (22.05's `gres_select_filter_sock_core`
/// with `first_pass`, without enforce-binding): `units` are the usable
/// devices with what each offers (its free shares for a shared request,
/// else 1). The sockets are walked by [`first_pass_sockets`], gresless
/// ones giving up cores down to `floor.drop_to`. Applies to `kept` (the
/// cores kept so far, from `free` on the first request). Returns false
/// when the node fails the pass: its devices beside free cores fall short
/// of `need` (gres_select_filter.c:642-646,
/// the anchor's a37: an mps job skipped n3, whose free core was away from
/// its only usable GPU), or fewer than `floor.keep` cores are left (the
/// task loop of :700-738 then finds no task count, or :785-790; the
/// anchor's a25, `-c4 --gres=gpu:1` under CR_ONE_TASK_PER_CORE, skipped
/// n1, whose one core per socket gave 1 core beside the GPU). Devices bound
/// to no socket count on every socket: every socket is required and keeps
/// its cores, which the caller then trims as for the others (:880-912
/// runs on the first pass too; the anchor's links recording, l1 `-n1
/// --gres=gpu:3` on an idle node whose GPUs have no `Cores=`: core 2,
/// CPUs 4-5).
#[inline(never)]
fn per_node_first_pass(
    rec: &NodeRec,
    free: &Bitmap,
    units: &[(usize, u64)],
    need: u64,
    floor: FirstPassFloor,
    kept: &mut Option<Bitmap>,
) -> bool {
    if units
        .iter()
        .any(|&(i, _)| rec.devices[i].sockets.is_empty())
    {
        if kept.is_none() {
            *kept = Some(free.clone());
        }
        return true;
    }
    let mut cores = kept.clone().unwrap_or_else(|| free.clone());
    let have = first_pass_sockets(rec, &mut cores, units, need, floor.drop_to);
    if have < need || cores.count() < floor.keep {
        return false;
    }
    *kept = Some(cores);
    true
}

/// The socket walk of 22.05's first pass for one request
/// (`gres_select_filter_sock_core` with `first_pass`, without
/// enforce-binding, gres_select_filter.c:577-631, 663-683), on `cores`: a
/// socket holding none of `units` (device, units it offers) gives up its
/// highest cores while the node keeps more than `drop_to`; walking the
/// sockets from the one with the most free cores (socket order on ties),
/// a socket left without free cores counts none of its devices, and the
/// sockets walked until their devices cover `need` are required; the cores
/// of the others are dropped. Returns the units counted. The caller deals
/// with devices bound to no socket (they count on every socket, so no
/// socket is ever dropped).
fn first_pass_sockets(
    rec: &NodeRec,
    cores: &mut Bitmap,
    units: &[(usize, u64)],
    need: u64,
    drop_to: usize,
) -> u64 {
    let cps = rec.cores_per_socket as usize;
    let sockets = rec.sockets as usize;
    let in_socket = |b: &Bitmap, s: usize| b.count_range(s * cps, (s + 1) * cps);
    let mut order: SmallVec<[usize; 8]> = (0..sockets).collect();
    order.sort_by_key(|&s| std::cmp::Reverse(in_socket(cores, s)));
    let here = |s: usize| -> u64 {
        units
            .iter()
            .filter(|&&(i, _)| rec.devices[i].home(false, |_| true) == Some(s))
            .map(|&(_, n)| n)
            .sum()
    };
    let with: SmallVec<[bool; 8]> = (0..sockets).map(|s| here(s) > 0).collect();
    drop_gresless_sockets(rec, cores, &with, drop_to);
    let mut have = 0;
    let mut required: SmallVec<[bool; 8]> = SmallVec::from_elem(false, sockets);
    for s in order {
        if in_socket(cores, s) == 0 {
            continue;
        }
        if have < need {
            required[s] = true;
        }
        have += here(s);
    }
    for (s, _) in required.iter().enumerate().filter(|(_, r)| !**r) {
        for c in s * cps..(s + 1) * cps {
            cores.clear(c);
        }
    }
    have
}

/// The cores a node must keep on the first pass for request `req` needing
/// `need` there: the job's fewest tasks on the node, each of its CPUs
/// rounded up to whole cores under one task per core
/// (gres_select_filter.c:700-713), and the CPUs `--cpus-per-gpu` asks for
/// the request (:739-775), at least one.
fn first_pass_cores(
    rec: &NodeRec,
    job: &JobView,
    params: &Params,
    req: &GresReq,
    need: u64,
) -> usize {
    let tpc = if job.threads_per_core > 0 {
        (rec.tpc as u32).min(job.threads_per_core)
    } else {
        rec.tpc as u32
    }
    .max(1);
    let (min_tasks, _) = task_range(rec, job, params);
    let mut cpt = job.cpt.max(1);
    if effective_ntasks_per_core(job, params) == 1 && !cpt.is_multiple_of(tpc) {
        cpt = (cpt / tpc + 1) * tpc;
    }
    let task_cores = (min_tasks.max(1) * cpt).div_ceil(tpc);
    let gres_cores = (need * req.cpus_per_gres as u64).div_ceil(rec.tpc.max(1) as u64) as u32;
    task_cores.max(gres_cores).max(1) as usize
}

/// The cores the job's fewest tasks on node `rec` need
/// (`min_core_cnt` of `gres_select_filter_sock_core`).
fn min_cores(rec: &NodeRec, job: &JobView, params: &Params) -> usize {
    let (min_tasks, _) = task_range(rec, job, params);
    (min_tasks.max(1) * job.cpt.max(1)).div_ceil((rec.tpc as u32).max(1)) as usize
}

/// The tasks a node may run for the job (`min_tasks_this_node`,
/// `max_tasks_this_node`, cons_tres/job_test.c:309-358): from
/// `--ntasks-per-node`, `-socket`, `-core` (which CR_ONE_TASK_PER_CORE sets
/// to 1 for every job: then one task per core not specialised), a one-node
/// job's `-n`, one task for a one-task job or one task per node, else 1 to
/// unbounded.
fn task_range(rec: &NodeRec, job: &JobView, params: &Params) -> (u32, u32) {
    let ntpc = effective_ntasks_per_core(job, params);
    if job.ntasks_per_node > 0 {
        (job.ntasks_per_node, job.ntasks_per_node)
    } else if job.ntasks_per_socket > 0 {
        (
            job.ntasks_per_socket,
            job.ntasks_per_socket * rec.sockets as u32,
        )
    } else if ntpc > 0 {
        (ntpc, ntpc * (rec.cores - rec.spec_count) as u32)
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
/// the same way after `per_node_first_pass` (anchor job a11, `-n1
/// --gres=gpu:1` on an idle node: core 0, beside GPU 0).
///
/// Returns the node's task count when the range or `limit` bounds it.
fn trim_to_task_limit(
    rec: &NodeRec,
    job: &JobView,
    params: &Params,
    free: &mut Bitmap,
    limit: u32,
    spare: Option<&[bool]>,
) -> Option<u32> {
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
    let (min_tasks, max_tasks) = task_range(rec, job, params);
    let fit = have as u32 * tpc / cpt;
    if fit < min_tasks {
        return None;
    }
    let mut tasks = max_tasks.min(fit).min(limit);
    // One task per core rounds a task's CPUs up to whole cores
    // (gres_select_filter.c:742-750).
    let task_cpt = if effective_ntasks_per_core(job, params) == 1 && !cpt.is_multiple_of(tpc) {
        (cpt / tpc + 1) * tpc
    } else {
        cpt
    };
    while tasks > min_tasks && cores_of(tasks * task_cpt) > have {
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
    // Under enforce-binding the cores kept are at least the sockets left
    // (the node filter cleared those the devices do not need):
    // `req_cpus = sock_cnt` (gres_select_filter.c:811-813).
    let sockets_left = if job.enforce_binding {
        (0..rec.sockets as usize)
            .filter(|&s| free.count_range(s * cps, (s + 1) * cps) > 0)
            .count()
    } else {
        0
    };
    let want = cores_of(tasks * task_cpt)
        .max(cores_of(gres_cpus))
        .max(sockets_left)
        .max(1);
    // The second pass gives up the cores of sockets the devices do not
    // need first, each socket's highest first (gres_select_filter.c:855-878).
    for s in (0..rec.sockets as usize).filter(|&s| spare.is_some_and(|sp| sp[s])) {
        for c in (s * cps..(s + 1) * cps).rev() {
            if have > want && free.get(c) {
                free.clear(c);
                have -= 1;
            }
        }
    }
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
    (max_tasks != u32::MAX || limit != u32::MAX).then_some(tasks)
}

/// One request's devices picked on one node: `(device, amount)` pairs.
pub type Pick = Vec<(usize, u64)>;

/// What a request asks of one node, for [`pick`]: the count of
/// `gres_job_state_t` that `gres_select_filter_select_and_set`
/// (cons_common/gres_select_filter.c) branches on. Per-job requests have
/// their own walk ([`job_bits_first`], [`job_bits_more`]).
#[derive(Clone, Copy, Debug)]
pub enum Want<'a> {
    /// This many devices (`--gres`, `--gpus-per-node`), or shares of a
    /// shared GRES, whatever its scope.
    Node(u64),
    /// `count` on each socket the job uses; `sockets_per_node` is
    /// `--sockets-per-node` (0 when not given).
    Socket { count: u64, sockets_per_node: u32 },
    /// `count` per task; `tasks` is the node's tasks on each socket (see
    /// [`tasks_per_socket`]).
    Task { count: u64, tasks: &'a [u32] },
}

/// Where a free device counts in 22.05's picks (the `sock_gres_t` of
/// `_build_sock_gres_by_topo`, cons_tres/gres_sched.c): for any socket
/// (`bits_any_sock`: no `Cores=`, or cores on every socket), for its home
/// socket (`bits_by_sock`, see [`Device::home`](crate::node_usage::Device::home)),
/// or nowhere (enforce-binding, and none of its sockets holds the job's
/// cores: taken here as 22.05's "no free core on them when the node was
/// tested").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Any,
    Socket(usize),
    Nowhere,
}

/// A request's free devices on one node as 22.05's `_set_*_bits`
/// functions (cons_common/gres_select_filter.c) walk them: in index order,
/// by where they count, with the node's `Links=` matrix.
struct Walk<'a> {
    rec: &'a NodeRec,
    /// Free devices (indices into `rec.devices`), index order.
    devs: &'a [usize],
    /// Where each entry of `devs` counts.
    place: SmallVec<[Place; 8]>,
    /// slurmctld keeps a topology for the GRES on the node: some gres.conf
    /// line of the name gave `Cores=` or `Type=` (`_get_tot_gres_cnt`,
    /// common/gres.c, counts the records as topology only then). Without
    /// one, `gres_select_filter_select_and_set` only sets a count and
    /// gres_ctld.c's job allocation takes the first free devices.
    topo: bool,
    /// The node has a link matrix for the GRES (22.05's `link_len ==
    /// gres_cnt`: it has a topology and some gres.conf line of the name
    /// gave `Links=`; rows of the lines without one are zeros). `Links=`
    /// on devices without `Cores=` or `Type=` is ignored.
    links: bool,
    /// Picked, per entry of `devs`.
    taken: SmallVec<[bool; 8]>,
}

impl<'a> Walk<'a> {
    /// The walk over `devs`; `used[s]`: the job has cores on socket `s`.
    fn new(
        rec: &'a NodeRec,
        devs: &'a [usize],
        name_id: u32,
        used: &[bool],
        enforce_binding: bool,
    ) -> Walk<'a> {
        let place = devs
            .iter()
            .map(|&i| {
                let d = &rec.devices[i];
                if d.sockets.is_empty() {
                    Place::Any
                } else {
                    d.home(enforce_binding, |s| used.get(s).copied().unwrap_or(false))
                        .map_or(Place::Nowhere, Place::Socket)
                }
            })
            .collect();
        let of_name = || rec.devices.iter().filter(|d| d.name_id == name_id);
        let topo = of_name().any(|d| d.cores.is_some() || d.type_name.is_some());
        Walk {
            rec,
            devs,
            place,
            topo,
            links: topo && of_name().any(|d| !d.links.is_empty()),
            taken: SmallVec::from_elem(false, devs.len()),
        }
    }

    /// `links_cnt[from][to]` (common/gres.c `_links_str2array`): entry
    /// `to` of the `Links=` of device `from`'s line, 0 where it has none
    /// (both indices into `rec.devices`).
    fn link(&self, from: usize, to: usize) -> i32 {
        let to = self.rec.devices[to].index as usize;
        self.rec.devices[from].links.get(to).copied().unwrap_or(0)
    }

    fn count(&self) -> u64 {
        self.taken.iter().filter(|&&t| t).count() as u64
    }

    /// The first free entry not picked yet that counts at `place`.
    fn first_at(&self, place: Place) -> Option<usize> {
        (0..self.devs.len()).find(|&k| self.place[k] == place && !self.taken[k])
    }

    /// Adds entry `k`'s links to every other entry's sum (`links_cnt[l] +=
    /// links_cnt[g][l]`, the row of the device picked).
    fn add_links(&self, sums: &mut [i32], k: usize) {
        for (l, sum) in sums.iter_mut().enumerate() {
            if l != k {
                *sum += self.link(self.devs[k], self.devs[l]);
            }
        }
    }

    /// Picks, from link level `best` down to 0 and at each level group by
    /// group in `groups`' order, the entries `keep(k, level)` allows, in
    /// index order, until `goal` are picked.
    fn by_levels(
        &mut self,
        groups: &[Place],
        best: i32,
        goal: u64,
        keep: impl Fn(&Self, usize, i32) -> bool,
    ) {
        let mut have = self.count();
        for level in (0..=best).rev() {
            for &g in groups {
                for k in 0..self.devs.len() {
                    if have >= goal {
                        return;
                    }
                    if self.place[k] == g && !self.taken[k] && keep(self, k, level) {
                        self.taken[k] = true;
                        have += 1;
                    }
                }
            }
        }
    }

    /// The picked devices as `(device, 1)`, index order.
    fn into_pick(self) -> Pick {
        (0..self.devs.len())
            .filter(|&k| self.taken[k])
            .map(|k| (self.devs[k], 1))
            .collect()
    }
}

/// `best_link_cnt` of 22.05's `_set_sock_bits`, `_set_node_bits` and
/// `_set_task_bits`: the highest link sum (at least 0); above 4 every sum
/// is first divided by `(best + 3) / 4` (C division, toward zero) and the
/// highest taken again, so that at most 5 levels are walked. The division
/// can tie sums that differed (6 and 7 both become 3 under a best of 8).
fn link_levels(sums: &mut [i32]) -> i32 {
    let best = sums.iter().copied().max().unwrap_or(0).max(0);
    if best <= 4 {
        return best;
    }
    let by = (best + 3) / 4;
    for s in sums.iter_mut() {
        *s /= by;
    }
    sums.iter().copied().max().unwrap_or(0).max(0)
}

/// Sockets of the node holding cores of `cores` (22.05's `used_sock`).
fn used_sockets(rec: &NodeRec, cores: &Bitmap) -> SmallVec<[bool; 8]> {
    let cps = rec.cores_per_socket as usize;
    (0..rec.sockets as usize)
        .map(|s| cores.count_range(s * cps, (s + 1) * cps) > 0)
        .collect()
}

/// The groups 22.05 walks in order: devices of any socket (its `s = -1`),
/// then the sockets `used` says (`Some(true)`: the used ones, `Some(false)`:
/// the others, `None`: all).
fn groups(used: &[bool], which: Option<bool>, with_any: bool) -> SmallVec<[Place; 9]> {
    let any = with_any.then_some(Place::Any);
    any.into_iter()
        .chain(
            (0..used.len())
                .filter(|&s| which.is_none_or(|w| used[s] == w))
                .map(Place::Socket),
        )
        .collect()
}

/// Picks a request's devices on one node (`gres_select_filter_select_and_set`,
/// cons_common/gres_select_filter.c): a shared request's shares by
/// `_pick_specific_topo`, a per-node count by `_set_node_bits`, a per-socket
/// one by `_set_sock_bits`, a per-task one by `_set_task_bits` (see each
/// function below). `cores` are the job's cores on the node. On a node
/// without a topology for the GRES (no `Cores=` or `Type=`, see
/// `Walk::topo`) 22.05 only sets the count and takes the first free
/// devices, which these walks give there too (all devices count for any
/// socket, no links). `None` when the node cannot give a per-node or
/// per-task count in full (22.05 logs that and goes on; the plan said the
/// devices were there) or gives a per-socket request nothing.
pub fn pick(
    rec: &NodeRec,
    plan: &ReqPlan,
    req: &GresReq,
    want: Want<'_>,
    cores: &Bitmap,
    enforce_binding: bool,
) -> Option<Pick> {
    let used = used_sockets(rec, cores);
    if req.shared {
        let count = match want {
            Want::Node(c) => c,
            Want::Socket { count, .. } | Want::Task { count, .. } => count,
        };
        return pick_shared(rec, plan, count, &used);
    }
    let mut w = Walk::new(rec, &plan.devices, req.name_id, &used, enforce_binding);
    match want {
        Want::Node(count) => {
            node_bits(&mut w, &used, count);
            (w.count() >= count).then(|| w.into_pick())
        }
        Want::Socket {
            count,
            sockets_per_node,
        } => {
            sock_bits(&mut w, &used, count, sockets_per_node);
            (w.count() > 0 || count == 0).then(|| w.into_pick())
        }
        Want::Task { count, tasks } => {
            let goal = task_bits(&mut w, &used, count, tasks);
            (w.count() >= goal).then(|| w.into_pick())
        }
    }
}

/// `_pick_specific_topo` (gres_select_filter.c:1015-1062): a device bound
/// to no socket, else one on the first socket holding the job's cores,
/// else the first; `plan.devices` all hold `count`, but in TEST_ONLY,
/// where a node's shares count over its devices (see `node_filter`): there
/// the others make up the rest, each with what it has.
fn pick_shared(rec: &NodeRec, plan: &ReqPlan, count: u64, used: &[bool]) -> Option<Pick> {
    let on = |i: usize, s: usize| rec.devices[i].sockets.first() == Some(&(s as u16));
    let near = (0..used.len())
        .filter(|&s| used[s])
        .find_map(|s| plan.devices.iter().copied().find(|&i| on(i, s)));
    let dev = plan
        .devices
        .iter()
        .copied()
        .find(|&i| rec.devices[i].sockets.is_empty())
        .or(near)
        .or_else(|| plan.devices.first().copied())?;
    let mut picked = vec![(dev, count.min(rec.devices[dev].capacity))];
    let mut left = count - picked[0].1;
    for &i in plan.devices.iter().filter(|&&i| i != dev) {
        if left == 0 {
            break;
        }
        let take = left.min(rec.devices[i].capacity);
        picked.push((i, take));
        left -= take;
    }
    if left > 0 {
        return None;
    }
    picked.sort_unstable();
    Some(picked)
}

/// `_set_node_bits` (gres_select_filter.c): first one device of any
/// socket, then one on each socket holding the job's cores (index order
/// each); the links of these first picks are summed per free device
/// (`links_cnt[l] += links_cnt[g][l]`, the picked device's `Links=`
/// row) and leveled ([`link_levels`]). Then, from the highest level down,
/// the devices whose sum reaches the level, of any socket and of the used
/// sockets (group by group, index order in each); then the same over the
/// sockets without the job's cores. So with `Links=` (on a node with a
/// topology) the devices best linked to the first picks come first, ties
/// in index order; without, index order. (Later releases sort by link
/// sums ascending and spread the count over the sockets by their cores.)
/// Checked on the anchor's links recording: c1, c2 and m1-m4.
fn node_bits(w: &mut Walk<'_>, used: &[bool], count: u64) {
    let mut sums: SmallVec<[i32; 8]> = SmallVec::from_elem(0, w.devs.len());
    let near = groups(used, Some(true), true);
    for &g in &near {
        if w.count() >= count {
            break;
        }
        if let Some(k) = w.first_at(g) {
            w.taken[k] = true;
            if w.links {
                w.add_links(&mut sums, k);
            }
        }
    }
    let best = if w.links { link_levels(&mut sums) } else { 0 };
    let keep = |w: &Walk<'_>, k: usize, level: i32| !w.links || sums[k] >= level;
    w.by_levels(&near, best, count, keep);
    w.by_levels(&groups(used, Some(false), false), best, count, keep);
}

/// `_set_sock_bits` (gres_select_filter.c): `count` devices on each socket
/// holding the job's cores, index order, topped up from devices of any
/// socket. 22.05 sums and levels the links of all free devices here but
/// never consults them: link counts do not matter. With
/// `--sockets-per-node` above the sockets used, free sockets whose devices
/// reach `count` join (socket order) until the sockets number that many;
/// below it, every used socket still gets its devices (22.05 drops only
/// sockets with no free device left, which its `bits_by_sock` never holds
/// here, so its "exclude sockets with low GRES counts" loop never runs).
fn sock_bits(w: &mut Walk<'_>, used: &[bool], count: u64, sockets_per_node: u32) {
    let n = w.devs.len();
    let free_on =
        |w: &Walk<'_>, s: usize| (0..n).filter(|&k| w.place[k] == Place::Socket(s)).count() as u64;
    let mut on: SmallVec<[bool; 8]> = used.into();
    let mut used_count = used.iter().filter(|&&u| u).count() as u64;
    let spn = u64::from(sockets_per_node);
    if spn > used_count {
        for s in 0..on.len() {
            let free = free_on(w, s);
            if on[s] || free == 0 || free < count {
                continue;
            }
            on[s] = true;
            used_count += 1;
            if used_count == spn {
                break;
            }
        }
    }
    for s in (0..on.len()).filter(|&s| on[s]) {
        let mut got = 0;
        for place in [Place::Socket(s), Place::Any] {
            for k in 0..n {
                if got >= count {
                    break;
                }
                if w.place[k] == place && !w.taken[k] {
                    w.taken[k] = true;
                    got += 1;
                }
            }
        }
    }
}

/// `_set_task_bits` (gres_select_filter.c): socket by socket, devices on
/// the socket (index order) until the tasks so far have `count` each;
/// socket 0 is always walked, the others only with tasks. Devices of any
/// socket are not taken then: 22.05 walks them first with a goal of
/// `tasks_per_node_socket[node][-1]` tasks, which reads the high half of
/// xmalloc's size word, 0. The links of these picks are summed and
/// leveled as in [`node_bits`]; the rest come from the highest level down,
/// any socket first, then every socket in order. So with devices bound to
/// no socket a per-task request takes them in index order whatever their
/// `Links=`. Returns the goal: the node's tasks times `count`.
fn task_bits(w: &mut Walk<'_>, used: &[bool], count: u64, tasks: &[u32]) -> u64 {
    let mut sums: SmallVec<[i32; 8]> = SmallVec::from_elem(0, w.devs.len());
    let mut node_tasks = 0u64;
    for s in 0..used.len() {
        let here = u64::from(tasks.get(s).copied().unwrap_or(0));
        if s > 0 && here == 0 {
            continue;
        }
        node_tasks += here;
        let goal = node_tasks * count;
        for k in 0..w.devs.len() {
            if w.count() >= goal {
                break;
            }
            if w.place[k] == Place::Socket(s) && !w.taken[k] {
                w.taken[k] = true;
                if w.links {
                    w.add_links(&mut sums, k);
                }
            }
        }
    }
    let best = if w.links { link_levels(&mut sums) } else { 0 };
    let goal = node_tasks * count;
    w.by_levels(&groups(used, None, true), best, goal, |w, k, level| {
        !w.links || sums[k] >= level
    });
    goal
}

/// The tasks of each of the job's nodes on each socket, as 22.05's
/// `_build_tasks_per_node_sock` (gres_select_filter.c) counts them for a
/// per-task GRES request: socket by socket, each of the job's cores adds
/// `--ntasks-per-core` tasks (1 under CR_ONE_TASK_PER_CORE), else the
/// node's threads per core (22.05 divides by a `cpus_per_task` that stays
/// 1 on this path, whatever `-c` says); a socket stops at
/// `--ntasks-per-socket` (its excess taken back, the node's running count
/// kept), the node at `--ntasks-per-node`, else its task count. With
/// `--overcommit`, tasks still unplaced go one per socket per pass, to the
/// sockets where the job's first node has cores (22.05 tests the job-wide
/// core map without the node's offset).
pub fn tasks_per_socket(
    recs: &[NodeRec],
    shares: &[NodeShare],
    job: &JobView,
    params: &Params,
) -> Vec<SmallVec<[u32; 4]>> {
    let ntpc = effective_ntasks_per_core(job, params);
    let mut left = i64::from(job.num_tasks);
    let mut out: Vec<SmallVec<[u32; 4]>> = Vec::with_capacity(shares.len());
    for share in shares {
        let rec = &recs[share.node];
        let cps = rec.cores_per_socket as usize;
        let mut tps: SmallVec<[u32; 4]> = SmallVec::from_elem(0, rec.sockets as usize);
        let limit = if job.ntasks_per_node > 0 {
            job.ntasks_per_node
        } else if share.tasks > 0 {
            share.tasks
        } else {
            share.cpus / job.cpt.max(1)
        };
        let per_core = if ntpc > 0 {
            ntpc
        } else {
            u32::from(rec.tpc).max(1)
        };
        let mut on_node = 0u32;
        'node: for (s, t) in tps.iter_mut().enumerate() {
            let mut on_socket = 0u32;
            for c in s * cps..(s + 1) * cps {
                if !share.cores.get(c) {
                    continue;
                }
                *t += per_core;
                on_node += per_core;
                on_socket += per_core;
                left -= i64::from(per_core);
                if limit > 0 {
                    if on_node > limit {
                        let excess = on_node - limit;
                        *t -= excess;
                        left += i64::from(excess);
                    }
                    if on_node >= limit {
                        break 'node;
                    }
                }
                if job.ntasks_per_socket > 0 {
                    if on_socket > job.ntasks_per_socket {
                        let excess = on_socket - job.ntasks_per_socket;
                        *t -= excess;
                        left += i64::from(excess);
                    }
                    if on_socket >= job.ntasks_per_socket {
                        break;
                    }
                }
            }
        }
        out.push(tps);
    }
    if job.overcommit && left > 0 {
        if let (Some(first), Some(last)) = (shares.first(), shares.last()) {
            let rec = &recs[last.node];
            let cps = rec.cores_per_socket as usize;
            let sockets: SmallVec<[usize; 8]> = (0..rec.sockets as usize)
                .filter(|&s| (s * cps..(s + 1) * cps).any(|c| first.cores.get(c)))
                .collect();
            while left > 0 && !sockets.is_empty() {
                for tps in out.iter_mut() {
                    for &s in &sockets {
                        if left > 0 && s < tps.len() {
                            tps[s] += 1;
                            left -= 1;
                        }
                    }
                }
            }
        }
    }
    out
}

/// `_set_job_bits1` (gres_select_filter.c), a per-job request on one of
/// its nodes: at most the devices still wanted less one for each node
/// after this one (`left`, `nodes_left` counting this node), and with
/// `--cpus-per-gpu` at most the job's cores here times the node's threads
/// per core over it (without a topology, `_get_job_cnt`: no such limit,
/// and the first free devices). Devices of any socket, then of the sockets holding
/// the job's cores, index order; with `Links=` and more than one to give,
/// all of them, then 22.05 keeps the best linked: the first pair (in index
/// order) with the highest link anchors, and the device least linked to
/// its first is dropped (the first such in index order) until the count
/// fits. A node that got none takes one device from the first socket
/// without the job's cores that has one.
pub fn job_bits_first(
    rec: &NodeRec,
    plan: &ReqPlan,
    req: &GresReq,
    cores: &Bitmap,
    enforce_binding: bool,
    left: u64,
    nodes_left: usize,
) -> Pick {
    let used = used_sockets(rec, cores);
    let mut w = Walk::new(rec, &plan.devices, req.name_id, &used, enforce_binding);
    let mut most = left as i64 - (nodes_left as i64 - 1);
    if req.cpus_per_gres > 0 && w.topo {
        let cpus = cores.count() as i64 * i64::from(rec.tpc);
        most = most.min(cpus / i64::from(req.cpus_per_gres));
    }
    let limit = if most > 1 && w.links { i64::MAX } else { most };
    let mut have = 0i64;
    for g in groups(&used, Some(true), true) {
        for k in 0..w.devs.len() {
            if have >= limit {
                break;
            }
            if w.place[k] == g && !w.taken[k] {
                w.taken[k] = true;
                have += 1;
            }
        }
    }
    if have == 0 {
        if let Some(k) = groups(&used, Some(false), false)
            .into_iter()
            .find_map(|g| w.first_at(g))
        {
            w.taken[k] = true;
            have = 1;
        }
    }
    if have > most {
        let picked: SmallVec<[usize; 8]> = (0..w.devs.len()).filter(|&k| w.taken[k]).collect();
        let mut best = -1;
        let mut anchor = 0;
        for (n, &a) in picked.iter().enumerate() {
            for &b in &picked[n + 1..] {
                let l = w.link(w.devs[a], w.devs[b]);
                if l > best {
                    best = l;
                    anchor = a;
                }
            }
        }
        while have > most && best != -1 {
            let worst = (0..w.devs.len())
                .filter(|&k| k != anchor && w.taken[k])
                .min_by_key(|&k| w.link(w.devs[anchor], w.devs[k]));
            let Some(worst) = worst else { break };
            w.taken[worst] = false;
            have -= 1;
        }
    }
    w.into_pick()
}

/// `_set_job_bits2` (gres_select_filter.c): when the first walk left a
/// per-job request short, each node in turn adds devices until `want` more
/// are picked: from the highest link any device of the name has to the
/// node's first pick (0 without `Links=` or a pick) down to 0, the devices
/// whose link from that first pick reaches the level (every device at
/// level 0), of any socket, then of every socket in order. Nodes without a
/// topology (see `Walk::topo`) add nothing.
pub fn job_bits_more(
    rec: &NodeRec,
    plan: &ReqPlan,
    req: &GresReq,
    cores: &Bitmap,
    enforce_binding: bool,
    have: &mut Pick,
    want: u64,
) {
    let used = used_sockets(rec, cores);
    let mut w = Walk::new(rec, &plan.devices, req.name_id, &used, enforce_binding);
    if !w.topo {
        // No `gres_bit_select` on a node without a topology: 22.05's
        // `_set_job_bits2` returns at once.
        return;
    }
    for k in 0..w.devs.len() {
        w.taken[k] = have.iter().any(|&(i, _)| i == w.devs[k]);
    }
    let before = w.count();
    let anchor = have.iter().map(|&(i, _)| i).min().filter(|_| w.links);
    let best = anchor.map_or(0, |a| {
        rec.devices
            .iter()
            .enumerate()
            .filter(|(_, d)| d.name_id == req.name_id)
            .map(|(i, _)| w.link(i, a))
            .max()
            .unwrap_or(0)
            .max(0)
    });
    w.by_levels(
        &groups(&used, None, true),
        best,
        before + want,
        |w, k, level| level == 0 || anchor.is_none_or(|a| w.link(a, w.devs[k]) >= level),
    );
    *have = w.into_pick();
}

#[cfg(test)]
mod tests;
