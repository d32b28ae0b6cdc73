//! Tests of [`crate::gres_sched`] (cons_tres/gres_sched.c,
//! cons_common/gres_select_filter.c): which devices and cores a node offers a
//! GRES job, and the final device pick. The `test_144_8_*` tests are the
//! vectors of Slurm's testsuite/python/tests/test_144_8.py (a later
//! release's; where 22.05.8 picks other GPUs, the test says so).

use slurm_wasm_sdk::select::JobTestMode;
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{
    GresDeviceGroup, GresFlags, GresRequest, GresScope, Job, JobState, MemoryRequest,
};

use crate::test_support::{
    anchor_cluster, anchor_cluster_with, anchor_like, bm, cores, decision, devs, gpu_cluster,
    gpu_job, held_cores, job, nodes_of, on_node, params, pinned, refused, request, start,
    start_full, with_gres, with_gres_per,
};
use crate::ConsTres;

/// (abstract CPU ids, GPU indices) of node 0.
fn cpu_gpu(ct: &ConsTres, j: Job) -> (Vec<usize>, Vec<usize>) {
    let r = ct
        .job_test(&request(ct, j, JobTestMode::RunNow), 0)
        .unwrap();
    let n = &r.resources.per_node[0];
    let cpus = held_cores(n)
        .into_iter()
        .flat_map(|k| [2 * k, 2 * k + 1])
        .collect();
    let d = n.gres[0].devices.as_ref().unwrap();
    let g = slurm_wasm_sdk::Bitmap::from_words(d.len, &d.words).unwrap();
    (cpus, g.ones().collect())
}

#[test]
fn test_144_8_gres_gpu3_c2() {
    let ct = gpu_cluster();
    assert_eq!(
        cpu_gpu(&ct, gpu_job(1, 2, GresScope::PerNode, 3, 0)),
        (vec![0, 1], vec![0, 1, 2])
    );
}

#[test]
fn test_144_8_gres_gpu4_c4() {
    // test_144_8.py expects GPUs 0-1,3-4 (later releases spread the count
    // over the sockets by their cores). 22.05.8's `_set_node_bits`
    // (cons_common/gres_select_filter.c) takes one GPU on each used socket
    // (0, 3), then the used sockets' others in index order (1, 2): the
    // anchor's links recording, d2 (`-n1 -c4 --gres=gpu:4
    // --gres-flags=enforce-binding`, three GPUs bound to each socket): one
    // core per socket and GPUs 0-3.
    let ct = gpu_cluster();
    assert_eq!(
        cpu_gpu(&ct, gpu_job(1, 4, GresScope::PerNode, 4, 0)),
        (vec![0, 1, 16, 17], vec![0, 1, 2, 3])
    );
}

#[test]
fn test_144_8_gpus2_cpus_per_gpu1() {
    let ct = gpu_cluster();
    let mut j = gpu_job(0, 1, GresScope::PerJob, 2, 1);
    j.details.min_cpus = 1;
    assert_eq!(cpu_gpu(&ct, j), (vec![0, 1], vec![0, 1]));
}

#[test]
fn test_144_8_gpus4_cpus_per_gpu1() {
    // test_144_8.py expects GPUs 0-1,3-4. 22.05.8's `_set_job_bits1`
    // (cons_common/gres_select_filter.c) takes the used sockets' GPUs in
    // index order up to the count: 0-2 on socket 0, then 3 (the anchor's
    // links recording, d3: `-N1 -n8 --gpus=4` on three GPUs a socket got
    // GPUs 0-3).
    let ct = gpu_cluster();
    let mut j = gpu_job(0, 1, GresScope::PerJob, 4, 1);
    j.details.min_cpus = 1;
    assert_eq!(cpu_gpu(&ct, j), (vec![0, 1, 16, 17], vec![0, 1, 2, 3]));
}

#[test]
fn test_144_8_ntasks_per_node2_cpus_per_gpu4() {
    let ct = gpu_cluster();
    let mut j = gpu_job(2, 1, GresScope::PerNode, 1, 4);
    j.details.ntasks_per_node = 2;
    j.details.max_nodes = Some(1);
    assert_eq!(cpu_gpu(&ct, j), (vec![0, 1, 2, 3], vec![0]));
}

#[test]
fn test_144_8_gpus_per_task3_cpus_per_gpu2() {
    let ct = gpu_cluster();
    // slurmctld sets `-c` to 3 x 2 at submission (common/gres.c:5189-5198).
    let mut j = gpu_job(1, 6, GresScope::PerTask, 3, 2);
    j.details.max_nodes = Some(1);
    assert_eq!(cpu_gpu(&ct, j), (vec![0, 1, 2, 3, 4, 5], vec![0, 1, 2]));
}

