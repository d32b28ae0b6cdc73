//! Select wrappers (the `select-wrapper` world): a select plugin over an
//! inner one, as Slurm's select/cray_aries runs over select/linear or
//! select/cons_tres. The host loads the inner plugin (bundled, or a
//! component) in its own instance and serves this component's imported
//! `select` by forwarding to it; [`Inner`] calls it.
//!
//! A [`Wrapper`] writes only what it changes: every function defaults to
//! passing the call to the inner plugin unchanged, so a filter or a score
//! over the bundled select/cons_tres is a `job_test` of a few lines
//! (`examples/select-spare-bigmem`). Exported with
//! `export_select_wrapper!(T)`.
//!
//! What the adapter ([`Export`]) does around the wrapper's functions:
//! `init` initialises the inner plugin with the same configuration first,
//! then [`Wrapper::init`]; `fini` runs [`Wrapper::fini`], then the inner
//! plugin's. The nodeinfo records are the inner plugin's
//! ([`InnerNodeinfo`]); so are the jobinfo records ([`InnerJobinfo`]),
//! unless the wrapper exports its own
//! (`export_select_wrapper!(T, jobinfo = J)`, as select/cray_aries keeps
//! a job's counter mode and blades in its jobinfo around the inner one's).
//!
//! The world's `select-steps` (a step's start, and the nodes a job's next
//! step may use) is exported with the same defaults: [`Wrapper::step_start`]
//! and [`Wrapper::step_avail_nodes`] pass to the inner plugin's, which the
//! host answers for an inner plugin without them as Slurm's select/linear
//! and select/cons_tres do (nothing, no restriction).
//!
//! [`job_network`] is what the controller holds as a job's `--network`
//! (the world's `job-network` import); [`node_health_start`] and
//! [`node_health_poll`] run the administrator's node health program (its
//! `node-health` import, denied unless configured).
//!
//! A Slurm error of the inner plugin comes back from [`Inner`] as an
//! [`Error`] with its code, for the wrapper to pass on (the default) or
//! handle. A fault of the inner plugin never comes back: the host ends the
//! wrapper's call and reports the inner plugin's fault.

use slurm_wasm_sdk::identity;
use slurm_wasm_sdk::plugin::HasState;
use slurm_wasm_sdk::types::{Bitmap, Job, JobResources, Node, PluginError, PluginIdentity, Step};
use slurm_wasm_sdk::Error;

use crate::bindings::exports::slurm::plugin::select as ex;
use crate::bindings::exports::slurm::plugin::select_steps as ex_steps;
use crate::bindings::slurm::plugin::select as imp;
use crate::bindings::slurm::plugin::select_steps as imp_steps;

pub use ex::{
    JobTestFlags, JobTestMode, JobTestRequest, JobTestResult, JobinfoField, JobinfoValue,
    NodeinfoField, NodeinfoValue, PluginInfoField, PluginInfoValue, PreemptMode,
    PreempteeCandidate, ReservationRequest, ReservationResult, SelectConfig, SprintMode,
};

