//! What priority/hostile remembers, and its answers: FIFO priorities as
//! priority/basic counts them, bent the way the names say
//! ([`crate::behaviour`]).

use std::collections::BTreeMap;

use slurm_wasm_sdk::priority::{
    AssociationUpdate, AssociationUsage, PriorityConfig, PriorityFactors, QosUpdate,
};
use slurm_wasm_sdk::types::{Association, Job, Qos};
use slurm_wasm_sdk::Error;

use crate::behaviour::{Behaviour, STRANGER_ID};

/// priority/basic's threshold for `recover` boosts (Slurm 22.05.8 src/slurmctld/job_mgr.c `sync_job_priorities`).
pub const MIN_BOOST: u32 = 1_000_000;

/// What the plugin remembers between calls.
#[derive(Debug, Default)]
pub struct World {
    /// The configuration of the last `init` or `reconfig`.
    pub config: Option<PriorityConfig>,
    /// The association tree, by id, as `update-associations` left it.
    pub associations: BTreeMap<u32, Association>,
    /// The QOS table, by id.
    pub qos: BTreeMap<u32, Qos>,
    /// Jobs as last given to `set`, with the priority `set` gave them.
    pub jobs: BTreeMap<u32, Job>,
}

impl World {
    /// `set`: a directly set priority is kept; otherwise one below
    /// `last-prio` (at least 1), as priority/basic without nice. `EINVAL`
    /// before `init`.
    pub fn set(&mut self, last_prio: u32, job: &Job) -> Result<u32, Error> {
        Behaviour::read(&job.name, "set");
        if self.config.is_none() {
            return Err(Error::invalid(format!(
                "priority/hostile: job {}: init was never called",
                job.job_id
            )));
        }
        let priority = if job.direct_set_priority {
            job.priority
        } else {
            last_prio.saturating_sub(1).max(1)
        };
        let mut kept = job.clone();
        kept.priority = priority;
        self.jobs.insert(job.job_id, kept);
        Ok(priority)
    }

    /// `calculate`: each pending job keeps the priority `set` gave it;
    /// an id never given to `set` is `EINVAL`. Running jobs are not listed.
    pub fn calculate(&self, pending: &[u32]) -> Result<Vec<(u32, u32)>, Error> {
        let mut out = Vec::with_capacity(pending.len());
        for &id in pending {
            let job = self.jobs.get(&id).ok_or_else(|| {
                Error::invalid(format!(
                    "priority/hostile: calculate: job {id} was never given to set"
                ))
            })?;
            match Behaviour::read(&job.name, "calculate") {
                Behaviour::CalcStranger => out.extend([(id, job.priority), (STRANGER_ID, 1)]),
                Behaviour::CalcTwice => out.extend([(id, job.priority), (id, job.priority)]),
                Behaviour::CalcZero => out.push((id, 0)),
                _ => out.push((id, job.priority)),
            }
        }
        Ok(out)
    }

    /// `recover` as priority/basic: a boost of at least [`MIN_BOOST`] is
    /// added to every non-zero, non-direct priority and returned; a smaller
    /// one changes nothing.
    pub fn recover(&mut self, boost: u32, jobs: &[Job]) -> (u32, Vec<(u32, u32)>) {
        let behaviours: Vec<Behaviour> = jobs
            .iter()
            .map(|job| Behaviour::read(&job.name, "recover"))
            .collect();
        let mut changed = Vec::new();
        let mut added = 0;
        if boost >= MIN_BOOST {
            added = boost;
            for job in jobs {
                if job.priority != 0 && !job.direct_set_priority {
                    let boosted = job.priority.saturating_add(boost);
                    changed.push((job.job_id, boosted));
                    if let Some(kept) = self.jobs.get_mut(&job.job_id) {
                        kept.priority = boosted;
                    }
                }
            }
        }
        if behaviours.contains(&Behaviour::RecoverMax) {
            added = u32::MAX;
        }
        if behaviours.contains(&Behaviour::RecoverStranger) {
            changed.push((STRANGER_ID, 1));
        }
        (added, changed)
    }

    /// `job-end`: the job is forgotten.
    pub fn job_end(&mut self, job_id: u32) {
        self.jobs.remove(&job_id);
    }

    pub fn update_associations(&mut self, updates: Vec<AssociationUpdate>) {
        for update in updates {
            match update {
                AssociationUpdate::Upsert(a) => {
                    self.associations.insert(a.id, a);
                }
                AssociationUpdate::Remove(id) => {
                    self.associations.remove(&id);
                }
            }
        }
    }

    pub fn update_qos(&mut self, updates: Vec<QosUpdate>) {
        for update in updates {
            match update {
                QosUpdate::Upsert(q) => {
                    self.qos.insert(q.id, q);
                }
                QosUpdate::Remove(id) => {
                    self.qos.remove(&id);
                }
            }
        }
    }

    /// `set-assoc-usage`: the association's raw usage as given, nothing
    /// normalised, fair-share 1; `EINVAL` for an unknown id.
    pub fn usage(&self, assoc_id: u32) -> Result<AssociationUsage, Error> {
        let a = self.associations.get(&assoc_id).ok_or_else(|| {
            Error::invalid(format!("priority/hostile: no association {assoc_id}"))
        })?;
        Ok(usage_of(a))
    }

    /// `association-usages`: every association's, by id.
    pub fn usages(&self) -> Vec<AssociationUsage> {
        self.associations.values().map(usage_of).collect()
    }

