//! One task's CPU set in slurmstepd (Slurm 22.05.8 src/plugins/task/affinity/affinity.c `get_cpuset`), from
//! the step's `cpu_bind_type` and `cpu_bind` list as `lllp_distribution`
//! left them.
//!
//! Ids and masks in the list are OS CPU ids, used as they are. Locality
//! domains are NUMA nodes where the machine reports them, sockets otherwise
//! (a Slurm built without libnuma).

use slurm_wasm_sdk::Bitmap;

use crate::bind_type::{LDMAP, LDMASK, LDRANK, MAP, MASK, NONE, RANK};
use crate::cstr::strtoul;
use crate::hardware::Hardware;
use crate::mask::{parse_cpuset, CPU_SETSIZE};

/// The step as slurmstepd knows it, for one task.
#[derive(Debug, Clone, Copy)]
pub struct TaskBinding<'a> {
    /// `cpu_bind_type`.
    pub bind: u32,
    /// `cpu_bind`.
    pub list: &'a str,
    /// The task's position among the step's tasks on this node.
    pub local_id: u32,
    /// CPUs of the step on this node (`job->cpus`), for `rank`.
    pub step_cpus: u32,
}

/// The task's CPU set ([`CPU_SETSIZE`] bits of OS CPU ids), or `None` when
/// the binding names none (Slurm's `get_cpuset` returning false: no list, a
/// list entry that is not a mask, an unknown mode). `none` gives an empty
/// set: nothing to apply.
///
/// The list entry is the task's local id, wrapping around a shorter list.
pub fn task_cpus(task: &TaskBinding<'_>, hw: &Hardware) -> Option<Bitmap> {
    let mut set = Bitmap::new(CPU_SETSIZE);
    if task.bind & NONE != 0 {
        return Some(set);
    }
    if task.bind & RANK != 0 {
        let cpus = task.step_cpus * u32::from(hw.threads.max(1));
        if cpus == 0 {
            return None;
        }
        set_cpu(&mut set, (task.local_id % cpus) as usize);
        return Some(set);
    }
    if task.bind & LDRANK != 0 {
        bind_ldom(&mut set, task.local_id, hw);
        return Some(set);
    }
    let entry = list_entry(task.list, task.local_id)?;
    if task.bind & MASK != 0 {
        let parsed = parse_cpuset(entry);
        if parsed.bad_char.is_some() {
            slurm_wasm_sdk::error!("task_str_to_cpuset {entry}");
            return None;
        }
        return Some(parsed.cpus);
    }
    if task.bind & MAP != 0 {
        set_cpu(&mut set, number(entry) as usize);
        return Some(set);
    }
    if task.bind & LDMASK != 0 {
        let digits = match entry.strip_prefix("0x") {
            Some(rest) if entry.len() > 1 => rest,
            _ => entry,
        };
        for (position, c) in digits.chars().rev().enumerate() {
            let value = c.to_digit(16)?;
            for b in 0..4 {
                if value & (1 << b) != 0 {
                    bind_ldom(&mut set, (position * 4 + b) as u32, hw);
                }
            }
        }
        return Some(set);
    }
    if task.bind & LDMAP != 0 {
        bind_ldom(&mut set, number(entry), hw);
        return Some(set);
    }
    None
}

/// Entry `local_id` of the comma-separated list, or entry `local_id mod n`
/// of a list of `n` entries. `None` for an empty list, or when the entry
/// chosen is an empty last one (Slurm finds the end of the text there).
fn list_entry(list: &str, local_id: u32) -> Option<&str> {
    let entries: Vec<&str> = list.split(',').collect();
    let index = local_id as usize % entries.len();
    let start: usize = entries[..index].iter().map(|e| e.len() + 1).sum();
    if start >= list.len() {
        return None;
    }
    let entry = entries[index];
    Some(&entry[..entry.len().min(CPU_SETSIZE / 4)])
}

/// A map entry: hex after `0x`, decimal otherwise.
fn number(entry: &str) -> u32 {
    match entry.strip_prefix("0x") {
        Some(hex) => strtoul(hex, 16),
        None => strtoul(entry, 10),
    }
}

fn set_cpu(set: &mut Bitmap, cpu: usize) {
    if cpu < set.len() {
        set.set(cpu);
    }
}

