//! A cluster for an SWF trace that comes without a `slurm.conf`, from the
//! machine size its header declares.
//!
//! - `MaxNodes` and `MaxProcs`: `MaxNodes` nodes sharing `MaxProcs` CPUs as
//!   evenly as whole CPUs allow (the first `MaxProcs mod MaxNodes` nodes
//!   get one CPU more), so the cluster has exactly `MaxProcs` CPUs, the
//!   machine size the traces' README says fit checks and utilization use;
//! - `MaxProcs` alone: one node per processor;
//! - `MaxNodes` alone: one single-CPU node per node;
//! - neither: one single-CPU node per processor of the largest job, and the
//!   note says the size is a guess.
//!
//! The derived `slurm.conf` has one partition `trace` over all nodes
//! (default, no time limit), `select/cons_tres` with `CR_Core` (SWF
//! memory fields are per processor and often missing, so memory is not a
//! consumable resource here) and `sched/backfill`; it sets no priority
//! plugin (Slurm's default, `priority/basic`). Every derivation returns a
//! note saying what was assumed, for the report.

use std::path::Path;

use slurm::slurm_conf::{self, SlurmConf};

use crate::input::{RawTrace, TraceError};
use crate::swf;

/// A cluster derived from a trace.
#[derive(Debug, Clone)]
pub struct DerivedCluster {
    /// The `slurm.conf` text.
    pub text: String,
    /// The same, parsed (give it to `Cluster::from_slurm_conf`).
    pub conf: SlurmConf,
    /// What was assumed, for the workload notes and the report.
    pub note: String,
}

/// The cluster for the SWF file at `path`, from its header.
///
/// # Errors
///
/// A [`TraceError`] when the file cannot be read or its header is
/// malformed, or when the header gives no size and the file has no job
/// with a processor count.
pub fn from_swf(path: &Path) -> Result<DerivedCluster, TraceError> {
    let mut trace = swf::read_header(path)?;
    if trace.max_nodes.is_none() && trace.max_procs.is_none() {
        trace = swf::parse(&crate::input::read_file(path)?, &path.display().to_string())?;
    }
    derive(&trace)
}

/// The cluster for `trace` (its header sizes, else its largest job).
///
/// # Errors
///
/// A [`TraceError`] when the trace gives no size at all.
pub fn derive(trace: &RawTrace) -> Result<DerivedCluster, TraceError> {
    let (groups, note) = match (trace.max_nodes, trace.max_procs) {
        (Some(nodes), Some(procs)) if procs >= nodes => {
            let (per, extra) = (procs / nodes, procs % nodes);
            let mut groups = vec![(extra, per + 1), (nodes - extra, per)];
            groups.retain(|&(count, _)| count > 0);
            let shape = match extra {
                0 => format!("{nodes} nodes x {per} CPUs"),
                _ => format!("{extra} nodes x {} CPUs + {} nodes x {per} CPUs", per + 1, nodes - extra),
            };
            (groups, format!("cluster derived from the trace header (MaxNodes {nodes}, MaxProcs {procs}): {shape}"))
        }
        (Some(nodes), Some(procs)) => (
            vec![(procs, 1)],
            format!("cluster derived from the trace header: MaxProcs {procs} is below MaxNodes {nodes}, so {procs} single-CPU nodes"),
        ),
        (None, Some(procs)) => (
            vec![(procs, 1)],
            format!("cluster derived from the trace header (MaxProcs {procs}, no MaxNodes): {procs} single-CPU nodes"),
        ),
        (Some(nodes), None) => (
            vec![(nodes, 1)],
            format!("cluster derived from the trace header (MaxNodes {nodes}, no MaxProcs): {nodes} single-CPU nodes"),
        ),
        (None, None) => {
            let largest = trace.jobs.iter().filter_map(|j| j.cpus).max().filter(|&c| c > 0).ok_or_else(|| {
                TraceError::new(
                    &trace.source,
                    0,
                    "no MaxProcs or MaxNodes header and no job with a processor count: give a slurm.conf",
                )
            })?;
            (
                vec![(largest, 1)],
                format!("the trace declares no size (no MaxProcs or MaxNodes): guessed {largest} single-CPU nodes from its largest job"),
            )
        }
    };
    let text = slurm_conf_text(&groups);
    let origin = Path::new("<cluster derived from the trace>");
    let conf = slurm_conf::parse_str(&text, origin).map_err(|e| {
        TraceError::new(
            &trace.source,
            0,
            format!("derived slurm.conf rejected: {e}"),
        )
    })?;
    Ok(DerivedCluster { text, conf, note })
}

