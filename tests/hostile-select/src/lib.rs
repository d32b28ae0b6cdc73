//! `select/hostile`: a select plugin that keeps a small real world and
//! misbehaves on request. Never load it outside tests.
//!
//! It exists for the host's containment and restart tests (issue 26):
//!
//! * **The world** ([`world::World`]): it remembers the configuration of
//!   `init`, the node table of `node-init` (as node updates change it), the
//!   running jobs of `job-begin`, `job-init` and `reconfigure` (less those of
//!   `job-fini`) and the bytes of the last `state-restore`. A normal
//!   `job-test` gives a job the first `min-nodes` (at least one) candidate
//!   nodes no running job holds, whole; before `node-init` it fails with
//!   "the node table has 0 nodes". `get-info-from-plugin(config-info)`
//!   reports the world as `nodes=<count>`, `running=<ids, ascending,
//!   comma-separated>`, `initialised=<bool>`, `restored=<bytes>` and
//!   `cluster=<cluster name of init>`; `state-save` answers the running
//!   ids, 4 little-endian bytes each. A restarted instance that got its
//!   world back answers these as the old one did.
//! * **The misbehaviours** ([`behaviour::Behaviour`]): named by the job's
//!   `name` where a function gets a job, or armed by `job-signal` (the
//!   signalled job's name) for the next function that gets none; each bends
//!   one answer the host must refuse (`ncpus-max`, `preempt-stranger`,
//!   `resv-stranger`, ...), or traps (`trap`) or spins (`loop`). `init`
//!   traps when the cluster is named `trap`.
//!
//! Every other function does the least a select plugin may.

pub mod answers;
pub mod behaviour;
pub mod world;

use std::sync::{Mutex, MutexGuard};

use slurm_wasm_sdk::select::{
    GuestSelectJobinfo, GuestSelectNodeinfo, IdentityGuest, JobTestRequest, JobTestResult,
    JobinfoField, JobinfoValue, NodeinfoField, NodeinfoValue, PluginInfoField, PluginInfoValue,
    ReservationRequest, ReservationResult, SelectConfig, SelectGuest, SelectJobinfo,
    SelectNodeinfo, SprintMode,
};
use slurm_wasm_sdk::types::{Bitmap, Job, JobResources, Node, PluginError, PluginIdentity, Step};
use slurm_wasm_sdk::{host, identity, Error};

use answers::NodeSnapshot;
use behaviour::Behaviour;
use world::World;

/// The cluster name that makes `init` trap.
pub const TRAP_CLUSTER: &str = "trap";

/// The instance's world; empty until `init` and `node-init`, and after `fini`.
static WORLD: Mutex<Option<World>> = Mutex::new(None);
/// The behaviour `job-signal` armed for the next function without a job.
static ARMED: Mutex<Option<Behaviour>> = Mutex::new(None);

fn world() -> MutexGuard<'static, Option<World>> {
    WORLD.lock().unwrap_or_else(|p| p.into_inner())
}

fn with<R>(f: impl FnOnce(&mut World) -> Result<R, Error>) -> Result<R, PluginError> {
    f(world().get_or_insert_with(World::default)).map_err(Into::into)
}

/// Takes (disarms) the armed behaviour.
fn armed() -> Behaviour {
    ARMED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
        .unwrap_or(Behaviour::Normal)
}

/// select/hostile, exported as a component.
pub struct HostileSelect;

impl IdentityGuest for HostileSelect {
    fn describe() -> PluginIdentity {
        identity(
            "select/hostile",
            "hostile select plugin (containment and restart tests)",
        )
    }
}

impl SelectGuest for HostileSelect {
    type SelectNodeinfo = NodeSnapshot;
    type SelectJobinfo = EmptyJobinfo;

    /// Remembers the configuration; traps for the cluster [`TRAP_CLUSTER`].
    fn init(config: SelectConfig) -> Result<(), PluginError> {
        if config.cluster.cluster_name == TRAP_CLUSTER {
            Behaviour::Trap.fault("init");
        }
        with(|w| {
            w.init(config);
            Ok(())
        })
    }

    fn fini() -> Result<(), PluginError> {
        *world() = None;
        Ok(())
    }

    fn state_save() -> Result<Vec<u8>, PluginError> {
        with(|w| Ok(w.state_save()))
    }

    fn state_restore(data: Vec<u8>) -> Result<(), PluginError> {
        with(|w| {
            w.state_restore(data);
            Ok(())
        })
    }

    fn job_init(jobs: Vec<Job>) -> Result<(), PluginError> {
        with(|w| {
            jobs.iter().for_each(|job| w.start(job));
            Ok(())
        })
    }

    fn node_init(nodes: Vec<Node>) -> Result<(), PluginError> {
        with(|w| {
            w.node_init(nodes);
            Ok(())
        })
    }

    fn job_test(request: JobTestRequest) -> Result<JobTestResult, PluginError> {
        let now = host::now();
        with(|w| answers::job_test(w, &request, now))
    }

    fn job_begin(job: Job) -> Result<(), PluginError> {
        with(|w| {
            w.start(&job);
            Ok(())
        })
    }

    /// True once the job runs here.
    fn job_ready(job: Job) -> Result<bool, PluginError> {
        Behaviour::parse(&job.name).fault("job-ready");
        with(|w| Ok(w.running.contains_key(&job.job_id)))
    }

