//! What every kind handle shares: the slot it serves, its plugin loaded on
//! first use, and the frame of its ABI functions.
//!
//! A kind (priority, task, gres, select) adds a handle type wrapping
//! [`KindHandle`] with [`Handle`], a [`KindPlugin`] implementation for its
//! typed plugin, and one ABI function per contract function that converts
//! the C arguments and calls the plugin inside [`with_plugin`]. Kinds whose
//! plugins save state ([`StatePlugin`]) share [`state_save`] and
//! [`state_restore`].

use std::ffi::c_char;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use slurm_wasm_host::host_config::PluginConfig;
use slurm_wasm_host::tap::TapError;
use slurm_wasm_host::types::PluginIdentity;
use slurm_wasm_host::{
    FailurePolicy, GresPlugin, Host, LoadError, PluginKind, PluginSource, PriorityPlugin,
    ReloadError, SelectPlugin, StateFileError, TaskPlugin,
};

use crate::error::{swasm_error, Failure};
use crate::host::{run, HostInner};
use crate::types::swasm_plugin_identity;

/// A typed plugin of the host, as a kind handle loads it.
pub(crate) trait KindPlugin: Sized + Send + Sync + 'static {
    const KIND: PluginKind;
    /// The plugin `config` names (a select wrapper over its inner plugins).
    fn load(host: &Host, config: &PluginConfig) -> Result<Self, LoadError>;
    fn identity(&self) -> PluginIdentity;
    fn tap_as_configured(&self, config: &PluginConfig) -> Result<(), TapError>;
    fn reload(&self, source: &PluginSource, probation_calls: u32) -> Result<bool, ReloadError>;
}

/// The four typed plugins are kind plugins the same way: their own `load`
/// and `identity`.
macro_rules! kind_plugins {
    ($($plugin:ident => $slot:ident: |$host:ident, $config:ident| $load:expr),* $(,)?) => {$(
        impl KindPlugin for $plugin {
            const KIND: PluginKind = PluginKind::$slot;
            fn load($host: &Host, $config: &PluginConfig) -> Result<Self, LoadError> {
                $load
            }
            fn identity(&self) -> PluginIdentity {
                $plugin::identity(self)
            }
            fn tap_as_configured(&self, config: &PluginConfig) -> Result<(), TapError> {
                $plugin::tap_as_configured(self, config)
            }
            fn reload(
                &self,
                source: &PluginSource,
                probation_calls: u32,
            ) -> Result<bool, ReloadError> {
                $plugin::reload(self, source, probation_calls)
            }
        }
    )*};
}

kind_plugins! {
    PriorityPlugin => Priority: |host, c| PriorityPlugin::load(host, &c.source, c.settings.clone()),
    TaskPlugin => Task: |host, c| TaskPlugin::load(host, &c.source, c.settings.clone()),
    GresPlugin => Gres: |host, c| GresPlugin::load(host, &c.source, c.settings.clone()),
    SelectPlugin => Select: |host, c| SelectPlugin::load_configured(host, c),
}

/// A typed plugin whose contract has `state-save` and `state-restore`,
/// kept in the host's checked state files.
pub(crate) trait StatePlugin: KindPlugin {
    fn save_state_file(&self, path: &Path) -> Result<(), StateFileError>;
    fn restore_state_file(&self, path: &Path) -> Result<(), StateFileError>;
}

/// Priority and select plugins keep their state through the host's files.
macro_rules! state_plugins {
    ($($plugin:ident),* $(,)?) => {$(
        impl StatePlugin for $plugin {
            fn save_state_file(&self, path: &Path) -> Result<(), StateFileError> {
                $plugin::save_state_file(self, path)
            }
            fn restore_state_file(&self, path: &Path) -> Result<(), StateFileError> {
                $plugin::restore_state_file(self, path)
            }
        }
    )*};
}

state_plugins!(PriorityPlugin, SelectPlugin);

/// One configured slot of a host and, after the first call, its plugin.
pub(crate) struct KindHandle<P> {
    host: Arc<HostInner>,
    slot_name: String,
    config: PluginConfig,
    plugin: OnceLock<Result<P, Failure>>,
}

/// The C handle type of a kind.
pub(crate) trait Handle {
    type Plugin: KindPlugin;
    fn kind(&self) -> &KindHandle<Self::Plugin>;
}

