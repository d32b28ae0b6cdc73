//! The machine's NVIDIA GPUs through NVML: [`NvmlGpu`].
//!
//! `libnvidia-ml.so` is opened (by `nvml-wrapper`, with `libloading`) on
//! the first call, not when the host starts, and kept open for the host's
//! life. Where it cannot be opened or initialised every call answers
//! `unavailable("no NVML: <reason>")`; a call NVML refuses (no permission
//! to change clocks, a device that does not support a query) answers
//! `failed` with NVML's reason.

use std::sync::OnceLock;

use nvml_wrapper::enum_wrappers::device::Clock;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

use super::{no_device, Clocks, GpuDevice, GpuProvider};
use crate::bindings::types::CapabilityError;
use crate::fixtures::bitmap;

/// The most NVLinks NVML reports per device (`NVML_NVLINK_MAX_LINKS` of
/// the NVML 12 headers; `nvml-wrapper` does not export it). Asking for a
/// link a device does not have is an error, which counts as no link.
const MAX_LINKS: u32 = 18;

/// The GPUs NVML reports (see the [module documentation](self)).
#[derive(Default)]
pub struct NvmlGpu {
    nvml: OnceLock<Result<Nvml, String>>,
}

fn failed(what: &str, error: NvmlError) -> CapabilityError {
    CapabilityError::Failed(format!("NVML {what}: {error}"))
}

impl NvmlGpu {
    fn nvml(&self) -> Result<&Nvml, CapabilityError> {
        self.nvml
            .get_or_init(|| Nvml::init().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| CapabilityError::Unavailable(format!("no NVML: {e}")))
    }

    fn device(&self, index: u32) -> Result<Device<'_>, CapabilityError> {
        let nvml = self.nvml()?;
        let count = nvml.device_count().map_err(|e| failed("device count", e))?;
        if index >= count {
            return Err(no_device(index, count as usize));
        }
        nvml.device_by_index(index)
            .map_err(|e| failed(&format!("device {index}"), e))
    }
}

/// The number of CPU ids the kernel may use (`/sys/devices/system/cpu/possible`,
/// `0-N`), 1024 when it cannot be read.
fn possible_cpus() -> u32 {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|text| {
            let last = text.trim().rsplit([',', '-']).next()?.to_owned();
            last.parse::<u32>().ok()
        })
        .map_or(1024, |max| max + 1)
}

/// One device's record, links counted later.
fn describe(index: u32, device: &Device<'_>, cpus: u32) -> Result<GpuDevice, CapabilityError> {
    let at = |what: &str| format!("device {index} {what}");
    let words = cpus.div_ceil(std::os::raw::c_ulong::BITS) as usize;
    let affinity = device
        .cpu_affinity(words.max(1))
        .map_err(|e| failed(&at("CPU affinity"), e))?;
    let word_bits = std::os::raw::c_ulong::BITS;
    let ids = affinity.iter().enumerate().flat_map(|(w, &word)| {
        (0..word_bits)
            .filter(move |b| word >> b & 1 == 1)
            .map(move |b| w as u32 * word_bits + b)
    });
    Ok(GpuDevice {
        index,
        uuid: device.uuid().map_err(|e| failed(&at("UUID"), e))?,
        name: device.name().map_err(|e| failed(&at("name"), e))?,
        memory_mb: device
            .memory_info()
            .map_err(|e| failed(&at("memory"), e))?
            .total
            / (1 << 20),
        minor_number: device
            .minor_number()
            .map_err(|e| failed(&at("minor number"), e))?,
        pci_bus_id: device
            .pci_info()
            .map_err(|e| failed(&at("PCI info"), e))?
            .bus_id,
        links: Vec::new(),
        cpu_affinity: bitmap(cpus, ids.filter(|&id| id < cpus)),
    })
}

/// NVLink counts from `device` to each device of `bus_ids` by index: one
/// per active link whose far end is that device. A device without NVLink
/// support (NVML answers "not supported") has none.
fn links(device: &Device<'_>, bus_ids: &[String]) -> Vec<u32> {
    let mut counts = vec![0u32; bus_ids.len()];
    for link in 0..MAX_LINKS {
        let wrapper = device.link_wrapper_for(link);
        if !wrapper.is_active().unwrap_or(false) {
            continue;
        }
        let Ok(remote) = wrapper.remote_pci_info() else {
            continue;
        };
        if let Some(peer) = bus_ids
            .iter()
            .position(|id| id.eq_ignore_ascii_case(&remote.bus_id))
        {
            counts[peer] += 1;
        }
    }
    counts
}

