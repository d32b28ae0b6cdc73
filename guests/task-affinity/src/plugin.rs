//! The `task-plugin` world export of task/affinity.
//!
//! The plugin keeps only the cluster settings `init` gives it
//! (`TaskPluginParam`, `CR_CORE_DEFAULT_DIST_BLOCK`); everything about a step
//! comes with each call (the host hands the binding decided in
//! `slurmd-launch-request` back in the `step` record), and the node's layout
//! is read from the `topology` capability when a call needs it.
//!
//! Slurm 22.05 binds each task in `task_p_set_affinity`, privileged, per
//! task, after fork: that is the contract's `pre-launch-priv`, where this
//! plugin binds through `cpuset`. `pre-launch` is 22.05's `task_p_pre_launch`,
//! which only applies `--mem-bind` in libnuma builds.

use slurm_wasm_sdk::codes::{EINVAL, NO_VAL16, SLURM_ERROR};
use slurm_wasm_sdk::error::capability_name;
use slurm_wasm_sdk::host::{self, CapabilityError};
use slurm_wasm_sdk::task::topology::CpuLayout;
use slurm_wasm_sdk::task::{BatchRequest, CpuBinding, LaunchRequest, Plugin, TaskConfig};
use slurm_wasm_sdk::types::{Capability, KeyValue, PluginIdentity, SelectTypeParams, Step, Task};
use slurm_wasm_sdk::{debug, identity, info, Bitmap, Error};

use crate::allocation::CredentialShape;
use crate::batch::batch_bind;
use crate::bind_type::{describe, LDRANK, NONE, RANK};
use crate::cpuset::{task_cpus, TaskBinding};
use crate::env::cpu_bind_env;
use crate::hardware::Hardware;
use crate::lllp::{distribute, Launch, Settings};
use crate::mask::{cpuset_text, CPU_SETSIZE};
use crate::task_plugin_param;
use crate::verbose::{self, TaskId};

/// Slurm's reserved step ids (`SLURM_BATCH_SCRIPT`, `SLURM_EXTERN_CONT`,
/// `SLURM_INTERACTIVE_STEP`).
const BATCH_STEP: u32 = 0xffff_fffb;
const EXTERN_STEP: u32 = 0xffff_fffc;
const INTERACTIVE_STEP: u32 = 0xffff_fffa;

/// The cluster settings task/affinity reads from `slurm.conf`. Fails with
/// `EINVAL` on a `TaskPluginParam` Slurm 22.05 refuses.
pub fn read_settings(config: &TaskConfig) -> Result<Settings, Error> {
    let task_plugin_param = task_plugin_param::bits(config.cluster.task_plugin_param)
        .map_err(|e| Error::new(EINVAL, e))?;
    let default_dist_block = config
        .cluster
        .select_type_parameters
        .contains(SelectTypeParams::CORE_DEFAULT_DIST_BLOCK);
    Ok(Settings {
        task_plugin_param,
        default_dist_block,
    })
}

/// The node's layout from the `topology` capability, which task/affinity
/// requires (the host refuses to load it without the grant).
pub fn hardware() -> Result<Hardware, Error> {
    let CpuLayout {
        sockets,
        cores_per_socket,
        threads_per_core,
        block_map,
        numa_node_of_cpu,
    } = host::cpu_layout()
        .map_err(|e| Error::generic(format!("reading the CPU layout: {}", capability_text(&e))))?;
    Hardware::new(
        sockets,
        cores_per_socket,
        threads_per_core,
        block_map,
        numa_node_of_cpu,
    )
    .map_err(|e| Error::generic(format!("topology capability: {e}")))
}

fn capability_text(e: &CapabilityError) -> String {
    match e {
        CapabilityError::Denied(c) => format!(
            "the `{}` capability is not granted to task/affinity (grant it in the host configuration)",
            capability_name(*c)
        ),
        CapabilityError::Unavailable(why) => format!("capability unavailable: {why}"),
        CapabilityError::Failed(why) => why.clone(),
    }
}

