//! `can_job_run_on_node`: one node's offer to a job, after GRES, cores and
//! memory (cons_tres/job_test.c).

use slurm_wasm_sdk::types::GresScope;
use smallvec::SmallVec;

use crate::allocate_sc::{allocate_sc, FreeCores, OwnPartition, SocketAlloc};
use crate::gres_sched::{node_filter, NodePlan};
use crate::node_usage::{NodeRec, NodeUse, Tables};
use crate::params::{Params, Unit};
use crate::request::{JobView, Mem};
use slurm_wasm_sdk::Bitmap;

/// A node's offer.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAvail {
    pub alloc: SocketAlloc,
    pub gres: NodePlan,
    /// The node's free CPUs before any GRES filter (free cores x threads,
    /// under CR_Socket without the used sockets): 22.05's `max_cpus`, set
    /// by `_allocate_sc` (cons_common.c:357-392) before `_select_cores`
    /// trims cores for the devices.
    pub max_cpus: u32,
    /// The CPUs the job's allocation counts on the node if it is chosen
    /// unclipped (`avail_res->avail_cpus`, cons_common/job_test.c:1389):
    /// within the cores the GRES trim kept and the memory cut, but not
    /// capped to the node's tasks, a cap gres_select_filter.c:940-951 puts
    /// on `_select_cores`' own count only. Fuzzed CR_CPU_Memory f400, `-n4
    /// --gpus-per-task=1`: n1's one free core counts 2 CPUs though node
    /// selection took 1, and the task distribution gives it a second task.
    pub share_cpus: u32,
}

/// What choosing nodes needs of a node's offer: the counts, without the
/// core bitmap and device lists (those are built again for the chosen
/// nodes only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Offer {
    pub node: usize,
    /// CPUs the job may use on the node (more than 0).
    pub avail_cpus: u32,
    /// CPUs per core the job uses there.
    pub cpus_per_core: u32,
    /// The node's free CPUs before the job's limits (free cores × threads,
    /// 22.05's `max_cpus`): what least-loaded-node selection ranks by.
    pub max_cpus: u32,
    /// Usable GPUs near the node's free cores (see `NodePlan::near_gpus`).
    pub near_gpus: u8,
    /// Devices the node could give the job's per-job GRES requests (the
    /// fewest over those requests; 0 without any).
    pub job_gres: u64,
}

impl Offer {
    /// The counts of `avail`, node `node`'s offer to `job`; `None` when
    /// the node offers no CPU.
    pub fn of(node: usize, avail: &NodeAvail) -> Option<Offer> {
        (avail.alloc.avail_cpus > 0).then_some(Offer {
            node,
            avail_cpus: avail.alloc.avail_cpus,
            cpus_per_core: avail.alloc.cpus_per_core,
            max_cpus: avail.max_cpus,
            near_gpus: avail.gres.near_gpus,
            job_gres: avail.gres.job_gres,
        })
    }
}

