//! `lllp_distribution` (Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`): at launch, slurmd rewrites the step's
//! `cpu_bind_type` and `cpu_bind` into the binding slurmstepd applies.
//!
//! 0. A node configured with `CPUs=` equal to its core count binds one
//!    thread per core.
//! 1. Manual modes (`none`, `rank`, `map_cpu`, `mask_cpu`, `rank_ldom`,
//!    `map_ldom`, `mask_ldom`) stay as given, checked against the step's
//!    allocation.
//! 2. Without a unit, one is chosen from the task count (sockets, cores,
//!    threads, then `TaskPluginParam=autobind`), or the step is bound to its
//!    whole allocation.
//! 3. A block or cyclic layout gives each task abstract CPUs, expanded to the
//!    unit, mapped to OS ids and written as one hex mask per task (`MASK`).
//!
//! This is Slurm 22.05.8's behaviour. Where older releases only logged
//! these cases, 22.05.8 already reports the errors:
//! a manual mode other than `none`/`map_cpu`/`mask_cpu` on part of a node
//! fails with "Entire node must be allocated for ...", and a `map_cpu` or
//! `mask_cpu` outside the allocation fails with "CPU binding outside of job
//! step allocation" (both `ESLURMD_CPU_BIND_ERROR`); those were log lines
//! only up to 21.08.

use slurm_wasm_sdk::codes::{ESLURMD_CPU_BIND_ERROR, ESLURMD_CPU_LAYOUT_ERROR};
use slurm_wasm_sdk::{Bitmap, Error};

use crate::allocation::{spec_threads, Allocation, CredentialShape};
use crate::bind_type::{
    describe, AUTO_BIND_TO_CORES, AUTO_BIND_TO_SOCKETS, AUTO_BIND_TO_THREADS, MAP, MASK, MODES,
    NONE, ONE_THREAD_PER_CORE, TO_CORES, TO_LDOMS, TO_SOCKETS, TO_THREADS, UNITS, VERBOSE,
};
use crate::cstr::atoi;
use crate::dist::lllp_layout;
use crate::hardware::Hardware;
use crate::layout::{lay_out, LayoutRequest};
use crate::mask::{self, cpuset_text, parse_cpuset};

/// The launch request, as far as binding goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub job_id: u32,
    /// Tasks on this node.
    pub tasks: u32,
    pub cpus_per_task: u16,
    /// `cpu_bind_type` as requested.
    pub cpu_bind_type: u32,
    /// `cpu_bind` as requested: srun's expanded map or mask list.
    pub cpu_bind: String,
    /// `task_dist`.
    pub task_dist: u32,
    /// `--ntasks-per-core`, `--ntasks-per-socket`, `--threads-per-core`;
    /// 0 when not given.
    pub ntasks_per_core: u16,
    pub ntasks_per_socket: u16,
    pub threads_per_core: u16,
    /// `--overcommit`: a failed layout binds to the allocation instead of
    /// failing the launch.
    pub overcommit: bool,
    /// This node's slice of the step core bitmap (controller numbering).
    pub step_cores: Bitmap,
    /// The credential's view of the node.
    pub shape: CredentialShape,
    /// `CPUs=` of the node.
    pub cpus_conf: u16,
    /// `job_core_spec`: cores, or threads with `CORE_SPEC_THREAD`.
    pub job_core_spec: Option<u16>,
}

/// Cluster settings `lllp_distribution` reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settings {
    /// `TaskPluginParam` bits (see [`crate::task_plugin_param`]).
    pub task_plugin_param: u32,
    /// `SelectTypeParameters` has `CR_CORE_DEFAULT_DIST_BLOCK`.
    pub default_dist_block: bool,
}

/// The binding decided for the step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    pub cpu_bind_type: u32,
    pub cpu_bind: String,
}

