//! Slurm return and error codes (`slurm_errno.h`), as the contract carries them.

/// Success.
pub const SLURM_SUCCESS: i32 = 0;
/// A failure without a more precise code.
pub const SLURM_ERROR: i32 = -1;
/// An argument the plugin cannot use (errno).
pub const EINVAL: i32 = 22;
/// Out of memory (errno).
pub const ENOMEM: i32 = 12;
/// Not permitted (errno).
pub const EPERM: i32 = 1;
/// Nothing changed since the caller's last view.
pub const SLURM_NO_CHANGE_IN_DATA: i32 = 1900;
/// "Requested nodes not in this partition".
pub const ESLURM_REQUESTED_NODES_NOT_IN_PARTITION: i32 = 2004;
/// "More processors requested than permitted".
pub const ESLURM_TOO_MANY_REQUESTED_CPUS: i32 = 2005;
/// "Node count specification invalid".
pub const ESLURM_INVALID_NODE_COUNT: i32 = 2006;
/// "Requested node configuration is not available".
pub const ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE: i32 = 2014;
/// "Requested partition configuration not available now".
pub const ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE: i32 = 2015;
/// "Requested nodes are busy".
pub const ESLURM_NODES_BUSY: i32 = 2016;
/// "Invalid node name specified".
pub const ESLURM_INVALID_NODE_NAME: i32 = 2018;
/// "Task distribution specification invalid".
pub const ESLURM_BAD_DIST: i32 = 2023;
/// "Task count specification invalid".
pub const ESLURM_BAD_TASK_COUNT: i32 = 2025;
/// "Requested operation not supported on this system".
pub const ESLURM_NOT_SUPPORTED: i32 = 2036;
/// "Memory required by task is not available".
pub const ESLURM_INVALID_TASK_MEMORY: i32 = 2044;
/// "Required node not available (down, drained or reserved)".
pub const ESLURM_NODE_NOT_AVAIL: i32 = 2068;
/// "CPU count specification invalid".
pub const ESLURM_INVALID_CPU_COUNT: i32 = 2069;
/// "Invalid generic resource (gres) specification".
pub const ESLURM_INVALID_GRES: i32 = 2072;
/// "Job can not start immediately".
pub const ESLURM_CAN_NOT_START_IMMEDIATELY: i32 = 2078;
/// "Slurm internal error, contact system administrator".
pub const ESLURM_INTERNAL: i32 = 2090;
/// "Core count for reservation node list is not consistent!".
pub const ESLURM_INVALID_CORE_CNT: i32 = 2111;
/// "Unsupported GRES specification".
pub const ESLURM_UNSUPPORTED_GRES: i32 = 2122;
/// "Insufficient generic resources".
pub const ESLURM_INSUFFICIENT_GRES: i32 = 2134;
/// slurmd: "Unable to satisfy cpu bind request".
pub const ESLURMD_CPU_BIND_ERROR: i32 = 4032;
/// slurmd: "Unable to layout tasks on given cpus".
pub const ESLURMD_CPU_LAYOUT_ERROR: i32 = 4033;
/// "Plugin init() callback failed".
pub const EPLUGIN_INIT_FAILED: i32 = 8008;
/// "Incompatible plugin version".
pub const ESLURM_PLUGIN_BAD_VERSION: i32 = 8010;

/// `NO_VAL` and friends (slurm/slurm.h).
pub const NO_VAL: u32 = 0xffff_fffe;
/// `NO_VAL` of a 16-bit field.
pub const NO_VAL16: u16 = 0xfffe;
/// `INFINITE` of a 16-bit field.
pub const INFINITE16: u16 = 0xffff;
/// `NO_VAL` of a 64-bit field.
pub const NO_VAL64: u64 = 0xffff_ffff_ffff_fffe;
