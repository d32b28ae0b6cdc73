//! Which running jobs a pending job may preempt: the `preemptee-candidates`
//! of a select `job-test`, listed as slurmctld lists them
//! (`slurm_find_preemptable_jobs`, 22.05 slurmctld/preempt.c) under
//! `PreemptType=preempt/partition_prio` or `preempt/qos`
//! ([`Preemption::candidates`] states the rules).
//!
//! Under preempt/partition_prio a job preempts those of partitions with a
//! lower `PriorityTier`; under preempt/qos those of the QOS its own QOS
//! lists in `Preempt` (the site's QOS table, [`super::qos`]). Candidates
//! come lowest rank first (tier, or QOS priority, then node count), each
//! with the mode that stops it. The settings slurmctld refuses to start
//! with are refused here too, at their file and line, also by
//! `Cluster::from_slurm_conf`.

use super::qos::QosTable;
use crate::slurm_conf::{parse_seconds, ConfError, Options, SlurmConf};
use slurm_wasm_host::bindings::select::exports::slurm::plugin::select::{
    PreemptMode, PreempteeCandidate,
};
use slurm_wasm_host::bindings::types::{Job, JobState, PreemptModes};

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

impl Stop {
    /// The contract's mode for a job this stops; `None` for OFF.
    fn preempt_mode(self) -> Option<PreemptMode> {
        match self {
            Stop::Cancel => Some(PreemptMode::Cancel),
            Stop::Requeue => Some(PreemptMode::Requeue),
            Stop::Suspend => Some(PreemptMode::Suspend),
            Stop::Off => None,
        }
    }
}

/// One partition as the candidate rules read it.
#[derive(Debug, Clone)]
struct PartitionRule {
    tier: u16,
    /// Node indexes of the partition, ascending (a flag per node of the
    /// table for every partition would take partitions x nodes bytes).
    nodes: Vec<usize>,
    /// Its own `PreemptMode=`, when the line sets one.
    stop: Option<Stop>,
}

/// Which rule decides who may preempt whom (`PreemptType`).
#[derive(Debug, Clone)]
enum Plugin {
    /// `preempt/partition_prio`: jobs of partitions with a lower
    /// `PriorityTier`, ranked by that tier.
    PartitionPrio,
    /// `preempt/qos`: jobs of the QOS the preemptor's QOS lists in its
    /// `Preempt`, ranked by their QOS's priority.
    Qos,
}

/// The preemption rules of one `slurm.conf` (and, for `preempt/qos` and
/// `PreemptExemptTime`s, the site's QOS table).
#[derive(Debug, Clone)]
pub struct Preemption {
    plugin: Plugin,
    partitions: Vec<PartitionRule>,
    cluster: Mode,
    /// The cluster's `PreemptExemptTime` in seconds, when set.
    exempt_time: Option<u64>,
    youngest_first: bool,
    qos: QosTable,
}

impl Preemption {
    /// The rules of `conf` with the QOS of `qos`, or `None` when the
    /// cluster does not preempt (`PreemptType` unset or `preempt/none`).
    ///
    /// # Errors
    ///
    /// A [`ConfError`] at the file and line of what slurmctld refuses to
    /// start with, as [`Cluster::from_slurm_conf`](super::records::Cluster::from_slurm_conf)
    /// gives it: a `PreemptMode=` (cluster or partition) that is not one of
    /// `OFF` (alias `CLUSTER`), `CANCEL`, `REQUEUE` or `SUSPEND` (alias
    /// `ON`), optionally with `GANG` or `WITHIN` (not both); a cluster-wide
    /// `SUSPEND` without `GANG`; a `PreemptType` that preempts with the
    /// mode OFF, or `preempt/none` with another; a `PreemptType` other than
    /// these three; a `PreemptExemptTime` in no time syntax of Slurm's.
    pub fn from_conf(conf: &SlurmConf, qos: &QosTable) -> Result<Option<Preemption>, ConfError> {
        let cluster = checked(conf)?;
        let plugin = match conf.options.get("PreemptType") {
            Some(p) if p.eq_ignore_ascii_case("preempt/partition_prio") => Plugin::PartitionPrio,
            _ if by_qos(conf) => Plugin::Qos,
            _ => return Ok(None),
        };
        let partitions = conf
            .partitions
            .iter()
            .map(|p| {
                Ok(PartitionRule {
                    tier: p.priority_tier,
                    nodes: p.nodes.clone(),
                    stop: mode_of(&p.extra)?.map(|m| m.stop),
                })
            })
            .collect::<Result<_, ConfError>>()?;
        let exempt_time = match conf.options.get("PreemptExemptTime") {
            None => None,
            Some(t) => parse_seconds(t)
                .ok_or_else(|| {
                    let origin = conf.options.origin("PreemptExemptTime").expect("set");
                    origin.error(format!(
                        "PreemptExemptTime: expected a time (MM:SS, HH:MM:SS, D-HH:MM:SS, ...) \
                         or -1, found `{t}`"
                    ))
                })?
                .filter(|&s| s > 0),
        };
        let youngest_first = conf
            .options
            .get("SchedulerParameters")
            .is_some_and(|v| v.split(',').any(|p| p.trim() == "preempt_youngest_first"));
        Ok(Some(Preemption {
            plugin,
            partitions,
            cluster,
            exempt_time,
            youngest_first,
            qos: qos.clone(),
        }))
    }

