//! Tests of [`crate::rows`]: partition rows.

use slurm_wasm_sdk::select::JobTestMode;
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::MemoryRequest;

use super::*;
use crate::test_support::{job, params, preempt_cluster, preempt_config, refused, request, start};
use crate::ConsTres;

#[test]
fn first_fitting_row_and_repack() {
    // A job goes into the first row whose bitmap it does not intersect
    // (`job_res_add_job`, `job_res_fit_in_row`: cons_common/job_resources.c);
    // removal re-packs (`part_data_build_row_bitmaps`, cons_common/part_data.c).
    let mut p = PartRows::new(2, 8);
    let a = Bitmap::full(8);
    let mut b = Bitmap::new(8);
    b.set(0);
    assert!(p.add(1, &[(0, &a)]));
    assert!(p.add(2, &[(0, &b)]));
    assert_eq!(p.rows[1].jobs, vec![2]);
    assert!(
        !p.add(3, &[(0, &b)]),
        "third overlapping job overflows two rows"
    );
    let packed = |j: u32| match j {
        1 => Some(Packed {
            start: 0,
            cpus: 8,
            cores: vec![(0, &a)],
        }),
        2 => Some(Packed {
            start: 0,
            cpus: 1,
            cores: vec![(0, &b)],
        }),
        _ => None,
    };
    p.remove(1, &[(0, &a)], &packed);
    assert_eq!(p.rows[0].jobs, vec![2]);
    assert!(p.rows[1].jobs.is_empty());
}

#[test]
fn rows_sort_by_cores_and_repack_by_first_core() {
    // part_data.c:465-480 (`part_data_sort_res`): the rows with more
    // cores first, by pairwise swaps. part_data.c:190-236: a removal
    // places the jobs left again by their first core, each in the
    // first row it fits.
    let bits = |cores: &[usize]| {
        let mut b = Bitmap::new(8);
        cores.iter().for_each(|&c| b.set(c));
        b
    };
    let (a, b, c) = (bits(&[0, 1]), bits(&[1, 2]), bits(&[3, 4, 5]));
    let mut p = PartRows::new(3, 8);
    assert!(p.add(2, &[(0, &b)]));
    assert!(p.add(1, &[(0, &a)]));
    assert!(p.add(3, &[(0, &c)]));
    // Row 0: jobs 2 and 3 (5 cores); row 1: job 1 (2); row 2: empty.
    assert_eq!(p.sorted(), vec![0, 1, 2]);
    let mut q = p.clone();
    q.rows.swap(0, 2);
    assert_eq!(q.sorted(), vec![2, 1, 0]);
    q.sort_res();
    assert_eq!(q.rows[0].jobs, vec![2, 3]);
    let packed = |j: u32| {
        let (start, cores) = match j {
            1 => (0, &a),
            2 => (1, &b),
            _ => (3, &c),
        };
        Some(Packed {
            start,
            cpus: cores.count() as u32,
            cores: vec![(0, cores)],
        })
    };
    p.remove(3, &[(0, &c)], &packed);
    // Job 1 (first core 0) now comes first and takes row 0; job 2
    // overlaps it and goes to row 1.
    assert_eq!(p.rows[0].jobs, vec![1]);
    assert_eq!(p.rows[1].jobs, vec![2]);
    assert_eq!((p.rows[0].set, p.rows[1].set, p.rows[2].set), (2, 2, 0));
}

#[test]
fn one_row_removal_clears_only_the_job() {
    // One row (`part_data_build_row_bitmaps`): jobs on two 4-core nodes
    // (cores 0-3, 4-7 of the cluster map); removing one leaves the
    // other's cores.
    let mut p = PartRows::new(1, 8);
    let mut low = Bitmap::new(4);
    low.set(1);
    low.set(2);
    let all = Bitmap::full(4);
    assert!(p.add(1, &[(0, &low), (4, &all)]));
    assert!(p.add(2, &[(0, &Bitmap::full(1))]));
    assert!(!p.add(3, &[(4, &low)]), "cores 5-6 are taken by job 1");
    p.remove(1, &[(0, &low), (4, &all)], &|_| None);
    assert_eq!(p.rows[0].jobs, vec![2]);
    assert_eq!(p.rows[0].cores.ones().collect::<Vec<_>>(), vec![0]);
}

#[test]
fn force_oversubscribe_shares_rows() {
    // part_data_create_array (cons_common/part_data.c): FORCE:2 gives two
    // rows; jobs share cores up to two deep.
    let p = params(&["CR_Core"]);
    let mut part = fixtures::partition(0, "p", 1);
    part.oversubscribe = slurm_wasm_sdk::types::Oversubscribe::Force(2);
    let mut ct = ConsTres::new(p, vec![part], MemoryRequest::None);
    ct.node_init(&[fixtures::node(0, "n0", 1, 4, 1, 100)])
        .unwrap();
    start(&mut ct, job(1, 1, 4, 1));
    assert_eq!(
        start(&mut ct, job(2, 1, 4, 1)),
        vec![(0, vec![0, 1, 2, 3], 4)]
    );
    assert!(refused(&ct, job(3, 1, 4, 1), JobTestMode::RunNow));
    ct.job_fini(1);
    assert!(ct
        .job_test(&request(&ct, job(3, 1, 4, 1), JobTestMode::RunNow), 0)
        .is_ok());
}

#[test]
fn preempt_qos_adds_a_row_to_every_partition() {
    // 22.05 part_data.c:336-346 (`part_data_create_array`): a partition
    // has `max_share & ~SHARED_FORCE` rows, one more when the preempt
    // type's name holds "qos" (cons_common.c:1137-1146), and at least 1;
    // max_share is 1 for OverSubscribe=NO and 0 for EXCLUSIVE. The rows
    // are made at init and again by node_init.
    use slurm_wasm_sdk::types::Oversubscribe::{Exclusive, Force, No, Yes};
    for (over, plain, qos) in [
        (No, 1, 2),
        (Exclusive, 1, 1),
        (Force(2), 2, 3),
        (Yes(2), 2, 3),
    ] {
        for (preempt_type, want) in [
            ("preempt/none", plain),
            ("preempt/partition_prio", plain),
            ("preempt/qos", qos),
        ] {
            let config = preempt_config(preempt_type, &[over], 1);
            let at_init = crate::plugin::instance_from(&config).unwrap();
            let ct = preempt_cluster(preempt_type, &[over], 1);
            for rows in [&at_init.usage.rows[0], &ct.usage.rows[0]] {
                assert_eq!(
                    (rows.num_rows, rows.rows.len()),
                    (want, want),
                    "{over:?} {preempt_type}"
                );
            }
        }
    }
}
