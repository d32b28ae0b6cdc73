//! `sprio` output: rows of priority factors, and the weights line.
//!
//! Slurm 22.05's long format is `%.15i %9r %.8u %.10Y %.10S %.10A %.10B
//! %.10F %.10J %.10P %.10Q %.11N %.20T` (weighted: factors times their
//! weights, printed with `%.0f`, the total truncated) and, with `-n`, `%.15i
//! %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t` (normalised: factors to
//! 7 decimals, TRES to 2). Later versions add `ACCOUNT` and `QOSNAME`
//! columns; [`parse_columns`] reads whichever columns the header names.

use std::collections::HashMap;

use super::{integer, number, Parsed};

/// One row of `sprio`: one job in one partition.
#[derive(Debug, Clone, PartialEq)]
pub struct SprioRow {
    pub job_id: u32,
    pub partition: String,
    /// Cut to 8 characters by the long format.
    pub user: String,
    /// `ACCOUNT`, in formats that have it (not 22.05's).
    pub account: Option<String>,
    /// `QOSNAME`, in formats that have it (not 22.05's).
    pub qos_name: Option<String>,
    /// Weighted: the truncated total, or a direct `--priority`. Normalised:
    /// the total over 0xffffffff, or the direct priority.
    pub priority: f64,
    /// Site factor (`SITE`); absent from the normalised long format.
    pub site: Option<i64>,
    pub age: f64,
    pub assoc: f64,
    pub fair_share: f64,
    pub job_size: f64,
    pub partition_factor: f64,
    pub qos: f64,
    /// Nice (`NICE`); absent from the normalised long format.
    pub nice: Option<i64>,
    /// TRES factors by name, in Slurm's TRES order.
    pub tres: Vec<(String, f64)>,
    /// The TRES column filled its width (20 characters in the long
    /// formats): entries past the last complete one are lost and the last
    /// may be cut inside its number.
    pub tres_cut: bool,
}

/// The `Weights` line of `sprio -w`.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    /// Column name (`AGE`, `FAIRSHARE`, ...) to weight; `TRES` excluded.
    pub factors: HashMap<String, u32>,
    /// `TRES` as printed (cut at 20 characters).
    pub tres: String,
}

impl Weights {
    /// The weight of a factor column; 0 when `sprio -w` leaves the column
    /// out (sprio.c shows a factor's column only when its weight is set).
    pub fn factor(&self, name: &str) -> u32 {
        self.factors.get(name).copied().unwrap_or(0)
    }
}

/// The width of the TRES column in both long formats.
const LONG_TRES_WIDTH: usize = 20;

/// Rows of `sprio -l` or `sprio -n -l`: whitespace-separated columns named
/// by the header. The first `PARTITION` column is the partition's name, the
/// second its factor. A row one field short has an empty `TRES` (a job with
/// a direct priority).
pub fn parse_columns(text: &str) -> Parsed<Vec<SprioRow>> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().ok_or("empty output")?;
    let columns: Vec<&str> = header.split_whitespace().collect();
    lines
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let mut fields: Vec<&str> = line.split_whitespace().collect();
            if columns.last() == Some(&"TRES") && fields.len() + 1 == columns.len() {
                fields.push("");
            }
            if fields.len() != columns.len() {
                return Err(format!(
                    "line {}: {} fields under {} columns: `{line}`",
                    i + 1,
                    fields.len(),
                    columns.len()
                ));
            }
            row(&columns, &fields, LONG_TRES_WIDTH).map_err(|e| format!("line {}: {e}", i + 1))
        })
        .collect()
}

/// The fields of the `|`-separated formats `record.sh` asks for, no header:
/// weighted `%i|%r|%u|%Y|%S|%A|%B|%F|%J|%P|%Q|%N|%T` or normalised
/// `%i|%r|%u|%y|%S|%a|%b|%f|%j|%p|%q|%N|%t`. TRES are never cut.
pub const PIPE_COLUMNS: [&str; 13] = [
    "JOBID",
    "PARTITION",
    "USER",
    "PRIORITY",
    "SITE",
    "AGE",
    "ASSOC",
    "FAIRSHARE",
    "JOBSIZE",
    "PARTITION",
    "QOS",
    "NICE",
    "TRES",
];

/// Rows of the `|`-separated formats ([`PIPE_COLUMNS`]).
pub fn parse_pipe(text: &str) -> Parsed<Vec<SprioRow>> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let fields: Vec<&str> = line.split('|').collect();
            if fields.len() != PIPE_COLUMNS.len() {
                return Err(format!(
                    "line {}: {} fields, expected {}: `{line}`",
                    i + 1,
                    fields.len(),
                    PIPE_COLUMNS.len()
                ));
            }
            row(&PIPE_COLUMNS, &fields, usize::MAX).map_err(|e| format!("line {}: {e}", i + 1))
        })
        .collect()
}

