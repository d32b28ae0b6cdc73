//! Builds the bundled plugins (guests/) to wasm32-wasip2 components, which
//! this crate carries: it writes `$OUT_DIR/bundled.rs`, the table
//! `src/lib.rs` includes, from the one list below. Only the crates that
//! carry them (the CLI, the C library, the simulator, the tests) rebuild
//! after a guest changes; the runtime does not.

use std::fmt::Write as _;
use std::path::PathBuf;

use slurm_wasm_guest_build::{build, Guest};

/// Each bundled plugin: its type, its kind (a `PluginKind` variant) and its
/// package under `guests/`.
const PLUGINS: [(&str, &str, &str); 9] = [
    ("priority/basic", "Priority", "priority-basic"),
    ("priority/multifactor", "Priority", "priority-multifactor"),
    ("task/affinity", "Task", "task-affinity"),
    ("select/cons_tres", "Select", "select-cons-tres"),
    ("select/linear", "Select", "select-linear"),
    ("select/cray_aries", "Select", "select-cray-aries"),
    ("task/none", "Task", "task-none"),
    ("gres/gpu", "Gres", "gres-gpu"),
    ("gres/mps", "Gres", "gres-mps"),
];

fn main() {
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    // Slurm's file names: `select_cons_tres.wasm` for `select/cons_tres`.
    let files: Vec<(String, String)> = PLUGINS
        .iter()
        .map(|(plugin_type, _, package)| {
            (
                format!("guests/{package}"),
                format!("{}.wasm", plugin_type.replace('/', "_")),
            )
        })
        .collect();
    let guests: Vec<Guest<'_>> = PLUGINS
        .iter()
        .zip(&files)
        .map(|((_, _, package), (dir, file_name))| Guest {
            package,
            dir,
            features: &[],
            file_name,
        })
        .collect();
    let paths = build(&guests);
    let mut table = String::from("&[\n");
    for (((plugin_type, kind, _), (_, file_name)), path) in PLUGINS.iter().zip(&files).zip(paths) {
        writeln!(
            table,
            "    Bundled {{ plugin_type: {plugin_type:?}, file_name: {file_name:?}, \
             kind: PluginKind::{kind}, bytes: include_bytes!({:?}) }},",
            path.display().to_string()
        )
        .expect("write to a String");
    }
    table.push(']');
    std::fs::write(out_dir.join("bundled.rs"), table).expect("write $OUT_DIR/bundled.rs");
}
