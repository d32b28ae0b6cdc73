//! `select/cons_tres_heaviest`: select/cons_tres with one rule changed, for
//! the shadow and replay tests (never load it outside tests). Slurm uses
//! the lightest nodes first (`Weight`, slurm.conf); this plugin hands
//! cons_tres every node record with its weight mirrored (`u32::MAX -
//! weight`), so it uses the heaviest first. Every other decision is
//! cons_tres's: a shadow of it diverges from the stock plugin exactly on
//! the job tests where nodes of different weights could each take the job.

use select_cons_tres::ConsTresPlugin;
use slurm_wasm_sdk::select::{
    JobTestRequest, JobTestResult, NodeInfo, Plugin, PluginInfoField, PluginInfoValue,
    ReservationRequest, ReservationResult, SelectConfig,
};
use slurm_wasm_sdk::types::{Bitmap, Job, JobResources, Node, PluginIdentity, Step};
use slurm_wasm_sdk::{identity, Error};

/// cons_tres seeing mirrored node weights.
pub struct Heaviest(ConsTresPlugin);

/// `node` with its weight mirrored.
fn mirrored(node: &Node) -> Node {
    Node {
        weight: u32::MAX - node.weight,
        ..node.clone()
    }
}

fn all_mirrored(nodes: &[Node]) -> Vec<Node> {
    nodes.iter().map(mirrored).collect()
}

impl Plugin for Heaviest {
    const TYPE: &'static str = "select/cons_tres_heaviest";
    const NAME: &'static str = "cons_tres, heaviest nodes first (a test candidate)";
    const EXPAND_ALLOWED: bool = ConsTresPlugin::EXPAND_ALLOWED;

    fn identity() -> PluginIdentity {
        identity(Self::TYPE, Self::NAME)
    }

    fn init(config: &SelectConfig) -> Result<Self, Error> {
        ConsTresPlugin::init(config).map(Heaviest)
    }

    fn fini(&mut self) -> Result<(), Error> {
        self.0.fini()
    }

    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        self.0.state_save()
    }

    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        self.0.state_restore(data)
    }

    fn job_init(&mut self, jobs: &[Job]) -> Result<(), Error> {
        self.0.job_init(jobs)
    }

    fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error> {
        self.0.node_init(&all_mirrored(nodes))
    }

    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, Error> {
        self.0.job_test(request)
    }

    fn job_begin(&mut self, job: &Job) -> Result<(), Error> {
        self.0.job_begin(job)
    }

    fn job_ready(&mut self, job: &Job) -> Result<bool, Error> {
        self.0.job_ready(job)
    }

    fn job_expand(&mut self, from: &Job, to: &Job) -> Result<JobResources, Error> {
        self.0.job_expand(from, to)
    }

    fn job_resized(&mut self, job: &Job, node_index: u32) -> Result<(), Error> {
        self.0.job_resized(job, node_index)
    }

    fn job_signal(&mut self, job: &Job, signal: i32) -> Result<(), Error> {
        self.0.job_signal(job, signal)
    }

    fn job_mem_confirm(&mut self, job: &Job) -> Result<(), Error> {
        self.0.job_mem_confirm(job)
    }

    fn job_fini(&mut self, job: &Job) -> Result<(), Error> {
        self.0.job_fini(job)
    }

    fn job_suspend(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        self.0.job_suspend(job, indefinite)
    }

    fn job_resume(&mut self, job: &Job, indefinite: bool) -> Result<(), Error> {
        self.0.job_resume(job, indefinite)
    }

    fn step_pick_nodes(
        &mut self,
        job: &Job,
        step: &Step,
        node_count: u32,
        available: Option<&Bitmap>,
    ) -> Result<Option<Bitmap>, Error> {
        self.0.step_pick_nodes(job, step, node_count, available)
    }

    fn step_finish(&mut self, step: &Step, killing: bool) -> Result<(), Error> {
        self.0.step_finish(step, killing)
    }

    fn reconfigure(&mut self, config: &SelectConfig, running: &[Job]) -> Result<(), Error> {
        self.0.reconfigure(config, running)
    }

    fn update_node_config(&mut self, node: &Node) -> Result<(), Error> {
        self.0.update_node_config(&mirrored(node))
    }

    fn update_node_state(&mut self, node: &Node) -> Result<(), Error> {
        self.0.update_node_state(&mirrored(node))
    }

    fn node_ranking(&mut self, nodes: &[Node]) -> Result<Option<Vec<u32>>, Error> {
        self.0.node_ranking(&all_mirrored(nodes))
    }

    fn nodeinfo_set_all(&mut self) -> Result<(), Error> {
        self.0.nodeinfo_set_all()
    }

    fn nodeinfo_set(&mut self, job: &Job) -> Result<(), Error> {
        self.0.nodeinfo_set(job)
    }

    fn node_nodeinfo(&mut self, node_index: u32) -> Result<NodeInfo, Error> {
        self.0.node_nodeinfo(node_index)
    }

    fn get_info_from_plugin(
        &mut self,
        field: PluginInfoField,
        job: Option<&Job>,
    ) -> Result<PluginInfoValue, Error> {
        self.0.get_info_from_plugin(field, job)
    }

    fn resv_test(&mut self, request: &ReservationRequest) -> Result<ReservationResult, Error> {
        self.0.resv_test(request)
    }

    fn ba_init(&mut self, nodes: &[Node], sanity_check: bool) -> Result<(), Error> {
        self.0.ba_init(&all_mirrored(nodes), sanity_check)
    }

    fn ba_get_dims() -> Option<Vec<u32>> {
        ConsTresPlugin::ba_get_dims()
    }
}

slurm_wasm_sdk::export_select!(plugin Heaviest);
