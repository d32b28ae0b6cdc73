//! `task/hostile_runtime`: a task plugin that attacks the host's runtime
//! rather than its contract.
//!
//! It exists only for the host's containment tests (issue 26, classes 1, 3,
//! 9, 10 and 13). Never load it outside tests.
//!
//! * **Identity.** `describe()` has no input, so the plugin reads the host's
//!   clock: the test gives its host a virtual clock set to one of the
//!   [`Disguise`] numbers and the plugin describes itself accordingly (a
//!   type that walks out of its directory, a contract `0.1.0.7`, fifty
//!   million required capabilities, a describe that sleeps, ...). Any other
//!   time gives the honest identity `task/hostile_runtime`.
//! * **Init.** At [`INIT_TRAPS_AT`] `init` panics (a trap); otherwise it
//!   succeeds.
//! * **Calls.** `slurmd-launch-request` acts out the [`Act`] named by the
//!   request's `cpu-bind` string; every other hook behaves like task/none.

pub mod act;
pub mod disguise;

use slurm_wasm_sdk::task::{
    BatchRequest, CpuBinding, IdentityGuest, LaunchRequest, TaskConfig, TaskGuest,
};
use slurm_wasm_sdk::types::{PluginError, PluginIdentity, Step, Task};

/// The clock value at which `init` traps.
pub const INIT_TRAPS_AT: i64 = 3_000;

/// task/hostile_runtime, exported as a component.
pub struct HostileRuntime;

impl IdentityGuest for HostileRuntime {
    /// The identity the host's clock selects (see [`disguise::Disguise`]).
    fn describe() -> PluginIdentity {
        disguise::Disguise::at(slurm_wasm_sdk::host::now()).identity()
    }
}

impl TaskGuest for HostileRuntime {
    /// Traps when the clock reads [`INIT_TRAPS_AT`].
    fn init(_config: TaskConfig) -> Result<(), PluginError> {
        if slurm_wasm_sdk::host::now() == INIT_TRAPS_AT {
            panic!("task/hostile_runtime: init traps at this time");
        }
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        Ok(())
    }

    fn slurmd_batch_request(request: BatchRequest) -> Result<CpuBinding, PluginError> {
        Ok(CpuBinding {
            cpu_bind_type: request.cpu_bind_type,
            cpu_bind: request.cpu_bind,
            messages: Vec::new(),
            env: Vec::new(),
        })
    }

    /// Acts out the [`act::Act`] named by `request.cpu_bind`.
    fn slurmd_launch_request(request: LaunchRequest) -> Result<CpuBinding, PluginError> {
        let messages = act::Act::parse(&request.cpu_bind).run();
        Ok(CpuBinding {
            cpu_bind_type: request.cpu_bind_type,
            cpu_bind: request.cpu_bind,
            messages,
            env: Vec::new(),
        })
    }

    fn slurmd_reserve_resources(_request: LaunchRequest) -> Result<(), PluginError> {
        Ok(())
    }

    fn slurmd_suspend_job(_job_id: u32) -> Result<(), PluginError> {
        Ok(())
    }

    fn slurmd_resume_job(_job_id: u32) -> Result<(), PluginError> {
        Ok(())
    }

    fn slurmd_release_resources(_job_id: u32) -> Result<(), PluginError> {
        Ok(())
    }

    fn pre_setuid(_step: Step) -> Result<(), PluginError> {
        Ok(())
    }

    fn pre_launch_priv(_step: Step, _task: Task) -> Result<(), PluginError> {
        Ok(())
    }

    fn pre_launch(_step: Step, _task: Task) -> Result<(), PluginError> {
        Ok(())
    }

    fn post_term(_step: Step, _task: Task) -> Result<(), PluginError> {
        Ok(())
    }

    fn post_step(_step: Step) -> Result<(), PluginError> {
        Ok(())
    }

    fn add_pid(_pid: u32) -> Result<(), PluginError> {
        Ok(())
    }

    fn update_mem_limit(_step: Step, _job_mem: u64, _step_mem: u64) -> Result<(), PluginError> {
        Ok(())
    }
}

slurm_wasm_sdk::export_task!(HostileRuntime);
