//! The typed select API: [`SelectPlugin`]. The host keeps a copy of the
//! node table (from `node-init` and node updates) to check allocations.

use std::sync::Mutex;

use wasmtime::component::ResourceAny;

use crate::bindings::select::exports::slurm::plugin::select as wit;
use crate::bindings::select::{SelectPlugin as World, SelectPluginPre as WorldPre};
use crate::bindings::types::{Bitmap, Job, JobResources, Node, Step};
use crate::engine::Host;
use crate::error::{CallError, LoadError};
use crate::plugin::{PluginCore, PluginSettings, PluginSource};
use crate::validate::Checker;

pub use wit::{
    JobTestFlags, JobTestMode, JobTestRequest, JobTestResult, JobinfoField, JobinfoValue,
    NodeinfoField, NodeinfoValue, PluginInfoField, PluginInfoValue, PreemptMode,
    PreempteeCandidate, ReservationRequest, ReservationResult, SelectConfig, SprintMode,
};

super::plugin_kind! {
    handle: SelectPlugin,
    kind: SelectKind,
    slot: Select,
    linker: select,
    world: World,
    pre: WorldPre,
    interface: slurm_plugin_select,
    config: SelectConfig,
    restore: |b, store, data| b.slurm_plugin_select().call_state_restore(store, data),
}

super::plugin_state! {
    handle: SelectPlugin,
    interface: slurm_plugin_select,
}

/// A plugin-side `select_nodeinfo_t` or `select_jobinfo_t`: valid until the
/// plugin restarts. Give it back with [`SelectPlugin::drop_resource`].
#[derive(Debug, Clone, Copy)]
pub struct Opaque(ResourceAny);

/// A loaded select plugin.
pub struct SelectPlugin {
    core: PluginCore<SelectKind>,
    nodes: Mutex<Vec<Node>>,
}

macro_rules! plain {
    ($self:ident, $name:literal, |$b:ident, $s:ident| $call:expr) => {
        $self.core.call($name, None, |$b, $s| $call).map(|(r, _)| r)
    };
}

impl SelectPlugin {
    pub fn load(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        Ok(SelectPlugin {
            core: PluginCore::load(host, source, settings)?,
            nodes: Mutex::new(Vec::new()),
        })
    }

    fn nodes(&self) -> std::sync::MutexGuard<'_, Vec<Node>> {
        self.nodes.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn check_resources(
        &self,
        function: &'static str,
        resources: &JobResources,
        candidates: Option<&Bitmap>,
        nodes_only: bool,
    ) -> Result<(), CallError> {
        let plugin = self.core.plugin_type();
        Checker {
            plugin: &plugin,
            function,
        }
        .job_resources(resources, candidates, &self.nodes(), nodes_only)
    }

    pub fn job_init(&self, jobs: &[Job]) -> Result<(), CallError> {
        plain!(self, "job-init", |b, s| b
            .slurm_plugin_select()
            .call_job_init(s, jobs))
    }

    /// `select_p_node_init`; the host keeps the table to check allocations.
    pub fn node_init(&self, nodes: &[Node]) -> Result<(), CallError> {
        plain!(self, "node-init", |b, s| b
            .slurm_plugin_select()
            .call_node_init(s, nodes))?;
        *self.nodes() = nodes.to_vec();
        Ok(())
    }

    /// `select_p_job_test`, with the result checked against the candidates
    /// and the node table (a will-run or reservation answer may carry the
    /// nodes without per-node entries).
    pub fn job_test(&self, request: &JobTestRequest) -> Result<JobTestResult, CallError> {
        let result = plain!(self, "job-test", |b, s| b
            .slurm_plugin_select()
            .call_job_test(s, request))?;
        let nodes_only = matches!(
            request.mode,
            JobTestMode::WillRun | JobTestMode::Reservation
        );
        self.check_resources(
            "job-test",
            &result.resources,
            Some(&request.candidates),
            nodes_only,
        )?;
        Ok(result)
    }

    pub fn job_begin(&self, job: &Job) -> Result<(), CallError> {
        plain!(self, "job-begin", |b, s| b
            .slurm_plugin_select()
            .call_job_begin(s, job))
    }

    pub fn job_ready(&self, job: &Job) -> Result<bool, CallError> {
        plain!(self, "job-ready", |b, s| b
            .slurm_plugin_select()
            .call_job_ready(s, job))
    }

    pub fn job_expand_allow(&self) -> Result<bool, CallError> {
        self.core
            .call("job-expand-allow", None, |b, s| {
                b.slurm_plugin_select().call_job_expand_allow(s).map(Ok)
            })
            .map(|(r, _)| r)
    }

    pub fn job_expand(&self, from: &Job, to: &Job) -> Result<JobResources, CallError> {
        let resources = plain!(self, "job-expand", |b, s| b
            .slurm_plugin_select()
            .call_job_expand(s, from, to))?;
        self.check_resources("job-expand", &resources, None, false)?;
        Ok(resources)
    }

