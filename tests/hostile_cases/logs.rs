//! Issue 26, class 9: a plugin can neither flood nor forge the host's log.
//!
//! Before: one call wrote 1.1 GB to the host log, and a message containing
//! `\n` forged a whole line. Now messages are escaped and bounded per call
//! and per plugin (`slurm_wasm_host::plugin_log`); what is dropped is
//! counted in one line of the host's own.

use std::io::Write;
use std::sync::{Arc, Mutex};

use slurm_wasm_host::plugin_log::PER_CALL_BYTES;
use slurm_wasm_host::{PluginSettings, TaskPlugin};

use super::runtime;

/// What the host logged while `f` ran on this thread.
fn captured(f: impl FnOnce()) -> String {
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    let bytes = sink.0.lock().unwrap().clone();
    String::from_utf8(bytes).expect("utf-8 log")
}

fn runtime() -> TaskPlugin {
    runtime::started(None, PluginSettings::default())
}

fn act(plugin: &TaskPlugin, act: &str) {
    runtime::act(plugin, act).expect("the call succeeds");
}

#[test]
fn a_log_flood_is_cut_to_the_call_allowance_and_reported() {
    let plugin = runtime();
    // 200 messages of 64 KiB: 12.5 MiB asked for.
    let log = captured(|| act(&plugin, "log-flood:200"));
    assert!(
        log.len() < PER_CALL_BYTES + (64 << 10),
        "{} bytes logged",
        log.len()
    );
    assert!(
        log.contains("dropped 196 log messages"),
        "{}",
        &log[log.len().saturating_sub(400)..]
    );
    assert!(log.contains("over the plugin's log allowance"));
}

#[test]
fn a_stdout_flood_draws_from_the_same_allowance() {
    let plugin = runtime();
    let log = captured(|| act(&plugin, "stdout-flood:200"));
    assert!(
        log.len() < PER_CALL_BYTES + (64 << 10),
        "{} bytes logged",
        log.len()
    );
    assert!(log.contains("over the plugin's log allowance"));
}

#[test]
fn the_plugin_allowance_outlasts_its_calls() {
    // 4 MiB per plugin, refilled at 64 KiB/s: twenty full calls in a row
    // cannot each write their 256 KiB.
    let plugin = runtime();
    let log = captured(|| {
        for _ in 0..20 {
            act(&plugin, "log-flood:4");
        }
    });
    assert!(log.len() < (5 << 20), "{} bytes logged", log.len());
    assert!(log.contains("over the plugin's log allowance"));
}

#[test]
fn control_characters_cannot_forge_a_line() {
    let plugin = runtime();
    let log = captured(|| act(&plugin, "log-forge"));
    for line in log.lines() {
        // A forged entry would start a line of its own (or, after a carriage
        // return or a terminal escape, look as if it did).
        assert!(
            !line.starts_with("ERROR slurm_wasm"),
            "forged line: {line:?}"
        );
        assert!(!line.contains('\r') && !line.contains('\u{1b}'), "{line:?}");
    }
    assert!(log.contains("ok\\nERROR slurm_wasm"), "{log}");
    assert!(log.contains("ok\\rERROR slurm_wasm"), "{log}");
    assert!(log.contains("\\u{1b}[2K"), "{log}");
}
