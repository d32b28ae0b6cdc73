//! State files: written atomically with a checked header; a truncated,
//! corrupted, oversized or foreign file (another plugin type, or another
//! component claiming the type) is refused and nothing is half-loaded.

use slurm_wasm_host::kinds::priority::AssociationUpdate;
use slurm_wasm_host::state::{ComponentDigest, ComponentId, StateError};
use slurm_wasm_host::types::{Association, Shares, TresAmount};
use slurm_wasm_host::{
    fixtures, CallError, GresPlugin, Host, Limits, PluginSettings, PluginSource, PriorityPlugin,
    StateFileError,
};

fn basic(host: &Host) -> PriorityPlugin {
    load(
        host,
        PluginSource::Bundled("priority/basic".into()),
        PluginSettings::default(),
    )
}

fn load(host: &Host, source: PluginSource, settings: PluginSettings) -> PriorityPlugin {
    let plugin = PriorityPlugin::load(host, &source, settings).expect("load");
    plugin.init(&fixtures::priority_config()).expect("init");
    plugin
}

/// The bundled priority/basic's bytes.
fn basic_bytes() -> &'static [u8] {
    slurm_wasm_bundled::find("priority/basic")
        .expect("bundled")
        .bytes
}

/// A third-party build that claims bundled priority/basic's type: the same
/// component with a custom section appended, so another digest and not
/// bundled.
fn impostor() -> PluginSource {
    let mut bytes = basic_bytes().to_vec();
    // Custom section (id 0): size 6, name of 5 bytes, no payload.
    bytes.extend_from_slice(b"\x00\x06\x05extra");
    PluginSource::Bytes {
        name: "impostor.wasm".into(),
        bytes,
    }
}

fn digest_of(source: &PluginSource) -> ComponentDigest {
    match source {
        PluginSource::Bytes { bytes, .. } => ComponentDigest::of(bytes),
        _ => ComponentDigest::of(basic_bytes()),
    }
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
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
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
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
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
    let writer = ComponentId {
        digest: ComponentDigest::of(basic_bytes()),
        bundled: true,
    };
    let foreign =
        slurm_wasm_host::state::encode("select/linear", 0x160508, writer, b"whatever").unwrap();
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
    let writer = ComponentId {
        digest: ComponentDigest::of(basic_bytes()),
        bundled: true,
    };
    slurm_wasm_host::state::write_state(
        &path,
        "priority/basic",
        0x160508,
        writer,
        b"PBAS\x09\x00junk",
    )
    .unwrap();
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let plugin = basic(&host);
    let before = plugin.state_save().unwrap();
    let err = plugin.restore_state_file(&path).unwrap_err();
    assert!(err.to_string().contains("state-restore"), "{err}");
    assert_eq!(plugin.state_save().unwrap(), before);
}

/// Issue 26, class 14: a third-party plugin claiming bundled priority/basic's
/// type wrote a state file that the bundled plugin then restored (the
/// header named only the type). Now the header names the writing component
/// and the bundled plugin refuses the file, naming both digests and the type.
#[test]
fn a_file_written_by_another_component_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let impostor_source = impostor();
    let impostor = load(&host, impostor_source.clone(), PluginSettings::default());
    assert_eq!(impostor.identity().plugin_type, "priority/basic");
    with_tree(&impostor);
    impostor.save_state_file(&path).unwrap();

    let genuine = basic(&host);
    let e = refused(&genuine, &path);
    assert!(matches!(e, StateError::ForeignComponent { .. }), "{e:?}");
    let message = e.to_string();
    let theirs = digest_of(&impostor_source).to_string();
    let ours = ComponentDigest::of(basic_bytes()).to_string();
    assert_ne!(theirs, ours);
    for part in [
        theirs.as_str(),
        &ours,
        "priority/basic",
        "accept_state_from",
    ] {
        assert!(message.contains(part), "{part} missing from: {message}");
    }

    // The other way round too: the impostor does not get the bundled
    // plugin's state.
    genuine.save_state_file(&path).unwrap();
    let e = refused(&impostor, &path);
    assert!(matches!(e, StateError::ForeignComponent { .. }), "{e:?}");
}

/// Issue 26, class 14: a site replacing its own .wasm lists the old build's
/// digest, and the new build restores the old one's state.
#[test]
fn a_listed_digest_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let old_build = impostor();
    let old = load(&host, old_build.clone(), PluginSettings::default());
    with_tree(&old);
    old.save_state_file(&path).unwrap();

    let new_build = PluginSource::Bytes {
        name: "new.wasm".into(),
        bytes: basic_bytes().to_vec(),
    };
    let refusing = load(&host, new_build.clone(), PluginSettings::default());
    refused(&refusing, &path);
    let accepting = load(
        &host,
        new_build,
        PluginSettings {
            accept_state_from: vec![digest_of(&old_build)],
            ..PluginSettings::default()
        },
    );
    accepting.restore_state_file(&path).unwrap();
    assert_eq!(accepting.state_save().unwrap(), old.state_save().unwrap());
}

