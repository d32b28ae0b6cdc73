//! [`Host`]: the shared engine, linkers, compiled-component cache, epoch
//! ticker and capability providers that every loaded plugin uses.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Once};

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::cache::ComponentCache;
use crate::capabilities::Services;
use crate::limits::EPOCH_TICK;
use crate::store::HostState;

/// How a [`Host`] is built.
#[derive(Debug, Clone, Default)]
pub struct HostOptions {
    /// Directory for compiled components; `None` keeps them in memory only.
    /// Created (mode 0700) if missing; [`Host::new`] fails unless it is owned
    /// by the effective user and writable by nobody else. Entries are sealed
    /// with a key kept in it, and one that fails its check is recompiled,
    /// never run.
    pub cache_dir: Option<PathBuf>,
    /// Use wasmtime's pooling allocator (fast instantiation, address space
    /// reserved up front for `pooling_instances` instances).
    pub pooling: bool,
    /// Instances the pool holds when `pooling` is on (default 32).
    pub pooling_instances: Option<u32>,
    /// Providers behind the capabilities.
    pub services: Services,
    /// Seed of the random sources WASI gives plugins, for reproducible
    /// replays (simulations); `None` draws from the operating system.
    pub random_seed: Option<u64>,
    /// The plugins [`PluginSource::Bundled`](crate::PluginSource::Bundled)
    /// names (the project's are `slurm_wasm_bundled::BUNDLED`); none by
    /// default.
    pub bundled: &'static [crate::bundled::Bundled],
    /// Tell `perf` about plugins' compiled code as plugins are compiled or
    /// read from the disk cache (see [`Profiler`]).
    #[cfg(feature = "profiling")]
    pub profiler: Option<Profiler>,
}

/// What the host writes for `perf` about compiled plugin code.
#[cfg(feature = "profiling")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profiler {
    /// wasmtime's perf map (`/tmp/perf-<pid>.map`): `perf report` names
    /// the plugins' functions instead of `[JIT]` addresses.
    PerfMap,
    /// wasmtime's jitdump (`jit-<pid>.dump` in the working directory), for
    /// `perf record -k 1` then `perf inject --jit`: `perf annotate` then
    /// shows each function's machine code with its samples.
    JitDump,
}

/// The largest linear memory a pooled instance may grow to.
const POOLED_MEMORY_BYTES: usize = 1 << 30;

pub(crate) struct Shared {
    pub engine: Engine,
    /// The fork generation ([`FORKS`]) whose epoch ticker serves the engine
    /// ([`Host::ensure_ticker`]).
    ticker_generation: AtomicU32,
    pub cache: ComponentCache,
    pub random_seed: Option<u64>,
    pub bundled: &'static [crate::bundled::Bundled],
    pub linkers: Linkers,
}

pub(crate) struct Linkers {
    pub select: Linker<HostState>,
    pub gres: Linker<HostState>,
    pub priority: Linker<HostState>,
    pub task: Linker<HostState>,
}

/// The plugin host. Cheap to clone; `Send + Sync`. Loading a plugin through
/// it compiles the component once (see [`HostOptions::cache_dir`]).
#[derive(Clone)]
pub struct Host {
    pub(crate) shared: Arc<Shared>,
    /// The capability providers of the plugins loaded through this host
    /// (hosts made by [`Host::with_clock`] share everything else).
    services: Arc<Services>,
}