#[test]
fn mps_shares_come_from_one_gpu_the_one_in_use() {
    // `_build_sock_gres_by_topo` (cons_tres/gres_sched.c): shared GRES come
    // from a single GPU per node. And mps is
    // one-sharing by default (22.05 common/gres.c:1392-1394, 1429-1430):
    // once shares of one GPU are allocated, later jobs may only use the
    // GPUs with shares in use (`gres_use_busy_dev`, common/gres.c:
    // 10132-10146; cons_tres/gres_sched.c:85-87). Anchor
    // cons_tres-CR_Core_Memory-one_task a15 (`--gres=mps:100`) went to n4
    // rather than n2, whose GPU 1 was idle but whose GPU 0 held a14's 50.
    let p = params(&["CR_Core"]);
    let mut ct = ConsTres::new(p, vec![fixtures::partition(0, "p", 1)], MemoryRequest::None);
    let mut n = fixtures::node(0, "n0", 1, 4, 1, 100);
    n.gres_topology = (0..2)
        .map(|_| GresDeviceGroup {
            name: "mps".into(),
            type_name: None,
            count: 100,
            cores: None,
            links: Vec::new(),
        })
        .collect();
    ct.node_init(&[n]).unwrap();
    let mps = |id: u32, count: u64| {
        let mut j = job(id, 1, 1, 1);
        j.details.gres = vec![GresRequest {
            name: "mps".into(),
            type_name: None,
            scope: GresScope::PerNode,
            count,
            cpus_per_gres: None,
            mem_per_gres: None,
        }];
        j
    };
    let run = |ct: &mut ConsTres, j: Job| {
        let r = ct
            .job_test(&request(ct, j.clone(), JobTestMode::RunNow), 0)
            .unwrap();
        let g = r.resources.per_node[0].gres[0].clone();
        let mut j = j;
        j.state = JobState::Running;
        j.resources = Some(r.resources);
        ct.add_running(&j).unwrap();
        let d = slurm_wasm_sdk::Bitmap::from_words(2, &g.devices.unwrap().words).unwrap();
        (d.ones().collect::<Vec<_>>(), g.per_device)
    };
    assert_eq!(run(&mut ct, mps(1, 50)), (vec![0], vec![50]));
    assert!(refused(&ct, mps(2, 60), JobTestMode::RunNow));
    assert_eq!(run(&mut ct, mps(3, 30)), (vec![0], vec![30]));
    ct.job_fini(1);
    ct.job_fini(3);
    assert_eq!(run(&mut ct, mps(4, 60)), (vec![0], vec![60]));
}

