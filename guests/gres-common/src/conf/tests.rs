use slurm_wasm_sdk::gres::{GresConfRecord, NodeHardware};
use slurm_wasm_sdk::Bitmap;

use super::*;
use crate::settings::{AutoDetect, Settings};
use crate::testkit::record;

/// 2 sockets × 4 cores × 2 threads, slurm.conf `Gres=gpu:4`.
fn node() -> NodeHardware {
    crate::testkit::node(&[("gpu", 4)])
}

fn settings() -> Settings {
    let mut s = Settings::plain("gpu");
    s.gres_types.push("mps".into());
    s
}

fn err(records: &[GresConfRecord]) -> String {
    validate(records, &node(), &settings()).unwrap_err().message
}

// Slurm 22.05.8 src/common/gres.c `_parse_gres_config` Name: must be in slurm.conf GresTypes
// (22.05.8 drops such a record with an error; refused here, naming the line).
#[test]
fn unknown_name_names_the_line() {
    let e = err(&[record("gres.conf:3", "nic", &["/dev/nic0"], 1)]);
    assert!(
        e.starts_with("gres.conf:3: Name=nic is not a GRES type"),
        "{e}"
    );
    assert!(e.contains("GresTypes=gpu,mps"), "{e}");
}

// Slurm 22.05.8 src/common/gres.c `_parse_gres_config` Count: with File, must equal the number of files for gpu.
#[test]
fn count_must_match_the_files() {
    let e = err(&[record(
        "gres.conf:2",
        "gpu",
        &["/dev/nvidia0", "/dev/nvidia1"],
        3,
    )]);
    assert!(
        e.starts_with("gres.conf:2: Count=3 does not match File= (2 device files)"),
        "{e}"
    );
    // ...except for mps, where Count is the number of shares (Slurm 22.05.8 src/common/gres.c `_parse_gres_config`).
    let ok = validate(
        &[record("gres.conf:4", "mps", &["/dev/nvidia0"], 100)],
        &node(),
        &settings(),
    );
    assert_eq!(ok.unwrap()[0].count, 100);
}

// Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_node_config_load`: duplicate file names fail the
// load, which src/plugins/gres/gpu/gres_gpu.c `gres_p_node_config_load` makes fatal.
#[test]
fn duplicate_files_name_both_lines() {
    let e = err(&[
        record("gres.conf:1", "gpu", &["/dev/nvidia0", "/dev/nvidia1"], 2),
        record("gres.conf:2", "gpu", &["/dev/nvidia1"], 1),
    ]);
    assert_eq!(
        e,
        "gres.conf:2: File=/dev/nvidia1 is already used by gres.conf:1; each gpu device file may appear once"
    );
}

// Slurm 22.05.8 src/common/gres.c `_parse_gres_config` Cores: core ids the node lacks are fatal.
// Whole sockets are what doc/man/man5/gres.conf.5 advises; 22.05.8 accepts part of a socket,
// this project refuses it.
#[test]
fn cores_outside_the_node_or_partial_sockets_are_refused() {
    let mut r = record("gres.conf:5", "gpu", &["/dev/nvidia0"], 1);
    r.cores = Some((&Bitmap::from_bits(9, [8])).into());
    let e = err(&[r.clone()]);
    assert!(e.starts_with("gres.conf:5: Cores=8 names core 8, but node n1 has only 8 cores (expected core ids 0-7)"), "{e}");
    r.cores = Some((&Bitmap::from_bits(8, [0, 1])).into());
    let e = err(&[r.clone()]);
    assert!(
        e.starts_with("gres.conf:5: Cores=0-1 covers only part of socket 0 (cores 0-3)"),
        "{e}"
    );
    r.cores = Some((&Bitmap::from_bits(8, [4, 5, 6, 7])).into());
    let ok = validate(&[r], &node(), &settings()).unwrap();
    assert_eq!(ok[0].cores.as_ref().unwrap().to_ranges(), "4-7");
}

