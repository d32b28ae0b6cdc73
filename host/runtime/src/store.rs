//! Per-instance state: what a plugin's `Store` carries.

use std::sync::Arc;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::SeedableRng;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::capabilities::clock::WasiClocks;
use crate::capabilities::cpuset::BindTarget;
use crate::capabilities::{Capability, Grants, Services};
use crate::limits::Limits;
use crate::plugin_log::LogBudget;
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
    /// The plugin's log allowance, shared by its instances.
    pub(crate) log: Arc<LogBudget>,
    /// A select wrapper's inner plugin, which serves the `select` it
    /// imports ([`crate::kinds::inner_select`]); `None` for other plugins.
    pub(crate) inner: Option<crate::kinds::inner_select::Inner>,
}

/// What the host knows about the call in progress.
#[derive(Debug, Default)]
pub(crate) struct CallContext {
    /// Capabilities the plugin asked for without a grant during this call.
    pub denied: Vec<Capability>,
    /// When the call must be over: a WASI wait ends here
    /// ([`crate::wasi_poll`]), as the epoch deadline ends running code.
    pub deadline: Option<Instant>,
    /// The step this call is about, whose task processes the plugin may
    /// bind; `None` for calls about no step (nothing may be bound).
    pub step: Option<StepScope>,
}

/// The step a call is about: its ids, its task processes on this node, and
/// the hardware it holds there: the cores whose CPUs `cpuset` may bind its
/// tasks to, and the GPUs whose clocks `gpu-control` may change. The
/// default scope holds nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StepScope {
    job_id: u32,
    step_id: u32,
    /// `(pid, local task id)`, the first entry for a pid winning.
    tasks: Vec<(u32, u32)>,
    /// The step's cores on this node (abstract core indices), ascending.
    cores: Vec<u32>,
    /// The step's GPUs on this node (NVML indices), ascending.
    gpus: Vec<u32>,
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
            ..StepScope::default()
        }
    }

    /// The same scope holding `cores` (abstract core indices) of the node.
    pub fn with_cores(mut self, cores: impl IntoIterator<Item = u32>) -> Self {
        self.cores = sorted(cores);
        self
    }

    /// The same scope holding `gpus` (NVML indices) of the node.
    pub fn with_gpus(mut self, gpus: impl IntoIterator<Item = u32>) -> Self {
        self.gpus = sorted(gpus);
        self
    }

    /// `job.step`, for messages.
    pub fn name(&self) -> String {
        format!("{}.{}", self.job_id, self.step_id)
    }

    /// The step's cores on this node, ascending.
    pub fn cores(&self) -> &[u32] {
        &self.cores
    }

    /// The step's GPUs on this node, ascending.
    pub fn gpus(&self) -> &[u32] {
        &self.gpus
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

fn sorted(ids: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut ids: Vec<u32> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

impl HostState {
    /// A state with WASI linked to nothing: no preopened directories, no
    /// environment or arguments, no network, stdout and stderr to `tracing`
    /// through the plugin's log allowance, WASI's clocks answered by the
    /// `clock` service (virtual time in simulations), and WASI's random
    /// sources drawn from `seed` when there is one (reproducible replays) or
    /// from the operating system.
    pub(crate) fn new(
        plugin: Arc<str>,
        limits: &Limits,
        grants: Grants,
        services: Services,
        seed: Option<u64>,
        log: Arc<LogBudget>,
    ) -> Self {
        let clocks = WasiClocks(services.clock.clone());
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(TracingStream::new(plugin.clone(), "stdout", log.clone()))
            .stderr(TracingStream::new(plugin.clone(), "stderr", log.clone()))
            .wall_clock(clocks.clone())
            .monotonic_clock(clocks)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        if let Some(seed) = seed {
            wasi.secure_random(StdRng::seed_from_u64(seed))
                .insecure_random(StdRng::seed_from_u64(seed.rotate_left(32)))
                .insecure_random_seed(u128::from(seed));
        }
        HostState {
            plugin,
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limiter: Limiter::new(limits),
            grants,
            services,
            call: CallContext::default(),
            log,
            inner: None,
        }
    }

    /// The plugin's resource table (WASI's pollables and streams).
    pub(crate) fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
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

    #[test]
    fn step_scope_holds_its_cores_and_gpus_sorted_once() {
        let scope = StepScope::new(5, 2, [])
            .with_cores([3, 1, 3])
            .with_gpus([2, 0]);
        assert_eq!(
            (scope.name(), scope.cores(), scope.gpus()),
            ("5.2".into(), &[1, 3][..], &[0, 2][..])
        );
        // The default scope holds nothing: no CPU and no GPU may be touched.
        let nothing = StepScope::default();
        assert!(nothing.cores().is_empty() && nothing.gpus().is_empty());
    }
}
