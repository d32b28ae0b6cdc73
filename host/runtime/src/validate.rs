//! Checks on what plugins return. A plugin that breaks the contract gets a
//! [`CallError::Invalid`] naming the rule; its instance stays usable.

use crate::bindings::types::{Bitmap, JobResources, Node};
use crate::error::CallError;

// What select and priority plugins answer (issue 26, class 11).
mod priority;
mod select;

// Environment edits of task and gres plugins, and gres answers (issue 26,
// classes 4 and 11).
mod env;
mod gres;
pub(crate) use env::EnvSource;
pub(crate) use gres::ConfiguredFiles;

/// What the checks' unit tests share.
#[cfg(test)]
mod testing {
    use super::Checker;
    use crate::error::CallError;

    /// A checker for a plugin `test/x` in function `f`.
    pub const C: Checker<'static> = Checker {
        plugin: "test/x",
        function: "f",
    };

    /// The reason of an invalid-result error; panics on anything else.
    pub fn reason(result: Result<(), CallError>) -> String {
        match result {
            Err(CallError::Invalid { reason, .. }) => reason,
            other => panic!("expected an invalid-result error, got {other:?}"),
        }
    }
}

/// Longest string a result may carry (a cpu-bind list for 256 tasks of
/// 128-CPU masks is about 9 KiB).
pub const MAX_TEXT: usize = 1 << 20;
/// Most entries a result list may carry.
pub const MAX_ITEMS: usize = 1 << 20;

pub(crate) struct Checker<'a> {
    pub plugin: &'a str,
    pub function: &'static str,
}

impl Checker<'_> {
    pub fn fail(&self, reason: impl Into<String>) -> CallError {
        CallError::Invalid {
            plugin: self.plugin.into(),
            function: self.function,
            reason: reason.into(),
        }
    }

    pub fn text(&self, field: &str, value: &str) -> Result<(), CallError> {
        if value.len() > MAX_TEXT {
            return Err(self.fail(format!(
                "{field} is {} bytes, more than the {MAX_TEXT} a result may carry",
                value.len()
            )));
        }
        Ok(())
    }

    pub fn items(&self, field: &str, len: usize) -> Result<(), CallError> {
        if len > MAX_ITEMS {
            return Err(self.fail(format!(
                "{field} has {len} entries, more than the {MAX_ITEMS} a result may carry"
            )));
        }
        Ok(())
    }

    pub fn bitmap(&self, field: &str, map: &Bitmap) -> Result<(), CallError> {
        let expected = (map.len as usize).div_ceil(64);
        if map.words.len() != expected {
            return Err(self.fail(format!(
                "{field}: a bitmap of {} bits needs {expected} words, got {}",
                map.len,
                map.words.len()
            )));
        }
        if !map.len.is_multiple_of(64) {
            if let Some(last) = map.words.last() {
                if last >> (map.len % 64) != 0 {
                    return Err(self.fail(format!(
                        "{field}: bits set past the bitmap's length {}",
                        map.len
                    )));
                }
            }
        }
        Ok(())
    }

    /// A finite, non-negative priority factor.
    pub fn factor(&self, field: &str, value: f64) -> Result<(), CallError> {
        if !value.is_finite() || value < 0.0 {
            return Err(self.fail(format!(
                "{field} = {value}: priority factors must be finite and not negative"
            )));
        }
        Ok(())
    }

    /// A POSIX environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
    pub fn env_name(&self, name: &str) -> Result<(), CallError> {
        let mut chars = name.chars();
        let ok = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(self.fail(format!("`{name}` is not a valid environment variable name")));
        }
        Ok(())
    }

    /// A select allocation against the candidates and the node table:
    /// chosen nodes inside the candidates, one entry per chosen node in
    /// index order, cores inside the node, memory within the node, GRES
    /// within the node's (`Checker::node_gres`). With
    /// `nodes_only` (a will-run answer) an empty per-node list is accepted.
    pub fn job_resources(
        &self,
        resources: &JobResources,
        candidates: Option<&Bitmap>,
        nodes: &[Node],
        nodes_only: bool,
    ) -> Result<(), CallError> {
        self.bitmap("nodes", &resources.nodes)?;
        // One pass over the words: a select answer comes with a
        // cluster-sized map holding a few set bits.
        let mut chosen = 0;
        for (q, &word) in resources.nodes.words.iter().enumerate() {
            if word == 0 {
                continue;
            }
            chosen += word.count_ones() as usize;
            let outside = candidates.map_or(0, |c| word & !live_word(c, q));
            if outside != 0 {
                let bad = q as u32 * 64 + outside.trailing_zeros();
                return Err(self.fail(format!(
                    "node {bad} was chosen but is not among the candidate nodes"
                )));
            }
        }
        if nodes_only && resources.per_node.is_empty() {
            return Ok(());
        }
        if resources.per_node.len() != chosen {
            return Err(self.fail(format!(
                "{chosen} nodes chosen but {} per-node entries",
                resources.per_node.len()
            )));
        }
        for (entry, index) in resources.per_node.iter().zip(resources.nodes.ones()) {
            if entry.node_index != index {
                return Err(self.fail(format!(
                    "per-node entry for node {} where node {index} was expected",
                    entry.node_index
                )));
            }
            self.bitmap("cores", &entry.cores)?;
            let Some(node) = nodes.get(index as usize) else {
                return Err(self.fail(format!(
                    "node {index} is not in the node table ({} nodes)",
                    nodes.len()
                )));
            };
            let cores = select::node_cores(node);
            if let Some(last) = last_one(&entry.cores) {
                if last >= cores {
                    return Err(self.fail(format!(
                        "core {last} allocated on {}, which has {cores} cores",
                        node.name
                    )));
                }
            }
            if entry.cpus > node.cpus {
                return Err(self.fail(format!(
                    "{} CPUs allocated on {}, which has {}",
                    entry.cpus, node.name, node.cpus
                )));
            }
            if entry.memory > node.real_memory {
                return Err(self.fail(format!(
                    "{} MB allocated on {}, which has {} MB",
                    entry.memory, node.name, node.real_memory
                )));
            }
            self.node_gres(entry, node)?;
        }
        Ok(())
    }
}

