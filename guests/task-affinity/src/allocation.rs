//! The step's CPUs on this node (Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `_get_avail_map`): (the
//! allocated abstract CPUs) and `_alloc_mask` (how many sockets, cores and
//! threads are whole, and the allocation mask).

use slurm_wasm_sdk::Bitmap;

use crate::hardware::Hardware;
use crate::mask;

/// `CORE_SPEC_THREAD`: a `job_core_spec` with this bit counts threads.
pub const CORE_SPEC_THREAD: u16 = 0x8000;

/// The threads a `--thread-spec` reserves (0 for none or a core count).
pub fn spec_threads(job_core_spec: Option<u16>) -> usize {
    match job_core_spec {
        Some(spec) if spec & CORE_SPEC_THREAD != 0 && spec != CORE_SPEC_THREAD => {
            usize::from(spec & !CORE_SPEC_THREAD)
        }
        _ => 0,
    }
}

/// The node's shape as the controller knows it (the credential's sockets
/// and cores per socket for this node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CredentialShape {
    pub sockets: u16,
    pub cores: u16,
}

impl CredentialShape {
    /// Cores in the controller's view.
    pub fn total_cores(self) -> usize {
        usize::from(self.sockets) * usize::from(self.cores)
    }
}

/// The step's CPUs on this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// Allocated abstract CPUs, `block_map_size` bits: every configured
    /// thread of each allocated core, less `--thread-spec` threads.
    pub cpus: Bitmap,
    /// Every CPU of the node is allocated.
    pub whole_node: bool,
    pub whole_sockets: usize,
    /// Sockets with some but not all CPUs allocated.
    pub part_sockets: usize,
    pub whole_cores: usize,
    /// Cores with some but not all threads allocated.
    pub part_cores: usize,
    /// Allocated CPUs.
    pub whole_threads: usize,
    /// The abstract allocation mask behind [`Allocation::os_mask`].
    mask: Bitmap,
}

impl Allocation {
    /// Builds the allocation from this node's slice of the step core bitmap
    /// (`cores`, one bit per core in the controller's numbering).
    ///
    /// When the controller's view holds more cores than the hardware, core
    /// indices wrap around the hardware's core count, and CPU indices around
    /// the map size, as Slurm does for a slurmd out of step with slurmctld.
    /// Fails when the credential gives the node no cores.
    pub fn of_step(
        cores: &Bitmap,
        shape: CredentialShape,
        hw: &Hardware,
        job_core_spec: Option<u16>,
    ) -> Result<Self, String> {
        let size = hw.size();
        let threads = usize::from(hw.threads);
        let num_cores = shape.total_cores().min(hw.total_cores());
        if num_cores == 0 {
            return Err(format!(
                "the credential gives this node {} sockets x {} cores",
                shape.sockets, shape.cores
            ));
        }
        let mut requested = Bitmap::new(num_cores);
        for core in (0..shape.total_cores()).filter(|&p| cores.get(p)) {
            requested.set(core % num_cores);
        }
        let mut cpus = Bitmap::new(size);
        for core in requested.ones() {
            let core = core % size;
            for t in 0..threads {
                cpus.set((core * threads + t) % size);
            }
        }
        let spec = spec_threads(job_core_spec);
        clear_spec_threads(&mut cpus, hw, spec, 0);

        let mut alloc = Allocation {
            mask: Bitmap::new(size),
            cpus,
            whole_node: false,
            whole_sockets: 0,
            part_sockets: 0,
            whole_cores: 0,
            part_cores: 0,
            whole_threads: 0,
        };
        alloc.count(hw);
        clear_spec_threads(&mut alloc.mask, hw, spec, 1);
        Ok(alloc)
    }

    /// Counts whole and partial units over the hardware grid and copies the
    /// CPUs it visits into the allocation mask.
    fn count(&mut self, hw: &Hardware) {
        let size = self.cpus.len();
        let mut i = 0;
        let mut socket_missed = false;
        for _ in 0..hw.sockets {
            let (mut core_hit, mut core_missed) = (false, false);
            for _ in 0..hw.cores {
                let (mut thread_hit, mut thread_missed) = (false, false);
                for _ in 0..hw.threads {
                    if i >= size {
                        i = 0;
                    }
                    if self.cpus.get(i) {
                        self.mask.set(i);
                        self.whole_threads += 1;
                        thread_hit = true;
                        core_hit = true;
                    } else {
                        thread_missed = true;
                    }
                    i += 1;
                }
                if !thread_missed {
                    self.whole_cores += 1;
                } else {
                    self.part_cores += usize::from(thread_hit);
                    core_missed = true;
                }
            }
            if !core_missed {
                self.whole_sockets += 1;
            } else {
                self.part_sockets += usize::from(core_hit);
                socket_missed = true;
            }
        }
        self.whole_node = !socket_missed;
    }

