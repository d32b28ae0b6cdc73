//! The configured GRES of every node, by column: one count per node for
//! each distinct `(name, type)` configured anywhere. The node filter reads
//! a node's total for a request from these dense columns instead of
//! comparing the names in each node's record, which on large clusters cost
//! more than the rest of the filter.

use select_common::{DeviceGroup, NodeRec, NodeTable};
use slurm_wasm_sdk::types::GresRequest;
use slurm_wasm_sdk::Bitmap;

/// Configured GRES counts by `(name, type)` and node.
#[derive(Debug, Clone, Default)]
pub struct GresTotals {
    keys: Vec<(String, Option<String>)>,
    /// `counts[key][node]`.
    counts: Vec<Vec<u64>>,
    nodes: usize,
    /// The distinct GRES layouts of the nodes with device groups.
    layouts: Vec<Layout>,
    /// `layout[node]`: its index in `layouts`, [`NO_LAYOUT`] without
    /// device groups.
    layout: Vec<u32>,
}

/// [`GresTotals::layout`] of a node without device groups.
pub const NO_LAYOUT: u32 = u32::MAX;

/// What [`bound_cores`] and the filter's CPU test read of a node: nodes of
/// one layout answer a request alike while none of their devices are in use, so the filter
/// works it out once per layout (in wasm the topology walk for every node
/// made a GPU job's RUN_NOW on 1,000 nodes fifty times slower).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    groups: Vec<DeviceGroup>,
    gres: Vec<(String, Option<String>, u64)>,
    cores: u32,
    cpus: u16,
}

impl Layout {
    fn of(node: &NodeRec) -> Self {
        Layout {
            groups: node.gres_topology.clone(),
            gres: node
                .gres
                .iter()
                .map(|g| (g.name.clone(), g.type_name.clone(), g.count))
                .collect(),
            cores: node.cores(),
            cpus: node.cpus,
        }
    }
}

