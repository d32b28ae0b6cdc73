//! The node table a select plugin keeps from `node-init`: what scheduling
//! reads of each `node` record, indexed by node index.

use slurm_wasm_sdk::types::{GresCount, Node, NodeBaseState, NodeState, NodeStateFlags};
use slurm_wasm_sdk::{Bitmap, Error};

/// One device group of a node's GRES, as a gres.conf line gives it (the
/// contract's `gres-device-group`; Slurm's topology record of the node's
/// `gres_node_state_t`, `topo_gres_cnt_avail` and `topo_core_bitmap`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceGroup {
    pub name: String,
    pub type_name: Option<String>,
    /// Devices of the group (shares, for a shared GRES such as `mps`).
    pub count: u64,
    /// `Cores=` as core indices of the node; `None`: usable from every core.
    pub cores: Option<Bitmap>,
}

/// One node, as select plugins read it.
#[derive(Debug, Clone)]
pub struct NodeRec {
    pub index: usize,
    pub name: String,
    /// Configured CPUs (`CPUs=`).
    pub cpus: u16,
    pub boards: u16,
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    /// `RealMemory`, MB.
    pub real_memory: u64,
    /// `MemSpecLimit`, MB.
    pub mem_spec_limit: u64,
    pub core_spec_count: u16,
    /// CPUs set aside for the system: `CPUSpecList`'s, else
    /// `CoreSpecCount` × threads per core.
    pub spec_cpus: u16,
    pub weight: u32,
    pub state: NodeState,
    /// Partition indices holding the node.
    pub partitions: Vec<u32>,
    /// Configured GRES counts (`Gres=`).
    pub gres: Vec<GresCount>,
    /// The device groups gres.conf gives the node, in table order (empty
    /// when it says nothing about the node: no device is then bound to
    /// cores).
    pub gres_topology: Vec<DeviceGroup>,
}

impl NodeRec {
    /// Cores of the node: boards × sockets × cores per socket (the contract
    /// counts sockets over all boards, so boards are not multiplied again).
    pub fn cores(&self) -> u32 {
        u32::from(self.sockets) * u32::from(self.cores_per_socket)
    }

    /// Slurm's `cpus_efctv`: the configured CPUs less those set aside for
    /// the system.
    pub fn effective_cpus(&self) -> u16 {
        self.cpus.saturating_sub(self.spec_cpus)
    }

    /// Memory jobs may use: `RealMemory − MemSpecLimit` (0 if the limit is larger).
    pub fn usable_memory(&self) -> u64 {
        self.real_memory.saturating_sub(self.mem_spec_limit)
    }

    /// `IS_NODE_ALLOCATED || IS_NODE_COMPLETING` (mixed counts as allocated,
    /// as in Slurm where MIXED is derived from ALLOCATED).
    pub fn is_allocated_or_completing(&self) -> bool {
        matches!(
            self.state.base,
            NodeBaseState::Allocated | NodeBaseState::Mixed
        ) || self.state.flags.contains(NodeStateFlags::COMPLETING)
    }

    /// Powered down or on its way up (`IS_NODE_POWERED_DOWN`,
    /// `IS_NODE_POWERING_UP`): not ready for a job.
    pub fn is_powered_off(&self) -> bool {
        self.state.flags.contains(NodeStateFlags::POWER_SAVE)
            || self.state.flags.contains(NodeStateFlags::POWERING_UP)
    }

    /// Configured count of GRES `name` on the node (of `type_name`, or of
    /// every type when `None`).
    pub fn gres_count(&self, name: &str, type_name: Option<&str>) -> u64 {
        self.gres
            .iter()
            .filter(|g| {
                g.name.eq_ignore_ascii_case(name)
                    && type_name.is_none_or(|t| g.type_name.as_deref() == Some(t))
            })
            .map(|g| g.count)
            .sum()
    }

    /// Converts a contract record; `EINVAL` when the CPU, socket, core or
    /// thread count is zero (any other `CPUs=` value is accepted, as Slurm
    /// does).
    pub fn from_node(node: &Node) -> Result<Self, Error> {
        for (field, value) in [
            ("cpus", node.cpus),
            ("sockets", node.sockets),
            ("cores-per-socket", node.cores_per_socket),
            ("threads-per-core", node.threads_per_core),
        ] {
            if value == 0 {
                return Err(Error::invalid(format!(
                    "node {} ({}): {field} is 0; expected at least 1",
                    node.index, node.name
                )));
            }
        }
        Ok(NodeRec {
            index: node.index as usize,
            name: node.name.clone(),
            cpus: node.cpus,
            boards: node.boards,
            sockets: node.sockets,
            cores_per_socket: node.cores_per_socket,
            threads_per_core: node.threads_per_core,
            real_memory: node.real_memory,
            mem_spec_limit: node.mem_spec_limit,
            core_spec_count: node.core_spec_count,
            spec_cpus: match &node.cpu_spec_list {
                Some(list) => list.words.iter().map(|w| w.count_ones()).sum::<u32>() as u16,
                None => node.core_spec_count.saturating_mul(node.threads_per_core),
            },
            weight: node.weight,
            state: node.state,
            partitions: node.partitions.clone(),
            gres: node.gres.clone(),
            gres_topology: node
                .gres_topology
                .iter()
                .map(|g| {
                    let cores = match &g.cores {
                        Some(b) => Some(Bitmap::try_from(b).map_err(|e| {
                            Error::invalid(format!(
                                "node {} ({}): Cores= of its {} devices: {}",
                                node.index, node.name, g.name, e.message
                            ))
                        })?),
                        None => None,
                    };
                    Ok(DeviceGroup {
                        name: g.name.clone(),
                        type_name: g.type_name.clone(),
                        count: g.count,
                        cores,
                    })
                })
                .collect::<Result<_, Error>>()?,
        })
    }
}

