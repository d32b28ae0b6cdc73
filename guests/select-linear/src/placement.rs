//! Linear's node placement (`_job_test`, Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`): best fit over sets of
//! consecutive usable nodes, with required nodes, contiguity, node counts
//! and the heterogeneous-CPU shortcut.

use slurm_wasm_sdk::Bitmap;

/// What the placement needs.
#[derive(Clone, Copy)]
pub struct Placement<'a> {
    /// CPUs node `i` contributes when usable (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_get_avail_cpus`); only asked for
    /// usable nodes (the others count as 0).
    pub avail: &'a dyn Fn(usize) -> u32,
    /// Configured CPUs of node `i` (`total_cpus` sums these).
    pub cpus: &'a dyn Fn(usize) -> u32,
    /// The job's minimum CPU count (`min_cpus`).
    pub min_cpus: u32,
    pub min_nodes: u32,
    pub max_nodes: u32,
    /// Desired node count (`req_nodes`).
    pub req_nodes: u32,
    /// `-w`: nodes that must be used.
    pub required: Option<&'a Bitmap>,
    /// `--contiguous`.
    pub contiguous: bool,
}

/// A successful placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub nodes: Bitmap,
    /// Σ configured CPUs of the chosen nodes (`job_ptr->total_cpus`).
    pub total_cpus: u32,
}

/// `_enough_nodes`: with a desired count above the minimum, only the
/// minimum is truly needed.
fn enough_nodes(avail: i64, rem: i64, min: i64, req: i64) -> bool {
    let needed = if req > min { rem + min - req } else { rem };
    avail >= needed
}

#[derive(Debug, Clone)]
struct Set {
    cpus: i64,
    nodes: i64,
    start: usize,
    end: usize,
    /// First required node of the set.
    req: Option<usize>,
}

/// One pass of the search over consecutive sets: the best set so far. A set replaces it,
/// as in Slurm's `_job_test`, when it is the first, holds a required node
/// and the best holds none, is sufficient and the best is not, is
/// sufficient with fewer CPUs, or is insufficient with more CPUs (even
/// over a sufficient best: Slurm's order, kept).
#[derive(Clone, Copy)]
struct Best {
    index: usize,
    cpus: i64,
    nodes: i64,
    req: Option<usize>,
    sufficient: bool,
}

impl Best {
    const NONE: Best = Best {
        index: 0,
        cpus: 0,
        nodes: 0,
        req: None,
        sufficient: false,
    };

    /// Takes set `index` when it beats the best so far, for a job that
    /// still needs `rem_cpus` CPUs and `rem_nodes` nodes.
    fn consider(
        &mut self,
        index: usize,
        set: &Set,
        rem_cpus: i64,
        rem_nodes: i64,
        min: i64,
        req: i64,
    ) {
        let sufficient = set.cpus >= rem_cpus && enough_nodes(set.nodes, rem_nodes, min, req);
        if self.nodes == 0
            || (self.req.is_none() && set.req.is_some())
            || (sufficient && !self.sufficient)
            || (sufficient && set.cpus < self.cpus)
            || (!sufficient && set.cpus > self.cpus)
        {
            *self = Best {
                index,
                cpus: set.cpus,
                nodes: set.nodes,
                req: set.req,
                sufficient,
            };
        }
    }
}

/// The selection under way. Nothing here is sized by the node table but
/// the chosen bitmap: placement runs once per job-test attempt, and
/// whole-table scratch vectors made it slow on large clusters.
struct Walk<'a> {
    chosen: Bitmap,
    rem_cpus: i64,
    rem_nodes: i64,
    max_nodes: i64,
    total_cpus: u32,
    cpus: &'a dyn Fn(usize) -> u32,
}

impl Walk<'_> {
    fn done(&self) -> bool {
        self.max_nodes <= 0 || (self.rem_nodes <= 0 && self.rem_cpus <= 0)
    }

    /// Takes node `i`, which contributes `avail` CPUs.
    fn take(&mut self, i: usize, avail: i64) {
        self.chosen.set(i);
        self.rem_nodes -= 1;
        self.max_nodes -= 1;
        self.rem_cpus -= avail;
        self.total_cpus += (self.cpus)(i);
    }
}

