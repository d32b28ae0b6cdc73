//! Native builds of the bundled plugins as a policy stack: the plugin crates
//! compiled into this binary and driven through the same instance methods
//! their export layer (`plugin.rs`) calls, with the same argument
//! normalisation, so a schedule is the one the components give (the
//! `simulate_native` test compares them job by job). This is the native
//! side of the wasm/native ratio in BENCHMARKS.md.
//!
//! * select/cons_tres and select/linear: their values of the SDK's
//!   [`select::Plugin`](slurm_wasm_sdk::select::Plugin),
//!   [`select_cons_tres::ConsTresPlugin`] and
//!   [`select_linear::Linear`], driven through that trait (so `SelectType`
//!   in the configuration still switches cons_tres to cons_res behaviour);
//! * priority/multifactor and priority/basic: their values of the SDK's
//!   [`priority::Plugin`](slurm_wasm_sdk::priority::Plugin),
//!   [`priority_multifactor::PriorityMultifactor`] and
//!   [`priority_basic::PriorityBasic`], driven through that trait.
//!
//! Records cross by [`convert`] (a field-by-field copy, the native
//! counterpart of lowering and lifting a component's arguments).
//!
//! # Host imports
//!
//! A native plugin's imports (`clock`, `log`) go to the SDK's mock host
//! ([`slurm_wasm_sdk::testkit`]), which is thread-local. Every call sets that
//! mock's clock from the stack's [`VirtualClock`] first and afterwards moves
//! what the plugin logged to `tracing` (target `slurm_wasm::plugin`, as the
//! host does for components), so a long replay keeps no log. Because the
//! clock is set before each call, a stack answers the same whichever thread
//! calls it, and two stacks sharing a thread (`compare` runs several stacks
//! one after the other on each of its threads) do not see each other's time.
//!
//! # What differs from a component
//!
//! No sandbox: no fuel, deadline or memory limit, no failure policy, and the
//! host's checks of the answers (an allocation outside the candidates, a
//! core the node lacks) are not made; a panic in a plugin unwinds through
//! the simulation. The bundled plugins use no random source, so the seed a
//! component stack gives WASI has no native counterpart.

pub mod convert;

use std::sync::Arc;

use priority_basic::PriorityBasic;
use priority_multifactor::PriorityMultifactor;
use select_cons_tres::ConsTresPlugin;
use select_linear::Linear;
use slurm::controller::Select;
use slurm_wasm_host::capabilities::clock::{Clock, VirtualClock};
use slurm_wasm_host::kinds::priority::{AssociationUpdate, PriorityConfig};
use slurm_wasm_host::kinds::select::{
    JobTestRequest, JobTestResult, PluginInfoField, PluginInfoValue, SelectConfig,
};
use slurm_wasm_host::types::{Job, Node};
use slurm_wasm_host::CallError;
use slurm_wasm_sdk::host::Level;
use slurm_wasm_sdk::priority::Plugin as PriorityPlugin;
use slurm_wasm_sdk::select::Plugin as SelectPlugin;
use slurm_wasm_sdk::{codes, testkit, Error};

use crate::engine::policy::Prioritizer;
use convert::{IntoHost, ToSdk};

/// The plugin types with a native build.
pub const NATIVE_PLUGINS: [&str; 4] = [
    "select/cons_tres",
    "select/linear",
    "priority/multifactor",
    "priority/basic",
];

/// One call into a native plugin: this thread's mock host answers the
/// plugin's `clock` from `clock`, and what the plugin logged during the
/// call goes to `tracing` once it returns.
fn host_call<R>(plugin: &'static str, clock: &VirtualClock, f: impl FnOnce() -> R) -> R {
    testkit::with(|mock| {
        mock.now = clock.now();
        mock.monotonic_nanos = clock.monotonic_nanos();
    });
    let result = f();
    let logs = testkit::with(|mock| std::mem::take(&mut mock.logs));
    for (level, message) in logs {
        match level {
            Level::Error => tracing::error!(target: "slurm_wasm::plugin", plugin, "{message}"),
            Level::Warn => tracing::warn!(target: "slurm_wasm::plugin", plugin, "{message}"),
            Level::Info => tracing::info!(target: "slurm_wasm::plugin", plugin, "{message}"),
            Level::Debug => tracing::debug!(target: "slurm_wasm::plugin", plugin, "{message}"),
            Level::Trace => tracing::trace!(target: "slurm_wasm::plugin", plugin, "{message}"),
        }
    }
    result
}

/// A plugin's error as the host reports a component's (`CallError::Plugin`).
fn plugin_error(plugin: &'static str, function: &'static str, e: Error) -> CallError {
    CallError::Plugin {
        plugin: plugin.to_owned(),
        function,
        code: e.code,
        message: e.message,
    }
}

/// The static name of `plugin_type` when it has a native build.
fn native_name(plugin_type: &str) -> Result<&'static str, NativeError> {
    NATIVE_PLUGINS
        .iter()
        .find(|p| **p == plugin_type)
        .copied()
        .ok_or_else(|| NativeError::Unknown(plugin_type.to_owned()))
}

