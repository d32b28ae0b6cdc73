//! `gres/mps`: Slurm's CUDA Multi-Process Service plugin (src/plugins/gres/mps)
//! as a wasm component.
//!
//! Each GPU of the node carries a number of MPS shares; a job's shares on a
//! GPU become `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`. [`Mps`] implements every
//! entry point natively ([`GresPlugin`]); [`plugin`] exports it. It keeps
//! the trait's default `step_hardware_init` / `step_hardware_fini`, which do
//! nothing, as Slurm's gres/mps: clocks belong to gres/gpu, and MPS cannot
//! be combined with `--gpu-freq`.

mod plugin;

pub use plugin::GresMps;

use slurm_wasm_sdk::gres::{
    Device, EnvChange, EnvFlags, GresConfRecord, NodeConfigResult, NodeHardware,
};
use slurm_wasm_sdk::types::{Job, KeyValue, Step};
use slurm_wasm_sdk::{error, warn, Bitmap, Error};

use gres_common::alloc::JobCapture;
use gres_common::conf::{check_total, validate, ConfRecord, EnvVendors, RecordFlags};
use gres_common::env::{epilog_env, EnvCall};
use gres_common::merge::split;
use gres_common::node::load_gpus;
use gres_common::stepd::StepdState;
use gres_common::{build_devices, trailing_number, EpilogEnv, GresPlugin, PluginState, Settings};

/// The GRES name this plugin manages.
pub const NAME: &str = "mps";
/// `plugin_type`.
pub const PLUGIN_TYPE: &str = "gres/mps";
/// `plugin_name`.
pub const PLUGIN_NAME: &str = "Gres MPS plugin";
/// The variable carrying a job's share of its GPU.
pub const PERCENTAGE_VAR: &str = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE";

/// Spreads `total` shares over `gpus` GPUs: each gets the remaining shares
/// divided by the GPUs left (300 over 2 → 150,150; 301 → 150,151).
pub fn distribute(total: u64, gpus: usize) -> Vec<u64> {
    let mut remaining = total;
    (0..gpus)
        .map(|i| {
            let share = remaining / (gpus - i) as u64;
            remaining -= share;
            share
        })
        .collect()
}

/// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` for `count` shares of a GPU holding
/// `gpu_shares`: `max(1, floor(count × 100 / gpu_shares))`, 0 when the GPU
/// has no shares.
pub fn percentage(count: u64, gpu_shares: u64) -> u64 {
    count
        .saturating_mul(100)
        .checked_div(gpu_shares)
        .map_or(0, |p| p.max(1))
}

/// The state gres/mps keeps between calls.
#[derive(Debug, Clone)]
pub struct Mps {
    pub settings: Settings,
    /// One device per GPU (its file), in the GPUs' order.
    pub devices: Vec<Device>,
    /// `shared_info`: (GPU id = trailing digits of its file, shares).
    pub shared: Vec<(i32, u64)>,
    /// The step this node runs (`step-context`). Kept for inspection only:
    /// Slurm's plugin takes everything it needs from each call's arguments.
    pub step: Option<Step>,
}

/// `gres_p_epilog_build_env`'s capture: per node of the job, the allocated
/// GPU bitmap and share count.
#[derive(Debug, Clone)]
pub struct MpsEpilog {
    capture: JobCapture,
    shared: Vec<(i32, u64)>,
}

