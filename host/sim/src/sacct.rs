//! Reader for `sacct --parsable2` dumps: `|`-separated values under a
//! header line that names the columns, read by name so any column set and
//! order works (`-o` chooses them).
//!
//! # Records
//!
//! A value may hold a newline (a multi-line `SubmitLine`): a record goes on
//! over the following lines until it has the header's number of fields. A
//! value may hold a `|` (`JobName`, `SubmitLine`, `Constraints`, ...): a
//! record with more fields than the header gives its extra `|`s back to the
//! free-text columns ([`FREE_TEXT`]), choosing the split under which every
//! column of a known kind (times, numbers, durations, the state) still
//! reads as that kind; among equally good splits, the extra fields go to
//! the last free-text column of a run with no typed column between them.
//! A final record that ends with too few fields (a dump cut short) is
//! skipped with a note.
//!
//! # Jobs
//!
//! - job steps (`JobIDRaw` such as `123.batch`, `123.0`, `123.extern`) are
//!   skipped: the replay schedules jobs;
//! - id: `JobIDRaw` (else `JobID`); submit: `Submit` (required); the job
//!   started when `Start` is a time (not `Unknown`/`None`) and `NodeList`
//!   is not `None assigned` (Slurm sets `Start` to the cancel time of a job
//!   cancelled while pending);
//! - run time: `ElapsedRaw`, else `Elapsed`, else `End - Start`;
//! - time estimate: `TimelimitRaw` (minutes), else `Timelimit`
//!   (`[D-]HH:MM:SS`); `UNLIMITED` and `Partition_Limit` mean none;
//! - processors: `ReqCPUS`, else `cpu=` of `ReqTRES`, else `NCPUS`,
//!   else `AllocCPUS`; nodes: `ReqNodes` (the lower end of a range), else
//!   `node=` of `ReqTRES`, else `NNodes`;
//! - memory per node: `ReqMem` (`4000M`, `2800Mc` per CPU, `180000Mn` per
//!   node, units K/M/G/T), else `mem=` of `ReqTRES` divided by the nodes;
//! - GPUs: `gres/gpu=` of `ReqTRES` (else the sum of its `gres/gpu:<type>=`);
//! - status from `State`: `COMPLETED` completed; `CANCELLED` (also
//!   `CANCELLED by <uid>`) cancelled; `FAILED`, `TIMEOUT`, `NODE_FAIL`,
//!   `OUT_OF_MEMORY`, `BOOT_FAIL`, `DEADLINE`, `PREEMPTED` failed; anything
//!   else unknown;
//! - user and group: `UID`, `GID`; without those columns, the names in
//!   `User` and `Group` numbered 1, 2, ... in order of first appearance
//!   (said in a note), so that users stay apart for fair-share; else 0.
//!   `Account`, `Partition` (the first of a list) as written.
//!
//! Times (`2021-10-05T11:26:12`) are read as UTC: only differences matter
//! to the replay. The workload's time zero is the earliest submit time.
//!
//! # Failure modes
//!
//! A [`TraceError`] naming the line for: no header line; a header without
//! `JobIDRaw`/`JobID` or `Submit`; a record whose extra `|`s fit no
//! free-text column; a job id that is not a number; a `Submit` that is not a
//! time; a number, duration or memory size that does not read as one.

use std::collections::HashMap;
use std::path::Path;

use crate::hazards::{self, ReplayOptions};
use crate::input::{self, RawJob, RawTrace, TraceError};
use crate::workload::{TraceStatus, Workload};

/// Columns whose values are free text and may contain `|`.
pub const FREE_TEXT: &[&str] = &[
    "AdminComment",
    "Comment",
    "Constraints",
    "Container",
    "JobName",
    "StdErr",
    "StdIn",
    "StdOut",
    "SubmitLine",
    "SystemComment",
    "WorkDir",
];

/// Reads the dump at `path` (gzip when its name ends in `.gz`) and applies
/// `options`.
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

/// The kind of value a column holds, for telling where a stray `|` belongs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Free,
    Time,
    Number,
    Duration,
    State,
}

