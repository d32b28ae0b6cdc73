//! task/one_cpu through the exported contract functions, natively, on the
//! SDK's mock host (a node of 2 cores x 2 threads, CPUs numbered core by
//! core: core c holds CPUs 2c and 2c+1).

use slurm_wasm_sdk::task::topology::CpuLayout;
use slurm_wasm_sdk::task::{Export, TaskConfig, TaskGuest};
use slurm_wasm_sdk::testkit::{self, fixtures};
use slurm_wasm_sdk::Bitmap;
use task_one_cpu::OneCpu;

#[test]
fn each_task_gets_the_first_thread_of_a_step_core_in_turn() {
    type P = Export<OneCpu>;
    testkit::reset();
    testkit::with(|host| {
        host.cpu_layout = Ok(CpuLayout {
            sockets: 1,
            cores_per_socket: 2,
            threads_per_core: 2,
            block_map: vec![0, 1, 2, 3],
            numa_node_of_cpu: vec![0; 4],
        });
        host.cpuset_denied = None;
    });
    P::init(TaskConfig {
        cluster: fixtures::cluster_config(),
        node_name: "n1".into(),
    })
    .unwrap();
    let mut step = fixtures::step(5, 0);
    step.cores = (&Bitmap::from_bits(2, [1])).into(); // core 1 only
    P::pre_launch_priv(step.clone(), fixtures::task(0, 100)).unwrap();
    P::pre_launch_priv(step, fixtures::task(1, 101)).unwrap();
    let bound: Vec<(u32, Vec<usize>)> = testkit::with(|host| {
        host.bound
            .iter()
            .map(|(p, c)| (*p, c.ones().collect()))
            .collect()
    });
    assert_eq!(bound, [(100, vec![2]), (101, vec![2])]);

    // Without the cpuset grant the binding fails, naming the capability.
    testkit::with(|host| {
        host.cpuset_denied = Some(slurm_wasm_sdk::types::CapabilityError::Denied(
            slurm_wasm_sdk::types::Capability::Cpuset,
        ))
    });
    let mut step = fixtures::step(5, 1);
    step.cores = (&Bitmap::from_bits(2, [0])).into();
    let e = P::pre_launch_priv(step, fixtures::task(0, 102)).unwrap_err();
    assert_eq!(e.message, "capability cpuset denied (not granted)");
}