/// The percentage edit of `count` shares on the first GPU of `alloc`: the
/// GPU's share count is looked up by the device's `dev_num`; when it cannot
/// be found the raw count is used and an error logged, as Slurm does.
fn percentage_env(
    devices: &[Device],
    shared: &[(i32, u64)],
    alloc: Option<&Bitmap>,
    count: u64,
    flags: EnvFlags,
    out: &mut Vec<EnvChange>,
) {
    if count == 0 || alloc.is_none_or(|a| a.count() == 0) {
        if !flags.contains(EnvFlags::PROTECT_ENV) {
            out.push(EnvChange::Unset(PERCENTAGE_VAR.into()));
        }
        return;
    }
    let first = alloc.and_then(Bitmap::first);
    let id = first.map(|i| {
        devices
            .iter()
            .find(|d| d.index as usize == i)
            .map_or(i as i32, |d| d.dev_num)
    });
    let gpu_shares = id
        .and_then(|id| shared.iter().find(|(s, _)| *s == id))
        .map(|(_, shares)| *shares);
    let value = match gpu_shares {
        Some(shares) => percentage(count, shares),
        None => {
            error!(
                "{PLUGIN_TYPE}: no MPS share count known for GPU {first:?}; {PERCENTAGE_VAR} set to the raw count {count}"
            );
            count
        }
    };
    out.push(EnvChange::Set(KeyValue {
        key: PERCENTAGE_VAR.into(),
        value: value.to_string(),
    }));
}

/// The node's GPUs when `node-config-load` got no `gpu` record with a file
/// (hosts may hand each plugin only its own records): one GPU per file the
/// MPS lines name, carrying that line's Type, Cores and Links; without MPS
/// files, slurm.conf's `gpu` count of GPUs without device files (their
/// shares are then known but no device can be listed in the environment).
fn implied_gpus(mps: &[&ConfRecord], node: &NodeHardware) -> Vec<ConfRecord> {
    let from_files: Vec<ConfRecord> = mps
        .iter()
        .flat_map(|r| {
            r.files.iter().map(|f| ConfRecord {
                name: "gpu".into(),
                files: vec![f.clone()],
                count: 1,
                flags: RecordFlags {
                    env: Some(EnvVendors::NVIDIA),
                    ..RecordFlags::default()
                },
                ..(*r).clone()
            })
        })
        .collect();
    if !from_files.is_empty() {
        return from_files;
    }
    let count: u64 = node
        .configured
        .iter()
        .filter(|g| g.name.eq_ignore_ascii_case("gpu"))
        .map(|g| g.count)
        .sum();
    (0..count)
        .map(|_| ConfRecord {
            origin: format!("slurm.conf Gres=gpu:{count} of node {}", node.name),
            name: "gpu".into(),
            type_name: None,
            files: Vec::new(),
            count: 1,
            cores: None,
            links: None,
            flags: RecordFlags::default(),
            unique_id: None,
        })
        .collect()
}

impl EpilogEnv for MpsEpilog {
    /// `gres_p_epilog_set_env`: `CUDA_VISIBLE_DEVICES` and `SLURM_JOB_GPUS`
    /// with global ids and the node's percentage; nothing where the node
    /// holds no MPS; an error past the job's nodes.
    fn set_env(&self, node_index: u32) -> Result<Vec<EnvChange>, Error> {
        let Some((alloc, count)) = self.capture.node(node_index)? else {
            return Ok(Vec::new());
        };
        let devices = &self.capture.devices;
        let mut out = epilog_env(devices, alloc, EnvVendors::NVIDIA);
        if !out.is_empty() && count > 0 {
            percentage_env(
                devices,
                &self.shared,
                Some(alloc),
                count,
                EnvFlags::PROTECT_ENV,
                &mut out,
            );
        }
        Ok(out)
    }
}

impl GresPlugin for Mps {
    const NAME: &'static str = NAME;
    const PLUGIN_TYPE: &'static str = PLUGIN_TYPE;
    const PLUGIN_NAME: &'static str = PLUGIN_NAME;
    type Epilog = MpsEpilog;

