//! Per-plugin resource limits, on by default.

use std::time::Duration;

/// Limits applied to every call of one plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Fuel (roughly, wasm instructions) one call may consume. Deterministic:
    /// the same call on the same state always uses the same fuel.
    pub fuel_per_call: u64,
    /// Wall-clock time one call may take, enforced through epochs with a
    /// granularity of [`EPOCH_TICK`].
    pub deadline: Duration,
    /// Linear memory one instance may hold, in bytes.
    pub memory_bytes: usize,
    /// Elements one table may hold.
    pub table_elements: usize,
    /// Core instances a component may create (components made by Rust
    /// toolchains use a handful).
    pub max_instances: u32,
    /// The largest state blob, in bytes, the host keeps for the plugin: what
    /// `state-save` returns, what `state-restore` and `recv-stepd` are
    /// handed (kept to replay after a restart) and what a state file holds.
    /// A larger one is refused with [`CallError::StateTooLarge`]
    /// (or [`StateError::TooLarge`] for a file) and nothing is kept.
    ///
    /// [`CallError::StateTooLarge`]: crate::CallError::StateTooLarge
    /// [`StateError::TooLarge`]: crate::state::StateError::TooLarge
    pub state_bytes: usize,
}

/// How often the engine's epoch advances.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

impl Default for Limits {
    /// 10 billion fuel, 10 s, 512 MiB of memory, 100,000 table elements, 64
    /// instances, 64 MiB of state: generous for a select plugin on 100,000
    /// nodes, small enough that a runaway plugin is stopped quickly.
    fn default() -> Self {
        Limits {
            fuel_per_call: 10_000_000_000,
            deadline: Duration::from_secs(10),
            memory_bytes: 512 << 20,
            table_elements: 100_000,
            max_instances: 64,
            state_bytes: 64 << 20,
        }
    }
}

impl Limits {
    /// The deadline in epoch ticks (at least one).
    pub fn deadline_ticks(&self) -> u64 {
        (self.deadline.as_nanos() / EPOCH_TICK.as_nanos()).max(1) as u64
    }
}

/// What happens to a plugin after a fault (trap or exhausted limit).
///
/// In every case the faulting call fails with its error; the policy decides
/// what serves the calls after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailurePolicy {
    /// The plugin is disabled: later calls fail at once.
    Fail,
    /// A fresh instance is started, initialised with the last configuration
    /// and the last state saved or restored through the host; after
    /// `max_restarts` faults the plugin is disabled.
    Restart {
        /// Faults after which the plugin is disabled: fault number
        /// `max_restarts + 1` disables it (0: the first fault does).
        max_restarts: u32,
    },
    /// The named bundled plugin (same kind) takes over, initialised like the
    /// failed one; if it also faults `max_restarts` times it is disabled.
    Fallback {
        /// The fallback's plugin type (`priority/basic`); it must be
        /// bundled and of the same kind, else the first fault disables the
        /// plugin.
        plugin: String,
        /// Faults of the fallback after which it is disabled, counted as
        /// for [`FailurePolicy::Restart`].
        max_restarts: u32,
    },
}

impl Default for FailurePolicy {
    fn default() -> Self {
        FailurePolicy::Restart { max_restarts: 3 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_ticks_round_down_but_never_zero() {
        let mut limits = Limits::default();
        assert_eq!(limits.deadline_ticks(), 2000);
        limits.deadline = Duration::from_millis(1);
        assert_eq!(limits.deadline_ticks(), 1);
    }
}
