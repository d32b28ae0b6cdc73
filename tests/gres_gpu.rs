//! gres/gpu and gres/mps through the host (src/plugins/gres): the bundled
//! components loaded into the `gres` slot and driven through the typed
//! `GresPlugin` handle, with GPUs served by the host's inventory provider
//! (`InventoryGpu`) wrapped in a `RecordingGpu` that records every
//! `gpu-control` change.
//!
//! * environment of whole, shared (task usable subset) and MPS allocations
//!   (Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env` and
//!   `gres_common_gpu_set_env`, src/plugins/gres/mps/gres_mps.c `_set_env`);
//! * `--gpu-freq` without the `gpu-control` grant: a warning naming the
//!   grant, the call succeeds and nothing reaches the provider; with the
//!   grant the resolved clocks reach it and `step-hardware-fini` resets them
//!   (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_step_hardware_init`, src/plugins/gpu/nvml/gpu_nvml.c
//!   `_set_freq`);
//! * `AutoDetect=nvml` through the `gpu` grant (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_node_config_load`,
//!   `_merge_system_gres_conf`).

use std::path::Path;
use std::sync::{Arc, Mutex};

use slurm_wasm_host::capabilities::gpu::{GpuControlCall, InventoryGpu, RecordingGpu};
use slurm_wasm_host::fixtures::{self, bitmap};
use slurm_wasm_host::kinds::gres::{
    EnvChange, EnvFlags, GresConfRecord, NodeAllocation, NodeHardware,
};
use slurm_wasm_host::types::{GresAllocation, GresCount, KeyValue};
use slurm_wasm_host::{
    Capability, Grants, GresPlugin, Host, HostOptions, PluginSettings, PluginSource, Services,
};

/// Two A100s: GPU 0 near CPUs 0-3, GPU 1 near CPUs 4-7, each supporting
/// memory clocks 1215 and 405 MHz.
const INVENTORY: &str = r#"
cpus = 8
[[gpu]]
uuid = "GPU-00000000-0000-0000-0000-000000000000"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 0
pci_bus_id = "00000000:07:00.0"
cpu_affinity = [0, 1, 2, 3]
application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }
[[gpu.clocks]]
memory_mhz = 1215
graphics_mhz = [1410, 1395, 1095, 210]
[[gpu.clocks]]
memory_mhz = 405
graphics_mhz = [405, 210]
[[gpu]]
uuid = "GPU-11111111-1111-1111-1111-111111111111"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 1
pci_bus_id = "00000000:0F:00.0"
cpu_affinity = [4, 5, 6, 7]
application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }
[[gpu.clocks]]
memory_mhz = 1215
graphics_mhz = [1410, 1395, 1095, 210]
[[gpu.clocks]]
memory_mhz = 405
graphics_mhz = [405, 210]
"#;

struct Node {
    host: Host,
    gpus: Arc<RecordingGpu>,
}

