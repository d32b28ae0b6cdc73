//! select/spare_bigmem: a policy on top of any select plugin (the bundled
//! select/cons_tres, say), written as a select wrapper. A job that does not
//! ask for the `bigmem` feature is placed off the nodes that have it
//! whenever the inner plugin finds room for it there; only when it does
//! not are the `bigmem` nodes offered too. Everything else (the node and
//! job tables, nodeinfo, state) is the inner plugin's: the SDK passes each
//! other call through.
//!
//! * RUN_NOW and TEST_ONLY: the inner plugin is asked with the candidates
//!   less the `bigmem` nodes; if it refuses, with all the candidates.
//! * WILL_RUN (and reservation tests): both are asked and the earlier start
//!   wins, the answer off `bigmem` nodes at equal starts: sparing a node
//!   never delays a job in the plan.
//!
//! Run it in a simulation over the bundled select/cons_tres:
//! `slurm-wasm simulate --policy select=select_spare_bigmem.wasm+select/cons_tres,priority/basic`.

use slurm_wasm_sdk::types::{Bitmap, Job, Node};
use slurm_wasm_sdk::Error;
use slurm_wasm_select_wrapper::{
    Inner, JobTestMode, JobTestRequest, JobTestResult, SelectConfig, Wrapper,
};

/// The feature whose nodes are spared.
pub const FEATURE: &str = "bigmem";

/// The nodes that have [`FEATURE`], as bitmap words over the node table.
#[derive(Debug, Default)]
pub struct SpareBigmem {
    bigmem: Vec<u64>,
}

impl SpareBigmem {
    /// Learns which of `nodes` (the whole table, by index) have [`FEATURE`].
    pub fn learn(&mut self, nodes: &[Node]) {
        self.bigmem = vec![0; nodes.len().div_ceil(64)];
        for (i, node) in nodes.iter().enumerate() {
            self.set(i, node);
        }
    }

    /// Updates node `index` from its new configuration.
    pub fn relearn(&mut self, index: usize, node: &Node) {
        if index / 64 < self.bigmem.len() {
            self.set(index, node);
        }
    }

    fn set(&mut self, index: usize, node: &Node) {
        let bit = 1u64 << (index % 64);
        if node.features.iter().any(|f| f == FEATURE) {
            self.bigmem[index / 64] |= bit;
        } else {
            self.bigmem[index / 64] &= !bit;
        }
    }

    /// The candidates a job is first asked with: `None` when the job asks
    /// for [`FEATURE`] (by name in its feature expression), or when no
    /// candidate has it (the request goes through unchanged), or when
    /// every candidate has it (nothing would be left).
    pub fn spared(&self, job: &Job, candidates: &Bitmap) -> Option<Bitmap> {
        let asks = job
            .details
            .features
            .as_deref()
            .is_some_and(|f| f.contains(FEATURE));
        if asks {
            return None;
        }
        let mask = |w: usize| self.bigmem.get(w).copied().unwrap_or(0);
        let words: Vec<u64> = candidates
            .words
            .iter()
            .enumerate()
            .map(|(w, &word)| word & !mask(w))
            .collect();
        let unchanged = words == candidates.words;
        let empty = words.iter().all(|&w| w == 0);
        (!unchanged && !empty).then_some(Bitmap {
            len: candidates.len,
            words,
        })
    }
}

/// Of two will-run answers, the one that starts first; `spared` (off the
/// `bigmem` nodes) at equal starts.
pub fn earlier(spared: JobTestResult, full: JobTestResult) -> JobTestResult {
    let start = |r: &JobTestResult| r.start_time.unwrap_or(i64::MIN);
    if start(&full) < start(&spared) {
        full
    } else {
        spared
    }
}

impl Wrapper for SpareBigmem {
    const TYPE: &'static str = "select/spare_bigmem";
    const NAME: &'static str =
        "jobs not asking for bigmem are kept off bigmem nodes when they fit elsewhere";

    fn init(_config: &SelectConfig) -> Result<Self, Error> {
        Ok(SpareBigmem::default())
    }

    fn node_init(&mut self, nodes: &[Node]) -> Result<(), Error> {
        self.learn(nodes);
        Inner::node_init(nodes)
    }

    fn update_node_config(&mut self, node: &Node) -> Result<(), Error> {
        self.relearn(node.index as usize, node);
        Inner::update_node_config(node)
    }

    fn job_test(&mut self, request: JobTestRequest) -> Result<JobTestResult, Error> {
        let Some(spared) = self.spared(&request.job, &request.candidates) else {
            return Inner::job_test(request);
        };
        let narrow = JobTestRequest {
            candidates: spared,
            ..request.clone()
        };
        match (request.mode, Inner::job_test(narrow)) {
            (JobTestMode::RunNow | JobTestMode::TestOnly, Ok(result)) => Ok(result),
            (JobTestMode::RunNow | JobTestMode::TestOnly, Err(_)) => Inner::job_test(request),
            (_, Ok(result)) => match Inner::job_test(request) {
                Ok(full) => Ok(earlier(result, full)),
                Err(_) => Ok(result),
            },
            (_, Err(_)) => Inner::job_test(request),
        }
    }
}

slurm_wasm_select_wrapper::export_select_wrapper!(SpareBigmem);
