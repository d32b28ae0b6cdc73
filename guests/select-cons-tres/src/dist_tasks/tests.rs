//! Tests of [`crate::dist_tasks`] (22.05 `dist_tasks`, cons_common/dist_tasks.c):
//! task counts and core trimming, through [`crate::ConsTres::job_test`].

use crate::test_support::{anchor_cluster, cluster, cores, job};

// `dist_tasks` (cons_common/dist_tasks.c) on the worked examples of
// doc/html/cpu_management.shtml (2 sockets x 4 cores x 1 thread, CR_Core).
#[test]
fn cpu_management_n6_cyclic() {
    let ct = cluster(&["CR_Core"], 1, 2, 4, 1, 1000);
    let mut j = job(1, 1, 6, 1);
    j.details.max_nodes = Some(1);
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1, 2, 4, 5, 6], 6)]);
}

#[test]
fn cpu_management_default_dist_block() {
    let ct = cluster(&["CR_Core", "CR_CORE_DEFAULT_DIST_BLOCK"], 1, 2, 4, 1, 1000);
    let j = job(1, 1, 2, 3);
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1, 2, 3, 4, 5], 6)]);
}

#[test]
fn cpu_management_n3_c3_on_three_nodes() {
    let ct = cluster(&["CR_Core"], 3, 2, 4, 1, 1000);
    let got: Vec<u16> = cores(&ct, job(1, 3, 3, 3)).iter().map(|n| n.2).collect();
    assert_eq!(got, vec![3, 3, 3]);
}

#[test]
fn cpu_management_plane() {
    // -N3 -m plane=2 -n8 -c2 -> CPUs 8/6/2.
    let ct = cluster(&["CR_Core"], 3, 2, 4, 1, 1000);
    let mut j = job(1, 3, 8, 2);
    j.details.task_dist = 0x4;
    j.details.plane_size = 2;
    let got: Vec<u16> = cores(&ct, j).iter().map(|n| n.2).collect();
    assert_eq!(got, vec![8, 6, 2]);
}

#[test]
fn cpu_management_ntasks_per_node() {
    // -N2 --ntasks-per-node=3 -m cyclic -n6 -c2 -> 6 CPUs per node.
    let ct = cluster(&["CR_Core"], 2, 2, 4, 1, 1000);
    let mut j = job(1, 2, 6, 2);
    j.details.ntasks_per_node = 3;
    j.details.task_dist = 0x1;
    let got: Vec<u16> = cores(&ct, j).iter().map(|n| n.2).collect();
    assert_eq!(got, vec![6, 6]);
}

#[test]
fn srun_n20_counts_8_8_4() {
    // The example in the comments of `dist_tasks_compute_c_b`
    // (cons_tres/dist_tasks.c): srun -n20 on three nodes of 2-thread
    // cores (8 CPUs) -> 8,8,4.
    let ct = cluster(&["CR_Core"], 3, 1, 4, 2, 1000);
    let got: Vec<u16> = cores(&ct, job(1, 3, 20, 1)).iter().map(|n| n.2).collect();
    assert_eq!(got, vec![8, 8, 4]);
}

#[test]
fn tasks_wider_than_a_cpu_fill_a_socket_before_the_next() {
    // Fuzzed anchor stream (cons_tres-CR_Core_Memory-fuzz, seed 1) f13,
    // `-n4 -c2 -w n4`: two tasks went to the idle n3 with CPU_IDs=0-3,
    // both on socket 0 (22.05 `_cyclic_sync_core_bitmap` packs each
    // socket with whole tasks before the next), not one task per socket.
    let ct = anchor_cluster();
    let mut j = job(1, 1, 2, 2);
    j.details.max_nodes = Some(1);
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1], 4)]);
    // `-n2 -c3`: socket 0 holds one task of 3 CPUs (4 less the remainder
    // by 3), taken as cores 0 and 1; the second task's core comes from
    // socket 1.
    let mut j = job(2, 1, 2, 3);
    j.details.max_nodes = Some(1);
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1, 2], 6)]);
}
