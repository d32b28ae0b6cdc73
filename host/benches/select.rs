//! `job-test` of select/cons_tres and select/linear on large clusters
//! (BENCHMARKS.md, "select: job-test on large clusters"): the bundled
//! component through the host's typed [`SelectPlugin`] vs the same plugin
//! crate built natively and driven through its instance type, with the same
//! inputs.
//!
//! The cluster: `nodes` nodes of 2 sockets x 18 cores x 1 thread, 192 GiB
//! (196,608 MB) and `Gres=gpu:2`, gres.conf giving one GPU per socket
//! (`Cores=0-17` and `Cores=18-35`); one partition with every node;
//! `SelectTypeParameters=CR_Core_Memory` for cons_tres and `CR_Memory` for
//! linear (linear refuses the core-level ones). Half the nodes are busy,
//! with end times spread over the next day:
//!
//! * nodes `i % 4 == 0`, in groups of four consecutive such nodes: one
//!   4-node job per group (`-N4 --exclusive --gpus-per-node=2 --mem=0`),
//!   whole nodes;
//! * nodes `i % 4 == 2`: one job each holding socket 0, its GPU and half
//!   the memory (`-n18 --gpus-per-node=1 --mem=98304`);
//! * nodes `i % 4 == 1` and `3`: idle.
//!
//! The tested jobs (what `host::job_request` makes of the options):
//!
//! * `cpu`: `sbatch -N2 -n72 --mem-per-cpu=2000 -t 60` (two whole nodes'
//!   cores);
//! * `gpu`: `sbatch -N1 -n36 --gpus-per-node=1 --mem=64000 -t 60` (a
//!   whole node's cores and one of its GPUs: without `-N1` cons_tres may
//!   also spread the 36 tasks over two half-busy nodes, and WILL_RUN would
//!   then find room at once); for linear `--gpus-per-node=2`, as linear
//!   refuses a node unless the job's GPUs are bound to all its cores.
//!
//! RUN_NOW offers every node. WILL_RUN offers only the busy half (a job
//! whose partition or `--constraint` leaves it the busy nodes), so the
//! answer lies in the future: the plugin has to release running jobs in
//! end-time order until the job fits.
//!
//! Run: `cargo bench --bench select` (after the timings, each wasm case's
//! fuel per call); `SELECT_PAIRED=all cargo bench --bench select` for the
//! wasm/native ratios timed side by side (see [`paired`]).
//!
//! Two more variables serve the investigation of a row:
//!
//! * `SELECT_PROFILE=<seconds>` with `SELECT_PAIRED=<filter>`: instead of
//!   timing, each matching row calls the wasm build alone for that long,
//!   for `perf record`. Built with `--features profiling`, the host writes
//!   wasmtime's perf map, so the plugins' functions have names. With
//!   `SELECT_PROFILE_NATIVE=1` the native build is called instead, for a
//!   profile to hold the wasm one against, function by function. With
//!   `SELECT_JITDUMP=1` the host writes wasmtime's jitdump instead of the
//!   perf map: record with `perf record -k 1`, then `perf inject --jit`,
//!   and `perf annotate` shows the compiled code with its samples.
//! * `SELECT_WASM_DIR=<dir>`: the wasm rows load `select_cons_tres.wasm`
//!   and `select_linear.wasm` from `dir` instead of the bundled
//!   components: two builds of a plugin (allocator, compiler flags)
//!   compared against the same native build, row by row. With
//!   `SELECT_WASM_DIR_B=<dir>` as well, the paired rows time that build in
//!   the native column: two wasm builds side by side (the ratio is A / B).
//! * `SELECT_LAYER=1` with `SELECT_PAIRED=<filter>`: the paired rows time
//!   the component alone (first column) against the same component as the
//!   inner plugin of `select/pass_through` (`tests/pass-through-select`),
//!   every call passed through one wrapper layer (second column): the cost
//!   of a layer (issue 33). `SELECT_LAYER=cray_aries`: the layer is the
//!   bundled select/cray_aries instead (`OTHER_CONS_TRES` added over
//!   cons_tres), whose job-test without counter jobs forwards the call.

use std::hint::black_box;
use std::sync::Arc;

