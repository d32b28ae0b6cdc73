//! `slurm-wasm priority sprio|sshare`: the tables Slurm's `sprio -l` and
//! `sshare -a -l` print, computed by a priority plugin for a scenario.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::kinds::priority::{AssociationUsage, FactorsRequest, PriorityFactors};
use slurm_wasm_host::types::{Job, Shares};
use slurm_wasm_host::{Host, PluginSettings, PriorityPlugin, Services};

use crate::scenario::Scenario;

/// Loads the scenario's plugin with the clock at the scenario's `now`,
/// initialises it from the cluster, feeds it the tree and QOS, submits the
/// jobs (`set`, as the controller does at submission, keeping `lowest_prio`)
/// and runs one calculation pass (what the decay thread does every
/// PriorityCalcPeriod). Returns the jobs with their priorities.
fn prepared(scenario: &Scenario) -> anyhow::Result<(Host, PriorityPlugin, Vec<Job>)> {
    let services = Services {
        clock: Arc::new(VirtualClock::new(scenario.now)),
        ..Services::default()
    };
    let host = crate::commands::host(services)?;
    let plugin = PriorityPlugin::load(&host, &scenario.plugin, PluginSettings::default())?;
    plugin.init(&scenario.cluster.priority_config())?;
    plugin.update_qos(&scenario.qos_updates())?;
    plugin.update_associations(&scenario.association_updates())?;
    let mut lowest = 0xffff_0000;
    let mut jobs = scenario.jobs.clone();
    for job in &mut jobs {
        job.priority = plugin.assign(&mut lowest, job)?;
    }
    let ids: Vec<u32> = jobs
        .iter()
        .filter(|j| !j.direct_set_priority)
        .map(|j| j.job_id)
        .collect();
    for (id, priority) in plugin.calculate(&[], &ids)? {
        if let Some(job) = jobs.iter_mut().find(|j| j.job_id == id) {
            job.priority = priority;
        }
    }
    Ok((host, plugin, jobs))
}

/// Right-aligns (Slurm's `%.N`), cutting to the width.
fn right(text: &str, width: usize) -> String {
    let cut: String = text.chars().take(width).collect();
    format!("{cut:>width$}")
}

/// Left-aligns (Slurm's `%N`), cutting to the width.
fn left(text: &str, width: usize) -> String {
    let cut: String = text.chars().take(width).collect();
    format!("{cut:<width$}")
}

/// sprio's weighted TRES column: `name=value` for each TRES whose factor
/// is not exactly 0 (src/sprio/print.c's `_print_tres_weighted` skips those;
/// a factor that only rounds to 0 prints as `name=0`).
fn tres_text(tres: &[(String, f64)]) -> String {
    tres.iter()
        .filter(|(_, v)| *v != 0.0)
        .map(|(name, v)| format!("{name}={v:.0}"))
        .collect::<Vec<_>>()
        .join(",")
}

