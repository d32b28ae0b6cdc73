//! priority/multifactor against real Slurm 22.05.8 (issue 4, "Against real
//! Slurm").
//!
//! `tests/anchor/priority/record.sh` ran the anchor cluster
//! (`../shared/slurm-anchor`) with multifactor and slurmdbd, built an
//! association tree (two levels of accounts, a `FairShare=parent` account,
//! association priorities), ran jobs to accumulate usage, queued competing
//! jobs behind jobs holding every node, and recorded `sprio`, `sshare`,
//! `scontrol` and `sacctmgr` output twice, each time right after a pass of
//! the decay thread, one pass (60 s) apart, and a third time after the next
//! pass and two later submissions, before the pass after that (issue 30,
//! items 3 and 5). `anchor_priority` parses it.
//!
//! What the plugin is given, for each sample:
//!
//! * the `slurm.conf` Slurm ran with, as the host turns it into a
//!   `priority-config`, with every key's last occurrence only (setup.sh's
//!   `PriorityDecayHalfLife` and `PriorityWeightQOS` are repeated by the
//!   recording's `EXTRA_CONF`; slurmctld, like the host's own reader, uses
//!   the last one);
//! * the QOS table, and the association tree from `sacctmgr` with the
//!   priorities and user ids slurmctld held;
//! * **usage**: each association's raw usage as slurmctld held it at the
//!   sample, given as `usage-raw`. The plugin computes normalised and
//!   effective usage, level fair-share and fair-share from it itself. The
//!   values come from `scontrol show assoc_mgr` (2 decimals) rather than
//!   `sshare`'s `RawUsage`, which is truncated to an integer; the parser
//!   checks that the two agree;
//! * the pending jobs as `scontrol show job` recorded them (held and
//!   not-yet-eligible ones included, for the plugin to leave out of
//!   `sprio`), with the site factor and the explicit priority the script
//!   set through `scontrol update`;
//! * a virtual clock at the sample's decay pass: `sprio` in 22.05 shows the
//!   factors that pass computed (its time is saved in
//!   `StateSaveLocation/priority_last_decay_ran`), not factors at the time
//!   `sprio` ran. Sample 3 asks `sprio` at the time it was taken, after the
//!   late jobs were `set` at their submission: the plugin must show what
//!   its last computation stored for each job.
//!
//! Precision: `sprio -n` prints factors to 7 decimals and `sprio` weighted
//! factors rounded to integers; priorities are integers (truncated). `sshare`
//! prints 6 decimals, but its ratios of usage depend on the 2-decimal usage
//! the plugin is given, so each is compared within the bound that rounding
//! allows (see `Given`).
//!
//! Slurm 22.05's job-size factor counts `job_ptr->total_cpus`, which for a
//! pending job the scheduler has evaluated is its last estimate in whole
//! cores (2 CPUs for `-n 1` on the 2-thread `big` nodes), and for one it
//! has not yet evaluated 0, so that the CPUs asked for count
//! (`_get_priority_internal`). The controller hands the estimate to the
//! plugin as the job's `total-cpus`; the test plays the controller: a
//! pending job whose record shows an expected start time (the scheduler
//! tested it) gets its CPUs rounded up to whole cores of its first
//! partition's nodes (`alice-small` is the job where it matters), and a
//! job at its submission none (`late-small` of sample 3).

use crate::anchor_priority;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use anchor_priority::{
    JobRecord, Memory, Recording, Sample, Shares as RecShares, SprioRow, Submitted, TreeNode,
};
use slurm::setup::records::Cluster;
use slurm::slurm_conf;
use slurm_wasm_host::capabilities::clock::VirtualClock;
use slurm_wasm_host::kinds::priority::{
    AssociationUpdate, AssociationUsage, FactorsRequest, PriorityConfig, PriorityFactors, QosUpdate,
};
use slurm_wasm_host::types::{
    Association, Job, JobState, KeyValue, MemoryRequest, Qos, Shares, TresAmount,
};
use slurm_wasm_host::{
    fixtures, Host, HostOptions, PluginSettings, PluginSource, PriorityPlugin, Services,
};

/// The recording, parsed once.
fn recording() -> &'static Recording {
    static RECORDING: OnceLock<Recording> = OnceLock::new();
    RECORDING.get_or_init(|| {
        Recording::load(&anchor_priority::fixture_dir()).unwrap_or_else(|e| panic!("fixtures: {e}"))
    })
}

/// The contract's inputs for one sample.
struct Inputs {
    config: PriorityConfig,
    qos: Vec<Qos>,
    associations: Vec<Association>,
    /// Pending jobs, in job id order.
    pending: Vec<Job>,
    /// Running jobs (the blockers).
    running: Vec<Job>,
}

