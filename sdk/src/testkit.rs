//! Test kit for plugin authors: a mock host and fixtures.
//!
//! In a native build every [`crate::host`] call goes to the [`MockHost`] of
//! the calling thread. Tests set the clock, grant or deny capabilities and
//! read back what the plugin logged or bound:
//!
//! ```
//! use slurm_wasm_sdk::testkit;
//! testkit::reset();
//! testkit::with(|host| host.now = 1_700_000_000);
//! assert_eq!(slurm_wasm_sdk::host::now(), 1_700_000_000);
//! ```
//!
//! Capabilities other than `log` and `clock` start denied, as in the real
//! host with no grants.

use std::cell::RefCell;

use crate::host::Level;
#[cfg(any(feature = "task", feature = "gres"))]
use crate::types::{Capability, CapabilityError};

/// What the mock host answers and what it recorded.
#[derive(Debug, Clone)]
pub struct MockHost {
    /// `clock.now`.
    pub now: i64,
    /// `clock.monotonic-nanos`.
    pub monotonic_nanos: u64,
    /// Every `log.write`, in order.
    pub logs: Vec<(Level, String)>,
    /// `topology.cpu-layout`'s answer.
    #[cfg(feature = "task")]
    pub cpu_layout: Result<crate::task::topology::CpuLayout, CapabilityError>,
    /// When set, `cpuset.bind` and `cpuset.get` answer this error.
    #[cfg(feature = "task")]
    pub cpuset_denied: Option<CapabilityError>,
    /// Every successful `cpuset.bind`.
    #[cfg(feature = "task")]
    pub bound: Vec<(u32, crate::Bitmap)>,
    /// `gpu.devices`'s answer.
    #[cfg(feature = "gres")]
    pub gpus: Result<Vec<crate::gres::gpu::GpuDevice>, CapabilityError>,
    /// When set, `gpu-control` calls answer this error.
    #[cfg(feature = "gres")]
    pub gpu_control_denied: Option<CapabilityError>,
    /// Every successful `gpu-control.set-application-clocks`.
    #[cfg(feature = "gres")]
    pub clocks_set: Vec<(u32, crate::gres::gpu_control::Clocks)>,
    /// `gpu.supported-*-clocks` answers: `(index, memory MHz, graphics MHz
    /// at that memory clock)`, memory clocks of one index highest first.
    #[cfg(feature = "gres")]
    pub gpu_clocks: Vec<(u32, u32, Vec<u32>)>,
    /// Every successful `gpu-control.reset-application-clocks`.
    #[cfg(feature = "gres")]
    pub clocks_reset: Vec<u32>,
}

// Derivable only when neither `task` nor `gres` is enabled; written out so
// every feature combination shares one definition.
#[allow(clippy::derivable_impls)]
impl Default for MockHost {
    fn default() -> Self {
        MockHost {
            now: 0,
            monotonic_nanos: 0,
            logs: Vec::new(),
            #[cfg(feature = "task")]
            cpu_layout: Err(CapabilityError::Denied(Capability::Topology)),
            #[cfg(feature = "task")]
            cpuset_denied: Some(CapabilityError::Denied(Capability::Cpuset)),
            #[cfg(feature = "task")]
            bound: Vec::new(),
            #[cfg(feature = "gres")]
            gpus: Err(CapabilityError::Denied(Capability::Gpu)),
            #[cfg(feature = "gres")]
            gpu_control_denied: Some(CapabilityError::Denied(Capability::GpuControl)),
            #[cfg(feature = "gres")]
            clocks_set: Vec::new(),
            #[cfg(feature = "gres")]
            gpu_clocks: Vec::new(),
            #[cfg(feature = "gres")]
            clocks_reset: Vec::new(),
        }
    }
}

thread_local! {
    static MOCK: RefCell<MockHost> = RefCell::new(MockHost::default());
}

/// Runs `f` on this thread's mock host.
pub fn with<R>(f: impl FnOnce(&mut MockHost) -> R) -> R {
    MOCK.with(|mock| f(&mut mock.borrow_mut()))
}

/// Restores this thread's mock host to its defaults (capabilities denied).
pub fn reset() {
    with(|mock| *mock = MockHost::default());
}

/// Record builders with neutral defaults, to be adjusted field by field.
///
/// `cluster_config`, `node`, `job_details`, `job`, `step` and `task` are the
/// host's fixtures too ([`slurm_wasm_fixtures::record_builders`]).
pub mod fixtures {
    use crate::types::Bitmap;

    slurm_wasm_fixtures::record_builders!(crate::types);

    /// An empty bitmap record of `len` bits.
    pub fn bitmap(len: u32) -> Bitmap {
        Bitmap {
            len,
            words: vec![0; (len as usize).div_ceil(64)],
        }
    }
}
