//! The C ABI from C: compiles `tests/capi/capi_test.c` with the system `cc`
//! against `libslurm_wasm.so` and `include/slurm_wasm.h`, runs it on host
//! configurations written here (bundled priority/basic, priority/multifactor
//! and task/affinity, a temporary compiled-component cache) and checks that
//! what it prints is what the Rust API answers for the same input, that
//! every error names its file and fault, that logs reach the callback at the
//! host's level only, that a forked child can call a plugin while another
//! thread was calling it, and that the library prints nothing itself.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use slurm_wasm_host::kinds::priority::{
    AssociationUpdate, FactorsRequest, PriorityConfig, QosUpdate,
};
use slurm_wasm_host::kinds::task::CpuBinding;
use slurm_wasm_host::types::{Job, JobState, KeyValue, TresAmount};
use slurm_wasm_host::{
    fixtures, CallError, Capability, Grants, Host, PluginSettings, PluginSource, PriorityPlugin,
    TaskPlugin,
};
use support::{assert_same, build_program, run_program, Output};

/// Writes the host configurations and plugin files the program opens.
fn write_inputs(dir: &Path) {
    let files: &[(&str, &str)] = &[
        (
            "basic.toml",
            "cache_dir = \"cache\"\nstate_dir = \"state\"\n\
             [plugins.priority]\nbundled = \"priority/basic\"\n\
             [plugins.task.affinity]\nbundled = \"task/affinity\"\ngrants = [\"topology\"]\n",
        ),
        (
            "multifactor.toml",
            "cache_dir = \"cache\"\n[plugins.priority]\nbundled = \"priority/multifactor\"\n",
        ),
        // Line 2 is not TOML.
        ("bad.toml", "cache_dir = \"cache\"\n[plugins.priority\n"),
        (
            "nocache.toml",
            "[plugins.priority]\nbundled = \"priority/basic\"\n",
        ),
        (
            "missing.toml",
            "cache_dir = \"cache\"\n[plugins.priority]\nwasm = \"missing.wasm\"\n",
        ),
        (
            "junk.toml",
            "cache_dir = \"cache\"\n[plugins.priority]\nwasm = \"junk.wasm\"\n",
        ),
        (
            "wrongkind.toml",
            "cache_dir = \"cache\"\n[plugins.priority]\nwasm = \"task_affinity.wasm\"\n",
        ),
        ("junk.wasm", "this is not a WebAssembly component"),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let task = slurm_wasm_bundled::find("task/affinity").expect("task/affinity is bundled");
    std::fs::write(dir.join("task_affinity.wasm"), task.bytes).unwrap();
    std::fs::create_dir(dir.join("state")).unwrap();
}

fn host() -> Host {
    Host::new(slurm_wasm_bundled::host_options()).expect("host")
}

/// What the Rust API answers for the program's priority/multifactor
/// scenario, as the lines the program prints.
fn multifactor_lines() -> Vec<String> {
    let plugin = PriorityPlugin::load(
        &host(),
        &PluginSource::Bundled("priority/multifactor".into()),
        PluginSettings::default(),
    )
    .unwrap();
    let cpu = |count| TresAmount {
        name: "cpu".into(),
        count,
    };
    let raw = [
        ("AccountingStorageType", "accounting_storage/slurmdbd"),
        ("PriorityFlags", "NO_FAIR_TREE"),
        ("PriorityWeightAge", "1000"),
        ("PriorityMaxAge", "7-0"),
        ("PriorityWeightFairshare", "10000"),
        ("PriorityWeightJobSize", "1000"),
        ("PriorityWeightPartition", "1000"),
        ("PriorityWeightQOS", "2000"),
        ("PriorityWeightTRES", "CPU=2000"),
    ];
    let mut config: PriorityConfig = fixtures::priority_config();
    config.cluster.raw = raw
        .iter()
        .map(|(key, value)| KeyValue {
            key: (*key).into(),
            value: (*value).into(),
        })
        .collect();
    config.partitions = vec![fixtures::partition(0, "debug", 100)];
    config.partition_tres = vec![vec![cpu(1000)]];
    config.cluster_cpus = 1000;
    config.cluster_nodes = 100;
    config.cluster_tres = vec![cpu(1000)];
    plugin.init(&config).unwrap();
    plugin
        .update_qos(&[
            QosUpdate::Upsert(fixtures::qos(1, "normal", 10)),
            QosUpdate::Upsert(fixtures::qos(2, "high", 100)),
        ])
        .unwrap();
    let assoc = |id, parent, account, user, shares, usage| {
        let mut a = fixtures::association(id, parent, account, user, shares);
        a.usage_raw = usage;
        AssociationUpdate::Upsert(a)
    };
    plugin
        .update_associations(&[
            assoc(1, None, "root", None, 1, 0.0),
            assoc(2, Some(1), "a", None, 40, 0.0),
            assoc(3, Some(2), "a", Some("u1"), 1, 20.0),
            assoc(4, Some(1), "b", None, 60, 0.0),
            assoc(5, Some(4), "b", Some("u2"), 1, 25.0),
        ])
        .unwrap();
    let mut job1 = fixtures::job(1);
    job1.assoc_id = 3;
    job1.account = Some("a".into());
    job1.qos = Some("normal".into());
    job1.details.accrue_time = 1;
    job1.details.num_tasks = 4;
    job1.details.min_cpus = 4;
    job1.tres_requested = vec![cpu(4)];
    let mut job2 = fixtures::job(2);
    job2.assoc_id = 5;
    job2.account = Some("b".into());
    job2.qos = Some("high".into());
    job2.tres_requested = vec![cpu(100)];
    let mut jobs: Vec<Job> = vec![job1, job2];

    let mut lines = Vec::new();
    for job in &mut jobs {
        job.priority = plugin.set(0xffff_0000, job).unwrap();
        lines.push(format!("mf.set {} {}", job.job_id, job.priority));
    }
    for (id, priority) in plugin.calculate(&[], &[1, 2]).unwrap() {
        lines.push(format!("mf.calc {id} {priority}"));
        jobs.iter_mut().find(|j| j.job_id == id).unwrap().priority = priority;
    }
    let all = FactorsRequest {
        job_ids: Vec::new(),
        user_ids: Vec::new(),
        partitions: Vec::new(),
    };
    for r in plugin.get_priority_factors_list(&jobs, &all, 0).unwrap() {
        let mut line = format!(
            "mf.sprio {} {} {} {} {} {} {:?} {:?} {:?} {:?} {:?} {:?} {} {} {}",
            r.job_id,
            r.user_id,
            r.account.as_deref().unwrap_or("-"),
            r.partition,
            r.qos.as_deref().unwrap_or("-"),
            i32::from(r.direct_priority.is_some()),
            r.age,
            r.association,
            r.fair_share,
            r.job_size,
            r.partition_factor,
            r.qos_factor,
            r.site,
            r.nice,
            r.priority
        );
        for (name, value) in &r.tres {
            line.push_str(&format!(" {name}={value:?}"));
        }
        lines.push(line);
    }
    let only2 = FactorsRequest {
        job_ids: vec![2],
        ..all
    };
    let rows = plugin.get_priority_factors_list(&jobs, &only2, 0).unwrap();
    lines.push(format!(
        "mf.sprio_job2 {} {}",
        rows.len(),
        rows.first().map_or(0, |r| r.job_id)
    ));
    let usage_line = |key: &str, u: &slurm_wasm_host::kinds::priority::AssociationUsage| {
        format!(
            "{key} {} {:?} {:?} {:?} {:?} {:?} {} {:?}",
            u.id,
            u.usage_raw,
            u.usage_norm,
            u.usage_effective,
            u.shares_norm,
            u.fair_share,
            i32::from(u.level_fs.is_some()),
            u.level_fs.unwrap_or(0.0)
        )
    };
    lines.push(usage_line(
        "mf.assoc_usage",
        &plugin.set_assoc_usage(3).unwrap(),
    ));
    for u in plugin.association_usages().unwrap() {
        lines.push(usage_line("mf.usages", &u));
    }
    let (boost, recovered) = plugin.recover(1000, &jobs).unwrap();
    lines.push(format!("mf.recover_boost {boost}"));
    for (id, priority) in recovered {
        lines.push(format!("mf.recover {id} {priority}"));
    }
    plugin.reconfig(&config, false, &[]).unwrap();
    plugin
        .update_associations(&[AssociationUpdate::Remove(5)])
        .unwrap();
    plugin.update_qos(&[QosUpdate::Remove(2)]).unwrap();
    jobs[0].state = JobState::Complete;
    plugin.job_end(&jobs[0]).unwrap();
    plugin.fini().unwrap();
    lines.push("mf.done ok".into());
    lines
}

/// What the Rust API answers for the program's task/affinity calls.
fn task_lines() -> Vec<String> {
    let plugin = TaskPlugin::load(
        &host(),
        &PluginSource::Bundled("task/affinity".into()),
        PluginSettings {
            grants: Grants::none().with(Capability::Topology),
            ..PluginSettings::default()
        },
    )
    .unwrap();
    let mut lines = vec![format!("task.identity {}", plugin.identity().plugin_type)];
    plugin.init(&fixtures::task_config()).unwrap();
    let binding_lines = |key: &str, b: CpuBinding| {
        let mut out = vec![format!("{key} {:#x} {}", b.cpu_bind_type, b.cpu_bind)];
        out.extend(
            b.env
                .iter()
                .map(|kv| format!("{key}.env {}={}", kv.key, kv.value)),
        );
        out.extend(b.messages.iter().map(|m| format!("{key}.message {m}")));
        out
    };
    let mut launch = fixtures::launch_request(6, 2, 2);
    launch.cpu_bind_type = 0x4 | 0x1;
    lines.extend(binding_lines(
        "task.launch",
        plugin.slurmd_launch_request(&launch).unwrap(),
    ));
    lines.extend(binding_lines(
        "task.batch",
        plugin
            .slurmd_batch_request(&fixtures::batch_request(7, 2))
            .unwrap(),
    ));
    let step = fixtures::step(6, 0);
    let task = fixtures::task(0, 4242);
    let rc = |r: Result<(), CallError>| r.map_or_else(|e| e.slurm_code(), |()| 0);
    for (key, code) in [
        ("task.reserve", rc(plugin.slurmd_reserve_resources(&launch))),
        ("task.suspend", rc(plugin.slurmd_suspend_job(6))),
        ("task.resume", rc(plugin.slurmd_resume_job(6))),
        ("task.pre_setuid", rc(plugin.pre_setuid(&step))),
        ("task.pre_launch", rc(plugin.pre_launch(&step, &task))),
        ("task.post_term", rc(plugin.post_term(&step, &task))),
        ("task.add_pid", rc(plugin.add_pid(4242))),
        (
            "task.update_mem_limit",
            rc(plugin.update_mem_limit(&step, 100, 50)),
        ),
        ("task.post_step", rc(plugin.post_step(&step))),
        ("task.release", rc(plugin.slurmd_release_resources(6))),
        ("task.fini", rc(plugin.fini())),
    ] {
        lines.push(format!("{key} {code}"));
    }
    lines
}

/// priority/basic through the Rust API: Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_set`'s first number.
fn basic_set() -> u32 {
    let plugin = PriorityPlugin::load(
        &host(),
        &PluginSource::Bundled("priority/basic".into()),
        PluginSettings::default(),
    )
    .unwrap();
    plugin.init(&fixtures::priority_config()).unwrap();
    plugin.set(0xffff_0000, &fixtures::job(1)).unwrap()
}

#[test]
fn c_program_agrees_with_the_rust_api() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let Some(exe) = build_program(dir.path(), "capi_test.c") else {
        return;
    };
    let out = run_program(&exe, dir.path());
    assert_eq!(
        out.one("abi"),
        format!(
            "{} {}",
            slurm_wasm::SWASM_ABI_VERSION,
            slurm_wasm_host::CONTRACT_VERSION
        )
    );

    // priority/basic: the first job's priority (TOP_PRIORITY - 1,
    // priority_p_set), the same as through the Rust API.
    assert_eq!(out.one("basic.set"), "4294901759");
    assert_eq!(basic_set(), 4294901759);
    assert_eq!(out.one("basic.identity"), "priority/basic 0x160508 0.1.0");
    assert_eq!(out.one("basic.state"), "ok");
    assert_eq!(out.one("fork.children_ok"), "8 of 8");

    // priority/multifactor: every contract function, answer for answer.
    assert_same(
        &out.with_prefix("mf."),
        &multifactor_lines(),
        "priority/multifactor",
    );

    // task/affinity: the same binding, environment, messages and codes.
    assert_same(&out.with_prefix("task."), &task_lines(), "task/affinity");

    // A plugin's own refusal: its code, the library's line naming plugin
    // and function, and the plugin's message alone (what task/affinity's
    // lllp_distribution hands srun, dist_tasks.c's _validate_map).
    assert_eq!(out.one("refused.code"), "4032");
    assert!(
        out.one("refused.message")
            .starts_with("plugin task/affinity: slurmd-launch-request returned error 4032: "),
        "{}",
        out.one("refused.message")
    );
    assert!(
        out.one("refused.plugin_message")
            .starts_with("CPU binding outside of job step allocation, allocated CPUs are: "),
        "{}",
        out.one("refused.plugin_message")
    );

    // swasm_task_reload: the host configuration read again; the same
    // component changes nothing, another replaces it, bytes that are no
    // component are refused and the serving one goes on.
    assert_eq!(out.one("reload.unchanged"), "0");
    assert_eq!(out.one("reload.replaced"), "1");
    assert_eq!(out.one("reload.identity"), "task/none");
    assert!(
        out.one("error.reload_junk")
            .contains("[plugins.task]: reload refused"),
        "{}",
        out.one("error.reload_junk")
    );
    assert_eq!(out.one("reload.after_junk"), "task/none");

    errors_name_file_and_fault(&out, dir.path());
    logs_reach_the_callback_at_the_hosts_level(&out);
}

