//! The environment builders, Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`,
//! `gres_common_gpu_set_env` and the prolog/epilog variant `gres_common_epilog_set_env`.

use slurm_wasm_sdk::gres::{Device, EnvChange, EnvFlags};
use slurm_wasm_sdk::types::{self, GresAllocation, KeyValue};
use slurm_wasm_sdk::{info, Bitmap, Error};

use crate::alloc::bitmap;
use crate::conf::EnvVendors;

/// Which call the environment is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `job_set_env`: the batch script; lists go to `SLURM_JOB_GPUS`.
    Job,
    /// `step_set_env`: lists go to `SLURM_STEP_GPUS`.
    Step,
    /// `task_set_env`: like a step, restricted to the task's usable devices.
    Task,
}

/// The device lists of one allocation on this node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeviceLists {
    /// Global ids (device indices).
    pub global: Vec<String>,
    /// Local ids, or the device's unique id (MIG) when it has one.
    pub local: Vec<String>,
    /// The next local id after the walk (`local_inx` of the verbose line).
    pub next_local: usize,
}

/// Walks `devices` in index order and lists the allocated ones (Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`):
/// global id = index; local id = a running counter over the allocated
/// devices under device constraint (`use_local`), else the index; in task
/// mode (`usable` given) devices outside the usable set are skipped, the set
/// being tested with the local id under constraint and the index otherwise.
/// Slurm 22.05 puts a device's unique id (MIG UUID) in the local list
/// whenever it has one.
pub fn device_lists(
    devices: &[Device],
    alloc: &Bitmap,
    usable: Option<&Bitmap>,
    use_local: bool,
) -> DeviceLists {
    let mut out = DeviceLists::default();
    let mut seen: Vec<u32> = Vec::new();
    for d in devices {
        let index = d.index as usize;
        if !alloc.get(index) || seen.contains(&d.index) {
            continue;
        }
        seen.push(d.index);
        let local = if use_local {
            out.next_local += 1;
            out.next_local - 1
        } else {
            index
        };
        if let Some(usable) = usable {
            if !usable.get(local) {
                continue;
            }
        }
        out.global.push(index.to_string());
        out.local
            .push(d.unique_id.clone().unwrap_or_else(|| local.to_string()));
    }
    out
}

fn set(out: &mut Vec<EnvChange>, key: &str, value: String) {
    out.push(EnvChange::Set(KeyValue {
        key: key.to_string(),
        value,
    }));
}

fn unset(out: &mut Vec<EnvChange>, key: &str, flags: EnvFlags) {
    if !flags.contains(EnvFlags::PROTECT_ENV) {
        out.push(EnvChange::Unset(key.to_string()));
    }
}

/// The environment edits of a GPU-like allocation, with the optional
/// `gpu-bind: …` verbose line.
#[derive(Debug, Clone, Default)]
pub struct GpuEnv {
    pub changes: Vec<EnvChange>,
    /// Printed to the task's stderr by Slurm with `--gpu-bind=verbose`.
    pub verbose: Option<String>,
}

/// `gres_common_gpu_set_env`: `SLURM_GPUS_ON_NODE` (allocated devices),
/// `SLURM_JOB_GPUS` (job) or `SLURM_STEP_GPUS` (step, task) with the global
/// list, and each vendor variable of `vendors` with the local list. Empty
/// values are unset instead, and unsets are dropped under `PROTECT_ENV`.
/// `alloc` none (no allocation of this GRES on the node) unsets everything.
pub fn gpu_set_env(
    scope: Scope,
    devices: &[Device],
    alloc: Option<&Bitmap>,
    usable: Option<&Bitmap>,
    use_local: bool,
    vendors: EnvVendors,
    flags: EnvFlags,
) -> GpuEnv {
    let lists = match alloc {
        Some(alloc) => device_lists(
            devices,
            alloc,
            if scope == Scope::Task { usable } else { None },
            use_local,
        ),
        None => DeviceLists::default(),
    };
    let mut out = Vec::new();
    match alloc.map(Bitmap::count) {
        Some(n) if n > 0 => set(&mut out, "SLURM_GPUS_ON_NODE", n.to_string()),
        _ => unset(&mut out, "SLURM_GPUS_ON_NODE", flags),
    }
    let slurm_var = if scope == Scope::Job {
        "SLURM_JOB_GPUS"
    } else {
        "SLURM_STEP_GPUS"
    };
    if lists.global.is_empty() {
        unset(&mut out, slurm_var, flags);
    } else {
        set(&mut out, slurm_var, lists.global.join(","));
    }
    for var in vendors.variables() {
        if lists.local.is_empty() {
            unset(&mut out, var, flags);
        } else {
            set(&mut out, var, lists.local.join(","));
        }
    }
    let verbose = match (scope, alloc, usable) {
        (Scope::Task, Some(alloc), Some(usable)) if flags.contains(EnvFlags::VERBOSE) => {
            Some(format!(
                "gpu-bind: usable_gres={}; bit_alloc={}; local_inx={}; global_list={}; local_list={}",
                usable.to_hex_mask(),
                alloc.to_hex_mask(),
                lists.next_local,
                lists.global.join(","),
                lists.local.join(",")
            ))
        }
        _ => None,
    };
    GpuEnv {
        changes: out,
        verbose,
    }
}

