//! Plugin state files: written atomically, refused whole when damaged,
//! foreign or too large.
//!
//! A plugin's `state-save` returns an opaque blob; the host stores it in a
//! file with a header that says whose blob it is and lets a later
//! `state-restore` prove the file is intact, and was written by the same
//! component, before anything is handed back.
//!
//! # Format (version 2, little-endian)
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `SLWSTATE` |
//! | 2 | format version, `2` |
//! | 2 | length *n* of the plugin type |
//! | *n* | plugin type, UTF-8 (`select/cons_tres`) |
//! | 4 | plugin version (Slurm's version number) |
//! | 32 | SHA-256 of the writing component's bytes ([`ComponentDigest`]) |
//! | 1 | `1` when the writer was a plugin bundled with the host, else `0` |
//! | 8 | blob length *m* |
//! | 4 | CRC-32 (IEEE) of every byte above plus the blob |
//! | *m* | blob |
//!
//! Version 1 files (no writer recorded) are refused: which component wrote
//! them cannot be known, so they are saved again or removed.
//!
//! # Who may restore a file
//!
//! The plugin type must match, and the writer must be the restoring
//! plugin's own component, or a bundled plugin when the restoring plugin is
//! bundled too (the host binary was upgraded), or a component whose digest
//! the plugin's settings list in
//! [`accept_state_from`](crate::PluginSettings::accept_state_from) (a site
//! upgrading its own `.wasm`). So a third-party plugin that claims a
//! bundled plugin's type cannot hand that plugin a blob of its making.
//!
//! # Guarantees
//!
//! [`write_state`] never leaves a half-written file under the target name: it
//! writes a temporary file beside the target, flushes it to disk, renames it
//! over the target and flushes the directory, so after a crash the target
//! holds either the old state or the new one. A crash before the rename may
//! leave a temporary file named `.<target>.tmp-*`, which nothing reads.
//!
//! [`read_state`] and [`decode`] check everything (magic, format, size,
//! lengths, checksum, owner) before returning; a file that fails any check
//! yields an error and no data at all. [`read_state`] reads no more of a
//! file than the largest one the size bound allows.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use thiserror::Error;

/// The first eight bytes of every state file.
pub const MAGIC: &[u8; 8] = b"SLWSTATE";

/// The header format this module writes and reads.
pub const FORMAT_VERSION: u16 = 2;

/// Header bytes before the plugin type: magic, format version, type length.
const PREFIX_LEN: usize = MAGIC.len() + 2 + 2;

/// Header bytes after the plugin type: plugin version, writer digest,
/// bundled flag, blob length, checksum.
const SUFFIX_LEN: usize = 4 + 32 + 1 + 8 + 4;

/// The longest header: one with a plugin type of `u16::MAX` bytes.
const MAX_HEADER_LEN: usize = PREFIX_LEN + u16::MAX as usize + SUFFIX_LEN;

/// The SHA-256 of a component's bytes, as `sha256sum plugin.wasm` prints
/// it (64 lowercase hexadecimal digits).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ComponentDigest(pub [u8; 32]);

impl ComponentDigest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        ComponentDigest(Sha256::digest(bytes).into())
    }
}

impl fmt::Display for ComponentDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for ComponentDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ComponentDigest({self})")
    }
}

/// A string that is not 64 hexadecimal digits.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "`{0}` is not a component digest: expected the 64 hexadecimal digits of its SHA-256, \
     as `sha256sum plugin.wasm` prints them"
)]
pub struct InvalidDigest(pub String);

impl FromStr for ComponentDigest {
    type Err = InvalidDigest;

    /// Parses 64 hexadecimal digits, either case.
    fn from_str(s: &str) -> Result<Self, InvalidDigest> {
        let invalid = || InvalidDigest(s.to_owned());
        if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(invalid());
        }
        let mut digest = [0u8; 32];
        for (byte, pair) in digest.iter_mut().zip(s.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).map_err(|_| invalid())?;
            *byte = u8::from_str_radix(pair, 16).map_err(|_| invalid())?;
        }
        Ok(ComponentDigest(digest))
    }
}