    /// `get-priority-factors-list`: one row per job, every factor 0, with
    /// the partition's name from `init` and the account of the job's
    /// association (or the job's own), so a test sees both.
    pub fn factors(&self, jobs: &[Job]) -> Vec<PriorityFactors> {
        jobs.iter()
            .map(|job| {
                let behaviour = Behaviour::read(&job.name, "get-priority-factors-list");
                let partition = job
                    .partitions
                    .first()
                    .and_then(|&p| self.config.as_ref()?.partitions.get(p as usize))
                    .map(|p| p.name.clone())
                    .unwrap_or_default();
                let account = self
                    .associations
                    .get(&job.assoc_id)
                    .map(|a| a.account.clone())
                    .or_else(|| job.account.clone());
                PriorityFactors {
                    job_id: if behaviour == Behaviour::FactorsStranger {
                        STRANGER_ID
                    } else {
                        job.job_id
                    },
                    user_id: job.user_id,
                    account,
                    partition,
                    qos: job.qos.clone(),
                    direct_priority: job.direct_set_priority.then_some(job.priority),
                    age: 0.0,
                    association: 0.0,
                    fair_share: 0.0,
                    job_size: 0.0,
                    partition_factor: 0.0,
                    qos_factor: 0.0,
                    tres: Vec::new(),
                    site: job.site_factor,
                    nice: job.details.nice,
                    priority: self
                        .jobs
                        .get(&job.job_id)
                        .map_or(job.priority, |j| j.priority),
                }
            })
            .collect()
    }

    /// `state-save`: the association ids, ascending, 4 little-endian bytes
    /// each.
    pub fn state_save(&self) -> Vec<u8> {
        self.associations
            .keys()
            .flat_map(|id| id.to_le_bytes())
            .collect()
    }
}

/// An association's usage figures, bent by its account's name.
fn usage_of(a: &Association) -> AssociationUsage {
    let mut usage = AssociationUsage {
        id: a.id,
        usage_raw: a.usage_raw,
        usage_norm: 0.0,
        usage_effective: 0.0,
        shares_norm: 0.0,
        fair_share: 1.0,
        level_fs: None,
    };
    match Behaviour::read(&a.account, "association usage") {
        Behaviour::UsageNan => usage.usage_raw = f64::NAN,
        Behaviour::UsageNegative => usage.usage_raw = -1.0,
        Behaviour::UsageStranger => usage.id = STRANGER_ID,
        _ => {}
    }
    usage
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;

    fn world() -> World {
        let mut w = World {
            config: Some(PriorityConfig {
                cluster: fixtures::cluster_config(),
                partitions: vec![fixtures::partition(0, "debug", 1)],
                partition_tres: vec![Vec::new()],
                cluster_cpus: 4,
                cluster_nodes: 1,
                cluster_tres: Vec::new(),
            }),
            ..World::default()
        };
        w.update_associations(vec![AssociationUpdate::Upsert(fixtures::association(
            7, None, "physics", None, 1,
        ))]);
        w
    }

    fn named(id: u32, name: &str) -> Job {
        Job {
            name: name.into(),
            ..fixtures::job(id)
        }
    }

    #[test]
    fn fifo_priorities_are_kept_for_calculate() {
        let mut w = world();
        assert_eq!(w.set(100, &fixtures::job(1)).unwrap(), 99);
        assert_eq!(w.set(99, &fixtures::job(2)).unwrap(), 98);
        assert_eq!(w.calculate(&[2, 1]).unwrap(), [(2, 98), (1, 99)]);
        assert!(w.calculate(&[3]).is_err());
        w.job_end(1);
        assert!(w.calculate(&[1]).is_err());
        assert!(World::default().set(100, &fixtures::job(1)).is_err());
    }

    #[test]
    fn calculate_and_recover_misbehave_by_name() {
        let mut w = world();
        for (id, name) in [(1, "calc-stranger"), (2, "calc-twice"), (3, "calc-zero")] {
            w.set(100, &named(id, name)).unwrap();
        }
        assert_eq!(w.calculate(&[1]).unwrap(), [(1, 99), (STRANGER_ID, 1)]);
        assert_eq!(w.calculate(&[2]).unwrap(), [(2, 99), (2, 99)]);
        assert_eq!(w.calculate(&[3]).unwrap(), [(3, 0)]);
        let mut job = fixtures::job(4);
        job.priority = 10;
        assert_eq!(
            w.recover(2_000_000, &[job.clone()]),
            (2_000_000, vec![(4, 2_000_010)])
        );
        assert_eq!(w.recover(5, &[job]), (0, vec![]));
        assert_eq!(w.recover(5, &[named(5, "recover-max")]).0, u32::MAX);
    }

    #[test]
    fn usages_and_factors_report_the_world() {
        let mut w = world();
        assert_eq!(w.usage(7).unwrap().id, 7);
        assert!(w.usage(8).is_err());
        w.update_associations(vec![AssociationUpdate::Upsert(fixtures::association(
            8,
            Some(7),
            "usage-nan",
            None,
            1,
        ))]);
        assert!(w.usage(8).unwrap().usage_raw.is_nan());
        assert_eq!(w.usages().len(), 2);
        let mut job = fixtures::job(1);
        job.assoc_id = 7;
        let rows = w.factors(&[job]);
        assert_eq!(rows[0].partition, "debug");
        assert_eq!(rows[0].account.as_deref(), Some("physics"));
        assert_eq!(w.state_save(), [7, 0, 0, 0, 8, 0, 0, 0]);
    }
}
