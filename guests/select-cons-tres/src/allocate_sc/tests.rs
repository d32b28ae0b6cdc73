//! Tests of [`crate::allocate_sc`] (22.05 `_allocate_sc`, cons_common/cons_common.c):
//! the cores and CPUs of one node a job may use.

use slurm_wasm_sdk::select::JobTestMode;
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{Job, MemoryRequest};

use super::split_task_cpus;
use crate::test_support::{
    anchor_cluster_of, bm, cluster, cores, decision, job, on_node, params, refused, request, start,
    start_full,
};
use crate::ConsTres;

#[test]
fn split_tasks_count_their_last_core_for_what_is_left() {
    // `_count_used_cpus` core by core: -c3 on 2-CPU cores uses 2, 1,
    // 2, 1; -c4 uses 2, 2; -c5 uses 2, 2, 1.
    assert_eq!(split_task_cpus(4, 3, 2), 6);
    assert_eq!(split_task_cpus(3, 3, 2), 5);
    assert_eq!(split_task_cpus(3, 4, 2), 6);
    assert_eq!(split_task_cpus(3, 5, 2), 5);
    assert_eq!(split_task_cpus(0, 3, 2), 0);
}

#[test]
fn cr_core_rounds_to_whole_cores_and_memory_per_cpu() {
    // CR_Core allocates whole cores (`_allocate_sc`, cons_common.c); memory
    // per CPU is set after the placement (`_job_test`, cons_common/job_test.c).
    let ct = cluster(&["CR_Core_Memory"], 1, 1, 4, 2, 1000);
    let mut j = job(1, 1, 1, 1);
    j.details.memory = MemoryRequest::PerCpu(100);
    let r = ct
        .job_test(&request(&ct, j, JobTestMode::RunNow), 0)
        .unwrap();
    assert_eq!(r.resources.per_node[0].cpus, 2);
    assert_eq!(r.resources.per_node[0].memory, 200);
}

#[test]
fn cr_socket_allocates_whole_sockets() {
    // `_allocate_sc` (cons_common.c): CR_Socket allocates whole sockets; a
    // used socket is unusable.
    let mut ct = cluster(&["CR_Socket"], 1, 2, 4, 1, 100);
    assert_eq!(
        start(&mut ct, job(1, 1, 1, 1)),
        vec![(0, vec![0, 1, 2, 3], 4)]
    );
    assert_eq!(
        start(&mut ct, job(2, 1, 1, 1)),
        vec![(0, vec![4, 5, 6, 7], 4)]
    );
    assert!(refused(&ct, job(3, 1, 1, 1), JobTestMode::RunNow));
}

#[test]
fn cr_cpu_counts_threads() {
    // `_allocate_sc` (cons_common.c): CR_CPU allocates single CPUs (threads).
    let ct = cluster(&["CR_CPU"], 1, 1, 4, 2, 100);
    assert_eq!(cores(&ct, job(1, 1, 1, 1)), vec![(0, vec![0], 1)]);
    assert_eq!(cores(&ct, job(2, 1, 3, 1)), vec![(0, vec![0, 1], 3)]);
}

#[test]
fn max_cpus_per_node_counts_only_the_partitions_own_cpus() {
    // cons_common.c:357-392 (_allocate_sc): the CPUs already used count
    // only the cores of the job's own partition (part_core_map). One 8-CPU
    // node (CR_CPU) in partitions A (MaxCPUsPerNode=4) and B; a B job holds
    // 6 CPUs; an A `-n2` runs.
    let p = params(&["CR_CPU"]);
    let mut part_a = fixtures::partition(0, "A", 1);
    part_a.max_cpus_per_node = Some(4);
    let part_b = fixtures::partition(1, "B", 1);
    let mut ct = ConsTres::new(p, vec![part_a, part_b], MemoryRequest::None);
    let mut n = fixtures::node(0, "n0", 1, 8, 1, 1000);
    n.partitions = vec![0, 1];
    ct.node_init(&[n]).unwrap();
    let mut b = job(1, 1, 6, 1);
    b.partitions = vec![1];
    start_full(&mut ct, b);
    let mut a = job(2, 1, 2, 1);
    a.details.required_nodes = Some(bm(1, &[0]));
    assert_eq!(decision(&ct, a.clone()), Ok(vec![(0, 2, 0)]));
    start_full(&mut ct, a);
    // A now holds 2 of its 4 CPUs: a third A job gets the other 2, no more.
    assert_eq!(
        decision(&ct, job(3, 1, 3, 1)),
        Err(slurm_wasm_sdk::codes::ESLURM_NODES_BUSY)
    );
}

