//! `lllp_distribution` (task/affinity/dist_tasks.c) on a 2 sockets × 4
//! cores × 2 threads node: the binding of common `srun` requests, in both
//! numberings (identity and HT, `os = core + 8 × thread`), the vectors of
//! doc/html/mc_support.shtml and cpu_management.shtml, and the manual-mode
//! checks.
//!
//! Each task's mask is read back the way slurmstepd reads it
//! ([`crate::cpuset::task_cpus`]), so a single `cpu_bind` mask shared by
//! every task is checked per task too.

use super::*;
use crate::allocation::CORE_SPEC_THREAD;
use crate::bind_type::{parse, Parsed, LDRANK, RANK};
use crate::cpuset::{task_cpus, TaskBinding};
use crate::dist;
use crate::hardware::testing::{hyperthreaded, identity};

/// A launch of `tasks` tasks of `cpt` CPUs on a 2x4x2 node (`CPUs=16`),
/// `--cpu-bind=<cpu_bind>` (empty: none given), `-m <dist>` (empty: none
/// given), the step owning `cores` (core indices).
fn launch(tasks: u32, cpt: u16, cpu_bind: &str, dist: &str, cores: &[usize]) -> Launch {
    let (cpu_bind_type, list) = if cpu_bind.is_empty() {
        (0, String::new())
    } else {
        match parse(cpu_bind).unwrap() {
            Parsed::Bind(b) => (b.flags, b.list),
            Parsed::Help => unreachable!(),
        }
    };
    let task_dist = if dist.is_empty() {
        dist::BLOCK
    } else {
        dist::parse(dist).unwrap().task_dist
    };
    Launch {
        job_id: 42,
        tasks,
        cpus_per_task: cpt,
        cpu_bind_type,
        cpu_bind: list,
        task_dist,
        ntasks_per_core: 0,
        ntasks_per_socket: 0,
        threads_per_core: 0,
        overcommit: false,
        step_cores: Bitmap::from_bits(8, cores.iter().copied()),
        shape: CredentialShape {
            sockets: 2,
            cores: 4,
        },
        cpus_conf: 16,
        job_core_spec: None,
    }
}

const WHOLE: &[usize] = &[0, 1, 2, 3, 4, 5, 6, 7];
const CORES_0_1_4: &[usize] = &[0, 1, 4];

/// Each task's CPU set as slurmstepd derives it, as a mask of the node's
/// `width` CPUs.
fn task_masks(binding: &Binding, tasks: u32, width: usize, hw: &Hardware) -> Vec<String> {
    (0..tasks)
        .map(|local_id| {
            let task = TaskBinding {
                bind: binding.cpu_bind_type,
                list: &binding.cpu_bind,
                local_id,
                step_cpus: 16,
            };
            let set = task_cpus(&task, hw).expect("every task gets a CPU set");
            Bitmap::from_bits(width, set.ones()).to_hex_mask()
        })
        .collect()
}

/// Runs `launch` on `hw` and checks the masks of its tasks.
fn check(source: &str, launch: &Launch, hw: &Hardware, settings: &Settings, expected: &[&str]) {
    let binding = distribute(launch, hw, settings)
        .unwrap_or_else(|e| panic!("{source}: lllp_distribution failed: {e}"));
    assert!(
        binding.cpu_bind_type & MASK != 0 && binding.cpu_bind_type & UNITS == 0,
        "{source}: binding type {:#x}",
        binding.cpu_bind_type
    );
    assert_eq!(
        task_masks(&binding, launch.tasks, hw.size(), hw),
        expected,
        "{source} (cpu_bind {})",
        binding.cpu_bind
    );
}

/// One `srun` case of Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c
/// `lllp_distribution` on the 2x4x2 node, checked in both numberings.
macro_rules! row {
    ($name:ident, $source:literal, $launch:expr, identity: $identity:expr, ht: $ht:expr) => {
        #[test]
        fn $name() {
            let launch = $launch;
            let settings = Settings::default();
            check(
                concat!($source, " [identity]"),
                &launch,
                &identity(2, 4, 2),
                &settings,
                &$identity,
            );
            check(
                concat!($source, " [HT]"),
                &launch,
                &hyperthreaded(2, 4, 2),
                &settings,
                &$ht,
            );
        }
    };
}

