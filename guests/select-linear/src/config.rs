//! `SelectTypeParameters` as select/linear reads them, and each partition's
//! `OverSubscribe` as a share limit.

use slurm_wasm_sdk::types::{Oversubscribe, Partition, SelectTypeParams};
use slurm_wasm_sdk::Error;

/// The parameters linear acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `CR_Memory`: memory is a consumable resource.
    pub memory: bool,
    /// `CR_ONE_TASK_PER_CORE`.
    pub one_task_per_core: bool,
}

impl Config {
    /// Reads `SelectTypeParameters`. `EINVAL` for CR_CPU / CR_Core /
    /// CR_Socket (with or without `_Memory`), which select/linear cannot
    /// honour (Slurm's linear is fatal on them at start-up); the flags that
    /// concern other plugins or only the controller (`CR_LLN`,
    /// `CR_Pack_Nodes`, `CR_CORE_DEFAULT_DIST_BLOCK`, `other_cons_*`) are
    /// taken and change nothing.
    pub fn from_flags(flags: SelectTypeParams) -> Result<Self, Error> {
        let consumable = [
            (SelectTypeParams::CPU, "CR_CPU"),
            (SelectTypeParams::CORE, "CR_Core"),
            (SelectTypeParams::SOCKET, "CR_Socket"),
        ];
        if let Some((_, name)) = consumable.iter().find(|(flag, _)| flags.contains(*flag)) {
            return Err(Error::invalid(format!(
                "SelectTypeParameters={name} requires a consumable resource plugin \
                 (select/cons_tres); select/linear allocates whole nodes and accepts only \
                 CR_Memory and CR_ONE_TASK_PER_CORE"
            )));
        }
        Ok(Config {
            memory: flags.contains(SelectTypeParams::MEMORY),
            one_task_per_core: flags.contains(SelectTypeParams::ONE_TASK_PER_CORE),
        })
    }
}

/// `SHARED_FORCE`: the bit Slurm sets in `max_share` for `FORCE:n`.
pub const SHARED_FORCE: u16 = 0x8000;

/// A partition's `max_share` as Slurm encodes `OverSubscribe`: NO → 1,
/// YES:n → n, FORCE:n → n | SHARED_FORCE, EXCLUSIVE → 0.
pub fn max_share(partition: &Partition) -> u16 {
    match partition.oversubscribe {
        Oversubscribe::No => 1,
        Oversubscribe::Yes(n) => n,
        Oversubscribe::Force(n) => n | SHARED_FORCE,
        Oversubscribe::Exclusive => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;

    #[test]
    fn memory_and_one_task_per_core_are_read() {
        // linear reads CR_Memory and CR_ONE_TASK_PER_CORE (select_linear.c).
        let c = Config::from_flags(SelectTypeParams::MEMORY | SelectTypeParams::ONE_TASK_PER_CORE)
            .unwrap();
        assert!(c.memory);
        assert!(c.one_task_per_core);
        assert!(
            !Config::from_flags(SelectTypeParams::empty())
                .unwrap()
                .memory
        );
        assert_eq!(
            Config::from_flags(SelectTypeParams::LLN | SelectTypeParams::PACK_NODES).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn consumable_types_are_refused() {
        // select_g_init (common/select.c): any of CR_CPU/CR_Core/CR_Socket is
        // fatal for linear.
        for flags in [
            SelectTypeParams::CPU,
            SelectTypeParams::CORE | SelectTypeParams::MEMORY,
            SelectTypeParams::SOCKET,
        ] {
            let err = Config::from_flags(flags).unwrap_err();
            assert_eq!(err.code, slurm_wasm_sdk::codes::EINVAL);
            assert!(err.message.contains("cons_tres"), "{}", err.message);
        }
    }

    #[test]
    fn max_share_encoding() {
        // Slurm's part_record max_share encoding (Slurm 22.05.8 src/common/read_config.c
        // `_parse_partitionname` writes it, src/plugins/select/linear/select_linear.c `select_p_job_test` reads it).
        let mut p = fixtures::partition(0, "p", 1);
        assert_eq!(max_share(&p), 1);
        p.oversubscribe = Oversubscribe::Force(2);
        assert_eq!(max_share(&p), 2 | SHARED_FORCE);
        p.oversubscribe = Oversubscribe::Yes(4);
        assert_eq!(max_share(&p), 4);
        p.oversubscribe = Oversubscribe::Exclusive;
        assert_eq!(max_share(&p), 0);
    }
}
