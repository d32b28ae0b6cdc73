//! gres/fpga through the exported contract functions, natively.

use gres_count_only::Fpga;
use slurm_wasm_sdk::gres::{EnvChange, EnvFlags, Export, GresConfig, GresGuest};
use slurm_wasm_sdk::testkit::fixtures;
use slurm_wasm_sdk::types::{GresAllocation, KeyValue};

#[test]
fn jobs_and_steps_see_their_count() {
    type P = Export<Fpga>;
    P::init(GresConfig {
        cluster: fixtures::cluster_config(),
        auto_detect: None,
    })
    .unwrap();
    let allocation = GresAllocation {
        name: "fpga".into(),
        type_name: None,
        count: 3,
        devices: None,
        per_device: Vec::new(),
    };
    // EnvChange has no PartialEq: compare its debug text.
    let set = |value: &str| {
        format!(
            "{:?}",
            vec![EnvChange::Set(KeyValue {
                key: "SLURM_FPGA_COUNT".into(),
                value: value.into(),
            })]
        )
    };
    let got = |changes: Vec<EnvChange>| format!("{changes:?}");
    assert_eq!(
        got(P::job_set_env(Some(allocation.clone()), EnvFlags::empty()).unwrap()),
        set("3")
    );
    assert!(P::step_set_env(None, EnvFlags::empty()).unwrap().is_empty());
    // The SDK's defaults: no task environment, no devices, count-only info.
    assert!(P::task_set_env(None, EnvFlags::empty()).unwrap().is_empty());
    assert!(P::get_devices().unwrap().is_empty());
    assert!(P::job_info(allocation, slurm_wasm_sdk::gres::InfoField::Bitmap).is_err());
}
