//! The `gpu` and `gpu-control` capabilities.

use crate::bindings::gres::slurm::plugin::gpu::GpuDevice;
use crate::bindings::gres::slurm::plugin::gpu_control::Clocks;
use crate::bindings::types::CapabilityError;

/// Answers `gpu.*` and `gpu-control.*`.
pub trait GpuProvider: Send + Sync {
    fn devices(&self) -> Result<Vec<GpuDevice>, CapabilityError>;
    fn supported_memory_clocks(&self, index: u32) -> Result<Vec<u32>, CapabilityError>;
    fn supported_graphics_clocks(
        &self,
        index: u32,
        memory_mhz: u32,
    ) -> Result<Vec<u32>, CapabilityError>;
    fn application_clocks(&self, index: u32) -> Result<Clocks, CapabilityError>;
    fn set_application_clocks(&self, index: u32, clocks: Clocks) -> Result<(), CapabilityError>;
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
