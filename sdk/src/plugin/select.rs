//! The select kind as values (see [`crate::plugin`]), at two levels:
//!
//! * [`Plugin`]: every function of the contract, for a plugin that keeps
//!   its own node and job tables, as Slurm's select/linear and
//!   select/cons_tres (`guests/select-linear`, `guests/select-cons-tres`);
//!   exported with `export_select!(plugin T)`.
//! * [`Policy`]: only where jobs go. [`Policy::job_test`] is the one
//!   function it must write; everything else a select plugin has to keep,
//!   the SDK keeps ([`Managed`]) in a [`Cluster`] it hands to `job_test`;
//!   exported with `export_select!(policy T)`:
//!   * the node table (`node-init`, `update-node-config`,
//!     `update-node-state`);
//!   * the running and suspended jobs with their resources (`job-init`,
//!     `job-begin`, `job-fini`, `job-suspend`, `job-resume`, `job-resized`,
//!     `reconfigure`);
//!   * `select-nodeinfo` (what `sinfo` shows as allocated, packed as Slurm
//!     20.11 to 22.05 pack it) refreshed from those jobs, and an empty
//!     `select-jobinfo`, as Slurm's select/linear and select/cons_tres keep;
//!   * the state blob of `state-save`/`state-restore`, around the policy's
//!     own bytes (the node table and the jobs are not in it: after a
//!     controller restart, or a restart of the component, they come back
//!     through `node-init` and `job-init` as in Slurm, whose
//!     `select_p_node_init` and `select_p_job_init` rebuild the plugins'
//!     tables after `slurmctld` recovers its job list:
//!     `src/slurmctld/read_config.c`, `read_slurm_conf`).
//!
//! [`Cluster`] also has what a whole-node policy needs to answer
//! `job-test` in a few lines: [`Cluster::candidates`],
//! [`Cluster::take_whole_nodes`], [`Cluster::is_idle`],
//! [`Cluster::free_at`], [`Cluster::end_times`] and
//! [`Cluster::whole_nodes`] (the `job-test-result`). A first-fit policy is
//! `examples/select-first-fit`.
//!
//! A native caller (a test, the simulator's native mode) holds a
//! [`Plugin`] value and calls its methods: no static state is involved.
//! [`Export`] is the component's adapter over the one instance a
//! component has.
//!
//! The nodeinfo and jobinfo records and their Slurm pack formats are in
//! [`info`].

use std::marker::PhantomData;

pub mod info;
mod policy;

pub use info::{JobInfo, NodeInfo};
#[doc(hidden)]
pub use policy::HasManaged;
pub use policy::{no_fit, resv_first_nodes, Cluster, Managed, Policy, RunningJob};

use crate::identity;
use crate::plugin::HasState;
use crate::select::{
    IdentityGuest, JobTestRequest, JobTestResult, PluginInfoField, PluginInfoValue,
    ReservationRequest, ReservationResult, SelectConfig, SelectGuest, SelectNodeinfo,
};
use crate::types::{
    Bitmap as BitmapRecord, Job, JobResources, Node, PluginError, PluginIdentity, Step,
};
use crate::Error;

