use slurm_wasm_sdk::gres::gpu::GpuDevice;
use slurm_wasm_sdk::gres::{EnvFlags, GresConfRecord, NodeHardware};
use slurm_wasm_sdk::host::Level;
use slurm_wasm_sdk::testkit::{self, fixtures};
use slurm_wasm_sdk::types::GresAllocation;
use slurm_wasm_sdk::Bitmap;

use gres_common::env::Scope;
use gres_common::settings::AutoDetect;
use gres_common::testkit::{env_lines, job_with_gres};
use gres_common::Settings;

use super::*;

/// A `gpu` record with one device per file.
fn record(origin: &str, files: &[&str]) -> GresConfRecord {
    gres_common::testkit::record(origin, "gpu", files, files.len() as u64)
}

/// 2 sockets × 4 cores × 2 threads with slurm.conf `Gres=gpu:<gpus>`.
fn node(gpus: u64) -> NodeHardware {
    gres_common::testkit::node(&[("gpu", gpus)])
}

/// A node with gres.conf `Name=gpu File=/dev/nvidia[0-3]`, no AutoDetect and no
/// env flags, so all four vendor variables are set (the default Slurm 22.05.8
/// src/common/gres.c `_parse_gres_config` gives a `gpu` line without Flags).
fn four_gpus(settings: Settings) -> Gpu {
    testkit::reset();
    let mut gpu = Gpu::new(settings);
    gpu.node_config_load(
        &[record(
            "gres.conf:1",
            &[
                "/dev/nvidia0",
                "/dev/nvidia1",
                "/dev/nvidia2",
                "/dev/nvidia3",
            ],
        )],
        &node(4),
    )
    .unwrap();
    gpu
}

fn alloc(bits: &[usize]) -> GresAllocation {
    GresAllocation {
        name: "gpu".into(),
        type_name: None,
        count: bits.len() as u64,
        devices: Some(Bitmap::from_bits(4, bits.iter().copied()).into()),
        per_device: Vec::new(),
    }
}

fn detected(index: u32, name: &str, minor: u32, cpus: &[usize]) -> GpuDevice {
    GpuDevice {
        index,
        uuid: format!("GPU-{index:08x}"),
        name: name.into(),
        memory_mb: 16384,
        minor_number: minor,
        pci_bus_id: format!("00000000:{:02x}:00.0", index + 1),
        links: Vec::new(),
        cpu_affinity: Bitmap::from_bits(16, cpus.iter().copied()).into(),
    }
}

/// A fresh mock host whose `gpu` capability reports `gpus`.
fn detect(gpus: Vec<GpuDevice>) {
    testkit::reset();
    testkit::with(|h| h.gpus = Ok(gpus));
}

// Slurm 22.05.8 src/plugins/gres/common/gres_common.c `gres_common_gpu_set_env` and `common_gres_set_env`: a job
// on devices {1,2}, no ConstrainDevices, no env flags ⇒ global ids in every list.
#[test]
fn job_env_without_constraint_lists_global_ids_everywhere() {
    let gpu = four_gpus(Settings::plain("gpu"));
    let out = gpu
        .set_env(Scope::Job, Some(&alloc(&[1, 2])), None, EnvFlags::empty())
        .unwrap();
    assert_eq!(
        env_lines(&out),
        [
            "SLURM_GPUS_ON_NODE=2",
            "SLURM_JOB_GPUS=1,2",
            "CUDA_VISIBLE_DEVICES=1,2",
            "ROCR_VISIBLE_DEVICES=1,2",
            "ZE_AFFINITY_MASK=1,2",
            "GPU_DEVICE_ORDINAL=1,2",
        ]
    );
}

// Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`: with task/cgroup and
// ConstrainDevices=yes (src/common/gres.c `gres_use_local_device_index`) the vendor
// variables get local ids, SLURM_JOB_GPUS keeps the global ones.
#[test]
fn job_env_under_device_constraint_uses_local_ids() {
    let mut config = slurm_wasm_sdk::gres::GresConfig {
        cluster: fixtures::cluster_config(),
        auto_detect: None,
    };
    config.cluster.raw = vec![
        types::KeyValue {
            key: "TaskPlugin".into(),
            value: "task/cgroup,task/affinity".into(),
        },
        types::KeyValue {
            key: "ConstrainDevices".into(),
            value: "yes".into(),
        },
    ];
    let settings = Settings::from_config("gpu", &config).unwrap();
    assert!(settings.use_local);
    let gpu = four_gpus(settings);
    let out = gpu
        .set_env(Scope::Job, Some(&alloc(&[1, 2])), None, EnvFlags::empty())
        .unwrap();
    let out = env_lines(&out);
    assert!(out.contains(&"SLURM_JOB_GPUS=1,2".to_string()), "{out:?}");
    assert!(
        out.contains(&"CUDA_VISIBLE_DEVICES=0,1".to_string()),
        "{out:?}"
    );
    assert!(
        out.contains(&"GPU_DEVICE_ORDINAL=0,1".to_string()),
        "{out:?}"
    );
}

// Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env` in task mode: a step on devices
// {1,2}, the task's usable set {2}, no constraint ⇒ only device 2 listed.
#[test]
fn task_env_keeps_only_usable_devices() {
    let gpu = four_gpus(Settings::plain("gpu"));
    let usable: types::Bitmap = Bitmap::from_bits(4, [2]).into();
    let out = gpu
        .set_env(
            Scope::Task,
            Some(&alloc(&[1, 2])),
            Some(&usable),
            EnvFlags::VERBOSE,
        )
        .unwrap();
    let out = env_lines(&out);
    assert_eq!(out[0], "SLURM_GPUS_ON_NODE=2");
    assert_eq!(out[1], "SLURM_STEP_GPUS=2");
    assert_eq!(out[2], "CUDA_VISIBLE_DEVICES=2");
    // --gpu-bind=verbose line, masks as hex (Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`).
    let logs = testkit::with(|h| h.logs.clone());
    assert!(
        logs.contains(&(
            Level::Info,
            "gpu-bind: usable_gres=0x4; bit_alloc=0x6; local_inx=0; global_list=2; local_list=2"
                .to_string()
        )),
        "{logs:?}"
    );
}

// Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`: no allocation ⇒ unset, PROTECT_ENV suppresses the unsets.
#[test]
fn no_allocation_unsets_unless_protected() {
    let gpu = four_gpus(Settings::plain("gpu"));
    let out = env_lines(
        &gpu.set_env(Scope::Step, None, None, EnvFlags::empty())
            .unwrap(),
    );
    assert_eq!(
        out,
        [
            "-SLURM_GPUS_ON_NODE",
            "-SLURM_STEP_GPUS",
            "-CUDA_VISIBLE_DEVICES",
            "-ROCR_VISIBLE_DEVICES",
            "-ZE_AFFINITY_MASK",
            "-GPU_DEVICE_ORDINAL"
        ]
    );
    assert!(gpu
        .set_env(Scope::Step, None, None, EnvFlags::PROTECT_ENV)
        .unwrap()
        .is_empty());
}

// Slurm 22.05.8 src/plugins/gres/common/gres_common.c `gres_common_epilog_set_env`: the job's prolog/epilog
// variables per node, always global ids.
#[test]
fn epilog_env_per_node() {
    let gpu = four_gpus(Settings::plain("gpu"));
    // Node 0 holds GPUs 1 and 2, node 1 none.
    let job = job_with_gres(7, vec![vec![alloc(&[1, 2])], Vec::new()]);
    let epilog = gpu.epilog_build_env(&job).unwrap().unwrap();
    assert_eq!(
        env_lines(&epilog.set_env(0).unwrap()),
        [
            "CUDA_VISIBLE_DEVICES=1,2",
            "ROCR_VISIBLE_DEVICES=1,2",
            "ZE_AFFINITY_MASK=1,2",
            "GPU_DEVICE_ORDINAL=1,2",
            "SLURM_JOB_GPUS=1,2"
        ]
    );
    assert!(epilog.set_env(1).unwrap().is_empty());
    let e = epilog.set_env(2).unwrap_err();
    assert_eq!(
        e.message,
        "gres/gpu: epilog node index 2 out of range (the job has 2 nodes)"
    );
    assert!(gpu.epilog_build_env(&fixtures::job(8)).unwrap().is_none());
}

fn autodetect_settings() -> Settings {
    let mut s = Settings::plain("gpu");
    s.auto_detect = AutoDetect::Nvml;
    s
}

// Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `_merge_system_gres_conf` and src/plugins/gres/common/gres_common.c
// `gres_common_gpu_set_env`: with AutoDetect=nvml and no Flags the detected GPUs keep the
// NVML env flag, so CUDA_VISIBLE_DEVICES is the only vendor variable.
#[test]
fn autodetect_nvml_sets_only_cuda() {
    detect(vec![
        detected(0, "Tesla V100-PCIE-16GB", 0, &[0, 1, 2, 3]),
        detected(1, "Tesla V100-PCIE-16GB", 1, &[4, 5, 6, 7]),
    ]);
    let mut gpu = Gpu::new(autodetect_settings());
    let result = gpu.node_config_load(&[], &node(2)).unwrap();
    assert_eq!(result.records.len(), 2);
    assert_eq!(
        result.records[0].type_name.as_deref(),
        Some("tesla_v100-pcie-16gb")
    );
    assert_eq!(result.records[1].files, ["/dev/nvidia1"]);
    assert_eq!(result.records[0].flags, ["nvidia_gpu_env"]);
    let out = env_lines(
        &gpu.set_env(Scope::Job, Some(&alloc(&[0, 1])), None, EnvFlags::empty())
            .unwrap(),
    );
    assert_eq!(
        out,
        [
            "SLURM_GPUS_ON_NODE=2",
            "SLURM_JOB_GPUS=0,1",
            "CUDA_VISIBLE_DEVICES=0,1"
        ]
    );
}

// Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `_merge_system_gres_conf` (`_normalize_sys_gres_types`,
// `_match_gres`): Type matched as a case-insensitive substring of the detected
// name; configured singles matched by Type and File; final order by File.
#[test]
fn merge_assigns_types_by_substring_and_orders_by_file() {
    detect(vec![
        detected(0, "NVIDIA A100-SXM4-40GB", 10, &[]),
        detected(1, "Tesla K80", 2, &[]),
    ]);
    let mut k80 = record("gres.conf:1", &["/dev/nvidia2"]);
    k80.type_name = Some("K80".into());
    let mut a100 = record("gres.conf:2", &["/dev/nvidia10"]);
    a100.type_name = Some("a100".into());
    let mut gpu = Gpu::new(autodetect_settings());
    let result = gpu.node_config_load(&[a100, k80], &node(2)).unwrap();
    let got: Vec<(String, String, String)> = result
        .records
        .iter()
        .map(|r| {
            (
                r.origin.clone(),
                r.type_name.clone().unwrap(),
                r.files[0].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "gres.conf:1".to_string(),
                "K80".to_string(),
                "/dev/nvidia2".to_string()
            ),
            (
                "gres.conf:2".to_string(),
                "a100".to_string(),
                "/dev/nvidia10".to_string()
            ),
        ]
    );
    assert!(result.warnings.is_empty(), "{:?}", result.warnings);
    assert_eq!(gpu.devices[1].dev_num, 10);
    assert_eq!(gpu.devices[1].major, 195);
}

// Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `_merge_system_gres_conf` (`_validate_cpus_links`): Cores
// mismatch between configured and detected ⇒ error, device dropped; the leftover
// detected GPU is ignored with Slurm's warning.
#[test]
fn merge_drops_a_device_with_mismatching_cores() {
    detect(vec![
        detected(0, "Tesla T4", 0, &[0, 1, 2, 3]),
        detected(1, "Tesla T4", 1, &[4, 5, 6, 7]),
        detected(2, "Tesla T4", 2, &[4, 5, 6, 7]),
    ]);
    let mut a = record("gres.conf:1", &["/dev/nvidia0"]);
    a.cores = Some(Bitmap::from_bits(8, [4, 5, 6, 7]).into());
    let b = record("gres.conf:2", &["/dev/nvidia1"]);
    let mut gpu = Gpu::new(autodetect_settings());
    let result = gpu.node_config_load(&[a, b], &node(1)).unwrap();
    assert_eq!(result.records.len(), 1);
    assert_eq!(result.records[0].files, ["/dev/nvidia1"]);
    assert_eq!(
        result.warnings[0],
        "error: gres.conf:1: Cores mismatch between configured and detected GPU /dev/nvidia0: configured 4-7, detected 0-3; device dropped"
    );
    assert_eq!(
        result.warnings[1],
        "WARNING: The following autodetected GPUs are being ignored:"
    );
    assert!(
        result.warnings[2].contains("File:/dev/nvidia2"),
        "{:?}",
        result.warnings
    );
}

