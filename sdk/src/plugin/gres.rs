//! The gres kind as a [`Plugin`] value (see [`crate::plugin`]).

use std::marker::PhantomData;

use crate::codes::EINVAL;
use crate::gres::{
    Device, EnvChange, EnvFlags, EpilogInfo, GresConfRecord, GresConfig, GresGuest,
    GuestEpilogInfo, IdentityGuest, InfoField, InfoValue, NodeAllocation, NodeConfigResult,
    NodeHardware,
};
use crate::identity;
use crate::plugin::HasState;
use crate::types::{self, GresAllocation, Job, PluginError, PluginIdentity, Step};
use crate::{Bitmap, Error};

/// `job-info` / `step-info` as every Slurm gres plugin answers them
/// (`gres_get_job_info`/`gres_get_step_info` of Slurm's gres.c read the
/// allocation alone): the allocated count, or the device bitmap (`EINVAL`
/// for an allocation without one, or one that breaks the contract's rules).
pub fn allocation_info(allocation: &GresAllocation, field: InfoField) -> Result<InfoValue, Error> {
    match field {
        InfoField::Count => Ok(InfoValue::Count(allocation.count)),
        InfoField::Bitmap => match &allocation.devices {
            Some(map) => {
                Bitmap::try_from(map).map_err(|e| {
                    Error::invalid(format!("gres allocation devices: {}", e.message))
                })?;
                Ok(InfoValue::Devices(map.clone()))
            }
            None => Err(Error::new(
                EINVAL,
                format!("gres/{} allocation has no device bitmap", allocation.name),
            )),
        },
    }
}

/// `epilog-set-env` of what [`Plugin::epilog_build_env`] captured.
pub trait EpilogEnv: 'static {
    /// The environment edits for node `node_index` of the job (an index into
    /// the job's allocated nodes); an error past the job's nodes.
    fn set_env(&self, node_index: u32) -> Result<Vec<EnvChange>, Error>;
}

/// The [`Plugin::Epilog`] of a plugin that sets no epilog environment.
pub enum NoEpilog {}

impl EpilogEnv for NoEpilog {
    fn set_env(&self, _node_index: u32) -> Result<Vec<EnvChange>, Error> {
        match *self {}
    }
}

/// The `epilog-info` resource over what a plugin captured.
pub struct EpilogResource<E>(pub E);

impl<E: EpilogEnv> GuestEpilogInfo for EpilogResource<E> {
    fn set_env(&self, node_index: u32) -> Result<Vec<EnvChange>, PluginError> {
        self.0.set_env(node_index).map_err(Into::into)
    }
}

