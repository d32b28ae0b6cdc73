//! The part of a plugin handle that every kind shares: loading checks, the
//! instance behind a lock, limits per call, fault classification and the
//! failure policy.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde::Serialize;

use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Store, Trap};

use crate::bindings::types::{Capability, PluginError, PluginIdentity};
use crate::bundled;
use crate::capabilities::{Grants, Services};
use crate::engine::{Host, Shared};
use crate::error::{capability_name, CallError, LoadError, UnknownName};
use crate::kinds::inner_select::{extend_deadline, Inner, InnerFailure, Wiring};
use crate::kinds::select::SelectPlugin;
use crate::limits::{FailurePolicy, Limits};
use crate::plugin_log::LogBudget;
use crate::recording::{
    CallRecord, Header, RecordOptions, Recorder, RecordingError, RecordingSummary,
};
use crate::state::{ComponentDigest, ComponentId};
use crate::store::{HostState, StepScope};
use crate::tap::{Shadow, ShadowOptions, ShadowReport, Tap, TapError};
use crate::validate::Checker;
use crate::wasi_poll::BlockedPastDeadline;

/// The contract version this host speaks.
pub const CONTRACT_VERSION: &str = "0.1.0";

/// Longest name a plugin type may have after its kind (`cons_tres` of
/// `select/cons_tres`).
pub const MAX_TYPE_NAME: usize = 64;

/// The four plugin kinds, one WIT world each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PluginKind {
    /// Node selection (`select/cons_tres`).
    Select,
    /// Generic resources (`gres/gpu`).
    Gres,
    /// Job priority (`priority/multifactor`).
    Priority,
    /// Task binding (`task/affinity`).
    Task,
}

impl PluginKind {
    /// Every kind.
    pub const ALL: [PluginKind; 4] = [
        PluginKind::Select,
        PluginKind::Gres,
        PluginKind::Priority,
        PluginKind::Task,
    ];

    /// The kind as it starts a plugin type (`select` of `select/linear`).
    pub fn name(self) -> &'static str {
        match self {
            PluginKind::Select => "select",
            PluginKind::Gres => "gres",
            PluginKind::Priority => "priority",
            PluginKind::Task => "task",
        }
    }

    /// Capability interfaces a plugin of this kind may import.
    pub fn allowed_capabilities(self) -> &'static [Capability] {
        match self {
            PluginKind::Select | PluginKind::Priority => &[Capability::Log, Capability::Clock],
            PluginKind::Gres => &[
                Capability::Log,
                Capability::Clock,
                Capability::Gpu,
                Capability::GpuControl,
            ],
            PluginKind::Task => &[
                Capability::Log,
                Capability::Clock,
                Capability::Topology,
                Capability::Cpuset,
            ],
        }
    }

    /// The capabilities, beyond `log` and `clock`, that this kind's world
    /// imports and that may therefore be granted.
    pub fn grantable(self) -> impl Iterator<Item = Capability> {
        self.allowed_capabilities()
            .iter()
            .copied()
            .filter(|c| !c.always_granted())
    }

    /// Is `plugin_type` a type of this kind: `<kind>/<name>`, the name made
    /// of 1 to 64 (`MAX_TYPE_NAME`) letters, digits, `_` and `-`
    /// (`select/cons_tres`)? Nothing else can name a path, break a log line
    /// or pass for another plugin's type.
    pub fn accepts_type(self, plugin_type: &str) -> bool {
        plugin_type.split_once('/').is_some_and(|(kind, name)| {
            kind == self.name()
                && !name.is_empty()
                && name.len() <= MAX_TYPE_NAME
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
    }

    /// True for kinds Slurm loads several of (`GresTypes`, `TaskPlugin`
    /// lists), whose slots may be qualified (`gres.gpu`).
    pub fn allows_several(self) -> bool {
        matches!(self, PluginKind::Gres | PluginKind::Task)
    }

    /// The kind called `name` (`select`, `gres`, `priority` or `task`).
    pub fn from_name(name: &str) -> Option<PluginKind> {
        PluginKind::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for PluginKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PluginKind {
    type Err = UnknownName;

    /// Parses `select`, `gres`, `priority` or `task`.
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        PluginKind::from_name(s).ok_or_else(|| UnknownName {
            what: "plugin kind",
            found: s.to_owned(),
            expected: "select, gres, priority or task",
        })
    }
}

/// How one plugin is run: its limits, grants and failure policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginSettings {
    /// Fuel, deadline, memory and state limits of each call.
    pub limits: Limits,
    /// The capabilities it may call beyond `log` and `clock`.
    pub grants: Grants,
    /// What serves the calls after a fault.
    pub failure: FailurePolicy,
    /// Components besides its own whose state files the plugin restores:
    /// earlier builds of a site's own `.wasm`, by the SHA-256 of their
    /// bytes (see [`crate::state`]).
    pub accept_state_from: Vec<ComponentDigest>,
}

/// Where a plugin's component comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A `.wasm` component file.
    File(std::path::PathBuf),
    /// Component bytes, with a name for messages.
    Bytes {
        /// What messages and errors call it (a file name, say).
        name: String,
        /// The component's bytes.
        bytes: Vec<u8>,
    },
    /// A plugin bundled with the host, by type (`priority/basic`).
    Bundled(String),
}

impl PluginSource {
    /// The source's name for messages and its bytes; a bundled one from
    /// `host`'s set ([`crate::HostOptions::bundled`]).
    pub(crate) fn read(
        &self,
        host: &Host,
    ) -> Result<(String, std::borrow::Cow<'static, [u8]>), LoadError> {
        match self {
            PluginSource::File(path) => {
                let name = path.display().to_string();
                let bytes = std::fs::read(path).map_err(|e| LoadError::Io {
                    source_name: name.clone(),
                    reason: e.to_string(),
                })?;
                Ok((name, bytes.into()))
            }
            PluginSource::Bytes { name, bytes } => Ok((name.clone(), bytes.clone().into())),
            PluginSource::Bundled(plugin_type) => {
                let set = host.shared.bundled;
                let plugin = bundled::find(set, plugin_type).ok_or_else(|| {
                    LoadError::UnknownBundled(plugin_type.clone(), bundled::names(set))
                })?;
                Ok((
                    format!("bundled {}", plugin.plugin_type),
                    plugin.bytes.into(),
                ))
            }
        }
    }
}

