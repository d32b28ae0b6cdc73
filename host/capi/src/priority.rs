//! The priority kind (`wit/priority.wit`): one function per contract
//! function, for the `priority/wasm` shim in slurmctld.
#![allow(non_camel_case_types)]

use std::ffi::c_char;

use slurm_wasm_host::kinds::priority::{
    AssociationUpdate, AssociationUsage, FactorsRequest, PriorityConfig, PriorityFactors, QosUpdate,
};
use slurm_wasm_host::PriorityPlugin;

use crate::cvt::{self, list, owned, put, record, take, texts};
use crate::error::{c_string, swasm_error, Failure};
use crate::host::swasm_host;
use crate::kind::{self, with_plugin, Handle, KindHandle};
use crate::types::{
    jobs as read_jobs, swasm_association, swasm_cluster_config, swasm_job, swasm_partition,
    swasm_plugin_identity, swasm_qos, swasm_tres_amount, swasm_tres_list, tres_amounts,
};

/// A priority slot of a host. Opaque; thread-safe: calls from several
/// threads are serialised on the plugin's own lock.
pub struct swasm_priority_plugin(KindHandle<PriorityPlugin>);

impl Handle for swasm_priority_plugin {
    type Plugin = PriorityPlugin;
    fn kind(&self) -> &KindHandle<PriorityPlugin> {
        &self.0
    }
}

/// The argument of `init` and `reconfig` (`priority-config`).
#[repr(C)]
pub struct swasm_priority_config {
    pub cluster: swasm_cluster_config,
    /// The partition table (`job.partitions` index it).
    pub partitions: *const swasm_partition,
    pub n_partitions: usize,
    /// Configured TRES totals of each partition, by partition index.
    pub partition_tres: *const swasm_tres_list,
    pub n_partition_tres: usize,
    pub cluster_cpus: u32,
    pub cluster_nodes: u32,
    /// Configured totals per TRES (`cpu`, `mem`, `gres/gpu`, ...).
    pub cluster_tres: *const swasm_tres_amount,
    pub n_cluster_tres: usize,
}

impl swasm_priority_config {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self) -> Result<PriorityConfig, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(PriorityConfig {
                cluster: self.cluster.read()?,
                partitions: list(
                    self.partitions,
                    self.n_partitions,
                    "config.partitions",
                    |p| p.read(),
                )?,
                partition_tres: list(
                    self.partition_tres,
                    self.n_partition_tres,
                    "config.partition_tres",
                    |l| tres_amounts(l.items, l.n_items, "config.partition_tres.items"),
                )?,
                cluster_cpus: self.cluster_cpus,
                cluster_nodes: self.cluster_nodes,
                cluster_tres: tres_amounts(
                    self.cluster_tres,
                    self.n_cluster_tres,
                    "config.cluster_tres",
                )?,
            })
        }
    }
}

/// Kind of an association or QOS update: insert or replace the record.
pub const SWASM_UPDATE_UPSERT: u32 = 0;
/// Kind of an association or QOS update: remove the record `id`.
pub const SWASM_UPDATE_REMOVE: u32 = 1;

/// A change to the association tree: `kind` `SWASM_UPDATE_UPSERT` with
/// `association` set, or `SWASM_UPDATE_REMOVE` with `id`.
#[repr(C)]
pub struct swasm_association_update {
    pub kind: u32,
    pub id: u32,
    pub association: *const swasm_association,
}

/// A change to the QOS table: `kind` `SWASM_UPDATE_UPSERT` with `qos` set,
/// or `SWASM_UPDATE_REMOVE` with `id`.
#[repr(C)]
pub struct swasm_qos_update {
    pub kind: u32,
    pub id: u32,
    pub qos: *const swasm_qos,
}

/// Usage figures of an association (`set-assoc-usage`): what
/// `priority_p_set_assoc_usage` writes into `assoc->usage`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct swasm_association_usage {
    pub id: u32,
    pub usage_raw: f64,
    pub usage_norm: f64,
    pub usage_effective: f64,
    pub shares_norm: f64,
    pub fair_share: f64,
    /// Fair Tree's level fair-share, when Fair Tree is active.
    pub has_level_fs: bool,
    pub level_fs: f64,
}

