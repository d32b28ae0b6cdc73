//! The compiled-component cache: reused by a later host; an entry that is
//! damaged, or is another component's, is recompiled and replaced, never
//! run; a directory others could write is refused.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use slurm_wasm_host::{fixtures, Host, HostOptions, PluginSettings, PluginSource, PriorityPlugin};

fn host(cache: &Path) -> Host {
    Host::new(HostOptions {
        cache_dir: Some(cache.to_path_buf()),
        ..slurm_wasm_bundled::host_options()
    })
    .unwrap()
}

fn load(cache: &Path, plugin_type: &str) -> PriorityPlugin {
    PriorityPlugin::load(
        &host(cache),
        &PluginSource::Bundled(plugin_type.into()),
        PluginSettings::default(),
    )
    .unwrap()
}

fn load_and_call(cache: &Path) -> u32 {
    let plugin = load(cache, "priority/basic");
    plugin.init(&fixtures::priority_config()).unwrap();
    plugin.set(0xffff_0000, &fixtures::job(1)).unwrap()
}

/// The cache entries (the key file aside), sorted.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect();
    entries.sort();
    entries
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
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
    assert!(
        std::fs::read(&entry).unwrap() == good,
        "the entry was replaced by a fresh compilation"
    );
}

/// Issue 26, class 8: a corrupted artifact (wasmtime's header intact, its
/// code changed) killed the host with SIGSEGV. Now every entry carries a
/// tag over its bytes, checked before wasmtime sees them: a flipped byte
/// anywhere, or a cut, is recompiled and replaced.
#[test]
fn a_flipped_or_truncated_entry_is_recompiled_not_run() {
    let dir = tempfile::tempdir().unwrap();
    load_and_call(dir.path());
    let entry = entries(dir.path()).remove(0);
    let good = std::fs::read(&entry).unwrap();
    let len = good.len();
    let mut damaged = Vec::new();
    for at in [8, 40, len / 4, len / 2, 3 * len / 4, len - 1] {
        let mut bytes = good.clone();
        bytes[at] ^= 0xff;
        damaged.push((format!("byte {at} flipped"), bytes));
    }
    for cut in [0, 8, 40, len / 2, len - 1] {
        damaged.push((format!("cut to {cut} bytes"), good[..cut].to_vec()));
    }
    for (what, bytes) in damaged {
        std::fs::write(&entry, bytes).unwrap();
        assert_eq!(load_and_call(dir.path()), 4294901759, "{what}");
        assert!(std::fs::read(&entry).unwrap() == good, "{what}: replaced");
    }
}

/// Issue 26, class 8: priority/multifactor's entry copied over bundled
/// priority/basic's ran in its place. The tag binds an entry to its
/// component's digest, so the copy is refused and basic is compiled again.
#[test]
fn another_plugins_entry_copied_over_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    load_and_call(dir.path());
    let basic_entry = entries(dir.path()).remove(0);
    let basic = std::fs::read(&basic_entry).unwrap();
    load(dir.path(), "priority/multifactor");
    let multifactor_entry = entries(dir.path())
        .into_iter()
        .find(|e| *e != basic_entry)
        .expect("a second entry");
    std::fs::copy(&multifactor_entry, &basic_entry).unwrap();

    let plugin = load(dir.path(), "priority/basic");
    assert_eq!(plugin.identity().plugin_type, "priority/basic");
    plugin.init(&fixtures::priority_config()).unwrap();
    assert_eq!(
        plugin.set(0xffff_0000, &fixtures::job(1)).unwrap(),
        4294901759
    );
    assert!(std::fs::read(&basic_entry).unwrap() == basic, "replaced");
}

/// Issue 26, class 8: an entry sealed under another key (another cache's
/// entry, or one made by whoever replaced the key) is not run either.
#[test]
fn an_entry_sealed_with_another_key_is_recompiled() {
    let ours = tempfile::tempdir().unwrap();
    let theirs = tempfile::tempdir().unwrap();
    load_and_call(ours.path());
    load_and_call(theirs.path());
    let entry = entries(ours.path()).remove(0);
    let good = std::fs::read(&entry).unwrap();
    let foreign = std::fs::read(entries(theirs.path()).remove(0)).unwrap();
    assert!(good != foreign, "each cache has its own key");
    std::fs::write(&entry, foreign).unwrap();
    assert_eq!(load_and_call(ours.path()), 4294901759);
    assert!(std::fs::read(&entry).unwrap() == good, "replaced");
}

fn refused(cache: &Path) -> String {
    match Host::new(HostOptions {
        cache_dir: Some(cache.to_path_buf()),
        ..slurm_wasm_bundled::host_options()
    }) {
        Ok(_) => panic!("{} was accepted", cache.display()),
        Err(e) => e.to_string(),
    }
}

/// Issue 26, class 8: a cache directory that group or others may write was
/// used, so anyone could plant native code. It is refused when the host is
/// made (not at a job's first call), naming the directory and the fix.
#[test]
fn a_directory_others_may_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for mode in [0o777, 0o770, 0o702] {
        set_mode(dir.path(), mode);
        let message = refused(dir.path());
        assert_eq!(
            message,
            format!(
                "compiled-component cache {0}: is writable by group or others (mode {mode:04o}), \
                 who could plant compiled code the host would run; run `chmod go-w {0}` or use \
                 another cache directory",
                dir.path().display()
            )
        );
    }
    set_mode(dir.path(), 0o755);
    assert_eq!(load_and_call(dir.path()), 4294901759);
}

#[test]
fn a_missing_directory_is_made_private() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("a").join("cache");
    host(&cache);
    let mode = std::fs::metadata(&cache).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let key = std::fs::metadata(cache.join("key")).unwrap();
    assert_eq!((key.len(), key.permissions().mode() & 0o777), (32, 0o600));
}

/// Issue 26, class 8: anyone who can read the key can forge entries.
#[test]
fn a_key_others_may_read_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    host(dir.path());
    let key = dir.path().join("key");
    set_mode(&key, 0o644);
    let message = refused(dir.path());
    assert!(
        message.starts_with(&format!("compiled-component cache {}:", key.display()))
            && message.contains(&format!("chmod 600 {}", key.display())),
        "{message}"
    );
    std::fs::write(&key, b"short").unwrap();
    set_mode(&key, 0o600);
    assert!(refused(dir.path()).contains("holds 5 bytes, not 32"));
    std::fs::remove_file(&key).unwrap();
    assert_eq!(load_and_call(dir.path()), 4294901759, "a new key is made");
}

/// Issue 26, class 8: a directory another user owns is refused (its owner
/// could write it). Run as root, the test gives its directory to `nobody`;
/// otherwise it uses `/`, which root owns.
#[test]
fn a_directory_another_user_owns_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: geteuid has no preconditions.
    let cache = if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(dir.path(), Some(65534), None).unwrap();
        dir.path().to_path_buf()
    } else {
        PathBuf::from("/")
    };
    let message = refused(&cache);
    assert!(
        message.contains("is owned by uid") && message.contains("chown"),
        "{message}"
    );
}