fn node() -> Node {
    let inventory = InventoryGpu::parse_str(INVENTORY, Path::new("gpus.toml")).expect("inventory");
    let gpus = Arc::new(RecordingGpu::new(Arc::new(inventory)));
    let host = Host::new(HostOptions {
        services: Services {
            gpu: gpus.clone(),
            ..Services::default()
        },
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    Node { host, gpus }
}

fn load(node: &Node, plugin: &str, grants: &[Capability], auto_detect: Option<&str>) -> GresPlugin {
    let settings = PluginSettings {
        grants: grants.iter().copied().collect::<Grants>(),
        ..PluginSettings::default()
    };
    let plugin = GresPlugin::load(&node.host, &PluginSource::Bundled(plugin.into()), settings)
        .expect("load");
    let mut config = fixtures::gres_config();
    config.cluster.gres_types = vec!["gpu".into(), "mps".into()];
    config.auto_detect = auto_detect.map(String::from);
    plugin.init(&config).expect("init");
    plugin
}

fn record(origin: &str, name: &str, files: &[&str], count: u64) -> GresConfRecord {
    GresConfRecord {
        origin: origin.into(),
        name: name.into(),
        type_name: None,
        files: files.iter().map(|f| f.to_string()).collect(),
        count,
        cores: None,
        links: None,
        flags: Vec::new(),
        unique_id: None,
    }
}

/// One socket of 8 cores with slurm.conf `Gres=` `configured`.
fn hardware(configured: &[(&str, u64)]) -> NodeHardware {
    NodeHardware {
        name: "n1".into(),
        cpus: 8,
        sockets: 1,
        cores_per_socket: 8,
        threads_per_core: 1,
        configured: configured
            .iter()
            .map(|(name, count)| GresCount {
                name: name.to_string(),
                type_name: None,
                count: *count,
            })
            .collect(),
    }
}

fn alloc(name: &str, len: u32, devices: &[u32], count: u64) -> GresAllocation {
    GresAllocation {
        name: name.into(),
        type_name: None,
        count,
        devices: Some(bitmap(len, devices.iter().copied())),
        per_device: Vec::new(),
    }
}

fn env(changes: &[EnvChange]) -> Vec<String> {
    changes
        .iter()
        .map(|c| match c {
            EnvChange::Set(KeyValue { key, value }) => format!("{key}={value}"),
            EnvChange::Unset(key) => format!("-{key}"),
        })
        .collect()
}

/// Runs `f`, returning its result and what plugins logged meanwhile on
/// this thread.
fn logged<T>(f: impl FnOnce() -> T) -> (T, Vec<String>) {
    use tracing_subscriber::layer::SubscriberExt;
    let lines = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(PluginLog(lines.clone()));
    let out = tracing::subscriber::with_default(subscriber, f);
    let lines = std::mem::take(&mut *lines.lock().unwrap());
    (out, lines)
}

struct PluginLog(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for PluginLog {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Message(Option<String>);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0 = Some(format!("{value:?}"));
                }
            }
        }
        if event.metadata().target() == "slurm_wasm::plugin" {
            let mut message = Message(None);
            event.record(&mut message);
            self.0.lock().unwrap().extend(message.0);
        }
    }
}

/// gres/gpu on `Name=gpu File=/dev/nvidia[0-3]`, no AutoDetect and no env flags (so all four
/// vendor variables, the default Slurm 22.05.8 src/common/gres.c `_parse_gres_config` gives).
fn four_gpus(node: &Node, grants: &[Capability]) -> GresPlugin {
    let gpu = load(node, "gres/gpu", grants, None);
    let files = [
        "/dev/nvidia0",
        "/dev/nvidia1",
        "/dev/nvidia2",
        "/dev/nvidia3",
    ];
    let result = gpu
        .node_config_load(
            &[record("gres.conf:1", "gpu", &files, 4)],
            &hardware(&[("gpu", 4)]),
        )
        .expect("node-config-load");
    assert_eq!(result.records.len(), 1);
    gpu
}

// Slurm 22.05.8 src/plugins/gres/common/gres_common.c `gres_common_gpu_set_env` and `common_gres_set_env`: a job
// on devices {1,2}, no ConstrainDevices, no env flags ⇒ the global list everywhere; a
// whole-node job lists all four.
#[test]
fn whole_and_partial_allocation_env() {
    let node = node();
    let gpu = four_gpus(&node, &[]);
    let out = gpu
        .job_set_env(Some(&alloc("gpu", 4, &[1, 2], 2)), EnvFlags::empty())
        .unwrap();
    assert_eq!(
        env(&out),
        [
            "SLURM_GPUS_ON_NODE=2",
            "SLURM_JOB_GPUS=1,2",
            "CUDA_VISIBLE_DEVICES=1,2",
            "ROCR_VISIBLE_DEVICES=1,2",
            "ZE_AFFINITY_MASK=1,2",
            "GPU_DEVICE_ORDINAL=1,2"
        ]
    );
    let out = gpu
        .step_set_env(Some(&alloc("gpu", 4, &[0, 1, 2, 3], 4)), EnvFlags::empty())
        .unwrap();
    assert_eq!(
        env(&out)[..3],
        [
            "SLURM_GPUS_ON_NODE=4",
            "SLURM_STEP_GPUS=0,1,2,3",
            "CUDA_VISIBLE_DEVICES=0,1,2,3"
        ]
    );
    assert_eq!(gpu.get_devices().unwrap().len(), 4);
}

// Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env` in task mode: a step on devices {1,2}
// whose task may use device 2 only.
#[test]
fn shared_step_task_env() {
    let node = node();
    let gpu = four_gpus(&node, &[]);
    let task = NodeAllocation {
        allocation: alloc("gpu", 4, &[1, 2], 2),
        usable: Some(bitmap(4, [2])),
    };
    let out = gpu.task_set_env(Some(&task), EnvFlags::empty()).unwrap();
    assert_eq!(
        env(&out)[..3],
        [
            "SLURM_GPUS_ON_NODE=2",
            "SLURM_STEP_GPUS=2",
            "CUDA_VISIBLE_DEVICES=2"
        ]
    );
}

// Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c `_set_env` (the setup of Slurm's python
// test_121_1, a later testsuite's): `Gres=gpu:2,mps:200`,
// `--gres=mps:100` on GPU 0 ⇒ CUDA_VISIBLE_DEVICES=0, SLURM_JOB_GPUS=0, percentage 100;
// on GPU 1 the real index (22.05).
#[test]
fn mps_allocation_env() {
    let node = node();
    let mps = load(&node, "gres/mps", &[], None);
    mps.node_config_load(
        &[record(
            "gres.conf:1",
            "gpu",
            &["/dev/nvidia0", "/dev/nvidia1"],
            2,
        )],
        &hardware(&[("gpu", 2), ("mps", 200)]),
    )
    .expect("node-config-load");
    let out = mps
        .job_set_env(Some(&alloc("mps", 2, &[0], 100)), EnvFlags::empty())
        .unwrap();
    assert_eq!(
        env(&out),
        [
            "SLURM_GPUS_ON_NODE=1",
            "SLURM_JOB_GPUS=0",
            "CUDA_VISIBLE_DEVICES=0",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"
        ]
    );
    let out = mps
        .step_set_env(Some(&alloc("mps", 2, &[1], 30)), EnvFlags::PROTECT_ENV)
        .unwrap();
    assert_eq!(
        env(&out),
        [
            "SLURM_GPUS_ON_NODE=1",
            "SLURM_STEP_GPUS=1",
            "CUDA_VISIBLE_DEVICES=1",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30"
        ]
    );
    // The stepd bytes carry the share table into a fresh instance.
    let bytes = mps.send_stepd().unwrap();
    let stepd = load(&node, "gres/mps", &[], None);
    stepd.recv_stepd(&bytes).unwrap();
    assert_eq!(
        env(&stepd
            .job_set_env(Some(&alloc("mps", 2, &[1], 25)), EnvFlags::empty())
            .unwrap())[3],
        "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25"
    );
    assert!(stepd.recv_stepd(b"SWGR").is_err());
}

// Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_step_hardware_init` (src/plugins/gpu/nvml/gpu_nvml.c
// `_set_freq` goes on when it cannot set clocks): without the `gpu-control` grant
// `--gpu-freq=high` is logged as denied and the step goes on; nothing reaches the provider.
#[test]
fn gpu_freq_without_gpu_control_grant_is_logged_and_not_fatal() {
    let node = node();
    let gpu = four_gpus(&node, &[Capability::Gpu]);
    let (result, logs) = logged(|| gpu.step_hardware_init(Some(&bitmap(4, [0])), Some("gpu:high")));
    result.expect("the step runs without gpu-control");
    assert!(
        logs.iter()
            .any(|l| l.contains("cannot apply --gpu-freq=high")
                && l.contains("the `gpu-control` capability is not granted")),
        "{logs:?}"
    );
    assert!(node.gpus.calls().is_empty());
    gpu.step_hardware_fini().unwrap();
    assert!(node.gpus.calls().is_empty());
}

