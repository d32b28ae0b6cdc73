//! An allocation (`job-resources`) as `scontrol show job -d` shows it: the
//! node list, and per node the CPU ids, memory and GRES devices
//! (`Nodes=n1 CPU_IDs=0-3 Mem=1000 GRES=gpu:1(IDX:0)`).
//!
//! Conventions are Slurm 22.05's:
//!
//! - `CPU_IDs` are abstract CPU ids of the allocated cores, every thread of
//!   each: core `k` of a node with `T` threads per core is CPUs
//!   `k*T .. k*T+T-1` (so a `-n1` job under `CR_CPU` still shows `0-1` on
//!   two-thread cores), written as ranges (`0-1,4-5`).
//! - `GRES` lists each allocated GRES as `name[:type]:count(IDX:devices)`,
//!   comma-separated, empty when the node has none for the job.
//! - Node lists are compressed the way Slurm's hostlists print
//!   (`n[1-2,4]`).

use slurm_wasm_host::ranges;
use slurm_wasm_host::types::{JobResources, Node};

/// One node of an allocation, as the `Nodes=` line of `scontrol show job
/// -d` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAllocation {
    /// The node's name.
    pub node: String,
    /// CPUs allocated (threads counted).
    pub cpus: u16,
    /// `CPU_IDs=`.
    pub cpu_ids: String,
    /// `Mem=` in MB.
    pub memory: u64,
    /// `GRES=`.
    pub gres: String,
}

/// The per-node view of `resources` on the node table `nodes`, in
/// node-index order. A `per-node` entry whose index is not in `nodes` is
/// shown under the name `#<index>`.
pub fn node_allocations(nodes: &[Node], resources: &JobResources) -> Vec<NodeAllocation> {
    resources
        .per_node
        .iter()
        .map(|r| {
            let node = nodes.iter().find(|n| n.index == r.node_index);
            let threads = node.map_or(1, |n| u32::from(n.threads_per_core.max(1)));
            let cpu_ids = r
                .cores
                .ones()
                .flat_map(|core| core * threads..(core + 1) * threads);
            let gres = r
                .gres
                .iter()
                .map(|g| {
                    let devices = g
                        .devices
                        .as_ref()
                        .map(|d| d.ones().collect::<Vec<_>>())
                        .unwrap_or_default();
                    let name = match &g.type_name {
                        Some(t) => format!("{}:{t}", g.name),
                        None => g.name.clone(),
                    };
                    format!("{name}:{}(IDX:{})", g.count, ranges::format(devices))
                })
                .collect::<Vec<_>>()
                .join(",");
            NodeAllocation {
                node: node.map_or_else(|| format!("#{}", r.node_index), |n| n.name.clone()),
                cpus: r.cpus,
                cpu_ids: ranges::format(cpu_ids),
                memory: r.memory,
                gres,
            }
        })
        .collect()
}

/// The names of the nodes set in `resources.nodes` (all a will-run answer
/// carries), in index order; a set bit past the table shows as `#<index>`.
pub fn node_names(nodes: &[Node], resources: &JobResources) -> Vec<String> {
    resources
        .nodes
        .ones()
        .map(|i| {
            nodes
                .iter()
                .find(|n| n.index == i)
                .map_or_else(|| format!("#{i}"), |n| n.name.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_host::fixtures::{bitmap, node};
    use slurm_wasm_host::types::{GresAllocation, NodeResources};

    #[test]
    fn scontrol_node_lines() {
        // Anchor job a24 (cons_tres CR_Core_Memory): `--gres=gpu:1 -n4` got
        // `Nodes=n3 CPU_IDs=4-7 Mem=1000 GRES=gpu:1(IDX:1)`: cores 2-3 of a
        // 2-thread node.
        let nodes: Vec<Node> = (0..4)
            .map(|i| {
                let mut n = node(i, &format!("n{}", i + 1), 2, 2, 2, 4000);
                n.threads_per_core = 2;
                n
            })
            .collect();
        let resources = JobResources {
            nodes: bitmap(4, [2]),
            ncpus: 4,
            per_node: vec![NodeResources {
                node_index: 2,
                cores: bitmap(4, [2, 3]),
                cpus: 4,
                memory: 1000,
                gres: vec![GresAllocation {
                    name: "gpu".into(),
                    type_name: None,
                    count: 1,
                    devices: Some(bitmap(2, [1])),
                    per_device: vec![1],
                }],
            }],
            whole_nodes: false,
        };
        assert_eq!(
            node_allocations(&nodes, &resources),
            [NodeAllocation {
                node: "n3".into(),
                cpus: 4,
                cpu_ids: "4-7".into(),
                memory: 1000,
                gres: "gpu:1(IDX:1)".into(),
            }]
        );
    }
}
