//! Simulated accounting: the association tree a site's slurmdbd would hold
//! for a workload, derived from the jobs' users, groups and accounts, so
//! that priority/multifactor's fair-share and age factors (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`, src/plugins/priority/multifactor/priority_multifactor.c `_decay_thread`, src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage`, src/plugins/priority/multifactor/fair_tree.c `fair_tree_decay`)
//! work in a replay.
//!
//! # When
//!
//! Only when the cluster's `slurm.conf` says
//! `AccountingStorageType=accounting_storage/slurmdbd` ([`enabled`]): the
//! same key makes priority/multifactor keep its `PriorityWeightAge` and
//! `PriorityWeightFairshare` (without it Slurm sets both to 0), so one
//! setting switches the whole of accounting on, as on a real cluster.
//! Nothing is contacted: the "database" is the tree built here.
//!
//! # The tree
//!
//! * `root` (id 1, no parent);
//! * one account per distinct account of the workload, in name order (ids
//!   from 2): the job's `account` when the trace has one (sacct's
//!   `Account`), else `group<gid>` from its group id (SWF field 13, the
//!   synthetic generator's group): SWF has no account field, and a group
//!   is the nearest thing it records to the account its members charge;
//! * one user association per (account, user id), in that order (ids after
//!   the accounts), named `user<uid>` (the readers keep numeric ids only) with
//!   its `user-id` set. A trace's unknown id (0 in SWF and sacct) is one
//!   user, or one group, like any other.
//!
//! Every association has `Fairshare=1`: the value `sacctmgr` gives an
//! association created without one, so every account has the same share of
//! the machine and every user the same share of its account. A trace does
//! not record the shares its site configured; equal shares make fair-share
//! depend on usage alone, which is what a comparison of policies on a trace
//! should show. No usage is loaded (every association starts at zero, as a
//! freshly created one does) and no association has a `Priority=`.
//!
//! The tree reaches the priority plugin once, before the first job, through
//! the contract's `update-associations`; each job then names its user
//! association (`assoc-id`) and account, and the plugin charges usage
//! itself (its decay cycle through `calculate`, and `job-end`), in the
//! virtual time of the stack's clock.

use std::collections::{BTreeMap, BTreeSet};

use slurm::setup::accounting::association;
use slurm::setup::records::Cluster;
use slurm_wasm_host::kinds::priority::AssociationUpdate;
use slurm_wasm_host::types::Association;

use crate::workload::{TraceJob, Workload};

/// Id of the root association (the contract's convention).
pub const ROOT_ID: u32 = 1;

/// Whether the cluster runs with (simulated) accounting:
/// `AccountingStorageType=accounting_storage/slurmdbd` in its `slurm.conf`
/// (key and value compared without case, as the multifactor plugin does).
pub fn enabled(cluster: &Cluster) -> bool {
    cluster.config.raw.iter().any(|kv| {
        kv.key.eq_ignore_ascii_case("AccountingStorageType")
            && kv.value.eq_ignore_ascii_case("accounting_storage/slurmdbd")
    })
}

/// The account a job charges: its trace account, else `group<gid>`.
pub fn account_of(job: &TraceJob) -> String {
    match &job.account {
        Some(account) if !account.is_empty() => account.clone(),
        _ => format!("group{}", job.group),
    }
}

/// The association tree of a workload (see the module documentation).
#[derive(Debug, Clone)]
pub struct Accounts {
    /// Root first, then accounts, then users (parents before children).
    pub associations: Vec<Association>,
    /// User association id by (account, user id).
    users: BTreeMap<(String, u32), u32>,
}

impl Accounts {
    /// Derives the tree from every job of `workload`.
    pub fn derive(workload: &Workload) -> Accounts {
        let users: BTreeSet<(String, u32)> = workload
            .jobs
            .iter()
            .map(|j| (account_of(j), j.user))
            .collect();
        let accounts: BTreeSet<&str> = users.iter().map(|(a, _)| a.as_str()).collect();
        let mut associations = vec![association(ROOT_ID, None, "root", None)];
        let mut account_ids = BTreeMap::new();
        for account in accounts {
            let id = ROOT_ID + 1 + account_ids.len() as u32;
            account_ids.insert(account, id);
            associations.push(association(id, Some(ROOT_ID), account, None));
        }
        let mut user_ids = BTreeMap::new();
        for (account, uid) in &users {
            let id = ROOT_ID + 1 + (account_ids.len() + user_ids.len()) as u32;
            associations.push(association(
                id,
                Some(account_ids[account.as_str()]),
                account,
                Some((&format!("user{uid}"), *uid)),
            ));
            user_ids.insert((account.clone(), *uid), id);
        }
        Accounts {
            associations,
            users: user_ids,
        }
    }

