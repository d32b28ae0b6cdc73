//! Taps on a plugin's calls: a [recording](crate::recording) of every call,
//! and shadows, candidate plugins that get the same calls as the active one
//! and whose answers are compared, never used.
//!
//! # Shadows
//!
//! A shadow is a plugin of the same kind, loaded with its own limits,
//! grants and failure policy before the active plugin's `init`, so that it
//! sees every call that builds the active plugin's world. Each call the
//! active plugin answers is handed, with its answer, to the shadow's own
//! thread; the shadow makes the same call with the clock the active call
//! saw, and a different answer (or failure kind) counts as a divergence of
//! that function, the first few kept in full ([`ShadowReport`]).
//!
//! **What a shadow costs the live path** (the stated bound): encoding the
//! call's arguments and answer once (shared with a recording), and one
//! non-blocking send per shadow. The live path never waits for a shadow: a
//! shadow that loops, sleeps or traps runs out its own deadline on its own
//! thread. A shadow more than [`ShadowOptions::queue`] calls behind is taken
//! out of service, since a shadow that missed calls no longer has the
//! active plugin's state; so is a shadow its own failure policy disables,
//! or one a call cannot be replayed to. The active plugin is never touched.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex};

use crate::capabilities::clock::VirtualClock;
use crate::error::LoadError;
use crate::recording::{CallRecord, Recorder, RecordingError, RecordingSummary};
use crate::replay::{Divergences, Replayer};

/// How a shadow runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShadowOptions {
    /// Calls it may fall behind before it is taken out of service (4096 by
    /// default).
    pub queue: usize,
    /// Divergences kept in full (10 by default).
    pub keep: usize,
}

impl Default for ShadowOptions {
    fn default() -> Self {
        ShadowOptions {
            queue: 4096,
            keep: 10,
        }
    }
}

/// What a shadow did so far.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ShadowReport {
    /// The shadow's plugin type.
    pub plugin: String,
    /// Calls it compared.
    pub received: u64,
    /// Calls handed to it and not compared yet (its queue, and the call it
    /// is making).
    pub pending: usize,
    /// How its answers compared with the active plugin's.
    pub divergences: Divergences,
    /// Why it stopped taking calls, if it did.
    pub out_of_service: Option<String>,
}

/// A tap could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    /// The plugin was initialised already: a tap added now would miss the
    /// calls that built its world.
    #[error("{plugin}: {what} must be set up before init (it would miss the calls that built the plugin's world)")]
    AfterInit {
        /// The active plugin.
        plugin: String,
        /// `a recording` or `a shadow`.
        what: &'static str,
    },
    /// A recording is being made already.
    #[error("{plugin}: a recording is being made already")]
    Recording {
        /// The active plugin.
        plugin: String,
    },
    /// A shadow may not act: its calls would bind processes or change
    /// GPU clocks the active plugin also decides about.
    #[error("a shadow may not be granted {capability}: its calls must not act on the node")]
    Acting {
        /// `cpuset` or `gpu-control`.
        capability: &'static str,
    },
    /// The shadow did not load.
    #[error("shadow: {0}")]
    Load(#[from] LoadError),
    /// The recording could not be created.
    #[error(transparent)]
    File(#[from] RecordingError),
}

/// The taps of one plugin, kept under its lock so that calls are seen in
/// the order they ran.
#[derive(Default)]
pub(crate) struct Tap {
    pub recorder: Option<Recorder>,
    pub shadows: Vec<Shadow>,
    pub next_seq: u64,
}

impl Tap {
    /// Whether a call must be encoded.
    pub fn active(&self) -> bool {
        self.recorder.is_some() || !self.shadows.is_empty()
    }

    /// Hands one finished call to the recording and the shadows.
    pub fn observe(&mut self, call: CallRecord) {
        if let Some(recorder) = &mut self.recorder {
            recorder.write(&call);
        }
        if !self.shadows.is_empty() {
            let call = Arc::new(call);
            for shadow in &mut self.shadows {
                shadow.feed(&call);
            }
        }
    }

    /// Ends the recording, if one is made.
    pub fn finish_recording(&mut self) -> Result<Option<RecordingSummary>, RecordingError> {
        self.recorder.take().map(Recorder::finish).transpose()
    }
}

struct Progress {
    report: ShadowReport,
    /// Calls handed over and not yet compared.
    pending: usize,
}

struct ShadowShared {
    progress: Mutex<Progress>,
    settled: Condvar,
    out: AtomicBool,
}

impl ShadowShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take_out(&self, progress: &mut Progress, reason: String) {
        if progress.report.out_of_service.is_none() {
            tracing::warn!(shadow = %progress.report.plugin, "shadow out of service: {reason}");
            progress.report.out_of_service = Some(reason);
        }
        self.out.store(true, Ordering::Release);
    }
}