/// Adds locality domain `ldom` to `set` (`_bind_ldom`): with NUMA nodes,
/// every CPU of node `ldom mod (max node + 1)`; without, every CPU of
/// socket `ldom mod sockets`, through `block_map`.
fn bind_ldom(set: &mut Bitmap, ldom: u32, hw: &Hardware) {
    if hw.has_numa() {
        let max = hw.max_numa_node();
        let node = if max > 0 { ldom % (max + 1) } else { 0 };
        let cpus = hw.total_cores() * usize::from(hw.threads);
        for cpu in (0..cpus).filter(|&c| hw.numa_node(c) == Some(node)) {
            set_cpu(set, cpu);
        }
    } else {
        let socket = (ldom % u32::from(hw.sockets)) as usize;
        let width = hw.socket_width();
        for index in socket * width..(socket + 1) * width {
            set_cpu(set, hw.os_cpu(index) as usize);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::testing::{hyperthreaded, identity};
    use crate::mask::cpuset_text;

    fn cpus(bind: u32, list: &str, local_id: u32, hw: &Hardware) -> Option<String> {
        let task = TaskBinding {
            bind,
            list,
            local_id,
            step_cpus: 16,
        };
        task_cpus(&task, hw).map(|set| cpuset_text(&set))
    }

    #[test]
    fn masks_and_maps_pick_the_task_entry_and_wrap() {
        let hw = identity(2, 4, 2);
        assert_eq!(cpus(MASK, "0x0003,0x0300", 1, &hw).as_deref(), Some("300"));
        assert_eq!(cpus(MASK, "0x0003,0x0300", 2, &hw).as_deref(), Some("3"));
        assert_eq!(cpus(MASK, "3,300", 1, &hw).as_deref(), Some("300"));
        assert_eq!(cpus(MAP, "1,0", 0, &hw).as_deref(), Some("2"));
        assert_eq!(cpus(MAP, "1,0", 3, &hw).as_deref(), Some("1"));
        assert_eq!(cpus(MAP, "0x4", 0, &hw).as_deref(), Some("10"));
        // python test_116_50: map_cpu:0 puts every task on CPU 0.
        assert_eq!(cpus(MAP, "0", 5, &hw).as_deref(), Some("1"));
        // Manual ids are OS ids: no block_map translation.
        assert_eq!(
            cpus(MAP, "1", 0, &hyperthreaded(2, 4, 2)).as_deref(),
            Some("2")
        );
    }

    #[test]
    fn nothing_to_apply() {
        let hw = identity(2, 4, 2);
        assert_eq!(cpus(NONE, "", 0, &hw).as_deref(), Some("0"));
        assert_eq!(cpus(MASK, "", 0, &hw), None);
        assert_eq!(cpus(MASK, "0x3,", 1, &hw), None);
        assert_eq!(cpus(MASK, "0xz3", 0, &hw), None);
        assert_eq!(cpus(0, "0x3", 0, &hw), None);
    }

    #[test]
    fn locality_domains_are_sockets_without_numa() {
        let hw = hyperthreaded(2, 4, 2);
        assert_eq!(cpus(LDRANK, "", 0, &hw).as_deref(), Some("f0f"));
        assert_eq!(cpus(LDRANK, "", 3, &hw).as_deref(), Some("f0f0"));
        assert_eq!(cpus(LDMAP, "1", 0, &hw).as_deref(), Some("f0f0"));
        assert_eq!(cpus(LDMASK, "0x3", 0, &hw).as_deref(), Some("ffff"));
        assert_eq!(cpus(LDMASK, "0x2", 0, &hw).as_deref(), Some("f0f0"));
    }

    #[test]
    fn locality_domains_are_numa_nodes_when_reported() {
        let mut hw = identity(2, 4, 2);
        hw.numa_node_of_cpu = (0..16).map(|c| c / 4).collect();
        assert_eq!(cpus(LDRANK, "", 5, &hw).as_deref(), Some("f0"));
        assert_eq!(cpus(LDMAP, "2", 0, &hw).as_deref(), Some("f00"));
    }

    #[test]
    fn rank_uses_the_step_cpus() {
        let hw = identity(2, 4, 2);
        let task = TaskBinding {
            bind: RANK,
            list: "",
            local_id: 5,
            step_cpus: 2,
        };
        // 22.05: CPU local_id mod (cpus x threads) = 5 mod 4.
        assert_eq!(cpuset_text(&task_cpus(&task, &hw).unwrap()), "2");
    }
}
