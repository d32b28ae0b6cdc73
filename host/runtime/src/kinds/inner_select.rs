//! The `select` a wrapper imports (`select-wrapper` world), served by the
//! host: each call is forwarded to the wrapper's inner plugin, a
//! [`SelectPlugin`] with its own instance, limits, failure policy and
//! checks of its answers.
//!
//! # Accounting
//!
//! * Fuel: the inner plugin burns its own store's fuel; the wrapper's fuel
//!   counts only the wrapper's own code.
//! * Deadline: time spent in the inner plugin is given back to the
//!   wrapper's deadline (its epoch deadline and its WASI wait deadline),
//!   so a slow inner call cannot make the wrapper time out; the inner call
//!   has its own deadline.
//! * Faults: a Slurm error of the inner plugin reaches the wrapper as the
//!   `plugin-error` of the import, for the wrapper to pass on or handle (as
//!   C's `other_job_test` returns its rc). Anything else (a fault, an
//!   answer the host refused, the inner plugin disabled) traps the
//!   wrapper's call with [`InnerFailure`], which the host reports as
//!   [`CallError::Inner`] naming the inner plugin's error; the inner
//!   plugin's failure policy has already counted it, and the wrapper's
//!   does not ([`crate::plugin`]).
//!
//! # Jobs' networks
//!
//! The wrapper's imported `job-network` answers from the table the
//! controller keeps with [`SelectPlugin::set_job_network`] (Slurm's
//! `SELECT_JOBDATA_NETWORK`): one table per wrapper, outside its
//! instances, so a restarted instance reads the same answers.
//!
//! # Node health checks
//!
//! The imported `node-health` runs the program the administrator gave the
//! wrapper ([`SelectPlugin::set_node_health`], `node_health` in the host
//! configuration) as a child process, in the background; without one it
//! answers `denied`. Checks belong to the wrapper, not to an instance: a
//! restarted instance polls the checks the one before started.
//!
//! # Handles
//!
//! A wrapper's imported `select-nodeinfo` and `select-jobinfo` are the
//! inner plugin's records, valid for the inner instance that made them:
//! once the inner plugin restarted, using one is a plugin error
//! (`EINVAL`) rather than a call on a record that no longer exists.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use wasmtime::component::{Linker, Resource};

use crate::bindings::select_wrapper::slurm::plugin::job_network;
use crate::bindings::select_wrapper::slurm::plugin::node_health::{self, HealthCheck, HealthError};
use crate::bindings::select_wrapper::slurm::plugin::select as imp;
use crate::bindings::select_wrapper::slurm::plugin::select_steps;
use crate::bindings::types::{Bitmap, Job, JobResources, Node, PluginError, Step};
use crate::error::CallError;
use crate::kinds::select::{Opaque, SelectPlugin};
use crate::limits::EPOCH_TICK;
use crate::store::HostState;

/// `EINVAL`, what a call on a record of a restarted inner instance gets.
const EINVAL: i32 = 22;

/// What a wrapper is wired to, shared by its instances: the inner plugin,
/// the jobs' networks its `job-network` import answers from, and its node
/// health checks.
pub(crate) struct Wiring {
    pub(crate) plugin: Arc<SelectPlugin>,
    networks: Mutex<HashMap<u32, String>>,
    health: Mutex<NodeHealth>,
}

/// The node health program and the checks it runs.
#[derive(Default)]
struct NodeHealth {
    program: Option<PathBuf>,
    checks: HashMap<u64, Child>,
    next: u64,
}

