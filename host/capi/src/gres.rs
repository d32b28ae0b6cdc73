//! The gres kind (`wit/gres.wit`): one function per contract function, for
//! the replacement `gres_gpu.so` and `gres_mps.so` shims in slurmctld,
//! slurmd, slurmstepd and the task child.
//!
//! A gres plugin manages one GRES name, so a host configures one slot per
//! name (`[plugins.gres.gpu]`, `[plugins.gres.mps]`) and a shim opens its
//! own by name (`swasm_gres_open(host, "gres.gpu", ...)`).
//!
//! Environment functions return edits ([`swasm_env_change_list`]) that the
//! shim applies to Slurm's `char ***env` in order (`env_array_overwrite`
//! for a set, `unsetenvp` for an unset); the host has already refused any
//! variable a gres plugin may not touch.
#![allow(non_camel_case_types)]

use std::ffi::c_char;
use std::ptr::{null, null_mut};

use slurm_wasm_host::kinds::gres::{
    Device, EnvChange, EnvFlags, EpilogInfo, GresConfRecord, GresConfig, InfoField, InfoValue,
    NodeAllocation, NodeConfigResult, NodeHardware,
};
use slurm_wasm_host::types::GresAllocation;
use slurm_wasm_host::{CallError, GresPlugin};

use crate::cvt::{self, choice, list, opt_text, owned, put, record, take, text, texts};
use crate::error::{c_string, swasm_error, Failure};
use crate::host::swasm_host;
use crate::kind::{self, with_plugin, Handle, KindHandle};
use crate::owned::{self as own, swasm_bytes};
use crate::resource::{self, Resource, ResourceHandle};
use crate::types::{
    opt_bitmap, swasm_bitmap, swasm_cluster_config, swasm_gres_allocation, swasm_gres_count,
    swasm_job, swasm_plugin_identity, swasm_step,
};

/// A gres slot of a host. Opaque; thread-safe: calls from several threads
/// are serialised on the plugin's own lock.
pub struct swasm_gres_plugin(KindHandle<GresPlugin>);

impl Handle for swasm_gres_plugin {
    type Plugin = GresPlugin;
    fn kind(&self) -> &KindHandle<GresPlugin> {
        &self.0
    }
}

/// A job's per-node GRES allocations kept by the plugin for the prolog and
/// epilog (`gres_epilog_info_t`), from [`swasm_gres_epilog_build_env`].
/// Opaque: free with [`swasm_gres_epilog_info_free`].
pub struct swasm_gres_epilog_info(Resource<EpilogInfo>);

impl ResourceHandle for swasm_gres_epilog_info {
    type Value = EpilogInfo;
    fn wrap(resource: Resource<EpilogInfo>) -> Self {
        swasm_gres_epilog_info(resource)
    }
    fn resource(&self) -> &Resource<EpilogInfo> {
        &self.0
    }
}

/// The argument of the gres plugin's `init` (`gres-config`).
#[repr(C)]
pub struct swasm_gres_config {
    pub cluster: swasm_cluster_config,
    /// `AutoDetect=` of gres.conf (`nvml`, `rsmi`, `off`, ...); NULL for
    /// none.
    pub auto_detect: *const c_char,
}

/// One gres.conf record (`gres_slurmd_conf_t`). In results (from
/// [`swasm_gres_node_config_load`]) the strings, lists and bitmap are the
/// library's: free them with the result.
#[repr(C)]
pub struct swasm_gres_conf_record {
    /// `file:line` the record came from, for messages.
    pub origin: *const c_char,
    pub name: *const c_char,
    /// NULL for none.
    pub type_name: *const c_char,
    /// `File=` expanded (`/dev/nvidia[0-3]` gives four paths).
    pub files: *const *const c_char,
    pub n_files: usize,
    pub count: u64,
    /// `Cores=` as abstract core indices of the node; NULL for none.
    pub cores: *const swasm_bitmap,
    /// `Links=` as written; NULL for none.
    pub links: *const c_char,
    /// `Flags=` tokens (`CountOnly`, `nvidia_gpu_env`, ...).
    pub flags: *const *const c_char,
    pub n_flags: usize,
    /// `UniqueId=` or the detected UUID; NULL for none.
    pub unique_id: *const c_char,
}