row!(
    n4_no_bind_is_the_allocation,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4` without `--cpu-bind` or TaskPluginParam: 4 tasks fill no whole sockets, cores or threads, so auto binding is off and every task gets the allocation (0xFFFF)",
    launch(4, 1, "", "", WHOLE),
    identity: ["0xFFFF"; 4],
    ht: ["0xFFFF"; 4]
);

row!(
    n2_auto_sockets,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n2` without `--cpu-bind`: 2 tasks fill the 2 whole sockets, so it binds to sockets",
    launch(2, 1, "", "", WHOLE),
    identity: ["0x00FF", "0xFF00"],
    ht: ["0x0F0F", "0xF0F0"]
);

row!(
    n8_auto_cores,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n8` without `--cpu-bind`: 8 tasks fill the 8 whole cores, so it binds to cores",
    launch(8, 1, "", "", WHOLE),
    identity: ["0x0003", "0x0300", "0x000C", "0x0C00", "0x0030", "0x3000", "0x00C0", "0xC000"],
    ht: ["0x0101", "0x1010", "0x0202", "0x2020", "0x0404", "0x4040", "0x0808", "0x8080"]
);

row!(
    n16_auto_threads,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n16` without `--cpu-bind`: 16 tasks fill the 16 threads, so it binds to threads; the cyclic layout alternates sockets",
    launch(16, 1, "", "", WHOLE),
    identity: [
        "0x0001", "0x0100", "0x0002", "0x0200", "0x0004", "0x0400", "0x0008", "0x0800",
        "0x0010", "0x1000", "0x0020", "0x2000", "0x0040", "0x4000", "0x0080", "0x8000",
    ],
    ht: [
        "0x0001", "0x0010", "0x0100", "0x1000", "0x0002", "0x0020", "0x0200", "0x2000",
        "0x0004", "0x0040", "0x0400", "0x4000", "0x0008", "0x0080", "0x0800", "0x8000",
    ]
);

row!(
    n4_c2_auto_cores,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4 -c2` without `--cpu-bind`: 4 tasks of 2 CPUs fill the 8 whole cores, so it binds to cores",
    launch(4, 2, "", "", WHOLE),
    identity: ["0x0003", "0x0300", "0x000C", "0x0C00"],
    ht: ["0x0101", "0x1010", "0x0202", "0x2020"]
);

row!(
    n4_cores,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4 --cpu-bind=cores`: no socket-level `-m`, so the cyclic layout alternates sockets and each mask widens to its core",
    launch(4, 1, "cores", "", WHOLE),
    identity: ["0x0003", "0x0300", "0x000C", "0x0C00"],
    ht: ["0x0101", "0x1010", "0x0202", "0x2020"]
);

row!(
    n4_threads,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4 --cpu-bind=threads`: the cyclic layout gives each task one thread, alternating sockets",
    launch(4, 1, "threads", "", WHOLE),
    identity: ["0x0001", "0x0100", "0x0002", "0x0200"],
    ht: ["0x0001", "0x0010", "0x0100", "0x1000"]
);

row!(
    n4_sockets,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4 --cpu-bind=sockets`: the cyclic layout alternates sockets and each mask widens to its socket",
    launch(4, 1, "sockets", "", WHOLE),
    identity: ["0x00FF", "0xFF00", "0x00FF", "0xFF00"],
    ht: ["0x0F0F", "0xF0F0", "0x0F0F", "0xF0F0"]
);

row!(
    n4_block_block_cores,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4 -m block:block --cpu-bind=cores`: the block layout gives the tasks socket 0's cores in order",
    launch(4, 1, "cores", "block:block", WHOLE),
    identity: ["0x0003", "0x000C", "0x0030", "0x00C0"],
    ht: ["0x0101", "0x0202", "0x0404", "0x0808"]
);

row!(
    n4_block_block_threads,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4 -m block:block --cpu-bind=threads`: the block layout takes threads in abstract order, both threads of a core before the next core",
    launch(4, 1, "threads", "block:block", WHOLE),
    identity: ["0x0001", "0x0002", "0x0004", "0x0008"],
    ht: ["0x0001", "0x0100", "0x0002", "0x0200"]
);

