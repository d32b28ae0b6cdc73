//! Plugin state files: written atomically, refused whole when damaged.
//!
//! A plugin's `state-save` returns an opaque blob; the host stores it in a
//! file with a header that says whose blob it is and lets a later
//! `state-restore` prove the file is intact before anything is handed back.
//!
//! # Format (version 1, little-endian)
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `SLWSTATE` |
//! | 2 | format version, `1` |
//! | 2 | length *n* of the plugin type |
//! | *n* | plugin type, UTF-8 (`select/cons_tres`) |
//! | 4 | plugin version (Slurm's version number) |
//! | 8 | blob length *m* |
//! | 4 | CRC-32 (IEEE) of every byte above plus the blob |
//! | *m* | blob |
//!
//! # Guarantees
//!
//! [`write_state`] never leaves a half-written file under the target name: it
//! writes a temporary file beside the target, flushes it to disk, renames it
//! over the target and flushes the directory, so after a crash the target
//! holds either the old state or the new one. A crash before the rename may
//! leave a temporary file named `.<target>.tmp-*`, which nothing reads.
//!
//! [`read_state`] and [`decode`] check everything (magic, format, lengths,
//! checksum, owner) before returning; a file that fails any check yields an
//! error and no data at all.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

/// The first eight bytes of every state file.
pub const MAGIC: &[u8; 8] = b"SLWSTATE";

/// The header format this module writes and reads.
pub const FORMAT_VERSION: u16 = 1;

/// Header bytes before the plugin type: magic, format version, type length.
const PREFIX_LEN: usize = MAGIC.len() + 2 + 2;

/// Header bytes after the plugin type: plugin version, blob length, checksum.
const SUFFIX_LEN: usize = 4 + 8 + 4;

/// A decoded state file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFile {
    /// The `plugin_type` of the plugin that saved the blob.
    pub plugin_type: String,
    /// That plugin's version number.
    pub plugin_version: u32,
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
        "{}state file format version {version} is not supported (this host reads version {FORMAT_VERSION})",
        at(path)
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
    /// The plugin type in the file is not UTF-8 (only a crafted file gets
    /// past the checksum with one).
    #[error("{}state file names its plugin in invalid UTF-8", at(path))]
    BadPluginType {
        /// The state file, when known.
        path: Option<PathBuf>,
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
            | StateError::Checksum { path, .. }
            | StateError::ForeignPlugin { path, .. }
            | StateError::TrailingBytes { path, .. }
            | StateError::BadPluginType { path } => *path = Some(file.to_path_buf()),
            StateError::Io { .. } | StateError::PluginTypeTooLong { .. } => {}
        }
        self
    }
}

/// Encodes a state file: header followed by `blob`.
///
/// # Errors
///
/// [`StateError::PluginTypeTooLong`] when `plugin_type` exceeds 65535 bytes.
pub fn encode(plugin_type: &str, plugin_version: u32, blob: &[u8]) -> Result<Vec<u8>, StateError> {
    let type_len = u16::try_from(plugin_type.len()).map_err(|_| StateError::PluginTypeTooLong {
        len: plugin_type.len(),
    })?;
    let mut out = Vec::with_capacity(PREFIX_LEN + plugin_type.len() + SUFFIX_LEN + blob.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&type_len.to_le_bytes());
    out.extend_from_slice(plugin_type.as_bytes());
    out.extend_from_slice(&plugin_version.to_le_bytes());
    out.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&out);
    crc.update(blob);
    out.extend_from_slice(&crc.finalize().to_le_bytes());
    out.extend_from_slice(blob);
    Ok(out)
}