    fn state() -> &'static PluginState<Self> {
        static STATE: PluginState<Mps> = PluginState::new();
        &STATE
    }

    /// A plugin after `init`, with no GPUs loaded yet.
    fn new(settings: Settings) -> Self {
        Mps {
            settings,
            devices: Vec::new(),
            shared: Vec::new(),
            step: None,
        }
    }

    /// `gres_p_node_config_load` for MPS (Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c `gres_p_node_config_load`, which runs
    /// src/plugins/gres/common/gres_c_s.c `gres_c_s_init_share_devices`): the node's GPUs (merged
    /// with detected ones like gres/gpu does) split per file; one MPS
    /// record per GPU whose count comes from a `File=` MPS line of that GPU,
    /// from MPS lines without `File` spread over the GPUs (of their Type),
    /// or, without any MPS line, from slurm.conf's `mps` count spread over
    /// all GPUs; GPUs left out get 0. Errors: MPS lines with and without
    /// `File` mixed, MPS shares but no GPU, the total below slurm.conf's.
    /// MPS lines matching no GPU are discarded with an error line in the
    /// warnings. When `records` hold no `gpu` record with a file, the GPUs
    /// are implied by the MPS lines or slurm.conf (see `implied_gpus`).
    /// Returns the GPU records given, the MPS records, then the node's other
    /// records.
    fn node_config_load(
        &mut self,
        records: &[GresConfRecord],
        node: &NodeHardware,
    ) -> Result<NodeConfigResult, Error> {
        self.devices.clear();
        self.shared.clear();
        let conf = validate(records, node, &self.settings)?;
        let mut warnings = Vec::new();
        let mut gpus: Vec<ConfRecord> = split(
            &load_gpus(PLUGIN_TYPE, &conf, node, &self.settings, &mut warnings)
                .into_iter()
                .filter(|g| !g.files.is_empty())
                .collect::<Vec<_>>(),
        );
        let mps: Vec<&ConfRecord> = conf.iter().filter(|r| r.name == NAME).collect();
        let gpus_given = !gpus.is_empty();
        if !gpus_given {
            gpus = implied_gpus(&mps, node);
        }
        let with_file = mps.iter().find(|r| !r.files.is_empty());
        let without_file = mps.iter().find(|r| r.files.is_empty());
        if let (Some(a), Some(b)) = (with_file, without_file) {
            return Err(Error::invalid(format!(
                "{}: MPS lines with File= ({}) and without File= ({}) cannot be mixed on node {}",
                b.origin, a.origin, b.origin, node.name
            )));
        }
        let mut shares = vec![0u64; gpus.len()];
        let mut origins: Vec<Option<String>> = vec![None; gpus.len()];
        let configured: u64 = node
            .configured
            .iter()
            .filter(|g| g.name.eq_ignore_ascii_case(NAME))
            .map(|g| g.count)
            .sum();
        if mps.is_empty() && configured > 0 {
            if gpus.is_empty() {
                return Err(Error::invalid(format!(
                    "{PLUGIN_TYPE}: node {} has mps:{configured} in slurm.conf Gres= but no GPU to share",
                    node.name
                )));
            }
            shares = distribute(configured, gpus.len());
        }
        for r in &mps {
            if r.files.is_empty() {
                let targets: Vec<usize> = (0..gpus.len())
                    .filter(|i| {
                        r.type_name.as_ref().is_none_or(|t| {
                            gpus[*i]
                                .type_name
                                .as_deref()
                                .is_some_and(|g| g.eq_ignore_ascii_case(t))
                        })
                    })
                    .collect();
                if targets.is_empty() {
                    warnings.push(format!(
                        "error: {}: MPS Count={} has no matching GPU on node {}; discarded",
                        r.origin, r.count, node.name
                    ));
                    continue;
                }
                for (i, share) in targets.iter().zip(distribute(r.count, targets.len())) {
                    shares[*i] += share;
                    origins[*i].get_or_insert_with(|| r.origin.clone());
                }
            } else {
                for file in &r.files {
                    match gpus.iter().position(|g| g.file() == Some(file.as_str())) {
                        Some(i) => {
                            shares[i] = r.count / r.files.len() as u64;
                            origins[i] = Some(r.origin.clone());
                        }
                        None => warnings.push(format!(
                            "error: {}: MPS File={file} matches no GPU on node {}; discarded",
                            r.origin, node.name
                        )),
                    }
                }
            }
        }
        let all_sharing = mps.iter().any(|r| r.flags.all_sharing);
        let mps_records: Vec<ConfRecord> = gpus
            .iter()
            .zip(&shares)
            .zip(&origins)
            .map(|((g, share), origin)| ConfRecord {
                origin: origin.clone().unwrap_or_else(|| g.origin.clone()),
                name: NAME.into(),
                type_name: g.type_name.clone(),
                files: g.files.clone(),
                count: *share,
                cores: g.cores.clone(),
                links: g.links.clone(),
                flags: RecordFlags {
                    env: Some(EnvVendors::NVIDIA),
                    one_sharing: !all_sharing,
                    all_sharing,
                    ..RecordFlags::default()
                },
                unique_id: g.unique_id.clone(),
            })
            .collect();
        check_total(NAME, &mps_records, node, &mut warnings)?;
        self.devices = build_devices(&mps_records, NAME)?;
        self.shared = gpus
            .iter()
            .enumerate()
            .zip(&shares)
            .map(|((i, g), s)| {
                let id = g.file().and_then(trailing_number).unwrap_or(i as i32);
                (id, *s)
            })
            .collect();
        for w in &warnings {
            warn!("{w}");
        }
        let given: &[ConfRecord] = if gpus_given { &gpus } else { &[] };
        let records = given
            .iter()
            .chain(&mps_records)
            .chain(conf.iter().filter(|r| r.name != NAME && r.name != "gpu"))
            .map(ConfRecord::to_record)
            .collect();
        Ok(NodeConfigResult { records, warnings })
    }

    /// `job_set_env`, `step_set_env`, `task_set_env` (Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c `_set_env`): the GPU
    /// lists with the NVML flag only (`CUDA_VISIBLE_DEVICES`, plus
    /// `SLURM_JOB_GPUS`/`SLURM_STEP_GPUS` and `SLURM_GPUS_ON_NODE`), then
    /// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` for the allocated shares.
    fn set_env(&self, call: EnvCall<'_>) -> Result<Vec<EnvChange>, Error> {
        let (mut out, alloc) = call.gpu_env(
            PLUGIN_TYPE,
            &self.devices,
            self.settings.use_local,
            EnvVendors::NVIDIA,
        )?;
        percentage_env(
            &self.devices,
            &self.shared,
            alloc.as_ref(),
            call.allocation.map_or(0, |a| a.count),
            call.flags,
            &mut out,
        );
        Ok(out)
    }

    /// `send_stepd`: the device list and the shared table.
    fn send_stepd(&self) -> Vec<u8> {
        StepdState {
            devices: self.devices.clone(),
            vendors: EnvVendors::NVIDIA,
            shared: self.shared.clone(),
        }
        .encode()
    }

    /// `recv_stepd`: replaces the device list and shared table; malformed
    /// bytes are refused and leave the state unchanged.
    fn recv_stepd(&mut self, data: &[u8]) -> Result<(), Error> {
        let state = StepdState::decode(data)?;
        self.devices = state.devices;
        self.shared = state.shared;
        Ok(())
    }

    /// `gres_p_epilog_build_env`: the job's per-node GPU bitmaps and shares.
    fn epilog_build_env(&self, job: &Job) -> Result<Option<MpsEpilog>, Error> {
        let capture = JobCapture::new(job, NAME, PLUGIN_TYPE, &self.devices)?;
        Ok(capture.map(|capture| MpsEpilog {
            capture,
            shared: self.shared.clone(),
        }))
    }

    fn devices(&self) -> &[Device] {
        &self.devices
    }

    fn step_context(&mut self, step: Step) {
        self.step = Some(step);
    }
}

#[cfg(test)]
mod tests;
