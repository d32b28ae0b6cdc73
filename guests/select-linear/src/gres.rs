//! The configured GRES of every node, by column: one count per node for
//! each distinct `(name, type)` configured anywhere. The node filter reads
//! a node's total for a request from these dense columns instead of
//! comparing the names in each node's record, which on large clusters cost
//! more than the rest of the filter.

use select_common::{NodeRec, NodeTable};

/// Configured GRES counts by `(name, type)` and node.
#[derive(Debug, Clone, Default)]
pub struct GresTotals {
    keys: Vec<(String, Option<String>)>,
    /// `counts[key][node]`.
    counts: Vec<Vec<u64>>,
    nodes: usize,
}

impl GresTotals {
    /// The columns of `nodes`' `Gres=` lists.
    pub fn new(nodes: &NodeTable) -> Self {
        let mut totals = GresTotals {
            nodes: nodes.len(),
            ..GresTotals::default()
        };
        for node in nodes.iter() {
            totals.add(node);
        }
        totals
    }

    fn add(&mut self, node: &NodeRec) {
        for g in &node.gres {
            let key = match self
                .keys
                .iter()
                .position(|(name, t)| *name == g.name && *t == g.type_name)
            {
                Some(key) => key,
                None => {
                    self.keys.push((g.name.clone(), g.type_name.clone()));
                    self.counts.push(vec![0; self.nodes]);
                    self.keys.len() - 1
                }
            };
            if let Some(count) = self.counts[key].get_mut(node.index) {
                *count += g.count;
            }
        }
    }

    /// Replaces the counts of `node` (after `update-node-config`).
    pub fn update(&mut self, node: &NodeRec) {
        for column in &mut self.counts {
            if let Some(count) = column.get_mut(node.index) {
                *count = 0;
            }
        }
        self.add(node);
    }

    /// The columns a request for `name` (any case) of `type_name` (every
    /// type when `None`) adds up, as [`NodeRec::gres_count`] matches them.
    pub fn columns(&self, name: &str, type_name: Option<&str>) -> Vec<&[u64]> {
        self.keys
            .iter()
            .zip(&self.counts)
            .filter(|((n, t), _)| {
                n.eq_ignore_ascii_case(name)
                    && type_name.is_none_or(|want| t.as_deref() == Some(want))
            })
            .map(|(_, column)| column.as_slice())
            .collect()
    }
}

/// The configured count of node `node` over `columns` (from
/// [`GresTotals::columns`]).
pub fn total(columns: &[&[u64]], node: usize) -> u64 {
    columns
        .iter()
        .map(|column| column.get(node).copied().unwrap_or(0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;
    use slurm_wasm_sdk::types::GresCount;

    fn gres(name: &str, type_name: Option<&str>, count: u64) -> GresCount {
        GresCount {
            name: name.into(),
            type_name: type_name.map(Into::into),
            count,
        }
    }

    #[test]
    fn columns_match_the_node_records() {
        // The same totals as NodeRec::gres_count: names in any case, a
        // type only when asked for, every type otherwise.
        let mut n0 = fixtures::node(0, "n0", 1, 4, 1, 1000);
        n0.gres = vec![gres("gpu", Some("a100"), 2), gres("gpu", Some("v100"), 1)];
        let mut n1 = fixtures::node(1, "n1", 1, 4, 1, 1000);
        n1.gres = vec![gres("GPU", None, 4)];
        let n2 = fixtures::node(2, "n2", 1, 4, 1, 1000);
        let mut nodes = NodeTable::new(&[n0, n1, n2.clone()]).unwrap();
        let mut totals = GresTotals::new(&nodes);
        let check = |totals: &GresTotals, nodes: &NodeTable| {
            for (name, t) in [
                ("gpu", None),
                ("gpu", Some("a100")),
                ("Gpu", Some("v100")),
                ("mps", None),
            ] {
                let columns = totals.columns(name, t);
                for node in nodes.iter() {
                    assert_eq!(
                        total(&columns, node.index),
                        node.gres_count(name, t),
                        "{name} {t:?} on {}",
                        node.name
                    );
                }
            }
        };
        check(&totals, &nodes);
        assert_eq!(total(&totals.columns("gpu", None), 0), 3);
        assert_eq!(total(&totals.columns("gpu", None), 1), 4);
        // An update replaces the node's counts, adding a column if needed.
        let mut n2 = n2;
        n2.gres = vec![gres("mps", None, 100)];
        let rec = nodes.update(&n2).unwrap().clone();
        totals.update(&rec);
        check(&totals, &nodes);
        assert_eq!(total(&totals.columns("mps", None), 2), 100);
    }
}