impl From<&AssociationUsage> for swasm_association_usage {
    fn from(u: &AssociationUsage) -> Self {
        swasm_association_usage {
            id: u.id,
            usage_raw: u.usage_raw,
            usage_norm: u.usage_norm,
            usage_effective: u.usage_effective,
            shares_norm: u.shares_norm,
            fair_share: u.fair_share,
            has_level_fs: u.level_fs.is_some(),
            level_fs: u.level_fs.unwrap_or(0.0),
        }
    }
}

/// Association usages, owned by the library: free with
/// [`swasm_association_usage_list_free`].
#[repr(C)]
pub struct swasm_association_usage_list {
    pub items: *mut swasm_association_usage,
    pub n_items: usize,
}

/// Which rows `get-priority-factors-list` returns (empty lists = all).
#[repr(C)]
pub struct swasm_factors_request {
    pub job_ids: *const u32,
    pub n_job_ids: usize,
    pub user_ids: *const u32,
    pub n_user_ids: usize,
    pub partitions: *const *const c_char,
    pub n_partitions: usize,
}

/// One weighted TRES factor of a `sprio` row.
#[repr(C)]
pub struct swasm_tres_factor {
    pub name: *mut c_char,
    pub value: f64,
}

/// One row of `sprio` (`priority_factors_object_t`), owned by the library.
#[repr(C)]
pub struct swasm_priority_factors {
    pub job_id: u32,
    pub user_id: u32,
    /// NULL for none.
    pub account: *mut c_char,
    pub partition: *mut c_char,
    /// NULL for none.
    pub qos: *mut c_char,
    /// The job's explicit priority, when it has one (the factors are 0).
    pub has_direct_priority: bool,
    pub direct_priority: u32,
    /// Weighted factors.
    pub age: f64,
    pub association: f64,
    pub fair_share: f64,
    pub job_size: f64,
    pub partition_factor: f64,
    pub qos_factor: f64,
    pub tres: *mut swasm_tres_factor,
    pub n_tres: usize,
    pub site: i64,
    pub nice: i32,
    /// The resulting priority.
    pub priority: u32,
}

impl From<PriorityFactors> for swasm_priority_factors {
    fn from(f: PriorityFactors) -> Self {
        let (tres, n_tres) = owned(
            f.tres
                .iter()
                .map(|(name, value)| swasm_tres_factor {
                    name: c_string(name),
                    value: *value,
                })
                .collect(),
        );
        swasm_priority_factors {
            job_id: f.job_id,
            user_id: f.user_id,
            account: cvt::owned_opt_text(f.account.as_deref()),
            partition: c_string(&f.partition),
            qos: cvt::owned_opt_text(f.qos.as_deref()),
            has_direct_priority: f.direct_priority.is_some(),
            direct_priority: f.direct_priority.unwrap_or(0),
            age: f.age,
            association: f.association,
            fair_share: f.fair_share,
            job_size: f.job_size,
            partition_factor: f.partition_factor,
            qos_factor: f.qos_factor,
            tres,
            n_tres,
            site: f.site,
            nice: f.nice,
            priority: f.priority,
        }
    }
}

/// `sprio` rows, owned by the library: free with
/// [`swasm_priority_factors_list_free`].
#[repr(C)]
pub struct swasm_priority_factors_list {
    pub items: *mut swasm_priority_factors,
    pub n_items: usize,
}

/// A job's new priority.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct swasm_job_priority {
    pub job_id: u32,
    pub priority: u32,
}

/// New priorities, owned by the library: free with
/// [`swasm_job_priority_list_free`].
#[repr(C)]
pub struct swasm_job_priority_list {
    pub items: *mut swasm_job_priority,
    pub n_items: usize,
}

