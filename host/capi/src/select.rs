//! The select kind (`wit/select.wit`): one function per contract function,
//! for the `select/wasm` shim in slurmctld.
//!
//! The plugin keeps its own node and usage tables: the shim passes the node
//! table once ([`swasm_select_node_init`]), the running jobs after a
//! restart ([`swasm_select_job_init`]) and every change afterwards
//! (`job_begin`, `job_fini`, node updates, ...); [`swasm_select_job_test`]
//! passes one job and a candidate bitmap per call. The host keeps the same
//! calls in a journal and replays them into a plugin restarted after a
//! fault, and checks every allocation against its copy of the node table.
//!
//! The per-node and per-job information (`select_nodeinfo_t`,
//! `select_jobinfo_t`) are plugin-side resources: opaque handles
//! ([`swasm_select_nodeinfo`], [`swasm_select_jobinfo`]) that every call
//! takes with the plugin handle that made them.
#![allow(non_camel_case_types)]

use std::ffi::c_char;
use std::ptr::{null, null_mut};

use slurm_wasm_host::kinds::select::{
    JobTestFlags, JobTestMode, JobTestRequest, JobTestResult, JobinfoField, JobinfoValue,
    NodeinfoField, NodeinfoValue, Opaque, PluginInfoField, PluginInfoValue, PreemptMode,
    PreempteeCandidate, ReservationRequest, ReservationResult, SelectConfig, SprintMode,
};
use slurm_wasm_host::types::Job;
use slurm_wasm_host::{CallError, SelectPlugin};

use crate::cvt::{self, choice, list, owned, put, record, take, text};
use crate::error::{c_string, swasm_error, Failure};
use crate::host::swasm_host;
use crate::kind::{self, with_plugin, Handle, KindHandle};
use crate::owned::{self as own, swasm_bytes, swasm_u32_list};
use crate::resource::{self, Resource, ResourceHandle};
use crate::types::{
    jobs as read_jobs, nodes as read_nodes, opt_bitmap, swasm_bitmap, swasm_cluster_config,
    swasm_job, swasm_job_resources, swasm_key_value, swasm_node, swasm_partition,
    swasm_plugin_identity, swasm_step,
};

/// A select slot of a host. Opaque; thread-safe: calls from several
/// threads are serialised on the plugin's own lock (slurmctld's locks
/// serialise select calls already).
pub struct swasm_select_plugin(KindHandle<SelectPlugin>);

impl Handle for swasm_select_plugin {
    type Plugin = SelectPlugin;
    fn kind(&self) -> &KindHandle<SelectPlugin> {
        &self.0
    }
}

/// The plugin's per-node information (`select_nodeinfo_t`). Opaque: free
/// with [`swasm_select_nodeinfo_free`].
pub struct swasm_select_nodeinfo(Resource<Opaque>);

impl ResourceHandle for swasm_select_nodeinfo {
    type Value = Opaque;
    fn wrap(resource: Resource<Opaque>) -> Self {
        swasm_select_nodeinfo(resource)
    }
    fn resource(&self) -> &Resource<Opaque> {
        &self.0
    }
}

/// The plugin's per-job information (`select_jobinfo_t`). Opaque: free
/// with [`swasm_select_jobinfo_free`].
pub struct swasm_select_jobinfo(Resource<Opaque>);

impl ResourceHandle for swasm_select_jobinfo {
    type Value = Opaque;
    fn wrap(resource: Resource<Opaque>) -> Self {
        swasm_select_jobinfo(resource)
    }
    fn resource(&self) -> &Resource<Opaque> {
        &self.0
    }
}

/// The argument of `init` and `reconfigure` (`select-config`).
#[repr(C)]
pub struct swasm_select_config {
    pub cluster: swasm_cluster_config,
    /// The partition table (`swasm_node.partitions` index it).
    pub partitions: *const swasm_partition,
    pub n_partitions: usize,
}

impl swasm_select_config {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self) -> Result<SelectConfig, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(SelectConfig {
                cluster: self.cluster.read()?,
                partitions: list(
                    self.partitions,
                    self.n_partitions,
                    "config.partitions",
                    |p| p.read(),
                )?,
            })
        }
    }
}

/// Base value of [`swasm_job_test_request::mode`]: Slurm's
/// `SELECT_MODE_RUN_NOW` (allocate now from free resources).
pub const SWASM_SELECT_MODE_RUN_NOW: u32 = 0x0;
/// `SELECT_MODE_TEST_ONLY`: could the job ever run on these nodes?
pub const SWASM_SELECT_MODE_TEST_ONLY: u32 = 0x1;
/// `SELECT_MODE_WILL_RUN`: when and where would it start?
pub const SWASM_SELECT_MODE_WILL_RUN: u32 = 0x2;
/// `SELECT_MODE_RESV`: a reservation test (as will-run).
pub const SWASM_SELECT_MODE_RESV: u32 = 0x4;
/// The base value's bits of a mode (`SELECT_MODE_BASE`).
pub const SWASM_SELECT_MODE_BASE: u32 = 0xff;
/// Flag of a mode: `SELECT_MODE_PREEMPT_FLAG`.
pub const SWASM_SELECT_MODE_PREEMPT_FLAG: u32 = 0x100;
/// Flag of a mode: `SELECT_MODE_CHECK_FULL`.
pub const SWASM_SELECT_MODE_CHECK_FULL: u32 = 0x200;
/// Flag of a mode: `SELECT_MODE_IGN_ERR`.
pub const SWASM_SELECT_MODE_IGN_ERR: u32 = 0x400;

/// Slurm's `mode` argument of `select_p_job_test` as the contract's mode and
/// flags; an unknown base value or flag bit is refused.
fn job_test_mode(mode: u32) -> Result<(JobTestMode, JobTestFlags), Failure> {
    let base = choice(mode & SWASM_SELECT_MODE_BASE, "request.mode", |m| {
        Some(match m {
            SWASM_SELECT_MODE_RUN_NOW => JobTestMode::RunNow,
            SWASM_SELECT_MODE_TEST_ONLY => JobTestMode::TestOnly,
            SWASM_SELECT_MODE_WILL_RUN => JobTestMode::WillRun,
            SWASM_SELECT_MODE_RESV => JobTestMode::Reservation,
            _ => return None,
        })
    })?;
    let known =
        SWASM_SELECT_MODE_PREEMPT_FLAG | SWASM_SELECT_MODE_CHECK_FULL | SWASM_SELECT_MODE_IGN_ERR;
    let flag_bits = mode & !SWASM_SELECT_MODE_BASE;
    if flag_bits & !known != 0 {
        return Err(Failure::new(format!(
            "request.mode: unknown flag bits {:#x}",
            flag_bits & !known
        )));
    }
    let mut flags = JobTestFlags::empty();
    for (bit, flag) in [
        (SWASM_SELECT_MODE_PREEMPT_FLAG, JobTestFlags::PREEMPT),
        (SWASM_SELECT_MODE_CHECK_FULL, JobTestFlags::CHECK_FULL),
        (SWASM_SELECT_MODE_IGN_ERR, JobTestFlags::IGNORE_ERRORS),
    ] {
        if mode & bit != 0 {
            flags |= flag;
        }
    }
    Ok((base, flags))
}