impl swasm_gres_conf_record {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self, what: &str) -> Result<GresConfRecord, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(GresConfRecord {
                origin: text(self.origin),
                name: text(self.name),
                type_name: opt_text(self.type_name),
                files: texts(self.files, self.n_files, &format!("{what}.files"))?,
                count: self.count,
                cores: opt_bitmap(self.cores, &format!("{what}.cores"))?,
                links: opt_text(self.links),
                flags: texts(self.flags, self.n_flags, &format!("{what}.flags"))?,
                unique_id: opt_text(self.unique_id),
            })
        }
    }

    fn owned(r: &GresConfRecord) -> swasm_gres_conf_record {
        let strings = |items: &[String]| {
            owned(
                items
                    .iter()
                    .map(|s| own::text(s))
                    .collect::<Vec<*const c_char>>(),
            )
        };
        let (files, n_files) = strings(&r.files);
        let (flags, n_flags) = strings(&r.flags);
        swasm_gres_conf_record {
            origin: own::text(&r.origin),
            name: own::text(&r.name),
            type_name: own::opt_text(r.type_name.as_deref()),
            files,
            n_files,
            count: r.count,
            cores: own::opt_bitmap(r.cores.as_ref()),
            links: own::opt_text(r.links.as_deref()),
            flags,
            n_flags,
            unique_id: own::opt_text(r.unique_id.as_deref()),
        }
    }

    /// # Safety
    /// `self` was made by [`Self::owned`] and is not used afterwards.
    unsafe fn free(self) {
        // SAFETY: as the caller promised: every part is the library's.
        unsafe {
            for s in [
                self.origin,
                self.name,
                self.type_name,
                self.links,
                self.unique_id,
            ] {
                own::free_const_text(s);
            }
            for s in take(self.files.cast_mut(), self.n_files) {
                own::free_const_text(s);
            }
            for s in take(self.flags.cast_mut(), self.n_flags) {
                own::free_const_text(s);
            }
            own::free_opt_bitmap(self.cores);
        }
    }
}

/// The node a gres.conf applies to (`node_config_load_t` and the node's
/// slurm.conf line).
#[repr(C)]
pub struct swasm_node_hardware {
    pub name: *const c_char,
    pub cpus: u16,
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    /// `Gres=` of the node's slurm.conf line.
    pub configured: *const swasm_gres_count,
    pub n_configured: usize,
}

impl swasm_node_hardware {
    /// # Safety
    /// Every pointer as the header's conventions say.
    unsafe fn read(&self) -> Result<NodeHardware, Failure> {
        // SAFETY: as the caller promised.
        unsafe {
            Ok(NodeHardware {
                name: text(self.name),
                cpus: self.cpus,
                sockets: self.sockets,
                cores_per_socket: self.cores_per_socket,
                threads_per_core: self.threads_per_core,
                configured: list(self.configured, self.n_configured, "node.configured", |g| {
                    Ok(g.read())
                })?,
            })
        }
    }
}

/// The answer of `node-config-load`, owned by the library: the records
/// after validation and merging with detected devices, in Slurm's order,
/// and non-fatal mismatches worded as Slurm logs them. Free with
/// [`swasm_node_config_result_free`].
#[repr(C)]
pub struct swasm_node_config_result {
    pub records: *mut swasm_gres_conf_record,
    pub n_records: usize,
    pub warnings: *mut *mut c_char,
    pub n_warnings: usize,
}

impl From<NodeConfigResult> for swasm_node_config_result {
    fn from(r: NodeConfigResult) -> Self {
        let (records, n_records) = owned(
            r.records
                .iter()
                .map(swasm_gres_conf_record::owned)
                .collect(),
        );
        let (warnings, n_warnings) = owned(r.warnings.iter().map(|w| c_string(w)).collect());
        swasm_node_config_result {
            records,
            n_records,
            warnings,
            n_warnings,
        }
    }
}

