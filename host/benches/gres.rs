//! gres/gpu on a 16-GPU node (BENCHMARKS.md, "gres/gpu: environment and
//! node configuration"): the bundled component through the host's typed
//! [`GresPlugin`] vs the same plugin crate built natively ([`gres_gpu::Gpu`]),
//! with the same inputs.
//!
//! The node: 2 sockets x 32 cores x 2 threads (128 CPUs), slurm.conf
//! `Gres=gpu:a100:16`, and a gres.conf of one line per GPU,
//! `Name=gpu Type=a100 File=/dev/nvidia<g> Cores=<its socket> Links=<row g>`:
//! GPUs 0-7 on socket 0 (cores 0-31), 8-15 on socket 1 (cores 32-63), every
//! GPU linked to the others of its socket by 12 NVLinks and to the rest by
//! 4 (-1 for itself). Records arrive expanded, as the host's gres.conf
//! reader hands them over.
//!
//! * `node_config_load`: validating and merging those 16 records (no
//!   `AutoDetect`, so no `gpu` capability call);
//! * `job_set_env`: the batch-script environment of a job holding 8 GPUs,
//!   0-3 and 8-11 (`SLURM_GPUS_ON_NODE`, `SLURM_JOB_GPUS` and the vendor
//!   variables).
//!
//! Run: `cargo bench --bench gres`

use std::hint::black_box;

use divan::Bencher;
use slurm_wasm_host::{GresPlugin, Host, PluginSettings, PluginSource};

fn main() {
    divan::main();
}

const GPUS: u32 = 16;
const SOCKETS: u16 = 2;
const CORES_PER_SOCKET: u16 = 32;
/// The job's GPUs: four on each socket.
const ALLOCATED: [u32; 8] = [0, 1, 2, 3, 8, 9, 10, 11];

