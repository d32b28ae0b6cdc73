//! `select_jobinfo_t` of select/linear and select/cons_tres: the SDK's
//! empty [`JobInfo`] (neither plugin keeps anything per job; its `pack`
//! writes nothing), named here for the plugins.

pub use slurm_wasm_sdk::select::info::JobInfo;
