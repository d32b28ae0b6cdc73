//! Reader for the Standard Workload Format (SWF, version 2.2) of the
//! Parallel Workloads Archive.
//!
//! One job per line, at least 18 whitespace-separated numeric fields (tabs
//! or runs of spaces; more columns are ignored), `-1` for unknown. Lines
//! whose first non-blank character is `;` are comments; those of the form
//! `; Key: value` (padded or not) are header fields, of which the reader
//! uses `MaxNodes`, `MaxProcs` and `UnixStartTime`. Blank lines, CRLF
//! endings and a missing `Version` line are accepted; a `.gz` file is
//! decompressed first ([`read_path`]).
//!
//! What each job becomes:
//!
//! - processors: field 8 (requested), else field 5 (allocated) when the
//!   request is `-1`; none when both are `-1` (the replay skips such jobs);
//! - run time: field 4; time estimate: field 9, where `-1` and values of
//!   2147483647 or more ("unlimited" in several logs) mean none;
//! - memory: field 10 (KB per processor) times the processors the job has
//!   on one node (its processors, at most `MaxProcs / MaxNodes`), in MB
//!   rounded up; none when field 10 is `-1` or the header lacks `MaxNodes`;
//! - status: field 11 (1 completed, 0 failed, 5 cancelled, anything else
//!   unknown); the job started when its run time is positive; then its
//!   wait (field 3, when known) gives its recorded start, for
//!   [`crate::agreement`];
//! - user, group: fields 12 and 13, 0 when unknown; SWF's queue and
//!   partition numbers (fields 15, 16) name no Slurm partition, so the
//!   job's partition is left empty (the cluster's default partition).
//!
//! Numbers may be written as decimals (`552.21`); times are rounded to the
//! nearest second. Jobs with a negative submit time are skipped with a
//! note.
//!
//! # Failure modes
//!
//! A [`TraceError`] naming the line and the field for a data line with
//! fewer than 18 fields, a field that is not a number or beyond the `i64`
//! range, a job number that is negative, fractional or too large, a
//! processor count, user or group beyond 2^32 - 1, a memory per node beyond
//! 2^64 KB, and a `MaxNodes`, `MaxProcs` or `UnixStartTime` header whose
//! value is not a whole number. No value is wrapped or clamped.

use std::path::Path;

use crate::hazards::{self, ReplayOptions};
use crate::input::{self, RawJob, RawTrace, TraceError, HORIZON_SECONDS};
use crate::workload::{Recorded, TraceStatus, Workload};

/// SWF's field names, in order (fields 1 to 18).
const FIELDS: [&str; 18] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "preceding job",
    "think time",
];

/// Requested times at or above this mean "no limit" (`2^31 - 1` in logs
/// converted from schedulers that store INT_MAX for unlimited).
const UNLIMITED: i64 = 2_147_483_647;

/// Reads the SWF file at `path` (gzip when its name ends in `.gz`) and
/// applies `options`.
///
/// # Errors
///
/// A [`TraceError`] when the file cannot be read, or for any problem in
/// the [module documentation](self).
pub fn read_path(path: &Path, options: &ReplayOptions) -> Result<Workload, TraceError> {
    let bytes = input::read_file(path)?;
    let trace = parse(&bytes, &path.display().to_string())?;
    Ok(hazards::apply(trace, options))
}

/// The header of the SWF file at `path` (`MaxNodes`, `MaxProcs`,
/// `UnixStartTime`), read up to the first job line; no jobs.
///
/// # Errors
///
/// A [`TraceError`] when the file cannot be read or a header value is
/// malformed.
pub fn read_header(path: &Path) -> Result<RawTrace, TraceError> {
    let bytes = input::read_file(path)?;
    let source = path.display().to_string();
    let mut trace = RawTrace {
        source: source.clone(),
        ..RawTrace::default()
    };
    for (number, line) in input::lines(&bytes) {
        let text = line.trim();
        match text.strip_prefix(';') {
            Some(comment) => header(comment, &source, number, &mut trace)?,
            None if text.is_empty() => {}
            None => break,
        }
    }
    Ok(trace)
}