fn inputs(rec: &Recording, sample: &Sample) -> Inputs {
    let conf = slurm_conf::parse_str(&rec.slurm_conf, Path::new("slurm.conf"))
        .unwrap_or_else(|e| panic!("{e}"));
    let cluster = Cluster::from_slurm_conf(&conf).unwrap_or_else(|e| panic!("{e}"));
    let mut config = cluster.priority_config();
    config.cluster.raw = last_occurrences(&config.cluster.raw);
    let tree = tree(rec, sample);
    let job = |r: &JobRecord| {
        let mut job = job(
            r,
            rec.submitted.iter().find(|s| s.job_id == r.job_id),
            &config,
            &tree,
        );
        if job.state == JobState::Pending && r.start_time.is_some() {
            job.partitions = last_tried_first(sample, &config, job.job_id, &job.partitions);
        }
        job.total_cpus = match job.state {
            // The scheduler evaluated the pending job (its expected start
            // time is set): job_test.c's `job_test` left its estimate, of
            // the partition it tried last.
            JobState::Pending if r.start_time.is_some() => Some(whole_cores(
                &cluster,
                job.partitions[0],
                r.min_cpus,
                r.min_nodes,
            )),
            // Never evaluated: `total_cpus` is still 0 and multifactor
            // counts the CPUs asked for.
            JobState::Pending => None,
            _ => Some(r.min_cpus),
        };
        job
    };
    let mut pending: Vec<Job> = sample
        .jobs
        .iter()
        .filter(|j| j.state == "PENDING")
        .map(job)
        .collect();
    pending.sort_by_key(|j| j.job_id);
    Inputs {
        qos: rec
            .qos
            .iter()
            .map(|q| {
                let mut qos = fixtures::qos(q.id, &q.name, q.priority);
                qos.usage_factor = q.usage_factor;
                qos.no_decay = q.flags.iter().any(|f| f == "NoDecay");
                qos
            })
            .collect(),
        associations: tree.iter().map(association).collect(),
        running: sample
            .jobs
            .iter()
            .filter(|j| j.state == "RUNNING")
            .map(job)
            .collect(),
        pending,
        config,
    }
}

/// The slurm.conf options with each key kept at its last occurrence (the
/// one slurmctld uses), in file order.
fn last_occurrences(raw: &[KeyValue]) -> Vec<KeyValue> {
    raw.iter()
        .enumerate()
        .filter(|(i, kv)| {
            !raw[i + 1..]
                .iter()
                .any(|later| later.key.eq_ignore_ascii_case(&kv.key))
        })
        .map(|(_, kv)| kv.clone())
        .collect()
}

