//! The contract's capability imports, implemented on [`HostState`]: each
//! checks the plugin's grants, then asks the provider.

use crate::bindings::base::slurm::plugin::{clock, log, types};
use crate::bindings::gres::slurm::plugin::{gpu, gpu_control};
use crate::bindings::task::slurm::plugin::{cpuset, topology};
use crate::capabilities::cpuset::BindTarget;
use crate::capabilities::topology::cpus_of_cores;
use crate::capabilities::{Capability, CapabilityError};
use crate::ranges;
use crate::store::{HostState, StepScope};

impl types::Host for HostState {}

impl log::Host for HostState {
    /// Escaped and bounded by the plugin's log allowance ([`crate::plugin_log`]).
    fn write(&mut self, level: log::Level, message: String) {
        self.log.write(
            &self.plugin,
            crate::plugin_log::Origin::Log(level),
            message.as_bytes(),
        );
    }
}

impl clock::Host for HostState {
    fn now(&mut self) -> i64 {
        self.services.clock.now()
    }

    fn monotonic_nanos(&mut self) -> u64 {
        self.services.clock.monotonic_nanos()
    }
}

impl topology::Host for HostState {
    fn read_layout(&mut self) -> Result<topology::CpuLayout, CapabilityError> {
        if !self.grants.allows(Capability::Topology) {
            return Err(self.deny(Capability::Topology));
        }
        self.services.topology.cpu_layout()
    }
}

/// OS CPU ids set in a contract bitmap.
fn bitmap_ones(map: &types::Bitmap) -> Result<Vec<u32>, CapabilityError> {
    let expected = (map.len as usize).div_ceil(64);
    if map.words.len() != expected {
        return Err(CapabilityError::Failed(format!(
            "malformed bitmap: {} bits need {expected} words, got {}",
            map.len,
            map.words.len()
        )));
    }
    Ok(map.ones().collect())
}

fn to_bitmap(ids: &[u32]) -> types::Bitmap {
    let len = ids.iter().max().map_or(0, |m| m + 1);
    let mut words = vec![0u64; (len as usize).div_ceil(64)];
    for &id in ids {
        words[(id / 64) as usize] |= 1 << (id % 64);
    }
    types::Bitmap { len, words }
}

impl HostState {
    /// What binding `pid` means in this call, if `pid` is a task of the
    /// step the call serves; checked before any provider sees the pid.
    fn bind_target(&self, pid: u32) -> Result<BindTarget, CapabilityError> {
        let step = self.call.step.as_ref();
        step.and_then(|s| s.target(pid)).ok_or_else(|| {
            CapabilityError::Failed(format!(
                "pid {pid} is not a task of the step this call serves (allowed: {:?})",
                step.map(StepScope::pids).unwrap_or_default()
            ))
        })
    }

    /// Refuses `cpus` (OS ids) unless each is a CPU of the step's cores on
    /// this node, as Slurm binds a task only within its step's CPUs; the
    /// cores are mapped to CPUs through the host's own topology.
    fn within_step_cpus(&self, cpus: &[u32]) -> Result<(), CapabilityError> {
        let Some(step) = self.call.step.as_ref() else {
            return Err(CapabilityError::Failed(
                "no step: CPUs may be bound only for a step's tasks".into(),
            ));
        };
        let layout = self.services.topology.cpu_layout().map_err(|e| {
            CapabilityError::Failed(format!(
                "cannot tell the CPUs of step {} (reading this node's CPU layout: {e:?})",
                step.name()
            ))
        })?;
        let held = cpus_of_cores(&layout, step.cores());
        let outside: Vec<u32> = cpus
            .iter()
            .copied()
            .filter(|c| held.binary_search(c).is_err())
            .collect();
        if outside.is_empty() {
            return Ok(());
        }
        Err(CapabilityError::Failed(format!(
            "CPUs {} are not CPUs of step {} on this node (its CPUs: {})",
            ranges::format(outside),
            step.name(),
            if held.is_empty() {
                "none".into()
            } else {
                ranges::format(held)
            }
        )))
    }