row!(
    n2_block_block_sockets,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n2 -m block:block --cpu-bind=sockets`: the block layout puts both tasks on socket 0",
    launch(2, 1, "sockets", "block:block", WHOLE),
    identity: ["0x00FF", "0x00FF"],
    ht: ["0x0F0F", "0x0F0F"]
);

row!(
    n2_c4_threads_cyclic,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n2 -c4 --cpu-bind=threads`: the cyclic layout keeps each task's 4 CPUs on one socket",
    launch(2, 4, "threads", "", WHOLE),
    identity: ["0x000F", "0x0F00"],
    ht: ["0x0303", "0x3030"]
);

row!(
    n2_c4_block_fcyclic_threads,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n2 -c4 -m block:fcyclic --cpu-bind=threads`: fcyclic switches socket after every CPU, so each task's CPUs alternate sockets",
    launch(2, 4, "threads", "block:fcyclic", WHOLE),
    identity: ["0x0303", "0x0C0C"],
    ht: ["0x1111", "0x2222"]
);

row!(
    n2_c4_block_block_threads,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n2 -c4 -m block:block --cpu-bind=threads`: the block layout gives each task 4 consecutive threads",
    launch(2, 4, "threads", "block:block", WHOLE),
    identity: ["0x000F", "0x00F0"],
    ht: ["0x0303", "0x0C0C"]
);

