//! One plugin instance: settings, the association tree, the QOS table and
//! the decay cycle's clock, with the operations the contract exports.
//! Plain Rust: the caller passes the time (`now`), the export layer takes
//! it from the host's clock.

use std::collections::{BTreeMap, BTreeSet};

use slurm_wasm_sdk::Error;

use crate::classic::Classic;
use crate::config::{Config, Flags};
use crate::decay::{self, Period};
use crate::factors::{clamp_priority, Factors, Inputs, PartitionInfo, Scale};
use crate::fair_tree;
use crate::job::{JobView, RunState};
use crate::qos::{QosTable, QosUpdate};
use crate::reset::ResetSchedule;
use crate::sprio::{self, Filter, Row};
use crate::state::Saved;
use crate::tree::{NewAssoc, Shares, Tree, Update};
use crate::usage::reserve;

/// Slurm's NO_VAL: a priority not yet set.
const NO_VAL: u32 = 0xffff_fffe;

/// The cluster as the formula sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cluster {
    /// The partition table; jobs name partitions by index into it.
    pub partitions: Vec<PartitionInfo>,
    pub cpus: u32,
    pub nodes: u32,
}

/// The usage figures of one association (what `sshare` shows).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub id: u32,
    pub usage_raw: f64,
    pub usage_norm: f64,
    pub usage_effective: f64,
    pub shares_norm: f64,
    /// Classic factor, or Fair Tree's for users (0 for accounts).
    pub fair_share: f64,
    /// Fair Tree's Level FS (not for the root, nor with classic).
    pub level_fs: Option<f64>,
}

/// A priority/multifactor instance.
#[derive(Debug, Clone)]
pub struct Multifactor {
    config: Config,
    cluster: Cluster,
    tree: Tree,
    qos: QosTable,
    /// When the previous decay cycle ran (`g_last_ran`).
    last_ran: Option<i64>,
    reset: ResetSchedule,
    /// Jobs whose end was charged by `job_end` (dropped once the host no
    /// longer lists them as running).
    ended: BTreeSet<u32>,
    /// The weighted factors of each job's last computation (`set`, a
    /// `calculate` pass, `recover`), in its first partition: what `sprio`
    /// shows, as Slurm's `job_ptr->prio_factors` (filled by
    /// `_get_priority_internal`, copied by `_filter_job` of
    /// priority_multifactor.c). Forgotten by `job_end`.
    stored: BTreeMap<u32, Factors>,
}

