//! The task kind (`wit/task.wit`): one function per contract function, for
//! the `task/wasm` shim in slurmd and slurmstepd.
#![allow(non_camel_case_types)]

use std::ffi::c_char;

use slurm_wasm_host::kinds::task::{BatchRequest, CpuBinding, LaunchRequest, TaskConfig};
use slurm_wasm_host::types::{Step, Task};
use slurm_wasm_host::{CallError, TaskPlugin};

use crate::cvt::{self, list, opt, owned, put, record, take, text};
use crate::error::{c_string, swasm_error, Failure};
use crate::host::swasm_host;
use crate::kind::{self, with_plugin, Handle, KindHandle};
use crate::types::{
    swasm_bitmap, swasm_cluster_config, swasm_key_value, swasm_plugin_identity, swasm_step,
    swasm_task,
};

/// A task slot of a host. Opaque; thread-safe: calls from several threads
/// (slurmd's RPC threads) are serialised on the plugin's own lock.
pub struct swasm_task_plugin(KindHandle<TaskPlugin>);

impl Handle for swasm_task_plugin {
    type Plugin = TaskPlugin;
    fn kind(&self) -> &KindHandle<TaskPlugin> {
        &self.0
    }
}

/// The argument of the task plugin's `init` (`task-config`).
#[repr(C)]
pub struct swasm_task_config {
    pub cluster: swasm_cluster_config,
    /// The node this slurmd serves.
    pub node_name: *const c_char,
}

/// A step launch request as slurmd receives it
/// (`launch_tasks_request_msg_t`, what binding needs).
#[repr(C)]
pub struct swasm_launch_request {
    pub job_id: u32,
    pub step_id: u32,
    pub user_id: u32,
    pub group_id: u32,
    /// Nodes of the step and this node's position among them.
    pub node_count: u32,
    pub node_id: u32,
    pub node_name: *const c_char,
    /// Tasks of the whole step.
    pub total_tasks: u32,
    /// Global ids of the tasks launched on this node, in local order.
    pub global_task_ids: *const u32,
    pub n_global_task_ids: usize,
    pub cpus_per_task: u16,
    /// `CPU_BIND_*` bits as requested.
    pub cpu_bind_type: u32,
    /// `--cpu-bind` map or mask list; NULL reads as empty.
    pub cpu_bind: *const c_char,
    pub task_dist: u32,
    pub plane_size: u16,
    pub ntasks_per_board: u16,
    pub ntasks_per_socket: u16,
    pub ntasks_per_core: u16,
    /// `--threads-per-core`; 0 when not given.
    pub threads_per_core: u16,
    pub overcommit: bool,
    /// This node's cores in the step and in the job (the credential's core
    /// bitmaps, this node's slice; bit = core index).
    pub step_cores: swasm_bitmap,
    pub job_cores: swasm_bitmap,
    /// The node's shape from the credential; threads from the node's config.
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core_conf: u16,
    pub cpus_conf: u16,
    /// `--core-spec` of the job.
    pub has_job_core_spec: bool,
    pub job_core_spec: u16,
    pub mem_bind_type: u32,
    pub mem_bind: *const c_char,
    /// The step's environment.
    pub env: *const swasm_key_value,
    pub n_env: usize,
    /// Interactive or external-launcher step.
    pub interactive: bool,
}

impl swasm_launch_request {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self) -> Result<LaunchRequest, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(LaunchRequest {
                job_id: self.job_id,
                step_id: self.step_id,
                user_id: self.user_id,
                group_id: self.group_id,
                node_count: self.node_count,
                node_id: self.node_id,
                node_name: text(self.node_name),
                total_tasks: self.total_tasks,
                global_task_ids: cvt::slice(
                    self.global_task_ids,
                    self.n_global_task_ids,
                    "request.global_task_ids",
                )?
                .to_vec(),
                cpus_per_task: self.cpus_per_task,
                cpu_bind_type: self.cpu_bind_type,
                cpu_bind: text(self.cpu_bind),
                task_dist: self.task_dist,
                plane_size: self.plane_size,
                ntasks_per_board: self.ntasks_per_board,
                ntasks_per_socket: self.ntasks_per_socket,
                ntasks_per_core: self.ntasks_per_core,
                threads_per_core: self.threads_per_core,
                overcommit: self.overcommit,
                step_cores: self.step_cores.read("request.step_cores")?,
                job_cores: self.job_cores.read("request.job_cores")?,
                sockets: self.sockets,
                cores_per_socket: self.cores_per_socket,
                threads_per_core_conf: self.threads_per_core_conf,
                cpus_conf: self.cpus_conf,
                job_core_spec: opt(self.has_job_core_spec, self.job_core_spec),
                mem_bind_type: self.mem_bind_type,
                mem_bind: text(self.mem_bind),
                env: list(self.env, self.n_env, "request.env", |kv| Ok(kv.read()))?,
                interactive: self.interactive,
            })
        }
    }
}