#[test]
fn gpus_per_job_spread_over_nodes() {
    // `_set_job_bits1` (cons_common/gres_select_filter.c): per job, each
    // node gets at most remaining - (nodes left - 1).
    let p = params(&["CR_Core"]);
    let mut ct = ConsTres::new(p, vec![fixtures::partition(0, "p", 2)], MemoryRequest::None);
    let table: Vec<_> = (0..2)
        .map(|i| {
            let mut n = fixtures::node(i, &format!("n{i}"), 1, 4, 1, 100);
            n.gres = vec![slurm_wasm_sdk::types::GresCount {
                name: "gpu".into(),
                type_name: None,
                count: 2,
            }];
            n
        })
        .collect();
    ct.node_init(&table).unwrap();
    let mut j = job(1, 2, 2, 1);
    j.details.gres = vec![GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope: GresScope::PerJob,
        count: 3,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    let r = ct
        .job_test(&request(&ct, j, JobTestMode::RunNow), 0)
        .unwrap();
    let counts: Vec<u64> = r
        .resources
        .per_node
        .iter()
        .map(|n| n.gres[0].count)
        .collect();
    assert_eq!(counts, vec![2, 1]);
}

#[test]
fn a_device_counts_on_the_first_of_its_sockets() {
    // 22.05 `_build_sock_gres_by_topo` (cons_tres/gres_sched.c:188-230)
    // counts a device bound to some but not all sockets on the first of
    // them only (with enforce-binding the first with a free core). Checked
    // on the anchor with its nodes as 4 sockets x 1 core x 2 threads (GPU 0
    // `Cores=0-1` spans sockets 0-1, GPU 1 `Cores=2-3` sockets 2-3), by
    // hand: after `-w n1 -n1` took core 0, `-w n1 -n1 --gres=gpu:1` got
    // CPU_IDs=4-5 and gpu:1(IDX:1). Socket 1, with GPU 0's other core,
    // does not count GPU 0. With `--gres-flags=enforce-binding` GPU 0
    // counts on socket 1, its first socket with a free core: CPU_IDs=2-3
    // and gpu:1(IDX:0).
    let mut ct = anchor_like(
        "CR_Core_Memory",
        1,
        (4, 1),
        0,
        &[("gpu", 1, &[0, 1]), ("gpu", 1, &[2, 3])],
    );
    start_full(&mut ct, job(1, 1, 1, 1));
    let gpu_job = with_gres(job(2, 1, 1, 1), "gpu", 1);
    assert_eq!(cpu_gpu(&ct, gpu_job.clone()), (vec![4, 5], vec![1]));
    let mut bound = gpu_job;
    bound.details.gres_flags = GresFlags::ENFORCE_BINDING;
    assert_eq!(cpu_gpu(&ct, bound), (vec![2, 3], vec![0]));
    // Then `-w n1 -n1` took core 1, and `-w n1 -n2 --gres=gpu:2` got
    // CPU_IDs=4-5 and gpu:2(IDX:0-1).
    assert_eq!(cores(&ct, job(3, 1, 1, 1)), vec![(0, vec![1], 2)]);
    start_full(&mut ct, job(3, 1, 1, 1));
    assert_eq!(
        cpu_gpu(&ct, with_gres(job(4, 1, 2, 1), "gpu", 2)),
        (vec![4, 5], vec![0, 1])
    );
}

#[test]
fn a_gpu_request_needs_only_the_sockets_its_total_reaches() {
    // 22.05 `gres_select_filter_sock_core` (gres_select_filter.c:648-662,
    // 663-683): a `--gpus-per-task` or `--gpus` job's node may give it at
    // most the job's total (`gres_per_job`: tasks x count, or the count),
    // and the sockets walked, most free cores first, until their GPUs reach
    // it are the only ones needed; the first pass drops the cores of the
    // others. Hand runs on the anchor with `MaxCPUsPerNode=4` (the
    // recording where a41 differed), `-w n1`, `--mem-per-cpu=100`: on the
    // idle node `-n1 --gpus-per-task=1` and `-n1 --gpus=1` got CPU_IDs=0-1
    // and GPU 0; after `-n2` took core 0, `-n1 --gpus-per-task=1` and `-n1
    // --gpus=1` got CPU_IDs=4-5 and GPU 1 (socket 1 has more free cores);
    // `-n2 --gpus-per-task=1`, whose total of 2 needs both sockets, got
    // CPU_IDs=4-5 and GPUs 0-1, `-n2 --gpus=1` CPU_IDs=4-5 and GPU 1.
    for (scope, two_tasks_gpus) in [
        (GresScope::PerTask, vec![0, 1]),
        (GresScope::PerJob, vec![1]),
    ] {
        let mut ct = anchor_like(
            "CR_Core_Memory",
            1,
            (2, 2),
            0,
            &[("gpu", 1, &[0, 1]), ("gpu", 1, &[2, 3])],
        );
        ct.partitions[0].max_cpus_per_node = Some(4);
        let gpu_job = |id: u32, tasks: u32| {
            let mut j = with_gres_per(job(id, 1, tasks, 1), "gpu", 1, scope);
            j.details.memory = MemoryRequest::PerCpu(100);
            j
        };
        assert_eq!(cpu_gpu(&ct, gpu_job(1, 1)), (vec![0, 1], vec![0]));
        let mut first = job(2, 1, 2, 1);
        first.details.memory = MemoryRequest::PerCpu(100);
        assert_eq!(cores(&ct, first.clone()), vec![(0, vec![0], 2)]);
        start_full(&mut ct, first);
        assert_eq!(cpu_gpu(&ct, gpu_job(3, 1)), (vec![4, 5], vec![1]));
        assert_eq!(cpu_gpu(&ct, gpu_job(4, 2)), (vec![4, 5], two_tasks_gpus));
    }
}

#[test]
fn a_per_job_gpu_request_keeps_the_cores_its_tasks_need() {
    // Fuzzed anchor stream (cons_tres-CR_Core_Memory-fuzz, seed 1) f5,
    // `-N2 --ntasks-per-node=1 --gpus=2` on two idle nodes: each got
    // CPU_IDs=4-5 and GPU 1. With the node's task count bounded (one),
    // 22.05's `gres_select_filter_sock_core` keeps one core, dropping
    // the highest core of the socket with the most free cores (socket 0 on
    // ties) until one is left: core 2, beside GPU 1.
    let ct = anchor_like(
        "CR_Core_Memory",
        2,
        (2, 2),
        0,
        &[("gpu", 1, &[0, 1]), ("gpu", 1, &[2, 3])],
    );
    let mut j = with_gres_per(job(1, 2, 2, 1), "gpu", 2, GresScope::PerJob);
    j.details.max_nodes = Some(2);
    j.details.ntasks_per_node = 1;
    assert_eq!(
        cores(&ct, j.clone()),
        vec![(0, vec![2], 2), (1, vec![2], 2)]
    );
    assert_eq!(cpu_gpu(&ct, j), (vec![4, 5], vec![1]));
}

#[test]
fn anchor_mps_avoids_gpu_in_use_and_takes_its_socket() {
    // Anchor a11 (`-n1 --gres=gpu:1`): CPU_IDs=0-1, IDX 0; then a14
    // (`-n1 --gres=mps:50`): CPU_IDs=4-5, mps:50(IDX:1).
    let mut ct = anchor_cluster();
    let r = start_full(&mut ct, with_gres(job(1, 1, 1, 1), "gpu", 1));
    assert_eq!(devs(&r.per_node[0].gres[0]), vec![0]);
    assert_eq!(r.per_node[0].memory, 500);
    let r = start_full(&mut ct, with_gres(job(2, 1, 1, 1), "mps", 50));
    let n = &r.per_node[0];
    assert_eq!(n.node_index, 0);
    assert_eq!(held_cores(n), vec![2]);
    assert_eq!(
        (devs(&n.gres[0]), n.gres[0].per_device.clone()),
        (vec![1], vec![50])
    );
}

#[test]
fn anchor_gpu_socket_with_more_free_cores() {
    // Anchor a24 (`--gres=gpu:1 -n4` on a node with core 0 busy): CPU_IDs=4-7,
    // gpu:1(IDX:1): the GPU's socket with room for the CPUs wins.
    let mut ct = anchor_cluster();
    let mut busy = job(1, 1, 1, 1);
    busy.details.required_nodes = Some(bm(4, &[0]));
    busy.details.memory = MemoryRequest::PerNode(100);
    start(&mut ct, busy);
    let mut j = with_gres(job(2, 1, 4, 1), "gpu", 1);
    j.details.required_nodes = Some(bm(4, &[0]));
    let r = start_full(&mut ct, j);
    let n = &r.per_node[0];
    assert_eq!(held_cores(n), vec![2, 3]);
    assert_eq!(devs(&n.gres[0]), vec![1]);
}

#[test]
fn anchor_gpus_per_task_over_two_nodes() {
    // Anchor cons_tres-CR_Core_Memory a29 (`-N2 -n4 --gpus-per-task=1`)
    // with socket 1 and its GPU busy on n2 and n3 (the anchor had socket 1
    // of n2 and socket 1 plus GPU 1 of n3 busy: one GPU beside free cores
    // on each): Slurm ran it on n[1,4] with `CPU_IDs=4-5 Mem=500
    // GRES=gpu:2(IDX:0-1)` on each. Checks the GRES task limit (2 tasks per
    // node), the per-core CPU reserve for the second node, the GPU-locality
    // weight (n1 and n4 have two GPUs beside free cores, n2 and n3 one) and
    // the spread core trim (core 2 kept).
    let mut ct = anchor_cluster();
    let bits_of = |r: &slurm_wasm_sdk::types::JobResources| {
        let n = &r.per_node[0];
        (held_cores(n), devs(&n.gres[0]))
    };
    for (first, node) in [(1, 1), (3, 2)] {
        let a = start_full(&mut ct, pinned(first, node, 4, true));
        assert_eq!(bits_of(&a), (vec![0, 1], vec![0]));
        let b = start_full(&mut ct, pinned(first + 1, node, 4, true));
        assert_eq!(bits_of(&b), (vec![2, 3], vec![1]));
        ct.job_fini(first);
    }
    let mut a29 = job(29, 2, 4, 1);
    a29.details.max_nodes = Some(2);
    a29.details.gres = vec![GresRequest {
        name: "gpu".into(),
        type_name: None,
        scope: GresScope::PerTask,
        count: 1,
        cpus_per_gres: None,
        mem_per_gres: None,
    }];
    let r = start_full(&mut ct, a29);
    type Placed = (u32, Vec<usize>, u16, u64, Vec<usize>);
    let got: Vec<Placed> = r
        .per_node
        .iter()
        .map(|n| {
            (
                n.node_index,
                held_cores(n),
                n.cpus,
                n.memory,
                devs(&n.gres[0]),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, vec![2], 2, 500, vec![0, 1]),
            (3, vec![2], 2, 500, vec![0, 1]),
        ]
    );
}

#[test]
fn anchor_cr_cpu_mps_cores_beside_its_gpu() {
    // Anchor cons_tres-CR_CPU_Memory a14 (`-n1 --gres=mps:50`) with a11
    // (`-n1 --gres=gpu:1`) on n1's CPUs 0-1 and GPU 0: Slurm gave
    // `CPU_IDs=4-5 Mem=250 GRES=mps:50(IDX:1)`, a core of socket 1 beside
    // GPU 1, not the free core 1 of socket 0.
    let mut ct = anchor_cluster_with("CR_CPU_Memory");
    let a11 = start_full(&mut ct, with_gres(job(11, 1, 1, 1), "gpu", 1));
    assert_eq!(devs(&a11.per_node[0].gres[0]), vec![0]);
    let r = start_full(&mut ct, with_gres(job(14, 1, 1, 1), "mps", 50));
    let n = &r.per_node[0];
    assert_eq!(
        (n.node_index, held_cores(n), n.cpus, n.memory),
        (0, vec![2], 1, 250)
    );
    assert_eq!(devs(&n.gres[0]), vec![1]);
}

#[test]
fn mem_per_gpu_caps_the_gpus_a_node_can_give() {
    // 22.05 gres_select_filter_remove_unusable (gres_select_filter.c:272-
    // 285, 348-362): with CR_Memory a node gives no more GPUs than its
    // free memory holds at mem-per-GPU, and is refused when that is below
    // the GPUs the job needs there. `--gres=gpu:2 --mem-per-gpu=1500`
    // (3000 MB) on anchor nodes of 4000 MB: n1 with 2000 MB in use holds
    // one GPU's worth, so the job goes to n2. Checked on the anchor
    // (22.05.8, CR_Core_Memory, by hand): after `-w n1 -n1 --mem=2000`,
    // `-n1 --gres=gpu:2 --mem-per-gpu=1500` ran on n2 (Mem=3000,
    // gpu:2(IDX:0-1)), and `-n1 --gres=gpu:1 --mem-per-gpu=1500` on n1.
    let mut ct = anchor_cluster();
    let mut a = job(1, 1, 1, 1);
    a.details.memory = MemoryRequest::PerNode(2000);
    start_full(&mut ct, a);
    let mut j = with_gres(job(2, 1, 1, 1), "gpu", 2);
    j.details.gres[0].mem_per_gres = Some(1500);
    assert_eq!(decision(&ct, j), Ok(vec![(1, 2, 3000)]));
}

#[test]
fn per_node_gpu_request_keeps_the_cores_beside_its_gpu() {
    // gres_select_filter_sock_core (22.05) on the first pass: a per-node
    // GPU request keeps the socket of the GPU it needs and then only the
    // cores its tasks need. Anchor job a11 (`-n1 --gres=gpu:1`, idle n1):
    // CPUs 0-1 with GPU 0.
    let ct = anchor_cluster();
    let one = with_gres(job(11, 1, 1, 1), "gpu", 1);
    assert_eq!(cores(&ct, one), vec![(0, vec![0], 2)]);
}

#[test]
fn per_node_gpu_trim_makes_an_idle_node_as_tight_as_a_busy_one() {
    // Anchor job a46 (`-n1 --gres=gpu:1 --mem-per-gpu=1000`): with n2 left
    // one free core beside its free GPU, Slurm took the idle n1. Trimmed to
    // one core, n1 ties with n2 as the tightest fit and comes first.
    let mut ct = anchor_cluster();
    let mut busy = job(42, 1, 3, 1);
    busy.details.required_nodes = Some(bm(4, &[1]));
    busy.details.max_nodes = Some(1);
    start_full(&mut ct, busy);
    let mut g = with_gres(job(46, 1, 1, 1), "gpu", 1);
    g.details.gres[0].mem_per_gres = Some(1000);
    assert_eq!(decision(&ct, g), Ok(vec![(0, 2, 1000)]));
}

#[test]
fn per_node_gpu_trim_gives_way_when_the_socket_is_too_small() {
    // When the GPU's socket cannot hold the job, Slurm's first pass fails
    // and the second uses every free core: -N1 -n6 --gres=gpu:1 on an idle
    // 2 x 2-core x 2-thread node takes three cores over both sockets.
    let ct = anchor_cluster();
    let mut j = with_gres(job(1, 1, 6, 1), "gpu", 1);
    j.details.max_nodes = Some(1);
    let got = cores(&ct, j);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].1.len(), got[0].2), (3, 6));
}

