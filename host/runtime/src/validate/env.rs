//! Which environment variables a plugin may set or unset (issue 26, class
//! 4).
//!
//! Task and gres plugins hand the host environment edits for the tasks they
//! serve; the host applies them to each task's environment, and `task run`
//! to the launcher process (itself `slurm-wasm`) that then execs the task.
//! An edit of `LD_PRELOAD`, `PATH`, `GLIBC_TUNABLES` or `PYTHONPATH` would
//! choose code that runs there, so each kind may touch only the variables
//! Slurm's plugins of that kind set:
//!
//! - task plugins: `SLURM_*` (task/affinity's `SLURM_CPU_BIND*`, which
//!   slurmstepd's `setup_env` writes from the decided binding in C);
//! - gres plugins: `SLURM_*` (`SLURM_GPUS_ON_NODE`, `SLURM_JOB_GPUS`,
//!   `SLURM_STEP_GPUS`) and the GPU selection variables of
//!   [`GRES_VARIABLES`] (`gres_common_gpu_set_env`,
//!   gres/common/gres_common.c; `_set_env`, gres/mps/gres_mps.c).
//!
//! Every other name is refused, as are values holding a NUL byte (the
//! operating system would end the value there, or refuse to start the
//! task).

use super::Checker;
use crate::error::CallError;

/// The variables gres/gpu and gres/mps set besides `SLURM_*`: one per
/// vendor flag of gres.conf (`nvidia_gpu_env`, `amd_gpu_env`,
/// `intel_gpu_env`, `opencl_env`) and gres/mps's share of its GPU.
pub const GRES_VARIABLES: [&str; 5] = [
    "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "ZE_AFFINITY_MASK",
    "GPU_DEVICE_ORDINAL",
    "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
];

/// The kind of plugin an environment edit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EnvSource {
    Task,
    Gres,
}

impl EnvSource {
    fn allows(self, name: &str) -> bool {
        name.starts_with("SLURM_") || (self == EnvSource::Gres && GRES_VARIABLES.contains(&name))
    }

    /// What this kind may touch, for messages.
    fn allowed(self) -> String {
        match self {
            EnvSource::Task => "a task plugin may set only SLURM_* variables".into(),
            EnvSource::Gres => format!(
                "a gres plugin may set only SLURM_* variables and {}",
                GRES_VARIABLES.join(", ")
            ),
        }
    }
}

impl Checker<'_> {
    /// One environment edit from a `source` plugin: `name` a valid variable
    /// name that kind may touch, and `value` (none for an unset) within the
    /// text limit and without NUL bytes.
    pub fn env_edit(
        &self,
        source: EnvSource,
        name: &str,
        value: Option<&str>,
    ) -> Result<(), CallError> {
        self.env_name(name)?;
        if !source.allows(name) {
            return Err(self.fail(format!(
                "environment variable `{name}` refused: {}",
                source.allowed()
            )));
        }
        if let Some(value) = value {
            self.text(name, value)?;
            if let Some(at) = value.find('\0') {
                return Err(self.fail(format!(
                    "environment variable `{name}` refused: its value holds a NUL byte at byte {at}"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(result: Result<(), CallError>) -> String {
        match result {
            Err(CallError::Invalid { reason, .. }) => reason,
            other => panic!("expected an invalid-result error, got {other:?}"),
        }
    }

    const C: Checker<'static> = Checker {
        plugin: "task/x",
        function: "f",
    };

    #[test]
    fn task_plugins_set_slurm_variables_only() {
        for name in ["SLURM_CPU_BIND", "SLURM_CPU_BIND_LIST", "SLURM_"] {
            assert!(
                C.env_edit(EnvSource::Task, name, Some("x")).is_ok(),
                "{name}"
            );
        }
        for name in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "PATH",
            "HOME",
            "SHELL",
            "IFS",
            "GLIBC_TUNABLES",
            "PYTHONPATH",
            "CUDA_VISIBLE_DEVICES",
            "slurm_cpu_bind",
        ] {
            assert_eq!(
                reason(C.env_edit(EnvSource::Task, name, Some("x"))),
                format!(
                    "environment variable `{name}` refused: a task plugin may set only SLURM_* variables"
                )
            );
        }
    }

    #[test]
    fn gres_plugins_also_set_the_gpu_variables() {
        for name in GRES_VARIABLES.iter().chain(&["SLURM_STEP_GPUS"]) {
            assert!(
                C.env_edit(EnvSource::Gres, name, Some("0")).is_ok(),
                "{name}"
            );
            assert!(C.env_edit(EnvSource::Gres, name, None).is_ok(), "{name}");
        }
        let refused = reason(C.env_edit(EnvSource::Gres, "PATH", None));
        assert!(refused.starts_with("environment variable `PATH` refused: a gres plugin may set only SLURM_* variables and CUDA_VISIBLE_DEVICES, "), "{refused}");
    }

    #[test]
    fn values_with_nul_bytes_and_bad_names_are_refused() {
        assert_eq!(
            reason(C.env_edit(EnvSource::Task, "SLURM_CPU_BIND", Some("ab\0c"))),
            "environment variable `SLURM_CPU_BIND` refused: its value holds a NUL byte at byte 2"
        );
        for bad in ["SLURM_A=B", "SLURM_\0", ""] {
            assert!(C.env_edit(EnvSource::Gres, bad, None).is_err(), "{bad:?}");
        }
    }
}
