//! [`Error`]: a Slurm error code with a message, convertible to the
//! contract's `plugin-error`.

use crate::codes;
use crate::types::{Capability, CapabilityError, PluginError};

/// A failure a plugin reports to the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The Slurm code a C plugin would return ([`codes`]).
    pub code: i32,
    /// What went wrong, for the daemon's log (and, for a refusal, the user).
    pub message: String,
}

impl Error {
    /// An error with `code` and `message`.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// `SLURM_ERROR` with a message.
    pub fn generic(message: impl Into<String>) -> Self {
        Self::new(codes::SLURM_ERROR, message)
    }

    /// `EINVAL`: the host passed something the plugin cannot use.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(codes::EINVAL, message)
    }

    /// `ESLURM_NOT_SUPPORTED`.
    pub fn not_supported(what: impl std::fmt::Display) -> Self {
        Self::new(
            codes::ESLURM_NOT_SUPPORTED,
            format!("{what} is not supported"),
        )
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for Error {}

impl From<Error> for PluginError {
    fn from(e: Error) -> Self {
        PluginError {
            code: e.code,
            message: e.message,
        }
    }
}

impl From<PluginError> for Error {
    fn from(e: PluginError) -> Self {
        Error::new(e.code, e.message)
    }
}

/// A capability's name in the contract (`wit/types.wit`), as host
/// configurations grant it.
pub fn capability_name(capability: Capability) -> &'static str {
    match capability {
        Capability::Log => "log",
        Capability::Clock => "clock",
        Capability::Topology => "topology",
        Capability::Cpuset => "cpuset",
        Capability::Gpu => "gpu",
        Capability::GpuControl => "gpu-control",
    }
}

/// A capability call that failed, as the plugin's error (`SLURM_ERROR`),
/// so that `?` carries it out of a plugin function: `capability <name>
/// denied (not granted)`, `capability unavailable: ...` or `capability
/// call failed: ...`.
impl From<CapabilityError> for Error {
    fn from(e: CapabilityError) -> Self {
        Error::generic(match e {
            CapabilityError::Denied(c) => {
                format!("capability {} denied (not granted)", capability_name(c))
            }
            CapabilityError::Unavailable(why) => format!("capability unavailable: {why}"),
            CapabilityError::Failed(why) => format!("capability call failed: {why}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_errors_carry_their_reason() {
        let e = Error::from(CapabilityError::Denied(Capability::Cpuset));
        assert_eq!(e.code, codes::SLURM_ERROR);
        assert_eq!(e.message, "capability cpuset denied (not granted)");
        let e = Error::from(CapabilityError::Failed("EPERM".into()));
        assert_eq!(e.message, "capability call failed: EPERM");
    }
}
