//! [`Policy`]: a select policy over the [`Cluster`] the SDK keeps for it,
//! and [`Managed`], the [`Plugin`] that keeps that cluster.

use std::collections::BTreeMap;

use super::{Export, NodeInfo, Plugin};
use crate::plugin::{HasState, PluginState};
use crate::select::{
    JobTestMode, JobTestRequest, JobTestResult, PluginInfoField, PluginInfoValue,
    ReservationRequest, ReservationResult, SelectConfig,
};
use crate::state::{self, StateWriter};
use crate::types::{
    Bitmap as BitmapRecord, Job, JobResources, JobState, KeyValue, MemoryRequest, Node,
    NodeResources, NodeStateFlags, PluginIdentity,
};
use crate::{codes, host, identity, Bitmap, Error};

/// A select policy over the SDK's [`Cluster`]. Only [`Policy::init`] and
/// [`Policy::job_test`] are required; every other function has the default of a plugin that
/// allocates whole nodes and keeps no state of its own, as Slurm's
/// select/linear (`src/plugins/select/linear/select_linear.c`) where it
/// does nothing policy-specific.
pub trait Policy: Sized + Send + 'static {
    /// `plugin_type`, `select/<name>`.
    const TYPE: &'static str;
    /// `plugin_name`, a human description.
    const NAME: &'static str;

    /// What `describe` answers: [`TYPE`](Self::TYPE) and
    /// [`NAME`](Self::NAME) with this SDK's versions and no required
    /// capabilities ([`crate::identity()`]).
    fn identity() -> PluginIdentity {
        identity(Self::TYPE, Self::NAME)
    }

    /// `init`: the plugin for this configuration (cluster parameters and
    /// the partition table). An error refuses to load (the controller
    /// stops, as with a C plugin whose init fails).
    fn init(config: &SelectConfig) -> Result<Self, Error>;

    /// `fini`, before the value is dropped. Default: nothing.
    fn fini(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// `job-test`: where (and, in will-run mode, when) `request.job`
    /// runs. The modes (`request.mode`):
    ///
    /// * `run-now`: on candidate nodes free now; `ESLURM_NODES_BUSY` when
    ///   none fit now but some would later;
    /// * `test-only`: could it ever run on the candidates, ignoring what
    ///   runs there; `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE` if not;
    /// * `will-run` and `reservation`: the earliest start, from the end
    ///   times of running jobs, with the nodes (`start-time` set).
    ///
    /// The answer's nodes must be candidates; [`Cluster::whole_nodes`]
    /// builds it. `cluster` is the SDK's view of the nodes and jobs.
    fn job_test(
        &mut self,
        cluster: &Cluster,
        request: &JobTestRequest,
    ) -> Result<JobTestResult, Error>;

    /// After the SDK recorded a starting job (`job-begin`; also each job
    /// of `job-init`). Default: nothing.
    fn job_begin(&mut self, _cluster: &Cluster, _job: &Job) -> Result<(), Error> {
        Ok(())
    }

    /// After the SDK forgot an ended job (`job-fini`). Default: nothing.
    fn job_fini(&mut self, _cluster: &Cluster, _job: &Job) -> Result<(), Error> {
        Ok(())
    }

    /// `reconfigure`: the configuration changed (the SDK has rebuilt the
    /// jobs from the running ones). Default: nothing.
    fn reconfigure(&mut self, _config: &SelectConfig) -> Result<(), Error> {
        Ok(())
    }

    /// `get-info-from-plugin(cr-plugin)`: 0 for a plugin that allocates
    /// whole nodes (select/linear's answer), `SELECT_TYPE_CONS_RES` (1)
    /// or `SELECT_TYPE_CONS_TRES` (2) for one that shares nodes by cores.
    fn cr_plugin(&self) -> u32 {
        0
    }

    /// `get-info-from-plugin(config-info)`: the plugin's parameters as
    /// `scontrol show config` lists them. Default: none (select/linear's).
    fn config_info(&self) -> Vec<KeyValue> {
        Vec::new()
    }

    /// `resv-test`: nodes for an advanced reservation. Default:
    /// [`resv_first_nodes`], select/linear's answer.
    fn resv_test(
        &mut self,
        _cluster: &Cluster,
        request: &ReservationRequest,
    ) -> Result<ReservationResult, Error> {
        resv_first_nodes(request)
    }

    /// The plugin's own part of `state-save`. Default: nothing (no bytes).
    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        Ok(Vec::new())
    }

    /// The plugin's own part of `state-restore`, what its `state_save`
    /// wrote; bytes it did not write are refused (`EINVAL`), never
    /// half-applied. Default: accepts the empty state the default
    /// `state_save` writes, refuses anything else.
    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        if data.is_empty() {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "{}: keeps no state, refusing {} bytes",
                Self::TYPE,
                data.len()
            )))
        }
    }
}