fn priority_list(pairs: &[(u32, u32)]) -> swasm_job_priority_list {
    let (items, n_items) = owned(
        pairs
            .iter()
            .map(|&(job_id, priority)| swasm_job_priority { job_id, priority })
            .collect(),
    );
    swasm_job_priority_list { items, n_items }
}

/// Opens the priority slot `slot` of `host` (NULL: `[plugins.priority]`).
///
/// Cheap: checks that the slot exists and is a priority slot, that its
/// `.wasm` file can be opened or its bundled plugin (and fallback) is
/// carried by this build; nothing is compiled and no thread is started. The
/// plugin is loaded at the handle's first call (or [`swasm_priority_load`]).
///
/// Returns NULL with `error` set (code `SLURM_ERROR`, the message naming
/// the host configuration file, the slot and what is wrong) on failure.
/// Close the handle with [`swasm_priority_close`].
///
/// # Safety
/// `host` is NULL or an open host; `slot` NULL or a NUL-terminated string;
/// `error` NULL or an initialised `swasm_error`.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_open(
    host: *const swasm_host,
    slot: *const c_char,
    error: *mut swasm_error,
) -> *mut swasm_priority_plugin {
    // SAFETY: as the caller promised.
    unsafe {
        kind::open(
            host,
            slot,
            error,
            "swasm_priority_open",
            swasm_priority_plugin,
        )
    }
}

/// Closes a priority handle without calling `fini` (call
/// [`swasm_priority_fini`] first to give the plugin its `fini`). Does
/// nothing for NULL.
///
/// # Safety
/// `plugin` is NULL or an open handle, not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_close(plugin: *mut swasm_priority_plugin) {
    // SAFETY: as the caller promised.
    unsafe { kind::close(plugin) }
}

/// Loads the plugin now: starts the host's runtime if need be, compiles the
/// component (or reads it from the cache) and checks it (a component, of
/// the priority kind, built against a compatible contract, its required
/// capabilities granted). Otherwise the first call does this.
///
/// Fails (`SLURM_ERROR`) with a message naming the host configuration, the
/// slot and the `.wasm` file and what is wrong; a load failure is kept, and
/// every later call on the handle fails with the same message.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_load(
    plugin: *const swasm_priority_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::load(plugin, error, "swasm_priority_load") }
}

/// Fills `out` with what the plugin says of itself (loading it first).
/// Free its strings with `swasm_plugin_identity_free`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_identity(
    plugin: *const swasm_priority_plugin,
    out: *mut swasm_plugin_identity,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::identity(plugin, out, error, "swasm_priority_identity") }
}

/// The plugin's `init`. Every other contract function fails until an
/// `init` has succeeded. The configuration is kept, so an instance
/// restarted after a fault is initialised the same way.
///
/// # Safety
/// `plugin` is NULL or an open handle; `config` points to a valid
/// configuration; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_init(
    plugin: *const swasm_priority_plugin,
    config: *const swasm_priority_config,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_init", |p| {
            let config = record(config, "swasm_priority_init: config")?.read()?;
            Ok(p.init(&config)?)
        })
    }
}

/// Reloads the slot's component from the host configuration file, read
/// again: when the slot's table names another component (or its `.wasm`
/// holds other bytes), the new one serves from the next call, the replaced
/// one running beside it for `probation_calls` calls (100 by default) and
/// taking back over, answering the call, if the new one faults. A reload
/// that cannot be made (the file unreadable or wrong, the component of
/// another kind or contract, or unable to start from the serving one's
/// state) fails and the serving component goes on. `*replaced` (when not
/// NULL) is set to whether the component changed.
///
/// # Safety
/// `plugin` is NULL or an open handle; `replaced` NULL or valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_reload(
    plugin: *const swasm_priority_plugin,
    replaced: *mut bool,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::reload(plugin, replaced, error, "swasm_priority_reload") }
}

/// The plugin's `fini`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_fini(
    plugin: *const swasm_priority_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { with_plugin(plugin, error, "swasm_priority_fini", |p| Ok(p.fini()?)) }
}

