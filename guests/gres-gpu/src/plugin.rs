//! The `gres-plugin` world export of gres/gpu: gres-common's [`Export`] over
//! [`Gpu`], which it keeps in [`GresPlugin::state`] between calls (`init`
//! creates it, `fini` drops it; a call before `init` fails with a clear
//! error).
//!
//! [`GresPlugin::state`]: gres_common::GresPlugin::state

use gres_common::Export;

use crate::Gpu;

/// gres/gpu, exported as a component.
pub type GresGpu = Export<Gpu>;

slurm_wasm_sdk::export_gres!(GresGpu);
