//! [`Bitmap`]: Slurm's `bitstr_t` as a `bitvec`, with the contract's wire form.

use bitvec::prelude::{BitVec, Lsb0};

use crate::types;

/// A fixed-length bitmap (node sets, core sets, device sets).
///
/// Converts losslessly to and from the contract's `bitmap` record (bit `i`
/// in word `i / 64` at position `i % 64`, least significant first).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Bitmap(BitVec<u32, Lsb0>);

impl Bitmap {
    /// A bitmap of `len` clear bits.
    pub fn new(len: usize) -> Self {
        Bitmap(BitVec::repeat(false, len))
    }

    /// A bitmap of `len` bits with every bit set.
    pub fn full(len: usize) -> Self {
        Bitmap(BitVec::repeat(true, len))
    }

    /// A bitmap of `len` bits with the given bits set.
    ///
    /// # Panics
    /// If a bit is at or past `len`.
    pub fn from_bits(len: usize, bits: impl IntoIterator<Item = usize>) -> Self {
        let mut map = Self::new(len);
        for bit in bits {
            map.set(bit, true);
        }
        map
    }

    /// Builds a bitmap from the contract's words.
    ///
    /// Fails when `words` does not hold exactly `ceil(len / 64)` entries or a
    /// bit at or past `len` is set.
    pub fn from_words(len: u32, words: &[u64]) -> Result<Self, String> {
        let len = len as usize;
        let expected = len.div_ceil(64);
        if words.len() != expected {
            return Err(format!(
                "bitmap of {len} bits needs {expected} words, got {}",
                words.len()
            ));
        }
        // bitvec stores u32 on every target (it has no u64 store on wasm32):
        // each contract word becomes its low half, then its high half.
        let halves = words
            .iter()
            .flat_map(|w| [*w as u32, (*w >> 32) as u32])
            .collect();
        let mut bits = BitVec::<u32, Lsb0>::from_vec(halves);
        if bits[len..].any() {
            return Err(format!("bitmap of {len} bits has bits set past its end"));
        }
        bits.truncate(len);
        Ok(Bitmap(bits))
    }

    /// A bitmap of `len` bits from `bitvec`'s storage words (bit `i` in
    /// word `i / 32` at position `i % 32`), for loops that build a
    /// bitmap a word at a time. Missing words read as clear; bits at or
    /// past `len` are cleared.
    pub fn from_storage(len: usize, mut words: Vec<u32>) -> Self {
        words.resize(len.div_ceil(32), 0);
        if let Some(last) = words.last_mut().filter(|_| !len.is_multiple_of(32)) {
            *last &= (1 << (len % 32)) - 1;
        }
        let mut bits = BitVec::<u32, Lsb0>::from_vec(words);
        bits.truncate(len);
        Bitmap(bits)
    }

    /// The contract's words for this bitmap.
    pub fn to_words(&self) -> Vec<u64> {
        let mut bits = self.0.clone();
        bits.resize(self.0.len().div_ceil(64) * 64, false);
        bits.into_vec()
            .chunks(2)
            .map(|pair| u64::from(pair[0]) | (u64::from(pair[1]) << 32))
            .collect()
    }

    /// The number of bits (set or not).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the bitmap has no bits at all (not: no bit set).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bit `i`; false past the end.
    pub fn get(&self, i: usize) -> bool {
        self.0.get(i).is_some_and(|b| *b)
    }

    /// Sets bit `i`.
    ///
    /// # Panics
    /// If `i` is at or past the length.
    pub fn set(&mut self, i: usize, value: bool) {
        self.0.set(i, value);
    }

    /// Number of set bits (`bit_set_count`).
    pub fn count(&self) -> usize {
        self.0.count_ones()
    }