use divan::Bencher;
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::{Host, HostOptions, PluginSettings, PluginSource, SelectPlugin, Services};

fn main() {
    if let Some(filter) = std::env::var_os("SELECT_PAIRED") {
        paired::run(&filter.to_string_lossy());
        return;
    }
    divan::main();
    // Printed after divan's table, which a line in its middle would break.
    let fuel = FUEL.lock().unwrap_or_else(|p| p.into_inner());
    if !fuel.is_empty() {
        println!("\nfuel per call (wasm, mean of {FUEL_CALLS} calls):");
        for line in fuel.iter() {
            println!("  {line}");
        }
    }
}

/// Each wasm case's fuel per call, as `plugin mode at N nodes: fuel`.
static FUEL: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The virtual "now" of every test (plugins read it from the host clock,
/// native instances take it as an argument).
const NOW: i64 = 1_700_000_000;
/// Calls over which each wasm case's fuel per call is averaged (and
/// printed after the timings) before timing; even, so both twin requests
/// count.
const FUEL_CALLS: usize = 10;
/// Cluster sizes, in nodes.
const SIZES: [u32; 3] = [1_000, 10_000, 50_000];
const SOCKETS: u16 = 2;
const CORES_PER_SOCKET: u16 = 18;
const CORES: u32 = (SOCKETS * CORES_PER_SOCKET) as u32;
const MEMORY_MB: u64 = 192 * 1024;

/// Which job, in which mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    RunNowCpu,
    RunNowGpu,
    WillRunCpu,
    WillRunGpu,
}

impl Case {
    fn will_run(self) -> bool {
        matches!(self, Case::WillRunCpu | Case::WillRunGpu)
    }

    fn gpu(self) -> bool {
        matches!(self, Case::RunNowGpu | Case::WillRunGpu)
    }
}

/// The end time of running job `id`: start an hour ago, a time limit of
/// 70 to 1,509 minutes spread pseudo-randomly, so ends fall between 10
/// minutes and about a day from now.
fn limit_minutes(id: u32) -> u32 {
    70 + id.wrapping_mul(7919) % 1440
}

