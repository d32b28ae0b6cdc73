//! Checks of priority plugins' answers (issue 26, class 11): priorities
//! only for the jobs asked about, each once and never 0 (0 means held,
//! and the controller leaves held jobs out, src/slurmctld/job_mgr.c); a
//! `recover` boost no
//! larger than the room the controller offered, so adding it to
//! `lowest_prio` cannot overflow; usage figures that are numbers; `sprio`
//! rows only for the jobs given.

use std::collections::HashSet;

use super::Checker;
use crate::bindings::types::Job;
use crate::error::CallError;
use crate::kinds::priority::{AssociationUsage, PriorityFactors};

impl Checker<'_> {
    /// New priorities `(job-id, priority)`: each for a job of `ids` (what
    /// `ids_are` names), each job once, none 0.
    fn priorities(
        &self,
        answer: &[(u32, u32)],
        ids: &HashSet<u32>,
        ids_are: &str,
    ) -> Result<(), CallError> {
        let mut seen = HashSet::with_capacity(answer.len());
        for &(id, priority) in answer {
            if !ids.contains(&id) {
                return Err(self.fail(format!("a priority for job {id}, which is not {ids_are}")));
            }
            if !seen.insert(id) {
                return Err(self.fail(format!("job {id} is given a priority twice")));
            }
            if priority == 0 {
                return Err(self.fail(format!(
                    "priority 0 for job {id} (0 means held; held jobs are not recalculated)"
                )));
            }
        }
        Ok(())
    }

    /// A `calculate` answer: priorities of the pending jobs, and of the
    /// running ones (`CALCULATE_RUNNING`), as [`Checker::priorities`].
    pub fn calculated(
        &self,
        running: &[Job],
        pending: &[u32],
        answer: &[(u32, u32)],
    ) -> Result<(), CallError> {
        let ids: HashSet<u32> = pending
            .iter()
            .copied()
            .chain(running.iter().map(|j| j.job_id))
            .collect();
        self.priorities(answer, &ids, "pending or running in this call")
    }

    /// A `recover` answer: a boost of at most the `boost` offered
    /// (`TOP_PRIORITY - highest`: priority/basic returns it or 0, so
    /// `lowest_prio + boost` stays within `u32`), and new priorities for the
    /// given jobs only, as [`Checker::priorities`].
    pub fn recovered(
        &self,
        boost: u32,
        jobs: &[Job],
        answer: &(u32, Vec<(u32, u32)>),
    ) -> Result<(), CallError> {
        if answer.0 > boost {
            return Err(self.fail(format!(
                "a boost of {} where {boost} was offered (the boost is added to lowest_prio)",
                answer.0
            )));
        }
        let ids: HashSet<u32> = jobs.iter().map(|j| j.job_id).collect();
        self.priorities(&answer.1, &ids, "among the jobs recovered")
    }

    /// An association's usage figures: `usage-raw` and the factors
    /// finite and not negative; `level-fs` not negative (infinite where
    /// the association has no usage, as Fair Tree computes it).
    pub fn association_usage(&self, usage: &AssociationUsage) -> Result<(), CallError> {
        let id = usage.id;
        for (name, v) in [
            ("usage-raw", usage.usage_raw),
            ("usage-norm", usage.usage_norm),
            ("usage-effective", usage.usage_effective),
            ("shares-norm", usage.shares_norm),
            ("fair-share", usage.fair_share),
        ] {
            self.factor(&format!("association {id}: {name}"), v)?;
        }
        if let Some(level) = usage.level_fs {
            if level.is_nan() || level < 0.0 {
                return Err(self.fail(format!(
                    "association {id}: level-fs = {level}: it must be a number, not negative"
                )));
            }
        }
        Ok(())
    }

    /// A `set-assoc-usage` answer: the association asked for, with usage
    /// figures as [`Checker::association_usage`].
    pub fn assoc_usage_of(&self, assoc_id: u32, usage: &AssociationUsage) -> Result<(), CallError> {
        if usage.id != assoc_id {
            return Err(self.fail(format!(
                "the usage of association {} where {assoc_id} was asked for",
                usage.id
            )));
        }
        self.association_usage(usage)
    }

    /// An `association-usages` answer: each association once, its figures
    /// as [`Checker::association_usage`].
    pub fn association_usages(&self, usages: &[AssociationUsage]) -> Result<(), CallError> {
        self.items("association usages", usages.len())?;
        let mut seen = HashSet::with_capacity(usages.len());
        for usage in usages {
            if !seen.insert(usage.id) {
                return Err(self.fail(format!("association {} is listed twice", usage.id)));
            }
            self.association_usage(usage)?;
        }
        Ok(())
    }

    /// `get-priority-factors-list` rows: each for one of `jobs` (a job
    /// may have one row per partition and QOS), weighted factors finite
    /// and not negative, texts within [`super::MAX_TEXT`].
    pub fn factor_rows(&self, jobs: &[Job], rows: &[PriorityFactors]) -> Result<(), CallError> {
        self.items("rows", rows.len())?;
        let ids: HashSet<u32> = jobs.iter().map(|j| j.job_id).collect();
        for row in rows {
            let id = row.job_id;
            if !ids.contains(&id) {
                return Err(self.fail(format!("a row for job {id}, which was not given")));
            }
            for (name, v) in [
                ("age", row.age),
                ("association", row.association),
                ("fair-share", row.fair_share),
                ("job-size", row.job_size),
                ("partition", row.partition_factor),
                ("qos", row.qos_factor),
            ] {
                self.factor(name, v)?;
            }
            self.items("tres", row.tres.len())?;
            for (name, v) in &row.tres {
                self.text("tres name", name)?;
                self.factor(name, *v)?;
            }
            self.text("partition", &row.partition)?;
            for text in [&row.account, &row.qos].into_iter().flatten() {
                self.text("account or qos", text)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::job;

    use crate::validate::testing::{reason, C};

    #[test]
    fn calculated_priorities_are_for_this_call_once_and_not_held() {
        let running = [job(7)];
        assert!(C
            .calculated(&running, &[1, 2], &[(2, 5), (7, 1), (1, 9)])
            .is_ok());
        assert_eq!(
            reason(C.calculated(&running, &[1], &[(3, 5)])),
            "a priority for job 3, which is not pending or running in this call"
        );
        assert_eq!(
            reason(C.calculated(&[], &[1], &[(1, 5), (1, 6)])),
            "job 1 is given a priority twice"
        );
        assert_eq!(
            reason(C.calculated(&[], &[1], &[(1, 0)])),
            "priority 0 for job 1 (0 means held; held jobs are not recalculated)"
        );
    }

    #[test]
    fn recover_boosts_at_most_what_was_offered() {
        let jobs = [job(1)];
        assert!(C
            .recovered(2_000_000, &jobs, &(2_000_000, vec![(1, 2_000_100)]))
            .is_ok());
        assert!(C.recovered(5, &jobs, &(0, Vec::new())).is_ok());
        assert_eq!(
            reason(C.recovered(5, &jobs, &(6, Vec::new()))),
            "a boost of 6 where 5 was offered (the boost is added to lowest_prio)"
        );
    }

    fn usage(id: u32) -> AssociationUsage {
        AssociationUsage {
            id,
            usage_raw: 10.0,
            usage_norm: 0.5,
            usage_effective: 0.5,
            shares_norm: 0.5,
            fair_share: 0.5,
            level_fs: Some(f64::INFINITY),
        }
    }

    #[test]
    fn usages_are_numbers_once_each() {
        // Fair Tree's level-fs is infinite for an association without usage.
        assert!(C.association_usages(&[usage(1), usage(2)]).is_ok());
        assert_eq!(
            reason(C.association_usages(&[usage(1), usage(1)])),
            "association 1 is listed twice"
        );
        let nan_level = AssociationUsage {
            level_fs: Some(f64::NAN),
            ..usage(3)
        };
        assert_eq!(
            reason(C.association_usage(&nan_level)),
            "association 3: level-fs = NaN: it must be a number, not negative"
        );
        assert_eq!(
            reason(C.assoc_usage_of(4, &usage(3))),
            "the usage of association 3 where 4 was asked for"
        );
    }
}