#[test]
fn max_cpus_per_node_leaving_one_cpu_refuses_multi_cpu_units() {
    // 22.05 `_allocate_sc` (cons_common.c:413-424): when MaxCPUsPerNode
    // leaves a node one CPU, a job asking --ntasks-per-core, --ntasks-per-
    // socket or CPUs per core (--threads-per-core) above 1, or
    // --cpus-per-task above 1, cannot use it. A 4-core node, partition
    // MaxCPUsPerNode=3, 2 cores held by a job of the partition.
    let limited = |tokens: &str, threads: u16, held: u32| {
        let p = params(&[tokens]);
        let mut part = fixtures::partition(0, "p", 1);
        part.max_cpus_per_node = Some(3);
        let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
        ct.node_init(&[fixtures::node(0, "n0", 1, 4, threads, 1000)])
            .unwrap();
        start_full(&mut ct, on_node(1, 1, 0, held));
        ct
    };
    let busy = Err(slurm_wasm_sdk::codes::ESLURM_NODES_BUSY);
    let ct = limited("CR_Core", 1, 2);
    assert_eq!(decision(&ct, job(2, 1, 1, 1)), Ok(vec![(0, 1, 0)]));
    let mut per_core = job(3, 1, 1, 1);
    per_core.details.ntasks_per_core = 2;
    assert_eq!(decision(&ct, per_core), busy);
    let mut per_socket = job(4, 1, 1, 1);
    per_socket.details.ntasks_per_socket = 2;
    assert_eq!(decision(&ct, per_socket), busy);
    // CR_CPU on 2-thread cores: the held job's core counts 2 CPUs, 3 cores
    // are free, 1 CPU is left; `--threads-per-core=2` asks 2 per core.
    let ct = limited("CR_CPU", 2, 2);
    assert_eq!(decision(&ct, job(5, 1, 1, 1)), Ok(vec![(0, 1, 0)]));
    let mut threads = job(6, 1, 1, 1);
    threads.details.threads_per_core = 2;
    assert_eq!(decision(&ct, threads), busy);
}

/// `-N1 -n<tasks>` on node `node` of the anchor cluster.
fn one_node_on(id: u32, node: usize, tasks: u32) -> Job {
    let mut j = on_node(id, 4, node, tasks);
    j.details.max_nodes = Some(1);
    j
}

// The anchor cluster under CR_Socket_Memory with CoreSpecCount=1 (core 3,
// CPUs 6-7, specialised on every node), as recorded from real Slurm 22.05.8
// (tests/fixtures/anchor/select/cons_tres-CR_Socket_Memory-core_spec) and
// in a by-hand run of the same cluster.

#[test]
fn cr_socket_specialised_core_makes_its_socket_used_without_a_row_map() {
    // cons_common.c:357-392: without a `part_core_map` every core not
    // free counts as used, the specialised one too. Real Slurm: `-w n1
    // -n5` as the partition's first job took socket 0 of n1 and of n2
    // (CPU_IDs 0-3 on both); `-N1 -w n1 -n5` was refused at submission
    // ("Requested node configuration is not available").
    let ct = anchor_cluster_of("CR_Socket_Memory", 1);
    assert_eq!(
        cores(&ct, on_node(1, 4, 0, 5)),
        vec![(0, vec![0, 1], 4), (1, vec![0, 1], 4)]
    );
    assert!(refused(&ct, one_node_on(2, 0, 5), JobTestMode::TestOnly));
}

#[test]
fn cr_socket_row_map_frees_the_specialised_socket_after_test_zero() {
    // Once a job of the partition entered a row, `_job_test` passes the
    // rows as `part_core_map` (cons_common/job_test.c:1033-1049) and only
    // the partition's own cores make a socket used; the maps stay when the
    // job ends (part_data.c:87-91). Test 0 still has no map, so a job that
    // needs the specialised socket can never start. Real Slurm, after the
    // first job: `-w n2 -n3` took socket 1 of n2, the specialised core
    // with it (CPU_IDs 4-7, dist_tasks.c:1126-1143), and socket 0 of n3.
    let mut ct = anchor_cluster_of("CR_Socket_Memory", 1);
    start(&mut ct, on_node(1, 4, 0, 5));
    assert_eq!(
        cores(&ct, on_node(2, 4, 1, 3)),
        vec![(1, vec![2, 3], 4), (2, vec![0, 1], 4)]
    );
    ct.job_fini(1);
    // Idle again, but with maps: `-w n1 -n5` fits n1 alone (6 CPUs, both
    // sockets), where the fresh cluster took two nodes.
    assert_eq!(
        cores(&ct, on_node(3, 4, 0, 5)),
        vec![(0, vec![0, 1, 2, 3], 8)]
    );
    assert!(refused(&ct, one_node_on(4, 0, 7), JobTestMode::RunNow));
    // The maps survive a state round trip.
    let blob = ct.state_save();
    let mut other = anchor_cluster_of("CR_Socket_Memory", 1);
    other.state_restore(&blob).unwrap();
    assert_eq!(
        cores(&other, on_node(3, 4, 0, 5)),
        vec![(0, vec![0, 1, 2, 3], 8)]
    );
}
