//! Host capabilities: what a plugin may ask of the machine.
//!
//! `log` and `clock` are always granted. `topology`, `cpuset`, `gpu` and
//! `gpu-control` are denied unless the host configuration grants them to the
//! plugin: an ungranted call answers `capability-error::denied` and is
//! recorded, so a call that then fails names the capability. Each capability
//! is served by a provider (a trait object) so embedders and tests can
//! substitute their own: a file-described GPU inventory, a fixed topology.

pub mod cgroup;
pub mod clock;
pub mod cpuset;
pub mod gpu;
mod imports;
pub mod topology;

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

pub use crate::bindings::types::{Capability, CapabilityError};
use crate::error::{capability_name, UnknownName};

impl Capability {
    /// Every capability, in the contract's order.
    pub const ALL: [Capability; 6] = [
        Capability::Log,
        Capability::Clock,
        Capability::Topology,
        Capability::Cpuset,
        Capability::Gpu,
        Capability::GpuControl,
    ];

    /// True for `log` and `clock`, which every plugin gets.
    pub fn always_granted(self) -> bool {
        matches!(self, Capability::Log | Capability::Clock)
    }
}

impl fmt::Display for Capability {
    /// The WIT interface name (`gpu-control`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(capability_name(*self))
    }
}

impl FromStr for Capability {
    type Err = UnknownName;

    /// Parses the WIT interface name: `log`, `clock`, `topology`, `cpuset`,
    /// `gpu` or `gpu-control`.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        Capability::ALL
            .into_iter()
            .find(|c| capability_name(*c) == s)
            .ok_or_else(|| UnknownName {
                what: "capability",
                found: s.to_owned(),
                expected: "log, clock, topology, cpuset, gpu or gpu-control",
            })
    }
}

/// The capabilities granted to one plugin: `log` and `clock`, plus those
/// granted explicitly. Two values are equal when they allow the same
/// capabilities.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants(BTreeSet<u8>);

impl Grants {
    /// Only `log` and `clock`.
    pub fn none() -> Self {
        Grants::default()
    }

    /// Also grants `capability` (`log` and `clock` need no grant).
    pub fn with(mut self, capability: Capability) -> Self {
        if !capability.always_granted() {
            self.0.insert(capability as u8);
        }
        self
    }

    /// Is `capability` usable? `log` and `clock` always are.
    pub fn allows(&self, capability: Capability) -> bool {
        capability.always_granted() || self.0.contains(&(capability as u8))
    }

    /// Every usable capability, `log` and `clock` included, in the
    /// contract's order.
    pub fn iter(&self) -> impl Iterator<Item = Capability> + '_ {
        Capability::ALL.into_iter().filter(|c| self.allows(*c))
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
    /// Answers `clock` and WASI's clocks.
    pub clock: Arc<dyn clock::Clock>,
    /// Answers `topology.read-layout`; `cpuset.bind` also maps a step's
    /// cores to OS CPU ids through it.
    pub topology: Arc<dyn topology::TopologyProvider>,
    /// Answers `cpuset`, and releases step bindings when a step or job ends.
    pub cpuset: Arc<dyn cpuset::CpusetProvider>,
    /// Answers `gpu` and `gpu-control`.
    pub gpu: Arc<dyn gpu::GpuProvider>,
}

impl Default for Services {
    /// The real machine: system clock, sysfs topology, binding through a
    /// cgroup v2 step cpuset where the host can use one and
    /// `sched_setaffinity` ([`cpuset::CgroupCpuset::default`]), and no GPU
    /// provider.
    fn default() -> Self {
        Services {
            clock: Arc::new(clock::SystemClock),
            topology: Arc::new(topology::SysfsTopology),
            cpuset: Arc::new(cpuset::CgroupCpuset::default()),
            gpu: Arc::new(gpu::NoGpu),
        }
    }
}

impl fmt::Debug for Services {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Services { .. }")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_names_round_trip() {
        for capability in Capability::ALL {
            assert_eq!(capability.to_string().parse::<Capability>(), Ok(capability));
        }
        assert_eq!(
            "gpu-control".parse::<Capability>(),
            Ok(Capability::GpuControl)
        );
        assert_eq!(
            "gpu_control".parse::<Capability>().unwrap_err().to_string(),
            "unknown capability `gpu_control`; expected log, clock, topology, cpuset, gpu or gpu-control"
        );
    }

    #[test]
    fn grants_are_deny_by_default_and_compare_by_what_they_allow() {
        assert_eq!(
            Grants::none().iter().collect::<Vec<_>>(),
            [Capability::Log, Capability::Clock]
        );
        assert!(!Grants::none().allows(Capability::Cpuset));
        assert_eq!(
            Grants::none().with(Capability::Log).with(Capability::Clock),
            Grants::none()
        );
        let granted: Grants = [Capability::Gpu, Capability::Topology, Capability::Gpu]
            .into_iter()
            .collect();
        assert_eq!(
            granted.iter().collect::<Vec<_>>(),
            [
                Capability::Log,
                Capability::Clock,
                Capability::Topology,
                Capability::Gpu
            ]
        );
    }
}
