//! `slurm-wasm gres`: what the gres/gpu plugin sees on this machine and the
//! environment it gives an allocation.
//!
//! - `gres detect` runs gres/gpu's `node-config-load` with `AutoDetect=nvml`
//!   and no gres.conf records, the plugin granted `gpu`, and prints the
//!   gres.conf lines it produced (`Name=gpu Type=... File=/dev/nvidiaN
//!   Cores=... Links=...`). The GPUs come from NVML, from the host
//!   configuration's `gpu` provider, or from `--inventory`.
//!   Exit 0: GPUs listed; 1: no GPU found or the back-end is not available
//!   (the reason is printed); 2: bad usage or input.
//! - `gres env` loads a cluster's slurm.conf and gres.conf, runs
//!   `node-config-load` on one node and prints the environment edits of a
//!   described allocation: for the job's batch script (default), a step
//!   (`--step`), one task (`--task`) or the prolog/epilog (`--prolog`).
//!   With `--mps N`, the allocation is N MPS shares on the devices, served
//!   by gres/mps (gres/gpu then runs with no allocation and `protect-env`,
//!   as Slurm does when a sharing GRES is present). Exit 0: printed; 1: a
//!   plugin refused; 2: bad usage or input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use slurm::job_request::JobRequest;
use slurm::setup::records::Cluster;
use slurm::{gres_conf, slurm_conf};
use slurm_wasm_host::capabilities::gpu::{GpuProvider, GpuSource, InventoryGpu, NvmlGpu};
use slurm_wasm_host::kinds::gres::{
    EnvChange, EnvFlags, GresConfRecord, GresConfig, NodeAllocation, NodeHardware,
};
use slurm_wasm_host::ranges;
use slurm_wasm_host::types::{Bitmap, CapabilityError, GresAllocation, GresCount};
use slurm_wasm_host::{
    host_config, Capability, Grants, GresPlugin, Host, PluginSettings, PluginSource, Services,
};

/// The subcommands of `slurm-wasm gres`.
#[derive(clap::Subcommand)]
pub enum GresCommand {
    /// Print the gres.conf lines gres/gpu would produce on this machine with
    /// AutoDetect=nvml. Exit 0: GPUs found; 1: no GPU found or NVML (or the
    /// configured GPU provider) not available.
    Detect {
        /// A GPU inventory (TOML) to detect from instead of NVML.
        #[arg(long, value_name = "FILE")]
        inventory: Option<PathBuf>,
        /// Take the node's shape from this slurm.conf (with --node) instead
        /// of this machine's CPU topology.
        #[arg(long, value_name = "FILE", requires = "node")]
        slurm_conf: Option<PathBuf>,
        /// The node of --slurm-conf.
        #[arg(long, value_name = "NAME", requires = "slurm_conf")]
        node: Option<String>,
        #[command(flatten)]
        plugins: GresPlugins,
    },
    /// Show the environment gres/gpu (or gres/mps) gives a described
    /// allocation on a node.
    Env {
        /// The cluster's gres.conf.
        #[arg(long, value_name = "FILE")]
        gres_conf: PathBuf,
        /// The cluster's slurm.conf (default: slurm.conf beside gres.conf).
        #[arg(long, value_name = "FILE")]
        slurm_conf: Option<PathBuf>,
        /// The node (default: the first node gres.conf gives GPUs).
        #[arg(long, value_name = "NAME")]
        node: Option<String>,
        /// Allocated device indices of the node, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        devices: Vec<u32>,
        /// Allocate N MPS shares on the devices instead of whole GPUs.
        #[arg(long, value_name = "N")]
        mps: Option<u64>,
        /// The environment of a step on the node.
        #[arg(long, conflicts_with_all = ["task", "prolog"])]
        step: bool,
        /// The environment of one task whose usable devices are these
        /// indices (comma-separated).
        #[arg(
            long,
            value_delimiter = ',',
            value_name = "DEVICES",
            conflicts_with = "prolog"
        )]
        task: Option<Vec<u32>>,
        /// The environment of the job's prolog and epilog.
        #[arg(long)]
        prolog: bool,
        #[command(flatten)]
        plugins: GresPlugins,
    },
}

/// The gres plugins to run: bundled unless files are given.
#[derive(clap::Args)]
pub struct GresPlugins {
    /// A gres/gpu component instead of the bundled one.
    #[arg(long, value_name = "FILE")]
    gpu_plugin: Option<PathBuf>,
    /// A gres/mps component instead of the bundled one.
    #[arg(long, value_name = "FILE")]
    mps_plugin: Option<PathBuf>,
}

impl GresPlugins {
    fn gpu(&self) -> PluginSource {
        source(&self.gpu_plugin, "gres/gpu")
    }

