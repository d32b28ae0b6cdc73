//! A trace job as the contract's `job` record, the way `sbatch` and
//! slurmctld would have filled it for the request the trace describes.

use slurm::setup::records::Cluster;
use slurm_wasm_host::fixtures;
use slurm_wasm_host::types::{GresRequest, GresScope, Job, MemoryRequest, TresAmount};

use crate::workload::TraceJob;

/// The request of one job, resolved against the cluster.
#[derive(Debug, Clone)]
pub struct Request {
    /// The job record as submitted (state pending).
    pub job: Job,
    /// Index of the partition the job runs in.
    pub partition: usize,
    /// Time limit in seconds after which the job is killed (time limit plus
    /// `OverTimeLimit`); none = unlimited.
    pub kill_after: Option<i64>,
    /// Expected run time slurmctld assumes for will-run and backfill
    /// (the time limit; a year when unlimited, as Slurm does).
    pub expected: i64,
}

/// One year, Slurm's stand-in for "unlimited" in end-time estimates.
pub const YEAR: i64 = 365 * 24 * 3600;

/// Builds the record of `trace` submitted at Unix time `submit`:
///
/// * partition: the trace's partition when the cluster has one of that
///   name, else `default_partition` (`fell_back` is set);
/// * `--time`: the trace's requested time rounded up to whole minutes,
///   else the partition's `DefaultTime`, else its `MaxTime`, else none;
/// * `-n` = `min_cpus` = the trace's CPUs (one CPU per task), `-N` = the
///   trace's node count when it has one (then also the maximum), else the
///   fewest nodes of the partition that can hold the CPUs (the CPUs
///   divided by `largest_node_cpus[partition]`, the CPU count of the
///   partition's largest node, see [`largest_node_cpus`]);
/// * `--mem` per node from the trace, else the partition's default memory;
/// * `--gpus=N` (a per-job `gpu` GRES request) when the trace has GPUs;
/// * user, group, account; eligible (accruing age) from submission.
pub fn request(
    trace: &TraceJob,
    submit: i64,
    cluster: &Cluster,
    default_partition: usize,
    largest_node_cpus: &[u32],
    fell_back: &mut bool,
) -> Request {
    let partition = trace
        .partition
        .as_deref()
        .and_then(|name| cluster.partitions.iter().position(|p| p.name == name));
    *fell_back = trace.partition.is_some() && partition.is_none();
    let partition = partition.unwrap_or(default_partition);
    let part = &cluster.partitions[partition];
    let largest_node = largest_node_cpus[partition].max(1);
    let cpus = trace.cpus.max(1);
    let min_nodes = trace
        .nodes
        .filter(|&n| n > 0)
        .unwrap_or_else(|| cpus.div_ceil(largest_node));
    let limit_minutes: Option<u32> = match trace.time_limit {
        Some(secs) if secs > 0 => Some(u32::try_from((secs + 59) / 60).unwrap_or(u32::MAX)),
        _ => part.default_time.or(part.max_time),
    };
    let mut job = fixtures::job(trace.id);
    job.user_id = trace.user;
    job.group_id = trace.group;
    job.account = trace.account.clone();
    job.partitions = vec![part.index];
    job.time_limit = limit_minutes;
    job.total_cpus = Some(cpus);
    let d = &mut job.details;
    d.min_nodes = min_nodes;
    d.max_nodes = trace.nodes.filter(|&n| n > 0);
    d.num_tasks = cpus;
    d.min_cpus = cpus;
    d.submit_time = submit;
    d.accrue_time = submit;
    d.memory = match trace.memory_mb_per_node {
        Some(mb) if mb > 0 => MemoryRequest::PerNode(mb),
        _ => part.default_memory,
    };
    if trace.gpus > 0 {
        d.gres.push(GresRequest {
            name: "gpu".into(),
            type_name: None,
            scope: GresScope::PerJob,
            count: u64::from(trace.gpus),
            cpus_per_gres: None,
            mem_per_gres: None,
        });
    }
    job.tres_requested = tres(cpus, min_nodes, &job.details.memory, trace.gpus);
    let over_time = i64::from(cluster.config.over_time_limit);
    let kill_after = limit_minutes.map(|m| (i64::from(m) + over_time) * 60);
    Request {
        job,
        partition,
        kill_after,
        expected: limit_minutes.map_or(YEAR, |m| i64::from(m) * 60),
    }
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

fn tres(cpus: u32, nodes: u32, memory: &MemoryRequest, gpus: u32) -> Vec<TresAmount> {
    let mut tres = vec![TresAmount {
        name: "cpu".into(),
        count: u64::from(cpus),
    }];
    let mem = match memory {
        MemoryRequest::PerNode(mb) => Some(mb * u64::from(nodes)),
        MemoryRequest::PerCpu(mb) => Some(mb * u64::from(cpus)),
        MemoryRequest::None => None,
    };
    if let Some(mb) = mem {
        tres.push(TresAmount {
            name: "mem".into(),
            count: mb,
        });
    }
    tres.push(TresAmount {
        name: "node".into(),
        count: u64::from(nodes),
    });
    if gpus > 0 {
        tres.push(TresAmount {
            name: "gres/gpu".into(),
            count: u64::from(gpus),
        });
    }
    tres
}
