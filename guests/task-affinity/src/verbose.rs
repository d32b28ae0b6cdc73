//! The line `--cpu-bind=verbose` prints for each task as it is bound
//! (Slurm 22.05.8 src/slurmd/common/task_plugin.c `task_slurm_chkaffinity`):
//!
//! `cpu-bind<unit>=<TYPE> - <node>, task <global> <local> [<pid>]: mask 0x<set> set`
//!
//! with the ids right-aligned in two columns and the set in lower-case hex
//! without leading zeros. `<unit>` is `-threads`, `-cores`, `-sockets`,
//! `-ldoms` or nothing, from the unit bits still set; `NONE` prints no
//! " set"; a failed binding appends " FAILED".

use slurm_wasm_sdk::Bitmap;

use crate::bind_type::{
    LDMAP, LDMASK, LDRANK, MAP, MASK, NONE, RANK, TO_CORES, TO_LDOMS, TO_SOCKETS, TO_THREADS,
    VERBOSE,
};
use crate::mask::cpuset_text;

/// The task a line is about.
#[derive(Debug, Clone, Copy)]
pub struct TaskId<'a> {
    pub node: &'a str,
    pub global_id: u32,
    pub local_id: u32,
    pub pid: u32,
}

/// The verbose line for a task bound (or left) to `cpus`, `None` unless
/// `bind` has `VERBOSE`. `failed` marks a binding the system refused (then
/// `cpus` is the task's current set).
pub fn line(bind: u32, task: TaskId<'_>, cpus: &Bitmap, failed: bool) -> Option<String> {
    if bind & VERBOSE == 0 {
        return None;
    }
    let (unit, kind, action) = if bind & NONE != 0 {
        ("", "NONE", "")
    } else {
        let unit = [
            (TO_THREADS, "-threads"),
            (TO_CORES, "-cores"),
            (TO_SOCKETS, "-sockets"),
            (TO_LDOMS, "-ldoms"),
        ]
        .into_iter()
        .find(|(bit, _)| bind & bit != 0)
        .map_or("", |(_, unit)| unit);
        let kind = [
            (RANK, "RANK"),
            (MAP, "MAP "),
            (MASK, "MASK"),
            (LDRANK, "LDRANK"),
            (LDMAP, "LDMAP "),
            (LDMASK, "LDMASK"),
        ]
        .into_iter()
        .find(|(bit, _)| bind & bit != 0)
        .map(|(_, kind)| kind);
        match kind {
            Some(kind) => (unit, kind, " set"),
            None if bind & !VERBOSE != 0 => (unit, "UNK ", " set"),
            None => (unit, "NULL", ""),
        }
    };
    Some(format!(
        "cpu-bind{unit}={kind} - {}, task {:2} {:2} [{}]: mask 0x{}{action}{}",
        task.node,
        task.global_id,
        task.local_id,
        task.pid,
        cpuset_text(cpus),
        if failed { " FAILED" } else { "" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mask::CPU_SETSIZE;

    fn id(global_id: u32, local_id: u32) -> TaskId<'static> {
        TaskId {
            node: "hydra12",
            global_id,
            local_id,
            pid: 15426,
        }
    }

    fn set(bits: &[usize]) -> Bitmap {
        Bitmap::from_bits(CPU_SETSIZE, bits.iter().copied())
    }

    #[test]
    fn the_mc_support_example() {
        assert_eq!(
            line(VERBOSE | MASK, id(1, 1), &set(&[2]), false).as_deref(),
            Some("cpu-bind=MASK - hydra12, task  1  1 [15426]: mask 0x4 set")
        );
    }

    #[test]
    fn units_types_and_failures() {
        assert_eq!(
            line(VERBOSE | MAP | TO_CORES, id(12, 3), &set(&[8, 9]), false).as_deref(),
            Some("cpu-bind-cores=MAP  - hydra12, task 12  3 [15426]: mask 0x300 set")
        );
        assert_eq!(
            line(VERBOSE | NONE, id(0, 0), &set(&[]), false).as_deref(),
            Some("cpu-bind=NONE - hydra12, task  0  0 [15426]: mask 0x0")
        );
        assert_eq!(
            line(VERBOSE | LDMAP, id(0, 0), &set(&[0, 1, 2, 3]), true).as_deref(),
            Some("cpu-bind=LDMAP  - hydra12, task  0  0 [15426]: mask 0xf set FAILED")
        );
        assert_eq!(
            line(VERBOSE, id(0, 0), &set(&[0]), false).as_deref(),
            Some("cpu-bind=NULL - hydra12, task  0  0 [15426]: mask 0x1")
        );
        assert_eq!(
            line(VERBOSE | TO_SOCKETS, id(0, 0), &set(&[0]), false).as_deref(),
            Some("cpu-bind-sockets=UNK  - hydra12, task  0  0 [15426]: mask 0x1 set")
        );
        assert_eq!(line(MASK, id(0, 0), &set(&[0]), false), None);
    }
}
