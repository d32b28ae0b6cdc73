//! The answers of select/hostile: the world's own answer, bent the way the
//! behaviour says ([`crate::behaviour`]).

use slurm_wasm_sdk::select::{
    JobTestRequest, JobTestResult, JobinfoField, JobinfoValue, NodeinfoField, NodeinfoValue,
    PluginInfoField, PluginInfoValue, ReservationRequest, ReservationResult,
};
use slurm_wasm_sdk::types::{Bitmap as WitBitmap, GresAllocation, Job, JobResources};
use slurm_wasm_sdk::{codes, Bitmap, Error};

use crate::behaviour::{Behaviour, MANY_DIMS, STRANGER_JOB};
use crate::world::World;

/// `job-test`, by the job's name.
pub fn job_test(world: &World, request: &JobTestRequest, now: i64) -> Result<JobTestResult, Error> {
    let behaviour = Behaviour::parse(&request.job.name);
    behaviour.fault("job-test");
    let mut result = world.job_test(request, now)?;
    match behaviour {
        Behaviour::NcpusMax => result.resources.ncpus = u32::MAX,
        Behaviour::PreemptStranger => result.preemptees.push(STRANGER_JOB),
        Behaviour::PreemptTwice => {
            let id = request
                .preemptee_candidates
                .first()
                .map_or(STRANGER_JOB, |c| c.job_id);
            result.preemptees = vec![id, id];
        }
        Behaviour::StartMax => result.start_time = Some(i64::MAX),
        Behaviour::StartMin => result.start_time = Some(i64::MIN),
        Behaviour::GpuBeyond => {
            if let Some(entry) = result.resources.per_node.first_mut() {
                let gpus = world.node(entry.node_index)?.gres.iter();
                let beyond = gpus
                    .filter(|g| g.name == "gpu")
                    .map(|g| g.count)
                    .sum::<u64>();
                entry.gres.push(GresAllocation {
                    name: "gpu".into(),
                    type_name: None,
                    count: 1,
                    devices: Some(Bitmap::from_bits(beyond as usize + 1, [beyond as usize]).into()),
                    per_device: Vec::new(),
                });
            }
        }
        _ => {}
    }
    Ok(result)
}

/// `job-expand`, by the `to` job's name.
pub fn job_expand(world: &mut World, from: &Job, to: &Job) -> Result<JobResources, Error> {
    let behaviour = Behaviour::parse(&to.name);
    behaviour.fault("job-expand");
    let mut resources = world.job_expand(from, to)?;
    match behaviour {
        Behaviour::NcpusMax => resources.ncpus = u32::MAX,
        Behaviour::ExpandStranger => {
            let mut held = ones(&resources.nodes);
            let stranger = first_outside(world, &held)?;
            held.push(stranger);
            held.sort_unstable();
            resources = world.whole_nodes(&held);
        }
        _ => {}
    }
    Ok(resources)
}

/// `step-pick-nodes`, by the job's name: `none` (the controller picks)
/// unless the behaviour picks.
pub fn step_pick_nodes(
    world: &World,
    job: &Job,
    available: Option<&WitBitmap>,
) -> Result<Option<WitBitmap>, Error> {
    let behaviour = Behaviour::parse(&job.name);
    behaviour.fault("step-pick-nodes");
    let offered = match available {
        Some(map) => ones(map),
        None => job
            .resources
            .as_ref()
            .map(|r| ones(&r.nodes))
            .unwrap_or_default(),
    };
    Ok(match behaviour {
        Behaviour::PickStranger => Some(world.node_map([first_outside(world, &offered)?])),
        Behaviour::PickExtra => Some(world.node_map(offered)),
        _ => None,
    })
}