/// Decodes and checks a state file saved by `expected_plugin_type`.
///
/// # Errors
///
/// [`StateError::BadMagic`], [`StateError::UnsupportedFormat`],
/// [`StateError::Truncated`], [`StateError::TrailingBytes`],
/// [`StateError::Checksum`], [`StateError::BadPluginType`] or
/// [`StateError::ForeignPlugin`], checked in that order; nothing is returned
/// unless every check passes.
pub fn decode(bytes: &[u8], expected_plugin_type: &str) -> Result<StateFile, StateError> {
    let found = bytes.len() as u64;
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
    let blob_len = u64::from_le_bytes(suffix[4..12].try_into().expect("8 bytes"));
    let stored = u32::from_le_bytes(suffix[12..16].try_into().expect("4 bytes"));
    let expected_len = (header_len as u64).saturating_add(blob_len);
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
    let plugin_type =
        std::str::from_utf8(type_bytes).map_err(|_| StateError::BadPluginType { path: None })?;
    if plugin_type != expected_plugin_type {
        return Err(StateError::ForeignPlugin {
            path: None,
            found: plugin_type.to_owned(),
            expected: expected_plugin_type.to_owned(),
        });
    }
    Ok(StateFile {
        plugin_type: plugin_type.to_owned(),
        plugin_version,
        blob: blob.to_vec(),
    })
}

/// Reads and checks the state file at `path`, saved by `expected_plugin_type`.
///
/// # Errors
///
/// [`StateError::Io`] when the file cannot be read (see
/// [`StateError::is_not_found`]), or any error of [`decode`], naming `path`.
pub fn read_state(path: &Path, expected_plugin_type: &str) -> Result<StateFile, StateError> {
    let bytes = fs::read(path).map_err(|source| StateError::Io {
        path: path.to_path_buf(),
        action: "read",
        source,
    })?;
    decode(&bytes, expected_plugin_type).map_err(|e| e.with_path(path))
}

