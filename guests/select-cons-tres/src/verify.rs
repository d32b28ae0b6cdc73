//! `_verify_node_state` (spec 2.4): drops nodes the job cannot use given
//! memory, whole-node, GRES and sharing state. Not run in TEST_ONLY.

use crate::bits::Bits;
use smallvec::SmallVec;

use crate::gres_sched::{node_could_satisfy, per_node_need};
use crate::node_usage::{GresColumn, NODE_CR_AVAILABLE, NODE_CR_RESERVED};
use crate::request::{JobView, Mem};
use crate::{ConsTres, Usage};

/// `_verify_node_state`'s test of one node for one job, prepared once per
/// test: the memory a node must have free, the job's GRES columns and
/// needs, the idle nodes (see [`ConsTres::verify_node_state`]) and the
/// excluded cores.
pub struct NodeCheck<'a> {
    min_mem: u64,
    gres: SmallVec<[(Option<GresColumn<'a>>, u64, bool); 2]>,
    idle: Option<&'a Bits>,
    excluded_cores: Option<&'a Bits>,
}

impl ConsTres {
    /// Prepares the per-node test of [`Self::verify_node_state`].
    pub fn node_check<'a>(
        &'a self,
        job: &JobView,
        excluded_cores: Option<&'a Bits>,
        idle: Option<&'a Bits>,
    ) -> NodeCheck<'a> {
        let min_mem = match job.mem {
            Mem::PerCpu(m) => m * job.ntasks_per_node.max(job.pn_min_cpus).max(job.cpt) as u64,
            Mem::PerNode(m) | Mem::PerGres(m) => m,
        };
        let gres: SmallVec<[_; 2]> = job
            .gres
            .iter()
            .map(|g| {
                (
                    self.gres_columns.column(g.name_id, g.type_id),
                    per_node_need(g, job),
                    g.shared,
                )
            })
            .collect();
        let idle = idle.filter(|_| gres.is_empty());
        NodeCheck {
            min_mem,
            gres,
            idle,
            excluded_cores,
        }
    }

    /// Whether the job may use node `i` now (`check` prepared for it by
    /// [`Self::node_check`]).
    #[inline(always)]
    pub fn node_ok(&self, check: &NodeCheck, usage: &Usage, job: &JobView, i: usize) -> bool {
        let r = &self.recs[i];
        let excluded_ok = || {
            check
                .excluded_cores
                .is_none_or(|e| !e.any_in(r.core_off, r.cores as usize))
        };
        if check.idle.is_some_and(|idle| idle.get(i)) {
            return r.usable_state
                && (!self.params.memory || r.usable_memory() >= check.min_mem)
                && (!job.whole_node || excluded_ok());
        }
        let u = &usage.nodes[i];
        r.usable_state
            && (!self.params.memory
                || (r.usable_memory().saturating_sub(u.alloc_memory) >= check.min_mem
                    && !(job.mem == Mem::PerNode(0) && u.alloc_memory > 0)))
            && (!job.whole_node || (!u.any_gres_used() && excluded_ok()))
            && node_could_satisfy(&check.gres, i)
            && self.sharing_ok(usage, job, i)
    }

    /// Keeps in `cand` the nodes the job may use; `Err` names a required node
    /// that had to be dropped. `idle`, when known, are the idle nodes of
    /// `usage` (see [`ConsTres::is_idle`]): for a job without GRES only
    /// their state, memory and excluded cores are checked, as nothing on
    /// them can fail the other tests.
    pub fn verify_node_state(
        &self,
        usage: &Usage,
        job: &JobView,
        cand: &mut Bits,
        excluded_cores: Option<&Bits>,
        idle: Option<&Bits>,
    ) -> Result<(), String> {
        let check = self.node_check(job, excluded_cores, idle);
        let mut drop = Vec::new();
        for i in cand.ones() {
            if !self.node_ok(&check, usage, job, i) {
                drop.push(i);
            }
        }
        for i in drop {
            cand.clear(i);
            if job.required.as_ref().is_some_and(|r| r.get(i)) {
                return Err(format!(
                    "required node {} is not usable now",
                    self.recs[i].name
                ));
            }
        }
        Ok(())
    }

    /// The sharing rules of spec 2.4 for node `i`.
    fn sharing_ok(&self, usage: &Usage, job: &JobView, i: usize) -> bool {
        let state = usage.nodes[i].node_state;
        let r = &self.recs[i];
        let cores_in = |p: usize| {
            usage.rows[p]
                .rows
                .iter()
                .any(|row| row.cores.any_in(r.core_off, r.cores as usize))
        };
        if state >= NODE_CR_RESERVED as u32 {
            return false;
        }
        let sharing_other = (0..usage.rows.len())
            .any(|p| p as u32 != job.partition && usage.rows[p].num_rows > 1 && cores_in(p));
        if state >= 1 {
            if job.node_req == NODE_CR_RESERVED || job.node_req == NODE_CR_AVAILABLE {
                return false;
            }
            return !sharing_other;
        }
        if job.node_req == NODE_CR_RESERVED {
            return !(0..usage.rows.len()).any(cores_in);
        }
        if job.node_req != NODE_CR_AVAILABLE {
            return !(0..usage.rows.len()).any(|p| usage.rows[p].num_rows > 1 && cores_in(p));
        }
        true
    }
}
