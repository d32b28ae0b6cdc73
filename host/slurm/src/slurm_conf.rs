//! Reading Slurm's `slurm.conf` into typed values.
//!
//! The host reads the same file `slurmctld` reads, so a site describes its
//! cluster once. This module understands the file's syntax and the two kinds
//! of lines the plugins depend on, and keeps everything else as text:
//!
//! - **Syntax**: `Key=Value` pairs separated by whitespace, several per line;
//!   keys are case-insensitive; whitespace around `=` is allowed; a value may
//!   be written in double quotes to hold spaces (`Reason="bad fan"`); `#`
//!   outside quotes starts a comment and `\#` is a literal `#`; a line ending
//!   in `\` continues on the next one; `Include <path>` reads another file in
//!   place, relative to the directory of the file that includes it.
//! - **`NodeName=` lines** become [`NodeConf`]s, one per name of the
//!   hostlist expression (`n[001-128]`, see [`crate::hostlist`]), numbered in
//!   order of definition. `NodeName=DEFAULT` sets defaults for later lines.
//! - **`PartitionName=` lines** become [`PartitionConf`]s whose node lists
//!   are indices into [`SlurmConf::nodes`] (`Nodes=ALL` is every node).
//!   `PartitionName=DEFAULT` sets defaults for later lines.
//! - **`DownNodes=`, `FrontendName=` and `NodeSet=` lines** are kept as
//!   [`Record`]s, uninterpreted.
//! - **Every other key** goes to [`SlurmConf::options`], in file order, for
//!   callers to read (`SelectType`, `PriorityWeightAge`, `SchedulerParameters`,
//!   ...); [`SlurmConf::select_type`] and its siblings cover the keys the
//!   host itself needs.
//!
//! As in `slurmctld`, a `NodeName`, `PartitionName`, `DownNodes`,
//! `FrontendName` or `NodeSet` key takes the rest of its line: the keys after
//! it are that record's parameters.
//!
//! # Failure modes
//!
//! Every problem is a [`ConfError`] naming the file and line and saying what
//! was expected: a token that is not `Key=Value`, an unterminated quote, a
//! missing or looping `Include`, an unknown key or a malformed value on a
//! node or partition line, a malformed hostlist, a node defined twice, a
//! partition that names an unknown node, or a configuration beyond the
//! limits below. Where `slurmctld` logs a contradiction and carries on with
//! a corrected value (`CPUs=` matching no product of the node's sockets,
//! cores and threads; both `DefMemPerCPU` and `DefMemPerNode` on one line),
//! this module refuses the file instead, so the host never schedules on a
//! shape the administrator did not write.
//!
//! # Limits
//!
//! A few bytes of `slurm.conf` can describe more than memory holds
//! (`NodeName=n[1-99999999]`, a long `Feature=` copied to every node of a
//! million-node line, a thousand `Nodes=ALL` partitions, a file included a
//! thousand times by a file included a thousand times). Each of these is
//! bounded before it is built, and a file beyond a bound is refused at the
//! line that crosses it, naming the bound:
//!
//! - [`MAX_TEXT`] bytes of text and [`MAX_INCLUDES`] `Include`s, the file
//!   and everything it includes together;
//! - [`MAX_NODES`] nodes, with [`MAX_CPUS`] hardware threads in all
//!   (`Sockets x CoresPerSocket x ThreadsPerCore` summed over the nodes);
//! - [`MAX_LISTED_NAMES`] names and [`MAX_LISTED_BYTES`] bytes of names in
//!   all the hostlists of `NodeName=` and `PartitionName=... Nodes=` lines
//!   together (`Nodes=ALL` counting every node), each hostlist also within
//!   [`hostlist`]'s own bounds;
//! - [`MAX_PARTITION_BITS`] partition-node pairs (partitions times nodes),
//!   the bits of the partitions' node bitmaps;
//! - [`MAX_KEPT_BYTES`] bytes, estimated, of what the result keeps: each
//!   node with the parameters it copies from its line, each option and
//!   record with where it was written, each partition with its members.
//!
//! Together these keep any input to a few hundred MB of memory and a
//! fraction of a second, whatever its text.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::fmt;
use std::mem::size_of;
use std::path::{Path, PathBuf};

use crate::hostlist;

/// The most bytes of text the file and everything it includes may hold
/// together (4 MiB; a site's `slurm.conf` is rarely 100 KB). A file of
/// nothing but short options holds about a million of them.
pub const MAX_TEXT: usize = 4 << 20;

/// The most `Include` lines followed in all, nested or not.
pub const MAX_INCLUDES: usize = 256;

/// The most nodes a configuration may define: 524,288, five times the
/// largest Slurm clusters, and small enough that the largest configuration
/// accepted is read in about half a second and 200 MB on a 2-core machine
/// (the bound issue 26 sets a reader of a file under 1 MB: a second and a
/// few hundred MB).
pub const MAX_NODES: usize = 1 << 19;

/// The most hardware threads the nodes may have together (2^27, a million
/// nodes of 128), so that a bitmap over every CPU or core of the cluster
/// stays within 16 MiB.
pub const MAX_CPUS: u64 = 1 << 27;

/// The most names all hostlists of a configuration may expand to together
/// (4 x [`MAX_NODES`]): the nodes, and the partitions' lists of them.
pub const MAX_LISTED_NAMES: usize = 4 * MAX_NODES;

/// The most bytes of names all hostlists of a configuration may expand to
/// together (4 x [`hostlist::MAX_BYTES`], 256 MiB).
pub const MAX_LISTED_BYTES: usize = 4 * hostlist::MAX_BYTES;

/// The most partition-node pairs (partitions x nodes, 2^31): the
/// partitions' node bitmaps take at most 256 MiB.
pub const MAX_PARTITION_BITS: u64 = 1 << 31;

/// The most memory, estimated, the parsed configuration may keep (512
/// MiB): node records with their copied parameters and names, options and
/// records with their origins, partitions with their members.
pub const MAX_KEPT_BYTES: u64 = 512 << 20;

/// A problem in a configuration file, at a line (1-based).
///
/// `line` is 0 when the problem concerns the file as a whole (it cannot be
/// read); the error then displays as `file: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfError {
    /// The file the problem is in.
    pub file: PathBuf,
    /// Its line, from 1; 0 for the whole file.
    pub line: usize,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ConfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
        }
    }
}

impl std::error::Error for ConfError {}

impl ConfError {
    /// The text of the file at `path`, or a [`ConfError`] for the whole
    /// file (line 0) saying it cannot be read or is larger than
    /// [`MAX_TEXT`], naming `what` the file is when given. Reading stops
    /// after [`MAX_TEXT`] bytes, so a device or a growing file cannot
    /// exhaust memory.
    pub(crate) fn read(path: &Path, what: Option<&str>) -> Result<String, ConfError> {
        let (what, the) = match what {
            Some(what) => (format!(" {what}"), format!("{what} is ")),
            None => (String::new(), String::new()),
        };
        let message = match read_limited(path, MAX_TEXT) {
            Ok(Some(text)) => return Ok(text),
            Ok(None) => {
                format!("{the}larger than {MAX_TEXT} bytes, the most a configuration file may hold")
            }
            Err(e) => format!("cannot read{what}: {e}"),
        };
        Err(ConfError {
            file: path.to_path_buf(),
            line: 0,
            message,
        })
    }
}

/// The text of the file at `path` when it is at most `limit` bytes, `None`
/// when it is longer; at most `limit + 1` bytes are read.
fn read_limited(path: &Path, limit: usize) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Ok(None);
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Where a value was written: a file and a line in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The file (the top-level one or an included one).
    pub file: PathBuf,
    /// Its line, from 1.
    pub line: usize,
}

impl Origin {
    /// A [`ConfError`] at this place.
    pub fn error(&self, message: impl Into<String>) -> ConfError {
        ConfError {
            file: self.file.clone(),
            line: self.line,
            message: message.into(),
        }
    }
}

impl fmt::Display for Origin {
    /// `file:line`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// Keys and values in file order, each with where it was written, looked
/// up without regard to key case.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    entries: Vec<(String, String, Origin)>,
}

impl Options {
    /// The value of the last occurrence of `key` (the one `slurmctld` uses).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.last(key).map(|(_, v, _)| v.as_str())
    }

    /// Where the last occurrence of `key` (the one [`get`](Self::get)
    /// returns) was written.
    pub fn origin(&self, key: &str) -> Option<&Origin> {
        self.last(key).map(|(_, _, origin)| origin)
    }

    /// Every value given for `key`, in file order (`SlurmctldHost` may
    /// appear several times).
    pub fn get_all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.entries
            .iter()
            .filter(move |(k, _, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v, _)| v.as_str())
    }

    /// All entries in file order, keys spelled as written.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|(k, v, _)| (k.as_str(), v.as_str()))
    }

    /// Number of entries, repeated keys counted each time.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn last(&self, key: &str) -> Option<&(String, String, Origin)> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _, _)| k.eq_ignore_ascii_case(key))
    }

    fn push(&mut self, key: &str, value: &str, origin: Origin) {
        self.entries
            .push((key.to_owned(), value.to_owned(), origin));
    }
}

/// A parsed `slurm.conf`, includes resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmConf {
    /// The top-level file.
    pub path: PathBuf,
    /// Keys outside node, partition and other record lines, in file order.
    pub options: Options,
    /// One entry per node; a node's index is its position here, which is
    /// its order of definition.
    pub nodes: Vec<NodeConf>,
    /// Partitions in order of definition.
    pub partitions: Vec<PartitionConf>,
    /// `DownNodes`, `FrontendName` and `NodeSet` lines, uninterpreted.
    pub records: Vec<Record>,
}

/// A node of a `NodeName=` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConf {
    /// Its name, one of the line's hostlist expansion.
    pub name: String,
    /// Its `NodeName=` line, as the index of the first node that line
    /// defined: the nodes of one line share slurmctld's config record, the
    /// node set its scheduler asks the select plugin about together.
    pub config: u32,
    /// `CPUs=` (alias `Procs=`), by default sockets x cores x threads.
    pub cpus: u16,
    /// `Boards=`, default 1.
    pub boards: u16,
    /// `Sockets=` (all boards together), or `Boards` x `SocketsPerBoard`;
    /// without either, `CPUs / (CoresPerSocket x ThreadsPerCore)` when that
    /// divides evenly, else one per board.
    pub sockets: u16,
    /// `CoresPerSocket=`, default 1.
    pub cores_per_socket: u16,
    /// `ThreadsPerCore=`, default 1.
    pub threads_per_core: u16,
    /// `RealMemory=` in MB, default 1.
    pub real_memory: u64,
    /// `TmpDisk=` in MB, default 0.
    pub tmp_disk: u64,
    /// `Weight=`, default 1; lower weights are allocated first.
    pub weight: u32,
    /// `Feature=` (alias `Features=`), comma-separated.
    pub features: Vec<String>,
    /// `Gres=`, comma-separated.
    pub gres: Vec<GresConf>,
    /// `CoreSpecCount=`, cores reserved for the system, default 0.
    pub core_spec_count: u16,
    /// `MemSpecLimit=` in MB reserved for the system, default 0.
    pub mem_spec_limit: u64,
    /// `State=`, default `UNKNOWN`.
    pub state: NodeState,
    /// Other keys of the line, as written: `NodeHostname`, `NodeAddr`,
    /// `BcastAddr`, `Port`, `CpuBind`, `CPUSpecList`, `Reason`,
    /// `TRESWeights`. Hostlist-valued ones are the line's whole expression.
    pub extra: Options,
}