/// `PreemptMode` of a preemption candidate: Slurm's `PREEMPT_MODE_SUSPEND`
/// (the job keeps its memory and GRES).
pub const SWASM_PREEMPT_MODE_SUSPEND: u32 = 0x1;
/// `PREEMPT_MODE_REQUEUE`: the job leaves its nodes.
pub const SWASM_PREEMPT_MODE_REQUEUE: u32 = 0x2;
/// `PREEMPT_MODE_CANCEL`: the job leaves its nodes.
pub const SWASM_PREEMPT_MODE_CANCEL: u32 = 0x8;

/// A running job the controller would preempt for the tested one, with the
/// preempt mode that would apply to it (`slurm_job_preempt_mode()`, one of
/// the `SWASM_PREEMPT_MODE_*` values).
#[repr(C)]
pub struct swasm_preemptee_candidate {
    pub job_id: u32,
    pub mode: u32,
}

/// The arguments of `select_p_job_test`.
#[repr(C)]
pub struct swasm_job_test_request {
    pub job: *const swasm_job,
    /// Candidate nodes (the `bitmap` argument on entry), over the node
    /// table.
    pub candidates: swasm_bitmap,
    pub min_nodes: u32,
    pub max_nodes: u32,
    /// Desired node count (`req_nodes`).
    pub req_nodes: u32,
    /// Slurm's `mode` as it is: a base value (`SWASM_SELECT_MODE_RUN_NOW`,
    /// `_TEST_ONLY`, `_WILL_RUN`, `_RESV`) or'd with flag bits
    /// (`SWASM_SELECT_MODE_PREEMPT_FLAG`, `_CHECK_FULL`, `_IGN_ERR`).
    pub mode: u32,
    /// Running jobs that may be preempted, in the controller's preference
    /// order (`preemptee_candidates`).
    pub preemptee_candidates: *const swasm_preemptee_candidate,
    pub n_preemptee_candidates: usize,
    /// Cores that must not be used, over the whole cluster: bit = (first
    /// core of the node) + core index (`exc_core_bitmap`); NULL for none.
    pub excluded_cores: *const swasm_bitmap,
}

impl swasm_job_test_request {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self) -> Result<JobTestRequest, Failure> {
        let (mode, flags) = job_test_mode(self.mode)?;
        // SAFETY: as the caller promised.
        unsafe {
            Ok(JobTestRequest {
                job: record(self.job, "request.job")?.read()?,
                candidates: self.candidates.read("request.candidates")?,
                min_nodes: self.min_nodes,
                max_nodes: self.max_nodes,
                req_nodes: self.req_nodes,
                mode,
                flags,
                preemptee_candidates: list(
                    self.preemptee_candidates,
                    self.n_preemptee_candidates,
                    "request.preemptee_candidates",
                    |c| {
                        Ok(PreempteeCandidate {
                            job_id: c.job_id,
                            mode: choice(c.mode, "request.preemptee_candidates.mode", |m| {
                                Some(match m {
                                    SWASM_PREEMPT_MODE_SUSPEND => PreemptMode::Suspend,
                                    SWASM_PREEMPT_MODE_REQUEUE => PreemptMode::Requeue,
                                    SWASM_PREEMPT_MODE_CANCEL => PreemptMode::Cancel,
                                    _ => return None,
                                })
                            })?,
                        })
                    },
                )?,
                excluded_cores: opt_bitmap(self.excluded_cores, "request.excluded_cores")?,
            })
        }
    }
}

/// The answer of `select_p_job_test`, owned by the library: free with
/// [`swasm_job_test_result_free`].
#[repr(C)]
pub struct swasm_job_test_result {
    /// The allocation (`job_ptr->job_resrcs`, the `bitmap` argument on
    /// return and `total_cpus` = `ncpus`). In test-only mode, computed
    /// against total capacity. In will-run and reservation modes `per_node`
    /// may be empty (the bundled plugins leave it so): Slurm keeps only the
    /// nodes, the CPU count and the start.
    pub resources: swasm_job_resources,
    /// Will-run and reservation modes: the expected start
    /// (`job_ptr->start_time`).
    pub has_start_time: bool,
    pub start_time: i64,
    /// Jobs to preempt for this allocation (`preemptee_job_list`), each one
    /// of the candidates, once.
    pub preemptees: *mut u32,
    pub n_preemptees: usize,
}

impl From<JobTestResult> for swasm_job_test_result {
    fn from(r: JobTestResult) -> Self {
        let (preemptees, n_preemptees) = owned(r.preemptees);
        swasm_job_test_result {
            resources: own::job_resources(&r.resources),
            has_start_time: r.start_time.is_some(),
            start_time: r.start_time.unwrap_or(0),
            preemptees,
            n_preemptees,
        }
    }
}

/// Frees a job-test result and zeroes it; does nothing for NULL.
///
/// # Safety
/// `result` is NULL, zeroed, or filled by [`swasm_select_job_test`] and
/// not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_job_test_result_free(result: *mut swasm_job_test_result) {
    // SAFETY: as the caller promised.
    let Some(r) = (unsafe { result.as_mut() }) else {
        return;
    };
    // SAFETY: every part came from `From<JobTestResult>`.
    unsafe {
        own::free_job_resources(&mut r.resources);
        drop(take(r.preemptees, r.n_preemptees));
    }
    r.has_start_time = false;
    r.start_time = 0;
    r.preemptees = null_mut();
    r.n_preemptees = 0;
}

/// `select-nodeinfo` field: Slurm's `SELECT_NODEDATA_SUBCNT` (CPUs
/// allocated on the node in the given state; a `SWASM_NODEINFO_COUNT`).
pub const SWASM_SELECT_NODEDATA_SUBCNT: u32 = 2;
/// `SELECT_NODEDATA_PTR`: not meaningful across the boundary; the plugin
/// answers an error.
pub const SWASM_SELECT_NODEDATA_PTR: u32 = 5;
/// `SELECT_NODEDATA_MEM_ALLOC`: MB allocated (a `SWASM_NODEINFO_MEMORY`).
pub const SWASM_SELECT_NODEDATA_MEM_ALLOC: u32 = 8;
/// `SELECT_NODEDATA_TRES_ALLOC_FMT_STR`: `cpu=4,mem=2000M` (a
/// `SWASM_NODEINFO_TEXT`).
pub const SWASM_SELECT_NODEDATA_TRES_ALLOC_FMT_STR: u32 = 9;
/// `SELECT_NODEDATA_TRES_ALLOC_WEIGHTED` (a `SWASM_NODEINFO_WEIGHTED`).
pub const SWASM_SELECT_NODEDATA_TRES_ALLOC_WEIGHTED: u32 = 10;

/// Kind of a [`swasm_nodeinfo_value`]: `count`.
pub const SWASM_NODEINFO_COUNT: u32 = 0;
/// Kind of a [`swasm_nodeinfo_value`]: `memory`.
pub const SWASM_NODEINFO_MEMORY: u32 = 1;
/// Kind of a [`swasm_nodeinfo_value`]: `text`.
pub const SWASM_NODEINFO_TEXT: u32 = 2;
/// Kind of a [`swasm_nodeinfo_value`]: `weighted`.
pub const SWASM_NODEINFO_WEIGHTED: u32 = 3;

/// A value read from a nodeinfo: `kind` says which field holds it. Owned
/// by the library: free with [`swasm_nodeinfo_value_free`].
#[repr(C)]
pub struct swasm_nodeinfo_value {
    pub kind: u32,
    pub count: u16,
    pub memory: u64,
    /// NULL unless `kind` is `SWASM_NODEINFO_TEXT`.
    pub text: *mut c_char,
    pub weighted: f64,
}

