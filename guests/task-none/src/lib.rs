//! `task/none`: Slurm's no-op task plugin (src/plugins/task/none, removed from
//! Slurm in 23.11, where an empty `TaskPlugin` took its place).
//!
//! Every hook logs at debug level and succeeds without binding anything;
//! the launch hooks hand the request's binding back unchanged. It imports no
//! capability beyond `log`.

use slurm_wasm_sdk::task::{
    BatchRequest, CpuBinding, IdentityGuest, LaunchRequest, TaskConfig, TaskGuest,
};
use slurm_wasm_sdk::types::{PluginError, PluginIdentity, Step, Task};
use slurm_wasm_sdk::{debug, identity};

/// task/none, exported as a component.
pub struct TaskNone;

impl IdentityGuest for TaskNone {
    fn describe() -> PluginIdentity {
        identity("task/none", "task NONE plugin")
    }
}

impl TaskGuest for TaskNone {
    fn init(_config: TaskConfig) -> Result<(), PluginError> {
        debug!("task/none: init");
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        debug!("task/none: fini");
        Ok(())
    }

    /// Leaves the batch script's binding as requested; no environment.
    fn slurmd_batch_request(request: BatchRequest) -> Result<CpuBinding, PluginError> {
        debug!("task/none: slurmd_batch_request: job {}", request.job_id);
        Ok(CpuBinding {
            cpu_bind_type: request.cpu_bind_type,
            cpu_bind: request.cpu_bind,
            messages: Vec::new(),
            env: Vec::new(),
        })
    }

    /// Leaves the step's binding as requested; no environment.
    fn slurmd_launch_request(request: LaunchRequest) -> Result<CpuBinding, PluginError> {
        debug!(
            "task/none: slurmd_launch_request: {}.{}, node {}",
            request.job_id, request.step_id, request.node_id
        );
        Ok(CpuBinding {
            cpu_bind_type: request.cpu_bind_type,
            cpu_bind: request.cpu_bind,
            messages: Vec::new(),
            env: Vec::new(),
        })
    }

    fn slurmd_reserve_resources(request: LaunchRequest) -> Result<(), PluginError> {
        debug!("task/none: slurmd_reserve_resources: {}", request.job_id);
        Ok(())
    }

    fn slurmd_suspend_job(job_id: u32) -> Result<(), PluginError> {
        debug!("task/none: slurmd_suspend_job: {job_id}");
        Ok(())
    }

    fn slurmd_resume_job(job_id: u32) -> Result<(), PluginError> {
        debug!("task/none: slurmd_resume_job: {job_id}");
        Ok(())
    }

    fn slurmd_release_resources(job_id: u32) -> Result<(), PluginError> {
        debug!("task/none: slurmd_release_resources: {job_id}");
        Ok(())
    }

    fn pre_setuid(step: Step) -> Result<(), PluginError> {
        debug!("task/none: pre_setuid: {}.{}", step.job_id, step.step_id);
        Ok(())
    }

    fn pre_launch_priv(step: Step, task: Task) -> Result<(), PluginError> {
        debug!(
            "task/none: pre_launch_priv: {}.{} task {}",
            step.job_id, step.step_id, task.global_id
        );
        Ok(())
    }

    fn pre_launch(step: Step, task: Task) -> Result<(), PluginError> {
        debug!(
            "task/none: pre_launch: {}.{} task {}",
            step.job_id, step.step_id, task.global_id
        );
        Ok(())
    }

    fn post_term(step: Step, task: Task) -> Result<(), PluginError> {
        debug!(
            "task/none: post_term: {}.{} task {}",
            step.job_id, step.step_id, task.global_id
        );
        Ok(())
    }

    fn post_step(step: Step) -> Result<(), PluginError> {
        debug!("task/none: post_step: {}.{}", step.job_id, step.step_id);
        Ok(())
    }

    fn add_pid(pid: u32) -> Result<(), PluginError> {
        debug!("task/none: add_pid: {pid}");
        Ok(())
    }

    fn update_mem_limit(step: Step, job_mem: u64, step_mem: u64) -> Result<(), PluginError> {
        debug!(
            "task/none: update_mem_limit: {}.{} job {job_mem} MB step {step_mem} MB",
            step.job_id, step.step_id
        );
        Ok(())
    }
}

slurm_wasm_sdk::export_task!(TaskNone);
