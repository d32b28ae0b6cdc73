//! The priority/wasm shim plugin in a real Slurm 22.05.8 (issue 27): the
//! same stream on the live anchor cluster (`../shared/slurm-anchor`) under
//! stock priority/multifactor and under priority/wasm with
//! priority_multifactor.wasm gives the same `sprio` and `sshare`; a component
//! that loops, traps or grows its memory without end leaves slurmctld scheduling.
//!
//! The test builds the shim with the project's own scripts
//! (`host/slurm-plugins/get-slurm-source.sh`, its Makefile), installs it with
//! the `libslurm_wasm.so` cargo built for this run into a temporary
//! PluginDir, and runs `tests/anchor/priority/shim.sh`, which says how both
//! runs are made to see the same usage and ages (one recorded stream, the
//! controller state restored for each run, ages past PriorityMaxAge, the
//! saved decay time moved past the first pass). What is compared, at the
//! first and second pass of each run (one PriorityCalcPeriod apart):
//! `sprio -l` and its full-width `|` forms (weighted and normalised: every
//! factor and priority), `sshare -a -l` and `sshare -a -l -P` (every row),
//! text for text, which is equality at Slurm's printed precision.
//!
//! Then bad input: a missing library or host configuration, a host
//! configuration that is not TOML, a missing `.wasm`, a file that is not a
//! component and a component of another kind each make slurmctld log one
//! line naming the file and stop with Slurm's own fatal error.
//!
//! It needs root, the anchor's scripts beside the repository and Slurm's
//! packages installed (`.ci/run` installs them); elsewhere it says why it
//! does not run and passes. About 7 minutes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::live_slurm;

use live_slurm::{
    anchor_dir, build_and_install, check_refusals, differences, read, run, skip_reason, tail,
    ClusterLock, REPO,
};

/// The host configurations: the bundled multifactor as a `.wasm` file, the
/// hostile component with failure = "fallback", and multifactor again for
/// the reload case (which shim.sh rewrites to name the hostile component).
fn write_configs(work: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let multifactor =
        slurm_wasm_bundled::find("priority/multifactor").expect("multifactor is bundled");
    std::fs::write(work.join("priority_multifactor.wasm"), multifactor.bytes).unwrap();
    std::fs::copy(
        slurm_wasm_test_artifacts::HOSTILE_PRIORITY,
        work.join("priority_hostile.wasm"),
    )
    .unwrap();
    let wasm = work.join("multifactor.toml");
    std::fs::write(
        &wasm,
        "cache_dir = \"cache\"\n[plugins.priority]\nwasm = \"priority_multifactor.wasm\"\n",
    )
    .unwrap();
    let fault = work.join("hostile.toml");
    std::fs::write(
        &fault,
        "cache_dir = \"cache\"\n[plugins.priority]\nwasm = \"priority_hostile.wasm\"\n\
         failure = \"fallback\"\nfallback = \"priority/multifactor\"\n\
         [plugins.priority.limits]\ndeadline_ms = 1000\n",
    )
    .unwrap();
    let reload = work.join("reload.toml");
    std::fs::write(
        &reload,
        "cache_dir = \"cache\"\n[plugins.priority]\nwasm = \"priority_multifactor.wasm\"\n\
         probation_calls = 1000\n[plugins.priority.limits]\ndeadline_ms = 1000\n",
    )
    .unwrap();
    (wasm, fault, reload)
}

/// Host configurations slurmctld must refuse, with what its log line must
/// name: a syntax error, a missing `.wasm`, a file that is not a component,
/// a component of another kind.
fn write_bad_configs(work: &Path) -> Vec<(PathBuf, &'static str)> {
    let task = slurm_wasm_bundled::find("task/affinity").expect("task/affinity is bundled");
    std::fs::write(work.join("task_affinity.wasm"), task.bytes).unwrap();
    std::fs::write(
        work.join("junk.wasm"),
        "this is not a WebAssembly component",
    )
    .unwrap();
    let slot =
        |wasm: &str| format!("cache_dir = \"cache\"\n[plugins.priority]\nwasm = \"{wasm}\"\n");
    let cases = [
        (
            "bad-toml",
            "cache_dir = \"cache\"\n[plugins.priority\n".to_string(),
            "bad-toml.toml",
        ),
        ("missing-wasm", slot("missing.wasm"), "missing.wasm"),
        ("junk-wasm", slot("junk.wasm"), "junk.wasm"),
        (
            "wrong-kind",
            slot("task_affinity.wasm"),
            "task_affinity.wasm",
        ),
    ];
    cases
        .into_iter()
        .map(|(name, text, names)| {
            let path = work.join(format!("{name}.toml"));
            std::fs::write(&path, text).unwrap();
            (path, names)
        })
        .collect()
}