/// A select plugin over an inner one. Only [`TYPE`](Self::TYPE),
/// [`NAME`](Self::NAME) and [`init`](Self::init) are required; every
/// other function passes the call to the inner plugin ([`Inner`]) unless
/// the wrapper overrides it. Errors returned here reach the host as the
/// wrapper's error, unchanged.
pub trait Wrapper: Sized + Send + 'static {
    /// `plugin_type`, `select/<name>`.
    const TYPE: &'static str;
    /// `plugin_name`, a human description.
    const NAME: &'static str;

    /// What `describe` answers ([`slurm_wasm_sdk::identity()`]).
    fn identity() -> PluginIdentity {
        identity(Self::TYPE, Self::NAME)
    }

    /// `init`, after the inner plugin accepted the same configuration.
    fn init(config: &SelectConfig) -> Result<Self, Error>;

    /// `fini`, before the inner plugin's. Default: nothing.
    fn fini(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// `state-save`. Default: the inner plugin's state.
    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        Inner::state_save()
    }

    /// `state-restore`. Default: the inner plugin restores it.
    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        Inner::state_restore(data)
    }

    /// `job-init`.
    fn job_init(&mut self, jobs: &[Job]) -> Result<(), Error> {
        Inner::job_init(jobs)
    }

    /// `node-init`.
    fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error> {
        Inner::node_init(nodes)
    }

    /// `job-test`.
    fn job_test(&mut self, request: JobTestRequest) -> Result<JobTestResult, Error> {
        Inner::job_test(request)
    }

    /// `job-begin`.
    fn job_begin(&mut self, job: &Job) -> Result<(), Error> {
        Inner::job_begin(job)
    }

    /// `job-ready`.
    fn job_ready(&mut self, job: &Job) -> Result<bool, Error> {
        Inner::job_ready(job)
    }

    /// `job-expand-allow`.
    fn job_expand_allow(&mut self) -> bool {
        Inner::job_expand_allow()
    }

    /// `job-expand`.
    fn job_expand(&mut self, from: &Job, to: &Job) -> Result<JobResources, Error> {
        Inner::job_expand(from, to)
    }

    /// `job-resized`.
    fn job_resized(&mut self, job: &Job, node_index: u32) -> Result<(), Error> {
        Inner::job_resized(job, node_index)
    }

    /// `job-signal`.
    fn job_signal(&mut self, job: &Job, signal: i32) -> Result<(), Error> {
        Inner::job_signal(job, signal)
    }

    /// `job-mem-confirm`.
    fn job_mem_confirm(&mut self, job: &Job) -> Result<(), Error> {
        Inner::job_mem_confirm(job)
    }

    /// `job-fini`.
    fn job_fini(&mut self, job: &Job) -> Result<(), Error> {
        Inner::job_fini(job)
    }

    /// `job-suspend`.
    fn job_suspend(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        Inner::job_suspend(job, indefinite)
    }

    /// `job-resume`.
    fn job_resume(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        Inner::job_resume(job, indefinite)
    }

    /// `step-pick-nodes`.
    fn step_pick_nodes(
        &mut self,
        job: &Job,
        step: &Step,
        node_count: u32,
        available: Option<&Bitmap>,
    ) -> Result<Option<Bitmap>, Error> {
        Inner::step_pick_nodes(job, step, node_count, available)
    }

    /// `step-finish`.
    fn step_finish(&mut self, step: &Step, killing: bool) -> Result<(), Error> {
        Inner::step_finish(step, killing)
    }

    /// `select-steps.step-start` (`select_p_step_start`): step `step_id`
    /// of `job` starts on `nodes`.
    fn step_start(&mut self, job: &Job, step_id: u32, nodes: &Bitmap) -> Result<(), Error> {
        Inner::step_start(job, step_id, nodes)
    }

    /// `select-steps.step-avail-nodes`: the nodes of `job` its next step
    /// may use (none: no restriction). A wrapper that narrows usually
    /// narrows the inner plugin's answer further.
    fn step_avail_nodes(&mut self, job: &Job) -> Result<Option<Bitmap>, Error> {
        Inner::step_avail_nodes(job)
    }

    /// `reconfigure`.
    fn reconfigure(&mut self, config: SelectConfig, running: &[Job]) -> Result<(), Error> {
        Inner::reconfigure(config, running)
    }

    /// `update-node-config`.
    fn update_node_config(&mut self, node: &Node) -> Result<(), Error> {
        Inner::update_node_config(node)
    }

    /// `update-node-state`.
    fn update_node_state(&mut self, node: &Node) -> Result<(), Error> {
        Inner::update_node_state(node)
    }

    /// `node-ranking`.
    fn node_ranking(&mut self, nodes: &[Node]) -> Result<Option<Vec<u32>>, Error> {
        Inner::node_ranking(nodes)
    }

    /// `nodeinfo-set-all`.
    fn nodeinfo_set_all(&mut self) -> Result<(), Error> {
        Inner::nodeinfo_set_all()
    }

    /// `nodeinfo-set`.
    fn nodeinfo_set(&mut self, job: &Job) -> Result<(), Error> {
        Inner::nodeinfo_set(job)
    }

    /// `get-info-from-plugin`.
    fn get_info_from_plugin(
        &mut self,
        field: PluginInfoField,
        job: Option<&Job>,
    ) -> Result<PluginInfoValue, Error> {
        Inner::get_info_from_plugin(field, job)
    }

    /// `resv-test`.
    fn resv_test(&mut self, request: ReservationRequest) -> Result<ReservationResult, Error> {
        Inner::resv_test(request)
    }

    /// `ba-init`.
    fn ba_init(&mut self, nodes: &[Node], sanity_check: bool) -> Result<(), Error> {
        Inner::ba_init(nodes, sanity_check)
    }

    /// `ba-get-dims`.
    fn ba_get_dims(&mut self) -> Option<Vec<u32>> {
        Inner::ba_get_dims()
    }
}