/// Frees a node configuration result and empties it; does nothing for
/// NULL.
///
/// # Safety
/// `result` is NULL, zeroed, or filled by [`swasm_gres_node_config_load`]
/// and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_node_config_result_free(result: *mut swasm_node_config_result) {
    // SAFETY: as the caller promised.
    let Some(r) = (unsafe { result.as_mut() }) else {
        return;
    };
    // SAFETY: every part came from `From<NodeConfigResult>`.
    unsafe {
        for record in take(r.records, r.n_records) {
            record.free();
        }
        for w in take(r.warnings, r.n_warnings) {
            cvt::free_text(w);
        }
    }
    r.records = null_mut();
    r.n_records = 0;
    r.warnings = null_mut();
    r.n_warnings = 0;
}

/// Kind of a [`swasm_env_change`]: set `key` to `value`
/// (`env_array_overwrite`).
pub const SWASM_ENV_SET: u32 = 0;
/// Kind of a [`swasm_env_change`]: remove `key` (`unsetenvp`).
pub const SWASM_ENV_UNSET: u32 = 1;

/// One environment edit, owned by the library: `SWASM_ENV_SET` with `key`
/// and `value`, or `SWASM_ENV_UNSET` with `key` (`value` NULL).
#[repr(C)]
pub struct swasm_env_change {
    pub kind: u32,
    pub key: *mut c_char,
    pub value: *mut c_char,
}

/// Environment edits, to be applied in order; owned by the library: free
/// with [`swasm_env_change_list_free`].
#[repr(C)]
pub struct swasm_env_change_list {
    pub items: *mut swasm_env_change,
    pub n_items: usize,
}

impl swasm_env_change_list {
    fn new(changes: &[EnvChange]) -> swasm_env_change_list {
        let (items, n_items) = owned(
            changes
                .iter()
                .map(|c| match c {
                    EnvChange::Set(kv) => swasm_env_change {
                        kind: SWASM_ENV_SET,
                        key: c_string(&kv.key),
                        value: c_string(&kv.value),
                    },
                    EnvChange::Unset(key) => swasm_env_change {
                        kind: SWASM_ENV_UNSET,
                        key: c_string(key),
                        value: null_mut(),
                    },
                })
                .collect(),
        );
        swasm_env_change_list { items, n_items }
    }
}

/// Frees a list of environment edits and empties it; does nothing for
/// NULL.
///
/// # Safety
/// `list` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_env_change_list_free(list: *mut swasm_env_change_list) {
    // SAFETY: as the caller promised.
    let Some(l) = (unsafe { list.as_mut() }) else {
        return;
    };
    // SAFETY: every string came from `c_string`, the array from `owned`.
    unsafe {
        for c in take(l.items, l.n_items) {
            cvt::free_text(c.key);
            cvt::free_text(c.value);
        }
    }
    l.items = null_mut();
    l.n_items = 0;
}

/// Bit of the `flags` of the environment functions: Slurm's
/// `GRES_INTERNAL_FLAG_VERBOSE` (print the `gpu-bind:` diagnostic).
pub const SWASM_GRES_ENV_VERBOSE: u32 = 1;
/// Bit of the `flags` of the environment functions: Slurm's
/// `GRES_INTERNAL_FLAG_PROTECT_ENV` (suppress unset actions).
pub const SWASM_GRES_ENV_PROTECT_ENV: u32 = 2;

fn env_flags(function: &str, flags: u32) -> Result<EnvFlags, Failure> {
    let known = SWASM_GRES_ENV_VERBOSE | SWASM_GRES_ENV_PROTECT_ENV;
    if flags & !known != 0 {
        return Err(Failure::new(format!(
            "{function}: flags: unknown bits {:#x} (known: SWASM_GRES_ENV_VERBOSE, SWASM_GRES_ENV_PROTECT_ENV)",
            flags & !known
        )));
    }
    let mut out = EnvFlags::empty();
    if flags & SWASM_GRES_ENV_VERBOSE != 0 {
        out |= EnvFlags::VERBOSE;
    }
    if flags & SWASM_GRES_ENV_PROTECT_ENV != 0 {
        out |= EnvFlags::PROTECT_ENV;
    }
    Ok(out)
}

