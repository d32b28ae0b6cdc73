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
//! `GRES_INTERNAL_FLAG_PROTECT_ENV`). What is outside the plugins' API
//! comes from slurmctld's and slurmstepd's side: the job's devices from the
//! recorded allocation; the step's from the controller's step allocation
//! (`slurm::step::gres_devices`: the job's devices beside the step's cores
//! first, in index order; a step's `--gres=mps:N` takes N shares of one
//! device); the node of each task (block distribution: tasks 0..k on the
//! first node; the fuzz draws task counts that are multiples of the node
//! count); and a task's usable devices under `--gpus-per-task=N`, which
//! 22.05 binds as `--gpu-bind=per_task:N` (local task i gets the
//! allocation's devices i*N .. i*N+N-1). `SLURM_GPUS_PER_TASK`,
//! `SLURM_GPUS_PER_NODE` and `SLURM_GPUS` are set by sbatch from its
//! options, not by a gres plugin, and are left out.
//!
//! `fuzzed_environments_match_the_anchor` replays
//! `tests/fixtures/anchor/gres-fuzz/` (issue 30: 60 jobs drawn by
//! `tests/anchor/gres/fuzz.py --seed 1`, 52 ran; 852 variables, all
//! identical; it found the step's device choice beside its cores).
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

/// Variables set by sbatch/srun from their options, not by gres plugins
/// (`--gpus-per-task`, `--gpus-per-node`, `--gpus`: common/env.c
/// `env_array_for_batch_job`/`setup_env`).
const NOT_FROM_PLUGINS: [&str; 3] = ["SLURM_GPUS_PER_TASK", "SLURM_GPUS_PER_NODE", "SLURM_GPUS"];

struct Plugins {
    /// (GRES name, plugin), in GresTypes order.
    plugins: Vec<(String, GresPlugin)>,
    cluster: Cluster,
    /// Each GRES's devices on the recorded nodes, in index order: the
    /// cores gres.conf binds them to (`Cores=`, none for any core).
    device_cores: BTreeMap<String, Vec<Option<Bitmap>>>,
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
    let mut device_cores = BTreeMap::new();
    for name in conf.gres_types() {
        let cores: Vec<Option<Bitmap>> = per_node[0]
            .records_for(&name)
            .iter()
            .flat_map(|r| r.files.iter().map(|_| r.cores.clone()))
            .collect();
        device_cores.insert(name.clone(), cores);
        let plugin_type = format!("gres/{name}");
        assert!(
            slurm_wasm_bundled::find(&plugin_type).is_some(),
            "{plugin_type} is not bundled in this build (host/runtime/src/bundled.rs)"
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
    (
        host,
        Plugins {
            plugins,
            cluster,
            device_cores,
        },
    )
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

/// A step's part of a job's allocation on a node: the `picked` devices, one
/// unit each, or for a shared GRES `n` shares of the one picked device.
fn step_share(a: &GresAllocation, picked: &[u32], n: u64, shared: bool) -> GresAllocation {
    GresAllocation {
        count: if shared { n } else { picked.len() as u64 },
        per_device: if shared {
            vec![n; picked.len()]
        } else {
            vec![1; picked.len()]
        },
        devices: Some(bitmap(
            a.devices.as_ref().map_or(0, |d| d.len),
            picked.iter().copied(),
        )),
        ..a.clone()
    }
}

fn usable_per_task(a: &GresAllocation, local_task: u32, per_task: u32) -> Bitmap {
    let devices = a.devices.as_ref().map(bits).unwrap_or_default();
    let n = devices.len() as u32;
    let chosen = (0..per_task).map(|k| devices[((local_task * per_task + k) % n) as usize]);
    bitmap(a.devices.as_ref().map_or(0, |d| d.len), chosen)
}

/// The differences between Slurm's and our environments of one case, and
/// how many variables were compared (batch and every task).
fn check_case(p: &Plugins, case: &Case) -> (usize, Vec<String>) {
    let Outcome::Ran {
        batch,
        tasks,
        nodes,
        cpu_ids,
    } = &case.outcome
    else {
        return (0, Vec::new());
    };
    let mut compared = 0;
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
    compared += expected.len();
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
        if let Some((name, n)) = &case.step_gres {
            // The step holds the job's cores on the node; slurmctld picks
            // its devices (slurm::step::gres_devices).
            let tpc = u32::from(p.cluster.nodes[0].threads_per_core.max(1));
            let step_cores: Vec<u32> = cpu_ids[node].iter().map(|c| c / tpc).collect();
            let cores = &p.device_cores[name.as_str()];
            let local = |d: u32| {
                cores
                    .get(d as usize)
                    .and_then(Option::as_ref)
                    .is_none_or(|c| step_cores.iter().any(|&k| bits(c).contains(&k)))
            };
            let job = &held[name.as_str()];
            let free = job.devices.as_ref().map(bits).unwrap_or_default();
            let shared = name != "gpu";
            let picked = slurm::step::gres_devices(&free, local, *n, shared);
            held.insert(name.clone(), step_share(job, &picked, *n, shared));
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
        compared += expected.len();
        if ours != expected {
            differences.push(format!(
                "{} task {task}: Slurm {expected:?}; ours {ours:?}",
                case.name
            ));
        }
    }
    (compared, differences)
}

/// Replays every case of a recording; returns (cases that ran, variables
/// compared) after asserting that none differs.
fn check_recording(dir: &Path) -> (usize, usize) {
    let cases = anchor_gres::load_all(dir).unwrap_or_else(|e| panic!("{e}"));
    let (_host, plugins) = load(dir);
    let mut compared = 0;
    let mut differences = Vec::new();
    for case in &cases {
        let (n, d) = check_case(&plugins, case);
        compared += n;
        differences.extend(d);
    }
    assert!(
        differences.is_empty(),
        "{}: {} differences from real Slurm:\n  {}",
        dir.display(),
        differences.len(),
        differences.join("\n  ")
    );
    let ran = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Ran { .. }))
        .count();
    (ran, compared)
}

#[test]
fn environments_match_the_anchor() {
    let (ran, compared) = check_recording(&anchor_gres::fixture_dir());
    assert!(
        ran >= 10 && compared > 100,
        "{ran} cases, {compared} variables"
    );
}

/// Issue 30's differential fuzzing: `FUZZ_SEED=1 bash
/// tests/anchor/gres/record.sh` recorded the GPU and MPS jobs and steps
/// `tests/anchor/gres/fuzz.py` drew (the command is in its `fuzz.txt`).
#[test]
fn fuzzed_environments_match_the_anchor() {
    let dir = anchor_gres::fixture_dir().with_file_name("gres-fuzz");
    let (ran, compared) = check_recording(&dir);
    eprintln!("gres-fuzz: {ran} jobs ran, {compared} variables compared, all identical");
    assert!(ran >= 40, "only {ran} fuzzed jobs ran");
}

/// The fixtures parse into what the recording promised.
#[test]
fn recordings_parse() {
    let cases =
        anchor_gres::load_all(&anchor_gres::fixture_dir()).unwrap_or_else(|e| panic!("{e}"));
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
