//! The `gres-plugin` world export of gres/mps: gres-common's [`Export`] over
//! [`Mps`], which it keeps in [`GresPlugin::state`] between calls (`init`
//! creates it, `fini` drops it; a call before `init` fails with a clear
//! error, except `step_hardware_init` / `step_hardware_fini`, which do
//! nothing).
//!
//! [`GresPlugin::state`]: gres_common::GresPlugin::state

use gres_common::Export;

use crate::Mps;

/// gres/mps, exported as a component.
pub type GresMps = Export<Mps>;

slurm_wasm_sdk::export_gres!(GresMps);
