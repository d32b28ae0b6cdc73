//! The priority kind as a [`Plugin`] value (see [`crate::plugin`]).

use std::marker::PhantomData;

use crate::identity;
use crate::plugin::HasState;
use crate::priority::{
    AssociationUpdate, AssociationUsage, FactorsRequest, IdentityGuest, PriorityConfig,
    PriorityFactors, PriorityGuest, QosUpdate,
};
use crate::types::{Job, PluginError, PluginIdentity};
use crate::Error;

/// A priority plugin. Only [`Plugin::init`] and [`Plugin::set`] are
/// required; every other function has the default of a plugin that computes
/// priorities at submission only and keeps no usage, as Slurm's
/// priority/basic (`src/plugins/priority/basic/priority_basic.c`).
pub trait Plugin: Sized + Send + 'static {
    /// `plugin_type`, `priority/<name>`.
    const TYPE: &'static str;
    /// `plugin_name`, a human description.
    const NAME: &'static str;

    /// What `describe` answers: [`TYPE`](Self::TYPE) and
    /// [`NAME`](Self::NAME) with this SDK's versions and no required
    /// capabilities ([`crate::identity()`]).
    fn identity() -> PluginIdentity {
        identity(Self::TYPE, Self::NAME)
    }

    /// `init`: the plugin for this configuration. An error refuses to load
    /// (the controller stops, as with a C plugin whose init fails).
    fn init(config: PriorityConfig) -> Result<Self, Error>;

    /// `fini`, before the value is dropped. Default: nothing.
    fn fini(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// `set`: the priority of a new (or re-prioritised) job; `last_prio` is
    /// the controller's lowest priority so far. Never 0 for a job that is
    /// not held (the controller clamps to 1..=0xffffffff). For a job whose
    /// priority was set directly (`--priority`, `scontrol update
    /// Priority=`), [`Export`] answers that priority whatever this returns,
    /// as every Slurm priority plugin does (`priority_p_set` of
    /// priority/basic and priority/multifactor return `job_ptr->priority`
    /// when `direct_set_prio` is set); the plugin still sees the job (to
    /// keep it for `calculate`, say).
    fn set(&mut self, last_prio: u32, job: &Job) -> Result<u32, Error>;

    /// `reconfig`: the configuration changed. Default: nothing, as
    /// priority/basic.
    fn reconfig(
        &mut self,
        _config: PriorityConfig,
        _assoc_clear: bool,
        _running: &[Job],
    ) -> Result<(), Error> {
        Ok(())
    }

    /// `set-assoc-usage` (`sshare`'s figures of one association). Default:
    /// zeros, the figures of a plugin that keeps no usage.
    fn set_assoc_usage(&mut self, assoc_id: u32) -> Result<AssociationUsage, Error> {
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

    /// `get-priority-factors-list` (`sprio`'s rows). Default: none, as
    /// priority/basic (whose sprio has nothing to show).
    fn get_priority_factors_list(
        &mut self,
        _jobs: &[Job],
        _request: &FactorsRequest,
        _uid: u32,
    ) -> Result<Vec<PriorityFactors>, Error> {
        Ok(Vec::new())
    }

    /// `job-end`: charge or release the job's usage. Default: nothing.
    fn job_end(&mut self, _job: &Job) -> Result<(), Error> {
        Ok(())
    }

    /// `recover`, after a controller restart: what to add to the lowest
    /// priority, and new priorities by job id. Default: nothing to add.
    fn recover(&mut self, _boost: u32, _jobs: &[Job]) -> Result<(u32, Vec<(u32, u32)>), Error> {
        Ok((0, Vec::new()))
    }

    /// `update-associations`. Default: ignored (a plugin that reads no
    /// association).
    fn update_associations(&mut self, _updates: Vec<AssociationUpdate>) -> Result<(), Error> {
        Ok(())
    }

    /// `update-qos`. Default: ignored.
    fn update_qos(&mut self, _updates: Vec<QosUpdate>) -> Result<(), Error> {
        Ok(())
    }

    /// `calculate`, the periodic pass: new priorities of pending jobs by id
    /// (ids given to `set` before). Default: none, so priorities stay what
    /// `set` gave, as priority/basic (which has no pass).
    fn calculate(&mut self, _running: &[Job], _pending: &[u32]) -> Result<Vec<(u32, u32)>, Error> {
        Ok(Vec::new())
    }

    /// `association-usages`: the usage table `sshare` reads. Default: empty
    /// (the controller then keeps priority/basic's bookkeeping).
    fn association_usages(&mut self) -> Result<Vec<AssociationUsage>, Error> {
        Ok(Vec::new())
    }

    /// `state-save`. Default: nothing to keep (no bytes).
    fn state_save(&mut self) -> Result<Vec<u8>, Error> {
        Ok(Vec::new())
    }

    /// `state-restore` of what `state-save` wrote; bytes it did not write
    /// are refused (`EINVAL`), never half-applied. Default: accepts the
    /// empty state the default `state-save` writes, refuses anything else.
    fn state_restore(&mut self, data: &[u8]) -> Result<(), Error> {
        no_state(Self::TYPE, data)
    }
}

/// The default `state-restore` of a plugin that keeps no state: the empty
/// state its `state-save` wrote, or `EINVAL` naming the plugin.
pub fn no_state(plugin_type: &str, data: &[u8]) -> Result<(), Error> {
    if data.is_empty() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{plugin_type}: keeps no state, refusing {} bytes",
            data.len()
        )))
    }
}

