//! Slurm RPC protocol versions (`SLURM_<release>_PROTOCOL_VERSION` =
//! `(n << 8) | 0`, `src/common/slurm_protocol_common.h`): what `pack` and
//! `unpack` of the select nodeinfo and jobinfo resources accept
//! (`select::info`, with the `select` feature).
//!
//! Slurm 22.05 speaks its own protocol and the two releases before it
//! (`SLURM_MIN_PROTOCOL_VERSION` = 20.11); anything else is refused with
//! `EINVAL`. Slurm's own pack functions instead write nothing for a
//! version below the minimum and still return success, leaving the
//! receiver to misread the buffer; a clear error is kinder to a caller.

use crate::Error;

/// `SLURM_20_11_PROTOCOL_VERSION` = (36 << 8) | 0.
pub const SLURM_20_11: u16 = 36 << 8;
/// `SLURM_21_08_PROTOCOL_VERSION` = (37 << 8) | 0.
pub const SLURM_21_08: u16 = 37 << 8;
/// `SLURM_22_05_PROTOCOL_VERSION` = (38 << 8) | 0.
pub const SLURM_22_05: u16 = 38 << 8;
/// `SLURM_PROTOCOL_VERSION` of the release the plugins implement.
pub const CURRENT: u16 = SLURM_22_05;
/// `SLURM_MIN_PROTOCOL_VERSION` of Slurm 22.05.
pub const MIN: u16 = SLURM_20_11;
/// Every version [`check`] accepts, oldest first.
pub const VERSIONS: [u16; 3] = [SLURM_20_11, SLURM_21_08, SLURM_22_05];

/// The release a supported protocol version belongs to.
pub fn release(version: u16) -> Option<&'static str> {
    match version {
        SLURM_20_11 => Some("20.11"),
        SLURM_21_08 => Some("21.08"),
        SLURM_22_05 => Some("22.05"),
        _ => None,
    }
}

/// Accepts the protocol versions of 20.11, 21.08 and 22.05; anything else is
/// `EINVAL` naming the version and `what` was being packed or unpacked.
pub fn check(version: u16, what: &str) -> Result<(), Error> {
    match release(version) {
        Some(_) => Ok(()),
        None => Err(Error::invalid(format!(
            "{what}: unsupported protocol version {version:#06x}; this plugin speaks \
             {SLURM_20_11:#06x} (20.11), {SLURM_21_08:#06x} (21.08) and {SLURM_22_05:#06x} (22.05)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_slurms() {
        // slurm_protocol_common.h of 22.05: 38<<8, 37<<8, 36<<8.
        assert_eq!(SLURM_22_05, 0x2600);
        assert_eq!(SLURM_21_08, 0x2500);
        assert_eq!(SLURM_20_11, 0x2400);
        assert!(check(0x2600, "x").is_ok());
        assert!(check(0x2400, "x").is_ok());
        let err = check(0x2300, "nodeinfo unpack").unwrap_err();
        assert_eq!(err.code, crate::codes::EINVAL);
        assert!(err.message.contains("0x2300"), "{}", err.message);
        assert!(check(0x2700, "x").is_err());
        assert!(check(0x2601, "x").is_err());
        assert!(VERSIONS.iter().all(|&v| check(v, "x").is_ok()));
    }
}
