#![deny(missing_docs)]
//! # slurm-wasm-sdk
//!
//! Everything a plugin author needs to write a Slurm plugin as a
//! WebAssembly component for the `slurm:plugin` contract:
//!
//! * bindings for each plugin world, behind the features `select`, `gres`,
//!   `priority` and `task` (enable the one your plugin implements);
//! * [`Bitmap`], Slurm's `bitstr_t` in the contract's 64-bit words, with
//!   the word-at-a-time operations select plugins' per-node loops need;
//! * [`Error`] and the Slurm error [`codes`];
//! * [`identity()`], the usual answer of `describe()`;
//! * [`state`]: the checked blob of `state-save`/`state-restore` (magic,
//!   version, length, checksum, a packed body);
//! * [`pack`]: Slurm's buffer packing (`pack16`, `packstr`, `packdouble`,
//!   ...) with bounds-checked unpacking, and [`protocol`]: the Slurm RPC
//!   protocol versions (20.11 to 22.05) a packed record may carry; the
//!   select nodeinfo and jobinfo records built on them are
//!   `select::info`;
//! * [`host`]: logging and the clock, which call the host inside a component
//!   and the [`testkit`] mock host in native unit tests;
//! * [`plugin`]: a kind's `Plugin` trait, where a plugin is a value that
//!   lives between calls and writes only the functions its policy needs
//!   (a select plugin writes `job_test`; the SDK keeps its node table,
//!   running jobs, nodeinfo and jobinfo);
//! * export macros (`export_select!`, `export_gres!`, `export_priority!`,
//!   `export_task!`, one per enabled feature; a select plugin over an
//!   inner one is written with `slurm-wasm-select-wrapper`, beside this
//!   crate);
//! * [`testkit`]: an in-process mock host and fixtures, so a plugin's logic
//!   is tested with plain `cargo test`.
//!
//! A plugin implements its kind's `Plugin` trait and exports it (see
//! [`plugin`]):
//!
//! ```text
//! impl slurm_wasm_sdk::priority::Plugin for MyPriority { /* TYPE, NAME, init, set */ }
//! slurm_wasm_sdk::export_priority!(plugin MyPriority);
//! ```
//!
//! or implements the world's `Guest` traits (every contract function, as
//! bindings give them) on one type and exports that:
//! `export_priority!(MyPriority)`.

pub mod bitmap;
pub mod codes;
pub mod error;
pub mod host;
pub mod identity;
pub mod pack;
pub mod plugin;
pub mod protocol;
pub mod state;
#[cfg(not(target_arch = "wasm32"))]
pub mod testkit;
pub mod version;

pub use bitmap::{Bitmap, Ones};
pub use error::Error;
pub use identity::identity;
pub use version::{slurm_version_number, CONTRACT_VERSION};

/// Bindings of the `plugin-imports` world: the shared `types`, and the
/// `log` and `clock` imports every plugin world has.
#[allow(missing_docs)] // generated from wit/ (whose docs it carries where given)
pub mod base {
    wit_bindgen::generate!({
        path: "../wit",
        world: "plugin-imports",
        generate_unused_types: true,
    });
}

/// The contract's shared records (`job`, `node`, `bitmap`, ...).
pub use base::slurm::plugin::types;

/// Bindings of the `select-plugin` world.
#[cfg(feature = "select")]
#[allow(missing_docs)] // generated from wit/ (whose docs it carries where given)
pub mod select {
    wit_bindgen::generate!({
        path: "../wit",
        world: "select-plugin",
        with: {
            "slurm:plugin/types@0.1.0": crate::base::slurm::plugin::types,
            "slurm:plugin/log@0.1.0": crate::base::slurm::plugin::log,
            "slurm:plugin/clock@0.1.0": crate::base::slurm::plugin::clock,
        },
        pub_export_macro: true,
        export_macro_name: "__export_select_plugin",
        default_bindings_module: "slurm_wasm_sdk::select",
    });
    pub use self::Guest as IdentityGuest;
    #[doc(hidden)]
    pub use crate::plugin::select::HasManaged;
    pub use crate::plugin::select::{
        info, no_fit, resv_first_nodes, Cluster, Export, JobInfo, Managed, NodeInfo, Plugin,
        Policy, RunningJob,
    };
    /// The protocol versions the nodeinfo and jobinfo `pack`/`unpack` accept.
    pub use crate::protocol::VERSIONS as PROTOCOL_VERSIONS;
    pub use exports::slurm::plugin::select::Guest as SelectGuest;
    pub use exports::slurm::plugin::select::*;
}

/// Bindings of the `gres-plugin` world.
#[cfg(feature = "gres")]
#[allow(missing_docs)] // generated from wit/ (whose docs it carries where given)
pub mod gres {
    wit_bindgen::generate!({
        path: "../wit",
        world: "gres-plugin",
        with: {
            "slurm:plugin/types@0.1.0": crate::base::slurm::plugin::types,
            "slurm:plugin/log@0.1.0": crate::base::slurm::plugin::log,
            "slurm:plugin/clock@0.1.0": crate::base::slurm::plugin::clock,
        },
        pub_export_macro: true,
        export_macro_name: "__export_gres_plugin",
        default_bindings_module: "slurm_wasm_sdk::gres",
    });
    pub use self::Guest as IdentityGuest;
    pub use crate::plugin::gres::{
        allocation_info, EpilogEnv, EpilogResource, Export, NoEpilog, Plugin,
    };
    pub use exports::slurm::plugin::gres::Guest as GresGuest;
    pub use exports::slurm::plugin::gres::*;
    pub use slurm::plugin::{gpu, gpu_control};
}