    /// Indices of set bits, ascending.
    ///
    /// Read one storage word at a time: plugins walk cluster-sized node
    /// maps on every call, and `bitvec`'s bit iterator cost more than the
    /// loops' own work in wasm.
    pub fn ones(&self) -> Ones<'_> {
        Ones::new(self.0.as_raw_slice(), self.len())
    }

    /// First set bit (`bit_ffs`).
    pub fn first(&self) -> Option<usize> {
        self.0.first_one()
    }

    /// Last set bit (`bit_fls`).
    pub fn last(&self) -> Option<usize> {
        self.0.last_one()
    }

    /// `self &= other` over the shorter length; bits past `other`'s end are
    /// cleared. A word at a time.
    pub fn and_assign(&mut self, other: &Bitmap) {
        for (q, word) in self.0.as_raw_mut_slice().iter_mut().enumerate() {
            *word &= other.live_word(q);
        }
    }

    /// `self |= other`; bits of `other` past `self`'s end are ignored. A
    /// word at a time.
    pub fn or_assign(&mut self, other: &Bitmap) {
        let len = self.len();
        for (q, word) in self.0.as_raw_mut_slice().iter_mut().enumerate() {
            *word |= other.live_word(q) & live_mask(len, q);
        }
    }

    /// Is every set bit of `self` also set in `other`? A word at a time.
    pub fn is_subset_of(&self, other: &Bitmap) -> bool {
        (0..self.0.as_raw_slice().len()).all(|q| self.live_word(q) & !other.live_word(q) == 0)
    }

    /// Storage word `q` without the bits at or past the length (`bitvec`
    /// may leave set bits there); 0 past the end.
    fn live_word(&self, q: usize) -> u32 {
        self.0
            .as_raw_slice()
            .get(q)
            .map_or(0, |w| w & live_mask(self.len(), q))
    }

    /// Slurm's range format (`bit_fmt`): `0-3,7`.
    pub fn to_ranges(&self) -> String {
        let mut out = Vec::new();
        let mut iter = self.ones().peekable();
        while let Some(start) = iter.next() {
            let mut end = start;
            while iter.peek() == Some(&(end + 1)) {
                end = iter.next().unwrap_or(end);
            }
            out.push(if start == end {
                start.to_string()
            } else {
                format!("{start}-{end}")
            });
        }
        out.join(",")
    }

    /// Slurm's hex mask format (`bit_fmt_hexmask`): `0x` and upper-case hex,
    /// zero-padded to `ceil(len / 4)` digits.
    pub fn to_hex_mask(&self) -> String {
        let digits = self.len().div_ceil(4).max(1);
        let mut out = String::with_capacity(digits + 2);
        out.push_str("0x");
        for d in (0..digits).rev() {
            let nibble = (0..4).fold(0u8, |acc, b| acc | (u8::from(self.get(d * 4 + b)) << b));
            out.push(
                char::from_digit(u32::from(nibble), 16)
                    .unwrap_or('0')
                    .to_ascii_uppercase(),
            );
        }
        out
    }

    /// The underlying `bitvec`.
    pub fn as_bitvec(&self) -> &BitVec<u32, Lsb0> {
        &self.0
    }
}

/// A storage word a set-bit walk reads: `u32` for [`Bitmap`], `u64` for
/// plugins' own word-backed maps.
pub trait Word: Copy + Eq {
    /// Bits per word.
    const BITS: usize;
    /// The word with no bit set.
    const ZERO: Self;
    /// Index of the lowest set bit (the word is not zero).
    fn lowest(self) -> usize;
    /// The word without its lowest set bit.
    fn without_lowest(self) -> Self;
}

macro_rules! word {
    ($t:ty) => {
        impl Word for $t {
            const BITS: usize = <$t>::BITS as usize;
            const ZERO: Self = 0;
            fn lowest(self) -> usize {
                self.trailing_zeros() as usize
            }
            fn without_lowest(self) -> Self {
                self & (self - 1)
            }
        }
    };
}
word!(u32);
word!(u64);

/// Indices of the set bits of storage words below a length, ascending,
/// found a word at a time (the iterator of [`Bitmap::ones`]; plugins with
/// their own word-backed maps walk them with [`Ones::new`]).
#[derive(Debug, Clone)]
pub struct Ones<'a, W: Word = u32> {
    words: &'a [W],
    /// Index of the word being read.
    word: usize,
    /// Its bits not yet returned.
    rest: W,
    len: usize,
}

impl<'a, W: Word> Ones<'a, W> {
    /// The set bits of `words` (bit `i` in word `i / W::BITS`) below `len`;
    /// storage bits at or past `len` are not given.
    pub fn new(words: &'a [W], len: usize) -> Self {
        Ones {
            words,
            word: 0,
            rest: words.first().copied().unwrap_or(W::ZERO),
            len,
        }
    }
}

impl<W: Word> Iterator for Ones<'_, W> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.rest == W::ZERO {
            self.word += 1;
            self.rest = *self.words.get(self.word)?;
        }
        let i = self.word * W::BITS + self.rest.lowest();
        self.rest = self.rest.without_lowest();
        // Storage bits past the length (a full bitmap may set them) end it.
        (i < self.len).then_some(i)
    }
}

/// Which bits of storage word `q` lie inside a length of `len` bits.
fn live_mask(len: usize, q: usize) -> u32 {
    match len.saturating_sub(q * 32) {
        0 => 0,
        n if n >= 32 => u32::MAX,
        n => (1 << n) - 1,
    }
}

impl std::fmt::Debug for Bitmap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bitmap({}: {})", self.len(), self.to_ranges())
    }
}

impl From<&Bitmap> for types::Bitmap {
    fn from(map: &Bitmap) -> Self {
        types::Bitmap {
            len: map.len() as u32,
            words: map.to_words(),
        }
    }
}

impl From<Bitmap> for types::Bitmap {
    fn from(map: Bitmap) -> Self {
        (&map).into()
    }
}

impl TryFrom<&types::Bitmap> for Bitmap {
    type Error = crate::Error;

