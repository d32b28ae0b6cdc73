//! The node table and its usage counters (`node_use_record_t`,
//! cons_common/node_data.h).

use slurm_wasm_sdk::types::{Node, NodeStateFlags};
use smallvec::SmallVec;

use slurm_wasm_sdk::Bitmap;

/// `NODE_CR_AVAILABLE`: a job that shares its cores.
pub const NODE_CR_AVAILABLE: u16 = 0;
/// `NODE_CR_ONE_ROW`: a normal job.
pub const NODE_CR_ONE_ROW: u16 = 1;
/// `NODE_CR_RESERVED`: a job of an `OverSubscribe=EXCLUSIVE` partition.
pub const NODE_CR_RESERVED: u16 = 64000;

/// One GRES device of a node (a GPU, or for `mps` one GPU's shares).
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub name: String,
    pub type_name: Option<String>,
    /// `name` and `type_name` as numbers of the instance's [`GresNames`]
    /// (set by [`GresNames::intern_node`]): requests are matched by number.
    pub name_id: u32,
    pub type_id: Option<u32>,
    /// A shared GRES (`mps`, `shard`): one device's shares.
    pub shared: bool,
    /// The node's devices that are the same physical GPU under another
    /// name (a GPU and its MPS shares): using one blocks the other.
    pub twins: SmallVec<[u16; 2]>,
    /// Index among the node's devices of this name (table order).
    pub index: u32,
    /// Capacity: 1 for a GPU, the share count for `mps`.
    pub capacity: u64,
    /// Cores the device is bound to (`Cores=`); none = every core.
    pub cores: Option<Bitmap>,
    /// Sockets whose cores intersect `cores`; empty = "any socket" (no
    /// `Cores=`, or the cores touch every socket).
    pub sockets: SmallVec<[u16; 4]>,
    /// `Links=` of this device to each device of the name.
    pub links: Vec<i32>,
}

impl Device {
    /// The one socket 22.05 counts a device bound to some sockets on
    /// (`_build_sock_gres_by_topo`, cons_tres/gres_sched.c:188-230): the
    /// first of its sockets, or with enforce-binding the first of them
    /// where `has_free_core`. `None` for a device of every socket (counted
    /// for any), and with enforce-binding for one whose sockets have no
    /// free core (not counted at all).
    pub fn home(
        &self,
        enforce_binding: bool,
        has_free_core: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        self.sockets
            .iter()
            .map(|&s| s as usize)
            .find(|&s| !enforce_binding || has_free_core(s))
    }
}

/// Which usage a node test reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tables {
    /// The live tables: RUN_NOW, and a will-run answer's first test.
    Live,
    /// A copy with jobs released or preempted: a will-run answer's later
    /// tests and the preemption tests. As in 22.05's copies of the tables
    /// (`node_data_dup_use`), a GPU whose MPS shares are in use (or MPS
    /// shares of a GPU in use) is not kept out there: on the anchor, with
    /// GPU 0 of n1 held until a job ends and GPU 1 serving an `mps:50`
    /// job for longer, `sbatch --test-only -n1 --gres=gpu:2` answered n1
    /// at the first job's end, while RUN_NOW of `-w n1 --gres=gpu:1` stayed
    /// pending.
    Copy,
    /// None: TEST_ONLY reads the totals.
    Totals,
}

/// A node as the plugin keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRec {
    pub name: String,
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub tpc: u16,
    /// Cores of the node (`sockets × cores_per_socket`).
    pub cores: u16,
    pub real_memory: u64,
    pub mem_spec: u64,
    pub weight: u32,
    /// The node's layout class: nodes with equal sockets, cores per socket,
    /// threads and memory share it (numbered by `ConsTres::node_init`; 0
    /// until then). An idle node's offer to a job without GRES depends
    /// only on its class.
    pub shape: u32,
    /// The layout class with the GRES devices as well (names, types,
    /// counts, bound cores, links): an idle node's offer to a job with GRES
    /// depends only on it.
    pub gres_shape: u32,
    /// First bit of the node in the cluster-wide core map.
    pub core_off: usize,
    /// Specialised cores (`CoreSpecCount` highest cores first, or `CpuSpecList`).
    pub spec_cores: Bitmap,
    /// Set bits of `spec_cores`.
    pub spec_count: u16,
    pub devices: Vec<Device>,
    pub completing: bool,
    pub powered_down: bool,
    pub partitions: Vec<u32>,
}