impl<P: KindPlugin> KindHandle<P> {
    /// The slot `slot` (the kind's own name when `None`, or its only slot)
    /// of `host`'s configuration, checked cheaply: the slot exists and is of
    /// this kind, its `.wasm` file can be opened, its bundled plugin and
    /// fallback are carried by this build. Nothing is compiled.
    pub(crate) fn open(host: &Arc<HostInner>, slot: Option<&str>) -> Result<Self, Failure> {
        let kind = P::KIND;
        let file = host.path.display();
        let slot_name = match slot {
            Some(name) => name.to_owned(),
            None => default_slot(host, kind)?,
        };
        let config = host
            .config
            .plugins
            .get(&slot_name)
            .ok_or_else(|| {
                Failure::new(format!(
                    "{file}: no [plugins.{slot_name}] slot; {}",
                    configured(host, kind)
                ))
            })?
            .clone();
        if config.kind != kind {
            return Err(Failure::new(format!(
                "{file}: [plugins.{slot_name}] is a {} slot, not a {kind} slot",
                config.kind
            )));
        }
        // The slot's plugin, then a select wrapper's inner plugins.
        let mut layer = Some((&config, format!("{file}: [plugins.{slot_name}]")));
        while let Some((table, at)) = layer {
            match &table.source {
                PluginSource::File(wasm) => {
                    std::fs::File::open(wasm).map_err(|e| {
                        Failure::new(format!("{at} wasm = {}: cannot read: {e}", wasm.display()))
                    })?;
                }
                PluginSource::Bundled(name) => check_bundled(&at, "bundled", name)?,
                PluginSource::Bytes { .. } => {}
            }
            if let FailurePolicy::Fallback { plugin, .. } = &table.settings.failure {
                check_bundled(&at, "fallback", plugin)?;
            }
            layer = table.inner.as_deref().map(|inner| {
                let at = format!("{}.inner]", at.trim_end_matches(']'));
                (inner, at)
            });
        }
        Ok(KindHandle {
            host: host.clone(),
            slot_name,
            config,
            plugin: OnceLock::new(),
        })
    }

