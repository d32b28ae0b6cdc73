//! Jobs: `scontrol show job -o` records (times as Unix seconds through
//! `SLURM_TIME_FORMAT=%s`) and `record.sh`'s list of submitted jobs.

use std::collections::HashMap;

use super::{integer, Parsed};

/// One job of `scontrol show job -o`.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    pub job_id: u32,
    pub name: String,
    pub user: String,
    pub uid: u32,
    pub gid: u32,
    /// The priority slurmctld holds (0 = held); for a job in several
    /// partitions, the one of the partition it would run in first.
    pub priority: u32,
    pub nice: i32,
    pub account: String,
    pub qos: String,
    /// `PENDING`, `RUNNING`, `COMPLETED`, ...
    pub state: String,
    pub reason: String,
    /// Minutes; None for `UNLIMITED` or `Partition_Limit`.
    pub time_limit: Option<u32>,
    pub submit_time: i64,
    /// `EligibleTime` (the begin time); None when `Unknown`.
    pub eligible_time: Option<i64>,
    /// None until the job accrues age.
    pub accrue_time: Option<i64>,
    /// Actual start, or for a pending job the scheduler's estimate.
    pub start_time: Option<i64>,
    pub end_time: Option<i64>,
    pub partitions: Vec<String>,
    /// `NumNodes=min[-max]`.
    pub min_nodes: u32,
    pub max_nodes: Option<u32>,
    /// `NumCPUs=min[-max]`: what a pending job asked for, what a running
    /// one holds.
    pub min_cpus: u32,
    pub max_cpus: Option<u32>,
    pub num_tasks: Option<u32>,
    pub cpus_per_task: u16,
    /// `TRES=`: allocated for a running job, requested for a pending one;
    /// `mem` in MB.
    pub tres: Vec<(String, u64)>,
    /// `MinMemoryCPU` or `MinMemoryNode`, in MB.
    pub memory: Memory,
    /// `TresPerNode=` (`gres:gpu:1`), when given.
    pub tres_per_node: Option<String>,
}

/// A job's memory request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    PerCpu(u64),
    PerNode(u64),
}

/// One line of `submitted.txt`: `job id|user|account|label|sbatch
/// options|scontrol update after submission`.
#[derive(Debug, Clone, PartialEq)]
pub struct Submitted {
    pub job_id: u32,
    pub user: String,
    pub account: String,
    pub label: String,
    pub options: String,
    /// `Key=Value` settings of the `scontrol update` that followed.
    pub update: Vec<(String, String)>,
}

impl Submitted {
    /// The value the update after submission set for `key`.
    pub fn updated(&self, key: &str) -> Option<&str> {
        self.update
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The jobs of `scontrol show job -o`, one per line.
pub fn parse_show_job(text: &str) -> Parsed<Vec<JobRecord>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| job(line).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

/// The lines of `submitted.txt` (`#` starts a comment).
pub fn parse_submitted(text: &str) -> Parsed<Vec<Submitted>> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split('|').collect();
            let [id, user, account, label, options, update] = fields[..] else {
                return Err(format!("expected 6 fields: `{line}`"));
            };
            Ok(Submitted {
                job_id: integer(id)?,
                user: user.to_owned(),
                account: account.to_owned(),
                label: label.to_owned(),
                options: options.to_owned(),
                update: update
                    .split_whitespace()
                    .map(|kv| {
                        kv.split_once('=')
                            .map(|(k, v)| (k.to_owned(), v.to_owned()))
                            .ok_or_else(|| format!("expected Key=Value, found `{kv}`"))
                    })
                    .collect::<Parsed<_>>()?,
            })
        })
        .collect()
}

