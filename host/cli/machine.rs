//! This machine as Slurm would see it: one node named by the short host
//! name, shaped as the kernel reports its CPUs, in a one-partition cluster
//! whose every other setting is slurm.conf's default. `task run` and
//! `gres detect` place what they do on it.

use anyhow::{anyhow, Context};
use slurm::setup::records::Cluster;
use slurm::slurm_conf;
use slurm_wasm_host::Services;

/// The partition of the cluster.
pub const PARTITION: &str = "local";

/// The cluster of this machine, with `gpus` GPUs (`Gres=gpu:N`, and
/// `GresTypes=gpu`) when it has any.
///
/// # Errors
///
/// The CPU layout cannot be read (`services`' topology), or the host name
/// is not a valid Slurm node name.
pub fn cluster(services: &Services, gpus: u64) -> anyhow::Result<Cluster> {
    let layout = services
        .topology
        .cpu_layout()
        .map_err(|e| anyhow!("reading this machine's CPU layout: {e:?}"))?;
    let name = hostname();
    let (gres_types, gres) = if gpus > 0 {
        ("GresTypes=gpu\n".to_owned(), format!(" Gres=gpu:{gpus}"))
    } else {
        (String::new(), String::new())
    };
    let text = format!(
        "{gres_types}NodeName={name} CPUs={} Sockets={} CoresPerSocket={} ThreadsPerCore={}{gres}\n\
         PartitionName={PARTITION} Nodes={name} Default=YES\n",
        layout.block_map.len(),
        layout.sockets,
        layout.cores_per_socket,
        layout.threads_per_core,
    );
    let conf = slurm_conf::parse_str(&text, std::path::Path::new("(this machine)"))
        .with_context(|| format!("describing this machine as a Slurm node `{name}`"))?;
    Ok(Cluster::from_slurm_conf(&conf)?)
}

/// The short host name (Slurm names nodes by it), `localhost` when the
/// kernel gives none.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .and_then(|h| h.trim().split('.').next().map(str::to_owned))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