/// The inner plugin: each function is the same contract function on it.
/// Its Slurm errors come back as [`Error`]s; its faults end the wrapper's
/// call (the host reports them as the inner plugin's).
pub struct Inner;

impl Inner {
    /// `init` of the inner plugin.
    pub fn init(config: SelectConfig) -> Result<(), Error> {
        Ok(imp::init(&config.into())?)
    }

    /// `fini` of the inner plugin.
    pub fn fini() -> Result<(), Error> {
        Ok(imp::fini()?)
    }

    /// `state-save` of the inner plugin.
    pub fn state_save() -> Result<Vec<u8>, Error> {
        Ok(imp::state_save()?)
    }

    /// `state-restore` of the inner plugin.
    pub fn state_restore(data: &[u8]) -> Result<(), Error> {
        Ok(imp::state_restore(data)?)
    }

    /// `job-init` of the inner plugin.
    pub fn job_init(jobs: &[Job]) -> Result<(), Error> {
        Ok(imp::job_init(jobs)?)
    }

    /// `node-init` of the inner plugin.
    pub fn node_init(nodes: &[Node]) -> Result<(), Error> {
        Ok(imp::node_init(nodes)?)
    }

    /// `job-test` of the inner plugin.
    pub fn job_test(request: JobTestRequest) -> Result<JobTestResult, Error> {
        Ok(imp::job_test(&request.into())?.into())
    }

    /// `job-begin` of the inner plugin.
    pub fn job_begin(job: &Job) -> Result<(), Error> {
        Ok(imp::job_begin(job)?)
    }

    /// `job-ready` of the inner plugin.
    pub fn job_ready(job: &Job) -> Result<bool, Error> {
        Ok(imp::job_ready(job)?)
    }

    /// `job-expand-allow` of the inner plugin.
    pub fn job_expand_allow() -> bool {
        imp::job_expand_allow()
    }

    /// `job-expand` of the inner plugin.
    pub fn job_expand(from: &Job, to: &Job) -> Result<JobResources, Error> {
        Ok(imp::job_expand(from, to)?)
    }

    /// `job-resized` of the inner plugin.
    pub fn job_resized(job: &Job, node_index: u32) -> Result<(), Error> {
        Ok(imp::job_resized(job, node_index)?)
    }

    /// `job-signal` of the inner plugin.
    pub fn job_signal(job: &Job, signal: i32) -> Result<(), Error> {
        Ok(imp::job_signal(job, signal)?)
    }

    /// `job-mem-confirm` of the inner plugin.
    pub fn job_mem_confirm(job: &Job) -> Result<(), Error> {
        Ok(imp::job_mem_confirm(job)?)
    }

    /// `job-fini` of the inner plugin.
    pub fn job_fini(job: &Job) -> Result<(), Error> {
        Ok(imp::job_fini(job)?)
    }

    /// `job-suspend` of the inner plugin.
    pub fn job_suspend(job: &Job, indefinite: bool) -> Result<(), Error> {
        Ok(imp::job_suspend(job, indefinite)?)
    }

    /// `job-resume` of the inner plugin.
    pub fn job_resume(job: &Job, indefinite: bool) -> Result<(), Error> {
        Ok(imp::job_resume(job, indefinite)?)
    }

    /// `step-pick-nodes` of the inner plugin.
    pub fn step_pick_nodes(
        job: &Job,
        step: &Step,
        node_count: u32,
        available: Option<&Bitmap>,
    ) -> Result<Option<Bitmap>, Error> {
        Ok(imp::step_pick_nodes(job, step, node_count, available)?)
    }

    /// `step-finish` of the inner plugin.
    pub fn step_finish(step: &Step, killing: bool) -> Result<(), Error> {
        Ok(imp::step_finish(step, killing)?)
    }

    /// `select-steps.step-start` of the inner plugin (success, without a
    /// call, for an inner plugin without step hooks).
    pub fn step_start(job: &Job, step_id: u32, nodes: &Bitmap) -> Result<(), Error> {
        Ok(imp_steps::step_start(job, step_id, nodes)?)
    }

    /// `select-steps.step-avail-nodes` of the inner plugin (none, without
    /// a call, for an inner plugin without step hooks).
    pub fn step_avail_nodes(job: &Job) -> Result<Option<Bitmap>, Error> {
        Ok(imp_steps::step_avail_nodes(job)?)
    }

