//! The shims inside real Slurm 22.05.8 daemons, and the simulator's sweep
//! as a Slurm job array (the anchor cluster, as root; each test starts what
//! it needs and stops it, and skips, saying why, without root or the
//! anchor): `cargo test --test live [module::]`.

// The select shim compares with part of what the replays parse.
#[allow(dead_code)]
mod anchor_select;
mod live_slurm;

mod gres_shim;
mod priority_shim;
mod select_shim;
mod simulate_sweep;
mod task_shim;
