//! `TaskPluginParam` as slurmctld holds it (the contract's flags, which the
//! host read from slurm.conf as Slurm 22.05 reads it), as the `CPU_BIND_*`
//! bits task/affinity computes with.
//!
//! task/affinity uses two parts of it: `Verbose` (the batch script's binding
//! is verbose, `batch_bind`) and `Autobind=` (the unit `lllp_distribution`
//! falls back to). The default binding unit (`None|Sockets|Cores|Threads`) is
//! applied by the controller to the step before it reaches the plugin.

use slurm_wasm_sdk::types::TaskPluginParams as F;

use crate::bind_type::{
    AUTO_BIND_TO_CORES, AUTO_BIND_TO_SOCKETS, AUTO_BIND_TO_THREADS, NONE, SLURMD_OFF_SPEC,
    TO_CORES, TO_SOCKETS, TO_THREADS, VERBOSE,
};

/// The `CPU_BIND_*` bits of `flags`.
///
/// Fails, with Slurm's message, on two of `None`, `Sockets`, `Cores` and
/// `Threads`, or two `Autobind=` units: 22.05's configuration reader
/// refuses both, so no slurmctld passes them.
pub fn bits(flags: F) -> Result<u32, String> {
    let units = [
        (F::NONE, NONE, "None"),
        (F::SOCKETS, TO_SOCKETS, "Sockets"),
        (F::CORES, TO_CORES, "Cores"),
        (F::THREADS, TO_THREADS, "Threads"),
    ];
    let autobinds = [
        (
            F::AUTOBIND_THREADS,
            AUTO_BIND_TO_THREADS,
            "Autobind=Threads",
        ),
        (F::AUTOBIND_CORES, AUTO_BIND_TO_CORES, "Autobind=Cores"),
        (
            F::AUTOBIND_SOCKETS,
            AUTO_BIND_TO_SOCKETS,
            "Autobind=Sockets",
        ),
    ];
    let mut out = 0;
    for group in [&units[..], &autobinds] {
        let set: Vec<_> = group
            .iter()
            .filter(|(f, _, _)| flags.contains(*f))
            .collect();
        if let [_, (_, _, second), ..] = set[..] {
            return Err(format!("Bad TaskPluginParam: {second}"));
        }
        out |= set.iter().fold(0, |all, (_, bit, _)| all | bit);
    }
    if flags.contains(F::VERBOSE) {
        out |= VERBOSE;
    }
    if flags.contains(F::SLURMD_OFF_SPEC) {
        out |= SLURMD_OFF_SPEC;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_the_cpu_bind_bits() {
        // slurm.h `cpu_bind_type_t`, as read_config.c sets them.
        assert_eq!(bits(F::empty()), Ok(0));
        assert_eq!(bits(F::CORES | F::VERBOSE), Ok(TO_CORES | VERBOSE));
        assert_eq!(
            bits(F::AUTOBIND_THREADS | F::SLURMD_OFF_SPEC),
            Ok(AUTO_BIND_TO_THREADS | SLURMD_OFF_SPEC)
        );
        assert_eq!(bits(F::NONE), Ok(NONE));
    }

    #[test]
    fn refuses_what_22_05_refuses() {
        assert_eq!(
            bits(F::CORES | F::SOCKETS),
            Err("Bad TaskPluginParam: Cores".into())
        );
        assert_eq!(
            bits(F::AUTOBIND_CORES | F::AUTOBIND_THREADS),
            Err("Bad TaskPluginParam: Autobind=Cores".into())
        );
    }
}
