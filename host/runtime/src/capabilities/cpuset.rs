//! The `cpuset` capability: binding processes to CPUs.
//!
//! `sched_setaffinity` is the binding of record: every real provider ends
//! with it, so the mask shows in `/proc/<pid>/status` on every system.
//! [`CgroupCpuset`] (the default) first puts the task into a cgroup v2 step
//! cpuset where the host can use one (see [`super::cgroup`]).

use std::path::Path;
use std::sync::{Mutex, Once};

use super::cgroup::StepCgroups;
use crate::bindings::types::CapabilityError;

/// What a `cpuset.bind` call binds: a task process of the step the call
/// serves, with the ids that place it among Slurm's jobs, steps and tasks.
/// The host assembles it from the call after checking the pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BindTarget {
    /// The job the step belongs to.
    pub job_id: u32,
    /// Step id, Slurm's reserved values for `batch`, `extern` and
    /// `interactive` steps included.
    pub step_id: u32,
    /// The task's position among the step's tasks on this node.
    pub local_id: u32,
    /// The task's process id, one of the step's task pids.
    pub pid: u32,
}

/// Answers `cpuset.bind` and `cpuset.get`, and cleans up after steps. The
/// host checks the pid against the step of the current call before a
/// provider sees it, so providers trust their arguments.
pub trait CpusetProvider: Send + Sync {
    /// Restricts `target.pid` to the OS CPU ids in `cpus` (not empty).
    fn bind(&self, target: &BindTarget, cpus: &[u32]) -> Result<(), CapabilityError>;
    /// The OS CPU ids `pid` may run on.
    fn get(&self, pid: u32) -> Result<Vec<u32>, CapabilityError>;
    /// Step `step_id` of `job_id` ended on this node (every step of the job
    /// when `None`): drops what `bind` set up for it. The default has
    /// nothing to drop.
    fn release(&self, job_id: u32, step_id: Option<u32>) -> Result<(), CapabilityError> {
        let _ = (job_id, step_id);
        Ok(())
    }
}

/// `sched_setaffinity` / `sched_getaffinity`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SchedAffinity;

impl CpusetProvider for SchedAffinity {
    fn bind(&self, target: &BindTarget, cpus: &[u32]) -> Result<(), CapabilityError> {
        set_affinity(target.pid, cpus)
    }

    fn get(&self, pid: u32) -> Result<Vec<u32>, CapabilityError> {
        get_affinity(pid)
    }
}

/// `sched_setaffinity(pid, cpus)`.
fn set_affinity(pid: u32, cpus: &[u32]) -> Result<(), CapabilityError> {
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let max = 8 * size_of::<libc::cpu_set_t>();
    for &cpu in cpus {
        if cpu as usize >= max {
            return Err(CapabilityError::Failed(format!(
                "CPU {cpu} is beyond the {max} CPUs sched_setaffinity can address"
            )));
        }
        unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_setaffinity(pid as libc::pid_t, size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(CapabilityError::Failed(format!(
            "sched_setaffinity({pid}): {}",
            std::io::Error::last_os_error()
        )))
    }
}

/// `sched_getaffinity(pid)`.
fn get_affinity(pid: u32) -> Result<Vec<u32>, CapabilityError> {
    // SAFETY: as above; the kernel fills `set`.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::sched_getaffinity(pid as libc::pid_t, size_of::<libc::cpu_set_t>(), &mut set)
    };
    if rc != 0 {
        return Err(CapabilityError::Failed(format!(
            "sched_getaffinity({pid}): {}",
            std::io::Error::last_os_error()
        )));
    }
    let max = 8 * size_of::<libc::cpu_set_t>();
    Ok((0..max)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .map(|c| c as u32)
        .collect())
}

/// A cgroup v2 step cpuset where the host can use one, then
/// `sched_setaffinity` (the binding of record) in every case.
///
/// Where cgroup v2 offers `cpuset` (see [`super::cgroup`] for the layout and
/// the conditions), `bind` puts the task into
/// `<parent>/slurm-wasm/job_J/step_S/task_T` with those CPUs, then sets the
/// affinity: moving a process into a cpuset resets its affinity, so the
/// order matters. Elsewhere (cgroup v1, no `cpuset` delegated, no write
/// access) it sets the affinity alone and says why once, through `tracing`,
/// at the first bind. `release` removes the step's (or job's) cgroups.
#[derive(Debug)]
pub struct CgroupCpuset {
    cgroups: Result<StepCgroups, String>,
    fallback_noted: Once,
}

impl CgroupCpuset {
    /// Where the cgroup v2 hierarchy is normally mounted.
    pub const DEFAULT_ROOT: &'static str = "/sys/fs/cgroup";

    /// Step cgroups below the host's own cgroup (the `0::` line of
    /// `/proc/self/cgroup`) in the hierarchy mounted at `root`, if cgroup v2
    /// cpusets can be used there. Detection happens once, here.
    pub fn detect(root: impl AsRef<Path>) -> Self {
        Self::with(StepCgroups::detect(root.as_ref(), None))
    }