/// `job-info` / `step-info` field and value kind: a count (Slurm's
/// `GRES_JOB_DATA_COUNT`, `GRES_STEP_DATA_COUNT`).
pub const SWASM_GRES_INFO_COUNT: u32 = 0;
/// `job-info` / `step-info` field and value kind: the device bitmap
/// (`GRES_JOB_DATA_BITMAP`, `GRES_STEP_DATA_BITMAP`).
pub const SWASM_GRES_INFO_BITMAP: u32 = 1;

/// The answer of `job-info` / `step-info`, owned by the library: `kind`
/// `SWASM_GRES_INFO_COUNT` with `count`, or `SWASM_GRES_INFO_BITMAP` with
/// `devices`. Free with [`swasm_gres_info_value_free`].
#[repr(C)]
pub struct swasm_gres_info_value {
    pub kind: u32,
    pub count: u64,
    pub devices: swasm_bitmap,
}

impl From<InfoValue> for swasm_gres_info_value {
    fn from(v: InfoValue) -> Self {
        match v {
            InfoValue::Count(count) => swasm_gres_info_value {
                kind: SWASM_GRES_INFO_COUNT,
                count,
                devices: swasm_bitmap {
                    len: 0,
                    words: null(),
                },
            },
            InfoValue::Devices(b) => swasm_gres_info_value {
                kind: SWASM_GRES_INFO_BITMAP,
                count: 0,
                devices: own::bitmap(&b),
            },
        }
    }
}

/// Frees the bitmap of an info value and zeroes it; does nothing for NULL.
///
/// # Safety
/// `value` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_info_value_free(value: *mut swasm_gres_info_value) {
    // SAFETY: as the caller promised.
    if let Some(v) = unsafe { value.as_mut() } {
        // SAFETY: the bitmap came from `own::bitmap` (or is empty).
        unsafe { own::free_bitmap(&mut v.devices) };
        v.kind = 0;
        v.count = 0;
    }
}

/// One device file the plugin manages (`gres_device_t`), owned by the
/// library.
#[repr(C)]
pub struct swasm_gres_device {
    pub index: u32,
    pub dev_num: i32,
    pub major: u32,
    pub minor: u32,
    pub path: *mut c_char,
    /// NULL for none.
    pub unique_id: *mut c_char,
}

/// Device files, owned by the library: free with
/// [`swasm_gres_device_list_free`].
#[repr(C)]
pub struct swasm_gres_device_list {
    pub items: *mut swasm_gres_device,
    pub n_items: usize,
}

impl From<Vec<Device>> for swasm_gres_device_list {
    fn from(devices: Vec<Device>) -> Self {
        let (items, n_items) = owned(
            devices
                .iter()
                .map(|d| swasm_gres_device {
                    index: d.index,
                    dev_num: d.dev_num,
                    major: d.major,
                    minor: d.minor,
                    path: c_string(&d.path),
                    unique_id: cvt::owned_opt_text(d.unique_id.as_deref()),
                })
                .collect(),
        );
        swasm_gres_device_list { items, n_items }
    }
}

/// Frees a device list and empties it; does nothing for NULL.
///
/// # Safety
/// `list` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_device_list_free(list: *mut swasm_gres_device_list) {
    // SAFETY: as the caller promised.
    let Some(l) = (unsafe { list.as_mut() }) else {
        return;
    };
    // SAFETY: every string came from `c_string`, the array from `owned`.
    unsafe {
        for d in take(l.items, l.n_items) {
            cvt::free_text(d.path);
            cvt::free_text(d.unique_id);
        }
    }
    l.items = null_mut();
    l.n_items = 0;
}

/// Opens the gres slot `slot` of `host`: `"gres.gpu"` for `[plugins.gres.gpu]`
/// (NULL: `[plugins.gres]`, or the configuration's only gres slot).
///
/// Cheap, as `swasm_priority_open`: safe in slurmd's `init()`, which runs
/// before slurmd daemonizes; the plugin is loaded at the first call (or
/// [`swasm_gres_load`]). Returns NULL with `error` set (the message naming
/// the host configuration, the slot and what is wrong: no such slot, a slot
/// of another kind, an unreadable `.wasm`, a bundled plugin this build
/// lacks) on failure. Close with [`swasm_gres_close`].
///
/// # Safety
/// `host` is NULL or an open host; `slot` NULL or a NUL-terminated string;
/// `error` NULL or an initialised `swasm_error`.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_open(
    host: *const swasm_host,
    slot: *const c_char,
    error: *mut swasm_error,
) -> *mut swasm_gres_plugin {
    // SAFETY: as the caller promised.
    unsafe { kind::open(host, slot, error, "swasm_gres_open", swasm_gres_plugin) }
}

