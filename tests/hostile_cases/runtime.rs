//! task/hostile_runtime on a host of its own, whose clock reads a chosen
//! time (the plugin's identity and `init` follow it) and whose WASI
//! randomness follows a chosen seed.

use std::sync::Arc;

use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::{
    fixtures, CallError, Host, HostOptions, LoadError, PluginSettings, PluginSource, Services,
    TaskPlugin,
};

/// Loads task/hostile_runtime on a fresh host whose clock reads `at`.
pub fn load(at: i64, seed: Option<u64>, settings: PluginSettings) -> Result<TaskPlugin, LoadError> {
    let host = Host::new(HostOptions {
        services: Services {
            clock: Arc::new(VirtualClock::new(at)),
            ..Services::default()
        },
        random_seed: seed,
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    TaskPlugin::load(
        &host,
        &PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_RUNTIME.into()),
        settings,
    )
}

/// [`load`] at time 0 (the honest identity), then `init`.
pub fn started(seed: Option<u64>, settings: PluginSettings) -> TaskPlugin {
    let plugin = load(0, seed, settings).expect("task/hostile_runtime loads");
    plugin.init(&fixtures::task_config()).expect("init");
    plugin
}

/// Has the plugin act out `act` in `slurmd-launch-request`; its messages.
pub fn act(plugin: &TaskPlugin, act: &str) -> Result<Vec<String>, CallError> {
    let mut request = fixtures::launch_request(1, 1, 4);
    request.cpu_bind = act.into();
    plugin.slurmd_launch_request(&request).map(|b| b.messages)
}
