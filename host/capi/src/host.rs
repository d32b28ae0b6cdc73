//! Opening a host from its TOML file, cheaply, and starting it lazily.
//!
//! [`swasm_host_open`] reads and checks the host configuration and nothing
//! else: no engine, no thread, no compilation. The runtime (engine, epoch
//! ticker, compiled-component cache) starts at the first call that needs
//! it, and each plugin is loaded (compiled, or read from the cache) at the
//! first call into its kind handle ([`crate::kind`]), so a daemon may open a
//! host before it daemonizes and call into it afterwards.

use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once, OnceLock};

use slurm_wasm_host::host_config::{self, HostConfig};
use slurm_wasm_host::{Host, HostOptions, Services};
use tracing::Dispatch;

use crate::cvt::opt_text;
use crate::error::{report, swasm_error, Failure};
use crate::fork::{self, InCall};
use crate::log::{self, swasm_log_fn, swasm_log_level};

/// Flag of [`swasm_host_open`]: accept a configuration without `cache_dir`
/// and compile every plugin in memory at each start (about a second each).
/// For tests and tools; a daemon must not use it (slurmstepd would compile
/// at every step).
pub const SWASM_OPEN_ALLOW_NO_CACHE: u32 = 1;

const KNOWN_FLAGS: u32 = SWASM_OPEN_ALLOW_NO_CACHE;

/// An open host: its configuration, log callback and, once started, its
/// runtime. Opaque; shared by the kind handles opened from it.
#[allow(non_camel_case_types)]
pub struct swasm_host {
    pub(crate) inner: Arc<HostInner>,
}

pub(crate) struct HostInner {
    /// The host configuration file, for messages.
    pub path: PathBuf,
    pub config: HostConfig,
    /// Where this host's logs go.
    pub dispatch: Dispatch,
    runtime: OnceLock<Result<Host, Failure>>,
}

impl HostInner {
    /// The runtime, started on first use; a failure to start is kept and
    /// given to every later call.
    pub(crate) fn runtime(&self) -> Result<&Host, Failure> {
        self.runtime
            .get_or_init(|| self.start())
            .as_ref()
            .map_err(Clone::clone)
    }

    fn start(&self) -> Result<Host, Failure> {
        let gpu = self.config.gpu.provider().map_err(|e| {
            Failure::new(format!(
                "{}: gpu = \"{}\": {e}",
                self.path.display(),
                self.config.gpu
            ))
        })?;
        Host::new(HostOptions {
            cache_dir: self.config.cache_dir.clone(),
            services: Services {
                gpu,
                ..Services::default()
            },
            ..slurm_wasm_bundled::host_options()
        })
        .map_err(|e| {
            Failure::new(format!(
                "{}: cannot start the plugin host: {e:#}",
                self.path.display()
            ))
        })
    }
}

/// Runs the body of an ABI function: holds off `fork()` for its duration
/// ([`crate::fork`]), sends what it logs to `dispatch`, turns a panic into
/// an error, and reports the outcome in `error`.
///
/// # Safety
/// `error` is NULL or points to an initialised [`swasm_error`].
pub(crate) unsafe fn run(
    dispatch: Option<&Dispatch>,
    error: *mut swasm_error,
    body: impl FnOnce() -> Result<(), Failure>,
) -> i32 {
    let _call = InCall::enter();
    let guarded = || {
        catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(Failure::new(format!(
                "internal error in libslurm_wasm (please report it): {what}"
            )))
        })
    };
    let outcome = match dispatch {
        Some(dispatch) => tracing::dispatcher::with_default(dispatch, guarded),
        None => guarded(),
    };
    // SAFETY: as the caller promised.
    unsafe { report(error, outcome) }
}

/// Routes the panic message of a call to the host's log instead of the
/// daemon's stderr (panics outside ABI calls keep the previous hook).
fn install_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if fork::in_call() {
                tracing::error!("internal error in libslurm_wasm: {info}");
            } else {
                previous(info);
            }
        }));
    });
}

