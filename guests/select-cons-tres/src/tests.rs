//! Tests of the crate root: [`crate::ConsTres`]'s node table.

use crate::test_support::cluster;
use slurm_wasm_sdk::Bitmap;

#[test]
fn nodes_holding_maps_cores_to_their_nodes() {
    // Four nodes of 2 x 40 cores (80 each: a node spans two words of the
    // core map). Cores 79 (node 0's last), 160 (node 2's first) and 300
    // (node 3) are set: nodes 0, 2 and 3 hold them, node 1 none.
    let ct = cluster(&["CR_Core"], 4, 2, 40, 1, 1000);
    let mut cores = Bitmap::new(320);
    for c in [79, 160, 161, 300] {
        cores.set(c);
    }
    assert_eq!(
        ct.nodes_holding(&cores).ones().collect::<Vec<_>>(),
        vec![0, 2, 3]
    );
    assert!(!ct.nodes_holding(&Bitmap::new(320)).any());
    assert_eq!(ct.nodes_holding(&Bitmap::full(320)).count(), 4);
}
