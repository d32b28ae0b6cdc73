//! [`Bitmap`]: Slurm's `bitstr_t` as 64-bit words, with the contract's
//! wire form and the word-at-a-time operations plugins' per-node loops need.
//!
//! The words are the contract's own (bit `i` in word `i / 64` at position
//! `i % 64`): converting to and from a `bitmap` record copies them. Up to
//! 128 bits live inline, without a heap allocation: select plugins build
//! and clone a per-node core set for every candidate node of every test.

use smallvec::SmallVec;

use crate::types;

/// The words of a bitmap: two inline, more on the heap.
type Words = SmallVec<[u64; 2]>;

/// A fixed-length bitmap (node sets, core sets, device sets).
///
/// No bit at or past the length is ever set in the words, so two bitmaps
/// of the same length and bits are equal. Operations that take a second
/// bitmap work a word at a time over both; where the lengths differ, each
/// says what happens past the shorter one.
#[derive(PartialEq, Eq, Hash, Default)]
pub struct Bitmap {
    len: usize,
    words: Words,
}

/// A copy of the words in one go (`SmallVec`'s own `clone` pushes them one
/// at a time, and core sets are cloned with every offer and job).
impl Clone for Bitmap {
    fn clone(&self) -> Self {
        Bitmap {
            len: self.len,
            words: Words::from_slice(&self.words),
        }
    }
}

impl Bitmap {
    /// A bitmap of `len` clear bits.
    pub fn new(len: usize) -> Self {
        Bitmap {
            len,
            words: smallvec::smallvec![0; len.div_ceil(64)],
        }
    }

    /// A bitmap of `len` bits with every bit set.
    pub fn full(len: usize) -> Self {
        let mut map = Bitmap {
            len,
            words: smallvec::smallvec![u64::MAX; len.div_ceil(64)],
        };
        map.trim();
        map
    }

    /// A bitmap of `len` bits with the given bits set.
    ///
    /// # Panics
    /// If a bit is at or past `len`.
    pub fn from_bits(len: usize, bits: impl IntoIterator<Item = usize>) -> Self {
        let mut map = Self::new(len);
        for bit in bits {
            assert!(bit < len, "bit {bit} outside a bitmap of {len}");
            map.set(bit);
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
        let map = Bitmap {
            len,
            words: Words::from_slice(words),
        };
        if map.words.last() != map.live_last().as_ref() {
            return Err(format!("bitmap of {len} bits has bits set past its end"));
        }
        Ok(map)
    }

    /// The contract's words for this bitmap.
    pub fn to_words(&self) -> Vec<u64> {
        self.words.to_vec()
    }

    /// The words (bit `i` in word `i / 64` at position `i % 64`).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Makes `self` equal to `other`, reusing `self`'s buffer.
    pub fn copy_from(&mut self, other: &Bitmap) {
        self.len = other.len;
        self.words.clear();
        self.words.extend_from_slice(&other.words);
    }

    /// The number of bits (set or not).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the bitmap has no bits at all (not: no bit set).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bit `i` (`bit_test`); false past the end.
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Sets bit `i` (`bit_set`). `i` must be below the length.
    ///
    /// # Panics
    /// If `i` lies past the last word; in debug builds also if it is at or
    /// past the length (the check is left out of release builds: it cost
    /// 1.3% of select/cons_tres's fuel, whose per-node loops set bits of
    /// maps they sized themselves).
    pub fn set(&mut self, i: usize) {
        self.check(i);
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// Clears bit `i` (`bit_clear`). `i` must be below the length.
    ///
    /// # Panics
    /// As [`Bitmap::set`].
    pub fn clear(&mut self, i: usize) {
        self.check(i);
        self.words[i / 64] &= !(1 << (i % 64));
    }

    /// Sets bit `i` to `value`. `i` must be below the length.
    ///
    /// # Panics
    /// As [`Bitmap::set`].
    pub fn set_to(&mut self, i: usize, value: bool) {
        if value {
            self.set(i);
        } else {
            self.clear(i);
        }
    }

    fn check(&self, i: usize) {
        debug_assert!(i < self.len, "bit {i} outside a bitmap of {}", self.len);
    }

    /// Number of set bits (`bit_set_count`).
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether any bit is set.
    pub fn any(&self) -> bool {
        self.words.iter().any(|w| *w != 0)
    }

    /// Indices of set bits, ascending, found a word at a time.
    pub fn ones(&self) -> Ones<'_> {
        Ones::new(&self.words, self.len)
    }

    /// First set bit (`bit_ffs`).
    pub fn first(&self) -> Option<usize> {
        self.ones().next()
    }

    /// Last set bit (`bit_fls`).
    pub fn last(&self) -> Option<usize> {
        let q = self.words.iter().rposition(|w| *w != 0)?;
        Some(q * 64 + 63 - self.words[q].leading_zeros() as usize)
    }

    /// `self &= other` (`bit_and`); bits past `other`'s end are cleared.
    pub fn and(&mut self, other: &Bitmap) {
        for (q, a) in self.words.iter_mut().enumerate() {
            *a &= other.words.get(q).copied().unwrap_or(0);
        }
    }

    /// `self |= other` (`bit_or`); bits of `other` past `self`'s end are
    /// ignored.
    pub fn or(&mut self, other: &Bitmap) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        if other.len > self.len {
            self.trim();
        }
    }

