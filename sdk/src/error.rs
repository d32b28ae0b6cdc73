//! [`Error`]: a Slurm error code with a message, convertible to the
//! contract's `plugin-error`.

use crate::codes;
use crate::types::PluginError;

/// A failure a plugin reports to the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: i32,
    pub message: String,
}

impl Error {
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
