//! Opaque handles of plugin-side resources: a gres plugin's
//! `gres_epilog_info_t`, a select plugin's `select_nodeinfo_t` and
//! `select_jobinfo_t`.
//!
//! The value lives in the plugin's instance; the caller holds a box naming
//! it and the plugin handle that made it. Every call taking such a handle
//! also takes the plugin handle, and refuses a resource made by another
//! one. A resource is valid until it is freed or its plugin restarts (after
//! a fault): a stale one is refused by the plugin's instance.

use slurm_wasm_host::CallError;

use crate::error::{report, swasm_error, Failure};
use crate::kind::{with_plugin, Handle};

/// A plugin-side value and the plugin that made it.
pub(crate) struct Resource<T> {
    /// The address of the typed plugin (in its handle's box: stable while
    /// the handle is open).
    owner: usize,
    value: T,
}

fn address<P>(plugin: &P) -> usize {
    std::ptr::from_ref(plugin) as usize
}

impl<T: Copy> Resource<T> {
    pub(crate) fn new<P>(plugin: &P, value: T) -> Resource<T> {
        Resource {
            owner: address(plugin),
            value,
        }
    }

    /// The value, when `plugin` made it.
    pub(crate) fn of<P>(&self, plugin: &P, what: &str) -> Result<T, Failure> {
        if self.owner == address(plugin) {
            Ok(self.value)
        } else {
            Err(Failure::new(format!(
                "{what} was made by another plugin handle; pass the handle that made it"
            )))
        }
    }
}

/// A resource as a C handle of type `R`.
pub(crate) trait ResourceHandle: Sized {
    type Value: Copy;
    fn wrap(resource: Resource<Self::Value>) -> Self;
    fn resource(&self) -> &Resource<Self::Value>;
}

/// The value of the resource handle `p`, made by `plugin`.
///
/// # Safety
/// `p` is NULL or a live handle from this library.
pub(crate) unsafe fn value<R: ResourceHandle, P>(
    p: *const R,
    plugin: &P,
    what: &str,
) -> Result<R::Value, Failure> {
    // SAFETY: as the caller promised.
    let handle = unsafe { crate::cvt::record(p, what) }?;
    handle.resource().of(plugin, what)
}

/// Checks that the out pointer of a new resource can be written (before
/// the plugin makes one, so that none is left behind).
pub(crate) fn check_out<R>(out: *mut *mut R, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::new(format!("{what} is NULL")));
    }
    Ok(())
}

/// Writes a new resource handle to `out`, checked with [`check_out`].
///
/// # Safety
/// `out` is valid for writing.
pub(crate) unsafe fn put_new<R: ResourceHandle, P>(out: *mut *mut R, plugin: &P, value: R::Value) {
    let boxed = Box::into_raw(Box::new(R::wrap(Resource::new(plugin, value))));
    // SAFETY: as the caller promised.
    unsafe { out.write(boxed) };
}

/// Frees a resource handle: gives the value back to the plugin that made
/// it (`drop`) and frees the box. The box is freed whatever happens; with
/// `plugin` NULL (its plugin handle already closed, which dropped every
/// value) only the box is freed.
///
/// # Safety
/// `plugin` is NULL or a live handle; `resource` NULL or a live resource
/// handle from this library, not used afterwards; `error` NULL or
/// initialised.
pub(crate) unsafe fn free<H: Handle, R: ResourceHandle>(
    plugin: *const H,
    resource: *mut R,
    error: *mut swasm_error,
    function: &str,
    drop_value: impl FnOnce(&H::Plugin, R::Value) -> Result<(), CallError>,
) -> i32 {
    if resource.is_null() || plugin.is_null() {
        let _call = crate::fork::InCall::enter();
        if !resource.is_null() {
            // SAFETY: as the caller promised.
            drop(unsafe { Box::from_raw(resource) });
        }
        // SAFETY: as the caller promised.
        return unsafe { report(error, Ok(())) };
    }
    // SAFETY: as the caller promised.
    let boxed = unsafe { Box::from_raw(resource) };
    // SAFETY: as the caller promised.
    unsafe {
        with_plugin(plugin, error, function, |p| {
            let value = boxed
                .resource()
                .of(p, &format!("{function}: the resource"))?;
            Ok(drop_value(p, value)?)
        })
    }
}