/// The inputs in one set of bindings (`$fx`: the record builders, `$kinds`:
/// a module naming the record types): the select configuration, the node
/// table, the running jobs, and the `job-test` request of `$case`.
macro_rules! inputs {
    ($fx:path, $kinds:path, $nodes:expr, $params:expr, $case:expr) => {{
        use $fx as fx;
        use $kinds as k;
        let n: u32 = $nodes;
        let bitmap = |len: u32, bits: &mut dyn Iterator<Item = u32>| {
            let mut words = vec![0u64; (len as usize).div_ceil(64)];
            for b in bits {
                words[(b / 64) as usize] |= 1 << (b % 64);
            }
            k::Bitmap { len, words }
        };
        let gpus = |count: u64| {
            vec![k::GresRequest {
                name: "gpu".into(),
                type_name: None,
                scope: k::GresScope::PerNode,
                count,
                cpus_per_gres: None,
                mem_per_gres: None,
            }]
        };

        let mut cluster = fx::cluster_config();
        // CR_Memory (linear's) or CR_Core_Memory (cons_tres's), as flags.
        cluster.select_type_parameters = match $params {
            "CR_Core_Memory" => k::SelectTypeParams::CORE | k::SelectTypeParams::MEMORY,
            _ => k::SelectTypeParams::MEMORY,
        };
        let config = k::SelectConfig {
            cluster,
            partitions: vec![fx::partition(0, "batch", n)],
        };

        let nodes: Vec<k::Node> = (0..n)
            .map(|i| {
                let mut node = fx::node(
                    i,
                    &format!("n{i:05}"),
                    SOCKETS,
                    CORES_PER_SOCKET,
                    1,
                    MEMORY_MB,
                );
                node.gres = vec![k::GresCount {
                    name: "gpu".into(),
                    type_name: None,
                    count: 2,
                }];
                node.gres_topology = (0..u32::from(SOCKETS))
                    .map(|s| {
                        let first = s * u32::from(CORES_PER_SOCKET);
                        k::GresDeviceGroup {
                            name: "gpu".into(),
                            type_name: None,
                            count: 1,
                            cores: Some(bitmap(
                                CORES,
                                &mut (first..first + u32::from(CORES_PER_SOCKET)),
                            )),
                            links: Vec::new(),
                        }
                    })
                    .collect();
                node
            })
            .collect();

        // Half the nodes busy: 4-node exclusive jobs over `i % 4 == 0`,
        // one socket-0 job on each `i % 4 == 2`.
        let mut running = Vec::new();
        let whole: Vec<u32> = (0..n).step_by(4).collect();
        let mut add = |held: &[u32], cores: u32, gpus_held: u64, memory: u64| {
            let id = running.len() as u32 + 1;
            let count = held.len() as u32;
            let mut job = fx::job(id);
            job.state = k::JobState::Running;
            job.time_limit = Some(limit_minutes(id));
            job.start_time = NOW - 3600;
            job.end_time = job.start_time + i64::from(limit_minutes(id)) * 60;
            let d = &mut job.details;
            d.min_nodes = count;
            d.max_nodes = Some(count);
            d.num_tasks = cores * count;
            d.min_cpus = cores * count;
            d.gres = gpus(gpus_held);
            if cores == CORES {
                d.share = k::ShareRequest::Exclusive;
                d.memory = k::MemoryRequest::PerNode(0);
            } else {
                d.memory = k::MemoryRequest::PerNode(memory);
            }
            job.total_cpus = Some(cores * count);
            job.resources = Some(k::JobResources {
                nodes: bitmap(n, &mut held.iter().copied()),
                ncpus: cores * count,
                per_node: held
                    .iter()
                    .map(|&i| k::NodeResources {
                        node_index: i,
                        cores: bitmap(CORES, &mut (0..cores)),
                        cpus: cores as u16,
                        memory,
                        gres: vec![k::GresAllocation {
                            name: "gpu".into(),
                            type_name: None,
                            count: gpus_held,
                            devices: Some(bitmap(2, &mut (0..gpus_held as u32))),
                            per_device: Vec::new(),
                        }],
                    })
                    .collect(),
                whole_nodes: cores == CORES,
            });
            running.push(job);
        };
        for group in whole.chunks(4) {
            add(group, CORES, 2, MEMORY_MB);
        }
        for i in (2..n).step_by(4) {
            add(&[i], CORES / 2, 1, MEMORY_MB / 2);
        }

        let case: Case = $case;
        let mut job = fx::job(1_000_000);
        job.time_limit = Some(60);
        job.details.submit_time = NOW - 60;
        let (min_nodes, max_nodes, req_nodes) = if case.gpu() {
            // -N1 -n36 --gpus-per-node=1 --mem=64000
            let d = &mut job.details;
            d.min_nodes = 1;
            d.max_nodes = Some(1);
            d.num_tasks = 36;
            d.min_cpus = 36;
            d.memory = k::MemoryRequest::PerNode(64_000);
            // select/linear may use only the CPUs of the cores a job's
            // GPUs are bound to, and takes whole nodes (22.05
            // `_job_count_bitmap`): one GPU, bound to one socket, leaves it
            // no node, so its job asks both.
            d.gres = gpus(if $params == "CR_Memory" { 2 } else { 1 });
            (1, 1, 1)
        } else {
            // -N2 -n72 --mem-per-cpu=2000
            let d = &mut job.details;
            d.min_nodes = 2;
            d.max_nodes = Some(2);
            d.num_tasks = 72;
            d.min_cpus = 72;
            d.memory = k::MemoryRequest::PerCpu(2000);
            (2, 2, 2)
        };
        let candidates = if case.will_run() {
            bitmap(n, &mut (0..n).filter(|i| i % 2 == 0))
        } else {
            bitmap(n, &mut (0..n))
        };
        let request = k::JobTestRequest {
            job,
            candidates,
            min_nodes,
            max_nodes,
            req_nodes,
            mode: if case.will_run() {
                k::JobTestMode::WillRun
            } else {
                k::JobTestMode::RunNow
            },
            flags: k::JobTestFlags::empty(),
            preemptee_candidates: Vec::new(),
            excluded_cores: None,
        };
        // Its twin asks 1 MB less memory (same answer): benches alternate
        // the two, as cons_tres answers a request that repeats the one
        // before it from the answer it kept.
        let mut twin = request.clone();
        twin.job.details.memory = match twin.job.details.memory {
            k::MemoryRequest::PerCpu(m) => k::MemoryRequest::PerCpu(m - 1),
            k::MemoryRequest::PerNode(m) => k::MemoryRequest::PerNode(m - 1),
            other => other,
        };
        (config, nodes, running, [request, twin])
    }};
}

