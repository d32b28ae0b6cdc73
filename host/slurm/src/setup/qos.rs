//! A site's QOS table, as `sacctmgr -P show qos` prints it: the QOS of
//! each job decides, under `PreemptType=preempt/qos`, which running jobs
//! it may preempt and how they are stopped (see
//! [`Preemption`](super::preemption::Preemption)).
//!
//! The first line names the columns, `|` between them (`-p`'s trailing
//! `|` is accepted); `Name` is required, and the columns read are
//! `Priority`, `Preempt` (the QOS names this one's jobs may preempt,
//! comma-separated), `PreemptMode` (`cluster` or empty for the cluster's)
//! and `PreemptExemptTime` (empty for none). Other columns are ignored, so
//! `sacctmgr -P show qos` as it comes will do; so will
//! `sacctmgr -P show qos format=Name,Priority,Preempt,PreemptMode,PreemptExemptTime`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::preemption::Mode;
use crate::slurm_conf::{parse_seconds, ConfError};

/// One QOS, as far as preemption reads it (`slurmdb_qos_rec_t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QosRule {
    /// The QOS's name (`Name`), unique in its table.
    pub name: String,
    /// Its `Priority` (0 when empty): preempt/qos offers the candidates of
    /// lower QOS priority first (values over 0xffff rank as 0xffff).
    pub priority: u32,
    /// The QOS whose jobs this QOS's jobs may preempt (`Preempt=`).
    pub preempt: Vec<String>,
    /// Its own `PreemptMode`; `None` for `cluster` (the cluster's mode).
    pub(super) mode: Option<Mode>,
    /// `PreemptExemptTime` in seconds: a job of this QOS is not preempted
    /// before it has run this long. `None` when unset.
    pub preempt_exempt_time: Option<u64>,
}

/// The QOS a site defines, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QosTable {
    /// One rule per QOS, in file order.
    pub rules: Vec<QosRule>,
}

/// The QOS a job without one runs in: the association's default, which an
/// association that names none leaves at `normal` (22.05 job_mgr.c
/// `_determine_and_validate_qos`).
pub const DEFAULT_QOS: &str = "normal";

impl QosTable {
    /// Reads the table from `path`.
    ///
    /// # Errors
    ///
    /// A [`ConfError`] with the file, and the line and what was expected
    /// when the text is malformed (see [`QosTable::parse`]).
    pub fn load(path: &Path) -> Result<QosTable, ConfError> {
        let text = ConfError::read(path, Some("the QOS table"))?;
        QosTable::parse(&text, path)
    }