/// `sprio -w`: a header and a `Weights` row, in whitespace columns. Columns
/// with no weight printed (`JOBID`, `PARTITION`, `PRIORITY`) are skipped by
/// aligning the row to the header from the right.
pub fn parse_weights(text: &str) -> Parsed<Weights> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .ok_or("empty output")?
        .split_whitespace()
        .collect();
    let line = lines.next().ok_or("no Weights line")?;
    let values: Vec<&str> = line.split_whitespace().collect();
    if values.first() != Some(&"Weights") {
        return Err(format!("expected a `Weights` row, found `{line}`"));
    }
    let values = &values[1..];
    let offset = header
        .len()
        .checked_sub(values.len())
        .ok_or_else(|| format!("more weights than columns: `{line}`"))?;
    let mut factors = HashMap::new();
    let mut tres = String::new();
    for (name, value) in header[offset..].iter().zip(values) {
        if *name == "TRES" {
            tres = (*value).to_owned();
        } else {
            factors.insert((*name).to_owned(), integer(value)?);
        }
    }
    Ok(Weights { factors, tres })
}

/// One row from its fields under the named columns.
fn row(columns: &[&str], fields: &[&str], tres_width: usize) -> Parsed<SprioRow> {
    let mut partitions = Vec::new();
    let mut get = HashMap::new();
    for (column, field) in columns.iter().zip(fields) {
        if *column == "PARTITION" {
            partitions.push(*field);
        } else {
            get.insert(*column, *field);
        }
    }
    let [partition, partition_factor] = partitions[..] else {
        return Err(format!(
            "expected two PARTITION columns, found {}",
            partitions.len()
        ));
    };
    let field = |name: &str| get.get(name).copied().ok_or(format!("no {name} column"));
    let optional = |name: &str| get.get(name).map(|v| (*v).to_owned());
    let tres_text = field("TRES")?;
    Ok(SprioRow {
        job_id: integer(field("JOBID")?)?,
        partition: partition.to_owned(),
        user: field("USER")?.to_owned(),
        account: optional("ACCOUNT"),
        qos_name: optional("QOSNAME"),
        priority: number(field("PRIORITY")?)?,
        site: get.get("SITE").map(|v| integer(v)).transpose()?,
        age: number(field("AGE")?)?,
        assoc: number(field("ASSOC")?)?,
        fair_share: number(field("FAIRSHARE")?)?,
        job_size: number(field("JOBSIZE")?)?,
        partition_factor: number(partition_factor)?,
        qos: number(field("QOS")?)?,
        nice: get.get("NICE").map(|v| integer(v)).transpose()?,
        tres: tres_list(tres_text)?,
        tres_cut: tres_text.len() >= tres_width,
    })
}

/// `cpu=3,mem=0,gres/gpu=62` as pairs; an entry without `=` (cut by the
/// column width) is dropped.
fn tres_list(text: &str) -> Parsed<Vec<(String, f64)>> {
    text.split(',')
        .filter_map(|item| item.split_once('='))
        .map(|(name, value)| Ok((name.to_owned(), number(value)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: &str = "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES
             14 big           dave       3158          0        128        250       2000        111        500        100           0 cpu=6,mem=0,gres/gpu
             17 big          carol        999          0          0          0          0          0          0          0           0                     
";

    #[test]
    fn long_rows_name_partition_and_factor_and_keep_cut_tres_apart() {
        let rows = parse_columns(LONG).unwrap();
        assert_eq!(rows.len(), 2);
        let dave = &rows[0];
        assert_eq!((dave.job_id, dave.partition.as_str()), (14, "big"));
        assert_eq!((dave.partition_factor, dave.qos), (500.0, 100.0));
        assert_eq!((dave.site, dave.nice), (Some(0), Some(0)));
        assert_eq!(dave.tres, [("cpu".into(), 6.0), ("mem".into(), 0.0)]);
        assert!(dave.tres_cut, "`gres/gpu=62` was cut to `gres/gpu`");
        let direct = &rows[1];
        assert_eq!((direct.priority, direct.age), (999.0, 0.0));
        assert!(direct.tres.is_empty() && !direct.tres_cut);
        assert_eq!(
            (direct.account.as_deref(), direct.qos_name.as_deref()),
            (None, None)
        );
    }

    #[test]
    fn later_formats_with_account_and_qos_name_columns() {
        let text = "JOBID PARTITION USER ACCOUNT PRIORITY SITE AGE ASSOC FAIRSHARE JOBSIZE PARTITION QOSNAME QOS NICE TRES
7 debug u1 a1 7442 0 142 0 5000 100 1000 high 1000 0 cpu=200
";
        let row = &parse_columns(text).unwrap()[0];
        assert_eq!(row.account.as_deref(), Some("a1"));
        assert_eq!(row.qos_name.as_deref(), Some("high"));
        assert_eq!((row.fair_share, row.partition_factor), (5000.0, 1000.0));
    }

    #[test]
    fn pipe_rows_and_weights() {
        let rows =
            parse_pipe("14|big|dave|3158|0|128|250|2000|111|500|100|0|cpu=6,mem=0,gres/gpu=62\n")
                .unwrap();
        assert_eq!(rows[0].tres.last(), Some(&("gres/gpu".into(), 62.0)));
        assert!(!rows[0].tres_cut);
        assert!(parse_pipe("1|big\n").unwrap_err().contains("2 fields"));

        let weights = parse_weights("          JOBID PARTITION   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  PARTITION        QOS                 TRES
        Weights                               1       1000        500       2000       1000       1000       1000 CPU=100,Mem=1,GRES/g
").unwrap();
        assert_eq!(weights.factors["AGE"], 1000);
        assert_eq!(weights.factors["SITE"], 1);
        assert_eq!(weights.factors["PARTITION"], 1000);
        assert_eq!(weights.tres, "CPU=100,Mem=1,GRES/g");
    }
}
