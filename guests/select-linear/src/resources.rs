//! The `job_resources` linear builds for a placement (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_build_select_struct`): whole
//! nodes, every core, every configured CPU, and the memory the job is
//! charged under `CR_Memory`.

use select_common::{MemRequest, NodeRec, NodeTable, ResourcesBuilder};
use slurm_wasm_sdk::types::{GresAllocation, GresRequest, JobResources};
use slurm_wasm_sdk::Bitmap;

use crate::jobs::GresHeld;

use crate::config::Config;
use crate::filter::job_node_memory;

/// `memory_allocated` on `node` ([`job_node_memory`]), which the job's
/// transitions also charge (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_add_job_to_nodes`/`_rm_job_from_nodes`, `_build_select_struct`), only with `CR_Memory`; 0
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

/// The allocation of `chosen` for a job of `total_cpus` CPUs, with the
/// devices `devices` gives the job on each node (none for a job that
/// holds its nodes whole: `scontrol show job -d` on a linear cluster shows
/// `gpu:0(IDX:)` for those).
pub fn build(
    nodes: &NodeTable,
    config: &Config,
    memory: MemRequest,
    chosen: &Bitmap,
    total_cpus: u32,
    devices: impl Fn(&NodeRec) -> Vec<GresAllocation>,
) -> JobResources {
    let mut builder = ResourcesBuilder::new(nodes.len(), true);
    for i in chosen.ones() {
        let Some(node) = nodes.get(i) else { continue };
        builder.add(
            i,
            &Bitmap::full(node.cores() as usize),
            node.cpus,
            node_memory(config, memory, node),
            devices(node),
        );
    }
    builder.build_with_ncpus(total_cpus)
}

/// The devices of a job that shares `node` (a partition with
/// `OverSubscribe`): for each per-node request, the lowest-numbered
/// devices of its name (and type) that no job on the node holds, as
/// `gres_ctld_job_alloc` picks them without a core map
/// (select_linear.c:2808-2818). Checked on the anchor under
/// `OverSubscribe=FORCE:2` (a12, `-n2 --gres=gpu:2` beside an exclusive
/// job: gpu:2(IDX:0-1)). A node's devices of a name are numbered in the
/// order of its `Gres=` entries.
pub fn pick_devices<'a>(
    node: &NodeRec,
    requests: impl Iterator<Item = &'a GresRequest>,
    held: &[&[GresHeld]],
) -> Vec<GresAllocation> {
    requests
        .filter(|g| g.count > 0)
        .map(|g| {
            let of_name = node
                .gres
                .iter()
                .filter(|c| c.name.eq_ignore_ascii_case(&g.name));
            let total: u64 = of_name.clone().map(|c| c.count).sum();
            let mut used = Bitmap::new(total as usize);
            for d in held
                .iter()
                .flat_map(|h| h.iter())
                .filter(|h| h.name.eq_ignore_ascii_case(&g.name))
                .filter_map(|h| h.devices.as_ref())
            {
                for k in d.ones().filter(|&k| k < total as usize) {
                    used.set(k);
                }
            }
            let mut devices = Bitmap::new(total as usize);
            let mut start = 0;
            let mut left = g.count;
            for c in of_name {
                let wanted = g
                    .type_name
                    .as_deref()
                    .is_none_or(|t| c.type_name.as_deref() == Some(t));
                for k in start..start + c.count as usize {
                    if wanted && left > 0 && !used.get(k) {
                        devices.set(k);
                        left -= 1;
                    }
                }
                start += c.count as usize;
            }
            GresAllocation {
                name: g.name.clone(),
                type_name: g.type_name.clone(),
                count: g.count - left,
                devices: Some((&devices).into()),
                per_device: Vec::new(),
            }
        })
        .collect()
}