fn tree(rec: &Recording, sample: &Sample) -> Vec<TreeNode> {
    anchor_priority::accounts::tree(&rec.associations, &sample.assoc_mgr)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn association(node: &TreeNode) -> Association {
    let mut a = fixtures::association(
        node.id,
        node.parent_id,
        &node.account,
        node.user.as_deref(),
        0,
    );
    a.shares = match node.shares {
        RecShares::Raw(n) => Shares::Raw(n),
        RecShares::Parent => Shares::Parent,
    };
    a.user_id = node.uid;
    a.priority = node.priority.filter(|&p| p != 0);
    a.usage_raw = node.usage_raw;
    a
}

/// A recorded job as the controller would hand it to the plugin.
fn job(
    r: &JobRecord,
    submitted: Option<&Submitted>,
    config: &PriorityConfig,
    tree: &[TreeNode],
) -> Job {
    let mut job = fixtures::job(r.job_id);
    job.name = r.name.clone();
    job.user_id = r.uid;
    job.group_id = r.gid;
    job.account = Some(r.account.clone());
    job.assoc_id = tree
        .iter()
        .find(|a| a.account == r.account && a.user.as_deref() == Some(r.user.as_str()))
        .unwrap_or_else(|| panic!("job {}: no association {}/{}", r.job_id, r.account, r.user))
        .id;
    job.partitions = r
        .partitions
        .iter()
        .map(|name| {
            config
                .partitions
                .iter()
                .find(|p| &p.name == name)
                .unwrap_or_else(|| panic!("job {}: no partition {name}", r.job_id))
                .index
        })
        .collect();
    job.qos = Some(r.qos.clone());
    job.state = match r.state.as_str() {
        "PENDING" => JobState::Pending,
        "RUNNING" => JobState::Running,
        other => panic!("job {}: a {other} job is not given to the plugin", r.job_id),
    };
    job.priority = r.priority;
    let updated = |key: &str| submitted.and_then(|s| s.updated(key));
    job.direct_set_priority = updated("Priority").is_some();
    job.site_factor = updated("SiteFactor").map_or(0, |v| v.parse().expect("SiteFactor"));
    job.time_limit = r.time_limit;
    job.start_time = r.start_time.unwrap_or(0);
    job.end_time = r.end_time.unwrap_or(0);
    let d = &mut job.details;
    // For a pending job the scheduler estimated, scontrol's `NumNodes` is
    // that estimate (`node_cnt_wag`), not `details->min_nodes`, which the
    // job-size factor reads: the submitted `-N` (1 without one) says it.
    d.min_nodes = submitted.map_or(r.min_nodes, |s| requested_min_nodes(&s.options));
    d.max_nodes = r.max_nodes;
    d.num_tasks = r.num_tasks.unwrap_or(0);
    d.min_cpus = r.min_cpus;
    d.max_cpus = r.max_cpus;
    d.cpus_per_task = r.cpus_per_task;
    d.memory = match r.memory {
        Memory::PerCpu(mb) => MemoryRequest::PerCpu(mb),
        Memory::PerNode(mb) => MemoryRequest::PerNode(mb),
    };
    d.nice = r.nice;
    d.submit_time = r.submit_time;
    d.begin_time = r.eligible_time.unwrap_or(0);
    d.accrue_time = r.accrue_time.unwrap_or(0);
    let tres: Vec<TresAmount> = r
        .tres
        .iter()
        .map(|(name, count)| TresAmount {
            name: name.clone(),
            count: *count,
        })
        .collect();
    if job.state == JobState::Running {
        job.billable_tres = r
            .tres
            .iter()
            .find(|(n, _)| n == "billing")
            .map(|(_, c)| *c as f64);
        job.tres_allocated = tres;
    } else {
        job.tres_requested = tres;
    }
    job
}

/// priority/multifactor, loaded with a virtual clock at `now` and given the
/// configuration, QOS table and association tree of `inputs`.
fn plugin_at(now: i64, inputs: &Inputs) -> (PriorityPlugin, Arc<VirtualClock>) {
    let clock = Arc::new(VirtualClock::new(now));
    let host = Host::new(HostOptions {
        services: Services {
            clock: clock.clone(),
            ..Services::default()
        },
        ..slurm_wasm_bundled::host_options()
    })
    .expect("host");
    let plugin = PriorityPlugin::load(
        &host,
        &PluginSource::Bundled("priority/multifactor".into()),
        PluginSettings::default(),
    )
    .unwrap_or_else(|e| panic!("priority/multifactor: {e}"));
    plugin.init(&inputs.config).expect("init");
    plugin
        .update_qos(
            &inputs
                .qos
                .iter()
                .cloned()
                .map(QosUpdate::Upsert)
                .collect::<Vec<_>>(),
        )
        .expect("update-qos");
    plugin
        .update_associations(
            &inputs
                .associations
                .iter()
                .cloned()
                .map(AssociationUpdate::Upsert)
                .collect::<Vec<_>>(),
        )
        .expect("update-associations");
    (plugin, clock)
}

fn all_rows() -> FactorsRequest {
    FactorsRequest {
        job_ids: vec![],
        user_ids: vec![],
        partitions: vec![],
    }
}

/// Mismatches found, reported together.
#[derive(Default)]
struct Report(Vec<String>);

impl Report {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    fn assert_empty(self, context: &str) {
        assert!(
            self.0.is_empty(),
            "{context}: {} mismatches:\n  {}",
            self.0.len(),
            self.0.join("\n  ")
        );
    }
}

/// `|ours - printed| <= bound` (half a unit of the printed precision, plus
/// what the inputs' precision allows), with room for the binary-to-decimal
/// step.
fn within(ours: f64, printed: f64, bound: f64) -> bool {
    (ours - printed).abs() <= bound * (1.0 + 1e-9) + 1e-12
}

/// Slurm's PriorityWeightTRES as name (lower case) -> weight.
fn tres_weights(rec: &Recording) -> BTreeMap<String, f64> {
    rec.config_value("PriorityWeightTRES")
        .unwrap_or_default()
        .split(',')
        .filter_map(|t| t.split_once('='))
        .map(|(name, w)| (name.to_lowercase(), w.parse().expect("TRES weight")))
        .collect()
}

/// A job's partitions with the one the scheduler tried last first, as the
/// controller gives them (`part_ptr`, the contract's first partition; its
/// `total_cpus` is that partition's estimate too). slurmctld's schedulers
/// try a multi-partition job once per partition, in the order of the job
/// queue (job_scheduler.c `sort_job_queue2`): by the priority in each
/// partition, highest first, and on equal priorities in the job's list
/// order, which the recordings show (fuzz seed 3: PriorityWeightPartition=0,
/// `-p big,hw -N2 -n2` sized for hw). The priorities are the recorded
/// sprio's for that job: the scheduler's input, not the plugin's output
/// under test.
fn last_tried_first(
    sample: &Sample,
    config: &PriorityConfig,
    job_id: u32,
    partitions: &[u32],
) -> Vec<u32> {
    if partitions.len() < 2 {
        return partitions.to_vec();
    }
    let priority = |p: u32| {
        let name = &config.partitions[p as usize].name;
        sample
            .sprio_weighted_full
            .iter()
            .find(|r| r.job_id == job_id && &r.partition == name)
            .map_or(0.0, |r| r.priority)
    };
    let mut tried = partitions.to_vec();
    // a stable sort: equal priorities keep the list order
    tried.sort_by(|a, b| priority(*b).total_cmp(&priority(*a)));
    let last = *tried.last().expect("two partitions");
    std::iter::once(last)
        .chain(partitions.iter().copied().filter(|&p| p != last))
        .collect()
}

/// The node minimum of sbatch options as submitted.txt records them
/// (`-N 2`, `-N2`, `-N1-3`, `--nodes=2`): sbatch's `-N`, 1 without one.
fn requested_min_nodes(options: &str) -> u32 {
    let words: Vec<&str> = options.split_whitespace().collect();
    let value = words.iter().enumerate().find_map(|(i, w)| match *w {
        "-N" => words.get(i + 1).copied(),
        w => w.strip_prefix("--nodes=").or_else(|| w.strip_prefix("-N")),
    });
    value.map_or(1, |v| {
        v.split('-')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("-N `{v}` in `{options}`"))
    })
}

/// The controller's `total_cpus` of a pending job, the estimate of the
/// scheduler's last test (which the job-size factor reads): its CPUs in
/// whole cores of the nodes of `partition`, and at least one core on each
/// of the `nodes` of that estimate (scontrol's `NumNodes`). cons_tres under
/// CR_Core counts each node's CPUs in whole cores (dist_tasks.c
/// `_block_sync_core_bitmap`, `alloc_cores`), and its estimates fill cores
/// before they split them: on the 2-thread `big` nodes `-n1` counts 2 CPUs,
/// `-N2 -n2` 4 (a core on each node) and `-N2 -n10` 10. The replay does
/// not run the select plugin, so this is its model of that estimate,
/// checked by every recorded job size.
fn whole_cores(cluster: &Cluster, partition: u32, cpus: u32, nodes: u32) -> u32 {
    let threads = cluster
        .nodes
        .iter()
        .find(|n| n.partitions.contains(&partition))
        .map_or(1, |n| u32::from(n.threads_per_core.max(1)));
    (cpus.div_ceil(threads) * threads).max(nodes * threads)
}

