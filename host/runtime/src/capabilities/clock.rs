//! The `clock` capability: wall time, or virtual time in simulations.
//!
//! The same [`Clock`] also answers WASI's `wall-clock` and `monotonic-clock`
//! (`WasiClocks`), so a plugin reading `std::time::SystemTime` in a
//! simulation sees the simulated time, as it does through the capability.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A source of time for plugins.
pub trait Clock: Send + Sync {
    /// Seconds since the Unix epoch.
    fn now(&self) -> i64;
    /// Nanoseconds from an arbitrary, fixed origin; never decreases.
    fn monotonic_nanos(&self) -> u64;
    /// Time since the Unix epoch at the clock's resolution (whole seconds
    /// unless the clock says otherwise); before the epoch reads as zero.
    fn wall(&self) -> Duration {
        Duration::from_secs(self.now().max(0) as u64)
    }
    /// The smallest step [`Clock::wall`] and [`Clock::monotonic_nanos`]
    /// take.
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
}

/// WASI's `wall-clock` and `monotonic-clock` answered by a [`Clock`].
#[derive(Clone)]
pub(crate) struct WasiClocks(pub Arc<dyn Clock>);

impl wasmtime_wasi::HostWallClock for WasiClocks {
    fn resolution(&self) -> Duration {
        self.0.resolution()
    }

    fn now(&self) -> Duration {
        self.0.wall()
    }
}

impl wasmtime_wasi::HostMonotonicClock for WasiClocks {
    fn resolution(&self) -> u64 {
        self.0.resolution().as_nanos().min(u128::from(u64::MAX)) as u64
    }

    fn now(&self) -> u64 {
        self.0.monotonic_nanos()
    }
}

/// The machine's clocks.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

fn process_start() -> Instant {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *START.get_or_init(Instant::now)
}

impl Clock for SystemClock {
    fn now(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }

    fn monotonic_nanos(&self) -> u64 {
        process_start().elapsed().as_nanos() as u64
    }

    fn wall(&self) -> Duration {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
    }

    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }
}

/// Time that only moves when told to: a simulation sets it before each event,
/// so plugins see ages and decay in simulated time.
#[derive(Debug, Default)]
pub struct VirtualClock {
    seconds: AtomicI64,
}

impl VirtualClock {
    /// A clock reading `start` seconds since the Unix epoch until
    /// [`VirtualClock::set`] moves it; its monotonic counter is the same
    /// time in nanoseconds (0 before the epoch).
    pub fn new(start: i64) -> Self {
        VirtualClock {
            seconds: AtomicI64::new(start),
        }
    }

    /// Moves the clock to `seconds`.
    pub fn set(&self, seconds: i64) {
        self.seconds.store(seconds, Ordering::SeqCst);
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> i64 {
        self.seconds.load(Ordering::SeqCst)
    }

    fn monotonic_nanos(&self) -> u64 {
        (self.now().max(0) as u64).saturating_mul(1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_clock_moves_only_when_set() {
        let clock = VirtualClock::new(100);
        assert_eq!(clock.now(), 100);
        clock.set(160);
        assert_eq!(clock.now(), 160);
        assert_eq!(clock.monotonic_nanos(), 160_000_000_000);
    }
}
