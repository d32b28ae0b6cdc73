//! The plugin's settings, read once from `slurm.conf` options (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_internal_setup` and
//! `init`, `_decay_thread` for the half-life and reset period): weights, TRES weights, PriorityMaxAge, PriorityDecayHalfLife,
//! PriorityUsageResetPeriod, PriorityFavorSmall, PriorityFlags,
//! FairShareDampeningFactor and AccountingStorageType.
//!
//! Keys are matched case-insensitively, as `slurm.conf` does; when a key
//! appears twice the later value wins. Keys this module does not know are
//! ignored (they belong to other parts of Slurm).
//!
//! # Failure modes
//!
//! A malformed value is an `EINVAL` [`Error`] naming the key, the value
//! and what was expected; nothing of a configuration that fails is kept.

use slurm_wasm_sdk::Error;

use crate::reset::ResetPeriod;

/// Seven days, the default of PriorityMaxAge and PriorityDecayHalfLife.
pub const SEVEN_DAYS: u32 = 7 * 24 * 3600;

/// `PriorityWeight*`: the weight of each scalar factor (u32, default 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Weights {
    pub age: u32,
    pub assoc: u32,
    pub fairshare: u32,
    pub job_size: u32,
    pub partition: u32,
    pub qos: u32,
}

/// `PriorityFlags`, with Slurm's bit numbers (Slurm 22.05.8 slurm/slurm.h `PRIORITY_FLAGS_*`; MAX_TRES_GRES is not
/// in 22.05.8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags(u16);

impl Flags {
    pub const ACCRUE_ALWAYS: Flags = Flags(1 << 0);
    /// Billable TRES as the maximum per-node TRES. The controller computes
    /// billable TRES (`job.billable-tres`), so the plugin only carries it.
    pub const MAX_TRES: Flags = Flags(1 << 1);
    pub const SMALL_RELATIVE_TO_TIME: Flags = Flags(1 << 2);
    pub const DEPTH_OBLIVIOUS: Flags = Flags(1 << 3);
    pub const CALCULATE_RUNNING: Flags = Flags(1 << 4);
    pub const FAIR_TREE: Flags = Flags(1 << 5);
    pub const INCR_ONLY: Flags = Flags(1 << 6);
    pub const NO_NORMAL_ASSOC: Flags = Flags(1 << 7);
    pub const NO_NORMAL_PART: Flags = Flags(1 << 8);
    pub const NO_NORMAL_QOS: Flags = Flags(1 << 9);
    pub const NO_NORMAL_TRES: Flags = Flags(1 << 10);
    /// GRES in MAX_TRES billing; like [`Flags::MAX_TRES`], carried only.
    pub const MAX_TRES_GRES: Flags = Flags(1 << 11);
    pub const NO_NORMAL_ALL: Flags = Flags(
        Self::NO_NORMAL_ASSOC.0
            | Self::NO_NORMAL_PART.0
            | Self::NO_NORMAL_QOS.0
            | Self::NO_NORMAL_TRES.0,
    );

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The raw bits (Slurm's `priority_flags`).
    #[cfg(test)]
    pub fn bits(self) -> u16 {
        self.0
    }

    fn insert(&mut self, other: Flags) {
        self.0 |= other.0;
    }

    fn remove(&mut self, other: Flags) {
        self.0 &= !other.0;
    }

    /// Parses a `PriorityFlags` value: comma-separated names, any case.
    /// FAIR_TREE is set unless NO_FAIR_TREE or DEPTH_OBLIVIOUS is given
    /// (Slurm 22.05.8 src/common/read_config.c `_validate_and_set_defaults`); the legacy name FAIR_TREE is accepted and changes nothing.
    pub fn parse(value: &str) -> Result<Flags, String> {
        let mut flags = Flags::FAIR_TREE;
        let mut fair_tree_off = false;
        for token in value.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let flag = match token.to_ascii_uppercase().as_str() {
                "ACCRUE_ALWAYS" => Flags::ACCRUE_ALWAYS,
                "MAX_TRES" => Flags::MAX_TRES,
                "MAX_TRES_GRES" => Flags::MAX_TRES_GRES,
                "SMALL_RELATIVE_TO_TIME" => Flags::SMALL_RELATIVE_TO_TIME,
                "DEPTH_OBLIVIOUS" => {
                    fair_tree_off = true;
                    Flags::DEPTH_OBLIVIOUS
                }
                "CALCULATE_RUNNING" => Flags::CALCULATE_RUNNING,
                "FAIR_TREE" => Flags::FAIR_TREE,
                "NO_FAIR_TREE" => {
                    fair_tree_off = true;
                    Flags::default()
                }
                "INCR_ONLY" => Flags::INCR_ONLY,
                "NO_NORMAL_ASSOC" => Flags::NO_NORMAL_ASSOC,
                "NO_NORMAL_PART" => Flags::NO_NORMAL_PART,
                "NO_NORMAL_QOS" => Flags::NO_NORMAL_QOS,
                "NO_NORMAL_TRES" => Flags::NO_NORMAL_TRES,
                "NO_NORMAL_ALL" => Flags::NO_NORMAL_ALL,
                _ => return Err(format!("unknown flag `{token}`")),
            };
            flags.insert(flag);
        }
        if fair_tree_off {
            flags.remove(Flags::FAIR_TREE);
        }
        Ok(flags)
    }
}

