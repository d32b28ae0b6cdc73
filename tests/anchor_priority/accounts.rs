//! The association tree and QOS table: `sacctmgr -P show assoc|qos` with
//! ids, and `scontrol show assoc_mgr flags=assoc` (what slurmctld holds:
//! inherited priorities, user ids, raw usage to 2 decimals).

use std::collections::HashMap;

use super::{integer, number, Parsed};

/// Raw shares of an association.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shares {
    Raw(u32),
    /// `FairShare=parent`.
    Parent,
}

/// `SLURMDB_FS_USE_PARENT`: how slurmctld stores `FairShare=parent`.
const FS_USE_PARENT: u32 = 0x7fff_ffff;

/// A row of `sacctmgr -P show assoc format=ID,Cluster,Account,User,ParentID,
/// ParentName,Share,Priority,QOS`.
#[derive(Debug, Clone, PartialEq)]
pub struct AssocRow {
    pub id: u32,
    pub account: String,
    pub user: Option<String>,
    /// None for root (sacctmgr prints 0).
    pub parent_id: Option<u32>,
    pub shares: Shares,
    /// Inherited from the parent when not set; None when no ancestor sets it.
    pub priority: Option<u32>,
    pub qos: Vec<String>,
}

/// A row of `sacctmgr -P show qos format=ID,Name,Priority,UsageFactor,Flags`.
#[derive(Debug, Clone, PartialEq)]
pub struct QosRow {
    pub id: u32,
    pub name: String,
    pub priority: u32,
    pub usage_factor: f64,
    pub flags: Vec<String>,
}

/// One association of `scontrol show assoc_mgr flags=assoc`.
#[derive(Debug, Clone, PartialEq)]
pub struct AssocMgrRecord {
    pub id: u32,
    pub account: String,
    pub user: Option<String>,
    pub uid: Option<u32>,
    /// 0 when no ancestor sets one.
    pub priority: u32,
    /// `FairShare=parent` as [`Shares::Parent`].
    pub shares: Shares,
    /// `usage_raw`, printed with `%.2Lf`.
    pub usage_raw: f64,
    /// Parent account and its association id; printed for accounts only.
    pub parent: Option<(String, u32)>,
}

/// An association as the plugin receives it: the tree from `sacctmgr`, the
/// user id and raw usage from slurmctld.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    pub id: u32,
    pub parent_id: Option<u32>,
    pub account: String,
    pub user: Option<String>,
    pub uid: Option<u32>,
    pub shares: Shares,
    pub priority: Option<u32>,
    pub usage_raw: f64,
}

/// Splits `|`-separated rows under their header into maps column -> field.
fn parsable_rows(text: &str) -> Parsed<Vec<HashMap<String, String>>> {
    let mut lines = text.lines().filter(|l| !l.is_empty());
    let columns: Vec<&str> = lines.next().ok_or("empty output")?.split('|').collect();
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split('|').collect();
            if fields.len() != columns.len() {
                return Err(format!(
                    "{} fields under {} columns: `{line}`",
                    fields.len(),
                    columns.len()
                ));
            }
            Ok(columns
                .iter()
                .zip(fields)
                .map(|(c, f)| ((*c).to_owned(), f.to_owned()))
                .collect())
        })
        .collect()
}

fn column<'a>(row: &'a HashMap<String, String>, name: &str) -> Parsed<&'a str> {
    row.get(name)
        .map(String::as_str)
        .ok_or(format!("no {name} column"))
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The rows of `sacctmgr -P show assoc format=ID,...` (see [`AssocRow`]).
pub fn parse_sacctmgr_assoc(text: &str) -> Parsed<Vec<AssocRow>> {
    parsable_rows(text)?
        .iter()
        .map(|row| {
            let parent_id: u32 = integer(column(row, "ParentID")?)?;
            Ok(AssocRow {
                id: integer(column(row, "ID")?)?,
                account: column(row, "Account")?.to_owned(),
                user: Some(column(row, "User")?)
                    .filter(|u| !u.is_empty())
                    .map(str::to_owned),
                parent_id: (parent_id != 0).then_some(parent_id),
                shares: match column(row, "Share")? {
                    "parent" => Shares::Parent,
                    v => Shares::Raw(integer(v)?),
                },
                priority: match column(row, "Priority")? {
                    "" => None,
                    v => Some(integer(v)?),
                },
                qos: list(column(row, "QOS")?),
            })
        })
        .collect()
}