impl Multifactor {
    /// An instance with an empty tree and QOS table.
    pub fn new(config: Config, cluster: Cluster) -> Multifactor {
        Multifactor {
            reset: ResetSchedule::new(config.reset_period),
            config,
            cluster,
            tree: Tree::default(),
            qos: QosTable::default(),
            last_ran: None,
            ended: BTreeSet::new(),
            stored: BTreeMap::new(),
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    #[cfg(test)]
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    #[cfg(test)]
    pub fn qos(&self) -> &QosTable {
        &self.qos
    }

    fn classic(&self) -> Classic {
        Classic {
            depth_oblivious: self.config.flags.contains(Flags::DEPTH_OBLIVIOUS),
            damp: f64::from(self.config.damp),
        }
    }

    fn decay_factor(&self) -> f64 {
        decay::decay_factor(self.config.decay_half_life)
    }

    /// Fair-share figures after a change of the tree, its usage or the
    /// settings: Fair Tree computes the whole tree; classic computes the
    /// accounts and leaves users to be computed when needed.
    fn refresh_fair_share(&mut self) {
        if self.config.fair_tree() {
            fair_tree::compute(&mut self.tree);
        } else {
            self.classic().refresh_accounts(&mut self.tree);
        }
    }

    /// Applies association changes (all or nothing, see [`Tree::apply`])
    /// and recomputes fair-share at once, so that `set` and `sshare` see
    /// the new tree before the next cycle.
    pub fn update_associations(&mut self, updates: Vec<Update>) -> Result<(), Error> {
        self.tree.apply(updates, self.config.fair_tree())?;
        self.refresh_fair_share();
        Ok(())
    }

    /// Applies QOS changes (all or nothing, see [`QosTable::apply`]).
    pub fn update_qos(&mut self, updates: Vec<QosUpdate>) -> Result<(), Error> {
        self.qos.apply(updates)
    }

    /// `priority_p_reconfig`: new settings and cluster. Shares are
    /// renormalised when Fair Tree was switched on or off; the reset period
    /// is read again (NOW resets once more). With `assoc_clear` the
    /// reserved run-seconds of every association and QOS are rebuilt from
    /// `running`: each running job started by the last cycle holds
    /// `alloc x (end_time - last cycle)` (from now when no cycle ran yet).
    pub fn reconfigure(
        &mut self,
        config: Config,
        cluster: Cluster,
        assoc_clear: bool,
        running: &[JobView<'_>],
        now: i64,
    ) {
        let fair_tree_changed = config.fair_tree() != self.config.fair_tree();
        self.reset.reconfigure(config.reset_period);
        self.config = config;
        self.cluster = cluster;
        if fair_tree_changed {
            self.tree.normalise_shares(self.config.fair_tree());
        }
        self.refresh_fair_share();
        if assoc_clear {
            self.rebuild_run_secs(running, self.last_ran.unwrap_or(now));
        }
    }

    fn rebuild_run_secs(&mut self, running: &[JobView<'_>], since: i64) {
        for a in self.tree.iter_mut() {
            a.run_secs.clear();
        }
        for q in self.qos.iter_mut() {
            q.run_secs.clear();
        }
        for job in running {
            if !job.state.is_active() || job.start_time > since {
                continue;
            }
            let remaining = (job.end_time - since).max(0) as u64;
            let amount: Vec<(String, u64)> = job
                .tres_allocated
                .iter()
                .map(|(name, count)| (name.to_ascii_lowercase(), count.saturating_mul(remaining)))
                .collect();
            if let Some(q) = job.qos.and_then(|name| self.qos.by_name_mut(name)) {
                reserve(&mut q.run_secs, &amount);
            }
            for id in self.tree.lineage(job.assoc_id) {
                reserve(
                    &mut self.tree.get_mut(id).expect("lineage").run_secs,
                    &amount,
                );
            }
        }
    }

    fn scale(&self) -> Scale {
        Scale {
            max_partition_factor: self
                .cluster
                .partitions
                .iter()
                .map(|p| p.job_factor)
                .max()
                .unwrap_or(0),
            max_qos_priority: self.qos.max_priority(),
            max_assoc_priority: self.tree.max_priority(),
            cluster_cpus: self.cluster.cpus,
            cluster_nodes: self.cluster.nodes,
        }
    }

    /// Refuses jobs naming a partition outside the partition table.
    fn check_partitions<'j>(
        &self,
        jobs: impl IntoIterator<Item = &'j JobView<'j>>,
    ) -> Result<(), Error> {
        let count = self.cluster.partitions.len();
        for job in jobs {
            if let Some(p) = job.partitions.iter().find(|&&p| p as usize >= count) {
                return Err(Error::invalid(format!(
                    "job {}: partition index {p} is outside the partition table ({count} partitions)",
                    job.job_id
                )));
            }
        }
        Ok(())
    }

    /// The job's weighted factors in partition `partition` (an index
    /// already checked), or without a partition.
    fn weighted(&mut self, job: &JobView<'_>, partition: Option<u32>, now: i64) -> Factors {
        let scale = self.scale();
        let assoc = self.tree.get(job.assoc_id);
        let assoc_priority = assoc.and_then(|a| a.spec.priority).unwrap_or(0);
        let fair_share = match assoc {
            None => 0.0,
            Some(_) if self.config.weights.fairshare == 0 => 0.0,
            Some(a) if self.config.fair_tree() => a.figures.fs_factor,
            Some(_) => self.classic().job_fair_share(&mut self.tree, job.assoc_id),
        };
        let qos_priority = job
            .qos
            .and_then(|name| self.qos.by_name(name))
            .map_or(0, |q| q.spec.priority);
        let inputs = Inputs {
            fair_share,
            assoc_priority,
            qos_priority,
            partition: partition.map(|p| &self.cluster.partitions[p as usize]),
            now,
        };
        Factors::of(&self.config, &scale, job, &inputs).weighted(&self.config)
    }

    /// The priority of a job: its explicit priority when it has one, else
    /// the formula in its first partition, whose factors are stored for
    /// `sprio`; with INCR_ONLY never below its current priority. A total
    /// above 0xffffffff is logged.
    fn priority_of(&mut self, job: &JobView<'_>, now: i64) -> u32 {
        if job.direct_priority {
            self.stored.remove(&job.job_id);
            return job.priority;
        }
        let weighted = self.weighted(job, job.partitions.first().copied(), now);
        let total = weighted.total(job.site_factor, job.nice);
        self.stored.insert(job.job_id, weighted);
        if total > f64::from(u32::MAX) {
            slurm_wasm_sdk::error!(
                "priority/multifactor: job {} priority {total} exceeds 4294967295",
                job.job_id
            );
        }
        let p = clamp_priority(total);
        if self.config.flags.contains(Flags::INCR_ONLY) && job.priority != NO_VAL {
            p.max(job.priority)
        } else {
            p
        }
    }

    /// `priority_p_set`: the priority of a new or re-prioritised job.
    pub fn set(&mut self, job: &JobView<'_>, now: i64) -> Result<u32, Error> {
        self.check_partitions([job])?;
        Ok(self.priority_of(job, now))
    }

    /// One cycle of the decay thread at `now` (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_decay_thread`):
    ///
    /// 1. usage reset when PriorityUsageResetPeriod says so;
    /// 2. classic: accounts' effective usage recomputed, users unknown;
    /// 3. decay by `df^Δ` since the previous cycle;
    /// 4. usage of `running` jobs charged from the previous cycle (or their
    ///    start) to now, or to their end for finished ones, which count as
    ///    ended. Classic Slurm skips this on its first cycle and when no
    ///    time passed; Fair Tree always charges;
    /// 5. Fair Tree recomputed;
    /// 6. new priorities of the pending jobs (and, with CALCULATE_RUNNING,
    ///    of running and suspended ones), skipping held jobs (priority 0)
    ///    and jobs with an explicit priority.
    ///
    /// Slurm's classic loop also skips its first cycle's priorities; here
    /// they are always returned. Fails without changing anything when a
    /// job names a partition outside the table.
    pub fn calculate(
        &mut self,
        running: &[JobView<'_>],
        pending: &[JobView<'_>],
        now: i64,
    ) -> Result<Vec<(u32, u32)>, Error> {
        self.check_partitions(running.iter().chain(pending))?;
        if self.reset.due(now) {
            decay::reset_usage(&mut self.tree, &mut self.qos);
        }
        let fair_tree = self.config.fair_tree();
        if !fair_tree {
            self.classic().refresh_accounts(&mut self.tree);
        }
        let elapsed = self.last_ran.map(|last| now - last).filter(|&d| d > 0);
        let df = self.decay_factor();
        if let Some(delta) = elapsed {
            decay::decay_usage(&mut self.tree, &mut self.qos, decay::real_decay(df, delta));
        }
        if fair_tree || elapsed.is_some() {
            self.charge_running(running, now, df);
        }
        if fair_tree {
            fair_tree::compute(&mut self.tree);
        }
        let calc_running = self.config.flags.contains(Flags::CALCULATE_RUNNING);
        let mut out = Vec::new();
        let candidates = pending
            .iter()
            .filter(|j| j.state == RunState::Pending)
            .chain(
                running
                    .iter()
                    .filter(|j| calc_running && j.state.is_active()),
            );
        for job in candidates {
            if job.priority == 0 || job.direct_priority {
                continue;
            }
            out.push((job.job_id, self.priority_of(job, now)));
        }
        self.last_ran = Some(now);
        self.ended
            .retain(|id| running.iter().any(|j| j.job_id == *id));
        Ok(out)
    }

    /// Step 4 of [`Multifactor::calculate`].
    fn charge_running(&mut self, running: &[JobView<'_>], now: i64, df: f64) {
        let calc_running = self.config.flags.contains(Flags::CALCULATE_RUNNING);
        let start = self.last_ran.unwrap_or(0);
        for job in running {
            if self.ended.contains(&job.job_id) {
                continue;
            }
            let period = match job.state {
                RunState::Finished => {
                    self.ended.insert(job.job_id);
                    Period {
                        start,
                        end: now.min(job.end_time),
                        ending: true,
                    }
                }
                RunState::Pending if !calc_running => continue,
                _ => Period {
                    start,
                    end: now,
                    ending: false,
                },
            };
            decay::charge_job(&mut self.tree, &mut self.qos, job, period, df);
        }
    }

    /// `priority_p_job_end`: charges the job from the previous cycle (or its
    /// start) to its end time (now when it has none), releases the rest of
    /// its reserved run-seconds, and remembers it so that it is charged
    /// once.
    pub fn job_end(&mut self, job: &JobView<'_>, now: i64) {
        self.stored.remove(&job.job_id);
        if !self.ended.insert(job.job_id) {
            return;
        }
        let end = if job.end_time > 0 {
            now.min(job.end_time)
        } else {
            now
        };
        let period = Period {
            start: self.last_ran.unwrap_or(0),
            end,
            ending: true,
        };
        let df = self.decay_factor();
        decay::charge_job(&mut self.tree, &mut self.qos, job, period, df);
    }

    /// The figures `sshare` shows for association `id`. The root's are the
    /// association manager's, not computed ones: its effective usage is the
    /// 1.0 `priority_p_init` sets (priority_multifactor.c), and its
    /// normalised shares are what assoc_mgr.c's
    /// `assoc_mgr_normalize_assoc_shares` makes of an association that
    /// belongs to no level: 1 with classic (`_normalize_assoc_shares_traditional`
    /// multiplies nothing), `shares / NO_VAL` with Fair Tree
    /// (`_normalize_assoc_shares_fair_tree`: the root's level shares keep
    /// the NO_VAL of `slurmdb_create_assoc_usage`), which sshare prints as
    /// 0.000000. (The root's normalised usage is never computed either:
    /// NO_VAL, which sshare leaves blank; the contract's field carries
    /// the ratio, 1 or 0, and the display leaves it out.)
    fn report(&self, id: u32) -> Report {
        let a = self.tree.get(id).expect("caller checked");
        let f = &a.figures;
        let mut report = Report {
            id,
            usage_raw: a.usage.raw,
            usage_norm: f.usage_norm,
            usage_effective: f.usage_efctv.unwrap_or(0.0),
            shares_norm: f.shares_norm,
            fair_share: f.fs_factor,
            level_fs: f.level_fs,
        };
        if self.tree.root() == Some(id) {
            report.usage_effective = 1.0;
            if self.config.fair_tree() {
                let raw = match a.spec.shares {
                    Shares::Raw(n) => f64::from(n),
                    Shares::Parent => 0.0,
                };
                report.shares_norm = raw / f64::from(NO_VAL);
            }
        }
        report
    }

    /// `priority_p_set_assoc_usage`: recomputes the association's
    /// normalised usage (and with classic its effective usage and factor)
    /// and returns its figures; `EINVAL` for an unknown association.
    pub fn set_assoc_usage(&mut self, id: u32) -> Result<Report, Error> {
        if self.tree.get(id).is_none() {
            return Err(Error::invalid(format!("unknown association {id}")));
        }
        if self.config.fair_tree() {
            let usage_norm = self.tree.usage_norm(id);
            self.tree.get_mut(id).expect("checked").figures.usage_norm = usage_norm;
        } else {
            self.classic().set_assoc_usage(&mut self.tree, id);
        }
        Ok(self.report(id))
    }

    /// Every association's figures, parents first (classic users not yet
    /// computed in this cycle are computed first, as `sshare` does).
    pub fn association_usages(&mut self) -> Vec<Report> {
        if !self.config.fair_tree() {
            self.classic().complete(&mut self.tree);
        }
        self.tree
            .top_down()
            .iter()
            .map(|&id| self.report(id))
            .collect()
    }

    /// `get_priority_factors_list`: one row per listed job and partition
    /// passing `filter` (see [`sprio`]; listed means eligible at `now`,
    /// the request's time, as `priority_p_get_priority_factors_list`
    /// tests). The factors are those of the job's last computation, not
    /// factors at `now`: a job submitted after the last `calculate` pass
    /// shows the age it had at submission. In a partition other than the
    /// job's first, the partition and TRES factors are that partition's,
    /// computed at the request (`_filter_job` of priority_multifactor.c
    /// does the same for a job in several partitions). A job never
    /// computed (never given to `set`) gets factors computed at `now`.
    /// The row's priority is the total of its factors, as `sprio` adds
    /// them up. Fails when a job names a partition outside the table.
    pub fn factors_list(
        &mut self,
        jobs: &[JobView<'_>],
        filter: &Filter<'_>,
        now: i64,
    ) -> Result<Vec<Row>, Error> {
        self.check_partitions(jobs)?;
        let mut rows = Vec::new();
        for job in jobs {
            if !filter.job(job) || !sprio::listed(job, self.config.flags, now) {
                continue;
            }
            for (i, &p) in job.partitions.iter().enumerate() {
                let name = self.cluster.partitions[p as usize].name.clone();
                if !filter.partition(&name) {
                    continue;
                }
                let (direct, weighted, priority) = if job.direct_priority {
                    (Some(job.priority), Factors::default(), job.priority)
                } else {
                    let weighted = match self.stored.get(&job.job_id).cloned() {
                        Some(stored) if i == 0 => stored,
                        Some(stored) => {
                            let here = self.weighted(job, Some(p), now);
                            Factors {
                                partition: here.partition,
                                tres: here.tres,
                                ..stored
                            }
                        }
                        None => self.weighted(job, Some(p), now),
                    };
                    let priority = clamp_priority(weighted.total(job.site_factor, job.nice));
                    (None, weighted, priority)
                };
                rows.push(Row {
                    job_id: job.job_id,
                    user_id: job.user_id,
                    account: job.account.map(str::to_owned),
                    partition: name,
                    qos: job.qos.map(str::to_owned),
                    direct,
                    weighted,
                    site: job.site_factor,
                    nice: job.nice,
                    priority,
                });
            }
        }
        Ok(rows)
    }

    /// The saved state (see [`crate::state`]).
    pub fn save(&self) -> Vec<u8> {
        Saved {
            last_ran: self.last_ran,
            last_reset: self.reset.last_reset(),
            assocs: self
                .tree
                .top_down()
                .iter()
                .map(|&id| {
                    let a = self.tree.get(id).expect("listed");
                    NewAssoc {
                        spec: a.spec.clone(),
                        usage: a.usage.clone(),
                        run_secs: a.run_secs.clone(),
                    }
                })
                .collect(),
            qos: self.qos.iter().cloned().collect(),
            ended: self.ended.iter().copied().collect(),
        }
        .encode()
    }

    /// Replaces the tree, QOS table and cycle times with a saved state.
    /// Nothing changes unless the whole state reads and forms a valid tree.
    pub fn restore(&mut self, data: &[u8]) -> Result<(), Error> {
        let saved = Saved::decode(data).map_err(Error::invalid)?;
        let mut tree = Tree::default();
        tree.apply(
            saved.assocs.into_iter().map(Update::Upsert).collect(),
            self.config.fair_tree(),
        )
        .map_err(|e| Error::invalid(format!("saved association tree: {}", e.message)))?;
        let qos = QosTable::from_entries(saved.qos)
            .map_err(|e| Error::invalid(format!("saved QOS table: {}", e.message)))?;
        self.tree = tree;
        self.qos = qos;
        self.last_ran = saved.last_ran;
        self.reset.restore(saved.last_reset);
        self.ended = saved.ended.into_iter().collect();
        self.refresh_fair_share();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classic::tests::test24_1_tree;
    use crate::config::{Weights, SEVEN_DAYS};
    use crate::factors::tests::{vector_config, vector_job, NOW};
    use crate::fair_tree::tests::test24_4_tree;
    use crate::qos::QosSpec;
    use crate::reset::ResetPeriod;
    use crate::tree::tests::assoc;
    use crate::tree::Shares;
    use crate::usage::TresSeconds;

    fn partition(name: &str, job_factor: u16) -> PartitionInfo {
        PartitionInfo {
            name: name.into(),
            job_factor,
            max_time: None,
            tres: vec![("cpu".into(), 1000)],
        }
    }

    fn cluster(partitions: Vec<PartitionInfo>) -> Cluster {
        Cluster {
            partitions,
            cpus: 1000,
            nodes: 100,
        }
    }

    fn qos_updates() -> Vec<QosUpdate> {
        [(1, "normal", 50), (2, "high", 100)]
            .into_iter()
            .map(|(id, name, priority)| {
                QosUpdate::Upsert(
                    QosSpec {
                        id,
                        name: name.into(),
                        priority,
                        usage_factor: 1.0,
                        no_decay: false,
                    },
                    TresSeconds::new(),
                )
            })
            .collect()
    }

    /// The settings of the hand-computed case of Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`
    /// (factors.rs `vector_config`) on the classic tree of `priority_p_set_assoc_usage` (test24.1): User4 (association 14)
    /// has fair-share 0.5 exactly.
    fn classic_spec() -> Multifactor {
        let config = Config {
            flags: Flags::parse("NO_FAIR_TREE").unwrap(),
            ..vector_config()
        };
        let mut m = Multifactor::new(config, cluster(vec![partition("debug", 1)]));
        m.update_qos(qos_updates()).unwrap();
        m.update_associations(test24_1_tree()).unwrap();
        m
    }

    fn user4_job() -> JobView<'static> {
        JobView {
            assoc_id: 14,
            qos: Some("normal"),
            ..vector_job()
        }
    }

    #[test]
    fn synthetic_vector_with_a_real_tree() {
        let mut m = classic_spec();
        assert_eq!(m.set(&user4_job(), NOW).unwrap(), 7442);
        assert_eq!(
            m.calculate(&[], &[user4_job()], NOW).unwrap(),
            vec![(1, 7442)]
        );
        // Site factor and nice enter as they are.
        let adjusted = JobView {
            site_factor: 58,
            nice: 100,
            ..user4_job()
        };
        assert_eq!(m.set(&adjusted, NOW).unwrap(), 7400);
    }

    /// Slurm's sprio shows the factors of the last computation
    /// (`job_ptr->prio_factors`), not factors at the request: a job set at
    /// its submission keeps Age 0 until the next pass, and after the pass
    /// shows the pass's age, whatever the time of the request.
    #[test]
    fn sprio_shows_the_factors_of_the_last_computation() {
        let mut m = classic_spec();
        let fresh = JobView {
            submit_time: NOW,
            begin_time: NOW,
            accrue_time: NOW,
            ..user4_job()
        };
        let all = Filter::default();
        let set = m.set(&fresh, NOW).unwrap();
        let later = m
            .factors_list(std::slice::from_ref(&fresh), &all, NOW + 3600)
            .unwrap();
        assert_eq!((later[0].weighted.age, later[0].priority), (0.0, set));
        let passed = m
            .calculate(&[], std::slice::from_ref(&fresh), NOW + 3600)
            .unwrap();
        let rows = m
            .factors_list(std::slice::from_ref(&fresh), &all, NOW + 7200)
            .unwrap();
        let age = rows[0].weighted.age;
        // PriorityWeightAge 1000 over PriorityMaxAge 7 days: one hour's worth.
        assert!((age - 1000.0 / (7.0 * 24.0)).abs() < 1e-9, "{age}");
        assert_eq!(rows[0].priority, passed[0].1);
        // A job the instance never computed gets factors at the request.
        let unknown = JobView {
            job_id: 2,
            ..fresh.clone()
        };
        let rows = m.factors_list(&[unknown], &all, NOW + 3600).unwrap();
        assert!((rows[0].weighted.age - 1000.0 / 168.0).abs() < 1e-9);
        // job-end forgets the stored factors.
        m.job_end(&fresh, NOW + 7200);
        let rows = m.factors_list(&[fresh], &all, NOW + 7200).unwrap();
        assert!((rows[0].weighted.age - 2000.0 / 168.0).abs() < 1e-9);
    }

    #[test]
    fn classic_vector_through_the_instance() {
        let mut m = classic_spec();
        let reports = m.association_usages();
        let user5 = reports.iter().find(|r| r.id == 15).unwrap();
        assert_eq!(format!("{:.6}", user5.fair_share), "0.749154");
        assert_eq!(format!("{:.6}", user5.usage_effective), "0.145833");
        let user2 = m.set_assoc_usage(12).unwrap();
        assert_eq!(
            (
                format!("{:.6}", user2.shares_norm),
                format!("{:.6}", user2.fair_share)
            ),
            ("0.050000".into(), "0.022097".into())
        );
        assert_eq!(
            m.set_assoc_usage(99).unwrap_err().code,
            slurm_wasm_sdk::codes::EINVAL
        );
    }

    #[test]
    fn fair_tree_through_the_instance() {
        let mut m = Multifactor::new(vector_config(), cluster(vec![partition("debug", 1)]));
        m.update_associations(test24_4_tree()).unwrap();
        let reports = m.association_usages();
        let ud2 = reports.iter().find(|r| r.id == 53).unwrap();
        assert_eq!(format!("{:.6}", ud2.fair_share), "0.238095");
        assert_eq!(format!("{:.6}", ud2.level_fs.unwrap()), "1.294118");
        // A job of uD2 gets W_fs x 0.238095.
        let job = JobView {
            assoc_id: 53,
            ..vector_job()
        };
        let rows = m.factors_list(&[job], &Filter::default(), NOW).unwrap();
        assert_eq!(format!("{:.2}", rows[0].weighted.fair_share), "2380.95");
    }

    fn usage_tree(fair_tree: bool) -> Multifactor {
        let config = Config {
            flags: if fair_tree {
                Flags::FAIR_TREE
            } else {
                Flags::default()
            },
            ..vector_config()
        };
        let mut m = Multifactor::new(config, cluster(vec![partition("debug", 1)]));
        m.update_qos(qos_updates()).unwrap();
        m.update_associations(vec![
            assoc(1, None, "root", None, Shares::Raw(1), 0.0),
            assoc(2, Some(1), "a", None, Shares::Raw(1), 0.0),
            assoc(3, Some(2), "a", Some("u"), Shares::Raw(1), 1000.0),
            assoc(4, Some(1), "b", None, Shares::Raw(1), 0.0),
            assoc(5, Some(4), "b", Some("v"), Shares::Raw(1), 3000.0),
        ])
        .unwrap();
        m
    }

    fn usage_of(m: &Multifactor, id: u32) -> f64 {
        m.tree().get(id).unwrap().usage.raw
    }

    #[test]
    fn usage_after_one_and_ten_half_lives() {
        for fair_tree in [true, false] {
            let mut m = usage_tree(fair_tree);
            m.calculate(&[], &[], NOW).unwrap();
            assert_eq!(usage_of(&m, 3), 1000.0, "the first cycle does not decay");
            m.calculate(&[], &[], NOW + i64::from(SEVEN_DAYS)).unwrap();
            assert_eq!(format!("{:.8}", usage_of(&m, 3) / 1000.0), "0.50007340");
            assert_eq!(
                format!("{:.4}", usage_of(&m, 1)),
                format!("{:.4}", 4000.0 * 0.5000734)
            );
            for k in 2..=10 {
                m.calculate(&[], &[], NOW + k * i64::from(SEVEN_DAYS))
                    .unwrap();
            }
            assert!(
                usage_of(&m, 1) / 4000.0 < 0.001,
                "negligible after ten half-lives"
            );
        }
    }

    fn running(start: i64) -> JobView<'static> {
        JobView {
            job_id: 7,
            assoc_id: 3,
            qos: Some("normal"),
            state: RunState::Running,
            start_time: start,
            end_time: start + 3600,
            time_limit: Some(60),
            tres_allocated: vec![("cpu", 10)],
            billable: 10.0,
            ..vector_job()
        }
    }

    #[test]
    fn running_job_charges_every_cycle_and_job_end_once() {
        let df = decay::decay_factor(SEVEN_DAYS);
        let mut m = usage_tree(true);
        m.calculate(&[running(NOW)], &[], NOW).unwrap();
        assert_eq!(usage_of(&m, 3), 1000.0);
        m.calculate(&[running(NOW)], &[], NOW + 300).unwrap();
        // 1000 decayed for 300 s, plus 10 x 300 x 0.99965631.
        let expected = 1000.0 * df.powf(300.0) + 10.0 * 300.0 * df.powf(300.0);
        assert!((usage_of(&m, 3) - expected).abs() < 1e-9);
        assert_eq!(
            format!("{:.2}", expected - 1000.0 * df.powf(300.0)),
            "2998.97"
        );
        assert!(
            (usage_of(&m, 2) - expected).abs() < 1e-9,
            "and every ancestor"
        );
        let qos = m.qos().by_name("normal").unwrap().usage.raw;
        assert_eq!(format!("{qos:.2}"), "2998.97");

        let mut ended = running(NOW);
        ended.state = RunState::Finished;
        ended.end_time = NOW + 400;
        m.job_end(&ended, NOW + 450);
        let after_end = usage_of(&m, 3);
        assert!((after_end - expected - 10.0 * 100.0 * df.powf(100.0)).abs() < 1e-9);
        m.job_end(&ended, NOW + 450);
        assert_eq!(usage_of(&m, 3), after_end, "charged once");
        m.calculate(&[ended.clone()], &[], NOW + 600).unwrap();
        let decayed = after_end * df.powf(300.0);
        assert!(
            (usage_of(&m, 3) - decayed).abs() < 1e-9,
            "not charged again"
        );
    }

    #[test]
    fn finished_job_reported_as_running_is_charged_to_its_end_once() {
        let mut m = usage_tree(true);
        m.calculate(&[], &[], NOW).unwrap();
        let mut done = running(NOW - 100);
        done.state = RunState::Finished;
        done.end_time = NOW + 50;
        let mut m2 = m.clone();
        m2.calculate(&[done.clone()], &[], NOW + 300).unwrap();
        let df = decay::decay_factor(SEVEN_DAYS);
        let charged = usage_of(&m2, 3) - 1000.0 * df.powf(300.0);
        assert!((charged - 10.0 * 50.0 * df.powf(50.0)).abs() < 1e-9);
        let mut m3 = m2.clone();
        m3.calculate(&[done], &[], NOW + 600).unwrap();
        assert!((usage_of(&m3, 3) - usage_of(&m2, 3) * df.powf(300.0)).abs() < 1e-9);
    }

    #[test]
    fn classic_first_cycle_charges_nothing() {
        let mut m = usage_tree(false);
        m.calculate(&[running(NOW - 1000)], &[], NOW).unwrap();
        assert_eq!(usage_of(&m, 3), 1000.0);
        m.calculate(&[running(NOW - 1000)], &[], NOW + 100).unwrap();
        let df = decay::decay_factor(SEVEN_DAYS);
        let expected = (1000.0 + 10.0 * 100.0) * df.powf(100.0);
        assert!((usage_of(&m, 3) - expected).abs() < 1e-9);
    }

    #[test]
    fn daily_reset_clears_usage_at_midnight_utc() {
        let mut m = usage_tree(true);
        let config = Config {
            reset_period: ResetPeriod::Daily,
            ..m.config().clone()
        };
        let c = m.cluster.clone();
        m.reconfigure(config, c, false, &[], NOW);
        // NOW is 2023-11-14 22:13:20 UTC.
        m.calculate(&[], &[], NOW).unwrap();
        m.calculate(&[], &[], NOW + 1800).unwrap();
        assert!(usage_of(&m, 1) > 3990.0);
        let midnight = NOW - 22 * 3600 - 13 * 60 - 20 + 86_400;
        m.calculate(&[], &[], midnight + 60).unwrap();
        assert_eq!(usage_of(&m, 1), 0.0);
        assert_eq!(usage_of(&m, 3), 0.0);
    }

    #[test]
    fn reset_now_applies_once() {
        let mut m = usage_tree(true);
        let config = Config {
            reset_period: ResetPeriod::Now,
            ..m.config().clone()
        };
        let c = m.cluster.clone();
        m.reconfigure(config, c, false, &[], NOW);
        // The usage of before (1000 and 3000) is cleared, then the running
        // job's 10 s x 10 CPUs are charged.
        let df = decay::decay_factor(SEVEN_DAYS);
        let charge = 10.0 * (10.0 * df.powf(10.0));
        m.calculate(&[running(NOW - 10)], &[], NOW).unwrap();
        assert_eq!((usage_of(&m, 3), usage_of(&m, 1)), (charge, charge));
        m.calculate(&[], &[], NOW + 100).unwrap();
        assert_eq!(usage_of(&m, 3), charge * df.powf(100.0), "not reset again");
    }

    #[test]
    fn multiple_partitions_use_the_first_for_the_job() {
        // Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_get_priority_internal`, one priority per partition: A
        // (PriorityJobFactor 20) and B (10), normalised by the highest (src/slurmctld/read_config.c
        // `_reset_part_prio`), W 5000 ⇒ 5000 and 2500.
        let config = Config {
            weights: Weights {
                partition: 5000,
                ..Weights::default()
            },
            ..Config::default()
        };
        let mut m = Multifactor::new(
            config,
            cluster(vec![partition("A", 20), partition("B", 10)]),
        );
        let job = JobView {
            partitions: &[1, 0],
            ..vector_job()
        };
        assert_eq!(m.set(&job, NOW).unwrap(), 2500);
        let rows = m
            .factors_list(std::slice::from_ref(&job), &Filter::default(), NOW)
            .unwrap();
        let got: Vec<(&str, f64, u32)> = rows
            .iter()
            .map(|r| (r.partition.as_str(), r.weighted.partition, r.priority))
            .collect();
        assert_eq!(got, vec![("B", 2500.0, 2500), ("A", 5000.0, 5000)]);
        let only_a = vec!["A".to_string()];
        let filter = Filter {
            partitions: &only_a,
            ..Filter::default()
        };
        assert_eq!(m.factors_list(&[job], &filter, NOW).unwrap().len(), 1);
        let bad = JobView {
            partitions: &[2],
            ..vector_job()
        };
        let e = m.set(&bad, NOW).unwrap_err();
        assert!(e.message.contains("partition index 2"), "{e}");
    }

    #[test]
    fn calculate_skips_held_and_direct_and_honours_flags() {
        let mut m = classic_spec();
        let held = JobView {
            job_id: 2,
            priority: 0,
            ..user4_job()
        };
        let direct = JobView {
            job_id: 3,
            priority: 999,
            direct_priority: true,
            ..user4_job()
        };
        let run = JobView {
            job_id: 4,
            state: RunState::Running,
            ..user4_job()
        };
        let out = m
            .calculate(
                std::slice::from_ref(&run),
                &[user4_job(), held, direct.clone()],
                NOW,
            )
            .unwrap();
        assert_eq!(out, vec![(1, 7442)]);
        assert_eq!(m.set(&direct, NOW).unwrap(), 999);
        let rows = m.factors_list(&[direct], &Filter::default(), NOW).unwrap();
        assert_eq!((rows[0].direct, rows[0].priority), (Some(999), 999));
        assert_eq!(rows[0].weighted, Factors::default());

        let config = Config {
            flags: Flags::parse("NO_FAIR_TREE,CALCULATE_RUNNING,INCR_ONLY").unwrap(),
            ..m.config().clone()
        };
        let c = m.cluster.clone();
        m.reconfigure(config, c, false, &[], NOW);
        let higher = JobView {
            priority: 9999,
            ..user4_job()
        };
        let out = m.calculate(&[run], &[higher], NOW).unwrap();
        assert_eq!(out, vec![(1, 9999), (4, 7442)]);
    }

    #[test]
    fn assoc_clear_rebuilds_reserved_run_seconds() {
        let mut m = usage_tree(true);
        m.calculate(&[], &[], NOW).unwrap();
        let job = JobView {
            end_time: NOW + 600,
            tres_allocated: vec![("CPU", 4)],
            ..running(NOW - 100)
        };
        let (config, c) = (m.config().clone(), m.cluster.clone());
        m.reconfigure(config, c, true, &[job], NOW + 10);
        for id in [3, 2, 1] {
            assert_eq!(m.tree().get(id).unwrap().run_secs["cpu"], 2400);
        }
        assert!(m.tree().get(5).unwrap().run_secs.is_empty());
        assert_eq!(m.qos().by_name("normal").unwrap().run_secs["cpu"], 2400);
    }

    #[test]
    fn state_round_trips_and_refuses_garbage() {
        let mut m = usage_tree(true);
        m.calculate(&[running(NOW)], &[], NOW).unwrap();
        m.calculate(&[running(NOW)], &[], NOW + 300).unwrap();
        m.job_end(&running(NOW), NOW + 400);
        let saved = m.save();
        let mut restored = Multifactor::new(m.config().clone(), m.cluster.clone());
        restored.restore(&saved).unwrap();
        m.calculate(&[], &[], NOW + 600).unwrap();
        restored.calculate(&[], &[], NOW + 600).unwrap();
        assert_eq!(restored.association_usages(), m.association_usages());
        assert_eq!(restored.last_ran, m.last_ran);
        assert_eq!(restored.ended, m.ended);
        assert_eq!(restored.save(), m.save());

        let before = restored.save();
        for garbage in [
            &b"\xffgarbage\x00not a state"[..],
            &saved[..saved.len() - 3],
        ] {
            let e = restored.restore(garbage).unwrap_err();
            assert_eq!(e.code, slurm_wasm_sdk::codes::EINVAL);
        }
        assert_eq!(restored.save(), before, "a refused state changes nothing");
    }

    #[test]
    fn switching_fair_tree_off_renormalises_shares() {
        let mut m = Multifactor::new(vector_config(), cluster(vec![partition("debug", 1)]));
        m.update_associations(test24_1_tree()).unwrap();
        assert_eq!(m.tree().get(11).unwrap().figures.shares_norm, 1.0);
        let config = Config {
            flags: Flags::parse("NO_FAIR_TREE").unwrap(),
            ..vector_config()
        };
        let c = m.cluster.clone();
        m.reconfigure(config, c, false, &[], NOW);
        assert_eq!(
            format!("{:.6}", m.set_assoc_usage(11).unwrap().shares_norm),
            "0.300000"
        );
    }
}