/// Closes a gres handle without calling `fini`; epilog infos it made are
/// dropped with it (free their handles with a NULL plugin). Does nothing
/// for NULL.
///
/// # Safety
/// `plugin` is NULL or an open handle, not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_close(plugin: *mut swasm_gres_plugin) {
    // SAFETY: as the caller promised.
    unsafe { kind::close(plugin) }
}

/// Loads the plugin now (see `swasm_priority_load`; the same failures, for
/// the gres kind). A shim whose plugin cannot start must stop the daemon:
/// Slurm would otherwise load the stock gres plugin of the next PluginDir.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_load(
    plugin: *const swasm_gres_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::load(plugin, error, "swasm_gres_load") }
}

/// Fills `out` with what the plugin says of itself (loading it first).
/// Free its strings with `swasm_plugin_identity_free`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_identity(
    plugin: *const swasm_gres_plugin,
    out: *mut swasm_plugin_identity,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::identity(plugin, out, error, "swasm_gres_identity") }
}

/// The plugin's `init`. Every other contract function fails until an
/// `init` has succeeded; the configuration is kept for restarts.
///
/// # Safety
/// `plugin` is NULL or an open handle; `config` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_init(
    plugin: *const swasm_gres_plugin,
    config: *const swasm_gres_config,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_gres_init", |p| {
            let config = record(config, "swasm_gres_init: config")?;
            let config = GresConfig {
                cluster: config.cluster.read()?,
                auto_detect: opt_text(config.auto_detect),
            };
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
pub unsafe extern "C" fn swasm_gres_reload(
    plugin: *const swasm_gres_plugin,
    replaced: *mut bool,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { kind::reload(plugin, replaced, error, "swasm_gres_reload") }
}

/// The plugin's `fini`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_fini(
    plugin: *const swasm_gres_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe { with_plugin(plugin, error, "swasm_gres_fini", |p| Ok(p.fini()?)) }
}

/// `gres_p_node_config_load`: validates the node's `n_records` gres.conf
/// records for this GRES (all of them: the plugin picks its own), merges
/// them with detected devices (through the `gpu` capability when
/// `AutoDetect` asks for it) and writes the result to `*out` (free with
/// [`swasm_node_config_result_free`]); the shim replaces the records of
/// `gres_conf_list` with it and logs each warning. Fails with the line of
/// the offending record named (`gres.conf:4: Count=3 does not match
/// File=...`); `*out` is then left as it was.
///
/// # Safety
/// `plugin` is NULL or an open handle; `records` holds `n_records` valid
/// records; `node` valid; `out` valid for writing; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_node_config_load(
    plugin: *const swasm_gres_plugin,
    records: *const swasm_gres_conf_record,
    n_records: usize,
    node: *const swasm_node_hardware,
    out: *mut swasm_node_config_result,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_node_config_load";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let records = list(records, n_records, &format!("{F}: records"), |r| {
                r.read(&format!("{F}: records"))
            })?;
            let node = record(node, &format!("{F}: node"))?.read()?;
            if out.is_null() {
                return Err(Failure::new(format!("{F}: out is NULL")));
            }
            put(out, p.node_config_load(&records, &node)?.into(), "out")
        })
    }
}

/// The body of the environment functions: reads the allocation and the
/// flags, calls, writes the edits.
///
/// # Safety
/// As those functions.
unsafe fn set_env(
    plugin: *const swasm_gres_plugin,
    allocation: *const swasm_gres_allocation,
    flags: u32,
    out: *mut swasm_env_change_list,
    error: *mut swasm_error,
    function: &str,
    call: impl FnOnce(&GresPlugin, Option<GresAllocation>, EnvFlags) -> Result<Vec<EnvChange>, Failure>,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, function, |p| {
            let allocation = allocation
                .as_ref()
                .map(|a| a.read(&format!("{function}: allocation")))
                .transpose()?;
            let flags = env_flags(function, flags)?;
            if out.is_null() {
                return Err(Failure::new(format!("{function}: out is NULL")));
            }
            let changes = call(p, allocation, flags)?;
            put(out, swasm_env_change_list::new(&changes), "out")
        })
    }
}

