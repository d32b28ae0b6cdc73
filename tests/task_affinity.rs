//! task/affinity through the host, as wasm: the bindings Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`
//! gives common `srun` requests, end to end on a
//! 2 sockets × 4 cores × 2 threads node in both CPU numberings, the
//! capability rules (topology required, cpuset optional) and binding through
//! `cpuset` in `pre-launch-priv` (Slurm 22.05's `task_p_set_affinity`), real
//! processes bound through a cgroup v2 step cpuset in a fake cgroupfs tree,
//! and the step's cgroups released at `post-step`.

use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;

use slurm_wasm_host::capabilities::cpuset::{CgroupCpuset, RecordingCpuset};
use slurm_wasm_host::capabilities::topology::FixedTopology;
use slurm_wasm_host::kinds::task::LaunchRequest;
use slurm_wasm_host::{
    fixtures, CallError, Capability, Grants, Host, HostOptions, LoadError, PluginSettings,
    PluginSource, Services, TaskPlugin,
};

/// `CPU_BIND_*` bits (Slurm 22.05.8 slurm/slurm.h `cpu_bind_type_t`).
const VERBOSE: u32 = 0x1;
const TO_THREADS: u32 = 0x2;
const TO_CORES: u32 = 0x4;
const TO_SOCKETS: u32 = 0x8;
const MASK: u32 = 0x100;
const LDRANK: u32 = 0x200;
/// `task_dist` of `-m block:block` and `-m block:fcyclic`.
const BLOCK: u32 = 0x2;
const BLOCK_BLOCK: u32 = 0x22;
const BLOCK_CFULL: u32 = 0x32;

/// A host whose node is 2x4x2 (`hyperthread`: OS id = core + 8 x thread)
/// and whose cpuset provider records bindings.
struct Node {
    host: Host,
    cpuset: Arc<RecordingCpuset>,
}