/// Places the job on `usable` nodes (Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`). `None` (Slurm: EINVAL)
/// when fewer usable nodes than `min_nodes`, required nodes outside
/// `usable`, or no placement satisfies the CPU and node counts.
pub fn place(p: &Placement<'_>, usable: &Bitmap) -> Option<Placed> {
    let n = usable.len();
    let usable_count = usable.count();
    if usable_count < p.min_nodes as usize {
        return None;
    }
    if let Some(req) = p.required {
        if !req.is_subset_of(usable) {
            return None;
        }
    }
    let min_nodes = i64::from(p.min_nodes);
    let req_nodes = i64::from(p.req_nodes);
    let mut w = Walk {
        chosen: Bitmap::new(n),
        rem_cpus: i64::from(p.min_cpus),
        rem_nodes: min_nodes.max(req_nodes),
        max_nodes: i64::from(p.max_nodes),
        total_cpus: 0,
        cpus: p.cpus,
    };

    // Build the consecutive sets, selecting required nodes on the way. Sets
    // are separated by unusable nodes, so there are at most
    // min(usable, (n + 1) / 2) of them: reserving that once avoids copying
    // a growing cluster-sized vector (slow in wasm's allocator).
    let mut sets: Vec<Set> = Vec::with_capacity(usable_count.min(n.div_ceil(2)));
    let mut cur = Set {
        cpus: 0,
        nodes: 0,
        start: 0,
        end: 0,
        req: None,
    };
    // Without required nodes nothing is taken while the sets are built,
    // so the search's first pass is made on the way (`first`), over the
    // sets as they are finished, instead of walking thousands of them again
    // (6% of a test's fuel on a half-busy cluster).
    let (rem_cpus, rem_nodes) = (w.rem_cpus, w.rem_nodes);
    let mut first = Best::NONE;
    // The nodes' CPU counts differ (Slurm: one differs from the first)
    // exactly when their least and greatest differ.
    let (mut low_cnt, mut high_cnt) = (i64::MAX, i64::MIN);
    let mut prev: Option<usize> = None;
    for i in usable.ones() {
        if let Some(last) = prev.filter(|&last| i > last + 1) {
            // Unusable nodes between `last` and `i` end the current set.
            if cur.nodes == 0 {
                // Only required nodes so far (already taken): reuse the record.
                cur.req = None;
            } else {
                cur.end = last;
                if p.required.is_none() {
                    first.consider(sets.len(), &cur, rem_cpus, rem_nodes, min_nodes, req_nodes);
                }
                sets.push(std::mem::replace(
                    &mut cur,
                    Set {
                        cpus: 0,
                        nodes: 0,
                        start: 0,
                        end: 0,
                        req: None,
                    },
                ));
            }
        }
        prev = Some(i);
        let avail = i64::from((p.avail)(i));
        low_cnt = low_cnt.min(avail);
        high_cnt = high_cnt.max(avail);
        if cur.nodes == 0 {
            cur.start = i;
        }
        if w.max_nodes > 0 && p.required.is_some_and(|r| r.get(i)) {
            cur.req.get_or_insert(i);
            w.take(i, avail);
        } else {
            cur.cpus += avail;
            cur.nodes += 1;
        }
    }
    if let (Some(last), true) = (prev, cur.nodes != 0) {
        cur.end = last;
        if p.required.is_none() {
            first.consider(sets.len(), &cur, rem_cpus, rem_nodes, min_nodes, req_nodes);
        }
        sets.push(cur);
    }

    let mut success = false;
    let heterogeneous = usable_count > 0 && low_cnt != high_cnt;
    if heterogeneous && w.rem_cpus > low_cnt * w.rem_nodes {
        // Ignore consecutiveness: take the highest-CPU node left (the last
        // one on ties), over the whole table, where nodes outside `usable`
        // count 0 CPUs.
        let mut avail: Vec<i64> = (0..n)
            .map(|i| {
                if usable.get(i) {
                    i64::from((p.avail)(i))
                } else {
                    0
                }
            })
            .collect();
        while w.max_nodes > 0 && (w.rem_nodes > 0 || w.rem_cpus > 0) {
            let mut best: Option<usize> = None;
            let mut high = 0i64;
            for (i, &a) in avail.iter().enumerate() {
                if high > a || w.chosen.get(i) {
                    continue;
                }
                high = a;
                best = Some(i);
            }
            let Some(i) = best else { break };
            w.take(i, avail[i]);
            avail[i] = 0;
        }
    } else {
        let first = p.required.is_none().then_some(first);
        success = best_fit(p, &mut w, &mut sets, first, min_nodes, req_nodes);
    }

    if !success && w.rem_cpus <= 0 && enough_nodes(0, w.rem_nodes, min_nodes, req_nodes) {
        success = true;
    }
    success.then(|| Placed {
        nodes: w.chosen,
        total_cpus: w.total_cpus,
    })
}

