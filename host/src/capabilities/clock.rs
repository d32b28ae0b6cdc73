//! The `clock` capability: wall time, or virtual time in simulations.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A source of time for plugins.
pub trait Clock: Send + Sync {
    /// Seconds since the Unix epoch.
    fn now(&self) -> i64;
    /// Nanoseconds from an arbitrary, fixed origin; never decreases.
    fn monotonic_nanos(&self) -> u64;
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
}

/// Time that only moves when told to: a simulation sets it before each event,
/// so plugins see ages and decay in simulated time.
#[derive(Debug, Default)]
pub struct VirtualClock {
    seconds: AtomicI64,
}

impl VirtualClock {
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
