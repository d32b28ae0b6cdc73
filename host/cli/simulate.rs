//! `slurm-wasm simulate`: replay a workload through several plugin stacks
//! and compare the schedules.
//!
//! Inputs: the cluster from `--slurm-conf` (and `gres.conf`: `--gres-conf`,
//! else the one beside `slurm.conf` when present), else from an Alea
//! `.machines` file (`--machines`), else derived from the SWF header, else
//! the embedded default cluster (`simulate-default.conf`);
//! the workload from `--swf`, `--sacct`, or the seeded synthetic generator
//! (`--jobs`, `--seed`). Stacks: `--policy`, repeatable; by default
//! `select/linear,priority/basic` and `select/cons_tres,priority/multifactor`
//! (a default stack whose plugin this build does not bundle is replaced by
//! one with the bundled select plugin, and the replacement is said on
//! stderr). Stacks run in parallel, one thread each, up to `--threads`.
//! `--native` runs the bundled plugins' native builds instead of their
//! components (the wasm/native ratio of BENCHMARKS.md); `--first N`
//! replays only the first N jobs of the workload.
//!
//! `--sweep FILE` runs nothing: it writes a Slurm batch script with one
//! job-array task per stack (`#SBATCH --array=0-N`), each running this
//! command with the same inputs and seed for its one stack and saving the
//! result (`--save-result`), and a combine step that renders the saved
//! results together (`--combine`), as one comparison.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{bail, Context};
use slurm::setup::records::Cluster;
use slurm::{gres_conf, slurm_conf};
use slurm_wasm_sim::engine::{Backfill, Input, PolicySpec, SchedConfig, SimResult, Style};
use slurm_wasm_sim::hazards::{
    CancelledJobs, MissingEstimate, OverLimit, ReplayOptions, ZeroRunTime,
};
use slurm_wasm_sim::workload::Workload;

/// The embedded default cluster.
const DEFAULT_CLUSTER: &str = include_str!("simulate-default.conf");

/// The stacks compared when no `--policy` is given.
const DEFAULT_POLICIES: [&str; 2] = [
    "select/linear,priority/basic",
    "select/cons_tres,priority/multifactor",
];