/// `priority_p_set`: the priority of a new or changed job, with
/// `last_prio` the controller's `lowest_prio`. Writes it to
/// `*out_priority` (1..=0xffffffff: a plugin answering 0 is refused). The
/// controller keeps `lowest_prio` as Slurm does.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` points to a valid job;
/// `out_priority` valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_set(
    plugin: *const swasm_priority_plugin,
    last_prio: u32,
    job: *const swasm_job,
    out_priority: *mut u32,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_set", |p| {
            let job = record(job, "swasm_priority_set: job")?.read()?;
            put(
                out_priority,
                p.set(last_prio, &job)?,
                "swasm_priority_set: out_priority",
            )
        })
    }
}

/// `priority_p_reconfig`: the configuration changed; `assoc_clear` asks to
/// rebuild usage-derived data from the `n_running` running jobs.
///
/// # Safety
/// `plugin` is NULL or an open handle; `config` valid; `running` holds
/// `n_running` valid jobs (NULL when 0); `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_reconfig(
    plugin: *const swasm_priority_plugin,
    config: *const swasm_priority_config,
    assoc_clear: bool,
    running: *const swasm_job,
    n_running: usize,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_reconfig", |p| {
            let config = record(config, "swasm_priority_reconfig: config")?.read()?;
            let running = read_jobs(running, n_running, "swasm_priority_reconfig: running")?;
            Ok(p.reconfig(&config, assoc_clear, &running)?)
        })
    }
}

/// `priority_p_set_assoc_usage`: the usage figures of association
/// `assoc_id` (what the C function writes into `assoc->usage`), into `*out`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_set_assoc_usage(
    plugin: *const swasm_priority_plugin,
    assoc_id: u32,
    out: *mut swasm_association_usage,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_set_assoc_usage", |p| {
            let usage = p.set_assoc_usage(assoc_id)?;
            put(out, (&usage).into(), "swasm_priority_set_assoc_usage: out")
        })
    }
}

/// `priority_p_get_priority_factors_list` (`sprio`): the rows for the
/// `n_jobs` pending jobs, filtered by `request` (NULL: every row) and
/// visible to `uid`. On success `*out` holds library-owned rows; free them
/// with [`swasm_priority_factors_list_free`]. On failure `*out` is left as
/// it was.
///
/// # Safety
/// `plugin` is NULL or an open handle; `jobs` holds `n_jobs` valid jobs;
/// `request` NULL or valid; `out` valid for writing; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_get_priority_factors_list(
    plugin: *const swasm_priority_plugin,
    jobs: *const swasm_job,
    n_jobs: usize,
    request: *const swasm_factors_request,
    uid: u32,
    out: *mut swasm_priority_factors_list,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_priority_get_priority_factors_list";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let jobs = read_jobs(jobs, n_jobs, "jobs")?;
            let request = match request.as_ref() {
                Some(r) => FactorsRequest {
                    job_ids: cvt::slice(r.job_ids, r.n_job_ids, "request.job_ids")?.to_vec(),
                    user_ids: cvt::slice(r.user_ids, r.n_user_ids, "request.user_ids")?.to_vec(),
                    partitions: texts(r.partitions, r.n_partitions, "request.partitions")?,
                },
                None => FactorsRequest {
                    job_ids: Vec::new(),
                    user_ids: Vec::new(),
                    partitions: Vec::new(),
                },
            };
            if out.is_null() {
                return Err(Failure::new(format!("{F}: out is NULL")));
            }
            let rows = p.get_priority_factors_list(&jobs, &request, uid)?;
            let (items, n_items) = owned(rows.into_iter().map(Into::into).collect());
            put(out, swasm_priority_factors_list { items, n_items }, "out")
        })
    }
}