/// Everything the plugin reads from `slurm.conf`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Effective weights: age and fair-share are 0 without slurmdbd.
    pub weights: Weights,
    /// `PriorityWeightTRES`, lower-case TRES names in the order given.
    pub tres_weights: Vec<(String, f64)>,
    /// `PriorityMaxAge` in seconds.
    pub max_age: u32,
    /// `PriorityDecayHalfLife` in seconds; 0 = no decay.
    pub decay_half_life: u32,
    pub reset_period: ResetPeriod,
    pub favor_small: bool,
    pub flags: Flags,
    /// `FairShareDampeningFactor`, at least 1.
    pub damp: u16,
    /// `AccountingStorageType=accounting_storage/slurmdbd`.
    pub with_slurmdbd: bool,
    /// Non-zero age or fair-share weights were set to 0 for lack of
    /// slurmdbd (Slurm logs an error; so does the plugin).
    pub weights_dropped: bool,
}

impl Default for Config {
    /// Slurm's defaults, without slurmdbd.
    fn default() -> Self {
        Config {
            weights: Weights::default(),
            tres_weights: Vec::new(),
            max_age: SEVEN_DAYS,
            decay_half_life: SEVEN_DAYS,
            reset_period: ResetPeriod::None,
            favor_small: false,
            flags: Flags::FAIR_TREE,
            damp: 1,
            with_slurmdbd: false,
            weights_dropped: false,
        }
    }
}

impl Config {
    /// Reads the settings from `slurm.conf` options, with Slurm's defaults
    /// for absent keys. Without slurmdbd accounting the age and fair-share
    /// weights are forced to 0, as Slurm does ([`Config::weights_dropped`]
    /// tells whether that changed anything).
    pub fn from_options<'a>(
        options: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Config, Error> {
        let mut config = Config::default();
        for (key, value) in options {
            let value = value.trim();
            let bad =
                |expected: &str| Error::invalid(format!("{key}={value}: expected {expected}"));
            match key.to_ascii_lowercase().as_str() {
                "priorityweightage" => {
                    config.weights.age = weight(value).ok_or_else(|| bad(U32))?
                }
                "priorityweightassoc" => {
                    config.weights.assoc = weight(value).ok_or_else(|| bad(U32))?
                }
                "priorityweightfairshare" => {
                    config.weights.fairshare = weight(value).ok_or_else(|| bad(U32))?
                }
                "priorityweightjobsize" => {
                    config.weights.job_size = weight(value).ok_or_else(|| bad(U32))?
                }
                "priorityweightpartition" => {
                    config.weights.partition = weight(value).ok_or_else(|| bad(U32))?
                }
                "priorityweightqos" => {
                    config.weights.qos = weight(value).ok_or_else(|| bad(U32))?
                }
                "priorityweighttres" => {
                    config.tres_weights = tres_weights(value).map_err(|e| bad(&e))?
                }
                "prioritymaxage" => config.max_age = duration(value).ok_or_else(|| bad(TIME))?,
                "prioritydecayhalflife" => {
                    config.decay_half_life = duration(value).ok_or_else(|| bad(TIME))?
                }
                "priorityusageresetperiod" => {
                    config.reset_period = ResetPeriod::parse(value).ok_or_else(|| {
                        bad("NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY")
                    })?
                }
                "priorityfavorsmall" => {
                    config.favor_small = boolean(value).ok_or_else(|| bad("YES or NO"))?
                }
                "priorityflags" => {
                    config.flags = Flags::parse(value)
                        .map_err(|e| bad(&format!("PriorityFlags names ({e})")))?
                }
                "fairsharedampeningfactor" => {
                    config.damp = value
                        .parse::<u16>()
                        .ok()
                        .filter(|&d| d >= 1)
                        .ok_or_else(|| bad("a whole number from 1 to 65535"))?
                }
                "accountingstoragetype" => {
                    config.with_slurmdbd = value.eq_ignore_ascii_case("accounting_storage/slurmdbd")
                }
                _ => {}
            }
        }
        if !config.with_slurmdbd {
            config.weights_dropped = config.weights.age > 0 || config.weights.fairshare > 0;
            config.weights.age = 0;
            config.weights.fairshare = 0;
        }
        Ok(config)
    }

