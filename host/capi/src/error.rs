//! Errors as a C caller sees them: a Slurm code and a message the library
//! owns ([`swasm_error`]).

use std::ffi::{c_char, CString};
use std::fmt::Display;

use slurm_wasm_host::{CallError, StateFileError};

/// Slurm's `SLURM_SUCCESS`: what every fallible function returns when it
/// succeeded.
pub const SWASM_SUCCESS: i32 = 0;

/// Slurm's `SLURM_ERROR`: what every fallible function returns when it
/// failed; the error then says why.
pub const SWASM_ERROR: i32 = -1;

/// `ENOENT`: the code of a state restore that found no state file (a
/// plugin's first start, not a fault).
pub const SWASM_ENOENT: i32 = 2;

/// Why a call failed.
///
/// Every fallible function takes a `swasm_error *` (which may be NULL when
/// the caller does not want the reason). The struct must be initialised
/// before its first use (`swasm_error err = SWASM_ERROR_INIT;` or zeroed)
/// and may be reused from call to call: each call first releases what the
/// previous one left in it and clears it, and fills it only when it fails.
/// Release the last message with [`swasm_error_clear`].
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct swasm_error {
    /// The Slurm code a C plugin would have returned or put in errno: the
    /// plugin's own code when the plugin returned an error
    /// (`ESLURM_*`, an errno value or `SLURM_ERROR`), `SLURM_ERROR` (-1)
    /// for faults (trap, fuel, deadline, memory), invalid results, bad
    /// arguments and load failures, `ENOENT` for a missing state file.
    /// 0 after a call that succeeded.
    pub code: i32,
    /// One line naming what failed (file, slot, plugin, function, limit) and
    /// what is wrong; NUL-terminated, owned by the library, NULL after a
    /// call that succeeded. Free it with [`swasm_error_clear`] (or
    /// [`swasm_string_free`]) or let the next call that takes this struct
    /// free it.
    pub message: *mut c_char,
    /// When the plugin itself returned the error (not a fault), its own
    /// message as it gave it, without the library's naming of plugin and
    /// function: what a C plugin would have handed its caller (slurmd
    /// passes it to srun). NULL otherwise; owned and freed as `message`.
    pub plugin_message: *mut c_char,
}

/// A failure on its way to a [`swasm_error`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub code: i32,
    pub message: String,
    /// The plugin's own message, when the plugin returned the error.
    pub plugin_message: Option<String>,
}

impl Failure {
    /// `SLURM_ERROR` with `message`.
    pub fn new(message: impl Display) -> Failure {
        Failure {
            code: SWASM_ERROR,
            message: message.to_string(),
            plugin_message: None,
        }
    }
}

impl From<CallError> for Failure {
    fn from(error: CallError) -> Failure {
        let plugin_message = match &error {
            CallError::Plugin { message, .. } => Some(message.clone()),
            _ => None,
        };
        Failure {
            code: error.slurm_code(),
            message: error.to_string(),
            plugin_message,
        }
    }
}

impl From<StateFileError> for Failure {
    fn from(error: StateFileError) -> Failure {
        match error {
            StateFileError::Call(call) => call.into(),
            StateFileError::File(file) => Failure {
                code: if file.is_not_found() {
                    SWASM_ENOENT
                } else {
                    SWASM_ERROR
                },
                message: file.to_string(),
                plugin_message: None,
            },
        }
    }
}

/// `text` as a C string the library owns: NUL bytes (which C cannot carry)
/// are written as `\0`.
pub(crate) fn c_string(text: &str) -> *mut c_char {
    let cleaned = if text.contains('\0') {
        text.replace('\0', "\\0")
    } else {
        text.to_owned()
    };
    CString::new(cleaned)
        .expect("NUL bytes were replaced")
        .into_raw()
}

/// Frees a string the library returned (an error message, a string field of
/// a result) and does nothing for NULL.
///
/// # Safety
/// `s` is NULL or a string this library returned that has not been freed
/// yet; it must not be used afterwards. Strings inside result structs are
/// freed by the struct's own `swasm_*_free`, not here.
#[no_mangle]
pub unsafe extern "C" fn swasm_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: the caller passes a string from `c_string`, once.
        drop(unsafe { CString::from_raw(s) });
    }
}

/// Frees the messages of `error` and sets it to success (`code` 0,
/// `message` and `plugin_message` NULL). Does nothing for NULL.
///
/// # Safety
/// `error` is NULL or points to an initialised [`swasm_error`].
#[no_mangle]
pub unsafe extern "C" fn swasm_error_clear(error: *mut swasm_error) {
    // SAFETY: the caller passes NULL or an initialised error.
    if let Some(error) = unsafe { error.as_mut() } {
        // SAFETY: an initialised error holds NULL or a message of ours.
        unsafe { swasm_string_free(error.message) };
        // SAFETY: as above.
        unsafe { swasm_string_free(error.plugin_message) };
        error.message = std::ptr::null_mut();
        error.plugin_message = std::ptr::null_mut();
        error.code = SWASM_SUCCESS;
    }
}

/// `text` on one line, as a daemon's log needs it: source excerpts (the
/// `  |` and `2 | ...` lines of a TOML error) are left out, and the other
/// lines are joined with `: `, or with a space inside a bracketed list.
pub(crate) fn one_line(text: &str) -> String {
    let excerpt = |line: &str| {
        line.starts_with('|')
            || line
                .split_once(" |")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut out = String::with_capacity(text.len());
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !excerpt(l))
    {
        if !out.is_empty() {
            let in_list = out.ends_with(['[', '(', ',']) || line.starts_with([']', ')']);
            out.push_str(if in_list { " " } else { ": " });
        }
        out.push_str(line);
    }
    out
}

/// Stores the outcome of a call in `error` (when not NULL) and returns what
/// the C function returns.
///
/// # Safety
/// `error` is NULL or points to an initialised [`swasm_error`].
pub(crate) unsafe fn report(error: *mut swasm_error, outcome: Result<(), Failure>) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { swasm_error_clear(error) };
    match outcome {
        Ok(()) => SWASM_SUCCESS,
        Err(failure) => {
            // SAFETY: as above.
            if let Some(error) = unsafe { error.as_mut() } {
                error.code = failure.code;
                error.message = c_string(&one_line(&failure.message));
                if let Some(text) = &failure.plugin_message {
                    error.plugin_message = c_string(&one_line(text));
                }
            }
            SWASM_ERROR
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header gives the value as a literal (cbindgen cannot evaluate
    /// `libc::ENOENT`): it must be the platform's.
    #[test]
    fn messages_are_one_line() {
        let toml = "/etc/h.toml: TOML parse error at line 2, column 18\n  |\n2 | [plugins.priority\n  |                  ^\nunclosed table, expected `]`\n";
        assert_eq!(
            one_line(toml),
            "/etc/h.toml: TOML parse error at line 2, column 18: unclosed table, expected `]`"
        );
        let wasm = "bad magic number - expected=[\n    0x0,\n    0x61,\n] actual=[\n    0x6a,\n] (at offset 0x0)";
        assert_eq!(
            one_line(wasm),
            "bad magic number - expected=[ 0x0, 0x61, ] actual=[ 0x6a, ] (at offset 0x0)"
        );
        assert_eq!(one_line("plain"), "plain");
    }

    #[test]
    fn enoent_is_the_platforms() {
        assert_eq!(SWASM_ENOENT, libc::ENOENT);
    }
}
