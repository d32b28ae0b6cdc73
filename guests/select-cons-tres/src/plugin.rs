//! The `select-plugin` world export of select/cons_tres.
//!
//! One component serves both `select/cons_tres` and `select/cons_res`:
//! `describe` reports cons_tres (the file the host bundles), and `init`
//! reads `SelectType` from `cluster-config.raw`; when it is
//! `select/cons_res` the instance refuses GPU-specific options
//! (`--gpus`, `--gpus-per-*`, `--cpus-per-gpu`, `--mem-per-gpu`, gres/mps)
//! with `ESLURM_UNSUPPORTED_GRES`, `get-info-from-plugin(cr-plugin)` answers
//! 1 instead of 2 and `single-job-test` false instead of true. The host
//! therefore only needs to load this component for either name and pass
//! the configured `SelectType` in `raw`.

use select_common::nodeinfo::{no_change, NodeInfo, NodeInfoTable};
use slurm_wasm_sdk::codes::{EINVAL, ESLURM_NODES_BUSY};
use slurm_wasm_sdk::select::{
    JobTestRequest, JobTestResult, Plugin, PluginInfoField, PluginInfoValue, ReservationRequest,
    ReservationResult, SelectConfig,
};
use slurm_wasm_sdk::types::{Job, JobResources, JobState, Node, PluginIdentity};
use slurm_wasm_sdk::{host, identity, Bitmap, Error};

use crate::params::Params;
use crate::ConsTres;

/// `plugin_id` of select/cons_tres.
pub const CONS_TRES_ID: u32 = 109;

/// select/cons_tres as the SDK's [`select::Plugin`](Plugin): the placement
/// tables and the `sinfo` table the controller reads through
/// `node-nodeinfo`.
pub struct ConsTresPlugin {
    algo: ConsTres,
    nodeinfo: NodeInfoTable,
}

impl ConsTresPlugin {
    /// The placement tables.
    pub fn algo(&self) -> &ConsTres {
        &self.algo
    }
}

fn err(e: String) -> Error {
    Error::new(EINVAL, e)
}

/// Builds the instance from the `init` configuration.
pub fn instance_from(config: &SelectConfig) -> Result<ConsTres, Error> {
    let c = &config.cluster;
    let mut params = Params::from_flags(c.select_type_parameters).map_err(err)?;
    params
        .apply_scheduler(&c.scheduler_parameters, c.preempt_mode)
        .map_err(err)?;
    params.over_time_limit = c.over_time_limit;
    params.kill_wait = c.kill_wait;
    params.def_cpu_per_gpu = c.gpu_defaults.cpus_per_gpu;
    params.def_mem_per_gpu = c.gpu_defaults.mem_per_gpu;
    // 22.05 tests the preempt type's name for "partition" and for "qos"
    // (cons_common.c:1137-1146).
    let preempt_type_has = |word: &str| {
        c.raw.iter().any(|kv| {
            kv.key.eq_ignore_ascii_case("PreemptType")
                && kv.value.to_ascii_lowercase().contains(word)
        })
    };
    params.preempt_by_part = preempt_type_has("partition");
    params.preempt_by_qos = preempt_type_has("qos");
    params.cons_res = c.raw.iter().any(|kv| {
        kv.key.eq_ignore_ascii_case("SelectType") && kv.value.trim() == "select/cons_res"
    });
    Ok(ConsTres::new(
        params,
        config.partitions.clone(),
        c.default_memory,
    ))
}

impl ConsTres {
    /// `select_p_get_info_from_plugin` (cons_common.c): `cr-plugin` is
    /// SELECT_TYPE_CONS_TRES (2) or SELECT_TYPE_CONS_RES (1),
    /// `single-job-test` is true for cons_tres only, `config-info` an empty
    /// list (Slurm's answers a NULL list).
    pub fn info(&self, field: PluginInfoField) -> PluginInfoValue {
        match field {
            PluginInfoField::CrPlugin => {
                PluginInfoValue::Number(if self.params.cons_res { 1 } else { 2 })
            }
            PluginInfoField::SingleJobTest => PluginInfoValue::Flag(!self.params.cons_res),
            PluginInfoField::ConfigInfo => PluginInfoValue::Config(Vec::new()),
        }
    }

