//! The CLI's subcommands.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use serde_json::json;
use slurm::setup::records::Cluster;
use slurm::setup::{self, PlannedPlugin};
use slurm::slurm_conf::{self, SlurmConf};
use slurm_wasm_host::conformance::{self, Report};
use slurm_wasm_host::host_config::{self, HostConfig};
use slurm_wasm_host::inspect::{inspect as inspect_plugin, Inspection};
use slurm_wasm_host::kinds::priority::PriorityConfig;
use slurm_wasm_host::kinds::task::{CpuBinding, TaskConfig};
use slurm_wasm_host::plugin_log::escape;
use slurm_wasm_host::types::PluginIdentity;
use slurm_wasm_host::{
    fixtures, Host, HostOptions, PluginKind, PluginSettings, PluginSource, PriorityPlugin,
    Services, TaskPlugin,
};

/// `x.y.z` of a Slurm version number.
fn slurm_version(v: u32) -> String {
    format!("{}.{:02}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff)
}

fn identity_json(identity: &PluginIdentity) -> serde_json::Value {
    json!({
        "plugin_type": identity.plugin_type,
        "plugin_name": identity.plugin_name,
        "plugin_version": identity.plugin_version,
        "slurm_version": slurm_version(identity.plugin_version),
        "plugin_id": identity.plugin_id,
        "contract_version": identity.contract_version,
        "required_capabilities": identity.required_capabilities.iter().map(|c| slurm_wasm_host::capability_name(*c)).collect::<Vec<_>>(),
    })
}

pub fn inspect(source: PluginSource, as_json: bool) -> anyhow::Result<ExitCode> {
    let host = host(Services::default())?;
    let inspection = inspect_plugin(&host, &source)?;
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&inspection_json(&inspection))?
        );
    } else {
        print_inspection(&inspection);
    }
    Ok(if inspection.identity.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn inspection_json(i: &Inspection) -> serde_json::Value {
    json!({
        "source": i.source,
        "size_bytes": i.size_bytes,
        "kind": i.slot.map(|s| s.name()),
        "identity": i.identity.as_ref().map(identity_json),
        "describe_error": i.describe_error,
        "capabilities": i.capabilities,
        "imports": i.imports,
        "exports": i.exports,
    })
}

fn print_inspection(i: &Inspection) {
    println!("{} ({} bytes)", i.source, i.size_bytes);
    println!(
        "  kind:              {}",
        i.slot
            .map_or("none (not a slurm:plugin component)", |s| s.name())
    );
    match &i.identity {
        Some(id) => {
            // What a plugin says of itself is printed escaped: a type or
            // name with control characters cannot rewrite the terminal.
            println!("  type:              {}", escape(&id.plugin_type));
            println!("  name:              {}", escape(&id.plugin_name));
            println!(
                "  version:           {} (Slurm {})",
                id.plugin_version,
                slurm_version(id.plugin_version)
            );
            if let Some(plugin_id) = id.plugin_id {
                println!("  plugin id:         {plugin_id}");
            }
            println!(
                "  contract:          slurm:plugin@{}",
                escape(&id.contract_version)
            );
            let required: Vec<_> = id
                .required_capabilities
                .iter()
                .map(|c| slurm_wasm_host::capability_name(*c))
                .collect();
            println!(
                "  requires:          {}",
                if required.is_empty() {
                    "nothing beyond log and clock".into()
                } else {
                    required.join(", ")
                }
            );
        }
        None => println!(
            "  describe:          failed: {}",
            escape(i.describe_error.as_deref().unwrap_or("unknown"))
        ),
    }
    if i.capabilities.is_empty() {
        println!("  capabilities used: none");
    } else {
        println!("  capabilities used: {}", i.capabilities.join(", "));
    }
    println!("  imports:");
    for name in &i.imports {
        println!("    {name}");
    }
    println!("  exports:");
    for name in &i.exports {
        println!("    {name}");
    }
}

pub fn check(source: PluginSource, as_json: bool) -> anyhow::Result<ExitCode> {
    let report = conformance::check_on(&host(conformance::suite_services())?, &source)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report_json(&report))?);
    } else {
        print_report(&report);
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn report_json(r: &Report) -> serde_json::Value {
    json!({
        "source": r.source,
        "kind": r.slot.map(|s| s.name()),
        "identity": r.identity.as_ref().map(identity_json),
        "passed": r.passed(),
        "checks": r.checks.iter().map(|c| json!({"check": c.name, "passed": c.outcome.is_ok(), "error": c.outcome.as_ref().err()})).collect::<Vec<_>>(),
    })
}

fn print_report(r: &Report) {
    let ty = r
        .identity
        .as_ref()
        .map_or("unknown plugin", |i| i.plugin_type.as_str());
    println!("conformance of {ty} ({})", r.source);
    for c in &r.checks {
        match &c.outcome {
            Ok(()) => println!("  ok    {}", c.name),
            Err(e) => println!("  FAIL  {}: {e}", c.name),
        }
    }
    println!(
        "{} passed, {} failed",
        r.checks.len() - r.failures(),
        r.failures()
    );
}

/// The user's cache directory for compiled components:
/// `$XDG_CACHE_HOME/slurm-wasm`, else `~/.cache/slurm-wasm`.
fn default_cache_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("slurm-wasm"));
    }
    let home =
        std::env::var_os("HOME").context("neither --cache-dir, XDG_CACHE_HOME nor HOME is set")?;
    Ok(PathBuf::from(home).join(".cache").join("slurm-wasm"))
}

