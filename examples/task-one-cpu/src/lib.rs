//! task/one_cpu: binds each task to one CPU, the first thread of the
//! step's cores taken in turn by the task's local id. Every other function
//! keeps the SDK's default (task/none's).
use slurm_wasm_sdk::host::{bind_cpus, cpu_layout};
use slurm_wasm_sdk::task::{Plugin, TaskConfig};
use slurm_wasm_sdk::types::{Capability, PluginIdentity, Step, Task};
use slurm_wasm_sdk::{identity, Bitmap, Error};

pub struct OneCpu;

impl Plugin for OneCpu {
    const TYPE: &'static str = "task/one_cpu";
    const NAME: &'static str = "one CPU per task";

    fn identity() -> PluginIdentity {
        let required_capabilities = vec![Capability::Topology, Capability::Cpuset];
        PluginIdentity {
            required_capabilities,
            ..identity(Self::TYPE, Self::NAME)
        }
    }

    fn init(_config: TaskConfig) -> Result<Self, Error> {
        Ok(OneCpu)
    }

    fn pre_launch_priv(&mut self, step: &Step, task: &Task) -> Result<(), Error> {
        let cores: Vec<usize> = Bitmap::try_from(&step.cores)?.ones().collect();
        let Some(&core) = cores.get(task.local_id as usize % cores.len().max(1)) else {
            return Ok(()); // a step without cores here: nothing to bind to
        };
        let layout = cpu_layout()?;
        let cpu = layout.block_map[core * usize::from(layout.threads_per_core)] as usize;
        Ok(bind_cpus(task.pid, &Bitmap::from_bits(cpu + 1, [cpu]))?)
    }
}

slurm_wasm_sdk::export_task!(plugin OneCpu);
