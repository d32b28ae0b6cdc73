//! The `select-plugin` world export of select/linear: [`Linear`] as the
//! SDK's [`select::Plugin`](Plugin), with "now" from the host's clock
//! (virtual time in simulations).

use select_common::NodeInfo;
use slurm_wasm_sdk::select::{
    JobTestRequest, JobTestResult, Plugin, PluginInfoField, PluginInfoValue, ReservationRequest,
    ReservationResult, SelectConfig,
};
use slurm_wasm_sdk::types::{Job, JobResources, Node, PluginIdentity};
use slurm_wasm_sdk::{host, identity, Error};

use crate::Linear;

/// `plugin_id` of select/linear (`SELECT_PLUGIN_LINEAR`).
pub const PLUGIN_ID: u32 = 102;

/// Each function is the [`Linear`] method of the same name; those Slurm's
/// linear leaves empty (`job-signal`, `job-mem-confirm`, `step-pick-nodes`,
/// `step-finish`, `node-ranking`, `ba-init`, `ba-get-dims`) keep the SDK's
/// defaults, which do the same.
impl Plugin for Linear {
    const TYPE: &'static str = "select/linear";
    const NAME: &'static str = "Linear node selection plugin";
    /// Linear merges jobs (`job-expand`).
    const EXPAND_ALLOWED: bool = true;

    fn identity() -> PluginIdentity {
        PluginIdentity {
            plugin_id: Some(PLUGIN_ID),
            ..identity(Self::TYPE, Self::NAME)
        }
    }

    fn init(config: &SelectConfig) -> Result<Self, Error> {
        Linear::init(config)
    }

    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        Ok(Linear::state_save(self))
    }

    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        Linear::state_restore(self, data)
    }

    fn job_init(&mut self, jobs: &[Job]) -> Result<(), Error> {
        Linear::job_init(self, jobs)
    }

    fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error> {
        Linear::node_init(self, nodes)
    }

    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, Error> {
        Linear::job_test(self, request, host::now())
    }

    fn job_begin(&mut self, job: &Job) -> Result<(), Error> {
        Linear::job_begin(self, job)
    }

    fn job_ready(&mut self, job: &Job) -> Result<bool, Error> {
        Linear::job_ready(self, job)
    }

    fn job_expand(&mut self, from: &Job, to: &Job) -> Result<JobResources, Error> {
        Linear::job_expand(self, from, to)
    }

    fn job_resized(&mut self, job: &Job, node_index: u32) -> Result<(), Error> {
        Linear::job_resized(self, job, node_index)
    }

    fn job_fini(&mut self, job: &Job) -> Result<(), Error> {
        Linear::job_fini(self, job)
    }

    fn job_suspend(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        Linear::job_suspend(self, job, indefinite)
    }

    fn job_resume(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        Linear::job_resume(self, job, indefinite)
    }

    fn reconfigure(&mut self, config: &SelectConfig, running: &[Job]) -> Result<(), Error> {
        Linear::reconfigure(self, config, running)
    }

    fn update_node_config(&mut self, node: &Node) -> Result<(), Error> {
        self.update_node(node)
    }

    fn update_node_state(&mut self, node: &Node) -> Result<(), Error> {
        self.update_node(node)
    }

    fn nodeinfo_set_all(&mut self) -> Result<(), Error> {
        Linear::nodeinfo_set_all(self)
    }

    /// Slurm's linear only makes sure its tables exist here; they always do.
    fn nodeinfo_set(&mut self, _job: &Job) -> Result<(), Error> {
        Ok(())
    }

    fn node_nodeinfo(&mut self, node_index: u32) -> Result<NodeInfo, Error> {
        self.nodeinfo(node_index)
    }

    fn get_info_from_plugin(
        &mut self,
        field: PluginInfoField,
        _job: Option<&Job>,
    ) -> Result<PluginInfoValue, Error> {
        Ok(self.info(field))
    }

    fn resv_test(&mut self, request: &ReservationRequest) -> Result<ReservationResult, Error> {
        Linear::resv_test(self, request)
    }
}

slurm_wasm_sdk::export_select!(plugin Linear);