    /// `reconfigure` of the inner plugin.
    pub fn reconfigure(config: SelectConfig, running: &[Job]) -> Result<(), Error> {
        Ok(imp::reconfigure(&config.into(), running)?)
    }

    /// `update-node-config` of the inner plugin.
    pub fn update_node_config(node: &Node) -> Result<(), Error> {
        Ok(imp::update_node_config(node)?)
    }

    /// `update-node-state` of the inner plugin.
    pub fn update_node_state(node: &Node) -> Result<(), Error> {
        Ok(imp::update_node_state(node)?)
    }

    /// `node-ranking` of the inner plugin.
    pub fn node_ranking(nodes: &[Node]) -> Result<Option<Vec<u32>>, Error> {
        Ok(imp::node_ranking(nodes)?)
    }

    /// `nodeinfo-set-all` of the inner plugin.
    pub fn nodeinfo_set_all() -> Result<(), Error> {
        Ok(imp::nodeinfo_set_all()?)
    }

    /// `nodeinfo-set` of the inner plugin.
    pub fn nodeinfo_set(job: &Job) -> Result<(), Error> {
        Ok(imp::nodeinfo_set(job)?)
    }

    /// `node-nodeinfo` of the inner plugin.
    pub fn node_nodeinfo(node_index: u32) -> Result<InnerNodeinfo, Error> {
        Ok(InnerNodeinfo(imp::node_nodeinfo(node_index)?))
    }

    /// `get-info-from-plugin` of the inner plugin.
    pub fn get_info_from_plugin(
        field: PluginInfoField,
        job: Option<&Job>,
    ) -> Result<PluginInfoValue, Error> {
        Ok(imp::get_info_from_plugin(field.into(), job)?.into())
    }

    /// `resv-test` of the inner plugin.
    pub fn resv_test(request: ReservationRequest) -> Result<ReservationResult, Error> {
        Ok(imp::resv_test(&request.into())?.into())
    }

    /// `ba-init` of the inner plugin.
    pub fn ba_init(nodes: &[Node], sanity_check: bool) -> Result<(), Error> {
        Ok(imp::ba_init(nodes, sanity_check)?)
    }

    /// `ba-get-dims` of the inner plugin.
    pub fn ba_get_dims() -> Option<Vec<u32>> {
        imp::ba_get_dims()
    }
}

/// Job `job_id`'s `--network` as the controller holds it (Slurm's
/// `job_record_t.network`, which it hands the select plugin as
/// `SELECT_JOBDATA_NETWORK`): none when the job gave none or the
/// controller did not tell the host of the job. Outside `wasm32` (native
/// unit tests) there is no controller: always none.
pub fn job_network(job_id: u32) -> Option<String> {
    #[cfg(target_arch = "wasm32")]
    return crate::bindings::slurm::plugin::job_network::network(job_id);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = job_id;
        None
    }
}

pub use crate::bindings::slurm::plugin::node_health::{HealthCheck, HealthError};

/// Starts the administrator's node health program for `check` (the
/// world's `node-health` import): the check's id, to [`node_health_poll`].
/// `HealthError::Denied` unless a program is configured for the plugin
/// (always outside `wasm32`).
pub fn node_health_start(check: &HealthCheck) -> Result<u64, HealthError> {
    #[cfg(target_arch = "wasm32")]
    return crate::bindings::slurm::plugin::node_health::start(check);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = check;
        Err(HealthError::Denied)
    }
}

/// None while check `id` runs; its exit status once it ended (the negated
/// signal number when a signal ended it), after which it is forgotten.
pub fn node_health_poll(id: u64) -> Result<Option<i32>, HealthError> {
    #[cfg(target_arch = "wasm32")]
    return crate::bindings::slurm::plugin::node_health::poll(id);
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = id;
        Err(HealthError::Denied)
    }
}

/// The inner plugin's `select-nodeinfo`, exported as the wrapper's own.
pub struct InnerNodeinfo(imp::SelectNodeinfo);

/// The inner plugin's `select-jobinfo`: exported as the wrapper's own, or
/// held inside the wrapper's own jobinfo type.
pub struct InnerJobinfo(imp::SelectJobinfo);

impl InnerJobinfo {
    /// A new record of the inner plugin (`select_p_select_jobinfo_alloc`).
    pub fn alloc() -> Self {
        InnerJobinfo(imp::SelectJobinfo::new())
    }