    /// Step cgroups below `parent`, a cgroup path in the hierarchy mounted
    /// at `root` (`/system.slice/slurmd.service`): for a host that runs in a
    /// leaf of a delegated cgroup, which must hold no processes itself.
    pub fn under(root: impl AsRef<Path>, parent: impl AsRef<Path>) -> Self {
        Self::with(StepCgroups::detect(root.as_ref(), Some(parent.as_ref())))
    }

    fn with(cgroups: Result<StepCgroups, String>) -> Self {
        CgroupCpuset {
            cgroups,
            fallback_noted: Once::new(),
        }
    }

    /// The cgroup step cgroups go under, or why binding uses
    /// `sched_setaffinity` alone.
    pub fn step_parent(&self) -> Result<&Path, &str> {
        match &self.cgroups {
            Ok(cgroups) => Ok(cgroups.parent()),
            Err(why) => Err(why),
        }
    }
}

impl Default for CgroupCpuset {
    /// [`CgroupCpuset::detect`] at [`CgroupCpuset::DEFAULT_ROOT`].
    fn default() -> Self {
        Self::detect(Self::DEFAULT_ROOT)
    }
}

impl CpusetProvider for CgroupCpuset {
    /// # Errors
    /// `failed` naming the cgroup file and the OS error when the step
    /// cgroup cannot be made or joined (the affinity is then left as it
    /// was), or `sched_setaffinity`'s error.
    fn bind(&self, target: &BindTarget, cpus: &[u32]) -> Result<(), CapabilityError> {
        match &self.cgroups {
            Ok(cgroups) => {
                let task = cgroups.bind(target, cpus)?;
                tracing::debug!(pid = target.pid, cgroup = %task.display(), "task placed in its cpuset cgroup");
            }
            Err(why) => self.fallback_noted.call_once(|| {
                tracing::info!(
                    "cpuset: no cgroup v2 cpuset ({why}); binding with sched_setaffinity alone"
                );
            }),
        }
        set_affinity(target.pid, cpus)
    }

    fn get(&self, pid: u32) -> Result<Vec<u32>, CapabilityError> {
        get_affinity(pid)
    }

    fn release(&self, job_id: u32, step_id: Option<u32>) -> Result<(), CapabilityError> {
        match &self.cgroups {
            Ok(cgroups) => cgroups.release(job_id, step_id),
            Err(_) => Ok(()),
        }
    }
}

/// Records bindings and releases instead of applying them (tests,
/// simulations).
#[derive(Debug, Default)]
pub struct RecordingCpuset {
    /// Every bind, in order: `(pid, cpus)`.
    pub bound: Mutex<Vec<(u32, Vec<u32>)>>,
    /// Every release: `(job_id, step_id)`.
    pub released: Mutex<Vec<(u32, Option<u32>)>>,
}

impl CpusetProvider for RecordingCpuset {
    fn bind(&self, target: &BindTarget, cpus: &[u32]) -> Result<(), CapabilityError> {
        self.bound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((target.pid, cpus.to_vec()));
        Ok(())
    }

    /// The CPUs of `pid`'s last bind.
    fn get(&self, pid: u32) -> Result<Vec<u32>, CapabilityError> {
        let bound = self.bound.lock().unwrap_or_else(|p| p.into_inner());
        bound
            .iter()
            .rev()
            .find(|(p, _)| *p == pid)
            .map(|(_, cpus)| cpus.clone())
            .ok_or_else(|| CapabilityError::Failed(format!("pid {pid} was never bound")))
    }

    fn release(&self, job_id: u32, step_id: Option<u32>) -> Result<(), CapabilityError> {
        self.released
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((job_id, step_id));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_affinity_round_trips() {
        let pid = std::process::id();
        let current = SchedAffinity.get(pid).expect("sched_getaffinity on self");
        assert!(!current.is_empty());
        let target = BindTarget {
            job_id: 1,
            step_id: 0,
            local_id: 0,
            pid,
        };
        SchedAffinity
            .bind(&target, &current)
            .expect("rebinding to the same set");
        assert_eq!(SchedAffinity.get(pid).unwrap(), current);
    }

    /// Where the host cannot use cgroup v2 cpusets (this project's machine
    /// runs cgroup v1), the default provider says why and binds with
    /// `sched_setaffinity` alone: here the test process itself.
    #[test]
    fn default_provider_without_cgroup_v2_binds_with_sched_setaffinity() {
        let cpuset = CgroupCpuset::default();
        let Err(why) = cpuset.step_parent() else {
            // cgroup v2 is usable here: binding would move this test
            // process into a step cgroup.
            return;
        };
        if !Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
            assert_eq!(
                why,
                "no cgroup v2 hierarchy at /sys/fs/cgroup \
                 (/sys/fs/cgroup/cgroup.controllers: No such file or directory (os error 2))"
            );
        }
        let pid = std::process::id();
        let current = cpuset.get(pid).expect("sched_getaffinity on self");
        let target = BindTarget {
            job_id: 1,
            step_id: 0,
            local_id: 0,
            pid,
        };
        cpuset.bind(&target, &current).expect("bound");
        assert_eq!(cpuset.get(pid).unwrap(), current);
        cpuset.release(1, Some(0)).expect("nothing to release");
    }
}