    /// The candidates `preemptor` (pending, in the partition its
    /// `partitions` lists first) may preempt at `now` among `running`,
    /// given in the controller's job order, each with the mode that would
    /// stop it (`slurm_find_preemptable_jobs`).
    ///
    /// A candidate runs (or is suspended) on a node of the preemptor's
    /// partition, is preemptable by the plugin's rule, and has run at least
    /// its `PreemptExemptTime` (its QOS's, else the cluster's). Under
    /// preempt/partition_prio its partition's tier is below the
    /// preemptor's and the partition does not say `PreemptMode=OFF`; its
    /// mode is its partition's, else the cluster's. Under preempt/qos the
    /// preemptor's QOS lists the candidate's in `Preempt`, or both run in
    /// one QOS whose (or the cluster's) mode says `WITHIN` and the
    /// preemptor's priority is higher; its mode is its QOS's, else the
    /// cluster's (`preempt_p_preemptable` and `_job_preempt_mode` of each
    /// plugin). A job without a QOS runs in
    /// [`DEFAULT_QOS`](super::qos::DEFAULT_QOS); one whose QOS
    /// the table lacks is neither preemptor nor candidate.
    ///
    /// They come lowest rank first, ties in job order: the tier (or the
    /// QOS's priority, at most 0xffff) shifted by 16 plus the node count;
    /// with `SchedulerParameters=preempt_youngest_first` latest start
    /// first instead. A job whose partition index is not in the table, or
    /// that has no allocated nodes, is no candidate; so is every job when
    /// the preemptor names no known partition.
    pub fn candidates<'a>(
        &self,
        preemptor: &Job,
        running: impl IntoIterator<Item = &'a Job>,
        now: i64,
    ) -> Vec<PreempteeCandidate> {
        let Some(own) = self.partition_of(preemptor) else {
            return Vec::new();
        };
        let mut found: Vec<(u32, i64, PreempteeCandidate)> = running
            .into_iter()
            .filter(|job| matches!(job.state, JobState::Running | JobState::Suspended))
            .filter_map(|job| {
                let nodes = &job.resources.as_ref()?.nodes;
                if !nodes
                    .ones()
                    .any(|n| own.nodes.binary_search(&(n as usize)).is_ok())
                {
                    return None;
                }
                let (prio, stop) = match self.plugin {
                    Plugin::PartitionPrio => self.by_partition(own, job)?,
                    Plugin::Qos => self.by_qos(preemptor, job)?,
                };
                let exempt = self
                    .qos
                    .get(job.qos.as_deref())
                    .and_then(|q| q.preempt_exempt_time)
                    .or(self.exempt_time);
                // An exemption beyond i64 seconds lasts for ever.
                let exempt_for = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
                if exempt.is_some_and(|t| now < job.start_time.saturating_add(exempt_for(t))) {
                    return None;
                }
                let rank = (prio.min(0xffff) << 16) + nodes.ones().count().min(0xffff) as u32;
                Some((
                    rank,
                    job.start_time,
                    PreempteeCandidate {
                        job_id: job.job_id,
                        mode: stop.preempt_mode()?,
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

    /// preempt/partition_prio's rule for `job` under a preemptor of
    /// partition `own`: its tier and what stops it, or `None` when it may
    /// not be preempted.
    fn by_partition(&self, own: &PartitionRule, job: &Job) -> Option<(u32, Stop)> {
        let theirs = self.partition_of(job)?;
        if theirs.tier >= own.tier || theirs.stop == Some(Stop::Off) {
            return None;
        }
        Some((
            u32::from(theirs.tier),
            theirs.stop.unwrap_or(self.cluster.stop),
        ))
    }

    /// preempt/qos's rule for `job` under `preemptor`: its QOS's priority
    /// and what stops it, or `None` when it may not be preempted.
    fn by_qos(&self, preemptor: &Job, job: &Job) -> Option<(u32, Stop)> {
        let or = self.qos.get(preemptor.qos.as_deref())?;
        let ee = self.qos.get(job.qos.as_deref())?;
        let preemptable = if or.name == ee.name {
            let within = or.mode.is_some_and(|m| m.within) || self.cluster.within;
            within && preemptor.priority > job.priority
        } else {
            or.preempt.contains(&ee.name)
        };
        if !preemptable {
            return None;
        }
        Some((ee.priority, ee.mode.unwrap_or(self.cluster).stop))
    }

    fn partition_of(&self, job: &Job) -> Option<&PartitionRule> {
        let index = *job.partitions.first()?;
        self.partitions.get(index as usize)
    }
}

/// Whether `conf` preempts by QOS (`PreemptType=preempt/qos`), so that
/// who may preempt whom depends on the site's QOS table.
pub fn by_qos(conf: &SlurmConf) -> bool {
    conf.options
        .get("PreemptType")
        .is_some_and(|p| p.eq_ignore_ascii_case("preempt/qos"))
}

/// A parsed `PreemptMode=` (`preempt_mode_num`, 22.05
/// slurm_protocol_defs.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mode {
    stop: Stop,
    gang: bool,
    within: bool,
}

impl Mode {
    /// The tokens of a `PreemptMode` value: one of `OFF` (alias
    /// `CLUSTER`), `CANCEL`, `REQUEUE` or `SUSPEND` (alias `ON`), or none,
    /// with `GANG` or `WITHIN` (not both); `None` for anything else.
    pub(super) fn parse(value: &str) -> Option<Mode> {
        let (mut stops, mut gang, mut within) = (Vec::new(), false, false);
        for token in value.split(',').map(str::trim) {
            match token.to_ascii_uppercase().as_str() {
                "OFF" | "CLUSTER" => stops.push(Stop::Off),
                "CANCEL" => stops.push(Stop::Cancel),
                "REQUEUE" => stops.push(Stop::Requeue),
                "SUSPEND" | "ON" => stops.push(Stop::Suspend),
                "GANG" => gang = true,
                "WITHIN" => within = true,
                _ => return None,
            }
        }
        let stop = match stops.as_slice() {
            _ if gang && within => return None,
            [] => Stop::Off,
            [one] => *one,
            _ => return None,
        };
        Some(Mode { stop, gang, within })
    }

    /// The contract's flags (`PREEMPT_MODE_*` bits): none for OFF.
    fn flags(self) -> PreemptModes {
        let mut flags = match self.stop {
            Stop::Off => PreemptModes::empty(),
            Stop::Cancel => PreemptModes::CANCEL,
            Stop::Requeue => PreemptModes::REQUEUE,
            Stop::Suspend => PreemptModes::SUSPEND,
        };
        if self.gang {
            flags |= PreemptModes::GANG;
        }
        if self.within {
            flags |= PreemptModes::WITHIN;
        }
        flags
    }

    /// `OFF` (or `CLUSTER`) alone: for a QOS, the cluster's mode applies.
    pub(super) fn is_off(self) -> bool {
        self == Mode {
            stop: Stop::Off,
            gang: false,
            within: false,
        }
    }
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
        within: false,
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
    if !preempting && !none {
        let origin = conf.options.origin("PreemptType").expect("set");
        return Err(origin.error(format!(
            "PreemptType: expected preempt/none, preempt/partition_prio or preempt/qos, found \
             `{plugin}`"
        )));
    }
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

/// The contract's flags of `options`' `PreemptMode=` (checked by
/// [`check`]), when set: the bits 22.05's `preempt_mode_num` sets.
///
/// # Errors
///
/// A [`ConfError`] at the line of a value [`check`] refuses.
pub(super) fn modes_of(options: &Options) -> Result<Option<PreemptModes>, ConfError> {
    Ok(mode_of(options)?.map(Mode::flags))
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
    Mode::parse(value).map(Some).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::slurm_conf::parse_str;
    use slurm_wasm_host::bindings::types::JobResources;
    use slurm_wasm_host::fixtures::{bitmap, job};

    const NODES: &str = "NodeName=n[1-4] CPUs=8\n";
    /// The anchor's two partitions over the same nodes: `big` at tier 1,
    /// `alt` at tier 2.
    const TIERS: &str =
        "PartitionName=big Nodes=n[1-4]\nPartitionName=alt Nodes=n[1-4] PriorityTier=2\n";

    fn rules(text: &str) -> Option<Preemption> {
        let conf =
            parse_str(text, Path::new("/etc/slurm/slurm.conf")).unwrap_or_else(|e| panic!("{e}"));
        Preemption::from_conf(&conf, &QosTable::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(text: &str) -> String {
        let conf = parse_str(text, Path::new("slurm.conf")).unwrap_or_else(|e| panic!("{e}"));
        Preemption::from_conf(&conf, &QosTable::default())
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
        let got = r.candidates(&pending(1), &jobs, 0);
        assert_eq!(ids(&got), [1673, 1685, 1690, 1676]);
        assert!(got.iter().all(|c| c.mode == PreemptMode::Cancel));
        // A job of the lower tier preempts nothing, nor does one of the same.
        assert!(r.candidates(&pending(0), &jobs, 0).is_empty());
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
        let got = modes(&r.candidates(&pending(3), &jobs, 0));
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
        assert_eq!(ids(&r.candidates(&pending(1), &jobs, 0)), [2, 3, 1]);
    }

    #[test]
    fn no_rules_without_preemption() {
        assert!(rules(&format!("{NODES}{TIERS}")).is_none());
        assert!(rules(&format!(
            "PreemptType=preempt/none\nPreemptMode=GANG\n{NODES}{TIERS}"
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
        let got = modes(&r.candidates(&pending(2), &jobs, 0));
        assert_eq!(got, [(1, PreemptMode::Suspend)]);
    }

    /// `sacctmgr -P show qos` of a site with three QOS: `high` preempts
    /// `normal` and `scavenger`, whose jobs are requeued.
    const QOS: &str = "Name|Priority|Preempt|PreemptMode|PreemptExemptTime\n\
                       normal|10||cluster|\n\
                       scavenger|0||requeue|\n\
                       high|100|normal,scavenger|cluster|\n";

    fn qos_rules(conf: &str, qos: &str) -> Preemption {
        let conf =
            parse_str(conf, Path::new("/etc/slurm/slurm.conf")).unwrap_or_else(|e| panic!("{e}"));
        let qos = QosTable::parse(qos, Path::new("qos.txt")).unwrap_or_else(|e| panic!("{e}"));
        Preemption::from_conf(&conf, &qos)
            .unwrap_or_else(|e| panic!("{e}"))
            .expect("preempts")
    }

    fn with_qos(mut job: Job, qos: &str) -> Job {
        job.qos = Some(qos.to_owned());
        job
    }

    /// preempt/qos's `preempt_p_preemptable` and `_gen_job_prio`: the
    /// QOS the preemptor's lists, lowest QOS priority first, then fewest
    /// nodes, ties in job order; a job without a QOS runs in `normal`
    /// (as the anchor's jobs without `--qos` showed `QOS=normal`, and
    /// `--test-only --qos=high` named the `normal` job in `Preempts:`).
    /// Partitions' tiers play no part.
    #[test]
    fn qos_lists_whom_it_preempts() {
        let r = qos_rules(
            &format!("PreemptType=preempt/qos\nPreemptMode=CANCEL\n{NODES}{TIERS}"),
            QOS,
        );
        let jobs = [
            with_qos(running(1, 1, &[0], 0), "normal"),
            with_qos(running(2, 0, &[1, 2], 0), "scavenger"),
            with_qos(running(3, 0, &[3], 0), "scavenger"),
            with_qos(running(4, 0, &[0], 0), "high"),
            running(5, 0, &[1], 0),
            with_qos(running(6, 0, &[2], 0), "gold"),
        ];
        let high = with_qos(pending(0), "high");
        assert_eq!(
            modes(&r.candidates(&high, &jobs, 0)),
            [
                (3, PreemptMode::Requeue),
                (2, PreemptMode::Requeue),
                (1, PreemptMode::Cancel),
                (5, PreemptMode::Cancel),
            ]
        );
        // `normal` lists nobody; a QOS the table lacks preempts nobody.
        assert!(r.candidates(&pending(1), &jobs, 0).is_empty());
        assert!(r
            .candidates(&with_qos(pending(1), "gold"), &jobs, 0)
            .is_empty());
    }

    /// `WITHIN` (the QOS's or the cluster's mode): jobs of one QOS preempt
    /// those of lower priority (preempt_qos.c `preempt_p_preemptable`).
    #[test]
    fn qos_within_preempts_lower_priority_jobs() {
        let within = "Name|Priority|Preempt|PreemptMode\nnormal|0||cancel,within\n";
        for (conf_mode, qos) in [("CANCEL,WITHIN", QOS), ("REQUEUE", within)] {
            let r = qos_rules(
                &format!("PreemptType=preempt/qos\nPreemptMode={conf_mode}\n{NODES}{TIERS}"),
                qos,
            );
            let mut low = running(1, 0, &[0], 0);
            low.priority = 10;
            let mut higher = running(2, 0, &[1], 0);
            higher.priority = 60;
            let mut preemptor = pending(0);
            preemptor.priority = 50;
            let got = modes(&r.candidates(&preemptor, &[low, higher], 0));
            assert_eq!(got, [(1, PreemptMode::Cancel)], "{conf_mode}");
        }
    }

    /// `acct_policy_is_job_preempt_exempt`: a job is no candidate before
    /// it has run its QOS's `PreemptExemptTime`, else the cluster's.
    #[test]
    fn exempt_times_keep_young_jobs() {
        let qos = "Name|Priority|Preempt|PreemptMode|PreemptExemptTime\n\
                   normal|0||cluster|\n\
                   quick|0||cluster|00:01:00\n\
                   high|100|normal,quick|cluster|\n";
        let r = qos_rules(
            &format!(
                "PreemptType=preempt/qos\nPreemptMode=CANCEL\nPreemptExemptTime=00:10:00\n\
                 {NODES}{TIERS}"
            ),
            qos,
        );
        let now = 10_000;
        let jobs = [
            running(1, 0, &[0], now - 300),
            running(2, 0, &[1], now - 600),
            with_qos(running(3, 0, &[2], now - 300), "quick"),
            with_qos(running(4, 0, &[3], now - 30), "quick"),
        ];
        let high = with_qos(pending(0), "high");
        assert_eq!(ids(&r.candidates(&high, &jobs, now)), [2, 3]);
    }

    // Issue 26, class 7: an exemption beyond 2^63 seconds was cast with
    // `as` into a negative number, so no job was exempt; it now lasts for
    // ever.
    #[test]
    fn an_exemption_beyond_an_i64_lasts_for_ever() {
        let r = rules(&format!(
            "PreemptType=preempt/partition_prio\nPreemptMode=CANCEL\n\
             PreemptExemptTime=213503982334601-00:00:00\n{NODES}{TIERS}"
        ))
        .expect("preempts");
        let jobs = [running(1, 0, &[0], 0)];
        assert!(r.candidates(&pending(1), &jobs, i64::MAX - 1).is_empty());
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
                format!("PreemptType=preempt/foo\nPreemptMode=CANCEL\n{NODES}{parts}"),
                "slurm.conf:1: PreemptType: expected preempt/none, preempt/partition_prio or \
                 preempt/qos, found `preempt/foo`",
            ),
            (
                format!(
                    "PreemptType=preempt/qos\nPreemptMode=CANCEL\nPreemptExemptTime=soon\n\
                     {NODES}{parts}"
                ),
                "slurm.conf:3: PreemptExemptTime: expected a time (MM:SS, HH:MM:SS, \
                 D-HH:MM:SS, ...) or -1, found `soon`",
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
