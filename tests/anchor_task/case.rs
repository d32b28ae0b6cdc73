//! One `case-<name>.txt`: an `srun` on the `hw` partition and what came of
//! it.
//!
//! The file starts with the command line (`# srun ...`), then sections, each
//! opened by a `[title]` line:
//!
//! * `[srun exit status]`: one number;
//! * `[stdout]`: srun's `--label`led stdout, `<global task id>: <line>`;
//!   each task printed `Cpus_allowed_list:\t<list>` and its `SLURM_CPU_BIND*`
//!   variables;
//! * `[stderr]`: srun's stderr. The `--cpu-bind=verbose` lines come from
//!   slurmstepd before the task runs, all under the label of the node's first
//!   task, so the task is read from the line itself, never from the label;
//! * `[scontrol show job -d]`: the job record after the step ended;
//! * `[slurmd log]`: the task/affinity lines of both slurmd logs (slurmd and
//!   slurmstepd), `<node>: <line>`, timestamps cut.

use std::collections::BTreeMap;

use super::job::{self, JobRecord};
use super::srun::{self, SrunOptions};
use super::verbose::{self, VerboseLine};
use super::{cpu_list, integer, Parsed};

/// One recorded case.
#[derive(Debug, Clone)]
pub struct Case {
    /// The name in the file name (`case-<name>.txt`).
    pub name: String,
    /// The options the case passed to srun.
    pub srun: SrunOptions,
    pub exit_status: i32,
    /// What each task printed, by global task id.
    pub tasks: BTreeMap<u32, TaskOutput>,
    /// Every stderr line, labels cut.
    pub stderr: Vec<String>,
    /// The verbose lines among them, in the order printed.
    pub verbose: Vec<VerboseLine>,
    pub job: JobRecord,
    /// `(node, line)` of the slurmd logs.
    pub slurmd_log: Vec<(String, String)>,
}

/// What one task printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskOutput {
    /// `Cpus_allowed_list` of `/proc/self/status`: the CPUs it ran on.
    pub cpus_allowed: Vec<u32>,
    /// Its `SLURM_CPU_BIND*` variables, sorted by name.
    pub env: Vec<(String, String)>,
}

/// The sections of a case file, in the order `record.sh` writes them.
const SECTIONS: [&str; 5] = [
    "[srun exit status]",
    "[stdout]",
    "[stderr]",
    "[scontrol show job -d]",
    "[slurmd log]",
];

/// Parses the case `name` from the text of its file.
pub fn parse(name: &str, text: &str) -> Parsed<Case> {
    let mut lines = text.lines();
    let command = lines
        .next()
        .and_then(|l| l.strip_prefix("# srun "))
        .ok_or("the first line is not `# srun ...`")?;
    let mut sections: Vec<Vec<&str>> = Vec::new();
    for line in lines {
        if SECTIONS.get(sections.len()) == Some(&line) {
            sections.push(Vec::new());
        } else {
            sections
                .last_mut()
                .ok_or_else(|| format!("text before the first section: `{line}`"))?
                .push(line);
        }
    }
    let [status, stdout, stderr, job, log] = <[Vec<&str>; 5]>::try_from(sections)
        .map_err(|found| format!("expected sections {SECTIONS:?}, found {}", found.len()))?;
    let exit_status = match status.as_slice() {
        [value] => integer(value)?,
        other => return Err(format!("exit status: expected one line, found {other:?}")),
    };
    let stderr: Vec<String> = stderr.iter().map(|l| unlabel(l).to_owned()).collect();
    Ok(Case {
        name: name.to_owned(),
        srun: srun::parse(command)?,
        exit_status,
        tasks: parse_stdout(&stdout)?,
        verbose: stderr
            .iter()
            .filter(|l| l.starts_with("cpu-bind"))
            .map(|l| verbose::parse(l))
            .collect::<Parsed<_>>()?,
        stderr,
        job: job::parse_show_job(&job)?,
        slurmd_log: log
            .iter()
            .map(|l| {
                l.split_once(": ")
                    .map(|(node, text)| (node.to_owned(), text.to_owned()))
                    .ok_or_else(|| format!("log line without a node: `{l}`"))
            })
            .collect::<Parsed<_>>()?,
    })
}

/// The line without srun's `N: ` label (stderr lines of srun itself have
/// none).
fn unlabel(line: &str) -> &str {
    match line.split_once(": ") {
        Some((label, rest)) if label.trim().parse::<u32>().is_ok() => rest,
        _ => line,
    }
}

fn parse_stdout(lines: &[&str]) -> Parsed<BTreeMap<u32, TaskOutput>> {
    let mut tasks: BTreeMap<u32, TaskOutput> = BTreeMap::new();
    for line in lines {
        let (label, text) = line
            .split_once(": ")
            .ok_or_else(|| format!("unlabelled stdout line `{line}`"))?;
        let task = tasks.entry(integer(label.trim())?).or_default();
        if let Some(list) = text.strip_prefix("Cpus_allowed_list:\t") {
            task.cpus_allowed = cpu_list(list)?;
        } else if let Some((key, value)) = text.split_once('=') {
            if !key.starts_with("SLURM_CPU_BIND") {
                return Err(format!("unexpected variable `{text}`"));
            }
            task.env.push((key.to_owned(), value.to_owned()));
        } else {
            return Err(format!("unexpected stdout line `{line}`"));
        }
    }
    for task in tasks.values_mut() {
        task.env.sort();
    }
    Ok(tasks)
}

