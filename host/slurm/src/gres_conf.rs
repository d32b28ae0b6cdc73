//! Reading Slurm's `gres.conf` into the contract's records.
//!
//! `slurmd` reads `gres.conf` from the directory of `slurm.conf`
//! ([`default_path`]); the host does the same, or takes an explicit path.
//! This module parses the file ([`parse_str`], [`load`]) and then, for one
//! node of a `slurm.conf`, selects the lines that apply to it and turns them
//! into the records the gres plugins' `node-config-load` takes
//! ([`GresConfRecord`]) and the device groups `select/cons_tres` schedules
//! with (`node.gres-topology`, [`GresDeviceGroup`]), see
//! [`GresConfFile::node`].
//!
//! # Syntax
//!
//! - The syntax of every Slurm configuration file, read by the same reader
//!   as slurm.conf (22.05's `s_p_parse_file`): `Key=Value` pairs separated
//!   by whitespace (spaces around `=` allowed), keys case-insensitive,
//!   quoted values, `#` starts a comment (`\#` is a `#`), a line ending in
//!   `\` continues on the next one, `Include` reads another file.
//! - A line with `Name=` describes one GRES record. With `NodeName=<hostlist>`
//!   (`n[01-04]`, see [`crate::hostlist`]) it applies to those nodes only;
//!   without, to every node.
//! - A line with `AutoDetect=` and no `Name=` sets the detection back-end:
//!   for the nodes of its `NodeName=`, or for every node when it has none.
//!   A node's own value wins over the global one; within each, the last
//!   line wins. `AutoDetect=` on a `Name=` line counts the same way.
//! - Keys: `Name`, `Type`, `File` (alias `Files`, hostlist syntax:
//!   `/dev/nvidia[0-3]` is four files), `MultipleFiles` (several files that
//!   form one device, as MIG does; excludes `File`), `Count` (a number with
//!   an optional `K`/`M`/`G`/`T`/`P` suffix, powers of 1024), `Cores` (alias
//!   `CPUs`: core indices of the node, `0-1,4`), `Links` (link counts to
//!   devices 0, 1, ..., `-1` for the device itself), `Flags` (comma list of
//!   `CountOnly`, `explicit`, `one_sharing`, `all_sharing`, `env_uuid`,
//!   `nvidia_gpu_env`, `amd_gpu_env`, `intel_gpu_env`, `opencl_env`,
//!   `no_gpu_env`), `AutoDetect` (`nvml`, `nvidia`, `rsmi`, `oneapi`,
//!   `nrt`, `full` or `off`) and `NodeName`.
//!
//! # What a record carries
//!
//! `Count` defaults to the number of files, or 1 without files. A
//! `MultipleFiles` record has count 1 and lists all its files: a gpu record
//! whose count is below its number of files is such a record (for `File=`
//! the two must be equal). `cores` is a bitmap over the node's cores
//! (sockets x cores per socket); `links` is the text as written; `flags`
//! are the tokens in their canonical spelling; `unique-id` is never set
//! from the file.
//!
//! # Device groups
//!
//! Each line of a GRES with devices is one group (count, cores, links).
//! For the shared GRES `mps` and `shard` each group is one GPU: a line
//! with files gives one group per file, its count spread over them, each
//! group taking the `Cores` of the `gpu` line with that file unless the
//! line has its own (Slurm copies the GPU's cores to the MPS record); a line
//! without files spreads its count over the GPU files of the node's `gpu`
//! lines (`share = remaining / GPUs left`, so 301 over 2 GPUs is 150 and
//! 151), each group taking that GPU's `Cores`; with no GPU file known the
//! line is one group.
//!
//! # Failure modes
//!
//! Every problem is a [`ConfError`] naming the file and line and saying
//! what was expected: a token that is not `Key=Value`, an unknown or
//! repeated key, a line with neither `Name=` nor `AutoDetect=`, a malformed
//! hostlist, count, core list, link list, flag or detection back-end, `File`
//! together with `MultipleFiles`, `Links` on a line with several devices, a
//! `Count` different from the number of files of a non-shared GRES, more
//! than 1024 files on a line (counted from the ranges, before they are
//! expanded), or a file beyond the limits below. The per-node checks
//! ([`GresConfFile::node`]) add a name not in `GresTypes`, cores outside
//! the node, and one file listed twice for one GRES of a node, and mixing
//! lines with and without `File=` for one shared GRES of a node (Slurm
//! refuses both). Lines naming hosts outside `slurm.conf` are ignored, as
//! `slurmd` ignores lines for other hosts.
//!
//! # Limits
//!
//! A short `gres.conf` could otherwise describe more than memory holds
//! (`Cores=0-65534` written a hundred thousand times, a `NodeName=` of a
//! million hosts on every line, a line without `NodeName=` copied to every
//! node of a large cluster). So the file is at most
//! [`slurm_conf::MAX_TEXT`](crate::slurm_conf::MAX_TEXT) bytes; its
//! hostlists (`NodeName=`, `File=`, `MultipleFiles=`) expand to at most
//! [`MAX_LISTED_NAMES`] names and [`MAX_LISTED_BYTES`] bytes together, each
//! also within [`hostlist`]'s own bounds; its `Cores=` lists hold at most
//! [`MAX_CORE_INDICES`] indices together; and the records and device groups
//! [`GresConfFile::nodes`] builds for a whole cluster take at most
//! [`MAX_RECORD_BYTES`], estimated before they are built. Each refusal names
//! the line and the bound.

