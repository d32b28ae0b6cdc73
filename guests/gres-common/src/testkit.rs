//! Record builders for the unit tests of gres-common, gres/gpu and gres/mps
//! (built with `cfg(test)` or the `testkit` feature, never into a
//! component).

use slurm_wasm_sdk::gres::{EnvChange, GresConfRecord, NodeHardware};
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{GresAllocation, GresCount, Job, JobResources, NodeResources};
use slurm_wasm_sdk::Bitmap;

/// A gres.conf record of `name` with `files` and `count`, nothing else set.
pub fn record(origin: &str, name: &str, files: &[&str], count: u64) -> GresConfRecord {
    GresConfRecord {
        origin: origin.into(),
        name: name.into(),
        type_name: None,
        files: files.iter().map(|f| f.to_string()).collect(),
        count,
        cores: None,
        links: None,
        flags: Vec::new(),
        unique_id: None,
    }
}

/// Node `n1`: 2 sockets × 4 cores × 2 threads with slurm.conf `Gres=` of
/// the `(name, count)` pairs `gres`.
pub fn node(gres: &[(&str, u64)]) -> NodeHardware {
    NodeHardware {
        name: "n1".into(),
        cpus: 16,
        sockets: 2,
        cores_per_socket: 4,
        threads_per_core: 2,
        configured: gres
            .iter()
            .map(|(name, count)| GresCount {
                name: name.to_string(),
                type_name: None,
                count: *count,
            })
            .collect(),
    }
}

/// Environment edits as text: `KEY=value` for a set, `-KEY` for an unset.
pub fn env_lines(changes: &[EnvChange]) -> Vec<String> {
    changes
        .iter()
        .map(|c| match c {
            EnvChange::Set(kv) => format!("{}={}", kv.key, kv.value),
            EnvChange::Unset(key) => format!("-{key}"),
        })
        .collect()
}

/// Job `job_id` running on one node per entry of `gres` (node indices 0, 1,
/// …, one CPU of 8 cores each), each node holding its entry's allocations.
pub fn job_with_gres(job_id: u32, gres: Vec<Vec<GresAllocation>>) -> Job {
    let nodes = gres.len();
    let mut job = fixtures::job(job_id);
    job.resources = Some(JobResources {
        nodes: Bitmap::from_bits(nodes, 0..nodes).into(),
        ncpus: nodes as u32,
        per_node: gres
            .into_iter()
            .enumerate()
            .map(|(index, gres)| NodeResources {
                node_index: index as u32,
                cores: Bitmap::new(8).into(),
                cpus: 1,
                memory: 0,
                gres,
            })
            .collect(),
        whole_nodes: false,
    });
    job
}