/// `slurm.conf` text for node groups `(count, cpus per node)`, named
/// `n<number>` from 1 with the same width throughout.
fn slurm_conf_text(groups: &[(u32, u32)]) -> String {
    let total: u32 = groups.iter().map(|&(count, _)| count).sum();
    let width = total.to_string().len();
    let mut text = String::from(
        "# Derived from an SWF trace header by slurm-wasm-sim.\n\
         ClusterName=trace\n\
         SelectType=select/cons_tres\n\
         SelectTypeParameters=CR_Core\n\
         SchedulerType=sched/backfill\n",
    );
    let mut first = 1;
    for &(count, cpus) in groups {
        let last = first + count - 1;
        text.push_str(&format!(
            "NodeName=n[{first:0width$}-{last:0width$}] CPUs={cpus} State=UNKNOWN\n"
        ));
        first = last + 1;
    }
    text.push_str(&format!(
        "PartitionName=trace Nodes=n[{:0width$}-{total:0width$}] Default=YES MaxTime=UNLIMITED State=UP\n",
        1
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm::setup::records::Cluster;

    fn trace(nodes: Option<u32>, procs: Option<u32>) -> RawTrace {
        RawTrace {
            source: "t.swf".into(),
            max_nodes: nodes,
            max_procs: procs,
            ..RawTrace::default()
        }
    }

    fn cpus(d: &DerivedCluster) -> Vec<u32> {
        Cluster::from_slurm_conf(&d.conf)
            .unwrap()
            .nodes
            .iter()
            .map(|n| u32::from(n.cpus))
            .collect()
    }

    #[test]
    fn even_split() {
        // HPC2N's header: MaxNodes 240, MaxProcs 240.
        let d = derive(&trace(Some(240), Some(240))).unwrap();
        assert_eq!(cpus(&d), vec![1; 240]);
        assert!(d.text.contains("NodeName=n[001-240] CPUs=1"));
        assert!(d
            .text
            .contains("PartitionName=trace Nodes=n[001-240] Default=YES"));
        assert_eq!(d.note, "cluster derived from the trace header (MaxNodes 240, MaxProcs 240): 240 nodes x 1 CPUs");
    }

    #[test]
    fn uneven_split_keeps_the_cpu_total() {
        // UniLu Gaia's header: 151 nodes, 2004 cores; 2004 = 151 x 13 + 41.
        let d = derive(&trace(Some(151), Some(2004))).unwrap();
        let cpus = cpus(&d);
        assert_eq!(cpus.len(), 151);
        assert_eq!(cpus.iter().sum::<u32>(), 2004);
        assert_eq!((cpus[0], cpus[40], cpus[41], cpus[150]), (14, 14, 13, 13));
        assert!(d.note.ends_with("41 nodes x 14 CPUs + 110 nodes x 13 CPUs"));
    }

    #[test]
    fn procs_alone_nodes_alone_and_neither() {
        assert_eq!(cpus(&derive(&trace(None, Some(8))).unwrap()), vec![1; 8]);
        assert_eq!(cpus(&derive(&trace(Some(3), None)).unwrap()), vec![1; 3]);
        assert_eq!(
            cpus(&derive(&trace(Some(10), Some(4))).unwrap()),
            vec![1; 4]
        );
        let e = derive(&trace(None, None)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.swf: no MaxProcs or MaxNodes header and no job with a processor count: give a slurm.conf"
        );
        let mut t = trace(None, None);
        t.jobs = swf::parse(b"1 0 0 10 6 -1 -1 6 10 -1 1 1 1 -1 -1 -1 -1 -1\n", "t.swf")
            .unwrap()
            .jobs;
        let d = derive(&t).unwrap();
        assert_eq!(cpus(&d), vec![1; 6]);
        assert!(d.note.contains("guessed 6 single-CPU nodes"));
    }
}
