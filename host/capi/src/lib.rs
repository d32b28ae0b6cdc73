//! # libslurm_wasm: the C ABI of the slurm-wasm host
//!
//! What Slurm's daemons, written in C, need to run sandboxed plugins: the
//! shim plugins (`priority/wasm`, `task/wasm`, ...) `dlopen` this library
//! and call it through `include/slurm_wasm.h`, which is generated from this
//! crate by cbindgen (`cargo test -p slurm-wasm-capi -- --ignored
//! regenerate` rewrites it; a test fails while the checked-in copy is
//! stale).
//!
//! * A **host** is opened from the host configuration (TOML) with
//!   `swasm_host_open`: cheaply, with no thread and no compilation, so a
//!   daemon may open it before it daemonizes. A daemon's configuration must
//!   name a compiled-component cache (`cache_dir`).
//! * A **kind handle** serves one slot of the configuration
//!   (`swasm_priority_open`, `swasm_task_open`, `swasm_gres_open`,
//!   `swasm_select_open`); its plugin is loaded (the runtime started first
//!   if need be) at its first call.
//! * **One function per contract function**, taking C structs a shim fills
//!   from Slurm's records (`swasm_job`, `swasm_node`,
//!   `swasm_launch_request`, ...) and giving results in C structs; arrays,
//!   strings and byte buffers (`swasm_bytes`) of results are owned by the
//!   library and freed by the matching `swasm_*_free` ([`mod@owned`]).
//! * **Plugin-side resources** (a gres plugin's epilog info, a select
//!   plugin's nodeinfo and jobinfo) are opaque handles that every call
//!   takes together with the plugin handle that made them, freed by their
//!   `swasm_*_free`.
//! * **Errors**: fallible functions return `SWASM_SUCCESS` (0) or
//!   `SWASM_ERROR` (-1, `SLURM_ERROR`) and fill a `swasm_error` with Slurm's
//!   code and a one-line message ([`error::swasm_error`]).
//! * **Logs**: plugin logs and host warnings go to the callback given at
//!   open, never to stdout or stderr ([`mod@log`]).
//! * **Processes**: no plugin lock is held across `fork()`
//!   (`pthread_atfork` handlers wait for the calls in flight); the runtime
//!   restarts its epoch ticker in a process whose pid changed; every handle
//!   is thread-safe.
//!
//! Each kind is a `KindPlugin` implementation for the typed plugin, a
//! handle type, and one function per contract function on the same frame
//! ([`priority`], [`task`], [`gres`], [`select`]).

mod cvt;
pub mod error;
mod fork;
pub mod gres;
pub mod host;
mod kind;
pub mod log;
pub mod owned;
pub mod priority;
mod resource;
pub mod select;
pub mod task;
pub mod types;

/// The version of this C ABI: raised whenever a function's signature or a
/// struct's layout changes, so that a shim compiled against one header
/// refuses a library of another (compare with `swasm_abi_version()`).
pub const SWASM_ABI_VERSION: u32 = 2;
