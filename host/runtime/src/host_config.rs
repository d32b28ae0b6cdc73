//! The host's own configuration: a small TOML file for what `slurm.conf` has
//! no words for.
//!
//! It says which WebAssembly component fills each plugin slot, which
//! capabilities each may use, the limits it runs under and what happens when
//! it fails. Every key is optional; an empty file is a valid configuration.
//!
//! ```toml
//! # Where to read the cluster (nodes, partitions, SelectType, ...).
//! slurm_conf = "/etc/slurm/slurm.conf"
//! # Compiled components are cached here: a directory of the user running
//! # the host that no one else may write (created mode 0700 if missing).
//! cache_dir = "/var/cache/slurm-wasm"
//! # Plugin state files are kept here.
//! state_dir = "/var/spool/slurm-wasm"
//! # The site's gres.conf, when not the one next to slurm.conf.
//! gres_conf = "/etc/slurm/gres.conf"
//! # What serves the gpu and gpu-control capabilities: "none" (the default),
//! # "nvml" (libnvidia-ml.so, loaded when first used) or "file:<path>" (a GPU
//! # inventory in TOML, for tests and simulations; relative to this file).
//! gpu = "nvml"
//!
//! # Limits for every plugin unless its own [plugins.<slot>.limits] says otherwise.
//! [defaults]
//! fuel_per_call = 1_000_000_000   # wasm fuel per call
//! deadline_ms = 2000              # wall time per call
//! memory_mb = 512                 # linear memory per instance
//! table_elements = 100000         # elements per table
//! max_instances = 64              # core instances per component instance
//! state_mb = 64                   # state blob kept for restarts or in a state file
//!
//! # One table per slot: select, priority, gres, task. Slurm loads several
//! # gres and task plugins, so those slots may be qualified: gres.gpu, task.affinity.
//! [plugins.select]
//! wasm = "plugins/select_cons_tres.wasm"  # relative to this file's directory
//! grants = ["log"]                        # log and clock are always granted
//! failure = "fallback"                    # restart (the default), fail or fallback
//! fallback = "select/linear"              # a bundled plugin of the same kind
//! max_restarts = 3                        # faults of the fallback before the slot is disabled
//! probation_calls = 100                   # after a reload, calls the replaced component
//!                                         # runs beside the new one (the C ABI's reload)
//! [plugins.select.limits]
//! fuel_per_call = 5_000_000_000
//! # When the slot's plugin is a select wrapper (a component importing
//! # `select`): its inner plugin, with its own limits, grants and failure
//! # policy; an inner plugin may be a wrapper with an `inner` of its own.
//! # [plugins.select.inner]
//! # bundled = "select/cons_tres"
//! # A select wrapper's node health program (select/cray_aries runs it
//! # after each job and step, as Slurm 18.08's select/cray ran
//! # xtcleanup_after); without one the wrapper's `node-health` is denied.
//! # node_health = "/opt/cray/nodehealth/default/bin/xtcleanup_after"
//! # State files written by these components (earlier builds of this .wasm,
//! # by SHA-256 as `sha256sum` prints it) are restored too.
//! # accept_state_from = ["<64 hex digits>"]
//!
//! # Record every call of the slot (`slurm-wasm replay` reads it).
//! [plugins.select.record]
//! path = "/var/spool/slurm-wasm/select.swrec"  # later parts add .1, .2, ...
//! part_mb = 64                            # a part's size
//! max_parts = 16                          # then recording stops
//! # A candidate that gets every call too, compared and never used; as many
//! # as wanted, each with its own grants (never cpuset or gpu-control),
//! # limits and failure policy.
//! [[plugins.select.shadow]]
//! wasm = "candidates/select_mine.wasm"
//! queue = 4096                            # calls it may fall behind
//!
//! [plugins.priority]
//! bundled = "priority/multifactor"        # a plugin built into the host
//!
//! [plugins.gres.gpu]
//! bundled = "gres/gpu"
//! grants = ["gpu", "gpu-control"]
//!
//! [plugins.task.affinity]
//! bundled = "task/affinity"
//! grants = ["topology", "cpuset"]
//! failure = "restart"
//! ```
//!
//! # Rules
//!
//! - Unknown keys are errors at every level, so a misspelt limit is never
//!   silently ignored.
//! - Relative paths (`slurm_conf`, `gres_conf`, `cache_dir`, `state_dir`,
//!   `wasm`, the path of `gpu = "file:<path>"`) are taken relative to the
//!   directory of the configuration file.
//! - The GPU provider serves only plugins granted `gpu` or `gpu-control`;
//!   every other plugin's calls are denied whatever `gpu` says.
//! - A slot names its source with exactly one of `wasm` and `bundled`; a
//!   bundled plugin and a fallback are plugin types of the slot's kind
//!   (`select/...` in the `select` slot). Whether the host carries that
//!   bundled plugin is checked when plugins are loaded.
//! - `grants` may name only what the slot's world imports: `gpu` and
//!   `gpu-control` for gres plugins, `topology` and `cpuset` for task
//!   plugins; `log` and `clock` are always granted and may be named anywhere.
//! - `failure` is `"restart"` when omitted ([`FailurePolicy::default`]);
//!   `max_restarts` (default 3) goes with `"restart"` or `"fallback"`, not
//!   with `"fail"`; `fallback` goes with `failure = "fallback"`, which
//!   requires it.
//! - Limits must be at least 1; a plugin's `limits` table overrides the
//!   `[defaults]` key by key, which override [`Limits::default`].
//! - `inner` goes only in a select slot's table (or an inner one's), and
//!   takes neither `record`, `shadow` nor `probation_calls`: the slot's
//!   recording sees the wrapper's calls, and a reload replaces the wrapper.
//! - `record` and `shadow` go in a slot's table, not in a shadow's; a
//!   shadow may not be granted `cpuset` or `gpu-control` (its calls must
//!   not act on the node), and takes `queue` (4096 by default), which a
//!   slot does not. Shadows and the recording are set up before the slot's
//!   plugin is initialised ([`crate::tap`], [`crate::recording`]).
//! - `accept_state_from` lists the SHA-256 digests (64 hexadecimal digits,
//!   as `sha256sum plugin.wasm` prints them) of components whose state files
//!   the plugin restores besides its own ([`crate::state`]): a site that
//!   replaces its `.wasm` lists the old build's digest so the new one takes
//!   over its state. A bundled plugin restores the files of the bundled
//!   plugin of its type from any host version without it.
//!
//! # Errors
//!
//! [`HostConfigError`] names the file and the place: TOML syntax and type
//! errors come with toml's own line, column and excerpt; the rules above are
//! checked afterwards and reported at the offending key or value.

use std::collections::BTreeMap;
use std::num::{NonZeroU32, NonZeroU64, NonZeroUsize};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{Deserialize, Deserializer};
use thiserror::Error;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

use crate::capabilities::gpu::GpuSource;
use crate::capabilities::{Capability, Grants};
use crate::limits::{FailurePolicy, Limits};
use crate::plugin::{PluginKind, PluginSettings, PluginSource};
use crate::recording::RecordOptions;
use crate::state::ComponentDigest;
use crate::tap::ShadowOptions;