/// Parses SWF text; `source` names it in errors and in the workload.
///
/// # Errors
///
/// A [`TraceError`] for any problem in the [module documentation](self).
pub fn parse(bytes: &[u8], source: &str) -> Result<RawTrace, TraceError> {
    let mut trace = RawTrace {
        source: source.to_owned(),
        ..RawTrace::default()
    };
    let mut no_submit = 0usize;
    let mut allocated_for_requested = 0usize;
    for (number, line) in input::lines(bytes) {
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if let Some(comment) = text.strip_prefix(';') {
            header(comment, source, number, &mut trace)?;
            continue;
        }
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() < FIELDS.len() {
            return Err(TraceError::new(
                source,
                number,
                format!(
                    "expected {} whitespace-separated fields, found {}",
                    FIELDS.len(),
                    fields.len()
                ),
            ));
        }
        let value = |i: usize| field(fields[i], i, source, number);
        let id = job_number(fields[0], source, number)?;
        let submit = value(1)?;
        if submit < 0 {
            no_submit += 1;
            continue;
        }
        let run_time = known(value(3)?);
        let started = run_time.is_some_and(|r| r > 0);
        let allocated = known(value(4)?);
        let requested = known(value(7)?);
        if requested.is_none() && allocated.is_some() {
            allocated_for_requested += 1;
        }
        let cpus = match (requested, allocated) {
            (Some(c), _) => Some(count(c, 7, source, number)?),
            (None, Some(c)) => Some(count(c, 4, source, number)?),
            (None, None) => None,
        };
        let requested_time = known(value(8)?);
        let unlimited_limit = requested_time.is_some_and(|t| t >= UNLIMITED);
        let memory_kb_per_cpu = known(value(9)?);
        let status = match value(10)? {
            1 => TraceStatus::Completed,
            0 => TraceStatus::Failed,
            5 => TraceStatus::Cancelled,
            _ => TraceStatus::Unknown,
        };
        // -1 (any negative) is an unknown user or group: 0.
        let id_or_zero = |i: usize| -> Result<u32, TraceError> {
            match value(i)? {
                v if v < 0 => Ok(0),
                v => count(v, i, source, number),
            }
        };
        trace.jobs.push(RawJob {
            id,
            submit,
            run_time,
            time_limit: requested_time.filter(|_| !unlimited_limit),
            unlimited_limit,
            nodes: None,
            cpus,
            memory_mb_per_node: match memory_kb_per_cpu.zip(cpus) {
                Some((kb, cpus)) => memory_per_node(kb, cpus, &trace).map_err(|message| {
                    TraceError::field(source, number, "field 10 (requested memory)", message)
                })?,
                None => None,
            },
            gpus: 0,
            user: id_or_zero(11)?,
            group: id_or_zero(12)?,
            account: None,
            partition: None,
            status,
            started,
            recorded: known(value(2)?).filter(|_| started).map(|wait| Recorded {
                start: submit.saturating_add(wait),
                nodes: None,
            }),
        });
    }
    if no_submit > 0 {
        trace
            .notes
            .push(format!("{no_submit} jobs without a submit time skipped"));
    }
    if allocated_for_requested > 0 {
        trace.notes.push(format!(
            "{allocated_for_requested} jobs without requested processors use their allocated processors"
        ));
    }
    Ok(trace)
}

/// A header comment (`comment` is the text after `;`).
fn header(
    comment: &str,
    source: &str,
    line: usize,
    trace: &mut RawTrace,
) -> Result<(), TraceError> {
    let Some((key, value)) = comment.split_once(':') else {
        return Ok(());
    };
    let key = key.trim();
    let slot = match key {
        "MaxNodes" | "MaxProcs" | "UnixStartTime" => key,
        _ => return Ok(()),
    };
    let token = value.split_whitespace().next().unwrap_or("");
    let number: i64 = token.parse().map_err(|_| {
        TraceError::field(
            source,
            line,
            format!("header {slot}"),
            format!("expected a whole number, found {token:?}"),
        )
    })?;
    let positive = || {
        u32::try_from(number)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                TraceError::field(
                    source,
                    line,
                    format!("header {slot}"),
                    format!("expected a positive count, found {number}"),
                )
            })
    };
    match slot {
        // -1 is SWF's "unknown", in the header as in the job fields.
        "MaxNodes" | "MaxProcs" if number == -1 => {}
        "MaxNodes" => trace.max_nodes = Some(positive()?),
        "MaxProcs" => trace.max_procs = Some(positive()?),
        _ if !(0..=HORIZON_SECONDS).contains(&number) => {
            return Err(TraceError::field(
                source,
                line,
                format!("header {slot}"),
                format!("expected a time from 0 to {HORIZON_SECONDS} (year 9999), found {number}"),
            ))
        }
        _ => trace.start_time = number,
    }
    Ok(())
}

