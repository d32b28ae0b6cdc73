//! Compiling components once: an in-memory map and an optional on-disk cache.
//!
//! A compiled component is native code: loading a cache entry runs
//! whatever it holds. So the disk cache is trusted only as far as it can be
//! shown to be the host's own, written by this host for this component.
//!
//! # Directory
//!
//! [`ComponentCache::new`] creates the directory (mode 0700) when it is
//! missing. It must be a directory owned by the effective user running the
//! host and writable by nobody else (no group or other write bit); otherwise
//! creating the host fails with an error naming the directory and the fix
//! (`chmod go-w`, or a directory that user owns). A daemon is never left
//! compiling every plugin at step start because its cache was ignored. The
//! check is repeated before each entry is read.
//!
//! # Key
//!
//! `<dir>/key` holds 32 random bytes, made on first use with mode 0600. It
//! must be owned by the effective user and neither readable nor writable by
//! anyone else (anyone who reads it can forge entries), else the host is
//! refused with an error naming it. Removing it makes a new key; every
//! entry sealed with the old one is then recompiled.
//!
//! # Entries
//!
//! An entry is named `<component SHA-256, hex>-<engine hash, 16 hex>.cwasm`,
//! the engine hash standing for wasmtime's compatibility hash of this build
//! and configuration, so another wasmtime build or engine configuration
//! never reuses it. Its bytes:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `SLWCWASM` |
//! | 32 | HMAC-SHA256, under the key, of: the component's SHA-256 (32 bytes), the engine hash (8 bytes, little-endian), the artifact |
//! | rest | the artifact: wasmtime's serialized component |
//!
//! An entry is read into memory, its owner and mode checked (owned by the
//! effective user, not writable by group or others) and its tag verified
//! against the component being loaded; only then is the artifact, from
//! those same bytes, handed to wasmtime. A damaged entry, another
//! component's entry copied under this one's name, or one sealed with
//! another key fails the tag and is never deserialized: it is discarded
//! with a warning, recompiled and replaced.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::fs::{File, Metadata, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{self, Read};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use wasmtime::component::Component;
use wasmtime::Engine;

use crate::error::LoadError;
use crate::state::ComponentDigest;

/// The first eight bytes of every cache entry.
const MAGIC: &[u8; 8] = b"SLWCWASM";

/// Bytes of the tag after the magic.
const TAG_LEN: usize = 32;

/// The key's file name inside the cache directory.
const KEY_FILE: &str = "key";

pub(crate) struct ComponentCache {
    disk: Option<DiskCache>,
    memory: Mutex<HashMap<ComponentDigest, Component>>,
}

/// A checked cache directory and its key.
struct DiskCache {
    dir: PathBuf,
    key: [u8; 32],
}

impl ComponentCache {
    /// A cache in memory, and in `dir` when given.
    ///
    /// # Errors
    ///
    /// [`LoadError::Cache`] when `dir` cannot be created, is not a
    /// directory owned by the effective user and writable by it alone, or
    /// its key cannot be made or is not private (see the
    /// [module documentation](self)).
    pub(crate) fn new(dir: Option<PathBuf>) -> Result<Self, LoadError> {
        Ok(ComponentCache {
            disk: dir.map(DiskCache::open).transpose()?,
            memory: Mutex::new(HashMap::new()),
        })
    }

    /// The compiled form of `bytes`, compiling only on the first request.
    pub(crate) fn get(
        &self,
        engine: &Engine,
        source_name: &str,
        bytes: &[u8],
    ) -> Result<Component, LoadError> {
        self.get_digested(engine, source_name, ComponentDigest::of(bytes), bytes)
    }

    /// [`ComponentCache::get`] when the caller already has `bytes`' digest.
    pub(crate) fn get_digested(
        &self,
        engine: &Engine,
        source_name: &str,
        digest: ComponentDigest,
        bytes: &[u8],
    ) -> Result<Component, LoadError> {
        if let Some(c) = self
            .memory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&digest)
        {
            return Ok(c.clone());
        }
        let component = match &self.disk {
            Some(disk) => disk.load_or_compile(engine, digest, source_name, bytes)?,
            None => compile(engine, source_name, bytes)?,
        };
        self.memory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(digest, component.clone());
        Ok(component)
    }
}