impl From<NodeinfoValue> for swasm_nodeinfo_value {
    fn from(v: NodeinfoValue) -> Self {
        let mut out = swasm_nodeinfo_value {
            kind: SWASM_NODEINFO_COUNT,
            count: 0,
            memory: 0,
            text: null_mut(),
            weighted: 0.0,
        };
        match v {
            NodeinfoValue::Count(c) => out.count = c,
            NodeinfoValue::Memory(m) => {
                out.kind = SWASM_NODEINFO_MEMORY;
                out.memory = m;
            }
            NodeinfoValue::Text(t) => {
                out.kind = SWASM_NODEINFO_TEXT;
                out.text = c_string(&t);
            }
            NodeinfoValue::Weighted(w) => {
                out.kind = SWASM_NODEINFO_WEIGHTED;
                out.weighted = w;
            }
        }
        out
    }
}

/// Frees the text of a nodeinfo value and zeroes it; does nothing for NULL.
///
/// # Safety
/// `value` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_nodeinfo_value_free(value: *mut swasm_nodeinfo_value) {
    // SAFETY: as the caller promised.
    if let Some(v) = unsafe { value.as_mut() } {
        // SAFETY: the text is NULL or came from `c_string`.
        unsafe { cvt::free_text(v.text) };
        *v = swasm_nodeinfo_value {
            kind: 0,
            count: 0,
            memory: 0,
            text: null_mut(),
            weighted: 0.0,
        };
    }
}

/// `select-jobinfo` field: Slurm's `SELECT_JOBDATA_PTR` (not meaningful
/// across the boundary; the plugin answers an error).
pub const SWASM_SELECT_JOBDATA_PTR: u32 = 15;
/// `SELECT_JOBDATA_CLEANING`.
pub const SWASM_SELECT_JOBDATA_CLEANING: u32 = 22;
/// `SELECT_JOBDATA_NETWORK`.
pub const SWASM_SELECT_JOBDATA_NETWORK: u32 = 23;

fn jobinfo_field(field: u32, what: &str) -> Result<JobinfoField, Failure> {
    choice(field, what, |f| {
        Some(match f {
            SWASM_SELECT_JOBDATA_PTR => JobinfoField::Ptr,
            SWASM_SELECT_JOBDATA_CLEANING => JobinfoField::Cleaning,
            SWASM_SELECT_JOBDATA_NETWORK => JobinfoField::Network,
            _ => return None,
        })
    })
}

/// Kind of a [`swasm_jobinfo_value`]: `text`.
pub const SWASM_JOBINFO_TEXT: u32 = 0;
/// Kind of a [`swasm_jobinfo_value`]: `flag`.
pub const SWASM_JOBINFO_FLAG: u32 = 1;
/// Kind of a [`swasm_jobinfo_value`]: `count`.
pub const SWASM_JOBINFO_COUNT: u32 = 2;

/// A jobinfo value: `kind` says which field holds it. Given to
/// [`swasm_select_jobinfo_set`] by the caller; filled by
/// [`swasm_select_jobinfo_get`] with a library-owned `text` (free with
/// [`swasm_jobinfo_value_free`]).
#[repr(C)]
pub struct swasm_jobinfo_value {
    pub kind: u32,
    /// NULL reads as empty; NULL in an answer unless `kind` is
    /// `SWASM_JOBINFO_TEXT`.
    pub text: *const c_char,
    pub flag: bool,
    pub count: u32,
}

impl swasm_jobinfo_value {
    /// # Safety
    /// `text` NULL or NUL-terminated.
    unsafe fn read(&self, what: &str) -> Result<JobinfoValue, Failure> {
        // SAFETY: as the caller promised.
        let text = unsafe { text(self.text) };
        choice(self.kind, &format!("{what}.kind"), |k| {
            Some(match k {
                SWASM_JOBINFO_TEXT => JobinfoValue::Text(text),
                SWASM_JOBINFO_FLAG => JobinfoValue::Flag(self.flag),
                SWASM_JOBINFO_COUNT => JobinfoValue::Count(self.count),
                _ => return None,
            })
        })
    }
}

impl From<JobinfoValue> for swasm_jobinfo_value {
    fn from(v: JobinfoValue) -> Self {
        match v {
            JobinfoValue::Text(t) => swasm_jobinfo_value {
                kind: SWASM_JOBINFO_TEXT,
                text: own::text(&t),
                flag: false,
                count: 0,
            },
            JobinfoValue::Flag(flag) => swasm_jobinfo_value {
                kind: SWASM_JOBINFO_FLAG,
                text: null(),
                flag,
                count: 0,
            },
            JobinfoValue::Count(count) => swasm_jobinfo_value {
                kind: SWASM_JOBINFO_COUNT,
                text: null(),
                flag: false,
                count,
            },
        }
    }
}

/// Frees the text of a jobinfo value filled by
/// [`swasm_select_jobinfo_get`] and zeroes it; does nothing for NULL.
/// Never for a value the caller filled.
///
/// # Safety
/// `value` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_jobinfo_value_free(value: *mut swasm_jobinfo_value) {
    // SAFETY: as the caller promised.
    if let Some(v) = unsafe { value.as_mut() } {
        // SAFETY: the text is NULL or the library's.
        unsafe { own::free_const_text(v.text) };
        *v = swasm_jobinfo_value {
            kind: 0,
            text: null(),
            flag: false,
            count: 0,
        };
    }
}

/// How [`swasm_select_jobinfo_to_string`] formats: Slurm's
/// `SELECT_PRINT_HEAD`.
pub const SWASM_SELECT_PRINT_HEAD: u32 = 0;
/// `SELECT_PRINT_DATA`.
pub const SWASM_SELECT_PRINT_DATA: u32 = 1;
/// `SELECT_PRINT_MIXED`.
pub const SWASM_SELECT_PRINT_MIXED: u32 = 2;
/// `SELECT_PRINT_MIXED_SHORT`.
pub const SWASM_SELECT_PRINT_MIXED_SHORT: u32 = 3;

/// `select_p_get_info_from_plugin` selector: Slurm's `SELECT_CR_PLUGIN`
/// (a `SWASM_PLUGIN_INFO_NUMBER`: `SELECT_TYPE_CONS_RES` 1,
/// `SELECT_TYPE_CONS_TRES` 2, or 0).
pub const SWASM_SELECT_CR_PLUGIN: u32 = 0;
/// `SELECT_CONFIG_INFO` (a `SWASM_PLUGIN_INFO_CONFIG`).
pub const SWASM_SELECT_CONFIG_INFO: u32 = 6;
/// `SELECT_SINGLE_JOB_TEST` (a `SWASM_PLUGIN_INFO_FLAG`).
pub const SWASM_SELECT_SINGLE_JOB_TEST: u32 = 7;

/// Kind of a [`swasm_plugin_info_value`]: `flag`.
pub const SWASM_PLUGIN_INFO_FLAG: u32 = 0;
/// Kind of a [`swasm_plugin_info_value`]: `number`.
pub const SWASM_PLUGIN_INFO_NUMBER: u32 = 1;
/// Kind of a [`swasm_plugin_info_value`]: `config` (key/value pairs).
pub const SWASM_PLUGIN_INFO_CONFIG: u32 = 2;

