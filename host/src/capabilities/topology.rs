//! The `topology` capability: the CPU layout of the machine.

use crate::bindings::task::slurm::plugin::topology::CpuLayout;
use crate::bindings::types::CapabilityError;

/// Answers `topology.read-layout`.
pub trait TopologyProvider: Send + Sync {
    fn cpu_layout(&self) -> Result<CpuLayout, CapabilityError>;
}

/// The OS CPU ids of `cores` (abstract core indices) in `layout`: core `c`
/// holds abstract CPUs `c * threads .. (c + 1) * threads`, as Slurm counts
/// a node's CPUs (socket, then core, then thread). Cores past the layout
/// hold none. Ascending.
pub fn cpus_of_cores(layout: &CpuLayout, cores: &[u32]) -> Vec<u32> {
    let threads = usize::from(layout.threads_per_core.max(1));
    let mut cpus: Vec<u32> = cores
        .iter()
        .filter_map(|&c| {
            let first = (c as usize).checked_mul(threads)?;
            layout.block_map.get(first..first.saturating_add(threads))
        })
        .flatten()
        .copied()
        .collect();
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// A fixed layout (tests, simulations, a node described in a file).
#[derive(Debug, Clone)]
pub struct FixedTopology(pub CpuLayout);

impl FixedTopology {
    /// `sockets x cores x threads` CPUs. `hyperthread_numbering` chooses the
    /// OS numbering: false = identity (abstract index = OS id), true = the
    /// usual Intel order where SMT siblings are `n` and `n + sockets*cores`
    /// (spec 5.2).
    pub fn new(sockets: u16, cores: u16, threads: u16, hyperthread_numbering: bool) -> Self {
        let cores_total = u32::from(sockets) * u32::from(cores);
        let n = cores_total * u32::from(threads);
        let block_map = (0..n)
            .map(|abstract_cpu| {
                if hyperthread_numbering {
                    let core = abstract_cpu / u32::from(threads);
                    let thread = abstract_cpu % u32::from(threads);
                    core + thread * cores_total
                } else {
                    abstract_cpu
                }
            })
            .collect();
        FixedTopology(CpuLayout {
            sockets,
            cores_per_socket: cores,
            threads_per_core: threads,
            block_map,
            numa_node_of_cpu: Vec::new(),
        })
    }
}

impl TopologyProvider for FixedTopology {
    fn cpu_layout(&self) -> Result<CpuLayout, CapabilityError> {
        Ok(self.0.clone())
    }
}

/// Reads the layout from Linux sysfs (`/sys/devices/system/cpu/cpuN/topology`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SysfsTopology;

impl TopologyProvider for SysfsTopology {
    fn cpu_layout(&self) -> Result<CpuLayout, CapabilityError> {
        read_sysfs(std::path::Path::new("/sys/devices/system/cpu")).map_err(|e| {
            CapabilityError::Unavailable(format!("reading CPU topology from sysfs: {e}"))
        })
    }
}

/// One online CPU as sysfs describes it.
struct SysCpu {
    os_id: u32,
    package: u32,
    core: u32,
}

fn read_number(path: &std::path::Path) -> std::io::Result<u32> {
    let text = std::fs::read_to_string(path)?;
    text.trim().parse().map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: not a number", path.display()),
        )
    })
}

/// Builds Slurm's abstract order (socket, core, thread) from sysfs ids.
fn read_sysfs(root: &std::path::Path) -> std::io::Result<CpuLayout> {
    let mut cpus = Vec::new();
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let topo = entry.path().join("topology");
        if !topo.is_dir() {
            continue;
        }
        cpus.push(SysCpu {
            os_id: id,
            package: read_number(&topo.join("physical_package_id"))?,
            core: read_number(&topo.join("core_id"))?,
        });
    }
    if cpus.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no CPUs listed",
        ));
    }
    cpus.sort_by_key(|c| (c.package, c.core, c.os_id));
    let mut packages: Vec<u32> = cpus.iter().map(|c| c.package).collect();
    packages.dedup();
    let mut cores: Vec<(u32, u32)> = cpus.iter().map(|c| (c.package, c.core)).collect();
    cores.dedup();
    let sockets = packages.len() as u16;
    let cores_per_socket = (cores.len() / packages.len()).max(1) as u16;
    let threads_per_core = (cpus.len() / cores.len()).max(1) as u16;
    Ok(CpuLayout {
        sockets,
        cores_per_socket,
        threads_per_core,
        block_map: cpus.iter().map(|c| c.os_id).collect(),
        numa_node_of_cpu: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyperthread_numbering_matches_spec_5_2() {
        // spec 5.2: os_id = core_index + thread * (S*C) on a 2x4x2 node.
        let FixedTopology(layout) = FixedTopology::new(2, 4, 2, true);
        assert_eq!(&layout.block_map[..4], &[0, 8, 1, 9]);
        assert_eq!(layout.block_map[15], 15);
        let FixedTopology(identity) = FixedTopology::new(2, 4, 2, false);
        assert_eq!(identity.block_map, (0..16).collect::<Vec<_>>());
    }

    #[test]
    fn cores_hold_their_threads_in_os_numbering() {
        let FixedTopology(layout) = FixedTopology::new(2, 4, 2, true);
        assert_eq!(cpus_of_cores(&layout, &[0, 5]), [0, 5, 8, 13]);
        assert_eq!(cpus_of_cores(&layout, &[8, u32::MAX]), [] as [u32; 0]);
        let FixedTopology(identity) = FixedTopology::new(1, 4, 1, false);
        assert_eq!(cpus_of_cores(&identity, &[1, 3]), [1, 3]);
    }

    #[test]
    fn sysfs_layout_of_this_machine_is_consistent() {
        let Ok(layout) = SysfsTopology.cpu_layout() else {
            eprintln!("skipped: no sysfs CPU topology on this machine");
            return;
        };
        let n = usize::from(layout.sockets)
            * usize::from(layout.cores_per_socket)
            * usize::from(layout.threads_per_core);
        assert_eq!(layout.block_map.len(), n);
    }
}
