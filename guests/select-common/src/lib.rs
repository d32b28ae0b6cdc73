//! `select-common`: the code Slurm's select plugins share, in plain Rust
//! that builds natively as well as for `wasm32-wasip2`.
//!
//! * [`pack`] and [`protocol`]: the SDK's Slurm packing and protocol
//!   versions ([`slurm_wasm_sdk::pack`], [`slurm_wasm_sdk::protocol`]),
//!   named here for the plugins' state blobs;
//! * [`nodes`]: the compact node table built from `node-init`;
//! * [`job`]: what a select plugin reads of a `job` record;
//! * [`nodeinfo`] and [`jobinfo`]: the `select-nodeinfo` and
//!   `select-jobinfo` resources (`select_nodeinfo_t`, `select_jobinfo_t`),
//!   which with their pack formats are the SDK's
//!   ([`slurm_wasm_sdk::select::info`]), and the table of every node's
//!   nodeinfo that `nodeinfo-set-all` refreshes;
//! * [`resources`]: `job_resources` builders (per-node entries in node-index
//!   order, run-length CPU arrays).
//!
//! Nothing here is specific to one plugin's algorithm.

pub mod job;
pub mod jobinfo;
pub mod nodeinfo;
pub mod nodes;
pub mod resources;

pub use slurm_wasm_sdk::{pack, protocol};

pub use job::{Allocation, JobView, MemRequest, NodeAlloc};
pub use jobinfo::JobInfo;
pub use nodeinfo::{NodeInfo, NodeInfoTable};
pub use nodes::{DeviceGroup, NodeRec, NodeTable};
pub use resources::{cpu_array, ResourcesBuilder};
