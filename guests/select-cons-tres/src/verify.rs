//! `_verify_node_state` (cons_common/job_test.c): drops nodes the job cannot use given
//! memory, whole-node, GRES and sharing state. Not run in TEST_ONLY.

use slurm_wasm_sdk::Bitmap;
use smallvec::SmallVec;

use crate::gres_sched::{node_could_satisfy, per_node_need};
use crate::node_usage::{GresColumn, NODE_CR_AVAILABLE, NODE_CR_RESERVED};
use crate::request::{JobView, Mem};
use crate::{num_rows, ConsTres, Usage};

/// `_verify_node_state`'s test of one node for one job, prepared once per
/// test: the memory a node must have free, the job's GRES columns and
/// needs, the idle nodes (see [`ConsTres::verify_node_state`]), the
/// excluded cores and how many last rows of each partition the sharing
/// rules leave out (the extra row of `preempt/qos` unless the job is a QOS
/// preemptor, see [`crate::job_test::TestAs::qos_preemptor`]).
pub struct NodeCheck<'a> {
    min_mem: u64,
    gres: SmallVec<[(Option<GresColumn<'a>>, u64, bool); 2]>,
    idle: Option<&'a Bitmap>,
    excluded_cores: Option<&'a Bitmap>,
    hidden_rows: usize,
    /// Whether some partition keeps two rows or more in view: only then
    /// can another partition's sharing jobs keep a job that does not share
    /// off a node.
    sharing_partitions: bool,
}

impl ConsTres {
    /// Prepares the per-node test of [`Self::verify_node_state`] for a test
    /// whose job is a QOS preemptor or not (see
    /// [`crate::job_test::TestAs::qos_preemptor`]).
    pub fn node_check<'a>(
        &'a self,
        job: &JobView,
        excluded_cores: Option<&'a Bitmap>,
        idle: Option<&'a Bitmap>,
        qos_preemptor: bool,
    ) -> NodeCheck<'a> {
        let hidden_rows = usize::from(self.params.preempt_by_qos && !qos_preemptor);
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
            hidden_rows,
            sharing_partitions: self
                .partitions
                .iter()
                .any(|p| num_rows(p, self.params.preempt_by_qos) >= 2 + hidden_rows),
        }
    }

    /// Whether the job may use node `i` now (`check` prepared for it by
    /// [`Self::node_check`]).
    #[inline(always)]
    pub fn node_ok(&self, check: &NodeCheck<'_>, usage: &Usage, job: &JobView, i: usize) -> bool {
        let r = &self.recs[i];
        let excluded_ok = || {
            check
                .excluded_cores
                .is_none_or(|e| !e.any_in(r.core_off, r.cores as usize))
        };
        if check.idle.is_some_and(|idle| idle.get(i)) {
            return (!self.params.memory || r.usable_memory() >= check.min_mem)
                && (!job.whole_node || excluded_ok());
        }
        let u = &usage.nodes[i];
        (!self.params.memory
            || (r.usable_memory().saturating_sub(u.alloc_memory) >= check.min_mem
                && !(job.mem == Mem::PerNode(0) && u.alloc_memory > 0)))
            && (!job.whole_node || (!u.any_gres_used() && excluded_ok()))
            && node_could_satisfy(&check.gres, i)
            && self.sharing_ok(check, usage, job, i)
    }

    /// Keeps in `cand` the nodes the job may use; `Err` names a required node
    /// that had to be dropped. `idle`, when known, are the idle nodes of
    /// `usage` (see [`ConsTres::is_idle`]): for a job without GRES only
    /// their state, memory and excluded cores are checked, as nothing on
    /// them can fail the other tests. `qos_preemptor` is the test's flag
    /// (see [`crate::job_test::TestAs::qos_preemptor`]).
    pub fn verify_node_state(
        &self,
        usage: &Usage,
        job: &JobView,
        cand: &mut Bitmap,
        excluded_cores: Option<&Bitmap>,
        idle: Option<&Bitmap>,
        qos_preemptor: bool,
    ) -> Result<(), String> {
        let check = self.node_check(job, excluded_cores, idle, qos_preemptor);
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

    /// The sharing rules for node `i` (`_verify_node_state`,
    /// cons_common/job_test.c:740-786), reading the rows as
    /// [`Self::node_busy`] does with `check`'s hidden rows. A node held exclusively
    /// is refused; one running a job that does not share (`node_state` at
    /// least NODE_CR_ONE_ROW) is left only to a job that does not share
    /// either. On a node in neither state an exclusive job
    /// (NODE_CR_RESERVED) needs no partition to hold a core of it. A job
    /// that does not share (NODE_CR_ONE_ROW) needs, in either state, no
    /// other partition of two rows or more to hold a core of it: its own
    /// partition's sharing jobs do not keep it off the node (on the anchor,
    /// with `OverSubscribe=YES:2`, `-w n1 -n2` ran on n1 beside an
    /// `--oversubscribe` job of the same partition).
    fn sharing_ok(&self, check: &NodeCheck<'_>, usage: &Usage, job: &JobView, i: usize) -> bool {
        let state = usage.nodes[i].node_state;
        let hidden_rows = check.hidden_rows;
        let sharing_elsewhere = || {
            check.sharing_partitions && self.node_busy(usage, i, hidden_rows, Some(job.partition))
        };
        if state >= NODE_CR_RESERVED as u32 {
            return false;
        }
        match job.node_req {
            NODE_CR_RESERVED => state == 0 && !self.node_busy(usage, i, hidden_rows, None),
            NODE_CR_AVAILABLE => state == 0,
            _ => !sharing_elsewhere(),
        }
    }

    /// `_is_node_busy` (cons_common/job_test.c:400-450): whether a core of
    /// node `i` is in the rows of a partition. Of each partition only the
    /// rows before its `hidden_rows` last are read: `hidden_rows` is 1
    /// under `preempt/qos` for a test whose job is not a QOS preemptor (the
    /// extra row of [`crate::num_rows`], "don't use extra row"), 0
    /// otherwise. With `sharing_except` (Slurm's `sharing_only`, with the
    /// job's partition) a partition counts only when that leaves it two
    /// rows or more and it is not the one named.
    fn node_busy(
        &self,
        usage: &Usage,
        i: usize,
        hidden_rows: usize,
        sharing_except: Option<u32>,
    ) -> bool {
        let r = &self.recs[i];
        usage.rows.iter().enumerate().any(|(p, part)| {
            let rows = part.rows.len().saturating_sub(hidden_rows);
            let counts = sharing_except.is_none_or(|own| rows >= 2 && own != p as u32);
            counts
                && part.rows[..rows]
                    .iter()
                    .any(|row| row.cores.any_in(r.core_off, r.cores as usize))
        })
    }
}

#[cfg(test)]
mod tests;
