//! The typed task API: [`TaskPlugin`].

use crate::bindings::task::exports::slurm::plugin::task as wit;
use crate::bindings::task::{TaskPlugin as World, TaskPluginPre as WorldPre};
use crate::bindings::types::{Step, Task};
use crate::engine::Host;
use crate::error::{CallError, LoadError};
use crate::plugin::{PluginCore, PluginSettings, PluginSource};
use crate::validate::Checker;

pub use wit::{BatchRequest, CpuBinding, LaunchRequest, TaskConfig};

super::plugin_kind! {
    handle: TaskPlugin,
    kind: TaskKind,
    slot: Task,
    linker: task,
    world: World,
    pre: WorldPre,
    interface: slurm_plugin_task,
    config: TaskConfig,
    restore: |b, store, data| {
        // Task plugins keep no state across restarts.
        let _ = (b, store, data);
        Ok(Ok(()))
    },
}

/// A loaded task plugin. Calls that may bind processes let the plugin touch
/// only the step's task pids (see the `cpuset` capability).
pub struct TaskPlugin {
    core: PluginCore<TaskKind>,
}

/// The pids of a step's tasks, which `cpuset` may bind during calls about it.
fn step_pids(step: &Step, task: Option<&Task>) -> Vec<u32> {
    let mut pids = step.task_pids.clone();
    pids.extend(task.map(|t| t.pid));
    pids
}

impl TaskPlugin {
    pub fn load(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        Ok(TaskPlugin {
            core: PluginCore::load(host, source, settings)?,
        })
    }

    /// Contract checks on a returned binding: text sizes, list lengths and
    /// environment variable names.
    fn check_binding(&self, function: &'static str, binding: &CpuBinding) -> Result<(), CallError> {
        let plugin = self.core.plugin_type();
        let c = Checker {
            plugin: &plugin,
            function,
        };
        c.text("cpu-bind", &binding.cpu_bind)?;
        c.items("messages", binding.messages.len())?;
        binding
            .messages
            .iter()
            .try_for_each(|m| c.text("message", m))?;
        c.items("env", binding.env.len())?;
        binding.env.iter().try_for_each(|kv| {
            c.env_name(&kv.key)?;
            c.text(&kv.key, &kv.value)
        })
    }

    pub fn slurmd_batch_request(&self, request: &BatchRequest) -> Result<CpuBinding, CallError> {
        let (binding, _) = self.core.call("slurmd-batch-request", &[], |b, s| {
            b.slurm_plugin_task().call_slurmd_batch_request(s, request)
        })?;
        self.check_binding("slurmd-batch-request", &binding)?;
        Ok(binding)
    }

    pub fn slurmd_launch_request(&self, request: &LaunchRequest) -> Result<CpuBinding, CallError> {
        let (binding, _) = self.core.call("slurmd-launch-request", &[], |b, s| {
            b.slurm_plugin_task().call_slurmd_launch_request(s, request)
        })?;
        self.check_binding("slurmd-launch-request", &binding)?;
        Ok(binding)
    }

    pub fn slurmd_reserve_resources(&self, request: &LaunchRequest) -> Result<(), CallError> {
        self.core
            .call("slurmd-reserve-resources", &[], |b, s| {
                b.slurm_plugin_task()
                    .call_slurmd_reserve_resources(s, request)
            })
            .map(|_| ())
    }

    pub fn slurmd_suspend_job(&self, job_id: u32) -> Result<(), CallError> {
        self.core
            .call("slurmd-suspend-job", &[], |b, s| {
                b.slurm_plugin_task().call_slurmd_suspend_job(s, job_id)
            })
            .map(|_| ())
    }

    pub fn slurmd_resume_job(&self, job_id: u32) -> Result<(), CallError> {
        self.core
            .call("slurmd-resume-job", &[], |b, s| {
                b.slurm_plugin_task().call_slurmd_resume_job(s, job_id)
            })
            .map(|_| ())
    }

    pub fn slurmd_release_resources(&self, job_id: u32) -> Result<(), CallError> {
        self.core
            .call("slurmd-release-resources", &[], |b, s| {
                b.slurm_plugin_task()
                    .call_slurmd_release_resources(s, job_id)
            })
            .map(|_| ())
    }

    pub fn pre_setuid(&self, step: &Step) -> Result<(), CallError> {
        self.core
            .call("pre-setuid", &step_pids(step, None), |b, s| {
                b.slurm_plugin_task().call_pre_setuid(s, step)
            })
            .map(|_| ())
    }

    pub fn pre_launch_priv(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call("pre-launch-priv", &step_pids(step, Some(task)), |b, s| {
                b.slurm_plugin_task().call_pre_launch_priv(s, step, *task)
            })
            .map(|_| ())
    }

    pub fn pre_launch(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call("pre-launch", &step_pids(step, Some(task)), |b, s| {
                b.slurm_plugin_task().call_pre_launch(s, step, *task)
            })
            .map(|_| ())
    }

    pub fn post_term(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call("post-term", &[], |b, s| {
                b.slurm_plugin_task().call_post_term(s, step, *task)
            })
            .map(|_| ())
    }

    pub fn post_step(&self, step: &Step) -> Result<(), CallError> {
        self.core
            .call("post-step", &[], |b, s| {
                b.slurm_plugin_task().call_post_step(s, step)
            })
            .map(|_| ())
    }

    pub fn add_pid(&self, pid: u32) -> Result<(), CallError> {
        self.core
            .call("add-pid", &[], |b, s| {
                b.slurm_plugin_task().call_add_pid(s, pid)
            })
            .map(|_| ())
    }

    pub fn update_mem_limit(
        &self,
        step: &Step,
        job_mem: u64,
        step_mem: u64,
    ) -> Result<(), CallError> {
        self.core
            .call("update-mem-limit", &[], |b, s| {
                b.slurm_plugin_task()
                    .call_update_mem_limit(s, step, job_mem, step_mem)
            })
            .map(|_| ())
    }
}
