//! The typed gres API: [`GresPlugin`]. Answers are checked before a caller
//! sees them: environment edits touch only the variables a gres plugin may
//! set, device files are the node's GPUs, counts and bitmaps stay within
//! what the node and the allocation hold. `gpu-control` reaches only the
//! GPUs of the step whose hardware `step-hardware-init` sets up.

use std::sync::{Mutex, MutexGuard, PoisonError};

use wasmtime::component::ResourceAny;

use super::journal::GresJournal;
use super::{opaque, plain};
use crate::bindings::gres::exports::slurm::plugin::gres as wit;
use crate::bindings::gres::{GresPlugin as World, GresPluginPre as WorldPre};
use crate::bindings::types::{Bitmap, GresAllocation, Job, Step};
use crate::engine::Host;
use crate::error::{CallError, LoadError};
use crate::plugin::{no_check, PluginCore, PluginSettings, PluginSource};
use crate::store::StepScope;
use crate::validate::{Checker, ConfiguredFiles, EnvSource};

pub use wit::{
    Device, EnvChange, EnvFlags, GresConfRecord, GresConfig, InfoField, InfoValue, NodeAllocation,
    NodeConfigResult, NodeHardware,
};

super::plugin_kind! {
    handle: GresPlugin,
    kind: GresKind,
    slot: Gres,
    linker: gres,
    world: World,
    pre: WorldPre<crate::store::HostState>,
    bindings: World,
    interface: slurm_plugin_gres,
    config: GresConfig,
    restore: |b, store, data| b.slurm_plugin_gres().call_recv_stepd(store, data),
    save: |b, store| b.slurm_plugin_gres().call_send_stepd(store).map(|r| r.map(Some)),
    journal: GresJournal,
    replay: |b, replay, journal, restore| {
        restore(replay)?;
        let gres = b.slurm_plugin_gres();
        if let Some((records, node)) = &journal.node_config {
            replay.call("node-config-load", |s| {
                gres.call_node_config_load(s, records, node).map(|r| r.map(|_| ()))
            })?;
        }
        if let Some(step) = &journal.step {
            replay.call("step-context", |s| gres.call_step_context(s, step))?;
        }
        Ok(())
    },
}

crate::replay::replayer!(GresPlugin, "gres", |p| {
    "init" => |(config,): (GresConfig,)| -> () { p.init(&config) },
    "fini" => |(): ()| -> () { p.fini() },
    "node-config-load" => |(records, node): (Vec<GresConfRecord>, NodeHardware)| -> NodeConfigResult {
        p.node_config_load(&records, &node)
    },
    "job-set-env" => |(allocation, flags): (Option<GresAllocation>, EnvFlags)| -> Vec<EnvChange> {
        p.job_set_env(allocation.as_ref(), flags)
    },
    "step-set-env" => |(allocation, flags): (Option<GresAllocation>, EnvFlags)| -> Vec<EnvChange> {
        p.step_set_env(allocation.as_ref(), flags)
    },
    "task-set-env" => |(allocation, flags): (Option<NodeAllocation>, EnvFlags)| -> Vec<EnvChange> {
        p.task_set_env(allocation.as_ref(), flags)
    },
    "send-stepd" => |(): ()| -> Vec<u8> { p.send_stepd() },
    "recv-stepd" => |(data,): (Vec<u8>,)| -> () { p.recv_stepd(&data) },
    "job-info" => |(allocation, field): (GresAllocation, InfoField)| -> InfoValue { p.job_info(&allocation, field) },
    "step-info" => |(allocation, field): (GresAllocation, InfoField)| -> InfoValue { p.step_info(&allocation, field) },
    "get-devices" => |(): ()| -> Vec<Device> { p.get_devices() },
    "step-hardware-init" => |(usable, tres_freq): (Option<Bitmap>, Option<String>)| -> () {
        p.step_hardware_init(usable.as_ref(), tres_freq.as_deref())
    },
    "step-hardware-fini" => |(): ()| -> () { p.step_hardware_fini() },
    "step-context" => |(step,): (Step,)| -> () { p.step_context(&step) },
});

