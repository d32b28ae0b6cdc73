//! The misbehaviours of task/hostile, chosen by name.

use std::hint::black_box;

use slurm_wasm_sdk::codes::ESLURMD_CPU_BIND_ERROR;
use slurm_wasm_sdk::host::{bind_cpus, cpu_layout};
use slurm_wasm_sdk::task::CpuBinding;
use slurm_wasm_sdk::types::{CapabilityError, KeyValue, PluginError, Step, Task};
use slurm_wasm_sdk::{Bitmap, Error};

/// Length of the `cpu-bind` string the `oversized` behaviour returns: 64 MiB.
pub const OVERSIZED_LEN: usize = 64 << 20;
/// The file `file` tries to read.
pub const SECRET_FILE: &str = "/etc/passwd";
/// The file `file` tries to create.
pub const DROPPED_FILE: &str = "/tmp/hostile-was-here";
/// The address `socket` tries to connect to.
pub const SOCKET_ADDR: &str = "127.0.0.1:22";

/// The prefix of the `set-env` behaviour.
pub const SET_ENV: &str = "set-env:";
/// The step `cpu-bind` that makes `pre-launch-priv` bind outside the step.
pub const CPUSET_OUTSIDE: &str = "cpuset-outside";

/// `pre-launch-priv`: with the step's `cpu-bind` [`CPUSET_OUTSIDE`], binds
/// the task to every CPU of the node (the layout's block map), which the
/// host must refuse for the CPUs of cores the step does not hold; answers
/// `Err` with `ESLURMD_CPU_BIND_ERROR` and the capability's error. Any
/// other step does nothing.
pub fn pre_launch_priv(step: &Step, task: &Task) -> Result<(), PluginError> {
    if step.cpu_bind != CPUSET_OUTSIDE {
        return Ok(());
    }
    let fail = |what: &str, e: CapabilityError| {
        Error::new(ESLURMD_CPU_BIND_ERROR, format!("{what}: {e:?}"))
    };
    let layout = cpu_layout().map_err(|e| fail("topology.read-layout", e))?;
    let len = layout.block_map.iter().max().map_or(0, |m| m + 1);
    let all = Bitmap::from_bits(len as usize, layout.block_map.iter().map(|&c| c as usize));
    bind_cpus(task.pid, &all).map_err(|e| fail("cpuset.bind", e).into())
}

/// The launch request's environment variable that names a misbehaviour in
/// a live Slurm, where srun's `--cpu-bind` cannot carry a name:
/// `<hook>:<behaviour>`, the hook being `launch` (slurmd's
/// `slurmd-launch-request`), `priv` (slurmstepd's `pre-launch-priv`) or
/// `child` (`pre-launch`, in the forked task).
pub const HOSTILE_VAR: &str = "HOSTILE_TASK";

/// The step `cpu-bind` by which `slurmd-launch-request` hands a behaviour
/// to slurmstepd's hooks: `hostile:<priv|child>:<behaviour>` (slurmd writes
/// the binding it answers into the request slurmstepd receives).
pub const STEPD_PREFIX: &str = "hostile:";

/// Where `HOSTILE_TASK` asks for a behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    Launch,
    Priv,
    Child,
}

/// `HOSTILE_TASK`'s value as hook and behaviour name.
pub fn hostile_spec(value: &str) -> Result<(Hook, &str), String> {
    let hook = |h| match h {
        "launch" => Some(Hook::Launch),
        "priv" => Some(Hook::Priv),
        "child" => Some(Hook::Child),
        _ => None,
    };
    value
        .split_once(':')
        .and_then(|(h, b)| Some((hook(h)?, b)))
        .ok_or_else(|| format!("{HOSTILE_VAR}={value}: expected <launch|priv|child>:<behaviour>"))
}

