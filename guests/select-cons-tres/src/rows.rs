//! Partition rows (spec 2.1): per partition, rows of jobs whose cores do not
//! overlap; a job goes into the first row its cores fit.

use crate::bits::Bits;

/// One row: the union of its jobs' cores (cluster-wide core map).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub cores: Bits,
    pub jobs: Vec<u32>,
}

/// The rows of one partition (`num_rows = max_share & ~FORCE`, at least 1).
#[derive(Clone, Debug, PartialEq)]
pub struct PartRows {
    pub num_rows: usize,
    pub rows: Vec<Row>,
}

impl PartRows {
    pub fn new(num_rows: usize, total_cores: usize) -> PartRows {
        PartRows {
            num_rows: num_rows.max(1),
            rows: (0..num_rows.max(1))
                .map(|_| Row {
                    cores: Bits::new(total_cores),
                    jobs: Vec::new(),
                })
                .collect(),
        }
    }

    /// Places `job` in the first row its cores do not overlap; `false` on
    /// "job overflow" (the job is then in no row, as in Slurm).
    pub fn add(&mut self, job: u32, cores: &Bits) -> bool {
        for row in &mut self.rows {
            if !row.cores.intersects(cores) {
                row.cores.or(cores);
                row.jobs.push(job);
                return true;
            }
        }
        false
    }

    /// Removes `job` and re-packs the remaining jobs into the fewest rows,
    /// densest first. `cores_of` gives each job's cores.
    pub fn remove(&mut self, job: u32, cores_of: &dyn Fn(u32) -> Option<Bits>) {
        if !self.rows.iter().any(|r| r.jobs.contains(&job)) {
            return;
        }
        let total = self.rows[0].cores.len();
        let mut jobs: Vec<(u32, Bits)> = self
            .rows
            .iter()
            .flat_map(|r| r.jobs.iter().copied())
            .filter(|j| *j != job)
            .filter_map(|j| cores_of(j).map(|c| (j, c)))
            .collect();
        if self.num_rows > 1 {
            jobs.sort_by_key(|(j, c)| (std::cmp::Reverse(c.count()), *j));
        }
        *self = PartRows::new(self.num_rows, total);
        for (j, c) in jobs {
            self.add(j, &c);
        }
    }

    /// Union of every row's cores.
    pub fn all_cores(&self) -> Bits {
        let mut out = self.rows[0].cores.clone();
        for r in &self.rows[1..] {
            out.or(&r.cores);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fitting_row_and_repack() {
        // Spec 2.1: first row whose bitmap does not intersect; removal re-packs.
        let mut p = PartRows::new(2, 8);
        let a = Bits::full(8);
        let mut b = Bits::new(8);
        b.set(0);
        assert!(p.add(1, &a));
        assert!(p.add(2, &b));
        assert_eq!(p.rows[1].jobs, vec![2]);
        assert!(!p.add(3, &b), "third overlapping job overflows two rows");
        let cores = |j: u32| match j {
            1 => Some(a.clone()),
            2 => Some(b.clone()),
            _ => None,
        };
        p.remove(1, &cores);
        assert_eq!(p.rows[0].jobs, vec![2]);
        assert!(p.rows[1].jobs.is_empty());
    }
}
