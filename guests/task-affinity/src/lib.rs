//! `task/affinity`: Slurm's CPU binding task plugin (src/plugins/task/affinity), as
//! Slurm 22.05.8 behaves.
//!
//! The algorithm is plain Rust that builds natively as well:
//!
//! * [`bind_type`]: the `CPU_BIND_*` bits and srun's `--cpu-bind` text
//!   (the `slurm-wasm-srun` crate's `cpu_bind`);
//! * [`dist`]: the `task_dist` encoding and srun's `--distribution` text
//!   (`slurm-wasm-srun`'s `task_dist`), and the layout they select;
//! * [`task_plugin_param`]: `TaskPluginParam` as `CPU_BIND_*` bits;
//! * [`hardware`]: the node's CPU layout as slurmd sees it (`block_map`);
//! * [`allocation`]: the step's CPUs on this node and how whole they are
//!   (`_get_avail_map` and `_alloc_mask`, dist_tasks.c);
//! * [`lllp`]: `lllp_distribution` (dist_tasks.c), the launch-time decision;
//! * [`layout`]: the block and cyclic task layouts (`_task_layout_lllp_block`,
//!   `_task_layout_lllp_cyclic`, dist_tasks.c);
//! * [`mask`]: CPU masks, their hex forms and abstract → OS numbering
//!   (`_lllp_map_abstract_masks`, dist_tasks.c);
//! * [`batch`]: `batch_bind` (dist_tasks.c), the batch script's binding;
//! * [`cpuset`]: one task's CPU set in slurmstepd (`get_cpuset`, affinity.c);
//! * [`verbose`]: the `cpu-bind=...` line of `--cpu-bind=verbose`
//!   (`task_slurm_chkaffinity`, src/slurmd/common/task_plugin.c);
//! * [`env`](mod@env): the `SLURM_CPU_BIND*` task environment;
//! * [`cstr`]: the C number parsing (`atoi`, `strtoul`) Slurm's text handling relies on.
//!
//! [`plugin`] exports it through the `task-plugin` world, reading the node's
//! layout from the `topology` capability (required) and binding tasks
//! through `cpuset` (optional: without it, binding a task fails).

mod allocation;
mod batch;
pub use srun::cpu_bind as bind_type;
mod cpuset;
mod cstr;
mod dist;
mod env;
mod hardware;
mod layout;
mod lllp;
mod mask;
mod plugin;
mod task_plugin_param;
mod verbose;

pub use plugin::TaskAffinity;