fn kind(column: &str) -> Kind {
    match column {
        c if FREE_TEXT.contains(&c) => Kind::Free,
        "Submit" | "Eligible" | "Start" | "End" => Kind::Time,
        "AllocCPUS" | "AllocNodes" | "NCPUS" | "NNodes" | "ReqCPUS" | "UID" | "GID"
        | "ElapsedRaw" | "CPUTimeRAW" | "Priority" | "QOSRAW" | "AssocID" | "DBIndex"
        | "ResvCPURAW" | "WCKeyID" | "ConsumedEnergyRaw" | "NTasks" | "TimelimitRaw" => {
            Kind::Number
        }
        "Elapsed" | "CPUTime" | "Timelimit" | "Suspended" | "Reserved" | "ResvCPU" | "TotalCPU"
        | "UserCPU" | "SystemCPU" => Kind::Duration,
        "State" => Kind::State,
        _ => Kind::Text,
    }
}

/// Whether `value` can be a value of a column of kind `kind`.
fn fits(kind: Kind, value: &str) -> bool {
    match kind {
        Kind::Text | Kind::Free => true,
        Kind::Time => value.is_empty() || no_time(value) || timestamp(value).is_some(),
        Kind::Number => {
            value.is_empty()
                || value.bytes().all(|b| b.is_ascii_digit())
                || value == "UNLIMITED"
                || value == "Partition_Limit"
        }
        Kind::Duration => {
            value.is_empty()
                || matches!(value, "UNLIMITED" | "Partition_Limit" | "INVALID")
                || duration(value).is_some()
        }
        Kind::State => {
            !value.is_empty()
                && value
                    .split_once(" by ")
                    .map_or(value, |(s, _)| s)
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_')
        }
    }
}

fn no_time(value: &str) -> bool {
    matches!(value, "Unknown" | "None")
}

/// Parses a dump; `source` names it in errors and in the workload.
///
/// # Errors
///
/// A [`TraceError`] for any problem in the [module documentation](self).
pub fn parse(bytes: &[u8], source: &str) -> Result<RawTrace, TraceError> {
    let mut lines = input::lines(bytes).skip_while(|(_, l)| l.trim().is_empty());
    let Some((header_line, header)) = lines.next() else {
        return Err(TraceError::new(
            source,
            0,
            "no header line (expected `JobIDRaw|Submit|...`)",
        ));
    };
    let columns: Vec<&str> = header.split('|').map(str::trim).collect();
    let index: HashMap<&str, usize> = columns.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    let id_column = ["JobIDRaw", "JobID"]
        .into_iter()
        .find(|c| index.contains_key(c));
    let (Some(id_column), true) = (id_column, index.contains_key("Submit")) else {
        return Err(TraceError::new(
            source,
            header_line,
            "the header needs the columns JobIDRaw (or JobID) and Submit",
        ));
    };
    let kinds: Vec<Kind> = columns.iter().map(|c| kind(c)).collect();
    let mut trace = RawTrace {
        source: source.to_owned(),
        ..RawTrace::default()
    };
    let mut steps = 0usize;
    let mut pending: Option<(usize, Vec<String>)> = None;
    // Ids given to `User` and `Group` names when the dump has no UID/GID.
    let by_name = |column: &str, id_column: &str| {
        (index.contains_key(column) && !index.contains_key(id_column)).then(HashMap::new)
    };
    let mut users: Option<HashMap<String, u32>> = by_name("User", "UID");
    let mut groups: Option<HashMap<String, u32>> = by_name("Group", "GID");
    for (number, line) in lines {
        let (start, mut fields) = match pending.take() {
            Some((start, mut fields)) => {
                let mut parts = line.split('|');
                if let Some(last) = fields.last_mut() {
                    last.push('\n');
                    last.push_str(parts.next().unwrap_or(""));
                }
                fields.extend(parts.map(str::to_owned));
                (start, fields)
            }
            None if line.trim().is_empty() => continue,
            None => (number, line.split('|').map(str::to_owned).collect()),
        };
        if fields.len() > columns.len() {
            match align(&fields, &kinds) {
                Some(aligned) => fields = aligned,
                // Not placeable yet: a value may go on over the next lines.
                None if number - start < MAX_RECORD_LINES => {
                    pending = Some((start, fields));
                    continue;
                }
                None => return Err(overlong(source, start, fields.len(), columns.len())),
            }
        } else if fields.len() < columns.len() {
            pending = Some((start, fields));
            continue;
        }
        let record = Record {
            fields: &fields,
            index: &index,
            source,
            line: start,
        };
        let id_text = record.get(id_column).unwrap_or("");
        if id_text.contains('.') {
            steps += 1;
            continue;
        }
        let mut job = record.job(id_column)?;
        if let Some(names) = &mut users {
            job.user = numbered(names, record.get("User").unwrap_or(""));
        }
        if let Some(names) = &mut groups {
            job.group = numbered(names, record.get("Group").unwrap_or(""));
        }
        trace.jobs.push(job);
    }
    for (names, column, id_column) in [(&users, "User", "UID"), (&groups, "Group", "GID")] {
        if let Some(names) = names.as_ref().filter(|n| !n.is_empty()) {
            trace.notes.push(format!(
                "no {id_column} column: the {} names of {column} numbered 1 to {} in order of first appearance",
                names.len(),
                names.len()
            ));
        }
    }
    if let Some((start, fields)) = pending {
        if fields.len() > columns.len() {
            return Err(overlong(source, start, fields.len(), columns.len()));
        }
        if fields.len() > 1 || !fields[0].trim().is_empty() {
            trace.notes.push(format!(
                "{source}:{start}: last record ends with {} of {} fields (dump cut short); skipped",
                fields.len(),
                columns.len()
            ));
        }
    }
    if steps > 0 {
        trace.notes.push(format!("{steps} job step rows skipped"));
    }
    let zero = trace.jobs.iter().map(|j| j.submit).min().unwrap_or(0);
    for job in &mut trace.jobs {
        job.submit -= zero;
    }
    trace.start_time = zero;
    Ok(trace)
}

