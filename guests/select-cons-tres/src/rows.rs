//! Partition rows (spec 2.1): per partition, rows of jobs whose cores do not
//! overlap; a job goes into the first row its cores fit.

use crate::bits::Bits;

/// One row: the union of its jobs' cores (cluster-wide core map).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub cores: Bits,
    /// The row's jobs, ascending (found by binary search: a simulation
    /// removes hundreds of jobs from rows of thousands).
    pub jobs: Vec<u32>,
}

/// The rows of one partition (`num_rows = max_share & ~FORCE`, at least 1).
///
/// Equality compares the rows, not [`PartRows::has_map`]: the resources
/// held are the same after a job came and went, Slurm's maps stay.
#[derive(Clone, Debug)]
pub struct PartRows {
    pub num_rows: usize,
    pub rows: Vec<Row>,
    /// Whether Slurm has core maps for these rows: a job of the partition
    /// entered a row since the tables were built. 22.05 allocates a row's
    /// per-node core maps when its first job arrives and only clears them
    /// when jobs leave (cons_common/job_resources.c:103-111,
    /// part_data.c:87-91), and `_job_test` hands `_allocate_sc` a
    /// `part_core_map` only where they exist (cons_common/job_test.c:1033-1049).
    pub has_map: bool,
}

impl PartialEq for PartRows {
    fn eq(&self, other: &PartRows) -> bool {
        self.num_rows == other.num_rows && self.rows == other.rows
    }
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
            has_map: false,
        }
    }

    /// Places `job`, whose cores are `cores` (see
    /// [`crate::JobRec::core_pieces`]), in the first row its cores do not
    /// overlap; `false` on "job overflow" (the job is then in no row, as in
    /// Slurm).
    pub fn add(&mut self, job: u32, cores: &[(usize, &Bits)]) -> bool {
        for row in &mut self.rows {
            if !cores
                .iter()
                .any(|(off, c)| row.cores.intersects_at(*off, c))
            {
                for (off, c) in cores {
                    row.cores.or_at(*off, c);
                }
                if let Err(at) = row.jobs.binary_search(&job) {
                    row.jobs.insert(at, job);
                }
                self.has_map = true;
                return true;
            }
        }
        false
    }

    /// Removes `job`, whose cores are `cores`. With one row its cores are
    /// cleared from the row (the jobs of a row never overlap, so the others
    /// keep theirs), as Slurm's `_build_row_bitmaps` does for a single row;
    /// with several, the remaining jobs are re-packed into the fewest rows,
    /// densest first, `cores_of` giving each job's cores.
    pub fn remove<'a>(
        &mut self,
        job: u32,
        cores: &[(usize, &Bits)],
        cores_of: &dyn Fn(u32) -> Option<Vec<(usize, &'a Bits)>>,
    ) {
        if !self.rows.iter().any(|r| r.jobs.binary_search(&job).is_ok()) {
            return;
        }
        if let [row] = self.rows.as_mut_slice() {
            for (off, c) in cores {
                row.cores.clear_at(*off, c);
            }
            if let Ok(at) = row.jobs.binary_search(&job) {
                row.jobs.remove(at);
            }
            return;
        }
        let total = self.rows[0].cores.len();
        let mut jobs: Vec<(u32, Vec<(usize, &Bits)>)> = self
            .rows
            .iter()
            .flat_map(|r| r.jobs.iter().copied())
            .filter(|j| *j != job)
            .filter_map(|j| cores_of(j).map(|c| (j, c)))
            .collect();
        jobs.sort_by_key(|(j, c)| {
            let count: usize = c.iter().map(|(_, b)| b.count()).sum();
            (std::cmp::Reverse(count), *j)
        });
        *self = PartRows {
            has_map: self.has_map,
            ..PartRows::new(self.num_rows, total)
        };
        for (j, c) in jobs {
            self.add(j, &c);
        }
    }

    /// Makes `self` equal to `other` reusing `self`'s buffers (a
    /// will-run copy puts back a partition's rows after each answer).
    pub fn copy_from(&mut self, other: &PartRows) {
        self.num_rows = other.num_rows;
        self.has_map = other.has_map;
        self.rows.truncate(other.rows.len());
        for (mine, theirs) in self.rows.iter_mut().zip(&other.rows) {
            mine.cores.copy_from(&theirs.cores);
            mine.jobs.clone_from(&theirs.jobs);
        }
        let have = self.rows.len();
        self.rows.extend(other.rows[have..].iter().cloned());
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
        assert!(p.add(1, &[(0, &a)]));
        assert!(p.add(2, &[(0, &b)]));
        assert_eq!(p.rows[1].jobs, vec![2]);
        assert!(
            !p.add(3, &[(0, &b)]),
            "third overlapping job overflows two rows"
        );
        let cores = |j: u32| match j {
            1 => Some(vec![(0, &a)]),
            2 => Some(vec![(0, &b)]),
            _ => None,
        };
        p.remove(1, &[(0, &a)], &cores);
        assert_eq!(p.rows[0].jobs, vec![2]);
        assert!(p.rows[1].jobs.is_empty());
    }

    #[test]
    fn one_row_removal_clears_only_the_job() {
        // Spec 2.1 with one row: jobs on two 4-core nodes (cores 0-3, 4-7
        // of the cluster map); removing one leaves the other's cores.
        let mut p = PartRows::new(1, 8);
        let mut low = Bits::new(4);
        low.set(1);
        low.set(2);
        let all = Bits::full(4);
        assert!(p.add(1, &[(0, &low), (4, &all)]));
        assert!(p.add(2, &[(0, &Bits::full(1))]));
        assert!(!p.add(3, &[(4, &low)]), "cores 5-6 are taken by job 1");
        p.remove(1, &[(0, &low), (4, &all)], &|_| None);
        assert_eq!(p.rows[0].jobs, vec![2]);
        assert_eq!(p.rows[0].cores.ones().collect::<Vec<_>>(), vec![0]);
    }
}