impl NodeRec {
    /// Builds the record of `node`, whose cores start at `core_off`.
    /// Fails on a node without sockets, cores or threads.
    pub fn from_node(node: &Node, core_off: usize) -> Result<NodeRec, String> {
        if node.sockets == 0 || node.cores_per_socket == 0 || node.threads_per_core == 0 {
            return Err(format!(
                "node {} (index {}): sockets, cores-per-socket and threads-per-core must be at least 1 \
                 (got {}x{}x{})",
                node.name, node.index, node.sockets, node.cores_per_socket, node.threads_per_core
            ));
        }
        let cores = node.sockets * node.cores_per_socket;
        let mut spec_cores = Bitmap::new(cores as usize);
        if let Some(list) = &node.cpu_spec_list {
            let cpus = Bitmap::from_words(list.len, &list.words)
                .map_err(|e| format!("node {}: cpu-spec-list: {e}", node.name))?;
            for cpu in cpus.ones() {
                let core = cpu / node.threads_per_core as usize;
                if core < cores as usize {
                    spec_cores.set(core);
                }
            }
        } else {
            // Slurm takes specialised cores from the highest-numbered socket
            // downwards, last core of each socket first, round-robin.
            let mut left = node.core_spec_count.min(cores);
            let mut depth = 0;
            while left > 0 && depth < node.cores_per_socket {
                for s in (0..node.sockets).rev() {
                    if left == 0 {
                        break;
                    }
                    spec_cores.set(
                        (s * node.cores_per_socket + node.cores_per_socket - 1 - depth) as usize,
                    );
                    left -= 1;
                }
                depth += 1;
            }
        }
        let devices = build_devices(node, cores)?;
        let flags = node.state.flags;
        // No test of the node's base state or DRAIN, FAIL or NO_RESPOND
        // here: 22.05's `_verify_node_state` (cons_common/job_test.c) has
        // none, because slurmctld offers only available nodes as candidates
        // (`avail_node_bitmap`, node_mgr.c). A node powering up is
        // NO_RESPOND (power_save.c) and stays available: backfill plans
        // jobs onto it.
        Ok(NodeRec {
            name: node.name.clone(),
            sockets: node.sockets,
            cores_per_socket: node.cores_per_socket,
            tpc: node.threads_per_core,
            cores,
            real_memory: node.real_memory,
            mem_spec: node.mem_spec_limit,
            weight: node.weight,
            shape: 0,
            gres_shape: 0,
            core_off,
            spec_count: spec_cores.count() as u16,
            spec_cores,
            devices,
            completing: flags.contains(NodeStateFlags::COMPLETING),
            powered_down: flags
                .intersects(NodeStateFlags::POWER_SAVE | NodeStateFlags::POWERING_UP),
            partitions: node.partitions.clone(),
        })
    }

    /// CPUs of the node (`cores × threads`).
    pub fn cpus(&self) -> u32 {
        self.cores as u32 * self.tpc as u32
    }

    /// Memory the jobs may use (`RealMemory − MemSpecLimit`).
    pub fn usable_memory(&self) -> u64 {
        self.real_memory.saturating_sub(self.mem_spec)
    }

    /// Memory a job may still use on the node with usage `usage`
    /// (`ignore_usage`, TEST_ONLY: all of it).
    pub fn free_memory(&self, usage: &NodeUse, ignore_usage: bool) -> u64 {
        let usable = self.usable_memory();
        if ignore_usage {
            usable
        } else {
            usable - usage.alloc_memory.min(usable)
        }
    }

