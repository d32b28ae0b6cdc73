//! task/none through every task function (src/plugins/task/none/task_none.c:
//! every hook is a logging no-op returning SLURM_SUCCESS).

use slurm_wasm_host::{fixtures, Host, PluginSettings, PluginSource, TaskPlugin};

fn task_none() -> TaskPlugin {
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let plugin = TaskPlugin::load(
        &host,
        &PluginSource::Bundled("task/none".into()),
        PluginSettings::default(),
    )
    .expect("load");
    plugin.init(&fixtures::task_config()).expect("init");
    plugin
}

#[test]
fn identity_is_slurms() {
    let id = task_none().identity();
    assert_eq!(id.plugin_type, "task/none");
    assert_eq!(id.plugin_name, "task NONE plugin");
    assert!(id.required_capabilities.is_empty());
}

#[test]
fn launch_and_batch_requests_keep_the_requested_binding() {
    let plugin = task_none();
    let mut launch = fixtures::launch_request(3, 4, 4);
    launch.cpu_bind_type = 0x4 | 0x1; // TO_CORES | VERBOSE (Slurm 22.05.8 slurm/slurm.h `cpu_bind_type_t`)
    launch.cpu_bind = "0x1,0x2".into();
    let binding = plugin.slurmd_launch_request(&launch).unwrap();
    assert_eq!(
        (binding.cpu_bind_type, binding.cpu_bind.as_str()),
        (0x5, "0x1,0x2")
    );
    assert!(binding.messages.is_empty());
    let mut batch = fixtures::batch_request(3, 4);
    batch.cpu_bind_type = 0x100;
    batch.cpu_bind = "0xF".into();
    let binding = plugin.slurmd_batch_request(&batch).unwrap();
    assert_eq!(
        (binding.cpu_bind_type, binding.cpu_bind.as_str()),
        (0x100, "0xF")
    );
}

#[test]
fn every_other_hook_succeeds_without_binding() {
    let plugin = task_none();
    let launch = fixtures::launch_request(3, 2, 4);
    let mut step = fixtures::step(3, 0);
    step.task_pids = vec![100, 101];
    let task = fixtures::task(0, 100);
    plugin.slurmd_reserve_resources(&launch).unwrap();
    plugin.slurmd_suspend_job(3).unwrap();
    plugin.slurmd_resume_job(3).unwrap();
    plugin.pre_setuid(&step).unwrap();
    plugin.pre_launch_priv(&step, &task).unwrap();
    plugin.pre_launch(&step, &task).unwrap();
    plugin.post_term(&step, &task).unwrap();
    plugin.post_step(&step).unwrap();
    plugin.add_pid(100).unwrap();
    plugin.update_mem_limit(&step, 1000, 500).unwrap();
    plugin.slurmd_release_resources(3).unwrap();
    plugin.fini().unwrap();
}