/// The behaviour a slurmstepd hook (`hook`) must act out, from the step's
/// `cpu-bind` (see [`STEPD_PREFIX`]).
pub fn stepd_behaviour(cpu_bind: &str, hook: Hook) -> Option<Behaviour> {
    let rest = cpu_bind.strip_prefix(STEPD_PREFIX)?;
    match hostile_spec(rest) {
        Ok((h, name)) if h == hook => Some(Behaviour::parse(name)),
        _ => None,
    }
}

/// What `slurmd-launch-request` does, by the request's `cpu-bind` string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// `loop`: spins forever; only fuel or the deadline stops it.
    Loop,
    /// `grow`: allocates 1 MiB blocks without end, until an allocation fails
    /// at the host's memory limit (an abort, hence a trap).
    Grow,
    /// `recurse`: recurses without end, until the stack overflows (a trap).
    Recurse,
    /// `trap`: panics, which aborts the instance (a trap).
    Trap,
    /// `oversized`: returns a binding whose `cpu-bind` is [`OVERSIZED_LEN`] bytes.
    Oversized,
    /// `file`: reads [`SECRET_FILE`] and creates [`DROPPED_FILE`]; answers
    /// `Ok` with one message per attempt, `"<action> <path>: failed: <error>"`
    /// or `"<action> <path>: succeeded"`.
    File,
    /// `socket`: connects to [`SOCKET_ADDR`]; answers `Ok` with the message
    /// `"connect 127.0.0.1:22: failed: <error>"` (or `succeeded`).
    Socket,
    /// `cpuset`: binds pid 1 to CPU 0 and reads the CPU layout. Denied
    /// capabilities answer `Err` with `ESLURMD_CPU_BIND_ERROR` and a message
    /// holding each error's debug text; if both calls succeed, `Ok`.
    Cpuset,
    /// `env`: answers `Ok` with the messages `"vars=<n>"` and `"args=<n>"`,
    /// the sizes of the environment and argument list WASI gave it.
    Env,
    /// `bad-env`: hands the binding back with an environment variable
    /// named `NOT A NAME`, which the host must reject.
    BadEnv,
    /// `set-env:<name>=<value>`: hands the binding back with that one
    /// variable for every task (`LD_PRELOAD`, `PATH`, a value with a NUL
    /// byte...), which the host must refuse unless a task plugin may set it.
    SetEnv,
    /// `work:<n>`: a bounded, deterministic compute kernel (`n` rounds of
    /// xorshift64) whose result is returned as `cpu-bind`; the benchmarks
    /// use it to weigh fuel against epoch interruption.
    Work(u64),
    /// `sort:<n>`: sorts `n` pseudo-random numbers and returns a checksum
    /// of the result as `cpu-bind`: branchy, memory-bound work like a
    /// scheduler's, for the same comparison.
    Sort(u64),
    /// Anything else: hands the requested binding back unchanged.
    Normal,
}

impl Behaviour {
    /// The behaviour a `cpu-bind` string names.
    pub fn parse(name: &str) -> Behaviour {
        match name {
            "loop" => Behaviour::Loop,
            "grow" => Behaviour::Grow,
            "recurse" => Behaviour::Recurse,
            "trap" => Behaviour::Trap,
            "oversized" => Behaviour::Oversized,
            "file" => Behaviour::File,
            "socket" => Behaviour::Socket,
            "cpuset" => Behaviour::Cpuset,
            "env" => Behaviour::Env,
            "bad-env" => Behaviour::BadEnv,
            _ if name.starts_with(SET_ENV) => Behaviour::SetEnv,
            other => {
                let count = |prefix: &str| other.strip_prefix(prefix).and_then(|n| n.parse().ok());
                match (count("work:"), count("sort:")) {
                    (Some(rounds), _) => Behaviour::Work(rounds),
                    (_, Some(n)) => Behaviour::Sort(n),
                    _ => Behaviour::Normal,
                }
            }
        }
    }