mod host_kinds {
    pub use slurm_wasm_host::kinds::select::{
        JobTestFlags, JobTestMode, JobTestRequest, SelectConfig,
    };
    pub use slurm_wasm_host::types::{
        Bitmap, GresAllocation, GresCount, GresDeviceGroup, GresRequest, GresScope, JobResources,
        JobState, MemoryRequest, Node, NodeResources, SelectTypeParams, ShareRequest,
    };
}

mod sdk_kinds {
    pub use slurm_wasm_sdk::select::{JobTestFlags, JobTestMode, JobTestRequest, SelectConfig};
    pub use slurm_wasm_sdk::types::{
        Bitmap, GresAllocation, GresCount, GresDeviceGroup, GresRequest, GresScope, JobResources,
        JobState, MemoryRequest, Node, NodeResources, SelectTypeParams, ShareRequest,
    };
}

/// What a job-test answered, in either set of bindings: the chosen nodes
/// and the start time.
#[derive(Debug, PartialEq, Eq)]
struct Answer {
    nodes: Vec<u64>,
    cpus: u32,
    start: Option<i64>,
}

/// The expected shape of an answer; a bench that does not test what it
/// says stops here.
fn check(case: Case, answer: &Answer) {
    let nodes: u32 = answer.nodes.iter().map(|w| w.count_ones()).sum();
    if case.gpu() {
        assert!(nodes >= 1, "{case:?}: {answer:?}");
    } else {
        assert_eq!(nodes, 2, "{case:?}: {answer:?}");
    }
    if case.will_run() {
        assert!(
            answer.start.is_some_and(|s| s > NOW),
            "{case:?} must start in the future: {answer:?}"
        );
    }
}

/// Bundled `plugin_type` loaded on a host whose clock reads [`NOW`], with
/// the cluster and its running jobs, and the case's twin requests; its
/// answer checked against [`check`] and the native build's.
fn load_wasm(plugin_type: &str, params: &str, nodes: u32, case: Case) -> Loaded {
    load_wasm_from(
        std::env::var_os("SELECT_WASM_DIR"),
        plugin_type,
        params,
        nodes,
        case,
        false,
    )
}

/// A loaded plugin with its case's twin requests.
type Loaded = (
    SelectPlugin,
    [slurm_wasm_host::kinds::select::JobTestRequest; 2],
);

