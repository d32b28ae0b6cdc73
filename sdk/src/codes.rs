//! Slurm return and error codes (`slurm_errno.h`), as the contract carries them.

pub const SLURM_SUCCESS: i32 = 0;
pub const SLURM_ERROR: i32 = -1;
pub const EINVAL: i32 = 22;
pub const ENOMEM: i32 = 12;
pub const EPERM: i32 = 1;
pub const SLURM_NO_CHANGE_IN_DATA: i32 = 1900;
pub const ESLURM_REQUESTED_NODES_NOT_IN_PARTITION: i32 = 2004;
pub const ESLURM_TOO_MANY_REQUESTED_CPUS: i32 = 2005;
pub const ESLURM_INVALID_NODE_COUNT: i32 = 2006;
pub const ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE: i32 = 2014;
pub const ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE: i32 = 2015;
pub const ESLURM_NODES_BUSY: i32 = 2016;
pub const ESLURM_INVALID_NODE_NAME: i32 = 2018;
pub const ESLURM_BAD_DIST: i32 = 2023;
pub const ESLURM_BAD_TASK_COUNT: i32 = 2025;
pub const ESLURM_NOT_SUPPORTED: i32 = 2036;
pub const ESLURM_INVALID_TASK_MEMORY: i32 = 2044;
pub const ESLURM_NODE_NOT_AVAIL: i32 = 2068;
pub const ESLURM_INVALID_CPU_COUNT: i32 = 2069;
pub const ESLURM_INVALID_GRES: i32 = 2072;
pub const ESLURM_CAN_NOT_START_IMMEDIATELY: i32 = 2078;
pub const ESLURM_INTERNAL: i32 = 2090;
pub const ESLURM_INVALID_CORE_CNT: i32 = 2111;
pub const ESLURM_UNSUPPORTED_GRES: i32 = 2122;
pub const ESLURM_INSUFFICIENT_GRES: i32 = 2134;
pub const ESLURMD_CPU_BIND_ERROR: i32 = 4032;
pub const ESLURMD_CPU_LAYOUT_ERROR: i32 = 4033;
pub const EPLUGIN_INIT_FAILED: i32 = 8008;
pub const ESLURM_PLUGIN_BAD_VERSION: i32 = 8010;

/// `NO_VAL` and friends (spec section "Conventions").
pub const NO_VAL: u32 = 0xffff_fffe;
pub const NO_VAL16: u16 = 0xfffe;
pub const INFINITE16: u16 = 0xffff;
pub const NO_VAL64: u64 = 0xffff_ffff_ffff_fffe;