/// What a kind contributes to the shared machinery.
pub(crate) trait Kind: Sized + 'static {
    const KIND: PluginKind;
    /// bindgen's pre-instantiated world (`PriorityPluginPre<HostState>`).
    type Pre: Clone + Send + Sync + 'static;
    /// bindgen's instantiated world (`PriorityPlugin`).
    type Bindings: Send + Sync + 'static;
    /// The argument of the kind's `init`.
    type Config: Clone + Send + Sync + 'static;

    fn linker(shared: &Shared) -> &Linker<HostState>;
    fn pre(instance_pre: InstancePre<HostState>) -> wasmtime::Result<Self::Pre>;
    fn instantiate(
        pre: &Self::Pre,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<Self::Bindings>;
    fn describe(
        bindings: &Self::Bindings,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<PluginIdentity>;
    fn init(
        bindings: &Self::Bindings,
        store: &mut Store<HostState>,
        config: &Self::Config,
    ) -> wasmtime::Result<Result<(), PluginError>>;
    /// Restores saved state after a restart; kinds without state return `Ok(Ok(()))`.
    fn restore(
        bindings: &Self::Bindings,
        store: &mut Store<HostState>,
        data: &[u8],
    ) -> wasmtime::Result<Result<(), PluginError>>;
    /// The plugin's state, to hand to a reloaded build (`state-save`;
    /// `send-stepd` for gres); `None` for kinds without state.
    fn save(
        bindings: &Self::Bindings,
        store: &mut Store<HostState>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, PluginError>>;
    /// What the host remembers of the calls that built the plugin's world
    /// beyond its configuration and saved state (a select plugin's node
    /// table and running jobs), kept up to date by the kind's handle.
    type Journal: Journal;
    /// Gives a restarted instance its world back from `journal`, after
    /// `init`; each call through [`Replay::call`]. `restore` hands it the
    /// remembered state (when there is one): the kind calls it where its
    /// plugins expect it (a select plugin's state describes its node
    /// table, so it comes after `node-init`).
    fn replay(
        bindings: &Self::Bindings,
        replay: &mut Replay<'_>,
        journal: &Self::Journal,
        restore: &dyn Fn(&mut Replay<'_>) -> Result<(), CallError>,
    ) -> Result<(), CallError>;
}

/// What a kind keeps of the calls that built its plugin's world.
pub(crate) trait Journal: Default + Send + 'static {
    /// The plugin's state was just saved or restored through the host: what
    /// the state holds need not be replayed any more.
    fn state_kept(&mut self) {}
}

impl Journal for () {}

/// The calls that give a restarted instance its world back: each runs with
/// fresh fuel and deadline, and a fault or a plugin error ends the restart
/// with a [`CallError::Start`] naming the call.
pub(crate) struct Replay<'a> {
    store: &'a mut Store<HostState>,
    limits: &'a Limits,
    plugin: &'a str,
    /// The call the restart serves, for messages.
    serving: &'static str,
}

impl Replay<'_> {
    /// Runs `function` on the restarting instance.
    pub(crate) fn call(
        &mut self,
        function: &'static str,
        f: impl FnOnce(&mut Store<HostState>) -> wasmtime::Result<Result<(), PluginError>>,
    ) -> Result<(), CallError> {
        arm(self.store, self.limits);
        let reason = match f(self.store) {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => format!(
                "{function} returned error {}: {}",
                e.code,
                plugin_text(&e.message)
            ),
            Err(trap) => {
                let data = self.store.data();
                let fault = classify(
                    self.plugin,
                    function,
                    self.limits,
                    trap,
                    data.call.denied.first().copied(),
                    data.limiter.memory_refused,
                );
                format!("replaying {function}: {fault}")
            }
        };
        Err(CallError::Start {
            plugin: self.plugin.into(),
            function: self.serving,
            reason,
        })
    }
}

/// Fresh fuel and deadline for one entry into a plugin: the epoch deadline
/// stops running code, [`crate::store::CallContext::deadline`] ends WASI
/// waits at the same time.
fn arm(store: &mut Store<HostState>, limits: &Limits) {
    store
        .set_fuel(limits.fuel_per_call)
        .expect("fuel is enabled on the engine");
    store.set_epoch_deadline(limits.deadline_ticks());
    let data = store.data_mut();
    data.call.deadline = Some(Instant::now() + limits.deadline);
    data.call.denied.clear();
    data.limiter.memory_refused = false;
}

/// A compiled, checked plugin ready to instantiate.
struct Loaded<K: Kind> {
    identity: PluginIdentity,
    /// `identity.plugin_type`, shared so a call does not allocate for it.
    plugin_type: Arc<str>,
    /// The digest of its bytes and whether it is bundled: what its state
    /// files record as their writer.
    component_id: ComponentId,
    /// Whether it imports `select` (`select-wrapper` world): it then
    /// needs an inner plugin to serve that import.
    wrapper: bool,
    pre: K::Pre,
}

struct Live<K: Kind> {
    store: Store<HostState>,
    bindings: K::Bindings,
}

struct Slotted<K: Kind> {
    loaded: Arc<Loaded<K>>,
    live: Option<Live<K>>,
    faults: u32,
    disabled: Option<String>,
    config: Option<K::Config>,
    saved_state: Option<Vec<u8>>,
    /// The calls since `init` that a restart replays ([`Kind::replay`]).
    journal: K::Journal,
    fell_back: bool,
    /// The recording and shadows of its calls ([`crate::tap`]).
    tap: Tap,
    /// Reloads rolled back so far.
    rollbacks: u32,
    /// The version a reload replaced, while the new one is on probation.
    probation: Option<Probation<K>>,
}

/// The version a reload replaced, kept running beside the new one for its
/// first calls so that it can take over with its state in step.
struct Probation<K: Kind> {
    loaded: Arc<Loaded<K>>,
    live: Live<K>,
    calls_left: u32,
}

/// A loaded plugin of kind `K`. `Send + Sync`: calls from several threads
/// are serialised on the plugin's own lock; other plugins are unaffected.
pub(crate) struct PluginCore<K: Kind> {
    host: Host,
    settings: PluginSettings,
    inner: Mutex<Slotted<K>>,
    /// Fuel used by every call so far (see [`PluginCore::fuel_used`]).
    fuel_used: AtomicU64,
    /// What it may still log ([`crate::plugin_log`]), across restarts.
    log: Arc<LogBudget>,
    /// A select wrapper's inner plugin, which every instance's imported
    /// `select` forwards to ([`crate::kinds::inner_select`]).
    inner_select: Option<Arc<Wiring>>,
    /// Instances started so far: a record (nodeinfo, jobinfo) is valid
    /// only in the instance whose number was current when it was made.
    instances: AtomicU64,
}

/// Statistics of the last call, for benchmarks and `tracing`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallStats {
    /// Fuel the call used: the same for the same call on the same state,
    /// on any machine.
    pub fuel_used: u64,
}

impl<K: Kind> PluginCore<K> {
    /// Compiles (or fetches from the cache), checks imports and exports,
    /// asks the plugin to `describe` itself and checks its slot, contract
    /// version and required capabilities.
    pub(crate) fn load(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
    ) -> Result<Self, LoadError> {
        Self::load_over(host, source, settings, None)
    }

