//! The `gres-plugin` world export of gres/mps.
//!
//! The [`Mps`] state lives in a static between calls (`init` creates it,
//! `fini` drops it); a call before `init` fails with a clear error.

use std::sync::Mutex;

use slurm_wasm_sdk::gres::{
    Device, EnvChange, EnvFlags, EpilogInfo, GresConfRecord, GresConfig, GresGuest,
    GuestEpilogInfo, IdentityGuest, InfoField, InfoValue, NodeAllocation, NodeConfigResult,
    NodeHardware,
};
use slurm_wasm_sdk::types::{Bitmap, GresAllocation, Job, PluginError, PluginIdentity, Step};
use slurm_wasm_sdk::{debug, identity, Error};

use gres_common::alloc::info;
use gres_common::env::Scope;
use gres_common::Settings;

use crate::{Mps, MpsEpilog, NAME, PLUGIN_NAME, PLUGIN_TYPE};

static STATE: Mutex<Option<Mps>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Mps) -> Result<R, Error>) -> Result<R, PluginError> {
    let mut state = STATE.lock().unwrap_or_else(|p| p.into_inner());
    match state.as_mut() {
        Some(mps) => f(mps).map_err(Into::into),
        None => Err(Error::generic(format!("{PLUGIN_TYPE}: called before init")).into()),
    }
}

/// gres/mps, exported as a component.
pub struct GresMps;

impl IdentityGuest for GresMps {
    fn describe() -> PluginIdentity {
        identity(PLUGIN_TYPE, PLUGIN_NAME)
    }
}

impl GuestEpilogInfo for MpsEpilog {
    fn set_env(&self, node_index: u32) -> Result<Vec<EnvChange>, PluginError> {
        MpsEpilog::set_env(self, node_index).map_err(Into::into)
    }
}

impl GresGuest for GresMps {
    type EpilogInfo = MpsEpilog;

    fn init(config: GresConfig) -> Result<(), PluginError> {
        let settings = Settings::from_config(NAME, &config)?;
        debug!("{PLUGIN_TYPE}: init ({settings:?})");
        *STATE.lock().unwrap_or_else(|p| p.into_inner()) = Some(Mps::new(settings));
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        debug!("{PLUGIN_TYPE}: fini");
        STATE.lock().unwrap_or_else(|p| p.into_inner()).take();
        Ok(())
    }

    fn node_config_load(
        records: Vec<GresConfRecord>,
        node: NodeHardware,
    ) -> Result<NodeConfigResult, PluginError> {
        with(|mps| mps.node_config_load(&records, &node))
    }

    fn job_set_env(
        allocation: Option<GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        with(|mps| mps.set_env(Scope::Job, allocation.as_ref(), None, flags))
    }

    fn step_set_env(
        allocation: Option<GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        with(|mps| mps.set_env(Scope::Step, allocation.as_ref(), None, flags))
    }

    fn task_set_env(
        allocation: Option<NodeAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        with(|mps| {
            mps.set_env(
                Scope::Task,
                allocation.as_ref().map(|a| &a.allocation),
                allocation.as_ref().and_then(|a| a.usable.as_ref()),
                flags,
            )
        })
    }

    fn send_stepd() -> Result<Vec<u8>, PluginError> {
        with(|mps| Ok(mps.send_stepd()))
    }

    fn recv_stepd(data: Vec<u8>) -> Result<(), PluginError> {
        with(|mps| mps.recv_stepd(&data))
    }

    fn job_info(allocation: GresAllocation, field: InfoField) -> Result<InfoValue, PluginError> {
        info(&allocation, field).map_err(Into::into)
    }

    fn step_info(allocation: GresAllocation, field: InfoField) -> Result<InfoValue, PluginError> {
        info(&allocation, field).map_err(Into::into)
    }

    fn get_devices() -> Result<Vec<Device>, PluginError> {
        with(|mps| Ok(mps.devices.clone()))
    }

    /// Does nothing, like Slurm's gres/mps (clocks belong to gres/gpu, and
    /// MPS cannot be combined with `--gpu-freq`).
    fn step_hardware_init(
        _usable: Option<Bitmap>,
        _tres_freq: Option<String>,
    ) -> Result<(), PluginError> {
        Ok(())
    }

    /// Does nothing, like Slurm's gres/mps.
    fn step_hardware_fini() -> Result<(), PluginError> {
        Ok(())
    }

    fn epilog_build_env(job: Job) -> Result<Option<EpilogInfo>, PluginError> {
        with(|mps| mps.epilog_build_env(&job)).map(|e| e.map(EpilogInfo::new))
    }

    fn step_context(step: Step) -> Result<(), PluginError> {
        with(|mps| {
            mps.step = Some(step);
            Ok(())
        })
    }
}

slurm_wasm_sdk::export_gres!(GresMps);
