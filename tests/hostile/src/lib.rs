//! `task/hostile`: a deliberately misbehaving task plugin.
//!
//! It exists only for the host's containment tests. Its
//! `slurmd-launch-request` reads a behaviour name from the request's
//! `cpu-bind` string and acts it out (see [`behaviour::Behaviour`]): spin
//! forever, exhaust memory or the stack, trap, return a huge result, or probe
//! the file system, the network, the environment and ungranted
//! capabilities, or set environment variables of its choosing. Its
//! `pre-launch-priv` binds the task outside its step when the step's
//! `cpu-bind` is `cpuset-outside`. In a live Slurm, the launch request's
//! variable `HOSTILE_TASK=<launch|priv|child>:<behaviour>` names the
//! behaviour and the hook that acts it out (slurmd's launch request,
//! slurmstepd's `pre-launch-priv`, or `pre-launch` in the forked task). Each must end in a clear error from the
//! host, or in an answer showing that the sandbox held, while the host
//! keeps serving. Any other `cpu-bind` value, and every other hook, behaves
//! like task/none.
//!
//! Built with the cargo feature `requires-topology`, the same plugin
//! becomes `task/needs_topology`, which lists `topology` among its required
//! capabilities: the host must refuse to load it without that grant. Only
//! its identity changes.
//!
//! Never load it outside tests.

pub mod behaviour;

use slurm_wasm_sdk::identity;
use slurm_wasm_sdk::task::{
    BatchRequest, CpuBinding, IdentityGuest, LaunchRequest, TaskConfig, TaskGuest,
};
use slurm_wasm_sdk::types::{Capability, PluginError, PluginIdentity, Step, Task};

use behaviour::{Behaviour, Hook};
use slurm_wasm_sdk::codes::EINVAL;
use slurm_wasm_sdk::Error;

/// task/hostile, exported as a component.
pub struct Hostile;

impl IdentityGuest for Hostile {
    /// task/hostile asks for no capability, so the host loads it with none
    /// granted. task/needs_topology (feature `requires-topology`) requires
    /// `topology`, so the host must refuse to load it unless that capability
    /// is granted, and name it.
    fn describe() -> PluginIdentity {
        if cfg!(feature = "requires-topology") {
            PluginIdentity {
                required_capabilities: vec![Capability::Topology],
                ..identity(
                    "task/needs_topology",
                    "task plugin requiring topology (containment tests)",
                )
            }
        } else {
            identity("task/hostile", "hostile task plugin (containment tests)")
        }
    }
}

impl TaskGuest for Hostile {
    fn init(_config: TaskConfig) -> Result<(), PluginError> {
        Ok(())
    }

    fn fini() -> Result<(), PluginError> {
        Ok(())
    }

    /// Leaves the batch script's binding as requested.
    fn slurmd_batch_request(request: BatchRequest) -> Result<CpuBinding, PluginError> {
        Ok(CpuBinding {
            cpu_bind_type: request.cpu_bind_type,
            cpu_bind: request.cpu_bind,
            messages: Vec::new(),
            env: Vec::new(),
        })
    }

    /// Acts out the behaviour named by `HOSTILE_TASK` (or hands it to
    /// slurmstepd's hooks), else the one named by `request.cpu_bind`.
    fn slurmd_launch_request(request: LaunchRequest) -> Result<CpuBinding, PluginError> {
        let spec = request
            .env
            .iter()
            .find(|kv| kv.key == behaviour::HOSTILE_VAR)
            .map(|kv| behaviour::hostile_spec(&kv.value));
        match spec {
            None => {
                Behaviour::parse(&request.cpu_bind).run(request.cpu_bind_type, request.cpu_bind)
            }
            Some(Err(e)) => Err(Error::new(EINVAL, e).into()),
            Some(Ok((Hook::Launch, name))) => {
                Behaviour::parse(name).run(request.cpu_bind_type, request.cpu_bind)
            }
            Some(Ok((hook, name))) => Ok(CpuBinding {
                cpu_bind_type: request.cpu_bind_type,
                cpu_bind: format!(
                    "{}{}:{name}",
                    behaviour::STEPD_PREFIX,
                    if hook == Hook::Priv { "priv" } else { "child" }
                ),
                messages: Vec::new(),
                env: Vec::new(),
            }),
        }
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

    /// Acts out a behaviour handed over by the launch request, else binds
    /// outside the step when the step's `cpu-bind` says so (see
    /// [`behaviour::pre_launch_priv`]).
    fn pre_launch_priv(step: Step, task: Task) -> Result<(), PluginError> {
        match behaviour::stepd_behaviour(&step.cpu_bind, Hook::Priv) {
            Some(b) => b.run(step.cpu_bind_type, String::new()).map(drop),
            None => behaviour::pre_launch_priv(&step, &task),
        }
    }

    /// Acts out a behaviour handed over by the launch request, in the
    /// forked task.
    fn pre_launch(step: Step, _task: Task) -> Result<(), PluginError> {
        match behaviour::stepd_behaviour(&step.cpu_bind, Hook::Child) {
            Some(b) => b.run(step.cpu_bind_type, String::new()).map(drop),
            None => Ok(()),
        }
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

slurm_wasm_sdk::export_task!(Hostile);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_follows_the_feature() {
        let identity = Hostile::describe();
        if cfg!(feature = "requires-topology") {
            assert_eq!(identity.plugin_type, "task/needs_topology");
            assert_eq!(identity.required_capabilities, [Capability::Topology]);
        } else {
            assert_eq!(identity.plugin_type, "task/hostile");
            assert!(identity.required_capabilities.is_empty());
        }
    }
}
