//! Which running jobs a pending job may preempt: the `preemptee-candidates`
//! of a select `job-test`, listed as slurmctld lists them
//! (`slurm_find_preemptable_jobs`, 22.05 slurmctld/preempt.c) under
//! `PreemptType=preempt/partition_prio`.
//!
//! A running or suspended job is a candidate when its partition's
//! `PriorityTier` is below the pending job's partition's, its partition
//! does not say `PreemptMode=OFF`, and it runs on a node of the pending
//! job's partition. Candidates come lowest first by `tier << 16` plus
//! their node count, jobs of equal rank in the controller's order
//! (`_sort_by_prio` over `job_list`); with `SchedulerParameters=
//! preempt_youngest_first`, latest start first instead
//! (`_sort_by_youngest`). Each carries the mode that stops it: its
//! partition's `PreemptMode`, else the cluster's, without `GANG`
//! (`_job_preempt_mode` of preempt/partition_prio).
//!
//! Other preemption plugins (`preempt/qos`) are not modelled: for them
//! [`PartitionPrio::from_conf`] gives `None`, as for a cluster that does
//! not preempt. The settings slurmctld refuses to start with are refused
//! here too, at their file and line, also by `Cluster::from_slurm_conf`.

use crate::bindings::select::exports::slurm::plugin::select::{PreemptMode, PreempteeCandidate};
use crate::bindings::types::{Job, JobState};
use crate::slurm_conf::{ConfError, Options, SlurmConf};

/// `PreemptMode=` of the cluster or of a partition, as far as stopping a
/// preempted job goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// `OFF`, or `GANG` alone: jobs are not preempted.
    Off,
    Cancel,
    Requeue,
    Suspend,
}

/// One partition as the candidate rules read it.
#[derive(Debug, Clone)]
struct PartitionRule {
    tier: u16,
    /// Node indexes of the partition, one flag per node of the table.
    nodes: Vec<bool>,
    /// Its own `PreemptMode=`, when the line sets one.
    stop: Option<Stop>,
}

/// The preempt/partition_prio rules of one `slurm.conf`.
#[derive(Debug, Clone)]
pub struct PartitionPrio {
    partitions: Vec<PartitionRule>,
    cluster_stop: Stop,
    youngest_first: bool,
}

impl PartitionPrio {
    /// The rules of `conf`, or `None` when it does not preempt by
    /// partition (`PreemptType` unset, `preempt/none` or another plugin).
    ///
    /// # Errors
    ///
    /// A [`ConfError`] at the file and line of what slurmctld refuses to
    /// start with, as [`Cluster::from_slurm_conf`](super::records::Cluster::from_slurm_conf)
    /// gives it: a `PreemptMode=` (cluster or partition) that is not one of
    /// `OFF` (alias `CLUSTER`), `CANCEL`, `REQUEUE` or `SUSPEND` (alias
    /// `ON`), optionally with `GANG` or `WITHIN` (not both); a cluster-wide
    /// `SUSPEND` without `GANG`; a `PreemptType` that preempts with the
    /// mode OFF, or `preempt/none` with another.
    pub fn from_conf(conf: &SlurmConf) -> Result<Option<PartitionPrio>, ConfError> {
        let cluster = checked(conf)?;
        let plugin = conf.options.get("PreemptType").unwrap_or("preempt/none");
        if !plugin.eq_ignore_ascii_case("preempt/partition_prio") {
            return Ok(None);
        }
        let partitions = conf
            .partitions
            .iter()
            .map(|p| {
                let mut nodes = vec![false; conf.nodes.len()];
                for &i in &p.nodes {
                    nodes[i] = true;
                }
                Ok(PartitionRule {
                    tier: p.priority_tier,
                    nodes,
                    stop: mode_of(&p.extra)?.map(|m| m.stop),
                })
            })
            .collect::<Result<_, ConfError>>()?;
        let youngest_first = conf
            .options
            .get("SchedulerParameters")
            .is_some_and(|v| v.split(',').any(|p| p.trim() == "preempt_youngest_first"));
        Ok(Some(PartitionPrio {
            partitions,
            cluster_stop: cluster.stop,
            youngest_first,
        }))
    }

