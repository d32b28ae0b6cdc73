//! `slurm-wasm select place`: where would this job go?
//!
//! Builds the cluster of a `slurm.conf` (with the `gres.conf` beside it, or
//! the one named), loads the select plugin its `SelectType` names (bundled;
//! `select/cons_res` is served by `select/cons_tres`; without `SelectType`
//! Slurm 22.05's default, `select/linear`), starts the `--running` jobs in
//! order the way `slurmctld` starts a job (`job-test` RUN_NOW, then
//! `job-begin` and `nodeinfo-set`), and asks for the new job: RUN_NOW, and
//! when it cannot start now WILL_RUN. The answer is printed the way
//! `scontrol show job -d` shows a job (`--json` for machines): a job that
//! must wait shows its planned `SchedNodeList` and start, as Slurm shows a
//! pending job (a will-run answer has no per-node detail). Every job
//! runs for its time limit from `--now`, so WILL_RUN start times follow
//! from the running jobs' `-t`. Under `PreemptType=preempt/partition_prio`
//! or `preempt/qos` (with the site's QOS table from `--qos-table`, as
//! `sacctmgr -P show qos` prints it, and each job's `-q`) both tests are
//! offered the running jobs slurmctld would offer
//! (`setup::preemption`), and the answer lists those the job preempts
//! (`Preempts=`, the running jobs' ids: their positions among
//! `--running`, from 1); cancelled or requeued ones leave before the job
//! is placed.
//!
//! With `--reservation 'NAME NodeCnt=N [CoreCnt=C]'` a reservation is made
//! once the running jobs started, as slurmctld makes it
//! (`setup::reservations`), and shown as `scontrol show reservation` shows
//! its nodes and cores; the job keeps off it, or with
//! `--reservation=NAME` runs in it.
//!
//! Exit codes: 0 the job starts now, 3 it would start later (WILL_RUN),
//! 1 it cannot run at all or a running job could not start, 2 bad input.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use serde_json::json;
use slurm::controller::{Controller, Decision};
use slurm::hostlist;
use slurm::job_request::{JobRequest, PreparedJob};
use slurm::setup::preemption::{self, Preemption};
use slurm::setup::qos::QosTable;
use slurm::setup::records::Cluster;
use slurm::show::{
    self,
    allocation::{node_allocations, node_names},
};
use slurm::{gres_conf, slurm_conf};
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::kinds::select::JobTestMode;
use slurm_wasm_host::recording::RecordOptions;
use slurm_wasm_host::types::Job;
use slurm_wasm_host::{PluginSettings, Services};

/// What `select place` was asked.
pub struct PlaceRequest {
    pub slurm_conf: PathBuf,
    pub gres_conf: Option<PathBuf>,
    /// The site's QOS table (`sacctmgr -P show qos`).
    pub qos_table: Option<PathBuf>,
    /// A reservation made once the running jobs started, as
    /// `NAME NodeCnt=N [CoreCnt=C]`.
    pub reservation: Option<String>,
    /// sbatch options of each running job, in start order.
    pub running: Vec<String>,
    /// sbatch options of each queued job, in submission order.
    pub pending: Vec<String>,
    /// Unix seconds the decision is made at; the system time when none.
    pub now: Option<i64>,
    pub json: bool,
    /// Where to record the select plugin's calls.
    pub record: Option<PathBuf>,
    /// sbatch options of the job to place.
    pub options: Vec<String>,
}

/// What `select place` reads from a site's configuration files.
struct Site {
    /// The cluster, with each node's GRES device groups.
    cluster: Cluster,
    /// The default partition's name.
    default: Option<String>,
    /// The select plugin that places jobs.
    select: String,
    /// The preemption rules, when the site preempts.
    preemption: Option<Preemption>,
    /// The QOS table, and the file it came from.
    qos: Option<(QosTable, PathBuf)>,
}

impl Site {
    /// Refuses a job whose `-q` names a QOS the site's table does not
    /// define, as sbatch refuses an invalid QOS (no check without a
    /// table).
    fn check_qos(&self, job: &Job) -> anyhow::Result<()> {
        match (&self.qos, job.qos.as_deref()) {
            (Some((table, file)), Some(name)) if table.get(Some(name)).is_none() => Err(anyhow!(
                "QOS `{name}` is not in the QOS table {}",
                file.display()
            )),
            _ => Ok(()),
        }
    }
}

