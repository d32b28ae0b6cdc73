//! Host overhead benchmarks (BENCHMARKS.md): a call through the typed
//! handle vs a raw wasmtime call of the same export vs the native build of
//! the same plugin code; instantiation with and without pooling; loading a
//! precompiled component; fuel vs epoch interruption on a compute kernel.
//!
//! Run: `cargo bench --bench host`

use std::hint::black_box;

use divan::Bencher;
use slurm_wasm_host::bindings::base::slurm::plugin::{clock, log, types};
use slurm_wasm_host::bindings::priority::{PriorityPlugin as PriorityWorld, PriorityPluginPre};
use slurm_wasm_host::bindings::task::slurm::plugin::{cpuset, topology};
use slurm_wasm_host::bindings::task::TaskPlugin as TaskWorld;
use slurm_wasm_host::{
    fixtures, Host, HostOptions, PluginSettings, PluginSource, PriorityPlugin, TaskPlugin,
};
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

fn main() {
    divan::main();
}

const PRIORITY_BASIC: &[u8] = slurm_wasm_host::bundled::BUNDLED[0].bytes;
const HOSTILE: &str = env!("SLURM_WASM_TEST_HOSTILE");

/// Store data of the raw wasmtime baseline: WASI with nothing in it and
/// trivial capability imports, no limits bookkeeping.
struct Raw {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl Raw {
    fn new() -> Self {
        Raw {
            wasi: WasiCtxBuilder::new().build(),
            table: ResourceTable::new(),
        }
    }
}

impl WasiView for Raw {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for Raw {}
impl log::Host for Raw {
    fn write(&mut self, _level: log::Level, _message: String) {}
}
impl clock::Host for Raw {
    fn now(&mut self) -> i64 {
        0
    }
    fn monotonic_nanos(&mut self) -> u64 {
        0
    }
}
impl topology::Host for Raw {
    fn read_layout(&mut self) -> Result<topology::CpuLayout, types::CapabilityError> {
        Err(types::CapabilityError::Denied(types::Capability::Topology))
    }
}
impl cpuset::Host for Raw {
    fn bind(&mut self, _pid: u32, _cpus: types::Bitmap) -> Result<(), types::CapabilityError> {
        Err(types::CapabilityError::Denied(types::Capability::Cpuset))
    }
    fn get(&mut self, _pid: u32) -> Result<types::Bitmap, types::CapabilityError> {
        Err(types::CapabilityError::Denied(types::Capability::Cpuset))
    }
}

/// An engine configured like the host's (component model, and fuel and/or
/// epoch interruption as asked).
fn engine(fuel: bool, epoch: bool, pooling: bool) -> Engine {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(fuel)
        .epoch_interruption(epoch);
    if pooling {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(16)
            .total_core_instances(128)
            .total_memories(32)
            .total_tables(128)
            .max_memory_size(1 << 30)
            .linear_memory_keep_resident(1 << 20)
            .table_keep_resident(1 << 16);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    Engine::new(&config).expect("engine")
}

fn priority_pre(engine: &Engine) -> PriorityPluginPre<Raw> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
    PriorityWorld::add_to_linker::<Raw, HasSelf<Raw>>(&mut linker, |s| s).unwrap();
    let component = Component::new(engine, PRIORITY_BASIC).unwrap();
    PriorityPluginPre::new(linker.instantiate_pre(&component).unwrap()).unwrap()
}

fn fresh_store(engine: &Engine, fuel: bool, epoch: bool) -> Store<Raw> {
    let mut store = Store::new(engine, Raw::new());
    if fuel {
        store.set_fuel(u64::MAX).unwrap();
    }
    if epoch {
        store.set_epoch_deadline(u64::MAX);
    }
    store
}

/// One `priority.set` call: typed handle, raw wasmtime, native.
mod call {
    use super::*;

