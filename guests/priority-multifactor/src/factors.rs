//! The multifactor formula (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`):
//!
//! ```text
//! Priority = site + W_age F_age + W_assoc F_assoc + W_fs F_fs + W_js F_js
//!          + W_part F_part + W_qos F_qos + sum_t W_tres[t] F_tres[t] - nice
//! ```
//!
//! in double precision, below 1 raised to 1, above 0xffffffff cut to
//! 0xffffffff, then truncated to an integer. A factor whose weight is 0 is
//! not computed (it is 0), as in Slurm.

use crate::config::{Config, Flags};
use crate::job::JobView;

/// A partition as the formula sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionInfo {
    pub name: String,
    /// `PriorityJobFactor`.
    pub job_factor: u16,
    /// `MaxTime` in minutes; None = UNLIMITED.
    pub max_time: Option<u32>,
    /// Configured TRES totals, lower-case names (TRES factor denominators).
    pub tres: Vec<(String, u64)>,
}

/// Cluster-wide maxima and sizes the factors are normalised by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scale {
    /// Largest `PriorityJobFactor` of all partitions.
    pub max_partition_factor: u16,
    pub max_qos_priority: u32,
    pub max_assoc_priority: u32,
    pub cluster_cpus: u32,
    pub cluster_nodes: u32,
}

/// What the formula needs beyond the job, looked up by the caller.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The fair-share factor of the job's association (0 without one).
    pub fair_share: f64,
    /// The association's `Priority=` (0 when unset or no association).
    pub assoc_priority: u32,
    /// The QOS's priority (0 when the job has no known QOS).
    pub qos_priority: u32,
    /// The partition the priority is computed for.
    pub partition: Option<&'a PartitionInfo>,
    pub now: i64,
}

/// The factors of a job, unweighted or weighted ([`Factors::weighted`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Factors {
    pub age: f64,
    pub assoc: f64,
    pub fair_share: f64,
    pub job_size: f64,
    pub partition: f64,
    pub qos: f64,
    /// One per `PriorityWeightTRES` entry, in the configuration's order.
    pub tres: Vec<f64>,
}

impl Factors {
    /// Computes the factors of `job` (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`).
    pub fn of(config: &Config, scale: &Scale, job: &JobView<'_>, inputs: &Inputs<'_>) -> Factors {
        let w = &config.weights;
        let flags = config.flags;
        let normalised = |value: u32, max: u32, raw: Flags| {
            if flags.contains(raw) {
                f64::from(value)
            } else if max == 0 {
                0.0
            } else {
                f64::from(value) / f64::from(max)
            }
        };
        let job_factor = inputs.partition.map_or(0, |p| p.job_factor);
        Factors {
            age: if w.age > 0 {
                age(config, job, inputs.now)
            } else {
                0.0
            },
            assoc: if w.assoc > 0 && inputs.assoc_priority != 0 {
                normalised(
                    inputs.assoc_priority,
                    scale.max_assoc_priority,
                    Flags::NO_NORMAL_ASSOC,
                )
            } else {
                0.0
            },
            fair_share: if w.fairshare > 0 {
                inputs.fair_share
            } else {
                0.0
            },
            job_size: if w.job_size > 0 {
                job_size(config, scale, job, inputs.partition)
            } else {
                0.0
            },
            partition: if w.partition > 0 && job_factor != 0 {
                normalised(
                    u32::from(job_factor),
                    u32::from(scale.max_partition_factor),
                    Flags::NO_NORMAL_PART,
                )
            } else {
                0.0
            },
            qos: if w.qos > 0 && inputs.qos_priority != 0 {
                normalised(
                    inputs.qos_priority,
                    scale.max_qos_priority,
                    Flags::NO_NORMAL_QOS,
                )
            } else {
                0.0
            },
            tres: config
                .tres_weights
                .iter()
                .map(|(name, weight)| {
                    if *weight > 0.0 {
                        tres(flags, job, inputs.partition, name)
                    } else {
                        0.0
                    }
                })
                .collect(),
        }
    }

