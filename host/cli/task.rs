//! `slurm-wasm task run`: launch N real processes of a command on this
//! machine, bound the way a task plugin (task/affinity by default) decides,
//! as `srun -n N` would on a node allocated whole.
//!
//! The CLI plays srun and slurmstepd: it parses `--cpu-bind` and
//! `--distribution` like srun, reads this machine's layout, asks the plugin
//! for the step's binding (`slurmd-launch-request`), then starts each task
//! stopped (`task exec-stopped`), lets the plugin bind it through the
//! `cpuset` capability (`pre-launch-priv`, as 22.05 binds), and continues it
//! into the command. The plugin runs in the sandbox with only the grants
//! given by `--grant`.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitCode};

use anyhow::{anyhow, bail, Context};
use serde_json::json;
use slurm_wasm_host::kinds::task::CpuBinding;
use slurm_wasm_host::ranges;
use slurm_wasm_host::types::Task;
use slurm_wasm_host::{
    fixtures, Capability, Grants, PluginSettings, PluginSource, Services, TaskPlugin,
};
use srun::cpu_bind::{self as bind_type, Parsed};
use srun::task_dist as dist;

/// What `task run` was asked.
pub struct RunRequest {
    pub ntasks: u32,
    pub cpus_per_task: u16,
    pub cpu_bind: Option<String>,
    pub distribution: Option<String>,
    pub plugin: PluginSource,
    pub grants: Vec<String>,
    pub json: bool,
    pub command: Vec<String>,
}

/// The job id the launched step carries (`SLURM_JOB_ID`).
const JOB_ID: u32 = 1;

fn grants(names: &[String]) -> anyhow::Result<Grants> {
    names
        .iter()
        .filter(|n| !n.is_empty() && *n != "none")
        .map(|n| n.parse::<Capability>().map_err(|e| anyhow!("--grant: {e}")))
        .collect()
}

/// Starts one task: this program in `exec-stopped` mode, which stops itself
/// until bound and then execs the command.
///
/// The task's environment is this process's, then the plugin's variables
/// (which the host checked: `SLURM_*` only, so nothing that chooses what
/// the launcher or the task runs), then the step's identity, which the
/// plugin cannot override.
fn spawn_stopped(
    local_id: u32,
    ntasks: u32,
    binding: &CpuBinding,
    command: &[String],
) -> anyhow::Result<Child> {
    let exe = std::env::current_exe().context("locating slurm-wasm for the task launcher")?;
    let mut cmd = Command::new(exe);
    cmd.args(["task", "exec-stopped", "--"]).args(command);
    for kv in &binding.env {
        cmd.env(&kv.key, &kv.value);
    }
    cmd.env("SLURM_JOB_ID", JOB_ID.to_string())
        .env("SLURM_STEP_ID", "0")
        .env("SLURM_NTASKS", ntasks.to_string())
        .env("SLURM_PROCID", local_id.to_string())
        .env("SLURM_LOCALID", local_id.to_string());
    let child = cmd.spawn().context("starting a task")?;
    wait_stopped(child.id())?;
    Ok(child)
}

/// Waits until `pid` has stopped itself (SIGSTOP), so its affinity can be
/// set before it runs the command.
fn wait_stopped(pid: u32) -> anyhow::Result<()> {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on our own child with a valid status pointer.
        let rc = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, libc::WUNTRACED) };
        if rc == pid as libc::pid_t && libc::WIFSTOPPED(status) {
            return Ok(());
        }
        if rc == pid as libc::pid_t {
            bail!("task {pid} ended before it could be bound (status {status})");
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            bail!("waiting for task {pid} to stop: {err}");
        }
    }
}

fn signal(children: &[Child], sig: libc::c_int) {
    for child in children {
        // SAFETY: signalling our own children by pid.
        unsafe { libc::kill(child.id() as libc::pid_t, sig) };
    }
}