/// The launch request as `lllp_distribution` sees it. An interactive step
/// is bound `none` first, as slurmd does before calling the plugin.
pub fn launch_of(request: &LaunchRequest) -> Result<Launch, Error> {
    let interactive = request.interactive || request.step_id == INTERACTIVE_STEP;
    let (cpu_bind_type, cpu_bind) = if interactive {
        (NONE, String::new())
    } else {
        (request.cpu_bind_type, request.cpu_bind.clone())
    };
    let unset = |v: u16| if v == NO_VAL16 { 0 } else { v };
    Ok(Launch {
        job_id: request.job_id,
        tasks: request.global_task_ids.len() as u32,
        cpus_per_task: request.cpus_per_task,
        cpu_bind_type,
        cpu_bind,
        task_dist: request.task_dist,
        ntasks_per_core: unset(request.ntasks_per_core),
        ntasks_per_socket: unset(request.ntasks_per_socket),
        threads_per_core: unset(request.threads_per_core),
        overcommit: request.overcommit,
        step_cores: Bitmap::try_from(&request.step_cores)?,
        shape: CredentialShape {
            sockets: request.sockets,
            cores: request.cores_per_socket,
        },
        cpus_conf: request.cpus_conf,
        job_core_spec: request.job_core_spec.filter(|&spec| spec != NO_VAL16),
    })
}

/// `task_p_slurmd_launch_request` with explicit settings: the binding
/// `lllp_distribution` decides and the task environment that follows from
/// it (none for interactive steps).
pub fn launch_request(
    request: &LaunchRequest,
    settings: &Settings,
    hw: &Hardware,
) -> Result<CpuBinding, Error> {
    let launch = launch_of(request)?;
    let binding = distribute(&launch, hw, settings)?;
    let interactive = request.interactive || request.step_id == INTERACTIVE_STEP;
    let env = if interactive {
        Vec::new()
    } else {
        cpu_bind_env(binding.cpu_bind_type, &binding.cpu_bind)
            .into_iter()
            .map(|(key, value)| KeyValue { key, value })
            .collect()
    };
    Ok(CpuBinding {
        cpu_bind_type: binding.cpu_bind_type,
        cpu_bind: binding.cpu_bind,
        messages: Vec::new(),
        env,
    })
}

/// `task_p_slurmd_batch_request` with explicit settings: `batch_bind`, or
/// the request's binding unchanged when the job has no CPU here. Fails only
/// on a malformed `job-cores` bitmap (`EINVAL`).
pub fn batch_request(
    request: &BatchRequest,
    settings: &Settings,
    hw: &Hardware,
) -> Result<CpuBinding, Error> {
    let shape = CredentialShape {
        sockets: request.sockets,
        cores: request.cores_per_socket,
    };
    let job_cores = Bitmap::try_from(&request.job_cores)?;
    let (cpu_bind_type, cpu_bind) = match batch_bind(
        request.job_id,
        &job_cores,
        shape,
        hw,
        settings.task_plugin_param,
    ) {
        Some(binding) => (binding.cpu_bind_type, binding.cpu_bind),
        None => (request.cpu_bind_type, request.cpu_bind.clone()),
    };
    Ok(CpuBinding {
        cpu_bind_type,
        cpu_bind,
        messages: Vec::new(),
        env: Vec::new(),
    })
}

/// CPUs of the step on this node (`job->cpus`): its cores times the
/// node's threads per core.
fn step_cpus(step: &Step, hw: &Hardware) -> u32 {
    let cores = Bitmap::try_from(&step.cores).map_or(0, |c| c.count());
    (cores * usize::from(hw.threads)) as u32
}

fn task_binding<'a>(step: &'a Step, local_id: u32, hw: &Hardware) -> TaskBinding<'a> {
    TaskBinding {
        bind: step.cpu_bind_type,
        list: &step.cpu_bind,
        local_id,
        step_cpus: step_cpus(step, hw),
    }
}

