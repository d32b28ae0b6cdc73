//! The typed priority API: [`PriorityPlugin`].

use crate::bindings::priority::exports::slurm::plugin::priority as wit;
use crate::bindings::priority::{PriorityPlugin as World, PriorityPluginPre as WorldPre};
use crate::bindings::types::Job;
use crate::engine::Host;
use crate::error::{CallError, LoadError};
use crate::plugin::{no_check, PluginCore, PluginSettings, PluginSource};

use super::journal::{PriorityJournal, UsageCall};

pub use wit::{
    AssociationUpdate, AssociationUsage, FactorsRequest, PriorityConfig, PriorityFactors, QosUpdate,
};

super::plugin_kind! {
    handle: PriorityPlugin,
    kind: PriorityKind,
    slot: Priority,
    linker: priority,
    world: World,
    pre: WorldPre<crate::store::HostState>,
    bindings: World,
    interface: slurm_plugin_priority,
    config: PriorityConfig,
    restore: |b, store, data| b.slurm_plugin_priority().call_state_restore(store, data),
    save: |b, store| b.slurm_plugin_priority().call_state_save(store).map(|r| r.map(Some)),
    journal: PriorityJournal,
    replay: |b, replay, journal, restore| {
        restore(replay)?;
        replay_world(b, replay, journal)
    },
}

/// Gives a restarted priority plugin its association and QOS updates, its
/// jobs and the usage since the last state back (see [`super::journal`]).
fn replay_world(
    b: &World,
    replay: &mut crate::plugin::Replay<'_>,
    journal: &PriorityJournal,
) -> Result<(), CallError> {
    let priority = b.slurm_plugin_priority();
    let associations = journal.associations.updates();
    if !associations.is_empty() {
        replay.call("update-associations", |s| {
            priority.call_update_associations(s, &associations)
        })?;
    }
    let qos = journal.qos.updates();
    if !qos.is_empty() {
        replay.call("update-qos", |s| priority.call_update_qos(s, &qos))?;
    }
    for (last_prio, job) in journal.jobs.values() {
        replay.call("set", |s| {
            priority.call_set(s, *last_prio, job).map(|r| r.map(|_| ()))
        })?;
    }
    for call in &journal.usage {
        match call {
            UsageCall::JobEnd(job) => replay.call("job-end", |s| priority.call_job_end(s, job))?,
            UsageCall::Calculate { running, pending } => replay.call("calculate", |s| {
                priority
                    .call_calculate(s, running, pending)
                    .map(|r| r.map(|_| ()))
            })?,
        }
    }
    Ok(())
}

super::plugin_state! {
    handle: PriorityPlugin,
    interface: slurm_plugin_priority,
}

crate::replay::replayer!(PriorityPlugin, "priority", |p| {
    "init" => |(config,): (PriorityConfig,)| -> () { p.init(&config) },
    "fini" => |(): ()| -> () { p.fini() },
    "state-save" => |(): ()| -> Vec<u8> { p.state_save() },
    "state-restore" => |(data,): (Vec<u8>,)| -> () { p.state_restore(&data) },
    "set" => |(last_prio, job): (u32, Job)| -> u32 { p.set(last_prio, &job) },
    "reconfig" => |(config, assoc_clear, running): (PriorityConfig, bool, Vec<Job>)| -> () {
        p.reconfig(&config, assoc_clear, &running)
    },
    "set-assoc-usage" => |(assoc_id,): (u32,)| -> AssociationUsage { p.set_assoc_usage(assoc_id) },
    "get-priority-factors-list" => |(jobs, request, uid): (Vec<Job>, FactorsRequest, u32)| -> Vec<PriorityFactors> {
        p.get_priority_factors_list(&jobs, &request, uid)
    },
    "job-end" => |(job,): (Job,)| -> () { p.job_end(&job) },
    "recover" => |(boost, jobs): (u32, Vec<Job>)| -> (u32, Vec<(u32, u32)>) { p.recover(boost, &jobs) },
    "update-associations" => |(updates,): (Vec<AssociationUpdate>,)| -> () { p.update_associations(&updates) },
    "update-qos" => |(updates,): (Vec<QosUpdate>,)| -> () { p.update_qos(&updates) },
    "calculate" => |(running, pending): (Vec<Job>, Vec<u32>)| -> Vec<(u32, u32)> { p.calculate(&running, &pending) },
    "association-usages" => |(): ()| -> Vec<AssociationUsage> { p.association_usages() },
});