/// A select plugin: every function of the `select-plugin` world on a
/// value, for plugins that keep their own node and job tables, as Slurm's
/// select/linear and select/cons_tres do. [`Plugin::init`],
/// [`Plugin::job_test`] and the functions that keep those tables are
/// required; the rest default to what Slurm's own plugins do there
/// (nothing, or `none`). A policy that only decides where jobs go writes a
/// [`Policy`] instead, and the SDK keeps the tables ([`Managed`]).
///
/// Errors returned here reach the host as the plugin's error, unchanged.
pub trait Plugin: Sized + Send + 'static {
    /// `plugin_type`, `select/<name>`.
    const TYPE: &'static str;
    /// `plugin_name`, a human description.
    const NAME: &'static str;
    /// `job-expand-allow`: whether jobs may be merged (`job-expand`).
    /// Default: no, and `job-expand` refuses.
    const EXPAND_ALLOWED: bool = false;

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

    /// `state-save`: the bytes `state-restore` takes back after a restart.
    fn state_save(&mut self) -> Result<Vec<u8>, Error>;

    /// `state-restore`: what `state-save` wrote; anything else is refused
    /// (`EINVAL`), never half-applied.
    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error>;

    /// `job-init`: the running and suspended jobs after a restart or a
    /// reconfiguration (after `node-init`).
    fn job_init(&mut self, jobs: &[Job]) -> Result<(), Error>;

    /// `node-init`: the node table; forgets every job (`job-init` follows).
    fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error>;

    /// `job-test`: where (and, in will-run mode, when) `request.job` runs.
    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, Error>;

    /// `job-begin`: the job starts on its resources.
    fn job_begin(&mut self, job: &Job) -> Result<(), Error>;

    /// `job-ready`: whether the job's nodes are ready to run it.
    fn job_ready(&mut self, job: &Job) -> Result<bool, Error>;

    /// `job-expand`: `from`'s resources move to `to`; the merged resources.
    /// Default: refused (`ESLURM_NOT_SUPPORTED`), with
    /// [`EXPAND_ALLOWED`](Self::EXPAND_ALLOWED) false.
    fn job_expand(&mut self, _from: &Job, _to: &Job) -> Result<JobResources, Error> {
        Err(Error::not_supported(format!("{}: job-expand", Self::TYPE)))
    }

    /// `job-resized`: node `node_index` left the job.
    fn job_resized(&mut self, job: &Job, node_index: u32) -> Result<(), Error>;

    /// `job-signal`. Default: nothing, as Slurm's linear and cons_tres.
    fn job_signal(&mut self, _job: &Job, _signal: i32) -> Result<(), Error> {
        Ok(())
    }

    /// `job-mem-confirm`. Default: nothing, as Slurm's plugins (removed in
    /// 21.08).
    fn job_mem_confirm(&mut self, _job: &Job) -> Result<(), Error> {
        Ok(())
    }

    /// `job-fini`: the job ended; its resources are free.
    fn job_fini(&mut self, job: &Job) -> Result<(), Error>;

    /// `job-suspend`: the job keeps its nodes and memory, not its CPUs.
    fn job_suspend(&mut self, job: &Job, indefinite: bool) -> Result<(), Error>;

    /// `job-resume`, with the job's new planned end.
    fn job_resume(&mut self, job: &Job, indefinite: bool) -> Result<(), Error>;

    /// `step-pick-nodes`. Default: `none`, the controller picks, as with
    /// Slurm's linear and cons_tres.
    fn step_pick_nodes(
        &mut self,
        _job: &Job,
        _step: &Step,
        _node_count: u32,
        _available: Option<&BitmapRecord>,
    ) -> Result<Option<BitmapRecord>, Error> {
        Ok(None)
    }

    /// `step-finish`. Default: nothing, as Slurm's linear and cons_tres.
    fn step_finish(&mut self, _step: &Step, _killing: bool) -> Result<(), Error> {
        Ok(())
    }

    /// `reconfigure`: the new configuration and the jobs holding resources.
    fn reconfigure(&mut self, config: &SelectConfig, running: &[Job]) -> Result<(), Error>;

    /// `update-node-config`. Default: nothing, as Slurm's cons_tres.
    fn update_node_config(&mut self, _node: &Node) -> Result<(), Error> {
        Ok(())
    }

    /// `update-node-state`: the node's new state.
    fn update_node_state(&mut self, node: &Node) -> Result<(), Error>;

    /// `node-ranking`. Default: `none` (no ranking), as Slurm's plugins on
    /// flat systems.
    fn node_ranking(&mut self, _nodes: &[Node]) -> Result<Option<Vec<u32>>, Error> {
        Ok(None)
    }

    /// `nodeinfo-set-all`: refresh every node's nodeinfo;
    /// `SLURM_NO_CHANGE_IN_DATA` when nothing changed.
    fn nodeinfo_set_all(&mut self) -> Result<(), Error>;

    /// `nodeinfo-set`: refresh the nodeinfo of the job's nodes.
    fn nodeinfo_set(&mut self, job: &Job) -> Result<(), Error>;

    /// `node-nodeinfo`: node `node_index`'s nodeinfo.
    fn node_nodeinfo(&mut self, node_index: u32) -> Result<NodeInfo, Error>;

    /// `get-info-from-plugin`.
    fn get_info_from_plugin(
        &mut self,
        field: PluginInfoField,
        job: Option<&Job>,
    ) -> Result<PluginInfoValue, Error>;

    /// `resv-test`: nodes (and cores) for an advanced reservation.
    fn resv_test(&mut self, request: &ReservationRequest) -> Result<ReservationResult, Error>;

    /// `ba-init`. Default: nothing (flat systems).
    fn ba_init(&mut self, _nodes: &[Node], _sanity_check: bool) -> Result<(), Error> {
        Ok(())
    }

    /// `ba-get-dims`. Default: `none` (flat systems).
    fn ba_get_dims() -> Option<Vec<u32>> {
        None
    }
}

/// A [`Plugin`] as the `select-plugin` world's guest: what
/// `export_select!(plugin P)` (and, over [`Managed`], `export_select!(policy
/// P)`) exports, and what native tests call.
pub struct Export<P>(PhantomData<P>);

