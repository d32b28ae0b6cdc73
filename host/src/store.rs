//! Per-instance state: what a plugin's `Store` carries.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::capabilities::cpuset::BindTarget;
use crate::capabilities::{Capability, Grants, Services};
use crate::limits::Limits;
use crate::wasi_log::TracingStream;

/// The data of one plugin instance's `Store`.
pub struct HostState {
    /// The plugin's type (or file name before `describe`), for messages.
    pub(crate) plugin: Arc<str>,
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: Limiter,
    pub(crate) grants: Grants,
    pub(crate) services: Services,
    pub(crate) call: CallContext,
}

/// What the host knows about the call in progress.
#[derive(Debug, Default)]
pub(crate) struct CallContext {
    /// Capabilities the plugin asked for without a grant during this call.
    pub denied: Vec<Capability>,
    /// The step this call is about, whose task processes the plugin may
    /// bind; `None` for calls about no step (nothing may be bound).
    pub step: Option<StepScope>,
}

/// The step a call is about: its ids and its task processes on this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StepScope {
    job_id: u32,
    step_id: u32,
    /// `(pid, local task id)`, the first entry for a pid winning.
    tasks: Vec<(u32, u32)>,
}

impl StepScope {
    /// The scope of step `job_id.step_id` with `tasks` as `(pid, local task
    /// id)`. Pid 0 is dropped: the kernel reads it as "the caller", which
    /// here would be the host itself.
    pub fn new(job_id: u32, step_id: u32, tasks: impl IntoIterator<Item = (u32, u32)>) -> Self {
        StepScope {
            job_id,
            step_id,
            tasks: tasks.into_iter().filter(|&(pid, _)| pid != 0).collect(),
        }
    }

    /// What binding `pid` means, or `None` if `pid` is no task of the step.
    pub fn target(&self, pid: u32) -> Option<BindTarget> {
        self.tasks
            .iter()
            .find(|&&(p, _)| p == pid)
            .map(|&(pid, local_id)| BindTarget {
                job_id: self.job_id,
                step_id: self.step_id,
                local_id,
                pid,
            })
    }

    /// The step's task pids, for messages.
    pub fn pids(&self) -> Vec<u32> {
        self.tasks.iter().map(|&(pid, _)| pid).collect()
    }
}

impl HostState {
    /// A state with WASI linked to nothing: no preopened directories, no
    /// environment or arguments, no network, stdout and stderr to `tracing`.
    pub(crate) fn new(
        plugin: Arc<str>,
        limits: &Limits,
        grants: Grants,
        services: Services,
        seed: u64,
    ) -> Self {
        let wasi = WasiCtxBuilder::new()
            .stdout(TracingStream::new(plugin.clone(), "stdout"))
            .stderr(TracingStream::new(plugin.clone(), "stderr"))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .insecure_random_seed(u128::from(seed))
            .build();
        HostState {
            plugin,
            wasi,
            table: ResourceTable::new(),
            limiter: Limiter::new(limits),
            grants,
            services,
            call: CallContext::default(),
        }
    }

    /// Records an ungranted capability use and returns its denial.
    pub(crate) fn deny(&mut self, capability: Capability) -> crate::capabilities::CapabilityError {
        tracing::warn!(plugin = %self.plugin, capability = crate::error::capability_name(capability), "capability not granted");
        self.call.denied.push(capability);
        crate::capabilities::CapabilityError::Denied(capability)
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// `StoreLimits` that also remembers whether a limit refused a request, so a
/// trap that follows can be reported as "memory limit" rather than a bare trap.
pub(crate) struct Limiter {
    inner: StoreLimits,
    pub(crate) memory_refused: bool,
}

impl Limiter {
    fn new(limits: &Limits) -> Self {
        Limiter {
            inner: StoreLimitsBuilder::new()
                .memory_size(limits.memory_bytes)
                .table_elements(limits.table_elements)
                .instances(limits.max_instances as usize)
                .tables(limits.max_instances as usize * 4)
                .memories(limits.max_instances as usize * 2)
                .build(),
            memory_refused: false,
        }
    }
}

impl ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let ok = self.inner.memory_growing(current, desired, maximum)?;
        self.memory_refused |= !ok;
        Ok(ok)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.inner.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_scope_maps_task_pids_and_never_pid_zero() {
        let scope = StepScope::new(5, 2, [(4101, 1), (0, 0), (4100, 0), (4101, 3)]);
        assert_eq!(scope.pids(), [4101, 4100, 4101]);
        assert_eq!(
            scope.target(4101),
            Some(BindTarget {
                job_id: 5,
                step_id: 2,
                local_id: 1,
                pid: 4101
            })
        );
        assert_eq!(scope.target(4100).map(|t| t.local_id), Some(0));
        // Pid 0 would make the kernel bind (or move) the host itself.
        assert_eq!(scope.target(0), None);
        assert_eq!(scope.target(1), None);
    }
}
