//! The task kind as a [`Plugin`] value (see [`crate::plugin`]).

use std::marker::PhantomData;

use crate::identity;
use crate::plugin::HasState;
use crate::task::{BatchRequest, CpuBinding, IdentityGuest, LaunchRequest, TaskConfig, TaskGuest};
use crate::types::{PluginError, PluginIdentity, Step, Task};
use crate::Error;

/// The binding a request asked for, unchanged: what a task plugin that
/// binds nothing answers (Slurm's task/none,
/// `src/plugins/task/none/task_none.c`).
pub fn binding_as_requested(cpu_bind_type: u32, cpu_bind: String) -> CpuBinding {
    CpuBinding {
        cpu_bind_type,
        cpu_bind,
        messages: Vec::new(),
        env: Vec::new(),
    }
}

/// A task plugin. Only [`Plugin::init`] is required; every other function
/// has the default of Slurm's task/none: requests keep the binding they
/// asked for, and every hook succeeds doing nothing.
pub trait Plugin: Sized + Send + 'static {
    /// `plugin_type`, `task/<name>`.
    const TYPE: &'static str;
    /// `plugin_name`, a human description.
    const NAME: &'static str;

    /// What `describe` answers: [`TYPE`](Self::TYPE) and
    /// [`NAME`](Self::NAME) with this SDK's versions and no required
    /// capabilities. A plugin that binds through `cpuset` or reads
    /// `topology` lists them here (see [`crate::identity()`]).
    fn identity() -> PluginIdentity {
        identity(Self::TYPE, Self::NAME)
    }

    /// `init`: the plugin for this node. An error refuses to load.
    fn init(config: TaskConfig) -> Result<Self, Error>;

    /// `fini`, before the value is dropped. Default: nothing.
    fn fini(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// `slurmd-batch-request`: the batch script's binding. Default: as
    /// requested.
    fn slurmd_batch_request(&mut self, request: BatchRequest) -> Result<CpuBinding, Error> {
        Ok(binding_as_requested(
            request.cpu_bind_type,
            request.cpu_bind,
        ))
    }

    /// `slurmd-launch-request`: a step's binding on this node. Default: as
    /// requested.
    fn slurmd_launch_request(&mut self, request: LaunchRequest) -> Result<CpuBinding, Error> {
        Ok(binding_as_requested(
            request.cpu_bind_type,
            request.cpu_bind,
        ))
    }

    /// `slurmd-reserve-resources`. Default: nothing.
    fn slurmd_reserve_resources(&mut self, _request: LaunchRequest) -> Result<(), Error> {
        Ok(())
    }

    /// `slurmd-suspend-job`. Default: nothing.
    fn slurmd_suspend_job(&mut self, _job_id: u32) -> Result<(), Error> {
        Ok(())
    }

    /// `slurmd-resume-job`. Default: nothing.
    fn slurmd_resume_job(&mut self, _job_id: u32) -> Result<(), Error> {
        Ok(())
    }

    /// `slurmd-release-resources`. Default: nothing.
    fn slurmd_release_resources(&mut self, _job_id: u32) -> Result<(), Error> {
        Ok(())
    }

    /// `pre-setuid`, in slurmstepd before privileges are dropped. Default:
    /// nothing.
    fn pre_setuid(&mut self, _step: &Step) -> Result<(), Error> {
        Ok(())
    }

    /// `pre-launch-priv`: privileged, per task, after its fork (where a
    /// task is bound through `cpuset`). Default: nothing.
    fn pre_launch_priv(&mut self, _step: &Step, _task: &Task) -> Result<(), Error> {
        Ok(())
    }

    /// `pre-launch`: per task, unprivileged, just before exec. Default:
    /// nothing.
    fn pre_launch(&mut self, _step: &Step, _task: &Task) -> Result<(), Error> {
        Ok(())
    }

    /// `post-term`: a task ended. Default: nothing.
    fn post_term(&mut self, _step: &Step, _task: &Task) -> Result<(), Error> {
        Ok(())
    }

    /// `post-step`: every task of the step ended. Default: nothing.
    fn post_step(&mut self, _step: &Step) -> Result<(), Error> {
        Ok(())
    }

    /// `add-pid`: a process joined the step. Default: nothing.
    fn add_pid(&mut self, _pid: u32) -> Result<(), Error> {
        Ok(())
    }

    /// `update-mem-limit`, in MB. Default: nothing.
    fn update_mem_limit(
        &mut self,
        _step: &Step,
        _job_mem: u64,
        _step_mem: u64,
    ) -> Result<(), Error> {
        Ok(())
    }
}

/// A [`Plugin`] as the `task-plugin` world's guest: what
/// `export_task!(plugin P)` exports, and what native tests call.
pub struct Export<P>(PhantomData<P>);

fn with<P: Plugin + HasState, R>(
    f: impl FnOnce(&mut P) -> Result<R, Error>,
) -> Result<R, PluginError> {
    P::state().with(P::TYPE, f).map_err(Into::into)
}

impl<P: Plugin + HasState> IdentityGuest for Export<P> {
    fn describe() -> PluginIdentity {
        P::identity()
    }
}

impl<P: Plugin + HasState> TaskGuest for Export<P> {
    fn init(config: TaskConfig) -> Result<(), PluginError> {
        P::state().set(P::init(config)?);
        Ok(())
    }

    /// Calls the plugin's `fini` and drops it; succeeds without one.
    fn fini() -> Result<(), PluginError> {
        P::state().finish(P::fini).map_err(Into::into)
    }

    fn slurmd_batch_request(request: BatchRequest) -> Result<CpuBinding, PluginError> {
        with(|p: &mut P| p.slurmd_batch_request(request))
    }

    fn slurmd_launch_request(request: LaunchRequest) -> Result<CpuBinding, PluginError> {
        with(|p: &mut P| p.slurmd_launch_request(request))
    }

    fn slurmd_reserve_resources(request: LaunchRequest) -> Result<(), PluginError> {
        with(|p: &mut P| p.slurmd_reserve_resources(request))
    }

    fn slurmd_suspend_job(job_id: u32) -> Result<(), PluginError> {
        with(|p: &mut P| p.slurmd_suspend_job(job_id))
    }

    fn slurmd_resume_job(job_id: u32) -> Result<(), PluginError> {
        with(|p: &mut P| p.slurmd_resume_job(job_id))
    }

    fn slurmd_release_resources(job_id: u32) -> Result<(), PluginError> {
        with(|p: &mut P| p.slurmd_release_resources(job_id))
    }

    fn pre_setuid(step: Step) -> Result<(), PluginError> {
        with(|p: &mut P| p.pre_setuid(&step))
    }

    fn pre_launch_priv(step: Step, task: Task) -> Result<(), PluginError> {
        with(|p: &mut P| p.pre_launch_priv(&step, &task))
    }

    fn pre_launch(step: Step, task: Task) -> Result<(), PluginError> {
        with(|p: &mut P| p.pre_launch(&step, &task))
    }

    fn post_term(step: Step, task: Task) -> Result<(), PluginError> {
        with(|p: &mut P| p.post_term(&step, &task))
    }

    fn post_step(step: Step) -> Result<(), PluginError> {
        with(|p: &mut P| p.post_step(&step))
    }

    fn add_pid(pid: u32) -> Result<(), PluginError> {
        with(|p: &mut P| p.add_pid(pid))
    }

    fn update_mem_limit(step: Step, job_mem: u64, step_mem: u64) -> Result<(), PluginError> {
        with(|p: &mut P| p.update_mem_limit(&step, job_mem, step_mem))
    }
}