pub fn sprio(scenario: &Scenario, as_json: bool) -> anyhow::Result<ExitCode> {
    let (_host, plugin, jobs) = prepared(scenario)?;
    let request = FactorsRequest {
        job_ids: Vec::new(),
        user_ids: Vec::new(),
        partitions: Vec::new(),
    };
    let rows = plugin.get_priority_factors_list(&jobs, &request, 0)?;
    let user_of = |uid: u32| {
        scenario
            .associations
            .iter()
            .find(|a| a.user_id == Some(uid))
            .and_then(|a| a.user.clone())
            .unwrap_or_else(|| uid.to_string())
    };
    if as_json {
        let out: Vec<_> = rows
            .iter()
            .map(|r| row_json(r, &user_of(r.user_id)))
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
        right("JOBID", 15),
        left("PARTITION", 9),
        right("USER", 8),
        right("ACCOUNT", 8),
        right("PRIORITY", 10),
        right("SITE", 10),
        right("AGE", 10),
        right("ASSOC", 10),
        right("FAIRSHARE", 10),
        right("JOBSIZE", 10),
        right("PARTITION", 10),
        right("QOSNAME", 10),
        right("QOS", 10),
        right("NICE", 11),
        right("TRES", 20)
    );
    for r in &rows {
        println!(
            "{} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
            right(&r.job_id.to_string(), 15),
            left(&r.partition, 9),
            right(&user_of(r.user_id), 8),
            right(r.account.as_deref().unwrap_or(""), 8),
            right(&r.priority.to_string(), 10),
            right(&r.site.to_string(), 10),
            right(&format!("{:.0}", r.age), 10),
            right(&format!("{:.0}", r.association), 10),
            right(&format!("{:.0}", r.fair_share), 10),
            right(&format!("{:.0}", r.job_size), 10),
            right(&format!("{:.0}", r.partition_factor), 10),
            right(r.qos.as_deref().unwrap_or(""), 10),
            right(&format!("{:.0}", r.qos_factor), 10),
            right(&r.nice.to_string(), 11),
            right(&tres_text(&r.tres), 20)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn row_json(r: &PriorityFactors, user: &str) -> serde_json::Value {
    json!({
        "job_id": r.job_id, "partition": r.partition, "user": user, "account": r.account,
        "priority": r.priority, "direct_priority": r.direct_priority, "site": r.site,
        "age": r.age, "assoc": r.association, "fairshare": r.fair_share, "jobsize": r.job_size,
        "partition_factor": r.partition_factor, "qos": r.qos, "qos_factor": r.qos_factor,
        "nice": r.nice, "tres": r.tres.iter().map(|(n, v)| json!({"tres": n, "value": v})).collect::<Vec<_>>(),
    })
}

/// Depth-first order of the tree (children in definition order), with depths.
fn tree_order(scenario: &Scenario) -> Vec<(u32, usize)> {
    fn walk(scenario: &Scenario, id: u32, depth: usize, out: &mut Vec<(u32, usize)>) {
        out.push((id, depth));
        let children = scenario
            .associations
            .iter()
            .filter(|a| a.parent_id == Some(id));
        // Users before sub-accounts, as sshare lists them.
        let (users, accounts): (Vec<_>, Vec<_>) = children.partition(|a| a.user.is_some());
        for child in users.into_iter().chain(accounts) {
            walk(scenario, child.id, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(scenario, 1, 0, &mut out);
    out
}

pub fn sshare(scenario: &Scenario, as_json: bool) -> anyhow::Result<ExitCode> {
    let (_host, plugin, _jobs) = prepared(scenario)?;
    let usages: Vec<AssociationUsage> = plugin.association_usages()?;
    let usage_of = |id: u32| usages.iter().find(|u| u.id == id);
    let mut rows = Vec::new();
    for (id, depth) in tree_order(scenario) {
        let assoc = scenario
            .associations
            .iter()
            .find(|a| a.id == id)
            .expect("ids come from the tree");
        let (account, user) = scenario.names.get(&id).cloned().unwrap_or_default();
        let raw_shares = match assoc.shares {
            Shares::Raw(n) => n.to_string(),
            Shares::Parent => "parent".into(),
        };
        rows.push((depth, account, user, raw_shares, usage_of(id).cloned()));
    }
    if as_json {
        let out: Vec<_> = rows
            .iter()
            .map(|(depth, account, user, raw_shares, u)| {
                json!({
                    "depth": depth, "account": account, "user": user, "raw_shares": raw_shares,
                    "norm_shares": u.as_ref().map(|u| u.shares_norm), "raw_usage": u.as_ref().map(|u| u.usage_raw),
                    "norm_usage": u.as_ref().filter(|_| *depth > 0).map(|u| u.usage_norm), "effective_usage": u.as_ref().map(|u| u.usage_effective),
                    "fairshare": u.as_ref().map(|u| u.fair_share), "level_fs": u.as_ref().and_then(|u| u.level_fs),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{} {} {} {} {} {} {} {} {}",
        left("Account", 20),
        right("User", 10),
        right("RawShares", 10),
        right("NormShares", 11),
        right("RawUsage", 11),
        right("NormUsage", 11),
        right("EffectvUsage", 13),
        right("FairShare", 10),
        right("LevelFS", 10)
    );
    println!(
        "{} {} {} {} {} {} {} {} {}",
        "-".repeat(20),
        "-".repeat(10),
        "-".repeat(10),
        "-".repeat(11),
        "-".repeat(11),
        "-".repeat(11),
        "-".repeat(13),
        "-".repeat(10),
        "-".repeat(10)
    );
    // The root's NormUsage is left blank: slurmctld never computes it (it
    // keeps the NO_VAL of slurmdb_create_assoc_usage) and sshare prints
    // NO_VAL as nothing (print_fields_double). The plugin reports the
    // root's other figures as the association manager holds them.
    for (depth, account, user, raw_shares, u) in &rows {
        println!(
            "{}",
            sshare_line(*depth, account, user.as_deref(), raw_shares, u.as_ref())
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// One row of `sshare -a -l` (without the TRES columns): the account
/// indented by its depth, the user, raw and normalised shares, raw,
/// normalised and effective usage, fair-share (users only, as Fair Tree
/// prints it) and level fair-share. The root (depth 0) shows no raw shares
/// and no normalised usage.
fn sshare_line(
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
            sshare_line(0, "root", None, "1", Some(&root)),
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
            sshare_line(2, "teama", Some("alice"), "10", Some(&alice)),
            "  teama                   alice         10    0.243902         169    0.057770      0.680020   0.555556   0.358669"
        );
    }

    #[test]
    fn tres_factors_of_exactly_zero_are_left_out() {
        // Recorded sprio -l (tests/fixtures/anchor/priority/sample1): a
        // factor rounding to 0 prints (`mem=0`), one that is 0 does not
        // (job 86's `gres/gpu` is cut by the column, not absent).
        let tres = |list: &[(&str, f64)]| {
            list.iter()
                .map(|(n, v)| ((*n).to_string(), *v))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            tres_text(&tres(&[("cpu", 3.2), ("mem", 0.3), ("gres/gpu", 0.0)])),
            "cpu=3,mem=0"
        );
        assert_eq!(tres_text(&tres(&[("cpu", 0.0)])), "");
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
