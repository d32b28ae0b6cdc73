//! The paths of the test-only components `build.rs` builds (example and
//! hostile plugins), for the integration tests and benches.

#![deny(missing_docs)]

/// priority_partition_size.wasm: `examples/priority-partition-size`.
pub const EXAMPLE: &str = env!("SLURM_WASM_TEST_EXAMPLE");

/// priority_small_first.wasm: `examples/priority-small-first`.
pub const SMALL_FIRST: &str = env!("SLURM_WASM_TEST_SMALL_FIRST");

/// task_one_cpu.wasm: `examples/task-one-cpu`.
pub const ONE_CPU: &str = env!("SLURM_WASM_TEST_ONE_CPU");

/// gres_fpga.wasm: `examples/gres-count-only`.
pub const FPGA: &str = env!("SLURM_WASM_TEST_FPGA");

/// select_first_fit.wasm: `examples/select-first-fit`.
pub const FIRST_FIT: &str = env!("SLURM_WASM_TEST_FIRST_FIT");

/// select_spare_bigmem.wasm: `examples/select-spare-bigmem` (a select
/// wrapper).
pub const SPARE_BIGMEM: &str = env!("SLURM_WASM_TEST_SPARE_BIGMEM");

/// select_pass_through.wasm: `tests/pass-through-select` (a select wrapper
/// passing every call to its inner plugin).
pub const PASS_THROUGH: &str = env!("SLURM_WASM_TEST_PASS_THROUGH");

/// task_hostile.wasm: `tests/hostile`.
pub const HOSTILE: &str = env!("SLURM_WASM_TEST_HOSTILE");

/// task_needs_topology.wasm: `tests/hostile` with "requires-topology".
pub const NEEDS_TOPOLOGY: &str = env!("SLURM_WASM_TEST_NEEDS_TOPOLOGY");

/// select_hostile.wasm: `tests/hostile-select`.
pub const HOSTILE_SELECT: &str = env!("SLURM_WASM_TEST_HOSTILE_SELECT");

/// priority_hostile.wasm: `tests/hostile-priority`.
pub const HOSTILE_PRIORITY: &str = env!("SLURM_WASM_TEST_HOSTILE_PRIORITY");

/// task_hostile_runtime.wasm: `tests/hostile-runtime`.
pub const HOSTILE_RUNTIME: &str = env!("SLURM_WASM_TEST_HOSTILE_RUNTIME");

/// gres_hostile.wasm: `tests/hostile-gres`.
pub const HOSTILE_GRES: &str = env!("SLURM_WASM_TEST_HOSTILE_GRES");

/// select_cons_tres_heaviest.wasm: `tests/shadow-select` (select/cons_tres
/// using the heaviest nodes first, the shadow and replay tests' candidate).
pub const SHADOW_SELECT: &str = env!("SLURM_WASM_TEST_SHADOW_SELECT");