/// A loaded priority plugin. Every method is one contract call under the
/// plugin's limits; faults follow its failure policy.
///
/// # Errors
///
/// Every method that calls the plugin fails with a [`CallError`]:
/// [`Disabled`](CallError::Disabled) once the failure policy has taken the
/// plugin out of service; [`NotInitialised`](CallError::NotInitialised) for
/// any call but `init` and `fini` before an `init` succeeded;
/// [`Start`](CallError::Start) when an instance could not be started
/// (instantiated, and after a fault initialised again, restored and given
/// its associations, QOS, jobs and usage since the last state back); a
/// fault ([`Fuel`](CallError::Fuel), [`Deadline`](CallError::Deadline),
/// [`Memory`](CallError::Memory), [`Stack`](CallError::Stack),
/// [`Trap`](CallError::Trap)), after which the failure policy decides what
/// serves the next call; [`Plugin`](CallError::Plugin) when the plugin
/// returns a Slurm error, for the functions whose WIT result has one;
/// [`Denied`](CallError::Denied) in place of a plugin error or trap that
/// followed a call to a capability it was not granted;
/// [`StateTooLarge`](CallError::StateTooLarge) for a state blob over the
/// plugin's [`Limits::state_bytes`](crate::Limits::state_bytes). Each
/// method says which answers the host refuses with
/// [`Invalid`](CallError::Invalid).
pub struct PriorityPlugin {
    core: PluginCore<PriorityKind>,
}

impl PriorityPlugin {
    /// Compiles `source` (or takes it from the host's cache), checks that it
    /// is a priority plugin for this host's contract, with imports, exports
    /// and identity it may have under `settings`, and asks it to `describe`
    /// itself in a throwaway instance. Runs nothing else of the plugin: call
    /// [`PriorityPlugin::init`] next.
    ///
    /// # Errors
    ///
    /// A [`LoadError`]: the source cannot be read or is not a component, or the
    /// compiled-component cache cannot keep it; it is a plugin of another kind
    /// or contract version, imports a capability priority plugins may not have,
    /// lacks an export, describes itself wrongly, requires a capability
    /// `settings` does not grant, or faults in its start function or
    /// `describe`.
    pub fn load(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        Ok(PriorityPlugin {
            core: PluginCore::load(host, source, settings)?,
        })
    }

    /// `priority_p_set`; a result of 0 (held) is refused: plugins return 1..=u32::MAX.
    pub fn set(&self, last_prio: u32, job: &Job) -> Result<u32, CallError> {
        let (p, _) = self.core.call_journaled(
            "set",
            &(last_prio, job),
            None,
            |b, s| b.slurm_plugin_priority().call_set(s, last_prio, job),
            |c, _, p| match p {
                0 => Err(c.fail(format!("priority 0 for job {} (0 means held)", job.job_id))),
                _ => Ok(()),
            },
            |j, _| {
                j.jobs.insert(job.job_id, (last_prio, job.clone()));
            },
        )?;
        Ok(p)
    }

    /// `priority_p_reconfig`: the configuration changed to `config`;
    /// `assoc_clear` asks the plugin to rebuild its usage-derived data from
    /// the `running` jobs. On success `config` is what a restarted instance's
    /// `init` gets.
    ///
    /// # Errors
    ///
    /// Those of every call ([`PriorityPlugin`](PriorityPlugin#errors)).
    pub fn reconfig(
        &self,
        config: &PriorityConfig,
        assoc_clear: bool,
        running: &[Job],
    ) -> Result<(), CallError> {
        self.core
            .call("reconfig", &(config, assoc_clear, running), None, |b, s| {
                b.slurm_plugin_priority()
                    .call_reconfig(s, config, assoc_clear, running)
            })?;
        self.core.remember_config(config);
        Ok(())
    }

    /// `priority_p_set_assoc_usage`: association `assoc_id`'s normalised and
    /// effective usage and the fair-share values derived from them, as the
    /// plugin recomputed them.
    ///
    /// # Errors
    ///
    /// Those of every call ([`PriorityPlugin`](PriorityPlugin#errors));
    /// [`CallError::Invalid`] when the answer is about another association, or
    /// a usage or factor figure is negative or not finite, or `level-fs` is
    /// negative or NaN.
    pub fn set_assoc_usage(&self, assoc_id: u32) -> Result<AssociationUsage, CallError> {
        let (u, _) = self.core.call_checked(
            "set-assoc-usage",
            &(assoc_id,),
            None,
            |b, s| b.slurm_plugin_priority().call_set_assoc_usage(s, assoc_id),
            |c, _, u| c.assoc_usage_of(assoc_id, u),
        )?;
        Ok(u)
    }

    /// `priority_p_get_priority_factors_list`; rows only for the given
    /// jobs, every weighted factor finite and not negative.
    pub fn get_priority_factors_list(
        &self,
        jobs: &[Job],
        request: &FactorsRequest,
        uid: u32,
    ) -> Result<Vec<PriorityFactors>, CallError> {
        let (rows, _) = self.core.call_checked(
            "get-priority-factors-list",
            &(jobs, request, uid),
            None,
            |b, s| {
                b.slurm_plugin_priority()
                    .call_get_priority_factors_list(s, jobs, request, uid)
            },
            |c, _, rows| c.factor_rows(jobs, rows),
        )?;
        Ok(rows)
    }

