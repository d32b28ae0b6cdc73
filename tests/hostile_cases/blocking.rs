//! Issue 26, class 1: no import lets a plugin block the host past its
//! deadline.
//!
//! Before: epochs interrupt only running wasm, so a plugin sleeping through
//! WASI (`std::thread::sleep`) held its call 20 s against a 2 s deadline,
//! a second thread waited as long for the plugin's lock, and the same
//! sleep in `describe` held the load. Now every WASI wait ends at the
//! call's deadline (`wasi_poll` in the host).

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use slurm_wasm_host::{
    fixtures, CallError, FailurePolicy, Host, LoadError, PluginSource, TaskPlugin,
};

use super::runtime::{self, act};
use super::{assert_names, tight};

/// A plugin with a 300 ms deadline.
fn sleeper() -> TaskPlugin {
    let mut settings = tight(FailurePolicy::Restart { max_restarts: 10 });
    settings.limits.deadline = Duration::from_millis(300);
    runtime::started(None, settings)
}

#[test]
fn a_wasi_sleep_ends_at_the_deadline_as_a_deadline_fault() {
    let plugin = sleeper();
    let started = Instant::now();
    let err = act(&plugin, "sleep:20000").unwrap_err();
    // The 20 s sleep ended at the 300 ms deadline (bound generous for a
    // loaded CI machine; before the fix the call took the full 20 s).
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(err, CallError::Deadline { .. }), "{err:?}");
    assert_names(
        &err.to_string(),
        &[
            "task/hostile_runtime",
            "slurmd-launch-request",
            "deadline",
            "300 ms",
        ],
    );
    // The plugin restarts and serves; a short sleep within the deadline is
    // an ordinary wait.
    assert_eq!(act(&plugin, "sleep:5").expect("short sleep"), ["woke"]);
}

#[test]
fn a_second_thread_is_not_held_behind_a_sleeping_plugin() {
    let plugin = Arc::new(sleeper());
    let sleeping = {
        let plugin = plugin.clone();
        thread::spawn(move || act(&plugin, "sleep:20000"))
    };
    thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    // Waits for the plugin's lock, which the sleeper holds until its deadline.
    act(&plugin, "").expect("the next call is served");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(
        sleeping.join().expect("thread"),
        Err(CallError::Deadline { .. })
    ));
}

#[test]
fn a_sleep_in_describe_ends_the_load_at_the_deadline() {
    // task/hostile_runtime sleeps 30 s in describe when the clock reads 1007.
    let mut settings = tight(FailurePolicy::Fail);
    settings.limits.deadline = Duration::from_millis(300);
    let started = Instant::now();
    let err = runtime::load(1007, None, settings).err().expect("refused");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(err, LoadError::Instantiate { .. }), "{err:?}");
    assert_names(&err.to_string(), &["describe", "deadline", "300 ms"]);
}

/// Loads task/hostile_runtime in the disguise of clock value `at`, under
/// [`tight`] limits with plentiful fuel.
fn load_disguised(at: i64) -> LoadError {
    let mut settings = tight(FailurePolicy::Fail);
    settings.limits.fuel_per_call = u64::MAX;
    settings.limits.deadline = Duration::from_millis(300);
    runtime::load(at, None, settings).err().expect("refused")
}

#[test]
fn a_describe_that_spins_is_refused_naming_the_deadline() {
    // Before: "wasm trap: interrupt".
    let err = load_disguised(1011);
    assert_names(&err.to_string(), &["describe", "deadline", "300 ms"]);
}

#[test]
fn a_describe_that_allocates_1_5_gib_is_refused_naming_the_memory_limit() {
    // Before: reported as a bare trap.
    let err = load_disguised(1010);
    assert_names(
        &err.to_string(),
        &["describe", "memory limit", &(64u64 << 20).to_string()],
    );
}

/// The variable that makes [`deadline_in_a_forked_child`] the forking side.
const FORK_CHILD: &str = "SLURM_WASM_TEST_FORK_CHILD";

/// Threads do not survive `fork()`: a plugin called in a child of the
/// process that built the host (slurmd after daemonizing, a task forked by
/// slurmstepd) had no epoch ticker, so a loop ran past its deadline (and in
/// slurmstepd's child drained the node; `../shared/design/SLURM-SHIMS.md`,
/// hazard 1), and a WASI wait in a child of a process that had waited once
/// never ended (the timers' worker threads stayed in the parent). The fork
/// runs in a fresh process of this test binary running this test alone, so
/// no other test thread is forked with it.
#[test]
fn deadline_in_a_forked_child() {
    if std::env::var_os(FORK_CHILD).is_none() {
        // The test's name in this binary: its module path without the
        // crate's name.
        let module = module_path!().split_once("::").map_or("", |(_, m)| m);
        let name = format!("{module}::deadline_in_a_forked_child");
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", &name, "--test-threads=1", "--nocapture"])
            .env(FORK_CHILD, "1")
            .output()
            .expect("re-run the test binary");
        let log = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{log}");
        assert!(log.contains("1 passed"), "{log}");
        return;
    }
    let mut settings = tight(FailurePolicy::Restart { max_restarts: 10 });
    settings.limits.fuel_per_call = u64::MAX;
    settings.limits.deadline = Duration::from_millis(300);
    let host = Host::new(slurm_wasm_bundled::host_options()).expect("host");
    let plugin = TaskPlugin::load(
        &host,
        &PluginSource::File(slurm_wasm_test_artifacts::HOSTILE.into()),
        settings,
    )
    .expect("loads");
    plugin.init(&fixtures::task_config()).expect("init");
    let waiter = runtime::started(None, settings_for_waits());
    assert_eq!(act(&waiter, "sleep:5").expect("the parent waits"), ["woke"]);
    // SAFETY: this process runs one test on one thread; the child only calls
    // the plugins and exits with `_exit`.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        let mut request = fixtures::launch_request(1, 1, 4);
        request.cpu_bind = "loop".into();
        let looped = plugin.slurmd_launch_request(&request);
        let waited = act(&waiter, "sleep:5");
        let code = match (looped, waited) {
            (Err(CallError::Deadline { .. }), Ok(messages)) if messages == ["woke"] => 0,
            _ => 1,
        };
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    // Without a ticker in the child the loop never ends: give up after 30 s.
    let started = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: `child` is our child; `status` is a valid out-pointer.
        let done = unsafe { libc::waitpid(child, &mut status, libc::WNOHANG) };
        if done == child {
            break;
        }
        if started.elapsed() > Duration::from_secs(30) {
            // SAFETY: as above.
            unsafe {
                libc::kill(child, libc::SIGKILL);
                libc::waitpid(child, &mut status, 0);
            }
            panic!("the loop in the forked child passed its deadline by 30 s");
        }
        thread::sleep(Duration::from_millis(20));
    }
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child's calls did not end at their deadline or did not wait (status {status})"
    );
}

/// A plugin with a 300 ms deadline and plentiful fuel.
fn settings_for_waits() -> slurm_wasm_host::PluginSettings {
    let mut settings = tight(FailurePolicy::Restart { max_restarts: 10 });
    settings.limits.fuel_per_call = u64::MAX;
    settings.limits.deadline = Duration::from_millis(300);
    settings
}
