//! `task/affinity`: Slurm's CPU binding task plugin (spec section 5), as
//! Slurm 22.05.8 behaves.
//!
//! The algorithm is plain Rust that builds natively as well:
//!
//! * [`bind_type`]: the `CPU_BIND_*` bits and srun's `--cpu-bind` text;
//! * [`dist`]: the `task_dist` encoding and srun's `--distribution` text;
//! * [`task_plugin_param`]: `TaskPluginParam` as slurm.conf spells it;
//! * [`hardware`]: the node's CPU layout as slurmd sees it (`block_map`);
//! * [`allocation`]: the step's CPUs on this node and how whole they are (5.3);
//! * [`lllp`]: `lllp_distribution`, the launch-time decision (5.4);
//! * [`layout`]: the block and cyclic task layouts (5.5);
//! * [`mask`]: CPU masks, their hex forms and abstract → OS numbering (5.7);
//! * [`batch`]: `batch_bind`, the batch script's binding (5.1);
//! * [`cpuset`]: one task's CPU set in slurmstepd (5.6);
//! * [`verbose`]: the `cpu-bind=...` line of `--cpu-bind=verbose` (5.7);
//! * [`env`](mod@env): the `SLURM_CPU_BIND*` task environment (5.7);
//! * [`cstr`]: the C number parsing (`atoi`, `strtoul`) Slurm's text handling relies on.
//!
//! [`plugin`] exports it through the `task-plugin` world, reading the node's
//! layout from the `topology` capability (required) and binding tasks
//! through `cpuset` (optional: without it, binding a task fails).

pub mod allocation;
pub mod batch;
pub mod bind_type;
pub mod cpuset;
pub mod cstr;
pub mod dist;
pub mod env;
pub mod hardware;
pub mod layout;
pub mod lllp;
pub mod mask;
pub mod plugin;
pub mod task_plugin_param;
pub mod verbose;