/// The parsed host configuration, relative paths resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostConfig {
    /// The site's `slurm.conf`, when the host should read one.
    pub slurm_conf: Option<PathBuf>,
    /// Where compiled components are cached, when set.
    pub cache_dir: Option<PathBuf>,
    /// Where plugin state files are kept, when set.
    pub state_dir: Option<PathBuf>,
    /// The site's `gres.conf` when set; otherwise the one next to
    /// `slurm.conf`, if any.
    pub gres_conf: Option<PathBuf>,
    /// What serves `gpu` and `gpu-control` (`gpu =`), [`GpuSource::None`]
    /// when unset.
    pub gpu: GpuSource,
    /// Limits of a plugin that does not override them.
    pub defaults: Limits,
    /// Configured plugins by slot name (`select`, `gres.gpu`, ...).
    pub plugins: BTreeMap<String, PluginConfig>,
}

/// One configured plugin slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginConfig {
    /// The slot's kind (the part of the slot name before any `.`).
    pub kind: PluginKind,
    /// Where the component comes from: [`PluginSource::File`] (`wasm =`,
    /// path resolved) or [`PluginSource::Bundled`] (`bundled =`).
    pub source: PluginSource,
    /// Its limits (overrides merged over the defaults), grants and failure
    /// policy.
    pub settings: PluginSettings,
    /// Where its calls are recorded (`[plugins.<slot>.record]`).
    pub record: Option<RecordOptions>,
    /// Its shadows (`[[plugins.<slot>.shadow]]`).
    pub shadows: Vec<ShadowConfig>,
    /// Calls a reloaded component serves on probation, the replaced one
    /// running beside it (`probation_calls`, 100 by default).
    pub probation_calls: u32,
    /// A select wrapper's inner plugin (`[plugins.select.inner]`, which may
    /// have an `inner` of its own): its source, limits, grants and failure
    /// policy; never recorded, shadowed or reloaded apart from the slot.
    pub inner: Option<Box<PluginConfig>>,
    /// A select wrapper's node health program (`node_health`), which its
    /// `node-health` import runs; none denies it.
    pub node_health: Option<PathBuf>,
}

/// What a plugin table configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A slot (`[plugins.<slot>]`).
    Slot,
    /// One of a slot's shadows (`[[plugins.<slot>.shadow]]`).
    Shadow,
    /// A select wrapper's inner plugin (`[plugins.select.inner]`).
    Inner,
}

/// Calls of probation after a reload when `probation_calls` is not given.
pub const DEFAULT_PROBATION_CALLS: u32 = 100;

/// One `[[plugins.<slot>.shadow]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShadowConfig {
    /// Its component.
    pub source: PluginSource,
    /// Its own limits, grants and failure policy.
    pub settings: PluginSettings,
    /// How far it may fall behind.
    pub options: ShadowOptions,
}

/// A `grants` entry: a capability by its WIT name.
struct Grant(Capability);

impl<'de> Deserialize<'de> for Grant {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map(Grant).map_err(serde::de::Error::custom)
    }
}

/// Restarts allowed when `max_restarts` is not given; the same as
/// [`FailurePolicy::default`].
const DEFAULT_MAX_RESTARTS: u32 = 3;

/// Why a host configuration was refused.
#[derive(Debug, Error)]
pub enum HostConfigError {
    /// The file could not be read.
    #[error("{}: cannot read the host configuration: {source}", path.display())]
    Io {
        /// The configuration file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Not valid TOML, or a value of the wrong type or an unknown field
    /// inside a table. toml's message carries the line, column and excerpt.
    #[error("{}: {}", origin(file), source.to_string().trim_end())]
    Toml {
        /// The configuration file, when parsed from one.
        file: Option<PathBuf>,
        /// toml's error.
        source: toml::de::Error,
    },
    /// Valid TOML that breaks a rule of the configuration.
    #[error("{}: {message}", place(file, *line, *column))]
    Invalid {
        /// The configuration file, when parsed from one.
        file: Option<PathBuf>,
        /// Line of the offending key or value, from 1.
        line: usize,
        /// Its column, from 1.
        column: usize,
        /// What is wrong and what would be right.
        message: String,
    },
}

fn place(file: &Option<PathBuf>, line: usize, column: usize) -> String {
    match file {
        Some(f) => format!("{}:{line}:{column}", f.display()),
        None => format!("host configuration, line {line}, column {column}"),
    }
}

fn origin(file: &Option<PathBuf>) -> String {
    file.as_ref().map_or_else(
        || "host configuration".to_owned(),
        |f| f.display().to_string(),
    )
}

impl HostConfigError {
    fn in_file(mut self, path: &Path) -> Self {
        match &mut self {
            HostConfigError::Toml { file, .. } | HostConfigError::Invalid { file, .. } => {
                *file = Some(path.to_path_buf());
            }
            HostConfigError::Io { .. } => {}
        }
        self
    }
}

/// Reads and checks the host configuration at `path`; relative paths in it
/// are resolved against `path`'s directory.
///
/// # Errors
///
/// [`HostConfigError::Io`] when the file cannot be read, otherwise as
/// [`parse_str`], with the file named.
pub fn load(path: &Path) -> Result<HostConfig, HostConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| HostConfigError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let base_dir = path.parent().unwrap_or(Path::new(""));
    parse_str(&text, base_dir).map_err(|e| e.in_file(path))
}

/// Parses and checks a host configuration; relative paths in it are
/// resolved against `base_dir`.
///
/// # Errors
///
/// [`HostConfigError::Toml`] for invalid TOML, wrong value types and unknown
/// fields; [`HostConfigError::Invalid`] for a broken rule (see the
/// [module documentation](self)).
pub fn parse_str(text: &str, base_dir: &Path) -> Result<HostConfig, HostConfigError> {
    let parser = Parser { text, base_dir };
    let mut root = DeTable::parse(text).map_err(|e| parser.toml(e))?;
    for (key, _) in root.get_ref().iter() {
        if !TOP_LEVEL_KEYS.contains(&key.get_ref().as_ref()) {
            return Err(parser.invalid(
                key.span(),
                format!(
                    "unknown key `{}`; expected one of {}",
                    key.get_ref(),
                    TOP_LEVEL_KEYS.join(", ")
                ),
            ));
        }
    }
    let plugins = root.get_mut().remove("plugins");
    let raw =
        RawTop::deserialize(toml::de::Deserializer::from(root)).map_err(|e| parser.toml(e))?;
    let defaults = match raw.defaults {
        Some(overrides) => parser.limits(overrides, &Limits::default())?,
        None => Limits::default(),
    };
    let plugins = match plugins {
        Some(table) => parser.plugins(table, &defaults)?,
        None => BTreeMap::new(),
    };
    let gpu = match raw.gpu {
        Some(value) => match value.get_ref().parse::<GpuSource>() {
            Ok(GpuSource::File(path)) => GpuSource::File(parser.resolve(path)),
            Ok(source) => source,
            Err(message) => return Err(parser.invalid(value.span(), message)),
        },
        None => GpuSource::None,
    };
    Ok(HostConfig {
        slurm_conf: raw.slurm_conf.map(|p| parser.resolve(p)),
        cache_dir: raw.cache_dir.map(|p| parser.resolve(p)),
        state_dir: raw.state_dir.map(|p| parser.resolve(p)),
        gres_conf: raw.gres_conf.map(|p| parser.resolve(p)),
        gpu,
        defaults,
        plugins,
    })
}