// Slurm 22.05.8 src/common/gres.c `gres_links_validate` (from `_parse_gres_config`) Links:
// integers >= -2 (22.05.8 ignores bad Links with an error; refused here); one device per
// line, as doc/man/man5/gres.conf.5 says.
#[test]
fn links_syntax_and_single_device() {
    let mut r = record("gres.conf:7", "gpu", &["/dev/nvidia0"], 1);
    r.links = Some("-1,2,x".into());
    assert!(err(&[r.clone()]).starts_with("gres.conf:7: Links=-1,2,x: `x` is not an integer"));
    r.links = Some("-1,-3".into());
    assert!(err(&[r.clone()]).starts_with("gres.conf:7: Links=-1,-3: value -3 is invalid"));
    r.links = Some("-1,2".into());
    assert_eq!(
        validate(&[r.clone()], &node(), &settings()).unwrap()[0].links,
        Some(vec![-1, 2])
    );
    let mut two = record("gres.conf:8", "gpu", &["/dev/nvidia1", "/dev/nvidia2"], 2);
    two.links = Some("2,-1".into());
    assert!(
        err(&[two]).starts_with("gres.conf:8: Links=2,-1 needs a line describing a single device")
    );
}

// Slurm 22.05.8 src/common/gres.c `gres_flags_parse` (from `_parse_gres_config`) Flags: known
// words only here (env_uuid is 26.x, unknown in 22.05); 22.05.8 looks for known words as
// substrings and ignores the rest.
#[test]
fn flags_tokens() {
    let mut r = record("gres.conf:9", "gpu", &["/dev/nvidia0"], 1);
    r.flags = vec!["env_uuid".into()];
    assert!(err(&[r.clone()]).starts_with("gres.conf:9: invalid Flags=env_uuid"));
    r.flags = vec!["nvidia_gpu_env,Explicit".into()];
    let f = validate(&[r], &node(), &settings()).unwrap()[0].flags;
    assert_eq!(f.env, Some(EnvVendors::NVIDIA));
    assert!(f.explicit);
}

// Slurm 22.05.8 src/common/gres.c `_parse_gres_config` Type: typed GPUs need File unless detected.
#[test]
fn typed_gpu_without_file() {
    let mut r = record("gres.conf:4", "gpu", &[], 2);
    r.type_name = Some("tesla".into());
    assert!(err(&[r.clone()]).starts_with("gres.conf:4: Type=tesla needs File="));
    let mut s = settings();
    s.auto_detect = AutoDetect::Nvml;
    assert!(validate(&[r], &node(), &s).is_ok());
}

// Slurm 22.05.8 src/common/gres.c `_parse_gres_config` Flags: a line without env flags inherits those of the previous
// line of the same name and type.
#[test]
fn env_flags_are_inherited() {
    let mut a = record("gres.conf:1", "gpu", &["/dev/nvidia0"], 1);
    a.flags = vec!["amd_gpu_env".into()];
    let b = record("gres.conf:2", "gpu", &["/dev/nvidia1"], 1);
    let mut c = record("gres.conf:3", "gpu", &["/dev/nvidia2"], 1);
    c.type_name = Some("k80".into());
    let mut out = validate(&[a, b, c], &node(), &settings()).unwrap();
    assert_eq!(out[1].flags.env, Some(EnvVendors::AMD));
    assert_eq!(out[2].flags.env, None);
    default_env(&mut out, None);
    assert_eq!(out[2].flags.env, Some(EnvVendors::ALL));
    assert_eq!(node_env(&out, "gpu"), EnvVendors::ALL);
}

// Slurm 22.05.8 src/common/gres.c `_node_config_validate`: slurm.conf `Gres=` gives the expected
// counts ("count reported lower than configured").
#[test]
fn slurm_conf_count_check() {
    let out = validate(
        &[record(
            "gres.conf:1",
            "gpu",
            &["/dev/nvidia0", "/dev/nvidia1"],
            2,
        )],
        &node(),
        &settings(),
    )
    .unwrap();
    let mut warnings = Vec::new();
    let e = check_total("gpu", &out, &node(), &mut warnings)
        .unwrap_err()
        .message;
    assert!(
        e.starts_with("gres/gpu count reported lower than configured (2 < 4) on node n1"),
        "{e}"
    );
    assert!(e.contains("gres.conf (gres.conf:1) gives 2"), "{e}");
    let mut n = node();
    n.configured[0].count = 1;
    check_total("gpu", &out, &n, &mut warnings).unwrap();
    assert_eq!(
        warnings,
        vec![
            "gres/gpu count too high for node n1 (2 > 1): slurm.conf Gres= configures 1"
                .to_string()
        ]
    );
}
