//! Plugin logs and host warnings to the daemon's log: a `tracing` layer
//! that hands each event to the shim's callback.
//!
//! The subscriber is never installed globally: every ABI call runs with it
//! as the calling thread's default dispatcher
//! ([`tracing::dispatcher::with_default`]), so what a call logs (the
//! plugin's `log` capability and WASI output, the host's warnings about
//! faults, restarts, fallbacks and dropped logs) goes to the callback of the
//! host the call is about, and nothing is printed to the daemon's stdout or
//! stderr. Without a callback, logs are dropped.

use std::ffi::{c_char, c_void, CString};
use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Dispatch, Event, Level, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;

/// A log level, from most to least severe. Slurm's counterparts:
/// `error()`, `info()` (for warnings too: Slurm has no warning level that
/// daemons print by default), `verbose()`, `debug()`, `debug2()`.
#[allow(non_camel_case_types)]
pub type swasm_log_level = u32;
/// A fault, a disabled plugin, a failed state checkpoint; plugins' errors.
pub const SWASM_LOG_ERROR: swasm_log_level = 1;
/// A restart, a fallback, dropped log lines, a denied capability; plugins'
/// warnings.
pub const SWASM_LOG_WARN: swasm_log_level = 2;
/// Plugins' information and what they print on stdout/stderr.
pub const SWASM_LOG_INFO: swasm_log_level = 3;
/// Plugins' and the host's debugging output.
pub const SWASM_LOG_DEBUG: swasm_log_level = 4;
/// Everything.
pub const SWASM_LOG_TRACE: swasm_log_level = 5;

/// Receives one log line.
///
/// `ctx` is the pointer given to `swasm_host_open`; `message` is one
/// NUL-terminated line (control characters escaped), valid only during the
/// call. The callback is called on the thread making the ABI call, from any
/// thread that makes one, so it must be thread-safe. It must not call back
/// into this library, and must not fork.
#[allow(non_camel_case_types)]
pub type swasm_log_fn =
    Option<unsafe extern "C" fn(ctx: *mut c_void, level: swasm_log_level, message: *const c_char)>;

/// The callback and its context pointer.
#[derive(Clone, Copy)]
struct Sink {
    callback: unsafe extern "C" fn(*mut c_void, swasm_log_level, *const c_char),
    ctx: *mut c_void,
}

// SAFETY: the callback is documented as thread-safe; `ctx` is the caller's
// to share between threads (it is only ever passed back to the callback).
unsafe impl Send for Sink {}
// SAFETY: as above.
unsafe impl Sync for Sink {}

impl Sink {
    fn emit(&self, level: swasm_log_level, line: &str) {
        let line = CString::new(crate::error::one_line(line).replace('\0', "\\0"))
            .expect("NUL bytes were replaced");
        // SAFETY: the callback was given to swasm_host_open for this; the
        // line lives until it returns.
        unsafe { (self.callback)(self.ctx, level, line.as_ptr()) };
    }
}

/// The dispatcher that routes events of `max_level` and more severe to
/// `callback` (none when `callback` is NULL or `max_level` is 0).
pub(crate) fn dispatch(
    callback: swasm_log_fn,
    ctx: *mut c_void,
    max_level: swasm_log_level,
) -> Dispatch {
    let filter = match max_level {
        0 => LevelFilter::OFF,
        SWASM_LOG_ERROR => LevelFilter::ERROR,
        SWASM_LOG_WARN => LevelFilter::WARN,
        SWASM_LOG_INFO => LevelFilter::INFO,
        SWASM_LOG_DEBUG => LevelFilter::DEBUG,
        _ => LevelFilter::TRACE,
    };
    match callback {
        Some(callback) if filter != LevelFilter::OFF => Dispatch::new(
            tracing_subscriber::registry()
                .with(filter)
                .with(CallbackLayer {
                    sink: Sink { callback, ctx },
                }),
        ),
        _ => Dispatch::none(),
    }
}

struct CallbackLayer {
    sink: Sink,
}

impl<S: Subscriber> Layer<S> for CallbackLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let mut line = Line::default();
        event.record(&mut line);
        let level = match *event.metadata().level() {
            Level::ERROR => SWASM_LOG_ERROR,
            Level::WARN => SWASM_LOG_WARN,
            Level::INFO => SWASM_LOG_INFO,
            Level::DEBUG => SWASM_LOG_DEBUG,
            Level::TRACE => SWASM_LOG_TRACE,
        };
        self.sink.emit(level, &line.finish());
    }
}

/// One event as a line: `slurm-wasm: <plugin>: <message> key=value ...`.
/// The plugin's type leads when the event names one and other fields follow
/// the message, except for the host's call errors, which begin with
/// `plugin <type>: <function>` and so already say both.
#[derive(Default)]
struct Line {
    plugin: Option<String>,
    message: String,
    fields: Vec<(&'static str, String)>,
}

impl Line {
    fn finish(self) -> String {
        let mut out = String::from("slurm-wasm: ");
        let names_itself = self
            .plugin
            .as_ref()
            .is_some_and(|plugin| self.message.starts_with(&format!("plugin {plugin}: ")));
        if let (Some(plugin), false) = (&self.plugin, names_itself) {
            let _ = write!(out, "{plugin}: ");
        }
        out.push_str(&self.message);
        if !names_itself {
            for (name, value) in &self.fields {
                let _ = write!(out, " {name}={value}");
            }
        }
        out
    }
}

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "plugin" => self.plugin = Some(value.to_owned()),
            "message" => self.message = value.to_owned(),
            name => self.fields.push((name, value.to_owned())),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let text = format!("{value:?}");
        match field.name() {
            "plugin" => self.plugin = Some(text),
            "message" => self.message = text,
            name => self.fields.push((name, text)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(plugin: Option<&str>, message: &str, fields: &[(&'static str, &str)]) -> String {
        Line {
            plugin: plugin.map(Into::into),
            message: message.into(),
            fields: fields.iter().map(|(k, v)| (*k, (*v).into())).collect(),
        }
        .finish()
    }

    #[test]
    fn lines_name_the_plugin_once() {
        assert_eq!(
            line(Some("priority/basic"), "hello", &[]),
            "slurm-wasm: priority/basic: hello"
        );
        // The host's fault messages already start with the plugin and name
        // the function.
        assert_eq!(
            line(
                Some("priority/x"),
                "plugin priority/x: set ran out of fuel (limit 5 units per call)",
                &[("function", "set")]
            ),
            "slurm-wasm: plugin priority/x: set ran out of fuel (limit 5 units per call)"
        );
        assert_eq!(
            line(Some("task/x"), "stdout line", &[("stream", "stdout")]),
            "slurm-wasm: task/x: stdout line stream=stdout"
        );
        assert_eq!(
            line(
                Some("task/x"),
                "dropped 3 log messages",
                &[("function", "set")]
            ),
            "slurm-wasm: task/x: dropped 3 log messages function=set"
        );
    }
}