/// Bindings of the `priority-plugin` world.
#[cfg(feature = "priority")]
#[allow(missing_docs)] // generated from wit/ (whose docs it carries where given)
pub mod priority {
    wit_bindgen::generate!({
        path: "../wit",
        world: "priority-plugin",
        with: {
            "slurm:plugin/types@0.1.0": crate::base::slurm::plugin::types,
            "slurm:plugin/log@0.1.0": crate::base::slurm::plugin::log,
            "slurm:plugin/clock@0.1.0": crate::base::slurm::plugin::clock,
        },
        pub_export_macro: true,
        export_macro_name: "__export_priority_plugin",
        default_bindings_module: "slurm_wasm_sdk::priority",
    });
    pub use self::Guest as IdentityGuest;
    pub use crate::plugin::priority::{Export, Plugin};
    pub use exports::slurm::plugin::priority::Guest as PriorityGuest;
    pub use exports::slurm::plugin::priority::*;
}

/// Bindings of the `task-plugin` world.
#[cfg(feature = "task")]
#[allow(missing_docs)] // generated from wit/ (whose docs it carries where given)
pub mod task {
    wit_bindgen::generate!({
        path: "../wit",
        world: "task-plugin",
        with: {
            "slurm:plugin/types@0.1.0": crate::base::slurm::plugin::types,
            "slurm:plugin/log@0.1.0": crate::base::slurm::plugin::log,
            "slurm:plugin/clock@0.1.0": crate::base::slurm::plugin::clock,
        },
        pub_export_macro: true,
        export_macro_name: "__export_task_plugin",
        default_bindings_module: "slurm_wasm_sdk::task",
    });
    pub use self::Guest as IdentityGuest;
    pub use crate::plugin::task::{binding_as_requested, Export, Plugin};
    pub use exports::slurm::plugin::task::Guest as TaskGuest;
    pub use exports::slurm::plugin::task::*;
    pub use slurm::plugin::{cpuset, topology};
}

/// Exports a type implementing `select::{IdentityGuest, SelectGuest}` as the
/// component's select plugin; or (`export_select!(plugin T)`) a type
/// implementing [`select::Plugin`], through [`select::Export`] and a state
/// static; or (`export_select!(policy T)`) a type implementing
/// [`select::Policy`], as a [`select::Managed`] holding it with the SDK's
/// [`select::Cluster`]. The export itself expands to nothing outside
/// `wasm32`, so the same crate also builds natively for tests and
/// benchmarks.
#[cfg(feature = "select")]
#[macro_export]
macro_rules! export_select {
    (plugin $ty:ty) => {
        $crate::__plugin_state!($ty);
        #[cfg(target_arch = "wasm32")]
        type __SlurmWasmSelectExport = $crate::select::Export<$ty>;
        $crate::export_select!(__SlurmWasmSelectExport);
    };
    (policy $ty:ty) => {
        $crate::__select_managed!($ty);
        #[cfg(target_arch = "wasm32")]
        type __SlurmWasmSelectExport = $crate::select::Export<$crate::select::Managed<$ty>>;
        $crate::export_select!(__SlurmWasmSelectExport);
    };
    ($ty:ident) => {
        #[cfg(target_arch = "wasm32")]
        $crate::select::__export_select_plugin!($ty with_types_in $crate::select);
    };
}

/// Exports a type implementing `gres::{IdentityGuest, GresGuest}`, or
/// (`export_gres!(plugin T)`) a type implementing [`gres::Plugin`], through
/// [`gres::Export`] and a state static.
#[cfg(feature = "gres")]
#[macro_export]
macro_rules! export_gres {
    (plugin $ty:ty) => {
        $crate::__plugin_state!($ty);
        #[cfg(target_arch = "wasm32")]
        type __SlurmWasmGresExport = $crate::gres::Export<$ty>;
        $crate::export_gres!(__SlurmWasmGresExport);
    };
    ($ty:ident) => {
        #[cfg(target_arch = "wasm32")]
        $crate::gres::__export_gres_plugin!($ty with_types_in $crate::gres);
    };
}

/// Exports a type implementing `priority::{IdentityGuest, PriorityGuest}`,
/// or (`export_priority!(plugin T)`) a type implementing
/// [`priority::Plugin`], through [`priority::Export`] and a state static.
#[cfg(feature = "priority")]
#[macro_export]
macro_rules! export_priority {
    (plugin $ty:ty) => {
        $crate::__plugin_state!($ty);
        #[cfg(target_arch = "wasm32")]
        type __SlurmWasmPriorityExport = $crate::priority::Export<$ty>;
        $crate::export_priority!(__SlurmWasmPriorityExport);
    };
    ($ty:ident) => {
        #[cfg(target_arch = "wasm32")]
        $crate::priority::__export_priority_plugin!($ty with_types_in $crate::priority);
    };
}

/// Exports a type implementing `task::{IdentityGuest, TaskGuest}`, or
/// (`export_task!(plugin T)`) a type implementing [`task::Plugin`], through
/// [`task::Export`] and a state static.
#[cfg(feature = "task")]
#[macro_export]
macro_rules! export_task {
    (plugin $ty:ty) => {
        $crate::__plugin_state!($ty);
        #[cfg(target_arch = "wasm32")]
        type __SlurmWasmTaskExport = $crate::task::Export<$ty>;
        $crate::export_task!(__SlurmWasmTaskExport);
    };
    ($ty:ident) => {
        #[cfg(target_arch = "wasm32")]
        $crate::task::__export_task_plugin!($ty with_types_in $crate::task);
    };
}
