//! The `priority-plugin` world export of priority/basic.

use std::sync::{Mutex, MutexGuard};

use slurm_wasm_sdk::priority::{
    AssociationUpdate, AssociationUsage, FactorsRequest, IdentityGuest, PriorityConfig,
    PriorityFactors, PriorityGuest, QosUpdate,
};
use slurm_wasm_sdk::types::{Job, PluginError, PluginIdentity};
use slurm_wasm_sdk::{codes, identity, Error};

use crate::fifo;
use crate::reservation::{reserved, Assoc, Ledger};

/// The plugin's instance state.
static LEDGER: Mutex<Option<Ledger>> = Mutex::new(None);

fn ledger() -> MutexGuard<'static, Option<Ledger>> {
    LEDGER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn with_ledger<R>(f: impl FnOnce(&mut Ledger) -> R) -> R {
    f(ledger().get_or_insert_with(Ledger::default))
}

/// The ledger `init` starts with (empty), logging that the plugin loaded.
/// The export layer keeps it in its instance; a native embedding keeps
/// its own.
pub fn fresh_ledger() -> Ledger {
    slurm_wasm_sdk::debug!("priority/basic loaded");
    Ledger::default()
}

/// `set`: the FIFO rule of spec 4.1 (see [`fifo::priority`]) for `job`,
/// counting down from `last_prio`; a directly set priority is kept.
pub fn set_priority(last_prio: u32, job: &Job) -> u32 {
    let direct = job.direct_set_priority.then_some(job.priority);
    fifo::priority(last_prio, job.details.nice, direct)
}

/// `update-associations` for one update: an association's parent and used
/// TRES run-seconds into `ledger`, or its removal.
pub fn apply_association_update(ledger: &mut Ledger, update: AssociationUpdate) {
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
/// (spec 4.1).
pub fn release(ledger: &mut Ledger, job: &Job) {
    let alloc: Vec<(String, u64)> = job
        .tres_allocated
        .iter()
        .map(|t| (t.name.clone(), t.count))
        .collect();
    let amount = reserved(&alloc, job.time_limit);
    ledger.job_end(job.assoc_id, job.qos.as_deref(), &amount);
}

/// priority/basic, exported as a component.
pub struct PriorityBasic;

impl IdentityGuest for PriorityBasic {
    fn describe() -> PluginIdentity {
        identity("priority/basic", "Priority BASIC plugin")
    }
}

impl PriorityGuest for PriorityBasic {
    /// Starts with an empty association ledger.
    fn init(_config: PriorityConfig) -> Result<(), PluginError> {
        *ledger() = Some(fresh_ledger());
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        *ledger() = None;
        Ok(())
    }

    /// The FIFO rule of spec 4.1 (see [`fifo::priority`]).
    fn set(last_prio: u32, job: Job) -> Result<u32, PluginError> {
        Ok(set_priority(last_prio, &job))
    }

    /// Slurm's priority/basic does nothing on reconfiguration.
    fn reconfig(
        _config: PriorityConfig,
        _assoc_clear: bool,
        _running: Vec<Job>,
    ) -> Result<(), PluginError> {
        Ok(())
    }

    /// Slurm's priority/basic computes no usage and leaves the association's
    /// figures untouched; a known association answers zeros, an unknown one
    /// `EINVAL`.
    fn set_assoc_usage(assoc_id: u32) -> Result<AssociationUsage, PluginError> {
        if !with_ledger(|l| l.assocs.contains_key(&assoc_id)) {
            return Err(Error::invalid(format!("unknown association {assoc_id}")).into());
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

    /// Slurm's priority/basic returns an empty list (sprio refuses to run).
    fn get_priority_factors_list(
        _jobs: Vec<Job>,
        _request: FactorsRequest,
        _uid: u32,
    ) -> Result<Vec<PriorityFactors>, PluginError> {
        Ok(Vec::new())
    }

    /// Releases the job's reserved TRES run-seconds (spec 4.1).
    fn job_end(job: Job) -> Result<(), PluginError> {
        with_ledger(|l| release(l, &job));
        Ok(())
    }

    /// Adds `boost` to every job with a non-zero, non-direct priority when the
    /// boost is at least 1,000,000, and returns it; otherwise returns 0.
    fn recover(boost: u32, jobs: Vec<Job>) -> Result<(u32, Vec<(u32, u32)>), PluginError> {
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

    fn update_associations(updates: Vec<AssociationUpdate>) -> Result<(), PluginError> {
        with_ledger(|l| {
            for update in updates {
                apply_association_update(l, update);
            }
        });
        Ok(())
    }

    fn update_qos(updates: Vec<QosUpdate>) -> Result<(), PluginError> {
        with_ledger(|l| {
            for update in updates {
                match update {
                    QosUpdate::Upsert(q) => {
                        let used = q
                            .grp_used_tres_run_secs
                            .iter()
                            .map(|t| (t.name.clone(), t.count))
                            .collect();
                        l.qos.insert(q.name, used);
                    }
                    QosUpdate::Remove(id) => {
                        slurm_wasm_sdk::debug!(
                            "priority/basic: QOS {id} removed (tracked by name)"
                        );
                    }
                }
            }
        });
        Ok(())
    }

    /// priority/basic has no decay thread: nothing to recompute.
    fn calculate(_running: Vec<Job>, _pending: Vec<u32>) -> Result<Vec<(u32, u32)>, PluginError> {
        Ok(Vec::new())
    }

    /// priority/basic keeps no usage: an empty table.
    fn association_usages() -> Result<Vec<AssociationUsage>, PluginError> {
        Ok(Vec::new())
    }

    fn state_save() -> Result<Vec<u8>, PluginError> {
        Ok(with_ledger(|l| l.encode()))
    }

    /// Replaces the ledger only when the whole blob decodes.
    fn state_restore(data: Vec<u8>) -> Result<(), PluginError> {
        let restored = Ledger::decode(&data).map_err(|e| Error::new(codes::EINVAL, e))?;
        *ledger() = Some(restored);
        Ok(())
    }
}

slurm_wasm_sdk::export_priority!(PriorityBasic);