/// The site of `slurm_conf`, with each node's GRES device groups from
/// `gres_conf` (or the `gres.conf` beside `slurm_conf`, when there is one)
/// and the QOS of `qos_table` (none when not given; required under
/// `PreemptType=preempt/qos`).
fn site(
    slurm_conf: &Path,
    gres_conf: Option<&Path>,
    qos_table: Option<&Path>,
) -> anyhow::Result<Site> {
    let conf = slurm_conf::load(slurm_conf)?;
    let qos = match qos_table {
        Some(path) => Some((QosTable::load(path)?, path.to_path_buf())),
        None => None,
    };
    if preemption::by_qos(&conf) && qos.is_none() {
        return Err(anyhow!(
            "{}: PreemptType=preempt/qos needs the site's QOS table: --qos-table FILE, as \
             `sacctmgr -P show qos` prints it",
            slurm_conf.display()
        ));
    }
    let mut cluster = Cluster::from_slurm_conf(&conf)?;
    if let Some(gres) = gres_conf::find(slurm_conf, gres_conf)? {
        for (node, gres) in cluster.nodes.iter_mut().zip(gres.nodes(&conf)?) {
            node.gres_topology = gres.topology;
        }
    }
    let select = match conf.select_type() {
        Some("select/cons_res") => "select/cons_tres".to_owned(),
        Some(other) => other.to_owned(),
        None => "select/linear".to_owned(),
    };
    Ok(Site {
        cluster,
        default: conf.default_partition().map(|p| p.name.clone()),
        select,
        preemption: Preemption::from_conf(
            &conf,
            qos.as_ref().map_or(&QosTable::default(), |(t, _)| t),
        )?,
        qos,
    })
}

/// A job's options as shell words (`-N2 --mem=1G`); quotes are not
/// interpreted.
fn words(options: &str) -> Vec<String> {
    options.split_whitespace().map(str::to_owned).collect()
}

/// A `--reservation` spec: its name, node count and core count (0 for a
/// node reservation).
fn reservation_spec(spec: &str) -> anyhow::Result<(String, u32, u32)> {
    let mut words = spec.split_whitespace();
    let name = words
        .next()
        .filter(|n| !n.contains('='))
        .ok_or_else(|| anyhow!("--reservation '{spec}': expected `NAME NodeCnt=N [CoreCnt=C]`"))?;
    let (mut nodes, mut cores) = (None, 0);
    for word in words {
        let count = |v: &str| {
            v.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| {
                anyhow!("--reservation '{spec}': `{word}`: expected a positive count")
            })
        };
        match word.split_once('=') {
            Some((k, v)) if k.eq_ignore_ascii_case("NodeCnt") => nodes = Some(count(v)?),
            Some((k, v)) if k.eq_ignore_ascii_case("CoreCnt") => cores = count(v)?,
            _ => {
                return Err(anyhow!(
                    "--reservation '{spec}': `{word}`: expected NodeCnt=N or CoreCnt=C"
                ))
            }
        }
    }
    let nodes = nodes.ok_or_else(|| anyhow!("--reservation '{spec}': expected NodeCnt=N"))?;
    Ok((name.to_owned(), nodes, cores))
}

fn now_or_system(now: Option<i64>) -> i64 {
    now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    })
}