/// What the replay can check of a sample, and how closely.
///
/// Classic fair-share (`NO_FAIR_TREE`, `DEPTH_OBLIVIOUS`) computes the
/// accounts' normalised and effective usage at the start of a pass, from the
/// usage before it (priority_multifactor.c `_decay_thread` calls
/// `_set_children_usage_efctv` before it decays and charges), and a user's
/// when first needed after it, from its parent's value of the start. A
/// sample holds only the usage after its pass, so the figures made of the
/// accounts' values (effective usage and fair-share of every association,
/// the accounts' normalised usage, and the priorities) are checked one pass
/// later, by [`check_decay_pass`], which starts from the previous sample's
/// usage. Fair Tree computes the whole tree after the pass: everything is
/// checked at each sample.
#[derive(Clone, Copy, Debug)]
struct Known {
    /// The fair-share figures can be checked.
    fair_share: bool,
    /// Classic fair-share: a factor moves with the usage it is made of, so
    /// it is compared within what the usage's rounding allows
    /// ([`Given::classic_fs_error`]); Fair Tree's are ranks, exact.
    classic: bool,
}

impl Known {
    fn classic(rec: &Recording) -> bool {
        rec.config_value("PriorityFlags")
            .is_some_and(|flags| flags.contains("NO_FAIR_TREE"))
    }

    /// A sample replayed from its own usage.
    fn at_its_pass(rec: &Recording) -> Known {
        let classic = Known::classic(rec);
        Known {
            fair_share: !classic,
            classic,
        }
    }

    /// A sample reached by a decay pass from the previous one.
    fn one_pass_on(rec: &Recording) -> Known {
        Known {
            fair_share: true,
            classic: Known::classic(rec),
        }
    }
}

/// Compares our sprio rows with Slurm's, factor by factor.
fn compare_factors(
    rec: &Recording,
    sample: &Sample,
    inputs: &Inputs,
    ours: &[PriorityFactors],
    known: Known,
    report: &mut Report,
) {
    let weight = |name: &str| f64::from(sample.weights.factor(name));
    let given_assoc = |id: u32| {
        inputs
            .associations
            .iter()
            .find(|a| a.id == id)
            .expect("the job's association is in the tree")
    };
    let tres_weights = tres_weights(rec);
    let key = |id: u32, part: &str| format!("job {id} in {part}");
    let slurm_keys: Vec<String> = sample
        .sprio_long
        .iter()
        .map(|r| key(r.job_id, &r.partition))
        .collect();
    let our_keys: Vec<String> = ours.iter().map(|r| key(r.job_id, &r.partition)).collect();
    report.check(
        our_keys.len() == slurm_keys.len() && slurm_keys.iter().all(|k| our_keys.contains(k)),
        || format!("rows: Slurm {slurm_keys:?}, ours {our_keys:?}"),
    );
    for ((long, norm), (full, norm_full)) in
        sample.sprio_long.iter().zip(&sample.sprio_normalised).zip(
            sample
                .sprio_weighted_full
                .iter()
                .zip(&sample.sprio_normalised_full),
        )
    {
        let at = key(long.job_id, &long.partition);
        let Some(row) = ours
            .iter()
            .find(|r| r.job_id == long.job_id && r.partition == long.partition)
        else {
            continue;
        };
        let job = sample.job(long.job_id).expect("sprio job is recorded");
        report.check(row.user_id == job.uid, || {
            format!("{at}: user id {} (Slurm {})", row.user_id, job.uid)
        });
        report.check(
            Some(row.site) == long.site && Some(i64::from(row.nice)) == long.nice,
            || {
                format!(
                    "{at}: site {} nice {} (Slurm {:?} {:?})",
                    row.site, row.nice, long.site, long.nice
                )
            },
        );
        let given = inputs
            .pending
            .iter()
            .find(|j| j.job_id == long.job_id)
            .expect("sprio shows pending jobs");
        if given.direct_set_priority {
            // Slurm zeroes every factor of a job with an explicit priority.
            report.check(
                row.direct_priority == Some(long.priority as u32)
                    && row.priority == long.priority as u32,
                || {
                    format!(
                        "{at}: direct priority {:?}/{} (Slurm {})",
                        row.direct_priority, row.priority, long.priority
                    )
                },
            );
            continue;
        }
        let expected_priority = long.priority;
        for (name, ours_w, weighted, normalised, w) in [
            ("age", row.age, long.age, norm.age, weight("AGE")),
            (
                "assoc",
                row.association,
                long.assoc,
                norm.assoc,
                weight("ASSOC"),
            ),
            (
                "fair-share",
                row.fair_share,
                long.fair_share,
                norm.fair_share,
                weight("FAIRSHARE"),
            ),
            (
                "job-size",
                row.job_size,
                long.job_size,
                norm.job_size,
                weight("JOBSIZE"),
            ),
            (
                "partition",
                row.partition_factor,
                long.partition_factor,
                norm.partition_factor,
                weight("PARTITION"),
            ),
            ("qos", row.qos_factor, long.qos, norm.qos, weight("QOS")),
        ] {
            if name == "fair-share" && !known.fair_share {
                continue;
            }
            let moves = if name == "fair-share" && known.classic {
                let a = given_assoc(given.assoc_id);
                Given(&inputs.associations).classic_fs_error(a, normalised)
            } else {
                0.0
            };
            let exact = within(ours_w, weighted, 0.5 + moves * w)
                && (w == 0.0 || within(ours_w / w, normalised, 0.5e-7 + moves));
            report.check(exact, || {
                format!("{at}: {name} {ours_w} (Slurm {weighted}, normalised {normalised} x {w})")
            });
        }
        compare_tres(&at, row, full, norm_full, &tres_weights, report);
        if !known.fair_share && weight("FAIRSHARE") > 0.0 {
            continue;
        }
        let expected = expected_priority.trunc();
        report.check(f64::from(row.priority) == expected, || {
            format!(
                "{at}: priority {} (Slurm {}, expected {expected})",
                row.priority, long.priority
            )
        });
    }
}

