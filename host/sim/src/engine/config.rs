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
    /// `bf_min_age_reserve`: seconds a job must have been pending and
    /// eligible before a pass plans it (`_attempt_backfill`, backfill.c
    /// 2050-2055) and before, failing to start, it blocks its partition in
    /// the main pass (`schedule`, job_scheduler.c 1955-1966); a younger job
    /// may still start now (0: off, the default; at most 30 days).
    pub min_age_reserve: i64,
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
            min_age_reserve: 0,
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
    /// `bf_window_linear` is checked (a positive number) and, like
    /// `bf_busy_nodes`, not kept: Slurm's sched/backfill never reads them,
    /// the select plugin does (see `MODELLED_PARAMETERS`), and it is
    /// given them with the rest of slurm.conf.
    ///
    /// # Errors
    ///
    /// A message naming the option and the value when a value is not a
    /// positive number (`bf_min_age_reserve`: not a whole number of seconds
    /// from 0 to 30 days), or `SchedulerType` is neither `sched/backfill`
    /// nor `sched/builtin`.
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
                    "bf_min_age_reserve" => {
                        bf.min_age_reserve =
                            within(&option, value, 0, MAX_MIN_AGE_RESERVE, "seconds")?
                    }
                    // Read by the select plugin (`select_p_node_init`,
                    // cons_common.c 1113-1122), which 22.05 lets fall back
                    // to doubling windows, with an error, when not positive.
                    "bf_window_linear" => {
                        positive(&option, value)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(config)
    }
}

/// The largest `bf_min_age_reserve` Slurm takes, 30 days
/// (`MAX_BF_MIN_AGE_RESERVE`, backfill.c 118).
const MAX_MIN_AGE_RESERVE: i64 = 30 * 24 * 60 * 60;

/// The `SchedulerParameters` the simulator models: those
/// [`SchedConfig::from_cluster`] reads, and two the select plugin reads.
const MODELLED_PARAMETERS: [&str; 13] = [
    "bf_interval",
    "bf_window",
    "bf_resolution",
    "bf_max_job_test",
    "bf_max_job_user",
    "bf_max_job_part",
    "bf_max_job_start",
    "bf_min_prio_reserve",
    "bf_job_part_count_reserve",
    "bf_min_age_reserve",
    // A pass here takes no time, so there is nothing to continue.
    "bf_continue",
    // Slurm 22.05's sched/backfill never reads these two: select/cons_res
    // and cons_tres do (`select_p_node_init`, cons_common.c 1113-1135),
    // and act on them in their WILL_RUN test (`_will_run_test`,
    // cons_common/job_test.c 2036-2042: the window grows by
    // `bf_window_linear` seconds between batches of released jobs instead
    // of doubling; 2043-2048: the tests after a release prefer the nodes
    // running jobs now, `prefer_alloc_nodes`). The select plugin is
    // initialised with slurm.conf's `SchedulerParameters` (the contract's
    // `cluster-config`), and the bundled cons_tres acts on them as 22.05
    // does; select/linear ignores them, as Slurm's does.
    "bf_window_linear",
    "bf_busy_nodes",
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

/// `value` as a whole number from `min` to `max` (`unit` names it).
fn within(option: &str, value: &str, min: i64, max: i64, unit: &str) -> Result<i64, String> {
    match value.trim().parse::<i64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "{option}={value}: expected a whole number of {unit} from {min} to {max}"
        )),
    }
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