// Slurm 22.05.8 src/plugins/gpu/nvml/gpu_nvml.c `_set_freq` and `_nvml_get_nearest_freqs` (through
// src/plugins/gpu/common/gpu_common.c `gpu_common_get_nearest_freq`): with the grant the
// resolved clocks reach the provider for each usable GPU and fini resets them. `high,memory=high` → 1215 MHz memory,
// 1410 graphics; `1300,memory=low` → 405 MHz memory, and 1300 is above the
// highest graphics clock valid there (405), so 405.
#[test]
fn gpu_freq_with_grant_reaches_the_provider() {
    let node = node();
    let gpu = four_gpus(&node, &[Capability::Gpu, Capability::GpuControl]);
    gpu.step_hardware_init(Some(&bitmap(4, [0, 1])), Some("gpu:high,memory=high"))
        .unwrap();
    assert_eq!(
        node.gpus.calls(),
        [
            GpuControlCall::Set {
                index: 0,
                memory_mhz: 1215,
                graphics_mhz: 1410
            },
            GpuControlCall::Set {
                index: 1,
                memory_mhz: 1215,
                graphics_mhz: 1410
            },
        ]
    );
    gpu.step_hardware_fini().unwrap();
    assert_eq!(
        node.gpus.calls()[2..],
        [
            GpuControlCall::Reset { index: 0 },
            GpuControlCall::Reset { index: 1 }
        ]
    );
    let gpu = four_gpus(&node, &[Capability::Gpu, Capability::GpuControl]);
    gpu.step_hardware_init(Some(&bitmap(4, [1])), Some("gpu:1300,memory=low"))
        .unwrap();
    assert_eq!(
        node.gpus.calls()[4..],
        [GpuControlCall::Set {
            index: 1,
            memory_mhz: 405,
            graphics_mhz: 405
        }]
    );
}

// Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_node_config_load` and `_merge_system_gres_conf`, and
// src/plugins/gres/common/gres_common.c `gres_common_gpu_set_env`: AutoDetect=nvml with the
// `gpu` grant finds both GPUs; no env flags ⇒ CUDA_VISIBLE_DEVICES only.
#[test]
fn autodetect_nvml_through_the_gpu_grant() {
    let node = node();
    let gpu = load(&node, "gres/gpu", &[Capability::Gpu], Some("nvml"));
    let result = gpu
        .node_config_load(&[], &hardware(&[("gpu", 2)]))
        .expect("node-config-load");
    let files: Vec<&str> = result.records.iter().map(|r| r.files[0].as_str()).collect();
    assert_eq!(files, ["/dev/nvidia0", "/dev/nvidia1"]);
    assert_eq!(
        result.records[0].type_name.as_deref(),
        Some("nvidia_a100-sxm4-40gb")
    );
    assert_eq!(
        result.records[1].cores.as_ref().map(fixtures::bits),
        Some(vec![4, 5, 6, 7])
    );
    let out = gpu
        .job_set_env(Some(&alloc("gpu", 2, &[1], 1)), EnvFlags::empty())
        .unwrap();
    assert_eq!(
        env(&out),
        [
            "SLURM_GPUS_ON_NODE=1",
            "SLURM_JOB_GPUS=1",
            "CUDA_VISIBLE_DEVICES=1"
        ]
    );
    // Without the grant: a clear warning, gres.conf alone.
    let denied = load(&node, "gres/gpu", &[], Some("nvml"));
    let result = denied
        .node_config_load(
            &[record("gres.conf:2", "gpu", &["/dev/nvidia0"], 1)],
            &hardware(&[("gpu", 1)]),
        )
        .expect("node-config-load");
    assert!(
        result.warnings[0].contains("the `gpu` capability is not granted"),
        "{:?}",
        result.warnings
    );
}

// Bad gres.conf input fails node-config-load with the line named.
#[test]
fn bad_gres_conf_names_the_line() {
    let node = node();
    let gpu = load(&node, "gres/gpu", &[], None);
    let err = gpu
        .node_config_load(
            &[record(
                "gres.conf:4",
                "gpu",
                &["/dev/nvidia0", "/dev/nvidia1"],
                3,
            )],
            &hardware(&[("gpu", 2)]),
        )
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("gres.conf:4: Count=3 does not match File="),
        "{err}"
    );
}
