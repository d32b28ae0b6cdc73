//! The task environment slurmstepd derives from a step's binding (Slurm 22.05.8 src/common/env.c
//! `setup_env`), for steps other than batch scripts and
//! interactive steps:
//!
//! * `SLURM_CPU_BIND_VERBOSE`: `verbose` or `quiet`;
//! * `SLURM_CPU_BIND_TYPE`: the unit (`threads|cores|sockets|ldoms`) and the
//!   mode (`none|rank|map_cpu:|mask_cpu:|rank_ldom|map_ldom:|mask_ldom:`),
//!   joined by a comma when both are set;
//! * `SLURM_CPU_BIND_LIST`: the `cpu_bind` list;
//! * `SLURM_CPU_BIND`: `<verbose>,<type><list>`, or just `<verbose>`
//!   without a type.
//!
//! A variable whose `name=value` would reach 128 KiB is not set.

use crate::bind_type::{
    LDMAP, LDMASK, LDRANK, MAP, MASK, NONE, RANK, TO_CORES, TO_LDOMS, TO_SOCKETS, TO_THREADS,
    VERBOSE,
};

/// Slurm's `MAX_ENV_STRLEN`.
const MAX_ENV_STRLEN: usize = 32 * 4096;

/// The `SLURM_CPU_BIND*` variables for a step bound by `bind` and `list`,
/// in the order slurmstepd sets them; none when `bind` is 0.
pub fn cpu_bind_env(bind: u32, list: &str) -> Vec<(String, String)> {
    if bind == 0 {
        return Vec::new();
    }
    let verbose = if bind & VERBOSE != 0 {
        "verbose"
    } else {
        "quiet"
    };
    let unit = first_word(
        bind,
        &[
            (TO_THREADS, "threads"),
            (TO_CORES, "cores"),
            (TO_SOCKETS, "sockets"),
            (TO_LDOMS, "ldoms"),
        ],
    );
    let mode = first_word(
        bind,
        &[
            (NONE, "none"),
            (RANK, "rank"),
            (MAP, "map_cpu:"),
            (MASK, "mask_cpu:"),
            (LDRANK, "rank_ldom"),
            (LDMAP, "map_ldom:"),
            (LDMASK, "mask_ldom:"),
        ],
    );
    let kind = [unit, mode]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(",");
    let all = if kind.is_empty() {
        verbose.to_string()
    } else {
        format!("{verbose},{kind}{list}")
    };
    [
        ("SLURM_CPU_BIND", all),
        ("SLURM_CPU_BIND_LIST", list.to_string()),
        ("SLURM_CPU_BIND_TYPE", kind),
        ("SLURM_CPU_BIND_VERBOSE", verbose.to_string()),
    ]
    .into_iter()
    .filter(|(name, value)| name.len() + value.len() + 2 < MAX_ENV_STRLEN)
    .map(|(name, value)| (name.to_string(), value))
    .collect()
}

fn first_word(bind: u32, words: &[(u32, &'static str)]) -> Option<&'static str> {
    words
        .iter()
        .find(|(bit, _)| bind & bit != 0)
        .map(|(_, word)| *word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(bind: u32, list: &str) -> Vec<(&'static str, String)> {
        let names = [
            "SLURM_CPU_BIND",
            "SLURM_CPU_BIND_LIST",
            "SLURM_CPU_BIND_TYPE",
            "SLURM_CPU_BIND_VERBOSE",
        ];
        cpu_bind_env(bind, list)
            .into_iter()
            .map(|(k, v)| (*names.iter().find(|n| **n == k).unwrap(), v))
            .collect()
    }

    #[test]
    fn the_example_of_slurm_cpu_bind() {
        assert_eq!(
            env(MASK, "0x0003,0x0300"),
            [
                ("SLURM_CPU_BIND", "quiet,mask_cpu:0x0003,0x0300".into()),
                ("SLURM_CPU_BIND_LIST", "0x0003,0x0300".into()),
                ("SLURM_CPU_BIND_TYPE", "mask_cpu:".into()),
                ("SLURM_CPU_BIND_VERBOSE", "quiet".into()),
            ]
        );
    }

    #[test]
    fn units_modes_and_verbosity() {
        let e = env(VERBOSE | TO_CORES | NONE, "");
        assert_eq!(e[0].1, "verbose,cores,none");
        assert_eq!(e[2].1, "cores,none");
        assert_eq!(env(TO_SOCKETS, "")[0].1, "quiet,sockets");
        assert_eq!(env(LDRANK, "")[2].1, "rank_ldom");
        // Only verbose: no type at all.
        let e = env(VERBOSE, "");
        assert_eq!(e[0].1, "verbose");
        assert_eq!(e[2].1, "");
        assert!(cpu_bind_env(0, "0x1").is_empty());
    }

    #[test]
    fn overlong_values_are_not_set() {
        let list = "f".repeat(MAX_ENV_STRLEN);
        let names: Vec<String> = cpu_bind_env(MASK, &list)
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(names, ["SLURM_CPU_BIND_TYPE", "SLURM_CPU_BIND_VERBOSE"]);
    }
}