/// Opens the host described by the host configuration (TOML) at `path`.
///
/// Cheap: reads and checks the file, and nothing more. No thread is started
/// and nothing is compiled; the plugin runtime starts at the first call that
/// needs it (see `swasm_priority_open`), so a daemon may open the host
/// before it forks or daemonizes. Relative paths in the file are taken
/// relative to its directory. The configuration's `slurm_conf` is not read:
/// the daemon passes what its plugins need from its own records.
///
/// `flags` is 0 or [`SWASM_OPEN_ALLOW_NO_CACHE`]. Logs of `max_log_level`
/// (a `SWASM_LOG_*` value; 0 for none) and more severe go to `log` with
/// `log_ctx`, on the thread of the call that logs; with `log` NULL they are
/// dropped. Nothing is ever printed on stdout or stderr.
///
/// Returns the host, to be closed with [`swasm_host_close`], or NULL with
/// `error` set (code `SLURM_ERROR`) when `path` is NULL, the file cannot be
/// read or is not a valid host configuration (the message names the file,
/// line and column), it sets no `cache_dir` and `flags` does not allow that,
/// or `flags` has unknown bits.
///
/// Also registers, once per process, the `pthread_atfork` handlers that keep
/// forks out of plugin calls (see the header's introduction).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `error` is NULL or points to
/// an initialised `swasm_error`; `log`, when not NULL, is thread-safe.
#[no_mangle]
pub unsafe extern "C" fn swasm_host_open(
    path: *const c_char,
    flags: u32,
    max_log_level: swasm_log_level,
    log: swasm_log_fn,
    log_ctx: *mut c_void,
    error: *mut swasm_error,
) -> *mut swasm_host {
    install_panic_hook();
    fork::register_handlers();
    let dispatch = log::dispatch(log, log_ctx, max_log_level);
    let mut opened = None;
    // SAFETY: `error` as the caller promised.
    unsafe {
        run(Some(&dispatch), error, || {
            // SAFETY: as the caller promised.
            let path = opt_text(path)
                .ok_or_else(|| Failure::new("swasm_host_open: the configuration path is NULL"))?;
            opened = Some(open(Path::new(&path), flags, dispatch.clone())?);
            Ok(())
        })
    };
    opened.map_or(std::ptr::null_mut(), |inner| {
        Box::into_raw(Box::new(swasm_host {
            inner: Arc::new(inner),
        }))
    })
}

fn open(path: &Path, flags: u32, dispatch: Dispatch) -> Result<HostInner, Failure> {
    if flags & !KNOWN_FLAGS != 0 {
        return Err(Failure::new(format!(
            "swasm_host_open: unknown flags {:#x}",
            flags & !KNOWN_FLAGS
        )));
    }
    let config = host_config::load(path).map_err(Failure::new)?;
    if config.cache_dir.is_none() && flags & SWASM_OPEN_ALLOW_NO_CACHE == 0 {
        return Err(Failure::new(format!(
            "{}: no `cache_dir`: a Slurm daemon needs a compiled-component cache, or every \
             daemon and step start compiles its plugins (about a second each); add \
             `cache_dir = \"/var/cache/slurm-wasm\"`, a directory of the daemon's user that no \
             one else may write",
            path.display()
        )));
    }
    Ok(HostInner {
        path: path.to_path_buf(),
        config,
        dispatch,
        runtime: OnceLock::new(),
    })
}

/// Closes a host handle. The runtime and plugins live on while kind handles
/// opened from it are open; they end when the last one is closed. Does
/// nothing for NULL.
///
/// # Safety
/// `host` is NULL or a handle from [`swasm_host_open`], not closed before
/// and not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn swasm_host_close(host: *mut swasm_host) {
    if !host.is_null() {
        let _call = InCall::enter();
        // SAFETY: as the caller promised.
        drop(unsafe { Box::from_raw(host) });
    }
}

/// The version of this C ABI ([`SWASM_ABI_VERSION`] of the header the
/// library was built with). A shim that `dlopen`s the library compares it
/// with the `SWASM_ABI_VERSION` it was compiled against and refuses to run
/// on a mismatch.
#[no_mangle]
pub extern "C" fn swasm_abi_version() -> u32 {
    crate::SWASM_ABI_VERSION
}

/// The `slurm:plugin` contract version the host speaks (`"0.1.0"`), a
/// static string.
#[no_mangle]
pub extern "C" fn swasm_contract_version() -> *const c_char {
    static VERSION: OnceLock<std::ffi::CString> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            std::ffi::CString::new(slurm_wasm_host::CONTRACT_VERSION)
                .expect("the contract version has no NUL")
        })
        .as_ptr()
}