    #[divan::bench]
    fn typed_handle(b: Bencher) {
        let host = Host::new(HostOptions::default()).unwrap();
        let plugin = PriorityPlugin::load(
            &host,
            &PluginSource::Bundled("priority/basic".into()),
            PluginSettings::default(),
        )
        .unwrap();
        plugin.init(&fixtures::priority_config()).unwrap();
        let job = fixtures::job(1);
        b.bench_local(|| plugin.set(black_box(0xffff_0000), &job).unwrap());
    }

    #[divan::bench]
    fn raw_wasmtime(b: Bencher) {
        let engine = engine(true, true, false);
        let pre = priority_pre(&engine);
        let mut store = fresh_store(&engine, true, true);
        let world = pre.instantiate(&mut store).unwrap();
        let job = fixtures::job(1);
        b.bench_local(|| {
            world
                .slurm_plugin_priority()
                .call_set(&mut store, black_box(0xffff_0000), &job)
                .unwrap()
                .unwrap()
        });
    }

    /// The same plugin code built natively, called through its export trait
    /// (the job is cloned because the trait takes it by value, as the
    /// component boundary copies it).
    #[divan::bench]
    fn native(b: Bencher) {
        use slurm_wasm_sdk::priority::PriorityGuest;
        let job = slurm_wasm_sdk::testkit::fixtures::job(1);
        b.bench_local(|| {
            priority_basic::plugin::PriorityBasic::set(black_box(0xffff_0000), job.clone()).unwrap()
        });
    }
}

/// A new instance of priority/basic from its `InstancePre` (store included).
mod instantiate {
    use super::*;

    fn run(b: Bencher, pooling: bool) {
        let engine = engine(true, true, pooling);
        let pre = priority_pre(&engine);
        b.bench_local(|| {
            let mut store = fresh_store(&engine, true, true);
            let world = pre.instantiate(&mut store).unwrap();
            (world, store)
        });
    }

    #[divan::bench]
    fn pooling(b: Bencher) {
        run(b, true);
    }

    #[divan::bench]
    fn on_demand(b: Bencher) {
        run(b, false);
    }
}

/// Loading priority/basic when it is already compiled.
mod load {
    use super::*;

    /// Deserialize a precompiled component from the on-disk cache format.
    #[divan::bench]
    fn deserialize_precompiled_file(b: Bencher) {
        let engine = engine(true, true, false);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("priority_basic.cwasm");
        std::fs::write(&path, engine.precompile_component(PRIORITY_BASIC).unwrap()).unwrap();
        // SAFETY: written just above by the same engine configuration.
        b.bench_local(|| unsafe { Component::deserialize_file(&engine, &path) }.unwrap());
    }

    /// `PriorityPlugin::load` with the component in the host's cache:
    /// import checks, `InstancePre`, and a throwaway instance for `describe`.
    #[divan::bench]
    fn typed_load_cached(b: Bencher) {
        let host = Host::new(HostOptions::default()).unwrap();
        let source = PluginSource::Bundled("priority/basic".into());
        PriorityPlugin::load(&host, &source, PluginSettings::default()).unwrap();
        b.bench_local(|| PriorityPlugin::load(&host, &source, PluginSettings::default()).unwrap());
    }

    /// A new host (engine, linkers, epoch thread) loading from a warm disk cache.
    #[divan::bench(sample_count = 20)]
    fn new_host_from_disk_cache(b: Bencher) {
        let dir = tempfile::tempdir().unwrap();
        let options = HostOptions {
            cache_dir: Some(dir.path().to_path_buf()),
            ..HostOptions::default()
        };
        let source = PluginSource::Bundled("priority/basic".into());
        PriorityPlugin::load(
            &Host::new(options.clone()).unwrap(),
            &source,
            PluginSettings::default(),
        )
        .unwrap();
        b.bench_local(|| {
            let host = Host::new(options.clone()).unwrap();
            PriorityPlugin::load(&host, &source, PluginSettings::default()).unwrap()
        });
    }
}

/// Two kernels inside `task/hostile`, under each interruption mechanism and
/// natively: `work:1000000` (1,000,000 dependent xorshift64 rounds) and
/// `sort:200000` (sorting 200,000 pseudo-random numbers).
mod interruption {
    use super::*;

