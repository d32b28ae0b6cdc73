//! The scheduling settings of a simulation, read from the cluster's
//! `slurm.conf` the way slurmctld reads them.

use slurm::setup::records::Cluster;

/// Backfill settings (`SchedulerParameters=bf_*`), Slurm 22.05 defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backfill {
    /// `bf_interval`: seconds between backfill passes (default 30).
    pub interval: i64,
    /// `bf_window`: how far ahead reservations are made, in seconds
    /// (given in minutes, default 1440 = one day).
    pub window: i64,
    /// `bf_resolution`: reservation start times are rounded up to this
    /// many seconds (default 60).
    pub resolution: i64,
    /// `bf_max_job_test`: pending jobs one pass examines (default 500).
    pub max_job_test: usize,
}

impl Default for Backfill {
    fn default() -> Self {
        Backfill {
            interval: 30,
            window: 1440 * 60,
            resolution: 60,
            max_job_test: 500,
        }
    }
}

/// What the engine schedules with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedConfig {
    /// None with `SchedulerType=sched/builtin` (main pass only, strict
    /// priority order); `sched/backfill` (Slurm's default) otherwise.
    pub backfill: Option<Backfill>,
    /// `PriorityCalcPeriod` in seconds (given in minutes, default 5).
    pub calc_period: i64,
}

impl Default for SchedConfig {
    fn default() -> Self {
        SchedConfig {
            backfill: Some(Backfill::default()),
            calc_period: 300,
        }
    }
}

impl SchedConfig {
    /// Reads `SchedulerType`, `SchedulerParameters` (`bf_interval`,
    /// `bf_window`, `bf_resolution`, `bf_max_job_test`; other parameters are
    /// not modelled and ignored) and `PriorityCalcPeriod` (minutes).
    ///
    /// # Errors
    ///
    /// A message naming the option and the value when a value is not a
    /// positive number, or `SchedulerType` is neither `sched/backfill` nor
    /// `sched/builtin`.
    pub fn from_cluster(cluster: &Cluster) -> Result<SchedConfig, String> {
        let raw = |key: &str| {
            cluster
                .config
                .raw
                .iter()
                .rev()
                .find(|kv| kv.key.eq_ignore_ascii_case(key))
                .map(|kv| kv.value.trim().to_owned())
        };
        let mut config = SchedConfig::default();
        match raw("SchedulerType").as_deref() {
            None | Some("sched/backfill") => {}
            Some("sched/builtin") => config.backfill = None,
            Some(other) => {
                return Err(format!(
                    "SchedulerType={other}: the simulator models sched/backfill and sched/builtin"
                ))
            }
        }
        if let Some(value) = raw("PriorityCalcPeriod") {
            config.calc_period = positive("PriorityCalcPeriod", &value)? * 60;
        }
        if let Some(bf) = config.backfill.as_mut() {
            for param in &cluster.config.scheduler_parameters {
                let Some((key, value)) = param.split_once('=') else {
                    continue;
                };
                let option = format!("SchedulerParameters={key}");
                match key.trim() {
                    "bf_interval" => bf.interval = positive(&option, value)?,
                    "bf_window" => bf.window = positive(&option, value)? * 60,
                    "bf_resolution" => bf.resolution = positive(&option, value)?,
                    "bf_max_job_test" => {
                        bf.max_job_test = usize::try_from(positive(&option, value)?)
                            .map_err(|_| format!("{option}={value}: too large"))?
                    }
                    _ => {}
                }
            }
        }
        Ok(config)
    }
}

fn positive(option: &str, value: &str) -> Result<i64, String> {
    match value.trim().parse::<i64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{option}={value}: expected a positive whole number"
        )),
    }
}