#[test]
fn one_task_per_core_gres_job_keeps_its_uncapped_cpus() {
    // 22.05 gres_select_filter.c:887-950: under CR_ONE_TASK_PER_CORE a GRES
    // job with one CPU per task and no CPUs per GRES keeps the CPUs counted
    // before the GRES trim (less a core's threads per core dropped once the
    // cores left hold fewer threads), so best fit prefers the node with the
    // fewest free cores. Anchor a46 (`-n1 --gres=gpu:1` under
    // CR_Core_Memory,CR_ONE_TASK_PER_CORE) went to n2, the node left with
    // one free core, not to the idle n1.
    let mut ct = anchor_cluster_with("CR_Core_Memory,CR_ONE_TASK_PER_CORE");
    let mut a = job(1, 1, 3, 1);
    a.details.required_nodes = Some(bm(4, &[1]));
    start_full(&mut ct, a);
    let mut b = job(2, 1, 2, 1);
    b.details.required_nodes = Some(bm(4, &[2]));
    start_full(&mut ct, b);
    let gpu = with_gres(job(3, 1, 1, 1), "gpu", 1);
    assert_eq!(decision(&ct, gpu).map(|d| d[0].0), Ok(1));
    // Without CR_ONE_TASK_PER_CORE every node's count is capped to the one
    // task, all tie, and the first node stays.
    let mut ct = anchor_cluster();
    let mut a = job(1, 1, 6, 1);
    a.details.required_nodes = Some(bm(4, &[1]));
    start_full(&mut ct, a);
    let gpu = with_gres(job(3, 1, 1, 1), "gpu", 1);
    assert_eq!(decision(&ct, gpu).map(|d| d[0].0), Ok(0));
}

