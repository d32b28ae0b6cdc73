//! A policy stack: one select plugin and one priority plugin. The engine
//! drives the select plugin through slurmctld's model
//! ([`slurm::controller`], whose [`Select`] the host's [`SelectPlugin`]
//! implements) and the priority plugin through [`Prioritizer`]
//! ([`WasmPrioritizer`]); the native builds of the bundled plugins
//! ([`crate::native`]) implement both, to compare the two.

use std::path::PathBuf;
use std::sync::Arc;

use slurm::controller::Select;
use slurm::setup::records::Cluster;
use slurm::setup::CRAY_ARIES;
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::kinds::priority::AssociationUpdate;
use slurm_wasm_host::kinds::select::SelectConfig;
use slurm_wasm_host::recording::RecordOptions;
use slurm_wasm_host::types::{Job, SelectTypeParams};
use slurm_wasm_host::{
    CallError, Host, HostOptions, PluginKind, PluginSettings, PluginSource, PriorityPlugin,
    SelectPlugin, Services,
};

#[cfg(feature = "native")]
use crate::native;

/// Job priority as the engine needs it.
pub trait Prioritizer: Send {
    /// Priority of a newly submitted job (`set`, keeping `lowest_prio`).
    fn submit(&mut self, job: &Job) -> Result<u32, CallError>;
    /// One PriorityCalcPeriod pass: new priorities for pending jobs named
    /// by id (the implementation keeps each job as given to `submit`).
    fn recalculate(
        &mut self,
        running: &[Job],
        pending: &[u32],
    ) -> Result<Vec<(u32, u32)>, CallError>;
    /// The job ended (`job-end`: charge its usage).
    fn end(&mut self, job: &Job) -> Result<(), CallError>;
    /// Changes to the association tree (`update-associations`); the engine
    /// gives the whole simulated tree once, before the first job, when the
    /// cluster runs with accounting ([`super::accounting`]).
    fn associations(&mut self, updates: &[AssociationUpdate]) -> Result<(), CallError>;
    /// Fuel used so far, for a component (none for a native build).
    fn fuel_used(&self) -> Option<u64> {
        None
    }
}

/// A loaded priority plugin as a [`Prioritizer`].
pub struct WasmPrioritizer {
    pub plugin: PriorityPlugin,
    /// slurmctld's `lowest_prio`, which priority/basic counts down from.
    pub lowest_prio: u32,
}

impl Prioritizer for WasmPrioritizer {
    fn submit(&mut self, job: &Job) -> Result<u32, CallError> {
        self.plugin.assign(&mut self.lowest_prio, job)
    }

    fn recalculate(
        &mut self,
        running: &[Job],
        pending: &[u32],
    ) -> Result<Vec<(u32, u32)>, CallError> {
        self.plugin.calculate(running, pending)
    }

    fn end(&mut self, job: &Job) -> Result<(), CallError> {
        self.plugin.job_end(job)
    }

    fn associations(&mut self, updates: &[AssociationUpdate]) -> Result<(), CallError> {
        self.plugin.update_associations(updates)
    }

    fn fuel_used(&self) -> Option<u64> {
        Some(self.plugin.fuel_used())
    }
}

/// How a stack's plugins run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Build {
    /// As components loaded through the host (the normal case).
    #[default]
    Component,
    /// As the native builds of the bundled plugins ([`crate::native`]), for
    /// the wasm/native ratio of the benchmarks.
    Native,
}

/// One stack as named on the command line: `select/linear,priority/basic`,
/// either part a bundled type or a path to a `.wasm` component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySpec {
    /// The text as given: what errors quote, and what passes the stack on
    /// (`simulate --sweep`'s job script).
    pub text: String,
    /// The stack's label in reports: the text as given, each `.wasm` path
    /// shortened to its file name (`select/linear,my_priority.wasm`).
    pub label: String,
    pub select: PluginSource,
    /// The select plugin's inner plugins when it is a wrapper, outermost
    /// first (`wrapper.wasm+select/cons_tres`): empty for a plain one.
    pub select_inner: Vec<PluginSource>,
    pub priority: PluginSource,
    /// Components (what [`PolicySpec::parse`] gives) or native builds.
    pub build: Build,
    /// Where the components are kept compiled (none, what
    /// [`PolicySpec::parse`] gives: compiled in memory at each load).
    pub cache_dir: Option<PathBuf>,
    /// Record every call of both plugins (`slurm_wasm_host::recording`):
    /// to this path with `.select.swrec` and `.priority.swrec` added (none,
    /// what [`PolicySpec::parse`] gives). Components only.
    pub record: Option<PathBuf>,
}

