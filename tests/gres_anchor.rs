//! gres/gpu and gres/mps against real Slurm 22.05.8 (issue 5, "Must show":
//! the environment the anchor gives jobs, steps and tasks).
//!
//! `tests/anchor/gres/record.sh` ran batch jobs on the anchor's `big`
//! partition (n[1-4]: gpu:2 + mps:200; gres.conf without AutoDetect or env
//! flags, GPU 0 on cores 0-1 and GPU 1 on cores 2-3, 100 MPS shares per
//! GPU) and recorded, for each, the batch script's GPU variables, every
//! task's variables in an `srun --label` step, and the job's allocation
//! (`GRES=gpu:1(IDX:0)` per node). `anchor_gres` parses it.
//!
//! The replay loads the bundled gres/gpu and gres/mps, gives each the
//! recorded node's gres.conf records (`node-config-load`, from
//! `gres_conf`), and rebuilds the environment the way slurmstepd does, in
//! `GresTypes` order (gpu, then mps):
//!
//! * batch: `job-set-env` with the job's allocation on the batch host
//!   (the first node), or none for a plugin whose GRES the job lacks;
//! * step, per task: the batch environment (srun inherits it), then
//!   `step-set-env` with the step's allocation on the task's node, then
//!   `task-set-env` with the devices the task may use.
//!
//! gres/mps gets `protect-env` when the job (or step) also holds GPUs on the
//! node, so that it does not unset what gres/gpu set (Slurm's
//! `GRES_INTERNAL_FLAG_PROTECT_ENV`). What is outside the plugins' API is
//! taken from the recording, as slurmctld and slurmstepd decided it: the
//! step's devices (a step's `--gres=gpu:1` inside a two-GPU job got device
//! 0, the lowest), the node of each task (block distribution: tasks 0..k on
//! the first node), and a task's usable devices under `--gpus-per-task=N`,
//! which 22.05 binds as `--gpu-bind=per_task:N` (local task i gets the
//! allocation's devices i*N .. i*N+N-1). `SLURM_GPUS_PER_TASK` is set by
//! sbatch from its option, not by a gres plugin, and is left out.
//!
//! Every variable matching `CUDA|GPU|SLURM_.*GPU|ROCR|ZE_AFFINITY|MPS` must
//! have the recorded value, and no other must be set.

use crate::anchor_gres;

use std::collections::BTreeMap;
use std::path::Path;

use anchor_gres::{Case, Outcome};
use slurm::gres_conf;
use slurm::setup::records::Cluster;
use slurm::slurm_conf::{self, SlurmConf};
use slurm_wasm_host::fixtures::{bitmap, bits};
use slurm_wasm_host::kinds::gres::{EnvChange, EnvFlags, NodeAllocation, NodeHardware};
use slurm_wasm_host::types::{Bitmap, GresAllocation};
use slurm_wasm_host::{GresPlugin, Host, PluginSettings, PluginSource};

type Env = BTreeMap<String, String>;

/// Variables set by sbatch/srun from their options, not by gres plugins.
const NOT_FROM_PLUGINS: [&str; 1] = ["SLURM_GPUS_PER_TASK"];

struct Plugins {
    /// (GRES name, plugin), in GresTypes order.
    plugins: Vec<(String, GresPlugin)>,
    cluster: Cluster,
}

fn load(dir: &Path) -> (Host, Plugins) {
    let path = dir.join("slurm.conf");
    let conf: SlurmConf = slurm_conf::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let cluster = Cluster::from_slurm_conf(&conf).unwrap_or_else(|e| panic!("{e}"));
    let gres = gres_conf::find(&path, Some(&dir.join("gres.conf")))
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("the recording has a gres.conf");
    let per_node = gres.nodes(&conf).unwrap_or_else(|e| panic!("{e}"));
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let mut plugins = Vec::new();
    for name in conf.gres_types() {
        let plugin_type = format!("gres/{name}");
        assert!(
            slurm_wasm_bundled::find(&plugin_type).is_some(),
            "{plugin_type} is not bundled in this build (host/src/bundled.rs)"
        );
        let plugin = GresPlugin::load(
            &host,
            &PluginSource::Bundled(plugin_type.clone()),
            PluginSettings::default(),
        )
        .unwrap_or_else(|e| panic!("{plugin_type}: {e}"));
        let mut config = cluster.gres_config();
        config.auto_detect = per_node[0].auto_detect.clone();
        plugin
            .init(&config)
            .unwrap_or_else(|e| panic!("{plugin_type}: init: {e}"));
        // Every case ran on n1 or n2, which share one gres.conf line set; the
        // slurmd of the batch host loads its own node's records.
        let node = &cluster.nodes[0];
        let hardware = NodeHardware {
            name: node.name.clone(),
            cpus: node.cpus,
            sockets: node.sockets,
            cores_per_socket: node.cores_per_socket,
            threads_per_core: node.threads_per_core,
            configured: node.gres.clone(),
        };
        plugin
            .node_config_load(&per_node[0].records_for(&name), &hardware)
            .unwrap_or_else(|e| panic!("{plugin_type}: node-config-load: {e}"));
        plugins.push((name, plugin));
    }
    (host, Plugins { plugins, cluster })
}

