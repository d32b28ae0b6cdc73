//! Issue 26, class 10 and the load messages: what `describe` answers is
//! checked against the contract's rules before anything is taken from it.
//!
//! Before: a type like `task/../../../../tmp/pwned`, types with newlines or
//! escape codes, contract `0.1.0.7` and fifty million required capabilities
//! all loaded; a plugin typed `task` was told it "is a task plugin but was
//! loaded into the task slot"; a plugin requiring a capability its kind
//! cannot import was told to grant it. task/hostile_runtime describes
//! itself by the host's clock (see its `disguise` module).

use slurm_wasm_host::{Capability, Grants, LoadError, PluginSettings, TaskPlugin};

use super::assert_names;
use super::runtime;

/// Loads task/hostile_runtime wearing the disguise of clock value `at`.
fn load_at(at: i64, grants: Grants) -> Result<TaskPlugin, LoadError> {
    runtime::load(
        at,
        None,
        PluginSettings {
            grants,
            ..PluginSettings::default()
        },
    )
}

fn refused(at: i64) -> String {
    let err = load_at(at, Grants::none()).err().expect("refused");
    let message = err.to_string();
    assert!(
        !message.contains('\n') && !message.contains('\u{1b}'),
        "raw control characters in {message:?}"
    );
    message
}

#[test]
fn the_honest_identity_loads() {
    let plugin = load_at(0, Grants::none()).expect("loads");
    assert_eq!(plugin.identity().plugin_type, "task/hostile_runtime");
}

#[test]
fn a_type_naming_a_path_is_refused() {
    assert_names(
        &refused(1001),
        &[
            "plugin type `task/../../../../tmp/pwned`",
            "not a task plugin type",
            "expected `task/<name>`",
        ],
    );
}

#[test]
fn control_characters_in_a_type_are_refused_and_escaped() {
    assert_names(
        &refused(1002),
        &[
            "`task/evil\\n\\u{1b}[31mERROR forged`",
            "not a task plugin type",
        ],
    );
}

#[test]
fn a_contract_version_of_four_parts_is_refused() {
    assert_names(
        &refused(1003),
        &["slurm:plugin@0.1.0.7", "not a semver version"],
    );
}

#[test]
fn a_newer_contract_is_refused_naming_both_versions() {
    assert_names(
        &refused(1009),
        &["slurm:plugin@0.2.0", "this host speaks @0.1.0"],
    );
}

#[test]
fn fifty_million_required_capabilities_are_refused() {
    assert_names(
        &refused(1004),
        &["lists 50000000 required capabilities; there are 6"],
    );
}

#[test]
fn the_kind_alone_is_not_a_type() {
    let message = refused(1005);
    assert_names(&message, &["plugin type `task`", "not a task plugin type"]);
    assert!(!message.contains("loaded into the task slot"), "{message}");
}

#[test]
fn a_capability_the_kind_cannot_have_is_named_as_such() {
    // Granting it is impossible: the configuration refuses `gpu` for a task
    // plugin, so the message must not suggest it.
    let message = load_at(1006, Grants::none().with(Capability::Gpu))
        .err()
        .expect("refused")
        .to_string();
    assert_names(
        &message,
        &[
            "requires capability `gpu`",
            "task plugins cannot have",
            "topology, cpuset",
        ],
    );
    assert!(!message.contains("grant it"), "{message}");
}

#[test]
fn a_descriptive_name_of_a_megabyte_is_refused() {
    assert_names(
        &refused(1008),
        &["plugin name", "1048576 bytes", "at most 256 bytes"],
    );
}
