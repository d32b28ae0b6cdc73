//! Several policy stacks on the same workload, in parallel: one thread per
//! stack (each with its own host, plugin instances and virtual clock), at
//! most `threads` at a time.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::engine::policy::LoadedStack;
use crate::engine::{simulate, Input, PolicySpec, SimResult};

/// Runs every stack of `specs` on `input`, `threads` at a time (at least
/// one). `progress[i]`, when given, counts the jobs stack `i` finished.
/// `seed` seeds the plugins' random source, the same for every stack.
/// Results come back in `specs` order, whatever order the threads finish in;
/// each stack's outcome does not depend on the others or on the thread
/// count.
///
/// # Errors
///
/// One message per stack that could not be loaded or faulted, naming it;
/// the other stacks still run.
pub fn compare(
    input: &Input<'_>,
    specs: &[PolicySpec],
    seed: u64,
    threads: usize,
    progress: &[AtomicU64],
) -> Vec<Result<SimResult, String>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<SimResult, String>>>> =
        Mutex::new((0..specs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, specs.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(spec) = specs.get(i) else { break };
                let result = run_one(input, spec, seed, progress.get(i));
                results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(result);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not run".into())))
        .collect()
}

/// Loads `spec` (as components or native builds, as its `build` says) and
/// simulates `input` through it.
///
/// # Errors
///
/// The load error or the simulation error, prefixed with the stack's label.
pub fn run_one(
    input: &Input<'_>,
    spec: &PolicySpec,
    seed: u64,
    progress: Option<&AtomicU64>,
) -> Result<SimResult, String> {
    let mut stack = LoadedStack::open(spec, input.cluster, input.epoch(), seed)
        .map_err(|e| format!("{e:#}"))?;
    simulate(
        input,
        stack.select.as_mut(),
        stack.prioritizer.as_mut(),
        &stack.clock,
        &spec.label,
        progress,
    )
    .map_err(|e| format!("{}: {e}", spec.label))
}