    /// [`PluginCore::load`], with `inner` serving the `select` a select
    /// wrapper imports. A wrapper without an inner plugin, and an inner
    /// plugin for a component that is no wrapper, are refused.
    pub(crate) fn load_over(
        host: &Host,
        source: &PluginSource,
        settings: PluginSettings,
        inner: Option<SelectPlugin>,
    ) -> Result<Self, LoadError> {
        let loaded = load_checked::<K>(host, source, &settings)?;
        match (loaded.wrapper, &inner) {
            (true, None) => {
                return Err(LoadError::WrapperWithoutInner {
                    plugin_type: loaded.identity.plugin_type,
                })
            }
            (false, Some(inner)) => {
                return Err(LoadError::NotAWrapper {
                    plugin_type: loaded.identity.plugin_type,
                    inner: inner.identity().plugin_type,
                })
            }
            _ => {}
        }
        Ok(PluginCore {
            host: host.clone(),
            settings,
            inner: Mutex::new(Slotted {
                loaded: Arc::new(loaded),
                live: None,
                faults: 0,
                disabled: None,
                config: None,
                saved_state: None,
                journal: K::Journal::default(),
                fell_back: false,
                tap: Tap::default(),
                rollbacks: 0,
                probation: None,
            }),
            fuel_used: AtomicU64::new(0),
            log: Arc::default(),
            inner_select: inner.map(|inner| Arc::new(Wiring::new(inner))),
            instances: AtomicU64::new(0),
        })
    }

    /// The number of the instance serving now (see [`PluginCore::instances`]).
    pub(crate) fn instance(&self) -> u64 {
        self.instances.load(Ordering::Relaxed)
    }

    /// A select wrapper's inner plugin.
    pub(crate) fn inner(&self) -> Option<&Wiring> {
        self.inner_select.as_deref()
    }