/// A job the SDK holds resources for: running or suspended.
#[derive(Debug, Clone)]
pub struct RunningJob {
    /// The job as `job-begin` (or `job-init`, `job-resume`) gave it.
    pub job: Job,
    /// Its resources (`job.resources`, less nodes `job-resized` removed).
    pub resources: JobResources,
    /// Suspended: it keeps its nodes (and memory), not its CPUs.
    pub suspended: bool,
}

impl RunningJob {
    /// The job's planned end (`end-time`; `job-resume` gives the new one).
    pub fn end_time(&self) -> i64 {
        self.job.end_time
    }

    /// Node indices of its allocation, ascending.
    pub fn nodes(&self) -> impl Iterator<Item = u32> + '_ {
        self.resources.per_node.iter().map(|r| r.node_index)
    }
}

/// What the SDK keeps for a select plugin: the configuration, the node
/// table and the running and suspended jobs. Read-only to the plugin,
/// which gets it in [`Policy::job_test`].
#[derive(Debug, Clone)]
pub struct Cluster {
    config: SelectConfig,
    nodes: Vec<Node>,
    jobs: BTreeMap<u32, RunningJob>,
    /// The ids of the jobs holding each node, by node index.
    on_node: Vec<Vec<u32>>,
    now: i64,
}

impl Cluster {
    fn new(config: SelectConfig) -> Self {
        Cluster {
            config,
            nodes: Vec::new(),
            jobs: BTreeMap::new(),
            on_node: Vec::new(),
            now: 0,
        }
    }

    /// The configuration of `init` (or the last `reconfigure`).
    pub fn config(&self) -> &SelectConfig {
        &self.config
    }

    /// The node table (`node-init`, with later node updates), by index.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Node `index`, if the table has it.
    pub fn node(&self, index: u32) -> Option<&Node> {
        self.nodes.get(index as usize)
    }

    /// The running and suspended jobs, by job id.
    pub fn jobs(&self) -> impl Iterator<Item = &RunningJob> {
        self.jobs.values()
    }

    /// Job `job_id`, if it runs or is suspended.
    pub fn job(&self, job_id: u32) -> Option<&RunningJob> {
        self.jobs.get(&job_id)
    }

    /// The host's clock when the current call began (virtual time in a
    /// simulation).
    pub fn now(&self) -> i64 {
        self.now
    }

    /// Jobs holding node `index` (suspended ones too: they keep it).
    pub fn jobs_on(&self, index: u32) -> impl Iterator<Item = &RunningJob> {
        self.on_node
            .get(index as usize)
            .into_iter()
            .flatten()
            .filter_map(|id| self.jobs.get(id))
    }

    /// No running or suspended job holds node `index`.
    pub fn is_idle(&self, index: u32) -> bool {
        self.jobs_on(index).next().is_none()
    }

    /// When node `index` is free: now when idle, else the latest planned
    /// end of the jobs on it (never before now: a job past its end is
    /// still there until `job-fini`); `i64::MAX` while a suspended job
    /// holds it (its end is unknown until it resumes).
    pub fn free_at(&self, index: u32) -> i64 {
        self.jobs_on(index)
            .map(|j| {
                if j.suspended {
                    i64::MAX
                } else {
                    j.end_time().max(self.now)
                }
            })
            .fold(self.now, i64::max)
    }

    /// The times at which nodes become free, ascending and distinct: now,
    /// then each running job's planned end after now. A will-run answer
    /// tries them in order (as Slurm's select/linear `_will_run_test`
    /// removes running jobs by end time until the job fits).
    pub fn end_times(&self) -> Vec<i64> {
        let mut times: Vec<i64> = std::iter::once(self.now)
            .chain(
                self.jobs
                    .values()
                    .filter(|j| !j.suspended)
                    .map(|j| j.end_time().max(self.now)),
            )
            .collect();
        times.sort_unstable();
        times.dedup();
        times
    }