/// Why a policy could not be understood or loaded.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("--policy {spec}: {reason}")]
    Spec { spec: String, reason: String },
    #[error("--policy {spec}: {source}")]
    Load {
        spec: String,
        #[source]
        source: anyhow::Error,
    },
}

/// `text` with each `.wasm` path cut to its file name, so that report
/// tables and plots name a stack by its plugins, not by where they lie.
fn short_label(text: &str) -> String {
    if !text.contains(".wasm") {
        return text.to_owned();
    }
    let shorten = |piece: &str| {
        let (prefix, path) = match piece.split_once('=') {
            Some((slot, path)) => (format!("{slot}="), path),
            None => (String::new(), piece),
        };
        if !path.ends_with(".wasm") {
            return piece.to_owned();
        }
        let name = std::path::Path::new(path)
            .file_name()
            .map_or(path.into(), |n| n.to_string_lossy());
        format!("{prefix}{name}")
    };
    text.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|part| {
            part.split('+')
                .map(str::trim)
                .map(shorten)
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join(",")
}

impl PolicySpec {
    /// Parses `select/X,priority/Y` (order free). A part naming a bundled
    /// type is used as such; a part ending in `.wasm` is a file whose slot
    /// fills the first missing slot,
    /// select first (its kind is checked when it is loaded); `select=FILE` and `priority=FILE`
    /// name the slot explicitly.
    ///
    /// # Errors
    ///
    /// [`PolicyError::Spec`] when a part is neither a `select/`/`priority/`
    /// type nor a `.wasm` path, or a slot is missing or given twice.
    pub fn parse(text: &str) -> Result<PolicySpec, PolicyError> {
        let fail = |reason: String| PolicyError::Spec {
            spec: text.to_owned(),
            reason,
        };
        let mut select = None;
        let mut priority = None;
        let mut files = Vec::new();
        let mut select_inner = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            // `wrapper+inner[+inner...]`: a select wrapper over the rest.
            let mut layers = part.split('+').map(str::trim);
            let part = layers.next().unwrap_or_default();
            let inner: Vec<PluginSource> = layers
                .map(|layer| {
                    select_layer(layer).ok_or_else(|| fail(format!(
                        "`{}` is neither a select/ plugin type nor a .wasm file (the inner plugins of a select wrapper, after `+`)",
                        layer.strip_prefix("select=").unwrap_or(layer)
                    )))
                })
                .collect::<Result<_, _>>()?;
            let wrapper = !inner.is_empty();
            if wrapper {
                if !select_inner.is_empty() {
                    return Err(fail("two select stacks".into()));
                }
                select_inner = inner;
            }
            let (slot, source) = if wrapper {
                // The wrapper itself: any path names its file.
                let source = select_layer(part).unwrap_or_else(|| {
                    PluginSource::File(PathBuf::from(part.strip_prefix("select=").unwrap_or(part)))
                });
                (Some(PluginKind::Select), source)
            } else if let Some(path) = part.strip_prefix("select=") {
                (
                    Some(PluginKind::Select),
                    PluginSource::File(PathBuf::from(path)),
                )
            } else if let Some(path) = part.strip_prefix("priority=") {
                (
                    Some(PluginKind::Priority),
                    PluginSource::File(PathBuf::from(path)),
                )
            } else if part.ends_with(".wasm") {
                (None, PluginSource::File(PathBuf::from(part)))
            } else if part.starts_with("select/") {
                (
                    Some(PluginKind::Select),
                    PluginSource::Bundled(part.to_owned()),
                )
            } else if part.starts_with("priority/") {
                (
                    Some(PluginKind::Priority),
                    PluginSource::Bundled(part.to_owned()),
                )
            } else {
                return Err(fail(format!(
                    "`{part}` is neither a select/ or priority/ plugin type nor a .wasm file"
                )));
            };
            match slot {
                Some(PluginKind::Select) if select.is_none() => select = Some(source),
                Some(PluginKind::Priority) if priority.is_none() => priority = Some(source),
                Some(slot) => return Err(fail(format!("two {slot} plugins"))),
                None => files.push(source),
            }
        }
        // Files whose slot is not named fill the missing slots in order,
        // select first; their kind is checked when they are loaded.
        for source in files {
            if select.is_none() {
                select = Some(source);
            } else if priority.is_none() {
                priority = Some(source);
            } else {
                return Err(fail("more than one select and one priority plugin".into()));
            }
        }
        // Slurm's layering plugin alone runs over select/linear
        // (`other_select_init` without `OTHER_CONS_RES`/`OTHER_CONS_TRES`);
        // `select/cray_aries+select/cons_tres` names the other stack.
        if select == Some(PluginSource::Bundled(CRAY_ARIES.into())) && select_inner.is_empty() {
            select_inner.push(PluginSource::Bundled(
                slurm::setup::layered_select_inner(SelectTypeParams::empty()).into(),
            ));
        }
        Ok(PolicySpec {
            build: Build::Component,
            text: text.to_owned(),
            cache_dir: None,
            record: None,
            label: short_label(text),
            select_inner,
            select: select.ok_or_else(|| {
                fail("no select plugin (select/linear, select/cons_tres or a .wasm)".into())
            })?,
            priority: priority.ok_or_else(|| {
                fail("no priority plugin (priority/basic, priority/multifactor or a .wasm)".into())
            })?,
        })
    }

    /// The select plugin and its inner plugins, outermost first.
    pub fn select_layers(&self) -> Vec<PluginSource> {
        std::iter::once(self.select.clone())
            .chain(self.select_inner.iter().cloned())
            .collect()
    }

    /// A select stack's layers each found, and loadable together in a
    /// throwaway host; the priority plugin as [`PolicySpec::check_available`].
    fn check_stack(&self) -> Result<(), PolicyError> {
        let fail = |reason: String| PolicyError::Spec {
            spec: self.text.clone(),
            reason,
        };
        let layers = self.select_layers();
        if let Some(reason) = layers.iter().find_map(missing) {
            return Err(fail(reason));
        }
        let host = Host::new(HostOptions {
            cache_dir: self.cache_dir.clone(),
            ..slurm_wasm_bundled::host_options()
        })
        .map_err(|e| fail(format!("{e:#}")))?;
        SelectPlugin::load_stack(&host, &layers, PluginSettings::default())
            .map_err(|e| fail(e.to_string()))?;
        match component_unusable(&self.priority, PluginKind::Priority, self.cache_dir.clone()) {
            Some(reason) => Err(fail(reason)),
            None => Ok(()),
        }
    }

    /// The same stack run by the native builds of its plugins.
    pub fn native(self) -> PolicySpec {
        PolicySpec {
            build: Build::Native,
            ..self
        }
    }

    /// Whether both plugins can be found: bundled types in this build, or
    /// existing files; for a native stack, bundled types with a native
    /// build.
    ///
    /// # Errors
    ///
    /// [`PolicyError::Spec`] naming the missing plugin and what is bundled
    /// (or built natively), or the file that cannot run natively.
    pub fn check_available(&self) -> Result<(), PolicyError> {
        if self.build == Build::Native && !self.select_inner.is_empty() {
            return Err(PolicyError::Spec {
                spec: self.text.clone(),
                reason: "a select wrapper has no native build (run it without --native)".into(),
            });
        }
        if self.build == Build::Component && !self.select_inner.is_empty() {
            return self.check_stack();
        }
        for (source, slot) in [
            (&self.select, PluginKind::Select),
            (&self.priority, PluginKind::Priority),
        ] {
            let missing = match (self.build, source) {
                (Build::Native, source) => native_type(source).err(),
                (Build::Component, source) => {
                    component_unusable(source, slot, self.cache_dir.clone())
                }
            };
            if let Some(reason) = missing {
                return Err(PolicyError::Spec {
                    spec: self.text.clone(),
                    reason,
                });
            }
        }
        Ok(())
    }
}

