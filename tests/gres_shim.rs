//! The gres shims (`gres_gpu.so`, `gres_mps.so` of `host/slurm-plugins/gres`)
//! in a real Slurm 22.05.8 (issue 27): the anchor's GPU and MPS cases
//! (`tests/anchor/gres/record.sh`) run on the live anchor cluster with
//! Debian's gres plugins and with the shims running the bundled gres/gpu and
//! gres/mps components give the same environment, variable by variable, in
//! the batch step and in the `srun` steps; and a shim that cannot start stops
//! slurmd with its own line instead of letting Slurm load Debian's plugin
//! from the next PluginDir entry.
//!
//! The test builds the shims with the project's own scripts
//! (`host/slurm-plugins/get-slurm-source.sh`, its Makefile), installs them
//! with the `libslurm_wasm.so` cargo built for this run into a temporary
//! PluginDir, writes the bundled components as `.wasm` files beside a host
//! configuration, and runs `tests/anchor/gres/shim.sh`. What is compared, per
//! case: the `[batch env]` and `[step env]` sections (the filtered, sorted
//! environment of the batch script and of every task of its step, one
//! variable a line); job ids and times are not compared. The expectation is
//! Debian's own plugins on the same cluster in the same run of the test.
//!
//! Then bad input: slurmd started on a missing library, a host
//! configuration naming a missing `.wasm`, a component of another kind in
//! the gres slot, and gres/mps in the gres/gpu slot each stop with one
//! `error: gres/gpu:` line naming what is wrong and the shim's fatal line,
//! while a slurmd running Debian's plugin would keep running.
//!
//! It needs root, the anchor's scripts beside the repository and Slurm's
//! packages installed (`.ci/run` installs them); elsewhere it says why it
//! does not run and passes. About 3 minutes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::live_slurm;

use live_slurm::{
    anchor_dir, build_and_install, differences, read, run, skip_reason, tail, ClusterLock, REPO,
};

/// Writes bundled plugin `plugin_type` into `work` as `file`.
fn write_wasm(work: &Path, plugin_type: &str, file: &str) {
    let plugin =
        slurm_wasm_bundled::find(plugin_type).unwrap_or_else(|| panic!("{plugin_type} is bundled"));
    std::fs::write(work.join(file), plugin.bytes).unwrap();
}

/// A host configuration with `gpu` and `mps` as the `.wasm` files of the
/// two gres slots.
fn host_config(gpu: &str, mps: &str) -> String {
    format!(
        "cache_dir = \"cache\"\n[plugins.gres.gpu]\nwasm = \"{gpu}\"\n\
         [plugins.gres.mps]\nwasm = \"{mps}\"\n"
    )
}