/// One element of a node's `Gres=`: `name[:type][:no_consume][:count]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresConf {
    /// `gpu`, `mps`, ...
    pub name: String,
    /// `a100` in `gpu:a100:4`.
    pub type_name: Option<String>,
    /// How many; 1 when omitted. A `K`, `M`, `G`, `T` or `P` suffix
    /// multiplies by a power of 1024, as in Slurm.
    pub count: u64,
    /// `no_consume`: jobs may ask for it without using it up.
    pub no_consume: bool,
}

/// A node's configured `State=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    /// `UNKNOWN` (the default): the node reports its own state.
    Unknown,
    /// `IDLE`.
    Idle,
    /// `DOWN`.
    Down,
    /// `DRAIN`.
    Drain,
    /// `FAIL`.
    Fail,
    /// `FAILING`.
    Failing,
    /// `FUTURE`: defined but not yet present.
    Future,
    /// `CLOUD`: powered up on demand.
    Cloud,
}

/// A partition of a `PartitionName=` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionConf {
    /// Its name.
    pub name: String,
    /// `Nodes=`: indices into [`SlurmConf::nodes`], ascending, each once.
    pub nodes: Vec<usize>,
    /// `Default=YES`.
    pub default: bool,
    /// `MaxTime=` in minutes; `None` for `INFINITE`/`UNLIMITED` (the
    /// default).
    pub max_time: Option<u32>,
    /// `DefaultTime=` in minutes; `None` when unset (jobs then get
    /// `MaxTime`) or `INFINITE`.
    pub default_time: Option<u32>,
    /// `OverSubscribe=` (alias `Shared=`), default `NO`.
    pub oversubscribe: OverSubscribe,
    /// `PriorityJobFactor=`, default 1 (`Priority=` sets it and the tier).
    pub priority_job_factor: u16,
    /// `PriorityTier=`, default 1.
    pub priority_tier: u16,
    /// `DefMemPerCPU=` or `DefMemPerNode=` in MB; `None` when unset here,
    /// in which case the cluster-wide option applies.
    pub default_memory: Option<MemoryLimit>,
    /// `MaxMemPerCPU=` or `MaxMemPerNode=` in MB; `None` when unset here.
    pub max_memory: Option<MemoryLimit>,
    /// `MaxNodes=` per job; `None` for `UNLIMITED` (the default).
    pub max_nodes: Option<u32>,
    /// `MinNodes=` per job, default 0.
    pub min_nodes: u32,
    /// `MaxCPUsPerNode=`; `None` for `UNLIMITED` (the default).
    pub max_cpus_per_node: Option<u32>,
    /// `LLN=`, default `NO`: jobs go to the least loaded nodes.
    pub lln: bool,
    /// `DefCpuPerGPU=`; `None` when unset here, in which case the
    /// cluster-wide option applies.
    pub def_cpu_per_gpu: Option<u64>,
    /// `DefMemPerGPU=` in MB; `None` when unset here.
    pub def_mem_per_gpu: Option<u64>,
    /// `State=`, default `UP`.
    pub state: PartitionState,
    /// Other keys of the line, as written (`AllowAccounts`, `PreemptMode`,
    /// `QOS`, `TRESBillingWeights`, ...).
    pub extra: Options,
}

/// A partition's `OverSubscribe=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverSubscribe {
    /// `NO` (the default).
    No,
    /// `EXCLUSIVE`: whole nodes only.
    Exclusive,
    /// `YES` or `YES:n`: jobs that ask may share, up to n per resource
    /// (4 when omitted).
    Yes(u16),
    /// `FORCE` or `FORCE:n`: every job shares, up to n per resource (4 when
    /// omitted).
    Force(u16),
}

/// A memory default or limit in MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryLimit {
    /// `...PerCPU`: MB per allocated CPU.
    PerCpu(u64),
    /// `...PerNode`: MB per allocated node.
    PerNode(u64),
}

/// A partition's `State=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionState {
    /// `UP` (the default).
    Up,
    /// `DOWN`: jobs queue but do not start.
    Down,
    /// `DRAIN`: no new jobs.
    Drain,
    /// `INACTIVE`: neither.
    Inactive,
}

/// A `DownNodes=`, `FrontendName=` or `NodeSet=` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// `DownNodes`, `FrontendName` or `NodeSet`.
    pub kind: &'static str,
    /// The value of that key.
    pub name: String,
    /// The rest of the line.
    pub params: Options,
    /// Where the line is.
    pub file: PathBuf,
    /// Its line number.
    pub line: usize,
}

impl SlurmConf {
    /// `SelectType` (`select/cons_tres`), when set.
    pub fn select_type(&self) -> Option<&str> {
        self.options.get("SelectType")
    }

    /// `PriorityType` (`priority/multifactor`), when set.
    pub fn priority_type(&self) -> Option<&str> {
        self.options.get("PriorityType")
    }

    /// `TaskPlugin` as full plugin types in the order given:
    /// `affinity,cgroup` and `task/affinity,task/cgroup` both give
    /// `["task/affinity", "task/cgroup"]`.
    pub fn task_plugins(&self) -> Vec<String> {
        comma_list(self.options.get("TaskPlugin"))
            .into_iter()
            .map(|p| {
                if p.starts_with("task/") {
                    p
                } else {
                    format!("task/{p}")
                }
            })
            .collect()
    }

    /// `GresTypes` split at commas (`gpu`, `mps`).
    pub fn gres_types(&self) -> Vec<String> {
        comma_list(self.options.get("GresTypes"))
    }

    /// The index of the node called `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// The partition called `name`.
    pub fn partition(&self, name: &str) -> Option<&PartitionConf> {
        self.partitions.iter().find(|p| p.name == name)
    }

    /// The default partition: the last one marked `Default=YES`, as in
    /// `slurmctld`.
    pub fn default_partition(&self) -> Option<&PartitionConf> {
        self.partitions.iter().rev().find(|p| p.default)
    }
}

/// A comma-separated value as its trimmed, non-empty items (`a, b,` gives
/// `a` and `b`; none for an absent value).
pub(crate) fn comma_list(value: Option<&str>) -> Vec<String> {
    value
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Reads and parses the `slurm.conf` at `path`, with its includes.
///
/// # Errors
///
/// A [`ConfError`] when `path` or an included file cannot be read, or any
/// problem listed in the [module documentation](self).
pub fn load(path: &Path) -> Result<SlurmConf, ConfError> {
    let text = ConfError::read(path, None)?;
    parse_str(&text, path)
}

/// Parses `text` as the contents of the file `origin`.
///
/// `origin` names the file in errors and anchors relative `Include` paths;
/// it need not exist unless `text` includes files by relative path.
///
/// # Errors
///
/// A [`ConfError`] for any problem listed in the
/// [module documentation](self).
pub fn parse_str(text: &str, origin: &Path) -> Result<SlurmConf, ConfError> {
    let mut reader = Reader::default();
    reader.read(text, origin, None)?;
    let mut builder = Builder {
        files: &reader.files,
        options: Options::default(),
        nodes: Vec::new(),
        node_names: HashMap::new(),
        node_defaults: Vec::new(),
        partition_defaults: Vec::new(),
        partition_lines: Vec::new(),
        partition_names: HashMap::new(),
        records: Vec::new(),
        hostlists: hostlist::Budget::new(MAX_LISTED_NAMES, MAX_LISTED_BYTES),
        cpus: 0,
        kept: 0,
    };
    for line in &reader.lines {
        builder.line(line)?;
    }
    let partitions = builder.partitions()?;
    Ok(SlurmConf {
        path: origin.to_path_buf(),
        options: builder.options,
        nodes: builder.nodes,
        partitions,
        records: builder.records,
    })
}

/// One logical line of a Slurm configuration file (continuations joined,
/// comments and `Include` lines resolved): its `Key=Value` pairs in order,
/// quotes removed, and where it starts.
pub(crate) struct ConfLine {
    /// The file (top-level or included) and line it starts on.
    pub origin: Origin,
    /// Its pairs, keys as written.
    pub pairs: Vec<(String, String)>,
}

/// `text`, the content of `path`, as the logical lines Slurm's
/// `s_p_parse_file` reads from any of its configuration files (slurm.conf,
/// gres.conf): `#` comments (`\#` is a `#`, and `#` inside quotes is kept),
/// `\` continuations, quoted values, `Include` of further files (relative
/// to the including file).
///
/// # Errors
///
/// A [`ConfError`] naming the file and line of a token that is not
/// `Key=Value`, an unterminated quote, an include that cannot be read or
/// loops, or more text than [`MAX_TEXT`] in all.
pub(crate) fn logical_lines(text: &str, path: &Path) -> Result<Vec<ConfLine>, ConfError> {
    let mut reader = Reader::default();
    reader.read(text, path, None)?;
    Ok(reader
        .lines
        .into_iter()
        .map(|tokens| ConfLine {
            origin: origin(&reader.files, tokens[0].loc),
            pairs: tokens.into_iter().map(|t| (t.key, t.value)).collect(),
        })
        .collect())
}

/// Where a token came from: an index into the reader's files, and a line.
#[derive(Debug, Clone, Copy)]
struct Loc {
    file: usize,
    line: usize,
}

#[derive(Debug, Clone)]
struct Token {
    key: String,
    value: String,
    loc: Loc,
}

/// Turns files into logical lines of tokens, following includes.
#[derive(Default)]
struct Reader {
    files: Vec<PathBuf>,
    /// Canonical paths of the files being read, outermost first.
    stack: Vec<PathBuf>,
    lines: Vec<Vec<Token>>,
    /// Bytes of text read so far, every file each time it is read.
    text: usize,
}

fn origin(files: &[PathBuf], loc: Loc) -> Origin {
    Origin {
        file: files[loc.file].clone(),
        line: loc.line,
    }
}

fn error_at(files: &[PathBuf], loc: Loc, message: impl Into<String>) -> ConfError {
    origin(files, loc).error(message)
}

impl Reader {
    fn read(&mut self, text: &str, path: &Path, included_at: Option<Loc>) -> Result<(), ConfError> {
        self.text = self.text.saturating_add(text.len());
        if self.text > MAX_TEXT {
            let message = format!(
                "the configuration and its includes exceed {MAX_TEXT} bytes of text in all"
            );
            return Err(match included_at {
                Some(at) => error_at(&self.files, at, format!("Include: {message}")),
                None => ConfError {
                    file: path.to_path_buf(),
                    line: 0,
                    message,
                },
            });
        }
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Some(at) = included_at {
            if self.stack.contains(&canonical) {
                let chain: Vec<String> = self
                    .stack
                    .iter()
                    .chain([&canonical])
                    .map(|p| p.display().to_string())
                    .collect();
                return Err(error_at(
                    &self.files,
                    at,
                    format!("Include loop: {}", chain.join(" -> ")),
                ));
            }
        }
        self.stack.push(canonical);
        self.files.push(path.to_path_buf());
        let file = self.files.len() - 1;
        let mut segments: Vec<(usize, String)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let loc = Loc { file, line: i + 1 };
            let (content, continued) = strip_comment(raw);
            segments.push((loc.line, content));
            if !continued {
                self.logical_line(file, std::mem::take(&mut segments))?;
            }
        }
        self.logical_line(file, segments)?;
        self.stack.pop();
        Ok(())
    }

    fn logical_line(
        &mut self,
        file: usize,
        segments: Vec<(usize, String)>,
    ) -> Result<(), ConfError> {
        let Some((first_line, first)) = segments.first() else {
            return Ok(());
        };
        let head = first.trim_start();
        let word_len = head.find(char::is_whitespace).unwrap_or(head.len());
        let (word, after) = head.split_at(word_len);
        if word.eq_ignore_ascii_case("include") && !after.trim_start().starts_with('=') {
            let loc = Loc {
                file,
                line: *first_line,
            };
            let rest: Vec<&str> = std::iter::once(after)
                .chain(segments[1..].iter().map(|(_, s)| s.as_str()))
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            return self.include(&rest.join(" "), loc);
        }
        let mut tokens = Vec::new();
        for (line, text) in &segments {
            let loc = Loc { file, line: *line };
            tokenize(text, loc, &mut tokens).map_err(|m| error_at(&self.files, loc, m))?;
        }
        if !tokens.is_empty() {
            self.lines.push(tokens);
        }
        Ok(())
    }

    fn include(&mut self, target: &str, at: Loc) -> Result<(), ConfError> {
        let target = target
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .unwrap_or(target);
        if target.is_empty() {
            return Err(error_at(&self.files, at, "Include: expected a file path"));
        }
        if self.files.len() > MAX_INCLUDES {
            return Err(error_at(
                &self.files,
                at,
                format!("Include: more than {MAX_INCLUDES} includes in all"),
            ));
        }
        let including = &self.files[at.file];
        let path = match including.parent() {
            Some(dir) if Path::new(target).is_relative() => dir.join(target),
            _ => PathBuf::from(target),
        };
        let left = MAX_TEXT.saturating_sub(self.text);
        let text = match read_limited(&path, left) {
            Ok(Some(text)) => text,
            Ok(None) => {
                return Err(error_at(
                    &self.files,
                    at,
                    format!(
                        "Include: `{}` would bring the configuration and its includes over \
                         {MAX_TEXT} bytes of text in all",
                        path.display()
                    ),
                ))
            }
            Err(e) => {
                return Err(error_at(
                    &self.files,
                    at,
                    format!("Include: cannot read `{}`: {e}", path.display()),
                ))
            }
        };
        self.read(&text, &path, Some(at))
    }
}