/// Why a component plugin cannot be found or loaded into `slot`, if it
/// cannot: a file is loaded once in a throwaway host, so an unreadable or
/// malformed file, or a plugin of another kind, is refused before any
/// replay starts.
/// A layer of a select stack: `select=FILE`, `FILE.wasm` or a bundled
/// `select/` type; `None` for anything else.
fn select_layer(text: &str) -> Option<PluginSource> {
    let (named, path) = match text.strip_prefix("select=") {
        Some(path) => (true, path),
        None => (false, text),
    };
    if path.starts_with("select/") {
        Some(PluginSource::Bundled(path.to_owned()))
    } else if named || path.ends_with(".wasm") {
        Some(PluginSource::File(PathBuf::from(path)))
    } else {
        None
    }
}

/// Why `source` cannot be found: a bundled type this build lacks, or a
/// file that is not there.
fn missing(source: &PluginSource) -> Option<String> {
    match source {
        PluginSource::Bundled(name) if slurm_wasm_bundled::find(name).is_none() => Some(format!(
            "no bundled plugin {name} in this build (bundled: {})",
            slurm_wasm_bundled::names()
        )),
        PluginSource::File(path) if !path.is_file() => {
            Some(format!("{}: no such file", path.display()))
        }
        _ => None,
    }
}

