//! `scontrol show job -d`: what binding needs of a job record.
//!
//! The record is `Key=Value` words over several lines. With `-d`, each
//! group of nodes with the same allocation gets a line
//! `Nodes=<hostlist> CPU_IDs=<list> Mem=<MB> GRES=...`; `CPU_IDs` are the
//! controller's CPU numbers on the node (cores times threads per core, in
//! its socket, core, thread order).

use slurm::hostlist;

use super::{cpu_list, integer, Parsed};

/// One job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRecord {
    pub job_id: u32,
    pub job_name: String,
    pub state: String,
    /// `NodeList`, expanded, in the job's node order.
    pub nodes: Vec<String>,
    pub num_tasks: u32,
    pub cpus_per_task: u16,
    /// `(node, CPU_IDs)` of every allocated node.
    pub cpu_ids: Vec<(String, Vec<u32>)>,
}

impl JobRecord {
    /// The CPU ids the job holds on `node`.
    pub fn cpu_ids(&self, node: &str) -> Option<&[u32]> {
        self.cpu_ids
            .iter()
            .find(|(n, _)| n == node)
            .map(|(_, ids)| ids.as_slice())
    }
}

/// Parses one job record.
pub fn parse_show_job(lines: &[&str]) -> Parsed<JobRecord> {
    let mut fields: Vec<(&str, &str)> = Vec::new();
    let mut cpu_ids = Vec::new();
    for line in lines {
        let words = line
            .split_whitespace()
            .map(|w| {
                w.split_once('=')
                    .ok_or_else(|| format!("`{w}` is not Key=Value in `{line}`"))
            })
            .collect::<Parsed<Vec<_>>>()?;
        match words.as_slice() {
            [("Nodes", nodes), ("CPU_IDs", ids), ..] => {
                let ids = cpu_list(ids)?;
                for node in expand(nodes)? {
                    cpu_ids.push((node, ids.clone()));
                }
            }
            _ => fields.extend(words),
        }
    }
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("no {key}= in the job record"))
    };
    Ok(JobRecord {
        job_id: integer(field("JobId")?)?,
        job_name: field("JobName")?.to_owned(),
        state: field("JobState")?.to_owned(),
        nodes: expand(field("NodeList")?)?,
        num_tasks: integer(field("NumTasks")?)?,
        cpus_per_task: integer(field("CPUs/Task")?)?,
        cpu_ids,
    })
}

fn expand(nodes: &str) -> Parsed<Vec<String>> {
    hostlist::expand(nodes).map_err(|e| format!("hostlist `{nodes}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_sharing_an_allocation_line() {
        let job = parse_show_job(&[
            "JobId=105 JobName=anchor-N2-n4",
            "   JobState=COMPLETED Reason=None Dependency=(null)",
            "   AllocNode:Sid=localhost:8040 Power=",
            "   NodeList=h[1-2]",
            "   NumNodes=2 NumCPUs=4 NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:*",
            "     Nodes=h[1-2] CPU_IDs=0-1 Mem=500 GRES=",
        ])
        .unwrap();
        assert_eq!((job.job_id, job.num_tasks, job.cpus_per_task), (105, 4, 1));
        assert_eq!(job.nodes, ["h1", "h2"]);
        assert_eq!(job.cpu_ids("h2"), Some(&[0, 1][..]));
        assert_eq!(job.cpu_ids("h3"), None);
    }

    #[test]
    fn words_without_a_value_are_refused() {
        assert!(parse_show_job(&["JobId=1 JobName=x", "   OS=Linux 6.1"]).is_err());
        assert!(parse_show_job(&["JobId=1"]).is_err());
    }
}
