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
//!
//! [`from_alea_machines`] builds the same kind of cluster from the
//! `.machines` file the Alea simulator reads beside an SWF trace.

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

/// The cluster an Alea `.machines` file describes (the file Alea's
/// `MachineLoader` reads for SWF workloads): one line per group of
/// identical machines, tab-separated `id  name  machines  CPUs-per-machine
/// speed  [memory-per-machine in KB]`. Each group becomes nodes
/// `<name><number>` (numbered from 1, same width in a group) with that CPU
/// count and `RealMemory` (memory in MB, rounded down, when given), all in
/// one default partition `trace`; the rest as [`derive`] writes it (memory
/// is not consumable). Alea scales run times by the speed; the replay runs
/// each job for its trace run time, so differing speeds are said in the
/// note. Empty lines and lines starting with `#` are skipped.
///
/// # Errors
///
/// A [`TraceError`] naming the line for a line with fewer than five
/// fields, a count that is not a positive whole number, a memory that is
/// not a whole number, a name that is not a valid node name (letters,
/// digits, `-`, `_`), or a name used twice; and for a file with no line.
pub fn from_alea_machines(path: &Path) -> Result<DerivedCluster, TraceError> {
    let source = path.display().to_string();
    let bytes = crate::input::read_file(path)?;
    alea_machines(&bytes, &source)
}

/// [`from_alea_machines`] on the file's contents.
///
/// # Errors
///
/// As [`from_alea_machines`].
pub fn alea_machines(bytes: &[u8], source: &str) -> Result<DerivedCluster, TraceError> {
    struct Group {
        name: String,
        machines: u32,
        cpus: u32,
        speed: String,
        memory_mb: Option<u64>,
    }
    let mut groups: Vec<Group> = Vec::new();
    for (number, line) in crate::input::lines(bytes) {
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() < 5 {
            return Err(TraceError::new(
                source,
                number,
                format!(
                    "expected `id name machines CPUs-per-machine speed [memory-KB]`, found {} fields",
                    fields.len()
                ),
            ));
        }
        let positive = |i: usize, what: &str| -> Result<u32, TraceError> {
            fields[i]
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    TraceError::new(
                        source,
                        number,
                        format!(
                            "{what}: expected a positive whole number, found {:?}",
                            fields[i]
                        ),
                    )
                })
        };
        let name = fields[1];
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(TraceError::new(
                source,
                number,
                format!("machine name {name:?}: expected letters, digits, '-' or '_'"),
            ));
        }
        if groups.iter().any(|g| g.name == name) {
            return Err(TraceError::new(
                source,
                number,
                format!("machine name {name:?} is used by an earlier line"),
            ));
        }
        let memory_mb = match fields.get(5) {
            None => None,
            Some(kb) => Some(kb.parse::<u64>().map(|kb| kb / 1024).map_err(|_| {
                TraceError::new(
                    source,
                    number,
                    format!("memory per machine: expected a number of KB, found {kb:?}"),
                )
            })?),
        };
        groups.push(Group {
            name: name.to_owned(),
            machines: positive(2, "machines")?,
            cpus: positive(3, "CPUs per machine")?,
            speed: fields[4].to_owned(),
            memory_mb,
        });
    }
    if groups.is_empty() {
        return Err(TraceError::new(source, 0, "no machine line"));
    }
    let mut text =
        format!("# Derived from the Alea machines file {source} by slurm-wasm-sim.\n{CONF_HEAD}");
    let mut names = Vec::new();
    for g in &groups {
        let width = g.machines.to_string().len();
        let nodes = format!("{}[{:0width$}-{:0width$}]", g.name, 1, g.machines);
        text.push_str(&format!("NodeName={nodes} CPUs={}", g.cpus));
        if let Some(mb) = g.memory_mb.filter(|&mb| mb > 0) {
            text.push_str(&format!(" RealMemory={mb}"));
        }
        text.push_str(" State=UNKNOWN\n");
        names.push(nodes);
    }
    text.push_str(&format!(
        "PartitionName=trace Nodes={} Default=YES MaxTime=UNLIMITED State=UP\n",
        names.join(",")
    ));
    let shape: Vec<String> = groups
        .iter()
        .map(|g| format!("{} x {} CPUs ({})", g.machines, g.cpus, g.name))
        .collect();
    let mut note = format!(
        "cluster from the Alea machines file {source}: {}",
        shape.join(" + ")
    );
    if groups.iter().any(|g| g.speed != groups[0].speed) {
        note.push_str("; the machines' speeds differ, but every job runs its trace run time");
    }
    let conf = slurm_conf::parse_str(&text, Path::new(source))
        .map_err(|e| TraceError::new(source, 0, format!("derived slurm.conf rejected: {e}")))?;
    Ok(DerivedCluster { text, conf, note })
}

