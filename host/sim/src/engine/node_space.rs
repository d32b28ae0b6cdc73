//! sched/backfill's plan of the future: the node-space map of Slurm
//! 22.05's `src/plugins/sched/backfill/backfill.c` (`node_space_map_t`).
//!
//! The map is a run of consecutive time slots, each with the nodes no
//! planned job holds during it. A backfill pass starts it with one slot from
//! the pass's time (rounded down to `bf_resolution`) to the end of
//! `bf_window`, every node available; each job the pass plans a start for
//! takes its nodes out of the slots of `[start, end)`, splitting the slots
//! at both times (`_add_reservation`). Running jobs are not in the map: the
//! select plugin's will-run answer accounts for them.

/// One slot: `[begin, end)` and the nodes free of plans during it (one bit
/// per node, 64 to a word).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    pub begin: i64,
    pub end: i64,
    pub avail: Vec<u64>,
}

/// The slots in time order; they never overlap and leave no gap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpace {
    slots: Vec<Slot>,
    resolution: i64,
}

impl NodeSpace {
    /// One slot from `now` rounded down to `resolution` to `end`, every
    /// node of `nodes` available (backfill.c `_attempt_backfill`, the map's
    /// first record).
    pub fn new(now: i64, end: i64, nodes: Vec<u64>, resolution: i64) -> Self {
        let resolution = resolution.max(1);
        let begin = now.div_euclid(resolution) * resolution;
        NodeSpace {
            slots: vec![Slot {
                begin,
                end: end.max(begin + 1),
                avail: nodes,
            }],
            resolution,
        }
    }

    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Plans `nodes` for `[start, end)` (`_add_reservation`): the start is
    /// no earlier than the map's, the span at least one `bf_resolution`;
    /// slots are split at both times and lose `nodes` in between. Two
    /// neighbouring slots left with the same nodes become one (Slurm merges
    /// at most one such pair per call; merging every pair plans the same).
    pub fn reserve(&mut self, start: i64, end: i64, nodes: &[u64]) {
        let start = start.max(self.slots[0].begin);
        let end = end.max(start + self.resolution);
        self.split_at(start);
        self.split_at(end);
        for slot in &mut self.slots {
            if slot.begin >= start && slot.end <= end {
                for (a, n) in slot.avail.iter_mut().zip(nodes) {
                    *a &= !n;
                }
            }
        }
        self.slots.dedup_by(|later, earlier| {
            if later.avail == earlier.avail {
                earlier.end = later.end;
                true
            } else {
                false
            }
        });
    }

    /// Whether running on `nodes` during `[start, end)` would take a node a
    /// planned job holds (`_test_resv_overlap`).
    pub fn overlaps(&self, nodes: &[u64], start: i64, end: i64) -> bool {
        self.slots
            .iter()
            .filter(|s| s.end > start && s.begin < end)
            .any(|s| nodes.iter().zip(&s.avail).any(|(n, a)| n & !a != 0))
    }

    /// Splits the slot holding `time` in two at `time` (nothing when a slot
    /// starts there, or `time` lies past the map's end).
    fn split_at(&mut self, time: i64) {
        if let Some(i) = self
            .slots
            .iter()
            .position(|s| s.begin < time && time < s.end)
        {
            let mut later = self.slots[i].clone();
            later.begin = time;
            self.slots[i].end = time;
            self.slots.insert(i + 1, later);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each slot's times and its first word of nodes.
    fn spans(map: &NodeSpace) -> Vec<(i64, i64, u64)> {
        map.slots()
            .iter()
            .map(|s| (s.begin, s.end, s.avail[0]))
            .collect()
    }

    /// The map of the five-job case of issue 34 after job 3's plan:
    /// n[1-2] (bits 0-1) held for [600, 720).
    #[test]
    fn a_plan_splits_the_slots_and_merges_equal_neighbours() {
        let mut map = NodeSpace::new(61, 86_461, vec![0b1111], 1);
        map.reserve(600, 720, &[0b0011]);
        assert_eq!(
            spans(&map),
            [(61, 600, 0b1111), (600, 720, 0b1100), (720, 86_461, 0b1111)]
        );
        assert!(map.overlaps(&[0b0001], 700, 800));
        assert!(!map.overlaps(&[0b0100], 0, 100_000));
        assert!(!map.overlaps(&[0b0011], 720, 1320));
        // Job 4 on n[1-2] from 720: the slot after 720 is split; job 5's
        // plan beside it leaves n3 (bit 2) only in [1320, end).
        map.reserve(720, 1320, &[0b0011]);
        map.reserve(120, 1320, &[0b1000]);
        assert_eq!(
            spans(&map),
            [
                (61, 120, 0b1111),
                (120, 600, 0b0111),
                (600, 1320, 0b0100),
                (1320, 86_461, 0b1111)
            ]
        );
    }

    /// A plan shorter than one `bf_resolution` keeps one; a start before
    /// the map's is moved to it (backfill.c `_add_reservation`).
    #[test]
    fn a_plan_spans_at_least_one_resolution() {
        let mut map = NodeSpace::new(125, 10_000, vec![0b11], 60);
        assert_eq!(map.slots()[0].begin, 120);
        map.reserve(0, 130, &[0b01]);
        assert_eq!(
            (
                map.slots()[0].begin,
                map.slots()[0].end,
                map.slots()[0].avail[0]
            ),
            (120, 180, 0b10)
        );
    }
}
