//! `slurm-wasm task run`: launch N real processes of a command on this
//! machine, bound the way a task plugin (task/affinity by default) decides,
//! as `srun -n N` would on a node allocated whole.
//!
//! The CLI plays srun, slurmctld and slurmstepd: it parses `--cpu-bind` and
//! `--distribution` like srun, reads this machine's layout, describes it as
//! a one-node cluster holding a job of this process's user on the whole
//! node, allocates the step in it as slurmctld does (`slurm::step`: the
//! whole node, or with `--exact`/`-c` the cores the step needs), builds the
//! launch request slurmd would get, asks the plugin for the step's binding
//! (`slurmd-launch-request`), then starts each task
//! stopped (`task exec-stopped`), lets the plugin bind it through the
//! `cpuset` capability (`pre-launch-priv`, as 22.05 binds), and continues it
//! into the command. The plugin runs in the sandbox with only the grants
//! given by `--grant`.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitCode};

use anyhow::{anyhow, bail, Context};
use serde_json::json;
use slurm::job_request::JobRequest;
use slurm::step::{self, JobSteps, Launch, StepRequest};
use slurm_wasm_host::kinds::task::CpuBinding;
use slurm_wasm_host::ranges;
use slurm_wasm_host::types::Task;
use slurm_wasm_host::{Capability, Grants, PluginSettings, PluginSource, Services, TaskPlugin};
use srun::cpu_bind::{self as bind_type, Parsed};
use srun::task_dist as dist;

/// What `task run` was asked.
pub struct RunRequest {
    pub ntasks: u32,
    pub cpus_per_task: Option<u16>,
    pub exact: bool,
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
    let cluster = crate::machine::cluster(&services, 0)?;
    let host = crate::commands::host(services)?;
    let settings = PluginSettings {
        grants: grants(&request.grants)?,
        ..PluginSettings::default()
    };
    let plugin = TaskPlugin::load(&host, &request.plugin, settings)?;
    let node = &cluster.nodes[0];
    plugin.init(&cluster.task_config(&node.name))?;

    // The job: this node, allocated whole, to this process's user.
    let resources = cluster.whole_node(node.index);
    let mut job = JobRequest::parse(&["-N1", "--exclusive", "-n", &request.ntasks.to_string()])
        .and_then(|r| r.prepare(JOB_ID, &cluster, Some(crate::machine::PARTITION)))?
        .started(resources.clone(), 0);
    // SAFETY: getuid and getgid cannot fail.
    (job.user_id, job.group_id) = unsafe { (libc::getuid(), libc::getgid()) };
    // The step, as slurmctld allocates it for srun's options.
    let mut srun_args = vec!["-n".to_owned(), request.ntasks.to_string()];
    if let Some(c) = request.cpus_per_task {
        srun_args.extend(["-c".to_owned(), c.to_string()]);
    }
    if request.exact {
        srun_args.push("--exact".to_owned());
    }
    if let Some(m) = request.distribution.as_deref() {
        if distribution.is_some_and(|d| d.plane_size.is_none()) {
            srun_args.extend(["-m".to_owned(), m.to_owned()]);
        }
    }
    let mut steps = JobSteps::new(
        &job,
        &resources,
        &cluster.nodes,
        cluster.config.select_type_parameters,
    );
    let step_request = StepRequest::from_srun(&srun_args, 1, request.ntasks)?;
    let allocated = steps
        .create(&step_request, None, None)
        .map_err(|e| anyhow!("the step cannot start: {e}"))?
        .clone();
    let launch_options = Launch {
        user_id: job.user_id,
        group_id: job.group_id,
        cpu_bind_type: bind.flags,
        cpu_bind: bind.list,
        env: Vec::new(),
    };
    let mut launch = steps
        .launch_request(&allocated, node, &launch_options)
        .expect("the step runs on this node");
    // srun that makes its own allocation hands slurmd the distribution as
    // given, unknown when none was (slurmd logs `dist 8192`:
    // tests/fixtures/anchor/task), plane size included.
    launch.task_dist = distribution.as_ref().map_or(dist::UNKNOWN, |d| d.task_dist);
    launch.plane_size = distribution
        .and_then(|d| d.plane_size)
        .map_or(0, |p| u16::try_from(p).unwrap_or(u16::MAX));
    let binding = plugin.slurmd_launch_request(&launch)?;
    let mut step = step::node_step(&launch, &binding);
    let ntasks = launch.global_task_ids.len() as u32;

    let mut children = Vec::new();
    for local_id in 0..ntasks {
        match spawn_stopped(local_id, ntasks, &binding, &request.command) {
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