    /// Each factor multiplied by its weight.
    pub fn weighted(&self, config: &Config) -> Factors {
        let w = &config.weights;
        Factors {
            age: self.age * f64::from(w.age),
            assoc: self.assoc * f64::from(w.assoc),
            fair_share: self.fair_share * f64::from(w.fairshare),
            job_size: self.job_size * f64::from(w.job_size),
            partition: self.partition * f64::from(w.partition),
            qos: self.qos * f64::from(w.qos),
            tres: self
                .tres
                .iter()
                .zip(&config.tres_weights)
                .map(|(f, (_, weight))| f * weight)
                .collect(),
        }
    }

    /// The sum of weighted factors plus `site` minus `nice`, before clamping.
    pub fn total(&self, site: i64, nice: i32) -> f64 {
        self.age
            + self.assoc
            + self.fair_share
            + self.job_size
            + self.partition
            + self.qos
            + self.tres.iter().sum::<f64>()
            + site as f64
            - f64::from(nice)
    }
}

/// A total as a priority: at least 1, at most 0xffffffff, truncated.
pub fn clamp_priority(total: f64) -> u32 {
    if total < 1.0 {
        1
    } else if total > f64::from(u32::MAX) {
        u32::MAX
    } else {
        total as u32
    }
}

/// `diff / PriorityMaxAge` (1 from the maximum on), where `diff` is the time
/// since the job started accruing (since submission with ACCRUE_ALWAYS); 0
/// for a job not accruing yet.
fn age(config: &Config, job: &JobView<'_>, now: i64) -> f64 {
    let since = if config.flags.contains(Flags::ACCRUE_ALWAYS) {
        job.submit_time
    } else {
        job.accrue_time
    };
    if since == 0 {
        return 0.0;
    }
    let diff = (now - since).max(0);
    if diff < i64::from(config.max_age) {
        diff as f64 / f64::from(config.max_age)
    } else {
        1.0
    }
}

/// The job size factor, in [0, 1]; 0 without cluster sizes.
///
/// * SMALL_RELATIVE_TO_TIME: `max(min_nodes x cpus/nodes, cpus)` per
///   minute of time limit (the job's, else the partition's MaxTime, else
///   1) over the cluster's CPUs, `1 - x` with PriorityFavorSmall;
/// * PriorityFavorSmall: the mean of the free fractions of nodes and CPUs;
/// * otherwise the mean of the requested fractions of nodes and CPUs.
///
/// The CPU term is left out when the job's CPU count is 0.
fn job_size(
    config: &Config,
    scale: &Scale,
    job: &JobView<'_>,
    partition: Option<&PartitionInfo>,
) -> f64 {
    if scale.cluster_nodes == 0 || scale.cluster_cpus == 0 {
        return 0.0;
    }
    let nodes = f64::from(scale.cluster_nodes);
    let cpus = f64::from(scale.cluster_cpus);
    let min_nodes = f64::from(job.min_nodes);
    let job_cpus = f64::from(job.cpus);
    let x = if config.flags.contains(Flags::SMALL_RELATIVE_TO_TIME) {
        let minutes = job
            .time_limit
            .or_else(|| partition.and_then(|p| p.max_time))
            .filter(|&m| m > 0)
            .unwrap_or(1);
        let x = (min_nodes * cpus / nodes).max(job_cpus) / f64::from(minutes) / cpus;
        if config.favor_small {
            1.0 - x
        } else {
            x
        }
    } else if config.favor_small {
        let x = if nodes > min_nodes {
            (nodes - min_nodes) / nodes
        } else {
            0.0
        };
        if job.cpus > 0 {
            (x + (cpus - job_cpus) / cpus) / 2.0
        } else {
            x
        }
    } else {
        let x = min_nodes / nodes;
        if job.cpus > 0 {
            (x + job_cpus / cpus) / 2.0
        } else {
            x
        }
    };
    x.clamp(0.0, 1.0)
}

