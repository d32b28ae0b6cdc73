//! The plugin's configuration, read once at `init` (and again at
//! `reconfig`) from the host's `priority-config` into typed values.

/// slurm.conf option holding the weight of the partition factor.
pub const WEIGHT_PARTITION: &str = "PriorityWeightPartition";
/// slurm.conf option holding the weight of the job-size factor.
pub const WEIGHT_JOB_SIZE: &str = "PriorityWeightJobSize";
/// Weight used when slurm.conf does not set one. (Slurm's own default is 0,
/// which would switch this plugin off.)
pub const DEFAULT_WEIGHT: u32 = 1000;

/// Everything the priority rule reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Config {
    pub weights: Weights,
    /// The partition table, by partition index.
    pub partitions: Vec<Partition>,
    /// CPUs and nodes of the whole cluster (denominators of the job-size factor).
    pub cluster_cpus: u32,
    pub cluster_nodes: u32,
}

/// The two weights of the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights {
    pub partition: u32,
    pub job_size: u32,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            partition: DEFAULT_WEIGHT,
            job_size: DEFAULT_WEIGHT,
        }
    }
}

impl Weights {
    /// Reads the weights from slurm.conf options. Keys match without regard
    /// to case, as in slurm.conf; a missing key keeps [`DEFAULT_WEIGHT`].
    /// Fails, naming the option, on a value that is not an integer in
    /// `0..=4294967295`.
    pub fn from_options<'a>(
        options: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Weights, String> {
        let mut weights = Weights::default();
        for (key, value) in options {
            let slot = if key.eq_ignore_ascii_case(WEIGHT_PARTITION) {
                &mut weights.partition
            } else if key.eq_ignore_ascii_case(WEIGHT_JOB_SIZE) {
                &mut weights.job_size
            } else {
                continue;
            };
            *slot = value
                .trim()
                .parse()
                .map_err(|_| format!("{key}={value}: expected an integer weight"))?;
        }
        Ok(weights)
    }
}

/// One partition: its name (for `sprio` rows and filters) and `PriorityJobFactor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    pub job_factor: u16,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_default_and_parse_case_insensitively() {
        assert_eq!(
            Weights::from_options([]).unwrap(),
            Weights {
                partition: 1000,
                job_size: 1000
            }
        );
        let options = [
            ("priorityweightpartition", "5000"),
            ("PriorityWeightJobSize", " 20 "),
        ];
        assert_eq!(
            Weights::from_options(options).unwrap(),
            Weights {
                partition: 5000,
                job_size: 20
            }
        );
    }

    #[test]
    fn malformed_weight_names_the_option() {
        let err = Weights::from_options([("PriorityWeightJobSize", "-3")]).unwrap_err();
        assert_eq!(err, "PriorityWeightJobSize=-3: expected an integer weight");
    }
}
