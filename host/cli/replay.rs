//! `slurm-wasm replay`: a recording of a plugin's calls (from `simulate
//! --record`, `select place --record` or a host that records a slot),
//! summarised per function, and run again against another build.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::recording::{self, Recording};
use slurm_wasm_host::replay::{self, Divergences, FunctionSummary, Replayer};
use slurm_wasm_host::{
    GresPlugin, Host, HostOptions, PluginKind, PluginSettings, PluginSource, PriorityPlugin,
    SelectPlugin, Services, TaskPlugin,
};

/// What `replay` was asked.
pub struct ReplayArgs<'a> {
    pub recording: &'a Path,
    pub plugin: Option<PluginSource>,
    pub report: bool,
    pub json: bool,
    pub show: usize,
}

/// Reads the recording, prints its summary (`--report`) and the replay's
/// divergences (`--plugin`/`--bundled`). Exit code 1 when a replayed call
/// diverged, as `diff` does.
pub fn run(args: ReplayArgs<'_>) -> anyhow::Result<ExitCode> {
    if args.plugin.is_none() && !args.report {
        anyhow::bail!(
            "nothing to do: give --plugin FILE or --bundled TYPE to replay the calls against, \
             or --report to summarise them"
        );
    }
    let recording = recording::read(args.recording)?;
    let summary = args.report.then(|| replay::summarise(&recording));
    let replayed = match &args.plugin {
        Some(source) => Some(replay_against(&recording, source, args.show)?),
        None => None,
    };
    if args.json {
        let value = serde_json::json!({
            "recording": args.recording,
            "header": recording.header,
            "calls": recording.calls.len(),
            "functions": summary,
            "replay": replayed.as_ref().map(|(plugin, d)| serde_json::json!({
                "plugin": plugin,
                "diverged": d.total(),
                "divergences": d,
            })),
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print_text(&args, &recording, summary.as_ref(), replayed.as_ref());
    }
    let diverged = replayed.is_some_and(|(_, d)| d.total() > 0);
    Ok(if diverged {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Loads `source` as a plugin of the recording's kind, on a host whose
/// clock reads each call's recorded clock, and replays every call.
fn replay_against(
    recording: &Recording,
    source: &PluginSource,
    keep: usize,
) -> anyhow::Result<(String, Divergences)> {
    let kind: PluginKind = recording
        .header
        .kind
        .parse()
        .map_err(|e| anyhow::anyhow!("the recording's kind: {e}"))?;
    let clock = Arc::new(VirtualClock::default());
    let host = Host::new(HostOptions {
        services: Services {
            clock: clock.clone(),
            ..Services::default()
        },
        random_seed: Some(0),
        ..slurm_wasm_bundled::host_options()
    })?;
    let settings = PluginSettings::default();
    let plugin: Box<dyn Replayer> = match kind {
        PluginKind::Select => Box::new(SelectPlugin::load(&host, source, settings)?),
        PluginKind::Gres => Box::new(GresPlugin::load(&host, source, settings)?),
        PluginKind::Priority => Box::new(PriorityPlugin::load(&host, source, settings)?),
        PluginKind::Task => Box::new(TaskPlugin::load(&host, source, settings)?),
    };
    let plugin_type = plugin.plugin_type();
    let divergences = replay::run(recording, &*plugin, &clock, keep)
        .with_context(|| format!("replaying into {plugin_type}"))?;
    Ok((plugin_type, divergences))
}

fn print_text(
    args: &ReplayArgs<'_>,
    recording: &Recording,
    summary: Option<&std::collections::BTreeMap<String, FunctionSummary>>,
    replayed: Option<&(String, Divergences)>,
) {
    let h = &recording.header;
    println!(
        "recording {}: {} calls of {} {} ({} plugin, component {}, contract {})",
        args.recording.display(),
        recording.calls.len(),
        h.plugin_type,
        h.plugin_version,
        h.kind,
        &h.component[..h.component.len().min(12)],
        h.contract
    );
    if let Some(functions) = summary {
        println!();
        println!(
            "{:<26} {:>8} {:>7} {:>12} {:>12} {:>12} {:>9} {:>9} {:>9}",
            "function",
            "calls",
            "failed",
            "fuel p50",
            "fuel p90",
            "fuel max",
            "us p50",
            "us p90",
            "us max"
        );
        for (function, f) in functions {
            println!(
                "{:<26} {:>8} {:>7} {:>12} {:>12} {:>12} {:>9} {:>9} {:>9}",
                function,
                f.calls,
                f.failed,
                f.fuel.p50,
                f.fuel.p90,
                f.fuel.max,
                f.micros.p50,
                f.micros.p90,
                f.micros.max
            );
        }
    }
    let Some((plugin, d)) = replayed else { return };
    println!();
    println!(
        "replayed against {plugin}: {} calls compared, {} diverged",
        d.compared,
        d.total()
    );
    if d.total() == 0 {
        return;
    }
    let by_function: Vec<String> = d
        .by_function
        .iter()
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    println!("diverging calls by function: {}", by_function.join(", "));
    let calls: Vec<String> = d.calls.iter().map(u64::to_string).collect();
    println!("diverging calls: {}", calls.join(", "));
    for (k, divergence) in d.first.iter().enumerate() {
        println!();
        let which = if k == 0 {
            "first divergence"
        } else {
            "divergence"
        };
        println!("{which}: call {} ({})", divergence.seq, divergence.function);
        println!("  arguments: {}", divergence.args);
        println!("  recorded:  {}", divergence.recorded);
        println!("  replayed:  {}", divergence.replayed);
    }
    if d.first.len() < d.calls.len() {
        println!();
        println!(
            "({} more in the list above; --show N prints more in full)",
            d.calls.len() - d.first.len()
        );
    }
}