#[derive(clap::Args, Debug, Clone)]
pub struct SimulateArgs {
    /// The cluster's slurm.conf (default: derived from the SWF header, or
    /// the embedded default cluster).
    #[arg(long, value_name = "FILE")]
    slurm_conf: Option<PathBuf>,
    /// The cluster from an Alea simulator `.machines` file (tab-separated
    /// `id name machines CPUs-per-machine speed [memory-KB]` lines).
    #[arg(long, value_name = "FILE", conflicts_with = "slurm_conf")]
    machines: Option<PathBuf>,
    /// gres.conf for the cluster (default: the one beside --slurm-conf, if any).
    #[arg(long, value_name = "FILE", requires = "slurm_conf")]
    gres_conf: Option<PathBuf>,
    /// Workload: a Standard Workload Format trace (`.swf` or `.swf.gz`).
    #[arg(long, value_name = "FILE", conflicts_with = "sacct")]
    swf: Option<PathBuf>,
    /// Workload: a `sacct --parsable2` dump.
    #[arg(long, value_name = "FILE")]
    sacct: Option<PathBuf>,
    /// Synthetic workload: number of jobs (Lublin-Feitelson model).
    #[arg(long, default_value_t = 1000)]
    jobs: usize,
    /// Seed of the synthetic workload and of the plugins' random source.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A plugin stack: `select/X,priority/Y`, either part a bundled type or
    /// a `.wasm` file (`select=FILE`, `priority=FILE` name the slot); a
    /// select wrapper names its inner plugins after `+`
    /// (`select=wrapper.wasm+select/cons_tres`). Repeatable.
    #[arg(long = "policy", value_name = "STACK")]
    policies: Vec<String>,
    /// Jobs with run time <= 0: `skip` or `one-second`.
    #[arg(long, value_name = "CHOICE", default_value = "skip")]
    zero_run_time: String,
    /// Jobs without a time estimate: `run-time`, `partition-max` or a
    /// number of seconds.
    #[arg(long, value_name = "CHOICE", default_value = "run-time")]
    missing_estimate: String,
    /// Jobs that ran past their estimate: `kill` (at the limit, as Slurm
    /// does) or `extend` (the limit becomes the run time).
    #[arg(long, value_name = "CHOICE", default_value = "kill")]
    over_limit: String,
    /// Cancelled jobs: `skip-never-started` or `include`.
    #[arg(long, value_name = "CHOICE", default_value = "skip-never-started")]
    cancelled: String,
    /// The scheduler: `slurm` (what slurm.conf's SchedulerType and
    /// SchedulerParameters say: sched/backfill or sched/builtin), `easy`
    /// (EASY backfilling at every event: only the first waiting job is
    /// planned) or `conservative` (every waiting job is planned), as
    /// Batsim's reference schedulers do.
    #[arg(long, value_name = "NAME", default_value = "slurm", value_parser = ["slurm", "easy", "conservative"])]
    scheduler: String,
    /// Print the comparison as JSON instead of a table: every metric,
    /// with breakdowns by user, partition and size class.
    #[arg(long)]
    json: bool,
    /// Bounded slowdown's threshold in seconds: a job's slowdown is
    /// (wait + run) / max(run, threshold), at least 1.
    #[arg(long, value_name = "SECONDS", default_value_t = slurm_wasm_sim::metrics::BOUNDED_SLOWDOWN_THRESHOLD, value_parser = clap::value_parser!(i64).range(1..))]
    bsld_threshold: i64,
    /// Leave the jobs submitted in the first SECONDS (from the first
    /// submit) out of every metric: they still run, warming the machine up.
    #[arg(long, value_name = "SECONDS", default_value_t = 0, value_parser = clap::value_parser!(i64).range(0..))]
    warmup: i64,
    /// Offered load times FACTOR: submit times are compressed towards the
    /// first one (FACTOR above 1 loads the machine more, below 1 less).
    #[arg(long, value_name = "FACTOR")]
    load_scale: Option<f64>,
    /// Every job's time limit is its run time (a perfect estimate).
    #[arg(long)]
    perfect_estimates: bool,
    /// Write the per-job outcomes of every stack into DIR/outcomes.csv, one
    /// row per job and stack (its first column, `policy`, names the stack).
    #[arg(long, value_name = "DIR")]
    csv: Option<PathBuf>,
    /// Write a self-contained HTML report with plots.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Write each stack's schedule into DIR: `<n>-<stack>.swf` (Standard
    /// Workload Format) and `<n>-<stack>_jobs.csv` (Batsim's jobs file,
    /// which evalys reads), n counting the stacks from 1.
    #[arg(long, value_name = "DIR", conflicts_with = "combine")]
    schedule: Option<PathBuf>,
    /// Record every call each stack's plugins answer into DIR:
    /// `<n>-<stack>.select.swrec` and `<n>-<stack>.priority.swrec`, for
    /// `slurm-wasm replay` (components only).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["combine", "native", "sweep"])]
    record: Option<PathBuf>,
    /// Stacks simulated at once (default: the machine's cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Write a Slurm job-array script running one stack per array task
    /// (same workload and seed), then a combine step; runs nothing.
    #[arg(long, value_name = "FILE")]
    sweep: Option<PathBuf>,
    /// Save the results as JSON, for `--combine`: per-job outcomes, call
    /// counters, wall time and, for components, the fuel each plugin used
    /// (the same on every run: a machine-independent measure of its work).
    #[arg(long, value_name = "FILE")]
    save_result: Option<PathBuf>,
    /// Render results saved by earlier runs (`--save-result`) as one
    /// comparison instead of simulating.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    combine: Vec<PathBuf>,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
    /// Run the bundled plugins' native builds instead of their components,
    /// for the wasm/native ratio in BENCHMARKS.md.
    #[arg(long)]
    native: bool,
    /// Replay only the first N jobs of the workload, in workload order
    /// (quick experiments, benchmarks on part of a trace).
    #[arg(long, value_name = "N")]
    first: Option<usize>,
}