    /// Acts the behaviour out for a request asking for `cpu_bind_type` and
    /// `cpu_bind`.
    pub fn run(self, cpu_bind_type: u32, cpu_bind: String) -> Result<CpuBinding, PluginError> {
        let reply = |cpu_bind, messages| CpuBinding {
            cpu_bind_type,
            cpu_bind,
            messages,
            env: Vec::new(),
        };

        match self {
            Behaviour::Loop => spin(),
            Behaviour::Grow => hoard(),
            Behaviour::Recurse => Ok(reply(descend(0).to_string(), Vec::new())),
            Behaviour::Trap => unreachable!("task/hostile: deliberate trap"),
            Behaviour::Oversized => Ok(reply("x".repeat(OVERSIZED_LEN), Vec::new())),
            Behaviour::File => Ok(reply(cpu_bind, probe_files())),
            Behaviour::Socket => Ok(reply(cpu_bind, vec![probe_socket()])),
            Behaviour::Cpuset => probe_capabilities().map(|messages| reply(cpu_bind, messages)),
            Behaviour::Env => Ok(reply(cpu_bind, probe_env())),
            Behaviour::BadEnv => Ok(CpuBinding {
                env: vec![KeyValue {
                    key: "NOT A NAME".into(),
                    value: "1".into(),
                }],
                ..reply(cpu_bind, Vec::new())
            }),
            Behaviour::SetEnv => {
                let spec = &cpu_bind[SET_ENV.len()..];
                let (key, value) = spec.split_once('=').unwrap_or((spec, ""));
                Ok(CpuBinding {
                    env: vec![KeyValue {
                        key: key.into(),
                        value: value.into(),
                    }],
                    ..reply(String::new(), Vec::new())
                })
            }
            Behaviour::Work(rounds) => Ok(reply(work(rounds).to_string(), Vec::new())),
            Behaviour::Sort(n) => Ok(reply(sort(n).to_string(), Vec::new())),
            Behaviour::Normal => Ok(reply(cpu_bind, Vec::new())),
        }
    }
}

/// Counts forever; `black_box` keeps the optimiser from removing the loop.
fn spin() -> ! {
    let mut count = 0u64;
    loop {
        count = black_box(count.wrapping_add(1));
    }
}

/// `rounds` steps of xorshift64 from a fixed seed.
pub fn work(rounds: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for _ in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// Sorts `n` numbers from xorshift64 and folds the sorted sequence into a
/// position-dependent checksum.
pub fn sort(n: u64) -> u64 {
    let mut x = black_box(0x2545_F491_4F6C_DD1Du64);
    let mut values: Vec<u32> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        })
        .collect();
    values.sort_unstable();
    values.iter().enumerate().fold(0u64, |acc, (i, v)| {
        acc.wrapping_mul(31).wrapping_add(u64::from(*v) ^ i as u64)
    })
}

/// Keeps every 1 MiB block it allocates, filled so the pages are used.
fn hoard() -> ! {
    let mut blocks = Vec::new();
    loop {
        blocks.push(black_box(vec![1u8; 1 << 20]));
        black_box(&blocks);
    }
}

/// Recurses until the stack runs out. Each frame keeps 256 bytes alive and
/// uses the result of the call below it, so the recursion is neither turned
/// into a loop nor a tail call.
fn descend(depth: u64) -> u64 {
    if black_box(depth) == u64::MAX {
        return 0;
    }
    let frame = black_box([depth; 32]);
    let below = descend(depth + 1);
    black_box(below ^ frame[(depth % 32) as usize])
}

fn outcome<T>(action: &str, result: std::io::Result<T>) -> String {
    match result {
        Ok(_) => format!("{action}: succeeded"),
        Err(e) => format!("{action}: failed: {e}"),
    }
}

fn probe_files() -> Vec<String> {
    vec![
        outcome(&format!("read {SECRET_FILE}"), std::fs::read(SECRET_FILE)),
        outcome(
            &format!("create {DROPPED_FILE}"),
            std::fs::File::create(DROPPED_FILE),
        ),
    ]
}

fn probe_socket() -> String {
    outcome(
        &format!("connect {SOCKET_ADDR}"),
        std::net::TcpStream::connect(SOCKET_ADDR),
    )
}