/// The node table, in node-index order.
#[derive(Debug, Clone, Default)]
pub struct NodeTable {
    nodes: Vec<NodeRec>,
}

impl NodeTable {
    /// Builds the table from `node-init`'s list. The list must hold the
    /// nodes in index order (`node[i].index == i`); anything else is
    /// `EINVAL` naming the first misplaced node.
    pub fn new(nodes: &[Node]) -> Result<Self, Error> {
        let mut table = Vec::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            if node.index as usize != i {
                return Err(Error::invalid(format!(
                    "node-init: node {} ({}) is at position {i}; nodes must be given in index order 0..{}",
                    node.index,
                    node.name,
                    nodes.len()
                )));
            }
            table.push(NodeRec::from_node(node)?);
        }
        Ok(NodeTable { nodes: table })
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn get(&self, index: usize) -> Option<&NodeRec> {
        self.nodes.get(index)
    }

    pub fn iter(&self) -> impl Iterator<Item = &NodeRec> {
        self.nodes.iter()
    }

    /// The node at `index`, or `EINVAL` naming `what` referred to it.
    pub fn node(&self, index: usize, what: &str) -> Result<&NodeRec, Error> {
        self.nodes.get(index).ok_or_else(|| {
            Error::invalid(format!(
                "{what}: node index {index} is outside the node table of {} nodes",
                self.nodes.len()
            ))
        })
    }

    /// Replaces one node's record (`update-node-config`/`-state`); `EINVAL`
    /// when its index is not in the table.
    pub fn update(&mut self, node: &Node) -> Result<&NodeRec, Error> {
        let rec = NodeRec::from_node(node)?;
        let what = format!("update of node {}", node.name);
        let slot = self
            .nodes
            .get_mut(rec.index)
            .ok_or_else(|| Error::invalid(format!("{what}: index {} not in table", rec.index)))?;
        *slot = rec;
        Ok(slot)
    }

    /// Looks a node up by name.
    pub fn by_name(&self, name: &str) -> Option<&NodeRec> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;

    #[test]
    fn builds_in_index_order_and_refuses_gaps() {
        let nodes = vec![
            fixtures::node(0, "n0", 2, 4, 2, 8000),
            fixtures::node(1, "n1", 1, 4, 1, 4000),
        ];
        let table = NodeTable::new(&nodes).unwrap();
        assert_eq!(table.len(), 2);
        assert_eq!(table.get(0).unwrap().cores(), 8);
        assert_eq!(table.get(1).unwrap().cpus, 4);
        let swapped = vec![nodes[1].clone(), nodes[0].clone()];
        let err = NodeTable::new(&swapped).unwrap_err();
        assert!(err.message.contains("index order"), "{}", err.message);
    }

    #[test]
    fn zero_counts_are_refused() {
        let mut node = fixtures::node(0, "n0", 1, 1, 1, 100);
        node.cpus = 0;
        let err = NodeTable::new(&[node]).unwrap_err();
        assert!(err.message.contains("cpus is 0"), "{}", err.message);
    }

    #[test]
    fn usable_memory_subtracts_mem_spec_limit() {
        let mut node = fixtures::node(0, "n0", 1, 1, 1, 1000);
        node.mem_spec_limit = 200;
        assert_eq!(NodeRec::from_node(&node).unwrap().usable_memory(), 800);
        node.mem_spec_limit = 2000;
        assert_eq!(NodeRec::from_node(&node).unwrap().usable_memory(), 0);
    }

    #[test]
    fn effective_cpus_leave_out_specialised_cpus() {
        // Slurm's cpus_efctv: CPUSpecList's CPUs, else CoreSpecCount cores
        // with their threads.
        let mut node = fixtures::node(0, "n0", 2, 2, 2, 1000);
        assert_eq!(NodeRec::from_node(&node).unwrap().effective_cpus(), 8);
        node.core_spec_count = 1;
        assert_eq!(NodeRec::from_node(&node).unwrap().effective_cpus(), 6);
        node.cpu_spec_list = Some(slurm_wasm_sdk::types::Bitmap {
            len: 8,
            words: vec![0b1000_0000],
        });
        assert_eq!(NodeRec::from_node(&node).unwrap().effective_cpus(), 7);
    }
}