impl Case {
    /// The slurmd log lines of `node`.
    pub fn log_of<'a>(&'a self, node: &str) -> impl Iterator<Item = &'a str> + 'a {
        let node = node.to_owned();
        self.slurmd_log
            .iter()
            .filter(move |(n, _)| *n == node)
            .map(|(_, text)| text.as_str())
    }

    /// `lllp_distribution`'s decision on `node`, as slurmd logged it
    /// (`JobId=<id> implicit auto binding: verbose,cores,one_thread, dist 8192`,
    /// `JobId=<id> manual binding: ...`, ...).
    pub fn decision(&self, node: &str) -> Option<&str> {
        self.log_of(node).find_map(|l| {
            l.split_once("lllp_distribution: ")
                .map(|(_, decision)| decision)
                .filter(|decision| decision.starts_with("JobId="))
        })
    }

    /// The binding slurmstepd on `node` held for global task `task` (22.05's
    /// `task_p_pre_launch` debug line `... task:<id> bind:<words>`), as the
    /// words Slurm names `cpu_bind_type` bits with.
    pub fn stepd_bind(&self, node: &str, task: u32) -> Option<Vec<&str>> {
        let key = format!("task:{task} bind:");
        self.log_of(node)
            .filter(|l| l.contains("task_p_pre_launch: affinity"))
            .find_map(|l| l.split_once(&key).map(|(_, words)| words))
            .map(|words| words.split(',').collect())
    }

    /// The CPUs slurmstepd on `node` ran on, which a task it does not bind
    /// inherits (22.05's `init: task affinity plugin loaded with CPU mask
    /// 0x3`).
    pub fn stepd_cpus(&self, node: &str) -> Option<Parsed<Vec<u32>>> {
        self.log_of(node)
            .find_map(|l| l.split_once("plugin loaded with CPU mask "))
            .map(|(_, mask)| verbose::hex_cpus(mask))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASE: &str = "# srun -p hw --label -J anchor-x -N2 -n3 --cpu-bind=verbose $TASK
[srun exit status]
0
[stdout]
0: Cpus_allowed_list:\t0
0: SLURM_CPU_BIND_LIST=0x1,0x2
0: SLURM_CPU_BIND=verbose,mask_cpu:0x1,0x2
2: Cpus_allowed_list:\t0-1
[stderr]
0: cpu-bind=MASK - h1, task  0  0 [14034]: mask 0x1 set
2: cpu-bind=MASK - h2, task  2  0 [14038]: mask 0x3 set
srun: error: something
[scontrol show job -d]
JobId=115 JobName=anchor-x
   JobState=COMPLETED Reason=None Dependency=(null)
   NodeList=h[1-2]
   NumNodes=2 NumCPUs=3 NumTasks=3 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
     Nodes=h1 CPU_IDs=0-1 Mem=500 GRES=
     Nodes=h2 CPU_IDs=0 Mem=250 GRES=
[slurmd log]
h1: task/affinity: lllp_distribution: JobId=115 implicit auto binding: verbose,cores,one_thread, dist 8192
h1: [115.0] task/affinity: init: task affinity plugin loaded with CPU mask 0x3
h1: [115.0] debug:  task/affinity: task_p_pre_launch: affinity StepId=115.0, task:0 bind:verbose,mask_cpu,one_thread
";

    #[test]
    fn sections_tasks_and_log() {
        let case = parse("x", CASE).unwrap();
        assert_eq!((case.exit_status, case.srun.ntasks), (0, 3));
        assert_eq!(case.tasks[&0].cpus_allowed, [0]);
        assert_eq!(case.tasks[&2].cpus_allowed, [0, 1]);
        assert_eq!(
            case.tasks[&0].env[0],
            (
                "SLURM_CPU_BIND".to_owned(),
                "verbose,mask_cpu:0x1,0x2".to_owned()
            )
        );
        assert_eq!(case.verbose.len(), 2);
        assert_eq!(case.verbose[1].node, "h2");
        assert_eq!(case.stderr[2], "srun: error: something");
        assert_eq!(case.job.cpu_ids("h2"), Some(&[0][..]));
        assert_eq!(
            case.decision("h1"),
            Some("JobId=115 implicit auto binding: verbose,cores,one_thread, dist 8192")
        );
        assert_eq!(
            case.stepd_bind("h1", 0),
            Some(vec!["verbose", "mask_cpu", "one_thread"])
        );
        assert_eq!(case.stepd_bind("h1", 1), None);
        assert_eq!(case.stepd_cpus("h1"), Some(Ok(vec![0, 1])));
        assert_eq!(case.decision("h2"), None);
    }

    #[test]
    fn malformed_files_are_refused() {
        assert!(parse("x", "[srun exit status]\n0\n").is_err());
        let no_log = CASE.split("[slurmd log]").next().unwrap();
        assert!(parse("x", no_log).is_err());
        let bad = CASE.replace("0: Cpus_allowed_list:\t0\n", "0: PATH=/bin\n");
        assert!(parse("x", &bad).is_err());
    }
}
