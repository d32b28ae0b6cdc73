//! `slurm-wasm priority sprio|sshare`: the tables Slurm's `sprio -l` and
//! `sshare -a -l` print, computed by a priority plugin for a scenario.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use slurm::show::{self, sshare};
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
    print!("{}", show::sprio::table(&rows, user_of));
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
        rows.push(sshare::Row {
            depth,
            account,
            user,
            raw_shares,
            usage: usage_of(id).cloned(),
        });
    }
    if as_json {
        let out: Vec<_> = rows
            .iter()
            .map(|sshare::Row { depth, account, user, raw_shares, usage: u }| {
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
    print!("{}", sshare::table(&rows));
    Ok(ExitCode::SUCCESS)
}