fn component_unusable(
    source: &PluginSource,
    slot: PluginKind,
    cache_dir: Option<PathBuf>,
) -> Option<String> {
    if let Some(reason) = missing(source) {
        return Some(reason);
    }
    match source {
        PluginSource::File(_) => {
            let host = match Host::new(HostOptions {
                cache_dir,
                ..slurm_wasm_bundled::host_options()
            }) {
                Ok(host) => host,
                Err(e) => return Some(format!("{e:#}")),
            };
            let settings = PluginSettings::default();
            let loaded = match slot {
                PluginKind::Select => SelectPlugin::load(&host, source, settings).map(drop),
                _ => PriorityPlugin::load(&host, source, settings).map(drop),
            };
            loaded.err().map(|e| e.to_string())
        }
        _ => None,
    }
}

/// Without the `native` feature: why no stack runs natively.
#[cfg(not(feature = "native"))]
const NO_NATIVE: &str = "this build has no native plugins: build it with `--features native` \
                         (cargo run --release --features native -- simulate --native ...)";

/// The plugin type of `source` when it has a native build.
#[cfg(not(feature = "native"))]
fn native_type(_source: &PluginSource) -> Result<&str, String> {
    Err(NO_NATIVE.to_owned())
}

/// The plugin type of `source` when it has a native build.
#[cfg(feature = "native")]
fn native_type(source: &PluginSource) -> Result<&str, String> {
    match source {
        PluginSource::Bundled(name) if native::NATIVE_PLUGINS.contains(&name.as_str()) => Ok(name),
        PluginSource::Bundled(name) => Err(format!(
            "no native build of {name} (native builds: {})",
            native::NATIVE_PLUGINS.join(", ")
        )),
        PluginSource::File(path) => Err(format!(
            "{}: a plugin file has no native build (only bundled plugins run natively: {})",
            path.display(),
            native::NATIVE_PLUGINS.join(", ")
        )),
        PluginSource::Bytes { name, .. } => Err(format!(
            "{name}: component bytes have no native build (only bundled plugins run natively: {})",
            native::NATIVE_PLUGINS.join(", ")
        )),
    }
}

/// A loaded, initialised stack with its own host and virtual clock.
pub struct LoadedStack {
    pub clock: Arc<VirtualClock>,
    /// The select plugin, initialised; the engine's controller gives it
    /// the node table (`node-init`).
    pub select: Box<dyn Select + Send>,
    pub prioritizer: Box<dyn Prioritizer>,
    /// Keeps the engine (and its epoch ticker) alive while the plugins
    /// run; none for native builds.
    _host: Option<Host>,
}

impl LoadedStack {
    /// Loads `spec` as its [`Build`] says: [`LoadedStack::load`] or
    /// [`LoadedStack::load_native`].
    ///
    /// # Errors
    ///
    /// As the loader used.
    pub fn open(
        spec: &PolicySpec,
        cluster: &Cluster,
        start: i64,
        seed: u64,
    ) -> Result<LoadedStack, PolicyError> {
        match spec.build {
            Build::Component => LoadedStack::load(spec, cluster, start, seed),
            Build::Native => LoadedStack::load_native(spec, cluster, start),
        }
    }

