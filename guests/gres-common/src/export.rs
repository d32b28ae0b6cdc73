//! The `gres-plugin` world export shared by gres/gpu and gres/mps.
//!
//! A plugin implements [`GresPlugin`] for its state type and exports it
//! with [`export_gres_plugin!`](crate::export_gres_plugin):
//!
//! ```text
//! impl GresPlugin for Gpu {
//!     fn state() -> &'static PluginState<Self> {
//!         static STATE: PluginState<Gpu> = PluginState::new();
//!         &STATE
//!     }
//!     // … names, entry points …
//! }
//! gres_common::export_gres_plugin!(Gpu);
//! ```
//!
//! The macro makes the type the SDK's [`gres::Plugin`](slurm_wasm_sdk::gres::Plugin), exported
//! through the SDK's `gres::Export` (the state lives in the plugin's
//! [`PluginState`] static between calls, as the C plugins keep theirs in
//! globals: `init` creates it, `fini` drops it, and a call that needs it
//! before `init` fails with `<plugin_type>: called before init`); the
//! methods it writes are the functions below. `job_info` / `step_info` are
//! the SDK's defaults and work at any time. A third-party gres plugin
//! writes the SDK's `gres::Plugin` itself; gres/gpu and gres/mps share this
//! narrower trait because they share their settings, environment and
//! slurmstepd handling.

use slurm_wasm_sdk::gres::{
    Device, EnvChange, EnvFlags, EpilogEnv, GresConfRecord, GresConfig, NodeAllocation,
    NodeConfigResult, NodeHardware,
};
use slurm_wasm_sdk::plugin::PluginState;
use slurm_wasm_sdk::types::{Bitmap, GresAllocation, Job, Step};
use slurm_wasm_sdk::{debug, Error};

use crate::env::{EnvCall, Scope};
use crate::Settings;

/// What a GRES plugin supplies to be exported by [`export_gres_plugin!`]:
/// its names, its state static and its entry points over the SDK's records. Errors returned
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

/// `init`: the settings for [`GresPlugin::NAME`] (failing on a value Slurm
/// 22.05 refuses), then the plugin with nothing loaded.
pub fn init<P: GresPlugin>(config: &GresConfig) -> Result<P, Error> {
    let settings = Settings::from_config(P::NAME, config)?;
    debug!("{}: init ({settings:?})", P::PLUGIN_TYPE);
    Ok(P::new(settings))
}

/// `fini`: logs; the SDK drops the state.
pub fn fini<P: GresPlugin>() {
    debug!("{}: fini", P::PLUGIN_TYPE);
}

/// `job-set-env`, `step-set-env` and `task-set-env` (`usable`: the task's
/// devices) as one [`GresPlugin::set_env`] call.
pub fn set_env<P: GresPlugin>(
    plugin: &P,
    scope: Scope,
    allocation: Option<&GresAllocation>,
    usable: Option<&Bitmap>,
    flags: EnvFlags,
) -> Result<Vec<EnvChange>, Error> {
    plugin.set_env(EnvCall::new(scope, allocation, usable, flags))
}

/// `task-set-env`'s allocation and usable devices.
pub fn task_allocation(
    allocation: Option<&NodeAllocation>,
) -> (Option<&GresAllocation>, Option<&Bitmap>) {
    match allocation {
        Some(a) => (Some(&a.allocation), a.usable.as_ref()),
        None => (None, None),
    }
}