#[test]
fn per_task_gres_caps_a_nodes_cpus_at_its_tasks() {
    // gres_select_filter.c:940-951: a node's CPUs are capped at its most
    // tasks x cpus-per-task, so one GPU per node holds one task of
    // `-n2 --gpus-per-task=1`, not two on its core's two threads.
    let mut ct = anchor_cluster();
    for n in 0..4 {
        start(&mut ct, with_gres(on_node(n as u32 + 1, 4, n, 1), "gpu", 1));
    }
    let j = with_gres_per(job(9, 1, 2, 1), "gpu", 1, GresScope::PerTask);
    assert_eq!(nodes_of(&ct, j), vec![0, 1]);
}

#[test]
fn mps_first_pass_skips_a_node_whose_free_cores_are_away_from_its_gpu() {
    // 22.05's `choose_nodes` first evaluates the nodes with `first_pass`
    // (cons_tres/job_test.c:3186-3190): `gres_select_filter_sock_core`
    // then counts only devices on sockets with free cores
    // (gres_select_filter.c:611-614) and refuses a node where they fall
    // short (:642-646). Here n1's free core is on socket 1 while its only
    // usable mps is GPU 0's (GPU 1 is allocated whole), so the mps job goes
    // to the idle n2, beside GPU 0; only when no node passes is the second
    // pass, without that test, tried. Anchor cons_tres-CR_Core_Memory-
    // gpu_defaults a37 (`-n1 --gres=mps:30`): n3 was such a node.
    let mut ct = anchor_cluster();
    let mut a = job(1, 1, 1, 4);
    a.details.required_nodes = Some(bm(4, &[0]));
    assert_eq!(start(&mut ct, a), vec![(0, vec![0, 1], 4)]);
    let mut b = with_gres(job(2, 1, 2, 1), "gpu", 1);
    b.details.required_nodes = Some(bm(4, &[0]));
    let r = start_full(&mut ct, b);
    assert_eq!(devs(&r.per_node[0].gres[0]), vec![1]);
    // n3 and n4 are full.
    for n in [2, 3] {
        let mut fill = job(10 + n, 1, 8, 1);
        fill.details.required_nodes = Some(bm(4, &[n as usize]));
        start(&mut ct, fill);
    }
    let r = start_full(&mut ct, with_gres(job(3, 1, 1, 1), "mps", 30));
    let n = &r.per_node[0];
    assert_eq!(n.node_index, 1);
    assert_eq!(
        (devs(&n.gres[0]), n.gres[0].per_device.clone()),
        (vec![0], vec![30])
    );
    // With n2 full too, the second pass takes n1 and GPU 0's shares.
    ct.job_fini(3);
    let mut fill = job(11, 1, 8, 1);
    fill.details.required_nodes = Some(bm(4, &[1]));
    start(&mut ct, fill);
    let r = start_full(&mut ct, with_gres(job(4, 1, 1, 1), "mps", 30));
    let n = &r.per_node[0];
    assert_eq!(n.node_index, 0);
    assert_eq!(devs(&n.gres[0]), vec![0]);
}