/// Runs `lllp_distribution` for `launch` on a node laid out as `hw`.
///
/// Errors: `ESLURMD_CPU_BIND_ERROR` (4032) when the allocation cannot be
/// read from the request, when a manual mode needs the whole node, or when a
/// map or mask leaves the allocation; `ESLURMD_CPU_LAYOUT_ERROR` (4033)
/// when no layout fits and the step does not overcommit. The message is the
/// one srun shows.
pub fn distribute(launch: &Launch, hw: &Hardware, settings: &Settings) -> Result<Binding, Error> {
    let mut bind = launch.cpu_bind_type;
    let cpus_conf = match launch.cpus_conf {
        0 => hw.size(),
        cpus => usize::from(cpus),
    };
    if cpus_conf == hw.total_cores() {
        bind |= ONE_THREAD_PER_CORE;
    }
    let alloc = Allocation::of_step(&launch.step_cores, launch.shape, hw, launch.job_core_spec)
        .map_err(|e| {
            slurm_wasm_sdk::error!("Could not determine allocated CPUs: {e}");
            Error::new(ESLURMD_CPU_BIND_ERROR, "Could not determine allocated CPUs")
        })?;
    let avail_mask = |bind: u32| alloc.os_mask(hw, bind & TO_LDOMS != 0).to_hex_mask();

    if bind & MODES != 0 {
        return manual(launch, bind, &alloc, &avail_mask(bind));
    }
    if bind & UNITS == 0 {
        match auto_unit(launch, &alloc, settings) {
            Some((unit, default)) => {
                bind |= unit;
                slurm_wasm_sdk::info!(
                    "JobId={} {} auto binding: {}, dist {}",
                    launch.job_id,
                    if default { "default" } else { "implicit" },
                    describe(bind),
                    launch.task_dist
                );
            }
            None => {
                bind |= MASK;
                slurm_wasm_sdk::info!(
                    "JobId={} auto binding off: {}",
                    launch.job_id,
                    describe(bind)
                );
                return Ok(Binding {
                    cpu_bind_type: bind,
                    cpu_bind: avail_mask(bind),
                });
            }
        }
    } else {
        slurm_wasm_sdk::info!(
            "JobId={} binding: {}, dist {}",
            launch.job_id,
            describe(bind),
            launch.task_dist
        );
    }

    let request = LayoutRequest {
        tasks: launch.tasks as usize,
        cpus_per_task: usize::from(launch.cpus_per_task),
        bind,
        ntasks_per_core: usize::from(launch.ntasks_per_core),
        ntasks_per_socket: usize::from(launch.ntasks_per_socket),
        threads_per_core: usize::from(launch.threads_per_core),
        layout: lllp_layout(launch.task_dist, settings.default_dist_block),
    };
    match lay_out(&request, &alloc.cpus, hw) {
        Ok(layout) => Ok(generate(bind, &layout.masks, hw)),
        Err(e) => {
            slurm_wasm_sdk::error!("{e}");
            let bind = (bind & !MODES) | MASK;
            let binding = Binding {
                cpu_bind_type: bind,
                cpu_bind: avail_mask(bind),
            };
            if launch.overcommit {
                return Ok(binding);
            }
            Err(Error::new(
                ESLURMD_CPU_LAYOUT_ERROR,
                format!(
                    "JobId={} failed to distribute tasks (bind_type:{}) - this should never happen",
                    launch.job_id,
                    describe(bind)
                ),
            ))
        }
    }
}

/// Step 1: a manual mode.
fn manual(
    launch: &Launch,
    bind: u32,
    alloc: &Allocation,
    avail_mask: &str,
) -> Result<Binding, Error> {
    let no_spec = launch.job_core_spec.is_none();
    let mut binding = Binding {
        cpu_bind_type: bind,
        cpu_bind: launch.cpu_bind.clone(),
    };
    let mut result = Ok(());
    if !alloc.whole_node && no_spec && bind & (MAP | MASK) == 0 {
        if bind & NONE == 0 {
            let message = format!("Entire node must be allocated for {}", describe(bind));
            slurm_wasm_sdk::error!("{message}");
            result = Err(Error::new(ESLURMD_CPU_BIND_ERROR, message));
        }
        binding = Binding {
            cpu_bind_type: (bind & !MODES) | MASK,
            cpu_bind: avail_mask.to_string(),
        };
    } else if no_spec {
        let outside = if bind & MASK != 0 {
            let (masks, outside) = validate_masks(&launch.cpu_bind, avail_mask);
            binding.cpu_bind = masks;
            outside
        } else if bind & MAP != 0 && !map_inside(&launch.cpu_bind, avail_mask) {
            binding = Binding {
                cpu_bind_type: (bind & !MAP) | MASK,
                cpu_bind: avail_mask.to_string(),
            };
            true
        } else {
            false
        };
        if outside {
            let message = format!(
                "CPU binding outside of job step allocation, allocated CPUs are: {avail_mask}."
            );
            slurm_wasm_sdk::error!("{message}");
            result = Err(Error::new(ESLURMD_CPU_BIND_ERROR, message));
        }
    }
    slurm_wasm_sdk::info!(
        "JobId={} manual binding: {}",
        launch.job_id,
        describe(binding.cpu_bind_type)
    );
    result.map(|()| binding)
}