    /// `priority_p_job_end`: `job` ended; the plugin charges or releases its
    /// usage. Journaled for restarts (the job is no longer replayed to `set`);
    /// after 64 usage-changing calls since the last state save or restore the
    /// host saves the plugin's state, and a failed save is logged, not
    /// returned.
    ///
    /// # Errors
    ///
    /// Those of every call ([`PriorityPlugin`](PriorityPlugin#errors)).
    pub fn job_end(&self, job: &Job) -> Result<(), CallError> {
        self.core.call_journaled(
            "job-end",
            &(job,),
            None,
            |b, s| b.slurm_plugin_priority().call_job_end(s, job),
            no_check,
            |j, _| j.job_end(job),
        )?;
        self.checkpoint();
        Ok(())
    }

    /// Saves the plugin's state once the journal holds
    /// [`super::journal::PRIORITY_CHECKPOINT_CALLS`] usage calls, so a
    /// restart replays no more than that. A failed save is logged, not
    /// returned: the call that led here succeeded, and the journal is kept.
    fn checkpoint(&self) {
        if self.core.journal(PriorityJournal::wants_checkpoint) {
            if let Err(error) = self.state_save() {
                tracing::warn!("checkpoint of the priority plugin's state failed: {error}");
            }
        }
    }

    /// `priority_p_recover`: the boost to add to `lowest_prio` (at most
    /// `boost`, so the sum cannot overflow) and the new priorities of the
    /// jobs it changed (only jobs of `jobs`, each once, none 0).
    pub fn recover(&self, boost: u32, jobs: &[Job]) -> Result<(u32, Vec<(u32, u32)>), CallError> {
        let (answer, _) = self.core.call_checked(
            "recover",
            &(boost, jobs),
            None,
            |b, s| b.slurm_plugin_priority().call_recover(s, boost, jobs),
            |c, _, answer| c.recovered(boost, jobs, answer),
        )?;
        Ok(answer)
    }

    /// Applies `updates` to the plugin's association tree (a slurm-wasm
    /// addition: C plugins read the tree from the controller's globals). The
    /// last update of each association is journaled for restarts.
    ///
    /// # Errors
    ///
    /// Those of every call ([`PriorityPlugin`](PriorityPlugin#errors)).
    pub fn update_associations(&self, updates: &[AssociationUpdate]) -> Result<(), CallError> {
        self.core
            .call_journaled(
                "update-associations",
                &(updates,),
                None,
                |b, s| {
                    b.slurm_plugin_priority()
                        .call_update_associations(s, updates)
                },
                no_check,
                |j, _| j.associations(updates),
            )
            .map(|_| ())
    }

    /// Applies `updates` to the plugin's QOS table (a slurm-wasm addition, as
    /// [`PriorityPlugin::update_associations`]). The last update of each QOS
    /// is journaled for restarts.
    ///
    /// # Errors
    ///
    /// Those of every call ([`PriorityPlugin`](PriorityPlugin#errors)).
    pub fn update_qos(&self, updates: &[QosUpdate]) -> Result<(), CallError> {
        self.core
            .call_journaled(
                "update-qos",
                &(updates,),
                None,
                |b, s| b.slurm_plugin_priority().call_update_qos(s, updates),
                no_check,
                |j, _| j.qos(updates),
            )
            .map(|_| ())
    }

    /// One PriorityCalcPeriod pass: `running` jobs in full, `pending` jobs by
    /// id (the plugin keeps each as last given to [`PriorityPlugin::set`]).
    /// Returns `(job-id, priority)` pairs: only for jobs of this call, each
    /// once, none 0 (held jobs are not recalculated).
    pub fn calculate(
        &self,
        running: &[Job],
        pending: &[u32],
    ) -> Result<Vec<(u32, u32)>, CallError> {
        let (priorities, _) = self.core.call_journaled(
            "calculate",
            &(running, pending),
            None,
            |b, s| {
                b.slurm_plugin_priority()
                    .call_calculate(s, running, pending)
            },
            |c, _, priorities| c.calculated(running, pending, priorities),
            |j, _| {
                j.usage.push(UsageCall::Calculate {
                    running: running.to_vec(),
                    pending: pending.to_vec(),
                })
            },
        )?;
        self.checkpoint();
        Ok(priorities)
    }

    /// Every association's usage, each once, its figures numbers (see
    /// `Checker::association_usage`).
    pub fn association_usages(&self) -> Result<Vec<AssociationUsage>, CallError> {
        let (usages, _) = self.core.call_checked(
            "association-usages",
            &(),
            None,
            |b, s| b.slurm_plugin_priority().call_association_usages(s),
            |c, _, usages| c.association_usages(usages),
        )?;
        Ok(usages)
    }

    /// Calls `set` as the controller does for each new job, keeping
    /// `lowest_prio` the way slurmctld does (Slurm 22.05.8 src/slurmctld/job_mgr.c `set_job_prio`): after a non-direct,
    /// non-zero priority `p`, `lowest_prio = min(lowest_prio, p + nice)`.
    pub fn assign(&self, lowest_prio: &mut u32, job: &Job) -> Result<u32, CallError> {
        let p = self.set(*lowest_prio, job)?;
        if !job.direct_set_priority {
            let relative =
                (i64::from(p) + i64::from(job.details.nice)).clamp(0, i64::from(u32::MAX)) as u32;
            *lowest_prio = (*lowest_prio).min(relative);
        }
        Ok(p)
    }
}
