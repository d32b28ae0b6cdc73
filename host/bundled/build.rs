//! Builds the bundled plugins (guests/) to wasm32-wasip2 components, which
//! this crate carries (`src/lib.rs`). Only the crates that carry them
//! (the CLI, the C library, the simulator, the tests) rebuild after a guest
//! changes; the runtime does not.

use std::path::PathBuf;

use slurm_wasm_guest_build::{build, Guest};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let workspace = manifest
        .ancestors()
        .nth(2)
        .expect("host/bundled lives in the workspace")
        .to_path_buf();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    build(
        &workspace,
        &out_dir,
        &[
            Guest {
                package: "priority-basic",
                dir: "guests/priority-basic",
                features: &[],
                file_name: "priority_basic.wasm",
            },
            Guest {
                package: "priority-multifactor",
                dir: "guests/priority-multifactor",
                features: &[],
                file_name: "priority_multifactor.wasm",
            },
            Guest {
                package: "task-affinity",
                dir: "guests/task-affinity",
                features: &[],
                file_name: "task_affinity.wasm",
            },
            Guest {
                package: "select-cons-tres",
                dir: "guests/select-cons-tres",
                features: &[],
                file_name: "select_cons_tres.wasm",
            },
            Guest {
                package: "select-linear",
                dir: "guests/select-linear",
                features: &[],
                file_name: "select_linear.wasm",
            },
            Guest {
                package: "task-none",
                dir: "guests/task-none",
                features: &[],
                file_name: "task_none.wasm",
            },
            Guest {
                package: "gres-gpu",
                dir: "guests/gres-gpu",
                features: &[],
                file_name: "gres_gpu.wasm",
            },
            Guest {
                package: "gres-mps",
                dir: "guests/gres-mps",
                features: &[],
                file_name: "gres_mps.wasm",
            },
        ],
    );
}
