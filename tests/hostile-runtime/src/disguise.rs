//! The identities `describe()` can claim, chosen by the host's clock.

use slurm_wasm_sdk::identity;
use slurm_wasm_sdk::types::{Capability, PluginIdentity};

/// One identity, selected by the clock's value in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disguise {
    /// `task/hostile_runtime`, contract and capabilities in order.
    Honest,
    /// 1001: `task/../../../../tmp/pwned`, a type that names a path.
    PathType,
    /// 1002: a type with a newline and a terminal escape in it.
    ControlType,
    /// 1003: contract version `0.1.0.7`.
    FourPartContract,
    /// 1004: fifty million required capabilities.
    ManyCapabilities,
    /// 1005: `task`, the kind alone.
    KindOnly,
    /// 1006: requires `gpu`, which task plugins cannot import.
    ForeignCapability,
    /// 1007: describe sleeps for [`Disguise::SLEEP_SECONDS`] seconds.
    Sleeper,
    /// 1008: a descriptive name of 1 MiB.
    LongName,
    /// 1009: contract version `0.2.0`.
    NewerContract,
    /// 1010: describe allocates 1.5 GiB at once (the most one wasm32
    /// allocation can ask for is 2 GiB).
    Hoarder,
    /// 1011: describe spins forever.
    Spinner,
}

impl Disguise {
    /// How long [`Disguise::Sleeper`] sleeps in `describe()`.
    pub const SLEEP_SECONDS: u64 = 30;

    /// The disguise worn at clock value `now`.
    pub fn at(now: i64) -> Disguise {
        match now {
            1001 => Disguise::PathType,
            1002 => Disguise::ControlType,
            1003 => Disguise::FourPartContract,
            1004 => Disguise::ManyCapabilities,
            1005 => Disguise::KindOnly,
            1006 => Disguise::ForeignCapability,
            1007 => Disguise::Sleeper,
            1008 => Disguise::LongName,
            1009 => Disguise::NewerContract,
            1010 => Disguise::Hoarder,
            1011 => Disguise::Spinner,
            _ => Disguise::Honest,
        }
    }

    /// The identity `describe()` answers.
    pub fn identity(self) -> PluginIdentity {
        let honest = identity(
            "task/hostile_runtime",
            "runtime attacks (containment tests)",
        );
        match self {
            Disguise::Honest => honest,
            Disguise::PathType => PluginIdentity {
                plugin_type: "task/../../../../tmp/pwned".into(),
                ..honest
            },
            Disguise::ControlType => PluginIdentity {
                plugin_type: "task/evil\n\u{1b}[31mERROR forged".into(),
                ..honest
            },
            Disguise::FourPartContract => PluginIdentity {
                contract_version: "0.1.0.7".into(),
                ..honest
            },
            Disguise::ManyCapabilities => PluginIdentity {
                required_capabilities: vec![Capability::Log; 50_000_000],
                ..honest
            },
            Disguise::KindOnly => PluginIdentity {
                plugin_type: "task".into(),
                ..honest
            },
            Disguise::ForeignCapability => PluginIdentity {
                required_capabilities: vec![Capability::Gpu],
                ..honest
            },
            Disguise::Sleeper => {
                std::thread::sleep(std::time::Duration::from_secs(Self::SLEEP_SECONDS));
                honest
            }
            Disguise::LongName => PluginIdentity {
                plugin_name: "n".repeat(1 << 20),
                ..honest
            },
            Disguise::NewerContract => PluginIdentity {
                contract_version: "0.2.0".into(),
                ..honest
            },
            Disguise::Hoarder => {
                let hoard = std::hint::black_box(vec![1u8; 3 << 29]);
                PluginIdentity {
                    plugin_name: format!("{}", hoard.len()),
                    ..honest
                }
            }
            Disguise::Spinner => {
                let mut count = 0u64;
                loop {
                    count = std::hint::black_box(count.wrapping_add(1));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_picks_the_disguise() {
        assert_eq!(Disguise::at(0), Disguise::Honest);
        assert_eq!(Disguise::at(1001), Disguise::PathType);
        assert_eq!(Disguise::at(1009), Disguise::NewerContract);
        assert_eq!(Disguise::at(1003).identity().contract_version, "0.1.0.7");
    }
}
