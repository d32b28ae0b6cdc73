//! A priority scenario: a cluster (`slurm.conf`), an association tree, QOS
//! and pending jobs, described in one TOML file for `slurm-wasm priority`.
//!
//! ```toml
//! now = 1700000000            # when priorities are computed (default: now)
//! slurm_conf = "slurm.conf"   # nodes, partitions, Priority* options (relative to this file)
//! plugin = "priority/multifactor"  # bundled type or a .wasm path (default: PriorityType)
//!
//! [options]                   # slurm.conf options to add or override
//! PriorityWeightFairshare = 2000
//!
//! [[account]]
//! name = "physics"            # parent = "root" unless given
//! shares = 40                 # or "parent" (FairShare=parent)
//!                             # (an account's usage is the sum of its users')
//!
//! [[user]]
//! name = "alice"
//! account = "physics"
//! shares = 1
//! usage = 3600.0              # raw usage, CPU-seconds
//!
//! [[qos]]
//! name = "high"
//! priority = 100
//!
//! [[job]]
//! id = 1
//! user = "alice"              # account = the user's first association unless given
//! partition = "big"           # default: the default partition
//! submit = 1699990000         # eligible = submit unless given
//! cpus = 4                    # nodes = 1, time_limit (minutes), nice, qos, priority (direct)
//! ```
//!
//! Errors name the file and what is wrong (toml's errors carry the line):
//! an undefined account, user, partition or QOS, a user in an account
//! twice, a usage or usage factor that is not a finite number of at least
//! 0. Reading is linear in the file: names are looked up in maps, and the
//! accounts' usages are summed in one pass from the leaves up.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use serde::Deserialize;
use slurm::job_request::JobRequest;
use slurm::setup::accounting;
use slurm::setup::records::Cluster;
use slurm::slurm_conf;
use slurm_wasm_host::kinds::priority::{AssociationUpdate, QosUpdate};
use slurm_wasm_host::types::{Association, Job, KeyValue, Qos, Shares, TresAmount};
use slurm_wasm_host::PluginSource;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    now: Option<i64>,
    slurm_conf: PathBuf,
    plugin: Option<String>,
    #[serde(default)]
    options: BTreeMap<String, toml::Value>,
    #[serde(default)]
    account: Vec<AccountEntry>,
    #[serde(default)]
    user: Vec<UserEntry>,
    #[serde(default)]
    qos: Vec<QosEntry>,
    #[serde(default)]
    job: Vec<JobEntry>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SharesEntry {
    Raw(u32),
    Parent(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountEntry {
    name: String,
    parent: Option<String>,
    shares: Option<SharesEntry>,
    priority: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserEntry {
    name: String,
    account: String,
    uid: Option<u32>,
    shares: Option<SharesEntry>,
    #[serde(default)]
    usage: f64,
    priority: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QosEntry {
    name: String,
    #[serde(default)]
    priority: u32,
    #[serde(default = "one")]
    usage_factor: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobEntry {
    id: u32,
    user: String,
    account: Option<String>,
    partition: Option<String>,
    qos: Option<String>,
    submit: i64,
    eligible: Option<i64>,
    #[serde(default = "one_u32")]
    nodes: u32,
    #[serde(default = "one_u32")]
    cpus: u32,
    mem: Option<u64>,
    #[serde(default)]
    gpus: u64,
    time_limit: Option<u32>,
    #[serde(default)]
    nice: i32,
    priority: Option<u32>,
}

fn one_u32() -> u32 {
    1
}

/// A scenario ready to feed a priority plugin.
pub struct Scenario {
    pub now: i64,
    pub plugin: PluginSource,
    pub cluster: Cluster,
    pub associations: Vec<Association>,
    pub qos: Vec<Qos>,
    pub jobs: Vec<Job>,
    /// `(account, user)` of each association id, for tables.
    pub names: BTreeMap<u32, (String, Option<String>)>,
}

impl Scenario {
    pub fn association_updates(&self) -> Vec<AssociationUpdate> {
        self.associations
            .iter()
            .cloned()
            .map(AssociationUpdate::Upsert)
            .collect()
    }

    pub fn qos_updates(&self) -> Vec<QosUpdate> {
        self.qos.iter().cloned().map(QosUpdate::Upsert).collect()
    }
}

/// Reads and checks a scenario file.
pub fn load(path: &Path) -> anyhow::Result<Scenario> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let file: File = toml::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    build(file, base).map_err(|e| anyhow!("{}: {e:#}", path.display()))
}

fn shares(entry: Option<SharesEntry>) -> anyhow::Result<Shares> {
    match entry {
        None => Ok(Shares::Raw(1)),
        Some(SharesEntry::Raw(n)) => Ok(Shares::Raw(n)),
        Some(SharesEntry::Parent(word)) if word.eq_ignore_ascii_case("parent") => {
            Ok(Shares::Parent)
        }
        Some(SharesEntry::Parent(word)) => {
            bail!("shares = {word:?}: expected a number or \"parent\"")
        }
    }
}

fn option_text(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn build(file: File, base: &Path) -> anyhow::Result<Scenario> {
    let conf = slurm_conf::load(&base.join(&file.slurm_conf))?;
    let mut cluster = Cluster::from_slurm_conf(&conf)?;
    // The scenario's options replace slurm.conf's of the same key (any
    // case): removed in one pass, then added.
    let overridden: HashSet<String> = file
        .options
        .keys()
        .map(|k| k.to_ascii_lowercase())
        .collect();
    cluster
        .config
        .raw
        .retain(|kv| !overridden.contains(&kv.key.to_ascii_lowercase()));
    for (key, value) in &file.options {
        cluster.config.raw.push(KeyValue {
            key: key.clone(),
            value: option_text(value),
        });
    }
    let plugin_name = file
        .plugin
        .or_else(|| conf.priority_type().map(str::to_owned))
        .unwrap_or_else(|| "priority/multifactor".into());
    let plugin = if plugin_name.ends_with(".wasm") {
        PluginSource::File(base.join(plugin_name))
    } else if slurm_wasm_bundled::find(&plugin_name).is_some() {
        PluginSource::Bundled(plugin_name)
    } else {
        bail!(
            "the priority plugin {plugin_name} is not bundled in slurm-wasm (bundled: {}): \
             name its component in the scenario with `plugin = \"path/to/plugin.wasm\"`",
            slurm_wasm_bundled::names()
                .split(", ")
                .filter(|n| n.starts_with("priority/"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    };

    let mut names = BTreeMap::new();
    let mut associations = vec![accounting::association(1, None, "root", None)];
    names.insert(1, ("root".to_owned(), None));
    let mut account_ids: BTreeMap<String, u32> = BTreeMap::from([("root".to_owned(), 1)]);
    for account in file.account {
        let parent_name = account.parent.clone().unwrap_or_else(|| "root".into());
        let parent = *account_ids.get(&parent_name).ok_or_else(|| {
            anyhow!(
                "account {}: parent account {parent_name} is not defined before it",
                account.name
            )
        })?;
        if account_ids.contains_key(&account.name) {
            bail!("account {} is defined twice", account.name);
        }
        let id = associations.len() as u32 + 1;
        let mut assoc = accounting::association(id, Some(parent), &account.name, None);
        assoc.shares =
            shares(account.shares).with_context(|| format!("account {}", account.name))?;
        assoc.priority = account.priority;
        associations.push(assoc);
        account_ids.insert(account.name.clone(), id);
        names.insert(id, (account.name, None));
    }
    let mut user_assocs: BTreeMap<(String, String), u32> = BTreeMap::new();
    let mut uids: BTreeMap<String, u32> = BTreeMap::new();
    for user in file.user {
        let parent = *account_ids.get(&user.account).ok_or_else(|| {
            anyhow!(
                "user {}: account {} is not defined",
                user.name,
                user.account
            )
        })?;
        if !(user.usage.is_finite() && user.usage >= 0.0) {
            bail!(
                "user {}: usage = {}: expected a finite number of CPU-seconds, at least 0",
                user.name,
                user.usage
            );
        }
        let id = associations.len() as u32 + 1;
        let next_uid = 1000 + uids.len() as u32;
        let uid = *uids
            .entry(user.name.clone())
            .or_insert(user.uid.unwrap_or(next_uid));
        let mut assoc =
            accounting::association(id, Some(parent), &user.account, Some((&user.name, uid)));
        assoc.shares = shares(user.shares).with_context(|| format!("user {}", user.name))?;
        assoc.usage_raw = user.usage;
        assoc.priority = user.priority;
        associations.push(assoc);
        if user_assocs
            .insert((user.name.clone(), user.account.clone()), id)
            .is_some()
        {
            bail!("user {} is in account {} twice", user.name, user.account);
        }
        names.insert(id, (user.account, Some(user.name)));
    }
    roll_up(&mut associations);

    if let Some(q) = file
        .qos
        .iter()
        .find(|q| !(q.usage_factor.is_finite() && q.usage_factor >= 0.0))
    {
        bail!(
            "qos {}: usage_factor = {}: expected a finite number, at least 0",
            q.name,
            q.usage_factor
        );
    }
    let mut qos: Vec<Qos> = file
        .qos
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let mut entry = accounting::qos(i as u32 + 1, &q.name);
            entry.priority = q.priority;
            entry.usage_factor = q.usage_factor;
            entry
        })
        .collect();
    if !qos.iter().any(|q| q.name == "normal") {
        qos.push(accounting::qos(qos.len() as u32 + 1, "normal"));
    }

    let default_partition = conf.default_partition().map(|p| p.name.clone());
    let lookup = Lookup {
        cluster: &cluster,
        user_assocs: &user_assocs,
        uids: &uids,
        partitions: cluster
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.name.as_str(), i))
            .rev()
            .collect(),
        qos: qos.iter().map(|q| q.name.as_str()).collect(),
        default_partition: default_partition.as_deref(),
    };
    let jobs = file
        .job
        .into_iter()
        .map(|entry| job(entry, &lookup))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let now = file.now.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    });
    Ok(Scenario {
        now,
        plugin,
        cluster,
        associations,
        qos,
        jobs,
        names,
    })
}

/// Adds each association's usage to its parent's, from the last defined
/// to the first, so that every account's usage is the sum of its users',
/// as slurmdbd's account totals are: a parent is defined before its
/// children, so its id is lower and it is reached after them.
fn roll_up(associations: &mut [Association]) {
    for i in (0..associations.len()).rev() {
        let (usage, parent) = (associations[i].usage_raw, associations[i].parent_id);
        if let Some(parent) = parent.and_then(|p| associations.get_mut(p as usize - 1)) {
            parent.usage_raw += usage;
        }
    }
}

/// What a job entry is checked against, by name.
struct Lookup<'a> {
    cluster: &'a Cluster,
    user_assocs: &'a BTreeMap<(String, String), u32>,
    uids: &'a BTreeMap<String, u32>,
    /// Each partition's index (the first of a name).
    partitions: HashMap<&'a str, usize>,
    qos: HashSet<&'a str>,
    default_partition: Option<&'a str>,
}

fn job(entry: JobEntry, lookup: &Lookup<'_>) -> anyhow::Result<Job> {
    let context = || format!("job {}", entry.id);
    let uid = *lookup
        .uids
        .get(&entry.user)
        .ok_or_else(|| anyhow!("user {} is not defined", entry.user))
        .with_context(context)?;
    let (account, assoc_id) = match &entry.account {
        Some(account) => (
            account.clone(),
            *lookup
                .user_assocs
                .get(&(entry.user.clone(), account.clone()))
                .ok_or_else(|| {
                    anyhow!(
                        "user {} has no association in account {account}",
                        entry.user
                    )
                })
                .with_context(context)?,
        ),
        // The user's first association in account order.
        None => lookup
            .user_assocs
            .range((entry.user.clone(), String::new())..)
            .next()
            .filter(|((user, _), _)| *user == entry.user)
            .map(|((_, account), id)| (account.clone(), *id))
            .ok_or_else(|| anyhow!("user {} has no association", entry.user))
            .with_context(context)?,
    };
    let partition_name = entry
        .partition
        .as_deref()
        .or(lookup.default_partition)
        .ok_or_else(|| anyhow!("no partition given and slurm.conf has none"))
        .with_context(context)?;
    let partition = *lookup
        .partitions
        .get(partition_name)
        .ok_or_else(|| anyhow!("partition {partition_name} is not in slurm.conf"))
        .with_context(context)?;
    let qos_name = entry.qos.clone().unwrap_or_else(|| "normal".into());
    if !lookup.qos.contains(qos_name.as_str()) {
        return Err(anyhow!("QOS {qos_name} is not defined")).with_context(context);
    }
    // The job as slurmctld records a submission to the partition, then
    // what the scenario says of it.
    let mut job = JobRequest::parse(&["-p", partition_name])
        .and_then(|r| r.prepare(entry.id, lookup.cluster, None))
        .with_context(context)?
        .job;
    job.user_id = uid;
    job.account = Some(account);
    job.assoc_id = assoc_id;
    job.partitions = vec![partition as u32];
    job.qos = Some(qos_name);
    job.time_limit = entry.time_limit;
    if let Some(priority) = entry.priority {
        job.priority = priority;
        job.direct_set_priority = true;
    }
    job.details.submit_time = entry.submit;
    job.details.begin_time = entry.eligible.unwrap_or(entry.submit);
    job.details.accrue_time = entry.eligible.unwrap_or(entry.submit);
    job.details.min_nodes = entry.nodes;
    job.details.min_cpus = entry.cpus;
    job.details.num_tasks = entry.cpus;
    job.details.nice = entry.nice;
    let mut tres = vec![
        TresAmount {
            name: "cpu".into(),
            count: u64::from(entry.cpus),
        },
        TresAmount {
            name: "node".into(),
            count: u64::from(entry.nodes),
        },
    ];
    if let Some(mem) = entry.mem {
        tres.push(TresAmount {
            name: "mem".into(),
            count: mem,
        });
    }
    if entry.gpus > 0 {
        tres.push(TresAmount {
            name: "gres/gpu".into(),
            count: entry.gpus,
        });
    }
    job.tres_requested = tres;
    Ok(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario of `body` over a two-node cluster, loaded from files.
    fn load_with(body: &str) -> anyhow::Result<Scenario> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("slurm.conf"),
            "NodeName=n[1-2] CPUs=4\nPartitionName=big Nodes=ALL Default=YES\n",
        )
        .unwrap();
        let path = dir.path().join("scenario.toml");
        std::fs::write(&path, format!("slurm_conf = \"slurm.conf\"\n{body}")).unwrap();
        load(&path)
    }

    // Issue 26, class 7: a usage of nan, inf or below 0 was taken as it
    // came and summed into every account above it.
    #[test]
    fn usages_are_finite_and_not_negative() {
        for usage in ["nan", "inf", "-1.0"] {
            let e = load_with(&format!(
                "[[account]]\nname = \"a\"\n[[user]]\nname = \"u\"\naccount = \"a\"\nusage = {usage}\n"
            ))
            .err()
            .unwrap_or_else(|| panic!("usage = {usage} was accepted"));
            assert!(
                format!("{e:#}").contains("expected a finite number of CPU-seconds, at least 0"),
                "{e:#}"
            );
        }
        let e = load_with("[[qos]]\nname = \"q\"\nusage_factor = nan\n")
            .err()
            .expect("a NaN usage factor was accepted");
        assert!(
            format!("{e:#}").contains("qos q: usage_factor = NaN"),
            "{e:#}"
        );
    }

    /// Accounts sum their users' usage, every level up to root, in one
    /// pass however deep the tree (it was a walk to root per user); jobs
    /// find their association, partition and QOS by name.
    #[test]
    fn deep_trees_and_many_jobs_are_read_in_one_pass() {
        let mut body = String::new();
        for i in 0..5_000 {
            let parent = if i == 0 {
                "root".to_owned()
            } else {
                format!("a{}", i - 1)
            };
            body.push_str(&format!(
                "[[account]]\nname = \"a{i}\"\nparent = \"{parent}\"\n"
            ));
        }
        for u in 0..5_000 {
            body.push_str(&format!(
                "[[user]]\nname = \"u{u}\"\naccount = \"a4999\"\nusage = 2.0\n"
            ));
        }
        for j in 0..5_000 {
            body.push_str(&format!(
                "[[job]]\nid = {}\nuser = \"u{j}\"\nsubmit = 0\n",
                j + 1
            ));
        }
        let s = load_with(&body).unwrap();
        let usage = |name: &str| {
            let (id, _) = s
                .names
                .iter()
                .find(|(_, (account, user))| account == name && user.is_none())
                .unwrap();
            s.associations[*id as usize - 1].usage_raw
        };
        assert_eq!(
            (usage("root"), usage("a0"), usage("a4999")),
            (10_000.0, 10_000.0, 10_000.0)
        );
        assert_eq!(s.jobs.len(), 5_000);
        assert_eq!(s.jobs[7].account.as_deref(), Some("a4999"));
        assert_eq!(s.jobs[7].partitions, [0]);
    }
}
