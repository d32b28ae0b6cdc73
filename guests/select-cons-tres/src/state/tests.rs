//! Tests of [`crate::state`]: the state blob.

use slurm_wasm_sdk::types::MemoryRequest;

use crate::test_support::{cluster, job, run};

#[test]
fn state_round_trip_and_refusal() {
    let mut ct = cluster(&["CR_Core_Memory"], 2, 1, 4, 1, 1000);
    let mut a = job(1, 1, 2, 1);
    a.details.memory = MemoryRequest::PerNode(300);
    run(&mut ct, a);
    let blob = ct.state_save();
    let mut other = cluster(&["CR_Core_Memory"], 2, 1, 4, 1, 1000);
    other.state_restore(&blob).unwrap();
    assert_eq!(other.usage, ct.usage);
    let kept = other.usage.clone();
    assert!(other
        .state_restore(&blob[..blob.len() - 3])
        .unwrap_err()
        .contains("announces"));
    assert_eq!(other.usage, kept);
    let mut damaged = blob.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    assert!(other
        .state_restore(&damaged)
        .unwrap_err()
        .contains("checksum"));
    assert_eq!(other.usage, kept);
    let mut bigger = cluster(&["CR_Core_Memory"], 3, 1, 4, 1, 1000);
    assert!(bigger
        .state_restore(&blob)
        .unwrap_err()
        .contains("saved for 2 nodes"));
}