impl NodeHealth {
    /// Runs the program as select/cray ran `xtcleanup_after`:
    /// `-a <apid> -e <exit code> -r <job id> -u <uid> -m
    /// application|reservation <nodes>`, no input, output discarded.
    fn start(&mut self, check: &HealthCheck) -> Result<u64, HealthError> {
        let program = self.program.as_ref().ok_or(HealthError::Denied)?;
        let mode = if check.step_id.is_some() {
            "application"
        } else {
            "reservation"
        };
        let child = Command::new(program)
            .args([
                "-a",
                &check.apid.to_string(),
                "-e",
                &check.exit_code.to_string(),
            ])
            .args([
                "-r",
                &check.job_id.to_string(),
                "-u",
                &check.user_id.to_string(),
            ])
            .args(["-m", mode, &check.nodes])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| HealthError::Failed(format!("{}: {e}", program.display())))?;
        self.next += 1;
        self.checks.insert(self.next, child);
        Ok(self.next)
    }

    fn poll(&mut self, id: u64) -> Result<Option<i32>, HealthError> {
        if self.program.is_none() {
            return Err(HealthError::Denied);
        }
        let child = self
            .checks
            .get_mut(&id)
            .ok_or_else(|| HealthError::Failed(format!("no node health check {id}")))?;
        let status = child
            .try_wait()
            .map_err(|e| HealthError::Failed(format!("node health check {id}: {e}")))?;
        let Some(status) = status else {
            return Ok(None);
        };
        self.checks.remove(&id);
        use std::os::unix::process::ExitStatusExt;
        Ok(Some(
            status
                .code()
                .or_else(|| status.signal().map(|s| -s))
                .unwrap_or(-1),
        ))
    }
}

impl Wiring {
    pub(crate) fn new(plugin: SelectPlugin) -> Self {
        Wiring {
            plugin: Arc::new(plugin),
            networks: Mutex::default(),
            health: Mutex::default(),
        }
    }

    /// Sets the node health program (none: the import answers `denied`).
    pub(crate) fn set_node_health(&self, program: Option<PathBuf>) {
        self.health
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .program = program;
    }

    fn health<R>(&self, f: impl FnOnce(&mut NodeHealth) -> R) -> R {
        f(&mut self.health.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Records job `job_id`'s network (none forgets it).
    pub(crate) fn set_network(&self, job_id: u32, network: Option<&str>) {
        let mut networks = self.networks.lock().unwrap_or_else(|e| e.into_inner());
        match network {
            Some(network) => networks.insert(job_id, network.to_owned()),
            None => networks.remove(&job_id),
        };
    }

    fn network(&self, job_id: u32) -> Option<String> {
        let networks = self.networks.lock().unwrap_or_else(|e| e.into_inner());
        networks.get(&job_id).cloned()
    }
}

/// The wiring of a wrapper's instance, and the wrapper's credit of time
/// spent in its inner plugin.
pub(crate) struct Inner {
    wiring: Arc<Wiring>,
    /// Epoch ticks spent in inner calls since the wrapper's deadline was
    /// last extended ([`extend_deadline`]).
    credit_ticks: u64,
}

impl Inner {
    pub(crate) fn new(wiring: Arc<Wiring>) -> Self {
        Inner {
            wiring,
            credit_ticks: 0,
        }
    }
}

/// Why a wrapper's call into its inner plugin trapped: the inner plugin's
/// error, which [`crate::plugin`] reports as [`CallError::Inner`].
#[derive(Debug, thiserror::Error)]
#[error("its inner plugin failed: {0}")]
pub(crate) struct InnerFailure(pub(crate) CallError);

/// The host side of a wrapper's imported `select-nodeinfo`: a nodeinfo of
/// the inner plugin, and the inner instance it belongs to.
pub struct InnerNodeinfo(Handle);

/// The host side of a wrapper's imported `select-jobinfo`.
pub struct InnerJobinfo(Handle);

#[derive(Clone, Copy)]
struct Handle {
    info: Opaque,
    instance: u64,
}

/// A wrapper's handle on an inner record.
trait Record: Send + 'static {
    fn handle(&self) -> &Handle;
}

impl Record for InnerNodeinfo {
    fn handle(&self) -> &Handle {
        &self.0
    }
}

impl Record for InnerJobinfo {
    fn handle(&self) -> &Handle {
        &self.0
    }
}

/// Adds the imports of the `select-wrapper` world (`select`,
/// `job-network`, `node-health`, `select-steps`) to a select linker:
/// components that do not import them are unaffected.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    imp::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(linker, |s| s)?;
    job_network::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(
        linker,
        |s| s,
    )?;
    node_health::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(
        linker,
        |s| s,
    )?;
    select_steps::add_to_linker::<HostState, wasmtime::component::HasSelf<HostState>>(linker, |s| s)
}