/// Each failure is one line naming the file (and slot) and what is wrong.
fn errors_name_file_and_fault(out: &Output, dir: &Path) {
    let d = dir.display();
    let errors: BTreeMap<&str, &str> = out
        .lines
        .iter()
        .filter_map(|l| l.strip_prefix("error."))
        .map(|l| l.split_once(' ').unwrap())
        .collect();
    let expect = |name: &str, code: &str, parts: &[&str]| {
        let line = errors
            .get(name)
            .unwrap_or_else(|| panic!("no error.{name} line in {errors:#?}"));
        let (got_code, message) = line.split_once(' ').unwrap();
        assert_eq!(got_code, code, "error.{name}: {message}");
        for part in parts {
            assert!(
                message.contains(part),
                "error.{name}: `{message}` lacks `{part}`"
            );
        }
    };
    expect(
        "bad_toml",
        "-1",
        &[&format!("{d}/bad.toml: TOML parse error at line 2")],
    );
    expect(
        "absent_toml",
        "-1",
        &[&format!(
            "{d}/absent.toml: cannot read the host configuration"
        )],
    );
    expect(
        "no_cache",
        "-1",
        &[&format!("{d}/nocache.toml: no `cache_dir`"), "cache_dir = "],
    );
    expect(
        "null_path",
        "-1",
        &["swasm_host_open: the configuration path is NULL"],
    );
    expect(
        "missing_wasm",
        "-1",
        &[&format!("{d}/missing.toml: [plugins.priority] wasm = {d}/missing.wasm: cannot read: No such file")],
    );
    expect(
        "no_task_slot",
        "-1",
        &[&format!("{d}/missing.toml: no task plugin is configured")],
    );
    for name in ["junk_wasm", "junk_wasm_again"] {
        expect(
            name,
            "-1",
            &[&format!("{d}/junk.toml: [plugins.priority]: {d}/junk.wasm: not a valid WebAssembly component")],
        );
    }
    for name in ["wrong_kind", "wrong_kind_again"] {
        expect(
            name,
            "-1",
            &[
                &format!("{d}/wrongkind.toml: [plugins.priority]: {d}/task_affinity.wasm"),
                "is a task plugin but was loaded into the priority slot",
            ],
        );
    }
    expect(
        "null_handle",
        "-1",
        &["swasm_priority_set: the plugin handle is NULL"],
    );
    expect(
        "before_init",
        "-1",
        &["plugin priority/basic: set not called: init has not succeeded"],
    );
    expect(
        "restore_missing",
        &libc_enoent(),
        &[&format!("{d}/state/priority.state")],
    );
    expect("bad_state", "-1", &["job.state: unknown value 99"]);
}

fn libc_enoent() -> String {
    slurm_wasm::error::SWASM_ENOENT.to_string()
}

/// Plugin logs arrive on the host's callback, at its level and above only.
fn logs_reach_the_callback_at_the_hosts_level(out: &Output) {
    let logs = out.with_key("log");
    assert!(
        logs.contains(&"log D 4 slurm-wasm: priority/basic: priority/basic loaded"),
        "{logs:#?}"
    );
    assert!(
        !logs
            .iter()
            .any(|l| l.starts_with("log I ") && l.contains("loaded")),
        "a debug line reached a host opened at info: {logs:#?}"
    );
    assert!(
        logs.contains(&"log T 3 slurm-wasm: task/affinity: task_p_slurmd_batch_request: 7"),
        "{logs:#?}"
    );
}
