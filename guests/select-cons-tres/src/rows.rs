//! Partition rows (`part_row_data_t`, cons_common/part_data.c): per
//! partition, rows of jobs whose cores do not
//! overlap; a job goes into the first row its cores fit.

use std::cell::Cell;

use slurm_wasm_sdk::Bitmap;

/// One row: the union of its jobs' cores (cluster-wide core map).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub cores: Bitmap,
    /// The number of cores in `cores` (Slurm's `row_set_count`), which
    /// orders the rows (see [`PartRows::sort_res`]).
    pub set: usize,
    /// The row's jobs, ascending (found by binary search: a simulation
    /// removes hundreds of jobs from rows of thousands).
    pub jobs: Vec<u32>,
}

/// What re-packing the rows needs of a job: its first core in the
/// cluster-wide core map (Slurm's `jstart`), its CPU count and its cores.
pub struct Packed<'a> {
    pub start: usize,
    pub cpus: u32,
    pub cores: Vec<(usize, &'a Bitmap)>,
}

/// The rows of one partition (as many as [`crate::num_rows`] says).
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
    /// Whether a test sorted these rows since they last changed: 22.05
    /// sorts the live rows in step 4 of a RUN_NOW test
    /// (cons_common/job_test.c:1264-1265), so a job starting later goes
    /// to the first row it fits in that order. A test only reads the
    /// tables, so it marks them, and the next [`PartRows::add`] sorts
    /// first (the order depends only on the rows' sizes, which nothing
    /// changes in between).
    pub sort_pending: Cell<bool>,
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
                    cores: Bitmap::new(total_cores),
                    set: 0,
                    jobs: Vec::new(),
                })
                .collect(),
            has_map: false,
            sort_pending: Cell::new(false),
        }
    }

    /// Places `job`, whose cores are `cores` (see
    /// [`crate::JobRec::core_pieces`]), in the first row its cores do not
    /// overlap, in the rows' current order (sorted first when a test sorted
    /// them, see [`PartRows::sort_pending`]); `false` on "job overflow"
    /// (the job is then in no row, as in Slurm).
    pub fn add(&mut self, job: u32, cores: &[(usize, &Bitmap)]) -> bool {
        if self.sort_pending.take() {
            self.sort_res();
        }
        for row in &mut self.rows {
            if !cores
                .iter()
                .any(|(off, c)| row.cores.intersects_at(*off, c))
            {
                for (off, c) in cores {
                    row.cores.or_at(*off, c);
                    row.set += c.count();
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

    /// `part_data_sort_res` (part_data.c:465-480): the rows with more
    /// cores first, by its pairwise swaps (which also decide the order of
    /// rows of equal size). Slurm sorts before trying the rows for a job
    /// (step 4 of `_job_test`) and after each job a re-pack places; the
    /// order then decides the row a starting job goes to.
    pub fn sort_res(&mut self) {
        swap_sort(&mut self.rows, |r| r.set);
    }

    /// The rows' indices in [`Self::sort_res`]'s order, leaving `self` as
    /// it is.
    pub fn sorted(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.rows.len()).collect();
        swap_sort(&mut order, |&r| self.rows[r].set);
        order
    }

    /// Removes `job`, whose cores are `cores`. With one row its cores are
    /// cleared from the row (the jobs of a row never overlap, so the others
    /// keep theirs). With several, Slurm's `part_data_build_row_bitmaps`
    /// (part_data.c:125-250): the jobs left are placed again, by their
    /// first core and then their CPU count, each in the first row it fits,
    /// the rows sorted after each ([`Self::sort_res`]); when one fits no
    /// row, the old layout stays (less the job). `packed` gives each job's
    /// [`Packed`].
    pub fn remove<'a>(
        &mut self,
        job: u32,
        cores: &[(usize, &Bitmap)],
        packed: &dyn Fn(u32) -> Option<Packed<'a>>,
    ) {
        if !self.rows.iter().any(|r| r.jobs.binary_search(&job).is_ok()) {
            return;
        }
        let clear = |rows: &mut Vec<Row>| {
            for row in rows.iter_mut() {
                if let Ok(at) = row.jobs.binary_search(&job) {
                    for (off, c) in cores {
                        row.cores.clear_at(*off, c);
                        row.set -= c.count();
                    }
                    row.jobs.remove(at);
                }
            }
        };
        if self.rows.len() == 1 {
            clear(&mut self.rows);
            return;
        }
        let total = self.rows[0].cores.len();
        let mut jobs: Vec<(u32, Packed<'_>)> = self
            .rows
            .iter()
            .flat_map(|r| r.jobs.iter().copied())
            .filter(|j| *j != job)
            .filter_map(|j| packed(j).map(|p| (j, p)))
            .collect();
        jobs.sort_by_key(|(_, p)| (p.start, p.cpus));
        let mut fresh = PartRows {
            has_map: self.has_map,
            ..PartRows::new(self.num_rows, total)
        };
        for (j, p) in &jobs {
            if !fresh.add(*j, &p.cores) {
                clear(&mut self.rows);
                return;
            }
            fresh.sort_res();
        }
        *self = fresh;
    }

    /// Makes `self` equal to `other` reusing `self`'s buffers (a
    /// will-run copy puts back a partition's rows after each answer).
    pub fn copy_from(&mut self, other: &PartRows) {
        self.num_rows = other.num_rows;
        self.has_map = other.has_map;
        self.sort_pending.set(other.sort_pending.get());
        self.rows.truncate(other.rows.len());
        for (mine, theirs) in self.rows.iter_mut().zip(&other.rows) {
            mine.cores.copy_from(&theirs.cores);
            mine.set = theirs.set;
            mine.jobs.clone_from(&theirs.jobs);
        }
        let have = self.rows.len();
        self.rows.extend(other.rows[have..].iter().cloned());
    }

    /// Union of every row's cores.
    pub fn all_cores(&self) -> Bitmap {
        let mut out = self.rows[0].cores.clone();
        for r in &self.rows[1..] {
            out.or(&r.cores);
        }
        out
    }
}

/// `part_data_sort_res`'s pairwise swaps: each position takes every later
/// item bigger than the one it holds, biggest `size` first.
fn swap_sort<T>(items: &mut [T], size: impl Fn(&T) -> usize) {
    for i in 0..items.len() {
        for j in i + 1..items.len() {
            if size(&items[j]) > size(&items[i]) {
                items.swap(i, j);
            }
        }
    }
}

#[cfg(test)]
mod tests;
