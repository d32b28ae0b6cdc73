//! Recordings of a plugin's calls: every call a handle made (its function,
//! arguments, the answer or the failure, the fuel and time it took and the
//! clock the plugin saw), in a compact, versioned, checksummed file, for
//! `slurm-wasm replay` to run again against another build.
//!
//! # Format (version 1)
//!
//! A recording is one or more parts: `PATH`, then `PATH.1`, `PATH.2`, ...
//! Each part is
//!
//! * `SWASMREC` (8 bytes), the format version (`u16`, little-endian);
//! * the [`Header`]: its length and CRC-32 (`u32` each, little-endian),
//!   then its body;
//! * the calls, each as its length and CRC-32, then a [`CallRecord`].
//!
//! Bodies are [postcard](https://docs.rs/postcard) encodings of serde
//! values; arguments and answers are the contract's records as the host's
//! bindings define them (postcard keeps no field names: a recording is read
//! by a host of the same contract version, which the header names).
//!
//! # Bounds
//!
//! A part is closed once it holds [`RecordOptions::part_bytes`] and the
//! next part begins; after [`RecordOptions::max_parts`] parts the recording
//! stops (logged, and said by [`RecordingSummary::stopped`]). The oldest
//! part is never dropped to make room: a replay needs the calls that built
//! the plugin's world (`init`, the node table, the jobs), which are at the
//! start.
//!
//! # Failure modes
//!
//! Reading refuses, with [`RecordingError`] naming the part, the call and
//! the byte offset: a file that is not a recording, another format or
//! contract version, a header or call whose checksum fails, a part cut
//! short (a host that died mid-write leaves one: the calls before it are
//! intact, and [`read`] says how many), and parts that do not follow each
//! other.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::CallError;

/// The first bytes of every part.
pub const MAGIC: &[u8; 8] = b"SWASMREC";

/// The format version this host writes and reads.
pub const FORMAT_VERSION: u16 = 1;

/// Who made a recording part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The contract version of the host that wrote it
    /// ([`crate::CONTRACT_VERSION`]).
    pub contract: String,
    /// The plugin kind (`select`, `gres`, `priority`, `task`).
    pub kind: String,
    /// The recorded plugin's type (`select/cons_tres`).
    pub plugin_type: String,
    /// Its version as it described itself.
    pub plugin_version: u32,
    /// SHA-256 of its component's bytes, hex.
    pub component: String,
    /// This part's number, from 0.
    pub part: u32,
    /// The sequence number of its first call.
    pub first_seq: u64,
}

/// Why a recorded call failed, as much as a replay compares: the kind of
/// failure (and a plugin error's code), and the message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// What failed.
    pub kind: FailureKind,
    /// The host's message.
    pub message: String,
}

/// The kinds of [`CallError`], without their details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailureKind {
    /// The plugin returned a Slurm error with this code.
    Plugin(i32),
    /// Out of fuel.
    Fuel,
    /// Past its deadline.
    Deadline,
    /// Past its memory limit.
    Memory,
    /// Out of stack.
    Stack,
    /// A trap.
    Trap,
    /// An ungranted capability.
    Denied,
    /// An answer the host refused.
    Invalid,
    /// An instance that could not start.
    Start,
    /// A state blob over the limit.
    StateTooLarge,
    /// Called before `init`.
    NotInitialised,
    /// Out of service after faults.
    Disabled,
    /// A select wrapper's call failed in its inner plugin.
    Inner,
}

impl From<&CallError> for Failure {
    fn from(error: &CallError) -> Failure {
        let kind = match error {
            CallError::Plugin { code, .. } => FailureKind::Plugin(*code),
            CallError::Fuel { .. } => FailureKind::Fuel,
            CallError::Deadline { .. } => FailureKind::Deadline,
            CallError::Memory { .. } => FailureKind::Memory,
            CallError::Stack { .. } => FailureKind::Stack,
            CallError::Trap { .. } => FailureKind::Trap,
            CallError::Denied { .. } => FailureKind::Denied,
            CallError::Invalid { .. } => FailureKind::Invalid,
            CallError::Start { .. } => FailureKind::Start,
            CallError::StateTooLarge { .. } => FailureKind::StateTooLarge,
            CallError::NotInitialised { .. } => FailureKind::NotInitialised,
            CallError::Disabled { .. } => FailureKind::Disabled,
            CallError::Inner { .. } => FailureKind::Inner,
        };
        Failure {
            kind,
            message: error.to_string(),
        }
    }
}