/// The component a plugin runs, as a state file records its writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComponentId {
    /// The SHA-256 of its bytes.
    pub digest: ComponentDigest,
    /// True for a plugin bundled with the host (`PluginSource::Bundled`).
    pub bundled: bool,
}

impl fmt::Display for ComponentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let origin = if self.bundled {
            "bundled"
        } else {
            "not bundled"
        };
        write!(f, "{} ({origin})", self.digest)
    }
}

/// The plugin a state file is restored into: what it accepts.
#[derive(Debug, Clone, Copy)]
pub struct Restorer<'a> {
    /// Its plugin type; the file's must be the same.
    pub plugin_type: &'a str,
    /// Its component.
    pub component: ComponentId,
    /// Digests of other components whose state it accepts
    /// ([`crate::PluginSettings::accept_state_from`]).
    pub accept_state_from: &'a [ComponentDigest],
    /// The largest blob it accepts ([`crate::Limits::state_bytes`]).
    pub max_state_bytes: usize,
}

impl Restorer<'_> {
    /// May a blob written by `writer` be restored? See the
    /// [module documentation](self).
    pub fn accepts(&self, writer: ComponentId) -> bool {
        writer.digest == self.component.digest
            || (writer.bundled && self.component.bundled)
            || self.accept_state_from.contains(&writer.digest)
    }
}

/// A decoded state file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    /// The `plugin_type` of the plugin that saved the blob.
    pub plugin_type: String,
    /// That plugin's version number.
    pub plugin_version: u32,
    /// The component that saved it.
    pub writer: ComponentId,
    /// The blob, exactly as `state-save` returned it.
    pub blob: Vec<u8>,
}

/// Why a state file could not be written or was refused.
///
/// `path` is the state file when the error came from [`read_state`] or
/// [`write_state`], and `None` when it came from [`encode`] or [`decode`].
#[derive(Debug, Error)]
pub enum StateError {
    /// The file system refused an operation.
    #[error("{}: cannot {action}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// What was being done (`read`, `create a temporary file in`, ...).
        action: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// The file does not start with [`MAGIC`].
    #[error("{}not a slurm-wasm state file (bad magic)", at(path))]
    BadMagic {
        /// The state file, when known.
        path: Option<PathBuf>,
    },
    /// The header is of a format this host does not read.
    #[error(
        "{}state file format version {version} is not supported (this host reads version {FORMAT_VERSION}){}",
        at(path),
        format_hint(*version)
    )]
    UnsupportedFormat {
        /// The state file, when known.
        path: Option<PathBuf>,
        /// The format version found.
        version: u16,
    },
    /// The file ends before its header or blob does.
    #[error(
        "{}state file is truncated: expected {expected} bytes, found {found}",
        at(path)
    )]
    Truncated {
        /// The state file, when known.
        path: Option<PathBuf>,
        /// Bytes the header says (or the header itself needs) at least.
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// The header announces a blob larger than the restoring plugin's
    /// [`crate::Limits::state_bytes`]; nothing beyond the header was read.
    #[error(
        "{}state file holds {bytes} bytes of state, more than the limit of {limit} bytes \
         (raise `state_mb` in the plugin's limits)",
        at(path)
    )]
    TooLarge {
        /// The state file, when known.
        path: Option<PathBuf>,
        /// The blob length in the header.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The stored checksum does not match the contents.
    #[error(
        "{}state file is corrupt: checksum {stored:08x} stored, {computed:08x} computed",
        at(path)
    )]
    Checksum {
        /// The state file, when known.
        path: Option<PathBuf>,
        /// The checksum in the header.
        stored: u32,
        /// The checksum of the contents.
        computed: u32,
    },
    /// The file was saved by another plugin.
    #[error("{}state file belongs to plugin `{found}`, not `{expected}`", at(path))]
    ForeignPlugin {
        /// The state file, when known.
        path: Option<PathBuf>,
        /// The plugin type in the file.
        found: String,
        /// The plugin type the caller asked for.
        expected: String,
    },
    /// The file was saved by a plugin of the same type but another
    /// component, which the restoring plugin does not accept (see
    /// [`Restorer::accepts`]).
    #[error(
        "{}state file of plugin `{plugin_type}` was written by component {found}, not by this \
         plugin's component {expected}; if {} is an earlier build of this plugin, list it in \
         the plugin's `accept_state_from`, otherwise remove the file",
        at(path),
        found.digest
    )]
    ForeignComponent {
        /// The state file, when known.
        path: Option<PathBuf>,
        /// The plugin type both claim.
        plugin_type: String,
        /// The writer recorded in the file.
        found: ComponentId,
        /// The restoring plugin's component.
        expected: ComponentId,
    },
    /// Bytes follow the blob.
    #[error(
        "{}state file has {extra} unexpected bytes after the state blob",
        at(path)
    )]
    TrailingBytes {
        /// The state file, when known.
        path: Option<PathBuf>,
        /// How many.
        extra: u64,
    },
    /// The plugin type in the file is not UTF-8, or the bundled flag is
    /// neither 0 nor 1 (only a crafted file gets past the checksum with one).
    #[error("{}state file header is malformed: {what}", at(path))]
    BadHeader {
        /// The state file, when known.
        path: Option<PathBuf>,
        /// Which field.
        what: &'static str,
    },
    /// A plugin type too long for the header was given to [`encode`].
    #[error(
        "plugin type is {len} bytes long; a state file holds at most {}",
        u16::MAX
    )]
    PluginTypeTooLong {
        /// Its length in bytes.
        len: usize,
    },
}

