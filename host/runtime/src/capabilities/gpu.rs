//! The `gpu` and `gpu-control` capabilities.
//!
//! One [`GpuProvider`] answers both interfaces; the host's grants decide
//! which of them a plugin may call. Providers:
//!
//! - [`NoGpu`] (the default): every call answers `unavailable`.
//! - [`NvmlGpu`]: the machine's NVIDIA GPUs through NVML, loaded when first
//!   asked; where `libnvidia-ml.so` cannot be opened every call answers
//!   `unavailable("no NVML: ...")`.
//! - [`InventoryGpu`]: GPUs described in a TOML file, for tests and
//!   simulations; application clocks are kept in memory.
//! - [`RecordingGpu`]: wraps another provider and records every
//!   `gpu-control` change, so a test can assert a call reached the machine.
//!
//! [`GpuSource`] names a provider in configuration: `none`, `nvml` or
//! `file:<path>`.

pub mod inventory;
pub mod nvml;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

pub use inventory::{InventoryError, InventoryGpu};
pub use nvml::NvmlGpu;

pub use crate::bindings::gres::slurm::plugin::gpu::GpuDevice;
pub use crate::bindings::gres::slurm::plugin::gpu_control::Clocks;
use crate::bindings::types::CapabilityError;

/// Answers `gpu.*` and `gpu-control.*`. Device indices are NVML's (the
/// position in [`devices`](Self::devices)); an index with no device is a
/// `failed` error naming it.
pub trait GpuProvider: Send + Sync {
    /// The machine's GPUs in NVML index order (`gpu.devices`);
    /// `unavailable` where the provider has no GPU source (no NVML).
    fn devices(&self) -> Result<Vec<GpuDevice>, CapabilityError>;
    /// Supported memory clocks in MHz, highest first.
    fn supported_memory_clocks(&self, index: u32) -> Result<Vec<u32>, CapabilityError>;
    /// Supported graphics clocks in MHz at `memory_mhz`, highest first.
    fn supported_graphics_clocks(
        &self,
        index: u32,
        memory_mhz: u32,
    ) -> Result<Vec<u32>, CapabilityError>;
    /// The application clocks (memory and graphics, MHz) set on GPU
    /// `index` (`gpu-control.application-clocks`).
    fn application_clocks(&self, index: u32) -> Result<Clocks, CapabilityError>;
    /// Sets GPU `index`'s application clocks, in MHz
    /// (`nvmlDeviceSetApplicationsClocks`); a pair the GPU does not
    /// support is `failed`.
    fn set_application_clocks(&self, index: u32, clocks: Clocks) -> Result<(), CapabilityError>;
    /// Restores GPU `index`'s default application clocks.
    fn reset_application_clocks(&self, index: u32) -> Result<(), CapabilityError>;
}

/// No GPU support configured: every call answers `unavailable`.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoGpu;

fn unavailable<T>() -> Result<T, CapabilityError> {
    Err(CapabilityError::Unavailable(
        "no GPU provider is configured on this host".into(),
    ))
}

impl GpuProvider for NoGpu {
    fn devices(&self) -> Result<Vec<GpuDevice>, CapabilityError> {
        unavailable()
    }
    fn supported_memory_clocks(&self, _index: u32) -> Result<Vec<u32>, CapabilityError> {
        unavailable()
    }
    fn supported_graphics_clocks(
        &self,
        _index: u32,
        _memory_mhz: u32,
    ) -> Result<Vec<u32>, CapabilityError> {
        unavailable()
    }
    fn application_clocks(&self, _index: u32) -> Result<Clocks, CapabilityError> {
        unavailable()
    }
    fn set_application_clocks(&self, _index: u32, _clocks: Clocks) -> Result<(), CapabilityError> {
        unavailable()
    }
    fn reset_application_clocks(&self, _index: u32) -> Result<(), CapabilityError> {
        unavailable()
    }
}

/// A `gpu-control` change that reached a [`RecordingGpu`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuControlCall {
    /// `set-application-clocks(index, memory, graphics)`.
    Set {
        /// The GPU's NVML index.
        index: u32,
        /// The memory clock asked for, in MHz.
        memory_mhz: u32,
        /// The graphics clock asked for, in MHz.
        graphics_mhz: u32,
    },
    /// `reset-application-clocks(index)`.
    Reset {
        /// The GPU's NVML index.
        index: u32,
    },
}

/// Forwards every call to `inner` and records the `gpu-control` changes
/// (set and reset), whatever `inner` answered, in call order.
pub struct RecordingGpu {
    inner: Arc<dyn GpuProvider>,
    calls: Mutex<Vec<GpuControlCall>>,
}

