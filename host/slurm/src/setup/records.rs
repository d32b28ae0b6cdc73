//! The contract's records for the cluster a `slurm.conf` describes.
//!
//! [`Cluster::from_slurm_conf`] builds the node table, the partition table
//! and the cluster-wide settings (`cluster-config`) once; its `*_config`
//! methods then give each kind's `init` argument. Conventions are the
//! contract's (`wit/types.wit`): a node's index is its position in
//! `slurm.conf`, a partition's index its order of definition, memory is in
//! MB and times are in minutes.
//!
//! Where `slurm.conf` is silent, the records say what Slurm assumes:
//!
//! - A node is idle unless its `State=` says otherwise: `UNKNOWN` (the
//!   default) means "as the node reports", and a node with no jobs reports
//!   idle. `DOWN` and `FUTURE` are those base states; `DRAIN`, `FAIL` (or
//!   `FAILING`: no job runs yet) and `CLOUD` are idle with the `drain`,
//!   `fail` and `cloud` + `power-save` flags.
//! - A partition without its own `DefMemPerCPU`/`DefMemPerNode` (or
//!   `MaxMemPerCPU`/`MaxMemPerNode`) takes the cluster-wide option. A value
//!   of 0 means no default (no limit), as in Slurm.
//! - `DefCpuPerGPU`/`DefMemPerGPU` stay where they were written: a
//!   partition's `gpu-defaults` holds its own, `cluster-config`'s the
//!   cluster-wide ones, and cons_tres looks at the partition's first, as
//!   Slurm does.
//! - `KillWait` is 30 seconds and `OverTimeLimit` 0 minutes unless set;
//!   `OverTimeLimit=UNLIMITED` is 65535 (Slurm's `INFINITE16`).
//! - `raw` holds every option outside node, partition and other record
//!   lines, in file order, keys as written.
//! - Without `gres.conf` ([`Cluster::from_slurm_conf`]) a node's
//!   `gres-topology` is empty and the gres plugins get no records: counts
//!   come from the node's `Gres=`. With one
//!   ([`Cluster::with_gres_conf`], the file found by
//!   [`gres_conf::find`](crate::gres_conf::find)), each node gets the device groups and records
//!   the file gives it ([`gres_conf`](crate::gres_conf) describes how).
//!
//! # Failure modes
//!
//! A [`ConfError`] at the option's file and line when a value the records
//! carry typed is malformed (`KillWait=soon`), when both `DefMemPerCPU` and
//! `DefMemPerNode` (or both `MaxMemPerCPU` and `MaxMemPerNode`) are set
//! cluster-wide, when a node's `CPUSpecList` is not a list of CPU ids
//! below its `CPUs`, or when `PreemptType` and `PreemptMode` are what
//! slurmctld refuses (see [`preemption`](super::preemption)); and any problem
//! [`GresConfFile::nodes`] finds in a `gres.conf`, at its file and line.

use std::collections::BTreeMap;
use std::str::FromStr;

use super::preemption;
use crate::gres_conf::{GresConfFile, NodeGres};
use crate::option_flags;
use crate::slurm_conf::{
    self, comma_list, ConfError, MemoryLimit, NodeConf, Options, OverSubscribe, PartitionConf,
    SlurmConf,
};
use slurm_wasm_host::bindings::types::{
    Bitmap, ClusterConfig, GpuDefaults, GresCount, JobResources, KeyValue, MemoryRequest, Node,
    NodeBaseState, NodeResources, NodeState, NodeStateFlags, Oversubscribe, Partition,
    PreemptModes, SelectTypeParams, TaskPluginParams, TresAmount,
};
use slurm_wasm_host::kinds::gres::{GresConfRecord, GresConfig, NodeHardware};
use slurm_wasm_host::kinds::priority::PriorityConfig;
use slurm_wasm_host::kinds::select::SelectConfig;
use slurm_wasm_host::kinds::task::TaskConfig;

/// A cluster as the contract's records.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// The node table, in `slurm.conf` order: `nodes[i].index == i`.
    pub nodes: Vec<Node>,
    /// The partition table, in order of definition; each partition's
    /// `nodes` bitmap spans the node table.
    pub partitions: Vec<Partition>,
    /// The settings every plugin's `init` receives.
    pub config: ClusterConfig,
    /// What `gres.conf` says about each node, by node index; empty without
    /// a `gres.conf`.
    pub gres: Vec<NodeGres>,
    /// Each node's `NodeName=` line (slurmctld's config record), by node
    /// index: [`NodeConf::config`](crate::slurm_conf::NodeConf::config).
    pub node_configs: Vec<u32>,
}

/// `parse` of option `key`'s value (`SelectTypeParameters`,
/// `TaskPluginParam`: see [`option_flags`]), its error at the option's
/// line, as slurmctld refuses them at start-up; `absent` when the key is.
fn flags_of<F>(
    options: &Options,
    key: &str,
    absent: F,
    parse: impl FnOnce(&str) -> Result<F, String>,
) -> Result<F, ConfError> {
    let (Some(value), Some(origin)) = (options.get(key), options.origin(key)) else {
        return Ok(absent);
    };
    parse(value).map_err(|e| origin.error(e))
}

/// `SelectTypeParameters` of `options` as 22.05 reads them (none when the
/// key is absent); a bad value is an error at its line.
pub fn select_type_parameters(options: &Options) -> Result<SelectTypeParams, ConfError> {
    flags_of(
        options,
        "SelectTypeParameters",
        SelectTypeParams::empty(),
        option_flags::select_type_params,
    )
}