    /// The candidates `preemptor` (pending, in the partition its
    /// `partitions` lists first) may preempt among `running`, given in the
    /// controller's job order, each with the mode that would stop it. A
    /// job whose partition index is not in the table, or that has no
    /// allocated nodes, is no candidate; so is every job when the
    /// preemptor names no known partition.
    pub fn candidates<'a>(
        &self,
        preemptor: &Job,
        running: impl IntoIterator<Item = &'a Job>,
    ) -> Vec<PreempteeCandidate> {
        let Some(own) = self.partition_of(preemptor) else {
            return Vec::new();
        };
        let mut found: Vec<(u32, i64, PreempteeCandidate)> = running
            .into_iter()
            .filter(|job| matches!(job.state, JobState::Running | JobState::Suspended))
            .filter_map(|job| {
                let theirs = self.partition_of(job)?;
                if theirs.tier >= own.tier || theirs.stop == Some(Stop::Off) {
                    return None;
                }
                let nodes = &job.resources.as_ref()?.nodes;
                if !nodes
                    .ones()
                    .any(|n| own.nodes.get(n as usize).copied().unwrap_or(false))
                {
                    return None;
                }
                let mode = match theirs.stop.unwrap_or(self.cluster_stop) {
                    Stop::Cancel => PreemptMode::Cancel,
                    Stop::Requeue => PreemptMode::Requeue,
                    Stop::Suspend => PreemptMode::Suspend,
                    Stop::Off => return None,
                };
                let rank = (u32::from(theirs.tier) << 16) + nodes.ones().count().min(0xffff) as u32;
                Some((
                    rank,
                    job.start_time,
                    PreempteeCandidate {
                        job_id: job.job_id,
                        mode,
                    },
                ))
            })
            .collect();
        if self.youngest_first {
            found.sort_by_key(|(_, start, _)| std::cmp::Reverse(*start));
        } else {
            found.sort_by_key(|(rank, _, _)| *rank);
        }
        found.into_iter().map(|(_, _, c)| c).collect()
    }

    fn partition_of(&self, job: &Job) -> Option<&PartitionRule> {
        let index = *job.partitions.first()?;
        self.partitions.get(index as usize)
    }
}

/// A parsed `PreemptMode=` (`preempt_mode_num`, 22.05
/// slurm_protocol_defs.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mode {
    stop: Stop,
    gang: bool,
}

/// Refuses the preemption settings slurmctld refuses to start with (22.05
/// read_config.c, `_validate_and_set_defaults` and the partition lines).
///
/// # Errors
///
/// A [`ConfError`] at the file and line of a `PreemptMode=`, cluster or
/// partition, that is not one of `OFF` (alias `CLUSTER`), `CANCEL`,
/// `REQUEUE` or `SUSPEND` (alias `ON`), optionally with `GANG` or `WITHIN`
/// (not both); of a cluster `PreemptMode=SUSPEND` without `GANG`; and of
/// the `PreemptType` line when it does not fit the mode: `preempt/qos` and
/// `preempt/partition_prio` need a mode other than OFF, `preempt/none` (the
/// default) one that is OFF.
pub(crate) fn check(conf: &SlurmConf) -> Result<(), ConfError> {
    checked(conf).map(|_| ())
}

/// [`check`], giving the cluster's mode (OFF when unset).
fn checked(conf: &SlurmConf) -> Result<Mode, ConfError> {
    for p in &conf.partitions {
        mode_of(&p.extra)?;
    }
    let cluster = mode_of(&conf.options)?.unwrap_or(Mode {
        stop: Stop::Off,
        gang: false,
    });
    if cluster.stop == Stop::Suspend && !cluster.gang {
        let origin = conf.options.origin("PreemptMode").expect("set");
        return Err(origin.error("PreemptMode: SUSPEND needs GANG too (SUSPEND,GANG)"));
    }
    let plugin = conf.options.get("PreemptType").unwrap_or("preempt/none");
    let preempting = matches!(
        plugin.to_ascii_lowercase().as_str(),
        "preempt/qos" | "preempt/partition_prio"
    );
    let none = plugin.eq_ignore_ascii_case("preempt/none");
    if (preempting && cluster.stop == Stop::Off) || (none && cluster.stop != Stop::Off) {
        let message = if none {
            format!(
                "PreemptType={plugin}: expected PreemptMode OFF (or GANG alone), since nothing \
                 is preempted; name a PreemptType to preempt"
            )
        } else {
            format!("PreemptType={plugin}: expected PreemptMode CANCEL, REQUEUE or SUSPEND,GANG")
        };
        let origin = conf
            .options
            .origin("PreemptType")
            .or_else(|| conf.options.origin("PreemptMode"))
            .expect("one of them is set");
        return Err(origin.error(message));
    }
    Ok(cluster)
}

