//! The compiled-component cache: reused by a later host, and a damaged
//! entry is recompiled and replaced, never trusted.

use slurm_wasm_host::{fixtures, Host, HostOptions, PluginSettings, PluginSource, PriorityPlugin};

fn load_and_call(cache: &std::path::Path) -> u32 {
    let host = Host::new(HostOptions {
        cache_dir: Some(cache.to_path_buf()),
        ..HostOptions::default()
    })
    .unwrap();
    let plugin = PriorityPlugin::load(
        &host,
        &PluginSource::Bundled("priority/basic".into()),
        PluginSettings::default(),
    )
    .unwrap();
    plugin.init(&fixtures::priority_config()).unwrap();
    plugin.set(0xffff_0000, &fixtures::job(1)).unwrap()
}

fn entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

#[test]
fn a_second_host_reuses_the_cache_entry() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(load_and_call(dir.path()), 4294901759);
    let first = entries(dir.path());
    assert_eq!(first.len(), 1, "{first:?}");
    let written = std::fs::metadata(&first[0]).unwrap().modified().unwrap();
    assert_eq!(load_and_call(dir.path()), 4294901759);
    assert_eq!(entries(dir.path()), first);
    assert_eq!(
        std::fs::metadata(&first[0]).unwrap().modified().unwrap(),
        written,
        "not rewritten"
    );
}

#[test]
fn a_damaged_entry_is_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    load_and_call(dir.path());
    let entry = entries(dir.path()).remove(0);
    let good = std::fs::read(&entry).unwrap();
    std::fs::write(&entry, b"not a compiled component").unwrap();
    assert_eq!(
        load_and_call(dir.path()),
        4294901759,
        "the host still serves"
    );
    assert_eq!(
        std::fs::read(&entry).unwrap(),
        good,
        "the entry was replaced by a fresh compilation"
    );
}
