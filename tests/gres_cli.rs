//! `slurm-wasm gres detect` and `slurm-wasm gres env`, with the bundled
//! gres/gpu and gres/mps.

use std::path::Path;
use std::process::Command;

fn slurm_wasm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args(args)
        .output()
        .expect("run slurm-wasm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Two A100s, one per half of an 8-CPU machine, joined by 12 NVLinks.
const INVENTORY: &str = r#"
cpus = 8
[[gpu]]
uuid = "GPU-aaaa"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 0
pci_bus_id = "00000000:07:00.0"
links = [0, 12]
cpu_affinity = [0, 1, 2, 3]
[[gpu]]
uuid = "GPU-bbbb"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 1
pci_bus_id = "00000000:0F:00.0"
links = [12, 0]
cpu_affinity = [4, 5, 6, 7]
"#;

/// The node of the environment examples below: four GPUs
/// `/dev/nvidia[0-3]`, no AutoDetect, no env flags, 400 MPS shares.
const SLURM_CONF: &str = "ClusterName=c\nGresTypes=gpu,mps\n\
    NodeName=g1 Sockets=2 CoresPerSocket=4 ThreadsPerCore=1 Gres=gpu:4,mps:400\n\
    PartitionName=p Nodes=ALL\n";
const GRES_CONF: &str = "Name=gpu File=/dev/nvidia[0-3]\nName=mps Count=400\n";

fn site(gres_conf: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("slurm.conf"), SLURM_CONF).unwrap();
    std::fs::write(dir.path().join("gres.conf"), gres_conf).unwrap();
    std::fs::write(dir.path().join("gpus.toml"), INVENTORY).unwrap();
    dir
}

fn path(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).display().to_string()
}

fn env(dir: &tempfile::TempDir, extra: &[&str]) -> Vec<String> {
    let gres = path(dir, "gres.conf");
    let mut args = vec!["gres", "env", "--gres-conf", &gres];
    args.extend_from_slice(extra);
    let (code, out, err) = slurm_wasm(&args);
    assert_eq!(code, 0, "{err}");
    out.lines().map(str::to_owned).collect()
}

#[test]
fn detect_says_plainly_when_there_is_no_gpu() {
    let dir = site(GRES_CONF);
    let empty = path(&dir, "empty.toml");
    std::fs::write(&empty, "cpus = 4\n").unwrap();
    let (code, out, _) = slurm_wasm(&["gres", "detect", "--inventory", &empty]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        format!("no GPU found (GPU inventory {empty} reports none)\n")
    );
}

#[test]
fn detect_without_nvml_says_why() {
    if Path::new("/dev/nvidiactl").exists() {
        eprintln!("skipped: this machine has an NVIDIA driver");
        return;
    }
    // Without an NVIDIA driver libnvidia-ml.so cannot be opened: exit 1 and
    // the reason, never a crash.
    let (code, out, err) = slurm_wasm(&["gres", "detect"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.starts_with("NVML not available: "), "{out}");
}

#[test]
fn bad_input_names_the_file_and_line() {
    let dir = site("Name=gpu File=/dev/nvidia[0-3]\nName=gpu Cores=0-8\n");
    let gres = path(&dir, "gres.conf");
    let (code, _, err) = slurm_wasm(&["gres", "env", "--gres-conf", &gres, "--devices", "0"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!(
            "slurm-wasm: {gres}:2: Cores: core 8 is outside node g1, which has 8 cores \
             (2 sockets x 4 cores); expected indices 0-7\n"
        )
    );
    let dir = site(GRES_CONF);
    let gres = path(&dir, "gres.conf");
    let (code, _, err) = slurm_wasm(&["gres", "env", "--gres-conf", &gres, "--devices", "4"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "slurm-wasm: --devices: node g1 has 4 GPUs (indices 0-3), not device 4\n"
    );
    let bad = path(&dir, "bad.toml");
    std::fs::write(&bad, "[[gpu]]\nuuid = \"x\"\n").unwrap();
    let (code, _, err) = slurm_wasm(&["gres", "detect", "--inventory", &bad]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(&format!("slurm-wasm: {bad}: TOML parse error")),
        "{err}"
    );
}

#[test]
fn detect_prints_gres_conf_lines_from_an_inventory() {
    // gres/gpu with AutoDetect=nvml (`_parse_gres_config`, common/gres.c;
    // `gres_p_node_config_load`, gres/gpu/gres_gpu.c): Type is
    // the model lower-cased with `_` for spaces, File /dev/nvidia<minor>,
    // Links with -1 at the device itself, the nvml env flag. The node shape
    // comes from slurm.conf: 2 sockets x 4 cores, CPU c on core c, and
    // Gres=gpu:2 as the inventory has.
    let dir = site(GRES_CONF);
    let inventory = path(&dir, "gpus.toml");
    let slurm = path(&dir, "detect.conf");
    std::fs::write(&slurm, SLURM_CONF.replace("gpu:4,mps:400", "gpu:2")).unwrap();
    let (code, out, err) = slurm_wasm(&[
        "gres",
        "detect",
        "--inventory",
        &inventory,
        "--slurm-conf",
        &slurm,
        "--node",
        "g1",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "Name=gpu Type=nvidia_a100-sxm4-40gb File=/dev/nvidia0 Cores=0-3 Links=-1,12 Flags=nvidia_gpu_env",
            "Name=gpu Type=nvidia_a100-sxm4-40gb File=/dev/nvidia1 Cores=4-7 Links=12,-1 Flags=nvidia_gpu_env",
        ]
    );
}

#[test]
fn env_matches_gres_common_gpu_set_env() {
    // gres_common_gpu_set_env (gres/common/gres_common.c) with
    // File=/dev/nvidia[0-3], no AutoDetect, no env flags: all four vendor
    // variables (the default flags of `_parse_gres_config`, common/gres.c).
    let dir = site(GRES_CONF);
    let vendors = |list: &str| {
        [
            "CUDA_VISIBLE_DEVICES",
            "ROCR_VISIBLE_DEVICES",
            "ZE_AFFINITY_MASK",
            "GPU_DEVICE_ORDINAL",
        ]
        .map(|v| format!("{v}={list}"))
    };
    // Job allocated devices {1,2}, no ConstrainDevices.
    let mut job = vec![
        "SLURM_GPUS_ON_NODE=2".to_owned(),
        "SLURM_JOB_GPUS=1,2".into(),
    ];
    job.extend(vendors("1,2"));
    assert_eq!(env(&dir, &["--devices", "1,2"]), job);
    // Step on {1,2}, task bound to device 2 only.
    let mut task = vec![
        "SLURM_GPUS_ON_NODE=2".to_owned(),
        "SLURM_STEP_GPUS=2".into(),
    ];
    task.extend(vendors("2"));
    assert_eq!(env(&dir, &["--devices", "1,2", "--task", "2"]), task);
    // Prolog/Epilog: global ids, no SLURM_GPUS_ON_NODE.
    let mut prolog: Vec<String> = vendors("1,2").into();
    prolog.push("SLURM_JOB_GPUS=1,2".into());
    assert_eq!(env(&dir, &["--devices", "1,2", "--prolog"]), prolog);
    // MPS: 100 of GPU 0's 100 shares (400 spread over 4 GPUs), test_121_1.
    assert_eq!(
        env(&dir, &["--devices", "0", "--mps", "100"]),
        [
            "SLURM_GPUS_ON_NODE=1",
            "SLURM_JOB_GPUS=0",
            "CUDA_VISIBLE_DEVICES=0",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"
        ]
    );
}