impl DiskCache {
    fn open(dir: PathBuf) -> Result<Self, LoadError> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| cache_error(&dir, format!("cannot create the directory: {e}")))?;
        check_dir(&dir)?;
        let key = load_or_make_key(&dir)?;
        Ok(DiskCache { dir, key })
    }

    fn load_or_compile(
        &self,
        engine: &Engine,
        digest: ComponentDigest,
        source_name: &str,
        bytes: &[u8],
    ) -> Result<Component, LoadError> {
        check_dir(&self.dir)?;
        let engine_hash = engine_hash(engine);
        let path = self.dir.join(format!("{digest}-{engine_hash:016x}.cwasm"));
        match self.read_entry(&path, digest, engine_hash) {
            Ok(None) => {}
            Ok(Some(artifact)) => {
                // SAFETY: the artifact carries a tag that only a holder of
                // this cache's private key could make, over this component's
                // digest and this engine's hash: it is what this host
                // compiled for this component. These are the bytes the tag
                // was checked on, and wasmtime checks its own header again.
                match unsafe { Component::deserialize(engine, &artifact) } {
                    Ok(c) => return Ok(c),
                    Err(e) => tracing::warn!(
                        path = %path.display(),
                        "discarding a cache entry wasmtime refused: {e:#}; recompiling"
                    ),
                }
            }
            Err(reason) => tracing::warn!(
                path = %path.display(),
                "discarding cache entry: {reason}; recompiling"
            ),
        }
        let compiled = engine
            .precompile_component(bytes)
            .map_err(|e| malformed(source_name, bytes, &e))?;
        let mut entry = Vec::with_capacity(MAGIC.len() + TAG_LEN + compiled.len());
        entry.extend_from_slice(MAGIC);
        entry.extend_from_slice(&self.tag(digest, engine_hash, &compiled));
        entry.extend_from_slice(&compiled);
        crate::state::write_file(&path, &entry, true)
            .map_err(|e| cache_error(&path, e.to_string()))?;
        // SAFETY: produced just above by this engine.
        unsafe { Component::deserialize(engine, &compiled) }
            .map_err(|e| cache_error(&path, format!("{e:#}")))
    }

    /// The artifact of the entry at `path`, `None` when there is no entry,
    /// or why the entry is not to be trusted.
    fn read_entry(
        &self,
        path: &Path,
        digest: ComponentDigest,
        engine_hash: u64,
    ) -> Result<Option<Vec<u8>>, String> {
        let mut file = match open_no_follow(path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot open it: {e}")),
        };
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot read its metadata: {e}"))?;
        if !meta.is_file() {
            return Err("not a regular file".into());
        }
        check_owner(&meta)?;
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "writable by group or others (mode {:04o})",
                meta.mode() & 0o7777
            ));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read it: {e}"))?;
        let Some(rest) = bytes.strip_prefix(MAGIC) else {
            return Err("not a slurm-wasm cache entry (bad magic)".into());
        };
        if rest.len() < TAG_LEN {
            return Err("truncated".into());
        }
        let (tag, artifact) = rest.split_at(TAG_LEN);
        self.mac(digest, engine_hash, artifact)
            .verify_slice(tag)
            .map_err(|_| {
                "its tag does not match: damaged, written for another component, or sealed \
                 with another key"
                    .to_string()
            })?;
        let header_len = MAGIC.len() + TAG_LEN;
        bytes.drain(..header_len);
        Ok(Some(bytes))
    }

    fn mac(&self, digest: ComponentDigest, engine_hash: u64, artifact: &[u8]) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(&digest.0);
        mac.update(&engine_hash.to_le_bytes());
        mac.update(artifact);
        mac
    }

    fn tag(&self, digest: ComponentDigest, engine_hash: u64, artifact: &[u8]) -> [u8; TAG_LEN] {
        self.mac(digest, engine_hash, artifact)
            .finalize()
            .into_bytes()
            .into()
    }
}

/// Compiles without touching the disk.
fn compile(engine: &Engine, source_name: &str, bytes: &[u8]) -> Result<Component, LoadError> {
    Component::new(engine, bytes).map_err(|e| malformed(source_name, bytes, &e))
}