/// A batch job request (`batch_job_launch_msg_t`, what binding needs).
#[repr(C)]
pub struct swasm_batch_request {
    pub job_id: u32,
    pub user_id: u32,
    pub node_name: *const c_char,
    /// This node's cores in the job (bit = core index).
    pub job_cores: swasm_bitmap,
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core_conf: u16,
    pub cpus_conf: u16,
    pub cpu_bind_type: u32,
    pub cpu_bind: *const c_char,
}

impl swasm_batch_request {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self) -> Result<BatchRequest, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(BatchRequest {
                job_id: self.job_id,
                user_id: self.user_id,
                node_name: text(self.node_name),
                job_cores: self.job_cores.read("request.job_cores")?,
                sockets: self.sockets,
                cores_per_socket: self.cores_per_socket,
                threads_per_core_conf: self.threads_per_core_conf,
                cpus_conf: self.cpus_conf,
                cpu_bind_type: self.cpu_bind_type,
                cpu_bind: text(self.cpu_bind),
            })
        }
    }
}

/// An environment variable a plugin sets, owned by the library.
#[repr(C)]
pub struct swasm_env_var {
    pub key: *mut c_char,
    pub value: *mut c_char,
}

/// The binding a task plugin decided on, owned by the library: the shim
/// writes `cpu_bind_type` and `cpu_bind` back into the request, prints
/// `messages` to the step's stderr (verbose mode) and sets `env` in each
/// task. Free with [`swasm_cpu_binding_free`].
#[repr(C)]
pub struct swasm_cpu_binding {
    pub cpu_bind_type: u32,
    pub cpu_bind: *mut c_char,
    pub messages: *mut *mut c_char,
    pub n_messages: usize,
    pub env: *mut swasm_env_var,
    pub n_env: usize,
}

impl From<CpuBinding> for swasm_cpu_binding {
    fn from(b: CpuBinding) -> Self {
        let (messages, n_messages) = owned(b.messages.iter().map(|m| c_string(m)).collect());
        let (env, n_env) = owned(
            b.env
                .iter()
                .map(|kv| swasm_env_var {
                    key: c_string(&kv.key),
                    value: c_string(&kv.value),
                })
                .collect(),
        );
        swasm_cpu_binding {
            cpu_bind_type: b.cpu_bind_type,
            cpu_bind: c_string(&b.cpu_bind),
            messages,
            n_messages,
            env,
            n_env,
        }
    }
}

/// Frees what a binding holds and zeroes it; does nothing for NULL.
///
/// # Safety
/// `binding` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_cpu_binding_free(binding: *mut swasm_cpu_binding) {
    // SAFETY: as the caller promised.
    let Some(b) = (unsafe { binding.as_mut() }) else {
        return;
    };
    // SAFETY: every string and array came from `c_string`/`owned`.
    unsafe {
        cvt::free_text(b.cpu_bind);
        for m in take(b.messages, b.n_messages) {
            cvt::free_text(m);
        }
        for kv in take(b.env, b.n_env) {
            cvt::free_text(kv.key);
            cvt::free_text(kv.value);
        }
    }
    b.cpu_bind_type = 0;
    b.cpu_bind = std::ptr::null_mut();
    b.messages = std::ptr::null_mut();
    b.n_messages = 0;
    b.env = std::ptr::null_mut();
    b.n_env = 0;
}

/// Opens the task slot `slot` of `host` (NULL: `[plugins.task]`, or the
/// only `task.<name>` slot).
///
/// Cheap, as `swasm_priority_open`: safe in slurmd's `init()`, which runs
/// before slurmd daemonizes. The plugin is loaded at the first call (or
/// [`swasm_task_load`]), so call nothing else on the handle before the
/// daemon has forked. Returns NULL with `error` set on failure. Close with
/// [`swasm_task_close`].
///
/// # Safety
/// `host` is NULL or an open host; `slot` NULL or a NUL-terminated string;
/// `error` NULL or an initialised `swasm_error`.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_open(
    host: *const swasm_host,
    slot: *const c_char,
    error: *mut swasm_error,
) -> *mut swasm_task_plugin {
    // SAFETY: as the caller promised.
    unsafe { kind::open(host, slot, error, "swasm_task_open", swasm_task_plugin) }
}