/// `gres_p_job_set_env`: the environment edits for a batch job on this
/// node, `allocation` being the job's allocation of this GRES here (NULL:
/// none, which unsets the variables unless `flags` has
/// `SWASM_GRES_ENV_PROTECT_ENV`). `flags` are `SWASM_GRES_ENV_*` bits
/// (Slurm's `gres_internal_flags_t`); another bit is refused. On success
/// `*out` holds the edits (free with [`swasm_env_change_list_free`]); an
/// edit of a variable a gres plugin may not set fails the call.
///
/// # Safety
/// `plugin` is NULL or an open handle; `allocation` NULL or valid; `out`
/// valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_job_set_env(
    plugin: *const swasm_gres_plugin,
    allocation: *const swasm_gres_allocation,
    flags: u32,
    out: *mut swasm_env_change_list,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_job_set_env";
    // SAFETY: as the caller promised.
    unsafe {
        set_env(plugin, allocation, flags, out, error, F, |p, a, f| {
            Ok(p.job_set_env(a.as_ref(), f)?)
        })
    }
}

/// `gres_p_step_set_env`: the environment edits for a step on this node;
/// as [`swasm_gres_job_set_env`].
///
/// # Safety
/// As [`swasm_gres_job_set_env`].
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_step_set_env(
    plugin: *const swasm_gres_plugin,
    allocation: *const swasm_gres_allocation,
    flags: u32,
    out: *mut swasm_env_change_list,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_step_set_env";
    // SAFETY: as the caller promised.
    unsafe {
        set_env(plugin, allocation, flags, out, error, F, |p, a, f| {
            Ok(p.step_set_env(a.as_ref(), f)?)
        })
    }
}

/// `gres_p_task_set_env`: the environment edits for one task, in the
/// forked task (keep wasm out of the child where possible: a runaway
/// plugin there is stopped by fuel and its deadline). `allocation` is the
/// step's allocation on this node (NULL: none), `usable` the devices this
/// task may use (NULL: the whole allocation; refused without an
/// allocation). Otherwise as [`swasm_gres_job_set_env`].
///
/// # Safety
/// `plugin` is NULL or an open handle; `allocation` and `usable` NULL or
/// valid; `out` valid for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_task_set_env(
    plugin: *const swasm_gres_plugin,
    allocation: *const swasm_gres_allocation,
    usable: *const swasm_bitmap,
    flags: u32,
    out: *mut swasm_env_change_list,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_task_set_env";
    // SAFETY: as the caller promised.
    unsafe {
        set_env(
            plugin,
            allocation,
            flags,
            out,
            error,
            F,
            |p, allocation, f| {
                let usable = opt_bitmap(usable, &format!("{F}: usable"))?;
                let task = match allocation {
                    Some(allocation) => Some(NodeAllocation { allocation, usable }),
                    None if usable.is_some() => {
                        return Err(Failure::new(format!(
                            "{F}: usable is given without an allocation"
                        )))
                    }
                    None => None,
                };
                Ok(p.task_set_env(task.as_ref(), f)?)
            },
        )
    }
}

/// `gres_p_send_stepd`: the state slurmd hands to slurmstepd, as bytes
/// the shim packs into Slurm's buffer (`packmem`). On success `*out` holds
/// them (free with `swasm_bytes_free`).
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_send_stepd(
    plugin: *const swasm_gres_plugin,
    out: *mut swasm_bytes,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_send_stepd";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            if out.is_null() {
                return Err(Failure::new(format!("{F}: out is NULL")));
            }
            put(out, swasm_bytes::new(p.send_stepd()?), "out")
        })
    }
}