    /// `select_p_job_ready` (cons_common.c:1194): ready when the job is
    /// RUNNING or SUSPENDED and none of its nodes is powered down or
    /// powering up (a job without nodes is ready). A node index the table
    /// does not have counts as not ready.
    pub fn job_ready(&self, job: &Job) -> bool {
        if !matches!(job.state, JobState::Running | JobState::Suspended) {
            return false;
        }
        job.resources.as_ref().is_none_or(|res| {
            res.per_node.iter().all(|n| {
                self.recs
                    .get(n.node_index as usize)
                    .is_some_and(|r| !r.powered_down)
            })
        })
    }

    /// The nodeinfo of node `i` from the usage tables.
    pub fn nodeinfo_of(&self, i: usize) -> NodeInfo {
        let r = &self.recs[i];
        let mut used = Bitmap::new(r.cores as usize);
        for p in &self.usage.rows {
            for row in &p.rows {
                used.or(&row.cores.extract(r.core_off, r.cores as usize));
            }
        }
        let cpus = (used.count() as u32 * r.tpc as u32).min(r.cpus()) as u16;
        let mem = self.usage.nodes[i].alloc_memory;
        NodeInfo::with_tres(cpus, mem, cpus, mem)
    }
}

/// Those Slurm's cons_tres leaves empty (`job-signal`, `job-mem-confirm`,
/// `step-finish`, `update-node-config`, `node-ranking`, `ba-init`,
/// `ba-get-dims`) keep the SDK's defaults, which do the same; cons_tres lets
/// the controller pick step nodes (`step-pick-nodes`: `none`).
impl Plugin for ConsTresPlugin {
    const TYPE: &'static str = "select/cons_tres";
    const NAME: &'static str = "Trackable RESources (TRES) Selection plugin";
    /// Slurm's cons_tres allows job expansion.
    const EXPAND_ALLOWED: bool = true;

    fn identity() -> PluginIdentity {
        PluginIdentity {
            plugin_id: Some(CONS_TRES_ID),
            ..identity(Self::TYPE, Self::NAME)
        }
    }

    /// Parses the configuration; fails (`EINVAL`) on `SelectTypeParameters`
    /// Slurm refuses (see [`Params::from_flags`]).
    fn init(config: &SelectConfig) -> Result<Self, Error> {
        Ok(ConsTresPlugin {
            algo: instance_from(config)?,
            nodeinfo: NodeInfoTable::default(),
        })
    }

    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        Ok(self.algo.state_save())
    }

    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        self.algo.state_restore(data).map_err(err)
    }

    /// Rebuilds the tables from the running and suspended jobs.
    fn job_init(&mut self, jobs: &[Job]) -> Result<(), Error> {
        self.algo.rebuild(jobs).map_err(err)
    }

    fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error> {
        self.algo.node_init(nodes).map_err(err)?;
        self.nodeinfo.clear();
        Ok(())
    }

    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, Error> {
        self.algo.job_test(request, host::now())
    }

    /// Adds the job to the tables (see [`crate::transitions`] for the mapping).
    fn job_begin(&mut self, job: &Job) -> Result<(), Error> {
        self.algo.add_running(job).map_err(err)
    }

    fn job_ready(&mut self, job: &Job) -> Result<bool, Error> {
        Ok(self.algo.job_ready(job))
    }

    /// Under cons_tres a job holding GRES cannot be merged (Slurm: "has
    /// allocated GRES", `SLURM_ERROR`); cons_res merges them.
    fn job_expand(&mut self, from: &Job, to: &Job) -> Result<JobResources, Error> {
        if !self.algo.params.cons_res {
            if let Some(j) = [to, from].into_iter().find(|j| !j.details.gres.is_empty()) {
                return Err(Error::generic(format!(
                    "job-expand: job {} has allocated GRES",
                    j.job_id
                )));
            }
        }
        let rec = self.algo.job_expand(from.job_id, to.job_id)?;
        Ok(self.algo.to_resources(&rec))
    }

    fn job_resized(&mut self, job: &Job, node_index: u32) -> Result<(), Error> {
        self.algo
            .job_resized(job.job_id, node_index as usize)
            .map_err(err)
    }

    fn job_fini(&mut self, job: &Job) -> Result<(), Error> {
        self.algo.job_fini(job.job_id);
        Ok(())
    }

    fn job_suspend(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        self.algo.job_suspend(job.job_id, indefinite);
        Ok(())
    }

    fn job_resume(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        self.algo.job_resume(job.job_id, job.end_time, indefinite);
        Ok(())
    }

    fn reconfigure(&mut self, config: &SelectConfig, running: &[Job]) -> Result<(), Error> {
        let config = instance_from(config)?;
        self.algo.reconfigure(config, running).map_err(err)
    }

    /// Takes the node's new state: COMPLETING and power saving (which
    /// `job-ready` reads); availability is the candidates' business.
    fn update_node_state(&mut self, node: &Node) -> Result<(), Error> {
        let idx = node.index as usize;
        let Some(old) = self.algo.recs.get(idx) else {
            return Err(Error::new(
                EINVAL,
                format!("update-node-state: node index {idx} is unknown"),
            ));
        };
        let updated = crate::node_usage::NodeRec::from_node(node, old.core_off).map_err(err)?;
        let r = &mut self.algo.recs[idx];
        r.completing = updated.completing;
        r.powered_down = updated.powered_down;
        self.algo.forget_answers();
        Ok(())
    }

    /// Refreshes every node; `SLURM_NO_CHANGE_IN_DATA` when nothing
    /// changed since the last refresh, as Slurm answers.
    fn nodeinfo_set_all(&mut self) -> Result<(), Error> {
        let fresh = (0..self.algo.recs.len())
            .map(|n| self.algo.nodeinfo_of(n))
            .collect();
        if self.nodeinfo.refresh(fresh) {
            Ok(())
        } else {
            Err(no_change())
        }
    }

    /// Adds a job the tables do not know yet, then refreshes its nodes.
    fn nodeinfo_set(&mut self, job: &Job) -> Result<(), Error> {
        self.algo.add_running(job).map_err(err)?;
        if let Some(res) = &job.resources {
            for n in &res.per_node {
                let idx = n.node_index as usize;
                if idx < self.algo.recs.len() {
                    self.nodeinfo.set(idx, self.algo.nodeinfo_of(idx));
                }
            }
        }
        Ok(())
    }

    /// The node's nodeinfo as last refreshed.
    fn node_nodeinfo(&mut self, node_index: u32) -> Result<NodeInfo, Error> {
        if node_index as usize >= self.algo.recs.len() {
            return Err(Error::new(
                EINVAL,
                format!("node-nodeinfo: node index {node_index} is unknown"),
            ));
        }
        Ok(self.nodeinfo.get(node_index as usize))
    }

    fn get_info_from_plugin(
        &mut self,
        field: PluginInfoField,
        _job: Option<&Job>,
    ) -> Result<PluginInfoValue, Error> {
        Ok(self.algo.info(field))
    }

    fn resv_test(&mut self, request: &ReservationRequest) -> Result<ReservationResult, Error> {
        let (nodes, cores) = self.algo.resv_test(request)?;
        Ok(ReservationResult {
            nodes: (&nodes).into(),
            cores: cores.as_ref().map(Into::into),
        })
    }
}

