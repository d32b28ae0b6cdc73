//! The `slurm-wasm` binary: inspect, check and compile on the bundled
//! plugins, the SDK example plugin and a hostile plugin.

use std::path::Path;
use std::process::Command;

fn slurm_wasm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args(args)
        .output()
        .expect("run slurm-wasm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const EXAMPLE: &str = slurm_wasm_test_artifacts::EXAMPLE;
const HOSTILE: &str = slurm_wasm_test_artifacts::HOSTILE;

#[test]
fn inspect_bundled_plugins_as_json() {
    for (name, kind) in [("priority/basic", "priority"), ("task/none", "task")] {
        let (code, out, err) = slurm_wasm(&["inspect", "--bundled", name, "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert_eq!(v["kind"], kind);
        assert_eq!(v["identity"]["plugin_type"], name);
        assert_eq!(v["identity"]["slurm_version"], "22.05.8");
        assert_eq!(v["identity"]["contract_version"], "0.1.0");
        assert!(v["exports"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e == &serde_json::json!(format!("slurm:plugin/{kind}@0.1.0"))));
    }
}

#[test]
fn inspect_example_plugin_as_text() {
    let (code, out, err) = slurm_wasm(&["inspect", EXAMPLE]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kind:              priority"), "{out}");
    assert!(
        out.contains("type:              priority/partition_size"),
        "{out}"
    );
    assert!(out.contains("slurm:plugin/priority@0.1.0"), "{out}");
}

#[test]
fn inspect_lists_capabilities_a_plugin_imports() {
    let (code, out, _) = slurm_wasm(&["inspect", HOSTILE, "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let caps: Vec<&str> = v["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    assert!(
        caps.contains(&"cpuset") && caps.contains(&"topology"),
        "{caps:?}"
    );
}

#[test]
fn check_passes_on_bundled_and_example_plugins() {
    for args in [
        vec!["check", "--bundled", "priority/basic"],
        vec!["check", "--bundled", "priority/multifactor"],
        vec!["check", "--bundled", "task/affinity"],
        vec!["check", "--bundled", "task/none"],
        vec!["check", EXAMPLE],
        vec!["check", slurm_wasm_test_artifacts::SMALL_FIRST],
        vec!["check", slurm_wasm_test_artifacts::ONE_CPU],
        vec!["check", slurm_wasm_test_artifacts::FPGA],
        vec!["check", slurm_wasm_test_artifacts::FIRST_FIT],
    ] {
        let (code, out, err) = slurm_wasm(&args);
        assert_eq!(code, 0, "{args:?}\n{out}\n{err}");
        assert!(out.contains(" 0 failed"), "{out}");
    }
}

#[test]
fn check_of_a_non_component_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.wasm");
    std::fs::write(&bad, b"\0asm\x01\0\0\0").unwrap();
    let (code, out, _) = slurm_wasm(&["check", bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("FAIL  is a WebAssembly component"), "{out}");
    let (code, _, err) = slurm_wasm(&["inspect", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.wasm")
            && err.contains("not a valid WebAssembly component: a core WebAssembly module"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_not_webassembly_is_named_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.wasm");
    std::fs::write(&text, "hello, this is text").unwrap();
    let (code, _, err) = slurm_wasm(&["inspect", text.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim_end(),
        format!(
            "slurm-wasm: {}: not a valid WebAssembly component: not a WebAssembly file: it \
             begins with 68 65 6c 6c 6f 2c 20 74 where WebAssembly begins with 00 61 73 6d \
             (\\0asm)",
            text.display()
        )
    );
}

#[test]
fn compile_fills_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = slurm_wasm(&[
        "compile",
        "--cache-dir",
        dir.path().to_str().unwrap(),
        EXAMPLE,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("priority/partition_size"), "{out}");
    let entries: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "key"))
        .collect();
    assert_eq!(
        entries.len(),
        1,
        "the entry beside the cache's key: {entries:?}"
    );
    assert!(entries[0].extension().is_some_and(|e| e == "cwasm"));
}

#[test]
fn demo_prints_the_fifo_sequence() {
    let (code, out, err) = slurm_wasm(&["demo", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let priorities: Vec<u64> = v["priority"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["priority"].as_u64().unwrap())
        .collect();
    assert_eq!(
        priorities,
        vec![4294901759, 4294901758, 4294901657, 4294901756, 4294901855]
    );
}

#[test]
fn demo_loads_the_plugins_a_slurm_conf_names() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(
        &conf,
        "ClusterName=demo\nPriorityType=priority/basic\nTaskPlugin=task/none\nNodeName=c[1-2] CPUs=4 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n",
    )
    .unwrap();
    let (code, out, err) = slurm_wasm(&["demo", "--slurm-conf", conf.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let path = conf.display();
    assert!(
        out.contains(&format!(
            "priority/basic       ({path}:2: PriorityType=priority/basic)"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "task/none            ({path}:3: TaskPlugin=task/none)"
        )),
        "{out}"
    );
    assert!(
        out.contains("task/none (task NONE plugin): step 6.0, 4 tasks on c1"),
        "{out}"
    );

    std::fs::write(&conf, "ClusterName=demo\nNodeName=c1\n").unwrap();
    let (code, out, err) = slurm_wasm(&["demo", "--json", "--slurm-conf", conf.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let chosen: Vec<(&str, &str, &str)> = v["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["slot"].as_str().unwrap(),
                p["plugin"].as_str().unwrap(),
                p["chosen_by"].as_str().unwrap(),
            )
        })
        .collect();
    let defaults = [
        format!("{path}: no PriorityType, Slurm's default"),
        format!("{path}: no TaskPlugin, Slurm's default"),
    ];
    assert_eq!(
        chosen,
        [
            ("priority", "priority/basic", defaults[0].as_str()),
            ("task.none", "task/none", defaults[1].as_str())
        ]
    );
    let priorities: Vec<u64> = v["priority"]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["priority"].as_u64().unwrap())
        .collect();
    assert_eq!(
        priorities,
        vec![4294901759, 4294901758, 4294901657, 4294901756, 4294901855]
    );
}

#[test]
fn demo_reports_a_bad_slurm_conf_line_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("slurm.conf");
    std::fs::write(&conf, "ClusterName=demo\nPriorityType priority/basic\n").unwrap();
    let (code, _, err) = slurm_wasm(&["demo", "--slurm-conf", conf.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "slurm-wasm: {}:2: expected Key=Value, found `PriorityType`",
            conf.display()
        )
    );

    std::fs::write(&conf, "ClusterName=demo\n\nTaskPlugin=task/cgroup\n").unwrap();
    let (code, _, err) = slurm_wasm(&["demo", "--slurm-conf", conf.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with(&format!(
            "slurm-wasm: {}:3: TaskPlugin=task/cgroup: no bundled plugin task/cgroup in this build",
            conf.display()
        )),
        "{err}"
    );
}

#[test]
fn demo_takes_a_priority_plugin_from_the_host_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("host.toml");
    std::fs::write(&config, format!("[plugins.priority]\nwasm = {EXAMPLE:?}\n")).unwrap();
    let (code, out, err) = slurm_wasm(&["--config", config.to_str().unwrap(), "demo"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("priority/partition_size") && out.contains("(host configuration)"),
        "{out}"
    );
    assert!(
        out.contains("task/none (task NONE plugin): step 6.0, 4 tasks on n1"),
        "{out}"
    );
}

#[test]
fn priority_sshare_reproduces_the_classic_fair_share_example() {
    // Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage` (classic_fair_share.shtml, test24.1): FairShare per user.
    let (code, out, err) = slurm_wasm(&[
        "priority",
        "sshare",
        "examples/scenarios/classic-fair-share.toml",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let fairshare = |user: &str| {
        rows.iter()
            .find(|r| r["user"] == user)
            .and_then(|r| r["fairshare"].as_f64())
            .unwrap_or_else(|| panic!("{user} in {out}"))
    };
    for (user, expected) in [
        ("User1", 0.408479),
        ("User2", 0.022097),
        ("User3", 0.125),
        ("User4", 0.5),
        ("User5", 0.749154),
    ] {
        assert!(
            (fairshare(user) - expected).abs() < 5e-7,
            "{user}: {} vs {expected}",
            fairshare(user)
        );
    }
}

#[test]
fn priority_sprio_orders_the_light_user_first() {
    let (code, out, err) = slurm_wasm(&[
        "priority",
        "sprio",
        "examples/scenarios/classic-fair-share.toml",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("JOBID") && lines[0].contains("FAIRSHARE"),
        "{out}"
    );
    // User5 (no usage, fair-share 0.749154) outranks User1 (0.408479) at
    // PriorityWeightFairshare=10000: 7492 vs 4085 weighted.
    let fairshare = |job: &str| {
        lines
            .iter()
            .find(|l| l.trim_start().starts_with(job))
            .map(|l| l.split_whitespace().nth(8).unwrap().to_string())
            .unwrap()
    };
    assert_eq!(fairshare("101"), "4085");
    assert_eq!(fairshare("102"), "7492");
}

#[test]
fn priority_scenario_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "slurm_conf = \"missing.conf\"\n[[user]]\nname = \"x\"\naccount = \"nope\"\n",
    )
    .unwrap();
    let (code, _, err) = slurm_wasm(&["priority", "sprio", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.toml") && err.contains("missing.conf"),
        "{err}"
    );
}

/// Issue 26, messages and exit codes: output piped into a reader that stops
/// early ends `inspect` quietly (it panicked on the broken pipe).
#[test]
fn inspect_into_a_closed_pipe_does_not_panic() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args(["inspect", "--bundled", "select/cons_tres"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run slurm-wasm");
    // Close the reading end before the program writes: its first write
    // meets a broken pipe, as `| head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Issue 26, messages and exit codes: an unreadable file is bad input
/// (exit 2, as the README says), not a failed check (exit 1).
#[test]
fn check_of_a_missing_file_exits_2() {
    let (code, _, err) = slurm_wasm(&["check", "/nonexistent/plugin.wasm"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/plugin.wasm"), "{err}");
}

/// Issue 26, messages and exit codes: a `--policy` file that is no usable
/// plugin is refused before the replay, with exit 2.
#[test]
fn simulate_with_an_unusable_policy_file_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bogus = dir.path().join("select.wasm");
    std::fs::write(&bogus, b"not a component").expect("write");
    let policy = format!("select={},priority/basic", bogus.display());
    let (code, _, err) = slurm_wasm(&["simulate", "--quiet", "--policy", &policy]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("select.wasm"), "{err}");
    // A plugin of the wrong kind is unusable in that slot too.
    let policy = format!("select={HOSTILE},priority/basic");
    let (code, _, err) = slurm_wasm(&["simulate", "--quiet", "--policy", &policy]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("is a task plugin but was loaded into the select slot"),
        "{err}"
    );
}

#[test]
fn config_is_refused_where_no_command_reads_it() {
    let (code, _, err) =
        slurm_wasm(&["--config", "host.toml", "inspect", "--bundled", "task/none"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--config host.toml: only `demo` and `gres` read a host configuration"),
        "{err}"
    );
}

#[test]
fn logs_redirected_to_a_file_carry_no_colour_codes() {
    let (code, _, err) = slurm_wasm(&["--log", "debug", "check", "--bundled", "task/none"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.is_empty(), "nothing was logged at debug level");
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn inspect_says_when_a_plugin_uses_no_capability() {
    // priority/small_first imports neither log nor clock.
    let (code, out, err) = slurm_wasm(&["inspect", slurm_wasm_test_artifacts::SMALL_FIRST]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  capabilities used: none\n"), "{out}");
}

/// `slurm-wasm new` for each kind it has a template for: the project, made
/// outside this repository, builds natively and passes its own test, builds
/// to a component with one command and passes `check` unchanged. (Offline:
/// the SDK's dependencies are in cargo's cache from this workspace's build;
/// the projects share a target directory under this checkout's.)
#[test]
fn new_projects_build_test_and_pass_check() {
    let dir = tempfile::tempdir().unwrap();
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/new-projects");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for (kind, name) in [
        ("priority", "fair_small"),
        ("task", "spread_out"),
        ("gres", "nic"),
        ("select", "best_node"),
        // A select wrapper: a select plugin over another (`check` runs it
        // over the bundled select/cons_tres).
        ("select-wrapper", "keep_off"),
    ] {
        let project = dir.path().join(format!("{kind}-{name}"));
        let (code, out, err) = slurm_wasm(&["new", kind, name, "--dir", project.to_str().unwrap()]);
        assert_eq!(code, 0, "new {kind} {name}: {out}{err}");
        let cargo_in = |args: &[&str]| {
            let out = Command::new(&cargo)
                .args(args)
                .arg("--offline")
                .current_dir(&project)
                .env("CARGO_TARGET_DIR", &target)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{kind}: cargo {args:?}:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        cargo_in(&["test", "-q"]);
        cargo_in(&["build", "-q", "--release", "--target", "wasm32-wasip2"]);
        let crate_ident = format!("{kind}_{name}").replace('-', "_");
        let wasm = target.join(format!("wasm32-wasip2/release/{crate_ident}.wasm"));
        let (code, out, err) = slurm_wasm(&["check", wasm.to_str().unwrap()]);
        assert_eq!(code, 0, "check {kind}/{name}:\n{out}\n{err}");
        let slot = kind.trim_end_matches("-wrapper");
        assert!(
            out.contains(&format!("conformance of {slot}/{name}")),
            "{out}"
        );
        assert!(out.contains(" 0 failed"), "{out}");
    }
    // An unknown kind, and a name Slurm would not take.
    let (code, _, err) = slurm_wasm(&["new", "sched", "mine", "--dir", "/nonexistent/x"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown kind `sched`"), "{err}");
    let (code, _, err) = slurm_wasm(&["new", "priority", "Bad-Name"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("plugin name `Bad-Name`"), "{err}");
}

#[test]
fn a_scenario_naming_a_plugin_that_is_not_bundled_says_how_to_name_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.toml");
    let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/cluster.conf");
    std::fs::write(
        &scenario,
        format!(
            "slurm_conf = \"{}\"\nplugin = \"priority/partition_size\"\n",
            conf.display()
        ),
    )
    .unwrap();
    let (code, _, err) = slurm_wasm(&["priority", "sprio", scenario.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        err.contains("the priority plugin priority/partition_size is not bundled")
            && err.contains("priority/basic, priority/multifactor")
            && err.contains("plugin = \"path/to/plugin.wasm\""),
        "{err}"
    );
}

/// Runs the CLI in `cwd` with `SLURM_WASM_CACHE_DIR` set to `cache`.
fn slurm_wasm_cached(cwd: &Path, cache: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_slurm-wasm"))
        .args(args)
        .current_dir(cwd)
        .env("SLURM_WASM_CACHE_DIR", cache)
        .output()
        .expect("run slurm-wasm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn commands_keep_compiled_components_in_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cache_s = cache.to_str().unwrap();
    let entries = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&cache)
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let (code, _, err) =
        slurm_wasm_cached(dir.path(), cache_s, &["inspect", "--bundled", "task/none"]);
    assert_eq!(code, 0, "{err}");
    let first = entries();
    assert!(
        first.len() >= 2,
        "no compiled component (and key) in the cache: {first:?}"
    );
    // The second command finds it: no new entry, and check uses it too.
    let (code, _, err) =
        slurm_wasm_cached(dir.path(), cache_s, &["check", "--bundled", "task/none"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(entries(), first);
    // `off` keeps everything in memory (no directory named `off` appears).
    let (code, _, err) =
        slurm_wasm_cached(dir.path(), "off", &["inspect", "--bundled", "task/none"]);
    assert_eq!(code, 0, "{err}");
    assert!(!dir.path().join("off").exists());
    // A cache the user may not use is left out with a warning; the command runs.
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let (code, _, err) = slurm_wasm_cached(
        dir.path(),
        shared.to_str().unwrap(),
        &["inspect", "--bundled", "task/none"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("compiled-component cache not used"), "{err}");
}
