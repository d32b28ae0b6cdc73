//! The `job_resources` linear builds for a placement (spec 1.7): whole
//! nodes, every core, every configured CPU, and the memory the job is
//! charged under `CR_Memory`.

use select_common::{MemRequest, NodeRec, NodeTable, ResourcesBuilder};
use slurm_wasm_sdk::types::{JobDetails, JobResources};
use slurm_wasm_sdk::Bitmap;

use crate::config::Config;

/// CPUs of `node` the job may use: with `--threads-per-core` below the
/// node's, `ceil(cpus / tpc) × threads_per_core`; otherwise all of them.
pub fn usable_cpus(node: &NodeRec, d: &JobDetails) -> u64 {
    let cpus = u64::from(node.cpus);
    let tpc = u64::from(node.threads_per_core.max(1));
    let want = u64::from(d.threads_per_core);
    if want > 0 && want < tpc {
        cpus.div_ceil(tpc) * want
    } else {
        cpus
    }
}

/// `memory_allocated` on `node` (spec 1.7), only with `CR_Memory`: the
/// per-node request, per-CPU × usable CPUs, or the node's whole memory
/// when the job asked for none; 0 without `CR_Memory`. Slurm 22.05.8
/// multiplies `--mem-per-cpu` by all configured CPUs here; the usable
/// count is the spec's (later Slurm's), which we follow: the two differ
/// only for `--threads-per-core` below the node's.
pub fn node_memory(config: &Config, memory: MemRequest, node: &NodeRec, d: &JobDetails) -> u64 {
    if !config.memory {
        return 0;
    }
    match memory {
        MemRequest::PerNode(m) => m,
        MemRequest::PerCpu(m) => m * usable_cpus(node, d),
        MemRequest::None => node.real_memory,
    }
}

/// The allocation of `chosen` for a job of `total_cpus` CPUs. Linear's
/// `job_resources` carry no GRES (the controller's GRES code allocates
/// devices; `scontrol show job -d` on a linear cluster shows none).
pub fn build(
    nodes: &NodeTable,
    config: &Config,
    memory: MemRequest,
    d: &JobDetails,
    chosen: &Bitmap,
    total_cpus: u32,
) -> JobResources {
    let mut builder = ResourcesBuilder::new(nodes.len(), true);
    for i in chosen.ones() {
        let Some(node) = nodes.get(i) else { continue };
        builder.add(
            i,
            &Bitmap::full(node.cores() as usize),
            node.cpus,
            node_memory(config, memory, node, d),
            Vec::new(),
        );
    }
    builder.build_with_ncpus(total_cpus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;

    #[test]
    fn usable_cpus_with_threads_per_core() {
        // Spec 1.7: threads_per_core below the node's => ceil(cpus/tpc) * tpc_job.
        let node = NodeRec::from_node(&fixtures::node(0, "n", 2, 4, 2, 1000)).unwrap();
        let mut d = fixtures::job_details();
        assert_eq!(usable_cpus(&node, &d), 16);
        d.threads_per_core = 1;
        assert_eq!(usable_cpus(&node, &d), 8);
    }

    #[test]
    fn whole_nodes_with_memory() {
        // Spec 1.7: cpus[i] = configured CPUs, all cores, memory per request.
        let nodes = NodeTable::new(&[
            fixtures::node(0, "n0", 2, 4, 2, 8000),
            fixtures::node(1, "n1", 1, 4, 1, 4000),
        ])
        .unwrap();
        let mem = Config {
            memory: true,
            ..Config::default()
        };
        let mut d = fixtures::job_details();
        d.threads_per_core = 1;
        let r = build(
            &nodes,
            &mem,
            MemRequest::PerCpu(100),
            &d,
            &Bitmap::full(2),
            20,
        );
        assert_eq!(r.ncpus, 20);
        assert!(r.whole_nodes);
        assert_eq!(r.per_node[0].cpus, 16);
        assert_eq!(r.per_node[0].memory, 800, "8 usable CPUs × 100");
        assert_eq!(r.per_node[1].memory, 400);
        assert_eq!(Bitmap::try_from(&r.per_node[0].cores).unwrap().count(), 8);
        let r = build(&nodes, &mem, MemRequest::None, &d, &Bitmap::full(2), 20);
        assert_eq!(r.per_node[1].memory, 4000, "no request: the node's memory");
        let r = build(
            &nodes,
            &Config::default(),
            MemRequest::None,
            &d,
            &Bitmap::full(2),
            20,
        );
        assert_eq!(r.per_node[1].memory, 0, "memory not consumable");
    }
}
