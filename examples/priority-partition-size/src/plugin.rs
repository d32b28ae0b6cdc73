//! The `priority-plugin` world export of priority/partition_size: converts
//! the contract's records to and from the plain-Rust rule.

use std::sync::{Mutex, MutexGuard};

use slurm_wasm_sdk::priority::{
    AssociationUpdate, AssociationUsage, FactorsRequest, IdentityGuest, PriorityConfig,
    PriorityFactors, PriorityGuest, QosUpdate,
};
use slurm_wasm_sdk::types::{Job, PluginError, PluginIdentity};
use slurm_wasm_sdk::{identity, Error};

use crate::config::{self, Config, Weights};
use crate::score::{score, JobShape, Score};
use crate::state;

/// The configuration of this instance; `None` before `init` and after
/// `fini`, when calls use [`Config::default`].
static CONFIG: Mutex<Option<Config>> = Mutex::new(None);

fn config() -> MutexGuard<'static, Option<Config>> {
    CONFIG
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn with_config<R>(f: impl FnOnce(&Config) -> R) -> R {
    f(config().get_or_insert_with(Config::default))
}

/// Reads the host's configuration; `EINVAL` when a weight is malformed.
fn parse(host: &PriorityConfig) -> Result<Config, PluginError> {
    let options = host
        .cluster
        .raw
        .iter()
        .map(|kv| (kv.key.as_str(), kv.value.as_str()));
    let weights = Weights::from_options(options).map_err(Error::invalid)?;
    Ok(Config {
        weights,
        partitions: host
            .partitions
            .iter()
            .map(|p| config::Partition {
                name: p.name.clone(),
                job_factor: p.priority_job_factor,
            })
            .collect(),
        cluster_cpus: host.cluster_cpus,
        cluster_nodes: host.cluster_nodes,
    })
}

/// What the rule reads of a job. CPUs follow Slurm's job-size factor:
/// allocated if the job has resources, else its maximum, else its minimum.
fn shape(job: &Job) -> JobShape {
    let details = &job.details;
    JobShape {
        partition: job.partitions.first().copied(),
        min_nodes: details.min_nodes,
        cpus: job
            .resources
            .as_ref()
            .map(|r| r.ncpus)
            .or(details.max_cpus)
            .unwrap_or(details.min_cpus),
        nice: details.nice,
    }
}

/// The job's priority: the explicit one when it has one, else the rule's.
fn priority(config: &Config, job: &Job) -> u32 {
    if job.direct_set_priority {
        job.priority
    } else {
        score(config, &shape(job)).priority
    }
}

/// The `sprio` row of a job: the weighted factors, or only the explicit
/// priority when the job has one.
fn factors_row(config: &Config, job: &Job) -> PriorityFactors {
    let partition = job
        .partitions
        .first()
        .and_then(|&index| config.partitions.get(index as usize))
        .map(|p| p.name.clone())
        .unwrap_or_default();
    let (direct_priority, scored) = if job.direct_set_priority {
        let zero = Score {
            partition: 0.0,
            job_size: 0.0,
            priority: job.priority,
        };
        (Some(job.priority), zero)
    } else {
        (None, score(config, &shape(job)))
    };
    PriorityFactors {
        job_id: job.job_id,
        user_id: job.user_id,
        account: job.account.clone(),
        partition,
        qos: job.qos.clone(),
        direct_priority,
        age: 0.0,
        association: 0.0,
        fair_share: 0.0,
        job_size: scored.job_size,
        partition_factor: scored.partition,
        qos_factor: 0.0,
        tres: Vec::new(),
        site: 0,
        nice: job.details.nice,
        priority: scored.priority,
    }
}

/// Whether a row passes the request's filters (an empty list passes all).
fn requested(request: &FactorsRequest, row: &PriorityFactors) -> bool {
    let pass = |list: &[u32], value| list.is_empty() || list.contains(&value);
    pass(&request.job_ids, row.job_id)
        && pass(&request.user_ids, row.user_id)
        && (request.partitions.is_empty() || request.partitions.contains(&row.partition))
}

/// priority/partition_size, exported as a component.
pub struct PartitionSize;

impl IdentityGuest for PartitionSize {
    fn describe() -> PluginIdentity {
        identity(
            "priority/partition_size",
            "Priority by partition and job size (example)",
        )
    }
}

impl PriorityGuest for PartitionSize {
    /// Reads the weights and partition table; `EINVAL` on a malformed weight.
    fn init(host: PriorityConfig) -> Result<(), PluginError> {
        let parsed = parse(&host)?;
        slurm_wasm_sdk::debug!("priority/partition_size: {:?}", parsed.weights);
        *config() = Some(parsed);
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        *config() = None;
        Ok(())
    }