/// `_validate_mask`: every mask of the list loses the CPUs outside the
/// allocation; a mask left empty becomes the whole allocation. The list is
/// rewritten in the CPU set form (lower-case, no `0x`). Returns the new list
/// and whether a CPU was outside.
fn validate_masks(list: &str, avail_mask: &str) -> (String, bool) {
    let avail = parse_cpuset(avail_mask).cpus;
    let mut outside = false;
    let masks: Vec<String> = list
        .split(',')
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let mut cpus = parse_cpuset(entry).cpus;
            let requested: Vec<usize> = cpus.ones().collect();
            for &cpu in &requested {
                if !avail.get(cpu) {
                    cpus.clear(cpu);
                    outside = true;
                }
            }
            if cpus.count() == 0 {
                cpus = avail.clone();
            }
            cpuset_text(&cpus)
        })
        .collect();
    (masks.join(","), outside)
}

/// `_validate_map`: is every CPU id of the list (read as `atoi` does)
/// inside the allocation?
fn map_inside(list: &str, avail_mask: &str) -> bool {
    let avail = parse_cpuset(avail_mask).cpus;
    list.split(',')
        .filter(|entry| !entry.is_empty())
        .all(|entry| usize::try_from(atoi(entry)).is_ok_and(|cpu| avail.get(cpu)))
}

/// Step 2: the unit chosen when none was given, and whether it came from
/// `TaskPluginParam=autobind` (`None`: no binding).
fn auto_unit(launch: &Launch, alloc: &Allocation, settings: &Settings) -> Option<(u32, bool)> {
    let wanted = launch.tasks as usize * usize::from(launch.cpus_per_task);
    let spec = spec_threads(launch.job_core_spec) != 0;
    let fits = |whole: usize, part: usize| {
        (wanted == whole && part == 0) || (spec && wanted == whole + part)
    };
    if fits(alloc.whole_sockets, alloc.part_sockets) {
        return Some((TO_SOCKETS, false));
    }
    if fits(alloc.whole_cores, alloc.part_cores) {
        return Some((TO_CORES, false));
    }
    if wanted == alloc.whole_threads {
        return Some((TO_THREADS, false));
    }
    [
        (AUTO_BIND_TO_THREADS, TO_THREADS),
        (AUTO_BIND_TO_CORES, TO_CORES),
        (AUTO_BIND_TO_SOCKETS, TO_SOCKETS),
    ]
    .into_iter()
    .find(|(auto, _)| settings.task_plugin_param & auto != 0)
    .map(|(_, unit)| (unit, true))
}

/// Step 4: masks to OS ids (widened to NUMA nodes for `ldoms`), one hex mask
/// per task, `MASK` set and the unit bits cleared. With no mask at all the
/// list is empty and `VERBOSE` is dropped.
fn generate(mut bind: u32, masks: &[Bitmap], hw: &Hardware) -> Binding {
    let texts: Vec<String> = masks
        .iter()
        .filter(|m| m.count() > 0)
        .map(|m| {
            let mut os = mask::to_os(m, hw);
            if bind & TO_LDOMS != 0 {
                mask::widen_to_ldoms(&mut os, hw);
            }
            os.to_hex_mask()
        })
        .collect();
    if texts.is_empty() {
        bind &= !VERBOSE;
    } else {
        bind |= MASK;
    }
    Binding {
        cpu_bind_type: bind & !UNITS,
        cpu_bind: texts.join(","),
    }
}

#[cfg(test)]
mod tests;
