//! `select/pass_through`: a select wrapper that writes nothing but its
//! identity, so every call goes to its inner plugin through the SDK's
//! defaults ([`slurm_wasm_select_wrapper::Wrapper`]). Its answers must
//! be the inner plugin's; its cost is one wrapper layer.

use slurm_wasm_sdk::Error;
use slurm_wasm_select_wrapper::{SelectConfig, Wrapper};

/// The wrapper: no state of its own.
pub struct PassThrough;

impl Wrapper for PassThrough {
    const TYPE: &'static str = "select/pass_through";
    const NAME: &'static str = "every call passed to the inner plugin";

    fn init(_config: &SelectConfig) -> Result<Self, Error> {
        Ok(PassThrough)
    }
}

slurm_wasm_select_wrapper::export_select_wrapper!(PassThrough);