/// The id of `name` in `names`: the next number (from 1) for a new one; 0
/// for an empty name (unknown).
fn numbered(names: &mut HashMap<String, u32>, name: &str) -> u32 {
    if name.is_empty() {
        return 0;
    }
    let next = u32::try_from(names.len() + 1).unwrap_or(u32::MAX);
    *names.entry(name.to_owned()).or_insert(next)
}

/// How many lines one record may span while its extra `|`s cannot be
/// placed, before the reader gives up on it.
const MAX_RECORD_LINES: usize = 100;

fn overlong(source: &str, line: usize, fields: usize, columns: usize) -> TraceError {
    TraceError::new(
        source,
        line,
        format!(
            "record has {fields} fields for {columns} columns and its extra `|`s fit no free-text column ({})",
            FREE_TEXT.join(", ")
        ),
    )
}

/// Gives the extra fields of an overlong record to free-text columns so
/// that every typed column fits; none when no split does. Among the splits
/// that fit, the one with the most non-empty typed values wins (an empty
/// number fits, but real dumps fill them); ties go to the split that gives
/// the extras to later columns.
fn align(fields: &[String], kinds: &[Kind]) -> Option<Vec<String>> {
    let mut memo = vec![None; (kinds.len() + 1) * (fields.len() + 1)];
    best(fields, kinds, 0, 0, &mut memo)?;
    let mut out = Vec::with_capacity(kinds.len());
    let (mut column, mut at) = (0, 0);
    while column < kinds.len() {
        let width = match kinds[column] {
            Kind::Free => {
                let target = best(fields, kinds, column, at, &mut memo)?;
                (1..=fields.len() - at)
                    .find(|w| best(fields, kinds, column + 1, at + w, &mut memo) == Some(target))?
            }
            _ => 1,
        };
        out.push(fields[at..at + width].join("|"));
        column += 1;
        at += width;
    }
    Some(out)
}

