//! # slurm-wasm-srun
//!
//! What srun turns its task options into, as Slurm 22.05.8 does: the
//! `cpu_bind_type` bits and list of `--cpu-bind` ([`cpu_bind`], slurm.h
//! `cpu_bind_type_t`, common/slurm_resource_info.c
//! `slurm_verify_cpu_bind`) and the `task_dist` encoding of
//! `--distribution` ([`task_dist`], slurm.h `task_dist_states_t`).
//!
//! Both sides use it: task/affinity reads the bits slurmd hands it (the
//! guest), and whatever plays srun (`slurm-wasm task run`, the tests)
//! builds them from the words users type. No dependencies, so it builds
//! for wasm32-wasip2 and natively alike.

#![deny(missing_docs)]

pub mod cpu_bind;
pub mod task_dist;