/// The consecutive-set loop of Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test` (when the heterogeneous
/// shortcut was not taken): repeatedly take the best consecutive set. `first`
/// is the first pass's answer when the caller made that pass already.
fn best_fit(
    p: &Placement<'_>,
    w: &mut Walk<'_>,
    sets: &mut [Set],
    mut first: Option<Best>,
    min: i64,
    req: i64,
) -> bool {
    let contiguous_req = p.contiguous && p.required.is_some();
    while !sets.is_empty() && w.max_nodes > 0 {
        let best = match first.take() {
            Some(best) => best,
            None => {
                let mut best = Best::NONE;
                for (i, set) in sets.iter().enumerate() {
                    if set.nodes == 0 {
                        continue;
                    }
                    if contiguous_req && set.req.is_none() {
                        continue;
                    }
                    best.consider(i, set, w.rem_cpus, w.rem_nodes, min, req);
                    if contiguous_req && sets[i + 1..].iter().any(|s| s.req.is_some()) {
                        // Every required node must lie in one run.
                        best.nodes = 0;
                        break;
                    }
                }
                best
            }
        };
        if best.nodes == 0 {
            return false;
        }
        if p.contiguous
            && (best.cpus < w.rem_cpus || !enough_nodes(best.nodes, w.rem_nodes, min, req))
        {
            return false;
        }
        let (start, end) = (sets[best.index].start, sets[best.index].end);
        match best.req {
            Some(r) => {
                for i in r..=end {
                    if w.done() {
                        break;
                    }
                    if !w.chosen.get(i) {
                        w.take(i, i64::from((p.avail)(i)));
                    }
                }
                for i in (start..r).rev() {
                    if w.done() {
                        break;
                    }
                    if !w.chosen.get(i) {
                        w.take(i, i64::from((p.avail)(i)));
                    }
                }
            }
            None => {
                for i in start..=end {
                    if w.done() {
                        break;
                    }
                    if !w.chosen.get(i) {
                        w.take(i, i64::from((p.avail)(i)));
                    }
                }
            }
        }
        if p.contiguous || (w.rem_nodes <= 0 && w.rem_cpus <= 0) {
            return true;
        }
        sets[best.index].cpus = 0;
        sets[best.index].nodes = 0;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        avail: &[u32],
        usable: &[usize],
        min_cpus: u32,
        (min, max, req): (u32, u32, u32),
        required: Option<&[usize]>,
        contiguous: bool,
    ) -> Option<Vec<usize>> {
        let n = avail.len();
        let required = required.map(|r| Bitmap::from_bits(n, r.iter().copied()));
        let avail = |i: usize| avail[i];
        let p = Placement {
            avail: &avail,
            cpus: &avail,
            min_cpus,
            min_nodes: min,
            max_nodes: max,
            req_nodes: req,
            required: required.as_ref(),
            contiguous,
        };
        place(&p, &Bitmap::from_bits(n, usable.iter().copied())).map(|r| r.nodes.ones().collect())
    }

    #[test]
    fn best_fit_picks_the_tightest_sufficient_set() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`'s consecutive-set loop: sets {0,1,2} (12 CPUs) and {4,5} (8 CPUs); a
        // 2-node job fits both and takes the tighter {4,5}.
        let avail = [4; 6];
        assert_eq!(
            run(&avail, &[0, 1, 2, 4, 5], 8, (2, 2, 2), None, false),
            Some(vec![4, 5])
        );
        // A 3-node job only fits the first set.
        assert_eq!(
            run(&avail, &[0, 1, 2, 4, 5], 12, (3, 3, 3), None, false),
            Some(vec![0, 1, 2])
        );
    }

    #[test]
    fn insufficient_sets_are_combined_largest_first() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`: while nothing is sufficient the largest set is taken,
        // then the search repeats over the remaining sets.
        let avail = [4; 7];
        assert_eq!(
            run(&avail, &[0, 2, 3, 5, 6], 16, (4, 4, 4), None, false),
            Some(vec![2, 3, 5, 6])
        );
    }

    #[test]
    fn contiguous_fails_when_no_run_is_large_enough() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`: with --contiguous the best set must be sufficient.
        let avail = [4; 6];
        assert_eq!(run(&avail, &[0, 1, 3, 4], 12, (3, 3, 3), None, true), None);
        assert_eq!(
            run(&avail, &[0, 1, 3, 4, 5], 12, (3, 3, 3), None, true),
            Some(vec![3, 4, 5])
        );
    }

    #[test]
    fn contiguous_required_nodes_must_share_one_run() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`: required nodes in two runs => give up.
        let avail = [4; 6];
        assert_eq!(
            run(&avail, &[0, 1, 3, 4], 12, (3, 3, 3), Some(&[1, 3]), true),
            None
        );
    }

    #[test]
    fn required_nodes_walk_up_then_down() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`: from the required node upward to the set end, then
        // downward. Set 0..=5, required 3, 3 nodes => 3,4,5.
        let avail = [4; 6];
        assert_eq!(
            run(
                &avail,
                &[0, 1, 2, 3, 4, 5],
                12,
                (3, 3, 3),
                Some(&[3]),
                false
            ),
            Some(vec![3, 4, 5])
        );
        // Required 4 of a 6-node set, 4 nodes: 4,5 upward, then 3 and 2.
        assert_eq!(
            run(
                &avail,
                &[0, 1, 2, 3, 4, 5],
                16,
                (4, 4, 4),
                Some(&[4]),
                false
            ),
            Some(vec![2, 3, 4, 5])
        );
    }

    #[test]
    fn required_node_outside_usable_fails() {
        assert_eq!(run(&[4; 3], &[0, 1], 4, (1, 1, 1), Some(&[2]), false), None);
    }

    #[test]
    fn heterogeneous_shortcut_takes_the_last_highest_node() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`'s heterogeneous shortcut: CPU counts differ and 10 CPUs > low(2) × 2 nodes:
        // pick highest avail, ties to the last one in index order.
        let avail = [8, 2, 8, 2];
        assert_eq!(
            run(&avail, &[0, 1, 2, 3], 10, (2, 2, 2), None, false),
            Some(vec![0, 2])
        );
        assert_eq!(
            run(&avail, &[0, 1, 2, 3], 8, (1, 1, 1), None, false),
            Some(vec![2]),
            "one node: the last of the two 8-CPU nodes"
        );
    }

    #[test]
    fn heterogeneous_quirk_picks_nodes_outside_the_bitmap() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`'s heterogeneous shortcut does not skip nodes outside
        // the usable bitmap: with 2 usable nodes, 3 desired (2 minimum) and
        // 7 CPUs > low(2) × 3, the shortcut takes nodes 0 and 1 and then
        // node 2, outside the usable bitmap (avail 0); the final check
        // accepts since only desired nodes were missing.
        let avail = [8, 2, 0];
        assert_eq!(
            run(&avail, &[0, 1], 7, (2, 3, 3), None, false),
            Some(vec![0, 1, 2])
        );
    }

    #[test]
    fn desired_count_above_minimum_accepts_fewer_nodes() {
        // Slurm 22.05.8 src/plugins/select/linear/select_linear.c `_job_test`'s final check (`_enough_nodes(0, ...)`): only the extra desired nodes missing => success.
        let avail = [4; 4];
        assert_eq!(
            run(&avail, &[0, 1], 8, (2, 4, 4), None, false),
            Some(vec![0, 1])
        );
        assert_eq!(run(&avail, &[0], 8, (2, 4, 4), None, false), None);
    }

    #[test]
    fn too_few_usable_nodes_fail_at_once() {
        assert_eq!(run(&[4; 4], &[0], 4, (2, 2, 2), None, false), None);
    }
}
