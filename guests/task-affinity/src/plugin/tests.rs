//! The exported functions against the SDK's mock host: the layout comes
//! from `topology`, bindings go to `cpuset`.

use slurm_wasm_sdk::codes::ESLURMD_CPU_BIND_ERROR;
use slurm_wasm_sdk::host::Level;
use slurm_wasm_sdk::testkit::{self, fixtures};
use slurm_wasm_sdk::types::{self, SelectTypeParams, TaskPluginParams};

use super::*;
use crate::bind_type::{MASK, TO_CORES, VERBOSE};
use crate::hardware::testing::hyperthreaded;

/// task/affinity as `init` makes it with slurm.conf's defaults, the line
/// `init` logs left out of the mock host's record. Tests call the plugin
/// value directly (the SDK's `Export` adapter that the component exports is
/// tested with the SDK).
fn plugin() -> TaskAffinity {
    let plugin = TaskAffinity::init(TaskConfig {
        cluster: fixtures::cluster_config(),
        node_name: "n1".into(),
    })
    .unwrap();
    testkit::with(|host| host.logs.clear());
    plugin
}

/// The mock host with a 2x4x2 HT-numbered node and, if `cpuset`, the
/// `cpuset` capability granted.
fn mock_node(cpuset: bool) {
    testkit::reset();
    let hw = hyperthreaded(2, 4, 2);
    testkit::with(|host| {
        host.cpu_layout = Ok(CpuLayout {
            sockets: hw.sockets,
            cores_per_socket: hw.cores,
            threads_per_core: hw.threads,
            block_map: hw.block_map.clone(),
            numa_node_of_cpu: Vec::new(),
        });
        if cpuset {
            host.cpuset_denied = None;
        }
    });
}

fn bitmap(len: u32, bits: impl IntoIterator<Item = usize>) -> types::Bitmap {
    (&Bitmap::from_bits(len as usize, bits)).into()
}

/// `tasks` tasks on the 2x4x2 node, the step owning `cores`.
fn launch_request(tasks: u32, cores: &[usize]) -> LaunchRequest {
    LaunchRequest {
        job_id: 9,
        step_id: 0,
        user_id: 1000,
        group_id: 1000,
        node_count: 1,
        node_id: 0,
        node_name: "n1".into(),
        total_tasks: tasks,
        global_task_ids: (0..tasks).collect(),
        cpus_per_task: 1,
        cpu_bind_type: 0,
        cpu_bind: String::new(),
        task_dist: crate::dist::BLOCK,
        plane_size: 0,
        ntasks_per_board: 0,
        ntasks_per_socket: 0,
        ntasks_per_core: 0,
        threads_per_core: 0,
        overcommit: false,
        step_cores: bitmap(8, cores.iter().copied()),
        job_cores: bitmap(8, 0..8),
        sockets: 2,
        cores_per_socket: 4,
        threads_per_core_conf: 2,
        cpus_conf: 16,
        job_core_spec: None,
        mem_bind_type: 0,
        mem_bind: String::new(),
        env: Vec::new(),
        interactive: false,
    }
}

fn step_with(cpu_bind_type: u32, cpu_bind: &str) -> Step {
    let mut step = fixtures::step(9, 0);
    step.cpu_bind_type = cpu_bind_type;
    step.cpu_bind = cpu_bind.into();
    step.cores = bitmap(8, 0..8);
    step.local_tasks = 2;
    step.task_pids = vec![500, 501];
    step
}

fn logs_at(level: Level) -> Vec<String> {
    testkit::with(|host| {
        host.logs
            .iter()
            .filter(|(l, _)| *l == level)
            .map(|(_, m)| m.clone())
            .collect()
    })
}

#[test]
fn describes_itself_as_task_affinity_needing_topology() {
    let id = TaskAffinity::identity();
    assert_eq!(id.plugin_type, "task/affinity");
    assert_eq!(id.plugin_name, "task affinity plugin");
    assert_eq!(id.required_capabilities, [Capability::Topology]);
}

