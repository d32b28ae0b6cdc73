//! `priority/hostile`: a priority plugin that keeps a small real world and
//! misbehaves on request. Never load it outside tests.
//!
//! It exists for the host's containment tests (issue 26):
//!
//! * **The world** ([`world::World`]): it remembers the configuration of
//!   `init` (`set` fails with "init was never called" without it), the
//!   association tree and QOS table of the updates, and each job as `set`
//!   prioritised it (FIFO, as priority/basic without nice). `calculate`
//!   answers the kept priorities; `association-usages` lists every
//!   association it was given; `get-priority-factors-list` shows each job's
//!   partition by the name `init` gave it and its association's account.
//! * **The misbehaviours** ([`behaviour::Behaviour`]), named by a job's
//!   `name` or an association's `account`: each bends one answer the host
//!   must refuse (`calc-stranger`, `recover-max`, `usage-nan`, ...), or
//!   traps (`trap`) or spins (`loop`). `init` traps when the cluster is
//!   named `trap`.

pub mod behaviour;
pub mod world;

use std::sync::{Mutex, MutexGuard};

use slurm_wasm_sdk::priority::{
    AssociationUpdate, AssociationUsage, FactorsRequest, IdentityGuest, PriorityConfig,
    PriorityFactors, PriorityGuest, QosUpdate,
};
use slurm_wasm_sdk::types::{Job, PluginError, PluginIdentity};
use slurm_wasm_sdk::{identity, Error};

use world::World;

/// The cluster name that makes `init` trap.
pub const TRAP_CLUSTER: &str = "trap";

/// The instance's world; empty until `init`, and after `fini`.
static WORLD: Mutex<Option<World>> = Mutex::new(None);

fn world() -> MutexGuard<'static, Option<World>> {
    WORLD.lock().unwrap_or_else(|p| p.into_inner())
}

fn with<R>(f: impl FnOnce(&mut World) -> Result<R, Error>) -> Result<R, PluginError> {
    f(world().get_or_insert_with(World::default)).map_err(Into::into)
}

/// priority/hostile, exported as a component.
pub struct HostilePriority;

impl IdentityGuest for HostilePriority {
    fn describe() -> PluginIdentity {
        identity(
            "priority/hostile",
            "hostile priority plugin (containment tests)",
        )
    }
}

impl PriorityGuest for HostilePriority {
    /// Remembers the configuration; traps for the cluster [`TRAP_CLUSTER`].
    fn init(config: PriorityConfig) -> Result<(), PluginError> {
        if config.cluster.cluster_name == TRAP_CLUSTER {
            panic!("priority/hostile: deliberate trap in init");
        }
        with(|w| {
            w.config = Some(config);
            Ok(())
        })
    }

    fn fini() -> Result<(), PluginError> {
        *world() = None;
        Ok(())
    }

    fn set(last_prio: u32, job: Job) -> Result<u32, PluginError> {
        with(|w| w.set(last_prio, &job))
    }

    fn reconfig(
        config: PriorityConfig,
        _assoc_clear: bool,
        _running: Vec<Job>,
    ) -> Result<(), PluginError> {
        with(|w| {
            w.config = Some(config);
            Ok(())
        })
    }

    fn set_assoc_usage(assoc_id: u32) -> Result<AssociationUsage, PluginError> {
        with(|w| w.usage(assoc_id))
    }

    /// Every job's row; the request's filters and `uid` are not applied.
    fn get_priority_factors_list(
        jobs: Vec<Job>,
        _request: FactorsRequest,
        _uid: u32,
    ) -> Result<Vec<PriorityFactors>, PluginError> {
        with(|w| Ok(w.factors(&jobs)))
    }

    fn job_end(job: Job) -> Result<(), PluginError> {
        with(|w| {
            w.job_end(job.job_id);
            Ok(())
        })
    }

    fn recover(boost: u32, jobs: Vec<Job>) -> Result<(u32, Vec<(u32, u32)>), PluginError> {
        with(|w| Ok(w.recover(boost, &jobs)))
    }

    fn update_associations(updates: Vec<AssociationUpdate>) -> Result<(), PluginError> {
        with(|w| {
            w.update_associations(updates);
            Ok(())
        })
    }

    fn update_qos(updates: Vec<QosUpdate>) -> Result<(), PluginError> {
        with(|w| {
            w.update_qos(updates);
            Ok(())
        })
    }

    fn calculate(_running: Vec<Job>, pending: Vec<u32>) -> Result<Vec<(u32, u32)>, PluginError> {
        with(|w| w.calculate(&pending))
    }

    fn association_usages() -> Result<Vec<AssociationUsage>, PluginError> {
        with(|w| Ok(w.usages()))
    }

    fn state_save() -> Result<Vec<u8>, PluginError> {
        with(|w| Ok(w.state_save()))
    }

    /// Accepted and not read: the tree comes back through
    /// `update-associations`.
    fn state_restore(_data: Vec<u8>) -> Result<(), PluginError> {
        Ok(())
    }
}

slurm_wasm_sdk::export_priority!(HostilePriority);
