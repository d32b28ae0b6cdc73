//! `select/linear`: Slurm's whole-node selection plugin
//! (src/plugins/select/linear/select_linear.c),
//! as Slurm 22.05.8 behaves.
//!
//! The algorithm is plain Rust that builds natively as well:
//!
//! * [`bits`]: word-at-a-time iteration over node bitmaps;
//! * [`config`]: `SelectTypeParameters` and partition `OverSubscribe`;
//! * [`jobs`]: what linear remembers of each running or suspended job;
//! * [`usage`]: the usage tables ("cr record", `_init_node_cr`) and their
//!   transitions (`_add_job_to_nodes`, `_rm_job_from_nodes`);
//! * [`gres`]: configured GRES counts by column, for the filter;
//! * [`filter`]: available CPUs (`_get_avail_cpus`) and node filtering
//!   (`_job_count_bitmap`);
//! * [`placement`]: best fit over consecutive node sets (`_job_test`);
//! * [`modes`]: RUN_NOW with job mates and preemption, TEST_ONLY,
//!   WILL_RUN (`_run_now`, `_test_only`, `_will_run_test`);
//! * [`resources`]: the `job_resources` linear builds
//!   (`_build_select_struct`);
//! * [`state`]: the state blob of `state-save` / `state-restore`;
//! * [`instance`]: [`Linear`], the plugin instance whose methods take the
//!   contract's records (used natively by benchmarks, and by [`plugin`]).
//!
//! [`plugin`] exports it through the `select-plugin` world.

mod config;
mod filter;
mod gres;
mod instance;
mod jobs;
mod modes;
mod placement;
mod plugin;
mod resources;
mod state;
mod usage;

pub use instance::Linear;

#[cfg(test)]
mod tests;