    /// The request's candidate nodes in index order, the job's required
    /// nodes (`-w`) first.
    pub fn candidates(&self, request: &JobTestRequest) -> Vec<u32> {
        let candidates = Bitmap::try_from(&request.candidates).unwrap_or_default();
        let required = required_nodes(&request.job);
        let mut order: Vec<u32> = required
            .iter()
            .copied()
            .filter(|&n| candidates.get(n as usize))
            .collect();
        order.extend(
            candidates
                .ones()
                .map(|n| n as u32)
                .filter(|n| !required.contains(n)),
        );
        order
    }

    /// Whether node `index` could ever hold one node's share of `job`:
    /// its configured CPUs cover `pn-min-cpus`, its memory the job's
    /// memory per node, its `TmpDisk` `--tmp` (the per-node checks of
    /// select/linear's `_job_test`).
    pub fn node_fits(&self, job: &Job, index: u32) -> bool {
        let Some(node) = self.node(index) else {
            return false;
        };
        let d = &job.details;
        u32::from(node.cpus) >= u32::from(d.pn_min_cpus)
            && node.tmp_disk >= d.pn_min_tmp_disk
            && memory_per_node(job, node) <= node.real_memory
    }

    /// Whole nodes for `request` from `order` (nodes the policy offers,
    /// in its preference): every required node, then nodes of `order`
    /// that [`fit`](Self::node_fits) until the job has its `min-nodes`
    /// (at least one) and its `min-cpus`, never more than `max-nodes`.
    /// `None` when `order` cannot give that (a required node missing from
    /// it, too few nodes or CPUs).
    pub fn take_whole_nodes(
        &self,
        request: &JobTestRequest,
        order: impl IntoIterator<Item = u32>,
    ) -> Option<Vec<u32>> {
        let job = &request.job;
        let required = required_nodes(job);
        let want_nodes = request.min_nodes.max(job.details.min_nodes).max(1) as usize;
        let max_nodes = if request.max_nodes == 0 {
            usize::MAX
        } else {
            request.max_nodes as usize
        };
        let want_cpus = u64::from(job.details.min_cpus);
        let mut chosen = required.clone();
        let mut cpus: u64 = chosen.iter().map(|&n| self.cpus(n)).sum();
        // Required nodes offered (and fitting) so far; stop once the job
        // has enough and every required node was seen.
        let mut seen = vec![false; required.len()];
        let mut offered = 0;
        for n in order {
            let enough = chosen.len() >= want_nodes && cpus >= want_cpus;
            if enough && offered == required.len() {
                break;
            }
            if !self.node_fits(job, n) {
                continue;
            }
            if let Ok(at) = required.binary_search(&n) {
                if !std::mem::replace(&mut seen[at], true) {
                    offered += 1;
                }
            } else if !enough {
                chosen.push(n);
                cpus += self.cpus(n);
            }
        }
        let enough = chosen.len() >= want_nodes && cpus >= want_cpus;
        (offered == required.len() && enough && chosen.len() <= max_nodes).then(|| {
            chosen.sort_unstable();
            chosen
        })
    }

    fn cpus(&self, index: u32) -> u64 {
        self.node(index).map_or(0, |n| u64::from(n.cpus))
    }

    /// The `job-test-result` of `request.job` on whole `nodes` (node
    /// indices): every core and CPU of each node, the job's memory per
    /// node (0 without a memory request), `start_time` for a will-run
    /// answer, no preemptees.
    pub fn whole_nodes(
        &self,
        request: &JobTestRequest,
        nodes: &[u32],
        start_time: Option<i64>,
    ) -> JobTestResult {
        let mut sorted = nodes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let per_node: Vec<NodeResources> = sorted
            .iter()
            .filter_map(|&i| self.node(i).map(|node| whole_node(&request.job, node)))
            .collect();
        let len = request.candidates.len.max(self.nodes.len() as u32) as usize;
        let map = Bitmap::from_bits(len, per_node.iter().map(|r| r.node_index as usize));
        JobTestResult {
            resources: JobResources {
                nodes: map.into(),
                ncpus: per_node.iter().map(|r| u32::from(r.cpus)).sum(),
                per_node,
                whole_nodes: true,
            },
            start_time,
            preemptees: Vec::new(),
        }
    }

