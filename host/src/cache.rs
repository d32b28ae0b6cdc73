//! Compiling components once: an in-memory map and an optional on-disk cache.
//!
//! A cached file is named after the SHA-256 of the component's bytes and the
//! engine's compatibility hash, so a cache written by another wasmtime build
//! or another engine configuration is never reused; wasmtime checks the
//! header again when deserializing. A damaged cache file is recompiled and
//! replaced, never trusted.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::Engine;

use crate::error::LoadError;

pub(crate) struct ComponentCache {
    dir: Option<PathBuf>,
    memory: Mutex<HashMap<[u8; 32], Component>>,
}

impl ComponentCache {
    pub(crate) fn new(dir: Option<PathBuf>) -> Self {
        ComponentCache {
            dir,
            memory: Mutex::new(HashMap::new()),
        }
    }

    /// The compiled form of `bytes`, compiling only on the first request.
    pub(crate) fn get(
        &self,
        engine: &Engine,
        source_name: &str,
        bytes: &[u8],
    ) -> Result<Component, LoadError> {
        let digest: [u8; 32] = Sha256::digest(bytes).into();
        if let Some(c) = self
            .memory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&digest)
        {
            return Ok(c.clone());
        }
        let component = match &self.dir {
            Some(dir) => self.load_or_compile(engine, dir, &digest, source_name, bytes)?,
            None => compile(engine, source_name, bytes)?,
        };
        self.memory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(digest, component.clone());
        Ok(component)
    }

    fn load_or_compile(
        &self,
        engine: &Engine,
        dir: &Path,
        digest: &[u8; 32],
        source_name: &str,
        bytes: &[u8],
    ) -> Result<Component, LoadError> {
        let path = dir.join(cache_file_name(engine, digest));
        if path.is_file() {
            // SAFETY: files in the cache directory are written only by
            // `precompile_component` below, and wasmtime re-validates the
            // header against this engine before using the code.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(c) => return Ok(c),
                Err(e) => {
                    tracing::warn!(path = %path.display(), "discarding unusable cache entry: {e}")
                }
            }
        }
        let compiled = engine
            .precompile_component(bytes)
            .map_err(|e| LoadError::Malformed {
                source_name: source_name.into(),
                reason: format!("{e:#}"),
            })?;
        write_atomically(&path, &compiled).map_err(|e| LoadError::Cache {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        // SAFETY: produced just above by this engine.
        unsafe { Component::deserialize(engine, &compiled) }.map_err(|e| LoadError::Cache {
            path,
            reason: format!("{e:#}"),
        })
    }
}

/// Compiles without touching the disk.
pub(crate) fn compile(
    engine: &Engine,
    source_name: &str,
    bytes: &[u8],
) -> Result<Component, LoadError> {
    Component::new(engine, bytes).map_err(|e| LoadError::Malformed {
        source_name: source_name.into(),
        reason: format!("{e:#}"),
    })
}

fn cache_file_name(engine: &Engine, digest: &[u8; 32]) -> String {
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}-{:016x}.cwasm", h.finish())
}

fn write_atomically(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
        std::process::id()
    ));
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(data)?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}