fn job(line: &str) -> Parsed<JobRecord> {
    let fields: HashMap<&str, &str> = line
        .split_whitespace()
        .filter_map(|item| item.split_once('='))
        .collect();
    let get = |k: &str| fields.get(k).copied().ok_or(format!("no {k}="));
    let (user, uid) = name_and_id(get("UserId")?)?;
    let (_, gid) = name_and_id(get("GroupId")?)?;
    let (min_nodes, max_nodes) = range(get("NumNodes")?)?;
    let (min_cpus, max_cpus) = range(get("NumCPUs")?)?;
    let memory = match (fields.get("MinMemoryCPU"), fields.get("MinMemoryNode")) {
        (Some(mb), _) => Memory::PerCpu(megabytes(mb)?),
        (None, Some(mb)) => Memory::PerNode(megabytes(mb)?),
        (None, None) => return Err("no MinMemoryCPU= or MinMemoryNode=".into()),
    };
    Ok(JobRecord {
        job_id: integer(get("JobId")?)?,
        name: get("JobName")?.to_owned(),
        user,
        uid,
        gid,
        priority: integer(get("Priority")?)?,
        nice: integer(get("Nice")?)?,
        account: get("Account")?.to_owned(),
        qos: get("QOS")?.to_owned(),
        state: get("JobState")?.to_owned(),
        reason: get("Reason")?.to_owned(),
        time_limit: minutes(get("TimeLimit")?)?,
        submit_time: time(get("SubmitTime")?)?.ok_or("SubmitTime=Unknown")?,
        eligible_time: time(get("EligibleTime")?)?,
        accrue_time: time(get("AccrueTime")?)?,
        start_time: time(get("StartTime")?)?,
        end_time: time(get("EndTime")?)?,
        partitions: get("Partition")?.split(',').map(str::to_owned).collect(),
        min_nodes,
        max_nodes,
        min_cpus,
        max_cpus,
        num_tasks: match get("NumTasks")? {
            "N/A" => None,
            n => Some(integer(n)?),
        },
        cpus_per_task: integer(get("CPUs/Task")?)?,
        tres: get("TRES")?
            .split(',')
            .filter(|t| !t.is_empty())
            .map(|t| {
                let (name, value) = t.split_once('=').ok_or(format!("TRES item `{t}`"))?;
                let count = if name == "mem" {
                    megabytes(value)?
                } else {
                    integer(value)?
                };
                Ok((name.to_owned(), count))
            })
            .collect::<Parsed<_>>()?,
        memory,
        tres_per_node: fields.get("TresPerNode").map(|v| (*v).to_owned()),
    })
}

/// `alice(1001)`.
fn name_and_id(text: &str) -> Parsed<(String, u32)> {
    let (name, id) = text
        .strip_suffix(')')
        .and_then(|t| t.split_once('('))
        .ok_or_else(|| format!("expected `name(id)`, found `{text}`"))?;
    Ok((name.to_owned(), integer(id)?))
}

/// `4` or `2-4`.
fn range(text: &str) -> Parsed<(u32, Option<u32>)> {
    match text.split_once('-') {
        Some((lo, hi)) => Ok((integer(lo)?, Some(integer(hi)?))),
        None => Ok((integer(text)?, None)),
    }
}

/// A Unix time; `Unknown` (0 or infinite) and `None` (unset) are None.
fn time(text: &str) -> Parsed<Option<i64>> {
    match text {
        "Unknown" | "None" => Ok(None),
        t => integer(t).map(Some),
    }
}

/// `250M`, `3G`, `1T` (or a bare number of MB) in MB.
fn megabytes(text: &str) -> Parsed<u64> {
    let (digits, factor) = match text.as_bytes().last() {
        Some(b'K') => (&text[..text.len() - 1], 0),
        Some(b'M') => (&text[..text.len() - 1], 1),
        Some(b'G') => (&text[..text.len() - 1], 1024),
        Some(b'T') => (&text[..text.len() - 1], 1024 * 1024),
        _ => (text, 1),
    };
    let value: u64 = integer(digits)?;
    if factor == 0 {
        Ok(value / 1024)
    } else {
        Ok(value * factor)
    }
}

