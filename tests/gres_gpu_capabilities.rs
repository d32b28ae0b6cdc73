//! The `gpu` and `gpu-control` capabilities through the bundled gres/gpu:
//! a granted `--gpu-freq` reaches the GPU provider, an ungranted one does
//! not.

use std::path::Path;
use std::sync::Arc;

use slurm_wasm_host::capabilities::gpu::{GpuControlCall, InventoryGpu, RecordingGpu};
use slurm_wasm_host::fixtures::{self, bitmap};
use slurm_wasm_host::kinds::gres::{GresConfRecord, GresConfig, NodeHardware};
use slurm_wasm_host::types::GresCount;
use slurm_wasm_host::{
    Capability, Grants, GresPlugin, Host, HostOptions, PluginSettings, PluginSource, Services,
};

/// Two GPUs with memory clocks 1215 and 877 MHz; at 1215 the graphics
/// clocks are 1410, 1395 and 1095 MHz.
const INVENTORY: &str = r#"
cpus = 8
[[gpu]]
uuid = "GPU-aaaa"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 0
pci_bus_id = "00000000:07:00.0"
application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }
[[gpu.clocks]]
memory_mhz = 1215
graphics_mhz = [1410, 1395, 1095]
[[gpu.clocks]]
memory_mhz = 877
graphics_mhz = [705]
[[gpu]]
uuid = "GPU-bbbb"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 1
pci_bus_id = "00000000:0F:00.0"
application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }
[[gpu.clocks]]
memory_mhz = 1215
graphics_mhz = [1410, 1395, 1095]
[[gpu.clocks]]
memory_mhz = 877
graphics_mhz = [705]
"#;

/// gres/gpu loaded with `grants`, initialised with AutoDetect=nvml and
/// `Name=gpu File=/dev/nvidia[0-1]` loaded on a 2 x 4 node; the recorder
/// sees every `gpu-control` change that reaches the provider.
fn plugin(grants: Grants) -> (GresPlugin, Arc<RecordingGpu>) {
    let inventory = InventoryGpu::parse_str(INVENTORY, Path::new("gpus.toml")).unwrap();
    let recorder = Arc::new(RecordingGpu::new(Arc::new(inventory)));
    let host = Host::new(HostOptions {
        services: Services {
            gpu: recorder.clone(),
            ..Services::default()
        },
        ..slurm_wasm_bundled::host_options()
    })
    .unwrap();
    let plugin = GresPlugin::load(
        &host,
        &PluginSource::Bundled("gres/gpu".into()),
        PluginSettings {
            grants,
            ..PluginSettings::default()
        },
    )
    .unwrap();
    let mut cluster = fixtures::cluster_config();
    cluster.gres_types = vec!["gpu".into()];
    plugin
        .init(&GresConfig {
            cluster,
            auto_detect: Some("nvml".into()),
        })
        .unwrap();
    let record = GresConfRecord {
        origin: "gres.conf:1".into(),
        name: "gpu".into(),
        type_name: None,
        files: vec!["/dev/nvidia0".into(), "/dev/nvidia1".into()],
        count: 2,
        cores: None,
        links: None,
        flags: Vec::new(),
        unique_id: None,
    };
    let node = NodeHardware {
        name: "g1".into(),
        cpus: 8,
        sockets: 2,
        cores_per_socket: 4,
        threads_per_core: 1,
        configured: vec![GresCount {
            name: "gpu".into(),
            type_name: None,
            count: 2,
        }],
    };
    plugin.node_config_load(&[record], &node).unwrap();
    (plugin, recorder)
}

#[test]
fn granted_gpu_freq_reaches_the_provider_and_is_reset() {
    // gpu_common_parse_gpu_freq (gpu/common/gpu_common.c) and
    // _nvml_get_nearest_freqs (gpu/nvml/gpu_nvml.c): memory=high takes the
    // highest memory clock
    // (1215), high the highest graphics clock at it (1410); every usable
    // GPU is set, and step_hardware_fini resets the ones it set.
    let (plugin, recorder) = plugin(
        Grants::none()
            .with(Capability::Gpu)
            .with(Capability::GpuControl),
    );
    plugin
        .step_hardware_init(Some(&bitmap(2, [0, 1])), Some("gpu:high,memory=high"))
        .unwrap();
    plugin.step_hardware_fini().unwrap();
    let set = |index| GpuControlCall::Set {
        index,
        memory_mhz: 1215,
        graphics_mhz: 1410,
    };
    assert_eq!(
        recorder.calls(),
        [
            set(0),
            set(1),
            GpuControlCall::Reset { index: 0 },
            GpuControlCall::Reset { index: 1 }
        ]
    );
}

#[test]
fn ungranted_gpu_control_never_reaches_the_provider() {
    // Denied unless granted: with `gpu` alone the host refuses
    // set-application-clocks before the provider sees it.
    let (plugin, recorder) = plugin(Grants::none().with(Capability::Gpu));
    plugin
        .step_hardware_init(Some(&bitmap(2, [0, 1])), Some("gpu:high"))
        .unwrap();
    plugin.step_hardware_fini().unwrap();
    assert_eq!(recorder.calls(), []);
}