    /// The user association of `job` and the account it charges; none for
    /// a job of another workload whose (account, user) is not in the tree.
    pub fn of(&self, job: &TraceJob) -> Option<(u32, String)> {
        let account = account_of(job);
        let id = *self.users.get(&(account.clone(), job.user))?;
        Some((id, account))
    }

    /// The whole tree as `update-associations` upserts, parents first.
    pub fn updates(&self) -> Vec<AssociationUpdate> {
        self.associations
            .iter()
            .cloned()
            .map(AssociationUpdate::Upsert)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use slurm::slurm_conf;

    use slurm_wasm_host::types::Shares;

    use super::*;
    use crate::hazards::{self, ReplayOptions};
    use crate::swf;

    const ACCOUNTING: &str = "AccountingStorageType=accounting_storage/slurmdbd";

    /// One 4-CPU node, select/linear, strict priority order (no backfill),
    /// multifactor weighted on fair-share only, recalculated every minute.
    fn cluster(extra: &str) -> Cluster {
        let text = format!(
            "ClusterName=t\nSelectType=select/linear\nSchedulerType=sched/builtin\n\
             PriorityType=priority/multifactor\nPriorityCalcPeriod=1\n\
             PriorityWeightFairshare=10000\n{extra}\n\
             NodeName=n1 CPUs=4 RealMemory=1000\n\
             PartitionName=p Nodes=n1 Default=YES MaxTime=UNLIMITED\n"
        );
        let conf = slurm_conf::parse_str(&text, std::path::Path::new("slurm.conf")).unwrap();
        Cluster::from_slurm_conf(&conf).unwrap()
    }

    /// A whole-node (4 CPUs) job of `user` in group `group`.
    fn job(id: u32, submit: i64, run: i64, user: u32, group: u32) -> TraceJob {
        TraceJob {
            id,
            submit,
            run_time: run,
            time_limit: Some(2000),
            nodes: Some(1),
            cpus: 4,
            user,
            group,
            ..TraceJob::default()
        }
    }

    /// J1 (user 1001, group 10) runs 0-1000 on the only node; J2 (same
    /// user) is submitted at 10, J3 (user 2002, group 20) at 20, 100 s each.
    fn workload() -> Workload {
        Workload {
            source: "test".into(),
            jobs: vec![
                job(1, 0, 1000, 1001, 10),
                job(2, 10, 100, 1001, 10),
                job(3, 20, 100, 2002, 20),
            ],
            ..Workload::default()
        }
    }

    #[test]
    fn the_tree_of_a_small_workload() {
        let w = workload();
        let accounts = Accounts::derive(&w);
        let tree: Vec<(u32, Option<u32>, &str, Option<u32>)> = accounts
            .associations
            .iter()
            .map(|a| (a.id, a.parent_id, a.account.as_str(), a.user_id))
            .collect();
        assert_eq!(
            tree,
            vec![
                (1, None, "root", None),
                (2, Some(1), "group10", None),
                (3, Some(1), "group20", None),
                (4, Some(2), "group10", Some(1001)),
                (5, Some(3), "group20", Some(2002)),
            ]
        );
        assert!(accounts
            .associations
            .iter()
            .all(|a| matches!(a.shares, Shares::Raw(1))));
        assert_eq!(accounts.associations[3].user.as_deref(), Some("user1001"));
        assert_eq!(accounts.of(&w.jobs[1]), Some((4, "group10".to_owned())));
        assert_eq!(accounts.of(&w.jobs[2]), Some((5, "group20".to_owned())));
        assert_eq!(accounts.of(&job(9, 0, 1, 1001, 20)), None);
    }

    #[test]
    fn the_tree_of_an_swf_trace() {
        // SWF fields 12 and 13 are the user and group ids: users 7 and 9 in
        // group 3, user 7 again in group 4 (a second association), and a
        // trace account (sacct's Account) overrides the group.
        let text = b"1 0 0 60 4 -1 -1 4 600 -1 1 7 3 -1 -1 -1 -1 -1\n\
                     2 5 0 60 4 -1 -1 4 600 -1 1 9 3 -1 -1 -1 -1 -1\n\
                     3 9 0 60 4 -1 -1 4 600 -1 1 7 4 -1 -1 -1 -1 -1\n\
                     4 12 0 60 4 -1 -1 4 600 -1 1 9 3 -1 -1 -1 -1 -1\n";
        let w = hazards::apply(
            swf::parse(text, "t.swf").unwrap(),
            &ReplayOptions::default(),
        );
        let accounts = Accounts::derive(&w);
        let tree: Vec<(u32, Option<u32>, &str, Option<&str>)> = accounts
            .associations
            .iter()
            .map(|a| (a.id, a.parent_id, a.account.as_str(), a.user.as_deref()))
            .collect();
        assert_eq!(
            tree,
            vec![
                (1, None, "root", None),
                (2, Some(1), "group3", None),
                (3, Some(1), "group4", None),
                (4, Some(2), "group3", Some("user7")),
                (5, Some(2), "group3", Some("user9")),
                (6, Some(3), "group4", Some("user7")),
            ]
        );
        let ids: Vec<u32> = w.jobs.iter().map(|j| accounts.of(j).unwrap().0).collect();
        assert_eq!(ids, vec![4, 5, 6, 5]);
        let mut sacct = w.jobs[0].clone();
        sacct.account = Some("physics".into());
        assert_eq!(account_of(&sacct), "physics");
    }

    #[test]
    fn enabled_by_accounting_storage_type() {
        assert!(enabled(&cluster(ACCOUNTING)));
        assert!(enabled(&cluster(
            "accountingstoragetype=Accounting_Storage/SlurmDBD"
        )));
        assert!(!enabled(&cluster("")));
        assert!(!enabled(&cluster(
            "AccountingStorageType=accounting_storage/none"
        )));
    }

    /// What runs the native builds of select/linear and
    /// priority/multifactor (the `native` feature).
    #[cfg(feature = "native")]
    mod with_native_plugins {
        use std::sync::Arc;

        use slurm_wasm_host::capabilities::clock::VirtualClock;
        use slurm_wasm_host::types::{JobState, TresAmount};

        use super::*;
        use crate::engine::policy::Prioritizer;
        use crate::engine::{simulate, Input, SchedConfig, DEFAULT_EPOCH};
        use crate::native::{NativePrioritizer, NativeSelect};

        /// (start, end) of each job with the native select/linear and
        /// priority/multifactor.
        fn schedule(cluster: &Cluster, workload: &Workload) -> Vec<(Option<i64>, Option<i64>)> {
            let input = Input {
                cluster,
                workload,
                config: SchedConfig::from_cluster(cluster).unwrap(),
                default_partition: 0,
            };
            let clock = Arc::new(VirtualClock::new(input.epoch()));
            let mut select =
                NativeSelect::new("select/linear", &cluster.select_config(), clock.clone())
                    .unwrap();
            let mut prioritizer = NativePrioritizer::new(
                "priority/multifactor",
                &cluster.priority_config(),
                clock.clone(),
            )
            .unwrap();
            let r = simulate(&input, &mut select, &mut prioritizer, &clock, "t", None).unwrap();
            r.outcomes.iter().map(|o| (o.start, o.end)).collect()
        }

        /// J2's and J3's priorities at `set` and after three decay cycles (at
        /// 60, 120 and 180 s) with J1 running, on `cluster` with the tree of
        /// [`workload`].
        fn priorities(c: &Cluster) -> (Vec<u32>, Vec<(u32, u32)>) {
            let w = workload();
            let accounts = Accounts::derive(&w);
            let clock = Arc::new(VirtualClock::new(DEFAULT_EPOCH));
            let mut p =
                NativePrioritizer::new("priority/multifactor", &c.priority_config(), clock.clone())
                    .unwrap();
            p.associations(&accounts.updates()).unwrap();
            let record = |t: &TraceJob| {
                let mut j = slurm_wasm_host::fixtures::job(t.id);
                j.partitions = vec![0];
                j.user_id = t.user;
                let (id, account) = accounts.of(t).unwrap();
                j.assoc_id = id;
                j.account = Some(account);
                j.details.min_cpus = 4;
                j.details.submit_time = DEFAULT_EPOCH + t.submit;
                j
            };
            let mut running = record(&w.jobs[0]);
            running.state = JobState::Running;
            running.start_time = DEFAULT_EPOCH;
            running.end_time = DEFAULT_EPOCH + 2000;
            running.tres_allocated = vec![TresAmount {
                name: "cpu".into(),
                count: 4,
            }];
            let set = vec![
                p.submit(&record(&w.jobs[1])).unwrap(),
                p.submit(&record(&w.jobs[2])).unwrap(),
            ];
            let mut last = Vec::new();
            for t in [60, 120, 180] {
                clock.set(DEFAULT_EPOCH + t);
                last = p
                    .recalculate(std::slice::from_ref(&running), &[2, 3])
                    .unwrap();
            }
            (set, last)
        }

        #[test]
        fn fair_share_of_a_user_with_all_the_usage() {
            // Before any usage both users' fair-share is 1 (Fair Tree: every
            // Level FS is infinite and tied, rank 2 of 2): 10000 each. Once J1
            // (user 1001) is charged, user 1001 has all the usage.
            //
            // Fair Tree, Slurm's default (Slurm 22.05.8 src/plugins/priority/multifactor/fair_tree.c `fair_tree_decay`): at the root level account
            // group20 has LF = S/U = 0.5/0 = inf and group10 0.5/1 = 0.5; group20
            // comes first, so user 2002 gets rank 2 of 2 users (F = 1) and user
            // 1001 rank 1 (F = 0.5): J2 10000 x 0.5 = 5000, J3 10000.
            let (set, fair_tree) = priorities(&cluster(ACCOUNTING));
            assert_eq!(set, vec![10000, 10000]);
            assert_eq!(fair_tree, vec![(2, 5000), (3, 10000)]);
            // Classic (NO_FAIR_TREE, Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `priority_p_set_assoc_usage`): S_norm = 1/2 x 1/1 = 0.5 for both
            // users; user 1001's UE is its account's (level shares 1), which is
            // its usage_norm, 1 (its parent is root): F = 2^(-1/0.5) = 0.25,
            // J2 2500; user 2002: UE = 0, F = 1, J3 10000. Classic charges no
            // usage on its first cycle and recomputes the accounts' UE at the
            // start of a cycle, before charging (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_decay_thread`:
            // `_set_children_usage_efctv` runs before `_apply_new_usage`): the
            // usage charged at 120 s shows in the factors of the 180 s cycle.
            let (_, classic) = priorities(&cluster(&format!(
                "{ACCOUNTING}\nPriorityFlags=NO_FAIR_TREE"
            )));
            assert_eq!(classic, vec![(2, 2500), (3, 10000)]);
        }

        #[test]
        fn fair_share_reorders_the_queue() {
            // Without accounting multifactor drops the fair-share weight (age and
            // fair-share need slurmdbd: `init`, priority_multifactor.c): J2 and J3 tie, the
            // earlier submission (J2) runs first when J1 ends at 1000.
            let w = workload();
            assert_eq!(
                schedule(&cluster(""), &w),
                vec![
                    (Some(0), Some(1000)),
                    (Some(1000), Some(1100)),
                    (Some(1100), Some(1200)),
                ]
            );
            // With accounting, J2's user has all the usage (J1's): priority 5000
            // (Fair Tree) against J3's 10000 (derived in the test above), so J3
            // runs first; the same with classic fair-share (2500 against 10000).
            let with = schedule(&cluster(ACCOUNTING), &w);
            assert_eq!(
                with,
                vec![
                    (Some(0), Some(1000)),
                    (Some(1100), Some(1200)),
                    (Some(1000), Some(1100)),
                ]
            );
            let classic = schedule(
                &cluster(&format!("{ACCOUNTING}\nPriorityFlags=NO_FAIR_TREE")),
                &w,
            );
            assert_eq!(classic, with);
            // Replays repeat.
            assert_eq!(schedule(&cluster(ACCOUNTING), &w), with);
        }
    }
}