    pub fn socket_of(&self, core: usize) -> usize {
        core / self.cores_per_socket as usize
    }
}

/// The node's devices: from `gres-topology` when given (devices numbered in
/// table order per name), else from the `gres` counts with no core binding
/// (`mps` shares spread evenly over the node's GPUs, or one device).
fn build_devices(node: &Node, cores: u16) -> Result<Vec<Device>, String> {
    let mut out = Vec::new();
    let sockets_of = |mask: &Option<Bitmap>| -> SmallVec<[u16; 4]> {
        let Some(m) = mask else {
            return SmallVec::new();
        };
        let touched: SmallVec<[u16; 4]> = (0..node.sockets)
            .filter(|&s| {
                let lo = (s * node.cores_per_socket) as usize;
                m.count_range(lo, lo + node.cores_per_socket as usize) > 0
            })
            .collect();
        if touched.len() == node.sockets as usize {
            SmallVec::new()
        } else {
            touched
        }
    };
    if !node.gres_topology.is_empty() {
        for g in &node.gres_topology {
            let cores_mask = match &g.cores {
                Some(b) => {
                    let m = Bitmap::from_words(b.len, &b.words)
                        .map_err(|e| format!("node {}: gres {} cores: {e}", node.name, g.name))?;
                    let mut fitted = Bitmap::new(cores as usize);
                    for c in m.ones().filter(|&c| c < cores as usize) {
                        fitted.set(c);
                    }
                    Some(fitted)
                }
                None => None,
            };
            let sockets = sockets_of(&cores_mask);
            let (n, cap) = if is_shared(&g.name) {
                (1, g.count)
            } else {
                (g.count, 1)
            };
            for _ in 0..n {
                let index = out.iter().filter(|d: &&Device| d.name == g.name).count() as u32;
                out.push(Device {
                    name: g.name.clone(),
                    type_name: g.type_name.clone(),
                    name_id: 0,
                    type_id: None,
                    shared: is_shared(&g.name),
                    twins: SmallVec::new(),
                    index,
                    capacity: cap,
                    cores: cores_mask.clone(),
                    sockets: sockets.clone(),
                    links: g.links.clone(),
                });
            }
        }
        link_twins(&mut out);
        return Ok(out);
    }
    let gpus = node
        .gres
        .iter()
        .filter(|g| g.name == "gpu")
        .map(|g| g.count)
        .sum::<u64>();
    for g in &node.gres {
        let shared = is_shared(&g.name);
        let (n, cap) = if shared && gpus > 0 {
            (gpus, g.count / gpus)
        } else if shared {
            (1, g.count)
        } else {
            (g.count, 1)
        };
        for _ in 0..n {
            let index = out.iter().filter(|d: &&Device| d.name == g.name).count() as u32;
            out.push(Device {
                name: g.name.clone(),
                type_name: g.type_name.clone(),
                name_id: 0,
                type_id: None,
                shared,
                twins: SmallVec::new(),
                index,
                capacity: cap,
                cores: None,
                sockets: SmallVec::new(),
                links: Vec::new(),
            });
        }
    }
    link_twins(&mut out);
    Ok(out)
}

/// Fills each device's `twins`: devices of the same index under another
/// name where one of the two is shared (`gres/gpu` and `gres/mps` devices
/// of one index are one physical GPU).
fn link_twins(devices: &mut [Device]) {
    for i in 0..devices.len() {
        let twins = (0..devices.len())
            .filter(|&j| {
                let (a, b) = (&devices[i], &devices[j]);
                j != i && a.index == b.index && a.name != b.name && (a.shared || b.shared)
            })
            .map(|j| j as u16)
            .collect();
        devices[i].twins = twins;
    }
}

/// GRES names and types as small numbers, assigned in order of first
/// appearance in the node table; a request naming something no node has
/// gets no number and matches no device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GresNames {
    names: Vec<String>,
    types: Vec<String>,
}