/// Why a native stack could not be built: no native build of the plugin,
/// or its `init` failed (the message names the plugin and carries its
/// error).
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("no native build of {0} (native builds: {list})", list = NATIVE_PLUGINS.join(", "))]
    Unknown(String),
    #[error("plugin {plugin} (native build): init failed: {error}")]
    Init { plugin: &'static str, error: Error },
}

/// A native select build: the same [`select::Plugin`](SelectPlugin)
/// value the component exports.
enum Plugin {
    ConsTres(Box<ConsTresPlugin>),
    Linear(Box<Linear>),
}

/// `$body` with `$p` bound to the plugin value, whichever it is.
macro_rules! on_plugin {
    ($plugin:expr, $p:ident => $body:expr) => {
        match $plugin {
            Plugin::ConsTres($p) => $body,
            Plugin::Linear($p) => $body,
        }
    };
}

/// A select plugin built natively, as the controller's [`Select`].
pub struct NativeSelect {
    select: Plugin,
    plugin: &'static str,
    clock: Arc<VirtualClock>,
}

impl NativeSelect {
    /// The plugin of `plugin_type` after `init` with `config` (the
    /// component's `init`); its clock is `clock`.
    ///
    /// # Errors
    ///
    /// [`NativeError::Unknown`] for a type without a native select build,
    /// [`NativeError::Init`] when `init` refuses the configuration.
    pub fn new(
        plugin_type: &str,
        config: &SelectConfig,
        clock: Arc<VirtualClock>,
    ) -> Result<NativeSelect, NativeError> {
        let config = config.to_sdk();
        let plugin = native_name(plugin_type)?;
        let select = host_call(plugin, &clock, || match plugin {
            "select/cons_tres" => {
                ConsTresPlugin::init(&config).map(|c| Plugin::ConsTres(Box::new(c)))
            }
            "select/linear" => {
                <Linear as SelectPlugin>::init(&config).map(|l| Plugin::Linear(Box::new(l)))
            }
            _ => Err(Error::new(codes::EINVAL, "not a select plugin")),
        })
        .map_err(|error| NativeError::Init { plugin, error })?;
        Ok(NativeSelect {
            select,
            plugin,
            clock,
        })
    }

    fn call<R>(
        &mut self,
        function: &'static str,
        f: impl FnOnce(&mut Plugin) -> Result<R, Error>,
    ) -> Result<R, CallError> {
        let select = &mut self.select;
        host_call(self.plugin, &self.clock, || f(select))
            .map_err(|e| plugin_error(self.plugin, function, e))
    }
}

/// Each call is the plugin's own [`select::Plugin`](SelectPlugin) method,
/// the one its component export calls.
impl Select for NativeSelect {
    fn node_init(&mut self, nodes: &[Node]) -> Result<(), CallError> {
        let nodes: Vec<_> = nodes.iter().map(ToSdk::to_sdk).collect();
        self.call(
            "node-init",
            |s| on_plugin!(s, p => SelectPlugin::node_init(p.as_mut(), &nodes)),
        )
    }

    fn job_test(&mut self, request: &JobTestRequest) -> Result<JobTestResult, CallError> {
        let request = request.to_sdk();
        self.call(
            "job-test",
            |s| on_plugin!(s, p => SelectPlugin::job_test(p.as_mut(), &request)),
        )
        .map(IntoHost::into_host)
    }

    fn job_begin(&mut self, job: &Job) -> Result<(), CallError> {
        let job = job.to_sdk();
        self.call(
            "job-begin",
            |s| on_plugin!(s, p => SelectPlugin::job_begin(p.as_mut(), &job)),
        )
    }

    fn nodeinfo_set(&mut self, job: &Job) -> Result<(), CallError> {
        let job = job.to_sdk();
        self.call(
            "nodeinfo-set",
            |s| on_plugin!(s, p => SelectPlugin::nodeinfo_set(p.as_mut(), &job)),
        )
    }

    fn job_fini(&mut self, job: &Job) -> Result<(), CallError> {
        let job = job.to_sdk();
        self.call(
            "job-fini",
            |s| on_plugin!(s, p => SelectPlugin::job_fini(p.as_mut(), &job)),
        )
    }

    fn plugin_info(&mut self, field: PluginInfoField) -> Result<PluginInfoValue, CallError> {
        use slurm_wasm_sdk::select::{PluginInfoField as Field, PluginInfoValue as Value};
        let field = match field {
            PluginInfoField::CrPlugin => Field::CrPlugin,
            PluginInfoField::ConfigInfo => Field::ConfigInfo,
            PluginInfoField::SingleJobTest => Field::SingleJobTest,
        };
        let value = self.call(
            "get-info-from-plugin",
            |s| on_plugin!(s, p => SelectPlugin::get_info_from_plugin(p.as_mut(), field, None)),
        )?;
        Ok(match value {
            Value::Flag(b) => PluginInfoValue::Flag(b),
            Value::Number(n) => PluginInfoValue::Number(n),
            Value::Config(pairs) => PluginInfoValue::Config(pairs.into_host()),
        })
    }
}