const TOP_LEVEL_KEYS: [&str; 7] = [
    "slurm_conf",
    "cache_dir",
    "state_dir",
    "gres_conf",
    "gpu",
    "defaults",
    "plugins",
];

/// The top level, `plugins` aside (it is taken apart by hand, see
/// [`Parser::plugins`]). Unknown keys were refused before.
#[derive(serde::Deserialize)]
struct RawTop {
    slurm_conf: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    gres_conf: Option<PathBuf>,
    gpu: Option<Spanned<String>>,
    defaults: Option<RawLimits>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of limits")]
struct RawLimits {
    fuel_per_call: Option<NonZeroU64>,
    deadline_ms: Option<NonZeroU64>,
    memory_mb: Option<Spanned<NonZeroU64>>,
    table_elements: Option<NonZeroUsize>,
    max_instances: Option<NonZeroU32>,
    state_mb: Option<Spanned<NonZeroU64>>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    wasm: Option<PathBuf>,
    bundled: Option<Spanned<String>>,
    #[serde(default)]
    grants: Vec<Spanned<Grant>>,
    failure: Option<Spanned<FailureKind>>,
    fallback: Option<Spanned<String>>,
    max_restarts: Option<Spanned<u32>>,
    limits: Option<RawLimits>,
    #[serde(default)]
    accept_state_from: Vec<Spanned<String>>,
    record: Option<Spanned<RawRecord>>,
    queue: Option<Spanned<NonZeroUsize>>,
    probation_calls: Option<Spanned<u32>>,
    node_health: Option<Spanned<PathBuf>>,
}

#[derive(serde::Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with path, part_mb and max_parts"
)]
struct RawRecord {
    path: PathBuf,
    part_mb: Option<NonZeroU64>,
    max_parts: Option<NonZeroU32>,
}

#[derive(serde::Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum FailureKind {
    Fail,
    Restart,
    Fallback,
}

struct Parser<'a> {
    text: &'a str,
    base_dir: &'a Path,
}