/// The host configuration of the comparison, and those slurmd must refuse
/// with what its error line must say.
fn write_configs(work: &Path) -> (PathBuf, Vec<(PathBuf, &'static str)>) {
    write_wasm(work, "gres/gpu", "gres_gpu.wasm");
    write_wasm(work, "gres/mps", "gres_mps.wasm");
    write_wasm(work, "priority/basic", "priority_basic.wasm");
    let wasm = work.join("gres.toml");
    std::fs::write(&wasm, host_config("gres_gpu.wasm", "gres_mps.wasm")).unwrap();
    let bad = [
        ("missing-wasm", "missing.wasm", "missing.wasm"),
        ("wrong-kind", "priority_basic.wasm", "priority_basic.wasm"),
        // the shim's own check: a gres component manages its GRES only
        ("wrong-gres", "gres_mps.wasm", "runs gres/mps"),
    ];
    let bad = bad
        .into_iter()
        .map(|(name, gpu, says)| {
            let path = work.join(format!("{name}.toml"));
            std::fs::write(&path, host_config(gpu, "gres_mps.wasm")).unwrap();
            (path, says)
        })
        .collect();
    (wasm, bad)
}

/// The environment sections of a case file: the lines from `[batch env]` up
/// to `[scontrol show job -d]` (the batch script's variables, then
/// `[step env]` and every task's, labelled by task); a case that stayed
/// pending beside its holder has none and gives its first line.
fn env_sections(case: &str) -> String {
    let lines: Vec<&str> = case.lines().collect();
    if let Some(p) = lines.iter().find(|l| l.starts_with("[pending")) {
        return format!("{p}\n");
    }
    let start = lines
        .iter()
        .position(|l| *l == "[batch env]")
        .unwrap_or_else(|| panic!("no [batch env] section:\n{case}"));
    let end = lines
        .iter()
        .position(|l| *l == "[scontrol show job -d]")
        .unwrap_or(lines.len());
    lines[start..end].iter().map(|l| format!("{l}\n")).collect()
}

/// How many variables a section text holds (lines with `=`).
fn variables(section: &str) -> usize {
    section.lines().filter(|l| l.contains('=')).count()
}

#[test]
fn gres_shims_give_debians_environments_live_and_refuse_bad_input() {
    let anchor = anchor_dir();
    let _cluster = ClusterLock::acquire();
    if let Some(reason) = skip_reason(&anchor) {
        eprintln!("gres_shim: not run: {reason}");
        return;
    }
    let work = tempfile::tempdir().expect("a temporary directory");
    let work = work.path();
    let plugin_dir = work.join("plugins");
    build_and_install(work, &plugin_dir, &["gres_gpu", "gres_mps"]);
    let (wasm_config, bad) = write_configs(work);
    let bad_list: Vec<String> = bad.iter().map(|(p, _)| p.display().to_string()).collect();
    let out = work.join("out");
    let log = run(
        Command::new("bash")
            .arg(Path::new(REPO).join("tests/anchor/gres/shim.sh"))
            .env("SLURM_ANCHOR", &anchor)
            .env("PLUGINDIR", &plugin_dir)
            .env("WASM_CONFIG", &wasm_config)
            .env("BAD_CONFIGS", bad_list.join(" "))
            .env("OUT", &out),
        "tests/anchor/gres/shim.sh",
    );
    eprintln!("{}", tail(&log, 8));

    // The same environment, case by case (the cases of record.sh).
    let mut cases: Vec<PathBuf> = std::fs::read_dir(out.join("stock"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("case-")
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 11, "too few cases recorded: {cases:?}");
    let (mut compared, mut all) = (0, String::new());
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let stock = env_sections(&read(case));
        let wasm = env_sections(&read(&out.join("wasm").join(&name)));
        assert_eq!(
            stock,
            wasm,
            "{name}: the environment differs between Debian's gres plugins and the shims:\n{}",
            differences(&stock, &wasm)
        );
        compared += variables(&stock);
        all += &stock;
    }
    // Debian's plugins set what the comparison is about.
    for var in [
        "CUDA_VISIBLE_DEVICES=",
        "SLURM_JOB_GPUS=",
        "SLURM_STEP_GPUS=",
        "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=",
    ] {
        assert!(all.contains(var), "no case sets {var}:\n{all}");
    }
    eprintln!(
        "gres_shim: {} cases, {compared} variables, equal",
        cases.len()
    );

    // The shims ran the components (slurmd and slurmstepd log to
    // slurmd-n1.log), and no call failed.
    let slurmd = read(&out.join("wasm/logs/slurmd-n1.log"));
    for plugin in ["gres/gpu", "gres/mps"] {
        assert!(
            slurmd.contains(&format!("{plugin}: running {plugin}")),
            "slurmd-n1.log does not show {plugin} running:\n{}",
            tail(&slurmd, 30)
        );
    }
    for line in slurmd.lines() {
        assert!(
            !line.contains("error: gres/gpu:") && !line.contains("error: gres/mps:"),
            "the shim logged: {line}"
        );
    }

    // Bad input: slurmd stops (a slurmd that loaded Debian's plugin would
    // still run at the timeout, exit 124) with one line saying what is
    // wrong, then the shim's fatal line.
    let mut bad_cases: Vec<(String, &str)> =
        vec![("no-library".into(), "cannot load the slurm-wasm library")];
    bad_cases.extend(bad.iter().map(|(path, says)| {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        (name, *says)
    }));
    for (case, says) in bad_cases {
        let text = read(&out.join("bad").join(format!("{case}.txt")));
        assert!(
            !text.starts_with("exit=0\n") && !text.starts_with("exit=124\n"),
            "{case}: slurmd did not stop:\n{text}"
        );
        assert!(
            text.lines()
                .any(|l| l.contains("error: gres/gpu:") && l.contains(says)),
            "{case}: no error line saying `{says}`:\n{text}"
        );
        assert!(
            text.contains("fatal: gres/gpu: cannot run the configured gres component"),
            "{case}: not the shim's fatal line:\n{text}"
        );
    }
}
