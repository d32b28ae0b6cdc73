//! priority/basic through the wasm component
//! (src/plugins/priority/basic/priority_basic.c).

use slurm_wasm_host::kinds::priority::{AssociationUpdate, FactorsRequest, QosUpdate};
use slurm_wasm_host::types::{Association, Qos, Shares, TresAmount};
use slurm_wasm_host::{fixtures, CallError, Host, PluginSettings, PluginSource, PriorityPlugin};

fn basic() -> PriorityPlugin {
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let plugin = PriorityPlugin::load(
        &host,
        &PluginSource::Bundled("priority/basic".into()),
        PluginSettings::default(),
    )
    .expect("load");
    plugin.init(&fixtures::priority_config()).expect("init");
    plugin
}

#[test]
fn identity_is_slurms() {
    let id = basic().identity();
    assert_eq!(id.plugin_type, "priority/basic");
    assert_eq!(id.plugin_name, "Priority BASIC plugin");
    assert_eq!(
        id.plugin_version, 0x160508,
        "Slurm 22.05.8 by the version rule of common/plugin.c"
    );
}

#[test]
fn fifo_sequence_with_nice() {
    // priority_p_set (priority_basic.c) with the controller's lowest_prio
    // (set_job_prio, src/slurmctld/job_mgr.c): first job nice 0 ->
    // 4294901759; second -> 4294901758; third --nice=100 -> 4294901657;
    // next 4294901756; nice -100 -> 4294901855.
    let plugin = basic();
    let mut lowest = 0xffff_0000;
    let got: Vec<u32> = [0, 0, 100, 0, -100]
        .iter()
        .enumerate()
        .map(|(i, &nice)| {
            let mut job = fixtures::job(i as u32 + 1);
            job.details.nice = nice;
            plugin.assign(&mut lowest, &job).expect("set")
        })
        .collect();
    assert_eq!(
        got,
        vec![4294901759, 4294901758, 4294901657, 4294901756, 4294901855]
    );
}

#[test]
fn direct_priority_is_kept_and_does_not_move_the_fifo() {
    let plugin = basic();
    let mut lowest = 0xffff_0000;
    let mut direct = fixtures::job(1);
    direct.priority = 999;
    direct.direct_set_priority = true;
    assert_eq!(plugin.assign(&mut lowest, &direct).unwrap(), 999);
    assert_eq!(
        lowest, 0xffff_0000,
        "Slurm 22.05.8 src/slurmctld/job_mgr.c `set_job_prio`: the controller ignores direct priorities for lowest_prio"
    );
    assert_eq!(
        plugin.assign(&mut lowest, &fixtures::job(2)).unwrap(),
        4294901759
    );
}

#[test]
fn priority_never_drops_below_one() {
    let plugin = basic();
    assert_eq!(plugin.set(1, &fixtures::job(1)).unwrap(), 1);
    let mut nice = fixtures::job(2);
    nice.details.nice = 10_000;
    assert_eq!(
        plugin.set(5, &nice).unwrap(),
        4,
        "positive nice larger than the priority is not applied"
    );
}

#[test]
fn recover_boosts_only_from_one_million() {
    // Slurm 22.05.8 src/slurmctld/job_mgr.c `sync_job_priorities`: basic adds boost to non-zero, non-direct priorities only if boost >= 1,000,000.
    let plugin = basic();
    let mut held = fixtures::job(1);
    held.priority = 0;
    let mut normal = fixtures::job(2);
    normal.priority = 100;
    let mut direct = fixtures::job(3);
    direct.priority = 50;
    direct.direct_set_priority = true;
    let jobs = [held, normal, direct];
    assert_eq!(plugin.recover(999_999, &jobs).unwrap(), (0, vec![]));
    assert_eq!(
        plugin.recover(2_000_000, &jobs).unwrap(),
        (2_000_000, vec![(2, 2_000_100)])
    );
}

#[test]
fn sprio_list_is_empty_and_usage_is_untouched() {
    let plugin = basic();
    let request = FactorsRequest {
        job_ids: vec![],
        user_ids: vec![],
        partitions: vec![],
    };
    assert!(plugin
        .get_priority_factors_list(&[fixtures::job(1)], &request, 0)
        .unwrap()
        .is_empty());
    assert!(plugin.calculate(&[], &[1]).unwrap().is_empty());
    plugin
        .reconfig(&fixtures::priority_config(), true, &[])
        .unwrap();
    let err = plugin.set_assoc_usage(42).unwrap_err();
    assert!(
        matches!(err, CallError::Plugin { code: 22, .. }),
        "unknown association is EINVAL: {err:?}"
    );
}

fn association(id: u32, parent: Option<u32>, cpu_secs: u64) -> Association {
    Association {
        id,
        parent_id: parent,
        account: "acct".into(),
        user: None,
        user_id: None,
        partition: None,
        priority: None,
        shares: Shares::Raw(1),
        usage_raw: 0.0,
        usage_tres_raw: vec![],
        grp_used_tres_run_secs: vec![TresAmount {
            name: "cpu".into(),
            count: cpu_secs,
        }],
    }
}

fn qos(cpu_secs: u64) -> QosUpdate {
    QosUpdate::Upsert(Qos {
        name: "normal".into(),
        id: 1,
        priority: 0,
        usage_factor: 1.0,
        no_decay: false,
        grp_used_tres_run_secs: vec![TresAmount {
            name: "cpu".into(),
            count: cpu_secs,
        }],
    })
}

#[test]
fn job_end_releases_reserved_run_seconds_up_the_tree() {
    // Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_job_end`: job_end subtracts tres_alloc x time_limit x 60 from the QOS and
    // every association up the tree, clamping underflow to 0. A job with 2 CPUs
    // and a 20-minute limit reserved 2400 CPU-seconds.
    let plugin = basic();
    plugin
        .update_associations(&[
            AssociationUpdate::Upsert(association(1, None, 10_000)),
            AssociationUpdate::Upsert(association(2, Some(1), 1_000)),
        ])
        .unwrap();
    plugin.update_qos(&[qos(3_000)]).unwrap();
    let mut job = fixtures::job(7);
    job.assoc_id = 2;
    job.qos = Some("normal".into());
    job.time_limit = Some(20);
    job.tres_allocated = vec![TresAmount {
        name: "cpu".into(),
        count: 2,
    }];
    plugin.job_end(&job).unwrap();
    // The plugin's ledger is what it saves; it must equal a ledger built with
    // the released values: 10000-2400, max(1000-2400, 0), 3000-2400.
    let expected = basic();
    expected
        .update_associations(&[
            AssociationUpdate::Upsert(association(1, None, 7_600)),
            AssociationUpdate::Upsert(association(2, Some(1), 0)),
        ])
        .unwrap();
    expected.update_qos(&[qos(600)]).unwrap();
    assert_eq!(plugin.state_save().unwrap(), expected.state_save().unwrap());
    assert_eq!(
        plugin.set_assoc_usage(1).unwrap().usage_norm,
        0.0,
        "basic computes no usage"
    );
}