    /// `self &= !other` (`bit_and_not`); bits past `other`'s end are kept.
    pub fn and_not(&mut self, other: &Bitmap) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    /// Whether a bit is set in both (`bit_overlap_any`).
    pub fn intersects(&self, other: &Bitmap) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// Is every set bit of `self` also set in `other` (`bit_super_set`)?
    pub fn is_subset_of(&self, other: &Bitmap) -> bool {
        self.words
            .iter()
            .enumerate()
            .all(|(q, a)| a & !other.words.get(q).copied().unwrap_or(0) == 0)
    }

    /// The 64 bits from bit `start` on (zero past the end).
    pub fn bits64(&self, start: usize) -> u64 {
        let (q, r) = (start / 64, start % 64);
        let lo = self.words.get(q).copied().unwrap_or(0) >> r;
        let hi = if r == 0 {
            0
        } else {
            self.words.get(q + 1).copied().unwrap_or(0) << (64 - r)
        };
        lo | hi
    }

    /// ORs `bits` into the 64 bits from bit `start` on; bits that would
    /// fall past the last word are dropped. The caller's bits must not
    /// reach past the length (checked in debug builds): the per-node loops
    /// that call this pass a node's own bits.
    pub fn or_window(&mut self, start: usize, bits: u64) {
        let (q, r) = (start / 64, start % 64);
        if let Some(w) = self.words.get_mut(q) {
            *w |= bits << r;
        }
        if r != 0 {
            if let Some(w) = self.words.get_mut(q + 1) {
                *w |= bits >> (64 - r);
            }
        }
        debug_assert_eq!(self.words.last().copied(), self.live_last());
    }

    /// Bits `off..off + n` as a bitmap of `n` bits (clear past the end).
    pub fn extract(&self, off: usize, n: usize) -> Bitmap {
        let mut out = Bitmap::new(n);
        for w in 0..out.words.len() {
            out.words[w] = self.bits64(off + w * 64);
        }
        out.trim();
        out
    }

    /// Writes `src` over bits `off..off + src.len()`.
    ///
    /// # Panics
    /// If `off + src.len()` passes the end.
    pub fn insert(&mut self, off: usize, src: &Bitmap) {
        for i in 0..src.len {
            self.set_to(off + i, src.get(i));
        }
    }

    /// ORs `src` into bits `off..`, a word of `src` at a time;
    /// `off + src.len()` must not pass the length (checked in debug builds).
    ///
    /// # Panics
    /// If `off + src.len()` passes the last word.
    pub fn or_at(&mut self, off: usize, src: &Bitmap) {
        debug_assert!(off + src.len <= self.len);
        self.merge_at(off, src, |a, b| *a |= b);
    }

    /// Clears the set bits of `src` at `off..`, a word of `src` at a time.
    ///
    /// # Panics
    /// If `off + src.len()` passes the last word.
    pub fn clear_at(&mut self, off: usize, src: &Bitmap) {
        self.merge_at(off, src, |a, b| *a &= !b);
    }

    /// Applies `op(word, bits)` to the words of `self` under `src` placed at
    /// `off` (`bits` = the part of `src` falling in that word).
    fn merge_at(&mut self, off: usize, src: &Bitmap, op: impl Fn(&mut u64, u64)) {
        let (q, r) = (off / 64, off % 64);
        for (w, &s) in src.words.iter().enumerate() {
            if s == 0 {
                continue;
            }
            op(&mut self.words[q + w], s << r);
            if r != 0 && s >> (64 - r) != 0 {
                op(&mut self.words[q + w + 1], s >> (64 - r));
            }
        }
    }

    /// Does a set bit of `src`, placed at `off..`, meet a set bit of `self`?
    /// Costs the words of `src`, not of `self`.
    pub fn intersects_at(&self, off: usize, src: &Bitmap) -> bool {
        src.words
            .iter()
            .enumerate()
            .any(|(w, &s)| s != 0 && self.bits64(off + w * 64) & s != 0)
    }

    /// Any bit set in `off..off + n`?
    pub fn any_in(&self, off: usize, n: usize) -> bool {
        self.count_range(off, off + n) > 0
    }

