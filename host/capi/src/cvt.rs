//! Reading what C hands in and handing results back: strings, lists,
//! optionals and library-owned arrays.
//!
//! Conventions of every struct in the header:
//! - a string is NUL-terminated; NULL reads as the empty string where the
//!   contract has a plain string and as "none" where it has an optional
//!   one; bytes that are not UTF-8 are replaced (U+FFFD);
//! - a list is a pointer and a count (`x`, `n_x`); the pointer may be NULL
//!   only when the count is 0;
//! - an optional number has a `has_x` flag beside it; an optional record is
//!   a pointer, NULL for none;
//! - a closed set of values (an enum of the contract) is a `uint32_t` with
//!   `SWASM_*` constants; another value is refused, naming the field.

use std::ffi::{c_char, CStr, CString};

use crate::error::{c_string, Failure};

/// `p` as a string; NULL is empty.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn text(p: *const c_char) -> String {
    // SAFETY: as the caller promised.
    unsafe { opt_text(p) }.unwrap_or_default()
}

/// `p` as a string; NULL is `None`.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn opt_text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: as the caller promised.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The `n` items at `p`.
///
/// # Errors
/// `p` is NULL while `n` is not 0, or `n` items of `T` would not fit in
/// the address space.
///
/// # Safety
/// When not NULL, `p` points to `n` initialised items that outlive the call.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T], Failure> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::new(format!("{what} is NULL but its count is {n}")));
    }
    if n.checked_mul(size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(Failure::new(format!(
            "{what}: a count of {n} items is impossible"
        )));
    }
    // SAFETY: as the caller promised; the size was checked above.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// Converts each of the `n` items at `p` with `f`.
///
/// # Safety
/// As [`slice`].
pub(crate) unsafe fn list<T, U>(
    p: *const T,
    n: usize,
    what: &str,
    f: impl FnMut(&T) -> Result<U, Failure>,
) -> Result<Vec<U>, Failure> {
    // SAFETY: as the caller promised.
    unsafe { slice(p, n, what) }?.iter().map(f).collect()
}

/// The `n` strings at `p` (a NULL entry reads as empty).
///
/// # Safety
/// As [`slice`], each entry NULL or a NUL-terminated string.
pub(crate) unsafe fn texts(
    p: *const *const c_char,
    n: usize,
    what: &str,
) -> Result<Vec<String>, Failure> {
    // SAFETY: as the caller promised.
    unsafe { list(p, n, what, |&s| Ok(text(s))) }
}

/// The record `p` points to.
///
/// # Safety
/// `p` is NULL or points to an initialised `T`.
pub(crate) unsafe fn record<'a, T>(p: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: as the caller promised.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::new(format!("{what} is NULL")))
}

/// `value` when `has` is set.
pub(crate) fn opt<T>(has: bool, value: T) -> Option<T> {
    has.then_some(value)
}

/// A value of a closed set, refusing an unknown one.
pub(crate) fn choice<T>(
    value: u32,
    what: &str,
    f: impl FnOnce(u32) -> Option<T>,
) -> Result<T, Failure> {
    f(value).ok_or_else(|| Failure::new(format!("{what}: unknown value {value}")))
}

/// Writes `value` through an out pointer.
///
/// # Safety
/// `out` is NULL or valid for writing a `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::new(format!("{what} is NULL")));
    }
    // SAFETY: as the caller promised. `write`: the old value is not read or
    // dropped (it may be uninitialised).
    unsafe { out.write(value) };
    Ok(())
}

/// A library-owned array: its pointer (NULL when empty) and length.
pub(crate) fn owned<T>(items: Vec<T>) -> (*mut T, usize) {
    if items.is_empty() {
        return (std::ptr::null_mut(), 0);
    }
    let len = items.len();
    (Box::into_raw(items.into_boxed_slice()).cast::<T>(), len)
}

/// Takes back an array made by [`owned`].
///
/// # Safety
/// `(p, n)` came from [`owned`] and was not taken back before.
pub(crate) unsafe fn take<T>(p: *mut T, n: usize) -> Vec<T> {
    if p.is_null() {
        return Vec::new();
    }
    // SAFETY: as the caller promised: a boxed slice of exactly `n` items.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, n)) }.into_vec()
}

/// A library-owned optional string (NULL for none).
pub(crate) fn owned_opt_text(text: Option<&str>) -> *mut c_char {
    text.map_or(std::ptr::null_mut(), c_string)
}

/// Frees a string made by [`c_string`] or [`owned_opt_text`].
///
/// # Safety
/// `p` is NULL or such a string, not freed before.
pub(crate) unsafe fn free_text(p: *mut c_char) {
    if !p.is_null() {
        // SAFETY: as the caller promised.
        drop(unsafe { CString::from_raw(p) });
    }
}