use std::collections::HashMap;
use std::mem::size_of;
use std::path::{Path, PathBuf};

use crate::hostlist;
use crate::slurm_conf::{ConfError, NodeConf, Origin, SlurmConf};
use slurm_wasm_host::bindings::types::{Bitmap, GresDeviceGroup};
use slurm_wasm_host::kinds::gres::GresConfRecord;
use slurm_wasm_host::ranges;

/// The most device files one line may list (Slurm's per-node limit).
pub const MAX_FILES: usize = 1024;

/// The most names the hostlists of one file may expand to together: 4 x
/// [`hostlist::MAX_NAMES`].
pub const MAX_LISTED_NAMES: usize = 4 * hostlist::MAX_NAMES;

/// The most bytes of names the hostlists of one file may expand to
/// together: [`hostlist::MAX_BYTES`] (64 MiB).
pub const MAX_LISTED_BYTES: usize = hostlist::MAX_BYTES;

/// The most core indices the `Cores=` lists of one file may hold together
/// (2^22, 16 MiB), after each list's duplicates are removed.
pub const MAX_CORE_INDICES: usize = 1 << 22;

/// The most bytes, estimated, that the records and device groups of every
/// node of a cluster may take together ([`GresConfFile::nodes`]): 256 MiB.
pub const MAX_RECORD_BYTES: u64 = 256 << 20;

/// The most cores a `Cores=` index may name: below 65535, as in Slurm.
const MAX_CORES: u32 = u16::MAX as u32;

/// The GRES names whose count is a number of shares of a GPU.
const SHARED: [&str; 2] = ["mps", "shard"];

/// The `Flags=` tokens Slurm knows, in their canonical spelling.
const FLAGS: [&str; 10] = [
    "CountOnly",
    "explicit",
    "one_sharing",
    "all_sharing",
    "env_uuid",
    "nvidia_gpu_env",
    "amd_gpu_env",
    "intel_gpu_env",
    "opencl_env",
    "no_gpu_env",
];

/// The `AutoDetect=` back-ends.
const AUTO_DETECT: [&str; 7] = ["nvml", "nvidia", "rsmi", "oneapi", "nrt", "full", "off"];

/// The keys of a line, canonical spelling first, then aliases.
const KEYS: [(&str, &str); 12] = [
    ("AutoDetect", "AutoDetect"),
    ("Cores", "Cores"),
    ("CPUs", "Cores"),
    ("Count", "Count"),
    ("File", "File"),
    ("Files", "File"),
    ("Flags", "Flags"),
    ("Links", "Links"),
    ("MultipleFiles", "MultipleFiles"),
    ("Name", "Name"),
    ("NodeName", "NodeName"),
    ("Type", "Type"),
];