pub fn place(request: PlaceRequest) -> anyhow::Result<ExitCode> {
    let now = now_or_system(request.now);
    let site = site(
        &request.slurm_conf,
        request.gres_conf.as_deref(),
        request.qos_table.as_deref(),
    )?;
    let (cluster, default, select) = (&site.cluster, site.default.as_deref(), &site.select);
    // Every job's options are checked before anything is loaded.
    let mut running = Vec::new();
    for (i, options) in request.running.iter().enumerate() {
        let id = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let prepared = JobRequest::parse(&words(options))
            .and_then(|r| r.prepare(id, cluster, default))
            .map_err(|e| anyhow!("--running '{options}': {e}"))?;
        site.check_qos(&prepared.job)
            .map_err(|e| anyhow!("--running '{options}': {e}"))?;
        running.push((options, prepared));
    }
    let mut pending = Vec::new();
    for (i, options) in request.pending.iter().enumerate() {
        let id = u32::try_from(running.len() + i + 1).unwrap_or(u32::MAX);
        let prepared = JobRequest::parse(&words(options))
            .and_then(|r| r.prepare(id, cluster, default))
            .map_err(|e| anyhow!("--pending '{options}': {e}"))?;
        site.check_qos(&prepared.job)
            .map_err(|e| anyhow!("--pending '{options}': {e}"))?;
        pending.push(prepared.job);
    }
    let id = u32::try_from(running.len() + pending.len() + 1).unwrap_or(u32::MAX);
    let prepared = JobRequest::parse(&request.options)
        .and_then(|r| r.prepare(id, cluster, default))
        .map_err(|e| anyhow!("{e}"))?;
    site.check_qos(&prepared.job)?;
    let spec = request
        .reservation
        .as_deref()
        .map(reservation_spec)
        .transpose()?;
    // The reservation is made once the running jobs started: only the new
    // job may run in it.
    if let Some((options, _)) = running.iter().find(|(_, p)| p.reservation.is_some()) {
        return Err(anyhow!(
            "--running '{options}': a running job cannot name a reservation (it is made after \
             the running jobs start)"
        ));
    }
    if let Some(r) = prepared.reservation.as_deref() {
        if spec.as_ref().is_none_or(|(name, ..)| name != r) {
            return Err(anyhow!(
                "reservation `{r}` is not made here: add --reservation '{r} NodeCnt=N [CoreCnt=C]'"
            ));
        }
    }

    let services = Services {
        clock: Arc::new(VirtualClock::new(now)),
        ..Services::default()
    };
    let host = crate::commands::host(services)?;
    let select_config = cluster.select_config();
    let plugin = slurm::setup::load_bundled_select(
        &host,
        select,
        select_config.cluster.select_type_parameters,
        PluginSettings::default(),
    )
    .with_context(|| {
        format!(
            "loading {select} (SelectType of {})",
            request.slurm_conf.display()
        )
    })?;
    if let Some(path) = &request.record {
        plugin.record(RecordOptions::new(path))?;
    }
    plugin.init(&select_config)?;
    let mut controller = Controller::new(cluster.clone(), plugin, site.preemption.clone())?;

    // The running jobs were placed before any reservation, each without
    // preempting the others.
    for (options, job) in &running {
        let result = match controller.pick_best_nodes(&job.test_request(JobTestMode::RunNow)) {
            Ok(result) => result,
            Err(e) => {
                eprintln!(
                    "slurm-wasm: --running '{options}' (job {}) cannot start now: {e}",
                    job.job.job_id
                );
                return Ok(ExitCode::from(1));
            }
        };
        controller.begin(job.started(result.resources, now))?;
    }

    // The reservation, as slurmctld makes it now (`setup::reservations`).
    if let Some((name, nodes, cores)) = &spec {
        let partition = default
            .and_then(|d| cluster.partitions.iter().position(|p| p.name == d))
            .ok_or_else(|| anyhow!("a reservation needs a default partition (Default=YES)"))?;
        if let Err(e) = controller.reserve(name, partition, *nodes, *cores) {
            eprintln!("slurm-wasm: reservation {name} cannot be made now: {e}");
            return Ok(ExitCode::from(1));
        }
    }

    for job in pending {
        controller.queue(job);
    }
    let outcome = controller.place(&prepared, now)?;
    let active = controller.reservations();
    let shown = active
        .first()
        .map(|r| (r, show::job::reservation(cluster, r)));
    if request.json {
        let mut v = as_json(cluster, &prepared, &outcome, select, now);
        if let Some((r, (nodes, node_count, core_count))) = &shown {
            v["reservation"] = json!({
                "name": r.name,
                "nodes": nodes,
                "node_count": node_count,
                "core_count": core_count,
            });
        }
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        if let Some((r, (nodes, node_count, core_count))) = &shown {
            println!(
                "ReservationName={}\n   Nodes={nodes} NodeCnt={node_count} CoreCnt={core_count}",
                r.name
            );
        }
        print!("{}", show::job::text(cluster, &prepared, &outcome));
    }
    Ok(match outcome {
        Decision::Now { .. } => ExitCode::SUCCESS,
        Decision::Later { .. } => ExitCode::from(3),
        Decision::Never(_) => ExitCode::from(1),
    })
}

fn as_json(
    cluster: &Cluster,
    prepared: &PreparedJob,
    outcome: &Decision,
    select: &str,
    now: i64,
) -> serde_json::Value {
    let job = &prepared.job;
    let (state, start, planned, preempts, error) = match outcome {
        Decision::Now {
            job,
            preempted: ids,
        } => ("RUNNING", Some(job.start_time), Some(job), &ids[..], None),
        Decision::Later {
            job,
            start,
            preempts: ids,
        } => ("PENDING", Some(*start), Some(job), &ids[..], None),
        Decision::Never(e) => ("PENDING", None, None, &[][..], Some(e.to_string())),
    };
    let resources = planned.and_then(|j| j.resources.as_ref());
    let nodes = resources
        .map(|r| node_allocations(&cluster.nodes, r))
        .unwrap_or_default();
    let names = resources
        .map(|r| node_names(&cluster.nodes, r))
        .unwrap_or_default();
    json!({
        "select": select,
        "now": now,
        "job_id": job.job_id,
        "job_name": job.name,
        "state": state,
        "will_run": matches!(outcome, Decision::Later { .. }),
        "start_time": start,
        "end_time": planned.map(|j| j.end_time),
        "error": error,
        "preempts": preempts,
        "node_list": hostlist::compress(&names),
        "num_nodes": names.len(),
        "num_cpus": resources.map(|r| r.ncpus),
        "num_tasks": show::job::shown_tasks(job.details.num_tasks, if resources.is_some() { names.len() as u32 } else { job.details.min_nodes }),
        "cpus_per_task": job.details.cpus_per_task,
        "nodes": nodes.iter().map(|n| json!({
            "node": n.node,
            "cpus": n.cpus,
            "cpu_ids": n.cpu_ids,
            "mem": n.memory,
            "gres": n.gres,
        })).collect::<Vec<_>>(),
    })
}