/// Compares the weighted TRES factors of one row with Slurm's (weighted
/// `%.0f`, normalised `%.2f`; Slurm leaves out zero factors).
fn compare_tres(
    at: &str,
    row: &PriorityFactors,
    full: &SprioRow,
    norm_full: &SprioRow,
    weights: &BTreeMap<String, f64>,
    report: &mut Report,
) {
    let slurm: BTreeMap<String, (f64, f64)> = full
        .tres
        .iter()
        .zip(&norm_full.tres)
        .map(|((name, weighted), (_, normalised))| (name.to_lowercase(), (*weighted, *normalised)))
        .collect();
    let ours: BTreeMap<String, f64> = row
        .tres
        .iter()
        .map(|(n, v)| (n.to_lowercase(), *v))
        .collect();
    for name in slurm.keys().chain(ours.keys()) {
        let (weighted, normalised) = slurm.get(name).copied().unwrap_or((0.0, 0.0));
        let ours_w = ours.get(name).copied().unwrap_or(0.0);
        let w = weights.get(name).copied().unwrap_or(0.0);
        report.check(
            within(ours_w, weighted, 0.5) && (w == 0.0 || within(ours_w / w, normalised, 0.005)),
            || {
                format!(
                    "{at}: TRES {name} {ours_w} (Slurm {weighted}, normalised {normalised} x {w})"
                )
            },
        );
    }
}

/// Compares `calculate`'s priorities with what slurmctld held. A job with
/// an explicit priority keeps it: the plugin may leave it out.
fn compare_priorities(
    sample: &Sample,
    inputs: &Inputs,
    ours: &[(u32, u32)],
    known: Known,
    report: &mut Report,
) {
    if !known.fair_share && sample.weights.factor("FAIRSHARE") > 0 {
        return;
    }
    for job in inputs.pending.iter().filter(|j| j.priority != 0) {
        let recorded = sample.job(job.job_id).expect("recorded").priority;
        let got = ours
            .iter()
            .find(|(id, _)| *id == job.job_id)
            .map(|(_, p)| *p);
        let ok = match got {
            None => job.direct_set_priority,
            Some(p) => p == recorded,
        };
        report.check(ok, || {
            format!("job {}: priority {got:?} (Slurm {recorded})", job.job_id)
        });
    }
}

/// The association tree given to the plugin, for bounding what it derives
/// from usage given to 2 decimals.
struct Given<'a>(&'a [Association]);

impl<'a> Given<'a> {
    fn get(&self, id: u32) -> Option<&'a Association> {
        self.0.iter().find(|a| a.id == id)
    }

    fn root(&self) -> &'a Association {
        self.0.iter().find(|a| a.parent_id.is_none()).expect("root")
    }

    /// The nearest ancestor that is not `FairShare=parent`: Fair Tree's
    /// effective usage is relative to it.
    fn fs_parent(&self, a: &Association) -> Option<&'a Association> {
        let mut parent = a.parent_id.and_then(|id| self.get(id));
        while let Some(p) = parent.filter(|p| matches!(p.shares, Shares::Parent)) {
            parent = p.parent_id.and_then(|id| self.get(id));
        }
        parent
    }

    /// How far the usage the plugin works with may be from Slurm's exact
    /// one: each given usage is off by up to 0.005, and a plugin that adds
    /// an account's usage up from its users adds up their errors.
    fn usage_error(&self, a: &Association) -> f64 {
        let users = self
            .0
            .iter()
            .filter(|u| u.user.is_some() && self.descends_from(u, a.id))
            .count();
        0.005 * users.max(1) as f64
    }

    fn descends_from(&self, a: &Association, ancestor: u32) -> bool {
        let mut at = Some(a);
        while let Some(node) = at {
            if node.id == ancestor {
                return true;
            }
            at = node.parent_id.and_then(|id| self.get(id));
        }
        false
    }

    /// How far the ratio of the usages of `a` and `b` may be from the ratio
    /// of Slurm's exact usages.
    fn ratio_error(&self, a: &Association, b: &Association) -> f64 {
        if a.usage_raw <= 0.0 || b.usage_raw <= 0.0 {
            return 0.0;
        }
        (a.usage_raw / b.usage_raw)
            * (self.usage_error(a) / a.usage_raw + self.usage_error(b) / b.usage_raw)
    }
    /// How far a classic fair-share factor `fs` of `a` may be from Slurm's:
    /// `fs = 2^(-UE/S)` moves by `-fs ln(fs)` times the relative error of
    /// the effective usage, which is made of the usages of `a`, its
    /// ancestors and its siblings, each given (and, a pass later, printed)
    /// to 2 decimals.
    fn classic_fs_error(&self, a: &Association, fs: f64) -> f64 {
        if fs <= 0.0 || fs >= 1.0 {
            return 0.0;
        }
        let mut involved: Vec<&Association> = self
            .0
            .iter()
            .filter(|x| x.parent_id.is_some() && x.parent_id == a.parent_id)
            .collect();
        let mut at = Some(a);
        while let Some(node) = at {
            involved.push(node);
            at = node.parent_id.and_then(|id| self.get(id));
        }
        let relative = involved
            .iter()
            .filter(|x| x.usage_raw > 0.0)
            .map(|x| (self.usage_error(x) + 0.005) / x.usage_raw)
            .fold(0.0, f64::max);
        -fs * fs.ln() * 4.0 * relative
    }
}

