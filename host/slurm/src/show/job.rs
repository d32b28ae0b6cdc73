//! A job and a reservation as `scontrol show job -d` and `scontrol show
//! reservation` show them, from the controller's [`Decision`] about the
//! job (22.05 job_info.c `slurm_sprint_job_info`, reservation_info.c).

use crate::controller::Decision;
use crate::hostlist;
use crate::job_request::PreparedJob;
use crate::setup::records::Cluster;
use crate::setup::reservations::Reservation;

use super::allocation::{node_allocations, node_names};

/// A reservation as `scontrol show reservation` shows it: its nodes
/// (compressed), their count, and its cores.
pub fn reservation(cluster: &Cluster, r: &Reservation) -> (String, usize, u64) {
    let names: Vec<String> = r
        .nodes
        .ones()
        .map(|i| cluster.nodes[i as usize].name.clone())
        .collect();
    (
        hostlist::compress(&names),
        names.len(),
        r.core_count(cluster),
    )
}

/// `2026-11-21T16:29:39` (UTC) for Unix seconds.
pub fn timestamp(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// The job as `scontrol show job -d` shows it, decided as `outcome`:
/// `JobId`/`JobName`, the state (`RUNNING`; `PENDING` with the planned
/// start of a will-run, `(will run)`, or why it cannot run), `Preempts=`,
/// the partition and reservation, the node list (`SchedNodeList` for a
/// planned one), the counts and one `Nodes=` line per allocated node.
pub fn text(cluster: &Cluster, prepared: &PreparedJob, outcome: &Decision) -> String {
    let job = &prepared.job;
    let d = &job.details;
    let mut out = format!("JobId={} JobName={}\n", job.job_id, job.name);
    let partition = cluster
        .partitions
        .iter()
        .find(|p| job.partitions.first() == Some(&p.index))
        .map_or("", |p| p.name.as_str());
    let preempts = |out: &mut String, ids: &[u32]| {
        if !ids.is_empty() {
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            out.push_str(&format!("   Preempts={}\n", ids.join(",")));
        }
    };
    let planned = match outcome {
        Decision::Now {
            job,
            preempted: ids,
        } => {
            out.push_str("   JobState=RUNNING Reason=None\n");
            out.push_str(&format!(
                "   StartTime={} EndTime={}\n",
                timestamp(job.start_time),
                timestamp(job.end_time)
            ));
            preempts(&mut out, ids);
            Some(job)
        }
        Decision::Later {
            job,
            start,
            preempts: ids,
        } => {
            out.push_str("   JobState=PENDING Reason=Resources\n");
            out.push_str(&format!(
                "   StartTime={} EndTime={} (will run)\n",
                timestamp(*start),
                timestamp(job.end_time)
            ));
            preempts(&mut out, ids);
            Some(job)
        }
        Decision::Never(e) => {
            out.push_str(&format!("   JobState=PENDING Reason=cannot run: {e}\n"));
            None
        }
    };
    out.push_str(&format!("   Partition={partition}\n"));
    if let Some(r) = &prepared.reservation {
        out.push_str(&format!("   Reservation={r}\n"));
    }
    let Some(resources) = planned.and_then(|j| j.resources.as_ref()) else {
        out.push_str(&format!(
            "   NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={}\n",
            d.min_nodes,
            d.min_cpus,
            shown_tasks(d.num_tasks, d.min_nodes),
            d.cpus_per_task.max(1)
        ));
        return out;
    };
    let nodes = node_allocations(&cluster.nodes, resources);
    let names = node_names(&cluster.nodes, resources);
    // A pending job shows the nodes it is planned on (a will-run answer
    // carries no per-node detail).
    let list = match outcome {
        Decision::Later { .. } => "SchedNodeList",
        _ => "NodeList",
    };
    out.push_str(&format!("   {list}={}\n", hostlist::compress(&names)));
    out.push_str(&format!(
        "   NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={}\n",
        names.len(),
        resources.ncpus,
        shown_tasks(d.num_tasks, names.len() as u32),
        d.cpus_per_task.max(1)
    ));
    for n in &nodes {
        out.push_str(&format!(
            "     Nodes={} CPU_IDs={} Mem={} GRES={}\n",
            n.node, n.cpu_ids, n.memory, n.gres
        ));
    }
    out
}

/// `NumTasks=` as slurmctld packs it: the job's task count, or for a job
/// that gave none its node count (the minimum while pending, the allocated
/// nodes once placed; 22.05 job_mgr.c `_pack_default_job_details`).
pub fn shown_tasks(num_tasks: u32, nodes: u32) -> u32 {
    if num_tasks > 0 {
        num_tasks
    } else {
        nodes
    }
}

#[cfg(test)]
mod tests {
    use super::timestamp;

    #[test]
    fn timestamps_are_utc_civil_times() {
        // `date -u -d @1795278279 +%FT%T` on the recording machine.
        assert_eq!(timestamp(1_795_278_279), "2026-11-21T16:24:39");
        assert_eq!(timestamp(0), "1970-01-01T00:00:00");
        assert_eq!(timestamp(951_782_400), "2000-02-29T00:00:00");
    }
}
