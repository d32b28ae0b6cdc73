//! # slurm-wasm-sim
//!
//! Policy experiments: a workload (a real trace or a synthetic one) is
//! replayed in virtual time on a described cluster through stacks of
//! slurm-wasm plugins (a select plugin and a priority plugin, loaded by the
//! host like any other), and the schedules are compared.
//!
//! * [`workload`]: the jobs of a trace, whatever format they came from;
//! * [`outcome`]: what happened to each job in one simulated schedule.

pub mod outcome;
pub mod workload;
