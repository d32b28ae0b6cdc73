//! The `cpuset` capability: binding processes to CPUs.

use crate::bindings::types::CapabilityError;

/// Answers `cpuset.bind` and `cpuset.get`. The host checks the pid against the
/// step of the current call before a provider sees it.
pub trait CpusetProvider: Send + Sync {
    /// Restricts `pid` to the OS CPU ids in `cpus`.
    fn bind(&self, pid: u32, cpus: &[u32]) -> Result<(), CapabilityError>;
    /// The OS CPU ids `pid` may run on.
    fn get(&self, pid: u32) -> Result<Vec<u32>, CapabilityError>;
}

/// `sched_setaffinity` / `sched_getaffinity`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SchedAffinity;

impl CpusetProvider for SchedAffinity {
    fn bind(&self, pid: u32, cpus: &[u32]) -> Result<(), CapabilityError> {
        // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        for &cpu in cpus {
            if cpu as usize >= max {
                return Err(CapabilityError::Failed(format!(
                    "CPU {cpu} is beyond the {max} CPUs sched_setaffinity can address"
                )));
            }
            unsafe { libc::CPU_SET(cpu as usize, &mut set) };
        }
        // SAFETY: `set` is a valid cpu_set_t of the size passed.
        let rc = unsafe {
            libc::sched_setaffinity(
                pid as libc::pid_t,
                std::mem::size_of::<libc::cpu_set_t>(),
                &set,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(CapabilityError::Failed(format!(
                "sched_setaffinity({pid}): {}",
                std::io::Error::last_os_error()
            )))
        }
    }

    fn get(&self, pid: u32) -> Result<Vec<u32>, CapabilityError> {
        // SAFETY: as above; the kernel fills `set`.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::sched_getaffinity(
                pid as libc::pid_t,
                std::mem::size_of::<libc::cpu_set_t>(),
                &mut set,
            )
        };
        if rc != 0 {
            return Err(CapabilityError::Failed(format!(
                "sched_getaffinity({pid}): {}",
                std::io::Error::last_os_error()
            )));
        }
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        Ok((0..max)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .map(|c| c as u32)
            .collect())
    }
}

/// Records bindings instead of applying them (tests, simulations).
#[derive(Debug, Default)]
pub struct RecordingCpuset {
    pub bound: std::sync::Mutex<Vec<(u32, Vec<u32>)>>,
}

impl CpusetProvider for RecordingCpuset {
    fn bind(&self, pid: u32, cpus: &[u32]) -> Result<(), CapabilityError> {
        self.bound
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((pid, cpus.to_vec()));
        Ok(())
    }

    fn get(&self, pid: u32) -> Result<Vec<u32>, CapabilityError> {
        let bound = self.bound.lock().unwrap_or_else(|p| p.into_inner());
        bound
            .iter()
            .rev()
            .find(|(p, _)| *p == pid)
            .map(|(_, cpus)| cpus.clone())
            .ok_or_else(|| CapabilityError::Failed(format!("pid {pid} was never bound")))
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
        SchedAffinity
            .bind(pid, &current)
            .expect("rebinding to the same set");
        assert_eq!(SchedAffinity.get(pid).unwrap(), current);
    }
}
