//! The misbehaviours of select/hostile, chosen by name.
//!
//! A function that gets a job acts out the behaviour its job's `name`
//! names (`job-test`, `job-ready`, `job-expand` by the `to` job,
//! `step-pick-nodes`, `get-info-from-plugin` when given a job). A function
//! that gets no job (`resv-test`, `get-info-from-plugin` without a job,
//! `select-nodeinfo.get`, `select-jobinfo.get`, `ba-get-dims`) acts out the
//! behaviour last *armed* by `job-signal` (the signalled job's name), once:
//! the next such call disarms it, whatever it is. A name a function has no
//! use for, and every other name, is [`Behaviour::Normal`].

use std::hint::black_box;

/// A job id no caller ever offers: the "stranger" of the `*-stranger`
/// behaviours.
pub const STRANGER_JOB: u32 = 4_000_000_000;

/// Dimensions `dims-many` reports: one more than Slurm's
/// `HIGHEST_DIMENSIONS` (5).
pub const MANY_DIMS: usize = 6;

/// How long `slow` waits.
pub const SLOW: std::time::Duration = std::time::Duration::from_millis(300);

/// What a call does, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Anything not listed: the world's own answer.
    Normal,
    /// `trap`: panics (a trap), in any function that acts out behaviours.
    Trap,
    /// `loop`: spins forever, in any function that acts out behaviours.
    Loop,
    /// `slow`: waits [`SLOW`] (a WASI sleep, no fuel) and then answers
    /// normally, in any function that acts out behaviours.
    Slow,
    /// `ncpus-max`: `job-test` and `job-expand` answer `ncpus` = `u32::MAX`.
    NcpusMax,
    /// `preempt-stranger`: `job-test` names [`STRANGER_JOB`] as a preemptee.
    PreemptStranger,
    /// `preempt-twice`: `job-test` names its first preemption candidate
    /// twice (or [`STRANGER_JOB`] twice without candidates).
    PreemptTwice,
    /// `start-max`: `job-test` answers a start at `i64::MAX`.
    StartMax,
    /// `start-min`: `job-test` answers a start at `i64::MIN`.
    StartMin,
    /// `gpu-beyond`: `job-test` gives the job GPU `n` of its first node,
    /// which has GPUs `0..n` (`Gres=gpu:n`).
    GpuBeyond,
    /// `expand-stranger`: `job-expand` adds the first node neither job holds.
    ExpandStranger,
    /// `pick-stranger`: `step-pick-nodes` picks the first node outside
    /// `available` (outside the job's nodes when `available` is none).
    PickStranger,
    /// `pick-extra`: `step-pick-nodes` picks every node offered, whatever
    /// the node count.
    PickExtra,
    /// `resv-stranger`: `resv-test` adds the first node outside `available`.
    ResvStranger,
    /// `resv-extra`: `resv-test` reserves every available node, whatever
    /// the node count.
    ResvExtra,
    /// `resv-excluded-core`: `resv-test` reserves the first excluded core
    /// (and its node).
    ResvExcludedCore,
    /// `resv-core-outside`: `resv-test` reserves its nodes with the last
    /// core of the cluster, on a node it did not choose.
    ResvCoreOutside,
    /// `info-mismatch`: `get-info-from-plugin` answers `config-info` with a
    /// flag and the other fields with an empty configuration.
    InfoMismatch,
    /// `nodeinfo-mismatch`: `select-nodeinfo.get` answers `subcnt` with a
    /// text, the other fields with a count.
    NodeinfoMismatch,
    /// `nodeinfo-cpus`: `select-nodeinfo.get` answers `subcnt` with
    /// `u16::MAX` CPUs.
    NodeinfoCpus,
    /// `nodeinfo-nan`: `select-nodeinfo.get` answers `tres-alloc-weighted`
    /// with NaN.
    NodeinfoNan,
    /// `jobinfo-mismatch`: `select-jobinfo.get` answers `network` with a
    /// flag and `cleaning` with a text.
    JobinfoMismatch,
    /// `dims-many`: `ba-get-dims` answers [`MANY_DIMS`] dimensions.
    DimsMany,
}

/// Every named behaviour, with its name.
pub const NAMED: [(&str, Behaviour); 22] = [
    ("trap", Behaviour::Trap),
    ("loop", Behaviour::Loop),
    ("slow", Behaviour::Slow),
    ("ncpus-max", Behaviour::NcpusMax),
    ("preempt-stranger", Behaviour::PreemptStranger),
    ("preempt-twice", Behaviour::PreemptTwice),
    ("start-max", Behaviour::StartMax),
    ("start-min", Behaviour::StartMin),
    ("gpu-beyond", Behaviour::GpuBeyond),
    ("expand-stranger", Behaviour::ExpandStranger),
    ("pick-stranger", Behaviour::PickStranger),
    ("pick-extra", Behaviour::PickExtra),
    ("resv-stranger", Behaviour::ResvStranger),
    ("resv-extra", Behaviour::ResvExtra),
    ("resv-excluded-core", Behaviour::ResvExcludedCore),
    ("resv-core-outside", Behaviour::ResvCoreOutside),
    ("info-mismatch", Behaviour::InfoMismatch),
    ("nodeinfo-mismatch", Behaviour::NodeinfoMismatch),
    ("nodeinfo-cpus", Behaviour::NodeinfoCpus),
    ("nodeinfo-nan", Behaviour::NodeinfoNan),
    ("jobinfo-mismatch", Behaviour::JobinfoMismatch),
    ("dims-many", Behaviour::DimsMany),
];

impl Behaviour {
    /// The behaviour `name` names; [`Behaviour::Normal`] for any other.
    pub fn parse(name: &str) -> Behaviour {
        NAMED
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(Behaviour::Normal, |&(_, b)| b)
    }

    /// Acts out `trap`, `loop` and `slow`; returns for every other
    /// behaviour (and after `slow`'s wait).
    pub fn fault(self, function: &str) {
        match self {
            Behaviour::Trap => panic!("select/hostile: deliberate trap in {function}"),
            Behaviour::Loop => spin(),
            Behaviour::Slow => std::thread::sleep(SLOW),
            _ => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_normal() {
        for (name, b) in NAMED {
            assert_eq!(Behaviour::parse(name), b);
        }
        assert_eq!(Behaviour::parse("job1"), Behaviour::Normal);
        assert_eq!(Behaviour::parse(""), Behaviour::Normal);
    }

    #[test]
    #[should_panic(expected = "deliberate trap in job-test")]
    fn trap_panics_naming_the_function() {
        Behaviour::Trap.fault("job-test");
    }
}