/// The compiled-component cache the commands use, so that no command
/// compiles the same component twice: `SLURM_WASM_CACHE_DIR` (empty or
/// `off`: none), else the user's cache directory; none when neither is
/// known.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("SLURM_WASM_CACHE_DIR") {
        Some(dir) if dir.is_empty() || dir == "off" => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => default_cache_dir().ok(),
    }
}

/// [`cache_dir`] when a host can use it; otherwise none, with a warning
/// naming why (owned by another user, writable by others, not creatable),
/// and components compile in memory.
pub fn usable_cache_dir() -> Option<PathBuf> {
    let dir = cache_dir()?;
    match Host::new(HostOptions {
        cache_dir: Some(dir.clone()),
        ..slurm_wasm_bundled::host_options()
    }) {
        Ok(_) => Some(dir),
        Err(e) => {
            tracing::warn!("compiled-component cache not used: {e:#}");
            None
        }
    }
}

/// A host for a command, with `services` and the compiled-component cache
/// of [`usable_cache_dir`].
pub fn host(services: Services) -> anyhow::Result<Host> {
    Host::new(HostOptions {
        services,
        cache_dir: usable_cache_dir(),
        ..slurm_wasm_bundled::host_options()
    })
}

pub fn compile(files: &[PathBuf], cache_dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let cache_dir = match cache_dir {
        Some(dir) => dir,
        None => default_cache_dir()?,
    };
    let host = Host::new(HostOptions {
        cache_dir: Some(cache_dir.clone()),
        ..slurm_wasm_bundled::host_options()
    })?;
    for file in files {
        let inspection = inspect_plugin(&host, &PluginSource::File(file.clone()))?;
        let ty = inspection
            .identity
            .as_ref()
            .map_or("not a plugin", |i| i.plugin_type.as_str());
        println!(
            "compiled {} ({ty}) into {}",
            file.display(),
            cache_dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Nice values of the demo's jobs: Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_set`'s FIFO example.
const DEMO_NICE: [i32; 5] = [0, 0, 100, 0, -100];

/// The plugins the demo runs and the `init` configurations they get.
struct DemoPlugins {
    /// The planned priority and task slots; empty for the built-in demo.
    plan: Vec<PlannedPlugin>,
    priority: PriorityPlugin,
    priority_config: PriorityConfig,
    /// Task plugins in Slurm's stacking order, with their slot names.
    tasks: Vec<(String, TaskPlugin)>,
    task_config: TaskConfig,
}

/// The bundled priority/basic and task/none on fixture records, or, with a
/// host configuration or a slurm.conf, the priority and task plugins they
/// choose, initialised from the slurm.conf's records.
fn demo_plugins(
    host: &Host,
    config: &HostConfig,
    slurm: Option<&SlurmConf>,
) -> anyhow::Result<DemoPlugins> {
    let cluster = slurm.map(Cluster::from_slurm_conf).transpose()?;
    let plan: Vec<PlannedPlugin> = setup::plan(config, slurm)?
        .into_iter()
        .filter(|p| matches!(p.slot, PluginKind::Priority | PluginKind::Task))
        .collect();
    let loaded = setup::load_all(host, &plan)?;
    let priority = match loaded.priority {
        Some(priority) => priority,
        None => PriorityPlugin::load(
            host,
            &PluginSource::Bundled("priority/basic".into()),
            PluginSettings::default(),
        )?,
    };
    let tasks = if loaded.task.is_empty() {
        vec![(
            "task".to_owned(),
            TaskPlugin::load(
                host,
                &PluginSource::Bundled("task/none".into()),
                PluginSettings::default(),
            )?,
        )]
    } else {
        loaded.task
    };
    let (priority_config, task_config) = match &cluster {
        Some(cluster) => {
            let node_name = cluster.nodes.first().map_or("n1", |n| n.name.as_str());
            (cluster.priority_config(), cluster.task_config(node_name))
        }
        None => (fixtures::priority_config(), fixtures::task_config()),
    };
    Ok(DemoPlugins {
        plan,
        priority,
        priority_config,
        tasks,
        task_config,
    })
}

/// A plugin source as the demo prints it.
fn source_name(source: &PluginSource) -> String {
    match source {
        PluginSource::File(path) => path.display().to_string(),
        PluginSource::Bytes { name, .. } => name.clone(),
        PluginSource::Bundled(plugin_type) => plugin_type.clone(),
    }
}

/// `slurm-wasm demo`: priorities for five jobs, then a step launch through
/// the task plugins. With `config_path` or `slurm_conf_path`, the plugins
/// come from [`setup::plan`] and the lines that chose them are printed.
pub fn demo(
    as_json: bool,
    config_path: Option<&Path>,
    slurm_conf_path: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let config = config_path
        .map(host_config::load)
        .transpose()?
        .unwrap_or_default();
    let slurm_path = slurm_conf_path
        .map(Path::to_path_buf)
        .or_else(|| config.slurm_conf.clone());
    let slurm = slurm_path.as_deref().map(slurm_conf::load).transpose()?;
    let configured = config_path.is_some() || slurm.is_some();
    let host = match &config.cache_dir {
        Some(dir) => Host::new(HostOptions {
            cache_dir: Some(dir.clone()),
            ..slurm_wasm_bundled::host_options()
        })?,
        None => host(Services::default())?,
    };
    let plugins = demo_plugins(&host, &config, slurm.as_ref())?;
    let priority = &plugins.priority;
    priority.init(&plugins.priority_config)?;
    let mut lowest = 0xffff_0000u32;
    let mut rows = Vec::new();
    for (i, nice) in DEMO_NICE.iter().enumerate() {
        let mut job = fixtures::job(i as u32 + 1);
        job.details.nice = *nice;
        let p = priority.assign(&mut lowest, &job)?;
        rows.push((job.job_id, *nice, p));
    }
    let node_name = plugins.task_config.node_name.clone();
    let mut launch = fixtures::launch_request(6, 4, 4);
    launch.node_name.clone_from(&node_name);
    let mut step = fixtures::step(6, 0);
    step.node_name.clone_from(&node_name);
    step.task_pids = (0..4).map(|t| 10_000 + t).collect();
    let mut bindings = Vec::new();
    for (_, task) in &plugins.tasks {
        task.init(&plugins.task_config)?;
        let binding = task.slurmd_launch_request(&launch)?;
        for t in 0..4 {
            task.pre_launch(&step, &fixtures::task(t, 10_000 + t))?;
        }
        bindings.push((task.identity(), binding));
    }
    let settings = priority.settings();
    let limits = &settings.limits;
    if as_json {
        let task_json = |(id, binding): &(PluginIdentity, CpuBinding)| json!({"plugin": identity_json(id), "cpu_bind_type": binding.cpu_bind_type, "cpu_bind": binding.cpu_bind});
        let mut out = json!({
            "priority": {"plugin": identity_json(&priority.identity()), "jobs": rows.iter().map(|(id, nice, p)| json!({"job_id": id, "nice": nice, "priority": p})).collect::<Vec<_>>()},
            "task": task_json(&bindings[0]),
            "limits": {"fuel_per_call": limits.fuel_per_call, "deadline_ms": limits.deadline.as_millis() as u64, "memory_bytes": limits.memory_bytes},
        });
        if configured {
            out["plugins"] = plugins
                .plan
                .iter()
                .map(|p| json!({"slot": p.slot_name, "plugin": source_name(&p.source), "chosen_by": p.chosen_by.to_string()}))
                .collect();
            out["tasks"] = bindings.iter().map(task_json).collect();
        }
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "slurm-wasm demo: Slurm's bundled plugins running as sandboxed WebAssembly components"
    );
    if configured {
        println!("plugins chosen by the configuration:");
        for p in &plugins.plan {
            println!(
                "  {:<14} {:<20} ({})",
                p.slot_name,
                source_name(&p.source),
                p.chosen_by
            );
        }
        println!();
    }
    let granted: Vec<String> = settings.grants.iter().map(|c| c.to_string()).collect();
    println!(
        "each call limited to {} fuel, {} ms, {} MiB of memory; capabilities granted: {}\n",
        limits.fuel_per_call,
        limits.deadline.as_millis(),
        limits.memory_bytes >> 20,
        granted.join(", ")
    );
    let id = priority.identity();
    println!(
        "{} ({}, built for Slurm {}): five jobs submitted in order",
        id.plugin_type,
        id.plugin_name,
        slurm_version(id.plugin_version)
    );
    println!("  {:>6} {:>6} {:>12}", "JOBID", "NICE", "PRIORITY");
    for (job_id, nice, p) in &rows {
        println!("  {job_id:>6} {nice:>6} {p:>12}");
    }
    if id.plugin_type == "priority/basic" {
        println!("  (FIFO: each job one below the last; nice shifts a job without disturbing the order of later ones)");
    }
    for (id, binding) in &bindings {
        println!(
            "\n{} ({}): step 6.0, 4 tasks on {node_name}",
            id.plugin_type, id.plugin_name
        );
        let none = id.plugin_type == "task/none";
        println!(
            "  slurmd_launch_request -> cpu_bind_type={:#x} cpu_bind={:?}{}",
            binding.cpu_bind_type,
            binding.cpu_bind,
            if none {
                " (task/none leaves the binding as requested)"
            } else {
                ""
            }
        );
        println!(
            "  pre_launch for tasks 0-3: ok{}",
            if none {
                ", no process bound (task/none binds nothing)"
            } else {
                ""
            }
        );
    }
    Ok(ExitCode::SUCCESS)
}