/// [`load_wasm`] from `dir`'s components instead of the bundled ones.
fn load_wasm_from(
    dir: Option<std::ffi::OsString>,
    plugin_type: &str,
    params: &str,
    nodes: u32,
    case: Case,
    wrapped: bool,
) -> Loaded {
    let (mut config, table, running, requests) =
        inputs!(slurm_wasm_host::fixtures, host_kinds, nodes, params, case);
    let cray = wrapped && std::env::var_os("SELECT_LAYER").is_some_and(|l| l == "cray_aries");
    if cray && plugin_type == "select/cons_tres" {
        config.cluster.select_type_parameters |=
            slurm_wasm_host::types::SelectTypeParams::OTHER_CONS_TRES;
    }
    let host = Host::new(HostOptions {
        services: Services {
            clock: Arc::new(VirtualClock::new(NOW)),
            ..Services::default()
        },
        #[cfg(feature = "profiling")]
        profiler: Some(if std::env::var_os("SELECT_JITDUMP").is_some() {
            slurm_wasm_host::Profiler::JitDump
        } else {
            slurm_wasm_host::Profiler::PerfMap
        }),
        ..slurm_wasm_bundled::host_options()
    })
    .unwrap();
    let source = match dir {
        Some(dir) => {
            let bundled = slurm_wasm_bundled::find(plugin_type).unwrap();
            PluginSource::File(std::path::Path::new(&dir).join(bundled.file_name))
        }
        None => PluginSource::Bundled(plugin_type.into()),
    };
    let plugin = SelectPlugin::load(&host, &source, PluginSettings::default()).unwrap();
    // With `wrapped`, the plugin is the inner one of select/pass_through
    // (`tests/pass-through-select`) or select/cray_aries: one wrapper layer.
    let plugin = if wrapped {
        let wrapper = if cray {
            PluginSource::Bundled("select/cray_aries".into())
        } else {
            PluginSource::File(slurm_wasm_test_artifacts::PASS_THROUGH.into())
        };
        SelectPlugin::load_over(&host, &wrapper, PluginSettings::default(), plugin).unwrap()
    } else {
        plugin
    };
    plugin.init(&config).unwrap();
    plugin.node_init(&table).unwrap();
    plugin.job_init(&running).unwrap();
    let answer = |r: slurm_wasm_host::kinds::select::JobTestResult| Answer {
        nodes: r.resources.nodes.words,
        cpus: r.resources.ncpus,
        start: r.start_time,
    };
    let first = answer(plugin.job_test(&requests[0]).unwrap());
    check(case, &first);
    let native = native_answer(plugin_type, params, nodes, case);
    assert_eq!(first, native, "wasm and native answers differ");
    let twin = answer(plugin.job_test(&requests[1]).unwrap());
    assert_eq!(first, twin, "the twin requests are answered differently");
    (plugin, requests)
}

fn wasm(b: Bencher<'_, '_>, plugin_type: &str, params: &str, nodes: u32, case: Case) {
    let (plugin, requests) = load_wasm(plugin_type, params, nodes, case);
    // The work per call in fuel, which unlike time does not depend on the
    // machine or its caches (BENCHMARKS.md's growth figures).
    let before = plugin.fuel_used();
    for request in requests.iter().cycle().take(FUEL_CALLS) {
        plugin.job_test(request).unwrap();
    }
    let per_call = (plugin.fuel_used() - before) / FUEL_CALLS as u64;
    FUEL.lock().unwrap_or_else(|p| p.into_inner()).push(format!(
        "{plugin_type} {case:?} at {nodes} nodes: {per_call}"
    ));
    // The twin was asked last: the first timed call asks the other one.
    let mut k = 1;
    b.bench_local(|| {
        k ^= 1;
        plugin.job_test(black_box(&requests[k])).unwrap()
    });
}

/// A plugin instance built natively.
trait Native: Sized {
    fn build(
        config: &slurm_wasm_sdk::select::SelectConfig,
        nodes: &[slurm_wasm_sdk::types::Node],
        running: &[slurm_wasm_sdk::types::Job],
    ) -> Self;
    fn test(
        &self,
        request: &slurm_wasm_sdk::select::JobTestRequest,
    ) -> slurm_wasm_sdk::select::JobTestResult;
}

impl Native for select_linear::Linear {
    fn build(
        config: &slurm_wasm_sdk::select::SelectConfig,
        nodes: &[slurm_wasm_sdk::types::Node],
        running: &[slurm_wasm_sdk::types::Job],
    ) -> Self {
        let mut linear = select_linear::Linear::init(config).unwrap();
        linear.node_init(nodes).unwrap();
        linear.job_init(running).unwrap();
        linear
    }

    fn test(
        &self,
        request: &slurm_wasm_sdk::select::JobTestRequest,
    ) -> slurm_wasm_sdk::select::JobTestResult {
        self.job_test(request, NOW).unwrap()
    }
}

impl Native for select_cons_tres::ConsTres {
    fn build(
        config: &slurm_wasm_sdk::select::SelectConfig,
        nodes: &[slurm_wasm_sdk::types::Node],
        running: &[slurm_wasm_sdk::types::Job],
    ) -> Self {
        let mut ct = select_cons_tres::instance_from(config).unwrap();
        ct.node_init(nodes).unwrap();
        ct.rebuild(running).unwrap();
        ct
    }

    fn test(
        &self,
        request: &slurm_wasm_sdk::select::JobTestRequest,
    ) -> slurm_wasm_sdk::select::JobTestResult {
        self.job_test(request, NOW).unwrap()
    }
}