/// The inner plugin's step hooks: its `select-steps` export, or what
/// [`SelectPlugin::step_start`] and [`SelectPlugin::step_avail_nodes`]
/// answer for a plugin without one.
impl select_steps::Host for HostState {
    fn step_start(&mut self, job: Job, step_id: u32, nodes: Bitmap) -> Answer<()> {
        self.forward(|p| p.step_start(&job, step_id, &nodes))
    }

    fn step_avail_nodes(&mut self, job: Job) -> Answer<Option<Bitmap>> {
        self.forward(|p| p.step_avail_nodes(&job))
    }
}

impl node_health::Host for HostState {
    /// Starts the wrapper's program; `denied` without one (and outside a
    /// wrapper's call).
    fn start(&mut self, check: HealthCheck) -> Result<u64, HealthError> {
        match self.inner.as_ref() {
            Some(inner) => inner.wiring.health(|h| h.start(&check)),
            None => Err(HealthError::Denied),
        }
    }

    fn poll(&mut self, id: u64) -> Result<Option<i32>, HealthError> {
        match self.inner.as_ref() {
            Some(inner) => inner.wiring.health(|h| h.poll(id)),
            None => Err(HealthError::Denied),
        }
    }
}

impl job_network::Host for HostState {
    /// What the controller told the wrapper's plugin of the job; none
    /// outside a wrapper's call.
    fn network(&mut self, job_id: u32) -> Option<String> {
        self.inner.as_ref()?.wiring.network(job_id)
    }
}

/// The epoch-deadline callback of a wrapper's store: a deadline reached
/// while the wrapper has credit from inner calls moves on by that credit;
/// one reached without credit is the wrapper's own, and interrupts it as a
/// store without the callback would.
pub(crate) fn extend_deadline(
    mut ctx: wasmtime::StoreContextMut<'_, HostState>,
) -> wasmtime::Result<wasmtime::UpdateDeadline> {
    let credit = ctx
        .data_mut()
        .inner
        .as_mut()
        .map_or(0, |inner| std::mem::take(&mut inner.credit_ticks));
    if credit == 0 {
        return Err(wasmtime::Trap::Interrupt.into());
    }
    Ok(wasmtime::UpdateDeadline::Continue(credit))
}

impl HostState {
    /// Runs `call` on the inner plugin, giving the time it took back to the
    /// wrapper's deadlines. Traps when the wrapper has no inner plugin
    /// (only in the throwaway instance that answers `describe`, which must
    /// call nothing).
    fn on_inner<R>(
        &mut self,
        call: impl FnOnce(&SelectPlugin) -> Result<R, CallError>,
    ) -> wasmtime::Result<Result<R, CallError>> {
        let Some(inner) = self.inner.as_ref() else {
            return Err(wasmtime::Error::msg(
                "called its inner plugin outside a call (from its start function or describe)",
            ));
        };
        let plugin = inner.wiring.plugin.clone();
        let started = Instant::now();
        let result = call(&plugin);
        let spent = started.elapsed();
        if let Some(inner) = self.inner.as_mut() {
            inner.credit_ticks += credit_for(spent);
        }
        if let Some(deadline) = self.call.deadline.as_mut() {
            *deadline += spent + EPOCH_TICK;
        }
        Ok(result)
    }

    /// [`HostState::on_inner`] for a function whose WIT result has a
    /// `plugin-error`: the inner plugin's Slurm error is the wrapper's to
    /// handle; any other failure traps the wrapper's call.
    fn forward<R>(
        &mut self,
        call: impl FnOnce(&SelectPlugin) -> Result<R, CallError>,
    ) -> wasmtime::Result<Result<R, PluginError>> {
        match self.on_inner(call)? {
            Ok(value) => Ok(Ok(value)),
            Err(CallError::Plugin { code, message, .. }) => Ok(Err(PluginError { code, message })),
            Err(error) => Err(InnerFailure(error).into()),
        }
    }

    /// [`HostState::on_inner`] for a function without an error result:
    /// any failure traps the wrapper's call.
    fn forward_infallible<R>(
        &mut self,
        call: impl FnOnce(&SelectPlugin) -> Result<R, CallError>,
    ) -> wasmtime::Result<R> {
        self.on_inner(call)?
            .map_err(|error| InnerFailure(error).into())
    }

