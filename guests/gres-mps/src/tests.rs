use slurm_wasm_sdk::gres::EnvFlags;
use slurm_wasm_sdk::testkit::{self, fixtures};
use slurm_wasm_sdk::types::GresAllocation;
use slurm_wasm_sdk::Bitmap;

use gres_common::env::{EnvCall, Scope};
use gres_common::testkit::{env_lines, job_with_gres, node, record};
use gres_common::Settings;

use super::*;

fn settings() -> Settings {
    let mut s = Settings::plain("mps");
    s.gres_types = vec!["gpu".into(), "mps".into()];
    s
}

/// gres/mps after loading `Name=gpu File=/dev/nvidia[0-1]` on a node with
/// slurm.conf `Gres=gpu:2,mps:<shares>` and no MPS line in gres.conf.
fn two_gpus(shares: u64) -> Mps {
    testkit::reset();
    let mut mps = Mps::new(settings());
    mps.node_config_load(
        &[record(
            "gres.conf:1",
            "gpu",
            &["/dev/nvidia0", "/dev/nvidia1"],
            2,
        )],
        &node(&[("gpu", 2), ("mps", shares)]),
    )
    .unwrap();
    mps
}

/// The edits of a `job_set_env` / `step_set_env` call of `mps` (no
/// flags), as text.
fn env(mps: &Mps, scope: Scope, allocation: Option<&GresAllocation>) -> Vec<String> {
    let call = EnvCall::new(scope, allocation, None, EnvFlags::empty());
    env_lines(&mps.set_env(call).unwrap())
}

fn alloc(len: usize, gpu: usize, count: u64) -> GresAllocation {
    GresAllocation {
        name: "mps".into(),
        type_name: None,
        count,
        devices: Some(Bitmap::from_bits(len, [gpu]).into()),
        per_device: vec![count],
    }
}

// Slurm 22.05.8 src/plugins/gres/common/gres_c_s.c `_distribute_count`: a count without File is spread as remaining / GPUs left.
#[test]
fn shares_split_across_gpus() {
    assert_eq!(distribute(300, 2), [150, 150]);
    assert_eq!(distribute(301, 2), [150, 151]);
    assert_eq!(distribute(200, 3), [66, 67, 67]);
}

// Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c `_set_env` on "Example 2 of gres.conf" in Slurm 22.05.8
// doc/html/gres.shtml: counts 1300/1200/1100/1000, `--gres=mps:200` ⇒ 15 / 16 / 18 / 20
// (integer floor).
#[test]
fn percentages_of_gres_html_example_2() {
    let got: Vec<u64> = [1300, 1200, 1100, 1000]
        .iter()
        .map(|c| percentage(200, *c))
        .collect();
    assert_eq!(got, [15, 16, 18, 20]);
    // max(1, …) and 0 for a GPU without shares (Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c `_set_env`).
    assert_eq!(percentage(1, 1000), 1);
    assert_eq!(percentage(5, 0), 0);
}

// The same example through node_config_load with per-GPU File= MPS lines.
#[test]
fn percentage_from_the_per_gpu_table() {
    testkit::reset();
    let gpus = record(
        "gres.conf:1",
        "gpu",
        &[
            "/dev/nvidia0",
            "/dev/nvidia1",
            "/dev/nvidia2",
            "/dev/nvidia3",
        ],
        4,
    );
    let mut records = vec![gpus];
    for (i, c) in [1300, 1200, 1100, 1000].iter().enumerate() {
        records.push(record(
            &format!("gres.conf:{}", i + 2),
            "mps",
            &[&format!("/dev/nvidia{i}")],
            *c,
        ));
    }
    let mut mps = Mps::new(settings());
    let result = mps
        .node_config_load(&records, &node(&[("gpu", 4), ("mps", 4600)]))
        .unwrap();
    assert_eq!(mps.shared, [(0, 1300), (1, 1200), (2, 1100), (3, 1000)]);
    assert_eq!(result.records.len(), 8);
    assert_eq!(result.records[4].origin, "gres.conf:2");
    assert_eq!(result.records[4].flags, ["one_sharing", "nvidia_gpu_env"]);
    for (gpu, expected) in [(0, "15"), (1, "16"), (2, "18"), (3, "20")] {
        let out = env(&mps, Scope::Job, Some(&alloc(4, gpu, 200)));
        assert_eq!(
            out,
            [
                "SLURM_GPUS_ON_NODE=1".to_string(),
                format!("SLURM_JOB_GPUS={gpu}"),
                format!("CUDA_VISIBLE_DEVICES={gpu}"),
                format!("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE={expected}"),
            ]
        );
    }
}

// Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c `_set_env` and src/plugins/gres/common/gres_c_s.c `_distribute_count`
// (the setup of Slurm's python test_121_1, a later testsuite's): `Gres=gpu:2,mps:200`, `--gres=mps:100` on GPU 0 ⇒
// CUDA_VISIBLE_DEVICES=0, SLURM_JOB_GPUS=0, percentage 100; no MPS line in gres.conf, so
// slurm.conf's 200 is spread 100/100.
#[test]
fn test_121_1_slurm_conf_count_spread() {
    let mps = two_gpus(200);
    assert_eq!(mps.shared, [(0, 100), (1, 100)]);
    let out = env(&mps, Scope::Job, Some(&alloc(2, 0, 100)));
    assert_eq!(
        out,
        [
            "SLURM_GPUS_ON_NODE=1",
            "SLURM_JOB_GPUS=0",
            "CUDA_VISIBLE_DEVICES=0",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"
        ]
    );
    // The real index, not the 0 doc/html/gres.shtml describes: Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c
    // `_set_env` lists the GPU through src/plugins/gres/common/gres_common.c `gres_common_gpu_set_env`.
    let out = env(&mps, Scope::Step, Some(&alloc(2, 1, 50)));
    assert!(
        out.contains(&"CUDA_VISIBLE_DEVICES=1".to_string()),
        "{out:?}"
    );
    assert!(
        out.contains(&"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50".to_string()),
        "{out:?}"
    );
    // No MPS allocated: the percentage is unset.
    let out = env(&mps, Scope::Step, None);
    assert_eq!(out.last().unwrap(), "-CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
}

// Slurm 22.05.8 src/plugins/gres/common/gres_c_s.c `_merge_lists` and `_distribute_count`: one MPS line without
// File spread (301 over 2 → 150,151); `_build_shared_list`: MPS lines with and without File
// cannot be mixed; `_delete_leftovers`: an MPS line matching no GPU is discarded.
#[test]
fn mps_lines_without_file_and_mixing() {
    testkit::reset();
    let gpus = record("gres.conf:1", "gpu", &["/dev/nvidia0", "/dev/nvidia1"], 2);
    let mut mps = Mps::new(settings());
    mps.node_config_load(
        &[gpus.clone(), record("gres.conf:2", "mps", &[], 301)],
        &node(&[("gpu", 2), ("mps", 301)]),
    )
    .unwrap();
    assert_eq!(mps.shared, [(0, 150), (1, 151)]);
    let e = mps
        .node_config_load(
            &[
                gpus.clone(),
                record("gres.conf:2", "mps", &["/dev/nvidia0"], 100),
                record("gres.conf:3", "mps", &[], 100),
            ],
            &node(&[("gpu", 2), ("mps", 200)]),
        )
        .unwrap_err();
    assert_eq!(
        e.message,
        "gres.conf:3: MPS lines with File= (gres.conf:2) and without File= (gres.conf:3) cannot be mixed on node n1"
    );
    // An MPS line for a file no GPU has is discarded; that GPU's share is 0.
    let result = mps
        .node_config_load(
            &[gpus, record("gres.conf:4", "mps", &["/dev/nvidia7"], 100)],
            &node(&[("gpu", 2)]),
        )
        .unwrap();
    assert_eq!(mps.shared, [(0, 0), (1, 0)]);
    assert_eq!(
        result.warnings[0],
        "error: gres.conf:4: MPS File=/dev/nvidia7 matches no GPU on node n1; discarded"
    );
}

// Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c `gres_p_epilog_set_env`: CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS, percentage.
#[test]
fn epilog_env_with_percentage() {
    let mps = two_gpus(200);
    let job = job_with_gres(3, vec![vec![alloc(2, 1, 25)]]);
    let epilog = mps.epilog_build_env(&job).unwrap().unwrap();
    assert_eq!(
        env_lines(&epilog.set_env(0).unwrap()),
        [
            "CUDA_VISIBLE_DEVICES=1",
            "SLURM_JOB_GPUS=1",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25"
        ]
    );
    assert!(epilog.set_env(1).is_err());
}

// Slurm 22.05.8 src/plugins/gres/mps/gres_mps.c `gres_p_send_stepd`/`gres_p_recv_stepd` (src/plugins/gres/common/gres_c_s.c
// `gres_c_s_send_stepd`/`gres_c_s_recv_stepd`): the shared table travels to slurmstepd.
#[test]
fn stepd_round_trip_keeps_the_shared_table() {
    let mps = two_gpus(301);
    let mut stepd = Mps::new(settings());
    stepd.recv_stepd(&mps.send_stepd()).unwrap();
    assert_eq!(stepd.shared, [(0, 150), (1, 151)]);
    assert_eq!(stepd.devices.len(), 2);
    let mut bytes = mps.send_stepd();
    bytes.truncate(bytes.len() - 3);
    assert_eq!(
        stepd.recv_stepd(&bytes).unwrap_err().message,
        "stepd data: shared table size says 2 entries, more than the remaining bytes hold"
    );
    assert_eq!(stepd.shared, [(0, 150), (1, 151)]);
}

// A host handing gres/mps only its own records (the anchor's gres.conf:
// `Name=mps Count=100 File=…nvidia0` and `…nvidia1`): the GPUs are the
// files the MPS lines name.
#[test]
fn gpus_implied_by_mps_files() {
    testkit::reset();
    let mut mps = Mps::new(settings());
    let result = mps
        .node_config_load(
            &[
                record("gres.conf:4", "mps", &["/dev/nvidia0"], 100),
                record("gres.conf:5", "mps", &["/dev/nvidia1"], 100),
            ],
            &node(&[("gpu", 2), ("mps", 200)]),
        )
        .unwrap();
    assert_eq!(mps.shared, [(0, 100), (1, 100)]);
    assert_eq!(result.records.len(), 2);
    assert!(result.records.iter().all(|r| r.name == "mps"));
    let out = env(&mps, Scope::Job, Some(&alloc(2, 1, 50)));
    assert_eq!(
        out[2..],
        [
            "CUDA_VISIBLE_DEVICES=1",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"
        ]
    );
    // No MPS line, no gpu record: slurm.conf's gpu:2,mps:200 gives 100 each.
    mps.node_config_load(&[], &node(&[("gpu", 2), ("mps", 200)]))
        .unwrap();
    assert_eq!(mps.shared, [(0, 100), (1, 100)]);
    let out = env(&mps, Scope::Job, Some(&alloc(2, 0, 100)));
    assert_eq!(out.last().unwrap(), "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100");
}

// The export layer (the SDK's `gres::Export`, as the host calls it): calls
// before `init` fail naming the plugin, except the hardware hooks, which do
// nothing for gres/mps as in Slurm; after `init` and `node_config_load` the
// calls reach the plugin; `fini` drops the state again.
#[test]
fn export_keeps_the_state_from_init_to_fini() {
    use crate::plugin::GresMps;
    use slurm_wasm_sdk::gres::{GresConfig, GresGuest, IdentityGuest};

    testkit::reset();
    assert_eq!(GresMps::describe().plugin_type, "gres/mps");
    assert_eq!(
        GresMps::send_stepd().unwrap_err().message,
        "gres/mps: called before init"
    );
    assert!(GresMps::step_hardware_init(None, Some("gpu:high".into())).is_ok());
    assert!(GresMps::step_hardware_fini().is_ok());
    let mut config = GresConfig {
        cluster: fixtures::cluster_config(),
        auto_detect: None,
    };
    config.cluster.gres_types = vec!["gpu".into(), "mps".into()];
    GresMps::init(config).unwrap();
    GresMps::node_config_load(
        vec![record(
            "gres.conf:1",
            "gpu",
            &["/dev/nvidia0", "/dev/nvidia1"],
            2,
        )],
        node(&[("gpu", 2), ("mps", 200)]),
    )
    .unwrap();
    assert_eq!(GresMps::get_devices().unwrap().len(), 2);
    // Same edits as test_121_1 above (100 shares of GPU 1 out of 100).
    let out = GresMps::step_set_env(Some(alloc(2, 1, 100)), EnvFlags::empty()).unwrap();
    assert_eq!(
        env_lines(&out),
        [
            "SLURM_GPUS_ON_NODE=1",
            "SLURM_STEP_GPUS=1",
            "CUDA_VISIBLE_DEVICES=1",
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"
        ]
    );
    GresMps::fini().unwrap();
    assert_eq!(
        GresMps::get_devices().unwrap_err().message,
        "gres/mps: called before init"
    );
}