/// An answer of `get-info-from-plugin`, owned by the library: `kind` says
/// which field holds it. Free with [`swasm_plugin_info_value_free`].
#[repr(C)]
pub struct swasm_plugin_info_value {
    pub kind: u32,
    pub flag: bool,
    pub number: u32,
    pub config: *mut swasm_key_value,
    pub n_config: usize,
}

impl From<PluginInfoValue> for swasm_plugin_info_value {
    fn from(v: PluginInfoValue) -> Self {
        let mut out = swasm_plugin_info_value {
            kind: SWASM_PLUGIN_INFO_FLAG,
            flag: false,
            number: 0,
            config: null_mut(),
            n_config: 0,
        };
        match v {
            PluginInfoValue::Flag(f) => out.flag = f,
            PluginInfoValue::Number(n) => {
                out.kind = SWASM_PLUGIN_INFO_NUMBER;
                out.number = n;
            }
            PluginInfoValue::Config(pairs) => {
                out.kind = SWASM_PLUGIN_INFO_CONFIG;
                (out.config, out.n_config) = owned(pairs.iter().map(own::key_value).collect());
            }
        }
        out
    }
}

/// Frees the pairs of a plugin info value and zeroes it; does nothing for
/// NULL.
///
/// # Safety
/// `value` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_plugin_info_value_free(value: *mut swasm_plugin_info_value) {
    // SAFETY: as the caller promised.
    if let Some(v) = unsafe { value.as_mut() } {
        // SAFETY: the pairs came from `owned` and `own::key_value`.
        for kv in unsafe { take(v.config, v.n_config) } {
            // SAFETY: as above.
            unsafe { own::free_key_value(kv) };
        }
        *v = swasm_plugin_info_value {
            kind: 0,
            flag: false,
            number: 0,
            config: null_mut(),
            n_config: 0,
        };
    }
}

/// A reservation request (`resv_desc_msg_t` and what `select_p_resv_test`
/// reads).
#[repr(C)]
pub struct swasm_reservation_request {
    /// Nodes wanted (0: `core_count` only).
    pub node_count: u32,
    /// Cores wanted in total, or per node in `cores_per_node` when given.
    pub core_count: u32,
    pub cores_per_node: *const u32,
    pub n_cores_per_node: usize,
    /// Nodes the reservation may use (`avail_bitmap`).
    pub available: swasm_bitmap,
    /// Cores already reserved, cluster-wide as in
    /// [`swasm_job_test_request::excluded_cores`]; NULL for none.
    pub excluded_cores: *const swasm_bitmap,
    /// `RESERVE_FLAG_*` bits as they are.
    pub flags: u64,
}

/// The answer of `resv-test`, owned by the library: the nodes, and for a
/// core reservation the cluster-wide cores (NULL otherwise). Free with
/// [`swasm_reservation_result_free`].
#[repr(C)]
pub struct swasm_reservation_result {
    pub nodes: swasm_bitmap,
    pub cores: *const swasm_bitmap,
}

impl From<ReservationResult> for swasm_reservation_result {
    fn from(r: ReservationResult) -> Self {
        swasm_reservation_result {
            nodes: own::bitmap(&r.nodes),
            cores: own::opt_bitmap(r.cores.as_ref()),
        }
    }
}

/// Frees a reservation result and zeroes it; does nothing for NULL.
///
/// # Safety
/// `result` is NULL, zeroed, or filled by [`swasm_select_resv_test`] and
/// not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_reservation_result_free(result: *mut swasm_reservation_result) {
    // SAFETY: as the caller promised.
    if let Some(r) = unsafe { result.as_mut() } {
        // SAFETY: both came from `own`.
        unsafe {
            own::free_bitmap(&mut r.nodes);
            own::free_opt_bitmap(r.cores);
        }
        r.cores = null();
    }
}

/// Checks that an out pointer is not NULL, before the call.
fn out_ok<T>(out: *mut T, function: &str, name: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::new(format!("{function}: {name} is NULL")));
    }
    Ok(())
}

/// The body of the functions taking one job and answering nothing.
///
/// # Safety
/// As those functions.
unsafe fn job_call(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    error: *mut swasm_error,
    function: &str,
    call: impl FnOnce(&SelectPlugin, &Job) -> Result<(), CallError>,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, function, |p| {
            let job = record(job, &format!("{function}: job"))?.read()?;
            Ok(call(p, &job)?)
        })
    }
}

/// Opens the select slot `slot` of `host` (NULL: `[plugins.select]`).
///
/// Cheap, as `swasm_priority_open`. Every client command `dlopen`s select
/// plugins: a shim opens the host only in slurmctld. Returns NULL with
/// `error` set (the message naming the host configuration, the slot and
/// what is wrong) on failure. Close with [`swasm_select_close`].
///
/// # Safety
/// `host` is NULL or an open host; `slot` NULL or a NUL-terminated string;
/// `error` NULL or an initialised `swasm_error`.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_open(
    host: *const swasm_host,
    slot: *const c_char,
    error: *mut swasm_error,
) -> *mut swasm_select_plugin {
    // SAFETY: as the caller promised.
    unsafe { kind::open(host, slot, error, "swasm_select_open", swasm_select_plugin) }
}

/// Closes a select handle without calling `fini`; the nodeinfos and
/// jobinfos it made are dropped with it (free their handles with a NULL
/// plugin). Does nothing for NULL.
///
/// # Safety
/// `plugin` is NULL or an open handle, not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_close(plugin: *mut swasm_select_plugin) {
    // SAFETY: as the caller promised.
    unsafe { kind::close(plugin) }
}

/// Loads the plugin now (see `swasm_priority_load`; the same failures, for
/// the select kind).
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_load(
    plugin: *const swasm_select_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::load(plugin, error, "swasm_select_load") }
}

/// Fills `out` with what the plugin says of itself (loading it first),
/// `plugin_id` included (cons_tres 109, linear 102). Free its strings with
/// `swasm_plugin_identity_free`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_identity(
    plugin: *const swasm_select_plugin,
    out: *mut swasm_plugin_identity,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::identity(plugin, out, error, "swasm_select_identity") }
}

/// The plugin's `init`. Every other contract function fails until an
/// `init` has succeeded; the configuration is kept for restarts.
/// select/linear refuses `CR_CPU`, `CR_Core` and `CR_Socket` here, as Slurm
/// does.
///
/// # Safety
/// `plugin` is NULL or an open handle; `config` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_init(
    plugin: *const swasm_select_plugin,
    config: *const swasm_select_config,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_select_init", |p| {
            let config = record(config, "swasm_select_init: config")?.read()?;
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
pub unsafe extern "C" fn swasm_select_reload(
    plugin: *const swasm_select_plugin,
    replaced: *mut bool,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::reload(plugin, replaced, error, "swasm_select_reload") }
}

/// The plugin's `fini`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_fini(
    plugin: *const swasm_select_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { with_plugin(plugin, error, "swasm_select_fini", |p| Ok(p.fini()?)) }
}