fn native_build<P: Native>(
    params: &str,
    nodes: u32,
    case: Case,
) -> (P, [slurm_wasm_sdk::select::JobTestRequest; 2]) {
    let (config, table, running, requests) = inputs!(
        slurm_wasm_sdk::testkit::fixtures,
        sdk_kinds,
        nodes,
        params,
        case
    );
    (P::build(&config, &table, &running), requests)
}

fn native_answer(plugin_type: &str, params: &str, nodes: u32, case: Case) -> Answer {
    let result = match plugin_type {
        "select/linear" => {
            let (p, requests) = native_build::<select_linear::Linear>(params, nodes, case);
            p.test(&requests[0])
        }
        _ => {
            let (p, requests) = native_build::<select_cons_tres::ConsTres>(params, nodes, case);
            p.test(&requests[0])
        }
    };
    Answer {
        nodes: result.resources.nodes.words,
        cpus: result.resources.ncpus,
        start: result.start_time,
    }
}

fn native<P: Native>(b: Bencher<'_, '_>, params: &str, nodes: u32, case: Case) {
    let (plugin, requests) = native_build::<P>(params, nodes, case);
    let mut k = 0;
    b.bench_local(|| {
        k ^= 1;
        plugin.test(black_box(&requests[k]))
    });
}

/// One module per plugin: `{run_now,will_run}_{cpu,gpu}_{wasm,native}`
/// over [`SIZES`].
macro_rules! plugin_benches {
    ($module:ident, $plugin_type:literal, $params:literal, $native:ty) => {
        mod $module {
            use super::*;

            #[divan::bench(args = SIZES)]
            fn run_now_cpu_wasm(b: Bencher<'_, '_>, nodes: u32) {
                wasm(b, $plugin_type, $params, nodes, Case::RunNowCpu);
            }

            #[divan::bench(args = SIZES)]
            fn run_now_cpu_native(b: Bencher<'_, '_>, nodes: u32) {
                native::<$native>(b, $params, nodes, Case::RunNowCpu);
            }

            #[divan::bench(args = SIZES)]
            fn run_now_gpu_wasm(b: Bencher<'_, '_>, nodes: u32) {
                wasm(b, $plugin_type, $params, nodes, Case::RunNowGpu);
            }

            #[divan::bench(args = SIZES)]
            fn run_now_gpu_native(b: Bencher<'_, '_>, nodes: u32) {
                native::<$native>(b, $params, nodes, Case::RunNowGpu);
            }

            #[divan::bench(args = SIZES, sample_count = 20)]
            fn will_run_cpu_wasm(b: Bencher<'_, '_>, nodes: u32) {
                wasm(b, $plugin_type, $params, nodes, Case::WillRunCpu);
            }

            #[divan::bench(args = SIZES, sample_count = 20)]
            fn will_run_cpu_native(b: Bencher<'_, '_>, nodes: u32) {
                native::<$native>(b, $params, nodes, Case::WillRunCpu);
            }

            #[divan::bench(args = SIZES, sample_count = 20)]
            fn will_run_gpu_wasm(b: Bencher<'_, '_>, nodes: u32) {
                wasm(b, $plugin_type, $params, nodes, Case::WillRunGpu);
            }

            #[divan::bench(args = SIZES, sample_count = 20)]
            fn will_run_gpu_native(b: Bencher<'_, '_>, nodes: u32) {
                native::<$native>(b, $params, nodes, Case::WillRunGpu);
            }
        }
    };
}

plugin_benches!(
    cons_tres,
    "select/cons_tres",
    "CR_Core_Memory",
    select_cons_tres::ConsTres
);
plugin_benches!(linear, "select/linear", "CR_Memory", select_linear::Linear);

/// `SELECT_PAIRED=<filter> cargo bench --bench select`: wasm against
/// native in one loop instead of divan's table. On a shared machine the
/// speed of a core drifts by up to 1.8x within minutes, so two benches
/// timed a minute apart give ratios off by as much; here batches of wasm
/// and native calls (about [`BATCH`] each, long enough to warm the caches
/// the other build evicted) alternate, and a row's ratio is the median of
/// its batch ratios, printed with the quartiles. `filter` picks the rows
/// whose `plugin case nodes` contains it (`all`: every row; ending in `$`:
/// whose name ends with the rest, as `linear RunNowCpu 1000$`).
mod paired {
    use super::*;
    use std::time::{Duration, Instant};