    /// The fuel all calls have used since the plugin was loaded, faulted
    /// calls included (instantiating a restarted instance is not counted).
    /// Deterministic for a given sequence of calls: a measure of the work
    /// done inside the plugin that does not depend on the machine.
    pub(crate) fn fuel_used(&self) -> u64 {
        self.fuel_used.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Slotted<K>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The plugin's identity (of the fallback once it took over).
    pub(crate) fn identity(&self) -> PluginIdentity {
        self.lock().loaded.identity.clone()
    }

    /// The plugin's type, cheaply (of the fallback once it took over).
    pub(crate) fn plugin_type(&self) -> Arc<str> {
        self.lock().loaded.plugin_type.clone()
    }

    pub(crate) fn settings(&self) -> &PluginSettings {
        &self.settings
    }

    /// The host it was loaded through.
    pub(crate) fn host(&self) -> &Host {
        &self.host
    }

    /// The capability providers of the plugin's host.
    pub(crate) fn services(&self) -> &Services {
        self.host.services()
    }

    /// Remembers the configuration `init` was called with (for restarts).
    pub(crate) fn remember_config(&self, config: &K::Config) {
        self.lock().config = Some(config.clone());
    }

    /// The component it runs (of the fallback once that took over).
    pub(crate) fn component_id(&self) -> ComponentId {
        self.lock().loaded.component_id
    }

    /// Refuses a state blob larger than [`Limits::state_bytes`], before it
    /// is handed to the plugin or kept.
    pub(crate) fn check_state_size(
        &self,
        function: &'static str,
        bytes: usize,
    ) -> Result<(), CallError> {
        let limit_bytes = self.settings.limits.state_bytes;
        if bytes > limit_bytes {
            return Err(CallError::StateTooLarge {
                plugin: self.plugin_type().to_string(),
                function,
                bytes,
                limit_bytes,
            });
        }
        Ok(())
    }

    /// Remembers a state blob (saved, restored or received by `function`)
    /// for restarts; one over [`Limits::state_bytes`] is refused and the
    /// blob remembered before is kept.
    pub(crate) fn remember_state(
        &self,
        function: &'static str,
        data: &[u8],
    ) -> Result<(), CallError> {
        self.check_state_size(function, data.len())?;
        let mut slot = self.lock();
        slot.saved_state = Some(data.to_vec());
        slot.journal.state_kept();
        Ok(())
    }

    /// Reads the journal a restart replays.
    pub(crate) fn journal<R>(&self, f: impl FnOnce(&K::Journal) -> R) -> R {
        f(&self.lock().journal)
    }

    fn new_store(&self, plugin: &str) -> Store<HostState> {
        let shared = &self.host.shared;
        let state = HostState::new(
            plugin.into(),
            &self.settings.limits,
            self.settings.grants.clone(),
            self.host.services().clone(),
            shared.random_seed,
            self.log.clone(),
        );
        let mut store = Store::new(&shared.engine, state);
        store.limiter(|s| &mut s.limiter);
        if let Some(inner) = &self.inner_select {
            store.data_mut().inner = Some(Inner::new(inner.clone()));
            store.epoch_deadline_callback(extend_deadline);
        }
        store
    }

    /// Runs one call: fresh fuel and deadline, `step` as the step whose
    /// processes the plugin may bind, fault classification, and the failure
    /// policy. Every function but `init` and `fini` is refused until an
    /// `init` has succeeded ([`CallError::NotInitialised`]). `args` (the
    /// call's arguments as one tuple) and the answer are what the plugin's
    /// taps see ([`crate::tap`]).
    pub(crate) fn call<A, R>(
        &self,
        function: &'static str,
        args: &A,
        step: Option<StepScope>,
        f: impl Fn(&K::Bindings, &mut Store<HostState>) -> wasmtime::Result<Result<R, PluginError>>,
    ) -> Result<(R, CallStats), CallError>
    where
        A: Serialize + ?Sized,
        R: Serialize,
    {
        self.call_checked(function, args, step, f, no_check)
    }

    /// [`PluginCore::call`], with `check` run on the answer under the same
    /// lock: an answer it refuses ([`CallError::Invalid`]) is what the
    /// caller and the taps get, and, during a reload's probation, rolls the
    /// reload back like a fault ([`PluginCore::reload`]).
    pub(crate) fn call_checked<A, R>(
        &self,
        function: &'static str,
        args: &A,
        step: Option<StepScope>,
        f: impl Fn(&K::Bindings, &mut Store<HostState>) -> wasmtime::Result<Result<R, PluginError>>,
        check: impl Fn(&Checker<'_>, &K::Journal, &R) -> Result<(), CallError>,
    ) -> Result<(R, CallStats), CallError>
    where
        A: Serialize + ?Sized,
        R: Serialize,
    {
        self.call_journaled(function, args, step, f, check, |_, _| {})
    }

    /// [`PluginCore::call_checked`], and `record` of its answer into the
    /// journal a restart replays, under the same lock, so that concurrent
    /// calls are journaled in the order they ran. `record` runs only on an
    /// answer `check` accepted.
    pub(crate) fn call_journaled<A, R>(
        &self,
        function: &'static str,
        args: &A,
        step: Option<StepScope>,
        f: impl Fn(&K::Bindings, &mut Store<HostState>) -> wasmtime::Result<Result<R, PluginError>>,
        check: impl Fn(&Checker<'_>, &K::Journal, &R) -> Result<(), CallError>,
        record: impl FnOnce(&mut K::Journal, &R),
    ) -> Result<(R, CallStats), CallError>
    where
        A: Serialize + ?Sized,
        R: Serialize,
    {
        self.host.ensure_ticker();
        let mut slot = self.lock();
        if !slot.tap.active() {
            return self.call_locked(&mut slot, function, step, true, f, check, record);
        }
        let clock = self.services().clock.now();
        let started = Instant::now();
        let result = self.call_locked(&mut slot, function, step, true, f, check, record);
        let micros = started.elapsed().as_micros() as u64;
        let tap = &mut slot.tap;
        let seq = tap.next_seq;
        tap.next_seq += 1;
        tap.observe(CallRecord {
            seq,
            function: function.into(),
            clock,
            fuel: result.as_ref().map_or(0, |(_, stats)| stats.fuel_used),
            micros,
            args: postcard::to_allocvec(args).expect("call arguments encode"),
            outcome: match &result {
                Ok((answer, _)) => Ok(postcard::to_allocvec(answer).expect("answers encode")),
                Err(error) => Err(error.into()),
            },
        });
        result
    }

    /// [`PluginCore::call`] for the functions whose arguments or answer are
    /// plugin-side records (nodeinfo, jobinfo, epilog info): handles into
    /// one instance, which taps neither record nor replay
    /// ([`crate::replay`]).
    pub(crate) fn call_untapped<R>(
        &self,
        function: &'static str,
        f: impl Fn(&K::Bindings, &mut Store<HostState>) -> wasmtime::Result<Result<R, PluginError>>,
        check: impl Fn(&Checker<'_>, &K::Journal, &R) -> Result<(), CallError>,
    ) -> Result<(R, CallStats), CallError> {
        self.host.ensure_ticker();
        let mut slot = self.lock();
        self.call_locked(&mut slot, function, None, false, f, check, |_, _| {})
    }

    /// Why the plugin takes no more calls, once its failure policy
    /// disabled it.
    pub(crate) fn disabled(&self) -> Option<String> {
        self.lock().disabled.clone()
    }

    /// Starts recording every call from now on (see [`crate::recording`]).
    pub(crate) fn start_recording(&self, options: RecordOptions) -> Result<(), TapError> {
        let mut slot = self.lock();
        let plugin = slot.loaded.identity.plugin_type.clone();
        if slot.config.is_some() {
            return Err(TapError::AfterInit {
                plugin,
                what: "a recording",
            });
        }
        if slot.tap.recorder.is_some() {
            return Err(TapError::Recording { plugin });
        }
        let header = Header {
            contract: CONTRACT_VERSION.into(),
            kind: K::KIND.name().into(),
            plugin_type: plugin,
            plugin_version: slot.loaded.identity.plugin_version,
            component: slot.loaded.component_id.digest.to_string(),
            part: 0,
            first_seq: slot.tap.next_seq,
        };
        slot.tap.recorder = Some(Recorder::create(options, header)?);
        Ok(())
    }

    /// Ends the recording and says what it holds; `None` when none is made.
    pub(crate) fn finish_recording(&self) -> Result<Option<RecordingSummary>, RecordingError> {
        self.lock().tap.finish_recording()
    }

    /// Adds a shadow (see [`crate::tap`]); refused after `init`.
    pub(crate) fn add_shadow(
        &self,
        shadow: Arc<dyn crate::replay::Replayer>,
        shadow_type: String,
        clock: Arc<crate::capabilities::clock::VirtualClock>,
        options: ShadowOptions,
    ) -> Result<(), TapError> {
        let mut slot = self.lock();
        if slot.config.is_some() {
            return Err(TapError::AfterInit {
                plugin: slot.loaded.identity.plugin_type.clone(),
                what: "a shadow",
            });
        }
        slot.tap
            .shadows
            .push(Shadow::start(shadow, shadow_type, clock, options));
        Ok(())
    }

    /// Each shadow's report as it stands; with `settle`, once it compared
    /// every call handed to it (the plugin's calls wait meanwhile).
    pub(crate) fn shadow_reports(&self, settle: bool) -> Vec<ShadowReport> {
        let slot = self.lock();
        slot.tap
            .shadows
            .iter()
            .map(|shadow| {
                if settle {
                    shadow.settle();
                }
                shadow.report()
            })
            .collect()
    }

    /// One call under the plugin's lock ([`PluginCore::call_journaled`]):
    /// on the live instance (started first if there is none), and with
    /// `mirror` during a reload's probation on the replaced version too
    /// ([`PluginCore::reload`]; calls on plugin-side records are not
    /// mirrored: the records belong to one instance). An answer is checked
    /// by the type of the version that gave it.
    #[allow(clippy::too_many_arguments)]
    fn call_locked<R>(
        &self,
        slot: &mut MutexGuard<'_, Slotted<K>>,
        function: &'static str,
        step: Option<StepScope>,
        mirror: bool,
        f: impl Fn(&K::Bindings, &mut Store<HostState>) -> wasmtime::Result<Result<R, PluginError>>,
        check: impl Fn(&Checker<'_>, &K::Journal, &R) -> Result<(), CallError>,
        record: impl FnOnce(&mut K::Journal, &R),
    ) -> Result<(R, CallStats), CallError> {
        let plugin = slot.loaded.plugin_type.clone();
        if let Some(reason) = &slot.disabled {
            return Err(CallError::Disabled {
                plugin: plugin.to_string(),
                function,
                reason: reason.clone(),
            });
        }
        if slot.config.is_none() && !matches!(function, "init" | "fini") {
            return Err(CallError::NotInitialised {
                plugin: plugin.to_string(),
                function,
            });
        }
        if slot.live.is_none() {
            match self.start(&slot.loaded, slot, function) {
                Ok(live) => slot.live = Some(live),
                Err(error) => {
                    self.after_fault(slot, &error);
                    return Err(error);
                }
            }
        }
        let checked = |outcome: Result<(R, CallStats), Run>, plugin: &str, journal: &K::Journal| {
            let (value, stats) = outcome?;
            let checker = Checker { plugin, function };
            match check(&checker, journal, &value) {
                Ok(()) => Ok((value, stats)),
                Err(error) => Err(Run::Refused(error)),
            }
        };
        let live = slot.live.as_mut().expect("instance started above");
        let outcome = self.run_on(live, &plugin, function, step.clone(), &f);
        let mut outcome = checked(outcome, &plugin, &slot.journal);
        let probation = if mirror { slot.probation.take() } else { None };
        if let Some(mut probation) = probation {
            let previous = probation.loaded.plugin_type.clone();
            let theirs = self.run_on(&mut probation.live, &previous, function, step, &f);
            let theirs = checked(theirs, &previous, &slot.journal);
            match (&outcome, theirs) {
                (Err(Run::Fault(error) | Run::Refused(error)), theirs) => {
                    let what = match outcome {
                        Err(Run::Fault(_)) => "faulted",
                        _ => "gave an answer the host refused",
                    };
                    tracing::warn!(
                        plugin = %plugin,
                        function,
                        "reload rolled back: {plugin} {what} in its probation ({error}); {previous} serves again, and answered this call"
                    );
                    slot.loaded = probation.loaded;
                    slot.live = Some(probation.live);
                    slot.rollbacks += 1;
                    outcome = theirs;
                }
                (_, Err(Run::Fault(error))) => tracing::warn!(
                    plugin = %plugin,
                    function,
                    "{previous}, replaced by a reload, faulted in the new version's probation ({error}): no version to roll back to any more"
                ),
                _ => {
                    probation.calls_left -= 1;
                    if probation.calls_left == 0 {
                        tracing::info!(plugin = %plugin, "reload: {plugin} passed its probation; {previous} is gone");
                    } else {
                        slot.probation = Some(probation);
                    }
                }
            }
        }
        match outcome {
            Ok((value, stats)) => {
                record(&mut slot.journal, &value);
                Ok((value, stats))
            }
            Err(Run::Failed(error) | Run::Refused(error)) => Err(error),
            Err(Run::Fault(error)) => {
                tracing::warn!(plugin = %slot.loaded.plugin_type, function, "{error}");
                self.after_fault(slot, &error);
                Err(error)
            }
        }
    }

    /// Runs `f` once on `live`: fresh fuel and deadline, `step` as the
    /// step whose processes it may bind, its log allowance, and the answer
    /// or failure classified. Applies no failure policy.
    fn run_on<R>(
        &self,
        live: &mut Live<K>,
        plugin: &str,
        function: &'static str,
        step: Option<StepScope>,
        f: &impl Fn(&K::Bindings, &mut Store<HostState>) -> wasmtime::Result<Result<R, PluginError>>,
    ) -> Result<(R, CallStats), Run> {
        let limits = &self.settings.limits;
        let store = &mut live.store;
        arm(store, limits);
        store.data_mut().call.step = step;
        self.log.start_call();
        let span = tracing::debug_span!("plugin_call", plugin = %plugin, function, fuel_used = tracing::field::Empty, micros = tracing::field::Empty);
        let _entered = span.enter();
        // Reading the clock costs more than the rest of this bookkeeping:
        // only when someone listens.
        let started = (!span.is_disabled()).then(Instant::now);
        let outcome = f(&live.bindings, store);
        let fuel_used = limits
            .fuel_per_call
            .saturating_sub(store.get_fuel().unwrap_or(0));
        self.fuel_used.fetch_add(fuel_used, Ordering::Relaxed);
        if let Some(started) = started {
            span.record("fuel_used", fuel_used);
            span.record("micros", started.elapsed().as_micros() as u64);
        }
        if let Some(dropped) = self.log.end_call() {
            tracing::warn!(
                plugin = %plugin,
                function,
                "dropped {} log messages ({} bytes): over the plugin's log allowance ({} KiB per call, {} KiB/s per plugin)",
                dropped.messages,
                dropped.bytes,
                crate::plugin_log::PER_CALL_BYTES >> 10,
                crate::plugin_log::BYTES_PER_SECOND >> 10,
            );
        }
        let denied = store.data().call.denied.first().copied();
        let memory_refused = store.data().limiter.memory_refused;
        store.data_mut().call.step = None;
        match outcome {
            Ok(Ok(value)) => Ok((value, CallStats { fuel_used })),
            Ok(Err(e)) => Err(Run::Failed(match denied {
                Some(c) => CallError::Denied {
                    plugin: plugin.to_string(),
                    function,
                    capability: capability_name(c).into(),
                    detail: plugin_text(&e.message),
                },
                None => CallError::Plugin {
                    plugin: plugin.to_string(),
                    function,
                    code: e.code,
                    message: plugin_text(&e.message),
                },
            })),
            Err(trap) => Err(Run::Fault(classify(
                plugin,
                function,
                limits,
                trap,
                denied,
                memory_refused,
            ))),
        }
    }

    /// Replaces the plugin's component with `source` while it serves (the
    /// handles' `reload` documents it).
    pub(crate) fn reload(
        &self,
        source: &PluginSource,
        probation_calls: u32,
    ) -> Result<bool, ReloadError> {
        let loaded = Arc::new(load_checked::<K>(&self.host, source, &self.settings)?);
        let mut slot = self.lock();
        if loaded.component_id.digest == slot.loaded.component_id.digest {
            return Ok(false);
        }
        let old = slot.loaded.plugin_type.clone();
        let new = loaded.plugin_type.clone();
        if slot.config.is_none() {
            slot.loaded = loaded;
            slot.live = None;
            tracing::info!(plugin = %new, "reloaded (before init): {old} replaced");
            return Ok(true);
        }
        if slot.probation.is_some() {
            return Err(ReloadError::OnProbation {
                plugin: new.to_string(),
            });
        }
        // The new build starts from the old one's state as of now.
        if let Some(live) = slot.live.as_mut() {
            arm(&mut live.store, &self.settings.limits);
            match K::save(&live.bindings, &mut live.store) {
                Ok(Ok(Some(state))) => {
                    if state.len() > self.settings.limits.state_bytes {
                        return Err(ReloadError::Start(CallError::StateTooLarge {
                            plugin: old.to_string(),
                            function: "state-save",
                            bytes: state.len(),
                            limit_bytes: self.settings.limits.state_bytes,
                        }));
                    }
                    slot.saved_state = Some(state);
                    slot.journal.state_kept();
                }
                Ok(Ok(None)) => {}
                Ok(Err(e)) => {
                    return Err(ReloadError::Save {
                        plugin: old.to_string(),
                        reason: plugin_text(&e.message),
                    })
                }
                Err(trap) => {
                    let error =
                        classify(&old, "state-save", &self.settings.limits, trap, None, false);
                    slot.live = None;
                    return Err(ReloadError::Save {
                        plugin: old.to_string(),
                        reason: error.to_string(),
                    });
                }
            }
        }
        let live = self
            .start(&loaded, &slot, "reload")
            .map_err(ReloadError::Start)?;
        let replaced = std::mem::replace(&mut slot.loaded, loaded);
        let previous = slot.live.replace(live);
        slot.probation = match previous {
            Some(live) if probation_calls > 0 && slot.disabled.is_none() => Some(Probation {
                loaded: replaced,
                live,
                calls_left: probation_calls,
            }),
            _ => None,
        };
        slot.faults = 0;
        slot.fell_back = false;
        slot.disabled = None;
        tracing::warn!(plugin = %new, "reloaded: {new} replaces {old} ({probation_calls} calls of probation)");
        Ok(true)
    }

    /// Where a reload stands: the version on probation's replaced type and
    /// the calls left, and how many reloads were rolled back.
    pub(crate) fn reload_status(&self) -> ReloadStatus {
        let slot = self.lock();
        ReloadStatus {
            serving: slot.loaded.plugin_type.to_string(),
            probation: slot
                .probation
                .as_ref()
                .map(|p| (p.loaded.plugin_type.to_string(), p.calls_left)),
            rollbacks: slot.rollbacks,
        }
    }

    /// Instantiates, initialises with the remembered configuration, and
    /// replays the remembered state and the journal ([`Kind::replay`]).
    fn start(
        &self,
        loaded: &Loaded<K>,
        slot: &Slotted<K>,
        function: &'static str,
    ) -> Result<Live<K>, CallError> {
        let plugin = loaded.identity.plugin_type.clone();
        let limits = &self.settings.limits;
        let mut store = self.new_store(&plugin);
        arm(&mut store, limits);
        let bindings = K::instantiate(&loaded.pre, &mut store).map_err(|trap| {
            let data = store.data();
            CallError::Start {
                plugin: plugin.clone(),
                function,
                reason: classify(
                    &plugin,
                    "instantiate",
                    limits,
                    trap,
                    None,
                    data.limiter.memory_refused,
                )
                .to_string(),
            }
        })?;
        let mut replay = Replay {
            store: &mut store,
            limits,
            plugin: &plugin,
            serving: function,
        };
        if let Some(config) = &slot.config {
            replay.call("init", |s| K::init(&bindings, s, config))?;
        }
        let restore = |replay: &mut Replay<'_>| match &slot.saved_state {
            Some(state) => replay.call("state-restore", |s| K::restore(&bindings, s, state)),
            None => Ok(()),
        };
        K::replay(&bindings, &mut replay, &slot.journal, &restore)?;
        self.instances.fetch_add(1, Ordering::Relaxed);
        Ok(Live { store, bindings })
    }

    /// Applies the failure policy after a fault: the instance is dropped
    /// (a trapped component instance may not be entered again).
    fn after_fault(&self, slot: &mut Slotted<K>, error: &CallError) {
        slot.live = None;
        if let CallError::Inner { .. } = error {
            // The inner plugin's failure: its own policy counted it; the
            // wrapper's trapped instance is replaced, and nothing more.
            return;
        }
        slot.faults += 1;
        let plugin = slot.loaded.identity.plugin_type.clone();
        match &self.settings.failure {
            FailurePolicy::Fail => {
                slot.disabled = Some(format!("a fault ({error}); its failure policy is `fail`"))
            }
            FailurePolicy::Restart { max_restarts } => {
                if slot.faults > *max_restarts {
                    slot.disabled = Some(format!(
                        "{} faults (max_restarts = {max_restarts}); last: {error}",
                        slot.faults
                    ));
                } else {
                    tracing::info!(plugin = %plugin, "restarting after fault {} of at most {max_restarts}", slot.faults);
                }
            }
            FailurePolicy::Fallback {
                plugin: fallback,
                max_restarts,
            } => {
                if slot.fell_back {
                    if slot.faults > *max_restarts {
                        slot.disabled = Some(format!(
                            "its fallback {fallback} faulted {} times; last: {error}",
                            slot.faults
                        ));
                    }
                    return;
                }
                match load_checked::<K>(
                    &self.host,
                    &PluginSource::Bundled(fallback.clone()),
                    &self.settings,
                ) {
                    Ok(loaded) => {
                        tracing::warn!(plugin = %plugin, "falling back to bundled {fallback} after: {error}");
                        slot.loaded = Arc::new(loaded);
                        slot.fell_back = true;
                        slot.faults = 0;
                        slot.saved_state = None;
                    }
                    Err(e) => {
                        slot.disabled = Some(format!(
                            "a fault ({error}) and its fallback {fallback} could not load: {e}"
                        ))
                    }
                }
            }
        }
    }
}

/// How one run of a call on an instance ended, when it did not answer.
enum Run {
    /// The plugin returned an error (or was denied a capability).
    Failed(CallError),
    /// It faulted: the instance cannot be entered again.
    Fault(CallError),
    /// Its answer broke the contract ([`CallError::Invalid`]): refused,
    /// the instance stays usable.
    Refused(CallError),
}

/// The check of a call whose answer the contract does not constrain.
pub(crate) fn no_check<J, R>(_: &Checker<'_>, _: &J, _: &R) -> Result<(), CallError> {
    Ok(())
}

/// A reload was refused; the plugin loaded before keeps serving.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The new component did not load as a plugin of this kind and
    /// contract (the same checks as a first load).
    #[error("reload refused: {0}")]
    Load(#[from] LoadError),
    /// The serving version could not hand over its state.
    #[error("reload refused: {plugin} could not save its state for the new version: {reason}")]
    Save {
        /// The serving plugin.
        plugin: String,
        /// What failed.
        reason: String,
    },
    /// The new version could not start from the serving one's
    /// configuration, state and calls.
    #[error("reload refused: the new version did not start: {0}")]
    Start(CallError),
    /// A reload is still on probation.
    #[error("reload refused: {plugin} is still on probation from the last reload")]
    OnProbation {
        /// The version on probation.
        plugin: String,
    },
}

/// Where a plugin's reloads stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReloadStatus {
    /// The type of the version serving.
    pub serving: String,
    /// During a probation: the replaced version's type, and the calls left.
    pub probation: Option<(String, u32)>,
    /// Reloads rolled back so far.
    pub rollbacks: u32,
}

/// Turns a wasmtime error from a call into a [`CallError`] naming the limit.
fn classify(
    plugin: &str,
    function: &'static str,
    limits: &Limits,
    error: wasmtime::Error,
    denied: Option<Capability>,
    memory_refused: bool,
) -> CallError {
    let plugin = plugin.to_string();
    if let Some(InnerFailure(inner)) = error.downcast_ref::<InnerFailure>() {
        return CallError::Inner {
            plugin,
            function,
            error: Box::new(inner.clone()),
        };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => CallError::Fuel {
            plugin,
            function,
            limit: limits.fuel_per_call,
        },
        Some(Trap::Interrupt) => CallError::Deadline {
            plugin,
            function,
            limit: limits.deadline,
        },
        _ if error.is::<BlockedPastDeadline>() => CallError::Deadline {
            plugin,
            function,
            limit: limits.deadline,
        },
        Some(Trap::StackOverflow) => CallError::Stack { plugin, function },
        _ if memory_refused => CallError::Memory {
            plugin,
            function,
            limit_bytes: limits.memory_bytes,
        },
        _ => match denied {
            Some(c) => CallError::Denied {
                plugin,
                function,
                capability: capability_name(c).into(),
                detail: plugin_text(&format!("trap: {error:#}")),
            },
            None => CallError::Trap {
                plugin,
                function,
                trap: plugin_text(&format!("{error:#}")),
            },
        },
    }
}

/// Reads, compiles and checks a plugin for kind `K`.
fn load_checked<K: Kind>(
    host: &Host,
    source: &PluginSource,
    settings: &PluginSettings,
) -> Result<Loaded<K>, LoadError> {
    let (source_name, bytes) = source.read(host)?;
    host.ensure_ticker();
    let shared = &host.shared;
    let component_id = ComponentId {
        digest: ComponentDigest::of(&bytes),
        bundled: matches!(source, PluginSource::Bundled(_)),
    };
    let component =
        shared
            .cache
            .get_digested(&shared.engine, &source_name, component_id.digest, &bytes)?;
    check_contract(&component, &shared.engine, &source_name)?;
    match slot_of(&component, &shared.engine) {
        Some(exported) if exported != K::KIND => {
            return Err(LoadError::WrongSlot {
                source_name,
                found: exported.name().into(),
                slot: K::KIND.name(),
            })
        }
        _ => {}
    }
    let wrapper = check_imports(&component, &shared.engine, &source_name, K::KIND)?;
    let instance_pre =
        K::linker(shared)
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Instantiate {
                source_name: source_name.clone(),
                reason: format!("{e:#}"),
            })?;
    let pre = K::pre(instance_pre).map_err(|e| LoadError::MissingExports {
        source_name: source_name.clone(),
        slot: K::KIND.name(),
        reason: format!("{e:#}"),
    })?;
    let identity = describe::<K>(host, &pre, &source_name, settings)?;
    check_identity(&identity, &source_name, K::KIND, settings)?;
    Ok(Loaded {
        plugin_type: identity.plugin_type.as_str().into(),
        identity,
        component_id,
        wrapper,
        pre,
    })
}

/// Calls `describe` in a throwaway instance, under the plugin's limits: a
/// start function or `describe` that loops, sleeps, traps or grows past the
/// memory limit is refused with the limit it hit.
fn describe<K: Kind>(
    host: &Host,
    pre: &K::Pre,
    source_name: &str,
    settings: &PluginSettings,
) -> Result<PluginIdentity, LoadError> {
    let state = HostState::new(
        source_name.into(),
        &settings.limits,
        Grants::none(),
        host.services().clone(),
        host.shared.random_seed,
        Arc::default(),
    );
    let mut store = Store::new(&host.shared.engine, state);
    store.limiter(|s| &mut s.limiter);
    arm(&mut store, &settings.limits);
    let fail = |store: &Store<HostState>, function: &'static str, trap: wasmtime::Error| {
        let data = store.data();
        let fault = classify(
            source_name,
            function,
            &settings.limits,
            trap,
            data.call.denied.first().copied(),
            data.limiter.memory_refused,
        );
        LoadError::Instantiate {
            source_name: source_name.into(),
            reason: format!("describe failed: {fault}"),
        }
    };
    let bindings = K::instantiate(pre, &mut store).map_err(|e| fail(&store, "instantiate", e))?;
    K::describe(&bindings, &mut store).map_err(|e| fail(&store, "describe", e))
}

/// Refuses imports outside the slot's world, with a message naming them;
/// says whether the component imports `select` (a select wrapper, the
/// `select-wrapper` world: only in the select slot).
fn check_imports(
    component: &Component,
    engine: &wasmtime::Engine,
    source_name: &str,
    slot: PluginKind,
) -> Result<bool, LoadError> {
    let mut wrapper = false;
    let allowed: Vec<&str> = slot
        .allowed_capabilities()
        .iter()
        .map(|c| capability_name(*c))
        .collect();
    for (name, _) in component.component_type().imports(engine) {
        let Some(rest) = name.strip_prefix("slurm:plugin/") else {
            continue;
        };
        let interface = rest.split('@').next().unwrap_or(rest);
        if interface == "types" || allowed.contains(&interface) {
            continue;
        }
        if interface == "select" && slot == PluginKind::Select {
            wrapper = true;
            continue;
        }
        // What a wrapper may ask of the controller, the site and its inner
        // plugin (`wit/select.wit`); `node-health` is denied unless
        // configured.
        if matches!(interface, "job-network" | "node-health" | "select-steps")
            && slot == PluginKind::Select
        {
            continue;
        }
        return Err(LoadError::ForbiddenImport {
            source_name: source_name.into(),
            import: name.to_string(),
            slot: slot.name(),
            allowed: allowed.join(", "),
        });
    }
    Ok(wrapper)
}

/// Longest descriptive name a plugin may give (`plugin-name`).
const MAX_PLUGIN_NAME: usize = 256;

/// PluginKind, type, name, contract version and required capabilities: what a
/// plugin says of itself is checked before anything is taken from it.
fn check_identity(
    identity: &PluginIdentity,
    source_name: &str,
    slot: PluginKind,
    settings: &PluginSettings,
) -> Result<(), LoadError> {
    let invalid = |reason: String| LoadError::InvalidIdentity {
        source_name: source_name.into(),
        reason,
    };
    let plugin_type = &identity.plugin_type;
    if !slot.accepts_type(plugin_type) {
        if PluginKind::ALL
            .iter()
            .any(|other| other.accepts_type(plugin_type))
        {
            return Err(LoadError::WrongSlot {
                source_name: source_name.into(),
                found: plugin_type.clone(),
                slot: slot.name(),
            });
        }
        return Err(invalid(format!(
            "declares plugin type `{}`, which is not a {slot} plugin type: expected `{slot}/<name>`, the name of 1 to {MAX_TYPE_NAME} letters, digits, `_` and `-`",
            crate::plugin_log::escape(&truncated(plugin_type, 80)),
        )));
    }
    let name = &identity.plugin_name;
    if name.len() > MAX_PLUGIN_NAME || name.chars().any(char::is_control) {
        return Err(invalid(format!(
            "declares plugin name `{}` ({} bytes): expected at most {MAX_PLUGIN_NAME} bytes without control characters",
            crate::plugin_log::escape(&truncated(name, 80)),
            name.len()
        )));
    }
    if let Some(reason) = contract_incompatibility(&identity.contract_version) {
        return Err(LoadError::IncompatibleContract {
            source_name: source_name.into(),
            found: crate::plugin_log::escape(&truncated(&identity.contract_version, 40))
                .into_owned(),
            host: CONTRACT_VERSION,
            reason,
        });
    }
    let required = &identity.required_capabilities;
    if required.len() > Capability::ALL.len() {
        return Err(invalid(format!(
            "lists {} required capabilities; there are {}",
            required.len(),
            Capability::ALL.len()
        )));
    }
    for (i, capability) in required.iter().enumerate() {
        if required[..i].contains(capability) {
            return Err(invalid(format!(
                "lists required capability `{}` twice",
                capability_name(*capability)
            )));
        }
        if !slot.allowed_capabilities().contains(capability) {
            return Err(LoadError::CapabilityNotAllowed {
                plugin_type: plugin_type.clone(),
                capability: capability_name(*capability).into(),
                slot: slot.name(),
                allowed: slot
                    .allowed_capabilities()
                    .iter()
                    .map(|c| capability_name(*c))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        if !settings.grants.allows(*capability) {
            return Err(LoadError::CapabilityNotGranted {
                plugin_type: plugin_type.clone(),
                capability: capability_name(*capability).into(),
            });
        }
    }
    Ok(())
}

/// Longest text of a plugin's (an error message, a panic) kept in a
/// [`CallError`].
const MAX_PLUGIN_TEXT: usize = 4096;

/// Text a plugin chose, as a [`CallError`] carries it: at most
/// [`MAX_PLUGIN_TEXT`] characters, control characters escaped, so that
/// logging the error can neither flood nor forge the host's log.
fn plugin_text(text: &str) -> String {
    crate::plugin_log::escape(&truncated(text, MAX_PLUGIN_TEXT)).into_owned()
}

/// At most `max` characters of `text`, with `...` when cut.
fn truncated(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &text[..cut]).into(),
        None => text.into(),
    }
}

/// The `slurm:plugin` contract versions a component's imports and exports
/// name, first the one incompatible with [`CONTRACT_VERSION`] if any: a
/// component built against another contract is refused with its version
/// before the linker reports the functions it lacks.
fn check_contract(
    component: &Component,
    engine: &wasmtime::Engine,
    source_name: &str,
) -> Result<(), LoadError> {
    let ty = component.component_type();
    let names = ty
        .imports(engine)
        .map(|(name, _)| name)
        .chain(ty.exports(engine).map(|(name, _)| name));
    match incompatible_contract(names) {
        Some((version, reason)) => Err(LoadError::IncompatibleContract {
            source_name: source_name.into(),
            found: version.into(),
            host: CONTRACT_VERSION,
            reason,
        }),
        None => Ok(()),
    }
}

/// The first `slurm:plugin/<interface>@<version>` among `names` whose
/// version this host cannot serve, with the reason.
fn incompatible_contract<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Option<(&'a str, &'static str)> {
    names.into_iter().find_map(|name| {
        let (_, version) = name.strip_prefix("slurm:plugin/")?.split_once('@')?;
        contract_incompatibility(version).map(|reason| (version, reason))
    })
}

/// Semver compatibility with [`CONTRACT_VERSION`]: same major, and for 0.x
/// the same minor; a plugin may not be newer than the host.
fn contract_incompatibility(version: &str) -> Option<&'static str> {
    let parse = |v: &str| -> Option<(u64, u64, u64)> {
        let mut parts = v.split('.').map(|p| {
            let digits = !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| p.parse::<u64>().ok()).flatten()
        });
        let version = (parts.next()??, parts.next()??, parts.next()??);
        parts.next().is_none().then_some(version)
    };
    let Some((major, minor, patch)) = parse(version) else {
        return Some("not a semver version");
    };
    let (h_major, h_minor, h_patch) =
        parse(CONTRACT_VERSION).expect("host contract version is semver");
    if major != h_major {
        return Some("different major version");
    }
    if major == 0 && minor != h_minor {
        return Some("different minor version of a 0.x contract, which semver makes incompatible");
    }
    if (minor, patch) > (h_minor, h_patch) {
        return Some("plugin is newer than the host");
    }
    None
}

