//! The node's CPUs as slurmd sees them (Slurm 22.05.8 src/slurmd/common/xcpuinfo.c `xcpuinfo_hwloc_topo_get`): sockets, cores per
//! socket, threads per core, and `block_map`, the OS CPU id of each abstract
//! CPU (abstract index = (socket × cores + core) × threads + thread).

/// The node's CPU layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hardware {
    pub sockets: u16,
    pub cores: u16,
    pub threads: u16,
    /// `block_map[abstract] = os_id`; its length is slurmd's
    /// `block_map_size`, the width of every mask.
    pub block_map: Vec<u32>,
    /// The NUMA node of each OS CPU id. Empty on a machine that reports
    /// none: task/affinity then behaves as a Slurm built without libnuma
    /// (locality domains are sockets, `--cpu-bind=ldoms` does not widen).
    pub numa_node_of_cpu: Vec<u32>,
}

impl Hardware {
    /// Checks the layout: at least one socket, core, thread and CPU.
    pub fn new(
        sockets: u16,
        cores: u16,
        threads: u16,
        block_map: Vec<u32>,
        numa_node_of_cpu: Vec<u32>,
    ) -> Result<Self, String> {
        if sockets == 0 || cores == 0 || threads == 0 || block_map.is_empty() {
            return Err(format!(
                "unusable CPU layout: {sockets} sockets x {cores} cores x {threads} threads, {} CPUs",
                block_map.len()
            ));
        }
        Ok(Hardware {
            sockets,
            cores,
            threads,
            block_map,
            numa_node_of_cpu,
        })
    }

    /// `block_map_size`: the number of CPUs, the bit width of masks.
    pub fn size(&self) -> usize {
        self.block_map.len()
    }

    /// Cores of the node (`sockets × cores`).
    pub fn total_cores(&self) -> usize {
        usize::from(self.sockets) * usize::from(self.cores)
    }

    /// CPUs of one socket in abstract order (`cores × threads`).
    pub fn socket_width(&self) -> usize {
        usize::from(self.cores) * usize::from(self.threads)
    }

    /// The OS id of abstract CPU `index` (`BLOCK_MAP`), an index past the
    /// map wrapping around it.
    pub fn os_cpu(&self, index: usize) -> u32 {
        self.block_map[index % self.size()]
    }

    /// Does the machine report NUMA nodes (Slurm's `HAVE_NUMA` build)?
    pub fn has_numa(&self) -> bool {
        !self.numa_node_of_cpu.is_empty()
    }

    /// The NUMA node of OS CPU `cpu`, if reported.
    pub fn numa_node(&self, cpu: usize) -> Option<u32> {
        self.numa_node_of_cpu.get(cpu).copied()
    }

    /// The highest NUMA node id (`numa_max_node`), 0 without NUMA.
    pub fn max_numa_node(&self) -> u32 {
        self.numa_node_of_cpu.iter().copied().max().unwrap_or(0)
    }
}

/// Layouts used across the crate's tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::Hardware;

    /// A node where abstract and OS numbering agree.
    pub fn identity(sockets: u16, cores: u16, threads: u16) -> Hardware {
        let n = u32::from(sockets) * u32::from(cores) * u32::from(threads);
        Hardware::new(sockets, cores, threads, (0..n).collect(), Vec::new()).unwrap()
    }

    /// The usual Intel numbering (Slurm 22.05.8 src/slurmd/common/xcpuinfo.c `_compute_block_map`): SMT siblings are `n` and
    /// `n + sockets × cores`, so `os = core_index + thread × (S×C)`.
    pub fn hyperthreaded(sockets: u16, cores: u16, threads: u16) -> Hardware {
        let total_cores = u32::from(sockets) * u32::from(cores);
        let t = u32::from(threads);
        let map = (0..total_cores * t)
            .map(|a| a / t + (a % t) * total_cores)
            .collect();
        Hardware::new(sockets, cores, threads, map, Vec::new()).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn block_map_numberings() {
        let ht = hyperthreaded(2, 4, 2);
        assert_eq!(&ht.block_map[..4], &[0, 8, 1, 9]);
        assert_eq!(ht.os_cpu(15), 15);
        assert_eq!(ht.os_cpu(16 + 2), 1);
        assert_eq!(identity(2, 4, 2).os_cpu(5), 5);
        assert_eq!(ht.socket_width(), 8);
        assert!(!ht.has_numa());
    }

    #[test]
    fn refuses_empty_layouts() {
        assert!(Hardware::new(0, 4, 2, vec![0], Vec::new()).is_err());
        assert!(Hardware::new(1, 1, 1, Vec::new(), Vec::new()).is_err());
    }
}
