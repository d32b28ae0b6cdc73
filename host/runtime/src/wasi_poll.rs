//! WASI's waits, bounded by the call's deadline.
//!
//! wasmtime interrupts a plugin through epochs, which it checks only while
//! wasm code runs: a plugin blocked inside a host import (`std::thread::sleep`,
//! a `poll` on a clock) would hold its call, and the plugin's lock, for as
//! long as it asked. Every way WASI preview 2 offers to wait ends in
//! `wasi:io/poll` (`poll`, or `pollable.block`, which the clocks' sleeps and
//! the streams' blocking calls use), so [`bound_waits`] links both again over
//! wasmtime-wasi's own: the wait is the same, but it ends at the deadline of
//! the call in progress ([`crate::store::CallContext::deadline`]), and the
//! call then fails with [`BlockedPastDeadline`], which the host reports as
//! the plugin's deadline ([`crate::CallError::Deadline`]). A wait with no
//! call in progress cannot happen (every entry into a plugin sets a
//! deadline) and is refused the same way.
//!
//! The other blocking imports cannot wait: stdin is closed, stdout and
//! stderr are always ready, and no file, socket or name lookup is linked
//! to anything.
//!
//! The wait runs on a tokio runtime of the calling thread (made on its
//! first wait, and made again in a forked child), unless the embedder
//! calls from inside a runtime of its own: wasmtime-wasi's shared runtime
//! drives timers from worker threads, which do not survive `fork()`, so a
//! child of a process that had waited once (a task forked by slurmstepd)
//! would wait for ever.

use std::cell::RefCell;
use std::future::Future;
use std::time::Instant;

use wasmtime::component::{Linker, Resource};
use wasmtime::StoreContextMut;
use wasmtime_wasi::p2::bindings::io::poll as async_poll;
use wasmtime_wasi::p2::DynPollable;
use wasmtime_wasi::runtime::in_tokio;

use crate::store::HostState;

/// The `wasi:io/poll` interface that wasmtime-wasi links; plugins built
/// against any 0.2 release of WASI resolve to it.
const POLL_INTERFACE: &str = "wasi:io/poll@0.2.12";

/// A plugin waited in WASI until its call's deadline passed.
#[derive(Debug, thiserror::Error)]
#[error("the plugin waited in wasi:io/poll past its call's deadline")]
pub(crate) struct BlockedPastDeadline;

/// Links `wasi:io/poll`'s `poll` and `pollable.block` again, bounded by the
/// call's deadline. Call after wasmtime-wasi's own linking.
pub(crate) fn bound_waits(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut poll = linker.instance(POLL_INTERFACE)?;
    poll.func_wrap(
        "poll",
        |mut store: StoreContextMut<'_, HostState>, (pollables,): (Vec<Resource<DynPollable>>,)| {
            let deadline = store.data().call.deadline;
            let table = store.data_mut().table();
            until(deadline, async_poll::Host::poll(table, pollables)).map(|ready| (ready,))
        },
    )?;
    poll.func_wrap(
        "[method]pollable.block",
        |mut store: StoreContextMut<'_, HostState>, (pollable,): (Resource<DynPollable>,)| {
            let deadline = store.data().call.deadline;
            let table = store.data_mut().table();
            until(deadline, async_poll::HostPollable::block(table, pollable))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Runs `wait` to completion or until `deadline`, whichever comes first.
fn until<T>(
    deadline: Option<Instant>,
    wait: impl Future<Output = wasmtime::Result<T>>,
) -> wasmtime::Result<T> {
    let deadline = deadline.unwrap_or_else(Instant::now);
    let bounded = async move {
        match tokio::time::timeout_at(deadline.into(), wait).await {
            Ok(outcome) => outcome,
            Err(_) => Err(wasmtime::Error::new(BlockedPastDeadline)),
        }
    };
    if tokio::runtime::Handle::try_current().is_ok() {
        return in_tokio(bounded);
    }
    THREAD_RUNTIME.with(|cell| {
        let mut slot = cell.borrow_mut();
        let pid = std::process::id();
        if slot.as_ref().is_none_or(|(made_in, _)| *made_in != pid) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            // A runtime inherited through fork belongs to the parent: it is
            // forgotten, not shut down, as its drivers' descriptors are
            // shared with the parent.
            if let Some((_, inherited)) = slot.take() {
                std::mem::forget(inherited);
            }
            *slot = Some((pid, runtime));
        }
        let (_, runtime) = slot.as_ref().expect("made above");
        runtime.block_on(bounded)
    })
}

thread_local! {
    /// The calling thread's runtime for waits, with the process it was made in.
    static THREAD_RUNTIME: RefCell<Option<(u32, tokio::runtime::Runtime)>> =
        const { RefCell::new(None) };
}