    /// The native builds of `spec`'s plugins ([`crate::native`]) with a
    /// [`VirtualClock`] at `start`, initialised as [`LoadedStack::load`]
    /// initialises components: the same configurations, in the same order
    /// (select `init`, priority `init`; `node-init` when the engine starts).
    /// No seed: the bundled
    /// plugins use no random source.
    ///
    /// # Errors
    ///
    /// [`PolicyError::Spec`] when a plugin has no native build (a `.wasm`
    /// file, named, or a type only bundled as a component);
    /// [`PolicyError::Load`] when an `init` fails.
    #[cfg(feature = "native")]
    pub fn load_native(
        spec: &PolicySpec,
        cluster: &Cluster,
        start: i64,
    ) -> Result<LoadedStack, PolicyError> {
        let fail = |reason: String| PolicyError::Spec {
            spec: spec.text.clone(),
            reason,
        };
        let wrap = |e: anyhow::Error| PolicyError::Load {
            spec: spec.text.clone(),
            source: e,
        };
        let select = native_type(&spec.select).map_err(fail)?;
        let priority = native_type(&spec.priority).map_err(fail)?;
        let clock = Arc::new(VirtualClock::new(start));
        let select = native::NativeSelect::new(
            select,
            &select_config(std::slice::from_ref(&spec.select), cluster),
            clock.clone(),
        )
        .map_err(|e| wrap(e.into()))?;
        let prioritizer =
            native::NativePrioritizer::new(priority, &cluster.priority_config(), clock.clone())
                .map_err(|e| wrap(e.into()))?;
        Ok(LoadedStack {
            clock,
            select: Box::new(select),
            prioritizer: Box::new(prioritizer),
            _host: None,
        })
    }

    /// Without the `native` feature this build has no native plugins:
    /// always [`PolicyError::Spec`], saying how to build them in.
    #[cfg(not(feature = "native"))]
    pub fn load_native(
        spec: &PolicySpec,
        _cluster: &Cluster,
        _start: i64,
    ) -> Result<LoadedStack, PolicyError> {
        Err(PolicyError::Spec {
            spec: spec.text.clone(),
            reason: NO_NATIVE.to_owned(),
        })
    }

    /// Builds a host whose clock is a [`VirtualClock`] at `start`, loads
    /// both plugins of `spec` with default settings, and runs their `init`
    /// with `cluster`'s records. `seed` seeds the random source WASI gives
    /// the plugins, so runs repeat.
    ///
    /// # Errors
    ///
    /// [`PolicyError::Load`] when a plugin cannot be loaded, is not of its
    /// slot's kind, or its `init` fails.
    pub fn load(
        spec: &PolicySpec,
        cluster: &Cluster,
        start: i64,
        seed: u64,
    ) -> Result<LoadedStack, PolicyError> {
        let wrap = |e: anyhow::Error| PolicyError::Load {
            spec: spec.text.clone(),
            source: e,
        };
        let clock = Arc::new(VirtualClock::new(start));
        let host = Host::new(HostOptions {
            services: Services {
                clock: clock.clone(),
                ..Services::default()
            },
            random_seed: Some(seed),
            cache_dir: spec.cache_dir.clone(),
            ..slurm_wasm_bundled::host_options()
        })
        .map_err(wrap)?;
        let recording = |kind: &str| {
            spec.record.as_ref().map(|prefix| {
                let mut path = prefix.clone().into_os_string();
                path.push(format!(".{kind}.swrec"));
                RecordOptions::new(path)
            })
        };
        let select =
            SelectPlugin::load_stack(&host, &spec.select_layers(), PluginSettings::default())
                .map_err(|e| wrap(e.into()))?;
        if let Some(options) = recording("select") {
            select.record(options).map_err(|e| wrap(e.into()))?;
        }
        select
            .init(&select_config(&spec.select_layers(), cluster))
            .map_err(|e| wrap(e.into()))?;
        let priority = PriorityPlugin::load(&host, &spec.priority, PluginSettings::default())
            .map_err(|e| wrap(e.into()))?;
        if let Some(options) = recording("priority") {
            priority.record(options).map_err(|e| wrap(e.into()))?;
        }
        priority
            .init(&cluster.priority_config())
            .map_err(|e| wrap(e.into()))?;
        Ok(LoadedStack {
            clock,
            select: Box::new(select),
            prioritizer: Box::new(WasmPrioritizer {
                plugin: priority,
                // slurmctld starts `lowest_prio` at TOP_PRIORITY (0xffff0000).
                lowest_prio: 0xffff_0000,
            }),
            _host: Some(host),
        })
    }
}