fn highest_first(mut clocks: Vec<u32>) -> Vec<u32> {
    clocks.sort_unstable_by(|a, b| b.cmp(a));
    clocks
}

impl GpuProvider for NvmlGpu {
    fn devices(&self) -> Result<Vec<GpuDevice>, CapabilityError> {
        let nvml = self.nvml()?;
        let count = nvml.device_count().map_err(|e| failed("device count", e))?;
        let cpus = possible_cpus();
        let handles = (0..count)
            .map(|i| {
                nvml.device_by_index(i)
                    .map_err(|e| failed(&format!("device {i}"), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut devices = handles
            .iter()
            .zip(0..)
            .map(|(d, i)| describe(i, d, cpus))
            .collect::<Result<Vec<_>, _>>()?;
        let bus_ids: Vec<String> = devices.iter().map(|d| d.pci_bus_id.clone()).collect();
        for (device, handle) in devices.iter_mut().zip(&handles) {
            device.links = links(handle, &bus_ids);
        }
        Ok(devices)
    }

    fn supported_memory_clocks(&self, index: u32) -> Result<Vec<u32>, CapabilityError> {
        self.device(index)?
            .supported_memory_clocks()
            .map(highest_first)
            .map_err(|e| failed(&format!("device {index} memory clocks"), e))
    }

    fn supported_graphics_clocks(
        &self,
        index: u32,
        memory_mhz: u32,
    ) -> Result<Vec<u32>, CapabilityError> {
        self.device(index)?
            .supported_graphics_clocks(memory_mhz)
            .map(highest_first)
            .map_err(|e| {
                failed(
                    &format!("device {index} graphics clocks at {memory_mhz} MHz"),
                    e,
                )
            })
    }

    fn application_clocks(&self, index: u32) -> Result<Clocks, CapabilityError> {
        let device = self.device(index)?;
        let read = |clock: Clock| {
            device
                .applications_clock(clock)
                .map_err(|e| failed(&format!("device {index} application clocks"), e))
        };
        Ok(Clocks {
            memory_mhz: read(Clock::Memory)?,
            graphics_mhz: read(Clock::Graphics)?,
        })
    }

    fn set_application_clocks(&self, index: u32, clocks: Clocks) -> Result<(), CapabilityError> {
        self.device(index)?
            .set_applications_clocks(clocks.memory_mhz, clocks.graphics_mhz)
            .map_err(|e| {
                failed(
                    &format!(
                        "device {index} set application clocks (memory {} MHz, graphics {} MHz)",
                        clocks.memory_mhz, clocks.graphics_mhz
                    ),
                    e,
                )
            })
    }

    fn reset_application_clocks(&self, index: u32) -> Result<(), CapabilityError> {
        self.device(index)?
            .reset_applications_clocks()
            .map_err(|e| failed(&format!("device {index} reset application clocks"), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_nvml_every_call_is_unavailable_or_works() {
        // This machine may or may not have NVML: without it every call
        // answers `unavailable("no NVML: ...")`; with it, devices() works.
        let gpu = NvmlGpu::default();
        match gpu.devices() {
            Err(CapabilityError::Unavailable(m)) => {
                assert!(m.starts_with("no NVML: "), "{m}");
                assert!(matches!(
                    gpu.reset_application_clocks(0),
                    Err(CapabilityError::Unavailable(_))
                ));
            }
            Ok(devices) => {
                let count = devices.len();
                for (i, d) in devices.iter().enumerate() {
                    assert_eq!(d.index as usize, i);
                    assert_eq!(d.links.len(), count);
                    assert!(!d.uuid.is_empty());
                }
                assert!(matches!(
                    gpu.supported_memory_clocks(count as u32),
                    Err(CapabilityError::Failed(m)) if m.starts_with("no GPU with index")
                ));
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn possible_cpus_cover_the_usable_ones() {
        // Every CPU this process may use has an id below the possible count.
        let usable = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(possible_cpus() as usize >= usable);
    }
}