impl Cluster {
    /// The records of `conf`.
    ///
    /// # Errors
    ///
    /// A [`ConfError`] naming the file and line of a value listed in the
    /// [module documentation](self).
    pub fn from_slurm_conf(conf: &SlurmConf) -> Result<Cluster, ConfError> {
        preemption::check(conf)?;
        let options = &conf.options;
        let default_memory = memory_option(options, "DefMemPerCPU", "DefMemPerNode")?;
        let max_memory = memory_option(options, "MaxMemPerCPU", "MaxMemPerNode")?;
        let partitions = conf
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| partition(i, p, conf.nodes.len(), &default_memory, &max_memory))
            .collect::<Result<_, _>>()?;
        // Each node's partitions, from the partitions' member lists (a
        // search of every partition for every node is nodes x partitions).
        let mut node_partitions: Vec<Vec<u32>> = vec![Vec::new(); conf.nodes.len()];
        for (p, partition) in conf.partitions.iter().enumerate() {
            for &n in &partition.nodes {
                if let Some(partitions) = node_partitions.get_mut(n) {
                    partitions.push(table_index(p));
                }
            }
        }
        let mut cpu_specs = CpuSpecLists::default();
        let nodes = conf
            .nodes
            .iter()
            .zip(node_partitions)
            .enumerate()
            .map(|(i, (n, partitions))| node(i, n, partitions, &mut cpu_specs))
            .collect::<Result<_, _>>()?;
        let over_time_limit = match options.get("OverTimeLimit") {
            Some(v) if v.eq_ignore_ascii_case("UNLIMITED") => u16::MAX,
            _ => number(options, "OverTimeLimit", "a number of minutes or UNLIMITED")?.unwrap_or(0),
        };
        let config = ClusterConfig {
            cluster_name: options.get("ClusterName").unwrap_or_default().to_owned(),
            select_type_parameters: select_type_parameters(options)?,
            default_memory,
            scheduler_parameters: comma_list(options.get("SchedulerParameters")),
            preempt_mode: preemption::modes_of(options)?.unwrap_or(PreemptModes::empty()),
            over_time_limit,
            kill_wait: number(options, "KillWait", "a number of seconds")?.unwrap_or(30),
            task_plugin_param: flags_of(
                options,
                "TaskPluginParam",
                TaskPluginParams::empty(),
                option_flags::task_plugin_params,
            )?,
            gres_types: conf.gres_types(),
            gpu_defaults: GpuDefaults {
                cpus_per_gpu: number(options, "DefCPUPerGPU", "a number of CPUs")?,
                mem_per_gpu: number(options, "DefMemPerGPU", "a number of MB")?,
            },
            raw: options
                .iter()
                .map(|(key, value)| KeyValue {
                    key: key.to_owned(),
                    value: value.to_owned(),
                })
                .collect(),
        };
        Ok(Cluster {
            node_configs: conf.nodes.iter().map(|n| n.config).collect(),
            nodes,
            partitions,
            config,
            gres: Vec::new(),
        })
    }

    /// The records of `conf` with what `gres` (its `gres.conf`, see
    /// [`gres_conf::find`](crate::gres_conf::find)) says about each node: `node.gres-topology`,
    /// the records of [`gres_records`](Self::gres_records) and the
    /// `AutoDetect` of [`gres_config_for`](Self::gres_config_for). `None`
    /// is a site without `gres.conf`, as [`from_slurm_conf`](Self::from_slurm_conf).
    ///
    /// # Errors
    ///
    /// A [`ConfError`] naming the file and line of a `slurm.conf` value (as
    /// [`from_slurm_conf`](Self::from_slurm_conf)) or of a `gres.conf` line
    /// [`GresConfFile::nodes`] refuses.
    pub fn with_gres_conf(
        conf: &SlurmConf,
        gres: Option<&GresConfFile>,
    ) -> Result<Cluster, ConfError> {
        let mut cluster = Cluster::from_slurm_conf(conf)?;
        if let Some(file) = gres {
            cluster.gres = file.nodes(conf)?;
            for (node, gres) in cluster.nodes.iter_mut().zip(&cluster.gres) {
                node.gres_topology = gres.topology.clone();
            }
        }
        Ok(cluster)
    }

    /// Whether slurmctld offers node `index` to a select plugin: what its
    /// `avail_node_bitmap` holds (node_mgr.c `_sync_bitmaps`,
    /// read_config.c `_build_bitmaps`). DOWN, FUTURE, UNKNOWN (never
    /// registered) and ERROR nodes are out, and so are DRAIN, FAIL and
    /// NO_RESPOND ones, except a node powering up, which power_save.c marks
    /// NO_RESPOND and leaves available. The select plugins apply no state
    /// test of their own (cons_common/job_test.c `_verify_node_state`).
    /// An index outside the table is not available.
    pub fn is_available(&self, index: u32) -> bool {
        let Some(node) = self.nodes.get(index as usize) else {
            return false;
        };
        let flags = node.state.flags;
        let no_respond = flags.contains(NodeStateFlags::NO_RESPOND)
            && !flags.contains(NodeStateFlags::POWERING_UP);
        !matches!(
            node.state.base,
            NodeBaseState::Down
                | NodeBaseState::Unknown
                | NodeBaseState::Future
                | NodeBaseState::Error
        ) && !no_respond
            && !flags.intersects(NodeStateFlags::DRAIN | NodeStateFlags::FAIL)
    }

    /// `nodes` less the nodes that are not [available](Self::is_available).
    pub fn available_of(&self, nodes: &Bitmap) -> Bitmap {
        let mut out = nodes.clone();
        for (w, word) in out.words.iter_mut().enumerate() {
            let mut bits = *word;
            while bits != 0 {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                if !self.is_available(w as u32 * 64 + b) {
                    *word &= !(1u64 << b);
                }
            }
        }
        out
    }

    /// `init` of a select plugin: the settings and the partition table.
    pub fn select_config(&self) -> SelectConfig {
        SelectConfig {
            cluster: self.config.clone(),
            partitions: self.partitions.clone(),
        }
    }

    /// `init` of a priority plugin: the partition table, and the TRES
    /// totals of the cluster and of each partition (`cpu`, `mem` in MB,
    /// `node`, and `gres/<name>` for every GRES a node has, types summed
    /// under their name).
    pub fn priority_config(&self) -> PriorityConfig {
        let cpus = self
            .nodes
            .iter()
            .fold(0u64, |sum, n| sum.saturating_add(u64::from(n.cpus)));
        let partition_tres = self
            .partitions
            .iter()
            .map(|p| {
                let members: Vec<u32> = p.nodes.ones().collect();
                tres_totals(self.nodes.iter().filter(|n| members.contains(&n.index)))
            })
            .collect();
        PriorityConfig {
            cluster: self.config.clone(),
            partitions: self.partitions.clone(),
            partition_tres,
            cluster_cpus: u32::try_from(cpus).unwrap_or(u32::MAX),
            cluster_nodes: table_index(self.nodes.len()),
            cluster_tres: tres_totals(self.nodes.iter()),
        }
    }

    /// `init` of a task plugin running on the node called `node_name`.
    pub fn task_config(&self, node_name: &str) -> TaskConfig {
        TaskConfig {
            cluster: self.config.clone(),
            node_name: node_name.to_owned(),
        }
    }

    /// `init` of a gres plugin, without a node: `auto-detect` is none.
    pub fn gres_config(&self) -> GresConfig {
        GresConfig {
            cluster: self.config.clone(),
            auto_detect: None,
        }
    }

    /// `init` of a gres plugin in the `slurmd` of `node_name`:
    /// `auto-detect` is the node's `AutoDetect=` from `gres.conf` (its own
    /// line's, else the global one), none without one or for an unknown
    /// node.
    pub fn gres_config_for(&self, node_name: &str) -> GresConfig {
        GresConfig {
            cluster: self.config.clone(),
            auto_detect: self
                .node_gres(node_name)
                .and_then(|g| g.auto_detect.clone()),
        }
    }

    /// The `gres.conf` records of GRES `gres_name` on `node_name`, in file
    /// order, for the plugin's `node-config-load`; empty without
    /// `gres.conf` or for an unknown node.
    pub fn gres_records(&self, node_name: &str, gres_name: &str) -> Vec<GresConfRecord> {
        self.node_gres(node_name)
            .map(|g| g.records_for(gres_name))
            .unwrap_or_default()
    }

    /// The node `node-config-load` describes: its shape and `Gres=`;
    /// `None` for a node not in the table.
    pub fn node_hardware(&self, node_name: &str) -> Option<NodeHardware> {
        self.nodes
            .iter()
            .find(|n| n.name == node_name)
            .map(|n| NodeHardware {
                name: n.name.clone(),
                cpus: n.cpus,
                sockets: n.sockets,
                cores_per_socket: n.cores_per_socket,
                threads_per_core: n.threads_per_core,
                configured: n.gres.clone(),
            })
    }

    /// What a job allocated node `index` whole holds (`--exclusive`,
    /// `--mem=0`): every core and CPU, all its memory, no GRES.
    ///
    /// # Panics
    ///
    /// If `index` is not in the node table.
    pub fn whole_node(&self, index: u32) -> JobResources {
        let node = &self.nodes[index as usize];
        let cores = u32::from(node.sockets) * u32::from(node.cores_per_socket);
        JobResources {
            nodes: Bitmap::with_ones(table_index(self.nodes.len()), [index]),
            ncpus: u32::from(node.cpus),
            per_node: vec![NodeResources {
                node_index: index,
                cores: Bitmap::with_ones(cores, 0..cores),
                cpus: node.cpus,
                memory: node.real_memory,
                gres: Vec::new(),
            }],
            whole_nodes: true,
        }
    }

    fn node_gres(&self, node_name: &str) -> Option<&NodeGres> {
        let index = self.nodes.iter().position(|n| n.name == node_name)?;
        self.gres.get(index)
    }
}

