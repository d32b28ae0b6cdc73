//! Hostile plugins are contained: each misbehaviour ends in a clear error
//! naming plugin, function and limit, and the same host then serves a
//! healthy plugin's next call correctly (issue "Foundation", Must show).
//!
//! The misbehaving component is `tests/hostile` (`task/hostile`): its
//! `slurmd-launch-request` does what the request's `cpu-bind` text names.

use std::sync::Arc;
use std::time::{Duration, Instant};

use slurm_wasm_host::capabilities::cpuset::CgroupCpuset;
use slurm_wasm_host::{
    fixtures, CallError, Capability, FailurePolicy, Grants, Host, HostOptions, Limits, LoadError,
    PluginSettings, PluginSource, PriorityPlugin, Services, TaskPlugin,
};

// Containment cases by class (issue 26), one module each.
#[path = "hostile_cases/blocking.rs"]
mod blocking;
#[path = "hostile_cases/determinism.rs"]
mod determinism;
#[path = "hostile_cases/identity.rs"]
mod identity;
#[path = "hostile_cases/logs.rs"]
mod logs;
#[path = "hostile_cases/node_side.rs"]
mod node_side;
#[path = "hostile_cases/restart.rs"]
mod restart;
#[path = "hostile_cases/results.rs"]
mod results;
#[path = "hostile_cases/runtime.rs"]
mod runtime;

fn hostile() -> PluginSource {
    PluginSource::File(slurm_wasm_test_artifacts::HOSTILE.into())
}

/// Tight limits so the tests stay quick: 200 million fuel, 1 s, 64 MiB.
pub(crate) fn tight(failure: FailurePolicy) -> PluginSettings {
    PluginSettings {
        limits: Limits {
            fuel_per_call: 200_000_000,
            deadline: Duration::from_secs(1),
            memory_bytes: 64 << 20,
            ..Limits::default()
        },
        failure,
        ..PluginSettings::default()
    }
}

struct Fixture {
    host: Host,
    hostile: TaskPlugin,
    healthy: PriorityPlugin,
}

fn fixture(settings: PluginSettings) -> Fixture {
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
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

fn provoke(
    plugin: &TaskPlugin,
    behaviour: &str,
) -> Result<slurm_wasm_host::kinds::task::CpuBinding, CallError> {
    let mut request = fixtures::launch_request(1, 1, 4);
    request.cpu_bind = behaviour.into();
    plugin.slurmd_launch_request(&request)
}

/// The healthy plugin still answers exactly as Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_set` says.
fn healthy_still_serves(f: &Fixture) {
    let job = fixtures::job(1);
    assert_eq!(
        f.healthy
            .set(0xffff_0000, &job)
            .expect("healthy plugin serves"),
        4294901759
    );
}

fn assert_names(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "`{message}` should mention `{part}`"
        );
    }
}