    /// Batch pairs per row (odd: the median is one of them).
    const ROUNDS: usize = 21;
    /// The time a batch aims at.
    const BATCH: Duration = Duration::from_millis(20);

    pub fn run(filter: &str) {
        let profile = std::env::var("SELECT_PROFILE").ok().map(|secs| {
            let secs: f64 = secs.parse().expect("SELECT_PROFILE is a number of seconds");
            Duration::from_secs_f64(secs)
        });
        if std::env::var_os("SELECT_LAYER").is_some() {
            let layer = match std::env::var_os("SELECT_LAYER") {
                Some(l) if l == "cray_aries" => "select/cray_aries",
                _ => "select/pass_through",
            };
            println!(
                "| plugin | mode / job | nodes | alone | under {layer} | wrapped / alone (median, quartiles) |"
            );
        } else {
            println!(
                "| plugin | mode / job | nodes | native | wasm | wasm / native (median, quartiles) |"
            );
        }
        println!("|---|---|---|---:|---:|---:|");
        for case in [
            Case::RunNowCpu,
            Case::RunNowGpu,
            Case::WillRunCpu,
            Case::WillRunGpu,
        ] {
            for nodes in SIZES {
                for (plugin_type, params) in [
                    ("select/cons_tres", "CR_Core_Memory"),
                    ("select/linear", "CR_Memory"),
                ] {
                    let name = format!("{plugin_type} {case:?} {nodes}");
                    let picked = match filter.strip_suffix('$') {
                        Some(whole) => name.ends_with(whole),
                        None => filter == "all" || name.contains(filter),
                    };
                    if !picked {
                        continue;
                    }
                    if let Some(length) = profile {
                        if std::env::var_os("SELECT_PROFILE_NATIVE").is_some() {
                            let calls = if plugin_type == "select/linear" {
                                profile_native::<select_linear::Linear>(params, nodes, case, length)
                            } else {
                                profile_native::<select_cons_tres::ConsTres>(
                                    params, nodes, case, length,
                                )
                            };
                            println!(
                                "| {plugin_type} | {case:?} | {nodes} | {calls} native calls | | |"
                            );
                        } else {
                            let calls = profile_wasm(plugin_type, params, nodes, case, length);
                            println!(
                                "| {plugin_type} | {case:?} | {nodes} | | {calls} wasm calls | |"
                            );
                        }
                        continue;
                    }
                    let row = if plugin_type == "select/linear" {
                        measure::<select_linear::Linear>(plugin_type, params, nodes, case)
                    } else {
                        measure::<select_cons_tres::ConsTres>(plugin_type, params, nodes, case)
                    };
                    println!(
                        "| {plugin_type} | {case:?} | {nodes} | {} | {} | {:.2} ({:.2}-{:.2}) |",
                        micros(row.native),
                        micros(row.wasm),
                        row.ratio[1],
                        row.ratio[0],
                        row.ratio[2],
                    );
                }
            }
        }
    }

    /// Calls the wasm build of a row alone for `length`, for a profiler;
    /// returns the number of calls.
    fn profile_wasm(
        plugin_type: &str,
        params: &str,
        nodes: u32,
        case: Case,
        length: Duration,
    ) -> usize {
        // With SELECT_LAYER, the row as timed there: under one wrapper.
        let (plugin, requests) = load_wasm_from(
            std::env::var_os("SELECT_WASM_DIR"),
            plugin_type,
            params,
            nodes,
            case,
            std::env::var_os("SELECT_LAYER").is_some(),
        );
        call_for(length, &requests, |r| {
            black_box(plugin.job_test(r).unwrap());
        })
    }

    /// Calls the native build of a row alone for `length`, for a
    /// profiler; returns the number of calls.
    fn profile_native<P: Native>(params: &str, nodes: u32, case: Case, length: Duration) -> usize {
        let (native, requests) = native_build::<P>(params, nodes, case);
        call_for(length, &requests, |r| {
            black_box(native.test(r));
        })
    }