/// A parsed `gres.conf`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresConfFile {
    /// The file.
    pub path: PathBuf,
    /// `AutoDetect=` lines, in file order.
    pub auto_detect: Vec<AutoDetectLine>,
    /// `Name=` lines, in file order.
    pub lines: Vec<GresLine>,
}

/// An `AutoDetect=` setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoDetectLine {
    /// The file and line it is on.
    pub origin: Origin,
    /// The nodes it applies to; `None` for every node.
    pub nodes: Option<Vec<String>>,
    /// The back-end, lower case (`nvml`).
    pub value: String,
}

/// One `Name=` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresLine {
    /// The file and line it is on.
    pub origin: Origin,
    /// `NodeName=` expanded; `None` for every node.
    pub nodes: Option<Vec<String>>,
    /// `Name=`, as written (`gpu`); never empty.
    pub name: String,
    /// `Type=` (`a100`), if given and not empty.
    pub type_name: Option<String>,
    /// `File=` or `MultipleFiles=` expanded.
    pub files: Vec<String>,
    /// The files are `MultipleFiles=`: together one device.
    pub multiple_files: bool,
    /// `Count=`, or its default (see the [module documentation](self)).
    pub count: u64,
    /// `Cores=` as core indices, ascending, duplicates removed.
    pub cores: Option<Vec<u32>>,
    /// `Links=` as written and as numbers.
    pub links: Option<(String, Vec<i32>)>,
    /// `Flags=` tokens, canonical spelling.
    pub flags: Vec<String>,
}

impl GresLine {
    fn applies_to(&self, node: &str) -> bool {
        self.nodes
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == node))
    }

    fn is_shared(&self) -> bool {
        SHARED.contains(&self.name.as_str())
    }
}

/// What `gres.conf` says about one node.
#[derive(Debug, Clone)]
pub struct NodeGres {
    /// The node's `AutoDetect=` (its own, else the global one).
    pub auto_detect: Option<String>,
    /// The records of every GRES of the node, in file order.
    pub records: Vec<GresConfRecord>,
    /// The node's device groups, in file order per GRES name.
    pub topology: Vec<GresDeviceGroup>,
}

impl NodeGres {
    /// The records for the gres plugin of `name`.
    pub fn records_for(&self, name: &str) -> Vec<GresConfRecord> {
        self.records
            .iter()
            .filter(|r| r.name == name)
            .cloned()
            .collect()
    }
}

/// Where `slurmd` looks for `gres.conf`: next to `slurm_conf`.
pub fn default_path(slurm_conf: &Path) -> PathBuf {
    slurm_conf
        .parent()
        .unwrap_or(Path::new(""))
        .join("gres.conf")
}

/// The `gres.conf` of a site: the one at `explicit` when given, else the
/// one next to `slurm_conf` ([`default_path`]) when it exists; `None` when
/// there is none, which is a site without `gres.conf`.
///
/// # Errors
///
/// A [`ConfError`] when `explicit` (or the existing default file) cannot
/// be read or parsed.
pub fn find(slurm_conf: &Path, explicit: Option<&Path>) -> Result<Option<GresConfFile>, ConfError> {
    match explicit {
        Some(path) => load(path).map(Some),
        None => {
            let path = default_path(slurm_conf);
            if path.exists() {
                load(&path).map(Some)
            } else {
                Ok(None)
            }
        }
    }
}

/// Reads and parses the `gres.conf` at `path`.
///
/// # Errors
///
/// A [`ConfError`] when the file cannot be read, or any problem of the
/// file alone listed in the [module documentation](self).
pub fn load(path: &Path) -> Result<GresConfFile, ConfError> {
    let text = ConfError::read(path, None)?;
    parse_str(&text, path)
}

