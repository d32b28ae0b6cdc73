//! A trace job as slurmctld would hold it: the sbatch options the trace
//! describes, turned into the contract's `job` record and `job-test`
//! arguments by the same code `select place` and the differential replays
//! of real Slurm use ([`JobRequest::prepare`]).

use slurm::job_request::{Gres, JobRequest, Memory, PreparedJob, RequestError, YEAR};
use slurm::setup::records::Cluster;
use slurm_wasm_host::types::GresScope;

use crate::workload::TraceJob;

/// The request of one job, resolved against the cluster.
#[derive(Debug, Clone)]
pub struct Request {
    /// The job as submitted (state pending) with its `job-test` arguments.
    pub prepared: PreparedJob,
    /// Index of the partition the job runs in.
    pub partition: usize,
    /// Time limit in seconds after which the job is killed (time limit plus
    /// `OverTimeLimit`); none = unlimited.
    pub kill_after: Option<i64>,
    /// Expected run time slurmctld assumes for will-run and backfill
    /// (the time limit; a year when unlimited, as Slurm does).
    pub expected: i64,
}

/// The sbatch options `trace` stands for, in partition `partition`:
///
/// * `-p`: the trace's partition when the cluster has one of that name,
///   else `default_partition` (`fell_back` is set);
/// * `--time`: the trace's requested time rounded up to whole minutes,
///   else none (the partition's `DefaultTime`, else its `MaxTime`, applies);
/// * `-n` the trace's CPUs (one CPU per task); `-N` the trace's node count
///   when it has one (then also the maximum), else the fewest nodes of the
///   partition that can hold the CPUs (the CPUs divided by
///   `largest_node_cpus[partition]`, the CPU count of the partition's
///   largest node, see [`largest_node_cpus`]) as the minimum;
/// * `--mem` per node from the trace, else none (the partition's default);
/// * `--gpus=N` when the trace has GPUs.
fn options(
    trace: &TraceJob,
    cluster: &Cluster,
    default_partition: usize,
    largest_node_cpus: &[u32],
    fell_back: &mut bool,
) -> (usize, JobRequest) {
    let partition = trace
        .partition
        .as_deref()
        .and_then(|name| cluster.partitions.iter().position(|p| p.name == name));
    *fell_back = trace.partition.is_some() && partition.is_none();
    let partition = partition.unwrap_or(default_partition);
    let cpus = trace.cpus.max(1);
    let nodes = trace.nodes.filter(|&n| n > 0);
    let min_nodes = nodes.unwrap_or_else(|| cpus.div_ceil(largest_node_cpus[partition].max(1)));
    let gres = (trace.gpus > 0)
        .then(|| Gres {
            name: "gpu".into(),
            type_name: None,
            scope: GresScope::PerJob,
            count: u64::from(trace.gpus),
        })
        .into_iter()
        .collect();
    let request = JobRequest {
        nodes: Some((min_nodes, nodes)),
        ntasks: Some(cpus),
        memory: trace
            .memory_mb_per_node
            .filter(|&mb| mb > 0)
            .map(Memory::PerNode),
        gres,
        partition: Some(cluster.partitions[partition].name.clone()),
        time_limit: trace
            .time_limit
            .filter(|&secs| secs > 0)
            .map(|secs| Some(u32::try_from((secs + 59) / 60).unwrap_or(u32::MAX))),
        ..JobRequest::default()
    };
    (partition, request)
}

/// The job of `trace` submitted at Unix time `submit`: the sbatch options
/// it stands for (`-p`, `-t`, `-n`, `-N`, `--mem`, `--gpus`, as the
/// private `options` lists) prepared as slurmctld would
/// ([`JobRequest::prepare`]), with the trace's user, group and account,
/// eligible (accruing age) from submission.
///
/// # Errors
///
/// What [`JobRequest::prepare`] refuses (a memory or task count beyond
/// what a job record holds): sbatch would refuse the job.
pub fn request(
    trace: &TraceJob,
    submit: i64,
    cluster: &Cluster,
    default_partition: usize,
    largest_node_cpus: &[u32],
    fell_back: &mut bool,
) -> Result<Request, RequestError> {
    let (partition, options) = options(
        trace,
        cluster,
        default_partition,
        largest_node_cpus,
        fell_back,
    );
    let mut prepared = options.prepare(trace.id, cluster, None)?;
    let job = &mut prepared.job;
    job.user_id = trace.user;
    job.group_id = trace.group;
    job.account = trace.account.clone();
    job.details.submit_time = submit;
    job.details.accrue_time = submit;
    let limit = job.time_limit;
    let over_time = i64::from(cluster.config.over_time_limit);
    Ok(Request {
        prepared,
        partition,
        kill_after: limit.map(|m| (i64::from(m) + over_time) * 60),
        expected: limit.map_or(YEAR, |m| i64::from(m) * 60),
    })
}

/// The CPU count of each partition's largest node (0 for an empty one).
pub fn largest_node_cpus(cluster: &Cluster) -> Vec<u32> {
    cluster
        .partitions
        .iter()
        .map(|p| {
            p.nodes
                .ones()
                .map(|i| u32::from(cluster.nodes[i as usize].cpus))
                .max()
                .unwrap_or(0)
        })
        .collect()
}