/// Closes a task handle without calling `fini`. Does nothing for NULL.
///
/// # Safety
/// `plugin` is NULL or an open handle, not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_close(plugin: *mut swasm_task_plugin) {
    // SAFETY: as the caller promised.
    unsafe { kind::close(plugin) }
}

/// Loads the plugin now (see `swasm_priority_load`; the same failures, for
/// the task kind).
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_load(
    plugin: *const swasm_task_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::load(plugin, error, "swasm_task_load") }
}

/// Fills `out` with what the plugin says of itself (loading it first).
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_identity(
    plugin: *const swasm_task_plugin,
    out: *mut swasm_plugin_identity,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::identity(plugin, out, error, "swasm_task_identity") }
}

/// The plugin's `init`; every other contract function fails until an
/// `init` has succeeded.
///
/// # Safety
/// `plugin` is NULL or an open handle; `config` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_init(
    plugin: *const swasm_task_plugin,
    config: *const swasm_task_config,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_init", |p| {
            let config = record(config, "swasm_task_init: config")?;
            let config = TaskConfig {
                cluster: config.cluster.read()?,
                node_name: text(config.node_name),
            };
            Ok(p.init(&config)?)
        })
    }
}

/// Reloads the slot's component from the host configuration file, read
/// again: when the slot's table names another component (or its `.wasm`
/// holds other bytes), the new one serves from the next call, the replaced
/// one running beside it for `probation_calls` calls (100 by default) and
/// taking back over, answering the call, if the new one faults. A reload
/// that cannot be made (the file unreadable or wrong, the component of
/// another kind or contract, or unable to start from the serving one's
/// state) fails and the serving component goes on. `*replaced` (when not
/// NULL) is set to whether the component changed.
///
/// # Safety
/// `plugin` is NULL or an open handle; `replaced` NULL or valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_reload(
    plugin: *const swasm_task_plugin,
    replaced: *mut bool,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::reload(plugin, replaced, error, "swasm_task_reload") }
}

/// The plugin's `fini`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_fini(
    plugin: *const swasm_task_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { with_plugin(plugin, error, "swasm_task_fini", |p| Ok(p.fini()?)) }
}

/// `task_p_slurmd_batch_request`: the binding of a batch script. On
/// success `*out` holds it (free with [`swasm_cpu_binding_free`]); on
/// failure `*out` is left as it was.
///
/// # Safety
/// `plugin` is NULL or an open handle; `request` valid; `out` valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_slurmd_batch_request(
    plugin: *const swasm_task_plugin,
    request: *const swasm_batch_request,
    out: *mut swasm_cpu_binding,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_slurmd_batch_request", |p| {
            let request = record(request, "swasm_task_slurmd_batch_request: request")?.read()?;
            if out.is_null() {
                return Err(Failure::new("swasm_task_slurmd_batch_request: out is NULL"));
            }
            put(out, p.slurmd_batch_request(&request)?.into(), "out")
        })
    }
}

/// `task_p_slurmd_launch_request`: the step's binding on this node
/// (task/affinity's `lllp_distribution`). On success `*out` holds it (free
/// with [`swasm_cpu_binding_free`]). Plugin errors keep their code
/// (`ESLURMD_CPU_BIND_ERROR`, `ESLURMD_CPU_LAYOUT_ERROR`).
///
/// # Safety
/// `plugin` is NULL or an open handle; `request` valid; `out` valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_slurmd_launch_request(
    plugin: *const swasm_task_plugin,
    request: *const swasm_launch_request,
    out: *mut swasm_cpu_binding,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_slurmd_launch_request", |p| {
            let request = record(request, "swasm_task_slurmd_launch_request: request")?.read()?;
            if out.is_null() {
                return Err(Failure::new(
                    "swasm_task_slurmd_launch_request: out is NULL",
                ));
            }
            put(out, p.slurmd_launch_request(&request)?.into(), "out")
        })
    }
}

/// `task_p_slurmd_reserve_resources` (seed API; not in 22.05).
///
/// # Safety
/// `plugin` is NULL or an open handle; `request` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_slurmd_reserve_resources(
    plugin: *const swasm_task_plugin,
    request: *const swasm_launch_request,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_slurmd_reserve_resources", |p| {
            let request =
                record(request, "swasm_task_slurmd_reserve_resources: request")?.read()?;
            Ok(p.slurmd_reserve_resources(&request)?)
        })
    }
}

/// `task_p_slurmd_suspend_job`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_slurmd_suspend_job(
    plugin: *const swasm_task_plugin,
    job_id: u32,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_slurmd_suspend_job", |p| {
            Ok(p.slurmd_suspend_job(job_id)?)
        })
    }
}