/// Makes `$ty`, a [`GresPlugin`], the SDK's `gres::Plugin` (each function the
/// [`GresPlugin`] one, through [`init`], [`fini`] and [`set_env`]) with its
/// [`GresPlugin::state`] as the SDK's state static, and exports it through
/// the SDK's `gres::Export` (on `wasm32` only, as `export_gres!`).
#[macro_export]
macro_rules! export_gres_plugin {
    ($ty:ty) => {
        impl $crate::__sdk::plugin::HasState for $ty {
            fn state() -> &'static $crate::__sdk::plugin::PluginState<Self> {
                <$ty as $crate::GresPlugin>::state()
            }
        }

        impl $crate::__sdk::gres::Plugin for $ty {
            const TYPE: &'static str = <$ty as $crate::GresPlugin>::PLUGIN_TYPE;
            const NAME: &'static str = <$ty as $crate::GresPlugin>::PLUGIN_NAME;
            type Epilog = <$ty as $crate::GresPlugin>::Epilog;

            fn init(config: $crate::__sdk::gres::GresConfig) -> Result<Self, $crate::__sdk::Error> {
                $crate::export::init(&config)
            }

            fn fini(&mut self) -> Result<(), $crate::__sdk::Error> {
                $crate::export::fini::<$ty>();
                Ok(())
            }

            fn node_config_load(
                &mut self,
                records: Vec<$crate::__sdk::gres::GresConfRecord>,
                node: &$crate::__sdk::gres::NodeHardware,
            ) -> Result<$crate::__sdk::gres::NodeConfigResult, $crate::__sdk::Error> {
                $crate::GresPlugin::node_config_load(self, &records, node)
            }

            fn job_set_env(
                &mut self,
                allocation: Option<&$crate::__sdk::types::GresAllocation>,
                flags: $crate::__sdk::gres::EnvFlags,
            ) -> Result<Vec<$crate::__sdk::gres::EnvChange>, $crate::__sdk::Error> {
                let scope = $crate::env::Scope::Job;
                $crate::export::set_env(self, scope, allocation, None, flags)
            }

            fn step_set_env(
                &mut self,
                allocation: Option<&$crate::__sdk::types::GresAllocation>,
                flags: $crate::__sdk::gres::EnvFlags,
            ) -> Result<Vec<$crate::__sdk::gres::EnvChange>, $crate::__sdk::Error> {
                let scope = $crate::env::Scope::Step;
                $crate::export::set_env(self, scope, allocation, None, flags)
            }

            fn task_set_env(
                &mut self,
                allocation: Option<&$crate::__sdk::gres::NodeAllocation>,
                flags: $crate::__sdk::gres::EnvFlags,
            ) -> Result<Vec<$crate::__sdk::gres::EnvChange>, $crate::__sdk::Error> {
                let (allocation, usable) = $crate::export::task_allocation(allocation);
                let scope = $crate::env::Scope::Task;
                $crate::export::set_env(self, scope, allocation, usable, flags)
            }

            fn send_stepd(&mut self) -> Result<Vec<u8>, $crate::__sdk::Error> {
                Ok($crate::GresPlugin::send_stepd(self))
            }

            fn recv_stepd(&mut self, data: &[u8]) -> Result<(), $crate::__sdk::Error> {
                $crate::GresPlugin::recv_stepd(self, data)
            }

            fn get_devices(
                &mut self,
            ) -> Result<Vec<$crate::__sdk::gres::Device>, $crate::__sdk::Error> {
                Ok($crate::GresPlugin::devices(self).to_vec())
            }

            fn step_hardware_init(
                usable: Option<&$crate::__sdk::types::Bitmap>,
                tres_freq: Option<&str>,
            ) -> Result<(), $crate::__sdk::Error> {
                <$ty as $crate::GresPlugin>::step_hardware_init(usable, tres_freq)
            }

            fn step_hardware_fini() -> Result<(), $crate::__sdk::Error> {
                <$ty as $crate::GresPlugin>::step_hardware_fini()
            }

            fn epilog_build_env(
                &mut self,
                job: &$crate::__sdk::types::Job,
            ) -> Result<Option<Self::Epilog>, $crate::__sdk::Error> {
                $crate::GresPlugin::epilog_build_env(self, job)
            }

            fn step_context(
                &mut self,
                step: $crate::__sdk::types::Step,
            ) -> Result<(), $crate::__sdk::Error> {
                $crate::GresPlugin::step_context(self, step);
                Ok(())
            }
        }

        #[cfg(target_arch = "wasm32")]
        type __SlurmWasmGresExport = $crate::__sdk::gres::Export<$ty>;
        $crate::__sdk::export_gres!(__SlurmWasmGresExport);
    };
}
