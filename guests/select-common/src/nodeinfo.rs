//! `select_nodeinfo_t`: what a select plugin tells the controller about a
//! node's allocation (`sinfo`'s allocated CPUs and memory, the node's
//! allocated TRES), and the table `nodeinfo-set-all` refreshes.
//!
//! The record and its pack format (Slurm 20.11–22.05's, the same for
//! select/linear and select/cons_tres) are the SDK's
//! ([`slurm_wasm_sdk::select::info`]); this module adds the per-node table.

pub use slurm_wasm_sdk::select::info::{tres_alloc_string, NodeInfo, NODE_STATE_ALLOCATED};
use slurm_wasm_sdk::{codes, Error};

/// Every node's nodeinfo, as `nodeinfo-set-all` last left it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeInfoTable {
    infos: Vec<NodeInfo>,
    /// Set once the first `refresh` ran.
    refreshed: bool,
}

impl NodeInfoTable {
    /// Replaces the table with `fresh`. Returns `false` when a previous
    /// refresh left exactly the same table: `nodeinfo-set-all` then answers
    /// `SLURM_NO_CHANGE_IN_DATA`.
    pub fn refresh(&mut self, fresh: Vec<NodeInfo>) -> bool {
        let changed = !self.refreshed || fresh != self.infos;
        self.infos = fresh;
        self.refreshed = true;
        changed
    }

    /// Updates one node (`nodeinfo-set` of a job's nodes).
    pub fn set(&mut self, node: usize, info: NodeInfo) {
        if self.infos.len() <= node {
            self.infos.resize(node + 1, NodeInfo::default());
        }
        self.infos[node] = info;
    }

    /// Node `node`'s info: an empty record if the node was never refreshed.
    pub fn get(&self, node: usize) -> NodeInfo {
        self.infos.get(node).cloned().unwrap_or_default()
    }

    /// Forgets everything (`node-init`): the next refresh reports a change.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

/// `SLURM_NO_CHANGE_IN_DATA` as the error `nodeinfo-set-all` returns when
/// nothing changed.
pub fn no_change() -> Error {
    Error::new(
        codes::SLURM_NO_CHANGE_IN_DATA,
        "no node information changed since the last nodeinfo-set-all",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refresh_reports_no_change_only_after_an_identical_refresh() {
        let mut table = NodeInfoTable::default();
        assert!(table.refresh(vec![NodeInfo::default()]));
        assert!(!table.refresh(vec![NodeInfo::default()]));
        assert!(table.refresh(vec![NodeInfo::with_tres(1, 0, 1, 0)]));
        table.clear();
        assert!(table.refresh(vec![NodeInfo::with_tres(1, 0, 1, 0)]));
    }
}