/// `Links=` of GPU `g`: -1 for itself, 12 to GPUs of its socket, 4 to the
/// others.
fn links(g: u32) -> String {
    (0..GPUS)
        .map(|o| match o {
            o if o == g => "-1",
            o if o / 8 == g / 8 => "12",
            _ => "4",
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The inputs in one set of bindings: the `init` configuration, the 16
/// gres.conf records, the node, and the job's allocation on the node.
macro_rules! inputs {
    ($fx:path, $kinds:path) => {{
        use $fx as fx;
        use $kinds as k;
        let bitmap = |len: u32, bits: &mut dyn Iterator<Item = u32>| {
            let mut words = vec![0u64; (len as usize).div_ceil(64)];
            for b in bits {
                words[(b / 64) as usize] |= 1 << (b % 64);
            }
            k::Bitmap { len, words }
        };
        let config = k::GresConfig {
            cluster: fx::cluster_config(),
            auto_detect: None,
        };
        let cores = u32::from(SOCKETS * CORES_PER_SOCKET);
        let records: Vec<k::GresConfRecord> = (0..GPUS)
            .map(|g| {
                let first = (g / 8) * u32::from(CORES_PER_SOCKET);
                k::GresConfRecord {
                    origin: format!("gres.conf:{}", g + 1),
                    name: "gpu".into(),
                    type_name: Some("a100".into()),
                    files: vec![format!("/dev/nvidia{g}")],
                    count: 1,
                    cores: Some(bitmap(
                        cores,
                        &mut (first..first + u32::from(CORES_PER_SOCKET)),
                    )),
                    links: Some(links(g)),
                    flags: Vec::new(),
                    unique_id: None,
                }
            })
            .collect();
        let node = k::NodeHardware {
            name: "gpu01".into(),
            cpus: SOCKETS * CORES_PER_SOCKET * 2,
            sockets: SOCKETS,
            cores_per_socket: CORES_PER_SOCKET,
            threads_per_core: 2,
            configured: vec![k::GresCount {
                name: "gpu".into(),
                type_name: Some("a100".into()),
                count: u64::from(GPUS),
            }],
        };
        let allocation = k::GresAllocation {
            name: "gpu".into(),
            type_name: Some("a100".into()),
            count: ALLOCATED.len() as u64,
            devices: Some(bitmap(GPUS, &mut ALLOCATED.iter().copied())),
            per_device: Vec::new(),
        };
        (config, records, node, allocation)
    }};
}

mod host_kinds {
    pub use slurm_wasm_host::kinds::gres::{GresConfRecord, GresConfig, NodeHardware};
    pub use slurm_wasm_host::types::{Bitmap, GresAllocation, GresCount};
}

mod sdk_kinds {
    pub use slurm_wasm_sdk::gres::{GresConfRecord, GresConfig, NodeHardware};
    pub use slurm_wasm_sdk::types::{Bitmap, GresAllocation, GresCount};
}

/// The environment Slurm 22.05 gives a batch script holding GPUs 0-3 and
/// 8-11 of a node without device constraint (Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`, first row of the
/// table: global indices in every variable).
const EXPECTED_ENV: [&str; 6] = [
    "SLURM_GPUS_ON_NODE=8",
    "SLURM_JOB_GPUS=0,1,2,3,8,9,10,11",
    "CUDA_VISIBLE_DEVICES=0,1,2,3,8,9,10,11",
    "ROCR_VISIBLE_DEVICES=0,1,2,3,8,9,10,11",
    "ZE_AFFINITY_MASK=0,1,2,3,8,9,10,11",
    "GPU_DEVICE_ORDINAL=0,1,2,3,8,9,10,11",
];

/// The bundled gres/gpu after `init` and `node-config-load`.
fn wasm_plugin() -> (
    GresPlugin,
    Vec<slurm_wasm_host::kinds::gres::GresConfRecord>,
    slurm_wasm_host::kinds::gres::NodeHardware,
    slurm_wasm_host::types::GresAllocation,
) {
    let (config, records, node, allocation) = inputs!(slurm_wasm_host::fixtures, host_kinds);
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let plugin = GresPlugin::load(
        &host,
        &PluginSource::Bundled("gres/gpu".into()),
        PluginSettings::default(),
    )
    .unwrap();
    plugin.init(&config).unwrap();
    let loaded = plugin.node_config_load(&records, &node).unwrap();
    assert_eq!(loaded.records.len(), GPUS as usize, "{loaded:?}");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    (plugin, records, node, allocation)
}

/// gres/gpu built natively after `init` and `node_config_load`.
fn native_plugin() -> (
    gres_gpu::Gpu,
    Vec<slurm_wasm_sdk::gres::GresConfRecord>,
    slurm_wasm_sdk::gres::NodeHardware,
    slurm_wasm_sdk::types::GresAllocation,
) {
    let (config, records, node, allocation) = inputs!(slurm_wasm_sdk::testkit::fixtures, sdk_kinds);
    let settings = gres_common::Settings::from_config(gres_gpu::NAME, &config).unwrap();
    let mut gpu = gres_gpu::Gpu::new(settings);
    let loaded = gpu.node_config_load(&records, &node).unwrap();
    assert_eq!(loaded.records.len(), GPUS as usize, "{loaded:?}");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    (gpu, records, node, allocation)
}

mod job_set_env {
    use super::*;
    use slurm_wasm_host::kinds::gres::{EnvChange, EnvFlags};

    #[divan::bench]
    fn wasm(b: Bencher<'_, '_>) {
        let (plugin, _, _, allocation) = wasm_plugin();
        let env: Vec<String> = plugin
            .job_set_env(Some(&allocation), EnvFlags::empty())
            .unwrap()
            .into_iter()
            .map(|c| match c {
                EnvChange::Set(kv) => format!("{}={}", kv.key, kv.value),
                EnvChange::Unset(key) => format!("-{key}"),
            })
            .collect();
        assert_eq!(env, EXPECTED_ENV);
        b.bench_local(|| {
            plugin
                .job_set_env(Some(black_box(&allocation)), EnvFlags::empty())
                .unwrap()
        });
    }

    #[divan::bench]
    fn native(b: Bencher<'_, '_>) {
        use gres_common::env::Scope;
        use slurm_wasm_sdk::gres::{EnvChange, EnvFlags};
        let (gpu, _, _, allocation) = native_plugin();
        let env: Vec<String> = gpu
            .set_env(Scope::Job, Some(&allocation), None, EnvFlags::empty())
            .unwrap()
            .into_iter()
            .map(|c| match c {
                EnvChange::Set(kv) => format!("{}={}", kv.key, kv.value),
                EnvChange::Unset(key) => format!("-{key}"),
            })
            .collect();
        assert_eq!(env, EXPECTED_ENV);
        b.bench_local(|| {
            gpu.set_env(
                Scope::Job,
                Some(black_box(&allocation)),
                None,
                EnvFlags::empty(),
            )
            .unwrap()
        });
    }
}

mod node_config_load {
    use super::*;

    #[divan::bench]
    fn wasm(b: Bencher<'_, '_>) {
        let (plugin, records, node, _) = wasm_plugin();
        b.bench_local(|| {
            plugin
                .node_config_load(black_box(&records), black_box(&node))
                .unwrap()
        });
    }

    #[divan::bench]
    fn native(b: Bencher<'_, '_>) {
        let (mut gpu, records, node, _) = native_plugin();
        b.bench_local(|| {
            gpu.node_config_load(black_box(&records), black_box(&node))
                .unwrap()
        });
    }
}
