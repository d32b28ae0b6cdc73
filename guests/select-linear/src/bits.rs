//! Word-at-a-time writing of node bitmaps for the per-node loops of a
//! job-test, which visit every candidate node: bit-by-bit access through
//! the generic bitmap type dominated their cost on large clusters.

use slurm_wasm_sdk::Bitmap;

/// A bitmap built by setting bits in its storage words, for the loops
/// that pick nodes out of a candidate set: `Bitmap::set` works through
/// `bitvec`'s bit pointers, which cost more than the loop's tests in wasm.
#[derive(Debug, Clone)]
pub struct Picked {
    words: Vec<u32>,
    len: usize,
}

impl Picked {
    /// No node of `len` picked.
    pub fn new(len: usize) -> Self {
        Picked {
            words: vec![0; len.div_ceil(u32::BITS as usize)],
            len,
        }
    }

    /// Picks node `i`; one at or past the length is ignored (the
    /// resulting bitmap would drop it).
    pub fn pick(&mut self, i: usize) {
        if let Some(word) = self.words.get_mut(i / u32::BITS as usize) {
            *word |= 1 << (i % u32::BITS as usize);
        }
    }

    /// The picked nodes.
    pub fn into_bitmap(self) -> Bitmap {
        Bitmap::from_storage(self.len, self.words)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picked_nodes_make_the_bitmap() {
        let mut picked = Picked::new(70);
        for i in [0, 31, 32, 69, 70, 500] {
            picked.pick(i);
        }
        assert_eq!(picked.into_bitmap(), Bitmap::from_bits(70, [0, 31, 32, 69]));
    }
}
