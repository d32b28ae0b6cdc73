//! PriorityUsageResetPeriod: when accumulated usage is cleared (Slurm 22.05.8 src/plugins/priority/multifactor/priority_multifactor.c `_decay_thread`,
//! at the start of each cycle, and `_next_reset`).
//!
//! Slurm computes the boundaries in the controller's local time. A
//! component has no time zone, so the boundaries here are midnights **in
//! UTC**: a site whose controller runs in another zone sees its resets
//! shifted by that zone's offset.

const DAY: i64 = 24 * 3600;
const WEEK: i64 = 7 * DAY;

/// `PriorityUsageResetPeriod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetPeriod {
    /// Usage is never cleared (the default).
    None,
    /// Cleared once, at the first cycle after start-up or reconfiguration.
    Now,
    Daily,
    Weekly,
    Monthly,
    Quarterly,
    Yearly,
}

impl ResetPeriod {
    /// Parses a `PriorityUsageResetPeriod` value, any case.
    pub fn parse(value: &str) -> Option<ResetPeriod> {
        Some(match value.to_ascii_uppercase().as_str() {
            "NONE" => ResetPeriod::None,
            "NOW" => ResetPeriod::Now,
            "DAILY" => ResetPeriod::Daily,
            "WEEKLY" => ResetPeriod::Weekly,
            "MONTHLY" => ResetPeriod::Monthly,
            "QUARTERLY" => ResetPeriod::Quarterly,
            "YEARLY" => ResetPeriod::Yearly,
            _ => return None,
        })
    }
}

/// The first reset boundary after `last_reset` (UTC, 00:00), or `None`
/// for the periods without boundaries (NONE, NOW).
///
/// * daily: the next midnight, moved forward by whole days while the day
///   after it has already begun at `now`;
/// * weekly: the next Sunday, moved forward by whole weeks likewise;
/// * monthly: the 1st of the next month;
/// * quarterly: the next of January, April, July and October 1st;
/// * yearly: January 1st of the next year.
pub fn next_boundary(period: ResetPeriod, last_reset: i64, now: i64) -> Option<i64> {
    let day = last_reset.div_euclid(DAY);
    let midnight = day * DAY;
    let (year, month, _) = civil_from_days(day);
    let first_of = |year: i64, month: u32| days_from_civil(year, month, 1) * DAY;
    Some(match period {
        ResetPeriod::None | ResetPeriod::Now => return None,
        ResetPeriod::Daily => {
            let mut t = midnight + DAY;
            while t + DAY < now {
                t += DAY;
            }
            t
        }
        ResetPeriod::Weekly => {
            // 1970-01-01 was a Thursday (weekday 4, Sunday = 0).
            let weekday = (day + 4).rem_euclid(7);
            let mut t = midnight + DAY * (7 - weekday);
            while t + WEEK < now {
                t += WEEK;
            }
            t
        }
        ResetPeriod::Monthly if month == 12 => first_of(year + 1, 1),
        ResetPeriod::Monthly => first_of(year, month + 1),
        ResetPeriod::Quarterly => match month {
            1..=3 => first_of(year, 4),
            4..=6 => first_of(year, 7),
            7..=9 => first_of(year, 10),
            _ => first_of(year + 1, 1),
        },
        ResetPeriod::Yearly => first_of(year + 1, 1),
    })
}

/// When the decay cycle clears usage: the configured period, the last
/// reset and the next boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetSchedule {
    period: ResetPeriod,
    /// NOW was configured and has not been applied yet.
    now_pending: bool,
    last_reset: Option<i64>,
    next_reset: Option<i64>,
}

impl ResetSchedule {
    pub fn new(period: ResetPeriod) -> Self {
        ResetSchedule {
            period,
            now_pending: period == ResetPeriod::Now,
            last_reset: None,
            next_reset: None,
        }
    }

    /// A reconfiguration: the period is read again, NOW arms once more and
    /// the next boundary is recomputed from the last reset.
    pub fn reconfigure(&mut self, period: ResetPeriod) {
        self.period = period;
        self.now_pending = period == ResetPeriod::Now;
        self.next_reset = None;
    }

    /// Whether usage must be cleared at this cycle (`now`), updating the
    /// schedule. Without a previous reset the first cycle counts as one
    /// (Slurm starts from the controller's start time).
    pub fn due(&mut self, now: i64) -> bool {
        if self.now_pending {
            self.now_pending = false;
            self.last_reset = Some(now);
            return true;
        }
        let last = *self.last_reset.get_or_insert(now);
        let Some(next) = self
            .next_reset
            .or_else(|| next_boundary(self.period, last, now))
        else {
            return false;
        };
        if now < next {
            self.next_reset = Some(next);
            return false;
        }
        self.last_reset = Some(next);
        self.next_reset = next_boundary(self.period, next, now);
        true
    }

    /// The time of the last reset, as saved in the state.
    pub fn last_reset(&self) -> Option<i64> {
        self.last_reset
    }