/// Removes a comment from a physical line and reports whether it continues
/// on the next one (ends in `\`).
fn strip_comment(raw: &str) -> (String, bool) {
    let mut out = String::with_capacity(raw.len());
    let mut in_quotes = false;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'#') => {
                out.push('#');
                chars.next();
            }
            '#' if !in_quotes => break,
            '"' => {
                in_quotes = !in_quotes;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    let trimmed = out.trim_end();
    match trimmed.strip_suffix('\\') {
        Some(rest) => (rest.to_owned(), true),
        None => (trimmed.to_owned(), false),
    }
}

/// Splits one segment of a logical line into `Key=Value` tokens.
fn tokenize(text: &str, loc: Loc, out: &mut Vec<Token>) -> Result<(), String> {
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let key_len = rest
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(rest.len());
        let (key, after_key) = rest.split_at(key_len);
        let Some(after_eq) = after_key.trim_start().strip_prefix('=') else {
            return Err(format!("expected Key=Value, found `{key}`"));
        };
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric()) {
            let word = rest.split_whitespace().next().unwrap_or(rest);
            return Err(format!(
                "expected Key=Value with a key of letters and digits, found `{word}`"
            ));
        }
        let after_eq = after_eq.trim_start();
        let (value, remainder) = if let Some(quoted) = after_eq.strip_prefix('"') {
            let end = quoted
                .find('"')
                .ok_or_else(|| format!("{key}: unterminated quoted value"))?;
            let remainder = &quoted[end + 1..];
            if remainder.starts_with(|c: char| !c.is_whitespace()) {
                return Err(format!("{key}: expected whitespace after the quoted value"));
            }
            (&quoted[..end], remainder)
        } else {
            let end = after_eq.find(char::is_whitespace).unwrap_or(after_eq.len());
            after_eq.split_at(end)
        };
        out.push(Token {
            key: key.to_owned(),
            value: value.to_owned(),
            loc,
        });
        rest = remainder.trim_start();
    }
    Ok(())
}

/// Which keys a record line takes.
struct KeySet {
    /// The record key, for messages.
    what: &'static str,
    /// Canonical spellings of the keys interpreted here.
    typed: &'static [&'static str],
    /// Canonical spellings of the keys kept in `extra`.
    kept: &'static [&'static str],
    /// Other spellings: (alias, canonical keys it sets).
    aliases: &'static [(&'static str, &'static [&'static str])],
    /// Keys that exclude each other: setting one on a line also hides the
    /// others' defaults.
    exclusive: &'static [[&'static str; 2]],
    /// Keys not allowed on the `DEFAULT` line.
    not_default: &'static [&'static str],
}

const NODE_KEYS: KeySet = KeySet {
    what: "NodeName",
    typed: &[
        "Boards",
        "CoreSpecCount",
        "CoresPerSocket",
        "CPUs",
        "Feature",
        "Gres",
        "MemSpecLimit",
        "RealMemory",
        "Sockets",
        "SocketsPerBoard",
        "State",
        "ThreadsPerCore",
        "TmpDisk",
        "Weight",
    ],
    kept: &[
        "BcastAddr",
        "CpuBind",
        "CPUSpecList",
        "NodeAddr",
        "NodeHostname",
        "Port",
        "Reason",
        "TRESWeights",
    ],
    aliases: &[("Procs", &["CPUs"]), ("Features", &["Feature"])],
    exclusive: &[["Sockets", "SocketsPerBoard"]],
    not_default: &["NodeHostname", "NodeAddr", "BcastAddr"],
};

const PARTITION_KEYS: KeySet = KeySet {
    what: "PartitionName",
    typed: &[
        "Default",
        "DefaultTime",
        "DefCPUPerGPU",
        "DefMemPerCPU",
        "DefMemPerGPU",
        "DefMemPerNode",
        "LLN",
        "MaxCPUsPerNode",
        "MaxMemPerCPU",
        "MaxMemPerNode",
        "MaxNodes",
        "MaxTime",
        "MinNodes",
        "Nodes",
        "OverSubscribe",
        "PriorityJobFactor",
        "PriorityTier",
        "State",
    ],
    kept: &[
        "AllocNodes",
        "AllowAccounts",
        "AllowGroups",
        "AllowQos",
        "Alternate",
        "CpuBind",
        "DenyAccounts",
        "DenyQos",
        "DisableRootJobs",
        "ExclusiveUser",
        "GraceTime",
        "Hidden",
        "MaxCPUsPerSocket",
        "OverTimeLimit",
        "PreemptMode",
        "QOS",
        "ReqResv",
        "ResumeTimeout",
        "RootOnly",
        "SelectTypeParameters",
        "SuspendTime",
        "SuspendTimeout",
        "TRESBillingWeights",
    ],
    aliases: &[
        ("Shared", &["OverSubscribe"]),
        ("Priority", &["PriorityJobFactor", "PriorityTier"]),
    ],
    exclusive: &[
        ["DefMemPerCPU", "DefMemPerNode"],
        ["MaxMemPerCPU", "MaxMemPerNode"],
    ],
    not_default: &[],
};

/// Record keys kept uninterpreted.
const OTHER_RECORDS: [&str; 3] = ["DownNodes", "FrontendName", "NodeSet"];

/// One parameter of a record line, key in canonical spelling.
#[derive(Debug, Clone)]
struct Param {
    key: &'static str,
    written: String,
    value: String,
    loc: Loc,
}

impl KeySet {
    /// Validates a line's parameters and spells their keys canonically.
    fn collect(
        &self,
        files: &[PathBuf],
        head: &Token,
        tokens: &[Token],
    ) -> Result<Vec<Param>, ConfError> {
        let mut params: Vec<Param> = Vec::new();
        for token in tokens {
            let canonical: &[&'static str] = if let Some(key) = self
                .typed
                .iter()
                .chain(self.kept)
                .find(|k| k.eq_ignore_ascii_case(&token.key))
            {
                std::slice::from_ref(key)
            } else if let Some((_, keys)) = self
                .aliases
                .iter()
                .find(|(alias, _)| alias.eq_ignore_ascii_case(&token.key))
            {
                keys
            } else {
                return Err(error_at(
                    files,
                    token.loc,
                    format!("unknown key `{}` on a {} line", token.key, self.what),
                ));
            };
            for &key in canonical {
                if let Some(earlier) = params.iter().find(|p| p.key == key) {
                    return Err(error_at(
                        files,
                        token.loc,
                        format!(
                            "`{}` is given twice on this {} line (also as `{}`)",
                            token.key, self.what, earlier.written
                        ),
                    ));
                }
                params.push(Param {
                    key,
                    written: token.key.clone(),
                    value: token.value.clone(),
                    loc: token.loc,
                });
            }
        }
        for [a, b] in self.exclusive {
            if let (Some(_), Some(second)) = (find(&params, a), find(&params, b)) {
                return Err(error_at(
                    files,
                    second.loc,
                    format!("{a} and {b} exclude each other; give one"),
                ));
            }
        }
        if head.value.eq_ignore_ascii_case("DEFAULT") {
            if let Some(p) = params.iter().find(|p| self.not_default.contains(&p.key)) {
                return Err(error_at(
                    files,
                    p.loc,
                    format!("{} is not allowed with {}=DEFAULT", p.key, self.what),
                ));
            }
        }
        Ok(params)
    }

    /// `line` with the `defaults` it does not override.
    fn merge(&self, mut line: Vec<Param>, defaults: &[Param]) -> Vec<Param> {
        let overridden = |key: &str| {
            find(&line, key).is_some()
                || self
                    .exclusive
                    .iter()
                    .filter(|pair| pair.contains(&key))
                    .any(|pair| pair.iter().any(|k| find(&line, k).is_some()))
        };
        let inherited: Vec<Param> = defaults
            .iter()
            .filter(|d| !overridden(d.key))
            .cloned()
            .collect();
        line.extend(inherited);
        line
    }

    fn extra(&self, files: &[PathBuf], params: &[Param]) -> Options {
        let mut extra = Options::default();
        for p in params.iter().filter(|p| self.kept.contains(&p.key)) {
            extra.push(p.key, &p.value, origin(files, p.loc));
        }
        extra
    }
}

fn find<'a>(params: &'a [Param], key: &str) -> Option<&'a Param> {
    params.iter().find(|p| p.key == key)
}

/// Interprets logical lines in order.
struct Builder<'a> {
    files: &'a [PathBuf],
    options: Options,
    nodes: Vec<NodeConf>,
    /// Each node's index and the line that defined it.
    node_names: HashMap<String, (usize, Loc)>,
    node_defaults: Vec<Param>,
    partition_defaults: Vec<Param>,
    /// Partitions are resolved once every node is known.
    partition_lines: Vec<(Token, Vec<Param>)>,
    /// Each partition's line, by name.
    partition_names: HashMap<String, Loc>,
    records: Vec<Record>,
    /// What the file's hostlists may still expand to.
    hostlists: hostlist::Budget,
    /// Hardware threads of the nodes so far ([`MAX_CPUS`]).
    cpus: u64,
    /// Estimated bytes kept so far ([`MAX_KEPT_BYTES`]).
    kept: u64,
}

