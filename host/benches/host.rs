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
use slurm_wasm_host::kinds::priority::FactorsRequest;
use slurm_wasm_host::{
    fixtures, Host, HostOptions, PluginSettings, PluginSource, PriorityPlugin, TaskPlugin,
};
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

fn main() {
    divan::main();
}

const PRIORITY_BASIC: &[u8] = slurm_wasm_bundled::BUNDLED[0].bytes;
const HOSTILE: &str = slurm_wasm_test_artifacts::HOSTILE;

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
    fn typed_handle(b: Bencher<'_, '_>) {
        let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
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
    fn raw_wasmtime(b: Bencher<'_, '_>) {
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

    /// The same plugin code built natively, called through its export
    /// adapter (the job is cloned because the contract takes it by value,
    /// as the component boundary copies it).
    #[divan::bench]
    fn native(b: Bencher<'_, '_>) {
        use slurm_wasm_sdk::priority::{Export, PriorityConfig, PriorityGuest};
        use slurm_wasm_sdk::testkit::fixtures;
        type Basic = Export<priority_basic::PriorityBasic>;
        Basic::init(PriorityConfig {
            cluster: fixtures::cluster_config(),
            partitions: Vec::new(),
            partition_tres: Vec::new(),
            cluster_cpus: 0,
            cluster_nodes: 0,
            cluster_tres: Vec::new(),
        })
        .unwrap();
        let job = fixtures::job(1);
        b.bench_local(|| Basic::set(black_box(0xffff_0000), job.clone()).unwrap());
    }
}

/// A new instance of priority/basic from its `InstancePre` (store included).
mod instantiate {
    use super::*;

    fn run(b: Bencher<'_, '_>, pooling: bool) {
        let engine = engine(true, true, pooling);
        let pre = priority_pre(&engine);
        b.bench_local(|| {
            let mut store = fresh_store(&engine, true, true);
            let world = pre.instantiate(&mut store).unwrap();
            (world, store)
        });
    }

    #[divan::bench]
    fn pooling(b: Bencher<'_, '_>) {
        run(b, true);
    }

    #[divan::bench]
    fn on_demand(b: Bencher<'_, '_>) {
        run(b, false);
    }
}

/// Loading priority/basic when it is already compiled.
mod load {
    use super::*;

    /// Deserialize a precompiled component from the on-disk cache format.
    #[divan::bench]
    fn deserialize_precompiled_file(b: Bencher<'_, '_>) {
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
    fn typed_load_cached(b: Bencher<'_, '_>) {
        let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
        let source = PluginSource::Bundled("priority/basic".into());
        PriorityPlugin::load(&host, &source, PluginSettings::default()).unwrap();
        b.bench_local(|| PriorityPlugin::load(&host, &source, PluginSettings::default()).unwrap());
    }

    /// A new host (engine, linkers, epoch thread) loading from a warm disk cache.
    #[divan::bench(sample_count = 20)]
    fn new_host_from_disk_cache(b: Bencher<'_, '_>) {
        let dir = tempfile::tempdir().unwrap();
        let options = HostOptions {
            cache_dir: Some(dir.path().to_path_buf()),
            ..slurm_wasm_bundled::host_options()
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

    fn run(b: Bencher<'_, '_>, kernel: &str, fuel: bool, epoch: bool) {
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
    fn neither(b: Bencher<'_, '_>, kernel: &str) {
        run(b, kernel, false, false);
    }

    #[divan::bench(args = KERNELS)]
    fn fuel(b: Bencher<'_, '_>, kernel: &str) {
        run(b, kernel, true, false);
    }

    #[divan::bench(args = KERNELS)]
    fn epoch(b: Bencher<'_, '_>, kernel: &str) {
        run(b, kernel, false, true);
    }

    #[divan::bench(args = KERNELS)]
    fn fuel_and_epoch(b: Bencher<'_, '_>, kernel: &str) {
        run(b, kernel, true, true);
    }

    #[divan::bench(args = KERNELS)]
    fn native(b: Bencher<'_, '_>, kernel: &str) {
        b.bench_local(|| expected(black_box(kernel)));
    }

    /// The same kernel through the host's typed handle (fuel and epoch on,
    /// limits bookkeeping), for the end-to-end figure.
    #[divan::bench(args = KERNELS)]
    fn typed_handle(b: Bencher<'_, '_>, kernel: &str) {
        let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
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

/// Passing job records across the boundary in one call: priority/basic's
/// `get-priority-factors-list` returns an empty list at once, so this is the
/// cost of the records.
mod job_batch {
    use super::*;

    #[divan::bench(args = [10_000, 100_000], sample_count = 10)]
    fn records_lowering(b: Bencher<'_, '_>, jobs: u32) {
        let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
        let plugin = PriorityPlugin::load(
            &host,
            &PluginSource::Bundled("priority/basic".into()),
            PluginSettings::default(),
        )
        .unwrap();
        plugin.init(&fixtures::priority_config()).unwrap();
        let pending: Vec<_> = (0..jobs).map(fixtures::job).collect();
        let request = FactorsRequest {
            job_ids: Vec::new(),
            user_ids: Vec::new(),
            partitions: Vec::new(),
        };
        b.bench_local(|| {
            plugin
                .get_priority_factors_list(&pending, &request, 0)
                .unwrap()
        });
    }
}

/// priority/multifactor recomputing pending jobs over a 5,000-association
/// tree (Fair Tree, every weight set): one `calculate` pass, the jobs
/// registered beforehand with `set`. Through wasm and natively.
mod multifactor {
    use super::*;

    const NOW: i64 = 1_700_000_000;
    const ACCOUNTS: u32 = 50;
    const USERS_PER_ACCOUNT: u32 = 99;

    /// The same inputs for either set of bindings: the configuration, the
    /// tree (root, 50 accounts, 4,950 users with varied shares and usage)
    /// and `jobs` pending jobs spread over the users.
    macro_rules! inputs {
        ($fx:path, $kinds:path, $jobs:expr) => {{
            use $fx as fx;
            use $kinds as kinds;
            let mut cluster = fx::cluster_config();
            for (key, value) in [
                ("AccountingStorageType", "accounting_storage/slurmdbd"),
                ("PriorityWeightAge", "1000"),
                ("PriorityWeightFairshare", "10000"),
                ("PriorityWeightJobSize", "1000"),
                ("PriorityWeightPartition", "1000"),
                ("PriorityWeightQOS", "1000"),
                ("PriorityWeightTRES", "CPU=2000"),
            ] {
                cluster.raw.push(kinds::KeyValue {
                    key: key.into(),
                    value: value.into(),
                });
            }
            let config = kinds::PriorityConfig {
                cluster,
                partitions: vec![fx::partition(0, "batch", 1000)],
                partition_tres: vec![vec![kinds::TresAmount {
                    name: "cpu".into(),
                    count: 10_000,
                }]],
                cluster_cpus: 10_000,
                cluster_nodes: 1000,
                cluster_tres: vec![kinds::TresAmount {
                    name: "cpu".into(),
                    count: 10_000,
                }],
            };
            let mut tree = vec![kinds::AssociationUpdate::Upsert(fx::association(
                1, None, "root", None, 1,
            ))];
            let mut users = Vec::new();
            for a in 0..ACCOUNTS {
                let account_id = 2 + a;
                let name = format!("acct{a}");
                tree.push(kinds::AssociationUpdate::Upsert(fx::association(
                    account_id,
                    Some(1),
                    &name,
                    None,
                    1 + a % 7,
                )));
                for u in 0..USERS_PER_ACCOUNT {
                    let id = 100 + a * USERS_PER_ACCOUNT + u;
                    let mut user = fx::association(
                        id,
                        Some(account_id),
                        &name,
                        Some(&format!("u{id}")),
                        1 + u % 5,
                    );
                    user.user_id = Some(id);
                    user.usage_raw = f64::from((id * 7919) % 100_000);
                    tree.push(kinds::AssociationUpdate::Upsert(user));
                    users.push((id, name.clone()));
                }
            }
            let jobs: Vec<_> = (0..$jobs)
                .map(|i: u32| {
                    let (assoc, account) = &users[i as usize % users.len()];
                    let mut job = fx::job(i + 1);
                    job.assoc_id = *assoc;
                    job.user_id = *assoc;
                    job.account = Some(account.clone());
                    job.details.submit_time = NOW - i64::from(i % 86_400);
                    job.details.accrue_time = job.details.submit_time;
                    job.details.min_cpus = 1 + i % 64;
                    job.details.min_nodes = 1 + i % 4;
                    job.tres_requested = vec![kinds::TresAmount {
                        name: "cpu".into(),
                        count: u64::from(1 + i % 64),
                    }];
                    job
                })
                .collect();
            (config, tree, jobs)
        }};
    }

    mod host_kinds {
        pub use slurm_wasm_host::kinds::priority::{AssociationUpdate, PriorityConfig};
        pub use slurm_wasm_host::types::{KeyValue, TresAmount};
    }

    mod sdk_kinds {
        pub use slurm_wasm_sdk::priority::{AssociationUpdate, PriorityConfig};
        pub use slurm_wasm_sdk::types::{KeyValue, TresAmount};
    }

    #[divan::bench(args = [10_000, 100_000], sample_count = 10)]
    fn wasm(b: Bencher<'_, '_>, jobs: u32) {
        let (config, tree, jobs) = inputs!(slurm_wasm_host::fixtures, host_kinds, jobs);
        let clock =
            std::sync::Arc::new(slurm_wasm_host::capabilities::clock::VirtualClock::new(NOW));
        let services = slurm_wasm_host::Services {
            clock: clock.clone(),
            ..Default::default()
        };
        let host = Host::new(HostOptions {
            services,
            ..slurm_wasm_bundled::host_options()
        })
        .unwrap();
        let plugin = PriorityPlugin::load(
            &host,
            &PluginSource::Bundled("priority/multifactor".into()),
            PluginSettings::default(),
        )
        .unwrap();
        plugin.init(&config).unwrap();
        plugin.update_associations(&tree).unwrap();
        let mut lowest = 0xffff_0000;
        for job in &jobs {
            plugin.assign(&mut lowest, job).unwrap();
        }
        let ids: Vec<u32> = jobs.iter().map(|j| j.job_id).collect();
        let mut now = NOW;
        b.bench_local(|| {
            now += 60;
            clock.set(now);
            let out = plugin.calculate(&[], &ids).unwrap();
            assert_eq!(out.len(), ids.len());
        });
    }

    #[divan::bench(args = [10_000, 100_000], sample_count = 10)]
    fn native(b: Bencher<'_, '_>, jobs: u32) {
        use slurm_wasm_sdk::priority::{Export, PriorityGuest};
        type Native = Export<priority_multifactor::PriorityMultifactor>;
        let (config, tree, jobs) = inputs!(slurm_wasm_sdk::testkit::fixtures, sdk_kinds, jobs);
        slurm_wasm_sdk::testkit::with(|h| h.now = NOW);
        Native::init(config).unwrap();
        Native::update_associations(tree).unwrap();
        for job in &jobs {
            Native::set(0xffff_0000, job.clone()).unwrap();
        }
        let ids: Vec<u32> = jobs.iter().map(|j| j.job_id).collect();
        let mut now = NOW;
        b.bench_local(|| {
            now += 60;
            slurm_wasm_sdk::testkit::with(|h| h.now = now);
            let out = Native::calculate(Vec::new(), ids.clone()).unwrap();
            assert_eq!(out.len(), ids.len());
        });
        Native::fini().unwrap();
    }
}

/// task/affinity's `slurmd-launch-request` for 256 tasks on a whole
/// 2 sockets x 64 cores x 2 threads node (auto-binding to threads,
/// `lllp_distribution`), through wasm and natively.
mod affinity {
    use super::*;

    const TASKS: u32 = 256;

    #[divan::bench]
    fn wasm(b: Bencher<'_, '_>) {
        use slurm_wasm_host::capabilities::topology::FixedTopology;
        use slurm_wasm_host::{Capability, Grants, Services};
        let services = Services {
            topology: std::sync::Arc::new(FixedTopology::new(2, 64, 2, true)),
            ..Services::default()
        };
        let host = Host::new(HostOptions {
            services,
            ..slurm_wasm_bundled::host_options()
        })
        .unwrap();
        let settings = PluginSettings {
            grants: Grants::none().with(Capability::Topology),
            ..PluginSettings::default()
        };
        let plugin = TaskPlugin::load(
            &host,
            &PluginSource::Bundled("task/affinity".into()),
            settings,
        )
        .unwrap();
        plugin.init(&fixtures::task_config()).unwrap();
        let mut request = fixtures::launch_request(1, TASKS, 128);
        request.sockets = 2;
        request.cores_per_socket = 64;
        request.threads_per_core_conf = 2;
        request.cpus_conf = 256;
        b.bench_local(|| {
            let binding = plugin.slurmd_launch_request(&request).unwrap();
            assert_eq!(binding.cpu_bind.split(',').count(), TASKS as usize);
        });
    }

    #[divan::bench]
    fn native(b: Bencher<'_, '_>) {
        use slurm_wasm_sdk::task::{Export, TaskGuest};
        type Native = Export<task_affinity::TaskAffinity>;
        let block_map = (0..256u32).map(|a| a / 2 + (a % 2) * 128).collect();
        slurm_wasm_sdk::testkit::with(|h| {
            h.cpu_layout = Ok(slurm_wasm_sdk::task::topology::CpuLayout {
                sockets: 2,
                cores_per_socket: 64,
                threads_per_core: 2,
                block_map,
                numa_node_of_cpu: Vec::new(),
            })
        });
        Native::init(slurm_wasm_sdk::task::TaskConfig {
            cluster: slurm_wasm_sdk::testkit::fixtures::cluster_config(),
            node_name: "n1".into(),
        })
        .unwrap();
        let mut request = native_request();
        request.global_task_ids = (0..TASKS).collect();
        b.bench_local(|| {
            let binding = Native::slurmd_launch_request(request.clone()).unwrap();
            assert_eq!(binding.cpu_bind.split(',').count(), TASKS as usize);
        });
    }

    /// The same request as the wasm bench, in the SDK's types.
    fn native_request() -> slurm_wasm_sdk::task::LaunchRequest {
        let cores = slurm_wasm_sdk::Bitmap::full(128);
        slurm_wasm_sdk::task::LaunchRequest {
            job_id: 1,
            step_id: 0,
            user_id: 1000,
            group_id: 1000,
            node_count: 1,
            node_id: 0,
            node_name: "n1".into(),
            total_tasks: TASKS,
            global_task_ids: Vec::new(),
            cpus_per_task: 1,
            cpu_bind_type: 0,
            cpu_bind: String::new(),
            task_dist: 0,
            plane_size: 0,
            ntasks_per_board: 0,
            ntasks_per_socket: 0,
            ntasks_per_core: 0,
            threads_per_core: 0,
            overcommit: false,
            step_cores: (&cores).into(),
            job_cores: (&cores).into(),
            sockets: 2,
            cores_per_socket: 64,
            threads_per_core_conf: 2,
            cpus_conf: 256,
            job_core_spec: None,
            mem_bind_type: 0,
            mem_bind: String::new(),
            env: Vec::new(),
            interactive: false,
        }
    }
}

/// What taps cost the live path (issue 32): one call through the typed
/// handle with no tap, with a recording, and with one shadow (the same
/// bundled plugin, on its own thread: the live path encodes the call and
/// hands it over). Priority path: multifactor's `set` of one job (the
/// smallest call, where a tap's share is largest); select path: cons_tres's run-now `job-test` of a
/// one-task job on 64 nodes. Between sample batches the shadow catches up
/// (outside the timing), so it never falls behind its queue.
mod taps {
    use super::*;
    use slurm_wasm_host::kinds::select::{JobTestFlags, JobTestMode, JobTestRequest};
    use slurm_wasm_host::recording::RecordOptions;
    use slurm_wasm_host::tap::ShadowOptions;
    use slurm_wasm_host::SelectPlugin;

    const TAPS: [&str; 3] = ["none", "record", "shadow"];

    /// Loads `source` as a `$Plugin` through a fresh host with `mode`'s tap
    /// (a recording into `$dir`, or the same plugin as a shadow).
    macro_rules! tapped {
        ($Plugin:ident, $source:expr, $mode:expr, $dir:expr) => {{
            let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
            let source = PluginSource::Bundled($source.into());
            let plugin = $Plugin::load(&host, &source, PluginSettings::default()).unwrap();
            match $mode {
                "record" => plugin
                    .record(RecordOptions::new($dir.join("calls.swrec")))
                    .unwrap(),
                "shadow" => plugin
                    .add_shadow(
                        &source,
                        PluginSettings::default(),
                        ShadowOptions {
                            queue: 1 << 16,
                            keep: 0,
                        },
                    )
                    .unwrap(),
                _ => {}
            }
            (host, plugin)
        }};
    }

    #[divan::bench(args = TAPS, sample_size = 256)]
    fn priority_set(b: Bencher<'_, '_>, mode: &str) {
        let dir = tempfile::tempdir().unwrap();
        let (_host, plugin) = tapped!(PriorityPlugin, "priority/multifactor", mode, dir.path());
        plugin.init(&fixtures::priority_config()).unwrap();
        let job = fixtures::job(1);
        b.with_inputs(|| {
            plugin.settled_shadow_reports();
        })
        .bench_local_values(|()| plugin.set(black_box(0xffff_0000), &job).unwrap());
    }

    #[divan::bench(args = TAPS, sample_size = 256)]
    fn select_job_test(b: Bencher<'_, '_>, mode: &str) {
        let dir = tempfile::tempdir().unwrap();
        let (_host, plugin) = tapped!(SelectPlugin, "select/cons_tres", mode, dir.path());
        let mut config = fixtures::select_config();
        config.partitions = vec![fixtures::partition(0, "batch", 64)];
        plugin.init(&config).unwrap();
        let nodes: Vec<_> = (0..64)
            .map(|i| fixtures::node(i, &format!("n{i}"), 2, 16, 1, 128_000))
            .collect();
        plugin.node_init(&nodes).unwrap();
        let mut job = fixtures::job(1);
        job.details.min_nodes = 1;
        job.details.num_tasks = 1;
        let request = JobTestRequest {
            min_nodes: 1,
            max_nodes: 0,
            req_nodes: 1,
            job,
            candidates: fixtures::bitmap(64, 0..64),
            mode: JobTestMode::RunNow,
            flags: JobTestFlags::empty(),
            preemptee_candidates: Vec::new(),
            excluded_cores: None,
        };
        b.with_inputs(|| {
            plugin.settled_shadow_reports();
        })
        .bench_local_values(|()| plugin.job_test(black_box(&request)).unwrap());
    }
}
