//! `SelectTypeParameters` as select/linear reads them, and each partition's
//! `OverSubscribe` as a share limit.

use slurm_wasm_sdk::types::{Oversubscribe, Partition};
use slurm_wasm_sdk::Error;

/// The parameters linear acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `CR_Memory`: memory is a consumable resource.
    pub memory: bool,
    /// `CR_ONE_TASK_PER_CORE`.
    pub one_task_per_core: bool,
    /// The tokens as written, for `config-info`.
    pub tokens: Vec<String>,
}

/// Tokens linear accepts without acting on them (they concern other
/// plugins or only the controller): the rest of what 22.05's
/// `parse_select_type_param` (common/slurm_selecttype_info.c) takes. Later
/// releases' tokens (`LL_SHARED_GRES`, `MULTIPLE_SHARING_GRES_PJ`,
/// `ENFORCE_BINDING_GRES`, `ONE_TASK_PER_SHARING_GRES`) and Cray's `NHC_*`
/// are "Bad SelectTypeParameter" there, so unknown here.
const IGNORED: &[&str] = &[
    "CR_LLN",
    "CR_Pack_Nodes",
    "CR_CORE_DEFAULT_DIST_BLOCK",
    "CR_ALLOCATE_FULL_SOCKET",
    "OTHER_CONS_RES",
    "OTHER_CONS_TRES",
];

/// Tokens that need a consumable-resource plugin: Slurm's linear is fatal
/// on them at start-up.
const CONSUMABLE: &[&str] = &[
    "CR_CPU",
    "CR_Core",
    "CR_Socket",
    "CR_CPU_Memory",
    "CR_Core_Memory",
    "CR_Socket_Memory",
];

impl Config {
    /// Reads `SelectTypeParameters` tokens (case-insensitive, as Slurm).
    /// `EINVAL` for CR_CPU / CR_Core / CR_Socket (with or without
    /// `_Memory`), which select/linear cannot honour, and for unknown tokens.
    pub fn from_tokens(tokens: &[String]) -> Result<Self, Error> {
        let mut config = Config {
            tokens: tokens.to_vec(),
            ..Config::default()
        };
        for token in tokens.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
            if CONSUMABLE.iter().any(|c| c.eq_ignore_ascii_case(token)) {
                return Err(Error::invalid(format!(
                    "SelectTypeParameters={token} requires a consumable resource plugin \
                     (select/cons_tres); select/linear allocates whole nodes and accepts only \
                     CR_Memory and CR_ONE_TASK_PER_CORE"
                )));
            }
            if token.eq_ignore_ascii_case("CR_Memory") {
                config.memory = true;
            } else if token.eq_ignore_ascii_case("CR_ONE_TASK_PER_CORE") {
                config.one_task_per_core = true;
            } else if !IGNORED.iter().any(|c| c.eq_ignore_ascii_case(token)) {
                return Err(Error::invalid(format!(
                    "SelectTypeParameters: unknown token {token:?}"
                )));
            }
        }
        Ok(config)
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

    fn tokens(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn memory_and_one_task_per_core_are_read() {
        // linear reads CR_Memory and CR_ONE_TASK_PER_CORE (select_linear.c).
        let c = Config::from_tokens(&tokens(&["cr_memory", "CR_ONE_TASK_PER_CORE"])).unwrap();
        assert!(c.memory);
        assert!(c.one_task_per_core);
        assert!(!Config::from_tokens(&[]).unwrap().memory);
    }

    #[test]
    fn only_the_tokens_of_22_05_are_taken() {
        // 22.05's parse_select_type_param (common/slurm_selecttype_info.c)
        // takes CR_ALLOCATE_FULL_SOCKET (deprecated, no bit) and knows none
        // of later releases' GRES sharing tokens or Cray's NHC_NO.
        assert!(Config::from_tokens(&tokens(&["CR_ALLOCATE_FULL_SOCKET"])).is_ok());
        for later in ["LL_SHARED_GRES", "MULTIPLE_SHARING_GRES_PJ", "NHC_NO"] {
            assert!(Config::from_tokens(&tokens(&[later])).is_err(), "{later}");
        }
    }

    #[test]
    fn consumable_types_are_refused() {
        // select_g_init (common/select.c): any of CR_CPU/CR_Core/CR_Socket is
        // fatal for linear.
        for t in ["CR_CPU", "CR_Core_Memory", "cr_socket"] {
            let err = Config::from_tokens(&tokens(&[t])).unwrap_err();
            assert_eq!(err.code, slurm_wasm_sdk::codes::EINVAL);
            assert!(err.message.contains("cons_tres"), "{}", err.message);
        }
        assert!(Config::from_tokens(&tokens(&["CR_Bogus"])).is_err());
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
