//! The priority rule, in plain Rust.

use crate::config::Config;

/// What the rule needs to know about a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobShape {
    /// Index of the job's first partition, if it has one.
    pub partition: Option<u32>,
    /// Nodes the job asks for at least.
    pub min_nodes: u32,
    /// CPUs of the job: allocated if known, else its maximum, else its minimum.
    pub cpus: u32,
    /// The user's nice value (positive lowers the priority).
    pub nice: i32,
}

/// A job's weighted factors (as `sprio` shows them) and its priority.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score {
    pub partition: f64,
    pub job_size: f64,
    pub priority: u32,
}

/// Slurm's job-size factor with `PriorityFavorSmall=NO`, in `[0, 1]`:
/// the job's share of the cluster's nodes, averaged with its share of the
/// cluster's CPUs when it asks for CPUs. A cluster total of 0 makes its share 0.
pub fn job_size_factor(min_nodes: u32, cpus: u32, cluster_nodes: u32, cluster_cpus: u32) -> f64 {
    let share = |part: u32, total: u32| {
        if total == 0 {
            0.0
        } else {
            f64::from(part) / f64::from(total)
        }
    };
    let mut factor = share(min_nodes, cluster_nodes);
    if cpus > 0 {
        factor = (factor + share(cpus, cluster_cpus)) / 2.0;
    }
    factor.clamp(0.0, 1.0)
}

/// Scores a job:
/// `PriorityJobFactor × W_partition + job_size_factor × W_job_size − nice`,
/// truncated and clamped to `1..=u32::MAX`.
///
/// Unlike priority/multifactor the partition factor is not normalised: with
/// equal weights a partition with a higher `PriorityJobFactor` always wins,
/// and size only orders jobs inside a partition. A job without a partition,
/// or with an index outside the table, gets a partition factor of 0.
pub fn score(config: &Config, job: &JobShape) -> Score {
    let job_factor = job
        .partition
        .and_then(|index| config.partitions.get(index as usize))
        .map_or(0, |p| p.job_factor);
    let partition = f64::from(job_factor) * f64::from(config.weights.partition);
    let size = job_size_factor(
        job.min_nodes,
        job.cpus,
        config.cluster_nodes,
        config.cluster_cpus,
    );
    let job_size = size * f64::from(config.weights.job_size);
    let total = partition + job_size - f64::from(job.nice);
    Score {
        partition,
        job_size,
        priority: total.clamp(1.0, f64::from(u32::MAX)) as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Partition, Weights};

    /// 100 nodes of 10 CPUs; partitions `low` (factor 1) and `high` (factor 10).
    fn cluster() -> Config {
        Config {
            weights: Weights {
                partition: 1000,
                job_size: 1000,
            },
            partitions: vec![
                Partition {
                    name: "low".into(),
                    job_factor: 1,
                },
                Partition {
                    name: "high".into(),
                    job_factor: 10,
                },
            ],
            cluster_cpus: 1000,
            cluster_nodes: 100,
        }
    }

    fn job(partition: u32, min_nodes: u32, cpus: u32, nice: i32) -> JobShape {
        JobShape {
            partition: Some(partition),
            min_nodes,
            cpus,
            nice,
        }
    }

    #[test]
    fn job_size_factor_favours_large_jobs() {
        // 10 of 100 nodes and 100 of 1000 CPUs: (0.1 + 0.1) / 2.
        assert_eq!(job_size_factor(10, 100, 100, 1000), 0.1);
        assert_eq!(job_size_factor(1, 1, 100, 1000), 0.0055);
        assert_eq!(job_size_factor(100, 1000, 100, 1000), 1.0);
        // No CPU count: the node share alone.
        assert_eq!(job_size_factor(50, 0, 100, 1000), 0.5);
        // Asking for more than the cluster has is capped at 1.
        assert_eq!(job_size_factor(400, 4000, 100, 1000), 1.0);
        assert_eq!(job_size_factor(10, 100, 0, 0), 0.0);
    }

    #[test]
    fn partition_then_size_then_nice() {
        let c = cluster();
        let s = score(&c, &job(1, 10, 100, 0));
        assert_eq!(
            (s.partition, s.job_size, s.priority),
            (10_000.0, 100.0, 10_100)
        );
        assert_eq!(score(&c, &job(1, 10, 100, 50)).priority, 10_050);
        assert_eq!(score(&c, &job(1, 10, 100, -50)).priority, 10_150);
        // The whole cluster in the low partition still ranks below any job in high.
        assert_eq!(score(&c, &job(0, 100, 1000, 0)).priority, 2_000);
        assert_eq!(score(&c, &job(1, 1, 1, 0)).priority, 10_005);
    }

    #[test]
    fn missing_partition_counts_as_factor_zero() {
        let c = cluster();
        assert_eq!(score(&c, &job(7, 10, 100, 0)).priority, 100);
        let no_partition = JobShape {
            partition: None,
            ..job(0, 10, 100, 0)
        };
        assert_eq!(score(&c, &no_partition).priority, 100);
    }

    #[test]
    fn clamped_to_one_and_u32_max() {
        let c = cluster();
        assert_eq!(score(&c, &job(0, 10, 100, 5_000)).priority, 1);
        let huge = Config {
            weights: Weights {
                partition: u32::MAX,
                job_size: u32::MAX,
            },
            ..cluster()
        };
        assert_eq!(
            score(&huge, &job(1, 100, 1000, i32::MIN)).priority,
            u32::MAX
        );
    }
}