/// Slurm 22.05's `task_p_set_affinity`: binds the task to its CPU set
/// (`get_cpuset`, affinity.c) through `cpuset` unless the step binds `none`
/// or names no set, and logs the verbose line (`task_slurm_chkaffinity`,
/// src/slurmd/common/task_plugin.c) with the set applied, the task's current
/// set after a failure, or an empty set when nothing was applied.
///
/// Fails, as the task launch does in Slurm when `sched_setaffinity` fails,
/// when the binding is refused: the message names the capability when
/// `cpuset` is not granted.
pub fn set_affinity(step: &Step, task: &Task, hw: &Hardware) -> Result<(), Error> {
    if step.cpu_bind_type == 0 {
        return Ok(());
    }
    let mut shown = Bitmap::new(CPU_SETSIZE);
    let mut failure = None;
    if let Some(set) = task_cpus(&task_binding(step, task.local_id, hw), hw) {
        if step.cpu_bind_type & NONE == 0 {
            match host::bind_cpus(task.pid, &set) {
                Ok(()) => shown = set,
                Err(e) => {
                    shown = host::cpus_of(task.pid).unwrap_or_else(|_| Bitmap::new(CPU_SETSIZE));
                    failure = Some(Error::new(
                        SLURM_ERROR,
                        format!(
                            "binding task {} (pid {}) of {}.{} to CPUs 0x{}: {}",
                            task.global_id,
                            task.pid,
                            step.job_id,
                            step.step_id,
                            cpuset_text(&set),
                            capability_text(&e)
                        ),
                    ));
                }
            }
        }
    }
    let id = TaskId {
        node: &step.node_name,
        global_id: task.global_id,
        local_id: task.local_id,
        pid: task.pid,
    };
    if let Some(line) = verbose::line(step.cpu_bind_type, id, &shown, failure.is_some()) {
        info!("{line}");
    }
    failure.map_or(Ok(()), Err)
}

/// What 22.05's `task_p_pre_setuid` does beyond `--cpu-freq` validation
/// (which the contract does not carry): work out every local task's CPU set
/// and log it, complaining when a mode that needs a list has none. Never
/// fails.
pub fn check_step_sets(step: &Step, hw: &Hardware) {
    if matches!(step.step_id, BATCH_STEP | INTERACTIVE_STEP | EXTERN_STEP) {
        return;
    }
    let bind = step.cpu_bind_type;
    if step.cpu_bind.is_empty() && bind != NONE && bind != RANK && bind != LDRANK {
        slurm_wasm_sdk::error!("cpu_freq_cpuset_validate: cpu_bind string is null");
        return;
    }
    for local_id in 0..step.local_tasks {
        match task_cpus(&task_binding(step, local_id, hw), hw) {
            Some(set) => debug!(
                "{}.{} task {local_id}: CPUs 0x{}",
                step.job_id,
                step.step_id,
                cpuset_text(&set)
            ),
            None => debug!(
                "{}.{} task {local_id}: no CPU set in `{}`",
                step.job_id, step.step_id, step.cpu_bind
            ),
        }
    }
}

/// task/affinity, exported as a component: the settings `init` read.
pub struct TaskAffinity {
    settings: Settings,
}

impl Plugin for TaskAffinity {
    const TYPE: &'static str = "task/affinity";
    const NAME: &'static str = "task affinity plugin";

    /// `task/affinity`, requiring `topology` (the node's layout); `cpuset`
    /// is optional: without it the plugin loads, and binding tasks fails.
    fn identity() -> PluginIdentity {
        PluginIdentity {
            required_capabilities: vec![Capability::Topology],
            ..identity(Self::TYPE, Self::NAME)
        }
    }

    /// Reads `TaskPluginParam` and `SelectTypeParameters`; fails with
    /// `EINVAL` on a `TaskPluginParam` Slurm 22.05 refuses.
    fn init(config: TaskConfig) -> Result<Self, Error> {
        let settings = read_settings(&config)?;
        info!(
            "task affinity plugin loaded on {} (TaskPluginParam {})",
            config.node_name,
            describe(settings.task_plugin_param)
        );
        Ok(TaskAffinity { settings })
    }

