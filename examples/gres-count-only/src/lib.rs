//! gres/fpga: a count-only GRES (no device files): jobs and steps holding
//! some see `SLURM_FPGA_COUNT=<count on this node>` (a gres plugin may set
//! `SLURM_*` and the GPU variables). Every other function keeps the SDK's
//! default (records as gres.conf gives them, no devices).
use slurm_wasm_sdk::gres::{EnvChange, EnvFlags, GresConfig, NoEpilog, Plugin};
use slurm_wasm_sdk::types::{GresAllocation, KeyValue};
use slurm_wasm_sdk::Error;

pub struct Fpga;

fn count_env(allocation: Option<&GresAllocation>) -> Vec<EnvChange> {
    let set = |a: &GresAllocation| {
        let (key, value) = ("SLURM_FPGA_COUNT".into(), a.count.to_string());
        EnvChange::Set(KeyValue { key, value })
    };
    allocation.map(set).into_iter().collect()
}

impl Plugin for Fpga {
    const TYPE: &'static str = "gres/fpga";
    const NAME: &'static str = "FPGA count";
    type Epilog = NoEpilog;

    fn init(_config: GresConfig) -> Result<Self, Error> {
        Ok(Fpga)
    }

    fn job_set_env(
        &mut self,
        a: Option<&GresAllocation>,
        _: EnvFlags,
    ) -> Result<Vec<EnvChange>, Error> {
        Ok(count_env(a))
    }

    fn step_set_env(
        &mut self,
        a: Option<&GresAllocation>,
        _: EnvFlags,
    ) -> Result<Vec<EnvChange>, Error> {
        Ok(count_env(a))
    }
}

slurm_wasm_sdk::export_gres!(plugin Fpga);