impl Parser<'_> {
    fn toml(&self, mut error: toml::de::Error) -> HostConfigError {
        error.set_input(Some(self.text));
        HostConfigError::Toml {
            file: None,
            source: error,
        }
    }

    fn invalid(&self, span: Range<usize>, message: String) -> HostConfigError {
        let before = self.text.get(..span.start).unwrap_or(self.text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        HostConfigError::Invalid {
            file: None,
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            message,
        }
    }

    fn resolve(&self, path: PathBuf) -> PathBuf {
        if path.is_relative() {
            self.base_dir.join(path)
        } else {
            path
        }
    }

    /// Bytes of a limit given in MiB (`memory_mb`), `base` when not given.
    fn mib(
        &self,
        key: &str,
        mb: Option<Spanned<NonZeroU64>>,
        base: usize,
    ) -> Result<usize, HostConfigError> {
        let Some(mb) = mb else {
            return Ok(base);
        };
        mb.get_ref()
            .get()
            .checked_mul(1 << 20)
            .and_then(|bytes| usize::try_from(bytes).ok())
            .ok_or_else(|| {
                self.invalid(
                    mb.span(),
                    format!(
                        "{key} = {} is more memory than this host can address",
                        mb.get_ref()
                    ),
                )
            })
    }

    fn limits(&self, raw: RawLimits, base: &Limits) -> Result<Limits, HostConfigError> {
        let memory_bytes = self.mib("memory_mb", raw.memory_mb, base.memory_bytes)?;
        let state_bytes = self.mib("state_mb", raw.state_mb, base.state_bytes)?;
        Ok(Limits {
            fuel_per_call: raw
                .fuel_per_call
                .map_or(base.fuel_per_call, NonZeroU64::get),
            deadline: raw
                .deadline_ms
                .map_or(base.deadline, |ms| Duration::from_millis(ms.get())),
            memory_bytes,
            table_elements: raw
                .table_elements
                .map_or(base.table_elements, NonZeroUsize::get),
            max_instances: raw
                .max_instances
                .map_or(base.max_instances, NonZeroU32::get),
            state_bytes,
        })
    }

    /// Takes the `plugins` table apart: each key is a slot, except that a
    /// table made only of tables is a group of qualified slots
    /// (`[plugins.gres.gpu]`), which only `gres` and `task` may have.
    fn plugins(
        &self,
        table: Spanned<DeValue<'_>>,
        defaults: &Limits,
    ) -> Result<BTreeMap<String, PluginConfig>, HostConfigError> {
        let span = table.span();
        let DeValue::Table(table) = table.into_inner() else {
            return Err(self.invalid(span, "`plugins` must be a table of plugin slots".into()));
        };
        let mut plugins = BTreeMap::new();
        for (key, value) in table {
            let key_span = key.span();
            let slot = key.into_inner().into_owned();
            self.slot_kind(&slot, key_span.clone())?;
            let entries: Vec<(String, Range<usize>, Spanned<DeValue<'_>>)> = if !slot.contains('.')
                && is_group(&value)
            {
                let DeValue::Table(group) = value.into_inner() else {
                    unreachable!("is_group checked that this is a table");
                };
                group
                    .into_iter()
                    .map(|(name, value)| (format!("{slot}.{}", name.get_ref()), name.span(), value))
                    .collect()
            } else {
                vec![(slot, key_span, value)]
            };
            for (slot, slot_span, value) in entries {
                let kind = self.slot_kind(&slot, slot_span.clone())?;
                if plugins.contains_key(&slot) {
                    return Err(
                        self.invalid(slot_span, format!("slot `{slot}` is configured twice"))
                    );
                }
                let (plugin, _) = self.plugin(&slot, kind, value, defaults, Role::Slot)?;
                plugins.insert(slot, plugin);
            }
        }
        Ok(plugins)
    }

    /// Checks a slot name (`select`, `gres.gpu`) and returns its kind.
    fn slot_kind(&self, slot: &str, span: Range<usize>) -> Result<PluginKind, HostConfigError> {
        let (kind_name, qualifier) = match slot.split_once('.') {
            Some((kind, qualifier)) => (kind, Some(qualifier)),
            None => (slot, None),
        };
        let kind: PluginKind = kind_name.parse().map_err(|_| {
            self.invalid(
                span.clone(),
                format!(
                    "unknown plugin slot `{slot}`; expected select, gres, priority or task \
                     (gres and task may be qualified, like gres.gpu)"
                ),
            )
        })?;
        match qualifier {
            Some(_) if !kind.allows_several() => Err(self.invalid(
                span,
                format!("slot `{slot}`: only gres and task slots take a qualifier; Slurm loads one {kind} plugin"),
            )),
            Some(q)
                if q.is_empty()
                    || !q.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                Err(self.invalid(
                    span,
                    format!("slot `{slot}`: a qualifier is made of letters, digits, `_` and `-`"),
                ))
            }
            _ => Ok(kind),
        }
    }

    /// A slot's table, one of its shadows' (with the shadow's `queue`), or
    /// a select wrapper's inner plugin's.
    fn plugin(
        &self,
        slot: &str,
        kind: PluginKind,
        mut value: Spanned<DeValue<'_>>,
        defaults: &Limits,
        role: Role,
    ) -> Result<(PluginConfig, usize), HostConfigError> {
        let shadow = role == Role::Shadow;
        let table_span = value.span();
        let DeValue::Table(table) = value.get_mut() else {
            return Err(self.invalid(
                table_span,
                format!("`plugins.{slot}` must be a table, like [plugins.{slot}]"),
            ));
        };
        let inner = table.remove("inner");
        if role == Role::Inner {
            for key in ["shadow", "record", "probation_calls"] {
                if let Some((key, _)) = table.get_key_value(key) {
                    return Err(self.invalid(
                        key.span(),
                        format!(
                            "[plugins.{slot}]: an inner plugin is recorded, shadowed and reloaded with its wrapper's slot; `{}` belongs there",
                            key.get_ref()
                        ),
                    ));
                }
            }
        }
        let shadow_entries = match table.remove("shadow") {
            Some(entries) if shadow => {
                return Err(self.invalid(
                    entries.span(),
                    format!("[plugins.{slot}]: a shadow has no shadows of its own"),
                ))
            }
            Some(entries) => {
                let span = entries.span();
                match entries.into_inner() {
                    DeValue::Array(mut items) => items
                        .iter_mut()
                        .map(|item| {
                            std::mem::replace(item, Spanned::new(0..0, DeValue::Boolean(false)))
                        })
                        .collect(),
                    _ => {
                        return Err(self.invalid(
                            span,
                            format!(
                                "`plugins.{slot}.shadow` is a list of tables, like [[plugins.{slot}.shadow]]"
                            ),
                        ))
                    }
                }
            }
            None => Vec::new(),
        };
        let mut shadows = Vec::new();
        for (i, entry) in shadow_entries.into_iter().enumerate() {
            let name = format!("{slot}.shadow[{i}]");
            let (config, queue) = self.plugin(&name, kind, entry, defaults, Role::Shadow)?;
            shadows.push(ShadowConfig {
                source: config.source,
                settings: config.settings,
                options: ShadowOptions {
                    queue,
                    ..ShadowOptions::default()
                },
            });
        }
        let mut raw =
            RawPlugin::deserialize(ValueDeserializer::from(value)).map_err(|e| self.toml(e))?;
        let source = match (raw.wasm.take(), raw.bundled.take()) {
            (Some(path), None) => PluginSource::File(self.resolve(path)),
            (None, Some(bundled)) => {
                self.plugin_type(kind, &bundled, "bundled")?;
                PluginSource::Bundled(bundled.into_inner())
            }
            (Some(_), Some(bundled)) => {
                return Err(self.invalid(
                    bundled.span(),
                    format!("[plugins.{slot}] gives both `wasm` and `bundled`; keep one"),
                ))
            }
            (None, None) => {
                return Err(self.invalid(
                    table_span,
                    format!(
                        "[plugins.{slot}] needs `wasm = \"path/to/plugin.wasm\"` or \
                         `bundled = \"{kind}/<name>\"`"
                    ),
                ))
            }
        };
        let mut grants = Grants::none();
        for grant in &raw.grants {
            let Grant(capability) = *grant.get_ref();
            if !capability.always_granted() && !kind.grantable().any(|c| c == capability) {
                let grantable: Vec<String> = kind.grantable().map(|c| c.to_string()).collect();
                let allowed = if grantable.is_empty() {
                    "nothing beyond log and clock".to_owned()
                } else {
                    grantable.join(" and ")
                };
                return Err(self.invalid(
                    grant.span(),
                    format!(
                        "capability `{capability}` cannot be granted to a {kind} plugin; \
                         its world imports {allowed}"
                    ),
                ));
            }
            if shadow && matches!(capability, Capability::Cpuset | Capability::GpuControl) {
                return Err(self.invalid(
                    grant.span(),
                    format!(
                        "a shadow may not be granted `{capability}`: its calls must not act on the node"
                    ),
                ));
            }
            grants = grants.with(capability);
        }
        let record = match raw.record.take() {
            Some(record) if shadow => {
                return Err(self.invalid(
                    record.span(),
                    format!("[plugins.{slot}]: record the slot, not one of its shadows"),
                ))
            }
            Some(record) => {
                let span = record.span();
                let record = record.into_inner();
                let mut options = RecordOptions::new(self.resolve(record.path));
                if let Some(mb) = record.part_mb {
                    options.part_bytes = mb.get().checked_mul(1 << 20).ok_or_else(|| {
                        self.invalid(span, format!("part_mb = {mb} is too large"))
                    })?;
                }
                if let Some(parts) = record.max_parts {
                    options.max_parts = parts.get();
                }
                Some(options)
            }
            None => None,
        };
        let probation_calls = match raw.probation_calls.take() {
            Some(calls) if shadow => {
                return Err(self.invalid(
                    calls.span(),
                    format!("[plugins.{slot}]: a shadow is not reloaded; `probation_calls` belongs to its slot"),
                ))
            }
            Some(calls) => calls.into_inner(),
            None => DEFAULT_PROBATION_CALLS,
        };
        let node_health = match raw.node_health.take() {
            Some(program) if shadow || kind != PluginKind::Select => {
                return Err(self.invalid(
                    program.span(),
                    format!(
                        "[plugins.{slot}]: `node_health` runs a program on the nodes; only a select slot (not a shadow) may be given one"
                    ),
                ))
            }
            Some(program) => Some(self.resolve(program.into_inner())),
            None => None,
        };
        let queue = match raw.queue.take() {
            Some(queue) if !shadow => {
                return Err(self.invalid(
                    queue.span(),
                    format!("[plugins.{slot}]: `queue` belongs to a [[plugins.{slot}.shadow]]"),
                ))
            }
            Some(queue) => queue.into_inner().get(),
            None => ShadowOptions::default().queue,
        };
        let limits = match raw.limits.take() {
            Some(overrides) => self.limits(overrides, defaults)?,
            None => defaults.clone(),
        };
        let accept_state_from = std::mem::take(&mut raw.accept_state_from)
            .into_iter()
            .map(|digest| {
                digest
                    .get_ref()
                    .parse::<ComponentDigest>()
                    .map_err(|e| self.invalid(digest.span(), format!("accept_state_from: {e}")))
            })
            .collect::<Result<_, _>>()?;
        let failure = self.failure(slot, kind, table_span, raw)?;
        let inner = match inner {
            Some(value) if kind != PluginKind::Select || shadow => {
                let what = if shadow {
                    "a shadow may not have"
                } else {
                    "only a select slot may have"
                };
                return Err(self.invalid(
                    value.span(),
                    format!(
                        "[plugins.{slot}]: `inner` names the inner plugin of a select wrapper, which {what}"
                    ),
                ));
            }
            Some(value) => {
                let name = format!("{slot}.inner");
                let (inner, _) = self.plugin(&name, kind, value, defaults, Role::Inner)?;
                Some(Box::new(inner))
            }
            None => None,
        };
        let config = PluginConfig {
            kind,
            source,
            settings: PluginSettings {
                limits,
                grants,
                failure,
                accept_state_from,
            },
            record,
            shadows,
            probation_calls,
            inner,
            node_health,
        };
        Ok((config, queue))
    }

    /// The failure policy of a plugin table (`table_span` locates it).
    fn failure(
        &self,
        slot: &str,
        kind: PluginKind,
        table_span: Range<usize>,
        raw: RawPlugin,
    ) -> Result<FailurePolicy, HostConfigError> {
        let (failure, failure_span) = match &raw.failure {
            Some(f) => (*f.get_ref(), f.span()),
            None => (FailureKind::Restart, table_span),
        };
        let max_restarts = raw
            .max_restarts
            .as_ref()
            .map_or(DEFAULT_MAX_RESTARTS, |m| *m.get_ref());
        if let Some(fallback) = &raw.fallback {
            if !matches!(failure, FailureKind::Fallback) {
                return Err(self.invalid(
                    fallback.span(),
                    "`fallback` needs `failure = \"fallback\"`".into(),
                ));
            }
        }
        match failure {
            FailureKind::Fail => match raw.max_restarts {
                Some(m) => Err(self.invalid(
                    m.span(),
                    "`max_restarts` needs `failure = \"restart\"` or `\"fallback\"`".into(),
                )),
                None => Ok(FailurePolicy::Fail),
            },
            FailureKind::Restart => Ok(FailurePolicy::Restart { max_restarts }),
            FailureKind::Fallback => {
                let plugin = raw.fallback.ok_or_else(|| {
                    self.invalid(
                        failure_span,
                        format!(
                            "[plugins.{slot}] has `failure = \"fallback\"` but no \
                             `fallback = \"{kind}/<name>\"` naming a bundled plugin"
                        ),
                    )
                })?;
                self.plugin_type(kind, &plugin, "fallback")?;
                Ok(FailurePolicy::Fallback {
                    plugin: plugin.into_inner(),
                    max_restarts,
                })
            }
        }
    }

    /// Checks that `value` is a plugin type of `kind` (`select/linear`).
    fn plugin_type(
        &self,
        kind: PluginKind,
        value: &Spanned<String>,
        key: &str,
    ) -> Result<(), HostConfigError> {
        if kind.accepts_type(value.get_ref()) {
            Ok(())
        } else {
            Err(self.invalid(
                value.span(),
                format!(
                    "{key} = \"{}\" is not a {kind} plugin type; expected `{kind}/<name>`, like `{}`",
                    value.get_ref(),
                    example_type(kind)
                ),
            ))
        }
    }
}