    pub fn job_resized(&self, job: &Job, node_index: u32) -> Result<(), CallError> {
        plain!(self, "job-resized", |b, s| b
            .slurm_plugin_select()
            .call_job_resized(s, job, node_index))
    }

    pub fn job_signal(&self, job: &Job, signal: i32) -> Result<(), CallError> {
        plain!(self, "job-signal", |b, s| b
            .slurm_plugin_select()
            .call_job_signal(s, job, signal))
    }

    pub fn job_mem_confirm(&self, job: &Job) -> Result<(), CallError> {
        plain!(self, "job-mem-confirm", |b, s| b
            .slurm_plugin_select()
            .call_job_mem_confirm(s, job))
    }

    pub fn job_fini(&self, job: &Job) -> Result<(), CallError> {
        plain!(self, "job-fini", |b, s| b
            .slurm_plugin_select()
            .call_job_fini(s, job))
    }

    pub fn job_suspend(&self, job: &Job, indefinite: bool) -> Result<(), CallError> {
        plain!(self, "job-suspend", |b, s| b
            .slurm_plugin_select()
            .call_job_suspend(s, job, indefinite))
    }

    pub fn job_resume(&self, job: &Job, indefinite: bool) -> Result<(), CallError> {
        plain!(self, "job-resume", |b, s| b
            .slurm_plugin_select()
            .call_job_resume(s, job, indefinite))
    }

    pub fn step_pick_nodes(
        &self,
        job: &Job,
        step: &Step,
        node_count: u32,
        available: Option<&Bitmap>,
    ) -> Result<Option<Bitmap>, CallError> {
        plain!(self, "step-pick-nodes", |b, s| b
            .slurm_plugin_select()
            .call_step_pick_nodes(s, job, step, node_count, available))
    }

    pub fn step_finish(&self, step: &Step, killing: bool) -> Result<(), CallError> {
        plain!(self, "step-finish", |b, s| b
            .slurm_plugin_select()
            .call_step_finish(s, step, killing))
    }

    pub fn reconfigure(&self, config: &SelectConfig, running: &[Job]) -> Result<(), CallError> {
        plain!(self, "reconfigure", |b, s| b
            .slurm_plugin_select()
            .call_reconfigure(s, config, running))?;
        self.core.remember_config(config);
        Ok(())
    }

    pub fn update_node_config(&self, node: &Node) -> Result<(), CallError> {
        plain!(self, "update-node-config", |b, s| b
            .slurm_plugin_select()
            .call_update_node_config(s, node))?;
        self.replace_node(node);
        Ok(())
    }

    pub fn update_node_state(&self, node: &Node) -> Result<(), CallError> {
        plain!(self, "update-node-state", |b, s| b
            .slurm_plugin_select()
            .call_update_node_state(s, node))?;
        self.replace_node(node);
        Ok(())
    }

    fn replace_node(&self, node: &Node) {
        if let Some(slot) = self.nodes().get_mut(node.index as usize) {
            *slot = node.clone();
        }
    }

    pub fn node_ranking(&self, nodes: &[Node]) -> Result<Option<Vec<u32>>, CallError> {
        let ranks = plain!(self, "node-ranking", |b, s| b
            .slurm_plugin_select()
            .call_node_ranking(s, nodes))?;
        if let Some(r) = &ranks {
            if r.len() != nodes.len() {
                let plugin = self.core.plugin_type();
                return Err(Checker {
                    plugin: &plugin,
                    function: "node-ranking",
                }
                .fail(format!("{} weights for {} nodes", r.len(), nodes.len())));
            }
        }
        Ok(ranks)
    }

    pub fn nodeinfo_set_all(&self) -> Result<(), CallError> {
        plain!(self, "nodeinfo-set-all", |b, s| b
            .slurm_plugin_select()
            .call_nodeinfo_set_all(s))
    }

    pub fn nodeinfo_set(&self, job: &Job) -> Result<(), CallError> {
        plain!(self, "nodeinfo-set", |b, s| b
            .slurm_plugin_select()
            .call_nodeinfo_set(s, job))
    }

    pub fn node_nodeinfo(&self, node_index: u32) -> Result<Opaque, CallError> {
        plain!(self, "node-nodeinfo", |b, s| b
            .slurm_plugin_select()
            .call_node_nodeinfo(s, node_index))
        .map(Opaque)
    }

    pub fn nodeinfo_alloc(&self) -> Result<Opaque, CallError> {
        self.core
            .call("select-nodeinfo.constructor", None, |b, s| {
                b.slurm_plugin_select()
                    .select_nodeinfo()
                    .call_constructor(s)
                    .map(Ok)
            })
            .map(|(r, _)| Opaque(r))
    }