    fn mps(&self) -> PluginSource {
        source(&self.mps_plugin, "gres/mps")
    }
}

fn source(file: &Option<PathBuf>, bundled: &str) -> PluginSource {
    match file {
        Some(path) => PluginSource::File(path.clone()),
        None => PluginSource::Bundled(bundled.into()),
    }
}

/// Runs a `gres` subcommand; `config` is the global `--config`.
pub fn run(command: GresCommand, config: Option<&Path>) -> anyhow::Result<ExitCode> {
    match command {
        GresCommand::Detect {
            inventory,
            slurm_conf,
            node,
            plugins,
        } => detect(
            inventory.as_deref(),
            config,
            slurm_conf.as_deref().zip(node.as_deref()),
            &plugins,
        ),
        GresCommand::Env {
            gres_conf,
            slurm_conf,
            node,
            devices,
            mps,
            step,
            task,
            prolog,
            plugins,
        } => {
            let scope = match (step, task, prolog) {
                (true, _, _) => Scope::Step,
                (_, Some(usable), _) => Scope::Task(usable),
                (_, _, true) => Scope::Prolog,
                _ => Scope::Job,
            };
            env(&EnvRequest {
                gres_conf,
                slurm_conf,
                node,
                devices,
                mps,
                scope,
                plugins,
            })
        }
    }
}

/// The GPU provider of `detect`: the inventory, else the host
/// configuration's `gpu` provider when it names one, else NVML.
fn detect_provider(
    inventory: Option<&Path>,
    config: Option<&Path>,
) -> anyhow::Result<(Arc<dyn GpuProvider>, String)> {
    if let Some(path) = inventory {
        let gpus = InventoryGpu::load(path)?;
        return Ok((Arc::new(gpus), format!("GPU inventory {}", path.display())));
    }
    if let Some(path) = config {
        let config = host_config::load(path)?;
        if config.gpu != GpuSource::None {
            let what = format!("GPU provider {}", config.gpu);
            return Ok((config.gpu.provider()?, what));
        }
    }
    Ok((Arc::new(NvmlGpu::default()), "NVML".into()))
}

