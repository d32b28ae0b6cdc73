//! The FIFO rule of `priority_p_set` and the restart boost of
//! `priority_p_recover` (Slurm 22.05.8 src/slurmctld/job_mgr.c `sync_job_priorities`).

/// The smallest boost `recover` applies (Slurm 22.05.8 src/slurmctld/job_mgr.c `sync_job_priorities`).
pub const MIN_RECOVER_BOOST: u32 = 1_000_000;

/// Priority of a new job given the controller's `lowest_prio`.
///
/// 1. a directly set priority above 1 is kept;
/// 2. otherwise `last_prio - 1` (1 when `last_prio < 2`);
/// 3. the user's nice is subtracted when it is not positive, or when the
///    result stays above `nice + 1` (so positive nice never reaches 0);
/// 4. the result is at least 1.
pub fn priority(last_prio: u32, nice: i32, direct: Option<u32>) -> u32 {
    if let Some(p) = direct.filter(|&p| p > 1) {
        return p;
    }
    let mut p = if last_prio >= 2 {
        i64::from(last_prio) - 1
    } else {
        1
    };
    let offset = i64::from(nice);
    if offset <= 0 || p > offset + 1 {
        p -= offset;
    }
    p.clamp(1, i64::from(u32::MAX)) as u32
}

/// The boost `recover` applies to every job after a restart: `boost` when it
/// is at least [`MIN_RECOVER_BOOST`], else 0 (priorities untouched).
pub fn recover_boost(boost: u32) -> u32 {
    if boost >= MIN_RECOVER_BOOST {
        boost
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `TOP_PRIORITY`: where the controller's `lowest_prio` starts.
    const TOP_PRIORITY: u32 = 0xffff_0000;

    /// The controller side of Slurm 22.05.8 src/slurmctld/job_mgr.c `set_job_prio`: `lowest_prio = min(lowest_prio, p + nice)`.
    fn sequence(nices: &[i32]) -> Vec<u32> {
        let mut lowest = TOP_PRIORITY;
        nices
            .iter()
            .map(|&nice| {
                let p = priority(lowest, nice, None);
                lowest = lowest.min((i64::from(p) + i64::from(nice)) as u32);
                p
            })
            .collect()
    }

    #[test]
    fn fifo_sequence_with_nice() {
        // Slurm 22.05.8 src/plugins/priority/basic/priority_basic.c `priority_p_set` with src/slurmctld/job_mgr.c `set_job_prio`
        // lowering `lowest_prio` after each job: jobs of nice 0, 0, 100, 0, -100 from TOP_PRIORITY.
        assert_eq!(
            sequence(&[0, 0, 100, 0, -100]),
            vec![4294901759, 4294901758, 4294901657, 4294901756, 4294901855]
        );
    }

    #[test]
    fn direct_priority_above_one_is_kept() {
        assert_eq!(priority(TOP_PRIORITY, 0, Some(999)), 999);
        // A direct priority of 1 is not "above 1": the FIFO rule applies.
        assert_eq!(priority(TOP_PRIORITY, 0, Some(1)), TOP_PRIORITY - 1);
    }

    #[test]
    fn floor_is_one() {
        assert_eq!(priority(1, 0, None), 1);
        assert_eq!(priority(0, 0, None), 1);
        // Positive nice larger than the priority is not applied (p > nice + 1 fails).
        assert_eq!(priority(50, 100, None), 49);
        assert_eq!(priority(u32::MAX, -5, None), u32::MAX);
    }

    #[test]
    fn recover_applies_only_large_boosts() {
        assert_eq!(recover_boost(999_999), 0);
        assert_eq!(recover_boost(1_000_000), 1_000_000);
    }
}
