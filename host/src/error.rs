//! Errors of loading and calling plugins.
//!
//! Every error names the plugin (its type, or its file before the type is
//! known) and, for calls, the contract function that failed, and says what
//! limit or rule was hit.

use std::path::PathBuf;
use std::time::Duration;

use crate::bindings::types::Capability;

/// Why a plugin could not be loaded. The host is unaffected.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{source_name}: not a valid WebAssembly component: {reason}")]
    Malformed { source_name: String, reason: String },
    #[error("{source_name}: cannot read: {reason}")]
    Io { source_name: String, reason: String },
    #[error("{source_name}: is a {found} plugin but was loaded into the {slot} slot")]
    WrongSlot {
        source_name: String,
        found: String,
        slot: &'static str,
    },
    #[error(
        "{source_name}: imports `{import}`, which {slot} plugins may not use (allowed: {allowed})"
    )]
    ForbiddenImport {
        source_name: String,
        import: String,
        slot: &'static str,
        allowed: String,
    },
    #[error("{source_name}: does not export what a {slot} plugin must: {reason}")]
    MissingExports {
        source_name: String,
        slot: &'static str,
        reason: String,
    },
    #[error("{source_name}: built against contract slurm:plugin@{found}, this host speaks @{host} ({reason})")]
    IncompatibleContract {
        source_name: String,
        found: String,
        host: &'static str,
        reason: &'static str,
    },
    #[error("plugin {plugin_type}: requires capability `{capability}`, which is not granted to it (grant it in the host configuration: grants = [\"{capability}\"])")]
    CapabilityNotGranted {
        plugin_type: String,
        capability: String,
    },
    #[error("plugin {plugin_type}: requires capability `{capability}`, which {slot} plugins cannot have (a {slot} plugin may import: {allowed})")]
    CapabilityNotAllowed {
        plugin_type: String,
        capability: String,
        slot: &'static str,
        allowed: String,
    },
    /// What `describe` answered breaks the contract's rules for an
    /// identity (type, name, capability list).
    #[error("{source_name}: {reason}")]
    InvalidIdentity { source_name: String, reason: String },
    #[error("plugin {plugin_type}: init failed: {0}", .error)]
    InitFailed {
        plugin_type: String,
        error: Box<CallError>,
    },
    #[error("{source_name}: {reason}")]
    Instantiate { source_name: String, reason: String },
    #[error("unknown bundled plugin `{0}` (bundled: {1})")]
    UnknownBundled(String, String),
    #[error("compiled-component cache {path}: {reason}")]
    Cache { path: PathBuf, reason: String },
}

/// Why a call into a plugin failed. The plugin may be restarted or
/// replaced afterwards according to its failure policy; the host keeps serving.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum CallError {
    /// The plugin returned a Slurm error (its own decision, not a fault).
    #[error("plugin {plugin}: {function} returned error {code}: {message}")]
    Plugin {
        plugin: String,
        function: &'static str,
        code: i32,
        message: String,
    },
    #[error("plugin {plugin}: {function} ran out of fuel (limit {limit} units per call)")]
    Fuel {
        plugin: String,
        function: &'static str,
        limit: u64,
    },
    #[error("plugin {plugin}: {function} passed its wall-clock deadline ({} ms per call)", .limit.as_millis())]
    Deadline {
        plugin: String,
        function: &'static str,
        limit: Duration,
    },
    #[error(
        "plugin {plugin}: {function} hit the memory limit ({limit_bytes} bytes of linear memory)"
    )]
    Memory {
        plugin: String,
        function: &'static str,
        limit_bytes: usize,
    },
    #[error("plugin {plugin}: {function} exhausted the call stack (unbounded recursion?)")]
    Stack {
        plugin: String,
        function: &'static str,
    },
    #[error("plugin {plugin}: {function} trapped: {trap}")]
    Trap {
        plugin: String,
        function: &'static str,
        trap: String,
    },
    /// The plugin called a capability it was not granted and then failed.
    #[error("plugin {plugin}: {function} failed after calling capability `{capability}`, which is not granted to it: {detail}")]
    Denied {
        plugin: String,
        function: &'static str,
        capability: String,
        detail: String,
    },
    /// The plugin returned something the contract forbids.
    #[error("plugin {plugin}: {function} returned an invalid result: {reason}")]
    Invalid {
        plugin: String,
        function: &'static str,
        reason: String,
    },
    /// A fresh instance could not be started (instantiation, `init` or
    /// `state-restore` of a restart failed).
    #[error("plugin {plugin}: could not start an instance to call {function}: {reason}")]
    Start {
        plugin: String,
        function: &'static str,
        reason: String,
    },
    /// A state blob larger than the plugin's [`Limits::state_bytes`]: not
    /// handed to the plugin, not kept for restarts, not written to a file.
    ///
    /// [`Limits::state_bytes`]: crate::Limits::state_bytes
    #[error("plugin {plugin}: {function}: {bytes} bytes of state, more than the limit of {limit_bytes} bytes the host keeps (raise `state_mb` in the plugin's limits)")]
    StateTooLarge {
        plugin: String,
        function: &'static str,
        bytes: usize,
        limit_bytes: usize,
    },
    /// A function other than `init` was called before an `init` succeeded
    /// (a plugin whose `init` failed or faulted never answers).
    #[error("plugin {plugin}: {function} not called: init has not succeeded (call init first)")]
    NotInitialised {
        plugin: String,
        function: &'static str,
    },
    /// The plugin is out of service (failure policy exhausted or `fail`).
    #[error("plugin {plugin}: {function} not called: plugin disabled after {reason}")]
    Disabled {
        plugin: String,
        function: &'static str,
        reason: String,
    },
}

impl CallError {
    /// Did the failure come from a fault (trap, limit) rather than a Slurm
    /// error or an invalid result?
    pub fn is_fault(&self) -> bool {
        !matches!(
            self,
            CallError::Plugin { .. }
                | CallError::Invalid { .. }
                | CallError::Disabled { .. }
                | CallError::NotInitialised { .. }
        )
    }

    /// The Slurm code a C caller gets as errno: the plugin's own code for
    /// plugin errors, `SLURM_ERROR` (-1) otherwise.
    pub fn slurm_code(&self) -> i32 {
        match self {
            CallError::Plugin { code, .. } => *code,
            _ => -1,
        }
    }
}

/// The WIT name of a capability (`gpu-control`).
pub fn capability_name(c: Capability) -> &'static str {
    match c {
        Capability::Log => "log",
        Capability::Clock => "clock",
        Capability::Topology => "topology",
        Capability::Cpuset => "cpuset",
        Capability::Gpu => "gpu",
        Capability::GpuControl => "gpu-control",
    }
}

/// A name that [`Capability`](crate::Capability) or [`Slot`](crate::Slot)
/// does not know, with the names it would have accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{found}`; expected {expected}")]
pub struct UnknownName {
    pub(crate) what: &'static str,
    pub(crate) found: String,
    pub(crate) expected: &'static str,
}