/// `task_p_slurmd_resume_job`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_slurmd_resume_job(
    plugin: *const swasm_task_plugin,
    job_id: u32,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_slurmd_resume_job", |p| {
            Ok(p.slurmd_resume_job(job_id)?)
        })
    }
}

/// `task_p_slurmd_release_resources` (seed API): the job ended on this
/// node; whatever the plugin answers, the job's step cgroups are released
/// when it holds the `cpuset` grant.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_slurmd_release_resources(
    plugin: *const swasm_task_plugin,
    job_id: u32,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_slurmd_release_resources", |p| {
            Ok(p.slurmd_release_resources(job_id)?)
        })
    }
}

/// `task_p_pre_setuid`: in slurmstepd, before privileges are dropped.
///
/// # Safety
/// `plugin` is NULL or an open handle; `step` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_pre_setuid(
    plugin: *const swasm_task_plugin,
    step: *const swasm_step,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_pre_setuid", |p| {
            let step = record(step, "swasm_task_pre_setuid: step")?.read()?;
            Ok(p.pre_setuid(&step)?)
        })
    }
}

/// The body of the functions taking a step and one of its tasks.
///
/// # Safety
/// As those functions.
unsafe fn step_task(
    plugin: *const swasm_task_plugin,
    step: *const swasm_step,
    task: *const swasm_task,
    error: *mut swasm_error,
    function: &str,
    call: impl FnOnce(&TaskPlugin, &Step, &Task) -> Result<(), CallError>,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, function, |p| {
            let step = record(step, &format!("{function}: step"))?.read()?;
            let task = record(task, &format!("{function}: task"))?.read();
            Ok(call(p, &step, &task)?)
        })
    }
}

/// `task_p_pre_launch_priv` (22.05: `task_p_set_affinity`): privileged,
/// per task, in slurmstepd's parent after the fork and before the child
/// execs; task/affinity binds the task (`task.pid`) through `cpuset` here.
/// The plugin may bind only the step's task pids, to the step's cores.
///
/// # Safety
/// `plugin` is NULL or an open handle; `step` and `task` valid; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_pre_launch_priv(
    plugin: *const swasm_task_plugin,
    step: *const swasm_step,
    task: *const swasm_task,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        step_task(
            plugin,
            step,
            task,
            error,
            "swasm_task_pre_launch_priv",
            TaskPlugin::pre_launch_priv,
        )
    }
}

/// `task_p_pre_launch`: per task, in the forked task just before exec, as
/// the job's user. Keep wasm out of the child where possible: a runaway
/// plugin there is stopped by fuel and (the runtime restarts the epoch
/// ticker in a new process) by its deadline.
///
/// # Safety
/// `plugin` is NULL or an open handle; `step` and `task` valid; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_pre_launch(
    plugin: *const swasm_task_plugin,
    step: *const swasm_step,
    task: *const swasm_task,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        step_task(
            plugin,
            step,
            task,
            error,
            "swasm_task_pre_launch",
            TaskPlugin::pre_launch,
        )
    }
}

/// `task_p_post_term`: a task ended.
///
/// # Safety
/// `plugin` is NULL or an open handle; `step` and `task` valid; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_post_term(
    plugin: *const swasm_task_plugin,
    step: *const swasm_step,
    task: *const swasm_task,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        step_task(
            plugin,
            step,
            task,
            error,
            "swasm_task_post_term",
            TaskPlugin::post_term,
        )
    }
}

/// `task_p_post_step`: every task of the step ended; the step's cgroups are
/// released afterwards whatever the plugin answers.
///
/// # Safety
/// `plugin` is NULL or an open handle; `step` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_post_step(
    plugin: *const swasm_task_plugin,
    step: *const swasm_step,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_post_step", |p| {
            let step = record(step, "swasm_task_post_step: step")?.read()?;
            Ok(p.post_step(&step)?)
        })
    }
}

/// `task_p_add_pid`: a process joined the step (slurmstepd's message
/// thread, e.g. pam_slurm_adopt).
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_add_pid(
    plugin: *const swasm_task_plugin,
    pid: u32,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { with_plugin(plugin, error, "swasm_task_add_pid", |p| Ok(p.add_pid(pid)?)) }
}

/// `task_p_update_mem_limit` (26.05): new memory limits of the step, MB.
///
/// # Safety
/// `plugin` is NULL or an open handle; `step` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_task_update_mem_limit(
    plugin: *const swasm_task_plugin,
    step: *const swasm_step,
    job_mem: u64,
    step_mem: u64,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_task_update_mem_limit", |p| {
            let step = record(step, "swasm_task_update_mem_limit: step")?.read()?;
            Ok(p.update_mem_limit(&step, job_mem, step_mem)?)
        })
    }
}
