//! The `gres-plugin` world export shared by gres/gpu and gres/mps.
//!
//! A plugin implements [`GresPlugin`] for its state type and exports
//! [`Export`] over it:
//!
//! ```text
//! impl GresPlugin for Gpu {
//!     fn state() -> &'static PluginState<Self> {
//!         static STATE: PluginState<Gpu> = PluginState::new();
//!         &STATE
//!     }
//!     // … names, entry points …
//! }
//! pub type GresGpu = Export<Gpu>;
//! slurm_wasm_sdk::export_gres!(GresGpu);
//! ```
//!
//! The state lives in the plugin's [`PluginState`] static (the SDK's)
//! between calls, as the C plugins keep theirs in globals: `init` creates
//! it, `fini` drops it, and a call that needs it before `init` fails with
//! `<plugin_type>: called before init`. `job_info` / `step_info` are the
//! SDK's [`allocation_info`] and work at any time. A third-party gres
//! plugin writes the SDK's `gres::Plugin` instead; gres/gpu and gres/mps
//! share this narrower trait because they share their settings, environment
//! and slurmstepd handling.

use std::marker::PhantomData;

use slurm_wasm_sdk::gres::{
    allocation_info, Device, EnvChange, EnvFlags, EpilogEnv, EpilogInfo, EpilogResource,
    GresConfRecord, GresConfig, GresGuest, IdentityGuest, InfoField, InfoValue, NodeAllocation,
    NodeConfigResult, NodeHardware,
};
use slurm_wasm_sdk::plugin::PluginState;
use slurm_wasm_sdk::types::{Bitmap, GresAllocation, Job, PluginError, PluginIdentity, Step};
use slurm_wasm_sdk::{debug, identity, Error};

use crate::env::{EnvCall, Scope};
use crate::Settings;

/// What a GRES plugin supplies to be exported by [`Export`]: its names, its
/// state static and its entry points over the SDK's records. Errors returned
/// here reach the caller as the plugin's error, unchanged.
pub trait GresPlugin: Sized + Send + 'static {
    /// The GRES name the plugin manages (`gpu`, `mps`); `init` reads the
    /// settings for it.
    const NAME: &'static str;
    /// `plugin_type` (`gres/gpu`); prefixes the plugin's messages.
    const PLUGIN_TYPE: &'static str;
    /// `plugin_name`.
    const PLUGIN_NAME: &'static str;
    /// What `epilog_build_env` captures for `epilog_set_env`.
    type Epilog: EpilogEnv;

    /// The static the plugin lives in between calls.
    fn state() -> &'static PluginState<Self>;

    /// The plugin right after `init` with the settings read for
    /// [`Self::NAME`], nothing loaded yet.
    fn new(settings: Settings) -> Self;

    /// `node_config_load` (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_node_config_load`): validates and loads the node's records,
    /// replacing what an earlier load left.
    fn node_config_load(
        &mut self,
        records: &[GresConfRecord],
        node: &NodeHardware,
    ) -> Result<NodeConfigResult, Error>;

    /// `job_set_env`, `step_set_env` and `task_set_env` (Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`).
    fn set_env(&self, call: EnvCall<'_>) -> Result<Vec<EnvChange>, Error>;

    /// `send_stepd` (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_send_stepd`/`gres_p_recv_stepd`): the bytes slurmd hands to slurmstepd.
    fn send_stepd(&self) -> Vec<u8>;

    /// `recv_stepd` (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_send_stepd`/`gres_p_recv_stepd`): replaces the loaded state with the bytes
    /// `send_stepd` wrote; malformed bytes leave the state unchanged.
    fn recv_stepd(&mut self, data: &[u8]) -> Result<(), Error>;

    /// `get_devices`: the node's device list.
    fn devices(&self) -> &[Device];

    /// `epilog_build_env`: the job's allocations of this GRES; none when the
    /// job has none.
    fn epilog_build_env(&self, job: &Job) -> Result<Option<Self::Epilog>, Error>;

    /// `step_context`: records the step this node runs.
    fn step_context(&mut self, step: Step);

    /// `step_hardware_init` (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_step_hardware_init`). The default does nothing and
    /// succeeds, even before `init`, as Slurm's plugins without hardware to
    /// set up (gres/mps) do.
    fn step_hardware_init(_usable: Option<&Bitmap>, _tres_freq: Option<&str>) -> Result<(), Error> {
        Ok(())
    }

    /// `step_hardware_fini` (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_step_hardware_fini`). The default does nothing and
    /// succeeds, even before `init`, like [`Self::step_hardware_init`].
    fn step_hardware_fini() -> Result<(), Error> {
        Ok(())
    }
}