    /// What `sinfo` shows of node `index`: the CPUs of running jobs there
    /// (a whole node's CPUs at most) and the memory of running and
    /// suspended ones.
    pub fn nodeinfo(&self, index: u32) -> NodeInfo {
        let mut cpus: u32 = 0;
        let mut memory: u64 = 0;
        for job in self.jobs_on(index) {
            for r in job
                .resources
                .per_node
                .iter()
                .filter(|r| r.node_index == index)
            {
                if !job.suspended {
                    cpus += u32::from(r.cpus);
                }
                memory += r.memory;
            }
        }
        let limit = self.node(index).map_or(0, |n| u32::from(n.cpus));
        let cpus = cpus.min(limit) as u16;
        NodeInfo::allocated(cpus, memory)
    }

    fn begin(&mut self, job: &Job, suspended: bool) -> Result<(), Error> {
        let Some(resources) = job.resources.clone() else {
            return Err(Error::invalid(format!(
                "job {} has no resources: job-begin and job-init take jobs with their allocation",
                job.job_id
            )));
        };
        self.remove(job.job_id);
        for r in &resources.per_node {
            let index = r.node_index as usize;
            if self.on_node.len() <= index {
                self.on_node.resize_with(index + 1, Vec::new);
            }
            self.on_node[index].push(job.job_id);
        }
        self.jobs.insert(
            job.job_id,
            RunningJob {
                job: job.clone(),
                resources,
                suspended,
            },
        );
        Ok(())
    }

    /// Forgets job `job_id` (nothing when unknown).
    fn remove(&mut self, job_id: u32) {
        if let Some(old) = self.jobs.remove(&job_id) {
            for n in old.nodes() {
                self.unlink(job_id, n);
            }
        }
    }

    /// Takes job `job_id` off node `index`'s list.
    fn unlink(&mut self, job_id: u32, index: u32) {
        if let Some(ids) = self.on_node.get_mut(index as usize) {
            ids.retain(|&id| id != job_id);
        }
    }

    /// Forgets every job.
    fn clear_jobs(&mut self) {
        self.jobs.clear();
        self.on_node.clear();
    }
}

/// The job's required nodes (`-w`), ascending.
fn required_nodes(job: &Job) -> Vec<u32> {
    job.details
        .required_nodes
        .as_ref()
        .and_then(|m| Bitmap::try_from(m).ok())
        .map(|m| m.ones().map(|n| n as u32).collect())
        .unwrap_or_default()
}

/// MB of memory `job` asks for on `node`: `--mem`, or `--mem-per-cpu`
/// times the node's CPUs (a whole node's); 0 for none (or `--mem=0`,
/// "all of it", which a whole node has).
fn memory_per_node(job: &Job, node: &Node) -> u64 {
    match job.details.memory {
        MemoryRequest::None => 0,
        MemoryRequest::PerNode(mb) => mb,
        MemoryRequest::PerCpu(mb) => mb.saturating_mul(u64::from(node.cpus)),
    }
}

/// Every core and CPU of `node` for `job`.
fn whole_node(job: &Job, node: &Node) -> NodeResources {
    let cores = usize::from(node.sockets) * usize::from(node.cores_per_socket);
    NodeResources {
        node_index: node.index,
        cores: Bitmap::full(cores).into(),
        cpus: node.cpus,
        memory: memory_per_node(job, node).min(node.real_memory),
        gres: Vec::new(),
    }
}

fn bitmap(record: &BitmapRecord, what: &str) -> Result<Bitmap, Error> {
    Bitmap::try_from(record).map_err(|e| Error::invalid(format!("{what}: {}", e.message)))
}

/// The magic of a [`Managed`] plugin's state blob ([`crate::state`]),
/// whose body is the policy's own bytes. Version 1 was the SDK's framing
/// before [`crate::state`]; it is no longer read.
const STATE_MAGIC: [u8; 4] = *b"SWSP";
const STATE_VERSION: u16 = 2;