/// One shadow: the sending side on the live path, its thread on the other.
pub(crate) struct Shadow {
    sender: Option<SyncSender<Arc<CallRecord>>>,
    shared: Arc<ShadowShared>,
    queue: usize,
}

impl Shadow {
    /// Starts the shadow's thread. `clock` is the one `plugin`'s host
    /// answers with; it is set to each call's recorded clock.
    pub fn start(
        plugin: Arc<dyn Replayer>,
        plugin_type: String,
        clock: Arc<VirtualClock>,
        options: ShadowOptions,
    ) -> Shadow {
        let shared = Arc::new(ShadowShared {
            progress: Mutex::new(Progress {
                report: ShadowReport {
                    plugin: plugin_type.clone(),
                    received: 0,
                    pending: 0,
                    divergences: Divergences::keeping(options.keep),
                    out_of_service: None,
                },
                pending: 0,
            }),
            settled: Condvar::new(),
            out: AtomicBool::new(false),
        });
        let (sender, receiver) = sync_channel(options.queue);
        let worker = shared.clone();
        std::thread::Builder::new()
            .name(format!("shadow {plugin_type}"))
            .spawn(move || run(&*plugin, &clock, &receiver, &worker))
            .expect("spawning a shadow thread");
        Shadow {
            sender: Some(sender),
            shared,
            queue: options.queue,
        }
    }

    /// Hands `call` over without waiting (see the module docs).
    fn feed(&mut self, call: &Arc<CallRecord>) {
        if self.shared.out.load(Ordering::Acquire) {
            self.sender = None;
        }
        let Some(sender) = &self.sender else { return };
        self.shared.lock().pending += 1;
        match sender.try_send(call.clone()) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                let mut progress = self.shared.lock();
                progress.pending -= 1;
                let reason = format!(
                    "fell {} calls behind at call {} (queue = {}): its state no longer follows the active plugin's calls",
                    self.queue, call.seq, self.queue
                );
                self.shared.take_out(&mut progress, reason);
                self.shared.settled.notify_all();
                self.sender = None;
            }
            Err(TrySendError::Disconnected(_)) => {
                let mut progress = self.shared.lock();
                progress.pending -= 1;
                self.shared.settled.notify_all();
                self.sender = None;
            }
        }
    }

    /// What it did so far.
    pub fn report(&self) -> ShadowReport {
        let progress = self.shared.lock();
        ShadowReport {
            pending: progress.pending,
            ..progress.report.clone()
        }
    }

    /// Waits until it compared every call handed to it (or left service).
    pub fn settle(&self) {
        let mut progress = self.shared.lock();
        while progress.pending > 0 {
            progress = self
                .shared
                .settled
                .wait(progress)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// The shadow's thread: compares each call until its queue closes.
fn run(
    plugin: &dyn Replayer,
    clock: &VirtualClock,
    calls: &Receiver<Arc<CallRecord>>,
    shared: &ShadowShared,
) {
    for call in calls {
        let verdict = if shared.out.load(Ordering::Acquire) {
            None
        } else {
            clock.set(call.clock);
            Some(plugin.replay(&call))
        };
        let mut progress = shared.lock();
        progress.pending -= 1;
        match verdict {
            None => {}
            Some(Ok(verdict)) => {
                progress.report.received += 1;
                progress.report.divergences.add(&call, verdict);
                if let Some(reason) = plugin.out_of_service() {
                    shared.take_out(&mut progress, reason);
                }
            }
            Some(Err(error)) => {
                progress.report.received += 1;
                shared.take_out(&mut progress, error.to_string());
            }
        }
        shared.settled.notify_all();
    }
}