    /// Asks the twin requests in turn for `length`; returns the calls made.
    fn call_for<R>(length: Duration, requests: &[R; 2], call: impl Fn(&R)) -> usize {
        let start = Instant::now();
        let mut calls = 0;
        while start.elapsed() < length {
            for request in requests {
                call(black_box(request));
            }
            calls += requests.len();
        }
        calls
    }

    struct Row {
        /// Median seconds per call natively.
        native: f64,
        /// Median seconds per call in wasm.
        wasm: f64,
        /// Quartiles of the batch ratios: lower, median, upper.
        ratio: [f64; 3],
    }

    fn measure<P: Native>(plugin_type: &str, params: &str, nodes: u32, case: Case) -> Row {
        let (plugin, requests) = load_wasm(plugin_type, params, nodes, case);
        let mut k = 0;
        let mut wasm_call = || {
            k ^= 1;
            black_box(plugin.job_test(black_box(&requests[k])).unwrap());
        };
        if let Some(dir) = std::env::var_os("SELECT_WASM_DIR_B") {
            let (other, other_requests) =
                load_wasm_from(Some(dir), plugin_type, params, nodes, case, false);
            let mut n = 0;
            let mut other_call = || {
                n ^= 1;
                black_box(other.job_test(black_box(&other_requests[n])).unwrap());
            };
            return alternate(&mut wasm_call, &mut other_call);
        }
        if std::env::var_os("SELECT_LAYER").is_some() {
            let (wrapped, wrapped_requests) = load_wasm_from(
                std::env::var_os("SELECT_WASM_DIR"),
                plugin_type,
                params,
                nodes,
                case,
                true,
            );
            let mut n = 0;
            let mut wrapped_call = || {
                n ^= 1;
                black_box(wrapped.job_test(black_box(&wrapped_requests[n])).unwrap());
            };
            return alternate(&mut wrapped_call, &mut wasm_call);
        }
        let (native, native_requests) = native_build::<P>(params, nodes, case);
        let mut n = 0;
        let mut native_call = || {
            n ^= 1;
            black_box(native.test(black_box(&native_requests[n])));
        };
        alternate(&mut wasm_call, &mut native_call)
    }

    /// Times batches of `wasm_call` and `native_call` in turn (see the
    /// module's comment).
    fn alternate(wasm_call: &mut impl FnMut(), native_call: &mut impl FnMut()) -> Row {
        let calls = batch_size(wasm_call).min(batch_size(native_call));
        let (mut wasm, mut native_t, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            let (w, nt) = if round % 2 == 0 {
                let w = timed(wasm_call, calls);
                (w, timed(native_call, calls))
            } else {
                let nt = timed(native_call, calls);
                (timed(wasm_call, calls), nt)
            };
            wasm.push(w / calls as f64);
            native_t.push(nt / calls as f64);
            ratio.push(w / nt);
        }
        Row {
            native: quartiles(native_t)[1],
            wasm: quartiles(wasm)[1],
            ratio: quartiles(ratio),
        }
    }

    /// Calls (even, for the twin requests) that take about [`BATCH`].
    fn batch_size(call: &mut impl FnMut()) -> usize {
        let per_call = timed(call, 10) / 10.0;
        ((BATCH.as_secs_f64() / per_call) as usize)
            .max(1)
            .next_multiple_of(2)
    }

    fn timed(call: &mut impl FnMut(), calls: usize) -> f64 {
        let start = Instant::now();
        for _ in 0..calls {
            call();
        }
        start.elapsed().as_secs_f64()
    }

    fn quartiles(mut v: Vec<f64>) -> [f64; 3] {
        v.sort_by(f64::total_cmp);
        let at = |q: usize| v[(v.len() - 1) * q / 4];
        [at(1), at(2), at(3)]
    }

    fn micros(seconds: f64) -> String {
        let us = seconds * 1e6;
        if us >= 1000.0 {
            format!("{:.2} ms", us / 1000.0)
        } else if us >= 100.0 {
            format!("{us:.0} µs")
        } else {
            format!("{us:.2} µs")
        }
    }
}
