//! The `job_resources` linear builds for a placement (spec 1.7): whole
//! nodes, every core, every configured CPU, and the memory the job is
//! charged under `CR_Memory`.

use select_common::{MemRequest, NodeRec, NodeTable, ResourcesBuilder};
use slurm_wasm_sdk::types::JobResources;
use slurm_wasm_sdk::Bitmap;

use crate::config::Config;
use crate::filter::job_node_memory;

/// `memory_allocated` on `node` ([`job_node_memory`]), which the job's
/// transitions also charge (spec 1.6, 1.7), only with `CR_Memory`; 0
/// without it. A job tracked with resources always has a request here
/// ([`crate::jobs::charged_memory`]); `None` (a job without nodes) charges
/// the node's whole memory, as Slurm's transitions do.
pub fn node_memory(config: &Config, memory: MemRequest, node: &NodeRec) -> u64 {
    if config.memory {
        job_node_memory(memory, node)
    } else {
        0
    }
}

/// The allocation of `chosen` for a job of `total_cpus` CPUs. Linear's
/// `job_resources` carry no GRES (the controller's GRES code allocates
/// devices; `scontrol show job -d` on a linear cluster shows none).
pub fn build(
    nodes: &NodeTable,
    config: &Config,
    memory: MemRequest,
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
            node_memory(config, memory, node),
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
        let r = build(&nodes, &mem, MemRequest::PerCpu(100), &Bitmap::full(2), 20);
        assert_eq!(r.ncpus, 20);
        assert!(r.whole_nodes);
        assert_eq!(r.per_node[0].cpus, 16);
        assert_eq!(
            r.per_node[0].memory, 1600,
            "16 configured CPUs × 100 (22.05.8)"
        );
        assert_eq!(r.per_node[1].memory, 400);
        assert_eq!(Bitmap::try_from(&r.per_node[0].cores).unwrap().count(), 8);
        let r = build(&nodes, &mem, MemRequest::None, &Bitmap::full(2), 20);
        assert_eq!(r.per_node[1].memory, 4000, "no request: the node's memory");
        let r = build(
            &nodes,
            &Config::default(),
            MemRequest::None,
            &Bitmap::full(2),
            20,
        );
        assert_eq!(r.per_node[1].memory, 0, "memory not consumable");
    }
}
