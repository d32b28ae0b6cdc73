//! `gres/gpu`: Slurm's GPU generic resource plugin (src/plugins/gres/gpu) as a
//! wasm component.
//!
//! [`Gpu`] holds the node's device list and implements every entry point
//! over the SDK's records ([`GresPlugin`]), so it also runs natively (tests,
//! benchmarks); [`plugin`] exports it through the `gres-plugin` world.

mod plugin;

pub use plugin::GresGpu;

use slurm_wasm_sdk::gres::{
    Device, EnvChange, EnvFlags, GresConfRecord, NodeConfigResult, NodeHardware,
};
use slurm_wasm_sdk::host::{self, CapabilityError};
use slurm_wasm_sdk::types::{self, Capability, GresAllocation, Job, Step};
use slurm_wasm_sdk::{debug, error, info, warn, Error};

use gres_common::alloc::{bitmap, JobCapture};
use gres_common::conf::{
    add_slurm_conf_counts, check_total, default_env, node_env, validate, EnvVendors,
};
use gres_common::env::{epilog_env, EnvCall, Scope};
use gres_common::freq::{gpu_part, GpuFreq};
use gres_common::node::load_gpus;
use gres_common::stepd::StepdState;
use gres_common::{build_devices, EpilogEnv, GresPlugin, PluginState, Settings};

/// The GRES name this plugin manages.
pub const NAME: &str = "gpu";
/// `plugin_type`.
pub const PLUGIN_TYPE: &str = "gres/gpu";
/// `plugin_name`.
pub const PLUGIN_NAME: &str = "Gres GPU plugin";

/// The state gres/gpu keeps between calls.
#[derive(Debug, Clone)]
pub struct Gpu {
    pub settings: Settings,
    /// `gres_devices`: from `node_config_load` in slurmd, `recv_stepd` in
    /// slurmstepd.
    pub devices: Vec<Device>,
    /// `node_flags`: the union of the records' env flags.
    pub vendors: EnvVendors,
    /// GPU indices whose clocks `step_hardware_init` changed.
    touched: Vec<u32>,
    /// The step this node runs (`step-context`). Kept for inspection only:
    /// Slurm's plugin takes everything it needs from each call's arguments.
    pub step: Option<Step>,
}

/// `gres_p_epilog_build_env`'s capture: per node of the job, the allocated
/// device bitmap (none where the node holds no GPU).
#[derive(Debug, Clone)]
pub struct GpuEpilog {
    capture: JobCapture,
    vendors: EnvVendors,
}

impl EpilogEnv for GpuEpilog {
    /// `gres_p_epilog_set_env`: the vendor variables (unique ids where known,
    /// else indices) and `SLURM_JOB_GPUS` of node `node_index` of the job;
    /// nothing where the node holds no GPU; an error past the job's nodes.
    fn set_env(&self, node_index: u32) -> Result<Vec<EnvChange>, Error> {
        Ok(self
            .capture
            .node(node_index)?
            .map(|(alloc, _)| epilog_env(&self.capture.devices, alloc, self.vendors))
            .unwrap_or_default())
    }
}

impl GresPlugin for Gpu {
    const NAME: &'static str = NAME;
    const PLUGIN_TYPE: &'static str = PLUGIN_TYPE;
    const PLUGIN_NAME: &'static str = PLUGIN_NAME;
    type Epilog = GpuEpilog;