/// Compares the plugin's association usage with `sshare -a -l -P`.
fn compare_shares(
    sample: &Sample,
    inputs: &Inputs,
    usages: &[AssociationUsage],
    known: Known,
    report: &mut Report,
) {
    let given = Given(&inputs.associations);
    let root = given.root();
    // Root's row shows the association manager's values, not computed ones:
    // normalised shares 0.000000 under Fair Tree (shares / NO_VAL), no
    // normalised usage (NO_VAL, left blank) and effective usage 1.
    for row in sample
        .shares
        .iter()
        .filter(|r| r.depth == 0 && known.fair_share)
    {
        let ours = usages.iter().find(|u| u.id == root.id);
        report.check(
            ours.is_some_and(|u| {
                within(u.shares_norm, row.norm_shares, 0.5e-6)
                    && within(u.usage_effective, row.effective_usage, 0.5e-6)
            }) && row.norm_usage.is_none(),
            || {
                format!(
                    "root: norm shares, effective usage {:?} (Slurm {} {}, norm usage {:?})",
                    ours.map(|u| (u.shares_norm, u.usage_effective)),
                    row.norm_shares,
                    row.effective_usage,
                    row.norm_usage
                )
            },
        );
    }
    for row in sample.shares.iter().filter(|r| r.depth > 0) {
        let at = format!("{}/{}", row.account, row.user.as_deref().unwrap_or(""));
        let Some(a) = inputs
            .associations
            .iter()
            .find(|a| a.account == row.account && a.user == row.user)
        else {
            report.check(false, || format!("{at}: no association"));
            continue;
        };
        let Some(u) = usages.iter().find(|u| u.id == a.id) else {
            report.check(false, || format!("{at}: no usage from the plugin"));
            continue;
        };
        let parent = given.fs_parent(a).expect("not root");
        let to_parent = given.ratio_error(a, parent);
        // The given usage's rounding, and the printed usage's (the plugin's
        // comes from the previous sample's after a decay pass).
        report.check(
            within(u.usage_raw, a.usage_raw, given.usage_error(a) + 0.005),
            || {
                format!(
                    "{at}: raw usage {} (Slurm {}, sshare {})",
                    u.usage_raw, a.usage_raw, row.raw_usage
                )
            },
        );
        report.check(within(u.shares_norm, row.norm_shares, 0.5e-6), || {
            format!(
                "{at}: norm shares {} (Slurm {})",
                u.shares_norm, row.norm_shares
            )
        });
        if let Some(norm) = row
            .norm_usage
            .filter(|_| known.fair_share || row.user.is_some())
        {
            report.check(
                within(u.usage_norm, norm, 0.5e-6 + given.ratio_error(a, root)),
                || format!("{at}: norm usage {} (Slurm {norm})", u.usage_norm),
            );
        }
        if !known.fair_share {
            continue;
        }
        report.check(
            within(u.usage_effective, row.effective_usage, 0.5e-6 + to_parent),
            || {
                format!(
                    "{at}: effective usage {} (Slurm {})",
                    u.usage_effective, row.effective_usage
                )
            },
        );
        if let (Some(fs), Some(_)) = (row.fair_share, &row.user) {
            let bound = if known.classic {
                0.5e-6 + given.classic_fs_error(a, fs)
            } else {
                0.5e-6
            };
            report.check(within(u.fair_share, fs, bound), || {
                format!("{at}: fair-share {} (Slurm {fs})", u.fair_share)
            });
        }
        if let Some(level) = row.level_fs {
            let ours = u.level_fs.unwrap_or(f64::NAN);
            let ok = if level.is_infinite() {
                ours.is_infinite()
            } else {
                // LF = S / U: U's relative error carries over.
                let relative = if a.usage_raw > 0.0 {
                    to_parent * parent.usage_raw / a.usage_raw
                } else {
                    0.0
                };
                within(ours, level, 0.5e-6 + level * relative)
            };
            report.check(ok, || {
                format!("{at}: level fair-share {:?} (Slurm {level})", u.level_fs)
            });
        }
    }
}

/// Registers the pending jobs with `set`, as the controller does at
/// submission, and returns the ids of those `calculate` is asked about
/// (held jobs are left out, as the controller leaves them out).
fn register(plugin: &PriorityPlugin, inputs: &Inputs) -> Vec<u32> {
    let mut lowest = TOP_PRIORITY;
    for job in &inputs.pending {
        plugin
            .assign(&mut lowest, job)
            .unwrap_or_else(|e| panic!("set job {}: {e}", job.job_id));
    }
    inputs
        .pending
        .iter()
        .filter(|j| j.priority != 0)
        .map(|j| j.job_id)
        .collect()
}

/// `TOP_PRIORITY`, the controller's first `lowest_prio`.
const TOP_PRIORITY: u32 = 0xffff_0000;