/// `select_p_state_save`: saves the plugin's state to the state file
/// `path`, or (NULL) to `<state_dir>/<slot>.state` of the host
/// configuration (`select.state`; Slurm's `dir` argument is the
/// controller's StateSaveLocation, which the shim may pass as
/// `<dir>/select_wasm.state`). Written atomically with a checked header.
/// Fails with the plugin's code when its `state-save` fails, `SLURM_ERROR`
/// when the file cannot be written or no path is known.
///
/// # Safety
/// `plugin` is NULL or an open handle; `path` NULL or a NUL-terminated
/// string; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_state_save(
    plugin: *const swasm_select_plugin,
    path: *const c_char,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::state_save(plugin, path, error, "swasm_select_state_save") }
}

/// `select_p_state_restore`: restores from the state file `path` (NULL:
/// `<state_dir>/<slot>.state`). A damaged or foreign file is refused whole
/// (`SLURM_ERROR`) before the plugin sees it; a missing one fails with
/// code `ENOENT` (a first start).
///
/// # Safety
/// As [`swasm_select_state_save`].
#[no_mangle]
pub unsafe extern "C" fn swasm_select_state_restore(
    plugin: *const swasm_select_plugin,
    path: *const c_char,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::state_restore(plugin, path, error, "swasm_select_state_restore") }
}

/// `select_p_job_init`: the `n_jobs` running and suspended jobs after a
/// restart, each with its `resources`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `jobs` holds `n_jobs` valid jobs;
/// `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_init(
    plugin: *const swasm_select_plugin,
    jobs: *const swasm_job,
    n_jobs: usize,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_job_init";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let jobs = read_jobs(jobs, n_jobs, &format!("{F}: jobs"))?;
            Ok(p.job_init(&jobs)?)
        })
    }
}

/// `select_p_node_init`: the complete node table (`n_nodes` nodes, node
/// `i` with index `i`); discards previous usage. The host keeps the table
/// to check every allocation against it.
///
/// # Safety
/// `plugin` is NULL or an open handle; `nodes` holds `n_nodes` valid
/// nodes; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_node_init(
    plugin: *const swasm_select_plugin,
    nodes: *const swasm_node,
    n_nodes: usize,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_node_init";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let nodes = read_nodes(nodes, n_nodes, &format!("{F}: nodes"))?;
            Ok(p.node_init(&nodes)?)
        })
    }
}

/// `select_p_job_test`: chooses nodes and resources for `request->job`
/// (see the modes). On success `*out` holds the answer (free with
/// [`swasm_job_test_result_free`]), checked against the candidates, the
/// node table and the preemption candidates. Plugin errors keep Slurm's
/// codes (`EINVAL`, `ESLURM_NODES_BUSY`,
/// `ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE`, ...): the job cannot run
/// there, not a fault. An unknown mode, flag or preempt mode is refused.
///
/// # Safety
/// `plugin` is NULL or an open handle; `request` valid; `out` valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_test(
    plugin: *const swasm_select_plugin,
    request: *const swasm_job_test_request,
    out: *mut swasm_job_test_result,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_job_test";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let request = record(request, &format!("{F}: request"))?
                .read()
                .map_err(|e| Failure::new(format!("{F}: {}", e.message)))?;
            out_ok(out, F, "out")?;
            put(out, p.job_test(&request)?.into(), "out")
        })
    }
}

/// `select_g_select_jobinfo_set(SELECT_JOBDATA_NETWORK)`, which slurmctld
/// calls when it creates or updates a job: tells a select wrapper, and
/// each wrapper under it, job `job_id`'s `--network` (`job_ptr->network`;
/// NULL forgets the job), which their `job-network` import answers from
/// then on (select/cray_aries reads it in job-test, job-begin and
/// job-fini). Call it before those calls; for a plugin that is no wrapper
/// it does nothing and succeeds.
///
/// # Safety
/// `plugin` is NULL or an open handle; `network` NULL or a NUL-terminated
/// string; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_set_job_network(
    plugin: *const swasm_select_plugin,
    job_id: u32,
    network: *const c_char,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    let network = unsafe { cvt::opt_text(network) };
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_select_set_job_network", |p| {
            p.set_job_network(job_id, network.as_deref());
            Ok(())
        })
    }
}

/// `select_p_job_begin`: the job (with its `resources`, as the job test
/// gave them) starts; the plugin adds its usage. Call it where cons_tres
/// commits (`select_p_select_nodeinfo_set`).
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_begin(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        job_call(
            plugin,
            job,
            error,
            "swasm_select_job_begin",
            SelectPlugin::job_begin,
        )
    }
}

/// `select_p_job_ready`: are the job's nodes ready (booted, powered up)?
/// Writes the answer to `*out_ready`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `out_ready` valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_ready(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    out_ready: *mut bool,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_job_ready";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let job = record(job, &format!("{F}: job"))?.read()?;
            out_ok(out_ready, F, "out_ready")?;
            put(out_ready, p.job_ready(&job)?, "out_ready")
        })
    }
}

/// `select_p_job_expand_allow` (seed API): may jobs be merged? Writes the
/// answer to `*out_allowed`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `out_allowed` valid for writing;
/// `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_expand_allow(
    plugin: *const swasm_select_plugin,
    out_allowed: *mut bool,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_job_expand_allow";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            out_ok(out_allowed, F, "out_allowed")?;
            put(out_allowed, p.job_expand_allow()?, "out_allowed")
        })
    }
}

/// `select_p_job_expand`: moves every resource of `from` into `to`. On
/// success `*out` holds `to`'s new resources (free with
/// `swasm_job_resources_free`), checked to use only the two jobs' nodes.
///
/// # Safety
/// `plugin` is NULL or an open handle; `from` and `to` valid; `out` valid
/// for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_expand(
    plugin: *const swasm_select_plugin,
    from: *const swasm_job,
    to: *const swasm_job,
    out: *mut swasm_job_resources,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_job_expand";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let from = record(from, &format!("{F}: from"))?.read()?;
            let to = record(to, &format!("{F}: to"))?.read()?;
            out_ok(out, F, "out")?;
            put(out, own::job_resources(&p.job_expand(&from, &to)?), "out")
        })
    }
}

/// `select_p_job_resized`: node `node_index` (of the node table) left the
/// job; the plugin releases its resources there.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_resized(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    node_index: u32,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        job_call(plugin, job, error, "swasm_select_job_resized", |p, j| {
            p.job_resized(j, node_index)
        })
    }
}

/// `select_p_job_signal`: `signal` is being sent to the job.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_signal(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    signal: i32,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        job_call(plugin, job, error, "swasm_select_job_signal", |p, j| {
            p.job_signal(j, signal)
        })
    }
}

/// `select_p_job_mem_confirm` (seed API; gone from Slurm 21.08).
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_mem_confirm(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        job_call(
            plugin,
            job,
            error,
            "swasm_select_job_mem_confirm",
            SelectPlugin::job_mem_confirm,
        )
    }
}

/// `select_p_job_fini`: the job ended; the plugin releases its usage.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_fini(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        job_call(
            plugin,
            job,
            error,
            "swasm_select_job_fini",
            SelectPlugin::job_fini,
        )
    }
}

/// `select_p_job_suspend`: `indefinite` when an administrator suspends the
/// job (not gang scheduling).
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_suspend(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    indefinite: bool,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        job_call(plugin, job, error, "swasm_select_job_suspend", |p, j| {
            p.job_suspend(j, indefinite)
        })
    }
}

/// `select_p_job_resume`; the job's `end_time` is its new planned end.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_job_resume(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    indefinite: bool,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        job_call(plugin, job, error, "swasm_select_job_resume", |p, j| {
            p.job_resume(j, indefinite)
        })
    }
}