/// The best score of placing `kinds[column..]` on exactly `fields[at..]`
/// (none when impossible), memoised on `(column, at)`.
fn best(
    fields: &[String],
    kinds: &[Kind],
    column: usize,
    at: usize,
    memo: &mut [Option<Option<usize>>],
) -> Option<usize> {
    let key = column * (fields.len() + 1) + at;
    if let Some(known) = memo[key] {
        return known;
    }
    let left_fields = fields.len() - at;
    let left_columns = kinds.len() - column;
    let result = if left_columns == 0 {
        (left_fields == 0).then_some(0)
    } else if left_fields < left_columns {
        None
    } else if kinds[column] == Kind::Free {
        (1..=left_fields - left_columns + 1)
            .filter_map(|w| best(fields, kinds, column + 1, at + w, memo))
            .max()
    } else if fits(kinds[column], &fields[at]) {
        let here = usize::from(kinds[column] != Kind::Text && !fields[at].trim().is_empty());
        best(fields, kinds, column + 1, at + 1, memo).map(|rest| rest + here)
    } else {
        None
    };
    memo[key] = Some(result);
    result
}

struct Record<'a> {
    fields: &'a [String],
    index: &'a HashMap<&'a str, usize>,
    source: &'a str,
    line: usize,
}

impl Record<'_> {
    /// The trimmed value of `column`, none when the column is absent or
    /// the value empty.
    fn get(&self, column: &str) -> Option<&str> {
        let value = self.fields[*self.index.get(column)?].trim();
        (!value.is_empty()).then_some(value)
    }

    fn error(&self, column: &str, message: String) -> TraceError {
        TraceError::field(self.source, self.line, column, message)
    }

    fn number(&self, column: &str) -> Result<Option<u64>, TraceError> {
        self.get(column)
            .map(|v| {
                v.parse::<u64>().map_err(|_| {
                    self.error(column, format!("expected a whole number, found {v:?}"))
                })
            })
            .transpose()
    }

    fn time(&self, column: &str) -> Result<Option<i64>, TraceError> {
        match self.get(column) {
            None => Ok(None),
            Some(v) if no_time(v) => Ok(None),
            Some(v) => timestamp(v).map(Some).ok_or_else(|| {
                self.error(
                    column,
                    format!("expected a time like 2021-10-05T11:26:12, found {v:?}"),
                )
            }),
        }
    }

    fn duration(&self, column: &str) -> Result<Option<i64>, TraceError> {
        match self.get(column) {
            None | Some("UNLIMITED" | "Partition_Limit" | "INVALID") => Ok(None),
            Some(v) => duration(v).map(Some).ok_or_else(|| {
                self.error(
                    column,
                    format!("expected a duration like 1-02:03:04, found {v:?}"),
                )
            }),
        }
    }

    fn job(&self, id_column: &str) -> Result<RawJob, TraceError> {
        let id_text = self.get(id_column).unwrap_or("");
        let id = id_text.parse::<u32>().map_err(|_| {
            self.error(
                id_column,
                format!("expected a job number, found {id_text:?}"),
            )
        })?;
        let submit = self
            .time("Submit")?
            .ok_or_else(|| self.error("Submit", "the job has no submit time".to_owned()))?;
        let start = self.time("Start")?;
        let end = self.time("End")?;
        let run_time = match self.number("ElapsedRaw")? {
            Some(s) => Some(s as i64),
            None => match self.duration("Elapsed")? {
                Some(s) => Some(s),
                None => start.zip(end).map(|(s, e)| e - s),
            },
        };
        let limit_raw = self.get("TimelimitRaw");
        let unlimited_limit = matches!(limit_raw, Some("UNLIMITED"))
            || matches!(self.get("Timelimit"), Some("UNLIMITED"));
        let time_limit = match limit_raw {
            Some("UNLIMITED" | "Partition_Limit") => None,
            Some(_) => self.number("TimelimitRaw")?.map(|m| m as i64 * 60),
            None => self.duration("Timelimit")?,
        };
        let tres = self.get("ReqTRES").map(tres).unwrap_or_default();
        let tres_count = |key: &str| tres.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        let tres_number = |key: &str| -> Result<Option<u64>, TraceError> {
            tres_count(key)
                .map(|v| {
                    v.parse::<u64>().map_err(|_| {
                        self.error(
                            "ReqTRES",
                            format!("expected a count for {key}, found {v:?}"),
                        )
                    })
                })
                .transpose()
        };
        let cpus = match self.number("ReqCPUS")?.filter(|&c| c > 0) {
            Some(c) => Some(c),
            None => match tres_number("cpu")? {
                Some(c) => Some(c),
                None => self.number("NCPUS")?.or(self.number("AllocCPUS")?),
            },
        }
        .filter(|&c| c > 0)
        .map(clamp_u32);
        let nodes = match self.get("ReqNodes") {
            Some(v) => {
                let low = v.split('-').next().unwrap_or(v);
                Some(low.parse::<u64>().map_err(|_| {
                    self.error(
                        "ReqNodes",
                        format!("expected a node count or range, found {v:?}"),
                    )
                })?)
            }
            None => match tres_number("node")? {
                Some(n) => Some(n),
                None => self.number("NNodes")?,
            },
        }
        .filter(|&n| n > 0)
        .map(clamp_u32);
        let memory_mb_per_node = match self.get("ReqMem") {
            Some(v) => {
                let (mb, per) = memory(v).ok_or_else(|| {
                    self.error(
                        "ReqMem",
                        format!("expected a size like 4000M, 2800Mc or 4Gn, found {v:?}"),
                    )
                })?;
                let per_node_cpus =
                    cpus.map_or(1, |c| u64::from(c).div_ceil(u64::from(nodes.unwrap_or(1))));
                Some(if per == 'c' {
                    mb.saturating_mul(per_node_cpus)
                } else {
                    mb
                })
            }
            None => match tres_count("mem") {
                Some(v) => {
                    let (mb, _) = memory(v).ok_or_else(|| {
                        self.error(
                            "ReqTRES",
                            format!("expected a memory size for mem, found {v:?}"),
                        )
                    })?;
                    Some(mb.div_ceil(u64::from(nodes.unwrap_or(1))))
                }
                None => None,
            },
        };
        let gpus = match tres_number("gres/gpu")? {
            Some(g) => g,
            None => tres
                .iter()
                .filter(|(k, _)| k.starts_with("gres/gpu:"))
                .map(|(_, v)| v.parse::<u64>().unwrap_or(0))
                .sum(),
        };
        let status = match self.get("State").map(|s| s.split(' ').next().unwrap_or(s)) {
            Some("COMPLETED") => TraceStatus::Completed,
            Some("CANCELLED") => TraceStatus::Cancelled,
            Some(
                "FAILED" | "TIMEOUT" | "NODE_FAIL" | "OUT_OF_MEMORY" | "BOOT_FAIL" | "DEADLINE"
                | "PREEMPTED",
            ) => TraceStatus::Failed,
            _ => TraceStatus::Unknown,
        };
        let id_or_zero = |column: &str| -> Result<u32, TraceError> {
            Ok(self.number(column)?.map_or(0, clamp_u32))
        };
        Ok(RawJob {
            id,
            submit,
            run_time,
            time_limit,
            unlimited_limit,
            nodes,
            cpus,
            memory_mb_per_node,
            gpus: clamp_u32(gpus),
            user: id_or_zero("UID")?,
            group: id_or_zero("GID")?,
            account: self.get("Account").map(str::to_owned),
            partition: self
                .get("Partition")
                .map(|p| p.split(',').next().unwrap_or(p).to_owned()),
            status,
            // A job cancelled while pending gets Start = End and no nodes.
            started: start.is_some() && self.get("NodeList") != Some("None assigned"),
        })
    }
}