/// `gres_p_recv_stepd`: the `len` bytes of a `send-stepd`, in slurmstepd
/// (what the shim unpacked with `unpackmem`). The plugin refuses bytes it
/// cannot read; the host refuses more than the plugin's state limit. The
/// bytes are kept, so a plugin restarted after a fault gets them again.
///
/// # Safety
/// `plugin` is NULL or an open handle; `data` holds `len` bytes (NULL when
/// 0); `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_recv_stepd(
    plugin: *const swasm_gres_plugin,
    data: *const u8,
    len: usize,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_recv_stepd";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let data = cvt::slice(data, len, &format!("{F}: data"))?;
            Ok(p.recv_stepd(data)?)
        })
    }
}

fn info_field(function: &str, field: u32) -> Result<InfoField, Failure> {
    choice(field, &format!("{function}: field"), |f| match f {
        SWASM_GRES_INFO_COUNT => Some(InfoField::Count),
        SWASM_GRES_INFO_BITMAP => Some(InfoField::Bitmap),
        _ => None,
    })
}

/// The body of `job-info` and `step-info`.
///
/// # Safety
/// As those functions.
unsafe fn info(
    plugin: *const swasm_gres_plugin,
    allocation: *const swasm_gres_allocation,
    field: u32,
    out: *mut swasm_gres_info_value,
    error: *mut swasm_error,
    function: &str,
    call: impl FnOnce(&GresPlugin, &GresAllocation, InfoField) -> Result<InfoValue, CallError>,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, function, |p| {
            let what = format!("{function}: allocation");
            let allocation = record(allocation, &what)?.read(&what)?;
            let field = info_field(function, field)?;
            if out.is_null() {
                return Err(Failure::new(format!("{function}: out is NULL")));
            }
            put(out, call(p, &allocation, field)?.into(), "out")
        })
    }
}

/// `gres_p_get_job_info`: `field` (`SWASM_GRES_INFO_COUNT` or
/// `SWASM_GRES_INFO_BITMAP`, Slurm's `GRES_JOB_DATA_*`) of a job's
/// allocation on one node; the answer is checked to stay within the
/// allocation. On success `*out` holds it (free with
/// [`swasm_gres_info_value_free`]); Slurm's other `GRES_JOB_DATA_*` fields
/// are answered by the shim itself.
///
/// # Safety
/// `plugin` is NULL or an open handle; `allocation` valid; `out` valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_job_info(
    plugin: *const swasm_gres_plugin,
    allocation: *const swasm_gres_allocation,
    field: u32,
    out: *mut swasm_gres_info_value,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        info(
            plugin,
            allocation,
            field,
            out,
            error,
            "swasm_gres_job_info",
            GresPlugin::job_info,
        )
    }
}

/// `gres_p_get_step_info`: as [`swasm_gres_job_info`], for a step's
/// allocation (`GRES_STEP_DATA_*`).
///
/// # Safety
/// As [`swasm_gres_job_info`].
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_step_info(
    plugin: *const swasm_gres_plugin,
    allocation: *const swasm_gres_allocation,
    field: u32,
    out: *mut swasm_gres_info_value,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        info(
            plugin,
            allocation,
            field,
            out,
            error,
            "swasm_gres_step_info",
            GresPlugin::step_info,
        )
    }
}

/// `gres_p_get_devices`: the device files this plugin manages on this node
/// (for task/cgroup's device limits), checked to be the node's GPUs' or
/// gres.conf's files with their own numbers. On success `*out` holds them
/// (free with [`swasm_gres_device_list_free`]).
///
/// # Safety
/// `plugin` is NULL or an open handle; `out` valid for writing; `error`
/// NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_get_devices(
    plugin: *const swasm_gres_plugin,
    out: *mut swasm_gres_device_list,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_get_devices";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            if out.is_null() {
                return Err(Failure::new(format!("{F}: out is NULL")));
            }
            put(out, p.get_devices()?.into(), "out")
        })
    }
}

/// `gres_p_step_hardware_init`: applies `tres_freq` (`--gpu-freq`, NULL
/// for none) to the step's `usable` GPUs (NULL: none) through the
/// `gpu-control` capability, which may then change only those GPUs.
/// Without the grant the plugin logs a warning and the call succeeds.
///
/// # Safety
/// `plugin` is NULL or an open handle; `usable` NULL or valid; `tres_freq`
/// NULL or a NUL-terminated string; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_step_hardware_init(
    plugin: *const swasm_gres_plugin,
    usable: *const swasm_bitmap,
    tres_freq: *const c_char,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_step_hardware_init";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let usable = opt_bitmap(usable, &format!("{F}: usable"))?;
            let tres_freq = opt_text(tres_freq);
            Ok(p.step_hardware_init(usable.as_ref(), tres_freq.as_deref())?)
        })
    }
}