fn at(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| format!("{}: ", p.display()))
        .unwrap_or_default()
}

fn format_hint(version: u16) -> &'static str {
    if version < FORMAT_VERSION {
        "; older files do not record which component wrote them: save the state again \
         with this host, or remove the file to start without it"
    } else {
        ""
    }
}

impl StateError {
    /// True when the state file does not exist, which for a plugin's first
    /// start means "nothing to restore" rather than a failure.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StateError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    fn with_path(mut self, file: &Path) -> Self {
        match &mut self {
            StateError::BadMagic { path }
            | StateError::UnsupportedFormat { path, .. }
            | StateError::Truncated { path, .. }
            | StateError::TooLarge { path, .. }
            | StateError::Checksum { path, .. }
            | StateError::ForeignPlugin { path, .. }
            | StateError::ForeignComponent { path, .. }
            | StateError::TrailingBytes { path, .. }
            | StateError::BadHeader { path, .. } => *path = Some(file.to_path_buf()),
            StateError::Io { .. } | StateError::PluginTypeTooLong { .. } => {}
        }
        self
    }
}

/// Encodes a state file: header followed by `blob`, saved by `writer`.
///
/// # Errors
///
/// [`StateError::PluginTypeTooLong`] when `plugin_type` exceeds 65535 bytes.
pub fn encode(
    plugin_type: &str,
    plugin_version: u32,
    writer: ComponentId,
    blob: &[u8],
) -> Result<Vec<u8>, StateError> {
    let type_len = u16::try_from(plugin_type.len()).map_err(|_| StateError::PluginTypeTooLong {
        len: plugin_type.len(),
    })?;
    let mut out = Vec::with_capacity(PREFIX_LEN + plugin_type.len() + SUFFIX_LEN + blob.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&type_len.to_le_bytes());
    out.extend_from_slice(plugin_type.as_bytes());
    out.extend_from_slice(&plugin_version.to_le_bytes());
    out.extend_from_slice(&writer.digest.0);
    out.push(u8::from(writer.bundled));
    out.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out);
    crc.update(blob);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(blob);
    Ok(out)
}

/// Decodes and checks a state file for `restorer`.
///
/// # Errors
///
/// [`StateError::BadMagic`], [`StateError::UnsupportedFormat`],
/// [`StateError::Truncated`] (of the header), [`StateError::TooLarge`],
/// [`StateError::Truncated`] (of the blob), [`StateError::TrailingBytes`],
/// [`StateError::Checksum`], [`StateError::BadHeader`],
/// [`StateError::ForeignPlugin`] or [`StateError::ForeignComponent`],
/// checked in that order; nothing is returned unless every check passes.
pub fn decode(bytes: &[u8], restorer: &Restorer<'_>) -> Result<StateFile, StateError> {
    decode_prefix(bytes, bytes.len() as u64, restorer)
}