    fn state() -> &'static PluginState<Self> {
        static STATE: PluginState<Gpu> = PluginState::new();
        &STATE
    }

    /// A plugin after `init`, with no devices loaded yet.
    fn new(settings: Settings) -> Self {
        Gpu {
            settings,
            devices: Vec::new(),
            vendors: EnvVendors::NONE,
            touched: Vec::new(),
            step: None,
        }
    }

    /// `gres_p_node_config_load` (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_node_config_load`): validates every record, merges
    /// the GPU records with detected GPUs (`AutoDetect`), checks the total
    /// against slurm.conf `Gres=`, builds the device list and the node's env
    /// flags. Without any GPU record or detected GPU, slurm.conf's count is
    /// taken (records without files). Returns the GPU records in Slurm's
    /// order followed by the other records unchanged, and the warnings Slurm
    /// would log.
    fn node_config_load(
        &mut self,
        records: &[GresConfRecord],
        node: &NodeHardware,
    ) -> Result<NodeConfigResult, Error> {
        self.devices.clear();
        self.vendors = EnvVendors::NONE;
        let conf = validate(records, node, &self.settings)?;
        let mut warnings = Vec::new();
        let mut gpus = load_gpus(PLUGIN_TYPE, &conf, node, &self.settings, &mut warnings);
        add_slurm_conf_counts(NAME, &mut gpus, node);
        default_env(&mut gpus, self.settings.auto_detect.env_vendors());
        check_total(NAME, &gpus, node, &mut warnings)?;
        self.devices = build_devices(&gpus, NAME)?;
        self.vendors = node_env(&gpus, NAME);
        for w in &warnings {
            warn!("{w}");
        }
        let records = gpus
            .iter()
            .chain(conf.iter().filter(|r| r.name != NAME))
            .map(|r| r.to_record())
            .collect();
        Ok(NodeConfigResult { records, warnings })
    }

    /// `job_set_env`, `step_set_env` and `task_set_env` (Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`): the GPU
    /// lists with the node's vendor variables; the `gpu-bind:` line goes to
    /// the log at info level.
    fn set_env(&self, call: EnvCall<'_>) -> Result<Vec<EnvChange>, Error> {
        let (changes, _) = call.gpu_env(
            PLUGIN_TYPE,
            &self.devices,
            self.settings.use_local,
            self.vendors,
        )?;
        Ok(changes)
    }

    /// `send_stepd`: the device list and env flags.
    fn send_stepd(&self) -> Vec<u8> {
        StepdState {
            devices: self.devices.clone(),
            vendors: self.vendors,
            shared: Vec::new(),
        }
        .encode()
    }

    /// `recv_stepd`: replaces the device list and env flags; malformed
    /// bytes (or an MPS table) are refused and leave the state unchanged.
    fn recv_stepd(&mut self, data: &[u8]) -> Result<(), Error> {
        let state = StepdState::decode(data)?;
        if !state.shared.is_empty() {
            return Err(Error::invalid(
                "gres/gpu stepd data carries a shared (MPS) table; it was written by another plugin",
            ));
        }
        self.devices = state.devices;
        self.vendors = state.vendors;
        Ok(())
    }

    fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// `gres_p_epilog_build_env`: the job's per-node device bitmaps.
    fn epilog_build_env(&self, job: &Job) -> Result<Option<GpuEpilog>, Error> {
        let capture = JobCapture::new(job, NAME, PLUGIN_TYPE, &self.devices)?;
        Ok(capture.map(|capture| GpuEpilog {
            capture,
            vendors: self.vendors,
        }))
    }

    fn step_context(&mut self, step: Step) {
        self.step = Some(step);
    }

    /// [`Gpu::step_hardware_init`] on the plugin `init` created.
    fn step_hardware_init(
        usable: Option<&types::Bitmap>,
        tres_freq: Option<&str>,
    ) -> Result<(), Error> {
        Self::state().with(Self::PLUGIN_TYPE, |gpu: &mut Gpu| {
            gpu.step_hardware_init(usable, tres_freq)
        })
    }

    /// [`Gpu::step_hardware_fini`] on the plugin `init` created.
    fn step_hardware_fini() -> Result<(), Error> {
        Self::state().with(Self::PLUGIN_TYPE, Gpu::step_hardware_fini)
    }
}

/// The native API: [`GresPlugin`]'s entry points callable without importing
/// the trait (`host/benches/gres.rs` measures them against the component),
/// and the GPU clock handling behind `step_hardware_init` /
/// `step_hardware_fini`.
impl Gpu {
    /// [`GresPlugin::new`].
    pub fn new(settings: Settings) -> Self {
        <Gpu as GresPlugin>::new(settings)
    }

    /// [`GresPlugin::node_config_load`].
    pub fn node_config_load(
        &mut self,
        records: &[GresConfRecord],
        node: &NodeHardware,
    ) -> Result<NodeConfigResult, Error> {
        GresPlugin::node_config_load(self, records, node)
    }

    /// [`GresPlugin::set_env`] of the call made of `scope`, `allocation`,
    /// `usable` and `flags`.
    pub fn set_env(
        &self,
        scope: Scope,
        allocation: Option<&GresAllocation>,
        usable: Option<&types::Bitmap>,
        flags: EnvFlags,
    ) -> Result<Vec<EnvChange>, Error> {
        GresPlugin::set_env(self, EnvCall::new(scope, allocation, usable, flags))
    }

    /// The NVML index of device `index`: the minor number of a
    /// `/dev/nvidia<N>` file when the `gpu` capability lists a device with
    /// it, otherwise the device index itself.
    fn gpu_index(&self, index: usize, detected: &[slurm_wasm_sdk::gres::gpu::GpuDevice]) -> u32 {
        self.devices
            .iter()
            .find(|d| d.index as usize == index)
            .and_then(|d| {
                detected
                    .iter()
                    .find(|g| format!("/dev/nvidia{}", g.minor_number) == d.path)
            })
            .map_or(index as u32, |g| g.index)
    }