    pub fn nodeinfo_pack(&self, info: Opaque, protocol_version: u16) -> Result<Vec<u8>, CallError> {
        plain!(self, "select-nodeinfo.pack", |b, s| b
            .slurm_plugin_select()
            .select_nodeinfo()
            .call_pack(s, info.0, protocol_version))
    }

    pub fn nodeinfo_unpack(&self, data: &[u8], protocol_version: u16) -> Result<Opaque, CallError> {
        plain!(self, "select-nodeinfo.unpack", |b, s| b
            .slurm_plugin_select()
            .select_nodeinfo()
            .call_unpack(s, data, protocol_version))
        .map(Opaque)
    }

    pub fn nodeinfo_get(
        &self,
        info: Opaque,
        field: NodeinfoField,
        state: u32,
    ) -> Result<NodeinfoValue, CallError> {
        plain!(self, "select-nodeinfo.get", |b, s| b
            .slurm_plugin_select()
            .select_nodeinfo()
            .call_get(s, info.0, field, state))
    }

    pub fn jobinfo_alloc(&self) -> Result<Opaque, CallError> {
        self.core
            .call("select-jobinfo.constructor", None, |b, s| {
                b.slurm_plugin_select()
                    .select_jobinfo()
                    .call_constructor(s)
                    .map(Ok)
            })
            .map(|(r, _)| Opaque(r))
    }

    pub fn jobinfo_copy(&self, info: Opaque) -> Result<Opaque, CallError> {
        self.core
            .call("select-jobinfo.copy", None, |b, s| {
                b.slurm_plugin_select()
                    .select_jobinfo()
                    .call_copy(s, info.0)
                    .map(Ok)
            })
            .map(|(r, _)| Opaque(r))
    }

    pub fn jobinfo_pack(&self, info: Opaque, protocol_version: u16) -> Result<Vec<u8>, CallError> {
        plain!(self, "select-jobinfo.pack", |b, s| b
            .slurm_plugin_select()
            .select_jobinfo()
            .call_pack(s, info.0, protocol_version))
    }

    pub fn jobinfo_unpack(&self, data: &[u8], protocol_version: u16) -> Result<Opaque, CallError> {
        plain!(self, "select-jobinfo.unpack", |b, s| b
            .slurm_plugin_select()
            .select_jobinfo()
            .call_unpack(s, data, protocol_version))
        .map(Opaque)
    }

    pub fn jobinfo_get(
        &self,
        info: Opaque,
        field: JobinfoField,
    ) -> Result<JobinfoValue, CallError> {
        plain!(self, "select-jobinfo.get", |b, s| b
            .slurm_plugin_select()
            .select_jobinfo()
            .call_get(s, info.0, field))
    }

    pub fn jobinfo_set(
        &self,
        info: Opaque,
        field: JobinfoField,
        value: &JobinfoValue,
    ) -> Result<(), CallError> {
        plain!(self, "select-jobinfo.set", |b, s| b
            .slurm_plugin_select()
            .select_jobinfo()
            .call_set(s, info.0, field, value))
    }

    pub fn jobinfo_to_string(&self, info: Opaque, mode: SprintMode) -> Result<String, CallError> {
        self.core
            .call("select-jobinfo.to-string", None, |b, s| {
                b.slurm_plugin_select()
                    .select_jobinfo()
                    .call_to_string(s, info.0, mode)
                    .map(Ok)
            })
            .map(|(r, _)| r)
    }

    /// Frees a nodeinfo or jobinfo (`select_p_select_*_free`).
    pub fn drop_resource(&self, info: Opaque) -> Result<(), CallError> {
        self.core
            .call("resource-drop", None, |_, s| {
                info.0.resource_drop(s).map(Ok)
            })
            .map(|_| ())
    }

    pub fn get_info_from_plugin(
        &self,
        field: PluginInfoField,
        job: Option<&Job>,
    ) -> Result<PluginInfoValue, CallError> {
        plain!(self, "get-info-from-plugin", |b, s| b
            .slurm_plugin_select()
            .call_get_info_from_plugin(s, field, job))
    }

    pub fn resv_test(&self, request: &ReservationRequest) -> Result<ReservationResult, CallError> {
        plain!(self, "resv-test", |b, s| b
            .slurm_plugin_select()
            .call_resv_test(s, request))
    }

    pub fn ba_init(&self, nodes: &[Node], sanity_check: bool) -> Result<(), CallError> {
        plain!(self, "ba-init", |b, s| b
            .slurm_plugin_select()
            .call_ba_init(s, nodes, sanity_check))
    }

    pub fn ba_get_dims(&self) -> Result<Option<Vec<u32>>, CallError> {
        self.core
            .call("ba-get-dims", None, |b, s| {
                b.slurm_plugin_select().call_ba_get_dims(s).map(Ok)
            })
            .map(|(r, _)| r)
    }
}