    /// The instance generation of the inner plugin now.
    fn inner_instance(&self) -> u64 {
        self.inner
            .as_ref()
            .map_or(0, |i| i.wiring.plugin.instance())
    }

    fn new_handle(&mut self, info: Opaque) -> Handle {
        Handle {
            info,
            instance: self.inner_instance(),
        }
    }

    /// The inner record behind the wrapper's handle `this`, or the error a
    /// record of an earlier inner instance gets.
    fn info_of<T: Record>(
        &mut self,
        this: &Resource<T>,
    ) -> wasmtime::Result<Result<Opaque, PluginError>> {
        let handle = *self.table().get(this)?.handle();
        Ok(self.live_info(&handle))
    }

    /// The inner record behind `handle`, or the error a record of an
    /// earlier inner instance gets.
    fn live_info(&self, handle: &Handle) -> Result<Opaque, PluginError> {
        if handle.instance == self.inner_instance() {
            Ok(handle.info)
        } else {
            Err(PluginError {
                code: EINVAL,
                message: "the inner plugin restarted since this record was made".into(),
            })
        }
    }
}

// `From` both ways between the import's and the export's copies of the
// `select` interface's own types (one WIT interface in two directions
// gives two Rust types; the shared `types` are one).
slurm_wasm_fixtures::select_crossings!(
    crate::bindings::select_wrapper::slurm::plugin::select,
    crate::bindings::select::exports::slurm::plugin::select
);

type Answer<T> = wasmtime::Result<Result<T, PluginError>>;

impl imp::Host for HostState {
    fn init(&mut self, config: imp::SelectConfig) -> Answer<()> {
        let config = config.into();
        self.forward(|p| p.init(&config))
    }

    fn fini(&mut self) -> Answer<()> {
        self.forward(|p| p.fini())
    }

    fn state_save(&mut self) -> Answer<Vec<u8>> {
        self.forward(|p| p.state_save())
    }

    fn state_restore(&mut self, data: Vec<u8>) -> Answer<()> {
        self.forward(|p| p.state_restore(&data))
    }

    fn job_init(&mut self, jobs: Vec<Job>) -> Answer<()> {
        self.forward(|p| p.job_init(&jobs))
    }

    fn node_init(&mut self, nodes: Vec<Node>) -> Answer<()> {
        self.forward(|p| p.node_init(&nodes))
    }

    fn job_test(&mut self, request: imp::JobTestRequest) -> Answer<imp::JobTestResult> {
        let request = request.into();
        self.forward(|p| p.job_test(&request).map(Into::into))
    }

    fn job_begin(&mut self, job: Job) -> Answer<()> {
        self.forward(|p| p.job_begin(&job))
    }

    fn job_ready(&mut self, job: Job) -> Answer<bool> {
        self.forward(|p| p.job_ready(&job))
    }

    fn job_expand_allow(&mut self) -> wasmtime::Result<bool> {
        self.forward_infallible(|p| p.job_expand_allow())
    }

    fn job_expand(&mut self, from: Job, to: Job) -> Answer<JobResources> {
        self.forward(|p| p.job_expand(&from, &to))
    }

    fn job_resized(&mut self, job: Job, node_index: u32) -> Answer<()> {
        self.forward(|p| p.job_resized(&job, node_index))
    }

    fn job_signal(&mut self, job: Job, signal: i32) -> Answer<()> {
        self.forward(|p| p.job_signal(&job, signal))
    }

    fn job_mem_confirm(&mut self, job: Job) -> Answer<()> {
        self.forward(|p| p.job_mem_confirm(&job))
    }

    fn job_fini(&mut self, job: Job) -> Answer<()> {
        self.forward(|p| p.job_fini(&job))
    }

    fn job_suspend(&mut self, job: Job, indefinite: bool) -> Answer<()> {
        self.forward(|p| p.job_suspend(&job, indefinite))
    }

    fn job_resume(&mut self, job: Job, indefinite: bool) -> Answer<()> {
        self.forward(|p| p.job_resume(&job, indefinite))
    }

    fn step_pick_nodes(
        &mut self,
        job: Job,
        step: Step,
        node_count: u32,
        available: Option<Bitmap>,
    ) -> Answer<Option<Bitmap>> {
        self.forward(|p| p.step_pick_nodes(&job, &step, node_count, available.as_ref()))
    }

