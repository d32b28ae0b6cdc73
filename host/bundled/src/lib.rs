#![deny(missing_docs)]
//! # slurm-wasm-bundled
//!
//! The project's eight plugins, built from `guests/` to wasm32-wasip2
//! components by this crate's build script, for a host to carry:
//! [`BUNDLED`] goes to [`HostOptions::bundled`], and
//! [`PluginSource::Bundled`] then loads them by type.
//!
//! The runtime (`slurm-wasm-host`) carries none itself, so editing a guest
//! rebuilds this crate and what links it, not the runtime.
//!
//! [`PluginSource::Bundled`]: slurm_wasm_host::PluginSource::Bundled

use slurm_wasm_host::bundled::Bundled;
use slurm_wasm_host::{HostOptions, PluginKind};

/// Every bundled plugin (the table `build.rs` writes from its list).
pub const BUNDLED: &[Bundled] = include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// The bundled plugin of `plugin_type` (`priority/basic`).
pub fn find(plugin_type: &str) -> Option<&'static Bundled> {
    slurm_wasm_host::bundled::find(BUNDLED, plugin_type)
}

/// The bundled plugin types, comma-separated, for messages.
pub fn names() -> String {
    slurm_wasm_host::bundled::names(BUNDLED)
}

/// Host options that carry [`BUNDLED`], the rest default.
pub fn host_options() -> HostOptions {
    HostOptions {
        bundled: BUNDLED,
        ..HostOptions::default()
    }
}