#[test]
fn one_task_per_core_lets_a_gres_job_run_a_task_per_core() {
    // Under CR_ONE_TASK_PER_CORE every job has `--ntasks-per-core=1`, so
    // `gres_select_filter_sock_core` allows a node one task per core
    // (cons_tres/job_test.c:321-325), not the job's one task: an idle node
    // keeps both cores beside its GPU and offers 4 CPUs, more than n3's 2.
    // Real Slurm 22.05.8 (anchor one_task a37, `-n1 --gres=mps:30`, n3
    // holding cores 0-1 and GPU 0): n3, CPU_IDs=4-5, mps:30(IDX:1); its
    // SelectType log showed `required_cores=2 by max_tasks_this_node=2`.
    let mut ct = anchor_cluster_with("CR_Core_Memory,CR_ONE_TASK_PER_CORE");
    let held = start_full(&mut ct, with_gres(on_node(35, 4, 2, 2), "gpu", 1));
    assert_eq!(devs(&held.per_node[0].gres[0]), vec![0]);
    let r = start_full(&mut ct, with_gres(job(37, 1, 1, 1), "mps", 30));
    let n = &r.per_node[0];
    assert_eq!(
        (n.node_index, held_cores(n), devs(&n.gres[0])),
        (2, vec![2], vec![1])
    );
}

/// Job `id` running on node `node` of the 4-node anchor cluster with
/// `cores` and, when given, GPU `gpu`.
fn running_on(ct: &mut ConsTres, id: u32, node: usize, cores: &[usize], gpu: Option<usize>) {
    use slurm_wasm_sdk::types::{GresAllocation, JobResources, NodeResources};
    let mut j = job(id, 1, cores.len() as u32 * 2, 1);
    j.state = JobState::Running;
    j.resources = Some(JobResources {
        nodes: bm(4, &[node]),
        ncpus: cores.len() as u32 * 2,
        per_node: vec![NodeResources {
            node_index: node as u32,
            cores: bm(4, cores),
            cpus: cores.len() as u16 * 2,
            memory: 500,
            gres: gpu
                .map(|g| GresAllocation {
                    name: "gpu".into(),
                    type_name: None,
                    count: 1,
                    devices: Some(bm(2, &[g])),
                    per_device: Vec::new(),
                })
                .into_iter()
                .collect(),
        }],
        whole_nodes: false,
    });
    ct.add_running(&j).unwrap();
}

#[test]
fn second_pass_keeps_a_gres_job_to_its_tasks_cores() {
    // A GPU job whose only usable GPU is away from the free cores fails
    // 22.05's first pass on n1 and n2; on the second pass
    // `gres_select_filter_sock_core` still trims a node's cores to what its
    // tasks need, giving up the sockets the devices do not need first
    // (gres_select_filter.c:855-907). Both nodes then offer one core, so
    // the tie goes to the first node, n1 (untrimmed, n2's one free core
    // would be the tighter fit).
    let mut ct = anchor_cluster();
    running_on(&mut ct, 1, 0, &[2, 3], Some(0));
    running_on(&mut ct, 2, 1, &[1, 2, 3], Some(0));
    running_on(&mut ct, 3, 2, &[0, 1, 2, 3], None);
    running_on(&mut ct, 4, 3, &[0, 1, 2, 3], None);
    let r = start_full(&mut ct, with_gres(job(5, 1, 1, 1), "gpu", 1));
    let n = &r.per_node[0];
    assert_eq!(
        (n.node_index, held_cores(n), devs(&n.gres[0])),
        (0, vec![0], vec![1])
    );
}

/// GPU `i`'s `Links=`: GPU 0 is linked best to 3 (4), then 5 (3), 1 (2),
/// 2 (1), 4 (0); GPU 1 to 5, 4, 2, 3. The anchor's n1 in
/// cons_tres-CR_Core_Memory-links (there without `Cores=`).
const LINKS: [[i32; 6]; 6] = [
    [-1, 2, 1, 4, 0, 3],
    [2, -1, 1, 0, 3, 4],
    [1, 1, -1, 2, 2, 0],
    [4, 0, 2, -1, 1, 1],
    [0, 3, 2, 1, -1, 2],
    [3, 4, 0, 1, 2, -1],
];