/// A table position as the contract's `u32` index.
fn table_index(i: usize) -> u32 {
    u32::try_from(i).expect("a slurm.conf holds fewer than 2^32 nodes or partitions")
}

fn node(
    index: usize,
    conf: &NodeConf,
    partitions: Vec<u32>,
    cpu_specs: &mut CpuSpecLists,
) -> Result<Node, ConfError> {
    Ok(Node {
        index: table_index(index),
        name: conf.name.clone(),
        cpus: conf.cpus,
        boards: conf.boards,
        sockets: conf.sockets,
        cores_per_socket: conf.cores_per_socket,
        threads_per_core: conf.threads_per_core,
        real_memory: conf.real_memory,
        mem_spec_limit: conf.mem_spec_limit,
        core_spec_count: conf.core_spec_count,
        cpu_spec_list: cpu_specs.of(conf)?,
        tmp_disk: conf.tmp_disk,
        weight: conf.weight,
        features: conf.features.clone(),
        gres: conf
            .gres
            .iter()
            .map(|g| GresCount {
                name: g.name.clone(),
                type_name: g.type_name.clone(),
                count: g.count,
            })
            .collect(),
        gres_topology: Vec::new(),
        state: node_state(conf.state),
        partitions,
    })
}

fn node_state(state: slurm_conf::NodeState) -> NodeState {
    use slurm_conf::NodeState as Conf;
    let (base, flags) = match state {
        Conf::Unknown | Conf::Idle => (NodeBaseState::Idle, NodeStateFlags::empty()),
        Conf::Down => (NodeBaseState::Down, NodeStateFlags::empty()),
        Conf::Future => (NodeBaseState::Future, NodeStateFlags::empty()),
        Conf::Drain => (NodeBaseState::Idle, NodeStateFlags::DRAIN),
        Conf::Fail | Conf::Failing => (NodeBaseState::Idle, NodeStateFlags::FAIL),
        Conf::Cloud => (
            NodeBaseState::Idle,
            NodeStateFlags::CLOUD | NodeStateFlags::POWER_SAVE,
        ),
    };
    NodeState { base, flags }
}