/// A [`Plugin`] as the `priority-plugin` world's guest: what
/// `export_priority!(plugin P)` exports, and what native tests call.
pub struct Export<P>(PhantomData<P>);

fn with<P: Plugin + HasState, R>(
    f: impl FnOnce(&mut P) -> Result<R, Error>,
) -> Result<R, PluginError> {
    P::state().with(P::TYPE, f).map_err(Into::into)
}

impl<P: Plugin + HasState> IdentityGuest for Export<P> {
    fn describe() -> PluginIdentity {
        P::identity()
    }
}

impl<P: Plugin + HasState> PriorityGuest for Export<P> {
    fn init(config: PriorityConfig) -> Result<(), PluginError> {
        P::state().set(P::init(config)?);
        Ok(())
    }

    /// Calls the plugin's `fini` and drops it; succeeds without one.
    fn fini() -> Result<(), PluginError> {
        P::state().finish(P::fini).map_err(Into::into)
    }

    /// A directly set priority is kept, whatever the plugin answers (see
    /// [`Plugin::set`]).
    fn set(last_prio: u32, job: Job) -> Result<u32, PluginError> {
        let direct = job.direct_set_priority.then_some(job.priority);
        let priority = with(|p: &mut P| p.set(last_prio, &job))?;
        Ok(direct.unwrap_or(priority))
    }

    fn reconfig(
        config: PriorityConfig,
        assoc_clear: bool,
        running: Vec<Job>,
    ) -> Result<(), PluginError> {
        with(|p: &mut P| p.reconfig(config, assoc_clear, &running))
    }

    fn set_assoc_usage(assoc_id: u32) -> Result<AssociationUsage, PluginError> {
        with(|p: &mut P| p.set_assoc_usage(assoc_id))
    }

    fn get_priority_factors_list(
        jobs: Vec<Job>,
        request: FactorsRequest,
        uid: u32,
    ) -> Result<Vec<PriorityFactors>, PluginError> {
        with(|p: &mut P| p.get_priority_factors_list(&jobs, &request, uid))
    }

    fn job_end(job: Job) -> Result<(), PluginError> {
        with(|p: &mut P| p.job_end(&job))
    }

    fn recover(boost: u32, jobs: Vec<Job>) -> Result<(u32, Vec<(u32, u32)>), PluginError> {
        with(|p: &mut P| p.recover(boost, &jobs))
    }

    fn update_associations(updates: Vec<AssociationUpdate>) -> Result<(), PluginError> {
        with(|p: &mut P| p.update_associations(updates))
    }

    fn update_qos(updates: Vec<QosUpdate>) -> Result<(), PluginError> {
        with(|p: &mut P| p.update_qos(updates))
    }

    fn calculate(running: Vec<Job>, pending: Vec<u32>) -> Result<Vec<(u32, u32)>, PluginError> {
        with(|p: &mut P| p.calculate(&running, &pending))
    }

    fn association_usages() -> Result<Vec<AssociationUsage>, PluginError> {
        with(|p: &mut P| p.association_usages())
    }

    fn state_save() -> Result<Vec<u8>, PluginError> {
        with(|p: &mut P| p.state_save())
    }

    fn state_restore(data: Vec<u8>) -> Result<(), PluginError> {
        with(|p: &mut P| p.state_restore(&data))
    }
}
