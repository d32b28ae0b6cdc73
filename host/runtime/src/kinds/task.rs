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

use super::plain;

pub use wit::{BatchRequest, CpuBinding, LaunchRequest, TaskConfig};

super::plugin_kind! {
    handle: TaskPlugin,
    kind: TaskKind,
    slot: Task,
    linker: task,
    world: World,
    pre: WorldPre<crate::store::HostState>,
    bindings: World,
    interface: slurm_plugin_task,
    config: TaskConfig,
    restore: |b, store, data| {
        // Task plugins keep no state across restarts.
        let _ = (b, store, data);
        Ok(Ok(()))
    },
    save: |_b, _store| Ok(Ok(None)),
    // Nor a world beyond their configuration.
    journal: (),
    replay: |_b, replay, _journal, restore| restore(replay),
}

crate::replay::replayer!(TaskPlugin, "task", |p| {
    "init" => |(config,): (TaskConfig,)| -> () { p.init(&config) },
    "fini" => |(): ()| -> () { p.fini() },
    "slurmd-batch-request" => |(request,): (BatchRequest,)| -> CpuBinding { p.slurmd_batch_request(&request) },
    "slurmd-launch-request" => |(request,): (LaunchRequest,)| -> CpuBinding { p.slurmd_launch_request(&request) },
    "slurmd-reserve-resources" => |(request,): (LaunchRequest,)| -> () { p.slurmd_reserve_resources(&request) },
    "slurmd-suspend-job" => |(job_id,): (u32,)| -> () { p.slurmd_suspend_job(job_id) },
    "slurmd-resume-job" => |(job_id,): (u32,)| -> () { p.slurmd_resume_job(job_id) },
    "slurmd-release-resources" => |(job_id,): (u32,)| -> () { p.slurmd_release_resources(job_id) },
    "pre-setuid" => |(step,): (Step,)| -> () { p.pre_setuid(&step) },
    "pre-launch-priv" => |(step, task): (Step, Task)| -> () { p.pre_launch_priv(&step, &task) },
    "pre-launch" => |(step, task): (Step, Task)| -> () { p.pre_launch(&step, &task) },
    "post-term" => |(step, task): (Step, Task)| -> () { p.post_term(&step, &task) },
    "post-step" => |(step,): (Step,)| -> () { p.post_step(&step) },
    "add-pid" => |(pid,): (u32,)| -> () { p.add_pid(pid) },
    "update-mem-limit" => |(step, job_mem, step_mem): (Step, u64, u64)| -> () {
        p.update_mem_limit(&step, job_mem, step_mem)
    },
});

