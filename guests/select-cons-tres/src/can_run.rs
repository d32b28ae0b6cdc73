//! `_can_job_run_on_node`: one node's offer to a job, after GRES, cores and
//! memory (spec 2.4).

use crate::allocate_sc::{allocate_sc, FreeCores, SocketAlloc};
use crate::bits::Bits;
use crate::gres_sched::{node_filter, NodePlan};
use crate::node_usage::{NodeRec, NodeUse};
use crate::params::{Params, Unit};
use crate::request::{JobView, Mem};

/// A node's offer.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAvail {
    pub alloc: SocketAlloc,
    pub gres: NodePlan,
}

/// Evaluates one node. `avail` = the cluster-wide available cores of this
/// pass; `want_cores` = also choose the cores (only chosen nodes need them);
/// `ignore_usage` = TEST_ONLY (memory and GRES against totals);
/// `completing_ok` = modes that accept COMPLETING nodes.
#[allow(clippy::too_many_arguments)]
pub fn can_job_run_on_node(
    rec: &NodeRec,
    usage: &NodeUse,
    avail: &Bits,
    want_cores: bool,
    job: &JobView,
    params: &Params,
    max_cpus_per_node: Option<u32>,
    ignore_usage: bool,
    completing_ok: bool,
) -> Option<NodeAvail> {
    if rec.completing && !completing_ok {
        return None;
    }
    let mut restricted;
    let (gres, free) = if job.gres.is_empty() {
        let free = FreeCores {
            bits: avail,
            off: rec.core_off,
        };
        (NodePlan::default(), free)
    } else {
        restricted = avail.extract(rec.core_off, rec.cores as usize);
        let plan = node_filter(rec, usage, job, &mut restricted, ignore_usage)?;
        let free = FreeCores {
            bits: &restricted,
            off: 0,
        };
        (plan, free)
    };
    let mut alloc = allocate_sc(
        rec,
        free,
        want_cores,
        job,
        params,
        &gres.req_sockets,
        max_cpus_per_node,
    )?;
    let need = job.tasks_per_node_needed() * job.cpt;
    if alloc.avail_cpus < need.min(alloc.max_cpus) {
        return None;
    }
    if params.memory {
        let avail_mem = rec.usable_memory()
            - if ignore_usage {
                0
            } else {
                usage.alloc_memory.min(rec.usable_memory())
            };
        let mem_per_gres: u64 = job.gres.iter().map(|g| g.mem_per_gres).max().unwrap_or(0);
        match job.mem {
            Mem::PerCpu(m) if m > 0 => {
                let mut cpus = alloc.avail_cpus as u64;
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
                alloc.avail_cpus = cpus as u32;
            }
            Mem::PerNode(m) if m > 0 && m > avail_mem => return None,
            _ if mem_per_gres > 0 && mem_per_gres > avail_mem => return None,
            _ => {}
        }
    }
    Some(NodeAvail { alloc, gres })
}
