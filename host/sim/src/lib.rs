//! # slurm-wasm-sim
//!
//! Policy experiments: a workload (a real trace or a synthetic one) is
//! replayed in virtual time on a described cluster through stacks of
//! slurm-wasm plugins (a select plugin and a priority plugin, loaded by the
//! host like any other), and the schedules are compared.
//!
//! * [`workload`]: the jobs of a trace, whatever format they came from;
//! * [`outcome`]: what happened to each job in one simulated schedule;
//! * [`engine`]: the discrete-event replay through one policy stack;
//! * [`compare`]: several stacks on the same workload, in parallel;
//! * [`agreement`]: how close a simulated schedule is to the one the trace
//!   recorded;
//! * `native` (feature `native`): the bundled plugins' native builds as a
//!   stack, for the wasm/native ratio.

pub mod agreement;
pub mod cluster_from_trace;
pub mod compare;
pub mod engine;
pub mod hazards;
pub mod input;
pub mod metrics;
#[cfg(feature = "native")]
pub mod native;
pub mod outcome;
pub mod report;
pub mod sacct;
pub mod swf;
pub mod synthetic;
pub mod workload;