/// A plugin-side `gres_epilog_info_t`, valid until the plugin restarts.
#[derive(Debug, Clone, Copy)]
pub struct EpilogInfo(ResourceAny);

/// A loaded gres plugin.
///
/// # Errors
///
/// Every method that calls the plugin fails with a [`CallError`]:
/// [`Disabled`](CallError::Disabled) once the failure policy has taken the
/// plugin out of service; [`NotInitialised`](CallError::NotInitialised) for
/// any call but `init` and `fini` before an `init` succeeded;
/// [`Start`](CallError::Start) when an instance could not be started
/// (instantiated, and after a fault initialised again, given its
/// `recv-stepd` bytes and its last `node-config-load` and `step-context`
/// back); a fault ([`Fuel`](CallError::Fuel),
/// [`Deadline`](CallError::Deadline), [`Memory`](CallError::Memory),
/// [`Stack`](CallError::Stack), [`Trap`](CallError::Trap)), after which the
/// failure policy decides what serves the next call;
/// [`Plugin`](CallError::Plugin) when the plugin returns a Slurm error, for
/// the functions whose WIT result has one; [`Denied`](CallError::Denied) in
/// place of a plugin error or trap that followed a call to a capability it
/// was not granted; [`StateTooLarge`](CallError::StateTooLarge) for a state
/// blob over the plugin's
/// [`Limits::state_bytes`](crate::Limits::state_bytes). Each method says
/// which answers the host refuses with [`Invalid`](CallError::Invalid).
pub struct GresPlugin {
    core: PluginCore<GresKind>,
    node: Mutex<NodeDevices>,
}

/// What the host knows of the node's devices from the plugin's last
/// `node-config-load`, and the GPUs the last `step-hardware-init` set up.
#[derive(Debug, Default)]
struct NodeDevices {
    /// The `File=` paths gres.conf gave the plugin.
    configured: ConfiguredFiles,
    /// The device files of the plugin's own GRES in the checked answer,
    /// in order: device index `i` is file `i`.
    files: Vec<String>,
    /// NVML indices of the GPUs of the step whose hardware was set up;
    /// `step-hardware-fini` may reset only these.
    step_gpus: Vec<u32>,
}

impl GresPlugin {
    /// Compiles `source` (or takes it from the host's cache), checks that it
    /// is a gres plugin for this host's contract, with imports, exports and
    /// identity it may have under `settings`, and asks it to `describe` itself
    /// in a throwaway instance. Runs nothing else of the plugin: call
    /// [`GresPlugin::init`] next.
    ///
    /// # Errors
    ///
    /// A [`LoadError`]: the source cannot be read or is not a component, or the
    /// compiled-component cache cannot keep it; it is a plugin of another kind
    /// or contract version, imports a capability gres plugins may not have,
    /// lacks an export, describes itself wrongly, requires a capability
    /// `settings` does not grant (`gpu`, `gpu-control`), or faults in its start
    /// function or `describe`.
    pub fn load(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        Ok(GresPlugin {
            core: PluginCore::load(host, source, settings)?,
            node: Mutex::default(),
        })
    }

    fn node(&self) -> MutexGuard<'_, NodeDevices> {
        self.node.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The NVML indices of the GPUs with device indices `usable`: device
    /// `i` is the `i`-th device file of the plugin's GRES in its last
    /// `node-config-load` answer, and the GPU the `gpu` provider lists with
    /// that file (`/dev/nvidia<minor>`); without such a file or GPU, NVML
    /// index `i`, as Slurm's gpu/nvml takes the bitmap's indices.
    fn step_gpus(&self, usable: Option<&Bitmap>) -> Vec<u32> {
        let Some(usable) = usable else {
            return Vec::new();
        };
        let files = self.node().files.clone();
        let detected = if files.is_empty() {
            Vec::new()
        } else {
            self.core.services().gpu.devices().unwrap_or_default()
        };
        usable
            .ones()
            .map(|i| {
                files
                    .get(i as usize)
                    .and_then(|file| {
                        detected
                            .iter()
                            .find(|g| format!("/dev/nvidia{}", g.minor_number) == *file)
                    })
                    .map_or(i, |g| g.index)
            })
            .collect()
    }

