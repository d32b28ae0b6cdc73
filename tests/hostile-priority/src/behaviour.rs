//! The misbehaviours of priority/hostile, chosen by name: the `name` of a
//! job (as given to `set`, `recover` or `get-priority-factors-list`) or the
//! `account` of an association (for `set-assoc-usage` and
//! `association-usages`). Every other name is [`Behaviour::Normal`].

use std::hint::black_box;

/// A job id no caller ever offers: the "stranger" of the `*-stranger`
/// behaviours (and an association id no tree holds).
pub const STRANGER_ID: u32 = 4_000_000_000;

/// What a call does, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Anything not listed: the world's own answer.
    Normal,
    /// `trap`: panics (a trap) in any function that reads the name.
    Trap,
    /// `loop`: spins forever in any function that reads the name.
    Loop,
    /// `grow`: allocates 1 MiB blocks without end in any function that
    /// reads the name, until the host's memory limit stops it.
    Grow,
    /// `calc-stranger`: `calculate` adds a priority for [`STRANGER_ID`].
    CalcStranger,
    /// `calc-twice`: `calculate` lists the job twice.
    CalcTwice,
    /// `calc-zero`: `calculate` gives the job priority 0 (held).
    CalcZero,
    /// `recover-max`: `recover` asks to add `u32::MAX` to `lowest_prio`.
    RecoverMax,
    /// `recover-stranger`: `recover` re-prioritises [`STRANGER_ID`].
    RecoverStranger,
    /// `usage-nan`: the association's `usage-raw` is NaN.
    UsageNan,
    /// `usage-negative`: the association's `usage-raw` is -1.
    UsageNegative,
    /// `usage-stranger`: the association's usage comes back under
    /// [`STRANGER_ID`].
    UsageStranger,
    /// `factors-stranger`: `get-priority-factors-list` answers the job's row
    /// under [`STRANGER_ID`].
    FactorsStranger,
}

/// Every named behaviour, with its name.
pub const NAMED: [(&str, Behaviour); 12] = [
    ("trap", Behaviour::Trap),
    ("loop", Behaviour::Loop),
    ("grow", Behaviour::Grow),
    ("calc-stranger", Behaviour::CalcStranger),
    ("calc-twice", Behaviour::CalcTwice),
    ("calc-zero", Behaviour::CalcZero),
    ("recover-max", Behaviour::RecoverMax),
    ("recover-stranger", Behaviour::RecoverStranger),
    ("usage-nan", Behaviour::UsageNan),
    ("usage-negative", Behaviour::UsageNegative),
    ("usage-stranger", Behaviour::UsageStranger),
    ("factors-stranger", Behaviour::FactorsStranger),
];

impl Behaviour {
    /// The behaviour `name` names, after acting out `trap`, `loop` and
    /// `grow` on behalf of `function`; [`Behaviour::Normal`] for any other
    /// name.
    pub fn read(name: &str, function: &str) -> Behaviour {
        let behaviour = NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(Behaviour::Normal, |&(_, b)| b);
        match behaviour {
            Behaviour::Trap => panic!("priority/hostile: deliberate trap in {function}"),
            Behaviour::Loop => spin(),
            Behaviour::Grow => hoard(),
            other => other,
        }
    }
}

/// Counts forever; `black_box` keeps the optimiser from removing the loop.
fn spin() -> ! {
    let mut count = 0u64;
    loop {
        count = black_box(count.wrapping_add(1));
    }
}

/// Allocates without end; `black_box` keeps every block alive.
fn hoard() -> ! {
    let mut blocks = Vec::new();
    loop {
        blocks.push(black_box(vec![1u8; 1 << 20]));
        black_box(&blocks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_normal() {
        for (name, b) in NAMED.into_iter().skip(3) {
            assert_eq!(Behaviour::read(name, "set"), b);
        }
        assert_eq!(Behaviour::read("job1", "set"), Behaviour::Normal);
    }

    #[test]
    #[should_panic(expected = "deliberate trap in calculate")]
    fn trap_panics_naming_the_function() {
        Behaviour::read("trap", "calculate");
    }
}
