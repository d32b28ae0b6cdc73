//! The integration tests that need no live Slurm, one test binary (wasmtime
//! and the host are linked once): `cargo test --test all [module::]`. Each
//! module is the file of that name beside this one; the anchor parsers the
//! replays share are declared here once.

mod anchor_gres;
mod anchor_priority;
mod anchor_select;
mod anchor_task;

mod cache;
mod cli;
mod gres_anchor;
mod gres_cli;
mod gres_gpu;
mod gres_gpu_capabilities;
mod hostile;
mod new_languages;
mod priority_anchor;
mod priority_basic;
mod priority_multifactor;
mod select_anchor;
mod select_cli;
mod select_cons_tres;
mod select_cray_aries;
mod select_linear;
mod select_wrapper;
mod simulate;
mod simulate_native;
mod state_files;
mod step_anchor;
mod taps;
mod task_affinity;
mod task_anchor;
mod task_none;
mod task_run;
