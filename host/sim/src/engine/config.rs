//! The scheduling settings of a simulation, read from the cluster's
//! `slurm.conf` the way slurmctld reads them.

use slurm::setup::records::Cluster;

/// Which backfilling the pass does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    /// Slurm's sched/backfill, with its parameters.
    #[default]
    Slurm,
    /// EASY backfilling (Lifka's, as Batsim's reference schedulers do it):
    /// at every event, only the first job that cannot start now is planned;
    /// a later job starts now if it delays no plan.
    Easy,
    /// Conservative backfilling: at every event every waiting job is
    /// planned at its earliest start that delays no earlier plan.
    Conservative,
}

/// Backfill settings (`SchedulerParameters=bf_*`), Slurm 22.05 defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backfill {
    /// Slurm's pass, or a pure EASY or conservative one.
    pub style: Style,
    /// `bf_interval`: seconds between backfill passes (default 30).
    pub interval: i64,
    /// `bf_window`: how far ahead reservations are made, in seconds
    /// (given in minutes, default 1440 = one day).
    pub window: i64,
    /// `bf_resolution`: plan times are rounded down to a multiple of this
    /// many seconds (default 60).
    pub resolution: i64,
    /// `bf_max_job_test`: jobs one pass tries, counting those it tested
    /// (default 500).
    pub max_job_test: usize,
    /// `bf_max_job_user`: jobs of one user a pass considers (0: no limit).
    pub max_job_user: usize,
    /// `bf_max_job_part`: jobs of one partition a pass considers (0: no
    /// limit).
    pub max_job_part: usize,
    /// `bf_max_job_start`: jobs one pass starts (0: no limit).
    pub max_job_start: usize,
    /// `bf_min_prio_reserve`: jobs of a lower priority may start now but
    /// are never planned (0: every job is planned).
    pub min_prio_reserve: u32,
    /// `bf_job_part_count_reserve`: jobs of one partition a pass plans;
    /// later ones may start now but are never planned (0: no limit).
    pub job_part_count_reserve: usize,
}

impl Default for Backfill {
    fn default() -> Self {
        Backfill {
            style: Style::Slurm,
            interval: 30,
            window: 1440 * 60,
            resolution: 60,
            max_job_test: 500,
            max_job_user: 0,
            max_job_part: 0,
            max_job_start: 0,
            min_prio_reserve: 0,
            job_part_count_reserve: 0,
        }
    }
}

impl Backfill {
    /// A pure EASY or conservative pass ([`Style`]): at every event, plans
    /// to the second, no window, every waiting job considered, no limit.
    pub fn pure(style: Style) -> Self {
        Backfill {
            style,
            interval: 0,
            window: i64::MAX / 4,
            resolution: 1,
            max_job_test: usize::MAX,
            ..Backfill::default()
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
    /// Reads `SchedulerType`, `SchedulerParameters` (the `bf_*` parameters
    /// of [`Backfill`]; [`unmodelled`] lists the others) and
    /// `PriorityCalcPeriod` (minutes).
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
                    "bf_max_job_test" => bf.max_job_test = count(&option, value)?,
                    "bf_max_job_user" => bf.max_job_user = count(&option, value)?,
                    "bf_max_job_part" => bf.max_job_part = count(&option, value)?,
                    "bf_max_job_start" => bf.max_job_start = count(&option, value)?,
                    "bf_min_prio_reserve" => {
                        bf.min_prio_reserve = u32::try_from(positive(&option, value)?)
                            .map_err(|_| format!("{option}={value}: too large"))?
                    }
                    "bf_job_part_count_reserve" => {
                        bf.job_part_count_reserve = count(&option, value)?
                    }
                    _ => {}
                }
            }
        }
        Ok(config)
    }
}

/// The `SchedulerParameters` the simulator reads ([`SchedConfig::from_cluster`]).
const MODELLED_PARAMETERS: [&str; 10] = [
    "bf_interval",
    "bf_window",
    "bf_resolution",
    "bf_max_job_test",
    "bf_max_job_user",
    "bf_max_job_part",
    "bf_max_job_start",
    "bf_min_prio_reserve",
    "bf_job_part_count_reserve",
    // A pass here takes no time, so there is nothing to continue.
    "bf_continue",
];

/// `slurm.conf` keys that change what slurmctld schedules and the
/// simulator does not model, with the values that leave nothing to model.
const UNMODELLED_KEYS: [(&str, &[&str]); 7] = [
    ("PreemptType", &["preempt/none"]),
    ("Licenses", &[]),
    ("TopologyPlugin", &["topology/none", "default"]),
    ("JobSubmitPlugins", &[]),
    ("SchedulerTimeSlice", &[]),
    ("AccountingStorageEnforce", &["0", "none"]),
    ("DependencyParameters", &[]),
];

/// What the simulator reads from `cluster`'s `slurm.conf` and does not
/// model, one note each, for the run's notes (every output lists them):
/// each `SchedulerParameters` entry other than the modelled `bf_*` ones,
/// and each set key of [`UNMODELLED_KEYS`] whose value is not one that
/// leaves nothing to model.
pub fn unmodelled(cluster: &Cluster) -> Vec<String> {
    let mut notes = Vec::new();
    let backfill = SchedConfig::from_cluster(cluster)
        .map(|c| c.backfill.is_some())
        .unwrap_or(true);
    for param in &cluster.config.scheduler_parameters {
        let key = param
            .split_once('=')
            .map_or(param.as_str(), |(k, _)| k)
            .trim();
        if key.is_empty() || (backfill && MODELLED_PARAMETERS.contains(&key)) {
            continue;
        }
        notes.push(format!(
            "SchedulerParameters={param}: not modelled by the simulator (ignored)"
        ));
    }
    for (key, neutral) in UNMODELLED_KEYS {
        let value = cluster
            .config
            .raw
            .iter()
            .rev()
            .find(|kv| kv.key.eq_ignore_ascii_case(key))
            .map(|kv| kv.value.trim());
        if let Some(value) = value.filter(|v| !neutral.iter().any(|n| n.eq_ignore_ascii_case(v))) {
            notes.push(format!(
                "{key}={value}: not modelled by the simulator (ignored)"
            ));
        }
    }
    notes
}

fn count(option: &str, value: &str) -> Result<usize, String> {
    usize::try_from(positive(option, value)?).map_err(|_| format!("{option}={value}: too large"))
}

fn positive(option: &str, value: &str) -> Result<i64, String> {
    match value.trim().parse::<i64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "{option}={value}: expected a positive whole number"
        )),
    }
}