/// The `init` configuration of the select stack `layers` (outermost
/// first) on `cluster`: the cluster's, with [`select_type_parameters_for`]
/// the innermost plugin, and `OTHER_CONS_TRES` when select/cray_aries runs
/// over the bundled select/cons_tres (as a site running that stack writes
/// it: `other_select_init` reads it to choose the inner plugin).
fn select_config(layers: &[PluginSource], cluster: &Cluster) -> SelectConfig {
    let mut config = cluster.select_config();
    let Some(innermost) = layers.last() else {
        return config;
    };
    let mut params = select_type_parameters_for(innermost, config.cluster.select_type_parameters);
    let cray = layers.contains(&PluginSource::Bundled(CRAY_ARIES.into()));
    if cray && innermost == &PluginSource::Bundled("select/cons_tres".into()) {
        params |= SelectTypeParams::OTHER_CONS_TRES;
    }
    config.cluster.select_type_parameters = params;
    config
}

/// `SelectTypeParameters` as a site switching to the bundled plugin of
/// `select` would have to write them, so one `slurm.conf` serves every
/// stack: `select/linear` allocates whole nodes and refuses
/// `CR_CPU`/`CR_Core`/`CR_Socket` (their `_Memory` forms become
/// `CR_Memory`); `select/cons_tres` needs one of them (`CR_Memory` becomes
/// `CR_Core_Memory`, nothing becomes `CR_Core`). Other parameters, and the
/// parameters of plugins given as files, are kept as written.
pub fn select_type_parameters_for(
    select: &PluginSource,
    params: SelectTypeParams,
) -> SelectTypeParams {
    let units = SelectTypeParams::CPU | SelectTypeParams::CORE | SelectTypeParams::SOCKET;
    match select {
        PluginSource::Bundled(name) if name == "select/linear" => params & !units,
        PluginSource::Bundled(name) if name == "select/cons_tres" && !params.intersects(units) => {
            params | SelectTypeParams::CORE
        }
        _ => params,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn select_type_parameters_follow_the_plugin() {
        // select/linear refuses core/CPU/socket units (select_g_init,
        // common/select.c); cons_tres needs one of them (select_p_node_init,
        // cons_common.c).
        type F = SelectTypeParams;
        let linear = PluginSource::Bundled("select/linear".into());
        let cons = PluginSource::Bundled("select/cons_tres".into());
        assert_eq!(
            select_type_parameters_for(&linear, F::CORE | F::MEMORY | F::ONE_TASK_PER_CORE),
            F::MEMORY | F::ONE_TASK_PER_CORE
        );
        assert_eq!(select_type_parameters_for(&linear, F::CORE), F::empty());
        assert_eq!(
            select_type_parameters_for(&cons, F::MEMORY),
            F::CORE | F::MEMORY
        );
        assert_eq!(select_type_parameters_for(&cons, F::empty()), F::CORE);
        assert_eq!(select_type_parameters_for(&cons, F::CPU), F::CPU);
        let file = PluginSource::File("x.wasm".into());
        assert_eq!(select_type_parameters_for(&file, F::CORE), F::CORE);
    }

    use super::*;

    #[test]
    fn a_stack_of_files_is_labelled_by_their_names() {
        let spec = PolicySpec::parse("select/linear, priority=/opt/plugins/my_prio.wasm").unwrap();
        assert_eq!(spec.label, "select/linear,priority=my_prio.wasm");
        assert_eq!(
            spec.text,
            "select/linear, priority=/opt/plugins/my_prio.wasm"
        );
        let spec = PolicySpec::parse("/a/sel.wasm,/b/prio.wasm").unwrap();
        assert_eq!(spec.label, "sel.wasm,prio.wasm");
    }

    #[test]
    fn parses_bundled_pairs_in_either_order() {
        let spec = PolicySpec::parse("priority/basic, select/linear").unwrap();
        assert_eq!(spec.select, PluginSource::Bundled("select/linear".into()));
        assert_eq!(
            spec.priority,
            PluginSource::Bundled("priority/basic".into())
        );
        assert_eq!(spec.label, "priority/basic, select/linear");
        assert_eq!(spec.text, "priority/basic, select/linear");
    }

    /// select/cray_aries alone runs over select/linear, as
    /// `other_select_init` chooses without an other-plugin flag.
    #[test]
    fn select_cray_aries_alone_runs_over_linear() {
        let spec = PolicySpec::parse("select/cray_aries,priority/basic").unwrap();
        assert_eq!(
            spec.select_layers(),
            [
                PluginSource::Bundled("select/cray_aries".into()),
                PluginSource::Bundled("select/linear".into())
            ]
        );
        let spec = PolicySpec::parse("select/cray_aries+select/cons_tres,priority/basic").unwrap();
        assert_eq!(
            spec.select_inner,
            [PluginSource::Bundled("select/cons_tres".into())]
        );
    }

    #[test]
    fn a_select_wrapper_names_its_inner_plugins_after_plus() {
        let spec = PolicySpec::parse("select=spare.wasm+select/cons_tres,priority/basic").unwrap();
        assert_eq!(spec.select, PluginSource::File("spare.wasm".into()));
        assert_eq!(
            spec.select_inner,
            [PluginSource::Bundled("select/cons_tres".into())]
        );
        assert_eq!(
            spec.label,
            "select=spare.wasm+select/cons_tres,priority/basic"
        );
        let spec = PolicySpec::parse("priority/basic,a.wasm+b.wasm+select/linear").unwrap();
        assert_eq!(spec.select, PluginSource::File("a.wasm".into()));
        assert_eq!(
            spec.select_layers(),
            [
                PluginSource::File("a.wasm".into()),
                PluginSource::File("b.wasm".into()),
                PluginSource::Bundled("select/linear".into())
            ]
        );
        let e = PolicySpec::parse("a.wasm+priority/basic")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`priority/basic` is neither a select/ plugin type"),
            "{e}"
        );
        let e = PolicySpec::parse("select/linear,a.wasm+select/linear,priority/basic")
            .unwrap_err()
            .to_string();
        assert!(e.contains("two select plugins"), "{e}");
    }

    #[test]
    fn files_fill_missing_slots() {
        let spec = PolicySpec::parse("mine.wasm,priority/multifactor").unwrap();
        assert_eq!(spec.select, PluginSource::File("mine.wasm".into()));
        let spec = PolicySpec::parse("select/linear,priority=p.wasm").unwrap();
        assert_eq!(spec.priority, PluginSource::File("p.wasm".into()));
    }

    #[cfg(not(feature = "native"))]
    #[test]
    fn without_the_feature_no_stack_runs_natively() {
        let e = PolicySpec::parse("select/linear,priority/basic")
            .unwrap()
            .native()
            .check_available()
            .unwrap_err()
            .to_string();
        assert!(e.contains("build it with `--features native`"), "{e}");
    }

    #[cfg(feature = "native")]
    #[test]
    fn native_stacks_take_only_bundled_types_with_a_native_build() {
        let native = |text: &str| PolicySpec::parse(text).unwrap().native();
        assert_eq!(native("select/linear,priority/basic").build, Build::Native);
        assert!(native("select/cons_tres,priority/multifactor")
            .check_available()
            .is_ok());
        let e = native("select/cons_res,priority/basic")
            .check_available()
            .unwrap_err()
            .to_string();
        assert!(e.contains("no native build of select/cons_res"), "{e}");
        let e = native("select/linear,priority=p.wasm")
            .check_available()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("p.wasm: a plugin file has no native build"),
            "{e}"
        );
    }

    #[test]
    fn rejects_incomplete_or_unknown_parts() {
        let e = PolicySpec::parse("select/linear").unwrap_err().to_string();
        assert!(e.contains("no priority plugin"), "{e}");
        let e = PolicySpec::parse("linear,priority/basic")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`linear`"), "{e}");
        let e = PolicySpec::parse("select/linear,select/cons_tres,priority/basic")
            .unwrap_err()
            .to_string();
        assert!(e.contains("two select plugins"), "{e}");
    }
}