/// The state blob around the policy's bytes.
fn wrap_state(policy: &[u8]) -> Vec<u8> {
    let mut blob = StateWriter::new(STATE_MAGIC, STATE_VERSION);
    blob.body().bytes(policy);
    blob.finish()
}

/// The policy's bytes of a blob [`wrap_state`] wrote; `EINVAL` naming
/// `plugin_type` for anything else (another magic or version, a damaged
/// or truncated copy).
fn unwrap_state<'a>(plugin_type: &'a str, data: &'a [u8]) -> Result<&'a [u8], Error> {
    let (_, mut body) = state::open(data, STATE_MAGIC, &[STATE_VERSION], plugin_type)?;
    let policy = body.bytes("policy state")?;
    body.finish()?;
    Ok(policy)
}

/// A [`Policy`] with the SDK's [`Cluster`]: the [`Plugin`] that
/// `export_select!(policy P)` exports. It keeps the node table and the
/// running and suspended jobs, and asks the policy only where a policy
/// decides.
pub struct Managed<P> {
    policy: P,
    cluster: Cluster,
}

impl<P: Policy> Managed<P> {
    /// The policy.
    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// The SDK's view of the cluster.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The cluster with the host's clock read, for a call that asks the
    /// policy.
    fn now(&mut self) -> &mut Self {
        self.cluster.now = host::now();
        self
    }
}

/// The static a [`Managed`] policy lives in: implemented for the policy
/// type by `export_select!(policy T)`, never by hand (the SDK cannot
/// implement [`HasState`] for `Managed<T>` in the plugin's crate).
#[doc(hidden)]
pub trait HasManaged: Policy {
    fn managed() -> &'static PluginState<Managed<Self>>;
}

impl<P: HasManaged> HasState for Managed<P> {
    fn state() -> &'static PluginState<Self> {
        P::managed()
    }
}

/// Implements [`HasManaged`] for `$ty` with a static of its own.
#[doc(hidden)]
#[macro_export]
macro_rules! __select_managed {
    ($ty:ty) => {
        impl $crate::select::HasManaged for $ty {
            fn managed() -> &'static $crate::plugin::PluginState<$crate::select::Managed<Self>> {
                static STATE: $crate::plugin::PluginState<$crate::select::Managed<$ty>> =
                    $crate::plugin::PluginState::new();
                &STATE
            }
        }
    };
}

impl<P: Policy> Export<Managed<P>>
where
    Managed<P>: HasState,
{
    /// The SDK's view of the cluster of the exported instance, for native
    /// tests: `f` on it.
    pub fn with_cluster<R>(f: impl FnOnce(&Cluster) -> R) -> Result<R, Error> {
        Managed::<P>::state().with(P::TYPE, |m| Ok(f(&m.cluster)))
    }
}

impl<P: Policy> Plugin for Managed<P> {
    const TYPE: &'static str = P::TYPE;
    const NAME: &'static str = P::NAME;

    fn identity() -> PluginIdentity {
        P::identity()
    }

    fn init(config: &SelectConfig) -> Result<Self, Error> {
        Ok(Managed {
            policy: P::init(config)?,
            cluster: Cluster::new(config.clone()),
        })
    }

    fn fini(&mut self) -> Result<(), Error> {
        self.policy.fini()
    }