/// A gres plugin. Only [`Plugin::init`] is required; every other function
/// has the default of a GRES without devices or environment (a count-only
/// GRES such as Slurm's gres/nic): records kept as gres.conf gives them,
/// no environment, no devices, nothing passed to slurmstepd.
pub trait Plugin: Sized + Send + 'static {
    /// `plugin_type`, `gres/<name>`: the GRES name the plugin serves.
    const TYPE: &'static str;
    /// `plugin_name`, a human description.
    const NAME: &'static str;
    /// What `epilog_build_env` captures ([`NoEpilog`] for none).
    type Epilog: EpilogEnv;

    /// What `describe` answers: [`TYPE`](Self::TYPE) and
    /// [`NAME`](Self::NAME) with this SDK's versions and no required
    /// capabilities.
    fn identity() -> PluginIdentity {
        identity(Self::TYPE, Self::NAME)
    }

    /// `init`. An error refuses to load.
    fn init(config: GresConfig) -> Result<Self, Error>;

    /// `fini`, before the value is dropped. Default: nothing.
    fn fini(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// `node-config-load`: validate and merge the node's gres.conf records.
    /// Default: the records as given, no warnings.
    fn node_config_load(
        &mut self,
        records: Vec<GresConfRecord>,
        _node: &NodeHardware,
    ) -> Result<NodeConfigResult, Error> {
        Ok(NodeConfigResult {
            records,
            warnings: Vec::new(),
        })
    }

    /// `job-set-env`. Default: no change.
    fn job_set_env(
        &mut self,
        _allocation: Option<&GresAllocation>,
        _flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, Error> {
        Ok(Vec::new())
    }

    /// `step-set-env`. Default: no change.
    fn step_set_env(
        &mut self,
        _allocation: Option<&GresAllocation>,
        _flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, Error> {
        Ok(Vec::new())
    }

    /// `task-set-env` (in the forked task). Default: no change.
    fn task_set_env(
        &mut self,
        _allocation: Option<&NodeAllocation>,
        _flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, Error> {
        Ok(Vec::new())
    }

    /// `send-stepd`: bytes slurmd hands to slurmstepd. Default: none.
    fn send_stepd(&mut self) -> Result<Vec<u8>, Error> {
        Ok(Vec::new())
    }

    /// `recv-stepd` of what `send-stepd` wrote. Default: ignored.
    fn recv_stepd(&mut self, _data: &[u8]) -> Result<(), Error> {
        Ok(())
    }

    /// `job-info`, at any time (no state). Default: [`allocation_info`].
    fn job_info(allocation: &GresAllocation, field: InfoField) -> Result<InfoValue, Error> {
        allocation_info(allocation, field)
    }

    /// `step-info`, at any time. Default: [`allocation_info`].
    fn step_info(allocation: &GresAllocation, field: InfoField) -> Result<InfoValue, Error> {
        allocation_info(allocation, field)
    }

    /// `get-devices`. Default: none.
    fn get_devices(&mut self) -> Result<Vec<Device>, Error> {
        Ok(Vec::new())
    }

    /// `step-hardware-init`, at any time (`--gpu-freq`). Default: nothing.
    fn step_hardware_init(
        _usable: Option<&types::Bitmap>,
        _tres_freq: Option<&str>,
    ) -> Result<(), Error> {
        Ok(())
    }

    /// `step-hardware-fini`, at any time. Default: nothing.
    fn step_hardware_fini() -> Result<(), Error> {
        Ok(())
    }

    /// `epilog-build-env`: what the epilog's environment needs of the job.
    /// Default: nothing.
    fn epilog_build_env(&mut self, _job: &Job) -> Result<Option<Self::Epilog>, Error> {
        Ok(None)
    }

    /// `step-context`: the step this node runs. Default: ignored.
    fn step_context(&mut self, _step: Step) -> Result<(), Error> {
        Ok(())
    }
}

/// A [`Plugin`] as the `gres-plugin` world's guest: what
/// `export_gres!(plugin P)` exports, and what native tests call.
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

impl<P: Plugin + HasState> GresGuest for Export<P> {
    type EpilogInfo = EpilogResource<P::Epilog>;

    fn init(config: GresConfig) -> Result<(), PluginError> {
        P::state().set(P::init(config)?);
        Ok(())
    }

    /// Calls the plugin's `fini` and drops it; succeeds without one.
    fn fini() -> Result<(), PluginError> {
        P::state().finish(P::fini).map_err(Into::into)
    }

    fn node_config_load(
        records: Vec<GresConfRecord>,
        node: NodeHardware,
    ) -> Result<NodeConfigResult, PluginError> {
        with(|p: &mut P| p.node_config_load(records, &node))
    }

    fn job_set_env(
        allocation: Option<GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        with(|p: &mut P| p.job_set_env(allocation.as_ref(), flags))
    }

    fn step_set_env(
        allocation: Option<GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        with(|p: &mut P| p.step_set_env(allocation.as_ref(), flags))
    }

    fn task_set_env(
        allocation: Option<NodeAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, PluginError> {
        with(|p: &mut P| p.task_set_env(allocation.as_ref(), flags))
    }

    fn send_stepd() -> Result<Vec<u8>, PluginError> {
        with(|p: &mut P| p.send_stepd())
    }

    fn recv_stepd(data: Vec<u8>) -> Result<(), PluginError> {
        with(|p: &mut P| p.recv_stepd(&data))
    }

    fn job_info(allocation: GresAllocation, field: InfoField) -> Result<InfoValue, PluginError> {
        P::job_info(&allocation, field).map_err(Into::into)
    }

    fn step_info(allocation: GresAllocation, field: InfoField) -> Result<InfoValue, PluginError> {
        P::step_info(&allocation, field).map_err(Into::into)
    }

    fn get_devices() -> Result<Vec<Device>, PluginError> {
        with(|p: &mut P| p.get_devices())
    }

    fn step_hardware_init(
        usable: Option<types::Bitmap>,
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
        with(|p: &mut P| p.step_context(step))
    }
}
