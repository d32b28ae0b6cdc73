//! Builds the components the integration tests and benches load (a
//! dev-dependency only, as wasmtime's test-programs: building the CLI builds
//! none of them): the SDK example plugins
//! (priority/partition_size; priority/small_first, task/one_cpu,
//! gres/fpga and select/first_fit, the small ones written with the SDK's
//! `Plugin` traits, and the select wrappers select/spare_bigmem and
//! select/pass_through) and the
//! hostile plugins (task/hostile, and task/needs_topology: the same
//! package with its `requires-topology` feature). Their paths reach this
//! crate as `env!("SLURM_WASM_TEST_<NAME>")`, and the tests as its
//! constants (`src/lib.rs`).

use slurm_wasm_guest_build::{build, Guest};

fn main() {
    let guests = [
        (
            "EXAMPLE",
            Guest {
                package: "priority-partition-size",
                dir: "examples/priority-partition-size",
                features: &[],
                file_name: "priority_partition_size.wasm",
            },
        ),
        (
            "SMALL_FIRST",
            Guest {
                package: "priority-small-first",
                dir: "examples/priority-small-first",
                features: &[],
                file_name: "priority_small_first.wasm",
            },
        ),
        (
            "ONE_CPU",
            Guest {
                package: "task-one-cpu",
                dir: "examples/task-one-cpu",
                features: &[],
                file_name: "task_one_cpu.wasm",
            },
        ),
        (
            "FPGA",
            Guest {
                package: "gres-count-only",
                dir: "examples/gres-count-only",
                features: &[],
                file_name: "gres_fpga.wasm",
            },
        ),
        (
            "FIRST_FIT",
            Guest {
                package: "select-first-fit",
                dir: "examples/select-first-fit",
                features: &[],
                file_name: "select_first_fit.wasm",
            },
        ),
        (
            "SPARE_BIGMEM",
            Guest {
                package: "select-spare-bigmem",
                dir: "examples/select-spare-bigmem",
                features: &[],
                file_name: "select_spare_bigmem.wasm",
            },
        ),
        (
            "PASS_THROUGH",
            Guest {
                package: "pass-through-select",
                dir: "tests/pass-through-select",
                features: &[],
                file_name: "select_pass_through.wasm",
            },
        ),
        (
            "HOSTILE",
            Guest {
                package: "hostile-plugin",
                dir: "tests/hostile",
                features: &[],
                file_name: "task_hostile.wasm",
            },
        ),
        (
            "NEEDS_TOPOLOGY",
            Guest {
                package: "hostile-plugin",
                dir: "tests/hostile",
                features: &["requires-topology"],
                file_name: "task_needs_topology.wasm",
            },
        ),
        (
            "HOSTILE_SELECT",
            Guest {
                package: "hostile-select",
                dir: "tests/hostile-select",
                features: &[],
                file_name: "select_hostile.wasm",
            },
        ),
        (
            "HOSTILE_PRIORITY",
            Guest {
                package: "hostile-priority",
                dir: "tests/hostile-priority",
                features: &[],
                file_name: "priority_hostile.wasm",
            },
        ),
        (
            "HOSTILE_RUNTIME",
            Guest {
                package: "hostile-runtime",
                dir: "tests/hostile-runtime",
                features: &[],
                file_name: "task_hostile_runtime.wasm",
            },
        ),
        (
            "SHADOW_SELECT",
            Guest {
                package: "shadow-select",
                dir: "tests/shadow-select",
                features: &[],
                file_name: "select_cons_tres_heaviest.wasm",
            },
        ),
        (
            "HOSTILE_GRES",
            Guest {
                package: "hostile-gres",
                dir: "tests/hostile-gres",
                features: &[],
                file_name: "gres_hostile.wasm",
            },
        ),
    ];
    let paths = build(&guests.map(|(_, g)| g));
    for ((name, _), path) in guests.iter().zip(paths) {
        println!("cargo:rustc-env=SLURM_WASM_TEST_{name}={}", path.display());
    }
}
