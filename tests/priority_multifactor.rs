//! priority/multifactor through the wasm component
//! (src/plugins/priority/multifactor), in virtual time.

use std::sync::Arc;

use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::kinds::priority::{
    AssociationUpdate, FactorsRequest, PriorityConfig, QosUpdate,
};
use slurm_wasm_host::types::{Job, JobState, KeyValue, TresAmount};
use slurm_wasm_host::{
    fixtures, CallError, Host, HostOptions, PluginSettings, PluginSource, PriorityPlugin, Services,
};

const NOW: i64 = 1_700_000_000;

/// The weights of a hand-computed case of Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`'s
/// formula, classic fair-share (the `priority_p_set_assoc_usage` tree of test24.1 gives User4 a
/// fair-share factor of exactly 0.5).
const VECTOR_WEIGHTS: &[(&str, &str)] = &[
    ("AccountingStorageType", "accounting_storage/slurmdbd"),
    ("PriorityFlags", "NO_FAIR_TREE"),
    ("PriorityWeightAge", "1000"),
    ("PriorityMaxAge", "7-0"),
    ("PriorityWeightFairshare", "10000"),
    ("PriorityWeightJobSize", "1000"),
    ("PriorityWeightPartition", "1000"),
    ("PriorityWeightQOS", "2000"),
    ("PriorityWeightTRES", "CPU=2000"),
];

/// A 100-node, 1000-CPU cluster with one partition and `options`.
fn config(options: &[(&str, &str)]) -> PriorityConfig {
    let cpu = |count| {
        vec![TresAmount {
            name: "cpu".into(),
            count,
        }]
    };
    let mut config = fixtures::priority_config();
    config.cluster.raw = options
        .iter()
        .map(|(key, value)| KeyValue {
            key: (*key).into(),
            value: (*value).into(),
        })
        .collect();
    config.partitions = vec![fixtures::partition(0, "debug", 100)];
    config.partition_tres = vec![cpu(1000)];
    config.cluster_cpus = 1000;
    config.cluster_nodes = 100;
    config.cluster_tres = cpu(1000);
    config
}

/// The Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage` tree (classic_fair_share.shtml, test24.1): root usage 100.
fn classic_tree() -> Vec<AssociationUpdate> {
    let mut out = vec![fixtures::association(1, None, "root", None, 1)];
    for (id, parent, name, shares) in [
        (2, 1, "AccountA", 40),
        (3, 2, "AccountB", 30),
        (4, 2, "AccountC", 10),
        (5, 1, "AccountD", 60),
        (6, 5, "AccountE", 25),
        (7, 5, "AccountF", 35),
        (8, 1, "AccountG", 0),
    ] {
        out.push(fixtures::association(id, Some(parent), name, None, shares));
    }
    for (id, parent, account, user, shares, usage) in [
        (11, 3, "AccountB", "User1", 1, 20.0),
        (12, 4, "AccountC", "User2", 1, 25.0),
        (13, 4, "AccountC", "User3", 1, 0.0),
        (14, 6, "AccountE", "User4", 1, 25.0),
        (15, 7, "AccountF", "User5", 1, 0.0),
        (16, 8, "AccountG", "User6", 0, 30.0),
    ] {
        let mut a = fixtures::association(id, Some(parent), account, Some(user), shares);
        a.usage_raw = usage;
        out.push(a);
    }
    out.into_iter().map(AssociationUpdate::Upsert).collect()
}