impl GresNames {
    /// Numbers the names and types of `rec`'s devices (new ones appended).
    pub fn intern_node(&mut self, rec: &mut NodeRec) {
        for d in &mut rec.devices {
            d.name_id = intern(&mut self.names, &d.name);
            d.type_id = d.type_name.as_deref().map(|t| intern(&mut self.types, t));
        }
    }

    /// The number of GRES `name`, if a node has it.
    pub fn name_id(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|n| n == name).map(|i| i as u32)
    }

    /// The number of GRES type `name`, if a node has it.
    pub fn type_id(&self, name: &str) -> Option<u32> {
        self.types.iter().position(|n| n == name).map(|i| i as u32)
    }
}

/// Per GRES name, and per name and type, each node's configured total and
/// its largest single device, in node order: what `_verify_node_state`'s
/// GRES test reads for every candidate, kept dense so that it touches no
/// node's device list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GresColumns {
    keys: Vec<(u32, Option<u32>)>,
    total: Vec<Vec<u64>>,
    /// Largest device capacity plus one; 0 = no such device on the node.
    largest_plus_one: Vec<Vec<u64>>,
}

/// One [`GresColumns`] entry.
#[derive(Clone, Copy, Debug)]
pub struct GresColumn<'a> {
    pub total: &'a [u64],
    pub largest_plus_one: &'a [u64],
}

impl GresColumns {
    /// The columns of `recs` (devices numbered by [`GresNames`]).
    pub fn build(recs: &[NodeRec]) -> GresColumns {
        let mut cols = GresColumns::default();
        for (i, rec) in recs.iter().enumerate() {
            for d in &rec.devices {
                let keys = [
                    Some((d.name_id, None)),
                    d.type_id.map(|t| (d.name_id, Some(t))),
                ];
                for key in keys.into_iter().flatten() {
                    let k = match cols.keys.iter().position(|x| *x == key) {
                        Some(k) => k,
                        None => {
                            cols.keys.push(key);
                            cols.total.push(vec![0; recs.len()]);
                            cols.largest_plus_one.push(vec![0; recs.len()]);
                            cols.keys.len() - 1
                        }
                    };
                    cols.total[k][i] += d.capacity;
                    let l = &mut cols.largest_plus_one[k][i];
                    *l = (*l).max(d.capacity.saturating_add(1));
                }
            }
        }
        cols
    }

    /// The column of GRES `name_id` (of type `type_id`, or of any type).
    pub fn column(&self, name_id: u32, type_id: Option<u32>) -> Option<GresColumn<'_>> {
        let k = self.keys.iter().position(|x| *x == (name_id, type_id))?;
        Some(GresColumn {
            total: &self.total[k],
            largest_plus_one: &self.largest_plus_one[k],
        })
    }
}

fn intern(table: &mut Vec<String>, name: &str) -> u32 {
    match table.iter().position(|n| n == name) {
        Some(i) => i as u32,
        None => {
            table.push(name.to_owned());
            (table.len() - 1) as u32
        }
    }
}

/// Shared GRES (`mps`, `shard`): one device's shares.
pub fn is_shared(name: &str) -> bool {
    name == "mps" || name == "shard"
}

/// The usage of one node (`node_use_record`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeUse {
    /// MB allocated.
    pub alloc_memory: u64,
    /// Sum of the `node_req` of the jobs on the node.
    pub node_state: u32,
    /// Used capacity of each device (same order as `NodeRec::devices`).
    pub gres_used: SmallVec<[u64; 4]>,
}

impl NodeUse {
    pub fn for_node(rec: &NodeRec) -> NodeUse {
        NodeUse {
            gres_used: smallvec::smallvec![0; rec.devices.len()],
            ..NodeUse::default()
        }
    }

    pub fn any_gres_used(&self) -> bool {
        self.gres_used.iter().any(|u| *u > 0)
    }
}