/// `select_p_step_pick_nodes`: nodes for a step of `node_count` nodes among
/// `available` (NULL: the job's). Writes whether the plugin chose to
/// `*out_picked` and, when it did, the nodes to `*out_nodes` (free with
/// `swasm_bitmap_free`; untouched otherwise). linear and cons_tres let the
/// controller choose.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` and `step` valid; `available`
/// NULL or valid; the outputs valid for writing; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_step_pick_nodes(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    step: *const swasm_step,
    node_count: u32,
    available: *const swasm_bitmap,
    out_picked: *mut bool,
    out_nodes: *mut swasm_bitmap,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_step_pick_nodes";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let job = record(job, &format!("{F}: job"))?.read()?;
            let step = record(step, &format!("{F}: step"))?.read()?;
            let available = opt_bitmap(available, &format!("{F}: available"))?;
            out_ok(out_picked, F, "out_picked")?;
            out_ok(out_nodes, F, "out_nodes")?;
            let picked = p.step_pick_nodes(&job, &step, node_count, available.as_ref())?;
            if let Some(nodes) = &picked {
                put(out_nodes, own::bitmap(nodes), "out_nodes")?;
            }
            put(out_picked, picked.is_some(), "out_picked")
        })
    }
}

/// `select_p_step_finish`: a step ended; `killing` when the job is being
/// killed.
///
/// # Safety
/// `plugin` is NULL or an open handle; `step` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_step_finish(
    plugin: *const swasm_select_plugin,
    step: *const swasm_step,
    killing: bool,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_step_finish";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let step = record(step, &format!("{F}: step"))?.read()?;
            Ok(p.step_finish(&step, killing)?)
        })
    }
}

/// `select_p_step_start`: step `step_id` of `job` starts on `nodes`
/// (`step_node_bitmap`). A component without the optional `select-steps`
/// export is not called (success), as Slurm's select/linear and
/// select/cons_tres do nothing here.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` and `nodes` valid; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_step_start(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    step_id: u32,
    nodes: *const swasm_bitmap,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_step_start";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let job = record(job, &format!("{F}: job"))?.read()?;
            let nodes = record(nodes, &format!("{F}: nodes"))?.read(&format!("{F}: nodes"))?;
            Ok(p.step_start(&job, step_id, &nodes)?)
        })
    }
}

/// The nodes of `job` its next step may use (`*avail_nodes` of
/// `select_p_step_pick_nodes`, which slurmctld intersects with its own
/// candidates). Writes whether the plugin restricts to `*out_restricted`
/// and, when it does, the nodes to `*out_nodes` (a node-table map of some
/// of the job's nodes, possibly none; free with `swasm_bitmap_free`;
/// untouched otherwise). A component without the optional `select-steps`
/// export does not restrict, as Slurm's select/linear and
/// select/cons_tres.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; the outputs valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_step_avail_nodes(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    out_restricted: *mut bool,
    out_nodes: *mut swasm_bitmap,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_step_avail_nodes";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let job = record(job, &format!("{F}: job"))?.read()?;
            out_ok(out_restricted, F, "out_restricted")?;
            out_ok(out_nodes, F, "out_nodes")?;
            let avail = p.step_avail_nodes(&job)?;
            if let Some(nodes) = &avail {
                put(out_nodes, own::bitmap(nodes), "out_nodes")?;
            }
            put(out_restricted, avail.is_some(), "out_restricted")
        })
    }
}

/// `select_p_reconfigure`: the configuration changed; the plugin rebuilds
/// its usage from the `n_running` running jobs (with their resources).
/// The configuration is kept for restarts.
///
/// # Safety
/// `plugin` is NULL or an open handle; `config` valid; `running` holds
/// `n_running` valid jobs; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_reconfigure(
    plugin: *const swasm_select_plugin,
    config: *const swasm_select_config,
    running: *const swasm_job,
    n_running: usize,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_reconfigure";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let config = record(config, &format!("{F}: config"))?.read()?;
            let running = read_jobs(running, n_running, &format!("{F}: running"))?;
            Ok(p.reconfigure(&config, &running)?)
        })
    }
}

/// The body of the node update functions.
///
/// # Safety
/// As those functions.
unsafe fn node_call(
    plugin: *const swasm_select_plugin,
    node: *const swasm_node,
    error: *mut swasm_error,
    function: &str,
    call: impl FnOnce(&SelectPlugin, &slurm_wasm_host::types::Node) -> Result<(), CallError>,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, function, |p| {
            let what = format!("{function}: node");
            let node = record(node, &what)?.read(&what)?;
            Ok(call(p, &node)?)
        })
    }
}

/// `select_p_update_node_config`: a node's configuration changed (the
/// whole record, `index` naming it).
///
/// # Safety
/// `plugin` is NULL or an open handle; `node` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_update_node_config(
    plugin: *const swasm_select_plugin,
    node: *const swasm_node,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        node_call(
            plugin,
            node,
            error,
            "swasm_select_update_node_config",
            SelectPlugin::update_node_config,
        )
    }
}

/// `select_p_update_node_state` (seed API; gone from Slurm 20.02): a
/// node's state changed.
///
/// # Safety
/// `plugin` is NULL or an open handle; `node` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_update_node_state(
    plugin: *const swasm_select_plugin,
    node: *const swasm_node,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        node_call(
            plugin,
            node,
            error,
            "swasm_select_update_node_state",
            SelectPlugin::update_node_state,
        )
    }
}

/// `select_p_node_ranking` (seed API): new weights for the `n_nodes`
/// nodes. Writes whether the plugin ranks to `*out_ranked` and, when it
/// does, one weight per node in order to `*out_weights` (free with
/// `swasm_u32_list_free`; untouched otherwise).
///
/// # Safety
/// `plugin` is NULL or an open handle; `nodes` holds `n_nodes` valid
/// nodes; the outputs valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_node_ranking(
    plugin: *const swasm_select_plugin,
    nodes: *const swasm_node,
    n_nodes: usize,
    out_ranked: *mut bool,
    out_weights: *mut swasm_u32_list,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_node_ranking";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let nodes = read_nodes(nodes, n_nodes, &format!("{F}: nodes"))?;
            out_ok(out_ranked, F, "out_ranked")?;
            out_ok(out_weights, F, "out_weights")?;
            let weights = p.node_ranking(&nodes)?;
            let ranked = weights.is_some();
            if let Some(weights) = weights {
                put(out_weights, swasm_u32_list::new(weights), "out_weights")?;
            }
            put(out_ranked, ranked, "out_ranked")
        })
    }
}

/// `select_p_select_nodeinfo_set_all`: the plugin refreshes every node's
/// nodeinfo from its usage tables.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_nodeinfo_set_all(
    plugin: *const swasm_select_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_select_nodeinfo_set_all", |p| {
            Ok(p.nodeinfo_set_all()?)
        })
    }
}

/// `select_p_select_nodeinfo_set`: the plugin refreshes the nodeinfo of
/// the job's nodes.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_nodeinfo_set(
    plugin: *const swasm_select_plugin,
    job: *const swasm_job,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        job_call(
            plugin,
            job,
            error,
            "swasm_select_nodeinfo_set",
            SelectPlugin::nodeinfo_set,
        )
    }
}