    fn job_expand_allow() -> bool {
        true
    }

    fn job_expand(from: Job, to: Job) -> Result<JobResources, PluginError> {
        with(|w| answers::job_expand(w, &from, &to))
    }

    /// Nothing is tracked per node of a job beyond the nodes themselves.
    fn job_resized(_job: Job, _node_index: u32) -> Result<(), PluginError> {
        Ok(())
    }

    /// Arms the behaviour the job's name names for the next function that
    /// gets no job.
    fn job_signal(job: Job, _signal: i32) -> Result<(), PluginError> {
        *ARMED.lock().unwrap_or_else(|p| p.into_inner()) = Some(Behaviour::parse(&job.name));
        Ok(())
    }

    fn job_mem_confirm(_job: Job) -> Result<(), PluginError> {
        Ok(())
    }

    fn job_fini(job: Job) -> Result<(), PluginError> {
        with(|w| {
            w.finish(job.job_id);
            Ok(())
        })
    }

    fn job_suspend(_job: Job, _indefinite: bool) -> Result<(), PluginError> {
        Ok(())
    }

    fn job_resume(_job: Job, _indefinite: bool) -> Result<(), PluginError> {
        Ok(())
    }

    fn step_pick_nodes(
        job: Job,
        _step: Step,
        _node_count: u32,
        available: Option<Bitmap>,
    ) -> Result<Option<Bitmap>, PluginError> {
        with(|w| answers::step_pick_nodes(w, &job, available.as_ref()))
    }

    fn step_finish(_step: Step, _killing: bool) -> Result<(), PluginError> {
        Ok(())
    }

    fn reconfigure(config: SelectConfig, running: Vec<Job>) -> Result<(), PluginError> {
        with(|w| {
            w.reconfigure(config, &running);
            Ok(())
        })
    }

    fn update_node_config(node: Node) -> Result<(), PluginError> {
        with(|w| w.update_node(node))
    }

    fn update_node_state(node: Node) -> Result<(), PluginError> {
        with(|w| w.update_node(node))
    }

    fn node_ranking(_nodes: Vec<Node>) -> Result<Option<Vec<u32>>, PluginError> {
        Ok(None)
    }

    fn nodeinfo_set_all() -> Result<(), PluginError> {
        Ok(())
    }

    fn nodeinfo_set(_job: Job) -> Result<(), PluginError> {
        Ok(())
    }

    /// A snapshot of the node's allocation as the world has it now.
    fn node_nodeinfo(node_index: u32) -> Result<SelectNodeinfo, PluginError> {
        with(|w| NodeSnapshot::of(w, node_index)).map(SelectNodeinfo::new)
    }

    fn get_info_from_plugin(
        field: PluginInfoField,
        job: Option<Job>,
    ) -> Result<PluginInfoValue, PluginError> {
        let behaviour = match &job {
            Some(job) => Behaviour::parse(&job.name),
            None => armed(),
        };
        with(|w| Ok(answers::info(w, field, behaviour)))
    }

    fn resv_test(request: ReservationRequest) -> Result<ReservationResult, PluginError> {
        let behaviour = armed();
        with(|w| answers::resv_test(w, &request, behaviour))
    }

    fn ba_init(_nodes: Vec<Node>, _sanity_check: bool) -> Result<(), PluginError> {
        Ok(())
    }

    fn ba_get_dims() -> Option<Vec<u32>> {
        answers::ba_get_dims(armed())
    }
}

impl GuestSelectNodeinfo for NodeSnapshot {
    fn new() -> Self {
        NodeSnapshot::default()
    }

    fn pack(&self, _protocol_version: u16) -> Result<Vec<u8>, PluginError> {
        Ok(NodeSnapshot::pack(self))
    }

    fn unpack(data: Vec<u8>, _protocol_version: u16) -> Result<SelectNodeinfo, PluginError> {
        Ok(SelectNodeinfo::new(NodeSnapshot::unpack(&data)?))
    }

    fn get(&self, field: NodeinfoField, _state: u32) -> Result<NodeinfoValue, PluginError> {
        Ok(NodeSnapshot::get(self, field, armed())?)
    }
}

/// select/hostile keeps nothing per job.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmptyJobinfo;

impl GuestSelectJobinfo for EmptyJobinfo {
    fn new() -> Self {
        EmptyJobinfo
    }

    fn copy(&self) -> SelectJobinfo {
        SelectJobinfo::new(EmptyJobinfo)
    }

    fn pack(&self, _protocol_version: u16) -> Result<Vec<u8>, PluginError> {
        Ok(Vec::new())
    }

    fn unpack(_data: Vec<u8>, _protocol_version: u16) -> Result<SelectJobinfo, PluginError> {
        Ok(SelectJobinfo::new(EmptyJobinfo))
    }

    fn get(&self, field: JobinfoField) -> Result<JobinfoValue, PluginError> {
        Ok(answers::jobinfo_get(field, armed())?)
    }

    fn set(&self, _field: JobinfoField, _value: JobinfoValue) -> Result<(), PluginError> {
        Ok(())
    }

    fn to_string(&self, _mode: SprintMode) -> String {
        String::new()
    }
}

slurm_wasm_sdk::export_select!(HostileSelect);