/// The devices `held` lists, as a job's resources give them: per name and
/// type, the counts added and the devices joined (a job that merged
/// another holds both jobs' devices of a node, as `gres_job_merge` joins
/// them). Entries without devices (a job holding its nodes whole) list
/// nothing, as [`build`] lists nothing for such a job.
pub fn held_devices(held: &[GresHeld]) -> Vec<GresAllocation> {
    let mut out: Vec<(GresAllocation, Bitmap)> = Vec::new();
    for h in held {
        let Some(devices) = &h.devices else { continue };
        match out
            .iter_mut()
            .find(|(a, _)| a.name == h.name && a.type_name == h.type_name)
        {
            Some((a, joined)) => {
                // Both list the node's devices of the name: equal lengths.
                a.count += h.count;
                let len = joined.len();
                for k in devices.ones().filter(|&k| k < len) {
                    joined.set(k);
                }
            }
            None => out.push((
                GresAllocation {
                    name: h.name.clone(),
                    type_name: h.type_name.clone(),
                    count: h.count,
                    devices: None,
                    per_device: Vec::new(),
                },
                devices.clone(),
            )),
        }
    }
    out.into_iter()
        .map(|(mut a, joined)| {
            a.devices = Some((&joined).into());
            a
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use slurm_wasm_sdk::testkit::fixtures;

    #[test]
    fn whole_nodes_with_memory() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_build_select_struct`: cpus[i] = configured CPUs, all cores, memory per request.
        let nodes = NodeTable::new(&[
            fixtures::node(0, "n0", 2, 4, 2, 8000),
            fixtures::node(1, "n1", 1, 4, 1, 4000),
        ])
        .unwrap();
        let mem = Config {
            memory: true,
            ..Config::default()
        };
        let r = build(
            &nodes,
            &mem,
            MemRequest::PerCpu(100),
            &Bitmap::full(2),
            20,
            |_| Vec::new(),
        );
        assert_eq!(r.ncpus, 20);
        assert!(r.whole_nodes);
        assert_eq!(r.per_node[0].cpus, 16);
        assert_eq!(
            r.per_node[0].memory, 1600,
            "16 configured CPUs × 100 (22.05.8)"
        );
        assert_eq!(r.per_node[1].memory, 400);
        assert_eq!(Bitmap::try_from(&r.per_node[0].cores).unwrap().count(), 8);
        let r = build(&nodes, &mem, MemRequest::None, &Bitmap::full(2), 20, |_| {
            Vec::new()
        });
        assert_eq!(r.per_node[1].memory, 4000, "no request: the node's memory");
        let r = build(
            &nodes,
            &Config::default(),
            MemRequest::None,
            &Bitmap::full(2),
            20,
            |_| Vec::new(),
        );
        assert_eq!(r.per_node[1].memory, 0, "memory not consumable");
    }

    #[test]
    fn a_sharing_job_takes_the_lowest_free_devices_of_its_type() {
        // select_linear.c:2808-2818: gres_ctld_job_alloc without a core
        // map. A node with gpu:a100:1 then gpu:v100:2 (devices 0, 1-2);
        // another job holds device 1.
        let mut node = fixtures::node(0, "n0", 1, 4, 1, 1000);
        node.gres = vec![
            slurm_wasm_sdk::types::GresCount {
                name: "gpu".into(),
                type_name: Some("a100".into()),
                count: 1,
            },
            slurm_wasm_sdk::types::GresCount {
                name: "gpu".into(),
                type_name: Some("v100".into()),
                count: 2,
            },
        ];
        let nodes = NodeTable::new(&[node]).unwrap();
        let node = nodes.get(0).unwrap();
        let other = [GresHeld {
            name: "gpu".into(),
            type_name: Some("v100".into()),
            count: 1,
            devices: Some(Bitmap::from_bits(3, [1])),
        }];
        let request = |type_name: Option<&str>, count: u64| GresRequest {
            name: "gpu".into(),
            type_name: type_name.map(Into::into),
            scope: slurm_wasm_sdk::types::GresScope::PerNode,
            count,
            cpus_per_gres: None,
            mem_per_gres: None,
        };
        let devices = |r: GresRequest| {
            let got = pick_devices(node, [r].iter(), &[&other]);
            let d = Bitmap::try_from(got[0].devices.as_ref().unwrap()).unwrap();
            (got[0].count, d.ones().collect::<Vec<_>>())
        };
        assert_eq!(devices(request(None, 2)), (2, vec![0, 2]));
        assert_eq!(devices(request(Some("v100"), 1)), (1, vec![2]));
        assert_eq!(
            devices(request(Some("v100"), 2)),
            (1, vec![2]),
            "one v100 left"
        );
    }
}
