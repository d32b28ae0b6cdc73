//! GPUs described in a TOML file: [`InventoryGpu`].
//!
//! ```toml
//! # OS CPUs of the machine: the length of the affinity bitmaps. Default:
//! # one more than the highest id in any cpu_affinity.
//! cpus = 16
//!
//! [[gpu]]                              # index 0, 1, ... in file order
//! uuid = "GPU-0c6a8a5e-6c4a-4b2d-9d1e-3f6f0f7a1b00"
//! name = "NVIDIA A100-SXM4-40GB"
//! memory_mb = 40960
//! minor = 0                            # /dev/nvidia0
//! pci_bus_id = "00000000:07:00.0"
//! links = [0, 12]                      # NVLinks to each GPU by index; default none
//! cpu_affinity = [0, 1, 2, 3]          # OS CPU ids close to the GPU; default none
//! application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }  # the defaults
//! [[gpu.clocks]]                       # supported clocks
//! memory_mhz = 1215
//! graphics_mhz = [1410, 1395, 1095]
//! ```
//!
//! Application clocks live in memory: `set` changes them (to a supported
//! pair when the file lists clocks), `reset` restores `application_clocks`.
//!
//! # Failure modes
//!
//! [`InventoryError`] names the file and says what was expected: TOML
//! errors with toml's line and column; an unknown key; an empty `uuid` or
//! `name`; a `uuid` or `minor` given twice; `links` not one entry per GPU
//! or with links to the GPU itself; a CPU id at or beyond `cpus`; a memory
//! clock listed twice; default application clocks the GPU does not support.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{no_device, Clocks, GpuDevice, GpuProvider};
use crate::bindings::types::CapabilityError;
use crate::fixtures::bitmap;