/// What `--save-result` writes and `--combine` reads.
#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    workload: String,
    cluster_cpus: u64,
    notes: Vec<String>,
    results: Vec<SimResult>,
}

pub fn run(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    if !args.combine.is_empty() {
        return combine(&args);
    }
    let options = replay_options(&args)?;
    let (cluster, default_partition, derived) = cluster(&args)?;
    let mut workload = workload(&args, &options, &cluster)?;
    // A cluster guessed from the trace is in every output's notes.
    if let Some(note) = derived {
        workload.notes.insert(0, format!("no --slurm-conf: {note}"));
    }
    let specs = policies(&args)?;
    if let Some(script) = &args.sweep {
        write_sweep(&args, &specs, script)?;
        eprintln!(
            "slurm-wasm: wrote {} ({} array tasks); submit it with sbatch",
            script.display(),
            specs.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let mut config = SchedConfig::from_cluster(&cluster).map_err(anyhow::Error::msg)?;
    let style = match args.scheduler.as_str() {
        "easy" => Some(Style::Easy),
        "conservative" => Some(Style::Conservative),
        _ => None,
    };
    if let Some(style) = style {
        config.backfill = Some(Backfill::pure(style));
        workload.notes.push(format!(
            "--scheduler {}: pure {} backfilling at every event; slurm.conf's SchedulerType \
             and SchedulerParameters are not used",
            args.scheduler, args.scheduler
        ));
    }
    // What slurm.conf sets and the simulator does not model, in every
    // output's notes.
    workload
        .notes
        .extend(slurm_wasm_sim::engine::config::unmodelled(&cluster));
    let input = Input {
        cluster: &cluster,
        workload: &workload,
        config,
        default_partition,
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let results = run_with_progress(&input, &specs, args.seed, threads, args.quiet);
    let mut ok = Vec::new();
    let mut failed = false;
    for result in results {
        match result {
            Ok(r) => ok.push(r),
            Err(e) => {
                eprintln!("slurm-wasm: {e}");
                failed = true;
            }
        }
    }
    let cpus = cluster_cpus(&cluster);
    if let Some(path) = &args.save_result {
        let saved = Saved {
            workload: workload.source.clone(),
            cluster_cpus: cpus,
            notes: workload.notes.clone(),
            results: ok.clone(),
        };
        // Written aside and renamed: a sweep's combine step never reads a
        // half-written file.
        let partial = path.with_extension("partial");
        std::fs::write(&partial, serde_json::to_vec_pretty(&saved)?)
            .and_then(|()| std::fs::rename(&partial, path))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let node_names: Vec<String> = cluster.nodes.iter().map(|n| n.name.clone()).collect();
    render(&args, &workload, cpus, &node_names, &ok)?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn replay_options(args: &SimulateArgs) -> anyhow::Result<ReplayOptions> {
    let zero_run_time = match args.zero_run_time.as_str() {
        "skip" => ZeroRunTime::Skip,
        "one-second" => ZeroRunTime::OneSecond,
        other => bail!("--zero-run-time {other}: expected skip or one-second"),
    };
    let missing_estimate = match args.missing_estimate.as_str() {
        "run-time" => MissingEstimate::RunTime,
        // Filled from the cluster's partitions once it is known.
        "partition-max" => MissingEstimate::PartitionMaxTime {
            limits: Default::default(),
            default: None,
        },
        other => match other.parse::<i64>() {
            Ok(s) if s > 0 => MissingEstimate::Fixed(s),
            _ => bail!(
                "--missing-estimate {other}: expected run-time, partition-max or a positive number of seconds"
            ),
        },
    };
    let over_limit = match args.over_limit.as_str() {
        "kill" => OverLimit::KillAtLimit,
        "extend" => OverLimit::ExtendLimit,
        other => bail!("--over-limit {other}: expected kill or extend"),
    };
    let cancelled = match args.cancelled.as_str() {
        "skip-never-started" => CancelledJobs::SkipNeverStarted,
        "include" => CancelledJobs::Include,
        other => bail!("--cancelled {other}: expected skip-never-started or include"),
    };
    Ok(ReplayOptions {
        zero_run_time,
        missing_estimate,
        over_limit,
        cancelled,
    })
}

/// The cluster, the index of its default partition, and how the cluster
/// was derived from the trace when no slurm.conf was given.
fn cluster(args: &SimulateArgs) -> anyhow::Result<(Cluster, usize, Option<String>)> {
    let mut derived = None;
    let conf = match (&args.slurm_conf, &args.swf) {
        (Some(path), _) => slurm_conf::load(path)?,
        (None, _) if args.machines.is_some() => {
            let path = args.machines.as_deref().unwrap_or(Path::new(""));
            let cluster = slurm_wasm_sim::cluster_from_trace::from_alea_machines(path)?;
            derived = Some(cluster.note);
            cluster.conf
        }
        (None, Some(swf)) => {
            let (conf, note) = cluster_from_swf(swf)?;
            derived = Some(note);
            conf
        }
        (None, None) if args.sacct.is_some() => {
            bail!("--sacct needs --slurm-conf: a sacct dump does not describe the cluster")
        }
        (None, None) => {
            slurm_conf::parse_str(DEFAULT_CLUSTER, Path::new("<embedded default cluster>"))?
        }
    };
    let mut cluster = Cluster::from_slurm_conf(&conf)?;
    if cluster.partitions.is_empty() {
        bail!(
            "{}: no partition (PartitionName=...): jobs have nowhere to run",
            conf_name(args)
        );
    }
    let gres_path = match (&args.gres_conf, &args.slurm_conf) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(s)) => Some(gres_conf::default_path(s)).filter(|p| p.is_file()),
        _ => None,
    };
    if let Some(path) = gres_path {
        let file = gres_conf::load(&path)?;
        let types = conf.gres_types();
        for (node, record) in conf.nodes.iter().zip(cluster.nodes.iter_mut()) {
            record.gres_topology = file.node(node, &types)?.topology;
        }
    }
    let default_partition = conf
        .default_partition()
        .and_then(|d| conf.partitions.iter().position(|p| p.name == d.name))
        .unwrap_or(0);
    Ok((cluster, default_partition, derived))
}

fn conf_name(args: &SimulateArgs) -> String {
    args.slurm_conf
        .as_ref()
        .map_or("the derived cluster".into(), |p| p.display().to_string())
}

fn cluster_cpus(cluster: &Cluster) -> u64 {
    cluster.nodes.iter().map(|n| u64::from(n.cpus)).sum()
}

fn workload(
    args: &SimulateArgs,
    options: &ReplayOptions,
    cluster: &Cluster,
) -> anyhow::Result<Workload> {
    let mut options = options.clone();
    if let MissingEstimate::PartitionMaxTime { limits, default } = &mut options.missing_estimate {
        for p in &cluster.partitions {
            if let Some(minutes) = p.max_time {
                limits.insert(p.name.clone(), i64::from(minutes) * 60);
            }
        }
        *default = cluster
            .partitions
            .first()
            .and_then(|p| p.max_time)
            .map(|m| i64::from(m) * 60);
    }
    let mut workload = match (&args.swf, &args.sacct) {
        (Some(path), _) => slurm_wasm_sim::swf::read_path(path, &options)?,
        (None, Some(path)) => slurm_wasm_sim::sacct::read_path(path, &options)?,
        (None, None) => synthetic(args, cluster)?,
    };
    match args.first {
        Some(0) => bail!("--first 0: no job to replay (give at least 1)"),
        Some(n) if n < workload.jobs.len() => {
            workload.notes.push(format!(
                "only the first {n} of {} jobs replayed (--first)",
                workload.jobs.len()
            ));
            workload.jobs.truncate(n);
        }
        _ => {}
    }
    let reshape = slurm_wasm_sim::hazards::Reshape {
        load_scale: args.load_scale,
        perfect_estimates: args.perfect_estimates,
    };
    slurm_wasm_sim::hazards::reshape(&mut workload, &reshape).map_err(anyhow::Error::msg)?;
    if args.warmup > 0 {
        workload.notes.push(format!(
            "jobs submitted in the first {} s left out of the metrics (--warmup)",
            args.warmup
        ));
    }
    if args.native {
        workload
            .notes
            .push("plugins run as native builds, not as components (--native)".into());
    }
    Ok(workload)
}

/// The stacks to compare, as native builds with `--native`; components
/// are kept compiled in the commands' cache (`commands::usable_cache_dir`).
fn policies(args: &SimulateArgs) -> anyhow::Result<Vec<PolicySpec>> {
    let cache_dir = crate::commands::usable_cache_dir();
    if let Some(dir) = &args.record {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("--record {}: {e}", dir.display()))?;
    }
    let specs: Vec<PolicySpec> = stacks(args)?
        .into_iter()
        .enumerate()
        .map(|(k, spec)| PolicySpec {
            cache_dir: cache_dir.clone(),
            record: args.record.as_ref().map(|dir| {
                dir.join(format!(
                    "{}-{}",
                    k + 1,
                    slurm_wasm_sim::report::schedule::slug(&spec.label)
                ))
            }),
            ..spec
        })
        .collect();
    if !args.native {
        return Ok(specs);
    }
    let specs: Vec<PolicySpec> = specs.into_iter().map(PolicySpec::native).collect();
    for spec in &specs {
        spec.check_available()?;
    }
    Ok(specs)
}

/// The stacks named by `--policy`, or the default ones.
fn stacks(args: &SimulateArgs) -> anyhow::Result<Vec<PolicySpec>> {
    if !args.policies.is_empty() {
        let specs = args
            .policies
            .iter()
            .map(|p| PolicySpec::parse(p))
            .collect::<Result<Vec<_>, _>>()?;
        for spec in &specs {
            spec.check_available()?;
        }
        return Ok(specs);
    }
    let mut specs = Vec::new();
    for text in DEFAULT_POLICIES {
        let spec = PolicySpec::parse(text)?;
        if spec.check_available().is_ok() {
            specs.push(spec);
            continue;
        }
        // The intended default needs a plugin this build lacks: compare the
        // same priority plugin on the select plugin that is bundled.
        let select = slurm_wasm_bundled::BUNDLED
            .iter()
            .find(|b| b.plugin_type.starts_with("select/"))
            .map(|b| b.plugin_type)
            .context("this build bundles no select plugin: name one with --policy select=FILE.wasm,priority/basic")?;
        let priority = text.split(',').nth(1).unwrap_or("priority/basic");
        let replacement = PolicySpec::parse(&format!("{select},{priority}"))?;
        eprintln!(
            "slurm-wasm: default stack {text} is not bundled in this build; using {} instead",
            replacement.label
        );
        if !specs.contains(&replacement) {
            specs.push(replacement);
        }
    }
    Ok(specs)
}

fn run_with_progress(
    input: &Input<'_>,
    specs: &[PolicySpec],
    seed: u64,
    threads: usize,
    quiet: bool,
) -> Vec<Result<SimResult, String>> {
    let counters: Vec<AtomicU64> = specs.iter().map(|_| AtomicU64::new(0)).collect();
    let total = input.workload.jobs.len() as u64;
    let show = !quiet && std::io::stderr().is_terminal();
    std::thread::scope(|scope| {
        let worker = scope
            .spawn(|| slurm_wasm_sim::compare::compare(input, specs, seed, threads, &counters));
        if show {
            let multi = indicatif::MultiProgress::new();
            let style = indicatif::ProgressStyle::with_template(
                "{prefix:40} [{bar:30}] {pos}/{len} jobs {elapsed}",
            )
            .expect("a valid progress template")
            .progress_chars("=> ");
            let bars: Vec<_> = specs
                .iter()
                .map(|s| {
                    let bar = multi.add(indicatif::ProgressBar::new(total));
                    bar.set_style(style.clone());
                    bar.set_prefix(s.label.clone());
                    bar
                })
                .collect();
            while !worker.is_finished() {
                for (bar, done) in bars.iter().zip(&counters) {
                    bar.set_position(done.load(Ordering::Relaxed));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            for bar in &bars {
                bar.finish_and_clear();
            }
        }
        worker
            .join()
            .unwrap_or_else(|_| vec![Err("the simulation thread panicked".into()); specs.len()])
    })
}

/// Quotes `text` for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The script of `--sweep`: every argument of this run but `--sweep` and
/// `--policy`, one stack per array task.
fn write_sweep(args: &SimulateArgs, specs: &[PolicySpec], path: &Path) -> anyhow::Result<()> {
    let absolute = |p: &PathBuf| {
        std::path::absolute(p)
            .unwrap_or_else(|_| p.clone())
            .display()
            .to_string()
    };
    let mut common = Vec::new();
    for (flag, value) in [
        ("--slurm-conf", &args.slurm_conf),
        ("--machines", &args.machines),
        ("--gres-conf", &args.gres_conf),
        ("--swf", &args.swf),
        ("--sacct", &args.sacct),
    ] {
        if let Some(v) = value {
            common.push(format!("{flag} {}", shell_quote(&absolute(v))));
        }
    }
    common.push(format!("--jobs {} --seed {}", args.jobs, args.seed));
    if let Some(n) = args.first {
        common.push(format!("--first {n}"));
    }
    if args.native {
        common.push("--native".to_owned());
    }
    common.push(format!("--scheduler {}", shell_quote(&args.scheduler)));
    common.push(format!(
        "--zero-run-time {} --missing-estimate {} --over-limit {} --cancelled {}",
        shell_quote(&args.zero_run_time),
        shell_quote(&args.missing_estimate),
        shell_quote(&args.over_limit),
        shell_quote(&args.cancelled)
    ));
    let policies: Vec<String> = specs.iter().map(|s| shell_quote(&s.text)).collect();
    let mut outputs = Vec::new();
    if args.json {
        outputs.push("--json".to_owned());
    }
    if let Some(dir) = &args.csv {
        outputs.push(format!("--csv {}", shell_quote(&absolute(dir))));
    }
    if let Some(html) = &args.html {
        outputs.push(format!("--html {}", shell_quote(&absolute(html))));
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "slurm-wasm".into());
    let last = specs.len().saturating_sub(1);
    let script = format!(
        r#"#!/bin/bash
# Written by `slurm-wasm simulate --sweep`: one policy stack per array task,
# all on the same workload and seed. Submit with
#     sbatch {name}
# Each task saves its result as sweep-results/<task>.json in the job's
# working directory; when all tasks are done, the last one to finish renders
# them together into sweep-results/comparison.txt (the combine step can also
# be run by hand: the command at the end of this file).
#SBATCH --job-name=slurm-wasm-sweep
#SBATCH --array=0-{last}
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output=sweep-%A_%a.out
set -euo pipefail
SLURM_WASM={exe}
POLICIES=({policies})
RESULTS="$PWD/sweep-results"
mkdir -p "$RESULTS"
"$SLURM_WASM" simulate {common} --quiet \
    --policy "${{POLICIES[$SLURM_ARRAY_TASK_ID]}}" \
    --save-result "$RESULTS/$SLURM_ARRAY_TASK_ID.json" > /dev/null
# Combine step, one task at a time (tasks may end together): once every
# task's result exists, render the comparison.
exec 9> "$RESULTS/.combine.lock"
flock 9
if [ "$(ls "$RESULTS"/*.json | wc -l)" -eq {count} ]; then
    "$SLURM_WASM" simulate --combine "$RESULTS"/*.json {outputs} > "$RESULTS/comparison.partial"
    mv "$RESULTS/comparison.partial" "$RESULTS/comparison.txt"
fi
"#,
        name = path.display(),
        exe = shell_quote(&exe),
        policies = policies.join(" "),
        common = common.join(" "),
        count = specs.len(),
        outputs = outputs.join(" "),
    );
    let mut file =
        std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    file.write_all(script.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// `--combine`: renders saved results as one comparison.
fn combine(args: &SimulateArgs) -> anyhow::Result<ExitCode> {
    let mut results = Vec::new();
    let mut notes = Vec::new();
    let mut source: Option<(String, u64)> = None;
    for path in &args.combine {
        let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let saved: Saved = serde_json::from_slice(&text)
            .with_context(|| format!("{}: not a result saved by --save-result", path.display()))?;
        match &source {
            None => source = Some((saved.workload.clone(), saved.cluster_cpus)),
            Some((w, c)) if *w != saved.workload || *c != saved.cluster_cpus => bail!(
                "{}: a different workload or cluster ({} on {} CPUs, the first file has {w} on {c})",
                path.display(),
                saved.workload,
                saved.cluster_cpus
            ),
            Some(_) => {}
        }
        if notes.is_empty() {
            notes = saved.notes;
        }
        results.extend(saved.results);
    }
    let (workload_source, cpus) = source.context("--combine: no file")?;
    let workload = Workload {
        source: workload_source,
        notes,
        ..Workload::default()
    };
    // (--schedule is refused with --combine: saved results hold no node table)
    render(args, &workload, cpus, &[], &results)?;
    Ok(ExitCode::SUCCESS)
}

/// The seeded synthetic workload, sized to the cluster's CPUs.
fn synthetic(args: &SimulateArgs, cluster: &Cluster) -> anyhow::Result<Workload> {
    if args.jobs == 0 {
        bail!("--jobs 0: a synthetic workload needs at least one job");
    }
    let options = slurm_wasm_sim::synthetic::SyntheticOptions {
        seed: args.seed,
        jobs: args.jobs,
        max_procs: u32::try_from(cluster_cpus(cluster)).unwrap_or(u32::MAX),
        ..Default::default()
    };
    Ok(slurm_wasm_sim::synthetic::generate(
        &options,
        &replay_options(args)?,
    ))
}

/// The cluster an SWF header describes, with the note saying how.
fn cluster_from_swf(path: &Path) -> anyhow::Result<(slurm_conf::SlurmConf, String)> {
    let derived = slurm_wasm_sim::cluster_from_trace::from_swf(path)?;
    Ok((derived.conf, derived.note))
}

/// Prints the table (or JSON) on stdout and writes the CSV and HTML files
/// asked for.
fn render(
    args: &SimulateArgs,
    workload: &Workload,
    cluster_cpus: u64,
    node_names: &[String],
    results: &[SimResult],
) -> anyhow::Result<()> {
    use slurm_wasm_sim::metrics::Measure;
    use slurm_wasm_sim::report::{self, Context, PolicyRun};
    let runs: Vec<PolicyRun<'_>> = results
        .iter()
        .map(|r| PolicyRun {
            policy: &r.policy,
            outcomes: &r.outcomes,
            agreement: r.agreement.as_ref(),
        })
        .collect();
    let context = Context {
        workload: &workload.source,
        cluster_cpus,
        notes: &workload.notes,
        measure: Measure {
            bsld_threshold: args.bsld_threshold,
            warmup: args.warmup,
        },
    };
    if args.json {
        println!("{}", report::json(&context, &runs));
    } else {
        println!(
            "workload: {} ({} jobs), cluster: {cluster_cpus} CPUs",
            workload.source,
            results.first().map_or(0, |r| r.outcomes.len())
        );
        for note in &workload.notes {
            println!("note: {note}");
        }
        print!(
            "{}",
            report::table::table(&runs, cluster_cpus, &context.measure)
        );
        for note in report::table::rejections(&runs) {
            println!("note: {note}");
        }
        if let Some(agreement) = report::table::agreement(&runs) {
            print!("{agreement}");
        }
    }
    if let Some(dir) = &args.csv {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join("outcomes.csv");
        std::fs::write(&path, report::csv::csv(&runs))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.html {
        let page = report::html::html(&context, &runs).map_err(anyhow::Error::msg)?;
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(dir) = &args.schedule {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for (k, run) in runs.iter().enumerate() {
            let stem = format!("{}-{}", k + 1, report::schedule::slug(run.policy));
            let path = dir.join(format!("{stem}.swf"));
            std::fs::write(&path, report::schedule::swf(&context, run))
                .with_context(|| format!("writing {}", path.display()))?;
            let jobs = report::schedule::batsim_jobs(run, node_names)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("the schedule of {}", run.policy))?;
            let path = dir.join(format!("{stem}_jobs.csv"));
            std::fs::write(&path, jobs).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}