    /// `gres_p_step_hardware_init` (Slurm 22.05.8 src/plugins/gres/gpu/gres_gpu.c `gres_p_step_hardware_init`, which hands the
    /// step to src/plugins/gpu/nvml/gpu_nvml.c `gpu_p_step_hardware_init` and `_set_freq`): applies the `gpu:` part of
    /// `tres_freq` (with `GpuFreqDef` filling unset clocks) to each usable
    /// GPU: memory clock resolved first, then the graphics clock among those
    /// valid at that memory clock (the highest where the request names
    /// none), set through `gpu-control`. Nothing happens without usable GPUs
    /// or a `gpu:` part. A missing `gpu` or `gpu-control` grant is logged as
    /// a warning naming the capability and the step goes on with unchanged
    /// clocks, as Slurm continues when it cannot set frequencies; other
    /// failures are logged (`Could not set frequencies for all GPUs`).
    pub fn step_hardware_init(
        &mut self,
        usable: Option<&types::Bitmap>,
        tres_freq: Option<&str>,
    ) -> Result<(), Error> {
        let Some(usable) = usable.map(|m| bitmap(m, "usable GPUs")).transpose()? else {
            return Ok(());
        };
        let Some(part) = tres_freq.and_then(gpu_part) else {
            return Ok(());
        };
        if usable.count() == 0 {
            return Ok(());
        }
        let (request, ignored) = GpuFreq::parse(part);
        for t in ignored {
            debug!("{PLUGIN_TYPE}: ignoring invalid --gpu-freq token `{t}`");
        }
        let (defaults, _) = GpuFreq::parse(&self.settings.gpu_freq_def);
        let freq = request.with_defaults(&defaults);
        if freq.graphics.is_none() && freq.memory.is_none() {
            return Ok(());
        }
        let detected = host::gpu_devices().unwrap_or_default();
        let total = usable.count();
        let mut set = 0;
        let mut reported = false;
        for index in usable.ones() {
            let gpu = self.gpu_index(index, &detected);
            let result = host::gpu_memory_clocks(gpu).and_then(|mem| {
                let memory = freq
                    .memory
                    .and_then(|m| m.resolve(&mem))
                    .or_else(|| mem.first().copied())
                    .ok_or_else(|| {
                        CapabilityError::Failed(format!("GPU {gpu} reports no memory clocks"))
                    })?;
                let gfx = host::gpu_graphics_clocks(gpu, memory)?;
                let graphics = freq
                    .graphics
                    .and_then(|g| g.resolve(&gfx))
                    .or_else(|| gfx.first().copied())
                    .ok_or_else(|| {
                        CapabilityError::Failed(format!(
                            "GPU {gpu} reports no graphics clocks at {memory} MHz"
                        ))
                    })?;
                let clocks = slurm_wasm_sdk::gres::gpu_control::Clocks {
                    memory_mhz: memory,
                    graphics_mhz: graphics,
                };
                host::set_gpu_clocks(gpu, clocks)?;
                Ok((memory, graphics))
            });
            match result {
                Ok((memory, graphics)) => {
                    set += 1;
                    self.touched.push(gpu);
                    if freq.verbose && !reported {
                        reported = true;
                        info!("GpuFreq=memory_freq:{memory},graphics_freq:{graphics}");
                    }
                }
                Err(CapabilityError::Denied(c)) => {
                    let name = match c {
                        Capability::GpuControl => "gpu-control",
                        Capability::Gpu => "gpu",
                        _ => "a GPU",
                    };
                    warn!(
                        "{PLUGIN_TYPE}: cannot apply --gpu-freq={part}: the `{name}` capability is not granted \
                         to this plugin (grant it in the host configuration); the step runs with unchanged GPU clocks"
                    );
                    return Ok(());
                }
                Err(CapabilityError::Unavailable(why)) | Err(CapabilityError::Failed(why)) => {
                    error!("{PLUGIN_TYPE}: setting clocks of GPU {gpu}: {why}");
                }
            }
        }
        if set != total {
            error!("Could not set frequencies for all GPUs. Set {set}/{total} total GPUs");
        }
        Ok(())
    }

    /// `gres_p_step_hardware_fini`: resets every GPU `step_hardware_init`
    /// changed to its default clocks. Failures are logged, not returned: the
    /// step has ended either way.
    pub fn step_hardware_fini(&mut self) -> Result<(), Error> {
        for gpu in std::mem::take(&mut self.touched) {
            if let Err(e) = host::reset_gpu_clocks(gpu) {
                error!("{PLUGIN_TYPE}: resetting clocks of GPU {gpu}: {e:?}");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
