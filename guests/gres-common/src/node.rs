//! The GPU half of `node_config_load` both plugins run (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_node_config_load`:
//! the GPU plugin's system list merged by `_merge_system_gres_conf`, then the node's env flags
//! gathered by src/plugins/gres/common/gres_common.c `gres_common_set_env_types_on_node_flags`):
//! detection through the `gpu` capability, merge, default env flags.

use slurm_wasm_sdk::gres::NodeHardware;
use slurm_wasm_sdk::host::{self, CapabilityError};
use slurm_wasm_sdk::types::Capability;

use crate::conf::{default_env, ConfRecord};
use crate::merge::{detected_record, merge};
use crate::settings::{AutoDetect, Settings};

/// The GPUs the `gpu` capability reports, as records; none when
/// `AutoDetect` is off or detection is impossible. A missing grant or an
/// unavailable back-end is not fatal: Slurm logs that it cannot autodetect
/// and uses gres.conf alone, so a warning is added to `warnings`.
pub fn detect(
    plugin: &str,
    node: &NodeHardware,
    settings: &Settings,
    warnings: &mut Vec<String>,
) -> Option<Vec<ConfRecord>> {
    if settings.auto_detect == AutoDetect::Off {
        return None;
    }
    let name = settings.auto_detect.name();
    match host::gpu_devices() {
        Ok(gpus) => Some(
            gpus.iter()
                .enumerate()
                .map(|(i, g)| detected_record(g, i, node, settings.auto_detect))
                .collect(),
        ),
        Err(CapabilityError::Denied(Capability::Gpu)) => {
            warnings.push(format!(
                "{plugin}: configured to autodetect {name} GPUs, but the `gpu` capability is not granted \
                 to this plugin (grant it in the host configuration); using gres.conf only"
            ));
            None
        }
        Err(CapabilityError::Denied(other)) => {
            warnings.push(format!(
                "{plugin}: autodetect {name}: capability {other:?} denied; using gres.conf only"
            ));
            None
        }
        Err(CapabilityError::Unavailable(why)) | Err(CapabilityError::Failed(why)) => {
            warnings.push(format!(
                "{plugin}: configured to autodetect {name} GPUs, but detection failed: {why}; using gres.conf only"
            ));
            None
        }
    }
}

/// The node's GPU records: the configured `gpu` records of `records`,
/// merged with detected GPUs when detection answered, then given default
/// env flags (the detector's when `AutoDetect` is on, all four vendors
/// otherwise).
pub fn load_gpus(
    plugin: &str,
    records: &[ConfRecord],
    node: &NodeHardware,
    settings: &Settings,
    warnings: &mut Vec<String>,
) -> Vec<ConfRecord> {
    let configured: Vec<ConfRecord> = records
        .iter()
        .filter(|r| r.name == "gpu")
        .cloned()
        .collect();
    let mut gpus = match detect(plugin, node, settings, warnings) {
        Some(detected) => merge(&configured, detected, warnings),
        None => configured,
    };
    default_env(&mut gpus, settings.auto_detect.env_vendors());
    gpus
}