#[test]
fn infinite_loop_runs_out_of_fuel() {
    let f = fixture(tight(FailurePolicy::default()));
    let err = provoke(&f.hostile, "loop").unwrap_err();
    assert!(
        matches!(
            err,
            CallError::Fuel {
                limit: 200_000_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert_names(
        &err.to_string(),
        &["task/hostile", "slurmd-launch-request", "fuel", "200000000"],
    );
    healthy_still_serves(&f);
}

#[test]
fn infinite_loop_hits_the_deadline_when_fuel_is_plentiful() {
    let mut settings = tight(FailurePolicy::default());
    settings.limits.fuel_per_call = u64::MAX;
    settings.limits.deadline = Duration::from_millis(200);
    let f = fixture(settings);
    let started = Instant::now();
    let err = provoke(&f.hostile, "loop").unwrap_err();
    assert!(matches!(err, CallError::Deadline { .. }), "{err:?}");
    assert_names(
        &err.to_string(),
        &[
            "task/hostile",
            "slurmd-launch-request",
            "deadline",
            "200 ms",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the deadline stopped the loop"
    );
    healthy_still_serves(&f);
}

#[test]
fn memory_growth_hits_the_memory_limit() {
    let f = fixture(tight(FailurePolicy::default()));
    let err = provoke(&f.hostile, "grow").unwrap_err();
    assert!(
        matches!(err, CallError::Memory { limit_bytes, .. } if limit_bytes == 64 << 20),
        "{err:?}"
    );
    assert_names(
        &err.to_string(),
        &[
            "task/hostile",
            "slurmd-launch-request",
            "memory limit",
            &(64u64 << 20).to_string(),
        ],
    );
    healthy_still_serves(&f);
}

#[test]
fn unbounded_recursion_exhausts_the_stack() {
    let f = fixture(tight(FailurePolicy::default()));
    let err = provoke(&f.hostile, "recurse").unwrap_err();
    // Either wasmtime's stack limit or the guest's shadow stack running into
    // its data ends the recursion; both are contained and named.
    match &err {
        CallError::Stack { .. } => assert_names(
            &err.to_string(),
            &["task/hostile", "slurmd-launch-request", "call stack"],
        ),
        CallError::Trap { .. } | CallError::Fuel { .. } => {
            assert_names(&err.to_string(), &["task/hostile", "slurmd-launch-request"])
        }
        other => panic!("unexpected {other:?}"),
    }
    healthy_still_serves(&f);
}

#[test]
fn trap_is_reported_and_the_plugin_restarts() {
    let f = fixture(tight(FailurePolicy::Restart { max_restarts: 3 }));
    let err = provoke(&f.hostile, "trap").unwrap_err();
    assert!(matches!(err, CallError::Trap { .. }), "{err:?}");
    assert_names(
        &err.to_string(),
        &["task/hostile", "slurmd-launch-request", "trapped"],
    );
    healthy_still_serves(&f);
    // The restarted instance serves a normal request.
    let binding = provoke(&f.hostile, "").expect("restarted instance serves");
    assert_eq!(binding.cpu_bind, "");
}

#[test]
fn malformed_environment_names_are_rejected() {
    let f = fixture(tight(FailurePolicy::Fail));
    let err = provoke(&f.hostile, "bad-env").unwrap_err();
    assert!(matches!(err, CallError::Invalid { .. }), "{err:?}");
    assert_names(
        &err.to_string(),
        &[
            "task/hostile",
            "slurmd-launch-request",
            "`NOT A NAME` is not a valid environment variable name",
        ],
    );
    provoke(&f.hostile, "").expect("plugin still serves after an invalid result");
}

#[test]
fn oversized_result_is_rejected_without_poisoning() {
    let mut settings = tight(FailurePolicy::Fail);
    settings.limits.memory_bytes = 256 << 20;
    let f = fixture(settings);
    let err = provoke(&f.hostile, "oversized").unwrap_err();
    assert!(matches!(err, CallError::Invalid { .. }), "{err:?}");
    assert_names(
        &err.to_string(),
        &[
            "task/hostile",
            "slurmd-launch-request",
            "cpu-bind",
            "67108864 bytes",
        ],
    );
    // An invalid result is not a fault: even under `fail` the plugin serves on.
    provoke(&f.hostile, "").expect("plugin still serves after an invalid result");
    healthy_still_serves(&f);
}

#[test]
fn wasi_files_are_not_reachable() {
    let f = fixture(tight(FailurePolicy::default()));
    let _ = std::fs::remove_file("/tmp/hostile-was-here");
    let binding = provoke(&f.hostile, "file").expect("the plugin reports what it got");
    let report = binding.messages.join("\n");
    assert!(report.contains("read /etc/passwd: failed"), "{report}");
    assert!(
        report.contains("create /tmp/hostile-was-here: failed"),
        "{report}"
    );
    assert!(
        !std::path::Path::new("/tmp/hostile-was-here").exists(),
        "the plugin created a file"
    );
    healthy_still_serves(&f);
}

#[test]
fn wasi_sockets_are_not_reachable() {
    let f = fixture(tight(FailurePolicy::default()));
    let binding = provoke(&f.hostile, "socket").expect("the plugin reports what it got");
    let report = binding.messages.join("\n");
    assert!(report.contains("connect 127.0.0.1:22: failed"), "{report}");
    healthy_still_serves(&f);
}

#[test]
fn wasi_environment_and_arguments_are_empty() {
    let f = fixture(tight(FailurePolicy::default()));
    let binding = provoke(&f.hostile, "env").expect("the plugin reports what it got");
    let report = binding.messages.join("\n");
    assert!(report.contains("vars=0"), "{report}");
    assert!(report.contains("args=0"), "{report}");
}

#[test]
fn ungranted_capability_is_denied_and_named() {
    let f = fixture(tight(FailurePolicy::default()));
    let err = provoke(&f.hostile, "cpuset").unwrap_err();
    assert!(
        matches!(&err, CallError::Denied { capability, .. } if capability == "cpuset" || capability == "topology"),
        "{err:?}"
    );
    assert_names(
        &err.to_string(),
        &["task/hostile", "slurmd-launch-request", "not granted"],
    );
    healthy_still_serves(&f);
}

/// With `cpuset` granted, binding a pid of no step this call serves (pid 1
/// from `slurmd-launch-request`) is still refused, before the provider
/// touches anything: the fake cgroupfs tree stays as it was.
#[test]
fn granted_cpuset_refuses_pids_outside_the_step() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("cgroup.controllers"), "cpuset cpu\n").unwrap();
    std::fs::write(root.path().join("cgroup.subtree_control"), "").unwrap();
    let services = Services {
        cpuset: Arc::new(CgroupCpuset::under(root.path(), "/")),
        ..Services::default()
    };
    let host = Host::new(HostOptions {
        services,
        ..slurm_wasm_bundled::host_options()
    })
    .unwrap();
    let settings = PluginSettings {
        grants: [Capability::Cpuset, Capability::Topology]
            .into_iter()
            .collect(),
        ..tight(FailurePolicy::default())
    };
    let hostile = TaskPlugin::load(&host, &hostile(), settings).expect("loads");
    hostile.init(&fixtures::task_config()).expect("init");
    let err = provoke(&hostile, "cpuset").unwrap_err();
    assert!(matches!(&err, CallError::Plugin { .. }), "{err:?}");
    assert_names(
        &err.to_string(),
        &[
            "cpuset.bind",
            "pid 1 is not a task of the step this call serves",
        ],
    );
    let mut left: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["cgroup.controllers", "cgroup.subtree_control"]);
    assert_eq!(
        std::fs::read_to_string(root.path().join("cgroup.subtree_control")).unwrap(),
        ""
    );
}

#[test]
fn required_capability_without_grant_refuses_to_load() {
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let source = PluginSource::File(slurm_wasm_test_artifacts::NEEDS_TOPOLOGY.into());
    let err = TaskPlugin::load(&host, &source, PluginSettings::default())
        .err()
        .expect("refused");
    assert!(
        matches!(&err, LoadError::CapabilityNotGranted { capability, .. } if capability == "topology"),
        "{err:?}"
    );
    assert_names(
        &err.to_string(),
        &["task/needs_topology", "topology", "not granted"],
    );
    let granted = PluginSettings {
        grants: Grants::none().with(Capability::Topology),
        ..PluginSettings::default()
    };
    TaskPlugin::load(&host, &source, granted).expect("loads once topology is granted");
}

#[test]
fn fail_policy_disables_the_plugin() {
    let f = fixture(tight(FailurePolicy::Fail));
    provoke(&f.hostile, "trap").unwrap_err();
    let err = provoke(&f.hostile, "").unwrap_err();
    assert!(matches!(err, CallError::Disabled { .. }), "{err:?}");
    assert_names(&err.to_string(), &["task/hostile", "disabled", "fail"]);
    healthy_still_serves(&f);
}

#[test]
fn restarts_are_bounded() {
    let f = fixture(tight(FailurePolicy::Restart { max_restarts: 2 }));
    for _ in 0..3 {
        provoke(&f.hostile, "trap").unwrap_err();
    }
    let err = provoke(&f.hostile, "").unwrap_err();
    assert!(matches!(err, CallError::Disabled { .. }), "{err:?}");
    assert_names(&err.to_string(), &["3 faults", "max_restarts = 2"]);
}

#[test]
fn fallback_policy_hands_over_to_a_bundled_plugin() {
    let f = fixture(tight(FailurePolicy::Fallback {
        plugin: "task/none".into(),
        max_restarts: 1,
    }));
    provoke(&f.hostile, "loop").unwrap_err();
    assert_eq!(f.hostile.identity().plugin_type, "task/none");
    // task/none was initialised like the failed plugin and answers as itself.
    let binding = provoke(&f.hostile, "loop").expect("task/none serves the next call");
    assert_eq!(
        binding.cpu_bind, "loop",
        "task/none hands the binding back unchanged"
    );
}

#[test]
fn plugin_in_the_wrong_slot_is_refused() {
    // The component's exports say its kind; it is refused before linking,
    // so the message names the kind and not the functions it lacks.
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    for source in [PluginSource::Bundled("task/none".into()), hostile()] {
        let err = PriorityPlugin::load(&host, &source, PluginSettings::default())
            .err()
            .expect("refused");
        assert!(
            matches!(
                &err,
                LoadError::WrongSlot {
                    slot: "priority",
                    found,
                    ..
                } if found == "task"
            ),
            "{err:?}"
        );
        assert_names(
            &err.to_string(),
            &["is a task plugin but was loaded into the priority slot"],
        );
    }
}

#[test]
fn malformed_wasm_is_refused_with_its_name() {
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    for (name, bytes) in [
        ("empty.wasm", Vec::new()),
        ("text.wasm", b"not wasm at all".to_vec()),
        ("core-module.wasm", b"\0asm\x01\0\0\0".to_vec()),
    ] {
        let source = PluginSource::Bytes {
            name: name.into(),
            bytes,
        };
        let err = TaskPlugin::load(&host, &source, PluginSettings::default())
            .err()
            .expect("refused");
        assert!(
            matches!(err, LoadError::Malformed { .. }),
            "{name}: {err:?}"
        );
        assert!(err.to_string().starts_with(name), "{err}");
    }
    let _ = &host;
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let err = TaskPlugin::load(
        &host,
        &PluginSource::File("/nonexistent/x.wasm".into()),
        PluginSettings::default(),
    )
    .err()
    .expect("refused");
    assert!(matches!(err, LoadError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/x.wasm"));
}

#[test]
fn concurrent_calls_on_one_handle_are_serialised() {
    let f = fixture(tight(FailurePolicy::default()));
    let healthy = &f.healthy;
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for i in 0..50 {
                    assert_eq!(healthy.set(1000 + i, &fixtures::job(i)).unwrap(), 999 + i);
                }
            });
        }
    });
    let _ = &f.host;
}

#[test]
fn handles_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Host>();
    assert_send_sync::<PriorityPlugin>();
    assert_send_sync::<TaskPlugin>();
    assert_send_sync::<slurm_wasm_host::SelectPlugin>();
    assert_send_sync::<slurm_wasm_host::GresPlugin>();
}
