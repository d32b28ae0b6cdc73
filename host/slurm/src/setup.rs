//! What plugins a site runs: the host configuration and `slurm.conf`
//! together name one plugin per slot ([`plan`]), which [`load_all`] loads.
//! [`records::Cluster`] turns the same `slurm.conf` into the records their
//! `init` calls take, and [`preemption::Preemption`] (with a site's
//! [`qos::QosTable`]) into the running jobs a select `job-test` may
//! preempt; [`reservations`] gives what slurmctld offers the plugin around
//! advanced reservations; [`accounting`] the association and QOS records
//! `sacctmgr` creates.
//!
//! # How slots are filled
//!
//! A slot the host configuration names (`[plugins.select]`,
//! `[plugins.gres.gpu]`) is filled as it says. Every other slot is filled
//! from `slurm.conf` the way `slurmctld` and `slurmd` pick plugins, with the
//! bundled plugin of that type, the configuration's `[defaults]` limits, no
//! grants beyond `log` and `clock`, and the default failure policy:
//!
//! - `SelectType` fills the `select` slot; `select/cons_res` is served by
//!   `select/cons_tres`, which replaces it. `select/cray_aries` is a
//!   wrapper: its inner plugin is the one Slurm's `other_select_init`
//!   chooses ([`layered_select_inner`]). Without `SelectType` no select
//!   slot is planned.
//! - `PriorityType` fills the `priority` slot, `priority/basic` when unset
//!   (Slurm's default).
//! - Each `TaskPlugin` entry fills a `task.<name>` slot, in order
//!   (`task/affinity` gives `task.affinity`); without `TaskPlugin`, the slot
//!   `task.none` gets `task/none` (Slurm's default).
//! - Each `GresTypes` name fills a `gres.<name>` slot (`gpu` gives
//!   `gres.gpu` with `gres/gpu`).
//!
//! For gres and task, which Slurm loads several of, the unqualified slot in
//! the host configuration (`[plugins.task]`) replaces every slot of that
//! kind `slurm.conf` would fill.
//!
//! # Failure modes
//!
//! [`plan`] refuses a `slurm.conf` option that does not name a plugin type
//! of its kind (`SelectType=linear`). A planned bundled plugin that this
//! build does not carry is still planned; [`load_all`] refuses it before
//! loading anything, naming the `slurm.conf` line or host configuration
//! slot that chose it and how to fill the slot instead. Every
//! [`SetupError`] names the file and line, or the slot, it is about.

pub mod accounting;
pub mod preemption;
pub mod qos;
pub mod records;
pub mod reservations;

use std::fmt;
use std::path::PathBuf;

use crate::slurm_conf::{ConfError, Origin, SlurmConf};
use slurm_wasm_host::bindings::types::SelectTypeParams;
use slurm_wasm_host::bundled;
use slurm_wasm_host::capabilities::Grants;
use slurm_wasm_host::host_config::{HostConfig, PluginConfig, DEFAULT_PROBATION_CALLS};
use slurm_wasm_host::kinds::gres::GresPlugin;
use slurm_wasm_host::kinds::priority::PriorityPlugin;
use slurm_wasm_host::kinds::select::SelectPlugin;
use slurm_wasm_host::kinds::task::TaskPlugin;
use slurm_wasm_host::FailurePolicy;
use slurm_wasm_host::Host;
use slurm_wasm_host::LoadError;
use slurm_wasm_host::{PluginKind, PluginSettings, PluginSource};

/// One slot of a site's plan: which plugin fills it, how it runs, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedPlugin {
    /// The slot as the host configuration names it (`select`, `gres.gpu`).
    pub slot_name: String,
    /// Its kind.
    pub slot: PluginKind,
    /// The component.
    pub source: PluginSource,
    /// Limits, grants and failure policy.
    pub settings: PluginSettings,
    /// A select wrapper's inner plugin (`[plugins.select.inner]`).
    pub inner: Option<Box<PluginConfig>>,
    /// What chose this plugin, for messages.
    pub chosen_by: ChosenBy,
}