/// The nodeinfo of node `node_index`, as last refreshed (C code reads
/// `node_ptr->select_nodeinfo`; across the boundary it is asked for). On
/// success `*out` is a new handle (free with
/// [`swasm_select_nodeinfo_free`]).
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_node_nodeinfo(
    plugin: *const swasm_select_plugin,
    node_index: u32,
    out: *mut *mut swasm_select_nodeinfo,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_node_nodeinfo";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            resource::check_out(out, &format!("{F}: out"))?;
            resource::put_new(out, p, p.node_nodeinfo(node_index)?);
            Ok(())
        })
    }
}

/// `select_p_select_nodeinfo_alloc`: a new, empty nodeinfo; `*out` is its
/// handle (free with [`swasm_select_nodeinfo_free`]).
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_nodeinfo_alloc(
    plugin: *const swasm_select_plugin,
    out: *mut *mut swasm_select_nodeinfo,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_nodeinfo_alloc";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            resource::check_out(out, &format!("{F}: out"))?;
            resource::put_new(out, p, p.nodeinfo_alloc()?);
            Ok(())
        })
    }
}

/// `select_p_select_nodeinfo_pack`: the nodeinfo serialised for
/// `protocol_version`, into `*out` (free with `swasm_bytes_free`); the shim
/// packs the bytes into Slurm's buffer (`packmem`).
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` a live handle of it; `out`
/// valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_nodeinfo_pack(
    plugin: *const swasm_select_plugin,
    info: *const swasm_select_nodeinfo,
    protocol_version: u16,
    out: *mut swasm_bytes,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_nodeinfo_pack";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let info = resource::value(info, p, &format!("{F}: info"))?;
            out_ok(out, F, "out")?;
            put(
                out,
                swasm_bytes::new(p.nodeinfo_pack(info, protocol_version)?),
                "out",
            )
        })
    }
}

/// `select_p_select_nodeinfo_unpack`: a nodeinfo from the `len` bytes of a
/// pack; `*out` is its new handle. The plugin refuses truncated data and
/// unknown protocol versions.
///
/// # Safety
/// `plugin` is NULL or an open handle; `data` holds `len` bytes; `out`
/// valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_nodeinfo_unpack(
    plugin: *const swasm_select_plugin,
    data: *const u8,
    len: usize,
    protocol_version: u16,
    out: *mut *mut swasm_select_nodeinfo,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_nodeinfo_unpack";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let data = cvt::slice(data, len, &format!("{F}: data"))?;
            resource::check_out(out, &format!("{F}: out"))?;
            resource::put_new(out, p, p.nodeinfo_unpack(data, protocol_version)?);
            Ok(())
        })
    }
}

/// `select_p_select_nodeinfo_get`: `field` (a `SWASM_SELECT_NODEDATA_*`
/// value, Slurm's own) for nodes in `state` (Slurm's node state, e.g.
/// `NODE_STATE_ALLOCATED`), into `*out` (free with
/// [`swasm_nodeinfo_value_free`]). An unknown field is refused;
/// `SWASM_SELECT_NODEDATA_PTR` is answered with an error by the plugin.
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` a live handle of it; `out`
/// valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_nodeinfo_get(
    plugin: *const swasm_select_plugin,
    info: *const swasm_select_nodeinfo,
    field: u32,
    state: u32,
    out: *mut swasm_nodeinfo_value,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_nodeinfo_get";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let info = resource::value(info, p, &format!("{F}: info"))?;
            let field = choice(field, &format!("{F}: field"), |f| {
                Some(match f {
                    SWASM_SELECT_NODEDATA_SUBCNT => NodeinfoField::Subcnt,
                    SWASM_SELECT_NODEDATA_PTR => NodeinfoField::Ptr,
                    SWASM_SELECT_NODEDATA_MEM_ALLOC => NodeinfoField::MemAlloc,
                    SWASM_SELECT_NODEDATA_TRES_ALLOC_FMT_STR => NodeinfoField::TresAllocFmtStr,
                    SWASM_SELECT_NODEDATA_TRES_ALLOC_WEIGHTED => NodeinfoField::TresAllocWeighted,
                    _ => return None,
                })
            })?;
            out_ok(out, F, "out")?;
            put(out, p.nodeinfo_get(info, field, state)?.into(), "out")
        })
    }
}

/// `select_p_select_nodeinfo_free`: the plugin drops the nodeinfo and the
/// handle is freed (whatever the outcome). With `plugin` NULL (the plugin
/// handle already closed) only the handle is freed; a NULL `info` does
/// nothing. Fails, still freeing the handle, for a nodeinfo of another
/// plugin handle.
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` NULL or a live handle, not
/// used afterwards; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_nodeinfo_free(
    plugin: *const swasm_select_plugin,
    info: *mut swasm_select_nodeinfo,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        resource::free(
            plugin,
            info,
            error,
            "swasm_select_nodeinfo_free",
            SelectPlugin::drop_resource,
        )
    }
}

/// `select_p_select_jobinfo_alloc`: a new jobinfo; `*out` is its handle
/// (free with [`swasm_select_jobinfo_free`]).
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_jobinfo_alloc(
    plugin: *const swasm_select_plugin,
    out: *mut *mut swasm_select_jobinfo,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_jobinfo_alloc";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            resource::check_out(out, &format!("{F}: out"))?;
            resource::put_new(out, p, p.jobinfo_alloc()?);
            Ok(())
        })
    }
}

/// `select_p_select_jobinfo_copy`: a copy of `info`; `*out` is its new
/// handle.
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` a live handle of it; `out`
/// valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_jobinfo_copy(
    plugin: *const swasm_select_plugin,
    info: *const swasm_select_jobinfo,
    out: *mut *mut swasm_select_jobinfo,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_jobinfo_copy";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let info = resource::value(info, p, &format!("{F}: info"))?;
            resource::check_out(out, &format!("{F}: out"))?;
            resource::put_new(out, p, p.jobinfo_copy(info)?);
            Ok(())
        })
    }
}

/// `select_p_select_jobinfo_pack`: as [`swasm_select_nodeinfo_pack`], for
/// a jobinfo.
///
/// # Safety
/// As [`swasm_select_nodeinfo_pack`].
#[no_mangle]
pub unsafe extern "C" fn swasm_select_jobinfo_pack(
    plugin: *const swasm_select_plugin,
    info: *const swasm_select_jobinfo,
    protocol_version: u16,
    out: *mut swasm_bytes,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_jobinfo_pack";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let info = resource::value(info, p, &format!("{F}: info"))?;
            out_ok(out, F, "out")?;
            put(
                out,
                swasm_bytes::new(p.jobinfo_pack(info, protocol_version)?),
                "out",
            )
        })
    }
}

/// `select_p_select_jobinfo_unpack`: as [`swasm_select_nodeinfo_unpack`],
/// for a jobinfo.
///
/// # Safety
/// As [`swasm_select_nodeinfo_unpack`].
#[no_mangle]
pub unsafe extern "C" fn swasm_select_jobinfo_unpack(
    plugin: *const swasm_select_plugin,
    data: *const u8,
    len: usize,
    protocol_version: u16,
    out: *mut *mut swasm_select_jobinfo,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_jobinfo_unpack";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let data = cvt::slice(data, len, &format!("{F}: data"))?;
            resource::check_out(out, &format!("{F}: out"))?;
            resource::put_new(out, p, p.jobinfo_unpack(data, protocol_version)?);
            Ok(())
        })
    }
}

