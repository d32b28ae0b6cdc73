//! No plugin lock is ever held across `fork()`.
//!
//! Every ABI call holds a process-wide read lock for its whole duration
//! ([`InCall`]). `pthread_atfork` handlers, registered once when the first
//! host is opened, take that lock for writing before the process forks and
//! release it afterwards in the parent and in the child. So a fork waits
//! until the calls in flight on other threads have returned (slurmstepd's
//! message thread running `task_p_add_pid` while the main thread forks a
//! task), and the child starts with no call in progress and no lock of the
//! library (plugin stores, the log allowance, the lazy start-up) held by a
//! thread it did not inherit. Calls that start while a fork is waiting wait
//! for it in turn (the lock prefers writers).
//!
//! A thread that forks from inside an ABI call (a log callback that forks)
//! would wait for its own read lock: for that thread the handlers do not
//! lock at all. Its own call is then the only one that can be in progress on
//! that thread, and such a child must only `exec`.
//!
//! The epoch ticker thread (deadlines) does not survive the fork either; the
//! runtime starts a new one in a process whose pid changed, on its first
//! plugin call there.

use std::cell::{Cell, RefCell};
use std::sync::{Once, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static FORK_LOCK: RwLock<()> = RwLock::new(());

thread_local! {
    /// ABI calls in progress on this thread (a log callback may call back).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The write guard the prepare handler took, released after the fork.
    static FORKING: RefCell<Option<RwLockWriteGuard<'static, ()>>> = const { RefCell::new(None) };
}

/// Registers the fork handlers, once per process.
pub(crate) fn register_handlers() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: the handlers are `extern "C"` functions of this library,
        // which is linked `-z nodelete` and so stays mapped for the life of
        // the process.
        let rc = unsafe { libc::pthread_atfork(Some(prepare), Some(after), Some(after)) };
        if rc != 0 {
            tracing::error!(
                "pthread_atfork failed (error {rc}): a fork during a plugin call could \
                 leave the child with a held plugin lock"
            );
        }
    });
}

extern "C" fn prepare() {
    if in_call() {
        return;
    }
    let guard = FORK_LOCK.write().unwrap_or_else(PoisonError::into_inner);
    FORKING.with(|slot| *slot.borrow_mut() = Some(guard));
}

/// The parent and the child handler: release what `prepare` took.
extern "C" fn after() {
    FORKING.with(|slot| drop(slot.borrow_mut().take()));
}

/// Is an ABI call in progress on this thread?
pub(crate) fn in_call() -> bool {
    DEPTH.with(Cell::get) > 0
}

/// An ABI call in progress: holds the read side of the fork lock (unless an
/// outer call on this thread already does) until dropped.
pub(crate) struct InCall {
    _guard: Option<RwLockReadGuard<'static, ()>>,
}

impl InCall {
    pub(crate) fn enter() -> InCall {
        let guard = (!in_call()).then(|| FORK_LOCK.read().unwrap_or_else(PoisonError::into_inner));
        DEPTH.with(|d| d.set(d.get() + 1));
        InCall { _guard: guard }
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}