/// What chose a planned plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChosenBy {
    /// The slot's table in the host configuration.
    HostConfig,
    /// A `slurm.conf` option, with its value as written.
    SlurmConf {
        /// The option (`SelectType`, `GresTypes`, `TaskPlugin`).
        key: &'static str,
        /// Its value as written (`select/cons_tres`).
        value: String,
        /// The file and line that set it.
        origin: Origin,
    },
    /// `slurm.conf` (the file named) does not set `key`; the plugin is
    /// Slurm's default.
    SlurmDefault {
        /// The option left unset (`PriorityType`).
        key: &'static str,
        /// The `slurm.conf` read.
        file: PathBuf,
    },
}

impl fmt::Display for ChosenBy {
    /// `host configuration`, `slurm.conf:12: SelectType=select/cons_tres` or
    /// `slurm.conf: no PriorityType, Slurm's default`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChosenBy::HostConfig => f.write_str("host configuration"),
            ChosenBy::SlurmConf { key, value, origin } => write!(f, "{origin}: {key}={value}"),
            ChosenBy::SlurmDefault { key, file } => {
                write!(f, "{}: no {key}, Slurm's default", file.display())
            }
        }
    }
}

/// The loaded plugins of a plan, by slot; none is initialised yet.
#[derive(Default)]
pub struct LoadedPlugins {
    /// The select plugin, when the plan has a select slot.
    pub select: Option<SelectPlugin>,
    /// The priority plugin, when the plan has a priority slot.
    pub priority: Option<PriorityPlugin>,
    /// Gres plugins with their slot names, in plan order.
    pub gres: Vec<(String, GresPlugin)>,
    /// Task plugins with their slot names, in plan order (Slurm's stacking
    /// order).
    pub task: Vec<(String, TaskPlugin)>,
}

/// Why a site's plugins could not be planned or loaded.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A `slurm.conf` value that cannot be used, at its file and line.
    #[error(transparent)]
    SlurmConf(#[from] ConfError),
    /// A planned bundled plugin that this build does not carry.
    #[error(
        "{chosen_by}: no bundled plugin {plugin_type} in this build (bundled: {bundled}); name a .wasm for the \
         {slot_name} slot in the host configuration ([plugins.{slot_name}] wasm = \"...\")"
    )]
    NotBundled {
        /// The slot it was planned for (`select`, `gres.gpu`).
        slot_name: String,
        /// The type asked for.
        plugin_type: String,
        /// What asked for it.
        chosen_by: Box<ChosenBy>,
        /// The types this build carries, comma-separated.
        bundled: String,
    },
    /// A second plugin for a slot Slurm has one of.
    #[error("{chosen_by}: the {slot_name} slot: Slurm loads one {slot} plugin, and the {first} slot already has one")]
    Duplicate {
        /// The second slot's name.
        slot_name: String,
        /// The kind both slots are of (select or priority).
        slot: PluginKind,
        /// The first slot's name, which keeps its plugin.
        first: String,
        /// What planned the second one.
        chosen_by: Box<ChosenBy>,
    },
    /// The plugin of a slot failed to load.
    #[error("{chosen_by}: the {slot_name} slot: {source}")]
    Load {
        /// The slot's name.
        slot_name: String,
        /// What planned the plugin.
        chosen_by: Box<ChosenBy>,
        /// Why it did not load.
        #[source]
        source: Box<LoadError>,
    },
}