/// A native priority build: the same [`priority::Plugin`](PriorityPlugin)
/// value the component exports.
enum Priority {
    Multifactor(Box<PriorityMultifactor>),
    Basic(Box<PriorityBasic>),
}

/// `$body` with `$p` bound to the plugin value, whichever it is.
macro_rules! on_priority {
    ($priority:expr, $p:ident => $body:expr) => {
        match $priority {
            Priority::Multifactor($p) => $body,
            Priority::Basic($p) => $body,
        }
    };
}

/// A priority plugin built natively, as a [`Prioritizer`].
pub struct NativePrioritizer {
    priority: Priority,
    plugin: &'static str,
    clock: Arc<VirtualClock>,
    /// slurmctld's `lowest_prio`, which priority/basic counts down from.
    lowest_prio: u32,
}

impl NativePrioritizer {
    /// The plugin of `plugin_type` after `init` with `config`; `lowest_prio`
    /// starts at TOP_PRIORITY (0xffff0000), as in slurmctld.
    ///
    /// # Errors
    ///
    /// [`NativeError::Unknown`] for a type without a native priority build,
    /// [`NativeError::Init`] when `init` refuses the configuration.
    pub fn new(
        plugin_type: &str,
        config: &PriorityConfig,
        clock: Arc<VirtualClock>,
    ) -> Result<NativePrioritizer, NativeError> {
        let plugin = native_name(plugin_type)?;
        let config = config.to_sdk();
        let priority = host_call(plugin, &clock, || match plugin {
            "priority/multifactor" => {
                PriorityMultifactor::init(config).map(|p| Priority::Multifactor(Box::new(p)))
            }
            "priority/basic" => PriorityBasic::init(config).map(|p| Priority::Basic(Box::new(p))),
            _ => Err(Error::new(codes::EINVAL, "not a priority plugin")),
        })
        .map_err(|error| NativeError::Init { plugin, error })?;
        Ok(NativePrioritizer {
            priority,
            plugin,
            clock,
            lowest_prio: 0xffff_0000,
        })
    }

    fn call<R>(
        &mut self,
        function: &'static str,
        f: impl FnOnce(&mut Priority) -> Result<R, Error>,
    ) -> Result<R, CallError> {
        let priority = &mut self.priority;
        host_call(self.plugin, &self.clock, || f(priority))
            .map_err(|e| plugin_error(self.plugin, function, e))
    }
}

/// Each call is the plugin's own [`priority::Plugin`](PriorityPlugin)
/// method, the one its component export calls.
impl Prioritizer for NativePrioritizer {
    /// `set` (a directly set priority kept, as the SDK's export keeps it),
    /// then `lowest_prio` as the host's `PriorityPlugin::assign` keeps it
    /// (Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c
    /// `priority_p_set`): after a non-direct priority `p`,
    /// `lowest_prio = min(lowest_prio, p + nice)`. A priority of 0 (held)
    /// is refused, as the host refuses it from a component.
    fn submit(&mut self, job: &Job) -> Result<u32, CallError> {
        let last_prio = self.lowest_prio;
        let sdk_job = job.to_sdk();
        let p = self.call("set", |priority| {
            on_priority!(priority, p => PriorityPlugin::set(p.as_mut(), last_prio, &sdk_job))
        })?;
        let p = if job.direct_set_priority {
            job.priority
        } else {
            p
        };
        if p == 0 {
            return Err(CallError::Invalid {
                plugin: self.plugin.to_owned(),
                function: "set",
                reason: format!("priority 0 for job {} (0 means held)", job.job_id),
            });
        }
        if !job.direct_set_priority {
            let relative =
                (i64::from(p) + i64::from(job.details.nice)).clamp(0, i64::from(u32::MAX)) as u32;
            self.lowest_prio = self.lowest_prio.min(relative);
        }
        Ok(p)
    }

    fn recalculate(
        &mut self,
        running: &[Job],
        pending: &[u32],
    ) -> Result<Vec<(u32, u32)>, CallError> {
        let running: Vec<_> = running.iter().map(ToSdk::to_sdk).collect();
        self.call("calculate", |priority| {
            on_priority!(priority, p => PriorityPlugin::calculate(p.as_mut(), &running, pending))
        })
    }

    fn end(&mut self, job: &Job) -> Result<(), CallError> {
        let job = job.to_sdk();
        self.call(
            "job-end",
            |priority| on_priority!(priority, p => PriorityPlugin::job_end(p.as_mut(), &job)),
        )
    }

    fn associations(&mut self, updates: &[AssociationUpdate]) -> Result<(), CallError> {
        let updates: Vec<_> = updates.iter().map(ToSdk::to_sdk).collect();
        self.call("update-associations", |priority| {
            on_priority!(priority, p => PriorityPlugin::update_associations(p.as_mut(), updates))
        })
    }
}