/// `select_p_select_jobinfo_get`: `field` (a `SWASM_SELECT_JOBDATA_*`
/// value, Slurm's own) into `*out` (free with
/// [`swasm_jobinfo_value_free`]). An unknown field is refused;
/// `SWASM_SELECT_JOBDATA_PTR` is answered with an error by the plugin.
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` a live handle of it; `out`
/// valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_jobinfo_get(
    plugin: *const swasm_select_plugin,
    info: *const swasm_select_jobinfo,
    field: u32,
    out: *mut swasm_jobinfo_value,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_jobinfo_get";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let info = resource::value(info, p, &format!("{F}: info"))?;
            let field = jobinfo_field(field, &format!("{F}: field"))?;
            out_ok(out, F, "out")?;
            put(out, p.jobinfo_get(info, field)?.into(), "out")
        })
    }
}

/// `select_p_select_jobinfo_set`: sets `field` to `*value` (the caller's;
/// the library copies it). An unknown field or value kind is refused.
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` a live handle of it; `value`
/// valid; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_jobinfo_set(
    plugin: *const swasm_select_plugin,
    info: *const swasm_select_jobinfo,
    field: u32,
    value: *const swasm_jobinfo_value,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_jobinfo_set";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let info = resource::value(info, p, &format!("{F}: info"))?;
            let field = jobinfo_field(field, &format!("{F}: field"))?;
            let what = format!("{F}: value");
            let value = record(value, &what)?.read(&what)?;
            Ok(p.jobinfo_set(info, field, &value)?)
        })
    }
}

/// `select_p_select_jobinfo_sprint` / `_xstrdup`: the jobinfo as text in
/// `mode` (a `SWASM_SELECT_PRINT_*` value, Slurm's own; others refused).
/// On success `*out` is a library-owned string: free it with
/// `swasm_string_free` (the shim copies it into Slurm's buffer or an
/// `xstrdup`).
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` a live handle of it; `out`
/// valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_jobinfo_to_string(
    plugin: *const swasm_select_plugin,
    info: *const swasm_select_jobinfo,
    mode: u32,
    out: *mut *mut c_char,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_jobinfo_to_string";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let info = resource::value(info, p, &format!("{F}: info"))?;
            let mode = choice(mode, &format!("{F}: mode"), |m| {
                Some(match m {
                    SWASM_SELECT_PRINT_HEAD => SprintMode::Head,
                    SWASM_SELECT_PRINT_DATA => SprintMode::Data,
                    SWASM_SELECT_PRINT_MIXED => SprintMode::Mixed,
                    SWASM_SELECT_PRINT_MIXED_SHORT => SprintMode::MixedShort,
                    _ => return None,
                })
            })?;
            out_ok(out, F, "out")?;
            put(out, c_string(&p.jobinfo_to_string(info, mode)?), "out")
        })
    }
}

/// `select_p_select_jobinfo_free`: as [`swasm_select_nodeinfo_free`], for
/// a jobinfo.
///
/// # Safety
/// As [`swasm_select_nodeinfo_free`].
#[no_mangle]
pub unsafe extern "C" fn swasm_select_jobinfo_free(
    plugin: *const swasm_select_plugin,
    info: *mut swasm_select_jobinfo,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        resource::free(
            plugin,
            info,
            error,
            "swasm_select_jobinfo_free",
            SelectPlugin::drop_resource,
        )
    }
}

/// `select_p_get_info_from_plugin`: `field` (a `SWASM_SELECT_*` selector,
/// Slurm's own value; others refused) about `job` (NULL: none), into
/// `*out` (free with [`swasm_plugin_info_value_free`]). For
/// `SWASM_SELECT_CR_PLUGIN` a shim must answer `SELECT_TYPE_CONS_TRES` for
/// gres/mps and `--gpus` to work.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` NULL or valid; `out` valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_get_info_from_plugin(
    plugin: *const swasm_select_plugin,
    field: u32,
    job: *const swasm_job,
    out: *mut swasm_plugin_info_value,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_get_info_from_plugin";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let field = choice(field, &format!("{F}: field"), |f| {
                Some(match f {
                    SWASM_SELECT_CR_PLUGIN => PluginInfoField::CrPlugin,
                    SWASM_SELECT_CONFIG_INFO => PluginInfoField::ConfigInfo,
                    SWASM_SELECT_SINGLE_JOB_TEST => PluginInfoField::SingleJobTest,
                    _ => return None,
                })
            })?;
            let job = job.as_ref().map(|j| j.read()).transpose()?;
            out_ok(out, F, "out")?;
            put(
                out,
                p.get_info_from_plugin(field, job.as_ref())?.into(),
                "out",
            )
        })
    }
}

/// `select_p_resv_test`: nodes (and, for a core reservation, cores) for an
/// advanced reservation, into `*out` (free with
/// [`swasm_reservation_result_free`]), checked to stay inside what was
/// offered and asked for. The plugin fails (`ESLURM_NODES_BUSY`, ...) when
/// no such set exists.
///
/// # Safety
/// `plugin` is NULL or an open handle; `request` valid; `out` valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_resv_test(
    plugin: *const swasm_select_plugin,
    request: *const swasm_reservation_request,
    out: *mut swasm_reservation_result,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_resv_test";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let r = record(request, &format!("{F}: request"))?;
            let request = ReservationRequest {
                node_count: r.node_count,
                core_count: r.core_count,
                cores_per_node: cvt::slice(
                    r.cores_per_node,
                    r.n_cores_per_node,
                    &format!("{F}: request.cores_per_node"),
                )?
                .to_vec(),
                available: r.available.read(&format!("{F}: request.available"))?,
                excluded_cores: opt_bitmap(
                    r.excluded_cores,
                    &format!("{F}: request.excluded_cores"),
                )?,
                flags: r.flags,
            };
            out_ok(out, F, "out")?;
            put(out, p.resv_test(&request)?.into(), "out")
        })
    }
}

/// `select_p_ba_init` (seed API): block-allocator setup, nothing on flat
/// systems.
///
/// # Safety
/// `plugin` is NULL or an open handle; `nodes` holds `n_nodes` valid
/// nodes; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_ba_init(
    plugin: *const swasm_select_plugin,
    nodes: *const swasm_node,
    n_nodes: usize,
    sanity_check: bool,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_ba_init";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let nodes = read_nodes(nodes, n_nodes, &format!("{F}: nodes"))?;
            Ok(p.ba_init(&nodes, sanity_check)?)
        })
    }
}

/// `select_p_ba_get_dims` (seed API): writes whether the system has
/// dimensions to `*out_has` and, when it has, them to `*out_dims` (free
/// with `swasm_u32_list_free`; untouched otherwise).
///
/// # Safety
/// `plugin` is NULL or an open handle; the outputs valid for writing;
/// `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_select_ba_get_dims(
    plugin: *const swasm_select_plugin,
    out_has: *mut bool,
    out_dims: *mut swasm_u32_list,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_select_ba_get_dims";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            out_ok(out_has, F, "out_has")?;
            out_ok(out_dims, F, "out_dims")?;
            let dims = p.ba_get_dims()?;
            let has = dims.is_some();
            if let Some(dims) = dims {
                put(out_dims, swasm_u32_list::new(dims), "out_dims")?;
            }
            put(out_has, has, "out_has")
        })
    }
}