/// The plugins a site runs: the slots `config` names, and the others filled
/// from `slurm` as described in the [module documentation](self). With no
/// `slurm.conf`, only the slots `config` names. Slots come in kind order
/// (select, gres, priority, task) and, within a kind, in `slurm.conf` order,
/// then the host configuration's other slots of that kind by name.
///
/// # Errors
///
/// [`SetupError::SlurmConf`] at a `SelectType`, `PriorityType`,
/// `TaskPlugin` or `GresTypes` option that does not name plugin types of
/// its kind.
pub fn plan(
    config: &HostConfig,
    slurm: Option<&SlurmConf>,
) -> Result<Vec<PlannedPlugin>, SetupError> {
    let from_config = |slot_name: &str, slot: PluginKind| {
        config.plugins.get(slot_name).map(|p| PlannedPlugin {
            slot_name: slot_name.to_owned(),
            slot,
            source: p.source.clone(),
            settings: p.settings.clone(),
            inner: p.inner.clone(),
            chosen_by: ChosenBy::HostConfig,
        })
    };
    let mut planned = Vec::new();
    for slot in PluginKind::ALL {
        let choices = match slurm {
            Some(conf) if !config.plugins.contains_key(slot.name()) => slurm_choices(conf, slot)?,
            _ => Vec::new(),
        };
        for (slot_name, plugin_type, chosen_by) in choices {
            let settings = PluginSettings {
                limits: config.defaults.clone(),
                grants: Grants::none(),
                failure: FailurePolicy::default(),
                accept_state_from: Vec::new(),
            };
            let inner = match (slot, slurm) {
                (PluginKind::Select, Some(conf)) if plugin_type == CRAY_ARIES => {
                    Some(Box::new(PluginConfig {
                        kind: PluginKind::Select,
                        source: PluginSource::Bundled(
                            layered_select_inner(records::select_type_parameters(&conf.options)?)
                                .to_owned(),
                        ),
                        settings: settings.clone(),
                        record: None,
                        shadows: Vec::new(),
                        probation_calls: DEFAULT_PROBATION_CALLS,
                        inner: None,
                        node_health: None,
                    }))
                }
                _ => None,
            };
            let slurm_choice = PlannedPlugin {
                slot,
                source: PluginSource::Bundled(plugin_type),
                settings,
                inner,
                chosen_by,
                slot_name,
            };
            planned.push(from_config(&slurm_choice.slot_name, slot).unwrap_or(slurm_choice));
        }
        for (slot_name, plugin) in &config.plugins {
            if plugin.kind == slot && !planned.iter().any(|p| &p.slot_name == slot_name) {
                planned.extend(from_config(slot_name, slot));
            }
        }
    }
    Ok(planned)
}

/// The select plugin that runs over another by Slurm's rules
/// ([`layered_select_inner`]).
pub const CRAY_ARIES: &str = "select/cray_aries";

/// The plugin a layering select plugin (`select/cray_aries`) runs over, as
/// Slurm's `other_select_init` (src/plugins/select/other/other_select.c)
/// chooses it from `SelectTypeParameters`: `OTHER_CONS_RES` gives
/// select/cons_res, served here by select/cons_tres, as is
/// `OTHER_CONS_TRES`; neither gives select/linear.
pub fn layered_select_inner(params: SelectTypeParams) -> &'static str {
    if params.intersects(SelectTypeParams::OTHER_CONS_RES | SelectTypeParams::OTHER_CONS_TRES) {
        "select/cons_tres"
    } else {
        "select/linear"
    }
}

/// The bundled select plugin `plugin_type` as `SelectType` names it, a
/// layering one (`select/cray_aries`) over the bundled plugin
/// [`layered_select_inner`] picks from `params`, each under `settings`.
///
/// # Errors
///
/// Those of [`SelectPlugin::load`] and [`SelectPlugin::load_over`].
pub fn load_bundled_select(
    host: &Host,
    plugin_type: &str,
    params: SelectTypeParams,
    settings: PluginSettings,
) -> Result<SelectPlugin, LoadError> {
    let source = PluginSource::Bundled(plugin_type.to_owned());
    if plugin_type != CRAY_ARIES {
        return SelectPlugin::load(host, &source, settings);
    }
    let inner = PluginSource::Bundled(layered_select_inner(params).to_owned());
    let inner = SelectPlugin::load(host, &inner, settings.clone())?;
    SelectPlugin::load_over(host, &source, settings, inner)
}