    /// Refuses `gpu-control` on GPU `index` unless the step this call
    /// serves holds it (`step-hardware-init` and `-fini` of its GPUs).
    fn within_step_gpus(&self, index: u32) -> Result<(), CapabilityError> {
        let gpus = self.call.step.as_ref().map_or(&[][..], StepScope::gpus);
        if gpus.contains(&index) {
            return Ok(());
        }
        Err(CapabilityError::Failed(format!(
            "GPU {index} is not a GPU of the step this call serves (its GPUs: {})",
            if gpus.is_empty() {
                "none".into()
            } else {
                ranges::format(gpus.iter().copied())
            }
        )))
    }
}

impl cpuset::Host for HostState {
    fn bind(&mut self, pid: u32, cpus: types::Bitmap) -> Result<(), CapabilityError> {
        if !self.grants.allows(Capability::Cpuset) {
            return Err(self.deny(Capability::Cpuset));
        }
        let target = self.bind_target(pid)?;
        let ids = bitmap_ones(&cpus)?;
        if ids.is_empty() {
            return Err(CapabilityError::Failed(
                "refusing to bind to an empty CPU set".into(),
            ));
        }
        self.within_step_cpus(&ids)?;
        self.services.cpuset.bind(&target, &ids)
    }

    fn get(&mut self, pid: u32) -> Result<types::Bitmap, CapabilityError> {
        if !self.grants.allows(Capability::Cpuset) {
            return Err(self.deny(Capability::Cpuset));
        }
        self.bind_target(pid)?;
        self.services.cpuset.get(pid).map(|ids| to_bitmap(&ids))
    }
}

impl gpu::Host for HostState {
    fn devices(&mut self) -> Result<Vec<gpu::GpuDevice>, CapabilityError> {
        if !self.grants.allows(Capability::Gpu) {
            return Err(self.deny(Capability::Gpu));
        }
        self.services.gpu.devices()
    }

    fn supported_memory_clocks(&mut self, index: u32) -> Result<Vec<u32>, CapabilityError> {
        if !self.grants.allows(Capability::Gpu) {
            return Err(self.deny(Capability::Gpu));
        }
        self.services.gpu.supported_memory_clocks(index)
    }

    fn supported_graphics_clocks(
        &mut self,
        index: u32,
        memory_mhz: u32,
    ) -> Result<Vec<u32>, CapabilityError> {
        if !self.grants.allows(Capability::Gpu) {
            return Err(self.deny(Capability::Gpu));
        }
        self.services
            .gpu
            .supported_graphics_clocks(index, memory_mhz)
    }
}

impl gpu_control::Host for HostState {
    fn application_clocks(&mut self, index: u32) -> Result<gpu_control::Clocks, CapabilityError> {
        if !self.grants.allows(Capability::GpuControl) {
            return Err(self.deny(Capability::GpuControl));
        }
        self.within_step_gpus(index)?;
        self.services.gpu.application_clocks(index)
    }

    fn set_application_clocks(
        &mut self,
        index: u32,
        clocks: gpu_control::Clocks,
    ) -> Result<(), CapabilityError> {
        if !self.grants.allows(Capability::GpuControl) {
            return Err(self.deny(Capability::GpuControl));
        }
        self.within_step_gpus(index)?;
        self.services.gpu.set_application_clocks(index, clocks)
    }

    fn reset_application_clocks(&mut self, index: u32) -> Result<(), CapabilityError> {
        if !self.grants.allows(Capability::GpuControl) {
            return Err(self.deny(Capability::GpuControl));
        }
        self.within_step_gpus(index)?;
        self.services.gpu.reset_application_clocks(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmap_conversion_round_trips() {
        let map = to_bitmap(&[0, 3, 64]);
        assert_eq!(map.len, 65);
        assert_eq!(bitmap_ones(&map).unwrap(), vec![0, 3, 64]);
        let bad = types::Bitmap {
            len: 65,
            words: vec![1],
        };
        assert!(bitmap_ones(&bad).is_err());
    }
}