/// The rows of `sacctmgr -P show qos format=ID,Name,Priority,UsageFactor,Flags`.
pub fn parse_sacctmgr_qos(text: &str) -> Parsed<Vec<QosRow>> {
    parsable_rows(text)?
        .iter()
        .map(|row| {
            Ok(QosRow {
                id: integer(column(row, "ID")?)?,
                name: column(row, "Name")?.to_owned(),
                priority: integer(column(row, "Priority")?)?,
                usage_factor: number(column(row, "UsageFactor")?)?,
                flags: list(column(row, "Flags")?),
            })
        })
        .collect()
}

/// `name(id)` as assoc_mgr prints users and parents; empty is None.
fn name_and_id(text: &str) -> Parsed<Option<(String, u32)>> {
    if text.is_empty() {
        return Ok(None);
    }
    let (name, id) = text
        .strip_suffix(')')
        .and_then(|t| t.split_once('('))
        .ok_or_else(|| format!("expected `name(id)`, found `{text}`"))?;
    Ok(Some((name.to_owned(), integer(id)?)))
}

/// The associations of `scontrol show assoc_mgr flags=assoc`: each record
/// starts at a `ClusterName=` line; its indented lines follow.
pub fn parse_assoc_mgr(text: &str) -> Parsed<Vec<AssocMgrRecord>> {
    let mut records = Vec::new();
    let mut fields: HashMap<String, String> = HashMap::new();
    let mut flush = |fields: &mut HashMap<String, String>| -> Parsed<()> {
        if !fields.is_empty() {
            records.push(assoc_mgr_record(fields)?);
            fields.clear();
        }
        Ok(())
    };
    for (i, line) in text.lines().enumerate() {
        let record_start = line.starts_with("ClusterName=");
        if record_start {
            flush(&mut fields).map_err(|e| format!("record before line {}: {e}", i + 1))?;
        }
        if record_start || (line.starts_with(' ') && !fields.is_empty()) {
            for item in line.split_whitespace() {
                if let Some((k, v)) = item.split_once('=') {
                    fields.insert(k.to_owned(), v.to_owned());
                }
            }
        }
    }
    flush(&mut fields).map_err(|e| format!("last record: {e}"))?;
    Ok(records)
}

fn assoc_mgr_record(fields: &HashMap<String, String>) -> Parsed<AssocMgrRecord> {
    let get = |k: &str| fields.get(k).map(String::as_str).ok_or(format!("no {k}="));
    let user = name_and_id(get("UserName")?)?;
    let shares_raw: u32 = integer(
        get("SharesRaw/Norm/Level/Factor")?
            .split('/')
            .next()
            .unwrap_or_default(),
    )?;
    let usage = get("UsageRaw/Norm/Efctv")?;
    Ok(AssocMgrRecord {
        id: integer(get("ID")?)?,
        account: get("Account")?.to_owned(),
        uid: user.as_ref().map(|(_, uid)| *uid),
        user: user.map(|(name, _)| name),
        priority: integer(get("Priority")?)?,
        shares: if shares_raw == FS_USE_PARENT {
            Shares::Parent
        } else {
            Shares::Raw(shares_raw)
        },
        usage_raw: number(usage.split('/').next().unwrap_or_default())?,
        parent: name_and_id(get("ParentAccount")?)?,
    })
}