    /// The inner plugin's unpack of `data`, as a record to hold.
    pub fn unpack_inner(data: &[u8], protocol_version: u16) -> Result<Self, PluginError> {
        imp::SelectJobinfo::unpack(data, protocol_version).map(InnerJobinfo)
    }
}

impl ex::GuestSelectNodeinfo for InnerNodeinfo {
    fn new() -> Self {
        InnerNodeinfo(imp::SelectNodeinfo::new())
    }

    fn pack(&self, protocol_version: u16) -> Result<Vec<u8>, PluginError> {
        self.0.pack(protocol_version)
    }

    fn unpack(data: Vec<u8>, protocol_version: u16) -> Result<ex::SelectNodeinfo, PluginError> {
        imp::SelectNodeinfo::unpack(&data, protocol_version)
            .map(|info| ex::SelectNodeinfo::new(InnerNodeinfo(info)))
    }

    fn get(&self, field: NodeinfoField, state: u32) -> Result<NodeinfoValue, PluginError> {
        self.0.get(field.into(), state).map(Into::into)
    }
}

impl ex::GuestSelectJobinfo for InnerJobinfo {
    fn new() -> Self {
        InnerJobinfo(imp::SelectJobinfo::new())
    }

    fn copy(&self) -> ex::SelectJobinfo {
        ex::SelectJobinfo::new(InnerJobinfo(self.0.copy()))
    }

    fn pack(&self, protocol_version: u16) -> Result<Vec<u8>, PluginError> {
        self.0.pack(protocol_version)
    }

    fn unpack(data: Vec<u8>, protocol_version: u16) -> Result<ex::SelectJobinfo, PluginError> {
        imp::SelectJobinfo::unpack(&data, protocol_version)
            .map(|info| ex::SelectJobinfo::new(InnerJobinfo(info)))
    }

    fn get(&self, field: JobinfoField) -> Result<JobinfoValue, PluginError> {
        self.0.get(field.into()).map(Into::into)
    }

    fn set(&self, field: JobinfoField, value: JobinfoValue) -> Result<(), PluginError> {
        self.0.set(field.into(), &value.into())
    }

    fn to_string(&self, mode: SprintMode) -> String {
        self.0.to_string(mode.into())
    }
}

/// A [`Wrapper`] as the `select-wrapper` world's guest, with `J` as its
/// jobinfo records: what `export_select_wrapper!(W)` (the inner plugin's
/// records) and `export_select_wrapper!(W, jobinfo = J)` export.
pub struct Export<W, J = InnerJobinfo>(std::marker::PhantomData<(W, J)>);

fn with<W: Wrapper + HasState, R>(
    f: impl FnOnce(&mut W) -> Result<R, Error>,
) -> Result<R, PluginError> {
    W::state().with(W::TYPE, f).map_err(Into::into)
}

impl<W: Wrapper + HasState, J: 'static> crate::bindings::Guest for Export<W, J> {
    fn describe() -> PluginIdentity {
        W::identity()
    }
}

impl<W: Wrapper + HasState, J: ex::GuestSelectJobinfo> ex::Guest for Export<W, J> {
    type SelectNodeinfo = InnerNodeinfo;
    type SelectJobinfo = J;

    fn init(config: SelectConfig) -> Result<(), PluginError> {
        imp::init(&config.clone().into())?;
        W::state().set(W::init(&config)?);
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        W::state().finish(W::fini)?;
        imp::fini()
    }

    fn state_save() -> Result<Vec<u8>, PluginError> {
        with(|w: &mut W| w.state_save())
    }

    fn state_restore(data: Vec<u8>) -> Result<(), PluginError> {
        with(|w: &mut W| w.state_restore(&data))
    }

    fn job_init(jobs: Vec<Job>) -> Result<(), PluginError> {
        with(|w: &mut W| w.job_init(&jobs))
    }

    fn node_init(nodes: Vec<Node>) -> Result<(), PluginError> {
        with(|w: &mut W| w.node_init(&nodes))
    }

    fn job_test(request: JobTestRequest) -> Result<JobTestResult, PluginError> {
        with(|w: &mut W| w.job_test(request))
    }

    fn job_begin(job: Job) -> Result<(), PluginError> {
        with(|w: &mut W| w.job_begin(&job))
    }

    fn job_ready(job: Job) -> Result<bool, PluginError> {
        with(|w: &mut W| w.job_ready(&job))
    }

    /// The wrapper's answer; before `init`, the inner plugin's.
    fn job_expand_allow() -> bool {
        W::state()
            .with(W::TYPE, |w: &mut W| Ok(w.job_expand_allow()))
            .unwrap_or_else(|_| imp::job_expand_allow())
    }