/// One call as a handle made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// Its place among the plugin's calls, from 0.
    pub seq: u64,
    /// The contract function (`job-test`, `select-jobinfo.pack`).
    pub function: String,
    /// The plugin's clock when the call began (seconds since the epoch:
    /// virtual time in simulations).
    pub clock: i64,
    /// Fuel it used (0 when it never reached the plugin).
    pub fuel: u64,
    /// Wall time the host spent on it, microseconds.
    pub micros: u64,
    /// Its arguments, encoded as one tuple.
    pub args: Vec<u8>,
    /// The plugin's answer, encoded, or why there was none.
    pub outcome: Result<Vec<u8>, Failure>,
}

/// Where and how much to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOptions {
    /// The first part's path; later parts add `.1`, `.2`, ...
    pub path: PathBuf,
    /// A part is closed once it holds this many bytes (64 MiB by default).
    pub part_bytes: u64,
    /// The most parts written; the recording then stops (16 by default).
    pub max_parts: u32,
}

impl RecordOptions {
    /// Recording to `path` with the default bounds.
    pub fn new(path: impl Into<PathBuf>) -> RecordOptions {
        RecordOptions {
            path: path.into(),
            part_bytes: 64 << 20,
            max_parts: 16,
        }
    }
}

/// What a finished recording holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingSummary {
    /// The parts written, in order.
    pub parts: Vec<PathBuf>,
    /// Calls recorded.
    pub calls: u64,
    /// Bytes written over all parts.
    pub bytes: u64,
    /// Why recording stopped before the plugin's last call, if it did.
    pub stopped: Option<String>,
}

/// A recording could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The file system refused.
    #[error("{path}: {reason}")]
    Io {
        /// The part.
        path: PathBuf,
        /// What the system said.
        reason: String,
    },
    /// The file does not start as a recording does.
    #[error("{path}: not a slurm-wasm recording (no SWASMREC header)")]
    NotARecording {
        /// The part.
        path: PathBuf,
    },
    /// Another format version.
    #[error("{path}: recording format {found}; this host reads format {FORMAT_VERSION}")]
    Format {
        /// The part.
        path: PathBuf,
        /// The version it holds.
        found: u16,
    },
    /// Recorded by a host of another contract version: its records would
    /// not decode.
    #[error("{path}: recorded under contract {found}; this host has contract {expected}")]
    Contract {
        /// The part.
        path: PathBuf,
        /// The recording's contract version.
        found: String,
        /// This host's.
        expected: String,
    },
    /// A header or call that fails its checksum or does not decode.
    #[error("{path}: {what} at byte {offset} is corrupt: {reason}")]
    Corrupt {
        /// The part.
        path: PathBuf,
        /// `the header` or `call N` (N counted over the whole recording).
        what: String,
        /// Where it starts in the part.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A part that ends inside a call.
    #[error("{path}: cut short inside call {call} (byte {offset}); the {call} calls before it are intact")]
    Truncated {
        /// The part.
        path: PathBuf,
        /// The call's number over the whole recording (= the intact calls).
        call: u64,
        /// Where it starts in the part.
        offset: u64,
    },
    /// A part that does not follow the one before.
    #[error("{path}: {reason}")]
    Chain {
        /// The part.
        path: PathBuf,
        /// What does not follow.
        reason: String,
    },
}

/// A recording read back: the first part's header and every call.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The first part's header (later parts only add their number).
    pub header: Header,
    /// The calls, in order.
    pub calls: Vec<CallRecord>,
}

/// Decodes a recorded call's arguments or answer as `T` (the function's
/// argument tuple, or its answer type).
///
/// # Errors
///
/// The decoder's message, when the bytes are not a `T`.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    postcard::from_bytes(bytes).map_err(|e| e.to_string())
}