/// `CPUSpecList`s read so far: the nodes of one `NodeName=` line share
/// their line's list, which is read once for them all.
#[derive(Default)]
struct CpuSpecLists {
    /// The last list read, its node's CPU count and its bitmap.
    last: Option<(String, u16, Bitmap)>,
}

impl CpuSpecLists {
    /// `CPUSpecList` (`0-1,4`) as a bitmap over the node's CPUs, when set.
    fn of(&mut self, node: &NodeConf) -> Result<Option<Bitmap>, ConfError> {
        let Some(list) = node.extra.get("CPUSpecList") else {
            return Ok(None);
        };
        if let Some((text, cpus, map)) = &self.last {
            if text == list && *cpus == node.cpus {
                return Ok(Some(map.clone()));
            }
        }
        let map = cpu_spec_list(node, list)?;
        self.last = Some((list.to_owned(), node.cpus, map.clone()));
        Ok(Some(map))
    }
}

/// `list`, a node's `CPUSpecList`, as a bitmap over its CPUs. Each range
/// sets its bits in the bitmap, so a list costs its text and the node's
/// CPUs, however its ranges repeat.
fn cpu_spec_list(node: &NodeConf, list: &str) -> Result<Bitmap, ConfError> {
    let bad = || {
        let origin = node
            .extra
            .origin("CPUSpecList")
            .expect("a value has an origin");
        origin.error(format!(
            "CPUSpecList: expected CPU ids below the node's {} CPUs, like 0-1,4; found `{list}`",
            node.cpus
        ))
    };
    let cpus = u32::from(node.cpus);
    let mut ranges = Vec::new();
    for item in list.split(',') {
        let (lo, hi) = item.split_once('-').unwrap_or((item, item));
        let (lo, hi) = (cpu_id(lo).ok_or_else(bad)?, cpu_id(hi).ok_or_else(bad)?);
        if lo > hi || hi >= cpus {
            return Err(bad());
        }
        ranges.push((lo, hi));
    }
    // Sorted and merged, each CPU is set once.
    ranges.sort_unstable();
    let mut next = 0;
    let ids = ranges.into_iter().flat_map(|(lo, hi)| {
        let from = lo.max(next);
        next = next.max(hi + 1);
        from..=hi
    });
    Ok(Bitmap::with_ones(cpus, ids))
}

fn cpu_id(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn partition(
    index: usize,
    conf: &PartitionConf,
    node_count: usize,
    default_memory: &MemoryRequest,
    max_memory: &MemoryRequest,
) -> Result<Partition, ConfError> {
    Ok(Partition {
        index: table_index(index),
        name: conf.name.clone(),
        nodes: Bitmap::with_ones(
            table_index(node_count),
            conf.nodes.iter().map(|&i| table_index(i)),
        ),
        oversubscribe: match conf.oversubscribe {
            OverSubscribe::No => Oversubscribe::No,
            OverSubscribe::Exclusive => Oversubscribe::Exclusive,
            OverSubscribe::Yes(n) => Oversubscribe::Yes(n),
            OverSubscribe::Force(n) => Oversubscribe::Force(n),
        },
        priority_job_factor: conf.priority_job_factor,
        priority_tier: conf.priority_tier,
        preempt_mode: preemption::modes_of(&conf.extra)?,
        max_time: conf.max_time,
        default_time: conf.default_time,
        max_nodes: conf.max_nodes,
        min_nodes: conf.min_nodes,
        default_memory: conf.default_memory.map_or(*default_memory, memory_request),
        max_memory: conf.max_memory.map_or(*max_memory, memory_request),
        max_cpus_per_node: conf.max_cpus_per_node,
        lln: conf.lln,
        gpu_defaults: GpuDefaults {
            cpus_per_gpu: conf.def_cpu_per_gpu,
            mem_per_gpu: conf.def_mem_per_gpu,
        },
    })
}

/// A memory default or limit; 0 MB means none.
fn memory_request(limit: MemoryLimit) -> MemoryRequest {
    match limit {
        MemoryLimit::PerCpu(0) | MemoryLimit::PerNode(0) => MemoryRequest::None,
        MemoryLimit::PerCpu(mb) => MemoryRequest::PerCpu(mb),
        MemoryLimit::PerNode(mb) => MemoryRequest::PerNode(mb),
    }
}

/// A cluster-wide pair of memory options that exclude each other.
fn memory_option(
    options: &Options,
    per_cpu: &str,
    per_node: &str,
) -> Result<MemoryRequest, ConfError> {
    let cpu = number(options, per_cpu, "a number of MB")?;
    let node = number(options, per_node, "a number of MB")?;
    match (cpu, node) {
        (Some(_), Some(_)) => {
            let origin = options.origin(per_node).expect("a value has an origin");
            Err(origin.error(format!(
                "{per_cpu} and {per_node} exclude each other; give one"
            )))
        }
        (Some(mb), None) => Ok(memory_request(MemoryLimit::PerCpu(mb))),
        (None, Some(mb)) => Ok(memory_request(MemoryLimit::PerNode(mb))),
        (None, None) => Ok(MemoryRequest::None),
    }
}

/// The decimal value of `key`, when set.
fn number<T: FromStr>(options: &Options, key: &str, what: &str) -> Result<Option<T>, ConfError> {
    let Some(value) = options.get(key) else {
        return Ok(None);
    };
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = value.parse() {
            return Ok(Some(n));
        }
    }
    let origin = options.origin(key).expect("a value has an origin");
    Err(origin.error(format!("{key}: expected {what}, found `{value}`")))
}

