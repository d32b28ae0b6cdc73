//! `slurm-wasm`: inspect, check, precompile and demonstrate Slurm plugins
//! built as WebAssembly components. A thin layer over `slurm-wasm-host`.
//!
//! Exit codes: 0 success, 1 a check failed or a plugin misbehaved, 2 bad
//! usage or unreadable input (a configuration error is printed as
//! `slurm-wasm: <file>:<line>: <message>`).

mod commands;
mod gres;
mod machine;
mod new;
mod priority;
mod replay;
mod scenario;
mod select;
mod simulate;
mod task;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "slurm-wasm",
    version,
    about = "Slurm scheduler plugins as sandboxed WebAssembly components"
)]
struct Cli {
    /// Log filter (`info`, `slurm_wasm=debug`, ...); also RUST_LOG.
    #[arg(long, global = true)]
    log: Option<String>,
    /// Host configuration (TOML): which plugin fills each slot, grants,
    /// limits, failure policy. Read by `demo` and `gres`; the other
    /// commands take their plugins from their own arguments and refuse it.
    #[arg(long, global = true, value_name = "HOST_TOML")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// A plugin named on the command line: a `.wasm` file or a bundled type.
#[derive(clap::Args)]
struct PluginArg {
    /// Path of a plugin component (`.wasm`).
    #[arg(required_unless_present = "bundled")]
    file: Option<PathBuf>,
    /// A bundled plugin instead of a file (`priority/basic`, `task/none`).
    #[arg(long, conflicts_with = "file")]
    bundled: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// A recording of a plugin's calls (`simulate --record`, `select place
    /// --record`): summarised per function (`--report`), and replayed against
    /// another build (`--plugin`/`--bundled`), listing the calls whose
    /// answers differ; exits 1 when one does.
    Replay {
        /// The recording (its first part; later parts `.1`, `.2`, ... are
        /// read after it).
        recording: PathBuf,
        /// A plugin component to replay the calls against.
        #[arg(long, value_name = "FILE")]
        plugin: Option<PathBuf>,
        /// A bundled plugin to replay the calls against (`priority/basic`).
        #[arg(long, value_name = "TYPE", conflicts_with = "plugin")]
        bundled: Option<String>,
        /// Summarise the recording: per function, calls, failures, fuel and
        /// time (median, 90th percentile, largest).
        #[arg(long)]
        report: bool,
        /// Diverging calls printed in full (arguments and both answers).
        #[arg(long, value_name = "N", default_value_t = 10)]
        show: usize,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show a plugin's identity, contract version, capabilities and exports.
    Inspect {
        #[command(flatten)]
        plugin: PluginArg,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the conformance suite for the plugin's kind; exits 1 on failure.
    Check {
        #[command(flatten)]
        plugin: PluginArg,
        /// Print each check's result as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Precompile a plugin into the compiled-component cache, so hosts
    /// using that cache load it without compiling.
    Compile {
        /// Plugin components to compile.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Cache directory (default: $XDG_CACHE_HOME/slurm-wasm or ~/.cache/slurm-wasm);
        /// it must belong to the user running the host and be writable by no
        /// one else, so compile as the daemon's user.
        #[arg(long)]
        cache_dir: Option<PathBuf>,
    },
    /// Load the bundled plugins and show their decisions on a small example;
    /// with `--slurm-conf` (or `--config`), the priority and task plugins
    /// that configuration chooses.
    Demo {
        /// Print the decisions as JSON instead of text.
        #[arg(long)]
        json: bool,
        /// A slurm.conf whose PriorityType and TaskPlugin choose the plugins
        /// (default: the host configuration's `slurm_conf`).
        #[arg(long, value_name = "FILE")]
        slurm_conf: Option<PathBuf>,
    },
    /// Create a plugin project of your own (outside this repository) that
    /// builds to a component with one command and passes `check`.
    New {
        /// The plugin's kind: select, priority, task or gres; or
        /// select-wrapper, a select plugin over another.
        kind: String,
        /// The plugin's name (`fair_small`: the type becomes `<kind>/fair_small`).
        name: String,
        /// Where to create it (default: ./<kind>-<name>).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// slurm-wasm-sdk's directory (default: the SDK of the checkout this
        /// binary was built from).
        #[arg(long, value_name = "DIR")]
        sdk: Option<PathBuf>,
        /// The project's language (Python: componentize-py; C: wit-bindgen,
        /// clang for wasm32-wasi, wasm-tools; see docs/plugin-languages.md).
        #[arg(long, value_enum, default_value = "rust")]
        lang: new::Lang,
    },
    /// Job priorities and fair-share of a described scenario (a TOML file:
    /// slurm.conf, associations, QOS, pending jobs), as sprio and sshare show them.
    Priority {
        #[command(subcommand)]
        table: PriorityTable,
    },
    /// Ask the select plugin of a slurm.conf where a job would go.
    Select {
        #[command(subcommand)]
        command: SelectCommand,
    },
    /// Replay a workload (SWF, sacct or synthetic) in virtual time through
    /// several plugin stacks and compare the schedules.
    Simulate(Box<simulate::SimulateArgs>),
    /// Run processes bound by a task plugin on this machine.
    Task {
        #[command(subcommand)]
        command: TaskCommand,
    },
    /// GPUs: what gres/gpu detects here, and the environment of an allocation.
    Gres {
        #[command(subcommand)]
        command: gres::GresCommand,
    },
}

#[derive(Subcommand)]
enum SelectCommand {
    /// Where would this job go? Starts the `--running` jobs in order, queues
    /// the `--pending` ones, then places the job (RUN_NOW, else WILL_RUN,
    /// whose start the queue delays as slurmctld's) and prints it as
    /// `scontrol show job -d` would. Exit 0: starts now; 3: starts later;
    /// 1: cannot run.
    Place {
        /// The cluster's slurm.conf (SelectType picks the plugin).
        #[arg(long, value_name = "FILE")]
        slurm_conf: PathBuf,
        /// gres.conf (default: the one beside slurm.conf, if any).
        #[arg(long, value_name = "FILE")]
        gres_conf: Option<PathBuf>,
        /// The QOS table, as `sacctmgr -P show qos` prints it (for
        /// PreemptType=preempt/qos and PreemptExemptTime).
        #[arg(long, value_name = "FILE")]
        qos_table: Option<PathBuf>,
        /// An advanced reservation made once the running jobs started, as
        /// `NAME NodeCnt=N [CoreCnt=C]`, starting now; the job may run in it
        /// with `--reservation=NAME`.
        #[arg(long, value_name = "SPEC")]
        reservation: Option<String>,
        /// sbatch options of a job already running (repeat, in start order).
        #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
        running: Vec<String>,
        /// sbatch options of a job waiting in the queue (repeat, in
        /// submission order): those of the job's partition with at least its
        /// priority delay a will-run start, as slurmctld's answer to
        /// `sbatch --test-only` is delayed.
        #[arg(long, value_name = "OPTIONS", allow_hyphen_values = true)]
        pending: Vec<String>,
        /// The time of the decision, Unix seconds (default: now).
        #[arg(long, value_name = "SECONDS")]
        now: Option<i64>,
        /// Print the placement as JSON instead of `scontrol show job -d`.
        #[arg(long)]
        json: bool,
        /// Record every call the select plugin answers to FILE, for
        /// `slurm-wasm replay`.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// sbatch options of the job to place (-N, -n, -c, --mem, --gres, -w, ...).
        #[arg(last = true)]
        options: Vec<String>,
    },
}

#[derive(Subcommand)]
enum TaskCommand {
    /// Launch N processes of a command bound the way the task plugin decides
    /// on this machine (srun -n N on a node allocated whole), and print the
    /// CPUs each task got.
    Run {
        /// Number of tasks (`-n`).
        #[arg(short = 'n', long = "ntasks", default_value_t = 1)]
        ntasks: u32,
        /// CPUs per task (`-c`; implies `--exact`, as in srun).
        #[arg(short = 'c', long = "cpus-per-task")]
        cpus_per_task: Option<u16>,
        /// The step gets only the cores its tasks need (srun's `--exact`),
        /// as slurmctld picks them; without it, the whole node.
        #[arg(long)]
        exact: bool,
        /// srun's `--cpu-bind` (none, cores, threads, sockets, map_cpu:..., mask_cpu:..., verbose, ...).
        #[arg(long = "cpu-bind", value_name = "SPEC")]
        cpu_bind: Option<String>,
        /// srun's `-m` (block, cyclic, plane=N, block:cyclic, ...).
        #[arg(short = 'm', long = "distribution", value_name = "DIST")]
        distribution: Option<String>,
        /// Capabilities granted to the plugin (comma-separated; `none` for none).
        #[arg(long, value_delimiter = ',', default_value = "topology,cpuset")]
        grant: Vec<String>,
        /// Print the binding as JSON on stderr.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        plugin: TaskPluginArg,
        /// The command each task runs.
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Internal: stop until bound by the launcher, then run the command.
    #[command(hide = true)]
    ExecStopped {
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
}

/// The task plugin of `task run`: task/affinity unless told otherwise.
#[derive(clap::Args)]
struct TaskPluginArg {
    /// A task plugin component instead of the bundled task/affinity.
    #[arg(long, value_name = "FILE")]
    plugin: Option<PathBuf>,
    /// A bundled task plugin (`task/affinity`, `task/none`).
    #[arg(long, conflicts_with = "plugin", default_value = "task/affinity")]
    bundled: String,
}

#[derive(Subcommand)]
enum PriorityTable {
    /// `sprio -l`: each pending job's weighted factors and priority.
    Sprio {
        /// The scenario (TOML: slurm.conf, associations, QOS, pending jobs;
        /// see examples/scenarios).
        scenario: PathBuf,
        /// Print JSON instead of sprio's table.
        #[arg(long)]
        json: bool,
    },
    /// `sshare -a -l`: shares, usage and fair-share of every association.
    Sshare {
        /// The scenario (TOML: slurm.conf, associations, QOS, pending jobs;
        /// see examples/scenarios).
        scenario: PathBuf,
        /// Print JSON instead of sshare's table.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    // Output piped into a reader that stops early (`inspect ... | head`)
    // ends the program as it ends other Unix tools, instead of a panic in
    // `println!`.
    // SAFETY: called before any other thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let filter = cli
        .log
        .clone()
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| "warn".into());
    // Span close events carry each plugin call's fuel and time
    // (`--log slurm_wasm_host=debug`).
    // Colour only on a terminal: logs redirected to a file stay plain.
    tracing_subscriber::fmt()
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
    if let Some(path) = &cli.config {
        if !matches!(cli.command, Command::Demo { .. } | Command::Gres { .. }) {
            eprintln!(
                "slurm-wasm: --config {}: only `demo` and `gres` read a host configuration; \
                 this command takes its plugins from its own arguments",
                path.display()
            );
            std::process::exit(2);
        }
    }
    let result = match cli.command {
        Command::Replay {
            recording,
            plugin,
            bundled,
            report,
            show,
            json,
        } => replay::run(replay::ReplayArgs {
            recording: &recording,
            plugin: match (plugin, bundled) {
                (Some(path), _) => Some(slurm_wasm_host::PluginSource::File(path)),
                (None, Some(name)) => Some(slurm_wasm_host::PluginSource::Bundled(name)),
                (None, None) => None,
            },
            report,
            json,
            show,
        }),
        Command::Inspect { plugin, json } => commands::inspect(plugin.into(), json),
        Command::Check { plugin, json } => commands::check(plugin.into(), json),
        Command::Compile { files, cache_dir } => commands::compile(&files, cache_dir),
        Command::Demo { json, slurm_conf } => {
            commands::demo(json, cli.config.as_deref(), slurm_conf.as_deref())
        }
        Command::Select { command } => match command {
            SelectCommand::Place {
                slurm_conf,
                gres_conf,
                qos_table,
                reservation,
                running,
                pending,
                now,
                json,
                record,
                options,
            } => select::place(select::PlaceRequest {
                slurm_conf,
                gres_conf,
                qos_table,
                reservation,
                running,
                pending,
                now,
                json,
                record,
                options,
            }),
        },
        Command::Task { command } => match command {
            TaskCommand::Run {
                ntasks,
                cpus_per_task,
                exact,
                cpu_bind,
                distribution,
                grant,
                json,
                plugin,
                command,
            } => task::run(task::RunRequest {
                ntasks,
                cpus_per_task,
                exact,
                cpu_bind,
                distribution,
                plugin: match plugin.plugin {
                    Some(path) => slurm_wasm_host::PluginSource::File(path),
                    None => slurm_wasm_host::PluginSource::Bundled(plugin.bundled),
                },
                grants: grant,
                json,
                command,
            }),
            TaskCommand::ExecStopped { command } => task::exec_stopped(&command),
        },
        Command::Gres { command } => gres::run(command, cli.config.as_deref()),
        Command::New {
            kind,
            name,
            dir,
            sdk,
            lang,
        } => new::run(new::NewRequest {
            kind,
            name,
            dir,
            sdk,
            lang,
        }),
        Command::Simulate(args) => simulate::run(*args),
        Command::Priority { table } => match table {
            PriorityTable::Sprio { scenario, json } => {
                scenario::load(&scenario).and_then(|s| priority::sprio(&s, json))
            }
            PriorityTable::Sshare { scenario, json } => {
                scenario::load(&scenario).and_then(|s| priority::sshare(&s, json))
            }
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("slurm-wasm: {e:#}");
            ExitCode::from(2)
        }
    }
}

impl From<PluginArg> for slurm_wasm_host::PluginSource {
    fn from(arg: PluginArg) -> Self {
        match (arg.file, arg.bundled) {
            (Some(path), _) => slurm_wasm_host::PluginSource::File(path),
            (None, Some(name)) => slurm_wasm_host::PluginSource::Bundled(name),
            (None, None) => unreachable!("clap requires a file or --bundled"),
        }
    }
}