/// Links above 4, which 22.05 scales down, and not symmetric (GPU 1 says
/// 2 to GPU 2 and 7 to GPU 3; they say 6 and 3 back). The anchor's n2
/// (GPUs bound to every core).
const LINKS_SCALED: [[i32; 6]; 6] = [
    [-1, 6, 7, 8, 5, 2],
    [8, -1, 2, 7, 1, 0],
    [7, 6, -1, 5, 1, 1],
    [8, 3, 5, -1, 2, 2],
    [5, 1, 1, 2, -1, 4],
    [2, 0, 1, 2, 4, -1],
];

/// Links of GPUs 0-2 bound to socket 0 and 3-5 to socket 1 (the anchor's
/// n3).
const LINKS_BOUND: [[i32; 6]; 6] = [
    [-1, 1, 2, 1, 0, 3],
    [1, -1, 2, 0, 1, 1],
    [2, 2, -1, 1, 0, 2],
    [1, 0, 1, -1, 2, 1],
    [0, 1, 0, 2, -1, 1],
    [3, 1, 2, 1, 1, -1],
];

/// The `Cores=` of [`six_gpus`]' gres.conf lines.
#[derive(Clone, Copy)]
enum Bind {
    /// None (and no `Type=`): slurmctld keeps no topology for the GPUs.
    No,
    /// Every core (`Cores=0-3`): a topology, each GPU of any socket.
    Every,
    /// GPUs 0-2 `Cores=0-1` (socket 0), 3-5 `Cores=2-3` (socket 1).
    Split,
}

/// One anchor-like node (2 sockets x 2 cores x 2 threads, CR_Core_Memory)
/// with six GPUs, one gres.conf line each, GPU `i` with `Links=links[i]`
/// (none when `links` is `None`) and `Cores=` as `bind` says.
fn six_gpus(links: Option<&[[i32; 6]; 6]>, bind: Bind) -> ConsTres {
    let p = params(&["CR_Core_Memory"]);
    let mut ct = ConsTres::new(
        p,
        vec![fixtures::partition(0, "big", 1)],
        MemoryRequest::PerCpu(250),
    );
    let mut n = fixtures::node(0, "n1", 2, 2, 2, 4000);
    n.gres_topology = (0..6)
        .map(|i| GresDeviceGroup {
            name: "gpu".into(),
            type_name: None,
            count: 1,
            cores: match bind {
                Bind::No => None,
                Bind::Every => Some(bm(4, &[0, 1, 2, 3])),
                Bind::Split => Some(bm(4, if i < 3 { &[0, 1] } else { &[2, 3] })),
            },
            links: links.map_or_else(Vec::new, |l| l[i].to_vec()),
        })
        .collect();
    ct.node_init(&[n]).unwrap();
    ct
}

/// Starts `tasks` tasks asking `count` GPUs in `scope`; returns its GPUs.
fn gpus(ct: &mut ConsTres, id: u32, tasks: u32, scope: GresScope, count: u64) -> Vec<usize> {
    let r = start_full(ct, with_gres_per(job(id, 1, tasks, 1), "gpu", count, scope));
    devs(&r.per_node[0].gres[0])
}

#[test]
fn link_levels_scale_sums_above_four_down() {
    // `_set_node_bits` (cons_common/gres_select_filter.c): a best sum
    // above 4 divides every sum by (best + 3) / 4, in C's division.
    let mut sums = [6, 7, 8, 0];
    assert_eq!(super::link_levels(&mut sums), 4);
    assert_eq!(sums, [3, 3, 4, 0]);
    let mut sums = [-3, 9, 4];
    assert_eq!(super::link_levels(&mut sums), 3);
    assert_eq!(sums, [-1, 3, 1]);
    let mut sums = [-1, -2];
    assert_eq!(super::link_levels(&mut sums), 0);
    assert_eq!(sums, [-1, -2]);
}

#[test]
fn links_without_cores_or_type_are_ignored() {
    // `_get_tot_gres_cnt` (common/gres.c) counts a node's gres.conf
    // records as a topology only when one has `Cores=` or `Type=`; without
    // one `gres_select_filter_select_and_set` only sets counts and the
    // first free GPUs are taken, whatever `Links=` says. The anchor's n1:
    // l1 `-n1 --gres=gpu:3` got GPUs 0-2, l8 `--gpus=2` 0-1, l7
    // `-n2 --gpus-per-task=1` 0-1.
    let mut ct = six_gpus(Some(&LINKS), Bind::No);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerNode, 3), vec![0, 1, 2]);
    let mut ct = six_gpus(Some(&LINKS), Bind::No);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerJob, 2), vec![0, 1]);
    let mut ct = six_gpus(Some(&LINKS), Bind::No);
    assert_eq!(gpus(&mut ct, 1, 2, GresScope::PerTask, 1), vec![0, 1]);
}

#[test]
fn per_node_gpus_best_linked_to_the_first_come_first() {
    // `_set_node_bits` (cons_common/gres_select_filter.c): the first free
    // device, then from the highest link count to it down (not the
    // ascending sort of later releases, which would give 0, 4, 2).
    let mut ct = six_gpus(Some(&LINKS), Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerNode, 3), vec![0, 3, 5]);
    // GPU 0 busy: GPU 1 comes first, then its best link, 5 (4).
    let mut ct = six_gpus(Some(&LINKS), Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerNode, 1), vec![0]);
    assert_eq!(gpus(&mut ct, 2, 1, GresScope::PerNode, 2), vec![1, 5]);
}

