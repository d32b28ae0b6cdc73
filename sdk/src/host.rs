//! Calls from a plugin to its host.
//!
//! Inside a component these are the contract's imports; in a native build
//! (unit tests, benchmarks) they go to the [`crate::testkit`] mock host of
//! the calling thread, so plugin logic runs unchanged under `cargo test`.

pub use crate::base::slurm::plugin::log::Level;
pub use crate::types::CapabilityError;

/// Writes a log line through the host's `log` capability.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    crate::base::slurm::plugin::log::write(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    crate::testkit::with(|mock| mock.logs.push((level, message.to_string())));
}

/// Seconds since the Unix epoch, as the host defines it (virtual time in
/// simulations).
pub fn now() -> i64 {
    #[cfg(target_arch = "wasm32")]
    return crate::base::slurm::plugin::clock::now();
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| mock.now);
}

/// A monotonic nanosecond counter.
pub fn monotonic_nanos() -> u64 {
    #[cfg(target_arch = "wasm32")]
    return crate::base::slurm::plugin::clock::monotonic_nanos();
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| mock.monotonic_nanos);
}

/// The node's CPU layout (`topology` capability; denied unless granted).
#[cfg(feature = "task")]
pub fn cpu_layout() -> Result<crate::task::topology::CpuLayout, CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    return crate::task::topology::read_layout();
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| mock.cpu_layout.clone());
}

/// Binds `pid` to the OS CPUs in `cpus` (`cpuset` capability; denied unless granted).
#[cfg(feature = "task")]
pub fn bind_cpus(pid: u32, cpus: &crate::Bitmap) -> Result<(), CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    return crate::task::cpuset::bind(pid, &cpus.into());
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| match &mock.cpuset_denied {
        Some(e) => Err(e.clone()),
        None => {
            mock.bound.push((pid, cpus.clone()));
            Ok(())
        }
    });
}

/// The OS CPUs `pid` may currently run on (`cpuset` capability; denied
/// unless granted). The mock host answers the last binding it recorded for
/// `pid`, or `failed` when it recorded none.
#[cfg(feature = "task")]
pub fn cpus_of(pid: u32) -> Result<crate::Bitmap, CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    return crate::task::cpuset::get(pid).and_then(|map| {
        crate::Bitmap::from_words(map.len, &map.words).map_err(CapabilityError::Failed)
    });
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| match &mock.cpuset_denied {
        Some(e) => Err(e.clone()),
        None => mock
            .bound
            .iter()
            .rev()
            .find(|(p, _)| *p == pid)
            .map(|(_, cpus)| cpus.clone())
            .ok_or_else(|| CapabilityError::Failed(format!("pid {pid} was never bound"))),
    });
}

/// The GPUs of the node (`gpu` capability; denied unless granted).
#[cfg(feature = "gres")]
pub fn gpu_devices() -> Result<Vec<crate::gres::gpu::GpuDevice>, CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    return crate::gres::gpu::devices();
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| mock.gpus.clone());
}

/// Sets a GPU's application clocks (`gpu-control` capability; denied unless granted).
#[cfg(feature = "gres")]
pub fn set_gpu_clocks(
    index: u32,
    clocks: crate::gres::gpu_control::Clocks,
) -> Result<(), CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    return crate::gres::gpu_control::set_application_clocks(index, clocks);
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| match &mock.gpu_control_denied {
        Some(e) => Err(e.clone()),
        None => {
            mock.clocks_set.push((index, clocks));
            Ok(())
        }
    });
}

/// Supported memory clocks of GPU `index` in MHz, highest first (`gpu`
/// capability; denied unless granted). The mock host answers from
/// `MockHost::gpu_clocks`, or with `MockHost::gpus`'s error when that is one.
#[cfg(feature = "gres")]
pub fn gpu_memory_clocks(index: u32) -> Result<Vec<u32>, CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    return crate::gres::gpu::supported_memory_clocks(index);
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| {
        mock.gpus.as_ref().map_err(Clone::clone)?;
        let clocks: Vec<u32> = mock
            .gpu_clocks
            .iter()
            .filter(|(i, _, _)| *i == index)
            .map(|(_, memory, _)| *memory)
            .collect();
        if clocks.is_empty() {
            return Err(CapabilityError::Failed(format!(
                "no GPU with index {index}"
            )));
        }
        Ok(clocks)
    });
}

/// Supported graphics clocks of GPU `index` at memory clock `memory_mhz`,
/// highest first (`gpu` capability; denied unless granted).
#[cfg(feature = "gres")]
pub fn gpu_graphics_clocks(index: u32, memory_mhz: u32) -> Result<Vec<u32>, CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    return crate::gres::gpu::supported_graphics_clocks(index, memory_mhz);
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| {
        mock.gpus.as_ref().map_err(Clone::clone)?;
        mock.gpu_clocks
            .iter()
            .find(|(i, memory, _)| *i == index && *memory == memory_mhz)
            .map(|(_, _, graphics)| graphics.clone())
            .ok_or_else(|| {
                CapabilityError::Failed(format!(
                    "GPU {index} does not support a memory clock of {memory_mhz} MHz"
                ))
            })
    });
}

/// Restores a GPU's default clocks (`gpu-control` capability; denied unless granted).
#[cfg(feature = "gres")]
pub fn reset_gpu_clocks(index: u32) -> Result<(), CapabilityError> {
    #[cfg(target_arch = "wasm32")]
    return crate::gres::gpu_control::reset_application_clocks(index);
    #[cfg(not(target_arch = "wasm32"))]
    return crate::testkit::with(|mock| match &mock.gpu_control_denied {
        Some(e) => Err(e.clone()),
        None => {
            mock.clocks_reset.push(index);
            Ok(())
        }
    });
}

/// Logs at error level: `slurm_wasm_sdk::error!("bad {x}")`.
#[macro_export]
macro_rules! error {
    ($($arg:tt)*) => { $crate::host::log($crate::host::Level::Error, &format!($($arg)*)) };
}

/// Logs at warning level.
#[macro_export]
macro_rules! warn {
    ($($arg:tt)*) => { $crate::host::log($crate::host::Level::Warn, &format!($($arg)*)) };
}

/// Logs at info level.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => { $crate::host::log($crate::host::Level::Info, &format!($($arg)*)) };
}

/// Logs at debug level.
#[macro_export]
macro_rules! debug {
    ($($arg:tt)*) => { $crate::host::log($crate::host::Level::Debug, &format!($($arg)*)) };
}
