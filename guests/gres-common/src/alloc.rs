//! Reading the allocation records both plugins receive.

use slurm_wasm_sdk::gres::Device;
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

/// `gres_p_epilog_build_env`'s capture of a job for one plugin: the node's
/// device list and, per node of the job, the allocated device bitmap and
/// count of the plugin's GRES.
#[derive(Debug, Clone)]
pub struct JobCapture {
    plugin_type: &'static str,
    /// The node's device list when the job was captured.
    pub devices: Vec<Device>,
    nodes: Vec<Option<(Bitmap, u64)>>,
}

impl JobCapture {
    /// Captures `job`'s allocations of GRES `name` (see [`capture_nodes`]):
    /// none when the job holds none. A node whose allocation has no device
    /// bitmap counts as holding none. Fails when a bitmap breaks the
    /// contract's rules; messages name `plugin_type`.
    pub fn new(
        job: &Job,
        name: &str,
        plugin_type: &'static str,
        devices: &[Device],
    ) -> Result<Option<Self>, Error> {
        let Some(nodes) = capture_nodes(job, name) else {
            return Ok(None);
        };
        let what = format!("{plugin_type} job allocation devices");
        let nodes = nodes
            .iter()
            .map(|n| match n {
                Some(a) => a
                    .devices
                    .as_ref()
                    .map(|m| bitmap(m, &what).map(|b| (b, a.count)))
                    .transpose(),
                None => Ok(None),
            })
            .collect::<Result<_, _>>()?;
        Ok(Some(JobCapture {
            plugin_type,
            devices: devices.to_vec(),
            nodes,
        }))
    }

    /// The allocated devices and count on node `node_index` of the job (an
    /// index into the job's allocated nodes); none where the node holds
    /// none of this GRES; an error past the job's nodes.
    pub fn node(&self, node_index: u32) -> Result<Option<(&Bitmap, u64)>, Error> {
        match self.nodes.get(node_index as usize) {
            Some(node) => Ok(node.as_ref().map(|(alloc, count)| (alloc, *count))),
            None => Err(Error::invalid(format!(
                "{}: epilog node index {node_index} out of range (the job has {} nodes)",
                self.plugin_type,
                self.nodes.len()
            ))),
        }
    }
}