    fn try_from(map: &types::Bitmap) -> Result<Self, Self::Error> {
        Bitmap::from_words(map.len, &map.words)
            .map_err(|e| crate::Error::new(crate::codes::EINVAL, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ones_reads_words_and_stops_at_the_length() {
        // Bits in the first word, across the 32-bit storage boundary and in
        // the last, partial word.
        let map = Bitmap::from_bits(100, [0, 5, 31, 32, 63, 64, 99]);
        assert_eq!(
            map.ones().collect::<Vec<_>>(),
            vec![0, 5, 31, 32, 63, 64, 99]
        );
        assert_eq!(
            map.ones().collect::<Vec<_>>(),
            map.0.iter_ones().collect::<Vec<_>>()
        );
        // A full bitmap whose length is not a multiple of the word size
        // stops at its length.
        assert_eq!(Bitmap::full(70).ones().count(), 70);
        assert_eq!(Bitmap::new(70).ones().count(), 0);
        assert_eq!(Bitmap::new(0).ones().count(), 0);
        // 64-bit words: empty words skipped, storage bits past the length
        // not given.
        let words: [u64; 3] = [1 | 1 << 63, 0, 1 << 1 | 1 << 9];
        assert_eq!(Ones::new(&words, 136).collect::<Vec<_>>(), vec![0, 63, 129]);
        assert_eq!(Ones::new(&words, 192).last(), Some(137));
        assert_eq!(Ones::<u64>::new(&[], 0).count(), 0);
    }

    /// `and_assign`, `or_assign` and `is_subset_of` as their contracts say,
    /// bit by bit.
    #[test]
    fn word_operations_match_their_bit_by_bit_meaning() {
        let pattern = |len: usize, step: usize| Bitmap::from_bits(len, (0..len).step_by(step));
        for (a_len, b_len) in [(70, 70), (70, 33), (33, 70), (32, 64), (0, 5), (5, 0)] {
            for (sa, sb) in [(1, 1), (2, 3), (3, 1), (1, 5)] {
                let (a, b) = (pattern(a_len, sa), pattern(b_len, sb));
                let mut and = a.clone();
                and.and_assign(&b);
                let want_and = Bitmap::from_bits(a_len, a.ones().filter(|&i| b.get(i)));
                assert_eq!(and, want_and, "{a:?} & {b:?}");
                let mut or = a.clone();
                or.or_assign(&b);
                let want_or =
                    Bitmap::from_bits(a_len, (0..a_len).filter(|&i| a.get(i) || b.get(i)));
                assert_eq!(or, want_or, "{a:?} | {b:?}");
                assert_eq!(
                    a.is_subset_of(&b),
                    a.ones().all(|i| b.get(i)),
                    "{a:?} <= {b:?}"
                );
            }
        }
        // A full map's storage may hold set bits past its length: they are
        // neither read nor given.
        let full = Bitmap::full(33);
        let mut small = Bitmap::new(40);
        small.or_assign(&full);
        assert_eq!(small.count(), 33);
        assert!(Bitmap::from_bits(40, [34]).is_subset_of(&Bitmap::full(40)));
        assert!(!Bitmap::from_bits(40, [34]).is_subset_of(&full));
    }

    #[test]
    fn from_storage_reads_32_bit_words_and_clears_past_the_end() {
        // Bit 33 is word 1, bit 1; bit 40 lies past the 35-bit length.
        let map = Bitmap::from_storage(35, vec![0b101, (1 << 1) | (1 << 8)]);
        assert_eq!(map.ones().collect::<Vec<_>>(), vec![0, 2, 33]);
        assert_eq!(map.to_words(), vec![(1 << 33) | 0b101]);
        // Missing words are clear; extra words are dropped.
        assert_eq!(
            Bitmap::from_storage(70, vec![1]),
            Bitmap::from_bits(70, [0])
        );
        assert_eq!(Bitmap::from_storage(3, vec![0xff, 0xff]).count(), 3);
    }

    #[test]
    fn words_round_trip_lsb_first() {
        let map = Bitmap::from_bits(70, [0, 3, 64, 69]);
        let words = map.to_words();
        assert_eq!(words, vec![0b1001, 0b10_0001]);
        assert_eq!(Bitmap::from_words(70, &words).unwrap(), map);
    }

    #[test]
    fn from_words_rejects_bad_shapes() {
        assert!(Bitmap::from_words(70, &[0]).is_err());
        assert!(Bitmap::from_words(4, &[0b1_0000]).is_err());
        assert!(Bitmap::from_words(0, &[]).unwrap().is_empty());
    }

    #[test]
    fn formats_like_slurm() {
        let map = Bitmap::from_bits(16, [0, 1, 2, 3, 7, 9]);
        assert_eq!(map.to_ranges(), "0-3,7,9");
        // Slurm 22.05.8 src/plugins/task/affinity/dist_tasks.c `_lllp_generate_cpu_bind`: 16 CPUs, CPUs 0 and 1 -> 0x0003
        assert_eq!(Bitmap::from_bits(16, [0, 1]).to_hex_mask(), "0x0003");
        assert_eq!(Bitmap::from_bits(16, [8, 9]).to_hex_mask(), "0x0300");
    }
}