/// [`decode`] of the first bytes of a file of `found` bytes: `bytes` is the
/// whole file, or (when `found` is larger) longer than any file `restorer`
/// accepts, which is then refused before the missing bytes are needed.
fn decode_prefix(
    bytes: &[u8],
    found: u64,
    restorer: &Restorer<'_>,
) -> Result<StateFile, StateError> {
    let truncated = |expected: usize| StateError::Truncated {
        path: None,
        expected: expected as u64,
        found,
    };
    let magic_len = MAGIC.len().min(bytes.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(StateError::BadMagic { path: None });
    }
    if bytes.len() < PREFIX_LEN {
        return Err(truncated(PREFIX_LEN));
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version != FORMAT_VERSION {
        return Err(StateError::UnsupportedFormat {
            path: None,
            version,
        });
    }
    let type_len = usize::from(u16::from_le_bytes([bytes[10], bytes[11]]));
    let header_len = PREFIX_LEN + type_len + SUFFIX_LEN;
    if bytes.len() < header_len {
        return Err(truncated(header_len));
    }
    let type_end = PREFIX_LEN + type_len;
    let (type_bytes, suffix) = (&bytes[PREFIX_LEN..type_end], &bytes[type_end..header_len]);
    let plugin_version = u32::from_le_bytes(suffix[0..4].try_into().expect("4 bytes"));
    let digest = ComponentDigest(suffix[4..36].try_into().expect("32 bytes"));
    let bundled = suffix[36];
    let blob_len = u64::from_le_bytes(suffix[37..45].try_into().expect("8 bytes"));
    let stored = u32::from_le_bytes(suffix[45..49].try_into().expect("4 bytes"));
    let limit = restorer.max_state_bytes as u64;
    if blob_len > limit {
        return Err(StateError::TooLarge {
            path: None,
            bytes: blob_len,
            limit,
        });
    }
    let expected_len = header_len as u64 + blob_len;
    if found < expected_len {
        return Err(StateError::Truncated {
            path: None,
            expected: expected_len,
            found,
        });
    }
    if found > expected_len {
        return Err(StateError::TrailingBytes {
            path: None,
            extra: found - expected_len,
        });
    }
    let blob = &bytes[header_len..];
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[..header_len - 4]);
    crc.update(blob);
    let computed = crc.finalize();
    if computed != stored {
        return Err(StateError::Checksum {
            path: None,
            stored,
            computed,
        });
    }
    let plugin_type = std::str::from_utf8(type_bytes).map_err(|_| StateError::BadHeader {
        path: None,
        what: "the plugin type is not UTF-8",
    })?;
    let writer = ComponentId {
        digest,
        bundled: match bundled {
            0 => false,
            1 => true,
            _ => {
                return Err(StateError::BadHeader {
                    path: None,
                    what: "the bundled flag is neither 0 nor 1",
                })
            }
        },
    };
    if plugin_type != restorer.plugin_type {
        return Err(StateError::ForeignPlugin {
            path: None,
            found: plugin_type.to_owned(),
            expected: restorer.plugin_type.to_owned(),
        });
    }
    if !restorer.accepts(writer) {
        return Err(StateError::ForeignComponent {
            path: None,
            plugin_type: plugin_type.to_owned(),
            found: writer,
            expected: restorer.component,
        });
    }
    Ok(StateFile {
        plugin_type: plugin_type.to_owned(),
        plugin_version,
        writer,
        blob: blob.to_vec(),
    })
}

/// Reads and checks the state file at `path` for `restorer`, reading no
/// more than the largest file it accepts could hold.
///
/// # Errors
///
/// [`StateError::Io`] when the file cannot be read (see
/// [`StateError::is_not_found`]), or any error of [`decode`], naming `path`.
pub fn read_state(path: &Path, restorer: &Restorer<'_>) -> Result<StateFile, StateError> {
    let io_error = |source| StateError::Io {
        path: path.to_path_buf(),
        action: "read",
        source,
    };
    let mut file = File::open(path).map_err(io_error)?;
    // One byte more than the largest acceptable file: a longer file is
    // refused on its header, and the rest is never read.
    let cap = (MAX_HEADER_LEN as u64).saturating_add(restorer.max_state_bytes as u64) + 1;
    let mut bytes = Vec::new();
    (&mut file)
        .take(cap)
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    let found = if bytes.len() as u64 == cap {
        file.metadata().map_err(io_error)?.len().max(cap)
    } else {
        bytes.len() as u64
    };
    decode_prefix(&bytes, found, restorer).map_err(|e| e.with_path(path))
}