    /// The policy's bytes in the SDK's state blob.
    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        Ok(wrap_state(&self.policy.state_save()?))
    }

    /// Only a blob [`Managed::state_save`] wrote; the policy's bytes go to
    /// its `state_restore`.
    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        self.policy.state_restore(unwrap_state(P::TYPE, data)?)
    }

    /// Records each running or suspended job with its resources (others
    /// are skipped), then tells the policy.
    fn job_init(&mut self, jobs: &[Job]) -> Result<(), Error> {
        let m = self.now();
        for job in jobs {
            let suspended = match job.state {
                JobState::Running => false,
                JobState::Suspended => true,
                _ => continue,
            };
            m.cluster.begin(job, suspended)?;
            m.policy.job_begin(&m.cluster, job)?;
        }
        Ok(())
    }

    /// The node table; forgets every job (`job-init` follows, as in Slurm).
    fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error> {
        self.cluster.nodes = nodes.to_vec();
        self.cluster.clear_jobs();
        Ok(())
    }

    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, Error> {
        let m = self.now();
        m.policy.job_test(&m.cluster, request)
    }

    fn job_begin(&mut self, job: &Job) -> Result<(), Error> {
        let m = self.now();
        m.cluster.begin(job, false)?;
        m.policy.job_begin(&m.cluster, job)
    }

    /// True unless one of the job's nodes is powered down or powering up
    /// (select/linear's `select_p_job_ready`); false for a job that is not
    /// running or suspended.
    fn job_ready(&mut self, job: &Job) -> Result<bool, Error> {
        if !matches!(job.state, JobState::Running | JobState::Suspended) {
            return Ok(false);
        }
        let Some(resources) = &job.resources else {
            return Ok(true);
        };
        let off = NodeStateFlags::POWER_SAVE | NodeStateFlags::POWERING_UP;
        Ok(!resources.per_node.iter().any(|r| {
            self.cluster
                .node(r.node_index)
                .is_some_and(|n| n.state.flags.intersects(off))
        }))
    }

    /// Takes node `node-index` out of the job's resources.
    fn job_resized(&mut self, job: &Job, node_index: u32) -> Result<(), Error> {
        let Some(running) = self.cluster.jobs.get_mut(&job.job_id) else {
            return Ok(());
        };
        let r = &mut running.resources;
        if let Some(pos) = r.per_node.iter().position(|e| e.node_index == node_index) {
            let removed = r.per_node.remove(pos);
            r.ncpus = r.ncpus.saturating_sub(u32::from(removed.cpus));
            let mut nodes = bitmap(&r.nodes, "job-resized")?;
            nodes.clear(node_index as usize);
            r.nodes = nodes.into();
            self.cluster.unlink(job.job_id, node_index);
        }
        Ok(())
    }

    /// Forgets the job (an unknown one is no error, as a job that ended
    /// twice), then tells the policy.
    fn job_fini(&mut self, job: &Job) -> Result<(), Error> {
        let m = self.now();
        m.cluster.remove(job.job_id);
        m.policy.job_fini(&m.cluster, job)
    }

    fn job_suspend(&mut self, job: &Job, _indefinite: bool) -> Result<(), Error> {
        if let Some(running) = self.cluster.jobs.get_mut(&job.job_id) {
            running.suspended = true;
        }
        Ok(())
    }

    /// Resumes the job with its new planned end.
    fn job_resume(&mut self, job: &Job, _indefinite: bool) -> Result<(), Error> {
        if let Some(running) = self.cluster.jobs.get_mut(&job.job_id) {
            running.suspended = false;
            running.job.end_time = job.end_time;
        }
        Ok(())
    }

    /// The new configuration, the jobs rebuilt from `running`, then the
    /// policy's `reconfigure`.
    fn reconfigure(&mut self, config: &SelectConfig, running: &[Job]) -> Result<(), Error> {
        let m = self.now();
        m.cluster.config = config.clone();
        m.cluster.clear_jobs();
        for job in running {
            let suspended = job.state == JobState::Suspended;
            if job.resources.is_some() {
                m.cluster.begin(job, suspended)?;
            }
        }
        m.policy.reconfigure(&m.cluster.config)
    }

    fn update_node_config(&mut self, node: &Node) -> Result<(), Error> {
        update_node(&mut self.cluster, node)
    }

    fn update_node_state(&mut self, node: &Node) -> Result<(), Error> {
        update_node(&mut self.cluster, node)
    }

    /// Nothing to do: [`Cluster::nodeinfo`] is computed from the jobs when
    /// asked for.
    fn nodeinfo_set_all(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// Nothing to do (see [`Managed::nodeinfo_set_all`]).
    fn nodeinfo_set(&mut self, _job: &Job) -> Result<(), Error> {
        Ok(())
    }

    fn node_nodeinfo(&mut self, node_index: u32) -> Result<NodeInfo, Error> {
        Ok(self.cluster.nodeinfo(node_index))
    }

    /// `cr-plugin` and `config-info` from the policy; `single-job-test`:
    /// false (select/linear's and select/cons_tres's answer).
    fn get_info_from_plugin(
        &mut self,
        field: PluginInfoField,
        _job: Option<&Job>,
    ) -> Result<PluginInfoValue, Error> {
        Ok(match field {
            PluginInfoField::CrPlugin => PluginInfoValue::Number(self.policy.cr_plugin()),
            PluginInfoField::ConfigInfo => PluginInfoValue::Config(self.policy.config_info()),
            PluginInfoField::SingleJobTest => PluginInfoValue::Flag(false),
        })
    }

    fn resv_test(&mut self, request: &ReservationRequest) -> Result<ReservationResult, Error> {
        let m = self.now();
        m.policy.resv_test(&m.cluster, request)
    }
}