    fn job_expand(from: Job, to: Job) -> Result<JobResources, PluginError> {
        with(|w: &mut W| w.job_expand(&from, &to))
    }

    fn job_resized(job: Job, node_index: u32) -> Result<(), PluginError> {
        with(|w: &mut W| w.job_resized(&job, node_index))
    }

    fn job_signal(job: Job, signal: i32) -> Result<(), PluginError> {
        with(|w: &mut W| w.job_signal(&job, signal))
    }

    fn job_mem_confirm(job: Job) -> Result<(), PluginError> {
        with(|w: &mut W| w.job_mem_confirm(&job))
    }

    fn job_fini(job: Job) -> Result<(), PluginError> {
        with(|w: &mut W| w.job_fini(&job))
    }

    fn job_suspend(job: Job, indefinite: bool) -> Result<(), PluginError> {
        with(|w: &mut W| w.job_suspend(&job, indefinite))
    }

    fn job_resume(job: Job, indefinite: bool) -> Result<(), PluginError> {
        with(|w: &mut W| w.job_resume(&job, indefinite))
    }

    fn step_pick_nodes(
        job: Job,
        step: Step,
        node_count: u32,
        available: Option<Bitmap>,
    ) -> Result<Option<Bitmap>, PluginError> {
        with(|w: &mut W| w.step_pick_nodes(&job, &step, node_count, available.as_ref()))
    }

    fn step_finish(step: Step, killing: bool) -> Result<(), PluginError> {
        with(|w: &mut W| w.step_finish(&step, killing))
    }

    fn reconfigure(config: SelectConfig, running: Vec<Job>) -> Result<(), PluginError> {
        with(|w: &mut W| w.reconfigure(config, &running))
    }

    fn update_node_config(node: Node) -> Result<(), PluginError> {
        with(|w: &mut W| w.update_node_config(&node))
    }

    fn update_node_state(node: Node) -> Result<(), PluginError> {
        with(|w: &mut W| w.update_node_state(&node))
    }

    fn node_ranking(nodes: Vec<Node>) -> Result<Option<Vec<u32>>, PluginError> {
        with(|w: &mut W| w.node_ranking(&nodes))
    }

    fn nodeinfo_set_all() -> Result<(), PluginError> {
        with(|w: &mut W| w.nodeinfo_set_all())
    }

    fn nodeinfo_set(job: Job) -> Result<(), PluginError> {
        with(|w: &mut W| w.nodeinfo_set(&job))
    }

    fn node_nodeinfo(node_index: u32) -> Result<ex::SelectNodeinfo, PluginError> {
        Ok(ex::SelectNodeinfo::new(Inner::node_nodeinfo(node_index)?))
    }

    fn get_info_from_plugin(
        field: PluginInfoField,
        job: Option<Job>,
    ) -> Result<PluginInfoValue, PluginError> {
        with(|w: &mut W| w.get_info_from_plugin(field, job.as_ref()))
    }

    fn resv_test(request: ReservationRequest) -> Result<ReservationResult, PluginError> {
        with(|w: &mut W| w.resv_test(request))
    }

    fn ba_init(nodes: Vec<Node>, sanity_check: bool) -> Result<(), PluginError> {
        with(|w: &mut W| w.ba_init(&nodes, sanity_check))
    }

    /// The wrapper's answer; before `init`, the inner plugin's.
    fn ba_get_dims() -> Option<Vec<u32>> {
        W::state()
            .with(W::TYPE, |w: &mut W| Ok(w.ba_get_dims()))
            .unwrap_or_else(|_| imp::ba_get_dims())
    }
}

impl<W: Wrapper + HasState, J: 'static> ex_steps::Guest for Export<W, J> {
    fn step_start(job: Job, step_id: u32, nodes: Bitmap) -> Result<(), PluginError> {
        with(|w: &mut W| w.step_start(&job, step_id, &nodes))
    }

    fn step_avail_nodes(job: Job) -> Result<Option<Bitmap>, PluginError> {
        with(|w: &mut W| w.step_avail_nodes(&job))
    }
}

// `From` both ways between the export's and the import's copies of the
// `select` interface's own types (one WIT interface in two directions
// gives two Rust types; the shared `types` are one).
slurm_wasm_fixtures::select_crossings!(
    crate::bindings::slurm::plugin::select,
    crate::bindings::exports::slurm::plugin::select
);
