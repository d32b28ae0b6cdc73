//! The typed task API: [`TaskPlugin`].

use wasmtime::component::{HasSelf, InstancePre, Linker};
use wasmtime::{Engine, Store};

use crate::bindings::task::exports::slurm::plugin::task as wit;
use crate::bindings::task::{TaskPlugin as World, TaskPluginPre as WorldPre};
use crate::bindings::types::{PluginError, PluginIdentity, Step, Task};
use crate::engine::{add_wasi, Host, Shared};
use crate::error::{CallError, LoadError};
use crate::plugin::{Kind, PluginCore, PluginSettings, PluginSource, Slot};
use crate::store::HostState;
use crate::validate::Checker;

pub use wit::{BatchRequest, CpuBinding, LaunchRequest, TaskConfig};

pub(crate) fn linker(engine: &Engine) -> wasmtime::Result<Linker<HostState>> {
    let mut linker = Linker::new(engine);
    add_wasi(&mut linker)?;
    World::add_to_linker::<HostState, HasSelf<HostState>>(&mut linker, |s| s)?;
    Ok(linker)
}

pub(crate) struct TaskKind;

impl Kind for TaskKind {
    const SLOT: Slot = Slot::Task;
    type Pre = WorldPre<HostState>;
    type Bindings = World;
    type Config = TaskConfig;

    fn linker(shared: &Shared) -> &Linker<HostState> {
        &shared.linkers.task
    }
    fn pre(instance_pre: InstancePre<HostState>) -> wasmtime::Result<Self::Pre> {
        WorldPre::new(instance_pre)
    }
    fn instantiate(pre: &Self::Pre, store: &mut Store<HostState>) -> wasmtime::Result<World> {
        pre.instantiate(store)
    }
    fn describe(b: &World, store: &mut Store<HostState>) -> wasmtime::Result<PluginIdentity> {
        b.call_describe(store)
    }
    fn init(
        b: &World,
        store: &mut Store<HostState>,
        config: &TaskConfig,
    ) -> wasmtime::Result<Result<(), PluginError>> {
        b.slurm_plugin_task().call_init(store, config)
    }
    /// Task plugins keep no state across restarts.
    fn restore(
        _b: &World,
        _store: &mut Store<HostState>,
        _data: &[u8],
    ) -> wasmtime::Result<Result<(), PluginError>> {
        Ok(Ok(()))
    }
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

    pub fn identity(&self) -> PluginIdentity {
        self.core.identity()
    }

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
            .try_for_each(|m| c.text("message", m))
    }

    pub fn init(&self, config: &TaskConfig) -> Result<(), CallError> {
        self.core.call("init", &[], |b, s| {
            b.slurm_plugin_task().call_init(s, config)
        })?;
        self.core.remember_config(config);
        Ok(())
    }

    pub fn fini(&self) -> Result<(), CallError> {
        self.core
            .call("fini", &[], |b, s| b.slurm_plugin_task().call_fini(s))
            .map(|_| ())
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
