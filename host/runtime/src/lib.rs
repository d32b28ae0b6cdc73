#![deny(missing_docs)]
//! # slurm-wasm-host
//!
//! Runs Slurm scheduler plugins (select, gres, priority, task) compiled to
//! WebAssembly components against the `slurm:plugin` contract (`wit/`).
//!
//! * [`Host`]: one shared engine, compiled-component cache, epoch ticker and
//!   capability providers.
//! * Typed handles, one per kind: [`SelectPlugin`], [`GresPlugin`],
//!   [`PriorityPlugin`], [`TaskPlugin`]. Each call runs under the plugin's
//!   [`Limits`] (fuel, wall-clock deadline, memory); a fault is reported as a
//!   [`CallError`] naming plugin, function and limit, and the plugin's
//!   [`FailurePolicy`] decides what serves the next call.
//! * Capabilities are denied unless granted ([`Grants`]); WASI is linked
//!   with nothing behind it.
//! * [`state`]: atomic, checksummed state files.
//! * [`host_config`] reads the host's TOML file. What Slurm's daemons do
//!   around a plugin (slurm.conf and gres.conf, the records `init` takes,
//!   the controller) is the `slurm-wasm-slurm` crate's (`host/slurm`).

pub mod bindings;
pub mod bundled;
mod cache;
pub mod capabilities;
pub mod conformance;
mod engine;
mod error;
pub mod fixtures;
pub mod host_config;
pub mod inspect;
pub mod kinds;
mod limits;
mod plugin;
pub mod plugin_log;
pub mod ranges;
pub mod recording;
pub mod replay;
mod store;
pub mod tap;
mod validate;
mod wasi_log;
mod wasi_poll;

pub use bindings::types;
pub use capabilities::{Capability, Grants, Services};
#[cfg(feature = "profiling")]
pub use engine::Profiler;
pub use engine::{Host, HostOptions};
pub use error::{capability_name, CallError, LoadError, UnknownName};
pub use kinds::gres::GresPlugin;
pub use kinds::priority::PriorityPlugin;
pub use kinds::select::SelectPlugin;
pub use kinds::task::TaskPlugin;
pub use limits::{FailurePolicy, Limits, EPOCH_TICK};
pub use plugin::{
    CallStats, PluginKind, PluginSettings, PluginSource, ReloadError, ReloadStatus,
    CONTRACT_VERSION,
};
pub mod state;

/// Saving or restoring a plugin's state file failed: in the plugin, or in
/// the file (corrupt, truncated, foreign).
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    /// The plugin's `state-save` or `state-restore` failed, or the blob is
    /// over its [`Limits::state_bytes`].
    #[error(transparent)]
    Call(#[from] CallError),
    /// The state file could not be written or read, or was refused:
    /// truncated, corrupt, oversized, or written by another plugin type or
    /// by a component this plugin does not accept state from.
    #[error(transparent)]
    File(#[from] state::StateError),
}
