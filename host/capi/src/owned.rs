//! Library-owned copies of the contract's records, for results.
//!
//! What a result holds is allocated here and freed by the result's own
//! `swasm_*_free`, never by the caller's allocator. A result that is a
//! contract record a shim also passes in (`swasm_bitmap`,
//! `swasm_job_resources`, `swasm_gres_allocation`, `swasm_key_value`,
//! `swasm_gres_conf_record`) uses the input's struct, so a shim converts
//! each record one way only and may hand a result back in (a job-test
//! result's resources as the job's resources at job-begin). Its `const`
//! pointers then point into library memory, which the caller must neither
//! change nor free but through the result's `swasm_*_free`.
#![allow(non_camel_case_types)]

use std::ffi::c_char;
use std::ptr::{null, null_mut};

use slurm_wasm_host::types::{Bitmap, GresAllocation, JobResources, KeyValue};

use crate::cvt::{free_text, owned, take};
use crate::error::c_string;
use crate::types::{
    swasm_bitmap, swasm_gres_allocation, swasm_job_resources, swasm_key_value, swasm_node_resources,
};

/// A library-owned string in a `const` field.
pub(crate) fn text(s: &str) -> *const c_char {
    c_string(s)
}

/// A library-owned optional string (NULL for none) in a `const` field.
pub(crate) fn opt_text(s: Option<&str>) -> *const c_char {
    s.map_or(null(), text)
}

/// Frees a string made by [`text`] or [`opt_text`].
///
/// # Safety
/// `p` is NULL or such a string, not freed before.
pub(crate) unsafe fn free_const_text(p: *const c_char) {
    // SAFETY: as the caller promised.
    unsafe { free_text(p.cast_mut()) }
}

/// A library-owned copy of `b`: exactly `(len + 63) / 64` words.
pub(crate) fn bitmap(b: &Bitmap) -> swasm_bitmap {
    let mut words = b.words.clone();
    words.resize((b.len as usize).div_ceil(64), 0);
    let (words, _) = owned(words);
    swasm_bitmap { len: b.len, words }
}

/// Frees the words of a bitmap made by [`bitmap`] and empties it.
///
/// # Safety
/// `b` was made by [`bitmap`] (or is empty) and not freed since.
pub(crate) unsafe fn free_bitmap(b: &mut swasm_bitmap) {
    // SAFETY: [`bitmap`] allocates exactly this many words.
    drop(unsafe { take(b.words.cast_mut(), (b.len as usize).div_ceil(64)) });
    b.len = 0;
    b.words = null();
}

/// A library-owned optional bitmap (NULL for none).
pub(crate) fn opt_bitmap(b: Option<&Bitmap>) -> *const swasm_bitmap {
    b.map_or(null(), |b| Box::into_raw(Box::new(bitmap(b))))
}

/// Frees a bitmap made by [`opt_bitmap`].
///
/// # Safety
/// `p` is NULL or such a bitmap, not freed before.
pub(crate) unsafe fn free_opt_bitmap(p: *const swasm_bitmap) {
    if !p.is_null() {
        // SAFETY: as the caller promised: a box of ours.
        let mut b = unsafe { Box::from_raw(p.cast_mut()) };
        // SAFETY: its words came from [`bitmap`].
        unsafe { free_bitmap(&mut b) };
    }
}

/// A library-owned copy of a GRES allocation.
pub(crate) fn gres_allocation(g: &GresAllocation) -> swasm_gres_allocation {
    let (per_device, n_per_device) = owned(g.per_device.clone());
    swasm_gres_allocation {
        name: text(&g.name),
        type_name: opt_text(g.type_name.as_deref()),
        count: g.count,
        devices: opt_bitmap(g.devices.as_ref()),
        per_device,
        n_per_device,
    }
}

/// Frees what [`gres_allocation`] allocated.
///
/// # Safety
/// `g` was made by [`gres_allocation`] and not freed since.
pub(crate) unsafe fn free_gres_allocation(g: swasm_gres_allocation) {
    // SAFETY: as the caller promised.
    unsafe {
        free_const_text(g.name);
        free_const_text(g.type_name);
        free_opt_bitmap(g.devices);
        drop(take(g.per_device.cast_mut(), g.n_per_device));
    }
}

/// A library-owned copy of a job's resources.
pub(crate) fn job_resources(r: &JobResources) -> swasm_job_resources {
    let (per_node, n_per_node) = owned(
        r.per_node
            .iter()
            .map(|n| {
                let (gres, n_gres) = owned(n.gres.iter().map(gres_allocation).collect());
                swasm_node_resources {
                    node_index: n.node_index,
                    cores: bitmap(&n.cores),
                    cpus: n.cpus,
                    memory: n.memory,
                    gres,
                    n_gres,
                }
            })
            .collect(),
    );
    swasm_job_resources {
        nodes: bitmap(&r.nodes),
        ncpus: r.ncpus,
        per_node,
        n_per_node,
        whole_nodes: r.whole_nodes,
    }
}