/// `gres_p_step_hardware_fini`: undoes [`swasm_gres_step_hardware_init`]
/// (only the GPUs it set up may be reset).
///
/// # Safety
/// `plugin` is NULL or an open handle; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_step_hardware_fini(
    plugin: *const swasm_gres_plugin,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, "swasm_gres_step_hardware_fini", |p| {
            Ok(p.step_hardware_fini()?)
        })
    }
}

/// `gres_p_epilog_build_env`: the plugin captures the job's per-node
/// allocations of its GRES (from `job->resources`). On success `*out` is a
/// new epilog info handle, or NULL when the job has none of this GRES;
/// free a handle with [`swasm_gres_epilog_info_free`]. Slurm frees its own
/// `gres_epilog_info_t` without telling the plugin, so a shim keeps the
/// handle beside it or builds, uses and frees one in `epilog_set_env`.
///
/// # Safety
/// `plugin` is NULL or an open handle; `job` valid; `out` valid for
/// writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_epilog_build_env(
    plugin: *const swasm_gres_plugin,
    job: *const swasm_job,
    out: *mut *mut swasm_gres_epilog_info,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_epilog_build_env";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let job = record(job, &format!("{F}: job"))?.read()?;
            resource::check_out(out, &format!("{F}: out"))?;
            match p.epilog_build_env(&job)? {
                Some(info) => resource::put_new(out, p, info),
                None => out.write(null_mut()),
            }
            Ok(())
        })
    }
}

/// `gres_p_epilog_set_env`: the environment edits of the epilog for node
/// `node_index` of the job (its position in the job's node list). On
/// success `*out` holds them (free with [`swasm_env_change_list_free`]).
/// Fails for an info made by another plugin handle, or made before the
/// plugin restarted.
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` a live handle; `out` valid
/// for writing; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_epilog_set_env(
    plugin: *const swasm_gres_plugin,
    info: *const swasm_gres_epilog_info,
    node_index: u32,
    out: *mut swasm_env_change_list,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_epilog_set_env";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let info = resource::value(info, p, &format!("{F}: info"))?;
            if out.is_null() {
                return Err(Failure::new(format!("{F}: out is NULL")));
            }
            let changes = p.epilog_set_env(info, node_index)?;
            put(out, swasm_env_change_list::new(&changes), "out")
        })
    }
}

/// Frees an epilog info: the plugin drops its copy and the handle is freed
/// (whatever the outcome; do not use it afterwards). With `plugin` NULL
/// (the plugin handle already closed) only the handle is freed. Does
/// nothing for a NULL `info`. Fails, still freeing the handle, for an info
/// of another plugin handle.
///
/// # Safety
/// `plugin` is NULL or an open handle; `info` NULL or a live handle, not
/// used by another thread; `error` NULL or initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_epilog_info_free(
    plugin: *const swasm_gres_plugin,
    info: *mut swasm_gres_epilog_info,
    error: *mut swasm_error,
) -> i32 {
    // SAFETY: as the caller promised.
    unsafe {
        resource::free(
            plugin,
            info,
            error,
            "swasm_gres_epilog_info_free",
            GresPlugin::drop_epilog_info,
        )
    }
}

/// The step this node is running (`step-context`; C plugins read it from
/// globals), for plugins that keep per-step state. Kept for restarts.
///
/// # Safety
/// `plugin` is NULL or an open handle; `step` valid; `error` NULL or
/// initialised.
#[no_mangle]
pub unsafe extern "C" fn swasm_gres_step_context(
    plugin: *const swasm_gres_plugin,
    step: *const swasm_step,
    error: *mut swasm_error,
) -> i32 {
    const F: &str = "swasm_gres_step_context";
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, F, |p| {
            let step = record(step, &format!("{F}: step"))?.read()?;
            Ok(p.step_context(&step)?)
        })
    }
}