fn example_type(kind: PluginKind) -> &'static str {
    match kind {
        PluginKind::Select => "select/cons_tres",
        PluginKind::Gres => "gres/gpu",
        PluginKind::Priority => "priority/multifactor",
        PluginKind::Task => "task/affinity",
    }
}

/// A slot table whose entries are all tables (and none is called `limits`)
/// groups qualified slots.
fn is_group(value: &Spanned<DeValue<'_>>) -> bool {
    match value.get_ref() {
        DeValue::Table(table) => {
            !table.is_empty()
                && table
                    .iter()
                    .all(|(k, v)| k.get_ref() != "limits" && v.get_ref().is_table())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> HostConfig {
        parse_str(text, Path::new("/etc/slurm-wasm")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn invalid(text: &str) -> (usize, usize, String) {
        match parse_str(text, Path::new("/etc/slurm-wasm")) {
            Err(HostConfigError::Invalid {
                line,
                column,
                message,
                ..
            }) => (line, column, message),
            other => panic!("expected a rule violation, got {other:?}"),
        }
    }

    fn toml_error(text: &str) -> String {
        match parse_str(text, Path::new("/etc/slurm-wasm")) {
            Err(e @ HostConfigError::Toml { .. }) => e.to_string(),
            other => panic!("expected a TOML error, got {other:?}"),
        }
    }

    /// The example of the module documentation, taken from this file so the
    /// two cannot drift apart.
    fn documented_example() -> String {
        include_str!("host_config.rs")
            .lines()
            .map_while(|l| l.strip_prefix("//!"))
            .skip_while(|l| l.trim() != "```toml")
            .skip(1)
            .take_while(|l| l.trim() != "```")
            .map(|l| format!("{}\n", l.strip_prefix(' ').unwrap_or(l)))
            .collect()
    }

    #[test]
    fn empty_file_is_the_default() {
        let config = parse("");
        assert_eq!(config, HostConfig::default());
        assert_eq!(config.defaults, Limits::default());
        assert!(config.plugins.is_empty() && config.slurm_conf.is_none());
    }

    #[test]
    fn documented_example_parses() {
        let example = documented_example();
        assert!(example.contains("[plugins.select]"), "{example}");
        let config = parse(&example);
        assert_eq!(
            config.slurm_conf.as_deref(),
            Some(Path::new("/etc/slurm/slurm.conf"))
        );
        assert_eq!(
            config.cache_dir.as_deref(),
            Some(Path::new("/var/cache/slurm-wasm"))
        );
        assert_eq!(
            config.state_dir.as_deref(),
            Some(Path::new("/var/spool/slurm-wasm"))
        );
        assert_eq!(
            config.gres_conf.as_deref(),
            Some(Path::new("/etc/slurm/gres.conf"))
        );
        assert_eq!(config.gpu, GpuSource::Nvml);
        assert_eq!(
            config.defaults,
            Limits {
                fuel_per_call: 1_000_000_000,
                deadline: Duration::from_millis(2000),
                memory_bytes: 512 << 20,
                table_elements: 100_000,
                max_instances: 64,
                state_bytes: 64 << 20,
            }
        );
        let slots: Vec<&str> = config.plugins.keys().map(String::as_str).collect();
        assert_eq!(slots, ["gres.gpu", "priority", "select", "task.affinity"]);

        let select = &config.plugins["select"];
        assert_eq!(select.kind, PluginKind::Select);
        assert_eq!(
            select.source,
            PluginSource::File("/etc/slurm-wasm/plugins/select_cons_tres.wasm".into())
        );
        assert_eq!(
            select.settings.failure,
            FailurePolicy::Fallback {
                plugin: "select/linear".into(),
                max_restarts: 3
            }
        );
        assert_eq!(select.settings.limits.fuel_per_call, 5_000_000_000);
        assert_eq!(
            select.settings.limits.max_instances, 64,
            "other limits come from [defaults]"
        );

        let gpu = &config.plugins["gres.gpu"];
        assert_eq!(gpu.kind, PluginKind::Gres);
        assert_eq!(gpu.source, PluginSource::Bundled("gres/gpu".into()));
        assert_eq!(
            gpu.settings.grants.iter().collect::<Vec<_>>(),
            [
                Capability::Log,
                Capability::Clock,
                Capability::Gpu,
                Capability::GpuControl
            ]
        );
        assert_eq!(gpu.settings.failure, FailurePolicy::default());
        assert_eq!(gpu.settings.limits, config.defaults);

        let affinity = &config.plugins["task.affinity"];
        assert_eq!(affinity.kind, PluginKind::Task);
        assert_eq!(
            affinity.settings.failure,
            FailurePolicy::Restart { max_restarts: 3 }
        );
    }

    #[test]
    fn relative_paths_resolve_against_the_config_directory() {
        let config = parse(
            "slurm_conf = \"slurm.conf\"\ncache_dir = \"../cache\"\nstate_dir = \"/abs/state\"\n\
             [plugins.task]\nwasm = \"t.wasm\"\n",
        );
        assert_eq!(
            config.slurm_conf.unwrap(),
            Path::new("/etc/slurm-wasm/slurm.conf")
        );
        assert_eq!(
            config.cache_dir.unwrap(),
            Path::new("/etc/slurm-wasm/../cache")
        );
        assert_eq!(config.state_dir.unwrap(), Path::new("/abs/state"));
        assert_eq!(
            config.plugins["task"].source,
            PluginSource::File("/etc/slurm-wasm/t.wasm".into())
        );
    }

    #[test]
    fn load_names_the_file_and_uses_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.toml");
        std::fs::write(&path, "[plugins.select]\nwasm = \"s.wasm\"\n").unwrap();
        let config = load(&path).unwrap();
        assert_eq!(
            config.plugins["select"].source,
            PluginSource::File(dir.path().join("s.wasm"))
        );

        std::fs::write(&path, "[plugins.select]\nwasm = 3\n").unwrap();
        let message = load(&path).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!("{}: TOML parse error at line 2", path.display())),
            "{message}"
        );

        std::fs::write(&path, "\n[plugins.sched]\nwasm = \"x\"\n").unwrap();
        let message = load(&path).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!(
                "{}:2:10: unknown plugin slot `sched`",
                path.display()
            )),
            "{message}"
        );

        let missing = load(&dir.path().join("absent.toml")).unwrap_err();
        assert!(matches!(missing, HostConfigError::Io { .. }));
        assert!(missing
            .to_string()
            .contains("absent.toml: cannot read the host configuration"));
    }

    #[test]
    fn unknown_keys_are_refused_everywhere() {
        let (line, column, message) = invalid("cache_dir = \"c\"\nplugin_dir = \"x\"\n");
        assert_eq!((line, column), (2, 1));
        assert_eq!(
            message,
            "unknown key `plugin_dir`; expected one of slurm_conf, cache_dir, state_dir, gres_conf, gpu, defaults, plugins"
        );
        let e = toml_error("[defaults]\nfuel = 5\n");
        assert!(
            e.contains("line 2") && e.contains("unknown field `fuel`"),
            "{e}"
        );
        let e = toml_error("[plugins.select]\nwasm = \"s.wasm\"\ngrant = [\"gpu\"]\n");
        assert!(
            e.contains("line 3") && e.contains("unknown field `grant`"),
            "{e}"
        );
        let e = toml_error(
            "[plugins.select]\nwasm = \"s.wasm\"\n[plugins.select.limits]\nmemory = 1\n",
        );
        assert!(
            e.contains("line 4") && e.contains("unknown field `memory`"),
            "{e}"
        );
    }

    #[test]
    fn wrong_types_and_syntax_are_toml_errors() {
        let e = toml_error("[defaults]\ndeadline_ms = \"2s\"\n");
        assert!(
            e.starts_with("host configuration: TOML parse error at line 2"),
            "{e}"
        );
        let e = toml_error("[plugins.select\n");
        assert!(e.contains("line 1"), "{e}");
        let e = toml_error("\nstate_dir = 3\n");
        assert!(e.contains("line 2") && e.contains("invalid type"), "{e}");
        let e = parse_str("\n  colour = 1\n", Path::new("")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "host configuration, line 2, column 3: unknown key `colour`; \
             expected one of slurm_conf, cache_dir, state_dir, gres_conf, gpu, defaults, plugins"
        );
    }

    #[test]
    fn gpu_provider_choice() {
        assert_eq!(parse("").gpu, GpuSource::None);
        assert_eq!(parse("gpu = \"none\"\n").gpu, GpuSource::None);
        // A relative inventory path is relative to the configuration's directory.
        assert_eq!(
            parse("gpu = \"file:gpus.toml\"\n").gpu,
            GpuSource::File("/etc/slurm-wasm/gpus.toml".into())
        );
        assert_eq!(
            parse("gres_conf = \"gres.conf\"\n").gres_conf.as_deref(),
            Some(Path::new("/etc/slurm-wasm/gres.conf"))
        );
        assert_eq!(
            invalid("\ngpu = \"cuda\"\n"),
            (
                2,
                7,
                "unknown GPU provider `cuda`; expected none, nvml or file:<path>".into()
            )
        );
    }

    #[test]
    fn limits_must_be_positive_and_addressable() {
        for key in [
            "fuel_per_call",
            "deadline_ms",
            "memory_mb",
            "table_elements",
            "max_instances",
            "state_mb",
        ] {
            let e = toml_error(&format!("[defaults]\n{key} = 0\n"));
            assert!(e.contains("nonzero"), "{key}: {e}");
        }
        let e = toml_error("[defaults]\nmax_instances = -1\n");
        assert!(e.contains("line 2"), "{e}");
        let e = toml_error("defaults = 3\n");
        assert!(e.contains("expected a table of limits"), "{e}");
        let (line, _, message) = invalid("[defaults]\nmemory_mb = 9223372036854775807\n");
        assert_eq!(line, 2);
        assert_eq!(
            message,
            "memory_mb = 9223372036854775807 is more memory than this host can address"
        );
    }

    #[test]
    fn plugin_limits_override_defaults_key_by_key() {
        let config = parse(
            "[defaults]\ndeadline_ms = 500\nmax_instances = 8\n\
             [plugins.priority]\nbundled = \"priority/basic\"\n\
             [plugins.priority.limits]\nmax_instances = 2\nmemory_mb = 64\n",
        );
        let limits = &config.plugins["priority"].settings.limits;
        assert_eq!(limits.deadline, Duration::from_millis(500));
        assert_eq!(limits.max_instances, 2);
        assert_eq!(limits.memory_bytes, 64 << 20);
        assert_eq!(limits.fuel_per_call, Limits::default().fuel_per_call);
    }

    /// Issue 26, class 11: the bound on kept state is configurable per plugin.
    #[test]
    fn state_mb_bounds_kept_state() {
        let config = parse(
            "[defaults]\nstate_mb = 8\n[plugins.priority]\nbundled = \"priority/basic\"\n\
             [plugins.priority.limits]\nstate_mb = 2\n",
        );
        assert_eq!(config.defaults.state_bytes, 8 << 20);
        assert_eq!(
            config.plugins["priority"].settings.limits.state_bytes,
            2 << 20
        );
        let (line, _, message) = invalid("[defaults]\nstate_mb = 9223372036854775807\n");
        assert_eq!(
            (line, message.as_str()),
            (
                2,
                "state_mb = 9223372036854775807 is more memory than this host can address"
            )
        );
    }

    /// Issue 26, class 14: the digests of earlier builds whose state a
    /// plugin restores, checked when the file is read.
    #[test]
    fn accept_state_from_takes_sha256_digests() {
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let config = parse(&format!(
            "[plugins.priority]\nwasm = \"p.wasm\"\naccept_state_from = [\"{hex}\"]\n"
        ));
        assert_eq!(
            config.plugins["priority"].settings.accept_state_from,
            [hex.parse::<ComponentDigest>().unwrap()]
        );
        assert!(
            parse("[plugins.priority]\nwasm = \"p.wasm\"\n").plugins["priority"]
                .settings
                .accept_state_from
                .is_empty()
        );
        let (line, column, message) = invalid(&format!(
            "[plugins.priority]\nwasm = \"p.wasm\"\naccept_state_from = [\"{hex}\", \"sha256:12\"]\n"
        ));
        assert_eq!((line, column), (3, 90));
        assert_eq!(
            message,
            "accept_state_from: `sha256:12` is not a component digest: expected the 64 \
             hexadecimal digits of its SHA-256, as `sha256sum plugin.wasm` prints them"
        );
    }

    #[test]
    fn slots_and_qualifiers() {
        let config = parse(
            "[plugins.gres]\nbundled = \"gres/gpu\"\n\
             [plugins.\"gres.mps\"]\nbundled = \"gres/mps\"\n\
             [plugins.task.none]\nbundled = \"task/none\"\n\
             [plugins.task.cg]\nwasm = \"cg.wasm\"\n",
        );
        let slots: Vec<&str> = config.plugins.keys().map(String::as_str).collect();
        assert_eq!(slots, ["gres", "gres.mps", "task.cg", "task.none"]);

        let (line, column, message) = invalid("[plugins.sched]\nwasm = \"x\"\n");
        assert_eq!((line, column), (1, 10));
        assert!(
            message.starts_with("unknown plugin slot `sched`"),
            "{message}"
        );
        let (_, _, message) = invalid("[plugins.select.a]\nwasm = \"x\"\n");
        assert_eq!(
            message,
            "slot `select.a`: only gres and task slots take a qualifier; Slurm loads one select plugin"
        );
        let (_, _, message) = invalid("[plugins.\"gres.a b\"]\nwasm = \"x\"\n");
        assert_eq!(
            message,
            "slot `gres.a b`: a qualifier is made of letters, digits, `_` and `-`"
        );
        let (line, _, message) =
            invalid("[plugins.gres.gpu]\nwasm = \"a\"\n[plugins.\"gres.gpu\"]\nwasm = \"b\"\n");
        assert_eq!(message, "slot `gres.gpu` is configured twice");
        assert!(line == 1 || line == 3, "{line}");
        let (_, _, message) = invalid("plugins = { select = 3 }\n");
        assert_eq!(
            message,
            "`plugins.select` must be a table, like [plugins.select]"
        );
        let (_, _, message) = invalid("plugins = 3\n");
        assert_eq!(message, "`plugins` must be a table of plugin slots");
    }

    #[test]
    fn source_is_wasm_or_bundled_of_the_slot_kind() {
        let (line, _, message) = invalid("\n[plugins.select]\ngrants = []\n");
        assert_eq!(line, 2);
        assert_eq!(
            message,
            "[plugins.select] needs `wasm = \"path/to/plugin.wasm\"` or `bundled = \"select/<name>\"`"
        );
        let (line, column, message) =
            invalid("[plugins.select]\nwasm = \"a.wasm\"\nbundled = \"select/linear\"\n");
        assert_eq!((line, column), (3, 11));
        assert_eq!(
            message,
            "[plugins.select] gives both `wasm` and `bundled`; keep one"
        );
        let (_, _, message) = invalid("[plugins.select]\nbundled = \"task/none\"\n");
        assert_eq!(
            message,
            "bundled = \"task/none\" is not a select plugin type; expected `select/<name>`, like `select/cons_tres`"
        );
        let (_, _, message) = invalid("[plugins.priority]\nbundled = \"priority/\"\n");
        assert!(
            message.starts_with("bundled = \"priority/\" is not a priority plugin type"),
            "{message}"
        );
    }

    /// Issue 33: a select wrapper's inner plugin, nested, with its own
    /// limits and policy; refused where a wrapper cannot be.
    #[test]
    fn a_select_slot_may_name_a_node_health_program() {
        let config = parse(
            "[plugins.select]\nbundled = \"select/cray_aries\"\nnode_health = \"nhc/xtcleanup_after\"\n\
             [plugins.select.inner]\nbundled = \"select/linear\"\n",
        );
        let select = &config.plugins["select"];
        assert_eq!(
            select.node_health.as_deref(),
            Some(Path::new("/etc/slurm-wasm/nhc/xtcleanup_after"))
        );
        assert_eq!(select.inner.as_deref().expect("inner").node_health, None);
        for text in [
            "[plugins.priority]\nbundled = \"priority/basic\"\nnode_health = \"x\"\n",
            "[plugins.select]\nbundled = \"select/linear\"\n[[plugins.select.shadow]]\nbundled = \"select/linear\"\nnode_health = \"x\"\n",
        ] {
            let (_, _, message) = invalid(text);
            assert!(message.contains("only a select slot (not a shadow)"), "{message}");
        }
    }

    #[test]
    fn a_select_slot_names_its_wrapper_s_inner_plugins() {
        let config = parse(
            "[plugins.select]\nwasm = \"spare.wasm\"\nfailure = \"fail\"\n\
             [plugins.select.inner]\nwasm = \"filter.wasm\"\n\
             [plugins.select.inner.limits]\nfuel_per_call = 7\n\
             [plugins.select.inner.inner]\nbundled = \"select/cons_tres\"\nmax_restarts = 9\n",
        );
        let select = &config.plugins["select"];
        assert_eq!(select.settings.failure, FailurePolicy::Fail);
        let inner = select.inner.as_deref().expect("inner");
        assert_eq!(
            inner.source,
            PluginSource::File("/etc/slurm-wasm/filter.wasm".into())
        );
        assert_eq!(inner.settings.limits.fuel_per_call, 7);
        let innermost = inner.inner.as_deref().expect("inner of inner");
        assert_eq!(
            innermost.source,
            PluginSource::Bundled("select/cons_tres".into())
        );
        assert_eq!(
            innermost.settings.failure,
            FailurePolicy::Restart { max_restarts: 9 }
        );
        assert!(innermost.inner.is_none());

        let (line, _, message) = invalid(
            "[plugins.priority]\nbundled = \"priority/basic\"\n[plugins.priority.inner]\nbundled = \"priority/basic\"\n",
        );
        assert_eq!(line, 3);
        assert!(
            message.contains("which only a select slot may have"),
            "{message}"
        );
        let (line, _, message) = invalid(
            "[plugins.select]\nwasm = \"w.wasm\"\n[plugins.select.inner]\nbundled = \"select/linear\"\nprobation_calls = 2\n",
        );
        assert_eq!(line, 5);
        assert!(
            message.contains("`probation_calls` belongs there"),
            "{message}"
        );
        let (_, _, message) = invalid(
            "[plugins.select]\nwasm = \"w.wasm\"\n[plugins.select.inner]\nbundled = \"task/none\"\n",
        );
        assert!(message.contains("is not a select plugin type"), "{message}");
    }

    #[test]
    fn grants_are_limited_to_the_slot_world() {
        let config = parse(
            "[plugins.task]\nbundled = \"task/affinity\"\ngrants = [\"cpuset\", \"log\", \"clock\", \"cpuset\"]\n",
        );
        assert_eq!(
            config.plugins["task"].settings.grants,
            Grants::none().with(Capability::Cpuset)
        );
        let bare = parse("[plugins.priority]\nbundled = \"priority/basic\"\n");
        assert_eq!(bare.plugins["priority"].settings.grants, Grants::none());

        let (line, column, message) = invalid(
            "[plugins.task]\nbundled = \"task/affinity\"\ngrants = [\"topology\", \"gpu\"]\n",
        );
        assert_eq!((line, column), (3, 23));
        assert_eq!(
            message,
            "capability `gpu` cannot be granted to a task plugin; its world imports topology and cpuset"
        );
        let (_, _, message) =
            invalid("[plugins.select]\nbundled = \"select/linear\"\ngrants = [\"topology\"]\n");
        assert_eq!(
            message,
            "capability `topology` cannot be granted to a select plugin; its world imports nothing beyond log and clock"
        );
        let e = toml_error("[plugins.gres]\nbundled = \"gres/gpu\"\ngrants = [\"nvml\"]\n");
        assert!(
            e.contains("line 3") && e.contains("unknown capability `nvml`"),
            "{e}"
        );
    }

    /// Issue 32: a slot's recording and shadows, and what is refused.
    #[test]
    fn recordings_and_shadows() {
        let config = parse(
            "[plugins.select]\nbundled = \"select/cons_tres\"\nprobation_calls = 7\n\
             [plugins.select.record]\npath = \"calls/select.swrec\"\npart_mb = 2\n\
             [[plugins.select.shadow]]\nwasm = \"mine.wasm\"\nqueue = 10\nfailure = \"fail\"\n\
             [[plugins.select.shadow]]\nbundled = \"select/linear\"\n",
        );
        let select = &config.plugins["select"];
        assert_eq!(
            select.record,
            Some(RecordOptions {
                path: "/etc/slurm-wasm/calls/select.swrec".into(),
                part_bytes: 2 << 20,
                max_parts: 16,
            })
        );
        assert_eq!(select.probation_calls, 7);
        assert_eq!(
            parse("[plugins.task]\nbundled = \"task/none\"\n").plugins["task"].probation_calls,
            DEFAULT_PROBATION_CALLS
        );
        assert_eq!(select.shadows.len(), 2);
        assert_eq!(
            select.shadows[0].source,
            PluginSource::File("/etc/slurm-wasm/mine.wasm".into())
        );
        assert_eq!(select.shadows[0].options.queue, 10);
        assert_eq!(select.shadows[0].settings.failure, FailurePolicy::Fail);
        assert_eq!(select.shadows[1].options, ShadowOptions::default());

        let (line, _, message) = invalid(
            "[plugins.task]\nbundled = \"task/affinity\"\n\
             [[plugins.task.shadow]]\nbundled = \"task/none\"\ngrants = [\"cpuset\"]\n",
        );
        assert_eq!(line, 5);
        assert!(
            message.contains("a shadow may not be granted `cpuset`"),
            "{message}"
        );
        let (_, _, message) = invalid(
            "[plugins.select]\nbundled = \"select/linear\"\n\
             [[plugins.select.shadow]]\nbundled = \"select/linear\"\nprobation_calls = 3\n",
        );
        assert!(message.contains("a shadow is not reloaded"), "{message}");
        let (_, _, message) = invalid("[plugins.select]\nbundled = \"select/linear\"\nqueue = 3\n");
        assert!(
            message.contains("`queue` belongs to a [[plugins.select.shadow]]"),
            "{message}"
        );
        let (_, _, message) = invalid(
            "[plugins.select]\nbundled = \"select/linear\"\n\
             [[plugins.select.shadow]]\nbundled = \"select/linear\"\n\
             [plugins.select.shadow.record]\npath = \"x\"\n",
        );
        assert!(
            message.contains("record the slot, not one of its shadows"),
            "{message}"
        );
        let (_, _, message) =
            invalid("[plugins.select]\nbundled = \"select/linear\"\nshadow = 3\n");
        assert!(message.contains("is a list of tables"), "{message}");
        let e = toml_error(
            "[plugins.select]\nbundled = \"select/linear\"\n[plugins.select.record]\npath = \"x\"\nsize = 1\n",
        );
        assert!(e.contains("size"), "{e}");
    }

    #[test]
    fn failure_policies() {
        let base = "[plugins.select]\nbundled = \"select/cons_tres\"\n";
        let policy = |extra: &str| {
            parse(&format!("{base}{extra}")).plugins["select"]
                .settings
                .failure
                .clone()
        };
        assert_eq!(policy(""), FailurePolicy::default());
        assert_eq!(
            policy("max_restarts = 5\n"),
            FailurePolicy::Restart { max_restarts: 5 }
        );
        assert_eq!(policy("failure = \"fail\"\n"), FailurePolicy::Fail);
        assert_eq!(
            policy("failure = \"restart\"\n"),
            FailurePolicy::Restart {
                max_restarts: DEFAULT_MAX_RESTARTS
            }
        );
        assert_eq!(
            policy("failure = \"restart\"\nmax_restarts = 0\n"),
            FailurePolicy::Restart { max_restarts: 0 }
        );
        assert_eq!(
            policy("failure = \"fallback\"\nfallback = \"select/linear\"\nmax_restarts = 1\n"),
            FailurePolicy::Fallback {
                plugin: "select/linear".into(),
                max_restarts: 1
            }
        );

        let rule = |extra: &str| invalid(&format!("{base}{extra}"));
        let (line, _, message) = rule("failure = \"fallback\"\n");
        assert_eq!(line, 3);
        assert_eq!(
            message,
            "[plugins.select] has `failure = \"fallback\"` but no `fallback = \"select/<name>\"` naming a bundled plugin"
        );
        let (_, _, message) = rule("failure = \"fallback\"\nfallback = \"task/none\"\n");
        assert!(
            message.starts_with("fallback = \"task/none\" is not a select plugin type"),
            "{message}"
        );
        let (line, _, message) = rule("failure = \"restart\"\nfallback = \"select/linear\"\n");
        assert_eq!(
            (line, message.as_str()),
            (4, "`fallback` needs `failure = \"fallback\"`")
        );
        let (_, _, message) = rule("fallback = \"select/linear\"\n");
        assert_eq!(message, "`fallback` needs `failure = \"fallback\"`");
        let (line, _, message) = rule("failure = \"fail\"\nmax_restarts = 2\n");
        assert_eq!(
            (line, message.as_str()),
            (
                4,
                "`max_restarts` needs `failure = \"restart\"` or `\"fallback\"`"
            )
        );
        let e = toml_error(&format!("{base}failure = \"retry\"\n"));
        assert!(e.contains("unknown variant `retry`"), "{e}");
    }
}