/// The bundled plugin on a virtual clock at `NOW`, initialised with
/// `options`, QOS normal (50) and high (100), and the test24.1 tree.
fn multifactor(options: &[(&str, &str)]) -> (Arc<VirtualClock>, PriorityPlugin) {
    let clock = Arc::new(VirtualClock::new(NOW));
    let host = Host::new(HostOptions {
        services: Services {
            clock: clock.clone(),
            ..Services::default()
        },
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    let plugin = PriorityPlugin::load(
        &host,
        &PluginSource::Bundled("priority/multifactor".into()),
        PluginSettings::default(),
    )
    .expect("load");
    plugin.init(&config(options)).expect("init");
    plugin
        .update_qos(&[
            QosUpdate::Upsert(fixtures::qos(1, "normal", 50)),
            QosUpdate::Upsert(fixtures::qos(2, "high", 100)),
        ])
        .expect("QOS");
    plugin
        .update_associations(&classic_tree())
        .expect("associations");
    (clock, plugin)
}

/// The job of the hand-computed case of Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`:
/// eligible for a day, 10 nodes and 100 CPUs of 100/1000,
/// QOS priority 50 of 100, in User4's association.
fn vector_job() -> Job {
    let mut job = fixtures::job(1);
    job.assoc_id = 14;
    job.qos = Some("normal".into());
    job.priority = 1;
    job.details.min_nodes = 10;
    job.details.min_cpus = 100;
    job.details.submit_time = NOW - 86_400;
    job.details.begin_time = NOW - 86_400;
    job.details.accrue_time = NOW - 86_400;
    job.tres_requested = vec![TresAmount {
        name: "cpu".into(),
        count: 100,
    }];
    job
}

#[test]
fn identity_is_slurms() {
    let (_, plugin) = multifactor(VECTOR_WEIGHTS);
    let id = plugin.identity();
    assert_eq!(id.plugin_type, "priority/multifactor");
    assert_eq!(id.plugin_name, "Priority MULTIFACTOR plugin");
    assert_eq!(
        id.plugin_version, 0x160508,
        "Slurm 22.05.8 (common/plugin.c)"
    );
}

#[test]
fn synthetic_vector() {
    // Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`: 142.857 + 5000 + 100 + 1000 + 1000 + 200 = 7442.857 -> 7442.
    let (_, plugin) = multifactor(VECTOR_WEIGHTS);
    assert_eq!(plugin.set(0xffff_0000, &vector_job()).unwrap(), 7442);
    assert_eq!(
        plugin.calculate(&[], &[vector_job().job_id]).unwrap(),
        vec![(1, 7442)]
    );
    let request = FactorsRequest {
        job_ids: vec![],
        user_ids: vec![],
        partitions: vec![],
    };
    let rows = plugin
        .get_priority_factors_list(&[vector_job()], &request, 0)
        .unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(format!("{:.3}", r.age), "142.857");
    assert_eq!(
        (r.fair_share, r.job_size, r.partition_factor, r.qos_factor),
        (5000.0, 100.0, 1000.0, 1000.0)
    );
    assert_eq!(r.tres, vec![("cpu".to_string(), 200.0)]);
    assert_eq!((r.partition.as_str(), r.priority), ("debug", 7442));
}

#[test]
fn classic_test24_1_vector() {
    // Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare
    let (_, plugin) = multifactor(VECTOR_WEIGHTS);
    let usages = plugin.association_usages().unwrap();
    let line = |id: u32| {
        let u = usages.iter().find(|u| u.id == id).expect("listed");
        format!(
            "{:.6}|{}|{:.6}|{:.6}|{:.6}",
            u.shares_norm, u.usage_raw, u.usage_norm, u.usage_effective, u.fair_share
        )
    };
    for (id, expected) in [
        (
            11,
            "AccountB|User1|1|0.300000|20|0.200000|0.387500|0.408479",
        ),
        (
            12,
            "AccountC|User2|1|0.050000|25|0.250000|0.275000|0.022097",
        ),
        (13, "AccountC|User3|1|0.050000|0|0.000000|0.150000|0.125000"),
        (
            14,
            "AccountE|User4|1|0.250000|25|0.250000|0.250000|0.500000",
        ),
        (15, "AccountF|User5|1|0.350000|0|0.000000|0.145833|0.749154"),
        (
            16,
            "AccountG|User6|0|0.000000|30|0.300000|0.300000|0.000000",
        ),
    ] {
        let figures = expected.splitn(4, '|').nth(3).unwrap();
        assert_eq!(line(id), figures, "{expected}");
    }
    let user2 = plugin.set_assoc_usage(12).unwrap();
    assert_eq!(format!("{:.6}", user2.fair_share), "0.022097");
}

#[test]
fn decay_in_virtual_time() {
    // One half-life of 7 days leaves 0.50007340 of the usage (Slurm's
    // approximation of the decay factor).
    let (clock, plugin) = multifactor(VECTOR_WEIGHTS);
    plugin.calculate(&[], &[]).unwrap();
    clock.set(NOW + 7 * 86_400);
    plugin.calculate(&[], &[]).unwrap();
    let root = plugin.set_assoc_usage(1).unwrap();
    assert_eq!(format!("{:.8}", root.usage_raw / 100.0), "0.50007340");
}

#[test]
fn running_usage_is_charged_and_survives_a_restart() {
    let (clock, plugin) = multifactor(VECTOR_WEIGHTS);
    let mut job = vector_job();
    job.job_id = 2;
    job.state = JobState::Running;
    job.start_time = NOW;
    job.end_time = NOW + 3600;
    job.tres_allocated = vec![TresAmount {
        name: "cpu".into(),
        count: 10,
    }];
    plugin.calculate(&[job.clone()], &[]).unwrap();
    clock.set(NOW + 300);
    plugin.calculate(&[job], &[]).unwrap();
    // Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_apply_new_usage`: 10 CPUs for a 300 s period add 2998.97 CPU-s.
    let df: f64 = 1.0 - 0.693 / (7.0 * 86_400.0);
    let user4 = plugin.set_assoc_usage(14).unwrap();
    assert_eq!(
        format!("{:.2}", user4.usage_raw - 25.0 * df.powf(300.0)),
        "2998.97"
    );
    let saved = plugin.state_save().unwrap();
    let (_, fresh) = multifactor(VECTOR_WEIGHTS);
    fresh.state_restore(&saved).unwrap();
    assert_eq!(
        fresh.set_assoc_usage(14).unwrap().usage_raw,
        user4.usage_raw
    );
    assert!(matches!(
        fresh.state_restore(b"\xffgarbage").unwrap_err(),
        CallError::Plugin { code: 22, .. }
    ));
}

#[test]
fn malformed_settings_are_einval_naming_the_key() {
    let (_, plugin) = multifactor(VECTOR_WEIGHTS);
    let err = plugin
        .init(&config(&[("PriorityWeightTRES", "CPU=lots")]))
        .unwrap_err();
    match err {
        CallError::Plugin { code, message, .. } => {
            assert_eq!(code, 22);
            assert!(message.contains("PriorityWeightTRES=CPU=lots"), "{message}");
        }
        other => panic!("expected a plugin error, got {other:?}"),
    }
}
