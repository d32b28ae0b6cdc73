//! Building the contract's `job-resources` (`job_resources_t`): one entry
//! per allocated node, in node-index order, and the run-length CPU arrays
//! (`cpu_array_value` / `cpu_array_reps`).

use slurm_wasm_sdk::types::{GresAllocation, JobResources, NodeResources};
use slurm_wasm_sdk::Bitmap;

/// Collects per-node resources in any order and emits them sorted.
#[derive(Debug, Clone)]
pub struct ResourcesBuilder {
    node_count: usize,
    whole_nodes: bool,
    entries: Vec<NodeResources>,
}

impl ResourcesBuilder {
    /// An empty allocation over a table of `node_count` nodes.
    pub fn new(node_count: usize, whole_nodes: bool) -> Self {
        ResourcesBuilder {
            node_count,
            whole_nodes,
            entries: Vec::new(),
        }
    }

    /// Adds node `node` with `cores` (bit = core index of the node), `cpus`
    /// CPUs and `memory` MB. A node added twice keeps the later entry.
    pub fn add(
        &mut self,
        node: usize,
        cores: &Bitmap,
        cpus: u16,
        memory: u64,
        gres: Vec<GresAllocation>,
    ) -> &mut Self {
        self.entries.retain(|e| e.node_index as usize != node);
        self.entries.push(NodeResources {
            node_index: node as u32,
            cores: cores.into(),
            cpus,
            memory,
            gres,
        });
        self
    }

    /// The allocation with `ncpus` = the sum of the per-node CPUs.
    pub fn build(self) -> JobResources {
        let ncpus = self.entries.iter().map(|e| u32::from(e.cpus)).sum();
        self.build_with_ncpus(ncpus)
    }

    /// The allocation with an explicit total CPU count.
    pub fn build_with_ncpus(mut self, ncpus: u32) -> JobResources {
        self.entries.sort_by_key(|e| e.node_index);
        let nodes = Bitmap::from_bits(
            self.node_count,
            self.entries.iter().map(|e| e.node_index as usize),
        );
        JobResources {
            nodes: (&nodes).into(),
            ncpus,
            per_node: self.entries,
            whole_nodes: self.whole_nodes,
        }
    }
}

/// `cpu_array_value` / `cpu_array_reps`: runs of equal values, e.g.
/// `[4,4,2,2,2,2,2,2]` → values `[4,2]`, reps `[2,6]` (Slurm 22.05.8 src/common/job_resources.c `build_job_resources_cpu_array`).
pub fn cpu_array(cpus: &[u16]) -> (Vec<u16>, Vec<u32>) {
    let mut values: Vec<u16> = Vec::new();
    let mut reps: Vec<u32> = Vec::new();
    for &c in cpus {
        match values.last() {
            Some(&v) if v == c => *reps.last_mut().expect("reps follow values") += 1,
            _ => {
                values.push(c);
                reps.push(1);
            }
        }
    }
    (values, reps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_length_example() {
        assert_eq!(
            cpu_array(&[4, 4, 2, 2, 2, 2, 2, 2]),
            (vec![4, 2], vec![2, 6])
        );
        assert_eq!(cpu_array(&[]), (vec![], vec![]));
    }

    #[test]
    fn entries_come_out_in_node_order() {
        let mut b = ResourcesBuilder::new(5, true);
        b.add(3, &Bitmap::full(2), 4, 10, Vec::new())
            .add(1, &Bitmap::full(4), 8, 20, Vec::new());
        let r = b.build();
        assert_eq!(r.ncpus, 12);
        assert_eq!(r.nodes.len, 5);
        assert_eq!(r.nodes.words, vec![0b01010]);
        assert_eq!(
            r.per_node.iter().map(|e| e.node_index).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert!(r.whole_nodes);
    }
}