/// Bytes a kept string costs beyond its inline part: the allocator's
/// chunk for its text (glibc's: the text and 8 bytes, rounded up to 16, at
/// least 32).
fn text_cost(text: &str) -> u64 {
    heap_cost(text.len())
}

/// The allocator's chunk for `bytes` on the heap; none for none.
fn heap_cost(bytes: usize) -> u64 {
    if bytes == 0 {
        0
    } else {
        (bytes as u64 + 8).next_multiple_of(16).max(32)
    }
}

/// Bytes of one [`Options`] entry.
fn option_cost(key: &str, value: &str, origin: &Origin) -> u64 {
    size_of::<(String, String, Origin)>() as u64
        + text_cost(key)
        + text_cost(value)
        + heap_cost(origin.file.as_os_str().len())
}

/// Bytes of a node record beyond its name, as [`Builder::node_line`]
/// copies it for every name of its line.
fn node_cost(node: &NodeConf) -> u64 {
    let strings = |list: &[String]| -> u64 {
        list.iter()
            .map(|s| size_of::<String>() as u64 + text_cost(s))
            .sum()
    };
    let gres: u64 = node
        .gres
        .iter()
        .map(|g| {
            size_of::<GresConf>() as u64
                + text_cost(&g.name)
                + g.type_name.as_deref().map_or(0, text_cost)
        })
        .sum();
    let extra: u64 = node
        .extra
        .entries
        .iter()
        .map(|(k, v, o)| option_cost(k, v, o))
        .sum();
    size_of::<NodeConf>() as u64 + strings(&node.features) + gres + extra
}

/// Bytes a node's name of `name_bytes` costs, at most: in its record and
/// in the name index (whose table is at most half empty).
fn name_cost(name_bytes: u64) -> u64 {
    2 * (name_bytes + 24).max(32) + 2 * size_of::<(String, (usize, Loc))>() as u64
}