/// Runs one sample through the plugin and compares everything sprio,
/// sshare and scontrol printed.
fn check_sample(rec: &Recording, index: usize) {
    let sample = &rec.samples[index];
    let inputs = inputs(rec, sample);
    let (plugin, clock) = plugin_at(sample.instant.last_decay_ran, &inputs);
    let mut report = Report::default();
    let ids = register(&plugin, &inputs);
    // The recorded usage already holds the running jobs' usage up to this
    // pass: they are not given again.
    let priorities = plugin.calculate(&[], &ids).expect("calculate");
    let known = Known::at_its_pass(rec);
    compare_priorities(sample, &inputs, &priorities, known, &mut report);
    // sprio ran after the pass: it shows what the pass stored.
    clock.set(sample.instant.sampled_from);
    let rows = plugin
        .get_priority_factors_list(&inputs.pending, &all_rows(), 0)
        .expect("get-priority-factors-list");
    compare_factors(rec, sample, &inputs, &rows, known, &mut report);
    let usages = plugin.association_usages().expect("association-usages");
    compare_shares(sample, &inputs, &usages, known, &mut report);
    // `priority_p_set_assoc_usage` recomputes normalised usage (and the
    // classic effective usage, which Fair Tree does not use): last, as it
    // may change what `association-usages` reports.
    let given = Given(&inputs.associations);
    for row in sample
        .shares
        .iter()
        .filter(|r| r.depth > 0 && (known.fair_share || r.user.is_some()))
    {
        let Some(norm) = row.norm_usage else { continue };
        let a = inputs
            .associations
            .iter()
            .find(|a| a.account == row.account && a.user == row.user)
            .expect("association");
        let single = plugin.set_assoc_usage(a.id).expect("set-assoc-usage");
        report.check(
            within(
                single.usage_norm,
                norm,
                0.5e-6 + given.ratio_error(a, given.root()),
            ),
            || {
                format!(
                    "association {}: set-assoc-usage norm usage {} (Slurm {norm})",
                    a.id, single.usage_norm
                )
            },
        );
    }
    report.assert_empty(&format!(
        "sample {} (decay pass at {})",
        index + 1,
        sample.instant.last_decay_ran
    ));
}

#[test]
fn the_recorded_configuration_is_what_slurmctld_reported() {
    check_configuration(recording());
}

/// The `slurm.conf` the recording kept is what `scontrol show config` and
/// `sprio -w` reported while it ran.
fn check_configuration(rec: &Recording) {
    let inputs = inputs(rec, &rec.samples[0]);
    let raw = |key: &str| {
        inputs
            .config
            .cluster
            .raw
            .iter()
            .find(|kv| kv.key == key)
            .map(|kv| kv.value.as_str())
    };
    for key in [
        "PriorityWeightAge",
        "PriorityWeightAssoc",
        "PriorityWeightFairshare",
        "PriorityWeightJobSize",
        "PriorityWeightPartition",
        "PriorityWeightQOS",
        "PriorityWeightTRES",
        "PriorityMaxAge",
        "PriorityDecayHalfLife",
    ] {
        let shown = rec.config_value(if key == "PriorityWeightFairshare" {
            "PriorityWeightFairShare"
        } else {
            key
        });
        assert_eq!(raw(key), shown, "{key}");
    }
    for (key, name) in [
        ("PriorityWeightAge", "AGE"),
        ("PriorityWeightQOS", "QOS"),
        ("PriorityWeightJobSize", "JOBSIZE"),
    ] {
        assert_eq!(
            raw(key).map(|v| v.parse::<u32>().unwrap()),
            Some(rec.samples[0].weights.factor(name))
        );
    }
    assert_eq!(
        (inputs.config.cluster_cpus, inputs.config.cluster_nodes),
        (36, 6)
    );
    assert_eq!(inputs.running.len(), 2, "the blockers");
}

#[test]
fn sample_1_factors_priorities_and_fair_share() {
    check_sample(recording(), 0);
}

#[test]
fn sample_2_factors_priorities_and_fair_share() {
    check_sample(recording(), 1);
}

/// From sample 1's state, one decay pass later: the plugin decays the usage
/// over the 60 s between the passes and charges the running blockers for
/// them, as Slurm did; the usage and factors it reaches must be sample 2's.
/// Age grows by 60/PriorityMaxAge between the samples and usage decays and
/// grows; every other factor stays, which the two samples show.
#[test]
fn one_decay_pass_from_sample_1_reaches_sample_2() {
    check_decay_pass(recording());
}

fn check_decay_pass(rec: &Recording) {
    let [first, second] = &rec.samples;
    let before = inputs(rec, first);
    let after = inputs(rec, second);
    let (plugin, clock) = plugin_at(first.instant.last_decay_ran, &before);
    let ids = register(&plugin, &before);
    plugin.calculate(&[], &ids).expect("calculate at sample 1");
    // record.sh ran sshare at sample 1, which computes every classic user
    // not computed yet (assoc_mgr.c `assoc_mgr_get_shares`): their stored
    // figures are what the next pass's depth-oblivious levels read.
    clock.set(first.instant.sampled_from);
    plugin
        .association_usages()
        .expect("association-usages at sample 1");
    clock.set(second.instant.last_decay_ran);
    let priorities = plugin
        .calculate(&after.running, &ids)
        .expect("calculate at sample 2");
    let mut report = Report::default();
    let usages = plugin.association_usages().expect("association-usages");
    let given = Given(&after.associations);
    for a in &after.associations {
        let ours = usages.iter().find(|u| u.id == a.id).map(|u| u.usage_raw);
        // Sample 1's usage was given to 2 decimals (and summed, maybe) and
        // sample 2's is printed to 2 decimals.
        report.check(
            ours.is_some_and(|u| within(u, a.usage_raw, given.usage_error(a) + 0.005)),
            || {
                format!(
                    "association {} ({}/{:?}): usage {ours:?} (Slurm {})",
                    a.id, a.account, a.user, a.usage_raw
                )
            },
        );
    }
    compare_priorities(
        second,
        &after,
        &priorities,
        Known::one_pass_on(rec),
        &mut report,
    );
    clock.set(second.instant.sampled_from);
    let rows = plugin
        .get_priority_factors_list(&after.pending, &all_rows(), 0)
        .expect("get-priority-factors-list");
    compare_factors(
        rec,
        second,
        &after,
        &rows,
        Known::one_pass_on(rec),
        &mut report,
    );
    let usages = plugin.association_usages().expect("association-usages");
    compare_shares(
        second,
        &after,
        &usages,
        Known::one_pass_on(rec),
        &mut report,
    );
    report.assert_empty("sample 1 + one decay pass");
}

