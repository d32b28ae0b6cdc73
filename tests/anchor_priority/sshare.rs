//! `sshare -a -l -P`: the association tree with shares, usage and fair-share.
//!
//! Columns (Fair Tree, Slurm 22.05): `Account|User|RawShares|NormShares|
//! RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|
//! TRESRunMins`. The account is indented by one space per level below root;
//! doubles are printed with `%f` (6 decimals), raw usage truncated to an
//! integer. An empty field is a value sshare leaves out: root's raw shares
//! and normalised usage, an account's fair-share, the level fair-share of a
//! `FairShare=parent` account.

use std::collections::HashMap;

use super::accounts::Shares;
use super::{integer, number, Parsed};

/// One row of `sshare -a -l -P`.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareRow {
    /// Levels below root (root 0), from the indentation.
    pub depth: usize,
    pub account: String,
    /// Set on user rows.
    pub user: Option<String>,
    pub raw_shares: Option<Shares>,
    pub norm_shares: f64,
    /// `usage_raw` truncated to an integer.
    pub raw_usage: u64,
    pub norm_usage: Option<f64>,
    pub effective_usage: f64,
    pub fair_share: Option<f64>,
    /// Infinity for `inf`.
    pub level_fs: Option<f64>,
}

/// The rows of `sshare -a -l -P` (header first), in tree order.
pub fn parse_parsable(text: &str) -> Parsed<Vec<ShareRow>> {
    let mut lines = text.lines().enumerate();
    let (_, header) = lines.next().ok_or("empty output")?;
    let columns: Vec<&str> = header.split('|').collect();
    lines
        .filter(|(_, line)| !line.is_empty())
        .map(|(i, line)| {
            let fields: Vec<&str> = line.split('|').collect();
            if fields.len() != columns.len() {
                return Err(format!(
                    "line {}: {} fields, expected {}",
                    i + 1,
                    fields.len(),
                    columns.len()
                ));
            }
            let get: HashMap<&str, &str> = columns.iter().copied().zip(fields).collect();
            share_row(&get).map_err(|e| format!("line {}: {e}", i + 1))
        })
        .collect()
}

fn share_row(get: &HashMap<&str, &str>) -> Parsed<ShareRow> {
    let field = |name: &str| get.get(name).copied().ok_or(format!("no {name} column"));
    let optional = |name: &str| -> Parsed<Option<f64>> {
        match field(name)? {
            "" => Ok(None),
            v => number(v).map(Some),
        }
    };
    let account = field("Account")?;
    let name = account.trim_start_matches(' ');
    Ok(ShareRow {
        depth: account.len() - name.len(),
        account: name.to_owned(),
        user: Some(field("User")?)
            .filter(|u| !u.is_empty())
            .map(str::to_owned),
        raw_shares: match field("RawShares")? {
            "" => None,
            "parent" => Some(Shares::Parent),
            v => Some(Shares::Raw(integer(v)?)),
        },
        norm_shares: number(field("NormShares")?)?,
        raw_usage: integer(field("RawUsage")?)?,
        norm_usage: optional("NormUsage")?,
        effective_usage: number(field("EffectvUsage")?)?,
        fair_share: optional("FairShare")?,
        // sshare prints LevelFS under Fair Tree only (classic has no levels)
        level_fs: match get.get("LevelFS") {
            Some(_) => optional("LevelFS")?,
            None => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_depth_parent_shares_and_blank_fields() {
        let text = "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins
root|||0.000000|2421||1.000000||||cpu=0
 root|root|1|0.016129|0|0.000000|0.000000|1.000000|inf||cpu=0
  genomics||parent|0.322581|0|0.000000|0.000000||||cpu=0
   genomics|erin|2|0.333333|17|0.002000|0.100000|0.333333|0.5||cpu=0
";
        let rows = parse_parsable(text).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(
            (rows[0].depth, rows[0].raw_shares, rows[0].norm_usage),
            (0, None, None)
        );
        assert_eq!(rows[1].user.as_deref(), Some("root"));
        assert_eq!(rows[1].level_fs, Some(f64::INFINITY));
        assert_eq!(
            (rows[2].depth, rows[2].raw_shares),
            (2, Some(Shares::Parent))
        );
        assert_eq!((rows[2].fair_share, rows[2].level_fs), (None, None));
        let erin = &rows[3];
        assert_eq!((erin.depth, erin.account.as_str()), (3, "genomics"));
        assert_eq!(
            (erin.raw_shares, erin.raw_usage),
            (Some(Shares::Raw(2)), 17)
        );
        assert_eq!((erin.norm_usage, erin.effective_usage), (Some(0.002), 0.1));
        assert_eq!(
            (erin.fair_share, erin.level_fs),
            (Some(0.333333), Some(0.5))
        );
        assert!(parse_parsable("A|B\nx\n").unwrap_err().contains("1 fields"));
    }
}