    /// The contract's rules on a gres plugin's environment edits.
    fn check_env<J>(c: &Checker<'_>, _: &J, changes: &Vec<EnvChange>) -> Result<(), CallError> {
        c.items("environment", changes.len())?;
        for change in changes {
            match change {
                EnvChange::Set(kv) => c.env_edit(EnvSource::Gres, &kv.key, Some(&kv.value))?,
                EnvChange::Unset(name) => c.env_edit(EnvSource::Gres, name, None)?,
            }
        }
        Ok(())
    }

    /// `node-config-load`; the answer is checked against `records` and
    /// `node` (`Checker::node_config`), and its device files remembered
    /// for `get-devices` and `step-hardware-init`.
    pub fn node_config_load(
        &self,
        records: &[GresConfRecord],
        node: &NodeHardware,
    ) -> Result<NodeConfigResult, CallError> {
        let result = self
            .core
            .call_journaled(
                "node-config-load",
                &(records, node),
                None,
                |b, s| {
                    b.slurm_plugin_gres()
                        .call_node_config_load(s, records, node)
                },
                |c, _, result| c.node_config(result, records, node),
                |j: &mut GresJournal, _| j.node_config = Some((records.to_vec(), node.clone())),
            )
            .map(|(r, _)| r)?;
        let plugin = self.core.plugin_type();
        let own = plugin.strip_prefix("gres/").unwrap_or(&plugin);
        let mut known = self.node();
        known.configured = ConfiguredFiles::of(records);
        known.files = result
            .records
            .iter()
            .filter(|r| r.name.eq_ignore_ascii_case(own))
            .flat_map(|r| r.files.iter().cloned())
            .collect();
        Ok(result)
    }

