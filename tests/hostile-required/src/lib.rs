//! `task/needs_topology`: a task plugin that cannot work without the
//! `topology` capability.
//!
//! It exists only for the host's containment tests: its `describe()` lists
//! `topology` in `required-capabilities`, so the host must refuse to load it
//! unless the configuration grants that capability, and say which one is
//! missing. Once loaded it behaves like task/none: every hook logs at debug
//! level and succeeds, and the launch hooks hand the requested binding back.

use slurm_wasm_sdk::task::{
    BatchRequest, CpuBinding, IdentityGuest, LaunchRequest, TaskConfig, TaskGuest,
};
use slurm_wasm_sdk::types::{Capability, PluginError, PluginIdentity, Step, Task};
use slurm_wasm_sdk::{debug, version, CONTRACT_VERSION};

/// task/needs_topology, exported as a component.
pub struct NeedsTopology;

impl IdentityGuest for NeedsTopology {
    fn describe() -> PluginIdentity {
        PluginIdentity {
            plugin_type: "task/needs_topology".into(),
            plugin_name: "task plugin requiring topology (containment tests)".into(),
            plugin_version: version::SLURM_22_05_8,
            plugin_id: None,
            contract_version: CONTRACT_VERSION.into(),
            required_capabilities: vec![Capability::Topology],
        }
    }
}

impl TaskGuest for NeedsTopology {
    fn init(_config: TaskConfig) -> Result<(), PluginError> {
        debug!("task/needs_topology: init");
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        debug!("task/needs_topology: fini");
        Ok(())
    }

    fn slurmd_batch_request(request: BatchRequest) -> Result<CpuBinding, PluginError> {
        debug!(
            "task/needs_topology: slurmd_batch_request: job {}",
            request.job_id
        );
        Ok(CpuBinding {
            cpu_bind_type: request.cpu_bind_type,
            cpu_bind: request.cpu_bind,
            messages: Vec::new(),
        })
    }

    fn slurmd_launch_request(request: LaunchRequest) -> Result<CpuBinding, PluginError> {
        debug!(
            "task/needs_topology: slurmd_launch_request: {}.{}",
            request.job_id, request.step_id
        );
        Ok(CpuBinding {
            cpu_bind_type: request.cpu_bind_type,
            cpu_bind: request.cpu_bind,
            messages: Vec::new(),
        })
    }

    fn slurmd_reserve_resources(request: LaunchRequest) -> Result<(), PluginError> {
        debug!(
            "task/needs_topology: slurmd_reserve_resources: {}",
            request.job_id
        );
        Ok(())
    }

    fn slurmd_suspend_job(job_id: u32) -> Result<(), PluginError> {
        debug!("task/needs_topology: slurmd_suspend_job: {job_id}");
        Ok(())
    }

    fn slurmd_resume_job(job_id: u32) -> Result<(), PluginError> {
        debug!("task/needs_topology: slurmd_resume_job: {job_id}");
        Ok(())
    }

    fn slurmd_release_resources(job_id: u32) -> Result<(), PluginError> {
        debug!("task/needs_topology: slurmd_release_resources: {job_id}");
        Ok(())
    }

    fn pre_setuid(step: Step) -> Result<(), PluginError> {
        debug!(
            "task/needs_topology: pre_setuid: {}.{}",
            step.job_id, step.step_id
        );
        Ok(())
    }

    fn pre_launch_priv(step: Step, task: Task) -> Result<(), PluginError> {
        debug!(
            "task/needs_topology: pre_launch_priv: {}.{} task {}",
            step.job_id, step.step_id, task.global_id
        );
        Ok(())
    }

    fn pre_launch(step: Step, task: Task) -> Result<(), PluginError> {
        debug!(
            "task/needs_topology: pre_launch: {}.{} task {}",
            step.job_id, step.step_id, task.global_id
        );
        Ok(())
    }

    fn post_term(step: Step, task: Task) -> Result<(), PluginError> {
        debug!(
            "task/needs_topology: post_term: {}.{} task {}",
            step.job_id, step.step_id, task.global_id
        );
        Ok(())
    }

    fn post_step(step: Step) -> Result<(), PluginError> {
        debug!(
            "task/needs_topology: post_step: {}.{}",
            step.job_id, step.step_id
        );
        Ok(())
    }

    fn add_pid(pid: u32) -> Result<(), PluginError> {
        debug!("task/needs_topology: add_pid: {pid}");
        Ok(())
    }

    fn update_mem_limit(step: Step, job_mem: u64, step_mem: u64) -> Result<(), PluginError> {
        debug!(
            "task/needs_topology: update_mem_limit: {}.{} job {job_mem} MB step {step_mem} MB",
            step.job_id, step.step_id
        );
        Ok(())
    }
}

slurm_wasm_sdk::export_task!(NeedsTopology);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_topology() {
        let identity = NeedsTopology::describe();
        assert_eq!(identity.plugin_type, "task/needs_topology");
        assert_eq!(identity.required_capabilities, [Capability::Topology]);
    }
}