fn probe_capabilities() -> Result<Vec<String>, PluginError> {
    let bind = bind_cpus(1, &Bitmap::from_bits(1, [0]));
    let layout = cpu_layout();
    match (bind, layout) {
        (Ok(()), Ok(layout)) => Ok(vec![
            "cpuset.bind: succeeded".into(),
            format!("topology.read-layout: {} CPUs", layout.block_map.len()),
        ]),
        (bind, layout) => {
            let errors: Vec<String> = [
                bind.err().map(|e| format!("cpuset.bind: {e:?}")),
                layout.err().map(|e| format!("topology.read-layout: {e:?}")),
            ]
            .into_iter()
            .flatten()
            .collect();
            Err(Error::new(ESLURMD_CPU_BIND_ERROR, errors.join("; ")).into())
        }
    }
}

fn probe_env() -> Vec<String> {
    vec![
        format!("vars={}", std::env::vars().count()),
        format!("args={}", std::env::args().count()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit;

    #[test]
    fn hostile_task_names_hook_and_behaviour() {
        assert_eq!(hostile_spec("child:loop"), Ok((Hook::Child, "loop")));
        assert_eq!(hostile_spec("launch:trap"), Ok((Hook::Launch, "trap")));
        assert!(hostile_spec("elsewhere:loop").is_err());
        assert!(hostile_spec("loop").is_err());
        assert_eq!(
            stepd_behaviour("hostile:priv:loop", Hook::Priv),
            Some(Behaviour::Loop)
        );
        assert_eq!(stepd_behaviour("hostile:priv:loop", Hook::Child), None);
        assert_eq!(stepd_behaviour("0x1,0x2", Hook::Priv), None);
    }

    #[test]
    fn names_select_behaviours() {
        assert_eq!(Behaviour::parse("loop"), Behaviour::Loop);
        assert_eq!(Behaviour::parse("cpuset"), Behaviour::Cpuset);
        assert_eq!(Behaviour::parse("work:1000"), Behaviour::Work(1000));
        assert_eq!(Behaviour::parse("work:x"), Behaviour::Normal);
        assert_eq!(Behaviour::parse("sort:10"), Behaviour::Sort(10));
        assert_eq!(Behaviour::parse("set-env:PATH=/x"), Behaviour::SetEnv);
        assert_eq!(Behaviour::parse("0-3"), Behaviour::Normal);
        assert_eq!(Behaviour::parse(""), Behaviour::Normal);
    }

    #[test]
    fn normal_keeps_the_binding() {
        let binding = Behaviour::Normal.run(4, "0x3".into()).unwrap();
        assert_eq!(
            (binding.cpu_bind_type, binding.cpu_bind.as_str()),
            (4, "0x3")
        );
        assert!(binding.messages.is_empty());
    }

    #[test]
    fn denied_capabilities_are_reported_with_their_debug_text() {
        testkit::reset();
        let err = Behaviour::Cpuset.run(0, "cpuset".into()).unwrap_err();
        assert_eq!(err.code, ESLURMD_CPU_BIND_ERROR);
        assert!(
            err.message.contains("Denied(Capability::Cpuset)"),
            "{}",
            err.message
        );
        assert!(
            err.message.contains("Denied(Capability::Topology)"),
            "{}",
            err.message
        );
    }

    #[test]
    fn set_env_hands_back_the_named_variable() {
        let binding = Behaviour::SetEnv
            .run(0, "set-env:LD_PRELOAD=/tmp/x.so".into())
            .unwrap();
        assert_eq!(
            (binding.env[0].key.as_str(), binding.env[0].value.as_str()),
            ("LD_PRELOAD", "/tmp/x.so")
        );
    }

    #[test]
    fn env_reports_counts() {
        let messages = Behaviour::Env.run(0, "env".into()).unwrap().messages;
        assert!(messages[0].starts_with("vars=") && messages[1].starts_with("args="));
    }
}
