//! priority/small_first through the exported contract functions, natively:
//! the same adapter (`Export`) the component exports, with the SDK's
//! fixtures.

use priority_small_first::SmallFirst;
use slurm_wasm_sdk::priority::{Export, PriorityConfig, PriorityGuest};
use slurm_wasm_sdk::testkit::fixtures::{cluster_config, job, partition};

fn config() -> PriorityConfig {
    let mut hw = partition(1, "hw", 4);
    hw.priority_job_factor = 2;
    PriorityConfig {
        cluster: cluster_config(),
        partitions: vec![partition(0, "big", 4), hw],
        partition_tres: vec![Vec::new(), Vec::new()],
        cluster_cpus: 32,
        cluster_nodes: 4,
        cluster_tres: Vec::new(),
    }
}

#[test]
fn small_jobs_first_weighted_by_partition() {
    type P = Export<SmallFirst>;
    P::init(config()).unwrap();
    let mut small = job(1);
    small.details.min_cpus = 1;
    let mut large = job(2);
    large.details.min_cpus = 7;
    let mut on_hw = job(3);
    on_hw.details.min_cpus = 1;
    on_hw.partitions = vec![1];
    assert_eq!(P::set(0, small.clone()).unwrap(), 500_000);
    assert_eq!(P::set(0, large).unwrap(), 125_000);
    assert_eq!(P::set(0, on_hw).unwrap(), 1_000_000);
    // The SDK keeps a directly set priority (every Slurm priority plugin
    // does), and its defaults: no periodic recomputation, no usage, no
    // state.
    let mut direct = job(4);
    direct.direct_set_priority = true;
    direct.priority = 999;
    assert_eq!(P::set(0, direct).unwrap(), 999);
    assert_eq!(P::calculate(vec![], vec![1, 2]).unwrap(), vec![]);
    assert!(P::association_usages().unwrap().is_empty());
    assert_eq!(P::state_save().unwrap(), Vec::<u8>::new());
    assert!(P::state_restore(b"not a state".to_vec()).is_err());
    P::fini().unwrap();
    let e = P::set(0, small).unwrap_err();
    assert_eq!(e.message, "priority/small_first: called before init");
}