/// Issue 26, class 14: a bundled plugin restores the file a bundled plugin
/// of its type wrote under another host build (another digest).
#[test]
fn bundled_restores_what_an_earlier_bundled_build_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let saved = basic(&host);
    with_tree(&saved);
    let blob = saved.state_save().unwrap();
    let earlier_bundled = ComponentId {
        digest: ComponentDigest([0x5a; 32]),
        bundled: true,
    };
    let identity = saved.identity();
    slurm_wasm_host::state::write_state(
        &path,
        &identity.plugin_type,
        identity.plugin_version,
        earlier_bundled,
        &blob,
    )
    .unwrap();
    let restored = basic(&host);
    restored.restore_state_file(&path).unwrap();
    assert_eq!(restored.state_save().unwrap(), blob);
    let impostor = load(&host, impostor(), PluginSettings::default());
    let e = refused(&impostor, &path);
    assert!(matches!(e, StateError::ForeignComponent { .. }), "{e:?}");
}

#[test]
fn a_version_1_file_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let plugin = basic(&host);
    plugin.save_state_file(&path).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8] = 1;
    std::fs::write(&path, bytes).unwrap();
    let e = refused(&plugin, &path);
    assert!(
        e.to_string()
            .contains("save the state again with this host"),
        "{e}"
    );
}

fn bounded(state_bytes: usize) -> PluginSettings {
    PluginSettings {
        limits: Limits {
            state_bytes,
            ..Limits::default()
        },
        ..PluginSettings::default()
    }
}

fn too_large(e: CallError) -> (String, &'static str, usize, usize) {
    match e {
        CallError::StateTooLarge {
            plugin,
            function,
            bytes,
            limit_bytes,
        } => (plugin, function, bytes, limit_bytes),
        other => panic!("expected StateTooLarge, got {other}"),
    }
}

/// Issue 26, class 11: state blobs were kept for restarts (and written to
/// files) whatever their size. Now a blob over `Limits::state_bytes` is
/// refused, naming plugin, function and the bound, and nothing is kept.
#[test]
fn state_over_the_bound_is_neither_kept_nor_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state");
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let unbounded = basic(&host);
    with_tree(&unbounded);
    let blob = unbounded.state_save().unwrap();
    let limit = blob.len() - 1;

    let plugin = load(
        &host,
        PluginSource::Bundled("priority/basic".into()),
        bounded(limit),
    );
    with_tree(&plugin);
    let e = plugin.state_save().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "plugin priority/basic: state-save: {} bytes of state, more than the limit of \
             {limit} bytes the host keeps (raise `state_mb` in the plugin's limits)",
            blob.len()
        )
    );
    assert!(matches!(
        plugin.save_state_file(&path),
        Err(StateFileError::Call(CallError::StateTooLarge { .. }))
    ));
    assert!(!path.exists(), "nothing written");

    // Handed in: refused before the plugin sees it.
    let fresh = load(
        &host,
        PluginSource::Bundled("priority/basic".into()),
        bounded(limit),
    );
    let before = fresh.state_save().unwrap();
    assert_eq!(
        too_large(fresh.state_restore(&blob).unwrap_err()),
        ("priority/basic".into(), "state-restore", blob.len(), limit)
    );
    assert_eq!(fresh.state_save().unwrap(), before);

    // From a file: refused on its header.
    unbounded.save_state_file(&path).unwrap();
    let e = refused(&fresh, &path);
    assert!(
        matches!(e, StateError::TooLarge { bytes, limit: l, .. }
            if bytes == blob.len() as u64 && l == limit as u64),
        "{e:?}"
    );
    assert_eq!(fresh.state_save().unwrap(), before);
}

/// Issue 26, class 11: `recv-stepd` bytes are kept for restarts too, under
/// the same bound.
#[test]
fn recv_stepd_over_the_bound_is_refused() {
    let host = Host::new(slurm_wasm_bundled::host_options()).unwrap();
    let plugin = GresPlugin::load(
        &host,
        &PluginSource::Bundled("gres/gpu".into()),
        bounded(1024),
    )
    .expect("load");
    assert_eq!(
        too_large(plugin.recv_stepd(&[0; 1025]).unwrap_err()),
        ("gres/gpu".into(), "recv-stepd", 1025, 1024)
    );
}