    /// Whether Fair Tree computes fair-share (else the classic algorithm).
    pub fn fair_tree(&self) -> bool {
        self.flags.contains(Flags::FAIR_TREE)
    }
}

const U32: &str = "a whole number from 0 to 4294967295";
const TIME: &str =
    "a time: minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes or days-hours:minutes:seconds";

fn weight(value: &str) -> Option<u32> {
    value.parse().ok()
}

/// Slurm's booleans: YES/TRUE/UP/1 and NO/FALSE/DOWN/0, any case.
fn boolean(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "yes" | "true" | "up" | "1" => Some(true),
        "no" | "false" | "down" | "0" => Some(false),
        _ => None,
    }
}

/// `CPU=100,Mem=1,GRES/gpu=500` as lower-case names with finite,
/// non-negative weights.
fn tres_weights(value: &str) -> Result<Vec<(String, f64)>, String> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (name, w) = item.split_once('=').ok_or_else(|| {
            format!("TRES=weight pairs like CPU=100,GRES/gpu=500, found `{item}`")
        })?;
        let name = name.trim().to_ascii_lowercase();
        let ok_name = !name.is_empty()
            && name.split('/').all(|part| !part.is_empty())
            && name.matches('/').count() <= 1;
        if !ok_name {
            return Err(format!("a TRES name like cpu or gres/gpu, found `{name}`"));
        }
        let w: f64 = w
            .trim()
            .parse()
            .ok()
            .filter(|w: &f64| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| format!("a non-negative weight for {name}, found `{}`", w.trim()))?;
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = w,
            None => out.push((name, w)),
        }
    }
    Ok(out)
}

