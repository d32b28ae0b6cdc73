#![deny(missing_docs)]
//! # slurm-wasm-slurm
//!
//! What Slurm 22.05.8's daemons do around a scheduler plugin, for every
//! embedding of the host that plays slurmctld or slurmd (the CLI, the
//! simulator, the differential tests against real Slurm):
//!
//! * [`slurm_conf`] reads `slurm.conf` (quotes, `\#`, `Include`) and
//!   [`gres_conf`] `gres.conf`, with [`hostlist`] expressions;
//!   [`option_flags`] reads the options the contract passes as flags;
//! * [`setup`] turns them and the host's TOML into the plugins a site runs
//!   and the records their `init` calls take, the QOS table, preemption
//!   candidates and reservations;
//! * [`job_request`] turns sbatch/srun options into the job records
//!   slurmctld hands a select plugin;
//! * [`controller`] is slurmctld around a select plugin: the requests it
//!   makes, the jobs holding resources, reservations and preemption, the
//!   calls that keep the plugin's tables in step;
//! * [`step`] is slurmctld's step allocation inside a job: the nodes,
//!   tasks, cores and memory an srun step gets;
//! * [`show`] writes jobs, reservations, priorities and shares as
//!   `scontrol`, `sprio` and `sshare` write them.
//!
//! The runtime (`slurm-wasm-host`) knows none of this: it loads, limits and
//! calls components.

pub mod controller;
pub mod gres_conf;
pub mod hostlist;
pub mod job_request;
pub mod option_flags;
pub mod setup;
pub mod show;
pub mod slurm_conf;
pub mod step;