    /// Takes a saved last reset time; the next boundary follows from it.
    pub fn restore(&mut self, last_reset: Option<i64>) {
        self.last_reset = last_reset;
        self.next_reset = None;
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (`month` 1..=12).
/// Years are counted from March so that the leap day ends a year.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`]: `(year, month, day)`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unix time of a UTC date and time.
    fn utc(year: i64, month: u32, day: u32, hour: i64, minute: i64) -> i64 {
        days_from_civil(year, month, day) * DAY + hour * 3600 + minute * 60
    }

    #[test]
    fn calendar_round_trips() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(utc(2023, 11, 14, 22, 13), 1_700_000_000 - 20);
        for days in [-800_000, -1, 0, 59, 60, 365, 11_016, 19_675, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(days_from_civil(2024, 2, 29)), (2024, 2, 29));
    }

    #[test]
    fn daily_boundary_skips_past_days() {
        // Last reset Wednesday 2024-01-10 15:00; a cycle the same evening
        // waits for Thursday 00:00.
        let last = utc(2024, 1, 10, 15, 0);
        let next = next_boundary(ResetPeriod::Daily, last, utc(2024, 1, 10, 20, 0));
        assert_eq!(next, Some(utc(2024, 1, 11, 0, 0)));
        // Three days later the boundary is the midnight that began today.
        let next = next_boundary(ResetPeriod::Daily, last, utc(2024, 1, 13, 12, 0));
        assert_eq!(next, Some(utc(2024, 1, 13, 0, 0)));
    }

    #[test]
    fn weekly_boundary_is_next_sunday() {
        // 2024-01-10 is a Wednesday; the next Sunday is the 14th.
        let last = utc(2024, 1, 10, 15, 0);
        let next = next_boundary(ResetPeriod::Weekly, last, last);
        assert_eq!(next, Some(utc(2024, 1, 14, 0, 0)));
        // From a Sunday, the next Sunday.
        let sunday = utc(2024, 1, 14, 0, 0);
        assert_eq!(
            next_boundary(ResetPeriod::Weekly, sunday, sunday),
            Some(utc(2024, 1, 21, 0, 0))
        );
        // Whole weeks already past are skipped.
        assert_eq!(
            next_boundary(ResetPeriod::Weekly, last, utc(2024, 2, 1, 0, 0)),
            Some(utc(2024, 1, 28, 0, 0))
        );
    }

    #[test]
    fn monthly_quarterly_yearly_boundaries() {
        let mid_may = utc(2024, 5, 17, 9, 30);
        let dec = utc(2023, 12, 31, 23, 59);
        assert_eq!(
            next_boundary(ResetPeriod::Monthly, mid_may, mid_may),
            Some(utc(2024, 6, 1, 0, 0))
        );
        assert_eq!(
            next_boundary(ResetPeriod::Monthly, dec, dec),
            Some(utc(2024, 1, 1, 0, 0))
        );
        assert_eq!(
            next_boundary(ResetPeriod::Quarterly, mid_may, mid_may),
            Some(utc(2024, 7, 1, 0, 0))
        );
        assert_eq!(
            next_boundary(ResetPeriod::Quarterly, utc(2024, 1, 1, 0, 0), 0),
            Some(utc(2024, 4, 1, 0, 0))
        );
        assert_eq!(
            next_boundary(ResetPeriod::Quarterly, utc(2024, 9, 30, 0, 0), 0),
            Some(utc(2024, 10, 1, 0, 0))
        );
        assert_eq!(
            next_boundary(ResetPeriod::Quarterly, dec, dec),
            Some(utc(2024, 1, 1, 0, 0))
        );
        assert_eq!(
            next_boundary(ResetPeriod::Yearly, mid_may, mid_may),
            Some(utc(2025, 1, 1, 0, 0))
        );
        assert_eq!(next_boundary(ResetPeriod::None, mid_may, mid_may), None);
        assert_eq!(next_boundary(ResetPeriod::Now, mid_may, mid_may), None);
    }

    #[test]
    fn schedule_fires_at_each_boundary_and_now_once() {
        let start = utc(2024, 1, 10, 15, 0);
        let mut daily = ResetSchedule::new(ResetPeriod::Daily);
        assert!(!daily.due(start), "the first cycle only records the start");
        assert!(!daily.due(utc(2024, 1, 10, 23, 55)));
        assert!(daily.due(utc(2024, 1, 11, 0, 0)));
        assert_eq!(daily.last_reset(), Some(utc(2024, 1, 11, 0, 0)));
        assert!(!daily.due(utc(2024, 1, 11, 0, 5)));
        assert!(daily.due(utc(2024, 1, 12, 0, 3)));

        let mut now = ResetSchedule::new(ResetPeriod::Now);
        assert!(now.due(start));
        assert!(!now.due(start + 300));
        now.reconfigure(ResetPeriod::Now);
        assert!(now.due(start + 600), "reconfiguration arms NOW again");

        let mut none = ResetSchedule::new(ResetPeriod::None);
        assert!(!none.due(start) && !none.due(start + 10 * WEEK));
    }
}