    /// The rule of [`score`]. Priorities are absolute, so `last_prio` (the
    /// controller's FIFO counter) is not used.
    fn set(_last_prio: u32, job: Job) -> Result<u32, PluginError> {
        Ok(with_config(|c| priority(c, &job)))
    }

    /// Re-reads the configuration; a malformed one is refused and the old one
    /// kept. The plugin tracks no usage, so `assoc_clear` changes nothing.
    fn reconfig(
        host: PriorityConfig,
        _assoc_clear: bool,
        _running: Vec<Job>,
    ) -> Result<(), PluginError> {
        *config() = Some(parse(&host)?);
        Ok(())
    }

    /// The plugin keeps no usage: every association reports zeros.
    fn set_assoc_usage(assoc_id: u32) -> Result<AssociationUsage, PluginError> {
        Ok(AssociationUsage {
            id: assoc_id,
            usage_raw: 0.0,
            usage_norm: 0.0,
            usage_effective: 0.0,
            shares_norm: 0.0,
            fair_share: 0.0,
            level_fs: None,
        })
    }

    /// One row per job, for its first partition, filtered by the request's
    /// job ids, user ids and partition names. Every row is visible to every
    /// `uid`: the plugin has no notion of `PrivateData`.
    fn get_priority_factors_list(
        jobs: Vec<Job>,
        request: FactorsRequest,
        _uid: u32,
    ) -> Result<Vec<PriorityFactors>, PluginError> {
        Ok(with_config(|c| {
            jobs.iter()
                .map(|job| factors_row(c, job))
                .filter(|row| requested(&request, row))
                .collect()
        }))
    }

    /// Nothing was reserved, so nothing is released.
    fn job_end(_job: Job) -> Result<(), PluginError> {
        Ok(())
    }

    /// Priorities do not depend on the controller's FIFO counter, so a
    /// restart needs no boost: returns `(0, [])`.
    fn recover(_boost: u32, _jobs: Vec<Job>) -> Result<(u32, Vec<(u32, u32)>), PluginError> {
        Ok((0, Vec::new()))
    }

    /// The association tree is not used.
    fn update_associations(_updates: Vec<AssociationUpdate>) -> Result<(), PluginError> {
        Ok(())
    }

    /// The QOS table is not used.
    fn update_qos(_updates: Vec<QosUpdate>) -> Result<(), PluginError> {
        Ok(())
    }

    /// A partition and size priority depends only on the job and the
    /// weights, which the periodic pass does not change: nothing to
    /// recompute, whatever `pending` names.
    fn calculate(_running: Vec<Job>, _pending: Vec<u32>) -> Result<Vec<(u32, u32)>, PluginError> {
        Ok(Vec::new())
    }

    /// No usage is kept: an empty table.
    fn association_usages() -> Result<Vec<AssociationUsage>, PluginError> {
        Ok(Vec::new())
    }

    /// Saves the configuration (see [`state`] for the layout).
    fn state_save() -> Result<Vec<u8>, PluginError> {
        Ok(with_config(state::encode))
    }

    /// Replaces the configuration only when the whole blob decodes;
    /// `EINVAL`, with the reason, otherwise.
    fn state_restore(data: Vec<u8>) -> Result<(), PluginError> {
        *config() = Some(state::decode(&data).map_err(Error::invalid)?);
        Ok(())
    }
}

