//! The table `sshare -a -l` prints (22.05 src/sshare/process.c), without
//! the TRES columns: the association tree with shares, usage and
//! fair-share.

use slurm_wasm_host::kinds::priority::AssociationUsage;

use super::{left, right};

/// One association of the table, in tree order.
#[derive(Debug, Clone)]
pub struct Row {
    /// Its depth in the tree (the root is 0).
    pub depth: usize,
    /// Its account.
    pub account: String,
    /// Its user, for a user association.
    pub user: Option<String>,
    /// `RawShares` as written (a number, or `parent`).
    pub raw_shares: String,
    /// What the priority plugin reports for it.
    pub usage: Option<AssociationUsage>,
}

/// `sshare -a -l` of `rows`, header and rule included.
///
/// The root's NormUsage is left blank: slurmctld never computes it (it
/// keeps the NO_VAL of slurmdb_create_assoc_usage) and sshare prints
/// NO_VAL as nothing (print_fields_double). The plugin reports the root's
/// other figures as the association manager holds them.
pub fn table(rows: &[Row]) -> String {
    let widths = [20, 10, 10, 11, 11, 11, 13, 10, 10];
    let titles = [
        "Account",
        "User",
        "RawShares",
        "NormShares",
        "RawUsage",
        "NormUsage",
        "EffectvUsage",
        "FairShare",
        "LevelFS",
    ];
    let header: Vec<String> = titles
        .iter()
        .zip(widths)
        .enumerate()
        .map(|(i, (t, w))| if i == 0 { left(t, w) } else { right(t, w) })
        .collect();
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    let mut out = format!("{}\n{}\n", header.join(" "), rule.join(" "));
    for r in rows {
        out.push_str(&line(
            r.depth,
            &r.account,
            r.user.as_deref(),
            &r.raw_shares,
            r.usage.as_ref(),
        ));
        out.push('\n');
    }
    out
}

/// One row of `sshare -a -l` (without the TRES columns): the account
/// indented by its depth, the user, raw and normalised shares, raw,
/// normalised and effective usage, fair-share (users only, as Fair Tree
/// prints it) and level fair-share. The root (depth 0) shows no raw shares
/// and no normalised usage.
fn line(
    depth: usize,
    account: &str,
    user: Option<&str>,
    raw_shares: &str,
    u: Option<&AssociationUsage>,
) -> String {
    let indent = " ".repeat(depth);
    let fmt = |v: Option<f64>| {
        v.map_or(String::new(), |v| {
            if v.is_infinite() {
                "inf".into()
            } else {
                format!("{v:.6}")
            }
        })
    };
    format!(
        "{} {} {} {} {} {} {} {} {}",
        left(&format!("{indent}{account}"), 20),
        right(user.unwrap_or(""), 10),
        right(if depth == 0 { "" } else { raw_shares }, 10),
        right(&fmt(u.map(|u| u.shares_norm)), 11),
        right(
            &u.map_or(String::new(), |u| raw_usage_text(u.usage_raw)),
            11
        ),
        right(&fmt(u.filter(|_| depth > 0).map(|u| u.usage_norm)), 11),
        right(&fmt(u.map(|u| u.usage_effective)), 13),
        right(&fmt(u.filter(|_| user.is_some()).map(|u| u.fair_share)), 10),
        right(&fmt(u.and_then(|u| u.level_fs)), 10)
    )
}

/// sshare's RawUsage: the controller sends the association's usage as a
/// whole number, cut towards zero (`share->usage_raw =
/// (uint64_t)assoc->usage->usage_raw` in assoc_mgr.c's
/// `assoc_mgr_get_shares`), so 1906.7 prints 1906; a negative or NaN usage
/// (which the cast leaves undefined) prints 0.
fn raw_usage_text(usage_raw: f64) -> String {
    if usage_raw.is_nan() || usage_raw <= 0.0 {
        "0".into()
    } else {
        (usage_raw.trunc() as u64).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root row and a user row of the recorded `sshare -a -l`
    /// (tests/fixtures/anchor/priority/sample1/sshare-al.txt, Fair Tree),
    /// up to the TRES columns this table does not have, from the figures
    /// priority/multifactor reports for them.
    #[test]
    fn sshare_rows_print_as_slurm_prints_them() {
        let usage = |usage_raw, usage_norm, usage_effective, shares_norm, fair_share, level_fs| {
            AssociationUsage {
                id: 1,
                usage_raw,
                usage_norm,
                usage_effective,
                shares_norm,
                fair_share,
                level_fs,
            }
        };
        // The root as the plugin reports it: shares / NO_VAL, effective 1;
        // its normalised usage (a ratio of 1) is not shown.
        let root = usage(2936.4, 1.0, 1.0, 1.0 / 4_294_967_294.0, 0.0, None);
        assert_eq!(
            line(0, "root", None, "1", Some(&root)),
            "root                                          0.000000        2936                  1.000000                      "
        );
        let alice = usage(
            169.9,
            0.057770,
            0.680020,
            0.243902,
            0.555556,
            Some(0.358669),
        );
        assert_eq!(
            line(2, "teama", Some("alice"), "10", Some(&alice)),
            "  teama                   alice         10    0.243902         169    0.057770      0.680020   0.555556   0.358669"
        );
    }

    #[test]
    fn raw_usage_is_cut_not_rounded() {
        // An unseen 22.05.8 stream printed 1906 where rounding gives 1907.
        assert_eq!(raw_usage_text(1906.7), "1906");
        assert_eq!(raw_usage_text(1906.0), "1906");
        assert_eq!(raw_usage_text(0.9), "0");
        assert_eq!(raw_usage_text(-3.0), "0");
        assert_eq!(raw_usage_text(f64::NAN), "0");
    }
}
