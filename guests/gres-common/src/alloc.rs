//! Reading the allocation records both plugins receive.

use slurm_wasm_sdk::codes::EINVAL;
use slurm_wasm_sdk::gres::{InfoField, InfoValue};
use slurm_wasm_sdk::types::{self, GresAllocation, Job};
use slurm_wasm_sdk::{Bitmap, Error};

/// The bitmap of a contract record, with a message naming `what` when it
/// breaks the contract's rules.
pub fn bitmap(map: &types::Bitmap, what: &str) -> Result<Bitmap, Error> {
    Bitmap::try_from(map).map_err(|e| Error::invalid(format!("{what}: {}", e.message)))
}

/// Capture of a job's per-node allocations of GRES `name`; none when the
/// job has no allocated resources or none of this GRES.
pub fn capture_nodes(job: &Job, name: &str) -> Option<Vec<Option<GresAllocation>>> {
    let Some(resources) = &job.resources else {
        return None;
    };
    let nodes: Vec<Option<GresAllocation>> = resources
        .per_node
        .iter()
        .map(|n| n.gres.iter().find(|g| g.name == name).cloned())
        .collect();
    nodes.iter().any(Option::is_some).then_some(nodes)
}

/// `job_info` / `step_info`: the allocation's count or device bitmap; an
/// allocation without a bitmap has no `bitmap` field (`EINVAL`).
pub fn info(allocation: &GresAllocation, field: InfoField) -> Result<InfoValue, Error> {
    match field {
        InfoField::Count => Ok(InfoValue::Count(allocation.count)),
        InfoField::Bitmap => match &allocation.devices {
            Some(map) => {
                bitmap(map, "gres allocation devices")?;
                Ok(InfoValue::Devices(map.clone()))
            }
            None => Err(Error::new(
                EINVAL,
                format!("gres/{} allocation has no device bitmap", allocation.name),
            )),
        },
    }
}
