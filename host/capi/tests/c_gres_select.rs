//! The gres and select kinds of the C ABI from C: compiles
//! `tests/capi/gres_select_test.c` against `libslurm_wasm.so` and
//! `include/slurm_wasm.h`, runs it on host configurations written here
//! (bundled gres/gpu with a fake GPU inventory served through
//! `gpu = "file:gpus.toml"`, gres/mps, select/cons_tres and select/linear on
//! a three-node table) and checks that what it prints is what the Rust API
//! answers for the same input, call for call, and that every bad argument
//! (a call before init, an unknown enum value, a bitmap whose words do not
//! match its length, a resource of another handle, a slot or component of
//! another kind) fails with a message naming it.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use slurm_wasm_host::fixtures::{self, bitmap};
use slurm_wasm_host::host_config::{self, HostConfig};
use slurm_wasm_host::kinds::gres::{
    EnvChange, EnvFlags, GresConfRecord, GresConfig, InfoField, InfoValue, NodeAllocation,
    NodeConfigResult, NodeHardware,
};
use slurm_wasm_host::kinds::select::{
    JobTestFlags, JobTestMode, JobTestRequest, JobTestResult, JobinfoField, JobinfoValue,
    NodeinfoField, NodeinfoValue, PluginInfoField, PluginInfoValue, PreemptMode,
    PreempteeCandidate, ReservationRequest, SelectConfig, SprintMode,
};
use slurm_wasm_host::types::{
    Bitmap, GresAllocation, GresCount, GresDeviceGroup, GresRequest, GresScope, Job, JobResources,
    JobState, KeyValue, MemoryRequest, Node, NodeResources, SelectTypeParams,
};
use slurm_wasm_host::{
    CallError, GresPlugin, Host, HostOptions, PluginSettings, PluginSource, SelectPlugin, Services,
};
use support::{assert_same, build_program, run_program, Output};

/// Two A100s: GPU 0 near CPUs 0-3, GPU 1 near CPUs 4-7 (the inventory of
/// tests/gres_gpu.rs).
const INVENTORY: &str = r#"
cpus = 8
[[gpu]]
uuid = "GPU-00000000-0000-0000-0000-000000000000"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 0
pci_bus_id = "00000000:07:00.0"
cpu_affinity = [0, 1, 2, 3]
application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }
[[gpu.clocks]]
memory_mhz = 1215
graphics_mhz = [1410, 1395, 1095, 210]
[[gpu]]
uuid = "GPU-11111111-1111-1111-1111-111111111111"
name = "NVIDIA A100-SXM4-40GB"
memory_mb = 40960
minor = 1
pci_bus_id = "00000000:0F:00.0"
cpu_affinity = [4, 5, 6, 7]
application_clocks = { memory_mhz = 1215, graphics_mhz = 1095 }
[[gpu.clocks]]
memory_mhz = 1215
graphics_mhz = [1410, 1395, 1095, 210]
"#;

