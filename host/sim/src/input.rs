//! What the trace readers share: the error type, the jobs as read (before
//! the replay choices of [`crate::hazards`] are applied) and file opening.

use std::fmt;
use std::io::{BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use crate::workload::{Recorded, TraceStatus};

/// A trace that cannot be read: the file, the line and (where one is to
/// blame) the field.
///
/// `line` is 1-based; 0 means the problem is not about one line (the file
/// cannot be opened, a required column is missing from the header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub source: String,
    pub line: usize,
    /// The field as the format names it (`field 4 (run time)`, `Submit`).
    pub field: Option<String>,
    pub message: String,
}

impl TraceError {
    pub(crate) fn new(source: &str, line: usize, message: impl Into<String>) -> TraceError {
        TraceError {
            source: source.to_owned(),
            line,
            field: None,
            message: message.into(),
        }
    }

    pub(crate) fn field(
        source: &str,
        line: usize,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> TraceError {
        TraceError {
            source: source.to_owned(),
            line,
            field: Some(field.into()),
            message: message.into(),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for TraceError {}

/// The latest time a trace may name, in seconds since the epoch (the end of
/// year 9999), and the longest submit offset, run time or estimate: the
/// engine adds a start, a submit offset and durations, and with every term
/// at most this the sums stay far inside `i64`.
pub const HORIZON_SECONDS: i64 = 253_402_300_799;

/// One job as a reader found it, before the replay choices.
///
/// Unlike [`crate::workload::TraceJob`], anything the trace may leave out
/// is optional here, and [`crate::hazards::apply`] decides what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct RawJob {
    pub id: u32,
    /// Seconds from the trace's time zero.
    pub submit: i64,
    /// Seconds; none when the trace does not know.
    pub run_time: Option<i64>,
    /// Seconds; none when the trace has no estimate.
    pub time_limit: Option<i64>,
    /// The trace gave its "unlimited" value as the estimate.
    pub unlimited_limit: bool,
    pub nodes: Option<u32>,
    /// Processors; none when the trace gives neither requested nor
    /// allocated processors.
    pub cpus: Option<u32>,
    pub memory_mb_per_node: Option<u64>,
    pub gpus: u32,
    pub user: u32,
    pub group: u32,
    pub account: Option<String>,
    pub partition: Option<String>,
    pub status: TraceStatus,
    /// The job ran in the trace (it had a start time or a positive run time).
    pub started: bool,
    /// When (seconds from the trace's time zero, like `submit`) and where
    /// it started, when the trace says.
    pub recorded: Option<Recorded>,
}

/// The jobs of a trace as read, in file order, with what the header said.
#[derive(Debug, Clone, Default)]
pub struct RawTrace {
    pub source: String,
    pub start_time: i64,
    pub max_nodes: Option<u32>,
    pub max_procs: Option<u32>,
    pub jobs: Vec<RawJob>,
    /// What the reader decided on its own (records skipped and why).
    pub notes: Vec<String>,
}

/// gzip's magic number, the first two bytes of every gzip file.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a whole trace file, decompressing it when it is gzip (told by its
/// content, whatever its name: a `.swf` that is gzip, a `.gz` that is not).
///
/// # Errors
///
/// A [`TraceError`] at line 0 when the file cannot be opened or read, or
/// starts as gzip and is not valid gzip.
pub fn read_file(path: &Path) -> Result<Vec<u8>, TraceError> {
    let source = path.display().to_string();
    let raw = std::fs::read(path).map_err(|e| {
        let what = if path.exists() {
            "cannot read"
        } else {
            "cannot open"
        };
        TraceError::new(&source, 0, format!("{what}: {e}"))
    })?;
    if !raw.starts_with(&GZIP_MAGIC) {
        return Ok(raw);
    }
    let mut bytes = Vec::new();
    MultiGzDecoder::new(BufReader::new(raw.as_slice()))
        .read_to_end(&mut bytes)
        .map_err(|e| TraceError::new(&source, 0, format!("cannot decompress (gzip): {e}")))?;
    Ok(bytes)
}

/// The lines of `bytes`, each without its `\n` or `\r\n`, invalid UTF-8
/// replaced, numbered from 1; a UTF-8 byte-order mark before the first is
/// dropped.
pub(crate) fn lines(bytes: &[u8]) -> impl Iterator<Item = (usize, String)> + '_ {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let trimmed = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let empty = bytes.is_empty();
    trimmed
        .split(|&b| b == b'\n')
        .filter(move |_| !empty)
        .enumerate()
        .map(|(i, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            (i + 1, String::from_utf8_lossy(line).into_owned())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compression is told by content: a gzip file named `.swf` is read,
    /// a plain file named `.gz` too; a damaged gzip is an error at line 0.
    #[test]
    fn gzip_is_told_by_content_not_name() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"; Version: 2.2\n1 0\n").unwrap();
        let gz = gz.finish().unwrap();
        let named_swf = dir.path().join("trace.swf");
        std::fs::write(&named_swf, &gz).unwrap();
        assert_eq!(read_file(&named_swf).unwrap(), b"; Version: 2.2\n1 0\n");
        let named_gz = dir.path().join("plain.swf.gz");
        std::fs::write(&named_gz, b"1 0\n").unwrap();
        assert_eq!(read_file(&named_gz).unwrap(), b"1 0\n");
        let damaged = dir.path().join("damaged.swf");
        std::fs::write(&damaged, &gz[..gz.len() / 2]).unwrap();
        let e = read_file(&damaged).unwrap_err();
        assert!(e.message.starts_with("cannot decompress (gzip)"), "{e}");
        assert_eq!(e.line, 0);
    }

    /// A byte-order mark (some exports of `sacct` or spreadsheets write
    /// one) is not part of the first line.
    #[test]
    fn a_byte_order_mark_is_dropped() {
        let got: Vec<_> = lines(b"\xef\xbb\xbfJobID|Submit\n1|2\n").collect();
        assert_eq!(got[0], (1, "JobID|Submit".to_owned()));
    }

    #[test]
    fn lines_strip_crlf_and_number_from_one() {
        let got: Vec<_> = lines(b"a\r\nb\n\nc").collect();
        assert_eq!(
            got,
            vec![
                (1, "a".to_owned()),
                (2, "b".to_owned()),
                (3, String::new()),
                (4, "c".to_owned())
            ]
        );
        assert_eq!(lines(b"").count(), 0);
        assert_eq!(lines(b"x\n").count(), 1);
    }

    #[test]
    fn error_names_file_line_and_field() {
        let e = TraceError::field(
            "t.swf",
            7,
            "field 4 (run time)",
            "expected a number, found \"x\"",
        );
        assert_eq!(
            e.to_string(),
            "t.swf:7: field 4 (run time): expected a number, found \"x\""
        );
        assert_eq!(
            TraceError::new("t.swf", 0, "cannot open").to_string(),
            "t.swf: cannot open"
        );
    }
}