/// The slot a component's exports say it fills (`slurm:plugin/priority`
/// exported → priority), if any.
pub(crate) fn slot_of(component: &Component, engine: &wasmtime::Engine) -> Option<PluginKind> {
    component
        .component_type()
        .exports(engine)
        .find_map(|(name, _)| {
            let rest = name.strip_prefix("slurm:plugin/")?;
            PluginKind::from_name(rest.split('@').next().unwrap_or(rest))
        })
}

/// Runs `describe` of a component as kind `K` without the slot, version and
/// grant checks of a real load (for `inspect`).
pub(crate) fn describe_unchecked<K: Kind>(
    host: &Host,
    component: &Component,
    source_name: &str,
) -> Result<PluginIdentity, LoadError> {
    let shared = &host.shared;
    let instance_pre =
        K::linker(shared)
            .instantiate_pre(component)
            .map_err(|e| LoadError::Instantiate {
                source_name: source_name.into(),
                reason: format!("{e:#}"),
            })?;
    let pre = K::pre(instance_pre).map_err(|e| LoadError::MissingExports {
        source_name: source_name.into(),
        slot: K::KIND.name(),
        reason: format!("{e:#}"),
    })?;
    describe::<K>(host, &pre, source_name, &PluginSettings::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 26, messages: a component built against contract 0.2.0 was
    /// told "function implementation is missing"; its interface names say
    /// its version before the linker is asked.
    #[test]
    fn interface_names_give_the_contract_version() {
        let v010 = [
            "wasi:io/poll@0.2.6",
            "slurm:plugin/types@0.1.0",
            "slurm:plugin/priority@0.1.0",
        ];
        assert_eq!(incompatible_contract(v010), None);
        let v020 = [
            "wasi:io/poll@0.2.6",
            "slurm:plugin/log@0.2.0",
            "slurm:plugin/priority@0.2.0",
        ];
        assert_eq!(
            incompatible_contract(v020),
            Some((
                "0.2.0",
                "different minor version of a 0.x contract, which semver makes incompatible"
            ))
        );
        assert_eq!(
            incompatible_contract(["slurm:plugin/types@0.1.9"]),
            Some(("0.1.9", "plugin is newer than the host"))
        );
    }

    #[test]
    fn contract_versions() {
        assert_eq!(contract_incompatibility("0.1.0"), None);
        assert_eq!(
            contract_incompatibility("0.2.0"),
            Some("different minor version of a 0.x contract, which semver makes incompatible")
        );
        assert_eq!(
            contract_incompatibility("0.1.0.7"),
            Some("not a semver version")
        );
        assert_eq!(
            contract_incompatibility("1.1.0"),
            Some("different major version")
        );
        assert_eq!(
            contract_incompatibility("0.1"),
            Some("not a semver version")
        );
        assert_eq!(
            contract_incompatibility("0.1.9"),
            Some("plugin is newer than the host")
        );
    }

    #[test]
    fn slot_names_round_trip() {
        for slot in PluginKind::ALL {
            assert_eq!(slot.to_string().parse::<PluginKind>(), Ok(slot));
        }
        assert_eq!(
            "sched".parse::<PluginKind>().unwrap_err().to_string(),
            "unknown plugin kind `sched`; expected select, gres, priority or task"
        );
        assert_eq!(
            PluginKind::Task.grantable().collect::<Vec<_>>(),
            [Capability::Topology, Capability::Cpuset]
        );
        assert_eq!(PluginKind::Select.grantable().count(), 0);
    }
}
