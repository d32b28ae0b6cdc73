//! The typed select API: [`SelectPlugin`]. The host keeps a copy of the
//! node table (from `node-init` and node updates) to check allocations.

use wasmtime::component::ResourceAny;

use crate::bindings::select::exports::slurm::plugin::select as wit;
use crate::bindings::select::{SelectPlugin as World, SelectPluginIndices as WorldIndices};
use crate::bindings::select_wrapper::exports::slurm::plugin::select_steps as steps;
use crate::bindings::types::{Bitmap, Job, JobResources, Node, PluginError, Step};
use crate::engine::Host;
use crate::error::{CallError, LoadError};
use crate::host_config::PluginConfig;
use crate::plugin::{no_check, PluginCore, PluginSettings, PluginSource, CONTRACT_VERSION};

use super::journal::{JobCall, SelectJournal};
use super::{opaque, plain};

pub use wit::{
    JobTestFlags, JobTestMode, JobTestRequest, JobTestResult, JobinfoField, JobinfoValue,
    NodeinfoField, NodeinfoValue, PluginInfoField, PluginInfoValue, PreemptMode,
    PreempteeCandidate, ReservationRequest, ReservationResult, SelectConfig, SprintMode,
};

/// A select component pre-instantiated: the `select-plugin` world's
/// exports, which every select component has, and the indices of its
/// `select-steps` export when it has one (the host does not require it:
/// a component built before it loads, and gets neither step call).
pub(crate) struct SelectPre<T: 'static> {
    instance_pre: wasmtime::component::InstancePre<T>,
    world: WorldIndices,
    steps: Option<steps::GuestIndices>,
}

impl<T: 'static> Clone for SelectPre<T> {
    fn clone(&self) -> Self {
        SelectPre {
            instance_pre: self.instance_pre.clone(),
            world: self.world.clone(),
            steps: self.steps.clone(),
        }
    }
}

impl<T: 'static> SelectPre<T> {
    /// Finds the exports (the optional one under this host's contract
    /// version). A `select-steps` export whose functions are not the
    /// contract's is an error, as a wrong required export is.
    pub(crate) fn new(instance_pre: wasmtime::component::InstancePre<T>) -> wasmtime::Result<Self> {
        let name = format!("slurm:plugin/select-steps@{CONTRACT_VERSION}");
        let steps = match instance_pre.component().get_export_index(None, &name) {
            Some(_) => Some(steps::GuestIndices::new(&instance_pre)?),
            None => None,
        };
        Ok(SelectPre {
            world: WorldIndices::new(&instance_pre)?,
            instance_pre,
            steps,
        })
    }

    pub(crate) fn instantiate(
        &self,
        mut store: impl wasmtime::AsContextMut<Data = T>,
    ) -> wasmtime::Result<SelectBindings> {
        let mut store = store.as_context_mut();
        let instance = self.instance_pre.instantiate(&mut store)?;
        Ok(SelectBindings {
            world: self.world.load(&mut store, &instance)?,
            steps: match &self.steps {
                Some(indices) => Some(indices.load(&mut store, &instance)?),
                None => None,
            },
        })
    }
}

/// An instance's exports: the world's (through `Deref`) and, when the
/// component has them, its step hooks.
pub(crate) struct SelectBindings {
    world: World,
    steps: Option<steps::Guest>,
}

impl std::ops::Deref for SelectBindings {
    type Target = World;

    fn deref(&self) -> &World {
        &self.world
    }
}

impl SelectBindings {
    /// `select-steps.step-start`; success without the export (what
    /// Slurm's select/linear and select/cons_tres answer).
    fn call_step_start(
        &self,
        store: &mut wasmtime::Store<crate::store::HostState>,
        job: &Job,
        step_id: u32,
        nodes: &Bitmap,
    ) -> wasmtime::Result<Result<(), PluginError>> {
        match &self.steps {
            Some(steps) => steps.call_step_start(store, job, step_id, nodes),
            None => Ok(Ok(())),
        }
    }

    /// `select-steps.step-avail-nodes`; no restriction without the export.
    fn call_step_avail_nodes(
        &self,
        store: &mut wasmtime::Store<crate::store::HostState>,
        job: &Job,
    ) -> wasmtime::Result<Result<Option<Bitmap>, PluginError>> {
        match &self.steps {
            Some(steps) => steps.call_step_avail_nodes(store, job),
            None => Ok(Ok(None)),
        }
    }
}

super::plugin_kind! {
    handle: SelectPlugin,
    kind: SelectKind,
    slot: Select,
    linker: select,
    world: World,
    pre: SelectPre<crate::store::HostState>,
    bindings: SelectBindings,
    interface: slurm_plugin_select,
    config: SelectConfig,
    restore: |b, store, data| b.slurm_plugin_select().call_state_restore(store, data),
    save: |b, store| b.slurm_plugin_select().call_state_save(store).map(|r| r.map(Some)),
    journal: SelectJournal,
    replay: |b, replay, journal, restore| replay_world(b, replay, journal, restore),
}