fn node(hyperthread: bool) -> Node {
    let cpuset = Arc::new(RecordingCpuset::default());
    let services = Services {
        topology: Arc::new(FixedTopology::new(2, 4, 2, hyperthread)),
        cpuset: cpuset.clone(),
        ..Services::default()
    };
    let host = Host::new(HostOptions {
        services,
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    Node { host, cpuset }
}

fn load(node: &Node, grants: &[Capability]) -> Result<TaskPlugin, LoadError> {
    let settings = PluginSettings {
        grants: grants.iter().copied().collect::<Grants>(),
        ..PluginSettings::default()
    };
    let plugin = TaskPlugin::load(
        &node.host,
        &PluginSource::Bundled("task/affinity".into()),
        settings,
    )?;
    plugin.init(&fixtures::task_config()).expect("init");
    Ok(plugin)
}

/// `tasks` tasks of `cpt` CPUs on the 2x4x2 node (`CPUs=16`), the step
/// owning `cores`.
fn launch(tasks: u32, cpt: u16, bind: u32, dist: u32, cores: &[u32]) -> LaunchRequest {
    let mut request = fixtures::launch_request(5, tasks, 8);
    request.cpus_per_task = cpt;
    request.cpu_bind_type = bind;
    request.task_dist = dist;
    request.sockets = 2;
    request.cores_per_socket = 4;
    request.threads_per_core_conf = 2;
    request.cpus_conf = 16;
    request.step_cores = fixtures::bitmap(8, cores.iter().copied());
    request
}

const WHOLE: &[u32] = &[0, 1, 2, 3, 4, 5, 6, 7];

/// Runs one `srun` case of Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution` in both numberings and
/// compares `cpu_bind`.
fn row(source: &str, request: &LaunchRequest, identity: &str, ht: &str) {
    for (hyperthread, expected) in [(false, identity), (true, ht)] {
        let node = node(hyperthread);
        let plugin = load(&node, &[Capability::Topology]).expect("load");
        let binding = plugin
            .slurmd_launch_request(request)
            .unwrap_or_else(|e| panic!("{source}: {e}"));
        assert_eq!(binding.cpu_bind_type, MASK, "{source}");
        assert_eq!(
            binding.cpu_bind, expected,
            "{source} (HT numbering: {hyperthread})"
        );
    }
}

#[test]
fn lllp_rows_through_wasm() {
    row(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n2` without `--cpu-bind`: 2 tasks fill the 2 whole sockets, so it binds to sockets",
        &launch(2, 1, 0, BLOCK, WHOLE),
        "0x00FF,0xFF00",
        "0x0F0F,0xF0F0",
    );
    row(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n8` without `--cpu-bind`: 8 tasks fill the 8 whole cores, so it binds to cores",
        &launch(8, 1, 0, BLOCK, WHOLE),
        "0x0003,0x0300,0x000C,0x0C00,0x0030,0x3000,0x00C0,0xC000",
        "0x0101,0x1010,0x0202,0x2020,0x0404,0x4040,0x0808,0x8080",
    );
    row(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4` without `--cpu-bind`: 4 tasks fill no whole unit, so auto binding is off and every task gets the allocation",
        &launch(4, 1, 0, BLOCK, WHOLE),
        "0xFFFF",
        "0xFFFF",
    );
    row(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4 --cpu-bind=threads`: the cyclic layout gives each task one thread, alternating sockets",
        &launch(4, 1, TO_THREADS, BLOCK, WHOLE),
        "0x0001,0x0100,0x0002,0x0200",
        "0x0001,0x0010,0x0100,0x1000",
    );
    row(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4 -m block:block --cpu-bind=cores`: the block layout gives the tasks socket 0's cores in order",
        &launch(4, 1, TO_CORES, BLOCK_BLOCK, WHOLE),
        "0x0003,0x000C,0x0030,0x00C0",
        "0x0101,0x0202,0x0404,0x0808",
    );
    row(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n2 -c4 -m block:fcyclic --cpu-bind=threads`: fcyclic switches socket after every CPU, so each task's CPUs alternate sockets",
        &launch(2, 4, TO_THREADS, BLOCK_CFULL, WHOLE),
        "0x0303,0x0C0C",
        "0x1111,0x2222",
    );
    row(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, step owning cores {0,1,4}, `-n2 --cpu-bind=sockets`: each mask widens to the owned CPUs of its socket only",
        &launch(2, 1, TO_SOCKETS, BLOCK, &[0, 1, 4]),
        "0x000F,0x0300",
        "0x0303,0x1010",
    );
}

#[test]
fn partial_node_rank_ldom_is_a_bind_error() {
    // Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`: `--cpu-bind=rank_ldom` on part of a node is an
    // error in Slurm 22.05.8 ("Entire node must be allocated").
    let node = node(false);
    let plugin = load(&node, &[Capability::Topology]).expect("load");
    let err = plugin
        .slurmd_launch_request(&launch(3, 1, LDRANK, BLOCK, &[0, 1, 4]))
        .unwrap_err();
    match err {
        CallError::Plugin { code, message, .. } => {
            assert_eq!(code, 4032);
            assert_eq!(message, "Entire node must be allocated for rank_ldom");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn launch_sets_the_cpu_bind_environment() {
    let node = node(false);
    let plugin = load(&node, &[Capability::Topology]).expect("load");
    let binding = plugin
        .slurmd_launch_request(&launch(2, 1, VERBOSE | TO_CORES, BLOCK, WHOLE))
        .unwrap();
    let env: Vec<(&str, &str)> = binding
        .env
        .iter()
        .map(|kv| (kv.key.as_str(), kv.value.as_str()))
        .collect();
    assert_eq!(
        env,
        [
            ("SLURM_CPU_BIND", "verbose,mask_cpu:0x0003,0x0300"),
            ("SLURM_CPU_BIND_LIST", "0x0003,0x0300"),
            ("SLURM_CPU_BIND_TYPE", "mask_cpu:"),
            ("SLURM_CPU_BIND_VERBOSE", "verbose"),
        ]
    );
}

#[test]
fn loading_without_topology_is_refused_naming_it() {
    let node = node(false);
    let err = load(&node, &[Capability::Cpuset]).err().expect("refused");
    assert!(
        matches!(&err, LoadError::CapabilityNotGranted { capability, .. } if capability == "topology"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("task/affinity") && text.contains("topology"),
        "{text}"
    );
}

#[test]
fn pre_launch_priv_binds_through_cpuset() {
    let node = node(true);
    let plugin = load(&node, &[Capability::Topology, Capability::Cpuset]).expect("load");
    let binding = plugin
        .slurmd_launch_request(&launch(2, 1, TO_CORES, BLOCK, WHOLE))
        .unwrap();
    assert_eq!(binding.cpu_bind, "0x0101,0x1010");
    let mut step = fixtures::step(5, 0);
    step.cpu_bind_type = binding.cpu_bind_type;
    step.cpu_bind = binding.cpu_bind;
    step.cores = fixtures::bitmap(8, 0..8);
    step.local_tasks = 2;
    step.task_pids = vec![4100, 4101];
    for (local_id, pid) in [(0, 4100), (1, 4101)] {
        let task = fixtures::task(local_id, pid);
        plugin.pre_launch_priv(&step, &task).expect("bound");
        plugin.pre_launch(&step, &task).expect("pre_launch");
    }
    let bound = node.cpuset.bound.lock().unwrap().clone();
    // HT numbering: core 0 is OS CPUs 0 and 8, core 4 is 4 and 12; the
    // unprivileged pre-launch binds nothing more.
    assert_eq!(bound, [(4100, vec![0, 8]), (4101, vec![4, 12])]);
    plugin.post_step(&step).expect("post_step");
    plugin
        .slurmd_release_resources(5)
        .expect("release_resources");
    assert_eq!(
        *node.cpuset.released.lock().unwrap(),
        [(5, Some(0)), (5, None)]
    );
}

/// A process that sleeps until dropped; a task to bind.
struct Sleeper(Child);

impl Sleeper {
    fn start() -> Sleeper {
        Sleeper(
            Command::new("sleep")
                .arg("60")
                .spawn()
                .expect("spawn sleep"),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// `Cpus_allowed_list` from `/proc/<pid>/status`.
    fn cpus_allowed(&self) -> String {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .expect("Cpus_allowed_list")
            .trim()
            .to_owned()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn read(path: impl AsRef<Path>) -> String {
    let path = path.as_ref();
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Two real processes bound by task/affinity (`--cpu-bind=cores` on a
/// 1 x 2 x 1 node: OS CPUs 0 and 1, which this machine has) through a
/// cgroup v2 provider over a fake cgroupfs: each lands in its task cgroup
/// with its CPUs, and also has them as its affinity; `post-step` removes
/// the step's cgroups.
#[test]
fn binding_goes_through_step_cgroups_and_post_step_removes_them() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("cgroup.controllers"), "cpuset cpu\n").unwrap();
    std::fs::write(root.path().join("cgroup.subtree_control"), "").unwrap();
    let cpuset = CgroupCpuset::under(root.path(), "/");
    assert_eq!(cpuset.step_parent(), Ok(root.path()));
    let services = Services {
        topology: Arc::new(FixedTopology::new(1, 2, 1, false)),
        cpuset: Arc::new(cpuset),
        ..Services::default()
    };
    let host = Host::new(HostOptions {
        services,
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    let settings = PluginSettings {
        grants: [Capability::Topology, Capability::Cpuset]
            .into_iter()
            .collect(),
        ..PluginSettings::default()
    };
    let plugin = TaskPlugin::load(
        &host,
        &PluginSource::Bundled("task/affinity".into()),
        settings,
    )
    .expect("load");
    plugin.init(&fixtures::task_config()).expect("init");
    let mut request = fixtures::launch_request(9, 2, 2);
    request.cpu_bind_type = TO_CORES;
    request.task_dist = BLOCK;
    let binding = plugin.slurmd_launch_request(&request).unwrap();
    assert_eq!(binding.cpu_bind, "0x1,0x2");

    let tasks = [Sleeper::start(), Sleeper::start()];
    let mut step = fixtures::step(9, 0);
    step.cpu_bind_type = binding.cpu_bind_type;
    step.cpu_bind = binding.cpu_bind;
    step.cores = fixtures::bitmap(2, 0..2);
    step.local_tasks = 2;
    step.task_pids = tasks.iter().map(Sleeper::pid).collect();
    for (local_id, task) in (0..).zip(&tasks) {
        plugin
            .pre_launch_priv(&step, &fixtures::task(local_id, task.pid()))
            .expect("bound");
    }

    let step_dir = root.path().join("slurm-wasm/job_9/step_0");
    for level in [
        "",
        "slurm-wasm",
        "slurm-wasm/job_9",
        "slurm-wasm/job_9/step_0",
    ] {
        assert_eq!(
            read(root.path().join(level).join("cgroup.subtree_control")),
            "+cpuset"
        );
    }
    for (local_id, task) in tasks.iter().enumerate() {
        let dir = step_dir.join(format!("task_{local_id}"));
        assert_eq!(read(dir.join("cpuset.cpus")), local_id.to_string());
        assert_eq!(read(dir.join("cgroup.procs")), task.pid().to_string());
        assert_eq!(task.cpus_allowed(), local_id.to_string());
    }

    plugin.post_step(&step).expect("post_step");
    assert!(!root.path().join("slurm-wasm/job_9").exists());
}

#[test]
fn without_cpuset_binding_fails_naming_it() {
    let node = node(false);
    let plugin = load(&node, &[Capability::Topology]).expect("loads without cpuset");
    let mut step = fixtures::step(5, 0);
    step.cpu_bind_type = MASK;
    step.cpu_bind = "0x0003".into();
    step.task_pids = vec![4100];
    let err = plugin
        .pre_launch_priv(&step, &fixtures::task(0, 4100))
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("`cpuset`") && text.contains("not granted"),
        "{text}"
    );
    assert!(node.cpuset.bound.lock().unwrap().is_empty());
}

#[test]
fn identity_and_batch_binding() {
    let node = node(false);
    let plugin = load(&node, &[Capability::Topology]).expect("load");
    let id = plugin.identity();
    assert_eq!(
        (id.plugin_type.as_str(), id.plugin_name.as_str()),
        ("task/affinity", "task affinity plugin")
    );
    let mut batch = fixtures::batch_request(5, 8);
    batch.sockets = 2;
    batch.cores_per_socket = 4;
    batch.threads_per_core_conf = 2;
    batch.cpus_conf = 16;
    batch.job_cores = fixtures::bitmap(8, [1, 5]);
    let binding = plugin.slurmd_batch_request(&batch).unwrap();
    assert_eq!(
        (binding.cpu_bind_type, binding.cpu_bind.as_str()),
        (MASK, "0x0C0C")
    );
}