    /// `gres_p_job_set_env`: the environment edits for the batch script of a
    /// job holding `allocation` of this plugin's GRES on this node (`None`:
    /// none of it), under `flags`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`GresPlugin`](GresPlugin#errors));
    /// [`CallError::Invalid`] when the answer has more than 2^20 edits, or one
    /// names a variable other than a valid `SLURM_*` name or the GPU variables
    /// Slurm's gres plugins set (`CUDA_VISIBLE_DEVICES`,
    /// `ROCR_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK`, `GPU_DEVICE_ORDINAL`,
    /// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`), or sets a value over 1 MiB or with
    /// a NUL byte.
    pub fn job_set_env(
        &self,
        allocation: Option<&GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, CallError> {
        plain!(
            self,
            "job-set-env",
            &(allocation, flags),
            |b, s| b.slurm_plugin_gres().call_job_set_env(s, allocation, flags),
            Self::check_env
        )
    }

    /// `gres_p_step_set_env`: the environment edits for a step holding
    /// `allocation` of this plugin's GRES on this node (`None`: none of it),
    /// under `flags`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`GresPlugin`](GresPlugin#errors));
    /// [`CallError::Invalid`] when the answer has more than 2^20 edits, or one
    /// names a variable other than a valid `SLURM_*` name or the GPU variables
    /// Slurm's gres plugins set (`CUDA_VISIBLE_DEVICES`,
    /// `ROCR_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK`, `GPU_DEVICE_ORDINAL`,
    /// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`), or sets a value over 1 MiB or with
    /// a NUL byte.
    pub fn step_set_env(
        &self,
        allocation: Option<&GresAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, CallError> {
        plain!(
            self,
            "step-set-env",
            &(allocation, flags),
            |b, s| b
                .slurm_plugin_gres()
                .call_step_set_env(s, allocation, flags),
            Self::check_env
        )
    }

    /// `gres_p_task_set_env`: the environment edits for one task, restricted
    /// to the devices `allocation` marks usable by it (`None`: the step holds
    /// none of this GRES), under `flags`.
    ///
    /// # Errors
    ///
    /// Those of every call ([`GresPlugin`](GresPlugin#errors));
    /// [`CallError::Invalid`] when the answer has more than 2^20 edits, or one
    /// names a variable other than a valid `SLURM_*` name or the GPU variables
    /// Slurm's gres plugins set (`CUDA_VISIBLE_DEVICES`,
    /// `ROCR_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK`, `GPU_DEVICE_ORDINAL`,
    /// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`), or sets a value over 1 MiB or with
    /// a NUL byte.
    pub fn task_set_env(
        &self,
        allocation: Option<&NodeAllocation>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, CallError> {
        plain!(
            self,
            "task-set-env",
            &(allocation, flags),
            |b, s| b
                .slurm_plugin_gres()
                .call_task_set_env(s, allocation, flags),
            Self::check_env
        )
    }

    /// `gres_p_send_stepd`: the state slurmd hands to slurmstepd, as bytes
    /// for [`GresPlugin::recv_stepd`] there.
    ///
    /// # Errors
    ///
    /// Those of every call ([`GresPlugin`](GresPlugin#errors)).
    pub fn send_stepd(&self) -> Result<Vec<u8>, CallError> {
        plain!(self, "send-stepd", &(), |b, s| b
            .slurm_plugin_gres()
            .call_send_stepd(s))
    }

    /// `recv-stepd`; the bytes are kept so a restarted instance gets them again.
    pub fn recv_stepd(&self, data: &[u8]) -> Result<(), CallError> {
        self.core.check_state_size("recv-stepd", data.len())?;
        plain!(self, "recv-stepd", &(data,), |b, s| b
            .slurm_plugin_gres()
            .call_recv_stepd(s, data))?;
        self.core.remember_state("recv-stepd", data)
    }

    /// `job-info`, checked to stay within `allocation`.
    pub fn job_info(
        &self,
        allocation: &GresAllocation,
        field: InfoField,
    ) -> Result<InfoValue, CallError> {
        let value = plain!(self, "job-info", &(allocation, field), |b, s| b
            .slurm_plugin_gres()
            .call_job_info(s, allocation, field))?;
        let plugin = self.core.plugin_type();
        let c = Checker {
            plugin: &plugin,
            function: "job-info",
        };
        c.gres_info(&value, allocation)?;
        Ok(value)
    }

    /// `step-info`, checked to stay within `allocation`.
    pub fn step_info(
        &self,
        allocation: &GresAllocation,
        field: InfoField,
    ) -> Result<InfoValue, CallError> {
        let value = plain!(self, "step-info", &(allocation, field), |b, s| b
            .slurm_plugin_gres()
            .call_step_info(s, allocation, field))?;
        let plugin = self.core.plugin_type();
        let c = Checker {
            plugin: &plugin,
            function: "step-info",
        };
        c.gres_info(&value, allocation)?;
        Ok(value)
    }

    /// `get-devices`, checked to name only device files of the node's
    /// GPUs with their own numbers (`Checker::gres_devices`).
    pub fn get_devices(&self) -> Result<Vec<Device>, CallError> {
        let devices = plain!(self, "get-devices", &(), |b, s| b
            .slurm_plugin_gres()
            .call_get_devices(s))?;
        let plugin = self.core.plugin_type();
        let c = Checker {
            plugin: &plugin,
            function: "get-devices",
        };
        let configured = self.node().configured.clone();
        c.gres_devices(&devices, &configured)?;
        Ok(devices)
    }

    /// `step-hardware-init`: `gpu-control` may change only the `usable`
    /// GPUs (see `Self::step_gpus`), which `step-hardware-fini` may then
    /// reset.
    pub fn step_hardware_init(
        &self,
        usable: Option<&Bitmap>,
        tres_freq: Option<&str>,
    ) -> Result<(), CallError> {
        let gpus = self.step_gpus(usable);
        self.node().step_gpus.clone_from(&gpus);
        let scope = StepScope::default().with_gpus(gpus);
        self.core
            .call(
                "step-hardware-init",
                &(usable, tres_freq),
                Some(scope),
                |b, s| {
                    b.slurm_plugin_gres()
                        .call_step_hardware_init(s, usable, tres_freq)
                },
            )
            .map(|_| ())
    }

    /// `step-hardware-fini`: `gpu-control` may reset only the GPUs of the
    /// last `step-hardware-init`, whose step this ends.
    pub fn step_hardware_fini(&self) -> Result<(), CallError> {
        let gpus = std::mem::take(&mut self.node().step_gpus);
        let scope = StepScope::default().with_gpus(gpus);
        self.core
            .call("step-hardware-fini", &(), Some(scope), |b, s| {
                b.slurm_plugin_gres().call_step_hardware_fini(s)
            })
            .map(|_| ())
    }

    /// `gres_p_epilog_build_env`: the plugin captures `job`'s per-node
    /// allocations of its GRES for the epilog; `None` when the job holds none.
    /// Give the info back with [`GresPlugin::drop_epilog_info`].
    ///
    /// # Errors
    ///
    /// Those of every call ([`GresPlugin`](GresPlugin#errors)).
    pub fn epilog_build_env(&self, job: &Job) -> Result<Option<EpilogInfo>, CallError> {
        opaque!(self, "epilog-build-env", |b, s| b
            .slurm_plugin_gres()
            .call_epilog_build_env(s, job))
        .map(|r| r.map(EpilogInfo))
    }

    /// `gres_p_epilog_set_env`: the environment edits for node `node_index`
    /// (the node's position among the job's nodes) of the job `info` was
    /// built for.
    ///
    /// # Errors
    ///
    /// Those of every call ([`GresPlugin`](GresPlugin#errors));
    /// [`CallError::Invalid`] when the answer has more than 2^20 edits, or one
    /// names a variable other than a valid `SLURM_*` name or the GPU variables
    /// Slurm's gres plugins set (`CUDA_VISIBLE_DEVICES`,
    /// `ROCR_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK`, `GPU_DEVICE_ORDINAL`,
    /// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE`), or sets a value over 1 MiB or with
    /// a NUL byte.
    pub fn epilog_set_env(
        &self,
        info: EpilogInfo,
        node_index: u32,
    ) -> Result<Vec<EnvChange>, CallError> {
        opaque!(
            self,
            "epilog-info.set-env",
            |b, s| b
                .slurm_plugin_gres()
                .epilog_info()
                .call_set_env(s, info.0, node_index),
            Self::check_env
        )
    }

    /// Frees an epilog info (`xfree` of `gres_epilog_info_t`).
    pub fn drop_epilog_info(&self, info: EpilogInfo) -> Result<(), CallError> {
        self.core
            .call_untapped(
                "resource-drop",
                |_, s| info.0.resource_drop(s).map(Ok),
                no_check,
            )
            .map(|_| ())
    }

    /// The step this node is running (a slurm-wasm addition: C plugins read
    /// it from globals), for plugins that keep per-step state. Journaled: a
    /// restarted instance is given it again.
    ///
    /// # Errors
    ///
    /// Those of every call ([`GresPlugin`](GresPlugin#errors)).
    pub fn step_context(&self, step: &Step) -> Result<(), CallError> {
        self.core
            .call_journaled(
                "step-context",
                &(step,),
                None,
                |b, s| b.slurm_plugin_gres().call_step_context(s, step),
                no_check,
                |j: &mut GresJournal, _| j.step = Some(step.clone()),
            )
            .map(|(r, _)| r)
    }
}
