//! Job steps against real Slurm 22.05.8 (issue 29 and issue 30 item 8:
//! `srun --exact`/`--exclusive` steps get only the CPUs they ask for).
//!
//! `tests/anchor/step/record.sh` ran fourteen batch jobs on the anchor
//! (cons_tres, `CR_Core_Memory`; `big`'s nodes have 2 sockets x 2 cores x
//! 2 threads, `hw`'s 1 socket x 2 cores x 1 thread) and, inside each, a
//! sequence of `srun --immediate` steps kept running while the next was
//! created: exact steps filling the job core by core, whole steps
//! (no `--exact`) before and after exact ones, `--overlap`, `-m` socket
//! orders (block, cyclic, fcyclic), `-c`, `--threads-per-core`, two-node
//! steps, `--overcommit`, `--exclusive`, and `--mem`/`--mem-per-cpu` steps
//! in jobs of bounded memory. slurmctld logged each step's cores
//! (`DebugFlags=CPU_Bind`, step_mgr.c `_dump_step_layout`), and srun said
//! which steps it could not create ("Requested nodes are busy").
//!
//! The replay places each job through `slurm::controller` with the
//! bundled select/cons_tres (its `CPU_IDs` must be Slurm's), then creates
//! the same steps through the controller (`slurm::step`, from the same
//! srun options): a step Slurm refused as busy must be refused as busy,
//! every other one must get, node by node, the cores Slurm gave it. A
//! step whose launch failed on the node (slurmd could not lay out its
//! tasks: srun printed "failed to distribute tasks") ended before the
//! next one was asked for, and ends here too.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use slurm::controller::{Controller, ControllerError, Decision};
use slurm::job_request::JobRequest;
use slurm::setup::records::Cluster;
use slurm::show::allocation::node_allocations;
use slurm::step::{StepError, StepRequest};
use slurm::{gres_conf, slurm_conf};
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::{Host, HostOptions, PluginSettings, PluginSource, SelectPlugin, Services};

use crate::anchor_select::{job_record, JobRecord};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/anchor/step")
}

/// What srun said of one step.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// slurmctld created it and it ran.
    Created,
    /// slurmctld created it, its launch failed on the node (slurmd's
    /// task/affinity could not lay it out), and it ended at once, before
    /// the next step was asked for.
    LaunchFailed,
    /// "Requested nodes are busy".
    Busy,
}

/// A step's cores as slurmctld logged them: `(job node, socket, core)`.
type Layout = Vec<(u32, u32, u32)>;

/// One recorded case.
struct Case {
    name: String,
    job: Vec<String>,
    steps: Vec<(Vec<String>, Outcome)>,
    record: JobRecord,
    /// Per created step in id order: `(job node, socket, core)` of each core.
    layouts: Vec<(u32, Layout)>,
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}

fn parse_case(name: &str, text: &str) -> Result<Case, String> {
    let mut job = None;
    let mut options = Vec::new();
    let mut section = "";
    let mut outcomes = Vec::new();
    let mut record = Vec::new();
    let mut layouts: Vec<(u32, Layout)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# job: ") {
            job = Some(words(rest));
        } else if let Some(rest) = line.strip_prefix("# step: ") {
            options.push(words(rest));
        } else if line.starts_with('[') {
            section = line;
        } else if section == "[steps]" {
            outcomes.push(if line.starts_with("started ") {
                Outcome::Created
            } else if line.ends_with("Requested nodes are busy") {
                Outcome::Busy
            } else if line.starts_with("failed ") {
                Outcome::LaunchFailed
            } else {
                return Err(format!("{name}: unknown step outcome `{line}`"));
            });
        } else if section == "[scontrol show job -d]" {
            record.push(line);
        } else if section == "[slurmctld step layout]" {
            if let Some(id) = line.strip_prefix("StepId=") {
                let id = id.parse().map_err(|_| format!("{name}: `{line}`"))?;
                layouts.push((id, Vec::new()));
            } else {
                let numbers: Vec<u32> = line
                    .split(|c: char| !c.is_ascii_digit())
                    .filter(|w| !w.is_empty())
                    .map(|w| w.parse().expect("digits"))
                    .collect();
                let [node, socket, core] = numbers[..] else {
                    return Err(format!("{name}: `{line}` is not a core line"));
                };
                layouts
                    .last_mut()
                    .ok_or_else(|| format!("{name}: a core line before any StepId"))?
                    .1
                    .push((node, socket, core));
            }
        }
    }
    if outcomes.len() != options.len() {
        return Err(format!(
            "{name}: {} steps, {} outcomes",
            options.len(),
            outcomes.len()
        ));
    }
    Ok(Case {
        name: name.to_owned(),
        job: job.ok_or_else(|| format!("{name}: no `# job:` line"))?,
        steps: options.into_iter().zip(outcomes).collect(),
        record: job_record(&record)?,
        layouts,
    })
}

