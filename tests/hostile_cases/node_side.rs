//! The node side (issue 26, classes 4, 5 and the gres part of 11): what a
//! task or gres plugin hands back to the node is checked before it reaches
//! a task, the machine or a caller.
//!
//! - Class 4: environment edits are limited to the variables Slurm's
//!   plugins of the kind set (`SLURM_*`; for gres also the GPU selection
//!   variables `gres_common_gpu_set_env` sets, gres/common/gres_common.c),
//!   values without NUL bytes.
//! - Class 5: `cpuset` binds a step's tasks only to its CPUs (Slurm's
//!   task/affinity binds within the step's cores) and `gpu-control`
//!   changes only the GPUs of the step whose hardware is set up (Slurm's
//!   gpu/nvml sets and resets the step's usable GPUs only).
//! - Class 11: gres counts within what the node and the allocation hold,
//!   bitmaps within their length, device files of the node's GPUs only
//!   (slurmd grants a step's cgroup its GRES device files).
//!
//! The task cases use task/hostile (`tests/hostile`), the gres cases
//! gres/hostile (`tests/hostile-gres`), each with fake providers so
//! nothing on this machine is touched. Each test fails on `1d23290`.

use std::path::Path;
use std::sync::Arc;

use slurm_wasm_host::capabilities::cpuset::RecordingCpuset;
use slurm_wasm_host::capabilities::gpu::{GpuControlCall, InventoryGpu, RecordingGpu};
use slurm_wasm_host::capabilities::topology::FixedTopology;
use slurm_wasm_host::fixtures::{self, bitmap};
use slurm_wasm_host::kinds::gres::{
    EnvChange, EnvFlags, GresConfRecord, InfoField, InfoValue, NodeAllocation, NodeHardware,
};
use slurm_wasm_host::types::{Bitmap, GresAllocation, GresCount};
use slurm_wasm_host::{
    CallError, Capability, FailurePolicy, Grants, GresPlugin, Host, HostOptions, PluginSettings,
    PluginSource, PriorityPlugin, Services, TaskPlugin,
};

use super::{assert_names, healthy_still_serves, hostile, provoke, tight, Fixture};