/// Atomically replaces the state file at `path` with `blob`, saved by
/// `writer`.
///
/// The new contents go to a temporary file in the same directory, which is
/// flushed to disk and renamed over `path`; then the directory itself is
/// flushed so the rename survives a crash. The temporary file is removed if
/// any step before the rename fails, and `path` keeps its old contents.
///
/// # Errors
///
/// [`StateError::PluginTypeTooLong`] from [`encode`], or [`StateError::Io`]
/// naming the step and file that failed. An error from the final directory
/// flush means the new state is in place but may not survive a crash.
pub fn write_state(
    path: &Path,
    plugin_type: &str,
    plugin_version: u32,
    writer: ComponentId,
    blob: &[u8],
) -> Result<(), StateError> {
    let bytes = encode(plugin_type, plugin_version, writer, blob)?;
    write_file(path, &bytes, true)
}

/// Writes `bytes` to a new file (mode 0600) at `path` so that no reader
/// ever sees it half-written: through a flushed temporary file beside it,
/// renamed over `path` when `replace` is set, else linked to `path`, which
/// then fails with [`io::ErrorKind::AlreadyExists`] if `path` exists.
/// The directory is flushed afterwards. Serves state files and the
/// compiled-component cache.
pub(crate) fn write_file(path: &Path, bytes: &[u8], replace: bool) -> Result<(), StateError> {
    let io_error = |path: &Path, action: &'static str| {
        let path = path.to_path_buf();
        move |source| StateError::Io {
            path,
            action,
            source,
        }
    };
    let file_name = path.file_name().ok_or_else(|| {
        io_error(path, "write a file at")(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        ))
    })?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let (tmp_path, mut tmp) = create_temp(dir, &file_name.to_string_lossy())?;
    let written = tmp
        .write_all(bytes)
        .map_err(io_error(&tmp_path, "write"))
        .and_then(|()| tmp.sync_all().map_err(io_error(&tmp_path, "flush")))
        .and_then(|()| {
            drop(tmp);
            if replace {
                fs::rename(&tmp_path, path).map_err(io_error(path, "rename the new contents over"))
            } else {
                let linked = fs::hard_link(&tmp_path, path).map_err(io_error(path, "create"));
                // Best effort: the link, if made, holds the contents.
                let _ = fs::remove_file(&tmp_path);
                linked
            }
        });
    if let Err(e) = written {
        // Best effort: the error that matters is the one being returned.
        let _ = fs::remove_file(&tmp_path);
        return Err(e);
    }
    sync_dir(dir).map_err(io_error(dir, "flush the directory"))
}