/// Frees what [`job_resources`] allocated and empties `r`.
///
/// # Safety
/// `r` was made by [`job_resources`] (or is zeroed) and not freed since.
pub(crate) unsafe fn free_job_resources(r: &mut swasm_job_resources) {
    // SAFETY: as the caller promised: every part came from this module.
    unsafe {
        free_bitmap(&mut r.nodes);
        for mut node in take(r.per_node.cast_mut(), r.n_per_node) {
            free_bitmap(&mut node.cores);
            for g in take(node.gres.cast_mut(), node.n_gres) {
                free_gres_allocation(g);
            }
        }
    }
    r.ncpus = 0;
    r.per_node = null();
    r.n_per_node = 0;
    r.whole_nodes = false;
}

/// A library-owned key/value pair.
pub(crate) fn key_value(kv: &KeyValue) -> swasm_key_value {
    swasm_key_value {
        key: text(&kv.key),
        value: text(&kv.value),
    }
}

/// Frees a pair made by [`key_value`].
///
/// # Safety
/// `kv` was made by [`key_value`] and not freed since.
pub(crate) unsafe fn free_key_value(kv: swasm_key_value) {
    // SAFETY: as the caller promised.
    unsafe {
        free_const_text(kv.key);
        free_const_text(kv.value);
    }
}

/// Bytes owned by the library (`send-stepd`, packed nodeinfo and jobinfo):
/// `len` bytes at `data` (NULL when `len` is 0). Free with
/// [`swasm_bytes_free`].
#[repr(C)]
pub struct swasm_bytes {
    pub data: *mut u8,
    pub len: usize,
}

impl swasm_bytes {
    pub(crate) fn new(bytes: Vec<u8>) -> swasm_bytes {
        let (data, len) = owned(bytes);
        swasm_bytes { data, len }
    }
}

/// Frees the bytes and empties the struct; does nothing for NULL.
///
/// # Safety
/// `bytes` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_bytes_free(bytes: *mut swasm_bytes) {
    // SAFETY: as the caller promised.
    if let Some(b) = unsafe { bytes.as_mut() } {
        // SAFETY: the data came from `owned`.
        drop(unsafe { take(b.data, b.len) });
        b.data = null_mut();
        b.len = 0;
    }
}

/// Numbers owned by the library (node weights, dimensions). Free with
/// [`swasm_u32_list_free`].
#[repr(C)]
pub struct swasm_u32_list {
    pub items: *mut u32,
    pub n_items: usize,
}

impl swasm_u32_list {
    pub(crate) fn new(items: Vec<u32>) -> swasm_u32_list {
        let (items, n_items) = owned(items);
        swasm_u32_list { items, n_items }
    }
}

/// Frees the numbers and empties the list; does nothing for NULL.
///
/// # Safety
/// `list` is NULL, zeroed, or filled by this library and not freed since.
#[no_mangle]
pub unsafe extern "C" fn swasm_u32_list_free(list: *mut swasm_u32_list) {
    // SAFETY: as the caller promised.
    if let Some(l) = unsafe { list.as_mut() } {
        // SAFETY: the items came from `owned`.
        drop(unsafe { take(l.items, l.n_items) });
        l.items = null_mut();
        l.n_items = 0;
    }
}

/// Frees the words of a bitmap this library returned (a picked node set)
/// and empties it; does nothing for NULL. Never pass a bitmap the caller
/// filled itself: its words are not the library's.
///
/// # Safety
/// `bitmap` is NULL, zeroed, or a bitmap result of this library not freed
/// since (not one inside another result: that result's own free frees it).
#[no_mangle]
pub unsafe extern "C" fn swasm_bitmap_free(bitmap: *mut swasm_bitmap) {
    // SAFETY: as the caller promised.
    if let Some(b) = unsafe { bitmap.as_mut() } {
        // SAFETY: as the caller promised.
        unsafe { free_bitmap(b) };
    }
}

/// Frees what a job's resources hold (a `swasm_select_job_expand` result)
/// and zeroes them; does nothing for NULL. Not for resources the caller
/// built, nor for those inside a `swasm_job_test_result` (its own free
/// frees them).
///
/// # Safety
/// `resources` is NULL, zeroed, or filled by this library and not freed
/// since.
#[no_mangle]
pub unsafe extern "C" fn swasm_job_resources_free(resources: *mut swasm_job_resources) {
    // SAFETY: as the caller promised.
    if let Some(r) = unsafe { resources.as_mut() } {
        // SAFETY: as the caller promised.
        unsafe { free_job_resources(r) };
    }
}
