//! `priority/basic`: Slurm's FIFO priority plugin
//! (src/plugins/priority/basic/priority_basic.c).
//!
//! The algorithm lives in [`fifo`] and [`reservation`], plain Rust that
//! builds natively as well; [`plugin`] exports it through the
//! `priority-plugin` world.

mod fifo;
mod plugin;
mod reservation;

pub use plugin::PriorityBasic;
