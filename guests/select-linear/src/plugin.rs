//! The `select-plugin` world export of select/linear: converts the
//! contract's calls to [`Linear`] methods, with "now" from the host's
//! clock (virtual time in simulations).

use std::sync::{Mutex, MutexGuard};

use select_common::{JobInfo, NodeInfo};
use slurm_wasm_sdk::select::{
    IdentityGuest, JobTestRequest, JobTestResult, PluginInfoField, PluginInfoValue,
    ReservationRequest, ReservationResult, SelectConfig, SelectGuest, SelectNodeinfo,
};
use slurm_wasm_sdk::types::{Bitmap, Job, JobResources, Node, PluginError, PluginIdentity, Step};
use slurm_wasm_sdk::{host, identity, Error};

use crate::Linear;

/// `plugin_id` of select/linear (`SELECT_PLUGIN_LINEAR`).
pub const PLUGIN_ID: u32 = 102;

/// The instance: empty (no nodes, default parameters) until `init` and
/// `node-init`, and again after `fini`.
static INSTANCE: Mutex<Option<Linear>> = Mutex::new(None);

fn instance() -> MutexGuard<'static, Option<Linear>> {
    INSTANCE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn with<R>(f: impl FnOnce(&mut Linear) -> Result<R, Error>) -> Result<R, PluginError> {
    f(instance().get_or_insert_with(Linear::default)).map_err(Into::into)
}

/// The select/linear component.
pub struct Plugin;

impl IdentityGuest for Plugin {
    fn describe() -> PluginIdentity {
        PluginIdentity {
            plugin_id: Some(PLUGIN_ID),
            ..identity("select/linear", "Linear node selection plugin")
        }
    }
}

impl SelectGuest for Plugin {
    type SelectNodeinfo = NodeInfo;
    type SelectJobinfo = JobInfo;

    fn init(config: SelectConfig) -> Result<(), PluginError> {
        with(|l| l.configure(&config))
    }

    fn fini() -> Result<(), PluginError> {
        *instance() = None;
        Ok(())
    }

    fn state_save() -> Result<Vec<u8>, PluginError> {
        with(|l| Ok(l.state_save()))
    }

    fn state_restore(data: Vec<u8>) -> Result<(), PluginError> {
        with(|l| l.state_restore(&data))
    }

    fn job_init(jobs: Vec<Job>) -> Result<(), PluginError> {
        with(|l| l.job_init(&jobs))
    }

    fn node_init(nodes: Vec<Node>) -> Result<(), PluginError> {
        with(|l| l.node_init(&nodes))
    }

    fn job_test(request: JobTestRequest) -> Result<JobTestResult, PluginError> {
        let now = host::now();
        with(|l| l.job_test(&request, now))
    }

    fn job_begin(job: Job) -> Result<(), PluginError> {
        with(|l| l.job_begin(&job))
    }

    fn job_ready(job: Job) -> Result<bool, PluginError> {
        with(|l| l.job_ready(&job))
    }

    /// Linear supports merging jobs (`job-expand`).
    fn job_expand_allow() -> bool {
        true
    }

    fn job_expand(from: Job, to: Job) -> Result<JobResources, PluginError> {
        with(|l| l.job_expand(&from, &to))
    }

    fn job_resized(job: Job, node_index: u32) -> Result<(), PluginError> {
        with(|l| l.job_resized(&job, node_index))
    }

    /// Linear does nothing when a job is signalled.
    fn job_signal(_job: Job, _signal: i32) -> Result<(), PluginError> {
        Ok(())
    }

    /// Linear has nothing to confirm (the seed API's no-op).
    fn job_mem_confirm(_job: Job) -> Result<(), PluginError> {
        Ok(())
    }

    fn job_fini(job: Job) -> Result<(), PluginError> {
        with(|l| l.job_fini(&job))
    }

    fn job_suspend(job: Job, indefinite: bool) -> Result<(), PluginError> {
        with(|l| l.job_suspend(&job, indefinite))
    }

    fn job_resume(job: Job, indefinite: bool) -> Result<(), PluginError> {
        with(|l| l.job_resume(&job, indefinite))
    }

    /// `none`: the controller chooses the step's nodes, as with Slurm's linear.
    fn step_pick_nodes(
        _job: Job,
        _step: Step,
        _node_count: u32,
        _available: Option<Bitmap>,
    ) -> Result<Option<Bitmap>, PluginError> {
        Ok(None)
    }

    /// Linear keeps no per-step state: nothing to do.
    fn step_finish(_step: Step, _killing: bool) -> Result<(), PluginError> {
        Ok(())
    }

    fn reconfigure(config: SelectConfig, running: Vec<Job>) -> Result<(), PluginError> {
        with(|l| l.reconfigure(&config, &running))
    }

    fn update_node_config(node: Node) -> Result<(), PluginError> {
        with(|l| l.update_node(&node))
    }

    fn update_node_state(node: Node) -> Result<(), PluginError> {
        with(|l| l.update_node(&node))
    }

    /// Linear does not rank nodes.
    fn node_ranking(_nodes: Vec<Node>) -> Result<Option<Vec<u32>>, PluginError> {
        Ok(None)
    }

    fn nodeinfo_set_all() -> Result<(), PluginError> {
        with(|l| l.nodeinfo_set_all())
    }

    /// Slurm's linear only makes sure its tables exist here; they always do.
    fn nodeinfo_set(_job: Job) -> Result<(), PluginError> {
        Ok(())
    }

    fn node_nodeinfo(node_index: u32) -> Result<SelectNodeinfo, PluginError> {
        with(|l| l.nodeinfo(node_index)).map(SelectNodeinfo::new)
    }

    fn get_info_from_plugin(
        field: PluginInfoField,
        _job: Option<Job>,
    ) -> Result<PluginInfoValue, PluginError> {
        with(|l| Ok(l.info(field)))
    }

    fn resv_test(request: ReservationRequest) -> Result<ReservationResult, PluginError> {
        with(|l| l.resv_test(&request))
    }

    /// Flat systems have no block allocator: nothing to do.
    fn ba_init(_nodes: Vec<Node>, _sanity_check: bool) -> Result<(), PluginError> {
        Ok(())
    }

    /// Flat systems have no dimensions.
    fn ba_get_dims() -> Option<Vec<u32>> {
        None
    }
}

slurm_wasm_sdk::export_select!(Plugin);