/// The factor of TRES `name`: the job's count over the partition's total
/// (0 when the partition has none), or the raw count with NO_NORMAL_TRES.
fn tres(flags: Flags, job: &JobView<'_>, partition: Option<&PartitionInfo>, name: &str) -> f64 {
    let count = job
        .tres
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map_or(0, |(_, c)| *c);
    if count == 0 {
        return 0.0;
    }
    if flags.contains(Flags::NO_NORMAL_TRES) {
        return count as f64;
    }
    let total = partition
        .and_then(|p| p.tres.iter().find(|(n, _)| n == name))
        .map_or(0, |(_, t)| *t);
    if total == 0 {
        0.0
    } else {
        count as f64 / total as f64
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{Weights, SEVEN_DAYS};
    use crate::job::RunState;

    pub(crate) const NOW: i64 = 1_700_000_000;

    /// A hand-computed case of Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`'s
    /// formula (`synthetic_vector` below): a pending job eligible for a day, 10
    /// nodes and 100 CPUs, in a partition of 1000 CPUs.
    pub(crate) fn vector_job() -> JobView<'static> {
        JobView {
            job_id: 1,
            user_id: 1000,
            account: None,
            assoc_id: 0,
            partitions: &[0],
            qos: None,
            state: RunState::Pending,
            priority: 1,
            direct_priority: false,
            site_factor: 0,
            nice: 0,
            time_limit: None,
            start_time: 0,
            end_time: 0,
            submit_time: NOW - 86_400,
            begin_time: NOW - 86_400,
            accrue_time: NOW - 86_400,
            min_nodes: 10,
            cpus: 100,
            tres: vec![("cpu", 100)],
            tres_allocated: Vec::new(),
            billable: 0.0,
        }
    }

    pub(crate) fn vector_config() -> Config {
        Config {
            weights: Weights {
                age: 1000,
                assoc: 0,
                fairshare: 10_000,
                job_size: 1000,
                partition: 1000,
                qos: 2000,
            },
            tres_weights: vec![("cpu".into(), 2000.0)],
            with_slurmdbd: true,
            ..Config::default()
        }
    }

    fn partition(job_factor: u16) -> PartitionInfo {
        PartitionInfo {
            name: "p".into(),
            job_factor,
            max_time: None,
            tres: vec![("cpu".into(), 1000)],
        }
    }

    const SCALE: Scale = Scale {
        max_partition_factor: 1,
        max_qos_priority: 100,
        max_assoc_priority: 0,
        cluster_cpus: 1000,
        cluster_nodes: 100,
    };

    fn inputs(p: &PartitionInfo) -> Inputs<'_> {
        Inputs {
            fair_share: 0.5,
            assoc_priority: 0,
            qos_priority: 50,
            partition: Some(p),
            now: NOW,
        }
    }

    #[test]
    fn synthetic_vector() {
        let config = vector_config();
        let p = partition(1);
        let f = Factors::of(&config, &SCALE, &vector_job(), &inputs(&p));
        assert_eq!(f.job_size, 0.1);
        let w = f.weighted(&config);
        assert_eq!(format!("{:.3}", w.age), "142.857");
        assert_eq!(w.fair_share, 5000.0);
        assert_eq!(w.job_size, 100.0);
        assert_eq!(w.partition, 1000.0);
        assert_eq!(w.qos, 1000.0);
        assert_eq!(w.tres, vec![200.0]);
        assert_eq!(format!("{:.3}", w.total(0, 0)), "7442.857");
        assert_eq!(clamp_priority(w.total(0, 0)), 7442);
    }

    #[test]
    fn small_relative_to_time_and_favor_small() {
        let p = partition(1);
        let mut config = vector_config();
        config.flags = Flags::parse("SMALL_RELATIVE_TO_TIME").unwrap();
        let mut job = vector_job();
        job.min_nodes = 1;
        job.cpus = 20;
        job.time_limit = Some(60);
        let x = Factors::of(&config, &SCALE, &job, &inputs(&p)).job_size;
        assert_eq!(format!("{x:.6}"), "0.000333");
        assert_eq!(x, 20.0 / 60.0 / 1000.0);
        config.favor_small = true;
        let x = Factors::of(&config, &SCALE, &job, &inputs(&p)).job_size;
        assert_eq!(format!("{x:.6}"), "0.999667");
        // The partition's MaxTime stands in for a missing job limit.
        job.time_limit = None;
        let p60 = PartitionInfo {
            max_time: Some(60),
            ..partition(1)
        };
        let x = Factors::of(&config, &SCALE, &job, &inputs(&p60)).job_size;
        assert_eq!(format!("{x:.6}"), "0.999667");

        let mut favor_small = vector_config();
        favor_small.favor_small = true;
        let x = Factors::of(&favor_small, &SCALE, &vector_job(), &inputs(&p)).job_size;
        assert_eq!(x, 0.9);
    }

    #[test]
    fn partition_doc_example() {
        // PartitionA factor 20, PartitionB 10, W_part 5000.
        let config = Config {
            weights: Weights {
                partition: 5000,
                ..Weights::default()
            },
            ..Config::default()
        };
        let scale = Scale {
            max_partition_factor: 20,
            ..SCALE
        };
        let weighted = |config: &Config, factor| {
            let p = partition(factor);
            Factors::of(config, &scale, &vector_job(), &inputs(&p))
                .weighted(config)
                .partition
        };
        assert_eq!(weighted(&config, 20), 5000.0);
        assert_eq!(weighted(&config, 10), 2500.0);
        let raw = Config {
            flags: Flags::parse("NO_NORMAL_PART").unwrap(),
            ..config
        };
        assert_eq!(weighted(&raw, 20), 100_000.0);
        assert_eq!(weighted(&raw, 10), 50_000.0);
    }

    #[test]
    fn age_caps_at_max_age_and_needs_accrual() {
        let config = vector_config();
        let p = partition(1);
        let mut job = vector_job();
        job.accrue_time = NOW - i64::from(SEVEN_DAYS) - 5;
        assert_eq!(Factors::of(&config, &SCALE, &job, &inputs(&p)).age, 1.0);
        job.accrue_time = 0;
        assert_eq!(Factors::of(&config, &SCALE, &job, &inputs(&p)).age, 0.0);
        let always = Config {
            flags: Flags::parse("ACCRUE_ALWAYS").unwrap(),
            ..vector_config()
        };
        let age = Factors::of(&always, &SCALE, &job, &inputs(&p)).age;
        assert_eq!(age, 86_400.0 / f64::from(SEVEN_DAYS), "from submission");
    }

    #[test]
    fn site_nice_and_clamping() {
        let w = Factors {
            qos: 10.0,
            ..Factors::default()
        };
        assert_eq!(clamp_priority(w.total(5, 3)), 12);
        assert_eq!(clamp_priority(w.total(0, 100)), 1);
        assert_eq!(clamp_priority(w.total(i64::from(u32::MAX), 0)), u32::MAX);
        assert_eq!(clamp_priority(9.99), 9);
    }

    #[test]
    fn no_normal_qos_assoc_tres() {
        let config = Config {
            weights: Weights {
                qos: 1,
                assoc: 1,
                ..Weights::default()
            },
            tres_weights: vec![("cpu".into(), 1.0)],
            flags: Flags::parse("NO_NORMAL_ALL").unwrap(),
            ..Config::default()
        };
        let p = partition(1);
        let inputs = Inputs {
            assoc_priority: 7,
            ..inputs(&p)
        };
        let f = Factors::of(&config, &SCALE, &vector_job(), &inputs);
        assert_eq!((f.qos, f.assoc, f.tres[0]), (50.0, 7.0, 100.0));
    }
}