/// Field `index` (0-based) as a whole number, decimals rounded.
fn field(text: &str, index: usize, source: &str, line: usize) -> Result<i64, TraceError> {
    let value: f64 = text.parse().map_err(|_| {
        TraceError::field(
            source,
            line,
            format!("field {} ({})", index + 1, FIELDS[index]),
            format!("expected a number, found {text:?}"),
        )
    })?;
    if !value.is_finite() {
        return Err(TraceError::field(
            source,
            line,
            format!("field {} ({})", index + 1, FIELDS[index]),
            format!("expected a finite number, found {text:?}"),
        ));
    }
    let rounded = value.round();
    // -2^63 and 2^63 as f64; `as` would saturate beyond them.
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&rounded) {
        return Err(TraceError::field(
            source,
            line,
            format!("field {} ({})", index + 1, FIELDS[index]),
            format!("expected a number within the i64 range, found {text:?}"),
        ));
    }
    Ok(rounded as i64)
}

/// Field `index` (0-based), known to be at least 0, as a `u32` count.
fn count(value: i64, index: usize, source: &str, line: usize) -> Result<u32, TraceError> {
    u32::try_from(value).map_err(|_| {
        TraceError::field(
            source,
            line,
            format!("field {} ({})", index + 1, FIELDS[index]),
            format!("{value} is more than {}", u32::MAX),
        )
    })
}

fn job_number(text: &str, source: &str, line: usize) -> Result<u32, TraceError> {
    let bad = |what: &str| {
        TraceError::field(
            source,
            line,
            "field 1 (job number)",
            format!("expected {what}, found {text:?}"),
        )
    };
    let value: f64 = text.parse().map_err(|_| bad("a number"))?;
    if value.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&value) {
        return Err(bad("a whole number from 0 to 4294967295"));
    }
    Ok(value as u32)
}

/// `-1` (any negative) means unknown.
fn known(value: i64) -> Option<i64> {
    (value >= 0).then_some(value)
}