/// Writes the host configurations and plugin files the program opens.
fn write_inputs(dir: &Path) {
    let files: &[(&str, &str)] = &[
        ("gpus.toml", INVENTORY),
        (
            "gres.toml",
            "cache_dir = \"cache\"\ngpu = \"file:gpus.toml\"\n\
             [plugins.gres.gpu]\nbundled = \"gres/gpu\"\ngrants = [\"gpu\", \"gpu-control\"]\n\
             [plugins.gres.mps]\nbundled = \"gres/mps\"\n\
             [plugins.select]\nbundled = \"select/cons_tres\"\n",
        ),
        (
            "tres.toml",
            "cache_dir = \"cache\"\nstate_dir = \"state\"\n\
             [plugins.select]\nbundled = \"select/cons_tres\"\n",
        ),
        (
            "linear.toml",
            "cache_dir = \"cache\"\nstate_dir = \"state\"\n\
             [plugins.select]\nbundled = \"select/linear\"\n",
        ),
        (
            "wrongkind.toml",
            "cache_dir = \"cache\"\n[plugins.select]\nwasm = \"gres_gpu.wasm\"\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let gpu = slurm_wasm_bundled::find("gres/gpu").expect("gres/gpu is bundled");
    std::fs::write(dir.join("gres_gpu.wasm"), gpu.bytes).unwrap();
    std::fs::create_dir(dir.join("state")).unwrap();
}

/// A host as the C ABI starts it from `config` (its GPU provider), with
/// no compiled-component cache.
fn host(config: &HostConfig) -> Host {
    Host::new(HostOptions {
        services: Services {
            gpu: config.gpu.provider().expect("the GPU inventory"),
            ..Services::default()
        },
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host")
}

/// The set bits of a bitmap joined by commas, `-` for none.
fn bits(map: Option<&Bitmap>) -> String {
    let bits: Vec<String> = map
        .map(fixtures::bits)
        .unwrap_or_default()
        .iter()
        .map(u32::to_string)
        .collect();
    if bits.is_empty() {
        "-".into()
    } else {
        bits.join(",")
    }
}

fn joined(items: &[String]) -> String {
    if items.is_empty() {
        "-".into()
    } else {
        items.join(",")
    }
}

fn dash(s: Option<&str>) -> &str {
    s.unwrap_or("-")
}

/// `0`, or the Slurm code of the failure.
fn rc<T>(r: Result<T, CallError>) -> i32 {
    r.map_or_else(|e| e.slurm_code(), |_| 0)
}

fn cluster() -> slurm_wasm_host::types::ClusterConfig {
    let mut c = fixtures::cluster_config();
    c.gres_types = vec!["gpu".into(), "mps".into()];
    c
}

fn env_lines(key: &str, changes: &[EnvChange]) -> Vec<String> {
    if changes.is_empty() {
        return vec![format!("{key} (none)")];
    }
    changes
        .iter()
        .map(|c| match c {
            EnvChange::Set(KeyValue { key: k, value }) => format!("{key} {k}={value}"),
            EnvChange::Unset(k) => format!("{key} -{k}"),
        })
        .collect()
}

fn node_config_lines(key: &str, r: &NodeConfigResult) -> Vec<String> {
    let mut lines: Vec<String> = r
        .records
        .iter()
        .map(|g| {
            format!(
                "{key}.record {} {} {} {} {} {} {} {} {}",
                g.origin,
                g.name,
                dash(g.type_name.as_deref()),
                joined(&g.files),
                g.count,
                bits(g.cores.as_ref()),
                dash(g.links.as_deref()),
                joined(&g.flags),
                dash(g.unique_id.as_deref())
            )
        })
        .collect();
    lines.extend(r.warnings.iter().map(|w| format!("{key}.warning {w}")));
    lines
}

fn alloc(name: &str, devices: &[u32], count: u64) -> GresAllocation {
    GresAllocation {
        name: name.into(),
        type_name: None,
        count,
        devices: Some(bitmap(2, devices.iter().copied())),
        per_device: Vec::new(),
    }
}

fn hardware(configured: &[(&str, u64)]) -> NodeHardware {
    NodeHardware {
        name: "n1".into(),
        cpus: 8,
        sockets: 1,
        cores_per_socket: 8,
        threads_per_core: 1,
        configured: configured
            .iter()
            .map(|(name, count)| GresCount {
                name: (*name).into(),
                type_name: None,
                count: *count,
            })
            .collect(),
    }
}

/// What the Rust API answers for the program's gres calls, as the lines
/// the program prints.
fn gres_lines(dir: &Path) -> Vec<String> {
    let config = host_config::load(&dir.join("gres.toml")).expect("gres.toml");
    let host = host(&config);
    let slot = |name: &str| {
        let slot = &config.plugins[name];
        GresPlugin::load(&host, &slot.source, slot.settings.clone()).expect("load")
    };
    let gpu = slot("gres.gpu");
    let mut lines = Vec::new();
    let id = gpu.identity();
    lines.push(format!(
        "gres.gpu.identity {} {:#x}",
        id.plugin_type, id.plugin_version
    ));
    let gres_config = GresConfig {
        cluster: cluster(),
        auto_detect: Some("nvml".into()),
    };
    gpu.init(&gres_config).unwrap();
    let loaded = gpu.node_config_load(&[], &hardware(&[("gpu", 2)])).unwrap();
    lines.extend(node_config_lines("gres.gpu", &loaded));
    let one = alloc("gpu", &[1], 1);
    let both = alloc("gpu", &[0, 1], 2);
    let none = EnvFlags::empty();
    lines.extend(env_lines(
        "gres.gpu.job_env",
        &gpu.job_set_env(Some(&one), none).unwrap(),
    ));
    lines.extend(env_lines(
        "gres.gpu.step_env",
        &gpu.step_set_env(Some(&both), EnvFlags::VERBOSE).unwrap(),
    ));
    let task = NodeAllocation {
        allocation: both.clone(),
        usable: Some(bitmap(2, [1])),
    };
    lines.extend(env_lines(
        "gres.gpu.task_env",
        &gpu.task_set_env(Some(&task), none).unwrap(),
    ));
    lines.extend(env_lines(
        "gres.gpu.job_env_none",
        &gpu.job_set_env(None, none).unwrap(),
    ));
    lines.extend(env_lines(
        "gres.gpu.job_env_protected",
        &gpu.job_set_env(None, EnvFlags::PROTECT_ENV).unwrap(),
    ));
    for d in gpu.get_devices().unwrap() {
        lines.push(format!(
            "gres.gpu.device {} {} {} {} {} {}",
            d.index,
            d.dev_num,
            d.major,
            d.minor,
            d.path,
            dash(d.unique_id.as_deref())
        ));
    }
    let info = |v: InfoValue| match v {
        InfoValue::Count(c) => format!("0 {c}"),
        InfoValue::Devices(b) => format!("1 {}", bits(Some(&b))),
    };
    lines.push(format!(
        "gres.gpu.job_info_count {}",
        info(gpu.job_info(&both, InfoField::Count).unwrap())
    ));
    lines.push(format!(
        "gres.gpu.job_info_bitmap {}",
        info(gpu.job_info(&both, InfoField::Bitmap).unwrap())
    ));
    lines.push(format!(
        "gres.gpu.step_info_count {}",
        info(gpu.step_info(&one, InfoField::Count).unwrap())
    ));
    let stepd_bytes = gpu.send_stepd().unwrap();
    let stepd = slot("gres.gpu");
    stepd.init(&gres_config).unwrap();
    stepd.recv_stepd(&stepd_bytes).unwrap();
    lines.extend(env_lines(
        "gres.gpu.stepd_env",
        &stepd.step_set_env(Some(&one), none).unwrap(),
    ));
    lines.push(format!(
        "gres.gpu.hw_init {}",
        rc(gpu.step_hardware_init(Some(&bitmap(2, [1])), Some("gpu:high,memory=high")))
    ));
    lines.push(format!("gres.gpu.hw_fini {}", rc(gpu.step_hardware_fini())));
    let mut job = fixtures::job(5);
    job.state = JobState::Running;
    job.resources = Some(JobResources {
        nodes: bitmap(1, [0]),
        ncpus: 2,
        per_node: vec![NodeResources {
            node_index: 0,
            cores: bitmap(8, [0, 1]),
            cpus: 2,
            memory: 0,
            gres: vec![both.clone()],
        }],
        whole_nodes: false,
    });
    let epilog = gpu.epilog_build_env(&job).unwrap();
    lines.push(format!(
        "gres.gpu.epilog_info {}",
        i32::from(epilog.is_some())
    ));
    if let Some(info) = epilog {
        lines.extend(env_lines(
            "gres.gpu.epilog_env",
            &gpu.epilog_set_env(info, 0).unwrap(),
        ));
        lines.push(format!(
            "gres.gpu.epilog_free {}",
            rc(gpu.drop_epilog_info(info))
        ));
    }
    lines.push(format!(
        "gres.gpu.step_context {}",
        rc(gpu.step_context(&fixtures::step(5, 0)))
    ));
    lines.push(format!("gres.gpu.fini {}", rc(gpu.fini())));

    let mps = slot("gres.mps");
    mps.init(&GresConfig {
        cluster: cluster(),
        auto_detect: None,
    })
    .unwrap();
    let record = GresConfRecord {
        origin: "gres.conf:1".into(),
        name: "gpu".into(),
        type_name: None,
        files: vec!["/dev/nvidia0".into(), "/dev/nvidia1".into()],
        count: 2,
        cores: None,
        links: None,
        flags: Vec::new(),
        unique_id: None,
    };
    let loaded = mps
        .node_config_load(&[record], &hardware(&[("gpu", 2), ("mps", 200)]))
        .unwrap();
    lines.extend(node_config_lines("gres.mps", &loaded));
    lines.extend(env_lines(
        "gres.mps.job_env",
        &mps.job_set_env(Some(&alloc("mps", &[0], 100)), none)
            .unwrap(),
    ));
    lines.push(format!("gres.mps.fini {}", rc(mps.fini())));
    lines
}

/// The program's node table: three nodes of 2 sockets x 2 cores and
/// 4000 MB; n0 and n1 with a GPU per socket.
fn nodes() -> Vec<Node> {
    (0..3)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{i}"), 2, 2, 1, 4000);
            if i < 2 {
                n.gres = vec![GresCount {
                    name: "gpu".into(),
                    type_name: None,
                    count: 2,
                }];
                n.gres_topology = [[0, 1], [2, 3]]
                    .iter()
                    .map(|cores| GresDeviceGroup {
                        name: "gpu".into(),
                        type_name: None,
                        count: 1,
                        cores: Some(bitmap(4, cores.iter().copied())),
                        links: Vec::new(),
                    })
                    .collect();
            }
            n
        })
        .collect()
}

fn select_config(param: SelectTypeParams, select_type: &str) -> SelectConfig {
    let mut c = fixtures::select_config();
    c.cluster = cluster();
    c.cluster.select_type_parameters = param;
    c.cluster.raw = vec![KeyValue {
        key: "SelectType".into(),
        value: select_type.into(),
    }];
    c.partitions = vec![fixtures::partition(0, "debug", 3)];
    c
}

fn request(job: &Job, mode: JobTestMode) -> JobTestRequest {
    JobTestRequest {
        job: job.clone(),
        candidates: bitmap(3, 0..3),
        min_nodes: job.details.min_nodes,
        max_nodes: job.details.min_nodes,
        req_nodes: job.details.min_nodes,
        mode,
        flags: JobTestFlags::empty(),
        preemptee_candidates: Vec::new(),
        excluded_cores: None,
    }
}

fn result_lines(key: &str, r: &Result<JobTestResult, CallError>) -> Vec<String> {
    let r = match r {
        Ok(r) => r,
        Err(e) => return vec![format!("{key} err {}", e.slurm_code())],
    };
    let res = &r.resources;
    let mut head = format!(
        "{key} ok {} {} {} {}",
        bits(Some(&res.nodes)),
        res.ncpus,
        res.per_node.len(),
        i32::from(res.whole_nodes)
    );
    if let Some(start) = r.start_time {
        head.push_str(&format!(" start={start}"));
    }
    for p in &r.preemptees {
        head.push_str(&format!(" preempt={p}"));
    }
    let mut lines = vec![head];
    for n in &res.per_node {
        lines.push(format!(
            "{key}.node {} {} {} {}",
            n.node_index,
            bits(Some(&n.cores)),
            n.cpus,
            n.memory
        ));
        for g in &n.gres {
            lines.push(format!(
                "{key}.gres {} {} {} {} {}",
                n.node_index,
                g.name,
                dash(g.type_name.as_deref()),
                g.count,
                bits(g.devices.as_ref())
            ));
        }
    }
    lines
}

fn nodeinfo_line(key: &str, v: Result<NodeinfoValue, CallError>) -> String {
    let (kind, count, memory, text, weighted) = match v {
        Err(e) => return format!("{key} err {}", e.slurm_code()),
        Ok(NodeinfoValue::Count(c)) => (0, c, 0, None, 0.0),
        Ok(NodeinfoValue::Memory(m)) => (1, 0, m, None, 0.0),
        Ok(NodeinfoValue::Text(t)) => (2, 0, 0, Some(t), 0.0),
        Ok(NodeinfoValue::Weighted(w)) => (3, 0, 0, None, w),
    };
    format!(
        "{key} {kind} {count} {memory} {} {weighted:?}",
        dash(text.as_deref())
    )
}

fn jobinfo_line(key: &str, v: Result<JobinfoValue, CallError>) -> String {
    match v {
        Err(e) => format!("{key} err {}", e.slurm_code()),
        Ok(JobinfoValue::Text(t)) => format!("{key} 0 {} 0 0", if t.is_empty() { "-" } else { &t }),
        Ok(JobinfoValue::Flag(f)) => format!("{key} 1 - {} 0", i32::from(f)),
        Ok(JobinfoValue::Count(c)) => format!("{key} 2 - 0 {c}"),
    }
}

fn text_line(key: &str, v: Result<String, CallError>) -> String {
    match v {
        Ok(t) => format!("{key} [{t}]"),
        Err(e) => format!("{key} err {}", e.slurm_code()),
    }
}

/// What the Rust API answers for the program's calls into one select
/// plugin, as the lines the program prints.
fn select_lines(
    dir: &Path,
    tag: &str,
    param: SelectTypeParams,
    select_type: &str,
    with_gres: bool,
) -> Vec<String> {
    let k = |name: &str| format!("sel.{tag}.{name}");
    let p = SelectPlugin::load(
        &Host::new(slurm_wasm_bundled::host_options()).expect("host"),
        &PluginSource::Bundled(select_type.into()),
        PluginSettings::default(),
    )
    .expect("load");
    let mut lines = Vec::new();
    let id = p.identity();
    lines.push(format!(
        "{} {} {} {}",
        k("identity"),
        id.plugin_type,
        i32::from(id.plugin_id.is_some()),
        id.plugin_id.unwrap_or(0)
    ));
    let config = select_config(param, select_type);
    p.init(&config).unwrap();
    let table = nodes();
    p.node_init(&table).unwrap();
    p.job_init(&[]).unwrap();
    for (code, field) in [
        (0, PluginInfoField::CrPlugin),
        (7, PluginInfoField::SingleJobTest),
        (6, PluginInfoField::ConfigInfo),
    ] {
        lines.push(match p.get_info_from_plugin(field, None) {
            Err(e) => format!("{} {code} err {}", k("info"), e.slurm_code()),
            Ok(PluginInfoValue::Flag(f)) => format!("{} {code} 0 {} 0", k("info"), i32::from(f)),
            Ok(PluginInfoValue::Number(n)) => format!("{} {code} 1 0 {n}", k("info"),),
            Ok(PluginInfoValue::Config(pairs)) => {
                let mut line = format!("{} {code} 2 0 0", k("info"));
                for kv in pairs {
                    line.push_str(&format!(" {}={}", kv.key, kv.value));
                }
                line
            }
        });
    }

    let mut j1 = fixtures::job(1);
    j1.details.min_nodes = 2;
    j1.details.num_tasks = 2;
    j1.details.min_cpus = 2;
    j1.details.memory = MemoryRequest::PerNode(1000);
    if with_gres {
        j1.details.gres = vec![GresRequest {
            name: "gpu".into(),
            type_name: None,
            scope: GresScope::PerNode,
            count: 1,
            cpus_per_gres: None,
            mem_per_gres: None,
        }];
    }
    let r1 = p.job_test(&request(&j1, JobTestMode::RunNow));
    lines.extend(result_lines(&k("run_now"), &r1));
    j1.state = JobState::Running;
    j1.start_time = 1000;
    j1.end_time = 4_000_000_000;
    j1.time_limit = Some(60);
    j1.resources = Some(r1.expect("run now").resources);
    lines.push(format!("{} {}", k("job_begin"), rc(p.job_begin(&j1))));
    lines.push(format!("{} {}", k("nodeinfo_set"), rc(p.nodeinfo_set(&j1))));
    lines.push(format!(
        "{} {}",
        k("set_all_begin"),
        rc(p.nodeinfo_set_all())
    ));

    let ni = p.node_nodeinfo(0).unwrap();
    lines.push(nodeinfo_line(
        &k("ni.subcnt"),
        p.nodeinfo_get(ni, NodeinfoField::Subcnt, 3),
    ));
    lines.push(nodeinfo_line(
        &k("ni.mem"),
        p.nodeinfo_get(ni, NodeinfoField::MemAlloc, 0),
    ));
    lines.push(nodeinfo_line(
        &k("ni.tres"),
        p.nodeinfo_get(ni, NodeinfoField::TresAllocFmtStr, 0),
    ));
    lines.push(nodeinfo_line(
        &k("ni.weighted"),
        p.nodeinfo_get(ni, NodeinfoField::TresAllocWeighted, 0),
    ));
    let packed = p.nodeinfo_pack(ni, 38 << 8).unwrap();
    let back = p.nodeinfo_unpack(&packed, 38 << 8).unwrap();
    lines.push(nodeinfo_line(
        &k("ni.unpacked_tres"),
        p.nodeinfo_get(back, NodeinfoField::TresAllocFmtStr, 0),
    ));
    let truncated = p.nodeinfo_unpack(&packed[..packed.len() / 2], 38 << 8);
    lines.push(format!(
        "{} {}",
        k("ni.truncated"),
        rc(truncated.as_ref().map(|_| ()).map_err(Clone::clone))
    ));
    if let Ok(t) = truncated {
        p.drop_resource(t).unwrap();
    }
    lines.push(format!("{} {}", k("ni.free"), rc(p.drop_resource(back))));
    lines.push(format!("{} {}", k("ni.free"), rc(p.drop_resource(ni))));
    let empty = p.nodeinfo_alloc().unwrap();
    lines.push(nodeinfo_line(
        &k("ni.empty"),
        p.nodeinfo_get(empty, NodeinfoField::Subcnt, 3),
    ));
    lines.push(format!("{} {}", k("ni.free"), rc(p.drop_resource(empty))));

    let mut j2 = fixtures::job(2);
    j2.details.min_nodes = 3;
    j2.details.num_tasks = 12;
    j2.details.min_cpus = 12;
    for (name, mode) in [
        ("busy", JobTestMode::RunNow),
        ("will_run", JobTestMode::WillRun),
        ("test_only", JobTestMode::TestOnly),
    ] {
        lines.extend(result_lines(&k(name), &p.job_test(&request(&j2, mode))));
    }
    let mut preempt = request(&j2, JobTestMode::RunNow);
    preempt.preemptee_candidates = vec![PreempteeCandidate {
        job_id: 1,
        mode: PreemptMode::Requeue,
    }];
    lines.extend(result_lines(&k("preempt"), &p.job_test(&preempt)));

    let ji = p.jobinfo_alloc().unwrap();
    lines.push(jobinfo_line(
        &k("ji.network"),
        p.jobinfo_get(ji, JobinfoField::Network),
    ));
    lines.push(format!(
        "{} {}",
        k("ji.set_cleaning"),
        rc(p.jobinfo_set(ji, JobinfoField::Cleaning, &JobinfoValue::Flag(true)))
    ));
    lines.push(jobinfo_line(
        &k("ji.cleaning"),
        p.jobinfo_get(ji, JobinfoField::Cleaning),
    ));
    lines.push(text_line(
        &k("ji.text"),
        p.jobinfo_to_string(ji, SprintMode::Mixed),
    ));
    let packed = p.jobinfo_pack(ji, 38 << 8).unwrap();
    lines.push(format!("{} {}", k("ji.packed_bytes"), packed.len()));
    let ji_back = p.jobinfo_unpack(&packed, 38 << 8).unwrap();
    lines.push(jobinfo_line(
        &k("ji.unpacked_cleaning"),
        p.jobinfo_get(ji_back, JobinfoField::Cleaning),
    ));
    let ji_copy = p.jobinfo_copy(ji_back).unwrap();
    lines.push(text_line(
        &k("ji.copy_text"),
        p.jobinfo_to_string(ji_copy, SprintMode::Data),
    ));
    for info in [ji_copy, ji_back, ji] {
        lines.push(format!("{} {}", k("ji.free"), rc(p.drop_resource(info))));
    }

    lines.push(
        match p.resv_test(&ReservationRequest {
            node_count: 1,
            core_count: 0,
            cores_per_node: Vec::new(),
            available: bitmap(3, 0..3),
            excluded_cores: None,
            flags: 0,
        }) {
            Ok(r) => format!(
                "{} ok {} {}",
                k("resv"),
                bits(Some(&r.nodes)),
                bits(r.cores.as_ref())
            ),
            Err(e) => format!("{} err {}", k("resv"), e.slurm_code()),
        },
    );

    let step = fixtures::step(1, 0);
    lines.push(match p.step_pick_nodes(&j1, &step, 1, None) {
        Ok(picked) => format!(
            "{} ok {} {}",
            k("pick"),
            i32::from(picked.is_some()),
            bits(picked.as_ref())
        ),
        Err(e) => format!("{} err {}", k("pick"), e.slurm_code()),
    });
    let flag = |r: Result<bool, CallError>| match r {
        Ok(f) => format!("0 {}", i32::from(f)),
        Err(e) => format!("{} 0", e.slurm_code()),
    };
    lines.push(format!("{} {}", k("ready"), flag(p.job_ready(&j1))));
    lines.push(format!(
        "{} {}",
        k("expand_allow"),
        flag(p.job_expand_allow())
    ));
    let list = |r: Result<Option<Vec<u32>>, CallError>| match r {
        Ok(l) => format!("0 {} {}", i32::from(l.is_some()), l.map_or(0, |l| l.len())),
        Err(e) => format!("{} 0 0", e.slurm_code()),
    };
    lines.push(format!("{} {}", k("ranking"), list(p.node_ranking(&table))));
    lines.push(format!("{} {}", k("dims"), list(p.ba_get_dims())));
    let state = dir.join(format!("rust-{tag}.state"));
    for (name, code) in [
        ("ba_init", rc(p.ba_init(&table, false))),
        ("signal", rc(p.job_signal(&j1, 9))),
        ("mem_confirm", rc(p.job_mem_confirm(&j1))),
        ("suspend", rc(p.job_suspend(&j1, false))),
        ("resume", rc(p.job_resume(&j1, false))),
        ("step_finish", rc(p.step_finish(&step, false))),
        ("update_node_config", rc(p.update_node_config(&table[2]))),
        ("update_node_state", rc(p.update_node_state(&table[2]))),
        ("state_save", p.save_state_file(&state).map_or(-1, |()| 0)),
        (
            "state_restore",
            p.restore_state_file(&state).map_or(-1, |()| 0),
        ),
        ("job_fini", rc(p.job_fini(&j1))),
        ("set_all", rc(p.nodeinfo_set_all())),
    ] {
        lines.push(format!("{} {code}", k(name)));
    }
    let ni = p.node_nodeinfo(0).unwrap();
    lines.push(nodeinfo_line(
        &k("ni.after_fini"),
        p.nodeinfo_get(ni, NodeinfoField::Subcnt, 3),
    ));
    lines.push(format!(
        "{} {}",
        k("reconfigure"),
        rc(p.reconfigure(&config, &[]))
    ));
    lines.push(format!("{} {}", k("fini"), rc(p.fini())));
    lines.push(format!("{} 0", k("ni.free_after_close")));
    lines
}

#[test]
fn gres_and_select_from_c_agree_with_the_rust_api() {
    let dir = tempfile::tempdir().unwrap();
    write_inputs(dir.path());
    let Some(exe) = build_program(dir.path(), "gres_select_test.c") else {
        return;
    };
    let out = run_program(&exe, dir.path());

    assert_same(
        &out.with_prefix("gres."),
        &gres_lines(dir.path()),
        "gres/gpu and gres/mps",
    );
    assert_same(
        &out.with_prefix("sel.tres."),
        &select_lines(
            dir.path(),
            "tres",
            SelectTypeParams::CORE | SelectTypeParams::MEMORY,
            "select/cons_tres",
            true,
        ),
        "select/cons_tres",
    );
    assert_same(
        &out.with_prefix("sel.linear."),
        &select_lines(
            dir.path(),
            "linear",
            SelectTypeParams::MEMORY,
            "select/linear",
            false,
        ),
        "select/linear",
    );
    errors_name_what_is_wrong(&out, dir.path());
}

/// Each bad argument fails with Slurm's code and a message naming it.
fn errors_name_what_is_wrong(out: &Output, dir: &Path) {
    let d = dir.display();
    let errors: BTreeMap<&str, &str> = out
        .lines
        .iter()
        .filter_map(|l| l.strip_prefix("error."))
        .map(|l| l.split_once(' ').unwrap())
        .collect();
    let expect_code = |name: &str, code: i32, parts: &[&str]| {
        let line = errors
            .get(name)
            .unwrap_or_else(|| panic!("no error.{name} line in {errors:#?}"));
        let (got, message) = line.split_once(' ').unwrap();
        assert_eq!(got, code.to_string(), "error.{name}: {message}");
        for part in parts {
            assert!(
                message.contains(part),
                "error.{name}: `{message}` lacks `{part}`"
            );
        }
    };
    let expect = |name: &str, parts: &[&str]| expect_code(name, -1, parts);
    // Calls before init.
    expect(
        "gres_before_init",
        &["plugin gres/gpu: job-set-env not called: init has not succeeded"],
    );
    expect(
        "select_before_init",
        &["plugin select/cons_tres: job-test not called: init has not succeeded"],
    );
    // Bad input the plugin refuses with its own code
    // (ESLURM_INVALID_GRES), naming the gres.conf line.
    expect_code(
        "bad_gres_conf",
        2072,
        &["gres.conf:4: Count=3 does not match File="],
    );
    // Unknown enum values and flag bits.
    expect(
        "bad_env_flags",
        &["swasm_gres_job_set_env: flags: unknown bits 0x4"],
    );
    expect(
        "bad_node_state",
        &["swasm_select_node_init: nodes[1].state: unknown value 9"],
    );
    expect(
        "bad_mode",
        &["swasm_select_job_test: request.mode: unknown value 3"],
    );
    expect(
        "bad_mode_flag",
        &["swasm_select_job_test: request.mode: unknown flag bits 0x800"],
    );
    expect(
        "bad_nodeinfo_field",
        &["swasm_select_nodeinfo_get: field: unknown value 99"],
    );
    // Bitmaps whose words do not match their length.
    expect(
        "bitmap_without_words",
        &["request.candidates is NULL but its count is 1"],
    );
    // The plugin refuses a candidate bitmap that is not the node table's
    // length (EINVAL), naming both lengths.
    expect_code(
        "bitmap_of_another_length",
        22,
        &["candidates has 5 bits, the node table has 3 nodes"],
    );
    // Bits past the length are ignored (bitstr_t's last word), not refused.
    assert_eq!(out.one("bitmap.tail_bits_ignored"), "ok 0");
    // Arguments that do not go together, resources of another handle.
    expect(
        "usable_without_allocation",
        &["swasm_gres_task_set_env: usable is given without an allocation"],
    );
    for name in [
        "epilog_other_handle",
        "nodeinfo_other_handle",
        "nodeinfo_free_other_handle",
    ] {
        expect(name, &["was made by another plugin handle"]);
    }
    expect("select_null_host", &["swasm_select_open: the host is NULL"]);
    // Slots and components of another kind.
    expect(
        "gres_wrong_slot_kind",
        &[&format!(
            "{d}/gres.toml: [plugins.select] is a select slot, not a gres slot"
        )],
    );
    expect(
        "select_wrong_slot_kind",
        &[&format!(
            "{d}/gres.toml: [plugins.gres.gpu] is a gres slot, not a select slot"
        )],
    );
    expect(
        "select_wrong_wasm_kind",
        &[
            &format!("{d}/wrongkind.toml: [plugins.select]: {d}/gres_gpu.wasm"),
            "is a gres plugin but was loaded into the select slot",
        ],
    );
}