/// `RESERVE_FLAG_FIRST_CORES` (`Flags=FIRST_CORES`): only the first cores
/// of each node.
const RESERVE_FLAG_FIRST_CORES: u64 = 1 << 16;

/// How a core reservation's count is read (`_sequential_pick`).
enum CoreCount<'a> {
    /// One count over `node-count` > 1 nodes: this many cores on each,
    /// plus the remainder (`extra`) on the nodes that have more.
    PerNode { each: u32, extra: i64 },
    /// One count over any number of nodes: nodes in order, as many of
    /// their free cores as are still wanted.
    Total(u32),
    /// Node by node: the i-th node picked holds exactly `counts[i]` cores.
    List(&'a [u32]),
}

impl ConsTres {
    /// `select_p_resv_test` on a flat system (Slurm 22.05's
    /// `_sequential_pick`, or `_pick_first_cores` with `FIRST_CORES`):
    ///
    /// * No core count: the first `node-count` nodes of `available`.
    /// * Cores, from all cores minus `excluded-cores` and specialised
    ///   cores, over the nodes of `available` in index order:
    ///   `cores-per-node` (or one `core-count` with `node-count` ≤ 1) gives
    ///   each picked node its count, a node with fewer skipped; one
    ///   `core-count` over `node-count` > 1 nodes puts `count / nodes` on
    ///   each node with at least that many (the remainder on the first
    ///   ones that have more); one `core-count` without a node count takes
    ///   free cores node after node until the count is met. Each node
    ///   gives its lowest free cores. With `FIRST_CORES` a node qualifies
    ///   only when its first `n` cores are all free.
    ///
    /// `ESLURM_NODES_BUSY` when the request cannot be met; `EINVAL` for
    /// bitmaps of the wrong size.
    ///
    /// One deviation: Slurm's remainder bookkeeping (`extra_cores_needed
    /// -= c_target - c`) never lowers the remainder, and the cores of a
    /// node skipped for having too few stay in its returned core map;
    /// here the remainder goes down by what a node takes beyond its share
    /// and only picked nodes' cores are returned.
    pub fn resv_test(&self, req: &ReservationRequest) -> Result<(Bitmap, Option<Bitmap>), Error> {
        let n = self.recs.len();
        let avail = Bitmap::from_words(req.available.len, &req.available.words)
            .ok()
            .filter(|b| b.len() == n)
            .ok_or_else(|| {
                Error::new(EINVAL, format!("resv-test: available must have {n} bits"))
            })?;
        let busy = |missing: String| Error::new(ESLURM_NODES_BUSY, format!("resv-test: {missing}"));
        let mut nodes = Bitmap::new(n);
        if req.core_count == 0 && req.cores_per_node.is_empty() {
            let picked: Vec<usize> = avail.ones().take(req.node_count as usize).collect();
            if picked.len() < req.node_count as usize {
                return Err(busy(format!(
                    "{} nodes wanted, {} available",
                    req.node_count,
                    picked.len()
                )));
            }
            for i in picked {
                nodes.set(i);
            }
            return Ok((nodes, None));
        }
        let mut free = self.base_avail.clone();
        if let Some(b) = &req.excluded_cores {
            let excl = Bitmap::from_words(b.len, &b.words)
                .ok()
                .filter(|x| x.len() == self.total_cores)
                .ok_or_else(|| {
                    Error::new(
                        EINVAL,
                        format!(
                            "resv-test: excluded-cores must have {} bits",
                            self.total_cores
                        ),
                    )
                })?;
            for c in excl.ones() {
                free.clear(c);
            }
        }
        let single = [req.core_count];
        let list: &[u32] = if req.cores_per_node.is_empty() {
            &single
        } else {
            &req.cores_per_node
        };
        let list = &list[..list.iter().position(|&c| c == 0).unwrap_or(list.len())];
        if list.is_empty() {
            return Err(Error::new(
                EINVAL,
                "resv-test: cores-per-node holds no count above 0",
            ));
        }
        let first_cores = req.flags & RESERVE_FLAG_FIRST_CORES != 0;
        let mut count = match (list, req.node_count) {
            (&[total], nodes) if nodes > 1 && !first_cores => {
                let each = (total / nodes).max(1);
                CoreCount::PerNode {
                    each,
                    extra: i64::from(total) - i64::from(each) * i64::from(nodes),
                }
            }
            (&[total], 0) if !first_cores => CoreCount::Total(total),
            _ => CoreCount::List(list),
        };
        let mut cores = Bitmap::new(self.total_cores);
        let mut nodes_left = i64::from(req.node_count);
        let mut next = 0;
        let mut done = false;
        for i in avail.ones() {
            let r = &self.recs[i];
            let have = free.count_range(r.core_off, r.core_off + r.cores as usize) as u32;
            let take = match &mut count {
                CoreCount::List(counts) => {
                    let want = counts[next];
                    let fits = if first_cores {
                        free.count_range(r.core_off, r.core_off + want as usize) as u32 == want
                            && want <= u32::from(r.cores)
                    } else {
                        have >= want
                    };
                    if !fits {
                        continue;
                    }
                    want
                }
                CoreCount::PerNode { each, extra } => {
                    if have < *each {
                        continue;
                    }
                    let take = if have > *each && *extra > 0 {
                        have.min(*each + *extra as u32)
                    } else {
                        *each
                    };
                    *extra -= i64::from(take - *each);
                    take
                }
                CoreCount::Total(left) => {
                    let take = have.min(*left);
                    *left -= take;
                    take
                }
            };
            let off = r.core_off;
            let taken: Vec<usize> = (off..off + r.cores as usize)
                .filter(|&c| free.get(c))
                .take(take as usize)
                .collect();
            if !taken.is_empty() {
                nodes.set(i);
                nodes_left -= 1;
                for c in taken {
                    cores.set(c);
                }
            }
            done = match &count {
                CoreCount::PerNode { .. } => nodes_left <= 0,
                CoreCount::Total(left) => *left == 0,
                CoreCount::List(counts) => {
                    next += 1;
                    next == counts.len()
                }
            };
            if done {
                break;
            }
        }
        if !done {
            return Err(busy(format!(
                "{} cores on {} nodes cannot be reserved on the available nodes",
                list.iter().sum::<u32>(),
                req.node_count
            )));
        }
        Ok((nodes, Some(cores)))
    }
}

#[cfg(feature = "component")]
slurm_wasm_sdk::export_select!(plugin ConsTresPlugin);

#[cfg(test)]
mod tests;