/// Replaces node `node.index` in the table (`EINVAL` for an index past it).
fn update_node(cluster: &mut Cluster, node: &Node) -> Result<(), Error> {
    let count = cluster.nodes.len();
    match cluster.nodes.get_mut(node.index as usize) {
        Some(slot) => {
            *slot = node.clone();
            Ok(())
        }
        None => Err(Error::invalid(format!(
            "node update for index {} of a {count}-node table",
            node.index
        ))),
    }
}

/// select/linear's `resv-test` (`select_p_resv_test`, which picks with
/// `bit_pick_cnt`): the first `node-count` available nodes in index order
/// and no cores, so a request for cores only gets no nodes, successfully.
/// `ESLURM_NODES_BUSY` when too few nodes are available, `EINVAL` for an
/// `available` bitmap that is not one.
pub fn resv_first_nodes(request: &ReservationRequest) -> Result<ReservationResult, Error> {
    let available = bitmap(&request.available, "resv-test available")?;
    let want = request.node_count as usize;
    if available.count() < want {
        return Err(Error::new(
            codes::ESLURM_NODES_BUSY,
            format!(
                "resv-test: {want} nodes wanted, {} available",
                available.count()
            ),
        ));
    }
    let nodes = Bitmap::from_bits(available.len(), available.ones().take(want));
    Ok(ReservationResult {
        nodes: nodes.into(),
        cores: None,
    })
}