slurm_wasm_sdk::export_priority!(PartitionSize);

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;
    use slurm_wasm_sdk::types::KeyValue;

    /// The plugin's state is one static: tests that use it take turns.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// 100 nodes of 10 CPUs, partitions `debug` (factor 1) and `batch` (factor 10),
    /// PriorityWeightPartition=2000 and the default job-size weight.
    fn host_config() -> PriorityConfig {
        let mut cluster = fixtures::cluster_config();
        cluster.raw.push(KeyValue {
            key: "PriorityWeightPartition".into(),
            value: "2000".into(),
        });
        PriorityConfig {
            cluster,
            partitions: vec![fixtures::partition(0, "debug", 100), {
                let mut batch = fixtures::partition(1, "batch", 100);
                batch.priority_job_factor = 10;
                batch
            }],
            partition_tres: vec![Vec::new(), Vec::new()],
            cluster_cpus: 1000,
            cluster_nodes: 100,
            cluster_tres: Vec::new(),
        }
    }

    /// Job `id` of `user` in partition `partition` asking for `nodes` nodes and `cpus` CPUs.
    fn job(id: u32, user: u32, partition: u32, nodes: u32, cpus: u32) -> Job {
        let mut job = fixtures::job(id);
        job.user_id = user;
        job.partitions = vec![partition];
        job.details.min_nodes = nodes;
        job.details.min_cpus = cpus;
        job
    }

    #[test]
    fn set_scores_and_keeps_explicit_priorities() {
        let _turn = serial();
        PartitionSize::init(host_config()).unwrap();
        // batch: 10 x 2000 + (10/100 + 100/1000)/2 x 1000 = 20100.
        assert_eq!(
            PartitionSize::set(0, job(1, 1000, 1, 10, 100)).unwrap(),
            20_100
        );
        // debug, one CPU on one node: 2000 + 5.5, truncated.
        assert_eq!(PartitionSize::set(0, job(2, 1000, 0, 1, 1)).unwrap(), 2_005);
        let mut direct = job(3, 1000, 1, 10, 100);
        direct.direct_set_priority = true;
        direct.priority = 999;
        assert_eq!(PartitionSize::set(0, direct).unwrap(), 999);
    }

    #[test]
    fn malformed_weight_is_refused_and_old_config_kept() {
        let _turn = serial();
        PartitionSize::init(host_config()).unwrap();
        let mut bad = host_config();
        bad.cluster.raw.push(KeyValue {
            key: "PriorityWeightJobSize".into(),
            value: "lots".into(),
        });
        let err = PartitionSize::reconfig(bad, false, Vec::new()).unwrap_err();
        assert_eq!(err.code, slurm_wasm_sdk::codes::EINVAL);
        assert_eq!(
            PartitionSize::set(0, job(1, 1000, 1, 10, 100)).unwrap(),
            20_100
        );
    }

    #[test]
    fn factors_list_filters_by_job_user_and_partition() {
        let _turn = serial();
        PartitionSize::init(host_config()).unwrap();
        let jobs = vec![
            job(1, 1000, 1, 10, 100),
            job(2, 1001, 0, 1, 1),
            job(3, 1001, 1, 1, 1),
        ];
        let rows = |job_ids: &[u32], user_ids: &[u32], partitions: &[&str]| {
            let request = FactorsRequest {
                job_ids: job_ids.to_vec(),
                user_ids: user_ids.to_vec(),
                partitions: partitions.iter().map(|p| p.to_string()).collect(),
            };
            let list = PartitionSize::get_priority_factors_list(jobs.clone(), request, 0).unwrap();
            list.iter().map(|r| r.job_id).collect::<Vec<_>>()
        };
        assert_eq!(rows(&[], &[], &[]), [1, 2, 3]);
        assert_eq!(rows(&[2, 3], &[], &[]), [2, 3]);
        assert_eq!(rows(&[], &[1001], &["batch"]), [3]);
        assert_eq!(rows(&[1], &[1001], &[]), Vec::<u32>::new());

        let request = FactorsRequest {
            job_ids: vec![1],
            user_ids: Vec::new(),
            partitions: Vec::new(),
        };
        let row = &PartitionSize::get_priority_factors_list(jobs, request, 0).unwrap()[0];
        assert_eq!(row.partition, "batch");
        assert_eq!(
            (row.partition_factor, row.job_size, row.priority),
            (20_000.0, 100.0, 20_100)
        );
        assert_eq!(row.direct_priority, None);
    }

    #[test]
    fn calculate_changes_nothing() {
        let _turn = serial();
        PartitionSize::init(host_config()).unwrap();
        assert_eq!(
            PartitionSize::set(0, job(1, 1000, 1, 10, 100)).unwrap(),
            20_100
        );
        assert!(PartitionSize::calculate(Vec::new(), vec![1])
            .unwrap()
            .is_empty());
    }

    #[test]
    fn state_round_trips_and_refuses_garbage() {
        let _turn = serial();
        PartitionSize::init(host_config()).unwrap();
        let saved = PartitionSize::state_save().unwrap();
        PartitionSize::fini().unwrap();
        assert_eq!(PartitionSize::set(0, job(1, 1000, 1, 10, 100)).unwrap(), 1);
        PartitionSize::state_restore(saved).unwrap();
        assert_eq!(
            PartitionSize::set(0, job(1, 1000, 1, 10, 100)).unwrap(),
            20_100
        );
        let err = PartitionSize::state_restore(b"garbage".to_vec()).unwrap_err();
        assert_eq!(err.code, slurm_wasm_sdk::codes::EINVAL);
        assert_eq!(
            PartitionSize::set(0, job(1, 1000, 1, 10, 100)).unwrap(),
            20_100
        );
    }
}