/// `resv-test`, by the armed behaviour.
pub fn resv_test(
    world: &World,
    request: &ReservationRequest,
    behaviour: Behaviour,
) -> Result<ReservationResult, Error> {
    behaviour.fault("resv-test");
    let available = ones(&request.available);
    match behaviour {
        Behaviour::ResvStranger => {
            let mut result = world.resv_test(request)?;
            let mut nodes = ones(&result.nodes);
            nodes.push(first_outside(world, &available)?);
            nodes.sort_unstable();
            result.nodes = world.node_map(nodes);
            Ok(result)
        }
        Behaviour::ResvExtra => Ok(ReservationResult {
            nodes: world.node_map(available),
            cores: None,
        }),
        Behaviour::ResvExcludedCore => {
            let core = request
                .excluded_cores
                .as_ref()
                .and_then(|map| ones(map).first().copied())
                .ok_or_else(|| {
                    Error::invalid("select/hostile: resv-excluded-core needs an excluded core")
                })?;
            let offsets = world.core_offsets();
            let node = offsets
                .iter()
                .rposition(|&first| first <= core)
                .unwrap_or(0) as u32;
            Ok(ReservationResult {
                nodes: world.node_map([node]),
                cores: Some(
                    Bitmap::from_bits(world.total_cores() as usize, [core as usize]).into(),
                ),
            })
        }
        Behaviour::ResvCoreOutside => {
            let result = world.resv_test(request)?;
            let total = world.total_cores() as usize;
            let mut cores = match &result.cores {
                Some(map) => Bitmap::try_from(map).map_err(|e| Error::invalid(e.message))?,
                None => Bitmap::new(total),
            };
            cores.set(total - 1);
            Ok(ReservationResult {
                cores: Some(cores.into()),
                ..result
            })
        }
        _ => world.resv_test(request),
    }
}

/// `get-info-from-plugin`, by the job's name or the armed behaviour.
pub fn info(world: &World, field: PluginInfoField, behaviour: Behaviour) -> PluginInfoValue {
    behaviour.fault("get-info-from-plugin");
    match (behaviour, field) {
        (Behaviour::InfoMismatch, PluginInfoField::ConfigInfo) => PluginInfoValue::Flag(true),
        (Behaviour::InfoMismatch, _) => PluginInfoValue::Config(Vec::new()),
        _ => world.info(field),
    }
}

/// What a nodeinfo shows of its node, taken when it is made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeSnapshot {
    /// The node's CPUs when a running job holds it, else 0.
    pub alloc_cpus: u16,
    /// The node's memory when a running job holds it, else 0.
    pub alloc_memory: u64,
}

impl NodeSnapshot {
    /// Node `index` as the world has it now.
    pub fn of(world: &World, index: u32) -> Result<NodeSnapshot, Error> {
        let node = world.node(index)?;
        Ok(if world.held(index) {
            NodeSnapshot {
                alloc_cpus: node.cpus,
                alloc_memory: node.real_memory,
            }
        } else {
            NodeSnapshot::default()
        })
    }

    /// `pack`: 2 bytes of CPUs then 8 of memory, little-endian.
    pub fn pack(&self) -> Vec<u8> {
        let mut out = self.alloc_cpus.to_le_bytes().to_vec();
        out.extend(self.alloc_memory.to_le_bytes());
        out
    }

    /// `unpack`: exactly what `pack` wrote, else `EINVAL`.
    pub fn unpack(data: &[u8]) -> Result<NodeSnapshot, Error> {
        let (Ok(cpus), Ok(memory)) = (
            <[u8; 2]>::try_from(data.get(..2).unwrap_or_default()),
            <[u8; 8]>::try_from(data.get(2..).unwrap_or_default()),
        ) else {
            return Err(Error::invalid(format!(
                "select/hostile: a nodeinfo packs to 10 bytes, got {}",
                data.len()
            )));
        };
        Ok(NodeSnapshot {
            alloc_cpus: u16::from_le_bytes(cpus),
            alloc_memory: u64::from_le_bytes(memory),
        })
    }

