//! The `priority-plugin` world export of priority/multifactor: converts the
//! contract's records to and from [`Multifactor`], with the time from the
//! host's clock (virtual time in simulations).

use std::collections::BTreeMap;

use slurm_wasm_sdk::priority::{
    AssociationUpdate, AssociationUsage, FactorsRequest, Plugin, PriorityConfig, PriorityFactors,
    QosUpdate,
};
use slurm_wasm_sdk::types::{Association, Job, JobState, Qos, Shares as WitShares, TresAmount};
use slurm_wasm_sdk::{host, Error};

use crate::config::{Config, Flags};
use crate::factors::PartitionInfo;
use crate::instance::{Cluster, Multifactor, Report};
use crate::job::{JobView, RunState};
use crate::qos::{QosSpec, QosUpdate as Change};
use crate::sprio::{Filter, Row};
use crate::tree::{AssocSpec, NewAssoc, Shares, Update};
use crate::usage::{TresSeconds, Usage};

/// Reads the settings (`EINVAL` naming a malformed key) and the cluster,
/// logging what Slurm logs: age and fair-share weights dropped without
/// slurmdbd, TRES weights naming a TRES the cluster does not have.
fn load(config: &PriorityConfig) -> Result<(Config, Cluster), Error> {
    let settings = Config::from_options(
        config
            .cluster
            .raw
            .iter()
            .map(|kv| (kv.key.as_str(), kv.value.as_str())),
    )?;
    if settings.weights_dropped {
        slurm_wasm_sdk::error!(
            "priority/multifactor: AccountingStorageType is not accounting_storage/slurmdbd: \
             PriorityWeightAge and PriorityWeightFairshare are set to 0"
        );
    }
    if !config.cluster_tres.is_empty() {
        for (name, _) in &settings.tres_weights {
            if !config
                .cluster_tres
                .iter()
                .any(|t| t.name.eq_ignore_ascii_case(name))
            {
                slurm_wasm_sdk::warn!(
                    "priority/multifactor: PriorityWeightTRES names {name}, which the cluster does not have"
                );
            }
        }
    }
    let partitions = config
        .partitions
        .iter()
        .enumerate()
        .map(|(i, p)| PartitionInfo {
            name: p.name.clone(),
            job_factor: p.priority_job_factor,
            max_time: p.max_time,
            tres: config
                .partition_tres
                .get(i)
                .map(|list| {
                    list.iter()
                        .map(|t| (t.name.to_ascii_lowercase(), t.count))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    let cluster = Cluster {
        partitions,
        cpus: config.cluster_cpus,
        nodes: config.cluster_nodes,
    };
    Ok((settings, cluster))
}

fn tres_list(list: &[TresAmount]) -> Vec<(&str, u64)> {
    list.iter().map(|t| (t.name.as_str(), t.count)).collect()
}

fn run_secs(list: &[TresAmount]) -> TresSeconds {
    list.iter()
        .map(|t| (t.name.to_ascii_lowercase(), t.count))
        .collect()
}

/// What the plugin reads of a job. Billable TRES come from the allocation
/// (`resources.ncpus`, else allocated `cpu`). The CPU count of the job size
/// factor is Slurm's: the controller's `total-cpus` when it has one, else
/// the allocation, else the maximum, else the minimum request.
fn view(job: &Job) -> JobView<'_> {
    let allocated = tres_list(&job.tres_allocated);
    let allocated_cpus = job
        .resources
        .as_ref()
        .map(|r| r.ncpus)
        .filter(|&n| n > 0)
        .or_else(|| {
            allocated
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("cpu"))
                .map(|(_, c)| u32::try_from(*c).unwrap_or(u32::MAX))
        });
    let d = &job.details;
    JobView {
        job_id: job.job_id,
        user_id: job.user_id,
        account: job.account.as_deref(),
        assoc_id: job.assoc_id,
        partitions: &job.partitions,
        qos: job.qos.as_deref(),
        state: match job.state {
            JobState::Pending => RunState::Pending,
            JobState::Running => RunState::Running,
            JobState::Suspended => RunState::Suspended,
            _ => RunState::Finished,
        },
        priority: job.priority,
        direct_priority: job.direct_set_priority,
        site_factor: job.site_factor,
        nice: d.nice,
        time_limit: job.time_limit,
        start_time: job.start_time,
        end_time: job.end_time,
        submit_time: d.submit_time,
        begin_time: d.begin_time,
        accrue_time: d.accrue_time,
        min_nodes: d.min_nodes,
        cpus: job
            .total_cpus
            .filter(|&n| n > 0)
            .or(allocated_cpus)
            .or(d.max_cpus)
            .unwrap_or(d.min_cpus),
        tres: if allocated.is_empty() {
            tres_list(&job.tres_requested)
        } else {
            allocated.clone()
        },
        tres_allocated: allocated,
        billable: job
            .billable_tres
            .unwrap_or_else(|| f64::from(allocated_cpus.unwrap_or(0))),
    }
}

/// The contract's association update as the tree takes it.
fn tree_update(update: AssociationUpdate) -> Update {
    match update {
        AssociationUpdate::Upsert(a) => Update::Upsert(new_assoc(a)),
        AssociationUpdate::Remove(id) => Update::Remove(id),
    }
}

/// An association record as a tree update. The contract carries no
/// `grp_used_wall`: a new association starts with none.
fn new_assoc(a: Association) -> NewAssoc {
    let usage = Usage {
        raw: a.usage_raw,
        tres: a
            .usage_tres_raw
            .iter()
            .map(|t| (t.name.to_ascii_lowercase(), t.usage))
            .collect(),
        wall: 0.0,
    };
    NewAssoc {
        run_secs: run_secs(&a.grp_used_tres_run_secs),
        spec: AssocSpec {
            id: a.id,
            parent: a.parent_id,
            account: a.account,
            user: a.user,
            user_id: a.user_id,
            partition: a.partition,
            shares: match a.shares {
                WitShares::Raw(n) => Shares::Raw(n),
                WitShares::Parent => Shares::Parent,
            },
            priority: a.priority,
        },
        usage,
    }
}

fn qos_change(q: Qos) -> Change {
    Change::Upsert(
        QosSpec {
            id: q.id,
            name: q.name,
            priority: q.priority,
            usage_factor: q.usage_factor,
            no_decay: q.no_decay,
        },
        run_secs(&q.grp_used_tres_run_secs),
    )
}

fn usage(r: Report) -> AssociationUsage {
    AssociationUsage {
        id: r.id,
        usage_raw: r.usage_raw,
        usage_norm: r.usage_norm,
        usage_effective: r.usage_effective,
        shares_norm: r.shares_norm,
        fair_share: r.fair_share,
        level_fs: r.level_fs,
    }
}

fn factors(row: Row, tres_names: &[(String, f64)]) -> PriorityFactors {
    let w = row.weighted;
    PriorityFactors {
        job_id: row.job_id,
        user_id: row.user_id,
        account: row.account,
        partition: row.partition,
        qos: row.qos,
        direct_priority: row.direct,
        age: w.age,
        association: w.assoc,
        fair_share: w.fair_share,
        job_size: w.job_size,
        partition_factor: w.partition,
        qos_factor: w.qos,
        tres: tres_names
            .iter()
            .zip(w.tres)
            .map(|((name, _), v)| (name.clone(), v))
            .collect(),
        site: row.site,
        nice: row.nice,
        priority: row.priority,
    }
}

/// The instance `init` makes of `config` (see [`Plugin::init`]);
/// `EINVAL` naming the key when a setting is malformed.
pub fn instance_from(config: &PriorityConfig) -> Result<Multifactor, Error> {
    let (settings, cluster) = load(config)?;
    Ok(Multifactor::new(settings, cluster))
}

/// `set` (see [`Plugin::set`]) on `m` at `now`: the job's priority,
/// with the job kept in `kept` (pending jobs by id) for
/// [`calculate_kept`].
fn set_kept(
    m: &mut Multifactor,
    kept: &mut BTreeMap<u32, Job>,
    mut job: Job,
    now: i64,
) -> Result<u32, Error> {
    let priority = m.set(&view(&job), now)?;
    job.priority = priority;
    kept.insert(job.job_id, job);
    Ok(priority)
}

/// `calculate` (see [`Plugin::calculate`]) on `m` at `now`, with
/// the pending jobs found by id in `kept` (`EINVAL` for an id that is
/// not there); the new priorities are written back into `kept`.
fn calculate_kept(
    m: &mut Multifactor,
    kept: &mut BTreeMap<u32, Job>,
    running: &[Job],
    pending: &[u32],
    now: i64,
) -> Result<Vec<(u32, u32)>, Error> {
    let out = {
        let pending = pending
            .iter()
            .map(|id| {
                kept.get(id).map(view).ok_or_else(|| {
                    Error::invalid(format!("calculate: job {id} was never given to set"))
                })
            })
            .collect::<Result<Vec<JobView<'_>>, Error>>()?;
        let running: Vec<JobView<'_>> = running.iter().map(view).collect();
        m.calculate(&running, &pending, now)?
    };
    for (id, priority) in &out {
        if let Some(job) = kept.get_mut(id) {
            job.priority = *priority;
        }
    }
    Ok(out)
}

/// `job-end` (see [`Plugin::job_end`]) on `m` at `now`; the job
/// leaves `kept`.
fn job_end_kept(m: &mut Multifactor, kept: &mut BTreeMap<u32, Job>, job: &Job, now: i64) {
    m.job_end(&view(job), now);
    kept.remove(&job.job_id);
}

/// priority/multifactor, exported as a component: the instance and the
/// pending jobs as last given to `set`, by id, each with the priority `set`
/// or the last `calculate` gave it (INCR_ONLY compares against it).
/// `calculate` names pending jobs by id and finds them here; `job-end`
/// forgets them.
pub struct PriorityMultifactor {
    m: Multifactor,
    kept: BTreeMap<u32, Job>,
}

impl Plugin for PriorityMultifactor {
    const TYPE: &'static str = "priority/multifactor";
    const NAME: &'static str = "Priority MULTIFACTOR plugin";

    /// Reads the Priority* settings from `cluster.raw` and starts with an
    /// empty association tree and QOS table. `EINVAL` naming the key when a
    /// value is malformed (the previous instance is kept).
    fn init(config: PriorityConfig) -> Result<Self, Error> {
        Ok(PriorityMultifactor {
            m: instance_from(&config)?,
            kept: BTreeMap::new(),
        })
    }

    /// The formula of Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal` in the job's first partition, at the host's
    /// `now` (a directly set priority is kept: by the instance, and by the
    /// SDK's adapter). `last-prio` is not used (multifactor does not need
    /// it). `EINVAL` when the job names a partition outside the table. The
    /// job is kept, with its new priority, for `calculate`.
    fn set(&mut self, _last_prio: u32, job: &Job) -> Result<u32, Error> {
        set_kept(&mut self.m, &mut self.kept, job.clone(), host::now())
    }

    /// New settings (see [`Multifactor::reconfigure`]); `EINVAL` naming the
    /// key when one is malformed, keeping the previous settings.
    fn reconfig(
        &mut self,
        config: PriorityConfig,
        assoc_clear: bool,
        running: &[Job],
    ) -> Result<(), Error> {
        let (settings, cluster) = load(&config)?;
        let running: Vec<JobView<'_>> = running.iter().map(view).collect();
        self.m
            .reconfigure(settings, cluster, assoc_clear, &running, host::now());
        Ok(())
    }

    /// Recomputes and returns an association's usage figures; `EINVAL` for
    /// an unknown association.
    fn set_assoc_usage(&mut self, assoc_id: u32) -> Result<AssociationUsage, Error> {
        self.m.set_assoc_usage(assoc_id).map(usage)
    }

    /// The `sprio` rows (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_get_priority_factors_list`) of `jobs`: those eligible at the host's
    /// `now`, with the factors their last computation (`set`, `calculate`)
    /// stored, as Slurm's sprio shows `job_ptr->prio_factors` (see
    /// [`Multifactor::factors_list`]). Every job is visible to every `uid`
    /// (the contract has no PrivateData).
    fn get_priority_factors_list(
        &mut self,
        jobs: &[Job],
        request: &FactorsRequest,
        _uid: u32,
    ) -> Result<Vec<PriorityFactors>, Error> {
        let views: Vec<JobView<'_>> = jobs.iter().map(view).collect();
        let filter = Filter {
            job_ids: &request.job_ids,
            user_ids: &request.user_ids,
            partitions: &request.partitions,
        };
        let rows = self.m.factors_list(&views, &filter, host::now())?;
        let names = &self.m.config().tres_weights;
        Ok(rows.into_iter().map(|r| factors(r, names)).collect())
    }

    /// Charges the job's last stretch of usage, once (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_job_end`,
    /// through `_apply_new_usage`).
    fn job_end(&mut self, job: &Job) -> Result<(), Error> {
        job_end_kept(&mut self.m, &mut self.kept, job, host::now());
        Ok(())
    }

    /// Multifactor returns no boost. Without slurmdbd it recomputes the
    /// priority of every job that is not held and has no explicit priority
    /// (pending, or running with CALCULATE_RUNNING); with slurmdbd the next
    /// decay cycle does that, and the list is empty.
    fn recover(&mut self, _boost: u32, jobs: &[Job]) -> Result<(u32, Vec<(u32, u32)>), Error> {
        if self.m.config().with_slurmdbd {
            return Ok((0, Vec::new()));
        }
        let now = host::now();
        let calc_running = self.m.config().flags.contains(Flags::CALCULATE_RUNNING);
        let mut out = Vec::new();
        for job in jobs.iter().map(view) {
            let listed = job.state == RunState::Pending || (calc_running && job.state.is_active());
            if listed && job.priority != 0 && !job.direct_priority {
                out.push((job.job_id, self.m.set(&job, now)?));
            }
        }
        Ok((0, out))
    }

    /// Incremental tree changes, all or nothing (see [`crate::tree`]).
    fn update_associations(&mut self, updates: Vec<AssociationUpdate>) -> Result<(), Error> {
        self.m
            .update_associations(updates.into_iter().map(tree_update).collect())
    }

    /// Incremental QOS changes, all or nothing (see [`crate::qos`]).
    fn update_qos(&mut self, updates: Vec<QosUpdate>) -> Result<(), Error> {
        let updates = updates
            .into_iter()
            .map(|u| match u {
                QosUpdate::Upsert(q) => qos_change(q),
                QosUpdate::Remove(id) => Change::Remove(id),
            })
            .collect();
        self.m.update_qos(updates)
    }

    /// One decay cycle at the host's `now` (see [`Multifactor::calculate`]);
    /// the host calls it every PriorityCalcPeriod, as Slurm's decay thread
    /// runs. `pending` names jobs kept from `set` (`EINVAL` for an id that
    /// never was); the new priorities are kept for INCR_ONLY.
    fn calculate(&mut self, running: &[Job], pending: &[u32]) -> Result<Vec<(u32, u32)>, Error> {
        calculate_kept(&mut self.m, &mut self.kept, running, pending, host::now())
    }

    /// Every association's usage figures, parents first.
    fn association_usages(&mut self) -> Result<Vec<AssociationUsage>, Error> {
        Ok(self.m.association_usages().into_iter().map(usage).collect())
    }

    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        Ok(self.m.save())
    }

    /// Replaces the state only when the whole blob reads; `EINVAL` saying
    /// what is wrong otherwise.
    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        self.m.restore(data)
    }
}

