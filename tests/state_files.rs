//! State files: written atomically with a checked header; a truncated,
//! corrupted or foreign file is refused and nothing is half-loaded.

use slurm_wasm_host::kinds::priority::AssociationUpdate;
use slurm_wasm_host::state::StateError;
use slurm_wasm_host::types::{Association, Shares, TresAmount};
use slurm_wasm_host::{
    fixtures, Host, HostOptions, PluginSettings, PluginSource, PriorityPlugin, StateFileError,
};

fn basic(host: &Host) -> PriorityPlugin {
    let plugin = PriorityPlugin::load(
        host,
        &PluginSource::Bundled("priority/basic".into()),
        PluginSettings::default(),
    )
    .expect("load");
    plugin.init(&fixtures::priority_config()).expect("init");
    plugin
}

fn with_tree(plugin: &PriorityPlugin) {
    let assoc = Association {
        id: 5,
        parent_id: None,
        account: "physics".into(),
        user: None,
        user_id: None,
        partition: None,
        priority: None,
        shares: Shares::Raw(10),
        usage_raw: 0.0,
        usage_tres_raw: vec![],
        grp_used_tres_run_secs: vec![TresAmount {
            name: "cpu".into(),
            count: 7_200,
        }],
    };
    plugin
        .update_associations(&[AssociationUpdate::Upsert(assoc)])
        .unwrap();
}

#[test]
fn state_round_trips_through_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("priority_basic.state");
    let host = Host::new(HostOptions::default()).unwrap();
    let a = basic(&host);
    with_tree(&a);
    a.save_state_file(&path).unwrap();
    let b = basic(&host);
    b.restore_state_file(&path).unwrap();
    assert_eq!(b.state_save().unwrap(), a.state_save().unwrap());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file remains: {leftovers:?}"
    );
}

/// A damaged file is refused and the plugin keeps exactly the state it had.
fn refused(plugin: &PriorityPlugin, path: &std::path::Path) -> StateError {
    let before = plugin.state_save().unwrap();
    let err = plugin.restore_state_file(path).unwrap_err();
    assert_eq!(plugin.state_save().unwrap(), before, "nothing half-loaded");
    match err {
        StateFileError::File(e) => e,
        other => panic!("expected a file error, got {other}"),
    }
}

#[test]
fn truncated_flipped_and_foreign_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let host = Host::new(HostOptions::default()).unwrap();
    let saved = basic(&host);
    with_tree(&saved);
    saved.save_state_file(&path).unwrap();
    let good = std::fs::read(&path).unwrap();
    let victim = basic(&host);

    for cut in [0, 4, good.len() / 2, good.len() - 1] {
        std::fs::write(&path, &good[..cut]).unwrap();
        let e = refused(&victim, &path);
        assert!(!e.to_string().is_empty(), "truncated at {cut}");
    }
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x40;
        std::fs::write(&path, &bad).unwrap();
        refused(&victim, &path);
    }
    let foreign = slurm_wasm_host::state::encode("select/linear", 0x160508, b"whatever").unwrap();
    std::fs::write(&path, foreign).unwrap();
    let e = refused(&victim, &path);
    assert!(matches!(e, StateError::ForeignPlugin { .. }), "{e:?}");
    assert!(
        e.to_string().contains("select/linear") && e.to_string().contains("priority/basic"),
        "{e}"
    );
}

#[test]
fn a_valid_header_around_garbage_is_refused_by_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    slurm_wasm_host::state::write_state(&path, "priority/basic", 0x160508, b"PBAS\x09\x00junk")
        .unwrap();
    let host = Host::new(HostOptions::default()).unwrap();
    let plugin = basic(&host);
    let before = plugin.state_save().unwrap();
    let err = plugin.restore_state_file(&path).unwrap_err();
    assert!(err.to_string().contains("state-restore"), "{err}");
    assert_eq!(plugin.state_save().unwrap(), before);
}