    /// `select-nodeinfo.get`, by the armed behaviour. `state` is ignored:
    /// what is allocated is allocated.
    pub fn get(&self, field: NodeinfoField, behaviour: Behaviour) -> Result<NodeinfoValue, Error> {
        behaviour.fault("select-nodeinfo.get");
        Ok(match (behaviour, field) {
            (Behaviour::NodeinfoMismatch, NodeinfoField::Subcnt) => NodeinfoValue::Text("x".into()),
            (Behaviour::NodeinfoMismatch, _) => NodeinfoValue::Count(1),
            (Behaviour::NodeinfoCpus, NodeinfoField::Subcnt) => NodeinfoValue::Count(u16::MAX),
            (Behaviour::NodeinfoNan, NodeinfoField::TresAllocWeighted) => {
                NodeinfoValue::Weighted(f64::NAN)
            }
            (_, NodeinfoField::Subcnt) => NodeinfoValue::Count(self.alloc_cpus),
            (_, NodeinfoField::MemAlloc) => NodeinfoValue::Memory(self.alloc_memory),
            (_, NodeinfoField::TresAllocFmtStr) if self.alloc_cpus == 0 => {
                NodeinfoValue::Text(String::new())
            }
            (_, NodeinfoField::TresAllocFmtStr) => NodeinfoValue::Text(format!(
                "cpu={},mem={}M",
                self.alloc_cpus, self.alloc_memory
            )),
            (_, NodeinfoField::TresAllocWeighted) => {
                NodeinfoValue::Weighted(f64::from(self.alloc_cpus))
            }
            (_, NodeinfoField::Ptr) => {
                return Err(Error::invalid(
                    "select/hostile: SELECT_NODEDATA_PTR has no meaning across the boundary",
                ))
            }
        })
    }
}

/// `select-jobinfo.get`, by the armed behaviour: `SLURM_ERROR` (no per-job
/// data, as linear and cons_tres) unless misbehaving.
pub fn jobinfo_get(field: JobinfoField, behaviour: Behaviour) -> Result<JobinfoValue, Error> {
    behaviour.fault("select-jobinfo.get");
    match (behaviour, field) {
        (Behaviour::JobinfoMismatch, JobinfoField::Network) => Ok(JobinfoValue::Flag(true)),
        (Behaviour::JobinfoMismatch, _) => Ok(JobinfoValue::Text("x".into())),
        _ => Err(Error::new(
            codes::SLURM_ERROR,
            format!("select/hostile: no per-job data ({field:?})"),
        )),
    }
}

/// `ba-get-dims`, by the armed behaviour: none (a flat system).
pub fn ba_get_dims(behaviour: Behaviour) -> Option<Vec<u32>> {
    behaviour.fault("ba-get-dims");
    (behaviour == Behaviour::DimsMany).then(|| vec![1; MANY_DIMS])
}

/// The set bits of a contract bitmap (none for a malformed one).
fn ones(map: &WitBitmap) -> Vec<u32> {
    Bitmap::try_from(map)
        .map(|b| b.ones().map(|i| i as u32).collect())
        .unwrap_or_default()
}

/// The first node of the table not in `inside`; `EINVAL` if there is none.
fn first_outside(world: &World, inside: &[u32]) -> Result<u32, Error> {
    (0..world.nodes.len() as u32)
        .find(|i| !inside.contains(i))
        .ok_or_else(|| Error::invalid("select/hostile: every node is already inside"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodeinfo_packs_and_refuses_other_lengths() {
        let snap = NodeSnapshot {
            alloc_cpus: 4,
            alloc_memory: 1000,
        };
        assert_eq!(NodeSnapshot::unpack(&snap.pack()), Ok(snap));
        assert!(NodeSnapshot::unpack(&[1, 2, 3]).is_err());
        assert!(matches!(
            snap.get(NodeinfoField::TresAllocFmtStr, Behaviour::Normal),
            Ok(NodeinfoValue::Text(t)) if t == "cpu=4,mem=1000M"
        ));
        assert!(matches!(
            snap.get(NodeinfoField::Subcnt, Behaviour::NodeinfoCpus),
            Ok(NodeinfoValue::Count(u16::MAX))
        ));
    }

    #[test]
    fn jobinfo_and_dims() {
        assert!(jobinfo_get(JobinfoField::Network, Behaviour::Normal).is_err());
        assert!(matches!(
            jobinfo_get(JobinfoField::Network, Behaviour::JobinfoMismatch),
            Ok(JobinfoValue::Flag(true))
        ));
        assert_eq!(ba_get_dims(Behaviour::Normal), None);
        assert_eq!(
            ba_get_dims(Behaviour::DimsMany).map(|d| d.len()),
            Some(MANY_DIMS)
        );
    }
}
