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
//! reads as that kind and the most of them are non-empty; among equally
//! good splits, the extra fields go to the last free-text column, then to
//! the one before it, and so on. A record whose extra `|`s fit no split
//! yet may go on over the next lines (a value may hold both), for at most
//! 100 lines. A final record that ends with too few fields (a dump cut
//! short) is skipped with a note.
//!
//! The split is found in one pass over the offsets the free-text columns
//! can take, extended as a record grows line by line, so reading is linear
//! in the dump's size: each field is classified once, and each offset costs
//! the typed columns of the header (at most one of each known name, since
//! a header naming a column twice is refused).
//!
//! # Jobs
//!
//! - job steps (`JobIDRaw` such as `123.batch`, `123.0`, `123.extern`) are
//!   skipped: the replay schedules jobs;
//! - id: `JobIDRaw` (else `JobID`); submit: `Submit` (required); the job
//!   started when `Start` is a time (not `Unknown`/`None`) and `NodeList`
//!   is not `None assigned` (Slurm sets `Start` to the cancel time of a job
//!   cancelled while pending); `Start` and `NodeList` are kept as the
//!   job's recorded run, for [`crate::agreement`];
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
//! `JobIDRaw`/`JobID` or `Submit`, or naming a column twice; a record whose
//! extra `|`s fit no free-text column; a job id that is not a number; a
//! `Submit` that is not a time; a number, duration or memory size that does
//! not read as one, or that overflows (a count beyond 2^32, a time beyond
//! 2^63 seconds, a memory beyond 2^64 MB are errors, never wrapped or
//! clamped).

use std::collections::HashMap;
use std::path::Path;

use crate::hazards::{self, ReplayOptions};
use crate::input::{self, RawJob, RawTrace, TraceError};
use crate::workload::{Recorded, TraceStatus, Workload};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

impl Kind {
    /// The bit of [`classify`]'s mask saying a value fits this kind; none
    /// for text, which every value fits.
    fn bit(self) -> u8 {
        match self {
            Kind::Text | Kind::Free => 0,
            Kind::Time => 1,
            Kind::Number => 2,
            Kind::Duration => 4,
            Kind::State => 8,
        }
    }
}

/// [`classify`]'s bit for a value that is not blank.
const FILLED: u8 = 16;

