//! Word-at-a-time reading of node bitmaps for the per-node loops of a
//! job-test, which visit every candidate node: bit-by-bit access through
//! the generic bitmap type dominated their cost on large clusters.

use slurm_wasm_sdk::Bitmap;

/// Indices of the set bits of `map`, ascending (the same as
/// [`Bitmap::ones`]), read one storage word at a time.
pub fn ones(map: &Bitmap) -> Ones<'_> {
    let words = map.as_bitvec().as_raw_slice();
    Ones {
        words,
        word: 0,
        rest: words.first().copied().unwrap_or(0),
        len: map.len(),
    }
}

/// The iterator of [`ones`].
#[derive(Debug, Clone)]
pub struct Ones<'a> {
    words: &'a [u32],
    /// Index of the word being read.
    word: usize,
    /// Its bits not yet returned.
    rest: u32,
    len: usize,
}

impl Iterator for Ones<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.rest == 0 {
            self.word += 1;
            self.rest = *self.words.get(self.word)?;
        }
        let i = self.word * u32::BITS as usize + self.rest.trailing_zeros() as usize;
        self.rest &= self.rest - 1;
        // Storage bits past the length (a full bitmap may set them) end it.
        (i < self.len).then_some(i)
    }
}

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
    fn same_bits_as_the_bitmap_iterator() {
        // Bits in the first word, across the 32-bit storage boundary and in
        // the last, partial word.
        let map = Bitmap::from_bits(100, [0, 5, 31, 32, 63, 64, 99]);
        assert_eq!(
            ones(&map).collect::<Vec<_>>(),
            vec![0, 5, 31, 32, 63, 64, 99]
        );
        assert_eq!(
            ones(&map).collect::<Vec<_>>(),
            map.ones().collect::<Vec<_>>()
        );
        // A full bitmap whose length is not a multiple of the word size
        // stops at its length.
        assert_eq!(ones(&Bitmap::full(70)).count(), 70);
        assert_eq!(ones(&Bitmap::new(70)).count(), 0);
    }

    #[test]
    fn picked_nodes_make_the_bitmap() {
        let mut picked = Picked::new(70);
        for i in [0, 31, 32, 69, 70, 500] {
            picked.pick(i);
        }
        assert_eq!(picked.into_bitmap(), Bitmap::from_bits(70, [0, 31, 32, 69]));
    }
}