    /// Bits `lo..hi` of `self` become those of `other` (up to the shorter
    /// length).
    pub fn copy_range(&mut self, other: &Bitmap, lo: usize, hi: usize) {
        self.merge_range(other, lo, hi, |a, b, m| (a & !m) | (b & m));
    }

    /// Clears the bits of `lo..hi` that are set in `other` (up to the
    /// shorter length).
    pub fn and_not_range(&mut self, other: &Bitmap, lo: usize, hi: usize) {
        self.merge_range(other, lo, hi, |a, b, m| a & !(b & m));
    }

    /// Clears the bits of `lo..hi` that are clear in `other` (up to the
    /// shorter length).
    pub fn and_range(&mut self, other: &Bitmap, lo: usize, hi: usize) {
        self.merge_range(other, lo, hi, |a, b, m| a & (b | !m));
    }

    /// Replaces each word `a` of `self` overlapping `lo..hi` by
    /// `f(a, b, mask)`, `b` the word of `other` at the same place and
    /// `mask` the bits of the word inside the range.
    fn merge_range(
        &mut self,
        other: &Bitmap,
        lo: usize,
        hi: usize,
        f: impl Fn(u64, u64, u64) -> u64,
    ) {
        let hi = hi.min(self.len).min(other.len);
        for_each_word(lo, hi, |q, mask| {
            self.words[q] = f(self.words[q], other.words[q], mask);
        });
    }

    /// Set bits in `lo..hi`, a word at a time.
    pub fn count_range(&self, lo: usize, hi: usize) -> usize {
        let mut total = 0;
        for_each_word(lo, hi.min(self.len), |q, mask| {
            total += (self.words[q] & mask).count_ones() as usize;
        });
        total
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
            let nibble = (self.bits64(d * 4) & 0xf) as u32;
            out.push(
                char::from_digit(nibble, 16)
                    .unwrap_or('0')
                    .to_ascii_uppercase(),
            );
        }
        out
    }

    /// The inverse of [`Bitmap::to_hex_mask`] for a map of `len` bits
    /// (`bit_unfmt_hexmask`): hex digits after an optional `0x`, the last
    /// digit holding bits 0-3. A character that is not a hex digit, or a
    /// bit set at or past `len`, is an error naming it.
    pub fn from_hex_mask(len: usize, text: &str) -> Result<Bitmap, String> {
        let hex = text.strip_prefix("0x").unwrap_or(text);
        let mut map = Bitmap::new(len);
        for (d, c) in hex.chars().rev().enumerate() {
            let nibble = c
                .to_digit(16)
                .ok_or_else(|| format!("{c:?} in {text:?} is not a hex digit"))?;
            for b in (0..4).filter(|b| nibble & (1 << b) != 0) {
                let bit = d * 4 + b;
                if bit >= len {
                    return Err(format!("{text:?} sets bit {bit} of a {len}-bit map"));
                }
                map.set(bit);
            }
        }
        Ok(map)
    }

    /// The last word without its bits at or past the length.
    fn live_last(&self) -> Option<u64> {
        let last = *self.words.last()?;
        Some(match self.len % 64 {
            0 => last,
            r => last & ((1u64 << r) - 1),
        })
    }

    /// Clears the bits at or past the length.
    fn trim(&mut self) {
        if let Some(live) = self.live_last() {
            if let Some(last) = self.words.last_mut() {
                *last = live;
            }
        }
    }
}

/// Calls `f(word, mask)` for each 64-bit word overlapping bits `lo..hi`,
/// `mask` selecting the bits of the word inside the range.
fn for_each_word(lo: usize, hi: usize, mut f: impl FnMut(usize, u64)) {
    let mut i = lo;
    while i < hi {
        let (q, r) = (i / 64, i % 64);
        let span = (64 - r).min(hi - i);
        let mask = if span == 64 {
            u64::MAX
        } else {
            ((1u64 << span) - 1) << r
        };
        f(q, mask);
        i += span;
    }
}

/// Indices of the set bits of 64-bit words below a length, ascending, found
/// a word at a time (the iterator of [`Bitmap::ones`]).
#[derive(Debug, Clone)]
pub struct Ones<'a> {
    words: &'a [u64],
    /// Index of the word being read.
    word: usize,
    /// Its bits not yet returned.
    rest: u64,
    len: usize,
}

impl<'a> Ones<'a> {
    /// The set bits of `words` (bit `i` in word `i / 64`) below `len`;
    /// bits at or past `len` are not given.
    pub fn new(words: &'a [u64], len: usize) -> Self {
        Ones {
            words,
            word: 0,
            rest: words.first().copied().unwrap_or(0),
            len,
        }
    }
}