/// The mode of `options`' `PreemptMode=`, when set.
fn mode_of(options: &Options) -> Result<Option<Mode>, ConfError> {
    let Some(value) = options.get("PreemptMode") else {
        return Ok(None);
    };
    let bad = || {
        let origin = options
            .origin("PreemptMode")
            .expect("a value has an origin");
        origin.error(format!(
            "PreemptMode: expected one of OFF, CANCEL, REQUEUE or SUSPEND, with GANG or \
             WITHIN if wanted, found `{value}`"
        ))
    };
    let (mut stops, mut gang, mut within) = (Vec::new(), false, false);
    for token in value.split(',').map(str::trim) {
        match token.to_ascii_uppercase().as_str() {
            "OFF" | "CLUSTER" => stops.push(Stop::Off),
            "CANCEL" => stops.push(Stop::Cancel),
            "REQUEUE" => stops.push(Stop::Requeue),
            "SUSPEND" | "ON" => stops.push(Stop::Suspend),
            "GANG" => gang = true,
            "WITHIN" => within = true,
            _ => return Err(bad()),
        }
    }
    match stops.as_slice() {
        _ if gang && within => Err(bad()),
        [] => Ok(Some(Mode {
            stop: Stop::Off,
            gang,
        })),
        [one] => Ok(Some(Mode { stop: *one, gang })),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::bindings::types::JobResources;
    use crate::fixtures::{bitmap, job};
    use crate::slurm_conf::parse_str;

    const NODES: &str = "NodeName=n[1-4] CPUs=8\n";
    /// The anchor's two partitions over the same nodes: `big` at tier 1,
    /// `alt` at tier 2.
    const TIERS: &str =
        "PartitionName=big Nodes=n[1-4]\nPartitionName=alt Nodes=n[1-4] PriorityTier=2\n";

    fn rules(text: &str) -> Option<PartitionPrio> {
        let conf =
            parse_str(text, Path::new("/etc/slurm/slurm.conf")).unwrap_or_else(|e| panic!("{e}"));
        PartitionPrio::from_conf(&conf).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(text: &str) -> String {
        let conf = parse_str(text, Path::new("slurm.conf")).unwrap_or_else(|e| panic!("{e}"));
        PartitionPrio::from_conf(&conf)
            .expect_err("a bad PreemptMode")
            .to_string()
    }

    /// Job `id` of partition `partition` running on `nodes` since `start`.
    fn running(id: u32, partition: u32, nodes: &[u32], start: i64) -> Job {
        let mut j = job(id);
        j.partitions = vec![partition];
        j.state = JobState::Running;
        j.start_time = start;
        j.resources = Some(JobResources {
            nodes: bitmap(4, nodes.iter().copied()),
            ncpus: 1,
            per_node: Vec::new(),
            whole_nodes: false,
        });
        j
    }

    fn pending(partition: u32) -> Job {
        let mut j = job(100);
        j.partitions = vec![partition];
        j
    }

    fn ids(list: &[PreempteeCandidate]) -> Vec<u32> {
        list.iter().map(|c| c.job_id).collect()
    }

    fn modes(list: &[PreempteeCandidate]) -> Vec<(u32, PreemptMode)> {
        list.iter().map(|c| (c.job_id, c.mode)).collect()
    }

    /// The order of the anchor recording `cons_tres-CR_Core_Memory-preempt`
    /// (`tests/fixtures/anchor/select`): `sbatch --test-only -p alt -N4`
    /// answered `Preempts: 1673,1685,1690,1676`, the one-node jobs d3, d9
    /// and d12 (in job order) before d6 on two nodes, all of `big`
    /// (tier 1) under `alt` (tier 2).
    #[test]
    fn lower_tiers_by_node_count_then_job_order() {
        let r = rules(&format!(
            "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n{NODES}{TIERS}"
        ))
        .expect("preempts");
        let jobs = [
            running(1673, 0, &[0], 10),
            running(1676, 0, &[2, 3], 20),
            running(1685, 0, &[0], 30),
            running(1688, 1, &[3], 35),
            running(1690, 0, &[0], 40),
        ];
        let got = r.candidates(&pending(1), &jobs);
        assert_eq!(ids(&got), [1673, 1685, 1690, 1676]);
        assert!(got.iter().all(|c| c.mode == PreemptMode::Cancel));
        // A job of the lower tier preempts nothing, nor does one of the same.
        assert!(r.candidates(&pending(0), &jobs).is_empty());
    }

    /// `_add_preemptable_job` and preempt/partition_prio's `preemptable`:
    /// only jobs running (or suspended) on the preemptor's partition's
    /// nodes, of partitions that do not say `PreemptMode=OFF`; the mode is
    /// the partition's, else the cluster's, without GANG.
    #[test]
    fn partition_modes_nodes_and_states() {
        let r = rules(&format!(
            "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n{NODES}\
             PartitionName=low Nodes=n[1-4]\n\
             PartitionName=kept Nodes=n[1-4] PreemptMode=OFF\n\
             PartitionName=requeued Nodes=n[1-4] PreemptMode=REQUEUE\n\
             PartitionName=high Nodes=n[1-2] PriorityTier=3\n"
        ))
        .expect("preempts");
        let mut done = running(5, 0, &[0], 0);
        done.state = JobState::Complete;
        let mut suspended = running(6, 0, &[1], 0);
        suspended.state = JobState::Suspended;
        let jobs = [
            running(1, 0, &[0], 0),
            running(2, 1, &[0], 0),
            running(3, 2, &[1], 0),
            running(4, 0, &[2, 3], 0),
            done,
            suspended,
        ];
        let got = modes(&r.candidates(&pending(3), &jobs));
        assert_eq!(
            got,
            [
                (1, PreemptMode::Suspend),
                (3, PreemptMode::Requeue),
                (6, PreemptMode::Suspend)
            ]
        );
    }

    #[test]
    fn youngest_first_when_asked() {
        let r = rules(&format!(
            "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n\
             SchedulerParameters=bf_continue,preempt_youngest_first\n{NODES}{TIERS}"
        ))
        .expect("preempts");
        let jobs = [
            running(1, 0, &[0], 10),
            running(2, 0, &[1, 2], 30),
            running(3, 0, &[3], 20),
        ];
        assert_eq!(ids(&r.candidates(&pending(1), &jobs)), [2, 3, 1]);
    }

    #[test]
    fn no_rules_without_partition_preemption() {
        assert!(rules(&format!("{NODES}{TIERS}")).is_none());
        assert!(rules(&format!(
            "PreemptType=preempt/none\nPreemptMode=GANG\n{NODES}{TIERS}"
        ))
        .is_none());
        assert!(rules(&format!(
            "PreemptType=preempt/qos\nPreemptMode=CANCEL\n{NODES}{TIERS}"
        ))
        .is_none());
    }

    /// 22.05 `preempt_mode_num`: `CLUSTER` is OFF and `ON` is SUSPEND; a
    /// partition saying OFF (or CLUSTER) keeps its jobs.
    #[test]
    fn aliases_of_modes() {
        let r = rules(&format!(
            "PreemptType=preempt/partition_prio\nPreemptMode=ON,GANG\n{NODES}\
             PartitionName=low Nodes=n[1-4]\n\
             PartitionName=kept Nodes=n[1-4] PreemptMode=CLUSTER\n\
             PartitionName=high Nodes=n[1-4] PriorityTier=2\n"
        ))
        .expect("preempts");
        let jobs = [running(1, 0, &[0], 0), running(2, 1, &[1], 0)];
        let got = modes(&r.candidates(&pending(2), &jobs));
        assert_eq!(got, [(1, PreemptMode::Suspend)]);
    }

    /// What slurmctld refuses to start with (22.05 read_config.c:4541-4580).
    #[test]
    fn refused_combinations_name_the_line() {
        let parts = "PartitionName=big Nodes=n[1-4]\n";
        for (text, message) in [
            (
                format!("PreemptType=preempt/partition_prio\nPreemptMode=OFF\n{NODES}{parts}"),
                "slurm.conf:1: PreemptType=preempt/partition_prio: expected PreemptMode CANCEL, \
                 REQUEUE or SUSPEND,GANG",
            ),
            (
                format!("PreemptType=preempt/qos\n{NODES}{parts}"),
                "slurm.conf:1: PreemptType=preempt/qos: expected PreemptMode CANCEL, REQUEUE or \
                 SUSPEND,GANG",
            ),
            (
                format!("PreemptMode=REQUEUE\n{NODES}{parts}"),
                "slurm.conf:1: PreemptType=preempt/none: expected PreemptMode OFF (or GANG \
                 alone), since nothing is preempted; name a PreemptType to preempt",
            ),
            (
                format!("PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND\n{NODES}{parts}"),
                "slurm.conf:2: PreemptMode: SUSPEND needs GANG too (SUSPEND,GANG)",
            ),
            (
                format!(
                    "PreemptType=preempt/partition_prio\nPreemptMode=GANG,WITHIN\n{NODES}{parts}"
                ),
                "slurm.conf:2: PreemptMode: expected one of OFF, CANCEL, REQUEUE or SUSPEND, \
                 with GANG or WITHIN if wanted, found `GANG,WITHIN`",
            ),
        ] {
            assert_eq!(error(&text), message, "{text}");
        }
    }

    #[test]
    fn bad_modes_name_file_and_line() {
        assert_eq!(
            error(&format!(
                "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL,SUSPEND\n{NODES}"
            )),
            "slurm.conf:2: PreemptMode: expected one of OFF, CANCEL, REQUEUE or SUSPEND, with \
             GANG or WITHIN if wanted, found `CANCEL,SUSPEND`"
        );
        assert_eq!(
            error(&format!(
                "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n{NODES}\
                 PartitionName=big Nodes=n[1-4] PreemptMode=kill\n"
            )),
            "slurm.conf:4: PreemptMode: expected one of OFF, CANCEL, REQUEUE or SUSPEND, with \
             GANG or WITHIN if wanted, found `kill`"
        );
    }
}
