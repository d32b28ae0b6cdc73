//! The typed gres API: [`GresPlugin`]. Environment edits are checked for
//! valid variable names before a caller applies them.

use wasmtime::component::ResourceAny;

use crate::bindings::gres::exports::slurm::plugin::gres as wit;
use crate::bindings::gres::{GresPlugin as World, GresPluginPre as WorldPre};
use crate::bindings::types::{Bitmap, GresAllocation, Job, Step};
use crate::engine::Host;
use crate::error::{CallError, LoadError};
use crate::plugin::{PluginCore, PluginSettings, PluginSource};
use crate::validate::Checker;

pub use wit::{
    Device, EnvChange, EnvFlags, GresConfRecord, GresConfig, InfoField, InfoValue, NodeAllocation,
    NodeConfigResult, NodeHardware,
};

super::plugin_kind! {
    handle: GresPlugin,
    kind: GresKind,
    slot: Gres,
    linker: gres,
    world: World,
    pre: WorldPre,
    interface: slurm_plugin_gres,
    config: GresConfig,
    restore: |b, store, data| b.slurm_plugin_gres().call_recv_stepd(store, data),
}

/// A plugin-side `gres_epilog_info_t`, valid until the plugin restarts.
#[derive(Debug, Clone, Copy)]
pub struct EpilogInfo(ResourceAny);

/// A loaded gres plugin.
pub struct GresPlugin {
    core: PluginCore<GresKind>,
}

macro_rules! plain {
    ($self:ident, $name:literal, |$b:ident, $s:ident| $call:expr) => {
        $self.core.call($name, None, |$b, $s| $call).map(|(r, _)| r)
    };
}

impl GresPlugin {
    pub fn load(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        Ok(GresPlugin {
            core: PluginCore::load(host, source, settings)?,
        })
    }

    fn check_env(&self, function: &'static str, changes: &[EnvChange]) -> Result<(), CallError> {
        let plugin = self.core.plugin_type();
        let c = Checker {
            plugin: &plugin,
            function,
        };
        c.items("environment", changes.len())?;
        for change in changes {
            match change {
                EnvChange::Set(kv) => {
                    c.env_name(&kv.key)?;
                    c.text(&kv.key, &kv.value)?;
                }
                EnvChange::Unset(name) => c.env_name(name)?,
            }
        }
        Ok(())
    }

    pub fn node_config_load(
        &self,
        records: &[GresConfRecord],
        node: &NodeHardware,
    ) -> Result<NodeConfigResult, CallError> {
        plain!(self, "node-config-load", |b, s| b
            .slurm_plugin_gres()
            .call_node_config_load(s, records, node))
    }

    pub fn job_set_env(
        &self,
        allocation: Option<&GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, CallError> {
        let env = plain!(self, "job-set-env", |b, s| b
            .slurm_plugin_gres()
            .call_job_set_env(s, allocation, flags))?;
        self.check_env("job-set-env", &env)?;
        Ok(env)
    }

    pub fn step_set_env(
        &self,
        allocation: Option<&GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, CallError> {
        let env = plain!(self, "step-set-env", |b, s| b
            .slurm_plugin_gres()
            .call_step_set_env(s, allocation, flags))?;
        self.check_env("step-set-env", &env)?;
        Ok(env)
    }

    pub fn task_set_env(
        &self,
        allocation: Option<&NodeAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, CallError> {
        let env = plain!(self, "task-set-env", |b, s| b
            .slurm_plugin_gres()
            .call_task_set_env(s, allocation, flags))?;
        self.check_env("task-set-env", &env)?;
        Ok(env)
    }

    pub fn send_stepd(&self) -> Result<Vec<u8>, CallError> {
        plain!(self, "send-stepd", |b, s| b
            .slurm_plugin_gres()
            .call_send_stepd(s))
    }

    /// `recv-stepd`; the bytes are kept so a restarted instance gets them again.
    pub fn recv_stepd(&self, data: &[u8]) -> Result<(), CallError> {
        plain!(self, "recv-stepd", |b, s| b
            .slurm_plugin_gres()
            .call_recv_stepd(s, data))?;
        self.core.remember_state(data);
        Ok(())
    }

    pub fn job_info(
        &self,
        allocation: &GresAllocation,
        field: InfoField,
    ) -> Result<InfoValue, CallError> {
        plain!(self, "job-info", |b, s| b
            .slurm_plugin_gres()
            .call_job_info(s, allocation, field))
    }

    pub fn step_info(
        &self,
        allocation: &GresAllocation,
        field: InfoField,
    ) -> Result<InfoValue, CallError> {
        plain!(self, "step-info", |b, s| b
            .slurm_plugin_gres()
            .call_step_info(s, allocation, field))
    }

    pub fn get_devices(&self) -> Result<Vec<Device>, CallError> {
        plain!(self, "get-devices", |b, s| b
            .slurm_plugin_gres()
            .call_get_devices(s))
    }

    pub fn step_hardware_init(
        &self,
        usable: Option<&Bitmap>,
        tres_freq: Option<&str>,
    ) -> Result<(), CallError> {
        plain!(self, "step-hardware-init", |b, s| b
            .slurm_plugin_gres()
            .call_step_hardware_init(s, usable, tres_freq))
    }

    pub fn step_hardware_fini(&self) -> Result<(), CallError> {
        plain!(self, "step-hardware-fini", |b, s| b
            .slurm_plugin_gres()
            .call_step_hardware_fini(s))
    }

    pub fn epilog_build_env(&self, job: &Job) -> Result<Option<EpilogInfo>, CallError> {
        plain!(self, "epilog-build-env", |b, s| b
            .slurm_plugin_gres()
            .call_epilog_build_env(s, job))
        .map(|r| r.map(EpilogInfo))
    }

    pub fn epilog_set_env(
        &self,
        info: EpilogInfo,
        node_index: u32,
    ) -> Result<Vec<EnvChange>, CallError> {
        let env = plain!(self, "epilog-info.set-env", |b, s| b
            .slurm_plugin_gres()
            .epilog_info()
            .call_set_env(s, info.0, node_index))?;
        self.check_env("epilog-info.set-env", &env)?;
        Ok(env)
    }

    /// Frees an epilog info (`xfree` of `gres_epilog_info_t`).
    pub fn drop_epilog_info(&self, info: EpilogInfo) -> Result<(), CallError> {
        self.core
            .call("resource-drop", None, |_, s| {
                info.0.resource_drop(s).map(Ok)
            })
            .map(|_| ())
    }

    pub fn step_context(&self, step: &Step) -> Result<(), CallError> {
        plain!(self, "step-context", |b, s| b
            .slurm_plugin_gres()
            .call_step_context(s, step))
    }
}
