//! What a plugin may write to the host's log: escaped, and bounded per call
//! and per plugin.
//!
//! A plugin writes through the `log` capability and through WASI's stdout
//! and stderr. Both end here, so both obey the same two rules:
//!
//! * **Escaped.** Control characters (a newline, a carriage return, a
//!   terminal escape, ...) and Unicode's bidirectional overrides are written
//!   as escapes (`\n`, `\u{1b}`), so a message can neither start a line of
//!   its own that looks like the host's nor rewrite what a terminal shows.
//! * **Bounded.** One message keeps at most [`MAX_MESSAGE`] bytes; one call
//!   may write [`PER_CALL_BYTES`]; one plugin, across calls and restarts,
//!   draws from a bucket of [`BURST_BYTES`] refilled at [`BYTES_PER_SECOND`].
//!   What is over is dropped and counted, and the host logs one line per
//!   call that says how much was dropped (`LogBudget::end_call`).

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::bindings::base::slurm::plugin::log::Level;

/// Longest message kept; the rest is cut with a marker.
pub const MAX_MESSAGE: usize = 64 << 10;
/// Bytes one call may log.
pub const PER_CALL_BYTES: usize = 256 << 10;
/// Bytes one plugin may log in a burst.
pub const BURST_BYTES: u64 = 4 << 20;
/// Bytes per second the plugin's allowance grows back by, up to
/// [`BURST_BYTES`].
pub const BYTES_PER_SECOND: u64 = 64 << 10;

/// Where a plugin's text came from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Origin {
    /// The `log` capability, at the level the plugin chose.
    Log(Level),
    /// WASI's `stdout` or `stderr`, one event per line.
    Stream(&'static str),
}

/// What one call had dropped (see [`LogBudget::end_call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dropped {
    pub bytes: u64,
    pub messages: u64,
}

/// The log allowance of one plugin, shared by its instances (a restarted
/// instance does not get a fresh one). The call's counts are atomics, so
/// starting and ending a call that logs nothing costs a few stores and a
/// load; the bucket is locked only to write.
#[derive(Debug)]
pub(crate) struct LogBudget {
    bucket: Mutex<Bucket>,
    /// Bytes written in the call in progress.
    call_bytes: AtomicUsize,
    dropped_bytes: AtomicU64,
    dropped_messages: AtomicU64,
}

#[derive(Debug)]
struct Bucket {
    /// Bytes the plugin may still write before its bucket is empty.
    left: u64,
    refilled: Instant,
}

impl Default for LogBudget {
    fn default() -> Self {
        LogBudget {
            bucket: Mutex::new(Bucket {
                left: BURST_BYTES,
                refilled: Instant::now(),
            }),
            call_bytes: AtomicUsize::new(0),
            dropped_bytes: AtomicU64::new(0),
            dropped_messages: AtomicU64::new(0),
        }
    }
}

impl LogBudget {
    /// Starts a call's count afresh.
    pub(crate) fn start_call(&self) {
        self.call_bytes.store(0, Ordering::Relaxed);
        self.dropped_bytes.store(0, Ordering::Relaxed);
        self.dropped_messages.store(0, Ordering::Relaxed);
    }

    /// What the call dropped, if anything.
    pub(crate) fn end_call(&self) -> Option<Dropped> {
        let messages = self.dropped_messages.load(Ordering::Relaxed);
        (messages > 0).then(|| Dropped {
            bytes: self.dropped_bytes.load(Ordering::Relaxed),
            messages,
        })
    }

    /// May `len` more bytes be written? Counts them if so, counts them as
    /// dropped if not.
    fn admit(&self, len: usize) -> bool {
        let mut bucket = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let regained =
            (now.duration_since(bucket.refilled).as_secs_f64() * BYTES_PER_SECOND as f64) as u64;
        if regained > 0 {
            bucket.left = bucket.left.saturating_add(regained).min(BURST_BYTES);
            bucket.refilled = now;
        }
        let call_bytes = self.call_bytes.load(Ordering::Relaxed);
        let within_call = call_bytes.saturating_add(len) <= PER_CALL_BYTES;
        if within_call && bucket.left >= len as u64 {
            bucket.left -= len as u64;
            self.call_bytes.store(call_bytes + len, Ordering::Relaxed);
            true
        } else {
            self.dropped_bytes.fetch_add(len as u64, Ordering::Relaxed);
            self.dropped_messages.fetch_add(1, Ordering::Relaxed);
            false
        }
    }

    /// Writes one message of `plugin` to `tracing`: cut to [`MAX_MESSAGE`],
    /// escaped, and only if the allowance has room for it.
    pub(crate) fn write(&self, plugin: &str, origin: Origin, message: &[u8]) {
        let cut = &message[..message.len().min(MAX_MESSAGE)];
        let text = String::from_utf8_lossy(cut);
        let mut text = escape(&text).into_owned();
        if cut.len() < message.len() {
            text.push_str(" [truncated]");
        }
        if !self.admit(text.len()) {
            return;
        }
        match origin {
            Origin::Log(level) => match level {
                Level::Error => tracing::error!(target: "slurm_wasm::plugin", plugin, "{text}"),
                Level::Warn => tracing::warn!(target: "slurm_wasm::plugin", plugin, "{text}"),
                Level::Info => tracing::info!(target: "slurm_wasm::plugin", plugin, "{text}"),
                Level::Debug => tracing::debug!(target: "slurm_wasm::plugin", plugin, "{text}"),
                Level::Trace => tracing::trace!(target: "slurm_wasm::plugin", plugin, "{text}"),
            },
            Origin::Stream(stream) => {
                tracing::info!(target: "slurm_wasm::plugin_output", plugin, stream, "{text}")
            }
        }
    }
}

/// `text` with control characters and bidirectional overrides escaped
/// (`\n`, `\r`, `\u{1b}`, `\u{202e}`); tabs and other text unchanged.
pub fn escape(text: &str) -> Cow<'_, str> {
    let needs = |c: char| {
        (c.is_control() && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape("plain\ttext"), "plain\ttext");
        assert_eq!(
            escape("ok\nERROR forged\r\u{1b}[2K\u{202e}"),
            "ok\\nERROR forged\\r\\u{1b}[2K\\u{202e}"
        );
        assert!(matches!(escape("ünïcode"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_call_may_log_its_share_and_no_more() {
        let budget = LogBudget::default();
        budget.start_call();
        let block = PER_CALL_BYTES / 4;
        for _ in 0..4 {
            assert!(budget.admit(block));
        }
        assert!(!budget.admit(1));
        assert_eq!(
            budget.end_call(),
            Some(Dropped {
                bytes: 1,
                messages: 1
            })
        );
        budget.start_call();
        assert!(budget.admit(block));
        assert_eq!(budget.end_call(), None);
    }

    #[test]
    fn the_plugin_allowance_outlasts_calls() {
        let budget = LogBudget::default();
        let calls = BURST_BYTES as usize / PER_CALL_BYTES;
        for _ in 0..calls {
            budget.start_call();
            assert!(budget.admit(PER_CALL_BYTES));
        }
        budget.start_call();
        // The bucket is empty; it grows back by BYTES_PER_SECOND only.
        assert!(!budget.admit(PER_CALL_BYTES));
    }
}