/// `sample3/`: recorded after a decay pass and two submissions that came
/// after it (`late-small`, `late-hw`), before the next pass. Slurm's sprio
/// shows what the last computation stored for each job: the pass's factors
/// for the older jobs, and the late jobs' factors from their submission
/// (`priority_p_set` from `_job_create`): Age 0 (no accrue time yet) and a
/// job size from the CPUs they asked for (no scheduler estimate yet,
/// `job_ptr->total_cpus` is 0). The controller, played here, registers the
/// older jobs with `set` and runs the pass at its time, then `set`s each
/// late job at its submission time as `_job_create` left it; `sprio` is
/// asked at the time the sample was taken.
#[test]
fn sample_3_between_passes_shows_stored_factors() {
    check_between_passes(recording());
}

fn check_between_passes(rec: &Recording) {
    let sample = &rec.between;
    let pass = sample.instant.last_decay_ran;
    let inputs = inputs(rec, sample);
    // record.sh submits the late jobs once it has seen the pass's time
    // saved, which may be within the pass's second.
    let (late, early): (Vec<Job>, Vec<Job>) = inputs
        .pending
        .iter()
        .cloned()
        .partition(|j| j.details.submit_time >= pass && j.name.starts_with("late-"));
    assert!(
        late.len() == 2 && late.iter().all(|j| j.name.starts_with("late-")),
        "the recording has the two late jobs: {:?}",
        late.iter().map(|j| &j.name).collect::<Vec<_>>()
    );
    let (plugin, clock) = plugin_at(pass, &inputs);
    let before = Inputs {
        pending: early,
        running: Vec::new(),
        qos: Vec::new(),
        associations: Vec::new(),
        config: inputs.config.clone(),
    };
    let ids = register(&plugin, &before);
    let mut priorities = plugin.calculate(&[], &ids).expect("calculate at the pass");
    let mut lowest = TOP_PRIORITY;
    for job in &late {
        clock.set(job.details.submit_time);
        let submitted = at_submission(job);
        let priority = plugin
            .assign(&mut lowest, &submitted)
            .unwrap_or_else(|e| panic!("set job {}: {e}", job.job_id));
        priorities.push((job.job_id, priority));
    }
    clock.set(sample.instant.sampled_from);
    let mut report = Report::default();
    let known = Known::at_its_pass(rec);
    compare_priorities(sample, &inputs, &priorities, known, &mut report);
    let rows = plugin
        .get_priority_factors_list(&inputs.pending, &all_rows(), 0)
        .expect("get-priority-factors-list");
    compare_factors(rec, sample, &inputs, &rows, known, &mut report);
    for job in &late {
        let age = sample
            .sprio_normalised
            .iter()
            .find(|r| r.job_id == job.job_id)
            .map(|r| r.age);
        report.check(age == Some(0.0), || {
            format!("job {}: Slurm's age {age:?}, expected 0", job.job_id)
        });
    }
    let usages = plugin.association_usages().expect("association-usages");
    compare_shares(sample, &inputs, &usages, known, &mut report);
    report.assert_empty(&format!(
        "sample 3 (decay pass at {pass}, sampled at {})",
        sample.instant.sampled_from
    ));
}

/// Issue 30's differential fuzzing: each `priority-fuzz-<seed>/` recording
/// (`FUZZ_SEED=<seed> bash tests/anchor/priority/record.sh`: weights, flags,
/// association tree, usage and queue drawn by `tests/anchor/priority/fuzz.py`,
/// the stream kept in its `fuzz.txt`) goes through every check the hand-written
/// stream goes through: the configuration, both samples, the decay pass
/// between them, and the sample between passes.
#[test]
fn fuzzed_streams_match_real_slurm() {
    let dirs = anchor_priority::fuzz_dirs();
    assert!(
        !dirs.is_empty(),
        "no priority-fuzz-* recording in tests/fixtures/anchor"
    );
    for dir in dirs {
        let rec = Recording::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        eprintln!(
            "{}: {} pending jobs, {} associations",
            dir.display(),
            rec.samples[0].jobs.len(),
            rec.associations.len()
        );
        check_configuration(&rec);
        check_sample(&rec, 0);
        check_sample(&rec, 1);
        check_decay_pass(&rec);
        check_between_passes(&rec);
    }
}

/// A pending job as `_job_create` hands it to `priority_p_set`: not yet
/// accruing age (`accrue_time` is set later, by acct_policy.c's
/// `acct_policy_handle_accrue_time`) and not yet estimated by the scheduler
/// (`total_cpus` 0: job_test.c's `job_test` sets it when it evaluates the
/// job), so the job size counts the CPUs it asked for.
fn at_submission(job: &Job) -> Job {
    let mut job = job.clone();
    job.details.accrue_time = 0;
    job.total_cpus = None;
    job.priority = NO_VAL;
    job
}

/// Slurm's NO_VAL: the priority of a job not yet prioritised.
const NO_VAL: u32 = 0xffff_fffe;