#[test]
fn settings_come_from_slurm_conf() {
    let mut config = TaskConfig {
        cluster: fixtures::cluster_config(),
        node_name: "n1".into(),
    };
    config.cluster.task_plugin_param = TaskPluginParams::VERBOSE | TaskPluginParams::AUTOBIND_CORES;
    config.cluster.select_type_parameters =
        SelectTypeParams::CORE | SelectTypeParams::CORE_DEFAULT_DIST_BLOCK;
    assert_eq!(
        read_settings(&config).unwrap(),
        Settings {
            task_plugin_param: VERBOSE | crate::bind_type::AUTO_BIND_TO_CORES,
            default_dist_block: true,
        }
    );
    config.cluster.task_plugin_param = TaskPluginParams::CORES | TaskPluginParams::THREADS;
    let err = read_settings(&config).unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (EINVAL, "Bad TaskPluginParam: Threads")
    );
}

#[test]
fn init_refuses_a_bad_task_plugin_param() {
    let mut config = TaskConfig {
        cluster: fixtures::cluster_config(),
        node_name: "n1".into(),
    };
    assert_eq!(
        TaskAffinity::init(config.clone()).unwrap().settings,
        Settings::default()
    );
    config.cluster.task_plugin_param =
        TaskPluginParams::AUTOBIND_SOCKETS | TaskPluginParams::AUTOBIND_THREADS;
    let err = TaskAffinity::init(config).err().unwrap();
    assert_eq!(err.code, EINVAL);
}

#[test]
fn without_topology_calls_fail_naming_it() {
    testkit::reset();
    let err = hardware().unwrap_err();
    assert!(err.message.contains("`topology`"), "{}", err.message);
    let err = plugin()
        .slurmd_launch_request(launch_request(2, &[0, 1]))
        .unwrap_err();
    assert!(err.message.contains("`topology`"), "{}", err.message);
}

#[test]
fn launch_request_gives_binding_and_environment() {
    mock_node(false);
    let binding = plugin()
        .slurmd_launch_request(launch_request(2, &[0, 1, 2, 3, 4, 5, 6, 7]))
        .unwrap();
    // Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n2` without `--cpu-bind` on the
    // whole node: 2 tasks fill the 2 sockets, so it binds to sockets (HT numbering).
    assert_eq!(binding.cpu_bind_type, MASK);
    assert_eq!(binding.cpu_bind, "0x0F0F,0xF0F0");
    let env: Vec<(String, String)> = binding
        .env
        .into_iter()
        .map(|kv| (kv.key, kv.value))
        .collect();
    assert_eq!(
        env,
        [
            (
                "SLURM_CPU_BIND".into(),
                "quiet,mask_cpu:0x0F0F,0xF0F0".into()
            ),
            ("SLURM_CPU_BIND_LIST".into(), "0x0F0F,0xF0F0".into()),
            ("SLURM_CPU_BIND_TYPE".into(), "mask_cpu:".into()),
            ("SLURM_CPU_BIND_VERBOSE".into(), "quiet".into()),
        ]
    );
    assert!(binding.messages.is_empty());
}

#[test]
fn launch_errors_carry_slurms_code_and_message() {
    mock_node(false);
    let mut request = launch_request(2, &[0, 1]);
    request.cpu_bind_type = LDRANK;
    let err = plugin().slurmd_launch_request(request).unwrap_err();
    assert_eq!(err.code, ESLURMD_CPU_BIND_ERROR);
    assert_eq!(err.message, "Entire node must be allocated for rank_ldom");
}

#[test]
fn interactive_steps_bind_none_and_get_no_environment() {
    mock_node(false);
    let mut request = launch_request(1, &[0, 1]);
    request.interactive = true;
    request.cpu_bind_type = TO_CORES;
    let binding = plugin().slurmd_launch_request(request).unwrap();
    // `none` on part of the node still binds to the allocation
    // (`lllp_distribution`, task/affinity/dist_tasks.c).
    assert_eq!(
        (binding.cpu_bind_type, binding.cpu_bind.as_str()),
        (MASK, "0x0303")
    );
    assert!(binding.env.is_empty());
}

#[test]
fn batch_request_binds_to_the_job() {
    mock_node(false);
    let request = BatchRequest {
        job_id: 9,
        user_id: 1000,
        node_name: "n1".into(),
        job_cores: bitmap(8, [0, 4]),
        sockets: 2,
        cores_per_socket: 4,
        threads_per_core_conf: 2,
        cpus_conf: 16,
        cpu_bind_type: 0,
        cpu_bind: String::new(),
    };
    let hw = hardware().unwrap();
    let verbose = Settings {
        task_plugin_param: VERBOSE,
        ..Settings::default()
    };
    let binding = batch_request(&request, &verbose, &hw).unwrap();
    assert_eq!(
        (binding.cpu_bind_type, binding.cpu_bind.as_str()),
        (MASK | VERBOSE, "0x1111")
    );
    assert!(binding.env.is_empty());
    let empty = BatchRequest {
        job_cores: bitmap(8, []),
        cpu_bind_type: TO_CORES,
        ..request
    };
    let binding = batch_request(&empty, &verbose, &hw).unwrap();
    assert_eq!(binding.cpu_bind_type, TO_CORES);
}