fn cases() -> Vec<Case> {
    let dir = fixture_dir();
    let mut cases: Vec<Case> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter_map(|path| {
            let file = path.file_name()?.to_str()?.to_owned();
            let name = file.strip_prefix("case-")?.strip_suffix(".txt")?.to_owned();
            let text = std::fs::read_to_string(&path).expect("readable fixture");
            Some(parse_case(&name, &text).unwrap_or_else(|e| panic!("{e}")))
        })
        .collect();
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

fn cluster() -> Cluster {
    let path = fixture_dir().join("slurm.conf");
    let conf = slurm_conf::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut cluster = Cluster::from_slurm_conf(&conf).unwrap_or_else(|e| panic!("{e}"));
    let gres = gres_conf::find(&path, Some(&fixture_dir().join("gres.conf")))
        .unwrap_or_else(|e| panic!("{e}"))
        .expect("the recording has a gres.conf");
    for (node, g) in cluster
        .nodes
        .iter_mut()
        .zip(gres.nodes(&conf).unwrap_or_else(|e| panic!("{e}")))
    {
        node.gres_topology = g.topology;
    }
    cluster
}

/// slurmctld with the bundled select/cons_tres over `cluster`, and the
/// plugin's clock.
fn controller(cluster: &Cluster) -> (Controller<SelectPlugin>, Arc<VirtualClock>) {
    let clock = Arc::new(VirtualClock::new(0));
    let host = Host::new(HostOptions {
        services: Services {
            clock: clock.clone(),
            ..Services::default()
        },
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    let plugin = SelectPlugin::load(
        &host,
        &PluginSource::Bundled("select/cons_tres".into()),
        PluginSettings::default(),
    )
    .expect("bundled cons_tres");
    plugin.init(&cluster.select_config()).expect("init");
    let ctl = Controller::new(cluster.clone(), plugin, None).expect("node-init");
    (ctl, clock)
}

/// Replays one case on `ctl`, whose cluster holds no job before and
/// after; the differences from Slurm, as text.
fn replay(
    case: &Case,
    cluster: &Cluster,
    ctl: &mut Controller<SelectPlugin>,
    clock: &VirtualClock,
) -> Vec<String> {
    let name = &case.name;
    let prepared = JobRequest::parse(&case.job)
        .and_then(|r| r.prepare(case.record.id, cluster, Some("big")))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let now = case.record.start_time;
    clock.set(now);
    let job = match ctl.place(&prepared, now) {
        Ok(Decision::Now { job, .. }) => job,
        other => panic!("{name}: Slurm started the job; ours: {other:?}"),
    };
    let resources = job.resources.as_ref().expect("a running job has resources");
    let ours: Vec<(String, String)> = node_allocations(&cluster.nodes, resources)
        .into_iter()
        .map(|n| (n.node, n.cpu_ids))
        .collect();
    let slurms: Vec<(String, String)> = case
        .record
        .per_node
        .iter()
        .map(|n| (n.node.clone(), n.cpu_ids.clone()))
        .collect();
    assert_eq!(ours, slurms, "{name}: the job's allocation");
    let job_nodes: Vec<u32> = resources.nodes.ones().collect();
    let tasks = prepared.job.details.num_tasks;
    let mut differences = Vec::new();
    let mut layouts = case.layouts.iter();
    for (options, outcome) in &case.steps {
        let request = StepRequest::from_srun(options, job_nodes.len() as u32, tasks)
            .unwrap_or_else(|e| panic!("{name}: srun {options:?}: {e}"));
        let said = options.join(" ");
        match (ctl.step_create(job.job_id, &request), outcome) {
            (Ok(step), Outcome::Created | Outcome::LaunchFailed) => {
                let Some((id, cores)) = layouts.next() else {
                    panic!("{name}: slurmctld logged fewer steps than were created");
                };
                let mut theirs: Vec<(u32, u32)> = cores
                    .iter()
                    .map(|&(node, socket, core)| {
                        let index = job_nodes[node as usize];
                        let n = &cluster.nodes[index as usize];
                        (index, socket * u32::from(n.cores_per_socket) + core)
                    })
                    .collect();
                theirs.sort_unstable();
                let mut mine: Vec<(u32, u32)> = step
                    .nodes
                    .iter()
                    .flat_map(|n| n.cores.ones().map(move |c| (n.node_index, c)))
                    .collect();
                mine.sort_unstable();
                if step.id != *id || mine != theirs {
                    differences.push(format!(
                        "{name}: srun {said}: Slurm's step {id} has cores (node, core) \
                         {theirs:?}; ours (step {}) {mine:?}",
                        step.id
                    ));
                }
                if *outcome == Outcome::LaunchFailed {
                    let id = step.id;
                    ctl.step_complete(job.job_id, id)
                        .unwrap_or_else(|e| panic!("{name}: step {id} ends: {e}"));
                }
            }
            (
                Err(ControllerError::Step {
                    error: StepError::Busy,
                    ..
                }),
                Outcome::Busy,
            ) => {}
            (Ok(step), Outcome::Busy) => differences.push(format!(
                "{name}: srun {said}: Slurm refused it as busy; ours created {step}"
            )),
            (Err(e), _) => differences.push(format!(
                "{name}: srun {said}: Slurm {outcome:?}; ours refused it: {e}"
            )),
        }
    }
    ctl.end(job.job_id).expect("the job ends");
    differences
}

#[test]
fn steps_get_the_cores_slurm_gave_them() {
    let cluster = cluster();
    let cases = cases();
    assert_eq!(cases.len(), 14, "the recording's cases");
    let (mut ctl, clock) = controller(&cluster);
    let differences: Vec<String> = cases
        .iter()
        .flat_map(|c| replay(c, &cluster, &mut ctl, &clock))
        .collect();
    assert!(
        differences.is_empty(),
        "{} differences from real Slurm:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// A step that ends gives its cores back: after the exact steps of
/// `exact-fill` filled the job, ending one lets the next exact step take
/// that step's core (step_mgr.c `_step_dealloc_lps`), and a whole step
/// still waits for the others (a whole step needs a node no step uses).
#[test]
fn an_ended_step_gives_its_cores_back() {
    let cluster = cluster();
    let case = cases()
        .into_iter()
        .find(|c| c.name == "exact-fill")
        .expect("the exact-fill case");
    let (mut ctl, _) = controller(&cluster);
    let prepared = JobRequest::parse(&case.job)
        .and_then(|r| r.prepare(1, &cluster, Some("big")))
        .expect("the job");
    let Ok(Decision::Now { job, .. }) = ctl.place(&prepared, 0) else {
        panic!("the job starts");
    };
    let exact = StepRequest::from_srun(&["--exact", "-n1"], 1, 8).expect("options");
    let whole = StepRequest::from_srun(&["-n1"], 1, 8).expect("options");
    let mut first_cores = None;
    for _ in 0..4 {
        let step = ctl.step_create(job.job_id, &exact).expect("a free core");
        first_cores.get_or_insert_with(|| step.nodes[0].cores.ones().collect::<Vec<u32>>());
    }
    let busy = |r: Result<_, ControllerError>| {
        matches!(
            r,
            Err(ControllerError::Step {
                error: StepError::Busy,
                ..
            })
        )
    };
    assert!(busy(ctl.step_create(job.job_id, &exact).map(|_| ())));
    assert_eq!(
        ctl.steps(job.job_id).count(),
        4,
        "a refused step takes no id"
    );
    ctl.step_complete(job.job_id, 0).expect("step 0 ends");
    let again = ctl
        .step_create(job.job_id, &exact)
        .expect("step 0's core is free");
    assert_eq!(again.id, 4);
    assert_eq!(Some(again.nodes[0].cores.ones().collect()), first_cores);
    assert!(busy(ctl.step_create(job.job_id, &whole).map(|_| ())));
    for id in 1..=4 {
        ctl.step_complete(job.job_id, id).expect("the step ends");
    }
    let all = ctl.step_create(job.job_id, &whole).expect("no step runs");
    assert_eq!(
        all.nodes[0].cores.ones().count(),
        4,
        "every core of the job"
    );
    assert_eq!(all.cpus(), 8);
    assert!(matches!(
        ctl.step_complete(job.job_id, 9),
        Err(ControllerError::Step {
            error: StepError::NoSuchStep,
            ..
        })
    ));
}

/// select/cray_aries's step rules through the controller (issue 33;
/// select_cray_aries.c `select_p_step_start` and
/// `select_p_step_pick_nodes`, whose `avail_nodes` step_mgr.c
/// `_pick_step_nodes` intersects with its candidates): a `--network=blade`
/// job on n1 and n2 (blades 1 and 2: a node's blade is its number mod 4)
/// runs a one-task step on each; a third step finds no node off a counter
/// step's blade and is busy until the first ends, then takes n1. Under
/// the plain select/cons_tres the third step starts at once (the control
/// that makes the test discriminate).
#[test]
fn counter_steps_keep_the_next_step_off_their_blades() {
    let cluster = cluster();
    for cray in [true, false] {
        let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
        let mut layers = vec![PluginSource::Bundled("select/cons_tres".into())];
        let mut config = cluster.select_config();
        if cray {
            layers.insert(0, PluginSource::Bundled("select/cray_aries".into()));
            config.cluster.select_type_parameters |=
                slurm_wasm_host::types::SelectTypeParams::OTHER_CONS_TRES;
        }
        let plugin =
            SelectPlugin::load_stack(&host, &layers, PluginSettings::default()).expect("loads");
        plugin.init(&config).expect("init");
        plugin.set_job_network(1, Some("blade"));
        let mut ctl = Controller::new(cluster.clone(), plugin, None).expect("node-init");
        let prepared = JobRequest::parse(&words("-N2 --exclusive"))
            .and_then(|r| r.prepare(1, &cluster, Some("big")))
            .expect("the job");
        let Ok(Decision::Now { job, .. }) = ctl.place(&prepared, 0) else {
            panic!("the job starts");
        };
        assert_eq!(
            job.resources
                .as_ref()
                .map(|r| r.nodes.ones().collect::<Vec<_>>()),
            Some(vec![0, 1])
        );
        let one = StepRequest::from_srun(&["--exact", "-N1", "-n1"], 2, 2).expect("options");
        let node_of = |step: &slurm::step::Step| step.nodes[0].node_index;
        let first = ctl.step_create(1, &one).map(node_of).expect("step 0");
        let second = ctl.step_create(1, &one).map(node_of).expect("step 1");
        assert_eq!((first, second), (0, 1), "cray: {cray}");
        let third = ctl.step_create(1, &one).map(node_of);
        if !cray {
            assert!(third.is_ok(), "plain cons_tres: {third:?}");
            continue;
        }
        assert!(
            matches!(
                third,
                Err(ControllerError::Step {
                    error: StepError::Busy,
                    ..
                })
            ),
            "{third:?}"
        );
        ctl.step_complete(1, 0).expect("step 0 ends");
        assert_eq!(ctl.step_create(1, &one).map(node_of).expect("step 2"), 0);
    }
}