impl Builder<'_> {
    fn error(&self, loc: Loc, message: impl Into<String>) -> ConfError {
        error_at(self.files, loc, message)
    }

    /// Counts `bytes` more as kept, or refuses the line at `loc` when that
    /// would exceed [`MAX_KEPT_BYTES`].
    fn keep(&mut self, loc: Loc, bytes: u64) -> Result<(), ConfError> {
        match self.kept.checked_add(bytes) {
            Some(kept) if kept <= MAX_KEPT_BYTES => {
                self.kept = kept;
                Ok(())
            }
            _ => Err(self.error(
                loc,
                format!(
                    "the configuration would keep more than {MAX_KEPT_BYTES} bytes in memory \
                     with this line (nodes with the parameters each copies from its line, \
                     options, partition members); split or shorten it"
                ),
            )),
        }
    }

    /// The origin of an option to keep, counting what the option keeps.
    fn kept_option(&mut self, key: &str, value: &str, loc: Loc) -> Result<Origin, ConfError> {
        let origin = origin(self.files, loc);
        self.keep(loc, option_cost(key, value, &origin))?;
        Ok(origin)
    }

    fn line(&mut self, tokens: &[Token]) -> Result<(), ConfError> {
        for (i, token) in tokens.iter().enumerate() {
            let rest = &tokens[i + 1..];
            if token.key.eq_ignore_ascii_case("NodeName") {
                return self.node_line(token, rest);
            }
            if token.key.eq_ignore_ascii_case("PartitionName") {
                return self.partition_line(token, rest);
            }
            if let Some(kind) = OTHER_RECORDS
                .into_iter()
                .find(|k| k.eq_ignore_ascii_case(&token.key))
            {
                let file = self.files[token.loc.file].clone();
                let cost = size_of::<Record>() as u64
                    + text_cost(&token.value)
                    + heap_cost(file.as_os_str().len());
                self.keep(token.loc, cost)?;
                let mut params = Options::default();
                for t in rest {
                    let origin = self.kept_option(&t.key, &t.value, t.loc)?;
                    params.push(&t.key, &t.value, origin);
                }
                self.records.push(Record {
                    kind,
                    name: token.value.clone(),
                    params,
                    file,
                    line: token.loc.line,
                });
                return Ok(());
            }
            let origin = self.kept_option(&token.key, &token.value, token.loc)?;
            self.options.push(&token.key, &token.value, origin);
        }
        Ok(())
    }

    fn node_line(&mut self, head: &Token, rest: &[Token]) -> Result<(), ConfError> {
        let params = NODE_KEYS.collect(self.files, head, rest)?;
        if head.value.eq_ignore_ascii_case("DEFAULT") {
            self.node_defaults = NODE_KEYS.merge(params, &self.node_defaults);
            return Ok(());
        }
        if head.value.eq_ignore_ascii_case("ALL") {
            return Err(self.error(
                head.loc,
                "NodeName: `ALL` is reserved and cannot name a node",
            ));
        }
        let params = NODE_KEYS.merge(params, &self.node_defaults);
        let template = self.node_template(head, &params)?;
        let bad_hostlist =
            |e: hostlist::HostlistError| format!("NodeName: bad hostlist `{}`: {e}", head.value);
        let size =
            hostlist::measure(&head.value).map_err(|e| self.error(head.loc, bad_hostlist(e)))?;
        let nodes = self.nodes.len() + size.names;
        if nodes > MAX_NODES {
            return Err(self.error(
                head.loc,
                format!(
                    "NodeName: `{}` would make {nodes} nodes; at most {MAX_NODES} are supported",
                    head.value
                ),
            ));
        }
        let threads = u64::from(template.sockets)
            * u64::from(template.cores_per_socket)
            * u64::from(template.threads_per_core);
        let cpus = threads
            .checked_mul(size.names as u64)
            .and_then(|n| n.checked_add(self.cpus))
            .filter(|&n| n <= MAX_CPUS)
            .ok_or_else(|| {
                self.error(
                    head.loc,
                    format!(
                        "NodeName: `{}` ({} nodes of {threads} threads) would give the cluster \
                         more than {MAX_CPUS} CPUs (Sockets x CoresPerSocket x ThreadsPerCore \
                         summed over the nodes)",
                        head.value, size.names
                    ),
                )
            })?;
        let cost = (size.names as u64)
            .saturating_mul(node_cost(&template) + name_cost(0))
            .saturating_add(2 * size.bytes as u64);
        self.keep(head.loc, cost)?;
        let names = self
            .hostlists
            .expand(&head.value)
            .map_err(|e| self.error(head.loc, bad_hostlist(e)))?;
        self.cpus = cpus;
        self.nodes.reserve(names.len());
        self.node_names.reserve(names.len());
        // Below MAX_NODES, which a u32 holds.
        let config = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        for name in names {
            // One lookup: the first definition, or the slot for this one.
            let at = self.nodes.len();
            let first = match self.node_names.entry(name.clone()) {
                Entry::Occupied(first) => Some(first.get().1),
                Entry::Vacant(slot) => {
                    slot.insert((at, head.loc));
                    None
                }
            };
            if let Some(first) = first {
                return Err(self.error(
                    head.loc,
                    format!(
                        "node `{name}` is defined twice (first at {}:{})",
                        self.files[first.file].display(),
                        first.line
                    ),
                ));
            }
            self.nodes.push(NodeConf {
                name,
                config,
                ..template.clone()
            });
        }
        Ok(())
    }

    /// The node a line describes, without its name.
    fn node_template(&self, head: &Token, params: &[Param]) -> Result<NodeConf, ConfError> {
        let count = |key: &str, what: &str| -> Result<Option<u16>, ConfError> {
            let Some(value) = self.number::<u16>(params, key, what)? else {
                return Ok(None);
            };
            if value == 0 {
                let p = find(params, key).expect("present");
                return Err(self.error(p.loc, format!("{key}: must be at least 1")));
            }
            Ok(Some(value))
        };
        let cpus = count("CPUs", "a number of CPUs")?;
        let boards = count("Boards", "a number of boards")?.unwrap_or(1);
        let sockets = count("Sockets", "a number of sockets")?;
        let sockets_per_board = count("SocketsPerBoard", "a number of sockets")?;
        let cores = count("CoresPerSocket", "a number of cores")?.unwrap_or(1);
        let threads = count("ThreadsPerCore", "a number of threads")?.unwrap_or(1);
        let core_threads = u64::from(cores) * u64::from(threads);
        let too_big = |what: String| self.error(head.loc, format!("{what} exceeds 65535"));
        let sockets = match (sockets, sockets_per_board) {
            (Some(s), _) => s,
            (None, Some(per_board)) => u16::try_from(u64::from(boards) * u64::from(per_board))
                .map_err(|_| {
                    too_big(format!("Boards x SocketsPerBoard = {boards} x {per_board}"))
                })?,
            (None, None) => match cpus.map(u64::from) {
                Some(c) if c >= core_threads && c % core_threads == 0 => {
                    u16::try_from(c / core_threads).expect("at most CPUs")
                }
                _ => boards,
            },
        };
        let per_node = u64::from(sockets) * core_threads;
        let cpus = match cpus {
            Some(c) => c,
            None => u16::try_from(per_node).map_err(|_| {
                too_big(format!(
                    "Sockets x CoresPerSocket x ThreadsPerCore = {sockets} x {cores} x {threads}"
                ))
            })?,
        };
        let c = u64::from(cpus);
        let sockets_cores = u64::from(sockets) * u64::from(cores);
        if c != u64::from(sockets) && c != sockets_cores && c != per_node {
            let loc = find(params, "CPUs").map_or(head.loc, |p| p.loc);
            return Err(self.error(
                loc,
                format!(
                    "CPUs={cpus} matches neither Sockets ({sockets}), Sockets x CoresPerSocket \
                     ({sockets_cores}) nor Sockets x CoresPerSocket x ThreadsPerCore ({per_node})"
                ),
            ));
        }
        if sockets < boards {
            return Err(self.error(
                head.loc,
                format!("Boards={boards} is more than the node's {sockets} sockets"),
            ));
        }
        let real_memory = self
            .number::<u64>(params, "RealMemory", "a number of MB")?
            .unwrap_or(1);
        let core_spec_count = self
            .number::<u16>(params, "CoreSpecCount", "a number of cores")?
            .unwrap_or(0);
        if u64::from(core_spec_count) >= sockets_cores {
            let p = find(params, "CoreSpecCount").expect("present");
            return Err(self.error(
                p.loc,
                format!("CoreSpecCount={core_spec_count} must be less than the node's {sockets_cores} cores"),
            ));
        }
        let mem_spec_limit = self
            .number::<u64>(params, "MemSpecLimit", "a number of MB")?
            .unwrap_or(0);
        if mem_spec_limit > 0 && mem_spec_limit >= real_memory {
            let p = find(params, "MemSpecLimit").expect("present");
            return Err(self.error(
                p.loc,
                format!(
                    "MemSpecLimit={mem_spec_limit} must be less than RealMemory ({real_memory})"
                ),
            ));
        }
        let gres = match find(params, "Gres") {
            Some(p) => parse_gres(&p.value).map_err(|m| self.error(p.loc, format!("Gres: {m}")))?,
            None => Vec::new(),
        };
        let state = match find(params, "State") {
            Some(p) => parse_node_state(&p.value).ok_or_else(|| {
                self.error(
                    p.loc,
                    format!(
                        "State: expected UNKNOWN, IDLE, DOWN, DRAIN, FAIL, FAILING, FUTURE or CLOUD, found `{}`",
                        p.value
                    ),
                )
            })?,
            None => NodeState::Unknown,
        };
        Ok(NodeConf {
            name: String::new(),
            config: 0,
            cpus,
            boards,
            sockets,
            cores_per_socket: cores,
            threads_per_core: threads,
            real_memory,
            tmp_disk: self
                .number(params, "TmpDisk", "a number of MB")?
                .unwrap_or(0),
            weight: self.number(params, "Weight", "a number")?.unwrap_or(1),
            features: comma_list(find(params, "Feature").map(|p| p.value.as_str())),
            gres,
            core_spec_count,
            mem_spec_limit,
            state,
            extra: NODE_KEYS.extra(self.files, params),
        })
    }

    fn partition_line(&mut self, head: &Token, rest: &[Token]) -> Result<(), ConfError> {
        let params = PARTITION_KEYS.collect(self.files, head, rest)?;
        if head.value.eq_ignore_ascii_case("DEFAULT") {
            self.partition_defaults = PARTITION_KEYS.merge(params, &self.partition_defaults);
            return Ok(());
        }
        if head.value.is_empty() {
            return Err(self.error(head.loc, "PartitionName: expected a partition name"));
        }
        if let Some(first) = self.partition_names.get(&head.value) {
            return Err(self.error(
                head.loc,
                format!(
                    "partition `{}` is defined twice (first at {}:{})",
                    head.value,
                    self.files[first.file].display(),
                    first.line
                ),
            ));
        }
        let params = PARTITION_KEYS.merge(params, &self.partition_defaults);
        let cost = size_of::<PartitionConf>() as u64
            + 2 * text_cost(&head.value)
            + params
                .iter()
                .map(|p| {
                    size_of::<Param>() as u64
                        + 2 * option_cost(&p.written, &p.value, &origin(self.files, p.loc))
                })
                .sum::<u64>();
        self.keep(head.loc, cost)?;
        self.partition_names.insert(head.value.clone(), head.loc);
        self.partition_lines.push((head.clone(), params));
        Ok(())
    }

    fn partitions(&mut self) -> Result<Vec<PartitionConf>, ConfError> {
        let lines = std::mem::take(&mut self.partition_lines);
        let nodes = self.nodes.len() as u64;
        let mut partitions = Vec::with_capacity(lines.len());
        for (count, (head, params)) in (1u64..).zip(&lines) {
            if count.saturating_mul(nodes) > MAX_PARTITION_BITS {
                return Err(self.error(
                    head.loc,
                    format!(
                        "PartitionName={}: {count} partitions of {nodes} nodes exceed \
                         {MAX_PARTITION_BITS} partition-node pairs (the bits of their node \
                         bitmaps)",
                        head.value
                    ),
                ));
            }
            partitions.push(self.partition(head, params)?);
        }
        Ok(partitions)
    }

    fn partition(&mut self, head: &Token, params: &[Param]) -> Result<PartitionConf, ConfError> {
        let name = &head.value;
        let nodes = match find(params, "Nodes") {
            Some(p) => self.partition_nodes(name, p)?,
            None => Vec::new(),
        };
        let yes_no = |key: &str| match find(params, key) {
            Some(p) => parse_bool(&p.value).ok_or_else(|| self.expected(p, "YES or NO")),
            None => Ok(false),
        };
        let default = yes_no("Default")?;
        let lln = yes_no("LLN")?;
        let time = |key: &str| -> Result<Option<u32>, ConfError> {
            match find(params, key) {
                Some(p) => parse_minutes(&p.value).ok_or_else(|| {
                    self.expected(
                        p,
                        "minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or INFINITE",
                    )
                }),
                None => Ok(None),
            }
        };
        let oversubscribe = match find(params, "OverSubscribe") {
            Some(p) => parse_oversubscribe(&p.value).ok_or_else(|| {
                self.expected(
                    p,
                    "NO, EXCLUSIVE, YES, YES:n (n >= 2), FORCE or FORCE:n (n >= 1)",
                )
            })?,
            None => OverSubscribe::No,
        };
        let memory = |per_cpu: &str, per_node: &str| -> Result<Option<MemoryLimit>, ConfError> {
            if let Some(mb) = self.number::<u64>(params, per_cpu, "a number of MB")? {
                return Ok(Some(MemoryLimit::PerCpu(mb)));
            }
            Ok(self
                .number::<u64>(params, per_node, "a number of MB")?
                .map(MemoryLimit::PerNode))
        };
        let state = match find(params, "State") {
            Some(p) => parse_partition_state(&p.value)
                .ok_or_else(|| self.expected(p, "UP, DOWN, DRAIN or INACTIVE"))?,
            None => PartitionState::Up,
        };
        Ok(PartitionConf {
            name: name.clone(),
            nodes,
            default,
            max_time: time("MaxTime")?,
            default_time: time("DefaultTime")?,
            oversubscribe,
            priority_job_factor: self
                .number(params, "PriorityJobFactor", "a number")?
                .unwrap_or(1),
            priority_tier: self
                .number(params, "PriorityTier", "a number")?
                .unwrap_or(1),
            default_memory: memory("DefMemPerCPU", "DefMemPerNode")?,
            max_memory: memory("MaxMemPerCPU", "MaxMemPerNode")?,
            max_nodes: self.limit(params, "MaxNodes", "a number of nodes")?,
            min_nodes: self
                .number(params, "MinNodes", "a number of nodes")?
                .unwrap_or(0),
            max_cpus_per_node: self.limit(params, "MaxCPUsPerNode", "a number of CPUs")?,
            lln,
            def_cpu_per_gpu: self.number(params, "DefCPUPerGPU", "a number of CPUs")?,
            def_mem_per_gpu: self.number(params, "DefMemPerGPU", "a number of MB")?,
            state,
            extra: PARTITION_KEYS.extra(self.files, params),
        })
    }

    /// The members of a partition's `Nodes=`, counted against the file's
    /// hostlist budget (`ALL` as every node) and kept bytes.
    fn partition_nodes(&mut self, partition: &str, p: &Param) -> Result<Vec<usize>, ConfError> {
        let bad_hostlist = |e: hostlist::HostlistError| {
            format!(
                "PartitionName={partition} Nodes: bad hostlist `{}`: {e}",
                p.value
            )
        };
        if p.value.eq_ignore_ascii_case("ALL") {
            let all = self.nodes.len();
            self.hostlists
                .charge(all, 0)
                .map_err(|e| self.error(p.loc, bad_hostlist(e)))?;
            self.keep(p.loc, all as u64 * size_of::<usize>() as u64)?;
            return Ok((0..all).collect());
        }
        if p.value.is_empty() {
            return Ok(Vec::new());
        }
        let size = hostlist::measure(&p.value).map_err(|e| self.error(p.loc, bad_hostlist(e)))?;
        self.keep(p.loc, size.names as u64 * size_of::<usize>() as u64)?;
        let names = self
            .hostlists
            .expand(&p.value)
            .map_err(|e| self.error(p.loc, bad_hostlist(e)))?;
        let mut nodes = names
            .iter()
            .map(|n| {
                self.node_names.get(n).map(|&(i, _)| i).ok_or_else(|| {
                    self.error(
                        p.loc,
                        format!("unknown node `{n}` in PartitionName={partition} Nodes"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        nodes.sort_unstable();
        nodes.dedup();
        Ok(nodes)
    }

    fn expected(&self, p: &Param, what: &str) -> ConfError {
        self.error(
            p.loc,
            format!("{}: expected {what}, found `{}`", p.written, p.value),
        )
    }

    /// A decimal number, when the key is present.
    fn number<T: std::str::FromStr>(
        &self,
        params: &[Param],
        key: &str,
        what: &str,
    ) -> Result<Option<T>, ConfError> {
        let Some(p) = find(params, key) else {
            return Ok(None);
        };
        if !p.value.is_empty() && p.value.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = p.value.parse() {
                return Ok(Some(n));
            }
        }
        Err(self.expected(p, what))
    }

    /// A number, or `None` for `UNLIMITED`/`INFINITE` or when absent.
    fn limit(&self, params: &[Param], key: &str, what: &str) -> Result<Option<u32>, ConfError> {
        match find(params, key) {
            Some(p) if is_unlimited(&p.value) => Ok(None),
            _ => self.number(params, key, &format!("{what} or UNLIMITED")),
        }
    }
}

fn is_unlimited(value: &str) -> bool {
    value.eq_ignore_ascii_case("UNLIMITED") || value.eq_ignore_ascii_case("INFINITE")
}

fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_uppercase().as_str() {
        "YES" | "TRUE" | "UP" | "1" => Some(true),
        "NO" | "FALSE" | "DOWN" | "0" => Some(false),
        _ => None,
    }
}

fn parse_node_state(value: &str) -> Option<NodeState> {
    Some(match value.to_ascii_uppercase().as_str() {
        "UNKNOWN" => NodeState::Unknown,
        "IDLE" => NodeState::Idle,
        "DOWN" => NodeState::Down,
        "DRAIN" => NodeState::Drain,
        "FAIL" => NodeState::Fail,
        "FAILING" => NodeState::Failing,
        "FUTURE" => NodeState::Future,
        "CLOUD" => NodeState::Cloud,
        _ => return None,
    })
}

fn parse_partition_state(value: &str) -> Option<PartitionState> {
    Some(match value.to_ascii_uppercase().as_str() {
        "UP" => PartitionState::Up,
        "DOWN" => PartitionState::Down,
        "DRAIN" => PartitionState::Drain,
        "INACTIVE" => PartitionState::Inactive,
        _ => return None,
    })
}

fn parse_oversubscribe(value: &str) -> Option<OverSubscribe> {
    let upper = value.to_ascii_uppercase();
    let (mode, count) = match upper.split_once(':') {
        Some((mode, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (mode, Some(n.parse::<u16>().ok()?))
        }
        Some(_) => return None,
        None => (upper.as_str(), None),
    };
    match (mode, count) {
        ("NO", None) => Some(OverSubscribe::No),
        ("EXCLUSIVE", None) => Some(OverSubscribe::Exclusive),
        ("YES", None) => Some(OverSubscribe::Yes(4)),
        ("YES", Some(n)) if n >= 2 => Some(OverSubscribe::Yes(n)),
        ("FORCE", None) => Some(OverSubscribe::Force(4)),
        ("FORCE", Some(n)) if n >= 1 => Some(OverSubscribe::Force(n)),
        _ => None,
    }
}

/// Slurm's time syntax in whole minutes, seconds rounded up; `Some(None)`
/// for `INFINITE`, `UNLIMITED` or `-1`.
fn parse_minutes(value: &str) -> Option<Option<u32>> {
    match parse_seconds(value)? {
        None => Some(None),
        Some(seconds) => u32::try_from(seconds.div_ceil(60))
            .ok()
            .filter(|&m| m != u32::MAX)
            .map(Some),
    }
}

/// Slurm's time syntax (`minutes`, `MM:SS`, `HH:MM:SS`, `D-HH`,
/// `D-HH:MM`, `D-HH:MM:SS`) in seconds; `Some(None)` for `INFINITE`,
/// `UNLIMITED` or `-1`; `None` when it is none of these or too long for
/// a `u64` ([`read_seconds`] tells which).
pub(crate) fn parse_seconds(value: &str) -> Option<Option<u64>> {
    read_seconds(value).ok()
}

/// Why a time did not read ([`read_seconds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeError {
    /// Not in any of Slurm's time syntaxes.
    Malformed,
    /// In one of them, but more seconds than a `u64` holds.
    TooLong,
}

/// [`parse_seconds`], telling a malformed time from one too long. Every
/// step is checked, so no time wraps around.
pub(crate) fn read_seconds(value: &str) -> Result<Option<u64>, TimeError> {
    if is_unlimited(value) || value == "-1" {
        return Ok(None);
    }
    let field = |s: &str| -> Result<u64, TimeError> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(TimeError::Malformed);
        }
        s.parse().map_err(|_| TimeError::TooLong)
    };
    let (days, clock) = match value.split_once('-') {
        Some((d, rest)) => (field(d)?, rest),
        None => (0, value),
    };
    let parts = clock
        .split(':')
        .map(field)
        .collect::<Result<Vec<u64>, _>>()?;
    let (hours, minutes, seconds) = match (value.contains('-'), parts.as_slice()) {
        (false, [m]) => (0, *m, 0),
        (false, [m, s]) => (0, *m, *s),
        (_, [h, m, s]) => (*h, *m, *s),
        (true, [h]) => (*h, 0, 0),
        (true, [h, m]) => (*h, *m, 0),
        _ => return Err(TimeError::Malformed),
    };
    days.checked_mul(24)
        .and_then(|h| h.checked_add(hours))
        .and_then(|h| h.checked_mul(60))
        .and_then(|m| m.checked_add(minutes))
        .and_then(|m| m.checked_mul(60))
        .and_then(|s| s.checked_add(seconds))
        .map(Some)
        .ok_or(TimeError::TooLong)
}

/// Parses a node's `Gres=` value.
fn parse_gres(value: &str) -> Result<Vec<GresConf>, String> {
    if value.is_empty() {
        return Ok(Vec::new());
    }
    value.split(',').map(parse_gres_item).collect()
}

fn parse_gres_item(item: &str) -> Result<GresConf, String> {
    let bad = || format!("expected name[:type][:count] (like gpu:a100:4), found `{item}`");
    let mut fields: Vec<&str> = item.split(':').collect();
    let name = fields.remove(0);
    if name.is_empty() || fields.iter().any(|f| f.is_empty()) {
        return Err(bad());
    }
    let count = match fields.last() {
        Some(last) if last.starts_with(|c: char| c.is_ascii_digit()) => {
            let count = crate::gres_conf::parse_count(last)
                .ok_or_else(|| format!("count `{last}` of `{item}` is not a number"))?;
            fields.pop();
            count
        }
        _ => 1,
    };
    let no_consume = fields.last() == Some(&"no_consume");
    if no_consume {
        fields.pop();
    }
    let type_name = match fields.as_slice() {
        [] => None,
        [t] => Some((*t).to_owned()),
        _ => return Err(bad()),
    };
    Ok(GresConf {
        name: name.to_owned(),
        type_name,
        count,
        no_consume,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> SlurmConf {
        parse_str(text, Path::new("/etc/slurm/slurm.conf")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(text: &str) -> ConfError {
        match parse_str(text, Path::new("slurm.conf")) {
            Ok(conf) => panic!("accepted: {conf:?}"),
            Err(e) => e,
        }
    }

    fn assert_error(text: &str, line: usize, message: &str) {
        let e = error(text);
        assert_eq!((e.line, e.message.as_str()), (line, message), "{e}");
    }

    /// The anchor cluster's `slurm.conf` (see the file's header).
    const ANCHOR: &str = include_str!("../testdata/anchor-slurm.conf");

    #[test]
    fn anchor_cluster() {
        let conf = parse(ANCHOR);
        let names: Vec<&str> = conf.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2", "n3", "n4", "h1", "h2"]);

        let n3 = &conf.nodes[2];
        assert_eq!(
            (
                n3.cpus,
                n3.boards,
                n3.sockets,
                n3.cores_per_socket,
                n3.threads_per_core
            ),
            (8, 1, 2, 2, 2)
        );
        assert_eq!(n3.real_memory, 4000);
        assert_eq!(n3.weight, 1);
        assert_eq!(n3.state, NodeState::Unknown);
        assert_eq!(
            n3.gres,
            [
                GresConf {
                    name: "gpu".into(),
                    type_name: None,
                    count: 2,
                    no_consume: false
                },
                GresConf {
                    name: "mps".into(),
                    type_name: None,
                    count: 200,
                    no_consume: false
                },
            ]
        );
        assert_eq!(n3.extra.get("nodeaddr"), Some("127.0.0.1"));
        assert_eq!(n3.extra.get("Port"), Some("[17001-17004]"));

        let h2 = &conf.nodes[5];
        assert_eq!(
            (
                h2.cpus,
                h2.sockets,
                h2.cores_per_socket,
                h2.threads_per_core
            ),
            (2, 1, 2, 1)
        );
        assert_eq!(h2.real_memory, 2000);
        assert!(h2.gres.is_empty());

        let big = conf.partition("big").unwrap();
        assert_eq!(big.nodes, [0, 1, 2, 3]);
        assert!(big.default);
        assert_eq!((big.default_time, big.max_time), (Some(5), Some(60)));
        assert_eq!((big.priority_job_factor, big.priority_tier), (1, 1));
        assert_eq!(big.oversubscribe, OverSubscribe::No);
        assert_eq!(big.state, PartitionState::Up);
        assert_eq!(big.default_memory, None);

        let hw = conf.partition("hw").unwrap();
        assert_eq!(hw.nodes, [4, 5]);
        assert!(!hw.default);
        assert_eq!(hw.priority_job_factor, 2);
        assert_eq!(conf.default_partition().unwrap().name, "big");

        assert_eq!(conf.select_type(), Some("select/cons_tres"));
        assert_eq!(
            conf.options.get("SelectTypeParameters"),
            Some("CR_Core_Memory")
        );
        assert_eq!(conf.priority_type(), Some("priority/multifactor"));
        assert_eq!(conf.task_plugins(), ["task/affinity"]);
        assert_eq!(conf.gres_types(), ["gpu", "mps"]);
        assert_eq!(conf.options.get("defmempercpu"), Some("250"));
        assert_eq!(
            conf.options.get("PriorityWeightTRES"),
            Some("CPU=100,Mem=1,GRES/gpu=500")
        );
        assert_eq!(
            conf.options.get("SlurmctldHost"),
            Some("anchorhost(127.0.0.1)")
        );
        assert_eq!(conf.options.len(), 41);
        let select = conf.options.origin("selecttype").unwrap();
        assert_eq!(select.to_string(), "/etc/slurm/slurm.conf:29");
        assert_eq!(conf.nodes[0].extra.origin("Port").map(|o| o.line), Some(45));
        assert_eq!(conf.options.iter().next(), Some(("ClusterName", "anchor")));
        assert!(conf.records.is_empty());
    }

    #[test]
    fn accessors_normalise_lists() {
        let conf = parse(
            "TaskPlugin=affinity,task/cgroup\nSelectTypeParameters=\"CR_Core, CR_ONE_TASK_PER_CORE\"\n",
        );
        assert_eq!(conf.task_plugins(), ["task/affinity", "task/cgroup"]);
        assert_eq!(
            conf.options.get("SelectTypeParameters"),
            Some("CR_Core, CR_ONE_TASK_PER_CORE")
        );
        assert_eq!(conf.select_type(), None);
        assert!(conf.gres_types().is_empty());
    }

    #[test]
    fn syntax_comments_quotes_continuations_and_case() {
        let conf = parse(concat!(
            "# a comment\n",
            "  clustername = test   # trailing comment\n",
            "SlurmctldHost=a SlurmctldHost=b\n",
            "MailProg=\"/usr/bin/mail with space\" Epilog=/x\\#y\n",
            "nodename=n[1-2] \\\n",
            "   cpus=4 \\\n",
            "   Reason=\"hash # inside\"\n",
            "ClusterName=final\n",
        ));
        assert_eq!(conf.options.get("ClusterName"), Some("final"));
        assert_eq!(
            conf.options.get_all("clusterNAME").collect::<Vec<_>>(),
            ["test", "final"]
        );
        assert_eq!(
            conf.options.get_all("SlurmctldHost").collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(
            conf.options.get("MailProg"),
            Some("/usr/bin/mail with space")
        );
        assert_eq!(conf.options.get("Epilog"), Some("/x#y"));
        assert_eq!(conf.nodes.len(), 2);
        assert_eq!(conf.nodes[1].cpus, 4);
        assert_eq!(conf.nodes[1].extra.get("Reason"), Some("hash # inside"));
    }

    #[test]
    fn node_geometry_defaults_follow_slurm() {
        let conf = parse(concat!(
            "NodeName=only-cpus CPUs=8\n",
            "NodeName=bare\n",
            "NodeName=cpus-and-cores CPUs=16 CoresPerSocket=4\n",
            "NodeName=no-ht CPUs=4 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2\n",
            "NodeName=boards Boards=2 SocketsPerBoard=2 CoresPerSocket=4\n",
            "NodeName=procs Procs=2\n",
        ));
        let shape = |i: usize| {
            let n = &conf.nodes[i];
            (
                n.cpus,
                n.boards,
                n.sockets,
                n.cores_per_socket,
                n.threads_per_core,
            )
        };
        assert_eq!(shape(0), (8, 1, 8, 1, 1));
        assert_eq!(shape(1), (1, 1, 1, 1, 1));
        assert_eq!(shape(2), (16, 1, 4, 4, 1));
        assert_eq!(shape(3), (4, 1, 2, 2, 2));
        assert_eq!(shape(4), (16, 2, 4, 4, 1));
        assert_eq!(shape(5), (2, 1, 2, 1, 1));
        let bare = &conf.nodes[1];
        assert_eq!((bare.real_memory, bare.tmp_disk, bare.weight), (1, 0, 1));
        assert_eq!((bare.core_spec_count, bare.mem_spec_limit), (0, 0));
        assert!(bare.features.is_empty() && bare.gres.is_empty() && bare.extra.is_empty());
    }

    #[test]
    fn every_node_field_is_read() {
        let conf = parse(
            "NodeName=g[01-02] CPUs=64 Sockets=2 CoresPerSocket=16 ThreadsPerCore=2 \
             RealMemory=512000 TmpDisk=100000 Weight=10 Features=a100,ib \
             Gres=gpu:a100:4,gpu:1,mps:400,bw:no_consume:4G,nic CoreSpecCount=2 \
             MemSpecLimit=2048 State=CLOUD TRESWeights=CPU=1.0 CpuBind=cores\n",
        );
        let g = &conf.nodes[1];
        assert_eq!(g.name, "g02");
        assert_eq!(g.cpus, 64);
        assert_eq!((g.real_memory, g.tmp_disk, g.weight), (512000, 100000, 10));
        assert_eq!(g.features, ["a100", "ib"]);
        let gres: Vec<(&str, Option<&str>, u64, bool)> = g
            .gres
            .iter()
            .map(|r| {
                (
                    r.name.as_str(),
                    r.type_name.as_deref(),
                    r.count,
                    r.no_consume,
                )
            })
            .collect();
        assert_eq!(
            gres,
            [
                ("gpu", Some("a100"), 4, false),
                ("gpu", None, 1, false),
                ("mps", None, 400, false),
                ("bw", None, 4 << 30, true),
                ("nic", None, 1, false),
            ]
        );
        assert_eq!((g.core_spec_count, g.mem_spec_limit), (2, 2048));
        assert_eq!(g.state, NodeState::Cloud);
        assert_eq!(g.extra.get("TRESWeights"), Some("CPU=1.0"));
        assert_eq!(g.extra.get("CpuBind"), Some("cores"));
    }

    #[test]
    fn node_and_partition_defaults_apply_to_later_lines() {
        let conf = parse(concat!(
            "NodeName=DEFAULT CPUs=4 RealMemory=1000 State=DRAIN\n",
            "NodeName=a RealMemory=2000\n",
            "NodeName=DEFAULT Weight=5\n",
            "NodeName=b\n",
            "PartitionName=DEFAULT MaxTime=30 DefMemPerCPU=100 OverSubscribe=FORCE:2\n",
            "PartitionName=p1 Nodes=a\n",
            "PartitionName=p2 Nodes=ALL DefMemPerNode=900 MaxTime=UNLIMITED\n",
        ));
        let (a, b) = (&conf.nodes[0], &conf.nodes[1]);
        assert_eq!(
            (a.cpus, a.real_memory, a.weight, a.state),
            (4, 2000, 1, NodeState::Drain)
        );
        assert_eq!((b.cpus, b.real_memory, b.weight), (4, 1000, 5));
        let p1 = conf.partition("p1").unwrap();
        assert_eq!(p1.max_time, Some(30));
        assert_eq!(p1.default_memory, Some(MemoryLimit::PerCpu(100)));
        assert_eq!(p1.oversubscribe, OverSubscribe::Force(2));
        let p2 = conf.partition("p2").unwrap();
        assert_eq!(p2.nodes, [0, 1]);
        assert_eq!(p2.max_time, None);
        assert_eq!(p2.default_memory, Some(MemoryLimit::PerNode(900)));
        assert_eq!(conf.default_partition(), None);
    }

    #[test]
    fn every_partition_field_is_read() {
        let conf = parse(concat!(
            "NodeName=n[1-8]\n",
            "PartitionName=p Nodes=n[5-8],n1,n5 Default=yes MaxTime=1-12:30:00 ",
            "DefaultTime=90:30 OverSubscribe=YES:8 Priority=7 State=DRAIN ",
            "MaxMemPerNode=8000 MaxNodes=4 MinNodes=2 MaxCPUsPerNode=32 ",
            "DefCpuPerGPU=4 DefMemPerGPU=8000 LLN=YES ",
            "AllowAccounts=teamA PreemptMode=REQUEUE\n",
            "PartitionName=q Shared=EXCLUSIVE MaxNodes=INFINITE PriorityTier=3 State=INACTIVE\n",
        ));
        let p = conf.partition("p").unwrap();
        assert_eq!(p.nodes, [0, 4, 5, 6, 7]);
        assert!(p.default);
        assert_eq!(p.max_time, Some(24 * 60 + 12 * 60 + 30));
        assert_eq!(p.default_time, Some(91));
        assert_eq!(p.oversubscribe, OverSubscribe::Yes(8));
        assert_eq!((p.priority_job_factor, p.priority_tier), (7, 7));
        assert_eq!(p.state, PartitionState::Drain);
        assert_eq!(p.max_memory, Some(MemoryLimit::PerNode(8000)));
        assert_eq!(
            (p.max_nodes, p.min_nodes, p.max_cpus_per_node),
            (Some(4), 2, Some(32))
        );
        assert_eq!(
            (p.def_cpu_per_gpu, p.def_mem_per_gpu),
            (Some(4), Some(8000))
        );
        assert!(p.lln);
        assert_eq!(p.extra.get("AllowAccounts"), Some("teamA"));
        assert_eq!(p.extra.get("PreemptMode"), Some("REQUEUE"));
        let q = conf.partition("q").unwrap();
        assert!(!q.lln);
        assert!(q.nodes.is_empty());
        assert_eq!(q.oversubscribe, OverSubscribe::Exclusive);
        assert_eq!(
            (q.max_nodes, q.max_cpus_per_node, q.min_nodes),
            (None, None, 0)
        );
        assert_eq!((q.priority_job_factor, q.priority_tier), (1, 3));
        assert_eq!(q.state, PartitionState::Inactive);
    }

    #[test]
    fn time_formats() {
        let cases = [
            ("0", Some(Some(0))),
            ("90", Some(Some(90))),
            ("5:00", Some(Some(5))),
            ("5:01", Some(Some(6))),
            ("01:00:00", Some(Some(60))),
            ("2-0", Some(Some(2 * 1440))),
            ("1-02:03", Some(Some(1440 + 123))),
            ("1-00:00:01", Some(Some(1441))),
            ("INFINITE", Some(None)),
            ("unlimited", Some(None)),
            ("-1", Some(None)),
            ("", None),
            ("1:2:3:4", None),
            ("1-2-3", None),
            ("abc", None),
            ("1-", None),
            ("99999999999999999999", None),
            ("4294967295", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_minutes(text), expected, "{text:?}");
        }
        assert_eq!(
            read_seconds("1:18446744073709551615:00"),
            Err(TimeError::TooLong)
        );
        assert_eq!(
            read_seconds("213503982334602-00:00:00"),
            Err(TimeError::TooLong)
        );
        assert_eq!(read_seconds("1-2-3"), Err(TimeError::Malformed));
        assert_eq!(
            read_seconds("99999999999999999999"),
            Err(TimeError::TooLong)
        );
    }

    #[test]
    fn oversubscribe_values() {
        use OverSubscribe::*;
        let cases = [
            ("NO", Some(No)),
            ("exclusive", Some(Exclusive)),
            ("YES", Some(Yes(4))),
            ("YES:2", Some(Yes(2))),
            ("FORCE", Some(Force(4))),
            ("FORCE:1", Some(Force(1))),
            ("YES:1", None),
            ("FORCE:0", None),
            ("NO:3", None),
            ("YES:", None),
            ("YES:x", None),
            ("MAYBE", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_oversubscribe(text), expected, "{text:?}");
        }
    }

    #[test]
    fn other_records_take_the_rest_of_their_line() {
        let conf = parse(concat!(
            "NodeName=n[1-2]\n",
            "DownNodes=n2 State=DOWN Reason=\"bad disk\"\n",
            "NodeSet=gpus Feature=gpu\n",
            "ClusterName=c NodeName=x CPUs=2\n",
        ));
        assert_eq!(conf.records.len(), 2);
        let down = &conf.records[0];
        assert_eq!(
            (down.kind, down.name.as_str(), down.line),
            ("DownNodes", "n2", 2)
        );
        assert_eq!(down.params.get("reason"), Some("bad disk"));
        assert_eq!(conf.records[1].kind, "NodeSet");
        assert_eq!(conf.options.get("ClusterName"), Some("c"));
        assert_eq!(conf.options.get("State"), None);
        assert_eq!(conf.nodes[2].name, "x");
        assert_eq!(conf.nodes[2].cpus, 2);
    }

    #[test]
    fn includes_resolve_relative_to_the_including_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("conf.d")).unwrap();
        std::fs::write(
            dir.path().join("slurm.conf"),
            "ClusterName=c\nInclude conf.d/nodes.conf\nPartitionName=p Nodes=ALL\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("conf.d/nodes.conf"),
            "NodeName=n[1-2] CPUs=2\ninclude \"more.conf\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("conf.d/more.conf"),
            "NodeName=m1\nGresTypes=gpu\n",
        )
        .unwrap();
        let conf = load(&dir.path().join("slurm.conf")).unwrap();
        let names: Vec<&str> = conf.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2", "m1"]);
        let gres_types = conf.options.origin("GresTypes").unwrap();
        assert_eq!(
            (gres_types.file.as_path(), gres_types.line),
            (dir.path().join("conf.d/more.conf").as_path(), 2)
        );
        assert_eq!(conf.partitions[0].nodes, [0, 1, 2]);

        std::fs::write(dir.path().join("conf.d/more.conf"), "NodeName=m1 CPUs=x\n").unwrap();
        let e = load(&dir.path().join("slurm.conf")).unwrap_err();
        assert_eq!(e.file, dir.path().join("conf.d/more.conf"));
        assert_eq!(e.line, 1);
        assert_eq!(e.message, "CPUs: expected a number of CPUs, found `x`");
    }

    #[test]
    fn include_problems_are_reported_at_the_include_line() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.conf");
        let b = dir.path().join("b.conf");
        std::fs::write(&a, "ClusterName=c\nInclude b.conf\n").unwrap();
        std::fs::write(&b, "\n\nInclude a.conf\n").unwrap();
        let e = load(&a).unwrap_err();
        assert_eq!((e.file.as_path(), e.line), (b.as_path(), 3));
        assert!(e.message.starts_with("Include loop: "), "{e}");

        std::fs::write(&b, "Include missing.conf\n").unwrap();
        let e = load(&a).unwrap_err();
        assert_eq!((e.file.as_path(), e.line), (b.as_path(), 1));
        assert!(e.message.starts_with("Include: cannot read `"), "{e}");

        let e = load(&dir.path().join("nowhere.conf")).unwrap_err();
        assert_eq!(e.line, 0);
        assert!(e.to_string().contains("nowhere.conf: cannot read: "), "{e}");

        assert_error(
            "ClusterName=c\ninclude   \n",
            2,
            "Include: expected a file path",
        );
    }

    #[test]
    fn malformed_lines_give_their_line_number() {
        assert_error("ClusterName=c\nfoo\n", 2, "expected Key=Value, found `foo`");
        assert_error(
            "A=1\n\n=x\n",
            3,
            "expected Key=Value with a key of letters and digits, found `=x`",
        );
        assert_error(
            "A.b=1\n",
            1,
            "expected Key=Value with a key of letters and digits, found `A.b=1`",
        );
        assert_error("Reason=\"open\n", 1, "Reason: unterminated quoted value");
        assert_error(
            "Reason=\"a\"b\n",
            1,
            "Reason: expected whitespace after the quoted value",
        );
        assert_error(
            "NodeName=n1 \\\n  RealMemory=lots\n",
            2,
            "RealMemory: expected a number of MB, found `lots`",
        );
        assert_error(
            "NodeName=n1 Sockets=2 Colour=red\n",
            1,
            "unknown key `Colour` on a NodeName line",
        );
        assert_error(
            "PartitionName=p Nodes=ALL MaxWall=1\n",
            1,
            "unknown key `MaxWall` on a PartitionName line",
        );
        assert_error(
            "NodeName=n1 CPUs=2 Procs=2\n",
            1,
            "`Procs` is given twice on this NodeName line (also as `CPUs`)",
        );
        assert_error(
            "NodeName=n[1-2]\nNodeName=n2\n",
            2,
            "node `n2` is defined twice (first at slurm.conf:1)",
        );
        assert_error(
            "NodeName=n[3-1]\n",
            1,
            "NodeName: bad hostlist `n[3-1]`: range `3-1` is reversed",
        );
        assert_error(
            "NodeName=ALL\n",
            1,
            "NodeName: `ALL` is reserved and cannot name a node",
        );
        assert_error(
            "NodeName=DEFAULT NodeAddr=10.0.0.1\n",
            1,
            "NodeAddr is not allowed with NodeName=DEFAULT",
        );
        assert_error(
            "NodeName=n[1-4]\nPartitionName=big Nodes=n[1-4],n9\n",
            2,
            "unknown node `n9` in PartitionName=big Nodes",
        );
        assert_error(
            "NodeName=n1\nPartitionName=big Nodes=n[1-\n",
            2,
            "PartitionName=big Nodes: bad hostlist `n[1-`: `[` at column 2 is never closed",
        );
        assert_error(
            "PartitionName=p\nPartitionName=p\n",
            2,
            "partition `p` is defined twice (first at slurm.conf:1)",
        );
        assert_error(
            "PartitionName= \n",
            1,
            "PartitionName: expected a partition name",
        );
        assert_error(
            "PartitionName=p MaxTime=soon\n",
            1,
            "MaxTime: expected minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or INFINITE, found `soon`",
        );
        assert_error(
            "PartitionName=p Shared=YES:1\n",
            1,
            "Shared: expected NO, EXCLUSIVE, YES, YES:n (n >= 2), FORCE or FORCE:n (n >= 1), found `YES:1`",
        );
        assert_error(
            "PartitionName=p Default=maybe\n",
            1,
            "Default: expected YES or NO, found `maybe`",
        );
        assert_error(
            "PartitionName=p LLN=often\n",
            1,
            "LLN: expected YES or NO, found `often`",
        );
        assert_error(
            "PartitionName=p State=OPEN\n",
            1,
            "State: expected UP, DOWN, DRAIN or INACTIVE, found `OPEN`",
        );
        assert_error(
            "PartitionName=p MaxNodes=-3\n",
            1,
            "MaxNodes: expected a number of nodes or UNLIMITED, found `-3`",
        );
        assert_error(
            "PartitionName=p DefMemPerCPU=1 DefMemPerNode=2\n",
            1,
            "DefMemPerCPU and DefMemPerNode exclude each other; give one",
        );
        assert_error(
            "PartitionName=p DefCpuPerGPU=two\n",
            1,
            "DefCpuPerGPU: expected a number of CPUs, found `two`",
        );
        assert_error(
            "NodeName=n1 State=BROKEN\n",
            1,
            "State: expected UNKNOWN, IDLE, DOWN, DRAIN, FAIL, FAILING, FUTURE or CLOUD, found `BROKEN`",
        );
        assert_error(
            "NodeName=n1 Gres=gpu:a100:x:2\n",
            1,
            "Gres: expected name[:type][:count] (like gpu:a100:4), found `gpu:a100:x:2`",
        );
        assert_error(
            "NodeName=n1 Gres=gpu:2x\n",
            1,
            "Gres: count `2x` of `gpu:2x` is not a number",
        );
        assert_error(
            "NodeName=n1 Gres=gpu,,mps\n",
            1,
            "Gres: expected name[:type][:count] (like gpu:a100:4), found ``",
        );
        assert_error(
            "NodeName=n1 CPUs=70000\n",
            1,
            "CPUs: expected a number of CPUs, found `70000`",
        );
    }

    #[test]
    fn contradictory_node_shapes_are_refused() {
        assert_error(
            "NodeName=n1 CPUs=7 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2\n",
            1,
            "CPUs=7 matches neither Sockets (2), Sockets x CoresPerSocket (4) nor \
             Sockets x CoresPerSocket x ThreadsPerCore (8)",
        );
        assert_error(
            "NodeName=n1 ThreadsPerCore=0\n",
            1,
            "ThreadsPerCore: must be at least 1",
        );
        assert_error(
            "NodeName=n1 Sockets=2 SocketsPerBoard=2\n",
            1,
            "Sockets and SocketsPerBoard exclude each other; give one",
        );
        assert_error(
            "NodeName=n1 Boards=2 Sockets=1\n",
            1,
            "Boards=2 is more than the node's 1 sockets",
        );
        assert_error(
            "NodeName=n1 Sockets=300 CoresPerSocket=300\n",
            1,
            "Sockets x CoresPerSocket x ThreadsPerCore = 300 x 300 x 1 exceeds 65535",
        );
        assert_error(
            "NodeName=n1 CoresPerSocket=4 CoreSpecCount=4\n",
            1,
            "CoreSpecCount=4 must be less than the node's 4 cores",
        );
        assert_error(
            "NodeName=n1 RealMemory=100 MemSpecLimit=100\n",
            1,
            "MemSpecLimit=100 must be less than RealMemory (100)",
        );
    }

    // Issue 26, class 6: the hostlists of a slurm.conf were bounded one
    // expression at a time, by count only; a 4.6 KB file reached 9.5 GB.
    // Each case below was accepted before (after building gigabytes, or
    // not at all); now each is refused at its line, from sizes computed
    // before anything is expanded, naming the bound.
    #[test]
    fn a_small_file_cannot_describe_more_than_memory_holds() {
        // A long parameter copied to half a million nodes (about 2 GB).
        let feature = "f".repeat(4000);
        let e = error(&format!("NodeName=n[1-500000] Feature={feature}\n"));
        assert_eq!(e.line, 1);
        assert!(
            e.message.starts_with(&format!(
                "the configuration would keep more than {MAX_KEPT_BYTES} bytes in memory"
            )),
            "{e}"
        );
        // Lines that each stay within a hostlist's bounds, but not together.
        assert_error(
            "NodeName=a[1-300000]\nNodeName=b[1-300000]\n",
            2,
            "NodeName: `b[1-300000]` would make 600000 nodes; at most 524288 are supported",
        );
        assert_error(
            "NodeName=n[1-1048577]\n",
            1,
            "NodeName: bad hostlist `n[1-1048577]`: expands to more than 1048576 names",
        );
        // Hardware no bitmap of the cluster's CPUs could cover.
        assert_error(
            "NodeName=big Sockets=65535 CoresPerSocket=65535 CPUs=65535\n",
            1,
            "NodeName: `big` (1 nodes of 4294836225 threads) would give the cluster more than \
             134217728 CPUs (Sockets x CoresPerSocket x ThreadsPerCore summed over the nodes)",
        );
    }

    // Issue 26, class 6: `Nodes=ALL` and partition hostlists count against
    // the file's hostlist budget, and partitions times nodes are bounded
    // (their node bitmaps).
    #[test]
    fn partitions_are_bounded_by_members_and_bitmaps() {
        let mut text = String::from("NodeName=n[1-65536]\n");
        for p in 0..32 {
            text.push_str(&format!("PartitionName=p{p} Nodes=ALL\n"));
        }
        // 65,536 node names and 31 x 65,536 members fill 4 x 2^19 exactly.
        assert_error(
            &text,
            33,
            "PartitionName=p31 Nodes: bad hostlist `ALL`: together with the hostlists before \
             it, expands to more than 2097152 names or 268435456 bytes of names in all",
        );
        let mut text = String::from("NodeName=n[1-65536]\n");
        for p in 0..32_769 {
            text.push_str(&format!("PartitionName=p{p}\n"));
        }
        assert_error(
            &text,
            32_770,
            "PartitionName=p32768: 32769 partitions of 65536 nodes exceed 2147483648 \
             partition-node pairs (the bits of their node bitmaps)",
        );
    }

    // Issue 26, class 6: includes are bounded in number and in text, so a
    // file cannot include another a thousand times over.
    #[test]
    fn includes_are_bounded_in_number_and_text() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("slurm.conf");
        let part = dir.path().join("part.conf");
        std::fs::write(&part, "ClusterName=c\n").unwrap();
        std::fs::write(&top, "Include part.conf\n".repeat(MAX_INCLUDES + 1)).unwrap();
        let e = load(&top).unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (MAX_INCLUDES + 1, "Include: more than 256 includes in all")
        );
        std::fs::write(&part, format!("Comment={}\n", "x".repeat(1 << 20))).unwrap();
        std::fs::write(&top, "Include part.conf\n".repeat(5)).unwrap();
        let e = load(&top).unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(
            e.message.ends_with("over 4194304 bytes of text in all"),
            "{e}"
        );
        std::fs::write(&top, "x".repeat(MAX_TEXT + 1)).unwrap();
        let e = load(&top).unwrap_err();
        assert_eq!(
            (e.line, e.message.as_str()),
            (
                0,
                "larger than 4194304 bytes, the most a configuration file may hold"
            )
        );
    }

    /// What a parsed configuration keeps, estimated as the reader counts it.
    fn kept(conf: &SlurmConf) -> u64 {
        conf.nodes
            .iter()
            .map(|n| node_cost(n) + name_cost(n.name.len() as u64))
            .sum::<u64>()
            + conf
                .partitions
                .iter()
                .map(|p| p.nodes.len() as u64 * 8)
                .sum::<u64>()
    }

    #[test]
    fn half_a_million_plain_nodes_fit() {
        let conf = parse("NodeName=n[1-524288] CPUs=4\nPartitionName=all Nodes=ALL\n");
        assert_eq!(conf.nodes.len(), MAX_NODES);
        assert!(kept(&conf) <= MAX_KEPT_BYTES * 2 / 3, "{}", kept(&conf));
    }

    #[test]
    fn error_display_is_file_colon_line() {
        let e = error("ClusterName=c\nfoo\n");
        assert_eq!(
            e.to_string(),
            "slurm.conf:2: expected Key=Value, found `foo`"
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = parse_str(&text, Path::new("/nonexistent/slurm.conf"));
        }

        /// Issue 26, class 6: generated files of up to a few KB with
        /// ranges from tiny to enormous, long values, defaults and
        /// `Nodes=ALL` are refused or parsed within the bounds.
        #[test]
        fn generated_files_stay_within_the_bounds(lines in proptest::collection::vec(
            (
                proptest::sample::select(vec!["NodeName=", "PartitionName=", "NodeName=DEFAULT ", "Comment="]),
                "[a-z]{1,3}",
                proptest::sample::select(vec![
                    "", "[1-9]", "[1-999]", "[0-99999999999]", "[1-600000]", "[1-3][1-99]",
                    "[000000000000000001-2]", "[1-2,5,7-9]",
                ]),
                proptest::sample::select(vec![
                    "", " Nodes=ALL", " CPUs=2", " Sockets=64 CoresPerSocket=64 ThreadsPerCore=8",
                    " Feature=", " Nodes=a[1-9]",
                ]),
                0usize..3000,
            ),
            0..24,
        )) {
            let text: String = lines
                .iter()
                .map(|(key, name, range, param, long)| {
                    let tail = if param.ends_with('=') { "g".repeat(*long) } else { String::new() };
                    format!("{key}{name}{range}{param}{tail}\n")
                })
                .collect();
            if let Ok(conf) = parse_str(&text, Path::new("/nonexistent/slurm.conf")) {
                proptest::prop_assert!(conf.nodes.len() <= MAX_NODES);
                proptest::prop_assert!(kept(&conf) <= MAX_KEPT_BYTES);
            }
        }

        #[test]
        fn config_shaped_text_never_panics(parts in proptest::collection::vec(
            proptest::sample::select(vec![
                "NodeName=", "PartitionName=", "DEFAULT", "ALL", "n", "[1-3]", "[01-2]", ",", "=",
                " ", " ", "\n", "\\\n", "#", "\"", "\\#", "CPUs=", "Sockets=", "CoresPerSocket=",
                "ThreadsPerCore=", "Boards=", "SocketsPerBoard=", "RealMemory=", "Gres=", "gpu:",
                "a100:", "no_consume:", "4K", "2", "0", "65536", "Nodes=", "MaxTime=", "1-00:00",
                "INFINITE", "OverSubscribe=", "FORCE:", "YES", "DefMemPerCPU=", "DefMemPerNode=",
                "Priority=", "Include ", "DownNodes=", "State=", "CoreSpecCount=", "MemSpecLimit=",
                "-", ":",
            ]),
            0..40,
        )) {
            let text: String = parts.concat();
            let _ = parse_str(&text, Path::new("/nonexistent/slurm.conf"));
        }
    }
}