/// A Slurm time string as seconds, at the minute resolution these options
/// have (`time_str2mins`: seconds round up to the next minute): `m`,
/// `m:s`, `h:m:s`, `d-h`, `d-h:m`, `d-h:m:s`.
pub fn duration(value: &str) -> Option<u32> {
    let num = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (days, rest) = match value.split_once('-') {
        Some((d, rest)) => (Some(num(d)?), rest),
        None => (None, value),
    };
    let parts: Vec<u64> = rest.split(':').map(num).collect::<Option<_>>()?;
    let (hours, minutes, seconds) = match (days, parts.as_slice()) {
        (None, [m]) => (0, *m, 0),
        (None, [m, s]) => (0, *m, *s),
        (None, [h, m, s]) => (*h, *m, *s),
        (Some(_), [h]) => (*h, 0, 0),
        (Some(_), [h, m]) => (*h, *m, 0),
        (Some(_), [h, m, s]) => (*h, *m, *s),
        _ => return None,
    };
    let total_minutes = (days.unwrap_or(0) * 24 + hours) * 60 + minutes + u64::from(seconds > 0);
    u32::try_from(total_minutes.checked_mul(60)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<Config, Error> {
        Config::from_options(pairs.iter().copied())
    }

    #[test]
    fn slurm_time_formats() {
        assert_eq!(duration("7-0"), Some(SEVEN_DAYS));
        assert_eq!(duration("00:10:00"), Some(600));
        assert_eq!(duration("1-0"), Some(86_400));
        assert_eq!(duration("14"), Some(14 * 60), "a bare number is minutes");
        assert_eq!(
            duration("2:30"),
            Some(3 * 60),
            "seconds round up to a minute"
        );
        assert_eq!(duration("1-2:03"), Some(((24 + 2) * 60 + 3) * 60));
        assert_eq!(duration("1-2:03:04"), Some(((24 + 2) * 60 + 4) * 60));
        for bad in [
            "",
            "x",
            "1-",
            "-1",
            "1:2:3:4",
            "1-2:3:4:5",
            "UNLIMITED",
            "1.5",
        ] {
            assert_eq!(duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn defaults_are_slurms() {
        let c = parse(&[]).unwrap();
        assert_eq!(c.max_age, SEVEN_DAYS);
        assert_eq!(c.decay_half_life, SEVEN_DAYS);
        assert_eq!(c.reset_period, ResetPeriod::None);
        assert!(c.fair_tree());
        assert_eq!(c.damp, 1);
        assert!(!c.with_slurmdbd);
    }

    #[test]
    fn weights_and_tres_weights_case_insensitive() {
        let c = parse(&[
            ("AccountingStorageType", "accounting_storage/slurmdbd"),
            ("PriorityWeightAge", "1000"),
            ("priorityweightfairshare", "10000"),
            ("PriorityWeightJobSize", "1000"),
            ("PriorityWeightPartition", "1000"),
            ("PriorityWeightQOS", "2000"),
            ("PriorityWeightAssoc", "5"),
            ("PriorityWeightTRES", "CPU=100,Mem=1,GRES/gpu=500"),
        ])
        .unwrap();
        assert_eq!(
            c.weights,
            Weights {
                age: 1000,
                assoc: 5,
                fairshare: 10000,
                job_size: 1000,
                partition: 1000,
                qos: 2000
            }
        );
        assert_eq!(
            c.tres_weights,
            vec![
                ("cpu".to_string(), 100.0),
                ("mem".to_string(), 1.0),
                ("gres/gpu".to_string(), 500.0)
            ]
        );
    }

    #[test]
    fn without_slurmdbd_age_and_fairshare_weights_are_zero() {
        let c = parse(&[
            ("PriorityWeightAge", "1000"),
            ("PriorityWeightFairshare", "10000"),
            ("PriorityWeightQOS", "7"),
        ])
        .unwrap();
        assert_eq!(
            (c.weights.age, c.weights.fairshare, c.weights.qos),
            (0, 0, 7)
        );
        assert!(c.weights_dropped);
        assert!(
            !parse(&[("PriorityWeightQOS", "7")])
                .unwrap()
                .weights_dropped
        );
    }

    #[test]
    fn priority_flags_words() {
        let f = Flags::parse("small_relative_to_time, CALCULATE_RUNNING,NO_NORMAL_ALL").unwrap();
        assert!(f.contains(Flags::SMALL_RELATIVE_TO_TIME));
        assert!(f.contains(Flags::CALCULATE_RUNNING));
        assert!(f.contains(Flags::NO_NORMAL_PART) && f.contains(Flags::NO_NORMAL_TRES));
        assert!(f.contains(Flags::FAIR_TREE), "Fair Tree unless turned off");
        assert!(!Flags::parse("NO_FAIR_TREE")
            .unwrap()
            .contains(Flags::FAIR_TREE));
        let depth = Flags::parse("DEPTH_OBLIVIOUS").unwrap();
        assert!(depth.contains(Flags::DEPTH_OBLIVIOUS) && !depth.contains(Flags::FAIR_TREE));
        assert_eq!(Flags::parse("ACCRUE_ALWAYS").unwrap().bits(), 0b10_0001);
        assert!(Flags::parse("MAX_TRES,MAX_TRES_GRES,INCR_ONLY").is_ok());
    }

    #[test]
    fn malformed_values_name_the_key() {
        for (key, value) in [
            ("PriorityWeightAge", "-1"),
            ("PriorityWeightQOS", "lots"),
            ("PriorityWeightTRES", "cpu"),
            ("PriorityWeightTRES", "cpu=-2"),
            ("PriorityWeightTRES", "=2"),
            ("PriorityMaxAge", "a week"),
            ("PriorityDecayHalfLife", "7-"),
            ("PriorityUsageResetPeriod", "HOURLY"),
            ("PriorityFavorSmall", "maybe"),
            ("PriorityFlags", "FAIR_TREE,BOGUS"),
            ("FairShareDampeningFactor", "0"),
        ] {
            let e = parse(&[(key, value)]).unwrap_err();
            assert_eq!(e.code, slurm_wasm_sdk::codes::EINVAL);
            assert!(e.message.starts_with(&format!("{key}={value}")), "{e}");
        }
    }
}