fn with<P: Plugin + HasState, R>(
    f: impl FnOnce(&mut P) -> Result<R, Error>,
) -> Result<R, PluginError> {
    P::state().with(P::TYPE, f).map_err(Into::into)
}

impl<P: Plugin + HasState> IdentityGuest for Export<P> {
    fn describe() -> PluginIdentity {
        P::identity()
    }
}

impl<P: Plugin + HasState> SelectGuest for Export<P> {
    type SelectNodeinfo = NodeInfo;
    type SelectJobinfo = JobInfo;

    fn init(config: SelectConfig) -> Result<(), PluginError> {
        P::state().set(P::init(&config)?);
        Ok(())
    }

    /// Calls the plugin's `fini` and drops it; succeeds without one.
    fn fini() -> Result<(), PluginError> {
        P::state().finish(P::fini).map_err(Into::into)
    }

    fn state_save() -> Result<Vec<u8>, PluginError> {
        with(|p: &mut P| p.state_save())
    }

    fn state_restore(data: Vec<u8>) -> Result<(), PluginError> {
        with(|p: &mut P| p.state_restore(&data))
    }

    fn job_init(jobs: Vec<Job>) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_init(&jobs))
    }

    fn node_init(nodes: Vec<Node>) -> Result<(), PluginError> {
        with(|p: &mut P| p.node_init(&nodes))
    }

    fn job_test(request: JobTestRequest) -> Result<JobTestResult, PluginError> {
        with(|p: &mut P| p.job_test(&request))
    }

    fn job_begin(job: Job) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_begin(&job))
    }

    fn job_ready(job: Job) -> Result<bool, PluginError> {
        with(|p: &mut P| p.job_ready(&job))
    }

    fn job_expand_allow() -> bool {
        P::EXPAND_ALLOWED
    }

    fn job_expand(from: Job, to: Job) -> Result<JobResources, PluginError> {
        with(|p: &mut P| p.job_expand(&from, &to))
    }

    fn job_resized(job: Job, node_index: u32) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_resized(&job, node_index))
    }

    fn job_signal(job: Job, signal: i32) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_signal(&job, signal))
    }

    fn job_mem_confirm(job: Job) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_mem_confirm(&job))
    }

    fn job_fini(job: Job) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_fini(&job))
    }

    fn job_suspend(job: Job, indefinite: bool) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_suspend(&job, indefinite))
    }

    fn job_resume(job: Job, indefinite: bool) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_resume(&job, indefinite))
    }

    fn step_pick_nodes(
        job: Job,
        step: Step,
        node_count: u32,
        available: Option<BitmapRecord>,
    ) -> Result<Option<BitmapRecord>, PluginError> {
        with(|p: &mut P| p.step_pick_nodes(&job, &step, node_count, available.as_ref()))
    }

    fn step_finish(step: Step, killing: bool) -> Result<(), PluginError> {
        with(|p: &mut P| p.step_finish(&step, killing))
    }

    fn reconfigure(config: SelectConfig, running: Vec<Job>) -> Result<(), PluginError> {
        with(|p: &mut P| p.reconfigure(&config, &running))
    }

    fn update_node_config(node: Node) -> Result<(), PluginError> {
        with(|p: &mut P| p.update_node_config(&node))
    }

    fn update_node_state(node: Node) -> Result<(), PluginError> {
        with(|p: &mut P| p.update_node_state(&node))
    }

    fn node_ranking(nodes: Vec<Node>) -> Result<Option<Vec<u32>>, PluginError> {
        with(|p: &mut P| p.node_ranking(&nodes))
    }

    fn nodeinfo_set_all() -> Result<(), PluginError> {
        with(|p: &mut P| p.nodeinfo_set_all())
    }

    fn nodeinfo_set(job: Job) -> Result<(), PluginError> {
        with(|p: &mut P| p.nodeinfo_set(&job))
    }

    fn node_nodeinfo(node_index: u32) -> Result<SelectNodeinfo, PluginError> {
        with(|p: &mut P| p.node_nodeinfo(node_index)).map(SelectNodeinfo::new)
    }

    fn get_info_from_plugin(
        field: PluginInfoField,
        job: Option<Job>,
    ) -> Result<PluginInfoValue, PluginError> {
        with(|p: &mut P| p.get_info_from_plugin(field, job.as_ref()))
    }

    fn resv_test(request: ReservationRequest) -> Result<ReservationResult, PluginError> {
        with(|p: &mut P| p.resv_test(&request))
    }

    fn ba_init(nodes: Vec<Node>, sanity_check: bool) -> Result<(), PluginError> {
        with(|p: &mut P| p.ba_init(&nodes, sanity_check))
    }

    fn ba_get_dims() -> Option<Vec<u32>> {
        P::ba_get_dims()
    }
}
