//! priority/small_first: small jobs first, weighted by the partition's
//! PriorityJobFactor. Priorities are set at submission; every other
//! function keeps the SDK's default (priority/basic's).
use slurm_wasm_sdk::priority::{Plugin, PriorityConfig};
use slurm_wasm_sdk::{types::Job, Error};

pub struct SmallFirst {
    job_factor: Vec<u32>, // PriorityJobFactor, by partition index
}

impl Plugin for SmallFirst {
    const TYPE: &'static str = "priority/small_first";
    const NAME: &'static str = "small jobs first, by partition";

    fn init(config: PriorityConfig) -> Result<Self, Error> {
        let factors = config
            .partitions
            .iter()
            .map(|p| p.priority_job_factor.into());
        Ok(SmallFirst {
            job_factor: factors.collect(),
        })
    }

    fn set(&mut self, _last_prio: u32, job: &Job) -> Result<u32, Error> {
        let partition = job.partitions.first().map(|&p| p as usize);
        let factor = partition.and_then(|p| self.job_factor.get(p)).copied();
        let size = 1_000_000 / (1 + job.details.min_cpus);
        Ok(size.saturating_mul(factor.unwrap_or(1).max(1)))
    }
}

slurm_wasm_sdk::export_priority!(plugin SmallFirst);
