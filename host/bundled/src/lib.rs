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

/// Every bundled plugin.
pub const BUNDLED: &[Bundled] = &[
    Bundled {
        plugin_type: "priority/basic",
        file_name: "priority_basic.wasm",
        kind: PluginKind::Priority,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/priority_basic.wasm")),
    },
    Bundled {
        plugin_type: "priority/multifactor",
        file_name: "priority_multifactor.wasm",
        kind: PluginKind::Priority,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/priority_multifactor.wasm")),
    },
    Bundled {
        plugin_type: "task/affinity",
        file_name: "task_affinity.wasm",
        kind: PluginKind::Task,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/task_affinity.wasm")),
    },
    Bundled {
        plugin_type: "select/cons_tres",
        file_name: "select_cons_tres.wasm",
        kind: PluginKind::Select,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/select_cons_tres.wasm")),
    },
    Bundled {
        plugin_type: "select/linear",
        file_name: "select_linear.wasm",
        kind: PluginKind::Select,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/select_linear.wasm")),
    },
    Bundled {
        plugin_type: "task/none",
        file_name: "task_none.wasm",
        kind: PluginKind::Task,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/task_none.wasm")),
    },
    Bundled {
        plugin_type: "gres/gpu",
        file_name: "gres_gpu.wasm",
        kind: PluginKind::Gres,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/gres_gpu.wasm")),
    },
    Bundled {
        plugin_type: "gres/mps",
        file_name: "gres_mps.wasm",
        kind: PluginKind::Gres,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/gres_mps.wasm")),
    },
];

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