impl GresTotals {
    /// The columns of `nodes`' `Gres=` lists.
    pub fn new(nodes: &NodeTable) -> Self {
        let mut totals = GresTotals {
            nodes: nodes.len(),
            layout: vec![NO_LAYOUT; nodes.len()],
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
        let layout = if node.gres_topology.is_empty() {
            NO_LAYOUT
        } else {
            let layout = Layout::of(node);
            match self.layouts.iter().position(|l| *l == layout) {
                Some(k) => k as u32,
                None => {
                    self.layouts.push(layout);
                    (self.layouts.len() - 1) as u32
                }
            }
        };
        if let Some(slot) = self.layout.get_mut(node.index) {
            *slot = layout;
        }
    }

    /// The layout of `node` (see [`Layout`]); [`NO_LAYOUT`] when gres.conf
    /// gives it no device groups (or it is not in the table).
    #[inline(always)]
    pub fn layout(&self, node: usize) -> u32 {
        self.layout.get(node).copied().unwrap_or(NO_LAYOUT)
    }

    /// How many distinct layouts the nodes have.
    pub fn layouts(&self) -> usize {
        self.layouts.len()
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

/// Whether GRES `name` is shared (devices split into shares: `mps`,
/// `shard`; Slurm's `GRES_CONF_SHARED`).
fn is_shared(name: &str) -> bool {
    name.eq_ignore_ascii_case("mps") || name.eq_ignore_ascii_case("shard")
}

/// The cores of `node` a per-node GRES request `req` lets a job use, as
/// select/linear asks: `_job_count_bitmap` (select_linear.c, 22.05) calls
/// `gres_job_test` with no core bitmap, and common/gres.c's `_job_test`
/// then takes its topology branch "which specific cores can be used"
/// whenever the node's GRES of that name have gres.conf records
/// (`topo_cnt`) and the request a count; linear passes `disable_binding`
/// false whatever the job asked. `None` is Slurm's `NO_VAL`, every core
/// (no device groups for the name, or a zero count).
///
/// Slurm picks device groups one device at a time until the request is
/// met: first the group with the most usable cores (the first on ties),
/// then each time the group adding the most cores not yet counted; the
/// cores counted are those of the first group's `Cores=`, widened by each
/// later group's (a group without `Cores=` counts every core). A shared
/// GRES keeps every core. With `use_total` (SELECT_MODE_TEST_ONLY) the
/// devices in use count as free; otherwise `allocated` is the node's
/// total in use of `req`'s name and `group_allocated(k)` the devices of
/// group `k` in use, and a group with none left is passed over.
/// `Some(0)`: the node has too few devices.
pub fn bound_cores(
    node: &NodeRec,
    req: &GresRequest,
    allocated: u64,
    group_allocated: impl Fn(usize) -> u64,
    use_total: bool,
) -> Option<u32> {
    let groups: Vec<(usize, &DeviceGroup)> = node
        .gres_topology
        .iter()
        .enumerate()
        .filter(|(_, g)| g.name.eq_ignore_ascii_case(&req.name))
        .collect();
    let need = req.count;
    if need == 0 || groups.is_empty() {
        return None;
    }
    let mut avail = node.gres_count(&req.name, None);
    if !use_total {
        avail = avail.saturating_sub(allocated);
    }
    if need > avail {
        return Some(0);
    }
    let node_cores = node.cores() as usize;
    // The size of the core maps: the first group's `Cores=`, else the node's.
    let size = groups
        .iter()
        .find_map(|(_, g)| g.cores.as_ref().map(Bitmap::len))
        .unwrap_or(node_cores);
    let in_use = |k: usize| if use_total { 0 } else { group_allocated(k) };
    let mut cores_avail: Vec<usize> = groups
        .iter()
        .map(|&(k, g)| {
            let wrong_type = req
                .type_name
                .as_deref()
                .is_some_and(|t| g.type_name.as_deref() != Some(t));
            if g.count == 0 || in_use(k) >= g.count || wrong_type {
                0
            } else {
                g.cores.as_ref().map_or(node_cores, Bitmap::count)
            }
        })
        .collect();
    let shared = is_shared(&req.name);
    let overlap = |a: &Bitmap, b: &Bitmap| a.ones().filter(|&c| b.get(c)).count();
    let mut counted = Bitmap::full(size);
    let (mut got, mut total, mut core_cnt) = (0u64, 0u64, 0u32);
    let mut last = None;
    while got < need {
        // The group adding the most cores not yet counted.
        let mut top: Option<(usize, usize)> = None;
        for (j, (_, g)) in groups.iter().enumerate() {
            let adds = match &g.cores {
                Some(c) if got > 0 && cores_avail[j] > 0 => cores_avail[j] - overlap(&counted, c),
                _ => cores_avail[j],
            };
            match top {
                None if cores_avail[j] > 0 => top = Some((j, adds)),
                Some((_, best)) if adds > best => top = Some((j, adds)),
                _ => {}
            }
        }
        last = top.map(|(j, _)| j);
        let Some((t, _)) = top else {
            if total < need {
                core_cnt = 0;
            }
            break;
        };
        cores_avail[t] = 0;
        let (k, g) = groups[t];
        let left = g.count.saturating_sub(in_use(k));
        if left == 0 {
            break;
        }
        if !shared {
            match &g.cores {
                None => counted = Bitmap::full(size),
                Some(c) if got > 0 => {
                    for i in c.ones().filter(|&i| i < size) {
                        counted.set(i);
                    }
                }
                Some(c) => {
                    for i in 0..size {
                        if !c.get(i) {
                            counted.clear(i);
                        }
                    }
                }
            }
            got += 1;
            total += left;
            core_cnt = counted.count() as u32;
        } else {
            total = total.max(left);
            got = total;
        }
    }
    if shared && got >= need {
        if let Some(t) = last {
            // The counted cores started as all of them: an OR keeps them all.
            if let Some(c) = &groups[t].1.cores {
                for i in c.ones().filter(|&i| i < size) {
                    counted.set(i);
                }
            }
            core_cnt = counted.count() as u32;
        }
    }
    Some(core_cnt)
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

    /// A device group of the tests: type, count, `Cores=`.
    type Group<'a> = (Option<&'a str>, u64, Option<&'a [usize]>);

    /// A node shaped as the anchor's (2 sockets x 2 cores x 2 threads)
    /// whose GPUs are the device groups `groups`.
    fn anchor_node(groups: &[Group<'_>]) -> NodeRec {
        let mut n = fixtures::node(0, "n1", 2, 2, 2, 4000);
        n.gres = vec![gres("gpu", None, groups.iter().map(|g| g.1).sum())];
        n.gres_topology = groups
            .iter()
            .map(
                |&(t, count, cores)| slurm_wasm_sdk::types::GresDeviceGroup {
                    name: "gpu".into(),
                    type_name: t.map(Into::into),
                    count,
                    cores: cores.map(|c| (&Bitmap::from_bits(4, c.iter().copied())).into()),
                    links: Vec::new(),
                },
            )
            .collect();
        NodeRec::from_node(&n).unwrap()
    }

    fn gpus(count: u64, type_name: Option<&str>) -> GresRequest {
        GresRequest {
            name: "gpu".into(),
            type_name: type_name.map(Into::into),
            scope: slurm_wasm_sdk::types::GresScope::PerNode,
            count,
            cpus_per_gres: None,
            mem_per_gres: None,
        }
    }

    #[test]
    fn bound_cores_follow_gres_job_test_without_a_core_map() {
        // common/gres.c `_job_test`, topology branch, no core bitmap.
        let node = anchor_node(&[(None, 1, Some(&[0, 1])), (None, 1, Some(&[2, 3]))]);
        let free = |_: usize| 0;
        // One GPU: the first group's two cores; two: both groups' four.
        assert_eq!(bound_cores(&node, &gpus(1, None), 0, free, true), Some(2));
        assert_eq!(bound_cores(&node, &gpus(2, None), 0, free, true), Some(4));
        // More than the node has: no core.
        assert_eq!(bound_cores(&node, &gpus(3, None), 0, free, true), Some(0));
        // No count, or no device groups: every core (NO_VAL).
        assert_eq!(bound_cores(&node, &gpus(0, None), 0, free, true), None);
        let plain = NodeRec::from_node(&fixtures::node(0, "n", 2, 2, 2, 4000)).unwrap();
        assert_eq!(bound_cores(&plain, &gpus(1, None), 0, free, true), None);
        // Outside TEST_ONLY a group whose devices are in use is passed over:
        // GPU 0 held, one GPU counts GPU 1's cores.
        let held = |k: usize| u64::from(k == 0);
        assert_eq!(bound_cores(&node, &gpus(1, None), 1, held, false), Some(2));
        assert_eq!(bound_cores(&node, &gpus(2, None), 1, held, false), Some(0));
        // The group with the most cores goes first; a group without Cores=
        // counts every core.
        let node = anchor_node(&[(None, 1, Some(&[0])), (None, 1, Some(&[1, 2, 3]))]);
        assert_eq!(bound_cores(&node, &gpus(1, None), 0, free, true), Some(3));
        let node = anchor_node(&[(None, 1, Some(&[0])), (None, 1, None)]);
        assert_eq!(bound_cores(&node, &gpus(1, None), 0, free, true), Some(4));
        // A typed request counts only its type's groups.
        let node = anchor_node(&[(Some("a"), 1, Some(&[0, 1])), (Some("b"), 1, Some(&[2]))]);
        assert_eq!(
            bound_cores(&node, &gpus(1, Some("b")), 0, free, true),
            Some(1)
        );
        // Two devices in one group (`File=nvidia[0-1] Cores=0-1`): its cores.
        let node = anchor_node(&[(None, 2, Some(&[0, 1]))]);
        assert_eq!(bound_cores(&node, &gpus(2, None), 0, free, true), Some(2));
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