#[test]
fn pre_launch_priv_binds_through_cpuset_and_prints_the_verbose_line() {
    mock_node(true);
    let step = step_with(VERBOSE | MASK, "0x0101,0x1010");
    plugin()
        .pre_launch_priv(
            &step,
            &Task {
                local_id: 1,
                global_id: 7,
                pid: 501,
            },
        )
        .unwrap();
    let bound = testkit::with(|host| host.bound.clone());
    assert_eq!(bound.len(), 1);
    assert_eq!(bound[0].0, 501);
    assert_eq!(bound[0].1.ones().collect::<Vec<_>>(), [4, 12]);
    assert_eq!(
        logs_at(Level::Info),
        ["cpu-bind=MASK - n1, task  7  1 [501]: mask 0x1010 set"]
    );
    // pre_launch binds nothing.
    plugin()
        .pre_launch(
            &step,
            &Task {
                local_id: 0,
                global_id: 6,
                pid: 500,
            },
        )
        .unwrap();
    assert_eq!(testkit::with(|host| host.bound.len()), 1);
}

#[test]
fn without_cpuset_binding_fails_naming_it() {
    mock_node(false);
    let step = step_with(VERBOSE | MASK, "0x0101,0x1010");
    let err = plugin()
        .pre_launch_priv(
            &step,
            &Task {
                local_id: 0,
                global_id: 0,
                pid: 500,
            },
        )
        .unwrap_err();
    assert_eq!(err.code, SLURM_ERROR);
    assert_eq!(
        err.message,
        "binding task 0 (pid 500) of 9.0 to CPUs 0x101: the `cpuset` capability is not granted \
         to task/affinity (grant it in the host configuration)"
    );
    assert_eq!(
        logs_at(Level::Info),
        ["cpu-bind=MASK - n1, task  0  0 [500]: mask 0x0 set FAILED"]
    );
}

#[test]
fn none_and_unbound_steps_apply_nothing() {
    mock_node(true);
    let task = Task {
        local_id: 0,
        global_id: 0,
        pid: 500,
    };
    plugin().pre_launch_priv(&step_with(0, ""), &task).unwrap();
    plugin()
        .pre_launch_priv(&step_with(VERBOSE | NONE, ""), &task)
        .unwrap();
    assert!(testkit::with(|host| host.bound.is_empty()));
    assert_eq!(
        logs_at(Level::Info),
        ["cpu-bind=NONE - n1, task  0  0 [500]: mask 0x0"]
    );
}

#[test]
fn pre_setuid_checks_sets_and_never_fails() {
    mock_node(false);
    plugin().pre_setuid(&step_with(MASK, "")).unwrap();
    assert_eq!(
        logs_at(Level::Error),
        ["cpu_freq_cpuset_validate: cpu_bind string is null"]
    );
    mock_node(false);
    plugin()
        .pre_setuid(&step_with(MASK, "0x0101,0x1010"))
        .unwrap();
    assert!(logs_at(Level::Debug)
        .iter()
        .any(|l| l == "9.0 task 1: CPUs 0x1010"));
    testkit::reset();
    plugin().pre_setuid(&step_with(MASK, "0x1")).unwrap();
}

#[test]
fn the_other_hooks_succeed() {
    mock_node(false);
    let step = step_with(MASK, "0x1");
    let task = Task {
        local_id: 0,
        global_id: 0,
        pid: 500,
    };
    plugin()
        .slurmd_reserve_resources(launch_request(1, &[0]))
        .unwrap();
    plugin().slurmd_suspend_job(9).unwrap();
    plugin().slurmd_resume_job(9).unwrap();
    plugin().slurmd_release_resources(9).unwrap();
    plugin().post_term(&step, &task).unwrap();
    plugin().post_step(&step).unwrap();
    plugin().add_pid(500).unwrap();
    plugin().update_mem_limit(&step, 100, 50).unwrap();
    plugin().fini().unwrap();
    assert!(testkit::with(|host| host.bound.is_empty()));
}
