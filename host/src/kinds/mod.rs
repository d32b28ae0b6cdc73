//! Typed handles for the four plugin kinds.

pub mod gres;
pub mod priority;
pub mod select;
pub mod task;