fn apply(env: &mut Env, changes: Vec<EnvChange>) {
    for change in changes {
        match change {
            EnvChange::Set(kv) => {
                env.insert(kv.key, kv.value);
            }
            EnvChange::Unset(key) => {
                env.remove(&key);
            }
        }
    }
}

fn relevant(env: &Env) -> Env {
    let gpu_like = |k: &str| {
        k.contains("CUDA")
            || k.contains("GPU")
            || k.starts_with("ROCR")
            || k.starts_with("ZE_AFFINITY")
            || k.contains("MPS")
    };
    env.iter()
        .filter(|(k, _)| gpu_like(k) && !NOT_FROM_PLUGINS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `gpu:2(IDX:0-1)` / `mps:50(IDX:1)` entries of a node, by GRES name.
fn allocations(gres: &str, devices_on_node: u32) -> BTreeMap<String, GresAllocation> {
    gres.split(',')
        .filter(|g| !g.is_empty())
        .map(|g| {
            let (head, idx) = g.split_once("(IDX:").expect("GRES=name:count(IDX:..)");
            let (name, count) = head.rsplit_once(':').expect("GRES=name:count");
            let count: u64 = count.parse().expect("GRES count");
            let devices: Vec<u32> = anchor_gres::ids(idx.trim_end_matches(')'));
            let per_device = if name == "gpu" {
                vec![1; devices.len()]
            } else {
                vec![count / devices.len() as u64; devices.len()]
            };
            (
                name.to_owned(),
                GresAllocation {
                    name: name.to_owned(),
                    type_name: None,
                    count,
                    devices: Some(bitmap(devices_on_node, devices)),
                    per_device,
                },
            )
        })
        .collect()
}

/// The first `n` devices of an allocation (a step's `--gres=gpu:n`).
fn first_devices(a: &GresAllocation, n: u64) -> GresAllocation {
    let devices: Vec<u32> = a
        .devices
        .as_ref()
        .map(bits)
        .unwrap_or_default()
        .into_iter()
        .take(n as usize)
        .collect();
    GresAllocation {
        count: n,
        per_device: vec![1; devices.len()],
        devices: Some(bitmap(a.devices.as_ref().map_or(0, |d| d.len), devices)),
        ..a.clone()
    }
}

fn usable_per_task(a: &GresAllocation, local_task: u32, per_task: u32) -> Bitmap {
    let devices = a.devices.as_ref().map(bits).unwrap_or_default();
    let n = devices.len() as u32;
    let chosen = (0..per_task).map(|k| devices[((local_task * per_task + k) % n) as usize]);
    bitmap(a.devices.as_ref().map_or(0, |d| d.len), chosen)
}

fn check_case(p: &Plugins, case: &Case) -> Vec<String> {
    let Outcome::Ran {
        batch,
        tasks,
        nodes,
    } = &case.outcome
    else {
        return Vec::new();
    };
    let gpus_on_node = p.cluster.nodes[0]
        .gres
        .iter()
        .find(|g| g.name == "gpu")
        .map_or(0, |g| g.count) as u32;
    let mut differences = Vec::new();
    let flags_for = |name: &str, held: &BTreeMap<String, GresAllocation>| {
        if name != "gpu" && held.contains_key("gpu") {
            EnvFlags::PROTECT_ENV
        } else {
            EnvFlags::empty()
        }
    };

    // Batch host: the first node.
    let held = allocations(&nodes[0].1, gpus_on_node);
    let mut job_env = Env::new();
    for (name, plugin) in &p.plugins {
        let changes = plugin
            .job_set_env(held.get(name), flags_for(name, &held))
            .unwrap_or_else(|e| panic!("{}: job-set-env: {e}", case.name));
        apply(&mut job_env, changes);
    }
    let expected = relevant(batch);
    if relevant(&job_env) != expected {
        differences.push(format!(
            "{} batch: Slurm {expected:?}; ours {:?}",
            case.name,
            relevant(&job_env)
        ));
    }

    // Step tasks, block distribution over the job's nodes.
    let per_node = tasks.len() as u32 / nodes.len() as u32;
    for (task, recorded) in tasks.iter().enumerate() {
        let task = task as u32;
        let node = (task / per_node) as usize;
        let local = task % per_node;
        let mut held = allocations(&nodes[node].1, gpus_on_node);
        if let Some(n) = case.step_gpus {
            let gpu = first_devices(&held["gpu"], n);
            held.insert("gpu".into(), gpu);
        }
        // srun inherits the batch script's environment, from the batch host,
        // whichever node the task runs on.
        let mut env = job_env.clone();
        for (name, plugin) in &p.plugins {
            let flags = flags_for(name, &held);
            let step = held.get(name);
            apply(
                &mut env,
                plugin
                    .step_set_env(step, flags)
                    .unwrap_or_else(|e| panic!("{}: step-set-env: {e}", case.name)),
            );
            let usable = match (case.gpus_per_task, step) {
                (Some(n), Some(a)) if name == "gpu" => Some(usable_per_task(a, local, n)),
                _ => None,
            };
            let allocation = step.map(|a| NodeAllocation {
                allocation: a.clone(),
                usable,
            });
            apply(
                &mut env,
                plugin
                    .task_set_env(allocation.as_ref(), flags)
                    .unwrap_or_else(|e| panic!("{}: task-set-env: {e}", case.name)),
            );
        }
        let ours = relevant(&env);
        let expected = relevant(recorded);
        if ours != expected {
            differences.push(format!(
                "{} task {task}: Slurm {expected:?}; ours {ours:?}",
                case.name
            ));
        }
    }
    differences
}

#[test]
fn environments_match_the_anchor() {
    let cases = anchor_gres::load_all().unwrap_or_else(|e| panic!("{e}"));
    let (_host, plugins) = load(&anchor_gres::fixture_dir());
    let differences: Vec<String> = cases.iter().flat_map(|c| check_case(&plugins, c)).collect();
    assert!(
        differences.is_empty(),
        "{} differences from real Slurm:\n  {}",
        differences.len(),
        differences.join("\n  ")
    );
}

/// The fixtures parse into what the recording promised.
#[test]
fn recordings_parse() {
    let cases = anchor_gres::load_all().unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        // File name order (`case-gpu1-second.txt` sorts before `case-gpu1.txt`).
        [
            "gpu1-second",
            "gpu1",
            "gpu2",
            "gpus-per-task-N2-n4",
            "gpus-per-task-n2",
            "gpus2-n2-step-gpu1",
            "mps100",
            "mps30-n2",
            "mps50-beside-gpu",
            "mps50-second",
            "mps50",
        ]
    );
    let per_task = cases
        .iter()
        .find(|c| c.name == "gpus-per-task-N2-n4")
        .expect("case");
    assert_eq!(per_task.options, ["-N2", "-n4", "--gpus-per-task=1"]);
    assert_eq!(per_task.gpus_per_task, Some(1));
    let Outcome::Ran { tasks, nodes, .. } = &per_task.outcome else {
        panic!("gpus-per-task-N2-n4 ran")
    };
    assert_eq!(tasks.len(), 4);
    assert_eq!(nodes.len(), 2);
    // Task 3 (second task on n2) was bound to GPU 1.
    assert_eq!(
        tasks[3].get("CUDA_VISIBLE_DEVICES").map(String::as_str),
        Some("1")
    );
    // case-gpu1-second.txt: with another job holding GPU 0 of n1, the job
    // got GPU 1 and saw CUDA_VISIBLE_DEVICES=1.
    let second = cases
        .iter()
        .find(|c| c.name == "gpu1-second")
        .expect("case");
    let Outcome::Ran { batch, nodes, .. } = &second.outcome else {
        panic!("gpu1-second ran")
    };
    assert_eq!(nodes, &[("n1".to_owned(), "gpu:1(IDX:1)".to_owned())]);
    assert_eq!(
        batch.get("CUDA_VISIBLE_DEVICES").map(String::as_str),
        Some("1")
    );
    // case-mps50-second.txt: beside a job holding mps:100 on n1, a
    // `--gres=mps:50 -w n1` job stayed pending.
    let pending = cases
        .iter()
        .find(|c| c.name == "mps50-second")
        .expect("case");
    assert!(matches!(pending.outcome, Outcome::Pending));
}