/// Parses `text` as the contents of the file `path`.
///
/// # Errors
///
/// A [`ConfError`] for any problem of the file alone listed in the
/// [module documentation](self).
pub fn parse_str(text: &str, path: &Path) -> Result<GresConfFile, ConfError> {
    let mut file = GresConfFile {
        path: path.to_path_buf(),
        auto_detect: Vec::new(),
        lines: Vec::new(),
    };
    let mut limits = FileLimits {
        hostlists: hostlist::Budget::new(MAX_LISTED_NAMES, MAX_LISTED_BYTES),
        core_indices: MAX_CORE_INDICES,
    };
    for line in crate::slurm_conf::logical_lines(text, path)? {
        file.line(&line.pairs, line.origin, &mut limits)?;
    }
    Ok(file)
}

/// What the rest of a file may still expand to.
struct FileLimits {
    hostlists: hostlist::Budget,
    /// Core indices left of [`MAX_CORE_INDICES`].
    core_indices: usize,
}

impl FileLimits {
    /// `expr` of `key` expanded within the file's hostlist budget.
    fn expand(&mut self, key: &str, expr: &str, origin: &Origin) -> Result<Vec<String>, ConfError> {
        self.hostlists
            .expand(expr)
            .map_err(|e| origin.error(format!("{key}=`{expr}`: {e}")))
    }
}

impl GresConfFile {
    /// What the file says about every node of `slurm`, by node index.
    ///
    /// The lines of each node are found through an index of the file's
    /// node names built once, so the work is the file's size plus what is
    /// built for each node.
    ///
    /// # Errors
    ///
    /// The first problem [`node`](Self::node) finds, in node order, or the
    /// records of all nodes together exceeding [`MAX_RECORD_BYTES`].
    pub fn nodes(&self, slurm: &SlurmConf) -> Result<Vec<NodeGres>, ConfError> {
        let types = slurm.gres_types();
        let index = NodeIndex::new(self);
        let mut left = MAX_RECORD_BYTES;
        slurm
            .nodes
            .iter()
            .map(|node| {
                let (lines, auto_detect) = index.of(self, &node.name);
                self.node_of(node, &types, lines, auto_detect, &mut left)
            })
            .collect()
    }

    fn line(
        &mut self,
        pairs: &[(String, String)],
        origin: Origin,
        limits: &mut FileLimits,
    ) -> Result<(), ConfError> {
        let mut keys: HashMap<&'static str, &str> = HashMap::new();
        for (key, value) in pairs {
            let (key, value) = (key.as_str(), value.as_str());
            let Some((_, canonical)) = KEYS.iter().find(|(k, _)| k.eq_ignore_ascii_case(key))
            else {
                let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
                return Err(origin.error(format!(
                    "unknown key `{key}`; expected one of {}",
                    known.join(", ")
                )));
            };
            if keys.insert(canonical, value).is_some() {
                return Err(origin.error(format!("{canonical} given twice on one line")));
            }
        }
        if keys.is_empty() {
            return Ok(());
        }
        let nodes = keys
            .get("NodeName")
            .map(|expr| limits.expand("NodeName", expr, &origin))
            .transpose()?;
        if let Some(value) = keys.get("AutoDetect") {
            let lower = value.to_ascii_lowercase();
            if !AUTO_DETECT.contains(&lower.as_str()) {
                return Err(origin.error(format!(
                    "AutoDetect=`{value}`: expected one of {}",
                    AUTO_DETECT.join(", ")
                )));
            }
            if let (Some(names), true) = (&nodes, keys.contains_key("Name")) {
                // The line's nodes are kept twice: count the copy.
                let bytes = names.iter().map(String::len).sum();
                limits
                    .hostlists
                    .charge(names.len(), bytes)
                    .map_err(|e| origin.error(format!("NodeName: {e}")))?;
            }
            self.auto_detect.push(AutoDetectLine {
                origin: origin.clone(),
                nodes: nodes.clone(),
                value: lower,
            });
        }
        let Some(name) = keys.get("Name") else {
            if let Some(key) = keys
                .keys()
                .find(|k| !matches!(**k, "NodeName" | "AutoDetect"))
            {
                return Err(origin.error(format!("{key}= needs a Name= on its line")));
            }
            if !keys.contains_key("AutoDetect") {
                return Err(origin.error("expected Name= or AutoDetect= on a NodeName line"));
            }
            return Ok(());
        };
        if name.is_empty() {
            return Err(origin.error("Name: expected a GRES name, like gpu"));
        }
        let line = gres_line(&keys, name, nodes, &origin, limits)?;
        self.lines.push(line);
        Ok(())
    }