    /// The allocation in OS CPU ids, `block_map_size` bits wide; widened to
    /// whole NUMA nodes when `ldoms` (binding to locality domains on a NUMA
    /// machine). Its [`Bitmap::to_hex_mask`] is the "allocation mask" of
    /// error messages and of `MASK` fallbacks.
    pub fn os_mask(&self, hw: &Hardware, ldoms: bool) -> Bitmap {
        let mut os = mask::to_os(&self.mask, hw);
        if ldoms {
            mask::widen_to_ldoms(&mut os, hw);
        }
        os
    }
}

/// Removes `count` specialised threads: highest thread index first, then
/// highest core, then highest socket. `lowest` is the lowest thread and core
/// index visited: 0 for the allocated CPUs, 1 for the allocation mask
/// (Slurm's two loops differ so; thread 0 and core 0 are never cleared from
/// the mask).
fn clear_spec_threads(map: &mut Bitmap, hw: &Hardware, mut count: usize, lowest: usize) {
    let (cores, threads) = (usize::from(hw.cores), usize::from(hw.threads));
    for t in (lowest..threads).rev() {
        for c in (lowest..cores).rev() {
            for s in (0..usize::from(hw.sockets)).rev() {
                if count == 0 {
                    return;
                }
                map.clear(((s * cores + c) * threads + t) % map.len());
                count -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::testing::{hyperthreaded, identity};

    const SHAPE: CredentialShape = CredentialShape {
        sockets: 2,
        cores: 4,
    };

    fn step(cores: &[usize], hw: &Hardware) -> Allocation {
        Allocation::of_step(
            &Bitmap::from_bits(8, cores.iter().copied()),
            SHAPE,
            hw,
            None,
        )
        .unwrap()
    }

    #[test]
    fn whole_node_counts() {
        let a = step(&[0, 1, 2, 3, 4, 5, 6, 7], &identity(2, 4, 2));
        assert!(a.whole_node);
        assert_eq!(
            (a.whole_sockets, a.whole_cores, a.whole_threads),
            (2, 8, 16)
        );
        assert_eq!((a.part_sockets, a.part_cores), (0, 0));
        assert_eq!(a.os_mask(&identity(2, 4, 2), false).to_hex_mask(), "0xFFFF");
    }

    #[test]
    fn partial_node_counts_and_masks() {
        // Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `_get_avail_map` and `_alloc_mask` for a step
        // owning cores {0,1,4} of the 2x4x2 node.
        let hw = hyperthreaded(2, 4, 2);
        let a = step(&[0, 1, 4], &hw);
        assert!(!a.whole_node);
        assert_eq!(a.cpus.ones().collect::<Vec<_>>(), [0, 1, 2, 3, 8, 9]);
        assert_eq!((a.whole_sockets, a.part_sockets), (0, 2));
        assert_eq!((a.whole_cores, a.part_cores, a.whole_threads), (3, 0, 6));
        assert_eq!(a.os_mask(&identity(2, 4, 2), false).to_hex_mask(), "0x030F");
        assert_eq!(a.os_mask(&hw, false).to_hex_mask(), "0x1313");
    }

    #[test]
    fn thread_spec_removes_highest_threads_first() {
        // Two specialised threads: thread 1 of core 3 on socket 1, then on
        // socket 0.
        let hw = identity(2, 4, 2);
        let all = Bitmap::from_bits(8, 0..8);
        let a = Allocation::of_step(&all, SHAPE, &hw, Some(CORE_SPEC_THREAD | 2)).unwrap();
        assert_eq!(a.whole_threads, 14);
        assert!(!a.cpus.get(15) && !a.cpus.get(7) && a.cpus.get(14));
        assert_eq!((a.whole_cores, a.part_cores), (6, 2));
        assert_eq!((a.whole_sockets, a.part_sockets), (0, 2));
        assert_eq!(spec_threads(Some(CORE_SPEC_THREAD)), 0);
        assert_eq!(spec_threads(Some(2)), 0);
    }

    #[test]
    fn a_larger_controller_view_wraps() {
        // The controller thinks the node has 2x8 cores; the hardware 1x4x1.
        let hw = identity(1, 4, 1);
        let shape = CredentialShape {
            sockets: 2,
            cores: 8,
        };
        let a = Allocation::of_step(&Bitmap::from_bits(16, [5, 9]), shape, &hw, None).unwrap();
        assert_eq!(a.cpus.ones().collect::<Vec<_>>(), [1]);
        let none = CredentialShape {
            sockets: 0,
            cores: 4,
        };
        assert!(Allocation::of_step(&Bitmap::new(0), none, &hw, None).is_err());
    }
}
