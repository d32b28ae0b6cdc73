//! Tests of [`crate::can_run`] (22.05 `can_job_run_on_node`, cons_tres/job_test.c).

use slurm_wasm_sdk::select::JobTestMode;

use crate::test_support::{anchor_cluster_of, cores, job, refused, with_gres};

#[test]
fn cr_socket_rules_sockets_out_before_gres_trims_cores() {
    // `_allocate_sc` runs before `gres_select_filter_sock_core`
    // (cons_tres/job_test.c:3361, 374): the GRES trim keeps cores of usable
    // sockets only, and the used socket is then widened whole. Real Slurm
    // (anchor a11): `-n1 --gres=gpu:1` took CPU_IDs 0-3 and GPU 0.
    let ct = anchor_cluster_of("CR_Socket_Memory", 1);
    assert_eq!(
        cores(&ct, with_gres(job(1, 1, 1, 1), "gpu", 1)),
        vec![(0, vec![0, 1], 4)]
    );
    // Two GPUs need both sockets (`req_sock_map`), and socket 1 is used:
    // refused, as sbatch was for `-n2 --gres=gpu:2` (anchor a12).
    assert!(refused(
        &ct,
        with_gres(job(2, 1, 2, 1), "gpu", 2),
        JobTestMode::TestOnly
    ));
}
