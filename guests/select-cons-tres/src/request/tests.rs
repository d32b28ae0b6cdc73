//! Tests of [`crate::request`]: the job as slurmctld hands it over (GPU
//! defaults, whole-node jobs, memory per GPU, cons_res refusals).

use slurm_wasm_sdk::select::JobTestMode;
use slurm_wasm_sdk::types::{GresScope, MemoryRequest, ShareRequest};

use crate::test_support::{
    anchor_cluster, cores, decision, devs, gpu_cluster, gpu_job, held_cores, job, on_node, request,
    start_full, with_gres,
};

#[test]
fn cons_res_refuses_gpu_options() {
    // cons_res does not support --gpus / --cpus-per-gpu (see below).
    let mut ct = gpu_cluster();
    ct.params.cons_res = true;
    let e = ct
        .job_test(
            &request(
                &ct,
                gpu_job(0, 1, GresScope::PerJob, 2, 1),
                JobTestMode::RunNow,
            ),
            0,
        )
        .unwrap_err();
    // gres_job_state_validate (common/gres.c:5681): ESLURM_UNSUPPORTED_GRES
    // (2122, slurm/slurm_errno.h).
    assert_eq!(e.code, slurm_wasm_sdk::codes::ESLURM_UNSUPPORTED_GRES);
}

#[test]
fn mem_per_gpu_replaces_the_default_memory() {
    // cons_common/job_test.c:636 (_verify_node_state) and :1654
    // (gres_select_util_job_mem_set, cons_common/gres_select_util.c): without an
    // explicit memory request, `--mem-per-gpu` alone sets the node's
    // memory (mem-per-GPU x GPUs); DefMemPerCPU (250 here) is not used,
    // and a node with less free memory than mem-per-GPU is dropped.
    let mut ct = anchor_cluster();
    let gpu_job = |id: u32| {
        let mut j = with_gres(job(id, 1, 1, 1), "gpu", 1);
        j.details.gres[0].mem_per_gres = Some(3000);
        j
    };
    assert_eq!(decision(&ct, gpu_job(1)), Ok(vec![(0, 2, 3000)]));
    // n1 keeps 2000 MB free: the job moves to n2.
    let mut a = job(2, 1, 1, 1);
    a.details.memory = MemoryRequest::PerNode(2000);
    start_full(&mut ct, a);
    assert_eq!(decision(&ct, gpu_job(3)), Ok(vec![(1, 2, 3000)]));
    // An explicit request (exclusive with --mem-per-gpu in sbatch) wins
    // over DefMemPerGPU for the node's memory, but the GRES filter still
    // refuses a node with less free memory than one GPU's default
    // (`def_mem_per_gres`, set by `_set_gpu_defaults` whatever the job's
    // memory, cons_common/job_test.c:253-265; gres_select_filter.c:274-285):
    // n2 at a default of 3000 MB, n1 at 2000. Checked on the anchor
    // with DefMemPerGPU=3000 (by hand): after `-w n1 -n1 --mem=2000`,
    // `-n1 --gres=gpu:1 --mem-per-cpu=100` ran on n2 with Mem=200.
    ct.params.def_mem_per_gpu = Some(3000);
    let mut j = with_gres(job(4, 1, 1, 1), "gpu", 1);
    j.details.memory = MemoryRequest::PerCpu(100);
    assert_eq!(decision(&ct, j.clone()), Ok(vec![(1, 2, 200)]));
    ct.params.def_mem_per_gpu = Some(2000);
    assert_eq!(decision(&ct, j), Ok(vec![(0, 2, 200)]));
}

