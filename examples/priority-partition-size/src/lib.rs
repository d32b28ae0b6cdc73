//! `priority/partition_size`: an example third-party priority plugin written
//! with `slurm-wasm-sdk`.
//!
//! Jobs are ordered by partition first, then by size (larger first):
//!
//! ```text
//! priority = PriorityJobFactor(first partition) × PriorityWeightPartition
//!          + job_size_factor × PriorityWeightJobSize
//!          − nice
//! ```
//!
//! clamped to `1..=u32::MAX`; a job whose priority was set explicitly keeps it.
//!
//! The crate has the shape every plugin should have: the rule is plain Rust
//! ([`config`], [`score`], [`state`]) that builds and is tested natively,
//! and [`plugin`] is the thin layer exporting it through the
//! `priority-plugin` world.

pub mod config;
pub mod plugin;
pub mod score;
pub mod state;