/// Gives a restarted select plugin its node table, its state (which
/// describes that table) and its running jobs back (see [`super::journal`]).
fn replay_world(
    b: &SelectBindings,
    replay: &mut crate::plugin::Replay<'_>,
    journal: &SelectJournal,
    restore: &dyn Fn(&mut crate::plugin::Replay<'_>) -> Result<(), CallError>,
) -> Result<(), CallError> {
    let select = b.slurm_plugin_select();
    if let Some(nodes) = &journal.nodes {
        replay.call("node-init", |s| select.call_node_init(s, nodes))?;
    }
    restore(replay)?;
    let (initial, later) = journal.replay();
    if !initial.is_empty() {
        replay.call("job-init", |s| select.call_job_init(s, &initial))?;
    }
    for call in later {
        match call {
            JobCall::Begin(job) => replay.call("job-begin", |s| select.call_job_begin(s, job))?,
            JobCall::Suspend(job, indefinite) => replay.call("job-suspend", |s| {
                select.call_job_suspend(s, job, *indefinite)
            })?,
            JobCall::Resume(job, indefinite) => replay.call("job-resume", |s| {
                select.call_job_resume(s, job, *indefinite)
            })?,
            JobCall::Resized(job, node) => {
                replay.call("job-resized", |s| select.call_job_resized(s, job, *node))?
            }
            JobCall::Expand(jobs) => replay.call("job-expand", |s| {
                select
                    .call_job_expand(s, &jobs.0, &jobs.1)
                    .map(|r| r.map(|_| ()))
            })?,
            JobCall::StepStart(start) => replay.call("step-start", |s| {
                b.call_step_start(s, &start.0, start.1, &start.2)
            })?,
        }
    }
    Ok(())
}

super::plugin_state! {
    handle: SelectPlugin,
    interface: slurm_plugin_select,
}

crate::replay::replayer!(SelectPlugin, "select", |p| {
    "init" => |(config,): (SelectConfig,)| -> () { p.init(&config) },
    "fini" => |(): ()| -> () { p.fini() },
    "state-save" => |(): ()| -> Vec<u8> { p.state_save() },
    "state-restore" => |(data,): (Vec<u8>,)| -> () { p.state_restore(&data) },
    "job-init" => |(jobs,): (Vec<Job>,)| -> () { p.job_init(&jobs) },
    "node-init" => |(nodes,): (Vec<Node>,)| -> () { p.node_init(&nodes) },
    "job-test" => |(request,): (JobTestRequest,)| -> JobTestResult { p.job_test(&request) },
    "job-begin" => |(job,): (Job,)| -> () { p.job_begin(&job) },
    "job-ready" => |(job,): (Job,)| -> bool { p.job_ready(&job) },
    "job-expand-allow" => |(): ()| -> bool { p.job_expand_allow() },
    "job-expand" => |(from, to): (Job, Job)| -> JobResources { p.job_expand(&from, &to) },
    "job-resized" => |(job, node): (Job, u32)| -> () { p.job_resized(&job, node) },
    "job-signal" => |(job, signal): (Job, i32)| -> () { p.job_signal(&job, signal) },
    "job-mem-confirm" => |(job,): (Job,)| -> () { p.job_mem_confirm(&job) },
    "job-fini" => |(job,): (Job,)| -> () { p.job_fini(&job) },
    "job-suspend" => |(job, indefinite): (Job, bool)| -> () { p.job_suspend(&job, indefinite) },
    "job-resume" => |(job, indefinite): (Job, bool)| -> () { p.job_resume(&job, indefinite) },
    "step-pick-nodes" => |(job, step, count, available): (Job, Step, u32, Option<Bitmap>)| -> Option<Bitmap> {
        p.step_pick_nodes(&job, &step, count, available.as_ref())
    },
    "step-finish" => |(step, killing): (Step, bool)| -> () { p.step_finish(&step, killing) },
    "step-start" => |(job, step_id, nodes): (Job, u32, Bitmap)| -> () { p.step_start(&job, step_id, &nodes) },
    "step-avail-nodes" => |(job,): (Job,)| -> Option<Bitmap> { p.step_avail_nodes(&job) },
    "reconfigure" => |(config, running): (SelectConfig, Vec<Job>)| -> () { p.reconfigure(&config, &running) },
    "update-node-config" => |(node,): (Node,)| -> () { p.update_node_config(&node) },
    "update-node-state" => |(node,): (Node,)| -> () { p.update_node_state(&node) },
    "node-ranking" => |(nodes,): (Vec<Node>,)| -> Option<Vec<u32>> { p.node_ranking(&nodes) },
    "nodeinfo-set-all" => |(): ()| -> () { p.nodeinfo_set_all() },
    "nodeinfo-set" => |(job,): (Job,)| -> () { p.nodeinfo_set(&job) },
    "get-info-from-plugin" => |(field, job): (PluginInfoField, Option<Job>)| -> PluginInfoValue {
        p.get_info_from_plugin(field, job.as_ref())
    },
    "resv-test" => |(request,): (ReservationRequest,)| -> ReservationResult { p.resv_test(&request) },
    "ba-init" => |(nodes, sanity_check): (Vec<Node>, bool)| -> () { p.ba_init(&nodes, sanity_check) },
    "ba-get-dims" => |(): ()| -> Option<Vec<u32>> { p.ba_get_dims() },
});

/// A plugin-side `select_nodeinfo_t` or `select_jobinfo_t`: valid until the
/// plugin restarts. Give it back with [`SelectPlugin::drop_resource`].
#[derive(Debug, Clone, Copy)]
pub struct Opaque(ResourceAny);

/// A loaded select plugin. Its answers are checked against the node table
/// the host keeps from `node-init` and node updates, which a restarted
/// instance is also given back.
///
/// # Errors
///
/// Every method that calls the plugin fails with a [`CallError`]:
/// [`Disabled`](CallError::Disabled) once the failure policy has taken the
/// plugin out of service; [`NotInitialised`](CallError::NotInitialised) for
/// any call but `init` and `fini` before an `init` succeeded;
/// [`Start`](CallError::Start) when an instance could not be started
/// (instantiated, and after a fault initialised again, restored and given
/// its node table and running jobs back); a fault
/// ([`Fuel`](CallError::Fuel), [`Deadline`](CallError::Deadline),
/// [`Memory`](CallError::Memory), [`Stack`](CallError::Stack),
/// [`Trap`](CallError::Trap)), after which the failure policy decides what
/// serves the next call; [`Plugin`](CallError::Plugin) when the plugin
/// returns a Slurm error, for the functions whose WIT result has one;
/// [`Denied`](CallError::Denied) in place of a plugin error or trap that
/// followed a call to a capability it was not granted;
/// [`StateTooLarge`](CallError::StateTooLarge) for a state blob over the
/// plugin's [`Limits::state_bytes`](crate::Limits::state_bytes). Each
/// method says which answers the host refuses with
/// [`Invalid`](CallError::Invalid).
pub struct SelectPlugin {
    core: PluginCore<SelectKind>,
}

/// A call that changes the plugin's world: on success `$record` updates the
/// journal a restart replays.
macro_rules! journaled {
    ($self:ident, $name:literal, $args:expr, |$b:ident, $s:ident| $call:expr, |$j:ident| $record:expr) => {
        journaled!($self, $name, $args, |$b, $s| $call, no_check, |$j| $record)
    };
    ($self:ident, $name:literal, $args:expr, |$b:ident, $s:ident| $call:expr, $check:expr, |$j:ident| $record:expr) => {
        $self
            .core
            .call_journaled($name, $args, None, |$b, $s| $call, $check, |$j, _| $record)
            .map(|(r, _)| r)
    };
}

/// The node table the host keeps to check answers (empty before
/// `node-init`).
fn nodes(journal: &SelectJournal) -> &[Node] {
    journal.nodes.as_deref().unwrap_or_default()
}

impl SelectPlugin {
    /// Compiles `source` (or takes it from the host's cache), checks that it
    /// is a select plugin for this host's contract, with imports, exports and
    /// identity it may have under `settings`, and asks it to `describe` itself
    /// in a throwaway instance. Runs nothing else of the plugin: call
    /// [`SelectPlugin::init`] next.
    ///
    /// # Errors
    ///
    /// A [`LoadError`]: the source cannot be read or is not a component, or the
    /// compiled-component cache cannot keep it; it is a plugin of another kind
    /// or contract version, imports a capability select plugins may not have,
    /// lacks an export, describes itself wrongly, requires a capability
    /// `settings` does not grant, or faults in its start function or
    /// `describe`.
    pub fn load(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        Ok(SelectPlugin {
            core: PluginCore::load(host, source, settings)?,
        })
    }

    /// [`SelectPlugin::load`] for a wrapper (a component of the
    /// `select-wrapper` world, which imports `select`) over `inner`: every
    /// call the wrapper makes to its imported `select` is a call on `inner`
    /// ([`super::inner_select`]), which keeps its own limits, failure
    /// policy, recordings and checks. `inner` may itself be a wrapper.
    ///
    /// # Errors
    ///
    /// Those of [`SelectPlugin::load`], and
    /// [`LoadError::NotAWrapper`] when `source` does not import `select`.
    /// [`SelectPlugin::load`] refuses a wrapper with
    /// [`LoadError::WrapperWithoutInner`].
    pub fn load_over(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
        inner: SelectPlugin,
    ) -> Result<Self, LoadError> {
        Ok(SelectPlugin {
            core: PluginCore::load_over(host, source, settings, Some(inner))?,
        })
    }

    /// The plugin a host configuration's select slot names: over its
    /// `inner` plugin (and that one's own) when the slot's plugin is a
    /// wrapper, each with the limits, grants and failure policy of its own
    /// table ([`crate::host_config`]).
    ///
    /// # Errors
    ///
    /// Those of [`SelectPlugin::load`] and [`SelectPlugin::load_over`],
    /// innermost first.
    pub fn load_configured(host: &Host, config: &PluginConfig) -> Result<Self, LoadError> {
        let plugin = match &config.inner {
            None => SelectPlugin::load(host, &config.source, config.settings.clone())?,
            Some(inner) => SelectPlugin::load_over(
                host,
                &config.source,
                config.settings.clone(),
                SelectPlugin::load_configured(host, inner)?,
            )?,
        };
        plugin.set_node_health(config.node_health.clone());
        Ok(plugin)
    }

    /// A stack of select plugins, `layers` outermost first: each but the
    /// last a wrapper over the next ([`SelectPlugin::load_over`]), every
    /// layer under `settings`. One layer is [`SelectPlugin::load`].
    ///
    /// # Errors
    ///
    /// The first layer's [`LoadError`], innermost first; `layers` empty is
    /// [`LoadError::NoLayers`].
    pub fn load_stack(
        host: &Host,
        layers: &[PluginSource],
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        let (innermost, outer) = layers.split_last().ok_or(LoadError::NoLayers)?;
        let mut plugin = SelectPlugin::load(host, innermost, settings.clone())?;
        for layer in outer.iter().rev() {
            plugin = SelectPlugin::load_over(host, layer, settings.clone(), plugin)?;
        }
        Ok(plugin)
    }

    /// The inner plugin, when this is a wrapper.
    pub fn inner(&self) -> Option<&SelectPlugin> {
        self.core.inner().map(|wiring| &*wiring.plugin)
    }

    /// Gives a wrapper the administrator's node health program, which its
    /// `node-health` import runs (`-a <apid> -e <exit> -r <job> -u <uid>
    /// -m application|reservation <nodes>`, as select/cray ran
    /// `xtcleanup_after`); none denies it (the default). Only this
    /// wrapper gets it, not wrappers under it; a plugin that is no wrapper
    /// cannot ask, so nothing is kept for it.
    pub fn set_node_health(&self, program: Option<std::path::PathBuf>) {
        if let Some(wiring) = self.core.inner() {
            wiring.set_node_health(program);
        }
    }

    /// Tells a wrapper, and each wrapper under it, job `job_id`'s
    /// `--network` (`select_g_select_jobinfo_set(SELECT_JOBDATA_NETWORK)`,
    /// which slurmctld calls when it creates or updates the job): what the
    /// wrappers' `job-network` import answers for it from now on, across
    /// restarts. `None` forgets the job. A plugin that is no wrapper cannot
    /// ask, so nothing is kept for it.
    pub fn set_job_network(&self, job_id: u32, network: Option<&str>) {
        if let Some(wiring) = self.core.inner() {
            wiring.set_network(job_id, network);
            wiring.plugin.set_job_network(job_id, network);
        }
    }

    /// The number of the instance serving now: records made by an earlier
    /// one are gone ([`super::inner_select`]).
    pub(crate) fn instance(&self) -> u64 {
        self.core.instance()
    }

    /// `select_p_job_init`: the running and suspended jobs, with their
    /// `resources`, after a controller restart. The journal a restarted
    /// instance replays starts over from these jobs.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_init(&self, jobs: &[Job]) -> Result<(), CallError> {
        journaled!(
            self,
            "job-init",
            &(jobs,),
            |b, s| b.slurm_plugin_select().call_job_init(s, jobs),
            |j| j.init_jobs(jobs)
        )
    }

    /// `select_p_node_init`; the host keeps the table to check allocations.
    pub fn node_init(&self, nodes: &[Node]) -> Result<(), CallError> {
        journaled!(
            self,
            "node-init",
            &(nodes,),
            |b, s| b.slurm_plugin_select().call_node_init(s, nodes),
            |j| j.node_init(nodes)
        )
    }

    /// `select_p_job_test`, with the result checked against the candidates
    /// and the node table (a will-run or reservation answer may carry the
    /// nodes without per-node entries), `ncpus` against the chosen nodes,
    /// the preemptees against the candidates offered, and the start time
    /// (see `Checker::job_test_result`).
    pub fn job_test(&self, request: &JobTestRequest) -> Result<JobTestResult, CallError> {
        let nodes_only = matches!(
            request.mode,
            JobTestMode::WillRun | JobTestMode::Reservation
        );
        plain!(
            self,
            "job-test",
            &(request,),
            |b, s| b.slurm_plugin_select().call_job_test(s, request),
            |c, j, result| c.job_test_result(request, result, nodes(j), nodes_only)
        )
    }

    /// `select_p_job_begin`: `job`, with the `resources` `job-test` gave it,
    /// starts; the plugin adds its usage. Journaled (a restarted instance is
    /// given the job again) until [`SelectPlugin::job_fini`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_begin(&self, job: &Job) -> Result<(), CallError> {
        journaled!(
            self,
            "job-begin",
            &(job,),
            |b, s| b.slurm_plugin_select().call_job_begin(s, job),
            |j| j.record(JobCall::Begin(Box::new(job.clone())))
        )
    }

    /// `select_p_job_ready`: whether `job`'s nodes are ready (booted,
    /// powered up).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_ready(&self, job: &Job) -> Result<bool, CallError> {
        plain!(self, "job-ready", &(job,), |b, s| b
            .slurm_plugin_select()
            .call_job_ready(s, job))
    }

    /// `select_p_job_expand_allow`: whether the plugin lets jobs be merged
    /// with [`SelectPlugin::job_expand`] (seed API; gone from Slurm since
    /// 19.05).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)) (the
    /// function returns no plugin error).
    pub fn job_expand_allow(&self) -> Result<bool, CallError> {
        self.core
            .call("job-expand-allow", &(), None, |b, s| {
                b.slurm_plugin_select().call_job_expand_allow(s).map(Ok)
            })
            .map(|(r, _)| r)
    }

    /// `select_p_job_expand`: moves every resource of `from` into `to` and
    /// returns `to`'s new resources. Journaled for restarts.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors));
    /// [`CallError::Invalid`] when the resources name a node neither job held,
    /// break the node table (cores, memory or GRES beyond a node's, entries out
    /// of node order), or count more CPUs than the two jobs held together and
    /// than their nodes have.
    pub fn job_expand(&self, from: &Job, to: &Job) -> Result<JobResources, CallError> {
        let resources = journaled!(
            self,
            "job-expand",
            &(from, to),
            |b, s| b.slurm_plugin_select().call_job_expand(s, from, to),
            |c, j, resources| c.job_expand_result(from, to, resources, nodes(j)),
            |j| j.record(JobCall::Expand(Box::new((from.clone(), to.clone()))))
        )?;
        Ok(resources)
    }

    /// `select_p_job_resized`: node `node_index` (an index into the node
    /// table) was removed from `job`; the plugin releases the job's resources
    /// there. Journaled for restarts.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_resized(&self, job: &Job, node_index: u32) -> Result<(), CallError> {
        journaled!(
            self,
            "job-resized",
            &(job, node_index),
            |b, s| b.slurm_plugin_select().call_job_resized(s, job, node_index),
            |j| j.record(JobCall::Resized(Box::new(job.clone()), node_index))
        )
    }

    /// `select_p_job_signal`: signal `signal` (a POSIX signal number) is
    /// being sent to `job`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_signal(&self, job: &Job, signal: i32) -> Result<(), CallError> {
        plain!(self, "job-signal", &(job, signal), |b, s| b
            .slurm_plugin_select()
            .call_job_signal(s, job, signal))
    }

    /// `select_p_job_mem_confirm`: confirm `job`'s memory allocation (seed
    /// API; removed in Slurm 21.08).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_mem_confirm(&self, job: &Job) -> Result<(), CallError> {
        plain!(self, "job-mem-confirm", &(job,), |b, s| b
            .slurm_plugin_select()
            .call_job_mem_confirm(s, job))
    }

    /// `select_p_job_fini`: `job` ended; the plugin releases its usage. The
    /// job's journaled calls are dropped: a restarted instance is not given it
    /// again.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_fini(&self, job: &Job) -> Result<(), CallError> {
        journaled!(
            self,
            "job-fini",
            &(job,),
            |b, s| b.slurm_plugin_select().call_job_fini(s, job),
            |j| j.fini(job.job_id)
        )
    }

    /// `select_p_job_suspend`: `job` is suspended; `indefinite` when an
    /// administrator suspended it (not gang scheduling). Journaled for
    /// restarts.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_suspend(&self, job: &Job, indefinite: bool) -> Result<(), CallError> {
        journaled!(
            self,
            "job-suspend",
            &(job, indefinite),
            |b, s| b.slurm_plugin_select().call_job_suspend(s, job, indefinite),
            |j| j.record(JobCall::Suspend(Box::new(job.clone()), indefinite))
        )
    }

    /// `select_p_job_resume`: `job` resumes (`indefinite` as for
    /// [`SelectPlugin::job_suspend`]); its `end-time` is its new planned end.
    /// Journaled for restarts.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn job_resume(&self, job: &Job, indefinite: bool) -> Result<(), CallError> {
        journaled!(
            self,
            "job-resume",
            &(job, indefinite),
            |b, s| b.slurm_plugin_select().call_job_resume(s, job, indefinite),
            |j| j.record(JobCall::Resume(Box::new(job.clone()), indefinite))
        )
    }

    /// `select_p_step_pick_nodes`; picked nodes must be among those
    /// offered (`available`, else the job's), `node_count` of them.
    pub fn step_pick_nodes(
        &self,
        job: &Job,
        step: &Step,
        node_count: u32,
        available: Option<&Bitmap>,
    ) -> Result<Option<Bitmap>, CallError> {
        plain!(
            self,
            "step-pick-nodes",
            &(job, step, node_count, available),
            |b, s| b
                .slurm_plugin_select()
                .call_step_pick_nodes(s, job, step, node_count, available),
            |c, _, picked: &Option<Bitmap>| match picked {
                Some(map) => c.picked_step_nodes(job, node_count, available, map),
                None => Ok(()),
            }
        )
    }

    /// `select_p_step_finish`: `step` ended; `killing` when its job is being
    /// killed. Its [`SelectPlugin::step_start`] leaves the journal.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn step_finish(&self, step: &Step, killing: bool) -> Result<(), CallError> {
        journaled!(
            self,
            "step-finish",
            &(step, killing),
            |b, s| b.slurm_plugin_select().call_step_finish(s, step, killing),
            |j| j.step_finish(step.job_id, step.step_id)
        )
    }

    /// `select_p_step_start`: step `step_id` of `job` starts on `nodes`
    /// (the optional `select-steps` export; a plugin without it is not
    /// called, as Slurm's select/linear and select/cons_tres do nothing).
    /// Journaled for restarts until the step's
    /// [`SelectPlugin::step_finish`] or the job's `job-fini`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn step_start(&self, job: &Job, step_id: u32, nodes: &Bitmap) -> Result<(), CallError> {
        journaled!(
            self,
            "step-start",
            &(job, step_id, nodes),
            |b, s| b.call_step_start(s, job, step_id, nodes),
            |j| j.record(JobCall::StepStart(Box::new((
                job.clone(),
                step_id,
                nodes.clone()
            ))))
        )
    }

    /// Which of `job`'s nodes its next step may use (the optional
    /// `select-steps` export, `*avail_nodes` of
    /// `select_p_step_pick_nodes`); none, without asking, for a plugin
    /// without it. The controller places the step within them.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors));
    /// [`CallError::Invalid`] when the answer is not a bitmap over the node
    /// table or names a node the job does not hold.
    pub fn step_avail_nodes(&self, job: &Job) -> Result<Option<Bitmap>, CallError> {
        plain!(
            self,
            "step-avail-nodes",
            &(job,),
            |b, s| b.call_step_avail_nodes(s, job),
            |c, _, avail: &Option<Bitmap>| match avail {
                Some(map) => c.step_avail_nodes(job, map),
                None => Ok(()),
            }
        )
    }

    /// `select_p_reconfigure`: the configuration changed; the plugin takes
    /// `config` and rebuilds its usage from the `running` jobs. On success
    /// `config` is what a restarted instance's `init` gets, and the journal
    /// starts over from `running`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn reconfigure(&self, config: &SelectConfig, running: &[Job]) -> Result<(), CallError> {
        journaled!(
            self,
            "reconfigure",
            &(config, running),
            |b, s| b.slurm_plugin_select().call_reconfigure(s, config, running),
            |j| j.init_jobs(running)
        )?;
        self.core.remember_config(config);
        Ok(())
    }

    /// `select_p_update_node_config`: `node`'s configuration changed. The
    /// host's copy of the node table, which answers are checked against and
    /// restarts replay, takes the record at `node.index`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn update_node_config(&self, node: &Node) -> Result<(), CallError> {
        journaled!(
            self,
            "update-node-config",
            &(node,),
            |b, s| b.slurm_plugin_select().call_update_node_config(s, node),
            |j| j.node_update(node)
        )
    }

    /// `select_p_update_node_state`: `node`'s state changed (seed API; gone
    /// from Slurm since 20.02). The host's copy of the node table takes the
    /// record as [`SelectPlugin::update_node_config`] does.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn update_node_state(&self, node: &Node) -> Result<(), CallError> {
        journaled!(
            self,
            "update-node-state",
            &(node,),
            |b, s| b.slurm_plugin_select().call_update_node_state(s, node),
            |j| j.node_update(node)
        )
    }

    /// `select_p_node_ranking`: a new weight per node of `nodes`, in their
    /// order, or `None` when the plugin does not rank (seed API; gone from
    /// Slurm since 20.11).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors));
    /// [`CallError::Invalid`] when the weights are not one per node.
    pub fn node_ranking(&self, nodes: &[Node]) -> Result<Option<Vec<u32>>, CallError> {
        plain!(
            self,
            "node-ranking",
            &(nodes,),
            |b, s| b.slurm_plugin_select().call_node_ranking(s, nodes),
            |c, _, ranks: &Option<Vec<u32>>| match ranks {
                Some(r) if r.len() != nodes.len() => {
                    Err(c.fail(format!("{} weights for {} nodes", r.len(), nodes.len())))
                }
                _ => Ok(()),
            }
        )
    }

    /// `select_p_select_nodeinfo_set_all`: the plugin refreshes every node's
    /// nodeinfo from its usage tables.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn nodeinfo_set_all(&self) -> Result<(), CallError> {
        plain!(self, "nodeinfo-set-all", &(), |b, s| b
            .slurm_plugin_select()
            .call_nodeinfo_set_all(s))
    }

    /// `select_p_select_nodeinfo_set`: the plugin refreshes the nodeinfo of
    /// `job`'s nodes.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn nodeinfo_set(&self, job: &Job) -> Result<(), CallError> {
        plain!(self, "nodeinfo-set", &(job,), |b, s| b
            .slurm_plugin_select()
            .call_nodeinfo_set(s, job))
    }

    /// The nodeinfo of node `node_index` as last refreshed (what C reads from
    /// `node_ptr->select_nodeinfo`). Free it with
    /// [`SelectPlugin::drop_resource`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn node_nodeinfo(&self, node_index: u32) -> Result<Opaque, CallError> {
        opaque!(self, "node-nodeinfo", |b, s| b
            .slurm_plugin_select()
            .call_node_nodeinfo(s, node_index))
        .map(Opaque)
    }

    /// `select_p_select_nodeinfo_alloc`: a new, empty nodeinfo. Free it with
    /// [`SelectPlugin::drop_resource`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)) (the
    /// constructor returns no plugin error).
    pub fn nodeinfo_alloc(&self) -> Result<Opaque, CallError> {
        self.core
            .call_untapped(
                "select-nodeinfo.constructor",
                |b, s| {
                    b.slurm_plugin_select()
                        .select_nodeinfo()
                        .call_constructor(s)
                        .map(Ok)
                },
                no_check,
            )
            .map(|(r, _)| Opaque(r))
    }

    /// `select_p_select_nodeinfo_pack`: `info` serialised for Slurm RPC
    /// protocol `protocol_version` (`SLURM_22_05_PROTOCOL_VERSION`, ...).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn nodeinfo_pack(&self, info: Opaque, protocol_version: u16) -> Result<Vec<u8>, CallError> {
        opaque!(self, "select-nodeinfo.pack", |b, s| b
            .slurm_plugin_select()
            .select_nodeinfo()
            .call_pack(s, info.0, protocol_version))
    }

    /// `select_p_select_nodeinfo_unpack`: a nodeinfo read back from `data`,
    /// bytes [`SelectPlugin::nodeinfo_pack`] wrote for `protocol_version`.
    /// Free it with [`SelectPlugin::drop_resource`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)); the
    /// contract has the plugin refuse truncated data and unknown protocol
    /// versions with [`CallError::Plugin`].
    pub fn nodeinfo_unpack(&self, data: &[u8], protocol_version: u16) -> Result<Opaque, CallError> {
        opaque!(self, "select-nodeinfo.unpack", |b, s| b
            .slurm_plugin_select()
            .select_nodeinfo()
            .call_unpack(s, data, protocol_version))
        .map(Opaque)
    }

    /// `select_p_select_nodeinfo_get`: `field` of `info`, for the node's
    /// resources in state `state` (a `NODE_STATE_*` value).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)); the
    /// contract has the plugin refuse `ptr`. [`CallError::Invalid`] when the
    /// value is not of the field's kind (`subcnt` a count, `mem-alloc` memory,
    /// `tres-alloc-fmt-str` a text, `tres-alloc-weighted` a weight), counts
    /// more CPUs or memory (MB) than any node of the table has, is a negative
    /// or non-finite weight, or a text over 1 MiB.
    pub fn nodeinfo_get(
        &self,
        info: Opaque,
        field: NodeinfoField,
        state: u32,
    ) -> Result<NodeinfoValue, CallError> {
        opaque!(
            self,
            "select-nodeinfo.get",
            |b, s| b
                .slurm_plugin_select()
                .select_nodeinfo()
                .call_get(s, info.0, field, state),
            |c, j, value| c.nodeinfo_value(field, value, nodes(j))
        )
    }

    /// `select_p_select_jobinfo_alloc`: a new, empty jobinfo. Free it with
    /// [`SelectPlugin::drop_resource`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)) (the
    /// constructor returns no plugin error).
    pub fn jobinfo_alloc(&self) -> Result<Opaque, CallError> {
        self.core
            .call_untapped(
                "select-jobinfo.constructor",
                |b, s| {
                    b.slurm_plugin_select()
                        .select_jobinfo()
                        .call_constructor(s)
                        .map(Ok)
                },
                no_check,
            )
            .map(|(r, _)| Opaque(r))
    }

    /// `select_p_select_jobinfo_copy`: a new jobinfo equal to `info`. Free
    /// it with [`SelectPlugin::drop_resource`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)) (the
    /// function returns no plugin error).
    pub fn jobinfo_copy(&self, info: Opaque) -> Result<Opaque, CallError> {
        self.core
            .call_untapped(
                "select-jobinfo.copy",
                |b, s| {
                    b.slurm_plugin_select()
                        .select_jobinfo()
                        .call_copy(s, info.0)
                        .map(Ok)
                },
                no_check,
            )
            .map(|(r, _)| Opaque(r))
    }

    /// `select_p_select_jobinfo_pack`: `info` serialised for Slurm RPC
    /// protocol `protocol_version`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn jobinfo_pack(&self, info: Opaque, protocol_version: u16) -> Result<Vec<u8>, CallError> {
        opaque!(self, "select-jobinfo.pack", |b, s| b
            .slurm_plugin_select()
            .select_jobinfo()
            .call_pack(s, info.0, protocol_version))
    }

    /// `select_p_select_jobinfo_unpack`: a jobinfo read back from `data`,
    /// bytes [`SelectPlugin::jobinfo_pack`] wrote for `protocol_version`. Free
    /// it with [`SelectPlugin::drop_resource`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn jobinfo_unpack(&self, data: &[u8], protocol_version: u16) -> Result<Opaque, CallError> {
        opaque!(self, "select-jobinfo.unpack", |b, s| b
            .slurm_plugin_select()
            .select_jobinfo()
            .call_unpack(s, data, protocol_version))
        .map(Opaque)
    }

    /// `select_p_select_jobinfo_get`: `field` of `info`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)); the
    /// contract has the plugin refuse `ptr`. [`CallError::Invalid`] when the
    /// value is not of the field's kind (`network` a text of at most 1 MiB,
    /// `cleaning` a flag).
    pub fn jobinfo_get(
        &self,
        info: Opaque,
        field: JobinfoField,
    ) -> Result<JobinfoValue, CallError> {
        opaque!(
            self,
            "select-jobinfo.get",
            |b, s| b
                .slurm_plugin_select()
                .select_jobinfo()
                .call_get(s, info.0, field),
            |c, _, value| c.jobinfo_value(field, value)
        )
    }

    /// `select_p_select_jobinfo_set`: sets `field` of `info` to `value`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn jobinfo_set(
        &self,
        info: Opaque,
        field: JobinfoField,
        value: &JobinfoValue,
    ) -> Result<(), CallError> {
        opaque!(self, "select-jobinfo.set", |b, s| b
            .slurm_plugin_select()
            .select_jobinfo()
            .call_set(s, info.0, field, value))
    }

    /// `select_p_select_jobinfo_sprint` (and `_xstrdup`): `info` formatted
    /// in `mode` (`SELECT_PRINT_HEAD`, `_DATA`, `_MIXED`, `_MIXED_SHORT`).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)) (the
    /// function returns no plugin error); [`CallError::Invalid`] for a text
    /// over 1 MiB.
    pub fn jobinfo_to_string(&self, info: Opaque, mode: SprintMode) -> Result<String, CallError> {
        opaque!(
            self,
            "select-jobinfo.to-string",
            |b, s| b
                .slurm_plugin_select()
                .select_jobinfo()
                .call_to_string(s, info.0, mode)
                .map(Ok),
            |c, _, text: &String| c.text("text", text)
        )
    }

    /// Frees a nodeinfo or jobinfo (`select_p_select_*_free`).
    pub fn drop_resource(&self, info: Opaque) -> Result<(), CallError> {
        self.core
            .call_untapped(
                "resource-drop",
                |_, s| info.0.resource_drop(s).map(Ok),
                no_check,
            )
            .map(|_| ())
    }

    /// `select_p_get_info_from_plugin`: what the plugin says about `field`,
    /// for `job` when the caller names one.
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors));
    /// [`CallError::Invalid`] when the value is not of the field's kind:
    /// `cr-plugin` a number 0 (whole nodes), 1 (cons_res) or 2 (cons_tres),
    /// `config-info` key/value pairs (at most 2^20, texts of at most 1 MiB),
    /// `single-job-test` a flag.
    pub fn get_info_from_plugin(
        &self,
        field: PluginInfoField,
        job: Option<&Job>,
    ) -> Result<PluginInfoValue, CallError> {
        plain!(
            self,
            "get-info-from-plugin",
            &(field, job),
            |b, s| b
                .slurm_plugin_select()
                .call_get_info_from_plugin(s, field, job),
            |c, _, value| c.plugin_info(field, value)
        )
    }

    /// `select_p_resv_test`; the answer must stay inside what was offered
    /// and asked for (see `Checker::reservation`).
    pub fn resv_test(&self, request: &ReservationRequest) -> Result<ReservationResult, CallError> {
        plain!(
            self,
            "resv-test",
            &(request,),
            |b, s| b.slurm_plugin_select().call_resv_test(s, request),
            |c, j, result| c.reservation(request, result, nodes(j))
        )
    }

    /// `select_p_ba_init`: block-allocator setup over `nodes`, checking them
    /// when `sanity_check` (seed API, gone from Slurm since 19.05; meaningful
    /// only on multi-dimensional systems).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)).
    pub fn ba_init(&self, nodes: &[Node], sanity_check: bool) -> Result<(), CallError> {
        plain!(self, "ba-init", &(nodes, sanity_check), |b, s| b
            .slurm_plugin_select()
            .call_ba_init(s, nodes, sanity_check))
    }

    /// `select_p_ba_get_dims`: the system's dimensions, `None` on flat
    /// systems (seed API, gone from Slurm since 19.05).
    ///
    /// # Errors
    ///
    /// Those of every call ([`SelectPlugin`](SelectPlugin#errors)) (the
    /// function returns no plugin error); [`CallError::Invalid`] for more than
    /// 5 dimensions (Slurm's `HIGHEST_DIMENSIONS`).
    pub fn ba_get_dims(&self) -> Result<Option<Vec<u32>>, CallError> {
        plain!(
            self,
            "ba-get-dims",
            &(),
            |b, s| b.slurm_plugin_select().call_ba_get_dims(s).map(Ok),
            |c, _, dims: &Option<Vec<u32>>| dims.as_ref().map_or(Ok(()), |d| c.dims(d))
        )
    }
}
