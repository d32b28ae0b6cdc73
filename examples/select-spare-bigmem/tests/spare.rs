//! select/spare_bigmem's decisions, natively (the calls to the inner plugin
//! are the host's and are checked in the CLI's tests, `tests/select_wrapper.rs`):
//! which candidates a job is first offered, and which will-run answer wins.

use select_spare_bigmem::{earlier, SpareBigmem, FEATURE};
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{Bitmap, JobResources, Node};
use slurm_wasm_select_wrapper::JobTestResult;

/// Nodes n0..n{count}, those in `bigmem` with the feature.
fn nodes(count: u32, bigmem: &[u32]) -> Vec<Node> {
    (0..count)
        .map(|i| {
            let mut node = fixtures::node(i, &format!("n{i}"), 1, 4, 1, 8000);
            if bigmem.contains(&i) {
                node.features = vec!["ib".into(), FEATURE.into()];
            }
            node
        })
        .collect()
}

fn map(len: u32, bits: &[u32]) -> Bitmap {
    let mut words = vec![0u64; (len as usize).div_ceil(64)];
    for &b in bits {
        words[(b / 64) as usize] |= 1 << (b % 64);
    }
    Bitmap { len, words }
}

/// The set bits of `map`, ascending.
fn ones(map: &Bitmap) -> Vec<u32> {
    (0..map.len)
        .filter(|&i| map.words[(i / 64) as usize] & (1 << (i % 64)) != 0)
        .collect()
}

fn answer(start: i64, node: u32) -> JobTestResult {
    JobTestResult {
        resources: JobResources {
            nodes: map(4, &[node]),
            ncpus: 4,
            per_node: Vec::new(),
            whole_nodes: false,
        },
        start_time: Some(start),
        preemptees: Vec::new(),
    }
}

#[test]
fn a_job_not_asking_for_bigmem_is_first_offered_the_other_nodes() {
    let mut policy = SpareBigmem::default();
    policy.learn(&nodes(70, &[1, 65]));
    let job = fixtures::job(7);
    let all = map(70, &(0..70).collect::<Vec<_>>());
    let spared = policy
        .spared(&job, &all)
        .expect("two candidates are spared");
    let expected: Vec<u32> = (0..70).filter(|&i| i != 1 && i != 65).collect();
    assert_eq!((spared.len, ones(&spared)), (70, expected));
}

#[test]
fn requests_the_policy_cannot_narrow_go_through_unchanged() {
    let mut policy = SpareBigmem::default();
    policy.learn(&nodes(4, &[2, 3]));
    // A job asking for the feature (by name, inside an expression).
    let mut asks = fixtures::job(8);
    asks.details.features = Some(format!("ib&{FEATURE}"));
    assert!(policy.spared(&asks, &map(4, &[0, 1, 2, 3])).is_none());
    let plain = fixtures::job(9);
    // No candidate has the feature: nothing to spare.
    assert!(policy.spared(&plain, &map(4, &[0, 1])).is_none());
    // Every candidate has it: nothing would be left.
    assert!(policy.spared(&plain, &map(4, &[2, 3])).is_none());
}

#[test]
fn a_node_that_gains_or_loses_the_feature_is_relearnt() {
    let mut policy = SpareBigmem::default();
    let mut table = nodes(4, &[3]);
    policy.learn(&table);
    table[0].features = vec![FEATURE.into()];
    policy.relearn(0, &table[0]);
    table[3].features.clear();
    policy.relearn(3, &table[3]);
    let job = fixtures::job(1);
    let spared = policy.spared(&job, &map(4, &[0, 1, 2, 3]));
    assert_eq!(spared.map(|m| ones(&m)), Some(vec![1, 2, 3]));
}

/// The start and the nodes of a will-run answer.
fn when_where(r: JobTestResult) -> (Option<i64>, Vec<u32>) {
    (r.start_time, ones(&r.resources.nodes))
}

#[test]
fn the_earlier_will_run_answer_wins_and_sparing_wins_ties() {
    let pick = |spared, full| when_where(earlier(spared, full));
    assert_eq!(pick(answer(100, 0), answer(200, 2)), (Some(100), vec![0]));
    assert_eq!(pick(answer(300, 0), answer(200, 2)), (Some(200), vec![2]));
    assert_eq!(pick(answer(200, 0), answer(200, 2)), (Some(200), vec![0]));
}