/// Frees the rows of a factors list and empties it; does nothing for NULL.
///
/// # Safety
/// `list` is NULL, zeroed, or filled by
/// [`swasm_priority_get_priority_factors_list`] and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_factors_list_free(list: *mut swasm_priority_factors_list) {
    // SAFETY: as the caller promised.
    let Some(list) = (unsafe { list.as_mut() }) else {
        return;
    };
    // SAFETY: the list came from `owned`.
    for row in unsafe { take(list.items, list.n_items) } {
        // SAFETY: every string and array of a row came from `owned`/`c_string`.
        unsafe {
            cvt::free_text(row.account);
            cvt::free_text(row.partition);
            cvt::free_text(row.qos);
            for tres in take(row.tres, row.n_tres) {
                cvt::free_text(tres.name);
            }
        }
    }
    list.items = std::ptr::null_mut();
    list.n_items = 0;
}

/// `priority_p_job_end`: the job ended; the plugin charges or releases its
/// usage. (Slurm's own bookkeeping of `grp_used_tres_run_secs` stays in the
/// shim.)
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_job_end(
    plugin: *const swasm_priority_plugin,
    job: *const swasm_job,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_job_end", |p| {
            let job = record(job, "swasm_priority_job_end: job")?.read()?;
            Ok(p.job_end(&job)?)
        })
    }
}

/// `priority_p_recover` (23.02): after a controller restart, with `boost`
/// = TOP_PRIORITY − the highest priority. Writes what to add to
/// `lowest_prio` (at most `boost`) to `*out_boost` and the jobs whose
/// priority changed to `*out_priorities` (free with
/// [`swasm_job_priority_list_free`]). On failure neither is written.
///
/// # Safety
/// `plugin` is NULL or an open handle; `jobs` holds `n_jobs` valid jobs;
/// the outputs valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_recover(
    plugin: *const swasm_priority_plugin,
    boost: u32,
    jobs: *const swasm_job,
    n_jobs: usize,
    out_boost: *mut u32,
    out_priorities: *mut swasm_job_priority_list,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_recover", |p| {
            let jobs = read_jobs(jobs, n_jobs, "swasm_priority_recover: jobs")?;
            if out_boost.is_null() || out_priorities.is_null() {
                return Err(Failure::new("swasm_priority_recover: an output is NULL"));
            }
            let (added, changed) = p.recover(boost, &jobs)?;
            put(out_boost, added, "out_boost")?;
            put(out_priorities, priority_list(&changed), "out_priorities")
        })
    }
}

/// Frees a priority list and empties it; does nothing for NULL.
///
/// # Safety
/// `list` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_job_priority_list_free(list: *mut swasm_job_priority_list) {
    // SAFETY: as the caller promised.
    if let Some(list) = unsafe { list.as_mut() } {
        // SAFETY: the items came from `owned`.
        drop(unsafe { take(list.items, list.n_items) });
        list.items = std::ptr::null_mut();
        list.n_items = 0;
    }
}

/// Applies `n_updates` changes to the plugin's association tree, in order
/// (22.05 has no callback for them: the shim compares `assoc_mgr`'s list
/// with what it passed last).
///
/// # Safety
/// `plugin` is NULL or an open handle; `updates` holds `n_updates` valid
/// updates; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_update_associations(
    plugin: *const swasm_priority_plugin,
    updates: *const swasm_association_update,
    n_updates: usize,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_update_associations", |p| {
            let updates = list(updates, n_updates, "updates", |u| match u.kind {
                SWASM_UPDATE_UPSERT => Ok(AssociationUpdate::Upsert(
                    record(u.association, "updates.association")?.read()?,
                )),
                SWASM_UPDATE_REMOVE => Ok(AssociationUpdate::Remove(u.id)),
                other => Err(Failure::new(format!("updates.kind: unknown value {other}"))),
            })?;
            Ok(p.update_associations(&updates)?)
        })
    }
}

/// Applies `n_updates` changes to the plugin's QOS table, in order.
///
/// # Safety
/// `plugin` is NULL or an open handle; `updates` holds `n_updates` valid
/// updates; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_update_qos(
    plugin: *const swasm_priority_plugin,
    updates: *const swasm_qos_update,
    n_updates: usize,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_update_qos", |p| {
            let updates = list(updates, n_updates, "updates", |u| match u.kind {
                SWASM_UPDATE_UPSERT => Ok(QosUpdate::Upsert(record(u.qos, "updates.qos")?.read()?)),
                SWASM_UPDATE_REMOVE => Ok(QosUpdate::Remove(u.id)),
                other => Err(Failure::new(format!("updates.kind: unknown value {other}"))),
            })?;
            Ok(p.update_qos(&updates)?)
        })
    }
}