fn clamp_u32(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// `key=value` pairs of a TRES string (`cpu=4,mem=8G,node=1,gres/gpu=2`).
pub fn tres(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// A memory size in MB and what it is per: `c` (CPU), `n` (node) or `-`
/// (as given). Units K, M (the default), G, T; decimals allowed (`1.5G`).
pub fn memory(text: &str) -> Option<(u64, char)> {
    let (text, per) = match text.strip_suffix(['c', 'n']) {
        Some(rest) => (rest, text.chars().last().unwrap_or('-')),
        None => (text, '-'),
    };
    let (number, factor) = match text.char_indices().last()? {
        (i, 'K') => (&text[..i], 1.0 / 1024.0),
        (i, 'M') => (&text[..i], 1.0),
        (i, 'G') => (&text[..i], 1024.0),
        (i, 'T') => (&text[..i], 1024.0 * 1024.0),
        _ => (text, 1.0),
    };
    let value: f64 = number.parse().ok()?;
    (value.is_finite() && value >= 0.0).then(|| ((value * factor).ceil() as u64, per))
}

/// A Slurm duration in seconds: `[D-]HH:MM:SS`, `MM:SS`, `MM:SS.mmm`,
/// `HH:MM:SS.mmm` or `D-HH` / `D-HH:MM`; fractions of a second are dropped.
pub fn duration(text: &str) -> Option<i64> {
    let (days, rest) = match text.split_once('-') {
        Some((d, rest)) => (d.parse::<i64>().ok()?, rest),
        None => (0, text),
    };
    let rest = rest.split_once('.').map_or(rest, |(whole, frac)| {
        if frac.bytes().all(|b| b.is_ascii_digit()) {
            whole
        } else {
            "x"
        }
    });
    let parts: Vec<i64> = rest
        .split(':')
        .map(|p| {
            (!p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect::<Option<_>>()?;
    let has_days = text.contains('-');
    let (h, m, s) = match (parts.as_slice(), has_days) {
        ([h, m, s], _) => (*h, *m, *s),
        ([h, m], true) => (*h, *m, 0),
        ([h], true) => (*h, 0, 0),
        ([m, s], false) => (0, *m, *s),
        _ => return None,
    };
    (m < 60 && s < 60 && days >= 0).then(|| ((days * 24 + h) * 60 + m) * 60 + s)
}

/// `YYYY-MM-DDTHH:MM:SS` as seconds since the Unix epoch, read as UTC.
pub fn timestamp(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 19
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let n = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = &text[r];
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let (y, mo, d, h, mi, s) = (
        n(0..4)?,
        n(5..7)?,
        n(8..10)?,
        n(11..13)?,
        n(14..16)?,
        n(17..19)?,
    );
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's
/// well-known civil-calendar algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "JobIDRaw|Submit|Start|End|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|ReqTRES|Partition|Account|UID|GID|State|JobName";

    fn parse_ok(body: &str) -> RawTrace {
        parse(format!("{HEADER}\n{body}").as_bytes(), "t.log").unwrap()
    }

    fn err(text: &str) -> String {
        parse(text.as_bytes(), "t.log").unwrap_err().to_string()
    }

    #[test]
    fn durations_times_memory_and_tres() {
        assert_eq!(duration("1-02:03:04"), Some(93_784));
        assert_eq!(duration("23:33:25"), Some(84_805));
        assert_eq!(duration("00:01.277"), Some(1));
        assert_eq!(
            duration("118-17:38:31"),
            Some(118 * 86_400 + 17 * 3600 + 38 * 60 + 31)
        );
        assert_eq!(duration("2-12"), Some(2 * 86_400 + 12 * 3600));
        assert_eq!(duration("12:61:00"), None);
        assert_eq!(duration("abc"), None);
        // 2021-10-05T11:26:12Z is 1633433172 (`date -u -d 2021-10-05T11:26:12 +%s`).
        assert_eq!(timestamp("2021-10-05T11:26:12"), Some(1_633_433_172));
        assert_eq!(timestamp("1970-01-01T00:00:00"), Some(0));
        assert_eq!(timestamp("2021-13-05T11:26:12"), None);
        assert_eq!(memory("2800Mc"), Some((2800, 'c')));
        assert_eq!(memory("180000Mn"), Some((180_000, 'n')));
        assert_eq!(memory("500G"), Some((512_000, '-')));
        assert_eq!(memory("4000"), Some((4000, '-')));
        assert_eq!(memory("lots"), None);
        assert_eq!(
            tres("cpu=4,mem=8G,node=1,gres/gpu=2"),
            vec![
                ("cpu".to_owned(), "4".to_owned()),
                ("mem".to_owned(), "8G".to_owned()),
                ("node".to_owned(), "1".to_owned()),
                ("gres/gpu".to_owned(), "2".to_owned())
            ]
        );
    }

    #[test]
    fn jobs_steps_states_and_relative_times() {
        let t = parse_ok(concat!(
            "10|2021-10-05T11:26:12|2021-10-05T11:27:00|2021-10-05T11:28:00|60|30|4||2800Mc|cpu=4,mem=11200M,node=2,gres/gpu=2|batch,debug|acct|1000|100|COMPLETED|a\n",
            "10.batch|2021-10-05T11:26:12|2021-10-05T11:27:00|2021-10-05T11:28:00|60||||||||||COMPLETED|batch\n",
            "11|2021-10-05T11:26:02|Unknown|Unknown|0|UNLIMITED|||8Gn|cpu=2,node=1|||||CANCELLED by 1000|b\n",
        ));
        assert_eq!(t.jobs.len(), 2);
        assert_eq!(t.notes, vec!["1 job step rows skipped"]);
        // Time zero is the earliest submit (job 11, 10 s before job 10).
        assert_eq!(t.start_time, 1_633_433_162);
        let a = &t.jobs[0];
        assert_eq!(
            (a.id, a.submit, a.run_time, a.time_limit),
            (10, 10, Some(60), Some(1800))
        );
        // ReqNodes empty: node=2 from ReqTRES; 2800 MB per CPU x 2 CPUs per node.
        assert_eq!(
            (a.cpus, a.nodes, a.memory_mb_per_node, a.gpus),
            (Some(4), Some(2), Some(5600), 2)
        );
        assert_eq!(
            (
                a.partition.as_deref(),
                a.account.as_deref(),
                a.user,
                a.group
            ),
            (Some("batch"), Some("acct"), 1000, 100)
        );
        assert_eq!((a.status, a.started), (TraceStatus::Completed, true));
        let b = &t.jobs[1];
        assert_eq!((b.submit, b.time_limit, b.unlimited_limit), (0, None, true));
        assert_eq!(
            (b.cpus, b.nodes, b.memory_mb_per_node),
            (Some(2), Some(1), Some(8192))
        );
        assert_eq!((b.status, b.started), (TraceStatus::Cancelled, false));
    }

    #[test]
    fn user_and_group_names_without_ids() {
        // No UID/GID columns: names are numbered in order of first
        // appearance (module documentation); an empty name is unknown (0).
        let text = concat!(
            "JobIDRaw|Submit|User|Group|Account\n",
            "1|2021-10-05T11:00:00|bob|phys|p1\n",
            "2|2021-10-05T11:00:01|alice|chem|c1\n",
            "3|2021-10-05T11:00:02|bob|phys|p1\n",
            "4|2021-10-05T11:00:03||chem|c1\n",
        );
        let t = parse(text.as_bytes(), "t.log").unwrap();
        let ids: Vec<(u32, u32)> = t.jobs.iter().map(|j| (j.user, j.group)).collect();
        assert_eq!(ids, vec![(1, 1), (2, 2), (1, 1), (0, 2)]);
        assert_eq!(
            t.notes,
            vec![
                "no UID column: the 2 names of User numbered 1 to 2 in order of first appearance",
                "no GID column: the 2 names of Group numbered 1 to 2 in order of first appearance",
            ]
        );
    }

    #[test]
    fn pipes_and_newlines_inside_values() {
        let text = "JobIDRaw|JobName|Submit|Constraints|Comment|NCPUS|SubmitLine|State\n\
                    1|a|b|2021-01-01T00:00:00|x|y||4|sbatch --wrap='env\n| grep X\n'|COMPLETED\n\
                    2|n|2021-01-01T00:00:05|||1|s|FAILED\n";
        let t = parse(text.as_bytes(), "t.log").unwrap();
        assert_eq!(t.jobs.len(), 2);
        assert_eq!(
            (t.jobs[0].cpus, t.jobs[0].status),
            (Some(4), TraceStatus::Completed)
        );
        assert_eq!(
            (t.jobs[1].submit, t.jobs[1].status),
            (5, TraceStatus::Failed)
        );
    }

    #[test]
    fn align_gives_pipes_to_the_text_column_that_keeps_types() {
        let kinds = [
            Kind::Number,
            Kind::Free,
            Kind::Time,
            Kind::Free,
            Kind::Free,
            Kind::State,
        ];
        let fields: Vec<String> = [
            "7",
            "a",
            "b",
            "2021-01-01T00:00:00",
            "",
            "cpu-a",
            "cpu-b",
            "RUNNING",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // "a|b" must be the name (the time comes next); with no typed column
        // between the last two text columns, the extra goes to the later one.
        assert_eq!(
            align(&fields, &kinds).unwrap(),
            vec![
                "7",
                "a|b",
                "2021-01-01T00:00:00",
                "",
                "cpu-a|cpu-b",
                "RUNNING"
            ]
        );
    }

    #[test]
    fn malformed_records_name_the_line() {
        assert_eq!(
            err(""),
            "t.log: no header line (expected `JobIDRaw|Submit|...`)"
        );
        assert_eq!(
            err("\nJobID|Start\n"),
            "t.log:2: the header needs the columns JobIDRaw (or JobID) and Submit"
        );
        assert_eq!(
            err("JobIDRaw|Submit|NCPUS\n1|2021-01-01T00:00:00|4|5\n"),
            "t.log:2: record has 4 fields for 3 columns and its extra `|`s fit no free-text column (AdminComment, Comment, Constraints, Container, JobName, StdErr, StdIn, StdOut, SubmitLine, SystemComment, WorkDir)"
        );
        assert_eq!(
            err("JobIDRaw|Submit\n\nabc|2021-01-01T00:00:00\n"),
            "t.log:3: JobIDRaw: expected a job number, found \"abc\""
        );
        assert_eq!(
            err("JobIDRaw|Submit\n1|yesterday\n"),
            "t.log:2: Submit: expected a time like 2021-10-05T11:26:12, found \"yesterday\""
        );
        assert_eq!(
            err("JobIDRaw|Submit\n1|Unknown\n"),
            "t.log:2: Submit: the job has no submit time"
        );
        assert_eq!(
            err("JobIDRaw|Submit|NCPUS\n1|2021-01-01T00:00:00|four\n"),
            "t.log:2: NCPUS: expected a whole number, found \"four\""
        );
        assert_eq!(
            err("JobIDRaw|Submit|Timelimit\n1|2021-01-01T00:00:00|soon\n"),
            "t.log:2: Timelimit: expected a duration like 1-02:03:04, found \"soon\""
        );
        assert_eq!(
            err("JobIDRaw|Submit|ReqMem\n1|2021-01-01T00:00:00|lots\n"),
            "t.log:2: ReqMem: expected a size like 4000M, 2800Mc or 4Gn, found \"lots\""
        );
        assert_eq!(
            err("JobIDRaw|Submit|ReqTRES\n1|2021-01-01T00:00:00|cpu=x\n"),
            "t.log:2: ReqTRES: expected a count for cpu, found \"x\""
        );
    }

    #[test]
    fn record_cut_short_at_the_end_is_skipped_with_a_note() {
        let t = parse(
            b"JobIDRaw|Submit|NCPUS\n1|2021-01-01T00:00:00|1\n|4\n",
            "t.log",
        )
        .unwrap();
        assert_eq!(t.jobs.len(), 1);
        assert_eq!(
            t.notes,
            vec!["t.log:3: last record ends with 2 of 3 fields (dump cut short); skipped"]
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = parse(&bytes, "p.log");
        }

        #[test]
        fn never_panics_on_sacct_like_text(body in "([0-9|:TU.\\-a-zA-Z=, \n]{0,80}\n){0,6}") {
            let _ = parse(format!("JobIDRaw|Submit|Start|End|JobName|Elapsed|ReqMem|ReqTRES|SubmitLine|State\n{body}").as_bytes(), "p.log");
        }
    }
}
