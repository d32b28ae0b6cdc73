//! `select/linear`: Slurm's whole-node selection plugin (spec section 1),
//! as Slurm 22.05.8 behaves.
//!
//! The algorithm is plain Rust that builds natively as well:
//!
//! * [`bits`]: word-at-a-time iteration over node bitmaps;
//! * [`config`]: `SelectTypeParameters` and partition `OverSubscribe`;
//! * [`jobs`]: what linear remembers of each running or suspended job;
//! * [`usage`]: the usage tables ("cr record", 1.1) and their transitions (1.6);
//! * [`gres`]: configured GRES counts by column, for the filter;
//! * [`filter`]: available CPUs (1.2) and node filtering (1.3);
//! * [`placement`]: best fit over consecutive node sets (1.4);
//! * [`modes`]: RUN_NOW with job mates and preemption, TEST_ONLY,
//!   WILL_RUN (1.5);
//! * [`resources`]: the `job_resources` linear builds (1.7);
//! * [`state`]: the state blob of `state-save` / `state-restore`;
//! * [`instance`]: [`Linear`], the plugin instance whose methods take the
//!   contract's records (used natively by benchmarks, and by [`plugin`]).
//!
//! [`plugin`] exports it through the `select-plugin` world.

pub mod bits;
pub mod config;
pub mod filter;
pub mod gres;
pub mod instance;
pub mod jobs;
pub mod modes;
pub mod placement;
pub mod plugin;
pub mod resources;
pub mod state;
pub mod usage;

pub use instance::Linear;

#[cfg(test)]
mod tests;
