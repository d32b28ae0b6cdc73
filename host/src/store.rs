//! Per-instance state: what a plugin's `Store` carries.

use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

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
    /// Process ids the plugin may bind in this call (the step's tasks).
    pub allowed_pids: Vec<u32>,
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
