//! The typed priority API: [`PriorityPlugin`].

use crate::bindings::priority::exports::slurm::plugin::priority as wit;
use crate::bindings::priority::{PriorityPlugin as World, PriorityPluginPre as WorldPre};
use crate::bindings::types::Job;
use crate::engine::Host;
use crate::error::{CallError, LoadError};
use crate::plugin::{PluginCore, PluginSettings, PluginSource};
use crate::validate::Checker;

pub use wit::{
    AssociationUpdate, AssociationUsage, FactorsRequest, PriorityConfig, PriorityFactors, QosUpdate,
};

super::plugin_kind! {
    handle: PriorityPlugin,
    kind: PriorityKind,
    slot: Priority,
    linker: priority,
    world: World,
    pre: WorldPre,
    interface: slurm_plugin_priority,
    config: PriorityConfig,
    restore: |b, store, data| b.slurm_plugin_priority().call_state_restore(store, data),
}

super::plugin_state! {
    handle: PriorityPlugin,
    interface: slurm_plugin_priority,
}

/// A loaded priority plugin. Every method is one contract call under the
/// plugin's limits; faults follow its failure policy.
pub struct PriorityPlugin {
    core: PluginCore<PriorityKind>,
}

impl PriorityPlugin {
    /// Loads and checks a priority plugin (see [`Host`] for what is checked).
    pub fn load(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        Ok(PriorityPlugin {
            core: PluginCore::load(host, source, settings)?,
        })
    }

    fn checker(&self, function: &'static str) -> (std::sync::Arc<str>, &'static str) {
        (self.core.plugin_type(), function)
    }

    /// `priority_p_set`; a result of 0 (held) is refused: plugins return 1..=u32::MAX.
    pub fn set(&self, last_prio: u32, job: &Job) -> Result<u32, CallError> {
        let (p, _) = self.core.call("set", None, |b, s| {
            b.slurm_plugin_priority().call_set(s, last_prio, job)
        })?;
        if p == 0 {
            let (plugin, function) = self.checker("set");
            return Err(Checker {
                plugin: &plugin,
                function,
            }
            .fail(format!("priority 0 for job {} (0 means held)", job.job_id)));
        }
        Ok(p)
    }

    pub fn reconfig(
        &self,
        config: &PriorityConfig,
        assoc_clear: bool,
        running: &[Job],
    ) -> Result<(), CallError> {
        self.core.call("reconfig", None, |b, s| {
            b.slurm_plugin_priority()
                .call_reconfig(s, config, assoc_clear, running)
        })?;
        self.core.remember_config(config);
        Ok(())
    }

    pub fn set_assoc_usage(&self, assoc_id: u32) -> Result<AssociationUsage, CallError> {
        let (u, _) = self.core.call("set-assoc-usage", None, |b, s| {
            b.slurm_plugin_priority().call_set_assoc_usage(s, assoc_id)
        })?;
        let (plugin, function) = self.checker("set-assoc-usage");
        let c = Checker {
            plugin: &plugin,
            function,
        };
        for (name, v) in [
            ("usage-norm", u.usage_norm),
            ("usage-effective", u.usage_effective),
            ("shares-norm", u.shares_norm),
            ("fair-share", u.fair_share),
        ] {
            c.factor(name, v)?;
        }
        Ok(u)
    }

    /// `priority_p_get_priority_factors_list`; every weighted factor must be
    /// finite and not negative.
    pub fn get_priority_factors_list(
        &self,
        jobs: &[Job],
        request: &FactorsRequest,
        uid: u32,
    ) -> Result<Vec<PriorityFactors>, CallError> {
        let (rows, _) = self.core.call("get-priority-factors-list", None, |b, s| {
            b.slurm_plugin_priority()
                .call_get_priority_factors_list(s, jobs, request, uid)
        })?;
        let (plugin, function) = self.checker("get-priority-factors-list");
        let c = Checker {
            plugin: &plugin,
            function,
        };
        c.items("rows", rows.len())?;
        for row in &rows {
            for (name, v) in [
                ("age", row.age),
                ("association", row.association),
                ("fair-share", row.fair_share),
                ("job-size", row.job_size),
                ("partition", row.partition_factor),
                ("qos", row.qos_factor),
            ] {
                c.factor(name, v)?;
            }
            for (name, v) in &row.tres {
                c.factor(name, *v)?;
            }
        }
        Ok(rows)
    }

    pub fn job_end(&self, job: &Job) -> Result<(), CallError> {
        self.core
            .call("job-end", None, |b, s| {
                b.slurm_plugin_priority().call_job_end(s, job)
            })
            .map(|_| ())
    }

    /// `priority_p_recover`: the boost to add to `lowest_prio` and the new
    /// priorities of the jobs it changed.
    pub fn recover(&self, boost: u32, jobs: &[Job]) -> Result<(u32, Vec<(u32, u32)>), CallError> {
        self.core
            .call("recover", None, |b, s| {
                b.slurm_plugin_priority().call_recover(s, boost, jobs)
            })
            .map(|(r, _)| r)
    }

    pub fn update_associations(&self, updates: &[AssociationUpdate]) -> Result<(), CallError> {
        self.core
            .call("update-associations", None, |b, s| {
                b.slurm_plugin_priority()
                    .call_update_associations(s, updates)
            })
            .map(|_| ())
    }

    pub fn update_qos(&self, updates: &[QosUpdate]) -> Result<(), CallError> {
        self.core
            .call("update-qos", None, |b, s| {
                b.slurm_plugin_priority().call_update_qos(s, updates)
            })
            .map(|_| ())
    }

    /// One PriorityCalcPeriod pass: `running` jobs in full, `pending` jobs by
    /// id (the plugin keeps each as last given to [`PriorityPlugin::set`]).
    /// Returns `(job-id, priority)` pairs.
    pub fn calculate(
        &self,
        running: &[Job],
        pending: &[u32],
    ) -> Result<Vec<(u32, u32)>, CallError> {
        self.core
            .call("calculate", None, |b, s| {
                b.slurm_plugin_priority()
                    .call_calculate(s, running, pending)
            })
            .map(|(r, _)| r)
    }

    pub fn association_usages(&self) -> Result<Vec<AssociationUsage>, CallError> {
        self.core
            .call("association-usages", None, |b, s| {
                b.slurm_plugin_priority().call_association_usages(s)
            })
            .map(|(r, _)| r)
    }

    /// Calls `set` as the controller does for each new job, keeping
    /// `lowest_prio` the way slurmctld does (spec 4.1): after a non-direct,
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
