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
    /// The bytes are not a component wasmtime can compile: not WebAssembly
    /// at all, a core module rather than a component, or a component that
    /// fails validation.
    #[error("{source_name}: not a valid WebAssembly component: {reason}")]
    Malformed {
        /// The file path, the name given with the bytes, or `bundled <type>`.
        source_name: String,
        /// What is wrong, on one line (the file's first bytes when they
        /// are not WebAssembly's magic number).
        reason: String,
    },
    /// The component file could not be read.
    #[error("{source_name}: cannot read: {reason}")]
    Io {
        /// The file's path.
        source_name: String,
        /// The operating system's error.
        reason: String,
    },
    /// The component is a plugin of another kind: its exports, or the type
    /// its `describe` answered, name a kind other than the slot's.
    #[error("{source_name}: is a {found} plugin but was loaded into the {slot} slot")]
    WrongSlot {
        /// The file path, the name given with the bytes, or `bundled <type>`.
        source_name: String,
        /// The kind its exports name (`gres`), or the plugin type its
        /// `describe` gave (`gres/gpu`).
        found: String,
        /// The kind of the slot it was loaded into (`select`).
        slot: &'static str,
    },
    #[error(
        "{source_name}: imports `{import}`, which {slot} plugins may not use (allowed: {allowed})"
    )]
    /// The component imports a `slurm:plugin` capability interface that the
    /// slot's world does not have (a select plugin importing `cpuset`).
    ForbiddenImport {
        /// The file path, the name given with the bytes, or `bundled <type>`.
        source_name: String,
        /// The import as the component names it
        /// (`slurm:plugin/cpuset@0.1.0`).
        import: String,
        /// The slot's kind.
        slot: &'static str,
        /// The capabilities that kind may import, comma-separated.
        allowed: String,
    },
    #[error("{source_name}: does not export what a {slot} plugin must: {reason}")]
    /// The component lacks an export of the slot's world (the kind's
    /// interface, a function of it, or `describe`), or exports one with
    /// another type.
    MissingExports {
        /// The file path, the name given with the bytes, or `bundled <type>`.
        source_name: String,
        /// The slot's kind.
        slot: &'static str,
        /// wasmtime's account of what is missing or mistyped.
        reason: String,
    },
    #[error("{source_name}: built against contract slurm:plugin@{found}, this host speaks @{host} ({reason})")]
    /// The component was built against a `slurm:plugin` contract version
    /// this host cannot serve (another major version, another minor of a
    /// 0.x contract, or a newer one), named by its interfaces or by its
    /// `describe` answer.
    IncompatibleContract {
        /// The file path, the name given with the bytes, or `bundled <type>`.
        source_name: String,
        /// The version the plugin names (escaped and cut to 40 characters
        /// when it came from `describe`).
        found: String,
        /// The version this host speaks
        /// ([`CONTRACT_VERSION`](crate::CONTRACT_VERSION)).
        host: &'static str,
        /// Why the two are incompatible (`different major version`,
        /// `plugin is newer than the host`, `not a semver version`).
        reason: &'static str,
    },
    #[error("plugin {plugin_type}: requires capability `{capability}`, which is not granted to it (grant it in the host configuration: grants = [\"{capability}\"])")]
    /// The plugin's `describe` lists a required capability its kind may
    /// have but its [`Grants`](crate::Grants) do not include.
    CapabilityNotGranted {
        /// The type `describe` gave (`task/affinity`).
        plugin_type: String,
        /// The capability's WIT name (`cpuset`).
        capability: String,
    },
    #[error("plugin {plugin_type}: requires capability `{capability}`, which {slot} plugins cannot have (a {slot} plugin may import: {allowed})")]
    /// The plugin's `describe` lists a required capability that no plugin
    /// of its kind may have (a priority plugin requiring `gpu`), whatever
    /// is granted.
    CapabilityNotAllowed {
        /// The type `describe` gave.
        plugin_type: String,
        /// The capability's WIT name.
        capability: String,
        /// The slot's kind.
        slot: &'static str,
        /// The capabilities that kind may import, comma-separated.
        allowed: String,
    },
    /// What `describe` answered breaks the contract's rules for an
    /// identity (type, name, capability list).
    #[error("{source_name}: {reason}")]
    InvalidIdentity {
        /// The file path, the name given with the bytes, or `bundled <type>`.
        source_name: String,
        /// The rule broken, with the offending value escaped and cut short.
        reason: String,
    },
    /// The component could not be linked against the slot's world (an
    /// import the host does not provide), or its start function or
    /// `describe` faulted (trap, fuel, deadline, memory) in the throwaway
    /// instance that asks it to describe itself.
    #[error("{source_name}: {reason}")]
    Instantiate {
        /// The file path, the name given with the bytes, or `bundled <type>`.
        source_name: String,
        /// wasmtime's linking error, or `describe failed: ` and the fault.
        reason: String,
    },
    /// [`PluginSource::Bundled`](crate::PluginSource::Bundled) names a type
    /// this build does not carry: the type asked for, then the bundled
    /// types, comma-separated.
    #[error("unknown bundled plugin `{0}` (bundled: {1})")]
    UnknownBundled(String, String),
    /// A select wrapper (a component importing `select`, the
    /// `select-wrapper` world) was loaded without the inner plugin that
    /// import needs.
    #[error("{plugin_type} is a select wrapper: it needs an inner select plugin (`inner` in its slot's configuration, `wrapper.wasm+select/<inner>` in a simulation stack)")]
    WrapperWithoutInner {
        /// The wrapper's type.
        plugin_type: String,
    },
    /// An inner plugin was given for a select plugin that is no wrapper
    /// (it does not import `select`).
    #[error("{plugin_type} is not a select wrapper (it does not import `select`), so it cannot run over {inner}")]
    NotAWrapper {
        /// The plugin's type.
        plugin_type: String,
        /// The inner plugin given.
        inner: String,
    },
    /// A select stack of no plugin at all.
    #[error("a select stack names no plugin")]
    NoLayers,
    /// The compiled-component cache directory cannot be used (not a
    /// directory, not the effective user's, writable by others, or its key
    /// cannot be read or made), or a new entry cannot be written or loaded
    /// back. An entry that fails its check is recompiled, not reported.
    #[error("compiled-component cache {path}: {reason}")]
    Cache {
        /// The directory or file at fault.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// Why a call into a plugin failed. The plugin may be restarted or
/// replaced afterwards according to its failure policy; the host keeps serving.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum CallError {
    /// The plugin returned a Slurm error (its own decision, not a fault).
    #[error("plugin {plugin}: {function} returned error {code}: {message}")]
    Plugin {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// The Slurm error code it returned (`plugin-error.code`, an
        /// `errno` or `ESLURM_*` value).
        code: i32,
        /// Its message, escaped and cut to 4,096 characters.
        message: String,
    },
    /// The call used up its fuel ([`Limits::fuel_per_call`]).
    ///
    /// [`Limits::fuel_per_call`]: crate::Limits::fuel_per_call
    #[error("plugin {plugin}: {function} ran out of fuel (limit {limit} units per call)")]
    Fuel {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// The fuel one call may use.
        limit: u64,
    },
    /// The call ran, or waited in WASI, past its wall-clock deadline
    /// ([`Limits::deadline`], to within [`EPOCH_TICK`]).
    ///
    /// [`Limits::deadline`]: crate::Limits::deadline
    /// [`EPOCH_TICK`]: crate::EPOCH_TICK
    #[error("plugin {plugin}: {function} passed its wall-clock deadline ({} ms per call)", .limit.as_millis())]
    Deadline {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// The time one call may take.
        limit: Duration,
    },
    /// The plugin trapped after the host refused to grow its linear memory
    /// past [`Limits::memory_bytes`].
    ///
    /// [`Limits::memory_bytes`]: crate::Limits::memory_bytes
    #[error(
        "plugin {plugin}: {function} hit the memory limit ({limit_bytes} bytes of linear memory)"
    )]
    Memory {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// The linear memory one instance may hold, in bytes.
        limit_bytes: usize,
    },
    /// The call overflowed wasmtime's stack (deep or unbounded recursion).
    #[error("plugin {plugin}: {function} exhausted the call stack (unbounded recursion?)")]
    Stack {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
    },
    /// The call trapped for any other reason (`unreachable`, a Rust panic,
    /// an out-of-bounds access, a failed host call).
    #[error("plugin {plugin}: {function} trapped: {trap}")]
    Trap {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// wasmtime's description of the trap and its causes, escaped and
        /// cut to 4,096 characters.
        trap: String,
    },
    /// The plugin called a capability it was not granted and then failed.
    #[error("plugin {plugin}: {function} failed after calling capability `{capability}`, which is not granted to it: {detail}")]
    Denied {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// The first capability it was refused, by WIT name (`cpuset`).
        capability: String,
        /// Its error message or `trap: ` and the trap, escaped and cut to
        /// 4,096 characters.
        detail: String,
    },
    /// The plugin returned something the contract forbids (an allocation
    /// outside the candidates, a priority of 0, an environment variable a
    /// gres plugin may not set, ...). The plugin keeps running: its answer
    /// is discarded, not treated as a fault.
    #[error("plugin {plugin}: {function} returned an invalid result: {reason}")]
    Invalid {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// The rule the answer broke.
        reason: String,
    },
    /// A fresh instance could not be started (instantiation, `init` or
    /// `state-restore` of a restart failed).
    #[error("plugin {plugin}: could not start an instance to call {function}: {reason}")]
    Start {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// Which step of the start failed and how (the fault, or the
        /// error a replayed call returned).
        reason: String,
    },
    /// A state blob larger than the plugin's [`Limits::state_bytes`]: not
    /// handed to the plugin, not kept for restarts, not written to a file.
    ///
    /// [`Limits::state_bytes`]: crate::Limits::state_bytes
    #[error("plugin {plugin}: {function}: {bytes} bytes of state, more than the limit of {limit_bytes} bytes the host keeps (raise `state_mb` in the plugin's limits)")]
    StateTooLarge {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// The blob's size in bytes.
        bytes: usize,
        /// The largest blob the host keeps, in bytes.
        limit_bytes: usize,
    },
    /// A function other than `init` was called before an `init` succeeded
    /// (a plugin whose `init` failed or faulted never answers).
    #[error("plugin {plugin}: {function} not called: init has not succeeded (call init first)")]
    NotInitialised {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
    },
    /// A select wrapper's call failed in its inner plugin: a fault, an
    /// answer the host refused, the inner plugin out of service (its Slurm
    /// errors reach the wrapper as answers instead). The inner plugin's
    /// failure policy counted it; the wrapper's does not, and the wrapper's
    /// interrupted instance is replaced by a fresh one on its next call.
    #[error("plugin {plugin}: {function} failed in its inner plugin: {error}")]
    Inner {
        /// The wrapper's type.
        plugin: String,
        /// The wrapper's contract function that was interrupted.
        function: &'static str,
        /// The inner plugin's error, naming it and its own function.
        error: Box<CallError>,
    },
    /// The plugin is out of service (failure policy exhausted or `fail`).
    #[error("plugin {plugin}: {function} not called: plugin disabled after {reason}")]
    Disabled {
        /// The plugin's type (its fallback's once that took over).
        plugin: String,
        /// The contract function called, by its WIT name (`job-test`,
        /// `select-nodeinfo.get`).
        function: &'static str,
        /// What disabled it: the fault under `fail`, the count of faults
        /// past `max_restarts`, or a fallback that could not load.
        reason: String,
    },
}

impl CallError {
    /// Did the failure come from a fault (trap, limit) rather than a Slurm
    /// error or an invalid result?
    pub fn is_fault(&self) -> bool {
        if let CallError::Inner { error, .. } = self {
            return error.is_fault();
        }
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

/// A name that [`Capability`](crate::Capability) or [`PluginKind`](crate::PluginKind)
/// does not know, with the names it would have accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{found}`; expected {expected}")]
pub struct UnknownName {
    pub(crate) what: &'static str,
    pub(crate) found: String,
    pub(crate) expected: &'static str,
}