/// A time limit (`[days-]hours:minutes:seconds`, `minutes:seconds`) in
/// whole minutes, as Slurm stores it; None for no limit of its own.
fn minutes(text: &str) -> Parsed<Option<u32>> {
    if matches!(text, "UNLIMITED" | "Partition_Limit") {
        return Ok(None);
    }
    let (days, clock) = match text.split_once('-') {
        Some((d, rest)) => (integer::<u32>(d)?, rest),
        None => (0, text),
    };
    let parts: Vec<u32> = clock.split(':').map(integer).collect::<Parsed<_>>()?;
    let (h, m) = match parts[..] {
        [h, m, _s] => (h, m),
        [m, _s] => (0, m),
        _ => return Err(format!("time limit `{text}`")),
    };
    Ok(Some(days * 24 * 60 + h * 60 + m))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GPU_JOB: &str = "JobId=14 JobName=dave-gpu-low UserId=dave(1004) GroupId=dave(1004) MCS_label=N/A Priority=3158 Nice=0 Account=theory QOS=low JobState=PENDING Reason=Priority Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=00:10:00 TimeMin=N/A SubmitTime=1795272727 EligibleTime=1795272727 AccrueTime=Unknown StartTime=1795273926 EndTime=1795274526 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=1795272804 Scheduler=Main Partition=big,hw AllocNode:Sid=localhost:18916 ReqNodeList=(null) ExcNodeList=(null) NodeList= SchedNodeList=n3 NumNodes=1-2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=2,mem=1G,node=1,billing=2,gres/gpu=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryCPU=512M MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp StdErr=/dev/null StdIn=/dev/null StdOut=/dev/null Power= TresPerNode=gres:gpu:1 ";

    #[test]
    fn a_pending_job() {
        let job = &parse_show_job(GPU_JOB).unwrap()[0];
        assert_eq!((job.job_id, job.name.as_str()), (14, "dave-gpu-low"));
        assert_eq!((job.user.as_str(), job.uid, job.gid), ("dave", 1004, 1004));
        assert_eq!((job.priority, job.nice, job.qos.as_str()), (3158, 0, "low"));
        assert_eq!(
            (job.state.as_str(), job.reason.as_str()),
            ("PENDING", "Priority")
        );
        assert_eq!(job.time_limit, Some(10));
        assert_eq!(
            (job.eligible_time, job.accrue_time),
            (Some(1795272727), None)
        );
        assert_eq!(job.partitions, ["big", "hw"]);
        assert_eq!(
            (job.min_nodes, job.max_nodes, job.min_cpus, job.max_cpus),
            (1, Some(2), 2, None)
        );
        assert_eq!((job.num_tasks, job.cpus_per_task), (Some(2), 1));
        assert_eq!(job.tres[1], ("mem".into(), 1024));
        assert_eq!(job.tres[4], ("gres/gpu".into(), 1));
        assert_eq!(job.memory, Memory::PerCpu(512));
        assert_eq!(job.tres_per_node.as_deref(), Some("gres:gpu:1"));
        assert_eq!(
            (job.submit_time, job.start_time, job.end_time),
            (1795272727, Some(1795273926), Some(1795274526))
        );
    }

    #[test]
    fn time_limits_and_memory_units() {
        assert_eq!(minutes("1-02:03:04").unwrap(), Some(26 * 60 + 3));
        assert_eq!(minutes("05:00").unwrap(), Some(5));
        assert_eq!(minutes("Partition_Limit").unwrap(), None);
        assert!(minutes("5").is_err());
        assert_eq!(megabytes("2048K").unwrap(), 2);
        assert_eq!(megabytes("2T").unwrap(), 2 * 1024 * 1024);
        assert!(parse_show_job("JobId=1\n")
            .unwrap_err()
            .starts_with("line 1: no UserId="));
    }

    #[test]
    fn submitted_lines() {
        let s = parse_submitted("# header\n17|carol|theory|carol-prio999|-p big -n 1|Priority=999\n9|alice|teamA|alice-small|-p big -n 1|\n").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].job_id, s[0].updated("Priority")), (17, Some("999")));
        assert_eq!(
            (
                s[1].user.as_str(),
                s[1].account.as_str(),
                s[1].label.as_str()
            ),
            ("alice", "teamA", "alice-small")
        );
        assert_eq!(
            (s[1].options.as_str(), s[1].update.len()),
            ("-p big -n 1", 0)
        );
    }
}