/// Word `q` of `map` without its bits at or past the map's length.
fn live_word(map: &Bitmap, q: usize) -> u64 {
    let word = map.words.get(q).copied().unwrap_or(0);
    match (map.len as usize).saturating_sub(q * 64) {
        0 => 0,
        n if n >= 64 => word,
        n => word & ((1 << n) - 1),
    }
}

/// The highest set bit of a checked bitmap.
fn last_one(map: &Bitmap) -> Option<u32> {
    let w = map.words.iter().rposition(|&word| word != 0)?;
    Some(w as u32 * 64 + 63 - map.words[w].leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker() -> Checker<'static> {
        Checker {
            plugin: "test/x",
            function: "f",
        }
    }

    #[test]
    fn env_names() {
        assert!(checker().env_name("CUDA_VISIBLE_DEVICES").is_ok());
        assert!(checker().env_name("_X1").is_ok());
        for bad in ["", "1X", "A=B", "A B", "Ä"] {
            assert!(checker().env_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn set_bits_are_found_word_by_word() {
        let map = Bitmap {
            len: 130,
            words: vec![1 | 1 << 63, 1, 1 << 1],
        };
        assert_eq!(map.ones().collect::<Vec<_>>(), [0, 63, 64, 129]);
        assert_eq!(last_one(&map), Some(129));
        let empty = Bitmap {
            len: 70,
            words: vec![0, 0],
        };
        assert_eq!(empty.ones().count(), 0);
        assert_eq!(last_one(&empty), None);
        // An unchecked map: bits past its length are not given.
        let long = Bitmap {
            len: 3,
            words: vec![0b1111],
        };
        assert_eq!(long.ones().collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn bitmaps_and_factors() {
        let c = checker();
        assert!(c
            .bitmap(
                "b",
                &Bitmap {
                    len: 3,
                    words: vec![0b111]
                }
            )
            .is_ok());
        assert!(c
            .bitmap(
                "b",
                &Bitmap {
                    len: 3,
                    words: vec![0b1000]
                }
            )
            .is_err());
        assert!(c
            .bitmap(
                "b",
                &Bitmap {
                    len: 65,
                    words: vec![0]
                }
            )
            .is_err());
        assert!(c.factor("age", -0.5).is_err());
        assert!(c.factor("age", f64::NAN).is_err());
        assert!(c.text("s", &"x".repeat(MAX_TEXT + 1)).is_err());
    }

    /// An answer on `nodes` of a 4-node cluster (1 socket x 4 cores,
    /// 1,000 MB each), each node given `cores` and 1 CPU.
    fn answer(nodes: &[u32], cores: &[u32]) -> JobResources {
        use crate::bindings::types::NodeResources;
        use crate::fixtures::bitmap;
        JobResources {
            nodes: bitmap(4, nodes.iter().copied()),
            ncpus: nodes.len() as u32,
            per_node: nodes
                .iter()
                .map(|&i| NodeResources {
                    node_index: i,
                    cores: bitmap(8, cores.iter().copied()),
                    cpus: 1,
                    memory: 1000,
                    gres: Vec::new(),
                })
                .collect(),
            whole_nodes: false,
        }
    }

    fn cluster() -> Vec<Node> {
        (0..4)
            .map(|i| crate::fixtures::node(i, &format!("n{i}"), 1, 4, 1, 1000))
            .collect()
    }

    fn reason(result: Result<(), CallError>) -> String {
        match result {
            Err(CallError::Invalid { reason, .. }) => reason,
            other => panic!("expected an invalid-result error, got {other:?}"),
        }
    }

    #[test]
    fn select_answers_stay_inside_candidates_and_nodes() {
        let c = checker();
        let nodes = cluster();
        let candidates = crate::fixtures::bitmap(4, [1, 2]);
        assert!(c
            .job_resources(&answer(&[1, 2], &[0, 3]), Some(&candidates), &nodes, false)
            .is_ok());
        assert_eq!(
            reason(c.job_resources(&answer(&[1, 3], &[0]), Some(&candidates), &nodes, false)),
            "node 3 was chosen but is not among the candidate nodes"
        );
        // Candidate storage bits past the map's length are not candidates.
        let short = Bitmap {
            len: 3,
            words: vec![0b1010],
        };
        assert_eq!(
            reason(c.job_resources(&answer(&[1, 3], &[0]), Some(&short), &nodes, false)),
            "node 3 was chosen but is not among the candidate nodes"
        );
        let mut missing = answer(&[1, 2], &[0]);
        missing.per_node.pop();
        assert_eq!(
            reason(c.job_resources(&missing, Some(&candidates), &nodes, false)),
            "2 nodes chosen but 1 per-node entries"
        );
        // A will-run answer may leave the per-node entries out.
        missing.per_node.clear();
        assert!(c
            .job_resources(&missing, Some(&candidates), &nodes, true)
            .is_ok());
        assert_eq!(
            reason(c.job_resources(&answer(&[2], &[4]), None, &nodes, false)),
            "core 4 allocated on n2, which has 4 cores"
        );
        let mut greedy = answer(&[2], &[0]);
        greedy.per_node[0].memory = 1001;
        assert_eq!(
            reason(c.job_resources(&greedy, None, &nodes, false)),
            "1001 MB allocated on n2, which has 1000 MB"
        );
    }
}