/// Why an inventory was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct InventoryError {
    /// The inventory file.
    pub path: PathBuf,
    /// What was wrong and what was expected.
    pub message: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInventory {
    cpus: Option<u32>,
    #[serde(default)]
    gpu: Vec<RawGpu>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGpu {
    uuid: String,
    name: String,
    memory_mb: u64,
    minor: u32,
    pci_bus_id: String,
    #[serde(default)]
    links: Vec<u32>,
    #[serde(default)]
    cpu_affinity: Vec<u32>,
    application_clocks: Option<RawClocks>,
    #[serde(default)]
    clocks: Vec<RawClockTable>,
}

#[derive(serde::Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct RawClocks {
    memory_mhz: u32,
    graphics_mhz: u32,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClockTable {
    memory_mhz: u32,
    graphics_mhz: Vec<u32>,
}

/// One GPU of the inventory.
#[derive(Debug, Clone)]
struct InventoryDevice {
    device: GpuDevice,
    /// (memory clock, graphics clocks), both highest first.
    clocks: Vec<(u32, Vec<u32>)>,
    defaults: Option<Clocks>,
}

/// GPUs described in a TOML file (see the [module documentation](self)).
#[derive(Debug)]
pub struct InventoryGpu {
    devices: Vec<InventoryDevice>,
    current: Mutex<Vec<Option<Clocks>>>,
}

impl InventoryGpu {
    /// Reads the inventory at `path`.
    ///
    /// # Errors
    ///
    /// An [`InventoryError`] when the file cannot be read or is malformed
    /// (see the [module documentation](self)).
    pub fn load(path: &Path) -> Result<Self, InventoryError> {
        let text = std::fs::read_to_string(path).map_err(|e| InventoryError {
            path: path.to_path_buf(),
            message: format!("cannot read the GPU inventory: {e}"),
        })?;
        Self::parse_str(&text, path)
    }

    /// Parses `text` as the inventory file `path`.
    ///
    /// # Errors
    ///
    /// An [`InventoryError`] naming `path` when the text is malformed.
    pub fn parse_str(text: &str, path: &Path) -> Result<Self, InventoryError> {
        let error = |message: String| InventoryError {
            path: path.to_path_buf(),
            message,
        };
        let raw: RawInventory = toml::from_str(text).map_err(|e| error(e.to_string()))?;
        let count = raw.gpu.len();
        let cpus = match raw.cpus {
            Some(n) => n,
            None => raw
                .gpu
                .iter()
                .flat_map(|g| g.cpu_affinity.iter())
                .max()
                .map_or(0, |&id| id.saturating_add(1)),
        };
        let mut devices: Vec<InventoryDevice> = Vec::with_capacity(count);
        for (i, gpu) in raw.gpu.into_iter().enumerate() {
            let at = |message: String| error(format!("gpu[{i}]: {message}"));
            if gpu.uuid.is_empty() || gpu.name.is_empty() {
                return Err(at("uuid and name must not be empty".into()));
            }
            if let Some(j) = devices.iter().position(|d| d.device.uuid == gpu.uuid) {
                return Err(at(format!("uuid {} is also gpu[{j}]'s", gpu.uuid)));
            }
            if let Some(j) = devices
                .iter()
                .position(|d| d.device.minor_number == gpu.minor)
            {
                return Err(at(format!("minor {} is also gpu[{j}]'s", gpu.minor)));
            }
            let links = if gpu.links.is_empty() {
                vec![0; count]
            } else if gpu.links.len() != count {
                return Err(at(format!(
                    "links has {} entries; expected one per GPU ({count})",
                    gpu.links.len()
                )));
            } else if gpu.links[i] != 0 {
                return Err(at(format!(
                    "links[{i}] is {}; a GPU has no links to itself (expected 0)",
                    gpu.links[i]
                )));
            } else {
                gpu.links
            };
            if let Some(bad) = gpu.cpu_affinity.iter().find(|&&c| c >= cpus) {
                return Err(at(format!(
                    "cpu_affinity: CPU {bad} is outside the machine's {cpus} CPUs"
                )));
            }
            let mut clocks: Vec<(u32, Vec<u32>)> = Vec::with_capacity(gpu.clocks.len());
            for table in gpu.clocks {
                if clocks.iter().any(|(m, _)| *m == table.memory_mhz) {
                    return Err(at(format!(
                        "clocks: memory clock {} MHz is listed twice",
                        table.memory_mhz
                    )));
                }
                let mut graphics = table.graphics_mhz;
                graphics.sort_unstable_by(|a, b| b.cmp(a));
                graphics.dedup();
                clocks.push((table.memory_mhz, graphics));
            }
            clocks.sort_unstable_by_key(|c| std::cmp::Reverse(c.0));
            let defaults = gpu.application_clocks.map(|c| Clocks {
                memory_mhz: c.memory_mhz,
                graphics_mhz: c.graphics_mhz,
            });
            if let Some(d) = defaults {
                if !clocks.is_empty() && !supports(&clocks, d) {
                    return Err(at(format!(
                        "application_clocks (memory {} MHz, graphics {} MHz) are not among its \
                         clocks",
                        d.memory_mhz, d.graphics_mhz
                    )));
                }
            }
            let index = u32::try_from(i).map_err(|_| at("too many GPUs".into()))?;
            devices.push(InventoryDevice {
                device: GpuDevice {
                    index,
                    uuid: gpu.uuid,
                    name: gpu.name,
                    memory_mb: gpu.memory_mb,
                    minor_number: gpu.minor,
                    pci_bus_id: gpu.pci_bus_id,
                    links,
                    cpu_affinity: bitmap(cpus, gpu.cpu_affinity),
                },
                clocks,
                defaults,
            });
        }
        let current = devices.iter().map(|d| d.defaults).collect();
        Ok(InventoryGpu {
            devices,
            current: Mutex::new(current),
        })
    }

    fn device(&self, index: u32) -> Result<&InventoryDevice, CapabilityError> {
        self.devices
            .get(index as usize)
            .ok_or_else(|| no_device(index, self.devices.len()))
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Vec<Option<Clocks>>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn supports(clocks: &[(u32, Vec<u32>)], pair: Clocks) -> bool {
    clocks
        .iter()
        .any(|(m, g)| *m == pair.memory_mhz && g.contains(&pair.graphics_mhz))
}

impl GpuProvider for InventoryGpu {
    fn devices(&self) -> Result<Vec<GpuDevice>, CapabilityError> {
        Ok(self.devices.iter().map(|d| d.device.clone()).collect())
    }

    fn supported_memory_clocks(&self, index: u32) -> Result<Vec<u32>, CapabilityError> {
        Ok(self.device(index)?.clocks.iter().map(|(m, _)| *m).collect())
    }

    fn supported_graphics_clocks(
        &self,
        index: u32,
        memory_mhz: u32,
    ) -> Result<Vec<u32>, CapabilityError> {
        let device = self.device(index)?;
        device
            .clocks
            .iter()
            .find(|(m, _)| *m == memory_mhz)
            .map(|(_, g)| g.clone())
            .ok_or_else(|| {
                CapabilityError::Failed(format!(
                    "GPU {index} has no memory clock of {memory_mhz} MHz"
                ))
            })
    }

    fn application_clocks(&self, index: u32) -> Result<Clocks, CapabilityError> {
        self.device(index)?;
        self.current()[index as usize].ok_or_else(|| {
            CapabilityError::Unavailable(format!(
                "the GPU inventory gives no application clocks for GPU {index}"
            ))
        })
    }

    fn set_application_clocks(&self, index: u32, clocks: Clocks) -> Result<(), CapabilityError> {
        let device = self.device(index)?;
        if !device.clocks.is_empty() && !supports(&device.clocks, clocks) {
            return Err(CapabilityError::Failed(format!(
                "GPU {index} does not support memory {} MHz with graphics {} MHz",
                clocks.memory_mhz, clocks.graphics_mhz
            )));
        }
        self.current()[index as usize] = Some(clocks);
        Ok(())
    }

    fn reset_application_clocks(&self, index: u32) -> Result<(), CapabilityError> {
        let defaults = self.device(index)?.defaults;
        self.current()[index as usize] = defaults;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::bits;

    const TWO: &str = r#"
cpus = 8
[[gpu]]
uuid = "GPU-a"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 0
pci_bus_id = "00000000:07:00.0"
links = [0, 12]
cpu_affinity = [0, 1, 2, 3]
application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }
[[gpu.clocks]]
memory_mhz = 877
graphics_mhz = [705, 1410]
[[gpu.clocks]]
memory_mhz = 1215
graphics_mhz = [1095, 1410, 1395]

[[gpu]]
uuid = "GPU-b"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 1
pci_bus_id = "00000000:0F:00.0"
links = [12, 0]
cpu_affinity = [4, 5, 6, 7]
"#;

    fn error(text: &str) -> String {
        InventoryGpu::parse_str(text, Path::new("gpus.toml"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn devices_and_clocks_as_written_sorted_highest_first() {
        let gpus = InventoryGpu::parse_str(TWO, Path::new("gpus.toml")).unwrap();
        let devices = gpus.devices().unwrap();
        assert_eq!(devices.len(), 2);
        assert_eq!(
            (
                devices[1].index,
                devices[1].uuid.as_str(),
                devices[1].minor_number
            ),
            (1, "GPU-b", 1)
        );
        assert_eq!(devices[0].links, [0, 12]);
        assert_eq!(devices[1].cpu_affinity.len, 8);
        assert_eq!(bits(&devices[1].cpu_affinity), [4, 5, 6, 7]);
        // The contract: supported clocks are listed highest first.
        assert_eq!(gpus.supported_memory_clocks(0).unwrap(), [1215, 877]);
        assert_eq!(
            gpus.supported_graphics_clocks(0, 1215).unwrap(),
            [1410, 1395, 1095]
        );
        assert!(matches!(
            gpus.supported_graphics_clocks(0, 1000),
            Err(CapabilityError::Failed(m)) if m == "GPU 0 has no memory clock of 1000 MHz"
        ));
        assert!(matches!(
            gpus.supported_memory_clocks(2),
            Err(CapabilityError::Failed(m)) if m == "no GPU with index 2; this machine has 2"
        ));
    }

    #[test]
    fn application_clocks_set_and_reset() {
        let gpus = InventoryGpu::parse_str(TWO, Path::new("gpus.toml")).unwrap();
        let high = Clocks {
            memory_mhz: 1215,
            graphics_mhz: 1410,
        };
        assert_eq!(gpus.application_clocks(0).unwrap().graphics_mhz, 1095);
        gpus.set_application_clocks(0, high).unwrap();
        assert_eq!(gpus.application_clocks(0).unwrap().graphics_mhz, 1410);
        let unsupported = Clocks {
            memory_mhz: 877,
            graphics_mhz: 1395,
        };
        assert!(matches!(
            gpus.set_application_clocks(0, unsupported),
            Err(CapabilityError::Failed(m))
                if m == "GPU 0 does not support memory 877 MHz with graphics 1395 MHz"
        ));
        gpus.reset_application_clocks(0).unwrap();
        assert_eq!(gpus.application_clocks(0).unwrap().graphics_mhz, 1095);
        // GPU 1 lists no clocks and no defaults.
        assert!(matches!(
            gpus.application_clocks(1),
            Err(CapabilityError::Unavailable(m))
                if m == "the GPU inventory gives no application clocks for GPU 1"
        ));
    }

    #[test]
    fn malformed_inventories_say_what_was_expected() {
        let gpu = |extra: &str| {
            format!(
                "cpus = 4\n[[gpu]]\nuuid = \"GPU-a\"\nname = \"T4\"\nmemory_mb = 1\nminor = 0\n\
                 pci_bus_id = \"0:1:0.0\"\n{extra}"
            )
        };
        assert_eq!(
            error(&gpu("links = [1]\n")),
            "gpus.toml: gpu[0]: links[0] is 1; a GPU has no links to itself (expected 0)"
        );
        assert_eq!(
            error(&gpu("links = [0, 1]\n")),
            "gpus.toml: gpu[0]: links has 2 entries; expected one per GPU (1)"
        );
        assert_eq!(
            error(&gpu("cpu_affinity = [4]\n")),
            "gpus.toml: gpu[0]: cpu_affinity: CPU 4 is outside the machine's 4 CPUs"
        );
        assert_eq!(
            error(&gpu(
                "[[gpu.clocks]]\nmemory_mhz = 1\ngraphics_mhz = [2]\n[[gpu.clocks]]\n\
                 memory_mhz = 1\ngraphics_mhz = [3]\n"
            )),
            "gpus.toml: gpu[0]: clocks: memory clock 1 MHz is listed twice"
        );
        assert_eq!(
            error(&gpu(
                "application_clocks = { memory_mhz = 1, graphics_mhz = 3 }\n\
                 [[gpu.clocks]]\nmemory_mhz = 1\ngraphics_mhz = [2]\n"
            )),
            "gpus.toml: gpu[0]: application_clocks (memory 1 MHz, graphics 3 MHz) are not \
             among its clocks"
        );
        let twice = format!(
            "{}[[gpu]]\nuuid = \"GPU-a\"\nname = \"T4\"\nmemory_mb = 1\nminor = 1\n\
             pci_bus_id = \"0:2:0.0\"\n",
            gpu("")
        );
        assert_eq!(
            error(&twice),
            "gpus.toml: gpu[1]: uuid GPU-a is also gpu[0]'s"
        );
        assert_eq!(
            error(&gpu("uuid = \"x\"\n")).lines().next().unwrap(),
            "gpus.toml: TOML parse error at line 8, column 1"
        );
        assert!(error(&gpu("memory = 2\n")).contains("unknown field `memory`"));
        assert_eq!(
            InventoryGpu::load(Path::new("/no/gpus.toml"))
                .unwrap_err()
                .to_string(),
            "/no/gpus.toml: cannot read the GPU inventory: No such file or directory (os error 2)"
        );
    }
}