    /// What the file says about `node`, checked against the node's shape
    /// and `gres_types` (slurm.conf `GresTypes`).
    ///
    /// # Errors
    ///
    /// A [`ConfError`] at the offending line for a GRES name not in
    /// `gres_types`, a `Cores=` index at or beyond the node's cores, a file
    /// listed twice for one GRES of the node, lines with and without
    /// `File=` for one shared GRES of the node, or records of more than
    /// [`MAX_RECORD_BYTES`].
    pub fn node(&self, node: &NodeConf, gres_types: &[String]) -> Result<NodeGres, ConfError> {
        let lines: Vec<&GresLine> = self
            .lines
            .iter()
            .filter(|l| l.applies_to(&node.name))
            .collect();
        let auto_detect = self
            .auto_detect
            .iter()
            .rev()
            .find(|a| a.nodes.as_ref().is_some_and(|n| n.contains(&node.name)))
            .or_else(|| self.auto_detect.iter().rev().find(|a| a.nodes.is_none()));
        let mut left = MAX_RECORD_BYTES;
        self.node_of(node, gres_types, lines, auto_detect, &mut left)
    }

    /// [`node`](Self::node) for the `lines` and `auto_detect` setting that
    /// apply to `node`, taking the records' estimated bytes from `left`
    /// before they are built.
    fn node_of(
        &self,
        node: &NodeConf,
        gres_types: &[String],
        lines: Vec<&GresLine>,
        auto_detect: Option<&AutoDetectLine>,
        left: &mut u64,
    ) -> Result<NodeGres, ConfError> {
        let cores = u32::from(node.sockets) * u32::from(node.cores_per_socket);
        records_cost(&lines, cores, left)?;
        let mut seen_files: HashMap<(&str, &str), &Origin> = HashMap::new();
        for line in &lines {
            if !gres_types
                .iter()
                .any(|t| t.eq_ignore_ascii_case(&line.name))
            {
                return Err(line.origin.error(format!(
                    "Name={}: not in slurm.conf GresTypes ({})",
                    line.name,
                    if gres_types.is_empty() {
                        "empty".to_owned()
                    } else {
                        gres_types.join(",")
                    }
                )));
            }
            if let Some(&bad) = line.cores.iter().flatten().find(|&&c| c >= cores) {
                return Err(line.origin.error(format!(
                    "Cores: core {bad} is outside node {}, which has {cores} cores \
                     ({} sockets x {} cores); expected indices 0-{}",
                    node.name,
                    node.sockets,
                    node.cores_per_socket,
                    cores.saturating_sub(1)
                )));
            }
            for file in &line.files {
                if let Some(first) = seen_files.insert((&line.name, file), &line.origin) {
                    return Err(line.origin.error(format!(
                        "File {file} of {} on node {} is already listed at {first}",
                        line.name, node.name
                    )));
                }
            }
        }
        for shared in SHARED {
            let of: Vec<&&GresLine> = lines.iter().filter(|l| l.name == shared).collect();
            if let (Some(with), Some(without)) = (
                of.iter().find(|l| !l.files.is_empty()),
                of.iter().find(|l| l.files.is_empty()),
            ) {
                return Err(without.origin.error(format!(
                    "{shared} on node {}: lines without File= cannot be mixed with lines \
                     with File= (as at {})",
                    node.name, with.origin
                )));
            }
        }
        let auto_detect = auto_detect.map(|a| a.value.clone());
        let core_map =
            |list: &Option<Vec<u32>>| list.as_ref().map(|c| Bitmap::with_ones(cores, c.clone()));
        let records = lines
            .iter()
            .map(|l| GresConfRecord {
                origin: l.origin.to_string(),
                name: l.name.clone(),
                type_name: l.type_name.clone(),
                files: l.files.clone(),
                count: l.count,
                cores: core_map(&l.cores),
                links: l.links.as_ref().map(|(text, _)| text.clone()),
                flags: l.flags.clone(),
                unique_id: None,
            })
            .collect();
        let gpu_lines = || lines.iter().filter(|l| l.name == "gpu");
        let gpus: Vec<Option<Bitmap>> = gpu_lines()
            .flat_map(|l| {
                let devices = if l.multiple_files { 1 } else { l.files.len() };
                std::iter::repeat_n(core_map(&l.cores), devices)
            })
            .collect();
        // Each GPU file's line (the first that lists it).
        let mut gpu_files: HashMap<&str, &GresLine> = HashMap::new();
        for line in gpu_lines() {
            for file in &line.files {
                gpu_files.entry(file).or_insert(line);
            }
        }
        let gpu_cores = |file: &str| gpu_files.get(file).and_then(|l| core_map(&l.cores));
        let mut topology = Vec::new();
        for line in &lines {
            let group = |count: u64, cores: Option<Bitmap>, links: Vec<i32>| GresDeviceGroup {
                name: line.name.clone(),
                type_name: line.type_name.clone(),
                count,
                cores,
                links,
            };
            if !line.is_shared() {
                let links = line
                    .links
                    .as_ref()
                    .map(|(_, l)| l.clone())
                    .unwrap_or_default();
                topology.push(group(line.count, core_map(&line.cores), links));
                continue;
            }
            let targets: Vec<Option<Bitmap>> = if !line.files.is_empty() {
                line.files
                    .iter()
                    .map(|f| core_map(&line.cores).or_else(|| gpu_cores(f)))
                    .collect()
            } else if gpus.is_empty() {
                vec![core_map(&line.cores)]
            } else {
                gpus.iter()
                    .map(|c| core_map(&line.cores).or_else(|| c.clone()))
                    .collect()
            };
            let mut remaining = line.count;
            let mut left = targets.len() as u64;
            for cores in targets {
                let share = remaining / left;
                remaining -= share;
                left -= 1;
                topology.push(group(share, cores, Vec::new()));
            }
        }
        Ok(NodeGres {
            auto_detect,
            records,
            topology,
        })
    }
}