slurm_wasm_sdk::export_priority!(plugin PriorityMultifactor);

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use slurm_wasm_sdk::testkit::{self, fixtures};
    use slurm_wasm_sdk::types::KeyValue;

    use super::*;
    use slurm_wasm_sdk::priority::{Export, IdentityGuest, PriorityGuest};

    /// The adapter the component exports: the tests go through the export
    /// layer.
    type P = Export<PriorityMultifactor>;

    /// The instance is process-wide and tests run on several threads.
    static SERIAL: Mutex<()> = Mutex::new(());

    const NOW: i64 = 1_700_000_000;

    fn options(pairs: &[(&str, &str)]) -> PriorityConfig {
        let mut cluster = fixtures::cluster_config();
        cluster.raw = pairs
            .iter()
            .map(|(k, v)| KeyValue {
                key: (*k).into(),
                value: (*v).into(),
            })
            .collect();
        PriorityConfig {
            cluster,
            partitions: vec![fixtures::partition(0, "debug", 100)],
            partition_tres: vec![vec![TresAmount {
                name: "cpu".into(),
                count: 1000,
            }]],
            cluster_cpus: 1000,
            cluster_nodes: 100,
            cluster_tres: vec![TresAmount {
                name: "cpu".into(),
                count: 1000,
            }],
        }
    }

    /// The weights of the hand-computed case of Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`
    /// (factors.rs `vector_job`), classic fair-share.
    const VECTOR_WEIGHTS: &[(&str, &str)] = &[
        ("AccountingStorageType", "accounting_storage/slurmdbd"),
        ("PriorityFlags", "NO_FAIR_TREE"),
        ("PriorityWeightAge", "1000"),
        ("PriorityMaxAge", "7-0"),
        ("PriorityWeightFairshare", "10000"),
        ("PriorityWeightJobSize", "1000"),
        ("PriorityWeightPartition", "1000"),
        ("PriorityWeightQOS", "2000"),
        ("PriorityWeightTRES", "CPU=2000"),
    ];

    /// The Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage` tree (test24.1) as contract records.
    fn classic_tree() -> Vec<AssociationUpdate> {
        let mut out = vec![fixtures::association(1, None, "root", None, 1)];
        for (id, parent, name, shares) in [
            (2, 1, "AccountA", 40),
            (3, 2, "AccountB", 30),
            (4, 2, "AccountC", 10),
            (5, 1, "AccountD", 60),
            (6, 5, "AccountE", 25),
            (7, 5, "AccountF", 35),
            (8, 1, "AccountG", 0),
        ] {
            out.push(fixtures::association(id, Some(parent), name, None, shares));
        }
        for (id, parent, account, user, shares, usage) in [
            (11, 3, "AccountB", "User1", 1, 20.0),
            (12, 4, "AccountC", "User2", 1, 25.0),
            (13, 4, "AccountC", "User3", 1, 0.0),
            (14, 6, "AccountE", "User4", 1, 25.0),
            (15, 7, "AccountF", "User5", 1, 0.0),
            (16, 8, "AccountG", "User6", 0, 30.0),
        ] {
            let mut a = fixtures::association(id, Some(parent), account, Some(user), shares);
            a.usage_raw = usage;
            out.push(a);
        }
        out.into_iter().map(AssociationUpdate::Upsert).collect()
    }

    fn setup(pairs: &[(&str, &str)]) {
        testkit::reset();
        testkit::with(|h| h.now = NOW);
        P::init(options(pairs)).unwrap();
        P::update_qos(vec![
            QosUpdate::Upsert(fixtures::qos(1, "normal", 50)),
            QosUpdate::Upsert(fixtures::qos(2, "high", 100)),
        ])
        .unwrap();
        P::update_associations(classic_tree()).unwrap();
    }

    /// The job of the hand-computed case of Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`
    /// (factors.rs `vector_job`): eligible a day ago, 10 nodes, 100 CPUs, QOS priority
    /// 50 of 100, in User4's association (fair-share 0.5).
    fn vector_job() -> Job {
        let mut job = fixtures::job(1);
        job.assoc_id = 14;
        job.qos = Some("normal".into());
        job.priority = 1;
        job.details.min_nodes = 10;
        job.details.min_cpus = 100;
        job.details.submit_time = NOW - 86_400;
        job.details.begin_time = NOW - 86_400;
        job.details.accrue_time = NOW - 86_400;
        job.tres_requested = vec![TresAmount {
            name: "cpu".into(),
            count: 100,
        }];
        job
    }

    #[test]
    fn identity_is_slurms() {
        let id = P::describe();
        assert_eq!(id.plugin_type, "priority/multifactor");
        assert_eq!(id.plugin_name, "Priority MULTIFACTOR plugin");
    }

    #[test]
    fn synthetic_vector_through_the_export_layer() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        setup(VECTOR_WEIGHTS);
        assert_eq!(P::set(0, vector_job()).unwrap(), 7442);
        let request = FactorsRequest {
            job_ids: vec![],
            user_ids: vec![],
            partitions: vec![],
        };
        let rows = P::get_priority_factors_list(vec![vector_job()], request, 0).unwrap();
        let r = &rows[0];
        assert_eq!(format!("{:.3}", r.age), "142.857");
        assert_eq!(
            (r.fair_share, r.job_size, r.partition_factor, r.qos_factor),
            (5000.0, 100.0, 1000.0, 1000.0)
        );
        assert_eq!(r.tres, vec![("cpu".to_string(), 200.0)]);
        assert_eq!((r.partition.as_str(), r.priority), ("debug", 7442));
        // Without slurmdbd, age and fair-share weigh nothing (and it is logged).
        setup(&VECTOR_WEIGHTS[1..]);
        assert_eq!(P::set(0, vector_job()).unwrap(), 2300);
        assert!(testkit::with(|h| h.logs.iter().any(
            |(_, m)| m.contains("PriorityWeightFairshare are set to 0")
        )));
    }

    #[test]
    fn classic_vector_through_the_export_layer() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        setup(VECTOR_WEIGHTS);
        let usages = P::association_usages().unwrap();
        let line = |id: u32| {
            let u = usages.iter().find(|u| u.id == id).unwrap();
            format!(
                "{:.6}|{}|{:.6}|{:.6}|{:.6}",
                u.shares_norm, u.usage_raw, u.usage_norm, u.usage_effective, u.fair_share
            )
        };
        assert_eq!(line(11), "0.300000|20|0.200000|0.387500|0.408479");
        assert_eq!(line(12), "0.050000|25|0.250000|0.275000|0.022097");
        assert_eq!(line(13), "0.050000|0|0.000000|0.150000|0.125000");
        assert_eq!(line(14), "0.250000|25|0.250000|0.250000|0.500000");
        assert_eq!(line(15), "0.350000|0|0.000000|0.145833|0.749154");
        assert_eq!(line(16), "0.000000|30|0.300000|0.300000|0.000000");
    }

    #[test]
    fn decay_follows_the_host_clock() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        setup(VECTOR_WEIGHTS);
        P::calculate(vec![], vec![]).unwrap();
        testkit::with(|h| h.now = NOW + 7 * 86_400);
        P::calculate(vec![], vec![]).unwrap();
        let root = P::set_assoc_usage(1).unwrap();
        assert_eq!(format!("{:.8}", root.usage_raw / 100.0), "0.50007340");
    }

    #[test]
    fn running_job_usage_is_charged_once_at_its_end() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        setup(VECTOR_WEIGHTS);
        let mut job = vector_job();
        job.job_id = 5;
        job.state = JobState::Running;
        job.start_time = NOW;
        job.end_time = NOW + 100;
        job.tres_allocated = vec![TresAmount {
            name: "cpu".into(),
            count: 10,
        }];
        P::calculate(vec![job.clone()], vec![]).unwrap();
        testkit::with(|h| h.now = NOW + 500);
        job.state = JobState::Complete;
        P::job_end(job.clone()).unwrap();
        P::job_end(job).unwrap();
        let user4 = P::set_assoc_usage(14).unwrap();
        let df: f64 = 1.0 - 0.693 / (7.0 * 86_400.0);
        let expected = 25.0 + 10.0 * (100.0 * df.powf(100.0));
        assert!(
            (user4.usage_raw - expected).abs() < 1e-9,
            "{}",
            user4.usage_raw
        );
    }

    #[test]
    fn malformed_settings_and_states_are_refused() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        setup(VECTOR_WEIGHTS);
        let e = P::init(options(&[("PriorityDecayHalfLife", "soon")])).unwrap_err();
        assert_eq!(e.code, slurm_wasm_sdk::codes::EINVAL);
        assert!(
            e.message.starts_with("PriorityDecayHalfLife=soon"),
            "{}",
            e.message
        );
        let saved = P::state_save().unwrap();
        let e = P::state_restore(b"\xffgarbage".to_vec()).unwrap_err();
        assert_eq!(e.code, slurm_wasm_sdk::codes::EINVAL);
        assert_eq!(P::state_save().unwrap(), saved);
        let mut bad_tree = classic_tree();
        bad_tree.push(AssociationUpdate::Upsert(fixtures::association(
            40,
            Some(41),
            "x",
            None,
            1,
        )));
        let e = P::update_associations(bad_tree).unwrap_err();
        assert!(
            e.message.contains("parent 41 does not exist"),
            "{}",
            e.message
        );
        assert_eq!(P::state_save().unwrap(), saved);
    }
}
