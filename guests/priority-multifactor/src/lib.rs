//! `priority/multifactor`: Slurm's multifactor priority plugin
//! (src/plugins/priority/multifactor) as a WebAssembly component.
//!
//! The algorithm is plain Rust that builds natively as well:
//!
//! * [`config`]: the Priority* settings read from `slurm.conf` options;
//! * [`tree`]: the association tree, shares and usage; [`qos`]: the QOS
//!   table; [`usage`]: usage and reserved run-seconds;
//! * [`classic`] and [`fair_tree`]: the two fair-share algorithms;
//! * [`decay`]: usage accumulation and decay; [`reset`]: usage reset
//!   periods;
//! * [`factors`]: the priority formula; [`sprio`]: the `sprio` rows;
//! * [`state`]: the saved state; [`job`]: what the plugin reads of a job;
//! * [`instance`]: one plugin instance tying them together.
//!
//! [`plugin`] exports it through the `priority-plugin` world, taking the
//! time from the host's clock.

mod classic;
mod config;
mod decay;
mod factors;
mod fair_tree;
mod instance;
mod job;
mod plugin;
mod qos;
mod reset;
mod sprio;
mod state;
mod tree;
mod usage;

pub use plugin::PriorityMultifactor;