impl Iterator for Ones<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.rest == 0 {
            self.word += 1;
            self.rest = *self.words.get(self.word)?;
        }
        let i = self.word * 64 + self.rest.trailing_zeros() as usize;
        self.rest &= self.rest - 1;
        (i < self.len).then_some(i)
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
            (0..100).filter(|&i| map.get(i)).collect::<Vec<_>>()
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
        assert_eq!(Ones::new(&[], 0).count(), 0);
    }

    /// `and`, `or` and `is_subset_of` as their contracts say,
    /// bit by bit.
    #[test]
    fn word_operations_match_their_bit_by_bit_meaning() {
        let pattern = |len: usize, step: usize| Bitmap::from_bits(len, (0..len).step_by(step));
        for (a_len, b_len) in [(70, 70), (70, 33), (33, 70), (32, 64), (0, 5), (5, 0)] {
            for (sa, sb) in [(1, 1), (2, 3), (3, 1), (1, 5)] {
                let (a, b) = (pattern(a_len, sa), pattern(b_len, sb));
                let mut and = a.clone();
                and.and(&b);
                let want_and = Bitmap::from_bits(a_len, a.ones().filter(|&i| b.get(i)));
                assert_eq!(and, want_and, "{a:?} & {b:?}");
                let mut or = a.clone();
                or.or(&b);
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
        // A shorter map's bits never land past the longer one's length.
        let full = Bitmap::full(33);
        let mut small = Bitmap::new(40);
        small.or(&full);
        assert_eq!(small.count(), 33);
        assert!(Bitmap::from_bits(40, [34]).is_subset_of(&Bitmap::full(40)));
        assert!(!Bitmap::from_bits(40, [34]).is_subset_of(&full));
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
        let map = Bitmap::from_bits(13, [0, 5, 12]);
        assert_eq!(Bitmap::from_hex_mask(13, &map.to_hex_mask()), Ok(map));
        assert!(Bitmap::from_hex_mask(4, "0xZ").is_err());
        assert!(Bitmap::from_hex_mask(4, "0x10").is_err());
    }

    #[test]
    fn range_merges_touch_only_the_range() {
        // 0..200 all set; `other` has bits 60..70 and 150 set.
        let mut other = Bitmap::new(200);
        for i in (60..70).chain([150]) {
            other.set(i);
        }
        let mut a = Bitmap::full(200);
        a.and_not_range(&other, 62, 151);
        let cleared: Vec<usize> = (0..200).filter(|&i| !a.get(i)).collect();
        assert_eq!(cleared, (62..70).chain([150]).collect::<Vec<_>>());
        // Inside 0..64 only 60 and 61 stay (62, 63 were cleared above).
        a.and_range(&other, 0, 64);
        let set: Vec<usize> = a.ones().take_while(|&i| i <= 70).collect();
        assert_eq!(set, vec![60, 61, 70]);
        let mut b = Bitmap::new(200);
        b.copy_range(&other, 65, 151);
        assert_eq!(b.ones().collect::<Vec<_>>(), vec![65, 66, 67, 68, 69, 150]);
    }

    #[test]
    fn extract_and_insert_cross_words() {
        let mut b = Bitmap::new(200);
        for i in [3, 63, 64, 65, 130, 199] {
            b.set(i);
        }
        let e = b.extract(60, 10);
        assert_eq!(e.ones().collect::<Vec<_>>(), vec![3, 4, 5]);
        let mut c = Bitmap::new(200);
        c.insert(60, &e);
        assert_eq!(c.ones().collect::<Vec<_>>(), vec![63, 64, 65]);
        assert_eq!(b.count(), 6);
        assert_eq!(Bitmap::full(70).count(), 70);
        // `b` has 63, 64, 65: a node-local set at 60 meets it at 3..=5 only.
        let mut local = Bitmap::new(10);
        local.set(2);
        assert!(!b.intersects_at(60, &local));
        local.set(4);
        assert!(b.intersects_at(60, &local));
    }

    #[test]
    fn or_and_clear_at_cross_words() {
        // A 70-bit node-local set placed at bit 100 of a 200-bit map spans
        // words 1-2 (bits 100-169): bits 0, 27, 28 and 69 land on 100, 127,
        // 128 and 169.
        let mut local = Bitmap::new(70);
        for i in [0, 27, 28, 69] {
            local.set(i);
        }
        let mut map = Bitmap::new(200);
        map.set(99);
        map.set(170);
        map.or_at(100, &local);
        assert_eq!(
            map.ones().collect::<Vec<_>>(),
            vec![99, 100, 127, 128, 169, 170]
        );
        map.clear_at(100, &local);
        assert_eq!(map.ones().collect::<Vec<_>>(), vec![99, 170]);
        // Word-aligned placement.
        map.or_at(128, &local);
        assert_eq!(
            map.ones().collect::<Vec<_>>(),
            vec![99, 128, 155, 156, 170, 197]
        );
    }
}