/// Job id to priority, from squeue's `%i ... %Q` table (record_sample in
/// tests/anchor/priority/stream.sh): the first and the last column.
fn squeue_priorities(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let columns: Vec<&str> = l.split_whitespace().collect();
            Some((columns.first()?.to_string(), columns.last()?.parse().ok()?))
        })
        .collect()
}

#[test]
fn priority_wasm_matches_stock_multifactor_live_and_survives_faults() {
    let anchor = anchor_dir();
    let _cluster = ClusterLock::acquire();
    if let Some(reason) = skip_reason(&anchor) {
        eprintln!("priority_shim: not run: {reason}");
        return;
    }
    let work = tempfile::tempdir().expect("a temporary directory");
    let work = work.path();
    let plugin_dir = work.join("plugins");
    build_and_install(work, &plugin_dir, &["priority_wasm"]);
    let (wasm_config, fault_config, reload_config) = write_configs(work);
    let bad = write_bad_configs(work);
    let bad_list: Vec<String> = bad.iter().map(|(p, _)| p.display().to_string()).collect();
    let out = work.join("out");
    let log = run(
        Command::new("bash")
            .arg(Path::new(REPO).join("tests/anchor/priority/shim.sh"))
            .env("SLURM_ANCHOR", &anchor)
            .env("PLUGINDIR", &plugin_dir)
            .env("WASM_CONFIG", &wasm_config)
            .env("FAULT_CONFIG", &fault_config)
            .env("RELOAD_CONFIG", &reload_config)
            .env("BAD_CONFIGS", bad_list.join(" "))
            .env("OUT", &out),
        "tests/anchor/priority/shim.sh",
    );
    eprintln!("{}", tail(&log, 12));

    // The same sprio and sshare at both passes.
    for sample in ["sample1", "sample2"] {
        for file in [
            "sprio-l.txt",
            "sprio-p.txt",
            "sprio-np.txt",
            "sshare-al.txt",
            "sshare-alP.txt",
        ] {
            let stock = read(&out.join("stock").join(sample).join(file));
            let wasm = read(&out.join("wasm").join(sample).join(file));
            assert!(
                stock.lines().count() > 10,
                "{sample}/{file}: too few rows to compare:\n{stock}"
            );
            assert_eq!(
                stock,
                wasm,
                "{sample}/{file} differs between stock priority/multifactor and priority/wasm:\n{}",
                differences(&stock, &wasm)
            );
        }
    }
    // A job in several partitions has the priority of the partition the
    // scheduler last tried (`part_ptr`, which the shim passes first), not of
    // the first it listed: squeue's priority of every job at the second
    // pass, after the schedulers have tried each job's partitions.
    let stock = squeue_priorities(&read(&out.join("stock/sample2/squeue.txt")));
    let wasm = squeue_priorities(&read(&out.join("wasm/sample2/squeue.txt")));
    assert!(stock.len() > 10, "too few jobs in squeue: {stock:?}");
    assert_eq!(
        stock, wasm,
        "squeue's priorities differ between stock priority/multifactor and priority/wasm"
    );
    let hw_big = read(&out.join("submitted.txt"))
        .lines()
        .find(|l| l.split('|').nth(3) == Some("erin-hwbig"))
        .and_then(|l| l.split('|').next().map(str::to_owned))
        .expect("erin-hwbig in submitted.txt");
    let in_big = read(&out.join("stock/sample2/sprio-p.txt"))
        .lines()
        .find(|l| l.starts_with(&format!("{hw_big}|big|")))
        .and_then(|l| l.split('|').nth(3)?.trim().parse::<u64>().ok())
        .expect("erin-hwbig's sprio row in big");
    assert_eq!(
        stock.get(&hw_big),
        Some(&in_big),
        "Slurm did not leave erin-hwbig (-p hw,big) at its big priority: the case no longer \
         shows part_ptr apart from the first listed partition"
    );

    // The second sample is a decay pass later: usage moved.
    let usage = |s: &str| read(&out.join("stock").join(s).join("sshare-alP.txt"));
    assert_ne!(
        usage("sample1"),
        usage("sample2"),
        "no decay pass between the samples"
    );

    // The shim ran the component, and its usage never drifted from Slurm's.
    let wasm_log = read(&out.join("wasm/slurmctld.log"));
    assert!(
        wasm_log.contains("priority/wasm: running priority/multifactor"),
        "the wasm run did not load the component:\n{}",
        tail(&wasm_log, 30)
    );
    for line in wasm_log.lines() {
        assert!(
            !line.contains("differs from Slurm's") && !line.contains("error: priority/wasm"),
            "the wasm run logged: {line}"
        );
    }

    // Faults: slurmctld answers, sprio answers, the log names plugin and
    // function, and jobs start afterwards.
    // (the host's fault messages: host/runtime/src/error.rs, CallError)
    let faults: [(&str, &[&str]); 3] = [
        (
            "loop",
            &["set ran out of fuel", "set passed its wall-clock deadline"],
        ),
        ("trap", &["set trapped"]),
        ("grow", &["set hit the memory limit", "set trapped"]),
    ];
    for (case, words) in faults {
        let text = read(&out.join("fault").join(format!("{case}.txt")));
        assert!(
            text.contains("is UP"),
            "{case}: slurmctld stopped answering:\n{text}"
        );
        assert!(text.contains("sprio_rc=0"), "{case}: sprio failed:\n{text}");
        assert!(
            text.lines().any(|l| l.contains("plugin priority/hostile")
                && words.iter().any(|w| l.contains(w))),
            "{case}: no log line naming priority/hostile and the function's fault ({words:?}):\n{text}"
        );
        assert!(
            text.contains("falling back to bundled priority/multifactor"),
            "{case}: the fallback did not take over:\n{text}"
        );
    }
    let started = read(&out.join("fault/started.txt"));
    assert!(
        ["state=RUNNING", "state=COMPLETING", "state=COMPLETED"]
            .iter()
            .any(|s| started.contains(s)),
        "no job started after the faults:\n{started}"
    );
    assert!(
        started.contains("sprio_rc=0"),
        "sprio failed after the faults:\n{started}"
    );

    // Reload with rollback (issue 32, swasm_priority_reload on `scontrol
    // reconfigure`): the hostile component took over at the shim's next
    // pass, trapped in `set` for the job named `trap` during its probation,
    // and multifactor, run beside it, answered that call and serves again:
    // the job has its priority and sprio answers.
    let reload = read(&out.join("reload/trap.txt"));
    for words in [
        "reloaded the component the host configuration names",
        "reload rolled back",
        "is UP",
        "sprio_rc=0",
    ] {
        assert!(reload.contains(words), "reload: no `{words}`:\n{reload}");
    }
    let priority: u64 = reload
        .lines()
        .find_map(|l| l.strip_prefix("priority="))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("reload: no priority of the trap job:\n{reload}"));
    assert!(priority > 0, "reload: the trap job is held:\n{reload}");

    // Bad input: one line naming the file and what is wrong, then Slurm's
    // fatal error; slurmctld does not start.
    let refusals = check_refusals(
        &out.join("bad"),
        "slurmctld",
        "priority/wasm",
        &[
            ("no-library", "cannot load the slurm-wasm library"),
            ("no-config", "cannot open the host configuration"),
        ],
        &bad,
    );
    for (case, text) in refusals {
        assert!(
            text.contains("fatal: failed to initialize priority plugin"),
            "{case}: not Slurm's fatal error:\n{text}"
        );
    }
}