#[test]
fn per_node_scaled_links_tie_in_index_order() {
    // `_set_node_bits`: GPU 0's links 6, 7, 8 to GPUs 1-3 scale down to
    // 3, 3, 4: GPU 3, then GPU 1 before 2 although 2 is linked better
    // (the anchor's m1, `-n1 --gres=gpu:3` on n2: GPUs 0-1,3).
    let mut ct = six_gpus(Some(&LINKS_SCALED), Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerNode, 3), vec![0, 1, 3]);
}

#[test]
fn per_node_links_are_the_row_of_the_first_pick() {
    // `_set_node_bits` sums `links_cnt[g][l]`: the `Links=` of the device
    // picked (GPU 1: 2 to GPU 2, 7 to GPU 3), not what the others say
    // of it (6 and 3). The anchor's m2 and m3 on n2: GPU 0, then 1 and 3.
    let mut ct = six_gpus(Some(&LINKS_SCALED), Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerNode, 1), vec![0]);
    assert_eq!(gpus(&mut ct, 2, 1, GresScope::PerNode, 2), vec![1, 3]);
}

#[test]
fn per_node_sums_the_links_of_each_used_sockets_first_pick() {
    // `_set_node_bits`: on both sockets the first picks are GPUs 0 and 3;
    // the others' summed links to them are 1 (GPU 1), 3 (2), 2 (4) and
    // 4 (5): GPUs 5 and 2 follow (the anchor's c1, `-n8 --gres=gpu:4` on
    // n3).
    let mut ct = six_gpus(Some(&LINKS_BOUND), Bind::Split);
    assert_eq!(gpus(&mut ct, 1, 8, GresScope::PerNode, 4), vec![0, 2, 3, 5]);
}

#[test]
fn per_node_without_links_takes_one_per_used_socket_then_index_order() {
    // `_set_node_bits` without `Links=`: one device on each socket holding
    // the job's cores (GPUs 0 and 3), then the used sockets' devices in
    // index order (1, 2), not a share of the count per socket as in later
    // releases (0, 1, 3, 4). The anchor's d1, `-n8 --gres=gpu:4` on n4.
    let mut ct = six_gpus(None, Bind::Split);
    assert_eq!(gpus(&mut ct, 1, 8, GresScope::PerNode, 4), vec![0, 1, 2, 3]);
}

#[test]
fn per_task_gpus_of_any_socket_ignore_links() {
    // `_set_task_bits` (cons_common/gres_select_filter.c) takes no device
    // of any socket on its first walk (its goal for `s = -1` is 0 tasks),
    // so no link is summed and the devices come in index order (the
    // anchor's m5, `-n2 --gpus-per-task=1` on n2: GPUs 0-1).
    let mut ct = six_gpus(Some(&LINKS), Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 2, GresScope::PerTask, 1), vec![0, 1]);
}

#[test]
fn per_socket_gpus_ignore_links() {
    // `_set_sock_bits` (cons_common/gres_select_filter.c) levels the
    // links but never consults them: each used socket's devices in index
    // order.
    let mut ct = six_gpus(Some(&LINKS_BOUND), Bind::Split);
    let mut j = with_gres_per(job(1, 1, 2, 1), "gpu", 2, GresScope::PerSocket);
    j.details.sockets_per_node = 2;
    j.details.ntasks_per_socket = 1;
    let r = start_full(&mut ct, j);
    assert_eq!(devs(&r.per_node[0].gres[0]), vec![0, 1, 3, 4]);
}

#[test]
fn per_job_gpus_keep_the_best_linked_pair() {
    // `_set_job_bits1` (cons_common/gres_select_filter.c): with `Links=`
    // every free device is taken, then the first pair with the highest
    // link (0 and 3, 4) anchors on GPU 0 and the devices least linked to
    // it go (4, then 2, 1) until the count fits. The anchor's m6,
    // `--gpus=3` on n2 (links 8 from GPU 0 to 3): GPUs 0, 2, 3.
    let mut ct = six_gpus(Some(&LINKS), Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerJob, 2), vec![0, 3]);
    let mut ct = six_gpus(Some(&LINKS), Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerJob, 3), vec![0, 3, 5]);
    let mut ct = six_gpus(Some(&LINKS_SCALED), Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerJob, 3), vec![0, 2, 3]);
    // Without links: devices of any socket in index order.
    let mut ct = six_gpus(None, Bind::Every);
    assert_eq!(gpus(&mut ct, 1, 1, GresScope::PerJob, 3), vec![0, 1, 2]);
}

#[test]
fn per_node_gpus_bound_to_every_core_keep_one_core_spread() {
    // `gres_select_filter_sock_core` (cons_common/gres_select_filter.c)
    // keeps every socket for devices of any socket, then drops the highest
    // free core of the fullest socket (the first on ties) until the tasks'
    // cores remain: core 2 of an idle node (the anchor's l1 and m1, CPUs
    // 4-5).
    let mut ct = six_gpus(Some(&LINKS_SCALED), Bind::Every);
    let r = start_full(&mut ct, with_gres(job(1, 1, 1, 1), "gpu", 1));
    assert_eq!(held_cores(&r.per_node[0]), vec![2]);
}
