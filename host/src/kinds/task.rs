//! The typed task API: [`TaskPlugin`].

use crate::bindings::task::exports::slurm::plugin::task as wit;
use crate::bindings::task::{TaskPlugin as World, TaskPluginPre as WorldPre};
use crate::bindings::types::{Step, Task};
use crate::capabilities::Capability;
use crate::engine::Host;
use crate::error::{CallError, LoadError};
use crate::plugin::{PluginCore, PluginSettings, PluginSource};
use crate::store::StepScope;
use crate::validate::{Checker, EnvSource};

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
    // Nor a world beyond their configuration.
    journal: (),
    replay: |_b, _replay, _journal| Ok(()),
}

/// A loaded task plugin. Calls that may bind processes let the plugin touch
/// only the step's task pids, and bind them only to the CPUs of the step's
/// cores on this node (see the `cpuset` capability); the end of a
/// step or job releases what binding set up for it (step cgroups), when the
/// plugin holds the `cpuset` grant.
pub struct TaskPlugin {
    core: PluginCore<TaskKind>,
}

/// The step a call is about: `cpuset` may bind its task pids (`task-pids`
/// is indexed by local task id; `task`, the call's own task, comes first so
/// its local id wins over a disagreeing list) to the CPUs of its cores on
/// this node (`cores`).
fn scope(step: &Step, task: Option<&Task>) -> StepScope {
    let own = task.map(|t| (t.pid, t.local_id));
    let listed = (0u32..)
        .zip(&step.task_pids)
        .map(|(local, &pid)| (pid, local));
    StepScope::new(step.job_id, step.step_id, own.into_iter().chain(listed))
        .with_cores(step.cores.ones())
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

    /// Contract checks on a returned binding: text sizes, list lengths, and
    /// environment edits a task plugin may make (`SLURM_*` only, values
    /// without NUL: [`EnvSource`]).
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
        binding
            .env
            .iter()
            .try_for_each(|kv| c.env_edit(EnvSource::Task, &kv.key, Some(&kv.value)))
    }

    pub fn slurmd_batch_request(&self, request: &BatchRequest) -> Result<CpuBinding, CallError> {
        let (binding, _) = self.core.call("slurmd-batch-request", None, |b, s| {
            b.slurm_plugin_task().call_slurmd_batch_request(s, request)
        })?;
        self.check_binding("slurmd-batch-request", &binding)?;
        Ok(binding)
    }

    pub fn slurmd_launch_request(&self, request: &LaunchRequest) -> Result<CpuBinding, CallError> {
        let (binding, _) = self.core.call("slurmd-launch-request", None, |b, s| {
            b.slurm_plugin_task().call_slurmd_launch_request(s, request)
        })?;
        self.check_binding("slurmd-launch-request", &binding)?;
        Ok(binding)
    }

    pub fn slurmd_reserve_resources(&self, request: &LaunchRequest) -> Result<(), CallError> {
        self.core
            .call("slurmd-reserve-resources", None, |b, s| {
                b.slurm_plugin_task()
                    .call_slurmd_reserve_resources(s, request)
            })
            .map(|_| ())
    }

    pub fn slurmd_suspend_job(&self, job_id: u32) -> Result<(), CallError> {
        self.core
            .call("slurmd-suspend-job", None, |b, s| {
                b.slurm_plugin_task().call_slurmd_suspend_job(s, job_id)
            })
            .map(|_| ())
    }

    pub fn slurmd_resume_job(&self, job_id: u32) -> Result<(), CallError> {
        self.core
            .call("slurmd-resume-job", None, |b, s| {
                b.slurm_plugin_task().call_slurmd_resume_job(s, job_id)
            })
            .map(|_| ())
    }

    /// The plugin's `slurmd-release-resources`; then, whatever it answered,
    /// the job's step cgroups are released (see [`Self::post_step`]).
    pub fn slurmd_release_resources(&self, job_id: u32) -> Result<(), CallError> {
        let outcome = self
            .core
            .call("slurmd-release-resources", None, |b, s| {
                b.slurm_plugin_task()
                    .call_slurmd_release_resources(s, job_id)
            })
            .map(|_| ());
        self.release("slurmd-release-resources", job_id, None);
        outcome
    }

    pub fn pre_setuid(&self, step: &Step) -> Result<(), CallError> {
        self.core
            .call("pre-setuid", Some(scope(step, None)), |b, s| {
                b.slurm_plugin_task().call_pre_setuid(s, step)
            })
            .map(|_| ())
    }

    pub fn pre_launch_priv(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call("pre-launch-priv", Some(scope(step, Some(task))), |b, s| {
                b.slurm_plugin_task().call_pre_launch_priv(s, step, *task)
            })
            .map(|_| ())
    }

    pub fn pre_launch(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call("pre-launch", Some(scope(step, Some(task))), |b, s| {
                b.slurm_plugin_task().call_pre_launch(s, step, *task)
            })
            .map(|_| ())
    }

    pub fn post_term(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call("post-term", None, |b, s| {
                b.slurm_plugin_task().call_post_term(s, step, *task)
            })
            .map(|_| ())
    }

    /// The plugin's `post-step`; then, whatever it answered (the step's
    /// tasks have ended either way), the step's cgroups are released like
    /// Slurm's task/cgroup removes them at step end.
    pub fn post_step(&self, step: &Step) -> Result<(), CallError> {
        let outcome = self
            .core
            .call("post-step", None, |b, s| {
                b.slurm_plugin_task().call_post_step(s, step)
            })
            .map(|_| ());
        self.release("post-step", step.job_id, Some(step.step_id));
        outcome
    }

    /// Asks the `cpuset` provider to release step `step_id` of `job_id`
    /// (every step when `None`) if this plugin may bind at all. A failure
    /// (a cgroup that still holds processes) is logged, not returned: it is
    /// the host's cleanup, not the plugin's answer.
    fn release(&self, function: &'static str, job_id: u32, step_id: Option<u32>) {
        if !self.core.settings().grants.allows(Capability::Cpuset) {
            return;
        }
        if let Err(error) = self.core.services().cpuset.release(job_id, step_id) {
            tracing::warn!(plugin = %self.core.plugin_type(), function, job_id, step_id, "releasing the step's CPU binding: {error:?}");
        }
    }

    pub fn add_pid(&self, pid: u32) -> Result<(), CallError> {
        self.core
            .call("add-pid", None, |b, s| {
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
            .call("update-mem-limit", None, |b, s| {
                b.slurm_plugin_task()
                    .call_update_mem_limit(s, step, job_mem, step_mem)
            })
            .map(|_| ())
    }
}