/// Creates a fresh temporary file in `dir`, never reusing an existing name.
fn create_temp(dir: &Path, target_name: &str) -> Result<(PathBuf, File), StateError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let pid = std::process::id();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp_path = dir.join(format!(".{target_name}.tmp-{pid}-{n}"));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&tmp_path) {
            Ok(file) => return Ok((tmp_path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(source) => {
                return Err(StateError::Io {
                    path: dir.to_path_buf(),
                    action: "create a temporary file in",
                    source,
                })
            }
        }
    }
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPE: &str = "select/cons_tres";
    /// Slurm 22.05.8 by Slurm's version number rule.
    const VERSION: u32 = (22 << 16) | (5 << 8) | 8;
    const MINE: ComponentId = ComponentId {
        digest: ComponentDigest([7; 32]),
        bundled: false,
    };

    /// A plugin of type `plugin_type` running [`MINE`] restores.
    fn restorer(plugin_type: &str) -> Restorer<'_> {
        Restorer {
            plugin_type,
            component: MINE,
            accept_state_from: &[],
            max_state_bytes: 1 << 20,
        }
    }

    fn sample() -> Vec<u8> {
        encode(TYPE, VERSION, MINE, b"node table and usage").unwrap()
    }

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn round_trip() {
        let decoded = decode(&sample(), &restorer(TYPE)).unwrap();
        assert_eq!(
            decoded,
            StateFile {
                plugin_type: TYPE.into(),
                plugin_version: VERSION,
                writer: MINE,
                blob: b"node table and usage".to_vec(),
            }
        );
        let empty = encode("task/none", 1, MINE, &[]).unwrap();
        assert!(decode(&empty, &restorer("task/none"))
            .unwrap()
            .blob
            .is_empty());
    }

    #[test]
    fn header_layout_is_as_documented() {
        let writer = ComponentId {
            digest: ComponentDigest(std::array::from_fn(|i| i as u8)),
            bundled: true,
        };
        let bytes = encode("t", 0x0102_0304, writer, &[0xaa, 0xbb]).unwrap();
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(&bytes[8..10], &[2, 0]);
        assert_eq!(&bytes[10..12], &[1, 0]);
        assert_eq!(bytes[12], b't');
        assert_eq!(&bytes[13..17], &[4, 3, 2, 1]);
        assert_eq!(&bytes[17..49], &writer.digest.0);
        assert_eq!(bytes[49], 1);
        assert_eq!(&bytes[50..58], &[2, 0, 0, 0, 0, 0, 0, 0]);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[..58]);
        crc.update(&[0xaa, 0xbb]);
        assert_eq!(&bytes[58..62], &crc.finalize().to_le_bytes());
        assert_eq!(&bytes[62..], &[0xaa, 0xbb]);
    }

    #[test]
    fn every_truncation_is_refused() {
        let bytes = sample();
        for len in 0..bytes.len() {
            match decode(&bytes[..len], &restorer(TYPE)) {
                Err(StateError::Truncated {
                    expected, found, ..
                }) => {
                    assert_eq!(found, len as u64);
                    assert!(expected > found);
                }
                other => panic!("truncated to {len} bytes: {other:?}"),
            }
        }
    }

    #[test]
    fn every_single_flipped_byte_is_refused() {
        let bytes = sample();
        for pos in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[pos] ^= flip;
                assert!(
                    decode(&damaged, &restorer(TYPE)).is_err(),
                    "byte {pos} xor {flip:#x} was accepted"
                );
            }
        }
    }

    /// Recomputes the checksum of a file changed by hand, as a crafted file would.
    fn reseal(bytes: &mut [u8]) {
        let type_len = usize::from(u16::from_le_bytes([bytes[10], bytes[11]]));
        let crc_at = PREFIX_LEN + type_len + SUFFIX_LEN - 4;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[..crc_at]);
        crc.update(&bytes[crc_at + 4..]);
        let sum = crc.finalize().to_le_bytes();
        bytes[crc_at..crc_at + 4].copy_from_slice(&sum);
    }

    #[test]
    fn each_kind_of_damage_gets_its_own_error() {
        let bytes = sample();
        let r = restorer(TYPE);
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(matches!(
            decode(&magic, &r),
            Err(StateError::BadMagic { .. })
        ));
        assert!(matches!(
            decode(b"#!/bin/sh", &r),
            Err(StateError::BadMagic { .. })
        ));

        let mut format = bytes.clone();
        format[8] = 3;
        let e = decode(&format, &r).unwrap_err();
        assert!(
            matches!(e, StateError::UnsupportedFormat { version: 3, .. }),
            "{e:?}"
        );
        assert!(!e.to_string().contains("remove the file"), "{e}");

        let mut blob = bytes.clone();
        *blob.last_mut().unwrap() ^= 1;
        assert!(matches!(
            decode(&blob, &r),
            Err(StateError::Checksum { .. })
        ));

        let mut trailing = bytes.clone();
        trailing.extend_from_slice(b"xyz");
        assert!(matches!(
            decode(&trailing, &r),
            Err(StateError::TrailingBytes { extra: 3, .. })
        ));

        let mut flag = bytes.clone();
        flag[PREFIX_LEN + TYPE.len() + 4 + 32] = 2;
        reseal(&mut flag);
        assert_eq!(
            decode(&flag, &r).unwrap_err().to_string(),
            "state file header is malformed: the bundled flag is neither 0 nor 1"
        );
    }

    /// Issue 26, class 11: a header announcing more state than the plugin
    /// may keep is refused before the blob is read; the old code read
    /// (and handed over) a blob of any size.
    #[test]
    fn a_blob_over_the_limit_is_refused_on_its_header() {
        let mut huge = sample();
        let len_at = PREFIX_LEN + TYPE.len() + 4 + 33;
        huge[len_at..len_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = decode(&huge, &restorer(TYPE)).unwrap_err();
        assert!(
            matches!(e, StateError::TooLarge { bytes: u64::MAX, limit, .. } if limit == 1 << 20),
            "{e:?}"
        );
        let small = Restorer {
            max_state_bytes: 5,
            ..restorer(TYPE)
        };
        assert_eq!(
            decode(&sample(), &small).unwrap_err().to_string(),
            "state file holds 20 bytes of state, more than the limit of 5 bytes \
             (raise `state_mb` in the plugin's limits)"
        );
    }

    #[test]
    fn read_state_reads_no_more_than_the_limit_allows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        let small = Restorer {
            max_state_bytes: 64,
            ..restorer(TYPE)
        };
        // A valid header for a 20-byte blob, then 10 MB of junk: refused as
        // trailing bytes, counted from the file's length.
        let mut file = sample();
        file.resize(file.len() + 10_000_000, 0);
        fs::write(&path, &file).unwrap();
        match read_state(&path, &small) {
            Err(StateError::TrailingBytes { extra, .. }) => assert_eq!(extra, 10_000_000),
            other => panic!("{other:?}"),
        }
    }

    /// Issue 26, class 14: the header binds the file to the component that
    /// wrote it (the old header recorded only the plugin type).
    #[test]
    fn a_file_written_by_another_component_is_refused() {
        let theirs = ComponentId {
            digest: ComponentDigest([9; 32]),
            bundled: false,
        };
        let file = encode(TYPE, VERSION, theirs, b"x").unwrap();
        let e = decode(&file, &restorer(TYPE)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "state file of plugin `select/cons_tres` was written by component {} \
                 (not bundled), not by this plugin's component {} (not bundled); if {} is an \
                 earlier build of this plugin, list it in the plugin's `accept_state_from`, \
                 otherwise remove the file",
                theirs.digest, MINE.digest, theirs.digest
            )
        );
        let listed = [theirs.digest];
        let accepting = Restorer {
            accept_state_from: &listed,
            ..restorer(TYPE)
        };
        assert_eq!(decode(&file, &accepting).unwrap().writer, theirs);
    }

    #[test]
    fn bundled_restores_bundled_but_not_a_third_party_claiming_its_type() {
        let bundled = |digest| ComponentId {
            digest: ComponentDigest([digest; 32]),
            bundled: true,
        };
        let upgraded = Restorer {
            component: bundled(2),
            ..restorer(TYPE)
        };
        let by_older_host = encode(TYPE, VERSION, bundled(1), b"x").unwrap();
        assert!(decode(&by_older_host, &upgraded).is_ok());
        let by_third_party = encode(TYPE, VERSION, MINE, b"x").unwrap();
        assert!(matches!(
            decode(&by_third_party, &upgraded),
            Err(StateError::ForeignComponent { .. })
        ));
        assert!(
            matches!(
                decode(&by_older_host, &restorer(TYPE)),
                Err(StateError::ForeignComponent { .. })
            ),
            "a third-party plugin does not restore a bundled plugin's file either"
        );
    }

    #[test]
    fn version_1_files_are_refused_with_what_to_do() {
        let mut old = sample();
        old[8] = 1;
        assert_eq!(
            decode(&old, &restorer(TYPE)).unwrap_err().to_string(),
            "state file format version 1 is not supported (this host reads version 2); older \
             files do not record which component wrote them: save the state again with this \
             host, or remove the file to start without it"
        );
    }

    #[test]
    fn digests_parse_as_sha256sum_prints_them() {
        let digest = ComponentDigest::of(b"abc");
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(digest.to_string(), hex);
        assert_eq!(hex.parse::<ComponentDigest>(), Ok(digest));
        assert_eq!(hex.to_uppercase().parse::<ComponentDigest>(), Ok(digest));
        for bad in [
            "",
            "ba78",
            &format!("{hex}0"),
            &hex.replace('b', "g"),
            "é".repeat(32).as_str(),
        ] {
            assert_eq!(
                bad.parse::<ComponentDigest>(),
                Err(InvalidDigest(bad.to_owned())),
                "{bad}"
            );
        }
    }

    #[test]
    fn invalid_utf8_plugin_type_is_refused() {
        let mut bytes = encode("ab", 1, MINE, b"x").unwrap();
        bytes[PREFIX_LEN] = 0xff;
        reseal(&mut bytes);
        assert!(matches!(
            decode(&bytes, &restorer("ab")),
            Err(StateError::BadHeader { .. })
        ));
    }

    #[test]
    fn foreign_plugin_is_refused() {
        let err = decode(&sample(), &restorer("select/linear")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "state file belongs to plugin `select/cons_tres`, not `select/linear`"
        );
    }

    #[test]
    fn overlong_plugin_type_is_refused() {
        let long = "x".repeat(70_000);
        assert!(matches!(
            encode(&long, 1, MINE, b""),
            Err(StateError::PluginTypeTooLong { len: 70_000 })
        ));
    }

    #[test]
    fn write_then_read_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("select.state");
        write_state(&path, TYPE, 3, MINE, b"first").unwrap();
        write_state(&path, TYPE, 4, MINE, b"second").unwrap();
        assert_eq!(dir_entries(dir.path()), ["select.state"]);
        let state = read_state(&path, &restorer(TYPE)).unwrap();
        assert_eq!(
            (state.plugin_version, state.blob.as_slice()),
            (4, &b"second"[..])
        );
    }

    #[test]
    fn read_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prio.state");
        let missing = read_state(&path, &restorer("priority/basic")).unwrap_err();
        assert!(missing.is_not_found());
        assert!(missing.to_string().starts_with(&path.display().to_string()));

        write_state(&path, TYPE, 1, MINE, b"x").unwrap();
        let foreign = read_state(&path, &restorer("priority/basic")).unwrap_err();
        assert!(!foreign.is_not_found());
        assert_eq!(
            foreign.to_string(),
            format!(
                "{}: state file belongs to plugin `select/cons_tres`, not `priority/basic`",
                path.display()
            )
        );
    }

    #[test]
    fn missing_directory_fails_without_creating_anything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent").join("select.state");
        let err = write_state(&path, TYPE, 1, MINE, b"x").unwrap_err();
        assert!(matches!(err, StateError::Io { .. }), "{err}");
        assert!(!path.exists());
        assert_eq!(dir_entries(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn failed_write_keeps_the_old_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("select.state");
        write_state(&path, TYPE, 1, MINE, b"good").unwrap();

        let long = "x".repeat(70_000);
        assert!(write_state(&path, &long, 2, MINE, b"bad").is_err());
        assert_eq!(read_state(&path, &restorer(TYPE)).unwrap().blob, b"good");
        assert_eq!(dir_entries(dir.path()), ["select.state"]);
    }

    #[test]
    fn failed_rename_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("select.state");
        write_state(&good, TYPE, 1, MINE, b"good").unwrap();
        let blocker = dir.path().join("busy.state");
        fs::create_dir(&blocker).unwrap();
        fs::write(blocker.join("inside"), b"keep").unwrap();

        let err = write_state(&blocker, TYPE, 2, MINE, b"new").unwrap_err();
        assert!(err.to_string().contains("cannot rename"), "{err}");
        assert_eq!(dir_entries(dir.path()), ["busy.state", "select.state"]);
        assert_eq!(read_state(&good, &restorer(TYPE)).unwrap().blob, b"good");
    }

    #[test]
    fn path_without_a_file_name_is_refused() {
        let err = write_state(Path::new(""), TYPE, 1, MINE, b"x").unwrap_err();
        assert!(err.to_string().contains("names no file"), "{err}");
    }
}