/// The scheduling lines of every derived `slurm.conf`.
const CONF_HEAD: &str = "ClusterName=trace\n\
    SelectType=select/cons_tres\n\
    SelectTypeParameters=CR_Core\n\
    SchedulerType=sched/backfill\n";

/// `slurm.conf` text for node groups `(count, cpus per node)`, named
/// `n<number>` from 1 with the same width throughout.
fn slurm_conf_text(groups: &[(u32, u32)]) -> String {
    let total: u32 = groups.iter().map(|&(count, _)| count).sum();
    let width = total.to_string().len();
    let mut text = format!("# Derived from an SWF trace header by slurm-wasm-sim.\n{CONF_HEAD}");
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

    #[test]
    fn alea_machines_files() {
        // The two-cluster file of Alea's data-set (wagap-2013.swf.machines):
        // 20 machines x 80 CPUs with 529426432 KB, 48 x 12 with 94035968 KB.
        let d = alea_machines(
            b"0\tzewura\t20\t80\t1\t529426432\n1\tzegox\t48\t12\t1\t94035968\n",
            "w.machines",
        )
        .unwrap();
        let c = cpus(&d);
        assert_eq!((c.len(), c[0], c[19], c[20], c[67]), (68, 80, 80, 12, 12));
        assert!(d
            .text
            .contains("NodeName=zewura[01-20] CPUs=80 RealMemory=517018 State=UNKNOWN"));
        assert!(d
            .text
            .contains("PartitionName=trace Nodes=zewura[01-20],zegox[01-48] Default=YES"));
        assert_eq!(
            d.note,
            "cluster from the Alea machines file w.machines: 20 x 80 CPUs (zewura) + 48 x 12 CPUs (zegox)"
        );
        // HPC2N's (hpc2n.swf.machines): 120 x 2 CPUs; no memory column.
        let d = alea_machines(b"0\tseth\t120\t2\t1\n", "h.machines").unwrap();
        assert_eq!(cpus(&d), vec![2; 120]);
        let d = alea_machines(b"0 a 2 4 1\n1 b 1 4 2\n", "s.machines").unwrap();
        assert!(d
            .note
            .ends_with("speeds differ, but every job runs its trace run time"));
    }

    #[test]
    fn alea_machines_errors_name_the_line() {
        let err = |text: &str| alea_machines(text.as_bytes(), "m").unwrap_err().to_string();
        assert_eq!(
            err("\n0 a 2 4\n"),
            "m:2: expected `id name machines CPUs-per-machine speed [memory-KB]`, found 4 fields"
        );
        assert_eq!(
            err("0 a 0 4 1\n"),
            "m:1: machines: expected a positive whole number, found \"0\""
        );
        assert_eq!(
            err("0 a 2 4 1 lots\n"),
            "m:1: memory per machine: expected a number of KB, found \"lots\""
        );
        assert_eq!(
            err("0 a.b 2 4 1\n"),
            "m:1: machine name \"a.b\": expected letters, digits, '-' or '_'"
        );
        assert_eq!(
            err("0 a 2 4 1\n1 a 2 4 1\n"),
            "m:2: machine name \"a\" is used by an earlier line"
        );
        assert_eq!(err("# nothing\n"), "m: no machine line");
    }
}