/// The lines and `AutoDetect` setting of each node named in a file, built
/// once for [`GresConfFile::nodes`].
struct NodeIndex<'a> {
    /// Lines without `NodeName=`, by position in the file.
    every: Vec<usize>,
    /// The lines naming each node, by position in the file.
    named: HashMap<&'a str, Vec<usize>>,
    /// The last `AutoDetect=` without `NodeName=`.
    auto_every: Option<&'a AutoDetectLine>,
    /// The last `AutoDetect=` naming each node.
    auto_named: HashMap<&'a str, &'a AutoDetectLine>,
}

impl<'a> NodeIndex<'a> {
    fn new(file: &'a GresConfFile) -> NodeIndex<'a> {
        let mut index = NodeIndex {
            every: Vec::new(),
            named: HashMap::new(),
            auto_every: None,
            auto_named: HashMap::new(),
        };
        for (at, line) in file.lines.iter().enumerate() {
            match &line.nodes {
                None => index.every.push(at),
                Some(names) => {
                    for name in names {
                        let lines = index.named.entry(name.as_str()).or_default();
                        // A line naming a node twice applies to it once.
                        if lines.last() != Some(&at) {
                            lines.push(at);
                        }
                    }
                }
            }
        }
        for auto in &file.auto_detect {
            match &auto.nodes {
                None => index.auto_every = Some(auto),
                Some(names) => {
                    for name in names {
                        index.auto_named.insert(name.as_str(), auto);
                    }
                }
            }
        }
        index
    }

    /// The lines that apply to `node` in file order, and its `AutoDetect`.
    fn of(
        &self,
        file: &'a GresConfFile,
        node: &str,
    ) -> (Vec<&'a GresLine>, Option<&'a AutoDetectLine>) {
        let mut at: Vec<usize> = self.every.clone();
        if let Some(named) = self.named.get(node) {
            at.extend(named);
            at.sort_unstable();
        }
        let auto = self.auto_named.get(node).copied().or(self.auto_every);
        (at.into_iter().map(|i| &file.lines[i]).collect(), auto)
    }
}

/// Takes from `left` the bytes, estimated, of the records and device groups
/// [`GresConfFile::node`] builds from `lines` for a node of `cores` cores:
/// each record with its files and core bitmap, each device group with its
/// bitmap and links. Refuses, at the line that crosses it, more than is
/// left.
fn records_cost(lines: &[&GresLine], cores: u32, left: &mut u64) -> Result<(), ConfError> {
    let bitmap = u64::from(cores).div_ceil(64) * 8;
    let gpus: u64 = lines
        .iter()
        .filter(|l| l.name == "gpu")
        .map(|l| {
            if l.multiple_files {
                1
            } else {
                l.files.len() as u64
            }
        })
        .sum();
    for line in lines {
        let text = |s: &str| s.len() as u64 + 16;
        let files: u64 = line
            .files
            .iter()
            .map(|f| size_of::<String>() as u64 + text(f))
            .sum();
        let flags: u64 = line
            .flags
            .iter()
            .map(|f| size_of::<String>() as u64 + text(f))
            .sum();
        let record = size_of::<GresConfRecord>() as u64
            + 64
            + text(&line.name)
            + files
            + flags
            + line.links.as_ref().map_or(0, |(l, _)| text(l))
            + line.cores.as_ref().map_or(0, |_| bitmap);
        let groups = match (line.is_shared(), line.files.len()) {
            (false, _) => 1,
            (true, 0) => gpus.max(1),
            (true, files) => files as u64,
        };
        let links = line.links.as_ref().map_or(0, |(_, l)| l.len() as u64 * 4);
        // A device group is kept twice: in the node's gres and its record.
        let group = 2 * (size_of::<GresDeviceGroup>() as u64 + text(&line.name) + bitmap + links);
        let cost = record.saturating_add(groups.saturating_mul(group));
        *left = left.checked_sub(cost).ok_or_else(|| {
            line.origin.error(format!(
                "the records and device groups gres.conf gives the cluster's nodes would take \
                 more than {MAX_RECORD_BYTES} bytes with this line; give fewer lines, files or \
                 nodes per line"
            ))
        })?;
    }
    Ok(())
}

fn gres_line(
    keys: &HashMap<&'static str, &str>,
    name: &str,
    nodes: Option<Vec<String>>,
    origin: &Origin,
    limits: &mut FileLimits,
) -> Result<GresLine, ConfError> {
    let shared = SHARED.contains(&name);
    if keys.contains_key("File") && keys.contains_key("MultipleFiles") {
        return Err(origin.error("File and MultipleFiles exclude each other; give one"));
    }
    let (files, multiple_files) = match (keys.get("File"), keys.get("MultipleFiles")) {
        (Some(expr), _) => (files(expr, "File", origin, limits)?, false),
        (_, Some(expr)) => (files(expr, "MultipleFiles", origin, limits)?, true),
        _ => (Vec::new(), false),
    };
    let count = match keys.get("Count") {
        Some(text) => parse_count(text).ok_or_else(|| {
            origin.error(format!(
                "Count=`{text}`: expected a number with an optional K, M, G, T or P suffix"
            ))
        })?,
        None if multiple_files || files.is_empty() => 1,
        None => files.len() as u64,
    };
    let devices = if multiple_files { 1 } else { files.len() };
    if !files.is_empty() && !shared && count != devices as u64 {
        return Err(origin.error(format!(
            "Count={count} does not match the {devices} device(s) of its {}",
            if multiple_files {
                "MultipleFiles"
            } else {
                "File"
            }
        )));
    }
    let cores = keys
        .get("Cores")
        .map(|text| {
            let cores = ranges::parse(text, MAX_CORES).ok_or_else(|| {
                origin.error(format!(
                    "Cores=`{text}`: expected core indices below {MAX_CORES} and ranges, \
                     like 0-1,4"
                ))
            })?;
            limits.core_indices =
                limits
                    .core_indices
                    .checked_sub(cores.len())
                    .ok_or_else(|| {
                        origin.error(format!(
                            "Cores: with the lines before it, the file's Cores= lists name more \
                         than {MAX_CORE_INDICES} cores in all"
                        ))
                    })?;
            Ok(cores)
        })
        .transpose()?;
    let links = keys
        .get("Links")
        .map(|text| parse_links(text, origin).map(|l| ((*text).to_owned(), l)))
        .transpose()?;
    if links.is_some() && devices != 1 {
        return Err(origin.error(format!(
            "Links describes one device, but the line has {devices}; give one File per line"
        )));
    }
    let flags = keys
        .get("Flags")
        .map(|text| {
            text.split(',')
                .map(|token| {
                    FLAGS
                        .iter()
                        .find(|f| f.eq_ignore_ascii_case(token))
                        .map(|f| (*f).to_owned())
                        .ok_or_else(|| {
                            origin.error(format!(
                                "Flags: unknown flag `{token}`; expected {}",
                                FLAGS.join(", ")
                            ))
                        })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?
        .unwrap_or_default();
    Ok(GresLine {
        origin: origin.clone(),
        nodes,
        name: (*name).to_owned(),
        type_name: keys
            .get("Type")
            .filter(|t| !t.is_empty())
            .map(|t| (*t).to_owned()),
        files,
        multiple_files,
        count,
        cores,
        links,
        flags,
    })
}

/// The files of `expr`, counted from its ranges and refused beyond
/// [`MAX_FILES`] before they are expanded.
fn files(
    expr: &str,
    key: &str,
    origin: &Origin,
    limits: &mut FileLimits,
) -> Result<Vec<String>, ConfError> {
    let size = hostlist::measure(expr).map_err(|e| origin.error(format!("{key}=`{expr}`: {e}")))?;
    if size.names > MAX_FILES {
        return Err(origin.error(format!(
            "{key}=`{expr}` lists {} files; at most {MAX_FILES} are allowed",
            size.names
        )));
    }
    limits.expand(key, expr, origin)
}

/// A GRES count with an optional unit suffix, as gres.conf's `Count=` and
/// slurm.conf's `Gres=name[:type]:count` take it (gres.c,
/// `_parse_gres_config` and `_get_gres_cnt`, both through `suffix_mult` of
/// slurm_protocol_defs.c): `k`, `m`, `g`, `t`, `p` and `kib` ... `pib`
/// multiply by powers of 1024, `kb` ... `pb` by powers of 1000, in any case
/// (`4`, `2K`, `1MiB`, `3kb`). `None` for anything else (no digits, another
/// suffix) or a count past `u64`.
pub(crate) fn parse_count(text: &str) -> Option<u64> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, suffix) = text.split_at(digits);
    let power = |base: u64, exp: u32| base.checked_pow(exp);
    let multiplier = match suffix.to_ascii_lowercase().as_str() {
        "" => Some(1),
        "k" | "kib" => power(1024, 1),
        "kb" => power(1000, 1),
        "m" | "mib" => power(1024, 2),
        "mb" => power(1000, 2),
        "g" | "gib" => power(1024, 3),
        "gb" => power(1000, 3),
        "t" | "tib" => power(1024, 4),
        "tb" => power(1000, 4),
        "p" | "pib" => power(1024, 5),
        "pb" => power(1000, 5),
        _ => None,
    }?;
    if number.is_empty() {
        return None;
    }
    number.parse::<u64>().ok()?.checked_mul(multiplier)
}

/// `Links=`: comma-separated integers, none below -2.
fn parse_links(text: &str, origin: &Origin) -> Result<Vec<i32>, ConfError> {
    text.split(',')
        .map(|item| match item.parse::<i32>() {
            Ok(n) if n >= -2 => Ok(n),
            _ => Err(origin.error(format!(
                "Links=`{text}`: `{item}` is not a link count; expected integers of -2 or more, \
                 like -1,2,0,2"
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests;
