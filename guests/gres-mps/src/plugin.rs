//! The `gres-plugin` world export of gres/mps: [`Mps`] as the SDK's
//! `gres::Plugin` through gres-common's [`export_gres_plugin!`], kept in
//! its [`GresPlugin::state`] between calls (`init` creates it, `fini` drops
//! it; a call before `init` fails with a clear error).
//!
//! [`GresPlugin::state`]: gres_common::GresPlugin::state
//! [`export_gres_plugin!`]: gres_common::export_gres_plugin

use crate::Mps;

/// gres/mps as the component exports it (what native tests call).
pub type GresMps = slurm_wasm_sdk::gres::Export<Mps>;

gres_common::export_gres_plugin!(Mps);