/// Evaluates one node. `avail` = the cluster-wide available cores of this
/// pass; `want_cores` = also choose the cores (only chosen nodes need them);
/// `tables` = the usage `usage` belongs to (TEST_ONLY reads the totals);
/// `completing_ok` = modes that accept COMPLETING nodes; `first_pass` =
/// node selection's first try, where GRES keep the job near their devices
/// (see `gres_sched::node_filter`); `cpu_cap` = the CPUs a failed choice
/// clipped the node to, which bound its tasks when the GRES filter trims
/// its cores (see `eval_nodes::Choice::caps`); `gres_before` = the devices
/// the nodes counted before this one give the per-job GRES requests (see
/// `gres_sched::node_filter`).
#[allow(clippy::too_many_arguments)]
pub fn can_job_run_on_node(
    rec: &NodeRec,
    usage: &NodeUse,
    avail: &Bitmap,
    want_cores: bool,
    job: &JobView,
    params: &Params,
    own: OwnPartition<'_>,
    tables: Tables,
    completing_ok: bool,
    first_pass: bool,
    cpu_cap: Option<u32>,
    gres_before: u64,
) -> Option<NodeAvail> {
    let ignore_usage = tables == Tables::Totals;
    if rec.completing && !completing_ok {
        return None;
    }
    // Cheap refusals first: GRES can only take cores away, so a node whose
    // free cores cannot give the per-node minimum or the CPUs of the tasks
    // it must hold (`_can_job_run_on_node`, cons_tres/job_test.c:3372-3388),
    // or whose free memory is below a per-node amount, fails whatever its
    // devices.
    let need = job.tasks_per_node_needed() * job.cpt;
    let free_cores = avail.count_range(rec.core_off, rec.core_off + rec.cores as usize) as u32;
    if free_cores == 0 || free_cores * (rec.tpc as u32) < job.pn_min_cpus.max(need) {
        return None;
    }
    let avail_mem = rec.free_memory(usage, ignore_usage);
    if params.memory && matches!(job.mem, Mem::PerNode(m) if m > avail_mem) {
        return None;
    }
    // The node's free cores as `_allocate_sc` sees them: before any GRES
    // filter (cons_tres/job_test.c:3338-3363).
    let seen = FreeCores {
        bits: avail,
        off: rec.core_off,
    };
    // CR_Socket rules the used sockets out before GRES filters read the
    // cores: Slurm's `_allocate_sc` clears them from the core map
    // (cons_common.c:378-387, 651-653), after `gres_sched_create_sock_gres_list`
    // chose the sockets the devices need from all free cores.
    let used = if params.unit == Unit::Socket || own.max_cpus.is_some() {
        own.used_cores(rec, &seen)
    } else {
        SmallVec::new()
    };
    let before =
        (params.unit == Unit::Socket).then(|| avail.extract(rec.core_off, rec.cores as usize));
    let socket_free;
    let node_free = match &before {
        Some(before) => {
            let cps = rec.cores_per_socket as usize;
            let mut cores = before.clone();
            for (s, used) in used.iter().enumerate() {
                if *used > 0 {
                    for c in s * cps..(s + 1) * cps {
                        cores.clear(c);
                    }
                }
            }
            socket_free = cores;
            FreeCores {
                bits: &socket_free,
                off: 0,
            }
        }
        None => seen,
    };
    let max_cpus = rec.tpc as u32
        * match &before {
            Some(_) => node_free.bits.count() as u32,
            None => free_cores,
        };
    let mut restricted;
    // The node's free cores before the GRES trim, kept only where Slurm
    // counts CPUs from them (see `uncapped_cpus`, and the memory check
    // below).
    let mut untrimmed = None;
    let memory_per_cpu = params.memory && matches!(job.mem, Mem::PerCpu(m) if m > 0);
    let (gres, free) = if job.gres.is_empty() {
        (NodePlan::default(), node_free)
    } else {
        restricted = node_free.bits.extract(node_free.off, rec.cores as usize);
        if keeps_uncapped_cpus(job, params) || memory_per_cpu {
            untrimmed = Some(restricted.clone());
        }
        let plan = node_filter(
            rec,
            usage,
            job,
            params,
            &mut restricted,
            before.as_ref(),
            tables,
            want_cores,
            first_pass,
            cpu_cap.map_or(u32::MAX, |cpus| cpus / job.cpt.max(1)),
            gres_before,
        )?;
        let free = FreeCores {
            bits: &restricted,
            off: 0,
        };
        (plan, free)
    };
    let mut alloc = allocate_sc(
        rec,
        free,
        seen,
        &used,
        want_cores,
        job,
        params,
        &gres.req_sockets,
        own,
    )?;
    // The CPUs Slurm's memory check reads (`cpus = avail_res->avail_cpus`,
    // cons_tres/job_test.c:3425): `common_allocate`'s count over the node's
    // free cores before the GRES trim and the task cap, which 22.05 makes
    // only later, in `_select_cores` (:297-392); only enforce-binding's
    // socket clear (`gres_sched_create_sock_gres_list`) comes first. The
    // node then keeps the smaller of that cut and the trimmed count
    // (`_select_cores` passes the cut count to
    // gres_select_filter_sock_core, gres_select_filter.c:940-951). Fuzzed
    // CR_Socket_Memory stream f430 (`-n3 --gpus-per-task=1
    // --mem-per-cpu=2000`: 8 CPUs, cut a socket at a time to none) and
    // f483 (`-c4 --gres=mps:200 --mem-per-cpu=1000 --exclusive`: a whole
    // node of 8 CPUs, 8000 MB > 4000): refused at submit.
    // `_allocate_sc`'s count over `cores`, the node's free cores before
    // the GRES trim.
    let before_trim = |cores: &Bitmap| {
        allocate_sc(
            rec,
            FreeCores {
                bits: cores,
                off: 0,
            },
            seen,
            &used,
            false,
            job,
            params,
            &gres.req_sockets,
            own,
        )
    };
    let memory_cpus = match &untrimmed {
        Some(all) if memory_per_cpu => {
            let mut pre = all.clone();
            if job.enforce_binding && !gres.req_sockets.is_empty() {
                let cps = rec.cores_per_socket as usize;
                for s in (0..rec.sockets as usize).filter(|s| !gres.req_sockets.contains(s)) {
                    for c in s * cps..(s + 1) * cps {
                        pre.clear(c);
                    }
                }
            }
            before_trim(&pre).map_or(0, |a| a.avail_cpus)
        }
        _ => alloc.avail_cpus,
    };
    if let Some(all) = untrimmed.filter(|_| keeps_uncapped_cpus(job, params)) {
        let before = before_trim(&all)?;
        alloc.avail_cpus = uncapped_cpus(
            before.avail_cpus,
            all.count() as u32,
            free.bits.count() as u32,
            rec.tpc as u32,
        );
    }
    let mut share_cpus = alloc.avail_cpus;
    // The CPUs of the node's tasks, unless CPUs per GRES count or
    // CR_ONE_TASK_PER_CORE leaves one-CPU tasks uncapped
    // (gres_select_filter.c:940-951).
    if let Some(tasks) = gres.max_tasks {
        if job.gres.iter().all(|g| g.cpus_per_gres == 0)
            && (job.cpt > 1 || !params.one_task_per_core)
        {
            alloc.avail_cpus = alloc.avail_cpus.min(tasks * job.cpt);
        }
    }
    if alloc.avail_cpus < need {
        return None;
    }
    if params.memory {
        let mem_per_gres: u64 = job.gres.iter().map(|g| g.mem_per_gres).max().unwrap_or(0);
        match job.mem {
            Mem::PerCpu(m) if m > 0 => {
                let mut cpus = memory_cpus as u64;
                if job.whole_node && m * cpus > avail_mem {
                    return None;
                }
                let ntpc = crate::allocate_sc::effective_ntasks_per_core(job, params);
                if ntpc == 1 && job.cpt == 1 && params.unit != Unit::Cpu {
                    while cpus > 0 && m * cpus * rec.tpc as u64 > avail_mem {
                        cpus -= 1;
                    }
                } else {
                    let step = match params.unit {
                        Unit::Cpu => 1,
                        Unit::Core => rec.tpc as u64,
                        Unit::Socket => rec.tpc as u64 * rec.cores_per_socket as u64,
                    };
                    while cpus > 0 && m * cpus > avail_mem {
                        cpus = cpus.saturating_sub(step);
                    }
                }
                cpus -= cpus % job.cpt as u64;
                if cpus == 0 || cpus < job.tasks_per_node_needed() as u64 * job.cpt as u64 {
                    return None;
                }
                // 22.05 keeps this cut as the node's `avail_res->avail_cpus`
                // (cons_tres/job_test.c:3494), and `_select_cores` bounds the
                // node's tasks by it (:361-370) before
                // gres_select_filter_sock_core trims the cores to those tasks,
                // the highest core of the fullest socket first, socket 0 on
                // ties (gres_select_filter.c:740-772, 887-912), on either
                // pass. So a GRES job's node cut by memory is evaluated again
                // with the cut as its CPU cap, as for a failed choice's clip
                // (the cut is the same then, which ends the recursion). A
                // node memory does not cut keeps its offer: the cap would
                // bound nothing.
                // Fuzzed CR_Core_Memory f102 (`-N2 -n5 --gpus-per-node=2`,
                // n2 with cores 1 and 3 free and 500 MB: 2 CPUs, core 3) and
                // CR_CPU_Memory f141 (`-n2 --gres=gpu:2`, n2 with cores 1-3
                // free and 500 MB: 2 CPUs, core 2).
                let cut = cpus as u32;
                if !job.gres.is_empty()
                    && cut < memory_cpus
                    && !job.overcommit
                    && cpu_cap.is_none_or(|cap| cut < cap)
                    && gres.max_tasks.is_none_or(|t| cut / job.cpt.max(1) < t)
                {
                    return can_job_run_on_node(
                        rec,
                        usage,
                        avail,
                        want_cores,
                        job,
                        params,
                        own,
                        tables,
                        completing_ok,
                        first_pass,
                        Some(cut),
                        gres_before,
                    );
                }
                alloc.avail_cpus = alloc.avail_cpus.min(cpus as u32);
                share_cpus = share_cpus.min(cpus as u32);
            }
            Mem::PerNode(m) if m > 0 && m > avail_mem => return None,
            _ if mem_per_gres > 0 && mem_per_gres > avail_mem => return None,
            _ => {}
        }
    }
    Some(NodeAvail {
        share_cpus: share_cpus.max(alloc.avail_cpus),
        alloc,
        gres,
        max_cpus,
    })
}

