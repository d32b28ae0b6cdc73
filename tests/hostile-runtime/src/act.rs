//! What `slurmd-launch-request` does, by the request's `cpu-bind` string.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use slurm_wasm_sdk::host::{log, Level};

/// One act; its messages come back in the binding's `messages`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    /// `sleep:<ms>`: `std::thread::sleep`, a blocking WASI clock wait.
    Sleep(u64),
    /// `log-flood:<n>`: `n` log messages of 64 KiB each.
    LogFlood(u64),
    /// `stdout-flood:<n>`: `n` lines of 64 KiB each on stdout.
    StdoutFlood(u64),
    /// `log-forge`: one log message and one stdout line that carry a
    /// newline, a carriage return and a terminal escape, each followed by
    /// text made to look like a line of the host's own log.
    LogForge,
    /// `wasi-time`: answers `wall=<seconds>`, WASI's wall clock as
    /// `std::time::SystemTime` reads it.
    WasiTime,
    /// `wasi-random`: answers `random=<hex>`, a hash keyed by std's
    /// `RandomState`, whose keys come from WASI's random source.
    WasiRandom,
    /// Anything else: nothing.
    Nothing,
}

/// The text a forged line pretends to be.
pub const FORGED: &str = "ERROR slurm_wasm: plugin select/cons_tres: forged entry";

impl Act {
    /// The act `name` names.
    pub fn parse(name: &str) -> Act {
        let count = |prefix: &str| name.strip_prefix(prefix).and_then(|n| n.parse().ok());
        if let Some(ms) = count("sleep:") {
            return Act::Sleep(ms);
        }
        if let Some(n) = count("log-flood:") {
            return Act::LogFlood(n);
        }
        if let Some(n) = count("stdout-flood:") {
            return Act::StdoutFlood(n);
        }
        match name {
            "log-forge" => Act::LogForge,
            "wasi-time" => Act::WasiTime,
            "wasi-random" => Act::WasiRandom,
            _ => Act::Nothing,
        }
    }

    /// Acts; returns the messages to answer with.
    pub fn run(&self) -> Vec<String> {
        match self {
            Act::Sleep(ms) => {
                std::thread::sleep(Duration::from_millis(*ms));
                vec!["woke".into()]
            }
            Act::LogFlood(n) => {
                let block = "x".repeat(64 << 10);
                for _ in 0..*n {
                    log(Level::Error, &block);
                }
                Vec::new()
            }
            Act::StdoutFlood(n) => {
                let block = "y".repeat(64 << 10);
                for _ in 0..*n {
                    println!("{block}");
                }
                Vec::new()
            }
            Act::LogForge => {
                log(Level::Info, &format!("ok\n{FORGED}\r{FORGED}\u{1b}[2K"));
                println!("ok\r{FORGED}\u{1b}[1A");
                Vec::new()
            }
            Act::WasiTime => {
                let wall = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                vec![format!("wall={wall}")]
            }
            Act::WasiRandom => vec![format!("random={:016x}", keyed_hash())],
            Act::Nothing => Vec::new(),
        }
    }
}

/// A hash of a fixed value under a fresh `RandomState`: it differs between
/// two instances exactly when WASI's random source does.
fn keyed_hash() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(Act::parse("sleep:20"), Act::Sleep(20));
        assert_eq!(Act::parse("log-flood:3"), Act::LogFlood(3));
        assert_eq!(Act::parse("log-forge"), Act::LogForge);
        assert_eq!(Act::parse("sleep:x"), Act::Nothing);
    }
}
