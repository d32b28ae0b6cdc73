//! select/first_fit: whole nodes, first fit. A job gets the first
//! candidate nodes (its `-w` nodes first, then by index) that can hold it;
//! run-now takes only idle nodes, and a will-run answer starts the job at
//! the first running job's end that frees enough of them. The SDK keeps
//! the nodes, the running jobs, nodeinfo, jobinfo and the state.
use slurm_wasm_sdk::select::{
    no_fit, Cluster, JobTestMode, JobTestRequest, JobTestResult, Policy, SelectConfig,
};
use slurm_wasm_sdk::Error;

pub struct FirstFit;

impl Policy for FirstFit {
    const TYPE: &'static str = "select/first_fit";
    const NAME: &'static str = "whole nodes, first fit";

    fn init(_config: &SelectConfig) -> Result<Self, Error> {
        Ok(FirstFit)
    }

    fn job_test(&mut self, c: &Cluster, r: &JobTestRequest) -> Result<JobTestResult, Error> {
        // The first candidates free by `time` (any node for test-only).
        let candidates = c.candidates(r);
        let fit = |time: i64| {
            let free = |&n: &u32| r.mode == JobTestMode::TestOnly || c.free_at(n) <= time;
            c.take_whole_nodes(r, candidates.iter().copied().filter(free))
        };
        let at = |t: i64| Some((fit(t)?, Some(t)));
        let placed = match r.mode {
            JobTestMode::RunNow | JobTestMode::TestOnly => fit(c.now()).map(|n| (n, None)),
            _ => c.end_times().into_iter().find_map(at),
        };
        let (nodes, start) = placed.ok_or_else(|| no_fit(r.mode, r.job.job_id))?;
        Ok(c.whole_nodes(r, &nodes, start))
    }
}

slurm_wasm_sdk::export_select!(policy FirstFit);