/// The path of part `part` of a recording at `path`.
pub fn part_path(path: &Path, part: u32) -> PathBuf {
    if part == 0 {
        return path.to_path_buf();
    }
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{part}"));
    PathBuf::from(name)
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RecordingError + '_ {
    move |e| RecordingError::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Writes a recording: parts, bounds and frames (see the module docs).
pub(crate) struct Recorder {
    options: RecordOptions,
    header: Header,
    out: Option<BufWriter<File>>,
    part_written: u64,
    summary: RecordingSummary,
}

impl Recorder {
    /// Creates the first part at `options.path` (replacing a file there)
    /// for calls of the plugin `header` names; `header.part` and
    /// `first_seq` are set here.
    pub fn create(options: RecordOptions, header: Header) -> Result<Recorder, RecordingError> {
        let mut recorder = Recorder {
            options,
            header,
            out: None,
            part_written: 0,
            summary: RecordingSummary {
                parts: Vec::new(),
                calls: 0,
                bytes: 0,
                stopped: None,
            },
        };
        recorder.open_part(0, 0)?;
        Ok(recorder)
    }

    fn open_part(&mut self, part: u32, first_seq: u64) -> Result<(), RecordingError> {
        let path = part_path(&self.options.path, part);
        let mut out = BufWriter::new(File::create(&path).map_err(io(&path))?);
        self.header.part = part;
        self.header.first_seq = first_seq;
        let body = postcard::to_allocvec(&self.header).expect("a header encodes");
        out.write_all(MAGIC).map_err(io(&path))?;
        out.write_all(&FORMAT_VERSION.to_le_bytes())
            .map_err(io(&path))?;
        write_frame(&mut out, &body).map_err(io(&path))?;
        self.part_written = (MAGIC.len() + 2 + 8 + body.len()) as u64;
        self.summary.bytes += self.part_written;
        self.summary.parts.push(path);
        self.out = Some(out);
        Ok(())
    }

    /// Appends `call`. Past the part bound a new part begins; past the last
    /// part, or when the file system refuses, recording stops (logged once;
    /// the plugin's calls go on).
    pub fn write(&mut self, call: &CallRecord) {
        if self.out.is_none() {
            return;
        }
        let body = postcard::to_allocvec(call).expect("a call record encodes");
        if self.part_written > 0
            && self.part_written + 8 + body.len() as u64 > self.options.part_bytes
        {
            let next = self.header.part + 1;
            if next >= self.options.max_parts {
                self.stop(format!(
                    "{} parts of {} bytes are full (max_parts)",
                    self.options.max_parts, self.options.part_bytes
                ));
                return;
            }
            if let Err(e) = self
                .close_part()
                .and_then(|_| self.open_part(next, call.seq))
            {
                self.stop(e.to_string());
                return;
            }
        }
        let out = self.out.as_mut().expect("a part is open");
        match write_frame(out, &body) {
            Ok(()) => {
                self.part_written += 8 + body.len() as u64;
                self.summary.bytes += 8 + body.len() as u64;
                self.summary.calls += 1;
            }
            Err(e) => self.stop(format!("writing call {}: {e}", call.seq)),
        }
    }

    fn close_part(&mut self) -> Result<(), RecordingError> {
        if let Some(mut out) = self.out.take() {
            let path = self.summary.parts.last().expect("an open part").clone();
            out.flush().map_err(io(&path))?;
            out.get_ref().sync_data().map_err(io(&path))?;
        }
        Ok(())
    }

    fn stop(&mut self, reason: String) {
        tracing::warn!(
            recording = %self.options.path.display(),
            "recording of {} stopped after {} calls: {reason}",
            self.header.plugin_type,
            self.summary.calls
        );
        let _ = self.close_part();
        self.out = None;
        self.summary.stopped = Some(reason);
    }

    /// Closes the open part and says what was written.
    pub fn finish(mut self) -> Result<RecordingSummary, RecordingError> {
        self.close_part()?;
        Ok(std::mem::replace(
            &mut self.summary,
            RecordingSummary {
                parts: Vec::new(),
                calls: 0,
                bytes: 0,
                stopped: None,
            },
        ))
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.close_part();
    }
}

fn write_frame(out: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    out.write_all(&(body.len() as u32).to_le_bytes())?;
    out.write_all(&crc32fast::hash(body).to_le_bytes())?;
    out.write_all(body)
}

/// Reads the recording whose first part is `path`, and every part after
/// it that exists. See the module docs for what is refused.
pub fn read(path: &Path) -> Result<Recording, RecordingError> {
    let mut first: Option<Header> = None;
    let mut calls: Vec<CallRecord> = Vec::new();
    for part in 0u32.. {
        let part_path = part_path(path, part);
        if part > 0 && !part_path.exists() {
            break;
        }
        let bytes = std::fs::read(&part_path).map_err(io(&part_path))?;
        let header = read_part(&part_path, &bytes, part, &mut calls)?;
        match &first {
            None => first = Some(header),
            Some(first) => {
                if (&first.kind, &first.plugin_type, &first.component)
                    != (&header.kind, &header.plugin_type, &header.component)
                {
                    return Err(RecordingError::Chain {
                        path: part_path,
                        reason: format!(
                            "records {} ({}) where part 0 records {} ({})",
                            header.plugin_type,
                            header.component,
                            first.plugin_type,
                            first.component
                        ),
                    });
                }
            }
        }
    }
    Ok(Recording {
        header: first.expect("part 0 was read"),
        calls,
    })
}

/// Reads part `part` into `calls`, which holds the earlier parts' calls.
fn read_part(
    path: &Path,
    bytes: &[u8],
    part: u32,
    calls: &mut Vec<CallRecord>,
) -> Result<Header, RecordingError> {
    let before = calls.len() as u64;
    let mut reader = bytes;
    let mut magic = [0u8; 8];
    let mut version = [0u8; 2];
    if reader.read_exact(&mut magic).is_err() || &magic != MAGIC {
        return Err(RecordingError::NotARecording {
            path: path.to_path_buf(),
        });
    }
    if reader.read_exact(&mut version).is_err() {
        return Err(RecordingError::NotARecording {
            path: path.to_path_buf(),
        });
    }
    let found = u16::from_le_bytes(version);
    if found != FORMAT_VERSION {
        return Err(RecordingError::Format {
            path: path.to_path_buf(),
            found,
        });
    }
    let mut offset = 10u64;
    let corrupt = |what: String, offset: u64, reason: String| RecordingError::Corrupt {
        path: path.to_path_buf(),
        what,
        offset,
        reason,
    };
    let header: Header = match frame(&mut reader) {
        Frame::Whole(body) => {
            let header: Header = postcard::from_bytes(body)
                .map_err(|e| corrupt("the header".into(), offset, e.to_string()))?;
            offset += 8 + body.len() as u64;
            header
        }
        Frame::Checksum => {
            return Err(corrupt(
                "the header".into(),
                offset,
                "checksum mismatch".into(),
            ))
        }
        Frame::Short | Frame::End => {
            return Err(corrupt("the header".into(), offset, "cut short".into()))
        }
    };
    if header.contract != crate::CONTRACT_VERSION {
        return Err(RecordingError::Contract {
            path: path.to_path_buf(),
            found: header.contract,
            expected: crate::CONTRACT_VERSION.into(),
        });
    }
    if header.part != part {
        return Err(RecordingError::Chain {
            path: path.to_path_buf(),
            reason: format!("holds part {} where part {part} belongs", header.part),
        });
    }
    if header.first_seq != before {
        return Err(RecordingError::Chain {
            path: path.to_path_buf(),
            reason: format!(
                "starts at call {} where the parts before end at call {before}",
                header.first_seq
            ),
        });
    }
    loop {
        let number = calls.len() as u64;
        match frame(&mut reader) {
            Frame::End => return Ok(header),
            Frame::Short => {
                return Err(RecordingError::Truncated {
                    path: path.to_path_buf(),
                    call: number,
                    offset,
                })
            }
            Frame::Checksum => {
                return Err(corrupt(
                    format!("call {number}"),
                    offset,
                    "checksum mismatch".into(),
                ))
            }
            Frame::Whole(body) => {
                let call: CallRecord = postcard::from_bytes(body)
                    .map_err(|e| corrupt(format!("call {number}"), offset, e.to_string()))?;
                if call.seq != number {
                    return Err(corrupt(
                        format!("call {number}"),
                        offset,
                        format!("numbered {}", call.seq),
                    ));
                }
                offset += 8 + body.len() as u64;
                calls.push(call);
            }
        }
    }
}

enum Frame<'a> {
    Whole(&'a [u8]),
    Checksum,
    Short,
    End,
}

/// The next frame of `reader`, which it advances past it.
fn frame<'a>(reader: &mut &'a [u8]) -> Frame<'a> {
    if reader.is_empty() {
        return Frame::End;
    }
    if reader.len() < 8 {
        return Frame::Short;
    }
    let len = u32::from_le_bytes(reader[0..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(reader[4..8].try_into().expect("4 bytes"));
    if reader.len() - 8 < len {
        return Frame::Short;
    }
    let body = &reader[8..8 + len];
    *reader = &reader[8 + len..];
    if crc32fast::hash(body) != crc {
        return Frame::Checksum;
    }
    Frame::Whole(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            contract: crate::CONTRACT_VERSION.into(),
            kind: "priority".into(),
            plugin_type: "priority/basic".into(),
            plugin_version: 1,
            component: "00".into(),
            part: 0,
            first_seq: 0,
        }
    }

    fn call(seq: u64) -> CallRecord {
        CallRecord {
            seq,
            function: "set".into(),
            clock: 1_700_000_000 + seq as i64,
            fuel: 1000 + seq,
            micros: 3,
            args: postcard::to_allocvec(&(seq as u32,)).unwrap(),
            outcome: if seq % 5 == 4 {
                Err(Failure {
                    kind: FailureKind::Plugin(2001),
                    message: "no".into(),
                })
            } else {
                Ok(postcard::to_allocvec(&(seq as u32 * 7)).unwrap())
            },
        }
    }

    fn record(dir: &Path, calls: u64, part_bytes: u64, max_parts: u32) -> RecordingSummary {
        let mut recorder = Recorder::create(
            RecordOptions {
                path: dir.join("rec"),
                part_bytes,
                max_parts,
            },
            header(),
        )
        .unwrap();
        for seq in 0..calls {
            recorder.write(&call(seq));
        }
        recorder.finish().unwrap()
    }

    #[test]
    fn calls_come_back_across_parts() {
        let dir = tempfile::tempdir().unwrap();
        let summary = record(dir.path(), 200, 1024, 16);
        assert!(summary.parts.len() > 3, "{summary:?}");
        assert_eq!(summary.calls, 200);
        assert_eq!(summary.stopped, None);
        let total: u64 = summary
            .parts
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        assert_eq!(total, summary.bytes);
        for part in &summary.parts {
            assert!(std::fs::metadata(part).unwrap().len() <= 1024);
        }
        let recording = read(&dir.path().join("rec")).unwrap();
        assert_eq!(recording.header, header());
        assert_eq!(recording.calls, (0..200).map(call).collect::<Vec<_>>());
    }

    #[test]
    fn the_last_part_full_stops_the_recording_and_keeps_the_beginning() {
        let dir = tempfile::tempdir().unwrap();
        let summary = record(dir.path(), 500, 1024, 3);
        assert_eq!(summary.parts.len(), 3);
        assert!(summary.stopped.as_deref().unwrap().contains("max_parts"));
        let recording = read(&dir.path().join("rec")).unwrap();
        assert_eq!(recording.calls.len() as u64, summary.calls);
        assert_eq!(recording.calls[0], call(0));
    }

    #[test]
    fn damage_is_refused_with_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path(), 10, 1 << 20, 1);
        let path = dir.path().join("rec");
        let good = std::fs::read(&path).unwrap();

        std::fs::write(&path, &good[..good.len() - 3]).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("cut short inside call 9") && e.contains("9 calls before it are intact"),
            "{e}"
        );

        let mut flipped = good.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0xff;
        std::fs::write(&path, &flipped).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("call 9 at byte") && e.contains("checksum"),
            "{e}"
        );

        std::fs::write(&path, b"#!/bin/sh\necho hi\n").unwrap();
        assert!(read(&path)
            .unwrap_err()
            .to_string()
            .contains("not a slurm-wasm recording"));

        let mut other = good.clone();
        other[8] = 9;
        std::fs::write(&path, &other).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("recording format 9"), "{e}");
    }

    #[test]
    fn another_contract_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec");
        let mut h = header();
        h.contract = "0.0.9".into();
        Recorder::create(RecordOptions::new(&path), h)
            .unwrap()
            .finish()
            .unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("recorded under contract 0.0.9"), "{e}");
    }

    #[test]
    fn a_missing_middle_part_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let summary = record(dir.path(), 200, 1024, 16);
        // Part 2 replaced by part 3: the calls do not follow.
        std::fs::copy(&summary.parts[3], &summary.parts[2]).unwrap();
        let e = read(&dir.path().join("rec")).unwrap_err().to_string();
        assert!(e.contains("holds part 3 where part 2 belongs"), "{e}");
    }
}
