//! Usage accumulation and decay (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_decay_thread`).
//!
//! * `decay_factor = 1 - 0.693 / half_life` (Slurm's first-order
//!   approximation of `2^(-1/half_life)`), 1 for a half-life of 0;
//! * a cycle `Δ` seconds after the previous one multiplies every
//!   association's and every decaying QOS's usage by `df^Δ`
//!   ([`decay_usage`]);
//! * a running job charges, for the part of the period it ran
//!   (`run_delta` seconds), `billable x run_delta x df^run_delta` to its
//!   association and every ancestor up to the root, and to its QOS
//!   ([`charge_job`]).
//!
//! Slurm also charges a partition QOS; the contract has none, so only the
//! job's own QOS is charged.

use crate::job::JobView;
use crate::qos::QosTable;
use crate::tree::Tree;
use crate::usage::{release, Charge};

/// `1 - 0.693 / half_life_seconds`; 1 (no decay) when the half-life is 0.
pub fn decay_factor(half_life: u32) -> f64 {
    if half_life == 0 {
        1.0
    } else {
        1.0 - 0.693 / f64::from(half_life)
    }
}

/// `df^Δ`, floored at the smallest normal double (Slurm's `DBL_MIN`).
pub fn real_decay(decay_factor: f64, delta: i64) -> f64 {
    decay_factor.powf(delta as f64).max(f64::MIN_POSITIVE)
}

/// Multiplies the usage of every association (root included) and of every
/// QOS without NoDecay by `factor`.
pub fn decay_usage(tree: &mut Tree, qos: &mut QosTable, factor: f64) {
    for a in tree.iter_mut() {
        a.usage.scale(factor);
    }
    for q in qos.iter_mut().filter(|q| !q.spec.no_decay) {
        q.usage.scale(factor);
    }
}

/// PriorityUsageResetPeriod: clears the usage of every association and of
/// every QOS without NoDecay (Slurm documents that a NoDecay QOS is not
/// reset by PriorityUsageResetPeriod either).
pub fn reset_usage(tree: &mut Tree, qos: &mut QosTable) {
    for a in tree.iter_mut() {
        a.usage.clear();
    }
    for q in qos.iter_mut().filter(|q| !q.spec.no_decay) {
        q.usage.clear();
    }
}

/// The part of a job's run between `period_start` and `period_end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub start: i64,
    pub end: i64,
    /// The job ended: release everything it still holds in run-seconds
    /// (up to the end of its time limit), not only the part it ran.
    pub ending: bool,
}

