//! The `topology` capability: the CPU layout of the machine.

use crate::bindings::task::slurm::plugin::topology::CpuLayout;
use crate::bindings::types::CapabilityError;

/// Answers `topology.read-layout`.
pub trait TopologyProvider: Send + Sync {
    /// The node's sockets, cores and threads and each abstract CPU's OS
    /// id; `unavailable` when the provider cannot read the machine.
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
    /// (Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`).
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

/// Reads the layout from Linux sysfs (`/sys/devices/system/cpu/cpuN/topology`),
/// and each CPU's NUMA node from `/sys/devices/system/node/nodeN/cpulist`
/// (what `--cpu-bind=ldoms` binds to, as Slurm's task/affinity reads it
/// through libnuma).
#[derive(Debug, Clone, Copy, Default)]
pub struct SysfsTopology;

impl TopologyProvider for SysfsTopology {
    fn cpu_layout(&self) -> Result<CpuLayout, CapabilityError> {
        read_sysfs(std::path::Path::new("/sys/devices/system")).map_err(|e| {
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

/// Builds Slurm's abstract order (socket, core, thread) from the sysfs ids
/// under `system/cpu`, and the NUMA nodes under `system/node` (none when the
/// kernel lists no node directory: a machine without NUMA support).
fn read_sysfs(system: &std::path::Path) -> std::io::Result<CpuLayout> {
    let mut cpus = Vec::new();
    for entry in std::fs::read_dir(system.join("cpu"))? {
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
    let highest = cpus.iter().map(|c| c.os_id).max().unwrap_or(0);
    Ok(CpuLayout {
        sockets,
        cores_per_socket,
        threads_per_core,
        block_map: cpus.iter().map(|c| c.os_id).collect(),
        numa_node_of_cpu: read_numa_nodes(&system.join("node"), highest)?,
    })
}

/// The NUMA node of each OS CPU id `0..=highest` from `nodeN/cpulist`;
/// empty when `dir` does not exist or lists no node. A CPU no node lists is
/// given node 0. Fails on a list that does not read.
fn read_numa_nodes(dir: &std::path::Path, highest: u32) -> std::io::Result<Vec<u32>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut of_cpu = vec![0; highest as usize + 1];
    let mut any = false;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(node) = name
            .strip_prefix("node")
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path().join("cpulist");
        let text = std::fs::read_to_string(&path)?;
        let text = text.trim();
        if text.is_empty() {
            continue; // a node without CPUs (memory only)
        }
        let listed = crate::ranges::parse(text, u32::from(u16::MAX)).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: not a CPU list: {text}", path.display()),
            )
        })?;
        for cpu in listed {
            if let Some(slot) = of_cpu.get_mut(cpu as usize) {
                *slot = node;
                any = true;
            }
        }
    }
    Ok(if any { of_cpu } else { Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyperthread_numbering_matches_block_map() {
        // Slurm 22.05.8 src/slurmd/common/xcpuinfo.c `_compute_block_map`: os_id = core_index + thread * (S*C) on a 2x4x2 node.
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

    /// A sysfs tree of 2 sockets x 2 cores x 1 thread, CPUs 0-1 on NUMA
    /// node 0 and 2-3 on node 1, and a memory-only node 2.
    fn fake_sysfs(numa: bool) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for cpu in 0..4u32 {
            let topo = dir.path().join(format!("cpu/cpu{cpu}/topology"));
            std::fs::create_dir_all(&topo).unwrap();
            std::fs::write(topo.join("physical_package_id"), format!("{}\n", cpu / 2)).unwrap();
            std::fs::write(topo.join("core_id"), format!("{}\n", cpu % 2)).unwrap();
        }
        if numa {
            for (node, list) in [(0, "0-1\n"), (1, "2,3\n"), (2, "\n")] {
                let d = dir.path().join(format!("node/node{node}"));
                std::fs::create_dir_all(&d).unwrap();
                std::fs::write(d.join("cpulist"), list).unwrap();
            }
            std::fs::write(dir.path().join("node/online"), "0-2\n").unwrap();
        }
        dir
    }

    #[test]
    fn numa_nodes_come_from_the_node_cpulists() {
        let dir = fake_sysfs(true);
        let layout = read_sysfs(dir.path()).unwrap();
        assert_eq!((layout.sockets, layout.cores_per_socket), (2, 2));
        assert_eq!(layout.numa_node_of_cpu, [0, 0, 1, 1]);
        let dir = fake_sysfs(false);
        assert!(read_sysfs(dir.path()).unwrap().numa_node_of_cpu.is_empty());
        let dir = fake_sysfs(true);
        std::fs::write(dir.path().join("node/node1/cpulist"), "2-x\n").unwrap();
        let e = read_sysfs(dir.path()).unwrap_err();
        assert!(e.to_string().contains("not a CPU list: 2-x"), "{e}");
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
        if !layout.numa_node_of_cpu.is_empty() {
            let highest = layout.block_map.iter().max().copied().unwrap_or(0);
            assert_eq!(layout.numa_node_of_cpu.len(), highest as usize + 1);
        }
    }
}