    fn step_finish(&mut self, step: Step, killing: bool) -> Answer<()> {
        self.forward(|p| p.step_finish(&step, killing))
    }

    fn reconfigure(&mut self, config: imp::SelectConfig, running: Vec<Job>) -> Answer<()> {
        let config = config.into();
        self.forward(|p| p.reconfigure(&config, &running))
    }

    fn update_node_config(&mut self, node: Node) -> Answer<()> {
        self.forward(|p| p.update_node_config(&node))
    }

    fn update_node_state(&mut self, node: Node) -> Answer<()> {
        self.forward(|p| p.update_node_state(&node))
    }

    fn node_ranking(&mut self, nodes: Vec<Node>) -> Answer<Option<Vec<u32>>> {
        self.forward(|p| p.node_ranking(&nodes))
    }

    fn nodeinfo_set_all(&mut self) -> Answer<()> {
        self.forward(|p| p.nodeinfo_set_all())
    }

    fn nodeinfo_set(&mut self, job: Job) -> Answer<()> {
        self.forward(|p| p.nodeinfo_set(&job))
    }

    fn node_nodeinfo(&mut self, node_index: u32) -> Answer<Resource<InnerNodeinfo>> {
        let made = self.forward(|p| p.node_nodeinfo(node_index))?;
        self.push_info(made, InnerNodeinfo)
    }

    fn get_info_from_plugin(
        &mut self,
        field: imp::PluginInfoField,
        job: Option<Job>,
    ) -> Answer<imp::PluginInfoValue> {
        self.forward(|p| {
            p.get_info_from_plugin(field.into(), job.as_ref())
                .map(Into::into)
        })
    }

    fn resv_test(&mut self, request: imp::ReservationRequest) -> Answer<imp::ReservationResult> {
        let request = request.into();
        self.forward(|p| p.resv_test(&request).map(Into::into))
    }

    fn ba_init(&mut self, nodes: Vec<Node>, sanity_check: bool) -> Answer<()> {
        self.forward(|p| p.ba_init(&nodes, sanity_check))
    }

    fn ba_get_dims(&mut self) -> wasmtime::Result<Option<Vec<u32>>> {
        self.forward_infallible(|p| p.ba_get_dims())
    }
}

impl HostState {
    /// The wrapper's handle on the new inner record `info`, as `wrap`
    /// makes it.
    fn push_record<T: Send + 'static>(
        &mut self,
        info: Opaque,
        wrap: fn(Handle) -> T,
    ) -> wasmtime::Result<Resource<T>> {
        let handle = wrap(self.new_handle(info));
        Ok(self.table().push(handle)?)
    }

    /// [`HostState::push_record`] for a record the inner plugin may
    /// refuse to make (its error goes to the wrapper).
    fn push_info<T: Send + 'static>(
        &mut self,
        made: Result<Opaque, PluginError>,
        wrap: fn(Handle) -> T,
    ) -> Answer<Resource<T>> {
        match made {
            Ok(info) => Ok(Ok(self.push_record(info, wrap)?)),
            Err(e) => Ok(Err(e)),
        }
    }

    /// [`HostState::forward`] of a call on the inner record behind `this`;
    /// a record of an earlier inner instance gets its error without a call.
    fn forward_on<T: Record, R>(
        &mut self,
        this: &Resource<T>,
        call: impl FnOnce(&SelectPlugin, Opaque) -> Result<R, CallError>,
    ) -> Answer<R> {
        match self.info_of(this)? {
            Ok(info) => self.forward(|p| call(p, info)),
            Err(e) => Ok(Err(e)),
        }
    }

    /// [`HostState::forward_infallible`] of a call on the inner record
    /// behind `this`, for functions without an error result: a record of
    /// an earlier inner instance traps the wrapper's call.
    fn forward_infallible_on<T: Record, R>(
        &mut self,
        this: &Resource<T>,
        call: impl FnOnce(&SelectPlugin, Opaque) -> Result<R, CallError>,
    ) -> wasmtime::Result<R> {
        let info = self
            .info_of(this)?
            .map_err(|e| wasmtime::Error::msg(e.message))?;
        self.forward_infallible(|p| call(p, info))
    }

    /// Frees the inner record of a dropped handle (a record of an earlier
    /// inner instance went with it).
    fn drop_info(&mut self, handle: &Handle) -> wasmtime::Result<()> {
        if let Ok(info) = self.live_info(handle) {
            self.forward_infallible(|p| p.drop_resource(info))?;
        }
        Ok(())
    }
}