/// Whether Slurm leaves a GRES job's CPU count on a node uncapped by its
/// tasks: under CR_ONE_TASK_PER_CORE, for one CPU per task and no CPUs per
/// GRES, `gres_select_filter_sock_core` skips the cap to max_tasks x
/// cpus_per_task (22.05 gres_select_filter.c:940-950), so a node keeps
/// CPUs for cores the GRES trim removed. Not for per-task GRES: there
/// Slurm's count outruns the cores it keeps, and its task layout then
/// holds the job for good (`sync loop not progressing`, the anchor's a13,
/// a24 and a29), which ours does not copy.
fn keeps_uncapped_cpus(job: &JobView, params: &Params) -> bool {
    params.one_task_per_core
        && job.cpt <= 1
        && job
            .gres
            .iter()
            .all(|g| g.cpus_per_gres == 0 && g.scope != GresScope::PerTask)
}

/// The CPUs such a node offers after the GRES trim kept `kept` of its
/// `free` cores: Slurm starts from the CPUs counted before the trim
/// (`before`) and, for each core it drops, takes away one core's threads
/// only once the cores left hold fewer threads than the count
/// (gres_select_filter.c:887-907).
fn uncapped_cpus(before: u32, free: u32, kept: u32, tpc: u32) -> u32 {
    let mut cpus = before;
    for left in (kept..free).rev() {
        if left * tpc < cpus {
            cpus -= tpc.min(cpus);
        }
    }
    cpus
}

#[cfg(test)]
mod tests;