pub fn run(request: RunRequest) -> anyhow::Result<ExitCode> {
    if request.ntasks == 0 {
        bail!("-n must be at least 1");
    }
    let bind = match request
        .cpu_bind
        .as_deref()
        .map(bind_type::parse)
        .transpose()?
    {
        Some(Parsed::Help) => {
            print!("{}", bind_type::HELP);
            return Ok(ExitCode::SUCCESS);
        }
        Some(Parsed::Bind(bind)) => bind,
        None => bind_type::CpuBind {
            flags: 0,
            list: String::new(),
        },
    };
    let distribution = request
        .distribution
        .as_deref()
        .map(dist::parse)
        .transpose()
        .map_err(|e| anyhow!(e))?;
    let services = Services::default();
    let layout = services
        .topology
        .cpu_layout()
        .map_err(|e| anyhow!("reading this machine's CPU layout: {e:?}"))?;
    let host = crate::commands::host(services)?;
    let settings = PluginSettings {
        grants: grants(&request.grants)?,
        ..PluginSettings::default()
    };
    let plugin = TaskPlugin::load(&host, &request.plugin, settings)?;
    let node_name = hostname();
    let mut config = fixtures::task_config();
    config.node_name = node_name.clone();
    plugin.init(&config)?;

    let cores = layout.sockets * layout.cores_per_socket;
    let mut launch = fixtures::launch_request(JOB_ID, request.ntasks, cores);
    launch.node_name = node_name.clone();
    launch.sockets = layout.sockets;
    launch.cores_per_socket = layout.cores_per_socket;
    launch.threads_per_core_conf = layout.threads_per_core;
    launch.cpus_conf = u16::try_from(layout.block_map.len()).unwrap_or(u16::MAX);
    launch.cpus_per_task = request.cpus_per_task;
    launch.cpu_bind_type = bind.flags;
    launch.cpu_bind = bind.list;
    launch.task_dist = distribution.as_ref().map_or(dist::UNKNOWN, |d| d.task_dist);
    launch.plane_size = distribution
        .and_then(|d| d.plane_size)
        .map_or(0, |p| u16::try_from(p).unwrap_or(u16::MAX));
    let binding = plugin.slurmd_launch_request(&launch)?;

    let mut step = fixtures::step(JOB_ID, 0);
    step.node_name = node_name;
    step.local_tasks = request.ntasks;
    step.total_tasks = request.ntasks;
    step.cpus_per_task = request.cpus_per_task;
    step.cpu_bind_type = binding.cpu_bind_type;
    step.cpu_bind = binding.cpu_bind.clone();
    step.cores = launch.step_cores.clone();

    let mut children = Vec::new();
    for local_id in 0..request.ntasks {
        match spawn_stopped(local_id, request.ntasks, &binding, &request.command) {
            Ok(child) => children.push(child),
            Err(e) => {
                signal(&children, libc::SIGKILL);
                return Err(e);
            }
        }
    }
    step.task_pids = children.iter().map(Child::id).collect();
    plugin.pre_setuid(&step)?;
    let mut report = Vec::new();
    for (local_id, child) in children.iter().enumerate() {
        let task = Task {
            local_id: local_id as u32,
            global_id: local_id as u32,
            pid: child.id(),
        };
        let bound = plugin
            .pre_launch_priv(&step, &task)
            .and_then(|()| plugin.pre_launch(&step, &task));
        if let Err(e) = bound {
            signal(&children, libc::SIGKILL);
            for mut child in children {
                let _ = child.wait();
            }
            return Err(e.into());
        }
        let cpus = host
            .services()
            .cpuset
            .get(child.id())
            .map_err(|e| anyhow!("reading task {local_id}'s CPUs: {e:?}"))?;
        report.push((local_id, child.id(), cpus));
    }
    if request.json {
        let tasks: Vec<_> = report.iter().map(|(t, pid, cpus)| json!({"task": t, "pid": pid, "cpus": cpus, "cpus_list": ranges::format(cpus.iter().copied())})).collect();
        let env: Vec<_> = binding
            .env
            .iter()
            .map(|kv| json!({"name": kv.key, "value": kv.value}))
            .collect();
        eprintln!(
            "{}",
            json!({"plugin": plugin.identity().plugin_type, "cpu_bind_type": binding.cpu_bind_type, "cpu_bind": binding.cpu_bind, "env": env, "tasks": tasks})
        );
    } else {
        eprintln!(
            "{}: cpu_bind_type={:#x} cpu_bind={:?}",
            plugin.identity().plugin_type,
            binding.cpu_bind_type,
            binding.cpu_bind
        );
        for (local_id, pid, cpus) in &report {
            eprintln!(
                "task {local_id} [{pid}]: cpus {}",
                ranges::format(cpus.iter().copied())
            );
        }
    }
    signal(&children, libc::SIGCONT);
    let mut code = 0;
    for (local_id, mut child) in children.into_iter().enumerate() {
        let status = child.wait().context("waiting for a task")?;
        let task = Task {
            local_id: local_id as u32,
            global_id: local_id as u32,
            pid: child.id(),
        };
        plugin.post_term(&step, &task)?;
        if code == 0 {
            code = status.code().unwrap_or(1);
        }
    }
    plugin.post_step(&step)?;
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The `exec-stopped` mode: stop until the launcher has bound this process,
/// then become the command (the CPU affinity survives `exec`).
pub fn exec_stopped(command: &[String]) -> anyhow::Result<ExitCode> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| anyhow!("no command to run"))?;
    // SAFETY: raising a signal on ourselves.
    unsafe { libc::raise(libc::SIGSTOP) };
    let err = Command::new(program).args(args).exec();
    Err(anyhow!("cannot run {program}: {err}"))
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "localhost".into())
}
