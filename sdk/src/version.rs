//! Versions: the contract's and Slurm's plugin version rule.

/// The `slurm:plugin` contract version these bindings were generated from.
/// Plugins report it from `describe()`; the host refuses incompatible ones.
pub const CONTRACT_VERSION: &str = "0.1.0";

/// Slurm's `SLURM_VERSION_NUMBER`: `(major << 16) | (minor << 8) | micro`
/// (slurm/slurm_version.h.in, `SLURM_VERSION_NUM`: 22.05.8 -> 0x160508).
pub const fn slurm_version_number(major: u32, minor: u32, micro: u32) -> u32 {
    (major << 16) | (minor << 8) | micro
}

/// The Slurm release whose behaviour the bundled plugins implement.
pub const SLURM_22_05_8: u32 = slurm_version_number(22, 5, 8);

#[cfg(test)]
mod tests {
    #[test]
    fn version_rule_matches_spec() {
        assert_eq!(super::slurm_version_number(26, 11, 0), 0x1A0B00);
        assert_eq!(super::slurm_version_number(25, 5, 3), 0x190503);
        assert_eq!(super::SLURM_22_05_8, 0x160508);
    }
}