/// The slots `slurm.conf` fills for one kind: slot name, plugin type and
/// what chose it.
fn slurm_choices(
    conf: &SlurmConf,
    slot: PluginKind,
) -> Result<Vec<(String, String, ChosenBy)>, ConfError> {
    let option = |key: &'static str| {
        conf.options.get(key).map(|value| {
            let origin = conf
                .options
                .origin(key)
                .expect("a value has an origin")
                .clone();
            ChosenBy::SlurmConf {
                key,
                value: value.to_owned(),
                origin,
            }
        })
    };
    let default = |key: &'static str| ChosenBy::SlurmDefault {
        key,
        file: conf.path.clone(),
    };
    let checked = |plugin_type: String, chosen_by: &ChosenBy| -> Result<String, ConfError> {
        if slot.accepts_type(&plugin_type) {
            return Ok(plugin_type);
        }
        let ChosenBy::SlurmConf { key, value, origin } = chosen_by else {
            unreachable!("Slurm's defaults are plugin types of their kind")
        };
        Err(origin.error(format!(
            "{key}: `{value}` does not name {slot} plugins like `{slot}/<name>`"
        )))
    };
    let choices = match slot {
        PluginKind::Select => match option("SelectType") {
            Some(chosen_by) => {
                let written = conf.select_type().expect("SelectType is set");
                let plugin_type = if written == "select/cons_res" {
                    "select/cons_tres"
                } else {
                    written
                };
                vec![(
                    "select".to_owned(),
                    checked(plugin_type.to_owned(), &chosen_by)?,
                    chosen_by,
                )]
            }
            None => Vec::new(),
        },
        PluginKind::Priority => {
            let chosen_by = option("PriorityType").unwrap_or_else(|| default("PriorityType"));
            let plugin_type = conf.priority_type().unwrap_or("priority/basic").to_owned();
            vec![(
                "priority".to_owned(),
                checked(plugin_type, &chosen_by)?,
                chosen_by,
            )]
        }
        PluginKind::Task => {
            let chosen_by = option("TaskPlugin").unwrap_or_else(|| default("TaskPlugin"));
            let mut types = conf.task_plugins();
            if types.is_empty() {
                types.push("task/none".to_owned());
            }
            qualified(slot, types, &chosen_by, checked)?
        }
        PluginKind::Gres => match option("GresTypes") {
            Some(chosen_by) => {
                let types = conf
                    .gres_types()
                    .into_iter()
                    .map(|name| format!("gres/{name}"))
                    .collect();
                qualified(slot, types, &chosen_by, checked)?
            }
            None => Vec::new(),
        },
    };
    Ok(choices)
}

/// One `<kind>.<name>` slot per plugin type of a list option.
fn qualified(
    slot: PluginKind,
    types: Vec<String>,
    chosen_by: &ChosenBy,
    checked: impl Fn(String, &ChosenBy) -> Result<String, ConfError>,
) -> Result<Vec<(String, String, ChosenBy)>, ConfError> {
    types
        .into_iter()
        .map(|plugin_type| {
            let plugin_type = checked(plugin_type, chosen_by)?;
            let name = plugin_type.split_once('/').map_or("", |(_, name)| name);
            Ok((format!("{slot}.{name}"), plugin_type, chosen_by.clone()))
        })
        .collect()
}

