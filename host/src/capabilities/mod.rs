//! Host capabilities: what a plugin may ask of the machine.
//!
//! `log` and `clock` are always granted. `topology`, `cpuset`, `gpu` and
//! `gpu-control` are denied unless the host configuration grants them to the
//! plugin: an ungranted call answers `capability-error::denied` and is
//! recorded, so a call that then fails names the capability. Each capability
//! is served by a provider (a trait object) so embedders and tests can
//! substitute their own: a file-described GPU inventory, a fixed topology.

pub mod clock;
pub mod cpuset;
pub mod gpu;
mod imports;
pub mod topology;

use std::collections::BTreeSet;
use std::sync::Arc;

pub use crate::bindings::types::{Capability, CapabilityError};

/// The capabilities granted to one plugin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants(BTreeSet<u8>);

impl Grants {
    /// Only `log` and `clock`.
    pub fn none() -> Self {
        Grants::default()
    }

    pub fn with(mut self, capability: Capability) -> Self {
        self.0.insert(capability as u8);
        self
    }

    /// Is `capability` usable? `log` and `clock` always are.
    pub fn allows(&self, capability: Capability) -> bool {
        matches!(capability, Capability::Log | Capability::Clock) || self.0.contains(&(capability as u8))
    }
}

impl FromIterator<Capability> for Grants {
    fn from_iter<I: IntoIterator<Item = Capability>>(iter: I) -> Self {
        iter.into_iter().fold(Grants::none(), Grants::with)
    }
}

/// The providers behind the capabilities, shared by every plugin of a host.
#[derive(Clone)]
pub struct Services {
    pub clock: Arc<dyn clock::Clock>,
    pub topology: Arc<dyn topology::TopologyProvider>,
    pub cpuset: Arc<dyn cpuset::CpusetProvider>,
    pub gpu: Arc<dyn gpu::GpuProvider>,
}

impl Default for Services {
    /// The real machine: system clock, sysfs topology, `sched_setaffinity`,
    /// and no GPU provider.
    fn default() -> Self {
        Services {
            clock: Arc::new(clock::SystemClock),
            topology: Arc::new(topology::SysfsTopology),
            cpuset: Arc::new(cpuset::SchedAffinity),
            gpu: Arc::new(gpu::NoGpu),
        }
    }
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Services { .. }")
    }
}
