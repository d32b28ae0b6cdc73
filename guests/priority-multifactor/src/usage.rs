//! Accumulated usage of an association or a QOS (`usage_raw`,
//! `usage_tres_raw`, `grp_used_wall`) and reserved TRES run-seconds
//! (`grp_used_tres_run_secs`).
//!
//! TRES names are kept lower-case (`cpu`, `mem`, `gres/gpu`).

use std::collections::BTreeMap;

/// Reserved run-seconds per TRES name.
pub type TresSeconds = BTreeMap<String, u64>;

/// Usage accumulated by jobs and decayed over time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// `usage_raw`: billable TRES-seconds.
    pub raw: f64,
    /// `usage_tres_raw`: TRES-seconds per TRES.
    pub tres: BTreeMap<String, f64>,
    /// `grp_used_wall`: wall-clock seconds.
    pub wall: f64,
}

/// What one job adds to an association or QOS for one period.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Charge {
    pub raw: f64,
    pub wall: f64,
    pub tres: Vec<(String, f64)>,
}

impl Usage {
    /// Multiplies every figure by `factor` (decay).
    pub fn scale(&mut self, factor: f64) {
        self.raw *= factor;
        self.wall *= factor;
        for v in self.tres.values_mut() {
            *v *= factor;
        }
    }

    /// Clears every figure (usage reset).
    pub fn clear(&mut self) {
        self.raw = 0.0;
        self.wall = 0.0;
        self.tres.values_mut().for_each(|v| *v = 0.0);
    }

    /// Adds a job's charge.
    pub fn add(&mut self, charge: &Charge) {
        self.raw += charge.raw;
        self.wall += charge.wall;
        for (name, v) in &charge.tres {
            *self.tres.entry(name.clone()).or_default() += v;
        }
    }

    /// Adds another usage (an account's usage is the sum of its users').
    pub fn add_usage(&mut self, other: &Usage) {
        self.raw += other.raw;
        self.wall += other.wall;
        for (name, v) in &other.tres {
            *self.tres.entry(name.clone()).or_default() += v;
        }
    }
}

/// Releases `amount` run-seconds per TRES, clamping at 0 as Slurm does.
pub fn release(run_secs: &mut TresSeconds, amount: &[(String, u64)]) {
    for (name, secs) in amount {
        if let Some(v) = run_secs.get_mut(name) {
            *v = v.saturating_sub(*secs);
        }
    }
}

/// Adds `amount` run-seconds per TRES.
pub fn reserve(run_secs: &mut TresSeconds, amount: &[(String, u64)]) {
    for (name, secs) in amount {
        let v = run_secs.entry(name.clone()).or_default();
        *v = v.saturating_add(*secs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_add_clear() {
        let mut u = Usage::default();
        u.add(&Charge {
            raw: 10.0,
            wall: 2.0,
            tres: vec![("cpu".into(), 10.0), ("mem".into(), 4.0)],
        });
        u.add(&Charge {
            raw: 10.0,
            wall: 2.0,
            tres: vec![("cpu".into(), 10.0)],
        });
        u.scale(0.5);
        assert_eq!((u.raw, u.wall), (10.0, 2.0));
        assert_eq!(u.tres["cpu"], 10.0);
        assert_eq!(u.tres["mem"], 2.0);
        u.clear();
        assert_eq!((u.raw, u.wall, u.tres["cpu"]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn run_seconds_clamp_at_zero() {
        let mut r = TresSeconds::new();
        reserve(&mut r, &[("cpu".into(), 100)]);
        release(&mut r, &[("cpu".into(), 30), ("mem".into(), 5)]);
        assert_eq!(r["cpu"], 70);
        assert!(!r.contains_key("mem"));
        release(&mut r, &[("cpu".into(), 1000)]);
        assert_eq!(r["cpu"], 0);
    }
}
