//! Issue 26, class 13: a simulation replays the same way twice.
//!
//! Before: WASI's wall clock answered real time while the `clock`
//! capability answered virtual time, and WASI's random source differed
//! between runs with the same seed. Now WASI's clocks are answered by the
//! host's `Clock` service and, with `HostOptions::random_seed`, WASI's
//! random sources are drawn from the seed.

use std::sync::Arc;

use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::{
    fixtures, Host, HostOptions, PluginSettings, PluginSource, Services, TaskPlugin,
};

fn runtime(seed: Option<u64>, at: i64) -> TaskPlugin {
    let host = Host::new(HostOptions {
        services: Services {
            clock: Arc::new(VirtualClock::new(at)),
            ..Services::default()
        },
        random_seed: seed,
        ..HostOptions::default()
    })
    .expect("host");
    let plugin = TaskPlugin::load(
        &host,
        &PluginSource::File(env!("SLURM_WASM_TEST_HOSTILE_RUNTIME").into()),
        PluginSettings::default(),
    )
    .expect("loads");
    plugin.init(&fixtures::task_config()).expect("init");
    plugin
}

fn answer(plugin: &TaskPlugin, act: &str) -> String {
    let mut request = fixtures::launch_request(1, 1, 4);
    request.cpu_bind = act.into();
    let messages = plugin
        .slurmd_launch_request(&request)
        .expect("answers")
        .messages;
    messages.join(" ")
}

#[test]
fn wasi_wall_time_is_the_virtual_time() {
    let plugin = runtime(Some(1), 1_700_000_000);
    assert_eq!(answer(&plugin, "wasi-time"), "wall=1700000000");
}

#[test]
fn wasi_randomness_follows_the_seed() {
    let first = answer(&runtime(Some(7), 0), "wasi-random");
    let again = answer(&runtime(Some(7), 0), "wasi-random");
    let other = answer(&runtime(Some(8), 0), "wasi-random");
    assert_eq!(first, again, "same seed, same draws");
    assert_ne!(first, other, "another seed, other draws");
}

#[test]
fn without_a_seed_wasi_randomness_comes_from_the_system() {
    let first = answer(&runtime(None, 0), "wasi-random");
    let second = answer(&runtime(None, 0), "wasi-random");
    assert_ne!(first, second);
}