/// One `job_set_env` / `step_set_env` / `task_set_env` call as the contract
/// hands it to a plugin.
#[derive(Debug, Clone, Copy)]
pub struct EnvCall<'a> {
    pub scope: Scope,
    /// The plugin's allocation on this node; none when it has none.
    pub allocation: Option<&'a GresAllocation>,
    /// The task's usable devices (`task_set_env` only).
    pub usable: Option<&'a types::Bitmap>,
    pub flags: EnvFlags,
}

impl<'a> EnvCall<'a> {
    /// The call of `scope` with these arguments.
    pub fn new(
        scope: Scope,
        allocation: Option<&'a GresAllocation>,
        usable: Option<&'a types::Bitmap>,
        flags: EnvFlags,
    ) -> Self {
        EnvCall {
            scope,
            allocation,
            usable,
            flags,
        }
    }

    /// [`gpu_set_env`] for this call of plugin `plugin_type` over the node's
    /// `devices`, logging the `gpu-bind:` verbose line at info level.
    /// Returns the edits and the allocation's device bitmap (none without an
    /// allocation or with one that lists no devices). Fails, with a message
    /// naming `plugin_type`, when a bitmap breaks the contract's rules.
    pub fn gpu_env(
        &self,
        plugin_type: &str,
        devices: &[Device],
        use_local: bool,
        vendors: EnvVendors,
    ) -> Result<(Vec<EnvChange>, Option<Bitmap>), Error> {
        let alloc = self
            .allocation
            .and_then(|a| a.devices.as_ref())
            .map(|m| bitmap(m, &format!("{plugin_type} allocation devices")))
            .transpose()?;
        let usable = self
            .usable
            .map(|m| bitmap(m, &format!("{plugin_type} usable devices")))
            .transpose()?;
        let env = gpu_set_env(
            self.scope,
            devices,
            alloc.as_ref(),
            usable.as_ref(),
            use_local,
            vendors,
            self.flags,
        );
        if let Some(line) = env.verbose {
            info!("{line}");
        }
        Ok((env.changes, alloc))
    }
}

/// The prolog/epilog edits of one node (`prep_set_env`): always global ids
/// (the prolog runs outside the step's cgroup); vendor entries use the
/// unique id when the device has one; `SLURM_JOB_GPUS` gets the indices; no
/// `SLURM_GPUS_ON_NODE`. Nothing when no allocated device is configured.
pub fn epilog_env(devices: &[Device], alloc: &Bitmap, vendors: EnvVendors) -> Vec<EnvChange> {
    let mut vendor_list = Vec::new();
    let mut slurm_list = Vec::new();
    let mut seen: Vec<u32> = Vec::new();
    for d in devices {
        if !alloc.get(d.index as usize) || seen.contains(&d.index) {
            continue;
        }
        seen.push(d.index);
        vendor_list.push(d.unique_id.clone().unwrap_or_else(|| d.index.to_string()));
        slurm_list.push(d.index.to_string());
    }
    let mut out = Vec::new();
    if slurm_list.is_empty() {
        return out;
    }
    for var in vendors.variables() {
        set(&mut out, var, vendor_list.join(","));
    }
    set(&mut out, "SLURM_JOB_GPUS", slurm_list.join(","));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::env_lines;

    fn device(index: u32, unique_id: Option<&str>) -> Device {
        Device {
            index,
            dev_num: index as i32,
            major: 195,
            minor: index,
            path: format!("/dev/nvidia{index}"),
            unique_id: unique_id.map(String::from),
        }
    }

    // Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`: local list = unique id (MIG) when present in 22.05; prolog
    // vendor list likewise (`gres_common_epilog_set_env`), SLURM_JOB_GPUS always indices.
    #[test]
    fn unique_ids_in_local_and_prolog_lists() {
        let devices = [device(0, None), device(1, Some("MIG-abc"))];
        let alloc = Bitmap::from_bits(2, [0, 1]);
        let lists = device_lists(&devices, &alloc, None, true);
        assert_eq!(lists.global, ["0", "1"]);
        assert_eq!(lists.local, ["0", "MIG-abc"]);
        let env = epilog_env(&devices, &alloc, EnvVendors::NVIDIA);
        assert_eq!(
            env_lines(&env),
            ["CUDA_VISIBLE_DEVICES=0,MIG-abc", "SLURM_JOB_GPUS=0,1"]
        );
    }

    // Slurm 22.05.8 src/plugins/gres/common/gres_common.c `common_gres_set_env`: under constraint the usable set is tested with local ids.
    #[test]
    fn usable_set_uses_local_ids_under_constraint() {
        let devices = [
            device(0, None),
            device(1, None),
            device(2, None),
            device(3, None),
        ];
        let alloc = Bitmap::from_bits(4, [1, 2]);
        let usable = Bitmap::from_bits(4, [1]);
        let lists = device_lists(&devices, &alloc, Some(&usable), true);
        assert_eq!(lists.global, ["2"]);
        assert_eq!(lists.local, ["1"]);
        assert_eq!(lists.next_local, 2);
    }
}
