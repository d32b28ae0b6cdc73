//! Plugins as values: write a kind's `Plugin` trait (only the functions
//! your policy needs: every other one has the default a Slurm plugin that
//! does nothing there would have), and export it with the kind's macro in
//! its `plugin` form:
//!
//! ```text
//! use slurm_wasm_sdk::priority::{Plugin, PriorityConfig};
//! use slurm_wasm_sdk::types::Job;
//! use slurm_wasm_sdk::Error;
//!
//! struct Small;
//! impl Plugin for Small {
//!     const TYPE: &'static str = "priority/small";
//!     const NAME: &'static str = "small jobs first";
//!     fn init(_config: PriorityConfig) -> Result<Self, Error> { Ok(Small) }
//!     fn set(&mut self, _last_prio: u32, job: &Job) -> Result<u32, Error> {
//!         Ok(1_000_000 - job.details.min_cpus.min(999_999))
//!     }
//! }
//! slurm_wasm_sdk::export_priority!(plugin Small);
//! ```
//!
//! The value lives between calls in a [`PluginState`] the macro declares, as
//! a C plugin keeps its state in globals: the contract's `init` creates it,
//! `fini` drops it, and a call that needs it before `init` (or after
//! `fini`) fails with `<plugin type>: called before init`. In a native
//! build (tests) the kind's `Export<P>` is the same adapter the component
//! exports, so tests call the contract functions on it directly.

use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::Error;

#[cfg(feature = "gres")]
pub mod gres;
#[cfg(feature = "priority")]
pub mod priority;
#[cfg(feature = "select")]
pub mod select;
#[cfg(feature = "task")]
pub mod task;

/// Where a plugin value lives between calls: empty until `init`, emptied
/// again by `fini`. A call that panicked (a trap in a component, which the
/// host does not enter again) leaves the lock poisoned; a native caller
/// takes it over as is.
pub struct PluginState<P>(Mutex<Option<P>>);

impl<P> PluginState<P> {
    /// No plugin yet.
    pub const fn new() -> Self {
        PluginState(Mutex::new(None))
    }

    fn lock(&self) -> MutexGuard<'_, Option<P>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes `plugin` the state (what `init` does), dropping any earlier one.
    pub fn set(&self, plugin: P) {
        *self.lock() = Some(plugin);
    }

    /// Takes the state out (what `fini` does).
    pub fn take(&self) -> Option<P> {
        self.lock().take()
    }

    /// What `fini` does: takes the plugin out and runs its own `fini` on it
    /// (`fini`); succeeds without one.
    pub fn finish(&self, fini: impl FnOnce(&mut P) -> Result<(), Error>) -> Result<(), Error> {
        match self.take() {
            Some(mut plugin) => fini(&mut plugin),
            None => Ok(()),
        }
    }

    /// Runs `f` on the plugin; `<plugin_type>: called before init` when
    /// there is none.
    pub fn with<R>(
        &self,
        plugin_type: &str,
        f: impl FnOnce(&mut P) -> Result<R, Error>,
    ) -> Result<R, Error> {
        match self.lock().as_mut() {
            Some(plugin) => f(plugin),
            None => Err(Error::generic(format!("{plugin_type}: called before init"))),
        }
    }
}

impl<P> Default for PluginState<P> {
    fn default() -> Self {
        PluginState::new()
    }
}

/// The static a plugin type lives in: implemented by the export macros'
/// `plugin` form, never by hand.
#[doc(hidden)]
pub trait HasState: Sized + 'static {
    fn state() -> &'static PluginState<Self>;
}

/// Implements [`HasState`] for `$ty` with a static of its own.
#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_state {
    ($ty:ty) => {
        impl $crate::plugin::HasState for $ty {
            fn state() -> &'static $crate::plugin::PluginState<Self> {
                static STATE: $crate::plugin::PluginState<$ty> = $crate::plugin::PluginState::new();
                &STATE
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_is_empty_until_set_and_after_take() {
        let state: PluginState<u32> = PluginState::new();
        let e = state.with("priority/x", |v| Ok(*v)).unwrap_err();
        assert_eq!(e.message, "priority/x: called before init");
        state.set(7);
        assert_eq!(state.with("priority/x", |v| Ok(*v)).unwrap(), 7);
        assert_eq!(state.take(), Some(7));
        assert!(state.with("priority/x", |v| Ok(*v)).is_err());
    }
}