    const KERNELS: &[&str] = &["work:1000000", "sort:200000"];

    fn expected(kernel: &str) -> String {
        let (name, n) = kernel.split_once(':').unwrap();
        let n: u64 = n.parse().unwrap();
        match name {
            "work" => hostile_plugin::behaviour::work(n),
            _ => hostile_plugin::behaviour::sort(n),
        }
        .to_string()
    }

    fn run(b: Bencher, kernel: &str, fuel: bool, epoch: bool) {
        let engine = engine(fuel, epoch, false);
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
        TaskWorld::add_to_linker::<Raw, HasSelf<Raw>>(&mut linker, |s| s).unwrap();
        let component = Component::from_file(&engine, HOSTILE).unwrap();
        let mut store = fresh_store(&engine, fuel, epoch);
        let world = TaskWorld::instantiate(&mut store, &component, &linker).unwrap();
        let mut request = fixtures::launch_request(1, 1, 4);
        request.cpu_bind = kernel.into();
        let expected = expected(kernel);
        b.bench_local(|| {
            if fuel {
                store.set_fuel(u64::MAX).unwrap();
            }
            let binding = world
                .slurm_plugin_task()
                .call_slurmd_launch_request(&mut store, &request)
                .unwrap()
                .unwrap();
            assert_eq!(binding.cpu_bind, expected);
        });
    }

    #[divan::bench(args = KERNELS)]
    fn neither(b: Bencher, kernel: &str) {
        run(b, kernel, false, false);
    }

    #[divan::bench(args = KERNELS)]
    fn fuel(b: Bencher, kernel: &str) {
        run(b, kernel, true, false);
    }

    #[divan::bench(args = KERNELS)]
    fn epoch(b: Bencher, kernel: &str) {
        run(b, kernel, false, true);
    }

    #[divan::bench(args = KERNELS)]
    fn fuel_and_epoch(b: Bencher, kernel: &str) {
        run(b, kernel, true, true);
    }

    #[divan::bench(args = KERNELS)]
    fn native(b: Bencher, kernel: &str) {
        b.bench_local(|| expected(black_box(kernel)));
    }

    /// The same kernel through the host's typed handle (fuel and epoch on,
    /// limits bookkeeping), for the end-to-end figure.
    #[divan::bench(args = KERNELS)]
    fn typed_handle(b: Bencher, kernel: &str) {
        let host = Host::new(HostOptions::default()).unwrap();
        let plugin = TaskPlugin::load(
            &host,
            &PluginSource::File(HOSTILE.into()),
            PluginSettings::default(),
        )
        .unwrap();
        plugin.init(&fixtures::task_config()).unwrap();
        let mut request = fixtures::launch_request(1, 1, 4);
        request.cpu_bind = kernel.into();
        b.bench_local(|| plugin.slurmd_launch_request(&request).unwrap());
    }
}

/// Passing pending jobs across the boundary in one call: priority/basic's
/// `calculate` returns at once, so this is the cost of the job records.
mod job_batch {
    use super::*;

    #[divan::bench(args = [10_000, 100_000], sample_count = 10)]
    fn calculate_lowering(b: Bencher, jobs: u32) {
        let host = Host::new(HostOptions::default()).unwrap();
        let plugin = PriorityPlugin::load(&host, &PluginSource::Bundled("priority/basic".into()), PluginSettings::default()).unwrap();
        plugin.init(&fixtures::priority_config()).unwrap();
        let pending: Vec<_> = (0..jobs).map(fixtures::job).collect();
        b.bench_local(|| plugin.calculate(&[], &pending).unwrap());
    }
}