fn detect(
    inventory: Option<&Path>,
    config: Option<&Path>,
    shape_from: Option<(&Path, &str)>,
    plugins: &GresPlugins,
) -> anyhow::Result<ExitCode> {
    let (gpu, what) = detect_provider(inventory, config)?;
    let count = match gpu.devices() {
        Ok(devices) if devices.is_empty() => {
            println!("no GPU found ({what} reports none)");
            return Ok(ExitCode::from(1));
        }
        Ok(devices) => devices.len() as u64,
        Err(CapabilityError::Unavailable(why)) => {
            let why = why.strip_prefix("no NVML: ").unwrap_or(&why);
            println!("{what} not available: {why}");
            return Ok(ExitCode::from(1));
        }
        Err(e) => bail!("{what}: {e:?}"),
    };
    let services = Services {
        gpu,
        ..Services::default()
    };
    let (cluster, node) = match shape_from {
        Some((slurm_path, node)) => {
            let conf = slurm_conf::load(slurm_path)?;
            let cluster = Cluster::from_slurm_conf(&conf)?;
            if cluster.node_hardware(node).is_none() {
                bail!("{}: no node {node}", slurm_path.display());
            }
            (cluster, node.to_owned())
        }
        None => {
            let cluster = crate::machine::cluster(&services, count)?;
            let node = cluster.nodes[0].name.clone();
            (cluster, node)
        }
    };
    let hardware = cluster.node_hardware(&node).expect("checked above");
    let host = crate::commands::host(services)?;
    let settings = PluginSettings {
        grants: Grants::none().with(Capability::Gpu),
        ..PluginSettings::default()
    };
    let plugin = GresPlugin::load(&host, &plugins.gpu(), settings)?;
    // `AutoDetect=nvml` for gres/gpu: the plugin is loaded as a gpu GRES.
    let mut config = cluster.config.clone();
    if !config.gres_types.iter().any(|t| t == "gpu") {
        config.gres_types.push("gpu".into());
    }
    plugin.init(&GresConfig {
        cluster: config,
        auto_detect: Some("nvml".into()),
    })?;
    let result = plugin.node_config_load(&[], &hardware)?;
    for warning in &result.warnings {
        eprintln!("slurm-wasm: {warning}");
    }
    let lines: Vec<String> = result
        .records
        .iter()
        .filter(|r| r.name == "gpu")
        .map(conf_line)
        .collect();
    if lines.is_empty() {
        println!("no GPU found (gres/gpu produced no gpu records)");
        return Ok(ExitCode::from(1));
    }
    println!(
        "# gres/gpu with AutoDetect=nvml, {what}, node {}",
        hardware.name
    );
    for line in lines {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A record as a gres.conf line.
fn conf_line(record: &GresConfRecord) -> String {
    let mut line = format!("Name={}", record.name);
    if let Some(t) = &record.type_name {
        line.push_str(&format!(" Type={t}"));
    }
    match record.files.as_slice() {
        [] => line.push_str(&format!(" Count={}", record.count)),
        [file] => line.push_str(&format!(" File={file}")),
        files if record.count == 1 => line.push_str(&format!(" MultipleFiles={}", files.join(","))),
        files => line.push_str(&format!(" File={}", files.join(","))),
    }
    if let Some(cores) = &record.cores {
        line.push_str(&format!(" Cores={}", ranges::format(cores.ones())));
    }
    if let Some(links) = &record.links {
        line.push_str(&format!(" Links={links}"));
    }
    if !record.flags.is_empty() {
        line.push_str(&format!(" Flags={}", record.flags.join(",")));
    }
    line
}

/// Which environment `env` shows.
enum Scope {
    Job,
    Step,
    Task(Vec<u32>),
    Prolog,
}

struct EnvRequest {
    gres_conf: PathBuf,
    slurm_conf: Option<PathBuf>,
    node: Option<String>,
    devices: Vec<u32>,
    mps: Option<u64>,
    scope: Scope,
    plugins: GresPlugins,
}

/// A loaded, initialised gres plugin that has run `node-config-load`.
fn node_plugin(
    host: &Host,
    source: &PluginSource,
    config: &GresConfig,
    records: &[GresConfRecord],
    hardware: &NodeHardware,
) -> anyhow::Result<GresPlugin> {
    let plugin = GresPlugin::load(host, source, PluginSettings::default())?;
    plugin.init(config)?;
    let result = plugin.node_config_load(records, hardware)?;
    for warning in &result.warnings {
        eprintln!("slurm-wasm: {warning}");
    }
    Ok(plugin)
}

fn env(request: &EnvRequest) -> anyhow::Result<ExitCode> {
    let slurm_path = request
        .slurm_conf
        .clone()
        .unwrap_or_else(|| request.gres_conf.with_file_name("slurm.conf"));
    let conf = slurm_conf::load(&slurm_path)?;
    let gres = gres_conf::find(&slurm_path, Some(&request.gres_conf))?;
    let cluster = Cluster::with_gres_conf(&conf, gres.as_ref())?;
    let node = match &request.node {
        Some(name) => cluster
            .nodes
            .iter()
            .find(|n| &n.name == name)
            .ok_or_else(|| anyhow!("{}: no node {name}", slurm_path.display()))?,
        None => cluster
            .nodes
            .iter()
            .zip(&cluster.gres)
            .find(|(_, g)| g.records.iter().any(|r| r.name == "gpu"))
            .map(|(n, _)| n)
            .ok_or_else(|| {
                anyhow!(
                    "{}: no node has gpu records; name one with --node",
                    request.gres_conf.display()
                )
            })?,
    };
    let hardware = cluster
        .node_hardware(&node.name)
        .context("the node is in the table")?;
    let records = cluster
        .gres
        .get(node.index as usize)
        .map(|g| g.records.clone())
        .unwrap_or_default();
    let config = cluster.gres_config_for(&node.name);
    let device_count = gres_device_count(&node.gres, "gpu");
    if let Some(bad) = request.devices.iter().find(|&&d| d >= device_count) {
        bail!(
            "--devices: node {} has {device_count} GPUs (indices 0-{}), not device {bad}",
            node.name,
            device_count.saturating_sub(1)
        );
    }
    if let Scope::Task(usable) = &request.scope {
        if let Some(bad) = usable.iter().find(|&&d| d >= device_count) {
            bail!("--task: node {} has no device {bad}", node.name);
        }
    }
    let host = crate::commands::host(Services::default())?;

    let gpus = node_plugin(&host, &request.plugins.gpu(), &config, &records, &hardware)?;
    let mps = request
        .mps
        .map(|_| node_plugin(&host, &request.plugins.mps(), &config, &records, &hardware))
        .transpose()?;

    let devices = Bitmap::with_ones(device_count, request.devices.iter().copied());
    let allocation = match request.mps {
        None => GresAllocation {
            name: "gpu".into(),
            type_name: None,
            count: request.devices.len() as u64,
            devices: Some(devices.clone()),
            per_device: Vec::new(),
        },
        Some(shares) => GresAllocation {
            name: "mps".into(),
            type_name: None,
            count: shares,
            devices: Some(devices.clone()),
            per_device: spread(shares, request.devices.len()),
        },
    };
    // gres/gpu holds the allocation, or, for MPS, runs without one and
    // leaves the variables to gres/mps (Slurm's protect-env).
    let (gpu_allocation, gpu_flags) = match &mps {
        None => (Some(allocation.clone()), EnvFlags::empty()),
        Some(_) => (None, EnvFlags::PROTECT_ENV),
    };
    let mut changes = Vec::new();
    match &request.scope {
        Scope::Job => {
            changes.extend(gpus.job_set_env(gpu_allocation.as_ref(), gpu_flags)?);
            if let Some(mps) = &mps {
                changes.extend(mps.job_set_env(Some(&allocation), EnvFlags::empty())?);
            }
        }
        Scope::Step => {
            changes.extend(gpus.step_set_env(gpu_allocation.as_ref(), gpu_flags)?);
            if let Some(mps) = &mps {
                changes.extend(mps.step_set_env(Some(&allocation), EnvFlags::empty())?);
            }
        }
        Scope::Task(usable) => {
            let usable = Some(Bitmap::with_ones(device_count, usable.iter().copied()));
            let for_gpu = gpu_allocation.map(|allocation| NodeAllocation {
                allocation,
                usable: usable.clone(),
            });
            changes.extend(gpus.task_set_env(for_gpu.as_ref(), gpu_flags)?);
            if let Some(mps) = &mps {
                let own = NodeAllocation {
                    allocation: allocation.clone(),
                    usable,
                };
                changes.extend(mps.task_set_env(Some(&own), EnvFlags::empty())?);
            }
        }
        Scope::Prolog => {
            let job = prolog_job(&cluster, node.index, &allocation)?;
            let plugin = mps.as_ref().unwrap_or(&gpus);
            if let Some(info) = plugin.epilog_build_env(&job)? {
                changes.extend(plugin.epilog_set_env(info, 0)?);
                plugin.drop_epilog_info(info)?;
            }
        }
    }
    for change in changes {
        match change {
            EnvChange::Set(kv) => println!("{}={}", kv.key, kv.value),
            EnvChange::Unset(name) => println!("unset {name}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The node's configured count of GRES `name` (`Gres=gpu:4`), types summed.
fn gres_device_count(gres: &[GresCount], name: &str) -> u32 {
    let total: u64 = gres
        .iter()
        .filter(|g| g.name == name)
        .map(|g| g.count)
        .sum();
    u32::try_from(total).unwrap_or(u32::MAX)
}

/// `shares` spread over `devices` the way Slurm spreads MPS counts:
/// each takes `remaining / devices left`.
fn spread(shares: u64, devices: usize) -> Vec<u64> {
    let mut remaining = shares;
    (0..devices as u64)
        .rev()
        .map(|left| {
            let share = remaining / (left + 1);
            remaining -= share;
            share
        })
        .collect()
}

/// A running job holding `allocation` on node `node_index` only, as the
/// prolog sees it.
fn prolog_job(
    cluster: &Cluster,
    node_index: u32,
    allocation: &GresAllocation,
) -> anyhow::Result<slurm_wasm_host::types::Job> {
    let node = &cluster.nodes[node_index as usize];
    let partition = node
        .partitions
        .first()
        .map(|&p| cluster.partitions[p as usize].name.clone())
        .ok_or_else(|| anyhow!("node {} is in no partition: no job runs on it", node.name))?;
    let mut resources = cluster.whole_node(node_index);
    resources.per_node[0].gres = vec![allocation.clone()];
    let prepared = JobRequest::parse(&["-w", &node.name, "--exclusive", "-p", &partition])
        .and_then(|r| r.prepare(1, cluster, None))?;
    Ok(prepared.started(resources, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mps_spread_matches_slurm() {
        // _distribute_count (gres/common/gres_c_s.c): 301 over 2 is 150 then
        // 151.
        assert_eq!(spread(301, 2), [150, 151]);
        assert_eq!(spread(100, 1), [100]);
    }

    #[test]
    fn records_print_as_gres_conf_lines() {
        let record = GresConfRecord {
            origin: "x".into(),
            name: "gpu".into(),
            type_name: Some("nvidia_a100".into()),
            files: vec!["/dev/nvidia1".into()],
            count: 1,
            cores: Some(Bitmap::with_ones(8, [4, 5, 6, 7])),
            links: Some("2,-1".into()),
            flags: vec!["nvidia_gpu_env".into()],
            unique_id: None,
        };
        assert_eq!(
            conf_line(&record),
            "Name=gpu Type=nvidia_a100 File=/dev/nvidia1 Cores=4-7 Links=2,-1 Flags=nvidia_gpu_env"
        );
    }
}
