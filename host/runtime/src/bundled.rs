//! Plugins an embedding carries inside its binary, loaded by type
//! ([`PluginSource::Bundled`]). The runtime builds none: an embedding hands
//! its set to [`HostOptions::bundled`] (the project's eight are the
//! `slurm-wasm-bundled` crate's), and a host given none refuses every
//! bundled source with [`LoadError::UnknownBundled`].
//!
//! [`PluginSource::Bundled`]: crate::PluginSource::Bundled
//! [`HostOptions::bundled`]: crate::HostOptions::bundled
//! [`LoadError::UnknownBundled`]: crate::LoadError::UnknownBundled

use std::fmt;

use crate::plugin::PluginKind;

/// A bundled plugin: its Slurm type, file name and component bytes.
#[derive(Clone, Copy)]
pub struct Bundled {
    /// The type its `describe` gives and [`PluginSource::Bundled`] names it
    /// by (`select/cons_tres`).
    ///
    /// [`PluginSource::Bundled`]: crate::PluginSource::Bundled
    pub plugin_type: &'static str,
    /// The file it was built to (`select_cons_tres.wasm`).
    pub file_name: &'static str,
    /// Its kind.
    pub kind: PluginKind,
    /// The component.
    pub bytes: &'static [u8],
}

impl fmt::Debug for Bundled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bundled")
            .field("plugin_type", &self.plugin_type)
            .field("file_name", &self.file_name)
            .field("kind", &self.kind)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// The plugin of `plugin_type` (`priority/basic`) in `set`.
pub fn find<'a>(set: &'a [Bundled], plugin_type: &str) -> Option<&'a Bundled> {
    set.iter().find(|b| b.plugin_type == plugin_type)
}

/// The types of `set`, comma-separated, for messages; `none` when empty.
pub fn names(set: &[Bundled]) -> String {
    if set.is_empty() {
        return "none: this host was given no bundled plugins".to_owned();
    }
    set.iter()
        .map(|b| b.plugin_type)
        .collect::<Vec<_>>()
        .join(", ")
}
