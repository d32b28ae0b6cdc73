//! The `priority-plugin` world export of priority/basic (the SDK's
//! [`Plugin`] trait; what it leaves out is the SDK's default, which is
//! priority/basic's: no reconfiguration, no pass, no usage, no sprio rows).

use slurm_wasm_sdk::priority::{
    AssociationUpdate, AssociationUsage, Plugin, PriorityConfig, QosUpdate,
};
use slurm_wasm_sdk::types::Job;
use slurm_wasm_sdk::{codes, Error};

use crate::fifo;
use crate::reservation::{reserved, Assoc, Ledger};

/// The ledger `init` starts with (empty), logging that the plugin loaded.
fn fresh_ledger() -> Ledger {
    slurm_wasm_sdk::debug!("priority/basic loaded");
    Ledger::default()
}

/// `set`: the FIFO rule of Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_set` (see [`fifo::priority`]) for `job`,
/// counting down from `last_prio`; a directly set priority is kept.
fn set_priority(last_prio: u32, job: &Job) -> u32 {
    let direct = job.direct_set_priority.then_some(job.priority);
    fifo::priority(last_prio, job.details.nice, direct)
}

/// `update-associations` for one update: an association's parent and used
/// TRES run-seconds into `ledger`, or its removal.
fn apply_association_update(ledger: &mut Ledger, update: AssociationUpdate) {
    match update {
        AssociationUpdate::Upsert(a) => {
            let used = a
                .grp_used_tres_run_secs
                .iter()
                .map(|t| (t.name.clone(), t.count))
                .collect();
            ledger.assocs.insert(
                a.id,
                Assoc {
                    parent: a.parent_id,
                    used,
                },
            );
        }
        AssociationUpdate::Remove(id) => {
            ledger.assocs.remove(&id);
        }
    }
}

/// `job-end`: releases the job's reserved TRES run-seconds from `ledger`
/// (Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_job_end`).
fn release(ledger: &mut Ledger, job: &Job) {
    let alloc: Vec<(String, u64)> = job
        .tres_allocated
        .iter()
        .map(|t| (t.name.clone(), t.count))
        .collect();
    let amount = reserved(&alloc, job.time_limit);
    ledger.job_end(job.assoc_id, job.qos.as_deref(), &amount);
}

/// priority/basic, exported as a component: its association ledger.
pub struct PriorityBasic {
    ledger: Ledger,
}

impl Plugin for PriorityBasic {
    const TYPE: &'static str = "priority/basic";
    const NAME: &'static str = "Priority BASIC plugin";

    /// Starts with an empty association ledger.
    fn init(_config: PriorityConfig) -> Result<Self, Error> {
        Ok(PriorityBasic {
            ledger: fresh_ledger(),
        })
    }

    /// The FIFO rule of Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_set` (see [`fifo::priority`]).
    fn set(&mut self, last_prio: u32, job: &Job) -> Result<u32, Error> {
        Ok(set_priority(last_prio, job))
    }

    /// Slurm's priority/basic computes no usage and leaves the association's
    /// figures untouched; a known association answers zeros, an unknown one
    /// `EINVAL`.
    fn set_assoc_usage(&mut self, assoc_id: u32) -> Result<AssociationUsage, Error> {
        if !self.ledger.assocs.contains_key(&assoc_id) {
            return Err(Error::invalid(format!("unknown association {assoc_id}")));
        }
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

    /// Releases the job's reserved TRES run-seconds (Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_job_end`).
    fn job_end(&mut self, job: &Job) -> Result<(), Error> {
        release(&mut self.ledger, job);
        Ok(())
    }

    /// Adds `boost` to every job with a non-zero, non-direct priority when the
    /// boost is at least 1,000,000, and returns it; otherwise returns 0.
    fn recover(&mut self, boost: u32, jobs: &[Job]) -> Result<(u32, Vec<(u32, u32)>), Error> {
        let applied = fifo::recover_boost(boost);
        if applied == 0 {
            return Ok((0, Vec::new()));
        }
        let updated = jobs
            .iter()
            .filter(|j| j.priority != 0 && !j.direct_set_priority)
            .map(|j| (j.job_id, j.priority.saturating_add(applied)))
            .collect();
        Ok((applied, updated))
    }

    fn update_associations(&mut self, updates: Vec<AssociationUpdate>) -> Result<(), Error> {
        for update in updates {
            apply_association_update(&mut self.ledger, update);
        }
        Ok(())
    }

    fn update_qos(&mut self, updates: Vec<QosUpdate>) -> Result<(), Error> {
        for update in updates {
            match update {
                QosUpdate::Upsert(q) => {
                    let used = q
                        .grp_used_tres_run_secs
                        .iter()
                        .map(|t| (t.name.clone(), t.count))
                        .collect();
                    self.ledger.qos.insert(q.name, used);
                }
                QosUpdate::Remove(id) => {
                    slurm_wasm_sdk::debug!("priority/basic: QOS {id} removed (tracked by name)");
                }
            }
        }
        Ok(())
    }

    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        Ok(self.ledger.encode())
    }

    /// Replaces the ledger only when the whole blob decodes.
    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        self.ledger = Ledger::decode(data).map_err(|e| Error::new(codes::EINVAL, e))?;
        Ok(())
    }
}

slurm_wasm_sdk::export_priority!(plugin PriorityBasic);
