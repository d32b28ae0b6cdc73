//! Typed handles for the four plugin kinds.
//!
//! Each kind module wires its bindgen world to the shared machinery with
//! `plugin_kind!` and adds one method per contract function, with the
//! checks that function's results need.

pub mod gres;
pub mod inner_select;
mod journal;
pub mod priority;
pub mod select;
pub mod task;

/// Wires a kind: the linker of its world (WASI plus the world's imports),
/// its pre-instantiated form (`pre`: bindgen's `WorldPre`, or a kind's own
/// with the same `new` and `instantiate`), what instantiating gives
/// (`bindings`: the world, or a kind's own that derefs to it), its
/// [`crate::plugin::Kind`] implementation, and on its handle the methods
/// every kind has: `identity`, `settings`, `init` (remembering the
/// configuration for restarts) and `fini`.
///
/// `restore` is what a restarted instance replays its remembered state
/// bytes through, `save` what gives them (`None` for kinds without state); `journal` and `replay` what else it replays
/// ([`crate::plugin::Kind::replay`]): kinds whose world is only their
/// configuration and state give `()` and `Ok(())`.
macro_rules! plugin_kind {
    (
        handle: $Handle:ident,
        kind: $Kind:ident,
        slot: $PluginKind:ident,
        linker: $field:ident,
        world: $World:ident,
        pre: $Pre:ty,
        bindings: $Bindings:ty,
        interface: $iface:ident,
        config: $Config:ty,
        restore: |$b:ident, $store:ident, $data:ident| $restore:expr,
        save: |$sb:ident, $sstore:ident| $save:expr,
        journal: $Journal:ty,
        replay: |$rb:ident, $rr:ident, $rj:ident, $rs:ident| $replay:expr $(,)?
    ) => {
        pub(crate) fn linker(
            engine: &wasmtime::Engine,
        ) -> wasmtime::Result<wasmtime::component::Linker<crate::store::HostState>> {
            let mut linker = wasmtime::component::Linker::new(engine);
            crate::engine::add_wasi(&mut linker)?;
            $World::add_to_linker::<
                crate::store::HostState,
                wasmtime::component::HasSelf<crate::store::HostState>,
            >(&mut linker, |s| s)?;
            Ok(linker)
        }

        pub(crate) struct $Kind;

        impl crate::plugin::Kind for $Kind {
            const KIND: crate::plugin::PluginKind = crate::plugin::PluginKind::$PluginKind;
            type Pre = $Pre;
            type Bindings = $Bindings;
            type Config = $Config;

            fn linker(
                shared: &crate::engine::Shared,
            ) -> &wasmtime::component::Linker<crate::store::HostState> {
                &shared.linkers.$field
            }
            fn pre(
                instance_pre: wasmtime::component::InstancePre<crate::store::HostState>,
            ) -> wasmtime::Result<Self::Pre> {
                <$Pre>::new(instance_pre)
            }
            fn instantiate(
                pre: &Self::Pre,
                store: &mut wasmtime::Store<crate::store::HostState>,
            ) -> wasmtime::Result<$Bindings> {
                pre.instantiate(store)
            }
            fn describe(
                b: &$Bindings,
                store: &mut wasmtime::Store<crate::store::HostState>,
            ) -> wasmtime::Result<crate::bindings::types::PluginIdentity> {
                b.call_describe(store)
            }
            fn init(
                b: &$Bindings,
                store: &mut wasmtime::Store<crate::store::HostState>,
                config: &$Config,
            ) -> wasmtime::Result<Result<(), crate::bindings::types::PluginError>> {
                b.$iface().call_init(store, config)
            }
            fn restore(
                $b: &$Bindings,
                $store: &mut wasmtime::Store<crate::store::HostState>,
                $data: &[u8],
            ) -> wasmtime::Result<Result<(), crate::bindings::types::PluginError>> {
                $restore
            }
            fn save(
                $sb: &$Bindings,
                $sstore: &mut wasmtime::Store<crate::store::HostState>,
            ) -> wasmtime::Result<Result<Option<Vec<u8>>, crate::bindings::types::PluginError>> {
                $save
            }
            type Journal = $Journal;
            fn replay(
                $rb: &$Bindings,
                $rr: &mut crate::plugin::Replay<'_>,
                $rj: &$Journal,
                $rs: &dyn Fn(&mut crate::plugin::Replay<'_>) -> Result<(), crate::error::CallError>,
            ) -> Result<(), crate::error::CallError> {
                $replay
            }
        }

        impl $Handle {
            /// The plugin's identity (of its fallback once that took over).
            pub fn identity(&self) -> crate::bindings::types::PluginIdentity {
                self.core.identity()
            }

            /// The limits, grants and failure policy it runs under.
            pub fn settings(&self) -> &crate::plugin::PluginSettings {
                self.core.settings()
            }

            /// The fuel its calls have used since it was loaded: the same
            /// for the same calls on any machine, which makes it the
            /// measure of a plugin's work that noisy wall time is not.
            pub fn fuel_used(&self) -> u64 {
                self.core.fuel_used()
            }

            /// The plugin's `init()`; the configuration is kept so a restarted
            /// instance is initialised the same way.
            pub fn init(&self, config: &$Config) -> Result<(), crate::error::CallError> {
                self.core
                    .call("init", &(config,), None, |b, s| b.$iface().call_init(s, config))?;
                self.core.remember_config(config);
                Ok(())
            }

            /// The plugin's `fini()`.
            pub fn fini(&self) -> Result<(), crate::error::CallError> {
                self.core
                    .call("fini", &(), None, |b, s| b.$iface().call_fini(s))
                    .map(|_| ())
            }

            /// Replaces the plugin's component with `source` while it serves.
            /// The new version is loaded and checked as a first load is (a
            /// plugin of another kind or contract is refused), gets the
            /// serving one's world (its configuration, its state as saved
            /// now, and the calls since that a restart replays) and serves
            /// the next call. For its first `probation_calls` calls the
            /// replaced version runs beside it on the same calls, its answers
            /// unused: if the new version faults in one of them, or gives an
            /// answer the host refuses
            /// ([`CallError::Invalid`](crate::error::CallError::Invalid)), the
            /// replaced version answers that call (no decision is lost) and
            /// serves again from then on, and the rollback is logged
            /// ([`reload_status`](Self::reload_status) counts it). After a
            /// refused reload the serving version goes on as before. Returns
            /// false, changing nothing, when `source` holds the component
            /// serving now (the same bytes).
            ///
            /// # Errors
            ///
            /// [`ReloadError`](crate::ReloadError): the new component did not
            /// load as a plugin of this kind, the serving version could not
            /// save its state, the new one did not start from it, or the last
            /// reload is still on probation.
            pub fn reload(
                &self,
                source: &crate::plugin::PluginSource,
                probation_calls: u32,
            ) -> Result<bool, crate::ReloadError> {
                self.core.reload(source, probation_calls)
            }

            /// Which version serves, whether a reload is on probation, and
            /// how many reloads were rolled back.
            pub fn reload_status(&self) -> crate::ReloadStatus {
                self.core.reload_status()
            }

            /// Records every call from `init` on to `options.path`
            /// ([`crate::recording`]), until
            /// [`finish_recording`](Self::finish_recording).
            ///
            /// # Errors
            ///
            /// [`TapError::AfterInit`](crate::tap::TapError::AfterInit) once
            /// `init` was called; [`TapError::Recording`](crate::tap::TapError::Recording)
            /// while a recording is made; the file's error when it cannot be
            /// created.
            pub fn record(
                &self,
                options: crate::recording::RecordOptions,
            ) -> Result<(), crate::tap::TapError> {
                self.core.start_recording(options)
            }

            /// Ends the recording and says what it holds (`None` when none
            /// was made).
            ///
            /// # Errors
            ///
            /// The file system's, when the last part cannot be written out.
            pub fn finish_recording(
                &self,
            ) -> Result<Option<crate::recording::RecordingSummary>, crate::recording::RecordingError>
            {
                self.core.finish_recording()
            }

            /// Loads `source` as a shadow of this plugin ([`crate::tap`]):
            /// through this plugin's host with a clock of its own, under
            /// `settings` (its own limits, grants and failure policy).
            ///
            /// # Errors
            ///
            /// [`TapError::AfterInit`](crate::tap::TapError::AfterInit) once
            /// `init` was called; [`TapError::Acting`](crate::tap::TapError::Acting)
            /// when `settings` grant `cpuset` or `gpu-control`;
            /// [`TapError::Load`](crate::tap::TapError::Load) when the shadow
            /// does not load as a plugin of this kind.
            pub fn add_shadow(
                &self,
                source: &crate::plugin::PluginSource,
                settings: crate::plugin::PluginSettings,
                options: crate::tap::ShadowOptions,
            ) -> Result<(), crate::tap::TapError> {
                for capability in [
                    crate::capabilities::Capability::Cpuset,
                    crate::capabilities::Capability::GpuControl,
                ] {
                    if settings.grants.allows(capability) {
                        return Err(crate::tap::TapError::Acting {
                            capability: crate::error::capability_name(capability),
                        });
                    }
                }
                let clock = std::sync::Arc::new(
                    crate::capabilities::clock::VirtualClock::default(),
                );
                let host = self.core.host().with_clock(clock.clone());
                let shadow = $Handle::load(&host, source, settings)?;
                let shadow_type = shadow.identity().plugin_type;
                self.core
                    .add_shadow(std::sync::Arc::new(shadow), shadow_type, clock, options)
            }

            /// Sets up the recording and the shadows a host configuration
            /// gives the plugin's slot ([`crate::host_config::PluginConfig`]);
            /// before `init`.
            ///
            /// # Errors
            ///
            /// As [`record`](Self::record) and [`add_shadow`](Self::add_shadow).
            pub fn tap_as_configured(
                &self,
                config: &crate::host_config::PluginConfig,
            ) -> Result<(), crate::tap::TapError> {
                if let Some(options) = &config.record {
                    self.record(options.clone())?;
                }
                for shadow in &config.shadows {
                    self.add_shadow(&shadow.source, shadow.settings.clone(), shadow.options)?;
                }
                Ok(())
            }

            /// Each shadow's report as it stands (calls still on their way
            /// to a shadow are its `pending`).
            pub fn shadow_reports(&self) -> Vec<crate::tap::ShadowReport> {
                self.core.shadow_reports(false)
            }

            /// Each shadow's report once it compared every call handed to
            /// it so far: this waits for shadows still working, as long as
            /// their own limits let a call run.
            pub fn settled_shadow_reports(&self) -> Vec<crate::tap::ShadowReport> {
                self.core.shadow_reports(true)
            }
        }
    };
}
pub(crate) use plugin_kind;

/// A call that leaves the plugin's world as it was; `$args` (the arguments
/// as one tuple) are what its taps see; `$check` (a
/// [`crate::plugin::PluginCore::call_checked`] check) the contract's rules
/// on its answer, when it has some.
macro_rules! plain {
    ($self:ident, $name:literal, $args:expr, |$b:ident, $s:ident| $call:expr) => {
        plain!(
            $self,
            $name,
            $args,
            |$b, $s| $call,
            $crate::plugin::no_check
        )
    };
    ($self:ident, $name:literal, $args:expr, |$b:ident, $s:ident| $call:expr, $check:expr) => {
        $self
            .core
            .call_checked($name, $args, None, |$b, $s| $call, $check)
            .map(|(r, _)| r)
    };
}

/// A call on a plugin-side record (a select plugin's nodeinfo or jobinfo, a
/// gres plugin's epilog info), which taps do not see ([`crate::replay`]);
/// `$check` as for `plain!`.
macro_rules! opaque {
    ($self:ident, $name:literal, |$b:ident, $s:ident| $call:expr) => {
        opaque!($self, $name, |$b, $s| $call, $crate::plugin::no_check)
    };
    ($self:ident, $name:literal, |$b:ident, $s:ident| $call:expr, $check:expr) => {
        $self
            .core
            .call_untapped($name, |$b, $s| $call, $check)
            .map(|(r, _)| r)
    };
}
pub(crate) use {opaque, plain};

/// The state methods of kinds whose plugins save state (`state-save` /
/// `state-restore`): the calls, remembering the bytes for restarts, and the
/// same through the host's checked state files. A blob over the plugin's
/// [`crate::Limits::state_bytes`] is refused and not kept.
macro_rules! plugin_state {
    (handle: $Handle:ident, interface: $iface:ident $(,)?) => {
        impl $Handle {
            /// The plugin's state; remembered for restarts.
            pub fn state_save(&self) -> Result<Vec<u8>, crate::error::CallError> {
                let (data, _) = self.core.call("state-save", &(), None, |b, s| {
                    b.$iface().call_state_save(s)
                })?;
                self.core.remember_state("state-save", &data)?;
                Ok(data)
            }

            /// Hands saved bytes back to the plugin, which must refuse what it
            /// cannot read completely; remembered for restarts.
            pub fn state_restore(&self, data: &[u8]) -> Result<(), crate::error::CallError> {
                self.core.check_state_size("state-restore", data.len())?;
                self.core.call("state-restore", &(data,), None, |b, s| {
                    b.$iface().call_state_restore(s, data)
                })?;
                self.core.remember_state("state-restore", data)
            }

            /// Saves the plugin's state to `path`, atomically and with a
            /// checked header that names the component writing it
            /// ([`crate::state`]).
            pub fn save_state_file(
                &self,
                path: &std::path::Path,
            ) -> Result<(), crate::StateFileError> {
                let data = self.state_save()?;
                let identity = self.identity();
                crate::state::write_state(
                    path,
                    &identity.plugin_type,
                    identity.plugin_version,
                    self.core.component_id(),
                    &data,
                )?;
                Ok(())
            }

            /// Restores from a state file; a truncated, corrupted, oversized
            /// or foreign file (another plugin type, or a component this
            /// plugin does not accept state from) is refused before the
            /// plugin sees any of it.
            pub fn restore_state_file(
                &self,
                path: &std::path::Path,
            ) -> Result<(), crate::StateFileError> {
                let settings = self.core.settings();
                let plugin_type = self.core.plugin_type();
                let restorer = crate::state::Restorer {
                    plugin_type: &plugin_type,
                    component: self.core.component_id(),
                    accept_state_from: &settings.accept_state_from,
                    max_state_bytes: settings.limits.state_bytes,
                };
                let file = crate::state::read_state(path, &restorer)?;
                self.state_restore(&file.blob)?;
                Ok(())
            }
        }
    };
}
pub(crate) use plugin_state;