/// Loads every plugin of `plan` into `host` (without calling `init`).
///
/// # Errors
///
/// Before anything is loaded: [`SetupError::NotBundled`] for a planned
/// bundled plugin this build does not carry, [`SetupError::Duplicate`] for
/// a second select or priority plugin. Then [`SetupError::Load`] naming the
/// slot of a plugin that failed to load.
pub fn load_all(host: &Host, plan: &[PlannedPlugin]) -> Result<LoadedPlugins, SetupError> {
    for (i, planned) in plan.iter().enumerate() {
        if let PluginSource::Bundled(plugin_type) = &planned.source {
            if bundled::find(host.bundled(), plugin_type).is_none() {
                return Err(SetupError::NotBundled {
                    slot_name: planned.slot_name.clone(),
                    plugin_type: plugin_type.clone(),
                    chosen_by: Box::new(planned.chosen_by.clone()),
                    bundled: bundled::names(host.bundled()),
                });
            }
        }
        let first = plan[..i]
            .iter()
            .find(|p| p.slot == planned.slot && !planned.slot.allows_several());
        if let Some(first) = first {
            return Err(SetupError::Duplicate {
                slot_name: planned.slot_name.clone(),
                slot: planned.slot,
                first: first.slot_name.clone(),
                chosen_by: Box::new(planned.chosen_by.clone()),
            });
        }
    }
    let mut loaded = LoadedPlugins::default();
    for planned in plan {
        let fail = |source: LoadError| SetupError::Load {
            slot_name: planned.slot_name.clone(),
            chosen_by: Box::new(planned.chosen_by.clone()),
            source: Box::new(source),
        };
        let (source, settings, slot_name) = (
            &planned.source,
            planned.settings.clone(),
            planned.slot_name.clone(),
        );
        match planned.slot {
            PluginKind::Select => {
                let plugin = match &planned.inner {
                    Some(inner) => SelectPlugin::load_configured(host, inner)
                        .and_then(|inner| SelectPlugin::load_over(host, source, settings, inner)),
                    None => SelectPlugin::load(host, source, settings),
                };
                loaded.select = Some(plugin.map_err(fail)?)
            }
            PluginKind::Priority => {
                loaded.priority = Some(PriorityPlugin::load(host, source, settings).map_err(fail)?)
            }
            PluginKind::Gres => loaded.gres.push((
                slot_name,
                GresPlugin::load(host, source, settings).map_err(fail)?,
            )),
            PluginKind::Task => loaded.task.push((
                slot_name,
                TaskPlugin::load(host, source, settings).map_err(fail)?,
            )),
        }
    }
    Ok(loaded)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::records::Cluster;
    use super::*;
    use crate::slurm_conf;
    use slurm_wasm_host::host_config;

    fn slurm(text: &str) -> SlurmConf {
        slurm_conf::parse_str(text, Path::new("slurm.conf")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn host_config(text: &str) -> HostConfig {
        host_config::parse_str(text, Path::new("/etc/slurm-wasm")).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Slot name, source and the text of what chose it.
    fn summary(plan: &[PlannedPlugin]) -> Vec<(&str, &PluginSource, String)> {
        plan.iter()
            .map(|p| (p.slot_name.as_str(), &p.source, p.chosen_by.to_string()))
            .collect()
    }

    fn bundled(plugin_type: &str) -> PluginSource {
        PluginSource::Bundled(plugin_type.into())
    }

    #[test]
    fn slurm_conf_plugins_load_and_init_with_the_built_configs() {
        let conf = slurm(concat!(
            "ClusterName=demo\n",
            "PriorityType=priority/basic\n",
            "TaskPlugin=task/none\n",
            "NodeName=n[1-2] CPUs=4 RealMemory=1000\n",
            "PartitionName=p Nodes=ALL Default=YES\n",
        ));
        let plan = plan(&HostConfig::default(), Some(&conf)).unwrap();
        assert_eq!(
            summary(&plan),
            [
                (
                    "priority",
                    &bundled("priority/basic"),
                    "slurm.conf:2: PriorityType=priority/basic".to_owned()
                ),
                (
                    "task.none",
                    &bundled("task/none"),
                    "slurm.conf:3: TaskPlugin=task/none".to_owned()
                ),
            ]
        );
        assert!(plan.iter().all(|p| p.settings == PluginSettings::default()));

        let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
        let loaded = load_all(&host, &plan).unwrap();
        let cluster = Cluster::from_slurm_conf(&conf).unwrap();
        let priority = loaded.priority.expect("a priority plugin");
        assert_eq!(priority.identity().plugin_type, "priority/basic");
        priority.init(&cluster.priority_config()).unwrap();
        let [(slot_name, task)] = &loaded.task[..] else {
            panic!("one task plugin")
        };
        assert_eq!(
            (slot_name.as_str(), task.identity().plugin_type.as_str()),
            ("task.none", "task/none")
        );
        task.init(&cluster.task_config("n1")).unwrap();
        assert!(loaded.select.is_none() && loaded.gres.is_empty());
    }

    #[test]
    fn slurm_defaults_and_lists() {
        let defaults = plan(&HostConfig::default(), Some(&slurm("ClusterName=c\n"))).unwrap();
        assert_eq!(
            summary(&defaults),
            [
                (
                    "priority",
                    &bundled("priority/basic"),
                    "slurm.conf: no PriorityType, Slurm's default".to_owned()
                ),
                (
                    "task.none",
                    &bundled("task/none"),
                    "slurm.conf: no TaskPlugin, Slurm's default".to_owned()
                ),
            ]
        );

        let conf = slurm("SelectType=select/cons_res\nGresTypes=gpu,mps\nTaskPlugin=affinity,task/cgroup\nPriorityType=priority/multifactor\n");
        let plan = plan(&HostConfig::default(), Some(&conf)).unwrap();
        let slots: Vec<(&str, &PluginSource)> = plan
            .iter()
            .map(|p| (p.slot_name.as_str(), &p.source))
            .collect();
        assert_eq!(
            slots,
            [
                ("select", &bundled("select/cons_tres")),
                ("gres.gpu", &bundled("gres/gpu")),
                ("gres.mps", &bundled("gres/mps")),
                ("priority", &bundled("priority/multifactor")),
                ("task.affinity", &bundled("task/affinity")),
                ("task.cgroup", &bundled("task/cgroup")),
            ]
        );
        assert_eq!(
            plan[0].chosen_by.to_string(),
            "slurm.conf:1: SelectType=select/cons_res"
        );
        assert_eq!(
            plan[5].chosen_by.to_string(),
            "slurm.conf:3: TaskPlugin=affinity,task/cgroup"
        );
    }

    #[test]
    fn host_config_slots_win() {
        let config = host_config(concat!(
            "[defaults]\nmax_instances = 8\n",
            "[plugins.priority]\nwasm = \"prio.wasm\"\nfailure = \"fail\"\n",
            "[plugins.gres.mps]\nwasm = \"mps.wasm\"\n",
            "[plugins.gres.nic]\nwasm = \"nic.wasm\"\n",
            "[plugins.task]\nbundled = \"task/none\"\n",
        ));
        let conf = slurm("PriorityType=priority/basic\nGresTypes=gpu,mps\nTaskPlugin=task/affinity,task/cgroup\n");
        let plan = plan(&config, Some(&conf)).unwrap();
        let file = |name: &str| PluginSource::File(Path::new("/etc/slurm-wasm").join(name));
        assert_eq!(
            summary(&plan),
            [
                (
                    "gres.gpu",
                    &bundled("gres/gpu"),
                    "slurm.conf:2: GresTypes=gpu,mps".to_owned()
                ),
                (
                    "gres.mps",
                    &file("mps.wasm"),
                    "host configuration".to_owned()
                ),
                (
                    "gres.nic",
                    &file("nic.wasm"),
                    "host configuration".to_owned()
                ),
                (
                    "priority",
                    &file("prio.wasm"),
                    "host configuration".to_owned()
                ),
                (
                    "task",
                    &bundled("task/none"),
                    "host configuration".to_owned()
                ),
            ]
        );
        assert_eq!(plan[3].settings.failure, FailurePolicy::Fail);
        assert_eq!(
            plan[0].settings.limits.max_instances, 8,
            "slurm.conf's slots take the [defaults] limits"
        );

        let alone = super::plan(&config, None).unwrap();
        let slots: Vec<&str> = alone.iter().map(|p| p.slot_name.as_str()).collect();
        assert_eq!(slots, ["gres.mps", "gres.nic", "priority", "task"]);
    }

    #[test]
    fn option_values_must_name_plugins_of_their_kind() {
        let error = |text: &str| {
            plan(&HostConfig::default(), Some(&slurm(text)))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            error("ClusterName=c\nSelectType=linear\n"),
            "slurm.conf:2: SelectType: `linear` does not name select plugins like `select/<name>`"
        );
        assert_eq!(
            error("PriorityType=task/none\n"),
            "slurm.conf:1: PriorityType: `task/none` does not name priority plugins like `priority/<name>`"
        );
        assert_eq!(
            error("GresTypes=gpu,a.b\n"),
            "slurm.conf:1: GresTypes: `gpu,a.b` does not name gres plugins like `gres/<name>`"
        );
    }

    #[test]
    fn a_plugin_missing_from_this_build_is_refused_with_its_line() {
        let conf = slurm("ClusterName=c\n\nSelectType=select/bluegene\n");
        let plan = plan(&HostConfig::default(), Some(&conf)).unwrap();
        assert_eq!(plan[0].source, bundled("select/bluegene"));
        let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
        let error = load_all(&host, &plan)
            .err()
            .expect("select/bluegene is not bundled");
        assert!(matches!(error, SetupError::NotBundled { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            format!(
                "slurm.conf:3: SelectType=select/bluegene: no bundled plugin select/bluegene in this build \
                 (bundled: {}); name a .wasm for the select slot in the host configuration \
                 ([plugins.select] wasm = \"...\")",
                slurm_wasm_bundled::names()
            )
        );
    }

    /// `other_select_init` (src/plugins/select/other/other_select.c): the
    /// plugin select/cray_aries runs over follows SelectTypeParameters.
    #[test]
    fn select_cray_aries_runs_over_the_plugin_slurm_chooses() {
        for (params, inner) in [
            ("", "select/linear"),
            ("SelectTypeParameters=CR_Memory\n", "select/linear"),
            (
                "SelectTypeParameters=CR_Core_Memory,other_cons_tres\n",
                "select/cons_tres",
            ),
            (
                "SelectTypeParameters=CR_Core,other_cons_res\n",
                "select/cons_tres",
            ),
        ] {
            let conf = slurm(&format!(
                "ClusterName=c\nSelectType=select/cray_aries\n{params}"
            ));
            let plan = plan(&HostConfig::default(), Some(&conf)).unwrap();
            assert_eq!(plan[0].source, bundled("select/cray_aries"));
            let planned_inner = plan[0].inner.as_ref().expect("an inner plugin");
            assert_eq!(planned_inner.source, bundled(inner), "{params}");
            let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
            let loaded = load_all(&host, &plan).unwrap();
            let select = loaded.select.expect("a select plugin");
            assert_eq!(select.identity().plugin_type, "select/cray_aries");
            assert_eq!(
                select.inner().expect("a wrapper").identity().plugin_type,
                inner
            );
        }
    }

    #[test]
    fn load_errors_name_the_slot() {
        let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
        let config = host_config("[plugins.task.x]\nwasm = \"/nonexistent/x.wasm\"\n");
        let error = load_all(&host, &plan(&config, None).unwrap())
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.starts_with(
                "host configuration: the task.x slot: /nonexistent/x.wasm: cannot read"
            ),
            "{error}"
        );

        let mut twice = plan(&HostConfig::default(), Some(&slurm("ClusterName=c\n"))).unwrap();
        twice.push(PlannedPlugin {
            slot_name: "priority2".into(),
            ..twice[0].clone()
        });
        let error = load_all(&host, &twice).err().unwrap().to_string();
        assert_eq!(
            error,
            "slurm.conf: no PriorityType, Slurm's default: the priority2 slot: Slurm loads one priority plugin, \
             and the priority slot already has one"
        );
    }
}