/// Why wasmtime refused `bytes`, in one line: a file that is not
/// WebAssembly at all and a core module (not a component) are named as
/// such; otherwise wasmtime's reason, its lines joined.
fn malformed(source_name: &str, bytes: &[u8], e: &wasmtime::Error) -> LoadError {
    const WASM_MAGIC: &[u8] = b"\0asm";
    const CORE_MODULE_VERSION: &[u8] = &[1, 0, 0, 0];
    let reason = if !bytes.starts_with(WASM_MAGIC) {
        let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!(
            "not a WebAssembly file: it begins with {} where WebAssembly begins with 00 61 73 6d (\\0asm)",
            if head.is_empty() { "nothing (empty file)".to_string() } else { head.join(" ") }
        )
    } else if bytes[WASM_MAGIC.len()..].starts_with(CORE_MODULE_VERSION) {
        "a core WebAssembly module, not a component: build for wasm32-wasip2 (or wrap the \
         module with `wasm-tools component new`)"
            .to_string()
    } else {
        format!("{e:#}")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    LoadError::Malformed {
        source_name: source_name.into(),
        reason,
    }
}

/// wasmtime's compatibility hash of this build and engine configuration.
fn engine_hash(engine: &Engine) -> u64 {
    let mut h = DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    h.finish()
}

fn cache_error(path: &Path, reason: String) -> LoadError {
    LoadError::Cache {
        path: path.to_path_buf(),
        reason,
    }
}

/// The cache directory must be the effective user's and writable by it alone.
fn check_dir(dir: &Path) -> Result<(), LoadError> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| cache_error(dir, format!("cannot read its metadata: {e}")))?;
    if !meta.is_dir() {
        return Err(cache_error(
            dir,
            "is not a directory; set the cache directory to one".into(),
        ));
    }
    check_owner(&meta).map_err(|reason| {
        cache_error(
            dir,
            format!(
                "{reason}: compiled code there runs inside the host, so the directory must be \
                 that user's; use one it owns, or `chown {} {}`",
                effective_uid(),
                dir.display()
            ),
        )
    })?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(cache_error(
            dir,
            format!(
                "is writable by group or others (mode {mode:04o}), who could plant compiled \
                 code the host would run; run `chmod go-w {}` or use another cache directory",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Reads the cache key, making it first if there is none.
fn load_or_make_key(dir: &Path) -> Result<[u8; 32], LoadError> {
    let path = dir.join(KEY_FILE);
    let file = match open_no_follow(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let mut key = [0u8; 32];
            getrandom::fill(&mut key)
                .map_err(|e| cache_error(&path, format!("cannot draw a random key: {e}")))?;
            match crate::state::write_file(&path, &key, false) {
                Ok(()) => return Ok(key),
                // Another host made it first: use theirs.
                Err(crate::state::StateError::Io { source, .. })
                    if source.kind() == io::ErrorKind::AlreadyExists =>
                {
                    open_no_follow(&path)
                        .map_err(|e| cache_error(&path, format!("cannot open the key: {e}")))?
                }
                Err(e) => return Err(cache_error(&path, format!("cannot make the key: {e}"))),
            }
        }
        Err(e) => return Err(cache_error(&path, format!("cannot open the key: {e}"))),
    };
    read_key(&path, file)
}

/// Checks that the key file is private to the effective user and holds 32 bytes.
fn read_key(path: &Path, file: File) -> Result<[u8; 32], LoadError> {
    let meta = file
        .metadata()
        .map_err(|e| cache_error(path, format!("cannot read the key's metadata: {e}")))?;
    if !meta.is_file() {
        return Err(cache_error(
            path,
            "the key is not a regular file; remove it and a new key is made".into(),
        ));
    }
    check_owner(&meta).map_err(|reason| {
        cache_error(
            path,
            format!("the key {reason}; remove it and a new key is made"),
        )
    })?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(cache_error(
            path,
            format!(
                "the key is open to group or others (mode {mode:04o}), who could forge cache \
                 entries; run `chmod 600 {}`, or remove it and a new key is made",
                path.display()
            ),
        ));
    }
    let mut key = Vec::new();
    file.take(33)
        .read_to_end(&mut key)
        .map_err(|e| cache_error(path, format!("cannot read the key: {e}")))?;
    key.try_into().map_err(|key: Vec<u8>| {
        cache_error(
            path,
            format!(
                "the key holds {} bytes, not 32; remove it and a new key is made",
                key.len()
            ),
        )
    })
}

fn open_no_follow(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Refuses what the effective user does not own.
fn check_owner(meta: &Metadata) -> Result<(), String> {
    let uid = effective_uid();
    if meta.uid() == uid {
        Ok(())
    } else {
        Err(format!(
            "is owned by uid {}, not by uid {uid} running the host",
            meta.uid()
        ))
    }
}