impl Host {
    /// Creates the engine (fuel and epoch interruption on, component model),
    /// the linkers for the four worlds, and starts the epoch ticker thread,
    /// which ends when the last clone of the host is dropped.
    pub fn new(options: HostOptions) -> anyhow::Result<Host> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.consume_fuel(true);
        config.epoch_interruption(true);
        config.max_wasm_stack(512 << 10);
        #[cfg(feature = "profiling")]
        match options.profiler {
            Some(Profiler::PerfMap) => {
                config.profiler(wasmtime::ProfilingStrategy::PerfMap);
            }
            Some(Profiler::JitDump) => {
                config.profiler(wasmtime::ProfilingStrategy::JitDump);
            }
            None => {}
        }
        if options.pooling {
            let instances = options.pooling_instances.unwrap_or(32);
            let mut pool = PoolingAllocationConfig::default();
            pool.total_component_instances(instances)
                .total_core_instances(instances * 8)
                .total_memories(instances * 2)
                .total_tables(instances * 8)
                .max_memory_size(POOLED_MEMORY_BYTES)
                // Reset the first MiB of a returned memory by hand instead of
                // giving it back to the kernel: the next instance starts
                // without page faults.
                .linear_memory_keep_resident(1 << 20)
                .table_keep_resident(1 << 16);
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        }
        let engine = Engine::new(&config)?;
        let linkers = Linkers {
            select: {
                let mut linker = crate::kinds::select::linker(&engine)?;
                crate::kinds::inner_select::add_to_linker(&mut linker)?;
                linker
            },
            gres: crate::kinds::gres::linker(&engine)?,
            priority: crate::kinds::priority::linker(&engine)?,
            task: crate::kinds::task::linker(&engine)?,
        };
        count_forks();
        let generation = FORKS.load(Ordering::Acquire);
        start_epoch_ticker(&engine);
        Ok(Host {
            shared: Arc::new(Shared {
                ticker_generation: AtomicU32::new(generation),
                engine,
                cache: ComponentCache::new(options.cache_dir)?,
                random_seed: options.random_seed,
                bundled: options.bundled,
                linkers,
            }),
            services: Arc::new(options.services),
        })
    }

    /// The plugins this host loads by type ([`HostOptions::bundled`]).
    pub fn bundled(&self) -> &'static [crate::bundled::Bundled] {
        self.shared.bundled
    }

    /// The shared wasmtime engine.
    pub fn engine(&self) -> &Engine {
        &self.shared.engine
    }

    /// Makes sure this process advances the engine's epoch, so deadlines
    /// fire here: threads do not survive `fork()`, and a child of the
    /// process that built the host (slurmd daemonizing after loading its
    /// plugins, slurmstepd forking a task) would otherwise run plugins with
    /// no deadline but fuel. Starts a ticker when the process was forked
    /// since the last one started; otherwise one atomic load. Every plugin
    /// call does this first.
    pub fn ensure_ticker(&self) {
        let generation = FORKS.load(Ordering::Acquire);
        let ticking = self.shared.ticker_generation.load(Ordering::Acquire);
        if ticking != generation
            && self
                .shared
                .ticker_generation
                .compare_exchange(ticking, generation, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            start_epoch_ticker(&self.shared.engine);
        }
    }

    /// The capability providers.
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// This host (engine, compiled components, epoch ticker) with plugins'
    /// time answered by `clock` instead: what shadows and replays load
    /// through, so that each call sees the clock the recorded call saw.
    pub fn with_clock(&self, clock: Arc<dyn crate::capabilities::clock::Clock>) -> Host {
        Host {
            shared: self.shared.clone(),
            services: Arc::new(Services {
                clock,
                ..(*self.services).clone()
            }),
        }
    }
}

/// How many `fork()`s separate this process from the one that first built a
/// host: counted by a `pthread_atfork` child handler, so that a call can tell
/// it runs in a new process with one atomic load rather than a `getpid`
/// system call.
static FORKS: AtomicU32 = AtomicU32::new(0);

/// Registers the handler that counts [`FORKS`], once per process.
fn count_forks() {
    extern "C" fn forked() {
        FORKS.fetch_add(1, Ordering::AcqRel);
    }
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: `forked` only touches an atomic, which is async-signal-safe
        // as a fork handler must be; the handler lives as long as the code of
        // this crate.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(forked)) };
        if rc != 0 {
            tracing::error!(
                "pthread_atfork failed (error {rc}): deadlines will not fire in forked children"
            );
        }
    });
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until the engine is gone.
fn start_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("slurm-wasm-epoch".into())
        .spawn(move || loop {
            std::thread::sleep(EPOCH_TICK);
            match weak.upgrade() {
                Some(engine) => engine.increment_epoch(),
                None => break,
            }
        })
        .expect("spawning the epoch ticker thread");
}

/// WASI preview 2 for a plugin store: linked with nothing behind it (see
/// [`HostState::new`]), its waits bounded by the call's deadline
/// ([`crate::wasi_poll`]).
pub(crate) fn add_wasi(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_sync(linker)?;
    crate::wasi_poll::bound_waits(linker)
}