/// The tree the plugin is given: every `sacctmgr` association with the user
/// id, priority and raw usage slurmctld holds for it. Fails when the two
/// disagree on an association's shares or priority, or one lacks it.
pub fn tree(rows: &[AssocRow], mgr: &[AssocMgrRecord]) -> Parsed<Vec<TreeNode>> {
    if rows.len() != mgr.len() {
        return Err(format!(
            "sacctmgr lists {} associations, assoc_mgr {}",
            rows.len(),
            mgr.len()
        ));
    }
    rows.iter()
        .map(|row| {
            let live = mgr
                .iter()
                .find(|m| m.id == row.id)
                .ok_or(format!("association {} is not in assoc_mgr", row.id))?;
            if (live.shares, live.priority) != (row.shares, row.priority.unwrap_or(0))
                || (&live.account, &live.user) != (&row.account, &row.user)
            {
                return Err(format!(
                    "association {}: sacctmgr {row:?}, assoc_mgr {live:?}",
                    row.id
                ));
            }
            Ok(TreeNode {
                id: row.id,
                parent_id: row.parent_id,
                account: row.account.clone(),
                user: row.user.clone(),
                uid: live.uid,
                shares: row.shares,
                priority: row.priority,
                usage_raw: live.usage_raw,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MGR: &str = "Current Association Manager state

Association Records

ClusterName=anchor Account=teama UserName= Partition= Priority=10 ID=3
    SharesRaw/Norm/Level/Factor=40/0.65/62/0.00
    UsageRaw/Norm/Efctv=12.34/0.00/0.00
    ParentAccount=root(1) Lft=6 DefAssoc=No
    GrpJobs=N(0) GrpJobsAccrue=N(0)
ClusterName=anchor Account=genomics UserName= Partition= Priority=5 ID=9
    SharesRaw/Norm/Level/Factor=2147483647/0.32/6/0.00
    UsageRaw/Norm/Efctv=0.00/0.00/0.00
    ParentAccount=teamb(4) Lft=19 DefAssoc=No
ClusterName=anchor Account=teama UserName=alice(1001) Partition= Priority=10 ID=6
    SharesRaw/Norm/Level/Factor=10/0.24/41/1.00
    UsageRaw/Norm/Efctv=12.34/0.00/0.00
    ParentAccount= Lft=13 DefAssoc=Yes
";

    #[test]
    fn assoc_mgr_records() {
        let records = parse_assoc_mgr(MGR).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[0].parent, Some(("root".into(), 1)));
        assert_eq!(
            (records[0].usage_raw, records[0].shares),
            (12.34, Shares::Raw(40))
        );
        assert_eq!(records[1].shares, Shares::Parent);
        let alice = &records[2];
        assert_eq!(
            (alice.user.as_deref(), alice.uid),
            (Some("alice"), Some(1001))
        );
        assert_eq!((alice.priority, alice.parent.clone()), (10, None));
    }

    #[test]
    fn sacctmgr_rows_join_assoc_mgr() {
        let rows = parse_sacctmgr_assoc(
            "ID|Cluster|Account|User|ParentID|ParentName|Share|Priority|QOS
3|anchor|teama||1|root|40|10|normal
9|anchor|genomics||4|teamb|parent|5|normal
6|anchor|teama|alice|3||10|10|high,low,normal
",
        )
        .unwrap();
        assert_eq!(rows[2].qos, ["high", "low", "normal"]);
        let tree = tree(&rows, &parse_assoc_mgr(MGR).unwrap()).unwrap();
        assert_eq!(tree[2].parent_id, Some(3));
        assert_eq!((tree[2].uid, tree[2].usage_raw), (Some(1001), 12.34));
        assert_eq!(tree[1].shares, Shares::Parent);

        let mut wrong = rows.clone();
        wrong[0].priority = Some(11);
        assert!(super::tree(&wrong, &parse_assoc_mgr(MGR).unwrap())
            .unwrap_err()
            .starts_with("association 3"));
    }

    #[test]
    fn qos_rows() {
        let qos = parse_sacctmgr_qos(
            "ID|Name|Priority|UsageFactor|Flags\n2|high|100|1.000000|NoDecay,DenyOnLimit\n",
        )
        .unwrap();
        assert_eq!(
            (qos[0].id, qos[0].name.as_str(), qos[0].priority),
            (2, "high", 100)
        );
        assert_eq!((qos[0].usage_factor, qos[0].flags.len()), (1.0, 2));
    }
}
