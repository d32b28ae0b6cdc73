#![deny(missing_docs)]
//! # slurm-wasm-select-wrapper
//!
//! A select plugin over an inner one, for the `select-wrapper` world: the
//! bindings, [`Wrapper`] (every function passes the call to the inner
//! plugin unless the wrapper overrides it), [`Inner`] (the inner plugin's
//! functions) and `export_select_wrapper!`. See [`wrapper`].

pub mod wrapper;

/// slurm-wasm-sdk, for the export macro.
#[doc(hidden)]
pub use slurm_wasm_sdk as sdk;

/// Bindings of the `select-wrapper` world.
#[allow(missing_docs)] // generated from wit/ (whose docs it carries where given)
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "select-wrapper",
        with: {
            "slurm:plugin/types@0.1.0": slurm_wasm_sdk::base::slurm::plugin::types,
            "slurm:plugin/log@0.1.0": slurm_wasm_sdk::base::slurm::plugin::log,
            "slurm:plugin/clock@0.1.0": slurm_wasm_sdk::base::slurm::plugin::clock,
        },
        pub_export_macro: true,
        export_macro_name: "__export_select_wrapper",
        default_bindings_module: "slurm_wasm_select_wrapper::bindings",
    });
}

pub use wrapper::*;

/// Exports a type implementing [`Wrapper`] as the component's select
/// plugin, over the inner plugin the host wires to its imported `select`:
/// `export_select_wrapper!(T)` exports the inner plugin's jobinfo records,
/// `export_select_wrapper!(T, jobinfo = J)` the wrapper's own (`J`
/// implements the world's `GuestSelectJobinfo`, usually around an
/// [`InnerJobinfo`]). Expands to nothing outside `wasm32`, so the crate
/// also builds natively for tests.
#[macro_export]
macro_rules! export_select_wrapper {
    ($ty:ty) => {
        $crate::export_select_wrapper!($ty, jobinfo = $crate::InnerJobinfo);
    };
    ($ty:ty, jobinfo = $jobinfo:ty) => {
        $crate::sdk::__plugin_state!($ty);
        #[cfg(target_arch = "wasm32")]
        type __SlurmWasmSelectWrapperExport = $crate::Export<$ty, $jobinfo>;
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::__export_select_wrapper!(__SlurmWasmSelectWrapperExport with_types_in $crate::bindings);
    };
}