impl imp::HostSelectNodeinfo for HostState {
    fn new(&mut self) -> wasmtime::Result<Resource<InnerNodeinfo>> {
        let info = self.forward_infallible(|p| p.nodeinfo_alloc())?;
        self.push_record(info, InnerNodeinfo)
    }

    fn pack(&mut self, this: Resource<InnerNodeinfo>, protocol_version: u16) -> Answer<Vec<u8>> {
        self.forward_on(&this, |p, info| p.nodeinfo_pack(info, protocol_version))
    }

    fn unpack(&mut self, data: Vec<u8>, protocol_version: u16) -> Answer<Resource<InnerNodeinfo>> {
        let made = self.forward(|p| p.nodeinfo_unpack(&data, protocol_version))?;
        self.push_info(made, InnerNodeinfo)
    }

    fn get(
        &mut self,
        this: Resource<InnerNodeinfo>,
        field: imp::NodeinfoField,
        state: u32,
    ) -> Answer<imp::NodeinfoValue> {
        self.forward_on(&this, |p, info| {
            p.nodeinfo_get(info, field.into(), state).map(Into::into)
        })
    }

    fn drop(&mut self, this: Resource<InnerNodeinfo>) -> wasmtime::Result<()> {
        let handle = self.table().delete(this)?;
        self.drop_info(&handle.0)
    }
}

impl imp::HostSelectJobinfo for HostState {
    fn new(&mut self) -> wasmtime::Result<Resource<InnerJobinfo>> {
        let info = self.forward_infallible(|p| p.jobinfo_alloc())?;
        self.push_record(info, InnerJobinfo)
    }

    fn copy(&mut self, this: Resource<InnerJobinfo>) -> wasmtime::Result<Resource<InnerJobinfo>> {
        let copy = self.forward_infallible_on(&this, |p, info| p.jobinfo_copy(info))?;
        self.push_record(copy, InnerJobinfo)
    }

    fn pack(&mut self, this: Resource<InnerJobinfo>, protocol_version: u16) -> Answer<Vec<u8>> {
        self.forward_on(&this, |p, info| p.jobinfo_pack(info, protocol_version))
    }

    fn unpack(&mut self, data: Vec<u8>, protocol_version: u16) -> Answer<Resource<InnerJobinfo>> {
        let made = self.forward(|p| p.jobinfo_unpack(&data, protocol_version))?;
        self.push_info(made, InnerJobinfo)
    }

    fn get(
        &mut self,
        this: Resource<InnerJobinfo>,
        field: imp::JobinfoField,
    ) -> Answer<imp::JobinfoValue> {
        self.forward_on(&this, |p, info| {
            p.jobinfo_get(info, field.into()).map(Into::into)
        })
    }

    fn set(
        &mut self,
        this: Resource<InnerJobinfo>,
        field: imp::JobinfoField,
        value: imp::JobinfoValue,
    ) -> Answer<()> {
        let value = value.into();
        self.forward_on(&this, |p, info| p.jobinfo_set(info, field.into(), &value))
    }

    fn to_string(
        &mut self,
        this: Resource<InnerJobinfo>,
        mode: imp::SprintMode,
    ) -> wasmtime::Result<String> {
        self.forward_infallible_on(&this, |p, info| p.jobinfo_to_string(info, mode.into()))
    }

    fn drop(&mut self, this: Resource<InnerJobinfo>) -> wasmtime::Result<()> {
        let handle = self.table().delete(this)?;
        self.drop_info(&handle.0)
    }
}

/// How long a wrapper's deadline is moved on for `spent` in its inner
/// plugin (one tick more than the ticks spent, so that a deadline reached
/// in the same tick as the return is not charged to the wrapper).
fn credit_for(spent: Duration) -> u64 {
    (spent.as_nanos() / EPOCH_TICK.as_nanos()) as u64 + 1
}