/// A loaded task plugin. Calls that may bind processes let the plugin touch
/// only the step's task pids, and bind them only to the CPUs of the step's
/// cores on this node (see the `cpuset` capability); the end of a
/// step or job releases what binding set up for it (step cgroups), when the
/// plugin holds the `cpuset` grant.
///
/// # Errors
///
/// Every method that calls the plugin fails with a [`CallError`]:
/// [`Disabled`](CallError::Disabled) once the failure policy has taken the
/// plugin out of service; [`NotInitialised`](CallError::NotInitialised) for
/// any call but `init` and `fini` before an `init` succeeded;
/// [`Start`](CallError::Start) when an instance could not be started
/// (instantiated, and after a fault initialised again); a fault
/// ([`Fuel`](CallError::Fuel), [`Deadline`](CallError::Deadline),
/// [`Memory`](CallError::Memory), [`Stack`](CallError::Stack),
/// [`Trap`](CallError::Trap)), after which the failure policy decides what
/// serves the next call; [`Plugin`](CallError::Plugin) when the plugin
/// returns a Slurm error, for the functions whose WIT result has one;
/// [`Denied`](CallError::Denied) in place of a plugin error or trap that
/// followed a call to a capability it was not granted. Each method says
/// which answers the host refuses with [`Invalid`](CallError::Invalid).
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
    /// Compiles `source` (or takes it from the host's cache), checks that it
    /// is a task plugin for this host's contract, with imports, exports and
    /// identity it may have under `settings`, and asks it to `describe` itself
    /// in a throwaway instance. Runs nothing else of the plugin: call
    /// [`TaskPlugin::init`] next.
    ///
    /// # Errors
    ///
    /// A [`LoadError`]: the source cannot be read or is not a component, or the
    /// compiled-component cache cannot keep it; it is a plugin of another kind
    /// or contract version, imports a capability task plugins may not have,
    /// lacks an export, describes itself wrongly, requires a capability
    /// `settings` does not grant (`topology`, `cpuset`), or faults in its start
    /// function or `describe`.
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
    fn check_binding<J>(c: &Checker<'_>, _: &J, binding: &CpuBinding) -> Result<(), CallError> {
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

    /// `task_p_slurmd_batch_request`: the CPU binding of the batch script of
    /// `request`'s job on this node.
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors));
    /// [`CallError::Invalid`] when the binding's `cpu-bind` or a message is
    /// over 1 MiB, it has more than 2^20 messages or variables, or sets a
    /// variable other than a valid `SLURM_*` name or a value over 1 MiB or with
    /// a NUL byte.
    pub fn slurmd_batch_request(&self, request: &BatchRequest) -> Result<CpuBinding, CallError> {
        plain!(
            self,
            "slurmd-batch-request",
            &(request,),
            |b, s| b.slurm_plugin_task().call_slurmd_batch_request(s, request),
            Self::check_binding
        )
    }

    /// `task_p_slurmd_launch_request`: the binding a step's tasks on this
    /// node get (task/affinity's `lllp_distribution`): `cpu_bind_type` bits,
    /// the map or mask list, verbose messages and the `SLURM_*` variables
    /// that describe it.
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors));
    /// [`CallError::Invalid`] when the binding's `cpu-bind` or a message is
    /// over 1 MiB, it has more than 2^20 messages or variables, or sets a
    /// variable other than a valid `SLURM_*` name or a value over 1 MiB or with
    /// a NUL byte. The contract has binding errors carry
    /// `ESLURMD_CPU_BIND_ERROR` (4032) or `ESLURMD_CPU_LAYOUT_ERROR` (4033).
    pub fn slurmd_launch_request(&self, request: &LaunchRequest) -> Result<CpuBinding, CallError> {
        plain!(
            self,
            "slurmd-launch-request",
            &(request,),
            |b, s| b.slurm_plugin_task().call_slurmd_launch_request(s, request),
            Self::check_binding
        )
    }

    /// `task_p_slurmd_reserve_resources`: reserve resources for the step of
    /// `request` (seed API; gone from Slurm after 20.02).
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn slurmd_reserve_resources(&self, request: &LaunchRequest) -> Result<(), CallError> {
        self.core
            .call("slurmd-reserve-resources", &(request,), None, |b, s| {
                b.slurm_plugin_task()
                    .call_slurmd_reserve_resources(s, request)
            })
            .map(|_| ())
    }

    /// `task_p_slurmd_suspend_job`: job `job_id` is being suspended on this
    /// node (removed from Slurm in 24.11).
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn slurmd_suspend_job(&self, job_id: u32) -> Result<(), CallError> {
        self.core
            .call("slurmd-suspend-job", &(job_id,), None, |b, s| {
                b.slurm_plugin_task().call_slurmd_suspend_job(s, job_id)
            })
            .map(|_| ())
    }

    /// `task_p_slurmd_resume_job`: job `job_id` resumes on this node
    /// (removed from Slurm in 24.11).
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn slurmd_resume_job(&self, job_id: u32) -> Result<(), CallError> {
        self.core
            .call("slurmd-resume-job", &(job_id,), None, |b, s| {
                b.slurm_plugin_task().call_slurmd_resume_job(s, job_id)
            })
            .map(|_| ())
    }

    /// The plugin's `slurmd-release-resources`; then, whatever it answered,
    /// the job's step cgroups are released (see [`Self::post_step`]).
    pub fn slurmd_release_resources(&self, job_id: u32) -> Result<(), CallError> {
        let outcome = self
            .core
            .call("slurmd-release-resources", &(job_id,), None, |b, s| {
                b.slurm_plugin_task()
                    .call_slurmd_release_resources(s, job_id)
            })
            .map(|_| ());
        self.release("slurmd-release-resources", job_id, None);
        outcome
    }

    /// `task_p_pre_setuid`: in slurmstepd, before privileges are dropped.
    /// During the call `cpuset` may bind only `step`'s task pids, to the CPUs
    /// of its cores on this node.
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn pre_setuid(&self, step: &Step) -> Result<(), CallError> {
        self.core
            .call("pre-setuid", &(step,), Some(scope(step, None)), |b, s| {
                b.slurm_plugin_task().call_pre_setuid(s, step)
            })
            .map(|_| ())
    }

    /// `task_p_pre_launch_priv`: privileged, for `task` after fork; where
    /// task/affinity binds the task. During the call `cpuset` may bind only
    /// `task`'s pid and `step`'s task pids, to the CPUs of the step's cores on
    /// this node.
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn pre_launch_priv(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call(
                "pre-launch-priv",
                &(step, task),
                Some(scope(step, Some(task))),
                |b, s| b.slurm_plugin_task().call_pre_launch_priv(s, step, *task),
            )
            .map(|_| ())
    }

    /// `task_p_pre_launch`: unprivileged, for `task` just before exec
    /// (task/affinity applies `--mem-bind` here). `cpuset` is limited as in
    /// [`TaskPlugin::pre_launch_priv`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn pre_launch(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call(
                "pre-launch",
                &(step, task),
                Some(scope(step, Some(task))),
                |b, s| b.slurm_plugin_task().call_pre_launch(s, step, *task),
            )
            .map(|_| ())
    }

    /// `task_p_post_term`: `task` of `step` ended. `cpuset` may bind nothing
    /// during the call.
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn post_term(&self, step: &Step, task: &Task) -> Result<(), CallError> {
        self.core
            .call("post-term", &(step, task), None, |b, s| {
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
            .call("post-step", &(step,), None, |b, s| {
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

    /// `task_p_add_pid`: process `pid` joined a step (extern step
    /// adoption). `cpuset` may bind nothing during the call.
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn add_pid(&self, pid: u32) -> Result<(), CallError> {
        self.core
            .call("add-pid", &(pid,), None, |b, s| {
                b.slurm_plugin_task().call_add_pid(s, pid)
            })
            .map(|_| ())
    }

    /// `task_p_update_mem_limit`: `step`'s memory limits changed to
    /// `job_mem` for its job and `step_mem` for the step, in MB.
    ///
    /// # Errors
    ///
    /// Those of every call ([`TaskPlugin`](TaskPlugin#errors)).
    pub fn update_mem_limit(
        &self,
        step: &Step,
        job_mem: u64,
        step_mem: u64,
    ) -> Result<(), CallError> {
        self.core
            .call(
                "update-mem-limit",
                &(step, job_mem, step_mem),
                None,
                |b, s| {
                    b.slurm_plugin_task()
                        .call_update_mem_limit(s, step, job_mem, step_mem)
                },
            )
            .map(|_| ())
    }
}