    /// Parses `text` (read from `file`, for messages).
    ///
    /// # Errors
    ///
    /// A [`ConfError`] at the line of: a header without `Name`; a row with
    /// another number of columns than the header; an empty or repeated
    /// name; a `Priority` that is not a number; a `PreemptMode` that is not
    /// one of `cluster`, `off`, `cancel`, `requeue` or `suspend` (with
    /// `gang` or `within`); a `PreemptExemptTime` in no time syntax of
    /// Slurm's; a `Preempt` naming a QOS the table does not define.
    pub fn parse(text: &str, file: &Path) -> Result<QosTable, ConfError> {
        let error = |line: usize, message: String| ConfError {
            file: PathBuf::from(file),
            line,
            message,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end()))
            .filter(|(_, l)| !l.trim().is_empty());
        let Some((header_line, header)) = lines.next() else {
            return Err(error(0, "expected a header line naming the columns".into()));
        };
        // `-p` ends every line with `|`, `-P` none.
        let trailing = header.ends_with('|');
        let cells = |line: &'_ str| -> Vec<String> {
            let line = if trailing {
                line.strip_suffix('|').unwrap_or(line)
            } else {
                line
            };
            line.split('|').map(str::to_owned).collect()
        };
        let columns = cells(header);
        let find = |name: &str| columns.iter().position(|c| c.eq_ignore_ascii_case(name));
        let name_at = find("Name").ok_or_else(|| {
            error(
                header_line,
                format!("expected a `Name` column (sacctmgr -P show qos), found `{header}`"),
            )
        })?;
        let (priority_at, preempt_at, mode_at, exempt_at) = (
            find("Priority"),
            find("Preempt"),
            find("PreemptMode"),
            find("PreemptExemptTime"),
        );
        let mut rules: Vec<(usize, QosRule)> = Vec::new();
        // Each name's line, so that repeats and `Preempt` names are looked
        // up, not searched for (a table of many rows would be quadratic).
        let mut defined: HashMap<String, usize> = HashMap::new();
        for (line, text) in lines {
            let row = cells(text);
            if row.len() != columns.len() {
                return Err(error(
                    line,
                    format!(
                        "expected {} columns as the header names, found {}",
                        columns.len(),
                        row.len()
                    ),
                ));
            }
            let cell = |at: Option<usize>| at.map_or("", |i| row[i].trim());
            let name = cell(Some(name_at));
            if name.is_empty() {
                return Err(error(line, "expected a QOS name, found none".into()));
            }
            if defined.insert(name.to_owned(), line).is_some() {
                return Err(error(line, format!("QOS `{name}` is defined twice")));
            }
            let priority = match cell(priority_at) {
                "" => 0,
                p => p.parse().map_err(|_| {
                    error(line, format!("Priority: expected a number, found `{p}`"))
                })?,
            };
            let mode = match cell(mode_at) {
                "" => None,
                m => Some(Mode::parse(m).ok_or_else(|| {
                    error(
                        line,
                        format!(
                            "PreemptMode: expected cluster, off, cancel, requeue or suspend \
                             (with gang or within if wanted), found `{m}`"
                        ),
                    )
                })?),
            }
            .filter(|m| !m.is_off());
            let preempt_exempt_time = match cell(exempt_at) {
                "" => None,
                t => parse_seconds(t)
                    .ok_or_else(|| {
                        error(
                            line,
                            format!(
                                "PreemptExemptTime: expected a time (MM:SS, HH:MM:SS, \
                                 D-HH:MM:SS, ...), found `{t}`"
                            ),
                        )
                    })?
                    .filter(|&s| s > 0),
            };
            let preempt = cell(preempt_at)
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect();
            rules.push((
                line,
                QosRule {
                    name: name.to_owned(),
                    priority,
                    preempt,
                    mode,
                    preempt_exempt_time,
                },
            ));
        }
        for (line, rule) in &rules {
            if let Some(unknown) = rule.preempt.iter().find(|p| !defined.contains_key(*p)) {
                return Err(error(
                    *line,
                    format!(
                        "Preempt: QOS `{}` may preempt `{unknown}`, which the table does not \
                         define",
                        rule.name
                    ),
                ));
            }
        }
        Ok(QosTable {
            rules: rules.into_iter().map(|(_, r)| r).collect(),
        })
    }

    /// The QOS named `name`, or [`DEFAULT_QOS`] when `name` is `None`.
    pub fn get(&self, name: Option<&str>) -> Option<&QosRule> {
        let name = name.unwrap_or(DEFAULT_QOS);
        self.rules.iter().find(|r| r.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<QosTable, String> {
        QosTable::parse(text, Path::new("qos.txt")).map_err(|e| e.to_string())
    }

    /// What `sacctmgr -P show qos format=Name,ID,Priority,Preempt,
    /// PreemptMode,PreemptExemptTime,GraceTime` printed on the anchor
    /// (Slurm 22.05.8) after `sacctmgr add qos high Priority=100
    /// Preempt=normal`.
    #[test]
    fn reads_sacctmgrs_table() {
        let t = parse(
            "Name|ID|Priority|Preempt|PreemptMode|PreemptExemptTime|GraceTime\n\
             normal|1|0||cluster||00:00:00\n\
             high|2|100|normal|cluster||00:00:00\n",
        )
        .unwrap();
        assert_eq!(t.rules.len(), 2);
        let high = t.get(Some("high")).unwrap();
        assert_eq!(high.priority, 100);
        assert_eq!(high.preempt, ["normal"]);
        assert_eq!(high.mode, None);
        assert_eq!(high.preempt_exempt_time, None);
        assert_eq!(t.get(None).unwrap().name, "normal");
        assert!(t.get(Some("gold")).is_none());
    }

    #[test]
    fn modes_exempt_times_and_trailing_bars() {
        let t = parse(
            "Name|Priority|Preempt|PreemptMode|PreemptExemptTime|\n\
             normal|0||requeue|00:05:00|\n\
             scavenger|0||suspend,gang|1-00:00:00|\n\
             high|10|normal,scavenger|off||\n",
        )
        .unwrap();
        let normal = t.get(Some("normal")).unwrap();
        assert!(normal.mode.is_some_and(|m| !m.is_off()));
        assert_eq!(normal.preempt_exempt_time, Some(300));
        assert_eq!(
            t.get(Some("scavenger")).unwrap().preempt_exempt_time,
            Some(86_400)
        );
        let high = t.get(Some("high")).unwrap();
        assert_eq!(high.mode, None, "off is the cluster's mode");
        assert_eq!(high.preempt, ["normal", "scavenger"]);
    }

    #[test]
    fn an_unreadable_table_names_its_file() {
        let e = QosTable::load(Path::new("/nonexistent/qos.txt")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/nonexistent/qos.txt: cannot read the QOS table: No such file or directory (os error 2)"
        );
    }

    // Issue 26 (readers stay linear): repeats and `Preempt` names were
    // searched for in every row before, quadratic in the rows; a table of
    // a megabyte and more (100,000 rows, each preempting the one before)
    // is read in one pass.
    #[test]
    fn a_large_table_is_read_in_one_pass() {
        let mut text = String::from("Name|Priority|Preempt\nq0|0|\n");
        for i in 1..100_000 {
            text.push_str(&format!("q{i}|{i}|q{}\n", i - 1));
        }
        assert!(text.len() > 1_000_000);
        let table = parse(&text).unwrap();
        assert_eq!(table.rules.len(), 100_000);
        assert_eq!(table.rules[99_999].preempt, ["q99998"]);
    }

    #[test]
    fn malformed_tables_name_the_line() {
        for (text, message) in [
            ("", "qos.txt: expected a header line naming the columns"),
            (
                "QOS|Priority\nnormal|0\n",
                "qos.txt:1: expected a `Name` column (sacctmgr -P show qos), found `QOS|Priority`",
            ),
            (
                "Name|Priority\nnormal|0|1\n",
                "qos.txt:2: expected 2 columns as the header names, found 3",
            ),
            (
                "Name|Priority\nnormal|high\n",
                "qos.txt:2: Priority: expected a number, found `high`",
            ),
            (
                "Name|PreemptMode\nnormal|kill\n",
                "qos.txt:2: PreemptMode: expected cluster, off, cancel, requeue or suspend (with \
                 gang or within if wanted), found `kill`",
            ),
            (
                "Name|PreemptExemptTime\nnormal|soon\n",
                "qos.txt:2: PreemptExemptTime: expected a time (MM:SS, HH:MM:SS, D-HH:MM:SS, \
                 ...), found `soon`",
            ),
            (
                "Name|Preempt\nnormal|\nhigh|gold\n",
                "qos.txt:3: Preempt: QOS `high` may preempt `gold`, which the table does not \
                 define",
            ),
            (
                "Name\nnormal\n\nnormal\n",
                "qos.txt:4: QOS `normal` is defined twice",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err(), message, "{text}");
        }
    }
}