    fn fini(&mut self) -> Result<(), Error> {
        debug!("task affinity plugin unloaded");
        Ok(())
    }

    /// `batch_bind`: the batch script gets every CPU of the job on the node.
    fn slurmd_batch_request(&mut self, request: BatchRequest) -> Result<CpuBinding, Error> {
        info!("task_p_slurmd_batch_request: {}", request.job_id);
        batch_request(&request, &self.settings, &hardware()?)
    }

    /// `lllp_distribution`: the step's binding, or `ESLURMD_CPU_BIND_ERROR`
    /// / `ESLURMD_CPU_LAYOUT_ERROR` with the message srun shows.
    fn slurmd_launch_request(&mut self, request: LaunchRequest) -> Result<CpuBinding, Error> {
        launch_request(&request, &self.settings, &hardware()?)
    }

    /// Slurm's plugin did nothing here but log (the hook left Slurm after
    /// 20.02).
    fn slurmd_reserve_resources(&mut self, request: LaunchRequest) -> Result<(), Error> {
        debug!("task_p_slurmd_reserve_resources: {}", request.job_id);
        Ok(())
    }

    /// Slurm's plugin does nothing here but log.
    fn slurmd_suspend_job(&mut self, job_id: u32) -> Result<(), Error> {
        debug!("task_p_slurmd_suspend_job: {job_id}");
        Ok(())
    }

    /// Slurm's plugin does nothing here but log.
    fn slurmd_resume_job(&mut self, job_id: u32) -> Result<(), Error> {
        debug!("task_p_slurmd_resume_job: {job_id}");
        Ok(())
    }

    /// Slurm's plugin (up to 20.02, when the hook left Slurm) only removed
    /// cpuset directories of the retired `TaskPluginParam=cpusets`; here it
    /// only logs.
    fn slurmd_release_resources(&mut self, job_id: u32) -> Result<(), Error> {
        debug!("task_p_slurmd_release_resources: affinity jobid {job_id}");
        Ok(())
    }

    /// Works out each task's CPU set (see [`check_step_sets`]); never
    /// fails, as Slurm's does not.
    fn pre_setuid(&mut self, step: &Step) -> Result<(), Error> {
        if step.cpu_bind_type != 0 {
            match hardware() {
                Ok(hw) => check_step_sets(step, &hw),
                Err(e) => slurm_wasm_sdk::warn!("pre_setuid: {}", e.message),
            }
        }
        Ok(())
    }

    /// Binds the task through `cpuset` (22.05's `task_p_set_affinity`; see
    /// [`set_affinity`]).
    fn pre_launch_priv(&mut self, step: &Step, task: &Task) -> Result<(), Error> {
        if step.cpu_bind_type == 0 {
            return Ok(());
        }
        set_affinity(step, task, &hardware()?)
    }

    /// 22.05's `task_p_pre_launch` applies `--mem-bind` NUMA memory binding
    /// in libnuma builds; the contract gives a plugin neither the step's
    /// memory binding nor a way to apply one, so, as in a build without
    /// libnuma, it only logs.
    fn pre_launch(&mut self, step: &Step, task: &Task) -> Result<(), Error> {
        debug!(
            "affinity {}.{}, task:{} bind:{}",
            step.job_id,
            step.step_id,
            task.global_id,
            describe(step.cpu_bind_type)
        );
        Ok(())
    }

    /// Slurm's plugin does nothing here but log.
    fn post_term(&mut self, step: &Step, task: &Task) -> Result<(), Error> {
        debug!(
            "affinity {}.{}, task {}",
            step.job_id, step.step_id, task.local_id
        );
        Ok(())
    }

    // post-step, add-pid and update-mem-limit: the SDK's defaults (Slurm's
    // task/affinity does nothing there; update-mem-limit is 26.05's).
}

slurm_wasm_sdk::export_task!(plugin TaskAffinity);

#[cfg(test)]
mod tests;