/// The kinds `value` fits, as [`Kind::bit`]s, and [`FILLED`] when it is
/// not blank.
fn classify(value: &str) -> u8 {
    [Kind::Time, Kind::Number, Kind::Duration, Kind::State]
        .into_iter()
        .filter(|&k| fits(k, value))
        .fold(0, |mask, k| mask | k.bit())
        | if value.trim().is_empty() { 0 } else { FILLED }
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
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, column) in columns.iter().enumerate() {
        if let Some(first) = index.insert(column, i).filter(|_| !column.is_empty()) {
            return Err(TraceError::new(
                source,
                header_line,
                format!(
                    "the header names column `{column}` twice (columns {} and {}); name each once",
                    first + 1,
                    i + 1
                ),
            ));
        }
    }
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
    let layout = Layout::new(columns.iter().map(|c| kind(c)).collect());
    let mut trace = RawTrace {
        source: source.to_owned(),
        ..RawTrace::default()
    };
    let mut steps = 0usize;
    let mut pending: Option<(usize, Vec<String>, Option<Aligner>)> = None;
    // Ids given to `User` and `Group` names when the dump has no UID/GID.
    let by_name = |column: &str, id_column: &str| {
        (index.contains_key(column) && !index.contains_key(id_column)).then(HashMap::new)
    };
    let mut users: Option<HashMap<String, u32>> = by_name("User", "UID");
    let mut groups: Option<HashMap<String, u32>> = by_name("Group", "GID");
    for (number, line) in lines {
        let (start, mut fields, aligner) = match pending.take() {
            Some((start, mut fields, aligner)) => {
                let mut parts = line.split('|');
                if let Some(last) = fields.last_mut() {
                    last.push('\n');
                    last.push_str(parts.next().unwrap_or(""));
                }
                fields.extend(parts.map(str::to_owned));
                (start, fields, aligner)
            }
            None if line.trim().is_empty() => continue,
            None => (number, line.split('|').map(str::to_owned).collect(), None),
        };
        if fields.len() > columns.len() {
            let mut aligner = aligner.unwrap_or_default();
            match aligner.place(&layout, &fields) {
                Some(widths) => fields = layout.join(&fields, &widths),
                // Not placeable yet: a value may go on over the next lines.
                None if number - start < MAX_RECORD_LINES => {
                    pending = Some((start, fields, Some(aligner)));
                    continue;
                }
                None => return Err(overlong(source, start, fields.len(), columns.len())),
            }
        } else if fields.len() < columns.len() {
            pending = Some((start, fields, aligner));
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
    if let Some((start, fields, _)) = pending {
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
        if let Some(recorded) = &mut job.recorded {
            recorded.start -= zero;
        }
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

/// Where the columns of a header are, for placing the extra fields of an
/// overlong record: the typed columns before the first free-text column,
/// and after each free-text column the typed ones up to the next.
struct Layout {
    columns: usize,
    /// Typed columns (not text) before the first free-text column.
    head: Vec<(usize, Kind)>,
    /// Each free-text column and the typed columns after it.
    free: Vec<(usize, Vec<(usize, Kind)>)>,
}

impl Layout {
    fn new(kinds: Vec<Kind>) -> Layout {
        let mut layout = Layout {
            columns: kinds.len(),
            head: Vec::new(),
            free: Vec::new(),
        };
        for (column, kind) in kinds.into_iter().enumerate() {
            match (kind, layout.free.last_mut()) {
                (Kind::Free, _) => layout.free.push((column, Vec::new())),
                (Kind::Text, _) => {}
                (_, Some((_, typed))) => typed.push((column, kind)),
                (_, None) => layout.head.push((column, kind)),
            }
        }
        layout
    }

    /// The record of `fields` with free-text column `i` taking `widths[i]`
    /// of them.
    fn join(&self, fields: &[String], widths: &[usize]) -> Vec<String> {
        let mut out = Vec::with_capacity(self.columns);
        let mut at = 0;
        let mut free = self.free.iter().map(|(c, _)| *c).zip(widths).peekable();
        for column in 0..self.columns {
            let width = match free.peek() {
                Some(&(c, &w)) if c == column => {
                    free.next();
                    w
                }
                _ => 1,
            };
            out.push(fields[at..at + width].join("|"));
            at += width;
        }
        out
    }
}

/// The score of `typed` columns read at `offset` fields to the right: how
/// many are filled, or -1 when one does not fit. At most 32 columns are
/// typed (one of each known name), so a score fits an `i8`.
fn score(typed: &[(usize, Kind)], offset: usize, masks: &[u8]) -> i8 {
    let mut filled = 0;
    for &(column, kind) in typed {
        let mask = masks[column + offset];
        if mask & kind.bit() == 0 {
            return -1;
        }
        filled += i8::from(mask & FILLED != 0);
    }
    filled
}

/// Places the extra fields of one overlong record on the free-text
/// columns, as the record grows line by line (see the module
/// documentation for which split wins).
///
/// With `F` free-text columns, the offset `O(k)` of free-text column `k` is
/// how many extra fields it and those before it take; the typed columns
/// after it read at that offset. `best[k][o]` is the best score of the
/// columns up to the next free-text column when `O(k) = o`; it reads only
/// fields before the record's last, which a following line cannot change,
/// so each offset is computed once, when the record first has that many
/// extra fields. The last free-text column takes the rest (`O = extra`).
/// The work is the record's fields times the typed columns.
#[derive(Default)]
struct Aligner {
    /// [`classify`] of each field but the last, which may still grow.
    masks: Vec<u8>,
    /// The score of the columns before the first free-text column.
    head: Option<i8>,
    /// `best[k][o]` for each free-text column `k` but the last.
    best: Vec<Vec<i8>>,
    /// The best of `best[k][..=o]` for the last offset `o` computed.
    best_so_far: Vec<i8>,
}

impl Aligner {
    /// The width of each free-text column under the best split of
    /// `fields`, none when no split fits; `fields` extends those of the
    /// previous call (more fields, its last field longer).
    fn place(&mut self, layout: &Layout, fields: &[String]) -> Option<Vec<usize>> {
        let (_, last) = layout.free.last()?;
        let extra = fields.len() - layout.columns;
        // The last field may have grown since: classify it again.
        self.masks.truncate(self.masks.len().saturating_sub(1));
        let from = self.masks.len();
        self.masks
            .extend(fields[from..].iter().map(|f| classify(f)));
        let head = *self
            .head
            .get_or_insert_with(|| score(&layout.head, 0, &self.masks));
        if head < 0 {
            return None;
        }
        let middle = &layout.free[..layout.free.len() - 1];
        self.best.resize(middle.len(), Vec::new());
        self.best_so_far.resize(middle.len(), -1);
        let computed = self.best.first().map_or(extra + 1, Vec::len);
        for offset in computed..=extra {
            let mut before = head;
            for (k, (_, typed)) in middle.iter().enumerate() {
                let here = score(typed, offset, &self.masks);
                let best = if before < 0 || here < 0 {
                    -1
                } else {
                    before + here
                };
                self.best[k].push(best);
                self.best_so_far[k] = self.best_so_far[k].max(best);
                before = self.best_so_far[k];
            }
        }
        let before = self.best_so_far.last().copied().unwrap_or(head);
        if before < 0 || score(last, extra, &self.masks) < 0 {
            return None;
        }
        // From the last free-text column back: each takes as many extra
        // fields as a best split allows.
        let mut widths = vec![0; layout.free.len()];
        let mut offset = extra;
        for k in (0..layout.free.len()).rev() {
            let previous = match k.checked_sub(1) {
                None => 0,
                Some(j) => {
                    let best = &self.best[j][..=offset];
                    let top = *best.iter().max().expect("offset 0 is computed");
                    best.iter()
                        .position(|&b| b == top)
                        .expect("the maximum is there")
                }
            };
            widths[k] = 1 + offset - previous;
            offset = previous;
        }
        Some(widths)
    }
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

    /// `value` of `column` as the record's `u32`, an error beyond it.
    fn count(&self, column: &str, value: u64) -> Result<u32, TraceError> {
        u32::try_from(value).map_err(|_| {
            self.error(
                column,
                format!(
                    "{value} is more than {}, the most a job may count",
                    u32::MAX
                ),
            )
        })
    }

    /// Seconds of `column` as an `i64`; `None` when the computation that
    /// gave them overflowed. Either overflow is an error.
    fn seconds(&self, column: &str, seconds: Option<u64>) -> Result<i64, TraceError> {
        seconds
            .and_then(|s| i64::try_from(s).ok())
            .ok_or_else(|| self.error(column, format!("more than {} seconds", i64::MAX)))
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
            Some(s) => Some(self.seconds("ElapsedRaw", Some(s))?),
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
            Some(_) => match self.number("TimelimitRaw")? {
                Some(m) => Some(self.seconds("TimelimitRaw", m.checked_mul(60))?),
                None => None,
            },
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
        .map(|c| self.count("ReqCPUS", c))
        .transpose()?;
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
        .map(|n| self.count("ReqNodes", n))
        .transpose()?;
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
                    mb.checked_mul(per_node_cpus).ok_or_else(|| {
                        self.error(
                            "ReqMem",
                            format!(
                                "{v} for each of {per_node_cpus} CPUs is more than {} MB",
                                u64::MAX
                            ),
                        )
                    })?
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
                .try_fold(0u64, |sum, (key, v)| {
                    let count = v.parse::<u64>().map_err(|_| {
                        self.error(
                            "ReqTRES",
                            format!("expected a count for {key}, found {v:?}"),
                        )
                    })?;
                    sum.checked_add(count).ok_or_else(|| {
                        self.error(
                            "ReqTRES",
                            format!(
                                "the GPUs of gres/gpu:<type> add up to more than {}",
                                u64::MAX
                            ),
                        )
                    })
                })?,
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
        // A job cancelled while pending gets Start = End and no nodes.
        let started = start.is_some() && self.get("NodeList") != Some("None assigned");
        let id_or_zero = |column: &str| -> Result<u32, TraceError> {
            self.number(column)?
                .map_or(Ok(0), |id| self.count(column, id))
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
            gpus: self.count("ReqTRES", gpus)?,
            user: id_or_zero("UID")?,
            group: id_or_zero("GID")?,
            account: self.get("Account").map(str::to_owned),
            partition: self
                .get("Partition")
                .map(|p| p.split(',').next().unwrap_or(p).to_owned()),
            status,
            started,
            recorded: start.filter(|_| started).map(|start| Recorded {
                start,
                nodes: self.get("NodeList").map(str::to_owned),
            }),
        })
    }
}

/// `key=value` pairs of a TRES string (`cpu=4,mem=8G,node=1,gres/gpu=2`).
pub fn tres(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// A memory size in MB and what it is per: `c` (CPU), `n` (node) or `-`
/// (as given). Units K, M (the default), G, T; decimals allowed (`1.5G`);
/// none for 2^64 MB or more.
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
    let mb = (value * factor).ceil();
    // Beyond 2^64 MB the cast would saturate: not a size.
    (mb.is_finite() && (0.0..18_446_744_073_709_551_616.0).contains(&mb))
        .then_some((mb as u64, per))
}

/// A Slurm duration in seconds: `[D-]HH:MM:SS`, `MM:SS`, `MM:SS.mmm`,
/// `HH:MM:SS.mmm` or `D-HH` / `D-HH:MM`; fractions of a second are dropped;
/// none beyond 2^63 seconds.
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
    if m >= 60 || s >= 60 || days < 0 {
        return None;
    }
    days.checked_mul(24)?
        .checked_add(h)?
        .checked_mul(60)?
        .checked_add(m)?
        .checked_mul(60)?
        .checked_add(s)
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
        let layout = Layout::new(kinds.to_vec());
        let widths = Aligner::default().place(&layout, &fields).unwrap();
        assert_eq!(
            layout.join(&fields, &widths),
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

    /// A header with free-text columns between typed ones, and a record
    /// of `fields` fields on line 2 that goes on over `lines` lines of
    /// `per_line` more fields each; no split fits (State never reads as a
    /// state), so every line is another try.
    fn unplaceable(lines: usize, per_line: usize) -> String {
        let mut text = String::from(
            "JobIDRaw|Submit|JobName|State|SubmitLine|NCPUS|Comment|Start\n\
             1|2021-01-01T00:00:00|x|lower|y|4|z",
        );
        for _ in 0..lines {
            text.push_str(&"|a".repeat(per_line));
            text.push('\n');
        }
        text
    }

    // Issue 26, class 12: each line of a record whose extra `|`s did not
    // fit re-ran a search quadratic in the record's fields, so a 120 KB
    // dump took 23 s before its error. The split is now extended one
    // offset at a time as the record grows: here 1 MB (a hundred lines of
    // 5,000 extra fields), read in one pass.
    #[test]
    fn a_record_that_never_fits_is_read_in_one_pass() {
        let text = unplaceable(100, 5_000);
        assert!(text.len() > 1_000_000);
        let e = parse(text.as_bytes(), "t.log").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.message
                .starts_with("record has 500007 fields for 8 columns"),
            "{e}"
        );
        // Cut short after 50 lines: the dump ends inside the record.
        let e = parse(unplaceable(50, 10_000).as_bytes(), "t.log").unwrap_err();
        assert!(e.message.starts_with("record has 500007 fields"), "{e}");
    }

    // Issue 26, class 12: the work is bounded by the fields, not by time:
    // each offset of each free-text column is computed once, however many
    // lines the record takes.
    #[test]
    fn each_offset_is_computed_once_as_a_record_grows() {
        let kinds = [
            Kind::Number,
            Kind::Free,
            Kind::Time,
            Kind::Free,
            Kind::State,
            Kind::Free,
        ];
        let layout = Layout::new(kinds.to_vec());
        let mut aligner = Aligner::default();
        let mut fields: Vec<String> = ["7", "a", "soon", "b", "lower", "c"]
            .map(String::from)
            .to_vec();
        for line in 0..100 {
            fields.last_mut().unwrap().push_str("\nmore");
            fields.extend((0..50).map(|i| format!("{line}-{i}")));
            assert_eq!(aligner.place(&layout, &fields), None);
            let extra = fields.len() - kinds.len();
            assert!(aligner.best.iter().all(|b| b.len() == extra + 1));
            assert_eq!(aligner.masks.len(), fields.len());
        }
    }

    /// A record cut short inside a megabyte-long value is skipped with a
    /// note, in one pass.
    #[test]
    fn a_long_record_cut_short_is_skipped() {
        let mut text = String::from("JobIDRaw|Submit|SubmitLine|NCPUS\n1|2021-01-01T00:00:00|a");
        for _ in 0..20_000 {
            text.push_str("\nline of a long submit line, no pipes in it at all");
        }
        let t = parse(text.as_bytes(), "t.log").unwrap();
        assert!(t.jobs.is_empty());
        assert_eq!(
            t.notes,
            vec!["t.log:2: last record ends with 3 of 4 fields (dump cut short); skipped"]
        );
    }

    #[test]
    fn a_column_named_twice_is_refused() {
        assert_eq!(
            err("JobIDRaw|Submit|State|Start|State\n"),
            "t.log:1: the header names column `State` twice (columns 3 and 5); name each once"
        );
        // `-p`'s trailing `|` leaves empty names, which may repeat.
        let t = parse(b"JobIDRaw|Submit||\n1|2021-01-01T00:00:00||\n", "t.log").unwrap();
        assert_eq!(t.jobs.len(), 1);
    }

    // Issue 26, class 7: numbers that overflowed were wrapped or clamped
    // (an ElapsedRaw of 2^64 - 1 became -1 s; a duration of 10^14 days
    // panicked in debug builds); each is now an error naming the column.
    #[test]
    fn overflowing_numbers_are_errors() {
        let one = |columns: &str, values: &str| {
            err(&format!(
                "JobIDRaw|Submit|{columns}\n1|2021-01-01T00:00:00|{values}\n"
            ))
        };
        assert_eq!(
            one("ElapsedRaw", "18446744073709551615"),
            "t.log:2: ElapsedRaw: more than 9223372036854775807 seconds"
        );
        assert_eq!(
            one("TimelimitRaw", "9223372036854775807"),
            "t.log:2: TimelimitRaw: more than 9223372036854775807 seconds"
        );
        assert_eq!(
            one("Elapsed", "106751991167301-00:00:00"),
            "t.log:2: Elapsed: expected a duration like 1-02:03:04, found \"106751991167301-00:00:00\""
        );
        assert_eq!(
            duration("106751991167300-00:00:00"),
            Some(9_223_372_036_854_720_000)
        );
        assert_eq!(
            one("ReqCPUS", "4294967296"),
            "t.log:2: ReqCPUS: 4294967296 is more than 4294967295, the most a job may count"
        );
        assert_eq!(
            one("UID", "4294967296"),
            "t.log:2: UID: 4294967296 is more than 4294967295, the most a job may count"
        );
        assert_eq!(
            one("ReqTRES", "gres/gpu:a=18446744073709551615,gres/gpu:b=1"),
            "t.log:2: ReqTRES: the GPUs of gres/gpu:<type> add up to more than 18446744073709551615"
        );
        assert_eq!(
            one("ReqTRES", "gres/gpu:a=two"),
            "t.log:2: ReqTRES: expected a count for gres/gpu:a, found \"two\""
        );
        assert_eq!(
            one("ReqCPUS|ReqMem", "4|4611686018427387904Mc"),
            "t.log:2: ReqMem: 4611686018427387904Mc for each of 4 CPUs is more than 18446744073709551615 MB"
        );
        assert_eq!(memory("1e30M"), None);
        assert_eq!(memory("17592186044416T"), None);
        assert_eq!(
            memory("17592186044415T"),
            Some((18_446_744_073_708_503_040, '-'))
        );
    }

    /// The split [`Aligner`] finds, by trying every split: the best score,
    /// ties to the split with the most extra fields on the last free-text
    /// column, then the one before it, and so on.
    fn brute_force(fields: &[String], kinds: &[Kind]) -> Option<Vec<usize>> {
        let free: Vec<usize> = (0..kinds.len())
            .filter(|&c| kinds[c] == Kind::Free)
            .collect();
        let extra = fields.len() - kinds.len();
        let mut best: Option<(usize, Vec<usize>)> = None;
        // Every way to give `extra` fields to the free-text columns.
        let mut split = vec![0; free.len()];
        loop {
            if split.iter().sum::<usize>() == extra {
                let mut at = 0;
                let mut score = Some(0);
                let mut next_free = 0;
                for &kind in kinds {
                    if kind == Kind::Free {
                        at += 1 + split[next_free];
                        next_free += 1;
                        continue;
                    }
                    let value = &fields[at];
                    if !fits(kind, value) {
                        score = None;
                    } else if kind != Kind::Text && !value.trim().is_empty() {
                        score = score.map(|s| s + 1);
                    }
                    at += 1;
                }
                let reversed: Vec<usize> = split.iter().rev().copied().collect();
                if let Some(score) = score {
                    let better = match &best {
                        None => true,
                        Some((s, b)) => {
                            score > *s
                                || (score == *s
                                    && reversed > b.iter().rev().copied().collect::<Vec<_>>())
                        }
                    };
                    if better {
                        best = Some((score, split.clone()));
                    }
                }
            }
            // Next split, as an odometer of digits 0..=extra.
            let Some(i) = (0..split.len()).find(|&i| split[i] < extra) else {
                break;
            };
            split[i] += 1;
            split[..i].iter_mut().for_each(|d| *d = 0);
        }
        best.map(|(_, split)| split.into_iter().map(|e| e + 1).collect())
    }

    proptest::proptest! {
        /// The one-pass split is the best split, found by trying them all.
        #[test]
        fn the_split_is_the_best_of_all_splits(
            kinds in proptest::collection::vec(
                proptest::sample::select(vec![
                    Kind::Text, Kind::Free, Kind::Free, Kind::Time, Kind::Number, Kind::Duration, Kind::State,
                ]),
                1..7,
            ),
            values in proptest::collection::vec(
                proptest::sample::select(vec!["", "7", "2021-01-01T00:00:00", "RUNNING", "00:01:00", "x", "Unknown"]),
                1..12,
            ),
        ) {
            proptest::prop_assume!(values.len() > kinds.len());
            let fields: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            let layout = Layout::new(kinds.clone());
            let found = Aligner::default().place(&layout, &fields);
            proptest::prop_assert_eq!(found, brute_force(&fields, &kinds));
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = parse(&bytes, "p.log");
        }

        /// Issue 26, class 12: dumps of up to about 64 KB, mostly `|`s and
        /// line breaks under a header with several free-text columns, are
        /// read or refused in one pass (no input makes the split search
        /// revisit what it has read).
        #[test]
        fn pipe_heavy_dumps_are_read_or_refused(
            lines in proptest::collection::vec(("[0-9|a]{0,16}", 0usize..4000), 0..16),
        ) {
            let mut text = String::from("JobIDRaw|Submit|JobName|State|SubmitLine|NCPUS|Comment|Start\n");
            for (head, pipes) in &lines {
                text.push_str(head);
                text.push_str(&"|".repeat(*pipes));
                text.push('\n');
            }
            let _ = parse(text.as_bytes(), "p.log");
        }

        #[test]
        fn never_panics_on_sacct_like_text(body in "([0-9|:TU.\\-a-zA-Z=, \n]{0,80}\n){0,6}") {
            let _ = parse(format!("JobIDRaw|Submit|Start|End|JobName|Elapsed|ReqMem|ReqTRES|SubmitLine|State\n{body}").as_bytes(), "p.log");
        }
    }
}