/// One `PriorityCalcPeriod` pass (multifactor's decay thread): charge the
/// `n_running` running jobs' usage up to now, decay, and recompute the
/// priorities of the `n_pending` pending jobs named by id (each as last
/// given to [`swasm_priority_set`]; held jobs left out). On success
/// `*out` holds `(job id, priority)` pairs for jobs of this call, each once,
/// none 0; free with [`swasm_job_priority_list_free`].
///
/// # Safety
/// `plugin` is NULL or an open handle; `running` holds `n_running` valid
/// jobs, `pending` `n_pending` ids; `out` valid for writing; `error` NULL
/// or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_calculate(
    plugin: *const swasm_priority_plugin,
    running: *const swasm_job,
    n_running: usize,
    pending: *const u32,
    n_pending: usize,
    out: *mut swasm_job_priority_list,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_calculate", |p| {
            let running = read_jobs(running, n_running, "swasm_priority_calculate: running")?;
            let pending = cvt::slice(pending, n_pending, "swasm_priority_calculate: pending")?;
            if out.is_null() {
                return Err(Failure::new("swasm_priority_calculate: out is NULL"));
            }
            let priorities = p.calculate(&running, pending)?;
            put(out, priority_list(&priorities), "out")
        })
    }
}

/// Every association's usage figures (for `sshare`). On success `*out`
/// holds them, each association once; free with
/// [`swasm_association_usage_list_free`].
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_association_usages(
    plugin: *const swasm_priority_plugin,
    out: *mut swasm_association_usage_list,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_priority_association_usages", |p| {
            if out.is_null() {
                return Err(Failure::new(
                    "swasm_priority_association_usages: out is NULL",
                ));
            }
            let usages = p.association_usages()?;
            let (items, n_items) = owned(usages.iter().map(Into::into).collect());
            put(out, swasm_association_usage_list { items, n_items }, "out")
        })
    }
}

/// Frees an association usage list and empties it; does nothing for NULL.
///
/// # Safety
/// `list` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_association_usage_list_free(
    list: *mut swasm_association_usage_list,
) {
    // SAFETY: as the caller promised.
    if let Some(list) = unsafe { list.as_mut() } {
        // SAFETY: the items came from `owned`.
        drop(unsafe { take(list.items, list.n_items) });
        list.items = std::ptr::null_mut();
        list.n_items = 0;
    }
}

/// Saves the plugin's state (`state-save`) to the state file `path`, or,
/// when `path` is NULL, to `<state_dir>/<slot>.state` of the host
/// configuration (`priority.state`). The file is written atomically, with a
/// checked header naming the component that wrote it.
///
/// Fails with the plugin's code when its `state-save` fails, `SLURM_ERROR`
/// when the file cannot be written or no path is known.
///
/// # Safety
/// `plugin` is NULL or an open handle; `path` NULL or a NUL-terminated
/// string; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_state_save(
    plugin: *const swasm_priority_plugin,
    path: *const c_char,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::state_save(plugin, path, error, "swasm_priority_state_save") }
}

/// Restores the plugin's state (`state-restore`) from the state file
/// `path` (NULL: `<state_dir>/<slot>.state`). A file that is damaged,
/// written by another plugin type or by a component this slot does not
/// accept state from is refused whole (`SLURM_ERROR`) before the plugin sees
/// any of it. A missing file fails with code `ENOENT` (nothing saved yet:
/// a first start, which the shim may treat as success).
///
/// # Safety
/// `plugin` is NULL or an open handle; `path` NULL or a NUL-terminated
/// string; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_priority_state_restore(
    plugin: *const swasm_priority_plugin,
    path: *const c_char,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::state_restore(plugin, path, error, "swasm_priority_state_restore") }
}