// AutoDetect without the `gpu` grant: warning, gres.conf used alone.
#[test]
fn autodetect_without_grant_warns_and_uses_gres_conf() {
    testkit::reset();
    let mut gpu = Gpu::new(autodetect_settings());
    let result = gpu
        .node_config_load(&[record("gres.conf:1", &["/dev/nvidia0"])], &node(1))
        .unwrap();
    assert_eq!(result.records.len(), 1);
    assert!(
        result.warnings[0].contains("the `gpu` capability is not granted"),
        "{:?}",
        result.warnings
    );
    // AutoDetect on: the detector's env flag even without detection. Slurm
    // 22.05.8 differs here: a config-only GPU keeps the default of all four
    // vendors that src/common/gres.c `_parse_gres_config` gives it
    // (src/plugins/gres/gpu/gres_gpu.c `_merge_system_gres_conf`).
    assert_eq!(result.records[0].flags, ["nvidia_gpu_env"]);
}

// Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_send_stepd`/`gres_p_recv_stepd`: stepd bytes round trip; malformed bytes are refused.
#[test]
fn stepd_round_trip_and_refusal() {
    let gpu = four_gpus(Settings::plain("gpu"));
    let bytes = gpu.send_stepd();
    let mut stepd = Gpu::new(Settings::plain("gpu"));
    stepd.recv_stepd(&bytes).unwrap();
    assert_eq!(stepd.devices.len(), 4);
    assert_eq!(stepd.devices[3].path, "/dev/nvidia3");
    assert_eq!(stepd.devices[3].dev_num, 3);
    assert_eq!(stepd.vendors, gpu.vendors);
    let e = stepd.recv_stepd(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(
        e.message.starts_with("stepd data truncated"),
        "{}",
        e.message
    );
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(
        stepd.recv_stepd(&longer).unwrap_err().message,
        "stepd data has 1 trailing bytes after the shared table"
    );
    let mut bad = bytes.clone();
    bad[4] = 9;
    assert_eq!(
        stepd.recv_stepd(&bad).unwrap_err().message,
        "stepd data has format version 9, expected 1"
    );
    assert!(stepd.recv_stepd(b"nope").is_err());
}

fn clock_table() {
    testkit::with(|h| {
        h.gpus = Ok(Vec::new());
        for index in 0..4 {
            h.gpu_clocks
                .push((index, 5001, vec![1530, 1300, 1000, 135]));
            h.gpu_clocks.push((index, 877, vec![1380, 900]));
        }
    });
}

// Slurm 22.05.8 src/plugins/gpu/nvml/gpu_nvml.c `_set_freq` and `_nvml_get_nearest_freqs`:
// memory resolved first, then graphics at that memory clock (each through
// src/plugins/gpu/common/gpu_common.c `gpu_common_get_nearest_freq`); each usable GPU
// set; fini resets the touched GPUs (`gpu_p_step_hardware_fini`, `_reset_freq`).
#[test]
fn gpu_freq_sets_and_resets_each_usable_gpu() {
    let mut gpu = four_gpus(Settings::plain("gpu"));
    clock_table();
    testkit::with(|h| h.gpu_control_denied = None);
    let usable: types::Bitmap = Bitmap::from_bits(4, [1, 3]).into();
    gpu.step_hardware_init(Some(&usable), Some("gpu:1100,memory=low,verbose"))
        .unwrap();
    let set = testkit::with(|h| h.clocks_set.clone());
    let got: Vec<(u32, u32, u32)> = set
        .iter()
        .map(|(i, c)| (*i, c.memory_mhz, c.graphics_mhz))
        .collect();
    // memory=low → 877 (last); 1100 at 877 MHz → rounded up to 1380.
    assert_eq!(got, [(1, 877, 1380), (3, 877, 1380)]);
    let logs = testkit::with(|h| h.logs.clone());
    assert!(logs.contains(&(
        Level::Info,
        "GpuFreq=memory_freq:877,graphics_freq:1380".to_string()
    )));
    gpu.step_hardware_fini().unwrap();
    assert_eq!(testkit::with(|h| h.clocks_reset.clone()), [1, 3]);
}

// Slurm 22.05.8 src/plugins/gpu/common/gpu_common.c `gpu_common_parse_gpu_freq`: GpuFreqDef
// (22.05 default high,memory=high, src/common/read_config.c) fills unset clocks.
#[test]
fn gpu_freq_default_fills_memory() {
    let mut gpu = four_gpus(Settings::plain("gpu"));
    clock_table();
    testkit::with(|h| h.gpu_control_denied = None);
    let usable: types::Bitmap = Bitmap::from_bits(4, [0]).into();
    gpu.step_hardware_init(Some(&usable), Some("gpu:medium"))
        .unwrap();
    let set = testkit::with(|h| h.clocks_set.clone());
    // memory=high → 5001; medium of [1530,1300,1000,135] → index 1 = 1300.
    assert_eq!(set[0].0, 0);
    assert_eq!((set[0].1.memory_mhz, set[0].1.graphics_mhz), (5001, 1300));
}

// Without the `gpu-control` grant the step still runs: a warning names the
// missing grant and the call succeeds.
#[test]
fn gpu_freq_without_gpu_control_grant_warns_and_succeeds() {
    let mut gpu = four_gpus(Settings::plain("gpu"));
    clock_table();
    let usable: types::Bitmap = Bitmap::from_bits(4, [0, 1]).into();
    gpu.step_hardware_init(Some(&usable), Some("gpu:high"))
        .unwrap();
    let logs = testkit::with(|h| h.logs.clone());
    assert!(
        logs.iter()
            .any(|(l, m)| *l == Level::Warn
                && m.contains("the `gpu-control` capability is not granted")),
        "{logs:?}"
    );
    assert!(testkit::with(|h| h.clocks_set.is_empty()));
    gpu.step_hardware_fini().unwrap();
    assert!(testkit::with(|h| h.clocks_reset.is_empty()));
    // No `gpu:` part: nothing is touched, nothing logged.
    testkit::with(|h| h.logs.clear());
    gpu.step_hardware_init(Some(&usable), Some("cpu:low"))
        .unwrap();
    assert!(testkit::with(|h| h.logs.is_empty()));
}

// No gres.conf line for gpu: slurmd takes slurm.conf's `Gres=gpu:2`, without
// device files, so the environment cannot list devices.
#[test]
fn slurm_conf_count_without_gres_conf() {
    testkit::reset();
    let mut gpu = Gpu::new(Settings::plain("gpu"));
    let result = gpu.node_config_load(&[], &node(2)).unwrap();
    assert_eq!(result.records.len(), 1);
    assert_eq!(result.records[0].count, 2);
    assert_eq!(result.records[0].origin, "slurm.conf Gres= of node n1");
    assert!(gpu.devices.is_empty());
    let out = env_lines(
        &gpu.set_env(Scope::Job, Some(&alloc(&[0, 1])), None, EnvFlags::empty())
            .unwrap(),
    );
    assert_eq!(out[..2], ["SLURM_GPUS_ON_NODE=2", "-SLURM_JOB_GPUS"]);
}

// The export layer (the SDK's `gres::Export`, as the host calls it): gres/gpu's
// hardware hooks need the state (`called before init`), and `task_set_env`
// hands the task's usable set through (Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`
// in task mode, as `task_env_keeps_only_usable_devices` above).
#[test]
fn export_task_env_and_hardware_need_init() {
    use crate::plugin::GresGpu;
    use slurm_wasm_sdk::gres::{GresConfig, GresGuest, NodeAllocation};

    testkit::reset();
    assert_eq!(
        GresGpu::step_hardware_init(None, Some("gpu:high".into()))
            .unwrap_err()
            .message,
        "gres/gpu: called before init"
    );
    GresGpu::init(GresConfig {
        cluster: fixtures::cluster_config(),
        auto_detect: None,
    })
    .unwrap();
    GresGpu::node_config_load(
        vec![record(
            "gres.conf:1",
            &[
                "/dev/nvidia0",
                "/dev/nvidia1",
                "/dev/nvidia2",
                "/dev/nvidia3",
            ],
        )],
        node(4),
    )
    .unwrap();
    let task = NodeAllocation {
        allocation: alloc(&[1, 2]),
        usable: Some(Bitmap::from_bits(4, [2]).into()),
    };
    let out = env_lines(&GresGpu::task_set_env(Some(task), EnvFlags::empty()).unwrap());
    assert_eq!(
        out[..3],
        [
            "SLURM_GPUS_ON_NODE=2",
            "SLURM_STEP_GPUS=2",
            "CUDA_VISIBLE_DEVICES=2"
        ]
    );
    // No usable GPU: nothing to set, and no error once initialised.
    GresGpu::step_hardware_init(None, Some("gpu:high".into())).unwrap();
    GresGpu::fini().unwrap();
}
