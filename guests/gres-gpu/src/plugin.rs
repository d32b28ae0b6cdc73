//! The `gres-plugin` world export of gres/gpu: [`Gpu`] as the SDK's
//! `gres::Plugin` through gres-common's [`export_gres_plugin!`], kept in
//! its [`GresPlugin::state`] between calls (`init` creates it, `fini` drops
//! it; a call before `init` fails with a clear error).
//!
//! [`GresPlugin::state`]: gres_common::GresPlugin::state
//! [`export_gres_plugin!`]: gres_common::export_gres_plugin

use crate::Gpu;

/// gres/gpu as the component exports it (what native tests call).
pub type GresGpu = slurm_wasm_sdk::gres::Export<Gpu>;

gres_common::export_gres_plugin!(Gpu);