impl RecordingGpu {
    /// Records the changes made through `inner`.
    pub fn new(inner: Arc<dyn GpuProvider>) -> Self {
        RecordingGpu {
            inner,
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The changes so far, oldest first.
    pub fn calls(&self) -> Vec<GpuControlCall> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn record(&self, call: GpuControlCall) {
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(call);
    }
}

impl GpuProvider for RecordingGpu {
    fn devices(&self) -> Result<Vec<GpuDevice>, CapabilityError> {
        self.inner.devices()
    }
    fn supported_memory_clocks(&self, index: u32) -> Result<Vec<u32>, CapabilityError> {
        self.inner.supported_memory_clocks(index)
    }
    fn supported_graphics_clocks(
        &self,
        index: u32,
        memory_mhz: u32,
    ) -> Result<Vec<u32>, CapabilityError> {
        self.inner.supported_graphics_clocks(index, memory_mhz)
    }
    fn application_clocks(&self, index: u32) -> Result<Clocks, CapabilityError> {
        self.inner.application_clocks(index)
    }
    fn set_application_clocks(&self, index: u32, clocks: Clocks) -> Result<(), CapabilityError> {
        self.record(GpuControlCall::Set {
            index,
            memory_mhz: clocks.memory_mhz,
            graphics_mhz: clocks.graphics_mhz,
        });
        self.inner.set_application_clocks(index, clocks)
    }
    fn reset_application_clocks(&self, index: u32) -> Result<(), CapabilityError> {
        self.record(GpuControlCall::Reset { index });
        self.inner.reset_application_clocks(index)
    }
}

/// Which provider serves the GPU capabilities, as configuration names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum GpuSource {
    /// `none`: [`NoGpu`].
    #[default]
    None,
    /// `nvml`: [`NvmlGpu`].
    Nvml,
    /// `file:<path>`: [`InventoryGpu`] read from the file.
    File(PathBuf),
}

impl GpuSource {
    /// The provider this names; a `file:` inventory is read now.
    ///
    /// # Errors
    ///
    /// An [`InventoryError`] when the inventory cannot be read or is
    /// malformed.
    pub fn provider(&self) -> Result<Arc<dyn GpuProvider>, InventoryError> {
        Ok(match self {
            GpuSource::None => Arc::new(NoGpu),
            GpuSource::Nvml => Arc::new(NvmlGpu::default()),
            GpuSource::File(path) => Arc::new(InventoryGpu::load(path)?),
        })
    }
}

impl FromStr for GpuSource {
    type Err = String;

    /// `none`, `nvml` or `file:<path>` (path not empty).
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(GpuSource::None),
            "nvml" => Ok(GpuSource::Nvml),
            _ => match s.strip_prefix("file:") {
                Some(path) if !path.is_empty() => Ok(GpuSource::File(path.into())),
                _ => Err(format!(
                    "unknown GPU provider `{s}`; expected none, nvml or file:<path>"
                )),
            },
        }
    }
}

impl fmt::Display for GpuSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuSource::None => f.write_str("none"),
            GpuSource::Nvml => f.write_str("nvml"),
            GpuSource::File(path) => write!(f, "file:{}", path.display()),
        }
    }
}

/// `failed` for an index with no device.
fn no_device(index: u32, count: usize) -> CapabilityError {
    CapabilityError::Failed(format!(
        "no GPU with index {index}; this machine has {count}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse_and_display() {
        assert_eq!("nvml".parse(), Ok(GpuSource::Nvml));
        assert_eq!("none".parse(), Ok(GpuSource::None));
        assert_eq!(
            "file:/etc/gpus.toml".parse(),
            Ok(GpuSource::File("/etc/gpus.toml".into()))
        );
        assert_eq!(
            "file:".parse::<GpuSource>().unwrap_err(),
            "unknown GPU provider `file:`; expected none, nvml or file:<path>"
        );
        assert_eq!(
            "cuda".parse::<GpuSource>().unwrap_err(),
            "unknown GPU provider `cuda`; expected none, nvml or file:<path>"
        );
        assert_eq!(GpuSource::File("g.toml".into()).to_string(), "file:g.toml");
    }

    #[test]
    fn no_gpu_is_unavailable() {
        assert!(matches!(
            NoGpu.devices(),
            Err(CapabilityError::Unavailable(m)) if m == "no GPU provider is configured on this host"
        ));
    }

    #[test]
    fn recording_forwards_and_records_changes() {
        let recording = RecordingGpu::new(Arc::new(NoGpu));
        let clocks = Clocks {
            memory_mhz: 1215,
            graphics_mhz: 1410,
        };
        // NoGpu refuses; the attempt is still recorded.
        assert!(recording.set_application_clocks(1, clocks).is_err());
        assert!(recording.reset_application_clocks(1).is_err());
        assert!(recording.devices().is_err());
        assert_eq!(
            recording.calls(),
            [
                GpuControlCall::Set {
                    index: 1,
                    memory_mhz: 1215,
                    graphics_mhz: 1410
                },
                GpuControlCall::Reset { index: 1 }
            ]
        );
    }
}
