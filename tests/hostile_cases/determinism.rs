//! Issue 26, class 13: a simulation replays the same way twice.
//!
//! Before: WASI's wall clock answered real time while the `clock`
//! capability answered virtual time, and WASI's random source differed
//! between runs with the same seed. Now WASI's clocks are answered by the
//! host's `Clock` service and, with `HostOptions::random_seed`, WASI's
//! random sources are drawn from the seed.

use slurm_wasm_host::{fixtures, PluginSettings, TaskPlugin};

use super::runtime;

fn started_at(seed: Option<u64>, at: i64) -> TaskPlugin {
    let plugin = runtime::load(at, seed, PluginSettings::default()).expect("loads");
    plugin.init(&fixtures::task_config()).expect("init");
    plugin
}

fn answer(plugin: &TaskPlugin, act: &str) -> String {
    runtime::act(plugin, act).expect("answers").join(" ")
}

#[test]
fn wasi_wall_time_is_the_virtual_time() {
    let plugin = started_at(Some(1), 1_700_000_000);
    assert_eq!(answer(&plugin, "wasi-time"), "wall=1700000000");
}

#[test]
fn wasi_randomness_follows_the_seed() {
    let first = answer(&started_at(Some(7), 0), "wasi-random");
    let again = answer(&started_at(Some(7), 0), "wasi-random");
    let other = answer(&started_at(Some(8), 0), "wasi-random");
    assert_eq!(first, again, "same seed, same draws");
    assert_ne!(first, other, "another seed, other draws");
}

#[test]
fn without_a_seed_wasi_randomness_comes_from_the_system() {
    let first = answer(&started_at(None, 0), "wasi-random");
    let second = answer(&started_at(None, 0), "wasi-random");
    assert_ne!(first, second);
}