    /// The plugin, loaded (compiled or read from the cache, checked) on
    /// first use; a failure to load is kept and given to every later call,
    /// so a slot never runs anything but its configured plugin.
    pub(crate) fn plugin(&self) -> Result<&P, Failure> {
        self.plugin
            .get_or_init(|| {
                let host = self.host.runtime()?;
                let at = |e: &dyn std::fmt::Display| {
                    Failure::new(format!(
                        "{}: [plugins.{}]: {e}",
                        self.host.path.display(),
                        self.slot_name
                    ))
                };
                let plugin = P::load(host, &self.config).map_err(|e| at(&e))?;
                plugin.tap_as_configured(&self.config).map_err(|e| at(&e))?;
                Ok(plugin)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Where the slot's state file is: `path` when given, else
    /// `<state_dir>/<slot>.state` of the host configuration.
    pub(crate) fn state_path(&self, path: Option<String>) -> Result<PathBuf, Failure> {
        if let Some(path) = path {
            return Ok(path.into());
        }
        match &self.host.config.state_dir {
            Some(dir) => Ok(dir.join(format!("{}.state", self.slot_name))),
            None => Err(Failure::new(format!(
                "{}: no `state_dir` to keep the {} slot's state file in; set `state_dir` or pass a path",
                self.host.path.display(),
                self.slot_name
            ))),
        }
    }
}

fn check_bundled(at: &str, key: &str, name: &str) -> Result<(), Failure> {
    if slurm_wasm_bundled::find(name).is_none() {
        return Err(Failure::new(format!(
            "{at} {key} = \"{name}\": this build carries no such plugin (bundled: {})",
            slurm_wasm_bundled::names()
        )));
    }
    Ok(())
}

/// The slot a kind handle opened without a slot name serves: the one named
/// after the kind, else the kind's only slot.
fn default_slot(host: &HostInner, kind: PluginKind) -> Result<String, Failure> {
    if host.config.plugins.contains_key(kind.name()) {
        return Ok(kind.name().to_owned());
    }
    let mut slots = host
        .config
        .plugins
        .iter()
        .filter(|(_, p)| p.kind == kind)
        .map(|(name, _)| name);
    match (slots.next(), slots.next()) {
        (Some(only), None) => Ok(only.clone()),
        (None, _) => Err(Failure::new(format!(
            "{}: no {kind} plugin is configured; add [plugins.{kind}] with `wasm = \"...\"` or `bundled = \"{kind}/<name>\"`",
            host.path.display()
        ))),
        (Some(_), Some(_)) => Err(Failure::new(format!(
            "{}: several {kind} slots are configured; name one ({})",
            host.path.display(),
            configured(host, kind)
        ))),
    }
}

/// The slots of `kind` a configuration has, for messages.
fn configured(host: &HostInner, kind: PluginKind) -> String {
    let slots: Vec<&str> = host
        .config
        .plugins
        .iter()
        .filter(|(_, p)| p.kind == kind)
        .map(|(name, _)| name.as_str())
        .collect();
    if slots.is_empty() {
        format!("the file configures no {kind} slot")
    } else {
        format!("its {kind} slots: {}", slots.join(", "))
    }
}

/// Runs the body of a kind function on the handle's plugin (loaded first
/// if need be), as [`run`] does.
///
/// # Safety
/// `handle` is NULL or a live handle of its kind; `error` is NULL or points
/// to an initialised [`swasm_error`].
pub(crate) unsafe fn with_plugin<H: Handle>(
    handle: *const H,
    error: *mut swasm_error,
    function: &str,
    body: impl FnOnce(&H::Plugin) -> Result<(), Failure>,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { with_slot(handle, error, function, |_, plugin| body(plugin)) }
}

/// [`with_plugin`], the body also given the slot (for its state file).
///
/// # Safety
/// As [`with_plugin`].
pub(crate) unsafe fn with_slot<H: Handle>(
    handle: *const H,
    error: *mut swasm_error,
    function: &str,
    body: impl FnOnce(&KindHandle<H::Plugin>, &H::Plugin) -> Result<(), Failure>,
) -> i32 {
    // SAFETY: as the caller promised.
    let Some(handle) = (unsafe { handle.as_ref() }) else {
        // SAFETY: as the caller promised.
        return unsafe {
            run(None, error, || {
                Err(Failure::new(format!(
                    "{function}: the plugin handle is NULL"
                )))
            })
        };
    };
    let kind = handle.kind();
    // SAFETY: as the caller promised.
    unsafe {
        run(Some(&kind.host.dispatch), error, || {
            body(kind, kind.plugin()?)
        })
    }
}

/// Opens a kind handle of `host` for `slot` (NULL: the kind's own slot or
/// its only one); NULL with `error` set on failure.
///
/// # Safety
/// As the kind's `swasm_*_open`.
pub(crate) unsafe fn open<H: Handle>(
    host: *const crate::host::swasm_host,
    slot: *const c_char,
    error: *mut swasm_error,
    function: &str,
    wrap: impl FnOnce(KindHandle<H::Plugin>) -> H,
) -> *mut H {
    // SAFETY: as the caller promised.
    let inner = unsafe { host.as_ref() }.map(|h| h.inner.clone());
    let mut opened = None;
    // SAFETY: as the caller promised.
    unsafe {
        run(inner.as_ref().map(|h| &h.dispatch), error, || {
            let host = inner
                .as_ref()
                .ok_or_else(|| Failure::new(format!("{function}: the host is NULL")))?;
            // SAFETY: as the caller promised.
            let slot = crate::cvt::opt_text(slot);
            opened = Some(KindHandle::open(host, slot.as_deref())?);
            Ok(())
        })
    };
    opened.map_or(std::ptr::null_mut(), |kind| {
        Box::into_raw(Box::new(wrap(kind)))
    })
}

/// Loads the handle's plugin now (otherwise its first call does).
///
/// # Safety
/// As [`with_plugin`].
pub(crate) unsafe fn load<H: Handle>(
    handle: *const H,
    error: *mut swasm_error,
    function: &str,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { with_plugin(handle, error, function, |_| Ok(())) }
}

/// Fills `out` with the plugin's identity (loading it first).
///
/// # Safety
/// As [`with_plugin`]; `out` is NULL or valid for writing.
pub(crate) unsafe fn identity<H: Handle>(
    handle: *const H,
    out: *mut swasm_plugin_identity,
    error: *mut swasm_error,
    function: &str,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(handle, error, function, |p| {
            crate::cvt::put(
                out,
                swasm_plugin_identity::new(&p.identity()),
                "identity output",
            )
        })
    }
}

/// Saves the plugin's state to `path`, or (NULL) to the slot's state file
/// under the host's `state_dir`.
///
/// # Safety
/// As [`with_plugin`]; `path` is NULL or a NUL-terminated string.
pub(crate) unsafe fn state_save<H: Handle>(
    handle: *const H,
    path: *const c_char,
    error: *mut swasm_error,
    function: &str,
) -> i32
where
    H::Plugin: StatePlugin,
{
    // SAFETY: as the caller promised.
    unsafe {
        with_slot(handle, error, function, |slot, p| {
            let path = slot.state_path(crate::cvt::opt_text(path))?;
            Ok(p.save_state_file(&path)?)
        })
    }
}

/// Reads the host configuration file again and, when the slot's table now
/// names another component (or its `.wasm` file holds other bytes), puts it
/// in place of the serving one, the replaced component running beside it
/// for the table's `probation_calls` calls and taking over if it faults
/// (`reload` of the typed handles). The slot keeps the limits, grants,
/// recording and shadows it was loaded with. `*replaced` (when not NULL)
/// tells whether the component changed.
///
/// # Safety
/// `handle` is NULL or a live handle of its kind; `replaced` NULL or valid
/// for writing; `error` NULL or initialised.
pub(crate) unsafe fn reload<H: Handle>(
    handle: *const H,
    replaced: *mut bool,
    error: *mut swasm_error,
    function: &str,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_slot(handle, error, function, |slot, p| {
            let file = slot.host.path.display();
            let config = slurm_wasm_host::host_config::load(&slot.host.path)
                .map_err(|e| Failure::new(format!("{function}: {e}")))?;
            let table = config.plugins.get(&slot.slot_name).ok_or_else(|| {
                Failure::new(format!(
                    "{function}: {file} no longer has [plugins.{}]; the slot keeps its plugin",
                    slot.slot_name
                ))
            })?;
            if table.kind != H::Plugin::KIND {
                return Err(Failure::new(format!(
                    "{function}: {file}: [plugins.{}] is now a {} slot; the slot keeps its plugin",
                    slot.slot_name, table.kind
                )));
            }
            let changed = p
                .reload(&table.source, table.probation_calls)
                .map_err(|e| Failure::new(format!("{file}: [plugins.{}]: {e}", slot.slot_name)))?;
            // (`replaced` is NULL or writable, as the caller promised.)
            if let Some(out) = replaced.as_mut() {
                *out = changed;
            }
            Ok(())
        })
    }
}

/// Restores the plugin's state from `path`, or (NULL) from the slot's
/// state file under the host's `state_dir`.
///
/// # Safety
/// As [`state_save`].
pub(crate) unsafe fn state_restore<H: Handle>(
    handle: *const H,
    path: *const c_char,
    error: *mut swasm_error,
    function: &str,
) -> i32
where
    H::Plugin: StatePlugin,
{
    // SAFETY: as the caller promised.
    unsafe {
        with_slot(handle, error, function, |slot, p| {
            let path = slot.state_path(crate::cvt::opt_text(path))?;
            Ok(p.restore_state_file(&path)?)
        })
    }
}

/// Closes a kind handle (the plugin is dropped with it, without `fini`).
///
/// # Safety
/// `handle` is NULL or a handle from the kind's open, not closed before and
/// not in use by another thread.
pub(crate) unsafe fn close<H>(handle: *mut H) {
    if !handle.is_null() {
        let _call = crate::fork::InCall::enter();
        // SAFETY: as the caller promised.
        drop(unsafe { Box::from_raw(handle) });
    }
}

#[cfg(test)]
mod tests {
    use crate::gres::{swasm_gres_epilog_info, swasm_gres_plugin};
    use crate::host::swasm_host;
    use crate::priority::swasm_priority_plugin;
    use crate::select::{swasm_select_jobinfo, swasm_select_nodeinfo, swasm_select_plugin};
    use crate::task::swasm_task_plugin;

    /// slurmctld and slurmd call from many RPC threads at once: every
    /// handle may be shared between threads.
    #[test]
    fn handles_are_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<swasm_host>();
        shareable::<swasm_priority_plugin>();
        shareable::<swasm_task_plugin>();
        shareable::<swasm_gres_plugin>();
        shareable::<swasm_select_plugin>();
        shareable::<swasm_gres_epilog_info>();
        shareable::<swasm_select_nodeinfo>();
        shareable::<swasm_select_jobinfo>();
    }
}
