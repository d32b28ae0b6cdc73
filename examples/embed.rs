//! Embedding the host in a controller: load a priority plugin with explicit
//! limits and failure policy, prioritise a queue, save the plugin's state
//! atomically and restore it into a second instance.
//!
//! Run: `cargo run --example embed [path/to/priority_plugin.wasm]`
//! (without an argument it uses the bundled priority/basic).

use std::time::Duration;

use slurm_wasm_host::{
    fixtures, FailurePolicy, Grants, Host, Limits, PluginSettings, PluginSource, PriorityPlugin,
};

fn main() -> anyhow::Result<()> {
    let source = match std::env::args_os().nth(1) {
        Some(path) => PluginSource::File(path.into()),
        None => PluginSource::Bundled("priority/basic".into()),
    };

    // One host per process: it owns the engine and the compiled-code cache.
    let host = Host::new(slurm_wasm_bundled::host_options())?;

    // What the site allows this plugin: 50 million fuel and 100 ms per call,
    // 64 MiB of memory, no capabilities beyond log and clock, and two
    // restarts before it is disabled.
    let settings = PluginSettings {
        limits: Limits {
            fuel_per_call: 50_000_000,
            deadline: Duration::from_millis(100),
            memory_bytes: 64 << 20,
            ..Limits::default()
        },
        grants: Grants::none(),
        failure: FailurePolicy::Restart { max_restarts: 2 },
        ..PluginSettings::default()
    };
    let plugin = PriorityPlugin::load(&host, &source, settings.clone())?;
    let id = plugin.identity();
    println!(
        "loaded {} ({}), contract {}",
        id.plugin_type, id.plugin_name, id.contract_version
    );
    plugin.init(&fixtures::priority_config())?;

    // The controller's side of priority_p_set: keep lowest_prio across jobs.
    let mut lowest_prio = 0xffff_0000;
    for (job_id, nice) in [(101, 0), (102, 50), (103, 0)] {
        let mut job = fixtures::job(job_id);
        job.details.nice = nice;
        match plugin.assign(&mut lowest_prio, &job) {
            Ok(p) => println!("job {job_id} (nice {nice:>3}): priority {p}"),
            // A fault or a Slurm error is reported, never a crash; the
            // failure policy decides what serves the next call.
            Err(e) => println!("job {job_id}: {e}"),
        }
    }

    // State goes through the host's atomic, checksummed state files.
    let dir = tempfile_dir()?;
    let path = dir.join(format!("{}.state", id.plugin_type.replace('/', "_")));
    plugin.save_state_file(&path)?;
    let replica = PriorityPlugin::load(&host, &source, settings)?;
    replica.init(&fixtures::priority_config())?;
    replica.restore_state_file(&path)?;
    println!(
        "state saved to {} and restored into a second instance",
        path.display()
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// A private scratch directory under the system's temporary directory.
fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("slurm-wasm-embed-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