/// The test-only and run-now errors a policy answers when a job does not
/// fit: `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE` (never on these
/// candidates) or `ESLURM_NODES_BUSY` (not now).
pub fn no_fit(mode: JobTestMode, job_id: u32) -> Error {
    match mode {
        JobTestMode::RunNow => Error::new(
            codes::ESLURM_NODES_BUSY,
            format!("job {job_id}: no candidate nodes free now"),
        ),
        _ => Error::new(
            codes::ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE,
            format!("job {job_id}: the candidate nodes cannot hold the job"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::select::{JobTestFlags, JobTestMode};
    use crate::testkit::fixtures;

    /// Three nodes n0..n2: 4, 8 and 4 CPUs, 4000 MB each.
    fn cluster() -> Cluster {
        let mut c = Cluster::new(SelectConfig {
            cluster: fixtures::cluster_config(),
            partitions: Vec::new(),
        });
        c.nodes = vec![
            fixtures::node(0, "n0", 1, 4, 1, 4000),
            fixtures::node(1, "n1", 2, 4, 1, 4000),
            fixtures::node(2, "n2", 1, 4, 1, 4000),
        ];
        c.now = 1000;
        c
    }

    fn request(job: Job, min_nodes: u32, max_nodes: u32) -> JobTestRequest {
        JobTestRequest {
            job,
            candidates: Bitmap::full(3).into(),
            min_nodes,
            max_nodes,
            req_nodes: min_nodes,
            mode: JobTestMode::RunNow,
            flags: JobTestFlags::empty(),
            preemptee_candidates: Vec::new(),
            excluded_cores: None,
        }
    }

    /// Starts job `id` on whole `nodes`, ending at `end`.
    fn start(c: &mut Cluster, id: u32, nodes: &[u32], end: i64) {
        let mut job = fixtures::job(id);
        let placed = c.whole_nodes(&request(job.clone(), 1, 0), nodes, None);
        job.state = JobState::Running;
        job.end_time = end;
        job.resources = Some(placed.resources);
        c.begin(&job, false).unwrap();
    }

    #[test]
    fn take_whole_nodes_meets_min_nodes_and_min_cpus_within_max_nodes() {
        let c = cluster();
        let mut job = fixtures::job(1);
        // -n 10: 4 + 8 CPUs, two nodes, in the order given.
        job.details.min_cpus = 10;
        assert_eq!(
            c.take_whole_nodes(&request(job.clone(), 1, 0), [0, 1, 2]),
            Some(vec![0, 1])
        );
        assert_eq!(
            c.take_whole_nodes(&request(job.clone(), 1, 0), [2, 1]),
            Some(vec![1, 2])
        );
        // At most one node: no single node has 10 CPUs.
        assert_eq!(c.take_whole_nodes(&request(job, 1, 1), [0, 1, 2]), None);
        // --mem=5000 fits no node; --mem-per-cpu=600 only the 4-CPU ones.
        let mut big = fixtures::job(2);
        big.details.memory = MemoryRequest::PerNode(5000);
        assert_eq!(c.take_whole_nodes(&request(big, 1, 0), [0, 1, 2]), None);
        let mut per_cpu = fixtures::job(3);
        per_cpu.details.memory = MemoryRequest::PerCpu(600);
        assert_eq!(
            c.take_whole_nodes(&request(per_cpu, 2, 0), [0, 1, 2]),
            Some(vec![0, 2])
        );
        // -w n2 is taken first, and must be offered.
        let mut pinned = fixtures::job(4);
        pinned.details.required_nodes = Some(Bitmap::from_bits(3, [2]).into());
        let r = request(pinned, 1, 0);
        assert_eq!(c.candidates(&r), vec![2, 0, 1]);
        assert_eq!(c.take_whole_nodes(&r, [0, 1, 2]), Some(vec![2]));
        assert_eq!(c.take_whole_nodes(&r, [0, 1]), None);
    }

    #[test]
    fn whole_nodes_give_every_core_and_cpu() {
        let c = cluster();
        let result = c.whole_nodes(&request(fixtures::job(1), 2, 0), &[1, 0], Some(5));
        let r = &result.resources;
        assert_eq!(r.ncpus, 12);
        assert!(r.whole_nodes);
        assert_eq!(
            Bitmap::try_from(&r.nodes)
                .unwrap()
                .ones()
                .collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert_eq!(r.per_node[1].node_index, 1);
        assert_eq!(r.per_node[1].cpus, 8);
        assert_eq!(Bitmap::try_from(&r.per_node[1].cores).unwrap().count(), 8);
        assert_eq!(result.start_time, Some(5));
    }

    #[test]
    fn free_times_follow_running_and_suspended_jobs() {
        let mut c = cluster();
        start(&mut c, 1, &[0], 2000);
        start(&mut c, 2, &[1], 500); // past its end: still there until job-fini
        assert!(!c.is_idle(0) && c.is_idle(2));
        assert_eq!(c.free_at(0), 2000);
        assert_eq!(c.free_at(1), 1000);
        assert_eq!(c.free_at(2), 1000);
        assert_eq!(c.end_times(), vec![1000, 2000]);
        c.jobs.get_mut(&1).unwrap().suspended = true;
        assert_eq!(c.free_at(0), i64::MAX);
        assert_eq!(c.end_times(), vec![1000]);
        // A suspended job keeps its memory, not its CPUs, in nodeinfo.
        assert_eq!(c.nodeinfo(0).alloc_cpus, 0);
        assert_eq!(c.nodeinfo(1).alloc_cpus, 8);
        assert_eq!(c.nodeinfo(1).tres_alloc_fmt_str.as_deref(), Some("cpu=8"));
        // A job begun again (a restart's replay) is held once; a job
        // forgotten frees its nodes.
        start(&mut c, 2, &[1, 2], 3000);
        assert_eq!(c.jobs_on(1).count(), 1);
        assert_eq!(c.free_at(2), 3000);
        c.remove(2);
        assert!(c.is_idle(1) && c.is_idle(2));
        assert_eq!(c.jobs().count(), 1);
    }

    #[test]
    fn state_blob_wraps_and_refuses_others() {
        let blob = wrap_state(b"abc");
        assert_eq!(unwrap_state("select/x", &blob).unwrap(), b"abc");
        assert_eq!(unwrap_state("select/x", &wrap_state(&[])).unwrap(), b"");
        for bad in [&b""[..], b"\xffgarbage", &blob[..blob.len() - 1]] {
            let e = unwrap_state("select/x", bad).unwrap_err();
            assert_eq!(e.code, codes::EINVAL);
        }
    }
}