fn with<P: GresPlugin, R>(f: impl FnOnce(&mut P) -> Result<R, Error>) -> Result<R, PluginError> {
    P::state().with(P::PLUGIN_TYPE, f).map_err(Into::into)
}

/// A [`GresPlugin`] exported through the `gres-plugin` world (see the module
/// documentation).
pub struct Export<P>(PhantomData<P>);

impl<P: GresPlugin> IdentityGuest for Export<P> {
    fn describe() -> PluginIdentity {
        identity(P::PLUGIN_TYPE, P::PLUGIN_NAME)
    }
}

impl<P: GresPlugin> GresGuest for Export<P> {
    type EpilogInfo = EpilogResource<P::Epilog>;

    /// Reads the settings for [`GresPlugin::NAME`] (failing on a value
    /// Slurm 22.05 refuses) and replaces any earlier state.
    fn init(config: GresConfig) -> Result<(), PluginError> {
        let settings = Settings::from_config(P::NAME, &config)?;
        debug!("{}: init ({settings:?})", P::PLUGIN_TYPE);
        P::state().set(P::new(settings));
        Ok(())
    }

    /// Drops the state; succeeds even when there is none.
    fn fini() -> Result<(), PluginError> {
        debug!("{}: fini", P::PLUGIN_TYPE);
        P::state().take();
        Ok(())
    }

    fn node_config_load(
        records: Vec<GresConfRecord>,
        node: NodeHardware,
    ) -> Result<NodeConfigResult, PluginError> {
        with(|p: &mut P| p.node_config_load(&records, &node))
    }

    fn job_set_env(
        allocation: Option<GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        with(|p: &mut P| p.set_env(EnvCall::new(Scope::Job, allocation.as_ref(), None, flags)))
    }

    fn step_set_env(
        allocation: Option<GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        with(|p: &mut P| p.set_env(EnvCall::new(Scope::Step, allocation.as_ref(), None, flags)))
    }

    fn task_set_env(
        allocation: Option<NodeAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        let (allocation, usable) = match &allocation {
            Some(a) => (Some(&a.allocation), a.usable.as_ref()),
            None => (None, None),
        };
        with(|p: &mut P| p.set_env(EnvCall::new(Scope::Task, allocation, usable, flags)))
    }

    fn send_stepd() -> Result<Vec<u8>, PluginError> {
        with(|p: &mut P| Ok(p.send_stepd()))
    }

    fn recv_stepd(data: Vec<u8>) -> Result<(), PluginError> {
        with(|p: &mut P| p.recv_stepd(&data))
    }

    fn job_info(allocation: GresAllocation, field: InfoField) -> Result<InfoValue, PluginError> {
        allocation_info(&allocation, field).map_err(Into::into)
    }

    fn step_info(allocation: GresAllocation, field: InfoField) -> Result<InfoValue, PluginError> {
        allocation_info(&allocation, field).map_err(Into::into)
    }

    fn get_devices() -> Result<Vec<Device>, PluginError> {
        with(|p: &mut P| Ok(p.devices().to_vec()))
    }

    fn step_hardware_init(
        usable: Option<Bitmap>,
        tres_freq: Option<String>,
    ) -> Result<(), PluginError> {
        P::step_hardware_init(usable.as_ref(), tres_freq.as_deref()).map_err(Into::into)
    }

    fn step_hardware_fini() -> Result<(), PluginError> {
        P::step_hardware_fini().map_err(Into::into)
    }

    fn epilog_build_env(job: Job) -> Result<Option<EpilogInfo>, PluginError> {
        with(|p: &mut P| p.epilog_build_env(&job))
            .map(|e| e.map(|e| EpilogInfo::new(EpilogResource(e))))
    }

    fn step_context(step: Step) -> Result<(), PluginError> {
        with(|p: &mut P| {
            p.step_context(step);
            Ok(())
        })
    }
}
