//! The plugins carried inside the host (built from guests/ by build.rs).

use crate::plugin::Slot;

/// A bundled plugin: its Slurm type, file name and component bytes.
#[derive(Debug, Clone, Copy)]
pub struct Bundled {
    /// The type its `describe` gives and [`PluginSource::Bundled`] names it
    /// by (`select/cons_tres`).
    ///
    /// [`PluginSource::Bundled`]: crate::PluginSource::Bundled
    pub plugin_type: &'static str,
    /// The file build.rs built it to (`select_cons_tres.wasm`).
    pub file_name: &'static str,
    /// Its kind.
    pub slot: Slot,
    /// The component, built for wasm32-wasip2 from guests/.
    pub bytes: &'static [u8],
}

/// Every bundled plugin.
pub const BUNDLED: &[Bundled] = &[
    Bundled {
        plugin_type: "priority/basic",
        file_name: "priority_basic.wasm",
        slot: Slot::Priority,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/priority_basic.wasm")),
    },
    Bundled {
        plugin_type: "priority/multifactor",
        file_name: "priority_multifactor.wasm",
        slot: Slot::Priority,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/priority_multifactor.wasm")),
    },
    Bundled {
        plugin_type: "task/affinity",
        file_name: "task_affinity.wasm",
        slot: Slot::Task,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/task_affinity.wasm")),
    },
    Bundled {
        plugin_type: "select/cons_tres",
        file_name: "select_cons_tres.wasm",
        slot: Slot::Select,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/select_cons_tres.wasm")),
    },
    Bundled {
        plugin_type: "select/linear",
        file_name: "select_linear.wasm",
        slot: Slot::Select,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/select_linear.wasm")),
    },
    Bundled {
        plugin_type: "task/none",
        file_name: "task_none.wasm",
        slot: Slot::Task,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/task_none.wasm")),
    },
    Bundled {
        plugin_type: "gres/gpu",
        file_name: "gres_gpu.wasm",
        slot: Slot::Gres,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/gres_gpu.wasm")),
    },
    Bundled {
        plugin_type: "gres/mps",
        file_name: "gres_mps.wasm",
        slot: Slot::Gres,
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/gres_mps.wasm")),
    },
];

/// The bundled plugin of `plugin_type` (`priority/basic`).
pub fn find(plugin_type: &str) -> Option<&'static Bundled> {
    BUNDLED.iter().find(|b| b.plugin_type == plugin_type)
}

/// The bundled plugin types, comma-separated, for messages.
pub fn names() -> String {
    BUNDLED
        .iter()
        .map(|b| b.plugin_type)
        .collect::<Vec<_>>()
        .join(", ")
}
