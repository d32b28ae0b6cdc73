//! The identity a plugin reports from `describe()`.

use crate::types::PluginIdentity;
use crate::version::{CONTRACT_VERSION, SLURM_22_05_8};

/// The identity of a plugin built with this SDK: `plugin_type` (the slot
/// and name, e.g. `"priority/basic"`) and `plugin_name` as given, plugin
/// version [`SLURM_22_05_8`] (Slurm loads a plugin only when its version
/// matches the release), contract version [`CONTRACT_VERSION`], no plugin id
/// and no required capabilities.
///
/// Set anything else with struct update syntax:
///
/// ```
/// use slurm_wasm_sdk::types::{Capability, PluginIdentity};
///
/// let identity = PluginIdentity {
///     required_capabilities: vec![Capability::Topology],
///     ..slurm_wasm_sdk::identity("task/pinned", "task plugin pinning to cores")
/// };
/// assert_eq!(identity.plugin_type, "task/pinned");
/// ```
pub fn identity(plugin_type: &str, plugin_name: &str) -> PluginIdentity {
    PluginIdentity {
        plugin_type: plugin_type.into(),
        plugin_name: plugin_name.into(),
        plugin_version: SLURM_22_05_8,
        plugin_id: None,
        contract_version: CONTRACT_VERSION.into(),
        required_capabilities: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_the_boilerplate() {
        let identity = identity("priority/basic", "Priority BASIC plugin");
        assert_eq!(identity.plugin_type, "priority/basic");
        assert_eq!(identity.plugin_name, "Priority BASIC plugin");
        assert_eq!(identity.plugin_version, 0x160508);
        assert_eq!(identity.plugin_id, None);
        assert_eq!(identity.contract_version, CONTRACT_VERSION);
        assert!(identity.required_capabilities.is_empty());
    }
}