/// Atomically replaces the state file at `path` with `blob`.
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
    blob: &[u8],
) -> Result<(), StateError> {
    let bytes = encode(plugin_type, plugin_version, blob)?;
    let io_error = |path: &Path, action: &'static str| {
        let path = path.to_path_buf();
        move |source| StateError::Io {
            path,
            action,
            source,
        }
    };
    let file_name = path.file_name().ok_or_else(|| {
        io_error(path, "write a state file at")(io::Error::new(
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
        .write_all(&bytes)
        .map_err(io_error(&tmp_path, "write"))
        .and_then(|()| tmp.sync_all().map_err(io_error(&tmp_path, "flush")))
        .and_then(|()| {
            drop(tmp);
            fs::rename(&tmp_path, path).map_err(io_error(path, "rename the new state over"))
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

    fn sample() -> Vec<u8> {
        encode(TYPE, VERSION, b"node table and usage").unwrap()
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
        let decoded = decode(&sample(), TYPE).unwrap();
        assert_eq!(
            decoded,
            StateFile {
                plugin_type: TYPE.into(),
                plugin_version: VERSION,
                blob: b"node table and usage".to_vec(),
            }
        );
        let empty = decode(&encode("task/none", 1, &[]).unwrap(), "task/none").unwrap();
        assert!(empty.blob.is_empty());
    }

    #[test]
    fn header_layout_is_as_documented() {
        let bytes = encode("t", 0x0102_0304, &[0xaa, 0xbb]).unwrap();
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(&bytes[8..10], &[1, 0]);
        assert_eq!(&bytes[10..12], &[1, 0]);
        assert_eq!(bytes[12], b't');
        assert_eq!(&bytes[13..17], &[4, 3, 2, 1]);
        assert_eq!(&bytes[17..25], &[2, 0, 0, 0, 0, 0, 0, 0]);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[..25]);
        crc.update(&[0xaa, 0xbb]);
        assert_eq!(&bytes[25..29], &crc.finalize().to_le_bytes());
        assert_eq!(&bytes[29..], &[0xaa, 0xbb]);
    }

    #[test]
    fn every_truncation_is_refused() {
        let bytes = sample();
        for len in 0..bytes.len() {
            match decode(&bytes[..len], TYPE) {
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
                    decode(&damaged, TYPE).is_err(),
                    "byte {pos} xor {flip:#x} was accepted"
                );
            }
        }
    }

    #[test]
    fn each_kind_of_damage_gets_its_own_error() {
        let bytes = sample();
        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(matches!(
            decode(&magic, TYPE),
            Err(StateError::BadMagic { .. })
        ));
        assert!(matches!(
            decode(b"#!/bin/sh", TYPE),
            Err(StateError::BadMagic { .. })
        ));

        let mut format = bytes.clone();
        format[8] = 2;
        assert!(matches!(
            decode(&format, TYPE),
            Err(StateError::UnsupportedFormat { version: 2, .. })
        ));

        let mut blob = bytes.clone();
        *blob.last_mut().unwrap() ^= 1;
        assert!(matches!(
            decode(&blob, TYPE),
            Err(StateError::Checksum { .. })
        ));

        let mut trailing = bytes.clone();
        trailing.extend_from_slice(b"xyz");
        assert!(matches!(
            decode(&trailing, TYPE),
            Err(StateError::TrailingBytes { extra: 3, .. })
        ));

        let mut huge = bytes.clone();
        let len_at = PREFIX_LEN + TYPE.len() + 4;
        huge[len_at..len_at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(
            decode(&huge, TYPE),
            Err(StateError::Truncated {
                expected: u64::MAX,
                ..
            })
        ));
    }

    #[test]
    fn invalid_utf8_plugin_type_is_refused() {
        let mut bytes = encode("ab", 1, b"x").unwrap();
        bytes[PREFIX_LEN] = 0xff;
        let crc_at = PREFIX_LEN + 2 + 12;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[..crc_at]);
        crc.update(b"x");
        bytes[crc_at..crc_at + 4].copy_from_slice(&crc.finalize().to_le_bytes());
        assert!(matches!(
            decode(&bytes, "ab"),
            Err(StateError::BadPluginType { .. })
        ));
    }

    #[test]
    fn foreign_plugin_is_refused() {
        let err = decode(&sample(), "select/linear").unwrap_err();
        assert_eq!(
            err.to_string(),
            "state file belongs to plugin `select/cons_tres`, not `select/linear`"
        );
    }

    #[test]
    fn overlong_plugin_type_is_refused() {
        let long = "x".repeat(70_000);
        assert!(matches!(
            encode(&long, 1, b""),
            Err(StateError::PluginTypeTooLong { len: 70_000 })
        ));
    }

    #[test]
    fn write_then_read_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("select.state");
        write_state(&path, TYPE, 3, b"first").unwrap();
        write_state(&path, TYPE, 4, b"second").unwrap();
        assert_eq!(dir_entries(dir.path()), ["select.state"]);
        let state = read_state(&path, TYPE).unwrap();
        assert_eq!(
            (state.plugin_version, state.blob.as_slice()),
            (4, &b"second"[..])
        );
    }

    #[test]
    fn read_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prio.state");
        let missing = read_state(&path, "priority/basic").unwrap_err();
        assert!(missing.is_not_found());
        assert!(missing.to_string().starts_with(&path.display().to_string()));

        write_state(&path, TYPE, 1, b"x").unwrap();
        let foreign = read_state(&path, "priority/basic").unwrap_err();
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
        let err = write_state(&path, TYPE, 1, b"x").unwrap_err();
        assert!(matches!(err, StateError::Io { .. }), "{err}");
        assert!(!path.exists());
        assert_eq!(dir_entries(dir.path()), Vec::<String>::new());
    }

    #[test]
    fn failed_write_keeps_the_old_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("select.state");
        write_state(&path, TYPE, 1, b"good").unwrap();

        let long = "x".repeat(70_000);
        assert!(write_state(&path, &long, 2, b"bad").is_err());
        assert_eq!(read_state(&path, TYPE).unwrap().blob, b"good");
        assert_eq!(dir_entries(dir.path()), ["select.state"]);
    }

    #[test]
    fn failed_rename_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("select.state");
        write_state(&good, TYPE, 1, b"good").unwrap();
        let blocker = dir.path().join("busy.state");
        fs::create_dir(&blocker).unwrap();
        fs::write(blocker.join("inside"), b"keep").unwrap();

        let err = write_state(&blocker, TYPE, 2, b"new").unwrap_err();
        assert!(err.to_string().contains("cannot rename"), "{err}");
        assert_eq!(dir_entries(dir.path()), ["busy.state", "select.state"]);
        assert_eq!(read_state(&good, TYPE).unwrap().blob, b"good");
    }

    #[test]
    fn path_without_a_file_name_is_refused() {
        let err = write_state(Path::new(""), TYPE, 1, b"x").unwrap_err();
        assert!(err.to_string().contains("names no file"), "{err}");
    }
}