/// MB per node of `kb_per_cpu` (at least 0) for a job of `cpus`; none
/// without `MaxProcs` and `MaxNodes`; an error beyond 2^64 KB.
fn memory_per_node(kb_per_cpu: i64, cpus: u32, trace: &RawTrace) -> Result<Option<u64>, String> {
    let (Some(procs), Some(nodes)) = (trace.max_procs, trace.max_nodes) else {
        return Ok(None);
    };
    let on_one_node = u64::from(cpus.min((procs / nodes).max(1)));
    let kb = u64::try_from(kb_per_cpu).unwrap_or(0);
    kb.checked_mul(on_one_node)
        .map(|kb| Some(kb.div_ceil(1024)))
        .ok_or_else(|| {
            format!(
                "{kb} KB for each of {on_one_node} processors on a node is more than {} KB",
                u64::MAX
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text.as_bytes(), "t.swf").unwrap_err().to_string()
    }

    const JOB: &str = "1 10 5 100 4 -1 -1 4 3600 -1 1 7 3 -1 1 1 -1 -1";

    #[test]
    fn header_comments_tabs_crlf_blank_lines_and_floats() {
        let text = format!(
            ";       Version: 2.2\r\n; MaxNodes: 120\r\n;   MaxProcs:\t240\r\n; UnixStartTime: 1027839845\r\n\r\n{JOB}\r\n  \t\r\n2\t20  0 552.6\t8 552.21 -1 -1 2147483647 512 5 8 3 -1 1 1 -1 -1 99 98\r\n"
        );
        let t = parse(text.as_bytes(), "t.swf").unwrap();
        assert_eq!(
            (t.max_nodes, t.max_procs, t.start_time),
            (Some(120), Some(240), 1027839845)
        );
        assert_eq!(t.jobs.len(), 2);
        let a = &t.jobs[0];
        assert_eq!(
            (a.id, a.submit, a.run_time, a.time_limit, a.cpus),
            (1, 10, Some(100), Some(3600), Some(4))
        );
        assert_eq!(
            (a.user, a.group, a.status, a.started),
            (7, 3, TraceStatus::Completed, true)
        );
        let b = &t.jobs[1];
        // 552.6 rounds to 553; requested processors -1 falls back to the 8
        // allocated; 2147483647 is "unlimited"; 512 KB/proc x min(8, 240/120 = 2)
        // procs on a node = 1024 KB = 1 MB.
        assert_eq!(
            (b.run_time, b.cpus, b.time_limit, b.unlimited_limit),
            (Some(553), Some(8), None, true)
        );
        assert_eq!(b.memory_mb_per_node, Some(1));
        assert_eq!(b.status, TraceStatus::Cancelled);
        assert_eq!(
            t.notes,
            vec!["1 jobs without requested processors use their allocated processors"]
        );
    }

    #[test]
    fn unknown_fields_and_negative_submit() {
        let t = parse(
            b"3 -1 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n4 0 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
            "t.swf",
        )
        .unwrap();
        assert_eq!(t.jobs.len(), 1);
        let j = &t.jobs[0];
        assert_eq!(
            (j.run_time, j.cpus, j.time_limit, j.status, j.started),
            (None, None, None, TraceStatus::Unknown, false)
        );
        assert_eq!(t.notes, vec!["1 jobs without a submit time skipped"]);
    }

    #[test]
    fn malformed_lines_name_line_and_field() {
        assert_eq!(
            err(&format!("; c\n{JOB}\n1 2 3\n")),
            "t.swf:3: expected 18 whitespace-separated fields, found 3"
        );
        assert_eq!(
            err("1 10 5 abc 4 -1 -1 4 3600 -1 1 7 3 -1 1 1 -1 -1\n"),
            "t.swf:1: field 4 (run time): expected a number, found \"abc\""
        );
        assert_eq!(
            err("\n\n1 10 5 1 4 -1 -1 4 inf -1 1 7 3 -1 1 1 -1 -1\n"),
            "t.swf:3: field 9 (requested time): expected a finite number, found \"inf\""
        );
        assert_eq!(
            err("1.5 10 5 1 4 -1 -1 4 1 -1 1 7 3 -1 1 1 -1 -1\n"),
            "t.swf:1: field 1 (job number): expected a whole number from 0 to 4294967295, found \"1.5\""
        );
        assert_eq!(
            err("-3 10 5 1 4 -1 -1 4 1 -1 1 7 3 -1 1 1 -1 -1\n"),
            "t.swf:1: field 1 (job number): expected a whole number from 0 to 4294967295, found \"-3\""
        );
        assert_eq!(
            err("x 10 5 1 4 -1 -1 4 1 -1 1 7 3 -1 1 1 -1 -1\n"),
            "t.swf:1: field 1 (job number): expected a number, found \"x\""
        );
        assert_eq!(
            err("; MaxProcs: lots\n"),
            "t.swf:1: header MaxProcs: expected a whole number, found \"lots\""
        );
        assert_eq!(
            err(";\n; MaxNodes: 0\n"),
            "t.swf:2: header MaxNodes: expected a positive count, found 0"
        );
        // -1 is SWF's "unknown" (issue 34: a header `MaxNodes: -1` beside a
        // slurm.conf was an error): the count is left out.
        let t = parse(b"; MaxNodes: -1\n; MaxProcs: 64\n", "t.swf").expect("parsed");
        assert_eq!((t.max_nodes, t.max_procs), (None, Some(64)));
        assert_eq!(
            err("; UnixStartTime:\n"),
            "t.swf:1: header UnixStartTime: expected a whole number, found \"\""
        );
        // Issue 26, class 7: a start the engine's sums could not hold.
        assert_eq!(
            err("; UnixStartTime: 9223372036854775807\n"),
            "t.swf:1: header UnixStartTime: expected a time from 0 to 253402300799 (year 9999), found 9223372036854775807"
        );
    }

    // Issue 26, class 7: numbers beyond their field's range were clamped
    // (a processor count of 2^40 became 2^32 - 1, a user of 2^32 became 0,
    // 1e300 seconds became i64::MAX); each is now an error naming the field.
    #[test]
    fn numbers_beyond_their_range_are_errors() {
        let job = |field: usize, value: &str| {
            let mut fields: Vec<&str> = JOB.split(' ').collect();
            fields[field - 1] = value;
            err(&format!(
                "; MaxNodes: 1\n; MaxProcs: 4\n{}\n",
                fields.join(" ")
            ))
        };
        assert_eq!(
            job(4, "1e300"),
            "t.swf:3: field 4 (run time): expected a number within the i64 range, found \"1e300\""
        );
        assert_eq!(
            job(8, "1099511627776"),
            "t.swf:3: field 8 (requested processors): 1099511627776 is more than 4294967295"
        );
        assert_eq!(
            job(12, "4294967296"),
            "t.swf:3: field 12 (user): 4294967296 is more than 4294967295"
        );
        assert_eq!(
            job(10, "9223372036854774784"),
            "t.swf:3: field 10 (requested memory): 9223372036854774784 KB for each of 4 \
             processors on a node is more than 18446744073709551615 KB"
        );
    }

    #[test]
    fn other_header_comments_are_ignored() {
        let t = parse(
            b"; Note: uses MAUI scheduler\n; Partition:  1 DEFAULT\n;\n",
            "t.swf",
        )
        .unwrap();
        assert!(t.jobs.is_empty());
        assert_eq!((t.max_nodes, t.max_procs), (None, None));
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = parse(&bytes, "p.swf");
        }

        #[test]
        fn never_panics_on_swf_like_text(text in "([;0-9 .\\-\\t:a-zA-Z]{0,60}\r?\n){0,8}") {
            let _ = parse(text.as_bytes(), "p.swf");
        }
    }
}