/// TRES totals of `nodes`: `cpu`, `mem` (MB), `node`, then `gres/<name>`
/// by name.
fn tres_totals<'a>(nodes: impl Iterator<Item = &'a Node>) -> Vec<TresAmount> {
    let (mut cpus, mut memory, mut count) = (0u64, 0u64, 0u64);
    let mut gres: BTreeMap<&str, u64> = BTreeMap::new();
    for node in nodes {
        cpus = cpus.saturating_add(u64::from(node.cpus));
        memory = memory.saturating_add(node.real_memory);
        count += 1;
        for g in &node.gres {
            let total = gres.entry(&g.name).or_default();
            *total = total.saturating_add(g.count);
        }
    }
    let mut totals = vec![
        TresAmount {
            name: "cpu".into(),
            count: cpus,
        },
        TresAmount {
            name: "mem".into(),
            count: memory,
        },
        TresAmount {
            name: "node".into(),
            count,
        },
    ];
    totals.extend(gres.into_iter().map(|(name, count)| TresAmount {
        name: format!("gres/{name}"),
        count,
    }));
    totals
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use slurm_wasm_host::fixtures::bits;

    /// The generated variants have no `PartialEq`: tests compare their
    /// `Debug` text.
    fn debug(value: &impl std::fmt::Debug) -> String {
        format!("{value:?}")
    }

    fn cluster(text: &str) -> Cluster {
        let conf = slurm_conf::parse_str(text, Path::new("/etc/slurm/slurm.conf"))
            .unwrap_or_else(|e| panic!("{e}"));
        Cluster::from_slurm_conf(&conf).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(text: &str) -> String {
        let conf =
            slurm_conf::parse_str(text, Path::new("slurm.conf")).unwrap_or_else(|e| panic!("{e}"));
        Cluster::from_slurm_conf(&conf).unwrap_err().to_string()
    }

    #[test]
    fn anchor_cluster_records() {
        let cluster = cluster(include_str!("../../testdata/anchor-slurm.conf"));
        let names: Vec<&str> = cluster.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2", "n3", "n4", "h1", "h2"]);
        for (i, node) in cluster.nodes.iter().enumerate() {
            assert_eq!(node.index, i as u32);
            assert_eq!(
                (node.state.base, node.state.flags),
                (NodeBaseState::Idle, NodeStateFlags::empty())
            );
        }
        for n in &cluster.nodes[..4] {
            assert_eq!(
                (n.cpus, n.sockets, n.cores_per_socket, n.threads_per_core),
                (8, 2, 2, 2)
            );
            assert_eq!(n.real_memory, 4000);
            let gres: Vec<(&str, u64)> =
                n.gres.iter().map(|g| (g.name.as_str(), g.count)).collect();
            assert_eq!(gres, [("gpu", 2), ("mps", 200)]);
            assert_eq!(n.partitions, [0]);
        }
        for h in &cluster.nodes[4..] {
            assert_eq!(
                (h.cpus, h.sockets, h.cores_per_socket, h.threads_per_core),
                (2, 1, 2, 1)
            );
            assert_eq!(h.real_memory, 2000);
            assert!(h.gres.is_empty());
            assert_eq!(h.partitions, [1]);
        }

        let [big, hw] = &cluster.partitions[..] else {
            panic!("{:?}", cluster.partitions)
        };
        assert_eq!(
            (big.index, big.name.as_str(), hw.index, hw.name.as_str()),
            (0, "big", 1, "hw")
        );
        assert_eq!((big.nodes.len, bits(&big.nodes)), (6, vec![0, 1, 2, 3]));
        assert_eq!((hw.nodes.len, bits(&hw.nodes)), (6, vec![4, 5]));
        assert_eq!((big.default_time, big.max_time), (Some(5), Some(60)));
        assert_eq!((big.priority_job_factor, hw.priority_job_factor), (1, 2));
        assert_eq!(debug(&big.oversubscribe), debug(&Oversubscribe::No));
        assert_eq!(
            debug(&big.default_memory),
            debug(&MemoryRequest::PerCpu(250)),
            "the cluster's DefMemPerCPU"
        );
        assert_eq!(debug(&big.max_memory), debug(&MemoryRequest::None));

        let config = &cluster.config;
        assert_eq!(config.cluster_name, "anchor");
        assert_eq!(
            config.select_type_parameters,
            SelectTypeParams::CORE | SelectTypeParams::MEMORY
        );
        assert_eq!(
            debug(&config.default_memory),
            debug(&MemoryRequest::PerCpu(250))
        );
        assert_eq!((config.over_time_limit, config.kill_wait), (0, 30));
        assert_eq!(config.gres_types, ["gpu", "mps"]);
        assert_eq!(config.raw.len(), 41);
        assert!(config
            .raw
            .iter()
            .any(|kv| kv.key == "PriorityWeightTRES" && kv.value == "CPU=100,Mem=1,GRES/gpu=500"));

        let priority = cluster.priority_config();
        let partitions: Vec<(&str, u16)> = priority
            .partitions
            .iter()
            .map(|p| (p.name.as_str(), p.priority_job_factor))
            .collect();
        assert_eq!(partitions, [("big", 1), ("hw", 2)]);
        let tres = |p: usize| -> Vec<(&str, u64)> {
            priority.partition_tres[p]
                .iter()
                .map(|t| (t.name.as_str(), t.count))
                .collect()
        };
        // big = n[1-4]: 4 x 8 CPUs, 4 x 4000 MB, gpu:2 and mps:200 each; hw = h[1-2]: 2 x 2 CPUs.
        assert_eq!(
            tres(0),
            [
                ("cpu", 32),
                ("mem", 16000),
                ("node", 4),
                ("gres/gpu", 8),
                ("gres/mps", 800)
            ]
        );
        assert_eq!(
            &tres(1)[..3],
            [("cpu", 4), ("mem", tres(1)[1].1), ("node", 2)]
        );
        assert_eq!((priority.cluster_cpus, priority.cluster_nodes), (36, 6));
        let tres: Vec<(&str, u64)> = priority
            .cluster_tres
            .iter()
            .map(|t| (t.name.as_str(), t.count))
            .collect();
        assert_eq!(
            tres,
            [
                ("cpu", 36),
                ("mem", 20_000),
                ("node", 6),
                ("gres/gpu", 8),
                ("gres/mps", 800)
            ]
        );
        assert_eq!(cluster.select_config().partitions.len(), 2);
        assert_eq!(cluster.task_config("n2").node_name, "n2");
        assert_eq!(cluster.gres_config().auto_detect, None);
    }

    #[test]
    fn gres_conf_fills_topology_records_and_auto_detect() {
        // The real cluster's slurm.conf and gres.conf (select anchors,
        // Slurm 22.05): n nodes have a GPU per socket and 100 MPS shares on
        // each; h nodes have no GRES. The default gres.conf is the one next
        // to slurm.conf, as slurmd reads it.
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/anchor/select/cons_tres-CR_CPU_Memory");
        let conf = slurm_conf::load(&dir.join("slurm.conf")).unwrap();
        let gres = crate::gres_conf::find(&conf.path, None).unwrap();
        let cluster = Cluster::with_gres_conf(&conf, gres.as_ref()).unwrap();
        let n2 = &cluster.nodes[1];
        let topology: Vec<(&str, u64, Vec<u32>)> = n2
            .gres_topology
            .iter()
            .map(|g| (g.name.as_str(), g.count, bits(g.cores.as_ref().unwrap())))
            .collect();
        assert_eq!(
            topology,
            [
                ("gpu", 1, vec![0, 1]),
                ("gpu", 1, vec![2, 3]),
                ("mps", 100, vec![0, 1]),
                ("mps", 100, vec![2, 3]),
            ]
        );
        assert!(cluster.nodes[4].gres_topology.is_empty());
        let files: Vec<Vec<String>> = cluster
            .gres_records("n2", "gpu")
            .into_iter()
            .map(|r| r.files)
            .collect();
        assert_eq!(
            files,
            [
                ["/tmp/slurm-anchor/fakedev/nvidia0"],
                ["/tmp/slurm-anchor/fakedev/nvidia1"]
            ]
        );
        assert_eq!(cluster.gres_records("n2", "mps").len(), 2);
        assert!(cluster.gres_records("h1", "gpu").is_empty());
        assert!(cluster.gres_records("nowhere", "gpu").is_empty());
        assert_eq!(
            cluster.gres_config_for("n2").auto_detect.as_deref(),
            Some("off")
        );
        let hardware = cluster.node_hardware("n2").unwrap();
        assert_eq!(
            (hardware.cpus, hardware.sockets, hardware.cores_per_socket),
            (8, 2, 2)
        );
        assert_eq!(hardware.configured.len(), 2);
        assert!(cluster.node_hardware("nowhere").is_none());
        // Without gres.conf the topology stays empty (counts from Gres=).
        let plain = Cluster::with_gres_conf(&conf, None).unwrap();
        assert!(plain.nodes.iter().all(|n| n.gres_topology.is_empty()));
        assert_eq!(plain.gres_config_for("n2").auto_detect, None);
    }

    #[test]
    fn gres_conf_errors_name_its_line() {
        let conf = slurm_conf::parse_str(
            "GresTypes=gpu\nNodeName=a Sockets=1 CoresPerSocket=2\n",
            Path::new("slurm.conf"),
        )
        .unwrap();
        let gres =
            crate::gres_conf::parse_str("Name=gpu Cores=0-2\n", Path::new("gres.conf")).unwrap();
        assert_eq!(
            Cluster::with_gres_conf(&conf, Some(&gres))
                .unwrap_err()
                .to_string(),
            "gres.conf:1: Cores: core 2 is outside node a, which has 2 cores (1 sockets x 2 \
             cores); expected indices 0-1"
        );
        assert_eq!(
            crate::gres_conf::find(Path::new("slurm.conf"), Some(Path::new("/no/gres.conf")))
                .unwrap_err()
                .to_string(),
            "/no/gres.conf: cannot read: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn states_memory_and_cluster_options() {
        let cluster = cluster(concat!(
            "ClusterName=c MaxMemPerNode=9000 OverTimeLimit=UNLIMITED KillWait=5\n",
            "SchedulerParameters=bf_window=60,defer PreemptMode=SUSPEND,GANG TaskPluginParam=Cores,Verbose\n",
            "PreemptType=preempt/partition_prio\n",
            "NodeName=a State=DRAIN CPUs=4 CPUSpecList=0,2-3\n",
            "NodeName=b State=CLOUD\n",
            "NodeName=c State=DOWN\n",
            "NodeName=d State=FUTURE\n",
            "PartitionName=p Nodes=a,c DefMemPerNode=100 MaxMemPerCPU=0 OverSubscribe=FORCE:2\n",
            "PartitionName=q Nodes=ALL\n",
        ));
        let state = |i: usize| (cluster.nodes[i].state.base, cluster.nodes[i].state.flags);
        assert_eq!(state(0), (NodeBaseState::Idle, NodeStateFlags::DRAIN));
        assert_eq!(
            state(1),
            (
                NodeBaseState::Idle,
                NodeStateFlags::CLOUD | NodeStateFlags::POWER_SAVE
            )
        );
        assert_eq!(state(2), (NodeBaseState::Down, NodeStateFlags::empty()));
        assert_eq!(state(3), (NodeBaseState::Future, NodeStateFlags::empty()));
        let spec = cluster.nodes[0].cpu_spec_list.as_ref().unwrap();
        assert_eq!((spec.len, bits(spec)), (4, vec![0, 2, 3]));
        assert!(cluster.nodes[1].cpu_spec_list.is_none());
        assert_eq!(cluster.nodes[0].partitions, [0, 1]);
        assert_eq!(cluster.nodes[1].partitions, [1]);

        let (p, q) = (&cluster.partitions[0], &cluster.partitions[1]);
        assert_eq!(
            debug(&p.default_memory),
            debug(&MemoryRequest::PerNode(100))
        );
        assert_eq!(
            debug(&p.max_memory),
            debug(&MemoryRequest::None),
            "0 is no limit"
        );
        assert_eq!(debug(&p.oversubscribe), debug(&Oversubscribe::Force(2)));
        assert_eq!(debug(&q.default_memory), debug(&MemoryRequest::None));
        assert_eq!(debug(&q.max_memory), debug(&MemoryRequest::PerNode(9000)));

        let config = &cluster.config;
        assert_eq!((config.over_time_limit, config.kill_wait), (u16::MAX, 5));
        assert_eq!(config.scheduler_parameters, ["bf_window=60", "defer"]);
        assert_eq!(
            config.preempt_mode,
            PreemptModes::SUSPEND | PreemptModes::GANG
        );
        assert_eq!(
            config.task_plugin_param,
            TaskPluginParams::CORES | TaskPluginParams::VERBOSE
        );
        assert_eq!(config.select_type_parameters, SelectTypeParams::empty());
        assert!(config.gres_types.is_empty());
    }

    // Issue 26, class 6: a CPUSpecList range written out once per
    // repetition (100,000 copies of 0-65534 made 6.5 billion ids, 26 GB)
    // is now merged first; the nodes of one line share the list's bitmap.
    #[test]
    fn cpu_spec_lists_cost_their_text_and_cpus() {
        let list = "0-65534,".repeat(100_000) + "7,3-4";
        let wide = cluster(&format!("NodeName=n[1-3] CPUs=65535 CPUSpecList={list}\n"));
        for node in &wide.nodes {
            let spec = node.cpu_spec_list.as_ref().unwrap();
            assert_eq!((spec.len, spec.ones().count()), (65_535, 65_535));
        }
        let cluster = cluster("NodeName=a CPUs=8 CPUSpecList=6,1-2,2-3,0\nNodeName=b CPUs=8\n");
        assert_eq!(
            bits(cluster.nodes[0].cpu_spec_list.as_ref().unwrap()),
            [0, 1, 2, 3, 6]
        );
        assert!(cluster.nodes[1].cpu_spec_list.is_none());
    }

    /// Each node's partitions come from the partitions' member lists.
    #[test]
    fn nodes_know_their_partitions() {
        let cluster = cluster(
            "NodeName=n[1-5]\nPartitionName=a Nodes=n[2-3]\nPartitionName=b Nodes=ALL\n\
             PartitionName=c\nPartitionName=d Nodes=n3,n5\n",
        );
        let partitions: Vec<&[u32]> = cluster
            .nodes
            .iter()
            .map(|n| n.partitions.as_slice())
            .collect();
        assert_eq!(partitions, [&[1][..], &[0, 1], &[0, 1, 3], &[1], &[1, 3]]);
    }

    #[test]
    fn select_type_parameters_as_22_05_reads_them() {
        // read_config.c refuses what parse_select_type_param
        // (common/slurm_selecttype_info.c) does not take.
        assert_eq!(
            error("ClusterName=c\nSelectTypeParameters=CR_Core_Memory,CR_LL_SHARED_GRES\n"),
            "slurm.conf:2: Bad SelectTypeParameter: `CR_LL_SHARED_GRES` is not a parameter of \
             Slurm 22.05 (expected CR_Socket, CR_Socket_Memory, CR_Core, CR_Core_Memory, \
             CR_Memory, CR_CPU, CR_CPU_Memory, other_cons_res, other_cons_tres, \
             CR_ALLOCATE_FULL_SOCKET, CR_ONE_TASK_PER_CORE, CR_CORE_DEFAULT_DIST_BLOCK, CR_LLN, \
             CR_PACK_NODES)"
        );
        assert_eq!(
            error("SelectTypeParameters=CR_Core,cr_memory\n"),
            "slurm.conf:1: Bad SelectTypeParameter: `CR_Core` and `cr_memory` name more than \
             one allocation unit"
        );
        assert!(
            error("SelectTypeParameters=CR_CPU_Memory,CR_ONE_TASK_PER_CORE\n")
                .contains("not compatible with CR_CPU*")
        );
        // The bits parse_select_type_param sets (CR_ALLOCATE_FULL_SOCKET,
        // deprecated, sets none).
        type F = SelectTypeParams;
        let flags = |value: &str| {
            cluster(&format!("SelectTypeParameters={value}\n"))
                .config
                .select_type_parameters
        };
        assert_eq!(
            flags("cr_core_memory,CR_ALLOCATE_FULL_SOCKET,CR_LLN"),
            F::CORE | F::MEMORY | F::LLN
        );
        assert_eq!(
            flags("CR_Socket,CR_ONE_TASK_PER_CORE,CR_Pack_Nodes"),
            F::SOCKET | F::ONE_TASK_PER_CORE | F::PACK_NODES
        );
        assert_eq!(
            flags("CR_CPU_Memory,CR_CORE_DEFAULT_DIST_BLOCK,other_cons_tres"),
            F::CPU | F::MEMORY | F::CORE_DEFAULT_DIST_BLOCK | F::OTHER_CONS_TRES
        );
    }

    #[test]
    fn task_plugin_param_as_22_05_reads_it() {
        // read_config.c (`_validate_and_set_task_plugin_param`): the
        // CPU_BIND_* bits of each word, Slurm's messages for the rest.
        type F = TaskPluginParams;
        let flags = |value: &str| {
            cluster(&format!("TaskPluginParam={value}\n"))
                .config
                .task_plugin_param
        };
        assert_eq!(flags("Cores,Verbose"), F::CORES | F::VERBOSE);
        assert_eq!(
            flags("autobind=threads,SlurmdOffSpec"),
            F::AUTOBIND_THREADS | F::SLURMD_OFF_SPEC
        );
        assert_eq!(flags("Autobind=none"), F::empty());
        assert_eq!(flags("none"), F::NONE);
        for (value, message) in [
            ("Cores,Sockets", "Bad TaskPluginParam: Sockets"),
            (
                "autobind=cores,autobind=threads",
                "Bad TaskPluginParam: autobind already set",
            ),
            (
                "Autobind=boards",
                "Bad TaskPluginParam autobind value: boards",
            ),
            ("OOMKillStep", "Bad TaskPluginParam: OOMKillStep"),
        ] {
            assert_eq!(
                error(&format!("TaskPluginParam={value}\n")),
                format!("slurm.conf:1: {message}")
            );
        }
    }

    #[test]
    fn preempt_mode_as_22_05_reads_it() {
        // preempt_mode_num (common/slurm_protocol_defs.c): OFF and CLUSTER
        // are no bit, ON is SUSPEND; a partition without its own line has
        // none (NO_VAL16).
        let c = cluster(
            "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE,WITHIN\n\
             NodeName=n1\nPartitionName=a Nodes=n1 PreemptMode=CLUSTER\n\
             PartitionName=b Nodes=n1 PreemptMode=ON,GANG\nPartitionName=c Nodes=n1\n",
        );
        assert_eq!(
            c.config.preempt_mode,
            PreemptModes::REQUEUE | PreemptModes::WITHIN
        );
        let modes: Vec<_> = c.partitions.iter().map(|p| p.preempt_mode).collect();
        assert_eq!(
            modes,
            [
                Some(PreemptModes::empty()),
                Some(PreemptModes::SUSPEND | PreemptModes::GANG),
                None
            ]
        );
    }

    #[test]
    fn bad_values_name_file_and_line() {
        assert_eq!(
            error("ClusterName=c\nKillWait=soon\n"),
            "slurm.conf:2: KillWait: expected a number of seconds, found `soon`"
        );
        assert_eq!(
            error("OverTimeLimit=70000\n"),
            "slurm.conf:1: OverTimeLimit: expected a number of minutes or UNLIMITED, found `70000`"
        );
        assert_eq!(
            error("DefMemPerCPU=1\nDefMemPerNode=2\n"),
            "slurm.conf:2: DefMemPerCPU and DefMemPerNode exclude each other; give one"
        );
        assert_eq!(
            error("\nNodeName=a CPUs=4 CPUSpecList=1-4\n"),
            "slurm.conf:2: CPUSpecList: expected CPU ids below the node's 4 CPUs, like 0-1,4; found `1-4`"
        );
        assert!(error("NodeName=a CPUs=4 CPUSpecList=2-1\n").contains("found `2-1`"));
        assert_eq!(
            error("ClusterName=c\nDefMemPerGPU=lots\n"),
            "slurm.conf:2: DefMemPerGPU: expected a number of MB, found `lots`"
        );
    }

    #[test]
    fn gpu_defaults_stay_where_they_were_written() {
        // Slurm keeps a partition's job_defaults_list apart from the
        // cluster's; cons_tres looks at the partition's first
        // (`_set_gpu_defaults`, cons_common/job_test.c:227).
        let cluster = cluster(concat!(
            "DefCpuPerGPU=2 DefMemPerGPU=1500\n",
            "NodeName=a\n",
            "PartitionName=p Nodes=a DefMemPerGPU=4000\n",
            "PartitionName=q Nodes=a\n",
        ));
        let cluster_wide = &cluster.config.gpu_defaults;
        assert_eq!(
            (cluster_wide.cpus_per_gpu, cluster_wide.mem_per_gpu),
            (Some(2), Some(1500))
        );
        let (p, q) = (
            &cluster.partitions[0].gpu_defaults,
            &cluster.partitions[1].gpu_defaults,
        );
        assert_eq!((p.cpus_per_gpu, p.mem_per_gpu), (None, Some(4000)));
        assert_eq!((q.cpus_per_gpu, q.mem_per_gpu), (None, None));
    }
}