/// Charges `job` for `period` (its start moved to the job's start time):
/// with `run_delta` the seconds it ran and `u` its QOS UsageFactor (1 when
/// unset or without QOS),
///
/// * the association and every ancestor get `usage_raw +=
///   billable x run_decay`, `grp_used_wall += run_decay` and per TRES
///   `alloc x run_decay`, where `run_decay = run_delta x df^run_delta x u`;
/// * the QOS gets the same, or the undecayed amounts (`run_delta x u`)
///   when it has NoDecay;
/// * the run-seconds consumed (`alloc x run_delta x u`, to the end of
///   the time limit when ending) are released from the association, its
///   ancestors and the QOS, clamping at 0.
///
/// Returns whether anything was charged: nothing is when the job has no
/// start time, its association is unknown, or the period is empty.
pub fn charge_job(
    tree: &mut Tree,
    qos: &mut QosTable,
    job: &JobView<'_>,
    period: Period,
    decay_factor: f64,
) -> bool {
    if job.start_time == 0 || tree.get(job.assoc_id).is_none() {
        return false;
    }
    let start = period.start.max(job.start_time);
    let run_delta = period.end - start;
    if run_delta <= 0 {
        return false;
    }
    let mut job_qos = job.qos.and_then(|name| qos.by_name_mut(name));
    let factor = job_qos.as_ref().map_or(1.0, |q| q.spec.charge_factor());
    let delta = run_delta as f64;
    let run_decay = delta * decay_factor.powf(delta) * factor;
    let per_tres = |seconds: f64| -> Vec<(String, f64)> {
        job.tres_allocated
            .iter()
            .map(|(name, count)| (name.to_ascii_lowercase(), *count as f64 * seconds))
            .collect()
    };
    let decayed = Charge {
        raw: job.billable * run_decay,
        wall: run_decay,
        tres: per_tres(run_decay),
    };
    let released_seconds = match (period.ending, job.time_limit) {
        (true, Some(limit)) => (job.start_time + i64::from(limit) * 60 - start).max(run_delta),
        _ => run_delta,
    };
    let released: Vec<(String, u64)> = job
        .tres_allocated
        .iter()
        .map(|(name, count)| {
            let secs = (*count as f64 * released_seconds as f64 * factor).round() as u64;
            (name.to_ascii_lowercase(), secs)
        })
        .collect();
    if let Some(q) = job_qos.as_mut() {
        if q.spec.no_decay {
            q.usage.add(&Charge {
                raw: job.billable * delta * factor,
                wall: delta * factor,
                tres: per_tres(delta * factor),
            });
        } else {
            q.usage.add(&decayed);
        }
        release(&mut q.run_secs, &released);
    }
    for id in tree.lineage(job.assoc_id) {
        let a = tree.get_mut(id).expect("in the lineage");
        a.usage.add(&decayed);
        release(&mut a.run_secs, &released);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SEVEN_DAYS;
    use crate::job::RunState;
    use crate::qos::{QosSpec, QosUpdate};
    use crate::tree::tests::assoc;
    use crate::tree::Shares;
    use crate::usage::TresSeconds;

    #[test]
    fn decay_factor_figures() {
        let df = decay_factor(SEVEN_DAYS);
        assert_eq!(format!("{df:.16}"), "0.9999988541666667");
        assert_eq!(format!("{:.8}", real_decay(df, 300)), "0.99965631");
        assert_eq!(format!("{:.8}", real_decay(df, 86_400)), "0.90574266");
        // A full half-life: Slurm's approximation, not exactly 0.5.
        assert_eq!(
            format!("{:.8}", real_decay(df, i64::from(SEVEN_DAYS))),
            "0.50007340"
        );
        // Ten half-lives: negligible.
        assert!(real_decay(df, 10 * i64::from(SEVEN_DAYS)) < 0.001);
        assert_eq!(decay_factor(0), 1.0);
        assert_eq!(
            real_decay(0.5, 100_000),
            f64::MIN_POSITIVE,
            "floored at DBL_MIN"
        );
    }

    fn job(assoc_id: u32, cpus: u64, start: i64) -> JobView<'static> {
        JobView {
            job_id: 1,
            user_id: 1000,
            account: None,
            assoc_id,
            partitions: &[],
            qos: Some("normal"),
            state: RunState::Running,
            priority: 1,
            direct_priority: false,
            site_factor: 0,
            nice: 0,
            time_limit: Some(60),
            start_time: start,
            end_time: start + 3600,
            submit_time: start,
            begin_time: start,
            accrue_time: start,
            min_nodes: 1,
            cpus: cpus as u32,
            tres: vec![("cpu", cpus)],
            tres_allocated: vec![("cpu", cpus), ("mem", 1000)],
            billable: cpus as f64,
        }
    }

    fn setup(no_decay: bool, usage_factor: f64) -> (Tree, QosTable) {
        let mut tree = Tree::default();
        tree.apply(
            vec![
                assoc(1, None, "root", None, Shares::Raw(1), 0.0),
                assoc(2, Some(1), "a", None, Shares::Raw(1), 0.0),
                assoc(3, Some(2), "a", Some("u"), Shares::Raw(1), 0.0),
            ],
            true,
        )
        .unwrap();
        let run_secs: TresSeconds = [("cpu".to_string(), 36_000)].into();
        for id in [1, 2, 3] {
            tree.get_mut(id).unwrap().run_secs = run_secs.clone();
        }
        let mut qos = QosTable::default();
        qos.apply(vec![QosUpdate::Upsert(
            QosSpec {
                id: 1,
                name: "normal".into(),
                priority: 0,
                usage_factor,
                no_decay,
            },
            run_secs,
        )])
        .unwrap();
        (tree, qos)
    }

    #[test]
    fn ten_cpus_for_one_period() {
        // Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_apply_new_usage` (run from `_decay_thread`): a 10-CPU job running a whole 300 s period with hl = 7 d
        // adds 10 x 300 x 0.99965631 = 2998.97 CPU-s, to its association and
        // every ancestor.
        let (mut tree, mut qos) = setup(false, 1.0);
        let df = decay_factor(SEVEN_DAYS);
        let period = Period {
            start: 1000,
            end: 1300,
            ending: false,
        };
        assert!(charge_job(
            &mut tree,
            &mut qos,
            &job(3, 10, 500),
            period,
            df
        ));
        for id in [3, 2, 1] {
            let u = &tree.get(id).unwrap().usage;
            assert_eq!(format!("{:.2}", u.raw), "2998.97");
            assert_eq!(
                format!("{:.4}", u.wall),
                format!("{:.4}", 300.0 * 0.99965631)
            );
            assert_eq!(format!("{:.0}", u.tres["mem"]), "299897");
            assert_eq!(tree.get(id).unwrap().run_secs["cpu"], 36_000 - 3000);
        }
        assert_eq!(
            format!("{:.2}", qos.by_name("normal").unwrap().usage.raw),
            "2998.97"
        );
        assert_eq!(qos.by_name("normal").unwrap().run_secs["cpu"], 33_000);
    }

    #[test]
    fn period_starts_at_the_job_start_and_empty_periods_charge_nothing() {
        let (mut tree, mut qos) = setup(false, 1.0);
        let period = Period {
            start: 1000,
            end: 1300,
            ending: false,
        };
        assert!(charge_job(
            &mut tree,
            &mut qos,
            &job(3, 1, 1200),
            period,
            1.0
        ));
        assert_eq!(tree.get(3).unwrap().usage.raw, 100.0);
        assert!(!charge_job(
            &mut tree,
            &mut qos,
            &job(3, 1, 1300),
            period,
            1.0
        ));
        assert!(!charge_job(&mut tree, &mut qos, &job(3, 1, 0), period, 1.0));
        assert!(!charge_job(
            &mut tree,
            &mut qos,
            &job(42, 1, 1000),
            period,
            1.0
        ));
    }

    #[test]
    fn usage_factor_and_no_decay_qos() {
        let (mut tree, mut qos) = setup(true, 2.0);
        let df = decay_factor(SEVEN_DAYS);
        let period = Period {
            start: 0,
            end: 300,
            ending: false,
        };
        assert!(charge_job(&mut tree, &mut qos, &job(3, 10, 1), period, df));
        let decayed = 10.0 * 299.0 * df.powf(299.0) * 2.0;
        assert!((tree.get(3).unwrap().usage.raw - decayed).abs() < 1e-9);
        let q = qos.by_name("normal").unwrap();
        assert_eq!(q.usage.raw, 10.0 * 299.0 * 2.0, "NoDecay: undecayed");
        assert_eq!(q.run_secs["cpu"], 36_000 - 5980);
        decay_usage(&mut tree, &mut qos, 0.5);
        assert_eq!(qos.by_name("normal").unwrap().usage.raw, 5980.0);
        assert!((tree.get(1).unwrap().usage.raw - decayed * 0.5).abs() < 1e-9);
        reset_usage(&mut tree, &mut qos);
        assert_eq!(tree.get(1).unwrap().usage.raw, 0.0);
        assert_eq!(
            qos.by_name("normal").unwrap().usage.raw,
            5980.0,
            "NoDecay is not reset"
        );
    }

    #[test]
    fn ending_releases_the_rest_of_the_time_limit() {
        let (mut tree, mut qos) = setup(false, 1.0);
        // 60-minute limit, started at 1000, ends at 1600 after being charged
        // up to 1300: 300 s more are charged, the remaining 3300 s of the
        // limit are released.
        let period = Period {
            start: 1300,
            end: 1600,
            ending: true,
        };
        assert!(charge_job(
            &mut tree,
            &mut qos,
            &job(3, 10, 1000),
            period,
            1.0
        ));
        assert_eq!(tree.get(3).unwrap().usage.raw, 3000.0);
        assert_eq!(tree.get(3).unwrap().run_secs["cpu"], 36_000 - 33_000);
    }
}
