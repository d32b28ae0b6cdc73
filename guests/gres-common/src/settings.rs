//! The settings gres/gpu and gres/mps read at `init`.

use slurm_wasm_sdk::gres::GresConfig;
use slurm_wasm_sdk::Error;

use crate::conf::EnvVendors;

/// `AutoDetect=` values Slurm 22.05 knows (`nvidia`, `nrt` and `full` came
/// later and are refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoDetect {
    Off,
    Nvml,
    Rsmi,
    OneApi,
}

impl AutoDetect {
    /// Parses `AutoDetect=`; none means off.
    pub fn parse(value: Option<&str>) -> Result<Self, Error> {
        let Some(value) = value else {
            return Ok(AutoDetect::Off);
        };
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "off" => Ok(AutoDetect::Off),
            "nvml" => Ok(AutoDetect::Nvml),
            "rsmi" => Ok(AutoDetect::Rsmi),
            "oneapi" => Ok(AutoDetect::OneApi),
            other => Err(Error::invalid(format!(
                "gres.conf: AutoDetect={other} is not supported (expected nvml, rsmi, oneapi or off)"
            ))),
        }
    }

    /// The vendor variables the detector's GPUs get when gres.conf gives no
    /// env flag (nvml → CUDA, rsmi → ROCR, oneapi → ZE); none when off.
    pub fn env_vendors(self) -> Option<EnvVendors> {
        match self {
            AutoDetect::Off => None,
            AutoDetect::Nvml => Some(EnvVendors::NVIDIA),
            AutoDetect::Rsmi => Some(EnvVendors::AMD),
            AutoDetect::OneApi => Some(EnvVendors::INTEL),
        }
    }

    /// The name as written in gres.conf.
    pub fn name(self) -> &'static str {
        match self {
            AutoDetect::Off => "off",
            AutoDetect::Nvml => "nvml",
            AutoDetect::Rsmi => "rsmi",
            AutoDetect::OneApi => "oneapi",
        }
    }
}

/// What a gres plugin keeps from `init`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `GresTypes` (the plugin's own name when empty).
    pub gres_types: Vec<String>,
    pub auto_detect: AutoDetect,
    /// Environment lists use local (0-based, per step) ids: `TaskPlugin`
    /// contains `cgroup` and cgroup.conf says `ConstrainDevices=yes`. The
    /// host passes cgroup.conf keys through `cluster.raw`; without them the
    /// ids are global, as on a node without device constraint.
    pub use_local: bool,
    /// `GpuFreqDef` (22.05 default `high,memory=high`).
    pub gpu_freq_def: String,
}

/// Slurm 22.05's built-in `GpuFreqDef`.
pub const DEFAULT_GPU_FREQ_DEF: &str = "high,memory=high";

impl Settings {
    /// Reads the settings for the plugin managing `name`. Fails on an
    /// `AutoDetect` value Slurm 22.05 does not know.
    pub fn from_config(name: &str, config: &GresConfig) -> Result<Self, Error> {
        let raw = |key: &str| {
            config
                .cluster
                .raw
                .iter()
                .rev()
                .find(|kv| kv.key.eq_ignore_ascii_case(key))
                .map(|kv| kv.value.trim().to_string())
        };
        let mut gres_types: Vec<String> = config
            .cluster
            .gres_types
            .iter()
            .flat_map(|t| t.split(','))
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect();
        if gres_types.is_empty() {
            gres_types.push(name.to_string());
        }
        let cgroup_tasks =
            raw("TaskPlugin").is_some_and(|t| t.to_ascii_lowercase().contains("cgroup"));
        let constrain = raw("ConstrainDevices").is_some_and(|v| v.eq_ignore_ascii_case("yes"));
        Ok(Settings {
            gres_types,
            auto_detect: AutoDetect::parse(config.auto_detect.as_deref())?,
            use_local: cgroup_tasks && constrain,
            gpu_freq_def: raw("GpuFreqDef").unwrap_or_else(|| DEFAULT_GPU_FREQ_DEF.to_string()),
        })
    }

    /// Settings of a node without slurm.conf extras (tests, benchmarks).
    pub fn plain(name: &str) -> Self {
        Settings {
            gres_types: vec![name.to_string()],
            auto_detect: AutoDetect::Off,
            use_local: false,
            gpu_freq_def: DEFAULT_GPU_FREQ_DEF.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Slurm 22.05 knows nvml, rsmi, oneapi and off (Slurm 22.05.8 src/common/gres.c `_handle_autodetect_flags`).
    #[test]
    fn autodetect_values() {
        assert_eq!(AutoDetect::parse(Some("NVML")).unwrap(), AutoDetect::Nvml);
        assert_eq!(AutoDetect::parse(None).unwrap(), AutoDetect::Off);
        assert_eq!(AutoDetect::Rsmi.env_vendors(), Some(EnvVendors::AMD));
        assert_eq!(
            AutoDetect::parse(Some("nrt")).unwrap_err().message,
            "gres.conf: AutoDetect=nrt is not supported (expected nvml, rsmi, oneapi or off)"
        );
    }
}