#[test]
fn gpu_defaults_apply_as_slurm_sets_them() {
    // _set_gpu_defaults and gres_select_util_job_set_defs (22.05
    // cons_common/job_test.c:227-262, gres_select_util.c:55-106), checked
    // against the anchor's gpu_defaults recording (DefCpuPerGPU=2,
    // DefMemPerGPU=1500): a11 `-n1 --gres=gpu:1` got NumCPUs=2 Mem=1500; a13
    // `-n2 --gpus-per-task=1` 2 CPUs per task; a25 `-c4` kept its own CPUs.
    let mut ct = anchor_cluster();
    ct.params.def_cpu_per_gpu = Some(2);
    ct.params.def_mem_per_gpu = Some(1500);
    // Jobs without -c (cpus_per_task 0) and without a memory option.
    let gpu_job = |id: u32, tasks: u32| {
        let mut j = with_gres(job(id, 1, tasks, 1), "gpu", 1);
        j.details.cpus_per_task = 0;
        j.details.memory = MemoryRequest::None;
        j
    };
    // One core of 2 threads covers the 2 CPUs of one GPU; 1500 MB per GPU.
    assert_eq!(decision(&ct, gpu_job(1, 1)), Ok(vec![(0, 2, 1500)]));
    // Two GPUs per node: 4 CPUs (two cores) and 3000 MB, even for one task.
    let mut two = gpu_job(2, 1);
    two.details.gres[0].count = 2;
    assert_eq!(decision(&ct, two), Ok(vec![(0, 4, 3000)]));
    // --gpus-per-task=1 with -n2: CPUs per task rise to 2.
    let mut per_task = gpu_job(3, 2);
    per_task.details.gres[0].scope = GresScope::PerTask;
    assert_eq!(decision(&ct, per_task), Ok(vec![(0, 4, 3000)]));
    // With -c the CPU default is off; the memory default stays.
    let mut with_c = gpu_job(4, 1);
    with_c.details.cpus_per_task = 1;
    assert_eq!(decision(&ct, with_c), Ok(vec![(0, 2, 1500)]));
    // An explicit memory or --cpus-per-gpu wins over the defaults.
    let mut own = gpu_job(5, 1);
    own.details.memory = MemoryRequest::PerNode(700);
    own.details.gres[0].cpus_per_gres = Some(4);
    assert_eq!(decision(&ct, own), Ok(vec![(0, 4, 700)]));
    // The partition's own values come first; its DefMemPerGPU=0 switches
    // the cluster's off (DefMemPerCPU=250 applies again).
    ct.partitions[0].gpu_defaults.cpus_per_gpu = Some(4);
    ct.partitions[0].gpu_defaults.mem_per_gpu = Some(0);
    assert_eq!(decision(&ct, gpu_job(6, 1)), Ok(vec![(0, 4, 1000)]));
    // A job without GPUs is untouched.
    let mut plain = job(7, 1, 1, 1);
    plain.details.cpus_per_task = 0;
    plain.details.memory = MemoryRequest::None;
    assert_eq!(decision(&ct, plain), Ok(vec![(0, 2, 500)]));
}

#[test]
fn exclusive_user_and_mcs_jobs_are_not_whole_node() {
    // Real Slurm 22.05.8 on the anchor (CR_Core_Memory, DefMemPerCPU=250):
    // `-w n1 -n1 --exclusive=user` and `--exclusive=mcs` each held one
    // core (CPU_IDs=0-1, NumCPUs=2, Mem=500); plain `--exclusive` held the
    // node (CPU_IDs=0-7, NumCPUs=8).
    let ct = anchor_cluster();
    for share in [ShareRequest::ExclusiveUser, ShareRequest::ExclusiveMcs] {
        let mut j = on_node(1, 4, 0, 1);
        j.details.share = share;
        assert_eq!(cores(&ct, j), vec![(0, vec![0], 2)], "{share:?}");
    }
    let mut j = on_node(2, 4, 0, 1);
    j.details.share = ShareRequest::Exclusive;
    assert_eq!(cores(&ct, j), vec![(0, vec![0, 1, 2, 3], 8)]);
}

#[test]
fn exclusive_partition_jobs_take_whole_nodes_with_their_gpus() {
    // slurmctld sets whole_node for an OverSubscribe=EXCLUSIVE partition
    // (22.05 node_scheduler.c:820-824). Real Slurm 22.05.8 on the anchor
    // with such a partition over n[1-4]: `-w n1 -n1 --gres=gpu:1` held
    // CPU_IDs=0-7 and gpu:2(IDX:0-1), Mem=2000 (8 CPUs x DefMemPerCPU).
    let mut ct = anchor_cluster();
    ct.partitions[0].oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Exclusive;
    let r = start_full(&mut ct, with_gres(on_node(1, 4, 0, 1), "gpu", 1));
    let n = &r.per_node[0];
    assert_eq!(
        (held_cores(n), n.cpus, n.memory, devs(&n.gres[0])),
        (vec![0, 1, 2, 3], 8, 2000, vec![0, 1])
    );
}