row!(
    n3_c3_cores,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n3 -c3 --cpu-bind=cores`: 3 CPUs per task span two cores, the rest of the second core is skipped, and each mask widens to whole cores",
    launch(3, 3, "cores", "", WHOLE),
    identity: ["0x000F", "0x0F00", "0x00F0"],
    ht: ["0x0303", "0x3030", "0x0C0C"]
);

row!(
    partial_n3_cores_cyclic,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, step owning cores {0,1,4}, `-n3 --cpu-bind=cores`: the cyclic layout alternates sockets over the owned cores",
    launch(3, 1, "cores", "", CORES_0_1_4),
    identity: ["0x0003", "0x0300", "0x000C"],
    ht: ["0x0101", "0x1010", "0x0202"]
);

row!(
    partial_n3_cores_block_block,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, step owning cores {0,1,4}, `-n3 -m block:block --cpu-bind=cores`: the block layout takes the owned cores in order",
    launch(3, 1, "cores", "block:block", CORES_0_1_4),
    identity: ["0x0003", "0x000C", "0x0300"],
    ht: ["0x0101", "0x0202", "0x1010"]
);

row!(
    partial_n2_sockets,
    "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, step owning cores {0,1,4}, `-n2 --cpu-bind=sockets`: each mask widens to the owned CPUs of its socket only",
    launch(2, 1, "sockets", "", CORES_0_1_4),
    identity: ["0x000F", "0x0300"],
    ht: ["0x0303", "0x1010"]
);

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`: a manual mode other than none, map or mask
/// (here `--cpu-bind=rank_ldom`) on part of a node is an error in 22.05.8
/// (binding to the allocation mask instead holds up to 21.08 only), with
/// the allocation mask as the binding Slurm would have written.
#[test]
fn partial_node_rank_ldom_needs_the_whole_node() {
    for hw in [identity(2, 4, 2), hyperthreaded(2, 4, 2)] {
        let err = distribute(
            &launch(3, 1, "rank_ldom", "", CORES_0_1_4),
            &hw,
            &Settings::default(),
        )
        .unwrap_err();
        assert_eq!(err.code, ESLURMD_CPU_BIND_ERROR);
        assert_eq!(err.message, "Entire node must be allocated for rank_ldom");
    }
    // On the whole node the mode stays as given.
    let binding = distribute(
        &launch(3, 1, "rank_ldom", "", WHOLE),
        &identity(2, 4, 2),
        &Settings::default(),
    )
    .unwrap();
    assert_eq!(binding.cpu_bind_type, LDRANK);
}

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`: manual `--cpu-bind=none` on part of a node is not an
/// error but is still rewritten to a MASK of the allocation; on the whole
/// node `none` (and `rank`) stay as given.
#[test]
fn none_on_a_partial_node_binds_to_the_allocation() {
    let binding = distribute(
        &launch(3, 1, "none", "", CORES_0_1_4),
        &hyperthreaded(2, 4, 2),
        &Settings::default(),
    )
    .unwrap();
    assert_eq!(
        binding,
        Binding {
            cpu_bind_type: MASK,
            cpu_bind: "0x1313".into()
        }
    );
    let binding = distribute(
        &launch(3, 1, "verbose,none", "", WHOLE),
        &identity(2, 4, 2),
        &Settings::default(),
    )
    .unwrap();
    assert_eq!(
        (binding.cpu_bind_type, binding.cpu_bind.as_str()),
        (VERBOSE | NONE, "")
    );
    let binding = distribute(
        &launch(2, 1, "rank", "", WHOLE),
        &identity(2, 4, 2),
        &Settings::default(),
    )
    .unwrap();
    assert_eq!(binding.cpu_bind_type, RANK);
}

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution` and `_validate_map`: map_cpu ids must lie in the
/// allocation (OS ids).
#[test]
fn map_cpu_is_validated_against_the_allocation() {
    let hw = hyperthreaded(2, 4, 2);
    // Cores {0,1,4} are OS CPUs 0,1,4,8,9,12.
    let binding = distribute(
        &launch(2, 1, "map_cpu:12,8", "", CORES_0_1_4),
        &hw,
        &Settings::default(),
    )
    .unwrap();
    assert_eq!(
        (binding.cpu_bind_type, binding.cpu_bind.as_str()),
        (MAP, "12,8")
    );
    let err = distribute(
        &launch(2, 1, "map_cpu:0,2", "", CORES_0_1_4),
        &hw,
        &Settings::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ESLURMD_CPU_BIND_ERROR);
    assert_eq!(
        err.message,
        "CPU binding outside of job step allocation, allocated CPUs are: 0x1313."
    );
    // python test_116_50: map_cpu:0 puts every task on CPU 0.
    let binding = distribute(
        &launch(4, 1, "map_cpu:0", "", WHOLE),
        &hw,
        &Settings::default(),
    )
    .unwrap();
    assert_eq!(task_masks(&binding, 4, 16, &hw), ["0x0001"; 4]);
}

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution` and `_validate_mask`: mask_cpu masks are trimmed to
/// the allocation; any CPU outside is an error; a valid list comes back in
/// the CPU set form.
#[test]
fn mask_cpu_is_validated_against_the_allocation() {
    let hw = identity(2, 4, 2);
    let binding = distribute(
        &launch(2, 1, "mask_cpu:0x3,0x300", "", CORES_0_1_4),
        &hw,
        &Settings::default(),
    )
    .unwrap();
    assert_eq!(
        (binding.cpu_bind_type, binding.cpu_bind.as_str()),
        (MASK, "3,300")
    );
    assert_eq!(task_masks(&binding, 2, 16, &hw), ["0x0003", "0x0300"]);
    let err = distribute(
        &launch(2, 1, "mask_cpu:0x3,0x30", "", CORES_0_1_4),
        &hw,
        &Settings::default(),
    )
    .unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            ESLURMD_CPU_BIND_ERROR,
            "CPU binding outside of job step allocation, allocated CPUs are: 0x030F."
        )
    );
    let (masks, outside) = validate_masks("3,130,30", "0x030F");
    assert_eq!((masks.as_str(), outside), ("3,100,30f", true));
    // With a core spec, manual lists are not checked.
    let mut spec = launch(2, 1, "mask_cpu:0x3,0x30", "", CORES_0_1_4);
    spec.job_core_spec = Some(1);
    assert_eq!(
        distribute(&spec, &hw, &Settings::default())
            .unwrap()
            .cpu_bind,
        "3,30"
    );
}

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution` without a bind unit: `TaskPluginParam=autobind=...`
/// picks the unit when the task count fills no whole sockets, cores or
/// threads.
#[test]
fn autobind_chooses_the_unit() {
    let settings = Settings {
        task_plugin_param: AUTO_BIND_TO_CORES,
        ..Settings::default()
    };
    check(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4` without `--cpu-bind`, TaskPluginParam=autobind=cores",
        &launch(4, 1, "", "", WHOLE),
        &identity(2, 4, 2),
        &settings,
        &["0x0003", "0x0300", "0x000C", "0x0C00"],
    );
    let settings = Settings {
        task_plugin_param: AUTO_BIND_TO_SOCKETS,
        ..Settings::default()
    };
    check(
        "Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, `-n4` without `--cpu-bind`, TaskPluginParam=autobind=sockets",
        &launch(4, 1, "", "", WHOLE),
        &hyperthreaded(2, 4, 2),
        &settings,
        &["0x0F0F", "0xF0F0", "0x0F0F", "0xF0F0"],
    );
}

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution` without a bind unit: with a thread core spec, partial
/// sockets and cores count as whole when choosing the unit; the reserved
/// threads (7 and 15) are left out of the masks.
#[test]
fn thread_spec_counts_partial_units() {
    let mut l = launch(2, 1, "", "", WHOLE);
    l.job_core_spec = Some(CORE_SPEC_THREAD | 2);
    let binding = distribute(&l, &identity(2, 4, 2), &Settings::default()).unwrap();
    assert_eq!(binding.cpu_bind, "0x007F,0x7F00");
}

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`: a node whose `CPUs=` equals sockets × cores binds
/// one thread per core, and says so in the type (CPU_BIND_ONE_THREAD_PER_CORE).
#[test]
fn cpus_equal_to_cores_uses_one_thread_per_core() {
    let mut l = launch(8, 1, "threads", "", WHOLE);
    l.cpus_conf = 8;
    let binding = distribute(&l, &identity(2, 4, 2), &Settings::default()).unwrap();
    assert_eq!(binding.cpu_bind_type, MASK | ONE_THREAD_PER_CORE);
    assert_eq!(
        binding.cpu_bind,
        "0x0001,0x0100,0x0004,0x0400,0x0010,0x1000,0x0040,0x4000"
    );
}

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution`, when the block or cyclic layout fails: the binding
/// becomes the allocation; without `--overcommit` the launch fails with
/// ESLURMD_CPU_LAYOUT_ERROR.
#[test]
fn layout_failures() {
    let hw = identity(2, 4, 2);
    let err = distribute(
        &launch(20, 1, "threads", "", WHOLE),
        &hw,
        &Settings::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ESLURMD_CPU_LAYOUT_ERROR);
    assert_eq!(
        err.message,
        "JobId=42 failed to distribute tasks (bind_type:threads,mask_cpu) - this should never happen"
    );
    let mut l = launch(20, 1, "threads", "", WHOLE);
    l.overcommit = true;
    let binding = distribute(&l, &hw, &Settings::default()).unwrap();
    assert_eq!(
        binding,
        Binding {
            cpu_bind_type: TO_THREADS | MASK,
            cpu_bind: "0xFFFF".into()
        }
    );
    // Overcommitted CPUs per task shrink instead (reset cpus_per_task).
    let mut l = launch(4, 8, "cores", "block:block", CORES_0_1_4);
    l.overcommit = true;
    assert_eq!(
        distribute(&l, &hw, &Settings::default()).unwrap().cpu_bind,
        "0x0003,0x000C,0x0300,0x0003"
    );
}

/// A credential that gives the node no cores cannot be bound.
#[test]
fn no_allocation_is_a_bind_error() {
    let mut l = launch(1, 1, "", "", WHOLE);
    l.shape.sockets = 0;
    let err = distribute(&l, &identity(2, 4, 2), &Settings::default()).unwrap_err();
    assert_eq!(err.code, ESLURMD_CPU_BIND_ERROR);
}

/// Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `lllp_distribution` and `_match_masks_to_ldom`: `ldoms` widens masks to
/// NUMA nodes on a NUMA machine, and leaves them as laid out without one.
#[test]
fn ldoms_widen_on_numa_machines() {
    let mut hw = identity(2, 4, 2);
    let binding = distribute(&launch(2, 1, "ldoms", "", WHOLE), &hw, &Settings::default()).unwrap();
    assert_eq!(binding.cpu_bind, "0x0001,0x0100");
    hw.numa_node_of_cpu = (0..16).map(|c| c / 4).collect();
    let binding = distribute(&launch(2, 1, "ldoms", "", WHOLE), &hw, &Settings::default()).unwrap();
    assert_eq!(binding.cpu_bind, "0x000F,0x0F00");
}

/// The `--hint` examples of Slurm 22.05.8 doc/html/mc_support.shtml, laid out
/// by src/plugins/task/affinity/dist_tasks.c `lllp_distribution`: 2 sockets × 2 cores × 1 thread.
#[test]
fn mc_support_hints() {
    let hw = identity(2, 2, 1);
    let whole = Bitmap::from_bits(4, 0..4);
    let hinted = |tasks: u32| Launch {
        cpus_conf: 4,
        step_cores: whole.clone(),
        shape: CredentialShape {
            sockets: 2,
            cores: 2,
        },
        // --hint=compute_bound and --hint=memory_bound both add cores.
        cpu_bind_type: VERBOSE | TO_CORES,
        ..launch(tasks, 1, "", "", WHOLE)
    };
    check(
        "mc_support.shtml: `-n4 --hint=compute_bound --cpu-bind=verbose`",
        &hinted(4),
        &hw,
        &Settings::default(),
        &["0x1", "0x4", "0x2", "0x8"],
    );
    check(
        "mc_support.shtml: `--hint=memory_bound` on two nodes, per node",
        &hinted(2),
        &hw,
        &Settings::default(),
        &["0x1", "0x4"],
    );
}

/// A 2x4x1 node of cpu_management.shtml, the step owning `cores`.
fn cpu_management(tasks: u32, cpt: u16, cpu_bind: &str, dist: &str, cores: &[usize]) -> Launch {
    Launch {
        cpus_conf: 8,
        ..launch(tasks, cpt, cpu_bind, dist, cores)
    }
}

/// Examples 10–14 of Slurm 22.05.8 doc/html/cpu_management.shtml (2 sockets ×
/// 4 cores × 1 thread), laid out by src/plugins/task/affinity/dist_tasks.c `lllp_distribution`,
/// as sets of CPU ids per task.
#[test]
fn cpu_management_examples() {
    let hw = identity(2, 4, 1);
    let block_default = Settings {
        default_dist_block: true,
        ..Settings::default()
    };
    let sets = |launch: &Launch, settings: &Settings| -> Vec<String> {
        let binding = distribute(launch, &hw, settings).unwrap();
        task_masks(&binding, launch.tasks, 8, &hw)
    };
    assert_eq!(
        sets(
            &cpu_management(6, 1, "cores", "", &[0, 1, 2, 4, 5, 6]),
            &Settings::default()
        ),
        ["0x01", "0x10", "0x02", "0x20", "0x04", "0x40"],
        "cpu_management.shtml Example 10: -n6 --cpu-bind=cores on CPUs {{0,1,2,4,5,6}}: CPUs 0,4,1,5,2,6"
    );
    assert_eq!(
        sets(
            &cpu_management(6, 1, "sockets", "", &[0, 1, 2, 4, 5, 6]),
            &Settings::default()
        ),
        ["0x07", "0x70", "0x07", "0x70", "0x07", "0x70"],
        "cpu_management.shtml Example 11: --cpu-bind=sockets: tasks 0,2,4 on {{0,1,2}}, 1,3,5 on {{4,5,6}}"
    );
    let six = &[0, 1, 2, 3, 4, 5];
    assert_eq!(
        sets(
            &cpu_management(2, 3, "sockets", "block:block", six),
            &block_default
        ),
        ["0x0F", "0x3F"],
        "cpu_management.shtml Example 12: -n2 -c3 --cpu-bind=sockets -m block:block: task 0 on 0-3, task 1 on 0-5"
    );
    // Example 13 documents both tasks on CPUs 0-5 for `-m block:cyclic`,
    // from CPUs 0,1,4 and 2,3,5: a per-CPU socket rotation, which Slurm
    // has called fcyclic since cyclic was split in two (17.11). 22.05's
    // cyclic keeps a task's CPUs on one socket: task 0 gets 0,1,2.
    assert_eq!(
        sets(
            &cpu_management(2, 3, "sockets", "block:cyclic", six),
            &block_default
        ),
        ["0x0F", "0x3F"],
        "cpu_management.shtml Example 13 as Slurm 22.05 lays out block:cyclic"
    );
    let fcyclic = distribute(
        &cpu_management(2, 3, "threads", "block:fcyclic", six),
        &hw,
        &block_default,
    )
    .unwrap();
    assert_eq!(
        fcyclic.cpu_bind, "0x13,0x2C",
        "cpu_management.shtml Example 13's distribution: CPUs 0,1,4 and 2,3,5"
    );
    assert_eq!(
        sets(
            &cpu_management(2, 3, "sockets", "block:fcyclic", six),
            &block_default
        ),
        ["0x3F", "0x3F"],
        "cpu_management.shtml Example 13's binding: both tasks on 0-5"
    );
    assert_eq!(
        sets(
            &cpu_management(6, 1, "cores", "cyclic:block", six),
            &block_default
        ),
        ["0x01", "0x02", "0x04", "0x08", "0x10", "0x20"],
        "cpu_management.shtml Example 14: -N3 -n18 --ntasks-per-node=6 -m cyclic:block --cpu-bind=cores: \
         global task 10, the 4th task of n1, on CPU 3"
    );
}