/// The fixture of `super::fixture` on a host with `services`, the hostile
/// task plugin holding `grants`.
fn fixture_on(services: Services, grants: Grants) -> Fixture {
    let host = Host::new(HostOptions {
        services,
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    let settings = PluginSettings {
        grants,
        ..tight(FailurePolicy::default())
    };
    let hostile = TaskPlugin::load(&host, &hostile(), settings).expect("hostile plugin loads");
    hostile.init(&fixtures::task_config()).expect("init");
    let healthy = PriorityPlugin::load(
        &host,
        &PluginSource::Bundled("priority/basic".into()),
        PluginSettings::default(),
    )
    .expect("priority/basic");
    healthy.init(&fixtures::priority_config()).expect("init");
    Fixture {
        host,
        hostile,
        healthy,
    }
}

fn invalid(err: &CallError, function: &str, parts: &[&str]) {
    assert!(matches!(err, CallError::Invalid { .. }), "{err:?}");
    assert_names(&err.to_string(), &[function]);
    assert_names(&err.to_string(), parts);
}

// ---- class 4: environment edits of task plugins -------------------------

/// `name=value` asked of task/hostile's `slurmd-launch-request`.
fn set_env(f: &Fixture, name: &str, value: &str) -> Result<(), CallError> {
    provoke(&f.hostile, &format!("set-env:{name}={value}")).map(|_| ())
}

#[test]
fn task_env_may_not_name_the_dynamic_loader() {
    // Issue 26 class 4: LD_PRELOAD set by a plugin with no grants ran a
    // library of its choosing in every task and in the launcher.
    let f = fixture_on(Services::default(), Grants::none());
    for name in [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "GLIBC_TUNABLES",
    ] {
        let err = set_env(&f, name, "/tmp/evil.so").unwrap_err();
        invalid(
            &err,
            "slurmd-launch-request",
            &[
                "task/hostile",
                &format!("`{name}` refused"),
                "only SLURM_* variables",
            ],
        );
    }
    healthy_still_serves(&f);
    // What task plugins do set still passes: task/affinity's SLURM_CPU_BIND.
    set_env(&f, "SLURM_CPU_BIND", "quiet,mask_cpu:0x3").expect("SLURM_* is allowed");
}

#[test]
fn task_env_may_not_choose_the_programs_or_interpreters_a_task_runs() {
    // Issue 26 class 4: PATH and its kin choose what the task's command,
    // its shell and its interpreters run.
    let f = fixture_on(Services::default(), Grants::none());
    for name in [
        "PATH",
        "HOME",
        "SHELL",
        "IFS",
        "PYTHONPATH",
        "PERL5LIB",
        "CUDA_VISIBLE_DEVICES",
    ] {
        let err = set_env(&f, name, "/tmp/evil").unwrap_err();
        invalid(
            &err,
            "slurmd-launch-request",
            &["task/hostile", &format!("`{name}` refused")],
        );
    }
    healthy_still_serves(&f);
    provoke(&f.hostile, "").expect("the plugin serves on");
}

#[test]
fn task_env_values_may_not_hold_nul_bytes() {
    // Issue 26 class 4: a NUL byte ends the value in the task's
    // environment (or makes the launch fail).
    let f = fixture_on(Services::default(), Grants::none());
    let err = set_env(&f, "SLURM_CPU_BIND", "quiet\0LD_PRELOAD=/tmp/evil.so").unwrap_err();
    invalid(
        &err,
        "slurmd-launch-request",
        &["task/hostile", "`SLURM_CPU_BIND`", "NUL byte at byte 5"],
    );
    healthy_still_serves(&f);
}

// ---- class 5: cpuset within the step's CPUs -----------------------------

#[test]
fn cpuset_binds_only_to_the_steps_cpus() {
    // Issue 26 class 5: `cpuset` checked the pid but not the CPUs. On a
    // 4-core node the step holds cores 0-1; task/hostile binds its task to
    // every CPU. Slurm binds a task within its step's CPUs only.
    let cpuset = Arc::new(RecordingCpuset::default());
    let services = Services {
        topology: Arc::new(FixedTopology::new(1, 4, 1, false)),
        cpuset: cpuset.clone(),
        ..Services::default()
    };
    let f = fixture_on(
        services,
        [Capability::Cpuset, Capability::Topology]
            .into_iter()
            .collect(),
    );
    let mut step = fixtures::step(5, 0);
    step.cpu_bind = "cpuset-outside".into();
    step.cores = bitmap(4, [0, 1]);
    step.task_pids = vec![4100];
    let task = fixtures::task(0, 4100);
    let err = f.hostile.pre_launch_priv(&step, &task).unwrap_err();
    assert!(matches!(err, CallError::Plugin { .. }), "{err:?}");
    assert_names(
        &err.to_string(),
        &[
            "task/hostile",
            "pre-launch-priv",
            "CPUs 2-3 are not CPUs of step 5.0 on this node (its CPUs: 0-1)",
        ],
    );
    assert!(cpuset.bound.lock().unwrap().is_empty(), "nothing was bound");
    healthy_still_serves(&f);
    // A step holding the whole node may be bound to all of it.
    step.cores = bitmap(4, 0..4);
    f.hostile
        .pre_launch_priv(&step, &task)
        .expect("binding within the step");
    assert_eq!(*cpuset.bound.lock().unwrap(), [(4100, vec![0, 1, 2, 3])]);
}

// ---- gres/hostile --------------------------------------------------------

/// Two GPUs, `/dev/nvidia0` and `/dev/nvidia1`, whose clocks the
/// hostile plugin sets to 1215/1410 MHz.
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
graphics_mhz = [1410, 1095]
[[gpu]]
uuid = "GPU-bbbb"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 1
pci_bus_id = "00000000:0F:00.0"
application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }
[[gpu.clocks]]
memory_mhz = 1215
graphics_mhz = [1410, 1095]
"#;

/// gres/hostile on a host whose GPUs are [`INVENTORY`] behind a recorder,
/// holding `gpu` and `gpu-control`, beside the usual fixture.
struct GresFixture {
    f: Fixture,
    gres: GresPlugin,
    gpu: Arc<RecordingGpu>,
}

fn gres_fixture() -> GresFixture {
    let inventory = InventoryGpu::parse_str(INVENTORY, Path::new("gpus.toml")).unwrap();
    let gpu = Arc::new(RecordingGpu::new(Arc::new(inventory)));
    let services = Services {
        gpu: gpu.clone(),
        ..Services::default()
    };
    let f = fixture_on(services, Grants::none());
    let settings = PluginSettings {
        grants: [Capability::Gpu, Capability::GpuControl]
            .into_iter()
            .collect(),
        ..tight(FailurePolicy::default())
    };
    let source = PluginSource::File(slurm_wasm_test_artifacts::HOSTILE_GRES.into());
    let gres = GresPlugin::load(&f.host, &source, settings).expect("gres/hostile loads");
    gres.init(&fixtures::gres_config()).expect("init");
    GresFixture { f, gres, gpu }
}

/// `Name=gpu File=/dev/nvidia[0-1]` on a 2 x 4 node named `name` with
/// `Gres=gpu:2` (the name chooses gres/hostile's behaviour).
fn load_node(g: &GresFixture, name: &str) -> Result<(), CallError> {
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
        name: name.into(),
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
    g.gres.node_config_load(&[record], &node).map(|_| ())
}

/// An allocation of GPUs 0 and 1 whose GRES name chooses gres/hostile's
/// behaviour.
fn allocation(name: &str) -> GresAllocation {
    GresAllocation {
        name: name.into(),
        type_name: None,
        count: 2,
        devices: Some(bitmap(2, [0, 1])),
        per_device: Vec::new(),
    }
}

/// The gres plugin still answers a legitimate call, and the healthy
/// plugin beside it too.
fn gres_still_serves(g: &GresFixture) {
    let edits = g
        .gres
        .job_set_env(
            Some(&allocation("set:CUDA_VISIBLE_DEVICES=0,1")),
            EnvFlags::empty(),
        )
        .expect("gres/hostile serves on");
    assert!(matches!(&edits[..], [EnvChange::Set(kv)] if kv.key == "CUDA_VISIBLE_DEVICES"));
    healthy_still_serves(&g.f);
}

// ---- class 4: environment edits of gres plugins --------------------------

#[test]
fn gres_env_is_limited_to_slurm_and_gpu_variables() {
    // Issue 26 class 4, gres side: job, step and task environments take
    // only SLURM_* and the variables gres/gpu and gres/mps set
    // (`gres_common_gpu_set_env`, gres/common/gres_common.c; `_set_env`,
    // gres/mps/gres_mps.c); an unset of PATH is refused like a set.
    let g = gres_fixture();
    let flags = EnvFlags::empty();
    let err = g
        .gres
        .job_set_env(Some(&allocation("set:LD_PRELOAD=/tmp/evil.so")), flags)
        .unwrap_err();
    invalid(
        &err,
        "job-set-env",
        &[
            "gres/hostile",
            "`LD_PRELOAD` refused",
            "CUDA_VISIBLE_DEVICES",
        ],
    );
    let err = g
        .gres
        .step_set_env(Some(&allocation("unset:PATH")), flags)
        .unwrap_err();
    invalid(&err, "step-set-env", &["`PATH` refused"]);
    let task = NodeAllocation {
        allocation: allocation("set:PYTHONPATH=/tmp"),
        usable: None,
    };
    let err = g.gres.task_set_env(Some(&task), flags).unwrap_err();
    invalid(&err, "task-set-env", &["`PYTHONPATH` refused"]);
    let err = g
        .gres
        .job_set_env(Some(&allocation("set:CUDA_VISIBLE_DEVICES=0\0,1")), flags)
        .unwrap_err();
    invalid(&err, "job-set-env", &["`CUDA_VISIBLE_DEVICES`", "NUL byte"]);
    for allowed in ["set:SLURM_STEP_GPUS=0", "unset:ROCR_VISIBLE_DEVICES"] {
        g.gres
            .step_set_env(Some(&allocation(allowed)), flags)
            .expect(allowed);
    }
    gres_still_serves(&g);
}

// ---- class 5: gpu-control within the step's GPUs --------------------------

#[test]
fn gpu_control_changes_only_the_steps_gpus() {
    // Issue 26 class 5: clocks were set on a GPU the step does not hold.
    // Slurm's gpu/nvml sets the clocks of the step's usable GPUs only.
    let g = gres_fixture();
    load_node(&g, "g1").expect("node-config-load");
    let usable = bitmap(2, [0]);
    let err = g
        .gres
        .step_hardware_init(Some(&usable), Some("clock:1"))
        .unwrap_err();
    assert!(matches!(err, CallError::Plugin { .. }), "{err:?}");
    assert_names(
        &err.to_string(),
        &[
            "gres/hostile",
            "step-hardware-init",
            "GPU 1 is not a GPU of the step this call serves (its GPUs: 0)",
        ],
    );
    // Without usable GPUs, none.
    let err = g
        .gres
        .step_hardware_init(None, Some("clock:0"))
        .unwrap_err();
    assert_names(&err.to_string(), &["GPU 0 is not a GPU", "its GPUs: none"]);
    assert_eq!(g.gpu.calls(), [], "no change reached the GPUs");
    // The step's own GPU is set, and reset at the end of the step.
    g.gres
        .step_hardware_init(Some(&usable), Some("gpu:high"))
        .expect("the step's GPU");
    g.gres.step_hardware_fini().expect("reset");
    assert_eq!(
        g.gpu.calls(),
        [
            GpuControlCall::Set {
                index: 0,
                memory_mhz: 1215,
                graphics_mhz: 1410
            },
            GpuControlCall::Reset { index: 0 }
        ]
    );
    gres_still_serves(&g);
}

#[test]
fn gpu_reset_at_step_end_reaches_only_the_steps_gpus() {
    // Issue 26 class 5: step-hardware-fini undoes what init set for its
    // step (Slurm resets the saved usable GPUs), so it may not reach
    // another GPU either.
    let g = gres_fixture();
    load_node(&g, "g1").expect("node-config-load");
    g.gres
        .step_hardware_init(Some(&bitmap(2, [0])), Some("fini-reset:1"))
        .expect("init changes nothing");
    let err = g.gres.step_hardware_fini().unwrap_err();
    assert_names(
        &err.to_string(),
        &[
            "step-hardware-fini",
            "GPU 1 is not a GPU of the step this call serves (its GPUs: 0)",
        ],
    );
    assert_eq!(g.gpu.calls(), []);
    gres_still_serves(&g);
}

// ---- class 11: gres answers ---------------------------------------------

#[test]
fn gres_counts_beyond_the_node_or_allocation_are_refused() {
    // Issue 26 class 11: counts of u64::MAX were accepted from
    // node-config-load and the info calls.
    let g = gres_fixture();
    let err = load_node(&g, "count-max").unwrap_err();
    invalid(
        &err,
        "node-config-load",
        &[
            "gres/hostile",
            "18446744073709551615 hostile on node count-max, more than it was given",
        ],
    );
    for (function, result) in [
        (
            "job-info",
            g.gres
                .job_info(&allocation("info-count-max"), InfoField::Count),
        ),
        (
            "step-info",
            g.gres
                .step_info(&allocation("info-count-max"), InfoField::Count),
        ),
    ] {
        invalid(
            &result.unwrap_err(),
            function,
            &["count 18446744073709551615, more than the allocation's 2"],
        );
    }
    assert!(matches!(
        g.gres.job_info(&allocation("gpu"), InfoField::Count),
        Ok(InfoValue::Count(2))
    ));
    gres_still_serves(&g);
}

#[test]
fn gres_bitmaps_past_their_length_or_allocation_are_refused() {
    // Issue 26 class 11: bitmaps with more words than their length.
    let g = gres_fixture();
    let err = load_node(&g, "cores-long").unwrap_err();
    invalid(
        &err,
        "node-config-load",
        &["Cores=", "a bitmap of 8 bits needs 1 words, got 3"],
    );
    let err = g
        .gres
        .job_info(&allocation("info-long"), InfoField::Bitmap)
        .unwrap_err();
    invalid(
        &err,
        "job-info",
        &["a bitmap of 2 bits needs 1 words, got 3"],
    );
    let err = g
        .gres
        .step_info(&allocation("info-outside"), InfoField::Bitmap)
        .unwrap_err();
    invalid(
        &err,
        "step-info",
        &["device 63 is not among the allocation's devices"],
    );
    let value = g
        .gres
        .step_info(&allocation("gpu"), InfoField::Bitmap)
        .expect("the allocation's own devices");
    assert!(matches!(value, InfoValue::Devices(Bitmap { len: 2, .. })));
    gres_still_serves(&g);
}

#[test]
fn gres_device_files_are_only_the_nodes_gpus() {
    // Issue 26 class 11: /etc/shadow and /dev/sda were accepted as device
    // files; slurmd grants a step's cgroup its GRES devices by major:minor,
    // so /dev/sda (8:0) would hand the step a disk.
    let g = gres_fixture();
    let err = load_node(&g, "file-shadow").unwrap_err();
    invalid(
        &err,
        "node-config-load",
        &["`/etc/shadow` is not a device file of this node's GPUs"],
    );
    load_node(&g, "dev-sda").expect("the load itself is honest");
    let err = g.gres.get_devices().unwrap_err();
    invalid(
        &err,
        "get-devices",
        &["`/dev/sda` is not a device file of this node's GPUs"],
    );
    load_node(&g, "dev-renumbered").expect("the load itself is honest");
    let err = g.gres.get_devices().unwrap_err();
    invalid(
        &err,
        "get-devices",
        &["`/dev/nvidia0` given as device 8:0, which is not that file's (195:0 or 0:0)"],
    );
    load_node(&g, "g1").expect("node-config-load");
    let devices = g.gres.get_devices().expect("the node's GPUs");
    let paths: Vec<_> = devices.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(paths, ["/dev/nvidia0", "/dev/nvidia1"]);
    gres_still_serves(&g);
}
