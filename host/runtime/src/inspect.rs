//! What a component is, without running more of it than `describe`.

use crate::bindings::types::PluginIdentity;
use crate::engine::Host;
use crate::error::LoadError;
use crate::kinds::{gres::GresKind, priority::PriorityKind, select::SelectKind, task::TaskKind};
use crate::plugin::{describe_unchecked, slot_of, PluginKind, PluginSource};

/// The result of [`inspect`].
#[derive(Debug, Clone)]
pub struct Inspection {
    /// File name or bundled name.
    pub source: String,
    /// The component's size in bytes.
    pub size_bytes: usize,
    /// The kind its exports make it; `None` for a component that exports no
    /// plugin interface.
    pub slot: Option<PluginKind>,
    /// What `describe` answered, when the component could be instantiated.
    pub identity: Option<PluginIdentity>,
    /// Why `describe` could not be called, otherwise.
    pub describe_error: Option<String>,
    /// Every import, by name (`slurm:plugin/log@0.1.0`,
    /// `wasi:io/poll@0.2.6`).
    pub imports: Vec<String>,
    /// Every export, by name (`slurm:plugin/priority@0.1.0`, `describe`).
    pub exports: Vec<String>,
    /// The `slurm:plugin` capability interfaces it imports (`topology`, ...).
    pub capabilities: Vec<String>,
}

/// Compiles `source` and lists what it imports and exports; for a plugin,
/// also calls `describe` in a throwaway instance with no capability granted.
/// Fails only when the bytes are not a component.
pub fn inspect(host: &Host, source: &PluginSource) -> Result<Inspection, LoadError> {
    let (source_name, bytes) = source.read(host)?;
    let engine = host.engine();
    let component = host.shared.cache.get(engine, &source_name, &bytes)?;
    let ty = component.component_type();
    let imports: Vec<String> = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
    let exports: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    let capabilities = imports
        .iter()
        .filter_map(|n| n.strip_prefix("slurm:plugin/"))
        .map(|n| n.split('@').next().unwrap_or(n).to_string())
        .filter(|n| n != "types")
        .collect();
    let slot = slot_of(&component, engine);
    let described = slot.map(|slot| match slot {
        PluginKind::Select => describe_unchecked::<SelectKind>(host, &component, &source_name),
        PluginKind::Gres => describe_unchecked::<GresKind>(host, &component, &source_name),
        PluginKind::Priority => describe_unchecked::<PriorityKind>(host, &component, &source_name),
        PluginKind::Task => describe_unchecked::<TaskKind>(host, &component, &source_name),
    });
    let (identity, describe_error) = match described {
        Some(Ok(identity)) => (Some(identity), None),
        Some(Err(e)) => (None, Some(e.to_string())),
        None => (None, Some("exports no slurm:plugin interface".into())),
    };
    Ok(Inspection {
        source: source_name,
        size_bytes: bytes.len(),
        slot,
        identity,
        describe_error,
        imports,
        exports,
        capabilities,
    })
}
